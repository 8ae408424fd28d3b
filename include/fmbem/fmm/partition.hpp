#pragma once
#include <cstddef>
#include <functional>
#include <span>
#include <vector>

#include "fmbem/fmm/octree.hpp"

// The first piece of the distributed FMM: the octree's leaves cut into P parts of
// balanced work along the Morton curve, and for each part its locally essential tree, the remote
// data its lists read, as plain lists per peer on which an MPI exchange can be built. Nothing
// here communicates: every part computes what it receives and what it sends from the tree alone,
// and the two agree (part q's receive list from r is r's send list to q).
//
// The tree is the whole problem's, built as the FMM builds it (Fmm): sources the quadrature
// points, every element's collocation point a target and a splitting point. An element is a
// target (its input index); a source's strength comes from the density of one element
// (source_element), so a density moves where the source points of its element are read.
namespace fmbem::fmm {

// The cost of one MatMult's operations, in any unit (bench/partition_volume calibrates seconds
// of an H100); the defaults count near pairs alone.
struct WorkModel {
  double near_pair = 1.0;     // one source-target pair summed directly (U, W and X lists)
  double m2l_pair = 0.0;      // one M2L product, p^2 x p^2
  double source_point = 0.0;  // P2M (and the M2M it feeds), per source point of a leaf
  double target_point = 0.0;  // L2P (and the L2L before it), per target point of a leaf
};

// The operation counts the work model weighs, per cell id (Octree::cells()).
struct WorkCounts {
  // Leaves holding targets: their targets times the sources of their near lists (near, w_list,
  // x_list of every ancestor-or-self), the pairs Fmm sums; 0 elsewhere.
  std::vector<std::size_t> near_pairs;
  // Cells holding targets: the cells of m2l(c) holding sources, the M2L pairs of c (the pairs of
  // build_m2l_plan); 0 elsewhere.
  std::vector<std::size_t> m2l_pairs;
  // Leaves: the M2L pairs of the leaf and its ancestors' share, sum over a ancestor-or-self of
  // m2l_pairs[a] * targets(leaf) / targets(a). Over the leaves it sums to the pairs of the tree.
  std::vector<double> m2l_share;

  std::size_t total_near_pairs() const;
  std::size_t total_m2l_pairs() const;
};

WorkCounts count_work(const Octree& tree);
// The same counts, bit for bit, of a tree no part holds whole lists of (the tree of a split point
// set): part `part` of `parts` forms the lists of its share of the cells (cell ids in
// [cells * part / parts, cells * (part + 1) / parts)) and counts those, and one sum over the parts
// (three numbers a cell) gives every count to every part. Collective over the parts.
WorkCounts count_work(const Octree& tree, const Octree::PartReduction& reduction, int part,
                      int parts);

// Per cell id: a leaf's work under the model (near pairs, M2L share, its points); 0 for cells
// that are not leaves.
std::vector<double> leaf_work(const Octree& tree, const WorkCounts& counts, const WorkModel& model);

// The leaves in depth-first order (children in octant order): the Morton order of the leaves
// across levels, in which every cell's leaves are contiguous. (Octree::leaves() is by cell id,
// level by level.)
std::vector<int> depth_first_leaves(const Octree& tree);

// Cuts work (non-negative) into `parts` contiguous ranges whose largest sum is the smallest
// possible: returns parts + 1 cut positions, 0 = cuts[0] <= ... <= cuts[parts] = work.size(),
// part q holding [cuts[q], cuts[q + 1]). Keeping that optimum, each cut in turn is placed as near
// to its even share (q / parts of the total) as it allows, so parts are seldom left empty.
// The optimum is exact: the bottleneck value is found among the range sums (Nicol's method,
// O(parts^2 log^2 n)). Throws fmbem::Error for parts < 1 or a negative or non-finite work.
std::vector<std::size_t> min_max_cuts(std::span<const double> work, int parts);

// What one part of a TreePartition reads from and gives to the others at each MatMult.
// Per peer q (vectors of size parts, empty at q == part), ascending:
struct LocallyEssentialTree {
  int part = 0;
  // Cells with a leaf of this part below or equal to them, ascending: the part forms their
  // multipoles (only its own leaves' share where other parts own leaves below too) and the
  // local expansions of those that hold its targets.
  std::vector<int> own_cells;
  // Cells the part reads without owning them: the M2L sources whose multipoles it receives and
  // the cells of its near lists whose source points it sums (their geometry, sent once).
  std::vector<int> ghost_cells;
  // receive_multipoles[q]: cells whose partial multipole (q's leaves below them) this part's
  // M2L reads, at every level; the part adds the partials of all contributors to its own.
  std::vector<std::vector<int>> receive_multipoles;
  // send_multipoles[q]: cells of own_cells whose partial multipole q's M2L reads.
  std::vector<std::vector<int>> send_multipoles;
  // receive_densities[q]: elements owned by q whose source points this part reads (P2M of its
  // leaves, near lists of its targets).
  std::vector<std::vector<std::size_t>> receive_densities;
  // send_densities[q]: elements owned by this part whose source points q reads.
  std::vector<std::vector<std::size_t>> send_densities;
  // The work this part does at each MatMult: M2L pairs of every cell holding its targets (the
  // cells shared with other parts repeated by each of them) and its near pairs.
  std::size_t m2l_pairs = 0, near_pairs = 0;

  // own_cells and ghost_cells merged, ascending: the cells whose expansions the part holds (the
  // distributed CPU FMM stores only these, in this order: Fmm::expansion_slots).
  std::vector<int> expansion_cells() const;
  // send_multipoles (receive_multipoles) concatenated, peers ascending: the order of the
  // multipole exchange's packed buffers (MultipoleExchange, GpuMultipolePacking).
  std::vector<int> packed_send_cells() const;
  std::vector<int> packed_receive_cells() const;

  std::size_t received_multipoles() const;
  std::size_t received_densities() const;
  std::size_t sent_multipoles() const;
  std::size_t sent_densities() const;

  bool operator==(const LocallyEssentialTree&) const = default;
};

// The cells of `tree` (a whole tree, or a view of held cells of it) that a part's FMM reads,
// for the part's locally essential tree `let` (in the whole tree's cell ids) and its targets'
// leaves (cells of `tree`): `read`, per cell of tree, marks those whose source points it sums
// (its own leaves for P2M, the cells of its targets' near, W and X lists, every cell below
// them); `held` adds its own and ghost cells, the M2L sources of the cells holding its targets
// and the ancestors of all (ascending ids of tree: a view of held cells of them holds what the
// FMM reads). Throws fmbem::Error where tree lacks a cell of let or a list it reads.
struct PartCells {
  std::vector<char> read;
  std::vector<int> held;
};
PartCells cells_read_by_part(const Octree& tree, const LocallyEssentialTree& let,
                             std::span<const int> target_leaves);

// For a tree of points and their mirror images (image planes): per cell id, the leaf each leaf
// without targets follows in a TreePartition (leaders), the leaf holding the real point its
// centre mirrors (real_position: the identity on the real side); -1 for every other cell (a
// real leaf, or a mirror leaf whose mirrored centre finds no leaf, is cut on its own).
std::vector<int> mirror_leaders(const Octree& tree,
                                const std::function<Vec3(const Vec3&)>& real_position);

// The leaves of a tree cut into parts of balanced work along the Morton curve (min_max_cuts
// over depth_first_leaves), each element owned by the part owning the leaf of its target. A leaf
// may instead follow another (leaders): it then takes its leader's part, and its work counts
// with its leader's in the cut (with image planes a mirror image's leaf follows the real leaf it
// mirrors, so that a part's mirror sources are mostly its own elements'). Holds a reference to
// the tree, which must outlive it.
class TreePartition {
 public:
  // leaf_work: per cell id (leaf_work()); source_element: per source, the element (target index)
  // whose density it carries; leaders: empty, or per cell id -1 or, for a leaf, the leaf whose
  // part it takes (itself a leaf of leader -1: mirror_leaders). Throws fmbem::Error for
  // parts < 1, sizes that do not match the tree, an element index out of range or a leader that
  // is not a leaf of its own.
  TreePartition(const Octree& tree, std::span<const double> leaf_work, int parts,
                std::span<const std::size_t> source_element, std::span<const int> leaders = {});
  // The cut alone, for a tree without point orders (the tree of a split point set): the leaves'
  // parts, the work and the cell lists of locally_essential_tree; what is per element
  // (part_of_element, elements, the LET's densities) is left to the parts that hold the
  // elements (DistributedFmmPartition).
  TreePartition(const Octree& tree, std::span<const double> leaf_work, int parts,
                std::span<const int> leaders = {});
  bool knows_elements() const { return knows_elements_; }

  int parts() const { return parts_; }
  // Every leaf, depth-first.
  const std::vector<int>& leaves() const { return leaves_; }
  // The leaves a part owns, depth-first: without leaders a contiguous range of leaves().
  std::span<const int> leaves_of(int part) const {
    return std::span(part_leaves_)
        .subspan(part_leaf_offsets_[std::size_t(part)],
                 part_leaf_offsets_[std::size_t(part) + 1] - part_leaf_offsets_[std::size_t(part)]);
  }
  double work(int part) const { return part_work_[part]; }
  double max_work() const;
  double total_work() const;
  int part_of_leaf(int cell) const { return leaf_part_[cell]; }  // -1 for cells that are not leaves
  // Only with source_element given (knows_elements).
  int part_of_element(std::size_t element) const { return element_part_[element]; }
  // The elements (target indices) a part owns, ascending. Only with knows_elements.
  std::vector<std::size_t> elements(int part) const;
  // The parts that read the source points of `leaf`, ascending: its owner (P2M) and the owners
  // of the targets whose near lists hold it. A source's density moves to these. Any leaf: the
  // lists the tree does not hold are formed (Octree::list_of).
  std::vector<int> readers_of_leaf(int leaf) const;
  // readers_of_leaf of each of `leaves` (any order, repeats allowed), formed on the threads from
  // one colleague search (Octree::visit_near_source_lists_of).
  std::vector<std::vector<int>> readers_of_leaves(std::span<const int> leaves) const;
  // The cells with a leaf of `part` below or equal to them, ascending (the locally essential
  // tree's own_cells): their lists are all locally_essential_tree(part) reads.
  std::vector<int> own_cells(int part) const;

  // The densities' lists (receive_densities, send_densities) are filled only with
  // knows_elements, and are then empty otherwise. Reads the lists of own_cells(part) alone (with
  // knows_elements, also of the leaves of its elements' sources).
  LocallyEssentialTree locally_essential_tree(int part) const;

  // Per cell, the parts owning a leaf below or equal to it that holds targets (sources),
  // ascending: CSR.
  struct PartsBelow {
    std::vector<std::size_t> offsets;
    std::vector<int> parts;
  };

 private:
  std::vector<int> readers_from(int leaf, const Octree::NearSourceLists& lists) const;
  // The parts owning a leaf with targets (with_targets) or with sources below `cell`.
  template <class Visit>
  void for_parts_below(int cell, bool with_targets, Visit&& visit) const;

  const Octree& tree_;
  int parts_;
  bool knows_elements_ = false;
  std::vector<int> leaves_;
  // The parts' leaves, depth-first within each part: part q's from part_leaf_offsets_[q].
  std::vector<std::size_t> part_leaf_offsets_;
  std::vector<int> part_leaves_;
  std::vector<double> part_work_;
  std::vector<int> leaf_part_;
  std::vector<int> element_part_;
  PartsBelow target_parts_below_, source_parts_below_;
  std::vector<std::size_t> source_element_;
  // Per element: its sources, CSR.
  std::vector<std::size_t> element_source_offsets_, element_sources_;
  // Per source (input index): the leaf holding it.
  std::vector<int> source_leaf_;
};

}  // namespace fmbem::fmm
