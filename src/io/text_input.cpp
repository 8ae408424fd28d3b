#include "text_input.hpp"

#include <sys/stat.h>

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <fstream>
#include <system_error>

#include "fmbem/core/error.hpp"

namespace fmbem::io::detail {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
    s.remove_suffix(1);
  return s;
}

Token read_token(std::string_view text, double& value) {
  std::string_view digits = text;
  if (digits.size() > 1 && digits[0] == '+' && digits[1] != '-' && digits[1] != '+')
    digits.remove_prefix(1);
  const char* end = digits.data() + digits.size();
  const auto [stop, error] = std::from_chars(digits.data(), end, value);
  if (!digits.empty() && stop == end) {
    if (error == std::errc::result_out_of_range) return Token::out_of_range;
    if (error == std::errc()) return std::isfinite(value) ? Token::number : Token::non_finite;
  }
  if (text.empty()) return Token::malformed;
  const char c = text.front();
  const bool starts_like_number = (c >= '0' && c <= '9') || c == '+' || c == '-' || c == '.';
  return starts_like_number ? Token::malformed : Token::word;
}

// The whole text as one finite number.
bool parse_number(std::string_view text, double& value) {
  return read_token(text, value) == Token::number;
}

// Printable ASCII only, at most 60 characters: file content quoted in a message.
std::string excerpt(std::string_view s) {
  std::string out;
  for (char c : s.substr(0, 60)) out += c >= 0x20 && c < 0x7f ? c : '?';
  return s.size() > 60 ? out + "..." : out;
}

// Blank-separated fields (spaces, tabs) of a line.
std::vector<std::string_view> words(std::string_view line) {
  std::vector<std::string_view> out;
  line = trim(line);
  while (!line.empty()) {
    const std::size_t end = line.find_first_of(" \t");
    out.push_back(line.substr(0, end));
    line = trim(end == std::string_view::npos ? std::string_view() : line.substr(end));
  }
  return out;
}

bool parse_id(std::string_view text, long long& value) {
  const auto [stop, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  return !text.empty() && error == std::errc() && stop == text.data() + text.size();
}

// The whole of a regular file of at most kMaxTextBytes; `where` names it in messages.
std::string read_regular_file(const std::string& path, const std::string& where) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0)
    throw Error("cannot read " + where + ": " + std::strerror(errno));
  if (!S_ISREG(info.st_mode)) throw Error(where + " is not a regular file");
  if (std::uint64_t(info.st_size) > kMaxTextBytes) throw Error(where + " is larger than 2 GiB");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error("cannot read " + where + ": " + std::strerror(errno));
  std::string content(std::size_t(info.st_size), '\0');
  in.read(content.data(), std::streamsize(content.size()));
  if (!in && !in.eof()) throw Error("cannot read " + where);
  content.resize(std::size_t(in.gcount()));
  return content;
}

CountedLines counted_lines(std::string_view content, const std::string& where, const char* what,
                           std::uint64_t max_count, bool skip_comments) {
  CountedLines out;
  std::size_t line_number = 0;
  long long count = -1;
  while (!content.empty()) {
    const std::size_t newline = content.find('\n');
    const std::string_view line = trim(content.substr(0, newline));
    content.remove_prefix(newline == std::string_view::npos ? content.size() : newline + 1);
    ++line_number;
    if (line.size() > kMaxTextLine)
      throw Error(where + ", line " + std::to_string(line_number) + ": longer than " +
                  std::to_string(kMaxTextLine) + " bytes");
    if (line.empty()) continue;
    if (skip_comments && words(line).front().find('#') != std::string_view::npos) continue;
    if (count < 0) {
      if (!parse_id(line, count) || count < 0 || std::uint64_t(count) > max_count)
        throw Error(where + ", line " + std::to_string(line_number) + ": expected the number of " +
                    what + " (a whole number up to " + std::to_string(max_count) + "), got '" +
                    excerpt(line) + "'");
      continue;
    }
    out.lines.emplace_back(line_number, line);
  }
  if (count < 0) throw Error(where + " is empty (its first line is the number of " + what + ")");
  if (std::size_t(count) != out.lines.size())
    throw Error(where + ": its first line gives " + std::to_string(count) + " " + what +
                ", the file holds " + std::to_string(out.lines.size()));
  return out;
}

}  // namespace fmbem::io::detail
