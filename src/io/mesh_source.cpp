#include "fmbem/io/mesh_source.hpp"

#include <array>
#include <charconv>
#include <cmath>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "fmbem/core/error.hpp"
#include "fmbem/io/gmsh_reader.hpp"
#include "fmbem/io/numcalc_project.hpp"
#include "memory_registry.hpp"

namespace fmbem::io {
namespace {

constexpr std::string_view kIcosphere = "icosphere";
constexpr int kMaxIcosphereLevel = 10;

// std::from_chars that must consume the whole text (no sign prefix '+',
// no leading or trailing blanks).
template <typename Number>
bool parse_whole(std::string_view text, Number& value) {
  const char* end = text.data() + text.size();
  const auto [stop, error] = std::from_chars(text.data(), end, value);
  return error == std::errc() && stop == end && !text.empty();
}

struct IcosphereSpec {
  int level = 0;
  double radius = 1.0;
};

IcosphereSpec parse_icosphere_spec(const std::string& spec) {
  const std::string usage = "bad -mesh '" + spec + "': expected icosphere:L or icosphere:L:R";
  if (spec.size() == kIcosphere.size() || spec[kIcosphere.size()] != ':')
    throw Error(usage + " (the level L is missing)");
  std::string_view rest = std::string_view(spec).substr(kIcosphere.size() + 1);
  const std::size_t colon = rest.find(':');
  const std::string_view level_text = rest.substr(0, colon);

  int level = -1;
  if (!parse_whole(level_text, level) || level < 0 || level > kMaxIcosphereLevel)
    throw Error(usage + " with the level L an integer from 0 to " +
                std::to_string(kMaxIcosphereLevel) + ", not '" + std::string(level_text) + "'");

  double radius = 1.0;
  if (colon != std::string_view::npos) {
    const std::string_view radius_text = rest.substr(colon + 1);
    if (!parse_whole(radius_text, radius) || !std::isfinite(radius) || !(radius > 0.0))
      throw Error(usage + " with the radius R a positive number, not '" + std::string(radius_text) +
                  "'");
  }
  return {level, radius};
}

constexpr std::string_view kOctasphere = "octasphere";

// "octasphere:L", "octasphere:L:R" or "octasphere:L:R:AXES" (AXES some of x, y, z: the part
// with those coordinates >= 0).
Surface read_octasphere(const std::string& spec) {
  const std::string usage = "bad -mesh '" + spec +
                            "': expected octasphere:L, octasphere:L:R or octasphere:L:R:AXES "
                            "(L 0..10, R > 0, AXES some of x, y, z: the part with those "
                            "coordinates >= 0)";
  std::string_view rest = std::string_view(spec).substr(kOctasphere.size());
  if (rest.empty() || rest[0] != ':') throw Error(usage);
  rest.remove_prefix(1);
  std::vector<std::string_view> fields;
  for (std::size_t colon; (colon = rest.find(':')) != std::string_view::npos;) {
    fields.push_back(rest.substr(0, colon));
    rest.remove_prefix(colon + 1);
  }
  fields.push_back(rest);
  int level = -1;
  double radius = 1.0;
  if (fields.size() > 3 || !parse_whole(fields[0], level) || level < 0 ||
      level > kMaxIcosphereLevel)
    throw Error(usage);
  if (fields.size() > 1 &&
      (!parse_whole(fields[1], radius) || !std::isfinite(radius) || !(radius > 0.0)))
    throw Error(usage);
  std::array<bool, 3> keep{false, false, false};
  if (fields.size() > 2) {
    if (fields[2].empty()) throw Error(usage);
    for (char axis : fields[2]) {
      const int a = axis == 'x' ? 0 : axis == 'y' ? 1 : axis == 'z' ? 2 : -1;
      if (a < 0 || keep[std::size_t(a)]) throw Error(usage);
      keep[std::size_t(a)] = true;
    }
  }
  return make_octasphere(level, radius, keep);
}

// The surfaces MemorySurface objects hold, by name.
detail::MemoryRegistry<Surface>& memory_surfaces() {
  static detail::MemoryRegistry<Surface> registry;
  return registry;
}

bool is_icosphere_spec(const std::string& spec) {
  return spec.starts_with(kIcosphere) &&
         (spec.size() == kIcosphere.size() || spec[kIcosphere.size()] == ':');
}

}  // namespace

SurfaceRead read_surface(const std::string& spec) {
  if (spec.empty()) throw Error("bad -mesh: empty; give a .msh file or icosphere:L[:R]");
  if (is_icosphere_spec(spec)) {
    const IcosphereSpec sphere = parse_icosphere_spec(spec);
    return {make_icosphere(sphere.level, sphere.radius), {}};
  }
  if (spec.starts_with(kOctasphere) &&
      (spec.size() == kOctasphere.size() || spec[kOctasphere.size()] == ':'))
    return {read_octasphere(spec), {}};
  if (spec.starts_with(kNumCalcMeshPrefix)) {
    NumCalcMesh mesh =
        read_numcalc_mesh(read_numcalc_input(spec.substr(kNumCalcMeshPrefix.size())));
    return {std::move(mesh.surface), std::move(mesh.warnings)};
  }
  if (spec.starts_with(kMemoryMeshPrefix)) {
    std::optional<Surface> held =
        memory_surfaces().find(std::string_view(spec).substr(kMemoryMeshPrefix.size()));
    if (!held)
      throw Error("bad -mesh '" + spec + "': no surface of that name is held in memory (a " +
                  std::string(kMemoryMeshPrefix) + " mesh is given by a program, not a file)");
    return {std::move(*held), {}};
  }
  return read_gmsh(spec);
}

MemorySurface::MemorySurface(std::string name, Surface surface) : name_(std::move(name)) {
  memory_surfaces().insert(name_, std::move(surface), "surface");
}

MemorySurface::~MemorySurface() { memory_surfaces().erase(name_); }

bool reads_in_slabs(const std::string& spec) { return is_icosphere_spec(spec); }

std::size_t slab_source_elements(const std::string& spec) {
  if (!reads_in_slabs(spec)) throw Error("bad -mesh '" + spec + "': not read in slabs");
  return icosphere_triangles(parse_icosphere_spec(spec).level);
}

MeshSlab read_slab(const std::string& spec, std::size_t first, std::size_t last) {
  if (!reads_in_slabs(spec)) throw Error("bad -mesh '" + spec + "': not read in slabs");
  const IcosphereSpec sphere = parse_icosphere_spec(spec);
  return icosphere_slab(sphere.level, sphere.radius, first, last);
}

Mesh load_mesh(const std::string& spec) {
  return Mesh::from_surface(read_surface(spec).surface, spec);
}

}  // namespace fmbem::io
