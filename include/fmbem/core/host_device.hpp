#pragma once

// Functions both compilers build: host and device under nvcc, host alone otherwise.
#if defined(__CUDACC__)
#define FMBEM_HOST_DEVICE __host__ __device__
#else
#define FMBEM_HOST_DEVICE
#endif
