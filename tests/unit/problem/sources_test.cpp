#include "fmbem/problem/sources.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "conditions_test_support.hpp"
#include "fmbem/mesh/mesh.hpp"
#include "fmbem/problem/element_conditions.hpp"
#include "fmbem/problem/problem.hpp"

namespace fmbem {
namespace {

using test::contains;
using test::error_of;

// An icosphere whose elements fall in five classes by their centroid's z: two vibrating ears
// (velocity), an absorbing belt (admittance), a pressure-release patch of 0 Pa, and the rest
// rigid. Each class's data apart is what separate sources silence.
ProblemSpec two_ear_spec(const Mesh& mesh, double k) {
  auto data = std::make_shared<SurfaceData>();
  data->classes = {test::constant_condition(ConditionKind::velocity, 1e-3),
                   test::constant_condition(ConditionKind::velocity, cplx(0.0, 2e-3)),
                   test::constant_condition(ConditionKind::admittance, cplx(0.5, 0.2)),
                   test::constant_condition(ConditionKind::pressure, 0.0),
                   test::constant_condition(ConditionKind::rigid, 0.0)};
  data->labels = {"group 'left_ear'", "group 'right_ear'", "group 'belt'", "group 'vent'",
                  "elements of no condition"};
  auto element_class = std::make_shared<std::vector<std::int32_t>>(mesh.size());
  for (std::size_t e = 0; e < mesh.size(); ++e) {
    const double z = mesh.centroids()[e].z, x = mesh.centroids()[e].x;
    (*element_class)[e] = z > 0.8 ? 0 : z < -0.8 ? 1 : std::abs(z) < 0.1 ? 2 : x > 0.8 ? 3 : 4;
  }
  ProblemSpec spec;
  spec.kind = ProblemKind::Surface;
  spec.k = k;
  spec.formulation = Formulation::BurtonMiller;
  spec.surface = std::move(data);
  spec.element_class = std::move(element_class);
  return spec;
}

TEST(Sources, EachPlaneWaveDirectionIsASource) {
  ProblemSpec base;
  base.kind = ProblemKind::Scattering;
  SourceList list;
  list.directions = {{0, 0, 1}, {1, 0, 0}, {0, -2, 0}};
  const std::vector<SourceCase> cases = source_cases(base, list);
  ASSERT_EQ(cases.size(), 3u);
  for (std::size_t s = 0; s < 3; ++s) {
    EXPECT_EQ(cases[s].spec.incident.kind, exact::Incident::Kind::PlaneWave);
    EXPECT_EQ(cases[s].spec.incident.direction.x, list.directions[s].x);
    EXPECT_EQ(cases[s].spec.incident.direction.y, list.directions[s].y);
    EXPECT_EQ(cases[s].spec.incident.direction.z, list.directions[s].z);
  }
  EXPECT_EQ(cases[2].label, "plane wave towards 0,-2,0");
  // No list: the spec's one wave.
  EXPECT_EQ(source_cases(base, SourceList{}).size(), 1u);
}

TEST(Sources, PointSourcesAndMonopolesAreSources) {
  ProblemSpec scattering;
  scattering.incident = exact::Incident::point_source({3, 0, 0});
  SourceList list;
  list.positions = {{3, 0, 0}, {0, 4, 0}};
  const std::vector<SourceCase> incident = source_cases(scattering, list);
  ASSERT_EQ(incident.size(), 2u);
  EXPECT_EQ(incident[1].spec.incident.kind, exact::Incident::Kind::PointSource);
  EXPECT_EQ(incident[1].spec.incident.source.y, 4.0);
  EXPECT_EQ(incident[1].label, "point source at 0,4,0");
  ProblemSpec radiation;
  radiation.kind = ProblemKind::Radiation;
  list.positions = {{0.1, 0, 0}, {0, 0.2, 0}};
  const std::vector<SourceCase> monopoles = source_cases(radiation, list);
  ASSERT_EQ(monopoles.size(), 2u);
  EXPECT_EQ(monopoles[1].spec.source.y, 0.2);
  EXPECT_EQ(monopoles[0].label, "monopole at 0.1,0,0");
}

TEST(Sources, SeparateGroupsSilenceTheOthersAndKeepTheOperator) {
  const Mesh mesh = Mesh::from_surface(make_icosphere(2, 1.0), "icosphere:2");
  const ProblemSpec base = two_ear_spec(mesh, 2.0);
  SourceList list;
  list.separate_groups = true;
  const std::vector<SourceCase> cases = source_cases(base, list);
  // The two ears; the admittance belt is part of the operator, the 0 Pa vent drives nothing.
  ASSERT_EQ(cases.size(), 2u);
  EXPECT_EQ(cases[0].label, "group 'left_ear' (velocity)");
  EXPECT_EQ(cases[1].label, "group 'right_ear' (velocity)");
  const auto& left = cases[0].spec.surface->classes;
  const auto& right = cases[1].spec.surface->classes;
  EXPECT_EQ(left[0].kind, ConditionKind::velocity);
  EXPECT_EQ(left[0].value.constant, cplx(1e-3));
  EXPECT_EQ(left[1].kind, ConditionKind::rigid);
  EXPECT_EQ(right[0].kind, ConditionKind::rigid);
  EXPECT_EQ(right[1].value.constant, cplx(0.0, 2e-3));
  EXPECT_EQ(left[2].kind, ConditionKind::admittance);
  EXPECT_EQ(left[2].value.constant, cplx(0.5, 0.2));
  // What the shared set-up relies on: every source's operator is the first one's, for each
  // formulation (a silenced velocity is rigid: the same unknown u and q = 0 + 0 u).
  for (const Formulation formulation :
       {Formulation::Conventional, Formulation::BurtonMiller, Formulation::Regularised}) {
    std::vector<std::unique_ptr<Problem>> problems;
    for (const SourceCase& c : cases) {
      ProblemSpec spec = c.spec;
      spec.formulation = formulation;
      problems.push_back(std::make_unique<Problem>(mesh, spec));
    }
    if (formulation == Formulation::Regularised) {
      const RegularisedCoefficients a = problems[0]->regularised_coefficients(),
                                    b = problems[1]->regularised_coefficients();
      EXPECT_EQ(a.alpha, b.alpha);
      EXPECT_EQ(a.beta, b.beta);
      for (std::size_t e = 0; e < mesh.size(); ++e) {
        EXPECT_EQ(a.value.identity_of(e), b.value.identity_of(e)) << e;
        EXPECT_EQ(a.value.double_layer_of(e), b.value.double_layer_of(e)) << e;
        EXPECT_EQ(a.value.single_layer_of(e), b.value.single_layer_of(e)) << e;
        EXPECT_EQ(a.derivative_identity_of(e), b.derivative_identity_of(e)) << e;
        EXPECT_EQ(a.is_regularised(e), b.is_regularised(e)) << e;
      }
    } else {
      const OperatorCoefficients a = problems[0]->coefficients(), b = problems[1]->coefficients();
      for (std::size_t e = 0; e < mesh.size(); ++e) {
        EXPECT_EQ(a.identity_of(e), b.identity_of(e)) << e;
        EXPECT_EQ(a.double_layer_of(e), b.double_layer_of(e)) << e;
        EXPECT_EQ(a.single_layer_of(e), b.single_layer_of(e)) << e;
      }
    }
  }
}

TEST(Sources, SeparateGroupsWithIncidentWaves) {
  const Mesh mesh = Mesh::from_surface(make_icosphere(1, 1.0), "icosphere:1");
  ProblemSpec base = two_ear_spec(mesh, 2.0);
  base.incident_wave = true;
  SourceList list;
  list.directions = {{0, 0, 1}, {1, 0, 0}};
  // Together: the groups' data go with each wave.
  const std::vector<SourceCase> together = source_cases(base, list);
  ASSERT_EQ(together.size(), 2u);
  EXPECT_EQ(together[1].spec.surface->classes[1].kind, ConditionKind::velocity);
  EXPECT_TRUE(together[1].spec.incident_wave);
  // Separate: the waves with every group silenced, then each ear alone without a wave.
  list.separate_groups = true;
  const std::vector<SourceCase> separate = source_cases(base, list);
  ASSERT_EQ(separate.size(), 4u);
  for (std::size_t s = 0; s < 2; ++s) {
    EXPECT_TRUE(separate[s].spec.incident_wave);
    for (const GroupCondition& c : separate[s].spec.surface->classes)
      EXPECT_FALSE(is_excitation(c));
  }
  EXPECT_FALSE(separate[2].spec.incident_wave);
  EXPECT_TRUE(is_excitation(separate[3].spec.surface->classes[1]));
  EXPECT_FALSE(is_excitation(separate[3].spec.surface->classes[0]));
}

TEST(Sources, RefusesWhatCannotBeSeparated) {
  ProblemSpec scattering;
  SourceList list;
  list.separate_groups = true;
  EXPECT_TRUE(contains(error_of([&] { source_cases(scattering, list); }),
                       "applies to surface groups' velocities and pressures"));
  const Mesh mesh = Mesh::from_surface(make_icosphere(1, 1.0), "icosphere:1");
  ProblemSpec quiet = two_ear_spec(mesh, 2.0);
  auto data = std::make_shared<SurfaceData>(*quiet.surface);
  data->classes[0] = test::constant_condition(ConditionKind::rigid, 0.0);
  data->classes[1] = test::constant_condition(ConditionKind::velocity, 0.0);
  quiet.surface = data;
  EXPECT_TRUE(contains(error_of([&] { source_cases(quiet, list); }), "nothing drives the field"));
  // A table counts as driving (its values are read per frequency).
  data->classes[1].value.table = std::make_shared<FrequencyTable>(
      std::vector<double>{100.0, 200.0}, std::vector<cplx>{0.0, 0.0}, "table.csv");
  EXPECT_EQ(source_cases(quiet, list).size(), 1u);
}

}  // namespace
}  // namespace fmbem
