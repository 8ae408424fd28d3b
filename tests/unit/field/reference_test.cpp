// The HRTF's reference source (field::reference_source, reference_pressure) against its
// definition written out here.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <numbers>
#include <string>
#include <vector>

#include "../problem/conditions_test_support.hpp"
#include "fmbem/core/error.hpp"
#include "fmbem/field/problem_field.hpp"
#include "fmbem/mesh/mesh.hpp"
#include "fmbem/problem/element_conditions.hpp"
#include "fmbem/problem/problem.hpp"

namespace fmbem::field {
namespace {

using test::error_of;

// An icosphere whose elements above z = 0.7 vibrate (class 0), the rest rigid (class 1).
ProblemSpec vibrating_cap(const Mesh& mesh, double k, cplx velocity) {
  auto data = std::make_shared<SurfaceData>();
  data->classes = {test::constant_condition(ConditionKind::velocity, velocity),
                   test::constant_condition(ConditionKind::rigid, 0.0)};
  data->labels = {"group 'cap'", "elements of no condition"};
  data->medium = Medium{340.0, 1.2};
  auto classes = std::make_shared<std::vector<std::int32_t>>(mesh.size());
  for (std::size_t e = 0; e < mesh.size(); ++e) (*classes)[e] = mesh.centroids()[e].z > 0.7 ? 0 : 1;
  ProblemSpec spec;
  spec.kind = ProblemKind::Surface;
  spec.k = k;
  spec.surface = std::move(data);
  spec.element_class = std::move(classes);
  return spec;
}

TEST(ReferenceSource, VolumeVelocityPointSourceIsWilliamsMonopole) {
  const Mesh mesh = Mesh::from_surface(make_icosphere(2, 1.0), "icosphere:2");
  const cplx v(2e-3, -1e-3);
  const double k = 3.0;
  const Problem problem(mesh, vibrating_cap(mesh, k, v));
  const Vec3 center{0.1, 0.0, -0.2};
  const ReferenceSource source = reference_source(problem, mesh, {}, center);
  ASSERT_EQ(source.kind, ReferenceSource::Kind::volume_velocity);
  double cap_area = 0.0;
  for (std::size_t e = 0; e < mesh.size(); ++e)
    if (mesh.centroids()[e].z > 0.7) cap_area += mesh.areas()[e];
  EXPECT_LT(std::abs(source.volume_velocity - v * cap_area), 1e-15 * std::abs(v * cap_area));
  const std::vector<Vec3> points{{2, 0, 0}, {0.1, 0.0, -0.2}, {-1, 1, 3}};
  const std::vector<cplx> p = reference_pressure(problem, source, center, points);
  const double omega = k * 340.0, rho = 1.2;
  for (std::size_t i : {0u, 2u}) {
    const double r = norm(points[i] - center);
    const cplx expected = cplx(0.0, -1.0) * omega * rho * v * cap_area *
                          std::exp(cplx(0.0, k * r)) / (4.0 * std::numbers::pi * r);
    EXPECT_LT(std::abs(p[i] - expected), 1e-14 * std::abs(expected)) << i;
  }
  EXPECT_TRUE(std::isnan(p[1].real()));  // the centre itself
}

TEST(ReferenceSource, IncidentWaveAndMonopole) {
  const Mesh mesh = Mesh::from_surface(make_icosphere(1, 1.0), "icosphere:1");
  ProblemSpec scattering;
  scattering.k = 2.0;
  scattering.incident = exact::Incident::plane_wave({1, 0, 0});
  const Problem wave(mesh, scattering);
  const Vec3 center{0.25, 0, 0};
  const ReferenceSource incident = reference_source(wave, mesh, {}, center);
  EXPECT_EQ(incident.kind, ReferenceSource::Kind::incident);
  const std::vector<cplx> p = reference_pressure(wave, incident, center, {{Vec3{3, 1, 0}}});
  EXPECT_LT(std::abs(p[0] - std::exp(cplx(0.0, 0.5))), 1e-15);
  ProblemSpec radiation;
  radiation.kind = ProblemKind::Radiation;
  radiation.k = 2.0;
  radiation.source = {0.1, 0, 0};
  const Problem monopole(mesh, radiation);
  const ReferenceSource moved = reference_source(monopole, mesh, {}, Vec3{});
  const std::vector<cplx> g = reference_pressure(monopole, moved, Vec3{}, {{Vec3{0, 2, 0}}});
  EXPECT_LT(std::abs(g[0] - std::exp(cplx(0.0, 4.0)) / (8.0 * std::numbers::pi)), 1e-15);
}

TEST(ReferenceSource, RefusesWhatHasNoReference) {
  const Mesh mesh = Mesh::from_surface(make_icosphere(1, 1.0), "icosphere:1");
  ProblemSpec pressure = vibrating_cap(mesh, 2.0, 1e-3);
  auto data = std::make_shared<SurfaceData>(*pressure.surface);
  data->classes[0] = test::constant_condition(ConditionKind::pressure, 1.0);
  pressure.surface = data;
  EXPECT_NE(error_of([&] { check_reference(pressure); }).find("driven by a pressure"),
            std::string::npos);
  ProblemSpec both = vibrating_cap(mesh, 2.0, 1e-3);
  both.incident_wave = true;
  EXPECT_NE(error_of([&] { check_reference(both); }).find("-bem_sources separate"),
            std::string::npos);
  ProblemSpec laplace;
  laplace.k = 0.0;
  EXPECT_NE(error_of([&] { check_reference(laplace); }).find("k > 0"), std::string::npos);
  // No volume velocity: the velocities of a surface whose driven class has no element here.
  ProblemSpec still = vibrating_cap(mesh, 2.0, 1e-3);
  auto none = std::make_shared<std::vector<std::int32_t>>(mesh.size(), 1);
  still.element_class = none;
  const Problem quiet(mesh, still);
  EXPECT_NE(error_of([&] { reference_source(quiet, mesh, {}, Vec3{}); }).find("no volume velocity"),
            std::string::npos);
}

}  // namespace
}  // namespace fmbem::field
