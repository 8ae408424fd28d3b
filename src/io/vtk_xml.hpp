#pragma once
#include <string>

class vtkXMLWriter;

namespace fmbem::io::detail {

// Throws fmbem::Error with the OS reason when `path` cannot be opened for writing: a clear
// message for the common failures before VTK tries (VTK's own is a multi-line console report).
void check_writable(const std::string& path);

// Writes the writer's input (set by the caller) to `path` as every fmbem VTK file is written:
// appended raw binary, zlib, 64-bit headers; VTK's error messages are caught, not printed, and
// the first becomes an fmbem::Error naming `path`.
void write_vtk_xml(vtkXMLWriter* writer, const std::string& path);

}  // namespace fmbem::io::detail
