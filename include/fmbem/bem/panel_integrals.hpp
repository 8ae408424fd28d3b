#pragma once
#include "fmbem/core/vec3.hpp"
#include "fmbem/quadrature/gauss_legendre.hpp"

namespace fmbem {

// Integrals over one flat triangle of the kernel and of its normal
// derivative, for a unit density:
//   single_layer = integral of G(|x - y|) dS_y,
//   double_layer = integral of dG/dn_y (x, y) dS_y,
// n the unit normal of (a, b, c) by the right-hand rule. Complex: std::complex<double> here, the
// device's complex type in the GPU's kernels (bem/cuda), which compute the same integrals.
template <class Complex>
struct BasicPanelIntegrals {
  Complex single_layer;
  Complex double_layer;
};
using PanelIntegrals = BasicPanelIntegrals<cplx>;

// Accurate for any x, on the triangle itself included: in polar coordinates
// about the projection of x onto the triangle's plane the radial integrals
// are exact (d/dR exp(ikR) = ik exp(ikR), rho drho = R dR), so only smooth
// angular integrals remain, done per edge with `angular` (Gauss-Legendre) on pieces of at most 2
// in u = asinh(t / dist).
// The 1/r part of the single layer in the plane (the self term) is analytic.
PanelIntegrals panel_integrals(double k, const Vec3& a, const Vec3& b, const Vec3& c, const Vec3& x,
                               const GaussLegendre& angular);
// The same for the screened kernel exp(-kappa r) / (4 pi r) (k = i kappa; real results).
PanelIntegrals screened_panel_integrals(double kappa, const Vec3& a, const Vec3& b, const Vec3& c,
                                        const Vec3& x, const GaussLegendre& angular);

// Closed form of the integral of 1/(4 pi |x - y|) over the triangle for x in
// its plane (the 1/r self term).
double laplace_single_layer_in_plane(const Vec3& a, const Vec3& b, const Vec3& c, const Vec3& x);

}  // namespace fmbem
