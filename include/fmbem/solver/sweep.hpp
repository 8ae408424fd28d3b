#pragma once
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace fmbem {

// parse_sweep_values (options.hpp, beside the other option parsers) reads -k and -bem_frequency.
constexpr std::size_t kMaxSweepValues = 100000;

// Where one solve's outputs sit in a run: sweep point `k` of `k_count`, source `source` of
// `source_count` (0-based).
struct OutputIndex {
  std::size_t k = 0, k_count = 1, source = 0, source_count = 1;
};

// The output file of one solve: the path itself for one k and one source, else the path with
// _k0001 (in a sweep) and _s0001 (with several sources; 1-based, at least four digits) before
// its extension (out.vtu -> out_k0001_s0002.vtu; a name without extension gets them at its end).
std::string sweep_output_path(const std::string& path, const OutputIndex& at);
inline std::string sweep_output_path(const std::string& path, std::size_t index,
                                     std::size_t count) {
  return sweep_output_path(path, OutputIndex{index, count});
}

// One row of the sweep's table.
struct SweepRow {
  double k = 0.0;
  std::size_t source = 0;  // 0-based, of the run's sources
  double frequency = 0.0;  // Hz, when the sweep was given as frequencies
  long iterations = 0;
  std::string reason;  // KSP's converged reason ("CONVERGED_RTOL", "DIVERGED_ITS", ...)
  bool solved = false;
  double setup_seconds = 0.0, solve_seconds = 0.0;
  double residual = 0.0;   // the true relative residual at the end of the solve
  bool has_error = false;  // an exact solution was known and the solve succeeded
  double error_max = 0.0, error_relative_l2 = 0.0;
};

// The summary's closing table, one line per row (frequency column when `frequencies`, source
// column when `sources`).
std::string sweep_table(const std::vector<SweepRow>& rows, bool frequencies, bool sources = false);

// The same as CSV: k[,frequency_hz][,source],iterations,converged,setup_s,solve_s,error_max,
// error_rel_l2 (source 1-based; the errors NaN where no exact solution is known or the solve
// failed).
void write_sweep_csv(const std::string& path, const std::vector<SweepRow>& rows, bool frequencies,
                     bool sources = false);

}  // namespace fmbem
