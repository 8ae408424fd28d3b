#include "fmbem/fmm/expansions.hpp"

#include <array>
#include <boost/math/special_functions/bessel.hpp>
#include <cmath>
#include <numbers>

#include "fmbem/core/error.hpp"

namespace fmbem::fmm {

namespace {

// jhat_n by its power series, accurate while x^2 is small against 2n + 3
// (no cancellation between the terms).
double scaled_bessel_series(int n, double x) {
  const double half_x2 = -0.5 * x * x;
  double term = 1.0, sum = 1.0;
  for (int i = 1; i < 60; ++i) {
    term *= half_x2 / (i * (2.0 * n + 2.0 * i + 1.0));
    sum += term;
    if (std::abs(term) < 1e-17 * std::abs(sum)) break;
  }
  return sum;
}

double scaled_bessel_top(int n, double x) {
  if (x * x < 2.0 * n + 3.0) return scaled_bessel_series(n, x);
  // x >= sqrt(2n + 3) > 1: dividing by x^n cannot underflow.
  double scale = 1.0;
  for (int i = 1; i <= n; ++i) scale *= (2.0 * i + 1.0) / x;
  return boost::math::sph_bessel(n, x) * scale;
}

constexpr int max_harmonic_degree = 2 * max_degree + 2;

// Recurrence coefficients of the normalised Legendre functions, computed once.
struct LegendreCoefficients {
  double p00 = 0.5 / std::sqrt(std::numbers::pi);
  std::vector<double> diagonal, first, a, b;
  LegendreCoefficients() {
    const int size = (max_harmonic_degree + 1) * (max_harmonic_degree + 1);
    diagonal.assign(max_harmonic_degree + 1, 0.0);
    first.assign(max_harmonic_degree + 1, 0.0);
    a.assign(size, 0.0);
    b.assign(size, 0.0);
    for (int m = 0; m <= max_harmonic_degree; ++m) {
      if (m > 0) diagonal[m] = -std::sqrt((2.0 * m + 1.0) / (2.0 * m));
      first[m] = std::sqrt(2.0 * m + 3.0);
      for (int n = m + 2; n <= max_harmonic_degree; ++n) {
        a[coefficient_index(n, m)] =
            std::sqrt((4.0 * n * n - 1.0) / (double(n) * n - double(m) * m));
        b[coefficient_index(n, m)] = std::sqrt(((n - 1.0) * (n - 1.0) - double(m) * m) /
                                               (4.0 * (n - 1.0) * (n - 1.0) - 1.0));
      }
    }
  }
};

const LegendreCoefficients& legendre_coefficients() {
  static const LegendreCoefficients table;
  return table;
}

}  // namespace

LegendreRecurrence legendre_recurrence() {
  const LegendreCoefficients& c = legendre_coefficients();
  return {c.p00, c.diagonal, c.first, c.a, c.b};
}

void scaled_bessel_j(int max_n, double x, double* jhat) {
  if (max_n < 0 || max_n > 2 * max_degree + 2) throw Error("scaled Bessel: degree out of range");
  if (max_n == 0) {
    jhat[0] = scaled_bessel_top(0, x);
    return;
  }
  // j_n is the minimal solution of its recurrence: start from the two
  // highest degrees and recur downwards, which is stable for every x.
  jhat[max_n] = scaled_bessel_top(max_n, x);
  jhat[max_n - 1] = scaled_bessel_top(max_n - 1, x);
  const double x2 = x * x;
  for (int n = max_n - 1; n >= 1; --n)
    jhat[n - 1] = jhat[n] - x2 * jhat[n + 1] / ((2.0 * n + 1.0) * (2.0 * n + 3.0));
}

void scaled_hankel(int max_n, double x, cplx* hhat) {
  if (max_n < 0 || max_n > 2 * max_degree + 2) throw Error("scaled Hankel: degree out of range");
  // Real part yhat_n = -y_n x^(n+1) / (2n-1)!!: y_n is the dominant solution,
  // upward recurrence is stable. Imaginary part j_n x^(n+1) / (2n-1)!! =
  // jhat_n x^(2n+1) / ((2n-1)!! (2n+1)!!).
  std::array<double, 2 * max_degree + 3> jhat{};
  scaled_bessel_j(max_n, x, jhat.data());
  const double c = std::cos(x), s = std::sin(x), x2 = x * x;
  double y_prev = c, y_cur = c + x * s;  // yhat_0, yhat_1
  double power = x;                      // x^(2n+1) / ((2n-1)!! (2n+1)!!)
  hhat[0] = cplx(y_prev, power * jhat[0]);
  for (int n = 1; n <= max_n; ++n) {
    power *= x2 / ((2.0 * n - 1.0) * (2.0 * n + 1.0));
    hhat[n] = cplx(y_cur, power * jhat[n]);
    const double y_next = y_cur - x2 * y_prev / ((2.0 * n - 1.0) * (2.0 * n + 1.0));
    y_prev = y_cur;
    y_cur = y_next;
  }
}

void spherical_harmonics(int max_n, const Vec3& r, cplx* y) {
  if (max_n < 0 || max_n > max_harmonic_degree)
    throw Error("spherical harmonics: degree out of range");
  const double rho2 = r.x * r.x + r.y * r.y;
  const double len = std::sqrt(rho2 + r.z * r.z);
  double cos_t = 1.0, sin_t = 0.0;
  cplx e_iphi(1.0, 0.0);
  if (len > 0.0) {
    cos_t = r.z / len;
    const double rho = std::sqrt(rho2);
    sin_t = rho / len;
    if (rho > 0.0) e_iphi = cplx(r.x / rho, r.y / rho);
  }
  // Normalised associated Legendre functions (4 pi normalisation folded in)
  // by the standard stable recurrences in n at fixed m.
  const LegendreCoefficients& coef = legendre_coefficients();
  double p_mm = coef.p00;
  cplx phase(1.0, 0.0);  // e^{i m phi}
  for (int m = 0; m <= max_n; ++m) {
    if (m > 0) {
      p_mm *= coef.diagonal[m] * sin_t;
      phase *= e_iphi;
    }
    double p_prev = 0.0, p_cur = p_mm;
    for (int n = m; n <= max_n; ++n) {
      if (n == m + 1) {
        p_prev = p_cur;
        p_cur = coef.first[m] * cos_t * p_mm;
      } else if (n > m + 1) {
        const int index = coefficient_index(n, m);
        const double p_next = coef.a[index] * (cos_t * p_cur - coef.b[index] * p_prev);
        p_prev = p_cur;
        p_cur = p_next;
      }
      const cplx value = p_cur * phase;
      y[coefficient_index(n, m)] = value;
      if (m > 0) y[coefficient_index(n, -m)] = (m % 2 ? -1.0 : 1.0) * std::conj(value);
    }
  }
}

namespace {

// out[n, m] *= radial[n] * power_0 * ratio^n for every degree n <= max_n:
// the radial factor of a basis times the spherical harmonics already in out.
template <class Radial>
void scale_by_degree(int max_n, const Radial* radial, double power_0, double ratio, cplx* out) {
  double power = power_0;
  for (int n = 0; n <= max_n; ++n) {
    const Radial factor = radial[n] * power;
    for (int m = -n; m <= n; ++m) out[coefficient_index(n, m)] *= factor;
    power *= ratio;
  }
}

}  // namespace

void regular_basis(int max_n, double k, double sigma, const Vec3& r, cplx* out) {
  std::array<double, 2 * max_degree + 3> jhat;
  const double len = norm(r);
  scaled_bessel_j(max_n, k * len, jhat.data());
  spherical_harmonics(max_n, r, out);
  scale_by_degree(max_n, jhat.data(), 1.0, len / sigma, out);  // (|r| / sigma)^n
}

void singular_basis(int max_n, double k, double sigma, const Vec3& r, cplx* out) {
  std::array<cplx, 2 * max_degree + 3> hhat;
  const double len = norm(r);
  scaled_hankel(max_n, k * len, hhat.data());
  spherical_harmonics(max_n, r, out);
  scale_by_degree(max_n, hhat.data(), sigma / len, sigma / len, out);  // (sigma / |r|)^(n+1)
}

}  // namespace fmbem::fmm
