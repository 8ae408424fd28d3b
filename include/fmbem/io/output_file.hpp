#pragma once
#include <functional>
#include <string>

#include "fmbem/core/temporary_files.hpp"

namespace fmbem::io {

// An output file that is never left half-written: a temporary file beside
// the target is created at once (so an unwritable path fails before any
// work is done), write() fills it and renames it over the
// target. Destroyed without a write (a failed solve or write), it removes the
// temporary, so the target is either untouched or complete.
class OutputFile {
 public:
  // `option` names the file in messages ("-o"). Throws fmbem::Error when
  // the target exists and is not a regular file, or its folder is missing
  // or not writable.
  OutputFile(std::string path, std::string option);
  ~OutputFile();
  OutputFile(const OutputFile &) = delete;
  OutputFile &operator=(const OutputFile &) = delete;

  const std::string &path() const { return path_; }
  // Calls writer(temporary path), then renames the temporary over the
  // target. Throws fmbem::Error (naming the target, not the temporary) when
  // either fails; the target is then untouched.
  void write(const std::function<void(const std::string &)> &writer);
  // write() in two steps, for a set of files that must all be written before any replaces its
  // target (the pieces of a parallel file, one per MPI rank): fill() calls writer(temporary
  // path), commit() renames the temporary over the target. Each throws as write() does.
  void fill(const std::function<void(const std::string &)> &writer);
  void commit();

 private:
  std::string path_, option_, temporary_;
  TemporaryRegistration registration_;  // removed by a signal too
  bool filled_ = false, committed_ = false;
};

// True when the two paths name the same file (also through links or
// different spellings), or would once created.
bool same_file(const std::string &a, const std::string &b);

}  // namespace fmbem::io
