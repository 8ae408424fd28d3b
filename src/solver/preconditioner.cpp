#include "fmbem/solver/preconditioner.hpp"

#include <petsc/private/pcimpl.h>

#include <algorithm>
#include <cstring>
#include <exception>
#include <memory>
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

namespace {

constexpr char kSourceKey[] = "fmbem_leaf_block_source";
PetscLogEvent groups_event = 0, blocks_event = 0;

// A leaf_block PC's data.
struct LeafBlockPC {
  LeafBlockSettings settings;
  std::unique_ptr<LeafBlockPreconditioner> blocks;
};

LeafBlockPC& data_of(PC pc) { return *static_cast<LeafBlockPC*>(pc->data); }

const char* const kEntryNames[] = {"near", "full", "BlockEntries", "", nullptr};

// No C++ exception may unwind through PETSc's C frames: each becomes a PETSc error here.
template <class Body>
PetscErrorCode guarded(Body&& body) {
  std::string failure;
  try {
    body();
  } catch (const std::exception& e) {
    failure = e.what();
  }
  PetscCheck(failure.empty(), PETSC_COMM_SELF, PETSC_ERR_LIB, "%s", failure.c_str());
  return 0;
}

PetscErrorCode leaf_block_setup(PC pc) {
  PetscFunctionBeginUser;
  PetscContainer container = nullptr;
  PetscCall(PetscObjectQuery(reinterpret_cast<PetscObject>(pc->pmat), kSourceKey,
                             reinterpret_cast<PetscObject*>(&container)));
  PetscCheck(container, PetscObjectComm(reinterpret_cast<PetscObject>(pc)), PETSC_ERR_ARG_WRONG,
             "-pc_type leaf_block needs an fmbem boundary-element operator as its "
             "preconditioning matrix (its near-field blocks are formed from the operator)");
  const LeafBlockSource* source = nullptr;
  PetscCall(PetscContainerGetPointer(
      container, reinterpret_cast<void**>(const_cast<LeafBlockSource**>(&source))));
  LeafBlockPC& data = data_of(pc);
  const LeafBlockSettings& settings = data.settings;
  data.blocks.reset();
  RowBlocks blocks;
  PetscCall(PetscLogEventBegin(groups_event, pc, 0, 0, 0));
  PetscCall(guarded([&] {
    const Neighbours neighbours = vertex_neighbours(*source->mesh, source->rows);
    blocks = overlapping_blocks(
        compact_row_blocks(source->mesh->centroids(), source->rows, settings.block_size),
        neighbours.row_start, neighbours.columns, source->rows, settings.overlap);
  }));
  PetscCall(PetscLogEventEnd(groups_event, pc, 0, 0, 0));
  PetscCall(PetscLogEventBegin(blocks_event, pc, 0, 0, 0));
  PetscCall(guarded([&] {
    const CorrectedLayerPotentials& layers = *source->layers;
    using Device = LeafBlockPreconditioner::Device;
    if (layers.resident_on_device() && settings.entries == BlockEntries::near &&
        source->device_blocks) {
      // Formed and inverted on the GPU from the near field there: nothing dense on the host.
      data.blocks = std::make_unique<LeafBlockPreconditioner>(std::move(blocks), layers,
                                                              source->coefficients);
    } else {
      std::vector<cplx> dense =
          dense_blocks(layers, source->coefficients, blocks, settings.entries);
      data.blocks = std::make_unique<LeafBlockPreconditioner>(
          std::move(blocks), std::move(dense), source->rows,
          layers.resident_on_device() ? Device::gpu : Device::cpu);
    }
  }));
  PetscCall(PetscLogEventEnd(blocks_event, pc, 0, 0, 0));
  PetscFunctionReturn(0);
}

PetscErrorCode leaf_block_apply(PC pc, Vec x, Vec y) {
  PetscFunctionBeginUser;
  const LeafBlockPreconditioner* blocks = data_of(pc).blocks.get();
  PetscCheck(blocks, PETSC_COMM_SELF, PETSC_ERR_ORDER, "the leaf_block PC is not set up");
  const PetscScalar* xa;
  PetscScalar* ya;
  PetscInt n;
  PetscCall(VecGetLocalSize(x, &n));
  PetscCall(VecGetArrayRead(x, &xa));
  PetscCall(VecGetArray(y, &ya));
  PetscCall(guarded([&] {
    blocks->apply(std::span<const cplx>(reinterpret_cast<const cplx*>(xa), std::size_t(n)),
                  std::span<cplx>(reinterpret_cast<cplx*>(ya), std::size_t(n)));
  }));
  PetscCall(VecRestoreArray(y, &ya));
  PetscCall(VecRestoreArrayRead(x, &xa));
  PetscFunctionReturn(0);
}

PetscErrorCode leaf_block_set_from_options(PC pc, PetscOptionItems* PetscOptionsObject) {
  PetscFunctionBeginUser;
  LeafBlockSettings& settings = data_of(pc).settings;
  PetscInt size = settings.block_size, overlap = settings.overlap;
  PetscEnum entries = PetscEnum(settings.entries);
  PetscOptionsHeadBegin(PetscOptionsObject, "Leaf-block preconditioner options");
  // Ranges checked here, so that the message names the option.
  PetscCall(PetscOptionsInt("-pc_leaf_block_size", "Elements a block holds at most (1..512)", "",
                            size, &size, nullptr));
  PetscCall(
      PetscOptionsInt("-pc_leaf_block_overlap",
                      "Rings of neighbouring elements each block takes besides its own (0..4)", "",
                      overlap, &overlap, nullptr));
  PetscCall(PetscOptionsEnum("-pc_leaf_block_entries",
                             "The blocks' entries: near (the close pairs' alone) or full", "",
                             kEntryNames, entries, &entries, nullptr));
  PetscOptionsHeadEnd();
  const MPI_Comm comm = PetscObjectComm(reinterpret_cast<PetscObject>(pc));
  PetscCheck(size >= 1 && size <= 512, comm, PETSC_ERR_ARG_OUTOFRANGE,
             "-pc_leaf_block_size %" PetscInt_FMT ": out of range (1..512)", size);
  PetscCheck(overlap >= 0 && overlap <= 4, comm, PETSC_ERR_ARG_OUTOFRANGE,
             "-pc_leaf_block_overlap %" PetscInt_FMT ": out of range (0..4)", overlap);
  settings = {int(size), int(overlap), BlockEntries(entries)};
  PetscFunctionReturn(0);
}

PetscErrorCode leaf_block_view(PC pc, PetscViewer viewer) {
  PetscFunctionBeginUser;
  PetscBool ascii;
  PetscCall(
      PetscObjectTypeCompare(reinterpret_cast<PetscObject>(viewer), PETSCVIEWERASCII, &ascii));
  if (!ascii) PetscFunctionReturn(0);
  const LeafBlockPC& data = data_of(pc);
  PetscCall(PetscViewerASCIIPrintf(
      viewer, "  groups of at most %d elements widened by %d rings, %s entries\n",
      data.settings.block_size, data.settings.overlap, name_of(data.settings.entries)));
  unsigned long long counts[2] = {data.blocks ? data.blocks->blocks().count() : 0,
                                  data.blocks ? data.blocks->blocks().largest() : 0};
  const MPI_Comm comm = PetscObjectComm(reinterpret_cast<PetscObject>(pc));
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &counts[0], 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, comm));
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &counts[1], 1, MPI_UNSIGNED_LONG_LONG, MPI_MAX, comm));
  if (data.blocks)
    PetscCall(PetscViewerASCIIPrintf(
        viewer, "  %llu blocks (all ranks) of at most %llu rows, inverted on the %s\n", counts[0],
        counts[1], data.blocks->device() == LeafBlockPreconditioner::Device::gpu ? "gpu" : "cpu"));
  PetscFunctionReturn(0);
}

PetscErrorCode leaf_block_destroy(PC pc) {
  PetscFunctionBeginUser;
  delete static_cast<LeafBlockPC*>(pc->data);
  pc->data = nullptr;
  PetscFunctionReturn(0);
}

PetscErrorCode leaf_block_create(PC pc) {
  PetscFunctionBeginUser;
  pc->data = new LeafBlockPC;
  pc->ops->setup = leaf_block_setup;
  pc->ops->apply = leaf_block_apply;
  pc->ops->setfromoptions = leaf_block_set_from_options;
  pc->ops->view = leaf_block_view;
  pc->ops->destroy = leaf_block_destroy;
  PetscFunctionReturn(0);
}

bool is_leaf_block(PC pc) {
  PetscBool same = PETSC_FALSE;
  return PetscObjectTypeCompare(reinterpret_cast<PetscObject>(pc), kLeafBlockPC, &same) == 0 &&
         same;
}

}  // namespace

PetscErrorCode register_leaf_block_pc() {
  PetscFunctionBeginUser;
  static bool registered = false;
  if (registered) PetscFunctionReturn(0);
  PetscCall(PCRegister(kLeafBlockPC, leaf_block_create));
  PetscCall(PetscLogEventRegister("BEMPCGroups", PC_CLASSID, &groups_event));
  PetscCall(PetscLogEventRegister("BEMPCBlocks", PC_CLASSID, &blocks_event));
  registered = true;
  PetscFunctionReturn(0);
}

PetscErrorCode attach_leaf_block_source(Mat pmat, const LeafBlockSource* source) {
  PetscFunctionBeginUser;
  PetscContainer container;
  PetscCall(PetscContainerCreate(PetscObjectComm(reinterpret_cast<PetscObject>(pmat)), &container));
  PetscCall(PetscContainerSetPointer(container, const_cast<LeafBlockSource*>(source)));
  PetscCall(PetscObjectCompose(reinterpret_cast<PetscObject>(pmat), kSourceKey,
                               reinterpret_cast<PetscObject>(container)));
  PetscCall(PetscContainerDestroy(&container));
  PetscFunctionReturn(0);
}

PetscErrorCode set_leaf_block_settings(PC pc, const LeafBlockSettings& settings) {
  PetscFunctionBeginUser;
  PetscCheck(is_leaf_block(pc), PetscObjectComm(reinterpret_cast<PetscObject>(pc)),
             PETSC_ERR_ARG_WRONG, "not a leaf_block PC");
  data_of(pc).settings = settings;
  PetscFunctionReturn(0);
}

PetscErrorCode leaf_block_state(PC pc, const LeafBlockPreconditioner** blocks,
                                LeafBlockSettings* settings) {
  PetscFunctionBeginUser;
  *blocks = nullptr;
  if (!is_leaf_block(pc)) PetscFunctionReturn(0);
  *blocks = data_of(pc).blocks.get();
  if (settings) *settings = data_of(pc).settings;
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
