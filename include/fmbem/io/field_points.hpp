#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "fmbem/core/vec3.hpp"

namespace fmbem::io {

// Cells that show the field points as a surface or a volume in ParaView (from a Gmsh mesh).
enum class CellShape : std::uint8_t { triangle, quadrangle, tetrahedron, hexahedron };
int cell_shape_nodes(CellShape shape);  // 3, 4, 4, 8

// Points where the field is evaluated, and how to show them.
struct FieldPoints {
  std::vector<Vec3> points;
  // Cells over the points (Gmsh input): cell c has shape cell_shapes[c] and the point indices
  // cell_nodes[cell_offsets[c] .. cell_offsets[c + 1]) (Gmsh's node order, which is VTK's for
  // these shapes). cell_offsets is empty when there are no cells.
  std::vector<CellShape> cell_shapes;
  std::vector<std::size_t> cell_offsets;
  std::vector<std::size_t> cell_nodes;
  // A plane grid (-bem_field_plane): grid_a x grid_b points, point i + grid_a j; 0 otherwise.
  std::size_t grid_a = 0, grid_b = 0;
  // "plane 41 x 41", "'probes.csv' (12 points)", "'box.msh' (Gmsh: 1200 nodes, 2300 triangles)".
  std::string description;
  // What the reader noticed but did not refuse (ignored element types), one sentence each.
  std::vector<std::string> warnings;
};

// -bem_field_plane ox,oy,oz,ax,ay,az,bx,by,bz,na,nb: the rectangle with corner o and edges a
// and b, sampled by na points along a and nb along b, corners included:
//   x_ij = o + a i / (na - 1) + b j / (nb - 1),  i < na, j < nb.
struct FieldPlane {
  Vec3 origin, edge_a, edge_b;
  std::size_t count_a = 0, count_b = 0;
};
// Most points a plane may have (the arrays of 1e8 points take gigabytes).
inline constexpr std::size_t kMaxPlanePoints = 100'000'000;
// Parses the option's text strictly (eleven comma-separated values, nine finite numbers and two
// integers >= 2, at most kMaxPlanePoints points, edges non-zero and not parallel, every corner
// within field::kLargestFieldCoordinate); throws fmbem::Error naming `option`.
FieldPlane parse_field_plane(const std::string& option, std::string_view text);
FieldPoints plane_points(const FieldPlane& plane);

// -bem_field_sphere KIND:V:R[:x,y,z]: points on the sphere of radius R about a centre (the
// origin unless given), an HRTF's grid: fibonacci:N (the N directions of field::fibonacci_sphere,
// nearly uniform, no cells), lebedev:N (the N points of the Lebedev rule of N points,
// lebedev_rule: 6, 14, 26, ..., 5810; no cells) or equiangular:D (polar angles 0, D, ..., 180
// degrees from +z and azimuths 0, D, ..., 360 - D from +x towards +y, one point at each pole; D
// must divide 180; the rings joined by quadrangles, the poles by triangles, so ParaView shows a
// surface).
struct FieldSphere {
  enum class Kind { fibonacci, lebedev, equiangular } kind = Kind::fibonacci;
  std::size_t count = 0;      // fibonacci, lebedev: N
  double step_degrees = 0.0;  // equiangular: D
  double radius = 1.0;
  Vec3 center{};
};
// Parses the option's text strictly (N in 1..kMaxPlanePoints, D in (0, 90] dividing 180 to
// 1e-9, R finite > 0, the sphere within field::kLargestFieldCoordinate); throws fmbem::Error
// naming `option`.
FieldSphere parse_field_sphere(const std::string& option, std::string_view text);
FieldPoints sphere_points(const FieldSphere& sphere);

// Points from a file: "memory:NAME" the points a MemoryFieldPoints holds under NAME, a name
// ending in .msh is a Gmsh mesh (read_gmsh_points: its nodes, with
// its triangles, quadrangles, tetrahedra and hexahedra as cells), a folder or a file named
// Nodes.txt a Mesh2HRTF evaluation grid (read_mesh2hrtf_grid), anything else CSV
// (parse_field_csv; a regular file, not a pipe). Throws fmbem::Error naming `path`: missing
// (for memory: no points of that name held),
// unreadable, malformed, no points, a point beyond field::kLargestFieldCoordinate (naming it).
FieldPoints read_field_points(const std::string& path);

// CSV of points: one point a line, three numbers x,y,z separated by commas (blanks around them
// allowed), each read whole by std::from_chars (a '+' allowed before a digit; no hex floats, no
// "+-2", no trailing text); blank lines and lines starting with '#' are skipped, and a first
// line of words only (a header such as "x,y,z": no field that starts like a number or reads as
// nan or inf). Anything else is an error naming the line: a coordinate that is nan or inf or
// beyond a double's range (1e999), one that is not a number, two or four fields, a line over
// 4096 bytes, a point beyond field::kLargestFieldCoordinate; so is a file without points.
FieldPoints parse_field_csv(std::string_view content, const std::string& name);

// A Mesh2HRTF (NumCalc) evaluation grid: Nodes.txt holds the point count on its first line, then
// a point a line as "id x y z" (an integer id, unique, and three numbers, separated by blanks);
// Elements.txt the element count, then an element a line as "id n1 n2 n3 [n4] 2 0 1" (its nodes
// by id: a triangle or a quadrangle, and three integers Mesh2HRTF writes and nobody reads).
// `path`: the grid's folder or its Nodes.txt (Elements.txt beside it; without one, the points
// alone). The points keep Nodes.txt's order. Throws fmbem::Error naming the file and the line:
// a count that is not a whole number or disagrees with the lines, a malformed line, a duplicate
// id, an element naming an id Nodes.txt lacks, a point beyond field::kLargestFieldCoordinate, an
// empty grid, a file over 2 GiB.
FieldPoints read_mesh2hrtf_grid(const std::string& path);
// The files read_field_points(path) reads (a grid's Nodes.txt and Elements.txt, none for
// memory:NAME, else `path`): the inputs no output may overwrite.
std::vector<std::string> field_point_files(const std::string& path);
// The same from the files' contents (`elements` empty: no cells); `name` names them in messages.
FieldPoints parse_mesh2hrtf_grid(std::string_view nodes, std::string_view elements,
                                 const std::string& name);

inline constexpr std::string_view kMemoryFieldPointsPrefix = "memory:";

// Field points a program holds (the Python module's arrays), readable as the -bem_field
// "memory:NAME" while this object lives, as a CSV of them would be: checked the same way when
// read (at least one point, each within field::kLargestFieldCoordinate). Thread-safe.
class MemoryFieldPoints {
 public:
  // Throws fmbem::Error for an empty name, one with a blank, or one another object holds.
  MemoryFieldPoints(std::string name, std::vector<Vec3> points);
  ~MemoryFieldPoints();
  MemoryFieldPoints(const MemoryFieldPoints&) = delete;
  MemoryFieldPoints& operator=(const MemoryFieldPoints&) = delete;
  // "memory:NAME": the -bem_field that reads them.
  std::string spec() const { return std::string(kMemoryFieldPointsPrefix) + name_; }
  const std::string& name() const { return name_; }

 private:
  std::string name_;
};

}  // namespace fmbem::io
