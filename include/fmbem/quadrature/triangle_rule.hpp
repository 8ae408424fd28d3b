#pragma once
#include <array>
#include <vector>

namespace fmbem {

// Symmetric Gauss rule on a triangle: barycentric points and weights that
// sum to 1 (multiply by the area), exact for polynomials up to `degree`.
struct TriangleRule {
  std::vector<std::array<double, 3>> barycentric;
  std::vector<double> weights;
  int degree = 0;
  std::size_t size() const { return weights.size(); }
};

// The rules -bem_quad_order offers: 1 (centroid, degree 1), 3 (degree 2),
// 6 (degree 4, Dunavant) and 7 (degree 5, Radon). Throws fmbem::Error for
// any other number of points.
const TriangleRule& triangle_rule(int points);

}  // namespace fmbem
