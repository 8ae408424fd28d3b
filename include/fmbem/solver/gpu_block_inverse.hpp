#pragma once
// The leaf-block preconditioner's blocks on a CUDA GPU, without CUDA types: the kernels live in
// src/solver/cuda/gpu_block_inverse.cu, defined only in a CUDA build (FMBEM_HAVE_CUDA). cuBLAS is
// opened at run time (dlopen), so the program needs only the CUDA runtime until this is used.
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
  // The close pairs in CSR form on the device: position p's row holds
  // columns[row_start[p] .. row_start[p + 1]) (position = column - column_offset) with values
  // at the same places.
  struct DeviceRows {
    const std::int64_t* row_start = nullptr;
    const std::int32_t* columns = nullptr;
    const cplx* values = nullptr;
    std::int64_t column_offset = 0;
  };
  virtual ~GpuBlockInverse() = default;

  // y[p] = (inverse of the block owning p times x gathered on the block)[p], y[p] = x[p] where
  // no block owns p. Host arrays of `length` entries: x copied in once, y out once.
  virtual void apply(std::span<const cplx> x, std::span<cplx> y) const = 0;

  virtual std::size_t device_bytes() const = 0;
};

// offsets (blocks + 1) into positions: block b's entries of x are
// positions[offsets[b] .. offsets[b + 1]), each in [0, length), and it writes the first
// owned[b] of them in y (each position written by one block at most); dense: the blocks,
// column-major, one after the other (size^2 entries each). Throws fmbem::Error naming a
// singular block, or on any CUDA or cuBLAS failure.
std::unique_ptr<GpuBlockInverse> make_gpu_block_inverse(std::span<const std::size_t> offsets,
                                                        std::span<const std::int32_t> positions,
                                                        std::span<const std::size_t> owned,
                                                        std::span<const cplx> dense,
                                                        std::size_t length);
// The blocks formed on the device from the rows `near` (dense_blocks' BlockEntries::near: the
// pairs of a block's positions found in the rows, zero elsewhere; no dense copy on the host),
// then inverted as above.
std::unique_ptr<GpuBlockInverse> make_gpu_block_inverse(std::span<const std::size_t> offsets,
                                                        std::span<const std::int32_t> positions,
                                                        std::span<const std::size_t> owned,
                                                        const GpuBlockInverse::DeviceRows& near,
                                                        std::size_t length);

}  // namespace fmbem
