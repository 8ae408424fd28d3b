#include "fmbem/io/gmsh_reader.hpp"

#include <gmsh.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <exception>
#include <limits>
#include <new>
#include <numeric>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "fmbem/io/msh_check.hpp"
#include "mesh_input.hpp"
#include "sandbox.hpp"

namespace fmbem::io {
namespace {

constexpr int kGmshTriangle3 = 2;  // Gmsh element type of the 3-node triangle

std::string quoted(const std::string& path) { return "'" + path + "'"; }

// ---- limits of the reading child, from the size of the file

constexpr std::uint64_t kMiB = std::uint64_t{1} << 20;

detail::SandboxLimits reader_limits(std::uint64_t file_bytes) {
  detail::SandboxLimits limits;
  // Gmsh's peak memory is 4 to 6 times the file's size (measured on a 1.3 million
  // triangle sphere: 63 MB binary / 80 MB ASCII MSH 4.1 -> 0.33 GB, 91 MB MSH 2.2 ->
  // 0.54 GB); 16 times leaves room, the floor covers Gmsh itself.
  limits.extra_address_space = 1024 * kMiB + 16 * file_bytes;
  // Gmsh reads those files in 1.1 to 4.4 s (20 to 55 MB/s); 1 s per 2 MiB leaves a
  // wide margin, the floor covers its start.
  limits.cpu_seconds = 10 + static_cast<unsigned>(file_bytes / (2 * kMiB));
  limits.wall_time = std::chrono::seconds(3 * limits.cpu_seconds + 10);
  return limits;
}

// ---- the result, sent from the child to the parent through the pipe

enum : char {
  kSurface = 'S',
  kPoints = 'P',
  kMeshError = 'E',
  kGmshError = 'G',
  kOutOfMemory = 'M'
};

class Encoder {
 public:
  explicit Encoder(char kind) : bytes_(1, kind) {}
  void number(std::uint64_t value) { raw(&value, sizeof value); }
  void raw(const void* data, std::size_t size) {
    bytes_.append(static_cast<const char*>(data), size);
  }
  void text(const std::string& value) {
    number(value.size());
    bytes_ += value;
  }
  const std::string& bytes() const { return bytes_; }

 private:
  std::string bytes_;
};

class Decoder {
 public:
  explicit Decoder(std::string_view bytes) : bytes_(bytes) {}
  bool number(std::uint64_t& value) { return raw(&value, sizeof value); }
  bool raw(void* data, std::size_t size) {
    if (bytes_.size() < size) return false;
    if (size > 0) std::memcpy(data, bytes_.data(), size);  // an empty vector's data() may be null
    bytes_.remove_prefix(size);
    return true;
  }
  bool text(std::string& value) {
    std::uint64_t size = 0;
    if (!number(size) || size > bytes_.size()) return false;
    value.assign(bytes_.substr(0, size));
    bytes_.remove_prefix(size);
    return true;
  }
  // A count of items of `item_bytes` each that the rest can hold.
  bool count(std::uint64_t& value, std::size_t item_bytes) {
    return number(value) && value <= bytes_.size() / item_bytes;
  }
  bool done() const { return bytes_.empty(); }

 private:
  std::string_view bytes_;
};

// The surface: vertices, triangles, the physical groups (name, tag, dimension), each
// triangle's group (none or one per triangle), the overlap (a flag, then its three numbers) and
// the warnings.
std::string encode(const SurfaceRead& read) {
  const Surface& surface = read.surface;
  Encoder out(kSurface);
  out.number(surface.vertices.size());
  out.raw(surface.vertices.data(), surface.vertices.size() * sizeof(Vec3));
  out.number(surface.triangles.size());
  out.raw(surface.triangles.data(), surface.triangles.size() * sizeof(Triangle));
  out.number(surface.groups.size());
  for (const SurfaceGroup& group : surface.groups) {
    out.text(group.name);
    out.number(std::uint64_t(std::int64_t(group.tag)));
    out.number(std::uint64_t(group.dimension));
  }
  out.number(surface.triangle_group.size());
  out.raw(surface.triangle_group.data(), surface.triangle_group.size() * sizeof(std::int32_t));
  out.number(surface.overlap ? 1 : 0);
  if (surface.overlap)
    for (std::int64_t n :
         {std::int64_t(surface.overlap->triangle), std::int64_t(surface.overlap->first),
          std::int64_t(surface.overlap->second)})
      out.number(std::uint64_t(n));
  out.number(read.warnings.size());
  for (const std::string& warning : read.warnings) out.text(warning);
  return out.bytes();
}

// A number the child sent that must lie in [low, high].
bool number_in(Decoder& in, std::int64_t low, std::int64_t high, std::int64_t& value) {
  std::uint64_t raw = 0;
  if (!in.number(raw)) return false;
  value = std::int64_t(raw);
  return value >= low && value <= high;
}

// The child's groups, checked as untrusted input (Mesh::from_surface checks the rest).
bool decode_groups(Decoder& in, Surface& surface) {
  constexpr std::int64_t int_max = std::numeric_limits<int>::max();
  std::uint64_t groups = 0, triangle_groups = 0, has_overlap = 0;
  if (!in.count(groups, 3 * sizeof(std::uint64_t))) return false;
  surface.groups.resize(groups);
  for (SurfaceGroup& group : surface.groups) {
    std::int64_t tag = 0, dimension = 0;
    if (!in.text(group.name) || !number_in(in, -int_max, int_max, tag) ||
        !number_in(in, 0, 3, dimension))
      return false;
    group.tag = int(tag);
    group.dimension = int(dimension);
  }
  if (!in.count(triangle_groups, sizeof(std::int32_t))) return false;
  if (triangle_groups != 0 && triangle_groups != surface.triangles.size()) return false;
  surface.triangle_group.resize(triangle_groups);
  in.raw(surface.triangle_group.data(), triangle_groups * sizeof(std::int32_t));
  for (std::int32_t g : surface.triangle_group)
    if (g < -1 || g >= std::int64_t(groups)) return false;
  if (!in.number(has_overlap) || has_overlap > 1) return false;
  if (has_overlap == 1) {
    std::int64_t triangle = 0, first = 0, second = 0;
    if (!number_in(in, 0, std::int64_t(triangle_groups) - 1, triangle) ||
        !number_in(in, 0, std::int64_t(groups) - 1, first) ||
        !number_in(in, 0, std::int64_t(groups) - 1, second))
      return false;
    surface.overlap =
        GroupOverlap{std::size_t(triangle), std::int32_t(first), std::int32_t(second)};
  }
  return true;
}

bool decode(std::string_view bytes, SurfaceRead& read) {
  Decoder in(bytes.substr(1));
  std::uint64_t vertices = 0, triangles = 0, warnings = 0;
  if (!in.count(vertices, sizeof(Vec3))) return false;
  read.surface.vertices.resize(vertices);
  in.raw(read.surface.vertices.data(), vertices * sizeof(Vec3));
  if (!in.count(triangles, sizeof(Triangle))) return false;
  read.surface.triangles.resize(triangles);
  in.raw(read.surface.triangles.data(), triangles * sizeof(Triangle));
  if (!decode_groups(in, read.surface)) return false;
  if (!in.count(warnings, sizeof(std::uint64_t))) return false;
  read.warnings.resize(warnings);
  for (std::string& warning : read.warnings)
    if (!in.text(warning)) return false;
  return in.done();
}

// ---- in the child: Gmsh

// Gmsh 4.8 reports errors by throwing std::string (later versions throw
// std::exception); anything else falls back to its last logged error.
std::string gmsh_error_message(std::exception_ptr error) {
  try {
    std::rethrow_exception(error);
  } catch (const std::string& message) {
    return message;
  } catch (const std::exception& e) {
    return e.what();
  } catch (...) {
  }
  std::string last;
  try {
    gmsh::logger::getLastError(last);
  } catch (...) {
  }
  return last.empty() ? "unknown Gmsh error" : last;
}

std::string element_name(int type, int* dim = nullptr) {
  std::string name;
  int element_dim = 0, order = 0, num_nodes = 0, num_primary = 0;
  std::vector<double> local_coords;
  gmsh::model::mesh::getElementProperties(type, name, element_dim, order, num_nodes, local_coords,
                                          num_primary);
  if (dim) *dim = element_dim;
  return name;
}

std::string plural(std::size_t count, const std::string& one, const std::string& many) {
  return std::to_string(count) + " " + (count == 1 ? one : many);
}

// Sorts the element types of the model: triangles are read, points and lines
// ignored, volume elements ignored with a warning, other 2D elements refused.
void classify_elements(const std::string& path, std::vector<std::string>& warnings) {
  std::vector<int> types;
  gmsh::model::mesh::getElementTypes(types);
  std::size_t volume_count = 0;
  std::string volume_kinds, flat_kinds;
  for (int type : types) {
    int dim = 0;
    const std::string name = element_name(type, &dim);
    if (type == kGmshTriangle3 || dim < 2) continue;
    std::vector<std::size_t> tags, nodes;
    gmsh::model::mesh::getElementsByType(type, tags, nodes);
    std::string& kinds = dim == 2 ? flat_kinds : volume_kinds;
    kinds += (kinds.empty() ? "" : ", ") + std::to_string(tags.size()) + " " + name;
    if (dim == 3) volume_count += tags.size();
  }
  if (!flat_kinds.empty())
    throw Error("mesh file " + quoted(path) + " has 2D elements other than 3-node triangles (" +
                flat_kinds +
                "); fmbem reads surfaces of 3-node triangles only and would leave holes where "
                "they are: mesh the surface with first-order triangles, without recombination");
  if (volume_count > 0)
    warnings.push_back("mesh file " + quoted(path) + ": ignored " +
                       plural(volume_count, "volume element", "volume elements") + " (" +
                       volume_kinds + "); fmbem uses the surface triangles only");
}

// "Line 2, Point" for the error message of a file without triangles.
std::string element_type_names() {
  std::vector<int> types;
  gmsh::model::mesh::getElementTypes(types);
  std::string names;
  for (int type : types) names += (names.empty() ? "" : ", ") + element_name(type);
  return names.empty() ? "no elements at all" : names;
}

std::string point(const double* xyz) {
  return "(" + std::to_string(xyz[0]) + ", " + std::to_string(xyz[1]) + ", " +
         std::to_string(xyz[2]) + ")";
}

// The physical groups of every dimension, in increasing (dimension, tag) order, named by the
// file's $PhysicalNames (MshLayout::physical_names), and each
// triangle's surface group (triangle_tags: the triangles' element tags, ascending). In an MSH 4
// file a triangle is in the groups of its entity; an MSH 2 file gives each element's physical
// tag, which Gmsh 4.8 keeps per entity only (MshLayout::msh2_triangle_physicals). The first
// triangle in two surface groups is the overlap.
void extract_groups(const std::string& path, const MshLayout& layout,
                    const std::vector<std::size_t>& triangle_tags, Surface& surface) {
  // Gmsh's groups and those the file names (Gmsh 4.8 lists neither a group that only has a name
  // nor the second tag of a name: MshLayout::physical_names).
  gmsh::vectorpair physicals;
  gmsh::model::getPhysicalGroups(physicals, -1);
  for (const MshPhysicalName& named : layout.physical_names)
    physicals.emplace_back(named.dimension, named.tag);
  if (physicals.empty()) return;
  std::sort(physicals.begin(), physicals.end());
  physicals.erase(std::unique(physicals.begin(), physicals.end()), physicals.end());
  for (const auto& [dimension, tag] : physicals) surface.groups.push_back({"", tag, dimension});
  for (const MshPhysicalName& named : layout.physical_names) {  // the last of a tag's names
    const auto at = std::lower_bound(physicals.begin(), physicals.end(),
                                     std::pair<int, int>{named.dimension, named.tag});
    std::string& name = surface.groups[std::size_t(at - physicals.begin())].name = named.name;
    for (char& c : name)  // the name goes into one-line messages
      if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
  }
  const std::size_t n = triangle_tags.size();
  surface.triangle_group.assign(n, -1);
  if (layout.major_version == 2) {
    for (std::size_t t = 0; t < n; ++t) {
      const int physical = layout.msh2_triangle_physicals[t];
      if (physical == 0) continue;
      const auto found =
          std::lower_bound(physicals.begin(), physicals.end(), std::pair<int, int>{2, physical});
      if (found == physicals.end() || *found != std::pair<int, int>{2, physical})
        throw Error("mesh file " + quoted(path) + " is malformed: Gmsh's reader lists no " +
                    "physical surface " + std::to_string(physical) + " for triangle " +
                    std::to_string(triangle_tags[t]) + ", which the file puts in it");
      surface.triangle_group[t] = std::int32_t(found - physicals.begin());
    }
    return;
  }
  std::vector<std::int32_t> second(n, -1);
  for (std::size_t g = 0; g < physicals.size(); ++g) {
    if (physicals[g].first != 2) continue;
    std::vector<int> entities;
    gmsh::model::getEntitiesForPhysicalGroup(2, physicals[g].second, entities);
    for (int entity : entities) {
      std::vector<std::size_t> tags, nodes;
      gmsh::model::mesh::getElementsByType(kGmshTriangle3, tags, nodes, entity);
      for (std::size_t tag : tags) {
        const std::size_t t =
            std::size_t(std::lower_bound(triangle_tags.begin(), triangle_tags.end(), tag) -
                        triangle_tags.begin());
        if (t == n || triangle_tags[t] != tag)  // every triangle of the model is listed
          throw Error("mesh file " + quoted(path) + " is malformed: Gmsh's reader puts triangle " +
                      std::to_string(tag) + " in a physical surface but not among its triangles");
        std::int32_t& first = surface.triangle_group[t];
        if (first == -1)
          first = std::int32_t(g);
        else if (first != std::int32_t(g) && second[t] == -1)
          second[t] = std::int32_t(g);
      }
    }
  }
  const auto overlap =
      std::find_if(second.begin(), second.end(), [](std::int32_t g) { return g != -1; });
  if (overlap != second.end()) {
    const std::size_t t = std::size_t(overlap - second.begin());
    surface.overlap = GroupOverlap{t, surface.triangle_group[t], *overlap};
  }
}

SurfaceRead extract_triangles(const std::string& path, const MshLayout& layout) {
  SurfaceRead read;
  classify_elements(path, read.warnings);
  std::vector<std::size_t> element_tags, element_nodes;
  gmsh::model::mesh::getElementsByType(kGmshTriangle3, element_tags, element_nodes);
  // Gmsh drops elements it cannot place (a damaged section that the check skips).
  if (element_tags.size() != layout.triangles)
    throw Error("mesh file " + quoted(path) + " is malformed: Gmsh's reader found " +
                std::to_string(element_tags.size()) + " of its " +
                std::to_string(layout.triangles) +
                " 3-node triangles (is a section such as $Entities damaged?)");
  if (element_tags.empty())
    throw Error(
        "mesh file " + quoted(path) +
        " has no 3-node triangles (Gmsh element type 2); it holds: " + element_type_names());

  // Vertices: the nodes the triangles use, in increasing tag order, so that the
  // result does not depend on how the file groups nodes into entities.
  std::vector<std::size_t> used_tags = element_nodes;
  std::sort(used_tags.begin(), used_tags.end());
  used_tags.erase(std::unique(used_tags.begin(), used_tags.end()), used_tags.end());
  if (used_tags.size() > static_cast<std::size_t>(std::numeric_limits<std::int32_t>::max()))
    throw Error("mesh file " + quoted(path) + " has too many vertices for 32-bit indices");

  std::vector<std::size_t> node_tags;
  std::vector<double> coords, parametric;
  gmsh::model::mesh::getNodes(node_tags, coords, parametric, -1, -1, false, false);
  std::unordered_map<std::size_t, std::size_t> coord_index;
  coord_index.reserve(node_tags.size());
  for (std::size_t i = 0; i < node_tags.size(); ++i) {
    const auto [found, inserted] = coord_index.emplace(node_tags[i], i);
    const double* a = &coords[3 * found->second];
    const double* b = &coords[3 * i];
    if (!inserted && (a[0] != b[0] || a[1] != b[1] || a[2] != b[2]))
      throw Error("mesh file " + quoted(path) + " is malformed: node " +
                  std::to_string(node_tags[i]) + " is defined twice, at " + point(a) + " and at " +
                  point(b));
  }

  read.surface.vertices.reserve(used_tags.size());
  for (std::size_t tag : used_tags) {
    const auto found = coord_index.find(tag);
    if (found == coord_index.end())
      throw Error("mesh file " + quoted(path) + " has a triangle that uses node " +
                  std::to_string(tag) + ", which the file does not define");
    const double* xyz = &coords[3 * found->second];
    if (!std::isfinite(xyz[0]) || !std::isfinite(xyz[1]) || !std::isfinite(xyz[2]))
      throw Error("mesh file " + quoted(path) + " has a non-finite coordinate at node " +
                  std::to_string(tag));
    read.surface.vertices.push_back({xyz[0], xyz[1], xyz[2]});
  }

  std::vector<std::size_t> by_tag(element_tags.size());
  std::iota(by_tag.begin(), by_tag.end(), std::size_t{0});
  std::sort(by_tag.begin(), by_tag.end(),
            [&](std::size_t a, std::size_t b) { return element_tags[a] < element_tags[b]; });
  read.surface.triangles.reserve(element_tags.size());
  for (std::size_t element : by_tag) {
    Triangle triangle;
    for (int k = 0; k < 3; ++k) {
      const std::size_t tag = element_nodes[3 * element + k];
      const auto position = std::lower_bound(used_tags.begin(), used_tags.end(), tag);
      triangle[k] = static_cast<std::int32_t>(position - used_tags.begin());
    }
    read.surface.triangles.push_back(triangle);
  }
  std::vector<std::size_t> triangle_tags(by_tag.size());
  for (std::size_t t = 0; t < by_tag.size(); ++t) triangle_tags[t] = element_tags[by_tag[t]];
  extract_groups(path, layout, triangle_tags, read.surface);
  return read;
}

// ---- field points (read_gmsh_points): every node, with the cells that show them

// The Gmsh types kept as cells: first-order shapes whose node order is VTK's.
bool field_cell_shape(int type, CellShape& shape) {
  switch (type) {
    case 2:
      shape = CellShape::triangle;
      return true;
    case 3:
      shape = CellShape::quadrangle;
      return true;
    case 4:
      shape = CellShape::tetrahedron;
      return true;
    case 5:
      shape = CellShape::hexahedron;
      return true;
    default:
      return false;
  }
}

std::string extract_points(const std::string& path, const MshLayout& layout) {
  std::vector<std::size_t> node_tags;
  std::vector<double> coords, parametric;
  gmsh::model::mesh::getNodes(node_tags, coords, parametric, -1, -1, false, false);
  // By tag, each once (a node shared by entities is listed by each: same coordinates).
  std::vector<std::size_t> order(node_tags.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::sort(order.begin(), order.end(),
            [&](std::size_t a, std::size_t b) { return node_tags[a] < node_tags[b]; });
  std::vector<std::size_t> tags;
  std::vector<Vec3> points;
  for (std::size_t i : order) {
    const double* xyz = &coords[3 * i];
    if (!tags.empty() && tags.back() == node_tags[i]) {
      const double previous[3] = {points.back().x, points.back().y, points.back().z};
      if (previous[0] != xyz[0] || previous[1] != xyz[1] || previous[2] != xyz[2])
        throw Error("mesh file " + quoted(path) + " is malformed: node " +
                    std::to_string(node_tags[i]) + " is defined twice, at " + point(previous) +
                    " and at " + point(xyz));
      continue;
    }
    if (!std::isfinite(xyz[0]) || !std::isfinite(xyz[1]) || !std::isfinite(xyz[2]))
      throw Error("mesh file " + quoted(path) + " has a non-finite coordinate at node " +
                  std::to_string(node_tags[i]));
    tags.push_back(node_tags[i]);
    points.push_back({xyz[0], xyz[1], xyz[2]});
  }
  if (points.empty()) throw Error("field file " + quoted(path) + " has no nodes");

  std::vector<int> types;
  gmsh::model::mesh::getElementTypes(types);
  std::vector<char> shapes;
  std::vector<std::uint64_t> nodes;
  std::string ignored;
  for (int type : types) {
    int dim = 0;
    const std::string name = element_name(type, &dim);
    std::vector<std::size_t> element_tags, element_nodes;
    gmsh::model::mesh::getElementsByType(type, element_tags, element_nodes);
    // Gmsh 4.8 misreads an entity that mixes element orders (3- and 6-node triangles): it lists
    // them all under the first type, the nodes out of step. The counts tell.
    const auto in_file = layout.elements_by_type.find(type);
    if (in_file == layout.elements_by_type.end() || in_file->second != element_tags.size())
      throw Error("mesh file " + quoted(path) + " is malformed: Gmsh's reader found " +
                  std::to_string(element_tags.size()) + " " + name + " elements, the file has " +
                  std::to_string(in_file == layout.elements_by_type.end() ? 0 : in_file->second) +
                  " (does an entity mix element types? give each type an entity of its own)");
    CellShape shape;
    if (!field_cell_shape(type, shape)) {
      if (dim >= 2)  // points and lines are the geometry's, not a view of the field
        ignored += (ignored.empty() ? "" : ", ") + std::to_string(element_tags.size()) + " " + name;
      continue;
    }
    shapes.insert(shapes.end(), element_tags.size(), static_cast<char>(shape));
    for (std::size_t tag : element_nodes) {
      const auto at = std::lower_bound(tags.begin(), tags.end(), tag);
      if (at == tags.end() || *at != tag)
        throw Error("mesh file " + quoted(path) + " has an element that uses node " +
                    std::to_string(tag) + ", which the file does not define");
      nodes.push_back(static_cast<std::uint64_t>(at - tags.begin()));
    }
  }
  std::vector<std::string> warnings;
  if (!ignored.empty())
    warnings.push_back("field file " + quoted(path) + ": shown without its " + ignored +
                       " (cells of other shapes than first-order triangles, quadrangles, "
                       "tetrahedra and hexahedra); their nodes are field points all the same");
  Encoder out(kPoints);
  out.number(points.size());
  out.raw(points.data(), points.size() * sizeof(Vec3));
  out.number(shapes.size());
  out.raw(shapes.data(), shapes.size());
  out.number(nodes.size());
  out.raw(nodes.data(), nodes.size() * sizeof(std::uint64_t));
  out.number(warnings.size());
  for (const std::string& warning : warnings) out.text(warning);
  return out.bytes();
}

bool decode_points(std::string_view bytes, FieldPoints& read) {
  Decoder in(bytes.substr(1));
  std::uint64_t points = 0, cells = 0, nodes = 0, warnings = 0;
  if (!in.count(points, sizeof(Vec3))) return false;
  read.points.resize(points);
  in.raw(read.points.data(), points * sizeof(Vec3));
  if (!in.count(cells, 1)) return false;
  std::vector<char> shapes(cells);
  in.raw(shapes.data(), cells);
  if (!in.count(nodes, sizeof(std::uint64_t))) return false;
  std::vector<std::uint64_t> node_indices(nodes);
  in.raw(node_indices.data(), nodes * sizeof(std::uint64_t));
  if (!in.count(warnings, sizeof(std::uint64_t))) return false;
  read.warnings.resize(warnings);
  for (std::string& warning : read.warnings)
    if (!in.text(warning)) return false;
  if (!in.done()) return false;
  // The child's cells, checked as untrusted input: known shapes, node counts, indices.
  read.cell_shapes.resize(cells);
  read.cell_offsets.assign(cells > 0 ? 1 : 0, 0);
  for (std::size_t c = 0; c < cells; ++c) {
    if (shapes[c] < 0 || shapes[c] > static_cast<char>(CellShape::hexahedron)) return false;
    read.cell_shapes[c] = static_cast<CellShape>(shapes[c]);
    read.cell_offsets.push_back(read.cell_offsets.back() +
                                std::size_t(cell_shape_nodes(read.cell_shapes[c])));
  }
  if ((cells > 0 ? read.cell_offsets.back() : 0) != nodes) return false;
  read.cell_nodes.assign(node_indices.begin(), node_indices.end());
  for (std::size_t node : read.cell_nodes)
    if (node >= points) return false;
  return true;
}

void write_all(int fd, const std::string& bytes) {
  const char* data = bytes.data();
  for (std::size_t left = bytes.size(); left > 0;) {
    const ssize_t written = ::write(fd, data, left);
    if (written < 0 && errno == EINTR) continue;
    if (written <= 0) return;  // the parent is gone or gave up
    data += written;
    left -= static_cast<std::size_t>(written);
  }
}

// The child's work: Gmsh reads the private copy, `extract` encodes what is wanted of the
// model; the result goes to `output`. It works in the copy's directory, so that whatever Gmsh
// might create goes with it.
template <class Extract>
void read_in_child(int output, const std::string& directory, const std::string& copy,
                   Extract&& extract) {
  std::string result;
  try {
    if (::chdir(directory.c_str()) != 0) throw Error("cannot enter " + quoted(directory));
    gmsh::initialize(0, nullptr, /*readConfigFiles=*/false);
    gmsh::option::setNumber("General.Terminal", 0);      // silent, errors included
    gmsh::option::setNumber("General.AbortOnError", 2);  // errors throw, never exit()
    gmsh::open(copy);
    result = extract();
  } catch (const Error& e) {
    Encoder out(kMeshError);
    out.text(e.what());
    result = out.bytes();
  } catch (const std::bad_alloc&) {
    result = Encoder(kOutOfMemory).bytes();
  } catch (...) {
    Encoder out(kGmshError);
    out.text(gmsh_error_message(std::current_exception()));
    result = out.bytes();
  }
  write_all(output, result);
}

// ---- in the parent

// A Gmsh message fit for ours: the copy's name replaced by the user's path,
// control characters (from the file's content) replaced, at most 300 characters.
std::string in_user_terms(std::string message, const std::string& copy, const std::string& path) {
  for (std::size_t at = message.find(copy); at != std::string::npos;
       at = message.find(copy, at + path.size()))
    message.replace(at, copy.size(), path);
  for (char& c : message)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
  return message.size() > 300 ? message.substr(0, 300) + "..." : message;
}

std::string signal_name(int signal) {
  const char* abbreviation = ::sigabbrev_np(signal);
  return "signal " + std::to_string(signal) +
         (abbreviation ? std::string(", SIG") + abbreviation : std::string());
}

// The child's result (starting with `kind`), or the error it reports, as fmbem::Error.
std::string_view interpret(const detail::SandboxOutcome& outcome,
                           const detail::SandboxLimits& limits, const std::string& copy,
                           const std::string& path, char kind) {
  using End = detail::SandboxOutcome::End;
  const std::string malformed = "mesh file " + quoted(path) + " is malformed: ";
  switch (outcome.end) {
    case End::setup_failed:
      throw Error("cannot read mesh file " + quoted(path) +
                  ": the sandbox for Gmsh's reader could not be set up (" + outcome.output + ")");
    case End::timed_out:
      throw Error(malformed + "Gmsh's reader did not finish within " +
                  std::to_string(limits.wall_time.count() / 1000) + " s");
    case End::signaled:
      if (outcome.code == SIGXCPU)
        throw Error(malformed + "Gmsh's reader used more than " +
                    std::to_string(limits.cpu_seconds) + " s of CPU time on it");
      throw Error(malformed + "Gmsh's reader crashed on it (" + signal_name(outcome.code) + ")");
    case End::exited:
      break;
  }
  if (outcome.code != 0)
    throw Error(malformed + "Gmsh's reader failed on it (exit status " +
                std::to_string(outcome.code) + ")");
  const std::string_view bytes = outcome.output;
  std::string message;
  const char got = bytes.empty() ? '\0' : bytes.front();
  if (got == kind) return bytes;
  switch (got) {
    case kMeshError:
      if (Decoder(bytes.substr(1)).text(message)) throw Error(message);
      break;
    case kGmshError:
      if (Decoder(bytes.substr(1)).text(message))
        throw Error("cannot read mesh file " + quoted(path) +
                    ": Gmsh says: " + in_user_terms(message, copy, path));
      break;
    case kOutOfMemory:
      throw Error(malformed + "Gmsh's reader needed more than " +
                  std::to_string(limits.extra_address_space / kMiB) + " MiB for it");
  }
  throw Error("cannot read mesh file " + quoted(path) + ": Gmsh's reader ended without a result");
}

// The sequence both readers share: a private copy of the file, its layout checked, Gmsh in the
// sandbox on the copy with `extract(layout)` encoding the wanted part of the model (its first
// byte `kind`), the child's outcome interpreted, and `decode` filling the result.
template <class Result, class Extract, class Decode>
Result read_sandboxed(const std::string& path, const GmshReadOptions& options, char kind,
                      Extract&& extract, Decode&& decode_into) {
  const detail::PrivateMeshCopy copy(path, options.stream_timeout, options.max_bytes);
  const MshLayout layout = check_msh(copy.content(), path);
  const detail::SandboxLimits limits = reader_limits(copy.content().size());
  const std::string& file = copy.file();
  const detail::SandboxOutcome outcome = detail::run_sandboxed(
      [&](int output) {
        read_in_child(output, copy.directory(), file, [&] { return extract(layout); });
      },
      limits);
  Result read;
  if (!decode_into(interpret(outcome, limits, file, path, kind), read))
    throw Error("cannot read mesh file " + quoted(path) + ": Gmsh's reader ended without a result");
  return read;
}

}  // namespace

FieldPoints read_gmsh_points(const std::string& path, const GmshReadOptions& options) {
  return read_sandboxed<FieldPoints>(
      path, options, kPoints, [&](const MshLayout& layout) { return extract_points(path, layout); },
      decode_points);
}

SurfaceRead read_gmsh(const std::string& path, const GmshReadOptions& options) {
  return read_sandboxed<SurfaceRead>(
      path, options, kSurface,
      [&](const MshLayout& layout) { return encode(extract_triangles(path, layout)); }, decode);
}

}  // namespace fmbem::io
