#pragma once
#include <cstddef>
#include <map>
#include <string>
#include <string_view>

namespace fmbem::io {

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
