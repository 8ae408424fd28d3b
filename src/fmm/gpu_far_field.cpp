// The stand-ins for the GPU far field that a build without nvcc links (FMBEM_HAVE_CUDA = 0);
// src/fmm/cuda/gpu_far_field.cu defines the real ones.
#include "fmbem/fmm/gpu_far_field.hpp"

#include "fmbem/core/error.hpp"

namespace fmbem::fmm {

#if !FMBEM_HAVE_CUDA

namespace {
[[noreturn]] void no_cuda() {
  throw Error("the GPU FMM is not available: fmbem was built without CUDA (no nvcc at configure)");
}
}  // namespace

struct GpuFarField::Impl {};
GpuFarField::GpuFarField(const GpuFarFieldPlan&) { no_cuda(); }
GpuFarField::~GpuFarField() = default;
cplx* GpuFarField::multipole() { no_cuda(); }
cplx* GpuFarField::local() { no_cuda(); }
void GpuFarField::clear_expansions() { no_cuda(); }
void GpuFarField::p2m(const cplx*, const cplx*, std::size_t, std::size_t) { no_cuda(); }
void GpuFarField::restrict_p2m(std::span<const std::size_t>) { no_cuda(); }
void GpuFarField::restrict_m2m(std::span<const char>) { no_cuda(); }
void GpuFarField::m2m() { no_cuda(); }
void GpuFarField::l2l() { no_cuda(); }
void GpuFarField::l2p(cplx*) { no_cuda(); }
void GpuFarField::zero_potential(cplx*) { no_cuda(); }
void GpuFarField::synchronize() { no_cuda(); }
void GpuFarField::download_multipoles(std::span<cplx>) { no_cuda(); }
void GpuFarField::upload_multipoles(std::span<const cplx>) { no_cuda(); }
std::size_t GpuFarField::device_bytes() const { no_cuda(); }
std::string GpuFarField::describe() const { no_cuda(); }

#endif

}  // namespace fmbem::fmm
