#include "fmbem/fmm/fmm.hpp"

#include <gtest/gtest.h>
#include <omp.h>

#include <array>
#include <cmath>
#include <numeric>
#include <ostream>
#include <random>
#include <string>

#include "fmbem/core/error.hpp"
#include "fmbem/kernel/kernel.hpp"
#include "point_sets.hpp"

namespace fmbem::fmm {
namespace {

using testing::direct;
using testing::make_points;
using testing::PointSet;
using testing::relative_error;
using testing::skip_radius;

std::vector<cplx> run_fmm(double k, const PointSet& set, int p, int max_leaf = 40) {
  const Fmm fmm(k, set.sources, set.normals, set.targets,
                FmmOptions{p, 0.0, max_leaf, skip_radius});
  std::vector<cplx> phi(set.targets.size());
  fmm.apply(set.charges, set.dipoles, phi);
  return phi;
}

struct Case {
  bool sphere;
  double k;
};

// gtest prints parameters in CTest's test names: readable and the same in every build.
void PrintTo(const Case& c, std::ostream* os) {
  *os << (c.sphere ? "sphere" : "box") << ", k = " << c.k;
}

class FmmAccuracy : public ::testing::TestWithParam<Case> {};

TEST_P(FmmAccuracy, ErrorFallsWithOrder) {
  const Case c = GetParam();
  const PointSet set = make_points(c.sphere, 12000, 3000, 7);
  const auto exact = direct(c.k, set);
  double previous = 1.0;
  for (int p : {4, 8, 12, 16}) {
    const double error = relative_error(run_fmm(c.k, set, p), exact);
    std::printf("%s k %g p %d error %.3e\n", c.sphere ? "sphere" : "box", c.k, p, error);
    EXPECT_LT(error, 0.5 * previous) << "p " << p;
    previous = error;
  }
}

// Where the low-frequency expansions stop converging: k D = 32 on the unit
// sphere (k * level-2 width = 8). Measured errors: p = 8: 3.2e-2, p = 12:
// 3.2e-4, p = 16: 1.9e-6; the warning criterion must flag p = 8 and 12 and
// accept p = 16, which converges.
TEST(FmmLimit, WarnsWhereTheLowFrequencyExpansionsStopConverging) {
  const PointSet set = make_points(true, 6000, 1000, 9);
  const double k = 16.0;
  const auto exact = direct(k, set);
  for (int p : {8, 16}) {
    const Fmm fmm(k, set.sources, set.normals, set.targets, FmmOptions{p, 0.0, 40, skip_radius});
    std::vector<cplx> phi(set.targets.size());
    fmm.apply(set.charges, set.dipoles, phi);
    const double error = relative_error(phi, exact);
    std::printf("k D = 32 p %d error %.3e\n", p, error);
    if (p == 8) {
      EXPECT_GT(error, 1e-2);
      EXPECT_FALSE(low_frequency_accurate(fmm.statistics()));
    } else {
      EXPECT_LT(error, 4e-6);
      EXPECT_TRUE(low_frequency_accurate(fmm.statistics()));
    }
  }
}

// OpenMP splits every phase differently with 1 and 2 threads; each target's
// sums are formed in the same order either way, so results agree to rounding.
TEST(Fmm, SameResultForAnyThreadCount) {
  const PointSet set = make_points(false, 8000, 3000, 11);
  const int threads = omp_get_max_threads();
  omp_set_num_threads(1);
  const auto one = run_fmm(8.0, set, 8, 20);
  omp_set_num_threads(2);
  const auto two = run_fmm(8.0, set, 8, 20);
  omp_set_num_threads(threads);
  EXPECT_LT(relative_error(two, one), 1e-14);
}

// A tree too shallow for M2L (everything near): the FMM is the direct sum.
TEST(Fmm, ShallowTreeIsTheDirectSum) {
  const PointSet set = make_points(true, 300, 100, 12);
  EXPECT_LT(relative_error(run_fmm(3.0, set, 4, 1000), direct(3.0, set)), 1e-14);
}

TEST(Fmm, RejectsBadInput) {
  const PointSet set = make_points(true, 100, 10, 13);
  EXPECT_THROW(Fmm(-1.0, set.sources, set.normals, set.targets, FmmOptions{8}), Error);
  EXPECT_THROW(Fmm(1.0, set.sources, set.normals, set.targets, FmmOptions{-1}), Error);
  EXPECT_THROW(Fmm(1.0, set.sources, set.normals, set.targets, FmmOptions{41}), Error);
  EXPECT_THROW(Fmm(1.0, set.sources, set.normals, set.targets, FmmOptions{8, 0.0, 0}), Error);
  EXPECT_THROW(Fmm(1.0, set.sources, set.normals, set.targets, FmmOptions{0, 0.0}), Error);
  const std::vector<Vec3> few_normals(3);
  EXPECT_THROW(Fmm(1.0, set.sources, few_normals, set.targets, FmmOptions{8}), Error);
  const Fmm fmm(1.0, set.sources, set.normals, set.targets, FmmOptions{8});
  std::vector<cplx> phi(set.targets.size() + 1);
  EXPECT_THROW(fmm.apply(set.charges, set.dipoles, phi), Error);
  const Fmm no_normals(1.0, set.sources, {}, set.targets, FmmOptions{8});
  phi.resize(set.targets.size());
  EXPECT_THROW(no_normals.apply(set.charges, set.dipoles, phi), Error);
  no_normals.apply(set.charges, {}, phi);  // charges alone need no normals
  EXPECT_THROW(order_for_tolerance(0.0), Error);
  EXPECT_THROW(order_for_tolerance(1.0), Error);
}

// Where no GPU can be used (none on the machine, or a build without CUDA): asking for it is one
// error that says why, and "automatic" is the CPU FMM, saying so. Where one exists the GPU tests
// (gpu_*_test.cpp) run the GPU instead.
TEST(Fmm, AskingForAMissingGpuIsOneClearError) {
  std::string why;
  if (gpu_available(&why)) GTEST_SKIP() << "a GPU is present";
  EXPECT_FALSE(why.empty());
  const PointSet set = make_points(true, 400, 100, 14);
  FmmOptions options{.order = 6, .max_leaf = 30};
  options.device = FmmOptions::Device::gpu;
  try {
    const Fmm fmm(1.0, set.sources, set.normals, set.targets, options);
    FAIL() << "built on a GPU that is not there";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "-fmm_device gpu: " + why);
  }
  try {
    require_gpu("the thing asked for");
    FAIL() << "require_gpu passed without a GPU";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "the thing asked for: " + why);
  }
  options.device = FmmOptions::Device::automatic;
  const Fmm automatic(1.0, set.sources, set.normals, set.targets, options);
  EXPECT_EQ(automatic.statistics().m2l_device, "cpu (no GPU: " + why + ")");
  EXPECT_FALSE(automatic.runs_on_gpu());
  options.device = FmmOptions::Device::cpu;
  const Fmm cpu(1.0, set.sources, set.normals, set.targets, options);
  std::vector<cplx> expected(set.targets.size()), y(set.targets.size());
  cpu.apply(set.charges, set.dipoles, expected);
  automatic.apply(set.charges, set.dipoles, y);
  EXPECT_EQ(y, expected);
}

TEST(Fmm, OrderForToleranceFollowsTheMeasuredErrors) {
  EXPECT_EQ(order_for_tolerance(2.6e-3), 8);
  EXPECT_EQ(order_for_tolerance(1e-4), 11);
  EXPECT_EQ(order_for_tolerance(1.6e-5), 12);
  EXPECT_EQ(order_for_tolerance(1.5e-6), 16);
  EXPECT_EQ(order_for_tolerance(1e-6), 17);
  EXPECT_EQ(order_for_tolerance(0.5), 4);
}

// ---- The target normal derivative: output phi + w dphi/dn_t (Burton-Miller) ----

// PointSources::potential_and_normal_derivative, the near field's kernel and the reference
// below, against the value by potential(), the kernels of kernel.hpp term by term, and a finite
// difference of potential() along n_x.
TEST(PointSourcesNormalDerivative, MatchesTheKernelsAndAFiniteDifference) {
  std::mt19937 rng(21);
  std::normal_distribution<double> gauss;
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  const Vec3 x{0.1, -0.2, 0.3}, n_x = normalized(Vec3{1.0, 2.0, -0.5});
  // Sources at distances 1 .. 2 from x.
  const std::size_t count = 60;
  std::vector<Vec3> points, normals;
  std::vector<cplx> charges, dipoles;
  for (std::size_t i = 0; i < count; ++i) {
    const double r = 1.0 + 0.5 * (u(rng) + 1.0);
    points.push_back(x + r * normalized(Vec3{gauss(rng), gauss(rng), gauss(rng)}));
    normals.push_back(normalized(Vec3{gauss(rng), gauss(rng), gauss(rng)}));
    charges.emplace_back(u(rng), u(rng));
    dipoles.emplace_back(u(rng), u(rng));
  }
  std::vector<std::size_t> order(count);
  std::iota(order.begin(), order.end(), 0);
  for (double k : {0.0, 8.0}) {
    const PointSources sources(points, normals, order, charges, dipoles);
    const auto both = sources.potential_and_normal_derivative(0, count, k, x, n_x, 0.0);
    // kernel.hpp, term by term; the sums of the terms' moduli scale the rounding.
    cplx value = 0.0, derivative = 0.0;
    double value_scale = 0.0, derivative_scale = 0.0;
    for (std::size_t j = 0; j < count; ++j) {
      const cplx g = green(k, norm(points[j] - x)) * charges[j],
                 dg = green_normal_derivative(k, x, points[j], normals[j]) * dipoles[j],
                 tg = green_target_normal_derivative(k, x, points[j], n_x) * charges[j],
                 h = green_double_normal_derivative(k, x, points[j], n_x, normals[j]) * dipoles[j];
      value += g + dg;
      derivative += tg + h;
      value_scale += std::abs(g) + std::abs(dg);
      derivative_scale += std::abs(tg) + std::abs(h);
    }
    // Each term is formed to a few tens of ulp on both sides (other arrangements of the same
    // products, sin and cos by libmvec or libm): 1e-13 of the sums of moduli.
    EXPECT_LE(std::abs(both.value - sources.potential(0, count, k, x, 0.0)), 1e-13 * value_scale);
    EXPECT_LE(std::abs(both.value - value), 1e-13 * value_scale) << "k " << k;
    EXPECT_LE(std::abs(both.normal_derivative - derivative), 1e-13 * derivative_scale) << "k " << k;
    // Fourth-order central difference, h = 1e-3: error h^4 / 30 max |f^(5)|. Each term is
    // analytic in the step s along n_x on the complex disc |s| <= 1/2 (its singularity lies at
    // distance r >= 1), where it is at most e^(k/2) (r / (r - 1/2))^3 <= 8 e^4 times its size
    // at s = 0 (1 / r^3 at worst, the dipoles' derivative); Cauchy's estimate gives
    // |f^(5)| <= 5! 2^5 8 e^4 value_scale, so the truncation error is below
    // 1e-12 / 30 * 3.1e4 * 55 value_scale = 5.6e-8 value_scale; the rounding, 18 u / (12 h) of
    // value_scale, is 3e-13 of it.
    const double h = 1e-3;
    const auto phi = [&](double s) { return sources.potential(0, count, k, x + s * n_x, 0.0); };
    const cplx fd = (-phi(2 * h) + 8.0 * phi(h) - 8.0 * phi(-h) + phi(-2 * h)) / (12.0 * h);
    const double fd_bound = 5.6e-8 * value_scale;
    std::printf("k %g: |fd - dphi/dn| = %.2e (bound %.2e), |dphi/dn| = %.3e\n", k,
                std::abs(fd - both.normal_derivative), fd_bound, std::abs(both.normal_derivative));
    EXPECT_LE(std::abs(fd - both.normal_derivative), fd_bound) << "k " << k;
  }
  // Skipped pairs add nothing to either sum.
  const PointSources sources(points, normals, order, charges, dipoles);
  const auto skipped =
      sources.potential_and_normal_derivative(0, count, 8.0, points[3], n_x, 1e-12);
  const auto rest = sources.potential_and_normal_derivative(0, 3, 8.0, points[3], n_x, 0.0);
  const auto rest2 = sources.potential_and_normal_derivative(4, count, 8.0, points[3], n_x, 0.0);
  EXPECT_NEAR(std::abs(skipped.value - (rest.value + rest2.value)), 0.0,
              1e-13 * std::abs(skipped.value));
  EXPECT_NEAR(
      std::abs(skipped.normal_derivative - (rest.normal_derivative + rest2.normal_derivative)), 0.0,
      1e-13 * std::abs(skipped.normal_derivative));
}

enum class Strengths { charges, dipoles, both };
const char* name(Strengths s) {
  return s == Strengths::charges ? "charges" : s == Strengths::dipoles ? "dipoles" : "both";
}

// The direct sum's value and normal derivative at each target (PointSources, checked above).
void direct_with_normals(double k, const PointSet& set, std::span<const cplx> charges,
                         std::span<const cplx> dipoles, std::vector<cplx>& value,
                         std::vector<cplx>& derivative) {
  std::vector<std::size_t> order(set.sources.size());
  std::iota(order.begin(), order.end(), 0);
  const PointSources sources(set.sources, set.normals, order, charges, dipoles);
  value.assign(set.targets.size(), 0.0);
  derivative.assign(set.targets.size(), 0.0);
#pragma omp parallel for
  for (std::size_t i = 0; i < set.targets.size(); ++i) {
    const auto v = sources.potential_and_normal_derivative(
        0, sources.size(), k, set.targets[i], set.target_normals[i], skip_radius * skip_radius);
    value[i] = v.value;
    derivative[i] = v.normal_derivative;
  }
}

struct NormalCase {
  bool sphere;
  double k;
  int order;
};

// gtest prints parameters in CTest's test names: readable and the same in every build.
void PrintTo(const NormalCase& c, std::ostream* os) {
  *os << (c.sphere ? "sphere" : "box") << ", k = " << c.k << ", p = " << c.order;
}

class FmmNormalDerivative : public ::testing::TestWithParam<NormalCase> {};

// The far field alone, exactly: per target the sum over the sources outside its leaf's near
// ranges (tree positions), value and normal derivative.
void direct_far_with_normals(const Fmm& fmm, const PointSet& set, std::span<const Vec3> normals,
                             std::span<const cplx> charges, std::span<const cplx> dipoles,
                             std::vector<cplx>& value, std::vector<cplx>& derivative) {
  const NearFieldLists lists = fmm.near_field_lists();
  // Every source in tree order; the lists' ranges (positions in lists.source_order, the tree
  // order restricted to the sources they read, each range inside one run of it) as tree positions.
  const auto tree_order = fmm.tree().source_order();
  std::vector<std::size_t> tree_position(tree_order.size());
  for (std::size_t i = 0; i < tree_order.size(); ++i) tree_position[tree_order[i]] = i;
  const PointSources sorted(set.sources, set.normals, tree_order, charges, dipoles);
  value.assign(set.targets.size(), 0.0);
  derivative.assign(set.targets.size(), 0.0);
  const Wavenumber k = lists.k;
#pragma omp parallel for schedule(dynamic)
  for (std::size_t l = 0; l < lists.leaf_targets.size(); ++l) {
    std::vector<std::array<std::size_t, 2>> far;
    std::size_t begin = 0;
    for (std::size_t r = lists.offsets[l]; r < lists.offsets[l + 1]; ++r) {
      const std::size_t first = tree_position[lists.source_order[lists.ranges[r][0]]];
      if (first > begin) far.push_back({begin, first});
      begin = first + (lists.ranges[r][1] - lists.ranges[r][0]);
    }
    if (begin < sorted.size()) far.push_back({begin, sorted.size()});
    for (std::size_t i = lists.leaf_targets[l][0]; i < lists.leaf_targets[l][1]; ++i) {
      const std::size_t t = lists.target_order[i];
      for (const auto& range : far) {
        const auto v = sorted.potential_and_normal_derivative(range[0], range[1], k, set.targets[t],
                                                              normals[t], 0.0);
        value[t] += v.value;
        derivative[t] += v.normal_derivative;
      }
    }
  }
}

// Bounds. The potential's relative error at order p is order_for_tolerance's calibration,
// 2.6e-3 at p = 8 and 1.5e-6 at p = 16. The derivative loses about one order of magnitude: the
// truncation error's leading terms, of degree about p, vary over the distance rho from a leaf's
// centre to its nearest well-separated sources, so their normal derivative is about p / rho
// times their size, while |grad phi| is about |phi| / D, D the scale over which phi varies (the
// body, here 1). The whole output (near field included) keeps 10 times the potential's bound.
// The far field alone (no near field to dilute it) is held to its own potential error at the
// same order: the derivative's error, relative to |grad phi| (its normal component may be far
// smaller: on the box's flat faces the charges' dG/dn_x vanishes), and the combined output's are
// at most 8 p times it (p D / rho with D / rho <= 8 at these leaves: width 1/8 .. 1/16, rho about
// 1.5 widths; measured: at most 2.8 p for the derivative, 3.0 p for the combined output, k = 0
// charges; at k = 8 below 0.7 p).
// One wrong gradient term, sign or scale shows as an O(1) error of the far derivative.
double potential_error_bound(int order) { return order <= 8 ? 2.6e-3 : 1.5e-6; }

// The FMM's phi + w dphi/dn_t against the direct sum, and its dphi/dn_t alone ((output with
// normals - output without) / w: the phi parts agree to rounding); then the far field alone
// (near field skipped, against the exact sum over the sources outside the near lists).
TEST_P(FmmNormalDerivative, MatchesTheDirectSum) {
  const NormalCase c = GetParam();
  const PointSet set = make_points(c.sphere, 12000, 3000, 17);
  // Burton-Miller's usual weight i / k; i at k = 0.
  const cplx weight = c.k > 0.0 ? cplx(0.0, 1.0 / c.k) : cplx(0.0, 1.0);
  const TargetNormalDerivative with_normals{set.target_normals, weight};
  FmmOptions options{c.order, 0.0, 40, skip_radius};
  const Fmm plain(c.k, set.sources, set.normals, set.targets, set.targets, options);
  const Fmm fmm(c.k, set.sources, set.normals, set.targets, set.targets, options, nullptr,
                with_normals);
  EXPECT_NE(fmm.describe().find("output phi + w dphi/dn_t"), std::string::npos) << fmm.describe();
  EXPECT_EQ(plain.describe().find("dphi/dn_t"), std::string::npos);
  // The far field alone: every near pair skipped.
  options.skip_radius = 1e100;
  const Fmm far_plain(c.k, set.sources, set.normals, set.targets, set.targets, options);
  const Fmm far(c.k, set.sources, set.normals, set.targets, set.targets, options, nullptr,
                with_normals);
  const std::size_t nt = set.targets.size();
  for (Strengths s : {Strengths::charges, Strengths::dipoles, Strengths::both}) {
    const std::span<const cplx> charges =
        s == Strengths::dipoles ? std::span<const cplx>{} : std::span<const cplx>(set.charges);
    const std::span<const cplx> dipoles =
        s == Strengths::charges ? std::span<const cplx>{} : std::span<const cplx>(set.dipoles);
    // Relative errors of phi, dphi/dn and phi + w dphi/dn.
    const auto errors = [&](const Fmm& a, const Fmm& b, const std::vector<cplx>& value,
                            const std::vector<cplx>& derivative) {
      std::vector<cplx> exact(nt), phi(nt), out(nt), fmm_derivative(nt);
      a.apply(charges, dipoles, phi);
      b.apply(charges, dipoles, out);
      for (std::size_t i = 0; i < nt; ++i) {
        exact[i] = value[i] + weight * derivative[i];
        fmm_derivative[i] = (out[i] - phi[i]) / weight;
      }
      return std::array<double, 3>{relative_error(phi, value),
                                   relative_error(fmm_derivative, derivative),
                                   relative_error(out, exact)};
    };
    std::vector<cplx> value, derivative;
    direct_with_normals(c.k, set, charges, dipoles, value, derivative);
    const auto whole = errors(plain, fmm, value, derivative);
    direct_far_with_normals(fmm, set, set.target_normals, charges, dipoles, value, derivative);
    const auto far_only = errors(far_plain, far, value, derivative);
    // |grad phi| of the far field: the derivative's error relative to it.
    double grad2 = 0.0, normal2 = 0.0;
    for (const Vec3 axis : {Vec3{1, 0, 0}, Vec3{0, 1, 0}, Vec3{0, 0, 1}}) {
      std::vector<cplx> v, d;
      direct_far_with_normals(fmm, set, std::vector<Vec3>(nt, axis), charges, dipoles, v, d);
      for (const cplx& x : d) grad2 += std::norm(x);
    }
    for (const cplx& x : derivative) normal2 += std::norm(x);
    const double far_gradient = far_only[1] * std::sqrt(normal2 / grad2);
    std::printf(
        "%s k %g p %d %-7s: whole: phi %.2e, dphi/dn %.2e, phi + w dphi/dn %.2e; far: phi %.2e, "
        "dphi/dn %.2e (of |grad phi| %.2e = %.1f p phi's), phi + w dphi/dn %.2e (%.1f p)\n",
        c.sphere ? "sphere" : "box", c.k, c.order, name(s), whole[0], whole[1], whole[2],
        far_only[0], far_only[1], far_gradient, far_gradient / (c.order * far_only[0]), far_only[2],
        far_only[2] / (c.order * far_only[0]));
    const double whole_bound = 10.0 * potential_error_bound(c.order);
    EXPECT_LE(whole[1], whole_bound) << name(s);
    EXPECT_LE(whole[2], whole_bound) << name(s);
    const double far_bound = 8.0 * c.order * far_only[0];
    EXPECT_LE(far_gradient, far_bound) << name(s);
    EXPECT_LE(far_only[2], far_bound) << name(s);
  }
}

INSTANTIATE_TEST_SUITE_P(Geometries, FmmNormalDerivative,
                         ::testing::Values(NormalCase{true, 0.0, 8}, NormalCase{true, 8.0, 8},
                                           NormalCase{true, 0.0, 16}, NormalCase{true, 8.0, 16},
                                           NormalCase{false, 0.0, 8}, NormalCase{false, 8.0, 8},
                                           NormalCase{false, 0.0, 16}, NormalCase{false, 8.0, 16}));

// apart: phi and dphi/dn_t in one pass, two outputs a target. phi is the plain FMM's and
// phi + w dphi/dn_t the combined output's to rounding: the same terms grouped apart, each
// output a sum of at most a few thousand terms of size O(|output|) (random strengths, scaled
// expansions: gpu_fmm_test's argument), so within 1e-13 of its largest value; dphi/dn_t is held
// to the direct sum at MatchesTheDirectSum's bound. A wrong half or a dropped part is O(1).
TEST(FmmNormalDerivative, ApartGivesPhiAndTheDerivative) {
  const PointSet set = make_points(true, 6000, 1500, 31);
  const cplx weight(0.0, 0.125);
  for (const double k : {0.0, 8.0}) {
    const FmmOptions options{12, 0.0, 40, skip_radius};
    const Fmm plain(k, set.sources, set.normals, set.targets, set.targets, options);
    const Fmm combined(k, set.sources, set.normals, set.targets, set.targets, options, nullptr,
                       TargetNormalDerivative{set.target_normals, weight});
    const Fmm apart(k, set.sources, set.normals, set.targets, set.targets, options, nullptr,
                    TargetNormalDerivative{set.target_normals, 0.0, true});
    EXPECT_EQ(apart.outputs_per_target(), 2);
    EXPECT_EQ(combined.outputs_per_target(), 1);
    EXPECT_NE(apart.describe().find("dphi/dn_t apart"), std::string::npos) << apart.describe();
    const std::size_t nt = set.targets.size();
    std::vector<cplx> phi(nt), out(nt), both(2 * nt);
    EXPECT_THROW(apart.apply(set.charges, set.dipoles, phi), Error);
    plain.apply(set.charges, set.dipoles, phi);
    combined.apply(set.charges, set.dipoles, out);
    apart.apply(set.charges, set.dipoles, both);
    const std::vector<cplx> value(both.begin(), both.begin() + nt),
        derivative(both.begin() + nt, both.end());
    std::vector<cplx> joined(nt);
    for (std::size_t i = 0; i < nt; ++i) joined[i] = value[i] + weight * derivative[i];
    const auto max_difference = [](const std::vector<cplx>& a, const std::vector<cplx>& b) {
      double diff = 0.0, scale = 0.0;
      for (std::size_t i = 0; i < a.size(); ++i) {
        diff = std::max(diff, std::abs(a[i] - b[i]));
        scale = std::max(scale, std::abs(b[i]));
      }
      return diff / scale;
    };
    EXPECT_LE(max_difference(value, phi), 1e-13) << "k " << k;
    EXPECT_LE(max_difference(joined, out), 1e-13) << "k " << k;
    std::vector<cplx> exact_value, exact_derivative;
    direct_with_normals(k, set, set.charges, set.dipoles, exact_value, exact_derivative);
    EXPECT_LE(relative_error(derivative, exact_derivative), 10.0 * potential_error_bound(12))
        << "k " << k;
  }
  EXPECT_THROW(
      Fmm(1.0, set.sources, set.normals, set.targets, set.targets,
          FmmOptions{6, 0.0, 40, skip_radius}, nullptr, TargetNormalDerivative{{}, 0.0, true}),
      Error);
}

// Weight 0 asks for phi: the same numbers as without normals, to the bit, and no normals in the
// near lists.
TEST(FmmNormalDerivative, WeightZeroIsThePlainFmm) {
  const PointSet set = make_points(false, 4000, 1000, 19);
  const FmmOptions options{8, 0.0, 40, skip_radius};
  const Fmm plain(8.0, set.sources, set.normals, set.targets, set.targets, options);
  const Fmm zero(8.0, set.sources, set.normals, set.targets, set.targets, options, nullptr,
                 TargetNormalDerivative{set.target_normals, 0.0});
  std::vector<cplx> a(set.targets.size()), b(set.targets.size());
  plain.apply(set.charges, set.dipoles, a);
  zero.apply(set.charges, set.dipoles, b);
  EXPECT_EQ(a, b);
  EXPECT_TRUE(zero.near_field_lists().target_normals.empty());
  EXPECT_EQ(zero.describe().find("dphi/dn_t"), std::string::npos);
}

// The near lists carry the normals (input order) and the weight; add_near_field_cpu sums the
// combined kernel with them.
TEST(FmmNormalDerivative, TheNearListsCarryTheNormals) {
  const PointSet set = make_points(true, 3000, 700, 23);
  const cplx weight(0.25, -0.5);
  const Fmm fmm(2.0, set.sources, set.normals, set.targets, set.targets,
                FmmOptions{6, 0.0, 40, skip_radius}, nullptr,
                TargetNormalDerivative{set.target_normals, weight});
  const NearFieldLists lists = fmm.near_field_lists();
  ASSERT_EQ(lists.target_normals.size(), set.targets.size());
  EXPECT_EQ(lists.target_normals[5].x, set.target_normals[5].x);
  EXPECT_EQ(lists.target_normal_weight, weight);
  // The near field of one target by hand.
  std::vector<cplx> near(set.targets.size(), 0.0);
  add_near_field_cpu(lists, set.charges, set.dipoles, near);
  const PointSources sorted(PointSources::PointsInOrder{}, lists.sources, lists.normals,
                            lists.source_order, set.charges, set.dipoles);
  const std::size_t l = lists.leaf_targets.size() / 2, i = lists.leaf_targets[l][0];
  const std::size_t t = lists.target_order[i];
  cplx expected = 0.0;
  for (std::size_t r = lists.offsets[l]; r < lists.offsets[l + 1]; ++r) {
    const auto v = sorted.potential_and_normal_derivative(
        lists.ranges[r][0], lists.ranges[r][1], 2.0, set.targets[t], set.target_normals[t],
        skip_radius * skip_radius);
    expected += v.value + weight * v.normal_derivative;
  }
  EXPECT_NEAR(std::abs(near[t] - expected), 0.0, 1e-13 * std::abs(expected));
}

// A part of the targets (a rank's rows; every target a splitting point, so the tree is the
// whole's): its near lists read, and its near field copies, only the sources near its targets,
// in tree order; the near field at its targets is the whole FMM's, bit for bit (the same ranges
// of the same sources, summed in the same order).
TEST(Fmm, APartsNearFieldReadsOnlyItsSources) {
  const PointSet set = make_points(false, 6000, 2000, 31);
  const FmmOptions options{6, 0.0, 40, skip_radius};
  const Fmm whole(2.0, set.sources, set.normals, set.targets, set.targets, options);
  std::vector<Vec3> part_targets;
  std::vector<std::size_t> part_index;  // part target -> whole target
  for (std::size_t t = 0; t < set.targets.size(); ++t)
    if (set.targets[t].x > 1.0) {  // one end of the box
      part_targets.push_back(set.targets[t]);
      part_index.push_back(t);
    }
  const Fmm part(2.0, set.sources, set.normals, part_targets, set.targets, options);
  const NearFieldLists lists = part.near_field_lists();
  ASSERT_EQ(whole.near_field_lists().source_order.size(), set.sources.size());
  // The box's end x > 1 holds a quarter of its area: its near lists read well under half.
  EXPECT_LT(lists.source_order.size(), set.sources.size() / 2);
  std::vector<std::size_t> tree_position(set.sources.size());
  for (std::size_t i = 0; i < set.sources.size(); ++i)
    tree_position[part.tree().source_order()[i]] = i;
  for (std::size_t i = 1; i < lists.source_order.size(); ++i)
    ASSERT_LT(tree_position[lists.source_order[i - 1]], tree_position[lists.source_order[i]]);
  for (std::size_t r = 0; r < lists.ranges.size(); ++r)
    ASSERT_LE(lists.ranges[r][1], lists.source_order.size());
  std::vector<cplx> near_part(part_targets.size(), 0.0), near_whole(set.targets.size(), 0.0);
  add_near_field_cpu(lists, set.charges, set.dipoles, near_part);
  add_near_field_cpu(whole.near_field_lists(), set.charges, set.dipoles, near_whole);
  for (std::size_t i = 0; i < part_targets.size(); ++i)
    ASSERT_EQ(near_part[i], near_whole[part_index[i]]) << i;
}

// Normals of the wrong count are one clear error.
TEST(FmmNormalDerivative, NormalsOfTheWrongSizeAreAnError) {
  const PointSet set = make_points(true, 200, 50, 29);
  const std::vector<Vec3> few(set.targets.size() - 1, Vec3{0.0, 0.0, 1.0});
  try {
    const Fmm fmm(1.0, set.sources, set.normals, set.targets, set.targets, FmmOptions{6}, nullptr,
                  TargetNormalDerivative{few, cplx(0.0, 1.0)});
    FAIL() << "49 normals for 50 targets accepted";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("one normal per target"), std::string::npos) << what;
    EXPECT_NE(what.find("49 normals for 50 targets"), std::string::npos) << what;
  }
  // Weight 0 does not excuse them.
  EXPECT_THROW(Fmm(1.0, set.sources, set.normals, set.targets, set.targets, FmmOptions{6}, nullptr,
                   TargetNormalDerivative{few, 0.0}),
               Error);
  // Nor does the near field take them.
  const Fmm fmm(1.0, set.sources, set.normals, set.targets, FmmOptions{6});
  NearFieldLists lists = fmm.near_field_lists();
  lists.target_normals = few;
  std::vector<cplx> near(set.targets.size(), 0.0);
  EXPECT_THROW(add_near_field_cpu(lists, set.charges, set.dipoles, near), Error);
}

INSTANTIATE_TEST_SUITE_P(Geometries, FmmAccuracy,
                         ::testing::Values(Case{true, 0.0}, Case{true, 8.0}, Case{true, 5e-4},
                                           Case{false, 0.0}, Case{false, 8.0}));

}  // namespace
}  // namespace fmbem::fmm
