// GPU near-field benchmark (built only with CUDA): the direct sum of the FMM's U, W and X lists
// on the GPU against the CPU's (add_near_field_cpu, the FMM's near phase) in the same run.
//
//   gpu_near_field [-L 6,7,8] [-max_leaf 100] [-sweep_L 8] [-sweep 30,60,200] [-k 8]
//                  [-shapes 256x2,256x1,128x2,128x1,64x1] [-reps 10] [-cpu_reps 1]
//
// Geometry as FmmLayerPotentials gives it to the FMM: icosphere of level L (N = 20 4^L
// triangles, radius 1), sources the 3 Gauss points of every triangle with the element normals,
// targets (and splitting points) the centroids, leaves of at most max_leaf centroids; random
// charges and dipoles (both layers, as a MatMult applies them). Cases: every L at max_leaf, and
// sweep_L at each leaf size of -sweep. Shapes: threads per block x targets per thread.
// Times: CUDA events around apply_device on device-resident strengths (gather, kernel), median
// of reps after a warm-up; "host ms" is apply() from host arrays (strengths in, potentials out);
// the CPU time is the fastest of cpu_reps on all OpenMP threads. Error: ||gpu - cpu|| / ||cpu||.
#include "fmbem/fmm/gpu_near_field.hpp"

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench_util.hpp"
#include "fmbem/bem/discretization.hpp"
#include "fmbem/bem/point_strengths.hpp"
#include "fmbem/fmm/fmm.hpp"
#include "fmbem/fmm/gpu_device.hpp"
#include "fmbem/fmm/gpu_m2l.hpp"
#include "fmbem/mesh/mesh.hpp"

namespace {

using namespace fmbem;
using namespace fmbem::fmm;
using namespace fmbem::bench;

struct Args {
  std::vector<int> levels{6, 7, 8}, sweep{30, 60, 200};
  std::vector<GpuNearFieldOptions> shapes{{256, 2}, {256, 1}, {128, 2}, {128, 1}, {64, 1}};
  int max_leaf = 100, sweep_level = 8, reps = 10, cpu_reps = 1;
  double k = 8.0;
};

Args parse(int argc, char** argv) {
  Args a;
  for (Arguments args(argc, argv); args.next();) {
    const std::string& key = args.key();
    const auto value = [&] { return args.value(); };
    if (key == "-L")
      a.levels = int_list(value());
    else if (key == "-max_leaf")
      a.max_leaf = std::stoi(value());
    else if (key == "-sweep_L")
      a.sweep_level = std::stoi(value());
    else if (key == "-sweep") {
      const std::string v = value();
      a.sweep = v == "none" ? std::vector<int>{} : int_list(v);
    } else if (key == "-k")
      a.k = std::stod(value());
    else if (key == "-reps")
      a.reps = std::stoi(value());
    else if (key == "-cpu_reps")
      a.cpu_reps = std::stoi(value());
    else if (key == "-shapes") {
      a.shapes.clear();
      std::stringstream in(value());
      for (std::string item; std::getline(in, item, ',');) {
        const auto x = item.find('x');
        if (x == std::string::npos) throw std::runtime_error("a shape is THREADSxTARGETS");
        a.shapes.push_back({std::stoi(item.substr(0, x)), std::stoi(item.substr(x + 1))});
      }
    } else
      throw std::runtime_error("unknown argument " + key);
  }
  return a;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

std::vector<cplx> random_vector(std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<cplx> v(n);
  for (auto& x : v) x = cplx(u(rng), u(rng));
  return v;
}

double relative_error(const std::vector<cplx>& a, const std::vector<cplx>& ref) {
  double diff = 0.0, norm = 0.0;
  for (std::size_t i = 0; i < ref.size(); ++i) {
    diff += std::norm(a[i] - ref[i]);
    norm += std::norm(ref[i]);
  }
  return std::sqrt(diff / norm);
}

struct Row {
  int L = 0, max_leaf = 0, threads = 0, per_thread = 0;
  std::size_t n = 0, pairs = 0, items = 0;
  double mean_leaf = 0.0, utilisation = 0.0, ms = 0.0, host_ms = 0.0, cpu_ms = 0.0, error = 0.0,
         setup_s = 0.0, mib = 0.0;
};
std::vector<Row> rows;

void run_case(const Args& a, int L, int max_leaf, const Discretization& disc,
              const std::vector<Vec3>& normals, const std::vector<cplx>& charges,
              const std::vector<cplx>& dipoles) {
  const auto start = Clock::now();
  FmmOptions options;
  options.order = 4;  // the near lists do not depend on p; a small p keeps the set-up short
  options.max_leaf = max_leaf;
  options.skip_radius = disc.coincidence_radius();
  const Fmm fmm(a.k, disc.quadrature_points(), normals, disc.collocation_points(), options);
  const double fmm_s = seconds_since(start);
  const NearFieldLists lists = fmm.near_field_lists();
  const std::size_t nt = lists.targets.size(), ns = lists.sources.size();
  const FmmStatistics& st = fmm.statistics();
  std::vector<cplx> reference(nt, 0.0);
  double cpu_ms = 1e300;
  for (int r = 0; r < std::max(1, a.cpu_reps); ++r) {
    std::fill(reference.begin(), reference.end(), cplx(0.0));
    const auto t = Clock::now();
    add_near_field_cpu(lists, charges, dipoles, reference);
    cpu_ms = std::min(cpu_ms, seconds_since(t) * 1e3);
  }
  std::printf(
      "# L = %d, N = %zu, max leaf %d: %zu target leaves (mean %.1f targets), %zu pairs; FMM "
      "plan %.2f s; CPU near field %.1f ms (%d threads, %.3g pairs/s)\n",
      L, nt, max_leaf, st.target_leaves, st.mean_leaf_targets, st.near_pairs, fmm_s, cpu_ms,
      omp_get_max_threads(), st.near_pairs / (cpu_ms * 1e-3));
  std::fflush(stdout);
  DeviceArray d_charges(ns), d_dipoles(ns), d_potential(nt);
  d_charges.upload(charges.data());
  d_dipoles.upload(dipoles.data());
  std::vector<cplx> potential(nt);
  for (const GpuNearFieldOptions& shape : a.shapes) {
    Row row;
    row.L = L;
    row.max_leaf = max_leaf;
    row.threads = shape.threads;
    row.per_thread = shape.targets_per_thread;
    row.n = nt;
    row.pairs = st.near_pairs;
    row.mean_leaf = st.mean_leaf_targets;
    row.cpu_ms = cpu_ms;
    try {
      const auto setup_start = Clock::now();
      GpuNearField gpu(lists, shape);
      row.setup_s = seconds_since(setup_start);
      row.items = gpu.statistics().items;
      row.utilisation = gpu.statistics().thread_utilisation;
      row.mib = gpu.statistics().device_bytes / 1048576.0;
      d_potential.fill_zero();
      gpu.apply_device(d_charges.data(), d_dipoles.data(), d_potential.data());
      gpu.synchronize();
      d_potential.download(potential.data());
      row.error = relative_error(potential, reference);
      GpuTimer timer;
      std::vector<double> times;
      for (int r = 0; r < a.reps; ++r) {
        timer.start();
        gpu.apply_device(d_charges.data(), d_dipoles.data(), d_potential.data());
        times.push_back(timer.stop());
      }
      row.ms = median(times);
      std::vector<double> host;
      for (int r = 0; r < 3; ++r) {
        const auto t = Clock::now();
        gpu.apply(charges, dipoles, potential);
        host.push_back(seconds_since(t) * 1e3);
      }
      row.host_ms = median(host);
      std::printf("%4dx%d %9.3f ms %.3g pairs/s, host %.2f ms, err %.1e (%s, %.0f MiB)\n",
                  shape.threads, shape.targets_per_thread, row.ms, row.pairs / (row.ms * 1e-3),
                  row.host_ms, row.error, gpu.describe().c_str(), row.mib);
    } catch (const std::exception& e) {
      std::printf("%4dx%d failed: %s\n", shape.threads, shape.targets_per_thread, e.what());
      row.ms = -1.0;
    }
    std::fflush(stdout);
    rows.push_back(row);
  }
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const Args a = parse(argc, argv);
    std::string why;
    if (!gpu_available(&why)) throw std::runtime_error("no GPU: " + why);
    std::printf("# GPU near-field benchmark on %s; %d OpenMP threads; k = %g\n",
                gpu_device_description().c_str(), omp_get_max_threads(), a.k);
    std::vector<int> levels = a.levels;
    if (!a.sweep.empty() && std::find(levels.begin(), levels.end(), a.sweep_level) == levels.end())
      levels.push_back(a.sweep_level);
    for (int L : levels) {
      const auto start = Clock::now();
      const Mesh mesh = Mesh::from_surface(make_icosphere(L, 1.0), "icosphere");
      const Discretization disc(mesh, 3);
      const std::vector<Vec3> normals = quadrature_point_normals(disc);
      const std::size_t ns = disc.quadrature_points().size();
      const std::vector<cplx> charges = random_vector(ns, 1), dipoles = random_vector(ns, 2);
      std::printf("# L = %d: N = %zu, %zu sources (%.2f s)\n", L, disc.size(), ns,
                  seconds_since(start));
      std::vector<int> leaves;
      if (std::find(a.levels.begin(), a.levels.end(), L) != a.levels.end())
        leaves.push_back(a.max_leaf);
      if (L == a.sweep_level)
        for (int leaf : a.sweep)
          if (std::find(leaves.begin(), leaves.end(), leaf) == leaves.end()) leaves.push_back(leaf);
      for (int leaf : leaves) run_case(a, L, leaf, disc, normals, charges, dipoles);
    }
    std::printf(
        "\n| L | N | max leaf | mean leaf | pairs | threads x targets | blocks | utilisation | "
        "GPU ms | pairs/s | host ms | CPU ms | CPU / GPU | rel. error | MiB |\n"
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    for (const Row& r : rows) {
      if (r.ms < 0) {
        std::printf("| %d | %zu | %d | | %zu | %dx%d | failed | | | | | | | | |\n", r.L, r.n,
                    r.max_leaf, r.pairs, r.threads, r.per_thread);
        continue;
      }
      std::printf(
          "| %d | %zu | %d | %.1f | %.3e | %dx%d | %zu | %.0f%% | %.2f | %.3e | %.1f | %.1f | "
          "%.0f | %.1e | %.0f |\n",
          r.L, r.n, r.max_leaf, r.mean_leaf, double(r.pairs), r.threads, r.per_thread, r.items,
          100.0 * r.utilisation, r.ms, r.pairs / (r.ms * 1e-3), r.host_ms, r.cpu_ms,
          r.cpu_ms / r.ms, r.error, r.mib);
    }
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gpu_near_field: error: %s\n", e.what());
    return 1;
  }
}
