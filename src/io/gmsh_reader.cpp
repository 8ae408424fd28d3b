#include "fmbem/io/gmsh_reader.hpp"

#include <fcntl.h>
#include <gmsh.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <clocale>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <limits>
#include <mutex>
#include <numeric>
#include <sstream>
#include <string_view>
#include <system_error>
#include <unordered_map>
#include <vector>

#if defined(_OPENMP)
#include <omp.h>
#endif

namespace fmbem::io {
namespace {

constexpr int kGmshTriangle3 = 2;  // Gmsh element type of the 3-node triangle

std::string quoted(const std::string& path) { return "'" + path + "'"; }

// Owns one Gmsh API session. gmsh::initialize sets the process locale from the
// environment and calls omp_set_num_threads(1); both are put back on exit so
// that reading a mesh does not silently serialise the caller's OpenMP loops.
class GmshSession {
 public:
  GmshSession() : saved_locale_(current_locale()) {
#if defined(_OPENMP)
    saved_threads_ = omp_get_max_threads();
#endif
    gmsh::initialize(0, nullptr, /*readConfigFiles=*/false);
    try {
      gmsh::option::setNumber("General.Terminal", 0);      // silent, errors included
      gmsh::option::setNumber("General.AbortOnError", 2);  // errors throw, never exit()
    } catch (...) {
      close();
      throw;
    }
    restore_threads();
  }
  ~GmshSession() { close(); }
  GmshSession(const GmshSession&) = delete;
  GmshSession& operator=(const GmshSession&) = delete;

 private:
  void close() {
    gmsh::finalize();
    std::setlocale(LC_ALL, saved_locale_.c_str());
    restore_threads();
  }
  void restore_threads() {
#if defined(_OPENMP)
    omp_set_num_threads(saved_threads_);
#endif
  }
  static std::string current_locale() {
    const char* name = std::setlocale(LC_ALL, nullptr);
    return name ? name : "C";
  }
  std::string saved_locale_;
#if defined(_OPENMP)
  int saved_threads_ = 1;
#endif
};

// Gmsh 4.8 reports errors by throwing std::string (later versions throw
// std::exception); anything else falls back to its last logged error.
std::string gmsh_error_message(std::exception_ptr error) {
  try {
    std::rethrow_exception(error);
  } catch (const std::string& message) {
    return message;
  } catch (const std::exception& e) {
    return e.what();
  } catch (...) {
  }
  std::string last;
  try {
    gmsh::logger::getLastError(last);
  } catch (...) {
  }
  return last.empty() ? "unknown Gmsh error" : last;
}

struct MshFormat {
  int major_version = 0;
  bool binary = false;
};

// Checks what Gmsh itself would not report clearly: Gmsh 4.8 silently opens
// nothing for a missing file, and treats any text that is not a mesh as a .geo
// script to execute. Only files starting with a $MeshFormat section reach it.
MshFormat check_is_msh_file(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::file_status status = fs::status(path, ec);
  if (!fs::exists(status)) throw Error("cannot read mesh file " + quoted(path) + ": no such file");
  if (fs::is_directory(status))
    throw Error("cannot read mesh file " + quoted(path) + ": it is a directory");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error("cannot read mesh file " + quoted(path) + ": " + std::strerror(errno));

  std::string first_line, version_line;
  std::getline(in, first_line);
  std::getline(in, version_line);
  if (!first_line.empty() && first_line.back() == '\r') first_line.pop_back();
  if (!version_line.empty() && version_line.back() == '\r') version_line.pop_back();
  if (first_line != "$MeshFormat")
    throw Error("mesh file " + quoted(path) +
                " is not a Gmsh .msh file (it does not start with $MeshFormat)");
  std::istringstream fields(version_line);
  double version = 0.0;
  int file_type = 0;
  fields >> version >> file_type;
  const MshFormat format{static_cast<int>(version), file_type == 1};
  if (format.major_version != 2 && format.major_version != 4)
    throw Error("mesh file " + quoted(path) + " has MSH format version '" + version_line +
                "'; fmbem reads versions 2.x and 4.x");
  return format;
}

// Gmsh 4.8's MSH 2 reader (ASCII and binary) crashes with a segmentation fault
// when an element uses the node tag one past the largest defined one (an
// off-by-one bound check), so MSH 2 files are scanned for element nodes the
// file does not define before Gmsh sees them. Whatever else is malformed stops
// the scan and is left for Gmsh to report. MSH 4 is checked by Gmsh itself.
class Msh2NodeCheck {
 public:
  Msh2NodeCheck(const std::string& path, bool binary)
      : in_(path, std::ios::binary), binary_(binary) {}

  // "element 7 uses node 12, ..." or "" when no undefined node was found.
  std::string find_undefined_node() {
    std::string line;
    if (!skip_format_section()) return {};
    while (std::getline(in_, line)) {
      if (!line.empty() && line.back() == '\r') line.pop_back();
      if (line == "$Nodes" && !read_nodes()) return {};
      if (line == "$Elements") return check_elements();
    }
    return {};
  }

 private:
  bool skip_format_section() {
    std::string line;
    std::getline(in_, line);  // $MeshFormat
    std::getline(in_, line);  // version file-type data-size
    std::istringstream fields(line);
    double version = 0.0;
    int file_type = 0, data_size = 0;
    fields >> version >> file_type >> data_size;
    if (data_size != sizeof(double)) return false;
    if (binary_) {
      std::int32_t one = 0;
      in_.read(reinterpret_cast<char*>(&one), sizeof one);
      if (one != 1) return false;  // other endianness: leave it to Gmsh
    }
    return static_cast<bool>(in_);
  }

  bool read_count(long long& count) {
    std::string line;
    return std::getline(in_, line) && parse_integer(line, count) && count >= 0;
  }

  // Whitespace-separated integer at the front of `text`, which it then drops.
  static bool next_integer(std::string_view& text, long long& value) {
    const std::size_t begin = text.find_first_not_of(" \t\r");
    if (begin == std::string_view::npos) return false;
    text.remove_prefix(begin);
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (error != std::errc()) return false;
    text.remove_prefix(static_cast<std::size_t>(end - text.data()));
    return true;
  }
  static bool parse_integer(std::string_view text, long long& value) {
    return next_integer(text, value);
  }

  bool read_nodes() {
    long long count = 0;
    if (!read_count(count)) return false;
    node_tags_.reserve(node_tags_.size() + static_cast<std::size_t>(std::min(count, 1LL << 24)));
    std::string line;
    for (long long n = 0; n < count; ++n) {
      long long tag = 0;
      if (binary_) {
        std::int32_t record[7];  // tag, then x, y, z as doubles
        if (!in_.read(reinterpret_cast<char*>(record), sizeof record)) return false;
        tag = record[0];
      } else if (!std::getline(in_, line) || !parse_integer(line, tag)) {
        return false;
      }
      node_tags_.push_back(tag);
    }
    std::sort(node_tags_.begin(), node_tags_.end());
    return true;
  }

  std::string undefined(long long element, long long node) const {
    if (std::binary_search(node_tags_.begin(), node_tags_.end(), node)) return {};
    return "element " + std::to_string(element) + " uses node " + std::to_string(node) +
           ", which the file does not define";
  }

  std::string check_elements() {
    long long count = 0;
    if (!read_count(count)) return {};
    return binary_ ? check_binary_elements(count) : check_ascii_elements(count);
  }

  // Each line: tag type number-of-tags tags... node-tags...
  std::string check_ascii_elements(long long count) {
    std::string line;
    for (long long e = 0; e < count && std::getline(in_, line); ++e) {
      std::string_view rest = line;
      long long tag = 0, type = 0, tag_count = 0, ignored = 0, node = 0;
      if (!next_integer(rest, tag) || !next_integer(rest, type) || !next_integer(rest, tag_count))
        return {};
      for (long long t = 0; t < tag_count; ++t)
        if (!next_integer(rest, ignored)) return {};
      while (next_integer(rest, node))
        if (std::string problem = undefined(tag, node); !problem.empty()) return problem;
    }
    return {};
  }

  // Blocks of one element type: header (type, elements, tags), then per
  // element its tag, its tags and its nodes, all 32-bit integers.
  std::string check_binary_elements(long long count) {
    while (count > 0) {
      std::int32_t header[3];
      if (!in_.read(reinterpret_cast<char*>(header), sizeof header)) return {};
      const int nodes = nodes_per_element(header[0]);
      if (nodes <= 0 || header[1] <= 0 || header[2] < 0 || header[2] > 1000) return {};
      std::vector<std::int32_t> record(1 + header[2] + nodes);
      for (std::int32_t e = 0; e < header[1]; ++e) {
        if (!in_.read(reinterpret_cast<char*>(record.data()),
                      static_cast<std::streamsize>(record.size() * sizeof(std::int32_t))))
          return {};
        for (int k = 0; k < nodes; ++k)
          if (std::string problem = undefined(record[0], record[1 + header[2] + k]);
              !problem.empty())
            return problem;
      }
      count -= header[1];
    }
    return {};
  }

  // Needs the Gmsh session: Gmsh knows the node count of each element type.
  static int nodes_per_element(int type) {
    try {
      std::string name;
      int dim = 0, order = 0, num_nodes = 0, num_primary = 0;
      std::vector<double> local_coords;
      gmsh::model::mesh::getElementProperties(type, name, dim, order, num_nodes, local_coords,
                                              num_primary);
      return num_nodes;
    } catch (...) {
      return 0;  // unknown type: Gmsh will say so
    }
  }

  std::ifstream in_;
  bool binary_;
  std::vector<long long> node_tags_;
};

// Gmsh merges "<name>.opt" beside any file it opens and runs it as a script
// (even through gmsh::merge). Handing Gmsh /proc/self/fd/N of the file opened
// here leaves no such sibling, and Gmsh reads the very file that was checked.
// Without /proc, Gmsh gets the path itself.
class FileForGmsh {
 public:
  explicit FileForGmsh(const std::string& path)
      : path_(path), fd_(::open(path.c_str(), O_RDONLY | O_CLOEXEC)) {
    if (fd_ < 0) throw Error("cannot read mesh file " + quoted(path) + ": " + std::strerror(errno));
    const std::string fd_name = "/proc/self/fd/" + std::to_string(fd_);
    gmsh_name_ = ::access(fd_name.c_str(), R_OK) == 0 ? fd_name : path;
  }
  ~FileForGmsh() { ::close(fd_); }
  FileForGmsh(const FileForGmsh&) = delete;
  FileForGmsh& operator=(const FileForGmsh&) = delete;

  const std::string& gmsh_name() const { return gmsh_name_; }
  // A Gmsh message with the /proc name replaced by the user's path.
  std::string in_user_terms(std::string message) const {
    if (gmsh_name_ == path_) return message;
    for (std::size_t at = message.find(gmsh_name_); at != std::string::npos;
         at = message.find(gmsh_name_, at + path_.size()))
      message.replace(at, gmsh_name_.size(), path_);
    return message;
  }

 private:
  std::string path_, gmsh_name_;
  int fd_;
};

// "Line 2, Point" for the error message of a file without triangles.
std::string element_type_names() {
  std::vector<int> types;
  gmsh::model::mesh::getElementTypes(types);
  std::string names;
  for (int type : types) {
    std::string name;
    int dim = 0, order = 0, num_nodes = 0, num_primary = 0;
    std::vector<double> local_coords;
    gmsh::model::mesh::getElementProperties(type, name, dim, order, num_nodes, local_coords,
                                            num_primary);
    names += (names.empty() ? "" : ", ") + name;
  }
  return names.empty() ? "no elements at all" : names;
}

Surface extract_triangles(const std::string& path) {
  std::vector<std::size_t> element_tags, element_nodes;
  gmsh::model::mesh::getElementsByType(kGmshTriangle3, element_tags, element_nodes);
  if (element_tags.empty())
    throw Error(
        "mesh file " + quoted(path) +
        " has no 3-node triangles (Gmsh element type 2); it holds: " + element_type_names());

  // Vertices: the nodes the triangles use, in increasing tag order, so that the
  // result does not depend on how the file groups nodes into entities.
  std::vector<std::size_t> used_tags = element_nodes;
  std::sort(used_tags.begin(), used_tags.end());
  used_tags.erase(std::unique(used_tags.begin(), used_tags.end()), used_tags.end());
  if (used_tags.size() > static_cast<std::size_t>(std::numeric_limits<std::int32_t>::max()))
    throw Error("mesh file " + quoted(path) + " has too many vertices for 32-bit indices");

  std::vector<std::size_t> node_tags;
  std::vector<double> coords, parametric;
  gmsh::model::mesh::getNodes(node_tags, coords, parametric, -1, -1, false, false);
  std::unordered_map<std::size_t, std::size_t> coord_index;
  coord_index.reserve(node_tags.size());
  for (std::size_t i = 0; i < node_tags.size(); ++i) coord_index.emplace(node_tags[i], i);

  Surface surface;
  surface.vertices.reserve(used_tags.size());
  for (std::size_t tag : used_tags) {
    const auto found = coord_index.find(tag);
    if (found == coord_index.end())
      throw Error("mesh file " + quoted(path) + " has a triangle that uses node " +
                  std::to_string(tag) + ", which the file does not define");
    const double* xyz = &coords[3 * found->second];
    if (!std::isfinite(xyz[0]) || !std::isfinite(xyz[1]) || !std::isfinite(xyz[2]))
      throw Error("mesh file " + quoted(path) + " has a non-finite coordinate at node " +
                  std::to_string(tag));
    surface.vertices.push_back({xyz[0], xyz[1], xyz[2]});
  }

  std::vector<std::size_t> by_tag(element_tags.size());
  std::iota(by_tag.begin(), by_tag.end(), std::size_t{0});
  std::sort(by_tag.begin(), by_tag.end(),
            [&](std::size_t a, std::size_t b) { return element_tags[a] < element_tags[b]; });
  surface.triangles.reserve(element_tags.size());
  for (std::size_t element : by_tag) {
    Triangle triangle;
    for (int k = 0; k < 3; ++k) {
      const std::size_t tag = element_nodes[3 * element + k];
      const auto position = std::lower_bound(used_tags.begin(), used_tags.end(), tag);
      triangle[k] = static_cast<std::int32_t>(position - used_tags.begin());
    }
    surface.triangles.push_back(triangle);
  }
  return surface;
}

}  // namespace

Surface read_gmsh(const std::string& path) {
  const MshFormat format = check_is_msh_file(path);

  // The Gmsh API is one global session; serialise our use of it.
  static std::mutex gmsh_mutex;
  const std::lock_guard lock(gmsh_mutex);
  const GmshSession session;
  if (format.major_version == 2) {
    const std::string problem = Msh2NodeCheck(path, format.binary).find_undefined_node();
    if (!problem.empty()) throw Error("mesh file " + quoted(path) + " is malformed: " + problem);
  }
  const FileForGmsh file(path);
  try {
    gmsh::open(file.gmsh_name());
  } catch (...) {
    throw Error("cannot read mesh file " + quoted(path) +
                ": Gmsh says: " + file.in_user_terms(gmsh_error_message(std::current_exception())));
  }
  try {
    return extract_triangles(path);
  } catch (const Error&) {
    throw;
  } catch (...) {
    throw Error("cannot read the triangles of mesh file " + quoted(path) +
                ": Gmsh says: " + gmsh_error_message(std::current_exception()));
  }
}

}  // namespace fmbem::io
