// The distributed FMM's partition from split points (docs/distributed.md step 2): each
// rank holds a slab of the points (of the elements), and the tree of the split point set
// (Octree with a PartReduction) and the partition computed from it (DistributedFmmPartition)
// must be those of the whole point set on one rank, bit for bit, on any number of ranks
// (tests/CMakeLists.txt runs it for P = 1..4, some ranks' slabs empty).
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <span>
#include <vector>

#include "fmbem/core/error.hpp"
#include "fmbem/fmm/distributed.hpp"
#include "fmbem/fmm/octree.hpp"
#include "fmbem/mesh/mesh.hpp"
#include "fmbem/quadrature/triangle_rule.hpp"
#include "mpi_world.hpp"
#include "surface_elements.hpp"

namespace fmbem::fmm {
namespace {

using fmbem::test::on_every_rank;
using fmbem::test::world_rank;
using fmbem::test::world_size;

// An uneven split of n items into the ranks' slabs [begin, end): rank r's share grows with r,
// and on three or more ranks rank 1 holds nothing.
std::array<std::size_t, 2> slab(std::size_t n, int rank, int size) {
  const auto bound = [&](int r) {
    if (size >= 3 && r == 1) r = 2;
    return n * std::size_t(r) * std::size_t(r) / (std::size_t(size) * std::size_t(size));
  };
  return {bound(rank), bound(rank + 1)};
}

template <class T>
std::span<const T> slab_of(const std::vector<T>& all) {
  const auto [begin, end] = slab(all.size(), world_rank(), world_size());
  return std::span<const T>(all).subspan(begin, end - begin);
}

void expect_same_tree(const Octree& whole, const Octree& split) {
  EXPECT_TRUE(on_every_rank(whole.cells() == split.cells())) << "cells";
  EXPECT_TRUE(on_every_rank(whole.levels() == split.levels() && whole.leaves() == split.leaves() &&
                            whole.root_width() == split.root_width() &&
                            whole.root_center().x == split.root_center().x &&
                            whole.root_center().y == split.root_center().y &&
                            whole.root_center().z == split.root_center().z))
      << "levels, leaves, root";
  // No rank holds the split tree's lists; each forms any cell's as the whole tree's.
  using Kind = Octree::ListKind;
  bool lists = whole.cells().size() == split.cells().size();
  for (int c = 0; lists && c < int(whole.cells().size()); ++c)
    lists = !split.holds_lists_of(c) &&
            std::ranges::equal(whole.near(c), split.list_of(Kind::near, c)) &&
            std::ranges::equal(whole.m2l(c), split.list_of(Kind::m2l, c)) &&
            std::ranges::equal(whole.w_list(c), split.list_of(Kind::w, c)) &&
            std::ranges::equal(whole.x_list(c), split.list_of(Kind::x, c));
  EXPECT_TRUE(on_every_rank(lists)) << "interaction lists";
  EXPECT_FALSE(split.holds_point_orders());
  EXPECT_TRUE(split.source_order().empty() && split.target_order().empty());
}

// Per point (input index), the leaf the whole tree sorted it into.
std::vector<int> leaves_by_order(const Octree& tree, bool sources) {
  std::vector<int> leaf(sources ? tree.source_order().size() : tree.target_order().size(), -1);
  for (int c : tree.leaves()) {
    const Cell& cell = tree.cells()[c];
    const std::size_t begin = sources ? cell.source_begin : cell.target_begin;
    const std::size_t end = sources ? cell.source_end : cell.target_end;
    for (std::size_t i = begin; i < end; ++i)
      leaf[sources ? tree.source_order()[i] : tree.target_order()[i]] = c;
  }
  return leaf;
}

// The tree of the whole on every rank against the tree of the ranks' slabs, and leaf_of of each
// rank's points against the leaves the whole tree sorted them into.
void expect_split_tree_is_whole(const std::vector<Vec3>& sources, const std::vector<Vec3>& targets,
                                const std::vector<Vec3>* splitting, const OctreeOptions& options) {
  const Octree whole =
      splitting ? Octree(sources, targets, *splitting, options) : Octree(sources, targets, options);
  const MpiPartReduction parts(MPI_COMM_WORLD);
  const std::span<const Vec3> own_targets = slab_of(targets);
  Octree split(slab_of(sources), own_targets, splitting ? slab_of(*splitting) : own_targets,
               options, parts);
  expect_same_tree(whole, split);
  EXPECT_GT(whole.leaves().size(), 8u) << "a tree of one leaf tests little";
  // The work counted by the ranks' shares of the cells: every count the whole tree's, bit for bit.
  const WorkCounts expected = count_work(whole);
  const WorkCounts shared = count_work(split, parts, world_rank(), world_size());
  EXPECT_TRUE(on_every_rank(shared.near_pairs == expected.near_pairs &&
                            shared.m2l_pairs == expected.m2l_pairs &&
                            shared.m2l_share == expected.m2l_share))
      << "the work counts";
  EXPECT_GT(expected.total_near_pairs(), 0u);
  EXPECT_GT(expected.total_m2l_pairs(), 0u);
  for (bool of_sources : {true, false}) {
    const std::vector<Vec3>& points = of_sources ? sources : targets;
    const auto [begin, end] = slab(points.size(), world_rank(), world_size());
    const std::vector<int> expected = leaves_by_order(whole, of_sources);
    const std::vector<int> found = split.leaf_of(slab_of(points));
    EXPECT_TRUE(on_every_rank(found.size() == end - begin &&
                              std::equal(found.begin(), found.end(), expected.begin() + begin)))
        << (of_sources ? "the sources' leaves" : "the targets' leaves");
    // The same leaves read off the build, taken once.
    const std::vector<int> given =
        of_sources ? split.take_source_leaves() : split.take_target_leaves();
    const std::vector<int> again =
        of_sources ? split.take_source_leaves() : split.take_target_leaves();
    EXPECT_TRUE(on_every_rank(given == found && again.empty()))
        << (of_sources ? "the given sources' leaves" : "the given targets' leaves");
  }
}

using test::add_surface;
using test::Elements;

// A small sphere beside a large one: an adaptive tree with long W and X lists.
Elements two_spheres() {
  Elements e;
  add_surface(make_icosphere(3, 1.0), e);
  add_surface(make_icosphere(2, 0.002, Vec3{0.9, 0.3, -0.2}), e);
  return e;
}

// This rank's slab of the elements: their collocation points, and the source points with
// their elements' positions in the slab.
struct ElementSlab {
  std::size_t first;
  std::span<const Vec3> targets;
  std::vector<Vec3> sources;
  std::vector<std::size_t> source_element;

  explicit ElementSlab(const Elements& e) {
    const auto [begin, end] = slab(e.targets.size(), world_rank(), world_size());
    first = begin;
    targets = std::span<const Vec3>(e.targets).subspan(begin, end - begin);
    for (std::size_t s = 0; s < e.sources.size(); ++s)
      if (e.source_element[s] >= begin && e.source_element[s] < end) {
        sources.push_back(e.sources[s]);
        source_element.push_back(e.source_element[s] - begin);
      }
  }
};

TEST(SplitOctree, TwoSpheresIsTheWholeTree) {
  const Elements e = two_spheres();
  expect_split_tree_is_whole(e.sources, e.targets, nullptr, {.max_leaf = 16});
  expect_split_tree_is_whole(e.sources, e.targets, nullptr, {.max_leaf = 1});
}

// Coincident points beyond max_leaf stop at max_level; separate splitting points.
TEST(SplitOctree, CappedDepthAndOwnSplittingPointsAreTheWholeTree) {
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<Vec3> sources, targets, splitting;
  for (int i = 0; i < 900; ++i) sources.push_back({u(rng), u(rng), 0.01 * u(rng)});
  for (int i = 0; i < 40; ++i) sources.push_back({0.25, -0.5, 0.0});
  for (int i = 0; i < 300; ++i) targets.push_back({u(rng), u(rng), u(rng)});
  for (int i = 0; i < 500; ++i) splitting.push_back({u(rng), 0.5 * u(rng), 0.01 * u(rng)});
  for (int i = 0; i < 30; ++i) splitting.push_back({0.25, -0.5, 0.0});
  const OctreeOptions capped{.max_leaf = 8, .max_level = 6};
  EXPECT_EQ(Octree(sources, targets, splitting, capped).levels(), 7) << "the cap is not reached";
  expect_split_tree_is_whole(sources, targets, &splitting, capped);
  expect_split_tree_is_whole(sources, targets, nullptr, capped);
}

// The union's checks: every rank throws where one rank's points are bad, or none has sources.
TEST(SplitOctree, ErrorsReachEveryRank) {
  const MpiPartReduction parts(MPI_COMM_WORLD);
  const bool last = world_rank() == world_size() - 1;
  std::vector<Vec3> points = {{0.0, 0.0, 0.0}, {1.0, 0.5, 0.25}};
  std::vector<Vec3> bad = points;
  if (last) bad[1].y = std::numeric_limits<double>::quiet_NaN();
  EXPECT_THROW(Octree(bad, points, points, {}, parts), Error);
  EXPECT_THROW(Octree(points, bad, bad, {}, parts), Error);
  const std::vector<Vec3> none;
  EXPECT_THROW(Octree(none, points, points, {}, parts), Error);
  // Sources on the last rank alone are sources of the union.
  const std::vector<Vec3>& some = last ? points : none;
  EXPECT_NO_THROW(Octree(some, some, some, {.max_leaf = 1}, parts));
}

TEST(DistributedFmmPartition, IsTheWholeProblemsPartition) {
  const int rank = world_rank(), size = world_size();
  const Elements e = two_spheres();
  for (const FmmOptions& options :
       {FmmOptions{.order = 8, .max_leaf = 16}, FmmOptions{.order = 16, .max_leaf = 5}}) {
    const FmmPartition whole(e.sources, e.targets, e.source_element, options, size);
    const ElementSlab own(e);
    const auto& [first, targets, sources, source_element] = own;
    const DistributedFmmPartition split(MPI_COMM_WORLD, sources, targets, source_element, first,
                                        options);
    EXPECT_TRUE(on_every_rank(whole.tree().cells() == split.tree().cells()));
    // The rank holds the lists of its own cells alone, the whole tree's.
    const std::vector<int> own_cells = split.partition().own_cells(rank);
    bool held = own_cells == whole.partition().locally_essential_tree(rank).own_cells;
    for (int c = 0; held && c < int(split.tree().cells().size()); ++c) {
      held = split.tree().holds_lists_of(c) ==
             std::binary_search(own_cells.begin(), own_cells.end(), c);
      if (held && split.tree().holds_lists_of(c))
        held = std::ranges::equal(whole.tree().near(c), split.tree().near(c)) &&
               std::ranges::equal(whole.tree().m2l(c), split.tree().m2l(c)) &&
               std::ranges::equal(whole.tree().w_list(c), split.tree().w_list(c)) &&
               std::ranges::equal(whole.tree().x_list(c), split.tree().x_list(c));
    }
    EXPECT_TRUE(on_every_rank(held)) << "the lists held: the own cells'";
    // Every leaf's readers, one at a time and in a batch (in reverse, with repeats), from the
    // lists held or formed: the whole tree's.
    std::vector<int> leaves(split.partition().leaves().rbegin(), split.partition().leaves().rend());
    leaves.insert(leaves.end(), leaves.begin(), leaves.begin() + leaves.size() / 2);
    const std::vector<std::vector<int>> batch = split.partition().readers_of_leaves(leaves);
    bool readers = batch.size() == leaves.size();
    for (std::size_t i = 0; readers && i < leaves.size(); ++i)
      readers = batch[i] == whole.partition().readers_of_leaf(leaves[i]) &&
                split.partition().readers_of_leaf(leaves[i]) == batch[i];
    EXPECT_TRUE(on_every_rank(readers)) << "the leaves' readers";
    bool cut = split.parts() == size && whole.partition().leaves() == split.partition().leaves();
    for (int q = 0; cut && q < size; ++q)
      cut = std::ranges::equal(whole.partition().leaves_of(q), split.partition().leaves_of(q)) &&
            whole.partition().work(q) == split.partition().work(q);
    EXPECT_TRUE(on_every_rank(cut)) << "the leaves' cut and the parts' work";
    // This rank's locally essential tree, the densities' lists included.
    const LocallyEssentialTree expected = whole.partition().locally_essential_tree(rank);
    const LocallyEssentialTree& let = split.locally_essential_tree();
    EXPECT_TRUE(on_every_rank(let.part == rank && let == expected))
        << "the LET's cells and densities";
    unsigned long long moved = let.received_densities();
    MPI_Allreduce(MPI_IN_PLACE, &moved, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (size > 1) EXPECT_GT(moved, 0u) << "no density moves: the lists are not tested";
    // The slab's parts and numbering, and the whole numbering gathered.
    const std::vector<std::size_t> order = whole.element_order();
    bool slab_answers = split.slab_parts().size() == targets.size() &&
                        split.slab_new_indices().size() == targets.size();
    for (std::size_t i = 0; slab_answers && i < targets.size(); ++i)
      slab_answers = split.slab_parts()[i] == whole.partition().part_of_element(first + i) &&
                     order[split.slab_new_indices()[i]] == first + i;
    EXPECT_TRUE(on_every_rank(slab_answers)) << "the slab's parts and new indices";
    EXPECT_TRUE(on_every_rank(split.part_sizes() == whole.part_sizes()));
    EXPECT_TRUE(on_every_rank(split.element_order() == order));
    // The tree of split points has no point orders: the elements' parts are the slabs' answers.
    EXPECT_FALSE(split.partition().knows_elements());
    EXPECT_THROW(split.partition().elements(0), Error);
    const std::vector<double> unit_work(split.tree().cells().size(), 1.0);
    EXPECT_THROW(TreePartition(split.tree(), unit_work, size, source_element), Error);
  }
}

// Wrong input on one rank: the same error on every rank, none left waiting.
TEST(DistributedFmmPartition, RejectsBadSlabsOnEveryRank) {
  const int rank = world_rank(), size = world_size();
  const Elements e = two_spheres();
  const FmmOptions options{.order = 8, .max_leaf = 16};
  const ElementSlab own(e);
  const auto& [first, targets, sources, source_element] = own;
  std::vector<std::size_t> outside = source_element;
  if (rank == size - 1) outside.back() = targets.size();  // the last slab is never empty
  EXPECT_THROW(DistributedFmmPartition(MPI_COMM_WORLD, sources, targets, outside, first, options),
               Error);
  const std::vector<std::size_t> short_list(source_element.begin(),
                                            source_element.end() - (rank == size - 1));
  EXPECT_THROW(
      DistributedFmmPartition(MPI_COMM_WORLD, sources, targets, short_list, first, options), Error);
  if (size > 1)  // every slab said to start at 0: they overlap
    EXPECT_THROW(
        DistributedFmmPartition(MPI_COMM_WORLD, sources, targets, source_element, 0, options),
        Error);
  EXPECT_NO_THROW(
      DistributedFmmPartition(MPI_COMM_WORLD, sources, targets, source_element, first, options));
}

}  // namespace
}  // namespace fmbem::fmm
