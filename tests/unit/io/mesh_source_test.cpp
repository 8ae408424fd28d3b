#include "fmbem/io/mesh_source.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>

#include "fmbem/core/error.hpp"
#include "fmbem/io/gmsh_reader.hpp"

namespace fmbem::io {
namespace {

std::string load_error(const std::string& spec) {
  try {
    load_mesh(spec);
  } catch (const Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "load_mesh('" << spec << "') did not throw fmbem::Error";
  return {};
}

double largest_radius_error(const Mesh& mesh, double radius) {
  double worst = 0.0;
  for (const Vec3& v : mesh.vertices()) worst = std::max(worst, std::abs(norm(v) - radius));
  return worst;
}

TEST(LoadMesh, IcosphereLevelOnly) {
  const Mesh mesh = load_mesh("icosphere:2");
  EXPECT_EQ(mesh.size(), 320u);
  EXPECT_EQ(mesh.name(), "icosphere:2");
  EXPECT_LE(largest_radius_error(mesh, 1.0), 1e-14);
  EXPECT_GT(mesh.volume(), 0.0);
}

// A spec read in slabs gives the whole read's triangles, corner for corner and bit for bit.
TEST(ReadSlab, AnIcosphereSlabIsTheWholeReadsTriangles) {
  const std::string spec = "icosphere:3:0.5";
  ASSERT_TRUE(reads_in_slabs(spec));
  const Surface whole = read_surface(spec).surface;
  EXPECT_EQ(slab_source_elements(spec), whole.triangles.size());
  const MeshSlab slab = read_slab(spec, 100, 740);
  EXPECT_EQ(slab.first, 100u);
  EXPECT_EQ(slab.whole_elements, whole.triangles.size());
  EXPECT_EQ(slab.whole_vertices, whole.vertices.size());
  ASSERT_EQ(slab.size(), 640u);
  for (std::size_t e = 0; e < slab.size(); ++e)
    for (std::size_t c = 0; c < 3; ++c) {
      const std::int32_t v = whole.triangles[100 + e][c];
      ASSERT_EQ(slab.vertices[3 * e + c], v);
      ASSERT_EQ(
          std::memcmp(&slab.corners[3 * e + c], &whole.vertices[std::size_t(v)], sizeof(Vec3)), 0);
    }
}

// A Gmsh file is read whole; a bad spec or range is refused.
TEST(ReadSlab, RefusesWhatIsNotReadInSlabs) {
  EXPECT_FALSE(reads_in_slabs("sphere.msh"));
  EXPECT_FALSE(reads_in_slabs("icospheres.msh"));
  EXPECT_THROW(read_slab("sphere.msh", 0, 1), Error);
  EXPECT_THROW(slab_source_elements("sphere.msh"), Error);
  EXPECT_THROW(read_slab("icosphere:x", 0, 1), Error);
  EXPECT_THROW(read_slab("icosphere:1", 0, 81), Error);
  EXPECT_THROW(read_slab("icosphere:1", 5, 4), Error);
}

TEST(LoadMesh, IcosphereLevelAndRadius) {
  EXPECT_EQ(load_mesh("icosphere:0").size(), 20u);
  const Mesh mesh = load_mesh("icosphere:1:2.5");
  EXPECT_EQ(mesh.size(), 80u);
  EXPECT_LE(largest_radius_error(mesh, 2.5), 1e-14);
  EXPECT_LE(largest_radius_error(load_mesh("icosphere:1:1e-3"), 1e-3), 1e-17);
}

TEST(LoadMesh, BadIcosphereSpecsNameTheProblem) {
  for (const std::string spec :
       {"icosphere", "icosphere:", "icosphere:11", "icosphere:-1", "icosphere:a", "icosphere:2.5",
        "icosphere:+2", "icosphere: 2", "icosphere:2x", "icosphere:99999999999999999999"}) {
    const std::string message = load_error(spec);
    EXPECT_NE(message.find("'" + spec + "'"), std::string::npos) << message;
    EXPECT_NE(message.find("level L"), std::string::npos) << message;
  }
  for (const std::string spec :
       {"icosphere:2:", "icosphere:2:0", "icosphere:2:-1", "icosphere:2:abc", "icosphere:2:inf",
        "icosphere:2:nan", "icosphere:2:1:3", "icosphere:2:1e999"}) {
    const std::string message = load_error(spec);
    EXPECT_NE(message.find("'" + spec + "'"), std::string::npos) << message;
    EXPECT_NE(message.find("radius R a positive number"), std::string::npos) << message;
  }
}

TEST(ReadSurface, IcosphereHasNoWarnings) {
  const SurfaceRead read = read_surface("icosphere:1:2");
  EXPECT_EQ(read.surface.triangles.size(), 80u);
  EXPECT_TRUE(read.warnings.empty());
  EXPECT_NE(load_error("icosphere:x").find("level L"), std::string::npos);
}

TEST(ReadSurface, FileWithVolumeElementsWarns) {
  const std::string path = std::string(FMBEM_BINARY_DIR) + "/read_surface_tets.msh";
  if (!gmsh_available()) {
    EXPECT_NE(load_error(path).find("no Gmsh support"), std::string::npos);
    return;
  }
  std::ofstream(path) << "$MeshFormat\n2.2 0 8\n$EndMeshFormat\n"
                         "$Nodes\n4\n1 0 0 0\n2 1 0 0\n3 0 1 0\n4 0 0 1\n$EndNodes\n"
                         "$Elements\n5\n1 2 2 0 1 1 3 2\n2 2 2 0 1 1 2 4\n3 2 2 0 1 1 4 3\n"
                         "4 2 2 0 1 2 3 4\n5 4 2 0 1 1 2 3 4\n$EndElements\n";
  const SurfaceRead read = read_surface(path);
  std::filesystem::remove(path);
  EXPECT_EQ(read.surface.triangles.size(), 4u);
  ASSERT_EQ(read.warnings.size(), 1u);
  EXPECT_NE(read.warnings[0].find("ignored 1 volume element (1 Tetrahedron 4)"), std::string::npos)
      << read.warnings[0];
  EXPECT_NEAR(Mesh::from_surface(read.surface, path).volume(), 1.0 / 6.0, 1e-15);
}

TEST(LoadMesh, EmptySpec) { EXPECT_NE(load_error("").find("empty"), std::string::npos); }

TEST(LoadMesh, OtherSpecsAreFilePaths) {
  const std::string cube = std::string(FMBEM_SOURCE_DIR) + "/meshes/cube.msh";
  if (!gmsh_available()) {
    EXPECT_NE(load_error(cube).find("no Gmsh support"), std::string::npos);
    return;
  }
  const Mesh mesh = load_mesh(cube);
  EXPECT_EQ(mesh.name(), cube);
  EXPECT_NEAR(mesh.volume(), 1.0, 1e-12);
  // Looks like a generated sphere but is a (missing) file name.
  const std::string message = load_error("icosphere.msh");
  EXPECT_NE(message.find("cannot read mesh file 'icosphere.msh'"), std::string::npos) << message;
}

// A surface a program holds reads back as given (groups too) while it is held, and not after.
TEST(MemorySurface, ReadsAsGivenWhileHeld) {
  Surface given = read_surface("icosphere:1").surface;
  given.groups = {{"cap", 7, 2}};
  given.triangle_group.assign(given.triangles.size(), -1);
  given.triangle_group[3] = 0;
  std::string spec;
  {
    const MemorySurface held("test-surface", given);
    spec = held.spec();
    EXPECT_EQ(spec, "memory:test-surface");
    const SurfaceRead read = read_surface(spec);
    EXPECT_EQ(read.surface.vertices, given.vertices);
    EXPECT_EQ(read.surface.triangles, given.triangles);
    EXPECT_EQ(read.surface.groups, given.groups);
    EXPECT_EQ(read.surface.triangle_group, given.triangle_group);
    EXPECT_TRUE(read.warnings.empty());
    EXPECT_EQ(load_mesh(spec).size(), given.triangles.size());
    // One name, one surface.
    EXPECT_THROW(MemorySurface("test-surface", given), Error);
  }
  EXPECT_NE(load_error(spec).find("no surface of that name"), std::string::npos);
  EXPECT_THROW(MemorySurface("", given), Error);
  EXPECT_THROW(MemorySurface("two words", given), Error);
}

}  // namespace
}  // namespace fmbem::io
