#include "fmbem/io/mesh_source.hpp"

#include <gtest/gtest.h>

#include <cmath>
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

}  // namespace
}  // namespace fmbem::io
