// Mutation fuzz test of the mesh reader: valid .msh files (MSH 2.2, 4.1 and 4.0,
// ASCII and binary of both byte orders, written by Gmsh and by hand) are damaged
// (truncation, bit flips, out-of-range and repeated tags, lying counts, odd white
// space, NaN/inf, script lines, long lines, binary words) and read with
// read_surface + Mesh::from_surface. Each case must end in a valid Mesh or an
// fmbem::Error with a one-line message; anything else (another exception, an empty
// or multi-line message, a crash or hang of this process, a command run from a
// mesh) fails. Deterministic: case k uses the seed (seed, k); --case k reruns one.
//
//   fuzz_msh [--cases N] [--seed S] [--case K] [--work DIR] [--verbose 1]
//
// Prints the count of each outcome and the throughput; exits 1 on a failure, after
// saving the offending input as DIR/failure_<k>.msh.

#include <gmsh.h>

#include <chrono>
#include <clocale>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "fmbem/core/error.hpp"
#include "fmbem/io/mesh_source.hpp"
#include "fmbem/mesh/mesh.hpp"
#include "fuzz_options.hpp"
#include "msh_samples.hpp"
#include "text_mutations.hpp"

namespace {

namespace fs = std::filesystem;
using fmbem::fuzz::one_clear_line;
using fmbem::io::samples::MeshData;

std::string file_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Gmsh writes `from` again as `version`, ASCII or binary.
std::string gmsh_rewrite(const std::string& from, const std::string& to, double version,
                         bool binary) {
  gmsh::open(from);
  gmsh::option::setNumber("Mesh.MshFileVersion", version);
  gmsh::option::setNumber("Mesh.Binary", binary ? 1 : 0);
  gmsh::write(to);
  gmsh::clear();
  return file_text(to);
}

std::vector<std::string> seeds(const fs::path& work) {
  using namespace fmbem::io::samples;
  std::vector<std::string> out;
  for (int level : {0, 1}) {
    MeshData mesh = from_surface(fmbem::make_icosphere(level, 1.0));
    for (bool big_endian : {false, true}) {
      out.push_back(msh22(mesh, true, big_endian));
      out.push_back(msh41(mesh, true, big_endian));
    }
    out.push_back(msh41(mesh, false));
    // In a physical surface (its name given twice, a volume named too), with a point, a line
    // and a tetrahedron (ignored, warned about); Gmsh's rewrites carry the group as entities'
    // (one group: Gmsh puts an entity of triangles in two groups in both, repeating them).
    for (auto& element : mesh.elements) element.physical = 1;
    mesh.names = {{2, 1, "a"}, {2, 2, "a"}, {3, 4, "volume"}};
    mesh.elements.push_back({15, {1}});
    mesh.elements.push_back({1, {1, 2}});
    mesh.elements.push_back({4, {1, 2, 3, 4}});
    out.push_back(msh22(mesh, false));
    const std::string ascii = (work / ("seed" + std::to_string(level) + ".msh")).string();
    std::ofstream(ascii, std::ios::binary) << out.back();
    const std::string rewritten = (work / "rewritten.msh").string();
    const std::string locale = std::setlocale(LC_ALL, nullptr);
    gmsh::initialize(0, nullptr, false);
    gmsh::option::setNumber("General.Terminal", 0);
    for (const auto& [version, binary] :
         {std::pair{4.1, false}, std::pair{4.1, true}, std::pair{2.2, true}, std::pair{4.0, false}})
      out.push_back(gmsh_rewrite(ascii, rewritten, version, binary));
    gmsh::finalize();
    std::setlocale(LC_ALL, locale.c_str());
  }
  return out;
}

class Mutator : fmbem::fuzz::TextMutations {
 public:
  Mutator(std::uint64_t seed, std::string marker)
      : TextMutations(seed), marker_(std::move(marker)) {}

  std::string mutate(std::string text) {
    return rounds(std::move(text), [this](std::string t) { return once(std::move(t)); });
  }

 private:
  static bool blank(char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; }

  std::string once(std::string text) {
    static const char* const integers[] = {"0",
                                           "-1",
                                           "1",
                                           "2",
                                           "3",
                                           "5",
                                           "+5",
                                           "2147483647",
                                           "2147483648",
                                           "-2147483648",
                                           "4294967297",
                                           "9223372036854775807",
                                           "18446744073709551615",
                                           "1e3",
                                           "0x10",
                                           "",
                                           "99999999",
                                           "7.5",
                                           "4 4",
                                           "+-1",
                                           "0000000002"};
    static const char* const reals[] = {"nan",    "-nan",   "inf",   "-inf",   "1e400",
                                        "1e-400", "1e-310", "1e200", "1e-200", "-0",
                                        "0x1p3",  "nan(1)", "1.5.5", "."};
    static const char* const sections[] = {
        "$Nodes\n",    "$Elements\n", "$EndNodes\n",    "$EndElements\n",     "$MeshFormat\n",
        "$Comments\n", "$NOD\n",      "$Periodic\n1\n", "$PhysicalNames\n1\n"};
    const std::size_t at = below(text.size());
    switch (below(15)) {
      case 0:
        common(text, Common::truncation, at);
        break;
      case 1:
        common(text, Common::bit_flips, at);
        break;
      case 2: {  // an integer (a tag, a count, a type) replaced
        const auto [begin, end] = token(text, blank);
        text.replace(begin, end - begin, pick(integers));
        break;
      }
      case 3:  // repeated tags, duplicate nodes or elements
        common(text, Common::repeated_line, at);
        break;
      case 4:
        common(text, Common::removed_line, at);
        break;
      case 5:
        common(text, Common::swapped_lines, at);
        break;
      case 6: {  // a count that lies
        const char* section = below(2) ? "$Nodes\n" : "$Elements\n";
        std::size_t count_at = text.find(section);
        if (count_at == std::string::npos) break;
        count_at += std::strlen(section);
        std::size_t end = count_at;
        while (end < text.size() && std::isdigit(static_cast<unsigned char>(text[end]))) ++end;
        const long long old_count = std::atoll(text.substr(count_at, end - count_at).c_str());
        const long long deltas[] = {-3, -1, 1, 2, -old_count, 1000000};
        text.replace(count_at, end - count_at, std::to_string(old_count + pick(deltas)));
        break;
      }
      case 7:  // odd white space
        switch (below(5)) {
          case 0:
            for (std::size_t p = text.find('\n'); p != std::string::npos;
                 p = text.find('\n', p + 2))
              text.insert(p, "\r");
            break;
          case 1:
            text.insert(line_around(text, at).second - 1, below(2) ? "  " : "\t ");
            break;
          case 2:
            text.insert(line_around(text, at).first, "\n\n");
            break;
          case 3:
            for (char& c : text)
              if (c == ' ' && below(4) == 0) c = '\t';
            break;
          default: {
            const auto [begin, end] = token(text, blank);
            if (end > begin && std::isdigit(static_cast<unsigned char>(text[begin])))
              text.insert(begin, "+");
          }
        }
        break;
      case 8: {  // a coordinate replaced
        const auto [begin, end] = token(text, blank);
        text.replace(begin, end - begin, pick(reals));
        break;
      }
      case 9: {  // a binary word
        const std::uint64_t words[] = {0,
                                       1,
                                       0xffffffffull,
                                       0x7fffffffull,
                                       0x80000000,
                                       0x01000000,
                                       0x7ff8000000000000ull,
                                       0x7ff0000000000000ull,
                                       0xffffffffffffffffull,
                                       3,
                                       1000000};
        const std::uint64_t word = pick(words);
        const std::size_t size = below(2) ? 4 : 8;
        const std::size_t start = at - at % 4;
        if (start + size <= text.size()) std::memcpy(&text[start], &word, size);
        break;
      }
      case 10:
        common(text, Common::random_bytes, at);
        break;
      case 11: {  // a script line: must never run
        const std::string script = "System \"touch " + marker_ + "\";\n";
        text.insert(line_around(text, at).first,
                    below(2) ? script : "$Comments\n" + script + "$EndComments\n");
        break;
      }
      case 12:  // a section marker where it does not belong
        text.insert(line_around(text, at).first, pick(sections));
        break;
      case 13: {  // a repeated chunk
        const std::size_t size = std::min<std::size_t>(10 + below(200), text.size() - at);
        text.insert(at, text.substr(at, size));
        break;
      }
      default:  // a line as long as Gmsh's line buffer, before a line
        text.insert(line_around(text, at).first, std::string(250 + below(10), 'x'));
    }
    return text;
  }

  std::string marker_;
};

std::string outcome_of(const std::string& message) {
  for (const auto& [needle, name] :
       {std::pair{"Gmsh's reader crashed", "error: Gmsh's reader crashed (sandboxed)"},
        std::pair{"Gmsh's reader did not finish", "error: Gmsh's reader timed out"},
        std::pair{"Gmsh's reader used more than", "error: Gmsh's reader hit its CPU limit"},
        std::pair{"Gmsh's reader needed more than", "error: Gmsh's reader hit its memory limit"},
        std::pair{"Gmsh's reader", "error: Gmsh's reader, other"},
        std::pair{"Gmsh says", "error: reported by Gmsh"},
        std::pair{"2D elements other than", "error: non-triangle 2D elements"},
        std::pair{"has no 3-node triangles", "error: no triangles"},
        std::pair{"is malformed", "error: malformed (check before Gmsh)"},
        std::pair{"mesh '", "error: invalid surface (Mesh::from_surface)"}})
    if (message.find(needle) != std::string::npos) return name;
  return "error: other (header, version, size)";
}

}  // namespace

int main(int argc, char** argv) {
  const auto options = fmbem::fuzz::parse_fuzz_options(
      argc, argv, "fuzz_msh", 3000, fs::temp_directory_path() / "fmbem_fuzz_msh");
  if (!options) return 2;
  const long long cases = options->cases, only = options->only;
  const std::uint64_t seed = options->seed;
  const bool verbose = options->verbose;
  const fs::path work = options->work;
  fs::create_directories(work);
  // A fixed path, so that the cases do not depend on DIR.
  const std::string marker = "/tmp/fmbem_fuzz_msh_script_ran";
  fs::remove(marker);
  const std::vector<std::string> inputs = seeds(work);
  const std::string path = (work / "case.msh").string();  // also the last case, after a crash

  std::map<std::string, long long> outcomes;
  long long failures = 0;
  const auto start = std::chrono::steady_clock::now();
  double slowest = 0.0;
  long long slowest_case = -1;
  for (long long k = only >= 0 ? only : 0; k < (only >= 0 ? only + 1 : cases); ++k) {
    Mutator mutator(seed * 0x9e3779b97f4a7c15ull + static_cast<std::uint64_t>(k), marker);
    const std::string& original = inputs[static_cast<std::size_t>(k) % inputs.size()];
    const std::string text =
        k < static_cast<long long>(inputs.size()) ? original : mutator.mutate(original);
    std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
    const auto case_start = std::chrono::steady_clock::now();
    std::string failure, outcome, message;
    try {
      const fmbem::io::SurfaceRead read = fmbem::io::read_surface(path);
      const fmbem::Mesh mesh = fmbem::Mesh::from_surface(read.surface, path);
      outcome = mesh.size() > 0 ? "valid mesh" : "";
      if (outcome.empty()) failure = "a Mesh without triangles";
      for (const std::string& warning : read.warnings)
        if (!one_clear_line(warning)) failure = "a warning that is not one clear line: " + warning;
      if (!read.warnings.empty()) outcome = "valid mesh, with a warning";
    } catch (const fmbem::Error& e) {
      outcome = outcome_of(e.what());
      message = e.what();
      if (!one_clear_line(e.what())) failure = "an error message that is not one clear line";
      if (k < static_cast<long long>(inputs.size()))
        failure = "an unmutated seed was refused: " + std::string(e.what());
    } catch (const std::exception& e) {
      failure = std::string("an exception other than fmbem::Error: ") + e.what();
    } catch (...) {
      failure = "an exception other than fmbem::Error";
    }
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - case_start).count();
    if (seconds > slowest) slowest = seconds, slowest_case = k;
    if (fs::exists(marker)) failure = "a script line in the mesh ran a command";
    ++outcomes[outcome.empty() ? "failure" : outcome];
    if (verbose) std::printf("case %lld: %s %s\n", k, outcome.c_str(), message.c_str());
    if (!failure.empty()) {
      ++failures;
      const std::string saved = (work / ("failure_" + std::to_string(k) + ".msh")).string();
      std::ofstream(saved, std::ios::binary) << text;
      std::printf("FAIL case %lld: %s (input saved as %s)\n", k, failure.c_str(), saved.c_str());
      fs::remove(marker);
    }
  }
  const double total =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const long long run = only >= 0 ? 1 : cases;
  std::printf(
      "fuzz_msh: %lld cases from %zu seeds (seed %llu) in %.1f s, %.0f cases/s; slowest "
      "case %lld: %.3f s\n",
      run, inputs.size(), static_cast<unsigned long long>(seed), total, run / total, slowest_case,
      slowest);
  for (const auto& [name, count] : outcomes) std::printf("  %7lld  %s\n", count, name.c_str());
  std::printf("%s\n", failures == 0 ? "fuzz_msh: no failures" : "fuzz_msh: FAILURES");
  if (only >= 0)
    std::printf("case %lld's input: %s\n", only, path.c_str());  // kept to look at
  else
    fs::remove(path);
  return failures == 0 ? 0 : 1;
}
