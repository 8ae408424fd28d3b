// Field points (CSV, Gmsh, plane) and the field writers (CSV, VTK), read back.
#include "fmbem/io/field_points.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include "fmbem/core/error.hpp"
#include "fmbem/io/field_writer.hpp"
#include "fmbem/io/gmsh_reader.hpp"
#include "fmbem/quadrature/lebedev_rule.hpp"
#include "gmsh_test_support.hpp"
#include "scratch_test.hpp"

#if FMBEM_HAVE_VTK && __has_include(<vtkXMLUnstructuredGridReader.h>)
#define FMBEM_TEST_VTK_READER 1
#include <vtkCellType.h>
#include <vtkDataArray.h>
#include <vtkNew.h>
#include <vtkPointData.h>
#include <vtkStructuredGrid.h>
#include <vtkUnstructuredGrid.h>
#include <vtkXMLStructuredGridReader.h>
#include <vtkXMLUnstructuredGridReader.h>
#else
#define FMBEM_TEST_VTK_READER 0
#endif

namespace fmbem::io {
namespace {

using test::error_message;

TEST(FieldCsv, ReadsPointsHeaderCommentsAndBlanks) {
  const FieldPoints p = parse_field_csv(
      "x, y, z\r\n# microphones\n\n1,2,3\n +4.5 ,-6e-1,\t7\r\n\n8,9,1e2\n", "mics.csv");
  ASSERT_EQ(p.points.size(), 3u);
  EXPECT_EQ(p.points[1], (Vec3{4.5, -0.6, 7.0}));
  EXPECT_EQ(p.points[2], (Vec3{8, 9, 100}));
  EXPECT_TRUE(p.cell_shapes.empty());
  EXPECT_EQ(p.grid_a, 0u);
  EXPECT_NE(p.description.find("3 points"), std::string::npos);
}

TEST(FieldCsv, RefusesMalformedLinesByNumber) {
  const auto error = [](const std::string& text) {
    return error_message([&] { parse_field_csv(text, "p.csv"); });
  };
  EXPECT_NE(error("1,2,3\n1,2\n").find("'p.csv', line 2: expected three finite numbers"),
            std::string::npos);
  EXPECT_NE(error("1,2,3\n4,5,6,7\n").find("line 2"), std::string::npos);
  EXPECT_NE(error("1,2,3\n4,abc,6\n").find("'4,abc,6'"), std::string::npos);
  EXPECT_NE(error("1,2,inf\n").find("line 1"), std::string::npos);
  EXPECT_NE(error("1,2,nan\n").find("line 1"), std::string::npos);
  // A header is text in every field, and only the first line.
  EXPECT_NE(error("x,y,z\n1,2,3\nx,y,z\n").find("line 3"), std::string::npos);
  EXPECT_NE(error("x,2,z\n").find("line 1"), std::string::npos);
  EXPECT_NE(error(std::string(5000, '1') + ",2,3\n").find("longer than 4096"), std::string::npos);
  EXPECT_NE(error("").find("has no points"), std::string::npos);
  EXPECT_NE(error("x,y,z\n# nothing\n\n").find("has no points"), std::string::npos);
}

// The header rule: a first line is a header only when every field is a word. A first line of
// number-like tokens that are not finite numbers is an error naming the line and the token.
TEST(FieldCsv, NonFiniteFirstLineIsAnErrorNotAHeader) {
  const auto error = [](const std::string& text) {
    return error_message([&] { parse_field_csv(text, "p.csv"); });
  };
  for (const char* line : {"nan,nan,nan", "NaN,0,0", "-nan,0,0", "nan(1),0,0", "inf,inf,inf",
                           "0,-inf,0", "0,0,Infinity"})
    EXPECT_NE(error(std::string(line) + "\n2,0,0\n").find("line 1: coordinate"), std::string::npos)
        << line;
  EXPECT_NE(error("nan,nan,nan\n2,0,0\n").find("coordinate x 'nan' is not a finite number"),
            std::string::npos);
  EXPECT_NE(error("0,0,inf\n").find("coordinate z 'inf' is not a finite number"),
            std::string::npos);
  EXPECT_NE(error("1e999,0,0\n2,0,0\n").find("line 1: coordinate x '1e999' is beyond the range"),
            std::string::npos);
  EXPECT_NE(error("0,-1e999,0\n").find("coordinate y '-1e999' is beyond the range"),
            std::string::npos);
  EXPECT_NE(error("0,0,1e-999\n").find("coordinate z '1e-999' is beyond the range"),
            std::string::npos);
  // Words only: a header (quoted, with units, or words that begin like nan or inf).
  for (const char* header :
       {"x,y,z", "X [m], Y [m], Z [m]", "\"x\",\"y\",\"z\"", "inferior,nano,x", "position"}) {
    const FieldPoints p = parse_field_csv(std::string(header) + "\n2,0,0\n", "h.csv");
    ASSERT_EQ(p.points.size(), 1u) << header;
    EXPECT_EQ(p.points[0], (Vec3{2, 0, 0}));
  }
  // A word beside a number or a non-finite token: no header.
  EXPECT_NE(error("x,y,nan\n2,0,0\n").find("line 1: coordinate z 'nan'"), std::string::npos);
  EXPECT_NE(error("x,y,1\n2,0,0\n").find("line 1: expected three finite numbers"),
            std::string::npos);
}

// Numbers are read whole by std::from_chars, as msh_check reads coordinates.
TEST(FieldCsv, ReadsNumbersStrictly) {
  const auto error = [](const std::string& token) {
    return error_message([&] { parse_field_csv("1,2,3\n" + token + ",0,0\n", "p.csv"); });
  };
  for (const char* token : {"+-2", "++2", "-+2", "2x", "0x1p3", "0x10", "1.5.5", "1 2", "", "+",
                            "-", ".", "1e", "e5", "2,"})
    EXPECT_NE(error(token).find("'p.csv', line 2: expected three finite numbers"),
              std::string::npos)
        << "'" << token << "'";
  // Malformed numbers are no words: not a header on line 1 either.
  EXPECT_NE(error_message([] { parse_field_csv("+-2,0,0\n", "p.csv"); }).find("line 1"),
            std::string::npos);
  const FieldPoints p = parse_field_csv("+2,+.5,-0\n1.,1E2,1e-310\n-.5e-3,0,0\n", "p.csv");
  ASSERT_EQ(p.points.size(), 3u);
  EXPECT_EQ(p.points[0], (Vec3{2, 0.5, 0}));
  EXPECT_TRUE(std::signbit(p.points[0].z));
  EXPECT_EQ(p.points[1], (Vec3{1, 100, 1e-310}));  // a subnormal is a finite double
  EXPECT_EQ(p.points[2].x, -5e-4);
}

// Points up to 1e150 in every coordinate are read; beyond, squared distances overflow: refused,
// with the line and the point.
TEST(FieldCsv, RefusesPointsBeyondTheLargestFieldCoordinate) {
  const FieldPoints p = parse_field_csv("2,0,0\n1e18,0,0\n-1e150,1e150,1e150\n", "far.csv");
  ASSERT_EQ(p.points.size(), 3u);
  EXPECT_EQ(p.points[2], (Vec3{-1e150, 1e150, 1e150}));
  for (const char* far : {"1e300,0,0", "0,-1e300,0", "0,0,1.0000000000000002e150", "1e250,1,1"}) {
    const std::string message =
        error_message([&] { parse_field_csv("2,0,0\n" + std::string(far) + "\n", "far.csv"); });
    EXPECT_NE(message.find("'far.csv', line 2: the point ("), std::string::npos) << message;
    EXPECT_NE(message.find("lies beyond 1e150"), std::string::npos) << message;
  }
  EXPECT_NE(error_message([] {
              parse_field_csv("2,0,0\n-1e300,0,0\n", "far.csv");
            }).find("the point (-1e+300, 0, 0)"),
            std::string::npos);
}

class FieldFiles : public ScratchTest {};

TEST_F(FieldFiles, RefusesMissingAndNonRegularFiles) {
  EXPECT_NE(error_message([&] {
              read_field_points(scratch_file("missing.csv"));
            }).find("cannot read field file"),
            std::string::npos);
  // A folder is a Mesh2HRTF grid, which needs its Nodes.txt.
  EXPECT_NE(error_message([&] { read_field_points(scratch_.string()); }).find("no Nodes.txt"),
            std::string::npos);
  const std::string fifo = scratch_file("pipe.csv");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_NE(error_message([&] { read_field_points(fifo); }).find("not a regular file"),
            std::string::npos);
  const std::string empty = scratch_file("empty.csv");
  std::ofstream(empty).close();
  EXPECT_NE(error_message([&] { read_field_points(empty); }).find("has no points"),
            std::string::npos);
}

// Mesh2HRTF's grid files as its write_evaluation_grid writes them (ids from 200000, triangles
// followed by "2 0 1"), with tabs, blank lines, CRLF and a quadrangle.
TEST(Mesh2HrtfGrid, ReadsNodesAndElementsById) {
  const FieldPoints p = parse_mesh2hrtf_grid(
      "5\n200000 1.0 0 0\n200001\t0 1.5 0\r\n\n200002 0 0 -2e-1\n7 1 1 1\n200004 -1 0 0\n",
      "2\n200000 200000 200001 200002 2 0 1\n200001 200001 7 200004 200002 2 0 1\n", "grid");
  ASSERT_EQ(p.points.size(), 5u);
  EXPECT_EQ(p.points[2], (Vec3{0, 0, -0.2}));
  EXPECT_EQ(p.points[3], (Vec3{1, 1, 1}));
  ASSERT_EQ(p.cell_shapes.size(), 2u);
  EXPECT_EQ(p.cell_shapes[0], CellShape::triangle);
  EXPECT_EQ(p.cell_shapes[1], CellShape::quadrangle);
  EXPECT_EQ(p.cell_offsets, (std::vector<std::size_t>{0, 3, 7}));
  EXPECT_EQ(p.cell_nodes, (std::vector<std::size_t>{0, 1, 2, 1, 3, 4, 2}));
  EXPECT_NE(p.description.find("Mesh2HRTF grid: 5 nodes, 2 elements"), std::string::npos);
  // Without Elements.txt: the points alone.
  const FieldPoints points = parse_mesh2hrtf_grid("1\n3 0 0 2\n", "", "grid");
  EXPECT_EQ(points.points.size(), 1u);
  EXPECT_TRUE(points.cell_offsets.empty());
}

TEST(Mesh2HrtfGrid, RefusesMalformedFilesByLine) {
  const auto error = [](const std::string& nodes, const std::string& elements = "") {
    return error_message([&] { parse_mesh2hrtf_grid(nodes, elements, "g"); });
  };
  const std::string two = "2\n1 0 0 1\n2 0 1 0\n";
  EXPECT_NE(error("3\n1 0 0 1\n2 0 1 0\n").find("first line gives 3 nodes, the file holds 2"),
            std::string::npos);
  EXPECT_NE(error("two\n1 0 0 1\n").find("line 1: expected the number of nodes"),
            std::string::npos);
  EXPECT_NE(error("2\n1 0 0 1\n1 0 1 0\n").find("line 3: node id 1 is given twice"),
            std::string::npos);
  EXPECT_NE(error("2\n1 0 0 1\n2 0 nan 0\n").find("line 3: expected 'id x y z'"),
            std::string::npos);
  EXPECT_NE(error("1\n1.5 0 0 1\n").find("expected 'id x y z'"), std::string::npos);
  EXPECT_NE(error("1\n1 0 0 1e300\n").find("the point"), std::string::npos);
  EXPECT_NE(error("0\n").find("has no nodes"), std::string::npos);
  EXPECT_NE(error("").find("is empty"), std::string::npos);
  EXPECT_NE(error(two, "1\n1 1 2 3 2 0 1\n").find("Elements.txt, line 2: node id 3 is not in"),
            std::string::npos);
  EXPECT_NE(error(two, "1\n1 1 2 2 0 1\n").find("expected 'id n1 n2 n3 [n4] 2 0 1'"),
            std::string::npos);
  EXPECT_NE(error(two, "2\n1 1 2 1 2 0 1\n").find("gives 2 elements, the file holds 1"),
            std::string::npos);
}

TEST_F(FieldFiles, ReadsMesh2HrtfGridFolderOrNodesFile) {
  const std::string folder = scratch_file("grid");
  std::filesystem::create_directory(folder);
  std::ofstream(folder + "/Nodes.txt") << "3\n10 1 0 0\n11 0 1 0\n12 0 0 1\n";
  std::ofstream(folder + "/Elements.txt") << "1\n10 10 11 12 2 0 1\n";
  for (const std::string& path : {folder, folder + "/Nodes.txt"}) {
    const FieldPoints p = read_field_points(path);
    EXPECT_EQ(p.points.size(), 3u) << path;
    EXPECT_EQ(p.cell_shapes.size(), 1u) << path;
  }
  EXPECT_EQ(field_point_files(folder),
            (std::vector<std::string>{folder + "/Nodes.txt", folder + "/Elements.txt"}));
  std::filesystem::remove(folder + "/Elements.txt");
  EXPECT_TRUE(read_field_points(folder).cell_shapes.empty());
  EXPECT_EQ(field_point_files(scratch_file("p.csv")),
            (std::vector<std::string>{scratch_file("p.csv")}));
}

TEST(FieldSphere, EquiangularRingsPolesAndCells) {
  const FieldSphere sphere = parse_field_sphere("-bem_field_sphere", "equiangular:30:1.5:0,0,1");
  const FieldPoints p = sphere_points(sphere);
  // 180 / 30 = 6 bands: 5 rings of 12 points and the two poles.
  ASSERT_EQ(p.points.size(), 5u * 12u + 2u);
  for (const Vec3& x : p.points) EXPECT_NEAR(norm(x - Vec3{0, 0, 1}), 1.5, 1e-14);
  EXPECT_NEAR(p.points.front().z, 2.5, 1e-15);
  EXPECT_NEAR(p.points.back().z, -0.5, 1e-15);
  // Ring 3 (polar angle 90 degrees), azimuth 90 degrees: +y.
  EXPECT_NEAR(p.points[1 + 2 * 12 + 3].y, 1.5, 1e-14);
  // 12 triangles at each pole, 4 x 12 quadrangles between the rings: the cells close the sphere,
  // so every edge is shared by two cells (an Euler check: V - E + F = 2).
  ASSERT_EQ(p.cell_shapes.size(), 24u + 48u);
  std::size_t corners = 0;
  for (std::size_t c = 0; c < p.cell_shapes.size(); ++c)
    corners += p.cell_offsets[c + 1] - p.cell_offsets[c];
  EXPECT_EQ(long(p.points.size()) - long(corners / 2) + long(p.cell_shapes.size()), 2);
}

TEST(FieldSphere, LebedevPointsAreTheRulesDirections) {
  const FieldSphere sphere = parse_field_sphere("-bem_field_sphere", "lebedev:50:2:1,0,0");
  const FieldPoints p = sphere_points(sphere);
  const SphereRule rule = lebedev_rule(50);
  ASSERT_EQ(p.points.size(), 50u);
  for (std::size_t i = 0; i < p.points.size(); ++i)
    EXPECT_NEAR(norm(p.points[i] - (Vec3{1, 0, 0} + 2.0 * rule.directions[i])), 0.0, 1e-15);
  EXPECT_TRUE(p.cell_shapes.empty());
  EXPECT_NE(p.description.find("Lebedev, 50 points (degree 11)"), std::string::npos)
      << p.description;
}

TEST(FieldSphere, FibonacciPointsAndBadSpecifications) {
  const FieldPoints p = sphere_points(parse_field_sphere("-bem_field_sphere", "fibonacci:100:2"));
  ASSERT_EQ(p.points.size(), 100u);
  Vec3 sum{};
  for (const Vec3& x : p.points) {
    EXPECT_NEAR(norm(x), 2.0, 1e-14);
    sum += x;
  }
  // Nearly uniform: the points' mean lies near the centre (exactly 0 in z by symmetry).
  EXPECT_LT(norm(sum) / 100.0, 0.02);
  const auto error = [](const char* text) {
    return error_message([&] { parse_field_sphere("-bem_field_sphere", text); });
  };
  EXPECT_NE(error("fibonacci:0:1").find("N must be a whole number"), std::string::npos);
  EXPECT_NE(error("equiangular:7:1").find("divides 180"), std::string::npos);
  EXPECT_NE(error("equiangular:120:1").find("divides 180"), std::string::npos);
  EXPECT_NE(error("lebedev:10:1").find("point count of a Lebedev rule (6, 14, "),
            std::string::npos);
  EXPECT_NE(error("lebedev:-6:1").find("point count of a Lebedev rule"), std::string::npos);
  EXPECT_NE(error("spiral:10:1").find("not known"), std::string::npos);
  EXPECT_NE(error("fibonacci:10:-1").find("radius"), std::string::npos);
  EXPECT_NE(error("fibonacci:10").find("expected KIND:V:R"), std::string::npos);
  EXPECT_NE(error("fibonacci:10:1:0,0").find("centre"), std::string::npos);
  EXPECT_NE(error("fibonacci:10:1e300").find("reaches"), std::string::npos);
}

TEST(FieldPlane, ParsesAndSamplesCornersIncluded) {
  const FieldPlane plane = parse_field_plane("-bem_field_plane", "-2,0,-1, 4,0,0, 0,0,2, 5,3");
  EXPECT_EQ(plane.count_a, 5u);
  EXPECT_EQ(plane.count_b, 3u);
  const FieldPoints p = plane_points(plane);
  ASSERT_EQ(p.points.size(), 15u);
  EXPECT_EQ(p.grid_a, 5u);
  EXPECT_EQ(p.grid_b, 3u);
  EXPECT_EQ(p.points[0], (Vec3{-2, 0, -1}));
  EXPECT_EQ(p.points[4], (Vec3{2, 0, -1}));   // i fastest: o + a
  EXPECT_EQ(p.points[10], (Vec3{-2, 0, 1}));  // o + b
  EXPECT_EQ(p.points[14], (Vec3{2, 0, 1}));
  EXPECT_EQ(p.points[7], (Vec3{0, 0, 0}));
}

TEST(FieldPlane, RefusesBadSpecifications) {
  const auto error = [](const std::string& text) {
    return error_message([&] { parse_field_plane("-bem_field_plane", text); });
  };
  EXPECT_NE(error("0,0,0,1,0,0,0,1,0,0,5").find("integers >= 2"), std::string::npos);
  EXPECT_NE(error("0,0,0,1,0,0,0,1,0,5,1").find("integers >= 2"), std::string::npos);
  EXPECT_NE(error("0,0,0,1,0,0,0,1,0,5,2.5").find("integers >= 2"), std::string::npos);
  EXPECT_NE(error("0,0,0,1,0,0,2,0,0,5,5").find("parallel"), std::string::npos);
  EXPECT_NE(error("0,0,0,0,0,0,0,1,0,5,5").find("parallel"), std::string::npos);
  EXPECT_NE(error("0,0,0,1,0,0,0,1,0,5").find("needs 11 comma-separated values"),
            std::string::npos);
  EXPECT_NE(error("0,0,x,1,0,0,0,1,0,5,5").find("'x' is not a finite number"), std::string::npos);
  EXPECT_NE(error("0,0,0,1,0,0,0,1,0,100000,100000").find("more than"), std::string::npos);
  EXPECT_NE(error("0,0,0,1,0,0,0,1,0,99999999999999999999,5").find("integers >= 2"),
            std::string::npos);
  // A corner beyond field::kLargestFieldCoordinate (checked in order: o, o + a, o + b, o + a + b).
  EXPECT_NE(error("0,0,0,1e308,0,0,1e308,1e308,0,5,5").find("corner (1e+308, 0, 0) lies beyond"),
            std::string::npos);
  EXPECT_NE(error("1e151,0,0,1,0,0,0,1,0,5,5").find("corner (1e+151, 0, 0) lies beyond 1e150"),
            std::string::npos);
  EXPECT_NE(error("0,0,0,0,1,0,0,0,2e150,5,5").find("corner (0, 0, 2e+150)"), std::string::npos);
  EXPECT_NO_THROW(parse_field_plane("-bem_field_plane", "-1e150,0,0,1e150,0,0,0,1e150,0,3,3"));
}

#if FMBEM_HAVE_GMSH
// A small mesh: a quadrangle and a triangle (a surface), a tetrahedron, a line and a point,
// and a second-order triangle (in an entity of its own); node 9 is used by no element, so that
// Gmsh places it on no entity and leaves it out (MSH 2 has no other home for a node).
constexpr const char* kFieldMsh =
    "$MeshFormat\n2.2 0 8\n$EndMeshFormat\n$Nodes\n10\n"
    "1 0 0 0\n2 1 0 0\n3 1 1 0\n4 0 1 0\n5 2 0 0\n6 0 0 1\n7 3 0 0\n8 3 1 0\n9 5 5 5\n"
    "10 3 0.5 0\n$EndNodes\n$Elements\n7\n"
    "1 3 2 1 1 1 2 3 4\n2 2 2 1 1 2 5 3\n3 4 2 1 1 1 2 4 6\n4 1 2 1 1 1 2\n5 15 2 1 1 1\n"
    "6 9 2 1 2 5 7 8 10 2 3\n7 2 2 1 1 7 8 5\n$EndElements\n";

TEST_F(FieldFiles, ReadsGmshNodesAndCells) {
  const std::string path = scratch_file("box.msh");
  std::ofstream(path) << kFieldMsh;
  const FieldPoints p = read_field_points(path);
  ASSERT_EQ(p.points.size(), 9u);
  EXPECT_EQ(p.points[8], (Vec3{3, 0.5, 0}));  // node 10, after node 9 left out
  ASSERT_EQ(p.cell_shapes.size(), 4u);        // quadrangle, 2 triangles, tetrahedron
  std::size_t triangles = 0, quadrangles = 0, tetrahedra = 0;
  for (std::size_t c = 0; c < p.cell_shapes.size(); ++c) {
    triangles += p.cell_shapes[c] == CellShape::triangle;
    quadrangles += p.cell_shapes[c] == CellShape::quadrangle;
    tetrahedra += p.cell_shapes[c] == CellShape::tetrahedron;
    if (p.cell_shapes[c] == CellShape::quadrangle) {
      const std::vector<std::size_t> nodes(p.cell_nodes.begin() + long(p.cell_offsets[c]),
                                           p.cell_nodes.begin() + long(p.cell_offsets[c + 1]));
      EXPECT_EQ(nodes, (std::vector<std::size_t>{0, 1, 2, 3}));
    }
  }
  EXPECT_EQ(triangles, 2u);
  EXPECT_EQ(quadrangles, 1u);
  EXPECT_EQ(tetrahedra, 1u);
  ASSERT_EQ(p.warnings.size(), 1u);  // the second-order triangle
  EXPECT_NE(p.warnings[0].find("Triangle 6"), std::string::npos) << p.warnings[0];
  EXPECT_NE(p.description.find("9 nodes, 2 triangles, 1 quadrangles, 1 tetrahedra"),
            std::string::npos)
      << p.description;
}

TEST_F(FieldFiles, RefusesMalformedGmshFiles) {
  // The second-order triangle in the entity of the first-order ones: Gmsh 4.8 lists it as a
  // 3-node triangle with the nodes out of step; the element count catches it.
  std::string mixed = kFieldMsh;
  mixed.replace(mixed.find("6 9 2 1 2"), 9, "6 9 2 1 1");
  const std::string mixed_path = scratch_file("mixed.msh");
  std::ofstream(mixed_path) << mixed;
  EXPECT_NE(error_message([&] { read_field_points(mixed_path); }).find("mix element types"),
            std::string::npos);
  const std::string path = scratch_file("bad.msh");
  std::ofstream(path) << "$MeshFormat\n2.2 0 8\n$EndMeshFormat\n$Nodes\n1\n1 0 0 0\n$EndNodes\n"
                         "$Elements\n1\n1 2 2 1 1 1 2 3\n$EndElements\n";
  EXPECT_NE(error_message([&] { read_field_points(path); }).find("bad.msh"), std::string::npos);
  EXPECT_NE(
      error_message([&] { read_field_points(scratch_file("missing.msh")); }).find("missing.msh"),
      std::string::npos);
}

TEST_F(FieldFiles, RefusesGmshNodesBeyondTheLargestFieldCoordinate) {
  std::string far = kFieldMsh;
  far.replace(far.find("6 0 0 1\n"), 8, "6 0 0 1e200\n");
  const std::string path = scratch_file("far.msh");
  std::ofstream(path) << far;
  const std::string message = error_message([&] { read_field_points(path); });
  EXPECT_NE(message.find("far.msh', node 6 (in increasing tag order): the point (0, 0, 1e+200) "
                         "lies beyond 1e150"),
            std::string::npos)
      << message;
}
#endif

FieldPoints three_points_with_a_triangle() {
  FieldPoints p;
  p.points = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {5, 5, 5}};
  p.cell_shapes = {CellShape::triangle};
  p.cell_offsets = {0, 3};
  p.cell_nodes = {0, 1, 2};
  return p;
}

TEST(MemoryFieldPoints, ReadAsACsvOfThemWhileHeld) {
  const std::vector<Vec3> given = {{1.5, 0.0, -2.0}, {0.0, 3.25, 1e-3}};
  std::string spec;
  {
    const MemoryFieldPoints held("test-points", given);
    spec = held.spec();
    EXPECT_EQ(spec, "memory:test-points");
    const FieldPoints read = read_field_points(spec);
    EXPECT_EQ(read.points, given);
    EXPECT_EQ(read.points, parse_field_csv("1.5,0,-2\n0,3.25,1e-3\n", "same.csv").points);
    EXPECT_TRUE(read.cell_offsets.empty());
    EXPECT_EQ(read.description, "'memory:test-points' (2 points)");
    // Nothing on disk for an output to overwrite.
    EXPECT_TRUE(field_point_files(spec).empty());
    EXPECT_THROW(MemoryFieldPoints("test-points", given), Error);
  }
  const auto message_of = [](const std::string& points) {
    try {
      read_field_points(points);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message_of(spec).find("none of that name are held in memory"), std::string::npos);
  {
    const MemoryFieldPoints none("test-none", {});
    EXPECT_NE(message_of("memory:test-none").find("no points"), std::string::npos);
    const MemoryFieldPoints far("test-far", {{0, 0, 0}, {1e300, 0, 0}});
    EXPECT_NE(message_of("memory:test-far").find("point 2"), std::string::npos);
  }
  EXPECT_THROW(MemoryFieldPoints("two words", given), Error);
}

TEST_F(FieldFiles, WritesCsvThatReadsBack) {
  const FieldPoints p = three_points_with_a_triangle();
  const double nan = std::nan("");
  const std::vector<NamedColumn> arrays = {{"location", {0, 0, 2, 1}, true},
                                           {"value", {0.1, -1.0 / 3.0, nan, 1e-300}}};
  const std::string path = scratch_file("field.csv");
  write_field_csv(path, p, arrays);
  std::ifstream in(path);
  std::string header, line;
  std::getline(in, header);
  EXPECT_EQ(header, "x,y,z,location,value");
  std::vector<std::vector<std::string>> rows;
  while (std::getline(in, line)) {
    std::vector<std::string> fields;
    std::stringstream s(line);
    for (std::string f; std::getline(s, f, ',');) fields.push_back(f);
    rows.push_back(fields);
  }
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_EQ(rows[2][3], "2");
  EXPECT_EQ(std::stod(rows[1][4]), -1.0 / 3.0);  // 17 digits: exact
  EXPECT_EQ(rows[2][4], "nan");
  EXPECT_EQ(std::stod(rows[3][0]), 5.0);
  EXPECT_NE(error_message([&] {
              write_field_csv(path, p, {{"x", {1, 2, 3, 4}}});
            }).find("two columns are called 'x'"),
            std::string::npos);
  EXPECT_NE(error_message([&] {
              write_field_csv(path, p, {{"short", {1}}});
            }).find("has 1 values"),
            std::string::npos);
}

#if FMBEM_HAVE_VTK
TEST_F(FieldFiles, WritesVtuAndVtsThatVtkReads) {
  const FieldPoints p = three_points_with_a_triangle();
  const std::vector<NamedColumn> arrays = {{"location", {0, 1, 2, 0}, true},
                                           {"total_abs", {0.5, 1.5, std::nan(""), 2.5}}};
  const std::string vtu = scratch_file("field.vtu");
  write_field_vtk(vtu, p, arrays);
  const FieldPoints plane = plane_points(parse_field_plane("-p", "0,0,0,1,0,0,0,2,0,3,2"));
  std::vector<NamedColumn> plane_arrays = {{"total_abs", {1, 2, 3, 4, 5, 6}}};
  const std::string vts = scratch_file("plane.vts");
  write_field_vtk(vts, plane, plane_arrays);
#if FMBEM_TEST_VTK_READER
  vtkNew<vtkXMLUnstructuredGridReader> reader;
  reader->SetFileName(vtu.c_str());
  reader->Update();
  vtkUnstructuredGrid* grid = reader->GetOutput();
  ASSERT_EQ(grid->GetNumberOfPoints(), 4);
  ASSERT_EQ(grid->GetNumberOfCells(), 2);  // the triangle and a vertex for the unused point
  EXPECT_EQ(grid->GetCellType(0), VTK_TRIANGLE);
  EXPECT_EQ(grid->GetCellType(1), VTK_VERTEX);
  vtkDataArray* flags = grid->GetPointData()->GetArray("location");
  ASSERT_NE(flags, nullptr);
  EXPECT_EQ(flags->GetTuple1(2), 2.0);
  vtkDataArray* values = grid->GetPointData()->GetArray("total_abs");
  ASSERT_NE(values, nullptr);
  EXPECT_EQ(values->GetTuple1(3), 2.5);
  EXPECT_TRUE(std::isnan(values->GetTuple1(2)));
  vtkNew<vtkXMLStructuredGridReader> structured;
  structured->SetFileName(vts.c_str());
  structured->Update();
  vtkStructuredGrid* sg = structured->GetOutput();
  int dims[3];
  sg->GetDimensions(dims);
  EXPECT_EQ(dims[0], 3);
  EXPECT_EQ(dims[1], 2);
  EXPECT_EQ(dims[2], 1);
  double xyz[3];
  sg->GetPoint(5, xyz);  // i = 2, j = 1: o + a + b
  EXPECT_EQ(xyz[0], 1.0);
  EXPECT_EQ(xyz[1], 2.0);
  EXPECT_EQ(sg->GetPointData()->GetArray("total_abs")->GetTuple1(4), 5.0);
#endif
  EXPECT_NE(error_message([&] {
              write_field_vtk(vtu, p, {{"a", {1}}});
            }).find("has 1 values"),
            std::string::npos);
  EXPECT_NE(error_message([&] {
              write_field_vtk(scratch_file("no/such/dir.vtu"), p, arrays);
            }).find("cannot write"),
            std::string::npos);
}
#endif

}  // namespace
}  // namespace fmbem::io
