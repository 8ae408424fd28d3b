#include "fmbem/io/field_points.hpp"

#include <sys/stat.h>

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <sstream>
#include <system_error>

#include "fmbem/core/error.hpp"
#include "fmbem/field/field_limits.hpp"
#include "fmbem/io/gmsh_reader.hpp"

namespace fmbem::io {
namespace {

// Larger CSV files are refused before they are read (as mesh files are).
constexpr std::uint64_t kMaxCsvBytes = std::uint64_t{2} << 30;
constexpr std::size_t kMaxCsvLine = 4096;

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
    s.remove_suffix(1);
  return s;
}

// One comma-separated field, read as msh_check reads a coordinate: std::from_chars over the
// whole text (no locale, no hex floats, no blanks or junk inside) after a leading '+' that is
// not followed by a sign (so "+-2" and "++2" are refused).
enum class Token {
  number,        // a finite double
  non_finite,    // nan, inf, infinity (any case), nan(...)
  out_of_range,  // a number beyond a double's range: 1e999, 1e-999
  word,          // text that is no number at all: a header's "x" (starts with no digit or sign)
  malformed,     // anything else: "", "+-2", "1.5.5", "1e3x", "0x1p3"
};

Token read_token(std::string_view text, double& value) {
  std::string_view digits = text;
  if (digits.size() > 1 && digits[0] == '+' && digits[1] != '-' && digits[1] != '+')
    digits.remove_prefix(1);
  const char* end = digits.data() + digits.size();
  const auto [stop, error] = std::from_chars(digits.data(), end, value);
  if (!digits.empty() && stop == end) {
    if (error == std::errc::result_out_of_range) return Token::out_of_range;
    if (error == std::errc()) return std::isfinite(value) ? Token::number : Token::non_finite;
  }
  if (text.empty()) return Token::malformed;
  const char c = text.front();
  const bool starts_like_number = (c >= '0' && c <= '9') || c == '+' || c == '-' || c == '.';
  return starts_like_number ? Token::malformed : Token::word;
}

// The whole text as one finite number.
bool parse_number(std::string_view text, double& value) {
  return read_token(text, value) == Token::number;
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

// Printable ASCII only, at most 60 characters: file content quoted in a message.
std::string excerpt(std::string_view s) {
  std::string out;
  for (char c : s.substr(0, 60)) out += c >= 0x20 && c < 0x7f ? c : '?';
  return s.size() > 60 ? out + "..." : out;
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
  for (std::size_t i = 0; i < out.points.size(); ++i)
    if (!field::within_field_range(out.points[i]))
      throw Error("plane point " + std::to_string(i + 1) + " " +
                  field::out_of_range_reason(out.points[i]));
  out.description = "plane " + std::to_string(plane.count_a) + " x " +
                    std::to_string(plane.count_b) + " from " + format(plane.origin);
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
    if (raw.size() > kMaxCsvLine)
      throw Error(at + "longer than " + std::to_string(kMaxCsvLine) + " bytes");
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

FieldPoints read_field_points(const std::string& path) {
  if (ends_with(path, ".msh")) {
    FieldPoints read = read_gmsh_points(path);
    for (std::size_t i = 0; i < read.points.size(); ++i)
      if (!field::within_field_range(read.points[i]))
        throw Error("field file '" + path + "', node " + std::to_string(i + 1) +
                    " (in increasing tag order): the point " +
                    field::out_of_range_reason(read.points[i]));
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
  const std::string where = "field file '" + path + "'";
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0)
    throw Error("cannot read " + where + ": " + std::strerror(errno));
  if (!S_ISREG(info.st_mode))
    throw Error(where + " is not a regular file (CSV points are read from regular files only)");
  if (std::uint64_t(info.st_size) > kMaxCsvBytes) throw Error(where + " is larger than 2 GiB");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error("cannot read " + where + ": " + std::strerror(errno));
  std::string content(std::size_t(info.st_size), '\0');
  in.read(content.data(), std::streamsize(content.size()));
  if (!in && !in.eof()) throw Error("cannot read " + where);
  content.resize(std::size_t(in.gcount()));
  return parse_field_csv(content, path);
}

}  // namespace fmbem::io
