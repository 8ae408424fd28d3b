#include "fmbem/bem/discretization.hpp"

namespace fmbem {

Discretization::Discretization(const Mesh& mesh, int quadrature_points)
    : mesh_(&mesh), rule_(&triangle_rule(quadrature_points)) {
  const std::size_t m = rule_->size();
  points_.resize(mesh.size() * m);
  weights_.resize(mesh.size() * m);
  for (std::size_t e = 0; e < mesh.size(); ++e)
    for (std::size_t q = 0; q < m; ++q) {
      const auto& l = rule_->barycentric[q];
      points_[e * m + q] =
          mesh.corner(e, 0) * l[0] + mesh.corner(e, 1) * l[1] + mesh.corner(e, 2) * l[2];
      weights_[e * m + q] = rule_->weights[q] * mesh.areas()[e];
    }
}

}  // namespace fmbem
