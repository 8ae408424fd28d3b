// GpuMultipolePacking: the exchange's cell lists uploaded once; per exchange one gather kernel
// and one copy to pinned host memory, one copy back and one add kernel.
#include <algorithm>
#include <cstdint>
#include <numeric>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "cuda_util.cuh"
#include "fmbem/core/error.hpp"
#include "fmbem/fmm/gpu_m2l.hpp"
#include "fmbem/fmm/gpu_multipole_packing.hpp"

namespace fmbem::fmm {

using cuda::DeviceVector;

namespace {

constexpr const char* kOwner = "GPU multipole exchange";

// Host memory the GPU copies to and from at full speed (cudaMallocHost), freeing itself.
class PinnedBuffer {
 public:
  PinnedBuffer() = default;
  PinnedBuffer(std::size_t count, const char* what) : count_(count) {
    if (count > 0)
      cuda::check(cudaMallocHost(reinterpret_cast<void**>(&data_), count * sizeof(cplx)), what);
  }
  ~PinnedBuffer() {
    if (data_) cudaFreeHost(data_);
  }
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(PinnedBuffer&& other) noexcept {
    std::swap(data_, other.data_);
    std::swap(count_, other.count_);
    return *this;
  }
  std::span<cplx> span() { return {data_, count_}; }
  std::size_t bytes() const { return count_ * sizeof(cplx); }

 private:
  cplx* data_ = nullptr;
  std::size_t count_ = 0;
};

// packed[i p^2 + j] = multipole[cells[i] p^2 + j].
__global__ void gather_kernel(const int* cells, int count, int size, const double2* multipole,
                              double2* packed) {
  const std::int64_t total = std::int64_t(count) * size;
  for (std::int64_t idx = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; idx < total;
       idx += std::int64_t(gridDim.x) * blockDim.x) {
    const std::int64_t i = idx / size, j = idx - i * size;
    packed[idx] = multipole[std::int64_t(cells[i]) * size + j];
  }
}

// Per distinct cell u (cells[u]) and coefficient j: the packed entries entries[offsets[u]] ..
// entries[offsets[u + 1] - 1] added in that order, so that no two threads write one cell.
__global__ void add_kernel(const int* cells, const int* offsets, const int* entries, int count,
                           int size, const double2* packed, double2* multipole) {
  const std::int64_t total = std::int64_t(count) * size;
  for (std::int64_t idx = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; idx < total;
       idx += std::int64_t(gridDim.x) * blockDim.x) {
    const std::int64_t u = idx / size, j = idx - u * size;
    double2& m = multipole[std::int64_t(cells[u]) * size + j];
    double2 sum = m;
    for (int e = offsets[u]; e < offsets[u + 1]; ++e) {
      const double2 r = packed[std::int64_t(entries[e]) * size + j];
      sum.x += r.x;
      sum.y += r.y;
    }
    m = sum;
  }
}

int blocks_for(std::int64_t items, int threads) {
  return int(std::min<std::int64_t>((items + threads - 1) / threads, 65535));
}

constexpr int kThreads = 256;

}  // namespace

struct GpuMultipolePacking::Impl {
  int size = 0;
  int send_count = 0, receive_count = 0, add_count = 0;
  DeviceVector<int> send_cells;
  // The receive list by distinct cell: add_cells[u] gets the packed entries
  // add_entries[add_offsets[u] .. add_offsets[u + 1]), ascending (the list's order).
  DeviceVector<int> add_cells, add_offsets, add_entries;
  DeviceVector<double2> send_packed, receive_packed;
  PinnedBuffer send_host, receive_host;
};

GpuMultipolePacking::GpuMultipolePacking(std::span<const int> send_cells,
                                         std::span<const int> receive_cells, int order)
    : impl_(std::make_unique<Impl>()) {
  std::string why;
  if (!gpu_available(&why)) throw Error(std::string(kOwner) + ": " + why);
  if (order < 1) throw Error(std::string(kOwner) + ": the order must be at least 1");
  for (std::span<const int> cells : {send_cells, receive_cells})
    if (std::any_of(cells.begin(), cells.end(), [](int c) { return c < 0; }))
      throw Error(std::string(kOwner) + ": a negative cell index");
  Impl& d = *impl_;
  d.size = order * order;
  d.send_count = cuda::checked_int(kOwner, send_cells.size(), "send cells");
  d.receive_count = cuda::checked_int(kOwner, receive_cells.size(), "received cells");
  cuda::checked_int(kOwner, std::max(send_cells.size(), receive_cells.size()) * d.size,
                    "packed coefficients");

  // Entries grouped by cell, stable: each cell's partials keep their order in the list.
  std::vector<int> by_cell(receive_cells.size());
  std::iota(by_cell.begin(), by_cell.end(), 0);
  std::stable_sort(by_cell.begin(), by_cell.end(),
                   [&](int a, int b) { return receive_cells[a] < receive_cells[b]; });
  std::vector<int> add_cells, add_offsets{0};
  for (std::size_t i = 0; i < by_cell.size(); ++i) {
    if (i == 0 || receive_cells[by_cell[i]] != receive_cells[by_cell[i - 1]]) {
      if (i > 0) add_offsets.push_back(int(i));
      add_cells.push_back(receive_cells[by_cell[i]]);
    }
  }
  if (!by_cell.empty()) add_offsets.push_back(int(by_cell.size()));
  d.add_count = int(add_cells.size());

  const std::vector<int> send(send_cells.begin(), send_cells.end());
  d.send_cells = DeviceVector<int>(send, "multipole exchange send cells");
  d.add_cells = DeviceVector<int>(add_cells, "multipole exchange receive cells");
  d.add_offsets = DeviceVector<int>(add_offsets, "multipole exchange receive cells");
  d.add_entries = DeviceVector<int>(by_cell, "multipole exchange receive cells");
  d.send_packed.allocate(std::size_t(d.send_count) * d.size, "multipole exchange send buffer");
  d.receive_packed.allocate(std::size_t(d.receive_count) * d.size,
                            "multipole exchange receive buffer");
  d.send_host = PinnedBuffer(std::size_t(d.send_count) * d.size, "pinned send buffer");
  d.receive_host = PinnedBuffer(std::size_t(d.receive_count) * d.size, "pinned receive buffer");
}

GpuMultipolePacking::~GpuMultipolePacking() = default;

std::span<cplx> GpuMultipolePacking::send_buffer() { return impl_->send_host.span(); }
std::span<cplx> GpuMultipolePacking::receive_buffer() { return impl_->receive_host.span(); }

void GpuMultipolePacking::gather(const cplx* device_multipoles) {
  Impl& d = *impl_;
  if (d.send_count == 0) return;
  const std::int64_t items = std::int64_t(d.send_count) * d.size;
  gather_kernel<<<blocks_for(items, kThreads), kThreads>>>(
      d.send_cells.data(), d.send_count, d.size,
      reinterpret_cast<const double2*>(device_multipoles), d.send_packed.data());
  cuda::check_launch("the multipole gather kernel");
  cuda::check(cudaMemcpy(d.send_host.span().data(), d.send_packed.data(), d.send_host.bytes(),
                         cudaMemcpyDeviceToHost),
              "the packed multipoles to the host");
}

void GpuMultipolePacking::add_received(cplx* device_multipoles) {
  Impl& d = *impl_;
  if (d.receive_count == 0) return;
  cuda::check(cudaMemcpyAsync(d.receive_packed.data(), d.receive_host.span().data(),
                              d.receive_host.bytes(), cudaMemcpyHostToDevice, nullptr),
              "the received multipoles to the device");
  const std::int64_t items = std::int64_t(d.add_count) * d.size;
  add_kernel<<<blocks_for(items, kThreads), kThreads>>>(
      d.add_cells.data(), d.add_offsets.data(), d.add_entries.data(), d.add_count, d.size,
      d.receive_packed.data(), reinterpret_cast<double2*>(device_multipoles));
  cuda::check_launch("the multipole add kernel");
}

std::size_t GpuMultipolePacking::device_bytes() const {
  const Impl& d = *impl_;
  return d.send_cells.bytes() + d.add_cells.bytes() + d.add_offsets.bytes() +
         d.add_entries.bytes() + d.send_packed.bytes() + d.receive_packed.bytes();
}

std::size_t GpuMultipolePacking::host_bytes() const {
  return impl_->send_host.bytes() + impl_->receive_host.bytes();
}

}  // namespace fmbem::fmm
