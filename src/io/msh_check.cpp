#include "fmbem/io/msh_check.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <string>
#include <system_error>
#include <unordered_set>
#include <utility>
#include <vector>

#include "fmbem/core/error.hpp"

// Hand-written because no library reads MSH files but Gmsh itself, and Gmsh 4.8's
// reader is what must be protected: it dereferences node tags the file does not
// define, silently drops what a lying count leaves over, and keeps the last of two
// definitions of a node. The checker mirrors how Gmsh finds sections (fgets with a
// 256-byte buffer, lines starting with '$') and reads data (fscanf / fread), so that
// what it accepts is what Gmsh reads.

namespace fmbem::io {
namespace {

// Nodes and dimension of each Gmsh element type, as Gmsh 4.8's
// gmsh::model::mesh::getElementProperties reports them; {0, -1}: no such type;
// 0 nodes: a type without a fixed node count (polygons, polyhedra, X-FEM).
struct ElementType {
  int nodes;
  int dim;
};
constexpr ElementType kElementTypes[] = {
    {0, -1},  {2, 1},   {3, 2},   {4, 2},   {4, 3},   {8, 3},   {6, 3},   {5, 3},   {3, 1},
    {6, 2},   {9, 2},   {10, 3},  {27, 3},  {18, 3},  {14, 3},  {1, 0},   {8, 2},   {20, 3},
    {15, 3},  {13, 3},  {9, 2},   {10, 2},  {12, 2},  {15, 2},  {15, 2},  {21, 2},  {4, 1},
    {5, 1},   {6, 1},   {20, 3},  {35, 3},  {56, 3},  {22, 3},  {28, 3},  {0, 2},   {0, 3},
    {16, 2},  {25, 2},  {36, 2},  {12, 2},  {16, 2},  {20, 2},  {28, 2},  {36, 2},  {45, 2},
    {55, 2},  {66, 2},  {49, 2},  {64, 2},  {81, 2},  {100, 2}, {121, 2}, {18, 2},  {21, 2},
    {24, 2},  {27, 2},  {30, 2},  {24, 2},  {28, 2},  {32, 2},  {36, 2},  {40, 2},  {7, 1},
    {8, 1},   {9, 1},   {10, 1},  {11, 1},  {0, -1},  {0, -1},  {0, 2},   {0, -1},  {84, 3},
    {120, 3}, {165, 3}, {220, 3}, {286, 3}, {0, -1},  {0, -1},  {0, -1},  {34, 3},  {40, 3},
    {46, 3},  {52, 3},  {58, 3},  {1, 1},   {1, 2},   {1, 2},   {1, 3},   {1, 3},   {1, 3},
    {0, -1},  {0, -1},  {64, 3},  {125, 3}, {216, 3}, {343, 3}, {512, 3}, {729, 3}, {1000, 3},
    {32, 3},  {44, 3},  {56, 3},  {68, 3},  {80, 3},  {92, 3},  {104, 3}, {0, -1},  {0, -1},
    {0, -1},  {0, -1},  {0, -1},  {0, -1},  {0, -1},  {0, -1},  {0, -1},  {0, -1},  {0, -1},
    {0, -1},  {30, 3},  {55, 3},  {91, 3},  {140, 3}, {204, 3}, {285, 3}, {385, 3}, {21, 3},
    {29, 3},  {37, 3},  {45, 3},  {53, 3},  {61, 3},  {69, 3},  {1, 3},   {0, 0},   {0, 1},
    {0, 2},   {0, 3},   {16, 3}};

ElementType element_type(long long type) {
  constexpr auto count = static_cast<long long>(std::size(kElementTypes));
  return type >= 0 && type < count ? kElementTypes[type] : ElementType{0, -1};
}

constexpr long long kTriangle3 = 2;
constexpr std::size_t kGmshLine = 255;  // Gmsh reads lines with fgets(str, 256, fp)
constexpr long long kMaxTags = 1000;    // MSH 2 tags per element (Gmsh writes 2 to 4)
constexpr long long kInt32Max = std::numeric_limits<std::int32_t>::max();
constexpr long long kInt32Min = std::numeric_limits<std::int32_t>::min();
constexpr long long kSizeMax = std::numeric_limits<long long>::max();

bool is_space(char c) {  // isspace in the C locale, which fscanf skips
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

// File content quoted in a message: its first line, printable ASCII only, at most
// 40 characters.
std::string excerpt(std::string_view s) {
  s = trim(s.substr(0, s.find('\n')));
  std::string out;
  for (char c : s.substr(0, 40)) {
    if (c >= 0x20 && c < 0x7f) {
      out += c;
    } else {
      char hex[8];
      std::snprintf(hex, sizeof hex, "\\x%02x", static_cast<unsigned char>(c));
      out += hex;
    }
  }
  return s.size() > 40 ? out + "..." : out;
}

std::string shortest(double value) {
  char text[32];
  const auto end = std::to_chars(text, text + sizeof text, value).ptr;
  return std::string(text, end);
}

struct Node {
  long long tag;
  double xyz[3];
};

class MshChecker {
 public:
  MshChecker(std::string_view text, const std::string& name) : text_(text), name_(name) {}

  MshLayout run() {
    read_format_section();
    bool in_skipped_section = false;
    while (pos_ < text_.size()) {
      const std::size_t start = pos_;
      const std::string_view l = line();
      if (l.front() != '$') {
        if (!in_skipped_section && !trim(l).empty())
          fail_at(start, "unexpected text outside any section: '" + excerpt(l) + "'");
        continue;
      }
      // Sections as Gmsh 4.8 tells them: by the prefix of the line (strncmp), and in
      // MSH 4 up to the line "$End" + the rest of this line (see skip_msh4_section).
      const std::string_view section = l.substr(1);
      in_skipped_section = false;
      const bool msh4 = layout_.major_version == 4;
      const auto known = [&](std::string_view name) {
        if (!section.starts_with(name)) return false;
        if (msh4) exact_msh4_section_line(start, section, name);
        return true;
      };
      if (known("MeshFormat")) {
        fail_at(start, "it has a second $MeshFormat section");
      } else if (known("Nodes")) {
        read_nodes_section(start);
      } else if (known("Elements")) {
        read_elements_section(start);
      } else if (msh4 && known("Entities")) {
        read_entities_section(start);
      } else if (known("PhysicalNames")) {
        read_physical_names_section(start);
      } else if (section.starts_with("NO") || section.starts_with("ELM") ||
                 section.starts_with("ParametricNodes")) {
        fail_at(start, "its section '" + excerpt(l) +
                           "' is not supported (MSH 1 or parametric nodes); save it from Gmsh "
                           "as MSH 2.2 or 4.1 without parametric coordinates");
      } else if (msh4) {
        skip_msh4_section(start, section);
      } else if (!section.starts_with("End")) {
        in_skipped_section = true;  // sections Gmsh or fmbem do not need: skipped as Gmsh does
      }
    }
    if (!seen_elements_)
      fail_at(text_.size(), seen_nodes_ ? "it has no $Elements section"
                                        : "it has neither a $Nodes nor an $Elements section");
    layout_.nodes = node_tags_.size();
    layout_.elements = element_tags_.size();
    std::sort(element_tags_.begin(), element_tags_.end());
    const auto repeated = std::adjacent_find(element_tags_.begin(), element_tags_.end());
    if (repeated != element_tags_.end())
      throw Error("mesh file '" + name_ + "' is malformed: two elements have the tag " +
                  std::to_string(*repeated) + " (Gmsh would keep only one)");
    std::sort(msh2_triangles_.begin(), msh2_triangles_.end());
    layout_.msh2_triangle_physicals.reserve(msh2_triangles_.size());
    for (const auto& [tag, physical] : msh2_triangles_)
      layout_.msh2_triangle_physicals.push_back(physical);
    return layout_;
  }

 private:
  // ---- failures

  [[noreturn]] void fail_at(std::size_t at, const std::string& what) const {
    std::string where;
    if (layout_.binary && at >= binary_from_) {
      where = "byte offset " + std::to_string(at);
    } else {
      const auto lines =
          std::count(text_.begin(), text_.begin() + std::min(at, text_.size()), '\n');
      where = "line " + std::to_string(lines + 1);
    }
    throw Error("mesh file '" + name_ + "' is malformed: " + what + " (" + where + ")");
  }
  [[noreturn]] void fail(const std::string& what) const { fail_at(pos_, what); }

  // ---- reading

  // The next line as fgets(str, 256, fp) returns it: at most 255 bytes, through '\n'.
  std::string_view line() {
    const std::size_t limit = std::min(text_.size(), pos_ + kGmshLine);
    std::size_t end = pos_;
    while (end < limit && text_[end] != '\n') ++end;
    if (end < limit) ++end;
    const std::string_view result = text_.substr(pos_, end - pos_);
    pos_ = end;
    return result;
  }

  // ASCII: whether another blank-separated token starts before the section's end.
  bool more_tokens() {
    while (pos_ < limit_ && is_space(text_[pos_])) ++pos_;
    return pos_ < limit_;
  }

  // What a field is, for messages: "a node tag of element 12".
  std::string describe(const char* what) const {
    return subject_ ? std::string(what) + " of " + subject_ + " " + std::to_string(subject_tag_)
                    : std::string(what);
  }
  void about(const char* subject, long long tag) {
    subject_ = subject;
    subject_tag_ = tag;
  }

  std::string_view token(const char* what) {
    if (!more_tokens()) fail_short("where " + describe(what) + " should be");
    const std::size_t begin = pos_;
    while (pos_ < limit_ && !is_space(text_[pos_])) ++pos_;
    token_end_ = pos_;
    return text_.substr(begin, pos_ - begin);
  }

  // fscanf reads an optional sign; std::from_chars takes '-' only.
  static std::string_view without_plus(std::string_view text) {
    if (text.size() > 1 && text[0] == '+' && text[1] != '-' && text[1] != '+')
      text.remove_prefix(1);
    return text;
  }

  // An integer field: an ASCII token, or a binary int32 (`wide` false) or size_t.
  long long integer(bool wide, const char* field, long long low, long long high) {
    const std::size_t at = pos_;
    long long value = 0;
    if (layout_.binary) {
      if (wide) {
        const std::uint64_t raw = binary<std::uint64_t>(field);
        if (raw > static_cast<std::uint64_t>(kSizeMax))
          fail_at(at, describe(field) + " " + std::to_string(raw) + " is out of range");
        value = static_cast<long long>(raw);
      } else {
        value = static_cast<std::int32_t>(binary<std::uint32_t>(field));
      }
    } else {
      const std::string_view text = token(field);
      const std::string_view digits = without_plus(text);
      const auto [end, error] =
          std::from_chars(digits.data(), digits.data() + digits.size(), value);
      if (error == std::errc::result_out_of_range ||
          (error == std::errc() && end == digits.data() + digits.size() &&
           (value > (wide ? kSizeMax : kInt32Max) || value < (wide ? 0 : kInt32Min))))
        fail_at(at, describe(field) + " '" + excerpt(text) + "' is out of range");
      if (error != std::errc() || end != digits.data() + digits.size())
        fail_at(at, "expected " + describe(field) + ", found '" + excerpt(text) + "'");
    }
    if (value < low || value > high)
      fail_at(at, describe(field) + " " + std::to_string(value) + " is out of range (" +
                      std::to_string(low) + " to " + std::to_string(high) + ")");
    return value;
  }

  // A coordinate: an ASCII token or a binary double; non-finite values are returned.
  double real(const char* field) {
    if (layout_.binary) {
      const std::uint64_t raw = binary<std::uint64_t>(field);
      double value;
      std::memcpy(&value, &raw, sizeof value);
      return value;
    }
    const std::size_t at = pos_;
    const std::string_view text = token(field);
    const std::string_view number = without_plus(text);
    double value = 0.0;
    const auto [end, error] = std::from_chars(number.data(), number.data() + number.size(), value);
    if (error == std::errc::result_out_of_range)
      fail_at(at, describe(field) + " '" + excerpt(text) + "' is beyond the range of a double");
    if (error != std::errc() || end != number.data() + number.size())
      fail_at(at, "expected " + describe(field) + ", found '" + excerpt(text) + "'");
    return value;
  }

  template <typename Word>
  Word binary(const char* field) {
    if (left() < sizeof(Word)) fail_short("where " + describe(field) + " should be");
    Word word;
    std::memcpy(&word, text_.data() + pos_, sizeof word);
    pos_ += sizeof word;
    if (!layout_.byte_swapped) return word;
    if constexpr (sizeof(Word) == 4) return __builtin_bswap32(word);
    return __builtin_bswap64(word);
  }

  // ---- sections

  // The data of section `name` runs from here to the line "$End<name>" (the
  // newline before it excluded in binary files) or to the end of the file.
  void open_section(const std::string& name) {
    section_ = name;
    const std::string marker = "\n$End" + name;
    std::size_t found = pos_ > 0 ? text_.find(marker, pos_ - 1) : std::string_view::npos;
    section_closed_ = found != std::string_view::npos;
    limit_ = section_closed_ ? std::max(found, pos_) : text_.size();
    end_marker_ = section_closed_ ? found + 1 : text_.size();
  }

  // Reading ran into the end of the section's data.
  [[noreturn]] void fail_short(const std::string& where) const {
    if (!section_closed_)
      fail_at(text_.size(), "the file ends inside its $" + section_ + " section " + where +
                                " (the file is truncated)");
    fail_at(end_marker_, "$End" + section_ + " comes " + where +
                             " (a count in the section is larger than its data)");
  }

  // After the data: nothing but blanks up to "$End<name>", which must stand alone.
  void close_section(const std::string& counted) {
    if (more_tokens())
      fail("the $" + section_ + " section holds more data than " + counted + " (found '" +
           excerpt(text_.substr(pos_, 40)) + "' where $End" + section_ + " should be)");
    if (!section_closed_) fail_at(text_.size(), "the file ends before $End" + section_);
    pos_ = end_marker_;
    const std::size_t start = pos_;
    const std::string_view end = line();
    const std::string expected = "$End" + section_;
    if (layout_.major_version == 4 ? end.substr(0, end.size() - line_ending_.size()) != expected ||
                                         !end.ends_with(line_ending_)
                                   : trim(end) != expected)
      fail_at(start, "expected a line " + expected + ", found '" + excerpt(end) + "'" +
                         (layout_.major_version == 4 && trim(end) == expected
                              ? " (with other blanks or line end than its $" + section_ +
                                    " line: Gmsh 4.8 then skips the rest of the file)"
                              : ""));
    limit_ = text_.size();
  }

  // MSH 4: Gmsh 4.8 reads a section up to the line "$End" + the rest of the
  // section's line, blanks and line end included: "$Nodes  " makes it look for
  // "$EndNodes  " and silently skip the rest of the file. So the line must be exact.
  void exact_msh4_section_line(std::size_t start, std::string_view section, std::string_view name) {
    const std::string_view rest = section.substr(name.size());
    if (rest != "\n" && rest != "\r\n" && !(rest.empty() && pos_ == text_.size()))
      fail_at(start, "its line '$" + excerpt(section) + "' must read $" + std::string(name) +
                         " alone, without trailing blanks (Gmsh 4.8 would skip the rest of the "
                         "file)");
    line_ending_ = std::string(rest);
  }

  // MSH 4: a section Gmsh or fmbem does not need (or a stray "$End..." line): Gmsh
  // skips everything up to the line "$End" + this line, '$' lines included.
  void skip_msh4_section(std::size_t start, std::string_view section) {
    const std::string end = "$End" + std::string(section);
    while (pos_ < text_.size())
      if (line() == end) return;
    const std::size_t after = start + 1 + section.size();
    if (!trim(text_.substr(after)).empty())
      fail_at(start, "no line '$End" + excerpt(section) + "' closes its line '$" +
                         excerpt(section) + "', so Gmsh 4.8 would skip the rest of the file");
  }

  void read_format_section() {
    const std::string_view first = line();
    if (trim(first) != "$MeshFormat" || !first.starts_with("$MeshFormat"))
      throw Error("mesh file '" + name_ +
                  "' is not a Gmsh .msh file (it does not start with $MeshFormat)");
    const std::size_t version_at = pos_;
    const std::string_view version_line = line();
    std::string_view fields = trim(version_line);
    std::string_view words[4];
    int count = 0;
    while (!fields.empty() && count < 4) {
      std::size_t end = 0;
      while (end < fields.size() && !is_space(fields[end])) ++end;
      words[count++] = fields.substr(0, end);
      fields = trim(fields.substr(end));
    }
    double version = 0.0;
    long long file_type = -1, data_size = -1;
    const auto parse = [](std::string_view text, auto& value) {
      const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
      return error == std::errc() && end == text.data() + text.size();
    };
    if (count != 3 || !parse(words[0], version) || !parse(words[1], file_type) ||
        !parse(words[2], data_size) || (file_type != 0 && file_type != 1))
      fail_at(version_at, "its $MeshFormat line '" + excerpt(version_line) +
                              "' is not 'version file-type data-size' (file-type 0 or 1)");
    const bool msh2 = version >= 2.0 && version < 3.0;
    if (!msh2 && version != 4.0 && version != 4.1)
      throw Error("mesh file '" + name_ + "' has MSH format version '" + excerpt(version_line) +
                  "'; fmbem reads MSH 2.x, 4.0 and 4.1");
    layout_.major_version = msh2 ? 2 : 4;
    layout_.minor_version = static_cast<int>(std::lround(10 * (version - layout_.major_version)));
    layout_.binary = file_type == 1;
    line_ending_ = "\n";
    if (!msh2) exact_msh4_section_line(0, first.substr(1), "MeshFormat");
    if (layout_.binary && version == 4.0)
      fail_at(version_at,
              "binary MSH 4.0 is not supported (Gmsh 4.8 itself cannot write it); "
              "save the mesh as MSH 4.1 or 2.2");
    if (layout_.binary) {
      if (data_size != 8)
        fail_at(version_at, "binary data of size " + std::to_string(data_size) +
                                " (Gmsh writes and reads 8-byte doubles and sizes)");
      binary_from_ = pos_;
      std::uint32_t one = 0;
      if (text_.size() - pos_ < sizeof one)
        fail_at(text_.size(), "the file ends before the binary marker 1");
      std::memcpy(&one, text_.data() + pos_, sizeof one);
      pos_ += sizeof one;
      if (one != 1 && __builtin_bswap32(one) != 1)
        fail_at(pos_ - sizeof one, "the binary marker after the version is " + std::to_string(one) +
                                       ", not 1 in either byte order");
      layout_.byte_swapped = one != 1;
    }
    open_section("MeshFormat");
    close_section("'version file-type data-size'");
  }

  void read_nodes_section(std::size_t start) {
    if (seen_nodes_) fail_at(start, "it has a second $Nodes section");
    seen_nodes_ = true;
    if (layout_.major_version == 2) {
      const long long count = count_line("node count");
      open_section("Nodes");
      read_nodes_msh2(count);
    } else {
      open_section("Nodes");
      read_nodes_msh41();
    }
    close_section("its counts say");
    finish_nodes();
  }

  void read_elements_section(std::size_t start) {
    if (seen_elements_) fail_at(start, "it has a second $Elements section");
    if (!seen_nodes_) fail_at(start, "its $Elements section comes before any $Nodes section");
    seen_elements_ = true;
    if (layout_.major_version == 2) {
      const long long count = count_line("element count");
      open_section("Elements");
      read_elements_msh2(count);
    } else {
      open_section("Elements");
      read_elements_msh41();
    }
    close_section("its counts say");
  }

  // MSH 4: four counts, then per entity its tag, bounding box (a point in MSH 4.1:
  // its coordinates), physical tags and (not for points) bounding entities. Gmsh
  // allocates what these counts say, so a damaged section must not reach it.
  void read_entities_section(std::size_t start) {
    if (seen_entities_) fail_at(start, "it has a second $Entities section");
    seen_entities_ = true;
    open_section("Entities");
    long long counts[4];
    for (long long& count : counts) count = integer(true, "the number of entities", 0, kSizeMax);
    for (int dim = 0; dim < 4; ++dim) {
      check_room(counts[dim], layout_.binary ? (dim == 0 ? 36 : 68) : (dim == 0 ? 10 : 18),
                 "entities");
      for (long long e = 0; e < counts[dim]; ++e) {
        about(nullptr, 0);
        const long long tag = integer(false, "an entity tag", kInt32Min, kInt32Max);
        add_entity(entity_key(dim, tag));
        about("entity", tag);
        for (int k = 0; k < (dim == 0 && !msh40() ? 3 : 6); ++k)
          if (const double x = real("a bounding box coordinate"); !std::isfinite(x))
            fail("entity " + std::to_string(tag) + " of dimension " + std::to_string(dim) +
                 " has a non-finite bounding box coordinate (" + shortest(x) + ")");
        for (int list = 0; list < (dim == 0 ? 1 : 2); ++list) {
          const long long size = integer(
              true, list == 0 ? "the number of physical tags" : "the number of bounding entities",
              0, kSizeMax);
          check_room(size, layout_.binary ? 4 : 2, list == 0 ? "physical tags" : "entities");
          for (long long i = 0; i < size; ++i)
            integer(false, list == 0 ? "a physical tag" : "a bounding entity", kInt32Min,
                    kInt32Max);
        }
      }
    }
    about(nullptr, 0);
    close_section("its counts say");
  }

  // MSH 2 counts stand on a line of their own, which Gmsh reads with fgets + sscanf.
  long long count_line(const std::string& what) {
    const std::size_t at = pos_;
    const std::string_view text = trim(line());
    long long value = -1;
    const std::string_view digits = without_plus(text);
    const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
    if (error != std::errc() || end != digits.data() + digits.size() || value < 0 ||
        value > kInt32Max)
      fail_at(at, "expected the " + what + " (a number from 0 to " + std::to_string(kInt32Max) +
                      "), found '" + excerpt(text) + "'");
    return value;
  }

  // Bytes left in the section's data.
  std::size_t left() const { return limit_ > pos_ ? limit_ - pos_ : 0; }

  // A count larger than the bytes that follow could hold: say so before reading
  // (and before reserving memory for it). An ASCII record's smallest size counts
  // one separator per number, which the last record lacks.
  void check_room(long long count, std::size_t smallest_record, const std::string& things) {
    if (count > 0 && static_cast<unsigned long long>(count) > (left() + 1) / smallest_record)
      fail_short("long before the " + std::to_string(count) + " " + things + " its count says");
  }

  void add_entity(long long key) { entities_.insert(key); }

  void add_node(long long tag, const double xyz[3]) {
    for (int k = 0; k < 3; ++k)
      if (!std::isfinite(xyz[k]))
        fail("node " + std::to_string(tag) + " has a non-finite coordinate (" + shortest(xyz[k]) +
             ")");
    nodes_.push_back({tag, {xyz[0], xyz[1], xyz[2]}});
  }

  // Each node's coordinates once; repeated definitions must agree.
  void finish_nodes() {
    std::stable_sort(nodes_.begin(), nodes_.end(),
                     [](const Node& a, const Node& b) { return a.tag < b.tag; });
    node_tags_.reserve(nodes_.size());
    for (std::size_t i = 0; i < nodes_.size(); ++i) {
      if (i > 0 && nodes_[i].tag == nodes_[i - 1].tag) {
        const double* a = nodes_[i - 1].xyz;
        const double* b = nodes_[i].xyz;
        if (a[0] != b[0] || a[1] != b[1] || a[2] != b[2])
          throw Error("mesh file '" + name_ + "' is malformed: node " +
                      std::to_string(nodes_[i].tag) + " is defined twice, at (" + shortest(a[0]) +
                      ", " + shortest(a[1]) + ", " + shortest(a[2]) + ") and at (" +
                      shortest(b[0]) + ", " + shortest(b[1]) + ", " + shortest(b[2]) + ")");
        continue;
      }
      node_tags_.push_back(nodes_[i].tag);
    }
    nodes_.clear();
    nodes_.shrink_to_fit();
  }

  void check_node_used(long long element, long long node, std::size_t at) const {
    if (!std::binary_search(node_tags_.begin(), node_tags_.end(), node))
      fail_at(at, "element " + std::to_string(element) + " uses node " + std::to_string(node) +
                      ", which the file does not define");
  }

  // ---- MSH 2: "tag x y z" per node; binary: int32 tag, 3 doubles.

  void read_nodes_msh2(long long count) {
    check_room(count, layout_.binary ? 28 : 8, "nodes");
    nodes_.reserve(static_cast<std::size_t>(count));
    for (long long n = 0; n < count; ++n) {
      if (!layout_.binary && !more_tokens())
        fail_short("after " + std::to_string(n) + " of the " + std::to_string(count) +
                   " nodes its count says");
      about(nullptr, 0);
      const long long tag = integer(false, "a node tag", 1, kInt32Max);
      about("node", tag);
      double xyz[3];
      for (double& x : xyz) x = real("a coordinate");
      add_node(tag, xyz);
    }
    about(nullptr, 0);
  }

  // A count, then a line "dimension tag "name"" a name; ASCII in binary files too.
  void read_physical_names_section(std::size_t start) {
    if (seen_names_) fail_at(start, "it has a second $PhysicalNames section");
    seen_names_ = true;
    open_section("PhysicalNames");
    long long count = -1;
    while (pos_ < limit_) {
      const std::size_t at = pos_;
      const std::string_view l = trim(line().substr(0, limit_ - at));
      if (l.empty()) continue;
      const auto bad = [&](const std::string& what) {
        fail_at(at, "its $PhysicalNames line '" + excerpt(l) + "' " + what);
      };
      if (count < 0) {
        if (std::from_chars(l.data(), l.data() + l.size(), count).ptr != l.data() + l.size() ||
            count < 0)
          bad("is not a count of names");
        continue;
      }
      if (std::ptrdiff_t(layout_.physical_names.size()) == count) bad("is more than its count");
      MshPhysicalName entry;
      const char* end = l.data() + l.size();
      auto [after_dimension, e1] = std::from_chars(l.data(), end, entry.dimension);
      while (after_dimension < end && is_space(*after_dimension)) ++after_dimension;
      auto [after_tag, e2] = std::from_chars(after_dimension, end, entry.tag);
      const std::string_view quoted =
          trim(std::string_view(after_tag, std::size_t(end - after_tag)));
      if (e1 != std::errc() || e2 != std::errc() || after_tag == after_dimension ||
          entry.dimension < 0 || entry.dimension > 3 || quoted.size() < 2 ||
          quoted.front() != '"' || quoted.back() != '"' ||
          quoted.substr(1, quoted.size() - 2).find('"') != std::string_view::npos)
        bad("is not 'dimension tag \"name\"' with the dimension 0 to 3");
      entry.name = quoted.substr(1, quoted.size() - 2);
      layout_.physical_names.push_back(std::move(entry));
    }
    if (std::ptrdiff_t(layout_.physical_names.size()) != std::max(count, 0LL))
      fail_short("after " + std::to_string(layout_.physical_names.size()) + " names");
    close_section("its count says");
  }

  // "tag type number-of-tags tags... nodes..."; binary: blocks of one type, a header
  // (type, elements, tags) and per element int32 tag, tags and nodes.
  void read_elements_msh2(long long count) {
    check_room(count, 8, "elements");
    element_tags_.reserve(element_tags_.size() + static_cast<std::size_t>(count));
    long long done = 0;
    while (done < count) {
      long long type = 0, block = 1, tags = 0;
      about(nullptr, 0);
      if (layout_.binary) {
        const std::size_t at = pos_;
        type = integer(false, "an element type", kInt32Min, kInt32Max);
        block = integer(false, "the element count of a block", 1, count - done);
        tags = integer(false, "the tag count of a block", 0, kMaxTags);
        check_type(type, -1, at);
      } else if (!more_tokens()) {
        fail_short("after " + std::to_string(done) + " of the " + std::to_string(count) +
                   " elements its count says");
      }
      for (long long e = 0; e < block; ++e, ++done) {
        about(nullptr, 0);
        const std::size_t at = pos_;
        const long long tag = integer(false, "an element tag", 1, kInt32Max);
        about("element", tag);
        if (!layout_.binary) {
          const std::size_t type_at = pos_;
          type = integer(false, "the type", kInt32Min, kInt32Max);
          check_type(type, -1, type_at);
          tags = integer(false, "the tag count", 0, kMaxTags);
        }
        long long physical = 0;
        for (long long t = 0; t < tags; ++t) {
          const long long value = integer(false, "a tag", kInt32Min, kInt32Max);
          if (t == 0) physical = value;
          if (t == 1 && value < 0)  // Gmsh drops such an element
            fail_at(at, "element " + std::to_string(tag) + " has the negative entity tag " +
                            std::to_string(value));
        }
        if (type == kTriangle3) msh2_triangles_.push_back({tag, static_cast<int>(physical)});
        const int nodes = element_type(type).nodes;
        for (int k = 0; k < nodes; ++k) {
          const std::size_t node_at = pos_;
          const long long node = integer(false, "a node", kInt32Min, kInt32Max);
          check_node_used(tag, node, node_at);
        }
        element_tags_.push_back(tag);
        layout_.triangles += type == kTriangle3;
        ++layout_.elements_by_type[static_cast<int>(type)];
      }
    }
    about(nullptr, 0);
  }

  // A type with a known, fixed node count (and in MSH 4 the block's dimension).
  void check_type(long long type, long long dim, std::size_t at) const {
    const ElementType known = element_type(type);
    if (known.nodes == 0)
      fail_at(at, (subject_ ? "element " + std::to_string(subject_tag_) : std::string("a block")) +
                      " has type " + std::to_string(type) +
                      ", which is not a Gmsh element type with a fixed number of nodes");
    if (dim >= 0 && known.dim != dim)
      fail_at(at, "an element block of dimension " + std::to_string(dim) +
                      " holds elements of type " + std::to_string(type) +
                      ", which have dimension " + std::to_string(known.dim));
  }

  // ---- MSH 4.1 and 4.0 (ASCII only): blocks per entity; sizes and tags are
  // size_t, the rest int32. MSH 4.0 has no tag range in the headers, gives the
  // entity's tag before its dimension, and each node's tag with its coordinates.

  bool msh40() const { return layout_.minor_version == 0; }

  struct Header {
    long long blocks, count, min_tag, max_tag;
  };
  Header header(const std::string& things) {
    Header h{};
    h.blocks = integer(true, "the number of blocks", 0, kSizeMax);
    h.count = integer(true, "the number of entries", 0, kSizeMax);
    h.min_tag = msh40() ? 1 : integer(true, "the smallest tag", 0, kSizeMax);
    h.max_tag = msh40() ? kSizeMax : integer(true, "the largest tag", 0, kSizeMax);
    check_room(h.count, layout_.binary ? 16 : 4, things);
    check_room(h.blocks, layout_.binary ? 20 : 8, things + " blocks");
    if (h.count > 0 && (h.min_tag < 1 || h.min_tag > h.max_tag))
      fail("the " + things + " tag range " + std::to_string(h.min_tag) + " to " +
           std::to_string(h.max_tag) + " of the header is not a range of positive tags");
    return h;
  }

  long long block_size(const Header& h, long long done, const std::string& things) {
    const std::size_t at = pos_;
    const long long size = integer(true, "the size of a block", 0, kSizeMax);
    if (size > h.count - done)
      fail_at(at, "the blocks hold more than the " + std::to_string(h.count) + " " + things +
                      " the header says");
    return size;
  }

  long long tag_in_range(const Header& h, const char* what) {
    const std::size_t at = pos_;
    const long long tag = integer(true, what, 1, kSizeMax);
    if (tag < h.min_tag || tag > h.max_tag)
      fail_at(at, std::string(what) + " " + std::to_string(tag) + " is outside the range " +
                      std::to_string(h.min_tag) + " to " + std::to_string(h.max_tag) +
                      " that the section's header declares");
    return tag;
  }

  // An entity block's "dimension tag" (MSH 4.1) or "tag dimension" (4.0), as one
  // number: dim * 2^32 + tag.
  static long long entity_key(long long dim, long long tag) { return dim * (1LL << 32) + tag; }
  long long entity() {
    long long tag = msh40() ? integer(false, "an entity tag", kInt32Min, kInt32Max) : 0;
    const long long dim = integer(false, "an entity dimension", 0, 3);
    if (!msh40()) tag = integer(false, "an entity tag", kInt32Min, kInt32Max);
    return entity_key(dim, tag);
  }
  static int dimension_of(long long key) { return static_cast<int>((key + (1LL << 31)) >> 32); }

  // Nodes may create entities; elements must be in one that $Entities or a node block
  // defines (Gmsh refuses them otherwise, with a message naming no file).
  void check_entity_defined(long long key, std::size_t at) const {
    if (!entities_.contains(key))
      fail_at(at, "an element block is in the entity of dimension " +
                      std::to_string(dimension_of(key)) + " and tag " +
                      std::to_string(key - entity_key(dimension_of(key), 0)) +
                      ", which neither $Entities nor a node block defines");
  }

  void read_nodes_msh41() {
    const Header h = header("nodes");
    nodes_.reserve(static_cast<std::size_t>(h.count));
    long long done = 0;
    std::vector<long long> tags;
    for (long long b = 0; b < h.blocks; ++b) {
      about(nullptr, 0);
      const long long key = entity();
      const int dim = dimension_of(key);
      add_entity(key);
      const std::size_t flag_at = pos_;
      const bool parametric = integer(false, "a parametric flag", 0, 1) == 1;
      if (parametric && msh40())
        fail_at(flag_at, "parametric nodes in MSH 4.0 are not supported; save the mesh as MSH 4.1");
      const long long size = block_size(h, done, "nodes");
      check_room(size, layout_.binary ? 32 : 8, "nodes");
      tags.resize(static_cast<std::size_t>(size));
      if (!msh40())
        for (long long& tag : tags) tag = tag_in_range(h, "node tag");
      for (long long& tag : tags) {
        if (msh40()) tag = tag_in_range(h, "node tag");
        about("node", tag);
        double xyz[3];
        for (double& x : xyz) x = real("a coordinate");
        for (int k = 0; parametric && k < dim; ++k) real("a parametric coordinate");
        add_node(tag, xyz);
      }
      done += size;
    }
    about(nullptr, 0);
    if (done != h.count)
      fail("the node blocks hold " + std::to_string(done) + " nodes, the header says " +
           std::to_string(h.count));
  }

  // An MSH 4 ASCII element: Gmsh 4.8 reads each from a line of its own with a
  // parser of its own, which fails on an element split over lines, a '+' sign or a
  // tab before the last node. So: one line, its tag and nodes, separated by spaces.
  void read_element_line(const Header& h, int nodes, long long type) {
    if (!more_tokens()) fail_short("where an element should be");
    const std::size_t begin = pos_;
    if (text_.substr(token_end_, begin - token_end_).find('\n') == std::string_view::npos)
      fail(
          "an element does not start on a line of its own (Gmsh reads MSH 4 elements line by "
          "line)");
    const std::size_t newline = text_.find('\n', begin);
    const std::size_t end =
        std::min(newline == std::string_view::npos ? text_.size() : newline, limit_);
    const std::string_view line_text = text_.substr(begin, end - begin);
    long long numbers[2 + 1000];  // a tag, up to 1000 nodes, one too many
    int count = 0;
    for (std::size_t i = 0; i < line_text.size();) {
      const char c = line_text[i];
      if (c == ' ' || c == '\r' || (c == '\t' && trim(line_text.substr(i)).empty())) {
        ++i;
        continue;
      }
      const auto [stop, error] =
          std::from_chars(line_text.data() + i, line_text.data() + line_text.size(),
                          numbers[std::min(count, 1 + nodes)]);
      const std::size_t digits = static_cast<std::size_t>(stop - (line_text.data() + i));
      if (error == std::errc::result_out_of_range)
        fail_at(begin + i,
                "a number in the element line '" + excerpt(line_text) + "' is out of range");
      if (error != std::errc() || c == '-' ||
          (i + digits < line_text.size() && line_text[i + digits] != ' ' &&
           line_text[i + digits] != '\r' && !trim(line_text.substr(i + digits)).empty()))
        fail_at(begin + i, "the element line '" + excerpt(line_text) +
                               "' must hold positive numbers separated by spaces (Gmsh 4.8 "
                               "misreads signs and tabs there)");
      ++count;
      i += digits;
    }
    if (count != 1 + nodes)
      fail_at(begin, "the element line '" + excerpt(line_text) + "' holds " +
                         std::to_string(count) + " numbers, where its type " +
                         std::to_string(type) + " needs " + std::to_string(1 + nodes) +
                         " (a tag and " + std::to_string(nodes) + " nodes)");
    const long long tag = numbers[0];
    if (tag < std::max(1LL, h.min_tag) || tag > h.max_tag)
      fail_at(begin, "element tag " + std::to_string(tag) + " is outside the range " +
                         std::to_string(h.min_tag) + " to " + std::to_string(h.max_tag) +
                         " that the section's header declares");
    for (int k = 1; k <= nodes; ++k) check_node_used(tag, numbers[k], begin);
    element_tags_.push_back(tag);
    layout_.triangles += type == kTriangle3;
    ++layout_.elements_by_type[static_cast<int>(type)];
    pos_ = end;
    token_end_ = end;
  }

  void read_elements_msh41() {
    const Header h = header("elements");
    element_tags_.reserve(static_cast<std::size_t>(h.count));
    long long done = 0;
    for (long long b = 0; b < h.blocks; ++b) {
      about(nullptr, 0);
      const std::size_t block_at = pos_;
      const long long key = entity();
      const int dim = dimension_of(key);
      const std::size_t type_at = pos_;
      const long long type = integer(false, "an element type", kInt32Min, kInt32Max);
      check_type(type, dim, type_at);
      check_entity_defined(key, block_at);
      const long long size = block_size(h, done, "elements");
      const int nodes = element_type(type).nodes;
      check_room(size, (layout_.binary ? 8 : 2) * static_cast<std::size_t>(1 + nodes), "elements");
      for (long long e = 0; e < size; ++e) {
        about(nullptr, 0);
        if (!layout_.binary) {
          read_element_line(h, nodes, type);
          continue;
        }
        const long long tag = tag_in_range(h, "element tag");
        about("element", tag);
        for (int k = 0; k < nodes; ++k) {
          const std::size_t at = pos_;
          check_node_used(tag, integer(true, "a node", 0, kSizeMax), at);
        }
        element_tags_.push_back(tag);
        layout_.triangles += type == kTriangle3;
        ++layout_.elements_by_type[static_cast<int>(type)];
      }
      done += size;
    }
    about(nullptr, 0);
    if (done != h.count)
      fail("the element blocks hold " + std::to_string(done) + " elements, the header says " +
           std::to_string(h.count));
  }

  std::string_view text_;
  const std::string& name_;
  MshLayout layout_;
  std::size_t pos_ = 0;
  std::size_t limit_ = 0;       // end of the current section's data
  std::size_t end_marker_ = 0;  // where its "$End..." line starts
  std::size_t token_end_ = 0;   // just after the last ASCII token read
  std::string line_ending_;     // MSH 4: of the current section's line, "\n" or "\r\n"
  std::size_t binary_from_ = std::numeric_limits<std::size_t>::max();
  bool section_closed_ = false;
  std::string section_;
  const char* subject_ = nullptr;  // what the fields being read belong to
  long long subject_tag_ = 0;
  bool seen_nodes_ = false, seen_elements_ = false, seen_entities_ = false, seen_names_ = false;
  std::vector<Node> nodes_;           // while reading $Nodes
  std::vector<long long> node_tags_;  // sorted, distinct
  std::vector<long long> element_tags_;
  std::vector<std::pair<long long, int>> msh2_triangles_;  // MSH 2: (tag, physical tag)
  std::unordered_set<long long> entities_;  // MSH 4: entity_key of each entity defined
};

}  // namespace

MshLayout check_msh(std::string_view content, const std::string& name) {
  if (content.empty()) throw Error("mesh file '" + name + "' is empty");
  return MshChecker(content, name).run();
}

}  // namespace fmbem::io
