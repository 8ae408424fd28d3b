// Project files: boundary conditions on surface groups and the medium, in TOML.
#include "fmbem/solver/project_file.hpp"

#include <gtest/gtest.h>

#include <string>

#include "../problem/conditions_test_support.hpp"
#include "fmbem/core/error.hpp"

namespace fmbem {
namespace {

using test::contains;
using test::error_of;

class ProjectFile : public test::InputFiles {
 protected:
  // The message of the error reading `content` as project.toml, after "<path>, line ".
  std::string project_error(const std::string& content) const {
    const std::string path = write("project.toml", content);
    const std::string message = error_of([&] { read_project_file(path); });
    const std::string prefix = path + ", line ";
    return message.starts_with(prefix) ? message.substr(prefix.size()) : message;
  }
};

TEST_F(ProjectFile, CompleteExample) {
  write("walls_impedance.csv", "frequency_hz, re, im\n100, 2, 1\n300, 4, 3\n");
  const std::string path = write("project.toml", R"(# fmbem project
[medium]
sound_speed = 340     # an integer is a number too
density = 1.2

[default]
condition = "admittance"
value = 0.3

[[group]]
name = "left_ear"
condition = "velocity"
value = [1e-3, -2e-4]

[[group]]
tag = 7
condition = "rigid"

[[group]]
name = "walls"
condition = "impedance"
table = "walls_impedance.csv"
)");
  const Project project = read_project_file(path);
  EXPECT_EQ(project.path, path);
  ASSERT_TRUE(project.medium);
  EXPECT_EQ(project.medium->sound_speed, 340.0);
  EXPECT_EQ(project.medium->density, 1.2);

  const SurfaceConditions& conditions = project.conditions;
  ASSERT_TRUE(conditions.fallback);
  EXPECT_TRUE(conditions.fallback->group.empty());
  EXPECT_EQ(conditions.fallback->kind, ConditionKind::admittance);
  EXPECT_EQ(conditions.fallback->value.constant, cplx(0.3));
  EXPECT_EQ(conditions.fallback->origin, path + ", line 6");

  ASSERT_EQ(conditions.groups.size(), 3u);
  const GroupCondition& ear = conditions.groups[0];
  EXPECT_EQ(ear.group, (GroupSelector{"left_ear", std::nullopt}));
  EXPECT_EQ(ear.kind, ConditionKind::velocity);
  EXPECT_EQ(ear.value.constant, cplx(1e-3, -2e-4));
  EXPECT_FALSE(ear.value.table);
  EXPECT_EQ(ear.origin, path + ", line 10");
  EXPECT_EQ(conditions.groups[1].group, (GroupSelector{"", 7}));
  EXPECT_EQ(conditions.groups[1].kind, ConditionKind::rigid);
  const GroupCondition& walls = conditions.groups[2];
  EXPECT_EQ(walls.kind, ConditionKind::impedance);
  ASSERT_TRUE(walls.value.table);
  // Relative to the project file's folder, not the current one.
  EXPECT_EQ(walls.value.table->source(), scratch_file("walls_impedance.csv"));
  EXPECT_EQ(walls.value_at(200), cplx(3, 2));
  EXPECT_TRUE(passivity_warnings(conditions).empty());
}

TEST_F(ProjectFile, EmptyFileIsAllRigid) {
  const Project project = read_project_file(write("empty.toml", "# nothing yet\n"));
  EXPECT_TRUE(project.conditions.empty());
  EXPECT_FALSE(project.medium);
  // [medium] with a key left out keeps its default.
  const Project air = read_project_file(write("air.toml", "[medium]\ndensity = 1.0\n"));
  ASSERT_TRUE(air.medium);
  EXPECT_EQ(air.medium->sound_speed, Medium{}.sound_speed);
  EXPECT_EQ(air.medium->density, 1.0);
}

TEST(ProjectFileExample, ShippedExampleParses) {
  const std::string folder = std::string(FMBEM_SOURCE_DIR) + "/examples/box_groups_project/";
  const Project project = read_project_file(folder + "project.toml");
  ASSERT_TRUE(project.medium);
  EXPECT_EQ(project.medium->sound_speed, 343.0);
  ASSERT_TRUE(project.conditions.fallback);
  EXPECT_EQ(project.conditions.fallback->kind, ConditionKind::rigid);
  const SurfaceConditions& c = project.conditions;
  ASSERT_EQ(c.groups.size(), 3u);
  // meshes/box_groups.msh: "lid" (tag 1), "floor" (tag 2), "walls" (tag 3).
  const GroupCondition* lid = c.find({"lid", std::nullopt});
  const GroupCondition* walls = c.find({"walls", std::nullopt});
  const GroupCondition* floor = c.find({"", 2});
  ASSERT_TRUE(lid && walls && floor);
  EXPECT_EQ(lid->kind, ConditionKind::velocity);
  EXPECT_EQ(walls->kind, ConditionKind::impedance);
  EXPECT_EQ(floor->kind, ConditionKind::rigid);
  EXPECT_EQ(lid->value_at(50), cplx(2.0e-3, -0.4e-3));
  EXPECT_EQ(walls->value_at(500), cplx(2.2, 3.2));
  EXPECT_EQ(walls->value.table->first_hz(), 50.0);
  EXPECT_TRUE(passivity_warnings(c).empty());
}

TEST_F(ProjectFile, EveryStrictnessCaseNamesItsLine) {
  const struct {
    const char* content;
    const char* error;  // after "<path>, line "
  } cases[] = {
      {"medum = 1\n", "1: unknown key 'medum' in the file (known: medium, default, group)"},
      {"[mediums]\n", "1: unknown key 'mediums' in the file (known: medium, default, group)"},
      {"[medium]\ndensty = 1.2\n",
       "2: unknown key 'densty' in [medium] (known: sound_speed, density)"},
      {"[default]\ncondition = \"rigid\"\nname = \"x\"\n",
       "3: unknown key 'name' in [default] (known: condition, value, table)"},
      {"[[group]]\nnmae = \"lid\"\n",
       "2: unknown key 'nmae' in [[group]] (known: name, tag, condition, value, table)"},
      {"[medium.extra]\n", "1: unknown key 'extra' in [medium] (known: sound_speed, density)"},
      {"medium = 5\n",
       "1: 'medium' must be a table: write [medium] and its keys on the lines below"},
      {"[medium]\nsound_speed = \"343\"\n", "2: sound_speed must be a number, not a string"},
      {"[medium]\nsound_speed = nan\n", "2: sound_speed is not finite"},
      {"[medium]\nsound_speed = 0\n", "1: the sound speed 0 m/s must be a finite number > 0"},
      {"[medium]\ndensity = -1.2\n", "1: the density -1.2 kg/m^3 must be a finite number > 0"},
      {"[group]\nname = \"lid\"\n", "1: 'group' must be tables: write [[group]] before each group"},
      {"group = [1, 2]\n", "1: 'group' must be tables: write [[group]] before each group"},
      {"[[group]]\nname = \"lid\"\ntag = 1\ncondition = \"rigid\"\n",
       "1: a [[group]] has a name or a tag, not both"},
      {"[[group]]\ncondition = \"rigid\"\n", "1: a [[group]] needs name = \"...\" or tag = N"},
      {"[[group]]\ntag = 0\ncondition = \"rigid\"\n",
       "2: tag must be an integer from 1 to 2147483647 (a Gmsh physical tag)"},
      {"[[group]]\ntag = 1.5\ncondition = \"rigid\"\n",
       "2: tag must be an integer from 1 to 2147483647 (a Gmsh physical tag)"},
      {"[[group]]\ntag = \"3\"\ncondition = \"rigid\"\n",
       "2: tag must be an integer from 1 to 2147483647 (a Gmsh physical tag)"},
      {"[[group]]\nname = \"\"\ncondition = \"rigid\"\n", "2: name is empty"},
      {"[[group]]\nname = 3\ncondition = \"rigid\"\n",
       "2: name must be a string (in quotes), not an integer"},
      {"[[group]]\nname = \"lid\"\n",
       "1: condition = \"...\" is missing (rigid, velocity, pressure, admittance or impedance)"},
      {"[[group]]\nname = \"lid\"\ncondition = \"soft\"\n",
       "3: condition 'soft' is not known (choose rigid, velocity, pressure, admittance or "
       "impedance)"},
      {"[[group]]\nname = \"lid\"\ncondition = \"velocity\"\nvalue = 1\ntable = \"v.csv\"\n",
       "1: give value or table, not both"},
      {"[[group]]\nname = \"lid\"\ncondition = \"velocity\"\n",
       "1: a velocity condition needs value = ... or table = \"...\""},
      {"[[group]]\nname = \"lid\"\ncondition = \"rigid\"\nvalue = 0\n",
       "4: a rigid condition takes no value"},
      {"[[group]]\nname = \"lid\"\ncondition = \"rigid\"\ntable = \"r.csv\"\n",
       "4: a rigid condition takes no value"},
      {"[[group]]\nname = \"lid\"\ncondition = \"velocity\"\nvalue = \"1\"\n",
       "4: value must be a number or [re, im], not a string"},
      {"[[group]]\nname = \"lid\"\ncondition = \"velocity\"\nvalue = [1]\n",
       "4: value [re, im] needs 2 numbers, got 1"},
      {"[[group]]\nname = \"lid\"\ncondition = \"velocity\"\nvalue = [1, \"x\"]\n",
       "4: value's im must be a number, not a string"},
      {"[[group]]\nname = \"lid\"\ncondition = \"velocity\"\nvalue = -inf\n",
       "4: value is not finite"},
      {"[[group]]\nname = \"lid\"\ncondition = \"impedance\"\nvalue = [0, 0]\n",
       "1: group 'lid': impedance 0 (an infinite admittance): for a pressure-release surface give "
       "pressure 0 (-bem_pressure G:0)"},
  };
  for (const auto& c : cases) EXPECT_EQ(project_error(c.content), c.error) << c.content;
}

TEST_F(ProjectFile, ErrorsAreOneLineNamingFileLineAndColumn) {
  const std::string path = write("project.toml", "[medium]\nsound_speed = \n");
  const std::string message = error_of([&] { read_project_file(path); });
  EXPECT_TRUE(message.starts_with(path + ", line 2, column ")) << message;
  EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  EXPECT_TRUE(contains(error_of([&] { read_project_file(write("dup.toml", "a = 1\na = 2\n")); }),
                       ", line 2, column "));
  const std::string missing = scratch_file("missing.toml");
  EXPECT_EQ(error_of([&] { read_project_file(missing); }),
            "cannot read project file '" + missing + "': No such file or directory");
}

TEST_F(ProjectFile, TableErrorsNameTheProjectLineAndTheTable) {
  write("bad.csv", "100, 1, 0\n50, 2, 0\n");
  EXPECT_EQ(project_error("\n[[group]]\nname = \"walls\"\ncondition = \"impedance\"\n"
                          "table = \"bad.csv\"\n"),
            "5: group 'walls': table '" + scratch_file("bad.csv") +
                "', line 2: frequency 50 Hz after 100 Hz on line 1: frequencies must increase");
  EXPECT_EQ(project_error("[default]\ncondition = \"pressure\"\ntable = \"none.csv\"\n"),
            "3: the default condition: cannot read table '" + scratch_file("none.csv") +
                "': No such file or directory");
}

TEST_F(ProjectFile, TwoConditionsOnOneGroupAcrossOptionAndProject) {
  const std::string path =
      write("project.toml", "[[group]]\nname = \"lid\"\ncondition = \"pressure\"\nvalue = 1\n");
  SurfaceConditions conditions;
  add_condition_option(conditions, ConditionKind::velocity, "-bem_velocity", "lid:2");
  const std::string twice =
      write("twice.toml",
            "[[group]]\nname = \"lid\"\ncondition = \"velocity\"\nvalue = 1\n\n"
            "[[group]]\nname = \"lid\"\ncondition = \"pressure\"\nvalue = 2\n");
  EXPECT_EQ(error_of([&] { read_project_file(twice); }),
            "group 'lid' is given two conditions (velocity at " + twice +
                ", line 1 and pressure at " + twice + ", line 6)");
  EXPECT_EQ(error_of([&] { conditions.add_all(read_project_file(path).conditions); }),
            "group 'lid' is given two conditions (velocity at -bem_velocity and pressure at " +
                path + ", line 1)");
}

}  // namespace
}  // namespace fmbem
