#pragma once
#include <span>
#include <string>
#include <vector>

#include "fmbem/core/vec3.hpp"
#include "fmbem/mesh/mesh.hpp"

namespace fmbem::io {

// Writes the header "x,y,z,re,im" and then one row per element: its centroid
// and the complex value, each number with 17 significant digits so that it
// reads back exactly (independent of the C++ and C locales). Throws
// fmbem::Error if the file cannot be written or values.size() != mesh.size().
void write_csv(const std::string& path, const Mesh& mesh, std::span<const cplx> values);

// One value per element, a column called `name` (CSV) or a cell-data array (VTK).
struct CellField {
  std::string name;
  std::vector<double> values;
};

// The header "x,y,z,<names>" and one row per element: its centroid and the columns' values,
// as write_csv above. Throws fmbem::Error as it does, or for a column of another length.
void write_csv(const std::string& path, const Mesh& mesh, std::span<const CellField> columns);

}  // namespace fmbem::io
