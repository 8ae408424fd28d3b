#pragma once
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "fmbem/bem/layer_potentials.hpp"
#include "fmbem/core/vec3.hpp"
#include "fmbem/mesh/feature_edges.hpp"
#include "fmbem/mesh/mesh.hpp"

namespace fmbem {

// The curvature correction of the collocated adjoint double layer D' (single density;
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
//
// Feature edges (mesh/feature_edges.hpp, dihedral angle above feature_angle) are the body's
// own edges: there the flat elements are the exact geometry and the discrete D' is right, so
// their curvature stays where it is. w spreads only the smooth edges', and the identity then
// needs the feature edges' concentrated curvature back explicitly:
//   c_i = -D'[1](x_i) - n_i . (D[n] + S[w_smooth])(x_i) - n_i . L_feature(x_i),
//   L_feature(x) = sum over feature edges e of v_e times the integral over e of G(x, y) dl_y,
// G the Laplace 1 / (4 pi r). On a polyhedron with only feature edges (a cube) c_i is the
// quadrature's error alone; on a smooth mesh (no feature edges) it is the formula above.

// Per element the curvature vector 2 H n: each smooth edge's v_e |e| spread uniformly over the
// two elements that share it (v_e |e| / (A_+ + A_-) on each), summed over the element's edges.
// Edges whose angle exceeds feature_angle (radians) are left out.
std::vector<Vec3> element_curvature_vectors(const Mesh& mesh, double feature_angle);

// The integral over the segment [a, b] of the Laplace G(x, y) = 1 / (4 pi |x - y|) dl_y, in
// closed form: (1 / 4 pi) ln((r_a + r_b + L) / (r_a + r_b - L)), in its asinh form where x lies
// beside the segment. x must not lie on the segment.
double segment_single_layer(const Vec3& x, const Vec3& a, const Vec3& b);

// A feature edge as L_feature reads it: its ends and its curvature vector v_e.
struct FeatureSegment {
  Vec3 a, b, v;
};

// The feature edges of `mesh`, in mesh_edges' order. With `lower_face_in`, those alone whose
// lower face lies in that range: of a part (a rank's elements and halo) the edges its
// rows own, so that each edge of the whole mesh is one rank's. Those rows' corners must have
// all their triangles in the part (Mesh::vertex_complete; fmbem::Error otherwise: an edge of
// the whole mesh would be lost). A part's edges without lower_face_in are refused.
std::vector<FeatureSegment> feature_edge_segments(const Mesh& mesh, double feature_angle,
                                                  std::optional<RowRange> lower_face_in = {});

// n_i . L_feature(x_i) at the centroids of `rows`: a direct sum over the rows and the feature
// edges (OpenMP), O(rows x feature edges). The first form reads the mesh's feature edges.
std::vector<double> feature_edge_curvature_term(const Mesh& mesh, RowRange rows,
                                                double feature_angle);
std::vector<double> feature_edge_curvature_term(const Mesh& mesh, RowRange rows,
                                                std::span<const FeatureSegment> segments);

// Throws fmbem::Error when `mesh` is a part and an element `op` reads (its columns) lacks a
// triangle at a corner: its curvature vector reads the faces across its edges (the halo's
// ring, bem/distributed_mesh.hpp). The corrections below check it; a distributed caller checks
// it on every rank before the operators exchange anything.
void check_curvature_columns(const Mesh& mesh, const LayerPotentials& op);

// c_i for the rows of `plain` (Laplace layer potentials, coupling 0) and `coupled` (the same
// with a coupling L, a length of the body's order: S + L D' and D + L N), both over mesh's
// elements and the same rows. D'[1] is read as ((S + L D')[1] - S[1]) / L: with L = 1 on a body
// of size 1e15 S[1] would be 1e15 times D'[1] and the difference all rounding.
std::vector<double> adjoint_double_layer_curvature_correction(const Mesh& mesh,
                                                              const LayerPotentials& plain,
                                                              const LayerPotentials& coupled,
                                                              double feature_angle);

// The same with each operator built when it is needed and freed before the next (the plain one,
// then the coupled one): at most one alive, which halves the set-up's peak memory (each holds an
// FMM and a near-field correction; on the GPU 16 GB at N = 1.31M). The same numbers as above.
// `whole_segments`: the whole surface's feature edges (every rank's, gathered), needed when
// `mesh` is a part; the mesh's own when not given. A part's elements read (the operators'
// columns) must have their corners complete: their curvature vectors read the faces across
// their edges (fmbem::Error otherwise).
//
// With image planes (Mesh::image_planes) the identity is the union's of the mesh and its images,
// whatever the planes' kinds: a maker is asked for operators with image weights
// (NearFieldOptions::image_weights) of 1 for the scalar densities and, for each component of
// n and w, -1 where an image reflects that axis (up to four plain operators, one at a time);
// the edges where the mesh meets a plane pair each element with its mirror (mesh_edges). The
// first form refuses a mesh with planes.
using LayerMaker =
    std::function<std::unique_ptr<LayerPotentials>(const std::vector<double>& image_weights)>;
std::vector<double> adjoint_double_layer_curvature_correction(
    const Mesh& mesh, const LayerMaker& make_plain, const LayerMaker& make_coupled,
    double feature_angle, const std::vector<FeatureSegment>* whole_segments = nullptr);

}  // namespace fmbem
