#pragma once
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "fmbem/core/error.hpp"
#include "fmbem/io/csv_writer.hpp"
#include "fmbem/mesh/mesh.hpp"

#if !defined(FMBEM_HAVE_VTK)
#error "FMBEM_HAVE_VTK is undefined: link against fmbem::io, which defines it"
#endif

namespace fmbem::io {

// True when this build writes .vtu files through VTK; otherwise use write_csv.
constexpr bool vtk_available() { return FMBEM_HAVE_VTK != 0; }

// A parallel file (-o name.pvtu on P ranks, VTK's naming): piece p is the unstructured grid
// "name_p.vtu" beside "name.pvtu", the summary that ParaView opens. pvtu_path ends in ".pvtu".
inline std::string pvtu_piece_path(const std::string& pvtu_path, std::size_t piece) {
  return pvtu_path.substr(0, pvtu_path.size() - 5) + "_" + std::to_string(piece) + ".vtu";
}

// The elements [first, first + count) of a mesh, written as one piece of a parallel file.
struct MeshPiece {
  std::size_t first = 0, count = 0;
  // The user's index of each of the count elements: the piece's Int64 cell array "element".
  std::span<const std::int64_t> element_ids;
};

#if FMBEM_HAVE_VTK
// Writes a VTK XML unstructured grid (.vtu, appended raw binary, zlib
// compressed, 64-bit headers) of the mesh triangles with one double cell-data
// array per field plus the unit normals as the 3-component cell array "normal".
// Throws fmbem::Error if the file cannot be written or a field is malformed
// (wrong size, empty or duplicate name, or the reserved name "normal").
void write_vtu(const std::string& path, const Mesh& mesh, const std::vector<CellField>& fields);
// A piece as write_vtu writes a mesh: the piece's triangles with only the vertices they use (in
// increasing index order), the fields (piece.count values each), the normals, and "element".
// Throws as write_vtu does; also when element_ids does not hold piece.count values or the
// elements run past the mesh.
void write_vtu_piece(const std::string& path, const Mesh& mesh, const MeshPiece& piece,
                     const std::vector<CellField>& fields);
// The summary of the pieces written by write_vtu_piece with fields named `field_names`, through
// VTK's vtkXMLPUnstructuredGridWriter: the arrays' declarations and one piece per entry of
// `piece_sources` (each a file name relative to the summary's folder, as pvtu_piece_path gives).
// Throws fmbem::Error if the file cannot be written.
void write_pvtu(const std::string& path, const std::vector<std::string>& field_names,
                const std::vector<std::string>& piece_sources);
#else
[[noreturn]] inline void write_vtu(const std::string& path, const Mesh&,
                                   const std::vector<CellField>&) {
  throw Error("cannot write '" + path + "': built without VTK; use -bem_csv");
}
[[noreturn]] inline void write_vtu_piece(const std::string& path, const Mesh&, const MeshPiece&,
                                         const std::vector<CellField>&) {
  throw Error("cannot write '" + path + "': built without VTK; use -bem_csv");
}
[[noreturn]] inline void write_pvtu(const std::string& path, const std::vector<std::string>&,
                                    const std::vector<std::string>&) {
  throw Error("cannot write '" + path + "': built without VTK; use -bem_csv");
}
#endif

}  // namespace fmbem::io
