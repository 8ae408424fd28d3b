// The stand-in for the GPU block inverse that a build without nvcc links (FMBEM_HAVE_CUDA = 0);
// src/solver/cuda/gpu_block_inverse.cu defines the real one.
#include "fmbem/solver/gpu_block_inverse.hpp"

#if !FMBEM_HAVE_CUDA
#include "fmbem/core/error.hpp"

namespace fmbem {

struct GpuBlockInverse::Impl {};
GpuBlockInverse::GpuBlockInverse(std::span<const std::size_t>, std::span<const std::int32_t>,
                                 std::span<const std::size_t>, std::span<const cplx>, std::size_t) {
  throw Error(
      "the leaf-block preconditioner on the GPU is not available: fmbem was built without CUDA "
      "(no nvcc at configure)");
}
GpuBlockInverse::GpuBlockInverse(std::span<const std::size_t>, std::span<const std::int32_t>,
                                 std::span<const std::size_t>, const DeviceRows&, std::size_t) {
  throw Error(
      "the leaf-block preconditioner on the GPU is not available: fmbem was built without CUDA "
      "(no nvcc at configure)");
}
GpuBlockInverse::~GpuBlockInverse() = default;
void GpuBlockInverse::apply(std::span<const cplx>, std::span<cplx>) const {}
std::size_t GpuBlockInverse::device_bytes() const { return 0; }

}  // namespace fmbem
#endif
