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

  DiagonalLevels(const Octree& tree, WidebandPlan plan, double k, int order, double eps);

  WidebandPlan plan;
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
