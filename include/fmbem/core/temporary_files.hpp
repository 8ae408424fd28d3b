#pragma once
#include <string>

namespace fmbem {

// The files and folders a run makes for itself (the outputs' hidden temporaries, the mesh's
// private copy), listed where a signal handler can reach them: an interrupted run (Ctrl-C,
// SIGTERM from a batch system, a closed pipe) removes them instead of leaving them in the
// output folders and TMPDIR. A registration lasts as long as this object; moving it moves it.
class TemporaryRegistration {
 public:
  enum class Kind { file, folder };
  TemporaryRegistration() = default;
  // A path longer than the registry's slots, or a full registry (256 at once), is simply not
  // listed: the object's own clean-up still removes it, a signal then may not.
  TemporaryRegistration(const std::string &path, Kind kind);
  ~TemporaryRegistration();
  TemporaryRegistration(TemporaryRegistration &&other) noexcept;
  TemporaryRegistration &operator=(TemporaryRegistration &&other) noexcept;
  TemporaryRegistration(const TemporaryRegistration &) = delete;
  TemporaryRegistration &operator=(const TemporaryRegistration &) = delete;

 private:
  int slot_ = -1;
};

// Removes every listed file, then every listed folder (rmdir: their files are listed before
// them). Async-signal-safe (unlink and rmdir on fixed buffers): for signal handlers.
void remove_registered_temporaries() noexcept;

// Installs handlers that remove the registered temporaries and end the process with one line on
// stderr and the exit status 128 + the signal (the shell's convention), for the signals that
// end a run from outside: SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2 and SIGPIPE (a
// reader that went away, as in `bem_solve | head`: quietly). SIGXFSZ (a file-size limit) is
// ignored, so that the write that passes the limit fails with EFBIG and the writer reports it
// instead of the process dying with a partial file. `program` prefixes the line; its string
// must outlive the process.
void install_termination_handlers(const char *program);

}  // namespace fmbem
