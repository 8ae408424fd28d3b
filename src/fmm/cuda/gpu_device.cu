#include <algorithm>
#include <cstdio>
#include <vector>

#include "cublas_loader.cuh"
#include "cuda_util.cuh"
#include "fmbem/core/error.hpp"
#include "fmbem/fmm/gpu_device.hpp"
#include "m2l_kernels.cuh"

namespace fmbem::fmm {

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Median milliseconds of `repeats` runs after two warm-up runs.
template <class Run>
double time_ms(int repeats, Run run) {
  for (int w = 0; w < 2; ++w) run();
  cuda::check(cudaDeviceSynchronize(), "warm-up");
  std::vector<double> times;
  GpuTimer timer;
  for (int r = 0; r < repeats; ++r) {
    timer.start();
    run();
    times.push_back(timer.stop());
  }
  return median(times);
}

}  // namespace

DeviceArray::DeviceArray(std::size_t count) : count_(count) {
  if (count > 0)
    data_ = static_cast<cplx*>(cuda::device_allocate(count * sizeof(cplx), "an array"));
}

DeviceArray::~DeviceArray() {
  if (data_) cudaFree(data_);
}

void DeviceArray::upload(const cplx* host) {
  cuda::check(cudaMemcpy(data_, host, count_ * sizeof(cplx), cudaMemcpyHostToDevice), "upload");
}

void DeviceArray::download(cplx* host) const {
  cuda::check(cudaMemcpy(host, data_, count_ * sizeof(cplx), cudaMemcpyDeviceToHost), "download");
}

void DeviceArray::fill_zero() {
  cuda::check(cudaMemset(data_, 0, count_ * sizeof(cplx)), "cudaMemset");
}

GpuTimer::GpuTimer() {
  cudaEvent_t a = nullptr, b = nullptr;
  cuda::check(cudaEventCreate(&a), "cudaEventCreate");
  cuda::check(cudaEventCreate(&b), "cudaEventCreate");
  start_ = a;
  stop_ = b;
}

GpuTimer::~GpuTimer() {
  cudaEventDestroy(static_cast<cudaEvent_t>(start_));
  cudaEventDestroy(static_cast<cudaEvent_t>(stop_));
}

void GpuTimer::start() {
  cuda::check(cudaEventRecord(static_cast<cudaEvent_t>(start_), nullptr), "cudaEventRecord");
}

double GpuTimer::stop() {
  cuda::check(cudaEventRecord(static_cast<cudaEvent_t>(stop_), nullptr), "cudaEventRecord");
  cuda::check(cudaEventSynchronize(static_cast<cudaEvent_t>(stop_)), "the timed work");
  float ms = 0.0f;
  cuda::check(
      cudaEventElapsedTime(&ms, static_cast<cudaEvent_t>(start_), static_cast<cudaEvent_t>(stop_)),
      "cudaEventElapsedTime");
  return ms;
}

int select_gpu(int local_rank) {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    cudaGetLastError();
    return -1;
  }
  const int device = local_rank % count;
  cuda::check(cudaSetDevice(device), "cudaSetDevice");
  return device;
}

std::string gpu_device_description() {
  int device = 0;
  cuda::check(cudaGetDevice(&device), "cudaGetDevice");
  cudaDeviceProp prop{};
  cuda::check(cudaGetDeviceProperties(&prop, device), "cudaGetDeviceProperties");
  char text[1024];
  std::snprintf(text, sizeof text, "%s, %d SMs, %.1f GiB, L2 %.0f MB, compute capability %d.%d",
                prop.name, prop.multiProcessorCount, prop.totalGlobalMem / 1073741824.0,
                prop.l2CacheSize / 1e6, prop.major, prop.minor);
  return text;
}

double measure_zgemm_tflops(int m, int n, int k, int batch) {
  cuda::CublasHandle handle;
  cuda::DeviceVector<double2> a(std::size_t(m) * k * batch, "ZGEMM peak A"),
      b(std::size_t(k) * n * batch, "ZGEMM peak B"), c(std::size_t(m) * n * batch, "ZGEMM peak C");
  cuda::launch_fill_random(reinterpret_cast<double*>(a.data()), 2 * a.size(), 1);
  cuda::launch_fill_random(reinterpret_cast<double*>(b.data()), 2 * b.size(), 2);
  std::vector<const cuDoubleComplex*> ha(batch), hb(batch);
  std::vector<cuDoubleComplex*> hc(batch);
  for (int x = 0; x < batch; ++x) {
    ha[x] = reinterpret_cast<const cuDoubleComplex*>(a.data()) + std::size_t(x) * m * k;
    hb[x] = reinterpret_cast<const cuDoubleComplex*>(b.data()) + std::size_t(x) * k * n;
    hc[x] = reinterpret_cast<cuDoubleComplex*>(c.data()) + std::size_t(x) * m * n;
  }
  cuda::DeviceVector<const cuDoubleComplex*> da(ha, "pointers"), db(hb, "pointers");
  cuda::DeviceVector<cuDoubleComplex*> dc(hc, "pointers");
  const cuDoubleComplex one = {1.0, 0.0}, zero = {0.0, 0.0};
  const double ms = time_ms(5, [&] {
    if (batch == 1)
      cuda::check_cublas(cuda::cublas().zgemm(handle.get(), CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &one,
                                              ha[0], m, hb[0], k, &zero, hc[0], m),
                         "cublasZgemm");
    else
      cuda::check_cublas(
          cuda::cublas().zgemm_batched(handle.get(), CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &one,
                                       da.data(), m, db.data(), k, &zero, dc.data(), m, batch),
          "cublasZgemmBatched");
  });
  return 8.0 * double(m) * n * k * batch / (ms * 1e-3) / 1e12;
}

double measure_copy_gbps(std::size_t bytes) {
  cuda::DeviceVector<double2> a(bytes / sizeof(double2), "copy source"),
      b(bytes / sizeof(double2), "copy target");
  cuda::launch_fill_random(reinterpret_cast<double*>(a.data()), 2 * a.size(), 3);
  const double ms = time_ms(9, [&] {
    cuda::check(cudaMemcpy(b.data(), a.data(), a.bytes(), cudaMemcpyDeviceToDevice), "device copy");
  });
  return 2.0 * double(a.bytes()) / (ms * 1e-3) / 1e9;
}

double measure_fp64_fma_tflops() {
  int device = 0, sms = 0;
  cuda::check(cudaGetDevice(&device), "cudaGetDevice");
  cuda::check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device), "attribute");
  cuda::DeviceVector<double> sink(1, "sink");
  double flops = 0.0;
  const double ms =
      time_ms(5, [&] { flops = cuda::launch_fma_peak(sink.data(), sms * 8, 256, 20000); });
  return flops / (ms * 1e-3) / 1e12;
}

}  // namespace fmbem::fmm
