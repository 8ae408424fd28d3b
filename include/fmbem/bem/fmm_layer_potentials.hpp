#pragma once
#include <functional>
#include <memory>

#include "fmbem/bem/corrected_layer_potentials.hpp"
#include "fmbem/fmm/fmm.hpp"
#include "fmbem/fmm/multipole_exchange.hpp"

namespace fmbem {

// Layer potentials with the FMM: the regular Gauss rule over all elements,
// summed by the fast multipole method (far field by expansions, neighbouring
// leaves directly at every MatMult), plus the sparse near-field correction
// for the pairs that need the accurate integrals. O(N) time and memory.
//
// When the FMM options ask for the GPU (device gpu, or automatic with one usable) the
// correction's entries are computed on the GPU; when the FMM then runs wholly there
// (fmm::Fmm::runs_on_gpu) every apply is resident on the device (CorrectedLayerPotentials).
class FmmLayerPotentials final : public CorrectedLayerPotentials {
 public:
  // observer (may be null) is told of every FMM phase, at set-up and at
  // each apply.
  // With a part (a rank of the distributed FMM) the FMM is built for the part, the
  // quadratic read's fits are formed for what the part reads alone, and the densities hold the
  // entries of the elements it reads alone (column_elements: the elements of the FMM's sources,
  // with the quadratic read their stencils, the correction's columns and the rows).
  // An imaginary k (fmm::Wavenumber::screened): the screened kernel's layers (the single and
  // double layer with the constant read, no coupling), the FMM screened as well.
  FmmLayerPotentials(const Discretization& disc, fmm::Wavenumber k, RowRange rows,
                     const NearFieldOptions& near_options, const fmm::FmmOptions& fmm_options,
                     fmm::FmmObserver* observer = nullptr, LayerCoupling coupling = {},
                     DensityModel double_density = DensityModel::constant,
                     const std::optional<fmm::FmmPart>& part = std::nullopt);
  ~FmmLayerPotentials() override;

  const fmm::Fmm& fmm() const { return *fmm_; }
  // Row blocks (MPI ranks) split the upward pass: fmm::Fmm::share_upward_pass.
  void share_upward_pass(int part, int parts, std::function<void(std::span<cplx>)> combine) {
    fmm_->share_upward_pass(part, parts, std::move(combine));
  }
  // The distributed FMM: the rows must be part let.part's elements of the partition
  // (a numbering in which they are contiguous: fmm::FmmPartition::element_order), rank let.part of
  // comm (fmm::distribute: the partial multipoles exchanged over comm), the layers built with
  // the part of let. Collective.
  // overlap: the multipole exchange during the near field.
  void distribute(const fmm::LocallyEssentialTree& let, MPI_Comm comm, bool overlap = false) {
    fmm::distribute(*fmm_, let, comm, overlap);
  }

 private:
  // The FMM is built first (the fits of a part follow the sources it reads); then the rest.
  FmmLayerPotentials(std::unique_ptr<fmm::Fmm> fmm, bool part, const Discretization& disc,
                     fmm::Wavenumber k, RowRange rows, const NearFieldOptions& near_options,
                     fmm::FmmObserver* observer, LayerCoupling coupling,
                     DensityModel double_density);
  static std::unique_ptr<fmm::Fmm> make_fmm(const Discretization& disc, fmm::Wavenumber k,
                                            RowRange rows, const fmm::FmmOptions& fmm_options,
                                            fmm::FmmObserver* observer,
                                            const LayerCoupling& coupling,
                                            const std::optional<fmm::FmmPart>& part);
  // The elements whose densities a part's FMM reads (empty unless part).
  static std::vector<std::size_t> elements_read(const fmm::Fmm& fmm, bool part,
                                                const Discretization& disc);
  // A part's column space (ascending): the elements of the FMM's sources (with the quadratic
  // read their stencils), the correction's columns and the rows.
  std::vector<std::size_t> columns_read() const;

  void regular_sum(std::span<const cplx> double_density, std::span<const cplx> single_density,
                   std::span<cplx> y) const override;

  bool regular_sum_on_device() const override;
#if FMBEM_HAVE_CUDA
  void regular_sum_device(const cplx* device_double_density, const cplx* device_single_density,
                          cplx* device_y) const override;
#endif

  std::unique_ptr<fmm::Fmm> fmm_;
  fmm::FmmObserver* observer_;
  // A part's: the density entry of each of the FMM's strength points (empty: its element).
  std::vector<std::int32_t> strength_columns_;
  // A part's with image planes, per strength point: the quadrature point it mirrors and its
  // image's weight (empty: every weight 1); without planes the points are the FMM's own.
  bool mirror_sources_ = false;
  std::vector<std::size_t> strength_points_;
  std::vector<double> strength_weights_;
  std::span<const std::size_t> strength_points() const {
    return mirror_sources_ ? std::span<const std::size_t>(strength_points_)
                           : fmm_->strength_sources();
  }
  // The resident apply's point strengths (charges from the single layer, dipoles from the
  // double layer, with the quadratic read where the layers have it), set up with the first
  // resident apply; of the points the FMM's strength arrays hold (fmm::Fmm::strength_sources).
  struct DeviceStrengths;
  mutable std::unique_ptr<DeviceStrengths> strengths_;
};

}  // namespace fmbem
