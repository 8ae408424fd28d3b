#pragma once
// The regular Gauss rule's sums over one element (regular_integrals,
// regular_burton_miller_integrals, regular_monomial_moments) written once for the CPU and the GPU
// (bem/cuda): an FMBEM_HOST_DEVICE template over the complex type, as panel_integrals.hpp here.
// Not a public header.
#include "fmbem/bem/density_reconstruction.hpp"
#include "fmbem/bem/discretization.hpp"
#include "fmbem/bem/moment_integrals.hpp"
#include "fmbem/core/host_device.hpp"
#include "fmbem/core/vec3.hpp"
#include "fmbem/kernel/kernel.hpp"

namespace fmbem::host_device {

// Which sums regular_sums forms, combined with |: one pass over the points serves the callers
// that need several, as the kernels then are evaluated once.
enum RegularTerms : unsigned {
  kLayers = 1,             // S and D
  kNormalDerivatives = 2,  // D' and N
  kMoments = 4,            // the monomials' D and N
  // The screened kernel exp(-kappa r) / (4 pi r), k holding kappa; with kLayers alone.
  kScreened = 8,
};

// One element's regular rule: its points and weights, its normal, and the radius about the
// target within which points are skipped (coincident with x).
struct RegularRule {
  const Vec3* points = nullptr;
  const double* weights = nullptr;
  int size = 0;
  Vec3 normal;
  double coincident = 0.0;
};

// The frame of the element's monomials (frame_monomials), read with kMoments only.
struct MonomialFrame {
  Vec3 origin, axis1, axis2;
};

template <class C>
struct RegularSums {
  C single_layer{}, double_layer{}, adjoint_double_layer{}, hypersingular{};
  BasicMonomialMoments<C> moments{};
};

// The sums of kSums over `rule` for the target x with normal n_x (read by kNormalDerivatives and
// kMoments). Each sum is added point by point in the rule's order, with the same products
// whichever others are formed alongside, so every combination gives each sum the same value.
template <class C, unsigned kSums>
FMBEM_HOST_DEVICE RegularSums<C> regular_sums(double k, const RegularRule& rule, const Vec3& x,
                                              const Vec3& n_x, const MonomialFrame& frame = {}) {
  constexpr bool layers = kSums & kLayers, derivatives = kSums & kNormalDerivatives,
                 moments = kSums & kMoments, screened = kSums & kScreened;
  static_assert(!screened || !(derivatives || moments), "the screened kernel: S and D alone");
  RegularSums<C> sum{};
  for (int q = 0; q < rule.size; ++q) {
    const Vec3 y = rule.points[q];
    if (norm(y - x) <= rule.coincident) continue;
    const double w = rule.weights[q];
    C dbl{}, hyper{};
    // The Helmholtz kernels from one phase (kernel_pair); the screened ones each alone.
    const KernelPair<C> pair = screened ? KernelPair<C>{} : kernel_pair<C>(k, x, y);
    if constexpr (screened)
      dbl = w * screened_green_normal_derivative<C>(k, x, y, rule.normal);
    else if constexpr (layers || moments)
      dbl = w * green_normal_derivative_of(pair, rule.normal);
    if constexpr (derivatives || moments)
      hyper = w * green_double_normal_derivative_of(pair, n_x, rule.normal);
    if constexpr (screened) {
      sum.single_layer += w * screened_green<C>(k, norm(y - x));
      sum.double_layer += dbl;
    } else if constexpr (layers) {
      sum.single_layer += w * green_of(pair);
      sum.double_layer += dbl;
    }
    if constexpr (derivatives) {
      sum.adjoint_double_layer += w * green_target_normal_derivative_of(pair, n_x);
      sum.hypersingular += hyper;
    }
    if constexpr (moments) {
      double monomial[DensityReconstruction::kTerms];
      frame_monomials(y, frame.origin, frame.axis1, frame.axis2, monomial);
      FMBEM_UNROLL
      for (int t = 0; t < DensityReconstruction::kTerms; ++t) {
        sum.moments.double_layer[t] += dbl * monomial[t];
        sum.moments.hypersingular[t] += hyper * monomial[t];
      }
    }
  }
  return sum;
}

// The host's rule of `element` (the device builds its own from the uploaded buffers).
inline RegularRule regular_rule(const Discretization& disc, std::size_t element) {
  const std::size_t m = disc.points_per_element();
  return {disc.quadrature_points().data() + element * m,
          disc.quadrature_weights().data() + element * m, int(m), disc.mesh().normals()[element],
          disc.coincidence_radius()};
}

// The host's frame of `element`.
inline MonomialFrame monomial_frame(const DensityReconstruction& reconstruction,
                                    std::size_t element) {
  return {reconstruction.origin(element), reconstruction.axis(element, 0),
          reconstruction.axis(element, 1)};
}

}  // namespace fmbem::host_device
