// A part of a mesh (Mesh::part_of), its edges, and the neighbourhood bounds a distributed mesh's
// halo is found by (mesh/neighbourhoods.hpp), against brute force on small meshes.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <vector>

#include "fmbem/core/error.hpp"
#include "fmbem/mesh/feature_edges.hpp"
#include "fmbem/mesh/mesh.hpp"
#include "fmbem/mesh/neighbourhoods.hpp"

namespace fmbem {
namespace {

bool share_a_vertex(const Triangle& a, const Triangle& b) {
  for (std::int32_t u : a)
    for (std::int32_t v : b)
      if (u == v) return true;
  return false;
}

// The elements within `rings` vertex neighbourhoods of e, by brute force.
std::set<std::size_t> rings_of(const Mesh& mesh, std::size_t e, int rings) {
  std::set<std::size_t> reached{e};
  for (int ring = 0; ring < rings; ++ring) {
    std::set<std::size_t> next = reached;
    for (std::size_t m : reached)
      for (std::size_t x = 0; x < mesh.size(); ++x)
        if (share_a_vertex(mesh.triangles()[m], mesh.triangles()[x])) next.insert(x);
    reached.swap(next);
  }
  return reached;
}

TEST(VertexStars, EachVertexsTrianglesAscending) {
  const Mesh mesh = Mesh::from_surface(make_box(3, 2.0), "box");
  const VertexStars stars = vertex_stars(mesh);
  ASSERT_EQ(stars.start.size(), mesh.vertices().size() + 1);
  for (std::size_t v = 0; v < mesh.vertices().size(); ++v) {
    std::vector<std::int32_t> expected;
    for (std::size_t e = 0; e < mesh.size(); ++e)
      for (std::int32_t c : mesh.triangles()[e])
        if (std::size_t(c) == v) expected.push_back(std::int32_t(e));
    const std::vector<std::int32_t> star(stars.elements.begin() + stars.start[v],
                                         stars.elements.begin() + stars.start[v + 1]);
    EXPECT_EQ(star, expected);
  }
}

// Every point of every element within the rings lies within reach of the centroid (a
// triangle's farthest point from any point is a corner), and its corner radius is at most the
// largest; rings = 0 gives the element's own corner radius.
TEST(NeighbourhoodReach, BoundsEveryElementWithinTheRings) {
  for (const Surface& surface : {make_icosphere(2, 1.5), make_box(3, 1.0)}) {
    const Mesh mesh = Mesh::from_surface(surface, "test");
    for (int rings : {0, 1, 3}) {
      const NeighbourhoodReach bounds = neighbourhood_reach(mesh, vertex_stars(mesh), rings);
      ASSERT_EQ(bounds.reach.size(), mesh.size());
      std::size_t outside = 0;
      for (std::size_t e = 0; e < mesh.size(); e += 7) {
        const Vec3& c = mesh.centroids()[e];
        for (std::size_t x : rings_of(mesh, e, rings)) {
          double radius = 0.0;
          for (int k = 0; k < 3; ++k) {
            outside += norm(mesh.corner(x, k) - c) > bounds.reach[e];
            radius = std::max(radius, norm(mesh.corner(x, k) - mesh.centroids()[x]));
          }
          outside += radius > bounds.largest_corner_radius[e];
          if (rings == 0) EXPECT_EQ(bounds.reach[e], radius);
        }
      }
      EXPECT_EQ(outside, 0u) << "rings " << rings;
    }
  }
  const Mesh small = Mesh::from_surface(make_icosphere(0, 1.0), "t");
  EXPECT_THROW(neighbourhood_reach(small, vertex_stars(small), -1), Error);
  const Mesh other = Mesh::from_surface(make_icosphere(1, 1.0), "t");
  EXPECT_THROW(neighbourhood_reach(small, vertex_stars(other), 1), Error);
}

// A part: the whole mesh's geometry per element, bit for bit, the whole's extent, its vertices'
// completeness, and the edges with both faces in it (the rim's left out).
TEST(MeshPart, KeepsTheWholeGeometryAndLeavesTheRimOpen) {
  const Mesh whole = Mesh::from_surface(make_box(4, 1.0), "box");
  const VertexStars stars = vertex_stars(whole);
  // The elements with a centroid above z = 0.2: an open cap.
  std::vector<std::size_t> kept;
  for (std::size_t e = 0; e < whole.size(); ++e)
    if (whole.centroids()[e].z > 0.2) kept.push_back(e);
  std::vector<std::int32_t> local_of(whole.vertices().size(), -1);
  std::vector<Vec3> vertices;
  std::vector<std::int32_t> whole_vertex;
  std::vector<Triangle> triangles;
  for (std::size_t e : kept) {
    Triangle t;
    for (int c = 0; c < 3; ++c) {
      const std::int32_t v = whole.triangles()[e][std::size_t(c)];
      if (local_of[std::size_t(v)] < 0) {
        local_of[std::size_t(v)] = std::int32_t(vertices.size());
        vertices.push_back(whole.vertices()[std::size_t(v)]);
        whole_vertex.push_back(v);
      }
      t[std::size_t(c)] = local_of[std::size_t(v)];
    }
    triangles.push_back(t);
  }
  std::vector<std::uint8_t> complete(vertices.size());
  for (std::size_t v = 0; v < vertices.size(); ++v) {
    const std::size_t w = std::size_t(whole_vertex[v]);
    std::size_t held = 0;
    for (std::int64_t at = stars.start[w]; at < stars.start[w + 1]; ++at)
      held += std::binary_search(kept.begin(), kept.end(),
                                 std::size_t(stars.elements[std::size_t(at)]));
    complete[v] = held == std::size_t(stars.start[w + 1] - stars.start[w]);
  }
  const Mesh part = Mesh::part_of("cap", vertices, triangles, complete, whole.extent());
  ASSERT_TRUE(part.is_part());
  EXPECT_FALSE(whole.is_part());
  ASSERT_EQ(part.size(), kept.size());
  for (std::size_t e = 0; e < kept.size(); ++e) {
    EXPECT_TRUE(part.centroids()[e] == whole.centroids()[kept[e]]);
    EXPECT_TRUE(part.normals()[e] == whole.normals()[kept[e]]);
    EXPECT_EQ(part.areas()[e], whole.areas()[kept[e]]);
  }
  EXPECT_EQ(part.diameter(), whole.diameter());
  EXPECT_EQ(part.volume(), whole.volume());
  EXPECT_EQ(part.max_edge(), whole.max_edge());
  EXPECT_EQ(part.extent().elements, whole.size());
  EXPECT_EQ(part.extent().vertices, whole.vertices().size());
  std::size_t complete_count = 0;
  for (std::size_t v = 0; v < vertices.size(); ++v) {
    EXPECT_EQ(part.vertex_complete(v), complete[v] != 0);
    complete_count += complete[v];
  }
  EXPECT_GT(complete_count, 0u);
  EXPECT_LT(complete_count, vertices.size());
  // The part's edges: the whole mesh's whose two faces are kept, with the same angles.
  std::size_t inner = 0;
  for (const MeshEdge& edge : mesh_edges(whole))
    inner += std::binary_search(kept.begin(), kept.end(), std::size_t(edge.faces[0])) &&
             std::binary_search(kept.begin(), kept.end(), std::size_t(edge.faces[1]));
  const std::vector<MeshEdge> edges = mesh_edges(part);
  EXPECT_EQ(edges.size(), inner);
  for (const MeshEdge& edge : edges) {
    const std::size_t f0 = kept[std::size_t(edge.faces[0])], f1 = kept[std::size_t(edge.faces[1])];
    EXPECT_TRUE(share_a_vertex(whole.triangles()[f0], whole.triangles()[f1]));
  }
  // An open surface that is not a part is still refused, and so is a bad part.
  EXPECT_THROW(Mesh::from_surface(Surface{vertices, triangles}, "cap"), Error);
  EXPECT_THROW(Mesh::part_of("cap", vertices, triangles, {}, whole.extent()), Error);
  std::vector<Triangle> bad = triangles;
  bad[0][1] = std::int32_t(vertices.size());
  EXPECT_THROW(Mesh::part_of("cap", vertices, bad, complete, whole.extent()), Error);
}

}  // namespace
}  // namespace fmbem
