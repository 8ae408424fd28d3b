#pragma once
#include <petscsys.h>

namespace fmbem {

// The bem_solve program between PetscInitialize and PetscFinalize: reads the
// options and the mesh, assembles the operator as a MatShell, solves with
// KSP, reports the error against an exact solution, writes VTU/CSV.
// fmbem::Error escapes for bad input; PETSc failures return their code.
PetscErrorCode run_bem_solve(MPI_Comm comm);

}  // namespace fmbem
