#pragma once
#include <span>
#include <string>
#include <string_view>

// What the FMM's options say of the GPU: whether one is usable, the M2L schemes and the GPU
// phases' settings. No device types: the GPU executor and its kernels are src/fmm/cuda's.
namespace fmbem::fmm {

// Whether fmbem was built with CUDA and a CUDA device can be used; if not and why is given,
// *why says why in one sentence.
bool gpu_available(std::string* why = nullptr);
// Where a GPU is asked for: throws fmbem::Error "<what>: <why not>" unless gpu_available().
void require_gpu(std::string_view what);

// The GPU M2L's schemes (gpu_m2l.hpp describes them).
enum class M2LScheme { basic, sibling, cluster, ij, gemm, dmma };

// All schemes, in the order above.
std::span<const M2LScheme> m2l_schemes();
const char* m2l_scheme_name(M2LScheme scheme);
// Throws fmbem::Error naming the known schemes for an unknown name.
M2LScheme parse_m2l_scheme(std::string_view name);

struct GpuM2LOptions {
  // B: the cluster and ij schemes block B x B x B clusters (2B x 2B x 2B cells), 1 .. 8;
  // 3 is within twice the roofline bound for both at p = 8 and 16 (bench/results/gpu_m2l.md).
  int chunk = 3;
  // gemm: columns of one product in the batch (0: chosen per level from the pair counts).
  int gemm_columns = 0;
};

// The GPU near field's launch (gpu_near_field.hpp). The default is the fastest measured on an
// H100 at leaves of up to 100 targets; 128 x 2 is 3 % faster at 200
// (bench/results/gpu_near_field.md).
struct GpuNearFieldOptions {
  int threads = 128;           // per block: a multiple of 32 in 64 .. 256
  int targets_per_thread = 1;  // 1 or 2
};

}  // namespace fmbem::fmm
