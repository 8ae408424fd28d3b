#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "fmbem/core/vec3.hpp"

namespace fmbem {

using Triangle = std::array<std::int32_t, 3>;  // indices into Surface::vertices

// A physical group of the mesh file: a name and a tag, nothing about physics. Groups of every
// dimension are listed, so that a condition naming a volume, line or point group can be refused
// by name; only surface groups (dimension 2) hold triangles.
struct SurfaceGroup {
  std::string name;  // "" when the file gives none
  int tag = 0;       // the physical tag
  int dimension = 2;
  bool operator==(const SurfaceGroup&) const = default;
};

// A triangle in two surface groups: its index and the two groups (indices into the groups).
struct GroupOverlap {
  std::size_t triangle = 0;
  std::int32_t first = -1, second = -1;
  bool operator==(const GroupOverlap&) const = default;
};

// A triangle surface as read from a file or generated, before validation.
struct Surface {
  std::vector<Vec3> vertices;
  std::vector<Triangle> triangles;
  // The file's physical groups; empty when it has none (and for a generated surface).
  std::vector<SurfaceGroup> groups;
  // Empty, or one per triangle: its surface group (an index into groups), -1 for none.
  std::vector<std::int32_t> triangle_group;
  // The first triangle found in two surface groups (triangle_group then holds the first). Not
  // an error here: only conditions given by group need each triangle in one group.
  std::optional<GroupOverlap> overlap;
};

}  // namespace fmbem
