#pragma once
// The near field's integrals on the device, shared by the .cu files of src/bem/cuda: Vec3 and
// std::complex<double> as the CPU code uses them, the kernels of kernel.hpp, panel_integrals
// (panel_integrals.cpp), hypersingular_integrals (hypersingular_integrals.cpp) and the regular
// rule's sums (regular_integrals, regular_burton_miller_integrals). Each is the CPU function
// written again operation for operation in the same order; the .cu files are compiled with
// -fmad=false (no contraction into fused multiply-adds, which the CPU build does not do either)
// and IEEE division and square root (nvcc's defaults), so the only differences left are the last
// bits of the library functions (sin, cos, cosh, sinh, asinh, hypot, log, atan, atan2: CUDA's
// double versions are within 1 to 3 ulp, like glibc's). Not a public header.
#include <cuda_runtime.h>

#include <cstdint>
#include <numbers>
#include <vector>

#include "../../fmm/cuda/cuda_util.cuh"
#include "fmbem/bem/discretization.hpp"
#include "fmbem/core/coordinate_rounding.hpp"
#include "fmbem/quadrature/gauss_legendre.hpp"

namespace fmbem::bem_cuda {

using fmm::cuda::check;
// A device array that frees itself (the FMM's).
template <class T>
using Buffer = fmm::cuda::DeviceVector<T>;

// Vec3 and std::complex<double> as the CPU code uses them (-fcx-limited-range products).
struct V3 {
  double x, y, z;
};
__device__ inline V3 operator+(V3 a, V3 b) { return {a.x + b.x, a.y + b.y, a.z + b.z}; }
__device__ inline V3 operator-(V3 a, V3 b) { return {a.x - b.x, a.y - b.y, a.z - b.z}; }
__device__ inline V3 operator*(V3 a, double s) { return {a.x * s, a.y * s, a.z * s}; }
__device__ inline double dot(V3 a, V3 b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
__device__ inline V3 cross(V3 a, V3 b) {
  return {a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x};
}
__device__ inline double norm(V3 a) { return sqrt(dot(a, a)); }
__device__ inline V3 normalized(V3 a) { return a * (1.0 / norm(a)); }
__device__ inline double largest_coordinate(V3 a, V3 b) {
  return fmbem::largest_coordinate(a.x, a.y, a.z, b.x, b.y, b.z);
}
__device__ inline V3 load(const double* p, std::int64_t i) {
  return {p[3 * i], p[3 * i + 1], p[3 * i + 2]};
}

struct Z {
  double re, im;
  Z() = default;
  // A real converts as std::complex's does (imaginary part +0).
  __host__ __device__ constexpr Z(double real, double imag = 0.0) : re(real), im(imag) {}
};
__device__ inline Z operator+(Z a, Z b) { return {a.re + b.re, a.im + b.im}; }
__device__ inline Z operator-(Z a, Z b) { return {a.re - b.re, a.im - b.im}; }
__device__ inline Z operator-(Z a) { return {-a.re, -a.im}; }
__device__ inline Z operator*(Z a, Z b) {
  return {a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re};
}
__device__ inline Z operator*(Z a, double s) { return {a.re * s, a.im * s}; }
__device__ inline Z operator*(double s, Z a) { return {s * a.re, s * a.im}; }
__device__ inline Z operator/(Z a, double s) { return {a.re / s, a.im / s}; }
// complex + real and complex - real touch the real part only, as std::complex's do.
__device__ inline Z operator+(Z a, double s) { return {a.re + s, a.im}; }
__device__ inline Z operator-(Z a, double s) { return {a.re - s, a.im}; }
__device__ inline Z& operator+=(Z& a, Z b) { return a = a + b; }
__device__ inline Z& operator-=(Z& a, Z b) { return a = a - b; }

constexpr double kInv4Pi = 0.25 / std::numbers::pi;

// green, green_normal_derivative, green_target_normal_derivative and
// green_double_normal_derivative of kernel.hpp.
__device__ inline Z green(double k, double r) { return Z{cos(k * r), sin(k * r)} * (kInv4Pi / r); }
__device__ inline Z green_normal_derivative(double k, V3 x, V3 y, V3 normal_y) {
  const V3 d = y - x;
  const double r = norm(d);
  const double kr = k * r;
  const Z phase{cos(kr), sin(kr)};
  return phase * Z{-1.0, kr} * (kInv4Pi * dot(d, normal_y) / (r * r * r));
}
__device__ inline Z green_target_normal_derivative(double k, V3 x, V3 y, V3 normal_x) {
  const V3 d = x - y;
  const double r = norm(d);
  const double kr = k * r;
  const Z phase{cos(kr), sin(kr)};
  return phase * Z{-1.0, kr} * (kInv4Pi * dot(d, normal_x) / (r * r * r));
}
__device__ inline Z green_double_normal_derivative(double k, V3 x, V3 y, V3 normal_x, V3 normal_y) {
  const V3 d = y - x;
  const double r2 = dot(d, d);
  const double r = sqrt(r2);
  const double kr = k * r;
  const Z phase{cos(kr), sin(kr)};
  const Z f = Z{-1.0, kr} / (r2 * r);
  const Z f_prime = Z{3.0 - kr * kr, -3.0 * kr} / (r2 * r2 * r);
  return phase * kInv4Pi *
         (-f * dot(normal_x, normal_y) - f_prime * (dot(d, normal_x) * dot(d, normal_y)));
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
  const double *nodes = nullptr, *weights = nullptr;  // angular Gauss-Legendre rule
  int angular = 0;
  double coincident = 0.0;

  __device__ V3 corner(std::int64_t e, int c) const { return load(vertices, triangles[3 * e + c]); }
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

// ---- panel_integrals (panel_integrals.cpp) ----

struct Sector {
  double sign, dist, t1, t2;
};

__device__ inline Sector edge_sector(V3 p, V3 v1, V3 v2, V3 n) {
  const V3 e = v2 - v1;
  const double length = norm(e);
  const V3 unit = e * (1.0 / length);
  Sector s{0.0, 0.0, 0.0, 0.0};
  s.t1 = dot(v1 - p, unit);
  s.t2 = dot(v2 - p, unit);
  s.dist = norm((v1 - p) - unit * s.t1);
  if (s.dist <= 1e-14 * length + coordinate_rounding(largest_coordinate(v1, p))) return s;
  s.sign = dot(cross(v1 - p, v2 - p), n) > 0.0 ? 1.0 : -1.0;
  return s;
}

__device__ inline Z expm1_ratio(double z) {
  if (fabs(z) < 1e-4) return {1.0 - z * z / 6.0, z / 2.0 - z * z * z / 24.0};
  const double half_sin = sin(0.5 * z);
  return {sin(z) / z, 2.0 * half_sin * half_sin / z};
}

// {single, double} of panel_integrals.
__device__ inline void panel_integrals(double k, V3 a, V3 b, V3 c, V3 x, const double* nodes,
                                       const double* weights, int angular, Z& single_out,
                                       Z& double_out) {
  const V3 n = normalized(cross(b - a, c - a));
  const double longest = fmax(fmax(norm(b - a), norm(c - b)), norm(a - c));
  double h = dot(x - a, n);
  const bool in_plane = fabs(h) <= 1e-12 * longest + coordinate_rounding(largest_coordinate(a, x));
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

// ---- hypersingular_integrals (hypersingular_integrals.cpp) ----

struct EdgeFrame {
  V3 m;
  double d, t1, t2, delta;
};

__device__ inline EdgeFrame edge_frame(V3 v1, V3 v2, V3 n, V3 p, double h) {
  const V3 s = normalized(v2 - v1);
  EdgeFrame f;
  f.m = cross(s, n);
  f.d = dot(v1 - p, f.m);
  f.t1 = dot(v1 - p, s);
  f.t2 = dot(v2 - p, s);
  f.delta = hypot(f.d, h);
  if (f.delta <= 1e-15 * (f.t2 - f.t1) + coordinate_rounding(largest_coordinate(v1, p)))
    f.delta = 0.0;
  return f;
}

__device__ inline double line_inverse_r(const EdgeFrame& f) {
  const double r1 = hypot(f.t1, f.delta), r2 = hypot(f.t2, f.delta);
  if (f.t1 >= 0.0) return log((f.t2 + r2) / (f.t1 + r1));
  if (f.t2 <= 0.0) return log((r1 - f.t1) / (r2 - f.t2));
  return asinh(f.t2 / f.delta) - asinh(f.t1 / f.delta);
}

__device__ inline double line_inverse_r3(const EdgeFrame& f) {
  const double r1 = hypot(f.t1, f.delta), r2 = hypot(f.t2, f.delta);
  if (f.t1 >= 0.0 || f.t2 <= 0.0)
    return (f.t2 - f.t1) * (f.t2 + f.t1) / (r1 * r2 * (f.t2 * r1 + f.t1 * r2));
  return (f.t2 / r2 - f.t1 / r1) / (f.delta * f.delta);
}

__device__ inline Z expm1_i(double z) {
  const double half_sin = sin(0.5 * z);
  return {-2.0 * half_sin * half_sin, sin(z)};
}

__device__ inline Z remainder_ratio(double z) {
  if (fabs(z) < 0.5) {
    Z sum{0.0, 0.0}, power{1.0, 0.0};
    double factorial = 2.0;
    for (int m = 2; m < 22; ++m) {
      sum += power * (double(m - 1) * (-1.0) / factorial);
      power = power * Z{0.0, z};
      factorial *= double(m + 1);
    }
    return sum;
  }
  const Z phase{cos(z), sin(z)};
  return (phase * Z{-1.0, z} + 1.0) / (z * z);
}

struct EdgeRemainders {
  Z single, double_;
};

__device__ inline double edge_radius(const EdgeFrame& f, double u) {
  return f.delta > 0.0 ? f.delta * cosh(u) : exp(u);
}

__device__ inline EdgeRemainders edge_remainders(double k, const EdgeFrame& f, const double* nodes,
                                                 const double* weights, int angular) {
  double u1, u2;
  if (f.delta > 0.0) {
    u1 = asinh(f.t1 / f.delta);
    u2 = asinh(f.t2 / f.delta);
  } else if (f.t1 > 0.0) {
    u1 = log(f.t1);
    u2 = log(f.t2);
  } else {
    u1 = log(-f.t2);
    u2 = log(-f.t1);
  }
  const double r_max = fmax(edge_radius(f, u1), edge_radius(f, u2));
  const double span = u2 - u1;
  const int pieces = max(1, int(ceil(fmax(span, span * k * r_max / 2.0))));
  const double width = span / pieces;
  EdgeRemainders sum{{0.0, 0.0}, {0.0, 0.0}};
  for (int piece = 0; piece < pieces; ++piece) {
    const double mid = u1 + (piece + 0.5) * width, half = 0.5 * width;
    for (int q = 0; q < angular; ++q) {
      const double r = edge_radius(f, mid + half * nodes[q]);
      const double w = half * weights[q];
      sum.single += w * expm1_i(k * r);
      sum.double_ += w * (k * k) * remainder_ratio(k * r);
    }
  }
  return sum;
}

__device__ inline double laplace_single_times_4pi(const EdgeFrame (&edges)[3], double h) {
  double sum = 0.0;
#pragma unroll
  for (int e = 0; e < 3; ++e) {
    const EdgeFrame& f = edges[e];
    if (f.d != 0.0) sum += f.d * line_inverse_r(f);
    if (h != 0.0 && f.d != 0.0) {
      const double a = fabs(h), d2 = f.delta * f.delta;
      const double r1 = hypot(f.t1, f.delta), r2 = hypot(f.t2, f.delta);
      sum -= a * (atan(f.d * f.t2 / (d2 + a * r2)) - atan(f.d * f.t1 / (d2 + a * r1)));
    }
  }
  return sum;
}

__device__ inline double laplace_double(V3 a, V3 b, V3 c, V3 x) {
  const V3 ra = a - x, rb = b - x, rc = c - x;
  const double la = norm(ra), lb = norm(rb), lc = norm(rc);
  const double numerator = dot(ra, cross(rb, rc));
  const double denominator = la * lb * lc + dot(ra, rb) * lc + dot(ra, rc) * lb + dot(rb, rc) * la;
  return -2.0 * atan2(numerator, denominator) * kInv4Pi;
}

// HypersingularIntegrals: S, D, D' and N of a flat triangle.
struct Hypersingular {
  Z single_layer, double_layer, adjoint_double_layer, hypersingular;
};

// hypersingular_integrals (its gradients(), then n_x . grad).
__device__ inline Hypersingular hypersingular_integrals(double k, V3 a, V3 b, V3 c, V3 x, V3 n_x,
                                                        const double* nodes, const double* weights,
                                                        int angular) {
  const V3 n = normalized(cross(b - a, c - a));
  const double longest = fmax(fmax(norm(b - a), norm(c - b)), norm(a - c));
  double h = dot(x - a, n);
  const bool in_plane = fabs(h) <= 1e-12 * longest + coordinate_rounding(largest_coordinate(a, x));
  if (in_plane) h = 0.0;
  const V3 p = x - n * h;
  const V3 v[3] = {a, b, c};
  EdgeFrame edges[3];
#pragma unroll
  for (int e = 0; e < 3; ++e) edges[e] = edge_frame(v[e], v[(e + 1) % 3], n, p, h);

  Z single{kInv4Pi * laplace_single_times_4pi(edges, h), 0.0};
  Z dbl{in_plane ? 0.0 : laplace_double(a, b, c, x), 0.0};
  if (k != 0.0) {
    Z helmholtz_single, helmholtz_double, laplace_single, laplace_double_;
    panel_integrals(k, a, b, c, x, nodes, weights, angular, helmholtz_single, helmholtz_double);
    panel_integrals(0.0, a, b, c, x, nodes, weights, angular, laplace_single, laplace_double_);
    single += helmholtz_single - laplace_single;
    dbl += helmholtz_double - laplace_double_;
  }

  V3 grad_s_re = n * (-dbl.re), grad_s_im = n * (-dbl.im);
  V3 grad_d_re{0.0, 0.0, 0.0}, grad_d_im{0.0, 0.0, 0.0};
  Z normal_d = k * k * single;
#pragma unroll
  for (int e = 0; e < 3; ++e) {
    const EdgeFrame& f = edges[e];
    Z e0{line_inverse_r(f), 0.0};
    Z e1{-line_inverse_r3(f), 0.0};
    if (k != 0.0) {
      const EdgeRemainders rest = edge_remainders(k, f, nodes, weights, angular);
      e0 += rest.single;
      e1 += rest.double_;
    }
    e0 = e0 * kInv4Pi;
    e1 = e1 * kInv4Pi;
    grad_s_re = grad_s_re - f.m * e0.re;
    grad_s_im = grad_s_im - f.m * e0.im;
    normal_d += f.d * e1;
    grad_d_re = grad_d_re + f.m * (h * e1.re);
    grad_d_im = grad_d_im + f.m * (h * e1.im);
  }
  grad_d_re = grad_d_re + n * normal_d.re;
  grad_d_im = grad_d_im + n * normal_d.im;
  return {single, dbl, Z{dot(n_x, grad_s_re), dot(n_x, grad_s_im)},
          Z{dot(n_x, grad_d_re), dot(n_x, grad_d_im)}};
}

// ---- the regular rule (regular_integrals, regular_burton_miller_integrals) ----

struct RegularSums {
  Z single_layer, double_layer, adjoint_double_layer, hypersingular;
};

// regular_integrals of element j at x, with regular_burton_miller_integrals' D' and N when
// kBurtonMiller (one loop over the points: each sum is added in the CPU's order).
template <bool kBurtonMiller>
__device__ inline RegularSums regular_sums(const Geometry& g, double k, std::int64_t j, V3 x,
                                           V3 n_x) {
  const V3 normal = load(g.normals, j);
  RegularSums sum{{0.0, 0.0}, {0.0, 0.0}, {0.0, 0.0}, {0.0, 0.0}};
  const std::int64_t m = g.points_per_element;
  for (std::int64_t q = j * m; q < (j + 1) * m; ++q) {
    const V3 y = load(g.points, q);
    if (norm(y - x) <= g.coincident) continue;
    const double w = g.point_weights[q];
    sum.single_layer += w * green(k, norm(y - x));
    sum.double_layer += w * green_normal_derivative(k, x, y, normal);
    if constexpr (kBurtonMiller) {
      sum.adjoint_double_layer += w * green_target_normal_derivative(k, x, y, n_x);
      sum.hypersingular += w * green_double_normal_derivative(k, x, y, n_x, normal);
    }
  }
  return sum;
}

// The row r of a CSR pattern (rows + 1 offsets row_start) with row_start[r] <= at <
// row_start[r + 1]: the kernels run one thread per nonzero.
__device__ inline std::int64_t row_of(const std::int64_t* row_start, std::int64_t rows,
                                      std::int64_t at) {
  std::int64_t lo = 0, hi = rows;
  while (hi - lo > 1) {
    const std::int64_t mid = (lo + hi) / 2;
    if (row_start[mid] <= at)
      lo = mid;
    else
      hi = mid;
  }
  return lo;
}

}  // namespace fmbem::bem_cuda
