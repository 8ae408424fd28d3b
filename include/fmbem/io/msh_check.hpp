#pragma once
#include <cstddef>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace fmbem::io {

// An entry of a file's $PhysicalNames section.
struct MshPhysicalName {
  int dimension = 0, tag = 0;
  std::string name;
};

// What check_msh verified about a Gmsh MSH file.
struct MshLayout {
  int major_version = 0;      // 2 or 4
  int minor_version = 0;      // 0, 1 or 2
  bool binary = false;        // binary data (of either endianness) or ASCII
  bool byte_swapped = false;  // binary data written on a machine of the other endianness
  std::size_t nodes = 0;      // distinct node tags
  std::size_t elements = 0;   // elements of every type
  std::size_t triangles = 0;  // 3-node triangles (Gmsh element type 2)
  std::map<int, std::size_t> elements_by_type;  // Gmsh element type -> count
  // MSH 2: per 3-node triangle, in increasing element-tag order, its physical tag (0: none).
  // Gmsh 4.8 keeps an MSH 2 file's physical tags per entity, not per element (an entity whose
  // triangles carry two tags is in both groups), so this is what tells each triangle's group.
  std::vector<int> msh2_triangle_physicals;
  // The $PhysicalNames section's entries, in file order: read here because Gmsh 4.8 keeps one
  // tag per name (a name given to two tags names one of them) and lists no group that names
  // alone (an MSH 2 file's group without elements).
  std::vector<MshPhysicalName> physical_names;
};

// Checks the content of a Gmsh MSH file before Gmsh 4.8's reader sees it, so that
// malformed files get a precise message instead of a crash or a silent loss. It
// finds sections the way Gmsh does (lines of at most 255 bytes starting with '$')
// and reads their data as Gmsh does (ASCII: blank-separated numbers, '+' signs,
// CRLF; binary: either endianness, told by the integer 1 after the version), but
// strictly: every count must match what follows, tags must be positive, every node
// an element uses must be defined, a node defined twice must have the same
// coordinates, coordinates must be finite, and no text may stand outside a section.
// MSH 2.x (ASCII, binary), 4.1 (ASCII, binary) and 4.0 (ASCII: Gmsh 4.8 cannot
// write binary 4.0, and it is refused) are read in full.
// Throws fmbem::Error "mesh file '<name>' ..." naming the problem and its line (ASCII)
// or byte offset (binary). Never reads outside `content`.
MshLayout check_msh(std::string_view content, const std::string& name);

}  // namespace fmbem::io
