// vtk_cells FILE.vtu|FILE.pvtu: the cells of a bem_solve output as VTK's own readers read them
// (a .pvtu through its summary and pieces), for the system tests to compare. Prints the header
// "element,x0,y0,z0,x1,y1,z1,x2,y2,z2,<name>,..." and one line per cell: its "element" array's
// value (the cell's index when there is none), its corners and its one-component cell arrays, each
// number with 17 significant digits. Exit status 1 (and a message) when the file cannot be read.
#include <vtkCellData.h>
#include <vtkDataArray.h>
#include <vtkIdList.h>
#include <vtkNew.h>
#include <vtkUnstructuredGrid.h>
#include <vtkXMLPUnstructuredGridReader.h>
#include <vtkXMLUnstructuredGridReader.h>

#include <cstdio>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: vtk_cells FILE.vtu|FILE.pvtu\n");
    return 1;
  }
  const std::string path = argv[1];
  const bool parallel = path.size() > 5 && path.compare(path.size() - 5, 5, ".pvtu") == 0;
  vtkNew<vtkXMLPUnstructuredGridReader> parallel_reader;
  vtkNew<vtkXMLUnstructuredGridReader> serial_reader;
  vtkAlgorithm* reader = parallel ? static_cast<vtkAlgorithm*>(parallel_reader)
                                  : static_cast<vtkAlgorithm*>(serial_reader);
  parallel_reader->SetFileName(path.c_str());
  serial_reader->SetFileName(path.c_str());
  reader->Update();
  vtkUnstructuredGrid* grid = parallel ? parallel_reader->GetOutput() : serial_reader->GetOutput();
  if (reader->GetErrorCode() != 0 || !grid || grid->GetNumberOfCells() == 0) {
    std::fprintf(stderr, "vtk_cells: cannot read '%s'\n", path.c_str());
    return 1;
  }
  vtkCellData* cell_data = grid->GetCellData();
  vtkDataArray* element = cell_data->GetArray("element");
  std::vector<vtkDataArray*> arrays;
  std::printf("element,x0,y0,z0,x1,y1,z1,x2,y2,z2");
  for (int a = 0; a < cell_data->GetNumberOfArrays(); ++a) {
    vtkDataArray* array = cell_data->GetArray(a);
    if (!array || array == element || array->GetNumberOfComponents() != 1) continue;
    arrays.push_back(array);
    std::printf(",%s", array->GetName());
  }
  std::printf("\n");
  vtkNew<vtkIdList> corners;
  for (vtkIdType c = 0; c < grid->GetNumberOfCells(); ++c) {
    std::printf("%.17g", element ? element->GetTuple1(c) : double(c));
    grid->GetCellPoints(c, corners);
    for (vtkIdType k = 0; k < corners->GetNumberOfIds(); ++k) {
      double p[3];
      grid->GetPoint(corners->GetId(k), p);
      std::printf(",%.17g,%.17g,%.17g", p[0], p[1], p[2]);
    }
    for (vtkDataArray* array : arrays) std::printf(",%.17g", array->GetTuple1(c));
    std::printf("\n");
  }
  return 0;
}
