#pragma once
// A wideband FMM's diagonal levels on a CUDA GPU (the tables of DiagonalLevels uploaded once,
// the signatures resident between applies), the phases the CPU executor runs in
// cpu_executor.cpp in the same order: the conversion at the conversion level and the
// interpolations up, the diagonal M2L, the anterpolations down and the conversion back. Where each
// sits on the roofline (the kernels in gpu_diagonal_levels.cu): the conversions are dense products
// (cuBLAS ZGEMM, compute-bound), the separable interpolations are small dense products per cell
// (compute-bound at large bandwidths), the diagonal M2L is an element-wise product summed over a
// target's pairs (memory-bound: 32 bytes read a complex multiply-add). No CUDA types here; built
// with CUDA alone. Not a public header.
#include <cstddef>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "../diagonal_levels.hpp"

namespace fmbem::fmm {

struct GpuDiagonalPlan {
  const DiagonalLevels* levels = nullptr;
  int order = 0;
};

class GpuDiagonalLevels {
 public:
  // Uploads the tables and lists and allocates the signatures; throws fmbem::Error when the
  // device memory does not suffice.
  explicit GpuDiagonalLevels(const GpuDiagonalPlan& plan);
  ~GpuDiagonalLevels();
  GpuDiagonalLevels(const GpuDiagonalLevels&) = delete;
  GpuDiagonalLevels& operator=(const GpuDiagonalLevels&) = delete;

  // Each enqueued on the default stream; device arrays of expansions by cell id (num_cells *
  // p^2): upward reads the conversion level's multipoles, downward adds to its locals. On a
  // distributed part (DiagonalLevels::part) upward gathers the conversion level's partial
  // multipoles, copies them to the host for `parts_sum` (the sum over the parts, in place) and
  // back: it waits for the device there.
  void clear();
  void upward(const cplx* multipoles,
              const std::function<void(std::span<cplx> values)>& parts_sum = {});
  void m2l();
  void downward(cplx* locals);

  std::size_t device_bytes() const;
  std::string describe() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace fmbem::fmm
