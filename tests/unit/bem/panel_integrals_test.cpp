#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <numbers>

#include "fmbem/bem/panel_integrals.hpp"
#include "fmbem/kernel/kernel.hpp"
#include "fmbem/quadrature/triangle_rule.hpp"

namespace fmbem {
namespace {

constexpr double pi = std::numbers::pi;

// Independent references. The Laplace parts by classical closed forms: the
// single layer of a flat triangle at any point (Wilton et al. 1984, Graglia
// 1993) and the double layer as minus the solid angle over 4 pi (Van
// Oosterom & Strackee 1983). The Helmholtz remainders (G_k - G_0 and its
// normal derivative, bounded and smooth but for a kink at r = 0) by uniform
// subdivision with the 7-point rule.
double wilton_laplace_single(const Vec3& a, const Vec3& b, const Vec3& c, const Vec3& x) {
  const Vec3 n = normalized(cross(b - a, c - a));
  const double h = dot(x - a, n);
  const Vec3 p = x - n * h;
  const std::array<Vec3, 3> v{a, b, c};
  double sum = 0;
  for (int e = 0; e < 3; ++e) {
    const Vec3 v1 = v[e], v2 = v[(e + 1) % 3];
    const Vec3 s = normalized(v2 - v1);
    const Vec3 m = cross(s, n);  // outward in-plane edge normal
    const double d = dot(v1 - p, m);
    const double t1 = dot(v1 - p, s), t2 = dot(v2 - p, s);
    const double r0sq = d * d + h * h;
    const double r1 = std::sqrt(t1 * t1 + r0sq), r2 = std::sqrt(t2 * t2 + r0sq);
    double term = 0;
    if (std::abs(d) > 1e-15) term += d * std::log((r2 + t2) / (r1 + t1));
    if (std::abs(h) > 1e-15)
      term -= std::abs(h) * (std::atan(d * t2 / (r0sq + std::abs(h) * r2)) -
                             std::atan(d * t1 / (r0sq + std::abs(h) * r1)));
    sum += term;
  }
  return inv_4pi * sum;
}

double solid_angle_double_layer(const Vec3& a, const Vec3& b, const Vec3& c, const Vec3& x) {
  const Vec3 ra = a - x, rb = b - x, rc = c - x;
  const double la = norm(ra), lb = norm(rb), lc = norm(rc);
  const double numerator = dot(ra, cross(rb, rc));
  // x in the plane: the principal value is 0 (atan2 would give +-pi inside).
  if (std::abs(numerator) <= 1e-14 * la * lb * lc) return 0.0;
  const double denominator = la * lb * lc + dot(ra, rb) * lc + dot(ra, rc) * lb + dot(rb, rc) * la;
  return -2.0 * std::atan2(numerator, denominator) * inv_4pi;
}

// Integral of r = |x - y| over the triangle for x in its plane:
// sum over edge sectors of dist^3/3 * integral of sec^3, with
// integral of sec^3 = (sec tan + asinh(tan)) / 2.
double in_plane_integral_of_r(const Vec3& a, const Vec3& b, const Vec3& c, const Vec3& x) {
  const Vec3 n = normalized(cross(b - a, c - a));
  const std::array<Vec3, 3> v{a, b, c};
  double sum = 0;
  for (int e = 0; e < 3; ++e) {
    const Vec3 v1 = v[e], v2 = v[(e + 1) % 3];
    const Vec3 s = normalized(v2 - v1);
    const double d = dot(v1 - x, cross(s, n));  // signed: > 0 when x is inside
    if (std::abs(d) < 1e-15) continue;
    auto f = [&](double t) {
      const double tan = t / std::abs(d), sec = std::sqrt(1 + tan * tan);
      return 0.5 * (sec * tan + std::asinh(tan));
    };
    sum +=
        (d > 0 ? 1 : -1) * std::pow(std::abs(d), 3) / 3 * (f(dot(v2 - x, s)) - f(dot(v1 - x, s)));
  }
  return sum;
}

// k complex: the screened kernel is k = i kappa (exp(ikr) = exp(-kappa r)).
PanelIntegrals reference(cplx k, const Vec3& a, const Vec3& b, const Vec3& c, const Vec3& x,
                         int levels) {
  const Vec3 n = normalized(cross(b - a, c - a));
  const double h = dot(x - a, n);
  const bool in_plane = std::abs(h) < 1e-14;
  const double area = 0.5 * norm(cross(b - a, c - a));
  const TriangleRule& rule = triangle_rule(7);
  const int m = 1 << levels;
  const cplx i(0.0, 1.0);
  cplx single{}, dbl{};
  // In the plane the remainder (exp(ikr) - 1)/r = ik - k^2 r/2 + O(r^2) has a
  // kink at x; its first two terms are integrated in closed form and the
  // smooth rest numerically.
  if (in_plane)
    single = inv_4pi * (i * k * area - 0.5 * k * k * in_plane_integral_of_r(a, b, c, x));
  // Uniform subdivision into m^2 triangles of the barycentric grid.
  auto point = [&](double i, double j) { return a + (b - a) * (i / m) + (c - a) * (j / m); };
  const double sub_area = area / (m * m);
  for (int i = 0; i < m; ++i)
    for (int j = 0; i + j < m; ++j)
      for (int up = 0; up < (i + j + 1 < m ? 2 : 1); ++up) {
        const Vec3 p0 = up ? point(i + 1, j + 1) : point(i, j);
        const Vec3 p1 = up ? point(i, j + 1) : point(i + 1, j);
        const Vec3 p2 = up ? point(i + 1, j) : point(i, j + 1);
        for (std::size_t q = 0; q < rule.size(); ++q) {
          const auto& l = rule.barycentric[q];
          const Vec3 y = p0 * l[0] + p1 * l[1] + p2 * l[2];
          const double r = norm(x - y), w = rule.weights[q] * sub_area;
          const cplx z = cplx(0.0, 1.0) * k * r, e = std::exp(z);
          if (in_plane) {
            // (exp(z) - 1 - z - z^2/2) / r, by series for small |z|.
            const cplx rest = std::abs(z) < 1e-2 ? (z * z * z / 6.0 + z * z * z * z / 24.0) / r
                                                 : (e - 1.0 - z - 0.5 * z * z) / r;
            single += w * inv_4pi * rest;
            continue;  // (y - x).n = 0: no double layer
          }
          single += w * inv_4pi * (e - 1.0) / r;
          // normal derivative of (exp(ikr) - 1)/r: (exp(ikr)(ikr - 1) + 1)/r^2 * (y - x).n / r
          dbl += w * inv_4pi * (e * (z - 1.0) + 1.0) / (r * r) * (-h) / r;
        }
      }
  return {single + wilton_laplace_single(a, b, c, x), dbl + solid_angle_double_layer(a, b, c, x)};
}

struct Case {
  const char* name;
  Vec3 x;
};

TEST(PanelIntegrals, LaplaceSelfTermOfEquilateralTriangle) {
  // At the centroid of an equilateral triangle of side s: integral of 1/r
  // is sqrt(3) s ln(2 + sqrt(3)).
  const double s = 0.7;
  const Vec3 a{0, 0, 0}, b{s, 0, 0}, c{s / 2, s * std::sqrt(3.0) / 2, 0};
  const Vec3 centroid = (a + b + c) * (1.0 / 3);
  const double exact = std::sqrt(3.0) * s * std::log(2 + std::sqrt(3.0)) * inv_4pi;
  EXPECT_NEAR(laplace_single_layer_in_plane(a, b, c, centroid), exact, 1e-15);
  const PanelIntegrals p = panel_integrals(0.0, a, b, c, centroid, GaussLegendre(8));
  EXPECT_NEAR(p.single_layer.real(), exact, 1e-15);
  EXPECT_EQ(p.single_layer.imag(), 0.0);
  EXPECT_EQ(p.double_layer, cplx(0.0));  // flat element: (y - x).n = 0
  // From the right-angle corner of the unit right isosceles triangle:
  // integral of rho_max(phi) over [0, pi/2] = sqrt(2) ln(1 + sqrt(2)).
  EXPECT_NEAR(laplace_single_layer_in_plane({0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 0}),
              std::sqrt(2.0) * std::log(1 + std::sqrt(2.0)) * inv_4pi, 1e-15);
}

TEST(PanelIntegrals, AgreesWithIndependentReferences) {
  // A scalene triangle tilted in space.
  const Vec3 a{0.1, -0.2, 0.05}, b{0.9, 0.1, -0.1}, c{0.3, 0.7, 0.2};
  const Vec3 n = normalized(cross(b - a, c - a));
  const Vec3 centroid = (a + b + c) * (1.0 / 3);
  const Vec3 outside_in_plane = b + (b - a) * 0.3;  // beyond a vertex, in the plane
  const Case cases[] = {
      {"centroid (self)", centroid},
      {"off-centre interior point", a * 0.6 + b * 0.3 + c * 0.1},
      {"in plane, outside", outside_in_plane},
      {"near the edge, outside", (a + b) * 0.5 - (c - (a + b) * 0.5) * 0.3},
      {"just above the centroid", centroid + n * 0.02},
      {"below an edge", (b + c) * 0.5 - n * 0.1},
      {"neighbour's centroid", (a + b) * 0.5 - (c - (a + b) * 0.5) * 0.33 + n * 0.03},
      {"far", centroid + n * 2.0 + Vec3{1, 1, 0}},
  };
  const GaussLegendre angular(24);
  for (double k : {0.0, 1.0, 8.0}) {
    for (const Case& cs : cases) {
      const PanelIntegrals got = panel_integrals(k, a, b, c, cs.x, angular);
      const PanelIntegrals want = reference(cplx(k), a, b, c, cs.x, 6);
      // The reference's remainder (size^2 times a bounded kernel kink, 4096
      // subtriangles) is good to ~1e-9 of the Laplace part; the closed forms
      // to rounding. The S scale is ~area/(4 pi dist) ~ 0.05.
      const double scale_s = std::abs(want.single_layer);
      EXPECT_NEAR(got.single_layer.real(), want.single_layer.real(), 1e-9 * scale_s + 1e-12)
          << cs.name << " k=" << k;
      EXPECT_NEAR(got.single_layer.imag(), want.single_layer.imag(), 1e-9 * scale_s + 1e-12)
          << cs.name << " k=" << k;
      EXPECT_NEAR(got.double_layer.real(), want.double_layer.real(), 1e-9) << cs.name << " k=" << k;
      EXPECT_NEAR(got.double_layer.imag(), want.double_layer.imag(), 1e-9) << cs.name << " k=" << k;
    }
  }
}

// The screened kernel exp(-kappa r) / (4 pi r) against the same references at k = i kappa:
// its remainder (exp(-kappa r) - 1) / r is as smooth as the Helmholtz one and of the same size
// for the same |k|, so the same 1e-9 holds; the results are real.
TEST(PanelIntegrals, ScreenedAgreesWithIndependentReferences) {
  const Vec3 a{0.1, -0.2, 0.05}, b{0.9, 0.1, -0.1}, c{0.3, 0.7, 0.2};
  const Vec3 n = normalized(cross(b - a, c - a));
  const Vec3 centroid = (a + b + c) * (1.0 / 3);
  const Case cases[] = {
      {"centroid (self)", centroid},
      {"off-centre interior point", a * 0.6 + b * 0.3 + c * 0.1},
      {"in plane, outside", b + (b - a) * 0.3},
      {"just above the centroid", centroid + n * 0.02},
      {"below an edge", (b + c) * 0.5 - n * 0.1},
      {"far", centroid + n * 2.0 + Vec3{1, 1, 0}},
  };
  const GaussLegendre angular(24);
  for (double kappa : {1.0, 8.0}) {
    for (const Case& cs : cases) {
      const PanelIntegrals got = screened_panel_integrals(kappa, a, b, c, cs.x, angular);
      const PanelIntegrals want = reference(cplx(0.0, kappa), a, b, c, cs.x, 6);
      const double scale_s = std::abs(want.single_layer);
      EXPECT_NEAR(got.single_layer.real(), want.single_layer.real(), 1e-9 * scale_s + 1e-12)
          << cs.name << " kappa=" << kappa;
      EXPECT_NEAR(got.double_layer.real(), want.double_layer.real(), 1e-9)
          << cs.name << " kappa=" << kappa;
      EXPECT_EQ(got.single_layer.imag(), 0.0);
      EXPECT_EQ(got.double_layer.imag(), 0.0);
    }
  }
}

TEST(PanelIntegrals, DoubleLayerJumpsByOneAcrossTheTriangle) {
  // Approaching an interior point from either side, D tends to +-1/2 of the
  // full-plane value times the solid angle: the difference tends to 1.
  const Vec3 a{0, 0, 0}, b{1, 0, 0}, c{0, 1, 0};
  const Vec3 x{0.25, 0.25, 0};
  const GaussLegendre angular(24);
  const double eps = 1e-7;
  const cplx above = panel_integrals(3.0, a, b, c, x + Vec3{0, 0, eps}, angular).double_layer;
  const cplx below = panel_integrals(3.0, a, b, c, x - Vec3{0, 0, eps}, angular).double_layer;
  // O(eps / distance to the edges) corrections: 1e-6 covers them.
  EXPECT_NEAR((above - below).real(), 1.0, 1e-6);
  EXPECT_NEAR((above - below).imag(), 0.0, 1e-6);
}

}  // namespace
}  // namespace fmbem
