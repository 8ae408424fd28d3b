#include <vtkCellArray.h>
#include <vtkCellType.h>
#include <vtkDoubleArray.h>
#include <vtkIdTypeArray.h>
#include <vtkIntArray.h>
#include <vtkNew.h>
#include <vtkPointData.h>
#include <vtkPoints.h>
#include <vtkStructuredGrid.h>
#include <vtkUnsignedCharArray.h>
#include <vtkUnstructuredGrid.h>
#include <vtkXMLStructuredGridWriter.h>
#include <vtkXMLUnstructuredGridWriter.h>

#include <set>

#include "fmbem/io/field_writer.hpp"
#include "vtk_xml.hpp"

namespace fmbem::io {
namespace {

void check_arrays(const std::string& path, const FieldPoints& points,
                  const std::vector<NamedColumn>& arrays) {
  const std::string prefix = "cannot write '" + path + "': ";
  std::set<std::string> names;
  for (const NamedColumn& array : arrays) {
    if (array.name.empty()) throw Error(prefix + "a point array has an empty name");
    if (!names.insert(array.name).second)
      throw Error(prefix + "two point arrays are called '" + array.name + "'");
    if (array.values.size() != points.points.size())
      throw Error(prefix + "point array '" + array.name + "' has " +
                  std::to_string(array.values.size()) + " values for " +
                  std::to_string(points.points.size()) + " points");
  }
  if (points.grid_a > 0 && points.grid_a * points.grid_b != points.points.size())
    throw Error(prefix + "the plane's " + std::to_string(points.grid_a) + " x " +
                std::to_string(points.grid_b) + " grid does not hold its " +
                std::to_string(points.points.size()) + " points");
}

vtkNew<vtkPoints> vtk_points(const FieldPoints& points) {
  vtkNew<vtkPoints> out;
  out->SetDataTypeToDouble();
  out->SetNumberOfPoints(static_cast<vtkIdType>(points.points.size()));
  for (std::size_t i = 0; i < points.points.size(); ++i) {
    const Vec3& p = points.points[i];
    out->SetPoint(static_cast<vtkIdType>(i), p.x, p.y, p.z);
  }
  return out;
}

void add_arrays(vtkPointData* data, const std::vector<NamedColumn>& arrays) {
  for (const NamedColumn& array : arrays) {
    const auto count = static_cast<vtkIdType>(array.values.size());
    if (array.integer) {
      vtkNew<vtkIntArray> out;
      out->SetName(array.name.c_str());
      out->SetNumberOfValues(count);
      for (vtkIdType i = 0; i < count; ++i) out->SetValue(i, static_cast<int>(array.values[i]));
      data->AddArray(out);
    } else {
      vtkNew<vtkDoubleArray> out;
      out->SetName(array.name.c_str());
      out->SetNumberOfValues(count);
      for (vtkIdType i = 0; i < count; ++i) out->SetValue(i, array.values[i]);
      data->AddArray(out);
    }
  }
}

int vtk_cell_type(CellShape shape) {
  switch (shape) {
    case CellShape::triangle:
      return VTK_TRIANGLE;
    case CellShape::quadrangle:
      return VTK_QUAD;
    case CellShape::tetrahedron:
      return VTK_TETRA;
    case CellShape::hexahedron:
      return VTK_HEXAHEDRON;
  }
  return VTK_EMPTY_CELL;
}

// The points' cells, and a vertex for every point that no cell uses.
void set_cells(vtkUnstructuredGrid* grid, const FieldPoints& points) {
  const std::size_t n = points.points.size(), cells = points.cell_shapes.size();
  std::vector<bool> used(n, false);
  for (std::size_t node : points.cell_nodes) used[node] = true;
  std::size_t vertices = 0;
  for (std::size_t i = 0; i < n; ++i) vertices += !used[i];
  const std::size_t connectivity_size = points.cell_nodes.size() + vertices;
  vtkNew<vtkIdTypeArray> offsets, connectivity;
  vtkNew<vtkUnsignedCharArray> types;
  offsets->SetNumberOfValues(static_cast<vtkIdType>(cells + vertices + 1));
  connectivity->SetNumberOfValues(static_cast<vtkIdType>(connectivity_size));
  types->SetNumberOfValues(static_cast<vtkIdType>(cells + vertices));
  vtkIdType cell = 0, at = 0;
  for (std::size_t c = 0; c < cells; ++c, ++cell) {
    offsets->SetValue(cell, at);
    types->SetValue(cell, static_cast<unsigned char>(vtk_cell_type(points.cell_shapes[c])));
    for (std::size_t k = points.cell_offsets[c]; k < points.cell_offsets[c + 1]; ++k)
      connectivity->SetValue(at++, static_cast<vtkIdType>(points.cell_nodes[k]));
  }
  for (std::size_t i = 0; i < n; ++i)
    if (!used[i]) {
      offsets->SetValue(cell, at);
      types->SetValue(cell++, VTK_VERTEX);
      connectivity->SetValue(at++, static_cast<vtkIdType>(i));
    }
  offsets->SetValue(cell, at);
  vtkNew<vtkCellArray> cell_array;
  cell_array->SetData(offsets, connectivity);
  grid->SetCells(types, cell_array);
}

}  // namespace

void write_field_vtk(const std::string& path, const FieldPoints& points,
                     const std::vector<NamedColumn>& arrays) {
  check_arrays(path, points, arrays);
  detail::check_writable(path);
  if (points.grid_a > 0) {
    vtkNew<vtkStructuredGrid> grid;
    grid->SetDimensions(static_cast<int>(points.grid_a), static_cast<int>(points.grid_b), 1);
    grid->SetPoints(vtk_points(points));
    add_arrays(grid->GetPointData(), arrays);
    vtkNew<vtkXMLStructuredGridWriter> writer;
    writer->SetInputData(grid);
    detail::write_vtk_xml(writer, path);
    return;
  }
  vtkNew<vtkUnstructuredGrid> grid;
  grid->SetPoints(vtk_points(points));
  set_cells(grid, points);
  add_arrays(grid->GetPointData(), arrays);
  vtkNew<vtkXMLUnstructuredGridWriter> writer;
  writer->SetInputData(grid);
  detail::write_vtk_xml(writer, path);
}

}  // namespace fmbem::io
