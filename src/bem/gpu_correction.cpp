// The stand-ins for the GPU near-field correction that a build without nvcc links
// (FMBEM_HAVE_CUDA = 0); src/bem/cuda/gpu_correction.cu defines the real ones.
#include "fmbem/bem/gpu_correction.hpp"

#if !FMBEM_HAVE_CUDA
#include "fmbem/core/error.hpp"

namespace fmbem {
namespace {
[[noreturn]] void no_cuda() {
  throw Error(
      "the GPU near-field correction is not available: fmbem was built without CUDA (no nvcc at "
      "configure)");
}
}  // namespace

struct GpuNearFieldCorrection::Impl {};
GpuNearFieldCorrection::GpuNearFieldCorrection(const Discretization&, double, RowRange,
                                               std::span<const std::int64_t>,
                                               std::span<const std::int32_t>, const GaussLegendre&,
                                               cplx) {
  no_cuda();
}
GpuNearFieldCorrection::GpuNearFieldCorrection(const Discretization&, double, RowRange,
                                               const NearFieldPattern&, const NearFieldPattern&,
                                               const NearFieldPattern&, const GaussLegendre&,
                                               const GaussLegendre&, cplx,
                                               const DensityReconstruction&, std::int64_t) {
  no_cuda();
}
GpuNearFieldCorrection::~GpuNearFieldCorrection() = default;
void GpuNearFieldCorrection::download_entries(std::span<cplx>, std::span<cplx>) const { no_cuda(); }
void GpuNearFieldCorrection::download_self_terms(std::span<cplx>, std::span<cplx>) const {
  no_cuda();
}
void GpuNearFieldCorrection::apply_device(const cplx*, const cplx*, cplx*) const { no_cuda(); }
std::size_t GpuNearFieldCorrection::device_bytes() const { return 0; }
void GpuNearFieldCorrection::renumber_columns(std::span<const std::int32_t>,
                                              std::span<const std::size_t>) {
  no_cuda();
}
void GpuNearFieldCorrection::near_block(const Discretization&, double, RowRange, cplx,
                                        const DensityReconstruction*, const OperatorCoefficients&,
                                        std::span<const cplx>, cplx*) const {
  no_cuda();
}
const std::int64_t* GpuNearFieldCorrection::device_row_start() const { no_cuda(); }
const std::int32_t* GpuNearFieldCorrection::device_columns() const { no_cuda(); }

struct GpuPointStrengths::Impl {};
GpuPointStrengths::GpuPointStrengths(const Discretization&, std::span<const std::size_t>,
                                     std::span<const std::int32_t>) {
  no_cuda();
}
GpuPointStrengths::GpuPointStrengths(const ReconstructedPointStrengths&,
                                     std::span<const std::size_t>) {
  no_cuda();
}
GpuPointStrengths::~GpuPointStrengths() = default;
void GpuPointStrengths::apply(const cplx*, cplx*) const { no_cuda(); }
std::size_t GpuPointStrengths::points() const { return 0; }
void scale_on_device(std::size_t, const cplx*, const cplx*, cplx*) { no_cuda(); }
void copy_to_device(std::span<const cplx>, cplx*) { no_cuda(); }
void copy_to_host(const cplx*, std::span<cplx>) { no_cuda(); }

}  // namespace fmbem
#endif
