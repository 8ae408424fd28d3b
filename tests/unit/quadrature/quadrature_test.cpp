#include <gtest/gtest.h>

#include <cmath>

#include "fmbem/core/error.hpp"
#include "fmbem/quadrature/gauss_legendre.hpp"
#include "fmbem/quadrature/triangle_rule.hpp"

namespace fmbem {
namespace {

double factorial(int n) { return n <= 1 ? 1.0 : n * factorial(n - 1); }

// Integral of x^i y^j over the reference triangle (0,0),(1,0),(0,1), whose
// area is 1/2: i! j! / (i + j + 2)!.
double monomial_integral(int i, int j) {
  return factorial(i) * factorial(j) / factorial(i + j + 2);
}

double rule_integral(const TriangleRule& rule, int i, int j) {
  double sum = 0;
  for (std::size_t q = 0; q < rule.size(); ++q) {
    const double x = rule.barycentric[q][1], y = rule.barycentric[q][2];
    sum += 0.5 * rule.weights[q] * std::pow(x, i) * std::pow(y, j);
  }
  return sum;
}

TEST(TriangleRule, ExactUpToItsDegreeAndNotBeyond) {
  for (int points : {1, 3, 6, 7}) {
    const TriangleRule& rule = triangle_rule(points);
    EXPECT_EQ(rule.size(), std::size_t(points));
    double weight_sum = 0;
    for (std::size_t q = 0; q < rule.size(); ++q) {
      weight_sum += rule.weights[q];
      const auto& b = rule.barycentric[q];
      EXPECT_NEAR(b[0] + b[1] + b[2], 1.0, 1e-15);
      for (double l : b) EXPECT_GT(l, 0.0);  // interior points: never on an edge
    }
    EXPECT_NEAR(weight_sum, 1.0, 1e-14);
    // Dunavant's 6-point constants are given to 15 digits: 1e-14 is their floor.
    for (int i = 0; i <= rule.degree; ++i)
      for (int j = 0; i + j <= rule.degree; ++j)
        EXPECT_NEAR(rule_integral(rule, i, j), monomial_integral(i, j), 1e-14)
            << points << " points, x^" << i << " y^" << j;
    // Some monomial of degree + 1 is missed by far more than rounding.
    double worst = 0;
    for (int i = 0; i <= rule.degree + 1; ++i) {
      const int j = rule.degree + 1 - i;
      worst = std::max(worst, std::abs(rule_integral(rule, i, j) - monomial_integral(i, j)));
    }
    EXPECT_GT(worst, 1e-6) << points;
  }
  EXPECT_THROW(triangle_rule(4), Error);
  EXPECT_THROW(triangle_rule(0), Error);
}

TEST(GaussLegendre, ExactForDegree2nMinus1) {
  for (int n : {1, 2, 5, 8, 16, 32}) {
    const GaussLegendre rule(n);
    ASSERT_EQ(rule.size(), std::size_t(n));
    for (int d = 0; d <= 2 * n - 1; ++d) {
      double sum = 0;
      for (std::size_t q = 0; q < rule.size(); ++q)
        sum += rule.weights[q] * std::pow(rule.nodes[q], d);
      const double exact = d % 2 ? 0.0 : 2.0 / (d + 1);
      EXPECT_NEAR(sum, exact, 1e-13) << n << " " << d;
    }
  }
  EXPECT_THROW(GaussLegendre(0), Error);
}

}  // namespace
}  // namespace fmbem
