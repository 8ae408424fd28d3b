#pragma once
#include <array>
#include <cstddef>
#include <span>

#include "fmbem/core/vec3.hpp"
#include "fmbem/fmm/wavenumber.hpp"

namespace fmbem::fmm {

// The near field of an FMM plan: the direct sum over the point pairs of the U, W and X lists,
//   phi(x_i) += sum_j G(x_i - y_j) q_j + dG/dn_y(x_i, y_j) d_j,  G = exp(ikr) / (4 pi r)
// (k imaginary: the screened kernel),
// pairs closer than skip_radius skipped. A view of arrays that the plan (Fmm) owns: the source
// points in the order the lists read them, the targets in input order with the tree's (Morton)
// permutation, and per target leaf its targets and the source ranges summed for them, as
// positions in those orders.
struct NearFieldLists {
  Wavenumber k;
  double skip_radius = 0.0;
  // Position i holds source source_order[i] (its input index, where its strengths are): the
  // sources the lists read, in tree (Morton) order; all of them (the tree's permutation) or,
  // where the targets are a part of the problem's, the read ones alone. sources and normals are
  // by position (source_order.size() each; normals may be empty: no dipoles).
  std::span<const Vec3> sources, normals;
  std::span<const std::size_t> source_order;
  // The problem's sources: the length of the strength arrays (input order) the sum reads.
  std::size_t source_count = 0;
  std::span<const Vec3> targets;              // input order
  std::span<const std::size_t> target_order;  // tree position i holds target target_order[i]
  // Target leaf l: targets at tree positions [leaf_targets[l][0], leaf_targets[l][1]), sources
  // at the source_order positions of ranges[offsets[l]], ..., ranges[offsets[l + 1] - 1]
  // ([begin, end)).
  std::span<const std::array<std::size_t, 2>> leaf_targets;
  std::span<const std::size_t> offsets;
  std::span<const std::array<std::size_t, 2>> ranges;
  // With target normals (input order) the sum is phi + target_normal_weight n_t . grad phi:
  // the adjoint double layer's kernel dG/dn_x for the charges, the hypersingular
  // d^2G/dn_x dn_y for the dipoles (TargetNormalDerivative).
  std::span<const Vec3> target_normals;
  cplx target_normal_weight = 0.0;
  // With target normals: phi at potential[t] and n_t . grad phi at potential[targets.size() + t]
  // (TargetNormalDerivative::apart; the weight unused).
  bool derivative_apart = false;

  // Source-target point pairs (skipped ones included).
  std::size_t pair_count() const;
};

// potential[t] += the near field at target t (input order) on the CPU, OpenMP-parallel over the
// target leaves (PointSources' vectorised loop); charges or dipoles may be empty.
void add_near_field_cpu(const NearFieldLists& lists, std::span<const cplx> charges,
                        std::span<const cplx> dipoles, std::span<cplx> potential);

}  // namespace fmbem::fmm
