# FMBEM_SANITIZE=ON: every C and C++ target (libraries, tests, bem_solve) is built and
# linked with AddressSanitizer and UndefinedBehaviorSanitizer; undefined behaviour
# aborts the program (-fno-sanitize-recover) instead of printing and going on. CUDA
# sources are left alone (nvcc knows no -fsanitize).
#
# fmbem_sanitizer_defaults(target) compiles cmake/sanitizer_defaults.cpp into an
# executable: leak checking on, with suppressions for third-party libraries only.
if(FMBEM_SANITIZE)
  set(fmbem_sanitize_flags -fsanitize=address,undefined -fno-sanitize-recover=undefined
                           -fno-omit-frame-pointer)
  add_compile_options("$<$<COMPILE_LANGUAGE:C,CXX>:${fmbem_sanitize_flags}>")
  add_link_options(-fsanitize=address,undefined)
  message(STATUS "fmbem: AddressSanitizer and UndefinedBehaviorSanitizer on")
endif()

function(fmbem_sanitizer_defaults target)
  if(FMBEM_SANITIZE)
    target_sources(${target} PRIVATE ${PROJECT_SOURCE_DIR}/cmake/sanitizer_defaults.cpp)
  endif()
endfunction()
