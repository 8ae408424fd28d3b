#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <span>
#include <vector>

#include "../bem/bem_test_support.hpp"
#include "fmbem/core/error.hpp"
#include "fmbem/mesh/mesh.hpp"
#include "fmbem/problem/problem.hpp"

namespace fmbem {
namespace {

// A rank evaluates the exact solution of its own rows only (bem_solve on several ranks).
TEST(ProblemRows, ExactSolutionOfSomeRowsIsTheWholeOnesSlice) {
  const Mesh mesh = Mesh::from_surface(make_icosphere(2, 1.0, {}), "icosphere:2");
  ProblemSpec spec;
  spec.k = 2.0;
  const Problem whole(mesh, spec);
  const Problem part(mesh, spec, RowRange{100, 220});
  ASSERT_TRUE(whole.exact_solution() && part.exact_solution());
  EXPECT_EQ(whole.exact_rows().begin, 0u);
  EXPECT_EQ(whole.exact_rows().end, mesh.size());
  ASSERT_EQ(part.exact_solution()->size(), 120u);
  for (std::size_t i = 0; i < 120; ++i)
    EXPECT_EQ((*part.exact_solution())[i], (*whole.exact_solution())[100 + i]);
  EXPECT_THROW(Problem(mesh, spec, RowRange{100, mesh.size() + 1}), Error);
}

// A part of the mesh (a rank's elements and halo): the problem takes the whole
// surface's facts (sphere fit, the source's clearance and winding number) from the whole mesh,
// and its exact values at the part's rows are the whole problem's there; without the facts,
// or with those of another source, it is refused, and so are facts formed from a part.
TEST(ProblemRows, PartWithTheWholeSurfacesFacts) {
  const Mesh mesh = Mesh::from_surface(make_icosphere(2, 1.0, {}), "icosphere:2");
  // Elements 100..219 and a few around them (the part's own numbering: their order).
  std::vector<std::size_t> held(140);
  std::iota(held.begin(), held.end(), std::size_t(90));
  const Mesh part = test::part_of_elements(mesh, held);
  const RowRange rows{10, 130};  // elements 100..219
  for (const ProblemKind kind : {ProblemKind::Scattering, ProblemKind::Radiation}) {
    ProblemSpec spec;
    spec.k = 2.0;
    spec.kind = kind;
    spec.source = Vec3{0.1, 0.2, -0.1};
    const SurfaceFacts facts = surface_facts(mesh, spec);
    EXPECT_EQ(facts.is_sphere, true);
    EXPECT_EQ(facts.has_source, kind == ProblemKind::Radiation);
    const Problem whole(mesh, spec);
    const Problem on_part(part, spec, rows, &facts);
    ASSERT_TRUE(whole.exact_solution() && on_part.exact_solution());
    ASSERT_EQ(on_part.exact_solution()->size(), rows.size());
    for (std::size_t i = 0; i < rows.size(); ++i)
      EXPECT_EQ((*on_part.exact_solution())[i], (*whole.exact_solution())[100 + i]);
    EXPECT_EQ(on_part.exact_name(), whole.exact_name());
    EXPECT_THROW(Problem(part, spec, rows), Error);
    EXPECT_THROW(surface_facts(part, spec), Error);
    ProblemSpec other = spec;
    other.kind = kind == ProblemKind::Radiation ? ProblemKind::Scattering : ProblemKind::Radiation;
    EXPECT_THROW(Problem(part, other, rows, &facts), Error);
  }
  // The facts refuse as the whole mesh does: a radiation source outside, one on the surface.
  ProblemSpec outside;
  outside.kind = ProblemKind::Radiation;
  outside.source = Vec3{2.0, 0.0, 0.0};
  const SurfaceFacts outside_facts = surface_facts(mesh, outside);
  EXPECT_THROW(Problem(part, outside, rows, &outside_facts), Error);
  outside.source = mesh.vertices()[0];
  const SurfaceFacts on_surface = surface_facts(mesh, outside);
  EXPECT_THROW(Problem(part, outside, rows, &on_surface), Error);
}

// The norms from the sums of two parts are the one pass's: the maximum exactly, the L2 ratio to
// the rounding of the two sums (a few ulp).
TEST(ProblemRows, ErrorSumsOfPartsCombine) {
  const Mesh mesh = Mesh::from_surface(make_icosphere(2, 1.0, {}), "icosphere:2");
  ProblemSpec spec;
  spec.k = 2.0;
  const Problem problem(mesh, spec);
  const std::vector<cplx> &exact = *problem.exact_solution();
  std::vector<cplx> solution(exact);
  for (std::size_t e = 0; e < solution.size(); ++e) solution[e] *= 1.0 + 1e-3 * double(e % 7);
  const std::size_t n = mesh.size(), cut = 137;
  const ErrorNorms one = error_norms(error_sums(mesh, {0, n}, solution, exact));
  const ErrorSums a =
      error_sums(mesh, {0, cut}, std::span(solution).first(cut), std::span(exact).first(cut));
  const ErrorSums b =
      error_sums(mesh, {cut, n}, std::span(solution).subspan(cut), std::span(exact).subspan(cut));
  const ErrorNorms two =
      error_norms({std::max(a.max_abs, b.max_abs), a.error2 + b.error2, a.exact2 + b.exact2});
  EXPECT_EQ(two.max_abs, one.max_abs);
  EXPECT_NEAR(two.relative_l2, one.relative_l2, 1e-14 * one.relative_l2);
  EXPECT_GT(one.relative_l2, 1e-4);  // the error is not zero
}

}  // namespace
}  // namespace fmbem
