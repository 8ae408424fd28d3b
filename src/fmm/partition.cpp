#include "fmbem/fmm/partition.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iterator>
#include <limits>
#include <numeric>
#include <string>
#include <unordered_map>

#include "fmbem/core/error.hpp"

namespace fmbem::fmm {
namespace {

std::size_t sources_of(const Cell& c) { return c.source_end - c.source_begin; }
std::size_t targets_of(const Cell& c) { return c.target_end - c.target_begin; }

template <class T>
std::size_t total_size(const std::vector<std::vector<T>>& lists) {
  std::size_t n = 0;
  for (const auto& l : lists) n += l.size();
  return n;
}

// The lists one after the other (peers ascending): the packed order of the multipole exchange.
std::vector<int> concatenated(const std::vector<std::vector<int>>& lists) {
  std::vector<int> cells;
  for (const std::vector<int>& list : lists) cells.insert(cells.end(), list.begin(), list.end());
  return cells;
}

template <class T>
void sort_each(std::vector<std::vector<T>>& lists) {
  for (auto& l : lists) std::sort(l.begin(), l.end());
}

// Cutting work[begin, n) into parts with no range above `bottleneck`: prefix[j] - prefix[i] is
// the work of [i, j). The same subtraction everywhere, so that the bottleneck found (one such
// difference) is feasible by the test that found it.
class RangeSums {
 public:
  explicit RangeSums(std::span<const double> work) : prefix_(work.size() + 1, 0.0) {
    for (std::size_t i = 0; i < work.size(); ++i) prefix_[i + 1] = prefix_[i] + work[i];
  }
  std::size_t size() const { return prefix_.size() - 1; }
  double sum(std::size_t begin, std::size_t end) const { return prefix_[end] - prefix_[begin]; }
  double total() const { return prefix_.back(); }
  // The largest end with sum(begin, end) <= bottleneck (begin itself when work[begin] is above).
  std::size_t reach(std::size_t begin, double bottleneck) const {
    const auto it = std::partition_point(prefix_.begin() + begin + 1, prefix_.end(), [&](double p) {
      return p - prefix_[begin] <= bottleneck;
    });
    return std::size_t(it - prefix_.begin()) - 1;
  }
  // The smallest begin with sum(begin, end) <= bottleneck.
  std::size_t reach_back(std::size_t end, double bottleneck) const {
    const auto it = std::partition_point(prefix_.begin(), prefix_.begin() + end,
                                         [&](double p) { return prefix_[end] - p > bottleneck; });
    return std::size_t(it - prefix_.begin());
  }
  // Whether [begin, n) fits in `parts` ranges of at most bottleneck each (greedy: each range
  // as long as it may be, which is optimal for a contiguous cutting).
  bool fits(std::size_t begin, int parts, double bottleneck) const {
    for (int q = 0; q < parts && begin < size(); ++q) begin = reach(begin, bottleneck);
    return begin == size();
  }
  // The index whose prefix is nearest to value, within [low, high].
  std::size_t nearest(double value, std::size_t low, std::size_t high) const {
    std::size_t at =
        std::size_t(std::lower_bound(prefix_.begin(), prefix_.end(), value) - prefix_.begin());
    if (at > 0 && (at > size() || value - prefix_[at - 1] <= prefix_[at] - value)) --at;
    return std::clamp(at, low, high);
  }

 private:
  std::vector<double> prefix_;
};

// The smallest bottleneck over contiguous cuttings into `parts` ranges (Nicol 1994): the first
// range [begin, e) with e the smallest end whose sum is a feasible bottleneck gives one
// candidate, sum(begin, e); any better cutting ends its first range at e - 1 (sum(begin, e - 1)
// is infeasible, so the optimum exceeds it and the greedy range under the optimum reaches
// e - 1), and the rest is the same problem on [e - 1, n) with one part fewer.
double min_max_bottleneck(const RangeSums& sums, int parts) {
  const std::size_t n = sums.size();
  double best = std::numeric_limits<double>::infinity();
  std::size_t begin = 0;
  for (int left = parts; left > 1 && begin < n; --left) {
    std::size_t low = begin, high = n;  // sum(begin, n) is always feasible
    while (low < high) {
      const std::size_t mid = low + (high - low) / 2;
      if (sums.fits(begin, left, sums.sum(begin, mid)))
        high = mid;
      else
        low = mid + 1;
    }
    best = std::min(best, sums.sum(begin, low));
    if (low == begin) return best;  // a zero bottleneck: nothing is better
    begin = low - 1;
  }
  return std::min(best, sums.sum(begin, n));
}

// M2L pairs per target of each cell, summed down the tree (parents come before children): each
// leaf's share of the pairs of its ancestors-or-self.
void add_m2l_shares(const std::vector<Cell>& cells, WorkCounts& counts) {
  std::vector<double> per_target(cells.size(), 0.0);
  for (std::size_t c = 0; c < cells.size(); ++c) {
    const std::size_t targets = targets_of(cells[c]);
    if (targets == 0) continue;
    per_target[c] = (c > 0 ? per_target[std::size_t(cells[c].parent)] : 0.0) +
                    double(counts.m2l_pairs[c]) / double(targets);
    if (cells[c].is_leaf()) counts.m2l_share[c] = per_target[c] * double(targets);
  }
}

}  // namespace

std::size_t WorkCounts::total_near_pairs() const {
  return std::accumulate(near_pairs.begin(), near_pairs.end(), std::size_t(0));
}

std::size_t WorkCounts::total_m2l_pairs() const {
  return std::accumulate(m2l_pairs.begin(), m2l_pairs.end(), std::size_t(0));
}

PartCells cells_read_by_part(const Octree& tree, const LocallyEssentialTree& let,
                             std::span<const int> target_leaves) {
  const auto& cells = tree.cells();
  const auto in_tree = [&](int whole_cell) {
    const int cell = tree.cell_of_whole_id(whole_cell);
    if (cell < 0) throw Error("FMM: the locally essential tree is not of this FMM's tree");
    return std::size_t(cell);
  };
  PartCells out;
  std::vector<char>& read = out.read;
  read.assign(cells.size(), 0);
  for (int c : let.own_cells)
    if (cells[in_tree(c)].is_leaf()) read[in_tree(c)] = 1;
  for (int leaf : target_leaves) {
    if (leaf < 0 || std::size_t(leaf) >= cells.size() || !cells[std::size_t(leaf)].is_leaf())
      throw Error("FMM: a target lies outside the given tree");
    tree.for_each_near_source_cell(leaf, [&read](int c) { read[std::size_t(c)] = 1; });
  }
  for (std::size_t c = 1; c < cells.size(); ++c) read[c] |= read[std::size_t(cells[c].parent)];
  std::vector<char> kept(read.begin(), read.end());
  kept[0] = 1;  // the root, also of a part without cells
  for (const std::vector<int>* list : {&let.own_cells, &let.ghost_cells})
    for (int c : *list) kept[in_tree(c)] = 1;
  std::vector<char> holds_targets(cells.size(), 0);
  for (int leaf : target_leaves)
    for (int a = leaf; a >= 0 && !holds_targets[std::size_t(a)]; a = cells[a].parent)
      holds_targets[std::size_t(a)] = 1;
  for (std::size_t c = 0; c < cells.size(); ++c)
    if (holds_targets[c])
      for (int s : tree.m2l(int(c))) kept[std::size_t(s)] = 1;
  for (std::size_t c = cells.size(); c-- > 1;)
    if (kept[c]) kept[std::size_t(cells[c].parent)] = 1;
  for (std::size_t c = 0; c < cells.size(); ++c)
    if (kept[c]) out.held.push_back(int(c));
  return out;
}

WorkCounts count_work(const Octree& tree) {
  // A part's view counts its own points alone: the work is the whole problem's.
  if (tree.is_part_view()) throw Error("partition: the work is counted on the whole tree");
  const auto& cells = tree.cells();
  const int cell_count = int(cells.size());
  WorkCounts counts;
  counts.near_pairs.assign(cell_count, 0);
  counts.m2l_pairs.assign(cell_count, 0);
  counts.m2l_share.assign(cell_count, 0.0);
#pragma omp parallel for schedule(dynamic, 64)
  for (int c = 0; c < cell_count; ++c) {
    const std::size_t targets = targets_of(cells[c]);
    if (targets == 0) continue;
    for (int s : tree.m2l(c)) counts.m2l_pairs[c] += sources_of(cells[s]) > 0;
    if (!cells[c].is_leaf()) continue;
    std::size_t near_sources = 0;
    tree.for_each_near_source_cell(c, [&](int s) { near_sources += sources_of(cells[s]); });
    counts.near_pairs[c] = targets * near_sources;
  }
  add_m2l_shares(cells, counts);
  return counts;
}

WorkCounts count_work(const Octree& tree, const Octree::PartReduction& reduction, int part,
                      int parts) {
  if (tree.is_part_view()) throw Error("partition: the work is counted on the whole tree");
  if (parts < 1 || part < 0 || part >= parts)
    throw Error("partition: part " + std::to_string(part) + " of " + std::to_string(parts));
  const auto& cells = tree.cells();
  const std::size_t cell_count = cells.size();
  // Per cell: its M2L pairs, the sources of its near and W lists, the sources of its X list.
  std::vector<std::size_t> sums(3 * cell_count, 0);
  const std::int64_t begin = std::int64_t(cell_count * std::size_t(part) / std::size_t(parts));
  const std::int64_t end = std::int64_t(cell_count * std::size_t(part + 1) / std::size_t(parts));
  // Only cells holding targets count, and only they carry a leaf's near sources (its ancestors'
  // X lists).
  std::vector<int> counted;
  for (std::int64_t c = begin; c < end; ++c)
    if (targets_of(cells[std::size_t(c)]) > 0) counted.push_back(int(c));
  tree.visit_lists_of(counted, [&](int c, const Octree::CellListSet& lists) {
    const std::size_t row = 3 * std::size_t(c);
    for (int s : lists.m2l) sums[row] += sources_of(cells[s]) > 0;
    if (cells[c].is_leaf())
      for (const std::vector<int>* list : {&lists.near, &lists.w})
        for (int s : *list) sums[row + 1] += sources_of(cells[s]);
    for (int s : lists.x) sums[row + 2] += sources_of(cells[s]);
  });
  reduction.sum(sums);
  WorkCounts counts;
  counts.near_pairs.assign(cell_count, 0);
  counts.m2l_pairs.assign(cell_count, 0);
  counts.m2l_share.assign(cell_count, 0.0);
  // X sources of every ancestor-or-self, parents first (for_each_near_source_cell's last term).
  std::vector<std::size_t> x_below(cell_count, 0);
  for (std::size_t c = 0; c < cell_count; ++c) {
    counts.m2l_pairs[c] = sums[3 * c];
    x_below[c] = (c > 0 ? x_below[std::size_t(cells[c].parent)] : 0) + sums[3 * c + 2];
    if (cells[c].is_leaf())
      counts.near_pairs[c] = targets_of(cells[c]) * (sums[3 * c + 1] + x_below[c]);
  }
  add_m2l_shares(cells, counts);
  return counts;
}

std::vector<double> leaf_work(const Octree& tree, const WorkCounts& counts,
                              const WorkModel& model) {
  const auto& cells = tree.cells();
  std::vector<double> work(cells.size(), 0.0);
  for (std::size_t c = 0; c < cells.size(); ++c) {
    if (!cells[c].is_leaf()) continue;
    work[c] = model.near_pair * double(counts.near_pairs[c]) +
              model.m2l_pair * counts.m2l_share[c] +
              model.source_point * double(sources_of(cells[c])) +
              model.target_point * double(targets_of(cells[c]));
  }
  return work;
}

std::vector<int> depth_first_leaves(const Octree& tree) {
  const auto& cells = tree.cells();
  std::vector<int> leaves, pending = {0};
  leaves.reserve(tree.leaves().size());
  while (!pending.empty()) {
    const int c = pending.back();
    pending.pop_back();
    if (cells[c].is_leaf()) {
      leaves.push_back(c);
      continue;
    }
    // Last octant pushed first, so the first is visited first.
    for (int k = cells[c].num_children - 1; k >= 0; --k)
      pending.push_back(cells[c].first_child + k);
  }
  return leaves;
}

std::vector<std::size_t> min_max_cuts(std::span<const double> work, int parts) {
  if (parts < 1) throw Error("partition: the number of parts must be at least 1");
  for (double w : work)
    if (!(w >= 0.0) || !std::isfinite(w))
      throw Error("partition: the work of a leaf must be finite and non-negative");
  const RangeSums sums(work);
  const std::size_t n = sums.size();
  const double bottleneck = min_max_bottleneck(sums, parts);
  // earliest[q]: the first position from which the remaining parts q .. parts - 1 can still
  // hold the rest under the bottleneck.
  std::vector<std::size_t> earliest(parts + 1, n);
  for (int q = parts - 1; q >= 1; --q) earliest[q] = sums.reach_back(earliest[q + 1], bottleneck);
  std::vector<std::size_t> cuts(parts + 1, 0);
  cuts[parts] = n;
  for (int q = 1; q < parts; ++q) {
    // Any cut in [low, high] keeps part q - 1 under the bottleneck and the rest feasible.
    const std::size_t low = std::max(cuts[q - 1], earliest[q]);
    const std::size_t high = sums.reach(cuts[q - 1], bottleneck);
    cuts[q] = sums.nearest(sums.total() * q / parts, low, high);
  }
  return cuts;
}

std::vector<int> LocallyEssentialTree::expansion_cells() const {
  std::vector<int> cells;
  cells.reserve(own_cells.size() + ghost_cells.size());
  std::merge(own_cells.begin(), own_cells.end(), ghost_cells.begin(), ghost_cells.end(),
             std::back_inserter(cells));
  return cells;
}

std::vector<int> LocallyEssentialTree::packed_send_cells() const {
  return concatenated(send_multipoles);
}
std::vector<int> LocallyEssentialTree::packed_receive_cells() const {
  return concatenated(receive_multipoles);
}

std::size_t LocallyEssentialTree::received_multipoles() const {
  return total_size(receive_multipoles);
}
std::size_t LocallyEssentialTree::received_densities() const {
  return total_size(receive_densities);
}
std::size_t LocallyEssentialTree::sent_multipoles() const { return total_size(send_multipoles); }
std::size_t LocallyEssentialTree::sent_densities() const { return total_size(send_densities); }

namespace {

// TreePartition::PartsBelow of the leaves' parts, formed bottom-up (children have larger ids
// than their parent).
TreePartition::PartsBelow parts_below(const std::vector<Cell>& cells,
                                      const std::vector<int>& leaf_part, bool with_targets) {
  std::vector<std::vector<int>> below(cells.size());
  for (std::size_t c = cells.size(); c-- > 0;) {
    std::vector<int>& parts = below[c];
    if (cells[c].is_leaf()) {
      if ((with_targets ? targets_of(cells[c]) : sources_of(cells[c])) > 0)
        parts.push_back(leaf_part[c]);
    } else {
      std::sort(parts.begin(), parts.end());
      parts.erase(std::unique(parts.begin(), parts.end()), parts.end());
    }
    if (c > 0) {
      std::vector<int>& parent = below[std::size_t(cells[c].parent)];
      parent.insert(parent.end(), parts.begin(), parts.end());
    }
  }
  TreePartition::PartsBelow out;
  out.offsets.assign(cells.size() + 1, 0);
  for (std::size_t c = 0; c < cells.size(); ++c)
    out.offsets[c + 1] = out.offsets[c] + below[c].size();
  out.parts.reserve(out.offsets.back());
  for (std::vector<int>& parts : below) {
    out.parts.insert(out.parts.end(), parts.begin(), parts.end());
    std::vector<int>().swap(parts);
  }
  return out;
}

}  // namespace

std::vector<int> mirror_leaders(const Octree& tree,
                                const std::function<Vec3(const Vec3&)>& real_position) {
  const auto& cells = tree.cells();
  std::vector<int> leaders(cells.size(), -1);
  std::vector<int> followers;
  std::vector<Vec3> mirrored;
  for (int leaf : tree.leaves())
    if (targets_of(cells[std::size_t(leaf)]) == 0) {
      followers.push_back(leaf);
      mirrored.push_back(real_position(cells[std::size_t(leaf)].center));
    }
  // A real leaf's centre is its own real point: only a mirror image's leaf finds another. (The
  // real leaf found may hold sources alone, the quadrature points of elements in the leaves
  // beside it: it is then cut on its own, and its mirror images follow it.)
  const std::vector<int> found = tree.leaf_of(mirrored);
  for (std::size_t i = 0; i < followers.size(); ++i)
    if (found[i] >= 0 && found[i] != followers[i]) leaders[std::size_t(followers[i])] = found[i];
  // Where rounding left a leader a follower itself, its followers are cut on their own.
  for (std::size_t c = 0; c < leaders.size(); ++c)
    if (leaders[c] >= 0 && leaders[std::size_t(leaders[c])] != -1) leaders[c] = -1;
  return leaders;
}

TreePartition::TreePartition(const Octree& tree, std::span<const double> leaf_work, int parts,
                             std::span<const int> leaders)
    : tree_(tree), parts_(parts) {
  const auto& cells = tree.cells();
  if (parts < 1) throw Error("partition: the number of parts must be at least 1");
  if (tree.is_part_view()) throw Error("partition: a part's view of a tree cannot be cut");
  if (leaf_work.size() != cells.size())
    throw Error("partition: one work value per cell is needed (" +
                std::to_string(leaf_work.size()) + " for " + std::to_string(cells.size()) +
                " cells)");
  if (!leaders.empty() && leaders.size() != cells.size())
    throw Error("partition: one leader per cell is needed (" + std::to_string(leaders.size()) +
                " for " + std::to_string(cells.size()) + " cells)");
  const auto leader_of = [&](std::size_t c) { return leaders.empty() ? -1 : leaders[c]; };
  for (std::size_t c = 0; c < leaders.size(); ++c) {
    const int l = leaders[c];
    if (l == -1) continue;
    if (l < 0 || std::size_t(l) >= cells.size() || std::size_t(l) == c || !cells[c].is_leaf() ||
        !cells[std::size_t(l)].is_leaf() || leaders[std::size_t(l)] != -1)
      throw Error("partition: cell " + std::to_string(c) + "'s leader " + std::to_string(l) +
                  " is not a leaf of its own that a leaf can follow");
  }
  leaves_ = depth_first_leaves(tree);
  // The leaders in depth-first order, each with its followers' work, are cut.
  std::vector<int> led;
  std::vector<std::size_t> position(leaders.empty() ? 0 : cells.size(), 0);
  for (int leaf : leaves_)
    if (leader_of(std::size_t(leaf)) == -1) {
      if (!leaders.empty()) position[std::size_t(leaf)] = led.size();
      led.push_back(leaf);
    }
  std::vector<double> work(led.size());
  for (std::size_t l = 0; l < led.size(); ++l) work[l] = leaf_work[std::size_t(led[l])];
  for (int leaf : leaves_)
    if (const int l = leader_of(std::size_t(leaf)); l != -1)
      work[position[std::size_t(l)]] += leaf_work[std::size_t(leaf)];
  const std::vector<std::size_t> cuts = min_max_cuts(work, parts);
  part_work_.assign(parts, 0.0);
  leaf_part_.assign(cells.size(), -1);
  for (int q = 0; q < parts; ++q)
    for (std::size_t l = cuts[q]; l < cuts[q + 1]; ++l) {
      part_work_[q] += work[l];
      leaf_part_[std::size_t(led[l])] = q;
    }
  for (int leaf : leaves_)
    if (const int l = leader_of(std::size_t(leaf)); l != -1)
      leaf_part_[std::size_t(leaf)] = leaf_part_[std::size_t(l)];
  part_leaf_offsets_.assign(std::size_t(parts) + 1, 0);
  for (int leaf : leaves_) ++part_leaf_offsets_[std::size_t(leaf_part_[std::size_t(leaf)]) + 1];
  std::partial_sum(part_leaf_offsets_.begin(), part_leaf_offsets_.end(),
                   part_leaf_offsets_.begin());
  part_leaves_.resize(leaves_.size());
  std::vector<std::size_t> next(part_leaf_offsets_.begin(), part_leaf_offsets_.end() - 1);
  for (int leaf : leaves_) part_leaves_[next[std::size_t(leaf_part_[std::size_t(leaf)])]++] = leaf;

  target_parts_below_ = parts_below(cells, leaf_part_, true);
  source_parts_below_ = parts_below(cells, leaf_part_, false);
}

TreePartition::TreePartition(const Octree& tree, std::span<const double> leaf_work, int parts,
                             std::span<const std::size_t> source_element,
                             std::span<const int> leaders)
    : TreePartition(tree, leaf_work, parts, leaders) {
  const auto& cells = tree.cells();
  if (!tree.holds_point_orders() || tree.is_part_view())
    throw Error(
        "partition: the elements' parts need the tree's point orders (a tree of one "
        "whole point set)");
  const std::size_t source_count = tree.source_order().size();
  const std::size_t element_count = tree.target_order().size();
  if (source_element.size() != source_count)
    throw Error("partition: one element per source is needed (" +
                std::to_string(source_element.size()) + " for " + std::to_string(source_count) +
                " sources)");
  for (std::size_t e : source_element)
    if (e >= element_count)
      throw Error("partition: source element " + std::to_string(e) + " out of range (" +
                  std::to_string(element_count) + " elements)");
  knows_elements_ = true;
  source_element_.assign(source_element.begin(), source_element.end());
  element_part_.assign(element_count, -1);
  for (int leaf : leaves_) {
    const Cell& cell = cells[std::size_t(leaf)];
    for (std::size_t i = cell.target_begin; i < cell.target_end; ++i)
      element_part_[tree.target_order()[i]] = leaf_part_[std::size_t(leaf)];
  }

  element_source_offsets_.assign(element_count + 1, 0);
  for (std::size_t e : source_element_) ++element_source_offsets_[e + 1];
  std::partial_sum(element_source_offsets_.begin(), element_source_offsets_.end(),
                   element_source_offsets_.begin());
  element_sources_.resize(source_count);
  std::vector<std::size_t> next(element_source_offsets_.begin(), element_source_offsets_.end() - 1);
  for (std::size_t j = 0; j < source_count; ++j) element_sources_[next[source_element_[j]]++] = j;
  source_leaf_.assign(source_count, -1);
  for (int leaf : leaves_)
    for (std::size_t i = cells[leaf].source_begin; i < cells[leaf].source_end; ++i)
      source_leaf_[tree.source_order()[i]] = leaf;
}

double TreePartition::max_work() const {
  return *std::max_element(part_work_.begin(), part_work_.end());
}

double TreePartition::total_work() const {
  return std::accumulate(part_work_.begin(), part_work_.end(), 0.0);
}

std::vector<std::size_t> TreePartition::elements(int part) const {
  if (!knows_elements()) throw Error("partition: the elements' parts were not given");
  std::vector<std::size_t> out;
  const auto& cells = tree_.cells();
  for (int leaf : leaves_of(part))
    for (std::size_t i = cells[leaf].target_begin; i < cells[leaf].target_end; ++i)
      out.push_back(tree_.target_order()[i]);
  std::sort(out.begin(), out.end());
  return out;
}

template <class Visit>
void TreePartition::for_parts_below(int cell, bool with_targets, Visit&& visit) const {
  const PartsBelow& below = with_targets ? target_parts_below_ : source_parts_below_;
  for (std::size_t i = below.offsets[std::size_t(cell)]; i < below.offsets[std::size_t(cell) + 1];
       ++i)
    visit(below.parts[i]);
}

std::vector<int> TreePartition::readers_of_leaf(int leaf) const {
  return readers_from(leaf, tree_.near_source_lists_of(leaf));
}

std::vector<std::vector<int>> TreePartition::readers_of_leaves(std::span<const int> leaves) const {
  std::vector<std::vector<int>> readers(leaves.size());
  // Each leaf's row by its place in `leaves` (repeats share the first's).
  std::vector<std::pair<int, std::size_t>> place(leaves.size());
  for (std::size_t i = 0; i < leaves.size(); ++i) place[i] = {leaves[i], i};
  std::sort(place.begin(), place.end());
  std::vector<int> distinct;
  for (std::size_t i = 0; i < place.size(); ++i)
    if (i == 0 || place[i].first != place[i - 1].first) distinct.push_back(place[i].first);
  std::vector<std::vector<int>> of_distinct(distinct.size());
  tree_.visit_near_source_lists_of(distinct, [&](int leaf, const Octree::NearSourceLists& lists) {
    const std::size_t k =
        std::size_t(std::lower_bound(distinct.begin(), distinct.end(), leaf) - distinct.begin());
    of_distinct[k] = readers_from(leaf, lists);
  });
  for (std::size_t i = 0, k = 0; i < place.size(); ++i) {
    if (i > 0 && place[i].first != place[i - 1].first) ++k;
    readers[place[i].second] = of_distinct[k];
  }
  return readers;
}

std::vector<int> TreePartition::readers_from(int leaf, const Octree::NearSourceLists& lists) const {
  const auto& cells = tree_.cells();
  std::vector<int> readers;
  const auto add_owner = [&](int t) {
    if (targets_of(cells[t]) > 0) readers.push_back(leaf_part_[t]);
  };
  if (cells[leaf].level >= 2) readers.push_back(leaf_part_[leaf]);  // P2M (none above level 2)
  for (int t : lists.near) add_owner(t);                            // near is symmetric
  for (int t : lists.x) add_owner(t);  // leaf below an ancestor-or-self in w_list(t)
  for (int a : lists.w)                // leaf in x_list(a): the targets below a
    for_parts_below(a, true, [&](int q) { readers.push_back(q); });
  std::sort(readers.begin(), readers.end());
  readers.erase(std::unique(readers.begin(), readers.end()), readers.end());
  return readers;
}

std::vector<int> TreePartition::own_cells(int part) const {
  if (part < 0 || part >= parts_)
    throw Error("partition: part " + std::to_string(part) + " out of range (" +
                std::to_string(parts_) + " parts)");
  const auto& cells = tree_.cells();
  std::vector<char> own(cells.size(), 0);
  std::vector<int> out;
  for (int leaf : leaves_of(part))
    for (int a = leaf; a >= 0 && !own[a]; a = cells[a].parent) {
      own[a] = 1;
      out.push_back(a);
    }
  std::sort(out.begin(), out.end());
  return out;
}

LocallyEssentialTree TreePartition::locally_essential_tree(int part) const {
  if (part < 0 || part >= parts_)
    throw Error("partition: part " + std::to_string(part) + " out of range (" +
                std::to_string(parts_) + " parts)");
  const auto& cells = tree_.cells();
  const auto source_order = tree_.source_order();
  const auto target_order = tree_.target_order();
  LocallyEssentialTree let;
  let.part = part;
  let.receive_multipoles.resize(parts_);
  let.send_multipoles.resize(parts_);
  let.receive_densities.resize(parts_);
  let.send_densities.resize(parts_);
  const std::span<const int> part_leaves = leaves_of(part);

  // Walks from a leaf to the root through the cells not yet marked, marking them.
  const auto climb = [&](int leaf, std::vector<char>& marked, auto&& visit) {
    for (int a = leaf; a >= 0 && !marked[a]; a = cells[a].parent) {
      marked[a] = 1;
      visit(a);
    }
  };

  // What this part reads: multipoles of the M2L sources of every cell holding its targets, and
  // the source points of its near lists and of its own leaves (P2M).
  std::vector<char> own(cells.size(), 0), target_cell(cells.size(), 0), read(cells.size(), 0);
  std::vector<int> m2l_sources, source_cells;
  for (int leaf : part_leaves) {
    climb(leaf, own, [&](int a) { let.own_cells.push_back(a); });
    if (cells[leaf].level >= 2 && sources_of(cells[leaf]) > 0) source_cells.push_back(leaf);
    if (targets_of(cells[leaf]) == 0) continue;
    climb(leaf, target_cell, [&](int a) {
      for (int s : tree_.m2l(a)) {
        if (sources_of(cells[s]) == 0) continue;
        ++let.m2l_pairs;
        if (!read[s]) m2l_sources.push_back(s);
        read[s] = 1;
      }
    });
    std::size_t near_sources = 0;
    const auto near = [&](int s) {
      if (sources_of(cells[s]) == 0) return;
      near_sources += sources_of(cells[s]);
      source_cells.push_back(s);
    };
    tree_.for_each_near_source_cell(leaf, near);
    let.near_pairs += targets_of(cells[leaf]) * near_sources;
  }
  for (int s : m2l_sources)
    for_parts_below(s, false, [&](int q) {
      if (q != part) let.receive_multipoles[q].push_back(s);
    });
  std::sort(source_cells.begin(), source_cells.end());
  source_cells.erase(std::unique(source_cells.begin(), source_cells.end()), source_cells.end());
  std::vector<char> received(element_part_.size(), 0);
  if (knows_elements_)
    for (int c : source_cells)
      for (std::size_t i = cells[c].source_begin; i < cells[c].source_end; ++i) {
        const std::size_t e = source_element_[source_order[i]];
        const int q = element_part_[e];
        if (q == part || received[e]) continue;
        received[e] = 1;
        let.receive_densities[q].push_back(e);
      }
  for (int c : m2l_sources)
    if (!own[c]) let.ghost_cells.push_back(c);
  for (int c : source_cells)
    if (!own[c]) let.ghost_cells.push_back(c);

  // What the others read from this part, found from the same tree by the lists read backwards
  // (m2l is symmetric; near is symmetric among leaves; w_list and x_list are each other's
  // inverse), so that no part has to be told what to send.
  std::vector<char> contributed(cells.size(), 0);
  std::vector<int> last_cell(parts_, -1);
  for (int leaf : part_leaves) {
    if (sources_of(cells[leaf]) == 0) continue;
    climb(leaf, contributed, [&](int a) {
      for (int t : tree_.m2l(a)) {
        if (targets_of(cells[t]) == 0) continue;
        for_parts_below(t, true, [&](int q) {
          if (q == part || last_cell[q] == a) return;
          last_cell[q] = a;
          let.send_multipoles[q].push_back(a);
        });
      }
    });
  }
  std::unordered_map<int, std::vector<int>> readers;
  std::vector<std::size_t> last_element(parts_, std::numeric_limits<std::size_t>::max());
  for (int own_leaf : knows_elements_ ? part_leaves : std::span<const int>())
    for (std::size_t i = cells[own_leaf].target_begin; i < cells[own_leaf].target_end; ++i) {
      const std::size_t e = target_order[i];
      for (std::size_t k = element_source_offsets_[e]; k < element_source_offsets_[e + 1]; ++k) {
        const int leaf = source_leaf_[element_sources_[k]];
        auto found = readers.find(leaf);
        if (found == readers.end()) found = readers.emplace(leaf, readers_of_leaf(leaf)).first;
        for (int q : found->second) {
          if (q == part || last_element[q] == e) continue;
          last_element[q] = e;
          let.send_densities[q].push_back(e);
        }
      }
    }

  std::sort(let.own_cells.begin(), let.own_cells.end());
  std::sort(let.ghost_cells.begin(), let.ghost_cells.end());
  let.ghost_cells.erase(std::unique(let.ghost_cells.begin(), let.ghost_cells.end()),
                        let.ghost_cells.end());
  sort_each(let.receive_multipoles);
  sort_each(let.send_multipoles);
  sort_each(let.receive_densities);
  sort_each(let.send_densities);
  return let;
}

}  // namespace fmbem::fmm
