#include <climits>
#include <cstdint>
#include <sstream>

#include "cuda_util.cuh"
#include "fmbem/core/error.hpp"

namespace fmbem::fmm::cuda {

SplitCoordinates split_coordinates(std::span<const Vec3> points,
                                   std::span<const std::size_t> order) {
  const std::size_t n = order.empty() ? points.size() : order.size();
  SplitCoordinates out{std::vector<double>(n), std::vector<double>(n), std::vector<double>(n)};
#pragma omp parallel for schedule(static)
  for (std::size_t i = 0; i < n; ++i) {
    const Vec3& p = points[order.empty() ? i : order[i]];
    out.x[i] = p.x;
    out.y[i] = p.y;
    out.z[i] = p.z;
  }
  return out;
}

std::string mib(std::size_t bytes) {
  std::ostringstream out;
  out.precision(1);
  out << std::fixed << bytes / (1024.0 * 1024.0) << " MiB";
  return out.str();
}

int checked_int(const char* owner, std::size_t n, const char* what) {
  if (n > static_cast<std::size_t>(INT32_MAX))
    throw Error(std::string(owner) + ": too many " + what + " for 32-bit indices");
  return static_cast<int>(n);
}

void throw_cuda_error(cudaError_t status, const char* what) {
  cudaGetLastError();  // clear a sticky-free error so that later calls can report their own
  if (status == cudaErrorMemoryAllocation) {
    std::size_t free_bytes = 0, total_bytes = 0;
    cudaMemGetInfo(&free_bytes, &total_bytes);
    throw Error(std::string("GPU out of memory in ") + what + " (" + mib(free_bytes) + " free of " +
                mib(total_bytes) + ")");
  }
  throw Error(std::string("CUDA error in ") + what + ": " + cudaGetErrorString(status) + " (" +
              cudaGetErrorName(status) + ")");
}

void* device_allocate(std::size_t bytes, const std::string& what) {
  void* p = nullptr;
  const cudaError_t status = cudaMalloc(&p, bytes);
  if (status == cudaErrorMemoryAllocation) {
    cudaGetLastError();
    std::size_t free_bytes = 0, total_bytes = 0;
    cudaMemGetInfo(&free_bytes, &total_bytes);
    throw Error("GPU out of memory: " + what + " needs " + mib(bytes) + ", " + mib(free_bytes) +
                " free of " + mib(total_bytes));
  }
  check(status, ("cudaMalloc for " + what).c_str());
  return p;
}

}  // namespace fmbem::fmm::cuda
