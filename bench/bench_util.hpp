#pragma once
// Small helpers the benchmark programs share: wall-clock timing, peak memory, comma-separated
// lists and the walk over "-key value" command-line arguments.
#include <sys/resource.h>

#include <chrono>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace fmbem::bench {

using Clock = std::chrono::steady_clock;

// This process's peak resident memory so far, GiB (getrusage's KiB).
inline double peak_rss_gb() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss / (1024.0 * 1024.0);
}

inline double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

inline std::vector<int> int_list(const std::string& text) {
  std::vector<int> out;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');) out.push_back(std::stoi(item));
  return out;
}

// The arguments after the program name, one key at a time:
//   for (Arguments args(argc, argv); args.next();)
//     if (args.key() == "-L") levels = int_list(args.value()); else ...
// value() takes the next argument as the key's value (an error when there is none).
class Arguments {
 public:
  Arguments(int argc, char** argv) : argc_(argc), argv_(argv) {}
  bool next() {
    if (++at_ >= argc_) return false;
    key_ = argv_[at_];
    return true;
  }
  const std::string& key() const { return key_; }
  std::string value() {
    if (at_ + 1 >= argc_) throw std::runtime_error("missing value after " + key_);
    return argv_[++at_];
  }

 private:
  int argc_;
  char** argv_;
  int at_ = 0;
  std::string key_;
};

}  // namespace fmbem::bench
