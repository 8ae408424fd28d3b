#pragma once
// What the fuzz drivers share: a seeded random source, the pieces of a text they pick, and the
// mutations every line-based format meets (truncation, bit flips, a line repeated, removed or
// swapped with another). Each driver adds its format's own.
#include <cctype>
#include <cstdint>
#include <random>
#include <string>
#include <utility>

namespace fmbem::fuzz {

class TextMutations {
 public:
  explicit TextMutations(std::uint64_t seed) : random_(seed) {}

  // Applies 1 to 3 of the driver's once() in a row.
  template <class Once>
  std::string rounds(std::string text, Once&& once) {
    const int count = 1 + static_cast<int>(below(3));
    for (int r = 0; r < count && !text.empty(); ++r) text = once(std::move(text));
    return text;
  }

 protected:
  enum class Common {
    truncation,
    bit_flips,
    repeated_line,
    removed_line,
    swapped_lines,
    random_bytes
  };

  std::uint64_t below(std::uint64_t n) { return n == 0 ? 0 : random_() % n; }
  template <typename T, std::size_t N>
  const T& pick(const T (&items)[N]) {
    return items[below(N)];
  }

  // [begin, end) of the line holding `at`.
  static std::pair<std::size_t, std::size_t> line_around(const std::string& text, std::size_t at) {
    const std::size_t begin = at == 0 ? std::string::npos : text.rfind('\n', at - 1);
    const std::size_t end = text.find('\n', at);
    return {begin == std::string::npos ? 0 : begin + 1,
            end == std::string::npos ? text.size() : end + 1};
  }

  // A random token between separators: [begin, end).
  template <class Separator>
  std::pair<std::size_t, std::size_t> token(const std::string& text, Separator&& separator) {
    std::size_t at = below(text.size());
    while (at < text.size() && separator(text[at])) ++at;
    std::size_t begin = at, end = at;
    while (begin > 0 && !separator(text[begin - 1])) --begin;
    while (end < text.size() && !separator(text[end])) ++end;
    return {begin, end};
  }

  // One of the mutations every format meets, about position `at`.
  void common(std::string& text, Common which, std::size_t at) {
    switch (which) {
      case Common::truncation:
        text.resize(at);
        break;
      case Common::bit_flips:
        for (std::uint64_t i = 0, n = 1 + below(8); i < n; ++i) {
          const std::size_t where = below(text.size());          // one draw per statement:
          const unsigned bit = static_cast<unsigned>(below(8));  // the same on every compiler
          text[where] = static_cast<char>(text[where] ^ (1u << bit));
        }
        break;
      case Common::repeated_line: {
        const auto [begin, end] = line_around(text, at);
        text.insert(end, text.substr(begin, end - begin));
        break;
      }
      case Common::removed_line: {
        const auto [begin, end] = line_around(text, at);
        text.erase(begin, end - begin);
        break;
      }
      case Common::swapped_lines: {
        auto a = line_around(text, at), b = line_around(text, below(text.size()));
        if (a.first > b.first) std::swap(a, b);
        if (a.second > b.first) break;
        const std::string first = text.substr(a.first, a.second - a.first);
        const std::string second = text.substr(b.first, b.second - b.first);
        text.replace(b.first, second.size(), first);
        text.replace(a.first, first.size(), second);
        break;
      }
      case Common::random_bytes: {  // 1 to 16 bytes, NUL and high bytes included
        std::string bytes(1 + below(16), '\0');
        for (char& c : bytes) c = static_cast<char>(below(256));
        text.insert(at, bytes);
        break;
      }
    }
  }

 private:
  std::mt19937_64 random_;
};

}  // namespace fmbem::fuzz
