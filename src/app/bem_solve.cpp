// bem_solve: boundary element solver for Helmholtz and Laplace problems.
//   bem_solve -mesh meshes/sphere.msh -k 8 [-bem_* options] [PETSc options]
#include "fmbem/solver/bem_solve.hpp"

#include <petscsys.h>

#include <cstdio>

#include "fmbem/core/error.hpp"

static const char help[] =
    "fmbem bem_solve: piecewise-constant collocation BEM for exterior Helmholtz/Laplace problems.\n"
    "  bem_solve -mesh meshes/sphere.msh -k 8 [-ksp_type gmres] [-ksp_monitor] [-o out.vtu]\n";

int main(int argc, char** argv) {
  PetscCall(PetscInitialize(&argc, &argv, nullptr, help));
  int status = 0;
  try {
    PetscErrorCode ierr = fmbem::run_bem_solve(PETSC_COMM_WORLD);
    status = ierr ? 1 : 0;
  } catch (const fmbem::Error& e) {
    // One clear line for bad input; every rank hits the same error.
    PetscMPIInt rank = 0;
    MPI_Comm_rank(PETSC_COMM_WORLD, &rank);
    if (rank == 0) std::fprintf(stderr, "bem_solve: error: %s\n", e.what());
    status = 1;
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "bem_solve: error: out of memory\n");
    status = 1;
  }
  PetscCall(PetscFinalize());
  return status;
}
