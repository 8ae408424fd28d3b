#pragma once
#include <cstddef>
#include <utility>
#include <vector>

#include "fmbem/core/vec3.hpp"
#include "fmbem/fmm/m2l_plan.hpp"
#include "fmbem/fmm/octree.hpp"

// Which cells of a tree interact in the high-frequency (diagonal) form of a wideband FMM, as
// plain data built once (docs/wideband.md). The levels whose cells are too large for the
// low-frequency expansions of order p (k sqrt(3) w > p) are high-frequency: their M2L pairs
// with a transfer vector of at least 3 cell widths are diagonal translations on the level's
// sphere grid, and the closer pairs, where the diagonal form breaks down, are deferred to their
// children, whose transfer vectors are then at least 3 child widths long. The level below the
// finest high-frequency one (the conversion level) keeps its low-frequency M2L and adds, in the
// diagonal form on its own grid, the pairs deferred to it; its multipoles become signatures and
// its local signatures local coefficients there. A deferred pair that meets a leaf, which has
// no children to defer to, is summed directly (direct_pairs). Together with the tree's near
// field and the low-frequency M2L of the levels below, every (target, source) pair is then
// accounted for exactly once (tests/unit/fmm/wideband_plan_test.cpp checks this point by point).
namespace fmbem::fmm {

// Transfer offsets of the diagonal levels, in cell widths, each component in [-5, 5]: a
// level's own pairs have components in [-3, 3], the pairs deferred from the parent up to 5.
inline constexpr int kWideTransferCount = 11 * 11 * 11;
constexpr int wide_transfer_index(const std::array<int, 3>& target_coords,
                                  const std::array<int, 3>& source_coords) {
  return (target_coords[0] - source_coords[0] + 5) * 121 +
         (target_coords[1] - source_coords[1] + 5) * 11 + (target_coords[2] - source_coords[2] + 5);
}
inline Vec3 wide_transfer_offset(int v) {
  return Vec3{double(v / 121 - 5), double(v / 11 % 11 - 5), double(v % 11 - 5)};
}

// One level's diagonal translations: L[target] += transfer[pair.matrix] .* F[source], pairs
// grouped by transfer vector (ascending), targets ascending within a group.
struct DiagonalLevelPlan {
  int level = 0;
  double width = 0.0;
  std::vector<int> transfer;  // per group: wide_transfer_index of its offset, ascending
  std::vector<M2LPair> pairs;
  std::vector<std::size_t> transfer_begin;  // the pairs of group g: [begin[g], begin[g + 1])
};

struct WidebandPlan {
  // The finest high-frequency level; -1 when every level's cells suit the low-frequency
  // expansions (no level is diagonal: the FMM is today's).
  int switch_level = -1;
  // Levels 2 .. switch_level + 1, coarse to fine (the last the conversion level: the pairs
  // deferred to it alone). Empty without a switch level.
  std::vector<DiagonalLevelPlan> levels;
  // (target leaf, source cell): the targets of the leaf summed directly with every source of
  // the cell (a deferred pair met a leaf). Sorted, no repeats.
  std::vector<std::pair<int, int>> direct_pairs;

  bool uses_diagonal_form() const { return switch_level >= 0; }
  // Whether the low-frequency M2L of tree.m2l runs at this level (above the conversion level
  // the high-frequency pairs replace it).
  bool low_frequency_m2l(int level) const { return level > switch_level; }
  std::size_t diagonal_pair_count() const;
};

// Whether cells of width w are too large for the low-frequency expansions of order p at k and
// accuracy eps: p < kd + 0.8 log10(1/eps)^(2/3) (kd)^(1/3), d = sqrt(3) w (the truncation must
// exceed k times the cell diagonal by the excess bandwidth of the diagonal form's rule, whose
// constant is lowered to 0.8 so that the k = 8 unit sphere at p = 11 and 1e-4, measured and
// calibrated by order_for_tolerance, stays low-frequency).
bool needs_high_frequency(double k, double width, int order, double eps);

// The smallest k w at which the diagonal form reaches eps for transfer vectors of at least 3
// cell widths (docs/wideband.md's measured table, log-linear in log10(eps) between its points,
// with a 10 % margin): the conversion level's cells must be at least this large.
double diagonal_far_min_kw(double eps);

// The switch level build_wideband_plan chooses (-1: none), from the tree's levels alone (any
// tree or part's view).
int wideband_switch_level(const Octree& tree, int order, double k, double eps);

// The low-frequency order a wideband FMM on this tree needs, at least `order`: raised where the
// level below the finest one that needs the diagonal form is too small for it (the
// low-frequency expansions must then serve that level), up to max_degree.
int wideband_order(const Octree& tree, int order, double k, double eps);

// The order each level's low-frequency M2L needs (per level of the tree): from first_level on,
// the smallest at least `floor` (the tolerance's) whose cells needs_high_frequency no longer
// finds too large, at most `order` (the FMM's, which the coarsest low-frequency level may need:
// wideband_order raises it for that level alone); `order` on the levels above.
std::vector<int> low_frequency_level_orders(const Octree& tree, int order, int floor, double k,
                                            double eps, int first_level);

// The plan for the tree (its lists: the whole tree's, not a part's view), the low-frequency
// order, k and the accuracy asked (needs_high_frequency). No diagonal level (switch_level -1) where
// every level suits the low-frequency expansions, or where the level below the finest one that does
// not is too small for the diagonal form at eps (or absent): the low-frequency FMM is then as good
// as it gets. A split point set's tree (the distributed partition's) serves too: the lists of
// the cells it does not hold are formed. Throws fmbem::Error for order < 1, k < 0 or non-finite,
// eps outside (0, 1), or a part's view of a tree.
WidebandPlan build_wideband_plan(const Octree& tree, int order, double k, double eps);

}  // namespace fmbem::fmm
