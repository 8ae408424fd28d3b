#pragma once
// Strict reading of small text inputs (CSV points, Mesh2HRTF and NumCalc files): shared by the
// readers of src/io, not part of the module's interface.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace fmbem::io::detail {

// Larger text inputs are refused before they are read (as mesh files are).
inline constexpr std::uint64_t kMaxTextBytes = std::uint64_t{2} << 30;
inline constexpr std::size_t kMaxTextLine = 4096;

// Without leading blanks and trailing blanks or '\r'.
std::string_view trim(std::string_view s);

// One field, read as msh_check reads a coordinate: std::from_chars over the whole text (no
// locale, no hex floats, no blanks or junk inside) after a leading '+' that is not followed by a
// sign (so "+-2" and "++2" are refused).
enum class Token {
  number,        // a finite double
  non_finite,    // nan, inf, infinity (any case), nan(...)
  out_of_range,  // a number beyond a double's range: 1e999, 1e-999
  word,          // text that is no number at all: a header's "x" (starts with no digit or sign)
  malformed,     // anything else: "", "+-2", "1.5.5", "1e3x", "0x1p3"
};
Token read_token(std::string_view text, double& value);
// The whole text as one finite number.
bool parse_number(std::string_view text, double& value);
// The whole text as one integer (an optional '-', digits).
bool parse_id(std::string_view text, long long& value);

// Printable ASCII only, at most 60 characters: file content quoted in a message.
std::string excerpt(std::string_view s);
// Blank-separated fields (spaces, tabs) of a line.
std::vector<std::string_view> words(std::string_view line);

// The whole of a regular file of at most kMaxTextBytes; `where` names it in messages.
std::string read_regular_file(const std::string& path, const std::string& where);

// The content lines of a Mesh2HRTF or NumCalc node or element file (blank lines skipped, and
// with `skip_comments` lines whose first word holds a '#', as NumCalc skips them) with their
// line numbers, after the first, which must be the count of the rest (at most `max_count`).
struct CountedLines {
  std::vector<std::pair<std::size_t, std::string_view>> lines;
};
CountedLines counted_lines(std::string_view content, const std::string& where, const char* what,
                           std::uint64_t max_count, bool skip_comments = false);

}  // namespace fmbem::io::detail
