#include "fmbem/problem/element_conditions.hpp"

#include <cmath>
#include <numbers>

#include "fmbem/core/error.hpp"

namespace fmbem {
namespace {

std::string group_label(const SurfaceGroup& group) {
  std::string label = group.name.empty()
                          ? "group with tag " + std::to_string(group.tag)
                          : "group '" + group.name + "' (tag " + std::to_string(group.tag) + ")";
  return label;
}

bool selects(const GroupSelector& selector, const SurfaceGroup& group) {
  return selector.tag ? *selector.tag == group.tag : selector.name == group.name;
}

}  // namespace

double frequency_of(double k, const Medium& medium) {
  return k * medium.sound_speed / (2.0 * std::numbers::pi);
}

ElementClasses assign_conditions(const Mesh& mesh, const SurfaceConditions& conditions,
                                 const Medium& medium) {
  auto data = std::make_shared<SurfaceData>();
  data->medium = medium;
  const std::vector<SurfaceGroup>& groups = mesh.groups();
  // Each mesh group's class (-1: none given: the default's).
  std::vector<std::int32_t> class_of_group(groups.size(), -1);
  for (const GroupCondition& condition : conditions.groups) {
    const std::string where = condition.origin + ": group '" + condition.group.text() + "'";
    std::int32_t found = -1;
    for (std::size_t g = 0; g < groups.size(); ++g) {
      if (!selects(condition.group, groups[g])) continue;
      if (groups[g].dimension != 2)
        throw Error(where + " is a physical group of dimension " +
                    std::to_string(groups[g].dimension) + " in mesh '" + mesh.name() +
                    "': conditions go on surface groups (dimension 2)");
      if (found >= 0)
        throw Error(where + " names two surface groups of mesh '" + mesh.name() + "' (tags " +
                    std::to_string(groups[std::size_t(found)].tag) + " and " +
                    std::to_string(groups[g].tag) + "): give it by tag");
      found = std::int32_t(g);
    }
    if (found < 0) {
      if (groups.empty())
        throw Error(where + ": mesh '" + mesh.name() +
                    "' has no physical groups (an icosphere never has; a Gmsh file has them "
                    "as Physical Surface): only -bem_default_condition applies to it");
      std::string names;
      for (const SurfaceGroup& g : groups)
        if (g.dimension == 2)
          names += std::string(names.empty() ? "" : ", ") +
                   (g.name.empty() ? "tag " + std::to_string(g.tag) : "'" + g.name + "'");
      throw Error(where + " is not a surface group of mesh '" + mesh.name() + "' (it has " +
                  (names.empty() ? std::string("none") : names) + ")");
    }
    const std::int32_t c = std::int32_t(data->classes.size());
    if (class_of_group[std::size_t(found)] >= 0) {
      const GroupCondition& first = data->classes[std::size_t(class_of_group[std::size_t(found)])];
      throw Error(group_label(groups[std::size_t(found)]) + " of mesh '" + mesh.name() +
                  "' is given two conditions (" + condition_name(first.kind) + " at " +
                  first.origin + " as '" + first.group.text() + "' and " +
                  condition_name(condition.kind) + " at " + condition.origin + " as '" +
                  condition.group.text() + "')");
    }
    class_of_group[std::size_t(found)] = c;
    data->classes.push_back(condition);
    data->labels.push_back(group_label(groups[std::size_t(found)]));
  }
  if (!conditions.groups.empty() && mesh.group_overlap()) {
    const GroupOverlap& o = *mesh.group_overlap();
    throw Error("mesh '" + mesh.name() + "': element " + std::to_string(o.triangle) +
                " (0-based, in the file's order) is in two surface groups, " +
                group_label(groups[std::size_t(o.first)]) + " and " +
                group_label(groups[std::size_t(o.second)]) +
                ": each element needs one condition; make the groups disjoint");
  }
  // The default class: the user's, or rigid; present only when some element takes it.
  const std::vector<std::int32_t>& element_groups = mesh.element_groups();
  bool defaulted = element_groups.empty();
  for (const std::int32_t g : element_groups)
    if (g < 0 || class_of_group[std::size_t(g)] < 0) defaulted = true;
  const std::int32_t default_class = std::int32_t(data->classes.size());
  if (defaulted) {
    GroupCondition fallback;
    fallback.origin = "the default (rigid)";
    if (conditions.fallback) fallback = *conditions.fallback;
    data->classes.push_back(fallback);
    data->labels.push_back(element_groups.empty() ? "every element" : "elements of no condition");
  }
  ElementClasses out;
  out.element_class.assign(mesh.size(), default_class);
  for (std::size_t e = 0; e < element_groups.size(); ++e)
    if (element_groups[e] >= 0 && class_of_group[std::size_t(element_groups[e])] >= 0)
      out.element_class[e] = class_of_group[std::size_t(element_groups[e])];
  out.data = std::move(data);
  return out;
}

ClassData class_data(const GroupCondition& condition, double k, const Medium& medium,
                     const std::string& label) {
  if (!(k > 0.0))
    throw Error(label + ": boundary conditions on surface groups need a frequency above 0");
  const double frequency = frequency_of(k, medium);
  const cplx value =
      condition.kind == ConditionKind::rigid
          ? cplx(0.0)
          : condition.value.at(frequency, condition.group.empty() ? std::string("default")
                                                                  : condition.group.text());
  const cplx i_k(0.0, k);
  ClassData data;
  switch (condition.kind) {
    case ConditionKind::rigid:
      break;
    case ConditionKind::velocity:
      data.value = i_k * (medium.density * medium.sound_speed) * value;
      break;
    case ConditionKind::pressure:
      data.pressure_given = true;
      data.value = value;
      break;
    case ConditionKind::admittance:
      data.robin = -i_k * value;
      break;
    case ConditionKind::impedance:
      if (value == cplx(0.0))
        throw Error(label + ": impedance 0 at " + std::to_string(frequency) +
                    " Hz (a pressure-release surface: give it as pressure 0)");
      data.robin = -i_k / value;
      break;
  }
  if (!std::isfinite(data.value.real()) || !std::isfinite(data.value.imag()) ||
      !std::isfinite(data.robin.real()) || !std::isfinite(data.robin.imag()))
    throw Error(label + ": its value is not finite at " + std::to_string(frequency) + " Hz");
  return data;
}

}  // namespace fmbem
