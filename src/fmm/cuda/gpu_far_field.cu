// GpuFarField: the points in tree order, the leaf and parent-child lists, the M2M/L2L matrices
// and gradient terms uploaded once; the expansions stay on the device.
#include <algorithm>
#include <cstdint>
#include <numeric>
#include <sstream>
#include <string>
#include <vector>

#include "cuda_util.cuh"
#include "fmbem/core/error.hpp"
#include "fmbem/fmm/expansions.hpp"
#include "fmbem/fmm/gpu_far_field.hpp"
#include "fmbem/fmm/gpu_m2l.hpp"
#include "fmm_kernels.cuh"

namespace fmbem::fmm {

using cuda::DeviceVector;
using cuda::mib;

using cuda::checked_int;

// Names this executor in errors about 32-bit index limits.
constexpr const char* kExecutor = "GPU FMM";

namespace {

template <class T>
std::size_t bytes_of(const std::vector<T>& v) {
  return v.size() * sizeof(T);
}

// One level of M2M or L2L as tile slots (fmm_kernels.cuh): matrices of the children's level.
struct HostShiftLevel {
  int child_level = 0;
  std::vector<int> in_cell, out_cell;
};

// Column-major copies of the 8 octant matrices of one level (entry (i, j) at j p^2 + i).
void append_column_major(const std::array<std::span<const cplx>, 8>& matrices, int size,
                         std::vector<double2>& out) {
  for (const auto& m : matrices) {
    if (m.size() != std::size_t(size) * size)
      throw Error("GPU FMM: a translation matrix is missing");
    const std::size_t first = out.size();
    out.resize(first + m.size());
    for (int i = 0; i < size; ++i)
      for (int j = 0; j < size; ++j) {
        const cplx v = m[std::size_t(i) * size + j];
        out[first + std::size_t(j) * size + i] = double2{v.real(), v.imag()};
      }
  }
}

}  // namespace

struct GpuFarField::Impl {
  struct ShiftLevel {
    int child_level = 0, slots = 0;
    std::size_t matrix_offset = 0;  // into the level matrices, in double2
    DeviceVector<int> in_cell, out_cell;
  };
  double k = 0.0;
  bool screened = false;
  int order = 0, size = 0, tile = 1;
  std::size_t num_cells = 0;
  bool with_normals = false;
  DeviceVector<double> sx, sy, sz, nx, ny, nz, tx, ty, tz;
  // The target normal derivative (L2P): target normals in tree order (empty: phi alone), the
  // gradient terms by level and Lq slot, the weight.
  DeviceVector<double> tnx, tny, tnz;
  DeviceVector<int> l2p_gradient_offsets;
  DeviceVector<cuda::LocalGradientItem> l2p_gradient;
  cplx target_normal_weight = 0.0;
  bool derivative_apart = false;
  DeviceVector<int> source_order, target_order;
  DeviceVector<cuda::LeafItem> p2m_leaves, l2p_leaves;
  std::vector<std::size_t> p2m_leaf_index;  // per P2M item: its index into tree.leaves()
  std::vector<cuda::LeafItem> p2m_items;    // host copy of every P2M item (restrict_p2m)
  std::vector<std::size_t> p2m_items_index;
  DeviceVector<int> gradient_offsets;
  DeviceVector<cuda::GradientItem> gradient;
  DeviceVector<double> diagonal, first, a, b;
  double p00 = 0.0;
  DeviceVector<double2> m2m_matrices, l2l_matrices;
  std::vector<ShiftLevel> m2m_levels, l2l_levels;  // in the order they run
  // Host copies of the M2M levels with their matrix offsets (restrict_m2m).
  std::vector<HostShiftLevel> m2m_host;
  std::vector<std::size_t> m2m_host_offsets;
  DeviceVector<double2> multipole, local;
  std::size_t bytes = 0;

  static ShiftLevel upload(const HostShiftLevel& host, std::size_t matrix_offset) {
    ShiftLevel lv;
    lv.child_level = host.child_level;
    lv.slots = checked_int(kExecutor, host.in_cell.size() / 8, "cells of a level");
    lv.matrix_offset = matrix_offset;
    lv.in_cell = DeviceVector<int>(host.in_cell, "M2M/L2L lists");
    lv.out_cell = DeviceVector<int>(host.out_cell, "M2M/L2L lists");
    return lv;
  }

  cuda::LegendreTable legendre() const {
    return {p00, diagonal.data(), first.data(), a.data(), b.data()};
  }
};

GpuFarField::GpuFarField(const GpuFarFieldPlan& plan) : impl_(std::make_unique<Impl>()) {
  std::string why;
  if (!gpu_available(&why)) throw Error("GPU FMM: " + why);
  if (!plan.tree) throw Error("GPU FMM: no tree");
  Impl& d = *impl_;
  const Octree& tree = *plan.tree;
  const auto& cells = tree.cells();
  const int p = plan.order, size = p * p, num_levels = tree.levels();
  if (p < 1 || p > max_degree) throw Error("GPU FMM: expansion order out of range");
  if (int(plan.levels.size()) != num_levels) throw Error("GPU FMM: one plan level per tree level");
  d.k = plan.k.magnitude;
  d.screened = plan.k.imaginary;
  d.order = p;
  d.size = size;
  d.num_cells = cells.size();
  d.with_normals = !plan.normals.empty();
  if (!plan.target_normals.empty() && plan.target_normals.size() != plan.targets.size())
    throw Error("GPU FMM: one target normal per target is needed");
  d.target_normal_weight = plan.target_normal_weight;
  d.derivative_apart = plan.derivative_apart && !plan.target_normals.empty();
  d.tile = cuda::shift_parents_per_block(p);
  checked_int(kExecutor, cells.size() * size, "expansion coefficients");

  // Host copies first, so that the bytes needed are known before anything is allocated.
  const auto sorted = [](std::span<const Vec3> points, std::span<const std::size_t> order,
                         std::vector<double>& x, std::vector<double>& y, std::vector<double>& z) {
    cuda::SplitCoordinates split = cuda::split_coordinates(points, order);
    x = std::move(split.x);
    y = std::move(split.y);
    z = std::move(split.z);
  };
  if (plan.sources.size() != plan.source_order.size() ||
      (d.with_normals && plan.normals.size() != plan.sources.size()))
    throw Error("GPU FMM: one source index (and normal) per source point is needed");
  std::vector<double> hsx, hsy, hsz, hnx, hny, hnz, htx, hty, htz;
  // P2M's points come by position already.
  sorted(plan.sources, {}, hsx, hsy, hsz);
  if (d.with_normals) sorted(plan.normals, {}, hnx, hny, hnz);
  sorted(plan.targets, tree.target_order(), htx, hty, htz);
  std::vector<double> htnx, htny, htnz;
  if (!plan.target_normals.empty())
    sorted(plan.target_normals, tree.target_order(), htnx, htny, htnz);
  checked_int(kExecutor, hsx.size(), "sources");
  checked_int(kExecutor, htx.size(), "targets");
  const std::vector<int> hsource_order(plan.source_order.begin(), plan.source_order.end());
  const std::vector<int> htarget_order(tree.target_order().begin(), tree.target_order().end());

  const auto leaf_item = [&](int cell, std::size_t begin, std::size_t end) {
    const Cell& c = cells[cell];
    return cuda::LeafItem{c.center.x, c.center.y, c.center.z, tree.width(c.level),
                          cell,       c.level,    int(begin), int(end)};
  };
  std::vector<cuda::LeafItem> hp2m, hl2p;
  for (const GpuFarFieldPlan::P2MLeaf& leaf : plan.p2m_leaves) {
    const Cell& c = cells[leaf.cell];
    if (c.level < 2 || leaf.begin == leaf.end) continue;
    if (leaf.end < leaf.begin || leaf.end > plan.sources.size() ||
        leaf.end - leaf.begin != c.source_end - c.source_begin)
      throw Error("GPU FMM: a P2M leaf's points do not match its cell");
    hp2m.push_back(leaf_item(leaf.cell, leaf.begin, leaf.end));
    d.p2m_leaf_index.push_back(leaf.leaf_index);
  }
  for (int leaf : plan.target_leaves) {
    const Cell& c = cells[leaf];
    if (c.level < 2 || c.target_begin == c.target_end) continue;
    hl2p.push_back(leaf_item(leaf, c.target_begin, c.target_end));
  }

  // Gradient terms by level and target coefficient (they come sorted by target).
  std::vector<int> hoffsets(std::size_t(num_levels) * (size + 1), 0);
  std::vector<cuda::GradientItem> hgradient;
  for (int level = 0; level < num_levels; ++level) {
    int* offsets = &hoffsets[std::size_t(level) * (size + 1)];
    const auto& terms = plan.levels[level].gradient;
    std::size_t t = 0;
    for (int c = 0; c < size; ++c) {
      offsets[c] = int(hgradient.size());
      for (; t < terms.size() && terms[t].target == c; ++t) {
        const cplx v = std::conj(terms[t].coefficient);
        hgradient.push_back({double2{v.real(), v.imag()}, terms[t].source, terms[t].q});
      }
    }
    offsets[size] = int(hgradient.size());
    if (t != terms.size()) throw Error("GPU FMM: gradient terms out of order");
  }

  // With target normals, the same terms by level and L2P slot (q + 1) (p+1)^2 + source, the
  // coefficients unconjugated (L2P differentiates Rhat itself).
  const int extended = (p + 1) * (p + 1);
  std::vector<int> hl2p_offsets;
  std::vector<cuda::LocalGradientItem> hl2p_gradient;
  if (!plan.target_normals.empty()) {
    hl2p_offsets.assign(std::size_t(num_levels) * (3 * extended + 1), 0);
    for (int level = 0; level < num_levels; ++level) {
      const auto& terms = plan.levels[level].gradient;
      std::vector<std::vector<std::size_t>> by_slot(3 * extended);
      for (std::size_t t = 0; t < terms.size(); ++t) {
        if (terms[t].source < 0 || terms[t].source >= extended || terms[t].q < -1 ||
            terms[t].q > 1 || terms[t].target < 0 || terms[t].target >= size)
          throw Error("GPU FMM: a gradient term out of range");
        by_slot[(terms[t].q + 1) * extended + terms[t].source].push_back(t);
      }
      int* offsets = &hl2p_offsets[std::size_t(level) * (3 * extended + 1)];
      for (int slot = 0; slot < 3 * extended; ++slot) {
        offsets[slot] = int(hl2p_gradient.size());
        for (std::size_t t : by_slot[slot]) {
          const cplx v = terms[t].coefficient;
          hl2p_gradient.push_back({double2{v.real(), v.imag()}, terms[t].target, 0});
        }
      }
      offsets[3 * extended] = int(hl2p_gradient.size());
    }
  }

  // Legendre recurrence up to degree p (P2M with dipoles, L2P with target normals).
  const LegendreRecurrence rec = legendre_recurrence();
  const std::size_t width = p + 1, square = width * width;
  const std::vector<double> hdiagonal(rec.diagonal.begin(), rec.diagonal.begin() + width),
      hfirst(rec.first.begin(), rec.first.begin() + width),
      ha(rec.a.begin(), rec.a.begin() + square), hb(rec.b.begin(), rec.b.begin() + square);

  // M2M: parents of level l (non-leaf, with sources) from their children with sources, from
  // the finest parents up; L2L: children with targets from their parents, from the coarsest
  // down. The matrices are those of the children's level.
  std::vector<HostShiftLevel> hm2m, hl2l;
  std::vector<double2> hm2m_matrices, hl2l_matrices;
  std::vector<std::size_t> m2m_offsets, l2l_offsets;
  for (int level = num_levels - 2; level >= 2; --level) {
    HostShiftLevel lv{level + 1, {}, {}};
    for (int id : tree.cells_at_level(level)) {
      const Cell& c = cells[id];
      if (c.is_leaf() || c.source_begin == c.source_end) continue;
      const std::size_t slot = lv.out_cell.size() / 8;
      lv.in_cell.resize(8 * (slot + 1), -1);
      lv.out_cell.resize(8 * (slot + 1), id);
      for (int ch = c.first_child; ch < c.first_child + c.num_children; ++ch)
        if (cells[ch].source_begin < cells[ch].source_end)
          lv.in_cell[8 * slot + cells[ch].octant] = ch;
    }
    if (lv.out_cell.empty()) continue;
    m2m_offsets.push_back(hm2m_matrices.size());
    append_column_major(plan.levels[level + 1].m2m, size, hm2m_matrices);
    hm2m.push_back(std::move(lv));
  }
  for (int level = 3; level < num_levels; ++level) {
    HostShiftLevel lv{level, {}, {}};
    for (int id : tree.cells_at_level(level - 1)) {
      const Cell& c = cells[id];
      bool any = false;
      for (int ch = c.first_child; ch < c.first_child + c.num_children; ++ch)
        any |= cells[ch].target_begin < cells[ch].target_end;
      if (!any) continue;
      const std::size_t slot = lv.in_cell.size() / 8;
      lv.in_cell.resize(8 * (slot + 1), id);
      lv.out_cell.resize(8 * (slot + 1), -1);
      for (int ch = c.first_child; ch < c.first_child + c.num_children; ++ch)
        if (cells[ch].target_begin < cells[ch].target_end)
          lv.out_cell[8 * slot + cells[ch].octant] = ch;
    }
    if (lv.in_cell.empty()) continue;
    l2l_offsets.push_back(hl2l_matrices.size());
    append_column_major(plan.levels[level].l2l, size, hl2l_matrices);
    hl2l.push_back(std::move(lv));
  }

  std::size_t needed = 2 * d.num_cells * size * sizeof(double2);
  for (const std::vector<double>* v : std::initializer_list<const std::vector<double>*>{
           &hsx, &hsy, &hsz, &hnx, &hny, &hnz, &htx, &hty, &htz, &htnx, &htny, &htnz, &hdiagonal,
           &hfirst, &ha, &hb})
    needed += bytes_of(*v);
  needed += bytes_of(hl2p_offsets) + bytes_of(hl2p_gradient);
  needed += bytes_of(hsource_order) + bytes_of(htarget_order) + bytes_of(hp2m) + bytes_of(hl2p) +
            bytes_of(hoffsets) + bytes_of(hgradient) + bytes_of(hm2m_matrices) +
            bytes_of(hl2l_matrices);
  for (const auto* levels : {&hm2m, &hl2l})
    for (const HostShiftLevel& lv : *levels) needed += bytes_of(lv.in_cell) + bytes_of(lv.out_cell);
  if (plan.memory_limit > 0 && needed > plan.memory_limit)
    throw Error("GPU out of memory: the FMM's far field (P2M, M2M, L2L, L2P) needs " + mib(needed) +
                " of device memory, above the limit of " + mib(plan.memory_limit));
  std::size_t free_bytes = 0, total_bytes = 0;
  cuda::check(cudaMemGetInfo(&free_bytes, &total_bytes), "cudaMemGetInfo");
  if (needed > free_bytes)
    throw Error("GPU out of memory: the FMM's far field (P2M, M2M, L2L, L2P) needs " + mib(needed) +
                " of device memory, " + mib(free_bytes) + " free of " + mib(total_bytes));

  d.sx = DeviceVector<double>(hsx, "FMM sources");
  d.sy = DeviceVector<double>(hsy, "FMM sources");
  d.sz = DeviceVector<double>(hsz, "FMM sources");
  d.nx = DeviceVector<double>(hnx, "FMM normals");
  d.ny = DeviceVector<double>(hny, "FMM normals");
  d.nz = DeviceVector<double>(hnz, "FMM normals");
  d.tx = DeviceVector<double>(htx, "FMM targets");
  d.ty = DeviceVector<double>(hty, "FMM targets");
  d.tz = DeviceVector<double>(htz, "FMM targets");
  d.tnx = DeviceVector<double>(htnx, "FMM target normals");
  d.tny = DeviceVector<double>(htny, "FMM target normals");
  d.tnz = DeviceVector<double>(htnz, "FMM target normals");
  d.l2p_gradient_offsets = DeviceVector<int>(hl2p_offsets, "L2P gradient terms");
  d.l2p_gradient = DeviceVector<cuda::LocalGradientItem>(hl2p_gradient, "L2P gradient terms");
  d.source_order = DeviceVector<int>(hsource_order, "FMM source order");
  d.target_order = DeviceVector<int>(htarget_order, "FMM target order");
  d.p2m_leaves = DeviceVector<cuda::LeafItem>(hp2m, "P2M leaves");
  d.p2m_items = hp2m;
  d.p2m_items_index = d.p2m_leaf_index;
  d.l2p_leaves = DeviceVector<cuda::LeafItem>(hl2p, "L2P leaves");
  d.gradient_offsets = DeviceVector<int>(hoffsets, "gradient terms");
  d.gradient = DeviceVector<cuda::GradientItem>(hgradient, "gradient terms");
  d.p00 = rec.p00;
  d.diagonal = DeviceVector<double>(hdiagonal, "Legendre recurrence");
  d.first = DeviceVector<double>(hfirst, "Legendre recurrence");
  d.a = DeviceVector<double>(ha, "Legendre recurrence");
  d.b = DeviceVector<double>(hb, "Legendre recurrence");
  d.m2m_matrices = DeviceVector<double2>(hm2m_matrices, "M2M matrices");
  d.l2l_matrices = DeviceVector<double2>(hl2l_matrices, "L2L matrices");
  const auto upload_levels = [](const std::vector<HostShiftLevel>& host,
                                const std::vector<std::size_t>& offsets,
                                std::vector<Impl::ShiftLevel>& out) {
    for (std::size_t i = 0; i < host.size(); ++i) out.push_back(Impl::upload(host[i], offsets[i]));
  };
  upload_levels(hm2m, m2m_offsets, d.m2m_levels);
  d.m2m_host = std::move(hm2m);
  d.m2m_host_offsets = std::move(m2m_offsets);
  upload_levels(hl2l, l2l_offsets, d.l2l_levels);
  d.multipole.allocate(d.num_cells * size, "FMM multipole expansions");
  d.local.allocate(d.num_cells * size, "FMM local expansions");
  d.bytes = needed;
}

GpuFarField::~GpuFarField() = default;

namespace {

__global__ void truncate_kernel(double2* expansions, int size, int first_cell, int kept,
                                std::size_t entries) {
  const std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= entries) return;
  const std::size_t dropped = std::size_t(size - kept);
  const std::size_t cell = std::size_t(first_cell) + i / dropped;
  expansions[cell * std::size_t(size) + std::size_t(kept) + i % dropped] = double2{0.0, 0.0};
}

}  // namespace

void truncate_expansions(cplx* device_expansions, int size,
                         std::span<const ExpansionTruncation> levels) {
  constexpr int threads = 256;
  for (const ExpansionTruncation& level : levels) {
    const std::size_t entries = std::size_t(level.cells) * std::size_t(size - level.kept);
    if (entries == 0) continue;
    truncate_kernel<<<unsigned((entries + threads - 1) / threads), threads>>>(
        reinterpret_cast<double2*>(device_expansions), size, level.first_cell, level.kept, entries);
    cuda::check_launch("far field: truncate the expansions to the level orders");
  }
}

cplx* GpuFarField::multipole() { return reinterpret_cast<cplx*>(impl_->multipole.data()); }
cplx* GpuFarField::local() { return reinterpret_cast<cplx*>(impl_->local.data()); }

void GpuFarField::clear_expansions() {
  Impl& d = *impl_;
  cuda::check(cudaMemsetAsync(d.multipole.data(), 0, d.multipole.bytes(), nullptr), "memset");
  cuda::check(cudaMemsetAsync(d.local.data(), 0, d.local.bytes(), nullptr), "memset");
}

void GpuFarField::p2m(const cplx* device_charges, const cplx* device_dipoles,
                      std::size_t leaf_begin, std::size_t leaf_end) {
  Impl& d = *impl_;
  if (device_dipoles && !d.with_normals) throw Error("GPU FMM: dipoles need source normals");
  const auto first = std::lower_bound(d.p2m_leaf_index.begin(), d.p2m_leaf_index.end(), leaf_begin);
  const auto last = std::lower_bound(d.p2m_leaf_index.begin(), d.p2m_leaf_index.end(), leaf_end);
  cuda::P2MArgs a;
  a.leaves = d.p2m_leaves.data() + (first - d.p2m_leaf_index.begin());
  a.sx = d.sx.data();
  a.sy = d.sy.data();
  a.sz = d.sz.data();
  a.nx = d.nx.data();
  a.ny = d.ny.data();
  a.nz = d.nz.data();
  a.source_order = d.source_order.data();
  a.charges = reinterpret_cast<const double2*>(device_charges);
  a.dipoles = reinterpret_cast<const double2*>(device_dipoles);
  a.gradient_offsets = d.gradient_offsets.data();
  a.gradient = d.gradient.data();
  a.legendre = d.legendre();
  a.multipole = d.multipole.data();
  a.k = d.k;
  a.screened = d.screened;
  a.order = d.order;
  cuda::launch_p2m(a, int(last - first), nullptr);
}

void GpuFarField::restrict_p2m(std::span<const std::size_t> leaf_indices) {
  Impl& d = *impl_;
  std::vector<cuda::LeafItem> kept;
  std::vector<std::size_t> kept_index;
  for (std::size_t i = 0; i < d.p2m_items.size(); ++i)
    if (std::binary_search(leaf_indices.begin(), leaf_indices.end(), d.p2m_items_index[i])) {
      kept.push_back(d.p2m_items[i]);
      kept_index.push_back(d.p2m_items_index[i]);
    }
  d.p2m_leaves = DeviceVector<cuda::LeafItem>(kept, "P2M leaves");
  d.p2m_leaf_index = std::move(kept_index);
}

void GpuFarField::restrict_m2m(std::span<const char> own_cells) {
  Impl& d = *impl_;
  if (own_cells.size() != d.num_cells)
    throw Error("GPU FMM: one ownership flag per cell is needed");
  const auto own = [&](int cell) { return cell >= 0 && own_cells[std::size_t(cell)] != 0; };
  std::vector<Impl::ShiftLevel> levels;
  for (std::size_t i = 0; i < d.m2m_host.size(); ++i) {
    const HostShiftLevel& all = d.m2m_host[i];
    // A slot is one parent (its 8 out entries); kept where the part owns it, with the children
    // the part owns (the others hold no partial multipole of this part).
    HostShiftLevel part{all.child_level, {}, {}};
    for (std::size_t slot = 0; slot < all.out_cell.size() / 8; ++slot) {
      if (!own(all.out_cell[8 * slot])) continue;
      for (int o = 0; o < 8; ++o) {
        const int child = all.in_cell[8 * slot + o];
        part.in_cell.push_back(own(child) ? child : -1);
        part.out_cell.push_back(all.out_cell[8 * slot + o]);
      }
    }
    if (!part.out_cell.empty()) levels.push_back(Impl::upload(part, d.m2m_host_offsets[i]));
  }
  d.m2m_levels = std::move(levels);
}

void GpuFarField::m2m() {
  Impl& d = *impl_;
  for (const Impl::ShiftLevel& lv : d.m2m_levels)
    cuda::launch_shift(
        {lv.in_cell.data(), lv.out_cell.data(), d.m2m_matrices.data() + lv.matrix_offset,
         d.multipole.data(), d.multipole.data(), d.order},
        lv.slots, d.tile, nullptr);
}

void GpuFarField::l2l() {
  Impl& d = *impl_;
  for (const Impl::ShiftLevel& lv : d.l2l_levels)
    cuda::launch_shift(
        {lv.in_cell.data(), lv.out_cell.data(), d.l2l_matrices.data() + lv.matrix_offset,
         d.local.data(), d.local.data(), d.order},
        lv.slots, d.tile, nullptr);
}

void GpuFarField::l2p(cplx* device_potential) {
  Impl& d = *impl_;
  cuda::L2PArgs a;
  a.leaves = d.l2p_leaves.data();
  a.tx = d.tx.data();
  a.ty = d.ty.data();
  a.tz = d.tz.data();
  a.target_order = d.target_order.data();
  a.legendre = d.legendre();
  a.local = d.local.data();
  a.potential = reinterpret_cast<double2*>(device_potential);
  a.k = d.k;
  a.screened = d.screened;
  a.order = d.order;
  if (d.tnx.size() > 0) {
    a.nx = d.tnx.data();
    a.ny = d.tny.data();
    a.nz = d.tnz.data();
    a.gradient_offsets = d.l2p_gradient_offsets.data();
    a.gradient = d.l2p_gradient.data();
    a.weight = double2{d.target_normal_weight.real(), d.target_normal_weight.imag()};
    a.apart = d.derivative_apart;
    a.targets = int(d.tx.size());
    for (int q = -1; q <= 1; ++q) {
      const HarmonicGradient g = harmonic_gradient(q);
      a.gx[q + 1] = double2{g.x.real(), g.x.imag()};
      a.gy[q + 1] = double2{g.y.real(), g.y.imag()};
      a.gz[q + 1] = double2{g.z.real(), g.z.imag()};
    }
  }
  cuda::launch_l2p(a, int(d.l2p_leaves.size()), nullptr);
}

void GpuFarField::zero_potential(cplx* device_potential) {
  cuda::check(cudaMemsetAsync(
                  device_potential, 0,
                  impl_->tx.size() * (impl_->derivative_apart ? 2 : 1) * sizeof(double2), nullptr),
              "memset");
}

void GpuFarField::synchronize() { cuda::check(cudaDeviceSynchronize(), "the GPU FMM"); }

void GpuFarField::download_multipoles(std::span<cplx> host) {
  Impl& d = *impl_;
  if (host.size() != d.multipole.size()) throw Error("GPU FMM: multipole array of the wrong size");
  cuda::check(
      cudaMemcpy(host.data(), d.multipole.data(), d.multipole.bytes(), cudaMemcpyDeviceToHost),
      "multipoles from the device");
}

void GpuFarField::upload_multipoles(std::span<const cplx> host) {
  Impl& d = *impl_;
  if (host.size() != d.multipole.size()) throw Error("GPU FMM: multipole array of the wrong size");
  cuda::check(
      cudaMemcpy(d.multipole.data(), host.data(), d.multipole.bytes(), cudaMemcpyHostToDevice),
      "multipoles to the device");
}

std::size_t GpuFarField::device_bytes() const { return impl_->bytes; }

std::string GpuFarField::describe() const {
  const Impl& d = *impl_;
  std::ostringstream out;
  out << "P2M " << d.p2m_leaves.size() << " leaf blocks, M2M " << d.m2m_levels.size() << " and L2L "
      << d.l2l_levels.size() << " level launches (up to " << d.tile << " parents a block), L2P "
      << d.l2p_leaves.size() << " leaf blocks";
  if (d.tnx.size() > 0) out << " (with the target normal derivative)";
  return out.str();
}

}  // namespace fmbem::fmm
