#pragma once
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "fmbem/bem/density_reconstruction.hpp"
#include "fmbem/bem/discretization.hpp"
#include "fmbem/bem/layer_potentials.hpp"
#include "fmbem/core/uninitialized_vector.hpp"

namespace fmbem {

// The regular rule turns a piecewise-constant density into point sources:
// quadrature point q of element e carries weight_q * density[e] (empty in,
// empty out). points: the strengths of these quadrature points alone, in that order (what a
// part of the distributed FMM reads: fmm::Fmm::strength_sources); empty: of every point.
// point_columns: the density's entry of each listed point (a part's column space,
// LayerPotentials::column_elements); empty: its element.
std::vector<cplx> point_strengths(const Discretization& disc, std::span<const cplx> density,
                                  std::span<const std::size_t> points = {},
                                  std::span<const std::int32_t> point_columns = {});

// The same for the quadratic read of a density (DensityReconstruction): quadrature point q of
// element e carries weight_q * (u_e + sum over m of c_{e,m} monomial_m(y_q)), c = R u. A sparse
// matrix built once, one row per point, whose columns are e's stencil for every point of e: one
// sparse product per apply.
class ReconstructedPointStrengths {
 public:
  ReconstructedPointStrengths(const Discretization& disc,
                              const DensityReconstruction& reconstruction);
  // Not copied: the columns may view this object's own renumbered array.
  ReconstructedPointStrengths(const ReconstructedPointStrengths&) = delete;
  ReconstructedPointStrengths& operator=(const ReconstructedPointStrengths&) = delete;

  // Empty in, empty out. points: of these alone, in that order (their elements fitted); empty:
  // of every point.
  std::vector<cplx> operator()(std::span<const cplx> density,
                               std::span<const std::size_t> points = {}) const;

  // The stencils' columns renumbered to their entries in a column space
  // (LayerPotentials::column_elements): densities then have columns.elements().size() entries. A
  // stencil member outside it becomes -1, so a point is then asked for only where
  // reads_columns_only.
  void renumber_columns(const ColumnEntries& columns);
  // Whether the strengths of `points` read columns of the column space alone.
  bool reads_columns_only(std::span<const std::size_t> points) const;

  // The matrix (for the GPU): point q = e * points_per_element() + l has the columns
  // stencil_columns()[stencil_starts()[e] .. stencil_starts()[e + 1]) and, at the same positions,
  // values()[stencil_starts()[e] * points_per_element() + l * length ...], length the stencil's.
  std::span<const std::int64_t> stencil_starts() const { return starts_; }
  std::span<const std::int32_t> stencil_columns() const { return columns_; }
  std::span<const double> values() const { return values_; }
  std::size_t points_per_element() const { return per_element_; }
  std::size_t points() const { return (starts_.size() - 1) * per_element_; }

 private:
  // Point q's strength (the same sum, in the same order, whichever caller).
  cplx strength(std::span<const cplx> density, std::size_t q) const;

  std::size_t per_element_;
  std::span<const std::int64_t> starts_;
  std::span<const std::int32_t> columns_;  // the reconstruction's, or renumbered_columns_
  std::vector<std::int32_t> renumbered_columns_;
  // Written whole (each row zeroed first) by the thread that forms it.
  UninitializedVector<double> values_;
};

// The element normal at each quadrature point (dipole directions).
std::vector<Vec3> quadrature_point_normals(const Discretization& disc);

}  // namespace fmbem
