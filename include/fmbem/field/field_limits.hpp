#pragma once
#include <charconv>
#include <cmath>
#include <string>
#include <system_error>

#include "fmbem/core/vec3.hpp"

namespace fmbem::field {

// The largest |coordinate| of a field point. Mesh coordinates are at most 1e30 (Mesh), so every
// distance from a field point to the surface is below sqrt(3) (1e150 + 1e30) < 1.8e150 and its
// square below 3.2e300 < DBL_MAX: the kernels, the close-element search, the incident field and
// the Mie series square distances without overflow, and the Laplace double layer's 1/r^2 stays a
// normal double (above 3e-301). Beyond it squares overflow; the point is refused.
inline constexpr double kLargestFieldCoordinate = 1e150;

// Finite, and within kLargestFieldCoordinate in every coordinate (false for NaN).
inline bool within_field_range(const Vec3& p) {
  return std::abs(p.x) <= kLargestFieldCoordinate && std::abs(p.y) <= kLargestFieldCoordinate &&
         std::abs(p.z) <= kLargestFieldCoordinate;
}

// "(1e+300, 0, 0)": each coordinate's shortest text that reads back to it.
inline std::string format_point(const Vec3& p) {
  std::string out;
  for (double v : {p.x, p.y, p.z}) {
    char text[32];
    const auto [end, error] = std::to_chars(text, text + sizeof text, v);
    out += (out.empty() ? "(" : ", ") + std::string(text, error == std::errc() ? end : text);
  }
  return out + ")";
}

// Why a point outside within_field_range is refused, to follow "<where> ".
inline std::string out_of_range_reason(const Vec3& p) {
  const bool finite = std::isfinite(p.x) && std::isfinite(p.y) && std::isfinite(p.z);
  return format_point(p) +
         (finite ? " lies beyond 1e150 in a coordinate, too far from the body to evaluate the "
                   "field in double precision (squared distances overflow)"
                 : " has a non-finite coordinate");
}

}  // namespace fmbem::field
