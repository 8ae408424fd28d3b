#include "fmbem/solver/project_file.hpp"

#include <toml++/toml.h>

#include <climits>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <initializer_list>

#include "fmbem/core/error.hpp"

namespace fmbem {
namespace {

// Reads one project file; every message starts with the file and the line it concerns.
class ProjectReader {
 public:
  explicit ProjectReader(std::string path) : path_(std::move(path)) {}

  Project read() {
    const std::string content =
        read_input_file(path_, "project file '" + path_ + "'", kMaxProjectFileBytes);
    toml::table root;
    try {
      root = toml::parse(content, path_);
    } catch (const toml::parse_error& e) {
      const toml::source_position where = e.source().begin;
      throw Error(path_ + ", line " + std::to_string(where.line) + ", column " +
                  std::to_string(where.column) + ": " + one_line(e.description()));
    }
    Project project;
    project.path = path_;
    check_keys(root, "the file", {"medium", "default", "group"});
    if (const toml::node* medium = root.get("medium"))
      project.medium = read_medium(table_of(*medium, "medium", "[medium]"));
    if (const toml::node* fallback = root.get("default"))
      project.conditions.set_fallback(
          read_condition(table_of(*fallback, "default", "[default]"), false));
    if (const toml::node* groups = root.get("group")) {
      const toml::array* array = groups->as_array();
      if (!array || !array->is_array_of_tables())
        throw Error(at(*groups) + "'group' must be tables: write [[group]] before each group");
      for (const toml::node& group : *array)
        project.conditions.add(read_condition(*group.as_table(), true));
    }
    return project;
  }

 private:
  std::string line_of(const toml::node& node) const {
    return path_ + ", line " + std::to_string(node.source().begin.line);
  }
  std::string at(const toml::node& node) const { return line_of(node) + ": "; }

  static std::string one_line(std::string_view text) {
    std::string out(text);
    for (char& c : out)
      if (c == '\n' || c == '\r') c = ' ';
    return out;
  }

  const toml::table& table_of(const toml::node& node, const char* key, const char* header) const {
    if (!node.is_table())
      throw Error(at(node) + "'" + key + "' must be a table: write " + header +
                  " and its keys on the lines below");
    return *node.as_table();
  }

  // Every key of `table` is one of `known`.
  void check_keys(const toml::table& table, const std::string& where,
                  std::initializer_list<const char*> known) const {
    for (const auto& [key, node] : table) {
      bool found = false;
      std::string list;
      for (const char* k : known) {
        found = found || key.str() == k;
        list += std::string(list.empty() ? "" : ", ") + k;
      }
      if (!found)
        throw Error(path_ + ", line " + std::to_string(key.source().begin.line) +
                    ": unknown key '" + std::string(key.str()) + "' in " + where +
                    " (known: " + list + ")");
    }
  }

  // A finite number, integer or floating point.
  double number(const toml::node& node, const std::string& key) const {
    if (!node.is_number())
      throw Error(at(node) + key + " must be a number, not " + type_name(node));
    const std::optional<double> value = node.value<double>();
    if (!value || !std::isfinite(*value)) throw Error(at(node) + key + " is not finite");
    return *value;
  }

  std::string string(const toml::node& node, const std::string& key) const {
    if (!node.is_string())
      throw Error(at(node) + key + " must be a string (in quotes), not " + type_name(node));
    const std::string& text = node.as_string()->get();
    if (text.empty()) throw Error(at(node) + key + " is empty");
    return text;
  }

  static std::string type_name(const toml::node& node) {
    switch (node.type()) {
      case toml::node_type::table:
        return "a table";
      case toml::node_type::array:
        return "an array";
      case toml::node_type::string:
        return "a string";
      case toml::node_type::integer:
        return "an integer";
      case toml::node_type::floating_point:
        return "a floating-point number";
      case toml::node_type::boolean:
        return "a boolean";
      default:
        return "a date or time";
    }
  }

  Medium read_medium(const toml::table& table) const {
    check_keys(table, "[medium]", {"sound_speed", "density"});
    Medium medium;
    if (const toml::node* c = table.get("sound_speed"))
      medium.sound_speed = number(*c, "sound_speed");
    if (const toml::node* rho = table.get("density")) medium.density = number(*rho, "density");
    check_medium(medium, line_of(table));
    return medium;
  }

  GroupSelector read_group(const toml::table& table) const {
    const toml::node* name = table.get("name");
    const toml::node* tag = table.get("tag");
    if (name && tag) throw Error(at(table) + "a [[group]] has a name or a tag, not both");
    if (name) return {string(*name, "name"), std::nullopt};
    if (!tag) throw Error(at(table) + "a [[group]] needs name = \"...\" or tag = N");
    const std::optional<std::int64_t> value = tag->value_exact<std::int64_t>();
    if (!tag->is_integer() || !value || *value < 1 || *value > INT_MAX)
      throw Error(at(*tag) + "tag must be an integer from 1 to " + std::to_string(INT_MAX) +
                  " (a Gmsh physical tag)");
    return {"", int(*value)};
  }

  cplx complex_value(const toml::node& node) const {
    if (const toml::array* pair = node.as_array()) {
      if (pair->size() != 2)
        throw Error(at(node) + "value [re, im] needs 2 numbers, got " +
                    std::to_string(pair->size()));
      return {number(*pair->get(0), "value's re"), number(*pair->get(1), "value's im")};
    }
    if (!node.is_number())
      throw Error(at(node) + "value must be a number or [re, im], not " + type_name(node));
    return number(node, "value");
  }

  GroupCondition read_condition(const toml::table& table, bool in_group) const {
    if (in_group)
      check_keys(table, "[[group]]", {"name", "tag", "condition", "value", "table"});
    else
      check_keys(table, "[default]", {"condition", "value", "table"});
    GroupCondition condition;
    condition.origin = line_of(table);
    if (in_group) condition.group = read_group(table);
    const toml::node* kind = table.get("condition");
    if (!kind)
      throw Error(at(table) +
                  "condition = \"...\" is missing (rigid, velocity, pressure, "
                  "admittance or impedance)");
    const std::string kind_text = string(*kind, "condition");
    const std::optional<ConditionKind> parsed = condition_from_name(kind_text);
    if (!parsed)
      throw Error(at(*kind) + "condition '" + kind_text +
                  "' is not known (choose rigid, velocity, pressure, admittance or impedance)");
    condition.kind = *parsed;
    const toml::node* value = table.get("value");
    const toml::node* file = table.get("table");
    if (value && file) throw Error(at(table) + "give value or table, not both");
    if (condition.kind == ConditionKind::rigid) {
      if (value || file)
        throw Error(at(value ? *value : *file) + "a rigid condition takes no value");
    } else if (!value && !file) {
      throw Error(at(table) + "a " + kind_text + " condition needs value = ... or table = \"...\"");
    }
    if (value) condition.value.constant = complex_value(*value);
    if (file) {
      // Relative to the project file's folder, so that a project can be run from anywhere.
      const std::filesystem::path table_path =
          std::filesystem::path(path_).parent_path() / string(*file, "table");
      condition.value.table = read_condition_table(table_path.lexically_normal().string(),
                                                   line_of(*file), condition.group);
    }
    check_condition(condition);
    return condition;
  }

  std::string path_;
};

}  // namespace

Project read_project_file(const std::string& path) { return ProjectReader(path).read(); }

}  // namespace fmbem
