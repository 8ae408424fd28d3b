#include "fmbem/exact/sphere.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <sstream>
#include <string>
#include <utility>

#include "fmbem/core/error.hpp"

namespace fmbem::exact {
namespace {

constexpr double kFourPi = 4.0 * std::numbers::pi;
constexpr cplx kI{0.0, 1.0};

// Advances n = 0, 1, 2, ... and keeps, for x > 0,
//   eta_n(x) = h_n(x)/h_{n-1}(x)  (eta_0 = h_0/h_{-1} = -i since h_{-1}(x) = exp(ix)/x),
//   h_n'(x)/h_n(x) = 1/eta_n - (n+1)/x.
// Upward recurrence eta_{n+1} = (2n+1)/x - 1/eta_n: h_n^(1) is dominant for n > x and oscillates
// with slowly varying modulus for n < x, so errors grow at most linearly in n.
class EtaStepper {
 public:
  explicit EtaStepper(double x) : inv_x_(1.0 / x) {}
  cplx eta() const { return eta_; }
  cplx log_derivative() const { return 1.0 / eta_ - double(n_ + 1) * inv_x_; }
  void advance() {
    eta_ = double(2 * n_ + 1) * inv_x_ - 1.0 / eta_;
    ++n_;
  }

 private:
  double inv_x_;
  int n_ = 0;
  cplx eta_{0.0, -1.0};
};

// h_n(x_num)/h_n(x_den), starting from h_0(x) = -i exp(ix)/x and multiplying by eta ratios.
class HankelRatioStepper {
 public:
  HankelRatioStepper(double x_num, double x_den)
      : num_(x_num), den_(x_den), ratio_(std::polar(x_den / x_num, x_num - x_den)) {}
  cplx h_over_h() const { return ratio_; }
  cplx h_over_dh() const { return ratio_ / den_.log_derivative(); }
  void advance() {
    num_.advance();
    den_.advance();
    ratio_ *= num_.eta() / den_.eta();
  }

 private:
  EtaStepper num_, den_;
  cplx ratio_;
};

// 1/h_n(x), starting from 1/h_0(x) = i x exp(-ix); multiplying by 1/eta_n only shrinks it for
// n > x, so it underflows to 0 instead of overflowing.
class InverseHankelStepper {
 public:
  explicit InverseHankelStepper(double x) : eta_(x), inv_h_(std::polar(x, -x) * kI) {}
  cplx inv_h() const { return inv_h_; }
  cplx inv_dh() const { return inv_h_ / eta_.log_derivative(); }
  void advance() {
    eta_.advance();
    inv_h_ /= eta_.eta();
  }

 private:
  EtaStepper eta_;
  cplx inv_h_;
};

void check_positive_argument(double x) {
  if (!(x > 0.0 && std::isfinite(x)))
    throw Error("exact: Hankel ratios need a finite argument > 0");
}

std::string describe(double value) {
  std::ostringstream out;
  out.precision(10);
  out << value;
  return out.str();
}

// Collects coefficients and decides when the series has converged: with the ratio
// q = |c_n / c_{n-1}| < 1 and non-increasing (true past the turning point n ~ ka, where the terms
// decay geometrically like (a/r_s)^n or faster), the tail beyond n is at most |c_n| / (1 - q).
class SeriesBuilder {
 public:
  explicit SeriesBuilder(int min_terms) : min_terms_(min_terms) {}
  // Returns true once the series including c has converged.
  bool add(cplx c) {
    coefficients_.push_back(c);
    const double size = std::abs(c);
    abs_sum_ += size;
    const int n = static_cast<int>(coefficients_.size()) - 1;
    bool converged = false;
    if (n + 1 >= min_terms_ && n > 0) {
      const double q = previous_size_ > 0.0 ? size / previous_size_ : 0.0;
      converged = q < 1.0 && size <= kTailTolerance * (1.0 - q) * abs_sum_;
    }
    previous_size_ = size;
    return converged;
  }
  std::vector<cplx> take() { return std::move(coefficients_); }

 private:
  static constexpr double kTailTolerance = 1e-16;
  int min_terms_;
  std::vector<cplx> coefficients_;
  double abs_sum_ = 0.0, previous_size_ = 0.0;
};

[[noreturn]] void throw_too_many_terms(double k, double radius, double source_distance) {
  std::string msg = "exact: the sphere series needs more than " + std::to_string(kMaxSphereTerms) +
                    " terms (k = " + describe(k) + ", radius = " + describe(radius);
  if (source_distance > 0.0) {
    msg += ", point source at r_s/a = " + describe(source_distance / radius) +
           "; move it further from the sphere";
  }
  throw Error(msg + ")");
}

// Laplace (k = 0) point source at distance r_s: c_n = 1/(4 pi r_s^{n+1}), rho = a/r_s.
//   rigid u(a) = sum c_n a^n (2n+1)/(n+1) P_n = sum rho^n (2n+1)/(n+1) / (4 pi r_s) P_n
//   soft  q(a) = sum c_n (2n+1) a^{n-1} P_n = sum rho^{n+1} (2n+1) / (4 pi a^2) P_n
std::vector<cplx> laplace_point_source(double a, double r_s, SphereBoundary bc) {
  const double rho = a / r_s;
  SeriesBuilder series(1);
  double rho_n = 1.0;  // rho^n, underflows harmlessly
  for (int n = 0; n < kMaxSphereTerms; ++n, rho_n *= rho) {
    const double c = bc == SphereBoundary::Rigid
                         ? rho_n * (2.0 * n + 1.0) / (n + 1.0) / (kFourPi * r_s)
                         : rho_n * rho * (2.0 * n + 1.0) / (kFourPi * a * a);
    if (series.add(c)) return series.take();
  }
  throw_too_many_terms(0.0, a, r_s);
}

// Helmholtz point source, c_n = (ik/(4 pi)) (2n+1) h_n(k r_s):
//   rigid u(a) = sum c_n i/((ka)^2 h_n'(ka)) P_n = sum -(2n+1)/(4 pi k a^2) h_n(kr_s)/h_n'(ka) P_n
//   soft  q(a) = sum c_n k (-i)/((ka)^2 h_n(ka)) P_n = sum (2n+1)/(4 pi a^2) h_n(kr_s)/h_n(ka) P_n
std::vector<cplx> helmholtz_point_source(double k, double a, double r_s, SphereBoundary bc,
                                         int min_terms) {
  HankelRatioStepper ratio(k * r_s, k * a);
  SeriesBuilder series(min_terms);
  for (int n = 0; n < kMaxSphereTerms; ++n, ratio.advance()) {
    const cplx c = bc == SphereBoundary::Rigid
                       ? -(2.0 * n + 1.0) / (kFourPi * k * a * a) * ratio.h_over_dh()
                       : (2.0 * n + 1.0) / (kFourPi * a * a) * ratio.h_over_h();
    if (series.add(c)) return series.take();
  }
  throw_too_many_terms(k, a, r_s);
}

// Helmholtz plane wave exp(ik d.x) = exp(ik d.center) sum (2n+1) i^n j_n(kr) P_n about the centre:
//   rigid u(a) = sum phase (2n+1) i^n i/((ka)^2 h_n'(ka)) P_n
//   soft  q(a) = sum phase (2n+1) i^n k (-i)/((ka)^2 h_n(ka)) P_n
std::vector<cplx> helmholtz_plane_wave(double k, double a, cplx phase, SphereBoundary bc,
                                       int min_terms) {
  const double ka = k * a;
  InverseHankelStepper inverse(ka);
  SeriesBuilder series(min_terms);
  cplx i_pow_n = 1.0;
  for (int n = 0; n < kMaxSphereTerms; ++n, inverse.advance(), i_pow_n *= kI) {
    const cplx incident = phase * (2.0 * n + 1.0) * i_pow_n;
    const cplx c = bc == SphereBoundary::Rigid ? incident * kI / (ka * ka) * inverse.inv_dh()
                                               : incident * (-kI) * k / (ka * ka) * inverse.inv_h();
    if (series.add(c)) return series.take();
  }
  throw_too_many_terms(k, a, 0.0);
}

}  // namespace

HankelRatios hankel_ratios(int n_max, double x_num, double x_den) {
  check_positive_argument(x_num);
  check_positive_argument(x_den);
  HankelRatios out;
  HankelRatioStepper stepper(x_num, x_den);
  for (int n = 0; n <= n_max; ++n, stepper.advance()) {
    out.h_over_h.push_back(stepper.h_over_h());
    out.h_over_dh.push_back(stepper.h_over_dh());
  }
  return out;
}

InverseHankel inverse_hankel(int n_max, double x) {
  check_positive_argument(x);
  InverseHankel out;
  InverseHankelStepper stepper(x);
  for (int n = 0; n <= n_max; ++n, stepper.advance()) {
    out.inv_h.push_back(stepper.inv_h());
    out.inv_dh.push_back(stepper.inv_dh());
  }
  return out;
}

SphereScattering::SphereScattering(double k, double radius, const Vec3& center, SphereBoundary bc,
                                   const Incident& inc)
    : center_(center) {
  if (!(std::isfinite(k) && k >= 0.0)) {
    throw Error("exact: the wavenumber k must be finite and >= 0, got " + describe(k));
  }
  if (!(std::isfinite(radius) && radius > 0.0)) {
    throw Error("exact: the sphere radius must be finite and > 0, got " + describe(radius));
  }
  const double a = radius;
  // Below n ~ ka the terms do not decay yet; the convergence test only starts past that point.
  const int min_terms = static_cast<int>(std::ceil(k * a)) + 2;

  if (inc.kind == Incident::Kind::PlaneWave) {
    const double length = norm(inc.direction);
    if (!(length > 0.0 && std::isfinite(length))) {
      throw Error("exact: the plane-wave direction must be a finite non-zero vector");
    }
    axis_ = inc.direction * (1.0 / length);
    if (k == 0.0) {
      // Laplace "plane wave" u_inc = 1: rigid u = 1, soft u = 1 - a/r so q = 1/a.
      coefficients_ = {bc == SphereBoundary::Rigid ? 1.0 : 1.0 / a};
    } else {
      // The series is about the centre, so the plane wave picks up its phase there.
      const cplx phase = std::polar(1.0, k * dot(axis_, center));
      coefficients_ = helmholtz_plane_wave(k, a, phase, bc, min_terms);
    }
  } else {
    const Vec3 source = inc.source - center;
    const double r_s = norm(source);
    if (!(r_s > a && std::isfinite(r_s))) {
      throw Error("exact: the point source must lie strictly outside the sphere (r_s/a = " +
                  describe(r_s / a) + ")");
    }
    axis_ = source * (1.0 / r_s);
    coefficients_ = k == 0.0 ? laplace_point_source(a, r_s, bc)
                             : helmholtz_point_source(k, a, r_s, bc, min_terms);
  }

  const int n_terms = terms();
  legendre_a_.resize(n_terms);
  legendre_b_.resize(n_terms);
  for (int n = 0; n < n_terms; ++n) {
    legendre_a_[n] = (2.0 * n + 1.0) / (n + 1.0);
    legendre_b_[n] = n / (n + 1.0);
  }
}

cplx SphereScattering::surface_value(const Vec3& x) const {
  const Vec3 rel = x - center_;
  const double r = norm(rel);
  if (!(r > 0.0)) throw Error("exact: cannot project the sphere centre onto the sphere");
  const double t = std::clamp(dot(rel, axis_) / r, -1.0, 1.0);
  // Upward Legendre recurrence, stable for |t| <= 1.
  const int n_terms = terms();
  double p_prev = 0.0, p = 1.0;  // P_{n-1}, P_n
  cplx sum = 0.0;
  for (int n = 0; n < n_terms; ++n) {
    sum += coefficients_[n] * p;
    const double p_next = legendre_a_[n] * t * p - legendre_b_[n] * p_prev;
    p_prev = p;
    p = p_next;
  }
  return sum;
}

}  // namespace fmbem::exact
