#pragma once
#include <string>
#include <vector>

#include "fmbem/core/error.hpp"
#include "fmbem/mesh/mesh.hpp"

#if !defined(FMBEM_HAVE_VTK)
#error "FMBEM_HAVE_VTK is undefined: link against fmbem::io, which defines it"
#endif

namespace fmbem::io {

// One value per element, written as a cell-data array called `name`.
struct CellField {
  std::string name;
  std::vector<double> values;
};

// True when this build writes .vtu files through VTK; otherwise use write_csv.
constexpr bool vtk_available() { return FMBEM_HAVE_VTK != 0; }

#if FMBEM_HAVE_VTK
// Writes a VTK XML unstructured grid (.vtu, appended raw binary, zlib
// compressed, 64-bit headers) of the mesh triangles with one double cell-data
// array per field plus the unit normals as the 3-component cell array "normal".
// Throws fmbem::Error if the file cannot be written or a field is malformed
// (wrong size, empty or duplicate name, or the reserved name "normal").
void write_vtu(const std::string& path, const Mesh& mesh, const std::vector<CellField>& fields);
#else
[[noreturn]] inline void write_vtu(const std::string& path, const Mesh&,
                                   const std::vector<CellField>&) {
  throw Error("cannot write '" + path + "': built without VTK; use -bem_csv");
}
#endif

}  // namespace fmbem::io
