// The distributed FMM's partition and locally essential trees on icospheres, P parts
// simulated in one process (CPU only, no MPI): work imbalance, what each part receives per
// MatMult, and the share of the tree it holds.
//
//   partition_volume [-L 7,8] [-P 2,4,8,16,64] [-configs 8:50,16:150]
//
// A configuration p:leaf is an expansion order and the octree's leaf size (the GPU defaults:
// 50 at p = 8, 150 at p = 16). The work model is calibrated in seconds of an H100: each phase's
// measured time at N = 1,310,720 (bench/results/paper_experiment_gpu.md, icosphere:8, same
// leaf) divided by its operation count on the icosphere:8 tree (near pairs, M2L pairs, P2M + M2M
// per source point, L2P + L2L + the rest of the MatMult per element), so a part's work is its
// predicted MatMult time on one H100 when the rates hold at its size.
//
// Per MatMult a part receives p^2 complex coefficients (16 bytes each) per (peer, cell) of its
// receive_multipoles and one complex density per element of its receive_densities. Today's
// scheme (every rank the whole tree) moves, per rank, the whole density (N x 16 bytes, the
// VecScatter to all) and the whole multipole array through an MPI_Allreduce (a ring sends and
// receives 2 (P - 1) / P times the array).

#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <numeric>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench_util.hpp"
#include "fmbem/bem/discretization.hpp"
#include "fmbem/fmm/partition.hpp"
#include "fmbem/mesh/mesh.hpp"

namespace {

using namespace fmbem;
using namespace fmbem::bench;

struct Config {
  int order = 8, max_leaf = 50;
};

// The H100's per-MatMult phase times in seconds at N = 1,310,720 (icosphere:8, k = 8), from
// bench/results/paper_experiment_gpu.md: P2M, M2M, M2L, L2L, L2P, near field, and "other" (the
// correction's SpMV, point strengths, copies), each the -log_view time per MatMult.
struct MeasuredPhases {
  double p2m, m2m, m2l, l2l, l2p, near, other;
};

MeasuredPhases measured_phases(const Config& c) {
  if (c.order == 8 && c.max_leaf == 50)
    return {3.8e-3, 0.7e-3, 5.5e-3, 0.7e-3, 0.5e-3, 11.4e-3, 19.7e-3};
  if (c.order == 16 && c.max_leaf == 150)
    return {12.3e-3, 2.6e-3, 17.1e-3, 2.6e-3, 1.3e-3, 33.8e-3, 19.7e-3};
  throw std::runtime_error("no H100 measurement for p " + std::to_string(c.order) + ", leaf " +
                           std::to_string(c.max_leaf) + " (known: 8:50, 16:150)");
}

struct Problem {
  explicit Problem(int level)
      : mesh(Mesh::from_surface(make_icosphere(level, 1.0), "icosphere")), disc(mesh, 3) {
    source_element.resize(disc.quadrature_points().size());
    for (std::size_t j = 0; j < source_element.size(); ++j)
      source_element[j] = j / disc.points_per_element();
  }
  Mesh mesh;
  Discretization disc;
  std::vector<std::size_t> source_element;
};

fmm::Octree make_tree(const Problem& problem, const Config& c) {
  const auto& targets = problem.disc.collocation_points();
  return fmm::Octree(problem.disc.quadrature_points(), targets, targets,
                     fmm::OctreeOptions{c.max_leaf});
}

// Seconds per operation, from the icosphere:8 tree of the configuration.
fmm::WorkModel calibrate(const Problem& level8, const Config& c) {
  const MeasuredPhases m = measured_phases(c);
  const fmm::Octree tree = make_tree(level8, c);
  const fmm::WorkCounts counts = count_work(tree);
  const double sources = double(tree.source_order().size());
  const double targets = double(tree.target_order().size());
  const fmm::WorkModel model{.near_pair = m.near / double(counts.total_near_pairs()),
                             .m2l_pair = m.m2l / double(counts.total_m2l_pairs()),
                             .source_point = (m.p2m + m.m2m) / sources,
                             .target_point = (m.l2l + m.l2p + m.other) / targets};
  std::printf(
      "# calibration p %d leaf %d on icosphere:8: %zu near pairs, %zu M2L pairs, %zu cells -> "
      "%.3e s/near pair, %.3e s/M2L pair, %.3e s/source, %.3e s/element\n",
      c.order, c.max_leaf, counts.total_near_pairs(), counts.total_m2l_pairs(), tree.cells().size(),
      model.near_pair, model.m2l_pair, model.source_point, model.target_point);
  return model;
}

void run(int level, const Problem& problem, const Config& c, const fmm::WorkModel& model,
         const std::vector<int>& part_counts) {
  auto start = Clock::now();
  const fmm::Octree tree = make_tree(problem, c);
  const fmm::WorkCounts counts = count_work(tree);
  const std::vector<double> work = leaf_work(tree, counts, model);
  const double tree_seconds = seconds_since(start);
  const std::size_t n = problem.disc.size(), cells = tree.cells().size();
  const double coefficient_bytes = 16.0 * c.order * c.order;
  const double whole = std::accumulate(work.begin(), work.end(), 0.0);
  std::printf(
      "# icosphere:%d N %zu p %d leaf %d: %zu cells, %zu leaves, %d levels, modelled H100 "
      "MatMult %.4f s, tree + counts %.2f s\n",
      level, n, c.order, c.max_leaf, cells, tree.leaves().size(), tree.levels(), whole,
      tree_seconds);
  std::printf(
      "| L | N | p | leaf | P | work max/mean | with repeated M2L, max/mean | elements max/mean | "
      "multipoles recv max (peer, cell) | densities recv max | MB recv max | MB recv total | "
      "MB per rank today | multipole peers max | density peers max | cells held max | cells "
      "held mean | modelled H100 s max | LET s, all parts |\n");
  std::string separator = "|";
  for (int column = 0; column < 19; ++column) separator += "---|";
  std::printf("%s\n", separator.c_str());
  for (int parts : part_counts) {
    start = Clock::now();
    const fmm::TreePartition partition(tree, work, parts, problem.source_element);
    std::size_t max_cells = 0, max_densities = 0, max_elements = 0;
    double max_bytes = 0.0, total_bytes = 0.0, max_actual = 0.0, max_held = 0.0, sum_held = 0.0;
    int max_multipole_peers = 0, max_density_peers = 0;
    // Per level, the largest count of (peer, cell) multipoles a part receives.
    std::vector<std::size_t> max_by_level(tree.levels(), 0);
    for (int r = 0; r < parts; ++r) {
      const fmm::LocallyEssentialTree let = partition.locally_essential_tree(r);
      const double bytes = coefficient_bytes * double(let.received_multipoles()) +
                           16.0 * double(let.received_densities());
      max_bytes = std::max(max_bytes, bytes);
      total_bytes += bytes;
      max_cells = std::max(max_cells, let.received_multipoles());
      max_densities = std::max(max_densities, let.received_densities());
      int multipole_peers = 0, density_peers = 0;
      std::vector<std::size_t> by_level(tree.levels(), 0);
      for (int q = 0; q < parts; ++q) {
        multipole_peers += !let.receive_multipoles[q].empty();
        density_peers += !let.receive_densities[q].empty();
        for (int c : let.receive_multipoles[q]) ++by_level[tree.cells()[c].level];
      }
      for (int l = 0; l < tree.levels(); ++l)
        max_by_level[l] = std::max(max_by_level[l], by_level[l]);
      max_multipole_peers = std::max(max_multipole_peers, multipole_peers);
      max_density_peers = std::max(max_density_peers, density_peers);
      const double held = double(let.own_cells.size() + let.ghost_cells.size()) / double(cells);
      max_held = std::max(max_held, held);
      sum_held += held;
      // The part's time with the M2L of shared cells repeated: its own near and M2L pairs, the
      // points of its leaves.
      std::size_t sources = 0, elements = 0;
      for (int own_leaf : partition.leaves_of(r)) {
        const fmm::Cell& leaf = tree.cells()[own_leaf];
        sources += leaf.source_end - leaf.source_begin;
        elements += leaf.target_end - leaf.target_begin;
      }
      max_elements = std::max(max_elements, elements);
      const double actual =
          model.near_pair * double(let.near_pairs) + model.m2l_pair * double(let.m2l_pairs) +
          model.source_point * double(sources) + model.target_point * double(elements);
      max_actual = std::max(max_actual, actual);
    }
    const double let_seconds = seconds_since(start);
    const double mean = whole / parts;
    const double today =
        parts > 1 ? 16.0 * double(n) + 2.0 * (parts - 1) / parts * coefficient_bytes * double(cells)
                  : 0.0;
    std::printf(
        "| %d | %zu | %d | %d | %d | %.4f | %.4f | %.4f | %zu | %zu | %.2f | %.1f | %.1f | %d | "
        "%d | %.3f | %.3f | %.5f | %.2f |\n",
        level, n, c.order, c.max_leaf, parts, partition.max_work() / mean, max_actual / mean,
        double(max_elements) / (double(n) / parts), max_cells, max_densities, max_bytes / 1e6,
        total_bytes / 1e6, today / 1e6, max_multipole_peers, max_density_peers, max_held,
        sum_held / parts, max_actual, let_seconds);
    std::printf("#   P %d: received multipoles by level, max over parts:", parts);
    for (int l = 2; l < tree.levels(); ++l) std::printf(" L%d %zu", l, max_by_level[l]);
    std::printf("\n");
    std::fflush(stdout);
  }
}

}  // namespace

int main(int argc, char** argv) {
  try {
    std::vector<int> levels = {7, 8}, part_counts = {2, 4, 8, 16, 64};
    std::vector<Config> configs = {{8, 50}, {16, 150}};
    for (Arguments args(argc, argv); args.next();) {
      const std::string& key = args.key();
      if (key == "-L") {
        levels = int_list(args.value());
      } else if (key == "-P") {
        part_counts = int_list(args.value());
      } else if (key == "-configs") {
        configs.clear();
        std::stringstream in(args.value());
        for (std::string item; std::getline(in, item, ',');) {
          const auto colon = item.find(':');
          if (colon == std::string::npos) throw std::runtime_error("-configs wants p:leaf,...");
          configs.push_back({std::stoi(item.substr(0, colon)), std::stoi(item.substr(colon + 1))});
        }
      } else {
        throw std::runtime_error("unknown argument " + key);
      }
    }
    for (const Config& c : configs) measured_phases(c);  // an unknown one fails before any work
    // The calibration needs icosphere:8; built once and kept when it is also measured.
    std::map<int, std::unique_ptr<Problem>> problems;
    const auto problem = [&](int level) -> const Problem& {
      auto& p = problems[level];
      if (!p) p = std::make_unique<Problem>(level);
      return *p;
    };
    for (const Config& c : configs) {
      const fmm::WorkModel model = calibrate(problem(8), c);
      for (int level : levels) run(level, problem(level), c, model, part_counts);
    }
    std::printf("# peak resident %.2f GiB\n", peak_rss_gb());
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "partition_volume: error: %s\n", e.what());
    return 1;
  }
}
