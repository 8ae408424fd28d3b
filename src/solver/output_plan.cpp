#include "fmbem/solver/output_plan.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <map>
#include <system_error>
#include <unordered_map>

#include "fmbem/core/error.hpp"
#include "fmbem/solver/sweep.hpp"

namespace fmbem {
namespace {
namespace fs = std::filesystem;

// What a path resolves to: an existing file by its device and inode (hard links, symbolic
// links and every spelling alike), a file still to be made by its folder's canonical path and
// its name. Folders are resolved once each (a sweep's files share a few).
class Identities {
 public:
  std::string of(const std::string &path) {
    struct stat info {};
    if (::stat(path.c_str(), &info) == 0)
      return "inode " + std::to_string(info.st_dev) + ":" + std::to_string(info.st_ino);
    const fs::path p(path);
    const std::string folder = p.has_parent_path() ? p.parent_path().string() : ".";
    auto [at, added] = folders_.try_emplace(folder);
    if (added) {
      std::error_code ec;
      fs::path canonical = fs::weakly_canonical(fs::absolute(folder, ec), ec);
      at->second = ec ? folder : canonical.string();
    }
    return "path " + at->second + "/" + p.filename().string();
  }

 private:
  std::unordered_map<std::string, std::string> folders_;
};

std::string k_label(std::size_t index, std::size_t count) {
  return count > 1 ? " (its file for sweep point " + std::to_string(index + 1) + ")"
                   : std::string();
}

}  // namespace

void OutputPlan::add_input(std::string option, std::string path, std::string what) {
  if (!path.empty()) inputs_.push_back({std::move(option), std::move(path), std::move(what)});
}

void OutputPlan::add_output(std::string option, std::string path, std::size_t count) {
  if (!path.empty()) outputs_.push_back({std::move(option), std::move(path), count, true});
}

void OutputPlan::add_single_output(std::string option, std::string path) {
  if (!path.empty()) outputs_.push_back({std::move(option), std::move(path), 1, false});
}

void OutputPlan::check() const {
  Identities identities;
  std::unordered_map<std::string, const Input *> inputs;
  for (const Input &in : inputs_) {
    struct stat info {};
    if (::stat(in.path.c_str(), &info) == 0) inputs.emplace(identities.of(in.path), &in);
  }
  struct Written {
    const Output *output;
    std::size_t index;
    std::string path;
  };
  std::unordered_map<std::string, Written> written;
  std::map<std::string, std::string> folders;  // folder -> the first output in it
  for (const Output &out : outputs_) {
    const std::size_t count = out.numbered ? out.count : 1;
    for (std::size_t i = 0; i < count; ++i) {
      const std::string path = out.numbered ? sweep_output_path(out.path, i, count) : out.path;
      const std::string id = identities.of(path);
      const std::string named = out.option + " '" + path + "'" + k_label(i, count);
      struct stat info {};
      if (::stat(path.c_str(), &info) == 0 && !S_ISREG(info.st_mode))
        throw Error(named + ": exists and is not a regular file");
      if (const auto in = inputs.find(id); in != inputs.end())
        throw Error(named + " is the " + in->second->what + " (" + in->second->option + " '" +
                    in->second->path + "'); it would overwrite it");
      const auto [at, added] = written.try_emplace(id, Written{&out, i, path});
      if (!added) {
        const Written &first = at->second;
        const std::size_t first_count = first.output->numbered ? first.output->count : 1;
        throw Error(first.output->option + k_label(first.index, first_count) + " and " +
                    out.option + k_label(i, count) + " name the same file '" + path + "'" +
                    (first.path != path ? " (also spelled '" + first.path + "')" : ""));
      }
      const fs::path p(path);
      folders.try_emplace(p.has_parent_path() ? p.parent_path().string() : ".", named);
    }
  }
  // Each folder once: it exists and a file can be made in it (a probe, removed at once).
  for (const auto &[folder, first] : folders) {
    std::error_code ec;
    if (!fs::is_directory(folder, ec))
      throw Error(first + ": folder '" + folder + "' does not exist");
    std::string probe = (fs::path(folder) / ".fmbem-probe.XXXXXX").string();
    const int fd = ::mkstemp(probe.data());
    if (fd < 0) throw Error(first + ": cannot write in '" + folder + "': " + std::strerror(errno));
    ::close(fd);
    ::unlink(probe.c_str());
  }
}

}  // namespace fmbem
