// The BEM near-field correction on the GPU against the CPU (OpenMP, all threads): set-up time
// (pass 1, the close lists; pass 2, the entries), apply time, pairs per second, and the largest
// entry difference. Icospheres of radius 1, k = 8, 3-point rule, near factor 2.5.
//
//   gpu_correction [-levels 6,7,8] [-k 8] [-repeats 20] [-cpu_max_level 8]
#include "fmbem/bem/gpu_correction.hpp"

#include <omp.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <unordered_map>

#include "bench_util.hpp"
#include "fmbem/bem/near_field.hpp"
#include "fmbem/fmm/gpu_device.hpp"
#include "fmbem/fmm/gpu_m2l.hpp"
#include "fmbem/kernel/kernel.hpp"
#include "fmbem/mesh/mesh.hpp"

using namespace fmbem;
using bench::Clock;
using bench::seconds_since;

namespace {

// Pass 1 as it was before (a hash map of vectors of element numbers, bucketed by cell), for
// the record of what the sorted grid replaced; returns the number of pairs.
std::size_t hash_map_pass_one(const Mesh& mesh, double factor) {
  const std::size_t n = mesh.size();
  std::vector<double> radius(n);
  double largest = 0.0;
  for (std::size_t e = 0; e < n; ++e) {
    double r = 0.0;
    for (int c = 0; c < 3; ++c) r = std::max(r, norm(mesh.corner(e, c) - mesh.centroids()[e]));
    largest = std::max(largest, radius[e] = r);
  }
  const double cell = factor * largest;
  const auto pack = [&](const Vec3& x, int dx, int dy, int dz) {
    const auto m = [](std::int64_t v) { return std::uint64_t(v + (1 << 20)) & 0x1fffff; };
    return (m(std::int64_t(std::floor(x.x / cell)) + dx) << 42) |
           (m(std::int64_t(std::floor(x.y / cell)) + dy) << 21) |
           m(std::int64_t(std::floor(x.z / cell)) + dz);
  };
  std::unordered_map<std::uint64_t, std::vector<std::int32_t>> cells;
  for (std::size_t e = 0; e < n; ++e) cells[pack(mesh.centroids()[e], 0, 0, 0)].push_back(int(e));
  std::vector<std::vector<std::int32_t>> close(n);
#pragma omp parallel for schedule(dynamic, 256)
  for (std::size_t i = 0; i < n; ++i) {
    const Vec3& x = mesh.centroids()[i];
    for (int dx = -1; dx <= 1; ++dx)
      for (int dy = -1; dy <= 1; ++dy)
        for (int dz = -1; dz <= 1; ++dz) {
          const auto it = cells.find(pack(x, dx, dy, dz));
          if (it == cells.end()) continue;
          for (std::int32_t j : it->second)
            if (std::size_t(j) == i || norm(x - mesh.centroids()[j]) < factor * radius[j])
              close[i].push_back(j);
        }
    std::sort(close[i].begin(), close[i].end());
  }
  std::size_t pairs = 0;
  for (const auto& c : close) pairs += c.size();
  return pairs;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int> levels{6, 7, 8};
  double k = 8.0;
  int repeats = 20, cpu_max_level = 8;
  for (int a = 1; a + 1 < argc; a += 2) {
    const std::string name = argv[a];
    if (name == "-levels")
      levels = bench::int_list(argv[a + 1]);
    else if (name == "-k")
      k = std::stod(argv[a + 1]);
    else if (name == "-repeats")
      repeats = std::stoi(argv[a + 1]);
    else if (name == "-cpu_max_level")
      cpu_max_level = std::stoi(argv[a + 1]);
  }
  // Without a GPU (a CUDA build on a machine without one) the CPU columns alone.
  std::string why;
  const bool gpu_here = fmm::gpu_available(&why);
  std::printf("# %s; %d OpenMP threads; k = %g\n",
              gpu_here ? fmm::gpu_device_description().c_str() : ("no GPU: " + why).c_str(),
              omp_get_max_threads(), k);
  std::printf(
      "| L | N | pairs | pass 1 hash map (s) | pass 1 sorted grid (s) | set-up CPU (s) | set-up "
      "GPU (s) "
      "| GPU pairs/s | CPU pairs/s | max entry diff | apply CPU add_to (ms) | apply GPU (ms) | "
      "apply "
      "GPU + copies (ms) |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
  for (int level : levels) {
    auto t = Clock::now();
    const Mesh mesh = Mesh::from_surface(make_icosphere(level, 1.0), "icosphere");
    const Discretization disc(mesh, 3);
    const double mesh_s = seconds_since(t);
    const RowRange rows{0, mesh.size()};
    NearFieldOptions options;

    t = Clock::now();
    const std::size_t hash_pairs = hash_map_pass_one(mesh, options.near_factor);
    const double hash_s = seconds_since(t);
    t = Clock::now();
    const NearFieldPattern pattern = near_field_pattern(mesh, rows, options.near_factor);
    const double grid_s = seconds_since(t);
    if (hash_pairs != pattern.columns.size())
      std::fprintf(stderr, "pass 1: %zu pairs by the hash map, %zu by the sorted grid\n",
                   hash_pairs, pattern.columns.size());

    if (!gpu_here) {
      options.gpu = false;
      t = Clock::now();
      const NearFieldCorrection cpu(disc, k, rows, options);
      const double cpu_s = seconds_since(t);
      std::vector<cplx> dd(mesh.size(), cplx(1.0, 0.5)), y(rows.size());
      t = Clock::now();
      cpu.add_to(dd, dd, y);
      std::printf("| %d | %zu | %zu | %.3f | %.3f | %.3f | - | - | %.3g | - | %.2f | - | - |\n",
                  level, mesh.size(), cpu.nonzeros(), hash_s, grid_s, cpu_s,
                  double(cpu.nonzeros()) / (cpu_s - grid_s), seconds_since(t) * 1e3);
      continue;
    }
    options.gpu = true;
    {  // warm-up: CUDA context and module load stay out of the timing
      const Mesh small = Mesh::from_surface(make_icosphere(1, 1.0), "warm-up");
      const Discretization small_disc(small, 3);
      const NearFieldCorrection warm(small_disc, k, {0, small.size()}, options);
    }
    t = Clock::now();
    const NearFieldCorrection gpu(disc, k, rows, options);
    const double gpu_s = seconds_since(t);
    const std::size_t pairs = gpu.nonzeros();

    double cpu_s = 0.0, worst = 0.0;
    std::vector<cplx> y(rows.size());
    std::mt19937 rng(1);
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    std::vector<cplx> dd(mesh.size()), sd(mesh.size());
    for (auto& v : dd) v = cplx(u(rng), u(rng));
    for (auto& v : sd) v = cplx(u(rng), u(rng));
    double add_to_ms = 0.0;
    if (level <= cpu_max_level) {
      options.gpu = false;
      t = Clock::now();
      const NearFieldCorrection cpu(disc, k, rows, options);
      cpu_s = seconds_since(t);
      const auto cs = cpu.single_entries(), cd = cpu.double_entries();
      const auto gs = gpu.single_entries(), gd = gpu.double_entries();
      for (std::size_t r = 0; r < rows.size(); ++r) {
        double scale_s = 0.0, scale_d = inv_4pi, diff_s = 0.0, diff_d = 0.0;
        for (auto at = cpu.row_start()[r]; at < cpu.row_start()[r + 1]; ++at) {
          scale_s = std::max(scale_s, std::abs(cs[at]));
          scale_d = std::max(scale_d, std::abs(cd[at]));
          diff_s = std::max(diff_s, std::abs(gs[at] - cs[at]));
          diff_d = std::max(diff_d, std::abs(gd[at] - cd[at]));
        }
        worst = std::max({worst, diff_s / scale_s, diff_d / scale_d});
      }
      std::vector<double> times;
      for (int r = 0; r < repeats; ++r) {
        t = Clock::now();
        cpu.add_to(dd, sd, y);
        times.push_back(seconds_since(t) * 1e3);
      }
      add_to_ms = median(times);
    }

    // apply_device alone (events), and with the densities copied in and y out.
    fmm::DeviceArray d_dd(dd.size()), d_sd(sd.size()), d_y(y.size());
    d_dd.upload(dd.data());
    d_sd.upload(sd.data());
    d_y.fill_zero();
    std::vector<double> device_ms, copies_ms;
    fmm::GpuTimer timer;
    for (int r = 0; r < repeats + 2; ++r) {
      timer.start();
      gpu.apply_device(d_dd.data(), d_sd.data(), d_y.data());
      const double ms = timer.stop();
      t = Clock::now();
      d_dd.upload(dd.data());
      d_sd.upload(sd.data());
      gpu.apply_device(d_dd.data(), d_sd.data(), d_y.data());
      d_y.download(y.data());
      const double with_copies = seconds_since(t) * 1e3;
      if (r >= 2) {
        device_ms.push_back(ms);
        copies_ms.push_back(with_copies);
      }
    }
    const auto cell = [](double v, const char* format) {
      static char text[64];
      if (v <= 0.0) return std::string("-");
      std::snprintf(text, sizeof text, format, v);
      return std::string(text);
    };
    std::printf(
        "| %d | %zu | %zu | %.3f | %.3f | %s | %.3f | %.3g | %s | %s | %s | %.3f | %.3f |\n", level,
        mesh.size(), pairs, hash_s, grid_s, cell(cpu_s, "%.3f").c_str(), gpu_s,
        double(pairs) / (gpu_s - grid_s),
        cell(cpu_s > 0.0 ? double(pairs) / (cpu_s - grid_s) : 0.0, "%.3g").c_str(),
        (cpu_s > 0.0 ? cell(std::max(worst, 1e-300), "%.1e") : std::string("-")).c_str(),
        cell(add_to_ms, "%.2f").c_str(), median(device_ms), median(copies_ms));
    std::fflush(stdout);
    std::fprintf(stderr, "L = %d: mesh and discretisation %.3f s\n", level, mesh_s);
  }
}
