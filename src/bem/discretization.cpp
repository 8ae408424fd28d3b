#include "fmbem/bem/discretization.hpp"

namespace fmbem {

std::vector<Vec3> quadrature_points_of(const Mesh& mesh, const TriangleRule& rule,
                                       std::size_t first, std::size_t last) {
  const std::size_t m = rule.size();
  std::vector<Vec3> points(last > first ? (last - first) * m : 0);
  for (std::size_t e = first; e < last; ++e)
    for (std::size_t q = 0; q < m; ++q) {
      const auto& l = rule.barycentric[q];
      points[(e - first) * m + q] =
          mesh.corner(e, 0) * l[0] + mesh.corner(e, 1) * l[1] + mesh.corner(e, 2) * l[2];
    }
  return points;
}

Discretization::Discretization(const Mesh& mesh, int quadrature_points)
    : mesh_(&mesh),
      rule_(&triangle_rule(quadrature_points)),
      points_(quadrature_points_of(mesh, *rule_, 0, mesh.size())) {
  const std::size_t m = rule_->size();
  weights_.resize(mesh.size() * m);
  for (std::size_t e = 0; e < mesh.size(); ++e)
    for (std::size_t q = 0; q < m; ++q) weights_[e * m + q] = rule_->weights[q] * mesh.areas()[e];
}

}  // namespace fmbem
