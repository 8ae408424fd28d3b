// Mutation fuzz test of the NumCalc project reader (what -bem_numcalc reads): two valid projects
// (an NC.inp as Mesh2HRTF writes it, with its object's and its evaluation grid's node and
// element files; one with BOUNDARY lines, curves and a point source, one with a plane wave and
// comments, blank lines, tabs and CRLF) have one of their files damaged (truncation, bit flips,
// random bytes, a word replaced by a keyword, a number, nan, 1e999, a huge count..., lines
// repeated, removed or swapped) and are read: NC.inp, the mesh files, the conditions, the mesh
// validated (Mesh::from_surface). Each case must end in a project whose frequencies and medium
// are finite and positive, whose triangles and cells index its points and whose points are
// finite, or in one fmbem::Error with a one-line message; anything else (another exception, a
// crash or hang of this process) fails. Deterministic: case k uses the seed (seed, k).
//
//   fuzz_numcalc [--cases N] [--seed S] [--case K] [--work DIR] [--verbose 1]
//
// Prints the count of each outcome; exits 1 on a failure, after saving the damaged file as
// DIR/failure_<k>_<name>.

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "fmbem/core/error.hpp"
#include "fmbem/field/field_limits.hpp"
#include "fmbem/io/numcalc_project.hpp"
#include "fmbem/mesh/mesh.hpp"
#include "fmbem/solver/numcalc_run.hpp"
#include "fuzz_options.hpp"
#include "text_mutations.hpp"

namespace {

namespace fs = std::filesystem;
using fmbem::fuzz::one_clear_line;

// A project: NC.inp and the files it names, by their paths relative to NC.inp's folder.
using Project = std::map<std::string, std::string>;

std::string nc_inp(const std::string& boundary, const std::string& waves, const std::string& main2,
                   const std::string& curves) {
  return "##\nMesh2HRTF 1.2.4\n##\nfuzz project\n## Controlparameter I\n0 0 0 0 7 0\n"
         "## Controlparameter II\n1 2 0.000001 0.00e+00 1 0 0\n## Load Frequency Curve\n0 3\n"
         "0.000000 0.000000e+00 0.0\n0.000001 0.010000e+04 0.0\n0.000002 0.030000e+04 0.0\n"
         "## 1. Main Parameters I\n2 10 10 0 0 2 1 4 0\n## 2. Main Parameters II\n" +
         main2 +
         "\n## 3.\n0 0 0 0\n## 4. Main Parameters IV\n343.0 1.204 1.0 0.0e+00 0.0 e+00\n"
         "NODES\nobject/Nodes.txt\ngrid/Nodes.txt\nELEMENTS\nobject/Elements.txt\n"
         "grid/Elements.txt\n# SYMMETRY\nBOUNDARY\n" +
         boundary + "RETU\n" + waves + curves + "POST PROCESS\n##\nEND\n";
}

std::vector<Project> seeds() {
  // An octahedron (8 triangles, outward normals) and a grid of two triangles at z = 3.
  const std::string nodes = "6\n0 1 0 0\n1 -1 0 0\n2 0 1 0\n3 0 -1 0\n4 0 0 1\n5 0 0 -1\n";
  const std::string elements =
      "8\n0 0 2 4 0 0 0\n1 2 1 4 0 0 0\n2 1 3 4 0 0 0\n3 3 0 4 0 0 0\n"
      "4 2 0 5 0 0 1\n5 1 2 5 0 0 1\n6 3 1 5 0 0 1\n7 0 3 5 0 0 1\n";
  const std::string grid_nodes = "4\n200000 2 2 3\n200001 3 2 3\n200002 3 3 3\n200003 2 3 3\n";
  const std::string grid_elements =
      "2\n8 200000 200001 200002 2 0 7\n9 200000 200002 200003 2 0 7\n";
  Project first{
      {"NC.inp", nc_inp("ELEM 0 TO 1 VELO 0.1 -1 0.0 -1\nELEM 2 TO 3 ADMI 1.0 1 0.5 2\n"
                        "ELEM 4 TO 4 IMPE 2.0 -1 -1.0 -1\nELEM 5 TO 5 PRES 1.0 1 0.0 1\n",
                        "POINT SOURCES\n0 0.0 0.0 3.0 0.1 -1 0.0 -1\n", "0 1 0 0.0000e+00 0 0 0",
                        "CURVES\n2 3\n1 2\n50 0.2 0\n300 0.8 0\n2 3\n0 1.0\n100 0.5\n1000 0.0\n")},
      {"object/Nodes.txt", nodes},
      {"object/Elements.txt", elements},
      {"grid/Nodes.txt", grid_nodes},
      {"grid/Elements.txt", grid_elements}};
  std::string second_nc =
      nc_inp("", "PLANE WAVES\n0\t0.0 0.0 -1.0 1.0 -1 0.0 -1\n##\n", "1 0 0 0.0000e+00 0 0 0", "");
  std::string crlf;
  for (char c : second_nc) crlf += c == '\n' ? std::string("\r\n") : std::string(1, c);
  Project second = first;
  second["NC.inp"] = crlf;
  return {first, second};
}

class Mutator : fmbem::fuzz::TextMutations {
 public:
  explicit Mutator(std::uint64_t seed) : TextMutations(seed) {}
  std::string mutate(std::string text) {
    return rounds(std::move(text), [this](std::string t) { return once(std::move(t)); });
  }
  std::uint64_t choose(std::uint64_t n) { return below(n); }

 private:
  static bool separator(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

  std::string once(std::string text) {
    static const char* const words[] = {"ELEM",       "TO",
                                        "VELO",       "PRES",
                                        "ADMI",       "IMPE",
                                        "TRAD",       "RETU",
                                        "END",        "NODES",
                                        "ELEMENTS",   "BOUNDARY",
                                        "CURVES",     "PLANE",
                                        "POINT",      "POST",
                                        "SYMMETRY",   "-1",
                                        "0",          "1",
                                        "2",          "3",
                                        "-5",         "7",
                                        "200000",     "nan",
                                        "inf",        "1e999",
                                        "-1e999",     "1e300",
                                        "0.0",        "-0",
                                        "+-2",        "1e",
                                        "#",          "99999999999999999999",
                                        "2147483648", "-2147483649",
                                        "1000001",    "x",
                                        "",           "../object/Nodes.txt",
                                        "/dev/zero",  "grid/Nodes.txt"};
    static const char* const lines[] = {"RETU\n",
                                        "END\n",
                                        "ELEM 0 TO 7 VELO 1 -1 0 -1\n",
                                        "ELEM 0 TO 99 PRES 1 3 0 3\n",
                                        "CURVES\n",
                                        "1 1\n",
                                        "PLANE WAVES\n",
                                        "POINT SOURCES\n",
                                        "SYMMETRY\n",
                                        "#\n",
                                        "\n",
                                        "0 0.0 0.0 1.0 1.0 -1 0.0 -1\n",
                                        "8 0 1 2 3 0 0 0\n",
                                        "6 1 1 1\n"};
    const std::size_t at = below(text.size());
    switch (below(9)) {
      case 0:
        common(text, Common::truncation, at);
        break;
      case 1:
        common(text, Common::bit_flips, at);
        break;
      case 2:
      case 3: {
        const auto [begin, end] = token(text, separator);
        text.replace(begin, end - begin, pick(words));
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
      case 7:
        text.insert(below(4) == 0 ? 0 : line_around(text, at).first, pick(lines));
        break;
      default:
        common(text, Common::random_bytes, at);
    }
    return text;
  }
};

// What is wrong with a project that was read, or empty.
std::string check_project(const fmbem::io::NumCalcInput& input,
                          const fmbem::io::NumCalcMesh& mesh) {
  for (double f : input.frequencies_hz)
    if (!(std::isfinite(f) && f > 0)) return "a frequency that is not finite and positive";
  if (input.frequencies_hz.empty()) return "no frequency";
  if (!(std::isfinite(input.sound_speed) && input.sound_speed > 0 && std::isfinite(input.density) &&
        input.density > 0))
    return "a medium that is not finite and positive";
  const std::size_t n = mesh.surface.vertices.size();
  for (const fmbem::Vec3& v : mesh.surface.vertices)
    if (!(std::isfinite(v.x) && std::isfinite(v.y) && std::isfinite(v.z)))
      return "a vertex that is not finite";
  for (const fmbem::Triangle& t : mesh.surface.triangles)
    for (std::int32_t c : t)
      if (c < 0 || std::size_t(c) >= n) return "a triangle beyond the vertices";
  if (mesh.element_ids.size() != mesh.surface.triangles.size()) return "ids that miss triangles";
  for (const fmbem::Vec3& p : mesh.grid.points)
    if (!fmbem::field::within_field_range(p)) return "a grid point out of range";
  for (std::size_t node : mesh.grid.cell_nodes)
    if (node >= mesh.grid.points.size()) return "a cell node beyond the points";
  if (mesh.grid_node_ids.size() != mesh.grid.points.size()) return "ids that miss grid points";
  for (const std::string& w : mesh.warnings)
    if (!one_clear_line(w)) return "a warning that is not one clear line";
  return {};
}

}  // namespace

int main(int argc, char** argv) {
  const auto options = fmbem::fuzz::parse_fuzz_options(
      argc, argv, "fuzz_numcalc", 3000, fs::temp_directory_path() / "fmbem_fuzz_numcalc");
  if (!options) return 2;
  const std::vector<Project> projects = seeds();
  const long long unmutated = static_cast<long long>(projects.size());
  std::map<std::string, long long> outcomes;
  long long failures = 0;
  const long long first = options->only >= 0 ? options->only : 0;
  const long long last = options->only >= 0 ? options->only + 1 : options->cases;
  for (long long k = first; k < last; ++k) {
    Mutator mutator(options->seed * 0x9e3779b97f4a7c15ull + static_cast<std::uint64_t>(k));
    Project project = projects[static_cast<std::size_t>(k) % projects.size()];
    std::string damaged = "none";
    if (k >= unmutated) {
      // NC.inp one case in two, each mesh file one in eight.
      const std::uint64_t which = mutator.choose(8);
      auto it = project.begin();
      if (which >= 4) {
        it = project.find("NC.inp");
      } else {
        std::advance(it, which);
        if (it->first == "NC.inp") ++it;
      }
      damaged = it->first;
      it->second = mutator.mutate(it->second);
    }
    const fs::path folder = options->work / "project";
    fs::remove_all(folder);
    for (const auto& [name, text] : project) {
      fs::create_directories((folder / name).parent_path());
      std::ofstream(folder / name, std::ios::binary) << text;
    }
    std::string failure, outcome, message;
    try {
      const fmbem::io::NumCalcInput input = fmbem::io::read_numcalc_input(folder.string());
      const fmbem::io::NumCalcMesh mesh = fmbem::io::read_numcalc_mesh(input);
      failure = check_project(input, mesh);
      std::vector<std::string> notes;
      fmbem::numcalc_conditions(input, notes);
      fmbem::Mesh::from_surface(mesh.surface, "numcalc");
      outcome = "project";
    } catch (const fmbem::Error& e) {
      message = e.what();
      outcome = "error";
      if (!one_clear_line(message)) failure = "an error message that is not one clear line";
      if (k < unmutated) failure = "an unmutated seed was refused: " + message;
    } catch (const std::exception& e) {
      failure = std::string("an exception other than fmbem::Error: ") + e.what();
    } catch (...) {
      failure = "an exception other than fmbem::Error";
    }
    ++outcomes[failure.empty() ? outcome : "failure"];
    if (options->verbose)
      std::printf("case %lld (%s damaged): %s %s\n", k, damaged.c_str(), outcome.c_str(),
                  message.c_str());
    if (!failure.empty()) {
      ++failures;
      std::string name = damaged;
      for (char& c : name)
        if (c == '/') c = '_';
      const fs::path saved = options->work / ("failure_" + std::to_string(k) + "_" + name);
      std::ofstream(saved, std::ios::binary) << project[damaged == "none" ? "NC.inp" : damaged];
      std::printf("FAIL case %lld: %s (the damaged file saved as %s)\n", k, failure.c_str(),
                  saved.c_str());
    }
  }
  std::printf("fuzz_numcalc: %lld cases (seed %llu)\n", last - first,
              static_cast<unsigned long long>(options->seed));
  for (const auto& [name, count] : outcomes) std::printf("  %7lld  %s\n", count, name.c_str());
  std::printf("%s\n", failures == 0 ? "fuzz_numcalc: no failures" : "fuzz_numcalc: FAILURES");
  return failures == 0 ? 0 : 1;
}
