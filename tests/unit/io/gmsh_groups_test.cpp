// The physical groups read with the surface (Surface::groups, triangle_group, overlap): the
// shipped meshes' groups, MSH 2.2 against 4.1 and binary against ASCII, overlaps, files
// without groups.
#include <gtest/gtest.h>

#include <algorithm>
#include <clocale>
#include <cmath>
#include <cstdint>
#include <numbers>
#include <string>
#include <vector>

#include "fmbem/core/error.hpp"
#include "fmbem/io/gmsh_reader.hpp"
#include "fmbem/mesh/mesh.hpp"
#include "gmsh_test_support.hpp"
#include "msh_samples.hpp"

namespace fmbem::io {
namespace {

#if FMBEM_HAVE_GMSH

using test::error_message;
using test::expect_same_up_to_printing;
using test::surface_of;
using GmshGroups = test::GmshTest;

std::string shipped(const std::string& name) {
  return std::string(FMBEM_SOURCE_DIR) + "/meshes/" + name + ".msh";
}

// The triangles in each group (the last count: in none).
std::vector<std::size_t> group_sizes(const Surface& s) {
  std::vector<std::size_t> sizes(s.groups.size() + 1, 0);
  for (std::int32_t g : s.triangle_group) ++sizes[g < 0 ? s.groups.size() : std::size_t(g)];
  return sizes;
}

// Whether every vertex of every triangle of group g satisfies `holds`.
template <class Holds>
bool all_corners(const Surface& s, std::int32_t g, Holds&& holds) {
  for (std::size_t t = 0; t < s.triangles.size(); ++t)
    if (s.triangle_group[t] == g)
      for (std::int32_t v : s.triangles[t])
        if (!holds(s.vertices[std::size_t(v)])) return false;
  return true;
}

// Read, then validated: the groups kept in the triangles' order, no triangle flipped.
Surface checked_surface(const std::string& path) {
  Surface s = surface_of(path);
  const Mesh mesh = Mesh::from_surface(s, path);
  EXPECT_EQ(mesh.flipped_triangles(), 0u) << path << ": not outward as written";
  EXPECT_EQ(mesh.groups(), s.groups);
  EXPECT_EQ(mesh.element_groups(), s.triangle_group);
  EXPECT_EQ(mesh.group_overlap(), s.overlap);
  return s;
}

constexpr double kOn = 1e-9;  // a vertex on a plane or circle, to the CAD's rounding

TEST_F(GmshGroups, SphereEarHasSkinEarAndAVolumeGroup) {
  const Surface s = checked_surface(shipped("sphere_ear"));
  EXPECT_EQ(s.groups,
            (std::vector<SurfaceGroup>{{"skin", 1, 2}, {"left_ear", 2, 2}, {"air", 3, 3}}));
  EXPECT_EQ(group_sizes(s), (std::vector<std::size_t>{2654, 22, 0, 0}));
  EXPECT_FALSE(s.overlap);
  const double edge = std::cos(10 * std::numbers::pi / 180);
  EXPECT_TRUE(all_corners(s, 1, [&](const Vec3& p) { return p.x >= edge - kOn; }));
  EXPECT_TRUE(all_corners(s, 0, [&](const Vec3& p) { return p.x <= edge + kOn; }));
  for (const Vec3& p : s.vertices) EXPECT_NEAR(norm(p), 1.0, 1e-12);
}

// The cap theta < 30 degrees at three refinements: its edge on the circle z = cos 30.
TEST_F(GmshGroups, SphereCapsHaveCapAndRest) {
  const double edge = std::cos(30 * std::numbers::pi / 180);
  const std::vector<std::vector<std::size_t>> sizes = {
      {52, 546, 0}, {179, 2057, 0}, {599, 8023, 0}};
  for (int level = 1; level <= 3; ++level) {
    SCOPED_TRACE(level);
    const Surface s = checked_surface(shipped("sphere_cap_" + std::to_string(level)));
    EXPECT_EQ(s.groups, (std::vector<SurfaceGroup>{{"cap", 1, 2}, {"rest", 2, 2}}));
    EXPECT_EQ(group_sizes(s), sizes[std::size_t(level - 1)]);
    EXPECT_TRUE(all_corners(s, 0, [&](const Vec3& p) { return p.z >= edge - kOn; }));
    EXPECT_TRUE(all_corners(s, 1, [&](const Vec3& p) { return p.z <= edge + kOn; }));
    // The corners both groups share lie on the circle; the cap's area tends to 2 pi (1 - cos 30).
    std::vector<int> in(s.vertices.size(), 0);
    double cap_area = 0.0;
    for (std::size_t t = 0; t < s.triangles.size(); ++t) {
      for (std::int32_t v : s.triangles[t]) in[std::size_t(v)] |= 1 << s.triangle_group[t];
      if (s.triangle_group[t] != 0) continue;
      const auto& [a, b, c] = s.triangles[t];
      cap_area += 0.5 * norm(cross(s.vertices[std::size_t(b)] - s.vertices[std::size_t(a)],
                                   s.vertices[std::size_t(c)] - s.vertices[std::size_t(a)]));
    }
    std::size_t on_edge = 0;
    for (std::size_t v = 0; v < s.vertices.size(); ++v)
      if (in[v] == 3) {
        ++on_edge;
        EXPECT_NEAR(s.vertices[v].z, edge, kOn);
        EXPECT_NEAR(norm(s.vertices[v]), 1.0, 1e-12);
      }
    EXPECT_GE(on_edge, 12u);
    EXPECT_NEAR(cap_area, 2 * std::numbers::pi * (1 - edge), 0.04 / (1 << (level - 1)));
  }
}

TEST_F(GmshGroups, EllipsoidHasTopBottomAndBelt) {
  const Surface s = checked_surface(shipped("ellipsoid_groups"));
  EXPECT_EQ(s.groups, (std::vector<SurfaceGroup>{{"top", 1, 2}, {"bottom", 2, 2}, {"belt", 3, 2}}));
  EXPECT_EQ(group_sizes(s), (std::vector<std::size_t>{699, 709, 1082, 0}));
  EXPECT_TRUE(all_corners(s, 0, [](const Vec3& p) { return p.z >= 0.3 - kOn; }));
  EXPECT_TRUE(all_corners(s, 1, [](const Vec3& p) { return p.z <= -0.3 + kOn; }));
  EXPECT_TRUE(all_corners(s, 2, [](const Vec3& p) { return std::abs(p.z) <= 0.3 + kOn; }));
  for (const Vec3& p : s.vertices)
    EXPECT_NEAR(p.x * p.x + p.y * p.y / 0.64 + p.z * p.z / 0.36, 1.0, 1e-6);  // a B-spline's
}

TEST_F(GmshGroups, BoxHasLidFloorAndWalls) {
  const Surface s = checked_surface(shipped("box_groups"));
  EXPECT_EQ(s.groups, (std::vector<SurfaceGroup>{{"lid", 1, 2}, {"floor", 2, 2}, {"walls", 3, 2}}));
  EXPECT_EQ(group_sizes(s), (std::vector<std::size_t>{420, 402, 1610, 0}));
  EXPECT_TRUE(all_corners(s, 0, [](const Vec3& p) { return p.z == 0.5; }));
  EXPECT_TRUE(all_corners(s, 1, [](const Vec3& p) { return p.z == -0.5; }));
  for (std::size_t t = 0; t < s.triangles.size(); ++t)  // a wall's triangle stands upright
    if (s.triangle_group[t] == 2) {
      const Vec3 &a = s.vertices[std::size_t(s.triangles[t][0])],
                 &b = s.vertices[std::size_t(s.triangles[t][1])],
                 &c = s.vertices[std::size_t(s.triangles[t][2])];
      EXPECT_EQ(cross(b - a, c - a).z, 0.0);
    }
}

// Each as MSH 2.2 and 4.1, ASCII and binary, written by Gmsh: the same triangles in the same
// groups (MSH 2.2 carries them per element: the ear's volume group "air", without elements, is
// there by its name alone).
TEST_F(GmshGroups, Msh22And41BinaryAndAsciiAgree) {
  for (const std::string name : {"sphere_ear", "sphere_cap_1", "ellipsoid_groups", "box_groups"}) {
    SCOPED_TRACE(name);
    const Surface original = surface_of(shipped(name));
    for (const auto& [version, binary] :
         {std::pair{2.2, false}, std::pair{2.2, true}, std::pair{4.1, true}}) {
      SCOPED_TRACE(std::to_string(version) + (binary ? " binary" : " ascii"));
      const Surface s = surface_of(convert(shipped(name), "converted.msh", version, binary));
      expect_same_up_to_printing(s, original);
      EXPECT_EQ(s.groups, original.groups);
      EXPECT_EQ(s.triangle_group, original.triangle_group);
    }
  }
}

// An MSH 2.2 file whose one entity holds triangles of two physical tags (Gmsh puts the entity in
// both groups): each triangle is in its own element's group.
TEST_F(GmshGroups, Msh22GroupsAreEachElements) {
  samples::MeshData mesh = samples::from_surface(make_icosphere(2, 1.0));
  const Surface sphere = make_icosphere(2, 1.0);
  std::vector<std::int32_t> expected;
  for (std::size_t t = 0; t < mesh.elements.size(); ++t) {
    const Vec3& p = sphere.vertices[std::size_t(sphere.triangles[t][0])];
    const int physical = p.z > 0.5 ? 7 : p.z < -0.5 ? 0 : 3;
    mesh.elements[t].physical = physical;
    expected.push_back(physical == 7 ? 1 : physical == 3 ? 0 : -1);
  }
  mesh.names = {{2, 7, "north"}, {2, 3, "middle"}};
  for (bool binary : {false, true}) {
    const Surface s = surface_of(write_text("mixed.msh", samples::msh22(mesh, binary)));
    EXPECT_EQ(s.groups, (std::vector<SurfaceGroup>{{"middle", 3, 2}, {"north", 7, 2}}));
    EXPECT_EQ(s.triangle_group, expected);
    EXPECT_FALSE(s.overlap);
  }
}

// The cube of side 1 (Gmsh's OpenCASCADE box, faces 1..6) meshed coarsely, with the surface
// groups `groups` (name, faces) and a volume group when `volume` is set, as MSH 4.1.
std::string box_file(const std::string& path,
                     const std::vector<std::pair<std::string, std::vector<int>>>& groups) {
  const std::string locale = std::setlocale(LC_ALL, nullptr);
  gmsh::initialize(0, nullptr, false);
  gmsh::option::setNumber("General.Terminal", 0);
  gmsh::model::add("box");
  gmsh::model::occ::addBox(-0.5, -0.5, -0.5, 1, 1, 1);
  gmsh::model::occ::synchronize();
  for (const auto& [name, faces] : groups)
    gmsh::model::setPhysicalName(2, gmsh::model::addPhysicalGroup(2, faces), name);
  gmsh::option::setNumber("Mesh.MeshSizeMax", 0.3);
  gmsh::model::mesh::generate(2);
  gmsh::option::setNumber("Mesh.MshFileVersion", 4.1);
  gmsh::write(path);
  gmsh::finalize();
  std::setlocale(LC_ALL, locale.c_str());
  return path;
}

// Faces 1 and 2 in "sides", 2 and 3 in "front" (face 2 in both), the rest in "others". Not an
// error when read: the overlap is told, with the first group kept.
TEST_F(GmshGroups, OverlapIsReported) {
  const std::string path = box_file(scratch_file("overlap.msh"),
                                    {{"sides", {1, 2}}, {"front", {2, 3}}, {"others", {4, 5, 6}}});
  const Surface s = surface_of(path);
  ASSERT_EQ(s.groups.size(), 3u);
  EXPECT_EQ(s.groups[0].name, "sides");
  EXPECT_EQ(s.groups[1].name, "front");
  ASSERT_TRUE(s.overlap);
  EXPECT_EQ(s.overlap->first, 0);
  EXPECT_EQ(s.overlap->second, 1);
  EXPECT_EQ(s.triangle_group[s.overlap->triangle], 0);
  // The overlap's triangle is the first on face 2 (x = 0.5): every earlier one is in one group.
  const auto on_face_2 = [&](std::size_t t) {
    for (std::int32_t v : s.triangles[t])
      if (s.vertices[std::size_t(v)].x != 0.5) return false;
    return true;
  };
  EXPECT_TRUE(on_face_2(s.overlap->triangle));
  for (std::size_t t = 0; t < s.overlap->triangle; ++t) EXPECT_FALSE(on_face_2(t)) << t;
  const Mesh mesh = Mesh::from_surface(s, path);
  EXPECT_EQ(mesh.group_overlap(), s.overlap);
  // Written as MSH 2.2 Gmsh repeats the face's triangles, once in each group: a duplicate.
  const std::string message = error_message(
      [&] { Mesh::from_surface(surface_of(convert(path, "overlap22.msh", 2.2, false)), path); });
  EXPECT_NE(message.find("are duplicates"), std::string::npos) << message;
}

TEST_F(GmshGroups, FilesWithoutGroupsHaveNone) {
  const Surface box = surface_of(box_file(scratch_file("plain.msh"), {}));
  EXPECT_GT(box.triangles.size(), 12u);
  EXPECT_TRUE(box.groups.empty());
  EXPECT_TRUE(box.triangle_group.empty());
  EXPECT_FALSE(box.overlap);
  for (const std::string name : {"sphere", "cube"}) {
    const Surface s = surface_of(shipped(name));
    EXPECT_TRUE(s.groups.empty()) << name;
    EXPECT_TRUE(s.triangle_group.empty()) << name;
    EXPECT_TRUE(Mesh::from_surface(s, name).element_groups().empty());
  }
}

// A group without a name and two groups of one name (their tags tell them apart).
TEST_F(GmshGroups, UnnamedAndRepeatedNamesAreKept) {
  samples::MeshData mesh = samples::from_surface(make_icosphere(1, 1.0));
  for (std::size_t t = 0; t < mesh.elements.size(); ++t) mesh.elements[t].physical = 1 + int(t % 3);
  mesh.names = {{2, 1, "wall"}, {2, 2, "wall"}};
  const Surface s = surface_of(write_text("names.msh", samples::msh22(mesh, false)));
  EXPECT_EQ(s.groups, (std::vector<SurfaceGroup>{{"wall", 1, 2}, {"wall", 2, 2}, {"", 3, 2}}));
  EXPECT_EQ(group_sizes(s), (std::vector<std::size_t>{27, 27, 26, 0}));
}

#endif  // FMBEM_HAVE_GMSH

}  // namespace
}  // namespace fmbem::io
