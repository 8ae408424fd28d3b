#pragma once
// The tables of a wideband FMM's diagonal levels (WidebandPlan's levels 2 .. switch + 1): per
// level its sphere grid, the transfer functions of its pair groups, the shift phases of its
// children's octants and the interpolation from its children's grid; at the conversion level
// (the last) the matrices between its low-frequency expansions and signatures. Built once with
// the Fmm; the executors read them. Not a public header.
#include <array>
#include <memory>
#include <vector>

#include "fmbem/fmm/high_frequency.hpp"
#include "fmbem/fmm/octree.hpp"
#include "fmbem/fmm/wideband_plan.hpp"

namespace fmbem::fmm {

// The bandwidth of a diagonal level of cell width w: the excess-bandwidth rule with a constant
// that grows towards the smallest k w the |t| >= 3w geometry allows (docs/wideband.md's table:
// 2.5 + 3.5 / (k w) covers every measured minimum there), at least 4.
int diagonal_level_bandwidth(double k, double width, double eps);

struct DiagonalLevels {
  struct Level {
    int level = 0;
    int first_cell = 0;  // the level's cells are ids [first_cell, first_cell + cells)
    std::size_t cells = 0;
    std::unique_ptr<SphereGrid> grid;
    // Per pair group of the plan's level, the transfer function (grid.size() each).
    std::vector<cplx> transfer;
    // Per child octant o, on this level's grid: exp(ik s . (P - c_o)) for the children's
    // outgoing signatures after interpolation, and exp(ik s . (c_o - P)) for the local one
    // before anterpolation (P this cell's centre, c_o its child's).
    std::array<std::vector<cplx>, 8> up_phases, down_phases;
    // From the next level's grid to this one's (null on the last level).
    std::unique_ptr<SphereInterpolator> from_children;
    std::size_t slot(int cell) const { return std::size_t(cell - first_cell); }
  };

  // `tree` is the plan's (the whole tree, or the distributed partition's tree of which the FMM
  // holds a part's view). wanted: per cell of the tree up to the conversion level, whether the
  // FMM's targets lie below it (empty: where the tree's do); the plan's pairs and the downward
  // pass keep those cells alone. held: per conversion-level cell (in level order), the FMM's
  // cell id holding its expansions, -1 where none (empty: the tree's own ids, the FMM holding
  // the whole tree).
  DiagonalLevels(const Octree& tree, WidebandPlan plan, double k, int order, double eps,
                 std::vector<char> wanted = {}, std::vector<int> held = {});

  WidebandPlan plan;
  // The tree's cells of levels 0 .. the conversion level (its ids), which of them hold sources
  // (any part's) and which targets of this FMM below; the conversion level's cells as the FMM
  // holds them.
  std::vector<Cell> cells;
  std::vector<char> has_sources, wanted;
  std::vector<int> held;
  // Whether the FMM holds a part's view: its conversion-level multipoles are partial sums then,
  // summed over the parts before the conversion, and its cell ids are not the tree's.
  bool part = false;
  std::vector<Level> levels;  // plan.levels' order: level 2 first
  // The conversion level's matrices: multipole -> signature (grid x p^2) and local signature ->
  // local coefficients (p^2 x grid), row-major.
  std::vector<cplx> to_signature, to_local;

  int first_level() const { return levels.front().level; }
  int conversion_level() const { return levels.back().level; }
  bool holds(int level) const { return level >= first_level() && level <= conversion_level(); }
  const Level& at(int level) const { return levels[std::size_t(level - first_level())]; }
  // Bytes of the tables (not of an apply's signatures).
  std::size_t bytes() const;
  // Entries of one apply's signature arrays (outgoing and local alike).
  std::size_t signature_entries() const;
};

}  // namespace fmbem::fmm
