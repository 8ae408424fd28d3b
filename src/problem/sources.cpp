#include "fmbem/problem/sources.hpp"

#include <algorithm>
#include <memory>

#include "fmbem/core/error.hpp"

namespace fmbem {
namespace {

std::string incident_label(const exact::Incident& incident) {
  return incident.kind == exact::Incident::Kind::PlaneWave
             ? "plane wave towards " + format_point(incident.direction)
             : "point source at " + format_point(incident.source);
}

// The surface data with each excitation class c for which quiet(c) silenced.
template <typename Quiet>
std::shared_ptr<const SurfaceData> silenced_where(const SurfaceData& data, Quiet quiet) {
  auto out = std::make_shared<SurfaceData>(data);
  for (std::size_t c = 0; c < out->classes.size(); ++c) {
    GroupCondition& condition = out->classes[c];
    if (!quiet(c) || !is_excitation(condition)) continue;
    condition.value = ConditionValue{};
    if (condition.kind == ConditionKind::velocity) condition.kind = ConditionKind::rigid;
  }
  return out;
}

// The surface data with every class but `kept` (none: -1) silenced.
std::shared_ptr<const SurfaceData> silenced(const SurfaceData& data, std::ptrdiff_t kept) {
  return silenced_where(data, [&](std::size_t c) { return std::ptrdiff_t(c) != kept; });
}

}  // namespace

bool is_excitation(const GroupCondition& condition) {
  return (condition.kind == ConditionKind::velocity || condition.kind == ConditionKind::pressure) &&
         (condition.value.table || condition.value.constant != cplx(0.0));
}

std::vector<SourceCase> source_cases(const ProblemSpec& base, const SourceList& list) {
  const bool surface = base.kind == ProblemKind::Surface;
  if (list.separate_groups && !surface)
    throw Error(
        "-bem_sources separate applies to surface groups' velocities and pressures (-bem_velocity, "
        "-bem_pressure, -bem_project); this problem has none");
  // The incident waves (or the radiating monopoles), each with base's other data.
  std::vector<SourceCase> cases;
  const bool radiation = base.kind == ProblemKind::Radiation;
  const bool incident = base.kind == ProblemKind::Scattering || (surface && base.incident_wave);
  if (radiation) {
    if (list.positions.empty()) cases.push_back({base, "monopole at " + format_point(base.source)});
    for (const Vec3& p : list.positions) {
      ProblemSpec spec = base;
      spec.source = p;
      cases.push_back({std::move(spec), "monopole at " + format_point(p)});
    }
  } else if (incident) {
    const bool plane = base.incident.kind == exact::Incident::Kind::PlaneWave;
    const std::vector<Vec3>& given = plane ? list.directions : list.positions;
    if (given.empty()) cases.push_back({base, incident_label(base.incident)});
    for (const Vec3& v : given) {
      ProblemSpec spec = base;
      const cplx amplitude = base.incident.amplitude;
      spec.incident = plane ? exact::Incident::plane_wave(v, amplitude)
                            : exact::Incident::point_source(v, amplitude);
      std::string label = incident_label(spec.incident);
      cases.push_back({std::move(spec), std::move(label)});
    }
  }
  if (!surface) return cases;
  const SurfaceData& data = *base.surface;
  if (!list.class_sets.empty()) {
    // Each set its own source with the other sets' classes silenced; the incident wave and the
    // classes of no set go with every one.
    std::vector<SourceCase> sets;
    for (std::size_t s = 0; s < list.class_sets.size(); ++s) {
      const auto in_set = [&](std::size_t set, std::size_t c) {
        const std::vector<std::size_t>& members = list.class_sets[set];
        return std::find(members.begin(), members.end(), c) != members.end();
      };
      ProblemSpec spec = base;
      spec.surface = silenced_where(data, [&](std::size_t c) {
        if (in_set(s, c)) return false;
        for (std::size_t other = 0; other < list.class_sets.size(); ++other)
          if (in_set(other, c)) return true;
        return false;
      });
      sets.push_back({spec, s < list.set_labels.size() ? list.set_labels[s]
                                                       : "source " + std::to_string(s + 1)});
    }
    return sets;
  }
  if (!list.separate_groups) {
    // The classes' data go with every incident wave, or are the one source.
    if (cases.empty()) cases.push_back({base, "the groups' conditions"});
    return cases;
  }
  const std::shared_ptr<const SurfaceData> quiet = silenced(data, -1);
  for (SourceCase& c : cases) c.spec.surface = quiet;
  for (std::size_t c = 0; c < data.classes.size(); ++c) {
    if (!is_excitation(data.classes[c])) continue;
    ProblemSpec spec = base;
    spec.incident_wave = false;
    spec.surface = silenced(data, std::ptrdiff_t(c));
    cases.push_back({spec, data.labels[c] + " (" + condition_name(data.classes[c].kind) + ")"});
  }
  if (cases.empty())
    throw Error(
        "-bem_sources separate: no group has a velocity or pressure other than 0 and there is no "
        "incident wave: nothing drives the field");
  return cases;
}

}  // namespace fmbem
