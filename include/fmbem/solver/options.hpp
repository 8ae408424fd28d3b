#pragma once
#include <petscsys.h>

#include <string>

#include "fmbem/bem/near_field.hpp"
#include "fmbem/fmm/fmm.hpp"
#include "fmbem/problem/problem.hpp"

namespace fmbem {

// Every -bem_* option, read once, in one place; -help lists them with their
// defaults. KSP and PC options are PETSc's own (KSPSetFromOptions).
struct SolveOptions {
  std::string mesh;  // file or icosphere:L[:R]
  ProblemSpec problem;
  int quadrature_points = 3;
  NearFieldOptions near;
  std::string operator_backend = "fmm";
  fmm::FmmOptions fmm{0, 1e-4, 100, 0.0};
  bool fmm_view = false;
  std::string vtu_path, csv_path;
  bool source_given = false;  // radiation defaults to the centre of the bounding box
};

// Reads the options (collective); invalid values throw fmbem::Error.
PetscErrorCode read_solve_options(MPI_Comm comm, SolveOptions* options);

}  // namespace fmbem
