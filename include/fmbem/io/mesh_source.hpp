#pragma once
#include <string>

#include "fmbem/mesh/mesh.hpp"

namespace fmbem::io {

// Builds the mesh named by a "-mesh" spec:
//   "icosphere:L" or "icosphere:L:R"  icosahedral sphere of level L (integer 0..10,
//                                     20 * 4^L triangles) and radius R > 0 (default 1)
//                                     centred at the origin;
//   anything else                     a Gmsh .msh file path, read by read_gmsh.
// The result is Mesh::from_surface(surface, spec). Throws fmbem::Error on a
// malformed spec, an unreadable file or an invalid surface.
Mesh load_mesh(const std::string& spec);

}  // namespace fmbem::io
