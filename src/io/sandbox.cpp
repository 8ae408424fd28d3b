#include "sandbox.hpp"

#include <fcntl.h>
#include <poll.h>
#include <seccomp.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <utility>

#include "fmbem/core/error.hpp"

namespace fmbem::io::detail {
namespace {

constexpr int kSetupFailed = 125;  // exit status of a child that could not sandbox itself

void write_text(int fd, const char* text) {
  for (std::size_t left = std::strlen(text); left > 0;) {
    const ssize_t written = ::write(fd, text, left);
    if (written < 0 && errno == EINTR) continue;
    if (written <= 0) return;
    text += written;
    left -= static_cast<std::size_t>(written);
  }
}

[[noreturn]] void setup_failed(int output, const char* step, int error) {
  char text[256];
  std::snprintf(text, sizeof text, "%s: %s", step, std::strerror(error));
  write_text(output, text);
  ::_exit(kSetupFailed);
}

bool limit(int resource, rlim_t value) {
  const rlimit bound{value, value};
  return ::setrlimit(resource, &bound) == 0;
}

// The seccomp filter: the child may read files and write to its pipe, but may not
// start a program (execve, execveat: EPERM) or change the filesystem (open for
// writing, create, remove, rename, link, chmod, chown: EACCES). Gmsh itself tries
// the latter: its FLTK preferences file is rewritten by gmsh::initialize (as root,
// /etc/fltk/fltk.org/fltk.prefs). Syscalls of another ABI (i386, x32) kill the
// process, libseccomp's default for a foreign architecture. Returns 0 or an errno.
int install_filter() {
  scmp_filter_ctx filter = ::seccomp_init(SCMP_ACT_ALLOW);
  if (filter == nullptr) return ENOMEM;
  int error = 0;
  const auto deny = [&](const char* name, std::uint32_t action, unsigned count = 0,
                        scmp_arg_cmp condition = {}) {
    const int number = ::seccomp_syscall_resolve_name(name);
    if (error == 0 && number != __NR_SCMP_ERROR)  // not every architecture has every call
      error = count ? ::seccomp_rule_add(filter, action, number, 1, condition)
                    : ::seccomp_rule_add(filter, action, number, 0);
  };
  deny("execve", SCMP_ACT_ERRNO(EPERM));
  deny("execveat", SCMP_ACT_ERRNO(EPERM));
  const std::uint32_t refuse = SCMP_ACT_ERRNO(EACCES);
  for (const auto& [name, flags_arg] : {std::pair{"open", 1u}, std::pair{"openat", 2u}}) {
    deny(name, refuse, 1, SCMP_CMP(flags_arg, SCMP_CMP_MASKED_EQ, O_ACCMODE, O_WRONLY));
    deny(name, refuse, 1, SCMP_CMP(flags_arg, SCMP_CMP_MASKED_EQ, O_ACCMODE, O_RDWR));
    deny(name, refuse, 1, SCMP_CMP(flags_arg, SCMP_CMP_MASKED_EQ, O_CREAT, O_CREAT));
    deny(name, refuse, 1, SCMP_CMP(flags_arg, SCMP_CMP_MASKED_EQ, O_TRUNC, O_TRUNC));
  }
  deny("openat2", SCMP_ACT_ERRNO(ENOSYS));  // its flags are out of the filter's reach
  for (const char* name :
       {"creat", "truncate", "unlink", "unlinkat", "rename", "renameat", "renameat2",
        "mkdir", "mkdirat",  "rmdir",  "link",     "linkat", "symlink",  "symlinkat",
        "mknod", "mknodat",  "chmod",  "fchmodat", "chown",  "lchown",   "fchownat"})
    deny(name, refuse);
  if (error == 0) error = ::seccomp_load(filter);
  ::seccomp_release(filter);
  return -error;
}

// The child's set-up; returns the descriptor `work` writes to.
int enter_sandbox(int output, std::uint64_t inherited, const SandboxLimits& limits) {
  // Default actions for every signal: a crash must end this process, not run a
  // handler inherited from the parent (PETSc's would call MPI_Abort).
  struct sigaction default_action {};
  default_action.sa_handler = SIG_DFL;
  sigemptyset(&default_action.sa_mask);
  for (int signal = 1; signal < NSIG; ++signal) ::sigaction(signal, &default_action, nullptr);
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);

  // Only stdin/stdout (/dev/null), stderr and the output stay open.
  const int kept = ::fcntl(output, F_DUPFD, 3);
  if (kept < 0) setup_failed(output, "dup", errno);
  const int null = ::open("/dev/null", O_RDWR);
  if (null < 0 || ::dup2(null, STDIN_FILENO) < 0 || ::dup2(null, STDOUT_FILENO) < 0)
    setup_failed(kept, "/dev/null", errno);
  if (kept > 3) ::close_range(3, static_cast<unsigned>(kept) - 1, 0);
  ::close_range(static_cast<unsigned>(kept) + 1, ~0u, 0);

  if (!limit(RLIMIT_CORE, 0)) setup_failed(kept, "RLIMIT_CORE", errno);
  if (!limit(RLIMIT_FSIZE, 0)) setup_failed(kept, "RLIMIT_FSIZE", errno);
  if (limits.cpu_seconds > 0) {
    const rlimit cpu{limits.cpu_seconds, limits.cpu_seconds + 1};
    if (::setrlimit(RLIMIT_CPU, &cpu) != 0) setup_failed(kept, "RLIMIT_CPU", errno);
  }
  if (inherited > 0 && limits.extra_address_space > 0 &&
      !limit(RLIMIT_AS, inherited + limits.extra_address_space))
    setup_failed(kept, "RLIMIT_AS", errno);

  if (const int error = install_filter(); error != 0) setup_failed(kept, "seccomp", error);
  return kept;
}

}  // namespace

std::uint64_t mapped_bytes() {
  std::ifstream statm("/proc/self/statm");
  std::uint64_t pages = 0;
  if (!(statm >> pages)) return 0;
  const long page = ::sysconf(_SC_PAGESIZE);
  return page > 0 ? pages * static_cast<std::uint64_t>(page) : 0;
}

SandboxOutcome run_sandboxed(const std::function<void(int output)>& work,
                             const SandboxLimits& limits) {
  int pipe_ends[2];
  if (::pipe2(pipe_ends, O_CLOEXEC) != 0)
    throw Error(std::string("cannot create a pipe for the mesh reader: ") + std::strerror(errno));
  const std::uint64_t inherited = mapped_bytes();
  // Buffered output would otherwise be written twice if the child flushed it.
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);
  const pid_t child = ::fork();
  if (child < 0) {
    const int error = errno;
    ::close(pipe_ends[0]);
    ::close(pipe_ends[1]);
    throw Error(std::string("cannot start a process for the mesh reader: ") + std::strerror(error));
  }
  if (child == 0) {
    const int output = enter_sandbox(pipe_ends[1], inherited, limits);
    work(output);
    ::_exit(0);
  }
  ::close(pipe_ends[1]);

  SandboxOutcome outcome;
  using Clock = std::chrono::steady_clock;
  const auto deadline = Clock::now() + limits.wall_time;
  char buffer[1 << 16];
  bool timed_out = false;
  for (;;) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    pollfd ready{pipe_ends[0], POLLIN, 0};
    const int polled =
        left > 0 ? ::poll(&ready, 1, static_cast<int>(std::min<long long>(left, 1 << 30))) : 0;
    if (polled < 0 && errno == EINTR) continue;
    if (polled == 0) {
      timed_out = true;
      break;
    }
    const ssize_t got = polled < 0 ? -1 : ::read(pipe_ends[0], buffer, sizeof buffer);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;  // end of output (or a broken pipe: the status tells)
    outcome.output.append(buffer, static_cast<std::size_t>(got));
  }
  ::close(pipe_ends[0]);
  if (timed_out) ::kill(child, SIGKILL);
  int status = 0;
  pid_t waited;
  while ((waited = ::waitpid(child, &status, 0)) < 0 && errno == EINTR) {
  }
  if (timed_out) {
    outcome.end = SandboxOutcome::End::timed_out;
  } else if (waited < 0) {
    outcome.end = SandboxOutcome::End::exited;  // reaped elsewhere (SIGCHLD ignored)
  } else if (WIFSIGNALED(status)) {
    outcome.end = SandboxOutcome::End::signaled;
    outcome.code = WTERMSIG(status);
  } else {
    outcome.code = WEXITSTATUS(status);
    outcome.end = outcome.code == kSetupFailed ? SandboxOutcome::End::setup_failed
                                               : SandboxOutcome::End::exited;
  }
  return outcome;
}

}  // namespace fmbem::io::detail
