#include "fmbem/bem/point_strengths.hpp"

#include "fmbem/core/error.hpp"

namespace fmbem {

std::vector<cplx> point_strengths(const Discretization& disc, std::span<const cplx> density) {
  if (density.empty()) return {};
  const std::size_t m = disc.points_per_element(), n = disc.size();
  std::vector<cplx> strengths(n * m);
#pragma omp parallel for schedule(static)
  for (std::size_t e = 0; e < n; ++e)
    for (std::size_t q = e * m; q < (e + 1) * m; ++q)
      strengths[q] = disc.quadrature_weights()[q] * density[e];
  return strengths;
}

std::vector<Vec3> quadrature_point_normals(const Discretization& disc) {
  const std::size_t m = disc.points_per_element(), n = disc.size();
  std::vector<Vec3> normals(n * m);
  for (std::size_t e = 0; e < n; ++e)
    for (std::size_t q = e * m; q < (e + 1) * m; ++q) normals[q] = disc.mesh().normals()[e];
  return normals;
}

void check_layer_sizes(const Discretization& disc, RowRange rows,
                       std::span<const cplx> double_density, std::span<const cplx> single_density,
                       std::span<const cplx> y) {
  const std::size_t n = disc.size();
  if ((!double_density.empty() && double_density.size() != n) ||
      (!single_density.empty() && single_density.size() != n) || y.size() != rows.size())
    throw Error("layer potentials: density or result of the wrong size");
}

}  // namespace fmbem
