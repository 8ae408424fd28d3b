#pragma once

// Functions both compilers build: host and device under nvcc, host alone otherwise.
#if defined(__CUDACC__)
#define FMBEM_HOST_DEVICE __host__ __device__
#else
#define FMBEM_HOST_DEVICE
#endif

// Loops the device should unroll (constant indices keep small arrays in registers); the host
// compilers leave them as they were.
#if defined(__CUDA_ARCH__)
#define FMBEM_UNROLL _Pragma("unroll")
#else
#define FMBEM_UNROLL
#endif

namespace fmbem {

// std::max (the first when neither is larger) for code both compilers build: the device has no
// std::max, and fmax differs from it for NaN and signed zeros.
template <class T>
FMBEM_HOST_DEVICE constexpr T larger(T a, T b) {
  return a < b ? b : a;
}

}  // namespace fmbem
