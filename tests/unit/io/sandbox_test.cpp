// The child process that runs Gmsh's reader (src/io/sandbox.hpp, internal to io).
#include <gtest/gtest.h>

#if FMBEM_HAVE_GMSH
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <new>
#include <string>
#include <vector>

#include "../../../src/io/sandbox.hpp"
#include "scratch_test.hpp"

namespace fmbem::io {
namespace {

using detail::run_sandboxed;
using detail::SandboxLimits;
using End = detail::SandboxOutcome::End;

SandboxLimits generous() {
  SandboxLimits limits;
  limits.extra_address_space = std::uint64_t{1} << 30;
  limits.cpu_seconds = 20;
  limits.wall_time = std::chrono::seconds(60);
  return limits;
}

void say(int output, const std::string& text) {
  if (::write(output, text.data(), text.size()) != static_cast<ssize_t>(text.size())) ::_exit(3);
}

class Sandbox : public ScratchTest {};

TEST_F(Sandbox, ReturnsWhatTheChildWrites) {
  const auto outcome =
      run_sandboxed([](int output) { say(output, std::string(300000, 'x')); }, generous());
  EXPECT_EQ(outcome.end, End::exited);
  EXPECT_EQ(outcome.code, 0);
  EXPECT_EQ(outcome.output, std::string(300000, 'x'));  // more than a pipe buffer holds
}

TEST_F(Sandbox, CannotStartPrograms) {
  const std::string marker = scratch_file("ran");
  const auto outcome = run_sandboxed(
      [&](int output) {
        ::execl("/usr/bin/touch", "touch", marker.c_str(), static_cast<char*>(nullptr));
        say(output, std::strerror(errno));  // reached only if execl failed
      },
      generous());
  EXPECT_EQ(outcome.end, End::exited);
  EXPECT_EQ(outcome.output, std::strerror(EPERM));
  EXPECT_FALSE(std::filesystem::exists(marker));
}

// PETSc installs a SIGSEGV handler that calls MPI_Abort: in the child a crash
// must end the child, not run the parent's handler.
std::string* g_handler_marker = nullptr;
void parent_handler(int) {
  const int fd = ::open(g_handler_marker->c_str(), O_WRONLY | O_CREAT, 0600);
  if (fd >= 0) ::close(fd);
  ::_exit(42);
}

TEST_F(Sandbox, CrashEndsTheChildWithItsSignal) {
  std::string marker = scratch_file("handler_ran");
  g_handler_marker = &marker;
  struct sigaction handler {
  }, previous{};
  handler.sa_handler = parent_handler;
  ::sigaction(SIGSEGV, &handler, &previous);
  const auto outcome = run_sandboxed([](int) { ::raise(SIGSEGV); }, generous());
  ::sigaction(SIGSEGV, &previous, nullptr);
  EXPECT_EQ(outcome.end, End::signaled);
  EXPECT_EQ(outcome.code, SIGSEGV);
  EXPECT_FALSE(std::filesystem::exists(marker));
}

TEST_F(Sandbox, HangIsKilledAtTheWallTimeLimit) {
  SandboxLimits limits = generous();
  limits.wall_time = std::chrono::milliseconds(300);
  const auto start = std::chrono::steady_clock::now();
  const auto outcome = run_sandboxed([](int) { ::pause(); }, limits);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(outcome.end, End::timed_out);
  EXPECT_GE(seconds, 0.3);
  EXPECT_LT(seconds, 10.0);
}

TEST_F(Sandbox, CpuTimeIsLimited) {
  SandboxLimits limits = generous();
  limits.cpu_seconds = 1;
  const auto outcome = run_sandboxed(
      [](int) {
        volatile unsigned long spin = 0;
        for (;;) spin = spin + 1;
      },
      limits);
  EXPECT_EQ(outcome.end, End::signaled);
  EXPECT_EQ(outcome.code, SIGXCPU);
}

#if !defined(__SANITIZE_ADDRESS__)
// (Under AddressSanitizer an allocation beyond the limit ends the child with a
// report, "allocator is out of memory", instead of throwing std::bad_alloc.)
TEST_F(Sandbox, AddressSpaceIsLimited) {
  SandboxLimits limits = generous();
  limits.extra_address_space = std::uint64_t{256} << 20;
  const auto outcome = run_sandboxed(
      [](int output) {
        try {
          std::vector<char> big(std::size_t{1} << 30, 'x');
          say(output, "allocated " + std::to_string(big.size()));
        } catch (const std::bad_alloc&) {
          say(output, "bad_alloc");
        }
      },
      limits);
  EXPECT_EQ(outcome.end, End::exited);
  EXPECT_EQ(outcome.output, "bad_alloc");
}
#endif

// Gmsh's FLTK rewrites its preferences file on gmsh::initialize: in the child no
// file can be created, truncated, written, removed or renamed.
TEST_F(Sandbox, ChangesNoFilesAndInheritsNoDescriptors) {
  const std::string existing = scratch_file("existing");
  const int fd = ::open(existing.c_str(), O_WRONLY | O_CREAT, 0600);  // no O_CLOEXEC
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::write(fd, "keep", 4), 4);
  const std::string created = scratch_file("created");
  const auto outcome = run_sandboxed(
      [&](int output) {
        say(output, ::fcntl(fd, F_GETFD) < 0 && errno == EBADF ? "closed;" : "open;");
        rlimit core{};
        say(output, ::getrlimit(RLIMIT_CORE, &core) == 0 && core.rlim_max == 0 ? "no cores;" : "");
        const auto refused = [&](bool failed) {
          say(output, failed ? std::string(std::strerror(errno)) + ";" : "done;");
        };
        refused(::open(created.c_str(), O_WRONLY | O_CREAT, 0600) < 0);
        refused(::open(existing.c_str(), O_RDONLY | O_TRUNC) < 0);
        refused(::open(existing.c_str(), O_RDWR) < 0);
        refused(::unlink(existing.c_str()) != 0);
        refused(::rename(existing.c_str(), created.c_str()) != 0);
        const int reading = ::open(existing.c_str(), O_RDONLY);
        char text[5] = {};
        say(output, reading >= 0 && ::read(reading, text, 4) == 4 ? text : "unreadable");
      },
      generous());
  ::close(fd);
  const std::string denied = std::string(std::strerror(EACCES)) + ";";
  EXPECT_EQ(outcome.output,
            "closed;no cores;" + denied + denied + denied + denied + denied + "keep");
  EXPECT_FALSE(std::filesystem::exists(created));
  EXPECT_EQ(std::filesystem::file_size(existing), 4u);
}

}  // namespace
}  // namespace fmbem::io
#endif  // FMBEM_HAVE_GMSH
