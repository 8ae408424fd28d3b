#include "fmbem/core/temporary_files.hpp"

#include <signal.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cstring>
#include <utility>

namespace fmbem {
namespace {

constexpr int kSlots = 256;
constexpr std::size_t kPathBytes = 4096;

// A slot is free (0), being written (1), or listed (2); only a listed slot's path is read.
struct Slot {
  std::atomic<int> state{0};
  TemporaryRegistration::Kind kind = TemporaryRegistration::Kind::file;
  char path[kPathBytes] = {};
};
std::array<Slot, kSlots> slots;

const char *program_name = "fmbem";

void write_text(const char *text) {
  const std::size_t length = std::strlen(text);
  std::size_t done = 0;
  while (done < length) {
    const ssize_t n = ::write(STDERR_FILENO, text + done, length - done);
    if (n <= 0) return;
    done += std::size_t(n);
  }
}

extern "C" void on_termination(int signal_number) {
  remove_registered_temporaries();
  if (signal_number != SIGPIPE) {
    // Only async-signal-safe calls: the signal's name from a fixed table, no formatting.
    const char *name = signal_number == SIGINT    ? "SIGINT"
                       : signal_number == SIGTERM ? "SIGTERM"
                       : signal_number == SIGHUP  ? "SIGHUP"
                       : signal_number == SIGQUIT ? "SIGQUIT"
                       : signal_number == SIGUSR1 ? "SIGUSR1"
                                                  : "SIGUSR2";
    write_text("\n");
    write_text(program_name);
    write_text(": stopped by ");
    write_text(name);
    write_text("; its temporary files were removed, no output was left half-written\n");
  }
  ::_exit(128 + signal_number);
}

}  // namespace

TemporaryRegistration::TemporaryRegistration(const std::string &path, Kind kind) {
  if (path.size() >= kPathBytes) return;
  for (int s = 0; s < kSlots; ++s) {
    int expected = 0;
    if (!slots[std::size_t(s)].state.compare_exchange_strong(expected, 1)) continue;
    Slot &slot = slots[std::size_t(s)];
    slot.kind = kind;
    std::memcpy(slot.path, path.c_str(), path.size() + 1);
    slot.state.store(2);
    slot_ = s;
    return;
  }
}

TemporaryRegistration::~TemporaryRegistration() {
  if (slot_ >= 0) slots[std::size_t(slot_)].state.store(0);
}

TemporaryRegistration::TemporaryRegistration(TemporaryRegistration &&other) noexcept
    : slot_(std::exchange(other.slot_, -1)) {}

TemporaryRegistration &TemporaryRegistration::operator=(TemporaryRegistration &&other) noexcept {
  if (this != &other) {
    if (slot_ >= 0) slots[std::size_t(slot_)].state.store(0);
    slot_ = std::exchange(other.slot_, -1);
  }
  return *this;
}

void remove_registered_temporaries() noexcept {
  using Kind = TemporaryRegistration::Kind;
  for (const Kind kind : {Kind::file, Kind::folder})
    for (Slot &slot : slots)
      if (slot.state.load() == 2 && slot.kind == kind)
        kind == TemporaryRegistration::Kind::file ? ::unlink(slot.path) : ::rmdir(slot.path);
}

void install_termination_handlers(const char *program) {
  program_name = program;
  struct sigaction action {};
  action.sa_handler = on_termination;
  sigemptyset(&action.sa_mask);
  // Block the others while one runs: a second Ctrl-C must not cut the clean-up short.
  for (const int s : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGPIPE})
    sigaddset(&action.sa_mask, s);
  for (const int s : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGPIPE})
    ::sigaction(s, &action, nullptr);
  struct sigaction ignore {};
  ignore.sa_handler = SIG_IGN;
  sigemptyset(&ignore.sa_mask);
  ::sigaction(SIGXFSZ, &ignore, nullptr);
}

}  // namespace fmbem
