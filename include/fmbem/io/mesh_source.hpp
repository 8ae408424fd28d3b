#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "fmbem/mesh/mesh.hpp"
#include "fmbem/mesh/surface.hpp"

namespace fmbem::io {

// A surface as read, before validation, and what the reader noticed but did not
// refuse (for example volume elements it ignored), one sentence each, naming the
// file. Empty for a generated icosphere.
struct SurfaceRead {
  Surface surface;
  std::vector<std::string> warnings;
};

// Reads the surface named by a "-mesh" spec:
//   "icosphere:L" or "icosphere:L:R"  icosahedral sphere of level L (integer 0..10,
//                                     20 * 4^L triangles) and radius R > 0 (default 1)
//                                     centred at the origin;
//   "octasphere:L[:R[:AXES]]"         octahedral sphere (8 * 4^L triangles, make_octasphere), or
//                                     its part with the coordinates AXES (some of x, y, z)
//                                     >= 0: a half, quarter or eighth for symmetry planes;
//   "numcalc:PATH"                    the boundary elements of the NumCalc project PATH (its
//                                     NC.inp or folder: read_numcalc_mesh), a surface group a
//                                     BOUNDARY line;
//   "memory:NAME"                     a copy of the surface a program holds under NAME
//                                     (MemorySurface);
//   anything else                     a Gmsh .msh file, pipe or FIFO, read by read_gmsh
//                                     with its default options.
// Throws fmbem::Error on a malformed spec or an unreadable or malformed file.
SurfaceRead read_surface(const std::string& spec);
inline constexpr std::string_view kNumCalcMeshPrefix = "numcalc:";
inline constexpr std::string_view kMemoryMeshPrefix = "memory:";

// A surface a program holds (the Python module's meshes from arrays), readable as the -mesh
// "memory:NAME" while this object lives: everything that reads a mesh by its spec (each rank,
// the outputs' whole mesh) reads it as it would a file. Thread-safe.
class MemorySurface {
 public:
  // Throws fmbem::Error for an empty name, one with a blank, or one another MemorySurface holds.
  MemorySurface(std::string name, Surface surface);
  ~MemorySurface();
  MemorySurface(const MemorySurface&) = delete;
  MemorySurface& operator=(const MemorySurface&) = delete;
  // "memory:NAME": the -mesh that reads it.
  std::string spec() const { return std::string(kMemoryMeshPrefix) + name_; }
  const std::string& name() const { return name_; }

 private:
  std::string name_;
};

// Whether each rank can read its own slab of the mesh `spec` names: a generated
// icosphere. A Gmsh file is read whole on one rank (the Gmsh SDK reads a file whole).
bool reads_in_slabs(const std::string& spec);
// The element count of such a mesh, known before it is read.
std::size_t slab_source_elements(const std::string& spec);
// Elements [first, last) of such a mesh as read_surface reads it whole (the same coordinates,
// bit for bit, and vertex indices): a valid closed surface's slab. Throws fmbem::Error for a
// malformed spec, a spec not read in slabs, or a range outside the mesh.
MeshSlab read_slab(const std::string& spec, std::size_t first, std::size_t last);

// Mesh::from_surface(read_surface(spec).surface, spec): the warnings are dropped
// (call read_surface to report them). Throws fmbem::Error as read_surface and
// Mesh::from_surface do.
Mesh load_mesh(const std::string& spec);

}  // namespace fmbem::io
