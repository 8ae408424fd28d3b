// GpuNearField: the points in tree order and the work items uploaded once; apply gathers the
// strengths into tree order and runs one kernel (near_field_kernels.cu).
#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <sstream>
#include <string>
#include <vector>

#include "cuda_util.cuh"
#include "fmbem/core/error.hpp"
#include "fmbem/fmm/gpu_m2l.hpp"
#include "fmbem/fmm/gpu_near_field.hpp"
#include "near_field_kernels.cuh"

namespace fmbem::fmm {

using cuda::DeviceVector;
using cuda::mib;

using cuda::checked_int;

// Names this executor in errors about 32-bit index limits.
constexpr const char* kExecutor = "GPU near field";

namespace {

// Pinned host memory for the potentials' copy back.
class PinnedBuffer {
 public:
  PinnedBuffer() = default;
  ~PinnedBuffer() {
    if (data_) cudaFreeHost(data_);
  }
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;
  void allocate(std::size_t count) {
    if (count == 0) return;
    cuda::check(cudaMallocHost(&data_, count * sizeof(double2)), "cudaMallocHost");
  }
  double2* data() { return data_; }

 private:
  double2* data_ = nullptr;
};

}  // namespace

struct GpuNearField::Impl {
  GpuNearFieldOptions options;
  double k = 0.0, skip2 = 0.0;
  bool screened = false;
  // num_sources: the inputs' length (input order); num_read: the sources the lists read, which
  // the device holds sorted (tree order).
  int num_sources = 0, num_read = 0, num_targets = 0, num_items = 0;
  bool with_normals = false;
  DeviceVector<double> sx, sy, sz, nx, ny, nz, tx, ty, tz;
  // The target normal derivative: the targets' normals in tree order (empty: phi alone).
  DeviceVector<double> tnx, tny, tnz;
  cplx target_normal_weight = 0.0;
  bool derivative_apart = false;
  DeviceVector<int> source_order, target_order;
  DeviceVector<int4> items;
  DeviceVector<int2> ranges;
  // Scratch: the strengths in tree order; host apply's input and output copies.
  DeviceVector<double2> sorted_charges, sorted_dipoles, host_charges, host_dipoles, host_potential;
  PinnedBuffer staging;
  GpuNearFieldStatistics statistics;
};

GpuNearField::GpuNearField(const NearFieldLists& lists, const GpuNearFieldOptions& options)
    : impl_(std::make_unique<Impl>()) {
  std::string why;
  if (!gpu_available(&why)) throw Error("GPU near field: " + why);
  Impl& d = *impl_;
  const int threads = options.threads, per_thread = options.targets_per_thread;
  if (threads < 64 || threads > cuda::kNearFieldMaxThreads || threads % 32 != 0)
    throw Error("GPU near field: threads per block must be a multiple of 32 in 64.." +
                std::to_string(cuda::kNearFieldMaxThreads));
  if (per_thread != 1 && per_thread != 2)
    throw Error("GPU near field: targets per thread must be 1 or 2");
  if (lists.source_order.size() > lists.source_count ||
      lists.sources.size() != lists.source_order.size() ||
      lists.target_order.size() != lists.targets.size() ||
      (!lists.normals.empty() && lists.normals.size() != lists.sources.size()) ||
      (!lists.target_normals.empty() && lists.target_normals.size() != lists.targets.size()) ||
      lists.offsets.size() != lists.leaf_targets.size() + 1 ||
      (!lists.offsets.empty() && lists.offsets.back() != lists.ranges.size()))
    throw Error("GPU near field: inconsistent lists");
  d.options = options;
  d.k = lists.k.magnitude;
  d.screened = lists.k.imaginary;
  d.skip2 = lists.skip_radius * lists.skip_radius;
  d.num_sources = checked_int(kExecutor, lists.source_count, "sources");
  d.num_read = checked_int(kExecutor, lists.source_order.size(), "sources read");
  d.num_targets = checked_int(kExecutor, lists.targets.size(), "targets");
  d.with_normals = !lists.normals.empty();

  // Points in tree order, one array a coordinate.
  const auto upload_sorted = [](std::span<const Vec3> points, std::span<const std::size_t> order,
                                DeviceVector<double>& x, DeviceVector<double>& y,
                                DeviceVector<double>& z, const std::string& what) {
    const cuda::SplitCoordinates split = cuda::split_coordinates(points, order);
    x = DeviceVector<double>(split.x, what);
    y = DeviceVector<double>(split.y, what);
    z = DeviceVector<double>(split.z, what);
  };
  // The sources' points come in the lists' order already.
  upload_sorted(lists.sources, {}, d.sx, d.sy, d.sz, "near-field sources");
  if (d.with_normals) upload_sorted(lists.normals, {}, d.nx, d.ny, d.nz, "near-field normals");
  upload_sorted(lists.targets, lists.target_order, d.tx, d.ty, d.tz, "near-field targets");
  if (!lists.target_normals.empty()) {
    upload_sorted(lists.target_normals, lists.target_order, d.tnx, d.tny, d.tnz,
                  "near-field target normals");
    d.target_normal_weight = lists.target_normal_weight;
    d.derivative_apart = lists.derivative_apart;
  }
  const auto to_int = [](std::span<const std::size_t> v) {
    return std::vector<int>(v.begin(), v.end());
  };
  d.source_order = DeviceVector<int>(to_int(lists.source_order), "near-field source order");
  d.target_order = DeviceVector<int>(to_int(lists.target_order), "near-field target order");

  // Ranges: (end position in the leaf's concatenated sources, source - position). Items: a
  // leaf's targets in c slices, c chosen to keep the block's threads busy: a slice of m
  // targets fills P = threads / ceil(m / per_thread) phases, and the leaf's time goes as the
  // sum over its slices of 1 / P.
  std::vector<int2> ranges;
  std::vector<int4> items;
  ranges.reserve(lists.ranges.size());
  double capacity = 0.0;
  for (std::size_t l = 0; l < lists.leaf_targets.size(); ++l) {
    std::size_t position = 0;
    for (std::size_t r = lists.offsets[l]; r < lists.offsets[l + 1]; ++r) {
      const auto [begin, end] = lists.ranges[r];
      if (end < begin || end > lists.source_order.size())
        throw Error("GPU near field: a source range out of bounds");
      position += end - begin;
      ranges.push_back(int2{checked_int(kExecutor, position, "sources of one leaf"),
                            int(std::int64_t(begin) - std::int64_t(position - (end - begin)))});
    }
    const auto [first, last] = lists.leaf_targets[l];
    if (last > lists.targets.size() || first > last)
      throw Error("GPU near field: a target range out of bounds");
    const std::size_t nt = last - first, ns = position;
    if (nt == 0 || ns == 0) continue;
    d.statistics.pairs += nt * ns;
    const std::size_t per_block = std::size_t(threads) * per_thread;
    const std::size_t c_min = (nt + per_block - 1) / per_block;
    std::size_t best_c = c_min;
    double best_cost = 1e300;
    for (std::size_t c = c_min; c < c_min + 8 && c <= nt; ++c) {
      const std::size_t m = (nt + c - 1) / c, slots = (m + per_thread - 1) / per_thread;
      const double cost = double(c) / double(threads / slots);
      if (cost < best_cost * (1.0 - 1e-12)) {
        best_cost = cost;
        best_c = c;
      }
    }
    for (std::size_t c = 0; c < best_c; ++c) {
      const std::size_t t0 = first + nt * c / best_c, t1 = first + nt * (c + 1) / best_c;
      items.push_back(int4{checked_int(kExecutor, lists.offsets[l], "ranges"),
                           checked_int(kExecutor, lists.offsets[l + 1], "ranges"),
                           checked_int(kExecutor, t0, "targets"),
                           checked_int(kExecutor, t1 - t0, "targets")});
      const std::size_t slots = (t1 - t0 + per_thread - 1) / per_thread, phases = threads / slots;
      capacity += double(threads) * per_thread * double((ns + phases - 1) / phases);
    }
  }
  d.num_items = checked_int(kExecutor, items.size(), "work items");
  d.ranges = DeviceVector<int2>(ranges, "near-field ranges");
  d.items = DeviceVector<int4>(items, "near-field items");
  d.statistics.items = items.size();
  d.statistics.thread_utilisation = capacity > 0.0 ? double(d.statistics.pairs) / capacity : 0.0;

  const std::size_t read = lists.source_order.size();
  d.sorted_charges.allocate(read, "near-field charges");
  if (d.with_normals) d.sorted_dipoles.allocate(read, "near-field dipoles");
  // apply's device copies of host arrays (every source's strengths) come with its first call:
  // apply_device, the FMM's path, never needs them.
  d.statistics.device_bytes = d.sx.bytes() * 3 + d.nx.bytes() * 3 + d.tx.bytes() * 3 +
                              d.tnx.bytes() * 3 + d.source_order.bytes() + d.target_order.bytes() +
                              d.items.bytes() + d.ranges.bytes() + d.sorted_charges.bytes() +
                              d.sorted_dipoles.bytes();
}

GpuNearField::~GpuNearField() = default;

void GpuNearField::apply_device(const cplx* device_charges, const cplx* device_dipoles,
                                cplx* device_potential) {
  Impl& d = *impl_;
  // No near pair (targets far from every source: a field grid around a head) adds nothing; its
  // lists hold no source, and so no normal, whatever the FMM's sources have.
  if ((!device_charges && !device_dipoles) || d.num_read == 0) return;
  if (device_dipoles && !d.with_normals) throw Error("GPU near field: dipoles need source normals");
  cuda::NearFieldArgs a;
  if (device_charges) {
    cuda::launch_gather_strengths(d.num_read, d.source_order.data(),
                                  reinterpret_cast<const double2*>(device_charges),
                                  d.sorted_charges.data(), nullptr);
    a.charges = d.sorted_charges.data();
  }
  if (device_dipoles) {
    cuda::launch_gather_strengths(d.num_read, d.source_order.data(),
                                  reinterpret_cast<const double2*>(device_dipoles),
                                  d.sorted_dipoles.data(), nullptr);
    a.dipoles = d.sorted_dipoles.data();
  }
  a.items = d.items.data();
  a.ranges = d.ranges.data();
  a.sx = d.sx.data();
  a.sy = d.sy.data();
  a.sz = d.sz.data();
  a.nx = d.nx.data();
  a.ny = d.ny.data();
  a.nz = d.nz.data();
  a.tx = d.tx.data();
  a.ty = d.ty.data();
  a.tz = d.tz.data();
  a.target_order = d.target_order.data();
  a.potential = reinterpret_cast<double2*>(device_potential);
  a.k = d.k;
  a.screened = d.screened;
  a.skip2 = d.skip2;
  if (d.tnx.size() > 0) {
    a.tnx = d.tnx.data();
    a.tny = d.tny.data();
    a.tnz = d.tnz.data();
    a.weight = double2{d.target_normal_weight.real(), d.target_normal_weight.imag()};
    a.apart = d.derivative_apart;
    a.targets = d.num_targets;
  }
  cuda::launch_near_field(a, d.num_items, d.options.threads, d.options.targets_per_thread, nullptr);
}

void GpuNearField::apply(std::span<const cplx> charges, std::span<const cplx> dipoles,
                         std::span<cplx> potential) {
  Impl& d = *impl_;
  const std::size_t outputs = std::size_t(d.num_targets) * (d.derivative_apart ? 2 : 1);
  if (potential.size() != outputs ||
      (!charges.empty() && charges.size() != std::size_t(d.num_sources)) ||
      (!dipoles.empty() && dipoles.size() != std::size_t(d.num_sources)))
    throw Error("GPU near field: charges, dipoles or potentials of the wrong size");
  if (charges.empty() && dipoles.empty()) return;
  if (d.num_read == 0) return;  // no near pair: nothing to add (and no normal held)
  if (!dipoles.empty() && !d.with_normals)
    throw Error("GPU near field: dipoles need source normals");
  if (d.host_potential.size() == 0) {
    const std::size_t ns = std::size_t(d.num_sources), nt = outputs;
    d.host_charges.allocate(ns, "near-field charges");
    if (d.with_normals) d.host_dipoles.allocate(ns, "near-field dipoles");
    d.host_potential.allocate(nt, "near-field potentials");
    d.staging.allocate(nt);
    d.statistics.device_bytes +=
        d.host_charges.bytes() + d.host_dipoles.bytes() + d.host_potential.bytes();
  }
  if (!charges.empty())
    cuda::check(cudaMemcpy(d.host_charges.data(), charges.data(), charges.size_bytes(),
                           cudaMemcpyHostToDevice),
                "near-field charges to the device");
  if (!dipoles.empty())
    cuda::check(cudaMemcpy(d.host_dipoles.data(), dipoles.data(), dipoles.size_bytes(),
                           cudaMemcpyHostToDevice),
                "near-field dipoles to the device");
  cuda::check(cudaMemsetAsync(d.host_potential.data(), 0, d.host_potential.bytes(), nullptr),
              "cudaMemsetAsync");
  apply_device(charges.empty() ? nullptr : reinterpret_cast<const cplx*>(d.host_charges.data()),
               dipoles.empty() ? nullptr : reinterpret_cast<const cplx*>(d.host_dipoles.data()),
               reinterpret_cast<cplx*>(d.host_potential.data()));
  cuda::check(cudaMemcpy(d.staging.data(), d.host_potential.data(), d.host_potential.bytes(),
                         cudaMemcpyDeviceToHost),
              "near-field potentials from the device");
  const double2* near = d.staging.data();
  const std::size_t n = potential.size();
#pragma omp parallel for schedule(static)
  for (std::size_t i = 0; i < n; ++i) potential[i] += cplx(near[i].x, near[i].y);
}

void GpuNearField::synchronize() { cuda::check(cudaDeviceSynchronize(), "the GPU near field"); }

std::size_t GpuNearField::num_sources() const { return impl_->num_sources; }
std::size_t GpuNearField::num_targets() const { return impl_->num_targets; }
const GpuNearFieldStatistics& GpuNearField::statistics() const { return impl_->statistics; }

std::string GpuNearField::describe() const {
  const Impl& d = *impl_;
  std::ostringstream out;
  out << d.num_items << " blocks of " << d.options.threads << " threads, "
      << d.options.targets_per_thread << " target(s) a thread, "
      << cuda::near_field_shared_bytes(true, d.with_normals, d.options.threads,
                                       d.options.targets_per_thread, d.tnx.size() > 0) /
             1024.0
      << " KiB shared, thread utilisation " << int(100.0 * d.statistics.thread_utilisation + 0.5)
      << "%";
  if (d.tnx.size() > 0) out << ", with the target normal derivative";
  return out.str();
}

}  // namespace fmbem::fmm
