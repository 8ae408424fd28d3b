#include "fmbem/io/gmsh_reader.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <clocale>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <numbers>
#include <string>

#include "fmbem/core/error.hpp"
#include "fmbem/mesh/mesh.hpp"
#include "scratch_test.hpp"

#if FMBEM_HAVE_GMSH
#include <gmsh.h>
#endif
#if defined(_OPENMP)
#include <omp.h>
#endif

namespace fmbem::io {
namespace {

namespace fs = std::filesystem;

const std::string kSphereMsh = std::string(FMBEM_SOURCE_DIR) + "/meshes/sphere.msh";
const std::string kCubeMsh = std::string(FMBEM_SOURCE_DIR) + "/meshes/cube.msh";

// Runs `call`, expects fmbem::Error, and returns its message.
template <typename Call>
std::string error_message(Call&& call) {
  try {
    call();
  } catch (const Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected fmbem::Error";
  return {};
}

#if FMBEM_HAVE_GMSH

class GmshReader : public ScratchTest {
 protected:
  std::string write_text(const std::string& name, const std::string& text) const {
    const std::string path = scratch_file(name);
    std::ofstream(path, std::ios::binary) << text;
    return path;
  }

  // Re-saves a mesh through the Gmsh API in another MSH version and/or binary.
  // Gmsh changes the locale on initialise: put it back for the other tests.
  std::string convert(const std::string& from, const std::string& name, double version,
                      bool binary) const {
    const std::string to = scratch_file(name);
    const std::string locale = std::setlocale(LC_ALL, nullptr);
    gmsh::initialize(0, nullptr, false);
    gmsh::option::setNumber("General.Terminal", 0);
    gmsh::open(from);
    gmsh::option::setNumber("Mesh.MshFileVersion", version);
    gmsh::option::setNumber("Mesh.Binary", binary ? 1 : 0);
    gmsh::write(to);
    gmsh::finalize();
    std::setlocale(LC_ALL, locale.c_str());
    return to;
  }
};

void expect_identical(const Surface& a, const Surface& b) {
  ASSERT_EQ(a.vertices.size(), b.vertices.size());
  ASSERT_EQ(a.triangles.size(), b.triangles.size());
  EXPECT_TRUE(a.vertices == b.vertices);
  EXPECT_TRUE(a.triangles == b.triangles);
}

// ASCII files written by Gmsh keep 16 significant digits, which need not
// round-trip a double exactly: allow a couple of units in the last place.
void expect_same_up_to_printing(const Surface& a, const Surface& b) {
  ASSERT_EQ(a.vertices.size(), b.vertices.size());
  EXPECT_TRUE(a.triangles == b.triangles);
  double largest_gap = 0.0;
  for (std::size_t v = 0; v < a.vertices.size(); ++v)
    largest_gap = std::max(largest_gap, norm(a.vertices[v] - b.vertices[v]));
  EXPECT_LE(largest_gap, 1e-15);
}

// Euler: V - E + F = 2 on a closed genus-0 triangle surface, with E = 3F / 2.
bool euler_sphere_like(const Surface& s) { return 2 * s.vertices.size() == s.triangles.size() + 4; }

TEST_F(GmshReader, ShippedSphereIsUnitSphereMsh41) {
  const Surface sphere = read_gmsh(kSphereMsh);
  EXPECT_GE(sphere.triangles.size(), 4000u);
  EXPECT_LE(sphere.triangles.size(), 6000u);
  EXPECT_TRUE(euler_sphere_like(sphere)) << "only used vertices are kept";
  double worst = 0.0;
  for (const Vec3& v : sphere.vertices) worst = std::max(worst, std::abs(norm(v) - 1.0));
  EXPECT_LE(worst, 1e-12);

  const Mesh mesh = Mesh::from_surface(sphere, kSphereMsh);
  EXPECT_NEAR(mesh.volume(), 4.0 / 3.0 * std::numbers::pi, 0.01);
  EXPECT_LT(mesh.volume(), 4.0 / 3.0 * std::numbers::pi);  // inscribed polyhedron
}

TEST_F(GmshReader, ShippedCubeIsUnitCubeMsh22) {
  std::ifstream file(kCubeMsh);
  std::string header, version;
  std::getline(file, header);
  std::getline(file, version);
  EXPECT_EQ(version, "2.2 0 8");

  const Surface cube = read_gmsh(kCubeMsh);
  EXPECT_GE(cube.triangles.size(), 1000u);
  EXPECT_LE(cube.triangles.size(), 3000u);
  EXPECT_TRUE(euler_sphere_like(cube));
  Vec3 low{1e9, 1e9, 1e9}, high{-1e9, -1e9, -1e9};
  for (const Vec3& v : cube.vertices) {
    low = {std::min(low.x, v.x), std::min(low.y, v.y), std::min(low.z, v.z)};
    high = {std::max(high.x, v.x), std::max(high.y, v.y), std::max(high.z, v.z)};
  }
  EXPECT_EQ(low, (Vec3{-0.5, -0.5, -0.5}));
  EXPECT_EQ(high, (Vec3{0.5, 0.5, 0.5}));

  const Mesh mesh = Mesh::from_surface(cube, kCubeMsh);
  EXPECT_NEAR(mesh.volume(), 1.0, 1e-12);  // flat faces: exact up to rounding
  double area = 0.0;
  for (double a : mesh.areas()) area += a;
  EXPECT_NEAR(area, 6.0, 1e-12);
}

TEST_F(GmshReader, BinaryMsh41EqualsAscii) {
  expect_identical(read_gmsh(convert(kSphereMsh, "sphere_bin.msh", 4.1, true)),
                   read_gmsh(kSphereMsh));
}

TEST_F(GmshReader, BinaryMsh22EqualsAscii) {
  expect_identical(read_gmsh(convert(kCubeMsh, "cube_bin.msh", 2.2, true)), read_gmsh(kCubeMsh));
}

TEST_F(GmshReader, Msh22EqualsMsh41) {
  expect_same_up_to_printing(read_gmsh(convert(kSphereMsh, "sphere22.msh", 2.2, false)),
                             read_gmsh(kSphereMsh));
  expect_same_up_to_printing(read_gmsh(convert(kCubeMsh, "cube41.msh", 4.1, false)),
                             read_gmsh(kCubeMsh));
}

TEST_F(GmshReader, ReadsTwiceInOneProcess) {
  const Surface first = read_gmsh(kCubeMsh);
  const Surface second = read_gmsh(kCubeMsh);
  expect_identical(first, second);
}

TEST_F(GmshReader, PrintsNothingAndRestoresProcessState) {
  const std::string locale_before = std::setlocale(LC_ALL, nullptr);
#if defined(_OPENMP)
  omp_set_num_threads(3);
#endif
  ::testing::internal::CaptureStdout();
  ::testing::internal::CaptureStderr();
  read_gmsh(kSphereMsh);
  EXPECT_THROW(read_gmsh(write_text("bad.msh", "$MeshFormat\n4.1 0 8\n$EndMeshFormat\n$Nodes\n9")),
               Error);
  const std::string out = ::testing::internal::GetCapturedStdout();
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(out, "");
  EXPECT_EQ(err, "");
  EXPECT_EQ(std::setlocale(LC_ALL, nullptr), locale_before);
#if defined(_OPENMP)
  EXPECT_EQ(omp_get_max_threads(), 3) << "gmsh::initialize sets 1 thread; read_gmsh restores it";
#endif
}

TEST_F(GmshReader, SiblingOptionFileIsNotRun) {
  // Gmsh runs "<mesh>.opt" as a script when it opens <mesh>; read_gmsh must not.
  const std::string mesh = scratch_file("cube.msh");
  fs::copy_file(kCubeMsh, mesh);
  const std::string marker = scratch_file("ran");
  write_text("cube.msh.opt", "System \"touch " + marker + "\";\nGeneral.Terminal = 1;\n");
  ::testing::internal::CaptureStdout();
  expect_identical(read_gmsh(mesh), read_gmsh(kCubeMsh));
  EXPECT_EQ(::testing::internal::GetCapturedStdout(), "");
  EXPECT_FALSE(fs::exists(marker));
}

TEST_F(GmshReader, GmshMessagesNameTheUsersPath) {
  std::ifstream in(kCubeMsh, std::ios::binary);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string path = write_text("truncated22.msh", text.substr(0, text.size() / 2));
  const std::string message = error_message([&] { read_gmsh(path); });
  EXPECT_EQ(message,
            "cannot read mesh file '" + path + "': Gmsh says: Error loading '" + path + "'");
}

TEST_F(GmshReader, MissingFile) {
  const std::string path = scratch_file("nowhere.msh");
  const std::string message = error_message([&] { read_gmsh(path); });
  EXPECT_NE(message.find(path), std::string::npos) << message;
  EXPECT_NE(message.find("no such file"), std::string::npos) << message;
}

TEST_F(GmshReader, Directory) {
  const std::string message = error_message([&] { read_gmsh(scratch_.string()); });
  EXPECT_NE(message.find("directory"), std::string::npos) << message;
}

TEST_F(GmshReader, EmptyFile) {
  const std::string path = write_text("empty.msh", "");
  const std::string message = error_message([&] { read_gmsh(path); });
  EXPECT_NE(message.find(path), std::string::npos) << message;
  EXPECT_NE(message.find("not a Gmsh .msh file"), std::string::npos) << message;
}

TEST_F(GmshReader, GarbageText) {
  const std::string path = write_text("garbage.msh", "garbage text\n1 2 3\n");
  const std::string message = error_message([&] { read_gmsh(path); });
  EXPECT_NE(message.find("not a Gmsh .msh file"), std::string::npos) << message;
}

TEST_F(GmshReader, GeoScriptIsNotExecuted) {
  // Gmsh would run a .geo script (which can call System); read_gmsh refuses it.
  const std::string marker = scratch_file("ran");
  const std::string path = write_text("script.geo", "System \"touch " + marker + "\";\n");
  const std::string message = error_message([&] { read_gmsh(path); });
  EXPECT_NE(message.find("not a Gmsh .msh file"), std::string::npos) << message;
  EXPECT_FALSE(fs::exists(marker));
}

TEST_F(GmshReader, UnsupportedVersion) {
  const std::string path = write_text("v3.msh", "$MeshFormat\n3.0 0 8\n$EndMeshFormat\n");
  const std::string message = error_message([&] { read_gmsh(path); });
  EXPECT_NE(message.find("MSH format version '3.0 0 8'"), std::string::npos) << message;
}

TEST_F(GmshReader, TruncatedFile) {
  std::ifstream in(kSphereMsh, std::ios::binary);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string path = write_text("truncated.msh", text.substr(0, text.size() / 2));
  const std::string message = error_message([&] { read_gmsh(path); });
  EXPECT_NE(message.find("cannot read mesh file '" + path + "': Gmsh says: "), std::string::npos)
      << message;
}

TEST_F(GmshReader, TruncatedBinaryFile) {
  const std::string binary = convert(kSphereMsh, "sphere_bin.msh", 4.1, true);
  fs::resize_file(binary, fs::file_size(binary) * 3 / 4);
  const std::string message = error_message([&] { read_gmsh(binary); });
  EXPECT_NE(message.find("Gmsh says"), std::string::npos) << message;
}

TEST_F(GmshReader, NoTriangles) {
  const std::string path = write_text("lines.msh",
                                      "$MeshFormat\n2.2 0 8\n$EndMeshFormat\n"
                                      "$Nodes\n3\n1 0 0 0\n2 1 0 0\n3 1 1 0\n$EndNodes\n"
                                      "$Elements\n3\n1 15 2 0 1 1\n2 1 2 0 1 1 2\n"
                                      "3 1 2 0 1 2 3\n$EndElements\n");
  const std::string message = error_message([&] { read_gmsh(path); });
  EXPECT_NE(message.find(path), std::string::npos) << message;
  EXPECT_NE(message.find("no 3-node triangles"), std::string::npos) << message;
  EXPECT_NE(message.find("Line 2"), std::string::npos) << message;
}

TEST_F(GmshReader, IgnoresOtherElementsAndUnusedNodes) {
  // Node 9 is used by no triangle, node tags are sparse, a point and a line
  // come along, and triangle tags are out of order in the file.
  const std::string path = write_text("mixed.msh",
                                      "$MeshFormat\n2.2 0 8\n$EndMeshFormat\n"
                                      "$Nodes\n5\n10 0 0 0\n20 1 0 0\n30 0 1 0\n40 0 0 1\n"
                                      "9 5 5 5\n$EndNodes\n"
                                      "$Elements\n4\n1 15 2 0 1 9\n2 1 2 0 1 10 20\n"
                                      "8 2 2 0 1 10 20 40\n7 2 2 0 1 10 30 20\n$EndElements\n");
  const Surface s = read_gmsh(path);
  ASSERT_EQ(s.vertices.size(), 4u);
  EXPECT_EQ(s.vertices[0], (Vec3{0, 0, 0}));
  EXPECT_EQ(s.vertices[3], (Vec3{0, 0, 1}));
  ASSERT_EQ(s.triangles.size(), 2u);
  EXPECT_EQ(s.triangles[0], (Triangle{0, 2, 1}));  // element 7 first
  EXPECT_EQ(s.triangles[1], (Triangle{0, 1, 3}));
}

// Gmsh 4.8 itself segfaults on these MSH 2 files (node tag one past the last).
TEST_F(GmshReader, UndefinedNodeInAsciiMsh22) {
  const std::string path = write_text("undefined.msh",
                                      "$MeshFormat\n2.2 0 8\n$EndMeshFormat\n"
                                      "$Nodes\n3\n1 0 0 0\n2 1 0 0\n3 0 1 0\n$EndNodes\n"
                                      "$Elements\n2\n1 2 2 0 1 1 2 3\n2 2 2 0 1 1 2 4\n"
                                      "$EndElements\n");
  const std::string message = error_message([&] { read_gmsh(path); });
  EXPECT_NE(message.find("mesh file '" + path +
                         "' is malformed: element 2 uses node 4, which the file does not define"),
            std::string::npos)
      << message;
}

TEST_F(GmshReader, UndefinedNodeInBinaryMsh22) {
  // Last int of the cube's binary element section is a node of its last triangle.
  const std::string path = convert(kCubeMsh, "cube_bin.msh", 2.2, true);
  std::string bytes;
  {
    std::ifstream in(path, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  const std::size_t last_node = bytes.rfind("\n$EndElements") - sizeof(std::int32_t);
  const Surface cube = read_gmsh(kCubeMsh);
  const std::int32_t one_past = static_cast<std::int32_t>(cube.vertices.size()) + 1;
  std::memcpy(&bytes[last_node], &one_past, sizeof one_past);
  std::ofstream(path, std::ios::binary) << bytes;
  const std::string message = error_message([&] { read_gmsh(path); });
  EXPECT_NE(message.find("uses node " + std::to_string(one_past)), std::string::npos) << message;
}

TEST_F(GmshReader, UndefinedNodeInMsh41) {
  const std::string path = write_text("undefined41.msh",
                                      "$MeshFormat\n4.1 0 8\n$EndMeshFormat\n"
                                      "$Nodes\n1 3 1 3\n2 1 0 3\n1\n2\n3\n"
                                      "0 0 0\n1 0 0\n0 1 0\n$EndNodes\n"
                                      "$Elements\n1 1 1 1\n2 1 2 1\n1 1 2 4\n$EndElements\n");
  const std::string message = error_message([&] { read_gmsh(path); });
  EXPECT_NE(message.find("Gmsh says: Unknown node 4"), std::string::npos) << message;
}

TEST_F(GmshReader, NonFiniteCoordinate) {
  const std::string path = write_text("nan.msh",
                                      "$MeshFormat\n2.2 0 8\n$EndMeshFormat\n"
                                      "$Nodes\n3\n1 0 0 0\n2 1 0 0\n3 nan 1 0\n$EndNodes\n"
                                      "$Elements\n1\n1 2 2 0 1 1 2 3\n$EndElements\n");
  const std::string message = error_message([&] { read_gmsh(path); });
  EXPECT_NE(message.find("non-finite coordinate at node 3"), std::string::npos) << message;
}

#else  // FMBEM_HAVE_GMSH

TEST(GmshReader, BuildWithoutGmshSaysSo) {
  EXPECT_FALSE(gmsh_available());
  const std::string message = error_message([] { read_gmsh(kSphereMsh); });
  EXPECT_NE(message.find("no Gmsh support"), std::string::npos) << message;
}

#endif  // FMBEM_HAVE_GMSH

}  // namespace
}  // namespace fmbem::io
