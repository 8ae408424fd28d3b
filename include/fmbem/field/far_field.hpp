#pragma once
#include <complex>
#include <limits>
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
// With image planes (the mesh's) the images' patterns are added (far_field_images), and a
// direction beyond a reflecting plane, out of the fluid, is NaN.
std::vector<cplx> far_field_amplitude(const Discretization& disc, double k, std::span<const cplx> u,
                                      std::span<const cplx> q, std::span<const Vec3> directions);

// The far-field amplitude along d of a field summed over image planes' images, u_h(x) =
// sum_g w_g u(R_g x), from u's amplitude F (pattern(g, L_g d)): with R_g x = L_g x + t_g,
//   F_h(d) = sum_g w_g e^{-ik d . t_g} F(L_g d),
// w_g the images' signs (the layers' images) or, with `data`, ImagePlanes::data_weight (a
// field given by the user, symmetrized). NaN where d points out of the fluid (beyond a
// reflecting plane); F itself without planes.
template <class Pattern>
cplx far_field_images(const ImagePlanes& planes, double k, const Vec3& d, bool data,
                      Pattern&& pattern) {
  if (planes.empty()) return pattern(std::size_t(0), d);
  if (!planes.in_fluid(planes.origin() + d))
    return {std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::quiet_NaN()};
  cplx sum{};
  for (std::size_t g = 0; g < planes.images(); ++g) {
    const double weight = data ? planes.data_weight(g) : planes.sign(g);
    sum += weight * std::polar(1.0, -k * dot(d, planes.reflect(g, Vec3{}))) *
           pattern(g, planes.reflect_direction(g, d));
  }
  return sum;
}

}  // namespace fmbem::field
