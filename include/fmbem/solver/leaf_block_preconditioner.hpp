#pragma once
// The leaf-block preconditioner: the operator restricted to spatially compact groups
// of a rank's rows, widened by rings of neighbouring elements, each group's dense block factorised
// once (LU with partial pivoting, then the explicit inverse) and applied at every GMRES iteration
// to its own rows only: restricted additive Schwarz on the near field (block Jacobi without the
// rings), by rank with several ranks. On the CPU with LAPACK (PETSc's), on the GPU with cuBLAS's
// batched LU and inverse and one batched product per application (GpuBlockInverse).
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "fmbem/bem/boundary_operator.hpp"
#include "fmbem/bem/corrected_layer_potentials.hpp"

namespace fmbem {

// Groups of rows: block b holds rows[offsets[b] .. offsets[b + 1]) (global row indices), its own
// rows first (owned[b] of them: each row is owned by one block at most) and then the rows it
// overlaps, owned by other blocks (factorised with the block, not written by it).
struct RowBlocks {
  std::vector<std::size_t> offsets{0};
  std::vector<std::int32_t> rows;
  std::vector<std::size_t> owned;

  std::size_t count() const { return offsets.size() - 1; }
  std::size_t size(std::size_t b) const { return offsets[b + 1] - offsets[b]; }
  std::size_t largest() const;
};

// The rows of `rows` grouped by place: the leaves of an octree over their points (points[i] for
// row i; a cell splits above max_block points), consecutive leaves in Morton order merged while
// the group stays within max_block rows. Every row lies in exactly one block, no block has more
// than max_block rows, none overlaps. Throws fmbem::Error for max_block < 1.
RowBlocks compact_row_blocks(std::span<const Vec3> points, RowRange rows, int max_block);

// The elements that share a vertex with each row's element (itself included), in CSR form:
// row r's are columns[row_start[r] .. row_start[r + 1]), ascending, r = row - rows.begin.
struct Neighbours {
  std::vector<std::int64_t> row_start{0};
  std::vector<std::int32_t> columns;
};
Neighbours vertex_neighbours(const Mesh& mesh, RowRange rows);

// The blocks widened by `rings` rings of neighbours: ring m + 1 adds the columns of the rows of
// ring m (pattern: row r's columns are columns[row_start[r] .. row_start[r + 1]), r = row -
// rows.begin) that lie in `rows` and are not yet in the block. The owned rows stay as they were.
// bem_solve's pattern is vertex_neighbours: one ring is one layer of elements, whatever the
// formulation (the near-field pattern, 2.5 element radii wide and wider for Burton-Miller, made
// blocks twice as large for the same iterations, measured).
RowBlocks overlapping_blocks(const RowBlocks& blocks, std::span<const std::int64_t> row_start,
                             std::span<const std::int32_t> columns, RowRange rows, int rings);

// What a dense block holds for the pairs of its rows: near, the close pairs' accurate entries
// (CorrectedLayerPotentials::near_block) and zero elsewhere; full, the other pairs' regular-rule
// entries too, which makes the block the operator's own restriction to its rows.
enum class BlockEntries { near, full };
// "near" or "full": the option values' names.
inline const char* name_of(BlockEntries entries) {
  return entries == BlockEntries::near ? "near" : "full";
}

// How the leaf blocks are made: groups of at most block_size elements (compact_row_blocks),
// widened by `overlap` rings of neighbours (overlapping_blocks), with `entries`.
struct LeafBlockSettings {
  int block_size = 32;  // 1..512
  int overlap = 1;      // 0..4
  BlockEntries entries = BlockEntries::near;
};

// The blocks of the operator c.identity I + c.double_layer D + c.single_layer S of `layers`,
// column-major, one after the other (block b: size(b)^2 entries). The rows must be rows of
// `layers` (fmbem::Error otherwise).
std::vector<cplx> dense_blocks(const CorrectedLayerPotentials& layers,
                               const OperatorCoefficients& c, const RowBlocks& blocks,
                               BlockEntries entries);

class GpuBlockInverse;

class LeafBlockPreconditioner {
 public:
  enum class Device { cpu, gpu };
  // blocks: groups of rows within `rows` (RowBlocks' rules); dense: their blocks (dense_blocks'
  // layout). Inverts every block where `device` says; throws fmbem::Error naming
  // a singular block (and, on the GPU, any CUDA or cuBLAS failure).
  LeafBlockPreconditioner(RowBlocks blocks, std::vector<cplx> dense, RowRange rows, Device device);
  // On the GPU from the GPU: the blocks of BlockEntries::near formed on the device from
  // layers.near_block_device (no dense copy on the host) and inverted there; rows are
  // layers.rows(). Needs layers.near_field().on_device() (fmbem::Error otherwise).
  LeafBlockPreconditioner(RowBlocks blocks, const CorrectedLayerPotentials& layers,
                          const OperatorCoefficients& c);
  ~LeafBlockPreconditioner();
  LeafBlockPreconditioner(const LeafBlockPreconditioner&) = delete;
  LeafBlockPreconditioner& operator=(const LeafBlockPreconditioner&) = delete;

  // y = the blocks' inverses times x, block by block, each block writing its own rows; x and y
  // hold the rows of `rows` (row i at i - rows.begin). Rows no block owns are copied (identity).
  // On the GPU x goes in and y comes out once.
  void apply(std::span<const cplx> x, std::span<cplx> y) const;

  const RowBlocks& blocks() const { return blocks_; }
  Device device() const { return device_; }
  // The inverses' owned rows on the host (CPU) or the device (GPU; columns padded to the
  // largest block), with their indices.
  std::size_t host_bytes() const;
  std::size_t device_bytes() const;

 private:
  RowBlocks blocks_;
  RowRange rows_;
  Device device_;
  // CPU: the owned rows of block b's inverse (owned x size, column-major) at
  // inverses_[owned_offsets_[b]].
  std::vector<std::size_t> owned_offsets_;
  std::vector<cplx> inverses_;
  std::unique_ptr<GpuBlockInverse> gpu_;
};

}  // namespace fmbem
