#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <memory>
#include <random>
#include <vector>

#include "fmbem/fmm/fmm.hpp"
#include "fmbem/fmm/gpu_device.hpp"
#include "gpu_test_skip.hpp"
#include "point_sets.hpp"

// The wideband FMM's diagonal levels on the GPU against the CPU's (wideband_fmm_test.cpp checks
// the CPU's against the direct sum).
namespace fmbem::fmm {
namespace {

using testing::PointSet;
using testing::skip_radius;
using testing::wide_case_points;
using testing::WideCase;

// The GPU's diagonal levels against the CPU's on the same plan (the same tree: max_leaf given),
// every phase on the device. The two sum in other orders (the M2L sums a target's pairs before
// adding them, the conversions are cuBLAS products) and the GPU fuses multiply-adds, so they
// agree to rounding: within 1e-12, the accuracy the issue asks of the CPU and GPU paths, unless
// the algorithm's own rounding noise is larger. The diagonal M2L multiplies by transfer functions
// that exceed the kernel they represent where the bandwidth passes k |t| (the finest diagonal
// levels, k w of a few), so a rounding in a signature grows by that factor; the test measures
// the noise as the CPU's change when the strengths are scaled by 1 + 3 2^-30 (every rounding
// moves, the exact result scales) and allows the GPU four times it (two independent roundings
// of the same size: sqrt(2), and a margin for the fused and blocked operations; measured on an
// H200: the GPU within 0.8-2.3 times the noise). A cluster of points in a corner of the bounding
// box, a leaf on the diagonal levels in a plain tree, is split down to the conversion level on
// both.
class WidebandGpu : public ::testing::TestWithParam<WideCase> {};

TEST_P(WidebandGpu, MatchesTheCpu) {
  SKIP_WITHOUT_GPU();
  const WideCase c = GetParam();
  PointSet set = wide_case_points(c, 7);
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> u(-0.02, 0.02);
  for (int i = 0; i < 24; ++i) {
    const Vec3 corner{0.9 + u(rng), 0.9 + u(rng), 0.9 + u(rng)};
    const Vec3 normal = normalized(Vec3{1.0, 1.0, 1.0});
    set.sources.push_back(corner);
    set.normals.push_back(normal);
    set.charges.emplace_back(1.0, 0.5);
    set.dipoles.emplace_back(-0.5, 1.0);
    set.targets.push_back(corner + Vec3{0.01, 0.0, 0.0});
    set.target_normals.push_back(normal);
  }
  const cplx weight(0.0, 1.0 / c.k);
  std::vector<Vec3> splitting = set.targets;
  if (c.apart) splitting.insert(splitting.end(), set.sources.begin(), set.sources.end());
  const auto make = [&](FmmOptions::Device device, bool normals) {
    FmmOptions options;
    options.tolerance = c.tolerance;
    options.max_leaf = 40;
    options.skip_radius = skip_radius;
    options.device = device;
    return std::make_unique<Fmm>(
        c.k, set.sources, set.normals, set.targets, splitting, options, nullptr,
        normals ? TargetNormalDerivative{set.target_normals, weight} : TargetNormalDerivative{});
  };
  for (bool normals : {false, true}) {
    const auto cpu = make(FmmOptions::Device::cpu, normals);
    const auto gpu = make(FmmOptions::Device::gpu, normals);
    ASSERT_TRUE(gpu->runs_on_gpu());
    ASSERT_GE(gpu->statistics().switch_level, 2);
    EXPECT_EQ(gpu->statistics().switch_level, cpu->statistics().switch_level);
    EXPECT_EQ(gpu->statistics().diagonal_pairs, cpu->statistics().diagonal_pairs);
    EXPECT_NE(gpu->describe().find("diagonal levels on gpu"), std::string::npos) << gpu->describe();
    const std::size_t nt = set.targets.size();
    for (int strengths = 0; strengths < 3; ++strengths) {
      const std::vector<cplx> none;
      const std::vector<cplx>& charges = strengths == 1 ? none : set.charges;
      const std::vector<cplx>& dipoles = strengths == 0 ? none : set.dipoles;
      std::vector<cplx> on_cpu(nt), on_gpu(nt, cplx(7.0)), scaled(nt);  // on_gpu poisoned
      cpu->apply(charges, dipoles, on_cpu);
      gpu->apply(charges, dipoles, on_gpu);
      const double scale = 1.0 + 3.0 * std::ldexp(1.0, -30);
      std::vector<cplx> scaled_charges(charges), scaled_dipoles(dipoles);
      for (cplx& q : scaled_charges) q *= scale;
      for (cplx& d : scaled_dipoles) d *= scale;
      cpu->apply(scaled_charges, scaled_dipoles, scaled);
      for (cplx& v : scaled) v /= scale;
      const auto differences = [&](const std::vector<cplx>& a) {
        double num = 0.0, den = 0.0, max_diff = 0.0, max_value = 0.0;
        for (std::size_t i = 0; i < nt; ++i) {
          num += std::norm(a[i] - on_cpu[i]);
          den += std::norm(on_cpu[i]);
          max_diff = std::max(max_diff, std::abs(a[i] - on_cpu[i]));
          max_value = std::max(max_value, std::abs(on_cpu[i]));
        }
        return std::array<double, 2>{std::sqrt(num / den), max_diff / max_value};
      };
      const auto gpu_diff = differences(on_gpu), noise = differences(scaled);
      std::printf(
          "[ gpu wideband ] %s k D ~ %.0f eps %.0e%s, strengths %d: %.2e (2-norm), "
          "%.2e (max); the CPU's rounding noise %.2e, %.2e\n",
          c.apart    ? "two spheres"
          : c.sphere ? "sphere"
                     : "box",
          2 * c.k, c.tolerance, normals ? ", phi + w dphi/dn" : "", strengths, gpu_diff[0],
          gpu_diff[1], noise[0], noise[1]);
      // The largest difference (relative to the largest value) against the larger of the two
      // noise measures: the maximum over 10^4 targets of one noise sample is a noisier
      // statistic than the 2-norm (measured on the box: 2.9e-13 against 8.2e-13).
      EXPECT_LE(gpu_diff[0], std::max(1e-12, 4.0 * noise[0]));
      EXPECT_LE(gpu_diff[1], std::max(1e-12, 4.0 * std::max(noise[0], noise[1])));
      // apply_device runs the same kernels: the same numbers to the bit.
      const std::size_t ns = set.sources.size();
      DeviceArray d_charges(ns), d_dipoles(ns), d_potential(nt);
      if (!charges.empty()) d_charges.upload(charges.data());
      if (!dipoles.empty()) d_dipoles.upload(dipoles.data());
      gpu->apply_device(charges.empty() ? nullptr : d_charges.data(),
                        dipoles.empty() ? nullptr : d_dipoles.data(), d_potential.data());
      std::vector<cplx> device(nt);
      d_potential.download(device.data());
      EXPECT_EQ(device, on_gpu);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(HighFrequency, WidebandGpu,
                         ::testing::Values(WideCase{true, 32.0, 1e-4}, WideCase{true, 32.0, 1e-6},
                                           WideCase{false, 32.0, 1e-4},
                                           WideCase{true, 64.0, 1e-4, true}));

}  // namespace
}  // namespace fmbem::fmm
