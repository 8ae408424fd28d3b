// The parts of the GPU M2L that need no CUDA: scheme names, statistics, and the stand-ins that
// a build without nvcc links (FMBEM_HAVE_CUDA = 0); src/fmm/cuda/*.cu defines the rest.
#include "fmbem/fmm/gpu_m2l.hpp"

#include <array>

#include "fmbem/core/error.hpp"
#include "fmbem/fmm/gpu_device.hpp"

namespace fmbem::fmm {

namespace {
constexpr std::array<M2LScheme, 6> kSchemes = {M2LScheme::basic,   M2LScheme::sibling,
                                               M2LScheme::cluster, M2LScheme::ij,
                                               M2LScheme::gemm,    M2LScheme::dmma};
constexpr std::array<const char*, 6> kNames = {"basic", "sibling", "cluster", "ij", "gemm", "dmma"};
}  // namespace

std::span<const M2LScheme> m2l_schemes() { return kSchemes; }

const char* m2l_scheme_name(M2LScheme scheme) { return kNames.at(static_cast<int>(scheme)); }

M2LScheme parse_m2l_scheme(std::string_view name) {
  std::string known;
  for (std::size_t i = 0; i < kNames.size(); ++i) {
    if (name == kNames[i]) return kSchemes[i];
    known += (i ? ", " : "") + std::string(kNames[i]);
  }
  throw Error("unknown M2L scheme '" + std::string(name) + "' (known: " + known + ")");
}

double GpuM2LStatistics::flops() const {
  double sum = 0.0;
  for (const auto& l : levels) sum += l.flops;
  return sum;
}

double GpuM2LStatistics::matrix_bytes() const {
  double sum = 0.0;
  for (const auto& l : levels) sum += l.matrix_bytes;
  return sum;
}

double GpuM2LStatistics::bytes() const {
  double sum = 0.0;
  for (const auto& l : levels) sum += l.matrix_bytes + l.other_bytes;
  return sum;
}

#if !FMBEM_HAVE_CUDA

namespace {
[[noreturn]] void no_cuda() {
  throw Error("the GPU M2L is not available: fmbem was built without CUDA (no nvcc at configure)");
}
}  // namespace

bool gpu_available(std::string* why) {
  if (why) *why = "fmbem was built without CUDA (no nvcc found when it was configured)";
  return false;
}

struct GpuM2L::Impl {};
GpuM2L::GpuM2L(const M2LPlan&, M2LScheme, const GpuM2LOptions&) { no_cuda(); }
GpuM2L::~GpuM2L() = default;
void GpuM2L::apply(const cplx*, cplx*) { no_cuda(); }
void GpuM2L::apply_device(const cplx*, cplx*) { no_cuda(); }
void GpuM2L::apply_level_device(std::size_t, const cplx*, cplx*) { no_cuda(); }
void GpuM2L::synchronize() { no_cuda(); }
std::vector<cplx> GpuM2L::matrices(std::size_t) const { no_cuda(); }
M2LScheme GpuM2L::scheme() const { no_cuda(); }
const GpuM2LStatistics& GpuM2L::statistics() const { no_cuda(); }
std::string GpuM2L::describe() const { no_cuda(); }

DeviceArray::DeviceArray(std::size_t) { no_cuda(); }
DeviceArray::~DeviceArray() = default;
void DeviceArray::upload(const cplx*) { no_cuda(); }
void DeviceArray::download(cplx*) const { no_cuda(); }
void DeviceArray::fill_zero() { no_cuda(); }
GpuTimer::GpuTimer() { no_cuda(); }
GpuTimer::~GpuTimer() = default;
void GpuTimer::start() { no_cuda(); }
double GpuTimer::stop() { no_cuda(); }
std::string gpu_device_description() { no_cuda(); }
int select_gpu(int) { return -1; }
double measure_zgemm_tflops(int, int, int, int) { no_cuda(); }
double measure_copy_gbps(std::size_t) { no_cuda(); }
double measure_fp64_fma_tflops() { no_cuda(); }

#endif

}  // namespace fmbem::fmm
