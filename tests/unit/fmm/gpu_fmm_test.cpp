// The whole FMM on the GPU (every phase, expansions resident) against the CPU executor at the
// same order on the same plan.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <ostream>
#include <span>
#include <string>
#include <vector>

#include "fmbem/core/error.hpp"
#include "fmbem/fmm/fmm.hpp"
#include "fmbem/fmm/gpu_device.hpp"
#include "fmbem/fmm/gpu_m2l.hpp"
#include "fmbem/fmm/gpu_multipole_packing.hpp"
#include "gpu_test_skip.hpp"
#include "m2l_test_geometry.hpp"

namespace fmbem::fmm {
namespace {

// Tolerance: GPU and CPU run the same recurrences and translations on the same plan, so they
// differ by rounding alone: fused multiply-adds on the GPU, other summation orders (P2M sums a
// leaf's points per coefficient, L2P sums m-major, M2L sums in tensor-core tiles), and j_n at
// k|r| >= sqrt(2n + 3) by Miller's recurrence instead of Boost (a few ulp). Each coefficient and
// each potential is a sum of n terms (n <= a few thousand: a leaf's points, p^2 <= 256 matrix
// entries times <= 189 M2L pairs), each term within c u of the CPU's (c <= 50: ~2p operations of
// the recurrences), so |gpu - cpu| <= (c + sqrt(n)) u sum |terms| for independent roundings,
// about 1e-14 sum |terms|. The scaled expansions keep the terms O(1) (expansions.hpp) and random
// strengths make sum |terms| exceed |phi| by about the square root of the number of dominant
// terms (<= 30 here), so 1e-12 of the far field holds with margin, while one wrong coefficient,
// matrix or leaf changes the far field by 1e-4 .. 1 of itself (p = 4 truncation error: 1e-2).
constexpr double kTolerance = 1e-12;

struct Errors {
  double norm = 0.0, max = 0.0;  // ||a - b|| / ||scale||, max |a - b| / max |scale|
};

Errors compare(const std::vector<cplx>& a, const std::vector<cplx>& b,
               const std::vector<cplx>& scale) {
  double diff2 = 0.0, scale2 = 0.0, diff_max = 0.0, scale_max = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const double d = std::abs(a[i] - b[i]), s = std::abs(scale[i]);
    if (!std::isfinite(d)) return {INFINITY, INFINITY};
    diff2 += d * d;
    scale2 += s * s;
    diff_max = std::max(diff_max, d);
    scale_max = std::max(scale_max, s);
  }
  return {std::sqrt(diff2 / scale2), diff_max / scale_max};
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

FmmOptions options_for(int p, int max_leaf, FmmOptions::Device device, bool gpu_near = true,
                       bool screened = false) {
  FmmOptions o;
  o.order = p;
  o.max_leaf = max_leaf;
  o.device = device;
  o.gpu_near_field = gpu_near;
  o.screened = screened;
  return o;
}

// screened: k is kappa of the screened kernel exp(-kappa r) / (4 pi r) (the tolerance's argument
// holds as it stands: its radial functions are real, by the same recurrences' kind, ihat by its
// positive series and downward recurrence on both sides, no Miller's recurrence).
struct Case {
  bool adaptive;
  int order;
  double k;
  bool screened = false;
};

// gtest prints parameters in CTest's test names: readable and the same in every build (its
// default prints the struct's bytes, padding included).
void PrintTo(const Case& c, std::ostream* os) {
  *os << (c.adaptive ? "adaptive" : "uniform") << " tree, p = " << c.order
      << (c.screened ? ", kappa = " : ", k = ") << c.k;
}

std::string case_name(const Case& c) {
  return std::string(c.adaptive ? "TwoSpheres" : "Icosphere") + "P" + std::to_string(c.order) +
         (c.screened   ? "ScreenedKappa" + std::to_string(int(c.k))
          : c.k == 0.0 ? "Laplace"
                       : "HelmholtzK8");
}

// One set of strengths on the CPU and the GPU FMM of the same plan: the whole result, and the far
// field alone (the GPU far field with the CPU's near field, minus the CPU's near field, against
// the CPU's far field: P2M, M2M, M2L, L2L and L2P without the near field's larger share hiding an
// error), both within kTolerance. Returns the GPU's whole result.
std::vector<cplx> expect_gpu_matches_cpu(const Fmm& cpu, const Fmm& gpu, const Fmm& gpu_far,
                                         const std::vector<cplx>& charges,
                                         const std::vector<cplx>& dipoles, std::size_t nt,
                                         const std::string& label) {
  std::vector<cplx> reference(nt), near(nt, 0.0), whole(nt, cplx(7.0)), far_mode(nt, cplx(7.0));
  cpu.apply(charges, dipoles, reference);
  add_near_field_cpu(cpu.near_field_lists(), charges, dipoles, near);
  gpu.apply(charges, dipoles, whole);  // poisoned: the potentials are overwritten
  gpu_far.apply(charges, dipoles, far_mode);
  std::vector<cplx> far_cpu(nt), far_gpu(nt);
  for (std::size_t i = 0; i < nt; ++i) {
    far_cpu[i] = reference[i] - near[i];
    far_gpu[i] = far_mode[i] - near[i];
  }
  const Errors e_whole = compare(whole, reference, reference);
  const Errors e_far = compare(far_gpu, far_cpu, far_cpu);
  std::printf("[ gpu fmm ] %s: whole %.2e (2-norm) %.2e (max), far field %.2e %.2e\n",
              label.c_str(), e_whole.norm, e_whole.max, e_far.norm, e_far.max);
  EXPECT_LE(e_whole.norm, kTolerance) << label;
  EXPECT_LE(e_whole.max, kTolerance) << label;
  EXPECT_LE(e_far.norm, kTolerance) << label;
  EXPECT_LE(e_far.max, kTolerance) << label;
  return whole;
}

std::string label(const Case& c, Strengths s, const char* output) {
  char text[128];
  std::snprintf(text, sizeof text, "%-11s p = %2d, %s = %g, %-7s%s",
                c.adaptive ? "two spheres" : "icosphere", c.order, c.screened ? "kappa" : "k", c.k,
                name(s), output);
  return text;
}

class GpuFmmTest : public ::testing::TestWithParam<Case> {};

// Every phase on the GPU against the CPU: the whole result, and the far field alone (the GPU
// far field with the CPU's near field, minus the CPU's near field, against the CPU's far field:
// P2M, M2M, M2L, L2L and L2P without the near field's larger share hiding an error).
TEST_P(GpuFmmTest, EveryPhaseMatchesTheCpu) {
  SKIP_WITHOUT_GPU();
  const Case c = GetParam();
  const testing::Cloud cloud =
      c.adaptive ? testing::two_sphere_cloud() : testing::icosphere_cloud(4);
  const std::vector<Vec3> normals = unit_normals(cloud.sources);
  const int max_leaf = c.adaptive ? 32 : 60;
  using D = FmmOptions::Device;
  const Fmm cpu(c.k, cloud.sources, normals, cloud.targets,
                options_for(c.order, max_leaf, D::cpu, true, c.screened));
  const Fmm gpu(c.k, cloud.sources, normals, cloud.targets,
                options_for(c.order, max_leaf, D::gpu, true, c.screened));
  const Fmm gpu_far(c.k, cloud.sources, normals, cloud.targets,
                    options_for(c.order, max_leaf, D::gpu, false, c.screened));
  ASSERT_TRUE(gpu.runs_on_gpu());
  ASSERT_FALSE(gpu_far.runs_on_gpu());
  ASSERT_FALSE(cpu.runs_on_gpu());
  EXPECT_EQ(gpu.statistics().far_field_device, "gpu");
  EXPECT_GT(gpu.statistics().gpu_bytes, 0u);
  EXPECT_NE(gpu.describe().find("P2M, M2M, L2L, L2P on gpu"), std::string::npos) << gpu.describe();
  EXPECT_GE(cpu.tree().levels(), 4) << "the tree must have M2M and L2L levels";
  const std::size_t ns = cloud.sources.size(), nt = cloud.targets.size();
  for (Strengths s : {Strengths::charges, Strengths::dipoles, Strengths::both}) {
    std::vector<cplx> charges, dipoles;
    if (s != Strengths::dipoles) charges = testing::random_coefficients(ns, 11 + c.order);
    if (s != Strengths::charges) dipoles = testing::random_coefficients(ns, 23 + c.order);
    expect_gpu_matches_cpu(cpu, gpu, gpu_far, charges, dipoles, nt, label(c, s, ""));
  }
}

INSTANTIATE_TEST_SUITE_P(Trees, GpuFmmTest,
                         ::testing::Values(Case{false, 4, 0.0}, Case{false, 4, 8.0},
                                           Case{false, 8, 0.0}, Case{false, 8, 8.0},
                                           Case{false, 16, 0.0}, Case{false, 16, 8.0},
                                           Case{true, 4, 0.0}, Case{true, 4, 8.0},
                                           Case{true, 8, 0.0}, Case{true, 8, 8.0},
                                           Case{true, 16, 0.0}, Case{true, 16, 8.0},
                                           Case{false, 8, 4.0, true}, Case{true, 16, 4.0, true},
                                           Case{true, 8, 40.0, true}),
                         [](const auto& info) { return case_name(info.param); });

// The same with the target normal derivative (output phi + w dphi/dn_t): L2P on the GPU forms the
// gradient terms' Lq per leaf and sums to degree p, the near field the combined kernel. The
// tolerance's argument holds unchanged: L2P's sums have (p+1)^2 instead of p^2 terms of the same
// size, each within the same few ulp (the gradient coefficients are the CPU's, copied), and the
// near field's terms gain one factor (t / r^2 or w) formed to a few more roundings; the
// derivative's sums of moduli exceed its value by the same square-root factor.
class GpuFmmNormalTest : public ::testing::TestWithParam<Case> {};

TEST_P(GpuFmmNormalTest, EveryPhaseMatchesTheCpu) {
  SKIP_WITHOUT_GPU();
  const Case c = GetParam();
  const testing::Cloud cloud =
      c.adaptive ? testing::two_sphere_cloud() : testing::icosphere_cloud(4);
  const std::vector<Vec3> normals = unit_normals(cloud.sources),
                          target_normals = unit_normals(cloud.targets);
  const TargetNormalDerivative derivative{target_normals,
                                          c.k > 0.0 ? cplx(0.0, 1.0 / c.k) : cplx(0.5, 1.0)};
  const int max_leaf = c.adaptive ? 32 : 60;
  using D = FmmOptions::Device;
  const auto make = [&](FmmOptions::Device device, bool gpu_near) {
    return std::make_unique<Fmm>(c.k, cloud.sources, normals, cloud.targets, cloud.targets,
                                 options_for(c.order, max_leaf, device, gpu_near, c.screened),
                                 nullptr, derivative);
  };
  const auto cpu = make(D::cpu, true), gpu = make(D::gpu, true), gpu_far = make(D::gpu, false);
  ASSERT_TRUE(gpu->runs_on_gpu());
  ASSERT_FALSE(gpu_far->runs_on_gpu());
  EXPECT_NE(gpu->describe().find("output phi + w dphi/dn_t"), std::string::npos) << gpu->describe();
  EXPECT_NE(gpu->describe().find("with the target normal derivative"), std::string::npos)
      << gpu->describe();
  const std::size_t ns = cloud.sources.size(), nt = cloud.targets.size();
  for (Strengths s : {Strengths::charges, Strengths::dipoles, Strengths::both}) {
    std::vector<cplx> charges, dipoles;
    if (s != Strengths::dipoles) charges = testing::random_coefficients(ns, 13 + c.order);
    if (s != Strengths::charges) dipoles = testing::random_coefficients(ns, 29 + c.order);
    const std::vector<cplx> whole = expect_gpu_matches_cpu(*cpu, *gpu, *gpu_far, charges, dipoles,
                                                           nt, label(c, s, ", phi + w dphi/dn"));
    // apply_device: the same kernels, the same numbers to the bit.
    DeviceArray d_charges(ns), d_dipoles(ns), d_potential(nt);
    if (!charges.empty()) d_charges.upload(charges.data());
    if (!dipoles.empty()) d_dipoles.upload(dipoles.data());
    std::vector<cplx> device(nt, cplx(3.0));
    d_potential.upload(device.data());  // poisoned
    gpu->apply_device(charges.empty() ? nullptr : d_charges.data(),
                      dipoles.empty() ? nullptr : d_dipoles.data(), d_potential.data());
    d_potential.download(device.data());
    EXPECT_EQ(device, whole) << name(s);
  }
}

// The normal derivative apart (two outputs a target): the same kernels with the value and the
// derivative summed into two outputs, each against the CPU's at kTolerance (the argument above,
// per output), apply_device to the bit.
TEST_P(GpuFmmNormalTest, ApartMatchesTheCpu) {
  SKIP_WITHOUT_GPU();
  const Case c = GetParam();
  const testing::Cloud cloud =
      c.adaptive ? testing::two_sphere_cloud() : testing::icosphere_cloud(4);
  const std::vector<Vec3> normals = unit_normals(cloud.sources),
                          target_normals = unit_normals(cloud.targets);
  const TargetNormalDerivative derivative{target_normals, 0.0, true};
  const int max_leaf = c.adaptive ? 32 : 60;
  using D = FmmOptions::Device;
  const auto make = [&](FmmOptions::Device device, bool gpu_near) {
    return std::make_unique<Fmm>(c.k, cloud.sources, normals, cloud.targets, cloud.targets,
                                 options_for(c.order, max_leaf, device, gpu_near, c.screened),
                                 nullptr, derivative);
  };
  const auto cpu = make(D::cpu, true), gpu = make(D::gpu, true), gpu_far = make(D::gpu, false);
  ASSERT_TRUE(gpu->runs_on_gpu());
  const std::size_t ns = cloud.sources.size(), nt = cloud.targets.size();
  const std::vector<cplx> charges = testing::random_coefficients(ns, 13 + c.order),
                          dipoles = testing::random_coefficients(ns, 29 + c.order);
  std::vector<cplx> reference(2 * nt), whole(2 * nt, cplx(7.0)), far_mode(2 * nt, cplx(7.0));
  cpu->apply(charges, dipoles, reference);
  gpu->apply(charges, dipoles, whole);
  gpu_far->apply(charges, dipoles, far_mode);
  for (int half = 0; half < 2; ++half) {
    const auto part = [&](const std::vector<cplx>& v) {
      return std::vector<cplx>(v.begin() + half * nt, v.begin() + (half + 1) * nt);
    };
    const Errors e = compare(part(whole), part(reference), part(reference));
    const Errors f = compare(part(far_mode), part(reference), part(reference));
    std::printf("[ gpu fmm ] %s %s: %.2e %.2e (GPU near field), %.2e %.2e (CPU's)\n",
                label(c, Strengths::both, "").c_str(), half ? "dphi/dn" : "phi", e.norm, e.max,
                f.norm, f.max);
    EXPECT_LE(e.max, kTolerance) << half;
    EXPECT_LE(f.max, kTolerance) << half;
  }
  DeviceArray d_charges(ns), d_dipoles(ns), d_potential(2 * nt);
  d_charges.upload(charges.data());
  d_dipoles.upload(dipoles.data());
  std::vector<cplx> device(2 * nt, cplx(3.0));
  d_potential.upload(device.data());  // poisoned
  gpu->apply_device(d_charges.data(), d_dipoles.data(), d_potential.data());
  d_potential.download(device.data());
  EXPECT_EQ(device, whole);
}

INSTANTIATE_TEST_SUITE_P(Trees, GpuFmmNormalTest,
                         ::testing::Values(Case{false, 8, 0.0}, Case{false, 8, 8.0},
                                           Case{false, 16, 0.0}, Case{false, 16, 8.0},
                                           Case{true, 8, 0.0}, Case{true, 8, 8.0},
                                           Case{true, 16, 0.0}, Case{true, 16, 8.0},
                                           Case{false, 8, 4.0, true}, Case{true, 16, 4.0, true},
                                           Case{true, 8, 40.0, true}),
                         [](const auto& info) { return case_name(info.param); });

// apply from host arrays is apply_device between one copy in and one copy out: the same kernels
// in the same order, so the same numbers to the bit; null strengths are zero.
TEST(GpuFmm, HostApplyIsApplyDevice) {
  SKIP_WITHOUT_GPU();
  const testing::Cloud cloud = testing::two_sphere_cloud();
  const std::vector<Vec3> normals = unit_normals(cloud.sources);
  const Fmm gpu(8.0, cloud.sources, normals, cloud.targets,
                options_for(8, 32, FmmOptions::Device::gpu));
  const std::size_t ns = cloud.sources.size(), nt = cloud.targets.size();
  const std::vector<cplx> charges = testing::random_coefficients(ns, 5),
                          dipoles = testing::random_coefficients(ns, 6);
  DeviceArray d_charges(ns), d_dipoles(ns), d_potential(nt);
  d_charges.upload(charges.data());
  d_dipoles.upload(dipoles.data());
  for (int with = 1; with <= 3; ++with) {
    const bool c = with & 1, d = with & 2;
    std::vector<cplx> host(nt), device(nt, cplx(3.0));
    gpu.apply(c ? charges : std::vector<cplx>{}, d ? dipoles : std::vector<cplx>{}, host);
    d_potential.upload(device.data());  // poisoned
    gpu.apply_device(c ? d_charges.data() : nullptr, d ? d_dipoles.data() : nullptr,
                     d_potential.data());
    d_potential.download(device.data());
    EXPECT_EQ(host, device) << "charges " << c << ", dipoles " << d;
  }
}

struct Recorder : FmmObserver {
  std::vector<std::string> events;
  void begin(FmmPhase p) override { events.push_back(std::string("+") + phase_name(p)); }
  void end(FmmPhase p) override { events.push_back(std::string("-") + phase_name(p)); }
};

// With an observer every phase is reported, in order, and the result does not change.
TEST(GpuFmm, TheObserverSeesEveryPhase) {
  SKIP_WITHOUT_GPU();
  const testing::Cloud cloud = testing::icosphere_cloud(3);
  const std::vector<Vec3> normals = unit_normals(cloud.sources);
  const Fmm gpu(2.0, cloud.sources, normals, cloud.targets,
                options_for(8, 40, FmmOptions::Device::gpu));
  const std::vector<cplx> charges = testing::random_coefficients(cloud.sources.size(), 8);
  std::vector<cplx> quiet(cloud.targets.size()), observed(cloud.targets.size());
  gpu.apply(charges, {}, quiet);
  Recorder recorder;
  gpu.apply(charges, {}, observed, &recorder);
  EXPECT_EQ(quiet, observed);
  const std::vector<std::string> expected{"+P2M", "-P2M", "+M2M", "-M2M", "+M2L",  "-M2L",
                                          "+L2L", "-L2L", "+L2P", "-L2P", "+Near", "-Near"};
  EXPECT_EQ(recorder.events, expected);
}

// The distributed exchange's device side: gather packs the send cells in list order; add_received
// adds each received partial to its cell, a cell received twice getting both in list order after
// what it held (the host's sum, MultipoleExchange::end), the other cells untouched.
TEST(GpuMultipolePacking, GathersAndAddsInListOrder) {
  SKIP_WITHOUT_GPU();
  const int order = 2, size = order * order, cells = 5;
  const std::vector<int> send{3, 1}, receive{2, 0, 2};
  std::vector<cplx> multipoles(cells * size);
  for (std::size_t i = 0; i < multipoles.size(); ++i) multipoles[i] = cplx(1.0 + i, -0.5 * i);
  DeviceArray device(multipoles.size());
  device.upload(multipoles.data());
  GpuMultipolePacking packing(send, receive, order);
  ASSERT_EQ(packing.send_buffer().size(), send.size() * size);
  ASSERT_EQ(packing.receive_buffer().size(), receive.size() * size);
  packing.gather(device.data());
  for (std::size_t i = 0; i < send.size(); ++i)
    for (int j = 0; j < size; ++j)
      EXPECT_EQ(packing.send_buffer()[i * size + j], multipoles[send[i] * size + j]);
  // Values whose sums round differently in another order.
  const std::span<cplx> r = packing.receive_buffer();
  for (std::size_t i = 0; i < r.size(); ++i)
    r[i] = cplx(1e16 * (i % 2 ? 1 : -1) + 0.3 * i, 0.1 * i);
  packing.add_received(device.data());
  std::vector<cplx> result(multipoles.size());
  device.download(result.data());
  std::vector<cplx> expected = multipoles;
  for (std::size_t i = 0; i < receive.size(); ++i)
    for (int j = 0; j < size; ++j) expected[receive[i] * size + j] += r[i * size + j];
  EXPECT_EQ(result, expected);
  const std::vector<int> negative{-1};
  EXPECT_THROW(GpuMultipolePacking(negative, receive, order), Error);
}

// share_upward_pass on the GPU: part 0's moments on the GPU, part 1's (from a CPU FMM) added by
// combine, equal the unshared CPU result.
TEST(GpuFmm, ASharedUpwardPassCombinesThroughTheHost) {
  SKIP_WITHOUT_GPU();
  const testing::Cloud cloud = testing::icosphere_cloud(4);
  const std::vector<Vec3> normals = unit_normals(cloud.sources);
  const std::size_t ns = cloud.sources.size(), nt = cloud.targets.size();
  const std::vector<cplx> charges = testing::random_coefficients(ns, 31),
                          dipoles = testing::random_coefficients(ns, 32);
  using D = FmmOptions::Device;
  const Fmm whole(8.0, cloud.sources, normals, cloud.targets, options_for(8, 60, D::cpu));
  std::vector<cplx> reference(nt);
  whole.apply(charges, dipoles, reference);

  Fmm cpu_part(8.0, cloud.sources, normals, cloud.targets, options_for(8, 60, D::cpu));
  std::vector<cplx> part1_moments;
  cpu_part.share_upward_pass(1, 2,
                             [&](std::span<cplx> m) { part1_moments.assign(m.begin(), m.end()); });
  std::vector<cplx> scratch(nt);
  cpu_part.apply(charges, dipoles, scratch);

  Fmm gpu_part(8.0, cloud.sources, normals, cloud.targets, options_for(8, 60, D::gpu));
  int calls = 0;
  gpu_part.share_upward_pass(0, 2, [&](std::span<cplx> m) {
    ASSERT_EQ(m.size(), part1_moments.size());
    for (std::size_t i = 0; i < m.size(); ++i) m[i] += part1_moments[i];
    ++calls;
  });
  std::vector<cplx> shared(nt);
  gpu_part.apply(charges, dipoles, shared);
  EXPECT_EQ(calls, 1);
  const Errors e = compare(shared, reference, reference);
  std::printf("[ gpu fmm ] shared upward pass: %.2e (2-norm) %.2e (max)\n", e.norm, e.max);
  EXPECT_LE(e.norm, kTolerance);
  EXPECT_LE(e.max, kTolerance);
}

// More device memory than allowed is one clear error naming the bytes.
TEST(GpuFmm, OutOfMemoryIsAClearError) {
  SKIP_WITHOUT_GPU();
  const testing::Cloud cloud = testing::icosphere_cloud(4);
  FmmOptions o = options_for(16, 60, FmmOptions::Device::gpu);
  o.gpu_memory_limit = std::size_t(1) << 20;
  try {
    const Fmm fmm(8.0, cloud.sources, {}, cloud.targets, o);
    FAIL() << "1 MiB sufficed";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("GPU out of memory"), std::string::npos) << what;
    EXPECT_NE(what.find("needs"), std::string::npos) << what;
  }
  // The far field's own check, with M2L and near field within the limit.
  const Fmm fits(8.0, cloud.sources, {}, cloud.targets,
                 options_for(16, 60, FmmOptions::Device::gpu));
  // After the far field: the potentials (apply's strength arrays come with its first call).
  const std::size_t staging = cloud.targets.size() * sizeof(cplx);
  o.gpu_memory_limit = fits.statistics().gpu_bytes - staging - 1;
  try {
    const Fmm fmm(8.0, cloud.sources, {}, cloud.targets, o);
    FAIL() << "the far field fitted in a byte less than it needs";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("far field"), std::string::npos) << what;
    EXPECT_NE(what.find("needs"), std::string::npos) << what;
  }
}

// apply_device without the whole FMM on the GPU is refused.
TEST(GpuFmm, ApplyDeviceNeedsEveryPhaseOnTheGpu) {
  const testing::Cloud cloud = testing::icosphere_cloud(2);
  const Fmm cpu(1.0, cloud.sources, {}, cloud.targets, options_for(4, 30, FmmOptions::Device::cpu));
  EXPECT_FALSE(cpu.runs_on_gpu());
  EXPECT_THROW(cpu.apply_device(nullptr, nullptr, nullptr), Error);
}

}  // namespace
}  // namespace fmbem::fmm
