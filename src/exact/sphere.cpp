#include "fmbem/exact/sphere.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <sstream>
#include <string>
#include <utility>

#include "fmbem/core/error.hpp"
#include "series.hpp"

namespace fmbem::exact {

std::string detail::describe(double value) {
  std::ostringstream out;
  out.precision(10);
  out << value;
  return out.str();
}

void detail::check_admittance(SphereBoundary bc, cplx admittance) {
  if (!(std::isfinite(admittance.real()) && std::isfinite(admittance.imag()))) {
    throw Error("exact: the sphere's admittance must be finite");
  }
  if (bc != SphereBoundary::Admittance && admittance != cplx(0.0)) {
    throw Error("exact: an admittance is given for a rigid or soft sphere");
  }
  if (admittance.real() < 0.0) {
    throw Error("exact: the sphere's admittance must have Re B >= 0 (passive), got Re B = " +
                describe(admittance.real()));
  }
}

namespace {

using detail::describe;

using detail::EtaStepper;
using detail::HankelRatioStepper;
using detail::InverseHankelStepper;
using detail::kFourPi;
using detail::kI;

void check_positive_argument(double x) {
  if (!(x > 0.0 && std::isfinite(x)))
    throw Error("exact: Hankel ratios need a finite argument > 0");
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

// The surface value per degree as a multiple of a_n / h_n(ka), a_n the incident coefficient
// (sphere.hpp), x = ka, L = h_n'(x)/h_n(x):
//   rigid, admittance  u(a) = a_n i / (x^2 (h_n' + i B h_n)) = (a_n / h_n) i / (x^2 (L + i B))
//                      (rigid: B = 0);
//   soft               q(a) = k (a_n j_n' + s_n h_n') = a_n k (j_n' h_n - j_n h_n') / h_n
//                           = (a_n / h_n) (-i k / x^2).
struct SurfaceResponse {
  SphereBoundary bc;
  cplx admittance;  // B; 0 for rigid
  cplx factor(double k, double x, cplx log_derivative) const {
    return bc == SphereBoundary::Soft ? -kI * k / (x * x)
                                      : kI / (x * x * (log_derivative + kI * admittance));
  }
};

// Helmholtz point source, a_n = (ik/(4 pi)) (2n+1) h_n(k r_s), so a_n / h_n(ka) =
// (ik/(4 pi)) (2n+1) h_n(k r_s)/h_n(ka).
std::vector<cplx> helmholtz_point_source(double k, double a, double r_s,
                                         const SurfaceResponse& response, int min_terms) {
  HankelRatioStepper ratio(k * r_s, k * a);
  SeriesBuilder series(min_terms);
  for (int n = 0; n < kMaxSphereTerms; ++n, ratio.advance()) {
    const cplx a_over_h = kI * k / kFourPi * (2.0 * n + 1.0) * ratio.h_over_h();
    if (series.add(a_over_h * response.factor(k, k * a, ratio.den_log_derivative())))
      return series.take();
  }
  throw_too_many_terms(k, a, r_s);
}

// Helmholtz plane wave exp(ik d.x) = exp(ik d.center) sum (2n+1) i^n j_n(kr) P_n about the centre:
// a_n / h_n(ka) = phase (2n+1) i^n / h_n(ka).
std::vector<cplx> helmholtz_plane_wave(double k, double a, cplx phase,
                                       const SurfaceResponse& response, int min_terms) {
  const double ka = k * a;
  InverseHankelStepper inverse(ka);
  SeriesBuilder series(min_terms);
  cplx i_pow_n = 1.0;
  for (int n = 0; n < kMaxSphereTerms; ++n, inverse.advance(), i_pow_n *= kI) {
    const cplx a_over_h = phase * (2.0 * n + 1.0) * i_pow_n * inverse.inv_h();
    if (series.add(a_over_h * response.factor(k, ka, inverse.log_derivative())))
      return series.take();
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
                                   const Incident& inc, cplx admittance)
    : center_(center) {
  detail::check_admittance(bc, admittance);
  if (!(std::isfinite(k) && k >= 0.0)) {
    throw Error("exact: the wavenumber k must be finite and >= 0, got " + describe(k));
  }
  if (!(std::isfinite(radius) && radius > 0.0)) {
    throw Error("exact: the sphere radius must be finite and > 0, got " + describe(radius));
  }
  const double a = radius;
  // At k = 0 the admittance condition du/dn = -i k B u is the rigid one.
  if (bc == SphereBoundary::Admittance && k == 0.0) bc = SphereBoundary::Rigid;
  const SurfaceResponse response{bc, admittance};
  // Below n ~ ka the terms do not decay yet; the convergence test only starts past that point.
  const int min_terms = static_cast<int>(std::ceil(k * a)) + 2;

  if (inc.kind == Incident::Kind::PlaneWave) {
    axis_ = detail::unit_vector(inc.direction, "the plane-wave direction");
    if (k == 0.0) {
      // Laplace "plane wave" u_inc = 1: rigid u = 1, soft u = 1 - a/r so q = 1/a.
      coefficients_ = {bc == SphereBoundary::Rigid ? 1.0 : 1.0 / a};
    } else {
      // The series is about the centre, so the plane wave picks up its phase there.
      const cplx phase = std::polar(1.0, k * dot(axis_, center));
      coefficients_ = helmholtz_plane_wave(k, a, phase, response, min_terms);
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
                             : helmholtz_point_source(k, a, r_s, response, min_terms);
  }

  for (cplx& c : coefficients_) c *= inc.amplitude;  // the solution is linear in it
  legendre_ = LegendreSum(terms());
}

cplx SphereScattering::surface_value(const Vec3& x) const {
  const Vec3 rel = x - center_;
  const double r = norm(rel);
  if (!(r > 0.0)) throw Error("exact: cannot project the sphere centre onto the sphere");
  const double t = std::clamp(dot(rel, axis_) / r, -1.0, 1.0);
  return legendre_.sum(terms(), t, [&](int n) { return coefficients_[n]; });
}

}  // namespace fmbem::exact
