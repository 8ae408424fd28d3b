#pragma once
// Error checking and device memory for the CUDA sources of fmm/ and bem/ (not a public header).
#include <cuda_runtime.h>

#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include "fmbem/core/vec3.hpp"

namespace fmbem::fmm::cuda {

// Throws fmbem::Error "CUDA error in <what>: <message> (<name>)"; out of memory gets its own
// message with the free and total device memory.
[[noreturn]] void throw_cuda_error(cudaError_t status, const char* what);

inline void check(cudaError_t status, const char* what) {
  if (status != cudaSuccess) throw_cuda_error(status, what);
}

// After a kernel launch: a bad launch configuration shows here, a fault at the next sync.
inline void check_launch(const char* kernel) { check(cudaGetLastError(), kernel); }

// "12.3 MiB": memory sizes in the GPU code's messages.
std::string mib(std::size_t bytes);

// n as a kernel's 32-bit index or count; owner ("GPU M2L") and what name it in the error.
int checked_int(const char* owner, std::size_t n, const char* what);

// Points' coordinates as three arrays for an upload: points[order[i]] at i (order empty: the
// points in their own order), gathered on the host's threads.
struct SplitCoordinates {
  std::vector<double> x, y, z;
};
SplitCoordinates split_coordinates(std::span<const Vec3> points,
                                   std::span<const std::size_t> order = {});

// cudaMalloc with an fmbem::Error naming what did not fit.
void* device_allocate(std::size_t bytes, const std::string& what);

// A typed device array that frees itself.
template <class T>
class DeviceVector {
 public:
  DeviceVector() = default;
  DeviceVector(std::size_t count, const std::string& what) { allocate(count, what); }
  explicit DeviceVector(const std::vector<T>& host, const std::string& what)
      : DeviceVector(host.data(), host.size(), what) {}
  DeviceVector(const T* host, std::size_t count, const std::string& what) {
    allocate(count, what);
    if (count > 0)
      check(cudaMemcpy(data_, host, count * sizeof(T), cudaMemcpyHostToDevice), "upload");
  }
  ~DeviceVector() { release(); }
  DeviceVector(DeviceVector&& other) noexcept : data_(other.data_), count_(other.count_) {
    other.data_ = nullptr;
    other.count_ = 0;
  }
  DeviceVector& operator=(DeviceVector&& other) noexcept {
    if (this != &other) {
      release();
      data_ = other.data_;
      count_ = other.count_;
      other.data_ = nullptr;
      other.count_ = 0;
    }
    return *this;
  }
  DeviceVector(const DeviceVector&) = delete;
  DeviceVector& operator=(const DeviceVector&) = delete;

  void allocate(std::size_t count, const std::string& what) {
    release();
    if (count == 0) return;
    data_ = static_cast<T*>(device_allocate(count * sizeof(T), what));
    count_ = count;
  }
  T* data() { return data_; }
  const T* data() const { return data_; }
  std::size_t size() const { return count_; }
  std::size_t bytes() const { return count_ * sizeof(T); }
  // Copies all of it to host (count_ elements); what names the copy in an error.
  void download(T* host, const char* what) const {
    if (count_ > 0)
      check(cudaMemcpy(host, data_, count_ * sizeof(T), cudaMemcpyDeviceToHost), what);
  }

 private:
  void release() {
    if (data_) cudaFree(data_);
    data_ = nullptr;
    count_ = 0;
  }
  T* data_ = nullptr;
  std::size_t count_ = 0;
};

}  // namespace fmbem::fmm::cuda
