#include "fmbem/exact/sphere_field.hpp"

#include <algorithm>
#include <boost/math/special_functions/bessel.hpp>
#include <boost/math/special_functions/bessel_prime.hpp>
#include <cmath>
#include <numbers>
#include <string>

#include "fmbem/core/error.hpp"
#include "series.hpp"

namespace fmbem::exact {
namespace {

using detail::kFourPi;
using detail::kI;

// j_n(x) h_n(x) and j_n'(x) h_n(x), n = 0 .. count - 1, x > 0: bounded for every n (they tend to
// i/((2n+1) x) times 1 and n/x), while j_n underflows and h_n overflows for n >> x. Up to
// n0 = ceil(x) + 1 from Boost's j_n, y_n, j_n'; above, j_n h_n = j_{n-1} h_{n-1} rho_n eta_n with
// rho_n = j_n / j_{n-1} from the continued fraction rho_n = x / (2n + 1 - x rho_{n+1}) (backward:
// stable for the minimal solution j_n, and without poles for n - 1 >= x, where j_{n-1} > 0) and
// eta_n = h_n / h_{n-1} from the upward recurrence (stable for the dominant h_n);
// j_n' = j_{n-1} - (n+1)/x j_n gives j_n' h_n = j_n h_n (1 / rho_n - (n+1)/x).
struct BesselHankelProducts {
  std::vector<cplx> j_h, dj_h;
};

BesselHankelProducts bessel_hankel_products(int count, double x) {
  BesselHankelProducts out;
  out.j_h.resize(count);
  out.dj_h.resize(count);
  const int n0 = std::min(count - 1, static_cast<int>(std::ceil(x)) + 1);
  cplx h_previous = 0.0, h = 0.0;
  for (int n = 0; n <= n0; ++n) {
    const double j = boost::math::sph_bessel(unsigned(n), x);
    const double dj = boost::math::sph_bessel_prime(unsigned(n), x);
    h_previous = h;
    h = cplx(j, boost::math::sph_neumann(unsigned(n), x));
    out.j_h[n] = j * h;
    out.dj_h[n] = dj * h;
  }
  if (n0 + 1 >= count) return out;
  // rho_n for n0 < n < count, from 40 + count / 4 terms above (each step shrinks the start's
  // error by about x / (2n), below 1/2 here, so that is far below rounding).
  const int top = count + 40 + count / 4;
  std::vector<double> rho(count, 0.0);
  double r = x / (2.0 * top + 3.0);
  for (int m = top; m > n0; --m) {
    r = x / (2.0 * m + 1.0 - x * r);
    if (m < count) rho[m] = r;
  }
  cplx eta = h / h_previous;  // h_{n0} / h_{n0 - 1}
  for (int n = n0 + 1; n < count; ++n) {
    eta = (2.0 * (n - 1) + 1.0) / x - 1.0 / eta;  // h_n / h_{n-1}
    out.j_h[n] = out.j_h[n - 1] * rho[n] * eta;
    out.dj_h[n] = out.j_h[n] * (1.0 / rho[n] - (n + 1.0) / x);
  }
  return out;
}

}  // namespace

SphereScatteredField::SphereScatteredField(double k, double radius, const Vec3& center,
                                           SphereBoundary bc, const Incident& inc, cplx admittance)
    : k_(k), radius_(radius), center_(center), plane_wave_(inc.kind == Incident::Kind::PlaneWave) {
  // Validates every argument and counts the terms of the surface series; the field's terms
  // decay at least as fast beyond them (j_n(ka) h_n(kr) / h_n(ka) ~ (ka)^n (a/r)^{n+1} / (2n-1)!!).
  const SphereScattering surface(k, radius, center, bc, inc, admittance);
  const int count = surface.terms() + 10;
  legendre_ = LegendreSum(count);
  const double a = radius;
  // Rigid and admittance share every formula (B = 0 for rigid); at k = 0 the admittance
  // condition du/dn = -i k B u is the rigid one.
  const bool soft = bc == SphereBoundary::Soft;
  double r_s = 0.0;
  if (plane_wave_) {
    axis_ = detail::unit_vector(inc.direction, "the plane-wave direction");
  } else {
    r_s = norm(inc.source - center);
    axis_ = detail::unit_vector(inc.source - center, "the point source's offset from the centre");
  }

  if (k == 0.0) {
    // Laplace: u_s = sum beta_n (a/r)^{n+1} P_n. "Plane wave" u_inc = 1: rigid u_s = 0, soft
    // u_s = -a/r. Point source 1/(4 pi |x - s|) = sum r^n / r_s^{n+1} P_n / (4 pi): soft
    // u_s = -sum a^{2n+1} / (r_s r)^{n+1} P_n / (4 pi), rigid the same times -n/(n+1).
    if (plane_wave_) {
      if (soft) beta_ = {-inc.amplitude};
      return;
    }
    beta_.resize(count);
    double rho_n = 1.0;  // (a / r_s)^n, underflows harmlessly
    for (int n = 0; n < count; ++n, rho_n *= a / r_s)
      beta_[n] = inc.amplitude * (soft ? -1.0 : n / (n + 1.0)) * rho_n / (kFourPi * r_s);
    return;
  }

  const double ka = k * a;
  const BesselHankelProducts w = bessel_hankel_products(count, ka);
  const InverseHankel inverse = inverse_hankel(count - 1, ka);
  HankelRatios source_ratio;
  if (!plane_wave_) source_ratio = hankel_ratios(count - 1, k * r_s, ka);
  const cplx phase = std::polar(1.0, k * dot(axis_, center));
  beta_.resize(count);
  far_.resize(count);
  den_.resize(count);
  detail::EtaStepper eta(ka);
  cplx i_pow_n = 1.0, minus_i_pow_n1 = -kI;  // i^n, (-i)^{n+1}
  for (int n = 0; n < count; ++n, i_pow_n *= kI, minus_i_pow_n1 *= -kI, eta.advance()) {
    // a_n t_n h_n(kr) = beta_n R_n with beta_n = -(a_n / h_n(ka)) times j_n h_n (soft) or
    // j_n' h_n + i B j_n h_n (rigid: B = 0; admittance) at ka.
    const cplx a_over_h =
        inc.amplitude * (plane_wave_
                             ? phase * (2.0 * n + 1.0) * i_pow_n * inverse.inv_h[n]
                             : kI * k / kFourPi * (2.0 * n + 1.0) * source_ratio.h_over_h[n]);
    beta_[n] = -a_over_h * (soft ? w.j_h[n] : w.dj_h[n] + kI * admittance * w.j_h[n]);
    den_[n] = soft ? cplx(1.0) : 1.0 / (eta.log_derivative() + kI * admittance);
    far_[n] = beta_[n] * minus_i_pow_n1 / k * inverse.inv_h[n] * den_[n];
  }
}

cplx SphereScatteredField::scattered(const Vec3& x) const {
  const Vec3 rel = x - center_;
  const double r = norm(rel);
  if (!(r > 0.0)) throw Error("exact: the scattered field is not defined at the sphere's centre");
  const double t = std::clamp(dot(rel, axis_) / r, -1.0, 1.0);
  const int count = terms();
  if (count == 0) return 0.0;
  if (k_ == 0.0) {
    const double ratio = radius_ / r;
    double power = ratio;  // (a/r)^{n+1}
    return legendre_.sum(count, t, [&](int n) {
      const cplx term = beta_[n] * power;
      power *= ratio;
      return term;
    });
  }
  detail::HankelRatioStepper ratio(k_ * r, k_ * radius_);
  return legendre_.sum(count, t, [&](int n) {
    const cplx term = beta_[n] * ratio.h_over_h() * den_[n];
    ratio.advance();
    return term;
  });
}

cplx SphereScatteredField::far_field(const Vec3& direction) const {
  if (k_ == 0.0) throw Error("exact: the far-field amplitude needs k > 0");
  const Vec3 d = detail::unit_vector(direction, "the far-field direction");
  const double t = std::clamp(dot(d, axis_), -1.0, 1.0);
  return std::polar(1.0, -k_ * dot(d, center_)) *
         legendre_.sum(terms(), t, [&](int n) { return far_[n]; });
}

}  // namespace fmbem::exact
