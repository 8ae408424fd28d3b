#include "fmbem/mesh/feature_edges.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <string>

#include "fmbem/core/error.hpp"
#include "fmbem/core/parallel_sort.hpp"

namespace fmbem {

std::vector<MeshEdge> mesh_edges(const Mesh& mesh) {
  // (lower vertex, upper vertex, face), sorted: each edge's two half-edges are adjacent. On the
  // threads (the quadratic read and the curvature correction ask for the edges of meshes of
  // millions of elements, where a serial pass was most of the read's set-up).
  struct HalfEdge {
    std::int32_t a, b, face;
    bool operator<(const HalfEdge& y) const {
      return a != y.a ? a < y.a : b != y.b ? b < y.b : face < y.face;
    }
  };
  const std::size_t n = mesh.size();
  std::vector<HalfEdge> half(3 * n);
#pragma omp parallel for schedule(static)
  for (std::size_t e = 0; e < n; ++e)
    for (int k = 0; k < 3; ++k) {
      const std::int32_t a = mesh.triangles()[e][std::size_t(k)];
      const std::int32_t b = mesh.triangles()[e][std::size_t((k + 1) % 3)];
      half[3 * e + std::size_t(k)] = {std::min(a, b), std::max(a, b), std::int32_t(e)};
    }
  parallel_sort(half.begin(), half.end());
  // The runs of two half-edges (each an edge), in order; any other run is an error, but a part
  // of a mesh (a rank's elements and halo) holds one face of its rim's edges: those are left out.
  // An edge of one face where the mesh meets an image plane pairs with the face's mirror image:
  // the plane it lies in (Mesh::from_surface's test), -1 for none. In a part, only where both
  // its vertices have all their triangles (elsewhere a one-face edge may be the part's rim).
  const ImagePlanes& planes = mesh.image_planes();
  const auto plane_of = [&](std::int32_t a, std::int32_t b) {
    const unsigned both =
        unsigned(mesh.vertex_planes(std::size_t(a)) & mesh.vertex_planes(std::size_t(b)));
    return both == 0 ? -1 : std::countr_zero(both);
  };
  std::vector<std::size_t> pairs;
  std::vector<int> cut_plane;  // per pair: the plane of a one-face edge, else -1
  pairs.reserve(half.size() / 2);
  for (std::size_t h = 0, run = 0; h < half.size(); h += run) {
    run = 1;
    while (h + run < half.size() && half[h + run].a == half[h].a && half[h + run].b == half[h].b)
      ++run;
    if (run == 1 && !planes.empty() && mesh.vertex_complete(std::size_t(half[h].a)) &&
        mesh.vertex_complete(std::size_t(half[h].b))) {
      if (const int p = plane_of(half[h].a, half[h].b); p >= 0) {
        pairs.push_back(h);
        cut_plane.resize(pairs.size(), -1);
        cut_plane.back() = p;
        continue;
      }
    }
    if (run == 1 && mesh.is_part()) continue;
    if (run != 2)
      throw Error("mesh_edges: edge (" + std::to_string(half[h].a) + ", " +
                  std::to_string(half[h].b) + ") is not shared by exactly two triangles");
    pairs.push_back(h);
  }
  std::vector<MeshEdge> edges(pairs.size());
#pragma omp parallel for schedule(static)
  for (std::size_t i = 0; i < pairs.size(); ++i) {
    const std::size_t h = pairs[i];
    const int cut = i < cut_plane.size() ? cut_plane[i] : -1;
    MeshEdge edge{{half[h].a, half[h].b},
                  {half[h].face, cut >= 0 ? half[h].face : half[h + 1].face},
                  {0.0, 0.0, 0.0},
                  0.0};
    const Vec3 &a = mesh.vertices()[std::size_t(edge.vertices[0])],
               &b = mesh.vertices()[std::size_t(edge.vertices[1])];
    // A face's outward in-plane normal of the edge (the mirror face's is its reflection).
    const auto in_plane_normal = [&](std::int32_t f) {
      Vec3 m = normalized(cross(b - a, mesh.normals()[std::size_t(f)]));
      if (dot(m, (a + b) * 0.5 - mesh.centroids()[std::size_t(f)]) < 0.0) m = m * -1.0;
      return m;
    };
    const std::size_t mirror = cut >= 0 ? std::size_t(1) << cut : 0;
    edge.curvature = in_plane_normal(edge.faces[0]) +
                     (cut >= 0 ? planes.reflect_direction(mirror, in_plane_normal(edge.faces[0]))
                               : in_plane_normal(edge.faces[1]));
    const Vec3& n0 = mesh.normals()[std::size_t(edge.faces[0])];
    const Vec3 n1 = cut >= 0 ? planes.reflect_direction(mirror, n0)
                             : mesh.normals()[std::size_t(edge.faces[1])];
    // atan2 of |n0 x n1| and n0 . n1: accurate at small and at near-pi angles (acos is not).
    edge.angle = std::atan2(norm(cross(n0, n1)), dot(n0, n1));
    edges[i] = edge;
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
