#pragma once
// The near-field correction and the point strengths on a CUDA GPU, without CUDA types: the
// kernels live in src/bem/cuda/*.cu. Defined only in a CUDA build (FMBEM_HAVE_CUDA); elsewhere
// nothing here exists, and the code that would make one asks fmm::gpu_available first.
// Everything runs on the CUDA default stream, so it is ordered with the FMM's apply_device;
// complex arrays are device arrays of cplx.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

#include "fmbem/bem/boundary_operator.hpp"
#include "fmbem/bem/discretization.hpp"
#include "fmbem/bem/layer_potentials.hpp"
#include "fmbem/bem/near_field.hpp"
#include "fmbem/bem/point_strengths.hpp"
#include "fmbem/quadrature/gauss_legendre.hpp"

namespace fmbem {

// The entries of NearFieldCorrection for a given CSR pattern, computed and kept on the GPU.
// The device code is the CPU's integrals (src/bem/host_device, one source for both), built
// without fused multiply-adds
// (-fmad=false), so the entries differ from the CPU's only by the last bits of the library
// functions (sin, cos, cosh, sinh, asinh, hypot, log, atan: a few ulp):
// tests/unit/bem/gpu_correction_test.cpp and gpu_burton_miller_test.cpp state the tolerances
// and why.
class GpuNearFieldCorrection {
 public:
  virtual ~GpuNearFieldCorrection() = default;

  // Copies the entries (accurate minus regular, one per nonzero) and the self terms (the
  // accurate S_ii and D_ii, one per row) to the host.
  virtual void download_entries(std::span<cplx> single, std::span<cplx> dbl) const = 0;
  virtual void download_self_terms(std::span<cplx> single, std::span<cplx> dbl) const = 0;

  // device_y[r] += sum over the row's nonzeros of D dd[j] + S sd[j]; a null density is zero.
  virtual void apply_device(const cplx* device_double_density, const cplx* device_single_density,
                            cplx* device_y) const = 0;

  virtual std::size_t device_bytes() const = 0;

  // NearFieldCorrection::renumber_columns on the device: the columns replaced by `columns`
  // (entries of the column space, the same pattern) and the element of each entry kept for
  // near_block.
  virtual void renumber_columns(std::span<const std::int32_t> columns,
                                std::span<const std::size_t> elements) = 0;

  // CorrectedLayerPotentials::near_block on the device, for the layers this correction was
  // built for (disc, k, rows, coupling, reconstruction: null for the constant read): one entry
  // per nonzero written to device_block, in the pattern device_row_start(), device_columns();
  // single_extra: the single-layer diagonal's extra per row, or empty. Returns when written.
  virtual void near_block(const Discretization& disc, double k, RowRange rows, cplx coupling,
                          const DensityReconstruction* reconstruction,
                          const OperatorCoefficients& c, std::span<const cplx> single_extra,
                          cplx* device_block) const = 0;
  virtual const std::int64_t* device_row_start() const = 0;
  virtual const std::int32_t* device_columns() const = 0;
};

// row_start (rows.size() + 1 offsets) and columns: the close elements of each row, as
// NearFieldCorrection's pass 1 found them; with a coupling alpha != 0 the entries are
// Burton-Miller's S + alpha D' and D + alpha N, apart the two outputs' (output-major, as
// NearFieldCorrection holds them; the self terms likewise, and apply_device adds output o to
// device_y's o-th block of rows).
// k imaginary: the screened kernel's S and D (Wavenumber; the coupling must be {}).
std::unique_ptr<GpuNearFieldCorrection> make_gpu_near_field_correction(
    const Discretization& disc, fmm::Wavenumber k, RowRange rows,
    std::span<const std::int64_t> row_start, std::span<const std::int32_t> columns,
    const GaussLegendre& angular, const LayerCoupling& coupling = {});
// The entries with the quadratic read of the double density (NearFieldCorrection's
// fold_reconstruction): `folded` is the pattern (the close and refined elements of each row
// and their stencils), close and refined the pairs; radial the moments' radial rule;
// chunk_pairs the most pairs whose intermediate results are held at once.
std::unique_ptr<GpuNearFieldCorrection> make_gpu_near_field_correction(
    const Discretization& disc, double k, RowRange rows, const NearFieldPattern& folded,
    const NearFieldPattern& close, const NearFieldPattern& refined, const GaussLegendre& angular,
    const GaussLegendre& radial, const LayerCoupling& coupling,
    const DensityReconstruction& reconstruction, std::int64_t chunk_pairs);

// point_strengths on the GPU: strengths[q] = weight_q * density[e] for the quadrature points
// q of element e (the quadrature weights are uploaded once); or ReconstructedPointStrengths'
// sparse product (its matrix uploaded once).
// A correction whose entries were formed on the host (an image plane's close pairs,
// NearFieldCorrection), uploaded to the GPU: row_start and columns its pattern, single and dbl
// outputs x nonzeros entries (output-major); its self terms are zero.
std::unique_ptr<GpuNearFieldCorrection> upload_near_field_correction(
    RowRange rows, std::span<const std::int64_t> row_start, std::span<const std::int32_t> columns,
    std::span<const cplx> single, std::span<const cplx> dbl, int outputs);

// With image planes the FMM's targets are the rows' images (FmmLayerPotentials): on the device,
// y[o rows + r] = sum over the images g of weight[g] all[(o images + g) rows + r] (at most
// eight images), enqueued on the default stream.
struct ImageWeights {
  double weight[8] = {};
};
void sum_images_on_device(std::size_t rows, int images, int outputs, const ImageWeights& weights,
                          const cplx* device_all, cplx* device_y);

class GpuPointStrengths {
 public:
  // points (quadrature point indices): the strengths of these alone, in that order (a part of
  // the distributed FMM: fmm::Fmm::strength_sources); empty: of every point. point_columns:
  // the density's entry of each listed point (a part's column space); empty: its element.
  explicit GpuPointStrengths(const Discretization& disc, std::span<const std::size_t> points = {},
                             std::span<const std::int32_t> point_columns = {});
  explicit GpuPointStrengths(const ReconstructedPointStrengths& matrix,
                             std::span<const std::size_t> points = {});
  ~GpuPointStrengths();
  GpuPointStrengths(const GpuPointStrengths&) = delete;
  GpuPointStrengths& operator=(const GpuPointStrengths&) = delete;

  // device_density: one entry per column; device_strengths: one per point (points()).
  void apply(const cplx* device_density, cplx* device_strengths) const;
  std::size_t points() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// out[j] = scale[j] * x[j] for j < n, device arrays (a mixed problem's densities formed from
// the unknown where it lives).
void scale_on_device(std::size_t n, const cplx* device_scale, const cplx* device_x,
                     cplx* device_out);

// Copies between host and device arrays of cplx (tests, benchmarks, test doubles).
void copy_to_device(std::span<const cplx> host, cplx* device);
void copy_to_host(const cplx* device, std::span<cplx> host);

}  // namespace fmbem
