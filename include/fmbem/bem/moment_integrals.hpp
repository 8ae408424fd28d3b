#pragma once
#include "fmbem/bem/density_reconstruction.hpp"
#include "fmbem/bem/discretization.hpp"
#include "fmbem/bem/hypersingular_integrals.hpp"
#include "fmbem/core/vec3.hpp"
#include "fmbem/quadrature/gauss_legendre.hpp"

namespace fmbem {

// The double layer and the hypersingular operator of the monomials of a quadratic density on one
// flat triangle (a, b, c) (unit normal n by the right-hand rule), for a target x with unit normal
// n_x: with (xi, eta) = ((y - origin) . axis1, (y - origin) . axis2) (axis1, axis2 orthonormal in
// the triangle's plane) and the monomials xi, eta, xi^2, xi eta, eta^2,
//   double_layer[m]  = integral over T of dG/dn_y (x, y) monomial_m(y) dS_y,
//   hypersingular[m] = n_x . grad_x of the same (Hadamard finite part for x on T),
// G = exp(ikr) / (4 pi r). These are the near-field entries of DensityReconstruction's quadratic
// read of a density (DensityModel::quadratic).
//
// Method (derivation in the .cpp): polar coordinates about the projection p of x on the plane,
// one signed sector per edge as in panel_integrals; the monomials are polynomials in the radius
// rho. The constant part is `constant` (the unit density's D and N, from
// hypersingular_integrals); the rho and rho^2 parts have closed-form radial integrals of the
// Laplace kernel and of the Helmholtz remainder's singular terms and of its terms linear in r,
// and the bounded rest of the remainder is integrated with `radial`: where the farthest corner
// is within k r = 1.5 of x, over the whole triangle at once (the conical product of `radial`
// with itself: one sum for every direction), else along each direction (Gauss-Legendre in rho
// on pieces of at most 1 in k rho); 6 points keep the moments within 1e-10 of subdivision; the
// angle with `angular` in u = asinh(t / dist) on pieces of at most 2 in u per sector. Terms
// whose signed-sector sum is exactly zero (log |h| times an odd function of the direction) are
// left out, so that nothing grows as x nears the plane. x must not lie on the triangle's
// boundary.
// (Complex: as PanelIntegrals'.)
template <class Complex>
struct BasicMonomialMoments {
  Complex double_layer[5];
  Complex hypersingular[5];
};
using MonomialMoments = BasicMonomialMoments<cplx>;

MonomialMoments monomial_moments(double k, const Vec3& a, const Vec3& b, const Vec3& c,
                                 const Vec3& origin, const Vec3& axis1, const Vec3& axis2,
                                 const Vec3& x, const Vec3& n_x,
                                 const HypersingularIntegrals& constant,
                                 const GaussLegendre& angular, const GaussLegendre& radial);

// The integrals of a pair beyond the close radius that the regular rule still integrates too
// coarsely for the quadratic read (NearFieldOptions::refined_factor): the unit density's S, D, D'
// and N and the monomials' D and N, by the 7-point rule (degree 5) on the four half-size
// sub-triangles of (a, b, c). x must lie off the triangle.
template <class Complex>
struct BasicRefinedIntegrals {
  BasicHypersingularIntegrals<Complex> constant;
  BasicMonomialMoments<Complex> monomials;
};
using RefinedIntegrals = BasicRefinedIntegrals<cplx>;
RefinedIntegrals refined_rule_integrals(double k, const Vec3& a, const Vec3& b, const Vec3& c,
                                        const Vec3& origin, const Vec3& axis1, const Vec3& axis2,
                                        const Vec3& x, const Vec3& n_x);

// What the regular Gauss rule of `disc` gives for the same integrals over `element` with the
// monomials of reconstruction's frame of that element (quadrature points within
// disc.coincidence_radius() of x skipped, as regular_integrals does), so that callers can store
// accurate minus regular for close pairs.
MonomialMoments regular_monomial_moments(const Discretization& disc,
                                         const DensityReconstruction& reconstruction, double k,
                                         std::size_t element, const Vec3& x, const Vec3& n_x);

}  // namespace fmbem
