#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <utility>
#include <vector>

#include "fmbem/core/vec3.hpp"

namespace fmbem::fmm {

struct OctreeOptions {
  // A cell splits while it holds more than max_leaf splitting points (see Octree).
  int max_leaf = 100;
  // Hard cap on depth, 0 .. 21: three 21-bit coordinates make a 63-bit Morton key.
  int max_level = 21;
  // Cells above this level split while they hold any point, so that no leaf lies above it (a
  // wideband FMM's diagonal levels then hold no leaves).
  int min_leaf_level = 0;
};

struct Cell {
  int level = 0;                // root = 0
  std::array<int, 3> coords{};  // integer coordinates at its level, 0 .. 2^level - 1
  Vec3 center;                  // geometric center
  int parent = -1;              // index into Octree::cells(), -1 for the root
  // Children are contiguous in cells(), in octant order; only non-empty ones are stored.
  int first_child = -1, num_children = 0;
  std::int16_t octant = 0;  // which child of its parent: bit0 = x, bit1 = y, bit2 = z high half
  // Whether the tree's cell has no children. A part's view holding some cells alone (Octree's
  // constructor with `cells`) may hold none of a cell's children: that cell is no leaf.
  bool leaf = true;
  std::size_t source_begin = 0, source_end = 0;  // range in the sorted source order
  std::size_t target_begin = 0, target_end = 0;  // range in the sorted target order

  bool is_leaf() const { return leaf; }
  friend bool operator==(const Cell&, const Cell&) = default;
};

namespace detail {
// One list of cell indices per cell, in CSR form.
struct CellLists {
  std::vector<std::size_t> offsets;  // size cells + 1
  std::vector<int> indices;

  std::span<const int> row(int cell) const {
    return std::span<const int>(indices).subspan(offsets[cell], offsets[cell + 1] - offsets[cell]);
  }
};
}  // namespace detail

// Adaptive octree over separate source and target points, with the interaction lists of the
// adaptive FMM (Carrier, Greengard, Rokhlin 1988): for a target in leaf T and a source in leaf S,
// exactly one of these accounts for the pair:
//   S in near(T)                                      direct sum
//   S inside some B in w_list(T)                      M2P (or P2P)
//   S inside some B in m2l(A), A ancestor-or-self of T  M2L, then L2L down to T
//   S inside some B in x_list(A), A ancestor-or-self of T  P2L, then L2L down to T
// Lists are geometric: they may name cells without sources (zero multipole) or without targets;
// callers skip those cheaply by their empty ranges.
//
// The shape (root cube, which cells split) is set by the splitting points, not by the targets,
// so that the parts of a split of the targets (MPI ranks owning rows) can each build the tree of
// the whole: pass all targets of the problem as splitting points and each part's own targets as
// targets. Cells then hold no targets where another part owns them.
class Octree {
 public:
  static constexpr int kMaxLevel = 21;
  static constexpr int kTransferCount = 343;  // 7^3 offsets in [-3, 3]^3

  // Sums and extremes over the parts of a point set split among processes (MPI ranks, one part
  // each: fmm::MpiPartReduction in distributed.hpp). Every part calls each in the same order.
  struct PartReduction {
    virtual ~PartReduction() = default;
    // In place: the smallest low and the largest high of all parts, per coordinate.
    virtual void extremes(std::array<double, 3>& low, std::array<double, 3>& high) const = 0;
    // In place: the element-wise sums of all parts' counts.
    virtual void sum(std::span<std::size_t> counts) const = 0;
  };

  // The root is the bounding cube of all points, enlarged by 1e-6 relative so no point sits on
  // its boundary; a cell splits while it holds more than max_leaf splitting points; a cell is
  // stored when it holds any point. The targets change the shape only where one lies in no cell
  // of the sources and splitting points: never when every target is also a splitting point.
  // Targets may be empty (a part that owns none). Throws fmbem::Error on empty sources or
  // splitting points, non-finite coordinates, max_leaf < 1 or max_level outside 0 .. 21.
  Octree(std::span<const Vec3> sources, std::span<const Vec3> targets,
         std::span<const Vec3> splitting_points, const OctreeOptions& options);
  // The targets are the splitting points.
  Octree(std::span<const Vec3> sources, std::span<const Vec3> targets, const OctreeOptions& options)
      : Octree(sources, targets, targets, options) {}
  // The tree of a point set split among parts, each passing its own points (any of them may be
  // empty on a part): cells(), the levels, the leaves and the lists are those of the Octree of
  // all parts' points (part 0's first, then part 1's, ...), bit for bit, and the cells' ranges are
  // positions in that union's sorted order; no part holds more than its points and the cells.
  // source_order() and target_order() are empty: a part finds its points' leaves by leaf_of,
  // or for the points it gave here by take_source_leaves() and take_target_leaves().
  // It holds no cell's interaction lists (each part keeps those of its own cells: hold_lists_of;
  // list_of forms any cell's). The checks above are made over the union, so every part throws the
  // same fmbem::Error.
  Octree(std::span<const Vec3> sources, std::span<const Vec3> targets,
         std::span<const Vec3> splitting_points, const OctreeOptions& options,
         const PartReduction& parts);

  // A part's view of a tree (the distributed FMM's: `shape` is then the tree of the split point
  // set, DistributedFmmPartition::tree): the cells, levels and leaves of `shape` (copied: the
  // ranges differ) and its lists (shared, not copied), with the part's own points sorted into them,
  // so that no part sorts or orders the whole problem's points. held_sources (ascending indices
  // into sources) and every target are sorted by their keys as the Octree of all points sorts them;
  // the cells' ranges are positions in those sorted points and source_order() holds indices into
  // sources, so a cell's points read as in any Octree, and a cell the part holds all points of has
  // them in the whole tree's order. sources_in_whole() keeps the whole problem's count (M2L must
  // not skip a cell whose sources are all another part's). Throws fmbem::Error where held_sources
  // is not ascending or out of range, a point is not finite, or a point lies in no cell of `shape`.
  Octree(const Octree& shape, std::span<const Vec3> sources,
         std::span<const std::size_t> held_sources, std::span<const Vec3> targets);

  // A part's view holding some of the cells of `shape` alone (the distributed FMM's: a rank's
  // FMMs keep the cells their part reads, not the whole tree's): `cells` are ascending ids of
  // shape's cells, the root first and every cell's parent among them, numbered 0, 1, ... in
  // that order, so that every order by cell id is kept. A cell's children are those of its
  // children held (contiguous still); is_leaf() stays the shape's. A held cell's lists are the
  // shape's renumbered where shape holds them and every entry is a held cell (reading another's
  // throws; a view of held cells forms no lists). Points as the view above, each in a held leaf.
  // Throws fmbem::Error where `cells` is not so, or as the view above.
  Octree(const Octree& shape, std::span<const int> cells, std::span<const Vec3> sources,
         std::span<const std::size_t> held_sources, std::span<const Vec3> targets);
  // A view of held cells: per cell, its id in the tree it was made from, and back (-1 where not
  // held). The identity on any other tree.
  bool holds_cell_subset() const { return !whole_cell_ids_.empty(); }
  int whole_cell_id(int cell) const {
    return whole_cell_ids_.empty() ? cell : whole_cell_ids_[std::size_t(cell)];
  }
  int cell_of_whole_id(int whole_cell) const;

  // Level by level (breadth-first), root first; within a level in Morton order.
  const std::vector<Cell>& cells() const { return cells_; }
  int levels() const { return int(level_begin_.size()) - 1; }  // deepest level + 1
  // Indices of the cells of one level, 0 <= level < levels(); they form a contiguous range.
  std::span<const int> cells_at_level(int level) const {
    return std::span<const int>(cell_ids_).subspan(level_begin_[level],
                                                   level_begin_[level + 1] - level_begin_[level]);
  }
  const std::vector<int>& leaves() const { return leaves_; }  // ascending
  double root_width() const { return root_width_; }
  Vec3 root_center() const { return root_center_; }
  double width(int level) const;  // root_width / 2^level
  const OctreeOptions& options() const { return options_; }

  // Sorted position -> original index. Points are sorted along the Morton (Z-order) curve, so
  // every cell's points are contiguous; equal keys keep their input order. Empty for the tree of
  // a split point set (the constructor with PartReduction).
  std::span<const std::size_t> source_order() const { return source_order_; }
  std::span<const std::size_t> target_order() const { return target_order_; }
  bool holds_point_orders() const { return holds_point_orders_; }
  // Whether this is a part's view (the constructor with `shape`): its ranges and orders are of
  // the part's points alone.
  bool is_part_view() const { return !whole_source_ranges_.empty(); }
  // A cell's sources in the whole problem's sorted order: its range, or in a part's view the
  // range of the tree it was made from (whose positions no part holds points for).
  std::array<std::size_t, 2> whole_source_range(int cell) const {
    return whole_source_ranges_.empty()
               ? std::array<std::size_t, 2>{cells_[cell].source_begin, cells_[cell].source_end}
               : whole_source_ranges_[cell];
  }
  std::size_t sources_in_whole(int cell) const {
    const auto [begin, end] = whole_source_range(cell);
    return end - begin;
  }

  // Per point, the leaf whose cube holds it by the tree's keys (the leaf a source or target at
  // that position is sorted into), or -1 where the tree has no cell for it: a point of none of
  // the point sets the tree was built from may fall outside every stored cell.
  std::vector<int> leaf_of(std::span<const Vec3> points) const;
  // The tree of a split point set: per source (target) this part gave the constructor, its
  // leaf, leaf_of's, read off the build's sorted points (no descents). Taken once: empty after,
  // and for any other tree.
  std::vector<int> take_source_leaves() { return std::exchange(given_source_leaves_, {}); }
  std::vector<int> take_target_leaves() { return std::exchange(given_target_leaves_, {}); }

  // Interaction lists, each sorted by cell index; empty where not defined for the cell. A tree
  // holds every cell's, except the tree of a split point set, which holds those hold_lists_of
  // kept: reading another cell's throws fmbem::Error (list_of forms it instead).
  // near(c), leaf c: the leaves adjacent to c (face, edge or corner; any level) and c (U list).
  std::span<const int> near(int cell) const { return lists_->near.row(held_row(cell)); }
  // m2l(c), any c: same-level children of the colleagues of c's parent, not adjacent to c (V).
  std::span<const int> m2l(int cell) const { return lists_->m2l.row(held_row(cell)); }
  // w_list(c), leaf c: descendants of c's colleagues that are not adjacent to c but whose parent
  // is (W list).
  std::span<const int> w_list(int cell) const { return lists_->w.row(held_row(cell)); }
  // x_list(c), any c: the leaves d with c in w_list(d) (X list).
  std::span<const int> x_list(int cell) const { return lists_->x.row(held_row(cell)); }

  enum class ListKind { near, m2l, w, x };
  // One list of any cell, held or not: formed from the cells alone (the colleagues of the cell
  // and its ancestors found from the root down), the same entries as the held list. For a part
  // that needs a few lists of cells it does not hold.
  std::vector<int> list_of(ListKind kind, int cell) const;
  // All four lists of any cell, held or not, from one colleague search (list_of forms one).
  struct CellListSet {
    std::vector<int> near, m2l, w, x;
  };
  CellListSet lists_of(int cell) const;
  // The lists of many cells (any order), each passed to visit(cell, lists) on the OpenMP threads
  // (visit must be safe to call concurrently): the colleagues of the cells and their ancestors
  // searched once, top-down, instead of from the root for each cell.
  void visit_lists_of(std::span<const int> cells,
                      const std::function<void(int, const CellListSet&)>& visit) const;
  // What for_each_near_source_cell visits for `leaf`, formed at once whether held or not (one
  // colleague search for the leaf and its ancestors): near(leaf), w_list(leaf), and the X lists
  // of the leaf and each of its ancestors, leaf first. Empty for a cell that is not a leaf.
  struct NearSourceLists {
    std::vector<int> near, w, x;
  };
  NearSourceLists near_source_lists_of(int leaf) const;
  // The same for many leaves (any order), each passed to visit(leaf, lists) on the OpenMP threads
  // (visit must be safe to call concurrently), from one top-down colleague search.
  void visit_near_source_lists_of(
      std::span<const int> leaves,
      const std::function<void(int, const NearSourceLists&)>& visit) const;
  // Keeps the lists of `cells` alone (any order; repeats allowed), formed as list_of forms them:
  // a part of a split point set holds its own cells' lists instead of the whole tree's (the
  // lists are most of a tree's bytes). Only on a tree that holds no lists yet and has no part's
  // views sharing them; throws fmbem::Error otherwise or for a cell out of range.
  void hold_lists_of(std::span<const int> cells);
  bool holds_lists_of(int cell) const {
    return lists_->row_of_cell.empty() || lists_->row_of_cell[cell] >= 0;
  }
  // The bytes of the held lists (indices, offsets and the map to their rows).
  std::size_t list_bytes() const;
  // The cells whose sources a target of `leaf` sums directly, each passed to visit(cell) in
  // this order: near(leaf), w_list(leaf), then x_list of leaf and of each of its ancestors.
  template <class Visit>
  void for_each_near_source_cell(int leaf, Visit&& visit) const {
    for (int c : near(leaf)) visit(c);
    for (int c : w_list(leaf)) visit(c);
    for (int a = leaf; a >= 0; a = cells_[a].parent)
      for (int c : x_list(a)) visit(c);
  }

  // Index in [0, 343) of the M2L offset coords(target) - coords(source), each component in
  // [-3, 3] (for m2l pairs at least one has magnitude >= 2).
  static constexpr int transfer_index(const std::array<int, 3>& target_coords,
                                      const std::array<int, 3>& source_coords) {
    return (target_coords[0] - source_coords[0] + 3) * 49 +
           (target_coords[1] - source_coords[1] + 3) * 7 +
           (target_coords[2] - source_coords[2] + 3);
  }

 private:
  void check_and_build(std::span<const Vec3> sources, std::span<const Vec3> targets,
                       std::span<const Vec3> splitting_points, const PartReduction& parts);
  void build_cells(std::span<const Vec3> sources, std::span<const Vec3> targets,
                   std::span<const Vec3> splitting_points, const PartReduction& parts);
  void build_lists();
  // The row of the held lists for `cell`; throws where they are not held.
  int held_row(int cell) const {
    if (lists_->row_of_cell.empty()) return cell;
    const int row = lists_->row_of_cell[cell];
    if (row < 0) throw_lists_not_held(cell);
    return row;
  }
  [[noreturn]] void throw_lists_not_held(int cell) const;
  // Sorts a part's held sources and its targets into the cells (the views' common part).
  void sort_part_points(std::span<const Vec3> sources, std::span<const std::size_t> held_sources,
                        std::span<const Vec3> targets);
  // Lists are formed from the colleagues of cells: not in a view of held cells alone.
  void check_lists_can_be_formed() const;
  void check_cell(int cell) const;
  // Per ancestor-or-self of `cell` (the cell first, the root last), its colleagues (same-level
  // adjacent cells and itself), ascending: found from the root down, each level's from its
  // parent's colleagues' children.
  std::vector<std::vector<int>> colleague_chain(int cell) const;
  // A cell's lists appended to the given, from its colleague chain (or a chain's tail from it).
  void form_near_and_w(int cell, std::span<const std::span<const int>> chain,
                       std::vector<int>& near, std::vector<int>& w) const;
  void form_m2l(int cell, std::span<const std::span<const int>> chain, std::vector<int>& m2l) const;
  // Whether the lists for_each_near_source_cell reads for `leaf` are held (its own and its
  // ancestors').
  bool holds_near_source_lists_of(int leaf) const;
  NearSourceLists near_source_lists_from(int leaf,
                                         std::span<const std::span<const int>> chain) const;
  void form_lists(int cell, std::span<const std::span<const int>> chain, CellListSet& lists) const;
  void form_x(int cell, std::span<const std::span<const int>> chain, std::vector<int>& x) const;

  OctreeOptions options_;
  Vec3 root_center_;
  double root_width_ = 0.0;
  std::vector<Cell> cells_;
  std::vector<int> level_begin_;  // cells of level l: [level_begin_[l], level_begin_[l + 1])
  std::vector<int> cell_ids_;     // 0 .. cells - 1, backs cells_at_level
  std::vector<int> leaves_;
  std::vector<std::size_t> source_order_, target_order_;
  bool holds_point_orders_ = true;
  // The tree of a split point set: the given points' leaves until taken.
  std::vector<int> given_source_leaves_, given_target_leaves_;
  // A part's view: per cell, its sources' range in the whole problem's sorted order.
  std::vector<std::array<std::size_t, 2>> whole_source_ranges_;
  // A view of held cells: per cell its id in the tree it was made from (ascending).
  std::vector<int> whole_cell_ids_;
  // Shared with the part's views made from this tree (they are of the same cells).
  struct Lists {
    detail::CellLists near, m2l, w, x;
    // Per cell its row in the lists, -1 where not held; empty where every cell's are held (row =
    // cell).
    std::vector<int> row_of_cell;
  };
  std::shared_ptr<const Lists> lists_;
};

// Whether a leaf of the tree lies above `level` (coarser).
bool holds_leaf_above(const Octree& tree, int level);

}  // namespace fmbem::fmm
