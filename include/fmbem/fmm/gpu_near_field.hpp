#pragma once
#include <cstddef>
#include <memory>
#include <span>
#include <string>

#include "fmbem/fmm/gpu_options.hpp"
#include "fmbem/fmm/near_field.hpp"

// The near field of an FMM (NearFieldLists) on a CUDA GPU (no CUDA types here: the kernels live
// in src/fmm/cuda/near_field_kernels.cu). GpuNearField uploads the sorted points, normals and
// lists once; apply then sums the pairs from host arrays (charges and dipoles in once, the
// potentials out once) or from device arrays.
//
// Kernel: one thread block per work item, an item being the targets of one target leaf (or a
// slice of a leaf's targets when it holds more than fit one block). The item's sources (its
// leaf's ranges, concatenated) pass through shared memory in tiles of one source a thread;
// each thread owns `targets_per_thread` targets of the item and one phase of the tile (the
// threads for the targets are repeated as often as fit the block, phase p summing the tile's
// sources p, p + P, ...), so that a small leaf still keeps the whole block busy. The phases'
// sums are added in shared memory, in a fixed order, at the end. Complex double throughout;
// sin and cos of kr in double (sincos), 1 / r by rsqrt. With the lists' target normals a
// separate instantiation also sums the derivative along each target's normal (the adjoint
// double layer's and the hypersingular kernel) and adds it with the lists' weight.
namespace fmbem::fmm {

struct GpuNearFieldStatistics {
  std::size_t pairs = 0;         // source-target point pairs per apply (skipped ones included)
  std::size_t items = 0;         // thread blocks per apply
  std::size_t device_bytes = 0;  // device memory held by the executor (scratch included)
  // Of the thread slots (threads times sources per thread, summed over the blocks), the
  // fraction that computes a pair: the rest idle for want of targets to fill the block.
  double thread_utilisation = 0.0;
};

class GpuNearField {
 public:
  // Uploads the points in tree order and the lists. Throws fmbem::Error without a usable GPU,
  // for a bad option, or when the device memory does not suffice.
  explicit GpuNearField(const NearFieldLists& lists, const GpuNearFieldOptions& options = {});
  ~GpuNearField();
  GpuNearField(const GpuNearField&) = delete;
  GpuNearField& operator=(const GpuNearField&) = delete;

  // potential[t] += the near field at target t, all arrays on the host in input order
  // (charges or dipoles may be empty: zero). One copy in of each, one copy out. Synchronous.
  void apply(std::span<const cplx> charges, std::span<const cplx> dipoles,
             std::span<cplx> potential);
  // The same on device arrays in input order (null charges or dipoles: zero), accumulating into
  // device_potential. Asynchronous on the CUDA default stream (see synchronize).
  void apply_device(const cplx* device_charges, const cplx* device_dipoles, cplx* device_potential);
  // Waits for the enqueued work; throws fmbem::Error if a kernel failed.
  void synchronize();

  std::size_t num_sources() const;
  std::size_t num_targets() const;
  const GpuNearFieldStatistics& statistics() const;
  // The launch shape in words, for reports.
  std::string describe() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace fmbem::fmm
