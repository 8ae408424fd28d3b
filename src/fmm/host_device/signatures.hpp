#pragma once
// The per-direction terms of the diagonal levels' signatures (high_frequency.hpp's conventions)
// that the CPU (high_frequency.cpp) and the GPU's diagonal levels (cuda/gpu_diagonal_levels.cu)
// both sum, written once over the side's complex type C. Not a public header.
#include <cmath>

#include "fmbem/core/host_device.hpp"
#include "fmbem/core/vec3.hpp"

namespace fmbem::fmm::host_device {

// One source's term of the outgoing signature in direction s: exp(-ik s.r) (q - ik d s.n),
// r the source minus the centre, ikd = i k d (zero without a dipole).
template <class C>
FMBEM_HOST_DEVICE C signature_term(double k, const Vec3& s, const Vec3& r, C q, C ikd,
                                   const Vec3& normal) {
  const double phase = -k * dot(s, r);
  return C(std::cos(phase), std::sin(phase)) * (q - ikd * dot(s, normal));
}

// One direction's term of a local signature's field at r (the target minus the centre):
// w exp(ik s.r) (1 + ikw s.n) L(s), ikw = i k times the normal derivative's weight; without
// target normals the factor is 1.
template <class C>
FMBEM_HOST_DEVICE C local_signature_term(double k, const Vec3& s, double weight, const Vec3& r,
                                         bool with_normal, C ikw, const Vec3& normal, C local) {
  const double phase = k * dot(s, r);
  const C factor = with_normal ? 1.0 + ikw * dot(s, normal) : C(1.0);
  return weight * C(std::cos(phase), std::sin(phase)) * factor * local;
}

}  // namespace fmbem::fmm::host_device
