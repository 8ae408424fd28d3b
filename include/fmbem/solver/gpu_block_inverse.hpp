#pragma once
// The leaf-block preconditioner's blocks on a CUDA GPU, without CUDA types: the kernels live in
// src/solver/cuda/gpu_block_inverse.cu; a build without nvcc links
// src/solver/gpu_block_inverse.cpp, whose constructor throws fmbem::Error. cuBLAS is opened at
// run time (dlopen), so the program needs only the CUDA runtime until this is used.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "fmbem/core/vec3.hpp"

namespace fmbem {

// Dense blocks inverted once on the GPU (cuBLAS's batched LU with partial pivoting and batched
// inverse, every block padded with the identity to the largest one's order) and applied to a
// vector in one kernel: each block's entries of x gathered, multiplied by its inverse and
// scattered to y.
class GpuBlockInverse {
 public:
  // offsets (blocks + 1) into positions: block b's entries of x are
  // positions[offsets[b] .. offsets[b + 1]), each in [0, length), and it writes the first
  // owned[b] of them in y (each position written by one block at most); dense: the blocks,
  // column-major, one after the other (size^2 entries each). Throws fmbem::Error naming a
  // singular block, or on any CUDA or cuBLAS failure.
  GpuBlockInverse(std::span<const std::size_t> offsets, std::span<const std::int32_t> positions,
                  std::span<const std::size_t> owned, std::span<const cplx> dense,
                  std::size_t length);
  // The close pairs in CSR form on the device: position p's row holds
  // columns[row_start[p] .. row_start[p + 1]) (position = column - column_offset) with values
  // at the same places.
  struct DeviceRows {
    const std::int64_t* row_start = nullptr;
    const std::int32_t* columns = nullptr;
    const cplx* values = nullptr;
    std::int64_t column_offset = 0;
  };
  // The blocks formed on the device from those rows (dense_blocks' BlockEntries::near: the
  // pairs of a block's positions found in the rows, zero elsewhere; no dense copy on the host),
  // then inverted as above.
  GpuBlockInverse(std::span<const std::size_t> offsets, std::span<const std::int32_t> positions,
                  std::span<const std::size_t> owned, const DeviceRows& near, std::size_t length);
  ~GpuBlockInverse();
  GpuBlockInverse(const GpuBlockInverse&) = delete;
  GpuBlockInverse& operator=(const GpuBlockInverse&) = delete;

  // y[p] = (inverse of the block owning p times x gathered on the block)[p], y[p] = x[p] where
  // no block owns p. Host arrays of `length` entries: x copied in once, y out
  // once.
  void apply(std::span<const cplx> x, std::span<cplx> y) const;

  std::size_t device_bytes() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace fmbem
