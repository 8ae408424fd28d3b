#include "fmbem/field/problem_field.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <numbers>

#include "fmbem/core/error.hpp"
#include "fmbem/exact/sphere.hpp"
#include "fmbem/exact/sphere_cap.hpp"
#include "fmbem/exact/sphere_field.hpp"
#include "fmbem/problem/sources.hpp"

namespace fmbem::field {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

exact::SphereScatteredField sphere_field(const ProblemSpec& spec, const SphereFit& sphere) {
  return exact::SphereScatteredField(spec.k, sphere.radius, sphere.center,
                                     spec.bc == BoundaryCondition::Neumann
                                         ? exact::SphereBoundary::Rigid
                                         : exact::SphereBoundary::Soft,
                                     spec.incident);
}

}  // namespace

cplx sphere_scattered_at(const exact::SphereScatteredField& field, double k, const Vec3& center,
                         const Vec3& x) {
  const double r = norm(x - center);
  // The series' h_n(kr) / h_n(ka) carries the phase kr - ka as one double, which rounds by
  // kr eps / 2; the far-field form F(d) e^{ik|x|} / |x| is off by about N^2 / (2 kr) (the 1/kr
  // terms of h_n, N terms). It is the better one beyond kr = N / sqrt(2 eps), where both are
  // below N 1.5e-8.
  const double terms = double(std::max(field.terms(), 1));
  if (!(k > 0.0) || k * r <= terms / std::sqrt(2.0 * std::numeric_limits<double>::epsilon()))
    return field.scattered(x);
  const double distance = norm(x);  // F is relative to the origin
  return field.far_field(x * (1.0 / distance)) * std::polar(1.0 / distance, k * distance);
}

SurfaceTraces surface_traces(const Problem& problem, const Mesh& mesh,
                             std::span<const cplx> solution,
                             std::span<const std::int32_t> element_class) {
  const ProblemSpec& spec = problem.spec();
  if (spec.kind == ProblemKind::Surface) {
    const std::span<const std::int32_t> classes =
        element_class.empty() ? std::span<const std::int32_t>(*spec.element_class) : element_class;
    if (classes.size() != mesh.size() || solution.size() != mesh.size())
      throw Error("surface traces: one class and one value per element expected");
    SurfaceTraces traces;
    traces.u.resize(mesh.size());
    traces.q.resize(mesh.size());
    for (std::size_t e = 0; e < mesh.size(); ++e) {
      const ClassData& d = problem.class_data()[std::size_t(classes[e])];
      traces.u[e] = d.pressure_given ? d.value : solution[e];
      traces.q[e] = d.pressure_given ? solution[e] : d.value + d.robin * solution[e];
    }
    return traces;
  }
  const bool neumann = spec.bc == BoundaryCondition::Neumann;
  SurfaceTraces traces;
  std::vector<cplx>& unknown = neumann ? traces.u : traces.q;
  unknown.assign(solution.begin(), solution.end());
  if (spec.kind == ProblemKind::Radiation) {
    std::vector<cplx>& data = neumann ? traces.q : traces.u;
    data.resize(mesh.size());
    for (std::size_t e = 0; e < mesh.size(); ++e)
      data[e] = problem.radiating_monopole(mesh.centroids()[e], mesh.normals()[e], neumann);
  }
  return traces;
}

namespace {

// Whether every plane passes through the sphere's centre (its images are the sphere itself).
bool sphere_is_its_images(const ImagePlanes& planes, const SphereFit& sphere) {
  return planes.all_pass_through(sphere.center, 1e-6 * sphere.radius);
}

// `per_point` values of the incident wave at each point, value(x, j) the j-th at x; NaN at a
// point source's own position; none for a problem without an incident wave.
template <class Value>
std::vector<cplx> incident_at(const ProblemSpec& spec, std::span<const Vec3> points,
                              std::size_t per_point, Value&& value) {
  if (spec.kind == ProblemKind::Radiation ||
      (spec.kind == ProblemKind::Surface && !spec.incident_wave))
    return {};
  std::vector<cplx> values(per_point * points.size());
  const bool point_source = spec.incident.kind == exact::Incident::Kind::PointSource;
#pragma omp parallel for schedule(static)
  for (std::size_t i = 0; i < points.size(); ++i)
    for (std::size_t j = 0; j < per_point; ++j)
      values[per_point * i + j] = point_source && points[i] == spec.incident.source
                                      ? cplx(kNaN, kNaN)
                                      : value(points[i], j);
  return values;
}

}  // namespace

// With image planes the wave's images too (ImagePlanes::data_weight), as the problem's data.
std::vector<cplx> incident_field_at(const Problem& problem, std::span<const Vec3> points) {
  const ProblemSpec& spec = problem.spec();
  const ImagePlanes& planes = problem.image_planes();
  return incident_at(spec, points, 1, [&](const Vec3& x, std::size_t) {
    return planes.symmetrize(
        x, [&](const Vec3& y) { return exact::incident_field(spec.k, spec.incident, y); });
  });
}

std::vector<cplx> incident_gradient_at(const Problem& problem, std::span<const Vec3> points) {
  const ProblemSpec& spec = problem.spec();
  const ImagePlanes& planes = problem.image_planes();
  constexpr Vec3 axes[3] = {{1.0, 0.0, 0.0}, {0.0, 1.0, 0.0}, {0.0, 0.0, 1.0}};
  // d/dx_a of u(R_g x) is (L_g a) . grad u at R_g x.
  return incident_at(spec, points, 3, [&](const Vec3& x, std::size_t a) {
    cplx sum{};
    for (std::size_t g = 0; g < planes.images(); ++g)
      sum += planes.data_weight(g) *
             exact::incident_normal_derivative(spec.k, spec.incident, planes.reflect(g, x),
                                               planes.reflect_direction(g, axes[a]));
    return sum;
  });
}

void check_reference(const ProblemSpec& spec) {
  if (!(spec.k > 0.0))
    throw Error("-bem_field_reference needs k > 0 (a Laplace field has no acoustic reference)");
  if (spec.kind != ProblemKind::Surface) return;
  bool velocity = false;
  for (const GroupCondition& c : spec.surface->classes) {
    const bool driven = is_excitation(c);
    if (c.kind == ConditionKind::pressure && driven)
      throw Error(
          "-bem_field_reference: a surface driven by a pressure has no volume velocity to "
          "reference to (the reference is a point source of the vibrating surface's volume "
          "velocity, or the incident wave)");
    velocity = velocity || (c.kind == ConditionKind::velocity && driven);
  }
  if (velocity && spec.incident_wave)
    throw Error(
        "-bem_field_reference: a vibrating surface and an incident wave in one source have two "
        "references; solve them apart with -bem_sources separate");
}

ReferenceSource reference_source(const Problem& problem, const Mesh& mesh,
                                 std::span<const std::int32_t> element_class, const Vec3& center) {
  const ProblemSpec& spec = problem.spec();
  check_reference(spec);
  ReferenceSource out;
  if (spec.kind == ProblemKind::Radiation) {
    out.kind = ReferenceSource::Kind::monopole;
    out.description = "the monopole moved to " + format_point(center);
    return out;
  }
  if (spec.kind == ProblemKind::Scattering || spec.incident_wave) {
    out.kind = ReferenceSource::Kind::incident;
    out.incident_at_center = exact::incident_field(spec.k, spec.incident, center);
    out.description = "the incident wave at " + format_point(center);
    return out;
  }
  // The vibrating surface's volume velocity: every velocity element's v_n times its area.
  const SurfaceData& data = *spec.surface;
  const double frequency = frequency_of(spec.k, data.medium);
  std::vector<cplx> velocity(data.classes.size());
  for (std::size_t c = 0; c < data.classes.size(); ++c)
    if (data.classes[c].kind == ConditionKind::velocity)
      velocity[c] = data.classes[c].value_at(frequency);
  cplx q = 0.0;
  Vec3 moment{};
  double vibrating_area = 0.0;
  for (std::size_t e = 0; e < mesh.size(); ++e) {
    const std::int32_t c = element_class.empty() ? problem.element_class(e) : element_class[e];
    q += velocity[std::size_t(c)] * mesh.areas()[e];
    if (velocity[std::size_t(c)] != cplx(0.0)) {
      moment += mesh.centroids()[e] * mesh.areas()[e];
      vibrating_area += mesh.areas()[e];
    }
  }
  if (q == cplx(0.0))
    throw Error(
        "-bem_field_reference: the surface has no volume velocity (no velocity group, or its "
        "velocities cancel): nothing to reference to");
  out.kind = ReferenceSource::Kind::volume_velocity;
  out.volume_velocity = q;
  out.vibrating_center = moment * (1.0 / vibrating_area);
  char text[160];
  std::snprintf(text, sizeof text, " of volume velocity Q = %.17g%+.17gi m^3/s", q.real(),
                q.imag());
  out.description = "a point source at " + format_point(center) + text;
  return out;
}

std::vector<cplx> reference_pressure(const Problem& problem, const ReferenceSource& source,
                                     const Vec3& center, std::span<const Vec3> points) {
  const ProblemSpec& spec = problem.spec();
  std::vector<cplx> values(points.size());
  cplx strength = 1.0;  // of G(r) = e^{ikr} / (4 pi r)
  if (source.kind == ReferenceSource::Kind::volume_velocity) {
    const Medium& medium = spec.surface->medium;
    // -i omega rho Q e^{ikr} / (4 pi r) = -i omega rho Q G(r), omega = k c.
    strength = cplx(0.0, -spec.k * medium.sound_speed * medium.density) * source.volume_velocity;
  }
  for (std::size_t i = 0; i < points.size(); ++i)
    values[i] = source.kind == ReferenceSource::Kind::incident
                    ? source.incident_at_center
                    : (points[i] == center ? cplx(kNaN, kNaN)
                                           : strength * exact::monopole(spec.k, center, points[i]));
  return values;
}

std::optional<ExactField> exact_scattered_field(const Problem& problem, const Mesh& mesh,
                                                std::span<const Vec3> points,
                                                std::span<const PointLocation> locations) {
  const ProblemSpec& spec = problem.spec();
  ExactField out;
  out.values.assign(points.size(), cplx(kNaN, kNaN));
  if (spec.kind == ProblemKind::Surface) {
    const SurfaceFacts& facts = problem.facts();
    if (!facts.is_sphere || facts.cap_class < 0 || spec.incident_wave) return std::nullopt;
    const ClassData& cap = problem.class_data()[std::size_t(facts.cap_class)];
    const exact::SphereCapRadiation series(spec.k, facts.sphere.radius, facts.sphere.center,
                                           facts.cap_axis, facts.cap_half_angle, cap.value);
    out.name =
        "vibrating cap series off the surface (" + std::to_string(series.terms()) + " terms)";
#pragma omp parallel for schedule(dynamic, 64)
    for (std::size_t i = 0; i < points.size(); ++i)
      if (locations[i] == PointLocation::exterior) out.values[i] = series.value(points[i]);
    return out;
  }
  const ImagePlanes& planes = mesh.image_planes();
  if (spec.kind == ProblemKind::Radiation) {
    out.name = planes.empty() ? "monopole at the source" : "monopole at the source and its images";
    for (std::size_t i = 0; i < points.size(); ++i)
      if (locations[i] == PointLocation::exterior)
        out.values[i] = planes.symmetrize(
            points[i], [&](const Vec3& y) { return exact::monopole(spec.k, spec.source, y); });
    return out;
  }
  const std::optional<SphereFit> sphere = fit_sphere(mesh);
  if (!sphere || !sphere_is_its_images(planes, *sphere)) return std::nullopt;
  const exact::SphereScatteredField field = sphere_field(spec, *sphere);
  const bool closed_form =
      spec.k == 0 && spec.incident.kind == exact::Incident::Kind::PlaneWave;  // u_s = 0 or -a/r
  out.name = std::string(spec.bc == BoundaryCondition::Neumann ? "rigid" : "soft") + " sphere " +
             (closed_form ? "Laplace closed form (uniform incidence)"
                          : (spec.k > 0 ? "Mie series" : "Laplace series") +
                                std::string(" off the surface (") + std::to_string(field.terms()) +
                                " terms)");
#pragma omp parallel for schedule(dynamic, 64)
  for (std::size_t i = 0; i < points.size(); ++i)
    if (locations[i] == PointLocation::exterior)
      out.values[i] = planes.symmetrize(points[i], [&](const Vec3& y) {
        return sphere_scattered_at(field, spec.k, sphere->center, y);
      });
  return out;
}

std::optional<std::vector<cplx>> exact_far_field(const Problem& problem, const Mesh& mesh,
                                                 std::span<const Vec3> directions) {
  const ProblemSpec& spec = problem.spec();
  if (!(spec.k > 0) || spec.kind == ProblemKind::Surface) return std::nullopt;
  std::vector<cplx> values(directions.size());
  // With image planes: the images' patterns (far_field_images), the data's weights.
  const ImagePlanes& planes = mesh.image_planes();
  if (spec.kind == ProblemKind::Radiation) {
    for (std::size_t i = 0; i < directions.size(); ++i)
      values[i] =
          far_field_images(planes, spec.k, directions[i], true, [&](std::size_t, const Vec3& d) {
            return std::polar(0.25 / std::numbers::pi, -spec.k * dot(normalized(d), spec.source));
          });
    return values;
  }
  const std::optional<SphereFit> sphere = fit_sphere(mesh);
  if (!sphere || !sphere_is_its_images(planes, *sphere)) return std::nullopt;
  const exact::SphereScatteredField field = sphere_field(spec, *sphere);
  for (std::size_t i = 0; i < directions.size(); ++i)
    values[i] = far_field_images(planes, spec.k, directions[i], true,
                                 [&](std::size_t, const Vec3& d) { return field.far_field(d); });
  return values;
}

FieldError field_error(std::span<const cplx> values, std::span<const cplx> exact) {
  double error2 = 0.0, exact2 = 0.0, max_abs = 0.0;
  std::size_t count = 0;
  for (std::size_t i = 0; i < exact.size(); ++i) {
    if (std::isnan(exact[i].real())) continue;
    const double d = std::abs(values[i] - exact[i]);
    error2 += d * d;
    exact2 += std::norm(exact[i]);
    max_abs = std::max(max_abs, d);
    ++count;
  }
  return {exact2 > 0 ? std::sqrt(error2 / exact2) : kNaN, max_abs, count};
}

}  // namespace fmbem::field
