#pragma once
#include <cstddef>
#include <vector>

#include "fmbem/core/vec3.hpp"

namespace fmbem {

// A quadrature rule on the unit sphere: directions and weights (summing to 4 pi), exact for the
// polynomials in x, y, z of total degree up to `degree`.
struct SphereRule {
  int degree = 0;
  std::vector<Vec3> directions;
  std::vector<double> weights;
};

// Lebedev and Laikov's rules ("A quadrature formula for the sphere of the 131st algebraic order
// of accuracy", 1999): octahedrally symmetric, degree 3 to 131, 6 to 5810 points; the numbers
// are SciPy's (scipy.integrate.lebedev_rule) bit for bit, stored as the orbits' representatives
// (scripts/lebedev_table.py). The rules of degree 13, 25 and 27 have negative weights.
// The point counts available, ascending.
std::vector<std::size_t> lebedev_point_counts();
// The rule with `points` points; throws fmbem::Error naming the counts available where there is
// none.
SphereRule lebedev_rule(std::size_t points);

}  // namespace fmbem
