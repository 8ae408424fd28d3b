#pragma once
// Surface elements as the BEM gives them to the FMM, for the FMM's and the partition's tests
// (unit and MPI): per triangle its centroid (the element, a target and splitting point) and its
// 3 Gauss points (sources carrying the element's density), with the triangle's normal.
#include <cstddef>
#include <functional>
#include <vector>

#include "fmbem/core/vec3.hpp"
#include "fmbem/mesh/mesh.hpp"
#include "fmbem/quadrature/triangle_rule.hpp"

namespace fmbem::fmm::test {

struct Elements {
  std::vector<Vec3> targets, target_normals, sources, normals;
  std::vector<std::size_t> source_element;
  // With image planes: the targets' mirror images (splitting points too) and the map from a
  // mirror point to the real one; empty without.
  std::vector<Vec3> mirror_targets;
  std::function<Vec3(const Vec3&)> real_position;

  // The tree's splitting points: the targets, then their mirror images.
  std::vector<Vec3> splitting() const {
    std::vector<Vec3> points = targets;
    points.insert(points.end(), mirror_targets.begin(), mirror_targets.end());
    return points;
  }
};

inline void add_surface(const Surface& surface, Elements& out) {
  const TriangleRule& rule = triangle_rule(3);
  for (const Triangle& t : surface.triangles) {
    const Vec3 &a = surface.vertices[t[0]], &b = surface.vertices[t[1]],
               &c = surface.vertices[t[2]];
    const Vec3 normal = normalized(cross(b - a, c - a));
    for (const auto& w : rule.barycentric) {
      out.sources.push_back(w[0] * a + w[1] * b + w[2] * c);
      out.normals.push_back(normal);
      out.source_element.push_back(out.targets.size());
    }
    out.targets.push_back((a + b + c) * (1.0 / 3.0));
    out.target_normals.push_back(normal);
  }
}

}  // namespace fmbem::fmm::test
