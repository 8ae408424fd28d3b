#include "fmbem/mesh/feature_edges.hpp"

#include <algorithm>
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
  const auto same_edge = [&](std::size_t h, std::size_t g) {
    return half[h].a == half[g].a && half[h].b == half[g].b;
  };
  // Where each edge's run of half-edges begins, then the runs checked and the edges formed.
  std::vector<std::size_t> run_start;
  for (std::size_t h = 0; h < half.size(); ++h)
    if (h == 0 || !same_edge(h, h - 1)) run_start.push_back(h);
  run_start.push_back(half.size());
  const std::size_t runs = run_start.size() - 1;
  // The first run that is not a pair (a part of a mesh, a rank's elements and halo, holds one
  // face of its rim's edges: those are left out).
  std::size_t bad = runs;
#pragma omp parallel for schedule(static) reduction(min : bad)
  for (std::size_t r = 0; r < runs; ++r) {
    const std::size_t length = run_start[r + 1] - run_start[r];
    if (length != 2 && !(length == 1 && mesh.is_part())) bad = std::min(bad, r);
  }
  if (bad < runs)
    throw Error("mesh_edges: edge (" + std::to_string(half[run_start[bad]].a) + ", " +
                std::to_string(half[run_start[bad]].b) +
                ") is not shared by exactly two triangles");
  std::vector<std::size_t> pairs;  // the runs of two half-edges, in order
  pairs.reserve(runs);
  for (std::size_t r = 0; r < runs; ++r)
    if (run_start[r + 1] - run_start[r] == 2) pairs.push_back(run_start[r]);
  std::vector<MeshEdge> edges(pairs.size());
#pragma omp parallel for schedule(static)
  for (std::size_t i = 0; i < pairs.size(); ++i) {
    const std::size_t h = pairs[i];
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
