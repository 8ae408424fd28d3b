#include "fmbem/mesh/feature_edges.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "fmbem/core/error.hpp"

namespace fmbem {

std::vector<MeshEdge> mesh_edges(const Mesh& mesh) {
  // (lower vertex, upper vertex, face), sorted: each edge's two half-edges are adjacent.
  struct HalfEdge {
    std::int32_t a, b, face;
  };
  std::vector<HalfEdge> half;
  half.reserve(3 * mesh.size());
  for (std::size_t e = 0; e < mesh.size(); ++e)
    for (int k = 0; k < 3; ++k) {
      const std::int32_t a = mesh.triangles()[e][std::size_t(k)];
      const std::int32_t b = mesh.triangles()[e][std::size_t((k + 1) % 3)];
      half.push_back({std::min(a, b), std::max(a, b), std::int32_t(e)});
    }
  std::sort(half.begin(), half.end(), [](const HalfEdge& x, const HalfEdge& y) {
    return x.a != y.a ? x.a < y.a : x.b != y.b ? x.b < y.b : x.face < y.face;
  });
  std::vector<MeshEdge> edges;
  edges.reserve(half.size() / 2);
  for (std::size_t h = 0, run = 0; h < half.size(); h += run) {
    run = 1;
    while (h + run < half.size() && half[h + run].a == half[h].a && half[h + run].b == half[h].b)
      ++run;
    // A part of a mesh (a rank's elements and halo) holds one face of its rim's edges.
    if (run == 1 && mesh.is_part()) continue;
    if (run != 2)
      throw Error("mesh_edges: edge (" + std::to_string(half[h].a) + ", " +
                  std::to_string(half[h].b) + ") is not shared by exactly two triangles");
    MeshEdge edge{{half[h].a, half[h].b}, {half[h].face, half[h + 1].face}, {0.0, 0.0, 0.0}, 0.0};
    const Vec3 &a = mesh.vertices()[std::size_t(edge.vertices[0])],
               &b = mesh.vertices()[std::size_t(edge.vertices[1])];
    for (const std::int32_t f : edge.faces) {
      Vec3 m = normalized(cross(b - a, mesh.normals()[std::size_t(f)]));
      if (dot(m, (a + b) * 0.5 - mesh.centroids()[std::size_t(f)]) < 0.0) m = m * -1.0;
      edge.curvature = edge.curvature + m;
    }
    const Vec3 &n0 = mesh.normals()[std::size_t(edge.faces[0])],
               &n1 = mesh.normals()[std::size_t(edge.faces[1])];
    // atan2 of |n0 x n1| and n0 . n1: accurate at small and at near-pi angles (acos is not).
    edge.angle = std::atan2(norm(cross(n0, n1)), dot(n0, n1));
    edges.push_back(edge);
  }
  return edges;
}

std::vector<std::uint8_t> feature_vertices(const Mesh& mesh, const std::vector<MeshEdge>& edges,
                                           double feature_angle) {
  std::vector<std::uint8_t> on(mesh.vertices().size(), 0);
  for (const MeshEdge& edge : edges)
    if (is_feature_edge(edge, feature_angle))
      on[std::size_t(edge.vertices[0])] = on[std::size_t(edge.vertices[1])] = 1;
  return on;
}

}  // namespace fmbem
