// CorrectedLayerPotentials::near_block on the GPU (the correction's entries there, the regular
// rule formed again on the device) against the CPU's, for Burton-Miller and cbie, with the
// constant and the quadratic read of the double density.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <limits>
#include <memory>
#include <random>
#include <vector>

#include "../fmm/gpu_test_skip.hpp"
#include "fmbem/bem/direct_layer_potentials.hpp"
#include "fmbem/fmm/gpu_m2l.hpp"  // gpu_available (SKIP_WITHOUT_GPU)
#include "fmbem/kernel/kernel.hpp"
#include "fmbem/mesh/mesh.hpp"

namespace fmbem {
namespace {

constexpr double kInv4Pi = 1.0 / (4.0 * 3.14159265358979323846);
// The correction's GPU entries agree with the CPU's within 1e-11 of their row's scale
// (gpu_burton_miller_test.cpp derives it). A block entry is c.double_layer (regular + correction
// of D + alpha N) + c.single_layer (regular + correction of S + alpha D') (+ identity), each
// regular part formed by the same operations (no fused multiply-adds) from the same library
// functions: a few ulp of terms no larger than the row's scale (regular = accurate - correction,
// both of that scale), cancelling by at most ~10 in the quadratic read's folded sums. So the
// blocks agree within 1e-11 of the row's scale |c.dl| scale_D + |c.sl| scale_S, plus rounding
// far below it: we ask 2e-11.
constexpr double kBlockTolerance = 2e-11;
// With the same correction entries (the GPU's, downloaded) only the regular parts' rounding
// differs: per term a few ulp, about 13 stencil elements x 6 points x 5 monomials x 2 sums of
// terms of the row's scale, cancelling by ~10: a linear bound near 1e-12 of the row's scale.
constexpr double kSameEntriesTolerance = 1e-12;

Mesh icosphere(int level) { return Mesh::from_surface(make_icosphere(level, 1.0), "icosphere"); }

struct Worst {
  double cpu = 0.0, same = 0.0;
};

// GPU near_block (correction on the device) against the CPU's (correction on the host), and
// against the CPU formulas on the GPU's own entries (near_block_host), each relative to the
// row's scale from the CPU correction's entries.
Worst compare(const Mesh& mesh, double k, cplx coupling, bool quadratic, RowRange rows) {
  const Discretization disc(mesh, quadratic ? 6 : 3);
  const DensityModel model = quadratic ? DensityModel::quadratic : DensityModel::constant;
  NearFieldOptions options;
  DirectLayerPotentials cpu(disc, k, rows, options, coupling, model);
  options.gpu = true;
  DirectLayerPotentials gpu(disc, k, rows, options, coupling, model);
  EXPECT_TRUE(gpu.near_field().on_device());
  // A diagonal extra (as bem_solve's curvature correction of D'), so that its place is checked.
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<cplx> extra(rows.size());
  for (cplx& e : extra) e = cplx(u(rng), u(rng)) * 0.1;
  cpu.set_single_layer_diagonal_extra(extra);
  gpu.set_single_layer_diagonal_extra(extra);
  const OperatorCoefficients c{cplx(0.5, 0.0), cplx(-1.0, 0.0), cplx(0.3, -0.7)};
  const std::vector<cplx> reference = cpu.near_block(c);
  const std::vector<cplx> device = gpu.near_block(c);
  const std::vector<cplx> same = gpu.near_block_host(c);
  EXPECT_EQ(device.size(), reference.size());
  if (device.size() != reference.size()) return {1.0, 1.0};
  const auto row_start = cpu.near_field().row_start();
  const auto cs = cpu.near_field().single_entries(), cd = cpu.near_field().double_entries();
  Worst worst;
  for (std::size_t r = 0; r < rows.size(); ++r) {
    double scale_s = std::abs(cpu.single_layer_diagonal()[r]);
    double scale_d = std::max(kInv4Pi, std::abs(cpu.double_layer_diagonal()[r]));
    for (auto at = std::size_t(row_start[r]); at < std::size_t(row_start[r + 1]); ++at) {
      scale_s = std::max(scale_s, std::abs(cs[at]));
      scale_d = std::max(scale_d, std::abs(cd[at]));
    }
    const double scale = std::abs(c.double_layer) * scale_d + std::abs(c.single_layer) * scale_s;
    for (auto at = std::size_t(row_start[r]); at < std::size_t(row_start[r + 1]); ++at) {
      const double d_cpu = std::abs(device[at] - reference[at]) / scale;
      const double d_same = std::abs(device[at] - same[at]) / scale;
      worst.cpu = std::isnan(d_cpu) ? 1.0 : std::max(worst.cpu, d_cpu);  // NaN fails
      worst.same = std::isnan(d_same) ? 1.0 : std::max(worst.same, d_same);
    }
  }
  std::printf(
      "[ measured ] near block, %zu rows, k = %g, coupling %g%+gi, %s read: GPU - CPU %.2e, "
      "GPU - CPU formulas on the GPU's entries %.2e (of the row's scale)\n",
      rows.size(), k, coupling.real(), coupling.imag(), quadratic ? "quadratic" : "constant",
      worst.cpu, worst.same);
  return worst;
}

void expect_match(const Mesh& mesh, RowRange rows) {
  for (const double k : {0.5, 8.0})
    for (const cplx coupling : {cplx(0.0, 1.0 / k), cplx(0.0)})  // bm (alpha = i / k), cbie
      for (const bool quadratic : {false, true}) {
        const Worst w = compare(mesh, k, coupling, quadratic, rows);
        EXPECT_LE(w.cpu, kBlockTolerance)
            << "k " << k << " coupling " << coupling << " " << quadratic;
        EXPECT_LE(w.same, kSameEntriesTolerance)
            << "k " << k << " coupling " << coupling << " " << quadratic;
      }
}

TEST(GpuNearBlock, MatchesCpuOnIcosphere) {
  SKIP_WITHOUT_GPU();
  const Mesh mesh = icosphere(3);
  expect_match(mesh, {0, mesh.size()});
  expect_match(mesh, {200, 900});  // a rank's rows
}

// The CPU-only reference: near_block_host is what near_block gives without the GPU.
TEST(NearBlock, HostIsNearBlockWithoutTheGpu) {
  const Mesh mesh = icosphere(2);
  const Discretization disc(mesh, 6);
  const DirectLayerPotentials layers(disc, 2.0, {10, 300}, NearFieldOptions{}, cplx(0.0, 0.5),
                                     DensityModel::quadratic);
  const OperatorCoefficients c{0.5, 1.0, cplx(0.0, 1.0)};
  EXPECT_EQ(layers.near_block(c), layers.near_block_host(c));
}

// Per-element coefficients (a mixed problem: each row its identity, each column its layers):
// every entry is the uniform blocks of D + alpha N and S + alpha D' combined with the row's and
// the column's coefficients, to rounding (a few ulp of the row's scale).
OperatorCoefficients random_per_element(std::size_t elements, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  auto per_element = std::make_shared<ElementCoefficients>();
  for (std::size_t e = 0; e < elements; ++e) {
    per_element->identity.push_back({u(rng), u(rng)});
    per_element->double_layer.push_back({u(rng), u(rng)});
    per_element->single_layer.push_back({u(rng), u(rng)});
  }
  OperatorCoefficients c;
  c.per_element = std::move(per_element);
  return c;
}

TEST(NearBlock, PerElementCoefficientsCombineTheLayers) {
  const Mesh mesh = icosphere(2);
  const Discretization disc(mesh, 6);
  const RowRange rows{10, 300};
  const DirectLayerPotentials layers(disc, 2.0, rows, NearFieldOptions{}, cplx(0.0, 0.5),
                                     DensityModel::quadratic);
  const OperatorCoefficients c = random_per_element(mesh.size(), 5);
  const std::vector<cplx> block = layers.near_block_host(c);
  const std::vector<cplx> d = layers.near_block_host({0.0, 1.0, 0.0});
  const std::vector<cplx> s = layers.near_block_host({0.0, 0.0, 1.0});
  const auto row_start = layers.near_field().row_start();
  const auto columns = layers.near_field().columns();
  double worst = 0.0;
  for (std::size_t r = 0; r < rows.size(); ++r)
    for (auto at = std::size_t(row_start[r]); at < std::size_t(row_start[r + 1]); ++at) {
      const std::size_t i = rows.begin + r, j = std::size_t(columns[at]);
      const cplx expected = c.double_layer_of(j) * d[at] + c.single_layer_of(j) * s[at] +
                            (i == j ? c.identity_of(i) : cplx(0.0));
      worst = std::max(worst,
                       std::abs(block[at] - expected) / (std::abs(d[at]) + std::abs(s[at]) + 1.0));
    }
  EXPECT_LE(worst, 8 * std::numeric_limits<double>::epsilon());
  // Uniform per-element coefficients are the uniform operator, bit for bit.
  auto same = std::make_shared<ElementCoefficients>();
  same->identity.assign(mesh.size(), 0.5);
  same->double_layer.assign(mesh.size(), -1.0);
  same->single_layer.assign(mesh.size(), cplx(0.2, 0.1));
  OperatorCoefficients uniform{0.5, -1.0, cplx(0.2, 0.1)}, per_element;
  per_element.per_element = same;
  EXPECT_EQ(layers.near_block_host(uniform), layers.near_block_host(per_element));
}

// The GPU's near block with per-element coefficients against the CPU formulas on the GPU's own
// entries (kSameEntriesTolerance, as above, of the row's scale with the largest coefficient).
TEST(GpuNearBlock, PerElementCoefficientsMatchCpu) {
  SKIP_WITHOUT_GPU();
  const Mesh mesh = icosphere(3);
  const Discretization disc(mesh, 6);
  const RowRange rows{200, 900};
  NearFieldOptions options;
  options.gpu = true;
  const DirectLayerPotentials gpu(disc, 8.0, rows, options, cplx(0.0, 0.125),
                                  DensityModel::quadratic);
  const OperatorCoefficients c = random_per_element(mesh.size(), 7);
  const std::vector<cplx> device = gpu.near_block(c), host = gpu.near_block_host(c);
  ASSERT_EQ(device.size(), host.size());
  const auto row_start = gpu.near_field().row_start();
  const auto cs = gpu.near_field().single_entries(), cd = gpu.near_field().double_entries();
  double worst = 0.0;
  for (std::size_t r = 0; r < rows.size(); ++r) {
    double scale = std::max(kInv4Pi, std::abs(gpu.single_layer_diagonal()[r]));
    for (auto at = std::size_t(row_start[r]); at < std::size_t(row_start[r + 1]); ++at)
      scale = std::max({scale, std::abs(cs[at]), std::abs(cd[at])});
    scale *= 2.0 * std::sqrt(2.0);  // |coefficient| <= sqrt 2, two layers
    for (auto at = std::size_t(row_start[r]); at < std::size_t(row_start[r + 1]); ++at) {
      const double d = std::abs(device[at] - host[at]) / scale;
      worst = std::isnan(d) ? 1.0 : std::max(worst, d);
    }
  }
  std::printf("[ measured ] per-element near block: GPU - CPU formulas %.2e of the row's scale\n",
              worst);
  EXPECT_LE(worst, kSameEntriesTolerance);
}

}  // namespace
}  // namespace fmbem
