// Boundary conditions on surface groups as the user gives them: frequency tables, the
// command-line syntax (-bem_velocity G:V, ...) and the checks on values.
#include "fmbem/problem/surface_conditions.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>

#include "conditions_test_support.hpp"
#include "fmbem/core/error.hpp"
#include "fmbem/problem/number_text.hpp"

namespace fmbem {
namespace {

namespace fs = std::filesystem;
using test::contains;
using test::error_of;

class ConditionFiles : public test::InputFiles {
 protected:
  // The message of the error reading `content` as a table.
  std::string table_error(const std::string& content) const {
    const std::string path = write("bad.csv", content);
    return error_of([&] { FrequencyTable::read_csv(path); });
  }
};

TEST(ConditionNames, RoundTrip) {
  for (ConditionKind kind : {ConditionKind::rigid, ConditionKind::velocity, ConditionKind::pressure,
                             ConditionKind::admittance, ConditionKind::impedance})
    EXPECT_EQ(condition_from_name(condition_name(kind)), kind);
  EXPECT_STREQ(condition_name(ConditionKind::admittance), "admittance");
  EXPECT_FALSE(condition_from_name("soft"));
  EXPECT_EQ((GroupSelector{"left_ear", std::nullopt}).text(), "left_ear");
  EXPECT_EQ((GroupSelector{"", 3}).text(), "tag 3");
}

TEST(NumberText, ReadsWholeNumbersOnly) {
  double value = 0.0;
  EXPECT_EQ(read_number("+2.5e1", value), NumberReading::finite);
  EXPECT_EQ(value, 25.0);
  EXPECT_EQ(read_number("nan", value), NumberReading::non_finite);
  EXPECT_EQ(read_number("1e999", value), NumberReading::non_finite);
  for (const char* bad : {"", "+-2", "++2", "1.5.5", "1e3x", " 1", "abc"})
    EXPECT_EQ(read_number(bad, value), NumberReading::malformed) << bad;
  EXPECT_EQ(parse_complex("-x", "1e-3-2e-4i"), cplx(1e-3, -2e-4));
  EXPECT_EQ(parse_complex("-x", "0.5i"), cplx(0, 0.5));
  EXPECT_EQ(parse_complex("-x", "-i"), cplx(0, -1));
  EXPECT_EQ(error_of([] { parse_real("-x", "1e999"); }), "-x 1e999: not a finite number");
}

TEST(FrequencyTable, ExactAtNodesAndMidpoints) {
  const FrequencyTable table({100, 200, 400}, {{1, -1}, {3, 1}, {-1, 5}}, "built");
  EXPECT_EQ(table.at(100, "g"), cplx(1, -1));
  EXPECT_EQ(table.at(200, "g"), cplx(3, 1));
  EXPECT_EQ(table.at(400, "g"), cplx(-1, 5));
  EXPECT_EQ(table.at(150, "g"), cplx(2, 0));
  EXPECT_EQ(table.at(300, "g"), cplx(1, 3));
  EXPECT_EQ(table.at(125, "g"), cplx(1.5, -0.5));
  EXPECT_EQ(table.first_hz(), 100);
  EXPECT_EQ(table.last_hz(), 400);
  EXPECT_EQ(table.source(), "built");
}

TEST(FrequencyTable, OutsideItsRangeNamesGroupAndSource) {
  const FrequencyTable table({100, 200}, {1, 2}, "walls.csv");
  EXPECT_EQ(error_of([&] { table.at(99.5, "walls"); }),
            "group 'walls': frequency 99.5 Hz is outside its table 'walls.csv' (100 to 200 Hz)");
  EXPECT_PRED2(contains, error_of([&] { table.at(201, "tag 3"); }), "group 'tag 3': frequency 201");
  EXPECT_PRED2(contains, error_of([&] { table.at(std::nan(""), "walls"); }), "outside");
}

TEST(FrequencyTable, OneRowIsValidAtItsFrequencyOnly) {
  const FrequencyTable table({250}, {{0.5, 0.25}}, "one");
  EXPECT_EQ(table.at(250, "g"), cplx(0.5, 0.25));
  EXPECT_EQ(error_of([&] { table.at(250.001, "g"); }),
            "group 'g': frequency 250.001 Hz is outside its table 'one' (only 250 Hz)");
}

TEST(FrequencyTable, ConstructorChecksItsRows) {
  EXPECT_EQ(error_of([] { FrequencyTable({}, {}, "t"); }),
            "table 't' has no rows (frequency_hz, re, im a line)");
  EXPECT_EQ(error_of([] {
              FrequencyTable({1, 2}, {1}, "t");
            }),
            "table 't': 2 frequencies but 1 values");
  EXPECT_EQ(error_of([] {
              FrequencyTable({1, 1}, {1, 2}, "t");
            }),
            "table 't', row 2: frequency 1 Hz repeats row 1's");
  EXPECT_EQ(error_of([] { FrequencyTable({-1}, {1}, "t"); }),
            "table 't', row 1: frequency -1 Hz is negative");
  EXPECT_EQ(error_of([] {
              FrequencyTable({0, std::numeric_limits<double>::infinity()}, {1, 2}, "t");
            }),
            "table 't', row 2: not finite");
  EXPECT_EQ(error_of([] { FrequencyTable({0}, {cplx(0, std::nan(""))}, "t"); }),
            "table 't', row 1: not finite");
}

TEST_F(ConditionFiles, TableWithHeaderCommentsAndBlankLines) {
  const std::string path = write("z.csv",
                                 "# measured 2026-11-30\n"
                                 "frequency_hz, re, im\r\n"
                                 "\n"
                                 "  100 , 1.5, -2\n"
                                 "# a comment between rows\n"
                                 "+200,2.5,0\n");
  const FrequencyTable table = FrequencyTable::read_csv(path);
  EXPECT_EQ(table.frequencies_hz(), (std::vector<double>{100, 200}));
  EXPECT_EQ(table.at(100, "g"), cplx(1.5, -2));
  EXPECT_EQ(table.at(150, "g"), cplx(2, -1));
  EXPECT_EQ(table.source(), path);
  // A spreadsheet's byte-order mark before the header, or before the first row.
  EXPECT_EQ(FrequencyTable::read_csv(write("bom.csv",
                                           "\xEF\xBB\xBF"
                                           "f,re,im\n5,1,2\n"))
                .at(5, "g"),
            cplx(1, 2));
  EXPECT_EQ(FrequencyTable::read_csv(write("bom_row.csv",
                                           "\xEF\xBB\xBF"
                                           "5,1,2\n"))
                .at(5, "g"),
            cplx(1, 2));
  // No header: the first row is data.
  EXPECT_EQ(FrequencyTable::read_csv(write("plain.csv", "0,1,2\n")).at(0, "g"), cplx(1, 2));
}

TEST_F(ConditionFiles, EveryBadTableNamesFileAndLine) {
  const struct {
    const char* content;
    const char* error;  // after "table '<path>'"
  } cases[] = {
      {"f,re,im\n100,1,x\n", ", line 2: 'x' is not a number"},
      {"100,1\n", ", line 1: expected 3 fields frequency_hz, re, im, got 2 in '100,1'"},
      {"100,1,2,3\n", ", line 1: expected 3 fields frequency_hz, re, im, got 4 in '100,1,2,3'"},
      {"100,nan,0\n", ", line 1: 'nan' is not a finite number"},
      {"100,1e999,0\n", ", line 1: '1e999' is not a finite number"},
      {"inf,1,0\n", ", line 1: 'inf' is not a finite number"},
      {"-5,1,0\n", ", line 1: frequency -5 Hz is negative"},
      {"100,1,0\n\n100,2,0\n", ", line 3: frequency 100 Hz repeats line 1's"},
      {"200,1,0\n100,2,0\n",
       ", line 2: frequency 100 Hz after 200 Hz on line 1: frequencies must increase"},
      {"frequency_hz, re, im\n# nothing\n", " has no rows (frequency_hz, re, im a line)"},
      {"", " has no rows (frequency_hz, re, im a line)"},
      // A header is the first line only, of words only; comments are whole lines.
      {"100,1,0\nf,re,im\n", ", line 2: 'f' is not a number"},
      {"f,1,im\n", ", line 1: 'f' is not a number"},
      {"100,1,0 # note\n", ", line 1: '0 # note' is not a number"},
  };
  const std::string table = "table '" + scratch_file("bad.csv") + "'";
  for (const auto& c : cases) EXPECT_EQ(table_error(c.content), table + c.error) << c.content;
}

TEST_F(ConditionFiles, UnreadableTables) {
  const std::string missing = (scratch_ / "missing.csv").string();
  EXPECT_EQ(error_of([&] { FrequencyTable::read_csv(missing); }),
            "cannot read table '" + missing + "': No such file or directory");
  EXPECT_EQ(error_of([&] { FrequencyTable::read_csv(scratch_.string()); }),
            "table '" + scratch_.string() + "' is not a regular file");
  // A sparse file over the limit is refused before it is read.
  const std::string huge = write("huge.csv", "");
  fs::resize_file(huge, FrequencyTable::kMaxTableBytes + 1);
  EXPECT_EQ(error_of([&] { FrequencyTable::read_csv(huge); }),
            "table '" + huge + "' is larger than 64 MiB");
}

TEST(ConditionValue, TableNeedsFrequencyInHz) {
  ConditionValue value{
      {}, std::make_shared<const FrequencyTable>(FrequencyTable({100, 200}, {1, 3}, "v.csv"))};
  EXPECT_EQ(value.at(150, "lid"), cplx(2));
  EXPECT_EQ(error_of([&] { value.at(std::nan(""), "lid"); }),
            "the table of group 'lid' ('v.csv') needs frequencies in Hz (-bem_frequency), not "
            "wavenumbers (-k)");
  const ConditionValue constant{{2, 1}, nullptr};
  EXPECT_EQ(constant.at(std::nan(""), "lid"), cplx(2, 1));
  GroupCondition fallback{{}, ConditionKind::velocity, value, "-bem_default_condition"};
  EXPECT_PRED2(contains, error_of([&] { fallback.value_at(std::nan("")); }),
               "the table of the default condition");
}

TEST(ConditionOption, NamesTagsAndComplexValues) {
  SurfaceConditions conditions;
  add_condition_option(conditions, ConditionKind::velocity, "-bem_velocity",
                       "left_ear:1e-3-2e-4i, right ear : 0.5i,7:2,ns:lid:+3");
  ASSERT_EQ(conditions.groups.size(), 4u);
  EXPECT_EQ(conditions.groups[0].group, (GroupSelector{"left_ear", std::nullopt}));
  EXPECT_EQ(conditions.groups[0].value.constant, cplx(1e-3, -2e-4));
  EXPECT_EQ(conditions.groups[0].origin, "-bem_velocity");
  EXPECT_EQ(conditions.groups[0].kind, ConditionKind::velocity);
  EXPECT_EQ(conditions.groups[1].group.name, "right ear");
  EXPECT_EQ(conditions.groups[1].value.constant, cplx(0, 0.5));
  EXPECT_EQ(conditions.groups[2].group, (GroupSelector{"", 7}));
  EXPECT_EQ(conditions.groups[2].value.constant, cplx(2));
  // Split at the last ':': names may contain ':'.
  EXPECT_EQ(conditions.groups[3].group.name, "ns:lid");
  EXPECT_EQ(conditions.groups[3].value.constant, cplx(3));
  EXPECT_FALSE(conditions.fallback);

  add_condition_option(conditions, ConditionKind::rigid, "-bem_rigid", "floor,2,a:b");
  ASSERT_EQ(conditions.groups.size(), 7u);
  EXPECT_EQ(conditions.groups[4].kind, ConditionKind::rigid);
  EXPECT_EQ(conditions.groups[5].group, (GroupSelector{"", 2}));
  EXPECT_EQ(conditions.groups[6].group.name, "a:b");  // rigid entries are groups only
  EXPECT_EQ(conditions.find({"floor", std::nullopt})->origin, "-bem_rigid");
  EXPECT_EQ(conditions.find({"roof", std::nullopt}), nullptr);
}

TEST_F(ConditionFiles, OptionTablesAreReadOnce) {
  const std::string path = write("lid.CSV", "f,re,im\n100,1,0\n200,3,0\n");
  SurfaceConditions conditions;
  add_condition_option(conditions, ConditionKind::pressure, "-bem_pressure", "lid:" + path);
  ASSERT_EQ(conditions.groups.size(), 1u);
  const GroupCondition& lid = conditions.groups[0];
  ASSERT_TRUE(lid.value.table);
  // Gone from the disk, the table still answers: nothing is read per frequency.
  fs::remove(path);
  for (int i = 0; i <= 100; ++i) EXPECT_DOUBLE_EQ(lid.value_at(100 + i).real(), 1 + 0.02 * i);
  // A table's error names the option and the group.
  EXPECT_EQ(
      error_of([&] {
        add_condition_option(conditions, ConditionKind::pressure, "-bem_pressure", "walls:" + path);
      }),
      "-bem_pressure: group 'walls': cannot read table '" + path + "': No such file or directory");
}

TEST(ConditionOption, SyntaxErrors) {
  const auto error = [](ConditionKind kind, const char* option, const char* text) {
    SurfaceConditions conditions;
    return error_of([&] { add_condition_option(conditions, kind, option, text); });
  };
  const ConditionKind v = ConditionKind::velocity;
  EXPECT_EQ(error(v, "-bem_velocity", ""),
            "-bem_velocity needs a value: G:V[,G:V...] (G a group name or tag)");
  EXPECT_EQ(error(ConditionKind::rigid, "-bem_rigid", " "),
            "-bem_rigid needs a value: G[,G...] (G a group name or tag)");
  EXPECT_EQ(error(v, "-bem_velocity", "lid"),
            "-bem_velocity lid: entry 'lid' needs a group and a value G:V");
  EXPECT_EQ(error(v, "-bem_velocity", ":2"), "-bem_velocity :2: entry ':2' has no group");
  EXPECT_EQ(error(v, "-bem_velocity", "lid:"),
            "-bem_velocity lid:: entry 'lid:' has no value after ':'");
  EXPECT_EQ(error(v, "-bem_velocity", "a:1,,b:2"),
            "-bem_velocity a:1,,b:2: an empty entry (entries are separated by ',')");
  EXPECT_EQ(error(ConditionKind::rigid, "-bem_rigid", "lid,"),
            "-bem_rigid lid,: an empty entry (entries are separated by ',')");
  EXPECT_EQ(error(v, "-bem_velocity", "lid:abc"),
            "-bem_velocity: group 'lid': 'abc' is neither a complex number (2, 0.5i, 1e-3-2e-4i) "
            "nor a table (a path ending in .csv)");
  EXPECT_PRED2(contains, error(v, "-bem_velocity", "lid:nan"), "'nan' is neither a complex number");
  EXPECT_PRED2(contains, error(v, "-bem_velocity", "lid:1e999i"), "'1e999i' is neither");
  EXPECT_EQ(error(v, "-bem_velocity", "0:1"),
            "-bem_velocity 0:1: group tag '0' must be an integer from 1 to 2147483647 (a Gmsh "
            "physical tag)");
  EXPECT_PRED2(contains, error(v, "-bem_velocity", "-3:1"), "group tag '-3' must be");
  EXPECT_PRED2(contains, error(v, "-bem_velocity", "99999999999:1"), "group tag '99999999999'");
  EXPECT_EQ(error(v, "-bem_velocity", "lid:1,lid:2"),
            "group 'lid' is given two conditions (velocity at -bem_velocity and velocity at "
            "-bem_velocity)");
  EXPECT_EQ(error(ConditionKind::impedance, "-bem_impedance", "lid:0"),
            "-bem_impedance: group 'lid': impedance 0 (an infinite admittance): for a "
            "pressure-release surface give pressure 0 (-bem_pressure G:0)");
}

TEST(ConditionOption, RefusedOptionLeavesConditionsAsTheyWere) {
  SurfaceConditions conditions;
  add_condition_option(conditions, ConditionKind::velocity, "-bem_velocity", "lid:1");
  EXPECT_NE(error_of([&] {
              add_condition_option(conditions, ConditionKind::pressure, "-bem_pressure",
                                   "a:1,lid:2");
            }),
            "no error");
  ASSERT_EQ(conditions.groups.size(), 1u);
  // A tag and a name are different selectors (only the mesh knows whether they meet).
  add_condition_option(conditions, ConditionKind::rigid, "-bem_rigid", "1");
  EXPECT_EQ(conditions.groups.size(), 2u);
}

TEST(DefaultCondition, EveryKind) {
  const GroupCondition rigid = parse_default_condition("-bem_default_condition", "rigid");
  EXPECT_EQ(rigid.kind, ConditionKind::rigid);
  EXPECT_TRUE(rigid.group.empty());
  EXPECT_EQ(rigid.origin, "-bem_default_condition");
  const GroupCondition admittance =
      parse_default_condition("-bem_default_condition", "admittance:0.3-0.1i");
  EXPECT_EQ(admittance.kind, ConditionKind::admittance);
  EXPECT_EQ(admittance.value.constant, cplx(0.3, -0.1));
  EXPECT_EQ(parse_default_condition("-o", "impedance:2").kind, ConditionKind::impedance);
  EXPECT_EQ(parse_default_condition("-o", "pressure:0").value.constant, cplx(0));
  EXPECT_EQ(parse_default_condition("-o", "velocity:1e-3").value.constant, cplx(1e-3));

  EXPECT_EQ(error_of([] { parse_default_condition("-o", "soft"); }),
            "-o soft: 'soft' is not a condition (choose rigid, velocity:V, pressure:P, "
            "admittance:B or impedance:Z)");
  EXPECT_EQ(error_of([] { parse_default_condition("-o", "rigid:0"); }),
            "-o rigid:0: rigid takes no value");
  EXPECT_EQ(error_of([] { parse_default_condition("-o", "velocity"); }),
            "-o velocity: velocity needs a value: velocity:V");
  EXPECT_EQ(error_of([] { parse_default_condition("-o", "velocity:"); }),
            "-o velocity:: velocity needs a value: velocity:V");
  EXPECT_EQ(error_of([] { parse_default_condition("-o", "impedance:0"); }),
            "-o: the default condition: impedance 0 (an infinite admittance): for a "
            "pressure-release surface give pressure 0 (-bem_pressure G:0)");
  EXPECT_PRED2(contains, error_of([] { parse_default_condition("-o", "pressure:x"); }),
               "-o: the default condition: 'x' is neither a complex number");
}

TEST(SurfaceConditions, TwoConditionsOnOneGroupAcrossSources) {
  SurfaceConditions from_project;
  from_project.add(
      {{"left_ear", std::nullopt}, ConditionKind::pressure, {}, "project.toml, line 12"});
  from_project.set_fallback({{}, ConditionKind::rigid, {}, "project.toml, line 3"});
  SurfaceConditions from_options;
  add_condition_option(from_options, ConditionKind::velocity, "-bem_velocity", "left_ear:1");
  EXPECT_EQ(error_of([&] { from_options.add_all(from_project); }),
            "group 'left_ear' is given two conditions (velocity at -bem_velocity and pressure at "
            "project.toml, line 12)");
  SurfaceConditions fallbacks;
  fallbacks.set_fallback(parse_default_condition("-bem_default_condition", "admittance:0.3"));
  EXPECT_EQ(error_of([&] { fallbacks.add_all(from_project); }),
            "the default condition is given twice (admittance at -bem_default_condition and rigid "
            "at project.toml, line 3)");
  EXPECT_EQ(error_of([&] {
              fallbacks.add({{}, ConditionKind::rigid, {}, "x"});
            }),
            "x: a condition on a group needs a group name or tag");
  EXPECT_FALSE(fallbacks.empty());
  EXPECT_TRUE(SurfaceConditions{}.empty());
}

TEST(ConditionChecks, ValuesEachKindCannotTake) {
  const GroupSelector lid{"lid", std::nullopt};
  EXPECT_EQ(error_of([&] {
              check_condition({lid, ConditionKind::rigid, {{1, 0}, nullptr}, "o"});
            }),
            "o: group 'lid': a rigid condition takes no value");
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_EQ(error_of([&] {
              check_condition({lid, ConditionKind::velocity, {{inf, 0}, nullptr}, "o"});
            }),
            "o: group 'lid': the value is not finite");
  const auto impedance_table = [&](std::vector<cplx> values) {
    return GroupCondition{
        lid,
        ConditionKind::impedance,
        {{}, std::make_shared<const FrequencyTable>(FrequencyTable({100, 200}, values, "z.csv"))},
        "o"};
  };
  EXPECT_EQ(error_of([&] {
              check_condition(impedance_table({{1, 1}, 0}));
            }),
            "o: group 'lid': the impedance table 'z.csv' is 0 at 200 Hz (an infinite admittance): "
            "for a pressure-release surface give pressure 0 (-bem_pressure G:0)");
  EXPECT_PRED2(contains, error_of([&] {
                 check_condition(impedance_table({{1, 1}, {-2, -2}}));
               }),
               "the impedance table 'z.csv' passes through 0 between 100 and 200 Hz");
  EXPECT_EQ(error_of([&] { check_condition(impedance_table({{1, 1}, {-2, 2}})); }), "no error");
  // Admittance 0 is a rigid surface: allowed; so is pressure 0 (pressure release).
  EXPECT_EQ(error_of([&] {
              check_condition({lid, ConditionKind::admittance, {}, "o"});
            }),
            "no error");
  EXPECT_EQ(error_of([&] {
              check_condition({lid, ConditionKind::pressure, {}, "o"});
            }),
            "no error");
}

TEST(ConditionChecks, ActiveSurfacesAreAllowedAndReported) {
  EXPECT_TRUE(is_passive(ConditionKind::admittance, {0, -5}));
  EXPECT_FALSE(is_passive(ConditionKind::admittance, {-0.2, 0}));
  EXPECT_FALSE(is_passive(ConditionKind::impedance, {-1, 3}));
  EXPECT_TRUE(is_passive(ConditionKind::velocity, {-1, 0}));
  EXPECT_TRUE(is_passive(ConditionKind::pressure, {-1, 0}));
  SurfaceConditions conditions;
  add_condition_option(conditions, ConditionKind::admittance, "-bem_admittance", "lid:-0.2,2:0.5");
  conditions.add({{"walls", std::nullopt},
                  ConditionKind::impedance,
                  {{},
                   std::make_shared<const FrequencyTable>(
                       FrequencyTable({1, 2}, {{2, 0}, {-1, 1}}, "walls.csv"))},
                  "project.toml, line 9"});
  conditions.set_fallback(parse_default_condition("-bem_default_condition", "impedance:-1+2i"));
  EXPECT_EQ(passivity_warnings(conditions),
            (std::vector<std::string>{
                "-bem_admittance: group 'lid': admittance -0.2 has Re < 0: an active surface (it "
                "gives energy to the fluid)",
                "project.toml, line 9: group 'walls': impedance table 'walls.csv' has Re < 0 at "
                "some frequencies: an active surface (it gives energy to the fluid)",
                "-bem_default_condition: the default condition: impedance -1+2i has Re < 0: an "
                "active surface (it gives energy to the fluid)"}));
}

TEST(Medium, FiniteAndPositive) {
  EXPECT_EQ(error_of([] { check_medium({}, "m"); }), "no error");
  EXPECT_EQ(error_of([] {
              check_medium({0, 1.2}, "m");
            }),
            "m: the sound speed 0 m/s must be a finite number > 0");
  EXPECT_EQ(error_of([] {
              check_medium({343, std::nan("")}, "m");
            }),
            "m: the density nan kg/m^3 must be a finite number > 0");
}

}  // namespace
}  // namespace fmbem
