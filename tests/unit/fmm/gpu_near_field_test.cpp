#include "fmbem/fmm/gpu_near_field.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ostream>
#include <string>
#include <vector>

#include "fmbem/core/error.hpp"
#include "fmbem/fmm/fmm.hpp"
#include "fmbem/fmm/gpu_device.hpp"
#include "fmbem/fmm/gpu_m2l.hpp"
#include "gpu_test_skip.hpp"
#include "m2l_test_geometry.hpp"

namespace fmbem::fmm {
namespace {

// Tolerance: each potential is a sum of n terms (n <= 3000 sources in a leaf's near lists
// here), each term computed on both sides with a relative error of c u, c <= 20 (sin and cos
// within 2 ulp on the GPU and 4 ulp in glibc's vector versions, 1 / r within 1 ulp, and about
// ten roundings in the products; the GPU also puts charge and dipole under one exp(ikr) / r),
// and summed in another order (the GPU: per thread phase, then the phases; the CPU: per range,
// in SIMD lanes), u = 2^-53. So |gpu_i - cpu_i| <= (2 c + n) u sum_j |t_ij|, and for rounding
// errors of independent operations (2 c + sqrt(n)) u sum_j |t_ij| = 1.1e-14 sum_j |t_ij|. With
// random strengths the sum of moduli exceeds |phi_i| by about the square root of the number of
// terms that dominate phi_i (the closest sources: the terms fall as 1 / r and 1 / r^2), at most
// sqrt(n) = 55. Hence about 6e-13 at the very worst of these and 1e-12 holds, while one
// missing, doubled or wrong pair changes phi_i by 1e-3 .. 1 of itself.
constexpr double kTolerance = 1e-12;

struct Errors {
  double norm = 0.0;  // ||gpu - ref|| / ||ref - base||, 2-norms over the targets
  double max = 0.0;   // max |gpu - ref| / max |ref - base|
};

Errors compare(const std::vector<cplx>& gpu, const std::vector<cplx>& ref,
               const std::vector<cplx>& base) {
  double diff2 = 0.0, ref2 = 0.0, diff_max = 0.0, ref_max = 0.0;
  for (std::size_t i = 0; i < ref.size(); ++i) {
    const double d = std::abs(gpu[i] - ref[i]), r = std::abs(ref[i] - base[i]);
    diff2 += d * d;
    ref2 += r * r;
    diff_max = std::max(diff_max, d);
    ref_max = std::max(ref_max, r);
    if (!std::isfinite(d)) return {INFINITY, INFINITY};
  }
  return {std::sqrt(diff2 / ref2), diff_max / ref_max};
}

std::vector<Vec3> unit_normals(const std::vector<Vec3>& points) {
  std::vector<Vec3> normals(points.size());
  for (std::size_t i = 0; i < points.size(); ++i)
    normals[i] = normalized(points[i] + Vec3{0.1, -0.2, 0.3 * std::sin(double(i))});
  return normals;
}

enum class Strengths { charges, dipoles, both };

const char* name(Strengths s) {
  return s == Strengths::charges ? "charges" : s == Strengths::dipoles ? "dipoles" : "both";
}

// The GPU near field against the CPU's direct sum (add_near_field_cpu, the FMM's own near
// phase) on the lists of one FMM plan, accumulating into random potentials.
void check_against_cpu(const Fmm& fmm, Strengths strengths, const char* what,
                       std::size_t expected_pairs) {
  const NearFieldLists lists = fmm.near_field_lists();
  const std::size_t ns = lists.source_count, nt = lists.targets.size();
  std::vector<cplx> charges, dipoles;
  if (strengths != Strengths::dipoles) charges = testing::random_coefficients(ns, 41);
  if (strengths != Strengths::charges) dipoles = testing::random_coefficients(ns, 42);
  const std::vector<cplx> base = testing::random_coefficients(nt, 43);
  std::vector<cplx> reference = base;
  add_near_field_cpu(lists, charges, dipoles, reference);
  for (GpuNearFieldOptions options :
       {GpuNearFieldOptions{}, GpuNearFieldOptions{256, 2}, GpuNearFieldOptions{64, 1}}) {
    GpuNearField gpu(lists, options);
    EXPECT_EQ(gpu.statistics().pairs, expected_pairs);
    EXPECT_GT(gpu.statistics().device_bytes, 0u);
    std::vector<cplx> potential = base;
    gpu.apply(charges, dipoles, potential);
    const Errors e = compare(potential, reference, base);
    std::printf("[ gpu near ] %-34s k = %g, %-7s: relative error %.2e (2-norm), %.2e (max); %s\n",
                what, lists.k.magnitude, name(strengths), e.norm, e.max, gpu.describe().c_str());
    EXPECT_LE(e.norm, kTolerance) << what << " " << name(strengths) << " " << gpu.describe();
    EXPECT_LE(e.max, kTolerance) << what << " " << name(strengths) << " " << gpu.describe();
  }
}

// apply_device on device arrays (random strengths and a random potential to accumulate into,
// from seed, seed + 1, seed + 2) against add_near_field_cpu on the same lists; keeps the
// executor and the device potential for further checks.
struct DeviceEntry {
  DeviceEntry(const NearFieldLists& lists, unsigned seed)
      : gpu(lists), d_potential(lists.targets.size()) {
    const std::size_t ns = lists.source_count, nt = lists.targets.size();
    const std::vector<cplx> charges = testing::random_coefficients(ns, seed),
                            dipoles = testing::random_coefficients(ns, seed + 1),
                            base = testing::random_coefficients(nt, seed + 2);
    std::vector<cplx> reference = base;
    add_near_field_cpu(lists, charges, dipoles, reference);
    DeviceArray d_charges(ns), d_dipoles(ns);
    d_charges.upload(charges.data());
    d_dipoles.upload(dipoles.data());
    d_potential.upload(base.data());
    gpu.apply_device(d_charges.data(), d_dipoles.data(), d_potential.data());
    gpu.synchronize();
    potential.resize(nt);
    d_potential.download(potential.data());
    const Errors e = compare(potential, reference, base);
    EXPECT_LE(e.norm, kTolerance);
    EXPECT_LE(e.max, kTolerance);
  }
  GpuNearField gpu;
  DeviceArray d_potential;
  std::vector<cplx> potential;
};

struct Case {
  bool adaptive;
  double k;
};

// gtest prints parameters in CTest's test names: readable and the same in every build (its
// default prints the struct's bytes, padding included).
void PrintTo(const Case& c, std::ostream* os) {
  *os << (c.adaptive ? "adaptive" : "uniform") << " tree, k = " << c.k;
}

class GpuNearFieldTest : public ::testing::TestWithParam<Case> {};

TEST_P(GpuNearFieldTest, MatchesTheCpuDirectSumOnTheSamePlan) {
  SKIP_WITHOUT_GPU();
  const Case c = GetParam();
  const testing::Cloud cloud =
      c.adaptive ? testing::two_sphere_cloud() : testing::icosphere_cloud(4);
  const std::vector<Vec3> normals = unit_normals(cloud.sources);
  const Fmm fmm(c.k, cloud.sources, normals, cloud.targets,
                FmmOptions{.order = 4, .max_leaf = c.adaptive ? 32 : 60});
  const std::size_t pairs = fmm.near_field_lists().pair_count();
  EXPECT_EQ(pairs, fmm.statistics().near_pairs);
  for (Strengths s : {Strengths::charges, Strengths::dipoles, Strengths::both})
    check_against_cpu(fmm, s, c.adaptive ? "two spheres" : "icosphere L = 4", pairs);
}

INSTANTIATE_TEST_SUITE_P(Trees, GpuNearFieldTest,
                         ::testing::Values(Case{false, 0.0}, Case{false, 8.0}, Case{true, 0.0},
                                           Case{true, 8.0}),
                         [](const auto& info) {
                           return std::string(info.param.adaptive ? "TwoSpheres" : "Icosphere") +
                                  (info.param.k == 0.0 ? "Laplace" : "HelmholtzK8");
                         });

// The same with target normals (phi + w dphi/dn_t: the adjoint double layer's and the
// hypersingular kernel added in the same pass). The tolerance's argument holds as above: the
// derivative's terms carry one more factor (t / r^2 or w, formed to a few more roundings) and
// fall as 1 / r^2 and 1 / r^3, so fewer terms dominate and the square-root factor is smaller.
class GpuNearFieldNormalTest : public ::testing::TestWithParam<Case> {};

TEST_P(GpuNearFieldNormalTest, MatchesTheCpuDirectSumOnTheSamePlan) {
  SKIP_WITHOUT_GPU();
  const Case c = GetParam();
  const testing::Cloud cloud =
      c.adaptive ? testing::two_sphere_cloud() : testing::icosphere_cloud(4);
  const std::vector<Vec3> normals = unit_normals(cloud.sources),
                          target_normals = unit_normals(cloud.targets);
  const cplx weight = c.k > 0.0 ? cplx(0.0, 1.0 / c.k) : cplx(0.5, 1.0);
  const Fmm fmm(c.k, cloud.sources, normals, cloud.targets, cloud.targets,
                FmmOptions{.order = 4, .max_leaf = c.adaptive ? 32 : 60}, nullptr,
                TargetNormalDerivative{target_normals, weight});
  ASSERT_EQ(fmm.near_field_lists().target_normals.size(), cloud.targets.size());
  const std::size_t pairs = fmm.near_field_lists().pair_count();
  for (Strengths s : {Strengths::charges, Strengths::dipoles, Strengths::both})
    check_against_cpu(
        fmm, s, c.adaptive ? "two spheres, phi + w dphi/dn" : "icosphere, phi + w dphi/dn", pairs);
  GpuNearField gpu(fmm.near_field_lists());
  EXPECT_NE(gpu.describe().find("with the target normal derivative"), std::string::npos)
      << gpu.describe();
}

INSTANTIATE_TEST_SUITE_P(Trees, GpuNearFieldNormalTest,
                         ::testing::Values(Case{false, 0.0}, Case{false, 8.0}, Case{true, 0.0},
                                           Case{true, 8.0}),
                         [](const auto& info) {
                           return std::string(info.param.adaptive ? "TwoSpheres" : "Icosphere") +
                                  (info.param.k == 0.0 ? "Laplace" : "HelmholtzK8");
                         });

// Skipped pairs with target normals, and the device entry point: both as without normals.
TEST(GpuNearFieldNormal, SkipsThePairsTheCpuSkipsAndAccumulatesOnTheDevice) {
  SKIP_WITHOUT_GPU();
  testing::Cloud cloud = testing::icosphere_cloud(3);
  cloud.sources.insert(cloud.sources.end(), cloud.targets.begin(), cloud.targets.end());
  const std::vector<Vec3> normals = unit_normals(cloud.sources),
                          target_normals = unit_normals(cloud.targets);
  for (double skip : {1e-9, 0.04}) {
    const Fmm fmm(8.0, cloud.sources, normals, cloud.targets, cloud.targets,
                  FmmOptions{.order = 4, .max_leaf = 50, .skip_radius = skip}, nullptr,
                  TargetNormalDerivative{target_normals, cplx(0.0, 0.125)});
    check_against_cpu(
        fmm, Strengths::both,
        skip < 1e-3 ? "coincident pairs, phi + w dphi/dn" : "skip radius, phi + w dphi/dn",
        fmm.statistics().near_pairs);
    DeviceEntry run(fmm.near_field_lists(), 54);
  }
}

// Skipped pairs: every target is also a source (the coincident pairs must be skipped, as the
// CPU does) and a skip radius of about a tenth of the point spacing skips some more.
TEST(GpuNearField, SkipsThePairsTheCpuSkips) {
  SKIP_WITHOUT_GPU();
  testing::Cloud cloud = testing::icosphere_cloud(3);
  cloud.sources.insert(cloud.sources.end(), cloud.targets.begin(), cloud.targets.end());
  const std::vector<Vec3> normals = unit_normals(cloud.sources);
  for (double skip : {1e-9, 0.04}) {
    const Fmm fmm(8.0, cloud.sources, normals, cloud.targets,
                  FmmOptions{.order = 4, .max_leaf = 50, .skip_radius = skip});
    check_against_cpu(fmm, Strengths::both, skip < 1e-3 ? "coincident pairs" : "skip radius",
                      fmm.statistics().near_pairs);
  }
}

// Both the GPU and the CPU against the same sum in long double, on the adaptive tree whose
// closest pairs are 5e-5 apart (by the bound above, 1e-12 holds for each; the CPU once lost
// digits to -ffast-math there, as u / r per term: 2e-12).
TEST(GpuNearField, BothMatchTheSumInLongDouble) {
  SKIP_WITHOUT_GPU();
  const testing::Cloud cloud = testing::two_sphere_cloud();
  const std::vector<Vec3> normals = unit_normals(cloud.sources);
  const double k = 8.0;
  const Fmm fmm(k, cloud.sources, normals, cloud.targets, FmmOptions{.order = 4, .max_leaf = 32});
  const NearFieldLists lists = fmm.near_field_lists();
  const std::size_t ns = cloud.sources.size(), nt = cloud.targets.size();
  const std::vector<cplx> charges = testing::random_coefficients(ns, 71),
                          dipoles = testing::random_coefficients(ns, 72);
  using ldcplx = std::complex<long double>;
  std::vector<cplx> exact(nt, 0.0);
#pragma omp parallel for schedule(dynamic)
  for (std::size_t l = 0; l < lists.leaf_targets.size(); ++l)
    for (std::size_t i = lists.leaf_targets[l][0]; i < lists.leaf_targets[l][1]; ++i) {
      const std::size_t t = lists.target_order[i];
      ldcplx sum = 0.0L;
      for (std::size_t r = lists.offsets[l]; r < lists.offsets[l + 1]; ++r)
        for (std::size_t p = lists.ranges[r][0]; p < lists.ranges[r][1]; ++p) {
          const std::size_t j = lists.source_order[p];
          const long double dx = (long double)(cloud.sources[j].x) - cloud.targets[t].x,
                            dy = (long double)(cloud.sources[j].y) - cloud.targets[t].y,
                            dz = (long double)(cloud.sources[j].z) - cloud.targets[t].z;
          const long double r1 = std::sqrt(dx * dx + dy * dy + dz * dz), kr = k * r1;
          const ldcplx e = ldcplx(std::cos(kr), std::sin(kr)) / r1;
          const long double w =
              (dx * normals[j].x + dy * normals[j].y + dz * normals[j].z) / (r1 * r1);
          sum += e * (ldcplx(charges[j].real(), charges[j].imag()) +
                      ldcplx(-1.0L, kr) * w * ldcplx(dipoles[j].real(), dipoles[j].imag()));
        }
      sum *= 0.25L / 3.141592653589793238462643383279502884L;
      exact[t] = cplx(double(sum.real()), double(sum.imag()));
    }
  const std::vector<cplx> zero(nt, 0.0);
  std::vector<cplx> cpu(nt, 0.0), gpu(nt, 0.0);
  add_near_field_cpu(lists, charges, dipoles, cpu);
  GpuNearField(lists).apply(charges, dipoles, gpu);
  const Errors e_cpu = compare(cpu, exact, zero), e_gpu = compare(gpu, exact, zero);
  std::printf("[ gpu near ] against long double: GPU %.2e (2-norm), %.2e (max); CPU %.2e, %.2e\n",
              e_gpu.norm, e_gpu.max, e_cpu.norm, e_cpu.max);
  EXPECT_LE(e_gpu.norm, kTolerance);
  EXPECT_LE(e_gpu.max, kTolerance);
  EXPECT_LE(e_cpu.norm, kTolerance);
  EXPECT_LE(e_cpu.max, kTolerance);
}

// The device entry point accumulates into a device array, in input order.
TEST(GpuNearField, TheDeviceEntryPointAccumulates) {
  SKIP_WITHOUT_GPU();
  const testing::Cloud cloud = testing::two_sphere_cloud();
  const std::vector<Vec3> normals = unit_normals(cloud.sources);
  const Fmm fmm(4.0, cloud.sources, normals, cloud.targets, FmmOptions{.order = 4, .max_leaf = 20});
  DeviceEntry run(fmm.near_field_lists(), 51);
  // Nothing to sum: nothing changes.
  run.gpu.apply_device(nullptr, nullptr, run.d_potential.data());
  run.gpu.synchronize();
  std::vector<cplx> again(run.potential.size());
  run.d_potential.download(again.data());
  EXPECT_EQ(again, run.potential);
}

TEST(GpuNearField, BadInputIsAnError) {
  SKIP_WITHOUT_GPU();
  const testing::Cloud cloud = testing::icosphere_cloud(2);
  const Fmm with_normals(1.0, cloud.sources, unit_normals(cloud.sources), cloud.targets,
                         FmmOptions{.order = 4, .max_leaf = 30});
  EXPECT_THROW(GpuNearField(with_normals.near_field_lists(), {.threads = 48}), Error);
  EXPECT_THROW(GpuNearField(with_normals.near_field_lists(), {.threads = 512}), Error);
  EXPECT_THROW(GpuNearField(with_normals.near_field_lists(), {.targets_per_thread = 3}), Error);
  GpuNearField gpu(with_normals.near_field_lists());
  std::vector<cplx> q(cloud.sources.size(), 1.0), y(cloud.targets.size());
  std::vector<cplx> short_q(q.size() - 1, 1.0);
  EXPECT_THROW(gpu.apply(short_q, {}, y), Error);
  const Fmm without_normals(1.0, cloud.sources, {}, cloud.targets,
                            FmmOptions{.order = 4, .max_leaf = 30});
  GpuNearField charges_only(without_normals.near_field_lists());
  EXPECT_THROW(charges_only.apply({}, q, y), Error);
}

// Without a GPU (or a build without CUDA) the executor refuses with a message, never crashes.
TEST(GpuNearField, WithoutAGpuTheExecutorSaysWhy) {
  std::string why;
  if (gpu_available(&why)) GTEST_SKIP() << "a GPU is present";
  const testing::Cloud cloud = testing::icosphere_cloud(2);
  const Fmm fmm(1.0, cloud.sources, {}, cloud.targets, FmmOptions{.order = 4, .max_leaf = 30});
  try {
    GpuNearField gpu(fmm.near_field_lists());
    FAIL() << "constructed without a GPU";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("GPU"), std::string::npos) << e.what();
  }
}

// The whole FMM with M2L and the near field on the GPU against the CPU FMM, Laplace and
// Helmholtz, charges only and both (the M2L schemes are checked in gpu_m2l_test.cpp). The
// near-field part of each potential differs by the tolerance above times its size, at most
// the largest potential's; the M2L part likewise (gpu_m2l_test.cpp).
TEST(GpuNearField, TheFmmWithItsNearFieldOnTheGpuMatchesTheCpuFmm) {
  SKIP_WITHOUT_GPU();
  const testing::Cloud cloud = testing::two_sphere_cloud();
  const std::vector<Vec3> normals = unit_normals(cloud.sources);
  const std::vector<cplx> charges = testing::random_coefficients(cloud.sources.size(), 61),
                          dipoles = testing::random_coefficients(cloud.sources.size(), 62);
  for (double k : {0.0, 8.0})
    for (bool with_dipoles : {false, true}) {
      FmmOptions options{.order = 8, .max_leaf = 40};
      const Fmm cpu(k, cloud.sources, normals, cloud.targets, options);
      EXPECT_EQ(cpu.statistics().near_field_device, "cpu");
      std::vector<cplx> expected(cloud.targets.size());
      cpu.apply(charges, with_dipoles ? dipoles : std::vector<cplx>{}, expected);
      double largest = 0.0;
      for (const cplx& v : expected) largest = std::max(largest, std::abs(v));
      options.device = FmmOptions::Device::gpu;
      const Fmm gpu(k, cloud.sources, normals, cloud.targets, options);
      EXPECT_EQ(gpu.statistics().near_field_device, "gpu");
      EXPECT_NE(gpu.describe().find("near field on gpu"), std::string::npos) << gpu.describe();
      std::vector<cplx> y(cloud.targets.size());
      gpu.apply(charges, with_dipoles ? dipoles : std::vector<cplx>{}, y);
      double worst = 0.0;
      for (std::size_t i = 0; i < y.size(); ++i)
        worst = std::max(worst, std::abs(y[i] - expected[i]));
      EXPECT_LT(worst, kTolerance * largest) << "k = " << k << ", dipoles " << with_dipoles;
      // The near field can stay on the CPU.
      options.gpu_near_field = false;
      const Fmm m2l_only(k, cloud.sources, normals, cloud.targets, options);
      EXPECT_EQ(m2l_only.statistics().near_field_device, "cpu");
    }
}

// Targets far from every source (an evaluation grid about a head): the near field has no pair and
// reads no source; with dipoles it adds nothing instead of asking for the normals it holds none of
// (it refused, and every field evaluation of such a grid on the GPU with it). The whole FMM
// matches the CPU's.
TEST(GpuNearField, NoNearPairAddsNothingWithDipolesToo) {
  SKIP_WITHOUT_GPU();
  std::vector<Vec3> sources, targets;
  for (int i = 0; i < 400; ++i) {
    const double t = 0.1 * i;
    sources.push_back({0.1 * std::cos(t), 0.1 * std::sin(1.3 * t), 0.1 * std::sin(t)});
  }
  for (int i = 0; i < 300; ++i) {
    const double t = 0.37 * i;
    targets.push_back({1.2 * std::cos(t) * std::cos(0.5 * t), 1.2 * std::sin(t) * std::cos(0.5 * t),
                       1.2 * std::sin(0.5 * t)});
  }
  const std::vector<Vec3> normals = unit_normals(sources);
  const std::vector<cplx> charges = testing::random_coefficients(sources.size(), 71),
                          dipoles = testing::random_coefficients(sources.size(), 72);
  for (double k : {0.0, 20.0}) {
    FmmOptions options{.order = 10, .max_leaf = 20};
    const Fmm cpu(k, sources, normals, targets, options);
    std::vector<cplx> expected(targets.size());
    cpu.apply(charges, dipoles, expected);
    options.device = FmmOptions::Device::gpu;
    const Fmm gpu(k, sources, normals, targets, options);
    std::vector<cplx> y(targets.size());
    gpu.apply(charges, dipoles, y);
    double worst = 0.0, largest = 0.0;
    for (std::size_t i = 0; i < y.size(); ++i) {
      worst = std::max(worst, std::abs(y[i] - expected[i]));
      largest = std::max(largest, std::abs(expected[i]));
    }
    EXPECT_LT(worst, kTolerance * largest) << "k = " << k;
  }
}

}  // namespace
}  // namespace fmbem::fmm
