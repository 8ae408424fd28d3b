#pragma once
// A wideband FMM's diagonal levels on a CUDA GPU (the tables of DiagonalLevels uploaded once,
// the signatures resident between applies), the phases the CPU executor runs in
// cpu_executor.cpp in the same order: leaf signatures, the conversion at the switch level and
// the interpolations up, the diagonal M2L, the anterpolations down and the conversion back,
// the leaves' evaluations. Where each sits on the roofline (the kernels in
// gpu_diagonal_levels.cu): the conversions are dense products (cuBLAS ZGEMM, compute-bound),
// the separable interpolations are small dense products per cell (compute-bound at large
// bandwidths), the diagonal M2L is an element-wise product summed over a target's pairs
// (memory-bound: 32 bytes read a complex multiply-add). No CUDA types here; built with CUDA
// alone. Not a public header.
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "../diagonal_levels.hpp"
#include "fmbem/core/vec3.hpp"

namespace fmbem::fmm {

struct GpuDiagonalPlan {
  const DiagonalLevels* levels = nullptr;
  const Octree* tree = nullptr;
  double k = 0.0;
  int order = 0;
  // Leaves on the diagonal-only levels (2 .. switch level) with sources or targets: their
  // points gathered at [begin, end) of points (or targets) with the input index of each
  // (where the strengths are, where the potential goes).
  struct Leaf {
    int cell = 0;
    std::size_t begin = 0, end = 0;
  };
  std::vector<Leaf> source_leaves, target_leaves;
  std::vector<Vec3> points, normals;  // normals: where the FMM takes dipoles
  std::vector<std::size_t> point_order;
  std::vector<Vec3> targets, target_normals;  // target_normals: where the output has them
  std::vector<std::size_t> target_order;
  cplx normal_weight = 0.0;
};

class GpuDiagonalLevels {
 public:
  // Uploads the tables and lists and allocates the signatures; throws fmbem::Error when the
  // device memory does not suffice.
  explicit GpuDiagonalLevels(const GpuDiagonalPlan& plan);
  ~GpuDiagonalLevels();
  GpuDiagonalLevels(const GpuDiagonalLevels&) = delete;
  GpuDiagonalLevels& operator=(const GpuDiagonalLevels&) = delete;

  // Each enqueued on the default stream; device arrays (strengths and potentials in input
  // order, expansions by cell id, num_cells * p^2), null strengths: zero.
  void clear();
  void leaf_signatures(const cplx* charges, const cplx* dipoles);
  void upward(const cplx* multipoles);
  void m2l();
  void downward(cplx* locals);
  void leaf_evaluations(cplx* potential);

  std::size_t device_bytes() const;
  std::string describe() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace fmbem::fmm
