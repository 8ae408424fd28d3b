#include "fmbem/io/csv_writer.hpp"

#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>

#include "fmbem/core/error.hpp"

namespace fmbem::io {
namespace {

// Appends `value` with 17 significant digits (enough to round-trip a double),
// via std::to_chars so that no locale can turn the decimal point into a comma.
void append_number(std::string& line, double value) {
  char buffer[32];
  const auto result =
      std::to_chars(buffer, buffer + sizeof buffer, value, std::chars_format::general, 17);
  line.append(buffer, result.ptr);
}

struct FileCloser {
  void operator()(std::FILE* file) const { std::fclose(file); }
};

}  // namespace

void write_csv(const std::string& path, const Mesh& mesh, std::span<const CellField> columns) {
  for (const CellField& column : columns)
    if (column.values.size() != mesh.size())
      throw Error("cannot write CSV file '" + path + "': " + std::to_string(column.values.size()) +
                  " values of " + column.name + " for the " + std::to_string(mesh.size()) +
                  " elements of mesh '" + mesh.name() + "'");

  std::unique_ptr<std::FILE, FileCloser> file(std::fopen(path.c_str(), "w"));
  if (!file) throw Error("cannot write CSV file '" + path + "': " + std::strerror(errno));

  // Rows go out in blocks: one string for the whole file could be gigabytes.
  constexpr std::size_t kBlockBytes = std::size_t{1} << 20;
  bool written = true;
  int write_errno = 0;
  std::string block = "x,y,z";
  for (const CellField& column : columns) block += "," + column.name;
  block += '\n';
  auto flush_block = [&] {
    if (written && std::fwrite(block.data(), 1, block.size(), file.get()) != block.size()) {
      written = false;
      write_errno = errno;
    }
    block.clear();
  };
  const std::vector<Vec3>& centroids = mesh.centroids();
  for (std::size_t e = 0; e < mesh.size(); ++e) {
    append_number(block, centroids[e].x);
    for (double number : {centroids[e].y, centroids[e].z}) {
      block += ',';
      append_number(block, number);
    }
    for (const CellField& column : columns) {
      block += ',';
      append_number(block, column.values[e]);
    }
    block += '\n';
    if (block.size() >= kBlockBytes) flush_block();
  }
  flush_block();

  // The close can fail too (full disk, quota), after every write succeeded.
  const bool closed = std::fclose(file.release()) == 0;
  if (!written || !closed)
    throw Error("cannot write CSV file '" + path +
                "': " + std::strerror(written ? errno : write_errno));
}

void write_csv(const std::string& path, const Mesh& mesh, std::span<const cplx> values) {
  std::vector<CellField> columns{{"re", {}}, {"im", {}}};
  columns[0].values.reserve(values.size());
  columns[1].values.reserve(values.size());
  for (const cplx& v : values) {
    columns[0].values.push_back(v.real());
    columns[1].values.push_back(v.imag());
  }
  if (values.size() != mesh.size())
    throw Error("cannot write CSV file '" + path + "': " + std::to_string(values.size()) +
                " values for the " + std::to_string(mesh.size()) + " elements of mesh '" +
                mesh.name() + "'");
  write_csv(path, mesh, columns);
}

}  // namespace fmbem::io
