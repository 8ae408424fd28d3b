// The parts of the GPU M2L that need no CUDA: scheme names and statistics (options and reports
// name them in every build), and the answer of a build without CUDA to "is there a GPU?";
// src/fmm/cuda/*.cu defines the rest.
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

void require_gpu(std::string_view what) {
  std::string why;
  if (!gpu_available(&why)) throw Error(std::string(what) + ": " + why);
}

#if !FMBEM_HAVE_CUDA
// A build without nvcc has no GPU side at all (no executor, no GPU classes): these two answers are
// all it says about GPUs, and they make asking for one a clear error (require_gpu).
bool gpu_available(std::string* why) {
  if (why) *why = "fmbem was built without CUDA (no nvcc found when it was configured)";
  return false;
}

int select_gpu(int) { return -1; }
#endif

}  // namespace fmbem::fmm
