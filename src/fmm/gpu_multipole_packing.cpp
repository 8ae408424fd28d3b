// The stand-ins for the GPU multipole packing that a build without nvcc links
// (FMBEM_HAVE_CUDA = 0); src/fmm/cuda/gpu_multipole_packing.cu defines the real ones.
#include "fmbem/fmm/gpu_multipole_packing.hpp"

#include "fmbem/core/error.hpp"

namespace fmbem::fmm {

#if !FMBEM_HAVE_CUDA

namespace {
[[noreturn]] void no_cuda() {
  throw Error(
      "the GPU multipole exchange is not available: fmbem was built without CUDA (no nvcc at "
      "configure)");
}
}  // namespace

struct GpuMultipolePacking::Impl {};
GpuMultipolePacking::GpuMultipolePacking(std::span<const int>, std::span<const int>, int) {
  no_cuda();
}
GpuMultipolePacking::~GpuMultipolePacking() = default;
std::span<cplx> GpuMultipolePacking::send_buffer() { no_cuda(); }
std::span<cplx> GpuMultipolePacking::receive_buffer() { no_cuda(); }
void GpuMultipolePacking::gather(const cplx*) { no_cuda(); }
void GpuMultipolePacking::add_received(cplx*) { no_cuda(); }
std::size_t GpuMultipolePacking::device_bytes() const { no_cuda(); }
std::size_t GpuMultipolePacking::host_bytes() const { no_cuda(); }

#endif

}  // namespace fmbem::fmm
