#include "fmbem/solver/leaf_block_preconditioner.hpp"

// petscblaslapack.h needs petscsys.h's types first.
// clang-format off
#include <petscsys.h>
#include <petscblaslapack.h>
// clang-format on

#include <algorithm>
#include <string>
#include <utility>

#include "fmbem/bem/gpu_correction.hpp"
#include "fmbem/core/error.hpp"
#include "fmbem/fmm/gpu_device.hpp"
#include "fmbem/fmm/gpu_options.hpp"
#include "fmbem/fmm/octree.hpp"
#include "fmbem/solver/gpu_block_inverse.hpp"

namespace fmbem {
namespace {

static_assert(sizeof(PetscScalar) == sizeof(cplx),
              "PETSc's complex scalar is std::complex<double>");

// Block b's entries start at the sum of the squares of the sizes before it.
std::vector<std::size_t> dense_offsets(const RowBlocks& blocks) {
  std::vector<std::size_t> offsets(blocks.count() + 1, 0);
  for (std::size_t b = 0; b < blocks.count(); ++b)
    offsets[b + 1] = offsets[b] + blocks.size(b) * blocks.size(b);
  return offsets;
}

// Every row of the blocks lies in `rows`, once in a block, and is owned by one block at most.
void check_blocks(const RowBlocks& blocks, RowRange rows) {
  if (blocks.owned.size() != blocks.count() || blocks.offsets.back() != blocks.rows.size())
    throw Error("leaf blocks: offsets, rows and owned rows do not match");
  std::vector<std::uint8_t> owned(rows.size(), 0);
  std::vector<std::size_t> last_block(rows.size(), blocks.count());
  for (std::size_t b = 0; b < blocks.count(); ++b) {
    if (blocks.owned[b] > blocks.size(b))
      throw Error("leaf blocks: block " + std::to_string(b) + " owns more rows than it has");
    for (std::size_t at = blocks.offsets[b]; at < blocks.offsets[b + 1]; ++at) {
      const std::int32_t row = blocks.rows[at];
      if (row < 0 || std::size_t(row) < rows.begin || std::size_t(row) >= rows.end)
        throw Error("leaf blocks: row " + std::to_string(row) + " is not one of this rank's rows");
      const std::size_t r = std::size_t(row) - rows.begin;
      if (last_block[r] == b)
        throw Error("leaf blocks: row " + std::to_string(row) + " twice in block " +
                    std::to_string(b));
      last_block[r] = b;
      if (at < blocks.offsets[b] + blocks.owned[b] && owned[r]++)
        throw Error("leaf blocks: row " + std::to_string(row) + " owned by two blocks");
    }
  }
}

// LU with partial pivoting, then the inverse, in place (column-major n x n); false if singular.
bool invert(PetscBLASInt n, cplx* a, std::vector<PetscBLASInt>& pivots, std::vector<cplx>& work) {
  pivots.resize(std::size_t(n));
  work.resize(std::size_t(n) * 64);  // zgetri's blocked path: n times its block size
  const PetscBLASInt lwork = PetscBLASInt(work.size());
  PetscBLASInt info = 0;
  auto* entries = reinterpret_cast<PetscScalar*>(a);
  LAPACKgetrf_(&n, &n, entries, &n, pivots.data(), &info);
  if (info != 0) return false;
  LAPACKgetri_(&n, entries, &n, pivots.data(), reinterpret_cast<PetscScalar*>(work.data()), &lwork,
               &info);
  return info == 0;
}

}  // namespace

std::size_t RowBlocks::largest() const {
  std::size_t most = 0;
  for (std::size_t b = 0; b < count(); ++b) most = std::max(most, size(b));
  return most;
}

RowBlocks compact_row_blocks(std::span<const Vec3> points, RowRange rows, int max_block) {
  if (max_block < 1)
    throw Error("leaf blocks: at most " + std::to_string(max_block) +
                " rows a block (must be at least 1)");
  RowBlocks blocks;
  if (rows.size() == 0) return blocks;
  const std::span<const Vec3> own = points.subspan(rows.begin, rows.size());
  fmm::OctreeOptions options;
  options.max_leaf = max_block;
  const fmm::Octree tree(own, own, options);
  // The leaves in Morton order: by where their points start in the sorted order.
  std::vector<std::pair<std::size_t, std::size_t>> leaves;
  for (const int leaf : tree.leaves()) {
    const fmm::Cell& cell = tree.cells()[std::size_t(leaf)];
    if (cell.target_end > cell.target_begin)
      leaves.emplace_back(cell.target_begin, cell.target_end);
  }
  std::sort(leaves.begin(), leaves.end());
  const auto order = tree.target_order();
  const std::size_t most = std::size_t(max_block);
  const auto close_block = [&] {
    if (blocks.rows.size() == blocks.offsets.back()) return;
    blocks.owned.push_back(blocks.rows.size() - blocks.offsets.back());
    blocks.offsets.push_back(blocks.rows.size());
  };
  for (const auto& [begin, end] : leaves)
    // A leaf at the octree's depth cap may hold more than max_block points: cut it in runs.
    for (std::size_t at = begin; at < end; at += most) {
      const std::size_t stop = std::min(end, at + most);
      if (blocks.rows.size() - blocks.offsets.back() + (stop - at) > most) close_block();
      for (std::size_t p = at; p < stop; ++p)
        blocks.rows.push_back(std::int32_t(rows.begin + order[p]));
    }
  close_block();
  return blocks;
}

Neighbours vertex_neighbours(const Mesh& mesh, RowRange rows) {
  // The elements at each vertex (CSR).
  const auto& triangles = mesh.triangles();
  std::vector<std::size_t> at_vertex(mesh.vertices().size() + 1, 0);
  for (const Triangle& t : triangles)
    for (int c = 0; c < 3; ++c) at_vertex[std::size_t(t[c]) + 1]++;
  for (std::size_t v = 0; v + 1 < at_vertex.size(); ++v) at_vertex[v + 1] += at_vertex[v];
  std::vector<std::int32_t> elements(at_vertex.back());
  std::vector<std::size_t> fill(at_vertex.begin(), at_vertex.end() - 1);
  for (std::size_t e = 0; e < triangles.size(); ++e)
    for (int c = 0; c < 3; ++c) elements[fill[std::size_t(triangles[e][c])]++] = std::int32_t(e);
  // Each row's elements: counted, then written (two passes, so that the rows run in parallel).
  const auto row_elements = [&](std::size_t i, std::vector<std::int32_t>& mine) {
    mine.clear();
    for (int c = 0; c < 3; ++c) {
      const std::size_t v = std::size_t(triangles[i][c]);
      mine.insert(mine.end(), elements.begin() + std::ptrdiff_t(at_vertex[v]),
                  elements.begin() + std::ptrdiff_t(at_vertex[v + 1]));
    }
    std::sort(mine.begin(), mine.end());
    mine.erase(std::unique(mine.begin(), mine.end()), mine.end());
  };
  Neighbours out;
  out.row_start.assign(rows.size() + 1, 0);
#pragma omp parallel
  {
    std::vector<std::int32_t> mine;
#pragma omp for schedule(static)
    for (std::size_t r = 0; r < rows.size(); ++r) {
      row_elements(rows.begin + r, mine);
      out.row_start[r + 1] = std::int64_t(mine.size());
    }
  }
  for (std::size_t r = 0; r < rows.size(); ++r) out.row_start[r + 1] += out.row_start[r];
  out.columns.resize(std::size_t(out.row_start.back()));
#pragma omp parallel
  {
    std::vector<std::int32_t> mine;
#pragma omp for schedule(static)
    for (std::size_t r = 0; r < rows.size(); ++r) {
      row_elements(rows.begin + r, mine);
      std::copy(mine.begin(), mine.end(), out.columns.begin() + std::ptrdiff_t(out.row_start[r]));
    }
  }
  return out;
}

RowBlocks overlapping_blocks(const RowBlocks& blocks, std::span<const std::int64_t> row_start,
                             std::span<const std::int32_t> columns, RowRange rows, int rings) {
  if (rings < 0) throw Error("leaf blocks: " + std::to_string(rings) + " rings of overlap");
  if (row_start.size() != rows.size() + 1)
    throw Error("leaf blocks: the pattern's rows are not this rank's");
  check_blocks(blocks, rows);
  std::vector<std::vector<std::int32_t>> widened(blocks.count());
#pragma omp parallel
  {
    std::vector<std::uint8_t> member(rows.size(), 0);
#pragma omp for schedule(dynamic, 4)
    for (std::size_t b = 0; b < blocks.count(); ++b) {
      std::vector<std::int32_t>& mine = widened[b];
      mine.assign(blocks.rows.begin() + std::ptrdiff_t(blocks.offsets[b]),
                  blocks.rows.begin() + std::ptrdiff_t(blocks.offsets[b + 1]));
      for (const std::int32_t row : mine) member[std::size_t(row) - rows.begin] = 1;
      // Ring m + 1 from the rows of ring m (the block itself is ring 0).
      std::size_t ring_begin = 0;
      for (int ring = 0; ring < rings; ++ring) {
        const std::size_t ring_end = mine.size();
        for (std::size_t at = ring_begin; at < ring_end; ++at) {
          const std::size_t r = std::size_t(mine[at]) - rows.begin;
          for (std::int64_t c = row_start[r]; c < row_start[r + 1]; ++c) {
            const std::size_t j = std::size_t(columns[std::size_t(c)]);
            if (j < rows.begin || j >= rows.end || member[j - rows.begin]) continue;
            member[j - rows.begin] = 1;
            mine.push_back(std::int32_t(j));
          }
        }
        ring_begin = ring_end;
      }
      for (const std::int32_t row : mine) member[std::size_t(row) - rows.begin] = 0;
    }
  }
  RowBlocks out;
  out.owned = blocks.owned;
  for (const auto& mine : widened) {
    out.rows.insert(out.rows.end(), mine.begin(), mine.end());
    out.offsets.push_back(out.rows.size());
  }
  return out;
}

std::vector<cplx> dense_blocks(const CorrectedLayerPotentials& layers,
                               const OperatorCoefficients& c, const RowBlocks& blocks,
                               BlockEntries entries) {
  const RowRange rows = layers.rows();
  check_blocks(blocks, rows);
  const std::vector<std::size_t> offsets = dense_offsets(blocks);
  std::vector<cplx> dense(offsets.back(), cplx(0.0));
  const std::vector<cplx> near = layers.near_block(c);
  const auto row_start = layers.near_field().row_start();
  const auto columns = layers.near_field().columns();
  // The rows' entries among the columns (the correction's columns are column entries).
  const std::size_t first = layers.first_row_column();
#pragma omp parallel
  {
    // Each row's place in the block at hand (-1: not in it), to find the close pairs inside.
    std::vector<std::int32_t> place(rows.size(), -1);
#pragma omp for schedule(dynamic, 4)
    for (std::size_t b = 0; b < blocks.count(); ++b) {
      const std::size_t n = blocks.size(b);
      const std::int32_t* members = blocks.rows.data() + blocks.offsets[b];
      cplx* block = dense.data() + offsets[b];
      for (std::size_t at = 0; at < n; ++at)
        place[std::size_t(members[at]) - rows.begin] = std::int32_t(at);
      // The regular rule for every pair first; the close pairs' accurate entries replace theirs.
      if (entries == BlockEntries::full)
        for (std::size_t col = 0; col < n; ++col)
          for (std::size_t row = 0; row < n; ++row)
            block[row + col * n] =
                layers.regular_entry(c, std::size_t(members[row]), std::size_t(members[col]));
      for (std::size_t row = 0; row < n; ++row) {
        const std::size_t r = std::size_t(members[row]) - rows.begin;
        for (std::int64_t at = row_start[r]; at < row_start[r + 1]; ++at) {
          const std::size_t j = std::size_t(columns[std::size_t(at)]);
          if (j < first || j - first >= rows.size() || place[j - first] < 0) continue;
          block[row + std::size_t(place[j - first]) * n] = near[std::size_t(at)];
        }
      }
      for (std::size_t at = 0; at < n; ++at) place[std::size_t(members[at]) - rows.begin] = -1;
    }
  }
  return dense;
}

LeafBlockPreconditioner::LeafBlockPreconditioner(RowBlocks blocks, std::vector<cplx> dense,
                                                 RowRange rows, Device device)
    : blocks_(std::move(blocks)), rows_(rows), device_(device) {
  check_blocks(blocks_, rows_);
  const std::vector<std::size_t> offsets = dense_offsets(blocks_);
  if (dense.size() != offsets.back())
    throw Error("leaf blocks: " + std::to_string(dense.size()) + " dense entries for blocks of " +
                std::to_string(offsets.back()));
  if (device_ == Device::gpu) {
    std::vector<std::int32_t> positions(blocks_.rows.size());
    for (std::size_t at = 0; at < positions.size(); ++at)
      positions[at] = std::int32_t(std::size_t(blocks_.rows[at]) - rows_.begin);
    fmm::require_gpu("the leaf-block preconditioner on the GPU");
#if FMBEM_HAVE_CUDA
    gpu_ = make_gpu_block_inverse(blocks_.offsets, positions, blocks_.owned, dense, rows_.size());
#endif
    return;
  }
  // Only the owned rows of each inverse are kept (owned x size, column-major).
  owned_offsets_.assign(blocks_.count() + 1, 0);
  for (std::size_t b = 0; b < blocks_.count(); ++b)
    owned_offsets_[b + 1] = owned_offsets_[b] + blocks_.owned[b] * blocks_.size(b);
  inverses_.resize(owned_offsets_.back());
  std::size_t singular = blocks_.count();  // the first singular block, if any
#pragma omp parallel
  {
    std::vector<PetscBLASInt> pivots;
    std::vector<cplx> work;
#pragma omp for schedule(dynamic, 4) reduction(min : singular)
    for (std::size_t b = 0; b < blocks_.count(); ++b) {
      const std::size_t n = blocks_.size(b), owned = blocks_.owned[b];
      cplx* block = dense.data() + offsets[b];
      if (!invert(PetscBLASInt(n), block, pivots, work)) {
        singular = std::min(singular, b);
        continue;
      }
      for (std::size_t col = 0; col < n; ++col)
        std::copy(block + col * n, block + col * n + owned,
                  inverses_.data() + owned_offsets_[b] + col * owned);
    }
  }
  if (singular < blocks_.count())
    throw Error("leaf blocks: block " + std::to_string(singular) + " (" +
                std::to_string(blocks_.size(singular)) + " rows) is singular");
}

LeafBlockPreconditioner::LeafBlockPreconditioner(RowBlocks blocks,
                                                 const CorrectedLayerPotentials& layers,
                                                 const OperatorCoefficients& c)
    : blocks_(std::move(blocks)), rows_(layers.rows()), device_(Device::gpu) {
  check_blocks(blocks_, rows_);
  const NearFieldCorrection& near = layers.near_field();
  if (!near.on_device())
    throw Error("leaf blocks: the blocks on the GPU from the GPU need the near field there");
#if FMBEM_HAVE_CUDA  // else near.on_device() is false
  // The near block stays on the device only while the blocks are formed from it.
  fmm::DeviceArray values(near.nonzeros());
  layers.near_block_device(c, values.data());
  std::vector<std::int32_t> positions(blocks_.rows.size());
  for (std::size_t at = 0; at < positions.size(); ++at)
    positions[at] = std::int32_t(std::size_t(blocks_.rows[at]) - rows_.begin);
  GpuBlockInverse::DeviceRows rows;
  rows.row_start = near.device()->device_row_start();
  rows.columns = near.device()->device_columns();
  rows.values = values.data();
  rows.column_offset = std::int64_t(layers.first_row_column());
  gpu_ = make_gpu_block_inverse(blocks_.offsets, positions, blocks_.owned, rows, rows_.size());
#endif
}

LeafBlockPreconditioner::~LeafBlockPreconditioner() = default;

void LeafBlockPreconditioner::apply(std::span<const cplx> x, std::span<cplx> y) const {
  if (x.size() != rows_.size() || y.size() != rows_.size())
    throw Error("leaf blocks: vectors of the wrong size");
  if (gpu_) {
    gpu_->apply(x, y);
    return;
  }
  std::copy(x.begin(), x.end(), y.begin());
#pragma omp parallel
  {
    std::vector<cplx> gathered, product;
#pragma omp for schedule(dynamic, 16)
    for (std::size_t b = 0; b < blocks_.count(); ++b) {
      const PetscBLASInt n = PetscBLASInt(blocks_.size(b)), owned = PetscBLASInt(blocks_.owned[b]),
                         one = 1;
      const std::int32_t* members = blocks_.rows.data() + blocks_.offsets[b];
      gathered.resize(std::size_t(n));
      product.resize(std::size_t(owned));
      for (PetscBLASInt i = 0; i < n; ++i) gathered[std::size_t(i)] = x[members[i] - rows_.begin];
      // The owned rows of the inverse times x.
      const PetscScalar alpha = 1.0, beta = 0.0;
      if (owned > 0)
        BLASgemv_("N", &owned, &n, &alpha,
                  reinterpret_cast<const PetscScalar*>(inverses_.data() + owned_offsets_[b]),
                  &owned, reinterpret_cast<const PetscScalar*>(gathered.data()), &one, &beta,
                  reinterpret_cast<PetscScalar*>(product.data()), &one);
      for (PetscBLASInt i = 0; i < owned; ++i)
        y[members[i] - rows_.begin] = product[std::size_t(i)];
    }
  }
}

std::size_t LeafBlockPreconditioner::host_bytes() const {
  return inverses_.size() * sizeof(cplx) + blocks_.rows.size() * sizeof(std::int32_t) +
         (blocks_.offsets.size() + owned_offsets_.size() + blocks_.owned.size()) *
             sizeof(std::size_t);
}

std::size_t LeafBlockPreconditioner::device_bytes() const {
  return gpu_ ? gpu_->device_bytes() : 0;
}

}  // namespace fmbem
