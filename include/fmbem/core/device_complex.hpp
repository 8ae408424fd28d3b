#pragma once
#include "fmbem/core/host_device.hpp"

namespace fmbem {

// A complex double for device code, where std::complex<double> does not build: std::complex's
// arithmetic as the CPU build forms it (-fcx-limited-range products, a real operand touching
// only what std::complex's touches), so that the numerics written once over the complex type
// compute the same operations on both sides. Its layout is std::complex<double>'s (arrays of
// either are copied as each other).
struct DeviceComplex {
  double re, im;
  DeviceComplex() = default;
  // A real converts as std::complex's does (imaginary part +0).
  FMBEM_HOST_DEVICE constexpr DeviceComplex(double real, double imag = 0.0) : re(real), im(imag) {}
  FMBEM_HOST_DEVICE constexpr double real() const { return re; }
  FMBEM_HOST_DEVICE constexpr double imag() const { return im; }

  friend FMBEM_HOST_DEVICE DeviceComplex operator+(DeviceComplex a, DeviceComplex b) {
    return {a.re + b.re, a.im + b.im};
  }
  friend FMBEM_HOST_DEVICE DeviceComplex operator-(DeviceComplex a, DeviceComplex b) {
    return {a.re - b.re, a.im - b.im};
  }
  friend FMBEM_HOST_DEVICE DeviceComplex operator-(DeviceComplex a) { return {-a.re, -a.im}; }
  friend FMBEM_HOST_DEVICE DeviceComplex operator*(DeviceComplex a, DeviceComplex b) {
    return {a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re};
  }
  friend FMBEM_HOST_DEVICE DeviceComplex operator*(DeviceComplex a, double s) {
    return {a.re * s, a.im * s};
  }
  friend FMBEM_HOST_DEVICE DeviceComplex operator*(double s, DeviceComplex a) {
    return {s * a.re, s * a.im};
  }
  friend FMBEM_HOST_DEVICE DeviceComplex operator/(DeviceComplex a, double s) {
    return {a.re / s, a.im / s};
  }
  // complex + real and complex - real touch the real part only, as std::complex's do.
  friend FMBEM_HOST_DEVICE DeviceComplex operator+(DeviceComplex a, double s) {
    return {a.re + s, a.im};
  }
  friend FMBEM_HOST_DEVICE DeviceComplex operator-(DeviceComplex a, double s) {
    return {a.re - s, a.im};
  }
  friend FMBEM_HOST_DEVICE DeviceComplex operator+(double s, DeviceComplex a) {
    return {s + a.re, a.im};
  }
  friend FMBEM_HOST_DEVICE DeviceComplex operator-(double s, DeviceComplex a) {
    return {s - a.re, -a.im};
  }
  FMBEM_HOST_DEVICE DeviceComplex& operator+=(DeviceComplex b) { return *this = *this + b; }
  FMBEM_HOST_DEVICE DeviceComplex& operator-=(DeviceComplex b) { return *this = *this - b; }
  FMBEM_HOST_DEVICE DeviceComplex& operator+=(double s) { return *this = *this + s; }
  FMBEM_HOST_DEVICE DeviceComplex& operator-=(double s) { return *this = *this - s; }
  FMBEM_HOST_DEVICE DeviceComplex& operator*=(DeviceComplex b) { return *this = *this * b; }
  FMBEM_HOST_DEVICE DeviceComplex& operator*=(double s) { return *this = *this * s; }
};

}  // namespace fmbem
