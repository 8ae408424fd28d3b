#include "fmbem/mesh/neighbourhoods.hpp"

#include <algorithm>

#include "fmbem/core/error.hpp"

namespace fmbem {

VertexStars vertex_stars(const Mesh& mesh) {
  VertexStars stars;
  stars.start.assign(mesh.vertices().size() + 1, 0);
  for (const Triangle& t : mesh.triangles())
    for (std::int32_t v : t) ++stars.start[std::size_t(v) + 1];
  for (std::size_t v = 0; v + 1 < stars.start.size(); ++v) stars.start[v + 1] += stars.start[v];
  stars.elements.resize(std::size_t(stars.start.back()));
  std::vector<std::int64_t> next(stars.start.begin(), stars.start.end() - 1);
  // Elements in ascending order, so each star comes out ascending.
  for (std::size_t e = 0; e < mesh.size(); ++e)
    for (std::int32_t v : mesh.triangles()[e])
      stars.elements[std::size_t(next[std::size_t(v)]++)] = std::int32_t(e);
  return stars;
}

double element_corner_radius(const Mesh& mesh, std::size_t e) {
  const Vec3& c = mesh.centroids()[e];
  return std::max(
      {norm(mesh.corner(e, 0) - c), norm(mesh.corner(e, 1) - c), norm(mesh.corner(e, 2) - c)});
}

NeighbourhoodReach neighbourhood_reach(const Mesh& mesh, const VertexStars& stars, int rings) {
  if (rings < 0) throw Error("neighbourhood reach: the rings must be 0 or more");
  if (stars.start.size() != mesh.vertices().size() + 1)
    throw Error("neighbourhood reach: the vertex stars are not of this mesh");
  const std::size_t n = mesh.size();
  const std::vector<Vec3>& centroids = mesh.centroids();
  NeighbourhoodReach result;
  result.reach.resize(n);
  for (std::size_t e = 0; e < n; ++e) result.reach[e] = element_corner_radius(mesh, e);
  result.largest_corner_radius = result.reach;
  if (rings == 0) return result;
  std::vector<double> reach(n), largest(n);
  for (int ring = 0; ring < rings; ++ring) {
#pragma omp parallel for schedule(static)
    for (std::size_t e = 0; e < n; ++e) {
      double r = result.reach[e], l = result.largest_corner_radius[e];
      for (std::int32_t v : mesh.triangles()[e])
        for (std::int64_t at = stars.start[std::size_t(v)]; at < stars.start[std::size_t(v) + 1];
             ++at) {
          const std::size_t m = std::size_t(stars.elements[std::size_t(at)]);
          r = std::max(r, norm(centroids[e] - centroids[m]) + result.reach[m]);
          l = std::max(l, result.largest_corner_radius[m]);
        }
      reach[e] = r;
      largest[e] = l;
    }
    result.reach.swap(reach);
    result.largest_corner_radius.swap(largest);
  }
  return result;
}

}  // namespace fmbem
