#include "fmbem/quadrature/gauss_legendre.hpp"

#include <boost/math/special_functions/legendre.hpp>
#include <string>

#include "fmbem/core/error.hpp"

namespace fmbem {

GaussLegendre::GaussLegendre(int n) {
  if (n < 1 || n > 1000)
    throw Error("Gauss-Legendre rule with " + std::to_string(n) + " points is not offered");
  // Boost gives the non-negative zeros of P_n; the rule is symmetric.
  const std::vector<double> zeros = boost::math::legendre_p_zeros<double>(n);
  for (double x : zeros) {
    const double dp = boost::math::legendre_p_prime(n, x);
    const double w = 2.0 / ((1.0 - x * x) * dp * dp);
    nodes.push_back(x);
    weights.push_back(w);
    if (x != 0.0) {
      nodes.push_back(-x);
      weights.push_back(w);
    }
  }
}

}  // namespace fmbem
