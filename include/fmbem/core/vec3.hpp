#pragma once
#include <cmath>
#include <complex>

#include "fmbem/core/host_device.hpp"

namespace fmbem {

using cplx = std::complex<double>;

struct Vec3 {
  double x = 0.0, y = 0.0, z = 0.0;

  FMBEM_HOST_DEVICE constexpr Vec3& operator+=(const Vec3& b) {
    x += b.x;
    y += b.y;
    z += b.z;
    return *this;
  }
  FMBEM_HOST_DEVICE constexpr Vec3& operator-=(const Vec3& b) {
    x -= b.x;
    y -= b.y;
    z -= b.z;
    return *this;
  }
  FMBEM_HOST_DEVICE constexpr Vec3& operator*=(double s) {
    x *= s;
    y *= s;
    z *= s;
    return *this;
  }
  friend FMBEM_HOST_DEVICE constexpr Vec3 operator+(Vec3 a, const Vec3& b) { return a += b; }
  friend FMBEM_HOST_DEVICE constexpr Vec3 operator-(Vec3 a, const Vec3& b) { return a -= b; }
  friend FMBEM_HOST_DEVICE constexpr Vec3 operator*(Vec3 a, double s) { return a *= s; }
  friend FMBEM_HOST_DEVICE constexpr Vec3 operator*(double s, Vec3 a) { return a *= s; }
  friend FMBEM_HOST_DEVICE constexpr Vec3 operator-(const Vec3& a) { return {-a.x, -a.y, -a.z}; }
  friend constexpr bool operator==(const Vec3&, const Vec3&) = default;
};

// The coordinate along axis 0, 1, 2 (x, y, z).
FMBEM_HOST_DEVICE constexpr double component(const Vec3& v, int axis) {
  return axis == 0 ? v.x : axis == 1 ? v.y : v.z;
}
FMBEM_HOST_DEVICE constexpr double& component(Vec3& v, int axis) {
  return axis == 0 ? v.x : axis == 1 ? v.y : v.z;
}

FMBEM_HOST_DEVICE constexpr double dot(const Vec3& a, const Vec3& b) {
  return a.x * b.x + a.y * b.y + a.z * b.z;
}
FMBEM_HOST_DEVICE constexpr Vec3 cross(const Vec3& a, const Vec3& b) {
  return {a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x};
}
FMBEM_HOST_DEVICE inline double norm(const Vec3& a) { return std::sqrt(dot(a, a)); }
FMBEM_HOST_DEVICE inline Vec3 normalized(const Vec3& a) { return a * (1.0 / norm(a)); }

}  // namespace fmbem
