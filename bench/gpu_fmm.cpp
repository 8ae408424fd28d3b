// The whole FMM MatMult on the GPU (built only with CUDA): every phase there, the expansions
// resident, against the CPU executor.
//
//   gpu_fmm [-L 6,7,8] [-p 8,16] [-max_leaf 100 (0: default_max_leaf)] [-cpu 6x8,6x16,7x8,7x16,8x8]
//   [-sweep_L 8]
//           [-sweep 30,50,75,100,150,200,300,400] [-sweep_p 8,16] [-k 8] [-reps 5]
//
// Geometry as FmmLayerPotentials gives it to the FMM: icosphere of level L (N = 20 4^L
// triangles), sources the 3 Gauss points of every triangle with the element normals, targets
// (and splitting points) the centroids; random charges and dipoles (both layers, as a MatMult).
// GPU phase times: CUDA events around each phase (the FMM synchronises each phase's end when
// observed), median of reps; "MatMult" is apply_device unobserved (median of reps), "host" is
// apply() from host arrays. CPU phase times: wall clock, one apply, for the cases of -cpu (LxP).
// Roofline: each phase's floor is max(flops / FP64 rate, bytes / copy bandwidth), both measured
// here; flops and bytes counted as the fewest the phase must do (see count_work), M2L's from
// GpuM2L's statistics against the ZGEMM rate. "% roof" = floor / measured time.
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
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

constexpr int kPhases = 6;  // P2M .. Near
constexpr FmmPhase kTimed[kPhases] = {FmmPhase::p2m, FmmPhase::m2m, FmmPhase::m2l,
                                      FmmPhase::l2l, FmmPhase::l2p, FmmPhase::near_field};

struct Args {
  std::vector<int> levels{6, 7, 8}, orders{8, 16}, sweep{30, 50, 75, 100, 150, 200, 300, 400},
      sweep_orders{8, 16};
  std::vector<std::pair<int, int>> cpu{{6, 8}, {6, 16}, {7, 8}, {7, 16}, {8, 8}};
  int max_leaf = 100, sweep_level = 8, reps = 5;
  double k = 8.0;
};

Args parse(int argc, char** argv) {
  Args a;
  for (Arguments args(argc, argv); args.next();) {
    const std::string& key = args.key();
    const auto value = [&] { return args.value(); };
    if (key == "-L")
      a.levels = int_list(value());
    else if (key == "-p")
      a.orders = int_list(value());
    else if (key == "-max_leaf")
      a.max_leaf = std::stoi(value());
    else if (key == "-sweep_L")
      a.sweep_level = std::stoi(value());
    else if (key == "-sweep") {
      const std::string v = value();
      a.sweep = v == "none" ? std::vector<int>{} : int_list(v);
    } else if (key == "-sweep_p")
      a.sweep_orders = int_list(value());
    else if (key == "-cpu") {
      a.cpu.clear();
      const std::string v = value();
      std::stringstream in(v);
      for (std::string item; v != "none" && std::getline(in, item, ',');) {
        const auto x = item.find('x');
        if (x == std::string::npos) throw std::runtime_error("-cpu takes LxP,...");
        a.cpu.push_back({std::stoi(item.substr(0, x)), std::stoi(item.substr(x + 1))});
      }
    } else if (key == "-k")
      a.k = std::stod(value());
    else if (key == "-reps")
      a.reps = std::stoi(value());
    else
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

// Per-phase times: CUDA events (GPU) or the wall clock (CPU).
class PhaseTimes : public FmmObserver {
 public:
  explicit PhaseTimes(bool gpu) : gpu_(gpu) {}
  void begin(FmmPhase) override {
    if (gpu_)
      timer_.start();
    else
      start_ = Clock::now();
  }
  void end(FmmPhase phase) override {
    ms[int(phase)] = gpu_ ? timer_.stop() : seconds_since(start_) * 1e3;
  }
  double ms[int(FmmPhase::count)] = {};

 private:
  bool gpu_;
  GpuTimer timer_;
  Clock::time_point start_;
};

// The fewest flops and bytes of each phase (index as kTimed).
struct Work {
  double flops[kPhases] = {}, bytes[kPhases] = {};
};

Work count_work(const Fmm& fmm, std::size_t ns, std::size_t nt) {
  Work w;
  const Octree& tree = fmm.tree();
  const auto& cells = tree.cells();
  const double p = fmm.order(), size = p * p, ext = (p + 1) * (p + 1), c = 16.0;
  std::size_t m2m = 0, l2l = 0, leaves_with_sources = 0, leaves_with_targets = 0;
  for (const Cell& cell : cells) {
    if (cell.level >= 3 && cell.source_begin < cell.source_end) ++m2m;
    if (cell.level >= 3 && cell.target_begin < cell.target_end) ++l2l;
    if (cell.is_leaf() && cell.source_begin < cell.source_end) ++leaves_with_sources;
    if (cell.is_leaf() && cell.target_begin < cell.target_end) ++leaves_with_targets;
  }
  // P2M: charge conj(Rhat) for p^2 and three dipole sums for (p+1)^2 coefficients a source
  // (8 flops a complex multiply-add); points, normals, strengths read, moments written.
  w.flops[0] = double(ns) * (8.0 * size + 24.0 * ext);
  w.bytes[0] = double(ns) * (6 * 8 + 2 * c + 4) + leaves_with_sources * size * c;
  // M2M, L2L: one p^2 x p^2 complex matrix-vector product a child; the vectors read and
  // written once, the 8 matrices a level once.
  w.flops[1] = 8.0 * size * size * m2m;
  w.bytes[1] = 2.0 * m2m * size * c + tree.levels() * 8 * size * size * c;
  w.flops[3] = 8.0 * size * size * l2l;
  w.bytes[3] = 2.0 * l2l * size * c + tree.levels() * 8 * size * size * c;
  // M2L: 8 p^4 a pair (against the tensor-core ZGEMM rate); moments read, locals written, each
  // transfer matrix read once.
  const FmmStatistics& st = fmm.statistics();
  for (int level = 0; level < st.levels; ++level) {
    w.flops[2] += 8.0 * size * size * st.m2l_pairs_per_level[level];
    w.bytes[2] += 2.0 * st.cells_per_level[level] * size * c +
                  double(st.transfer_matrices_per_level[level]) * size * size * c;
  }
  // L2P: L Rhat over p^2 coefficients a target.
  w.flops[4] = 8.0 * size * nt;
  w.bytes[4] = double(nt) * (3 * 8 + c + 4) + leaves_with_targets * size * c;
  // Near field: about 40 flops a pair (exp(ikr) / r, the dipole factor, two complex FMAs);
  // points and strengths read once, potentials written once.
  w.flops[5] = 40.0 * fmm.statistics().near_pairs;
  w.bytes[5] = double(ns) * (6 * 8 + 2 * c) + double(nt) * (3 * 8 + c);
  return w;
}

struct Ceilings {
  double fp64_tflops = 0.0, zgemm_tflops = 0.0, copy_gbps = 0.0;
};

struct Row {
  int L = 0, p = 0, max_leaf = 0, levels = 0;
  std::size_t n = 0;
  double gpu_ms[kPhases] = {}, cpu_ms[kPhases] = {}, roof[kPhases] = {};
  double matmult_ms = 0.0, host_ms = 0.0, cpu_total_ms = 0.0, error = -1.0, setup_s = 0.0,
         mib = 0.0;
  bool cpu = false;
};

Row run_case(const Args& a, const Ceilings& ceil, int L, int p, int max_leaf,
             const Discretization& disc, const std::vector<Vec3>& normals,
             const std::vector<cplx>& charges, const std::vector<cplx>& dipoles, bool with_cpu) {
  Row row;
  row.L = L;
  row.p = p;
  row.max_leaf = max_leaf;
  row.n = disc.size();
  FmmOptions options;
  options.order = p;
  options.max_leaf = std::max(1, max_leaf);
  options.measured_max_leaf = max_leaf == 0;
  options.skip_radius = disc.coincidence_radius();
  options.device = FmmOptions::Device::gpu;
  const std::size_t ns = charges.size(), nt = disc.size();
  const auto start = Clock::now();
  const Fmm gpu(a.k, disc.quadrature_points(), normals, disc.collocation_points(), options);
  row.setup_s = seconds_since(start);
  row.levels = gpu.statistics().levels;
  row.max_leaf = gpu.statistics().max_leaf;  // max_leaf 0: the default for the GPU and p
  row.mib = gpu.statistics().gpu_bytes / 1048576.0;
  DeviceArray d_charges(ns), d_dipoles(ns), d_potential(nt);
  d_charges.upload(charges.data());
  d_dipoles.upload(dipoles.data());
  const auto apply = [&](FmmObserver* observer) {
    gpu.apply_device(d_charges.data(), d_dipoles.data(), d_potential.data(), observer);
  };
  apply(nullptr);  // warm-up
  std::vector<std::vector<double>> phase_ms(kPhases);
  std::vector<double> total_ms, host_ms;
  GpuTimer timer;
  for (int r = 0; r < a.reps; ++r) {
    PhaseTimes times(true);
    apply(&times);
    for (int i = 0; i < kPhases; ++i) phase_ms[i].push_back(times.ms[int(kTimed[i])]);
    timer.start();
    apply(nullptr);
    total_ms.push_back(timer.stop());
  }
  for (int i = 0; i < kPhases; ++i) row.gpu_ms[i] = median(phase_ms[i]);
  row.matmult_ms = median(total_ms);
  std::vector<cplx> potential(nt);
  for (int r = 0; r < 3; ++r) {
    const auto t = Clock::now();
    gpu.apply(charges, dipoles, potential);
    host_ms.push_back(seconds_since(t) * 1e3);
  }
  row.host_ms = median(host_ms);

  const Work w = count_work(gpu, ns, nt);
  for (int i = 0; i < kPhases; ++i) {
    const double rate = i == 2 ? ceil.zgemm_tflops : ceil.fp64_tflops;
    const double floor_ms =
        std::max(w.flops[i] / (rate * 1e12), w.bytes[i] / (ceil.copy_gbps * 1e9)) * 1e3;
    row.roof[i] = floor_ms / row.gpu_ms[i];
  }

  if (with_cpu) {
    FmmOptions cpu_options = options;
    cpu_options.device = FmmOptions::Device::cpu;
    const Fmm cpu(a.k, disc.quadrature_points(), normals, disc.collocation_points(), cpu_options);
    std::vector<cplx> reference(nt);
    PhaseTimes times(false);
    const auto t = Clock::now();
    cpu.apply(charges, dipoles, reference, &times);
    row.cpu_total_ms = seconds_since(t) * 1e3;
    for (int i = 0; i < kPhases; ++i) row.cpu_ms[i] = times.ms[int(kTimed[i])];
    double diff = 0.0, norm = 0.0;
    for (std::size_t i = 0; i < nt; ++i) {
      diff += std::norm(potential[i] - reference[i]);
      norm += std::norm(reference[i]);
    }
    row.error = std::sqrt(diff / norm);
    row.cpu = true;
  }
  std::printf(
      "L = %d, p = %2d, max leaf %3d: %d levels, set-up %.1f s, %.0f MiB; GPU ms P2M %.2f M2M "
      "%.2f M2L %.2f L2L %.2f L2P %.2f Near %.2f; MatMult %.2f ms, host %.1f ms",
      L, p, max_leaf, row.levels, row.setup_s, row.mib, row.gpu_ms[0], row.gpu_ms[1], row.gpu_ms[2],
      row.gpu_ms[3], row.gpu_ms[4], row.gpu_ms[5], row.matmult_ms, row.host_ms);
  if (row.cpu)
    std::printf(
        "; CPU %.0f ms (P2M %.0f M2M %.0f M2L %.0f L2L %.0f L2P %.0f Near %.0f), error %.1e",
        row.cpu_total_ms, row.cpu_ms[0], row.cpu_ms[1], row.cpu_ms[2], row.cpu_ms[3], row.cpu_ms[4],
        row.cpu_ms[5], row.error);
  std::printf("\n%s", max_leaf == a.max_leaf ? gpu.describe().c_str() : "");
  std::fflush(stdout);
  return row;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const Args a = parse(argc, argv);
    std::string why;
    if (!gpu_available(&why)) throw std::runtime_error("no GPU: " + why);
    Ceilings ceil;
    ceil.fp64_tflops = measure_fp64_fma_tflops();
    ceil.copy_gbps = measure_copy_gbps(std::size_t(1) << 30);
    ceil.zgemm_tflops = measure_zgemm_tflops(256, 2048, 256, 64);
    std::printf(
        "# GPU FMM benchmark on %s; %d OpenMP threads; k = %g; measured FP64 %.1f TFLOP/s, ZGEMM "
        "%.1f TFLOP/s, copy %.0f GB/s\n",
        gpu_device_description().c_str(), omp_get_max_threads(), a.k, ceil.fp64_tflops,
        ceil.zgemm_tflops, ceil.copy_gbps);
    std::vector<int> levels = a.levels;
    if (!a.sweep.empty() && std::find(levels.begin(), levels.end(), a.sweep_level) == levels.end())
      levels.push_back(a.sweep_level);
    std::vector<Row> rows, sweep_rows;
    for (int L : levels) {
      const Mesh mesh = Mesh::from_surface(make_icosphere(L, 1.0), "icosphere");
      const Discretization disc(mesh, 3);
      const std::vector<Vec3> normals = quadrature_point_normals(disc);
      const std::size_t ns = disc.quadrature_points().size();
      const std::vector<cplx> charges = random_vector(ns, 1), dipoles = random_vector(ns, 2);
      if (std::find(a.levels.begin(), a.levels.end(), L) != a.levels.end())
        for (int p : a.orders) {
          const bool cpu =
              std::find(a.cpu.begin(), a.cpu.end(), std::pair<int, int>{L, p}) != a.cpu.end();
          rows.push_back(run_case(a, ceil, L, p, a.max_leaf, disc, normals, charges, dipoles, cpu));
        }
      if (L == a.sweep_level)
        for (int p : a.sweep_orders)
          for (int leaf : a.sweep) {
            try {
              sweep_rows.push_back(
                  run_case(a, ceil, L, p, leaf, disc, normals, charges, dipoles, false));
            } catch (const std::exception& e) {
              std::printf("L = %d, p = %d, max leaf %d failed: %s\n", L, p, leaf, e.what());
            }
          }
    }
    std::printf(
        "\n| L | N | p | phase | GPU ms | CPU ms | CPU / GPU | %% of roofline |\n"
        "|---|---|---|---|---|---|---|---|\n");
    const char* names[kPhases + 1] = {"P2M", "M2M", "M2L", "L2L", "L2P", "Near", "MatMult"};
    for (const Row& r : rows) {
      for (int i = 0; i <= kPhases; ++i) {
        const double g = i < kPhases ? r.gpu_ms[i] : r.matmult_ms;
        const double c = i < kPhases ? r.cpu_ms[i] : r.cpu_total_ms;
        std::printf("| %d | %zu | %d | %s | %.2f | ", r.L, r.n, r.p, names[i], g);
        if (r.cpu)
          std::printf("%.1f | %.0f | ", c, c / g);
        else
          std::printf("| | ");
        if (i < kPhases)
          std::printf("%.0f%% |\n", 100.0 * r.roof[i]);
        else if (r.cpu)
          std::printf("error %.1e |\n", r.error);
        else
          std::printf(" |\n");
      }
    }
    std::printf(
        "\n| L | p | max leaf | levels | P2M | M2M | M2L | L2L | L2P | Near | MatMult ms | host "
        "ms | MiB |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    for (const Row& r : sweep_rows)
      std::printf(
          "| %d | %d | %d | %d | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.1f | %.0f |\n",
          r.L, r.p, r.max_leaf, r.levels, r.gpu_ms[0], r.gpu_ms[1], r.gpu_ms[2], r.gpu_ms[3],
          r.gpu_ms[4], r.gpu_ms[5], r.matmult_ms, r.host_ms, r.mib);
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gpu_fmm: error: %s\n", e.what());
    return 1;
  }
}
