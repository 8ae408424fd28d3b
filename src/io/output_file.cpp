#include "fmbem/io/output_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>
#include <vector>

#include "fmbem/core/error.hpp"

namespace fmbem::io {
namespace fs = std::filesystem;

OutputFile::OutputFile(std::string path, std::string option)
    : path_(std::move(path)), option_(std::move(option)) {
  const std::string what = option_ + " '" + path_ + "'";
  std::error_code ec;
  const fs::file_status status = fs::status(path_, ec);
  if (fs::exists(status) && !fs::is_regular_file(status))
    throw Error(what + ": exists and is not a regular file");
  const fs::path target(path_);
  if (target.filename().empty()) throw Error(what + ": names a folder, not a file");
  const fs::path folder = target.has_parent_path() ? target.parent_path() : fs::path(".");
  if (!fs::is_directory(folder, ec))
    throw Error(what + ": folder '" + folder.string() + "' does not exist");

  // A hidden name beside the target, so that the rename stays on one file
  // system.
  std::string pattern = (folder / ("." + target.filename().string() + ".XXXXXX")).string();
  std::vector<char> name(pattern.begin(), pattern.end());
  name.push_back('\0');
  const int fd = ::mkstemp(name.data());
  if (fd < 0)
    throw Error(what + ": cannot write in '" + folder.string() + "': " + std::strerror(errno));
  // mkstemp makes the file private (0600); the result gets the usual 0666 &
  // ~umask.
  const mode_t mask = ::umask(0);
  ::umask(mask);
  ::fchmod(fd, 0666 & ~mask);
  ::close(fd);
  temporary_ = name.data();
  registration_ = TemporaryRegistration(temporary_, TemporaryRegistration::Kind::file);
}

OutputFile::~OutputFile() {
  if (!committed_) ::unlink(temporary_.c_str());
}

void OutputFile::write(const std::function<void(const std::string&)>& writer) {
  fill(writer);
  commit();
}

void OutputFile::fill(const std::function<void(const std::string&)>& writer) {
  try {
    writer(temporary_);
  } catch (const Error& e) {
    // The writer names the file it was given: name the user's instead.
    std::string message = e.what();
    for (std::size_t at = message.find(temporary_); at != std::string::npos;
         at = message.find(temporary_, at + path_.size()))
      message.replace(at, temporary_.size(), path_);
    throw Error(message);
  }
  filled_ = true;
}

void OutputFile::commit() {
  if (!filled_ || committed_)
    throw Error(option_ + " '" + path_ + "': " + (committed_ ? "written twice" : "never filled"));
  if (::rename(temporary_.c_str(), path_.c_str()) != 0)
    throw Error(option_ + " '" + path_ + "': cannot replace it: " + std::strerror(errno));
  committed_ = true;
  registration_ = TemporaryRegistration();
}

bool same_file(const std::string& a, const std::string& b) {
  std::error_code ec;
  if (fs::equivalent(a, b, ec) && !ec) return true;
  const fs::path ca = fs::weakly_canonical(fs::absolute(a, ec), ec);
  const fs::path cb = fs::weakly_canonical(fs::absolute(b, ec), ec);
  return ca == cb;
}

}  // namespace fmbem::io
