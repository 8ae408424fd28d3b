#include "fmbem/fmm/wideband_plan.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "fmbem/core/error.hpp"
#include "fmbem/fmm/expansions.hpp"
#include "fmbem/fmm/high_frequency.hpp"

namespace fmbem::fmm {

namespace {

// The diagonal form reaches its accuracy only where the transfer vector is at least 3 cell
// widths long: |d| / |t| <= sqrt(3) / 3 (docs/wideband.md measures why).
bool far_enough(const std::array<int, 3>& target, const std::array<int, 3>& source) {
  const int dx = target[0] - source[0], dy = target[1] - source[1], dz = target[2] - source[2];
  return dx * dx + dy * dy + dz * dz >= 9;
}

bool holds_targets(const Cell& c) { return c.target_begin < c.target_end; }

// The target leaves at or below `cell` (itself when a leaf).
void target_leaves_below(const Octree& tree, int cell, std::vector<int>& leaves) {
  const Cell& c = tree.cells()[std::size_t(cell)];
  if (!holds_targets(c)) return;
  if (c.is_leaf()) {
    leaves.push_back(cell);
    return;
  }
  for (int ch = c.first_child; ch < c.first_child + c.num_children; ++ch)
    target_leaves_below(tree, ch, leaves);
}

DiagonalLevelPlan group_by_transfer(int level, double width,
                                    std::vector<std::vector<M2LPair>>& by_vector) {
  DiagonalLevelPlan lv;
  lv.level = level;
  lv.width = width;
  lv.transfer_begin.push_back(0);
  for (int v = 0; v < kWideTransferCount; ++v) {
    std::vector<M2LPair>& group = by_vector[std::size_t(v)];
    if (group.empty()) continue;
    std::sort(group.begin(), group.end(), [](const M2LPair& a, const M2LPair& b) {
      return a.target != b.target ? a.target < b.target : a.source < b.source;
    });
    const int g = int(lv.transfer.size());
    lv.transfer.push_back(v);
    for (M2LPair pair : group) {
      pair.matrix = g;
      lv.pairs.push_back(pair);
    }
    lv.transfer_begin.push_back(lv.pairs.size());
    group.clear();
  }
  return lv;
}

}  // namespace

std::size_t WidebandPlan::diagonal_pair_count() const {
  std::size_t count = 0;
  for (const DiagonalLevelPlan& lv : levels) count += lv.pairs.size();
  return count;
}

bool needs_high_frequency(double k, double width, int order, double eps) {
  const double kd = k * std::sqrt(3.0) * width;
  return double(order) < kd + excess_bandwidth(0.8, kd, eps);
}

double diagonal_far_min_kw(double eps) {
  if (!(eps > 0.0 && eps < 1.0)) throw Error("wideband plan: eps must lie in (0, 1)");
  // log10(1/eps) -> the smallest measured k w reaching eps on the |t| >= 3w geometry.
  constexpr double digits[] = {3, 4, 5, 6, 7, 8, 10};
  constexpr double kw[] = {1.0, 1.5, 3.0, 4.0, 6.0, 8.0, 16.0};
  const double x = std::log10(1.0 / eps);
  double value = kw[0];
  if (x > digits[6]) {
    value = kw[6] * std::pow(2.0, (x - digits[6]) / 2.0);  // doubling every 2 digits beyond
  } else {
    for (int i = 0; i < 6; ++i)
      if (x >= digits[i] && x <= digits[i + 1]) {
        const double t = (x - digits[i]) / (digits[i + 1] - digits[i]);
        value = std::exp((1 - t) * std::log(kw[i]) + t * std::log(kw[i + 1]));
      }
  }
  return 1.1 * value;
}

int wideband_switch_level(const Octree& tree, int order, double k, double eps) {
  if (order < 1) throw Error("wideband plan: the expansion order p must be at least 1");
  if (!(k >= 0.0) || !std::isfinite(k))
    throw Error("wideband plan: the wavenumber must be finite and >= 0");
  const double min_kw = diagonal_far_min_kw(eps);
  // Levels are finer downwards: the high-frequency ones are 2 .. the switch level, contiguous.
  int switch_level = -1;
  for (int level = 2; level < tree.levels(); ++level)
    if (needs_high_frequency(k, tree.width(level), order, eps)) switch_level = level;
  if (switch_level < 0) return -1;
  const int conversion = switch_level + 1;
  if (conversion >= tree.levels() || k * tree.width(conversion) < min_kw) return -1;
  return switch_level;
}

int wideband_order(const Octree& tree, int order, double k, double eps) {
  for (int p = order; p <= max_degree; ++p) {
    int finest = -1;
    for (int level = 2; level < tree.levels(); ++level)
      if (needs_high_frequency(k, tree.width(level), p, eps)) finest = level;
    if (finest < 0 || wideband_switch_level(tree, p, k, eps) >= 0) return p;
  }
  return max_degree;
}

std::vector<int> low_frequency_level_orders(const Octree& tree, int order, int floor, double k,
                                            double eps, int first_level) {
  if (order < 1 || floor < 1)
    throw Error("low-frequency level orders: the orders must be at least 1");
  std::vector<int> orders(std::size_t(std::max(tree.levels(), 0)), order);
  for (int level = std::max(first_level, 0); level < tree.levels(); ++level) {
    int p = std::min(floor, order);
    while (p < order && needs_high_frequency(k, tree.width(level), p, eps)) ++p;
    orders[std::size_t(level)] = p;
  }
  return orders;
}

WidebandPlan build_wideband_plan(const Octree& tree, int order, double k, double eps) {
  // A view of held cells (a distributed rank's shape of its FMMs) serves where it holds every
  // cell of the diagonal levels; it holds no points, so every cell counts as a target there (the
  // FMM keeps the pairs of its own targets' cells).
  const bool held_view = tree.holds_cell_subset();
  if (tree.is_part_view() && !held_view)
    throw Error("wideband plan: the high-frequency levels need the whole tree, not a part's view");
  WidebandPlan plan;
  plan.switch_level = wideband_switch_level(tree, order, k, eps);
  if (plan.switch_level < 0) return plan;
  const int conversion = plan.switch_level + 1;
  const auto& cells = tree.cells();
  const auto target_cell = [&](const Cell& c) { return held_view || holds_targets(c); };
  if (held_view)
    for (int level = 0; level < conversion; ++level)
      for (int c : tree.cells_at_level(level)) {
        const Cell& cell = cells[std::size_t(c)];
        std::size_t below = 0;
        for (int ch = cell.first_child; ch < cell.first_child + cell.num_children; ++ch)
          below += tree.sources_in_whole(ch);
        if (!cell.is_leaf() && below != tree.sources_in_whole(c))
          throw Error(
              "wideband plan: a view of held cells must hold every cell of the diagonal levels "
              "(cell " +
              std::to_string(tree.whole_cell_id(c)) + " lacks children)");
      }
  // The pairs each level hands to its children, as (target, source) of the level.
  std::vector<std::pair<int, int>> deferred, next_deferred;
  std::vector<std::vector<M2LPair>> by_vector(kWideTransferCount);
  for (int level = 2; level <= conversion; ++level) {
    const bool high_frequency = level <= plan.switch_level;
    next_deferred.clear();
    // This level's own pairs (high-frequency levels only; the conversion level's stay in the
    // low-frequency M2L).
    if (high_frequency)
      for (int c : tree.cells_at_level(level)) {
        if (!target_cell(cells[std::size_t(c)])) continue;
        // A split point set's tree holds its own part's lists alone: the others formed here.
        const std::vector<int> formed =
            tree.holds_lists_of(c) ? std::vector<int>() : tree.list_of(Octree::ListKind::m2l, c);
        const std::span<const int> m2l =
            tree.holds_lists_of(c) ? tree.m2l(c) : std::span<const int>(formed);
        for (int s : m2l) {
          if (tree.sources_in_whole(s) == 0) continue;
          if (far_enough(cells[std::size_t(c)].coords, cells[std::size_t(s)].coords))
            by_vector[std::size_t(wide_transfer_index(cells[std::size_t(c)].coords,
                                                      cells[std::size_t(s)].coords))]
                .push_back({c, s, 0});
          else
            next_deferred.emplace_back(c, s);
        }
      }
    // The pairs the parent level deferred: their children's pairs, at least 3 widths apart.
    for (const auto& [t, s] : deferred)
      for (int tc = cells[std::size_t(t)].first_child;
           tc < cells[std::size_t(t)].first_child + cells[std::size_t(t)].num_children; ++tc) {
        if (!target_cell(cells[std::size_t(tc)])) continue;
        for (int sc = cells[std::size_t(s)].first_child;
             sc < cells[std::size_t(s)].first_child + cells[std::size_t(s)].num_children; ++sc)
          if (tree.sources_in_whole(sc) > 0)
            by_vector[std::size_t(wide_transfer_index(cells[std::size_t(tc)].coords,
                                                      cells[std::size_t(sc)].coords))]
                .push_back({tc, sc, 0});
      }
    plan.levels.push_back(group_by_transfer(level, tree.width(level), by_vector));
    // A deferred pair with a leaf on either side has no children's pairs: summed directly.
    deferred.clear();
    for (const auto& [t, s] : next_deferred) {
      const bool target_leaf = cells[std::size_t(t)].is_leaf(),
                 source_leaf = cells[std::size_t(s)].is_leaf();
      if (!target_leaf && !source_leaf) {
        deferred.emplace_back(t, s);
        continue;
      }
      std::vector<int> leaves;
      target_leaves_below(tree, t, leaves);
      for (int leaf : leaves) plan.direct_pairs.emplace_back(leaf, s);
    }
  }
  std::sort(plan.direct_pairs.begin(), plan.direct_pairs.end());
  plan.direct_pairs.erase(std::unique(plan.direct_pairs.begin(), plan.direct_pairs.end()),
                          plan.direct_pairs.end());
  return plan;
}

}  // namespace fmbem::fmm
