#pragma once
#include <string>

#include "fmbem/core/error.hpp"
#include "fmbem/mesh/surface.hpp"

#if !defined(FMBEM_HAVE_GMSH)
#error "FMBEM_HAVE_GMSH is undefined: link against fmbem::io, which defines it"
#endif

namespace fmbem::io {

// True when this build reads .msh files through the Gmsh SDK.
constexpr bool gmsh_available() { return FMBEM_HAVE_GMSH != 0; }

#if FMBEM_HAVE_GMSH
// Reads the 3-node triangles (Gmsh element type 2) of every surface entity of a
// Gmsh MSH 2.x or 4.x file, ASCII or binary; other elements are ignored.
// Vertices are compacted to those the triangles use, in increasing node-tag
// order; triangles come in increasing element-tag order. Throws fmbem::Error
// naming the file and the problem (missing or unreadable, not a mesh file Gmsh
// can read, no triangles). Prints nothing. Serialised by an internal mutex;
// the caller must not hold a Gmsh API session of its own while calling it,
// because it initialises and finalises Gmsh itself (restoring the locale and,
// when built with OpenMP, the OpenMP thread count that gmsh::initialize changes).
Surface read_gmsh(const std::string& path);
#else
[[noreturn]] inline Surface read_gmsh(const std::string& path) {
  throw Error("cannot read mesh file '" + path +
              "': this build of fmbem has no Gmsh support (FMBEM_WITH_GMSH=OFF); use "
              "-mesh icosphere:L[:R]");
}
#endif

}  // namespace fmbem::io
