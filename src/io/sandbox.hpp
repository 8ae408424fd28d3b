#pragma once
#include <chrono>
#include <cstdint>
#include <functional>
#include <string>

namespace fmbem::io::detail {

struct SandboxLimits {
  std::uint64_t extra_address_space = 0;   // bytes the child may map beyond what it inherits
  unsigned cpu_seconds = 0;                // CPU time (RLIMIT_CPU, then SIGXCPU)
  std::chrono::milliseconds wall_time{0};  // the parent kills the child after this
};

struct SandboxOutcome {
  enum class End { exited, signaled, timed_out, setup_failed };
  End end = End::exited;
  int code = 0;        // exit status (exited) or signal number (signaled)
  std::string output;  // everything the child wrote to its output descriptor
};

// Runs `work` in a forked child process and returns what it wrote and how it
// ended; a crash, a hang or a limit hit in `work` never reaches the caller. The
// child first resets the crash signals to their default action (a handler
// inherited from PETSc or MPI must not run there), points stdin and stdout at
// /dev/null, closes every other inherited descriptor (MPI's included), forbids
// core dumps and writing to files, limits its address space and CPU time, and
// installs a seccomp filter (libseccomp) under which execve and execveat fail, so
// that no program can be started from it, and so do the calls that change the
// filesystem (opening for writing, creating, removing, renaming). `work` gets the descriptor to
// write its result to, must not throw, and must not use MPI, OpenMP parallel regions or threads;
// the child ends with _exit, so no atexit handler or static destructor of the parent runs in it.
// Throws fmbem::Error when no child can be started.
SandboxOutcome run_sandboxed(const std::function<void(int output)>& work,
                             const SandboxLimits& limits);

// The address space this process maps now (VmSize), or 0 if unknown.
std::uint64_t mapped_bytes();

}  // namespace fmbem::io::detail
