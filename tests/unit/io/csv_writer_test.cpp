#include "fmbem/io/csv_writer.hpp"

#include <gtest/gtest.h>

#include <charconv>
#include <clocale>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <locale>
#include <numbers>
#include <sstream>
#include <string>
#include <vector>

#include "fmbem/core/error.hpp"
#include "scratch_test.hpp"

namespace fmbem::io {
namespace {

namespace fs = std::filesystem;

class CsvWriter : public ScratchTest {
 protected:
  // Awkward values: non-terminating binary fractions, extremes, signed zero.
  static std::vector<cplx> awkward_values(std::size_t count) {
    std::vector<cplx> values(count);
    for (std::size_t e = 0; e < count; ++e)
      values[e] = {std::numbers::pi * (e + 1) / 3.0, -1.0 / (e + 7)};
    values[0] = {std::numeric_limits<double>::max(), std::numeric_limits<double>::denorm_min()};
    values[1] = {-0.0, 1e-300};
    return values;
  }

  Mesh mesh_ = Mesh::from_surface(make_icosphere(1, 1.5, {0.25, -0.5, 2.0}), "icosphere");
};

double parse_double(const std::string& text) {
  double value = 0.0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  EXPECT_TRUE(error == std::errc() && end == text.data() + text.size()) << text;
  return value;
}

std::vector<std::string> split(const std::string& line) {
  std::vector<std::string> cells;
  std::istringstream in(line);
  for (std::string cell; std::getline(in, cell, ',');) cells.push_back(cell);
  return cells;
}

TEST_F(CsvWriter, RoundTripsExactly) {
  const std::string path = (scratch_ / "values.csv").string();
  const std::vector<cplx> values = awkward_values(mesh_.size());
  write_csv(path, mesh_, values);

  std::ifstream in(path);
  std::string line;
  ASSERT_TRUE(std::getline(in, line));
  EXPECT_EQ(line, "x,y,z,re,im");
  std::size_t row = 0;
  for (; std::getline(in, line); ++row) {
    ASSERT_LT(row, mesh_.size());
    const std::vector<std::string> cells = split(line);
    ASSERT_EQ(cells.size(), 5u) << line;
    const Vec3 centroid{parse_double(cells[0]), parse_double(cells[1]), parse_double(cells[2])};
    EXPECT_EQ(centroid, mesh_.centroids()[row]);
    EXPECT_EQ(parse_double(cells[3]), values[row].real());
    EXPECT_EQ(std::signbit(parse_double(cells[3])), std::signbit(values[row].real()));
    EXPECT_EQ(parse_double(cells[4]), values[row].imag());
  }
  EXPECT_EQ(row, mesh_.size());
}

TEST_F(CsvWriter, SeventeenSignificantDigits) {
  const std::string path = (scratch_ / "digits.csv").string();
  std::vector<cplx> values(mesh_.size(), cplx(0.1, 1.0 / 3.0));
  write_csv(path, mesh_, values);
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  std::getline(in, line);
  const std::vector<std::string> cells = split(line);
  EXPECT_EQ(cells[3], "0.10000000000000001");
  EXPECT_EQ(cells[4], "0.33333333333333331");
}

// A decimal comma would break the CSV. The C++ global locale can be given one
// here; a C locale with a decimal comma is tried too where one is installed.
struct DecimalComma : std::numpunct<char> {
  char do_decimal_point() const override { return ','; }
};

TEST_F(CsvWriter, IgnoresLocale) {
  const std::locale saved =
      std::locale::global(std::locale(std::locale::classic(), new DecimalComma));
  const bool c_locale_has_comma = std::setlocale(LC_NUMERIC, "de_DE.UTF-8") != nullptr;
  const std::string path = (scratch_ / "locale.csv").string();
  write_csv(path, mesh_, std::vector<cplx>(mesh_.size(), cplx(0.5, -2.25)));
  std::setlocale(LC_NUMERIC, "C");
  std::locale::global(saved);

  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  std::getline(in, line);
  const std::vector<std::string> cells = split(line);
  ASSERT_EQ(cells.size(), 5u) << line;
  EXPECT_EQ(cells[3], "0.5");
  EXPECT_EQ(cells[4], "-2.25");
  if (!c_locale_has_comma) RecordProperty("c_locale", "no de_DE.UTF-8 here: C++ locale only");
}

TEST_F(CsvWriter, WrongNumberOfValues) {
  const std::vector<cplx> values(mesh_.size() - 1);
  try {
    write_csv((scratch_ / "short.csv").string(), mesh_, values);
    FAIL() << "expected fmbem::Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("79 values for the 80 elements"), std::string::npos)
        << e.what();
  }
}

TEST_F(CsvWriter, UnwritablePath) {
  const std::string path = (scratch_ / "no_such_folder" / "x.csv").string();
  try {
    write_csv(path, mesh_, awkward_values(mesh_.size()));
    FAIL() << "expected fmbem::Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'" + path + "'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("No such file or directory"), std::string::npos)
        << e.what();
  }
}

TEST_F(CsvWriter, FullDisk) {
  if (!fs::exists("/dev/full")) GTEST_SKIP() << "no /dev/full here";
  try {
    write_csv("/dev/full", mesh_, awkward_values(mesh_.size()));
    FAIL() << "expected fmbem::Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("No space left on device"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace fmbem::io
