#pragma once
// What the .cu files of src/bem/cuda share: the mesh and the rules on the device, and the
// regular rule's sums (regular_integrals, regular_burton_miller_integrals). The integrals
// themselves are the CPU's, written once in src/bem/host_device and built here over
// DeviceComplex; the .cu files are compiled with -fmad=false (no contraction into fused
// multiply-adds, which the CPU build does not do either) and IEEE division and square root
// (nvcc's defaults), so the only differences left are the last bits of the library functions
// (sin, cos, cosh, sinh, asinh, hypot, log, atan, atan2: CUDA's double versions are within 1 to
// 3 ulp, like glibc's). Not a public header.
#include <cuda_runtime.h>

#include <cstdint>
#include <vector>

#include "../../fmm/cuda/cuda_util.cuh"
#include "../host_device/hypersingular_integrals.hpp"
#include "../host_device/panel_integrals.hpp"
#include "fmbem/bem/discretization.hpp"
#include "fmbem/core/device_complex.hpp"
#include "fmbem/kernel/kernel.hpp"
#include "fmbem/quadrature/gauss_legendre.hpp"

namespace fmbem::bem_cuda {

using fmm::cuda::check;
// A device array that frees itself (the FMM's).
template <class T>
using Buffer = fmm::cuda::DeviceVector<T>;
// The complex type of the kernels (std::complex<double>'s layout).
using Z = DeviceComplex;

__device__ inline Vec3 load(const double* p, std::int64_t i) {
  return {p[3 * i], p[3 * i + 1], p[3 * i + 2]};
}

// The mesh, the regular rule and the angular rule on the device: what every entry kernel reads.
struct Geometry {
  const double* vertices = nullptr;         // 3 per vertex
  const std::int32_t* triangles = nullptr;  // 3 per element
  const double* centroids = nullptr;        // 3 per element
  const double* normals = nullptr;          // 3 per element
  const double* points = nullptr;           // 3 per quadrature point
  const double* point_weights = nullptr;    // 1 per quadrature point
  int points_per_element = 0;
  GaussLegendreView angular;  // on the device
  double coincident = 0.0;

  __device__ Vec3 corner(std::int64_t e, int c) const {
    return load(vertices, triangles[3 * e + c]);
  }
};

// The buffers behind a Geometry, uploaded for one entry computation.
class DeviceGeometry {
 public:
  DeviceGeometry(const Discretization& disc, const GaussLegendre& angular);
  const Geometry& view() const { return view_; }

 private:
  Buffer<double> vertices_, centroids_, normals_, points_, point_weights_, nodes_, weights_;
  Buffer<std::int32_t> triangles_;
  Geometry view_;
};

// Vec3s as 3 doubles each.
std::vector<double> flatten(const std::vector<Vec3>& v);

inline unsigned blocks(std::int64_t threads, int per_block) {
  return unsigned((threads + per_block - 1) / per_block);
}

// ---- the regular rule (regular_integrals, regular_burton_miller_integrals) ----

struct RegularSums {
  Z single_layer, double_layer, adjoint_double_layer, hypersingular;
};

// regular_integrals of element j at x, with regular_burton_miller_integrals' D' and N when
// kBurtonMiller (one loop over the points: each sum is added in the CPU's order).
template <bool kBurtonMiller>
__device__ inline RegularSums regular_sums(const Geometry& g, double k, std::int64_t j, Vec3 x,
                                           Vec3 n_x) {
  const Vec3 normal = load(g.normals, j);
  RegularSums sum{{0.0, 0.0}, {0.0, 0.0}, {0.0, 0.0}, {0.0, 0.0}};
  const std::int64_t m = g.points_per_element;
  for (std::int64_t q = j * m; q < (j + 1) * m; ++q) {
    const Vec3 y = load(g.points, q);
    if (norm(y - x) <= g.coincident) continue;
    const double w = g.point_weights[q];
    sum.single_layer += w * green<Z>(k, norm(y - x));
    sum.double_layer += w * green_normal_derivative<Z>(k, x, y, normal);
    if constexpr (kBurtonMiller) {
      sum.adjoint_double_layer += w * green_target_normal_derivative<Z>(k, x, y, n_x);
      sum.hypersingular += w * green_double_normal_derivative<Z>(k, x, y, n_x, normal);
    }
  }
  return sum;
}

// The last i in [first, last) with sorted[i] <= value (sorted ascending, sorted[first] <= value),
// by bisection.
template <class T>
__device__ inline std::int64_t last_at_most(const T* sorted, std::int64_t first, std::int64_t last,
                                            T value) {
  while (last - first > 1) {
    const std::int64_t mid = (first + last) / 2;
    if (sorted[mid] <= value)
      first = mid;
    else
      last = mid;
  }
  return first;
}

// The row r of a CSR pattern (rows + 1 offsets row_start) with row_start[r] <= at <
// row_start[r + 1]: the kernels run one thread per nonzero.
__device__ inline std::int64_t row_of(const std::int64_t* row_start, std::int64_t rows,
                                      std::int64_t at) {
  return last_at_most(row_start, 0, rows, at);
}

}  // namespace fmbem::bem_cuda
