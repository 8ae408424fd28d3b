// A NumCalc project's BOUNDARY lines as conditions, and NumCalc's log of a run.
#include "fmbem/solver/numcalc_run.hpp"

#include <gtest/gtest.h>

#include <regex>

namespace fmbem {
namespace {

io::NumCalcInput input_with(std::vector<io::NumCalcBoundary> boundary) {
  io::NumCalcInput input;
  input.path = "p/NC.inp";
  input.version_line = "Mesh2HRTF 1.2.4";
  input.title = "t";
  input.frequencies_hz = {100.0, 250.0, 1000.0};
  input.boundary = std::move(boundary);
  input.curves = {{1, 80, {50.0, 300.0}, {0.2, 0.8}},
                  {2, 85, {0.0, 100.0, 1000.0}, {1.0, 0.5, 0.0}}};
  return input;
}

TEST(NumCalcConditions, EachLineOnItsGroupAndTheRestRigid) {
  using Kind = io::NumCalcBoundary::Kind;
  std::vector<std::string> notes;
  const SurfaceConditions c = numcalc_conditions(
      input_with({{42, "NC.inp line 42", "p/NC.inp", 0, 3, Kind::velocity, {0.1, 0.0}, {}, {}},
                  {43, "NC.inp line 43", "p/NC.inp", 4, 9, Kind::impedance, {2.0, -1.0}, {}, {}},
                  {44, "NC.inp line 44", "p/NC.inp", 10, 12, Kind::impedance, {0.0, 0.0}, {}, {}}}),
      notes);
  ASSERT_EQ(c.groups.size(), 3u);
  EXPECT_EQ(c.groups[0].group.name, "NC.inp line 42");
  EXPECT_EQ(c.groups[0].kind, ConditionKind::velocity);
  EXPECT_EQ(c.groups[0].origin, "p/NC.inp, line 42");
  EXPECT_EQ(c.groups[1].kind, ConditionKind::impedance);
  EXPECT_EQ(c.groups[1].value_at(300.0), cplx(2.0, -1.0));
  // NumCalc's IMPE 0 is a pressure-release surface.
  EXPECT_EQ(c.groups[2].kind, ConditionKind::pressure);
  EXPECT_EQ(c.groups[2].value_at(300.0), cplx(0.0));
  ASSERT_TRUE(c.fallback);
  EXPECT_EQ(c.fallback->kind, ConditionKind::rigid);
  EXPECT_TRUE(notes.empty());
}

TEST(NumCalcConditions, CurvesAreExactAtEveryFrequency) {
  using Kind = io::NumCalcBoundary::Kind;
  std::vector<std::string> notes;
  const io::NumCalcInput input =
      input_with({{50, "NC.inp line 50", "p/NC.inp", 0, 3, Kind::admittance, {1.0, 0.5}, 1, 2}});
  const SurfaceConditions c = numcalc_conditions(input, notes);
  ASSERT_EQ(c.groups.size(), 1u);
  const GroupCondition& g = c.groups[0];
  ASSERT_TRUE(g.value.table);
  // re * c1(f) + i im * c2(f), each curve linear between its points and held beyond them: the
  // table (nodes at both curves' points and the steps) is that at any frequency it covers.
  const io::NumCalcCurve &c1 = *input.curve(1), &c2 = *input.curve(2);
  for (double f : {0.0, 50.0, 75.0, 100.0, 175.5, 250.0, 299.0, 300.0, 640.0, 1000.0}) {
    const cplx expected(1.0 * c1.at(f), 0.5 * c2.at(f));
    EXPECT_NEAR(std::abs(g.value_at(f) - expected), 0.0, 1e-15) << f;
  }
  EXPECT_DOUBLE_EQ(g.value_at(175.0).real(), 0.5);    // 0.2 + 0.6 * 125 / 250
  EXPECT_DOUBLE_EQ(g.value_at(550.0).imag(), 0.125);  // 0.5 * (0.5 - 0.5 * 450 / 900)
  EXPECT_TRUE(notes.empty());                         // NumCalc applies curves to ADMI too
  // On VELO NumCalc 1.2.4 ignores them: said in a note.
  numcalc_conditions(
      input_with({{50, "NC.inp line 50", "p/NC.inp", 0, 3, Kind::velocity, {1.0, 0.5}, 1, 2}}),
      notes);
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_NE(notes[0].find("applies curves to ADMI alone"), std::string::npos);
}

TEST(NumCalcLog, ReadAsMesh2HrtfsReportReaderReadsIt) {
  const io::NumCalcInput input = input_with({});
  std::vector<NumCalcStep> steps = {{100.0, true, 12, 3.5e-9, 1.4, 0.6, 0.2},
                                    {1234.5678, false, 500, 2e-3, 2.6, 10.4, 0.1}};
  const std::string log =
      numcalc_log(input, steps, "3/12/2026 13:2:5", "3/12/2026 13:3:0", "GMRES");
  // write_output_report.py's patterns: the step marker, "Step n,", the frequency without an
  // exponent, the iterations and error, the four times in whole seconds, the end.
  const std::string marker = ">> S T E P   N U M B E R   A N D   F R E Q U E N C Y <<";
  const std::size_t second = log.find(marker, log.find(marker) + 1);
  ASSERT_NE(second, std::string::npos);
  const std::string one = log.substr(0, second), two = log.substr(second);
  std::smatch m;
  ASSERT_TRUE(
      std::regex_search(one, m, std::regex(R"(Step (\d+), Frequency = (\d+(?:\.\d+)?) Hz)")));
  EXPECT_EQ(m[1], "1");
  EXPECT_EQ(m[2], "100");
  ASSERT_TRUE(std::regex_search(two, m, std::regex(R"(Frequency = (\d+(?:\.\d+)?) Hz)")));
  EXPECT_EQ(m[1], "1234.57");  // six digits, as NumCalc's cout prints it
  ASSERT_TRUE(std::regex_search(
      one, m, std::regex(R"(number of iterations = (\d+), relative error = (.+))")));
  EXPECT_EQ(m[1], "12");
  EXPECT_EQ(std::stod(m[2]), 3.5e-9);
  EXPECT_NE(one.find("Assembling the equation system         : 1\n"), std::string::npos);
  EXPECT_NE(one.find("Solving the equation system            : 1\n"), std::string::npos);
  EXPECT_NE(one.find("Post processing                        : 0\n"), std::string::npos);
  EXPECT_NE(one.find("Total                                  : 2\n"), std::string::npos);
  EXPECT_EQ(one.find("Maximum number of iterations is reached!"), std::string::npos);
  EXPECT_NE(two.find("Warning: Maximum number of iterations is reached!"), std::string::npos);
  EXPECT_NE(log.find("\nStart time: 3/12/2026 13:2:5\n"), std::string::npos);
  EXPECT_NE(log.find("\nEnd time: 3/12/2026 13:3:0\n"), std::string::npos);
  EXPECT_EQ(numcalc_log(input, steps, "s", "", "GMRES").find("End time"), std::string::npos);
}

}  // namespace
}  // namespace fmbem
