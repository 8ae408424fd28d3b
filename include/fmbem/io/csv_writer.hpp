#pragma once
#include <span>
#include <string>

#include "fmbem/core/vec3.hpp"
#include "fmbem/mesh/mesh.hpp"

namespace fmbem::io {

// Writes the header "x,y,z,re,im" and then one row per element: its centroid
// and the complex value, each number with 17 significant digits so that it
// reads back exactly (independent of the C++ and C locales). Throws
// fmbem::Error if the file cannot be written or values.size() != mesh.size().
void write_csv(const std::string& path, const Mesh& mesh, std::span<const cplx> values);

}  // namespace fmbem::io
