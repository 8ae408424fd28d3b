#pragma once
// What bem_solve's preconditioners need besides PETSc's own (issue 14): the near-field matrix's
// rows with a choice of pairs, the leaf-block preconditioner as a PCSHELL, and the memory a PC
// holds.
#include <petscksp.h>

#include <cstdint>
#include <vector>

#include "fmbem/bem/corrected_layer_potentials.hpp"
#include "fmbem/fmm/fmm.hpp"
#include "fmbem/solver/leaf_block_preconditioner.hpp"

namespace fmbem {

// Which pairs the near-field matrix holds: close, the near-field correction's close pairs
// (their accurate entries); leaf and neighbours, also every other element with a quadrature
// point in the row's FMM leaf, or in a leaf of its U list (the leaf and its neighbours: the
// pairs the FMM sums directly), with the regular rule's entries.
enum class NearPairs { close, leaf, neighbours };

// Rows of a sparse matrix in CSR form (columns ascending in each row).
struct SparseRows {
  std::vector<std::int64_t> row_start{0};
  std::vector<std::int32_t> columns;
  std::vector<cplx> values;
};

// The near-field matrix's rows (those of `layers`) of the operator with coefficients c. leaf and
// neighbours need the FMM of `layers` (its octree; every rank's FMM has the same one) and the
// quadrature points per element (quadrature point q belongs to element q / points_per_element).
SparseRows near_matrix_rows(const CorrectedLayerPotentials& layers, const OperatorCoefficients& c,
                            NearPairs pairs, const fmm::Fmm* fmm, std::size_t points_per_element);

// Makes pc a PCSHELL named leaf_block that applies `blocks` to this rank's rows; `blocks` must
// outlive the PC's use.
PetscErrorCode use_leaf_block_preconditioner(PC pc, const LeafBlockPreconditioner* blocks);

// Bytes PETSc's PC holds on this rank besides the preconditioning matrix: the factors of
// ilu, icc, lu and cholesky, and of bjacobi's and asm's blocks (asm's overlapping block matrices
// too), jacobi's diagonal; 0 for other types (a shell's owner counts its own). Call after
// KSPSetUp.
PetscErrorCode preconditioner_bytes(PC pc, double* bytes);

}  // namespace fmbem
