#include "fmbem/exact/sphere_cap.hpp"

#include <algorithm>
#include <array>
#include <boost/math/quadrature/tanh_sinh.hpp>
#include <cmath>
#include <limits>
#include <numbers>

#include "fmbem/core/error.hpp"
#include "series.hpp"

namespace fmbem::exact {
namespace {

constexpr double kPi = std::numbers::pi;
constexpr double kEps = std::numeric_limits<double>::epsilon();
constexpr double kTolerance = 1e-9;       // of |q0| min(a, 1/k); see sphere_cap.hpp
constexpr double kQuadratureTol = 1e-13;  // relative, of the static integral
constexpr int kMaxCapTerms = 2'000'000;
constexpr int kCheckEvery = 8;  // the truncation test's stride (and D_n's window)

// The quadrature is built once (its abscissas) and is thread-safe (Boost guards its lazy rows
// with a mutex); not const because Boost 1.74 defines integrate(f, a, b, ...) without const.
boost::math::quadrature::tanh_sinh<double>& quadrature() {
  static boost::math::quadrature::tanh_sinh<double> rule;
  return rule;
}

// K(gamma) sin(gamma) of sphere_cap.hpp in half-angle form, free of cancellation: with
// s = sin(gamma/2), 1 - c = 2 s^2, 1 + c = 2 cos^2(gamma/2), R = hypot(1 - rho, 2 sqrt(rho) s)
// and (rho - c + R)(R - rho + c) = 1 - c^2 for c > 0. Bounded: 2 at gamma -> 0 when rho = 1.
double kernel_sin(double rho, double gamma) {
  const double s = std::sin(0.5 * gamma), c_half = std::cos(0.5 * gamma);
  const double R = std::hypot(1.0 - rho, 2.0 * std::sqrt(rho) * s);
  const double sin_gamma = 2.0 * s * c_half;
  const double log_term = gamma < 0.5 * kPi
                              ? std::log(2.0 * c_half * c_half / (R + (1.0 - rho) - 2.0 * s * s))
                              : std::log((rho - 1.0 + 2.0 * s * s + R) / (2.0 * s * s));
  return 4.0 * rho * s * c_half / R - sin_gamma * log_term;
}

}  // namespace

SphereCapRadiation::SphereCapRadiation(double k, double radius, const Vec3& center,
                                       const Vec3& axis, double half_angle, cplx normal_derivative)
    : k_(k), radius_(radius), center_(center), half_angle_(half_angle), q0_(normal_derivative) {
  using detail::describe;
  if (!(std::isfinite(k) && k > 0.0))
    throw Error("exact: the cap's wavenumber k must be finite and > 0, got " + describe(k));
  if (!(std::isfinite(radius) && radius > 0.0))
    throw Error("exact: the sphere radius must be finite and > 0, got " + describe(radius));
  if (!(std::isfinite(center.x) && std::isfinite(center.y) && std::isfinite(center.z)))
    throw Error("exact: the sphere centre must be finite");
  axis_ = detail::unit_vector(axis, "the cap's axis");
  if (!(half_angle > 0.0 && half_angle <= kPi))
    throw Error("exact: the cap's half-angle must lie in (0, pi], got " + describe(half_angle));
  if (!(std::isfinite(q0_.real()) && std::isfinite(q0_.imag())))
    throw Error("exact: the cap's normal derivative must be finite");

  const double a = radius, ka = k * a;
  x0_ = half_angle == kPi ? -1.0 : std::cos(half_angle);
  sin0_ = std::sin(half_angle);
  tolerance_ = kTolerance * std::abs(q0_) * std::min(a, 1.0 / k);
  // Only n = 0 when q is constant: the whole sphere (P_{n-1}(-1) = P_{n+1}(-1)) or q0 = 0.
  const bool single_term = x0_ == -1.0 || q0_ == cplx(0.0);
  crossover_ = 1;
  while (!single_term && crossover_ < kMaxCapTerms && q_bound(crossover_) < bernstein_q(crossover_))
    ++crossover_;
  const int start = std::max(crossover_, static_cast<int>(std::ceil(2.0 * ka)) + 16);

  // P_{n-1}(x0), P_n(x0), P_{n+1}(x0) with P_{-1} = 1 (so that q_0 = q0 (1 - x0)/2 too).
  double p_previous = 1.0, p = 1.0, p_next = x0_;
  detail::EtaStepper eta(ka);
  double d_window = 0.0;
  for (int n = 0;; ++n, eta.advance()) {
    if (n >= kMaxCapTerms) {
      throw Error("exact: the cap series needs more than " + std::to_string(kMaxCapTerms) +
                  " terms (ka = " + describe(ka) + ")");
    }
    q_.push_back(q0_ * 0.5 * (p_previous - p_next));
    // M_n(a) = h_n/(k h_n') = a/(ka L_n), M0_n(a) = -a/(n+1).
    d_surface_.push_back(a / (ka * eta.log_derivative()) + a / (n + 1.0));
    d_window = std::max(d_window, std::abs(d_surface_.back()));
    if (single_term) break;
    // The poles' rule (P_n = 1, beta = 2.5) at a quarter of the tolerance covers every point.
    if (n >= start && n % kCheckEvery == 0) {
      if (2.0 * std::abs(q0_) * q_bound(n) * d_window * n / 1.5 <= 0.25 * tolerance_) break;
      d_window = 0.0;
    }
    p_previous = p;
    p = p_next;
    p_next = ((2.0 * n + 3.0) * x0_ * p - (n + 1.0) * p_previous) / (n + 2.0);
  }
  legendre_ = LegendreSum(terms());
}

double SphereCapRadiation::bernstein_q(int n) const {
  return std::sqrt(2.0 / (kPi * (n - 0.5) * sin0_));
}

double SphereCapRadiation::q_bound(int n) const {
  const double first = (2.0 * n + 1.0) * (1.0 - x0_) / 2.0;
  return n < 1 ? first : std::min(first, bernstein_q(n));
}

double SphereCapRadiation::static_integral(double rho, double cos_theta, double sin_theta) const {
  // Phi(gamma) = 2 phi: the circle at angle gamma from x meets the cap's edge where
  // x0 = cos(theta) cos(gamma) + sin(theta) sin(gamma) cos(phi). With D = sin(theta) sin(gamma),
  //   (1 - cos phi) D = cos(theta - gamma) - x0 = 2 sin((theta0 + theta - gamma)/2) sin((theta0 -
  //   theta + gamma)/2), (1 + cos phi) D = x0 - cos(theta + gamma) = 2 sin((theta + gamma +
  //   theta0)/2) sin((theta + gamma - theta0)/2),
  // and phi = 2 atan2(sqrt(1 - cos phi), sqrt(1 + cos phi)): no cancellation (x0 - cos(theta)
  // cos(gamma) is 0 in floating point for gamma < 1e-8 at theta = theta0 = pi), no division
  // (D = 0 at the poles gives 0 or 2 pi), and no acos near +-1.
  const double theta = std::atan2(sin_theta, cos_theta);
  const auto phi = [&](double gamma) {
    const double minus = 2.0 * std::sin(0.5 * (half_angle_ + theta - gamma)) *
                         std::sin(0.5 * (half_angle_ - theta + gamma));
    const double plus = 2.0 * std::sin(0.5 * (theta + gamma + half_angle_)) *
                        std::sin(0.5 * (theta + gamma - half_angle_));
    return 4.0 * std::atan2(std::sqrt(std::max(0.0, minus)), std::sqrt(std::max(0.0, plus)));
  };
  std::array<double, 5> breaks{0.0, std::abs(theta - half_angle_), theta + half_angle_,
                               2.0 * kPi - theta - half_angle_, kPi};
  for (double& b : breaks) b = std::clamp(b, 0.0, kPi);
  std::sort(breaks.begin(), breaks.end());
  double total = 0.0;
  for (std::size_t i = 0; i + 1 < breaks.size(); ++i) {
    const double lo = breaks[i], hi = breaks[i + 1];
    if (!(hi > lo) || phi(0.5 * (lo + hi)) == 0.0) continue;
    total += quadrature().integrate(
        [&](double gamma) { return kernel_sin(rho, gamma) * phi(gamma); }, lo, hi, kQuadratureTol);
  }
  return total;
}

cplx SphereCapRadiation::evaluate(double rho, double cos_theta, double sin_theta) const {
  const double a = radius_, ka = k_ * a, kr = ka / rho;
  const bool plain = rho <= 0.5, surface = rho == 1.0;
  // Tail factor of sphere_cap.hpp: tail <= B_n * tail_factor(n); the test asks 2 tail <= tol.
  const double beta = surface ? 3.5 : 2.5;
  const int start = std::max(crossover_, static_cast<int>(std::ceil(2.0 * (plain ? ka : kr))) + 16);
  const double bernstein =
      sin_theta > 0.0 ? 2.0 / (kPi * sin_theta) : std::numeric_limits<double>::infinity();
  detail::HankelRatioStepper ratio(kr, ka);
  double rho_n1 = rho;  // rho^{n+1}, underflows harmlessly
  double d_window = 0.0;
  cplx sum = 0.0;
  legendre_.visit(terms(), cos_theta, [&](int n, double p) {
    cplx d;
    if (surface) {
      d = d_surface_[n];
    } else {
      d = ratio.h_over_dh() / k_ + (plain ? 0.0 : a * rho_n1 / (n + 1.0));
      ratio.advance();
      rho_n1 *= rho;
    }
    sum += q_[n] * d * p;
    d_window = std::max(d_window, std::abs(d));
    if (n < start || n % kCheckEvery != 0) return true;
    const double bound =
        std::abs(q0_) * q_bound(n) * d_window * std::min(1.0, std::sqrt(bernstein / (n + 0.5)));
    d_window = 0.0;
    return !(2.0 * bound * (plain ? 1.0 : n / (beta - 1.0)) <= tolerance_);
  });
  if (plain || q0_ == cplx(0.0)) return sum;
  return sum - a * q0_ / detail::kFourPi * static_integral(rho, cos_theta, sin_theta);
}

cplx SphereCapRadiation::value(const Vec3& x) const {
  const Vec3 rel = x - center_;
  const double r = norm(rel);
  // Within 64 ulp of the sphere is on it (a point built as center + a * direction rounds).
  const double slack = 64.0 * kEps * radius_;
  if (!std::isfinite(r)) throw Error("exact: the cap's field point must be finite");
  if (!(r >= radius_ - slack)) {
    throw Error("exact: the cap's field is defined on and outside the sphere only (|x - c|/a = " +
                detail::describe(r / radius_) + ")");
  }
  const double rho = r <= radius_ + slack ? 1.0 : radius_ / r;
  return evaluate(rho, std::clamp(dot(rel, axis_) / r, -1.0, 1.0), norm(cross(rel, axis_)) / r);
}

cplx SphereCapRadiation::surface_value(const Vec3& x) const {
  const Vec3 rel = x - center_;
  const double r = norm(rel);
  if (!(r > 0.0)) throw Error("exact: cannot project the sphere centre onto the sphere");
  return evaluate(1.0, std::clamp(dot(rel, axis_) / r, -1.0, 1.0), norm(cross(rel, axis_)) / r);
}

}  // namespace fmbem::exact
