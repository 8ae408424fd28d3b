#include <gtest/gtest.h>
#include <omp.h>

#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <random>
#include <vector>

#include "fmbem/core/error.hpp"
#include "fmbem/fmm/direct_sum.hpp"
#include "fmbem/fmm/fmm.hpp"
#include "fmbem/fmm/gpu_device.hpp"
#include "gpu_test_skip.hpp"
#include "point_sets.hpp"

// The wideband FMM (levels too large for the low-frequency expansions in the diagonal form,
// docs/wideband.md) against the direct sum on sampled targets, the error relative to the part of
// the potentials the expansions carry (the direct sum minus the near field's).
namespace fmbem::fmm {
namespace {

using testing::make_points;
using testing::PointSet;
using testing::relative_error;
using testing::skip_radius;

// The direct sum's phi + weight dphi/dn_t at every stride-th target.
std::vector<cplx> direct_sampled(double k, const PointSet& set, cplx weight, std::size_t stride) {
  std::vector<std::size_t> order(set.sources.size());
  std::iota(order.begin(), order.end(), 0);
  const PointSources sources(set.sources, set.normals, order, set.charges, set.dipoles);
  std::vector<cplx> phi((set.targets.size() + stride - 1) / stride);
#pragma omp parallel for
  for (std::size_t s = 0; s < phi.size(); ++s) {
    const std::size_t i = s * stride;
    const auto vd = sources.potential_and_normal_derivative(
        0, sources.size(), k, set.targets[i], set.target_normals[i], skip_radius * skip_radius);
    phi[s] = vd.value + weight * vd.normal_derivative;
  }
  return phi;
}

// The near lists' part of phi + weight dphi/dn_t at every stride-th target: what the FMM sums
// directly, so that direct - near is the part its expansions carry.
std::vector<cplx> near_part_sampled(const Fmm& fmm, const PointSet& set, cplx weight,
                                    std::size_t stride) {
  const NearFieldLists lists = fmm.near_field_lists();
  const PointSources sources(PointSources::PointsInOrder{}, lists.sources, lists.normals,
                             lists.source_order, set.charges, set.dipoles);
  std::vector<std::size_t> leaf_of_position(lists.target_order.size());
  for (std::size_t l = 0; l < lists.leaf_targets.size(); ++l)
    for (std::size_t i = lists.leaf_targets[l][0]; i < lists.leaf_targets[l][1]; ++i)
      leaf_of_position[i] = l;
  std::vector<std::size_t> position_of(lists.target_order.size());
  for (std::size_t i = 0; i < position_of.size(); ++i) position_of[lists.target_order[i]] = i;
  std::vector<cplx> near((set.targets.size() + stride - 1) / stride);
  for (std::size_t s = 0; s < near.size(); ++s) {
    const std::size_t t = s * stride, l = leaf_of_position[position_of[t]];
    for (std::size_t r = lists.offsets[l]; r < lists.offsets[l + 1]; ++r) {
      const auto vd = sources.potential_and_normal_derivative(
          lists.ranges[r][0], lists.ranges[r][1], lists.k, set.targets[t], set.target_normals[t],
          skip_radius * skip_radius);
      near[s] += vd.value + weight * vd.normal_derivative;
    }
  }
  return near;
}

struct WideCase {
  bool sphere;
  double k;
  double tolerance;
  // The targets on a second sphere beside the sources' (radius 0.5 each, centres 2 apart):
  // every pair far, carried by the coarse levels' expansions.
  bool apart = false;
};

void PrintTo(const WideCase& c, std::ostream* os) {
  *os << (c.apart    ? "two spheres"
          : c.sphere ? "sphere"
                     : "box")
      << ", k = " << c.k << ", eps = " << c.tolerance;
}

class WidebandFmm : public ::testing::TestWithParam<WideCase> {};

TEST_P(WidebandFmm, MatchesTheDirectSum) {
  const WideCase c = GetParam();
  PointSet set = make_points(c.sphere, 20000, 10000, 5);
  if (c.apart) {
    for (Vec3& y : set.sources) y = Vec3{-1.0, 0.0, 0.0} + 0.5 * y;
    for (Vec3& x : set.targets) x = Vec3{1.0, 0.0, 0.0} + 0.5 * normalized(x);
  }
  // Coherent strengths (a plane wave's trace, as a scattering problem's density): the far field
  // is then of the near field's size, not the small remainder of random signs.
  const Vec3 direction = normalized(Vec3{1.0, 2.0, 3.0});
  for (std::size_t j = 0; j < set.sources.size(); ++j) {
    const cplx wave = std::exp(cplx(0.0, c.k * dot(direction, set.sources[j])));
    set.charges[j] = wave;
    set.dipoles[j] = wave * dot(direction, set.normals[j]);
  }
  const cplx weight(0.0, 1.0 / c.k);  // Burton-Miller's alpha = i / k
  FmmOptions options;
  options.tolerance = c.tolerance;
  options.max_leaf = 40;
  options.skip_radius = skip_radius;
  const auto t0 = std::chrono::steady_clock::now();
  // Both point sets split the tree (the sources alone where the targets are apart).
  std::vector<Vec3> splitting = set.targets;
  if (c.apart) splitting.insert(splitting.end(), set.sources.begin(), set.sources.end());
  const Fmm fmm(c.k, set.sources, set.normals, set.targets, splitting, options, nullptr,
                TargetNormalDerivative{set.target_normals, weight});
  const auto t1 = std::chrono::steady_clock::now();
  std::vector<cplx> phi(set.targets.size());
  fmm.apply(set.charges, set.dipoles, phi);
  const auto t2 = std::chrono::steady_clock::now();
  const std::size_t stride = 97;
  const std::vector<cplx> expected = direct_sampled(c.k, set, weight, stride);
  std::vector<cplx> sampled;
  for (std::size_t i = 0; i < phi.size(); i += stride) sampled.push_back(phi[i]);
  // The FMM's error as order_for_tolerance defines it (the whole potential's relative error),
  // and relative to the part the expansions carry (the direct sum minus the near lists' sums),
  // which the diagonal levels' error cannot hide behind the near field's size: for targets
  // apart from the sources the two are one.
  const double error = relative_error(sampled, expected);
  const std::vector<cplx> near = near_part_sampled(fmm, set, weight, stride);
  double num = 0.0, den = 0.0;
  for (std::size_t i = 0; i < sampled.size(); ++i) {
    num += std::norm(sampled[i] - expected[i]);
    den += std::norm(expected[i] - near[i]);
  }
  const double far_error = std::sqrt(num / den);
  const FmmStatistics& s = fmm.statistics();
  std::printf("[ measured ] %s k D ~ %.0f eps %.0e: p %d, levels %d, switch level %d, bandwidths",
              c.apart    ? "two spheres"
              : c.sphere ? "sphere"
                         : "box",
              2 * c.k, c.tolerance, s.order, s.levels, s.switch_level);
  for (int b : s.diagonal_bandwidths) std::printf(" %d", b);
  std::printf(
      ", %zu diagonal pairs; error %.2e, of the far part %.2e; set-up %.2f s, apply %.2f s\n",
      s.diagonal_pairs, error, far_error, std::chrono::duration<double>(t1 - t0).count(),
      std::chrono::duration<double>(t2 - t1).count());
  EXPECT_GE(s.switch_level, 2);
  // The tree is split down to the conversion level: no leaf on the diagonal levels, no deferred
  // pair summed directly.
  for (int leaf : fmm.tree().leaves()) EXPECT_GT(fmm.tree().cells()[leaf].level, s.switch_level);
  EXPECT_EQ(s.deferred_direct_pairs, 0u);
  EXPECT_LT(error, c.tolerance);
  if (c.apart) EXPECT_LT(far_error, c.tolerance);
}

INSTANTIATE_TEST_SUITE_P(HighFrequency, WidebandFmm,
                         ::testing::Values(WideCase{true, 16.0, 1e-4}, WideCase{true, 32.0, 1e-4},
                                           WideCase{true, 32.0, 1e-6}, WideCase{false, 32.0, 1e-4},
                                           WideCase{true, 32.0, 1e-4, true},
                                           WideCase{true, 32.0, 1e-6, true},
                                           WideCase{true, 64.0, 1e-4, true}));

// The GPU's diagonal levels against the CPU's on the same plan (the same tree: max_leaf given),
// every phase on the device. The two sum in other orders (the M2L sums a target's pairs before
// adding them, the conversions are cuBLAS products, the leaves' evaluations reduce over a block)
// and the GPU fuses multiply-adds, so they agree to rounding: within 1e-12, the accuracy the
// issue asks of the CPU and GPU paths, unless the algorithm's own rounding noise is larger. The
// diagonal M2L multiplies by transfer functions that exceed the kernel they represent where the
// bandwidth passes k |t| (the finest diagonal levels, k w of a few), so a rounding in a signature
// grows by that factor; the test measures the noise as the CPU's change when the strengths are
// scaled by 1 + 3 2^-30 (every rounding moves, the exact result scales) and allows the GPU four
// times it (two independent roundings of the same size: sqrt(2), and a margin for the fused and
// blocked operations; measured on an H200: the GPU within 0.8-2.3 times the noise). A cluster of
// points in a corner of the bounding box, a leaf on the diagonal levels in a plain tree, is split
// down to the conversion level on both.
class WidebandGpu : public ::testing::TestWithParam<WideCase> {};

TEST_P(WidebandGpu, MatchesTheCpu) {
  SKIP_WITHOUT_GPU();
  const WideCase c = GetParam();
  PointSet set = make_points(c.sphere, 20000, 10000, 7);
  if (c.apart) {
    for (Vec3& y : set.sources) y = Vec3{-1.0, 0.0, 0.0} + 0.5 * y;
    for (Vec3& x : set.targets) x = Vec3{1.0, 0.0, 0.0} + 0.5 * normalized(x);
  }
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
  const Vec3 direction = normalized(Vec3{1.0, 2.0, 3.0});
  for (std::size_t j = 0; j < 20000; ++j) {
    const cplx wave = std::exp(cplx(0.0, c.k * dot(direction, set.sources[j])));
    set.charges[j] = wave;
    set.dipoles[j] = wave * dot(direction, set.normals[j]);
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
