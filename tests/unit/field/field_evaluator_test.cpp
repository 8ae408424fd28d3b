// The field off the surface: inside/outside/on the surface, the FMM against the direct sum, the
// representation formula with exact surface data against the Mie series and the monopole under
// refinement (also within one element size of the surface), and the far-field amplitude.
#include "fmbem/field/field_evaluator.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <limits>
#include <numbers>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

#include "../bem/bem_test_support.hpp"
#include "fmbem/bem/point_strengths.hpp"
#include "fmbem/core/error.hpp"
#include "fmbem/exact/incident.hpp"
#include "fmbem/exact/sphere.hpp"
#include "fmbem/exact/sphere_field.hpp"
#include "fmbem/field/far_field.hpp"
#include "fmbem/field/field_limits.hpp"
#include "fmbem/field/problem_field.hpp"
#include "fmbem/fmm/direct_sum.hpp"
#include "fmbem/fmm/gpu_device.hpp"
#include "fmbem/mesh/mesh.hpp"

namespace fmbem::field {
namespace {

constexpr double kPi = std::numbers::pi;
constexpr double kEps = std::numeric_limits<double>::epsilon();

std::vector<Vec3> fibonacci(int n, double radius, const Vec3& center = {}) {
  std::vector<Vec3> out;
  const double golden = kPi * (3.0 - std::sqrt(5.0));
  for (int i = 0; i < n; ++i) {
    const double z = 1.0 - 2.0 * (i + 0.5) / n, rho = std::sqrt(1.0 - z * z);
    out.push_back(center +
                  Vec3{rho * std::cos(golden * i), rho * std::sin(golden * i), z} * radius);
  }
  return out;
}

FieldOptions cpu_options(double tolerance = 1e-4) {
  FieldOptions options;
  options.fmm.tolerance = tolerance;
  options.fmm.device = fmm::FmmOptions::Device::cpu;
  return options;
}

using test::relative_error;

// Two unit spheres 3 apart: the gap between them is inside both bounding boxes' union but
// outside the body, where only the solid angle (not the box) can tell.
Mesh two_spheres() {
  Surface a = make_icosphere(3, 1.0, {-1.5, 0, 0}), b = make_icosphere(3, 1.0, {1.5, 0, 0});
  const auto offset = std::int32_t(a.vertices.size());
  a.vertices.insert(a.vertices.end(), b.vertices.begin(), b.vertices.end());
  for (Triangle t : b.triangles)
    a.triangles.push_back({t[0] + offset, t[1] + offset, t[2] + offset});
  return Mesh::from_surface(a, "two spheres");
}

TEST(FieldGeometry, TellsInsideOutsideAndSurface) {
  const Mesh mesh = two_spheres();
  const Discretization disc(mesh, 3);
  std::vector<Vec3> points;
  std::vector<PointLocation> expected;
  const auto add = [&](const Vec3& x, PointLocation where) {
    points.push_back(x);
    expected.push_back(where);
  };
  for (const Vec3& c : {Vec3{-1.5, 0, 0}, Vec3{1.5, 0, 0}}) {
    add(c, PointLocation::interior);
    for (const Vec3& x : fibonacci(30, 0.9, c)) add(x, PointLocation::interior);
    for (const Vec3& x : fibonacci(30, 1.05, c)) add(x, PointLocation::exterior);
  }
  add({0, 0, 0}, PointLocation::exterior);    // between the spheres, inside the box
  add({0, 0.9, 0}, PointLocation::exterior);  // the same, off the axis
  add({1e3, -2e3, 5e2}, PointLocation::exterior);
  // On and next to the surface: every 37th element's centroid, a vertex and an edge midpoint,
  // 1e-7 R off the centroid (R the element's radius: within the surface tolerance 1e-6 R), and
  // 1e-5 R and 1e-2 R off it on either side (the first far below the angular quadrature's reach:
  // the exact solid angles decide there).
  for (std::size_t e = 0; e < mesh.size(); e += 37) {
    const Vec3& c = mesh.centroids()[e];
    const Vec3& n = mesh.normals()[e];
    const double r = norm(mesh.corner(e, 0) - c);
    add(c, PointLocation::surface);
    add(mesh.corner(e, 0), PointLocation::surface);
    add((mesh.corner(e, 1) + mesh.corner(e, 2)) * 0.5, PointLocation::surface);
    add(c + n * (1e-7 * r), PointLocation::surface);
    for (double d : {1e-5 * r, 1e-2 * r}) {
      add(c + n * d, PointLocation::exterior);
      add(c - n * d, PointLocation::interior);
    }
  }
  for (bool fmm : {true, false}) {
    FieldOptions options = cpu_options();
    options.use_fmm = fmm;
    const FieldGeometry geometry(disc, points, options);
    for (std::size_t i = 0; i < points.size(); ++i)
      EXPECT_EQ(int(geometry.locations()[i]), int(expected[i]))
          << "point " << i << " (" << points[i].x << ", " << points[i].y << ", " << points[i].z
          << "), fmm " << fmm;
    for (std::size_t i = 0; i < points.size(); ++i)
      if (expected[i] == PointLocation::surface) {
        const std::int32_t j = geometry.surface_element(i);
        ASSERT_GE(j, 0);
        const std::size_t e = std::size_t(j);
        const Vec3 &a = mesh.corner(e, 0), &b = mesh.corner(e, 1), &c = mesh.corner(e, 2);
        const double radius =
            std::max({norm(a - mesh.centroids()[e]), norm(b - mesh.centroids()[e]),
                      norm(c - mesh.centroids()[e])});
        EXPECT_LE(norm(closest_point_on_triangle(points[i], a, b, c) - points[i]),
                  options.surface_tolerance * radius);
      }
  }
}

// Interior points get NaN and no value; surface points the element's value; exterior ones the
// representation (here u = 1, q = 0 on a closed surface: D[1] = 0 outside, the solid angle).
TEST(FieldEvaluator, FlagsInteriorAndGivesSurfaceValues) {
  const Mesh mesh = Mesh::from_surface(make_icosphere(2, 1.0), "ico2");
  const Discretization disc(mesh, 3);
  const std::vector<Vec3> points = {{0, 0, 0}, mesh.centroids()[5], {0, 0, 2}, {3, 1, 0}};
  const FieldGeometry geometry(disc, points, cpu_options());
  EXPECT_EQ(geometry.count(PointLocation::interior), 1u);
  EXPECT_EQ(geometry.count(PointLocation::surface), 1u);
  EXPECT_EQ(geometry.count(PointLocation::exterior), 2u);
  const std::vector<cplx> ones(mesh.size(), 1.0);
  const FieldValues v = FieldEvaluator(geometry, 0.0).evaluate(ones, {}, {});
  EXPECT_TRUE(std::isnan(v.scattered[0].real()) && std::isnan(v.total[0].imag()));
  EXPECT_EQ(v.total[1], cplx(1.0));
  // Outside, D[1] at k = 0 is minus the solid angle over 4 pi: 0 for a closed surface; the
  // Gauss rule's error on the 320 triangles seen from 1 radius away is below 1e-3 (measured
  // 2e-5), the FMM's below its 1e-4.
  EXPECT_LT(std::abs(v.scattered[2]), 1e-3);
  EXPECT_LT(std::abs(v.scattered[3]), 1e-3);
  const std::vector<cplx> incident = {1.0, 2.0, 3.0, 4.0};
  const FieldValues w = FieldEvaluator(geometry, 0.0).evaluate(ones, {}, incident);
  EXPECT_EQ(w.scattered[1], cplx(1.0 - 2.0));
  EXPECT_EQ(w.total[2], w.scattered[2] + 3.0);
  EXPECT_THROW(FieldEvaluator(geometry, 0.0).evaluate(std::vector<cplx>(3), {}, {}), Error);
}

// Surface densities that jump from element to element (the sums' test data, not a field).
std::pair<std::vector<cplx>, std::vector<cplx>> rough_densities(const Mesh& mesh) {
  std::vector<cplx> u(mesh.size()), q(mesh.size());
  for (std::size_t e = 0; e < mesh.size(); ++e) {
    u[e] = std::polar(1.0 + 0.3 * std::sin(3.0 * e), 0.7 * e);
    q[e] = std::polar(0.5, -1.3 * e);
  }
  return {u, q};
}

// The FMM's field against the direct sum on the same Gauss points plus the same close-element
// terms: they differ by the FMM's error alone. fmm::order_for_tolerance calibrates p so that the
// relative MatMult error stays below the tolerance; the field's targets are other points of the
// same octree, so the same bound is asked of it. A plane 8 wide at k = 4 widens the octree to
// k w = 8 on level 2, so p is raised from 11 to 14 (sqrt(3) k w): the same bound must hold. A
// point 500 away would need p = 435: it is summed directly, the plane's points by the FMM.
TEST(FieldEvaluator, FmmMatchesTheDirectSum) {
  const Mesh mesh = Mesh::from_surface(make_icosphere(3, 1.0), "ico3");
  const Discretization disc(mesh, 3);
  const auto [u, q] = rough_densities(mesh);
  struct Setting {
    double k, tolerance, half_width;
    bool far_point;
    const char* note;
  };
  for (const Setting s :
       {Setting{2.0, 1e-4, 1.6, false, ""}, Setting{2.0, 1e-6, 1.6, false, ""},
        Setting{4.0, 1e-4, 4.0, false, "p raised from 11 to 14"},
        Setting{2.0, 1e-4, 1.6, true, "1 of the 1193 points lie beyond the FMM's low-frequency"}}) {
    std::vector<Vec3> points;
    const int n = 41;
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j)
        points.push_back({-s.half_width + 2 * s.half_width * i / (n - 1), 0.05,
                          -s.half_width + 2 * s.half_width * j / (n - 1)});
    if (s.far_point) points.push_back({500.0, 3.0, -2.0});
    FieldOptions fast = cpu_options(s.tolerance), direct = fast;
    direct.use_fmm = false;
    const FieldGeometry g_fast(disc, points, fast), g_direct(disc, points, direct);
    ASSERT_EQ(g_fast.exterior().size(), g_direct.exterior().size());
    const FieldEvaluator e_fast(g_fast, s.k), e_direct(g_direct, s.k);
    EXPECT_NE(e_fast.statistics().note.find(s.note), std::string::npos) << e_fast.statistics().note;
    EXPECT_EQ(e_direct.statistics().method, "direct sum");
    const FieldValues a = e_fast.evaluate(u, q, {}), b = e_direct.evaluate(u, q, {});
    std::vector<cplx> fa, fb;
    for (std::size_t i : g_fast.exterior()) {
      fa.push_back(a.scattered[i]);
      fb.push_back(b.scattered[i]);
    }
    const double error = relative_error(fa, fb);
    EXPECT_LT(error, s.tolerance) << "k = " << s.k << ", " << e_fast.statistics().method;
    char name[64], value[32];
    std::snprintf(name, sizeof name, "fmm_error_k%g_tolerance%g", s.k, s.tolerance);
    std::snprintf(value, sizeof value, "%.3g", error);
    RecordProperty(name, value);
  }
}

// With -fmm_device gpu the field's FMM (and the classification's) runs on the GPU, with the field
// points as its targets: the same tree and expansions as on the CPU, so the values agree to the
// GPU M2L's rounding (its schemes match the CPU's to 1e-12 relative: bench/results/gpu_m2l.md);
// 1e-10 leaves room for the sums' different order. Skipped only without a GPU.
TEST(FieldEvaluator, GpuFmmMatchesTheCpu) {
  std::string why;
  if (!fmm::gpu_available(&why)) GTEST_SKIP() << "no GPU: " << why;
  const Mesh mesh = Mesh::from_surface(make_icosphere(4, 1.0), "ico4");
  const Discretization disc(mesh, 3);
  std::vector<cplx> u(mesh.size()), q(mesh.size());
  for (std::size_t e = 0; e < mesh.size(); ++e) {
    u[e] = std::polar(1.0, 0.7 * e);
    q[e] = std::polar(0.5, -1.3 * e);
  }
  std::vector<Vec3> points;
  for (int i = 0; i < 60; ++i)
    for (int j = 0; j < 60; ++j) points.push_back({-3 + 6.0 * i / 59, 0.02, -3 + 6.0 * j / 59});
  FieldOptions cpu = cpu_options(), gpu = cpu;
  gpu.fmm.device = fmm::FmmOptions::Device::gpu;
  const FieldGeometry g_cpu(disc, points, cpu), g_gpu(disc, points, gpu);
  for (std::size_t i = 0; i < points.size(); ++i)
    ASSERT_EQ(g_cpu.locations()[i], g_gpu.locations()[i]) << "point " << i;
  const FieldEvaluator e_cpu(g_cpu, 6.0), e_gpu(g_gpu, 6.0);
  EXPECT_EQ(e_gpu.statistics().device, "gpu");
  const FieldValues a = e_cpu.evaluate(u, q, {}), b = e_gpu.evaluate(u, q, {});
  std::vector<cplx> fa, fb;
  for (std::size_t i : g_cpu.exterior()) {
    fa.push_back(a.scattered[i]);
    fb.push_back(b.scattered[i]);
  }
  EXPECT_LT(relative_error(fb, fa), 1e-10);
}

struct Data {
  std::vector<cplx> u, q;
};

// Exact surface data at the centroids, and the exact field: rigid or soft sphere (Mie), or a
// monopole at s radiating from the sphere (u = G, q = dG/dn).
struct Reference {
  enum Kind { rigid, soft, radiation } kind;
  double k;
  Vec3 source{0.2, -0.1, 0.3};
  exact::Incident incident = exact::Incident::plane_wave({0.3, 0.4, 1.0});

  Data data(const Mesh& mesh) const {
    Data d;
    std::vector<cplx> values(mesh.size());
    for (std::size_t e = 0; e < mesh.size(); ++e) {
      const Vec3& c = mesh.centroids()[e];
      if (kind == radiation) {
        d.u.push_back(exact::monopole(k, source, c));
        d.q.push_back(exact::monopole_normal_derivative(k, source, c, mesh.normals()[e]));
      }
    }
    if (kind != radiation) {
      const exact::SphereScattering mie(
          k, 1.0, {}, kind == rigid ? exact::SphereBoundary::Rigid : exact::SphereBoundary::Soft,
          incident);
      for (std::size_t e = 0; e < mesh.size(); ++e)
        values[e] = mie.surface_value(mesh.centroids()[e]);
      (kind == rigid ? d.u : d.q) = values;
    }
    return d;
  }
  cplx field(const Vec3& x) const {
    if (kind == radiation) return exact::monopole(k, source, x);
    return exact::SphereScatteredField(
               k, 1.0, {},
               kind == rigid ? exact::SphereBoundary::Rigid : exact::SphereBoundary::Soft, incident)
        .scattered(x);
  }
  cplx far_field(const Vec3& d) const {
    if (kind == radiation) return std::polar(0.25 / kPi, -k * dot(d, source));
    return exact::SphereScatteredField(
               k, 1.0, {},
               kind == rigid ? exact::SphereBoundary::Rigid : exact::SphereBoundary::Soft, incident)
        .far_field(d);
  }
};

// With the exact surface values at the centroids, the representation formula's error is that of
// the discretisation alone: the piecewise-constant density and the flat triangles integrate the
// smooth data with an O(h^2) error at points a fixed distance away (the density's linear part
// integrates to zero about the centroid against a kernel smooth on the element's scale: error
// ratio 4 per halving of h). At a distance of a fixed fraction of h (here 0.5 h and 0.1 h, within
// one element size), the kernel varies on the element's scale: the linear part leaves O(h), ratio
// 2. Required: > 3.5 and > 1.8 (the pre-asymptotic allowance for icosphere:2 to 4; measured
// 3.9 to 4.0 away, 2.1 to 3.9 near). The far-field amplitude integrates smooth data against
// e^{-ik d.y}: O(h^2), ratio > 3.5 (measured 3.9 to 4.0).
TEST(FieldEvaluator, ConvergesUnderRefinementUpToTheSurface) {
  for (const Reference& ref : {Reference{Reference::rigid, 4.0}, Reference{Reference::soft, 4.0},
                               Reference{Reference::radiation, 3.0}}) {
    std::vector<std::array<double, 4>> errors;  // near 0.5 h, near 0.1 h, away, far field
    for (int level = 2; level <= 4; ++level) {
      const Mesh mesh = Mesh::from_surface(make_icosphere(level, 1.0), "ico");
      const Discretization disc(mesh, 3);
      const Data data = ref.data(mesh);
      const double h = mesh.max_edge();
      std::array<double, 4> e{};
      const double radii[3] = {1.0 + 0.5 * h, 1.0 + 0.1 * h, 1.7};
      for (int s = 0; s < 3; ++s) {
        const std::vector<Vec3> points = fibonacci(100, radii[s]);
        // The direct sum: the FMM's own error is FmmMatchesTheDirectSum's.
        FieldOptions options = cpu_options();
        options.use_fmm = false;
        const FieldGeometry geometry(disc, points, options);
        ASSERT_EQ(geometry.exterior().size(), points.size());
        const FieldValues v = FieldEvaluator(geometry, ref.k).evaluate(data.u, data.q, {});
        std::vector<cplx> exact;
        for (const Vec3& x : points) exact.push_back(ref.field(x));
        e[s] = relative_error(v.scattered, exact);
      }
      const FarFieldDirections dirs = fibonacci_sphere(50);
      const std::vector<cplx> far =
          far_field_amplitude(disc, ref.k, data.u, data.q, dirs.directions);
      std::vector<cplx> exact_far;
      for (const Vec3& d : dirs.directions) exact_far.push_back(ref.far_field(d));
      e[3] = relative_error(far, exact_far);
      errors.push_back(e);
    }
    const char* names[4] = {"0.5 h from the surface", "0.1 h from the surface", "r = 1.7",
                            "far field"};
    const double rates[4] = {1.8, 1.8, 3.5, 3.5};
    for (int s = 0; s < 4; ++s)
      for (std::size_t l = 0; l + 1 < errors.size(); ++l) {
        const double ratio = errors[l][s] / errors[l + 1][s];
        EXPECT_GT(ratio, rates[s])
            << "kind " << ref.kind << ", " << names[s] << ", icosphere:" << l + 2 << " -> " << l + 3
            << ": " << errors[l][s] << " -> " << errors[l + 1][s];
        RecordProperty(std::string("ratio_") + std::to_string(ref.kind) + "_" + std::to_string(s) +
                           "_" + std::to_string(l),
                       std::to_string(ratio));
      }
    // And small: the near-surface error on icosphere:4 (5,120 elements) within 2.5e-2, the
    // level of the surface solution's own error on it.
    EXPECT_LT(errors.back()[1], 2.5e-2) << "kind " << ref.kind;
  }
}

// The discrete far-field amplitude is the limit of the discrete field: |x| e^{-ik|x|} u_s(x) at
// |x| = R differs from F by O((k D^2 + D) / R) relative (D the body's size; the phase of
// e^{ik|x - y|} to second order in y / R): R = 1e5 leaves 1e-4. The direct sum (no FMM error).
TEST(FarField, IsTheLimitOfTheField) {
  const Mesh mesh = Mesh::from_surface(make_icosphere(2, 1.0), "ico2");
  const Discretization disc(mesh, 3);
  const double k = 3.0, big = 1e5;
  const Data data = Reference{Reference::radiation, k}.data(mesh);
  const FarFieldDirections dirs = great_circle(12);
  std::vector<Vec3> points;
  for (const Vec3& d : dirs.directions) points.push_back(d * big);
  FieldOptions options = cpu_options();
  options.use_fmm = false;
  const FieldGeometry geometry(disc, points, options);
  const FieldValues v = FieldEvaluator(geometry, k).evaluate(data.u, data.q, {});
  const std::vector<cplx> far = far_field_amplitude(disc, k, data.u, data.q, dirs.directions);
  const double d = mesh.diameter();
  for (std::size_t i = 0; i < points.size(); ++i)
    EXPECT_LT(std::abs(big * std::polar(1.0, -k * big) * v.scattered[i] - far[i]),
              (k * d * d + d) / big * std::abs(far[i]));
}

// Points far beyond the body (1e12 to the largest coordinate 1e150) are summed in the far-field
// form, so their value is the far-field amplitude's limit to rounding: at x = R d (on an axis, so
// that |x| = R exactly and e^{ikR} is the same double for the test and the code)
//   R e^{-ikR} u_s(x) - F(d) = O((k D^2 + D) / R) |F|  (IsTheLimitOfTheField's bound)
//                              + the rounding of both sums, each below (N + 10) eps sum_j |term_j|
// (recursive summation of N terms, each of ~10 operations; sum_j |term_j| = sum of k |w u| /
// (4 pi) for the rigid sphere's data). The plain sum of
// |x - y_j| loses the phases between the elements (k r rounds to a multiple of 256 at r = 1e18)
// and its dipole 1/r^3 underflows beyond r = 1e102. A near point's value does not change, to the
// bit, when far points are added (they never enter the FMM's tree), FMM or not.
TEST(FieldEvaluator, FarPointsKeepTheirDigits) {
  const Mesh mesh = Mesh::from_surface(make_icosphere(2, 1.0), "ico2");
  const Discretization disc(mesh, 3);
  const double k = 2.0, d = mesh.diameter();
  const Reference ref{Reference::rigid, k};
  const Data data = ref.data(mesh);
  double condition = 0.0;
  for (std::size_t e = 0; e < mesh.size(); ++e)
    for (std::size_t g = 0; g < disc.points_per_element(); ++g)
      condition += disc.quadrature_weights()[e * disc.points_per_element() + g] * k *
                   std::abs(data.u[e]) / (4 * kPi);
  const double rounding = double(disc.quadrature_points().size() + 10) * kEps * condition;
  const Vec3 axes[6] = {{1, 0, 0}, {-1, 0, 0}, {0, 1, 0}, {0, -1, 0}, {0, 0, 1}, {0, 0, -1}};
  const std::vector<Vec3> directions(std::begin(axes), std::end(axes));
  const std::vector<cplx> far = far_field_amplitude(disc, k, data.u, data.q, directions);
  for (const bool use_fmm : {true, false}) {
    FieldOptions options = cpu_options();
    options.use_fmm = use_fmm;
    const std::vector<Vec3> near = {{2, 0, 0}, {0, -1.5, 0.5}};
    const FieldGeometry alone(disc, near, options);
    const FieldValues reference = FieldEvaluator(alone, k).evaluate(data.u, data.q, {});
    std::vector<Vec3> points = near;
    std::vector<double> radii;
    for (const double r : {1e4, 1e12, 1e15, 1e18, 1e100, 1e150})
      for (const Vec3& a : axes) {
        points.push_back(a * r);
        radii.push_back(r);
      }
    const FieldGeometry geometry(disc, points, options);
    ASSERT_EQ(geometry.exterior().size(), points.size());
    const FieldEvaluator evaluator(geometry, k);
    EXPECT_NE(evaluator.statistics().note.find("36 of the 38 points lie farther than 1000 body "
                                               "widths and are summed directly in the far-field "
                                               "form"),
              std::string::npos)
        << evaluator.statistics().note;
    const FieldValues v = evaluator.evaluate(data.u, data.q, {});
    for (std::size_t i = 0; i < near.size(); ++i)
      EXPECT_EQ(v.scattered[i], reference.scattered[i]) << "fmm " << use_fmm << ", point " << i;
    for (std::size_t i = near.size(); i < points.size(); ++i) {
      const double r = radii[i - near.size()];
      const cplx f = far[(i - near.size()) % 6];
      const cplx limit = r * std::polar(1.0, -k * r) * v.scattered[i];
      EXPECT_LE(std::abs(limit - f), (k * d * d + d) / r * std::abs(f) + 2 * rounding)
          << "fmm " << use_fmm << ", x = " << points[i].x << ", " << points[i].y << ", "
          << points[i].z << ": " << limit << " against " << f;
    }
  }
}

// The same against the Mie series: at a far point the field's error relative to the Mie series is
// the far-field amplitude's (R e^{-ikR} u_s -> F and R e^{-ikR} u_s^Mie -> F^Mie, both to the
// O((k D^2 + D) / R) above): |u_s - Mie| / |Mie| = |F - F^Mie| / |F^Mie| to 1e-9 at R >= 1e12.
// The Mie series as bem_solve's summary takes it (sphere_scattered_at: the series' own phase
// kr - ka rounds to a multiple of 256 at kr = 2e18, so beyond kr = N / sqrt(2 eps) its far-field
// form, which at the switch agrees with the series to the two forms' errors, N 1.5e-8 each).
TEST(FieldEvaluator, FarPointsMatchTheMieSeriesAsTheFarFieldDoes) {
  const Mesh mesh = Mesh::from_surface(make_icosphere(2, 1.0), "ico2");
  const Discretization disc(mesh, 3);
  const double k = 2.0;
  const Reference ref{Reference::rigid, k};
  const Data data = ref.data(mesh);
  const exact::SphereScatteredField mie_field(k, 1.0, {}, exact::SphereBoundary::Rigid,
                                              ref.incident);
  const double n = mie_field.terms(), switch_r = n / std::sqrt(2 * kEps) / k;
  for (const double r : {switch_r * (1 + 1e-9), switch_r * 1.5}) {
    const Vec3 x = normalized({0.3, -0.5, 0.8}) * r;
    const cplx series = mie_field.scattered(x), form = sphere_scattered_at(mie_field, k, {}, x);
    EXPECT_LE(std::abs(series - form), 2 * n * 1.5e-8 * std::abs(series)) << r;
    EXPECT_NE(series, form);  // beyond the switch: the far-field form
  }
  const std::vector<Vec3> directions = {{1, 0, 0}, {0, 0, -1}, {0, 1, 0}};
  const std::vector<cplx> far = far_field_amplitude(disc, k, data.u, data.q, directions);
  std::vector<Vec3> points;
  for (const double r : {1e12, 1e18, 1e100, 1e150})
    for (const Vec3& a : directions) points.push_back(a * r);
  const FieldGeometry geometry(disc, points, cpu_options());
  const FieldValues v = FieldEvaluator(geometry, k).evaluate(data.u, data.q, {});
  for (std::size_t i = 0; i < points.size(); ++i) {
    const cplx mie = sphere_scattered_at(mie_field, k, {}, points[i]),
               f_mie = ref.far_field(directions[i % 3]);
    ASSERT_TRUE(std::isfinite(std::abs(mie)) && std::abs(mie) > 0) << points[i].x;
    const double field_error = std::abs(v.scattered[i] - mie) / std::abs(mie);
    const double far_error = std::abs(far[i % 3] - f_mie) / std::abs(f_mie);
    EXPECT_NEAR(field_error, far_error, 1e-9) << "point " << i;
    EXPECT_GT(far_error, 1e-4);  // the discretisation's error: the comparison means something
  }
}

// Laplace (k = 0) far out: the single layer of q = 1 is -A / (4 pi R) (A the rule's total
// weight), the double layer of u = x (the centroid's) is sum w u n_x / (4 pi R^2) at (R, 0, 0):
// to O(D / R) and rounding ((N + 10) eps sum |term|, as above), and neither underflows at
// R = 1e150 (1/R^2 = 1e-300).
TEST(FieldEvaluator, FarPointsAtKZero) {
  const Mesh mesh = Mesh::from_surface(make_icosphere(2, 1.0), "ico2");
  const Discretization disc(mesh, 3);
  std::vector<cplx> ones(mesh.size(), 1.0), x(mesh.size());
  double area = 0.0, moment = 0.0, moment_abs = 0.0;
  for (std::size_t e = 0; e < mesh.size(); ++e) {
    x[e] = mesh.centroids()[e].x;
    for (std::size_t g = 0; g < disc.points_per_element(); ++g) {
      const double w = disc.quadrature_weights()[e * disc.points_per_element() + g];
      area += w;
      moment += w * x[e].real() * disc.mesh().normals()[e].x;
      moment_abs += std::abs(w * x[e].real() * disc.mesh().normals()[e].x);
    }
  }
  const double d = mesh.diameter(),
               rounding = double(disc.quadrature_points().size() + 10) * kEps / (4 * kPi);
  for (const double r : {1e18, 1e100, 1e150}) {
    const FieldGeometry geometry(disc, {{r, 0, 0}}, cpu_options());
    const FieldEvaluator evaluator(geometry, 0.0);
    const cplx single = evaluator.evaluate({}, ones, {}).scattered[0];
    const cplx dipole = evaluator.evaluate(x, {}, {}).scattered[0];
    const double expected_single = -area / (4 * kPi), expected_dipole = moment / (4 * kPi);
    EXPECT_NEAR(single.real() * r, expected_single, -expected_single * d / r + rounding * area)
        << r;
    EXPECT_EQ(single.imag(), 0.0);
    EXPECT_NEAR(dipole.real() * r * r, expected_dipole,
                expected_dipole * d / r + rounding * moment_abs)
        << r;
  }
}

// Beyond the largest coordinate (1e150: squared distances overflow) or not finite: refused,
// naming the point; the limit itself is evaluated (the tests above).
TEST(FieldGeometry, RefusesPointsBeyondTheLargestCoordinate) {
  const Mesh mesh = Mesh::from_surface(make_icosphere(1, 1.0), "ico1");
  const Discretization disc(mesh, 3);
  const auto message = [&](const Vec3& p) -> std::string {
    try {
      FieldGeometry(disc, {{2, 0, 0}, p}, cpu_options());
    } catch (const Error& e) {
      return e.what();
    }
    return "no error";
  };
  EXPECT_EQ(message({1.5e150, 0, 0}),
            "field: field point 2 of 2 (1.5e+150, 0, 0) lies beyond 1e150 in a coordinate, too "
            "far from the body to evaluate the field in double precision (squared distances "
            "overflow)");
  EXPECT_NE(message({0, -1e300, 0}).find("field point 2 of 2 (0, -1e+300, 0) lies beyond"),
            std::string::npos);
  EXPECT_NE(message({0, 0, std::numeric_limits<double>::quiet_NaN()})
                .find("(0, 0, nan) has a non-finite coordinate"),
            std::string::npos);
  EXPECT_NE(message({std::numeric_limits<double>::infinity(), 0, 0}).find("(inf, 0, 0)"),
            std::string::npos);
  EXPECT_EQ(message({kLargestFieldCoordinate, -kLargestFieldCoordinate, 0}), "no error");
}

TEST(FarField, Directions) {
  const FarFieldDirections circle = great_circle(8);
  ASSERT_EQ(circle.directions.size(), 8u);
  EXPECT_EQ(circle.directions[0].z, 1.0);            // forward: +z
  EXPECT_NEAR(circle.directions[2].x, 1.0, 1e-15);   // 90 degrees: +x
  EXPECT_NEAR(circle.directions[4].z, -1.0, 1e-15);  // backscatter
  EXPECT_DOUBLE_EQ(circle.angle[3], 135.0);
  const FarFieldDirections sphere = fibonacci_sphere(1000);
  Vec3 mean{};
  for (std::size_t i = 0; i < sphere.directions.size(); ++i) {
    const Vec3& d = sphere.directions[i];
    EXPECT_NEAR(norm(d), 1.0, 1e-15);
    const double t = sphere.theta[i] * kPi / 180, p = sphere.phi[i] * kPi / 180;
    EXPECT_NEAR(norm(d - Vec3{std::sin(t) * std::cos(p), std::sin(t) * std::sin(p), std::cos(t)}),
                0.0, 1e-12);
    mean += d * (1.0 / 1000);
  }
  // Equal areas in z, spread in azimuth: the mean direction vanishes to O(1/N).
  EXPECT_LT(norm(mean), 1e-3);
  EXPECT_THROW(great_circle(0), Error);
  EXPECT_THROW(
      far_field_amplitude(Discretization(Mesh::from_surface(make_icosphere(0, 1.0), "i"), 1), 0.0,
                          {}, {}, circle.directions),
      Error);
}

}  // namespace
}  // namespace fmbem::field

namespace fmbem::field {
namespace {

constexpr Vec3 kUnitAxes[3] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}};

// The gradient of the exact field: analytic for the monopole, central differences of the Mie
// series with step 1e-5 otherwise (truncation (k delta)^2 / 6 and rounding eps / delta of the
// field's size: below 1e-9 relative at k = 4).
std::array<cplx, 3> exact_gradient(const Reference& ref, const Vec3& x) {
  std::array<cplx, 3> g{};
  for (int a = 0; a < 3; ++a) {
    if (ref.kind == Reference::radiation) {
      g[a] = exact::monopole_normal_derivative(ref.k, ref.source, x, kUnitAxes[a]);
    } else {
      const double delta = 1e-5;
      g[a] =
          (ref.field(x + kUnitAxes[a] * delta) - ref.field(x - kUnitAxes[a] * delta)) / (2 * delta);
    }
  }
  return g;
}

std::vector<cplx> exterior_gradients(const FieldGeometry& geometry, const FieldValues& v) {
  std::vector<cplx> out;
  for (std::size_t i : geometry.exterior())
    for (int a = 0; a < 3; ++a) out.push_back(v.scattered_gradient[3 * i + std::size_t(a)]);
  return out;
}

// The gradient is the derivative of the field the evaluator gives, close elements included:
// central differences of its own values at x +- delta e_a (delta = 1e-6 h; truncation
// (delta / d)^2 / 6 at a distance d >= 0.3 h: 2e-11; rounding eps |u| / delta, 1e-10 of the
// gradient's size here) against the gradient, to 1e-7 relative. The rest is the close
// elements' angular rule, whose error the value and the gradient integrals make differently:
// at 1.0 h the worst component differs by 5.6e-5, 1.5e-6 and below 1e-7 with 8, 16 (the
// default) and 32 points, so 32 here. Each point's close elements must be those of its six
// neighbours (else the difference straddles the switch to the accurate integrals). Points at
// 0.3 h, 1.0 h (close elements) and 1.5 (none), on the direct sum.
TEST(FieldEvaluator, GradientIsTheDerivativeOfTheField) {
  const Mesh mesh = Mesh::from_surface(make_icosphere(2, 1.0), "ico2");
  const Discretization disc(mesh, 3);
  std::vector<cplx> u(mesh.size()), q(mesh.size());
  for (std::size_t e = 0; e < mesh.size(); ++e) {
    const Vec3& c = mesh.centroids()[e];
    u[e] = std::polar(1.0 + 0.3 * c.x, 2.0 * c.z);
    q[e] = std::polar(0.5 - 0.2 * c.y, -1.3 * c.x);
  }
  const double h = mesh.max_edge(), delta = 1e-6 * h;
  for (const double radius : {1.0 + 0.3 * h, 1.0 + h, 1.5}) {
    std::vector<Vec3> points;
    for (const Vec3& x : fibonacci(20, radius)) {
      points.push_back(x);
      for (const Vec3& axis : kUnitAxes) {
        points.push_back(x + axis * delta);
        points.push_back(x - axis * delta);
      }
    }
    FieldOptions options = cpu_options();
    options.use_fmm = false;
    options.near.angular_points = 32;
    const FieldGeometry geometry(disc, points, options);
    ASSERT_EQ(geometry.exterior().size(), points.size());
    const FieldValues v = FieldEvaluator(geometry, 2.5, true).evaluate(u, q, {});
    std::vector<cplx> got, differences;
    for (std::size_t p = 0; p < points.size(); p += 7) {
      for (std::size_t s = 1; s < 7; ++s)
        ASSERT_TRUE(std::ranges::equal(geometry.close_elements(p), geometry.close_elements(p + s)))
            << "radius " << radius << ", point " << p / 7;
      for (std::size_t a = 0; a < 3; ++a) {
        got.push_back(v.scattered_gradient[3 * p + a]);
        differences.push_back((v.scattered[p + 1 + 2 * a] - v.scattered[p + 2 + 2 * a]) /
                              (2 * delta));
      }
    }
    EXPECT_LT(relative_error(got, differences), 1e-7) << "radius " << radius;
  }
}

// The FMM's gradient against the direct sum's (the same sums): within the FMM's tolerance times
// 10, the L2P's derivative of the truncated expansion amplifying its remainder by about its
// order over the cell's size ((p + 1) / (k w + p) of the local expansion's radius: below 10 for
// these trees; measured 3e-6 and 3e-8 at 1e-4 and 1e-6); the points of FmmMatchesTheDirectSum's
// first settings.
TEST(FieldEvaluator, FmmGradientMatchesTheDirectSum) {
  const Mesh mesh = Mesh::from_surface(make_icosphere(3, 1.0), "ico3");
  const Discretization disc(mesh, 3);
  const auto [u, q] = rough_densities(mesh);
  for (const double tolerance : {1e-4, 1e-6}) {
    std::vector<Vec3> points;
    const int n = 31;
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j)
        points.push_back({-1.6 + 3.2 * i / (n - 1), 0.05, -1.6 + 3.2 * j / (n - 1)});
    points.push_back({500.0, 3.0, -2.0});  // beyond the low-frequency range: summed directly
    FieldOptions fast = cpu_options(tolerance), direct = fast;
    direct.use_fmm = false;
    const FieldGeometry g_fast(disc, points, fast), g_direct(disc, points, direct);
    const FieldEvaluator e_fast(g_fast, 2.0, true), e_direct(g_direct, 2.0, true);
    const FieldValues a = e_fast.evaluate(u, q, {}), b = e_direct.evaluate(u, q, {});
    const double error =
        relative_error(exterior_gradients(g_fast, a), exterior_gradients(g_direct, b));
    EXPECT_LT(error, 10 * tolerance) << e_fast.statistics().method;
    // The values are those of the evaluator without gradients, bit for bit.
    const FieldValues plain = FieldEvaluator(g_fast, 2.0).evaluate(u, q, {});
    for (std::size_t i : g_fast.exterior()) ASSERT_EQ(plain.scattered[i], a.scattered[i]);
    RecordProperty("fmm_gradient_error_tolerance" + std::to_string(tolerance),
                   std::to_string(error));
  }
}

// On the GPU (-fmm_device gpu) the gradient's FMM (targets three times, axis normals, the
// derivative apart) runs there: the same tree and expansions as on the CPU, so the gradients
// agree as GpuFmmMatchesTheCpu's values do (1e-10). Skipped only without a GPU.
TEST(FieldEvaluator, GpuGradientMatchesTheCpu) {
  std::string why;
  if (!fmm::gpu_available(&why)) GTEST_SKIP() << "no GPU: " << why;
  const Mesh mesh = Mesh::from_surface(make_icosphere(4, 1.0), "ico4");
  const Discretization disc(mesh, 3);
  const auto [u, q] = rough_densities(mesh);
  std::vector<Vec3> points;
  for (int i = 0; i < 40; ++i)
    for (int j = 0; j < 40; ++j) points.push_back({-3 + 6.0 * i / 39, 0.02, -3 + 6.0 * j / 39});
  FieldOptions cpu = cpu_options(), gpu = cpu;
  gpu.fmm.device = fmm::FmmOptions::Device::gpu;
  const FieldGeometry g_cpu(disc, points, cpu), g_gpu(disc, points, gpu);
  const FieldEvaluator e_cpu(g_cpu, 6.0, true), e_gpu(g_gpu, 6.0, true);
  EXPECT_EQ(e_gpu.statistics().device, "gpu");
  const FieldValues a = e_cpu.evaluate(u, q, {}), b = e_gpu.evaluate(u, q, {});
  EXPECT_LT(relative_error(exterior_gradients(g_gpu, b), exterior_gradients(g_cpu, a)), 1e-10);
}

// With the exact surface data, the gradient converges to the exact one as the field does at a
// fixed distance, O(h^2): ratio > 3.5 per halving of h (icosphere:2 to 4) at r = 1.7 and at
// r = 1.2 (within the close elements' reach on the coarse meshes). Within a fixed fraction of h
// the piecewise-constant data's jumps leave an O(1) gradient error, so no closer points.
TEST(FieldEvaluator, GradientConvergesToTheExactOne) {
  for (const Reference& ref : {Reference{Reference::rigid, 4.0}, Reference{Reference::soft, 4.0},
                               Reference{Reference::radiation, 3.0}}) {
    std::vector<std::array<double, 2>> errors;
    for (int level = 2; level <= 4; ++level) {
      const Mesh mesh = Mesh::from_surface(make_icosphere(level, 1.0), "ico");
      const Discretization disc(mesh, 3);
      const Data data = ref.data(mesh);
      std::array<double, 2> e{};
      const double radii[2] = {1.2, 1.7};
      for (int s = 0; s < 2; ++s) {
        const std::vector<Vec3> points = fibonacci(60, radii[s]);
        FieldOptions options = cpu_options();
        options.use_fmm = false;
        const FieldGeometry geometry(disc, points, options);
        const FieldValues v = FieldEvaluator(geometry, ref.k, true).evaluate(data.u, data.q, {});
        std::vector<cplx> exact;
        for (const Vec3& x : points)
          for (const cplx g : exact_gradient(ref, x)) exact.push_back(g);
        e[s] = relative_error(v.scattered_gradient, exact);
      }
      errors.push_back(e);
    }
    for (int s = 0; s < 2; ++s)
      for (std::size_t l = 0; l + 1 < errors.size(); ++l)
        EXPECT_GT(errors[l][s] / errors[l + 1][s], 3.5)
            << "kind " << ref.kind << ", radius " << (s ? 1.7 : 1.2) << ", icosphere:" << l + 2
            << ": " << errors[l][s] << " -> " << errors[l + 1][s];
    EXPECT_LT(errors.back()[0], 1e-2) << "kind " << ref.kind;
  }
}

// Beyond kFarWidths body widths the gradient comes from the far-field form differentiated term
// by term: at R = 1e4 it equals the plain direct sum's derivative (which loses k R eps = 2e-12
// of phase there) to 1e-10; farther out, R e^{-ikR} grad u_s tends to ik dhat F at the rate of
// FarPointsKeepTheirDigits plus the 1/(kR) of the derivative's near-field part.
TEST(FieldEvaluator, FarPointsGradient) {
  const Mesh mesh = Mesh::from_surface(make_icosphere(2, 1.0), "ico2");
  const Discretization disc(mesh, 3);
  const double k = 2.0, d = mesh.diameter();
  const Reference ref{Reference::rigid, k};
  const Data data = ref.data(mesh);
  const Vec3 direction = normalized(Vec3{0.3, -0.5, 0.8});
  std::vector<Vec3> points;
  for (const double r : {1e4, 1e8, 1e12, 1e100}) points.push_back(direction * r);
  const FieldGeometry geometry(disc, points, cpu_options());
  const FieldValues v = FieldEvaluator(geometry, k, true).evaluate(data.u, data.q, {});
  // The plain sum at R = 1e4 (charges -w q, dipoles w u at the Gauss points).
  const std::vector<Vec3> normals = quadrature_point_normals(disc);
  std::vector<std::size_t> order(disc.quadrature_points().size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::vector<cplx> charges = point_strengths(disc, data.q);
  for (cplx& c : charges) c = -c;
  const fmm::PointSources sources(disc.quadrature_points(), normals, order, charges,
                                  point_strengths(disc, data.u));
  std::vector<cplx> plain, far_form;
  for (std::size_t a = 0; a < 3; ++a) {
    plain.push_back(
        sources.potential_and_normal_derivative(0, sources.size(), k, points[0], kUnitAxes[a], 0.0)
            .normal_derivative);
    far_form.push_back(v.scattered_gradient[a]);
  }
  EXPECT_LT(relative_error(far_form, plain), 1e-10);
  const std::vector<Vec3> directions{direction};
  const std::vector<cplx> far = far_field_amplitude(disc, k, data.u, data.q, directions);
  for (std::size_t i = 1; i < 4; ++i) {
    // The evaluator's phase k R with R = |x - c| (c the Gauss points' box centre, within 1e-16
    // of the origin): the same product rounded alike only with R = |x|, not the radius asked
    // (|direction r| differs from r by an ulp, k r ulp = 4e-4 at r = 1e12).
    const double r = norm(points[i]);
    const cplx limit = cplx(0.0, k) * far[0];
    const double coordinates[3] = {direction.x, direction.y, direction.z};
    for (std::size_t a = 0; a < 3; ++a) {
      const cplx got = r * std::polar(1.0, -k * r) * v.scattered_gradient[3 * i + a];
      EXPECT_LE(std::abs(got - limit * coordinates[a]),
                ((k * d * d + d) / r * k + 1.0 / r) * std::abs(far[0]) + 1e-12 * std::abs(limit))
          << "R = " << r << ", axis " << a;
    }
  }
}

}  // namespace
}  // namespace fmbem::field
