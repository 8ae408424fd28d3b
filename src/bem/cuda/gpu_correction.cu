// The near-field correction's entries, its SpMV and the point strengths on the GPU.
//
// The entry kernel is src/bem/panel_integrals.cpp and regular_integrals (near_field.cpp)
// written again for the device, operation for operation in the same order, so that the
// results agree with the CPU's to rounding: this file is compiled with -fmad=false (no
// contraction into fused multiply-adds, which the CPU build does not do either), IEEE division
// and square root (nvcc's defaults), so the only differences left are the last bits of sin,
// cos, cosh, asinh and hypot (CUDA's double versions are within 1 to 3 ulp, like glibc's).
#include <cuda_runtime.h>

#include <numbers>
#include <string>
#include <vector>

#include "../../fmm/cuda/cuda_util.cuh"
#include "fmbem/bem/gpu_correction.hpp"
#include "fmbem/core/error.hpp"

namespace fmbem {
namespace {

using fmm::cuda::check;
// A device array that frees itself (the FMM's).
template <class T>
using Buffer = fmm::cuda::DeviceVector<T>;

// Vec3 and std::complex<double> as the CPU code uses them (-fcx-limited-range products).
struct V3 {
  double x, y, z;
};
__device__ inline V3 operator-(V3 a, V3 b) { return {a.x - b.x, a.y - b.y, a.z - b.z}; }
__device__ inline V3 operator*(V3 a, double s) { return {a.x * s, a.y * s, a.z * s}; }
__device__ inline double dot(V3 a, V3 b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
__device__ inline V3 cross(V3 a, V3 b) {
  return {a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x};
}
__device__ inline double norm(V3 a) { return sqrt(dot(a, a)); }
__device__ inline V3 normalized(V3 a) { return a * (1.0 / norm(a)); }
__device__ inline V3 load(const double* p, std::size_t i) {
  return {p[3 * i], p[3 * i + 1], p[3 * i + 2]};
}

struct Z {
  double re, im;
};
__device__ inline Z operator+(Z a, Z b) { return {a.re + b.re, a.im + b.im}; }
__device__ inline Z operator-(Z a, Z b) { return {a.re - b.re, a.im - b.im}; }
__device__ inline Z operator*(Z a, Z b) {
  return {a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re};
}
__device__ inline Z operator*(Z a, double s) { return {a.re * s, a.im * s}; }
__device__ inline Z operator*(double s, Z a) { return {s * a.re, s * a.im}; }
__device__ inline Z operator/(Z a, double s) { return {a.re / s, a.im / s}; }

constexpr double kInv4Pi = 0.25 / std::numbers::pi;

struct Sector {
  double sign, dist, t1, t2;
};

// edge_sector of panel_integrals.cpp.
__device__ Sector edge_sector(V3 p, V3 v1, V3 v2, V3 n) {
  const V3 e = v2 - v1;
  const double length = norm(e);
  const V3 unit = e * (1.0 / length);
  Sector s{0.0, 0.0, 0.0, 0.0};
  s.t1 = dot(v1 - p, unit);
  s.t2 = dot(v2 - p, unit);
  s.dist = norm((v1 - p) - unit * s.t1);
  if (s.dist <= 1e-14 * length) return s;
  s.sign = dot(cross(v1 - p, v2 - p), n) > 0.0 ? 1.0 : -1.0;
  return s;
}

__device__ Z expm1_ratio(double z) {
  if (fabs(z) < 1e-4) return {1.0 - z * z / 6.0, z / 2.0 - z * z * z / 24.0};
  const double half_sin = sin(0.5 * z);
  return {sin(z) / z, 2.0 * half_sin * half_sin / z};
}

// panel_integrals of panel_integrals.cpp: {single, double}.
__device__ void panel_integrals(double k, V3 a, V3 b, V3 c, V3 x, const double* nodes,
                                const double* weights, int angular, Z& single_out, Z& double_out) {
  const V3 n = normalized(cross(b - a, c - a));
  const double longest = fmax(fmax(norm(b - a), norm(c - b)), norm(a - c));
  double h = dot(x - a, n);
  const bool in_plane = fabs(h) <= 1e-12 * longest;
  if (in_plane) h = 0.0;
  const double abs_h = fabs(h);
  const V3 p = x - n * h;
  const Z phase_h{cos(k * abs_h), sin(k * abs_h)};

  Z single{0.0, 0.0}, dbl{0.0, 0.0};
  double laplace_single = 0.0;
  const V3 v[3] = {a, b, c};
#pragma unroll  // constant indices keep v in registers
  for (int e = 0; e < 3; ++e) {
    const Sector s = edge_sector(p, v[e], v[(e + 1) % 3], n);
    if (s.sign == 0.0) continue;
    const double u1 = asinh(s.t1 / s.dist), u2 = asinh(s.t2 / s.dist);
    const double half = 0.5 * (u2 - u1), mid = 0.5 * (u2 + u1);
    Z sector_single{0.0, 0.0}, sector_double{0.0, 0.0};
    double sector_laplace = 0.0;
    for (int q = 0; q < angular; ++q) {
      const double u = mid + half * nodes[q];
      const double cosh_u = cosh(u);
      const double w = half * weights[q] / cosh_u;
      const double rho = s.dist * cosh_u;
      const double r_max = hypot(rho, h);
      const double delta = rho * rho / (r_max + abs_h);
      const Z radial = phase_h * delta * expm1_ratio(k * delta);
      if (in_plane) {
        sector_single = sector_single + w * Z{radial.re - delta, radial.im};
      } else {
        sector_single = sector_single + w * radial;
        const Z phase_max{cos(k * r_max), sin(k * r_max)};
        sector_double =
            sector_double + w * (-h * phase_max / r_max + (h > 0 ? 1.0 : -1.0) * phase_h);
      }
    }
    if (in_plane) sector_laplace = s.dist * (u2 - u1);
    single = single + s.sign * sector_single;
    dbl = dbl + s.sign * sector_double;
    laplace_single += s.sign * sector_laplace;
  }
  single_out = kInv4Pi * Z{single.re + laplace_single, single.im};
  double_out = kInv4Pi * dbl;
}

// green and green_normal_derivative of kernel.hpp.
__device__ Z green(double k, double r) { return Z{cos(k * r), sin(k * r)} * (kInv4Pi / r); }
__device__ Z green_normal_derivative(double k, V3 x, V3 y, V3 normal_y) {
  const V3 d = y - x;
  const double r = norm(d);
  const double kr = k * r;
  const Z phase{cos(kr), sin(kr)};
  return phase * Z{-1.0, kr} * (kInv4Pi * dot(d, normal_y) / (r * r * r));
}

struct EntryArgs {
  std::int64_t rows = 0, row_begin = 0, nonzeros = 0;
  const std::int64_t* row_start = nullptr;
  const std::int32_t* columns = nullptr;
  const double* vertices = nullptr;         // 3 per vertex
  const std::int32_t* triangles = nullptr;  // 3 per element
  const double* centroids = nullptr;        // 3 per element
  const double* normals = nullptr;          // 3 per element
  const double* points = nullptr;           // 3 per quadrature point
  const double* point_weights = nullptr;    // 1 per quadrature point
  int points_per_element = 0;
  const double *nodes = nullptr, *weights = nullptr;  // angular Gauss-Legendre rule
  int angular = 0;
  double k = 0.0, coincident = 0.0;
  Z *single = nullptr, *dbl = nullptr, *self_single = nullptr, *self_double = nullptr;
};

// One thread per nonzero: its row by binary search in row_start, then accurate minus regular.
__global__ void correction_entries(EntryArgs a) {
  const std::int64_t at = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (at >= a.nonzeros) return;
  std::int64_t lo = 0, hi = a.rows;  // the row r with row_start[r] <= at < row_start[r + 1]
  while (hi - lo > 1) {
    const std::int64_t mid = (lo + hi) / 2;
    if (a.row_start[mid] <= at)
      lo = mid;
    else
      hi = mid;
  }
  const std::int64_t r = lo, i = a.row_begin + r;
  const std::int64_t j = a.columns[at];
  const V3 x = load(a.centroids, i);
  const V3 va = load(a.vertices, a.triangles[3 * j]);
  const V3 vb = load(a.vertices, a.triangles[3 * j + 1]);
  const V3 vc = load(a.vertices, a.triangles[3 * j + 2]);
  Z exact_single, exact_double;
  panel_integrals(a.k, va, vb, vc, x, a.nodes, a.weights, a.angular, exact_single, exact_double);

  // regular_integrals of near_field.cpp.
  const V3 normal = load(a.normals, j);
  Z regular_single{0.0, 0.0}, regular_double{0.0, 0.0};
  const std::int64_t m = a.points_per_element;
  for (std::int64_t q = j * m; q < (j + 1) * m; ++q) {
    const V3 y = load(a.points, q);
    if (norm(y - x) <= a.coincident) continue;
    const double w = a.point_weights[q];
    regular_single = regular_single + w * green(a.k, norm(y - x));
    regular_double = regular_double + w * green_normal_derivative(a.k, x, y, normal);
  }
  a.single[at] = exact_single - regular_single;
  a.dbl[at] = exact_double - regular_double;
  if (j == i) {
    a.self_single[r] = exact_single;
    a.self_double[r] = exact_double;
  }
}

// Lanes per row of the SpMV: rows hold about 15 to 25 nonzeros (near factor 2.5).
constexpr int kLanesPerRow = 8;

// y[r] += sum over the row of D dd[j] + S sd[j]: kLanesPerRow lanes a row, summed by shuffles.
template <bool kDouble, bool kSingle>
__global__ void correction_spmv(std::int64_t rows, const std::int64_t* __restrict__ row_start,
                                const std::int32_t* __restrict__ columns,
                                const double2* __restrict__ single, const double2* __restrict__ dbl,
                                const double2* __restrict__ dd, const double2* __restrict__ sd,
                                double2* __restrict__ y) {
  const std::int64_t thread = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const std::int64_t r = thread / kLanesPerRow;
  const int lane = int(thread % kLanesPerRow);
  double re = 0.0, im = 0.0;
  if (r < rows) {
    for (std::int64_t at = row_start[r] + lane; at < row_start[r + 1]; at += kLanesPerRow) {
      const std::int32_t j = columns[at];
      if constexpr (kDouble) {
        const double2 m = dbl[at], v = dd[j];
        re += m.x * v.x - m.y * v.y;
        im += m.x * v.y + m.y * v.x;
      }
      if constexpr (kSingle) {
        const double2 m = single[at], v = sd[j];
        re += m.x * v.x - m.y * v.y;
        im += m.x * v.y + m.y * v.x;
      }
    }
  }
  for (int offset = kLanesPerRow / 2; offset > 0; offset /= 2) {
    re += __shfl_down_sync(0xffffffffu, re, offset, kLanesPerRow);
    im += __shfl_down_sync(0xffffffffu, im, offset, kLanesPerRow);
  }
  if (r < rows && lane == 0) {
    double2 out = y[r];
    out.x += re;
    out.y += im;
    y[r] = out;
  }
}

__global__ void point_strengths_kernel(std::int64_t points, int per_element,
                                       const double* __restrict__ weights,
                                       const double2* __restrict__ density,
                                       double2* __restrict__ strengths) {
  const std::int64_t q = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (q >= points) return;
  const double w = weights[q];
  const double2 d = density[q / per_element];
  strengths[q] = make_double2(w * d.x, w * d.y);
}

// ReconstructedPointStrengths on the device: one thread per point, the sum over its element's
// stencil in the same order as the CPU's.
__global__ void reconstructed_strengths_kernel(std::int64_t points, int per_element,
                                               const std::int64_t* __restrict__ starts,
                                               const std::int32_t* __restrict__ columns,
                                               const double* __restrict__ values,
                                               const double2* __restrict__ density,
                                               double2* __restrict__ strengths) {
  const std::int64_t q = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (q >= points) return;
  const std::int64_t e = q / per_element, l = q % per_element;
  const std::int64_t begin = starts[e], length = starts[e + 1] - begin;
  const double* row = values + begin * per_element + l * length;
  double re = 0.0, im = 0.0;
  for (std::int64_t s = 0; s < length; ++s) {
    const double2 d = density[columns[begin + s]];
    re += row[s] * d.x;
    im += row[s] * d.y;
  }
  strengths[q] = make_double2(re, im);
}

unsigned blocks(std::int64_t threads, int per_block) {
  return unsigned((threads + per_block - 1) / per_block);
}

std::vector<double> flatten(const std::vector<Vec3>& v) {
  std::vector<double> out(3 * v.size());
  for (std::size_t i = 0; i < v.size(); ++i) {
    out[3 * i] = v[i].x;
    out[3 * i + 1] = v[i].y;
    out[3 * i + 2] = v[i].z;
  }
  return out;
}

}  // namespace

struct GpuNearFieldCorrection::Impl {
  std::int64_t rows = 0;
  Buffer<std::int64_t> row_start;
  Buffer<std::int32_t> columns;
  Buffer<Z> single, dbl, self_single, self_double;
};

GpuNearFieldCorrection::GpuNearFieldCorrection(const Discretization& disc, double k, RowRange rows,
                                               std::span<const std::int64_t> row_start,
                                               std::span<const std::int32_t> columns,
                                               const GaussLegendre& angular)
    : impl_(std::make_unique<Impl>()) {
  if (row_start.size() != rows.size() + 1 || std::size_t(row_start.back()) != columns.size())
    throw Error("GPU near-field correction: CSR pattern of the wrong size");
  const Mesh& mesh = disc.mesh();
  Impl& d = *impl_;
  d.rows = std::int64_t(rows.size());
  d.row_start = Buffer<std::int64_t>(row_start.data(), row_start.size(), "near-field rows");
  d.columns = Buffer<std::int32_t>(columns.data(), columns.size(), "near-field columns");
  d.single = Buffer<Z>(columns.size(), "near-field single-layer entries");
  d.dbl = Buffer<Z>(columns.size(), "near-field double-layer entries");
  d.self_single = Buffer<Z>(rows.size(), "self terms");
  d.self_double = Buffer<Z>(rows.size(), "self terms");

  // The geometry, uploaded for this computation only.
  std::vector<std::int32_t> triangles(3 * mesh.size());
  for (std::size_t e = 0; e < mesh.size(); ++e)
    for (int c = 0; c < 3; ++c) triangles[3 * e + c] = std::int32_t(mesh.triangles()[e][c]);
  const auto vertices = flatten(mesh.vertices()), centroids = flatten(mesh.centroids()),
             normals = flatten(mesh.normals()), points = flatten(disc.quadrature_points());
  const Buffer<double> d_vertices(vertices.data(), vertices.size(), "vertices");
  const Buffer<std::int32_t> d_triangles(triangles.data(), triangles.size(), "triangles");
  const Buffer<double> d_centroids(centroids.data(), centroids.size(), "centroids");
  const Buffer<double> d_normals(normals.data(), normals.size(), "normals");
  const Buffer<double> d_points(points.data(), points.size(), "quadrature points");
  const Buffer<double> d_point_weights(disc.quadrature_weights().data(),
                                       disc.quadrature_weights().size(), "quadrature weights");
  const Buffer<double> d_nodes(angular.nodes.data(), angular.size(), "angular rule");
  const Buffer<double> d_weights(angular.weights.data(), angular.size(), "angular rule");

  EntryArgs a;
  a.rows = d.rows;
  a.row_begin = std::int64_t(rows.begin);
  a.nonzeros = std::int64_t(columns.size());
  a.row_start = d.row_start.data();
  a.columns = d.columns.data();
  a.vertices = d_vertices.data();
  a.triangles = d_triangles.data();
  a.centroids = d_centroids.data();
  a.normals = d_normals.data();
  a.points = d_points.data();
  a.point_weights = d_point_weights.data();
  a.points_per_element = int(disc.points_per_element());
  a.nodes = d_nodes.data();
  a.weights = d_weights.data();
  a.angular = int(angular.size());
  a.k = k;
  a.coincident = disc.coincidence_radius();
  a.single = d.single.data();
  a.dbl = d.dbl.data();
  a.self_single = d.self_single.data();
  a.self_double = d.self_double.data();
  // Every row has its self element, so every self term is written.
  if (a.nonzeros > 0) {
    constexpr int threads = 128;
    correction_entries<<<blocks(a.nonzeros, threads), threads>>>(a);
    check(cudaGetLastError(), "the near-field entry kernel");
  }
  // The geometry buffers are freed on return: wait for the kernel first.
  check(cudaDeviceSynchronize(), "the near-field entry kernel");
}

GpuNearFieldCorrection::GpuNearFieldCorrection(
    RowRange rows, std::span<const std::int64_t> row_start, std::span<const std::int32_t> columns,
    std::span<const cplx> single, std::span<const cplx> dbl, std::span<const cplx> self_single,
    std::span<const cplx> self_double)
    : impl_(std::make_unique<Impl>()) {
  if (row_start.size() != rows.size() + 1 || std::size_t(row_start.back()) != columns.size() ||
      single.size() != columns.size() || dbl.size() != columns.size() ||
      self_single.size() != rows.size() || self_double.size() != rows.size())
    throw Error("GPU near-field correction: CSR pattern or entries of the wrong size");
  Impl& d = *impl_;
  d.rows = std::int64_t(rows.size());
  const auto z = [](std::span<const cplx> v) { return reinterpret_cast<const Z*>(v.data()); };
  d.row_start = Buffer<std::int64_t>(row_start.data(), row_start.size(), "near-field rows");
  d.columns = Buffer<std::int32_t>(columns.data(), columns.size(), "near-field columns");
  d.single = Buffer<Z>(z(single), single.size(), "near-field single-layer entries");
  d.dbl = Buffer<Z>(z(dbl), dbl.size(), "near-field double-layer entries");
  d.self_single = Buffer<Z>(z(self_single), self_single.size(), "self terms");
  d.self_double = Buffer<Z>(z(self_double), self_double.size(), "self terms");
}

GpuNearFieldCorrection::~GpuNearFieldCorrection() = default;

void GpuNearFieldCorrection::download_entries(std::span<cplx> single, std::span<cplx> dbl) const {
  if (single.size() != impl_->single.size() || dbl.size() != impl_->dbl.size())
    throw Error("GPU near-field correction: download of the wrong size");
  impl_->single.download(reinterpret_cast<Z*>(single.data()), "near-field entry download");
  impl_->dbl.download(reinterpret_cast<Z*>(dbl.data()), "near-field entry download");
}

void GpuNearFieldCorrection::download_self_terms(std::span<cplx> single,
                                                 std::span<cplx> dbl) const {
  if (single.size() != impl_->self_single.size() || dbl.size() != impl_->self_double.size())
    throw Error("GPU near-field correction: download of the wrong size");
  impl_->self_single.download(reinterpret_cast<Z*>(single.data()), "self-term download");
  impl_->self_double.download(reinterpret_cast<Z*>(dbl.data()), "self-term download");
}

void GpuNearFieldCorrection::apply_device(const cplx* device_double_density,
                                          const cplx* device_single_density, cplx* device_y) const {
  const Impl& d = *impl_;
  if (d.rows == 0 || (!device_double_density && !device_single_density)) return;
  constexpr int threads = 256;
  const unsigned grid = blocks(d.rows * kLanesPerRow, threads);
  const auto* dd = reinterpret_cast<const double2*>(device_double_density);
  const auto* sd = reinterpret_cast<const double2*>(device_single_density);
  auto* y = reinterpret_cast<double2*>(device_y);
  const auto* s = reinterpret_cast<const double2*>(d.single.data());
  const auto* db = reinterpret_cast<const double2*>(d.dbl.data());
  if (dd && sd)
    correction_spmv<true, true>
        <<<grid, threads>>>(d.rows, d.row_start.data(), d.columns.data(), s, db, dd, sd, y);
  else if (dd)
    correction_spmv<true, false>
        <<<grid, threads>>>(d.rows, d.row_start.data(), d.columns.data(), s, db, dd, sd, y);
  else
    correction_spmv<false, true>
        <<<grid, threads>>>(d.rows, d.row_start.data(), d.columns.data(), s, db, dd, sd, y);
  check(cudaGetLastError(), "the near-field SpMV kernel");
}

std::size_t GpuNearFieldCorrection::device_bytes() const {
  const Impl& d = *impl_;
  return d.row_start.bytes() + d.columns.bytes() + d.single.bytes() + d.dbl.bytes() +
         d.self_single.bytes() + d.self_double.bytes();
}

struct GpuPointStrengths::Impl {
  Buffer<double> weights;
  int per_element = 1;
  // The reconstructed matrix (empty for the constant read).
  std::int64_t points = 0;
  Buffer<std::int64_t> starts;
  Buffer<std::int32_t> columns;
  Buffer<double> values;
};

GpuPointStrengths::GpuPointStrengths(const Discretization& disc) : impl_(std::make_unique<Impl>()) {
  impl_->weights = Buffer<double>(disc.quadrature_weights().data(),
                                  disc.quadrature_weights().size(), "quadrature weights");
  impl_->per_element = int(disc.points_per_element());
}

GpuPointStrengths::GpuPointStrengths(const ReconstructedPointStrengths& matrix)
    : impl_(std::make_unique<Impl>()) {
  Impl& d = *impl_;
  d.per_element = int(matrix.points_per_element());
  d.points = std::int64_t(matrix.points());
  d.starts = Buffer<std::int64_t>(matrix.stencil_starts().data(), matrix.stencil_starts().size(),
                                  "reconstruction stencils");
  d.columns = Buffer<std::int32_t>(matrix.stencil_columns().data(), matrix.stencil_columns().size(),
                                   "reconstruction columns");
  d.values = Buffer<double>(matrix.values().data(), matrix.values().size(),
                            "reconstructed point strengths");
}

GpuPointStrengths::~GpuPointStrengths() = default;

std::size_t GpuPointStrengths::points() const {
  return impl_->points > 0 ? std::size_t(impl_->points) : impl_->weights.size();
}

void GpuPointStrengths::apply(const cplx* device_density, cplx* device_strengths) const {
  constexpr int threads = 256;
  if (impl_->points > 0) {
    const Impl& d = *impl_;
    reconstructed_strengths_kernel<<<blocks(d.points, threads), threads>>>(
        d.points, d.per_element, d.starts.data(), d.columns.data(), d.values.data(),
        reinterpret_cast<const double2*>(device_density),
        reinterpret_cast<double2*>(device_strengths));
    check(cudaGetLastError(), "the reconstructed point-strengths kernel");
    return;
  }
  const std::int64_t n = std::int64_t(impl_->weights.size());
  if (n == 0) return;
  point_strengths_kernel<<<blocks(n, threads), threads>>>(
      n, impl_->per_element, impl_->weights.data(),
      reinterpret_cast<const double2*>(device_density),
      reinterpret_cast<double2*>(device_strengths));
  check(cudaGetLastError(), "the point-strengths kernel");
}

void copy_to_device(std::span<const cplx> host, cplx* device) {
  if (!host.empty())
    check(cudaMemcpy(device, host.data(), host.size_bytes(), cudaMemcpyHostToDevice),
          "copy to the device");
}

void copy_to_host(const cplx* device, std::span<cplx> host) {
  if (!host.empty())
    check(cudaMemcpy(host.data(), device, host.size_bytes(), cudaMemcpyDeviceToHost),
          "copy to the host");
}

}  // namespace fmbem
