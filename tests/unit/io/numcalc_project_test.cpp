// NumCalc projects: NC.inp read as NumCalc 1.2.4 reads it, the mesh files, NumCalc's result files.
#include "fmbem/io/numcalc_project.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <tuple>

#include "fmbem/core/error.hpp"
#include "scratch_test.hpp"

namespace fmbem::io {
namespace {

// Mesh2HRTF's layout for three frequencies (its load curve of N + 1 points, 0.01 Hz steps),
// a VELO line, an ADMI line with curves, a plane wave; comments and blank lines anywhere.
std::string project_text(const std::string& boundary =
                             "ELEM 0 TO 1 VELO 0.1 -1 0.0 -1\n"
                             "ELEM 2 TO 3 ADMI 1.0 1 0.5 2\n",
                         const std::string& main1 = "2 6 9 0 0 2 1 4 0") {
  return "##\nMesh2HRTF 1.2.4\n##\nhead   and  ears\n## Controlparameter I\n0 0 0 0 7 0\n"
         "##\n1 3 0.000001 0.00e+00 1 0 0\n##\n0 4\n0.000000 0.000000e+00 0.0\n"
         "0.000001 0.010000e+04 0.0\n0.000002 0.025050e+04 0.0\n\n0.000003 0.100000e+04 0.0\n"
         "## 1. Main Parameters I\n" +
         main1 +
         "\n##\n1 0 0 0.0000e+00 0 0 0\n##\n0 0 0 0\n##\n343.5 1.19 1.0 0.0e+00 0.0 e+00\n##\n"
         "NODES\nobject/Nodes.txt\ngrid/Nodes.txt\n##\nELEMENTS\nobject/Elements.txt\n"
         "grid/Elements.txt\n# SYMMETRY\n# 0 0 0\nBOUNDARY\n" +
         boundary +
         "RETU\n##\nPLANE WAVES\n0 0.0 0.0 -2.0 0.5 -1 -0.25 -1\n##\nCURVES\n2 3\n1 2\n50 0.2 0\n"
         "300 0.8 0\n2 3\n0 1.0\n100 0.5\n1000 0.0\nPOST PROCESS\nanything\nEND\n";
}

class NumCalcProject : public ScratchTest {
 protected:
  // A tetrahedron-like object (4 triangles, ids 0..3, nodes 0..3) and a grid of 1 quad and
  // 1 triangle over 5 nodes (ids from 200000, group 7) in the project folder.
  std::string write_project(const std::string& text = project_text()) {
    std::filesystem::create_directories(scratch_ / "object");
    std::filesystem::create_directories(scratch_ / "grid");
    write("object/Nodes.txt", "4\n0 0 0 0\n1 1 0 0\n# a comment line\n2 0 1 0\n3 0 0 1\n");
    write("object/Elements.txt", "4\n0 0 2 1 0 0 0\n1 0 1 3 0 0 0\n2 0 3 2 0 0 5\n3 1 2 3 0 0 5\n");
    write("grid/Nodes.txt",
          "5\n200000 2 2 2\n200001 3 2 2\n200002 3 3 2\n200003 2 3 2\n200004 2.5 4 2\n");
    write("grid/Elements.txt",
          "2\n4 200000 200001 200002 200003 2 0 7\n5 200002 200004 200003 2 0 7\n");
    return write("NC.inp", text);
  }
  std::string write(const std::string& name, const std::string& text) {
    const std::string path = scratch_file(name);
    std::ofstream(path) << text;
    return path;
  }
  static std::string error_of(const std::function<void()>& f) {
    try {
      f();
    } catch (const Error& e) {
      return e.what();
    }
    return "no error";
  }
  std::string read(const std::string& path) {
    std::ifstream in(path);
    std::ostringstream out;
    out << in.rdbuf();
    return out.str();
  }
};

TEST_F(NumCalcProject, ReadsTheSymmetrySection) {
  // Kinds per axis: 0 none, 1 symmetric, 2 antisymmetric, 3 rigid, 4 soft (NumCalc's NC_Input);
  // the data summed over the images without halves (NumCalc's NC_IncidentWaveRHS).
  const auto with_symmetry = [](const std::string& kinds, const std::string& at,
                                const std::string& count) {
    std::string text = project_text("", "2 6 9 0 " + count + " 2 1 4 0");
    const std::string from = "# SYMMETRY\n# 0 0 0\n";
    text.replace(text.find(from), from.size(), "SYMMETRY\n" + kinds + "\n" + at + "\n");
    return text;
  };
  write_project(with_symmetry("1 0 3", "0.0 5 -1.5", "2"));
  const NumCalcInput input = read_numcalc_input(scratch_.string());
  ASSERT_EQ(input.planes.planes().size(), 2u);
  EXPECT_EQ(input.planes.planes()[0].axis, 0);
  EXPECT_EQ(input.planes.planes()[0].kind, PlaneKind::symmetric);
  EXPECT_EQ(input.planes.planes()[1].axis, 2);
  EXPECT_EQ(input.planes.planes()[1].offset, -1.5);
  EXPECT_EQ(input.planes.planes()[1].kind, PlaneKind::rigid);
  for (std::size_t g = 0; g < input.planes.images(); ++g)
    EXPECT_EQ(input.planes.data_weight(g), input.planes.sign(g));
  // The element files are still read before the section.
  EXPECT_EQ(input.element_files.size(), 2u);
  for (const auto& [kinds, count, needle] :
       {std::tuple{"2 5 0", "2", "must be 0, 1, 2, 3 or 4"},
        std::tuple{"2 4 0", "1", "2 planes given, Main Parameters I says 1"}}) {
    write_project(with_symmetry(kinds, "0 0 0", count));
    EXPECT_NE(error_of([&] { read_numcalc_input(scratch_.string()); }).find(needle),
              std::string::npos)
        << kinds;
  }
}

TEST_F(NumCalcProject, ReadsEverySection) {
  write_project();
  const NumCalcInput input = read_numcalc_input(scratch_.string());  // the folder's NC.inp
  EXPECT_EQ(input.version_line, "Mesh2HRTF 1.2.4");
  EXPECT_EQ(input.title, "head and ears");
  // Steps at t = 1e-6, 2e-6, 3e-6 on the curve: its points exactly.
  ASSERT_EQ(input.frequencies_hz.size(), 3u);
  EXPECT_DOUBLE_EQ(input.frequencies_hz[0], 100.0);
  EXPECT_DOUBLE_EQ(input.frequencies_hz[1], 250.5);
  EXPECT_DOUBLE_EQ(input.frequencies_hz[2], 1000.0);
  EXPECT_EQ(input.sound_speed, 343.5);
  EXPECT_EQ(input.density, 1.19);
  EXPECT_EQ(input.element_count, 6u);
  EXPECT_EQ(input.node_count, 9u);
  ASSERT_EQ(input.node_files.size(), 2u);
  EXPECT_EQ(input.node_files[1], (scratch_ / "grid/Nodes.txt").string());
  ASSERT_EQ(input.boundary.size(), 2u);
  EXPECT_EQ(input.boundary[0].kind, NumCalcBoundary::Kind::velocity);
  EXPECT_EQ(input.boundary[0].value, cplx(0.1, 0.0));
  EXPECT_FALSE(input.boundary[0].curve_re);
  EXPECT_EQ(input.boundary[1].kind, NumCalcBoundary::Kind::admittance);
  EXPECT_EQ(*input.boundary[1].curve_re, 1);
  EXPECT_EQ(*input.boundary[1].curve_im, 2);
  EXPECT_EQ(input.boundary[1].group, "NC.inp line " + std::to_string(input.boundary[1].line));
  ASSERT_EQ(input.waves.size(), 1u);
  EXPECT_TRUE(input.waves[0].plane);
  EXPECT_EQ(input.waves[0].amplitude, cplx(0.5, -0.25));
  EXPECT_EQ(input.waves[0].vector.z, -2.0);
  ASSERT_EQ(input.curves.size(), 2u);
  // Linear between points, the ends held beyond them (NumCalc's curves).
  const NumCalcCurve& c = *input.curve(1);
  EXPECT_DOUBLE_EQ(c.at(10.0), 0.2);
  EXPECT_DOUBLE_EQ(c.at(175.0), 0.5);
  EXPECT_DOUBLE_EQ(c.at(5000.0), 0.8);
  EXPECT_DOUBLE_EQ(input.curve(2)->at(550.0), 0.25);
  EXPECT_EQ(input.curve(3), nullptr);
}

TEST_F(NumCalcProject, FrequenciesBetweenTheCurvesPointsAndBeyondThem) {
  // Steps at t0 + i dt = 0.5, 1.5, 2.5 (i = 1..3, t0 = -0.5, dt = 1) on the curve (0, 100),
  // (2, 300): 150, 250, and 300 held beyond its end.
  std::string text = project_text();
  text.replace(text.find("1 3 0.000001 0.00e+00"), 21, "1 3 1 -0.5");
  text.replace(text.find("0 4\n"), text.find("## 1.") - text.find("0 4\n"), "0 2\n0 100\n2 300\n");
  write_project(text);
  const NumCalcInput input = read_numcalc_input(scratch_file("NC.inp"));
  ASSERT_EQ(input.frequencies_hz.size(), 3u);
  EXPECT_DOUBLE_EQ(input.frequencies_hz[0], 150.0);
  EXPECT_DOUBLE_EQ(input.frequencies_hz[1], 250.0);
  EXPECT_DOUBLE_EQ(input.frequencies_hz[2], 300.0);
}

TEST_F(NumCalcProject, MeshAndGrid) {
  const NumCalcMesh mesh = read_numcalc_mesh(read_numcalc_input(write_project()));
  ASSERT_EQ(mesh.surface.triangles.size(), 4u);
  ASSERT_EQ(mesh.surface.vertices.size(), 4u);
  EXPECT_EQ(mesh.surface.triangles[0], (Triangle{0, 2, 1}));
  EXPECT_EQ(mesh.element_ids, (std::vector<long long>{0, 1, 2, 3}));
  EXPECT_EQ(mesh.element_groups, (std::vector<long long>{0, 0, 5, 5}));
  EXPECT_EQ(mesh.group_count, 3u);  // 0, 5 and the grid's 7
  // A surface group a BOUNDARY line, named by it, holding its range's elements.
  ASSERT_EQ(mesh.surface.groups.size(), 2u);
  EXPECT_EQ(mesh.surface.groups[0].name.substr(0, 12), "NC.inp line ");
  EXPECT_EQ(mesh.surface.triangle_group, (std::vector<std::int32_t>{0, 0, 1, 1}));
  ASSERT_EQ(mesh.grid.points.size(), 5u);
  EXPECT_EQ(mesh.grid_node_ids.front(), 200000);
  EXPECT_EQ(mesh.grid.points[4].y, 4.0);
  EXPECT_EQ(mesh.grid_group, 7);
  ASSERT_EQ(mesh.grid.cell_shapes.size(), 2u);
  EXPECT_EQ(mesh.grid.cell_shapes[0], CellShape::quadrangle);
  EXPECT_EQ(mesh.grid.cell_nodes, (std::vector<std::size_t>{0, 1, 2, 3, 2, 4, 3}));
  EXPECT_TRUE(mesh.warnings.empty());
}

TEST_F(NumCalcProject, RangeReachingNoElementIsAWarning) {
  const NumCalcMesh mesh = read_numcalc_mesh(read_numcalc_input(write_project(
      project_text("ELEM 100 TO 200 VELO 0.1 -1 0.0 -1\nELEM 4 TO 4 PRES 1 -1 0 -1\n"))));
  // Element 4 is an evaluation element: NumCalc skips it, and so this line too.
  ASSERT_EQ(mesh.warnings.size(), 2u);
  EXPECT_NE(mesh.warnings[0].find("ELEM 100 TO 200 reaches no boundary element"),
            std::string::npos);
  EXPECT_EQ(mesh.surface.triangle_group, (std::vector<std::int32_t>(4, -1)));
}

TEST_F(NumCalcProject, RefusalsNameTheLine) {
  const auto message = [&](const std::string& text) {
    write_project(text);
    return error_of([&] { read_numcalc_mesh(read_numcalc_input(scratch_file("NC.inp"))); });
  };
  const auto replaced = [](std::string text, const std::string& from, const std::string& to) {
    text.replace(text.find(from), from.size(), to);
    return text;
  };
  const std::string nc = scratch_file("NC.inp");
  // Planes declared without a SYMMETRY section, a section without planes, more than three.
  EXPECT_NE(message(project_text("", "2 6 9 0 2 2 1 4 0")).find("expected SYMMETRY"),
            std::string::npos);
  EXPECT_NE(message(replaced(project_text(), "# SYMMETRY\n# 0 0 0\n", "SYMMETRY\n0 0 3\n0 0 0\n"))
                .find("Main Parameters I gives 0 planes"),
            std::string::npos);
  EXPECT_NE(message(project_text("", "2 6 9 0 4 2 1 4 0")).find("NumCalc takes 0 to 3"),
            std::string::npos);
  EXPECT_NE(
      message(replaced(project_text(), "343.5 1.19 1.0", "343.5 1.19 -1")).find(nc + ", line"),
      std::string::npos);
  EXPECT_NE(message(project_text("ELEM 0 TO 2 VELO 1 -1 0 -1\nELEM 2 TO 3 PRES 1 -1 0 -1\n"))
                .find("element 2 already has a condition from NC.inp line"),
            std::string::npos);
  EXPECT_NE(message(project_text("ELEM 0 TO 1 IMPE 1 1 0 2\n")).find("IMPE with frequency curves"),
            std::string::npos);
  EXPECT_NE(message(project_text("ELEM 3 TO 1 VELO 1 -1 0 -1\n")).find("is empty"),
            std::string::npos);
  EXPECT_NE(message(project_text("ELEM 0 TO 1 VELO 1 -1 0 -1\n", "2 7 9 0 0 2 1 4 0"))
                .find("Main Parameters I gives 7 elements, its element files hold 6"),
            std::string::npos);
  EXPECT_NE(message(replaced(project_text(), "END\n", "")).find("ends before END"),
            std::string::npos);
  EXPECT_NE(
      message(replaced(project_text(), "0 0.0 0.0 -2.0", "0 0.0 0.0 0.0")).find("non-zero vector"),
      std::string::npos);
  EXPECT_NE(message(replaced(project_text(), "1 0 0 0.0000e+00", "1 -1 0 0.0000e+00"))
                .find("internal test source"),
            std::string::npos);
  // A grid element in another group, a node in both kinds of element, an unused node.
  write_project();
  write("grid/Elements.txt",
        "2\n4 200000 200001 200002 200003 2 0 7\n5 200002 200004 200003 2 0 8\n");
  EXPECT_NE(error_of([&] {
              read_numcalc_mesh(read_numcalc_input(nc));
            }).find("evaluation elements in groups 7 and 8"),
            std::string::npos);
  write("grid/Elements.txt", "2\n4 200000 200001 200002 3 2 0 7\n5 200002 200004 200003 2 0 7\n");
  EXPECT_NE(error_of([&] {
              read_numcalc_mesh(read_numcalc_input(nc));
            }).find("node id 3 is in a boundary and an evaluation element"),
            std::string::npos);
  write("grid/Elements.txt",
        "2\n4 200000 200001 200002 200003 2 0 7\n5 200000 200001 200002 2 0 7\n");
  EXPECT_NE(error_of([&] {
              read_numcalc_mesh(read_numcalc_input(nc));
            }).find("node id 200004 is in no element"),
            std::string::npos);
  EXPECT_NE(error_of([&] { read_numcalc_input(scratch_file("missing")); }).find("no such file"),
            std::string::npos);
}

TEST_F(NumCalcProject, ResultFilesInNumCalcsLayout) {
  const NumCalcInput input = read_numcalc_input(write_project());
  const NumCalcMesh mesh = read_numcalc_mesh(input);
  const std::string boundary = scratch_file("pBoundary"), grid = scratch_file("pEvalGrid");
  write_numcalc_boundary(boundary, input.version_line, mesh,
                         std::vector<cplx>{{1.5, -2}, {0, 0}, {-1e-3, 123456.0}, {7, 8}});
  // Groups in order of first appearance, each "%5d %5d", its rows "%5d % E % E".
  EXPECT_EQ(read(boundary),
            "Mesh2HRTF 1.2.4\n    3\n"
            "    0     2\n    0  1.500000E+00 -2.000000E+00\n    1  0.000000E+00  0.000000E+00\n"
            "    5     2\n    2 -1.000000E-03  1.234560E+05\n    3  7.000000E+00  8.000000E+00\n");
  write_numcalc_grid(grid, input.version_line, mesh, std::vector<cplx>(5, cplx(0.25, -1)));
  const std::string head =
      "Mesh2HRTF 1.2.4\n    1\n    7     5\n200000  2.500000E-01 -1.000000E+00\n";
  EXPECT_EQ(read(grid).substr(0, head.size()), head);
  EXPECT_NE(error_of([&] {
              write_numcalc_grid(grid, input.version_line, mesh, std::vector<cplx>(4));
            }).find("4 values for 5 nodes"),
            std::string::npos);
}

}  // namespace
}  // namespace fmbem::io
