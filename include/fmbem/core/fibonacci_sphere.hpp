#pragma once
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <numbers>

#include "fmbem/core/vec3.hpp"

namespace fmbem {

// Direction i of the n-point Fibonacci sphere: z_i = 1 - (2i + 1) / n, azimuth i times the golden
// angle; nearly uniform (each direction holds 4 pi / n of the sphere). The far field's
// directions, the incident waves' and the field's spherical grids share it. i < n.
inline Vec3 fibonacci_direction(std::size_t i, std::size_t n) {
  const double golden_angle = std::numbers::pi * (3.0 - std::sqrt(5.0));
  const double z = 1.0 - (2.0 * double(i) + 1.0) / double(n);
  const double rho = std::sqrt(std::max(0.0, 1.0 - z * z));
  const double azimuth = golden_angle * double(i);
  return {rho * std::cos(azimuth), rho * std::sin(azimuth), z};
}

}  // namespace fmbem
