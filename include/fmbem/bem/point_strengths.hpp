#pragma once
#include <span>
#include <vector>

#include "fmbem/bem/discretization.hpp"
#include "fmbem/bem/layer_potentials.hpp"

namespace fmbem {

// The regular rule turns a piecewise-constant density into point sources:
// quadrature point q of element e carries weight_q * density[e] (empty in,
// empty out).
std::vector<cplx> point_strengths(const Discretization& disc, std::span<const cplx> density);

// The element normal at each quadrature point (dipole directions).
std::vector<Vec3> quadrature_point_normals(const Discretization& disc);

// Throws unless densities have one entry per element (or none) and y one per row.
void check_layer_sizes(const Discretization& disc, RowRange rows,
                       std::span<const cplx> double_density, std::span<const cplx> single_density,
                       std::span<const cplx> y);

}  // namespace fmbem
