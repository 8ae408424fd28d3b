#include "fmbem/bem/hypersingular_integrals.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <numbers>
#include <string>
#include <utility>
#include <vector>

#include "fmbem/bem/discretization.hpp"
#include "fmbem/bem/panel_integrals.hpp"
#include "fmbem/kernel/kernel.hpp"
#include "fmbem/mesh/mesh.hpp"
#include "fmbem/quadrature/triangle_rule.hpp"

namespace fmbem {
namespace {

constexpr double pi = std::numbers::pi;

// Adaptive subdivision: the 7-point rule on a triangle against the sum over its four midpoint
// children, recursing until they agree to tol / 2^depth. An independent reference
// for x off the closed triangle (the kernel is then smooth on it, however close x is).
using Kernel = std::function<cplx(const Vec3&)>;

cplx rule7(const Kernel& f, const Vec3& a, const Vec3& b, const Vec3& c) {
  const TriangleRule& rule = triangle_rule(7);
  const double area = 0.5 * norm(cross(b - a, c - a));
  cplx sum{};
  for (std::size_t q = 0; q < rule.size(); ++q) {
    const auto& l = rule.barycentric[q];
    sum += rule.weights[q] * f(a * l[0] + b * l[1] + c * l[2]);
  }
  return sum * area;
}

cplx adaptive(const Kernel& f, const Vec3& a, const Vec3& b, const Vec3& c, cplx whole, double tol,
              double floor, int depth) {
  const Vec3 ab = (a + b) * 0.5, bc = (b + c) * 0.5, ca = (c + a) * 0.5;
  const cplx parts[4] = {rule7(f, a, ab, ca), rule7(f, ab, b, bc), rule7(f, ca, bc, c),
                         rule7(f, ab, bc, ca)};
  const cplx sum = parts[0] + parts[1] + parts[2] + parts[3];
  if (depth >= 3 && (std::abs(sum - whole) < tol || depth > 30)) return sum;
  return adaptive(f, a, ab, ca, parts[0], std::max(tol / 2, floor), floor, depth + 1) +
         adaptive(f, ab, b, bc, parts[1], std::max(tol / 2, floor), floor, depth + 1) +
         adaptive(f, ca, bc, c, parts[2], std::max(tol / 2, floor), floor, depth + 1) +
         adaptive(f, ab, bc, ca, parts[3], std::max(tol / 2, floor), floor, depth + 1);
}

cplx adaptive_integral(const Kernel& f, const Vec3& a, const Vec3& b, const Vec3& c, double tol) {
  // The per-triangle tolerance halves per level down to 1e-3 of the total, where rounding of
  // the parts (1e-16 of the scale) would otherwise never let small triangles pass.
  return adaptive(f, a, b, c, rule7(f, a, b, c), tol, 1e-3 * tol, 0);
}

struct Triangle {
  Vec3 a, b, c;
  Vec3 normal() const { return normalized(cross(b - a, c - a)); }
  Vec3 centroid() const { return (a + b + c) * (1.0 / 3); }
  double size() const { return std::max({norm(b - a), norm(c - b), norm(a - c)}); }
};

// A scalene triangle tilted in space (as in panel_integrals_test.cpp).
const Triangle scalene{{0.1, -0.2, 0.05}, {0.9, 0.1, -0.1}, {0.3, 0.7, 0.2}};

TEST(HypersingularIntegrals, KernelsAreTheDerivativesOfG) {
  // The new kernels against central differences of green / green_normal_derivative.
  const Vec3 x{0.3, -0.1, 0.2}, y{0.9, 0.4, -0.3};
  const Vec3 nx = normalized(Vec3{1, 2, -0.5}), ny = normalized(Vec3{-0.3, 0.2, 1});
  // Richardson's extrapolation of central differences with steps e and 2e: truncation
  // O(e^4 (k + 1/r)^5) ~ 1e-14, rounding ~1e-16 / e of the kernel: 1e-10 relative covers both.
  const double e = 1e-4;
  const auto derivative = [&](const std::function<cplx(const Vec3&)>& f) {
    const cplx d1 = (f(x + nx * e) - f(x - nx * e)) / (2 * e);
    const cplx d2 = (f(x + nx * (2 * e)) - f(x - nx * (2 * e))) / (4 * e);
    return (4.0 * d1 - d2) / 3.0;
  };
  for (double k : {0.0, 1.0, 8.0}) {
    const cplx dx = derivative([&](const Vec3& z) { return green(k, norm(y - z)); });
    const cplx dxy =
        derivative([&](const Vec3& z) { return green_normal_derivative(k, z, y, ny); });
    EXPECT_LT(std::abs(green_target_normal_derivative(k, x, y, nx) - dx), 1e-10 * std::abs(dx));
    EXPECT_LT(std::abs(green_double_normal_derivative(k, x, y, nx, ny) - dxy),
              1e-10 * std::abs(dxy));
  }
}

TEST(HypersingularIntegrals, LaplaceSelfTermOfEquilateralTriangle) {
  // Finite part at the centroid: -(1/4 pi) integral over angles of 1 / rho_max = -9 / (2 pi s).
  const double s = 0.7;
  const Vec3 a{0, 0, 0}, b{s, 0, 0}, c{s / 2, s * std::sqrt(3.0) / 2, 0};
  const Vec3 centroid = (a + b + c) * (1.0 / 3), n{0, 0, 1};
  const HypersingularIntegrals got =
      hypersingular_integrals(0.0, a, b, c, centroid, n, GaussLegendre(16));
  EXPECT_NEAR(got.hypersingular.real(), -9.0 / (2 * pi * s), 1e-14);
  EXPECT_EQ(got.hypersingular.imag(), 0.0);
  EXPECT_EQ(got.adjoint_double_layer, cplx(0.0));  // flat: (x - y) . n_x = 0
  EXPECT_EQ(got.double_layer, cplx(0.0));
  EXPECT_NEAR(got.single_layer.real(), std::sqrt(3.0) * s * std::log(2 + std::sqrt(3.0)) * inv_4pi,
              1e-15);
}

// 1 / rho_max(theta) from x inside the triangle, the ray's exit through the nearest edge line.
double inverse_exit_distance(const Triangle& t, const Vec3& x, const Vec3& dir) {
  const Vec3 n = t.normal();
  const std::array<Vec3, 3> v{t.a, t.b, t.c};
  double best = 1e300;
  for (int e = 0; e < 3; ++e) {
    const Vec3 m = cross(normalized(v[(e + 1) % 3] - v[e]), n);
    const double along = dot(dir, m);
    if (along > 0) best = std::min(best, dot(v[e] - x, m) / along);
  }
  return 1.0 / best;
}

TEST(HypersingularIntegrals, LaplaceSelfTermAgreesWithPolarFinitePart) {
  // FP of the integral of 1/(4 pi rho^3) over T = -(1/4 pi) integral of dtheta / rho_max(theta)
  // (polar coordinates: integral of rho^-2 drho from eps minus the 2 pi / eps of the disc).
  // rho_max by ray intersection, theta by 40-point Gauss-Legendre between the corner
  // directions, where 1/rho_max = cos(theta - theta_e) / d_e is analytic: exact to rounding.
  const Triangle& t = scalene;
  const Vec3 n = t.normal();
  const Vec3 e1 = normalized(t.b - t.a), e2 = cross(n, e1);
  const GaussLegendre gl(40);
  for (const Vec3& x :
       {t.centroid(), t.a * 0.6 + t.b * 0.3 + t.c * 0.1, t.a * 0.05 + t.b * 0.05 + t.c * 0.9}) {
    std::array<double, 4> corner_angles;
    const std::array<Vec3, 3> v{t.a, t.b, t.c};
    for (int i = 0; i < 3; ++i) corner_angles[i] = std::atan2(dot(v[i] - x, e2), dot(v[i] - x, e1));
    std::sort(corner_angles.begin(), corner_angles.begin() + 3);
    corner_angles[3] = corner_angles[0] + 2 * pi;
    double integral = 0;
    for (int i = 0; i < 3; ++i) {
      const double lo = corner_angles[i], hi = corner_angles[i + 1];
      for (std::size_t q = 0; q < gl.size(); ++q) {
        const double th = 0.5 * (lo + hi) + 0.5 * (hi - lo) * gl.nodes[q];
        integral += 0.5 * (hi - lo) * gl.weights[q] *
                    inverse_exit_distance(t, x, e1 * std::cos(th) + e2 * std::sin(th));
      }
    }
    const double want = -inv_4pi * integral;
    const cplx got = hypersingular(0.0, t.a, t.b, t.c, x, n, GaussLegendre(16));
    EXPECT_NEAR(got.real(), want, 1e-14 * std::abs(want));
    // D' = 0 up to the rounding of n . m_e (~1e-16) times the edge integrals (~1).
    EXPECT_LT(std::abs(adjoint_double_layer(0.0, t.a, t.b, t.c, x, n, GaussLegendre(16))), 1e-15);
  }
}

// Integral of r = |x - y| over the triangle for x in its plane (from panel_integrals_test.cpp):
// sum over edge sectors of d^3/3 * integral of sec^3, integral of sec^3 = (sec tan + asinh tan)/2.
double in_plane_integral_of_r(const Triangle& t, const Vec3& x) {
  const Vec3 n = t.normal();
  const std::array<Vec3, 3> v{t.a, t.b, t.c};
  double sum = 0;
  for (int e = 0; e < 3; ++e) {
    const Vec3 v1 = v[e], v2 = v[(e + 1) % 3];
    const Vec3 s = normalized(v2 - v1);
    const double d = dot(v1 - x, cross(s, n));
    if (std::abs(d) < 1e-15) continue;
    auto f = [&](double tt) {
      const double tan = tt / std::abs(d), sec = std::sqrt(1 + tan * tan);
      return 0.5 * (sec * tan + std::asinh(tan));
    };
    sum +=
        (d > 0 ? 1 : -1) * std::pow(std::abs(d), 3) / 3 * (f(dot(v2 - x, s)) - f(dot(v1 - x, s)));
  }
  return sum;
}

TEST(HypersingularIntegrals, HelmholtzSelfTermAgreesWithSubdivision) {
  // In the plane (n_x = n_y, (y - x) . n = 0) the kernel is -G'(rho)/rho; its Helmholtz
  // remainder -(G'_k - G'_0)/rho = -k^2 f(k rho) / (4 pi rho), f(z) = -1/2 - iz/3 + z^2/8 + ...,
  // is weakly singular: the three leading terms k^2/(8 pi rho) + i k^3/(12 pi) - k^4 rho/(32 pi)
  // in closed form, the O(rho^2) rest by uniform subdivision (4^6 triangles, 7-point rule: the
  // rest's kink at x leaves ~(h/size)^5 of its size, under 1e-10 of N here).
  const Triangle& t = scalene;
  const Vec3 n = t.normal();
  const GaussLegendre angular(16);
  for (const Vec3& x : {t.centroid(), t.a * 0.6 + t.b * 0.3 + t.c * 0.1}) {
    const double area = 0.5 * norm(cross(t.b - t.a, t.c - t.a));
    const double inv_r = laplace_single_layer_in_plane(t.a, t.b, t.c, x) / inv_4pi;
    for (double k : {1.0, 8.0}) {
      cplx want = hypersingular(0.0, t.a, t.b, t.c, x, n, angular) + k * k / (8 * pi) * inv_r +
                  cplx(0, k * k * k / (12 * pi)) * area -
                  std::pow(k, 4) / (32 * pi) * in_plane_integral_of_r(t, x);
      const Kernel rest = [&](const Vec3& y) {
        const double r = norm(y - x), z = k * r;
        // f(z) + 1/2 + iz/3 - z^2/8 = sum over m >= 5 of (iz)^m (m - 1) / m! / z^2: the series
        // where the closed form cancels.
        cplx f;
        if (z < 0.3) {
          cplx s{}, p(1, 0);
          double fact = 1;
          for (int m = 1; m < 30; ++m) {
            p *= cplx(0, z);
            fact *= m;
            if (m >= 5) s += p * (double(m - 1) / fact);
          }
          f = s / (z * z);
        } else {
          f = (cplx(std::cos(z), std::sin(z)) * cplx(-1, z) + 1.0) / (z * z) + 0.5 +
              cplx(0, z / 3) - z * z / 8;
        }
        return -k * k * f * inv_4pi / r;
      };
      const int m = 64;
      auto point = [&](double i, double j) {
        return t.a + (t.b - t.a) * (i / m) + (t.c - t.a) * (j / m);
      };
      for (int i = 0; i < m; ++i)
        for (int j = 0; i + j < m; ++j) {
          want += rule7(rest, point(i, j), point(i + 1, j), point(i, j + 1));
          if (i + j + 1 < m)
            want += rule7(rest, point(i + 1, j + 1), point(i, j + 1), point(i + 1, j));
        }
      const cplx got = hypersingular(k, t.a, t.b, t.c, x, n, angular);
      EXPECT_LT(std::abs(got - want), 1e-10 * std::abs(want))
          << "k=" << k << " got " << got << " want " << want;
      std::printf("self k=%g: |N - ref| = %.2e (|N| = %.3e)\n", k, std::abs(got - want),
                  std::abs(want));
    }
  }
}

struct Target {
  const char* where;
  Vec3 x;
};

// Targets at f element sizes from the scalene triangle: above the centroid, beside an edge in
// the plane, beside and above an edge, beyond and below a corner.
std::vector<Target> targets(const Triangle& t, double f) {
  const Vec3 n = t.normal();
  const double size = t.size() * f;
  const Vec3 mid = (t.a + t.b) * 0.5;
  const Vec3 out = cross(normalized(t.b - t.a), n);  // outward in-plane normal of edge ab
  const Vec3 corner_out = normalized(t.b - t.centroid());
  return {{"above the centroid", t.centroid() + n * size},
          {"beside edge ab, in the plane", mid + out * size},
          {"above and beside edge ab", mid + (out + n) * (size / std::sqrt(2.0))},
          {"beyond corner b, below", t.b + (corner_out - n * 0.5) * size}};
}

// Closer than one size only the targets above the centroid and above-and-beside an edge are
// taken: in the plane beside an edge or below a corner the adaptive reference resolves a line
// singularity of the kernel along the whole edge and takes minutes a case (measured at 0.1
// sizes). Those two are checked at 1 size; nearly coplanar neighbours closer than that
// are covered by ClosedSurfaceIdentities (N[1] = 0 to 1e-13 summed over every pair of an
// icosphere, neighbours included).
TEST(HypersingularIntegrals, NearAndFarAgreeWithAdaptiveSubdivision) {
  const Triangle& t = scalene;
  const Vec3 n = t.normal();
  const GaussLegendre angular(16);
  const Vec3 tilted = normalized(n + Vec3{0.7, -0.4, 0.3});
  double worst = 0;
  // f = 1e-3 also agrees (D' 1e-13, N 9e-11 measured above the centroid) but its reference
  // takes 10-20 s a case: left out of the unit test.
  // Ten sizes and beyond is the regular rule's range (and 18 s a case for the reference).
  for (double f : {1e-2, 1e-1, 1.0})
    for (const Target& target : targets(t, f))
      for (const Vec3& nx : {n, tilted}) {
        const std::string where = target.where;
        if (f < 1.0 && where != "above the centroid" && where != "above and beside edge ab")
          continue;
        const auto start = std::chrono::steady_clock::now();
        for (double k : {0.0, 1.0, 8.0}) {
          const Vec3 x = target.x;
          const Kernel dprime = [&](const Vec3& y) {
            return green_target_normal_derivative(k, x, y, nx);
          };
          const Kernel hyper = [&](const Vec3& y) {
            return green_double_normal_derivative(k, x, y, nx, n);
          };
          // Scale: the integral of |kernel| (coarse; D' and N may vanish, e.g. D' = -D = 0 in
          // the plane), then the reference to 1e-12 of it (the accepted children's error is
          // far below their difference from the parent, which is bounded by tol summed over
          // leaves).
          const auto reference = [&](const Kernel& kernel) {
            const Kernel magnitude = [&](const Vec3& y) { return cplx(std::abs(kernel(y))); };
            const double rough = std::abs(rule7(magnitude, t.a, t.b, t.c));
            // A kernel zero up to rounding (D' with n_x = n in the plane) would never meet a
            // tolerance relative to itself: not below 1e-3 of the size of a 1/r^3 kernel.
            const double area = 0.5 * norm(cross(t.b - t.a, t.c - t.a));
            const double typical = area / (4 * pi * std::pow(norm(x - t.centroid()), 3));
            const double scale =
                std::max(std::abs(adaptive_integral(magnitude, t.a, t.b, t.c, 1e-3 * rough)),
                         1e-3 * typical);
            return std::pair{adaptive_integral(kernel, t.a, t.b, t.c, 1e-12 * scale), scale};
          };
          const auto [want_dp, scale_dp] = reference(dprime);
          const auto [want_n, scale_n] = reference(hyper);
          const HypersingularIntegrals got =
              hypersingular_integrals(k, t.a, t.b, t.c, x, nx, angular);
          // Relative to the integral of |kernel|: the reference is good to 1e-12 of it; ours
          // is built on panel_integrals' S and D, whose Helmholtz remainders (16 angular
          // points a sector) panel_integrals_test.cpp holds to 1e-9 of the Laplace part near
          // an edge, and on the closed-form Laplace parts (rounding of terms up to 1/f times
          // the result). D' = n_x . (-D n - sum of edge terms) and N = n_x . (n (k^2 S + ...) +
          // ...) add two such errors: 2e-9. Measured: 1e-13 for k = 0 everywhere, up to 9.5e-10
          // for D' at k = 8 at 1e-2 sizes above an edge.
          const double e_dp = std::abs(got.adjoint_double_layer - want_dp) / scale_dp;
          const double e_n = std::abs(got.hypersingular - want_n) / scale_n;
          worst = std::max({worst, e_dp, e_n});
          EXPECT_LT(e_dp, 2e-9) << target.where << " f=" << f << " k=" << k;
          EXPECT_LT(e_n, 2e-9) << target.where << " f=" << f << " k=" << k;
          std::printf(
              "%s f=%g k=%g: D' %.1e N %.1e (%.2f s)\n", target.where, f, k, e_dp, e_n,
              std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
        }
      }
  std::printf("near/far: worst relative error of D' and N against subdivision %.2e\n", worst);
}

TEST(HypersingularIntegrals, GradientsAreDerivativesOfThePanelIntegrals) {
  // D'(x) = d/de S(x + e n_x), N(x) = d/de D(x + e n_x) with the existing polar-method panel
  // integrals, off the surface. Richardson of central differences with steps e and 2e,
  // e = 1e-3 of the distance: truncation O(1e-12); the tolerance is the difference of the two
  // plain differences (an upper bound on the extrapolated one's truncation) plus the panel
  // integrals' rounding (1e-15 of their size) divided by e.
  const Triangle& t = scalene;
  const Vec3 n = t.normal();
  const GaussLegendre angular(24);
  const Vec3 tilted = normalized(n + Vec3{0.7, -0.4, 0.3});
  double worst = 0;
  for (double f : {1e-2, 1e-1, 1.0})
    for (const Target& target : targets(t, f)) {
      if (std::abs(dot(target.x - t.a, n)) < 1e-9) continue;  // D jumps across the plane
      for (double k : {0.0, 1.0, 8.0}) {
        const Vec3& x = target.x;
        const double e = 1e-3 * f * t.size();
        const auto at = [&](double s) {
          return panel_integrals(k, t.a, t.b, t.c, x + tilted * s, angular);
        };
        const PanelIntegrals p1 = at(e), m1 = at(-e), p2 = at(2 * e), m2 = at(-2 * e);
        const cplx ds1 = (p1.single_layer - m1.single_layer) / (2 * e);
        const cplx ds2 = (p2.single_layer - m2.single_layer) / (4 * e);
        const cplx dd1 = (p1.double_layer - m1.double_layer) / (2 * e);
        const cplx dd2 = (p2.double_layer - m2.double_layer) / (4 * e);
        const HypersingularIntegrals got =
            hypersingular_integrals(k, t.a, t.b, t.c, x, tilted, angular);
        const double tol_s = std::abs(ds1 - ds2) + 1e-15 * std::abs(p1.single_layer) / e;
        const double tol_d = std::abs(dd1 - dd2) + 1e-15 * (std::abs(p1.double_layer) + 1) / e;
        EXPECT_LT(std::abs(got.adjoint_double_layer - (4.0 * ds1 - ds2) / 3.0), tol_s)
            << target.where << " f=" << f << " k=" << k;
        EXPECT_LT(std::abs(got.hypersingular - (4.0 * dd1 - dd2) / 3.0), tol_d)
            << target.where << " f=" << f << " k=" << k;
        worst = std::max(worst, std::abs(got.hypersingular - (4.0 * dd1 - dd2) / 3.0) /
                                    std::abs(got.hypersingular));
      }
    }
  std::printf("gradient identity: worst relative difference of N %.2e\n", worst);
}

// One collocation point x_0 of an icosphere (radius 1) and the sums over all elements of D'
// and N for the Laplace kernel: accurate integrals everywhere, or accurate for close pairs
// (|x_0 - c_j| < 2.5 R_j, as the near field) and the 3-point rule for the rest.
struct ClosedSurfaceSums {
  double dprime_accurate = 0, n_accurate = 0, n_abs = 0, dprime_mixed = 0, n_mixed = 0;
};

ClosedSurfaceSums closed_surface_sums(int level, int rule_points) {
  const Mesh mesh = Mesh::from_surface(make_icosphere(level, 1.0), "icosphere");
  const Discretization disc(mesh, rule_points);
  const GaussLegendre angular(16);
  const std::size_t i = 0;
  const Vec3 x = mesh.centroids()[i], nx = mesh.normals()[i];
  ClosedSurfaceSums s;
  for (std::size_t j = 0; j < mesh.size(); ++j) {
    const HypersingularIntegrals acc = hypersingular_integrals(
        0.0, mesh.corner(j, 0), mesh.corner(j, 1), mesh.corner(j, 2), x, nx, angular);
    s.dprime_accurate += acc.adjoint_double_layer.real();
    s.n_accurate += acc.hypersingular.real();
    s.n_abs += std::abs(acc.hypersingular);
    const Vec3& c = mesh.centroids()[j];
    const double radius = std::max(
        {norm(mesh.corner(j, 0) - c), norm(mesh.corner(j, 1) - c), norm(mesh.corner(j, 2) - c)});
    if (norm(x - c) < 2.5 * radius) {
      s.dprime_mixed += acc.adjoint_double_layer.real();
      s.n_mixed += acc.hypersingular.real();
    } else {
      const RegularBurtonMiller reg = regular_burton_miller_integrals(disc, 0.0, j, x, nx);
      s.dprime_mixed += reg.adjoint_double_layer.real();
      s.n_mixed += reg.hypersingular.real();
    }
  }
  return s;
}

TEST(HypersingularIntegrals, ClosedSurfaceIdentities) {
  // N applied to 1 is the normal derivative of D[1], which is -1 inside a closed surface and 0
  // outside: with every pair integrated accurately the sum is 0 on the polyhedron itself (it is
  // closed), to the rounding of the sum of |N_j|. With the 3-point rule for far pairs it is the
  // rule's error, which falls under refinement. D'[1] at a smooth point of a closed surface
  // with outward normals is -1/2 (the direct value: the exterior limit of dS[1]/dn is
  // D'[1] - 1/2 = -1, the interior one D'[1] + 1/2 = 0 for the unit sphere, S[1] = 1 inside,
  // 1/|x| outside); on the inscribed polyhedron the difference falls as the geometry's error.
  double previous_dp = 0;
  for (int level = 2; level <= 5; ++level) {
    const ClosedSurfaceSums s = closed_surface_sums(level, 7);
    const ClosedSurfaceSums s3 = closed_surface_sums(level, 3);
    std::printf(
        "icosphere:%d  sum N: accurate %.2e (sum |N| %.2e), near + 7-point %.2e, near + 3-point "
        "%.2e;  sum D' + 1/2: accurate %.2e, near + 7-point %.2e\n",
        level, s.n_accurate, s.n_abs, s.n_mixed, s3.n_mixed, s.dprime_accurate + 0.5,
        s.dprime_mixed + 0.5);
    EXPECT_LT(std::abs(s.n_accurate), 1e-13 * s.n_abs) << level;
    // The regular rule's error for N summed over the far pairs beyond 2.5 R: per pair
    // ~ area h^(p+1) / r^(p+4) for a degree-p rule, summed from r ~ 2.5 h it is
    // ~ h^(p-2) / 2.5^(p+2) relative to sum |N| ~ 1/h: for the 3-point rule (p = 2) a constant
    // (measured 3e-5, it does not fall), for the 7-point (p = 5) O(h^3) (measured 1.8e-6 at
    // level 2, then 1e-7 and below, not monotone: the first ring's irregular geometry).
    // Bounds = measured values times 1.5: a regression check, not a derived tolerance.
    EXPECT_LT(std::abs(s.n_mixed), 2.7e-6 * s.n_abs) << level;
    EXPECT_LT(std::abs(s3.n_mixed), 4.5e-5 * s3.n_abs) << level;
    if (level > 2) {
      // D'[1] + 1/2 on the inscribed polyhedron: O(h), the kinks between neighbouring faces.
      EXPECT_LT(std::abs(s.dprime_accurate + 0.5), std::abs(previous_dp) / 1.8) << level;
    }
    previous_dp = s.dprime_accurate + 0.5;
  }
}

}  // namespace
}  // namespace fmbem
