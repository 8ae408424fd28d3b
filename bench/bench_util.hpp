#pragma once
// Small helpers the benchmark programs share: wall-clock timing and comma-separated lists.
#include <chrono>
#include <sstream>
#include <string>
#include <vector>

namespace fmbem::bench {

using Clock = std::chrono::steady_clock;

inline double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

inline std::vector<int> int_list(const std::string& text) {
  std::vector<int> out;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');) out.push_back(std::stoi(item));
  return out;
}

}  // namespace fmbem::bench
