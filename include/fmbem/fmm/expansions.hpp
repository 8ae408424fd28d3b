#pragma once
#include <span>
#include <vector>

#include "fmbem/core/vec3.hpp"
#include "fmbem/fmm/wavenumber.hpp"

// Scaled spherical-harmonic bases of the low-frequency FMM (reference paper,
// section 3, with orthonormal Y_n^m and per-level scaling). With sigma the
// cell width of a level and kappa = k sigma,
//   Rhat_n^m(r) = j_n(k|r|) (2n+1)!! / kappa^n            Y_n^m(r/|r|)
//   Shat_n^m(r) = i h_n^(1)(k|r|) kappa^(n+1) / (2n-1)!!   Y_n^m(r/|r|)
// which tend to the solid harmonics (|r|/sigma)^n Y and (sigma/|r|)^(n+1) Y
// as k -> 0: Laplace is k = 0 of the same code, and a cell's values stay of
// order one for any k sigma (no overflow of h_n, no underflow of j_n). The screened kernel
// (Wavenumber::screened) is k = i kappa of the same formulas, its radial factors real. The
// kernel expands as
//   G(x - y) = 1/sigma sum_n 1/(2n+1) sum_m Shat_n^m(x - s) conj(Rhat_n^m(y - s))
// for |x - s| > |y - s|.
namespace fmbem::fmm {

// Largest order p of the dense-matrix translations and of Fmm (the gradient needs degree p):
// a p^2 x p^2 matrix costs p^4 * 16 bytes, 41 MB at p = 40.
inline constexpr int max_degree = 40;

// Largest degree the bases below accept: twice the largest order of the rotation-based
// translations (rotation_translations.hpp), whose M2L starts from Shat_n(t) to degree 2p - 2.
// Measured accurate to 1e-12 (tests/unit/fmm/rotation_translations_test.cpp).
inline constexpr int max_basis_degree = 200;

// Position of (n, m), |m| <= n, in a coefficient vector: n^2 + n + m.
constexpr int coefficient_index(int n, int m) { return n * n + n + m; }

// jhat_n(x) = j_n(x) (2n+1)!! / x^n for n = 0..max_n (jhat_n(0) = 1).
void scaled_bessel_j(int max_n, double x, double* jhat);

// hhat_n(x) = i h_n^(1)(x) x^(n+1) / (2n-1)!! for n = 0..max_n (-> 1 as x -> 0).
void scaled_hankel(int max_n, double x, cplx* hhat);

// The radial factors of the bases at distance r: jhat_n(k r) for a real k, ihat_n(kappa r) for
// k = i kappa (regular); hhat_n(k r), or the real khat_n(kappa r) (singular). n = 0..max_n.
void regular_radial(int max_n, Wavenumber k, double r, double* out);
void singular_radial(int max_n, Wavenumber k, double r, cplx* out);

// Orthonormal spherical harmonics with the Condon-Shortley phase,
// Y_n^-m = (-1)^m conj(Y_n^m), degrees 0..max_n, at the direction of r
// (the z axis when r = 0).
void spherical_harmonics(int max_n, const Vec3& r, cplx* y);

// The recurrence coefficients spherical_harmonics uses, for its GPU port: P_0^0 = p00,
// P_m^m = diagonal[m] sin(theta) P_(m-1)^(m-1), P_(m+1)^m = first[m] cos(theta) P_m^m,
// P_n^m = a[nm] (cos(theta) P_(n-1)^m - b[nm] P_(n-2)^m), nm = coefficient_index(n, m); valid
// for degrees up to max_basis_degree.
struct LegendreRecurrence {
  double p00;
  std::span<const double> diagonal, first, a, b;
};
LegendreRecurrence legendre_recurrence();

// Rhat_n^m(r) for degrees 0..max_n, scaled by sigma (see above).
void regular_basis(int max_n, Wavenumber k, double sigma, const Vec3& r, cplx* out);

// Shat_n^m(r) for degrees 0..max_n, scaled by sigma; r != 0.
void singular_basis(int max_n, Wavenumber k, double sigma, const Vec3& r, cplx* out);

}  // namespace fmbem::fmm
