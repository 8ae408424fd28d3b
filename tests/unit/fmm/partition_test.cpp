#include "fmbem/fmm/partition.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <numeric>
#include <ostream>
#include <random>
#include <vector>

#include "fmbem/core/error.hpp"
#include "fmbem/fmm/fmm.hpp"
#include "fmbem/fmm/m2l_plan.hpp"
#include "fmbem/mesh/mesh.hpp"
#include "fmbem/quadrature/triangle_rule.hpp"
#include "surface_elements.hpp"

// The partition and the locally essential tree of the distributed FMM, with P parts simulated in
// one process: the cutting is the optimum of contiguous cuttings, the work counts are the FMM's,
// send and receive lists agree, and each part's potentials computed from its own data plus its
// locally essential tree alone equal those of the whole FMM.
namespace fmbem::fmm {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// ---- min_max_cuts ----

// The optimum of contiguous cuttings by dynamic programming over every cutting:
// best[q][j] = min over i of max(best[q - 1][i], sum(i, j)), the sums as prefix differences
// (min_max_cuts' own range sums, so that the two compare exactly).
double brute_force_bottleneck(const std::vector<double>& work, int parts) {
  const std::size_t n = work.size();
  std::vector<double> prefix(n + 1, 0.0);
  for (std::size_t i = 0; i < n; ++i) prefix[i + 1] = prefix[i] + work[i];
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<double> best(n + 1, inf), next(n + 1);
  best[0] = 0.0;
  for (int q = 0; q < parts; ++q) {
    for (std::size_t j = 0; j <= n; ++j) {
      next[j] = inf;
      for (std::size_t i = 0; i <= j; ++i)
        next[j] = std::min(next[j], std::max(best[i], prefix[j] - prefix[i]));
    }
    best.swap(next);
  }
  return best[n];
}

// The largest part of a cutting, as prefix differences; checks that the cuts are a cutting.
double largest_part(const std::vector<double>& work, const std::vector<std::size_t>& cuts,
                    int parts) {
  EXPECT_EQ(cuts.size(), std::size_t(parts + 1));
  EXPECT_EQ(cuts.front(), 0u);
  EXPECT_EQ(cuts.back(), work.size());
  EXPECT_TRUE(std::is_sorted(cuts.begin(), cuts.end()));
  std::vector<double> prefix(work.size() + 1, 0.0);
  for (std::size_t i = 0; i < work.size(); ++i) prefix[i + 1] = prefix[i] + work[i];
  double largest = 0.0;
  for (int q = 0; q < parts; ++q)
    largest = std::max(largest, prefix[cuts[q + 1]] - prefix[cuts[q]]);
  return largest;
}

TEST(MinMaxCuts, IsTheOptimumOfAllContiguousCuttings) {
  // Exact equality: both take the smallest feasible value among the same prefix differences,
  // and feasibility under a bottleneck is decided by the same monotone comparisons (the greedy
  // cutting is optimal whenever a range's sum grows with its end and falls with its start, which
  // rounded prefix differences do). Integer weights make every sum exact as well; real weights
  // check that nothing relies on that.
  std::mt19937_64 rng(13);
  std::uniform_int_distribution<int> size(1, 40), parts_of(1, 9), integer(0, 20), spike(0, 9);
  std::uniform_real_distribution<double> real(0.0, 1.0);
  for (int trial = 0; trial < 400; ++trial) {
    const std::size_t n = size(rng);
    const int parts = parts_of(rng);
    std::vector<double> work(n);
    for (double& w : work) {
      w = trial % 2 ? double(integer(rng)) : real(rng);
      if (spike(rng) == 0) w *= 50.0;  // a leaf heavier than a whole part
    }
    const std::vector<std::size_t> cuts = min_max_cuts(work, parts);
    EXPECT_EQ(largest_part(work, cuts, parts), brute_force_bottleneck(work, parts))
        << "trial " << trial << ", n " << n << ", parts " << parts;
  }
}

TEST(MinMaxCuts, WithinOneLeafOfTheEvenShare) {
  // Cutting where the running sum crosses q W / P gives parts of at most W / P + w_max (a part
  // ends at the first leaf past its share), and no cutting beats W / P or w_max; the optimum
  // lies between: max(W / P, w_max) <= largest <= W / P + w_max. So the optimum is also within
  // one leaf's work of the even share. The sums' rounding (n eps W) is far below the margin
  // 1e-9 W allowed here.
  std::mt19937_64 rng(7);
  std::lognormal_distribution<double> heavy_tailed(0.0, 1.5);
  for (int parts : {1, 2, 3, 7, 16, 64}) {
    std::vector<double> work(3000);
    for (double& w : work) w = heavy_tailed(rng);
    const double total = std::accumulate(work.begin(), work.end(), 0.0);
    const double heaviest = *std::max_element(work.begin(), work.end());
    const double largest = largest_part(work, min_max_cuts(work, parts), parts);
    EXPECT_GE(largest, std::max(total / parts, heaviest) * (1 - 1e-9)) << parts;
    EXPECT_LE(largest, total / parts + heaviest + 1e-9 * total) << parts;
  }
}

TEST(MinMaxCuts, SpreadsEqualWorkEvenly) {
  // 100 equal leaves in 7 parts: the optimum is 15 leaves, and cuts nearest to q * 100 / 7
  // give parts of 14 or 15 leaves, none empty.
  const std::vector<double> work(100, 1.0);
  const std::vector<std::size_t> cuts = min_max_cuts(work, 7);
  for (int q = 0; q < 7; ++q) {
    EXPECT_GE(cuts[q + 1] - cuts[q], 14u) << q;
    EXPECT_LE(cuts[q + 1] - cuts[q], 15u) << q;
  }
  // More parts than leaves: every leaf alone, the other parts empty.
  const std::vector<std::size_t> few = min_max_cuts(std::vector<double>{3.0, 1.0, 2.0}, 5);
  EXPECT_EQ(largest_part({3.0, 1.0, 2.0}, few, 5), 3.0);
}

TEST(MinMaxCuts, RejectsBadInput) {
  EXPECT_THROW(min_max_cuts(std::vector<double>{1.0}, 0), Error);
  EXPECT_THROW(min_max_cuts(std::vector<double>{1.0, -1.0}, 2), Error);
  EXPECT_THROW(min_max_cuts(std::vector<double>{1.0, kNaN}, 2), Error);
}

// ---- geometry: surface elements as the BEM gives them to the FMM ----

using test::add_surface;
using test::Elements;

// Uniform: one icosphere.
Elements sphere(int level) {
  Elements e;
  add_surface(make_icosphere(level, 1.0), e);
  return e;
}

// Adaptive: a unit sphere and one 500 times smaller beside it, so that leaves of very different
// levels touch and the W and X lists are long.
Elements two_spheres() {
  Elements e;
  add_surface(make_icosphere(3, 1.0), e);
  add_surface(make_icosphere(2, 0.002, Vec3{0.9, 0.3, -0.2}), e);
  return e;
}

// Sources apart from their elements: each element's density carried by another triangle's Gauss
// points (a random permutation), moved out to a sphere of radius 2.5. Leaves there hold sources
// and no targets, so their owners read densities for P2M alone (in the BEM this happens only
// at leaf borders), and densities travel far from their owners.
Elements detached_sources() {
  Elements e = sphere(2);
  std::vector<std::size_t> permutation(e.targets.size());
  std::iota(permutation.begin(), permutation.end(), std::size_t(0));
  std::shuffle(permutation.begin(), permutation.end(), std::mt19937_64(3));
  for (std::size_t& element : e.source_element) element = permutation[element];
  for (Vec3& source : e.sources) source = 2.5 * source;
  return e;
}

// Image planes: the quarter of a sphere in x > 0, z > 0 (the elements whose centroid lies there)
// with its mirror images across x = 0 and z = 0, as the distributed BEM gives them: every image's
// sources are sources of the real element (image-major), the targets are the real centroids, the
// mirror centroids split the tree too.
Elements mirrored_quarter(int level = 3) {
  Elements real;
  add_surface(make_icosphere(level, 1.0), real);
  Elements e;
  std::vector<std::size_t> kept;
  for (std::size_t i = 0; i < real.targets.size(); ++i)
    if (real.targets[i].x > 0.0 && real.targets[i].z > 0.0) kept.push_back(i);
  std::vector<std::size_t> new_index(real.targets.size(), 0);
  for (std::size_t i : kept) {
    new_index[i] = e.targets.size();
    e.targets.push_back(real.targets[i]);
    e.target_normals.push_back(real.target_normals[i]);
  }
  const auto reflect = [](int image, Vec3 x) {
    if (image & 1) x.x = -x.x;
    if (image & 2) x.z = -x.z;
    return x;
  };
  for (int image = 0; image < 4; ++image) {
    for (std::size_t j = 0; j < real.sources.size(); ++j) {
      const std::size_t element = real.source_element[j];
      if (!(real.targets[element].x > 0.0 && real.targets[element].z > 0.0)) continue;
      e.sources.push_back(reflect(image, real.sources[j]));
      e.normals.push_back(reflect(image, real.normals[j]));
      e.source_element.push_back(new_index[element]);
    }
    if (image > 0)
      for (const Vec3& t : e.targets) e.mirror_targets.push_back(reflect(image, t));
  }
  e.real_position = [reflect](const Vec3& x) {
    return reflect((x.x < 0.0 ? 1 : 0) | (x.z < 0.0 ? 2 : 0), x);
  };
  return e;
}

Octree whole_tree(const Elements& e, int max_leaf) {
  return Octree(e.sources, e.targets, e.splitting(), OctreeOptions{max_leaf});
}

// The leaders of mirror_leaders where the elements have mirror images, else none.
std::vector<int> leaders_of(const Octree& tree, const Elements& e) {
  return e.real_position ? mirror_leaders(tree, e.real_position) : std::vector<int>();
}

// ---- work counts, leaf order, partition ----

TEST(PartitionWork, CountsAreTheFmmsPairs) {
  // The near pairs are what Fmm sums (its statistics), the M2L pairs those of its plan; the
  // shares of the M2L pairs spread over the leaves add up to them (each share a product and
  // quotient of counts: relative rounding of a few eps per leaf, 1e-12 allows 4000 eps).
  for (const Elements& e : {sphere(3), two_spheres()}) {
    const int max_leaf = 10;
    const Octree tree = whole_tree(e, max_leaf);
    const WorkCounts counts = count_work(tree);
    const Fmm fmm(2.0, e.sources, e.normals, e.targets, e.targets,
                  FmmOptions{.order = 4, .max_leaf = max_leaf});
    EXPECT_EQ(counts.total_near_pairs(), fmm.statistics().near_pairs);
    EXPECT_EQ(counts.total_m2l_pairs(), build_m2l_plan(tree, 4, 2.0).pair_count());
    const double shares = std::accumulate(counts.m2l_share.begin(), counts.m2l_share.end(), 0.0);
    EXPECT_NEAR(shares, double(counts.total_m2l_pairs()), 1e-12 * shares);
    const std::vector<double> work =
        leaf_work(tree, counts, WorkModel{.near_pair = 1.0, .m2l_pair = 0.0});
    EXPECT_EQ(std::accumulate(work.begin(), work.end(), 0.0), double(counts.total_near_pairs()));
  }
}

// The Morton key at the finest level of a cell's lowest corner.
std::uint64_t corner_key(const Cell& c) {
  std::uint64_t key = 0;
  const int shift = Octree::kMaxLevel - c.level;
  for (int bit = 0; bit < Octree::kMaxLevel; ++bit)
    for (int dim = 0; dim < 3; ++dim)
      key |= std::uint64_t((std::int64_t(c.coords[dim]) << shift >> bit) & 1) << (3 * bit + dim);
  return key;
}

TEST(PartitionWork, DepthFirstLeavesAreTheMortonOrder) {
  // Every leaf once, their corners' Morton keys strictly increasing (leaves are disjoint), and
  // so each cell's leaves contiguous.
  const Octree tree = whole_tree(two_spheres(), 10);
  const std::vector<int> leaves = depth_first_leaves(tree);
  std::vector<int> sorted = leaves;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(sorted, tree.leaves());
  for (std::size_t l = 1; l < leaves.size(); ++l)
    EXPECT_LT(corner_key(tree.cells()[leaves[l - 1]]), corner_key(tree.cells()[leaves[l]])) << l;
}

TEST(TreePartition, CoversEveryLeafOnceAtTheOptimum) {
  const Elements e = two_spheres();
  const Octree tree = whole_tree(e, 10);
  const std::vector<double> work =
      leaf_work(tree, count_work(tree), WorkModel{.near_pair = 1.0, .m2l_pair = 50.0});
  for (int parts : {1, 2, 3, 8, 40}) {
    const TreePartition partition(tree, work, parts, e.source_element);
    EXPECT_EQ(partition.leaves(), depth_first_leaves(tree));
    std::vector<double> ordered;
    for (int leaf : partition.leaves()) ordered.push_back(work[leaf]);
    // The parts' work is summed leaf by leaf, the optimum is a difference of prefix sums: the
    // same values added in another order, n eps W apart at most (n < 2000 leaves: 4.4e-13).
    const double optimum = brute_force_bottleneck(ordered, parts);
    EXPECT_NEAR(partition.max_work(), optimum, 1e-12 * optimum) << parts;
    std::vector<int> owners(tree.cells().size(), -1);
    std::vector<int> element_owner(e.targets.size(), -1);
    // Without leaders each part's leaves are the next contiguous range of leaves().
    std::size_t next_leaf = 0;
    for (int q = 0; q < parts; ++q) {
      double sum = 0.0;
      for (int leaf : partition.leaves_of(q)) {
        EXPECT_EQ(leaf, partition.leaves()[next_leaf++]);
        EXPECT_EQ(owners[leaf], -1);
        owners[leaf] = q;
        sum += work[leaf];
        EXPECT_EQ(partition.part_of_leaf(leaf), q);
      }
      EXPECT_EQ(partition.work(q), sum);
      for (std::size_t element : partition.elements(q)) {
        EXPECT_EQ(element_owner[element], -1);
        element_owner[element] = q;
        EXPECT_EQ(partition.part_of_element(element), q);
      }
    }
    for (int leaf : tree.leaves()) EXPECT_GE(owners[leaf], 0);
    EXPECT_EQ(std::count(element_owner.begin(), element_owner.end(), -1), 0);
  }
}

TEST(TreePartition, RejectsBadInput) {
  const Elements e = sphere(1);
  const Octree tree = whole_tree(e, 4);
  const std::vector<double> work = leaf_work(tree, count_work(tree), WorkModel{});
  EXPECT_THROW(TreePartition(tree, work, 0, e.source_element), Error);
  EXPECT_THROW(TreePartition(tree, std::vector<double>(3, 1.0), 2, e.source_element), Error);
  EXPECT_THROW(TreePartition(tree, work, 2, std::vector<std::size_t>(5, 0)), Error);
  std::vector<std::size_t> out_of_range = e.source_element;
  out_of_range[7] = e.targets.size();
  EXPECT_THROW(TreePartition(tree, work, 2, out_of_range), Error);
  const TreePartition partition(tree, work, 2, e.source_element);
  EXPECT_THROW(partition.locally_essential_tree(2), Error);
}

TEST(TreePartition, MirrorLeavesGoWithTheRealLeavesTheyMirror) {
  // With image planes the Morton cut alone gives the mirror octants' leaves (sources, no
  // targets) to the parts that come first along the curve, which then read nearly every
  // element's density for their P2M; following the real leaves keeps a part's mirror sources its
  // own elements'.
  const Elements e = mirrored_quarter(4);
  const Octree tree = whole_tree(e, 8);
  const std::vector<double> work =
      leaf_work(tree, count_work(tree), WorkModel{.near_pair = 1.0, .m2l_pair = 30.0});
  const std::vector<int> leaders = mirror_leaders(tree, e.real_position);
  const auto& cells = tree.cells();
  std::size_t followers = 0, mirror_leaves = 0;
  for (int leaf : tree.leaves()) {
    const Cell& cell = cells[std::size_t(leaf)];
    const bool mirror = cell.center.x < 0.0 || cell.center.z < 0.0;
    mirror_leaves += mirror;
    const int leader = leaders[std::size_t(leaf)];
    if (leader < 0) continue;
    ++followers;
    // A follower is a mirror leaf (no targets); its leader a real one holding the point its
    // centre mirrors.
    EXPECT_TRUE(mirror);
    EXPECT_EQ(cell.target_end, cell.target_begin);
    const Vec3 leader_centre = cells[std::size_t(leader)].center;
    EXPECT_FALSE(leader_centre.x < 0.0 || leader_centre.z < 0.0);
    EXPECT_EQ(leaders[std::size_t(leader)], -1);
    EXPECT_EQ(tree.leaf_of(std::vector<Vec3>{e.real_position(cell.center)})[0], leader);
  }
  // The tree of a point set and its images is symmetric: every mirror leaf finds its real one.
  EXPECT_EQ(followers, mirror_leaves) << "every mirror leaf follows a real one";
  // The elements not its own whose sources a part's leaves hold (its P2M reads their densities).
  const auto foreign_in_own_leaves = [&](const TreePartition& partition, int q) {
    std::vector<char> read(e.targets.size(), 0);
    for (int leaf : partition.leaves_of(q))
      for (std::size_t i = cells[std::size_t(leaf)].source_begin;
           i < cells[std::size_t(leaf)].source_end; ++i) {
        const std::size_t element = e.source_element[tree.source_order()[i]];
        read[element] = partition.part_of_element(element) != q;
      }
    return std::size_t(std::count(read.begin(), read.end(), 1));
  };
  for (int parts : {2, 3, 4}) {
    const TreePartition cut(tree, work, parts, e.source_element);
    const TreePartition followed(tree, work, parts, e.source_element, leaders);
    double total = 0.0;
    std::size_t moved_cut = 0, moved_followed = 0, p2m_cut = 0, p2m_followed = 0;
    for (int q = 0; q < parts; ++q) {
      total += followed.work(q);
      for (int leaf : followed.leaves_of(q)) {
        EXPECT_EQ(followed.part_of_leaf(leaf), q);
        if (leaders[std::size_t(leaf)] >= 0)
          EXPECT_EQ(followed.part_of_leaf(leaders[std::size_t(leaf)]), q);
      }
      moved_cut += cut.locally_essential_tree(q).received_densities();
      moved_followed += followed.locally_essential_tree(q).received_densities();
      p2m_cut += foreign_in_own_leaves(cut, q);
      p2m_followed += foreign_in_own_leaves(followed, q);
    }
    // The same leaves' work, summed in another order.
    EXPECT_NEAR(total, cut.total_work(), 1e-12 * total);
    // A part's P2M reads the elements of its border's source points alone with the leaders, a
    // whole mirror octant's without (measured, 1248 elements, 2 / 3 / 4 parts: 17 / 72 / 57
    // against 627 / 1271 / 1597); the near lists read the border's as without planes, so all
    // densities moved fall less (189 / 930 / 1061 against 711 / 1690 / 2346).
    std::printf(
        "%d parts: elements read by P2M off their part %zu with leaders, %zu without; "
        "densities moved %zu, %zu; of %zu elements\n",
        parts, p2m_followed, p2m_cut, moved_followed, moved_cut, e.targets.size());
    EXPECT_LT(10 * p2m_followed, p2m_cut) << parts << " parts";
    EXPECT_LT(moved_followed, moved_cut) << parts << " parts";
  }
}

TEST(TreePartition, RejectsLeadersThatAreNotLeavesOfTheirOwn) {
  const Elements e = mirrored_quarter();
  const Octree tree = whole_tree(e, 8);
  const std::vector<double> work = leaf_work(tree, count_work(tree), WorkModel{});
  const std::vector<int> leaders = mirror_leaders(tree, e.real_position);
  EXPECT_THROW(TreePartition(tree, work, 2, std::vector<int>(3, -1)), Error);
  const auto follower = std::find_if(leaders.begin(), leaders.end(), [](int l) { return l >= 0; });
  ASSERT_NE(follower, leaders.end());
  const int leaf = int(follower - leaders.begin()), leader = *follower;
  std::vector<int> bad = leaders;
  bad[std::size_t(leaf)] = 0;  // the root is no leaf
  EXPECT_THROW(TreePartition(tree, work, 2, bad), Error);
  bad = leaders;
  bad[std::size_t(leader)] = leaf;  // a leader that follows its follower
  EXPECT_THROW(TreePartition(tree, work, 2, bad), Error);
  bad = leaders;
  bad[std::size_t(leaf)] = leaf;
  EXPECT_THROW(TreePartition(tree, work, 2, bad), Error);
}

// ---- the locally essential tree ----

std::vector<LocallyEssentialTree> all_parts(const TreePartition& partition) {
  std::vector<LocallyEssentialTree> lets;
  for (int q = 0; q < partition.parts(); ++q) lets.push_back(partition.locally_essential_tree(q));
  return lets;
}

TEST(LocallyEssentialTree, SendListsAreTheTransposeOfReceiveLists) {
  // Each part finds what it sends from the lists read backwards (m2l and near symmetric, x_list
  // the inverse of w_list), independently of what the others find they receive.
  const Elements geometries[] = {sphere(3), two_spheres(), detached_sources(), mirrored_quarter()};
  for (const Elements& e : geometries) {
    const Octree tree = whole_tree(e, 8);
    const std::vector<int> leaders = leaders_of(tree, e);
    const WorkCounts counts = count_work(tree);
    const std::vector<double> work =
        leaf_work(tree, counts, WorkModel{.near_pair = 1.0, .m2l_pair = 30.0});
    for (int parts : {1, 2, 3, 5, 8, 13}) {
      const TreePartition partition(tree, work, parts, e.source_element, leaders);
      const std::vector<LocallyEssentialTree> lets = all_parts(partition);
      std::size_t near_pairs = 0, m2l_pairs = 0, messages = 0;
      for (int r = 0; r < parts; ++r) {
        near_pairs += lets[r].near_pairs;
        m2l_pairs += lets[r].m2l_pairs;
        EXPECT_TRUE(lets[r].receive_multipoles[r].empty() && lets[r].send_densities[r].empty());
        for (int q = 0; q < parts; ++q) {
          EXPECT_EQ(lets[r].send_multipoles[q], lets[q].receive_multipoles[r]) << r << "->" << q;
          EXPECT_EQ(lets[r].send_densities[q], lets[q].receive_densities[r]) << r << "->" << q;
          messages += !lets[r].send_multipoles[q].empty() + !lets[r].send_densities[q].empty();
        }
      }
      // The near field is split without repetition; M2L is repeated only on the cells whose
      // targets several parts own.
      EXPECT_EQ(near_pairs, counts.total_near_pairs());
      EXPECT_GE(m2l_pairs, counts.total_m2l_pairs());
      if (parts == 1) EXPECT_EQ(m2l_pairs, counts.total_m2l_pairs());
      EXPECT_EQ(messages == 0, parts == 1) << parts;
    }
  }
}

// One part's potentials with the CPU FMM restricted to the data the part holds. The FMM's
// shared upward pass hands its multipoles to a callback before M2L: there the part's array is
// replaced by its own partial multipoles plus those it receives (cells it neither owns nor
// receives become NaN), and the strengths of the elements it neither owns nor receives are NaN.
// Anything it reads that it does not have turns its potentials into NaN or changes them.
class DistributedFmm {
 public:
  static constexpr int kMaxLeaf = 8;
  static constexpr double kWavenumber = 2.0;

  DistributedFmm(const Elements& e, int parts)
      : e_(e),
        tree_(whole_tree(e, kMaxLeaf)),
        splitting_(e.splitting()),
        partition_(
            tree_,
            leaf_work(tree_, count_work(tree_), WorkModel{.near_pair = 1.0, .m2l_pair = 30.0}),
            parts, e.source_element, leaders_of(tree_, e)),
        lets_(all_parts(partition_)) {
    std::mt19937_64 rng(5);
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    for (std::size_t i = 0; i < e.targets.size(); ++i) density_.push_back(cplx(u(rng), u(rng)));
    for (std::size_t j = 0; j < e.sources.size(); ++j) weight_.push_back(u(rng));
    available_.resize(parts);
    for (int r = 0; r < parts; ++r) {
      available_[r].assign(e.targets.size(), 0);
      for (std::size_t element : partition_.elements(r)) available_[r][element] = 1;
      for (const auto& from_peer : lets_[r].receive_densities)
        for (std::size_t element : from_peer) available_[r][element] = 1;
    }
  }

  const Octree& tree() const { return tree_; }
  const TreePartition& partition() const { return partition_; }
  const LocallyEssentialTree& let(int part) const { return lets_[part]; }
  std::vector<char>& available(int part) { return available_[part]; }

  FmmOptions options() const { return FmmOptions{.order = 5, .max_leaf = kMaxLeaf}; }

  // Point strengths from the densities (weight times density, charge and dipole alike); where a
  // part does not have an element's density, NaN. Sources outside `only` (if given) are 0.
  void strengths(const std::vector<char>* has, const std::vector<char>* only,
                 std::vector<cplx>& charges, std::vector<cplx>& dipoles) const {
    charges.assign(e_.sources.size(), 0.0);
    dipoles.assign(e_.sources.size(), 0.0);
    for (std::size_t j = 0; j < e_.sources.size(); ++j) {
      if (only && !(*only)[j]) continue;
      const std::size_t element = e_.source_element[j];
      const cplx value = !has || (*has)[element] ? weight_[j] * density_[element] : cplx(kNaN);
      charges[j] = value;
      dipoles[j] = 0.5 * value;
    }
  }

  // Part q's partial multipoles: P2M of the sources in its own leaves (with the densities it
  // has) and M2M. The FMM's upward pass split in halves: each half's array is captured where it
  // is combined, and the two are summed.
  std::vector<cplx> partial_multipoles(int q) const {
    std::vector<char> in_part(e_.sources.size(), 0);
    for (int own_leaf : partition_.leaves_of(q)) {
      const Cell& leaf = tree_.cells()[own_leaf];
      for (std::size_t i = leaf.source_begin; i < leaf.source_end; ++i)
        in_part[tree_.source_order()[i]] = 1;
    }
    std::vector<cplx> charges, dipoles;
    strengths(&available_[q], &in_part, charges, dipoles);
    Fmm fmm(kWavenumber, e_.sources, e_.normals, e_.targets, splitting_, options());
    std::vector<cplx> sum, potential(e_.targets.size());
    for (int half = 0; half < 2; ++half) {
      fmm.share_upward_pass(half, 2, [&](std::span<cplx> multipoles) {
        if (sum.empty()) sum.assign(multipoles.size(), 0.0);
        for (std::size_t i = 0; i < multipoles.size(); ++i) sum[i] += multipoles[i];
      });
      fmm.apply(charges, dipoles, potential);
    }
    return sum;
  }

  // Part r's potentials at its elements (ascending). multipole(c) gives the whole multipole of
  // cell c as the part assembles it; has: the densities it has (null: all).
  template <class Multipole>
  std::vector<cplx> part_potentials(int r, const std::vector<char>* has,
                                    Multipole&& multipole) const {
    const std::vector<std::size_t> elements = partition_.elements(r);
    std::vector<Vec3> targets;
    for (std::size_t element : elements) targets.push_back(e_.targets[element]);
    Fmm fmm(kWavenumber, e_.sources, e_.normals, targets, splitting_, options());
    same_tree(fmm.tree());
    const std::size_t size = std::size_t(fmm.order()) * fmm.order();
    fmm.share_upward_pass(0, 2, [&](std::span<cplx> multipoles) {
      for (std::size_t c = 0; c < tree_.cells().size(); ++c)
        multipole(int(c), &multipoles[c * size]);
    });
    std::vector<cplx> charges, dipoles, potential(targets.size());
    strengths(has, nullptr, charges, dipoles);
    fmm.apply(charges, dipoles, potential);
    return potential;
  }

  // The whole FMM's potentials at part r's elements.
  std::vector<cplx> whole_potentials(int r) const {
    const Fmm fmm(kWavenumber, e_.sources, e_.normals, e_.targets, splitting_, options());
    std::vector<cplx> charges, dipoles, potential(e_.targets.size()), out;
    strengths(nullptr, nullptr, charges, dipoles);
    fmm.apply(charges, dipoles, potential);
    for (std::size_t element : partition_.elements(r)) out.push_back(potential[element]);
    return out;
  }

 private:
  // The part's FMM must number its cells as the partition's tree does.
  void same_tree(const Octree& other) const {
    ASSERT_EQ(other.cells().size(), tree_.cells().size());
    for (std::size_t c = 0; c < tree_.cells().size(); ++c) {
      const Cell &a = other.cells()[c], &b = tree_.cells()[c];
      ASSERT_TRUE(a.level == b.level && a.coords == b.coords && a.parent == b.parent &&
                  a.num_children == b.num_children && a.source_begin == b.source_begin &&
                  a.source_end == b.source_end)
          << c;
    }
  }

  const Elements& e_;
  Octree tree_;
  std::vector<Vec3> splitting_;
  TreePartition partition_;
  std::vector<LocallyEssentialTree> lets_;
  std::vector<cplx> density_;
  std::vector<double> weight_;
  std::vector<std::vector<char>> available_;
};

bool all_finite(const std::vector<cplx>& values) {
  return std::all_of(values.begin(), values.end(),
                     [](cplx v) { return std::isfinite(v.real()) && std::isfinite(v.imag()); });
}

bool any_nan(const std::vector<cplx>& values) { return !all_finite(values); }

// Per cell, the parts whose partial multipoles part r adds: its own (cells it owns) and its
// senders', ascending.
std::vector<std::vector<int>> providers(const LocallyEssentialTree& let, std::size_t cells) {
  std::vector<std::vector<int>> out(cells);
  for (int c : let.own_cells) out[c].push_back(let.part);
  for (std::size_t q = 0; q < let.receive_multipoles.size(); ++q)
    for (int c : let.receive_multipoles[q]) out[c].push_back(int(q));
  for (auto& list : out) std::sort(list.begin(), list.end());
  return out;
}

struct Case {
  const char* name;
  Elements (*geometry)();
  int parts;
};

// gtest prints parameters in CTest's test names: readable and the same in every build (its
// default prints the struct's bytes, a function pointer included).
void PrintTo(const Case& c, std::ostream* os) { *os << c.name << ", " << c.parts << " parts"; }

class LetExactness : public ::testing::TestWithParam<Case> {};

TEST_P(LetExactness, EachPartsPotentialsFromItsOwnDataAndItsLetAreTheWholeFmms) {
  const Elements e = GetParam().geometry();
  const int parts = GetParam().parts;
  DistributedFmm fmm(e, parts);
  const std::size_t cells = fmm.tree().cells().size();
  const std::size_t size = std::size_t(fmm.options().order) * fmm.options().order;
  std::vector<std::vector<cplx>> partials;
  for (int q = 0; q < parts; ++q) {
    partials.push_back(fmm.partial_multipoles(q));
    // NaN here would be a density P2M reads that the part does not have.
    EXPECT_TRUE(all_finite(partials[q])) << "part " << q;
  }
  double largest_difference = 0.0, largest = 0.0;
  for (int r = 0; r < parts; ++r) {
    const auto from = providers(fmm.let(r), cells);
    // Every part's partials, summed in part order: the multipoles of the whole, as the LET run
    // sums them (partials of parts with no leaf below a cell are exact zeros).
    const std::vector<cplx> reference = fmm.part_potentials(r, nullptr, [&](int c, cplx* m) {
      for (std::size_t k = 0; k < size; ++k) {
        m[k] = 0.0;
        for (int q = 0; q < parts; ++q) m[k] += partials[q][c * size + k];
      }
    });
    const std::vector<cplx> distributed =
        fmm.part_potentials(r, &fmm.available(r), [&](int c, cplx* m) {
          for (std::size_t k = 0; k < size; ++k) {
            m[k] = from[c].empty() ? cplx(kNaN) : cplx(0.0);
            for (int q : from[c]) m[k] += partials[q][c * size + k];
          }
        });
    ASSERT_TRUE(all_finite(distributed)) << "part " << r << " reads data it does not have";
    // The same operations on the same values: equal to the last bit.
    EXPECT_EQ(distributed, reference) << "part " << r;
    const std::vector<cplx> whole = fmm.whole_potentials(r);
    for (std::size_t i = 0; i < whole.size(); ++i) {
      largest_difference = std::max(largest_difference, std::abs(reference[i] - whole[i]));
      largest = std::max(largest, std::abs(whole[i]));
    }
  }
  // Against the whole FMM only the order of the multipoles' sums differs: where a cell is cut
  // between parts its children's translated moments are added part by part, then the parts'
  // sums added. Per coefficient that is at most (8 children + P parts) roundings of eps times
  // the moments' magnitude (Higham, sums), and with random-sign strengths a cell's moment is no
  // smaller than about its children's over sqrt(8): relative 21 * 1.1e-16 * 3 = 7e-15 on the
  // far field of those cells, below 1e-13 of the largest potential (measured 1e-20 to 2e-16).
  EXPECT_LE(largest_difference, 1e-13 * largest);
}

TEST_P(LetExactness, NothingInTheLetIsUnused) {
  // Taking away a received item (NaN in its place) must show: a received multipole in the
  // part's potentials, a received density in its potentials or in the partial multipoles it
  // forms (P2M of its own leaves). Up to 4 items of each kind per part, spread over its lists.
  const Elements e = GetParam().geometry();
  const int parts = GetParam().parts;
  DistributedFmm fmm(e, parts);
  const std::size_t cells = fmm.tree().cells().size();
  const std::size_t size = std::size_t(fmm.options().order) * fmm.options().order;
  std::vector<std::vector<cplx>> partials;
  for (int q = 0; q < parts; ++q) partials.push_back(fmm.partial_multipoles(q));
  int checked_cells = 0, checked_densities = 0;
  for (int r = 0; r < parts; ++r) {
    const LocallyEssentialTree& let = fmm.let(r);
    const auto from = providers(let, cells);
    std::vector<std::pair<int, int>> received;  // (peer, cell)
    std::vector<std::size_t> densities;
    for (int q = 0; q < parts; ++q) {
      for (int c : let.receive_multipoles[q]) received.push_back({q, c});
      for (std::size_t element : let.receive_densities[q]) densities.push_back(element);
    }
    for (int k = 0; k < 4 && !received.empty(); ++k) {
      const auto [peer, cell] = received[received.size() * k / 4];
      const std::vector<cplx> potential =
          fmm.part_potentials(r, &fmm.available(r), [&](int c, cplx* m) {
            for (std::size_t i = 0; i < size; ++i) {
              m[i] = from[c].empty() ? cplx(kNaN) : cplx(0.0);
              for (int q : from[c])
                m[i] += q == peer && c == cell ? cplx(kNaN) : partials[q][c * size + i];
            }
          });
      EXPECT_TRUE(any_nan(potential)) << "part " << r << " does not read cell " << cell;
      ++checked_cells;
    }
    for (int k = 0; k < 4 && !densities.empty(); ++k) {
      const std::size_t element = densities[densities.size() * k / 4];
      fmm.available(r)[element] = 0;
      const std::vector<cplx> own_partial = fmm.partial_multipoles(r);
      const std::vector<cplx> potential =
          fmm.part_potentials(r, &fmm.available(r), [&](int c, cplx* m) {
            for (std::size_t i = 0; i < size; ++i) {
              m[i] = from[c].empty() ? cplx(kNaN) : cplx(0.0);
              for (int q : from[c]) m[i] += partials[q][c * size + i];
            }
          });
      fmm.available(r)[element] = 1;
      EXPECT_TRUE(any_nan(potential) || any_nan(own_partial))
          << "part " << r << " does not read element " << element;
      ++checked_densities;
    }
  }
  if (parts > 1) EXPECT_GT(checked_cells * checked_densities, 0);
}

INSTANTIATE_TEST_SUITE_P(
    Parts, LetExactness,
    ::testing::Values(Case{"sphere_2", [] { return sphere(3); }, 2},
                      Case{"sphere_5", [] { return sphere(3); }, 5},
                      Case{"two_spheres_3", two_spheres, 3}, Case{"two_spheres_7", two_spheres, 7},
                      Case{"detached_5", detached_sources, 5},
                      Case{"detached_13", detached_sources, 13},
                      Case{"mirrored_3", [] { return mirrored_quarter(); }, 3},
                      Case{"mirrored_6", [] { return mirrored_quarter(); }, 6}),
    [](const auto& info) { return std::string(info.param.name); });

TEST(LocallyEssentialTree, TheAdaptiveCaseCrossesPartsThroughTheWAndXLists) {
  // So that LetExactness on two_spheres covers them: some target leaf reads, through its W or X
  // lists, sources of elements another part owns.
  const Elements e = two_spheres();
  DistributedFmm fmm(e, 7);
  const Octree& tree = fmm.tree();
  const auto& cells = tree.cells();
  std::size_t remote_w = 0, remote_x = 0;
  const auto remote_sources = [&](int cell, int part) {
    std::size_t n = 0;
    for (std::size_t i = cells[cell].source_begin; i < cells[cell].source_end; ++i)
      n += fmm.partition().part_of_element(e.source_element[tree.source_order()[i]]) != part;
    return n;
  };
  for (int leaf : tree.leaves()) {
    if (cells[leaf].target_begin == cells[leaf].target_end) continue;
    const int part = fmm.partition().part_of_leaf(leaf);
    for (int s : tree.w_list(leaf)) remote_w += remote_sources(s, part);
    for (int a = leaf; a >= 0; a = cells[a].parent)
      for (int s : tree.x_list(a)) remote_x += remote_sources(s, part);
  }
  EXPECT_GT(remote_w, 0u);
  EXPECT_GT(remote_x, 0u);
}

}  // namespace
}  // namespace fmbem::fmm
