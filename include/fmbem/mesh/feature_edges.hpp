#pragma once
#include <array>
#include <cstdint>
#include <vector>

#include "fmbem/core/vec3.hpp"
#include "fmbem/mesh/mesh.hpp"

namespace fmbem {

// The edges of a closed triangle mesh and its feature (sharp) edges: those where the body's
// surface itself bends, as opposed to the discretisation edges of a smooth surface, whose
// dihedral angle is O(h). Burton-Miller needs the distinction twice (docs/burton-miller.md):
// the quadratic read of the double density must not fit across a feature edge (the density is
// singular there), and the curvature correction of D' must not spread a feature edge's
// concentrated curvature over its faces (there the flat elements are the exact geometry).
struct MeshEdge {
  std::array<std::int32_t, 2> vertices;  // ascending
  // The two elements sharing it; the same one twice where the mesh meets an image plane
  // (Mesh::image_planes): its other face is that element's mirror image, and `curvature` and
  // `angle` are the edge's between them.
  std::array<std::int32_t, 2> faces;
  // The two faces' outward in-plane normals of the edge (each pointing from its face across the
  // edge), summed: the edge's concentrated curvature vector, |v| = 2 sin(angle / 2).
  Vec3 curvature;
  double angle;  // between the two faces' normals, radians (0: flat, pi: a fold back)
};

// The default of -bem_feature_angle, degrees. Measured largest angle between neighbouring
// normals: icosphere:1 22.5, icosphere:2 11.5, meshes/sphere.msh 4.0, a gmsh sphere of 380
// triangles 19.8; the bodies with real edges (cube, radiating box, box_plate) 90 and nothing
// between 0 and 90: any threshold from 23 to 89 classifies them all alike. Which side an edge of
// moderate angle is better on was measured on the flat-refined icosahedron (41.8 degrees, bm
// Neumann radiation): fitted across as smooth 7.4e-3, 4.4e-3, 2.5e-3 (N = 320..5120), read as
// constants as a feature 3.6e-2, 1.4e-2, 5.0e-3; on the cube (90) the fit across does not
// converge (1.7e-2, 2.0e-2) and the constant read does (1.3e-2, 4.7e-3). 60 lies between
// (bench/results/bm_sharp_edges.md).
inline constexpr double kDefaultFeatureAngleDegrees = 60.0;

// Every edge once, in ascending order of its vertices. Throws fmbem::Error unless each edge has
// exactly two faces (Mesh::from_surface already checked that the surface is closed), or one
// and lies in an image plane; of a part (Mesh::part_of) the edges with one face in it are left
// out.
std::vector<MeshEdge> mesh_edges(const Mesh& mesh);

// Whether each edge is a feature edge: its angle above feature_angle (radians).
inline bool is_feature_edge(const MeshEdge& edge, double feature_angle) {
  return edge.angle > feature_angle;
}

// Per vertex: 1 where it ends a feature edge, else 0.
std::vector<std::uint8_t> feature_vertices(const Mesh& mesh, const std::vector<MeshEdge>& edges,
                                           double feature_angle);

}  // namespace fmbem
