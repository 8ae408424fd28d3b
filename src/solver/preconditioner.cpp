#include "fmbem/solver/preconditioner.hpp"

#include <algorithm>
#include <cstring>
#include <exception>
#include <string>

#include "fmbem/core/error.hpp"

namespace fmbem {
namespace {

// The correction's columns as elements (they are entries of the layers' column space).
std::vector<std::int32_t> close_elements(const CorrectedLayerPotentials& layers) {
  const auto columns = layers.near_field().columns();
  const std::span<const std::size_t> elements = layers.column_elements();
  std::vector<std::int32_t> out(columns.begin(), columns.end());
  if (!elements.empty())
    for (std::int32_t& j : out) j = std::int32_t(elements[std::size_t(j)]);
  return out;
}

// The close pairs alone: the correction's pattern with near_block's entries.
SparseRows close_rows(const CorrectedLayerPotentials& layers, const OperatorCoefficients& c) {
  SparseRows rows;
  const auto row_start = layers.near_field().row_start();
  rows.row_start.assign(row_start.begin(), row_start.end());
  rows.columns = close_elements(layers);
  rows.values = layers.near_block(c);
  return rows;
}

// Each target leaf's other elements: those with a quadrature point in the leaf (leaf) or in a
// leaf of its U list (neighbours), ascending; and the rows (indices into the FMM's targets, i.e.
// row - rows.begin) of the leaf.
struct LeafColumns {
  std::vector<std::size_t> targets;
  std::vector<std::int32_t> elements;
};

std::vector<LeafColumns> leaf_columns(const fmm::Fmm& fmm, NearPairs pairs,
                                      std::size_t points_per_element) {
  const fmm::Octree& tree = fmm.tree();
  const auto source_order = tree.source_order();
  const auto target_order = tree.target_order();
  std::vector<int> leaves;
  for (const int leaf : tree.leaves())
    if (tree.cells()[std::size_t(leaf)].target_end > tree.cells()[std::size_t(leaf)].target_begin)
      leaves.push_back(leaf);
  std::vector<LeafColumns> out(leaves.size());
#pragma omp parallel for schedule(dynamic, 4)
  for (std::size_t l = 0; l < leaves.size(); ++l) {
    const fmm::Cell& cell = tree.cells()[std::size_t(leaves[l])];
    LeafColumns& mine = out[l];
    for (std::size_t p = cell.target_begin; p < cell.target_end; ++p)
      mine.targets.push_back(target_order[p]);
    const int self[1] = {leaves[l]};
    const std::span<const int> sources =
        pairs == NearPairs::leaf ? std::span<const int>(self) : tree.near(leaves[l]);
    for (const int s : sources) {
      const fmm::Cell& source = tree.cells()[std::size_t(s)];
      for (std::size_t p = source.source_begin; p < source.source_end; ++p)
        mine.elements.push_back(std::int32_t(source_order[p] / points_per_element));
    }
    std::sort(mine.elements.begin(), mine.elements.end());
    mine.elements.erase(std::unique(mine.elements.begin(), mine.elements.end()),
                        mine.elements.end());
  }
  return out;
}

}  // namespace

SparseRows near_matrix_rows(const CorrectedLayerPotentials& layers, const OperatorCoefficients& c,
                            NearPairs pairs, const fmm::Fmm* fmm, std::size_t points_per_element) {
  if (pairs == NearPairs::close) return close_rows(layers, c);
  if (!fmm) throw Error("the near-field matrix's leaf and neighbour pairs need the FMM's octree");
  const RowRange rows = layers.rows();
  const auto close_start = layers.near_field().row_start();
  const std::vector<std::int32_t> close_columns = close_elements(layers);
  const std::vector<cplx> close_values = layers.near_block(c);
  const std::vector<LeafColumns> leaves = leaf_columns(*fmm, pairs, points_per_element);
  // Each row's columns: the union of its close pairs and its leaf's elements (both ascending).
  const auto row_columns = [&](std::size_t r, const LeafColumns& leaf,
                               std::vector<std::int32_t>& merged) {
    const auto close =
        std::span<const std::int32_t>(close_columns)
            .subspan(std::size_t(close_start[r]), std::size_t(close_start[r + 1] - close_start[r]));
    merged.clear();
    std::set_union(close.begin(), close.end(), leaf.elements.begin(), leaf.elements.end(),
                   std::back_inserter(merged));
  };
  SparseRows out;
  out.row_start.assign(rows.size() + 1, 0);
#pragma omp parallel
  {
    std::vector<std::int32_t> merged;
#pragma omp for schedule(dynamic, 4)
    for (std::size_t l = 0; l < leaves.size(); ++l)
      for (const std::size_t r : leaves[l].targets) {
        row_columns(r, leaves[l], merged);
        out.row_start[r + 1] = std::int64_t(merged.size());
      }
  }
  for (std::size_t r = 0; r < rows.size(); ++r) out.row_start[r + 1] += out.row_start[r];
  out.columns.resize(std::size_t(out.row_start.back()));
  out.values.resize(out.columns.size());
#pragma omp parallel
  {
    std::vector<std::int32_t> merged;
#pragma omp for schedule(dynamic, 4)
    for (std::size_t l = 0; l < leaves.size(); ++l)
      for (const std::size_t r : leaves[l].targets) {
        row_columns(r, leaves[l], merged);
        const std::size_t i = rows.begin + r;
        std::int64_t close_at = close_start[r];
        std::size_t at = std::size_t(out.row_start[r]);
        for (const std::int32_t j : merged) {
          while (close_at < close_start[r + 1] && close_columns[std::size_t(close_at)] < j)
            ++close_at;
          const bool is_close =
              close_at < close_start[r + 1] && close_columns[std::size_t(close_at)] == j;
          out.columns[at] = j;
          out.values[at++] = is_close ? close_values[std::size_t(close_at)]
                                      : layers.regular_entry(c, i, std::size_t(j));
        }
      }
  }
  return out;
}

namespace {

PetscErrorCode leaf_block_apply(PC pc, Vec x, Vec y) {
  PetscFunctionBeginUser;
  const LeafBlockPreconditioner* blocks;
  PetscCall(PCShellGetContext(pc, &blocks));
  const PetscScalar* xa;
  PetscScalar* ya;
  PetscInt n;
  PetscCall(VecGetLocalSize(x, &n));
  PetscCall(VecGetArrayRead(x, &xa));
  PetscCall(VecGetArray(y, &ya));
  // No C++ exception may unwind through PETSc's C frames: it becomes a PETSc error.
  std::string failure;
  try {
    blocks->apply(std::span<const cplx>(reinterpret_cast<const cplx*>(xa), std::size_t(n)),
                  std::span<cplx>(reinterpret_cast<cplx*>(ya), std::size_t(n)));
  } catch (const std::exception& e) {
    failure = e.what();
  }
  PetscCheck(failure.empty(), PETSC_COMM_SELF, PETSC_ERR_LIB, "%s", failure.c_str());
  PetscCall(VecRestoreArray(y, &ya));
  PetscCall(VecRestoreArrayRead(x, &xa));
  PetscFunctionReturn(0);
}

// Values and column indices of an AIJ matrix (its row offsets are small beside them).
PetscErrorCode matrix_bytes(Mat matrix, double* bytes) {
  PetscFunctionBeginUser;
  MatInfo info;
  PetscCall(MatGetInfo(matrix, MAT_LOCAL, &info));
  *bytes = info.nz_allocated * double(sizeof(PetscScalar) + sizeof(PetscInt));
  PetscFunctionReturn(0);
}

PetscErrorCode sub_ksp_bytes(PetscInt count, KSP* sub, bool with_operators, double* bytes) {
  PetscFunctionBeginUser;
  for (PetscInt i = 0; i < count; ++i) {
    PC sub_pc;
    double part = 0;
    PetscCall(KSPGetPC(sub[i], &sub_pc));
    PetscCall(preconditioner_bytes(sub_pc, &part));
    *bytes += part;
    if (with_operators) {
      Mat pmat;
      PetscCall(KSPGetOperators(sub[i], nullptr, &pmat));
      PetscCall(matrix_bytes(pmat, &part));
      *bytes += part;
    }
  }
  PetscFunctionReturn(0);
}

}  // namespace

PetscErrorCode use_leaf_block_preconditioner(PC pc, const LeafBlockPreconditioner* blocks) {
  PetscFunctionBeginUser;
  PetscCall(PCSetType(pc, PCSHELL));
  PetscCall(PCShellSetContext(pc, const_cast<LeafBlockPreconditioner*>(blocks)));
  PetscCall(PCShellSetApply(pc, leaf_block_apply));
  PetscCall(PCShellSetName(pc, "leaf_block"));
  PetscFunctionReturn(0);
}

PetscErrorCode preconditioner_bytes(PC pc, double* bytes) {
  PetscFunctionBeginUser;
  *bytes = 0;
  PCType type;
  PetscCall(PCGetType(pc, &type));
  if (!type) PetscFunctionReturn(0);
  const auto is = [&](const char* name) { return std::strcmp(type, name) == 0; };
  if (is(PCILU) || is(PCICC) || is(PCLU) || is(PCCHOLESKY)) {
    Mat factor;
    PetscCall(PCFactorGetMatrix(pc, &factor));
    PetscCall(matrix_bytes(factor, bytes));
  } else if (is(PCBJACOBI)) {
    PetscInt count;
    KSP* sub;
    PetscCall(PCBJacobiGetSubKSP(pc, &count, nullptr, &sub));
    PetscCall(sub_ksp_bytes(count, sub, false, bytes));
  } else if (is(PCASM)) {
    PetscInt count;
    KSP* sub;
    PetscCall(PCASMGetSubKSP(pc, &count, nullptr, &sub));
    PetscCall(sub_ksp_bytes(count, sub, true, bytes));
  } else if (is(PCJACOBI)) {
    Mat pmat;
    PetscInt rows;
    PetscCall(PCGetOperators(pc, nullptr, &pmat));
    PetscCall(MatGetLocalSize(pmat, &rows, nullptr));
    *bytes = double(rows) * double(sizeof(PetscScalar));
  }
  PetscFunctionReturn(0);
}

}  // namespace fmbem
