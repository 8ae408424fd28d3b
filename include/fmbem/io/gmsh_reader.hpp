#pragma once
#include <chrono>
#include <cstdint>
#include <string>

#include "fmbem/core/error.hpp"
#include "fmbem/io/field_points.hpp"
#include "fmbem/io/mesh_source.hpp"

#if !defined(FMBEM_HAVE_GMSH)
#error "FMBEM_HAVE_GMSH is undefined: link against fmbem::io, which defines it"
#endif

namespace fmbem::io {

// True when this build reads .msh files through the Gmsh SDK.
constexpr bool gmsh_available() { return FMBEM_HAVE_GMSH != 0; }

struct GmshReadOptions {
  // A pipe or FIFO that sends nothing for this long (no writer) is an error.
  std::chrono::milliseconds stream_timeout{30'000};
  // Larger inputs are refused before they are read in full.
  std::uint64_t max_bytes = std::uint64_t{2} << 30;
};

#if FMBEM_HAVE_GMSH
// Reads the 3-node triangles (Gmsh element type 2) of a Gmsh MSH 2.x, 4.0 or 4.1
// file (ASCII or binary of either endianness), given as a path to a regular file,
// a pipe or a FIFO (/dev/stdin, <(cat f.msh)). Nothing in the file can execute:
//  1. the input is opened once and copied in full into a private temporary
//     directory as mesh.msh (so Gmsh's mesh reader is forced by the extension and
//     no .opt file is merged), and the copy is what is checked and read;
//  2. check_msh verifies its structure first, for a precise message on the common
//     defects (see msh_check.hpp);
//  3. Gmsh reads the copy in a forked, sandboxed child process (memory and CPU
//     limits, no execve, no writing to files: src/io/sandbox.hpp) that sends the
//     triangles back through a pipe, so that a crash, a hang or a runaway
//     allocation inside Gmsh becomes an fmbem::Error; the child checks that Gmsh
//     read as many triangles as check_msh counted.
// Points and lines are ignored; volume elements are ignored with a warning; other
// 2D elements (quadrangles, curved triangles) are an error, as the surface would
// have holes. Vertices are the nodes the triangles use, in increasing tag order;
// triangles come in increasing element-tag order. The physical groups of every dimension come
// as Surface::groups, in increasing (dimension, tag) order, named by $PhysicalNames ("" where
// it names none; control characters become '?'), with each triangle's surface group
// (Surface::triangle_group, when the file has groups) and the first triangle in two surface
// groups (Surface::overlap: not an error here). MSH 2 files give the groups of each element,
// MSH 4 files of each entity: the same groups either way for a file Gmsh converts (an MSH 2
// file Gmsh writes repeats a triangle in two groups, which Mesh::from_surface refuses as a
// duplicate). Throws fmbem::Error naming
// `path` and the problem. Prints nothing and leaves the process's locale and
// OpenMP thread count as they were (Gmsh never runs in this process). Safe to call
// after MPI_Init, with OpenMP threads and from several threads: the child uses
// neither MPI nor OpenMP, resets the signal handlers it inherits (PETSc's) and ends
// with _exit. Costs about 4 ms for a small file (fork, Gmsh's start, the read).
SurfaceRead read_gmsh(const std::string& path, const GmshReadOptions& options = {});
// Field points from a Gmsh MSH file, read as read_gmsh reads surfaces (private copy, check_msh,
// Gmsh in the sandboxed child): every node, in increasing tag order, with the first-order
// triangles, quadrangles, tetrahedra and hexahedra as cells (other 2D and 3D elements are left
// out with a warning, points and lines silently). Throws fmbem::Error naming `path`; a file
// without nodes is an error. The description is left to the caller.
FieldPoints read_gmsh_points(const std::string& path, const GmshReadOptions& options = {});
#else
[[noreturn]] inline SurfaceRead read_gmsh(const std::string& path, const GmshReadOptions& = {}) {
  throw Error("cannot read mesh file '" + path +
              "': this build of fmbem has no Gmsh support (FMBEM_WITH_GMSH=OFF); use "
              "-mesh icosphere:L[:R]");
}
[[noreturn]] inline FieldPoints read_gmsh_points(const std::string& path,
                                                 const GmshReadOptions& = {}) {
  throw Error("cannot read field file '" + path +
              "': this build of fmbem has no Gmsh support (FMBEM_WITH_GMSH=OFF); give the points "
              "as CSV (x,y,z a line) or use -bem_field_plane");
}
#endif

}  // namespace fmbem::io
