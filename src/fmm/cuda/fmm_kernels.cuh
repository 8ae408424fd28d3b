#pragma once
// The FMM's far-field kernels besides M2L (P2M, M2M, L2L, L2P) and their launches (not a public
// header). Points are in tree (Morton) order, one double array a coordinate; strengths and
// potentials in input order; complex numbers are double2 (re, im); expansions are p^2
// coefficients a cell, cell c at c p^2.
#include <cuda_runtime.h>

#include <cstddef>

namespace fmbem::fmm::cuda {

// A leaf that P2M or L2P visits: its centre, its level's width, its cell index and its point
// range (sources for P2M, targets for L2P) in tree order.
struct LeafItem {
  double cx, cy, cz, sigma;
  int cell, level, begin, end;
};

// One term of grad Rhat (GradientTerm) with its coefficient conjugated, as P2M applies it.
struct GradientItem {
  double2 coefficient;  // conj(GradientTerm::coefficient)
  int source, q;
};

// The recurrence coefficients of the normalised Legendre functions (expansions.cpp), for
// degrees 0..max_n: diagonal and first by m, a and b by coefficient_index(n, m), m >= 0.
struct LegendreTable {
  double p00 = 0.0;
  const double *diagonal = nullptr, *first = nullptr, *a = nullptr, *b = nullptr;
};

struct P2MArgs {
  const LeafItem* leaves = nullptr;  // block b: leaves[b]
  const double *sx = nullptr, *sy = nullptr, *sz = nullptr;
  const double *nx = nullptr, *ny = nullptr, *nz = nullptr;
  const int* source_order = nullptr;                     // tree position i is source order[i]
  const double2 *charges = nullptr, *dipoles = nullptr;  // input order; null: zero
  // Dipoles: per level, offsets (p^2 + 1 of them) into terms by target coefficient.
  const int* gradient_offsets = nullptr;
  const GradientItem* gradient = nullptr;
  LegendreTable legendre;
  double2* multipole = nullptr;  // the leaves' moments are overwritten
  double k = 0.0;
  bool screened = false;  // k is kappa of the screened kernel exp(-kappa r) / (4 pi r)
  int order = 0;
};
void launch_p2m(const P2MArgs& args, int leaves, cudaStream_t stream);

// One term of grad Rhat as L2P applies it: Lq[slot] += coefficient L[target], slot =
// (q + 1) (p + 1)^2 + coefficient_index(a, m - q) (GradientTerm, coefficient unconjugated).
struct LocalGradientItem {
  double2 coefficient;
  int target, unused = 0;
};

struct L2PArgs {
  const LeafItem* leaves = nullptr;
  const double *tx = nullptr, *ty = nullptr, *tz = nullptr;
  const int* target_order = nullptr;
  LegendreTable legendre;
  const double2* local = nullptr;
  double2* potential = nullptr;  // potential[target] += the local expansion at the target
  double k = 0.0;
  bool screened = false;  // k is kappa of the screened kernel exp(-kappa r) / (4 pi r)
  int order = 0;
  // With target normals (tree order; null: phi alone) potential[target] += phi + weight n . grad
  // phi: per level, offsets (3 (p+1)^2 + 1 of them) into gradient by slot; g[q + 1] the
  // vectors g_q of harmonic_gradient as complex (x, y, z) components.
  const double *nx = nullptr, *ny = nullptr, *nz = nullptr;
  const int* gradient_offsets = nullptr;
  const LocalGradientItem* gradient = nullptr;
  double2 weight{0.0, 0.0};
  double2 gx[3] = {}, gy[3] = {}, gz[3] = {};
  // With target normals, apart: potential[target] += phi and potential[targets + target] +=
  // n . grad phi (the weight unused).
  bool apart = false;
  int targets = 0;
};
void launch_l2p(const L2PArgs& args, int leaves, cudaStream_t stream);

// One level of M2M or L2L for tiles of parent cells: for each tile slot t and octant o,
//   out[out_cell[8 t + o]] += A_o in[in_cell[8 t + o]]   (skipped where either is -1)
// with A_o column-major (entry (i, j) at o p^4 + j p^2 + i), octants in order 0..7. M2M:
// in = the children, out = the parent; L2L: in = the parent, out = the children.
struct ShiftArgs {
  const int* in_cell = nullptr;
  const int* out_cell = nullptr;
  const double2* matrices = nullptr;
  const double2* in = nullptr;
  double2* out = nullptr;
  int order = 0;
};
// slots: tile slots of 8 (in, out) entries; up to max_parents_per_block of them share a block
// (fewer where the level has too few parents to fill the GPU).
void launch_shift(const ShiftArgs& args, int slots, int max_parents_per_block, cudaStream_t stream);
// The most parents per block launch_shift may use for order p (shared memory).
int shift_parents_per_block(int order);

}  // namespace fmbem::fmm::cuda
