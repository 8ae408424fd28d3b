#pragma once
// Analytic scattering by a sphere: the Mie series (k > 0) and its Laplace analogue (k = 0), used as
// the reference solution of the BEM. Conventions as in incident.hpp; h_n = h_n^(1) = j_n + i y_n;
// the normal points out of the sphere, so q = du/dn = du/dr.
#include <vector>

#include "fmbem/core/vec3.hpp"
#include "fmbem/exact/incident.hpp"
#include "fmbem/exact/legendre.hpp"

namespace fmbem::exact {

// Most series terms SphereScattering will use; more means a point source too close to the sphere
// (r_s below about 1.008 a; the count hardly depends on k) or ka above about 4800: an Error.
inline constexpr int kMaxSphereTerms = 5000;

// Rigid: du/dn = 0 (total field); Soft: u = 0; Admittance: du/dn = -i k B u with the normalised
// admittance B (B = rho c / Z for a locally reacting surface of impedance Z; Re B >= 0 passive:
// the time-averaged intensity into the surface, proportional to Im(conj(u) du/dn) = -k Re(B) |u|^2
// outward, is >= 0 inward). B = 0 is Rigid; B -> infinity tends to Soft. At k = 0 it is Rigid.
//
// Admittance, per degree n with x = ka, u_inc = sum a_n j_n(kr) P_n, u_s = sum s_n h_n(kr) P_n:
// k (a_n j_n' + s_n h_n') = -i k B (a_n j_n + s_n h_n) at r = a gives
//   s_n = -a_n (j_n'(x) + i B j_n(x)) / (h_n'(x) + i B h_n(x)),
//   u_n(a) = a_n (j_n h_n' - j_n' h_n) / (h_n' + i B h_n) = a_n i / (x^2 (h_n'(x) + i B h_n(x)))
// by the Wronskian j_n y_n' - j_n' y_n = 1/x^2 (so j_n h_n' - j_n' h_n = i/x^2). The denominator is
// formed as h_n (h_n'/h_n + i B) with 1/h_n and h_n'/h_n from the stable recurrences, so nothing
// overflows for n >> x; it never vanishes for Re B >= 0 (Im(h_n'/h_n) = 1/(x^2 |h_n|^2) > 0).
enum class SphereBoundary { Rigid, Soft, Admittance };

class SphereScattering {
 public:
  // Throws fmbem::Error for k < 0, radius <= 0, a zero plane-wave direction, a point source not
  // strictly outside the sphere, or a series that would need more than kMaxSphereTerms terms;
  // also for an admittance that is not finite, has Re B < 0 (active: the problem can lose
  // uniqueness), or is non-zero with bc other than Admittance.
  SphereScattering(double k, double radius, const Vec3& center, SphereBoundary bc,
                   const Incident& inc, cplx admittance = 0.0);

  // Rigid and Admittance: total field u on the surface (Admittance: q = -i k B u);
  // Soft: total normal derivative q = du/dr on the surface.
  // x is projected radially onto the sphere (Error if x == center). O(terms()), thread-safe.
  cplx surface_value(const Vec3& x) const;

  // Number of series terms (degrees 0 .. terms()-1); chosen so that the truncated tail is below
  // 1e-16 of sum_n |coefficient_n|, which bounds |surface_value| over the sphere.
  int terms() const { return static_cast<int>(coefficients_.size()); }

 private:
  Vec3 center_;
  Vec3 axis_;  // unit dhat (plane wave) or shat (point source, relative to the centre)
  std::vector<cplx> coefficients_;  // surface_value = sum_n coefficients_[n] P_n(xhat . axis_)
  LegendreSum legendre_;
};

// Ratios of spherical Hankel functions computed from eta_n(x) = h_n(x)/h_{n-1}(x) by its upward
// recurrence (stable for h_n^(1)), so that they neither overflow nor underflow before the ratio
// itself does; used by SphereScattering and exposed for tests. Entries n = 0 .. n_max; x > 0.
struct HankelRatios {
  std::vector<cplx> h_over_h;   // h_n(x_num) / h_n(x_den)
  std::vector<cplx> h_over_dh;  // h_n(x_num) / h_n'(x_den)
};
HankelRatios hankel_ratios(int n_max, double x_num, double x_den);

struct InverseHankel {
  std::vector<cplx> inv_h;   // 1 / h_n(x)   (tends to 0 for n >> x, underflows harmlessly)
  std::vector<cplx> inv_dh;  // 1 / h_n'(x)
};
InverseHankel inverse_hankel(int n_max, double x);

}  // namespace fmbem::exact
