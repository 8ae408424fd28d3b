#pragma once
#include <cstddef>

#include "fmbem/bem/discretization.hpp"
#include "fmbem/core/vec3.hpp"
#include "fmbem/quadrature/gauss_legendre.hpp"

namespace fmbem {

// The two operators Burton-Miller adds, for one flat triangle (a, b, c) with unit normal n_y by
// the right-hand rule, a unit density, and a target x with unit normal n_x:
//   adjoint double layer D'(x) = integral of dG/dn_x (x, y) dS_y = n_x . grad_x S(x),
//   hypersingular        N(x)  = n_x . grad_x of integral of dG/dn_y (x, y) dS_y,
// G = exp(ikr) / (4 pi r). For x on the triangle (the self term) D' is the principal value
// (0 for a flat element) and N the Hadamard finite part, which equals the limit from either
// side. x must not lie on the triangle's boundary (N and D' are infinite there).
//
// Both reduce to the panel integrals S and D plus line integrals along the three edges (the
// Stokes / Maue form; derivation in the .cpp and docs/burton-miller.md): nothing near-singular
// is left on the surface, only at the edges, where the Laplace parts are in closed form and
// the bounded Helmholtz remainders are integrated with `angular` (Gauss-Legendre) on pieces of
// the edge in u = asinh(t / dist). S and D: Laplace parts in closed form, the Helmholtz
// remainder by panel_integrals (polar method) with the same `angular`.
// (Complex: as PanelIntegrals'.)
template <class Complex>
struct BasicHypersingularIntegrals {
  Complex single_layer;          // S
  Complex double_layer;          // D (0 for x in the triangle's plane)
  Complex adjoint_double_layer;  // D'
  Complex hypersingular;         // N
};
using HypersingularIntegrals = BasicHypersingularIntegrals<cplx>;

HypersingularIntegrals hypersingular_integrals(double k, const Vec3& a, const Vec3& b,
                                               const Vec3& c, const Vec3& x, const Vec3& n_x,
                                               const GaussLegendre& angular);

cplx adjoint_double_layer(double k, const Vec3& a, const Vec3& b, const Vec3& c, const Vec3& x,
                          const Vec3& n_x, const GaussLegendre& angular);

cplx hypersingular(double k, const Vec3& a, const Vec3& b, const Vec3& c, const Vec3& x,
                   const Vec3& n_x, const GaussLegendre& angular);

// The gradients the two are made of (n_x . these): grad_x S and grad_x D. Exposed for tests
// and for evaluating fields off the surface.
struct PanelGradients {
  cplx single_layer[3];
  cplx double_layer[3];
};
PanelGradients panel_gradients(double k, const Vec3& a, const Vec3& b, const Vec3& c, const Vec3& x,
                               const GaussLegendre& angular);

// What the regular Gauss rule of `disc` gives for D' and N of `element` at x with normal n_x
// (quadrature points within disc.coincidence_radius() of x skipped, as regular_integrals does
// for S and D), so that callers can store accurate minus regular for close pairs.
struct RegularBurtonMiller {
  cplx adjoint_double_layer;
  cplx hypersingular;
};
RegularBurtonMiller regular_burton_miller_integrals(const Discretization& disc, double k,
                                                    std::size_t element, const Vec3& x,
                                                    const Vec3& n_x);

}  // namespace fmbem
