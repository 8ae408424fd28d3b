// The leaf-block preconditioner's blocks on the GPU: cuBLAS's batched LU (getrf) and inverse
// (getri) once, then one kernel per application that gathers each block's entries of x, multiplies
// them by the block's inverse and scatters the product to y.
//
// cuBLAS is the FMM's, opened at run time (src/fmm/cuda/cublas_loader.cu), so that programs
// which never build this preconditioner do not need the library.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <functional>
#include <string>
#include <vector>

#include "../../fmm/cuda/cublas_loader.cuh"
#include "../../fmm/cuda/cuda_util.cuh"
#include "fmbem/core/error.hpp"
#include "fmbem/solver/gpu_block_inverse.hpp"

namespace fmbem {
namespace {

using fmm::cuda::check;
using fmm::cuda::check_launch;
template <class T>
using Buffer = fmm::cuda::DeviceVector<T>;

using fmm::cuda::check_cublas;
using fmm::cuda::cublas;
using fmm::cuda::CublasHandle;

// Batches of at most this many blocks per cuBLAS call (grid dimensions stay small).
constexpr std::size_t kMaxBatch = 32768;
// Blocks are factorised in classes of equal padded order, a multiple of this: the padding (and
// its memory and work) stays below one step, where one order for all would pad every block to
// the largest.
constexpr std::size_t kOrderStep = 16;

// The blocks members[0 .. gridDim.x) of `dense` (block b: sizes[b] x sizes[b], column-major, at
// dense + dense_offsets[b]) padded with the identity to order x order, one after the other at
// padded: [A 0; 0 I] has the inverse [A^-1 0; 0 I].
__global__ void pad_blocks(int order, const int* __restrict__ members,
                           const cuDoubleComplex* __restrict__ dense,
                           const std::size_t* __restrict__ dense_offsets,
                           const int* __restrict__ sizes, cuDoubleComplex* __restrict__ padded) {
  const int b = members[blockIdx.x];
  const int size = sizes[b];
  const cuDoubleComplex* in = dense + dense_offsets[b];
  cuDoubleComplex* out = padded + std::size_t(blockIdx.x) * order * order;
  for (int at = threadIdx.x; at < order * order; at += blockDim.x) {
    const int i = at % order, j = at / order;
    out[at] =
        i < size && j < size ? in[i + j * size] : make_cuDoubleComplex(i == j ? 1.0 : 0.0, 0.0);
  }
}

// The owned rows and real columns of the padded inverses (order x order, one after the other, of
// the blocks members[0 .. gridDim.x)) copied to owned[b] x sizes[b], column-major, at
// kept + kept_offsets[b].
__global__ void keep_owned_rows(int order, const int* __restrict__ members,
                                const cuDoubleComplex* __restrict__ inverses,
                                const int* __restrict__ sizes, const int* __restrict__ owned,
                                const std::size_t* __restrict__ kept_offsets,
                                cuDoubleComplex* __restrict__ kept) {
  const int b = members[blockIdx.x];
  const int rows = owned[b], columns = sizes[b];
  const cuDoubleComplex* inverse = inverses + std::size_t(blockIdx.x) * order * order;
  cuDoubleComplex* out = kept + kept_offsets[b];
  for (int at = threadIdx.x; at < rows * columns; at += blockDim.x) {
    const int i = at % rows, j = at / rows;
    out[at] = inverse[i + std::size_t(j) * order];
  }
}

// One thread block per matrix block b: its entries of x (positions[offsets[b] ..], sizes[b] of
// them) in shared memory, then thread i forms row i of the kept rows times them for the owned
// rows (at step j the threads read column j of the kept rows: contiguous) and writes it to y.
__global__ void apply_inverses(const cuDoubleComplex* __restrict__ kept,
                               const std::size_t* __restrict__ kept_offsets,
                               const std::size_t* __restrict__ offsets,
                               const int* __restrict__ positions, const int* __restrict__ sizes,
                               const int* __restrict__ owned, const cuDoubleComplex* __restrict__ x,
                               cuDoubleComplex* __restrict__ y) {
  extern __shared__ cuDoubleComplex gathered[];
  const std::size_t b = blockIdx.x;
  const int* place = positions + offsets[b];
  const int size = sizes[b], rows = owned[b];
  for (int j = threadIdx.x; j < size; j += blockDim.x) gathered[j] = x[place[j]];
  __syncthreads();
  const cuDoubleComplex* inverse = kept + kept_offsets[b];
  for (int i = threadIdx.x; i < rows; i += blockDim.x) {
    double re = 0.0, im = 0.0;
    for (int j = 0; j < size; ++j) {
      const cuDoubleComplex a = inverse[i + std::size_t(j) * rows], g = gathered[j];
      re += a.x * g.x - a.y * g.y;
      im += a.x * g.y + a.y * g.x;
    }
    y[place[i]] = make_cuDoubleComplex(re, im);
  }
}

// The blocks members[0 .. gridDim.x) formed from the close pairs' rows, padded as pad_blocks
// pads: zero, the identity beyond the block's size, then each pair (row p, column q) whose q is
// one of the block's positions written at (p's place, q's place). The block's positions are
// sorted in shared memory (by rank: they are distinct) so that each column is found by binary
// search; a warp per row of the block, its lanes over the row's pairs.
__global__ void fill_near_blocks(int order, const int* __restrict__ members,
                                 const std::size_t* __restrict__ offsets,
                                 const int* __restrict__ positions, const int* __restrict__ sizes,
                                 const std::int64_t* __restrict__ row_start,
                                 const std::int32_t* __restrict__ columns,
                                 const cuDoubleComplex* __restrict__ values,
                                 std::int64_t column_offset, cuDoubleComplex* __restrict__ padded) {
  extern __shared__ int keys[];  // size positions, then sorted, then their places
  const int b = members[blockIdx.x];
  const int size = sizes[b];
  const int* place = positions + offsets[b];
  int* sorted = keys + size;
  int* where = keys + 2 * size;
  cuDoubleComplex* out = padded + std::size_t(blockIdx.x) * order * order;
  for (int at = threadIdx.x; at < order * order; at += blockDim.x) {
    const int i = at % order, j = at / order;
    out[at] = make_cuDoubleComplex(i == j && i >= size ? 1.0 : 0.0, 0.0);
  }
  for (int t = threadIdx.x; t < size; t += blockDim.x) keys[t] = place[t];
  __syncthreads();
  for (int t = threadIdx.x; t < size; t += blockDim.x) {
    int rank = 0;
    for (int u = 0; u < size; ++u) rank += keys[u] < keys[t];
    sorted[rank] = keys[t];
    where[rank] = t;
  }
  // Also orders the fill above before the scatter below (other threads' writes).
  __syncthreads();
  const int lane = threadIdx.x % 32, warps = blockDim.x / 32;
  for (int row = threadIdx.x / 32; row < size; row += warps) {
    const std::int64_t p = keys[row];
    for (std::int64_t e = row_start[p] + lane; e < row_start[p + 1]; e += 32) {
      const std::int64_t q = std::int64_t(columns[e]) - column_offset;
      int lo = 0, hi = size;
      while (hi - lo > 1) {
        const int mid = (lo + hi) / 2;
        if (sorted[mid] <= q)
          lo = mid;
        else
          hi = mid;
      }
      if (sorted[lo] == q) out[row + std::size_t(where[lo]) * order] = values[e];
    }
  }
}

}  // namespace

// GpuBlockInverse on a CUDA device.
class CudaBlockInverse final : public GpuBlockInverse {
 public:
  CudaBlockInverse(std::span<const std::size_t> offsets, std::span<const std::int32_t> positions,
                   std::span<const std::size_t> owned, std::span<const cplx> dense,
                   std::size_t length);
  CudaBlockInverse(std::span<const std::size_t> offsets, std::span<const std::int32_t> positions,
                   std::span<const std::size_t> owned, const DeviceRows& near, std::size_t length);
  void apply(std::span<const cplx> x, std::span<cplx> y) const override;
  std::size_t device_bytes() const override;

 private:
  std::size_t blocks = 0, length = 0;
  int largest = 0;  // rows of the largest block (shared memory of apply_inverses)
  int threads = 0;  // of apply_inverses: a thread per owned row of the block owning most
  Buffer<cuDoubleComplex> kept;          // the inverses' owned rows (keep_owned_rows)
  mutable Buffer<cuDoubleComplex> x, y;  // apply's scratch
  Buffer<std::size_t> kept_offsets, offsets;
  Buffer<int> positions, sizes, owned;

  // fill(order, members, count, lu): the blocks members[0 .. count) (device array) padded to
  // order x order, one after the other at lu (pad_blocks' layout).
  using Fill = std::function<void(int, const int*, std::size_t, cuDoubleComplex*)>;
  // The layout checked and uploaded, then every block formed by fill and inverted.
  void build(std::span<const std::size_t> block_offsets, std::span<const std::int32_t> places,
             std::span<const std::size_t> owned_rows, std::size_t size, const Fill& fill);
};

void CudaBlockInverse::build(std::span<const std::size_t> block_offsets,
                             std::span<const std::int32_t> places,
                             std::span<const std::size_t> owned_rows, std::size_t size,
                             const Fill& fill) {
  blocks = block_offsets.empty() ? 0 : block_offsets.size() - 1;
  length = size;
  if (owned_rows.size() != blocks || (blocks > 0 && block_offsets.back() != places.size()))
    throw Error("GPU block inverse: the blocks' offsets, positions and owned rows do not match");
  std::size_t most = 0, most_owned = 0, kept_entries = 0;
  std::vector<std::size_t> kept_at(blocks);
  std::vector<int> block_sizes(blocks), block_owned(blocks);
  for (std::size_t b = 0; b < blocks; ++b) {
    const std::size_t n = block_offsets[b + 1] - block_offsets[b];
    if (owned_rows[b] > n) throw Error("GPU block inverse: a block owns more rows than it has");
    most = std::max(most, n);
    most_owned = std::max(most_owned, owned_rows[b]);
    kept_at[b] = kept_entries;
    kept_entries += owned_rows[b] * n;
    block_sizes[b] = fmm::cuda::checked_int("GPU block inverse", n, "a block's rows");
    block_owned[b] = int(owned_rows[b]);
  }
  for (const std::int32_t p : places)
    if (p < 0 || std::size_t(p) >= length)
      throw Error("GPU block inverse: position " + std::to_string(p) + " outside 0.." +
                  std::to_string(length));
  fmm::cuda::checked_int("GPU block inverse", places.size(), "the blocks' rows");
  largest = int(most);
  threads = int(std::min<std::size_t>(256, std::max<std::size_t>(32, (most_owned + 31) / 32 * 32)));
  // apply_inverses keeps a block's entries of x in shared memory: above the default 48 KiB (3,072
  // rows) it asks for more, and CUDA refuses beyond what the device has.
  const std::size_t shared = most * sizeof(cuDoubleComplex);
  if (shared > 48 * 1024)
    check(cudaFuncSetAttribute(apply_inverses, cudaFuncAttributeMaxDynamicSharedMemorySize,
                               int(shared)),
          "the shared memory of the largest block");
  x.allocate(length, "the block preconditioner's x");
  y.allocate(length, "the block preconditioner's y");
  if (blocks == 0) return;
  offsets = Buffer<std::size_t>(block_offsets.data(), block_offsets.size(), "the blocks' offsets");
  positions = Buffer<int>(reinterpret_cast<const int*>(places.data()), places.size(),
                          "the blocks' positions");
  sizes = Buffer<int>(block_sizes, "the blocks' sizes");
  owned = Buffer<int>(block_owned, "the blocks' owned rows");
  kept_offsets = Buffer<std::size_t>(kept_at, "the kept rows' offsets");
  kept.allocate(kept_entries, "the inverses' owned rows");

  // The blocks by class of padded order.
  std::vector<std::vector<int>> classes((most + kOrderStep - 1) / kOrderStep);
  for (std::size_t b = 0; b < blocks; ++b)
    classes[(std::size_t(block_sizes[b]) + kOrderStep - 1) / kOrderStep - 1].push_back(int(b));
  CublasHandle handle;
  for (std::size_t c = 0; c < classes.size(); ++c) {
    const std::vector<int>& members = classes[c];
    if (members.empty()) continue;
    const int order = int((c + 1) * kOrderStep);
    const std::size_t count = members.size(), square = std::size_t(order) * std::size_t(order);
    const Buffer<int> device_members(members, "a class's blocks");
    Buffer<cuDoubleComplex> lu(count * square, "the blocks to factorise"),
        inverses(count * square, "the blocks' inverses");
    fill(order, device_members.data(), count, lu.data());
    std::vector<cuDoubleComplex*> lu_pointers(count), inverse_pointers(count);
    for (std::size_t m = 0; m < count; ++m) {
      lu_pointers[m] = lu.data() + m * square;
      inverse_pointers[m] = inverses.data() + m * square;
    }
    const Buffer<cuDoubleComplex*> lu_array(lu_pointers, "the LU pointers"),
        inverse_array(inverse_pointers, "the inverse pointers");
    Buffer<int> pivots(count * std::size_t(order), "the pivots"), info(count, "the LU info");
    for (std::size_t first = 0; first < count; first += kMaxBatch) {
      const int batch = int(std::min(kMaxBatch, count - first));
      check_cublas(cublas().zgetrf_batched(handle.get(), order, lu_array.data() + first, order,
                                           pivots.data() + first * std::size_t(order),
                                           info.data() + first, batch),
                   "cublasZgetrfBatched");
    }
    std::vector<int> factorised(count);
    info.download(factorised.data(), "the LU info");
    for (std::size_t m = 0; m < count; ++m)
      if (factorised[m] != 0)
        throw Error("leaf blocks: block " + std::to_string(members[m]) + " (" +
                    std::to_string(block_sizes[std::size_t(members[m])]) + " rows) is singular");
    for (std::size_t first = 0; first < count; first += kMaxBatch) {
      const int batch = int(std::min(kMaxBatch, count - first));
      check_cublas(
          cublas().zgetri_batched(handle.get(), order, lu_array.data() + first, order,
                                  pivots.data() + first * std::size_t(order),
                                  inverse_array.data() + first, order, info.data() + first, batch),
          "cublasZgetriBatched");
    }
    keep_owned_rows<<<unsigned(count), 256>>>(order, device_members.data(), inverses.data(),
                                              sizes.data(), owned.data(), kept_offsets.data(),
                                              kept.data());
    check_launch("keep_owned_rows");
    check(cudaDeviceSynchronize(), "the blocks' inversion");
  }
}

CudaBlockInverse::CudaBlockInverse(std::span<const std::size_t> offsets,
                                   std::span<const std::int32_t> positions,
                                   std::span<const std::size_t> owned, std::span<const cplx> dense,
                                   std::size_t length) {
  const std::size_t blocks = offsets.empty() ? 0 : offsets.size() - 1;
  std::vector<std::size_t> dense_offsets(blocks);
  std::size_t entries = 0;
  for (std::size_t b = 0; b < blocks; ++b) {
    const std::size_t n = offsets[b + 1] - offsets[b];
    dense_offsets[b] = entries;
    entries += n * n;
  }
  if (dense.size() != entries)
    throw Error("GPU block inverse: " + std::to_string(dense.size()) +
                " dense entries for blocks of " + std::to_string(entries));
  Buffer<cuDoubleComplex> device_dense;
  Buffer<std::size_t> device_dense_offsets;
  CudaBlockInverse& d = *this;
  build(offsets, positions, owned, length,
        [&](int order, const int* members, std::size_t count, cuDoubleComplex* lu) {
          if (device_dense.size() == 0) {  // uploaded at the first class
            device_dense = Buffer<cuDoubleComplex>(
                reinterpret_cast<const cuDoubleComplex*>(dense.data()), dense.size(), "the blocks");
            device_dense_offsets = Buffer<std::size_t>(dense_offsets, "the blocks' offsets");
          }
          pad_blocks<<<unsigned(count), 256>>>(order, members, device_dense.data(),
                                               device_dense_offsets.data(), d.sizes.data(), lu);
          check_launch("pad_blocks");
        });
}

CudaBlockInverse::CudaBlockInverse(std::span<const std::size_t> offsets,
                                   std::span<const std::int32_t> positions,
                                   std::span<const std::size_t> owned, const DeviceRows& near,
                                   std::size_t length) {
  CudaBlockInverse& d = *this;
  build(offsets, positions, owned, length,
        [&](int order, const int* members, std::size_t count, cuDoubleComplex* lu) {
          // fill_near_blocks sorts a block's positions in shared memory (3 ints a row).
          const std::size_t shared = 3 * std::size_t(d.largest) * sizeof(int);
          if (shared > 48 * 1024)
            check(cudaFuncSetAttribute(fill_near_blocks,
                                       cudaFuncAttributeMaxDynamicSharedMemorySize, int(shared)),
                  "the shared memory of the largest block");
          fill_near_blocks<<<unsigned(count), 256, shared>>>(
              order, members, d.offsets.data(), d.positions.data(), d.sizes.data(), near.row_start,
              near.columns, reinterpret_cast<const cuDoubleComplex*>(near.values),
              near.column_offset, lu);
          check_launch("fill_near_blocks");
        });
}

void CudaBlockInverse::apply(std::span<const cplx> x, std::span<cplx> y) const {
  const CudaBlockInverse& d = *this;
  if (x.size() != d.length || y.size() != d.length)
    throw Error("GPU block inverse: vectors of the wrong size");
  if (d.length == 0) return;
  const std::size_t bytes = d.length * sizeof(cplx);
  check(cudaMemcpy(d.x.data(), x.data(), bytes, cudaMemcpyHostToDevice), "block inverse: x in");
  // Entries no block owns keep x (the identity there).
  check(cudaMemcpy(d.y.data(), d.x.data(), bytes, cudaMemcpyDeviceToDevice),
        "block inverse: y = x");
  if (d.blocks > 0) {
    apply_inverses<<<unsigned(d.blocks), unsigned(d.threads),
                     std::size_t(d.largest) * sizeof(cuDoubleComplex)>>>(
        d.kept.data(), d.kept_offsets.data(), d.offsets.data(), d.positions.data(), d.sizes.data(),
        d.owned.data(), d.x.data(), d.y.data());
    check_launch("apply_inverses");
  }
  check(cudaMemcpy(y.data(), d.y.data(), bytes, cudaMemcpyDeviceToHost), "block inverse: y out");
}

std::size_t CudaBlockInverse::device_bytes() const {
  const CudaBlockInverse& d = *this;
  return d.kept.bytes() + d.kept_offsets.bytes() + d.offsets.bytes() + d.positions.bytes() +
         d.sizes.bytes() + d.owned.bytes() + d.x.bytes() + d.y.bytes();
}

std::unique_ptr<GpuBlockInverse> make_gpu_block_inverse(std::span<const std::size_t> offsets,
                                                        std::span<const std::int32_t> positions,
                                                        std::span<const std::size_t> owned,
                                                        std::span<const cplx> dense,
                                                        std::size_t length) {
  return std::make_unique<CudaBlockInverse>(offsets, positions, owned, dense, length);
}

std::unique_ptr<GpuBlockInverse> make_gpu_block_inverse(std::span<const std::size_t> offsets,
                                                        std::span<const std::int32_t> positions,
                                                        std::span<const std::size_t> owned,
                                                        const GpuBlockInverse::DeviceRows& near,
                                                        std::size_t length) {
  return std::make_unique<CudaBlockInverse>(offsets, positions, owned, near, length);
}

}  // namespace fmbem
