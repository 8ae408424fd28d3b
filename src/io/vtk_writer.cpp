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
#include <vtkObjectFactory.h>
#include <vtkPoints.h>
#include <vtkTypeInt64Array.h>
#include <vtkUnstructuredGrid.h>
#include <vtkXMLPUnstructuredGridWriter.h>
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
constexpr const char* kElementArray = "element";

// `cells`: the elements the fields describe, "the N elements of mesh 'm'" or of a piece.
void check_fields(const std::string& path, std::size_t cells, const std::string& of,
                  const std::vector<CellField>& fields) {
  const std::string prefix = "cannot write '" + path + "': ";
  std::set<std::string> names;
  for (const CellField& field : fields) {
    if (field.name.empty()) throw Error(prefix + "a cell field has an empty name");
    if (field.name == kNormalArray || field.name == kElementArray)
      throw Error(prefix + "the cell field name '" + field.name + "' is reserved");
    if (!names.insert(field.name).second)
      throw Error(prefix + "two cell fields are called '" + field.name + "'");
    if (field.values.size() != cells)
      throw Error(prefix + "cell field '" + field.name + "' has " +
                  std::to_string(field.values.size()) + " values for the " + std::to_string(cells) +
                  " elements of " + of);
  }
}

vtkNew<vtkDoubleArray> cell_array(const char* name, int components, std::size_t cells) {
  vtkNew<vtkDoubleArray> array;
  array->SetName(name);
  array->SetNumberOfComponents(components);
  array->SetNumberOfTuples(static_cast<vtkIdType>(cells));
  return array;
}

// The triangles of elements [piece.first, piece.first + piece.count) with the fields, the
// normals and (when `element_ids`) the Int64 array "element". The whole mesh keeps every vertex
// in its order; a part keeps those its triangles use, in increasing index order.
vtkNew<vtkUnstructuredGrid> triangle_grid(const Mesh& mesh, const MeshPiece& piece,
                                          const std::vector<CellField>& fields, bool element_ids) {
  const std::size_t vertex_count = mesh.vertices().size();
  const bool whole = piece.first == 0 && piece.count == mesh.size();
  std::vector<std::int64_t> point_of(vertex_count, whole ? 0 : -1);
  for (std::size_t e = piece.first; e < piece.first + piece.count; ++e)
    for (int k = 0; k < 3; ++k) point_of[std::size_t(mesh.triangles()[e][k])] = 0;
  std::size_t points_used = 0;
  for (std::int64_t& point : point_of)
    if (point == 0) point = std::int64_t(points_used++);
  vtkNew<vtkPoints> points;
  points->SetDataTypeToDouble();
  points->SetNumberOfPoints(static_cast<vtkIdType>(points_used));
  for (std::size_t v = 0; v < vertex_count; ++v)
    if (point_of[v] >= 0) {
      const Vec3& p = mesh.vertices()[v];
      points->SetPoint(static_cast<vtkIdType>(point_of[v]), p.x, p.y, p.z);
    }

  // All cells are triangles: offsets 0, 3, 6, ... into the flat connectivity.
  const std::size_t cells = piece.count;
  vtkNew<vtkIdTypeArray> offsets, connectivity;
  offsets->SetNumberOfValues(static_cast<vtkIdType>(cells + 1));
  connectivity->SetNumberOfValues(static_cast<vtkIdType>(3 * cells));
  for (std::size_t c = 0; c <= cells; ++c)
    offsets->SetValue(static_cast<vtkIdType>(c), static_cast<vtkIdType>(3 * c));
  for (std::size_t c = 0; c < cells; ++c)
    for (int k = 0; k < 3; ++k)
      connectivity->SetValue(
          static_cast<vtkIdType>(3 * c + k),
          static_cast<vtkIdType>(point_of[std::size_t(mesh.triangles()[piece.first + c][k])]));
  vtkNew<vtkCellArray> triangles;
  triangles->SetData(offsets, connectivity);

  vtkNew<vtkUnstructuredGrid> grid;
  grid->SetPoints(points);
  grid->SetCells(VTK_TRIANGLE, triangles);

  for (const CellField& field : fields) {
    auto array = cell_array(field.name.c_str(), 1, cells);
    for (std::size_t c = 0; c < cells; ++c)
      array->SetValue(static_cast<vtkIdType>(c), field.values[c]);
    grid->GetCellData()->AddArray(array);
  }
  if (element_ids) {
    vtkNew<vtkTypeInt64Array> ids;
    ids->SetName(kElementArray);
    ids->SetNumberOfValues(static_cast<vtkIdType>(cells));
    for (std::size_t c = 0; c < cells; ++c)
      ids->SetValue(static_cast<vtkIdType>(c), piece.element_ids[c]);
    grid->GetCellData()->AddArray(ids);
  }
  auto normals = cell_array(kNormalArray, 3, cells);
  for (std::size_t c = 0; c < cells; ++c) {
    const Vec3& n = mesh.normals()[piece.first + c];
    normals->SetTuple3(static_cast<vtkIdType>(c), n.x, n.y, n.z);
  }
  grid->GetCellData()->SetNormals(normals);  // ParaView then shades with them
  return grid;
}

// VTK's summary writer, told that the pieces exist: without a vtkMultiProcessController it lists
// only the pieces it wrote itself, and it names them after its own file (here a temporary).
// Each rank writes its piece (write_vtu_piece); this one writes the summary alone.
class SummaryWriter : public vtkXMLPUnstructuredGridWriter {
 public:
  static SummaryWriter* New();
  vtkTypeMacro(SummaryWriter, vtkXMLPUnstructuredGridWriter);
  void SetPieceSources(const std::vector<std::string>& sources) {
    sources_ = sources;
    SetNumberOfPieces(int(sources.size()));
  }

 protected:
  SummaryWriter() {
    SetController(nullptr);
    SetStartPiece(0);
    SetEndPiece(0);
    SetWriteSummaryFile(1);
  }
  int WritePieceInternal() override {
    std::fill(PieceWrittenFlags, PieceWrittenFlags + NumberOfPieces, 1);
    return 1;
  }
  void WritePPieceAttributes(int index) override {
    WriteStringAttribute("Source", sources_[std::size_t(index)].c_str());
  }

 private:
  std::vector<std::string> sources_;
};
vtkStandardNewMacro(SummaryWriter);

}  // namespace

void write_vtu(const std::string& path, const Mesh& mesh, const std::vector<CellField>& fields) {
  check_fields(path, mesh.size(), "mesh '" + mesh.name() + "'", fields);
  detail::check_writable(path);
  const auto grid = triangle_grid(mesh, {0, mesh.size(), {}}, fields, false);

  vtkNew<vtkXMLUnstructuredGridWriter> writer;
  writer->SetInputData(grid);
  detail::write_vtk_xml(writer, path);
}

void write_vtu_piece(const std::string& path, const Mesh& mesh, const MeshPiece& piece,
                     const std::vector<CellField>& fields) {
  if (piece.first > mesh.size() || piece.count > mesh.size() - piece.first)
    throw Error("cannot write '" + path + "': elements " + std::to_string(piece.first) + " to " +
                std::to_string(piece.first + piece.count) + " run past the " +
                std::to_string(mesh.size()) + " elements of mesh '" + mesh.name() + "'");
  if (piece.element_ids.size() != piece.count)
    throw Error("cannot write '" + path + "': " + std::to_string(piece.element_ids.size()) +
                " element indices for the " + std::to_string(piece.count) +
                " elements of the piece");
  check_fields(path, piece.count, "the piece", fields);
  detail::check_writable(path);
  const auto grid = triangle_grid(mesh, piece, fields, true);

  vtkNew<vtkXMLUnstructuredGridWriter> writer;
  writer->SetInputData(grid);
  detail::write_vtk_xml(writer, path);
}

void write_pvtu(const std::string& path, const std::vector<std::string>& field_names,
                const std::vector<std::string>& piece_sources) {
  // The declarations come from a grid with the pieces' arrays and no cells.
  std::vector<CellField> fields;
  for (const std::string& name : field_names) fields.push_back({name, {}});
  check_fields(path, 0, "the summary", fields);
  if (piece_sources.empty()) throw Error("cannot write '" + path + "': no pieces");
  detail::check_writable(path);
  vtkNew<vtkPoints> points;
  points->SetDataTypeToDouble();
  vtkNew<vtkUnstructuredGrid> declarations;
  declarations->SetPoints(points);
  for (const CellField& field : fields)
    declarations->GetCellData()->AddArray(cell_array(field.name.c_str(), 1, 0));
  vtkNew<vtkTypeInt64Array> ids;
  ids->SetName(kElementArray);
  declarations->GetCellData()->AddArray(ids);
  declarations->GetCellData()->SetNormals(cell_array(kNormalArray, 3, 0));

  vtkNew<SummaryWriter> writer;
  writer->SetPieceSources(piece_sources);
  writer->SetInputData(declarations);
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
