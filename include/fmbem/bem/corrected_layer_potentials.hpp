#pragma once
#include <memory>
#include <optional>

#include "fmbem/bem/boundary_operator.hpp"
#include "fmbem/bem/density_reconstruction.hpp"
#include "fmbem/bem/discretization.hpp"
#include "fmbem/bem/layer_potentials.hpp"
#include "fmbem/bem/near_field.hpp"
#include "fmbem/bem/point_strengths.hpp"

namespace fmbem {

// Layer potentials as the regular Gauss-rule sum over all elements plus the
// sparse near-field correction (accurate minus regular for close pairs). The
// backends (direct, FMM) differ only in how they form the regular sum.
//
// Resident on the GPU: when the correction's entries are there (NearFieldOptions::gpu) and the
// backend can form the regular sum from device arrays (regular_sum_on_device), apply copies
// each density in once, has the backend sum on the device, adds the correction there and
// copies y out once.
//
// With DensityModel::quadratic the double density is read as DensityReconstruction's quadratic
// on every element, in the regular sum (ReconstructedPointStrengths) and in the correction
// (NearFieldCorrection): the hypersingular operator of Burton-Miller is then consistent (issue
// 10, docs/burton-miller.md). The single density stays constant.
class CorrectedLayerPotentials : public LayerPotentials {
 public:
  ~CorrectedLayerPotentials() override;
  void apply(std::span<const cplx> double_density, std::span<const cplx> single_density,
             std::span<cplx> y) const final;
  // On the GPU-resident path x goes up once and the densities are formed there (the scales
  // uploaded once per scales_id); otherwise LayerPotentials' host form.
  void apply_columns(std::span<const cplx> x, std::span<const cplx> double_scale,
                     std::span<const cplx> single_scale, std::span<cplx> y,
                     std::uint64_t scales_id = 0) const final;
  const std::vector<cplx>& single_layer_diagonal() const final {
    return single_extra_.empty() ? near_.single_layer_diagonal() : single_diagonal_;
  }
  const std::vector<cplx>& double_layer_diagonal() const final {
    return near_.double_layer_diagonal();
  }
  RowRange rows() const final { return rows_; }
  std::size_t columns() const final {
    return columns_restricted_ ? column_elements_.size() : disc_->size();
  }
  std::span<const std::size_t> column_elements() const final { return column_elements_; }
  cplx coupling() const final { return coupling_.alpha; }
  int outputs() const final { return coupling_.outputs(); }
  const LayerCoupling& layer_coupling() const { return coupling_; }
  // The correction; its columns() are entries of the column space (column_elements).
  const NearFieldCorrection& near_field() const { return near_; }
  // The accurate entries of the close pairs of the operator c.identity I + c.double_layer
  // (D + alpha N) + c.single_layer (S + alpha D'), in the correction's CSR pattern
  // (near_field().row_start() and columns()): the near-field block that preconditioners factor.
  // Regular part plus correction per pair (the regular integrals are formed again here, each
  // element's rule once per row). With the correction on the GPU (near_field().on_device())
  // computed there (near_block_device) and downloaded: the same operations, equal to rounding.
  std::vector<cplx> near_block(const OperatorCoefficients& c) const;
  // near_block on the CPU whatever the correction's place (the reference).
  std::vector<cplx> near_block_host(const OperatorCoefficients& c) const;
  // near_block written to device_block (near_field().nonzeros() entries) in the pattern
  // near_field().device()->device_row_start(), device_columns(); returns when written. Throws
  // fmbem::Error unless near_field().on_device().
  void near_block_device(const OperatorCoefficients& c, cplx* device_block) const;
  // (near_block, near_block_host, near_block_device and regular_entry: of combined layers; an
  // error for layers with the derivatives apart, which have no one operator.)
  // That operator's regular-rule entry for row i (of rows()) and column j, identity left out:
  // its entry wherever (i, j) is not a close pair (preconditioners that take more pairs).
  cplx regular_entry(const OperatorCoefficients& c, std::size_t i, std::size_t j) const;
  // The reconstruction of the double density (null with DensityModel::constant).
  const DensityReconstruction* reconstruction() const { return reconstruction_.get(); }
  // Adds extra[r] to the single-layer operator's diagonal entry of row rows().begin + r, in
  // apply (after the regular sum and the correction, on the host: the same on the GPU-resident
  // path, which downloads y first), in single_layer_diagonal() and in near_block: the curvature
  // correction of D' (adjoint_double_layer_curvature_correction, times alpha; apart: of D' alone,
  // added to the derivative's rows). Replaces an earlier extra.
  void set_single_layer_diagonal_extra(std::vector<cplx> extra);
  // Whether apply runs on the GPU with the densities and y copied once (never in a build
  // without CUDA).
  bool resident_on_device() const {
    return FMBEM_HAVE_CUDA && near_.on_device() && regular_sum_on_device();
  }

 protected:
  // elements_read (with the quadratic read): where the regular sum reads the densities of
  // these elements alone (a rank's part of the distributed FMM), the reconstruction is formed
  // for them and the rows' correction columns, grown by two vertex neighbourhoods (what the
  // fold and the near blocks read), instead of for every element. Empty: every element.
  CorrectedLayerPotentials(const Discretization& disc, fmm::Wavenumber k, RowRange rows,
                           const NearFieldOptions& near_options, LayerCoupling coupling = {},
                           DensityModel double_density = DensityModel::constant,
                           std::span<const std::size_t> elements_read = {});
  const Discretization& discretization() const { return *disc_; }
  // The weight of image g's contributions (NearFieldOptions::image_weight).
  double image_weight(std::size_t g) const {
    return image_weights_.empty() ? disc_->mesh().image_planes().sign(g) : image_weights_[g];
  }
  // The densities hold the entries of columns.elements() alone (column_elements: with the rows
  // and every element the correction, the quadratic read and the regular sum read): the
  // correction's and the strength matrix's columns are renumbered to them. Once, before any
  // apply.
  void restrict_columns(const ColumnEntries& columns);
  // The regular rule's point strengths of a double density (point_strengths, or
  // ReconstructedPointStrengths with the quadratic read); empty in, empty out. points: of these
  // quadrature points alone, in that order; empty: of every point. point_columns: the density
  // entry of each (point_strengths; the quadratic read's are its matrix's).
  std::vector<cplx> double_layer_strengths(std::span<const cplx> double_density,
                                           std::span<const std::size_t> points = {},
                                           std::span<const std::int32_t> point_columns = {}) const;
  // The quadratic read's strength matrix (null with DensityModel::constant).
  const ReconstructedPointStrengths* reconstructed_strengths() const {
    return reconstructed_strengths_.get();
  }
  // Throws fmbem::Error unless the quadratic read (if any) holds the fit of every element of
  // `elements` (a part's reconstruction must cover what its regular sum reads).
  void check_fitted(std::span<const std::size_t> elements) const;

 private:
  // y[i - rows().begin] = the regular rule's sum for row i (with coupling(): of the
  // Burton-Miller operators); densities have the right sizes (checked by apply).
  virtual void regular_sum(std::span<const cplx> double_density,
                           std::span<const cplx> single_density, std::span<cplx> y) const = 0;
  // The same on device arrays (null density: zero; device_y overwritten), enqueued on the CUDA
  // default stream; called only where regular_sum_on_device().
  virtual bool regular_sum_on_device() const { return false; }
  virtual void regular_sum_device(const cplx* device_double_density,
                                  const cplx* device_single_density, cplx* device_y) const;

  // refined: the rows' pattern out to the refined radius, searched once for a part's fits and
  // given to the correction (nullopt: no part, or no quadratic read).
  CorrectedLayerPotentials(const Discretization& disc, fmm::Wavenumber k, RowRange rows,
                           const NearFieldOptions& near_options, LayerCoupling coupling,
                           DensityModel double_density, std::span<const std::size_t> elements_read,
                           const std::optional<NearFieldPattern>& refined);

  // The regular rule's S + alpha D' and D + alpha N for row i and column j.
  RegularPair regular_pair(std::size_t i, std::size_t j) const;
  void require_combined(const char* what) const;
  // The rows of y the curvature correction's extra goes to: D''s (apart: the last block).
  std::span<cplx> extra_rows(std::span<cplx> y) const {
    return y.subspan((std::size_t(outputs()) - 1) * rows_.size(), rows_.size());
  }

  struct DeviceBuffers;
  // The resident apply's tail, of the densities on the device (null: zero): the regular sum and
  // the correction into the device's y, downloaded into y (empty: left there).
  void sum_on_device(const cplx* device_double_density, const cplx* device_single_density,
                     std::span<cplx> y) const;

  const Discretization* disc_;
  RowRange rows_;
  std::vector<double> image_weights_;
  // restrict_columns' elements (a part without elements may read none).
  bool columns_restricted_ = false;
  std::vector<std::size_t> column_elements_;
  fmm::Wavenumber k_;
  LayerCoupling coupling_;
  // Before near_, which reads it.
  std::unique_ptr<const DensityReconstruction> reconstruction_;
  std::unique_ptr<ReconstructedPointStrengths> reconstructed_strengths_;
  NearFieldCorrection near_;
  // set_single_layer_diagonal_extra's entries (empty: none) and the diagonal with them.
  std::vector<cplx> single_extra_, single_diagonal_;
  // The densities and y on the device, allocated at the first resident apply.
  mutable std::unique_ptr<DeviceBuffers> device_;
};

}  // namespace fmbem
