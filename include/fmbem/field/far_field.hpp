#pragma once
#include <span>
#include <string>
#include <vector>

#include "fmbem/bem/discretization.hpp"

namespace fmbem::field {

// Directions of the far-field pattern, unit vectors, with their angles in degrees.
struct FarFieldDirections {
  enum class Kind { circle, sphere } kind = Kind::circle;
  std::vector<Vec3> directions;
  // circle: angle[i] in [0, 360), the angle from +z towards +x; sphere: the polar angle theta
  // from +z and the azimuth phi from +x towards +y (in (-180, 180]).
  std::vector<double> angle, theta, phi;
  std::string description() const;
};

// N directions on the great circle of the x-z plane, d = (sin t, 0, cos t), t = 360 i / N
// degrees: t = 0 is +z (the default plane wave's direction: forward scattering), t = 180
// backscattering. N >= 1.
FarFieldDirections great_circle(std::size_t n);
// N directions of the Fibonacci sphere: z_i = 1 - (2i + 1) / N, azimuth i times the golden
// angle, nearly uniform (each direction holds 4 pi / N of the sphere). N >= 1.
FarFieldDirections fibonacci_sphere(std::size_t n);

// The far-field amplitude F(d) of the field u_s(x) = D[u](x) - S[q](x) radiated by the surface
// traces u and q (one value per element; either may be empty: zero): u_s ~ F(d) e^{ik|x|} / |x|
// along d as |x| grows, with (G ~ e^{ik|x|} / (4 pi |x|) e^{-ik d.y})
//   F(d) = (1 / 4 pi) integral of e^{-ik d.y} (-ik (d . n_y) u(y) - q(y)) dS_y,
// by the discretization's Gauss rule (the integrand is smooth): O(N M) for M directions,
// OpenMP over the directions. k > 0.
std::vector<cplx> far_field_amplitude(const Discretization& disc, double k, std::span<const cplx> u,
                                      std::span<const cplx> q, std::span<const Vec3> directions);

}  // namespace fmbem::field
