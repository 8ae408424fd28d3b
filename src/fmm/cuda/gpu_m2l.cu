// GpuM2L: the translation matrices built on the device (m2l_matrices.cu), the plan's lists
// rearranged for each scheme and uploaded once; apply runs the scheme's kernels, each level on
// its own (blocking) stream, so the levels overlap and the whole is ordered with the default
// stream.
#include <algorithm>
#include <array>
#include <cstdint>
#include <numeric>
#include <sstream>
#include <string>
#include <vector>

#include "cublas_loader.cuh"
#include "cuda_util.cuh"
#include "fmbem/core/error.hpp"
#include "fmbem/fmm/gpu_m2l.hpp"
#include "m2l_kernels.cuh"
#include "m2l_matrices.cuh"

namespace fmbem::fmm {

using cuda::DeviceVector;
using cuda::mib;

using cuda::checked_int;

// Names this executor in errors about 32-bit index limits.
constexpr const char* kExecutor = "GPU M2L";

bool gpu_available(std::string* why) {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess || count == 0) {
    cudaGetLastError();
    if (why)
      *why = status == cudaErrorInsufficientDriver || status == cudaErrorNoDevice || count == 0
                 ? std::string("no CUDA device (or no NVIDIA driver) on this machine")
                 : std::string("no usable CUDA device (") + cudaGetErrorString(status) + ")";
    return false;
  }
  int device = 0, major = 0, minor = 0;
  cudaGetDevice(&device);
  cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device);
  cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device);
  if (major < 9) {
    if (why)
      *why = "the CUDA device has compute capability " + std::to_string(major) + "." +
             std::to_string(minor) + "; fmbem's kernels are built for 9.0 (Hopper) and newer";
    return false;
  }
  return true;
}

namespace {

constexpr std::size_t kComplexBytes = sizeof(double2);
// Shared memory of one block: the most, and what keeps two blocks per multiprocessor.
constexpr std::size_t kSharedLimit = 227 * 1024;
constexpr std::size_t kSharedBudget = kSharedLimit / 2;

// Cells of one level grouped into chunks of 2B x 2B x 2B cells (B x B x B clusters).
std::uint64_t chunk_key(const std::array<int, 3>& c, int chunk_cells) {
  return (std::uint64_t(c[0] / chunk_cells) << 42) | (std::uint64_t(c[1] / chunk_cells) << 21) |
         std::uint64_t(c[2] / chunk_cells);
}

int octant_of(const std::array<int, 3>& c) {
  return (c[0] & 1) | (c[1] & 1) << 1 | (c[2] & 1) << 2;
}

}  // namespace

struct GpuM2L::Impl {
  struct Level {
    int level = 0;
    const double2* matrices = nullptr;  // this level's part of Impl::matrices
    // basic
    int blocks = 0, staged = 1;
    DeviceVector<int> targets, offsets;
    DeviceVector<int2> entries;
    // sibling
    int clusters = 0;
    DeviceVector<int> cluster_targets, item_offsets;
    DeviceVector<cuda::SiblingItem> sibling_items;
    // cluster and ij
    int chunks = 0, rows = 0, max_targets = 0, tm = 1, teams = 0, columns = 0, max_sources = 0,
        max_matrices = 0, max_entries = 0;
    DeviceVector<int> target_offsets, chunk_targets, chunk_item_offsets;
    DeviceVector<cuda::ClusterItem> cluster_items;
    DeviceVector<int2> cluster_pairs;
    DeviceVector<int> source_offsets, chunk_sources, matrix_offsets, chunk_matrices, entry_counts;
    DeviceVector<unsigned> ij_entries;
    DeviceVector<int2> target_teams;
    DeviceVector<long long> entry_offsets;
    // gemm and dmma
    std::size_t padded_columns = 0;
    int gemm_columns = 0, batch = 0, reduce_targets = 0, tiles = 0, row_pad = 0, col_pad = 0;
    DeviceVector<int> column_source, reduce_cells, reduce_offsets, reduce_columns, tile_matrix;
    DeviceVector<const cuDoubleComplex*> a_pointers, b_pointers;
    DeviceVector<cuDoubleComplex*> c_pointers;
    std::vector<int> chunk_matrix;   // gemm: the matrix of each product in the batch
    std::size_t scratch_offset = 0;  // gemm, dmma: first column of this level in the scratch
    std::unique_ptr<cuda::CublasHandle> cublas;  // gemm, on this level's stream
  };

  M2LScheme scheme;
  GpuM2LOptions options;
  int order = 0, size = 0;
  std::size_t num_cells = 0;
  // All levels' matrices, column-major, row_pad x col_pad each (padded for dmma alone).
  DeviceVector<double2> matrices;
  int row_pad = 0, col_pad = 0;
  std::vector<Level> levels;
  GpuM2LStatistics statistics;
  std::string description;
  DeviceVector<double2> gathered, products;          // gemm and dmma scratch, shared by the levels
  DeviceVector<double2> host_multipole, host_local;  // for apply() from host arrays
  std::vector<cplx> staging;
  // One stream per level: the levels are independent, so a coarse level's few blocks run beside
  // the fine levels' many. The streams are blocking: work on the default stream waits for
  // them and they for it, so callers see apply_device as one step on the default stream.
  std::vector<cudaStream_t> streams;

  ~Impl() {
    for (cudaStream_t s : streams) cudaStreamDestroy(s);
  }

  void build_basic(const M2LLevelPlan& lv, Level& out, GpuM2LLevelStatistics& st);
  void build_sibling(const M2LPlan& plan, const M2LLevelPlan& lv, Level& out,
                     GpuM2LLevelStatistics& st);
  void build_cluster(const M2LPlan& plan, const M2LLevelPlan& lv, Level& out,
                     GpuM2LLevelStatistics& st);
  void build_ij(const M2LPlan& plan, const M2LLevelPlan& lv, Level& out, GpuM2LLevelStatistics& st);
  // gemm and dmma: columns of `width` per product, groups padded to a multiple of it.
  void build_columns(const M2LLevelPlan& lv, int width, Level& out, GpuM2LLevelStatistics& st,
                     std::vector<int>& chunk_matrix);
  void run(std::size_t index, const double2* multipole, double2* local);
};

void GpuM2L::Impl::build_basic(const M2LLevelPlan& lv, Level& out, GpuM2LLevelStatistics& st) {
  // Pairs by target, each target's pairs in plan (matrix) order.
  std::vector<std::size_t> order(lv.pairs.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return lv.pairs[a].target < lv.pairs[b].target;
  });
  std::vector<int> targets, offsets{0};
  std::vector<int2> entries;
  for (std::size_t x = 0; x < order.size(); ++x) {
    const M2LPair& pair = lv.pairs[order[x]];
    if (targets.empty() || targets.back() != pair.target) {
      if (!targets.empty()) offsets.push_back(checked_int(kExecutor, entries.size(), "pairs"));
      targets.push_back(pair.target);
    }
    entries.push_back(int2{pair.source, pair.matrix});
  }
  offsets.push_back(checked_int(kExecutor, entries.size(), "pairs"));
  out.blocks = checked_int(kExecutor, targets.size(), "targets");
  out.staged = std::max<int>(1, std::min<int>(32, int(32768 / (size * kComplexBytes))));
  out.targets = DeviceVector<int>(targets, "basic targets");
  out.offsets = DeviceVector<int>(offsets, "basic offsets");
  out.entries = DeviceVector<int2>(entries, "basic pairs");
  const double s = size, p = double(lv.pairs.size());
  st.matrix_bytes = p * s * s * kComplexBytes;
  st.other_bytes = p * s * kComplexBytes + targets.size() * s * 2 * kComplexBytes + p * 8;
}

void GpuM2L::Impl::build_sibling(const M2LPlan& plan, const M2LLevelPlan& lv, Level& out,
                                 GpuM2LLevelStatistics& st) {
  struct Entry {
    int target_parent, source_parent, matrix, octant, target, source;
  };
  std::vector<Entry> entries;
  entries.reserve(lv.pairs.size());
  for (const M2LPair& pair : lv.pairs)
    entries.push_back({plan.parent[pair.target], plan.parent[pair.source], pair.matrix,
                       octant_of(plan.coords[pair.target]), pair.target, pair.source});
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
    if (a.target_parent != b.target_parent) return a.target_parent < b.target_parent;
    if (a.source_parent != b.source_parent) return a.source_parent < b.source_parent;
    if (a.matrix != b.matrix) return a.matrix < b.matrix;
    return a.octant < b.octant;
  });
  std::vector<int> cluster_targets, item_offsets{0};
  std::vector<cuda::SiblingItem> items;
  for (std::size_t x = 0; x < entries.size(); ++x) {
    const Entry& e = entries[x];
    const bool new_cluster = x == 0 || e.target_parent != entries[x - 1].target_parent;
    const bool new_item = new_cluster || e.source_parent != entries[x - 1].source_parent ||
                          e.matrix != entries[x - 1].matrix;
    if (new_cluster) {
      if (x > 0) item_offsets.push_back(checked_int(kExecutor, items.size(), "sibling items"));
      cluster_targets.insert(cluster_targets.end(), 8, -1);
    }
    if (new_item) {
      cuda::SiblingItem item{};
      item.matrix = e.matrix;
      std::fill(std::begin(item.source), std::end(item.source), -1);
      items.push_back(item);
    }
    int& slot = items.back().source[e.octant];
    if (slot >= 0) throw Error("GPU M2L (sibling): two sources for one child and matrix");
    slot = e.source;
    cluster_targets[cluster_targets.size() - 8 + e.octant] = e.target;
  }
  item_offsets.push_back(checked_int(kExecutor, items.size(), "sibling items"));
  out.clusters = checked_int(kExecutor, cluster_targets.size() / 8, "clusters");
  out.cluster_targets = DeviceVector<int>(cluster_targets, "sibling targets");
  out.item_offsets = DeviceVector<int>(item_offsets, "sibling offsets");
  out.sibling_items = DeviceVector<cuda::SiblingItem>(items, "sibling items");
  const double s = size, p = double(lv.pairs.size());
  std::size_t targets = 0;
  for (int t : cluster_targets) targets += t >= 0;
  st.matrix_bytes = double(items.size()) * s * s * kComplexBytes;
  st.other_bytes = p * s * kComplexBytes + targets * s * 2 * kComplexBytes +
                   items.size() * sizeof(cuda::SiblingItem);
}

void GpuM2L::Impl::build_cluster(const M2LPlan& plan, const M2LLevelPlan& lv, Level& out,
                                 GpuM2LLevelStatistics& st) {
  const int cells = 2 * options.chunk;
  const int rows = cuda::cluster_rows(size);
  // The locals of a block's targets (rows of its tile) lie in shared memory; a chunk with more
  // targets than keep two blocks per multiprocessor is cut into several blocks' worth.
  const std::size_t staging = cuda::cluster_shared_bytes(size, 0);
  const int target_limit = std::max(1, int((kSharedBudget - staging) / (rows * kComplexBytes)));
  struct Entry {
    std::uint64_t chunk;
    int part, matrix, target, source;
  };
  std::vector<Entry> entries;
  entries.reserve(lv.pairs.size());
  for (const M2LPair& pair : lv.pairs)
    entries.push_back(
        {chunk_key(plan.coords[pair.target], cells), 0, pair.matrix, pair.target, pair.source});
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
    if (a.chunk != b.chunk) return a.chunk < b.chunk;
    return a.target < b.target;
  });
  for (std::size_t x = 0, rank = 0; x < entries.size(); ++x) {
    if (x == 0 || entries[x].chunk != entries[x - 1].chunk)
      rank = 0;
    else if (entries[x].target != entries[x - 1].target)
      ++rank;
    entries[x].part = int(rank / target_limit);
  }
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
    if (a.chunk != b.chunk) return a.chunk < b.chunk;
    if (a.part != b.part) return a.part < b.part;
    if (a.matrix != b.matrix) return a.matrix < b.matrix;
    return a.target < b.target;
  });
  struct Block {
    std::vector<int> targets;
    std::vector<cuda::ClusterItem> jobs;  // pairs relative to the block's first
    std::vector<int2> pairs;
    double work = 0.0;
  };
  std::vector<Block> blocks;
  std::size_t items = 0, jobs = 0;
  for (std::size_t begin = 0; begin < entries.size();) {
    std::size_t end = begin;
    while (end < entries.size() && entries[end].chunk == entries[begin].chunk &&
           entries[end].part == entries[begin].part)
      ++end;
    Block b;
    for (std::size_t x = begin; x < end; ++x) b.targets.push_back(entries[x].target);
    std::sort(b.targets.begin(), b.targets.end());
    b.targets.erase(std::unique(b.targets.begin(), b.targets.end()), b.targets.end());
    for (std::size_t x = begin; x < end;) {
      std::size_t y = x;
      while (y < end && entries[y].matrix == entries[x].matrix) ++y;
      // One matrix's pairs in jobs of at most kClusterColumns, as even as can be.
      const int n = int(y - x), parts = (n + cuda::kClusterColumns - 1) / cuda::kClusterColumns;
      for (int k = 0, at = 0; k < parts; ++k) {
        const int width = n / parts + (k < n % parts ? 1 : 0);
        const int first = checked_int(kExecutor, b.pairs.size() + at, "pairs");
        b.jobs.push_back({entries[x].matrix, first, first + width});
        int padded = 1;
        while (padded < width) padded *= 2;
        b.work += padded + 2.0;  // FMAs and T loads per row and column k, roughly
        at += width;
      }
      for (std::size_t z = x; z < y; ++z) {
        const int slot =
            int(std::lower_bound(b.targets.begin(), b.targets.end(), entries[z].target) -
                b.targets.begin());
        b.pairs.push_back(int2{slot, entries[z].source});
      }
      ++items;
      x = y;
    }
    jobs += b.jobs.size();
    blocks.push_back(std::move(b));
    begin = end;
  }
  // The largest blocks first: the grid's tail is then made of small ones.
  std::stable_sort(blocks.begin(), blocks.end(),
                   [](const Block& a, const Block& b) { return a.work > b.work; });
  std::vector<int> target_offsets{0}, targets, item_offsets{0};
  std::vector<cuda::ClusterItem> all_jobs;
  std::vector<int2> pairs;
  int max_targets = 0;
  for (const Block& b : blocks) {
    const int base = checked_int(kExecutor, pairs.size(), "pairs");
    for (cuda::ClusterItem job : b.jobs) {
      job.begin += base;
      job.end += base;
      all_jobs.push_back(job);
    }
    pairs.insert(pairs.end(), b.pairs.begin(), b.pairs.end());
    targets.insert(targets.end(), b.targets.begin(), b.targets.end());
    target_offsets.push_back(checked_int(kExecutor, targets.size(), "targets"));
    item_offsets.push_back(checked_int(kExecutor, all_jobs.size(), "cluster jobs"));
    max_targets = std::max(max_targets, int(b.targets.size()));
  }
  out.chunks = checked_int(kExecutor, blocks.size(), "chunks");
  out.rows = rows;
  out.max_targets = max_targets;
  out.target_offsets = DeviceVector<int>(target_offsets, "cluster target offsets");
  out.chunk_targets = DeviceVector<int>(targets, "cluster targets");
  out.chunk_item_offsets = DeviceVector<int>(item_offsets, "cluster item offsets");
  out.cluster_items = DeviceVector<cuda::ClusterItem>(all_jobs, "cluster items");
  out.cluster_pairs = DeviceVector<int2>(pairs, "cluster pairs");
  const double s = size, p = double(lv.pairs.size());
  const double row_tiles = (size + rows - 1) / rows;
  // T: once per chunk and matrix (the scheme's traffic); a matrix split into several jobs is
  // read again by each further job (counted with the other bytes: mostly cache hits, the jobs
  // of one matrix run side by side).
  st.matrix_bytes = double(items) * s * s * kComplexBytes;
  st.other_bytes = double(jobs - items) * s * s * kComplexBytes +
                   row_tiles * (p * (s * kComplexBytes + 8) + double(jobs) * 12.0) +
                   targets.size() * s * 2 * kComplexBytes;
}

void GpuM2L::Impl::build_ij(const M2LPlan& plan, const M2LLevelPlan& lv, Level& out,
                            GpuM2LLevelStatistics& st) {
  const int cells = 2 * options.chunk;
  struct Entry {
    std::uint64_t chunk;
    int target, matrix, source;
  };
  std::vector<Entry> entries;
  entries.reserve(lv.pairs.size());
  for (const M2LPair& pair : lv.pairs)
    entries.push_back(
        {chunk_key(plan.coords[pair.target], cells), pair.target, pair.matrix, pair.source});
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
    if (a.chunk != b.chunk) return a.chunk < b.chunk;
    if (a.target != b.target) return a.target < b.target;
    return a.matrix < b.matrix;
  });
  // Blocks: a chunk's targets, at most kIjMaxTeams of them (a larger chunk gives several).
  struct Block {
    std::vector<int> targets, sources, matrices;
    std::vector<std::size_t> list_begin;       // per target, into entries; one more at the end
    std::vector<std::vector<unsigned>> units;  // merged lists (without segments)
    std::vector<int2> unit_of;                 // per target: (unit, cell of the unit)
    int count = 0;                             // entries per team (the longest segment)
  };
  std::vector<Block> blocks;
  int max_targets = 0, max_sources = 0, max_matrices = 0;
  for (std::size_t begin = 0; begin < entries.size();) {
    Block b;
    std::size_t x = begin;
    for (; x < entries.size() && entries[x].chunk == entries[begin].chunk; ++x) {
      if (x == begin || entries[x].target != entries[x - 1].target) {
        if (int(b.targets.size()) == cuda::kIjMaxTeams) break;
        b.targets.push_back(entries[x].target);
        b.list_begin.push_back(x);
      }
      b.sources.push_back(entries[x].source);
      b.matrices.push_back(entries[x].matrix);
    }
    b.list_begin.push_back(x);
    for (auto* v : {&b.sources, &b.matrices}) {
      std::sort(v->begin(), v->end());
      v->erase(std::unique(v->begin(), v->end()), v->end());
    }
    max_targets = std::max(max_targets, int(b.targets.size()));
    max_sources = std::max(max_sources, int(b.sources.size()));
    max_matrices = std::max(max_matrices, int(b.matrices.size()));
    blocks.push_back(std::move(b));
    begin = x;
  }
  if (max_matrices >= 1023 || max_sources >= cuda::kIjNone)
    throw Error("GPU M2L (ij): chunk lists too long for the packed entries");
  // Units: the targets in pairs whose lists share the most matrices (greedy), then the rest
  // alone; a unit's entries (v, source of the first cell, source of the second) by v.
  for (Block& b : blocks) {
    const std::size_t nt = b.targets.size(), words = (b.matrices.size() + 63) / 64;
    std::vector<std::vector<std::pair<int, int>>> lists(nt);  // per target: (v, s), by v
    std::vector<std::uint64_t> bits(nt * words, 0);
    for (std::size_t t = 0; t < nt; ++t)
      for (std::size_t x = b.list_begin[t]; x < b.list_begin[t + 1]; ++x) {
        const int v =
            int(std::lower_bound(b.matrices.begin(), b.matrices.end(), entries[x].matrix) -
                b.matrices.begin());
        const int s = int(std::lower_bound(b.sources.begin(), b.sources.end(), entries[x].source) -
                          b.sources.begin());
        lists[t].push_back({v, s});
        bits[t * words + v / 64] |= std::uint64_t(1) << (v % 64);
      }
    struct Candidate {
      int shared, a, b;
    };
    std::vector<Candidate> candidates;
    for (std::size_t a = 0; a < nt; ++a)
      for (std::size_t c = a + 1; c < nt; ++c) {
        int shared = 0;
        for (std::size_t w = 0; w < words; ++w)
          shared += __builtin_popcountll(bits[a * words + w] & bits[c * words + w]);
        if (shared > 0) candidates.push_back({shared, int(a), int(c)});
      }
    std::stable_sort(candidates.begin(), candidates.end(),
                     [](const Candidate& p, const Candidate& q) { return p.shared > q.shared; });
    std::vector<char> used(nt, 0);
    b.unit_of.assign(nt, int2{-1, 0});
    const auto add_unit = [&](int first, int second) {
      const int u = int(b.units.size());
      b.unit_of[first] = int2{u, 0};
      if (second >= 0) b.unit_of[second] = int2{u, 1};
      std::vector<unsigned> merged;
      const auto& la = lists[first];
      static const std::vector<std::pair<int, int>> none;
      const auto& lb = second >= 0 ? lists[second] : none;
      for (std::size_t i = 0, k = 0; i < la.size() || k < lb.size();) {
        const int va = i < la.size() ? la[i].first : INT32_MAX;
        const int vb = k < lb.size() ? lb[k].first : INT32_MAX;
        const int v = std::min(va, vb);
        const unsigned sa = va == v ? unsigned(la[i++].second) : unsigned(cuda::kIjNone);
        const unsigned sb = vb == v ? unsigned(lb[k++].second) : unsigned(cuda::kIjNone);
        merged.push_back(unsigned(v) | sa << 10 | sb << 21);
      }
      b.units.push_back(std::move(merged));
    };
    for (const Candidate& c : candidates)
      if (!used[c.a] && !used[c.b]) {
        used[c.a] = used[c.b] = 1;
        add_unit(c.a, c.b);
      }
    for (std::size_t t = 0; t < nt; ++t)
      if (!used[t]) add_unit(int(t), -1);
  }
  // Entries per team for `teams` teams: the least count whose segments fit.
  const auto segments_count = [](const Block& b, int teams) {
    std::size_t total = 0;
    for (const auto& u : b.units) total += u.size();
    int count = int((total + teams - 1) / teams);
    for (;; ++count) {
      std::size_t used = 0;
      for (const auto& u : b.units) used += (u.size() + count - 1) / count;
      if (used <= std::size_t(teams)) return count;
    }
  };
  // Teams per block: 64 or 128, whichever idles fewer threads (64 only if no block has more
  // units).
  int teams = cuda::kIjMaxTeams;
  std::size_t max_units = 0;
  for (const Block& b : blocks) max_units = std::max(max_units, b.units.size());
  if (max_units <= 64) {
    double work64 = 0.0, work128 = 0.0;
    for (const Block& b : blocks) {
      work64 += 64.0 * segments_count(b, 64);
      work128 += 128.0 * segments_count(b, 128);
    }
    if (work64 <= work128) teams = 64;
  }
  for (Block& b : blocks) b.count = segments_count(b, teams);
  int max_count = 0;
  for (const Block& b : blocks) max_count = std::max(max_count, b.count);
  // Rows per thread (tm) and columns per stage: as many as the shared memory holds.
  int tm = size >= 32 ? 4 : size > 8 ? 2 : 1, columns = 1;
  const auto fits = [&](int t, int c) {
    return cuda::ij_shared_bytes(t, teams, c, max_sources, max_matrices, max_count) <= kSharedLimit;
  };
  while (tm > 1 && !fits(tm, 1)) tm /= 2;
  if (!fits(tm, 1))
    throw Error("GPU M2L (ij): a chunk of B = " + std::to_string(options.chunk) +
                " needs more shared memory than the GPU has; choose a smaller B");
  while (columns < 4 && columns * 2 <= size && fits(tm, columns * 2)) columns *= 2;
  // The longest blocks first.
  std::stable_sort(blocks.begin(), blocks.end(), [](const Block& a, const Block& b) {
    if (a.count != b.count) return a.count > b.count;
    return a.matrices.size() > b.matrices.size();
  });
  std::vector<int> source_offsets{0}, sources, matrix_offsets{0}, matrices, target_offsets{0},
      targets, counts;
  std::vector<unsigned> packed;
  std::vector<int2> target_teams;
  std::vector<long long> entry_offsets;
  double source_bytes = 0.0, matrix_loads = 0.0, list_bytes = 0.0;
  for (const Block& b : blocks) {
    entry_offsets.push_back(static_cast<long long>(packed.size()));
    packed.insert(packed.end(), std::size_t(b.count) * teams, cuda::kIjEnd);
    unsigned* base = packed.data() + entry_offsets.back();
    std::vector<int2> unit_teams;
    int team = 0;
    for (const auto& list : b.units) {
      const std::size_t n = list.size(), parts = (n + b.count - 1) / b.count;
      const int first_team = team;
      for (std::size_t k = 0, at = 0; k < parts; ++k, ++team) {
        const std::size_t width = n / parts + (k < n % parts ? 1 : 0);
        for (std::size_t e = 0; e < width; ++e) base[e * teams + team] = list[at + e];
        at += width;
      }
      unit_teams.push_back(int2{first_team, team});
    }
    if (team > teams) throw Error("GPU M2L (ij): internal error (teams)");
    for (std::size_t t = 0; t < b.targets.size(); ++t) {
      const int2 unit = b.unit_of[t], range = unit_teams[unit.x];
      target_teams.push_back(int2{range.x | unit.y << 16, range.y});
    }
    sources.insert(sources.end(), b.sources.begin(), b.sources.end());
    matrices.insert(matrices.end(), b.matrices.begin(), b.matrices.end());
    targets.insert(targets.end(), b.targets.begin(), b.targets.end());
    source_offsets.push_back(checked_int(kExecutor, sources.size(), "sources"));
    matrix_offsets.push_back(checked_int(kExecutor, matrices.size(), "matrices"));
    target_offsets.push_back(checked_int(kExecutor, targets.size(), "targets"));
    counts.push_back(b.count);
    source_bytes += double(b.sources.size()) * size * kComplexBytes;
    matrix_loads += double(b.matrices.size());
    list_bytes += double(b.count) * teams * 4.0;
  }
  out.chunks = checked_int(kExecutor, blocks.size(), "chunks");
  out.tm = tm;
  out.rows = cuda::kIjTeam * tm;
  out.teams = teams;
  out.columns = columns;
  out.max_sources = max_sources;
  out.max_matrices = max_matrices;
  out.max_entries = max_count;
  out.source_offsets = DeviceVector<int>(source_offsets, "ij source offsets");
  out.chunk_sources = DeviceVector<int>(sources, "ij sources");
  out.matrix_offsets = DeviceVector<int>(matrix_offsets, "ij matrix offsets");
  out.chunk_matrices = DeviceVector<int>(matrices, "ij matrices");
  out.target_offsets = DeviceVector<int>(target_offsets, "ij target offsets");
  out.chunk_targets = DeviceVector<int>(targets, "ij targets");
  out.target_teams = DeviceVector<int2>(target_teams, "ij target teams");
  out.entry_offsets = DeviceVector<long long>(entry_offsets, "ij entry offsets");
  out.entry_counts = DeviceVector<int>(counts, "ij entry counts");
  out.ij_entries = DeviceVector<unsigned>(packed, "ij entries");
  const double s = size, row_tiles = (size + out.rows - 1) / out.rows;
  st.matrix_bytes = matrix_loads * s * s * kComplexBytes;
  st.other_bytes = row_tiles * (source_bytes + list_bytes + targets.size() * 12.0) +
                   targets.size() * s * 2 * kComplexBytes;
}

void GpuM2L::Impl::build_columns(const M2LLevelPlan& lv, int width, Level& out,
                                 GpuM2LLevelStatistics& st, std::vector<int>& chunk_matrix) {
  std::vector<int> column_source;
  std::vector<std::size_t> pair_column(lv.pairs.size());
  chunk_matrix.clear();
  for (std::size_t m = 0; m < lv.matrix_count(); ++m) {
    for (std::size_t x = lv.matrix_begin[m]; x < lv.matrix_begin[m + 1]; ++x) {
      if ((x - lv.matrix_begin[m]) % width == 0) {
        chunk_matrix.push_back(int(m));
        column_source.resize(column_source.size() + width, -1);
      }
      pair_column[x] = column_source.size() - width + (x - lv.matrix_begin[m]) % width;
      column_source[pair_column[x]] = lv.pairs[x].source;
    }
  }
  // Per target (ascending), its columns in plan order: a counting sort by target.
  checked_int(kExecutor, column_source.size(), "columns");
  std::vector<std::size_t> next(num_cells + 1, 0);
  for (const M2LPair& pair : lv.pairs) ++next[pair.target + 1];
  std::vector<int> cells, offsets{0};
  for (std::size_t c = 0; c < num_cells; ++c)
    if (next[c + 1] > 0) {
      cells.push_back(int(c));
      offsets.push_back(checked_int(kExecutor, offsets.back() + next[c + 1], "pairs"));
    }
  std::partial_sum(next.begin(), next.end(), next.begin());
  std::vector<int> columns(lv.pairs.size());
  for (std::size_t x = 0; x < lv.pairs.size(); ++x)
    columns[next[lv.pairs[x].target]++] = int(pair_column[x]);
  out.padded_columns = column_source.size();
  out.reduce_targets = checked_int(kExecutor, cells.size(), "targets");
  out.column_source = DeviceVector<int>(column_source, "M2L column sources");
  out.reduce_cells = DeviceVector<int>(cells, "M2L reduce targets");
  out.reduce_offsets = DeviceVector<int>(offsets, "M2L reduce offsets");
  out.reduce_columns = DeviceVector<int>(columns, "M2L reduce columns");
  const double s = size, p = double(lv.pairs.size());
  // Shared by both: the products written and read back once, the locals read and written.
  st.other_bytes = 2 * p * s * kComplexBytes + cells.size() * s * 2 * kComplexBytes +
                   column_source.size() * 4.0 + columns.size() * 4.0;
}

void GpuM2L::Impl::run(std::size_t index, const double2* multipole, double2* local) {
  const Level& lv = levels[index];
  const cudaStream_t stream = streams[index];
  double2* level_products = products.data() + lv.scratch_offset * size;
  switch (scheme) {
    case M2LScheme::basic:
      cuda::launch_basic(size, lv.blocks, lv.staged, lv.targets.data(), lv.offsets.data(),
                         lv.entries.data(), lv.matrices, multipole, local, stream);
      break;
    case M2LScheme::sibling:
      cuda::launch_sibling(size, lv.clusters, lv.cluster_targets.data(), lv.item_offsets.data(),
                           lv.sibling_items.data(), lv.matrices, multipole, local, stream);
      break;
    case M2LScheme::cluster:
      cuda::launch_cluster(size, lv.chunks, lv.max_targets, lv.target_offsets.data(),
                           lv.chunk_targets.data(), lv.chunk_item_offsets.data(),
                           lv.cluster_items.data(), lv.cluster_pairs.data(), lv.matrices, multipole,
                           local, stream);
      break;
    case M2LScheme::ij:
      cuda::launch_ij(size, lv.chunks, lv.tm, lv.teams, lv.columns, lv.max_sources, lv.max_matrices,
                      lv.max_entries, lv.source_offsets.data(), lv.chunk_sources.data(),
                      lv.matrix_offsets.data(), lv.chunk_matrices.data(), lv.target_offsets.data(),
                      lv.chunk_targets.data(), lv.target_teams.data(), lv.entry_offsets.data(),
                      lv.entry_counts.data(), lv.ij_entries.data(), lv.matrices, multipole, local,
                      stream);
      break;
    case M2LScheme::gemm: {
      cuda::launch_gather(size, lv.padded_columns, lv.column_source.data(), multipole,
                          gathered.data() + lv.scratch_offset * size, stream);
      const cuDoubleComplex one = {1.0, 0.0}, zero = {0.0, 0.0};
      if (lv.batch > 0)
        cuda::check_cublas(cuda::cublas().zgemm_batched(
                               lv.cublas->get(), CUBLAS_OP_N, CUBLAS_OP_N, size, lv.gemm_columns,
                               size, &one, lv.a_pointers.data(), size, lv.b_pointers.data(), size,
                               &zero, lv.c_pointers.data(), size, lv.batch),
                           "cublasZgemmBatched");
      cuda::launch_reduce(size, lv.reduce_targets, lv.reduce_cells.data(), lv.reduce_offsets.data(),
                          lv.reduce_columns.data(), level_products, local, stream);
      break;
    }
    case M2LScheme::dmma:
      cuda::launch_dmma(size, lv.row_pad, lv.col_pad, lv.tiles, lv.tile_matrix.data(),
                        lv.column_source.data(), lv.matrices, multipole, level_products, stream);
      cuda::launch_reduce(size, lv.reduce_targets, lv.reduce_cells.data(), lv.reduce_offsets.data(),
                          lv.reduce_columns.data(), level_products, local, stream);
      break;
  }
}

GpuM2L::GpuM2L(const M2LPlan& plan, M2LScheme scheme, const GpuM2LOptions& options)
    : impl_(std::make_unique<Impl>()) {
  std::string why;
  if (!gpu_available(&why)) throw Error("the GPU M2L needs a GPU: " + why);
  if (options.chunk < 1 || options.chunk > 8)
    throw Error("GPU M2L: the chunk size B must lie in 1..8");
  if (options.gemm_columns < 0 || options.gemm_columns > 4096)
    throw Error("GPU M2L: the gemm column count must lie in 0..4096");
  if (plan.order < 1 || plan.coords.size() != plan.num_cells ||
      plan.parent.size() != plan.num_cells)
    throw Error("GPU M2L: the plan is incomplete");
  Impl& d = *impl_;
  d.scheme = scheme;
  d.options = options;
  d.order = plan.order;
  d.size = plan.order * plan.order;
  d.num_cells = plan.num_cells;
  const int size = d.size;
  // The translation matrices of all levels: one kernel (milliseconds), nothing uploaded.
  const bool padded = scheme == M2LScheme::dmma;
  d.row_pad =
      padded ? (size + cuda::dmma_rows(size) - 1) / cuda::dmma_rows(size) * cuda::dmma_rows(size)
             : size;
  d.col_pad = padded ? (size + 15) / 16 * 16 : size;
  const std::size_t block = std::size_t(d.row_pad) * d.col_pad;
  std::size_t matrix_count = 0;
  for (const M2LLevelPlan& lv : plan.levels) matrix_count += lv.matrix_count();
  d.matrices.allocate(matrix_count * block, "M2L translation matrices");
  cuda::build_m2l_matrices(plan, d.row_pad, d.col_pad, d.matrices.data(), nullptr);
  std::size_t scratch_columns = 0, first_matrix = 0;
  for (const M2LLevelPlan& lv : plan.levels) {
    for (const M2LPair& pair : lv.pairs)
      if (pair.target < 0 || std::size_t(pair.target) >= plan.num_cells || pair.source < 0 ||
          std::size_t(pair.source) >= plan.num_cells || pair.matrix < 0 ||
          std::size_t(pair.matrix) >= lv.matrix_count())
        throw Error("GPU M2L: a pair of the plan names a cell or matrix that does not exist");
    Impl::Level out;
    out.level = lv.level;
    out.matrices = d.matrices.data() + first_matrix * block;
    first_matrix += lv.matrix_count();
    GpuM2LLevelStatistics st;
    st.level = lv.level;
    st.pairs = lv.pairs.size();
    st.flops = 8.0 * double(size) * size * double(lv.pairs.size());
    st.executed_flops = st.flops;
    const double matrix_bytes = double(size) * size * kComplexBytes;
    switch (scheme) {
      case M2LScheme::basic:
        d.build_basic(lv, out, st);
        break;
      case M2LScheme::sibling:
        d.build_sibling(plan, lv, out, st);
        break;
      case M2LScheme::cluster:
        d.build_cluster(plan, lv, out, st);
        break;
      case M2LScheme::ij:
        d.build_ij(plan, lv, out, st);
        break;
      case M2LScheme::gemm: {
        int width = options.gemm_columns;
        if (width == 0) {
          // About the mean group size, within 16 .. 128: little padding, full tiles.
          const double mean = double(lv.pairs.size()) / std::max<std::size_t>(1, lv.matrix_count());
          width = 16;
          while (width < 128 && width < mean) width *= 2;
        }
        std::vector<int> chunk_matrix;
        d.build_columns(lv, width, out, st, chunk_matrix);
        out.gemm_columns = width;
        out.batch = checked_int(kExecutor, chunk_matrix.size(), "batched products");
        out.scratch_offset = scratch_columns;
        scratch_columns += out.padded_columns;
        out.cublas = std::make_unique<cuda::CublasHandle>();
        st.executed_flops = 8.0 * double(size) * size * double(out.padded_columns);
        // Gather: moments read, columns written; the product reads them and its matrices.
        st.other_bytes += double(lv.pairs.size()) * size * kComplexBytes +
                          2.0 * double(out.padded_columns) * size * kComplexBytes;
        st.matrix_bytes = double(out.batch) * matrix_bytes;
        out.chunk_matrix = std::move(chunk_matrix);  // pointers once the scratch exists
        break;
      }
      case M2LScheme::dmma: {
        std::vector<int> chunk_matrix;
        d.build_columns(lv, cuda::kDmmaColumns, out, st, chunk_matrix);
        out.tiles = checked_int(kExecutor, chunk_matrix.size(), "dmma tiles");
        out.row_pad = d.row_pad;
        out.col_pad = d.col_pad;
        out.tile_matrix = DeviceVector<int>(chunk_matrix, "dmma tile matrices");
        out.scratch_offset = scratch_columns;
        scratch_columns += out.padded_columns;
        const double row_tiles = out.row_pad / cuda::dmma_rows(size);
        st.executed_flops = 8.0 * double(out.row_pad) * out.col_pad * double(out.padded_columns);
        st.matrix_bytes = double(out.tiles) * out.row_pad * out.col_pad * kComplexBytes;
        st.other_bytes += row_tiles * double(lv.pairs.size()) * size * kComplexBytes;
        break;
      }
    }
    d.statistics.levels.push_back(st);
    d.levels.push_back(std::move(out));
  }
  if (scratch_columns > 0) {
    const std::size_t n = scratch_columns * size;
    if (scheme == M2LScheme::gemm) d.gathered.allocate(n, "gathered moments (gemm)");
    d.products.allocate(n, "M2L products");
  }
  // gemm: the batched product's pointers, now that the matrices and scratch exist.
  if (scheme == M2LScheme::gemm)
    for (Impl::Level& lv : d.levels) {
      std::vector<const cuDoubleComplex*> a(lv.batch), b(lv.batch);
      std::vector<cuDoubleComplex*> c(lv.batch);
      const auto* matrices = reinterpret_cast<const cuDoubleComplex*>(lv.matrices);
      for (int x = 0; x < lv.batch; ++x) {
        a[x] = matrices + std::size_t(lv.chunk_matrix[x]) * size * size;
        const std::size_t col0 = (lv.scratch_offset + std::size_t(x) * lv.gemm_columns) * size;
        b[x] = reinterpret_cast<const cuDoubleComplex*>(d.gathered.data()) + col0;
        c[x] = reinterpret_cast<cuDoubleComplex*>(d.products.data()) + col0;
      }
      lv.a_pointers = DeviceVector<const cuDoubleComplex*>(a, "gemm pointers");
      lv.b_pointers = DeviceVector<const cuDoubleComplex*>(b, "gemm pointers");
      lv.c_pointers = DeviceVector<cuDoubleComplex*>(c, "gemm pointers");
    }
  // Memory held.
  std::size_t bytes = d.matrices.bytes() + d.gathered.bytes() + d.products.bytes();
  for (const Impl::Level& lv : d.levels)
    bytes += lv.targets.bytes() + lv.offsets.bytes() + lv.entries.bytes() +
             lv.cluster_targets.bytes() + lv.item_offsets.bytes() + lv.sibling_items.bytes() +
             lv.target_offsets.bytes() + lv.chunk_targets.bytes() + lv.chunk_item_offsets.bytes() +
             lv.cluster_items.bytes() + lv.cluster_pairs.bytes() + lv.source_offsets.bytes() +
             lv.chunk_sources.bytes() + lv.matrix_offsets.bytes() + lv.chunk_matrices.bytes() +
             lv.entry_counts.bytes() + lv.ij_entries.bytes() + lv.entry_offsets.bytes() +
             lv.target_teams.bytes() + lv.column_source.bytes() + lv.reduce_cells.bytes() +
             lv.reduce_offsets.bytes() + lv.reduce_columns.bytes() + lv.tile_matrix.bytes() +
             lv.a_pointers.bytes() + lv.b_pointers.bytes() + lv.c_pointers.bytes();
  d.statistics.device_bytes = bytes;
  for (Impl::Level& lv : d.levels) {
    cudaStream_t stream = nullptr;
    cuda::check(cudaStreamCreate(&stream), "cudaStreamCreate");
    d.streams.push_back(stream);
    if (lv.cublas)
      cuda::check_cublas(cuda::cublas().set_stream(lv.cublas->get(), stream), "cublasSetStream");
  }
  // Description of the launch shape.
  std::ostringstream text;
  text << m2l_scheme_name(scheme) << ", p = " << plan.order;
  switch (scheme) {
    case M2LScheme::basic:
      text << ": a block of " << std::min(size, 1024) << " threads per target cell";
      break;
    case M2LScheme::sibling:
      text << ": a block of " << std::min(size, 1024) << " threads per target cluster";
      break;
    case M2LScheme::cluster:
      text << ": B = " << options.chunk << ", " << cuda::kClusterWarps * 32
           << " threads per (chunk, tile of " << cuda::cluster_rows(size)
           << " rows), a warp per job of <= " << cuda::kClusterColumns
           << " pairs of one matrix; blocks per level";
      for (const auto& lv : d.levels) text << " " << lv.chunks;
      break;
    case M2LScheme::ij:
      text << ": B = " << options.chunk << ", teams of " << cuda::kIjTeam
           << " threads per (chunk, tile of rows); teams, rows, columns per stage";
      for (const auto& lv : d.levels)
        text << " " << lv.teams << "/" << lv.rows << "/" << lv.columns;
      break;
    case M2LScheme::gemm:
      text << ": cuBLAS batched ZGEMM, columns per product";
      for (const auto& lv : d.levels) text << " " << lv.gemm_columns;
      break;
    case M2LScheme::dmma:
      text << ": tiles of " << cuda::dmma_rows(size) << " rows x " << cuda::kDmmaColumns
           << " pairs, warps of 32 x " << cuda::dmma_warp_columns() << ", mma.sync m8n8k4 f64";
      break;
  }
  d.description = text.str();
}

GpuM2L::~GpuM2L() = default;

void GpuM2L::apply_level_device(std::size_t level_index, const cplx* device_multipole,
                                cplx* device_local) {
  Impl& d = *impl_;
  if (level_index >= d.levels.size()) throw Error("GPU M2L: no such level in the plan");
  d.run(level_index, reinterpret_cast<const double2*>(device_multipole),
        reinterpret_cast<double2*>(device_local));
}

void GpuM2L::apply_device(const cplx* device_multipole, cplx* device_local) {
  for (std::size_t l = 0; l < impl_->levels.size(); ++l)
    apply_level_device(l, device_multipole, device_local);
}

void GpuM2L::apply(const cplx* multipole, cplx* local) {
  Impl& d = *impl_;
  const std::size_t count = d.num_cells * d.size;
  if (d.host_multipole.size() != count) {
    d.host_multipole.allocate(count, "multipole expansions");
    d.host_local.allocate(count, "local expansions");
    d.statistics.device_bytes += 2 * count * kComplexBytes;
  }
  cuda::check(
      cudaMemcpy(d.host_multipole.data(), multipole, count * kComplexBytes, cudaMemcpyHostToDevice),
      "copy of the moments to the GPU");
  cuda::check(cudaMemset(d.host_local.data(), 0, count * kComplexBytes), "cudaMemset");
  apply_device(reinterpret_cast<const cplx*>(d.host_multipole.data()),
               reinterpret_cast<cplx*>(d.host_local.data()));
  d.staging.resize(count);
  cuda::check(cudaMemcpy(d.staging.data(), d.host_local.data(), count * kComplexBytes,
                         cudaMemcpyDeviceToHost),
              "copy of the locals from the GPU");
#pragma omp parallel for schedule(static)
  for (std::size_t x = 0; x < count; ++x) local[x] += d.staging[x];
}

std::vector<cplx> GpuM2L::matrices(std::size_t level_index) const {
  const Impl& d = *impl_;
  if (level_index >= d.levels.size()) throw Error("GPU M2L: no such level in the plan");
  const std::size_t block = std::size_t(d.row_pad) * d.col_pad;
  const std::size_t end = level_index + 1 < d.levels.size()
                              ? std::size_t(d.levels[level_index + 1].matrices - d.matrices.data())
                              : d.matrices.size();
  const std::size_t begin = std::size_t(d.levels[level_index].matrices - d.matrices.data());
  std::vector<double2> device(end - begin);
  cuda::check(cudaMemcpy(device.data(), d.levels[level_index].matrices,
                         device.size() * sizeof(double2), cudaMemcpyDeviceToHost),
              "download of the M2L matrices");
  const std::size_t count = device.size() / block, size = d.size;
  std::vector<cplx> out(count * size * size);
  for (std::size_t m = 0; m < count; ++m)
    for (std::size_t j = 0; j < size; ++j)
      for (std::size_t i = 0; i < size; ++i) {
        const double2 v = device[m * block + j * d.row_pad + i];
        out[(m * size + i) * size + j] = cplx(v.x, v.y);
      }
  return out;
}

void GpuM2L::synchronize() { cuda::check(cudaDeviceSynchronize(), "the M2L kernels"); }

M2LScheme GpuM2L::scheme() const { return impl_->scheme; }

const GpuM2LStatistics& GpuM2L::statistics() const { return impl_->statistics; }

std::string GpuM2L::describe() const { return impl_->description; }

}  // namespace fmbem::fmm
