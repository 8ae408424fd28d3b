#pragma once
#include <cstddef>
#include <vector>

#include "fmbem/mesh/mesh.hpp"
#include "fmbem/quadrature/triangle_rule.hpp"

namespace fmbem {

// Piecewise-constant collocation: one unknown per element, collocated at its
// centroid; the regular (far) integrals use the same Gauss rule on every
// element. Quadrature points are stored element-major: element e owns
// points [e * m, (e + 1) * m), m = points_per_element().
class Discretization {
 public:
  Discretization(const Mesh& mesh, int quadrature_points);

  const Mesh& mesh() const { return *mesh_; }
  std::size_t size() const { return mesh_->size(); }
  const TriangleRule& rule() const { return *rule_; }
  std::size_t points_per_element() const { return rule_->size(); }
  const std::vector<Vec3>& collocation_points() const { return mesh_->centroids(); }
  const std::vector<Vec3>& quadrature_points() const { return points_; }
  // Gauss weight times element area.
  const std::vector<double>& quadrature_weights() const { return weights_; }
  // Quadrature points closer than this to a collocation point coincide with
  // it (the centroid is a point of the 1- and 7-point rules): the regular sum
  // skips them everywhere and the self term comes from the near field.
  double coincidence_radius() const { return 1e-9 * mesh_->diameter(); }

 private:
  const Mesh* mesh_;
  const TriangleRule* rule_;
  std::vector<Vec3> points_;
  std::vector<double> weights_;
};

// The quadrature points of elements [first, last), element-major: those of Discretization, by
// the same formula (a rank's slab of the elements, for the distributed partition).
std::vector<Vec3> quadrature_points_of(const Mesh& mesh, const TriangleRule& rule,
                                       std::size_t first, std::size_t last);

}  // namespace fmbem
