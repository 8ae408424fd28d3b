#include "fmbem/bem/point_strengths.hpp"

#include <algorithm>
#include <utility>

#include "fmbem/core/error.hpp"

namespace fmbem {

std::vector<cplx> point_strengths(const Discretization& disc, std::span<const cplx> density,
                                  std::span<const std::size_t> points,
                                  std::span<const std::int32_t> point_columns) {
  if (density.empty()) return {};
  if (!point_columns.empty() && point_columns.size() != points.size())
    throw Error("point strengths: a density entry per listed point expected");
  const std::size_t m = disc.points_per_element();
  const std::size_t count = points.empty() ? disc.quadrature_points().size() : points.size();
  std::vector<cplx> strengths(count);
#pragma omp parallel for schedule(static)
  for (std::size_t i = 0; i < count; ++i) {
    const std::size_t q = points.empty() ? i : points[i];
    const std::size_t column = point_columns.empty() ? q / m : std::size_t(point_columns[i]);
    strengths[i] = disc.quadrature_weights()[q] * density[column];
  }
  return strengths;
}

ReconstructedPointStrengths::ReconstructedPointStrengths(
    const Discretization& disc, const DensityReconstruction& reconstruction)
    : per_element_(disc.points_per_element()),
      starts_(reconstruction.stencil_starts()),
      columns_(reconstruction.stencil_columns()),
      values_(columns_.size() * per_element_) {
  const std::size_t m = per_element_, n = disc.size();
#pragma omp parallel for schedule(static)
  for (std::size_t e = 0; e < n; ++e) {
    const std::span<const std::int32_t> stencil = reconstruction.stencil(e);
    const std::size_t length = stencil.size();
    if (length == 0) continue;  // not fitted (a part's reconstruction): its points are not read
    const std::size_t self = std::size_t(
        std::lower_bound(stencil.begin(), stencil.end(), std::int32_t(e)) - stencil.begin());
    for (std::size_t l = 0; l < m; ++l) {
      const std::size_t q = e * m + l;
      double monomial[DensityReconstruction::kTerms];
      reconstruction.monomials(e, disc.quadrature_points()[q], monomial);
      double* row = values_.data() + std::size_t(starts_[e]) * m + l * length;
      std::fill(row, row + length, 0.0);
      row[self] = 1.0;
      for (int t = 0; t < DensityReconstruction::kTerms; ++t) {
        const std::span<const double> c = reconstruction.coefficients(e, t);
        for (std::size_t s = 0; s < length; ++s) row[s] += monomial[t] * c[s];
      }
      for (std::size_t s = 0; s < length; ++s) row[s] *= disc.quadrature_weights()[q];
    }
  }
}

cplx ReconstructedPointStrengths::strength(std::span<const cplx> density, std::size_t q) const {
  const std::size_t m = per_element_, e = q / m, l = q % m;
  const std::size_t begin = std::size_t(starts_[e]), length = std::size_t(starts_[e + 1]) - begin;
  const double* row = values_.data() + begin * m + l * length;
  cplx sum{};
  for (std::size_t s = 0; s < length; ++s)
    sum += row[s] * density[std::size_t(columns_[begin + s])];
  return sum;
}

std::vector<cplx> ReconstructedPointStrengths::operator()(
    std::span<const cplx> density, std::span<const std::size_t> points) const {
  if (density.empty()) return {};
  const std::size_t count = points.empty() ? this->points() : points.size();
  std::vector<cplx> strengths(count);
#pragma omp parallel for schedule(static)
  for (std::size_t i = 0; i < count; ++i)
    strengths[i] = strength(density, points.empty() ? i : points[i]);
  return strengths;
}

void ReconstructedPointStrengths::renumber_columns(const ColumnEntries& columns) {
  std::vector<std::int32_t> renumbered(columns_.size());
  for (std::size_t at = 0; at < columns_.size(); ++at)
    renumbered[at] = columns(std::size_t(columns_[at]));
  renumbered_columns_ = std::move(renumbered);
  columns_ = renumbered_columns_;
}

bool ReconstructedPointStrengths::reads_columns_only(std::span<const std::size_t> points) const {
  for (std::size_t q : points) {
    const std::size_t e = q / per_element_;
    for (std::int64_t at = starts_[e]; at < starts_[e + 1]; ++at)
      if (columns_[std::size_t(at)] < 0) return false;
  }
  return true;
}

std::vector<Vec3> quadrature_point_normals(const Discretization& disc) {
  const std::size_t m = disc.points_per_element(), n = disc.size();
  std::vector<Vec3> normals(n * m);
  for (std::size_t e = 0; e < n; ++e)
    for (std::size_t q = e * m; q < (e + 1) * m; ++q) normals[q] = disc.mesh().normals()[e];
  return normals;
}

}  // namespace fmbem
