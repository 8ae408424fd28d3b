// GPU M2L benchmark (built only with CUDA): every scheme on the k = 8 sphere's octree, against
// the measured ceilings of the same GPU and the CPU reference M2L of the same machine.
//
//   gpu_m2l [-L 5,6,7,8] [-p 8,16] [-schemes basic,sibling,cluster,ij,gemm,dmma] [-B 2]
//           [-k 8] [-max_leaf 100] [-reps 5] [-gemm_columns 0] [-cpu_reps 1] [-no_peaks]
//
// Geometry as FmmLayerPotentials gives it to the FMM: icosphere of level L (N = 20 4^L
// triangles, radius 1), sources the 3 Gauss points of every triangle, targets (and splitting
// points) the centroids, leaves of at most max_leaf centroids. Moments are random; every
// scheme's locals are compared with the CPU reference (max over cells of the relative error).
// Times: CUDA events around each level's kernels on device-resident moments and locals, median
// of reps after a warm-up; "host" adds the copies of the moments in and the locals out.
// -B takes a list: cluster and ij then run once per chunk size.
#include "fmbem/fmm/gpu_m2l.hpp"

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench_util.hpp"
#include "fmbem/bem/discretization.hpp"
#include "fmbem/fmm/gpu_device.hpp"
#include "fmbem/fmm/m2l_plan.hpp"
#include "fmbem/mesh/mesh.hpp"

namespace {

using namespace fmbem;
using namespace fmbem::fmm;
using namespace fmbem::bench;

struct Args {
  std::vector<int> levels{5, 6, 7, 8}, orders{8, 16}, chunks{2};
  std::vector<M2LScheme> schemes{m2l_schemes().begin(), m2l_schemes().end()};
  double k = 8.0;
  int max_leaf = 100, reps = 5, gemm_columns = 0, cpu_reps = 1;
  bool peaks = true;
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
    else if (key == "-B")
      a.chunks = int_list(value());
    else if (key == "-schemes") {
      a.schemes.clear();
      std::stringstream in(value());
      for (std::string item; std::getline(in, item, ',');)
        a.schemes.push_back(parse_m2l_scheme(item));
    } else if (key == "-k")
      a.k = std::stod(value());
    else if (key == "-max_leaf")
      a.max_leaf = std::stoi(value());
    else if (key == "-reps")
      a.reps = std::stoi(value());
    else if (key == "-gemm_columns")
      a.gemm_columns = std::stoi(value());
    else if (key == "-cpu_reps")
      a.cpu_reps = std::stoi(value());
    else if (key == "-no_peaks")
      a.peaks = false;
    else
      throw std::runtime_error("unknown argument " + key);
  }
  return a;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

double max_cell_error(const std::vector<cplx>& a, const std::vector<cplx>& ref, int size) {
  double worst = 0.0;
  for (std::size_t c = 0; c < ref.size() / size; ++c) {
    double diff = 0.0, norm = 0.0;
    for (int i = 0; i < size; ++i) {
      diff += std::norm(a[c * size + i] - ref[c * size + i]);
      norm += std::norm(ref[c * size + i]);
    }
    if (!std::isfinite(diff)) return INFINITY;
    if (norm > 0.0) worst = std::max(worst, std::sqrt(diff / norm));
  }
  return worst;
}

struct Peaks {
  double tensor_tflops = 0.0, fma_tflops = 0.0, copy_gbps = 0.0;
};

struct Row {
  int L = 0, p = 0;
  std::size_t n = 0, pairs = 0;
  std::string scheme;
  double ms = 0.0, host_ms = 0.0, cpu_ms = 0.0, tflops = 0.0, gbytes = 0.0, t_gbytes = 0.0,
         gbps = 0.0, flop_ms = 0.0, t_ms = 0.0, bytes_ms = 0.0, error = 0.0, setup_s = 0.0;
  bool tensor = false;
  std::vector<std::string> level_rows;
};

std::vector<Row> rows;

void run_case(const Args& a, int L, int p, const Octree& tree, std::size_t n, const Peaks& peaks) {
  const auto plan_start = Clock::now();
  const M2LPlan plan = build_m2l_plan(tree, p, a.k);
  const double plan_s = seconds_since(plan_start);
  const int size = plan.coefficients();
  const std::size_t count = plan.num_cells * size;
  std::vector<cplx> multipole(count);
  for (std::size_t x = 0; x < count; ++x)  // deterministic, all digits busy, no zeros
    multipole[x] = cplx(std::sin(0.7 * x + 0.1), std::cos(1.3 * x + 0.2));
  std::vector<cplx> reference(count, 0.0);
  std::vector<double> cpu_times;
  for (int r = 0; r < std::max(1, a.cpu_reps); ++r) {
    std::fill(reference.begin(), reference.end(), cplx(0.0));
    const auto start = Clock::now();
    apply_m2l_reference(plan, multipole.data(), reference.data());
    cpu_times.push_back(seconds_since(start) * 1e3);
  }
  const double cpu_ms = median(cpu_times);
  std::printf(
      "# L = %d, N = %zu, p = %d: %zu cells, %zu M2L pairs on %zu levels, plan %.2f s, "
      "CPU reference M2L %.1f ms (%d threads, %.3f TFLOP/s)\n",
      L, n, p, plan.num_cells, plan.pair_count(), plan.levels.size(), plan_s, cpu_ms,
      omp_get_max_threads(), plan.flops() / (cpu_ms * 1e-3) / 1e12);
  std::fflush(stdout);
  DeviceArray d_multipole(count), d_local(count);
  d_multipole.upload(multipole.data());
  std::vector<cplx> local(count);
  for (M2LScheme scheme : a.schemes) {
    const bool chunked = scheme == M2LScheme::cluster || scheme == M2LScheme::ij;
    for (int b : chunked ? a.chunks : std::vector<int>{a.chunks.front()}) {
      Row row;
      row.L = L;
      row.p = p;
      row.n = n;
      row.pairs = plan.pair_count();
      row.scheme = m2l_scheme_name(scheme);
      if (chunked) row.scheme += " B=" + std::to_string(b);
      row.cpu_ms = cpu_ms;
      row.tensor = scheme == M2LScheme::gemm || scheme == M2LScheme::dmma;
      try {
        const auto setup_start = Clock::now();
        GpuM2L gpu(plan, scheme, GpuM2LOptions{b, a.gemm_columns});
        row.setup_s = seconds_since(setup_start);
        // Correctness on device arrays.
        d_local.fill_zero();
        gpu.apply_device(d_multipole.data(), d_local.data());
        gpu.synchronize();
        d_local.download(local.data());
        row.error = max_cell_error(local, reference, size);
        // Time: whole applies, then level by level.
        GpuTimer timer;
        timer.start();
        gpu.apply_device(d_multipole.data(), d_local.data());
        const double once = timer.stop();
        const int reps = once > 300.0 ? std::min(a.reps, 3) : a.reps;
        std::vector<double> totals;
        for (int r = 0; r < reps; ++r) {
          timer.start();
          gpu.apply_device(d_multipole.data(), d_local.data());
          totals.push_back(timer.stop());
        }
        row.ms = median(totals);
        const GpuM2LStatistics& st = gpu.statistics();
        for (std::size_t l = 0; l < plan.levels.size(); ++l) {
          std::vector<double> times;
          for (int r = 0; r < reps; ++r) {
            timer.start();
            gpu.apply_level_device(l, d_multipole.data(), d_local.data());
            times.push_back(timer.stop());
          }
          const double ms = median(times);
          const GpuM2LLevelStatistics& ls = st.levels[l];
          char text[512];
          std::snprintf(text, sizeof text,
                        "| %d | %d | %s | %d | %zu | %.3f | %.2f | %.2f | %.0f |", L, p,
                        row.scheme.c_str(), ls.level, ls.pairs, ms, ls.flops / (ms * 1e-3) / 1e12,
                        (ls.matrix_bytes + ls.other_bytes) / 1e9,
                        (ls.matrix_bytes + ls.other_bytes) / (ms * 1e-3) / 1e9);
          row.level_rows.push_back(text);
        }
        // From host arrays: moments in, locals out (the first call allocates the device copies).
        gpu.apply(multipole.data(), local.data());
        {
          const auto start = Clock::now();
          gpu.apply(multipole.data(), local.data());
          row.host_ms = seconds_since(start) * 1e3;
        }
        row.tflops = st.flops() / (row.ms * 1e-3) / 1e12;
        row.gbytes = st.bytes() / 1e9;
        row.t_gbytes = st.matrix_bytes() / 1e9;
        row.gbps = st.bytes() / (row.ms * 1e-3) / 1e9;
        const double peak = row.tensor ? peaks.tensor_tflops : peaks.fma_tflops;
        if (peak > 0) row.flop_ms = st.flops() / (peak * 1e12) * 1e3;
        if (peaks.copy_gbps > 0) {
          row.t_ms = st.matrix_bytes() / (peaks.copy_gbps * 1e9) * 1e3;
          row.bytes_ms = st.bytes() / (peaks.copy_gbps * 1e9) * 1e3;
        }
        std::printf("%-12s %9.3f ms %7.2f TFLOP/s %8.1f GB/s err %.1e (%s, %.0f MiB on device)\n",
                    row.scheme.c_str(), row.ms, row.tflops, row.gbps, row.error,
                    gpu.describe().c_str(), st.device_bytes / 1048576.0);
      } catch (const std::exception& e) {
        std::printf("%-12s failed: %s\n", row.scheme.c_str(), e.what());
        row.ms = -1.0;
      }
      std::fflush(stdout);
      rows.push_back(row);
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const Args a = parse(argc, argv);
    std::string why;
    if (!gpu_available(&why)) throw std::runtime_error("no GPU: " + why);
    std::printf("# GPU M2L benchmark on %s; %d OpenMP threads\n", gpu_device_description().c_str(),
                omp_get_max_threads());
    Peaks peaks;
    if (a.peaks) {
      peaks.copy_gbps = measure_copy_gbps(std::size_t(2) << 30);
      peaks.fma_tflops = measure_fp64_fma_tflops();
      peaks.tensor_tflops = measure_zgemm_tflops(4096, 4096, 4096, 1);
      std::printf(
          "# ceilings: device copy %.0f GB/s (read + write), FP64 FMA (no tensor cores) "
          "%.1f TFLOP/s, cuBLAS ZGEMM 4096^3 %.1f TFLOP/s\n",
          peaks.copy_gbps, peaks.fma_tflops, peaks.tensor_tflops);
      for (int p : a.orders)
        std::printf(
            "# cuBLAS batched ZGEMM shaped like M2L (316 x [%d x %d] x [%d x 256]): %.1f "
            "TFLOP/s\n",
            p * p, p * p, p * p, measure_zgemm_tflops(p * p, 256, p * p, 316));
      std::fflush(stdout);
    }
    for (int L : a.levels) {
      const auto start = Clock::now();
      const Mesh mesh = Mesh::from_surface(make_icosphere(L, 1.0), "icosphere");
      const Discretization disc(mesh, 3);
      const Octree tree(disc.quadrature_points(), mesh.centroids(), OctreeOptions{a.max_leaf});
      std::printf("# L = %d: N = %zu, %zu sources, %d tree levels, %zu cells (%.2f s)\n", L,
                  disc.size(), disc.quadrature_points().size(), tree.levels(), tree.cells().size(),
                  seconds_since(start));
      for (int p : a.orders) run_case(a, L, p, tree, disc.size(), peaks);
    }
    // Tables last: the reply of a device run shows the end of the output.
    std::printf(
        "\n## Per level\n\n| L | p | scheme | level | pairs | ms | TFLOP/s | GB | GB/s |\n"
        "|---|---|---|---|---|---|---|---|---|\n");
    for (const Row& r : rows)
      for (const std::string& line : r.level_rows) std::printf("%s\n", line.c_str());
    std::printf(
        "\n## Total M2L (all levels)\n\n"
        "| L | N | p | scheme | pairs | GPU ms | TFLOP/s | GB moved (T) | GB/s | flop bound ms | "
        "T bound ms | bytes bound ms | time / bound | host ms | CPU ms | CPU / GPU | max rel. "
        "error |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    for (const Row& r : rows) {
      if (r.ms < 0) {
        std::printf("| %d | %zu | %d | %s | %zu | failed | | | | | | | | | | | |\n", r.L, r.n, r.p,
                    r.scheme.c_str(), r.pairs);
        continue;
      }
      // The paper's schemes: bound by their T traffic or their flops on the FP64 units; ours:
      // by all their bytes or their flops on the tensor cores.
      const double bound = std::max(r.flop_ms, r.tensor ? r.bytes_ms : r.t_ms);
      std::printf(
          "| %d | %zu | %d | %s | %zu | %.3f | %.2f | %.2f (%.2f) | %.0f | %.3f | %.3f | %.3f | "
          "%.2f | %.1f | %.1f | %.1f | %.1e |\n",
          r.L, r.n, r.p, r.scheme.c_str(), r.pairs, r.ms, r.tflops, r.gbytes, r.t_gbytes, r.gbps,
          r.flop_ms, r.t_ms, r.bytes_ms, bound > 0 ? r.ms / bound : 0.0, r.host_ms, r.cpu_ms,
          r.cpu_ms / r.ms, r.error);
    }
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gpu_m2l: error: %s\n", e.what());
    return 1;
  }
}
