#pragma once
// The parts of the regular basis (expansions.cpp) that the CPU and the GPU's P2M and L2P
// (fmm/cuda) both run, written once as FMBEM_HOST_DEVICE functions: the scaled spherical Bessel
// functions and the direction of a point as spherical_harmonics takes it. Not a public header.
#include <cmath>

#include "fmbem/core/host_device.hpp"

namespace fmbem::fmm::host_device {

// jhat_n by its power series, accurate while x^2 is small against 2n + 3
// (no cancellation between the terms).
FMBEM_HOST_DEVICE inline double scaled_bessel_series(int n, double x) {
  const double half_x2 = -0.5 * x * x;
  double term = 1.0, sum = 1.0;
  for (int i = 1; i < 60; ++i) {
    term *= half_x2 / (i * (2.0 * n + 2.0 * i + 1.0));
    sum += term;
    if (std::abs(term) < 1e-17 * std::abs(sum)) break;
  }
  return sum;
}

// jhat_n(x) at one degree; spherical_bessel_j(n, x) is j_n of the side at hand (Boost on the
// host, Miller's recurrence on the device), read only where x^2 >= 2n + 3.
template <class SphericalBesselJ>
FMBEM_HOST_DEVICE double scaled_bessel_top(int n, double x, SphericalBesselJ spherical_bessel_j) {
  if (x * x < 2.0 * n + 3.0) return scaled_bessel_series(n, x);
  // x >= sqrt(2n + 3) > 1: dividing by x^n cannot underflow.
  double scale = 1.0;
  for (int i = 1; i <= n; ++i) scale *= (2.0 * i + 1.0) / x;
  return spherical_bessel_j(n, x) * scale;
}

// jhat_n(x) = j_n(x) (2n+1)!! / x^n for n = 0..max_n. j_n is the minimal solution of its
// recurrence: start from the two highest degrees and recur downwards, which is stable for
// every x.
template <class SphericalBesselJ>
FMBEM_HOST_DEVICE void scaled_bessel_j(int max_n, double x, double* jhat,
                                       SphericalBesselJ spherical_bessel_j) {
  if (max_n == 0) {
    jhat[0] = scaled_bessel_top(0, x, spherical_bessel_j);
    return;
  }
  jhat[max_n] = scaled_bessel_top(max_n, x, spherical_bessel_j);
  jhat[max_n - 1] = scaled_bessel_top(max_n - 1, x, spherical_bessel_j);
  const double x2 = x * x;
  for (int n = max_n - 1; n >= 1; --n)
    jhat[n - 1] = jhat[n] - x2 * jhat[n + 1] / ((2.0 * n + 1.0) * (2.0 * n + 3.0));
}

// ihat_n(y) = jhat_n(i y) = i_n(y) (2n+1)!! / y^n (i_n the modified spherical Bessel function
// of the first kind), the screened kernel's regular radial function: its power series
// sum_i (y^2/2)^i / (i! (2n+3)(2n+5)...(2n+2i+1)) has positive terms (no cancellation at any y),
// so it gives the two highest degrees; i_n is the minimal solution of its recurrence, which
// then runs downwards. Finite while y stays below about 700 (ihat_n grows like e^y).
FMBEM_HOST_DEVICE inline double scaled_modified_bessel_series(int n, double y) {
  const double half_y2 = 0.5 * y * y;
  double term = 1.0, sum = 1.0;
  for (int i = 1; i < 2000; ++i) {
    term *= half_y2 / (i * (2.0 * n + 2.0 * i + 1.0));
    sum += term;
    if (term < 1e-17 * sum) break;
  }
  return sum;
}

FMBEM_HOST_DEVICE inline void scaled_modified_bessel_i(int max_n, double y, double* ihat) {
  ihat[max_n] = scaled_modified_bessel_series(max_n, y);
  if (max_n == 0) return;
  ihat[max_n - 1] = scaled_modified_bessel_series(max_n - 1, y);
  const double y2 = y * y;
  for (int n = max_n - 1; n >= 1; --n)
    ihat[n - 1] = ihat[n] + y2 * ihat[n + 1] / ((2.0 * n + 1.0) * (2.0 * n + 3.0));
}

// khat_n(y) = hhat_n(i y), e^-y times a polynomial of degree n with positive coefficients
// (khat_0 = e^-y, khat_1 = e^-y (1 + y); -> 1 as y -> 0), the screened kernel's singular radial
// function: the modified spherical Bessel function of the second kind, scaled; the dominant
// solution of the recurrence, which runs upwards.
FMBEM_HOST_DEVICE inline void scaled_modified_bessel_k(int max_n, double y, double* khat) {
  const double e = std::exp(-y), y2 = y * y;
  double previous = e, current = e * (1.0 + y);
  khat[0] = previous;
  for (int n = 1; n <= max_n; ++n) {
    khat[n] = current;
    const double next = current + y2 * previous / ((2.0 * n - 1.0) * (2.0 * n + 1.0));
    previous = current;
    current = next;
  }
}

// The direction of (x, y, z) as the spherical harmonics read it: cos(theta), sin(theta) and
// e^{i phi} (the z axis at the origin, phi = 0 on it). C: the side's complex type.
template <class C>
struct Direction {
  double cos_t, sin_t;
  C e_iphi;
};

template <class C>
FMBEM_HOST_DEVICE Direction<C> direction_of(double x, double y, double z) {
  const double rho2 = x * x + y * y;
  const double len = std::sqrt(rho2 + z * z);
  Direction<C> d{1.0, 0.0, C{1.0, 0.0}};
  if (len > 0.0) {
    d.cos_t = z / len;
    const double rho = std::sqrt(rho2);
    d.sin_t = rho / len;
    if (rho > 0.0) d.e_iphi = C{x / rho, y / rho};
  }
  return d;
}

}  // namespace fmbem::fmm::host_device
