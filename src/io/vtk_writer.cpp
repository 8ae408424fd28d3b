#include "fmbem/io/vtk_writer.hpp"

#include <vtkCallbackCommand.h>
#include <vtkCellArray.h>
#include <vtkCellData.h>
#include <vtkCellType.h>
#include <vtkCommand.h>
#include <vtkDoubleArray.h>
#include <vtkErrorCode.h>
#include <vtkExecutive.h>
#include <vtkIdTypeArray.h>
#include <vtkNew.h>
#include <vtkPoints.h>
#include <vtkUnstructuredGrid.h>
#include <vtkXMLUnstructuredGridWriter.h>
#include <vtkXMLWriter.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <set>

#include "vtk_xml.hpp"

namespace fmbem::io {
namespace {

constexpr const char* kNormalArray = "normal";

void check_fields(const std::string& path, const Mesh& mesh, const std::vector<CellField>& fields) {
  const std::string prefix = "cannot write '" + path + "': ";
  std::set<std::string> names;
  for (const CellField& field : fields) {
    if (field.name.empty()) throw Error(prefix + "a cell field has an empty name");
    if (field.name == kNormalArray)
      throw Error(prefix + "the cell field name 'normal' is reserved for the element normals");
    if (!names.insert(field.name).second)
      throw Error(prefix + "two cell fields are called '" + field.name + "'");
    if (field.values.size() != mesh.size())
      throw Error(prefix + "cell field '" + field.name + "' has " +
                  std::to_string(field.values.size()) + " values for the " +
                  std::to_string(mesh.size()) + " elements of mesh '" + mesh.name() + "'");
  }
}

vtkNew<vtkDoubleArray> cell_array(const char* name, int components, std::size_t cells) {
  vtkNew<vtkDoubleArray> array;
  array->SetName(name);
  array->SetNumberOfComponents(components);
  array->SetNumberOfTuples(static_cast<vtkIdType>(cells));
  return array;
}

vtkNew<vtkUnstructuredGrid> triangle_grid(const Mesh& mesh, const std::vector<CellField>& fields) {
  vtkNew<vtkPoints> points;
  points->SetDataTypeToDouble();
  points->SetNumberOfPoints(static_cast<vtkIdType>(mesh.vertices().size()));
  for (std::size_t v = 0; v < mesh.vertices().size(); ++v) {
    const Vec3& p = mesh.vertices()[v];
    points->SetPoint(static_cast<vtkIdType>(v), p.x, p.y, p.z);
  }

  // All cells are triangles: offsets 0, 3, 6, ... into the flat connectivity.
  const std::size_t cells = mesh.size();
  vtkNew<vtkIdTypeArray> offsets, connectivity;
  offsets->SetNumberOfValues(static_cast<vtkIdType>(cells + 1));
  connectivity->SetNumberOfValues(static_cast<vtkIdType>(3 * cells));
  for (std::size_t e = 0; e <= cells; ++e)
    offsets->SetValue(static_cast<vtkIdType>(e), static_cast<vtkIdType>(3 * e));
  for (std::size_t e = 0; e < cells; ++e)
    for (int k = 0; k < 3; ++k)
      connectivity->SetValue(static_cast<vtkIdType>(3 * e + k), mesh.triangles()[e][k]);
  vtkNew<vtkCellArray> triangles;
  triangles->SetData(offsets, connectivity);

  vtkNew<vtkUnstructuredGrid> grid;
  grid->SetPoints(points);
  grid->SetCells(VTK_TRIANGLE, triangles);

  for (const CellField& field : fields) {
    auto array = cell_array(field.name.c_str(), 1, cells);
    for (std::size_t e = 0; e < cells; ++e)
      array->SetValue(static_cast<vtkIdType>(e), field.values[e]);
    grid->GetCellData()->AddArray(array);
  }
  auto normals = cell_array(kNormalArray, 3, cells);
  for (std::size_t e = 0; e < cells; ++e) {
    const Vec3& n = mesh.normals()[e];
    normals->SetTuple3(static_cast<vtkIdType>(e), n.x, n.y, n.z);
  }
  grid->GetCellData()->SetNormals(normals);  // ParaView then shades with them
  return grid;
}

}  // namespace

void write_vtu(const std::string& path, const Mesh& mesh, const std::vector<CellField>& fields) {
  check_fields(path, mesh, fields);
  detail::check_writable(path);
  const auto grid = triangle_grid(mesh, fields);

  vtkNew<vtkXMLUnstructuredGridWriter> writer;
  writer->SetInputData(grid);
  detail::write_vtk_xml(writer, path);
}

namespace detail {

// Gives a clear message (with the OS reason) for the common failures before VTK
// tries, since VTK's own report is a multi-line console message.
void check_writable(const std::string& path) {
  std::FILE* file = std::fopen(path.c_str(), "wb");
  if (!file) throw Error("cannot write '" + path + "': " + std::strerror(errno));
  std::fclose(file);
}

// Collects VTK error messages instead of letting VTK print them. VTK hands
// over "ERROR: In file.cxx, line N\nClass (0x...): message\n\n"; keep the message.
void record_error(vtkObject*, unsigned long, void* client_data, void* call_data) {
  auto* first_error = static_cast<std::string*>(client_data);
  if (!first_error->empty() || !call_data) return;
  std::string text = static_cast<const char*>(call_data);
  if (const std::size_t line_break = text.find('\n'); line_break != std::string::npos)
    text.erase(0, line_break + 1);
  if (const std::size_t object_end = text.find("): "); object_end != std::string::npos)
    text.erase(0, object_end + 3);
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.pop_back();
  std::replace(text.begin(), text.end(), '\n', ' ');
  *first_error = text.empty() ? "unknown error" : text;
}

void write_vtk_xml(vtkXMLWriter* writer, const std::string& path) {
  // Observers keep VTK from printing; the writer's own message is the useful
  // one, its executive only adds "returned failure for request".
  std::string writer_error, executive_error;
  vtkNew<vtkCallbackCommand> on_writer_error, on_executive_error;
  on_writer_error->SetCallback(record_error);
  on_writer_error->SetClientData(&writer_error);
  on_executive_error->SetCallback(record_error);
  on_executive_error->SetClientData(&executive_error);
  writer->AddObserver(vtkCommand::ErrorEvent, on_writer_error);
  writer->GetExecutive()->AddObserver(vtkCommand::ErrorEvent, on_executive_error);

  writer->SetFileName(path.c_str());
  writer->SetDataModeToAppended();
  writer->EncodeAppendedDataOff();  // raw binary, not base64
  writer->SetCompressorTypeToZLib();
  writer->SetHeaderTypeToUInt64();  // arrays over 4 GiB stay valid
  // Write() returns 1 even when writing failed; the error code tells.
  writer->Write();
  const unsigned long code = writer->GetErrorCode();
  if (code == vtkErrorCode::NoError && writer_error.empty() && executive_error.empty()) return;
  std::string reason = writer_error;
  // Codes below FirstVTKErrorCode are the errno of a failed system call.
  if (reason.empty() && code > 0 && code < vtkErrorCode::FirstVTKErrorCode)
    reason = std::strerror(static_cast<int>(code));
  if (reason.empty() && code == vtkErrorCode::OutOfDiskSpaceError) reason = "out of disk space";
  if (reason.empty() && code == vtkErrorCode::CannotOpenFileError) reason = "cannot open the file";
  if (reason.empty()) reason = "error code " + std::to_string(code);
  throw Error("cannot write '" + path + "': VTK says: " + reason);
}

}  // namespace detail

}  // namespace fmbem::io
