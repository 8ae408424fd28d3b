#pragma once
// The fuzz drivers' command line: [--cases N] [--seed S] [--case K] [--work DIR] [--verbose 1].
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>

namespace fmbem::fuzz {

struct FuzzOptions {
  long long cases = 0, only = -1;  // only >= 0: that one case alone
  std::uint64_t seed = 1;
  bool verbose = false;
  std::filesystem::path work;
};

// Defaults `cases` and `work`; prints the usage and gives nothing on a bad command line.
// A message fit for one line of stderr: not empty, no control characters.
inline bool one_clear_line(const std::string& message) {
  if (message.empty()) return false;
  for (char c : message)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) return false;
  return true;
}

inline std::optional<FuzzOptions> parse_fuzz_options(int argc, char** argv, const char* program,
                                                     long long cases, std::filesystem::path work) {
  FuzzOptions o;
  o.cases = cases;
  o.work = std::move(work);
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string option = argv[i], value = argv[i + 1];
    if (option == "--cases")
      o.cases = std::atoll(value.c_str());
    else if (option == "--seed")
      o.seed = std::strtoull(value.c_str(), nullptr, 10);
    else if (option == "--case")
      o.only = std::atoll(value.c_str());
    else if (option == "--work")
      o.work = value;
    else if (option == "--verbose")
      o.verbose = value != "0";
    else {
      std::fprintf(stderr,
                   "usage: %s [--cases N] [--seed S] [--case K] [--work DIR] [--verbose 1]\n",
                   program);
      return std::nullopt;
    }
  }
  return o;
}

}  // namespace fmbem::fuzz
