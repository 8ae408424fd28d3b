#pragma once
#include <petscvec.h>

namespace fmbem {

// A PETSc vector type: PETSc's standard vector (VECSEQ on one rank, VECMPI on more) whose dot
// products, 2-norms and AXPY-type updates run OpenMP threads over the rank's entries. Debian's
// PETSc is built without threads, so GMRES's orthogonalisation (VecMDot, VecMAXPY) ran on one
// core: half of the GPU solve's time at N = 1.31M (bench/results/paper_experiment_gpu_notes.md).
// Vectors duplicated from one are of the same type (KSP's work vectors). `-vec_type` on the
// command line still chooses any PETSc type instead. Each thread sums a fixed range of entries
// and the partial sums are added in thread order, so a run is reproducible for a given
// OMP_NUM_THREADS; results differ from VECSEQ's by rounding only.
inline constexpr const char threaded_vector_type[] = "fmbemthreaded";

// Registers the type with PETSc (once; later calls do nothing). Call after PetscInitialize.
PetscErrorCode register_threaded_vector_type();

}  // namespace fmbem
