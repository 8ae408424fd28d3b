#pragma once
#include <cstddef>
#include <string>

#include "fmbem/core/vec3.hpp"

// Device memory, timing and peak measurements for tests and benchmarks of the GPU code,
// without CUDA types. Everything runs on the CUDA default stream; every failure throws
// fmbem::Error (a build without CUDA throws on construction or call).
namespace fmbem::fmm {

// An array of complex doubles in device memory.
class DeviceArray {
 public:
  explicit DeviceArray(std::size_t count);
  ~DeviceArray();
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;

  cplx* data() { return data_; }
  const cplx* data() const { return data_; }
  std::size_t size() const { return count_; }
  void upload(const cplx* host);
  void download(cplx* host) const;
  void fill_zero();

 private:
  cplx* data_ = nullptr;
  std::size_t count_ = 0;
};

// Milliseconds between start() and stop() on the default stream (CUDA events).
class GpuTimer {
 public:
  GpuTimer();
  ~GpuTimer();
  GpuTimer(const GpuTimer&) = delete;
  GpuTimer& operator=(const GpuTimer&) = delete;
  void start();
  double stop();  // waits for the stop event

 private:
  void* start_ = nullptr;
  void* stop_ = nullptr;
};

// One GPU per MPI rank: makes device local_rank mod (devices on the node) current for this
// process (cudaSetDevice, before any other CUDA call) and returns it; -1 where there is no GPU
// (or no CUDA build): nothing changes then.
int select_gpu(int local_rank);

// "NVIDIA H100 80GB HBM3, 132 SMs, 79.1 GiB" and the like.
std::string gpu_device_description();

// Measured ceilings, median of repeats after a warm-up:
// a cuBLAS batched ZGEMM of batch products m x k times k x n (8 flops per complex multiply-add),
double measure_zgemm_tflops(int m, int n, int k, int batch);
// a device-to-device copy of bytes, counting bytes read plus bytes written,
double measure_copy_gbps(std::size_t bytes);
// and fused multiply-adds on the FP64 units without tensor cores (2 flops each).
double measure_fp64_fma_tflops();

}  // namespace fmbem::fmm
