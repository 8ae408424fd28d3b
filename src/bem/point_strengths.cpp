#include "fmbem/bem/point_strengths.hpp"

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

}  // namespace fmbem
