// FMM MatMult benchmark on icosphere meshes (k = 8 rigid-sphere geometry):
// set-up and MatMult time with a per-phase breakdown, peak memory, and the
// error against the direct operator where that is affordable.
//
//   fmm_matmult -L 5 -p 8 [-k 8] [-max_leaf 100] [-reps 2] [-direct]
//               [-eps 1e-6] [-device cpu|gpu]
//               [-points DIR]   (point-source mode for the FMM3D comparison)
//               [-sampled]      (point-source mode, no files written)
//               [-dipoles]      (point mode: also charges + dipoles along the source normals)
//               [-bm]           (with -dipoles: that sum with Burton-Miller's i/k times its
//                                derivative along the target's element normal besides)
//
// -p 0 chooses the order from -eps (and a wideband FMM's diagonal levels where k needs them);
// -max_leaf 0 takes the measured default for the device and order.
//
// Matrix mode applies D u + S q (both layers, random densities) as the
// solver's MatMult does. Point mode sums charges, sources the quadrature
// points and targets the centroids, and writes DIR/points.bin and
// DIR/reference.bin (bench/fmm3d_compare.py and bench/fmm3d_omp read them). With -dipoles it
// also sums, with an FMM of its own, charges plus dipoles d_j along the source normals n_j,
//   phi(x) = sum_j q_j G(x, y_j) + d_j dG/dn_y(x, y_j),
// and writes DIR/dipoles.bin (int64 ns, ns*3 normals, ns complex d) and DIR/reference_cd.bin
// (as reference.bin, same targets); without it a DIR/dipoles.bin of an earlier run is removed.
#include <omp.h>

#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <random>
#include <string>

#include "bench_util.hpp"
#include "fmbem/bem/direct_layer_potentials.hpp"
#include "fmbem/bem/fmm_layer_potentials.hpp"
#include "fmbem/bem/point_strengths.hpp"
#include "fmbem/mesh/mesh.hpp"

namespace {

using namespace fmbem;
using namespace fmbem::bench;

class PhaseTimer final : public fmm::FmmObserver {
 public:
  void begin(fmm::FmmPhase phase) override { start_[int(phase)] = Clock::now(); }
  void end(fmm::FmmPhase phase) override {
    seconds[int(phase)] += seconds_since(start_[int(phase)]);
  }
  void reset() { seconds.fill(0.0); }
  std::array<double, int(fmm::FmmPhase::count)> seconds{};

 private:
  std::array<Clock::time_point, int(fmm::FmmPhase::count)> start_{};
};

// Runs `run` reps times (it reports its phases to timer); returns the fastest
// wall time and leaves that repetition's phases in fastest_phases.
template <class Run>
double fastest_run(int reps, PhaseTimer& timer, PhaseTimer& fastest_phases, Run run) {
  double best = 1e300;
  for (int r = 0; r < reps; ++r) {
    timer.reset();
    const auto start = Clock::now();
    run();
    if (const double t = seconds_since(start); t < best) {
      best = t;
      fastest_phases.seconds = timer.seconds;
    }
  }
  return best;
}

std::vector<cplx> random_vector(std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<cplx> v(n);
  for (auto& x : v) x = cplx(u(rng), u(rng));
  return v;
}

double relative_error(std::span<const cplx> a, std::span<const cplx> b) {
  double num = 0.0, den = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    num += std::norm(a[i] - b[i]);
    den += std::norm(b[i]);
  }
  return std::sqrt(num / den);
}

template <class T>
void write(std::ofstream& out, const T* data, std::size_t count) {
  out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(count * sizeof(T)));
}

struct Args {
  int level = 5, order = 8, max_leaf = 100, reps = 2;
  double k = 8.0, eps = 1e-6;
  bool direct = false, gpu = false, dipoles = false, burton_miller = false;
  std::string points_dir;
  bool points = false;
};

Args parse(int argc, char** argv) {
  Args a;
  for (Arguments args(argc, argv); args.next();) {
    const std::string& key = args.key();
    const auto value = [&] { return args.value(); };
    if (key == "-L")
      a.level = std::stoi(value());
    else if (key == "-p")
      a.order = std::stoi(value());
    else if (key == "-k")
      a.k = std::stod(value());
    else if (key == "-max_leaf")
      a.max_leaf = std::stoi(value());
    else if (key == "-reps")
      a.reps = std::stoi(value());
    else if (key == "-direct")
      a.direct = true;
    else if (key == "-eps")
      a.eps = std::stod(value());
    else if (key == "-device")
      a.gpu = value() == "gpu";
    else if (key == "-points") {
      a.points_dir = value();
      a.points = true;
    } else if (key == "-sampled")
      a.points = true;
    else if (key == "-dipoles")
      a.dipoles = true;
    else if (key == "-bm")
      a.burton_miller = true;
    else
      throw std::runtime_error("unknown argument " + key);
  }
  return a;
}

void print_phases(const PhaseTimer& timer) {
  for (int ph = int(fmm::FmmPhase::p2m); ph < int(fmm::FmmPhase::count); ++ph)
    std::printf(" %s %.3f", fmm::phase_name(fmm::FmmPhase(ph)), timer.seconds[ph]);
  std::printf("\n");
}

// Charges only, at the quadrature points; potentials at the centroids.
// The FMM of order a.order (0: from a.eps) and leaf size a.max_leaf (0: the measured default)
// on the CPU or the GPU.
fmm::FmmOptions fmm_options(const Args& a, double skip_radius) {
  fmm::FmmOptions options;
  options.order = a.order;
  options.tolerance = a.eps;
  options.device = a.gpu ? fmm::FmmOptions::Device::gpu : fmm::FmmOptions::Device::cpu;
  options.max_leaf = a.max_leaf;
  if (a.max_leaf <= 0) {
    options.measured_max_leaf = true;
    options.max_leaf = fmm::chosen_tree_size(options).max_leaf;
  }
  options.skip_radius = skip_radius;
  return options;
}

// The order, the levels and (a wideband FMM) the diagonal levels' switch and bandwidths.
void print_statistics(const fmm::FmmStatistics& s) {
  std::printf("p %d levels %d switch %d bandwidths", s.order, s.levels, s.switch_level);
  for (int b : s.diagonal_bandwidths) std::printf(" %d", b);
  std::printf(" diagonal pairs %zu fmm %.2f GiB gpu %.2f GiB\n", s.diagonal_pairs,
              s.total_bytes() / 1073741824.0, s.gpu_bytes / 1073741824.0);
}

// One point-mode sum at the centroids (label: the output line's first word): the FMM (with the
// source normals where there are dipoles; with target_weight w != 0, phi + w dphi/dn_x along the
// target's element normal) timed, and its error on the sampled targets against the direct sum,
// which it returns.
std::vector<cplx> sum_points(const Args& a, const Discretization& disc, const char* label,
                             std::span<const Vec3> normals, std::span<const cplx> charges,
                             std::span<const cplx> dipoles, std::span<const std::int64_t> sample,
                             cplx target_weight = 0.0) {
  const auto& sources = disc.quadrature_points();
  const auto& targets = disc.collocation_points();
  const std::span<const Vec3> target_normals = target_weight == cplx(0.0)
                                                   ? std::span<const Vec3>()
                                                   : std::span<const Vec3>(disc.mesh().normals());
  PhaseTimer timer;
  const auto start = Clock::now();
  const fmm::Fmm fmm(a.k, sources, normals, targets, targets,
                     fmm_options(a, disc.coincidence_radius()), &timer,
                     fmm::TargetNormalDerivative{target_normals, target_weight});
  const double setup = seconds_since(start);
  std::vector<cplx> phi(targets.size());
  PhaseTimer best_phases;
  const double best =
      fastest_run(a.reps, timer, best_phases, [&] { fmm.apply(charges, dipoles, phi, &timer); });
  std::vector<std::size_t> order(sources.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  const fmm::PointSources all(sources, normals, order, charges, dipoles);
  std::vector<cplx> reference(sample.size()), ours(sample.size());
#pragma omp parallel for schedule(dynamic)
  for (std::size_t s = 0; s < sample.size(); ++s) {
    const std::size_t t = std::size_t(sample[s]);
    if (target_weight == cplx(0.0)) {
      reference[s] = all.potential(0, all.size(), a.k, targets[t], 0.0);
      continue;
    }
    const auto both =
        all.potential_and_normal_derivative(0, all.size(), a.k, targets[t], target_normals[t], 0.0);
    reference[s] = both.value + target_weight * both.normal_derivative;
  }
  for (std::size_t s = 0; s < sample.size(); ++s) ours[s] = phi[sample[s]];
  std::printf(
      "%s N %zu sources %zu targets %zu threads %d p %d set-up %.3f s apply %.3f s error "
      "%.3e peak %.2f GiB |",
      label, disc.size(), sources.size(), targets.size(), omp_get_max_threads(), a.order, setup,
      best, relative_error(ours, reference), peak_rss_gb());
  print_phases(best_phases);
  print_statistics(fmm.statistics());
  return reference;
}

// int64 count, the sampled target indices, their complex values.
void write_reference(const std::string& path, std::span<const std::int64_t> sample,
                     std::span<const cplx> values) {
  std::ofstream out(path, std::ios::binary);
  const std::int64_t count = sample.size();
  write(out, &count, 1);
  write(out, sample.data(), sample.size());
  write(out, reinterpret_cast<const double*>(values.data()), 2 * values.size());
}

int run_points(const Args& a, const Discretization& disc) {
  const auto& sources = disc.quadrature_points();
  const auto& targets = disc.collocation_points();
  const std::vector<cplx> charges =
      point_strengths(disc, random_vector(disc.size(), 5));  // weight x density
  // Direct reference on every (N / 2000)-th target.
  std::vector<std::int64_t> sample;
  for (std::size_t i = 0; i < targets.size(); i += std::max<std::size_t>(1, targets.size() / 2000))
    sample.push_back(static_cast<std::int64_t>(i));
  const auto reference = sum_points(a, disc, "points", {}, charges, {}, sample);
  std::vector<Vec3> normals;
  std::vector<cplx> dipoles, reference_cd;
  if (a.dipoles) {
    normals = quadrature_point_normals(disc);
    dipoles = point_strengths(disc, random_vector(disc.size(), 6));
    reference_cd = sum_points(a, disc, "points+dipoles", normals, charges, dipoles, sample);
    // Burton-Miller's coupling i / k (i at k = 0), the derivative at the target's element normal.
    if (a.burton_miller)
      sum_points(a, disc, "points+dipoles+bm", normals, charges, dipoles, sample,
                 a.k > 0.0 ? cplx(0.0, 1.0 / a.k) : cplx(0.0, 1.0));
  }
  if (!a.points_dir.empty()) {
    std::ofstream out(a.points_dir + "/points.bin", std::ios::binary);
    const std::int64_t ns = sources.size(), nt = targets.size();
    write(out, &ns, 1);
    write(out, &nt, 1);
    write(out, &a.k, 1);
    write(out, reinterpret_cast<const double*>(sources.data()), 3 * sources.size());
    write(out, reinterpret_cast<const double*>(charges.data()), 2 * charges.size());
    write(out, reinterpret_cast<const double*>(targets.data()), 3 * targets.size());
    write_reference(a.points_dir + "/reference.bin", sample, reference);
    // FMM3D's driver sums dipoles where dipoles.bin exists: none stale from an earlier run.
    std::filesystem::remove(a.points_dir + "/dipoles.bin");
    if (a.dipoles) {
      std::ofstream dip(a.points_dir + "/dipoles.bin", std::ios::binary);
      write(dip, &ns, 1);
      write(dip, reinterpret_cast<const double*>(normals.data()), 3 * normals.size());
      write(dip, reinterpret_cast<const double*>(dipoles.data()), 2 * dipoles.size());
      write_reference(a.points_dir + "/reference_cd.bin", sample, reference_cd);
    }
  }
  return 0;
}

int run_matrix(const Args& a, const Discretization& disc) {
  const RowRange rows{0, disc.size()};
  const NearFieldOptions near;
  PhaseTimer timer;
  auto start = Clock::now();
  const FmmLayerPotentials layers(disc, a.k, rows, near, fmm_options(a, 0.0), &timer);
  const double setup = seconds_since(start);
  const double tree = timer.seconds[int(fmm::FmmPhase::tree)],
               translations = timer.seconds[int(fmm::FmmPhase::translations)];
  const auto dd = random_vector(disc.size(), 1), sd = random_vector(disc.size(), 2);
  std::vector<cplx> y(disc.size());
  PhaseTimer best_phases;
  const double best = fastest_run(a.reps, timer, best_phases, [&] { layers.apply(dd, sd, y); });
  const fmm::FmmStatistics& s = layers.fmm().statistics();
  std::printf(
      "matrix N %zu threads %d p %d levels %d leaves %zu set-up %.2f s (tree %.2f, translations "
      "%.2f, near correction %.2f) MatMult %.3f s = %.3f us/element, peak %.2f GiB, fmm %.2f GiB, "
      "correction %.2f GiB |",
      disc.size(), omp_get_max_threads(), a.order, s.levels, s.leaves, setup, tree, translations,
      setup - tree - translations, best, best / disc.size() * 1e6, peak_rss_gb(),
      s.total_bytes() / 1073741824.0, layers.near_field().memory_bytes() / 1073741824.0);
  print_phases(best_phases);
  print_statistics(s);
  if (a.direct) {
    const DirectLayerPotentials direct(disc, a.k, rows, near);
    std::vector<cplx> reference(disc.size());
    start = Clock::now();
    direct.apply(dd, sd, reference);
    const double direct_seconds = seconds_since(start);
    std::printf("direct N %zu MatMult %.3f s, FMM/direct time ratio %.4f, relative error %.3e\n",
                disc.size(), direct_seconds, best / direct_seconds, relative_error(y, reference));
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const Args a = parse(argc, argv);
    const Mesh mesh = Mesh::from_surface(make_icosphere(a.level, 1.0), "icosphere");
    const Discretization disc(mesh, 3);
    return a.points ? run_points(a, disc) : run_matrix(a, disc);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fmm_matmult: error: %s\n", e.what());
    return 1;
  }
}
