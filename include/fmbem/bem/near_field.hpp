#pragma once
#include <cstdint>
#include <memory>
#include <mutex>
#include <numbers>
#include <span>
#include <vector>

#include "fmbem/bem/discretization.hpp"
#include "fmbem/bem/layer_potentials.hpp"
#include "fmbem/core/uninitialized_vector.hpp"
#include "fmbem/fmm/wavenumber.hpp"
#include "fmbem/mesh/feature_edges.hpp"
#include "fmbem/quadrature/gauss_legendre.hpp"

namespace fmbem {

struct NearFieldOptions {
  // Element j is a close neighbour of collocation point x_i when
  // |x_i - c_j| < near_factor * R_j (c_j centroid, R_j its distance to the
  // farthest corner); the self element always is.
  double near_factor = 2.5;
  // Gauss-Legendre points per piece (at most 2 in u = asinh(t / dist)) of each edge sector of
  // the semi-analytic integrals. 12: the close pairs of meshes within 3e-13 of 48 points, targets
  // 1e-4 of a size above or beside an element within 4e-9 (bench/near_quad_convergence.cpp).
  int angular_points = 12;
  // Compute the entries on the GPU and keep them there (apply_device); the host copies that
  // add_to and the accessors need are downloaded at their first use. Callers set it when the
  // FMM runs on the GPU (FmmLayerPotentials); throws fmbem::Error without a usable GPU.
  bool gpu = false;
  // With the quadratic read of the double density (DensityModel::quadratic), the elements
  // beyond near_factor but within this many radii get a correction too, integrated by the
  // 7-point rule on four half-size sub-triangles (refined_rule_integrals): the regular rule's
  // error for the read's linear part there does not fall with h (N Y_1's error falls 2.0 from
  // icosphere:4 to 5 with the 6-point rule and 2.5 radii, 3.8 with 4 radii).
  double refined_factor = 4.0;
  // Edges whose faces' normals differ by more than this (radians) are the body's own edges
  // (-bem_feature_angle): the quadratic read does not fit across them (DensityReconstruction).
  double feature_angle = kDefaultFeatureAngleDegrees * std::numbers::pi / 180.0;
  // With options.gpu and a reconstruction: the most corrected pairs whose per-pair results are
  // held on the GPU at once (192 bytes each; rows are computed in chunks of this many pairs).
  std::int64_t gpu_chunk_pairs = std::int64_t(1) << 23;
  // With image planes (Mesh::image_planes): the weight of each image's contributions, one per
  // image (empty: ImagePlanes::sign, the Green's function's). The curvature correction's
  // geometric identities weigh the images otherwise (all 1, or a vector density's component).
  std::vector<double> image_weights;
  double image_weight(const ImagePlanes& planes, std::size_t image) const {
    return image_weights.empty() ? planes.sign(image) : image_weights.at(image);
  }
};

class GpuNearFieldCorrection;
class DensityReconstruction;

// The close elements of each row in CSR form: row r's are
// columns[row_start[r] .. row_start[r + 1]), ascending (pass 1 of NearFieldCorrection).
struct NearFieldPattern {
  std::vector<std::int64_t> row_start;
  // Written whole by the threads that form the rows (hundreds of megabytes at a million
  // elements with the quadratic read: no serial zeroing first).
  UninitializedVector<std::int32_t> columns;
};
NearFieldPattern near_field_pattern(const Mesh& mesh, RowRange rows, double near_factor);
// near_field_pattern(mesh, rows, near_factor) from the pattern of a larger factor: the pairs
// of `wider` that pass the same test.
// row_points (one per row): the rows' points instead of their centroids, rows of no element
// (an image's: ImagePlanes), whose own element is not always close.
NearFieldPattern restrict_pattern(const Mesh& mesh, RowRange rows, const NearFieldPattern& wider,
                                  double near_factor, std::span<const Vec3> row_points = {});
// The pattern of rows at `points` (not collocation points: an image's reflected ones), row r's
// the elements j with |points[r] - c_j| < near_factor R_j.
NearFieldPattern image_pattern(const Mesh& mesh, std::span<const Vec3> points, double near_factor);
// The pattern of the folded rows with a reconstruction: per row of `refined` its elements'
// stencils (DensityReconstruction::stencil), merged, ascending.
NearFieldPattern folded_pattern(const NearFieldPattern& refined,
                                const DensityReconstruction& reconstruction);

// Sparse correction, built once: for close pairs, the accurate integral
// (panel_integrals) minus what the regular Gauss rule gives for the pair, so
// that regular sum + correction is accurate for every pair. Stored in CSR
// form, one row per collocation point of `rows`.
//
// With a Burton-Miller coupling alpha != 0 the entries are those of S + alpha D' and
// D + alpha N (LayerPotentials): accurate integrals by hypersingular_integrals, regular ones by
// regular_integrals and regular_burton_miller_integrals, combined once, so that the SpMV costs
// what the conventional one does. With the normal derivatives apart (LayerCoupling) each pair
// holds two entries a layer, the operator's and its normal derivative's (entry arrays of
// outputs() x nonzeros(), output-major), from the same integrals. With options.gpu every kind of
// entry is computed on the GPU (GpuNearFieldCorrection); the patterns are formed on the CPU.
//
// With a reconstruction (DensityModel::quadratic) the double density is read as
// DensityReconstruction's quadratic on every element: each close pair (i, l) adds, besides its
// constant entry, accurate minus regular integrals of the five monomials (monomial_moments,
// regular_monomial_moments) times R's rows for l, folded into one sparse row, so that the SpMV
// stays one product on the undivided density. The pairs out to options.refined_factor radii are
// corrected as well, their "accurate" integrals from refined_rule_integrals. The pattern is then
// these elements and their stencils (single-layer entries zero outside them), and the
// double-layer diagonal is the folded accurate entry (these elements' share of the operator's
// diagonal). refined (with a reconstruction): near_field_pattern(mesh, rows, max(near_factor,
// refined_factor)) where the caller has it already (it is then not searched again).
//
// An imaginary k (fmm::Wavenumber::screened) gives the screened kernel's S and D (the constant
// read and the combined coupling {} alone: anything else is an error).
//
// With image planes (Mesh::image_planes) each row also gets the close pairs of its collocation
// point's images (the point and its normal reflected) with the real elements, times the image's
// sign: the pairs of an image element close to the row, with no self term (an image never
// holds the row's own point). Formed on the CPU (few rows have any); with options.gpu uploaded
// beside the real rows' entries (apply_device applies both), the host's pattern their union.
class NearFieldCorrection {
 public:
  NearFieldCorrection(const Discretization& disc, fmm::Wavenumber k, RowRange rows,
                      const NearFieldOptions& options, LayerCoupling coupling = {},
                      const DensityReconstruction* reconstruction = nullptr,
                      const NearFieldPattern* refined = nullptr);
  ~NearFieldCorrection();
  NearFieldCorrection(const NearFieldCorrection&) = delete;
  NearFieldCorrection& operator=(const NearFieldCorrection&) = delete;

  // y[o rows.size() + i - rows.begin] += sum over close j of dD_ij dd[j] + dS_ij sd[j] for each
  // output o (outputs()).
  void add_to(std::span<const cplx> double_density, std::span<const cplx> single_density,
              std::span<cplx> y) const;

  // The columns renumbered to their entries in a column space (LayerPotentials::column_elements,
  // which must hold every column): add_to and apply_device then take densities of
  // columns.elements().size() entries and columns() holds entries, not elements. Once, before
  // any apply.
  void renumber_columns(const ColumnEntries& columns);

  // Whether the entries live on the GPU (options.gpu): then apply_device may be called.
  bool on_device() const { return gpu_ != nullptr; }
  // The entries on the GPU (null unless on_device()).
  const GpuNearFieldCorrection* device() const { return gpu_.get(); }
  // add_to on device arrays: device_y (one entry per row) += the correction; a null density is
  // zero. Enqueued on the CUDA default stream. Throws fmbem::Error unless on_device().
  void apply_device(const cplx* device_double_density, const cplx* device_single_density,
                    cplx* device_y) const;

  // S_ii + alpha D'_ii and D_ii + alpha N_ii (accurate; with a reconstruction the folded
  // double-layer entry of the close pairs); apart: S_ii then D'_ii, D_ii then N_ii (2 rows).
  const std::vector<cplx>& single_layer_diagonal() const { return self_single_; }
  const std::vector<cplx>& double_layer_diagonal() const { return self_double_; }
  // The pattern's size (with images on the GPU beside the real rows: their union's).
  std::size_t nonzeros() const {
    make_union();
    return columns_.size();
  }
  // The close pairs integrated: the real rows' and each image's (an element close to a row and
  // to its image counts twice); nonzeros() where no image has pairs.
  std::size_t pairs() const { return pairs_; }
  int outputs() const { return outputs_; }
  // Host bytes (the entries counted once they are on the host) and device bytes.
  std::size_t memory_bytes() const;
  std::size_t device_bytes() const;

  // The CSR arrays: row r's close elements are columns()[row_start()[r] .. row_start()[r + 1]),
  // ascending, with their entries (accurate minus regular) at the same positions; after
  // renumber_columns the elements' entries in the column space.
  std::span<const std::int64_t> row_start() const {
    make_union();
    return row_start_;
  }
  std::span<const std::int32_t> columns() const {
    make_union();
    return columns_;
  }
  // Sets marks[c] to 1 for every column c of the pattern (the real rows' and the images'),
  // without making the union (which would fix the columns before renumber_columns).
  void mark_columns(std::span<char> marks) const;
  std::span<const cplx> single_entries() const;
  std::span<const cplx> double_entries() const;

 private:
  // Of image `image`'s rows (0: the real ones).
  NearFieldCorrection(const Discretization& disc, fmm::Wavenumber k, RowRange rows,
                      const NearFieldOptions& options, LayerCoupling coupling,
                      const DensityReconstruction* reconstruction, const NearFieldPattern* refined,
                      std::size_t image);
  // The rows' points and normals: the collocation points' (image 0, left empty) or an image's.
  void set_targets(const Mesh& mesh, std::size_t image);
  const Vec3& target_point(const Mesh& mesh, std::size_t r) const {
    return target_points_.empty() ? mesh.centroids()[rows_.begin + r] : target_points_[r];
  }
  const Vec3& target_normal(const Mesh& mesh, std::size_t r) const {
    return target_normals_.empty() ? mesh.normals()[rows_.begin + r] : target_normals_[r];
  }
  // No rows' entries (a sum of images starts here).
  NearFieldCorrection(RowRange rows, int outputs);
  // Adds an image's correction (its pattern merged into this one), times sign.
  void add_image(const NearFieldCorrection& image, double sign);
  // With the entries on the GPU: the images' sum uploaded beside them and kept here; the host's
  // pattern becomes the union only when a reader asks for it (make_union): the apply never does,
  // and the union of a large mesh's pattern costs time and host memory the GPU run has no use for.
  void keep_images_beside(NearFieldCorrection&& images);
  void make_union() const;
  void download_entries() const;
  // The entries with a reconstruction (see above), on the CPU, for the pattern row_start_,
  // columns_ (folded_pattern's).
  void fold_reconstruction(const Discretization& disc, double k, const NearFieldPattern& close,
                           const NearFieldPattern& refined, const GaussLegendre& angular,
                           const LayerCoupling& coupling,
                           const DensityReconstruction& reconstruction);
  // Gauss-Legendre points in the radius (per unit of k rho) for the monomials' Helmholtz
  // remainders: measured within 1e-10 of subdivision (tests/unit/bem/moment_integrals_test.cpp).
  static constexpr int kMomentRadialPoints = 6;

  RowRange rows_;
  // Mutable: with images beside, the union replaces the real rows' pattern on first read.
  mutable std::vector<std::int64_t> row_start_;
  mutable UninitializedVector<std::int32_t> columns_;
  // With the entries on the GPU these stay empty until download_entries.
  int outputs_ = 1;
  mutable std::vector<cplx> single_, double_;
  std::vector<cplx> self_single_, self_double_;
  std::unique_ptr<GpuNearFieldCorrection> gpu_;
  mutable std::once_flag downloaded_;
  std::vector<Vec3> target_points_, target_normals_;
  // With image planes and the entries on the GPU: the images' entries there and their pattern
  // here; once the union is made, where the real rows' and the images' entries land in it.
  std::unique_ptr<GpuNearFieldCorrection> gpu_images_;
  std::vector<std::int64_t> image_row_start_;
  UninitializedVector<std::int32_t> image_columns_;
  std::vector<cplx> image_single_, image_double_;
  mutable std::once_flag union_made_;
  mutable std::vector<std::int64_t> own_positions_, image_positions_;
  std::size_t pairs_ = 0;
};

// The regular Gauss rule's S and D integrals over one element for the target
// x, as the far field computes them (coincident points skipped).
struct RegularPair {
  cplx single_layer, double_layer;
};
RegularPair regular_integrals(const Discretization& disc, double k, std::size_t element,
                              const Vec3& x);

}  // namespace fmbem
