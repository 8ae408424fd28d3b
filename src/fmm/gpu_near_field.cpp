// The stand-ins for the GPU near field that a build without nvcc links (FMBEM_HAVE_CUDA = 0);
// src/fmm/cuda/gpu_near_field.cu defines the real ones.
#include "fmbem/fmm/gpu_near_field.hpp"

#include "fmbem/core/error.hpp"

namespace fmbem::fmm {

#if !FMBEM_HAVE_CUDA

namespace {
[[noreturn]] void no_cuda() {
  throw Error(
      "the GPU near field is not available: fmbem was built without CUDA (no nvcc at configure)");
}
}  // namespace

struct GpuNearField::Impl {};
GpuNearField::GpuNearField(const NearFieldLists&, const GpuNearFieldOptions&) { no_cuda(); }
GpuNearField::~GpuNearField() = default;
void GpuNearField::apply(std::span<const cplx>, std::span<const cplx>, std::span<cplx>) {
  no_cuda();
}
void GpuNearField::apply_device(const cplx*, const cplx*, cplx*) { no_cuda(); }
void GpuNearField::synchronize() { no_cuda(); }
std::size_t GpuNearField::num_sources() const { no_cuda(); }
std::size_t GpuNearField::num_targets() const { no_cuda(); }
const GpuNearFieldStatistics& GpuNearField::statistics() const { no_cuda(); }
std::string GpuNearField::describe() const { no_cuda(); }

#endif

}  // namespace fmbem::fmm
