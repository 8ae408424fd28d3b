#include "fmbem/fmm/gpu_m2l.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <ostream>
#include <set>
#include <string>

#include "fmbem/core/error.hpp"
#include "fmbem/fmm/fmm.hpp"
#include "fmbem/fmm/gpu_device.hpp"
#include "fmbem/fmm/translations.hpp"
#include "gpu_test_skip.hpp"
#include "m2l_test_geometry.hpp"

namespace fmbem::fmm {
namespace {

// Tolerance: every scheme forms each local coefficient from the same n = K p^2 products as
// the CPU reference (K <= 189 pairs of a target, p^2 <= 256 columns), only summed in another
// order (blocks, tensor-core accumulation, fused multiply-adds). Two orders differ by at most
// 2 gamma_n sum|T_ij||M_j| (gamma_n = n u / (1 - n u), u = 2^-53): 5.4e-12 of sum|T||M| in the
// worst case (p = 16, K = 189), but rounding errors of independent operations grow like
// sqrt(n) u (2.4e-14 there), and with random moments sum|T||M| is of the order of ||L||. So
// 1e-12 holds with a margin of 40, while one wrong pair, row or matrix gives an error of
// order 1e-2 .. 1.
constexpr double kTolerance = 1e-12;

struct Result {
  double error = 0.0;          // max over cells of ||gpu - ref|| / ||ref - base||
  bool untouched_kept = true;  // cells without pairs unchanged
};

Result compare(const M2LPlan& plan, const std::vector<cplx>& gpu, const std::vector<cplx>& ref,
               const std::vector<cplx>& base) {
  const int size = plan.coefficients();
  std::set<int> targets;
  for (const auto& lv : plan.levels)
    for (const auto& pair : lv.pairs) targets.insert(pair.target);
  Result r;
  for (std::size_t c = 0; c < plan.num_cells; ++c) {
    double diff = 0.0, norm = 0.0;
    for (int i = 0; i < size; ++i) {
      diff += std::norm(gpu[c * size + i] - ref[c * size + i]);
      norm += std::norm(ref[c * size + i] - base[c * size + i]);
      if (!targets.count(int(c)) && gpu[c * size + i] != base[c * size + i])
        r.untouched_kept = false;
    }
    if (!std::isfinite(diff)) r.error = INFINITY;
    if (norm > 0.0) r.error = std::max(r.error, std::sqrt(diff / norm));
  }
  return r;
}

struct Case {
  bool adaptive;
  int p;
};

// gtest prints parameters in CTest's test names: readable and the same in every build (its
// default prints the struct's bytes, padding included).
void PrintTo(const Case& c, std::ostream* os) {
  *os << (c.adaptive ? "adaptive" : "uniform") << " tree, p = " << c.p;
}

class GpuM2LTest : public ::testing::TestWithParam<Case> {};

// Every scheme against the CPU reference on one tree and one set of moments, accumulating
// into random locals through the host entry point.
TEST_P(GpuM2LTest, EverySchemeMatchesTheCpuReference) {
  SKIP_WITHOUT_GPU();
  const Case c = GetParam();
  const testing::Cloud cloud =
      c.adaptive ? testing::two_sphere_cloud() : testing::icosphere_cloud(4);
  const Octree tree = testing::make_tree(cloud, c.adaptive ? 32 : 24);
  const M2LPlan plan = build_m2l_plan(tree, c.p, 8.0);
  ASSERT_GE(plan.levels.size(), 3u);
  const std::size_t count = plan.num_cells * plan.coefficients();
  const std::vector<cplx> multipole = testing::random_coefficients(count, 11 + c.p);
  const std::vector<cplx> base = testing::random_coefficients(count, 12 + c.p);
  std::vector<cplx> reference = base;
  apply_m2l_reference(plan, multipole.data(), reference.data());
  for (M2LScheme scheme : m2l_schemes()) {
    GpuM2L gpu(plan, scheme);
    std::vector<cplx> local = base;
    gpu.apply(multipole.data(), local.data());
    const Result r = compare(plan, local, reference, base);
    std::printf("[ gpu m2l  ] %-8s %s p = %2d: max relative error %.2e (%zu pairs, %s)\n",
                m2l_scheme_name(scheme), c.adaptive ? "two spheres" : "icosphere  ", c.p, r.error,
                plan.pair_count(), gpu.describe().c_str());
    EXPECT_LE(r.error, kTolerance) << m2l_scheme_name(scheme);
    EXPECT_TRUE(r.untouched_kept) << m2l_scheme_name(scheme) << " wrote a cell without pairs";
    EXPECT_GT(gpu.statistics().device_bytes, 0u);
    EXPECT_DOUBLE_EQ(gpu.statistics().flops(), plan.flops());
  }
}

INSTANTIATE_TEST_SUITE_P(Trees, GpuM2LTest,
                         ::testing::Values(Case{false, 4}, Case{false, 8}, Case{false, 16},
                                           Case{true, 4}, Case{true, 8}, Case{true, 16}),
                         [](const auto& info) {
                           return std::string(info.param.adaptive ? "TwoSpheres" : "Icosphere") +
                                  "P" + std::to_string(info.param.p);
                         });

// The blocking options: chunks of 1, 2 and 3 clusters a side (3 does not divide the grid),
// gemm with narrow products (much padding), and an order whose p^2 is no multiple of 16.
TEST(GpuM2L, OptionsAndOddOrdersMatchTheCpuReference) {
  SKIP_WITHOUT_GPU();
  const Octree tree = testing::make_tree(testing::two_sphere_cloud(), 32);
  for (int p : {3, 11}) {
    const M2LPlan plan = build_m2l_plan(tree, p, 2.0);
    const std::size_t count = plan.num_cells * plan.coefficients();
    const std::vector<cplx> multipole = testing::random_coefficients(count, 21);
    const std::vector<cplx> base = testing::random_coefficients(count, 22);
    std::vector<cplx> reference = base;
    apply_m2l_reference(plan, multipole.data(), reference.data());
    const auto check = [&](M2LScheme scheme, GpuM2LOptions options) {
      GpuM2L gpu(plan, scheme, options);
      std::vector<cplx> local = base;
      gpu.apply(multipole.data(), local.data());
      const Result r = compare(plan, local, reference, base);
      EXPECT_LE(r.error, kTolerance) << gpu.describe();
      EXPECT_TRUE(r.untouched_kept) << gpu.describe();
    };
    for (M2LScheme scheme : m2l_schemes()) check(scheme, {});
    for (int b : {1, 3, 4}) {
      check(M2LScheme::cluster, {.chunk = b});
      check(M2LScheme::ij, {.chunk = b});
    }
    check(M2LScheme::gemm, {.gemm_columns = 16});
    check(M2LScheme::gemm, {.gemm_columns = 200});
  }
}

// The device entry points accumulate into device arrays; one level at a time gives the same.
TEST(GpuM2L, DeviceEntryPointsAccumulate) {
  SKIP_WITHOUT_GPU();
  const Octree tree = testing::make_tree(testing::icosphere_cloud(3), 16);
  const M2LPlan plan = build_m2l_plan(tree, 8, 8.0);
  const std::size_t count = plan.num_cells * plan.coefficients();
  const std::vector<cplx> multipole = testing::random_coefficients(count, 31);
  const std::vector<cplx> base = testing::random_coefficients(count, 32);
  std::vector<cplx> reference = base;
  apply_m2l_reference(plan, multipole.data(), reference.data());
  DeviceArray d_multipole(count), d_local(count);
  d_multipole.upload(multipole.data());
  for (M2LScheme scheme : {M2LScheme::basic, M2LScheme::dmma}) {
    GpuM2L gpu(plan, scheme);
    d_local.upload(base.data());
    gpu.apply_device(d_multipole.data(), d_local.data());
    gpu.synchronize();
    std::vector<cplx> local(count);
    d_local.download(local.data());
    EXPECT_LE(compare(plan, local, reference, base).error, kTolerance);
    d_local.upload(base.data());
    for (std::size_t l = 0; l < plan.levels.size(); ++l)
      gpu.apply_level_device(l, d_multipole.data(), d_local.data());
    gpu.synchronize();
    d_local.download(local.data());
    EXPECT_LE(compare(plan, local, reference, base).error, kTolerance);
    EXPECT_THROW(gpu.apply_level_device(plan.levels.size(), d_multipole.data(), d_local.data()),
                 Error);
  }
}

// The matrices GpuM2L builds on the device against MultipoleToLocalTable's on the host, entry
// by entry, in the layouts of dmma (padded) and gemm. Both sum the same n terms
// c (kappa^e Shat) of an entry in the same order and divide by sigma; only the rounding of the
// products differs (fused multiply-adds on the device). Each of the two is within
// (n + 5) u S / sigma of the exact sum, S = sum |c| kappa^e |Shat| over the terms (a complex
// product: sqrt(2) gamma_2 < 3u; the real scaling: u; n - 1 additions: gamma_(n-1); the
// division: u), so they differ by at most 2 (n + 5) u S / sigma (u = 2^-53; n <= p terms).
// A wrong term, harmonic, power, level or position gives errors of order S itself. At p = 16
// every 5th matrix is checked (the bound costs a pass over the 441,320 terms a matrix); that
// still reaches every group of 8 matrices the kernel's threads share.
TEST(GpuM2L, DeviceBuiltMatricesMatchTheHostTable) {
  SKIP_WITHOUT_GPU();
  constexpr double u = 0x1p-53;
  const Octree trees[] = {testing::make_tree(testing::icosphere_cloud(4), 24),
                          testing::make_tree(testing::two_sphere_cloud(), 32)};
  for (int p : {4, 8, 16}) {
    const int size = p * p;
    const std::size_t stride = p >= 16 ? 5 : 1, matrix_size = std::size_t(size) * size;
    const MultipoleToLocalTable table(GauntTable(p), p);
    std::vector<int> terms(matrix_size, 0);  // per entry
    for (const auto& term : table.terms()) ++terms[term.entry];
    for (double k : {8.0, 0.0})
      for (const Octree& tree : trees) {
        // Dense host matrices at every order (from p = 8 the host translates by rotation and
        // keeps none).
        const M2LPlan plan = build_m2l_plan(tree, p, k, true, 2, max_degree + 1);
        ASSERT_GE(plan.levels.size(), 3u);
        for (const M2LLevelPlan& lv : plan.levels)
          ASSERT_EQ(lv.matrices.size(), lv.matrix_count() * matrix_size);
        // Per entry (row-major) of each checked matrix: the bound above.
        std::vector<std::vector<double>> bounds(plan.levels.size());
        for (std::size_t l = 0; l < plan.levels.size(); ++l) {
          const M2LLevelPlan& lv = plan.levels[l];
          const std::vector<double> w = table.kappa_powers(k, lv.sigma);
          bounds[l].assign(lv.matrices.size(), 0.0);
#pragma omp parallel for schedule(dynamic)
          for (std::size_t m = 0; m < lv.matrix_count(); m += stride) {
            const std::vector<cplx> st =
                table.singular_harmonics(k, lv.sigma, transfer_offset(lv.transfer[m]) * lv.sigma);
            double* b = &bounds[l][m * matrix_size];
            for (const auto& term : table.terms())
              b[term.entry] +=
                  std::abs(term.constant) * w[term.power] * std::abs(st[term.harmonic]);
            for (std::size_t e = 0; e < matrix_size; ++e)
              b[e] *= 2.0 * (terms[e] + 5) * u / lv.sigma;
          }
        }
        for (M2LScheme scheme : {M2LScheme::dmma, M2LScheme::gemm}) {
          const GpuM2L gpu(plan, scheme);
          double worst = 0.0;  // largest |device - host| / bound
          for (std::size_t l = 0; l < plan.levels.size(); ++l) {
            const M2LLevelPlan& lv = plan.levels[l];
            const std::vector<cplx> device = gpu.matrices(l);
            ASSERT_EQ(device.size(), lv.matrices.size());
            std::size_t wrong = 0;
            for (std::size_t m = 0; m < lv.matrix_count(); m += stride)
              for (std::size_t e = m * matrix_size; e < (m + 1) * matrix_size; ++e) {
                const double diff = std::abs(device[e] - lv.matrices[e]);
                if (!(diff <= bounds[l][e])) ++wrong;
                if (bounds[l][e] > 0.0) worst = std::max(worst, diff / bounds[l][e]);
              }
            EXPECT_EQ(wrong, 0u) << m2l_scheme_name(scheme) << ", p = " << p << ", k = " << k
                                 << ", level " << lv.level << " (" << lv.matrix_count()
                                 << " matrices), worst " << worst << " of the bound";
          }
          std::printf(
              "[ m2l mat  ] %-4s p = %2d, k = %g, %zu levels: largest difference %.1e of "
              "the bound\n",
              m2l_scheme_name(scheme), p, k, plan.levels.size(), worst);
        }
      }
  }
}

TEST(GpuM2L, APlanWithoutLevelsChangesNothing) {
  SKIP_WITHOUT_GPU();
  const Octree tree = testing::make_tree(testing::icosphere_cloud(1), 1000);
  const M2LPlan plan = build_m2l_plan(tree, 4, 1.0);
  ASSERT_TRUE(plan.levels.empty());
  for (M2LScheme scheme : m2l_schemes()) {
    GpuM2L gpu(plan, scheme);
    std::vector<cplx> m(plan.num_cells * 16, 1.0), l(plan.num_cells * 16, 2.0);
    gpu.apply(m.data(), l.data());
    for (const cplx& x : l) EXPECT_EQ(x, cplx(2.0));
  }
}

TEST(GpuM2L, OutOfMemoryIsAClearError) {
  SKIP_WITHOUT_GPU();
  try {
    DeviceArray huge(std::size_t(1) << 46);  // 1 PiB
    FAIL() << "allocated 1 PiB";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("GPU out of memory"), std::string::npos) << e.what();
  }
}

TEST(GpuM2L, BadOptionsAreErrors) {
  SKIP_WITHOUT_GPU();
  const Octree tree = testing::make_tree(testing::icosphere_cloud(2), 16);
  const M2LPlan plan = build_m2l_plan(tree, 4, 1.0);
  EXPECT_THROW(GpuM2L(plan, M2LScheme::cluster, {.chunk = 0}), Error);
  EXPECT_THROW(GpuM2L(plan, M2LScheme::ij, {.chunk = 9}), Error);
  EXPECT_THROW(GpuM2L(plan, M2LScheme::gemm, {.gemm_columns = -1}), Error);
}

// Without a GPU (or a build without CUDA) the executor refuses with a message, never crashes.
TEST(GpuM2L, WithoutAGpuTheExecutorSaysWhy) {
  std::string why;
  if (gpu_available(&why)) GTEST_SKIP() << "a GPU is present";
  EXPECT_FALSE(why.empty());
  const Octree tree = testing::make_tree(testing::icosphere_cloud(2), 16);
  const M2LPlan plan = build_m2l_plan(tree, 4, 1.0);
  try {
    GpuM2L gpu(plan, M2LScheme::basic);
    FAIL() << "constructed without a GPU";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("GPU"), std::string::npos) << e.what();
  }
}

// The whole FMM with its M2L on the GPU against the CPU FMM on the same points: the M2L part
// of each potential differs by the tolerance above (relative to the local coefficients);
// the far field is at most the whole potential, so 1e-12 of the largest potential bounds the
// difference. Double-layer dipoles included, as the BEM applies them.
TEST(GpuM2L, TheFmmWithItsM2LOnTheGpuMatchesTheCpuFmm) {
  SKIP_WITHOUT_GPU();
  const testing::Cloud cloud = testing::two_sphere_cloud();
  std::vector<Vec3> normals(cloud.sources.size());
  for (std::size_t i = 0; i < normals.size(); ++i) normals[i] = normalized(cloud.sources[i]);
  std::vector<cplx> charges(cloud.sources.size()), dipoles(cloud.sources.size());
  for (std::size_t i = 0; i < charges.size(); ++i) {
    charges[i] = cplx(std::sin(1.0 + i), std::cos(3.0 * i));
    dipoles[i] = cplx(std::cos(2.0 + i), std::sin(0.5 * i));
  }
  for (int p : {8, 16}) {
    FmmOptions options{.order = p, .max_leaf = 40};
    const Fmm cpu(4.0, cloud.sources, normals, cloud.targets, options);
    std::vector<cplx> expected(cloud.targets.size());
    cpu.apply(charges, dipoles, expected);
    double largest = 0.0;
    for (const cplx& v : expected) largest = std::max(largest, std::abs(v));
    for (M2LScheme scheme : m2l_schemes()) {
      options.device = FmmOptions::Device::gpu;
      options.m2l_scheme = scheme;
      const Fmm gpu(4.0, cloud.sources, normals, cloud.targets, options);
      EXPECT_NE(gpu.statistics().m2l_device.find("gpu"), std::string::npos);
      std::vector<cplx> y(cloud.targets.size());
      gpu.apply(charges, dipoles, y);
      double worst = 0.0;
      for (std::size_t i = 0; i < y.size(); ++i)
        worst = std::max(worst, std::abs(y[i] - expected[i]));
      EXPECT_LT(worst, kTolerance * largest) << m2l_scheme_name(scheme) << ", p = " << p;
    }
  }
}

TEST(M2LScheme, NamesRoundTrip) {
  ASSERT_EQ(m2l_schemes().size(), 6u);
  for (M2LScheme scheme : m2l_schemes())
    EXPECT_EQ(parse_m2l_scheme(m2l_scheme_name(scheme)), scheme);
  try {
    parse_m2l_scheme("blocked");
    FAIL() << "accepted an unknown scheme";
  } catch (const Error& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("'blocked'"), std::string::npos) << message;
    for (const char* name : {"basic", "sibling", "cluster", "ij", "gemm", "dmma"})
      EXPECT_NE(message.find(name), std::string::npos) << message;
  }
}

}  // namespace
}  // namespace fmbem::fmm
