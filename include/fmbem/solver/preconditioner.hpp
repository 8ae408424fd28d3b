#pragma once
// What bem_solve's preconditioners need besides PETSc's own: the near-field matrix's
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
// "close", "leaf" or "neighbours": the option values' names.
inline const char* name_of(NearPairs pairs) {
  return pairs == NearPairs::close ? "close" : pairs == NearPairs::leaf ? "leaf" : "neighbours";
}

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

// The leaf-block preconditioner as a PETSc preconditioner type, "leaf_block" (PCRegister):
// -pc_type leaf_block selects it, -ksp_view shows it, -pc_leaf_block_size (1..512),
// -pc_leaf_block_overlap (0..4) and -pc_leaf_block_entries near|full set it (LeafBlockSettings'
// defaults). Its set-up reads the operator from the preconditioning matrix, which must carry a
// LeafBlockSource (attach_leaf_block_source: bem_solve's operator matrices do); any other matrix
// is refused with PETSc's error.
inline constexpr char kLeafBlockPC[] = "leaf_block";

// What the blocks are formed from: this rank's rows of the operator c.identity I + c.double_layer
// D + c.single_layer S of `layers` on `mesh`.
struct LeafBlockSource {
  const Mesh* mesh = nullptr;
  RowRange rows;
  const CorrectedLayerPotentials* layers = nullptr;
  OperatorCoefficients coefficients;
  // Whether the near blocks may be formed on the device where the correction lives there (the
  // device's near block does not know image planes: with them the host forms them).
  bool device_blocks = true;
};

// Registers the type and its -log_view events (BEMPCGroups, BEMPCBlocks). After PetscInitialize;
// later calls do nothing.
PetscErrorCode register_leaf_block_pc();
// Attaches `source` to `pmat` (PetscObjectCompose); it must outlive the PC's set-up.
PetscErrorCode attach_leaf_block_source(Mat pmat, const LeafBlockSource* source);
// A leaf_block PC's settings, before its set-up (options given override them).
PetscErrorCode set_leaf_block_settings(PC pc, const LeafBlockSettings& settings);
// A leaf_block PC's blocks after its set-up (null before, and for a PC of another type) and
// its settings.
PetscErrorCode leaf_block_state(PC pc, const LeafBlockPreconditioner** blocks,
                                LeafBlockSettings* settings);

// Bytes PETSc's PC holds on this rank besides the preconditioning matrix: the factors of
// ilu, icc, lu and cholesky, and of bjacobi's and asm's blocks (asm's overlapping block matrices
// too), jacobi's diagonal; 0 for other types (a shell's owner counts its own). Call after
// KSPSetUp.
PetscErrorCode preconditioner_bytes(PC pc, double* bytes);

}  // namespace fmbem
