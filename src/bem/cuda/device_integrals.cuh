#pragma once
// What the .cu files of src/bem/cuda share: the mesh and the rules on the device. The integrals
// and the regular rule's sums are the CPU's, written once in src/bem/host_device and built here
// over DeviceComplex; the .cu files are compiled with -fmad=false (no contraction into fused
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
#include "../host_device/regular_integrals.hpp"
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
  const Vec3* points = nullptr;             // as the host's, for the shared regular sums
  const double* point_weights = nullptr;    // 1 per quadrature point
  int points_per_element = 0;
  GaussLegendreView angular;  // on the device
  double coincident = 0.0;

  __device__ Vec3 corner(std::int64_t e, int c) const {
    return load(vertices, triangles[3 * e + c]);
  }
  // Element e's regular rule (host_device::regular_sums).
  __device__ host_device::RegularRule rule(std::int64_t e) const {
    const std::int64_t first = e * points_per_element;
    return {points + first, point_weights + first, points_per_element, load(normals, e),
            coincident};
  }
};

// The buffers behind a Geometry, uploaded for one entry computation.
class DeviceGeometry {
 public:
  DeviceGeometry(const Discretization& disc, const GaussLegendre& angular);
  const Geometry& view() const { return view_; }

 private:
  Buffer<double> vertices_, centroids_, normals_, point_weights_, nodes_, weights_;
  Buffer<Vec3> points_;
  Buffer<std::int32_t> triangles_;
  Geometry view_;
};

// Vec3s as 3 doubles each.
std::vector<double> flatten(const std::vector<Vec3>& v);

inline unsigned blocks(std::int64_t threads, int per_block) {
  return unsigned((threads + per_block - 1) / per_block);
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
