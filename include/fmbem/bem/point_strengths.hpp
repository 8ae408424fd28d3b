#pragma once
#include <span>
#include <vector>

#include "fmbem/bem/discretization.hpp"

namespace fmbem {

// The regular rule turns a piecewise-constant density into point sources:
// quadrature point q of element e carries weight_q * density[e] (empty in,
// empty out).
std::vector<cplx> point_strengths(const Discretization& disc, std::span<const cplx> density);

// The element normal at each quadrature point (dipole directions).
std::vector<Vec3> quadrature_point_normals(const Discretization& disc);

}  // namespace fmbem
