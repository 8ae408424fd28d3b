// bem_solve: boundary element solver for Helmholtz and Laplace problems.
//   bem_solve -mesh meshes/sphere.msh -k 8 [-bem_* options] [PETSc options]
#include "fmbem/solver/bem_solve.hpp"

#include <petscsys.h>

#include <cstdio>
#include <new>
#include <string>

#include "fmbem/core/error.hpp"
#include "fmbem/core/temporary_files.hpp"

static const char help[] =
    "fmbem bem_solve: piecewise-constant collocation "
    "BEM for exterior Helmholtz/Laplace problems.\n"
    "  bem_solve -mesh meshes/sphere.msh -k 8 "
    "[-ksp_type gmres] [-ksp_monitor] [-o out.vtu]\n"
    "Exit status: 0 solved, 1 bad input (nothing "
    "solved), 2 the solve failed.\n";

// One line on rank 0: errors from options, files and PETSc reach every rank
// alike (rank 0 reads the mesh and checks the outputs, then tells the rest).
static void report(MPI_Comm comm, const std::string &message) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  if (rank == 0) std::fprintf(stderr, "bem_solve: error: %s\n", message.c_str());
}

int main(int argc, char **argv) {
  PetscCall(PetscInitialize(&argc, &argv, nullptr, help));
  // PETSc errors come back as codes, printed below as one line instead of
  // PETSc's trace.
  PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, nullptr));
  // After PetscInitialize, whose handlers for these signals print a trace and call MPI_Abort:
  // ours remove the run's temporaries and end it with one line.
  fmbem::install_termination_handlers("bem_solve");
  int status = fmbem::kExitSolved;
  try {
    const PetscErrorCode ierr = fmbem::run_bem_solve(PETSC_COMM_WORLD, &status);
    if (ierr) {
      report(PETSC_COMM_WORLD, fmbem::petsc_error_text(ierr));
      status = fmbem::kExitBadInput;
    }
  } catch (const fmbem::Error &e) {
    report(PETSC_COMM_WORLD, e.what());
    status = fmbem::kExitBadInput;
  } catch (const std::bad_alloc &) {
    std::fprintf(stderr, "bem_solve: error: out of memory\n");
    status = fmbem::kExitBadInput;
  } catch (const std::exception &e) {
    // Whatever a library throws ends the run with its message, never std::terminate's abort.
    report(PETSC_COMM_WORLD, std::string("internal error: ") + e.what());
    status = fmbem::kExitBadInput;
  }
  PetscPopErrorHandler();
  PetscCall(PetscFinalize());
  return status;
}
