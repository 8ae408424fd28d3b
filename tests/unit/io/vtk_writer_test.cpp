#include "fmbem/io/vtk_writer.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "fmbem/core/error.hpp"
#include "scratch_test.hpp"

// Reading back needs the VTK headers, which reach this test only when CMake
// gives test_io the VTK include directories; otherwise that check is skipped.
#if FMBEM_HAVE_VTK && __has_include(<vtkXMLUnstructuredGridReader.h>)
#define FMBEM_TEST_VTK_READER 1
#include <vtkCellData.h>
#include <vtkCellType.h>
#include <vtkDataArray.h>
#include <vtkIdList.h>
#include <vtkNew.h>
#include <vtkPoints.h>
#include <vtkUnstructuredGrid.h>
#include <vtkXMLPUnstructuredGridReader.h>
#include <vtkXMLUnstructuredGridReader.h>
#else
#define FMBEM_TEST_VTK_READER 0
#endif

namespace fmbem::io {
namespace {

namespace fs = std::filesystem;

class VtkWriter : public ScratchTest {
 protected:
  std::vector<CellField> two_fields() const {
    CellField pressure{"pressure", {}}, error{"error", {}};
    for (std::size_t e = 0; e < mesh_.size(); ++e) {
      pressure.values.push_back(1.0 / (e + 3.0));
      error.values.push_back(-1e-300 * e);
    }
    return {pressure, error};
  }

  std::string write_error(const std::string& path, const std::vector<CellField>& fields) const {
    try {
      write_vtu(path, mesh_, fields);
    } catch (const Error& e) {
      return e.what();
    }
    ADD_FAILURE() << "expected fmbem::Error";
    return {};
  }

  Mesh mesh_ = Mesh::from_surface(make_icosphere(2, 2.0, {1.0, 0.0, -1.0}), "icosphere");
};

#if FMBEM_HAVE_VTK

TEST_F(VtkWriter, IsAvailable) { EXPECT_TRUE(vtk_available()); }

TEST_F(VtkWriter, WritesAppendedCompressedXml) {
  const std::string path = scratch_file("sphere.vtu");
  write_vtu(path, mesh_, two_fields());
  std::ifstream in(path, std::ios::binary);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("<VTKFile type=\"UnstructuredGrid\""), std::string::npos);
  EXPECT_NE(text.find("compressor=\"vtkZLibDataCompressor\""), std::string::npos);
  EXPECT_NE(text.find("<AppendedData encoding=\"raw\">"), std::string::npos);
  EXPECT_NE(text.find("NumberOfCells=\"320\""), std::string::npos);
  EXPECT_NE(text.find("Name=\"pressure\""), std::string::npos);
  EXPECT_NE(text.find("Name=\"normal\" NumberOfComponents=\"3\""), std::string::npos);
}

TEST_F(VtkWriter, RoundTripThroughVtkReader) {
#if FMBEM_TEST_VTK_READER
  const std::string path = scratch_file("sphere.vtu");
  const std::vector<CellField> fields = two_fields();
  write_vtu(path, mesh_, fields);

  vtkNew<vtkXMLUnstructuredGridReader> reader;
  reader->SetFileName(path.c_str());
  reader->Update();
  vtkUnstructuredGrid* grid = reader->GetOutput();
  ASSERT_EQ(grid->GetNumberOfPoints(), static_cast<vtkIdType>(mesh_.vertices().size()));
  ASSERT_EQ(grid->GetNumberOfCells(), static_cast<vtkIdType>(mesh_.size()));
  for (vtkIdType v = 0; v < grid->GetNumberOfPoints(); ++v) {
    double p[3];
    grid->GetPoint(v, p);
    EXPECT_EQ((Vec3{p[0], p[1], p[2]}), mesh_.vertices()[v]);
  }
  vtkNew<vtkIdList> corners;
  for (vtkIdType e = 0; e < grid->GetNumberOfCells(); ++e) {
    EXPECT_EQ(grid->GetCellType(e), VTK_TRIANGLE);
    grid->GetCellPoints(e, corners);
    ASSERT_EQ(corners->GetNumberOfIds(), 3);
    for (int k = 0; k < 3; ++k) EXPECT_EQ(corners->GetId(k), mesh_.triangles()[e][k]);
  }
  vtkCellData* cell_data = grid->GetCellData();
  EXPECT_EQ(cell_data->GetNumberOfArrays(), 3);
  for (const CellField& field : fields) {
    vtkDataArray* array = cell_data->GetArray(field.name.c_str());
    ASSERT_NE(array, nullptr) << field.name;
    ASSERT_EQ(array->GetNumberOfComponents(), 1);
    EXPECT_EQ(array->GetDataType(), VTK_DOUBLE);
    for (std::size_t e = 0; e < mesh_.size(); ++e)
      EXPECT_EQ(array->GetTuple1(static_cast<vtkIdType>(e)), field.values[e]);
  }
  vtkDataArray* normals = cell_data->GetArray("normal");
  ASSERT_NE(normals, nullptr);
  ASSERT_EQ(normals->GetNumberOfComponents(), 3);
  for (std::size_t e = 0; e < mesh_.size(); ++e) {
    const double* n = normals->GetTuple3(static_cast<vtkIdType>(e));
    EXPECT_EQ((Vec3{n[0], n[1], n[2]}), mesh_.normals()[e]);
  }
#else
  GTEST_SKIP() << "VTK headers not on test_io's include path (link it to VTK::IOXML)";
#endif
}

TEST_F(VtkWriter, NoFieldsStillWritesNormals) {
  const std::string path = scratch_file("bare.vtu");
  write_vtu(path, mesh_, {});
  std::ifstream in(path, std::ios::binary);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("Name=\"normal\""), std::string::npos);
}

TEST_F(VtkWriter, FieldOfWrongSize) {
  std::vector<CellField> fields = two_fields();
  fields[1].values.pop_back();
  const std::string message = write_error(scratch_file("x.vtu"), fields);
  EXPECT_NE(message.find("cell field 'error' has 319 values for the 320 elements"),
            std::string::npos)
      << message;
}

TEST_F(VtkWriter, BadFieldNames) {
  std::vector<CellField> fields = two_fields();
  fields[1].name = "pressure";
  EXPECT_NE(write_error(scratch_file("x.vtu"), fields).find("two cell fields are called"),
            std::string::npos);
  fields[1].name = "normal";
  EXPECT_NE(write_error(scratch_file("x.vtu"), fields).find("reserved"), std::string::npos);
  fields[1].name = "";
  EXPECT_NE(write_error(scratch_file("x.vtu"), fields).find("empty name"), std::string::npos);
}

TEST_F(VtkWriter, UnwritablePath) {
  const std::string path = scratch_file("no_such_folder/x.vtu");
  const std::string message = write_error(path, two_fields());
  EXPECT_NE(message.find("'" + path + "'"), std::string::npos) << message;
  EXPECT_NE(message.find("No such file or directory"), std::string::npos) << message;
}

TEST_F(VtkWriter, FullDiskIsAnErrorNotAConsoleMessage) {
  // VTK deletes the output file when the disk is full, so never hand it
  // /dev/full itself: make a private copy of that device (needs root).
  const std::string full = scratch_file("full");
  if (mknod(full.c_str(), S_IFCHR | 0666, makedev(1, 7)) != 0)
    GTEST_SKIP() << "cannot make a /dev/full device node here (needs root)";
  ::testing::internal::CaptureStderr();
  const std::string message = write_error(full, two_fields());
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");
  EXPECT_NE(message.find("cannot write '" + full + "': VTK says: No space left on device"),
            std::string::npos)
      << message;
  EXPECT_EQ(message.find('\n'), std::string::npos) << "one line: " << message;
}

TEST_F(VtkWriter, PiecesAndSummaryReadBackAsTheMesh) {
  // Three pieces of the 320 elements, each cell named by its element: the user's index, here
  // reversed, as the distributed solver's renumbering would leave them.
  const std::size_t bounds[] = {0, 100, 220, 320};
  const std::string summary = scratch_file("sphere.pvtu");
  std::vector<std::int64_t> ids(mesh_.size());
  for (std::size_t e = 0; e < mesh_.size(); ++e) ids[e] = std::int64_t(mesh_.size() - 1 - e);
  const std::vector<CellField> fields = two_fields();
  std::vector<std::string> sources;
  for (std::size_t p = 0; p < 3; ++p) {
    const std::size_t first = bounds[p], count = bounds[p + 1] - bounds[p];
    std::vector<CellField> piece_fields;
    for (const CellField& field : fields)
      piece_fields.push_back(
          {field.name, std::vector<double>(field.values.begin() + std::ptrdiff_t(first),
                                           field.values.begin() + std::ptrdiff_t(first + count))});
    const std::string piece = pvtu_piece_path(summary, p);
    EXPECT_EQ(piece, scratch_file("sphere_" + std::to_string(p) + ".vtu"));
    write_vtu_piece(piece, mesh_, {first, count, std::span(ids).subspan(first, count)},
                    piece_fields);
    sources.push_back(fs::path(piece).filename().string());
  }
  write_pvtu(summary, {"pressure", "error"}, sources);
  std::ifstream in(summary);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("<VTKFile type=\"PUnstructuredGrid\""), std::string::npos) << text;
  EXPECT_NE(text.find("<Piece Source=\"sphere_2.vtu\"/>"), std::string::npos) << text;
#if FMBEM_TEST_VTK_READER
  // A piece holds only the vertices its triangles use.
  vtkNew<vtkXMLUnstructuredGridReader> piece_reader;
  piece_reader->SetFileName(pvtu_piece_path(summary, 0).c_str());
  piece_reader->Update();
  std::set<std::int32_t> used;
  for (std::size_t e = 0; e < 100; ++e)
    used.insert(mesh_.triangles()[e].begin(), mesh_.triangles()[e].end());
  EXPECT_EQ(piece_reader->GetOutput()->GetNumberOfPoints(), vtkIdType(used.size()));

  vtkNew<vtkXMLPUnstructuredGridReader> reader;
  reader->SetFileName(summary.c_str());
  reader->Update();
  vtkUnstructuredGrid* grid = reader->GetOutput();
  ASSERT_EQ(grid->GetNumberOfCells(), vtkIdType(mesh_.size()));
  vtkCellData* cell_data = grid->GetCellData();
  vtkDataArray* element = cell_data->GetArray("element");
  ASSERT_NE(element, nullptr);
  EXPECT_EQ(element->GetDataType(), VTK_TYPE_INT64);
  vtkNew<vtkIdList> corners;
  for (vtkIdType c = 0; c < grid->GetNumberOfCells(); ++c) {
    // The cells come piece after piece, in the solver's order: c is the solver's index.
    const std::size_t e = std::size_t(c);
    EXPECT_EQ(element->GetTuple1(c), double(ids[e]));
    grid->GetCellPoints(c, corners);
    ASSERT_EQ(corners->GetNumberOfIds(), 3);
    for (int k = 0; k < 3; ++k) {
      double p[3];
      grid->GetPoint(corners->GetId(k), p);
      EXPECT_EQ((Vec3{p[0], p[1], p[2]}), mesh_.corner(e, k));
    }
    for (const CellField& field : fields)
      EXPECT_EQ(cell_data->GetArray(field.name.c_str())->GetTuple1(c), field.values[e]);
    const double* n = cell_data->GetArray("normal")->GetTuple3(c);
    EXPECT_EQ((Vec3{n[0], n[1], n[2]}), mesh_.normals()[e]);
  }
#endif
}

TEST_F(VtkWriter, PieceOfWrongShape) {
  const std::vector<std::int64_t> ids(10, 0);
  const auto piece_error = [&](const MeshPiece& piece, const std::vector<CellField>& fields) {
    try {
      write_vtu_piece(scratch_file("p_0.vtu"), mesh_, piece, fields);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(piece_error({315, 10, ids}, {}).find("run past the 320 elements"), std::string::npos);
  EXPECT_NE(piece_error({0, 10, std::span(ids).first(9)}, {}).find("9 element indices for the 10"),
            std::string::npos);
  EXPECT_NE(piece_error({0, 10, ids}, {{"u", std::vector<double>(11)}})
                .find("cell field 'u' has 11 values for the 10 elements of the piece"),
            std::string::npos);
  EXPECT_NE(piece_error({0, 10, ids}, {{"element", std::vector<double>(10)}}).find("reserved"),
            std::string::npos);
}

#else  // FMBEM_HAVE_VTK

TEST_F(VtkWriter, BuildWithoutVtkSaysSo) {
  EXPECT_FALSE(vtk_available());
  const std::string message = write_error(scratch_file("x.vtu"), two_fields());
  EXPECT_NE(message.find("built without VTK; use -bem_csv"), std::string::npos) << message;
}

#endif  // FMBEM_HAVE_VTK

}  // namespace
}  // namespace fmbem::io
