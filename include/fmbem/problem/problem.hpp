#pragma once
#include <mpi.h>

#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "fmbem/bem/boundary_operator.hpp"
#include "fmbem/bem/layer_potentials.hpp"
#include "fmbem/bem/regularised_operator.hpp"
#include "fmbem/exact/incident.hpp"
#include "fmbem/mesh/mesh.hpp"
#include "fmbem/problem/element_conditions.hpp"

namespace fmbem {

// Surface: conditions on the mesh's surface groups (velocity, pressure, admittance; physical
// units), with an optional incident wave; the total field's boundary data per element.
enum class ProblemKind { Scattering, Radiation, Surface };
enum class BoundaryCondition { Neumann, Dirichlet };  // rigid / soft for scattering
// Conventional: the boundary integral equation (CBIE) alone, which fails at the interior
// eigenfrequencies of the body; BurtonMiller: CBIE + alpha times its normal derivative
// (docs/burton-miller.md), unique at every k > 0. Regularised: where u is unknown, CBIE +
// beta S~ (its normal derivative), S~ a single layer (RegularisedOperator): as unique, and a
// second-kind equation whose iterations stay flat under refinement; where q is unknown
// Burton-Miller's rows (already second kind).
enum class Formulation { Conventional, BurtonMiller, Regularised };
const char *formulation_name(Formulation formulation);  // "cbie" / "bm" / "rbm"

struct ProblemSpec {
  ProblemKind kind = ProblemKind::Scattering;
  BoundaryCondition bc = BoundaryCondition::Neumann;
  double k = 1.0;
  exact::Incident incident;  // scattering only
  Vec3 source;               // radiation: the monopole inside the body
  Formulation formulation = Formulation::Conventional;
  // Burton-Miller's coupling alpha; 0: the default i / k (with exp(-i omega t), the sign whose
  // eigenvalues cluster about 1: docs/burton-miller.md). Must have a non-zero imaginary part.
  cplx bm_alpha = 0.0;
  // The regularised formulation's S~: the single layer of exp(-kappa r) / (4 pi r) with
  // kappa = this times k (0: the Laplace single layer). k/2 keeps the iterations flat in k
  // (bench/bm_spectral_model.py, bench/results/bm_regularised.md).
  double regulariser_kappa_factor = 0.5;
  // Surface: the conditions' classes and each element's class (of the mesh the spec is used
  // with: the whole one for surface_facts, a rank's part for its Problem), and whether
  // `incident` is present (a vibrating body alone has none).
  std::shared_ptr<const SurfaceData> surface;
  std::shared_ptr<const std::vector<std::int32_t>> element_class;
  bool incident_wave = false;
};

// The default Burton-Miller coupling i / k.
cplx default_bm_alpha(double k);
// The regularised formulation's beta: i (the unit sphere's spectral model and the icospheres'
// measurements, bench/results/bm_regularised.md, find it best among |beta| = 1).
inline constexpr cplx regulariser_beta{0.0, 1.0};

// Centre and radius when all vertices lie on one sphere (relative 1e-6).
struct SphereFit {
  Vec3 center;
  double radius;
};

// Distance from x to the surface and the longest edge of the element nearest to
// it.
struct SurfaceDistance {
  double distance;
  double element_size;
};

// What a problem needs of the whole surface: whether it is a sphere (the exact solution), and
// for the spec's point source (scattering) or monopole (radiation) its distance to the surface
// and the surface's winding number about it. A rank holding a part of the mesh gets
// them from rank 0, which holds the whole; plain data, sent as bytes.
struct SurfaceFacts {
  bool is_sphere = false;
  SphereFit sphere{};
  bool has_source = false;
  SurfaceDistance source_distance{};
  double source_winding = 0.0;
  // Surface conditions on a sphere with an exact solution: every element of one class
  // (uniform_class), or one class of velocity elements forming a spherical cap about cap_axis of
  // half-angle cap_half_angle (its edge on the cap's circle), the rest rigid (cap_class).
  std::int32_t uniform_class = -1, cap_class = -1;
  Vec3 cap_axis{};
  double cap_half_angle = 0.0;
};
// Of the whole mesh `mesh` for `spec` (its source, if any; not k). Throws for a mesh part.
SurfaceFacts surface_facts(const Mesh &mesh, const ProblemSpec &spec);
// Of the whole mesh formed by the ranks of `comm` from their slabs (no rank holds the
// whole): the sphere fit from each vertex once (slab_vertex_block), the source's nearest element
// (the same as the whole mesh's, bit for bit) and winding number. The fit's and the winding
// number's sums are taken over each rank's share, then over the ranks in rank order: equal to
// the whole mesh's to rounding, the same bits on every rank. Collective.
SurfaceFacts surface_facts(MPI_Comm comm, const MeshSlab &slab, const ProblemSpec &spec);

// The boundary integral equation of a problem, with n pointing out of the
// body and u = u_inc + D u - S q in the exterior:
//   Neumann (rigid, or radiation with q given):  (1/2) u - D u = f
//   Dirichlet (soft, or radiation with u given):            S q = f
// Scattering: f = u_inc. Radiation by a monopole at s inside the body:
//   Neumann f = -S q_s, Dirichlet f = D u_s - (1/2) u_s (u_s, q_s its data).
// Burton-Miller (coupling alpha, layers with the same coupling: LayerPotentials):
//   Neumann    (1/2) u - (D + alpha N) u = f,   Dirichlet (S + alpha D') q + (alpha/2) q = f,
// scattering f = u_inc + alpha du_inc/dn; radiation Neumann f = -(S + alpha D') q_s -
// (alpha/2) q_s, Dirichlet f = (D + alpha N) u_s - (1/2) u_s.
// Surface conditions (each element's ClassData): every row is the whole equation
//   (1/2) u + (alpha/2) q - (D + alpha N) u + (S + alpha D') q = u_inc + alpha du_inc/dn
// with u = a x + u0, q = b x + q0 per element, x the unknown: a = 1, b = robin, q0 = value where
// q is given by u (velocity, admittance, rigid), a = 0, b = 1, u0 = value where the pressure is
// given. So row i's identity is (a_i + alpha b_i) / 2, column j's layers -a_j and b_j, and the
// known parts move to f.
class Problem {
 public:
  // Validates the spec against the mesh (k >= 0 and finite, point source
  // outside the body, radiation source inside it, neither on the surface);
  // throws fmbem::Error. `exact_rows`: the elements whose exact values are evaluated (an MPI
  // rank's rows); all when not given. `whole`: the whole surface's facts for this spec
  // (surface_facts), needed when `mesh` is a part (Mesh::part_of); formed from `mesh` when not
  // given.
  Problem(const Mesh &mesh, const ProblemSpec &spec,
          std::optional<RowRange> exact_rows = std::nullopt, const SurfaceFacts *whole = nullptr);

  const ProblemSpec &spec() const { return spec_; }
  // Burton-Miller's alpha (the spec's or the default), 0 for the conventional equation; the
  // regularised formulation's alpha on the rows where q is unknown.
  cplx coupling() const { return coupling_; }
  // What the layer potentials must be built with: coupling(), or for the regularised
  // formulation the normal derivatives apart.
  LayerCoupling layer_coupling() const;
  // The operator's coefficients (not for the regularised formulation: regularised_coefficients).
  OperatorCoefficients coefficients() const;
  // f for the rows of `layers` (radiation applies the layer operators); layers.coupling() must
  // be coupling() (not for the regularised formulation: right_hand_side_parts).
  std::vector<cplx> right_hand_side(const LayerPotentials &layers) const;
  // The regularised formulation's coefficients (RegularisedOperator): C's identity and the
  // column scales, H's identity, the rows where u is unknown, alpha and beta.
  RegularisedCoefficients regularised_coefficients() const;
  // The right-hand sides of C x = f_C and H x = f_H for the rows of `layers`, which give their
  // normal derivatives apart (layer_coupling() of the regularised formulation).
  struct RightHandSideParts {
    std::vector<cplx> value, derivative;
  };
  RightHandSideParts right_hand_side_parts(const LayerPotentials &layers) const;
  // Whether the operator or f applies the single layer (S + alpha D') to some density: where
  // Burton-Miller's curvature correction of D' matters.
  bool uses_single_layer() const;
  // What the solution is: "u" (Neumann), "q" (Dirichlet), or "unknown" (surface conditions: u where
  // the pressure is unknown, q where it is given).
  std::string unknown_name() const;
  // Surface conditions: each element's data at this k (of the problem's mesh); empty otherwise.
  const std::vector<ClassData> &class_data() const { return class_data_; }
  std::int32_t element_class(std::size_t element) const { return (*spec_.element_class)[element]; }
  std::string description() const;
  // "conventional equation (cbie)" or "Burton-Miller (bm), alpha = 0+0.125i".
  std::string formulation_description() const;

  // The exact surface solution at the collocation points of exact_rows() (value i for element
  // exact_rows().begin + i), where one exists: the rigid/soft sphere (Mie series, or its Laplace
  // analogue at k = 0) when the mesh is a sphere, the monopole for radiation on any closed
  // surface.
  const std::optional<std::vector<cplx>> &exact_solution() const { return exact_; }
  RowRange exact_rows() const { return exact_rows_; }
  const std::string &exact_name() const { return exact_name_; }
  // What the user should know but that does not stop the solve (a source
  // closer to the surface than the elements resolve).
  const std::vector<std::string> &warnings() const { return warnings_; }
  // Radiation: the monopole's u_s (derivative: q_s along `normal`) at x, with image planes its
  // images' too (ImagePlanes::data_weight): the data and the exact solution.
  cplx radiating_monopole(const Vec3 &x, const Vec3 &normal, bool derivative) const;
  // The mesh's image planes (Mesh::image_planes).
  const ImagePlanes &image_planes() const { return mesh_->image_planes(); }
  // The whole surface's facts the problem was formed with.
  const SurfaceFacts &facts() const { return facts_; }

 private:
  // u_inc and (with_derivative) du_inc/dn at the rows' collocation points; zero without an
  // incident wave.
  RightHandSideParts incident_at(RowRange rows, bool with_derivative) const;
  // The boundary data the problem knows, on the layers' columns (empty where none): u0 (the
  // radiating monopole's u_s with Dirichlet data, given pressures) and q0 (its q_s with Neumann
  // data, velocities).
  struct KnownData {
    std::vector<cplx> u0, q0;
  };
  KnownData known_data(const LayerPotentials &layers) const;
  // f (the layers' outputs, outputs() x rows) -= the layers' operators applied to the known data,
  // with their identities weighted as each output is (coupling: the layers').
  void subtract_known(const LayerPotentials &layers, const LayerCoupling &coupling, KnownData known,
                      std::span<cplx> f) const;
  // The identity's weights in element e's row: the value equation's u (1/2; 1 on an element flush
  // with a rigid plane, whose image is itself facing the other way: the two double layers' jumps
  // add up) and the normal-derivative equation's q (1/2; 0 there: the two single layers' jumps
  // cancel, as the plane's symmetry cancels N u and D' q).
  double value_jump(std::size_t e) const { return mesh_->flush(e) ? 1.0 : 0.5; }
  double derivative_jump(std::size_t e) const { return mesh_->flush(e) ? 0.0 : 0.5; }
  // Per-element coefficients: identity(e), and the same layer scales for every column.
  template <class Identity>
  OperatorCoefficients flush_coefficients(Identity identity, cplx double_layer,
                                          cplx single_layer) const;
  // Surface conditions: per element the identity (a + coupling b) / 2 and the layers' -a and b.
  std::shared_ptr<ElementCoefficients> element_coefficients(cplx coupling) const;
  // The exact solution of surface conditions where SurfaceFacts found one.
  void set_surface_exact_solution(const SurfaceFacts &facts);
  const Mesh *mesh_;
  ProblemSpec spec_;
  cplx coupling_ = 0.0;
  RowRange exact_rows_;
  std::optional<std::vector<cplx>> exact_;
  std::string exact_name_;
  std::vector<std::string> warnings_;
  std::vector<ClassData> class_data_;
  SurfaceFacts facts_;
};

std::optional<SphereFit> fit_sphere(const Mesh &mesh);

// "x,y,z" with six significant digits each: points in messages and source labels.
std::string format_point(const Vec3 &p);

// The point of triangle abc closest to x.
Vec3 closest_point_on_triangle(const Vec3 &x, const Vec3 &a, const Vec3 &b, const Vec3 &c);

SurfaceDistance distance_to_surface(const Mesh &mesh, const Vec3 &x);

// Winding number of the closed surface about x: 1 inside, 0 outside (the
// total solid angle of the triangles over 4 pi).
double winding_number(const Mesh &mesh, const Vec3 &x);

// Surface error of a solution against the exact one.
struct ErrorNorms {
  double max_abs;      // max_i |u_i - u_exact_i|
  double relative_l2;  // area-weighted L2 norm of the error over that of u_exact
};
// The error's parts over some of the elements, combined over all of them (the ranks' rows) by
// max and sums: sum_i a_i |u_i - u_exact_i|^2 and sum_i a_i |u_exact_i|^2.
struct ErrorSums {
  double max_abs = 0.0, error2 = 0.0, exact2 = 0.0;
};
// Over the elements `rows` (solution[i] and exact[i] belong to element rows.begin + i).
ErrorSums error_sums(const Mesh &mesh, RowRange rows, std::span<const cplx> solution,
                     std::span<const cplx> exact);
ErrorNorms error_norms(const ErrorSums &sums);

}  // namespace fmbem
