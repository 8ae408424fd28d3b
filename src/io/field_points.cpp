#include "fmbem/io/field_points.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <numbers>
#include <optional>
#include <sstream>
#include <system_error>
#include <unordered_map>

#include "fmbem/core/error.hpp"
#include "fmbem/core/fibonacci_sphere.hpp"
#include "fmbem/field/field_limits.hpp"
#include "fmbem/io/gmsh_reader.hpp"
#include "fmbem/quadrature/lebedev_rule.hpp"
#include "memory_registry.hpp"
#include "text_input.hpp"

namespace fmbem::io {
namespace {

using namespace detail;

// Throws fmbem::Error at the first point beyond the field's coordinate range: where(i) names
// point i (0-based), the reason follows.
template <class Where>
void refuse_points_out_of_range(const std::vector<Vec3>& points, Where&& where) {
  for (std::size_t i = 0; i < points.size(); ++i)
    if (!field::within_field_range(points[i]))
      throw Error(where(i) + field::out_of_range_reason(points[i]));
}

std::vector<std::string_view> split(std::string_view text) {
  std::vector<std::string_view> fields;
  for (;;) {
    const std::size_t comma = text.find(',');
    fields.push_back(trim(text.substr(0, comma)));
    if (comma == std::string_view::npos) return fields;
    text.remove_prefix(comma + 1);
  }
}

std::string format(const Vec3& v) {
  std::ostringstream out;
  out << "(" << v.x << ", " << v.y << ", " << v.z << ")";
  return out.str();
}

bool ends_with(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

int cell_shape_nodes(CellShape shape) {
  switch (shape) {
    case CellShape::triangle:
      return 3;
    case CellShape::quadrangle:
      return 4;
    case CellShape::tetrahedron:
      return 4;
    case CellShape::hexahedron:
      return 8;
  }
  return 0;
}

FieldPlane parse_field_plane(const std::string& option, std::string_view text) {
  const std::string what = option + " " + std::string(text) + ": ";
  const std::vector<std::string_view> fields = split(text);
  if (fields.size() != 11)
    throw Error(what +
                "needs 11 comma-separated values ox,oy,oz,ax,ay,az,bx,by,bz,na,nb (corner, "
                "two edge vectors, two point counts), got " +
                std::to_string(fields.size()));
  double v[9];
  for (int i = 0; i < 9; ++i)
    if (!parse_number(fields[i], v[i]))
      throw Error(what + "'" + std::string(fields[i]) + "' is not a finite number");
  FieldPlane plane{{v[0], v[1], v[2]}, {v[3], v[4], v[5]}, {v[6], v[7], v[8]}, 0, 0};
  std::size_t counts[2];
  for (int i = 0; i < 2; ++i) {
    std::string_view digits = fields[9 + i];
    if (digits.starts_with('+')) digits.remove_prefix(1);
    unsigned long long count = 0;
    const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), count);
    if (digits.empty() || error != std::errc() || end != digits.data() + digits.size() || count < 2)
      throw Error(what + "the point counts na and nb must be integers >= 2 (got '" +
                  std::string(fields[9 + i]) + "')");
    if (count > kMaxPlanePoints)
      throw Error(what + "more than " + std::to_string(kMaxPlanePoints) + " points");
    counts[i] = std::size_t(count);
  }
  if (counts[0] > kMaxPlanePoints / counts[1])
    throw Error(what + std::to_string(counts[0]) + " x " + std::to_string(counts[1]) +
                " points, more than " + std::to_string(kMaxPlanePoints));
  plane.count_a = counts[0];
  plane.count_b = counts[1];
  // The points lie in the corners' box (up to rounding, which plane_points checks).
  for (const Vec3& corner : {plane.origin, plane.origin + plane.edge_a, plane.origin + plane.edge_b,
                             plane.origin + plane.edge_a + plane.edge_b})
    if (!field::within_field_range(corner))
      throw Error(what + "the plane's corner " + field::out_of_range_reason(corner));
  const double la = norm(plane.edge_a), lb = norm(plane.edge_b);
  if (la == 0 || lb == 0 ||
      !(norm(cross(plane.edge_a * (1.0 / la), plane.edge_b * (1.0 / lb))) > 1e-12))
    throw Error(what + "the edge vectors a = " + format(plane.edge_a) + " and b = " +
                format(plane.edge_b) + " are zero or parallel: they must span a plane");
  return plane;
}

FieldPoints plane_points(const FieldPlane& plane) {
  FieldPoints out;
  out.grid_a = plane.count_a;
  out.grid_b = plane.count_b;
  out.points.resize(plane.count_a * plane.count_b);
  for (std::size_t j = 0; j < plane.count_b; ++j)
    for (std::size_t i = 0; i < plane.count_a; ++i)
      out.points[i + plane.count_a * j] = plane.origin +
                                          plane.edge_a * (double(i) / double(plane.count_a - 1)) +
                                          plane.edge_b * (double(j) / double(plane.count_b - 1));
  refuse_points_out_of_range(
      out.points, [](std::size_t i) { return "plane point " + std::to_string(i + 1) + " "; });
  out.description = "plane " + std::to_string(plane.count_a) + " x " +
                    std::to_string(plane.count_b) + " from " + format(plane.origin);
  return out;
}

FieldSphere parse_field_sphere(const std::string& option, std::string_view text) {
  const std::string whole = option + " " + excerpt(text) + ": ";
  std::vector<std::string_view> parts;
  for (std::string_view rest = text;;) {
    const std::size_t colon = rest.find(':');
    parts.push_back(rest.substr(0, colon));
    if (colon == std::string_view::npos) break;
    rest.remove_prefix(colon + 1);
  }
  if (parts.size() != 3 && parts.size() != 4)
    throw Error(whole +
                "expected KIND:V:R[:x,y,z] (fibonacci:N:R, lebedev:N:R or equiangular:D:R)");
  FieldSphere sphere;
  double value = 0.0;
  if (parts[0] == "fibonacci") {
    long long n = 0;
    if (!parse_id(parts[1], n) || n < 1 || std::uint64_t(n) > kMaxPlanePoints)
      throw Error(whole + "N must be a whole number from 1 to " + std::to_string(kMaxPlanePoints));
    sphere.count = std::size_t(n);
  } else if (parts[0] == "lebedev") {
    sphere.kind = FieldSphere::Kind::lebedev;
    long long n = 0;
    const std::vector<std::size_t> counts = lebedev_point_counts();
    if (!parse_id(parts[1], n) || n < 1 ||
        std::find(counts.begin(), counts.end(), std::size_t(n)) == counts.end()) {
      std::string known;
      for (std::size_t count : counts) known += (known.empty() ? "" : ", ") + std::to_string(count);
      throw Error(whole + "N must be the point count of a Lebedev rule (" + known + ")");
    }
    sphere.count = std::size_t(n);
  } else if (parts[0] == "equiangular") {
    sphere.kind = FieldSphere::Kind::equiangular;
    const double rings = parse_number(parts[1], value) && value > 0 ? 180.0 / value : 0.0;
    if (!(value > 0.0 && value <= 90.0) || std::abs(rings - std::round(rings)) > 1e-9 * rings)
      throw Error(whole + "D must be a step in degrees in (0, 90] that divides 180");
    sphere.step_degrees = value;
  } else {
    throw Error(whole + "the kind '" + excerpt(parts[0]) +
                "' is not known (fibonacci, lebedev or equiangular)");
  }
  if (!parse_number(parts[2], value) || !(value > 0.0))
    throw Error(whole + "the radius must be a finite number > 0");
  sphere.radius = value;
  if (parts.size() == 4) {
    const std::vector<std::string_view> xyz = split(parts[3]);
    double c[3];
    if (xyz.size() != 3 || !parse_number(xyz[0], c[0]) || !parse_number(xyz[1], c[1]) ||
        !parse_number(xyz[2], c[2]))
      throw Error(whole + "the centre must be three finite numbers x,y,z");
    sphere.center = {c[0], c[1], c[2]};
  }
  for (const Vec3& corner : {sphere.center + Vec3{sphere.radius, sphere.radius, sphere.radius},
                             sphere.center - Vec3{sphere.radius, sphere.radius, sphere.radius}})
    if (!field::within_field_range(corner))
      throw Error(whole + "the sphere reaches " + field::out_of_range_reason(corner));
  return sphere;
}

FieldPoints sphere_points(const FieldSphere& sphere) {
  FieldPoints out;
  const auto on_sphere = [&](const Vec3& d) { return sphere.center + d * sphere.radius; };
  std::ostringstream text;
  text << "sphere of radius " << sphere.radius << " about " << format(sphere.center) << ", ";
  if (sphere.kind == FieldSphere::Kind::fibonacci) {
    // The far field's directions, here as points.
    const std::size_t n = sphere.count;
    out.points.reserve(n);
    for (std::size_t i = 0; i < n; ++i) out.points.push_back(on_sphere(fibonacci_direction(i, n)));
    text << "Fibonacci, " << n << " points";
  } else if (sphere.kind == FieldSphere::Kind::lebedev) {
    const SphereRule rule = lebedev_rule(sphere.count);
    for (const Vec3& d : rule.directions) out.points.push_back(on_sphere(d));
    text << "Lebedev, " << rule.directions.size() << " points (degree " << rule.degree << ")";
  } else {
    constexpr double kDegree = std::numbers::pi / 180.0;
    const std::size_t rings = std::size_t(std::llround(180.0 / sphere.step_degrees));
    const std::size_t around = 2 * rings;
    out.points.push_back(on_sphere({0, 0, 1}));
    for (std::size_t j = 1; j < rings; ++j) {
      const double theta = double(j) * sphere.step_degrees * kDegree;
      for (std::size_t m = 0; m < around; ++m) {
        const double phi = double(m) * sphere.step_degrees * kDegree;
        out.points.push_back(on_sphere(
            {std::sin(theta) * std::cos(phi), std::sin(theta) * std::sin(phi), std::cos(theta)}));
      }
    }
    out.points.push_back(on_sphere({0, 0, -1}));
    // Point m of ring j (1 .. rings - 1) is 1 + (j - 1) around + m; the poles first and last.
    const std::size_t south = out.points.size() - 1;
    const auto at = [&](std::size_t j, std::size_t m) { return 1 + (j - 1) * around + m % around; };
    out.cell_offsets.push_back(0);
    const auto cell = [&](CellShape shape, std::initializer_list<std::size_t> nodes) {
      out.cell_shapes.push_back(shape);
      out.cell_nodes.insert(out.cell_nodes.end(), nodes);
      out.cell_offsets.push_back(out.cell_nodes.size());
    };
    for (std::size_t m = 0; m < around; ++m) {
      cell(CellShape::triangle, {0, at(1, m), at(1, m + 1)});
      for (std::size_t j = 1; j + 1 < rings; ++j)
        cell(CellShape::quadrangle, {at(j, m), at(j + 1, m), at(j + 1, m + 1), at(j, m + 1)});
      cell(CellShape::triangle, {south, at(rings - 1, m + 1), at(rings - 1, m)});
    }
    text << "equiangular " << sphere.step_degrees << " degrees, " << out.points.size() << " points";
  }
  out.description = text.str();
  return out;
}

FieldPoints parse_field_csv(std::string_view content, const std::string& name) {
  FieldPoints out;
  const std::string where = "field file '" + name + "'";
  bool first_content_line = true;
  std::size_t line_number = 0;
  while (!content.empty()) {
    const std::size_t newline = content.find('\n');
    const std::string_view raw = content.substr(0, newline);
    content.remove_prefix(newline == std::string_view::npos ? content.size() : newline + 1);
    ++line_number;
    const std::string at = where + ", line " + std::to_string(line_number) + ": ";
    if (raw.size() > kMaxTextLine)
      throw Error(at + "longer than " + std::to_string(kMaxTextLine) + " bytes");
    const std::string_view line = trim(raw);
    if (line.empty() || line.starts_with('#')) continue;
    const std::vector<std::string_view> fields = split(line);
    const bool first = first_content_line;
    first_content_line = false;
    // A header is a first line of words only ("x,y,z"); "nan,nan,nan" or "1e999,0,0" is a
    // point that is refused, not a header.
    double xyz[3];
    Token tokens[3];
    bool header = first;
    for (std::size_t c = 0; c < fields.size(); ++c) {
      double value = 0.0;
      const Token token = read_token(fields[c], value);
      header = header && token == Token::word;
      if (c < 3) tokens[c] = token, xyz[c] = value;
    }
    if (header) continue;
    if (fields.size() == 3)
      for (std::size_t c = 0; c < 3; ++c) {
        const std::string coordinate =
            "coordinate " + std::string(1, char('x' + c)) + " '" + excerpt(fields[c]) + "'";
        if (tokens[c] == Token::non_finite)
          throw Error(at + coordinate + " is not a finite number");
        if (tokens[c] == Token::out_of_range)
          throw Error(at + coordinate + " is beyond the range of a double");
      }
    if (fields.size() != 3 || tokens[0] != Token::number || tokens[1] != Token::number ||
        tokens[2] != Token::number)
      throw Error(at + "expected three finite numbers x,y,z, got '" + excerpt(line) + "'");
    const Vec3 point{xyz[0], xyz[1], xyz[2]};
    if (!field::within_field_range(point))
      throw Error(at + "the point " + field::out_of_range_reason(point));
    out.points.push_back(point);
  }
  if (out.points.empty()) throw Error(where + " has no points (x,y,z a line)");
  const std::size_t n = out.points.size();
  out.description = "'" + name + "' (" + std::to_string(n) + (n == 1 ? " point)" : " points)");
  return out;
}

FieldPoints parse_mesh2hrtf_grid(std::string_view nodes, std::string_view elements,
                                 const std::string& name) {
  FieldPoints out;
  const std::string nodes_where = "field grid '" + name + "', Nodes.txt";
  const CountedLines node_lines = counted_lines(nodes, nodes_where, "nodes", kMaxPlanePoints);
  if (node_lines.lines.empty()) throw Error(nodes_where + " has no nodes");
  std::unordered_map<long long, std::size_t> index_of;
  index_of.reserve(node_lines.lines.size());
  out.points.reserve(node_lines.lines.size());
  for (const auto& [line_number, line] : node_lines.lines) {
    const std::string at = nodes_where + ", line " + std::to_string(line_number) + ": ";
    const std::vector<std::string_view> f = words(line);
    long long id = 0;
    double xyz[3];
    if (f.size() != 4 || !parse_id(f[0], id) || !parse_number(f[1], xyz[0]) ||
        !parse_number(f[2], xyz[1]) || !parse_number(f[3], xyz[2]))
      throw Error(at + "expected 'id x y z' (an integer and three finite numbers), got '" +
                  excerpt(line) + "'");
    if (!index_of.emplace(id, out.points.size()).second)
      throw Error(at + "node id " + std::to_string(id) + " is given twice");
    const Vec3 point{xyz[0], xyz[1], xyz[2]};
    if (!field::within_field_range(point))
      throw Error(at + "the point " + field::out_of_range_reason(point));
    out.points.push_back(point);
  }
  std::string cells;
  if (!elements.empty()) {
    const std::string where = "field grid '" + name + "', Elements.txt";
    const CountedLines element_lines = counted_lines(elements, where, "elements", kMaxPlanePoints);
    out.cell_offsets.push_back(0);
    for (const auto& [line_number, line] : element_lines.lines) {
      const std::string at = where + ", line " + std::to_string(line_number) + ": ";
      const std::vector<std::string_view> f = words(line);
      long long value = 0;
      bool integers = f.size() == 7 || f.size() == 8;
      for (std::string_view w : f) integers = integers && parse_id(w, value);
      if (!integers)
        throw Error(at +
                    "expected 'id n1 n2 n3 [n4] 2 0 1' (integers: a triangle or a "
                    "quadrangle by its node ids), got '" +
                    excerpt(line) + "'");
      const std::size_t corners = f.size() - 4;
      for (std::size_t c = 1; c <= corners; ++c) {
        parse_id(f[c], value);
        const auto found = index_of.find(value);
        if (found == index_of.end())
          throw Error(at + "node id " + std::to_string(value) + " is not in Nodes.txt");
        out.cell_nodes.push_back(found->second);
      }
      out.cell_shapes.push_back(corners == 3 ? CellShape::triangle : CellShape::quadrangle);
      out.cell_offsets.push_back(out.cell_nodes.size());
    }
    if (out.cell_shapes.empty()) out.cell_offsets.clear();
    cells = ", " + std::to_string(out.cell_shapes.size()) + " elements";
  }
  out.description = "'" + name + "' (Mesh2HRTF grid: " + std::to_string(out.points.size()) +
                    " nodes" + cells + ")";
  return out;
}

namespace {

bool is_mesh2hrtf_grid(const std::string& path) {
  std::error_code ec;
  return std::filesystem::is_directory(path, ec) ||
         std::filesystem::path(path).filename() == "Nodes.txt";
}

std::filesystem::path grid_folder(const std::string& path) {
  std::error_code ec;
  return std::filesystem::is_directory(path, ec) ? std::filesystem::path(path)
                                                 : std::filesystem::path(path).parent_path();
}

}  // namespace

std::vector<std::string> field_point_files(const std::string& path) {
  if (path.starts_with(kMemoryFieldPointsPrefix)) return {};
  if (!is_mesh2hrtf_grid(path)) return {path};
  const std::filesystem::path folder = grid_folder(path);
  return {(folder / "Nodes.txt").string(), (folder / "Elements.txt").string()};
}

FieldPoints read_mesh2hrtf_grid(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path folder = grid_folder(path);
  const fs::path nodes = folder / "Nodes.txt", elements = folder / "Elements.txt";
  const std::string where = "field grid '" + path + "'";
  if (!fs::exists(nodes, ec))
    throw Error(where + ": no Nodes.txt in '" + (folder.empty() ? "." : folder.string()) + "'");
  const std::string node_text = read_regular_file(nodes.string(), where + ", Nodes.txt");
  const std::string element_text =
      fs::exists(elements, ec) ? read_regular_file(elements.string(), where + ", Elements.txt")
                               : std::string();
  return parse_mesh2hrtf_grid(node_text, element_text, path);
}

namespace {
detail::MemoryRegistry<std::vector<Vec3>>& memory_field_points() {
  static detail::MemoryRegistry<std::vector<Vec3>> registry;
  return registry;
}

FieldPoints read_memory_field_points(const std::string& spec) {
  const std::string_view name = std::string_view(spec).substr(kMemoryFieldPointsPrefix.size());
  std::optional<std::vector<Vec3>> held = memory_field_points().find(name);
  if (!held)
    throw Error("field points '" + spec +
                "': none of that name are held in memory (memory: points are given by a "
                "program, not a file)");
  if (held->empty()) throw Error("field points '" + spec + "': no points");
  refuse_points_out_of_range(*held, [&](std::size_t i) {
    return "field points '" + spec + "', point " + std::to_string(i + 1) + ": the point ";
  });
  FieldPoints read;
  read.points = std::move(*held);
  read.description = "'" + spec + "' (" + std::to_string(read.points.size()) + " points)";
  return read;
}
}  // namespace

MemoryFieldPoints::MemoryFieldPoints(std::string name, std::vector<Vec3> points)
    : name_(std::move(name)) {
  memory_field_points().insert(name_, std::move(points), "field point set");
}

MemoryFieldPoints::~MemoryFieldPoints() { memory_field_points().erase(name_); }

FieldPoints read_field_points(const std::string& path) {
  if (path.starts_with(kMemoryFieldPointsPrefix)) return read_memory_field_points(path);
  if (is_mesh2hrtf_grid(path)) return read_mesh2hrtf_grid(path);
  if (ends_with(path, ".msh")) {
    FieldPoints read = read_gmsh_points(path);
    refuse_points_out_of_range(read.points, [&](std::size_t i) {
      return "field file '" + path + "', node " + std::to_string(i + 1) +
             " (in increasing tag order): the point ";
    });
    std::size_t counts[4] = {};
    for (CellShape shape : read.cell_shapes) ++counts[int(shape)];
    std::string cells;
    const char* names[4] = {"triangles", "quadrangles", "tetrahedra", "hexahedra"};
    for (int s = 0; s < 4; ++s)
      if (counts[s] > 0) cells += ", " + std::to_string(counts[s]) + " " + names[s];
    read.description =
        "'" + path + "' (Gmsh: " + std::to_string(read.points.size()) + " nodes" + cells + ")";
    return read;
  }
  const std::string content = read_regular_file(path, "field file '" + path + "'");
  return parse_field_csv(content, path);
}

}  // namespace fmbem::io
