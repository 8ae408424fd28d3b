#pragma once
// Incident fields for the reference solutions and for the BEM right-hand side.
// Conventions (DESIGN.md, "Numerical conventions"): time factor exp(-i w t), kernel
// G(r) = exp(ikr)/(4 pi r) (k = 0: Laplace, 1/(4 pi r)), plane wave exp(i k d.x) with d normalised.
// Every function throws fmbem::Error for k < 0 or non-finite k.
#include "fmbem/core/vec3.hpp"

namespace fmbem::exact {

struct Incident {
  enum class Kind { PlaneWave, PointSource } kind = Kind::PlaneWave;
  Vec3 direction{0, 0, 1};  // plane-wave direction, any non-zero length (normalised internally)
  Vec3 source{};            // point-source position
  // The wave's complex amplitude (Pa for a plane wave; a point source is amplitude times G):
  // every field below, incident and scattered, is linear in it.
  cplx amplitude{1.0};

  static Incident plane_wave(const Vec3& direction, cplx amplitude = 1.0) {
    return {Kind::PlaneWave, direction, Vec3{}, amplitude};
  }
  static Incident point_source(const Vec3& source, cplx amplitude = 1.0) {
    return {Kind::PointSource, Vec3{0, 0, 1}, source, amplitude};
  }
};

// u_inc(x): A exp(i k dhat.x) or A G(|x - source|), A the amplitude. Error for a zero direction or
// x == source.
cplx incident_field(double k, const Incident& inc, const Vec3& x);
// grad u_inc(x) . n, with n used as given (pass a unit normal to get du/dn).
cplx incident_normal_derivative(double k, const Incident& inc, const Vec3& x, const Vec3& n);

// G(|x - source|). Error when x == source.
cplx monopole(double k, const Vec3& source, const Vec3& x);
// grad_x G(|x - source|) . n, with n used as given.
cplx monopole_normal_derivative(double k, const Vec3& source, const Vec3& x, const Vec3& n);

}  // namespace fmbem::exact
