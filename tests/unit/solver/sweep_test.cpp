// The sweep's value lists (-k, -bem_frequency), its numbered output paths and its CSV table.
#include "fmbem/solver/sweep.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "fmbem/core/error.hpp"
#include "fmbem/solver/options.hpp"

namespace fmbem {
namespace {

std::string error_of(const char* text) {
  try {
    parse_sweep_values("-k", text);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(SweepValues, OneNumberAndAList) {
  EXPECT_EQ(parse_sweep_values("-k", "8"), std::vector<double>{8.0});
  EXPECT_EQ(parse_sweep_values("-k", "1,2,4"), (std::vector<double>{1.0, 2.0, 4.0}));
  // The order given is kept, and 0 (Laplace) is a value like the others.
  EXPECT_EQ(parse_sweep_values("-k", "4,0,+2.5e0"), (std::vector<double>{4.0, 0.0, 2.5}));
}

TEST(SweepValues, RangesIncludeTheirEndExactly) {
  EXPECT_EQ(parse_sweep_values("-k", "1:3:0.5"), (std::vector<double>{1.0, 1.5, 2.0, 2.5, 3.0}));
  // 0.1 is not a binary fraction: 1 + 90 * 0.1 rounds to 10.000000000000002, within the 1e-9
  // steps of the grid, so the last point is 10 exactly and there are 91 points.
  const std::vector<double> fine = parse_sweep_values("-k", "1:10:0.1");
  ASSERT_EQ(fine.size(), 91u);
  EXPECT_EQ(fine.front(), 1.0);
  EXPECT_EQ(fine.back(), 10.0);
  // Each point is first + i step (not a running sum, whose error grows with i).
  for (std::size_t i = 0; i + 1 < fine.size(); ++i) EXPECT_EQ(fine[i], 1.0 + double(i) * 0.1);
  // An end off the grid is not reached: 1, 1.3, 1.6, 1.9.
  const std::vector<double> off = parse_sweep_values("-k", "1:2:0.3");
  ASSERT_EQ(off.size(), 4u);
  EXPECT_DOUBLE_EQ(off.back(), 1.9);
  // first == last: one point.
  EXPECT_EQ(parse_sweep_values("-k", "2:2:1"), std::vector<double>{2.0});
  // Mixtures of lists and ranges, in the order given.
  EXPECT_EQ(parse_sweep_values("-k", "1,2:4:0.5,8"),
            (std::vector<double>{1.0, 2.0, 2.5, 3.0, 3.5, 4.0, 8.0}));
}

TEST(SweepValues, BadEntriesNameTheOptionAndTheEntry) {
  EXPECT_NE(error_of("1,-2,4").find("-k 1,-2,4: entry '-2' is negative"), std::string::npos);
  EXPECT_NE(error_of("1,abc").find("entry 'abc' is not a finite number"), std::string::npos);
  EXPECT_NE(error_of("1,nan").find("'nan' is not a finite number"), std::string::npos);
  EXPECT_NE(error_of("1,inf").find("'inf' is not a finite number"), std::string::npos);
  EXPECT_NE(error_of("1,,2").find("an empty entry"), std::string::npos);
  EXPECT_NE(error_of("1,").find("an empty entry"), std::string::npos);
  EXPECT_NE(error_of(",1").find("an empty entry"), std::string::npos);
  EXPECT_NE(error_of("").find("needs a value"), std::string::npos);
  EXPECT_NE(error_of("1:2:0").find("the step must be > 0 (a sweep with zero steps)"),
            std::string::npos);
  EXPECT_NE(error_of("1:2:-1").find("the step must be > 0"), std::string::npos);
  EXPECT_NE(error_of("3:1:1").find("last < first (a sweep with zero steps)"), std::string::npos);
  EXPECT_NE(error_of("-1:2:1").find("starts below 0"), std::string::npos);
  EXPECT_NE(error_of("1:2").find("needs exactly first:last:step"), std::string::npos);
  EXPECT_NE(error_of("1:2:3:4").find("needs exactly first:last:step"), std::string::npos);
  EXPECT_NE(error_of("1:x:1").find("range end 'x' is not a finite number"), std::string::npos);
  EXPECT_NE(error_of("0:1:1e-9").find("more than 100000 values"), std::string::npos);
  EXPECT_NE(error_of("0:1e300:1e-300").find("more than 100000 values"), std::string::npos);
  EXPECT_EQ(error_of("0:99999:1"), "");  // 100000 values: the largest sweep
}

TEST(SweepOutputs, NumberedPerPointOnlyInASweep) {
  EXPECT_EQ(sweep_output_path("out.vtu", 0, 1), "out.vtu");
  EXPECT_EQ(sweep_output_path("out.vtu", 0, 3), "out_k0001.vtu");
  EXPECT_EQ(sweep_output_path("dir.v2/out.vtu", 2, 3), "dir.v2/out_k0003.vtu");
  EXPECT_EQ(sweep_output_path("dir.v2/out", 9, 12), "dir.v2/out_k0010");
  EXPECT_EQ(sweep_output_path("ts.csv", 12344, 20000), "ts_k12345.csv");
}

TEST(SweepOutputs, NumberedPerSourceWithSeveral) {
  EXPECT_EQ(sweep_output_path("out.vtu", OutputIndex{0, 1, 0, 1}), "out.vtu");
  EXPECT_EQ(sweep_output_path("out.vtu", OutputIndex{0, 1, 1, 2}), "out_s0002.vtu");
  EXPECT_EQ(sweep_output_path("d.x/out.vtu", OutputIndex{2, 3, 0, 8}), "d.x/out_k0003_s0001.vtu");
  EXPECT_EQ(sweep_output_path("grid", OutputIndex{0, 1, 9999, 10000}), "grid_s10000");
}

TEST(SweepTable, CsvHoldsEveryRow) {
  const std::string path =
      (std::filesystem::temp_directory_path() / "fmbem_sweep_test.csv").string();
  SweepRow a{.k = 2.0,
             .frequency = 109.2,
             .iterations = 12,
             .reason = "CONVERGED_RTOL",
             .solved = true,
             .setup_seconds = 0.5,
             .solve_seconds = 0.25,
             .has_error = true,
             .error_max = 0.01,
             .error_relative_l2 = 0.002};
  SweepRow b{.k = 4.0, .iterations = 2, .reason = "DIVERGED_ITS"};
  write_sweep_csv(path, {a, b}, true);
  std::ifstream in(path);
  std::string header, first, second;
  std::getline(in, header);
  std::getline(in, first);
  std::getline(in, second);
  EXPECT_EQ(header, "k,frequency_hz,iterations,converged,setup_s,solve_s,error_max,error_rel_l2");
  EXPECT_EQ(first.substr(0, 2), "2,");
  EXPECT_NE(first.find(",12,1,0.5,0.25,"), std::string::npos) << first;
  EXPECT_NE(second.find(",2,0,"), std::string::npos) << second;
  EXPECT_NE(second.find("nan,nan"), std::string::npos) << second;
  std::filesystem::remove(path);
  const std::string table = sweep_table({a, b}, false);
  EXPECT_NE(table.find("DIVERGED_ITS"), std::string::npos);
  EXPECT_EQ(table.find("f (Hz)"), std::string::npos);
  EXPECT_EQ(table.find("source"), std::string::npos);
}

TEST(SweepTable, SourceColumnWithSeveralSources) {
  const std::string path =
      (std::filesystem::temp_directory_path() / "fmbem_sweep_sources_test.csv").string();
  SweepRow a{.k = 2.0, .source = 0, .iterations = 7, .reason = "CONVERGED_RTOL", .solved = true};
  SweepRow b = a;
  b.source = 1;
  b.iterations = 8;
  write_sweep_csv(path, {a, b}, false, true);
  std::ifstream in(path);
  std::string header, first, second;
  std::getline(in, header);
  std::getline(in, first);
  std::getline(in, second);
  EXPECT_EQ(header, "k,source,iterations,converged,setup_s,solve_s,error_max,error_rel_l2");
  EXPECT_EQ(first.substr(0, 8), "2,1,7,1,") << first;
  EXPECT_EQ(second.substr(0, 8), "2,2,8,1,") << second;
  std::filesystem::remove(path);
  const std::string table = sweep_table({a, b}, false, true);
  EXPECT_NE(table.find("2 solves"), std::string::npos) << table;
  EXPECT_NE(table.find("source"), std::string::npos) << table;
}

// -bem_incident_dir and -bem_source lists, and the generated directions.
TEST(SourceLists, ParsesEntriesAndGenerators) {
  const std::vector<Vec3> two = parse_vec3_list("-bem_source", "3,0,0;0,-4,1e-1", false);
  ASSERT_EQ(two.size(), 2u);
  EXPECT_EQ(two[1].y, -4.0);
  EXPECT_EQ(two[1].z, 0.1);
  const std::vector<Vec3> sphere = parse_vec3_list("-bem_incident_dir", "fibonacci:32", true);
  ASSERT_EQ(sphere.size(), 32u);
  for (const Vec3& d : sphere) EXPECT_NEAR(norm(d), 1.0, 1e-15);
  const std::vector<Vec3> circle = parse_vec3_list("-bem_incident_dir", "circle:4", true);
  ASSERT_EQ(circle.size(), 4u);  // +z, +x, -z, -x
  EXPECT_NEAR(circle[1].x, 1.0, 1e-15);
  EXPECT_NEAR(circle[2].z, -1.0, 1e-15);
  const auto list_error = [](const char* text, bool generators) -> std::string {
    try {
      parse_vec3_list("-bem_incident_dir", text, generators);
    } catch (const Error& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_NE(list_error("0,0,1;;1,0,0", true).find("an empty entry"), std::string::npos);
  EXPECT_NE(list_error("0,0,1;", true).find("an empty entry"), std::string::npos);
  EXPECT_NE(list_error("0,0,1;1,0", true).find("needs exactly three numbers"), std::string::npos);
  EXPECT_NE(list_error("fibonacci:0", true).find("out of range"), std::string::npos);
  EXPECT_NE(list_error("fibonacci:10001", true).find("out of range"), std::string::npos);
  EXPECT_NE(list_error("circle:x", true).find("not an integer"), std::string::npos);
  // Point sources have no generators: the text is read as numbers.
  EXPECT_NE(list_error("fibonacci:4", false).find("needs exactly three numbers"),
            std::string::npos);
}

}  // namespace
}  // namespace fmbem
