#include "fmbem/fmm/translations.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <numbers>

#include "fmbem/core/error.hpp"
#include "fmbem/quadrature/gauss_legendre.hpp"

namespace fmbem::fmm {

namespace {

constexpr double four_pi = 4.0 * std::numbers::pi;

cplx i_power(int e) {
  switch (((e % 4) + 4) % 4) {
    case 0:
      return {1.0, 0.0};
    case 1:
      return {0.0, 1.0};
    case 2:
      return {-1.0, 0.0};
    default:
      return {0.0, -1.0};
  }
}

// odd_factorial[n] = (2n - 1)!!, with (-1)!! = 1.
std::vector<double> odd_factorials(int max_n) {
  std::vector<double> f(max_n + 2, 1.0);
  for (int n = 1; n <= max_n + 1; ++n) f[n] = f[n - 1] * (2.0 * n - 1.0);
  return f;
}

// kappa^e for the even e the translations read, from kappa^2 = (k sigma)^2 (negative for the
// screened kernel: its translations are the same formulas at k = i kappa), 0^0 = 1 (the Laplace
// limit keeps exactly the e = 0 terms). Odd e hold NaN: no translation reads them (the Gaunt
// terms' powers n + l - a and n + a - l have the parity of 2n).
std::vector<double> even_powers(double kappa2, int max_e) {
  std::vector<double> w(max_e + 1, std::numeric_limits<double>::quiet_NaN());
  w[0] = 1.0;
  for (int e = 2; e <= max_e; e += 2) w[e] = w[e - 2] * kappa2;
  return w;
}

void check_order(const GauntTable& gaunt, int p, int needed_degree) {
  if (p < 1 || p > fmm::max_degree) throw Error("FMM: expansion order p out of range");
  if (gaunt.max_degree() < needed_degree) throw Error("FMM: Gaunt table too small for p");
}

}  // namespace

GauntTable::GauntTable(int max_n) : max_n_(max_n) {
  if (max_n < 0 || max_n > fmm::max_degree + 1) throw Error("Gaunt table: degree out of range");
  const int size = (max_n + 1) * (max_n + 1);
  // The integrand has degree n + a + l <= 4 max_n in cos(theta).
  const GaussLegendre rule(2 * max_n + 1);
  const int lmax = 2 * max_n, harmonics = (lmax + 1) * (lmax + 1);
  std::vector<double> legendre(rule.size() * harmonics);
  std::vector<cplx> y(harmonics);
  for (std::size_t k = 0; k < rule.size(); ++k) {
    const double x = rule.nodes[k];
    spherical_harmonics(lmax, Vec3{std::sqrt(std::max(0.0, 1.0 - x * x)), 0.0, x}, y.data());
    for (int j = 0; j < harmonics; ++j) legendre[k * harmonics + j] = y[j].real();
  }
  offsets_.assign(size * size + 1, 0);
  for (int n = 0, pair = 0; n <= max_n; ++n)
    for (int m = -n; m <= n; ++m)
      for (int a = 0; a <= max_n; ++a)
        for (int b = -a; b <= a; ++b, ++pair)
          offsets_[pair + 1] = offsets_[pair] + std::min(n, a) + 1;
  values_.assign(offsets_.back(), 0.0);
#pragma omp parallel for schedule(dynamic)
  for (int nm = 0; nm < size; ++nm) {
    const int n = static_cast<int>(std::sqrt(double(nm))), m = nm - n * n - n;
    for (int a = 0; a <= max_n; ++a)
      for (int b = -a; b <= a; ++b) {
        const int ab = coefficient_index(a, b), q = m - b;
        double* out = &values_[offsets_[nm * size + ab]];
        for (int l = std::abs(n - a), slot = 0; l <= n + a; l += 2, ++slot) {
          if (std::abs(q) > l) continue;
          double sum = 0.0;
          for (std::size_t k = 0; k < rule.size(); ++k) {
            const double* row = &legendre[k * harmonics];
            sum += rule.weights[k] * row[nm] * row[ab] * row[coefficient_index(l, q)];
          }
          out[slot] = 2.0 * std::numbers::pi * sum;
        }
      }
  }
}

double GauntTable::operator()(int n, int m, int a, int b, int l) const {
  if (l < std::abs(n - a) || l > n + a || (n + a + l) % 2 || std::abs(m - b) > l) return 0.0;
  const int size = (max_n_ + 1) * (max_n_ + 1);
  const int pair = coefficient_index(n, m) * size + coefficient_index(a, b);
  return values_[offsets_[pair] + (l - std::abs(n - a)) / 2];
}

TranslationMatrix regular_shift(const GauntTable& gaunt, int p, Wavenumber k, double sigma,
                                const Vec3& t) {
  check_order(gaunt, p, p - 1);
  const int size = p * p, lmax = 2 * p - 2;
  const std::vector<double> odd = odd_factorials(lmax + 1),
                            kappa_power = even_powers(k.squared() * sigma * sigma, 3 * p);
  std::vector<cplx> rt((lmax + 1) * (lmax + 1));
  regular_basis(lmax, k, sigma, t, rt.data());
  TranslationMatrix c(size * size, 0.0);
  for (int a = 0; a < p; ++a)
    for (int b = -a; b <= a; ++b)
      for (int n = 0; n < p; ++n)
        for (int m = -n; m <= n; ++m) {
          const int q = b - m;
          cplx sum = 0.0;
          for (int l = std::abs(a - n); l <= a + n; l += 2) {
            if (std::abs(q) > l) continue;
            // alpha_a(sigma) / (alpha_n(sigma / 2) alpha_l(sigma)), alpha_n = (2n+1)!! / kappa^n.
            const double scale =
                odd[a + 1] / (odd[n + 1] * odd[l + 1]) * std::ldexp(kappa_power[n + l - a], -n);
            sum +=
                i_power(n + l - a) * (gaunt(a, b, n, m, l) * scale) * rt[coefficient_index(l, q)];
          }
          c[coefficient_index(a, b) * size + coefficient_index(n, m)] = four_pi * sum;
        }
  return c;
}

MultipoleToLocalTable::MultipoleToLocalTable(const GauntTable& gaunt, int p) : p_(p) {
  check_order(gaunt, p, p - 1);
  const int size = p * p;
  const std::vector<double> odd = odd_factorials(2 * p - 1);
  for (int a = 0; a < p; ++a)
    for (int b = -a; b <= a; ++b)
      for (int n = 0; n < p; ++n)
        for (int m = -n; m <= n; ++m) {
          const int q = m - b;
          for (int l = std::abs(a - n); l <= a + n; l += 2) {
            if (std::abs(q) > l) continue;
            // beta_n / (alpha_a beta_l), beta_n = i kappa^(n+1) / (2n-1)!!, and the
            // 1 / (sigma (2n+1)) of the kernel expansion (sigma applied later).
            const double scale = odd[l] / (odd[n] * odd[a + 1] * (2.0 * n + 1.0));
            terms_.push_back({coefficient_index(a, b) * size + coefficient_index(n, m),
                              coefficient_index(l, q), n + a - l,
                              four_pi * i_power(a + l - n) * (gaunt(n, m, a, b, l) * scale)});
          }
        }
}

std::vector<cplx> MultipoleToLocalTable::singular_harmonics(Wavenumber k, double sigma,
                                                            const Vec3& t) const {
  const int lmax = 2 * p_ - 2;
  std::vector<cplx> st((lmax + 1) * (lmax + 1));
  singular_basis(lmax, k, sigma, t, st.data());
  return st;
}

std::vector<double> MultipoleToLocalTable::kappa_powers(Wavenumber k, double sigma) const {
  return even_powers(k.squared() * sigma * sigma, 2 * p_);
}

TranslationMatrix MultipoleToLocalTable::operator()(Wavenumber k, double sigma,
                                                    const Vec3& t) const {
  const int size = p_ * p_;
  const std::vector<double> kappa_power = kappa_powers(k, sigma);
  const std::vector<cplx> st = singular_harmonics(k, sigma, t);
  TranslationMatrix c(size * size, 0.0);
  for (const Term& term : terms_)
    c[term.entry] += term.constant * (kappa_power[term.power] * st[term.harmonic]);
  for (cplx& v : c) v /= sigma;
  return c;
}

TranslationMatrix multipole_to_local(const GauntTable& gaunt, int p, Wavenumber k, double sigma,
                                     const Vec3& t) {
  return MultipoleToLocalTable(gaunt, p)(k, sigma, t);
}

HarmonicGradient harmonic_gradient(int q) {
  const double c0 = std::sqrt(3.0 / (4.0 * std::numbers::pi));
  const double c1 = std::sqrt(3.0 / (8.0 * std::numbers::pi));
  if (q == 0) return {0.0, 0.0, c0};
  if (q == 1) return {-c1, cplx(0.0, -c1), 0.0};
  return {c1, cplx(0.0, -c1), 0.0};
}

std::vector<GradientTerm> gradient_terms(const GauntTable& gaunt, int p, Wavenumber k,
                                         double sigma) {
  check_order(gaunt, p, p);
  const double kappa2 = k.squared() * sigma * sigma;
  std::vector<GradientTerm> terms;
  for (int n = 0; n < p; ++n)
    for (int m = -n; m <= n; ++m)
      for (int a : {n - 1, n + 1}) {
        if (a < 0) continue;
        // grad R_1^q(0) = (k / 3) g_q, and alpha_n / alpha_a from the scaling.
        const double factor =
            a == n + 1 ? kappa2 / (3.0 * sigma * (2.0 * n + 3.0)) : (2.0 * n + 1.0) / (3.0 * sigma);
        for (int q = -1; q <= 1; ++q) {
          const int b = m - q;
          if (std::abs(b) > a) continue;
          const double g = gaunt(n, m, a, b, 1);
          if (g == 0.0 || factor == 0.0) continue;
          terms.push_back({coefficient_index(n, m), coefficient_index(a, b), q,
                           four_pi * i_power(a + 1 - n) * (g * factor)});
        }
      }
  return terms;
}

}  // namespace fmbem::fmm
