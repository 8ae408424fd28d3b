#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "fmbem/bem/discretization.hpp"
#include "fmbem/bem/near_field.hpp"
#include "fmbem/fmm/fmm.hpp"

namespace fmbem::field {

// Where a field point lies with respect to the closed surface (as meshed: the polyhedron).
enum class PointLocation : std::uint8_t {
  exterior = 0,  // in the propagation domain: the representation formula gives the field
  surface = 1,   // within surface_tolerance of an element: the field is the surface value
  interior = 2,  // inside the body (or an image of it, or beyond a reflecting plane: not in the
                 // fluid): no field (NaN), flagged
};

struct FieldOptions {
  // The close-pair criterion and angular quadrature of the operator's near-field correction:
  // element j is close to x when |x - c_j| < near_factor R_j (R_j its centroid-to-corner radius).
  NearFieldOptions near;
  // The operator's FMM options (order or tolerance, leaf size, device). The field's FMM raises p
  // where the field points widen the octree beyond the low-frequency range of p.
  fmm::FmmOptions fmm;
  // false: the direct O(N M) sum instead of the FMM (the -bem_operator direct reference).
  bool use_fmm = true;
  // A point closer to an element than this fraction of the element's radius R_j lies on the
  // surface.
  double surface_tolerance = 1e-6;
};

// Everything about the field points that does not depend on k, built once for a frequency
// sweep: which points lie outside, on or inside the surface, and the close elements of each
// exterior point.
//
// Inside or outside: by the double layer of a unit density at k = 0, W(x) = integral of
// dG_0/dn_y dS_y = -(solid angle of the surface seen from x) / (4 pi): -1 inside, 0 outside a
// closed surface with outward normals. W is summed by a Laplace FMM over the Gauss points, and the
// close elements' terms are replaced by their exact solid angles (Van Oosterom and Strackee), so
// W is exact up to the far elements' quadrature error (below 1e-2 at the near-factor distance)
// however close x is to the surface; a point is interior when W < -1/2. Points outside the
// surface's bounding box are exterior without any sum.
class FieldGeometry {
 public:
  // Throws fmbem::Error on non-finite points or bad options. The discretization must outlive it.
  FieldGeometry(const Discretization& disc, std::vector<Vec3> points, const FieldOptions& options);

  const Discretization& discretization() const { return *disc_; }
  const FieldOptions& options() const { return options_; }
  std::span<const Vec3> points() const { return points_; }
  std::span<const PointLocation> locations() const { return locations_; }
  // Indices (into points()) of the exterior points, ascending.
  std::span<const std::size_t> exterior() const { return exterior_; }
  // With image planes (Mesh::image_planes) the field at x sums the layers at each image of x,
  // times the image's sign: the exterior points' images are the slots, slot e * images() + g
  // the e-th exterior point's image g (without planes: slot e, the point itself).
  std::size_t images() const { return images_; }
  std::size_t slots() const { return exterior_.size() * images_; }
  Vec3 slot_point(std::size_t slot) const;
  // The close elements of a slot's point (ascending).
  std::span<const std::int32_t> close_elements(std::size_t slot) const {
    return std::span<const std::int32_t>(close_).subspan(
        close_start_[slot], close_start_[slot + 1] - close_start_[slot]);
  }
  std::size_t close_pairs() const { return close_.size(); }
  // For a surface point: the element it lies on (the nearest); -1 for the others. With image
  // planes the point may lie on an element's image: surface_sign is that image's sign.
  std::int32_t surface_element(std::size_t point) const { return surface_element_[point]; }
  double surface_sign(std::size_t point) const {
    return surface_sign_.empty() ? 1.0 : surface_sign_[point];
  }
  std::size_t count(PointLocation location) const;
  double seconds() const { return seconds_; }

 private:
  const Discretization* disc_;
  FieldOptions options_;
  std::vector<Vec3> points_;
  std::vector<PointLocation> locations_;
  std::vector<std::size_t> exterior_;
  std::vector<std::size_t> close_start_;
  std::vector<std::int32_t> close_;
  std::vector<std::int32_t> surface_element_;
  std::vector<double> surface_sign_;
  std::size_t images_ = 1;
  double seconds_ = 0.0;
};

// The field at the points for one k:
//   exterior  u_s(x) = D[u](x) - S[q](x)  (u, q the total field's surface traces, outward normals:
//                                          the representation formula), u = u_s + u_inc;
//   surface   u = u_j of the element the point lies on, u_s = u - u_inc;
//   interior  NaN (flagged by FieldGeometry::locations).
// The regular Gauss-rule sum over all elements is the FMM's (targets: the exterior points,
// sources: the Gauss points, the tree split on the collocation and the field points, O(N + M));
// the close elements of each point get the accurate integrals instead (panel_integrals minus the
// regular rule, as the operator's near-field correction does), so the field is as accurate next
// to the surface as away from it. With the FMM on the GPU (FmmOptions::device) its apply runs
// there; the close-element terms run on the CPU. The low-frequency FMM needs p above about
// sqrt(3) k w on its coarsest M2L level: where the field points widen the octree, p is raised (up
// to 24), and points farther out are summed directly (statistics().note says so).
// Points farther than kFarWidths widths of the body (max norm, from its box's centre c) are
// summed directly in the far-field form: with X = x - c, R = |X|, rho_j = y_j - c and
// r_j - R = (|rho_j|^2 - 2 X . rho_j) / (r_j + R) (no cancellation),
//   u_s(x) = e^{ikR} / (4 pi R) sum_j e^{ik (r_j - R)} (R / r_j) [charge_j + dipole_j (1/r_j - ik)
//            (x - y_j) . n_j / r_j],
// a sum of terms of order one: the phases between the elements keep their digits however far x
// is (the plain sum's k r_j = 2e18 at r = 1e18 rounds to a multiple of 256), and nothing under-
// or overflows up to field::kLargestFieldCoordinate (the plain sum's 1/r^3 underflows beyond
// r = 1e102). Only e^{ikR} carries the rounding of R, as the point's own coordinates do. Within
// kFarWidths the plain sum loses about k r eps of phase: 2e-12 at k w = 10.
inline constexpr double kFarWidths = 1e3;

struct FieldValues {
  std::vector<cplx> scattered, total;
  // With gradients: grad u_s at each point, x, y, z (3 per point); NaN at points inside the
  // body and on the surface (piecewise-constant surface values have no tangential gradient).
  std::vector<cplx> scattered_gradient;
};

struct FieldStatistics {
  std::string method;  // "fmm, p = 11" or "direct sum"
  std::string device;  // where the FMM runs: "cpu", "gpu"
  std::string note;    // why p was raised or the direct sum used, or empty
  double setup_seconds = 0.0, fmm_seconds = 0.0, near_seconds = 0.0;
};

// With `gradients`, evaluate() also gives grad u_s = grad D[u] - grad S[q] at the exterior
// points: the same sums differentiated at the target (the FMM's L2P and near field, its
// points given three times with the unit axes as target normals; the direct and far-field forms
// differentiated term by term), and the close elements' accurate gradients (panel_gradients)
// in place of the regular rule's (regular_burton_miller_integrals along each axis).
class FieldEvaluator {
 public:
  FieldEvaluator(const FieldGeometry& geometry, double k, bool gradients = false);
  ~FieldEvaluator();
  FieldEvaluator(const FieldEvaluator&) = delete;
  FieldEvaluator& operator=(const FieldEvaluator&) = delete;

  // u and q: one value per element (either may be empty: zero); incident: one value per point
  // (empty: none, as for radiation, where the field is u_s). Throws fmbem::Error on wrong sizes.
  FieldValues evaluate(std::span<const cplx> u, std::span<const cplx> q,
                       std::span<const cplx> incident) const;
  const FieldStatistics& statistics() const { return statistics_; }

 private:
  const FieldGeometry* geometry_;
  double k_;
  std::unique_ptr<fmm::Fmm> fmm_;  // null: the direct sum alone
  // With gradients: the FMM of fmm_'s targets each three times (target normals x, y, z; the
  // potential and its derivative apart), on the same tree.
  std::unique_ptr<fmm::Fmm> gradient_fmm_;
  bool gradients_ = false;
  // grad u_s at every point (FieldValues::scattered_gradient) from the point strengths.
  std::vector<cplx> gradient(std::span<const cplx> u, std::span<const cplx> q,
                             std::span<const cplx> charges, std::span<const cplx> dipoles) const;
  // Slots (FieldGeometry::slots): the FMM's targets, and those summed directly (beyond the
  // FMM's low-frequency range, or all without the FMM).
  std::vector<std::size_t> fmm_targets_, direct_;
  std::vector<std::size_t> far_;  // beyond kFarWidths: the far-field form
  Vec3 center_;                   // of the Gauss points' box
  mutable FieldStatistics statistics_;
};

}  // namespace fmbem::field
