# Every dependency comes from Debian packages (scripts/setup.sh installs them).
find_package(OpenMP REQUIRED COMPONENTS CXX)
find_package(MPI REQUIRED COMPONENTS C CXX)
find_package(Boost 1.74 REQUIRED)
find_package(PkgConfig REQUIRED)

# Debian installs real and complex PETSc side by side; the complex build's
# pkg-config file comes first so that the alternatives setting cannot pick the real one.
set(FMBEM_PETSC_PC_DIR "/usr/lib/petscdir/petsc-complex/lib/pkgconfig"
    CACHE PATH "Folder holding the complex PETSc's petsc.pc")
set(ENV{PKG_CONFIG_PATH} "${FMBEM_PETSC_PC_DIR}:$ENV{PKG_CONFIG_PATH}")
pkg_check_modules(PETSC REQUIRED IMPORTED_TARGET petsc)
include(CheckSymbolExists)
set(CMAKE_REQUIRED_INCLUDES ${PETSC_INCLUDE_DIRS})
check_symbol_exists(PETSC_USE_COMPLEX "petscconf.h" FMBEM_PETSC_IS_COMPLEX)
unset(CMAKE_REQUIRED_INCLUDES)
if(NOT FMBEM_PETSC_IS_COMPLEX)
  message(FATAL_ERROR "fmbem needs PETSc built with complex scalars (Debian: libpetsc-complex-dev)")
endif()

if(FMBEM_WITH_GMSH)
  find_path(GMSH_INCLUDE_DIR gmsh.h REQUIRED)
  find_library(GMSH_LIBRARY NAMES gmsh REQUIRED)
  # The Gmsh reader's child process forbids execve with a seccomp filter (Debian: libseccomp-dev).
  pkg_check_modules(SECCOMP REQUIRED IMPORTED_TARGET libseccomp)
endif()
if(FMBEM_WITH_VTK)
  find_package(VTK 9 REQUIRED COMPONENTS CommonCore CommonDataModel IOXML IOParallelXML)
endif()

if(FMBEM_WITH_NETCDF)
  # SOFA files are netCDF-4 (HDF5) files (Debian: libnetcdf-dev).
  pkg_check_modules(NETCDF REQUIRED IMPORTED_TARGET netcdf)
endif()

if(FMBEM_WITH_CUDA)
  include(CheckLanguage)
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
      set(CMAKE_CUDA_ARCHITECTURES 90)
    endif()
    set(CMAKE_CUDA_RUNTIME_LIBRARY Static)
    enable_language(CUDA)
    set(CMAKE_CUDA_STANDARD 20)
    # CMake before 3.26 knows no C++20 flag for nvcc (12.0 and newer take -std=c++20).
    if(NOT DEFINED CMAKE_CUDA20_STANDARD_COMPILE_OPTION)
      set(CMAKE_CUDA20_STANDARD_COMPILE_OPTION "-std=c++20")
      set(CMAKE_CUDA20_EXTENSION_COMPILE_OPTION "-std=c++20")
    endif()
  endif()
endif()

if(FMBEM_WITH_PYTHON)
  # The Python module: pybind11 from Debian (pybind11-dev), built for the interpreter found first
  # (setup.sh gives its virtual environment's as Python_EXECUTABLE).
  set(PYBIND11_FINDPYTHON ON)
  find_package(Python 3.9 REQUIRED COMPONENTS Interpreter Development.Module)
  find_package(pybind11 2.10 CONFIG REQUIRED)
endif()
