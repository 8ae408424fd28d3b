#pragma once
// The field scattered by a sphere off its surface and its far-field amplitude: the Mie series
// (k > 0) and its Laplace analogue (k = 0), the references of the field evaluation. Conventions as
// in incident.hpp and sphere.hpp (h_n = h_n^(1), time factor exp(-i omega t)).
#include <vector>

#include "fmbem/core/vec3.hpp"
#include "fmbem/exact/incident.hpp"
#include "fmbem/exact/sphere.hpp"

namespace fmbem::exact {

// About the centre c, with r = |x - c| and P_n of the angle to the axis (the plane wave's
// direction, or the point source's direction from c):
//   u_inc = sum a_n j_n(kr) P_n,  a_n = e^{ik d.c} (2n+1) i^n (plane wave),
//                                  a_n = (ik / 4 pi) (2n+1) h_n(k r_s) (point source, r < r_s),
//   u_s   = -sum a_n t_n h_n(kr) P_n,  t_n = j_n'(ka) / h_n'(ka) (rigid), j_n(ka) / h_n(ka) (soft),
//           t_n = (j_n' + i B j_n) / (h_n' + i B h_n) at ka (admittance B, sphere.hpp),
// so that du/dr = 0 (rigid), u = 0 (soft) or du/dr = -i k B u (admittance) at r = a. Far field:
// h_n(kr) ~ (-i)^{n+1} e^{ikr}/(kr) gives u_s ~ F(d) e^{ik|x|} / |x| along the direction d, with
//   F(d) = -(e^{-ik d.c} / k) sum a_n t_n (-i)^{n+1} P_n(d . axis).
// The products a_n t_n h_n(kr) are formed from bounded pieces (j_n h_n and j_n' h_n at ka, and
// ratios of Hankel functions), so no term overflows where its factors would.
class SphereScatteredField {
 public:
  // Same arguments and errors as SphereScattering. Terms: those of the surface series plus 10.
  SphereScatteredField(double k, double radius, const Vec3& center, SphereBoundary bc,
                       const Incident& inc, cplx admittance = 0.0);

  // u_s(x), for x outside the sphere, and slightly inside it (the polyhedral surface's points
  // between the flat triangles and the sphere: the series is the field's analytic continuation,
  // converging for r > a^2 / r_s, every r > 0 for a plane wave). Error at x == center. O(terms()).
  cplx scattered(const Vec3& x) const;
  // F(d) for a direction d (any non-zero length). Error at k = 0 (no radiating far field).
  cplx far_field(const Vec3& direction) const;
  int terms() const { return static_cast<int>(beta_.size()); }

 private:
  double k_, radius_;
  Vec3 center_, axis_;
  bool plane_wave_;
  // k > 0: u_s = sum beta_n R_n(r) P_n, R_n = (h_n(kr) / h_n(ka)) den_n with den_n =
  // 1 / (h_n'(ka)/h_n(ka) + i B) (rigid: B = 0; admittance) or 1 (soft); F(d) uses
  // far_[n] = beta_n (-i)^{n+1} den_n / (k h_n(ka)).
  // k = 0: u_s = sum beta_n (a / r)^{n+1} P_n (point source) or the closed forms.
  std::vector<cplx> beta_, far_, den_;
  LegendreSum legendre_;
};

}  // namespace fmbem::exact
