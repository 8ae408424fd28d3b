#include "fmbem/fmm/octree.hpp"

#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>
#include <set>
#include <span>
#include <utility>
#include <vector>

#include "fmbem/core/error.hpp"

namespace fmbem::fmm {
namespace {

std::vector<Vec3> sphere_points(std::size_t count, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal;
  std::vector<Vec3> points(count);
  for (Vec3& p : points) p = normalized(Vec3{normal(rng), normal(rng), normal(rng)});
  return points;
}

std::vector<Vec3> box_points(std::size_t count, Vec3 low, Vec3 high, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> unit;
  std::vector<Vec3> points(count);
  for (Vec3& p : points)
    p = {low.x + (high.x - low.x) * unit(rng), low.y + (high.y - low.y) * unit(rng),
         low.z + (high.z - low.z) * unit(rng)};
  return points;
}

std::vector<Vec3> ball_points(std::size_t count, Vec3 center, double radius, std::mt19937_64& rng) {
  std::vector<Vec3> points;
  while (points.size() < count) {
    const Vec3 p = box_points(1, {-1, -1, -1}, {1, 1, 1}, rng)[0];
    if (dot(p, p) <= 1.0) points.push_back(center + radius * p);
  }
  return points;
}

std::vector<Vec3> line_points(std::size_t count, Vec3 from, Vec3 to, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> unit;
  std::vector<Vec3> points(count);
  for (Vec3& p : points) p = from + unit(rng) * (to - from);
  return points;
}

void append(std::vector<Vec3>& to, const std::vector<Vec3>& from) {
  to.insert(to.end(), from.begin(), from.end());
}

// A dense tiny ball, a sparse big box and a line: leaves of very different levels touch.
// Sources and targets differ, so some cells hold only one kind.
struct Cloud {
  std::vector<Vec3> sources, targets;
};
Cloud non_uniform_cloud() {
  std::mt19937_64 rng(7);
  Cloud cloud;
  append(cloud.sources, ball_points(2500, {0.3, 0.2, 0.1}, 0.004, rng));
  append(cloud.sources, box_points(300, {-1, -1, -1}, {1, 1, 1}, rng));
  append(cloud.sources, line_points(600, {-1, 0.31, -0.4}, {1, 0.31, -0.4}, rng));
  append(cloud.targets, ball_points(1500, {0.3, 0.2, 0.1}, 0.004, rng));
  append(cloud.targets, box_points(200, {-1, -1, 0}, {1, 1, 1}, rng));
  append(cloud.targets, line_points(400, {-1, 0.31, -0.4}, {1, 0.31, -0.4}, rng));
  return cloud;
}

// Written independently of the library: closed integer boxes at the finer level.
bool touches(const Cell& a, const Cell& b) {
  const int level = std::max(a.level, b.level);
  for (int dim = 0; dim < 3; ++dim) {
    const long long scale_a = 1LL << (level - a.level), scale_b = 1LL << (level - b.level);
    const long long low_a = a.coords[dim] * scale_a, high_a = low_a + scale_a;
    const long long low_b = b.coords[dim] * scale_b, high_b = low_b + scale_b;
    if (high_a < low_b || high_b < low_a) return false;
  }
  return true;
}

std::vector<int> as_vector(std::span<const int> list) { return {list.begin(), list.end()}; }

// Every target leaf reaches every source exactly once through near + W of the leaf and
// M2L + X of the leaf and its ancestors. Targets of one leaf share their coverage, so checking
// each target leaf against all sources checks every (target, source) pair.
void expect_every_pair_covered_once(const Octree& tree) {
  const std::vector<Cell>& cells = tree.cells();
  std::vector<int> coverage(tree.source_order().size());
  const auto cover = [&](std::span<const int> list) {
    for (int b : list)
      for (std::size_t j = cells[b].source_begin; j < cells[b].source_end; ++j) ++coverage[j];
  };
  int checked_leaves = 0;
  for (int leaf : tree.leaves()) {
    if (cells[leaf].target_begin == cells[leaf].target_end) continue;
    std::fill(coverage.begin(), coverage.end(), 0);
    cover(tree.near(leaf));
    cover(tree.w_list(leaf));
    for (int a = leaf; a >= 0; a = cells[a].parent) {
      cover(tree.m2l(a));
      cover(tree.x_list(a));
    }
    const auto wrong =
        std::count_if(coverage.begin(), coverage.end(), [](int c) { return c != 1; });
    ASSERT_EQ(wrong, 0) << "target leaf " << leaf << " at level " << cells[leaf].level;
    ++checked_leaves;
  }
  EXPECT_GT(checked_leaves, 0);
}

// Each list against its definition by brute force over all cells, plus the separation
// properties the expansions rely on.
void expect_lists_match_definitions(const Octree& tree) {
  const std::vector<Cell>& cells = tree.cells();
  const int n = int(cells.size());
  std::set<std::pair<int, int>> w_pairs, x_pairs;
  for (int c = 0; c < n; ++c) {
    const Cell& cc = cells[c];
    std::vector<int> near, m2l, w;
    for (int d = 0; d < n; ++d) {
      const Cell& dd = cells[d];
      if (cc.is_leaf() && dd.is_leaf() && touches(cc, dd)) near.push_back(d);
      if (cc.parent >= 0 && dd.level == cc.level && !touches(cc, dd) &&
          touches(cells[cc.parent], cells[dd.parent]))
        m2l.push_back(d);
      if (cc.is_leaf() && dd.level > cc.level && !touches(cc, dd) && touches(cells[dd.parent], cc))
        w.push_back(d);
    }
    ASSERT_EQ(as_vector(tree.near(c)), near) << "cell " << c;
    ASSERT_EQ(as_vector(tree.m2l(c)), m2l) << "cell " << c;
    ASSERT_EQ(as_vector(tree.w_list(c)), w) << "cell " << c;

    for (int b : tree.m2l(c)) {
      ASSERT_EQ(cells[b].level, cc.level);
      ASSERT_FALSE(touches(cells[b], cc));
    }
    for (int b : tree.w_list(c)) {
      ASSERT_GT(cells[b].level, cc.level);
      ASSERT_FALSE(touches(cells[b], cc));
      ASSERT_TRUE(touches(cells[cells[b].parent], cc));
      w_pairs.insert({c, b});
    }
    for (int d : tree.x_list(c)) x_pairs.insert({c, d});
    const auto x = tree.x_list(c);
    ASSERT_TRUE(std::is_sorted(x.begin(), x.end()));
  }
  std::set<std::pair<int, int>> w_reversed;
  for (auto [c, b] : w_pairs) w_reversed.insert({b, c});
  EXPECT_EQ(x_pairs, w_reversed);
}

int largest_near_level_gap(const Octree& tree) {
  int gap = 0;
  for (int leaf : tree.leaves())
    for (int other : tree.near(leaf))
      gap = std::max(gap, std::abs(tree.cells()[leaf].level - tree.cells()[other].level));
  return gap;
}

TEST(OctreeLists, SphereCoversEveryPairExactlyOnce) {
  const std::vector<Vec3> sources = sphere_points(20000, 1);
  const std::vector<Vec3> targets = sphere_points(7000, 2);
  const Octree tree(sources, targets, {.max_leaf = 30});
  EXPECT_GE(tree.levels(), 4);
  expect_every_pair_covered_once(tree);
  expect_lists_match_definitions(tree);
}

TEST(OctreeLists, NonUniformCloudCoversEveryPairExactlyOnce) {
  const Cloud cloud = non_uniform_cloud();
  const Octree tree(cloud.sources, cloud.targets, {.max_leaf = 20});
  // Neighbouring leaves several levels apart: no 2:1 balance to lean on.
  EXPECT_GE(largest_near_level_gap(tree), 3);
  EXPECT_FALSE(std::all_of(tree.cells().begin(), tree.cells().end(), [](const Cell& c) {
    return c.target_begin < c.target_end;
  })) << "want cells holding sources only";
  expect_every_pair_covered_once(tree);
  expect_lists_match_definitions(tree);
}

TEST(OctreeLists, SameCloudForSourcesAndTargets) {
  const Cloud cloud = non_uniform_cloud();
  const Octree tree(cloud.sources, cloud.sources, {.max_leaf = 8});
  expect_every_pair_covered_once(tree);
  expect_lists_match_definitions(tree);
}

bool inside(const Vec3& p, const Vec3& center, double half_width) {
  return std::abs(p.x - center.x) <= half_width && std::abs(p.y - center.y) <= half_width &&
         std::abs(p.z - center.z) <= half_width;
}

void expect_permutation(std::span<const std::size_t> order, std::size_t size) {
  std::vector<std::size_t> sorted(order.begin(), order.end());
  std::sort(sorted.begin(), sorted.end());
  std::vector<std::size_t> identity(size);
  std::iota(identity.begin(), identity.end(), std::size_t(0));
  EXPECT_EQ(sorted, identity);
}

TEST(OctreePoints, CellRangesHoldExactlyThePointsInsideTheirBoxes) {
  const Cloud cloud = non_uniform_cloud();
  const Octree tree(cloud.sources, cloud.targets, {.max_leaf = 20});
  const std::vector<Cell>& cells = tree.cells();
  expect_permutation(tree.source_order(), cloud.sources.size());
  expect_permutation(tree.target_order(), cloud.targets.size());
  EXPECT_EQ(cells[0].source_begin, 0u);
  EXPECT_EQ(cells[0].source_end, cloud.sources.size());
  EXPECT_EQ(cells[0].target_end, cloud.targets.size());

  // Rounding may put a point within a few ulps of a face on either side of it.
  const double tolerance = 1e-12 * tree.root_width();
  const Vec3 root_low = tree.root_center() - 0.5 * tree.root_width() * Vec3{1, 1, 1};
  const auto check = [&](const Cell& cell, const std::vector<Vec3>& points,
                         std::span<const std::size_t> order, std::size_t begin, std::size_t end) {
    const double half = 0.5 * tree.width(cell.level);
    for (std::size_t position = 0; position < order.size(); ++position) {
      const Vec3& p = points[order[position]];
      const bool in_range = position >= begin && position < end;
      if (in_range) {
        ASSERT_TRUE(inside(p, cell.center, half + tolerance));
      }
      if (inside(p, cell.center, half - tolerance)) {
        ASSERT_TRUE(in_range);
      }
    }
  };
  for (const Cell& cell : cells) {
    const Vec3 center =
        root_low + tree.width(cell.level) *
                       Vec3{cell.coords[0] + 0.5, cell.coords[1] + 0.5, cell.coords[2] + 0.5};
    ASSERT_LT(norm(center - cell.center), tolerance);
    check(cell, cloud.sources, tree.source_order(), cell.source_begin, cell.source_end);
    check(cell, cloud.targets, tree.target_order(), cell.target_begin, cell.target_end);
    if (cell.is_leaf()) continue;
    // Children partition the parent's ranges, in octant order.
    std::size_t next_source = cell.source_begin, next_target = cell.target_begin;
    int previous_octant = -1;
    for (int k = 0; k < cell.num_children; ++k) {
      const Cell& child = cells[cell.first_child + k];
      ASSERT_EQ(&cells[child.parent], &cell);
      ASSERT_EQ(child.level, cell.level + 1);
      ASSERT_GT(child.octant, previous_octant);
      previous_octant = child.octant;
      for (int dim = 0; dim < 3; ++dim)
        ASSERT_EQ(child.coords[dim], 2 * cell.coords[dim] + ((child.octant >> dim) & 1));
      ASSERT_EQ(child.source_begin, next_source);
      ASSERT_EQ(child.target_begin, next_target);
      next_source = child.source_end;
      next_target = child.target_end;
    }
    ASSERT_EQ(next_source, cell.source_end);
    ASSERT_EQ(next_target, cell.target_end);
  }
}

TEST(OctreePoints, LevelsAreContiguousAndBreadthFirst) {
  const Octree tree(sphere_points(3000, 3), sphere_points(3000, 4), {.max_leaf = 10});
  int expected_first = 0;
  for (int level = 0; level < tree.levels(); ++level) {
    const auto ids = tree.cells_at_level(level);
    ASSERT_FALSE(ids.empty());
    EXPECT_EQ(ids.front(), expected_first);
    for (std::size_t k = 0; k < ids.size(); ++k) {
      EXPECT_EQ(ids[k], expected_first + int(k));
      EXPECT_EQ(tree.cells()[ids[k]].level, level);
    }
    expected_first += int(ids.size());
  }
  EXPECT_EQ(expected_first, int(tree.cells().size()));
  EXPECT_DOUBLE_EQ(tree.width(3), tree.root_width() / 8);
  // A whole tree gives its points' leaves by its orders: none to take (a split one's: the MPI
  // tests).
  Octree whole(sphere_points(300, 3), sphere_points(300, 4), {.max_leaf = 10});
  EXPECT_TRUE(whole.take_source_leaves().empty() && whole.take_target_leaves().empty());
}

TEST(OctreeSplitting, LeavesRespectMaxLeafAndNoCellIsEmpty) {
  const Cloud cloud = non_uniform_cloud();
  const int max_leaf = 20;
  const Octree tree(cloud.sources, cloud.targets, {.max_leaf = max_leaf});
  for (const Cell& cell : tree.cells()) {
    const std::size_t targets = cell.target_end - cell.target_begin;
    EXPECT_TRUE(cell.source_begin < cell.source_end || targets > 0);
    if (cell.is_leaf() && cell.level < tree.options().max_level) {
      EXPECT_LE(targets, std::size_t(max_leaf));
    }
    if (!cell.is_leaf()) {
      EXPECT_GT(targets, std::size_t(max_leaf));
    }
  }
  std::vector<int> leaves;
  for (int k = 0; k < int(tree.cells().size()); ++k)
    if (tree.cells()[k].is_leaf()) leaves.push_back(k);
  EXPECT_EQ(tree.leaves(), leaves);
}

// min_leaf_level: cells above it split while they hold any point (a wideband FMM's diagonal
// levels then hold no leaves); below it max_leaf decides as before, and no cell is empty.
TEST(OctreeSplitting, MinLeafLevelLeavesNoLeafAboveIt) {
  const Cloud cloud = non_uniform_cloud();
  const Octree plain(cloud.sources, cloud.targets, {.max_leaf = 20});
  const int min_leaf_level = 4;
  const auto leaf_above = [&](const Octree& tree) {
    return std::any_of(tree.leaves().begin(), tree.leaves().end(),
                       [&](int leaf) { return tree.cells()[leaf].level < min_leaf_level; });
  };
  ASSERT_TRUE(leaf_above(plain)) << "the cloud must have sparse regions";
  const Octree tree(cloud.sources, cloud.targets,
                    {.max_leaf = 20, .min_leaf_level = min_leaf_level});
  EXPECT_FALSE(leaf_above(tree));
  EXPECT_GE(tree.levels(), plain.levels());
  for (const Cell& cell : tree.cells()) {
    const std::size_t targets = cell.target_end - cell.target_begin;
    EXPECT_TRUE(cell.source_begin < cell.source_end || targets > 0);
    if (!cell.is_leaf() && cell.level >= min_leaf_level) EXPECT_GT(targets, 20u);
    if (cell.is_leaf()) EXPECT_LE(targets, 20u);
  }
  // The same root box, so the same widths level by level.
  EXPECT_EQ(tree.width(2), plain.width(2));
}

// The targets of a row split: contiguous blocks of the splitting points, P = 2, 3, 4 of them.
std::vector<std::vector<Vec3>> contiguous_blocks(const std::vector<Vec3>& points, int parts) {
  std::vector<std::vector<Vec3>> blocks;
  for (int part = 0; part < parts; ++part)
    blocks.emplace_back(points.begin() + points.size() * part / parts,
                        points.begin() + points.size() * (part + 1) / parts);
  return blocks;
}

TEST(OctreeSplitting, SplittingPointsSetTheShapeWhateverTheTargets) {
  const std::vector<Vec3> sources = sphere_points(9000, 21);
  const std::vector<Vec3> all_targets = sphere_points(3000, 22);
  const int max_leaf = 25;
  const Octree whole(sources, all_targets, {.max_leaf = max_leaf});
  const std::vector<Cell>& cells = whole.cells();
  ASSERT_GE(whole.levels(), 4);
  for (int parts : {2, 3, 4}) {
    std::vector<std::size_t> targets_per_cell(cells.size(), 0);
    for (const std::vector<Vec3>& block : contiguous_blocks(all_targets, parts)) {
      const Octree part(sources, block, all_targets, {.max_leaf = max_leaf});
      ASSERT_EQ(part.root_width(), whole.root_width());
      ASSERT_EQ(part.cells().size(), cells.size()) << parts << " parts";
      for (std::size_t c = 0; c < cells.size(); ++c) {
        Cell same = part.cells()[c];
        targets_per_cell[c] += same.target_end - same.target_begin;
        same.target_begin = cells[c].target_begin;
        same.target_end = cells[c].target_end;
        ASSERT_EQ(same, cells[c]) << "cell " << c << ", " << parts << " parts";
        ASSERT_TRUE(std::ranges::equal(part.near(int(c)), whole.near(int(c))));
        ASSERT_TRUE(std::ranges::equal(part.m2l(int(c)), whole.m2l(int(c))));
        ASSERT_TRUE(std::ranges::equal(part.w_list(int(c)), whole.w_list(int(c))));
        ASSERT_TRUE(std::ranges::equal(part.x_list(int(c)), whole.x_list(int(c))));
      }
      ASSERT_TRUE(std::ranges::equal(part.source_order(), whole.source_order()));
      expect_permutation(part.target_order(), block.size());
      expect_every_pair_covered_once(part);
    }
    // The parts' targets fill each cell exactly as the whole's do.
    for (std::size_t c = 0; c < cells.size(); ++c)
      ASSERT_EQ(targets_per_cell[c], cells[c].target_end - cells[c].target_begin);
  }
}

TEST(OctreeSplitting, TargetsAwayFromTheSplittingPointsStillGetCells) {
  // Splitting points in one corner, targets all over: the targets' cells are made for them, the
  // root covers them, and the lists still account for every pair once.
  const Cloud cloud = non_uniform_cloud();
  std::mt19937_64 rng(23);
  const std::vector<Vec3> splitting = ball_points(400, {0.3, 0.2, 0.1}, 0.004, rng);
  const std::vector<Vec3> targets = box_points(300, {-2, -1, -1}, {1, 1, 1.5}, rng);
  const int max_leaf = 20;
  const Octree tree(cloud.sources, targets, splitting, {.max_leaf = max_leaf});
  for (const Vec3& p : targets) EXPECT_TRUE(inside(p, tree.root_center(), 0.5 * tree.root_width()));
  // Splitting points counted inside each cell's box; rounding may put one within a few ulps of
  // a face on either side of it.
  const double tolerance = 1e-12 * tree.root_width();
  for (const Cell& cell : tree.cells()) {
    const double half = 0.5 * tree.width(cell.level);
    const auto count_inside = [&](double half_width) {
      return std::count_if(splitting.begin(), splitting.end(),
                           [&](const Vec3& p) { return inside(p, cell.center, half_width); });
    };
    if (!cell.is_leaf()) {
      EXPECT_GT(count_inside(half + tolerance), max_leaf);
    } else if (cell.level < tree.options().max_level) {
      EXPECT_LE(count_inside(half - tolerance), max_leaf);
    }
  }
  expect_every_pair_covered_once(tree);
  expect_lists_match_definitions(tree);
}

TEST(OctreeSplitting, MaxLevelCapsDepth) {
  std::mt19937_64 rng(11);
  const std::vector<Vec3> points = box_points(5000, {0, 0, 0}, {1, 1, 1}, rng);
  const Octree tree(points, points, {.max_leaf = 10, .max_level = 2});
  EXPECT_EQ(tree.levels(), 3);
  const auto& cells = tree.cells();
  EXPECT_TRUE(std::any_of(cells.begin(), cells.end(), [](const Cell& c) {
    return c.level == 2 && c.target_end - c.target_begin > 10;
  }));
  const Octree root_only(points, points, {.max_leaf = 10, .max_level = 0});
  EXPECT_EQ(root_only.levels(), 1);
  EXPECT_EQ(root_only.near(0).size(), 1u);
}

TEST(OctreeSplitting, CoincidentPointsStopAtMaxLevel) {
  const std::vector<Vec3> same(500, Vec3{0.25, -3.0, 7.5});
  const Octree tree(same, same, {.max_leaf = 10});
  EXPECT_EQ(tree.levels(), Octree::kMaxLevel + 1);
  EXPECT_EQ(tree.cells().size(), std::size_t(Octree::kMaxLevel + 1));
  ASSERT_EQ(tree.leaves().size(), 1u);
  const Cell& leaf = tree.cells()[tree.leaves()[0]];
  EXPECT_EQ(leaf.target_end - leaf.target_begin, 500u);
  EXPECT_GT(tree.root_width(), 0.0);
  expect_every_pair_covered_once(tree);

  // Next to a few scattered points, so the coincident stack shares the tree with other cells.
  std::mt19937_64 rng(5);
  std::vector<Vec3> mixed = same;
  append(mixed, box_points(50, {-1, -4, 6}, {1, -2, 8}, rng));
  const Octree mixed_tree(mixed, mixed, {.max_leaf = 10});
  EXPECT_EQ(mixed_tree.levels(), Octree::kMaxLevel + 1);
  expect_every_pair_covered_once(mixed_tree);
  expect_lists_match_definitions(mixed_tree);
}

TEST(OctreeTransfer, IndexEncodesTheOffset) {
  EXPECT_EQ(Octree::transfer_index({5, 5, 5}, {2, 2, 2}), 342);
  EXPECT_EQ(Octree::transfer_index({2, 2, 2}, {5, 5, 5}), 0);
  EXPECT_EQ(Octree::transfer_index({4, 1, 0}, {2, 2, 3}), (2 + 3) * 49 + (-1 + 3) * 7 + 0);
}

TEST(OctreeTransfer, M2lOffsetsAreTheWellSeparated316) {
  std::mt19937_64 rng(3);
  const std::vector<Vec3> points = box_points(20000, {0, 0, 0}, {1, 1, 1}, rng);
  const Octree tree(points, points, {.max_leaf = 30});
  const auto& cells = tree.cells();
  int deepest_full_level = -1;
  int seen_at_deepest_full = 0;
  for (int level = 0; level < tree.levels(); ++level) {
    std::vector<bool> seen(Octree::kTransferCount, false);
    for (int c : tree.cells_at_level(level))
      for (int s : tree.m2l(c)) {
        int largest = 0;
        for (int dim = 0; dim < 3; ++dim) {
          const int d = cells[c].coords[dim] - cells[s].coords[dim];
          ASSERT_LE(std::abs(d), 3);
          largest = std::max(largest, std::abs(d));
        }
        ASSERT_GE(largest, 2);
        const int index = Octree::transfer_index(cells[c].coords, cells[s].coords);
        ASSERT_GE(index, 0);
        ASSERT_LT(index, Octree::kTransferCount);
        seen[index] = true;
      }
    const int distinct = int(std::count(seen.begin(), seen.end(), true));
    EXPECT_LE(distinct, 316);
    if (tree.cells_at_level(level).size() == std::size_t(1) << (3 * level)) {
      deepest_full_level = level;
      seen_at_deepest_full = distinct;
    }
  }
  ASSERT_GE(deepest_full_level, 2);
  EXPECT_EQ(seen_at_deepest_full, 316);
}

// Every list of every cell formed from the cells alone (Octree::list_of on a tree holding none)
// against the lists build_lists forms for the whole tree: the same entries in the same order.
void expect_formed_lists_are_the_held(const Octree& whole, const Octree& bare) {
  using Kind = Octree::ListKind;
  ASSERT_EQ(whole.cells(), bare.cells());
  std::size_t entries = 0;
  for (int c = 0; c < int(whole.cells().size()); ++c) {
    ASSERT_FALSE(bare.holds_lists_of(c));
    ASSERT_TRUE(std::ranges::equal(whole.near(c), bare.list_of(Kind::near, c))) << c;
    ASSERT_TRUE(std::ranges::equal(whole.m2l(c), bare.list_of(Kind::m2l, c))) << c;
    ASSERT_TRUE(std::ranges::equal(whole.w_list(c), bare.list_of(Kind::w, c))) << c;
    ASSERT_TRUE(std::ranges::equal(whole.x_list(c), bare.list_of(Kind::x, c))) << c;
    entries += whole.x_list(c).size();
    // A leaf's near sources at once: near, W, then the X lists up its ancestors.
    const Octree::NearSourceLists lists = bare.near_source_lists_of(c);
    std::vector<int> visited, formed = lists.near;
    if (whole.cells()[c].is_leaf())
      whole.for_each_near_source_cell(c, [&](int s) { visited.push_back(s); });
    formed.insert(formed.end(), lists.w.begin(), lists.w.end());
    formed.insert(formed.end(), lists.x.begin(), lists.x.end());
    ASSERT_EQ(visited, formed) << c;
    ASSERT_TRUE(std::ranges::equal(whole.w_list(c), lists.w)) << c;
  }
  EXPECT_GT(entries, 0u) << "a tree without X lists tests form_x little";
  // Many cells at once (every cell, in reverse and once more), on the threads: the same lists.
  std::vector<int> cells(whole.cells().size());
  std::iota(cells.rbegin(), cells.rend(), 0);
  cells.push_back(0);
  std::vector<int> visits(cells.size() - 1, 0), wrong(cells.size() - 1, 0);
  bare.visit_lists_of(cells, [&](int c, const Octree::CellListSet& lists) {
#pragma omp atomic
    ++visits[std::size_t(c)];
    const bool same = std::ranges::equal(whole.near(c), lists.near) &&
                      std::ranges::equal(whole.m2l(c), lists.m2l) &&
                      std::ranges::equal(whole.w_list(c), lists.w) &&
                      std::ranges::equal(whole.x_list(c), lists.x);
    if (!same) wrong[std::size_t(c)] = 1;
  });
  EXPECT_EQ(visits[0], 2);
  EXPECT_EQ(std::count(visits.begin() + 1, visits.end(), 1), std::ptrdiff_t(visits.size() - 1));
  EXPECT_EQ(std::count(wrong.begin(), wrong.end(), 1), 0);
}

// The tree of a split point set of one part: the whole tree's cells, no lists held.
struct OnePart final : Octree::PartReduction {
  void extremes(std::array<double, 3>&, std::array<double, 3>&) const override {}
  void sum(std::span<std::size_t>) const override {}
};

TEST(OctreeLists, FormedOnDemandEqualTheWholeTreesLists) {
  const Cloud cloud = non_uniform_cloud();
  for (const OctreeOptions& options : {OctreeOptions{.max_leaf = 20}, OctreeOptions{.max_leaf = 1},
                                       OctreeOptions{.max_leaf = 8, .max_level = 4}}) {
    const Octree whole(cloud.sources, cloud.targets, cloud.targets, options);
    const Octree bare(cloud.sources, cloud.targets, cloud.targets, options, OnePart{});
    expect_formed_lists_are_the_held(whole, bare);
  }
  const std::vector<Vec3> sources = sphere_points(20000, 1);
  const std::vector<Vec3> targets = sphere_points(7000, 2);
  expect_formed_lists_are_the_held(Octree(sources, targets, targets, {.max_leaf = 30}),
                                   Octree(sources, targets, targets, {.max_leaf = 30}, OnePart{}));
  // Held lists are returned as they are.
  const Octree whole(sources, targets, targets, {.max_leaf = 30});
  for (int c = 0; c < int(whole.cells().size()); c += 7)
    ASSERT_TRUE(std::ranges::equal(whole.near(c), whole.list_of(Octree::ListKind::near, c)));
  EXPECT_THROW(whole.list_of(Octree::ListKind::m2l, int(whole.cells().size())), Error);
}

TEST(OctreeLists, APartHoldsItsCellsListsAlone) {
  const Cloud cloud = non_uniform_cloud();
  const Octree whole(cloud.sources, cloud.targets, {.max_leaf = 20});
  Octree part(cloud.sources, cloud.targets, cloud.targets, {.max_leaf = 20}, OnePart{});
  const int cell_count = int(whole.cells().size());
  EXPECT_THROW(part.near(0), Error) << "no lists held before hold_lists_of";
  // Every third cell, given twice and out of order.
  std::vector<int> held;
  for (int c = cell_count - 1; c >= 0; --c)
    if (c % 3 == 0) held.insert(held.end(), {c, c});
  part.hold_lists_of(held);
  std::size_t entries = 0;
  for (int c = 0; c < cell_count; ++c) {
    if (c % 3 != 0) {
      EXPECT_FALSE(part.holds_lists_of(c));
      EXPECT_THROW(part.m2l(c), Error);
      EXPECT_TRUE(std::ranges::equal(whole.x_list(c), part.list_of(Octree::ListKind::x, c)));
      continue;
    }
    ASSERT_TRUE(part.holds_lists_of(c));
    ASSERT_TRUE(std::ranges::equal(whole.near(c), part.near(c))) << c;
    ASSERT_TRUE(std::ranges::equal(whole.m2l(c), part.m2l(c))) << c;
    ASSERT_TRUE(std::ranges::equal(whole.w_list(c), part.w_list(c))) << c;
    ASSERT_TRUE(std::ranges::equal(whole.x_list(c), part.x_list(c))) << c;
    entries += whole.near(c).size() + whole.m2l(c).size() + whole.w_list(c).size() +
               whole.x_list(c).size();
  }
  // The held entries, their offsets and the map to rows.
  const std::size_t held_rows = std::size_t((cell_count + 2) / 3);
  EXPECT_EQ(part.list_bytes(), entries * sizeof(int) + 4 * (held_rows + 1) * sizeof(std::size_t) +
                                   std::size_t(cell_count) * sizeof(int));
  EXPECT_LT(part.list_bytes(), whole.list_bytes() / 2);
  EXPECT_THROW(part.hold_lists_of(held), Error) << "held once";
  EXPECT_THROW(Octree(whole).hold_lists_of(held), Error) << "a tree holding every list";
  Octree other(cloud.sources, cloud.targets, cloud.targets, {.max_leaf = 20}, OnePart{});
  EXPECT_THROW(other.hold_lists_of(std::vector<int>{cell_count}), Error) << "out of range";
  // A part's view shares the held lists.
  std::vector<std::size_t> every(cloud.sources.size());
  std::iota(every.begin(), every.end(), std::size_t(0));
  const Octree view(part, cloud.sources, every, cloud.targets);
  // A leaf's near sources at once from the held lists where it and its ancestors are held.
  Octree own(cloud.sources, cloud.targets, cloud.targets, {.max_leaf = 20}, OnePart{});
  std::vector<int> closed;
  for (int leaf : std::span(whole.leaves()).first(whole.leaves().size() / 2))
    for (int a = leaf; a >= 0; a = whole.cells()[std::size_t(a)].parent) closed.push_back(a);
  own.hold_lists_of(closed);
  for (int leaf : whole.leaves()) {
    std::vector<int> visited;
    whole.for_each_near_source_cell(leaf, [&](int s) { visited.push_back(s); });
    const Octree::NearSourceLists lists = own.near_source_lists_of(leaf);
    std::vector<int> formed = lists.near;
    formed.insert(formed.end(), lists.w.begin(), lists.w.end());
    formed.insert(formed.end(), lists.x.begin(), lists.x.end());
    ASSERT_EQ(visited, formed) << leaf;
  }
  EXPECT_TRUE(std::ranges::equal(view.m2l(3), whole.m2l(3)));
  EXPECT_THROW(view.m2l(1), Error);
}

void expect_same_tree(const Octree& a, const Octree& b) {
  ASSERT_EQ(a.cells(), b.cells());
  ASSERT_TRUE(std::ranges::equal(a.source_order(), b.source_order()));
  ASSERT_TRUE(std::ranges::equal(a.target_order(), b.target_order()));
  for (int c = 0; c < int(a.cells().size()); ++c) {
    ASSERT_TRUE(std::ranges::equal(a.near(c), b.near(c)));
    ASSERT_TRUE(std::ranges::equal(a.m2l(c), b.m2l(c)));
    ASSERT_TRUE(std::ranges::equal(a.w_list(c), b.w_list(c)));
    ASSERT_TRUE(std::ranges::equal(a.x_list(c), b.x_list(c)));
  }
}

TEST(OctreeDeterminism, SameTreeForOneAndSeveralThreads) {
  // Big enough that the sort, the octant splits and the list builder all run in parallel.
  std::mt19937_64 rng(9);
  std::vector<Vec3> sources = sphere_points(150000, 6);
  append(sources, ball_points(20000, {0.0, 0.0, 1.0}, 0.01, rng));
  const std::vector<Vec3> targets = sphere_points(100000, 8);
  const int threads = omp_get_max_threads();
  omp_set_num_threads(1);
  const Octree serial(sources, targets, {.max_leaf = 20});
  omp_set_num_threads(2);
  const Octree two(sources, targets, {.max_leaf = 20});
  omp_set_num_threads(3);
  const Octree three(sources, targets, {.max_leaf = 20});
  omp_set_num_threads(threads);
  expect_same_tree(serial, two);
  expect_same_tree(serial, three);
}

TEST(OctreeInput, BadInputThrows) {
  const std::vector<Vec3> points = sphere_points(10, 1);
  const std::vector<Vec3> none;
  EXPECT_THROW(Octree(none, points, {}), Error);
  EXPECT_THROW(Octree(points, none, {}), Error);
  std::vector<Vec3> with_nan = points;
  with_nan[3].y = std::numeric_limits<double>::quiet_NaN();
  EXPECT_THROW(Octree(with_nan, points, {}), Error);
  std::vector<Vec3> with_infinity = points;
  with_infinity[7].z = -std::numeric_limits<double>::infinity();
  EXPECT_THROW(Octree(points, with_infinity, {}), Error);
  EXPECT_THROW(Octree(points, points, {.max_leaf = 0}), Error);
  EXPECT_THROW(Octree(points, points, {.max_level = -1}), Error);
  EXPECT_THROW(Octree(points, points, {.max_level = 22}), Error);
  EXPECT_NO_THROW(Octree(points, points, {.max_leaf = 1}));
  EXPECT_THROW(Octree(points, points, none, {}), Error);
  EXPECT_THROW(Octree(points, points, with_nan, {}), Error);
  // A part may own no targets; the tree is still the splitting points'.
  const Octree no_targets(points, none, points, {.max_leaf = 2});
  EXPECT_EQ(no_targets.cells().size(), Octree(points, points, {.max_leaf = 2}).cells().size());
  EXPECT_TRUE(no_targets.target_order().empty());
}

// Whether a view's cell is the tree's cell at the same place: level, coordinates, centre and
// octant.
::testing::AssertionResult same_place(const Cell& view, const Cell& tree) {
  if (view.level == tree.level && view.coords == tree.coords && view.center == tree.center &&
      view.octant == tree.octant)
    return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << "cell at level " << view.level << " (" << view.coords[0] << ", " << view.coords[1]
         << ", " << view.coords[2] << ") octant " << view.octant << ", the tree's at level "
         << tree.level << " (" << tree.coords[0] << ", " << tree.coords[1] << ", " << tree.coords[2]
         << ") octant " << tree.octant;
}

// A part's view (the distributed FMM's, Octree's constructor with a shape): the shape's cells
// and lists, each cell's range holding the part's points that the whole tree's cell holds, in
// the whole tree's order.
TEST(OctreePartView, HoldsThePartsPointsInTheWholeOrder) {
  const Cloud cloud = non_uniform_cloud();
  const Octree whole(cloud.sources, cloud.targets, {.max_leaf = 20});
  std::mt19937_64 rng(11);
  std::bernoulli_distribution pick(0.3);
  std::vector<std::size_t> held;
  std::vector<char> is_held(cloud.sources.size(), 0);
  for (std::size_t s = 0; s < cloud.sources.size(); ++s)
    if (pick(rng)) {
      held.push_back(s);
      is_held[s] = 1;
    }
  std::vector<std::size_t> target_of;  // part target -> the whole tree's target
  std::vector<Vec3> targets;
  for (std::size_t t = 0; t < cloud.targets.size(); ++t)
    if (pick(rng)) {
      target_of.push_back(t);
      targets.push_back(cloud.targets[t]);
    }
  ASSERT_FALSE(held.empty());
  ASSERT_FALSE(targets.empty());
  const Octree view(whole, cloud.sources, held, targets);
  EXPECT_TRUE(view.is_part_view());
  EXPECT_FALSE(whole.is_part_view());
  EXPECT_EQ(view.source_order().size(), held.size());
  EXPECT_EQ(view.target_order().size(), targets.size());
  ASSERT_EQ(view.cells().size(), whole.cells().size());
  EXPECT_EQ(view.leaves(), whole.leaves());
  EXPECT_EQ(view.levels(), whole.levels());
  // The lists are the shape's own, shared, not copied.
  EXPECT_EQ(view.near(whole.leaves()[0]).data(), whole.near(whole.leaves()[0]).data());
  // A view of the view: the same ranges, and the whole counts carried over.
  const Octree view_of_view(view, cloud.sources, held, targets);
  for (int c = 0; c < int(whole.cells().size()); ++c) {
    const Cell& w = whole.cells()[c];
    const Cell& v = view.cells()[c];
    ASSERT_TRUE(same_place(v, w));
    ASSERT_EQ(v.parent, w.parent);
    ASSERT_EQ(v.first_child, w.first_child);
    ASSERT_EQ(v.num_children, w.num_children);
    ASSERT_TRUE(std::ranges::equal(view.near(c), whole.near(c)));
    ASSERT_TRUE(std::ranges::equal(view.m2l(c), whole.m2l(c)));
    ASSERT_TRUE(std::ranges::equal(view.w_list(c), whole.w_list(c)));
    ASSERT_TRUE(std::ranges::equal(view.x_list(c), whole.x_list(c)));
    ASSERT_EQ(view.whole_source_range(c),
              (std::array<std::size_t, 2>{w.source_begin, w.source_end}));
    ASSERT_EQ(view.sources_in_whole(c), w.source_end - w.source_begin);
    ASSERT_EQ(view_of_view.cells()[c], v);
    ASSERT_EQ(view_of_view.whole_source_range(c), view.whole_source_range(c));
    // The cell's held sources and part targets, in the whole tree's order.
    std::vector<std::size_t> expected_sources, expected_targets;
    for (std::size_t p = w.source_begin; p < w.source_end; ++p)
      if (is_held[whole.source_order()[p]]) expected_sources.push_back(whole.source_order()[p]);
    for (std::size_t p = w.target_begin; p < w.target_end; ++p) {
      const auto at = std::lower_bound(target_of.begin(), target_of.end(), whole.target_order()[p]);
      if (at != target_of.end() && *at == whole.target_order()[p])
        expected_targets.push_back(std::size_t(at - target_of.begin()));
    }
    const auto sources = view.source_order().subspan(v.source_begin, v.source_end - v.source_begin);
    const auto part_targets =
        view.target_order().subspan(v.target_begin, v.target_end - v.target_begin);
    ASSERT_TRUE(std::ranges::equal(sources, expected_sources)) << "cell " << c;
    ASSERT_TRUE(std::ranges::equal(part_targets, expected_targets)) << "cell " << c;
  }
  // Its leaves are found as the whole tree's.
  EXPECT_EQ(view.leaf_of(targets), whole.leaf_of(targets));
}

// A part's view holding some cells alone (the distributed FMM's: Octree's constructor with the
// held cells): each held cell is the full view's cell (geometry, ranges of the part's points,
// the whole ranges) renumbered in ascending order, its children the held ones, its lists the
// whole tree's renumbered where all their cells are held, and reading any other list throws.
TEST(OctreePartView, HeldCellsAloneAreTheFullViewsRenumbered) {
  const Cloud cloud = non_uniform_cloud();
  const Octree whole(cloud.sources, cloud.targets, {.max_leaf = 20});
  const auto& cells = whole.cells();
  // A part as the partition cuts one: a run of leaves (the middle third by id), with the cells
  // its lists name and their ancestors.
  const std::vector<int>& leaves = whole.leaves();
  const std::vector<int> own(leaves.begin() + std::ptrdiff_t(leaves.size() / 3),
                             leaves.begin() + std::ptrdiff_t(2 * leaves.size() / 3));
  std::vector<char> kept(cells.size(), 0);
  for (int leaf : own) {
    kept[std::size_t(leaf)] = 1;
    whole.for_each_near_source_cell(leaf, [&](int c) { kept[std::size_t(c)] = 1; });
    for (int a = leaf; a >= 0; a = cells[a].parent)
      for (int s : whole.m2l(a)) kept[std::size_t(s)] = 1;
  }
  for (std::size_t c = cells.size(); c-- > 1;)
    if (kept[c]) kept[std::size_t(cells[c].parent)] = 1;
  std::vector<int> held_cells;
  for (std::size_t c = 0; c < cells.size(); ++c)
    if (kept[c]) held_cells.push_back(int(c));
  ASSERT_LT(held_cells.size(), cells.size());
  // The part's points: the sources of held leaves, the targets of its own leaves.
  std::vector<std::size_t> held;
  std::vector<Vec3> targets;
  for (int leaf : leaves)
    if (kept[std::size_t(leaf)])
      for (std::size_t p = cells[leaf].source_begin; p < cells[leaf].source_end; ++p)
        held.push_back(whole.source_order()[p]);
  std::sort(held.begin(), held.end());
  for (int leaf : own)
    for (std::size_t p = cells[leaf].target_begin; p < cells[leaf].target_end; ++p)
      targets.push_back(cloud.targets[whole.target_order()[p]]);
  ASSERT_FALSE(targets.empty());
  const Octree full(whole, cloud.sources, held, targets);
  const Octree view(whole, held_cells, cloud.sources, held, targets);
  EXPECT_TRUE(view.holds_cell_subset());
  EXPECT_FALSE(full.holds_cell_subset());
  EXPECT_TRUE(view.is_part_view());
  ASSERT_EQ(view.cells().size(), held_cells.size());
  ASSERT_EQ(view.levels(), full.levels());
  for (int level = 0; level < view.levels(); ++level)
    for (int c : view.cells_at_level(level)) ASSERT_EQ(view.cells()[c].level, level);
  std::vector<int> held_leaves;
  for (int leaf : full.leaves())
    if (kept[std::size_t(leaf)]) held_leaves.push_back(view.cell_of_whole_id(leaf));
  EXPECT_EQ(view.leaves(), held_leaves);
  EXPECT_EQ(view.source_order().size(), held.size());
  EXPECT_TRUE(std::ranges::equal(view.source_order(), full.source_order()));
  EXPECT_TRUE(std::ranges::equal(view.target_order(), full.target_order()));
  std::size_t lists_held = 0;
  for (int c = 0; c < int(held_cells.size()); ++c) {
    const int g = held_cells[std::size_t(c)];
    ASSERT_EQ(view.whole_cell_id(c), g);
    ASSERT_EQ(view.cell_of_whole_id(g), c);
    const Cell& v = view.cells()[c];
    const Cell& f = full.cells()[g];
    ASSERT_TRUE(same_place(v, f));
    ASSERT_EQ(v.is_leaf(), f.is_leaf());
    ASSERT_EQ(v.source_begin, f.source_begin);
    ASSERT_EQ(v.source_end, f.source_end);
    ASSERT_EQ(v.target_begin, f.target_begin);
    ASSERT_EQ(v.target_end, f.target_end);
    ASSERT_EQ(view.whole_source_range(c), full.whole_source_range(g));
    ASSERT_EQ(v.parent < 0 ? -1 : view.whole_cell_id(v.parent), f.parent);
    std::vector<int> children, expected_children;
    for (int ch = v.first_child; ch < v.first_child + v.num_children; ++ch)
      children.push_back(view.whole_cell_id(ch));
    for (int ch = f.first_child; ch < f.first_child + f.num_children; ++ch)
      if (kept[std::size_t(ch)]) expected_children.push_back(ch);
    ASSERT_EQ(children, expected_children) << "cell " << g;
    // Lists: held where every entry is held, renumbered; otherwise reading throws.
    bool complete = true;
    for (const auto list : {whole.near(g), whole.m2l(g), whole.w_list(g), whole.x_list(g)})
      for (int e : list) complete = complete && kept[std::size_t(e)];
    ASSERT_EQ(view.holds_lists_of(c), complete) << "cell " << g;
    if (!complete) {
      EXPECT_THROW((void)view.near(c), Error);
      EXPECT_THROW((void)view.lists_of(c), Error);  // no lists formed in such a view
      continue;
    }
    ++lists_held;
    const auto in_whole = [&](std::span<const int> list) {
      std::vector<int> out;
      for (int e : list) out.push_back(view.whole_cell_id(e));
      return out;
    };
    ASSERT_TRUE(std::ranges::equal(in_whole(view.near(c)), whole.near(g)));
    ASSERT_TRUE(std::ranges::equal(in_whole(view.m2l(c)), whole.m2l(g)));
    ASSERT_TRUE(std::ranges::equal(in_whole(view.w_list(c)), whole.w_list(g)));
    ASSERT_TRUE(std::ranges::equal(in_whole(view.x_list(c)), whole.x_list(g)));
  }
  // Every own leaf and its ancestors hold their lists (all the part reads).
  for (int leaf : own)
    for (int a = view.cell_of_whole_id(leaf); a >= 0; a = view.cells()[a].parent)
      ASSERT_TRUE(view.holds_lists_of(a));
  EXPECT_GT(lists_held, own.size());
  // Leaves found as the full view's, renumbered.
  std::vector<int> found = view.leaf_of(targets);
  for (int& leaf : found) leaf = view.whole_cell_id(leaf);
  EXPECT_EQ(found, full.leaf_of(targets));
  EXPECT_EQ(view.cell_of_whole_id(-1), -1);
  for (int c = 0; c < int(cells.size()); ++c)
    if (!kept[std::size_t(c)]) {
      EXPECT_EQ(view.cell_of_whole_id(c), -1);
      break;
    }
  // Held cells must be ascending, start at the root and hold their parents; points must lie in
  // held cells.
  std::vector<int> unordered = held_cells;
  std::swap(unordered[1], unordered[2]);
  EXPECT_THROW(Octree(whole, unordered, cloud.sources, held, targets), Error);
  EXPECT_THROW(
      Octree(whole, std::span<const int>(held_cells).subspan(1), cloud.sources, held, targets),
      Error);
  std::vector<int> orphan = held_cells;
  orphan.erase(std::ranges::find(orphan, cells[std::size_t(own[0])].parent));
  EXPECT_THROW(Octree(whole, orphan, cloud.sources, held, targets), Error);
  std::vector<std::size_t> all_sources(cloud.sources.size());
  std::iota(all_sources.begin(), all_sources.end(), 0);
  EXPECT_THROW(Octree(whole, held_cells, cloud.sources, all_sources, targets), Error);
}

TEST(OctreePartView, BadInputThrows) {
  std::mt19937_64 rng(3);
  // Points in two opposite corners of the root: its other octants hold no cell.
  std::vector<Vec3> points = ball_points(200, {0.0, 0.0, 0.0}, 0.05, rng);
  append(points, ball_points(200, {1.0, 1.0, 1.0}, 0.05, rng));
  const Octree whole(points, points, {.max_leaf = 10});
  const std::vector<std::size_t> held = {0, 5, 300};
  EXPECT_NO_THROW(Octree(whole, points, held, points));
  EXPECT_NO_THROW(Octree(whole, points, {}, {}));  // a part holding no point
  EXPECT_THROW(Octree(whole, points, std::vector<std::size_t>{5, 0}, points), Error);
  EXPECT_THROW(Octree(whole, points, std::vector<std::size_t>{5, 5}, points), Error);
  EXPECT_THROW(Octree(whole, points, std::vector<std::size_t>{400}, points), Error);
  std::vector<Vec3> with_nan = points;
  with_nan[5].x = std::numeric_limits<double>::quiet_NaN();
  EXPECT_THROW(Octree(whole, with_nan, held, points), Error);
  EXPECT_THROW(Octree(whole, points, held, with_nan), Error);
  // A point between the corners lies in no cell of the tree.
  std::vector<Vec3> elsewhere = points;
  elsewhere[300] = {0.9, 0.1, 0.1};
  EXPECT_THROW(Octree(whole, elsewhere, held, points), Error);
  EXPECT_THROW(Octree(whole, points, held, elsewhere), Error);
}

}  // namespace
}  // namespace fmbem::fmm
