#include "fmbem/bem/hypersingular_integrals.hpp"

#include "host_device/hypersingular_integrals.hpp"
#include "host_device/regular_integrals.hpp"

// Derivation (details and the jump relations in docs/burton-miller.md). Let S(x), D(x) be the
// single and double layer of the flat triangle T (unit normal n, edges e counter-clockwise about
// n, outward in-plane edge normal m_e = s_e x n, s_e the unit edge tangent), h = (x - a) . n,
// p = x - h n, d_e = (y - p) . m_e for y on edge e (> 0 when p is on T's side of the edge).
// For x off T, S is smooth and satisfies (Delta + k^2) S = 0.
//  * grad S: the normal part is dS/dh = -D; the tangential part is -integral over T of the
//    tangential grad_y G, by the divergence theorem in T's plane -sum_e m_e E0_e with
//    E0_e = integral over e of G dl. So grad S = -D n - sum_e m_e E0_e.
//  * grad D = -grad (dS/dh): the normal part is -d^2S/dh^2 = k^2 S + Delta_t S, and
//    Delta_t S = div_t(-sum_e m_e E0_e) = sum_e d_e E1_e with E1_e = integral over e of
//    G'(R)/R dl; the tangential part is d/dh (sum_e m_e E0_e) = h sum_e m_e E1_e. So
//    grad D = n (k^2 S + sum_e d_e E1_e) + h sum_e m_e E1_e.
// Both are continuous up to T's interior from either side except the -D n term, whose jump is
// D's. At x in T's plane (the self term) the values are the principal value of D' (0, as D = 0
// there) and the limit of N, which is its Hadamard finite part: no surface integral is
// (near-)singular any more, only the edge integrals are when x nears an edge. For Laplace the
// self term is N = -(1/4 pi) sum_e (1/d_e) [t/R] over the edge, e.g. -9/(2 pi s) at the
// centroid of an equilateral triangle of side s. This is Maue's integration by parts (Maue
// 1949) for a constant density on a flat element; the same reduction to edge line integrals of
// the regularised piecewise-constant collocation is used e.g. in K. Yoshida's thesis (Kyoto,
// 2001, ch. 3.5, "Discretising the regularised integral equation ... with piecewise constant
// shape functions": static part of the line integrals analytic, the rest by Gauss quadrature).
namespace fmbem {

HypersingularIntegrals hypersingular_integrals(double k, const Vec3& a, const Vec3& b,
                                               const Vec3& c, const Vec3& x, const Vec3& n_x,
                                               const GaussLegendre& angular) {
  return host_device::hypersingular_integrals<cplx>(k, a, b, c, x, n_x, angular.view());
}

PanelGradients panel_gradients(double k, const Vec3& a, const Vec3& b, const Vec3& c, const Vec3& x,
                               const GaussLegendre& angular) {
  const host_device::Gradients<cplx> g =
      host_device::gradients<cplx>(k, a, b, c, x, angular.view());
  return {{{g.grad_s_re.x, g.grad_s_im.x},
           {g.grad_s_re.y, g.grad_s_im.y},
           {g.grad_s_re.z, g.grad_s_im.z}},
          {{g.grad_d_re.x, g.grad_d_im.x},
           {g.grad_d_re.y, g.grad_d_im.y},
           {g.grad_d_re.z, g.grad_d_im.z}}};
}

cplx adjoint_double_layer(double k, const Vec3& a, const Vec3& b, const Vec3& c, const Vec3& x,
                          const Vec3& n_x, const GaussLegendre& angular) {
  return hypersingular_integrals(k, a, b, c, x, n_x, angular).adjoint_double_layer;
}

cplx hypersingular(double k, const Vec3& a, const Vec3& b, const Vec3& c, const Vec3& x,
                   const Vec3& n_x, const GaussLegendre& angular) {
  return hypersingular_integrals(k, a, b, c, x, n_x, angular).hypersingular;
}

RegularBurtonMiller regular_burton_miller_integrals(const Discretization& disc, double k,
                                                    std::size_t element, const Vec3& x,
                                                    const Vec3& n_x) {
  const host_device::RegularSums<cplx> sum =
      host_device::regular_sums<cplx, host_device::kNormalDerivatives>(
          k, host_device::regular_rule(disc, element), x, n_x);
  return {sum.adjoint_double_layer, sum.hypersingular};
}

}  // namespace fmbem
