#pragma once
#include <array>
#include <cstddef>
#include <optional>
#include <vector>

#include "fmbem/mesh/surface.hpp"

namespace fmbem {

// Parts of a surface closer than this fraction of their triangles' size touch (relative, so a
// mesh and the same mesh moved or scaled get the same verdict).
inline constexpr double kTouchingFraction = 1e-9;

// Whether triangles p and q of one surface (corner vertex indices ip, iq: which corners they
// share) meet other than at what they share: without a shared vertex, whether the closed
// triangles touch or cross (separating axes, gaps up to kTouchingFraction of the larger
// triangle count as touching); sharing one vertex, whether they overlap beyond it (a fold:
// one's plane cuts the other along a ray from the vertex into its angle, or both are coplanar
// and their angles overlap); sharing an edge, whether they lie folded onto each other.
bool triangles_meet(const std::array<Vec3, 3>& p, const Triangle& ip, const std::array<Vec3, 3>& q,
                    const Triangle& iq);

// Two triangles that meet (triangles_meet), first < second, and a point near where.
struct TrianglePair {
  std::size_t first = 0, second = 0;
  Vec3 near;
};
// The pair that meets first in the triangles' order (lowest first, then lowest second), or none.
// Candidates from a uniform grid of the triangles' boxes (each triangle in the cells its box
// overlaps, each pair tested in the one cell holding its boxes' common corner): O(N) work for
// meshes whose triangles are of a similar size, on the threads.
std::optional<TrianglePair> first_self_intersection(const std::vector<Vec3>& vertices,
                                                    const std::vector<Triangle>& triangles);

// The winding number of the closed, outward-oriented triangles `members` about x: 1 inside, 0
// outside (their solid angle over 4 pi).
double winding_number(const std::vector<Vec3>& vertices, const std::vector<Triangle>& triangles,
                      const std::vector<std::size_t>& members, const Vec3& x);

// A closed part of a surface inside another: each named by its first triangle.
struct NestedParts {
  std::size_t outer = 0, inner = 0;
};
// For a surface that does not intersect itself, split into closed, outward-oriented parts
// (component[t] in 0..parts-1, numbered in the order of their first triangles): the first part
// (in that order) that lies inside another, or none. A part is inside another when the centroid
// of its first triangle is (winding number above 1/2); only pairs whose boxes nest are tested.
std::optional<NestedParts> first_nested_part(const std::vector<Vec3>& vertices,
                                             const std::vector<Triangle>& triangles,
                                             const std::vector<int>& component, int parts);

}  // namespace fmbem
