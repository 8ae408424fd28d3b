#include <gtest/gtest.h>

#include <algorithm>
#include <span>
#include <vector>

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
