#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <set>

#include "fmbem/io/field_writer.hpp"

namespace fmbem::io {
namespace {

// 17 significant digits via std::to_chars (round trip, no locale); integers as integers.
void append_number(std::string& line, double value, bool integer) {
  if (std::isnan(value)) {
    line += "nan";
    return;
  }
  char buffer[32];
  const auto result =
      integer
          ? std::to_chars(buffer, buffer + sizeof buffer, static_cast<long long>(value))
          : std::to_chars(buffer, buffer + sizeof buffer, value, std::chars_format::general, 17);
  line.append(buffer, result.ptr);
}

struct FileCloser {
  void operator()(std::FILE* file) const { std::fclose(file); }
};

}  // namespace

void write_table_csv(const std::string& path, const std::vector<NamedColumn>& columns) {
  const std::string prefix = "cannot write CSV file '" + path + "': ";
  std::set<std::string> names;
  const std::size_t rows = columns.empty() ? 0 : columns.front().values.size();
  for (const NamedColumn& column : columns) {
    if (column.name.empty() || column.name.find_first_of(",\"\n\r") != std::string::npos)
      throw Error(prefix + "column name '" + column.name +
                  "' is empty or holds , \" or a line break");
    if (!names.insert(column.name).second)
      throw Error(prefix + "two columns are called '" + column.name + "'");
    if (column.values.size() != rows)
      throw Error(prefix + "column '" + column.name + "' has " +
                  std::to_string(column.values.size()) + " values, the first " +
                  std::to_string(rows));
  }
  std::unique_ptr<std::FILE, FileCloser> file(std::fopen(path.c_str(), "w"));
  if (!file) throw Error(prefix + std::strerror(errno));

  // Rows go out in blocks of about 1 MiB.
  constexpr std::size_t kBlockBytes = std::size_t{1} << 20;
  bool written = true;
  int write_errno = 0;
  std::string block;
  const auto flush_block = [&] {
    if (written && std::fwrite(block.data(), 1, block.size(), file.get()) != block.size()) {
      written = false;
      write_errno = errno;
    }
    block.clear();
  };
  for (std::size_t c = 0; c < columns.size(); ++c) block += (c ? "," : "") + columns[c].name;
  block += '\n';
  for (std::size_t r = 0; r < rows; ++r) {
    for (std::size_t c = 0; c < columns.size(); ++c) {
      if (c) block += ',';
      append_number(block, columns[c].values[r], columns[c].integer);
    }
    block += '\n';
    if (block.size() >= kBlockBytes) flush_block();
  }
  flush_block();
  const bool closed = std::fclose(file.release()) == 0;
  if (!written || !closed) throw Error(prefix + std::strerror(written ? errno : write_errno));
}

std::vector<NamedColumn> field_table(const FieldPoints& points,
                                     const std::vector<NamedColumn>& arrays) {
  std::vector<NamedColumn> columns(3);
  const char* axes[3] = {"x", "y", "z"};
  for (int d = 0; d < 3; ++d) {
    columns[d].name = axes[d];
    columns[d].values.resize(points.points.size());
  }
  for (std::size_t i = 0; i < points.points.size(); ++i) {
    columns[0].values[i] = points.points[i].x;
    columns[1].values[i] = points.points[i].y;
    columns[2].values[i] = points.points[i].z;
  }
  columns.insert(columns.end(), arrays.begin(), arrays.end());
  return columns;
}

void write_field_csv(const std::string& path, const FieldPoints& points,
                     const std::vector<NamedColumn>& arrays) {
  write_table_csv(path, field_table(points, arrays));
}

}  // namespace fmbem::io
