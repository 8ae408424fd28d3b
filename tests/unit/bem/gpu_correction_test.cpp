// The near-field correction: its close lists against a brute-force search, and its GPU form
// (entries, SpMV, point strengths, the resident apply) against the CPU's.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>

#include "../fmm/gpu_test_skip.hpp"
#include "bem_test_support.hpp"
#include "fmbem/bem/density_reconstruction.hpp"
#include "fmbem/bem/fmm_layer_potentials.hpp"
#include "fmbem/bem/gpu_correction.hpp"
#include "fmbem/bem/near_field.hpp"
#include "fmbem/bem/point_strengths.hpp"
#include "fmbem/kernel/kernel.hpp"
#include "fmbem/mesh/mesh.hpp"

namespace fmbem {
namespace {

using test::random_density;

// The GPU's entries follow the CPU's formulas operation for operation, with the same IEEE
// additions, multiplications, divisions and square roots (the .cu file is built with
// -fmad=false), so every branch (in plane, degenerate sector, coincident point) is taken alike
// and the results differ only through sin, cos, cosh, asinh and hypot, each within about 2 ulp
// (2.2e-16 relative each) of glibc's. An error du in u = asinh(t / dist) moves cosh(u) by
// tanh(u) du, i.e. by ~|u| ulp relative, with |u| below ~5 for the close pairs of a
// reasonable mesh; each entry sums 3 edges x 16 angular terms plus 3 regular ones, and the
// sectors of a point outside its triangle cancel by up to a factor ~3. A linear (worst-case)
// sum of these is 48 x 5 x 2 ulp x 3 ~ 3e-13 of the terms' size; random rounding gives about
// sqrt(48) x 10 ulp ~ 1.5e-14. The terms' size: for S the row's largest entry (the self term,
// where nothing cancels); for D the integrand per unit angle is bounded by 2 whatever the
// entry (which may be tiny by cancellation for nearly coplanar neighbours), so its scale is
// max(row's largest |D|, 1 / (4 pi)). We ask 1e-13 of that scale: five times the random-walk
// estimate, below the linear bound.
constexpr double kEntryTolerance = 1e-13;

Mesh icosphere(int level) { return Mesh::from_surface(make_icosphere(level, 1.0), "icosphere"); }

// Two unit-radius-ish spheres 0.01 apart: close, non-adjacent pairs across the gap (the second
// refined to other_level, when given: elements of two sizes face each other).
Mesh two_spheres(int level, double gap, int other_level = -1) {
  Surface s = make_icosphere(level, 0.5, {-0.5 - 0.5 * gap, 0.0, 0.0});
  const Surface t =
      make_icosphere(other_level < 0 ? level : other_level, 0.5, {0.5 + 0.5 * gap, 0.0, 0.0});
  const int offset = int(s.vertices.size());
  s.vertices.insert(s.vertices.end(), t.vertices.begin(), t.vertices.end());
  for (auto tri : t.triangles) {
    for (auto& v : tri) v += offset;
    s.triangles.push_back(tri);
  }
  return Mesh::from_surface(std::move(s), "two spheres");
}

double corner_radius(const Mesh& mesh, std::size_t e) {
  double r = 0.0;
  for (int c = 0; c < 3; ++c) r = std::max(r, norm(mesh.corner(e, c) - mesh.centroids()[e]));
  return r;
}

void expect_close_lists_exact(const Mesh& mesh, RowRange rows, double factor) {
  const Discretization disc(mesh, 3);
  NearFieldOptions options;
  options.near_factor = factor;
  const NearFieldCorrection near(disc, 1.0, rows, options);
  std::vector<double> radius(mesh.size());
  for (std::size_t e = 0; e < mesh.size(); ++e) radius[e] = corner_radius(mesh, e);
  ASSERT_EQ(near.row_start().size(), rows.size() + 1);
  std::size_t mismatches = 0;
  for (std::size_t i = rows.begin; i < rows.end; ++i) {
    std::vector<std::int32_t> expected;
    for (std::size_t j = 0; j < mesh.size(); ++j)
      if (j == i || norm(mesh.centroids()[i] - mesh.centroids()[j]) < factor * radius[j])
        expected.push_back(std::int32_t(j));
    const std::size_t r = i - rows.begin;
    const auto begin = near.columns().begin() + near.row_start()[r];
    const auto end = near.columns().begin() + near.row_start()[r + 1];
    mismatches += !std::equal(begin, end, expected.begin(), expected.end());
  }
  EXPECT_EQ(mismatches, 0u);
}

TEST(NearFieldCloseLists, MatchBruteForceSearch) {
  const Mesh sphere = icosphere(3);
  expect_close_lists_exact(sphere, {0, sphere.size()}, 2.5);
  expect_close_lists_exact(sphere, {100, 700}, 4.0);
  const Mesh pair = two_spheres(3, 0.01);
  expect_close_lists_exact(pair, {0, pair.size()}, 2.5);
  expect_close_lists_exact(pair, {0, pair.size()}, 1.0);
  // Each column's own reach (factor x its corner radius) across a gap between sizes 4 apart.
  const Mesh mixed = two_spheres(2, 0.01, 4);
  expect_close_lists_exact(mixed, {0, mixed.size()}, 2.5);
  expect_close_lists_exact(mixed, {100, 2000}, 4.0);
}

// The close pattern from a wider one (restrict_pattern) is the close pattern searched directly.
TEST(NearFieldCloseLists, RestrictedFromWiderPatternEqualsDirectSearch) {
  const Mesh pair = two_spheres(3, 0.01);
  for (const RowRange rows : {RowRange{0, pair.size()}, RowRange{300, 900}}) {
    const NearFieldPattern wide = near_field_pattern(pair, rows, 4.0);
    const NearFieldPattern direct = near_field_pattern(pair, rows, 2.5);
    const NearFieldPattern restricted = restrict_pattern(pair, rows, wide, 2.5);
    EXPECT_EQ(restricted.row_start, direct.row_start);
    EXPECT_EQ(restricted.columns, direct.columns);
  }
}

// folded_pattern: per row the sorted union of its elements' stencils.
TEST(NearFieldCloseLists, FoldedPatternIsTheUnionOfStencils) {
  const Mesh mesh = icosphere(3);
  const DensityReconstruction reconstruction(mesh);
  const RowRange rows{100, 1100};
  const NearFieldPattern refined = near_field_pattern(mesh, rows, 4.0);
  const NearFieldPattern folded = folded_pattern(refined, reconstruction);
  ASSERT_EQ(folded.row_start.size(), rows.size() + 1);
  std::size_t mismatches = 0;
  for (std::size_t r = 0; r < rows.size(); ++r) {
    std::vector<std::int32_t> expected;
    for (std::int64_t at = refined.row_start[r]; at < refined.row_start[r + 1]; ++at) {
      const auto stencil = reconstruction.stencil(std::size_t(refined.columns[std::size_t(at)]));
      expected.insert(expected.end(), stencil.begin(), stencil.end());
    }
    std::sort(expected.begin(), expected.end());
    expected.erase(std::unique(expected.begin(), expected.end()), expected.end());
    mismatches += !std::equal(folded.columns.begin() + folded.row_start[r],
                              folded.columns.begin() + folded.row_start[r + 1], expected.begin(),
                              expected.end());
  }
  EXPECT_EQ(mismatches, 0u);
}

// Every entry and self term of the GPU correction against the CPU's.
void expect_gpu_entries_match(const Mesh& mesh, fmm::Wavenumber k, RowRange rows) {
  const Discretization disc(mesh, 3);
  NearFieldOptions options;
  const NearFieldCorrection cpu(disc, k, rows, options);
  options.gpu = true;
  const NearFieldCorrection gpu(disc, k, rows, options);
  ASSERT_TRUE(gpu.on_device());
  ASSERT_TRUE(std::ranges::equal(cpu.row_start(), gpu.row_start()));
  ASSERT_TRUE(std::ranges::equal(cpu.columns(), gpu.columns()));
  const auto cs = cpu.single_entries(), cd = cpu.double_entries();
  const auto gs = gpu.single_entries(), gd = gpu.double_entries();
  ASSERT_EQ(gs.size(), cs.size());
  double worst_s = 0.0, worst_d = 0.0;
  for (std::size_t r = 0; r < rows.size(); ++r) {
    const auto first = std::size_t(cpu.row_start()[r]), last = std::size_t(cpu.row_start()[r + 1]);
    double scale_s = 0.0, scale_d = inv_4pi;
    for (std::size_t at = first; at < last; ++at) {
      scale_s = std::max(scale_s, std::abs(cs[at]));
      scale_d = std::max(scale_d, std::abs(cd[at]));
    }
    for (std::size_t at = first; at < last; ++at) {
      worst_s = std::max(worst_s, std::abs(gs[at] - cs[at]) / scale_s);
      worst_d = std::max(worst_d, std::abs(gd[at] - cd[at]) / scale_d);
    }
    worst_s = std::max(
        worst_s,
        std::abs(gpu.single_layer_diagonal()[r] - cpu.single_layer_diagonal()[r]) / scale_s);
    worst_d = std::max(
        worst_d,
        std::abs(gpu.double_layer_diagonal()[r] - cpu.double_layer_diagonal()[r]) / scale_d);
  }
  std::printf(
      "[ measured ] %s, %s = %g: %zu entries, largest GPU - CPU difference %.2e (S), %.2e (D)\n",
      mesh.name().c_str(), k.imaginary ? "screened, kappa" : "k", k.magnitude, cs.size(), worst_s,
      worst_d);
  EXPECT_LE(worst_s, kEntryTolerance);
  EXPECT_LE(worst_d, kEntryTolerance);
}

// (The screened kernel's entries: the same integrals with exp(-kappa r) for the phase, to the
// same few ulp.)
TEST(GpuNearFieldCorrection, EntriesMatchCpuOnIcospheres) {
  SKIP_WITHOUT_GPU();
  for (fmm::Wavenumber k :
       {fmm::Wavenumber(0.0), fmm::Wavenumber(8.0), fmm::Wavenumber::screened(4.0)}) {
    const Mesh three = icosphere(3);
    expect_gpu_entries_match(three, k, {0, three.size()});
    const Mesh four = icosphere(4);
    expect_gpu_entries_match(four, k, {0, four.size()});
    expect_gpu_entries_match(four, k, {1000, 3000});  // a row block
  }
}

TEST(GpuNearFieldCorrection, EntriesMatchCpuOnNearlyTouchingSpheres) {
  SKIP_WITHOUT_GPU();
  for (fmm::Wavenumber k :
       {fmm::Wavenumber(0.0), fmm::Wavenumber(8.0), fmm::Wavenumber::screened(4.0)}) {
    const Mesh pair = two_spheres(4, 0.01);
    expect_gpu_entries_match(pair, k, {0, pair.size()});
    const Mesh closer = two_spheres(3, 1e-4);
    expect_gpu_entries_match(closer, k, {0, closer.size()});
  }
}

// apply_device (accumulating; null density = zero) against add_to with the same entries, the
// conventional ones and Burton-Miller's.
TEST(GpuNearFieldCorrection, SpmvMatchesAddTo) {
  SKIP_WITHOUT_GPU();
  const Mesh mesh = icosphere(4);
  const Discretization disc(mesh, 3);
  NearFieldOptions options;
  options.gpu = true;
  const RowRange rows{500, 4000};
  for (const cplx coupling : {cplx(0.0), cplx(0.0, 0.125)}) {
    const NearFieldCorrection near(disc, 8.0, rows, options, coupling);
    EXPECT_TRUE(near.on_device());
    const auto dd = random_density(mesh.size(), 1), sd = random_density(mesh.size(), 2);
    const auto y0 = random_density(rows.size(), 3);
    fmm::DeviceArray d_dd(dd.size()), d_sd(sd.size()), d_y(y0.size());
    d_dd.upload(dd.data());
    d_sd.upload(sd.data());
    for (int which = 0; which < 4; ++which) {
      const bool with_d = which & 1, with_s = which & 2;
      std::vector<cplx> expected = y0, got(y0.size());
      near.add_to(with_d ? std::span<const cplx>(dd) : std::span<const cplx>(),
                  with_s ? std::span<const cplx>(sd) : std::span<const cplx>(), expected);
      d_y.upload(y0.data());
      near.apply_device(with_d ? d_dd.data() : nullptr, with_s ? d_sd.data() : nullptr, d_y.data());
      d_y.download(got.data());
      double worst = 0.0, scale = 0.0;
      for (std::size_t r = 0; r < got.size(); ++r) {
        worst = std::max(worst, std::abs(got[r] - expected[r]));
        scale = std::max(scale, std::abs(expected[r]));
      }
      // Only the order of about 20 products summed differs.
      EXPECT_LE(worst, 1e-14 * scale) << "double " << with_d << " single " << with_s;
      if (which == 0) EXPECT_EQ(got, y0);
    }
  }
}

// The kernel's strengths of a density on the device, downloaded (into an array of the kernel's
// own length: download copies the whole device array).
std::vector<cplx> device_strengths(const GpuPointStrengths& kernel,
                                   const fmm::DeviceArray& density) {
  fmm::DeviceArray strengths(kernel.points());
  kernel.apply(density.data(), strengths.data());
  std::vector<cplx> host(kernel.points());
  strengths.download(host.data());
  return host;
}

// Every third point, backwards, and the last twice: the strength kernels' point lists.
std::vector<std::size_t> some_points(std::size_t count) {
  std::vector<std::size_t> some;
  for (std::size_t q = count; q-- > 0;)
    if (q % 3 == 1) some.push_back(q);
  some.push_back(count - 1);
  return some;
}

TEST(GpuNearFieldCorrection, PointStrengthsKernelMatchesHost) {
  SKIP_WITHOUT_GPU();
  const Mesh mesh = icosphere(3);
  for (int points : {1, 3, 7}) {
    const Discretization disc(mesh, points);
    const auto density = random_density(mesh.size(), 4);
    const GpuPointStrengths kernel(disc);
    ASSERT_EQ(kernel.points(), disc.quadrature_points().size());
    fmm::DeviceArray d_density(density.size());
    d_density.upload(density.data());
    const std::vector<cplx> got = device_strengths(kernel, d_density);
    // One multiplication per value: bitwise equal.
    EXPECT_EQ(got, point_strengths(disc, density)) << points << " points per element";
    // Some points alone, in a given order (a part of the distributed FMM).
    const std::vector<std::size_t> some = some_points(got.size());
    const GpuPointStrengths some_kernel(disc, some);
    ASSERT_EQ(some_kernel.points(), some.size());
    EXPECT_EQ(device_strengths(some_kernel, d_density), point_strengths(disc, density, some))
        << points << " points, some";
  }
}

// The quadratic read's strengths (ReconstructedPointStrengths) on the GPU: the same products
// summed in the same order, without fused multiply-adds on either side, so equal to rounding
// (1e-15 of the value allows for a library difference the test would rather report than fail
// on; measured bitwise equal).
TEST(GpuNearFieldCorrection, ReconstructedPointStrengthsKernelMatchesHost) {
  SKIP_WITHOUT_GPU();
  const Mesh mesh = icosphere(3);
  const DensityReconstruction reconstruction(mesh);
  for (int points : {3, 6}) {
    const Discretization disc(mesh, points);
    const ReconstructedPointStrengths matrix(disc, reconstruction);
    const auto density = random_density(mesh.size(), 9);
    const GpuPointStrengths kernel(matrix);
    ASSERT_EQ(kernel.points(), disc.quadrature_points().size());
    fmm::DeviceArray d_density(density.size());
    d_density.upload(density.data());
    const std::vector<cplx> got = device_strengths(kernel, d_density);
    const std::vector<cplx> want = matrix(density);
    for (std::size_t q = 0; q < got.size(); ++q)
      EXPECT_LE(std::abs(got[q] - want[q]), 1e-15 * std::abs(want[q])) << points << " points";
    // Some points alone, in a given order (a part of the distributed FMM).
    const std::vector<std::size_t> some = some_points(got.size());
    const GpuPointStrengths some_kernel(matrix, some);
    ASSERT_EQ(some_kernel.points(), some.size());
    const std::vector<cplx> some_got = device_strengths(some_kernel, d_density);
    const std::vector<cplx> some_want = matrix(density, some);
    for (std::size_t i = 0; i < some.size(); ++i)
      EXPECT_LE(std::abs(some_got[i] - some_want[i]), 1e-15 * std::abs(some_want[i]))
          << points << " points, some";
  }
}

// A backend whose regular sum is the direct Gauss-rule sum on the host; its device form copies
// the densities out and y in, so the resident apply's plumbing is tested without a GPU FMM.
class HostDirectBackend final : public CorrectedLayerPotentials {
 public:
  HostDirectBackend(const Discretization& disc, double k, RowRange rows, bool gpu)
      : CorrectedLayerPotentials(disc, k, rows, options(gpu)), k_(k), gpu_(gpu) {}

 private:
  static NearFieldOptions options(bool gpu) {
    NearFieldOptions o;
    o.gpu = gpu;
    return o;
  }
  void regular_sum(std::span<const cplx> dd, std::span<const cplx> sd,
                   std::span<cplx> y) const override {
    const Discretization& disc = discretization();
    for (std::size_t i = rows().begin; i < rows().end; ++i) {
      cplx sum{};
      for (std::size_t j = 0; j < disc.size(); ++j) {
        const RegularPair p = regular_integrals(disc, k_, j, disc.collocation_points()[i]);
        if (!dd.empty()) sum += p.double_layer * dd[j];
        if (!sd.empty()) sum += p.single_layer * sd[j];
      }
      y[i - rows().begin] = sum;
    }
  }
  bool regular_sum_on_device() const override { return gpu_; }
  void regular_sum_device(const cplx* dd, const cplx* sd, cplx* y) const override {
    const std::size_t n = discretization().size();
    std::vector<cplx> h_dd(dd ? n : 0), h_sd(sd ? n : 0), h_y(rows().size());
    if (dd) copy_to_host(dd, h_dd);
    if (sd) copy_to_host(sd, h_sd);
    regular_sum(h_dd, h_sd, h_y);
    copy_to_device(h_y, y);
  }
  double k_;
  bool gpu_;
};

TEST(GpuNearFieldCorrection, ResidentApplyMatchesHostApply) {
  SKIP_WITHOUT_GPU();
  const Mesh mesh = icosphere(2);
  const Discretization disc(mesh, 3);
  const RowRange rows{40, 300};
  const HostDirectBackend host(disc, 8.0, rows, false), device(disc, 8.0, rows, true);
  EXPECT_FALSE(host.resident_on_device());
  EXPECT_TRUE(device.resident_on_device());
  const auto dd = random_density(mesh.size(), 5), sd = random_density(mesh.size(), 6);
  for (int which = 1; which < 4; ++which) {
    const std::span<const cplx> d = which & 1 ? std::span<const cplx>(dd) : std::span<const cplx>();
    const std::span<const cplx> s = which & 2 ? std::span<const cplx>(sd) : std::span<const cplx>();
    std::vector<cplx> expected(rows.size()), got(rows.size(), cplx(1e300, 0.0));
    host.apply(d, s, expected);
    device.apply(d, s, got);
    double worst = 0.0, scale = 0.0;
    for (std::size_t r = 0; r < got.size(); ++r) {
      worst = std::max(worst, std::abs(got[r] - expected[r]));
      scale = std::max(scale, std::abs(expected[r]));
    }
    EXPECT_LE(worst, 1e-13 * scale) << "which " << which;
  }
}

// With the FMM options on the GPU the correction is computed there; the operator agrees with
// the all-CPU one to the FMM's and the entries' rounding.
TEST(GpuNearFieldCorrection, FmmLayerPotentialsWithGpuOptions) {
  SKIP_WITHOUT_GPU();
  const Mesh mesh = icosphere(4);
  const Discretization disc(mesh, 3);
  const RowRange rows{0, mesh.size()};
  const auto [cpu_options, gpu_options] = test::cpu_and_gpu_options(8);
  // The conventional operators, then Burton-Miller's (the FMM's target-normal derivative and the
  // correction's entries on the GPU), then Burton-Miller's with the quadratic read of the double
  // density (its point strengths and the folded correction formed on the GPU), then both with the
  // normal derivatives apart (two outputs a row: the FMM's and the correction's; each output
  // held to the same bound).
  struct Case {
    LayerCoupling coupling;
    DensityModel model;
  };
  const LayerCoupling apart = LayerCoupling::derivative_apart();
  for (const Case c :
       {Case{0.0, DensityModel::constant}, Case{cplx(0.0, 0.125), DensityModel::constant},
        Case{cplx(0.0, 0.125), DensityModel::quadratic}, Case{apart, DensityModel::constant},
        Case{apart, DensityModel::quadratic}}) {
    const LayerCoupling coupling = c.coupling;
    const std::size_t outputs = std::size_t(coupling.outputs());
    const FmmLayerPotentials cpu(disc, 8.0, rows, {}, cpu_options, nullptr, coupling, c.model);
    const FmmLayerPotentials gpu(disc, 8.0, rows, {}, gpu_options, nullptr, coupling, c.model);
    EXPECT_FALSE(cpu.near_field().on_device());
    EXPECT_TRUE(gpu.near_field().on_device());
    EXPECT_EQ(gpu.resident_on_device(), gpu.fmm().runs_on_gpu());
    const auto dd = random_density(mesh.size(), 7), sd = random_density(mesh.size(), 8);
    std::vector<cplx> a(outputs * rows.size()), b(outputs * rows.size());
    cpu.apply(dd, sd, a);
    gpu.apply(dd, sd, b);
    for (std::size_t o = 0; o < outputs; ++o) {
      double num = 0.0, den = 0.0;
      for (std::size_t r = o * rows.size(); r < (o + 1) * rows.size(); ++r) {
        num += std::norm(a[r] - b[r]);
        den += std::norm(a[r]);
      }
      EXPECT_LE(std::sqrt(num / den), 1e-10)
          << "coupling " << coupling.alpha << " apart " << coupling.apart << " output " << o;
    }
  }
  // The screened kernel's layers (the regulariser's S~): FMM and correction on the GPU.
  const fmm::Wavenumber screened = fmm::Wavenumber::screened(4.0);
  const FmmLayerPotentials cpu(disc, screened, rows, {}, cpu_options);
  const FmmLayerPotentials gpu(disc, screened, rows, {}, gpu_options);
  EXPECT_TRUE(gpu.near_field().on_device());
  EXPECT_EQ(gpu.resident_on_device(), gpu.fmm().runs_on_gpu());
  const auto dd = random_density(mesh.size(), 9), sd = random_density(mesh.size(), 10);
  std::vector<cplx> a(rows.size()), b(rows.size());
  cpu.apply(dd, sd, a);
  gpu.apply(dd, sd, b);
  EXPECT_LE(test::relative_error(b, a), 1e-10);
}

}  // namespace
}  // namespace fmbem
