#pragma once
#include <array>
#include <cstddef>
#include <memory>
#include <span>
#include <vector>

#include "fmbem/core/vec3.hpp"
#include "fmbem/fmm/octree.hpp"
#include "fmbem/fmm/wavenumber.hpp"

// The M2L phase of the FMM as plain data, built once per tree: per level the
// dense p^2 x p^2 matrices of the transfer vectors in use (at most 316) and
// the pairs (target cell, source cell, matrix), so that
//   L[target] += T[matrix] M[source]
// for every pair. The CPU reference (apply_m2l_reference) and the GPU
// executor (gpu_m2l.hpp) read the same plan; multipole and local expansions
// are arrays of num_cells * p^2 coefficients, cell-major (cell id c owns
// [c p^2, (c + 1) p^2)).
namespace fmbem::fmm {

class RotationMultipoleToLocal;

// One product L[target] += T[matrix] M[source].
struct M2LPair {
  int target = 0;  // cell ids: indices into Octree::cells()
  int source = 0;
  int matrix = 0;  // index into M2LLevelPlan::transfer
  friend bool operator==(const M2LPair&, const M2LPair&) = default;
};

struct M2LLevelPlan {
  int level = 0;
  // The level's order: its translations read and write the coefficients of degree < order alone
  // (the leading order^2 of each cell's p^2: the matrices are zero beyond them); the plan's p
  // unless built with level orders.
  int order = 0;
  double sigma = 0.0;         // the cell width of the level; T is built for t = offset * sigma
  std::vector<int> transfer;  // per matrix: Octree::transfer_index of its offset, ascending
  // transfer.size() matrices of p^2 x p^2, row-major, one after another; empty in a plan built
  // without host matrices (GpuM2L builds its own on the device) or translating by rotation.
  std::vector<cplx> matrices;
  // The translations by rotation (rotation_translations.hpp, O(p^3) a pair, vector m the
  // transfer of matrix m) where the plan's host M2L uses them instead of the matrices.
  std::shared_ptr<const RotationMultipoleToLocal> rotations;
  // Grouped by matrix (ascending), targets ascending within a group, as the CPU FMM batches them.
  std::vector<M2LPair> pairs;
  // The pairs of matrix m: [matrix_begin[m], matrix_begin[m + 1]).
  std::vector<std::size_t> matrix_begin;

  std::size_t matrix_count() const { return transfer.size(); }
};

struct M2LPlan {
  int order = 0;  // p: expansions hold p^2 coefficients
  Wavenumber k;
  std::size_t num_cells = 0;  // of the octree: expansion arrays hold num_cells * p^2 entries
  // Per cell id, the geometry that the blocking schemes group by: the integer coordinates at the
  // cell's level and the parent's id (-1 for the root).
  std::vector<std::array<int, 3>> coords;
  std::vector<int> parent;
  // The levels with at least one pair, coarse to fine.
  std::vector<M2LLevelPlan> levels;

  int coefficients() const { return order * order; }
  std::size_t pair_count() const;
  // Real floating-point operations of one apply: 8 per complex multiply-add, p^4 per pair.
  double flops() const;
};

// The offset coords(target) - coords(source) of transfer index v (Octree::transfer_index), in
// cell widths: T of matrix m of a level is built for t = transfer_offset(transfer[m]) * sigma.
inline Vec3 transfer_offset(int v) {
  return Vec3{double(v / 49 - 3), double(v / 7 % 7 - 3), double(v % 7 - 3)};
}

// The order from which the host's M2L translates by rotation instead of by dense matrices.
// Measured on one thread (fmm_matmult -L 5 -k 8, the 2-core machine under load), M2L apply
// seconds dense / rotation: p = 8 0.117 / 0.077, 11 0.40 / 0.11, 12 0.49 / 0.21, 16 1.94 / 0.29,
// 21 6.2 / 1.09, and the set-up 0.17 / 0.02 (p = 8) to 27.5 / 0.9 s (p = 21); the tables
// about p^3 / 3 instead of 316 p^4 complex entries a level. Up to max_rotation_order.
inline constexpr int rotation_m2l_min_order = 8;

// The M2L pairs of the FMM on this tree: for each level >= 2, target c and source s in
// tree.m2l(c) with c holding targets and s holding sources (the pairs the CPU FMM applies);
// T from MultipoleToLocalTable with t = offset * tree.width(level), on the host unless
// host_matrices is false (the GPU executor builds them on the device); levels from first_level
// (a wideband FMM's coarser levels translate in the diagonal form); host translations by
// rotation from rotation_min_order (the plan's p decides, each level's rotations of its own
// order); level_orders (per tree level, each at most p; empty: p everywhere) truncates each
// level's translations to its order. Throws fmbem::Error for p outside 1 .. max_degree, k < 0 or
// level orders outside 1 .. p.
M2LPlan build_m2l_plan(const Octree& tree, int order, Wavenumber k, bool host_matrices = true,
                       int first_level = 2, int rotation_min_order = rotation_m2l_min_order,
                       std::span<const int> level_orders = {});

// local[c] += sum over the pairs (c, s, m) of T[m] multipole[s], all levels; OpenMP over target
// cells, each thread summing its targets' pairs in plan order (matrix by matrix), so the result
// does not depend on the thread count. Throws fmbem::Error for a plan without host translations.
void apply_m2l_reference(const M2LPlan& plan, const cplx* multipole, cplx* local);

}  // namespace fmbem::fmm
