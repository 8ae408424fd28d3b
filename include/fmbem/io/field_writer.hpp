#pragma once
#include <string>
#include <vector>

#include "fmbem/core/error.hpp"
#include "fmbem/io/field_points.hpp"

#if !defined(FMBEM_HAVE_VTK)
#error "FMBEM_HAVE_VTK is undefined: link against fmbem::io, which defines it"
#endif

namespace fmbem::io {

// One value per point (or per row of a table), written as an array or a column called `name`;
// `integer` arrays (flags) are written as integers.
struct NamedColumn {
  std::string name;
  std::vector<double> values;
  bool integer = false;
};

// A CSV table: the header (the column names, comma-separated) and one row per entry, each number
// with 17 significant digits (reads back exactly; NaN as "nan"), independent of the locale.
// Throws fmbem::Error if the file cannot be written, the columns differ in length, or a name is
// empty, repeated or holds a comma, quote or line break.
void write_table_csv(const std::string& path, const std::vector<NamedColumn>& columns);

// The field points as a table: columns x, y, z, then `arrays` (one value per point).
std::vector<NamedColumn> field_table(const FieldPoints& points,
                                     const std::vector<NamedColumn>& arrays);
// That table as CSV (write_table_csv).
void write_field_csv(const std::string& path, const FieldPoints& points,
                     const std::vector<NamedColumn>& arrays);

#if FMBEM_HAVE_VTK
// The field points with `arrays` as point data: a VTK XML structured grid (.vts, grid_a x
// grid_b x 1) for a plane, else an unstructured grid (.vtu) with the points' cells and a vertex
// cell for each point no cell uses (so that every point shows). Appended raw binary, zlib, 64-bit
// headers, as write_vtu. Throws fmbem::Error if the file cannot be written or an array is
// malformed (wrong size, empty or repeated name).
void write_field_vtk(const std::string& path, const FieldPoints& points,
                     const std::vector<NamedColumn>& arrays);
#else
[[noreturn]] inline void write_field_vtk(const std::string& path, const FieldPoints&,
                                         const std::vector<NamedColumn>&) {
  throw Error("cannot write '" + path + "': built without VTK; use -bem_field_csv");
}
#endif

}  // namespace fmbem::io
