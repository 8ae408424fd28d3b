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

// " (its file for sweep point 3, source 2)", naming what the run has several of.
std::string point_label(const OutputIndex &at) {
  std::string what;
  if (at.k_count > 1) what = "sweep point " + std::to_string(at.k + 1);
  if (at.source_count > 1)
    what += (what.empty() ? "" : ", ") + std::string("source ") + std::to_string(at.source + 1);
  return what.empty() ? what : " (its file for " + what + ")";
}

}  // namespace

void OutputPlan::add_input(std::string option, std::string path, std::string what) {
  if (!path.empty()) inputs_.push_back({std::move(option), std::move(path), std::move(what)});
}

void OutputPlan::add_output(std::string option, std::string path, std::size_t k_count,
                            std::size_t source_count) {
  if (!path.empty())
    outputs_.push_back({std::move(option), std::move(path), k_count, source_count, true});
}

void OutputPlan::add_single_output(std::string option, std::string path) {
  if (!path.empty()) outputs_.push_back({std::move(option), std::move(path), 1, 1, false});
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
    OutputIndex at;
    std::string path;
  };
  std::unordered_map<std::string, Written> written;
  std::map<std::string, std::string> folders;  // folder -> the first output in it
  for (const Output &out : outputs_) {
    const std::size_t k_count = out.numbered ? out.k_count : 1,
                      source_count = out.numbered ? out.source_count : 1;
    for (std::size_t i = 0; i < k_count * source_count; ++i) {
      const OutputIndex at{i / source_count, k_count, i % source_count, source_count};
      const std::string path = sweep_output_path(out.path, at);
      const std::string id = identities.of(path);
      const std::string named = out.option + " '" + path + "'" + point_label(at);
      struct stat info {};
      if (::stat(path.c_str(), &info) == 0 && !S_ISREG(info.st_mode))
        throw Error(named + ": exists and is not a regular file");
      if (const auto in = inputs.find(id); in != inputs.end())
        throw Error(named + " is the " + in->second->what + " (" + in->second->option + " '" +
                    in->second->path + "'); it would overwrite it");
      const auto [found, added] = written.try_emplace(id, Written{&out, at, path});
      if (!added) {
        const Written &first = found->second;
        throw Error(first.output->option + point_label(first.at) + " and " + out.option +
                    point_label(at) + " name the same file '" + path + "'" +
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
