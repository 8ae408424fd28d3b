#pragma once
// What the bem/ tests share: random densities and the relative 2-norm difference.
#include <cmath>
#include <random>
#include <vector>

#include "fmbem/core/vec3.hpp"

namespace fmbem::test {

// n complex values with real and imaginary parts uniform in [-1, 1), reproducible from seed.
inline std::vector<cplx> random_density(std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<cplx> d(n);
  for (auto& v : d) v = cplx(u(rng), u(rng));
  return d;
}

// ||a - b|| / ||b|| in the 2-norm.
inline double relative_error(const std::vector<cplx>& a, const std::vector<cplx>& b) {
  double num = 0.0, den = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    num += std::norm(a[i] - b[i]);
    den += std::norm(b[i]);
  }
  return std::sqrt(num / den);
}

}  // namespace fmbem::test
