#pragma once
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "fmbem/exact/sphere_field.hpp"
#include "fmbem/field/far_field.hpp"
#include "fmbem/field/field_evaluator.hpp"
#include "fmbem/problem/problem.hpp"

namespace fmbem::field {

// What a solved problem's solution means for the field: the total field's surface traces u and
// q, one value per element (empty where zero). Scattering: rigid u = the solution, q = 0; soft
// u = 0, q = the solution. Radiation by the monopole at s: Neumann u = the solution, q = its
// dG/dn at the centroids; Dirichlet u = G(x_e - s), q = the solution (the data the equation
// used). The field is then u_s = D u - S q outside (problem.hpp).
struct SurfaceTraces {
  std::vector<cplx> u, q;
};
// Surface conditions: u and q from each element's class data (element_class: the classes of
// `mesh`'s elements; empty: the problem's own, whose mesh `mesh` must then be).
SurfaceTraces surface_traces(const Problem& problem, const Mesh& mesh,
                             std::span<const cplx> solution,
                             std::span<const std::int32_t> element_class = {});

// The incident field at the points (scattering), NaN at a point source's own position; empty
// for radiation (the field is the radiated one alone).
std::vector<cplx> incident_field_at(const Problem& problem, std::span<const Vec3> points);

// grad u_inc at the points, x, y, z (3 per point); NaN at a point source's own position; empty
// where incident_field_at is.
std::vector<cplx> incident_gradient_at(const Problem& problem, std::span<const Vec3> points);

// An HRTF's reference (Mesh2HRTF's): the free-field pressure of a source as strong as the
// problem's placed at `center`. A vibrating surface: its volume velocity Q = sum of v_n A over
// the velocity elements (m^3/s; v_n into the fluid) as a point source,
//   p_ref(x) = -i omega rho Q e^{ikr} / (4 pi r),  r = |x - center|, omega = k c
// (exp(-i omega t); Williams, Fourier Acoustics, eq. 6.71); a radiating monopole: G(r), its own
// strength; an incident wave: its value at the centre, the same at every point.
struct ReferenceSource {
  enum class Kind { volume_velocity, monopole, incident } kind = Kind::incident;
  cplx volume_velocity{};   // Q (m^3/s), for volume_velocity
  Vec3 vibrating_center{};  // the area-weighted centroid of the vibrating elements (the ear)
  cplx incident_at_center{};
  std::string description;  // "point source at 0,0,0 of Q = 1.2e-05+0i m^3/s"
};
// The reference of `problem` (element_class: the classes of `mesh`'s elements; empty: the
// problem's own). Throws fmbem::Error where none applies (check_reference says which).
ReferenceSource reference_source(const Problem& problem, const Mesh& mesh,
                                 std::span<const std::int32_t> element_class, const Vec3& center);
std::vector<cplx> reference_pressure(const Problem& problem, const ReferenceSource& source,
                                     const Vec3& center, std::span<const Vec3> points);
// Before any work: throws fmbem::Error for a problem whose reference is not defined: Laplace
// (k = 0), a surface driven by a pressure (no volume velocity), or by a velocity and an incident
// wave together (two references; -bem_sources separate solves them apart).
void check_reference(const ProblemSpec& spec);

// The exact scattered (radiation: radiated) field where one exists: the Mie series for a
// sphere (the mesh's vertices on one sphere, fit_sphere), the monopole for radiation from any
// closed surface. Values at the points whose location is exterior, NaN at the others.
struct ExactField {
  std::string name;
  std::vector<cplx> values;
};
std::optional<ExactField> exact_scattered_field(const Problem& problem, const Mesh& mesh,
                                                std::span<const Vec3> points,
                                                std::span<const PointLocation> locations);
// The Mie series' scattered field at x (centre `center`, wavenumber k), in its far-field form
// where the series' own phase kr - ka loses more digits than that form's O(N^2 / kr) (kr beyond
// N / sqrt(2 eps), N the series' terms): within N 1.5e-8 relative at every distance.
cplx sphere_scattered_at(const exact::SphereScatteredField& field, double k, const Vec3& center,
                         const Vec3& x);

// The exact far-field amplitude where one exists (k > 0): the sphere's, or the monopole's
// e^{-ik d.s} / (4 pi).
std::optional<std::vector<cplx>> exact_far_field(const Problem& problem, const Mesh& mesh,
                                                 std::span<const Vec3> directions);

// ||a - b|| / ||b|| and max |a - b| over the entries where b is not NaN (NaN relative when
// ||b|| = 0).
struct FieldError {
  double relative_l2, max_abs;
  std::size_t count;
};
FieldError field_error(std::span<const cplx> values, std::span<const cplx> exact);

}  // namespace fmbem::field
