#pragma once
#include <cstddef>
#include <cstdint>
#include <numbers>
#include <span>
#include <vector>

#include "fmbem/core/host_device.hpp"
#include "fmbem/core/uninitialized_vector.hpp"
#include "fmbem/core/vec3.hpp"
#include "fmbem/mesh/feature_edges.hpp"
#include "fmbem/mesh/mesh.hpp"

namespace fmbem {

// The monomials xi, eta, xi^2, xi eta, eta^2 of y in the frame (origin, axis1, axis2): the CPU's
// and the GPU's reading of a fit.
FMBEM_HOST_DEVICE inline void frame_monomials(const Vec3& y, const Vec3& origin, const Vec3& axis1,
                                              const Vec3& axis2, double out[5]) {
  const Vec3 d = y - origin;
  const double xi = dot(d, axis1), eta = dot(d, axis2);
  out[0] = xi;
  out[1] = eta;
  out[2] = xi * xi;
  out[3] = xi * eta;
  out[4] = eta * eta;
}

// How the regular rule and the near field read a density given by one value per element
// (collocated at the centroid).
enum class DensityModel {
  constant,   // u_e on the whole element
  quadratic,  // u_e plus the quadratic of DensityReconstruction
};

// The quadratic reconstruction of a piecewise-constant density: on element e the
// density is read as
//   u_e + sum over m of c_{e,m} monomial_m(y),   monomials xi, eta, xi^2, xi eta, eta^2,
// (xi, eta) the coordinates of y in e's plane about its centroid along axis(e, 0), axis(e, 1), and
// c = R u fitted by weighted least squares (weights 1 / distance^2) to the values of e's vertex
// neighbours (the elements sharing a corner with e), placed at their centroids' offsets turned
// into e's plane with their lengths kept (the unfolding, which keeps neighbours across a sharp
// edge at their distance). It passes through u_e at the centroid and is exact for densities
// quadratic in those coordinates. Why: the collocated hypersingular operator N meets the
// density's variation inside the nearest elements at O(1) (docs/burton-miller.md); with the
// quadratic read the error falls like h^2 (bench/results/hypersingular_consistency.md).
// Where the neighbours do not fix a quadratic (fewer than 5, or degenerate), the fit is linear,
// and where they do not fix a gradient, constant.
// Elements with a corner on a feature edge (angle above feature_angle, radians; see
// mesh/feature_edges.hpp) get a linear fit to the neighbours on their own side of the edge
// (normals within feature_angle of theirs; the others' coefficients are 0): unfolding across
// the edge means nothing (the density has a kink or a singularity there). Measured on the cube
// (bench/results/bm_sharp_edges.md): this one-sided linear read gives bm cbie's error and
// better rates; the constant read leaves an O(h) error, one-sided quadratics are unstable.
// With image planes (Mesh::image_planes) a corner in a plane has the mirror images of the
// elements at it as neighbours too, each valued its element's value times the image's sign
// (ImagePlanes::sign): the fit is the whole body's, its coefficients merged onto the real
// elements (an element at the plane reads its own mirror image).
class DensityReconstruction {
 public:
  static constexpr int kTerms = 5;

  explicit DensityReconstruction(const Mesh& mesh,
                                 double feature_angle = kDefaultFeatureAngleDegrees *
                                                        std::numbers::pi / 180.0);
  // The fits of a part of the mesh alone (a rank of the distributed FMM): those of the elements
  // flagged in `seeds` (one flag per element) and of every element within `rings` vertex
  // neighbourhoods of them; the others have an empty stencil (fitted() false), and reading
  // them is the caller's error. The fits formed equal the whole mesh's bit for bit.
  DensityReconstruction(const Mesh& mesh, double feature_angle, std::span<const std::uint8_t> seeds,
                        int rings);
  // Whether element e's fit was formed (every element's, unless built for a part).
  bool fitted(std::size_t e) const { return stencil_start_[e + 1] > stencil_start_[e]; }

  std::size_t size() const { return origin_.size(); }
  // The monomials of element e at y (a point of e's plane).
  void monomials(std::size_t e, const Vec3& y, double out[kTerms]) const {
    frame_monomials(y, origin_[e], axes_[2 * e], axes_[2 * e + 1], out);
  }
  const Vec3& origin(std::size_t e) const { return origin_[e]; }
  const Vec3& axis(std::size_t e, int a) const { return axes_[2 * e + std::size_t(a)]; }

  // R in CSR form: row e * kTerms + m holds c_{e,m}'s coefficients of the element values;
  // element e's rows share the columns stencil(e) (its vertex neighbours and e, ascending).
  std::span<const std::int32_t> stencil(std::size_t e) const {
    return {columns_.data() + stencil_start_[e],
            std::size_t(stencil_start_[e + 1] - stencil_start_[e])};
  }
  // The coefficients of c_{e,m} at the columns stencil(e).
  std::span<const double> coefficients(std::size_t e, int m) const {
    const std::size_t length = std::size_t(stencil_start_[e + 1] - stencil_start_[e]);
    return {values_.data() + std::size_t(stencil_start_[e]) * kTerms + std::size_t(m) * length,
            length};
  }
  // The stencils of all elements in CSR form: stencil(e) is
  // stencil_columns()[stencil_starts()[e] .. stencil_starts()[e + 1]).
  std::span<const std::int64_t> stencil_starts() const { return stencil_start_; }
  std::span<const std::int32_t> stencil_columns() const { return columns_; }
  // All coefficients: element e's kTerms rows start at stencil_starts()[e] * kTerms.
  std::span<const double> stencil_values() const { return values_; }
  // c_{e,m}'s coefficient of u_j (0 where j is not in stencil(e)).
  double coefficient(std::size_t e, int m, std::size_t j) const;
  // Elements whose fit fell back to linear or constant (diagnostics, tests).
  std::size_t linear_fits() const { return linear_fits_; }
  std::size_t constant_fits() const { return constant_fits_; }
  // Elements with a corner on a feature edge, fitted one-sided (not in linear_fits or
  // constant_fits).
  std::size_t feature_elements() const { return feature_elements_; }
  std::size_t memory_bytes() const;

 private:
  std::vector<Vec3> origin_, axes_;
  std::vector<std::int64_t> stencil_start_;
  std::vector<std::int32_t> columns_;
  // Per element: kTerms rows of its stencil's length, each element's written (zeroed first) by
  // the thread that fits it.
  UninitializedVector<double> values_;
  std::size_t linear_fits_ = 0, constant_fits_ = 0, feature_elements_ = 0;
};

}  // namespace fmbem
