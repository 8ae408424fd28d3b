// GpuM2L: the plan's lists rearranged for each scheme, uploaded once; apply runs the scheme's
// kernels, each level on its own (blocking) stream, so the levels overlap and the whole is
// ordered with the default stream.
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

namespace fmbem::fmm {

using cuda::DeviceVector;

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
// Shared memory that keeps two blocks per multiprocessor for the staged schemes.
constexpr std::size_t kSharedBudget = 100 * 1024;
constexpr std::size_t kSharedLimit = 227 * 1024;

// Cells of one level grouped into chunks of 2B x 2B x 2B cells (B x B x B clusters).
std::uint64_t chunk_key(const std::array<int, 3>& c, int chunk_cells) {
  return (std::uint64_t(c[0] / chunk_cells) << 42) | (std::uint64_t(c[1] / chunk_cells) << 21) |
         std::uint64_t(c[2] / chunk_cells);
}

int octant_of(const std::array<int, 3>& c) {
  return (c[0] & 1) | (c[1] & 1) << 1 | (c[2] & 1) << 2;
}

int checked_int(std::size_t n, const char* what) {
  if (n > static_cast<std::size_t>(INT32_MAX))
    throw Error(std::string("GPU M2L: too many ") + what + " for 32-bit indices");
  return static_cast<int>(n);
}

// Column-major copies of a level's matrices: entry (i, j) at j row_pad + i of a row_pad x
// col_pad block per matrix, zero beyond size.
std::vector<double2> column_major(const M2LLevelPlan& lv, int size, int row_pad, int col_pad) {
  const std::size_t count = lv.matrix_count(), block = std::size_t(row_pad) * col_pad;
  std::vector<double2> out(count * block, double2{0.0, 0.0});
  for (std::size_t m = 0; m < count; ++m) {
    const cplx* t = lv.matrices.data() + m * size * size;
    for (int i = 0; i < size; ++i)
      for (int j = 0; j < size; ++j) {
        const cplx v = t[std::size_t(i) * size + j];
        out[m * block + std::size_t(j) * row_pad + i] = double2{v.real(), v.imag()};
      }
  }
  return out;
}

}  // namespace

struct GpuM2L::Impl {
  struct Level {
    int level = 0;
    DeviceVector<double2> matrices;
    // basic
    int blocks = 0, staged = 1;
    DeviceVector<int> targets, offsets;
    DeviceVector<int2> entries;
    // sibling
    int clusters = 0;
    DeviceVector<int> cluster_targets, item_offsets;
    DeviceVector<cuda::SiblingItem> sibling_items;
    // cluster and ij
    int chunks = 0, rows = 0, max_targets = 0, threads = 0, team = 1, columns = 0, max_sources = 0,
        max_matrices = 0;
    DeviceVector<int> target_offsets, chunk_targets, chunk_item_offsets;
    DeviceVector<cuda::ClusterItem> cluster_items;
    DeviceVector<int2> cluster_pairs;
    DeviceVector<int> source_offsets, chunk_sources, matrix_offsets, chunk_matrices, entry_counts,
        ij_entries;
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
      if (!targets.empty()) offsets.push_back(checked_int(entries.size(), "pairs"));
      targets.push_back(pair.target);
    }
    entries.push_back(int2{pair.source, pair.matrix});
  }
  offsets.push_back(checked_int(entries.size(), "pairs"));
  out.blocks = checked_int(targets.size(), "targets");
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
      if (x > 0) item_offsets.push_back(checked_int(items.size(), "sibling items"));
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
  item_offsets.push_back(checked_int(items.size(), "sibling items"));
  out.clusters = checked_int(cluster_targets.size() / 8, "clusters");
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
  struct Entry {
    std::uint64_t chunk;
    int matrix, target, source;
  };
  std::vector<Entry> entries;
  entries.reserve(lv.pairs.size());
  for (const M2LPair& pair : lv.pairs)
    entries.push_back(
        {chunk_key(plan.coords[pair.target], cells), pair.matrix, pair.target, pair.source});
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
    if (a.chunk != b.chunk) return a.chunk < b.chunk;
    if (a.matrix != b.matrix) return a.matrix < b.matrix;
    return a.target < b.target;
  });
  std::vector<int> target_offsets{0}, targets, item_offsets{0};
  std::vector<cuda::ClusterItem> items;
  std::vector<int2> pairs;
  int max_targets = 0;
  for (std::size_t begin = 0; begin < entries.size();) {
    std::size_t end = begin;
    while (end < entries.size() && entries[end].chunk == entries[begin].chunk) ++end;
    std::vector<int> local_targets;
    for (std::size_t x = begin; x < end; ++x) local_targets.push_back(entries[x].target);
    std::sort(local_targets.begin(), local_targets.end());
    local_targets.erase(std::unique(local_targets.begin(), local_targets.end()),
                        local_targets.end());
    for (std::size_t x = begin; x < end; ++x) {
      const Entry& e = entries[x];
      if (x == begin || e.matrix != entries[x - 1].matrix) {
        const int at = checked_int(pairs.size(), "pairs");
        items.push_back({e.matrix, at, at});
      }
      const int slot = int(std::lower_bound(local_targets.begin(), local_targets.end(), e.target) -
                           local_targets.begin());
      pairs.push_back(int2{slot, e.source});
      items.back().end = checked_int(pairs.size(), "pairs");
    }
    targets.insert(targets.end(), local_targets.begin(), local_targets.end());
    target_offsets.push_back(checked_int(targets.size(), "targets"));
    item_offsets.push_back(checked_int(items.size(), "cluster items"));
    max_targets = std::max(max_targets, int(local_targets.size()));
    begin = end;
  }
  int rows = std::min(size, 64);
  while (rows > 1 && cuda::cluster_shared_bytes(size, rows, max_targets) > kSharedBudget)
    rows = (rows + 1) / 2;
  if (cuda::cluster_shared_bytes(size, rows, max_targets) > kSharedLimit)
    throw Error("GPU M2L (cluster): a chunk of B = " + std::to_string(options.chunk) +
                " holds too many cells for shared memory; choose a smaller B");
  out.chunks = checked_int(target_offsets.size() - 1, "chunks");
  out.rows = rows;
  out.max_targets = max_targets;
  out.target_offsets = DeviceVector<int>(target_offsets, "cluster target offsets");
  out.chunk_targets = DeviceVector<int>(targets, "cluster targets");
  out.chunk_item_offsets = DeviceVector<int>(item_offsets, "cluster item offsets");
  out.cluster_items = DeviceVector<cuda::ClusterItem>(items, "cluster items");
  out.cluster_pairs = DeviceVector<int2>(pairs, "cluster pairs");
  const double s = size, p = double(lv.pairs.size());
  const double row_tiles = (size + rows - 1) / rows;
  st.matrix_bytes = double(items.size()) * s * s * kComplexBytes;
  st.other_bytes = row_tiles * (p * (s * kComplexBytes + 8) + items.size() * 12.0) +
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
  // First pass: the chunks' sizes, to fix the block size (threads) for all of them.
  struct Chunk {
    std::size_t begin, end;
    std::vector<int> targets, sources, matrices;
    int count = 0;  // the longest interaction list
  };
  std::vector<Chunk> chunks;
  int max_targets = 0, max_sources = 0, max_matrices = 0;
  for (std::size_t begin = 0; begin < entries.size();) {
    std::size_t end = begin;
    while (end < entries.size() && entries[end].chunk == entries[begin].chunk) ++end;
    Chunk c{begin, end, {}, {}, {}, 0};
    for (std::size_t x = begin; x < end; ++x) {
      c.sources.push_back(entries[x].source);
      c.matrices.push_back(entries[x].matrix);
      if (c.targets.empty() || c.targets.back() != entries[x].target)
        c.targets.push_back(entries[x].target);
    }
    for (auto* v : {&c.sources, &c.matrices}) {
      std::sort(v->begin(), v->end());
      v->erase(std::unique(v->begin(), v->end()), v->end());
    }
    for (std::size_t x = begin, run = 0; x < end; ++x) {
      run = (x > begin && entries[x].target == entries[x - 1].target) ? run + 1 : 1;
      c.count = std::max(c.count, int(run));
    }
    max_targets = std::max(max_targets, int(c.targets.size()));
    max_sources = std::max(max_sources, int(c.sources.size()));
    max_matrices = std::max(max_matrices, int(c.matrices.size()));
    chunks.push_back(std::move(c));
    begin = end;
  }
  // A team of threads per target cell (4 where the block stays within 1024 threads): more warps
  // to hide the latency of the shared-memory loads; teams lie within one warp.
  int team = 4, slots = 0;
  for (; team >= 1; team /= 2) {
    const int align = 32 / team;
    slots = (max_targets + align - 1) / align * align;
    if (slots * team <= 1024) break;
  }
  if (team < 1)
    throw Error("GPU M2L (ij): a chunk of B = " + std::to_string(options.chunk) + " holds " +
                std::to_string(max_targets) +
                " target cells, more than 1024 threads; choose B <= 4");
  const int threads = slots * team;
  if (max_matrices >= 1024 || max_sources >= (1 << 21))
    throw Error("GPU M2L (ij): chunk lists too long for the packed entries");
  int columns = 8;
  while (columns > 1 && cuda::ij_shared_bytes(columns, max_sources, max_matrices) > kSharedBudget)
    columns /= 2;
  if (cuda::ij_shared_bytes(columns, max_sources, max_matrices) > kSharedLimit)
    throw Error("GPU M2L (ij): a chunk of B = " + std::to_string(options.chunk) +
                " needs more shared memory than the GPU has; choose a smaller B");
  std::vector<int> source_offsets{0}, sources, matrix_offsets{0}, matrices, target_offsets{0},
      targets, counts, packed;
  std::vector<long long> entry_offsets;
  double list_bytes = 0.0, source_bytes = 0.0, matrix_loads = 0.0;
  for (const Chunk& c : chunks) {
    entry_offsets.push_back(static_cast<long long>(packed.size()));
    packed.insert(packed.end(), std::size_t(c.count) * slots, -1);
    int* base = packed.data() + entry_offsets.back();
    for (std::size_t x = c.begin, e = 0; x < c.end; ++x) {
      e = (x > c.begin && entries[x].target == entries[x - 1].target) ? e + 1 : 0;
      const int t = int(std::lower_bound(c.targets.begin(), c.targets.end(), entries[x].target) -
                        c.targets.begin());
      const int s = int(std::lower_bound(c.sources.begin(), c.sources.end(), entries[x].source) -
                        c.sources.begin());
      const int v = int(std::lower_bound(c.matrices.begin(), c.matrices.end(), entries[x].matrix) -
                        c.matrices.begin());
      base[e * slots + t] = v | (s << 10);
    }
    sources.insert(sources.end(), c.sources.begin(), c.sources.end());
    matrices.insert(matrices.end(), c.matrices.begin(), c.matrices.end());
    targets.insert(targets.end(), c.targets.begin(), c.targets.end());
    source_offsets.push_back(checked_int(sources.size(), "sources"));
    matrix_offsets.push_back(checked_int(matrices.size(), "matrices"));
    target_offsets.push_back(checked_int(targets.size(), "targets"));
    counts.push_back(c.count);
    list_bytes += double(c.end - c.begin) * 4.0;
    source_bytes += double(c.sources.size()) * size * kComplexBytes;
    matrix_loads += double(c.matrices.size());
  }
  out.chunks = checked_int(chunks.size(), "chunks");
  out.threads = threads;
  out.team = team;
  out.columns = columns;
  out.max_sources = max_sources;
  out.max_matrices = max_matrices;
  out.source_offsets = DeviceVector<int>(source_offsets, "ij source offsets");
  out.chunk_sources = DeviceVector<int>(sources, "ij sources");
  out.matrix_offsets = DeviceVector<int>(matrix_offsets, "ij matrix offsets");
  out.chunk_matrices = DeviceVector<int>(matrices, "ij matrices");
  out.target_offsets = DeviceVector<int>(target_offsets, "ij target offsets");
  out.chunk_targets = DeviceVector<int>(targets, "ij targets");
  out.entry_offsets = DeviceVector<long long>(entry_offsets, "ij entry offsets");
  out.entry_counts = DeviceVector<int>(counts, "ij entry counts");
  out.ij_entries = DeviceVector<int>(packed, "ij entries");
  const double s = size, row_tiles = (size + cuda::kIjRows - 1) / cuda::kIjRows;
  const double stages = (size + columns - 1) / columns;
  st.matrix_bytes = matrix_loads * s * s * kComplexBytes;
  st.other_bytes =
      row_tiles * (source_bytes + stages * list_bytes) + targets.size() * s * 2 * kComplexBytes;
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
  // Per target, its columns in plan order.
  std::vector<std::size_t> order(lv.pairs.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return lv.pairs[a].target < lv.pairs[b].target;
  });
  std::vector<int> cells, offsets{0}, columns;
  for (std::size_t x : order) {
    if (!cells.empty() && cells.back() != lv.pairs[x].target)
      offsets.push_back(checked_int(columns.size(), "pairs"));
    if (cells.empty() || cells.back() != lv.pairs[x].target) cells.push_back(lv.pairs[x].target);
    columns.push_back(checked_int(pair_column[x], "columns"));
  }
  offsets.push_back(checked_int(columns.size(), "pairs"));
  out.padded_columns = column_source.size();
  out.reduce_targets = checked_int(cells.size(), "targets");
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
                         lv.entries.data(), lv.matrices.data(), multipole, local, stream);
      break;
    case M2LScheme::sibling:
      cuda::launch_sibling(size, lv.clusters, lv.cluster_targets.data(), lv.item_offsets.data(),
                           lv.sibling_items.data(), lv.matrices.data(), multipole, local, stream);
      break;
    case M2LScheme::cluster:
      cuda::launch_cluster(size, lv.chunks, lv.rows, lv.max_targets, lv.target_offsets.data(),
                           lv.chunk_targets.data(), lv.chunk_item_offsets.data(),
                           lv.cluster_items.data(), lv.cluster_pairs.data(), lv.matrices.data(),
                           multipole, local, stream);
      break;
    case M2LScheme::ij:
      cuda::launch_ij(size, lv.chunks, lv.threads, lv.team, lv.columns, lv.max_sources,
                      lv.max_matrices, lv.source_offsets.data(), lv.chunk_sources.data(),
                      lv.matrix_offsets.data(), lv.chunk_matrices.data(), lv.target_offsets.data(),
                      lv.chunk_targets.data(), lv.entry_offsets.data(), lv.entry_counts.data(),
                      lv.ij_entries.data(), lv.matrices.data(), multipole, local, stream);
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
                        lv.column_source.data(), lv.matrices.data(), multipole, level_products,
                        stream);
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
  std::size_t scratch_columns = 0;
  for (const M2LLevelPlan& lv : plan.levels) {
    for (const M2LPair& pair : lv.pairs)
      if (pair.target < 0 || std::size_t(pair.target) >= plan.num_cells || pair.source < 0 ||
          std::size_t(pair.source) >= plan.num_cells || pair.matrix < 0 ||
          std::size_t(pair.matrix) >= lv.matrix_count())
        throw Error("GPU M2L: a pair of the plan names a cell or matrix that does not exist");
    Impl::Level out;
    out.level = lv.level;
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
        out.batch = checked_int(chunk_matrix.size(), "batched products");
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
        out.tiles = checked_int(chunk_matrix.size(), "dmma tiles");
        out.row_pad =
            (size + cuda::dmma_rows(size) - 1) / cuda::dmma_rows(size) * cuda::dmma_rows(size);
        out.col_pad = (size + 15) / 16 * 16;
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
    const bool padded = scheme == M2LScheme::dmma;
    out.matrices = DeviceVector<double2>(
        column_major(lv, size, padded ? out.row_pad : size, padded ? out.col_pad : size),
        "M2L translation matrices");
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
      const auto* matrices = reinterpret_cast<const cuDoubleComplex*>(lv.matrices.data());
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
  std::size_t bytes = d.gathered.bytes() + d.products.bytes();
  for (const Impl::Level& lv : d.levels)
    bytes += lv.matrices.bytes() + lv.targets.bytes() + lv.offsets.bytes() + lv.entries.bytes() +
             lv.cluster_targets.bytes() + lv.item_offsets.bytes() + lv.sibling_items.bytes() +
             lv.target_offsets.bytes() + lv.chunk_targets.bytes() + lv.chunk_item_offsets.bytes() +
             lv.cluster_items.bytes() + lv.cluster_pairs.bytes() + lv.source_offsets.bytes() +
             lv.chunk_sources.bytes() + lv.matrix_offsets.bytes() + lv.chunk_matrices.bytes() +
             lv.entry_counts.bytes() + lv.ij_entries.bytes() + lv.entry_offsets.bytes() +
             lv.column_source.bytes() + lv.reduce_cells.bytes() + lv.reduce_offsets.bytes() +
             lv.reduce_columns.bytes() + lv.tile_matrix.bytes() + lv.a_pointers.bytes() +
             lv.b_pointers.bytes() + lv.c_pointers.bytes();
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
      text << ": B = " << options.chunk << ", 256 threads per (chunk, tile of rows x "
           << cuda::cluster_columns(size) << " columns); rows";
      for (const auto& lv : d.levels) text << " " << lv.rows;
      break;
    case M2LScheme::ij:
      text << ": B = " << options.chunk << ", threads per chunk (team per cell)";
      for (const auto& lv : d.levels) text << " " << lv.threads << " (" << lv.team << ")";
      text << ", " << cuda::kIjRows << " rows per block, columns per stage";
      for (const auto& lv : d.levels) text << " " << lv.columns;
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

void GpuM2L::synchronize() { cuda::check(cudaDeviceSynchronize(), "the M2L kernels"); }

M2LScheme GpuM2L::scheme() const { return impl_->scheme; }

const GpuM2LStatistics& GpuM2L::statistics() const { return impl_->statistics; }

std::string GpuM2L::describe() const { return impl_->description; }

}  // namespace fmbem::fmm
