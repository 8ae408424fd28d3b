#pragma once
#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

#include "fmbem/core/temporary_files.hpp"

namespace fmbem::io::detail {

// A private copy of a mesh input, made before anything parses it: the input (a
// regular file, a pipe, a FIFO, /dev/stdin, a process substitution such as
// <(cat f.msh)) is opened once and read in full into "mesh.msh" in a fresh
// directory that only this process can enter (mkdtemp, mode 0700, under TMPDIR or
// /tmp). What is checked is then exactly what Gmsh reads; the .msh extension makes
// Gmsh choose its mesh reader (never the .geo script parser) and no "<name>.opt"
// sibling exists for it to merge. The directory and everything in it are removed
// by the destructor.
class PrivateMeshCopy {
 public:
  // Throws fmbem::Error naming `path`: missing or unreadable; a directory, device or
  // socket; a stream that sends nothing for `stream_timeout` (a FIFO without a
  // writer); empty; larger than `max_bytes`; not starting with "$MeshFormat" (found
  // as soon as the first bytes arrive, so that an endless stream is not copied).
  PrivateMeshCopy(const std::string& path, std::chrono::milliseconds stream_timeout,
                  std::uint64_t max_bytes);
  ~PrivateMeshCopy();
  PrivateMeshCopy(const PrivateMeshCopy&) = delete;
  PrivateMeshCopy& operator=(const PrivateMeshCopy&) = delete;

  const std::string& directory() const { return directory_; }
  const std::string& file() const { return file_; }  // directory() + "/mesh.msh"
  std::string_view content() const { return {data_, size_}; }

 private:
  void copy_from(int input, bool is_stream, const std::string& path,
                 std::chrono::milliseconds stream_timeout, std::uint64_t max_bytes);
  std::string directory_, file_;
  // Listed for the signal handlers, the file before its folder.
  TemporaryRegistration directory_registration_, file_registration_;
  const char* data_ = nullptr;  // the copy, mapped read-only
  std::size_t size_ = 0;
};

}  // namespace fmbem::io::detail
