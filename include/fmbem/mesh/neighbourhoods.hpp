#pragma once

#include <cstdint>
#include <vector>

#include "fmbem/mesh/mesh.hpp"

namespace fmbem {

// The triangles at each vertex, in CSR form: vertex v's are
// elements[start[v] .. start[v + 1]), ascending.
struct VertexStars {
  std::vector<std::int64_t> start;
  std::vector<std::int32_t> elements;
};
VertexStars vertex_stars(const Mesh& mesh);

// Per element e, bounds that a rank's halo must reach: every point of every element
// within `rings` vertex neighbourhoods of e (e alone for 0; one ring: the elements sharing a
// corner with e) lies within reach[e] of e's centroid, and largest_corner_radius[e] is at least
// the corner radius (centroid to farthest corner) of each of them. Ring by ring by the triangle
// inequality: reach_k(e) = max over e's vertex neighbours n (e included) of
// |c_e - c_n| + reach_(k-1)(n), reach_0(e) = e's corner radius. Throws fmbem::Error for
// rings < 0.
// The distance from element e's centroid to its farthest corner (R_e of the near-field
// criterion |x - c_e| < near_factor * R_e; a neighbourhood's reach before any ring).
double element_corner_radius(const Mesh& mesh, std::size_t e);

struct NeighbourhoodReach {
  std::vector<double> reach, largest_corner_radius;
};
// stars: vertex_stars(mesh), which callers that need it too build once.
NeighbourhoodReach neighbourhood_reach(const Mesh& mesh, const VertexStars& stars, int rings);

}  // namespace fmbem
