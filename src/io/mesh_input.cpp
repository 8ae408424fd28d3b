#include "mesh_input.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <vector>

#include "fmbem/core/error.hpp"

namespace fmbem::io::detail {
namespace {

constexpr std::string_view kMeshFormat = "$MeshFormat";

[[noreturn]] void cannot_read(const std::string& path, const std::string& why) {
  throw Error("cannot read mesh file '" + path + "': " + why);
}

std::string system_error_text(int error) { return std::strerror(error); }

// "30 s", "0.25 s"
std::string seconds(std::chrono::milliseconds time) {
  char text[32];
  std::snprintf(text, sizeof text, "%g s", static_cast<double>(time.count()) / 1000.0);
  return text;
}

// "2 GiB", "512 MiB", "1000 bytes"
std::string byte_size(std::uint64_t bytes) {
  if (bytes >= (1ull << 30) && bytes % (1ull << 30) == 0)
    return std::to_string(bytes >> 30) + " GiB";
  if (bytes >= (1ull << 20) && bytes % (1ull << 20) == 0)
    return std::to_string(bytes >> 20) + " MiB";
  return std::to_string(bytes) + " bytes";
}

// Only regular files and streams (pipes, FIFOs) hold a mesh; opening a device
// could block or have side effects, reading a directory fails obscurely.
void check_kind(const std::string& path, mode_t mode) {
  if (S_ISREG(mode) || S_ISFIFO(mode)) return;
  if (S_ISDIR(mode)) cannot_read(path, "it is a directory");
  if (S_ISCHR(mode) || S_ISBLK(mode))
    cannot_read(path, "it is a device (a terminal?), not a file or a pipe");
  cannot_read(path, "it is neither a file nor a pipe");
}

class FileDescriptor {
 public:
  explicit FileDescriptor(int fd) : fd_(fd) {}
  ~FileDescriptor() { close(); }
  // close(2)'s result: a delayed write error (a full disk) shows here.
  int close() {
    const int result = fd_ >= 0 ? ::close(fd_) : 0;
    fd_ = -1;
    return result;
  }
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

void write_all(int fd, const char* data, std::size_t size, const std::string& path,
               const std::string& copy) {
  while (size > 0) {
    const ssize_t written = ::write(fd, data, size);
    if (written < 0 && errno == EINTR) continue;
    if (written < 0)
      cannot_read(path, "copying it to '" + copy + "' failed: " + system_error_text(errno));
    data += written;
    size -= static_cast<std::size_t>(written);
  }
}

}  // namespace

PrivateMeshCopy::PrivateMeshCopy(const std::string& path, std::chrono::milliseconds stream_timeout,
                                 std::uint64_t max_bytes) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0)
    cannot_read(path, errno == ENOENT ? "no such file" : system_error_text(errno));
  check_kind(path, info.st_mode);
  // O_NONBLOCK: opening a FIFO must not wait for a writer (poll waits, with a timeout).
  const FileDescriptor input(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK));
  if (input.get() < 0) cannot_read(path, system_error_text(errno));
  if (::fstat(input.get(), &info) != 0) cannot_read(path, system_error_text(errno));
  check_kind(path, info.st_mode);  // what was opened, which may differ from what stat saw
  const bool stream = S_ISFIFO(info.st_mode);
  if (!stream && static_cast<std::uint64_t>(info.st_size) > max_bytes)
    throw Error("mesh file '" + path + "' is larger than " + byte_size(max_bytes) +
                ", the most fmbem reads");
  const int flags = ::fcntl(input.get(), F_GETFL);
  if (flags < 0 || ::fcntl(input.get(), F_SETFL, flags & ~O_NONBLOCK) != 0)
    cannot_read(path, system_error_text(errno));

  std::error_code error;
  std::filesystem::path base = std::filesystem::temp_directory_path(error);
  if (error) base = "/tmp";
  // A relative TMPDIR names a folder from here; Gmsh reads the copy by its whole path.
  base = std::filesystem::absolute(base, error);
  if (error) base = "/tmp";
  std::string name = (base / "fmbem-mesh-XXXXXX").string();
  if (::mkdtemp(name.data()) == nullptr)
    cannot_read(path, "cannot create a private temporary directory in '" + base.string() +
                          "': " + system_error_text(errno));
  directory_ = name;
  file_ = directory_ + "/mesh.msh";
  directory_registration_ = TemporaryRegistration(directory_, TemporaryRegistration::Kind::folder);
  file_registration_ = TemporaryRegistration(file_, TemporaryRegistration::Kind::file);
  try {
    copy_from(input.get(), stream, path, stream_timeout, max_bytes);
  } catch (...) {
    std::filesystem::remove_all(directory_, error);
    throw;
  }
}

PrivateMeshCopy::~PrivateMeshCopy() {
  if (data_ != nullptr) ::munmap(const_cast<char*>(data_), size_);
  std::error_code ignored;
  std::filesystem::remove_all(directory_, ignored);
}

void PrivateMeshCopy::copy_from(int input, bool is_stream, const std::string& path,
                                std::chrono::milliseconds stream_timeout, std::uint64_t max_bytes) {
  {
    FileDescriptor output(
        ::open(file_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600));
    if (output.get() < 0)
      cannot_read(path, "cannot create '" + file_ + "': " + system_error_text(errno));
    std::vector<char> buffer(std::size_t{1} << 20);
    std::string head;  // the first bytes, to refuse anything but a mesh at once
    std::uint64_t total = 0;
    using Clock = std::chrono::steady_clock;
    auto deadline = Clock::now() + stream_timeout;
    for (;;) {
      if (is_stream) {
        const auto left =
            std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
        pollfd poll_input{input, POLLIN, 0};
        const int ready = left.count() > 0
                              ? ::poll(&poll_input, 1,
                                       static_cast<int>(std::min<std::chrono::milliseconds::rep>(
                                           left.count(), 1 << 30)))
                              : 0;
        if (ready < 0 && errno == EINTR) continue;
        if (ready < 0) cannot_read(path, system_error_text(errno));
        if (ready == 0)
          cannot_read(path, total == 0 ? "nothing arrived within " + seconds(stream_timeout) +
                                             " (a pipe or FIFO that nothing writes to?)"
                                       : "the stream stalled for " + seconds(stream_timeout) +
                                             " after " + std::to_string(total) + " bytes");
      }
      const ssize_t got = ::read(input, buffer.data(), buffer.size());
      if (got < 0 && (errno == EINTR || errno == EAGAIN)) continue;
      if (got < 0) cannot_read(path, system_error_text(errno));
      if (got == 0) break;
      total += static_cast<std::uint64_t>(got);
      if (total > max_bytes)
        throw Error("mesh file '" + path + "' is larger than " + byte_size(max_bytes) +
                    ", the most fmbem reads");
      if (head.size() < kMeshFormat.size()) {
        head.append(buffer.data(),
                    std::min(static_cast<std::size_t>(got), kMeshFormat.size() - head.size()));
        if (head.size() == kMeshFormat.size() && head != kMeshFormat)
          throw Error("mesh file '" + path +
                      "' is not a Gmsh .msh file (it does not start with $MeshFormat)");
      }
      write_all(output.get(), buffer.data(), static_cast<std::size_t>(got), path, file_);
      deadline = Clock::now() + stream_timeout;
    }
    if (total == 0) throw Error("mesh file '" + path + "' is empty");
    if (head != kMeshFormat)
      throw Error("mesh file '" + path +
                  "' is not a Gmsh .msh file (it does not start with $MeshFormat)");
    if (output.close() != 0)
      cannot_read(path, "copying it to '" + file_ + "' failed: " + system_error_text(errno));
    size_ = static_cast<std::size_t>(total);
  }
  const FileDescriptor copy(::open(file_.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
  void* mapped =
      copy.get() < 0 ? MAP_FAILED : ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, copy.get(), 0);
  if (mapped == MAP_FAILED)
    cannot_read(path, "cannot map its copy '" + file_ + "': " + system_error_text(errno));
  data_ = static_cast<const char*>(mapped);
}

}  // namespace fmbem::io::detail
