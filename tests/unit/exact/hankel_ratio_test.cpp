// The overflow-free Hankel ratios against direct Boost evaluation.
#include <gtest/gtest.h>

#include <boost/math/special_functions/bessel.hpp>
#include <boost/math/special_functions/bessel_prime.hpp>
#include <cmath>
#include <limits>

#include "fmbem/core/error.hpp"
#include "fmbem/exact/sphere.hpp"

namespace fmbem::exact {
namespace {

constexpr double kEps = std::numeric_limits<double>::epsilon();

cplx boost_hankel(int n, double x) {
  return {boost::math::sph_bessel(unsigned(n), x), boost::math::sph_neumann(unsigned(n), x)};
}
cplx boost_hankel_prime(int n, double x) {
  return {boost::math::sph_bessel_prime(unsigned(n), x),
          boost::math::sph_neumann_prime(unsigned(n), x)};
}

// Tolerance for n <= n_max: the eta recurrence adds a few ulp a step (errors grow at most
// linearly, see sphere.cpp), Boost is good to some tens of ulp: budget 4 (n_max + 50) eps,
// 8e-14 at n_max = 40; 1e-12 leaves a factor 10 above that.
TEST(HankelRatios, MatchBoostUpToDegree40) {
  const int n_max = 40;
  const double ka = 8.0, k_rs = 16.0;  // k = 8, a = 1, r_s = 2
  const double tol = 1e-12;
  const HankelRatios ratios = hankel_ratios(n_max, k_rs, ka);
  const InverseHankel inverse = inverse_hankel(n_max, ka);
  ASSERT_EQ(ratios.h_over_h.size(), std::size_t(n_max + 1));
  ASSERT_EQ(inverse.inv_dh.size(), std::size_t(n_max + 1));
  for (int n = 0; n <= n_max; ++n) {
    const cplx h_num = boost_hankel(n, k_rs), h_den = boost_hankel(n, ka);
    const cplx dh_den = boost_hankel_prime(n, ka);
    const auto relative = [](cplx got, cplx want) { return std::abs(got - want) / std::abs(want); };
    EXPECT_LT(relative(ratios.h_over_h[n], h_num / h_den), tol) << "n = " << n;
    EXPECT_LT(relative(ratios.h_over_dh[n], h_num / dh_den), tol) << "n = " << n;
    EXPECT_LT(relative(inverse.inv_h[n], 1.0 / h_den), tol) << "n = " << n;
    EXPECT_LT(relative(inverse.inv_dh[n], 1.0 / dh_den), tol) << "n = " << n;
  }
}

// Past the turning point h_n(x) overflows long before the ratio does. At ka = 50, k r_s = 100 Boost
// still reaches n = 200 (|y_200(50)| ~ 1e92); budget 4 (200 + 50) eps = 2e-13, tolerance 1e-12.
TEST(HankelRatios, MatchBoostToDegree200AtLargeArgument) {
  const int n_max = 200;
  const HankelRatios ratios = hankel_ratios(n_max, 100.0, 50.0);
  for (int n = 0; n <= n_max; n += 7) {
    const cplx want = boost_hankel(n, 100.0) / boost_hankel(n, 50.0);
    EXPECT_LT(std::abs(ratios.h_over_h[n] - want) / std::abs(want), 1e-12) << "n = " << n;
  }
}

// Small arguments, n up to 1000 where h_n itself is ~1e3000: for x -> 0,
// h_n(x) = -i (2n-1)!! / x^(n+1) [1 + x^2 / (2 (2n-1)) + O(x^4 / n^2)] for n >= 1, so
// h_n(2e-3)/h_n(1e-3) = 2^-(n+1) [1 + 3e-6 / (2 (2n-1)) + O(1e-11 / n^2)]. The neglected terms are
// <= 1e-11 relative (j_n adds i x^(2n+1)-type terms, negligible from n = 2); the recurrence adds ~n
// eps ~ 2e-13; tolerance 1e-11 + 4 n eps.
TEST(HankelRatios, SmallArgumentLimitAtHighDegree) {
  const int n_max = 1000;
  const double x_num = 2e-3, x_den = 1e-3;
  const HankelRatios ratios = hankel_ratios(n_max, x_num, x_den);
  const InverseHankel inverse = inverse_hankel(n_max, 1.0);
  for (int n = 2; n <= n_max; n += 37) {
    const double want =
        std::pow(0.5, n + 1) * (1.0 + (x_num * x_num - x_den * x_den) / (2.0 * (2.0 * n - 1.0)));
    const double tol = 1e-11 + 4.0 * n * kEps;
    EXPECT_LT(std::abs(ratios.h_over_h[n] - want) / want, tol) << "n = " << n;
    EXPECT_TRUE(std::isfinite(std::abs(ratios.h_over_dh[n]))) << "n = " << n;
    // 1/h_n(1) underflows to 0 (|h_n(1)| > 1e308 for n >= 151) instead of producing inf or nan.
    EXPECT_TRUE(std::isfinite(std::abs(inverse.inv_dh[n]))) << "n = " << n;
  }
  EXPECT_EQ(inverse.inv_h[n_max], cplx(0.0));
}

TEST(HankelRatios, RejectNonPositiveArguments) {
  EXPECT_THROW(hankel_ratios(5, 0.0, 1.0), Error);
  EXPECT_THROW(hankel_ratios(5, 1.0, -1.0), Error);
  EXPECT_THROW(inverse_hankel(5, 0.0), Error);
}

}  // namespace
}  // namespace fmbem::exact
