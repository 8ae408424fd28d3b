// The diagonal levels of a wideband FMM on the GPU (gpu_diagonal_levels.hpp). Kernels:
//   conversions       one ZGEMM per apply and direction over the conversion level's cells
//                     (multipoles by cell id, signatures by slot): dense, compute-bound.
//   interpolation     the separable pass in three kernels over a batch of cells: the DFT in
//                     phi (a thread per (cell, theta node, mode)), the per-mode theta matrices
//                     (a thread per (cell, node, mode), the matrices stored mode-fastest so
//                     that a warp reads them coalesced), the inverse DFT with the shift phases
//                     (a thread per output direction; upward, each parent sums its children,
//                     so no atomics). About 3 L_p^3 multiply-adds a cell: compute-bound.
//   diagonal M2L      a block row per target cell, a thread per direction summing
//                     transfer .* outgoing over the cell's pairs: memory-bound (two complex
//                     loads a multiply-add; the pairs' sources are the reuse L2 may catch).
#include <cuda_runtime.h>

#include <algorithm>
#include <iomanip>
#include <numeric>
#include <sstream>

#include "cublas_loader.cuh"
#include "cuda_util.cuh"
#include "fmbem/core/device_complex.hpp"
#include "fmbem/core/error.hpp"
#include "gpu_diagonal_levels.hpp"

namespace fmbem::fmm {

namespace {

using C = DeviceComplex;
using cuda::check_launch;
using cuda::DeviceVector;

constexpr int block_threads = 256;
// Scratch of the separable passes (complex entries each of the two arrays): batches of cells
// are cut to fit.
constexpr std::size_t scratch_cap = std::size_t(1) << 24;

unsigned blocks_for(std::size_t n) { return unsigned((n + block_threads - 1) / block_threads); }

// Threads per block along a grid's directions: a multiple of 32, at most block_threads.
int direction_threads(int grid_size) { return std::min(block_threads, (grid_size + 31) / 32 * 32); }

DeviceVector<C> upload_complex(std::span<const cplx> host, const std::string& what) {
  return DeviceVector<C>(reinterpret_cast<const C*>(host.data()), host.size(), what);
}

template <class T>
DeviceVector<T> upload(const std::vector<T>& host, const std::string& what) {
  return DeviceVector<T>(host, what);
}

// A part's conversion level: gathered[cell] = expansions[held[cell]] (zero where held is -1).
__global__ void gather_cells_kernel(std::size_t entries, int size, const int* held, const C* from,
                                    C* gathered) {
  const std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= entries) return;
  const int cell = held[i / std::size_t(size)];
  gathered[i] =
      cell < 0 ? C(0.0) : from[std::size_t(cell) * std::size_t(size) + i % std::size_t(size)];
}

// expansions[held[cell]] += gathered[cell] where held is not -1.
__global__ void scatter_add_cells_kernel(std::size_t entries, int size, const int* held,
                                         const C* gathered, C* to) {
  const std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= entries) return;
  const int cell = held[i / std::size_t(size)];
  if (cell >= 0) to[std::size_t(cell) * std::size_t(size) + i % std::size_t(size)] += gathered[i];
}

__global__ void diagonal_m2l_kernel(int grid_size, const int* target_slot, const int* pair_start,
                                    const int* source_slot, const int* group, const C* transfer,
                                    const C* outgoing, C* incoming) {
  const int g = int(blockIdx.y * blockDim.x + threadIdx.x);
  if (g >= grid_size) return;
  const int t = blockIdx.x;
  C sum(0.0);
  for (int at = pair_start[t]; at < pair_start[t + 1]; ++at)
    sum += transfer[std::size_t(group[at]) * grid_size + g] *
           outgoing[std::size_t(source_slot[at]) * grid_size + g];
  incoming[std::size_t(target_slot[t]) * grid_size + g] += sum;
}

// spectrum[job][i][m] = sum_j in[slot[job]][i][j] (times phases[octant[job]][i][j] where
// given) forward[j][m].
__global__ void forward_dft_kernel(std::size_t entries, int rows, int cols, int modes,
                                   const int* in_slot, const unsigned char* octant, const C* phases,
                                   const C* in, const C* forward, C* spectrum) {
  const std::size_t idx = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (idx >= entries) return;
  const int m = int(idx % modes);
  const int i = int(idx / modes % rows);
  const std::size_t job = idx / (std::size_t(modes) * rows);
  const std::size_t size = std::size_t(rows) * cols;
  const C* x = in + std::size_t(in_slot[job]) * size + std::size_t(i) * cols;
  const C* phase =
      phases ? phases + std::size_t(octant[job]) * size + std::size_t(i) * cols : nullptr;
  C sum(0.0);
  for (int j = 0; j < cols; ++j) {
    const C v = phase ? x[j] * phase[j] : x[j];
    sum += v * forward[std::size_t(j) * modes + m];
  }
  spectrum[idx] = sum;
}

// mixed[job][r][m] = sum_i theta[r][i][m] spectrum[job][i][m].
__global__ void theta_kernel(std::size_t entries, int rows_in, int rows_out, int modes,
                             const double* theta, const C* spectrum, C* mixed) {
  const std::size_t idx = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (idx >= entries) return;
  const int m = int(idx % modes);
  const int r = int(idx / modes % rows_out);
  const std::size_t job = idx / (std::size_t(modes) * rows_out);
  const double* a = theta + std::size_t(r) * rows_in * modes + m;
  const C* x = spectrum + job * rows_in * modes + m;
  C sum(0.0);
  for (int i = 0; i < rows_in; ++i) sum += a[std::size_t(i) * modes] * x[std::size_t(i) * modes];
  mixed[idx] = sum;
}

// out[out_slot[group]][r][j] += sum over the group's jobs of (sum_m mixed[job][r][m]
// inverse[m][j]) (times phases[octant[job]][r][j] where given).
__global__ void inverse_dft_kernel(std::size_t entries, int rows, int cols, int modes,
                                   const int* group_start, int first_job, const int* out_slot,
                                   const unsigned char* octant, const C* phases, const C* mixed,
                                   const C* inverse, C* out) {
  const std::size_t idx = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (idx >= entries) return;
  const std::size_t size = std::size_t(rows) * cols;
  const std::size_t g = idx % size;
  const std::size_t group = idx / size;
  const int r = int(g / cols), j = int(g % cols);
  C total(0.0);
  for (int job = group_start[group]; job < group_start[group + 1]; ++job) {
    const C* v = mixed + (std::size_t(job - first_job) * rows + r) * modes;
    C sum(0.0);
    for (int m = 0; m < modes; ++m) sum += v[m] * inverse[std::size_t(m) * cols + j];
    total += phases ? sum * phases[std::size_t(octant[job]) * size + g] : sum;
  }
  out[std::size_t(out_slot[group]) * size + g] += total;
}

}  // namespace

// A change of bandwidth between two adjacent levels for a set of jobs (cells in), grouped by
// the cell each group writes: upward, a parent's children; downward, one child each.
struct SeparablePass {
  int rows_in = 0, cols_in = 0, rows_out = 0, cols_out = 0, modes = 0;
  std::size_t in_offset = 0, out_offset = 0;  // the levels' signatures in the arrays
  DeviceVector<C> forward, inverse;
  DeviceVector<double> theta;  // [r][i][m]
  DeviceVector<int> in_slot, group_start, out_slot;
  DeviceVector<unsigned char> octant;
  const C* phases_in = nullptr;   // multiplied into the input (downward)
  const C* phases_out = nullptr;  // multiplied into each job's output (upward)
  std::vector<int> host_group_start;
  std::size_t job_entries() const {
    return std::size_t(modes) * std::size_t(std::max(rows_in, rows_out));
  }
};

struct DiagonalLevelOnDevice {
  int grid_size = 0;
  std::size_t offset = 0, cells = 0;
  DeviceVector<C> transfer, up_phases, down_phases;
  DeviceVector<int> target_slot, pair_start, source_slot, group;
  int targets = 0;
};

struct GpuDiagonalLevels::Impl {
  int order = 0;
  int conversion_cells = 0, conversion_first_cell = 0;
  // A part's conversion level: per cell, the FMM's cell holding its expansions (-1: none), and
  // the same where the part's targets lie below (-1 elsewhere); the expansions gathered by the
  // level's cells, and their host copy for the sum over the parts.
  bool part = false;
  DeviceVector<int> held, held_targets;
  DeviceVector<C> gathered;
  std::vector<cplx> host_gathered;
  std::size_t signature_entries = 0, pairs = 0;
  std::vector<DiagonalLevelOnDevice> levels;
  std::vector<SeparablePass> up, down;  // up: parent level first_level + i; down: child level
  DeviceVector<C> outgoing, incoming, spectrum, mixed, to_signature, to_local;
  std::unique_ptr<cuda::CublasHandle> cublas;
  std::string bandwidths;
  std::size_t scratch_entries = 0;

  void run(SeparablePass& pass, const C* in, C* out);
};

namespace {

// The theta matrices (mode-major: [m][r][i]) stored mode-fastest ([r][i][m]).
std::vector<double> mode_fastest(std::span<const double> theta, int modes, int rows, int cols) {
  std::vector<double> out(theta.size());
  for (int m = 0; m < modes; ++m)
    for (int r = 0; r < rows; ++r)
      for (int i = 0; i < cols; ++i)
        out[(std::size_t(r) * cols + i) * modes + m] =
            theta[(std::size_t(m) * rows + r) * cols + i];
  return out;
}

// A pass from a grid of bandwidth `from` to one of bandwidth `to` through the modes |m| <= lc,
// its factors uploaded (theta stored mode-fastest).
SeparablePass separable_pass(int from, int to, int lc, std::span<const cplx> forward,
                             std::span<const cplx> inverse, std::span<const double> theta) {
  SeparablePass pass;
  pass.rows_in = from + 1;
  pass.cols_in = 2 * from + 2;
  pass.rows_out = to + 1;
  pass.cols_out = 2 * to + 2;
  pass.modes = 2 * lc + 1;
  pass.forward = upload_complex(forward, "diagonal levels: DFT");
  pass.inverse = upload_complex(inverse, "diagonal levels: DFT");
  pass.theta = upload(mode_fastest(theta, pass.modes, to + 1, from + 1), "diagonal levels: theta");
  return pass;
}

// The pass's jobs (cells read, the cells each group writes, the octants), host_group_start
// holding each group's first job; closes the group list.
void upload_jobs(SeparablePass& pass, const std::vector<int>& in_slot,
                 const std::vector<int>& out_slot, const std::vector<unsigned char>& octant) {
  pass.host_group_start.push_back(int(in_slot.size()));
  pass.in_slot = upload(in_slot, "diagonal levels: interpolation");
  pass.out_slot = upload(out_slot, "diagonal levels: interpolation");
  pass.octant = upload(octant, "diagonal levels: interpolation");
  pass.group_start = upload(pass.host_group_start, "diagonal levels: interpolation");
}

}  // namespace

GpuDiagonalLevels::GpuDiagonalLevels(const GpuDiagonalPlan& plan)
    : impl_(std::make_unique<Impl>()) {
  Impl& d = *impl_;
  const DiagonalLevels& levels = *plan.levels;
  const auto& cells = levels.cells;
  d.order = plan.order;
  std::ostringstream bandwidths;
  // Per level: grid, transfer functions, shift phases, pairs by target.
  for (std::size_t i = 0; i < levels.levels.size(); ++i) {
    const DiagonalLevels::Level& lv = levels.levels[i];
    const DiagonalLevelPlan& planned = levels.plan.levels[i];
    DiagonalLevelOnDevice& out = d.levels.emplace_back();
    const int grid_size = int(lv.grid->size());
    out.grid_size = grid_size;
    out.offset = d.signature_entries;
    out.cells = lv.cells;
    d.signature_entries += lv.cells * lv.grid->size();
    bandwidths << (i ? " " : "") << lv.grid->bandwidth();
    out.transfer = upload_complex(lv.transfer, "diagonal levels: transfer functions");
    if (lv.from_children) {
      std::vector<cplx> up(8 * lv.grid->size()), down(8 * lv.grid->size());
      for (int o = 0; o < 8; ++o) {
        std::copy(lv.up_phases[o].begin(), lv.up_phases[o].end(), up.begin() + o * grid_size);
        std::copy(lv.down_phases[o].begin(), lv.down_phases[o].end(), down.begin() + o * grid_size);
      }
      out.up_phases = upload_complex(up, "diagonal levels: shift phases");
      out.down_phases = upload_complex(down, "diagonal levels: shift phases");
    }
    // The pairs by target (a stable order: the CPU's).
    std::vector<std::size_t> by_target(planned.pairs.size());
    std::iota(by_target.begin(), by_target.end(), std::size_t(0));
    std::stable_sort(by_target.begin(), by_target.end(), [&](std::size_t a, std::size_t b) {
      return planned.pairs[a].target < planned.pairs[b].target;
    });
    std::vector<int> target_slot, pair_start, source_slot, group;
    for (std::size_t at = 0; at < by_target.size(); ++at) {
      const M2LPair& pair = planned.pairs[by_target[at]];
      if (at == 0 || pair.target != planned.pairs[by_target[at - 1]].target) {
        target_slot.push_back(int(lv.slot(pair.target)));
        pair_start.push_back(int(at));
      }
      source_slot.push_back(int(lv.slot(pair.source)));
      group.push_back(pair.matrix);
    }
    pair_start.push_back(int(by_target.size()));
    d.pairs += by_target.size();
    out.targets = int(target_slot.size());
    out.target_slot = upload(target_slot, "diagonal levels: M2L targets");
    out.pair_start = upload(pair_start, "diagonal levels: M2L pairs");
    out.source_slot = upload(source_slot, "diagonal levels: M2L sources");
    out.group = upload(group, "diagonal levels: M2L groups");
  }
  d.bandwidths = bandwidths.str();
  // The separable passes between each level and the next.
  for (std::size_t i = 0; i + 1 < levels.levels.size(); ++i) {
    const DiagonalLevels::Level& parent = levels.levels[i];
    const DiagonalLevels::Level& child = levels.levels[i + 1];
    const SphereInterpolator::Factors f = parent.from_children->factors();
    const int lc = child.grid->bandwidth(), lp = parent.grid->bandwidth();
    {  // upward: the children with sources of each parent that is no leaf
      SeparablePass& pass =
          d.up.emplace_back(separable_pass(lc, lp, lc, f.child_forward, f.parent_inverse, f.up));
      pass.in_offset = d.levels[i + 1].offset;
      pass.out_offset = d.levels[i].offset;
      pass.phases_out = d.levels[i].up_phases.data();
      std::vector<int> in_slot, out_slot;
      std::vector<unsigned char> octant;
      for (int id = parent.first_cell; id < parent.first_cell + int(parent.cells); ++id) {
        const Cell& cell = cells[std::size_t(id)];
        if (cell.is_leaf() || !levels.has_sources[std::size_t(id)]) continue;
        pass.host_group_start.push_back(int(in_slot.size()));
        out_slot.push_back(int(parent.slot(id)));
        for (int ch = cell.first_child; ch < cell.first_child + cell.num_children; ++ch) {
          if (!levels.has_sources[std::size_t(ch)]) continue;
          in_slot.push_back(int(child.slot(ch)));
          octant.push_back(static_cast<unsigned char>(cells[ch].octant));
        }
      }
      upload_jobs(pass, in_slot, out_slot, octant);
    }
    {  // downward: every child with targets from its parent
      SeparablePass& pass = d.down.emplace_back(
          separable_pass(lp, lc, lc, f.parent_forward, f.child_inverse, f.down));
      pass.in_offset = d.levels[i].offset;
      pass.out_offset = d.levels[i + 1].offset;
      pass.phases_in = d.levels[i].down_phases.data();
      std::vector<int> in_slot, out_slot;
      std::vector<unsigned char> octant;
      for (int id = child.first_cell; id < child.first_cell + int(child.cells); ++id) {
        const Cell& cell = cells[std::size_t(id)];
        if (!levels.wanted[std::size_t(id)]) continue;
        pass.host_group_start.push_back(int(in_slot.size()));
        in_slot.push_back(int(parent.slot(cell.parent)));
        out_slot.push_back(int(child.slot(id)));
        octant.push_back(static_cast<unsigned char>(cell.octant));
      }
      upload_jobs(pass, in_slot, out_slot, octant);
    }
  }
  // Scratch: the largest batch any pass needs, at most scratch_cap (a pass's batches are cut
  // to fit), at least one job of each pass.
  for (const auto* passes : {&d.up, &d.down})
    for (const SeparablePass& pass : *passes) {
      const std::size_t jobs = std::size_t(pass.host_group_start.back());
      d.scratch_entries =
          std::max(d.scratch_entries,
                   std::max(pass.job_entries(), std::min(scratch_cap, jobs * pass.job_entries())));
    }
  d.spectrum.allocate(d.scratch_entries, "diagonal levels: interpolation scratch");
  d.mixed.allocate(d.scratch_entries, "diagonal levels: interpolation scratch");
  d.outgoing.allocate(d.signature_entries, "diagonal levels: signatures");
  d.incoming.allocate(d.signature_entries, "diagonal levels: signatures");
  // The conversion level's matrices.
  const DiagonalLevels::Level& last = levels.levels.back();
  d.conversion_cells = int(last.cells);
  d.conversion_first_cell = last.first_cell;
  d.part = levels.part;
  if (d.part) {
    std::vector<int> held_targets(levels.held.size(), -1);
    for (std::size_t i = 0; i < held_targets.size(); ++i)
      if (levels.wanted[std::size_t(last.first_cell) + i]) held_targets[i] = levels.held[i];
    d.held = upload(levels.held, "diagonal levels: conversion cells");
    d.held_targets = upload(held_targets, "diagonal levels: conversion cells");
    const std::size_t entries = last.cells * std::size_t(plan.order) * std::size_t(plan.order);
    d.gathered.allocate(entries, "diagonal levels: conversion expansions");
    d.host_gathered.resize(entries);
  }
  d.to_signature = upload_complex(levels.to_signature, "diagonal levels: conversions");
  d.to_local = upload_complex(levels.to_local, "diagonal levels: conversions");
  d.cublas = std::make_unique<cuda::CublasHandle>();
}

GpuDiagonalLevels::~GpuDiagonalLevels() = default;

void GpuDiagonalLevels::clear() {
  Impl& d = *impl_;
  if (d.signature_entries == 0) return;
  cuda::check(cudaMemsetAsync(d.outgoing.data(), 0, d.outgoing.bytes()), "diagonal levels: clear");
  cuda::check(cudaMemsetAsync(d.incoming.data(), 0, d.incoming.bytes()), "diagonal levels: clear");
}

void GpuDiagonalLevels::Impl::run(SeparablePass& pass, const C* in, C* out) {
  const std::size_t groups = pass.host_group_start.size() - 1;
  const std::size_t per_job = pass.job_entries();
  std::size_t first = 0;
  while (first < groups) {
    // The groups whose jobs fit the scratch (at least one group).
    std::size_t last = first + 1;
    while (last < groups &&
           std::size_t(pass.host_group_start[last + 1] - pass.host_group_start[first]) * per_job <=
               scratch_entries)
      ++last;
    const int job_begin = pass.host_group_start[first];
    const std::size_t jobs = std::size_t(pass.host_group_start[last] - job_begin);
    if (jobs > 0) {
      const std::size_t spectra = jobs * pass.rows_in * pass.modes;
      forward_dft_kernel<<<blocks_for(spectra), block_threads>>>(
          spectra, pass.rows_in, pass.cols_in, pass.modes, pass.in_slot.data() + job_begin,
          pass.octant.data() + job_begin, pass.phases_in, in, pass.forward.data(), spectrum.data());
      check_launch("diagonal levels: DFT");
      const std::size_t mixes = jobs * pass.rows_out * pass.modes;
      theta_kernel<<<blocks_for(mixes), block_threads>>>(mixes, pass.rows_in, pass.rows_out,
                                                         pass.modes, pass.theta.data(),
                                                         spectrum.data(), mixed.data());
      check_launch("diagonal levels: theta matrices");
      const std::size_t outputs = (last - first) * pass.rows_out * pass.cols_out;
      inverse_dft_kernel<<<blocks_for(outputs), block_threads>>>(
          outputs, pass.rows_out, pass.cols_out, pass.modes, pass.group_start.data() + first,
          job_begin, pass.out_slot.data() + first, pass.octant.data(), pass.phases_out,
          mixed.data(), pass.inverse.data(), out);
      check_launch("diagonal levels: inverse DFT");
    }
    first = last;
  }
}

void GpuDiagonalLevels::upward(const cplx* multipoles,
                               const std::function<void(std::span<cplx> values)>& parts_sum) {
  Impl& d = *impl_;
  // The conversion level: signatures (grid x cells, column-major) += to_signature (grid x p^2,
  // row-major: its transpose column-major) times the multipoles (p^2 x cells).
  const DiagonalLevelOnDevice& last = d.levels.back();
  const int p2 = d.order * d.order;
  const cuDoubleComplex one{1.0, 0.0};
  const C* conversion_multipoles = reinterpret_cast<const C*>(multipoles) +
                                   std::size_t(d.conversion_first_cell) * std::size_t(p2);
  if (d.part) {
    // A part's partial multipoles, by the level's cells, summed over the parts on the host.
    if (!parts_sum)
      throw Error("FMM: a distributed part's diagonal levels need the sum over the parts");
    const std::size_t entries = d.gathered.size();
    if (entries > 0) {
      gather_cells_kernel<<<blocks_for(entries), block_threads>>>(
          entries, p2, d.held.data(), reinterpret_cast<const C*>(multipoles), d.gathered.data());
      check_launch("diagonal levels: gather the conversion level");
      cuda::check(cudaMemcpy(d.host_gathered.data(), d.gathered.data(), d.gathered.bytes(),
                             cudaMemcpyDeviceToHost),
                  "diagonal levels: the conversion level to the host");
    }
    parts_sum(d.host_gathered);
    if (entries > 0)
      cuda::check(cudaMemcpy(d.gathered.data(), d.host_gathered.data(), d.gathered.bytes(),
                             cudaMemcpyHostToDevice),
                  "diagonal levels: the conversion level from the host");
    conversion_multipoles = d.gathered.data();
  }
  if (d.conversion_cells > 0)
    cuda::check_cublas(
        cuda::cublas().zgemm(
            d.cublas->get(), CUBLAS_OP_T, CUBLAS_OP_N, last.grid_size, d.conversion_cells, p2, &one,
            reinterpret_cast<const cuDoubleComplex*>(d.to_signature.data()), p2,
            reinterpret_cast<const cuDoubleComplex*>(conversion_multipoles), p2, &one,
            reinterpret_cast<cuDoubleComplex*>(d.outgoing.data() + last.offset), last.grid_size),
        "diagonal levels: multipole to signature");
  for (std::size_t i = d.up.size(); i-- > 0;) {
    SeparablePass& pass = d.up[i];
    d.run(pass, d.outgoing.data() + pass.in_offset, d.outgoing.data() + pass.out_offset);
  }
}

void GpuDiagonalLevels::m2l() {
  Impl& d = *impl_;
  for (DiagonalLevelOnDevice& lv : d.levels) {
    if (lv.targets == 0) continue;
    const int threads = direction_threads(lv.grid_size);
    const dim3 grid(unsigned(lv.targets), unsigned((lv.grid_size + threads - 1) / threads));
    diagonal_m2l_kernel<<<grid, threads>>>(
        lv.grid_size, lv.target_slot.data(), lv.pair_start.data(), lv.source_slot.data(),
        lv.group.data(), lv.transfer.data(), d.outgoing.data() + lv.offset,
        d.incoming.data() + lv.offset);
    check_launch("diagonal levels: M2L");
  }
}

void GpuDiagonalLevels::downward(cplx* locals) {
  Impl& d = *impl_;
  for (SeparablePass& pass : d.down)
    d.run(pass, d.incoming.data() + pass.in_offset, d.incoming.data() + pass.out_offset);
  // locals (p^2 x cells) += to_local (p^2 x grid, row-major) times the local signatures.
  const DiagonalLevelOnDevice& last = d.levels.back();
  const int p2 = d.order * d.order;
  const cuDoubleComplex one{1.0, 0.0}, zero{0.0, 0.0};
  if (d.conversion_cells == 0) return;
  // A part's locals by the level's cells first, then added to the cells holding them.
  cuDoubleComplex* conversion_locals =
      d.part ? reinterpret_cast<cuDoubleComplex*>(d.gathered.data())
             : reinterpret_cast<cuDoubleComplex*>(locals) +
                   std::size_t(d.conversion_first_cell) * std::size_t(p2);
  cuda::check_cublas(
      cuda::cublas().zgemm(
          d.cublas->get(), CUBLAS_OP_T, CUBLAS_OP_N, p2, d.conversion_cells, last.grid_size, &one,
          reinterpret_cast<const cuDoubleComplex*>(d.to_local.data()), last.grid_size,
          reinterpret_cast<const cuDoubleComplex*>(d.incoming.data() + last.offset), last.grid_size,
          d.part ? &zero : &one, conversion_locals, p2),
      "diagonal levels: signature to local");
  if (d.part) {
    const std::size_t entries = d.gathered.size();
    scatter_add_cells_kernel<<<blocks_for(entries), block_threads>>>(
        entries, p2, d.held_targets.data(), d.gathered.data(), reinterpret_cast<C*>(locals));
    check_launch("diagonal levels: scatter the conversion level");
  }
}

std::size_t GpuDiagonalLevels::device_bytes() const {
  const Impl& d = *impl_;
  std::size_t bytes = d.outgoing.bytes() + d.incoming.bytes() + d.spectrum.bytes() +
                      d.mixed.bytes() + d.to_signature.bytes() + d.to_local.bytes() +
                      d.held.bytes() + d.held_targets.bytes() + d.gathered.bytes();
  for (const DiagonalLevelOnDevice& lv : d.levels)
    bytes += lv.transfer.bytes() + lv.up_phases.bytes() + lv.down_phases.bytes() +
             lv.target_slot.bytes() + lv.pair_start.bytes() + lv.source_slot.bytes() +
             lv.group.bytes();
  for (const auto* passes : {&d.up, &d.down})
    for (const SeparablePass& pass : *passes)
      bytes += pass.forward.bytes() + pass.inverse.bytes() + pass.theta.bytes() +
               pass.in_slot.bytes() + pass.group_start.bytes() + pass.out_slot.bytes() +
               pass.octant.bytes();
  return bytes;
}

std::string GpuDiagonalLevels::describe() const {
  const Impl& d = *impl_;
  std::ostringstream out;
  out << d.levels.size() << " diagonal levels (bandwidths " << d.bandwidths << "), " << d.pairs
      << " diagonal pairs, " << std::fixed << std::setprecision(1) << device_bytes() / 1048576.0
      << " MiB of device memory";
  return out.str();
}

}  // namespace fmbem::fmm
