#pragma once
#include <vector>

#include "fmbem/bem/layer_potentials.hpp"
#include "fmbem/core/vec3.hpp"
#include "fmbem/mesh/mesh.hpp"

namespace fmbem {

// The curvature correction of the collocated adjoint double layer D' (issue 10, single density;
// docs/burton-miller.md). On a closed surface the surface divergence theorem gives
//   D'[1](x) = -n_x . integral of 2 H n_y G(x, y) dS_y  -  integral of (n_x . n_y) dG/dn_y dS_y,
// H the mean curvature. On the flat-element polyhedron the same identity holds with the mean
// curvature on the edges (the two faces' outward in-plane edge normals add up to v_e, about
// the dihedral angle times the edge's normal), and that concentration next to the collocation
// point makes the discrete D' wrong by O(h) (2.2e-2 relative on icosphere:4, falling 2 a level,
// for every density: it is geometric, not the density's read). Spread over the elements, the
// curvature gives an O(h^2) D'; the difference is the diagonal
//   c_i = -D'[1](x_i) - n_i . (D[n] + S[w])(x_i),   w_j the element's curvature vector 2 H n,
// which the Burton-Miller operators add, times alpha, to S + alpha D' (diagonal_correction).

// Per element the curvature vector 2 H n: each edge's v_e |e| spread uniformly over the two
// elements that share it (v_e |e| / (A_+ + A_-) on each), summed over the element's edges.
std::vector<Vec3> element_curvature_vectors(const Mesh& mesh);

// c_i for the rows of `plain` (Laplace layer potentials, coupling 0) and `coupled` (the same
// with coupling 1: S + D' and D + N), both over mesh's elements and the same rows.
std::vector<double> adjoint_double_layer_curvature_correction(const Mesh& mesh,
                                                              const LayerPotentials& plain,
                                                              const LayerPotentials& coupled);

}  // namespace fmbem
