#pragma once
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace fmbem {

// parse_sweep_values (options.hpp, beside the other option parsers) reads -k and -bem_frequency.
constexpr std::size_t kMaxSweepValues = 100000;

// The output file of sweep point `index` (0-based) of `count`: the path itself for one point,
// else the path with _k0001 (1-based, at least four digits) before its extension
// (out.vtu -> out_k0001.vtu; a name without extension gets the suffix at its end).
std::string sweep_output_path(const std::string& path, std::size_t index, std::size_t count);

// One row of the sweep's table.
struct SweepRow {
  double k = 0.0;
  double frequency = 0.0;  // Hz, when the sweep was given as frequencies
  long iterations = 0;
  std::string reason;  // KSP's converged reason ("CONVERGED_RTOL", "DIVERGED_ITS", ...)
  bool solved = false;
  double setup_seconds = 0.0, solve_seconds = 0.0;
  bool has_error = false;  // an exact solution was known and the solve succeeded
  double error_max = 0.0, error_relative_l2 = 0.0;
};

// The summary's closing table, one line per row (frequency column when `frequencies`).
std::string sweep_table(const std::vector<SweepRow>& rows, bool frequencies);

// The same as CSV: k[,frequency_hz],iterations,converged,setup_s,solve_s,error_max,error_rel_l2
// (the errors NaN where no exact solution is known or the solve failed).
void write_sweep_csv(const std::string& path, const std::vector<SweepRow>& rows, bool frequencies);

}  // namespace fmbem
