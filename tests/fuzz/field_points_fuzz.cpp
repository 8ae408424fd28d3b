// Mutation fuzz test of the field-point reader (read_field_points, what -bem_field reads): valid
// CSV files (header, comments, blanks, CRLF, signs and exponents) and Gmsh files (MSH 2.2 and
// 4.1, ASCII and binary, surfaces and the hand-written mesh with quadrangles, tetrahedra and
// second-order triangles) are damaged (truncation, bit flips, random bytes, a coordinate
// replaced by nan, inf, 1e999, 1e300, "+-2", a hex float..., a field added or removed, lines
// repeated, removed, swapped or made over-long, a header where it does not belong) and read.
// Each case must end in points, every one finite and within field::kLargestFieldCoordinate, with
// cells that index them, or in one fmbem::Error with a one-line message; anything else (another
// exception, a NaN/inf or out-of-range point, a crash or hang of this process) fails.
// Deterministic: case k uses the seed (seed, k); --case k reruns one. One case in 8 is a Gmsh file
// (read by Gmsh in its sandboxed child, about 4 ms), one in 8 a Mesh2HRTF grid folder (its
// Nodes.txt or its Elements.txt damaged: an id twice or unknown, counts that disagree, ...); the
// others CSV.
//
//   fuzz_field_points [--cases N] [--seed S] [--case K] [--work DIR] [--verbose 1]
//
// Prints the count of each outcome and the throughput; exits 1 on a failure, after saving the
// offending input as DIR/failure_<k>.csv, .msh or .grid (both grid files, one after the other).

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "fmbem/core/error.hpp"
#include "fmbem/field/field_limits.hpp"
#include "fmbem/io/field_points.hpp"
#include "fmbem/mesh/mesh.hpp"
#include "fuzz_options.hpp"
#include "msh_samples.hpp"
#include "text_mutations.hpp"

namespace {

namespace fs = std::filesystem;
using fmbem::fuzz::one_clear_line;

std::vector<std::string> csv_seeds() {
  return {
      "x,y,z\n2,0,0\n0,1.5,0\n-1e18,0,0\n",
      "# microphones\r\nx, y, z\r\n\r\n +4.5 ,-6e-1,\t7\r\n1e150,-1e150,0\r\n",
      "1,2,3\n4,5,6\n\n# end\n7.,.8,+9e-3\n",
      "X [m],Y [m],Z [m]\n0,0,2\n1e-310,-0,1E2\n1e12,1e15,1e18\n",
      "2,0,0",
  };
}

// Mesh2HRTF grids as its write_evaluation_grid writes them: Nodes.txt, Elements.txt.
std::vector<std::pair<std::string, std::string>> grid_seeds() {
  return {
      {"4\n200000 1.0 0 0\n200001 0 1.5 0\n200002 0 0 -2e-1\n200003 -1 -1 -1\n",
       "2\n200000 200000 200001 200002 2 0 1\n200001 200000 200002 200003 200001 2 0 1\n"},
      {"3\r\n7\t1 1 1\r\n8\t2 2 2\r\n\r\n9\t3 3 3\r\n", ""},
  };
}

std::vector<std::string> msh_seeds() {
  using namespace fmbem::io::samples;
  const MeshData sphere = from_surface(fmbem::make_icosphere(1, 1.5));
  // A quadrangle, triangles, a tetrahedron, a line, a point and a second-order triangle.
  return {
      msh22(sphere, false),
      msh41(sphere, false),
      msh41(sphere, true),
      msh22(sphere, true, true),
      "$MeshFormat\n2.2 0 8\n$EndMeshFormat\n$Nodes\n10\n"
      "1 0 0 0\n2 1 0 0\n3 1 1 0\n4 0 1 0\n5 2 0 0\n6 0 0 1\n7 3 0 0\n8 3 1 0\n9 5 5 5\n"
      "10 3 0.5 0\n$EndNodes\n$Elements\n7\n"
      "1 3 2 1 1 1 2 3 4\n2 2 2 1 1 2 5 3\n3 4 2 1 1 1 2 4 6\n4 1 2 1 1 1 2\n5 15 2 1 1 1\n"
      "6 9 2 1 2 5 7 8 10 2 3\n7 2 2 1 1 7 8 5\n$EndElements\n",
  };
}

class Mutator : fmbem::fuzz::TextMutations {
 public:
  explicit Mutator(std::uint64_t seed) : TextMutations(seed) {}

  std::string mutate(std::string text) {
    return rounds(std::move(text), [this](std::string t) { return once(std::move(t)); });
  }

 private:
  static bool separator(char c) { return c == ',' || c == ' ' || c == '\t' || c == '\n'; }

  std::string once(std::string text) {
    static const char* const numbers[] = {"nan",
                                          "-nan",
                                          "NaN",
                                          "nan(1)",
                                          "inf",
                                          "-inf",
                                          "Infinity",
                                          "1e999",
                                          "-1e999",
                                          "1e-999",
                                          "1e300",
                                          "-1e300",
                                          "1e250",
                                          "1e150",
                                          "-1e150",
                                          "1.0000000000000002e150",
                                          "1e151",
                                          "1e18",
                                          "1e-310",
                                          "0x1p3",
                                          "0x10",
                                          "+-2",
                                          "++2",
                                          "-+2",
                                          "+",
                                          "-",
                                          ".",
                                          "1e",
                                          "e5",
                                          "1.5.5",
                                          "1 2",
                                          "",
                                          "x",
                                          "#",
                                          "1,2",
                                          ",",
                                          "-0",
                                          "+.5",
                                          "2x",
                                          "\"1\"",
                                          "\xef\xbb\xbf"
                                          "1"};
    static const char* const lines[] = {
        "x,y,z\n", "nan,nan,nan\n", "inf,0,0\n", "1e999,0,0\n", "#\n",         "\n",
        ",,\n",    "1,2,3,4\n",     "1,2\n",     "$Nodes\n",    "$EndNodes\n", "$Elements\n"};
    const std::size_t at = below(text.size());
    switch (below(12)) {
      case 0:
        common(text, Common::truncation, at);
        break;
      case 1:
        common(text, Common::bit_flips, at);
        break;
      case 2:
      case 3: {  // a coordinate (or a tag, a count) replaced
        const auto [begin, end] = token(text, separator);
        text.replace(begin, end - begin, pick(numbers));
        break;
      }
      case 4:
        common(text, Common::repeated_line, at);
        break;
      case 5:
        common(text, Common::removed_line, at);
        break;
      case 6:
        common(text, Common::swapped_lines, at);
        break;
      case 7:  // a line where it does not belong, the first line included
        text.insert(below(4) == 0 ? 0 : line_around(text, at).first, pick(lines));
        break;
      case 8:  // odd white space: CRLF, tabs, blanks around a field
        switch (below(3)) {
          case 0:
            for (std::size_t p = text.find('\n'); p != std::string::npos;
                 p = text.find('\n', p + 2))
              text.insert(p, "\r");
            break;
          case 1:
            for (char& c : text)
              if (c == ' ' && below(4) == 0) c = '\t';
            break;
          default:
            text.insert(token(text, separator).first, below(2) ? " " : "\t");
        }
        break;
      case 9:
        common(text, Common::random_bytes, at);
        break;
      case 10: {  // a field added or removed
        const auto [begin, end] = token(text, separator);
        if (below(2))
          text.insert(end, ",0");
        else if (end < text.size())
          text.erase(begin, end + 1 - begin);
        break;
      }
      default:  // a long line: at and beyond the CSV reader's 4096 bytes
        text.insert(line_around(text, at).first,
                    std::string(4090 + below(12), below(2) ? '1' : 'x') + "\n");
    }
    return text;
  }
};

// What is wrong with points that were read, or empty.
std::string check_points(const fmbem::io::FieldPoints& read) {
  if (read.points.empty()) return "no points, and no error";
  for (std::size_t i = 0; i < read.points.size(); ++i)
    if (!fmbem::field::within_field_range(read.points[i]))
      return "point " + std::to_string(i + 1) + " " + fmbem::field::format_point(read.points[i]) +
             " is not finite or beyond the largest field coordinate";
  if (!read.cell_offsets.empty()) {
    if (read.cell_offsets.size() != read.cell_shapes.size() + 1 ||
        read.cell_offsets.back() != read.cell_nodes.size())
      return "cell offsets that do not match the cells";
    for (std::size_t node : read.cell_nodes)
      if (node >= read.points.size()) return "a cell node beyond the points";
  }
  for (const std::string& warning : read.warnings)
    if (!one_clear_line(warning)) return "a warning that is not one clear line";
  if (!one_clear_line(read.description)) return "a description that is not one clear line";
  return {};
}

}  // namespace

int main(int argc, char** argv) {
  const auto options = fmbem::fuzz::parse_fuzz_options(
      argc, argv, "fuzz_field_points", 4000, fs::temp_directory_path() / "fmbem_fuzz_field_points");
  if (!options) return 2;
  const long long cases = options->cases, only = options->only;
  const std::uint64_t seed = options->seed;
  const bool verbose = options->verbose;
  const fs::path work = options->work;
  fs::create_directories(work);
  const std::vector<std::string> csv = csv_seeds();
#if FMBEM_HAVE_GMSH
  const std::vector<std::string> msh = msh_seeds();
#else
  const std::vector<std::string> msh;  // no Gmsh: CSV alone
#endif
  const std::vector<std::pair<std::string, std::string>> grids = grid_seeds();
  const long long unmutated = static_cast<long long>(csv.size() + msh.size() + grids.size());

  std::map<std::string, long long> outcomes;
  long long failures = 0;
  const auto start = std::chrono::steady_clock::now();
  double slowest = 0.0;
  long long slowest_case = -1;
  for (long long k = only >= 0 ? only : 0; k < (only >= 0 ? only + 1 : cases); ++k) {
    Mutator mutator(seed * 0x9e3779b97f4a7c15ull + static_cast<std::uint64_t>(k));
    // The seeds first, unmutated (CSV, Gmsh, grids); then one case in 8 a Gmsh file and one in 8
    // a grid.
    const long long seeds_csv = static_cast<long long>(csv.size()),
                    seeds_msh = static_cast<long long>(msh.size());
    const char* kind = k < unmutated                ? (k < seeds_csv               ? "csv"
                                                       : k < seeds_csv + seeds_msh ? "msh"
                                                                                   : "grid")
                       : !msh.empty() && k % 8 == 7 ? "msh"
                       : k % 8 == 3                 ? "grid"
                                                    : "csv";
    const bool is_msh = std::strcmp(kind, "msh") == 0, is_grid = std::strcmp(kind, "grid") == 0;
    std::string text, path;
    if (is_grid) {
      const std::size_t pick = k < unmutated ? static_cast<std::size_t>(k - seeds_csv - seeds_msh)
                                             : static_cast<std::size_t>(k / 8) % grids.size();
      auto [nodes, elements] = grids[pick];
      if (k >= unmutated)
        (k / 8) % 2 == 0 ? nodes = mutator.mutate(nodes) : elements = mutator.mutate(elements);
      const fs::path folder = work / "grid";
      fs::create_directories(folder);
      std::ofstream(folder / "Nodes.txt", std::ios::binary | std::ios::trunc) << nodes;
      fs::remove(folder / "Elements.txt");
      if (!elements.empty())
        std::ofstream(folder / "Elements.txt", std::ios::binary | std::ios::trunc) << elements;
      text = "Nodes.txt:\n" + nodes + "\nElements.txt:\n" + elements;
      path = folder.string();
    } else {
      const std::vector<std::string>& inputs = is_msh ? msh : csv;
      const std::size_t pick = k < unmutated ? static_cast<std::size_t>(is_msh ? k - seeds_csv : k)
                                             : static_cast<std::size_t>(k / 8) % inputs.size();
      text = k < unmutated ? inputs[pick] : mutator.mutate(inputs[pick]);
      path = (work / (is_msh ? "case.msh" : "case.csv")).string();
      std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
    }
    const auto case_start = std::chrono::steady_clock::now();
    std::string failure, outcome, message;
    try {
      const fmbem::io::FieldPoints read = fmbem::io::read_field_points(path);
      failure = check_points(read);
      outcome = std::string(kind) + ": points";
    } catch (const fmbem::Error& e) {
      message = e.what();
      outcome = std::string(kind) + ": error";
      if (!one_clear_line(message)) failure = "an error message that is not one clear line";
      if (k < unmutated) failure = "an unmutated seed was refused: " + message;
    } catch (const std::exception& e) {
      failure = std::string("an exception other than fmbem::Error: ") + e.what();
    } catch (...) {
      failure = "an exception other than fmbem::Error";
    }
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - case_start).count();
    if (seconds > slowest) slowest = seconds, slowest_case = k;
    ++outcomes[failure.empty() ? outcome : "failure"];
    if (verbose) std::printf("case %lld: %s %s\n", k, outcome.c_str(), message.c_str());
    if (!failure.empty()) {
      ++failures;
      const std::string saved = (work / ("failure_" + std::to_string(k) +
                                         (is_msh    ? ".msh"
                                          : is_grid ? ".grid"
                                                    : ".csv")))
                                    .string();
      std::ofstream(saved, std::ios::binary) << text;
      std::printf("FAIL case %lld: %s (input saved as %s)\n", k, failure.c_str(), saved.c_str());
    }
  }
  const double total =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const long long run = only >= 0 ? 1 : cases;
  std::printf(
      "fuzz_field_points: %lld cases from %lld seeds (seed %llu) in %.1f s, %.0f cases/s; "
      "slowest case %lld: %.3f s\n",
      run, unmutated, static_cast<unsigned long long>(seed), total, run / total, slowest_case,
      slowest);
  for (const auto& [name, count] : outcomes) std::printf("  %7lld  %s\n", count, name.c_str());
  std::printf("%s\n",
              failures == 0 ? "fuzz_field_points: no failures" : "fuzz_field_points: FAILURES");
  return failures == 0 ? 0 : 1;
}
