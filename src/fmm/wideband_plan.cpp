#include "fmbem/fmm/wideband_plan.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "fmbem/core/error.hpp"

namespace fmbem::fmm {

namespace {

bool holds_targets(const Cell& c) { return c.target_begin < c.target_end; }

// The diagonal form reaches its accuracy only where the transfer vector is at least 3 cell
// widths long: |d| / |t| <= sqrt(3) / 3 (docs/wideband.md measures why).
bool far_enough(const std::array<int, 3>& target, const std::array<int, 3>& source) {
  const int dx = target[0] - source[0], dy = target[1] - source[1], dz = target[2] - source[2];
  return dx * dx + dy * dy + dz * dz >= 9;
}

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

bool needs_high_frequency(double k, double width, int order) {
  return k * std::sqrt(3.0) * width > double(order);
}

WidebandPlan build_wideband_plan(const Octree& tree, int order, double k) {
  if (order < 1) throw Error("wideband plan: the expansion order p must be at least 1");
  if (!(k >= 0.0) || !std::isfinite(k))
    throw Error("wideband plan: the wavenumber must be finite and >= 0");
  if (tree.is_part_view() || tree.holds_cell_subset())
    throw Error("wideband plan: the high-frequency levels need the whole tree, not a part's view");
  WidebandPlan plan;
  // Levels are finer downwards: the high-frequency ones are 2 .. switch_level, contiguous.
  for (int level = 2; level < tree.levels(); ++level)
    if (needs_high_frequency(k, tree.width(level), order)) plan.switch_level = level;
  if (plan.switch_level < 0) return plan;
  const auto& cells = tree.cells();
  // The pairs each level hands to its children, as (target, source) of the level.
  std::vector<std::pair<int, int>> deferred, next_deferred;
  std::vector<std::vector<M2LPair>> by_vector(kWideTransferCount);
  const int last = std::min(plan.switch_level + 1, tree.levels() - 1);
  for (int level = 2; level <= last; ++level) {
    const bool high_frequency = level <= plan.switch_level;
    next_deferred.clear();
    // This level's own pairs (high-frequency levels only; the conversion level's stay in the
    // low-frequency M2L).
    if (high_frequency)
      for (int c : tree.cells_at_level(level)) {
        if (!holds_targets(cells[std::size_t(c)])) continue;
        for (int s : tree.m2l(c)) {
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
        if (!holds_targets(cells[std::size_t(tc)])) continue;
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
      if (!target_leaf && !source_leaf && level < tree.levels() - 1) {
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
