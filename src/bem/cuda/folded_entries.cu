// The near-field entries with the quadratic read of the double density on the GPU
// (NearFieldCorrection's fold_reconstruction): monomial_moments, refined_rule_integrals and
// regular_monomial_moments (moment_integrals.cpp) written again for the device, operation for
// operation in the same order as the CPU's (device_integrals.cuh says why they then agree to
// rounding), and the fold of each row's pairs into its sparse row.
//
// Rows go in chunks of at most chunk_pairs corrected pairs, so that the per-pair scratch stays
// bounded (192 bytes a pair). Per chunk: split_pairs lists the close and the refined-only pairs
// (one thread a row), pair_entries computes each pair's constant and monomial entries (one
// thread a pair; the close pairs, semi-analytic and about ten times the work, in their own
// launch so that a warp's threads take the same branch), and fold_rows adds them into the row's
// entries in the CPU's order (one thread a row: no atomics, and every sum is formed as the CPU
// forms it).
#include <algorithm>
#include <array>
#include <climits>
#include <memory>
#include <vector>

#include "device_integrals.cuh"
#include "fmbem/bem/density_reconstruction.hpp"
#include "fmbem/core/error.hpp"
#include "fmbem/quadrature/triangle_rule.hpp"
#include "folded_entries.cuh"

namespace fmbem::bem_cuda {
namespace {

constexpr int kTerms = DensityReconstruction::kTerms;
static_assert(kTerms == 5);

// ---- monomial_moments (moment_integrals.cpp) ----

constexpr double kSectorPiece = 2.0;
constexpr double kRadialPiece = 1.0;
constexpr int kSeriesTerms = 22;

// SeriesCoefficients of moment_integrals.cpp, formed on the host by the same code and copied.
__device__ Z series_chi[kSeriesTerms], series_omega[kSeriesTerms];

struct RemainderFactors {
  Z chi, omega;
};

__device__ inline RemainderFactors remainder_factors(double z) {
  if (z < 1.0) {
    const int terms = z < 0.1 ? 9 : z < 0.4 ? 13 : kSeriesTerms;
    Z chi = series_chi[terms - 1], omega = series_omega[terms - 1];
    for (int j = terms - 2; j >= 0; --j) {
      chi = chi * z + series_chi[j];
      omega = omega * z + series_omega[j];
    }
    return {chi, omega};
  }
  const Z phase{cos(z), sin(z)};
  const Z rr = (phase * Z{-1.0, z} + 1.0) / (z * z);
  const Z rr_prime = -phase / z - 2.0 * rr / z;
  const Z chi = (rr + 0.5) / z;
  const Z chi_prime = rr_prime / z - (rr + 0.5) / (z * z);
  return {chi, chi_prime / z - 1.0 / (8.0 * z)};
}

// The radial integrals of one direction (times 4 pi), for beta1 (index 0) and beta2 (index 1).
struct Radial {
  Z dbl[2], hyper[2];
};

__device__ inline Radial radial_integrals(double k, double rho, double h, double n_dot,
                                          double e_dot, const double* radial_nodes,
                                          const double* radial_weights, int radial_points) {
  const double a = fabs(h), sgn = h > 0.0 ? 1.0 : h < 0.0 ? -1.0 : 0.0;
  const double big_r = hypot(rho, h), l = log(rho + big_r);
  const double ratio = rho / big_r, h2 = h * h;
  const double p3_2 = l - ratio;
  const double p3_3 = big_r + h2 / big_r - 2.0 * a;
  const double t5_2 = ratio * ratio * ratio;
  const double t5_3 = 2.0 * sgn - 3.0 * h / big_r + h * h2 / (big_r * big_r * big_r);
  const double t5_4 =
      3.0 * h * (l - (4.0 * rho * rho * rho + 3.0 * h2 * rho) / (3.0 * big_r * big_r * big_r));
  Radial out;
  out.dbl[0] = h * p3_2;
  out.dbl[1] = h * p3_3;
  out.hyper[0] = -n_dot * (-p3_2 + t5_2) + e_dot * t5_3;
  out.hyper[1] = -n_dot * (-p3_3 + h * t5_3) + e_dot * t5_4;
  if (k == 0.0) return out;

  const double k2 = k * k;
  // Q_n = integral rho^n / r, U_n = integral rho^n r = Q_(n+2) + h^2 Q_n, P3_4 = integral
  // rho^4 / r^3 (recurrence Q_n = rho^(n-1) R / n - (n-1) h^2 Q_(n-2) / n; L for asinh).
  const double rho2 = rho * rho;
  const double q2 = 0.5 * (rho * big_r - h2 * l);
  const double q3 = rho2 * big_r / 3.0 - (2.0 / 3.0) * h2 * (big_r - a);
  const double q4 = rho2 * rho * big_r / 4.0 - 0.75 * h2 * q2;
  const double q5 = rho2 * rho2 * big_r / 5.0 - 0.8 * h2 * q3;
  const double q6 = rho2 * rho2 * rho * big_r / 6.0 - (5.0 / 6.0) * h2 * q4;
  const double q7 = rho2 * rho2 * rho2 * big_r / 7.0 - (6.0 / 7.0) * h2 * q5;
  const double q8 = rho2 * rho2 * rho2 * rho * big_r / 8.0 - (7.0 / 8.0) * h2 * q6;
  const double u2 = q4 + h2 * q2, u3 = q5 + h2 * q3, u4 = q6 + h2 * q4;
  const double u5 = q7 + h2 * q5, u6 = q8 + h2 * q6;
  // W_n = integral rho^n r^3 = U_(n+2) + h^2 U_n.
  const double w2 = u4 + h2 * u2, w3 = u5 + h2 * u3, w4 = u6 + h2 * u4;
  const double p3_4 = 0.5 * rho * big_r - 1.5 * h2 * l + h2 * ratio;
  // The closed-form parts: -1 / (2r) of f - f0, 1 / (2 r^3) + k^2 / (8 r) of (f - f0)' / r, and
  // the terms odd in r of k chi (k^2 r / 8 - k^4 r^3 / 144) and of k^3 omega
  // (-k^4 r / 48 + k^6 r^3 / 1152): what is left is smooth in rho up to (k |h|)^5.
  const double c_chi = k2 / 8.0, c_omega = -k2 * k2 / 48.0;
  const double c_chi3 = -k2 * k2 / 144.0, c_omega3 = k2 * k2 * k2 / 1152.0;
  Z d1 = 0.5 * h * q2 - h * (c_chi * u2 + c_chi3 * w2);
  Z d2 = 0.5 * h * q3 - h * (c_chi * u3 + c_chi3 * w3);
  Z n1 = -n_dot * (-0.5 * q2 + c_chi * u2 + c_chi3 * w2 +
                   h2 * (0.5 * p3_2 + 0.125 * k2 * q2 + c_omega * u2 + c_omega3 * w2)) +
         e_dot * h * (0.5 * p3_3 + 0.125 * k2 * q3 + c_omega * u3 + c_omega3 * w3);
  Z n2 = -n_dot * (-0.5 * q3 + c_chi * u3 + c_chi3 * w3 +
                   h2 * (0.5 * p3_3 + 0.125 * k2 * q3 + c_omega * u3 + c_omega3 * w3)) +
         e_dot * h * (0.5 * p3_4 + 0.125 * k2 * q4 + c_omega * u4 + c_omega3 * w4);
  // The bounded rest, Gauss-Legendre on pieces of at most kRadialPiece in k rho.
  const int pieces = max(1, int(ceil(k * rho / kRadialPiece)));
  const double width = rho / pieces;
  for (int piece = 0; piece < pieces; ++piece)
    for (int q = 0; q < radial_points; ++q) {
      const double s = width * (piece + 0.5 * (1.0 + radial_nodes[q]));
      const double w = 0.5 * width * radial_weights[q];
      const double r = sqrt(s * s + h2);
      const RemainderFactors f = remainder_factors(k * r);
      const double r3 = r * r * r;
      const Z chi = k * f.chi - c_chi * r - c_chi3 * r3;
      const Z omega = k2 * k * f.omega - c_omega * r - c_omega3 * r3;
      const double s2 = s * s, s3 = s2 * s;
      d1 -= w * h * chi * s2;
      d2 -= w * h * chi * s3;
      const Z even = -n_dot * (chi + h2 * omega);
      n1 += w * (even * s2 + e_dot * h * omega * s3);
      n2 += w * (even * s3 + e_dot * h * omega * s3 * s);
    }
  out.dbl[0] += k2 * d1;
  out.dbl[1] += k2 * d2;
  out.hyper[0] += k2 * n1;
  out.hyper[1] += k2 * n2;
  return out;
}

// MonomialMoments: the monomials' D and N.
struct Moments {
  Z double_layer[kTerms], hypersingular[kTerms];
};

// monomial_moments.
__device__ inline Moments monomial_moments(double k, V3 a, V3 b, V3 c, V3 origin, V3 axis1,
                                           V3 axis2, V3 x, V3 n_x, const Hypersingular& constant,
                                           const double* nodes, const double* weights, int angular,
                                           const double* radial_nodes, const double* radial_weights,
                                           int radial_points) {
  const V3 n = normalized(cross(b - a, c - a));
  const double longest = fmax(fmax(norm(b - a), norm(c - b)), norm(a - c));
  double h = dot(x - a, n);
  if (fabs(h) <= 1e-12 * longest + coordinate_rounding(largest_coordinate(a, x))) h = 0.0;
  const V3 p = x - n * h;
  const double n_dot = dot(n, n_x);
  const double xi = dot(p - origin, axis1), eta = dot(p - origin, axis2);
  const double beta0[kTerms] = {xi, eta, xi * xi, xi * eta, eta * eta};

  Moments out;
#pragma unroll
  for (int m = 0; m < kTerms; ++m) {
    out.double_layer[m] = beta0[m] * constant.double_layer;
    out.hypersingular[m] = beta0[m] * constant.hypersingular;
  }
  Z dbl[kTerms], hyper[kTerms];
#pragma unroll
  for (int m = 0; m < kTerms; ++m) dbl[m] = hyper[m] = Z{0.0, 0.0};
  // One angular point of weight w (monomial_moments' add_direction).
  const auto add_direction = [&](double w, V3 direction, double rho) {
    const double e1 = dot(direction, axis1), e2 = dot(direction, axis2);
    const Radial r = radial_integrals(k, rho, h, n_dot, dot(direction, n_x), radial_nodes,
                                      radial_weights, radial_points);
    const double beta1[kTerms] = {e1, e2, 2.0 * xi * e1, xi * e2 + eta * e1, 2.0 * eta * e2};
    const double beta2[kTerms] = {0.0, 0.0, e1 * e1, e1 * e2, e2 * e2};
#pragma unroll
    for (int m = 0; m < kTerms; ++m) {
      dbl[m] += w * (beta1[m] * r.dbl[0] + beta2[m] * r.dbl[1]);
      hyper[m] += w * (beta1[m] * r.hyper[0] + beta2[m] * r.hyper[1]);
    }
  };
  const V3 v[3] = {a, b, c};
#pragma unroll
  for (int edge = 0; edge < 3; ++edge) {
    const V3 v1 = v[edge], v2 = v[(edge + 1) % 3];
    const double length = norm(v2 - v1);
    const V3 unit = (v2 - v1) * (1.0 / length);
    const double t1 = dot(v1 - p, unit), t2 = dot(v2 - p, unit);
    const V3 foot = (v1 - p) - unit * t1;
    const double dist = norm(foot);
    if (dist <= 1e-14 * length + coordinate_rounding(largest_coordinate(v1, p))) {
      // p on the edge segment itself (x across a sharp edge): the half circle beyond the edge
      // at rho = 0 restores the log |h| terms (as monomial_moments on the host).
      if (!(t1 < 0.0 && t2 > 0.0) || h == 0.0) continue;
      const V3 d1 = (v1 - p) * (1.0 / fabs(t1)), outward = cross(n, d1);
      const double half = 0.25 * 3.14159265358979323846;
      for (int piece = 0; piece < 2; ++piece)
        for (int q = 0; q < angular; ++q) {
          const double theta = (2 * piece + 1) * half + half * nodes[q];
          const double w = half * weights[q];
          const V3 direction = d1 * cos(theta) + outward * sin(theta);
          add_direction(w, direction, 0.0);
        }
      continue;
    }
    const double sign = dot(cross(v1 - p, v2 - p), n) > 0.0 ? 1.0 : -1.0;
    const double u1 = asinh(t1 / dist), u2 = asinh(t2 / dist);
    const int pieces = max(1, int(ceil((u2 - u1) / kSectorPiece)));
    const double half = 0.5 * (u2 - u1) / pieces;
    for (int piece = 0; piece < pieces; ++piece)
      for (int q = 0; q < angular; ++q) {
        const double u = u1 + (2 * piece + 1) * half + half * nodes[q];
        const double cosh_u = cosh(u);
        const double w = sign * half * weights[q] / cosh_u;
        const double rho = dist * cosh_u;
        const V3 direction = (foot + unit * (dist * sinh(u))) * (1.0 / rho);
        add_direction(w, direction, rho);
      }
  }
#pragma unroll
  for (int m = 0; m < kTerms; ++m) {
    out.double_layer[m] += kInv4Pi * dbl[m];
    out.hypersingular[m] += kInv4Pi * hyper[m];
  }
  return out;
}

// ---- refined_rule_integrals and regular_monomial_moments ----

// triangle_rule(7), copied from the host.
constexpr int kRefinedPoints = 7;
__constant__ double refined_barycentric[kRefinedPoints][3];
__constant__ double refined_weights[kRefinedPoints];

// refined_rule_integrals: {constant, monomials}.
__device__ inline void refined_rule_integrals(double k, V3 a, V3 b, V3 c, V3 origin, V3 axis1,
                                              V3 axis2, V3 x, V3 n_x, Hypersingular& constant,
                                              Moments& monomials) {
  const V3 n_y = normalized(cross(b - a, c - a));
  const V3 ab = (a + b) * 0.5, bc = (b + c) * 0.5, ca = (c + a) * 0.5;
  const V3 pieces[4][3] = {{a, ab, ca}, {ab, b, bc}, {ca, bc, c}, {ab, bc, ca}};
  const double area = 0.125 * norm(cross(b - a, c - a));
  constant = {{0.0, 0.0}, {0.0, 0.0}, {0.0, 0.0}, {0.0, 0.0}};
#pragma unroll
  for (int t = 0; t < kTerms; ++t) monomials.double_layer[t] = monomials.hypersingular[t] = 0.0;
#pragma unroll
  for (int piece = 0; piece < 4; ++piece)
    for (int q = 0; q < kRefinedPoints; ++q) {
      const double* l = refined_barycentric[q];
      const V3 y = pieces[piece][0] * l[0] + pieces[piece][1] * l[1] + pieces[piece][2] * l[2];
      const double w = area * refined_weights[q];
      const Z single = w * green(k, norm(y - x));
      const Z dbl = w * green_normal_derivative(k, x, y, n_y);
      const Z adjoint = w * green_target_normal_derivative(k, x, y, n_x);
      const Z hyper = w * green_double_normal_derivative(k, x, y, n_x, n_y);
      constant.single_layer += single;
      constant.double_layer += dbl;
      constant.adjoint_double_layer += adjoint;
      constant.hypersingular += hyper;
      const V3 d = y - origin;
      const double xi = dot(d, axis1), eta = dot(d, axis2);
      const double monomial[kTerms] = {xi, eta, xi * xi, xi * eta, eta * eta};
#pragma unroll
      for (int t = 0; t < kTerms; ++t) {
        monomials.double_layer[t] += dbl * monomial[t];
        monomials.hypersingular[t] += hyper * monomial[t];
      }
    }
}

// The reconstruction's frames and stencils on the device.
struct Frames {
  const double* origins = nullptr;  // 3 per element
  const double* axes = nullptr;     // 6 per element: axis 0, then axis 1
  const std::int64_t* stencil_start = nullptr;
  const std::int32_t* stencil_columns = nullptr;
  const double* values = nullptr;  // per element kTerms rows of its stencil's length
};

// The buffers behind Frames, uploaded for one computation.
class DeviceFrames {
 public:
  DeviceFrames(const Discretization& disc, const DensityReconstruction& reconstruction) {
    std::vector<Vec3> origin_list(disc.size()), axis_list(2 * disc.size());
    for (std::size_t e = 0; e < disc.size(); ++e) {
      origin_list[e] = reconstruction.origin(e);
      axis_list[2 * e] = reconstruction.axis(e, 0);
      axis_list[2 * e + 1] = reconstruction.axis(e, 1);
    }
    origins_ = Buffer<double>(flatten(origin_list), "reconstruction origins");
    axes_ = Buffer<double>(flatten(axis_list), "reconstruction axes");
    const auto starts = reconstruction.stencil_starts();
    const auto columns = reconstruction.stencil_columns();
    const auto values = reconstruction.stencil_values();
    stencil_start_ = Buffer<std::int64_t>(starts.data(), starts.size(), "reconstruction stencils");
    stencil_columns_ =
        Buffer<std::int32_t>(columns.data(), columns.size(), "reconstruction stencils");
    values_ = Buffer<double>(values.data(), values.size(), "reconstruction coefficients");
    view_.origins = origins_.data();
    view_.axes = axes_.data();
    view_.stencil_start = stencil_start_.data();
    view_.stencil_columns = stencil_columns_.data();
    view_.values = values_.data();
  }
  const Frames& view() const { return view_; }

 private:
  Buffer<double> origins_, axes_, values_;
  Buffer<std::int64_t> stencil_start_;
  Buffer<std::int32_t> stencil_columns_;
  Frames view_;
};

// regular_monomial_moments of element l at x.
__device__ inline Moments regular_monomial_moments(const Geometry& g, const Frames& f, double k,
                                                   std::int64_t l, V3 x, V3 n_x) {
  const V3 n_y = load(g.normals, l);
  const V3 origin = load(f.origins, l), axis1 = load(f.axes, 2 * l),
           axis2 = load(f.axes, 2 * l + 1);
  Moments sum;
#pragma unroll
  for (int t = 0; t < kTerms; ++t) sum.double_layer[t] = sum.hypersingular[t] = 0.0;
  const std::int64_t m = g.points_per_element;
  for (std::int64_t q = l * m; q < (l + 1) * m; ++q) {
    const V3 y = load(g.points, q);
    if (norm(y - x) <= g.coincident) continue;
    const double w = g.point_weights[q];
    const Z dbl = w * green_normal_derivative(k, x, y, n_y);
    const Z hyper = w * green_double_normal_derivative(k, x, y, n_x, n_y);
    const V3 d = y - origin;
    const double xi = dot(d, axis1), eta = dot(d, axis2);
    const double monomial[kTerms] = {xi, eta, xi * xi, xi * eta, eta * eta};
#pragma unroll
    for (int t = 0; t < kTerms; ++t) {
      sum.double_layer[t] += dbl * monomial[t];
      sum.hypersingular[t] += hyper * monomial[t];
    }
  }
  return sum;
}

// ---- the per-pair entries and the fold ----

// Per pair of a chunk (slot = its position in the chunk's refined pairs), structure of arrays:
// the constant entries accurate minus regular, and per monomial t the entry (accurate minus
// regular, coupled) and the accurate integral (for the diagonal).
struct Scratch {
  Z* constant_single = nullptr;
  Z* constant_double = nullptr;
  Z* entry = nullptr;       // kTerms x chunk pairs
  Z* accurate = nullptr;    // kTerms x chunk pairs
  std::int64_t stride = 0;  // chunk pairs
};

struct PairArgs {
  Geometry g;
  Frames f;
  double k = 0.0;
  Z coupling{0.0, 0.0};
  bool burton_miller = false;
  std::int64_t row_begin = 0;   // collocation point of row 0
  std::int64_t first_row = 0;   // the chunk's first row
  std::int64_t first_pair = 0;  // refined.row_start[first_row]
  const std::int32_t* refined_columns = nullptr;
  const double *radial_nodes = nullptr, *radial_weights = nullptr;
  int radial_points = 0;
  // The pairs of this launch: their slots and rows (chunk-relative).
  std::int64_t count = 0;
  const std::int32_t* slots = nullptr;
  const std::int32_t* rows = nullptr;
  Scratch out;
  Z* self_single = nullptr;  // per row: the accurate S_ii
  Z* self_double = nullptr;  // per row: the accurate D_ii, until fold_rows replaces it
};

// One thread a pair: the body of fold_reconstruction's pair loop up to the scatter.
template <bool kClose>
__global__ void __launch_bounds__(128) pair_entries(PairArgs a) {
  const std::int64_t item = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (item >= a.count) return;
  const std::int64_t slot = a.slots[item];
  const std::int64_t r = a.first_row + a.rows[item], i = a.row_begin + r;
  const std::int64_t l = a.refined_columns[a.first_pair + slot];
  const Geometry& g = a.g;
  const V3 x = load(g.centroids, i), n_x = load(g.normals, i);
  const V3 va = g.corner(l, 0), vb = g.corner(l, 1), vc = g.corner(l, 2);
  const V3 origin = load(a.f.origins, l), axis1 = load(a.f.axes, 2 * l),
           axis2 = load(a.f.axes, 2 * l + 1);
  Hypersingular exact;
  Moments accurate;
  if constexpr (kClose) {
    exact = hypersingular_integrals(a.k, va, vb, vc, x, n_x, g.nodes, g.weights, g.angular);
    accurate =
        monomial_moments(a.k, va, vb, vc, origin, axis1, axis2, x, n_x, exact, g.nodes, g.weights,
                         g.angular, a.radial_nodes, a.radial_weights, a.radial_points);
  } else {
    refined_rule_integrals(a.k, va, vb, vc, origin, axis1, axis2, x, n_x, exact, accurate);
  }
  const RegularSums regular = regular_sums<true>(g, a.k, l, x, n_x);
  Z exact_single = exact.single_layer, exact_double = exact.double_layer;
  Z regular_single = regular.single_layer, regular_double = regular.double_layer;
  if (a.burton_miller) {
    exact_single += a.coupling * exact.adjoint_double_layer;
    exact_double += a.coupling * exact.hypersingular;
    regular_single += a.coupling * regular.adjoint_double_layer;
    regular_double += a.coupling * regular.hypersingular;
  }
  a.out.constant_single[slot] = exact_single - regular_single;
  a.out.constant_double[slot] = exact_double - regular_double;
  if (l == i) {
    a.self_single[r] = exact_single;
    a.self_double[r] = exact_double;
  }
  const Moments rule = regular_monomial_moments(g, a.f, a.k, l, x, n_x);
#pragma unroll
  for (int t = 0; t < kTerms; ++t) {
    const Z accurate_t = accurate.double_layer[t] + a.coupling * accurate.hypersingular[t];
    a.out.entry[t * a.out.stride + slot] =
        accurate_t - rule.double_layer[t] - a.coupling * rule.hypersingular[t];
    a.out.accurate[t * a.out.stride + slot] = accurate_t;
  }
}

struct SplitArgs {
  std::int64_t first_row = 0, rows = 0;  // the chunk
  const std::int64_t *close_start = nullptr, *refined_start = nullptr;
  const std::int32_t *close_columns = nullptr, *refined_columns = nullptr;
  std::int32_t *close_slots = nullptr, *close_rows = nullptr;
  std::int32_t *far_slots = nullptr, *far_rows = nullptr;
};

// One thread a row: its close and its refined-only pairs (both rows ascending, the close
// elements a subset of the refined ones), as chunk slots.
__global__ void split_pairs(SplitArgs a) {
  const std::int64_t local = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (local >= a.rows) return;
  const std::int64_t r = a.first_row + local;
  const std::int64_t first_close = a.close_start[a.first_row];
  const std::int64_t first_pair = a.refined_start[a.first_row];
  std::int64_t next_close = a.close_start[r];
  std::int64_t far = (a.refined_start[r] - first_pair) - (next_close - first_close);
  for (std::int64_t at = a.refined_start[r]; at < a.refined_start[r + 1]; ++at) {
    const std::int32_t slot = std::int32_t(at - first_pair);
    if (next_close < a.close_start[r + 1] && a.close_columns[next_close] == a.refined_columns[at]) {
      a.close_slots[next_close - first_close] = slot;
      a.close_rows[next_close - first_close] = std::int32_t(local);
      ++next_close;
    } else {
      a.far_slots[far] = slot;
      a.far_rows[far] = std::int32_t(local);
      ++far;
    }
  }
}

struct FoldArgs {
  Frames f;
  std::int64_t row_begin = 0, first_row = 0, rows = 0, first_pair = 0;
  const std::int64_t* refined_start = nullptr;
  const std::int32_t* refined_columns = nullptr;
  const std::int64_t* row_start = nullptr;  // the folded pattern
  const std::int32_t* columns = nullptr;
  Scratch in;
  Z *single = nullptr, *dbl = nullptr;  // the entries, zero before the first chunk
  Z* self_double = nullptr;
};

// Position of column j in the sorted row [first, last) (j is there: the pattern holds every
// stencil of the row's pairs).
__device__ inline std::int64_t position(const std::int32_t* columns, std::int64_t first,
                                        std::int64_t last, std::int32_t j) {
  while (last - first > 1) {
    const std::int64_t mid = (first + last) / 2;
    if (columns[mid] <= j)
      first = mid;
    else
      last = mid;
  }
  return first;
}

// One thread a row: fold_reconstruction's scatter, pair by pair in the row's order. For each
// stencil column the five monomials' terms are added in the CPU's order (t = 0..4 on the same
// running value: the stencil's columns are distinct), so every entry is the CPU's sum.
__global__ void fold_rows(FoldArgs a) {
  const std::int64_t local = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (local >= a.rows) return;
  const std::int64_t r = a.first_row + local, i = a.row_begin + r;
  const std::int64_t first = a.row_start[r], last = a.row_start[r + 1];
  const std::int64_t stride = a.in.stride;
  Z diagonal{0.0, 0.0};
  for (std::int64_t at = a.refined_start[r]; at < a.refined_start[r + 1]; ++at) {
    const std::int64_t slot = at - a.first_pair;
    const std::int32_t l = a.refined_columns[at];
    const std::int64_t own = position(a.columns, first, last, l);
    a.single[own] = a.in.constant_single[slot];
    a.dbl[own] += a.in.constant_double[slot];
    if (l == i) diagonal += a.self_double[r];  // the accurate D_ii, left by pair_entries
    Z entry[kTerms], accurate[kTerms];
#pragma unroll
    for (int t = 0; t < kTerms; ++t) {
      entry[t] = a.in.entry[t * stride + slot];
      accurate[t] = a.in.accurate[t * stride + slot];
    }
    const std::int64_t stencil = a.f.stencil_start[l];
    const std::int64_t length = a.f.stencil_start[l + 1] - stencil;
    const double* coefficients = a.f.values + stencil * kTerms;
    for (std::int64_t s = 0; s < length; ++s) {
      const std::int32_t j = a.f.stencil_columns[stencil + s];
      const std::int64_t at_j = position(a.columns, first, last, j);
      Z value = a.dbl[at_j];
#pragma unroll
      for (int t = 0; t < kTerms; ++t) value += entry[t] * coefficients[t * length + s];
      a.dbl[at_j] = value;
      if (j == i) {
#pragma unroll
        for (int t = 0; t < kTerms; ++t) diagonal += accurate[t] * coefficients[t * length + s];
      }
    }
  }
  a.self_double[r] = diagonal;
}

// CorrectedLayerPotentials::near_block's entries on the device.
struct BlockArgs {
  Geometry g;
  Frames f;  // with kQuadratic
  double k = 0.0;
  Z coupling{0.0, 0.0};
  std::int64_t rows = 0, row_begin = 0, nonzeros = 0;
  const std::int64_t* row_start = nullptr;
  const std::int32_t* columns = nullptr;
  const std::int32_t* column_elements = nullptr;  // null: column entry j is element j
  const Z *single = nullptr, *dbl = nullptr;      // the correction's entries
  const Z* single_extra = nullptr;                // per row, or null
  Z identity{0.0, 0.0}, double_layer{0.0, 0.0}, single_layer{0.0, 0.0};
  // Per element (null: the uniform three above).
  const Z *element_identity = nullptr, *element_double = nullptr, *element_single = nullptr;
  Z* block = nullptr;
};

// One thread a nonzero (i, j): the regular rule's S + alpha D' and D + alpha N of element j,
// with the quadratic read the moments of every element l whose stencil holds j (those of j's
// own stencil, ascending: the CPU's row loop meets them in that order) times R's coefficient of
// u_j, then plus the correction and combined, every sum in the CPU's order. The CPU forms each
// l's moments once per row; here once per (row, column): about ten times the arithmetic, and no
// per-row merge of stencils.
template <bool kBurtonMiller, bool kQuadratic>
__global__ void __launch_bounds__(128) near_block_entries(BlockArgs a) {
  const std::int64_t at = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (at >= a.nonzeros) return;
  const std::int64_t r = row_of(a.row_start, a.rows, at), i = a.row_begin + r;
  const std::int32_t j = a.column_elements ? a.column_elements[a.columns[at]] : a.columns[at];
  const Geometry& g = a.g;
  const V3 x = load(g.centroids, i), n_x = load(g.normals, i);
  const RegularSums regular = regular_sums<kBurtonMiller>(g, a.k, j, x, n_x);
  Z single = regular.single_layer, dbl = regular.double_layer;
  if constexpr (kBurtonMiller) {
    single += a.coupling * regular.adjoint_double_layer;
    dbl += a.coupling * regular.hypersingular;
  }
  if constexpr (kQuadratic) {
    for (std::int64_t e = a.f.stencil_start[j]; e < a.f.stencil_start[j + 1]; ++e) {
      const std::int32_t l = a.f.stencil_columns[e];
      const std::int64_t first = a.f.stencil_start[l];
      const std::int64_t length = a.f.stencil_start[l + 1] - first;
      std::int64_t s = 0;  // j's place in l's stencil
      while (s < length && a.f.stencil_columns[first + s] != j) ++s;
      if (s == length) continue;
      const Moments rule = regular_monomial_moments(g, a.f, a.k, l, x, n_x);
      const double* coefficients = a.f.values + first * kTerms;
#pragma unroll
      for (int t = 0; t < kTerms; ++t) {
        const Z weight = rule.double_layer[t] + a.coupling * rule.hypersingular[t];
        dbl += weight * coefficients[t * length + s];
      }
    }
  }
  Z s = single + a.single[at];
  if (j == i && a.single_extra) s += a.single_extra[r];
  const Z d = dbl + a.dbl[at];
  Z out = a.element_double ? a.element_double[j] * d + a.element_single[j] * s
                           : a.double_layer * d + a.single_layer * s;
  if (j == i) out += a.element_identity ? a.element_identity[i] : a.identity;
  a.block[at] = out;
}

}  // namespace

void folded_entries(const Discretization& disc, double k, RowRange rows,
                    const NearFieldPattern& close, const NearFieldPattern& refined,
                    const std::int64_t* device_row_start, const std::int32_t* device_columns,
                    const GaussLegendre& angular, const GaussLegendre& radial, cplx coupling,
                    const DensityReconstruction& reconstruction, std::int64_t chunk_pairs,
                    const FoldedOutputs& out) {
  const std::size_t n_rows = rows.size();
  if (close.row_start.size() != n_rows + 1 || refined.row_start.size() != n_rows + 1)
    throw Error("GPU near-field correction: close or refined pattern of the wrong size");
  if (n_rows == 0) return;

  // The constants: the remainder series and the refined rule, as the CPU forms them.
  {
    const auto c = [](int m) {
      double factorial = 1.0;
      for (int i = 2; i <= m; ++i) factorial *= i;
      const cplx i_power[4] = {1.0, cplx(0.0, 1.0), -1.0, cplx(0.0, -1.0)};
      return i_power[m % 4] * (double(m - 1) / factorial);
    };
    std::array<cplx, kSeriesTerms> chi, omega;
    for (int j = 0; j < kSeriesTerms; ++j) {
      chi[std::size_t(j)] = c(j + 3);
      omega[std::size_t(j)] = double(j + 2) * c(j + 5);
    }
    check(cudaMemcpyToSymbol(series_chi, chi.data(), sizeof(chi)), "remainder series");
    check(cudaMemcpyToSymbol(series_omega, omega.data(), sizeof(omega)), "remainder series");
    const TriangleRule& rule = triangle_rule(kRefinedPoints);
    double barycentric[kRefinedPoints][3], weights[kRefinedPoints];
    for (int q = 0; q < kRefinedPoints; ++q) {
      for (int c3 = 0; c3 < 3; ++c3) barycentric[q][c3] = rule.barycentric[std::size_t(q)][c3];
      weights[q] = rule.weights[std::size_t(q)];
    }
    check(cudaMemcpyToSymbol(refined_barycentric, barycentric, sizeof(barycentric)),
          "refined rule");
    check(cudaMemcpyToSymbol(refined_weights, weights, sizeof(weights)), "refined rule");
  }

  const DeviceGeometry geometry(disc, angular);
  const DeviceFrames device_frames(disc, reconstruction);
  const Buffer<double> d_radial_nodes(radial.nodes, "radial rule");
  const Buffer<double> d_radial_weights(radial.weights, "radial rule");
  // The close and refined pairs (the refined pattern holds both).
  const Buffer<std::int64_t> d_close_start(close.row_start, "close pairs");
  const Buffer<std::int32_t> d_close_columns(close.columns, "close pairs");
  const Buffer<std::int64_t> d_refined_start(refined.row_start, "refined pairs");
  const Buffer<std::int32_t> d_refined_columns(refined.columns, "refined pairs");

  const Frames frames = device_frames.view();

  check(cudaMemset(out.single, 0, std::size_t(out.nonzeros) * sizeof(Z)), "near-field entries");
  check(cudaMemset(out.dbl, 0, std::size_t(out.nonzeros) * sizeof(Z)), "near-field entries");

  // The chunk: at most chunk_pairs pairs, at least the largest row.
  const std::vector<std::int64_t>& pair_start = refined.row_start;
  std::int64_t largest_row = 0;
  for (std::size_t r = 0; r < n_rows; ++r)
    largest_row = std::max(largest_row, pair_start[r + 1] - pair_start[r]);
  // Slots within a chunk are 32-bit.
  const std::int64_t stride =
      std::min({std::max(chunk_pairs, largest_row), pair_start.back(), std::int64_t(INT32_MAX)});
  if (largest_row > INT32_MAX)
    throw Error("GPU near-field correction: a row with more than 2^31 corrected pairs");
  if (stride == 0) return;
  Buffer<Z> constant_single(std::size_t(stride), "near-field pair scratch");
  Buffer<Z> constant_double(std::size_t(stride), "near-field pair scratch");
  Buffer<Z> entry(std::size_t(stride) * kTerms, "near-field pair scratch");
  Buffer<Z> accurate(std::size_t(stride) * kTerms, "near-field pair scratch");
  Buffer<std::int32_t> close_slots(std::size_t(stride), "near-field pair lists");
  Buffer<std::int32_t> close_rows(std::size_t(stride), "near-field pair lists");
  Buffer<std::int32_t> far_slots(std::size_t(stride), "near-field pair lists");
  Buffer<std::int32_t> far_rows(std::size_t(stride), "near-field pair lists");
  const Scratch scratch{constant_single.data(), constant_double.data(), entry.data(),
                        accurate.data(), stride};

  PairArgs pair;
  pair.g = geometry.view();
  pair.f = frames;
  pair.k = k;
  pair.coupling = Z{coupling.real(), coupling.imag()};
  pair.burton_miller = coupling != cplx(0.0);
  pair.row_begin = std::int64_t(rows.begin);
  pair.refined_columns = d_refined_columns.data();
  pair.radial_nodes = d_radial_nodes.data();
  pair.radial_weights = d_radial_weights.data();
  pair.radial_points = int(radial.size());
  pair.out = scratch;
  pair.self_single = out.self_single;
  pair.self_double = out.self_double;

  FoldArgs fold;
  fold.f = frames;
  fold.row_begin = std::int64_t(rows.begin);
  fold.refined_start = d_refined_start.data();
  fold.refined_columns = d_refined_columns.data();
  fold.row_start = device_row_start;
  fold.columns = device_columns;
  fold.in = scratch;
  fold.single = out.single;
  fold.dbl = out.dbl;
  fold.self_double = out.self_double;

  for (std::size_t first = 0; first < n_rows;) {
    // The rows [first, last) whose pairs fit in the scratch.
    const auto end = std::upper_bound(pair_start.begin() + std::ptrdiff_t(first) + 1,
                                      pair_start.end(), pair_start[first] + stride);
    const std::size_t last = std::size_t(end - pair_start.begin()) - 1;
    const std::int64_t chunk_rows = std::int64_t(last - first);
    const std::int64_t pairs = pair_start[last] - pair_start[first];
    const std::int64_t closes = close.row_start[last] - close.row_start[first];

    SplitArgs split;
    split.first_row = std::int64_t(first);
    split.rows = chunk_rows;
    split.close_start = d_close_start.data();
    split.refined_start = d_refined_start.data();
    split.close_columns = d_close_columns.data();
    split.refined_columns = d_refined_columns.data();
    split.close_slots = close_slots.data();
    split.close_rows = close_rows.data();
    split.far_slots = far_slots.data();
    split.far_rows = far_rows.data();
    split_pairs<<<blocks(chunk_rows, 128), 128>>>(split);
    check(cudaGetLastError(), "the near-field pair split");

    pair.first_row = std::int64_t(first);
    pair.first_pair = pair_start[first];
    constexpr int threads = 128;
    if (closes > 0) {
      pair.count = closes;
      pair.slots = close_slots.data();
      pair.rows = close_rows.data();
      pair_entries<true><<<blocks(closes, threads), threads>>>(pair);
      check(cudaGetLastError(), "the close-pair entry kernel");
    }
    if (pairs > closes) {
      pair.count = pairs - closes;
      pair.slots = far_slots.data();
      pair.rows = far_rows.data();
      pair_entries<false><<<blocks(pairs - closes, threads), threads>>>(pair);
      check(cudaGetLastError(), "the refined-pair entry kernel");
    }

    fold.first_row = std::int64_t(first);
    fold.rows = chunk_rows;
    fold.first_pair = pair_start[first];
    fold_rows<<<blocks(chunk_rows, 128), 128>>>(fold);
    check(cudaGetLastError(), "the near-field fold kernel");
    first = last;
  }
  // The scratch and the uploaded arrays are freed on return: wait for the kernels first.
  check(cudaDeviceSynchronize(), "the near-field entry kernels");
}

void near_block_entries(const Discretization& disc, double k, RowRange rows, cplx coupling,
                        const DensityReconstruction* reconstruction, const NearBlockInputs& in,
                        Z* device_block) {
  if (in.nonzeros == 0) return;
  const DeviceGeometry geometry(disc, GaussLegendre(1));  // the angular rule is not read
  const std::unique_ptr<const DeviceFrames> frames =
      reconstruction ? std::make_unique<const DeviceFrames>(disc, *reconstruction) : nullptr;
  Buffer<Z> extra;
  if (!in.single_extra.empty()) {
    if (in.single_extra.size() != rows.size())
      throw Error("GPU near block: a diagonal of the wrong size");
    extra = Buffer<Z>(reinterpret_cast<const Z*>(in.single_extra.data()), in.single_extra.size(),
                      "the single-layer diagonal extra");
  }
  BlockArgs a;
  a.g = geometry.view();
  if (frames) a.f = frames->view();
  a.k = k;
  a.coupling = Z{coupling.real(), coupling.imag()};
  a.rows = std::int64_t(rows.size());
  a.row_begin = std::int64_t(rows.begin);
  a.nonzeros = in.nonzeros;
  a.row_start = in.row_start;
  a.columns = in.columns;
  a.column_elements = in.column_elements;
  a.single = in.single;
  a.dbl = in.dbl;
  a.single_extra = in.single_extra.empty() ? nullptr : extra.data();
  a.identity = Z{in.identity.real(), in.identity.imag()};
  a.double_layer = Z{in.double_layer.real(), in.double_layer.imag()};
  a.single_layer = Z{in.single_layer.real(), in.single_layer.imag()};
  Buffer<Z> element_identity, element_double, element_single;
  if (!in.element_identity.empty()) {
    const auto upload = [](std::span<const cplx> host, const char* what) {
      return Buffer<Z>(reinterpret_cast<const Z*>(host.data()), host.size(), what);
    };
    element_identity = upload(in.element_identity, "the per-element identity coefficients");
    element_double = upload(in.element_double, "the per-element double-layer coefficients");
    element_single = upload(in.element_single, "the per-element single-layer coefficients");
    a.element_identity = element_identity.data();
    a.element_double = element_double.data();
    a.element_single = element_single.data();
  }
  a.block = device_block;
  constexpr int threads = 128;
  const unsigned grid = blocks(in.nonzeros, threads);
  const bool bm = coupling != cplx(0.0);
  if (bm && frames)
    near_block_entries<true, true><<<grid, threads>>>(a);
  else if (bm)
    near_block_entries<true, false><<<grid, threads>>>(a);
  else if (frames)
    near_block_entries<false, true><<<grid, threads>>>(a);
  else
    near_block_entries<false, false><<<grid, threads>>>(a);
  check(cudaGetLastError(), "the near-block kernel");
  // The uploaded arrays are freed on return: wait for the kernel first.
  check(cudaDeviceSynchronize(), "the near-block kernel");
}

}  // namespace fmbem::bem_cuda
