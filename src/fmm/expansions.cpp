#include "fmbem/fmm/expansions.hpp"

#include <array>
#include <boost/math/special_functions/bessel.hpp>
#include <cmath>
#include <numbers>

#include "fmbem/core/error.hpp"
#include "host_device/expansions.hpp"

namespace fmbem::fmm {

namespace {

// j_n(x) on the host, for the scaled Bessel functions' highest degrees.
double spherical_bessel_j(int n, double x) { return boost::math::sph_bessel(n, x); }

constexpr int max_harmonic_degree = max_basis_degree;
static_assert(max_basis_degree >= 2 * max_degree + 2, "the dense M2L needs Shat to degree 2p");

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
  if (max_n < 0 || max_n > max_basis_degree) throw Error("scaled Bessel: degree out of range");
  host_device::scaled_bessel_j(max_n, x, jhat, spherical_bessel_j);
}

void scaled_hankel(int max_n, double x, cplx* hhat) {
  if (max_n < 0 || max_n > max_basis_degree) throw Error("scaled Hankel: degree out of range");
  // Real part yhat_n = -y_n x^(n+1) / (2n-1)!!: y_n is the dominant solution,
  // upward recurrence is stable. Imaginary part j_n x^(n+1) / (2n-1)!! =
  // jhat_n x^(2n+1) / ((2n-1)!! (2n+1)!!).
  std::array<double, max_basis_degree + 1> jhat{};
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

void regular_radial(int max_n, Wavenumber k, double r, double* out) {
  if (max_n < 0 || max_n > max_basis_degree) throw Error("regular radial: degree out of range");
  if (k.imaginary)
    host_device::scaled_modified_bessel_i(max_n, k.magnitude * r, out);
  else
    scaled_bessel_j(max_n, k.magnitude * r, out);
}

void singular_radial(int max_n, Wavenumber k, double r, cplx* out) {
  if (max_n < 0 || max_n > max_basis_degree) throw Error("singular radial: degree out of range");
  if (!k.imaginary) {
    scaled_hankel(max_n, k.magnitude * r, out);
    return;
  }
  std::array<double, max_basis_degree + 1> khat;
  host_device::scaled_modified_bessel_k(max_n, k.magnitude * r, khat.data());
  for (int n = 0; n <= max_n; ++n) out[n] = khat[n];
}

void spherical_harmonics(int max_n, const Vec3& r, cplx* y) {
  if (max_n < 0 || max_n > max_harmonic_degree)
    throw Error("spherical harmonics: degree out of range");
  const auto [cos_t, sin_t, e_iphi] = host_device::direction_of<cplx>(r.x, r.y, r.z);
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

void regular_basis(int max_n, Wavenumber k, double sigma, const Vec3& r, cplx* out) {
  std::array<double, max_basis_degree + 1> jhat;
  const double len = norm(r);
  regular_radial(max_n, k, len, jhat.data());
  spherical_harmonics(max_n, r, out);
  scale_by_degree(max_n, jhat.data(), 1.0, len / sigma, out);  // (|r| / sigma)^n
}

void singular_basis(int max_n, Wavenumber k, double sigma, const Vec3& r, cplx* out) {
  std::array<cplx, max_basis_degree + 1> hhat;
  const double len = norm(r);
  singular_radial(max_n, k, len, hhat.data());
  spherical_harmonics(max_n, r, out);
  scale_by_degree(max_n, hhat.data(), sigma / len, sigma / len, out);  // (sigma / |r|)^(n+1)
}

}  // namespace fmbem::fmm
