#pragma once
#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "fmbem/fmm/gpu_options.hpp"
#include "fmbem/fmm/m2l_plan.hpp"

// The M2L phase on a CUDA GPU (no CUDA types here: the kernels live in src/fmm/cuda/*.cu).
// GpuM2L builds a plan's translation matrices on the device (from MultipoleToLocalTable's terms;
// the plan's host matrices, if any, are not read), uploads its lists once and then applies the
// M2L of all levels, from host arrays (moments in and locals out once per apply) or from device
// arrays.
//
// Schemes (the first four from the reference paper, section 4.2; all compute
//   L_i(O) += sum over S in V(O) of sum_j T_ij(o - s) M_j(S)):
//   basic    one thread block per target cell, p^2 threads, thread i computes row i of L(O),
//            T read from device memory for every pair.
//   sibling  one block per target cluster (the 8 children of a parent), thread i row i of the
//            children's locals; the products of a pair of clusters that share a transfer
//            vector form one matrix-matrix product, so T is read once for them.
//   cluster  one block per chunk of B x B x B target clusters and tile of 64 rows; the chunk's
//            pairs grouped by matrix into jobs of up to 16 pairs taken by warps as they free
//            up; each lane holds 2 rows of T in registers (T read once per chunk, each value
//            feeding up to 16 complex FMAs), moments staged per warp in shared memory.
//   ij       one block per chunk and tile of rows, teams of threads per pair of target cells
//            (paired by the overlap of their lists); for each column j the M_j of the
//            chunk's source cells and the T_ij of all its transfer vectors are staged in
//            shared memory (a ring of stages), each T value applied to both cells of a pair;
//            the interaction list is the innermost loop.
//   gemm     ours: per level, the source moments gathered into one column block per transfer
//            vector, one cuBLAS batched ZGEMM (FP64 tensor cores), the products summed into
//            the locals per target cell. The fastest measured at p >= 11 (H100).
//   dmma     ours: the same blocking in one kernel of our own: the moments are gathered
//            straight into shared memory and multiplied on the FP64 tensor cores (mma.sync),
//            then summed into the locals per target cell. The fastest measured at p <= 8.
// bench/results/gpu_m2l.md has the measurements.
// Empty and missing cells only lower the reuse of the blocking schemes.
namespace fmbem::fmm {

// What one apply does at one level, counted from the plan and the scheme's access pattern.
struct GpuM2LLevelStatistics {
  int level = 0;
  std::size_t pairs = 0;
  double flops = 0.0;           // useful: 8 p^4 per pair
  double executed_flops = 0.0;  // including padding (gemm, dmma) or zero rows
  // Bytes the kernels read or write in device memory (before the caches): the translation
  // matrices, and everything else (moments, locals, lists, intermediates).
  double matrix_bytes = 0.0, other_bytes = 0.0;
};

struct GpuM2LStatistics {
  std::size_t device_bytes = 0;  // device memory held by the executor
  std::vector<GpuM2LLevelStatistics> levels;
  double flops() const;
  double matrix_bytes() const;
  double bytes() const;  // matrix and other
};

class GpuM2L {
 public:
  // Builds the matrices and uploads what the scheme needs of the plan. Throws fmbem::Error
  // without a usable GPU, for an out-of-range option, or when the device memory does not
  // suffice.
  GpuM2L(const M2LPlan& plan, M2LScheme scheme, const GpuM2LOptions& options = {});
  ~GpuM2L();
  GpuM2L(const GpuM2L&) = delete;
  GpuM2L& operator=(const GpuM2L&) = delete;

  // local[c] += M2L(multipole) on host arrays of plan.num_cells * p^2 coefficients: one copy
  // of the moments to the device, all levels, one copy of the locals back. Synchronous.
  void apply(const cplx* multipole, cplx* local);
  // The same on device arrays of plan.num_cells * p^2 coefficients, accumulating into
  // device_local. Asynchronous: each level runs on a stream of its own, ordered after the
  // work already on the CUDA default stream and before any work put there later (see
  // synchronize).
  void apply_device(const cplx* device_multipole, cplx* device_local);
  // One level of the plan (an index into plan.levels), as apply_device.
  void apply_level_device(std::size_t level_index, const cplx* device_multipole,
                          cplx* device_local);
  // Waits for the enqueued work; throws fmbem::Error if a kernel failed.
  void synchronize();
  // The translation matrices of one level (an index into plan.levels) as built on the device,
  // copied back in M2LLevelPlan::matrices' layout (row-major p^2 x p^2, one after another).
  std::vector<cplx> matrices(std::size_t level_index) const;

  M2LScheme scheme() const;
  const GpuM2LStatistics& statistics() const;
  // The scheme's launch shape in words (blocking sizes, threads, shared memory), for reports.
  std::string describe() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace fmbem::fmm
