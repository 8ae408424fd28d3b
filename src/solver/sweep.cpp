#include "fmbem/solver/sweep.hpp"

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <limits>

#include "fmbem/io/field_writer.hpp"

namespace fmbem {

std::string sweep_output_path(const std::string& path, const OutputIndex& at) {
  if (at.k_count <= 1 && at.source_count <= 1) return path;
  std::string suffix;
  char number[32];
  if (at.k_count > 1) {
    std::snprintf(number, sizeof number, "_k%04zu", at.k + 1);
    suffix += number;
  }
  if (at.source_count > 1) {
    std::snprintf(number, sizeof number, "_s%04zu", at.source + 1);
    suffix += number;
  }
  // The extension of the file name only (a dot in a folder name is not one).
  const std::filesystem::path target(path);
  const std::string extension = target.filename().extension().string();
  return path.substr(0, path.size() - extension.size()) + suffix + extension;
}

std::string sweep_table(const std::vector<SweepRow>& rows, bool frequencies, bool sources) {
  std::string table = "  sweep           " + std::to_string(rows.size()) +
                      (sources ? " solves\n" : " wavenumbers\n");
  char line[256];
  std::snprintf(line, sizeof line, "    %5s %12s%s%s %10s %-22s %9s %9s %11s %11s\n", "#", "k",
                frequencies ? "      f (Hz)" : "", sources ? "  source" : "", "iterations",
                "reason", "set-up s", "solve s", "max error", "rel. L2");
  table += line;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const SweepRow& row = rows[i];
    char f[32] = "";
    if (frequencies) std::snprintf(f, sizeof f, " %11.5g", row.frequency);
    char source[32] = "";
    if (sources) std::snprintf(source, sizeof source, " %7zu", row.source + 1);
    char errors[64];
    if (row.has_error)
      std::snprintf(errors, sizeof errors, "%11.3e %11.3e", row.error_max, row.error_relative_l2);
    else
      std::snprintf(errors, sizeof errors, "%11s %11s", "-", "-");
    std::snprintf(line, sizeof line, "    %5zu %12.6g%s%s %10ld %-22s %9.3f %9.3f %s\n", i + 1,
                  row.k, f, source, row.iterations, row.reason.c_str(), row.setup_seconds,
                  row.solve_seconds, errors);
    table += line;
  }
  return table;
}

void write_sweep_csv(const std::string& path, const std::vector<SweepRow>& rows, bool frequencies,
                     bool sources) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  std::vector<io::NamedColumn> columns = {{"k", {}}};
  if (frequencies) columns.push_back({"frequency_hz", {}});
  if (sources) columns.push_back({"source", {}, true});
  columns.push_back({"iterations", {}, true});
  columns.push_back({"converged", {}, true});
  columns.push_back({"setup_s", {}});
  columns.push_back({"solve_s", {}});
  columns.push_back({"error_max", {}});
  columns.push_back({"error_rel_l2", {}});
  for (const SweepRow& row : rows) {
    std::size_t c = 0;
    columns[c++].values.push_back(row.k);
    if (frequencies) columns[c++].values.push_back(row.frequency);
    if (sources) columns[c++].values.push_back(double(row.source + 1));
    columns[c++].values.push_back(double(row.iterations));
    columns[c++].values.push_back(row.solved ? 1.0 : 0.0);
    columns[c++].values.push_back(row.setup_seconds);
    columns[c++].values.push_back(row.solve_seconds);
    columns[c++].values.push_back(row.has_error ? row.error_max : nan);
    columns[c++].values.push_back(row.has_error ? row.error_relative_l2 : nan);
  }
  io::write_table_csv(path, columns);
}

}  // namespace fmbem
