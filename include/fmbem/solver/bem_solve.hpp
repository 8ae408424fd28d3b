#pragma once
#include <petscsys.h>

namespace fmbem {

// Exit statuses of bem_solve (README, "Exit codes").
constexpr int kExitSolved = 0;
constexpr int kExitBadInput = 1;     // bad option, file, mesh or setting; nothing solved
constexpr int kExitSolveFailed = 2;  // the Krylov solve did not converge (or gave NaN/Inf)

// The bem_solve program between PetscInitialize and PetscFinalize: reads the
// options and the mesh, assembles the operator as a MatShell, solves with
// KSP, reports the error against an exact solution, writes VTU/CSV.
// fmbem::Error escapes for bad input; PETSc failures return their code; a
// failed solve sets *exit_status to kExitSolveFailed and writes no output.
PetscErrorCode run_bem_solve(MPI_Comm comm, int *exit_status);

}  // namespace fmbem
