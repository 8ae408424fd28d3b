// Surface groups carried by Mesh::from_surface and Mesh::part_of: kept in the triangles' order,
// bad indices refused, the overlap kept.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "fmbem/core/error.hpp"
#include "fmbem/mesh/mesh.hpp"

namespace fmbem {
namespace {

// An icosphere with the groups "north" (z > 0.3), "south" (z < -0.3) and a volume group; the
// belt between in none.
Surface grouped_sphere(int level) {
  Surface s = make_icosphere(level, 1.0);
  s.groups = {{"north", 5, 2}, {"south", 9, 2}, {"inside", 1, 3}};
  for (const Triangle& t : s.triangles) {
    const double z = (s.vertices[std::size_t(t[0])].z + s.vertices[std::size_t(t[1])].z +
                      s.vertices[std::size_t(t[2])].z) /
                     3;
    s.triangle_group.push_back(z > 0.3 ? 0 : z < -0.3 ? 1 : -1);
  }
  return s;
}

std::string error_of(Surface s) {
  try {
    Mesh::from_surface(std::move(s), "grouped");
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

TEST(MeshGroups, KeptInTheTrianglesOrderThroughFlips) {
  Surface s = grouped_sphere(2);
  const std::vector<std::int32_t> groups = s.triangle_group;
  std::mt19937 random(3);
  for (Triangle& t : s.triangles)
    if (random() % 3 == 0) std::swap(t[1], t[2]);
  s.overlap = GroupOverlap{7, groups[7] == -1 ? 0 : groups[7], groups[7] == 0 ? 1 : 0};
  s.triangle_group[7] = s.overlap->first;
  const Mesh mesh = Mesh::from_surface(s, "grouped");
  EXPECT_GT(mesh.flipped_triangles(), 0u);
  EXPECT_EQ(mesh.groups(), s.groups);
  EXPECT_EQ(mesh.element_groups(), s.triangle_group);
  EXPECT_EQ(mesh.group_overlap(), s.overlap);
}

TEST(MeshGroups, NoneForAGeneratedSurface) {
  const Mesh mesh = Mesh::from_surface(make_icosphere(1, 1.0), "ico");
  EXPECT_TRUE(mesh.groups().empty());
  EXPECT_TRUE(mesh.element_groups().empty());
  EXPECT_FALSE(mesh.group_overlap());
}

TEST(MeshGroups, BadGroupsAreRefused) {
  Surface s = grouped_sphere(1);
  s.triangle_group.pop_back();
  EXPECT_EQ(error_of(s), "mesh 'grouped': it has 79 element groups for 80 triangles");
  s = grouped_sphere(1);
  s.triangle_group[4] = 3;
  EXPECT_EQ(error_of(s),
            "mesh 'grouped': triangle 4's group 3 is not one of its 3 groups of "
            "surfaces");
  s.triangle_group[4] = 2;  // the volume group
  EXPECT_EQ(error_of(s),
            "mesh 'grouped': triangle 4's group 2 is not one of its 3 groups of "
            "surfaces");
  s = grouped_sphere(1);
  s.groups[1].dimension = 4;
  EXPECT_EQ(error_of(s), "mesh 'grouped': its group 'south' (tag 9) has dimension 4, not 0 to 3");
  s = grouped_sphere(1);
  s.overlap = GroupOverlap{80, 0, 1};
  EXPECT_EQ(error_of(s),
            "mesh 'grouped': its group overlap names triangle 80 and groups 0 and 1, "
            "not a triangle in two of its surface groups");
  s.overlap = GroupOverlap{0, 0, 0};
  EXPECT_NE(error_of(s).find("not a triangle in two of its surface groups"), std::string::npos);
  s.overlap = GroupOverlap{0, s.triangle_group[0] == 0 ? 1 : 0, 2};
  EXPECT_NE(error_of(s).find("not a triangle in two of its surface groups"), std::string::npos);
  s.overlap = GroupOverlap{0, s.triangle_group[0] == 0 ? 1 : 0, s.triangle_group[0] == 0 ? 0 : 1};
  EXPECT_EQ(error_of(s),
            "mesh 'grouped': its group overlap's triangle 0 is not in the overlap's "
            "first group");
}

// A part of every other triangle: its elements' groups and the whole list kept.
TEST(MeshGroups, PartKeepsItsElementsGroups) {
  const Mesh whole = Mesh::from_surface(grouped_sphere(2), "grouped");
  std::vector<Triangle> triangles;
  std::vector<std::int32_t> groups;
  for (std::size_t t = 0; t < whole.size(); t += 2) {
    triangles.push_back(whole.triangles()[t]);
    groups.push_back(whole.element_groups()[t]);
  }
  const std::vector<std::uint8_t> complete(whole.vertices().size(), 0);
  const GroupOverlap overlap{whole.size() - 1, 0, 1};  // a triangle of the whole mesh
  const Mesh part = Mesh::part_of("grouped", whole.vertices(), triangles, complete, whole.extent(),
                                  groups, whole.groups(), overlap);
  EXPECT_EQ(part.element_groups(), groups);
  EXPECT_EQ(part.groups(), whole.groups());
  EXPECT_EQ(part.group_overlap(), overlap);
  groups.pop_back();
  EXPECT_THROW(Mesh::part_of("grouped", whole.vertices(), triangles, complete, whole.extent(),
                             groups, whole.groups()),
               Error);
  groups.push_back(7);
  EXPECT_THROW(Mesh::part_of("grouped", whole.vertices(), triangles, complete, whole.extent(),
                             groups, whole.groups()),
               Error);
}

}  // namespace
}  // namespace fmbem
