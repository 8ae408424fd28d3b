#include <algorithm>
#include <cstdlib>
#include <type_traits>

#include "cuda_util.cuh"
#include "m2l_kernels.cuh"

namespace fmbem::fmm::cuda {

namespace {

// acc += a b, complex.
__device__ __forceinline__ void cfma(double2& acc, double2 a, double2 b) {
  acc.x = fma(a.x, b.x, acc.x);
  acc.x = fma(-a.y, b.y, acc.x);
  acc.y = fma(a.x, b.y, acc.y);
  acc.y = fma(a.y, b.x, acc.y);
}

__device__ __forceinline__ void add_to(double2* y, double2 a) {
  double2 v = *y;
  v.x += a.x;
  v.y += a.y;
  *y = v;
}

__device__ __forceinline__ void cp_async16(void* shared_ptr, const void* global_ptr,
                                           int src_bytes) {
  const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(shared_ptr));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(s), "l"(global_ptr),
               "r"(src_bytes));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}

// Dynamic shared memory beyond 48 KiB needs the kernel's consent.
template <class Kernel>
void allow_shared(Kernel kernel, std::size_t bytes) {
  if (bytes > 48 * 1024)
    check(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                               static_cast<int>(bytes)),
          "cudaFuncSetAttribute (shared memory)");
}

// ---------------------------------------------------------------------------------------------
// basic: a block per target cell, thread i row i (rows i + blockDim.x ... beyond 1024).

__global__ void basic_kernel(int size, int staged, const int* __restrict__ target_cells,
                             const int* __restrict__ offsets, const int2* __restrict__ entries,
                             const double2* __restrict__ matrices,
                             const double2* __restrict__ multipole, double2* __restrict__ local) {
  extern __shared__ double2 shared[];  // staged source moments
  const int target = target_cells[blockIdx.x];
  const int begin = offsets[blockIdx.x], end = offsets[blockIdx.x + 1];
  const std::size_t matrix_size = static_cast<std::size_t>(size) * size;
  for (int row0 = 0; row0 < size; row0 += blockDim.x) {
    const int i = row0 + threadIdx.x;
    double2 acc0 = {0.0, 0.0}, acc1 = {0.0, 0.0};
    for (int e0 = begin; e0 < end; e0 += staged) {
      const int count = min(staged, end - e0);
      __syncthreads();
      for (int x = threadIdx.x; x < count * size; x += blockDim.x) {
        const int q = x / size, j = x - q * size;
        shared[x] = multipole[static_cast<std::size_t>(entries[e0 + q].x) * size + j];
      }
      __syncthreads();
      if (i < size) {
        for (int q = 0; q < count; ++q) {
          const double2* t = matrices + entries[e0 + q].y * matrix_size + i;
          const double2* m = shared + q * size;
          int j = 0;
#pragma unroll 4
          for (; j + 1 < size; j += 2) {
            cfma(acc0, t[static_cast<std::size_t>(j) * size], m[j]);
            cfma(acc1, t[static_cast<std::size_t>(j + 1) * size], m[j + 1]);
          }
          if (j < size) cfma(acc0, t[static_cast<std::size_t>(j) * size], m[j]);
        }
      }
    }
    if (i < size)
      add_to(local + static_cast<std::size_t>(target) * size + i,
             double2{acc0.x + acc1.x, acc0.y + acc1.y});
  }
}

// ---------------------------------------------------------------------------------------------
// sibling: a block per target cluster, thread i row i of the 8 children's locals.

__global__ void sibling_kernel(int size, const int* __restrict__ cluster_targets,
                               const int* __restrict__ item_offsets,
                               const SiblingItem* __restrict__ items,
                               const double2* __restrict__ matrices,
                               const double2* __restrict__ multipole, double2* __restrict__ local) {
  // The item's source moments are read by all threads alike (one broadcast load per warp, from
  // L1): no staging, no barriers, so the row loads of T stream without stalls.
  const int cluster = blockIdx.x;
  const int begin = item_offsets[cluster], end = item_offsets[cluster + 1];
  const std::size_t matrix_size = static_cast<std::size_t>(size) * size;
  for (int row0 = 0; row0 < size; row0 += blockDim.x) {
    const int i = row0 + threadIdx.x;
    if (i >= size) break;
    double2 acc[8];
#pragma unroll
    for (int k = 0; k < 8; ++k) acc[k] = {0.0, 0.0};
    for (int it = begin; it < end; ++it) {
      const SiblingItem item = items[it];
      const double2* t = matrices + item.matrix * matrix_size + i;
      const double2* m[8];
#pragma unroll
      for (int k = 0; k < 8; ++k)
        m[k] = multipole + static_cast<std::size_t>(max(item.source[k], 0)) * size;
#pragma unroll 2
      for (int j = 0; j < size; ++j) {
        const double2 tv = t[static_cast<std::size_t>(j) * size];
#pragma unroll
        for (int k = 0; k < 8; ++k)
          if (item.source[k] >= 0) cfma(acc[k], tv, m[k][j]);
      }
    }
#pragma unroll
    for (int k = 0; k < 8; ++k) {
      const int c = cluster_targets[8 * cluster + k];
      if (c >= 0) add_to(local + static_cast<std::size_t>(c) * size + i, acc[k]);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// cluster: a block per (chunk, row tile of 32 TM rows), kClusterWarps warps taking the chunk's
// jobs (matrix, up to kClusterColumns pairs) one after another. A warp computes its job's
// product for the tile: lane l owns rows l + 32 q (q < TM) and holds TM x NQ accumulators; per
// column k it loads T(row, k) straight from device memory (coalesced, one block of columns
// ahead), and the NQ moments M_k of the job's sources, staged by the warp in shared memory
// (cp.async, a block of KK columns ahead), as broadcasts: every T entry, read once per chunk,
// feeds NQ complex FMAs, every moment TM, and the inner loop has no address arithmetic. No
// barriers: the warps only meet when a job adds its products to the chunk's locals in shared
// memory (atomic adds: two warps may hold jobs with a common target).

constexpr int kClusterStage = 4 * kClusterColumns;  // per warp: 2 x KK x NQ moments, at most

template <int TM, int NQ>
__device__ __forceinline__ void cluster_job(int size, int rows_per_block, int row,
                                            const double2* __restrict__ t,
                                            const int2* __restrict__ pairs, int count,
                                            const double2* __restrict__ multipole, double2* sums,
                                            double2* stage) {
  // Columns k per block: registers for the accumulators, two blocks of T and the moments of a
  // block (which the compiler loads ahead) stay within 128.
  constexpr int KK = NQ >= 8 ? 2 : 4;
  static_assert(2 * KK * NQ <= kClusterStage, "staging buffer");
  constexpr int PER = (NQ * KK + 31) / 32;  // moments a lane stages per block
  const int lane = threadIdx.x & 31;
  // The moments this lane stages: column c = e / KK, k = kb + e % KK for e = lane + 32 i.
  const double2* src[PER];
  bool live[PER];
#pragma unroll
  for (int i = 0; i < PER; ++i) {
    const int e = lane + 32 * i, c = e / KK;
    live[i] = e < NQ * KK && c < count;
    src[i] = multipole + (live[i] ? static_cast<std::size_t>(pairs[c].y) * size + e % KK : 0);
  }
  const auto load_moments = [&](int buffer, int kb) {
    double2* dst = stage + buffer * KK * NQ;
#pragma unroll
    for (int i = 0; i < PER; ++i) {
      const int e = lane + 32 * i;
      if (e < NQ * KK) {
        const bool ok = live[i] && kb + e % KK < size;
        // [kk][c]: the warp reads one (kk, c) at a time, all lanes alike.
        cp_async16(dst + (e % KK) * NQ + e / KK, ok ? src[i] + kb : multipole, ok ? 16 : 0);
      }
    }
  };
  bool ok[TM];
#pragma unroll
  for (int q = 0; q < TM; ++q) ok[q] = row + 32 * q < size;
  double2 acc[TM][NQ];
#pragma unroll
  for (int q = 0; q < TM; ++q)
#pragma unroll
    for (int c = 0; c < NQ; ++c) acc[q][c] = {0.0, 0.0};
  double2 a[KK][TM], b[KK][TM];
#pragma unroll
  for (int u = 0; u < KK; ++u)
#pragma unroll
    for (int q = 0; q < TM; ++q)
      a[u][q] = ok[q] && u < size ? __ldg(t + static_cast<std::size_t>(u) * size + 32 * q)
                                  : double2{0.0, 0.0};
  __syncwarp();  // the previous job's last reads of the staging buffer are done
  load_moments(0, 0);
  cp_async_commit();
#pragma unroll 1
  for (int kb = 0, buffer = 0; kb < size; kb += KK, buffer ^= 1) {
    const bool more = kb + KK < size;
    if (more) {
      load_moments(buffer ^ 1, kb + KK);
      cp_async_commit();
    }
    const double2* tn = t + static_cast<std::size_t>(kb + KK) * size;
#pragma unroll
    for (int u = 0; u < KK; ++u)
#pragma unroll
      for (int q = 0; q < TM; ++q)
        b[u][q] = ok[q] && kb + KK + u < size
                      ? __ldg(tn + static_cast<std::size_t>(u) * size + 32 * q)
                      : double2{0.0, 0.0};
    if (more)
      cp_async_wait<1>();
    else
      cp_async_wait<0>();
    __syncwarp();
    const double2* mk = stage + buffer * KK * NQ;
#pragma unroll
    for (int u = 0; u < KK; ++u)
#pragma unroll
      for (int c = 0; c < NQ; ++c) {
        const double2 mv = mk[u * NQ + c];
#pragma unroll
        for (int q = 0; q < TM; ++q) cfma(acc[q][c], a[u][q], mv);
      }
    __syncwarp();  // this buffer is loaded again two blocks on
#pragma unroll
    for (int u = 0; u < KK; ++u)
#pragma unroll
      for (int q = 0; q < TM; ++q) a[u][q] = b[u][q];
  }
#pragma unroll
  for (int c = 0; c < NQ; ++c) {
    if (c >= count) break;
    double2* s = sums + pairs[c].x * rows_per_block;
#pragma unroll
    for (int q = 0; q < TM; ++q)
      if (ok[q]) {
        atomicAdd(&s[32 * q].x, acc[q][c].x);
        atomicAdd(&s[32 * q].y, acc[q][c].y);
      }
  }
}

template <int TM>
__global__ void __launch_bounds__(kClusterWarps * 32, 2)
    cluster_kernel(int size, const int* __restrict__ target_offsets,
                   const int* __restrict__ targets, const int* __restrict__ item_offsets,
                   const ClusterItem* __restrict__ items, const int2* __restrict__ pairs,
                   const double2* __restrict__ matrices, const double2* __restrict__ multipole,
                   double2* __restrict__ local) {
  constexpr int RT = 32 * TM;
  extern __shared__ __align__(16) double2 shared[];  // staging [warp][..], sums [target][RT]
  double2* sums = shared + kClusterWarps * kClusterStage;
  __shared__ int next_job;
  const int chunk = blockIdx.x, row0 = blockIdx.y * RT;
  const int first_target = target_offsets[chunk];
  const int num_targets = target_offsets[chunk + 1] - first_target;
  for (int x = threadIdx.x; x < num_targets * RT; x += blockDim.x) sums[x] = {0.0, 0.0};
  if (threadIdx.x == 0) next_job = kClusterWarps;
  __syncthreads();
  const int first = item_offsets[chunk], jobs = item_offsets[chunk + 1] - first;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  double2* stage = shared + warp * kClusterStage;
  const std::size_t matrix_size = static_cast<std::size_t>(size) * size;
  // Jobs in order (by matrix), handed out as the warps come free.
  for (int j = warp; j < jobs;) {
    int next = 0;
    if (lane == 0) next = atomicAdd(&next_job, 1);
    const ClusterItem job = items[first + j];
    const double2* t = matrices + job.matrix * matrix_size + row0 + lane;
    const int2* p = pairs + job.begin;
    const int count = job.end - job.begin;
    double2* s = sums + lane;
    const int row = row0 + lane;
    if (count <= 1)
      cluster_job<TM, 1>(size, RT, row, t, p, count, multipole, s, stage);
    else if (count <= 2)
      cluster_job<TM, 2>(size, RT, row, t, p, count, multipole, s, stage);
    else if (count <= 4)
      cluster_job<TM, 4>(size, RT, row, t, p, count, multipole, s, stage);
    else if (count <= 8)
      cluster_job<TM, 8>(size, RT, row, t, p, count, multipole, s, stage);
    else  // 16 columns: one row per lane at a time (TM x 16 accumulators would spill)
#pragma unroll 1
      for (int q = 0; q < TM; ++q)
        cluster_job<1, 16>(size, RT, row + 32 * q, t + 32 * q, p, count, multipole, s + 32 * q,
                           stage);
    j = __shfl_sync(0xffffffffu, next, 0);
  }
  __syncthreads();
  const int rows = min(RT, size - row0);
  for (int x = threadIdx.x; x < num_targets * RT; x += blockDim.x) {
    const int target = x / RT, r = x - target * RT;
    if (r < rows)
      add_to(local + static_cast<std::size_t>(targets[first_target + target]) * size + row0 + r,
             sums[x]);
  }
}

// ---------------------------------------------------------------------------------------------
// ij: a block per (chunk, tile of 8 TM rows); teams of kIjTeam threads (a quarter warp), member
// m owning rows m + 8 q (q < TM). The chunk's target cells go in units of two (the pairs whose
// interaction lists overlap most) or one; a unit's interaction lists, merged by matrix (the
// list of the union, an entry (v, source of the first, source of the second)), are cut into
// segments, one per team. Per stage of C columns j, T_ij of all the chunk's matrices
// ([jj][matrix][row]: a team reads 8 consecutive rows, 128 bytes, free of bank conflicts) and
// M_j of all its sources ([jj][source]: one address per team, a broadcast) lie in shared memory,
// loaded with cp.async into a ring of 2 to 4 stages (one barrier per stage). For each entry, the
// list innermost, a thread loads T_ij(v) once per row into registers and applies it to both cells
// of its unit (register tiling over rows x target cells: a matrix entry feeds up to two complex
// FMAs, a moment TM). At the end the teams of a target add up in shared memory.

constexpr int kIjMaxThreads = kIjMaxTeams * kIjTeam;

template <int TM, int C>
__global__ void __launch_bounds__(kIjMaxThreads)
    ij_kernel(int size, int teams, int ring, int max_sources, int max_matrices, int max_entries,
              const int* __restrict__ source_offsets, const int* __restrict__ sources,
              const int* __restrict__ matrix_offsets, const int* __restrict__ chunk_matrices,
              const int* __restrict__ target_offsets, const int* __restrict__ targets,
              const int2* __restrict__ target_teams, const long long* __restrict__ entry_offsets,
              const int* __restrict__ entry_counts, const unsigned* __restrict__ entries,
              const double2* __restrict__ matrices, const double2* __restrict__ multipole,
              double2* __restrict__ local) {
  constexpr int RT = kIjTeam * TM;
  extern __shared__ __align__(16) double2 shared[];
  unsigned* sh_entries = reinterpret_cast<unsigned*>(shared + ring);
  int* sh_matrices = reinterpret_cast<int*>(sh_entries + max_entries * teams);
  int* sh_sources = sh_matrices + max_matrices;
  const int chunk = blockIdx.x, row0 = blockIdx.y * RT;
  const int first_source = source_offsets[chunk];
  const int ns = source_offsets[chunk + 1] - first_source;
  const int first_matrix = matrix_offsets[chunk];
  const int nm = matrix_offsets[chunk + 1] - first_matrix;
  const int first_target = target_offsets[chunk];
  const int nt = target_offsets[chunk + 1] - first_target;
  const int count = entry_counts[chunk];
  const unsigned* chunk_entries = entries + entry_offsets[chunk];
  for (int x = threadIdx.x; x < count * teams; x += blockDim.x) sh_entries[x] = chunk_entries[x];
  for (int x = threadIdx.x; x < nm; x += blockDim.x)
    sh_matrices[x] = chunk_matrices[first_matrix + x];
  for (int x = threadIdx.x; x < ns; x += blockDim.x) sh_sources[x] = sources[first_source + x];
  __syncthreads();
  const std::size_t matrix_size = static_cast<std::size_t>(size) * size;
  const int t_values = nm * RT;  // per column jj
  // Stage layout: T [jj][v][r] (C nm RT), then M [jj][s] (C ns); as many stages in flight as
  // the ring holds for this chunk's lists, at least 2 (the host sized it so), at most 4.
  const int stage_size = C * (t_values + ns);
  const int depth = min(4, ring / stage_size);
  const auto load = [&](int buffer, int j0) {
    double2* t_shared = shared + buffer * stage_size;
    double2* m_shared = t_shared + static_cast<std::size_t>(C) * t_values;
    // A thread copies row r of the tile (fixed) for (jj, v) = y, y + step, .. (no divisions).
    const int r = threadIdx.x % RT, step = blockDim.x / RT, i = row0 + r;
    int jj = 0, v = threadIdx.x / RT;
    while (v >= nm && jj < C) v -= nm, ++jj;
    for (int y = threadIdx.x / RT; y < C * nm; y += step) {
      const int j = j0 + jj;
      const bool ok = i < size && j < size;
      cp_async16(
          t_shared + y * RT + r,
          ok ? matrices + sh_matrices[v] * matrix_size + static_cast<std::size_t>(j) * size + i
             : matrices,
          ok ? 16 : 0);
      v += step;
      while (v >= nm && jj < C) v -= nm, ++jj;
    }
    int mj = 0, ms = threadIdx.x;
    while (ms >= ns && mj < C) ms -= ns, ++mj;
    for (int x = threadIdx.x; x < C * ns; x += blockDim.x) {
      const int j = j0 + mj;
      const bool ok = j < size;
      cp_async16(m_shared + x,
                 ok ? multipole + static_cast<std::size_t>(sh_sources[ms]) * size + j : multipole,
                 ok ? 16 : 0);
      ms += blockDim.x;
      while (ms >= ns && mj < C) ms -= ns, ++mj;
    }
  };
  const int team = threadIdx.x / kIjTeam, member = threadIdx.x - team * kIjTeam;
  double2 acc[2][TM];
#pragma unroll
  for (int q = 0; q < TM; ++q) acc[0][q] = acc[1][q] = {0.0, 0.0};
  const int stages = (size + C - 1) / C;
  for (int st = 0; st < depth - 1; ++st) {
    if (st < stages) load(st, st * C);
    cp_async_commit();  // empty groups too: the count of groups stays uniform
  }
  for (int st = 0, buffer = 0; st < stages; ++st, buffer = buffer + 1 == depth ? 0 : buffer + 1) {
    // Stage st landed (depth - 2 younger groups may still fly); one barrier makes it visible
    // and frees the buffer of stage st - 1 for stage st + depth - 1.
    if (depth == 4)
      cp_async_wait<2>();
    else if (depth == 3)
      cp_async_wait<1>();
    else
      cp_async_wait<0>();
    __syncthreads();
    if (st + depth - 1 < stages) {
      const int next = buffer == 0 ? depth - 1 : buffer - 1;
      load(next, (st + depth - 1) * C);
    }
    cp_async_commit();
    const double2* t_shared = shared + buffer * stage_size + member;
    const double2* m_shared = shared + buffer * stage_size + static_cast<std::size_t>(C) * t_values;
    const unsigned* my_entries = sh_entries + team;
#pragma unroll 2
    for (int e = 0; e < count; ++e) {
      const unsigned entry = my_entries[e * teams];
      if (entry == kIjEnd) break;
      const int v = entry & 1023, sa = (entry >> 10) & 2047, sb = entry >> 21;
      const double2* t = t_shared + v * RT;
#pragma unroll
      for (int jj = 0; jj < C; ++jj) {
        double2 tv[TM];
#pragma unroll
        for (int q = 0; q < TM; ++q) tv[q] = t[jj * t_values + kIjTeam * q];
        if (sa != kIjNone) {
          const double2 mv = m_shared[jj * ns + sa];
#pragma unroll
          for (int q = 0; q < TM; ++q) cfma(acc[0][q], tv[q], mv);
        }
        if (sb != kIjNone) {
          const double2 mv = m_shared[jj * ns + sb];
#pragma unroll
          for (int q = 0; q < TM; ++q) cfma(acc[1][q], tv[q], mv);
        }
      }
    }
  }
  cp_async_wait<0>();  // (only empty groups are left)
  __syncthreads();
  // The teams of a target meet in shared memory (the stage buffers are free now).
  double2* scratch = shared;  // [team][cell of the unit][RT]
#pragma unroll
  for (int q = 0; q < TM; ++q) {
    scratch[(2 * team) * RT + member + kIjTeam * q] = acc[0][q];
    scratch[(2 * team + 1) * RT + member + kIjTeam * q] = acc[1][q];
  }
  __syncthreads();
  const int rows = min(RT, size - row0);
  for (int x = threadIdx.x; x < nt * RT; x += blockDim.x) {
    const int target = x / RT, r = x - target * RT;
    if (r >= rows) continue;
    const int2 range = target_teams[first_target + target];  // teams, cell of the unit << 16
    const int cell = range.x >> 16;
    double2 sum = {0.0, 0.0};
    for (int k = range.x & 0xffff; k < range.y; ++k) {
      const double2 v = scratch[(2 * k + cell) * RT + r];
      sum.x += v.x;
      sum.y += v.y;
    }
    add_to(local + static_cast<std::size_t>(targets[first_target + target]) * size + row0 + r, sum);
  }
}

// ---------------------------------------------------------------------------------------------
// gemm and dmma: gather, reduce.

__global__ void gather_kernel(int size, long long total, const int* __restrict__ column_source,
                              const double2* __restrict__ multipole,
                              double2* __restrict__ gathered) {
  for (long long x = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; x < total;
       x += static_cast<long long>(gridDim.x) * blockDim.x) {
    const long long col = x / size;
    const int j = static_cast<int>(x - col * size);
    const int s = column_source[col];
    gathered[x] = s >= 0 ? multipole[static_cast<std::size_t>(s) * size + j] : double2{0.0, 0.0};
  }
}

// A warp per target cell.
__global__ void reduce_kernel(int size, int num_targets, const int* __restrict__ targets,
                              const int* __restrict__ offsets, const int* __restrict__ columns,
                              const double2* __restrict__ products, double2* __restrict__ local) {
  const int target = (blockIdx.x * blockDim.x + threadIdx.x) / 32, lane = threadIdx.x % 32;
  if (target >= num_targets) return;
  const int begin = offsets[target], end = offsets[target + 1];
  double2* l = local + static_cast<std::size_t>(targets[target]) * size;
  for (int i = lane; i < size; i += 32) {
    double2 sum0 = {0.0, 0.0}, sum1 = {0.0, 0.0};
    int c = begin;
    for (; c + 1 < end; c += 2) {
      const double2 a = products[static_cast<std::size_t>(columns[c]) * size + i];
      const double2 b = products[static_cast<std::size_t>(columns[c + 1]) * size + i];
      sum0.x += a.x;
      sum0.y += a.y;
      sum1.x += b.x;
      sum1.y += b.y;
    }
    if (c < end) {
      const double2 a = products[static_cast<std::size_t>(columns[c]) * size + i];
      sum0.x += a.x;
      sum0.y += a.y;
    }
    add_to(l + i, double2{sum0.x + sum1.x, sum0.y + sum1.y});
  }
}

// ---------------------------------------------------------------------------------------------
// dmma: C (MT x 64, complex) = A (MT x K rows of T) B (K x 64 gathered moments) per block,
// warps of WM x WN, real and imaginary parts as four real products on mma.sync m8n8k4 f64.
// Tiles of A and B stream through shared memory in steps of 16 columns, two stages deep,
// with cp.async (the gather zero-fills missing columns and rows beyond p^2).

// c (8 x 8, this thread's two entries) += a (8 x 4) b (4 x 8).
__device__ __forceinline__ void mma_884(double (&c)[2], double a, double b) {
  asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0,%1}, {%2}, {%3}, {%0,%1};\n"
               : "+d"(c[0]), "+d"(c[1])
               : "d"(a), "d"(b));
}

constexpr int kDmmaK = 16;                // K columns per stage
constexpr int kDmmaKPadded = kDmmaK + 4;  // B rows padded: fragment loads free of bank conflicts
constexpr int kDmmaStages = 2;

template <int MT, int WM, int WN>
struct DmmaShape {
  static constexpr int NT = kDmmaColumns;
  static constexpr int warps_m = MT / WM, warps_n = NT / WN;
  static constexpr int threads = warps_m * warps_n * 32;
  static constexpr std::size_t shared_bytes =
      kDmmaStages * (kDmmaK * MT + NT * kDmmaKPadded) * sizeof(double2) + NT * sizeof(int);
};

template <int MT, int WM, int WN>
__global__ void __launch_bounds__(DmmaShape<MT, WM, WN>::threads)
    dmma_kernel(int size, int row_pad, int col_pad, int row_tiles,
                const int* __restrict__ tile_matrix, const int* __restrict__ column_source,
                const double2* __restrict__ matrices, const double2* __restrict__ multipole,
                double2* __restrict__ products) {
  using Shape = DmmaShape<MT, WM, WN>;
  constexpr int NT = Shape::NT, THREADS = Shape::threads, MB = WM / 8, NB = WN / 8;
  extern __shared__ __align__(16) unsigned char raw[];
  double2* a_tiles = reinterpret_cast<double2*>(raw);      // [stage][k][MT]
  double2* b_tiles = a_tiles + kDmmaStages * kDmmaK * MT;  // [stage][n][k padded]
  int* sources = reinterpret_cast<int*>(b_tiles + kDmmaStages * NT * kDmmaKPadded);
  const int tile = blockIdx.x / row_tiles, row_tile = blockIdx.x - tile * row_tiles;
  const int row0 = row_tile * MT;
  const std::size_t col0 = static_cast<std::size_t>(tile) * NT;
  const double2* a_global =
      matrices + static_cast<std::size_t>(tile_matrix[tile]) * row_pad * col_pad + row0;
  const int tid = threadIdx.x;
  for (int n = tid; n < NT; n += THREADS) sources[n] = column_source[col0 + n];
  __syncthreads();

  const auto load = [&](int stage, int k0) {
    double2* as = a_tiles + stage * kDmmaK * MT;
    for (int x = tid; x < kDmmaK * MT; x += THREADS) {
      const int k = x / MT, i = x - k * MT;
      cp_async16(as + x, a_global + static_cast<std::size_t>(k0 + k) * row_pad + i, 16);
    }
    double2* bs = b_tiles + stage * NT * kDmmaKPadded;
    for (int x = tid; x < kDmmaK * NT; x += THREADS) {
      const int n = x / kDmmaK, k = x - n * kDmmaK;
      const int s = sources[n], j = k0 + k;
      const bool ok = s >= 0 && j < size;
      cp_async16(bs + n * kDmmaKPadded + k,
                 ok ? multipole + static_cast<std::size_t>(s) * size + j : multipole, ok ? 16 : 0);
    }
  };

  const int warp = tid / 32, lane = tid % 32;
  const int wm0 = (warp % Shape::warps_m) * WM, wn0 = (warp / Shape::warps_m) * WN;
  const int g = lane >> 2, t4 = lane & 3;
  double cr[MB][NB][2], ci[MB][NB][2];
#pragma unroll
  for (int mb = 0; mb < MB; ++mb)
#pragma unroll
    for (int nb = 0; nb < NB; ++nb)
      cr[mb][nb][0] = cr[mb][nb][1] = ci[mb][nb][0] = ci[mb][nb][1] = 0.0;

  const int num_k = col_pad / kDmmaK;
  load(0, 0);
  cp_async_commit();
  for (int kt = 0; kt < num_k; ++kt) {
    if (kt + 1 < num_k) {
      load((kt + 1) % kDmmaStages, (kt + 1) * kDmmaK);
      cp_async_commit();
      cp_async_wait<1>();
    } else {
      cp_async_wait<0>();
    }
    __syncthreads();
    const double2* as = a_tiles + (kt % kDmmaStages) * kDmmaK * MT;
    const double2* bs = b_tiles + (kt % kDmmaStages) * NT * kDmmaKPadded;
#pragma unroll
    for (int kk = 0; kk < kDmmaK; kk += 4) {
      double2 a[MB], b[NB];
#pragma unroll
      for (int mb = 0; mb < MB; ++mb) a[mb] = as[(kk + t4) * MT + wm0 + mb * 8 + g];
#pragma unroll
      for (int nb = 0; nb < NB; ++nb) b[nb] = bs[(wn0 + nb * 8 + g) * kDmmaKPadded + kk + t4];
#pragma unroll
      for (int mb = 0; mb < MB; ++mb) {
        const double a_re = a[mb].x, a_im = a[mb].y, minus_a_im = -a[mb].y;
#pragma unroll
        for (int nb = 0; nb < NB; ++nb) {
          mma_884(cr[mb][nb], a_re, b[nb].x);
          mma_884(cr[mb][nb], minus_a_im, b[nb].y);
          mma_884(ci[mb][nb], a_re, b[nb].y);
          mma_884(ci[mb][nb], a_im, b[nb].x);
        }
      }
    }
    __syncthreads();
  }
#pragma unroll
  for (int mb = 0; mb < MB; ++mb) {
    const int row = row0 + wm0 + mb * 8 + g;
    if (row >= size) continue;
#pragma unroll
    for (int nb = 0; nb < NB; ++nb)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int n = wn0 + nb * 8 + 2 * t4 + h;
        if (sources[n] < 0) continue;
        products[(col0 + n) * size + row] = double2{cr[mb][nb][h], ci[mb][nb][h]};
      }
  }
}

template <int MT, int WM, int WN>
void run_dmma(int size, int row_pad, int col_pad, int tiles, const int* tile_matrix,
              const int* column_source, const double2* matrices, const double2* multipole,
              double2* products, cudaStream_t stream) {
  using Shape = DmmaShape<MT, WM, WN>;
  const auto kernel = dmma_kernel<MT, WM, WN>;
  allow_shared(kernel, Shape::shared_bytes);
  const int row_tiles = row_pad / MT;
  const long long blocks = static_cast<long long>(tiles) * row_tiles;
  if (blocks == 0) return;
  kernel<<<static_cast<unsigned>(blocks), Shape::threads, Shape::shared_bytes, stream>>>(
      size, row_pad, col_pad, row_tiles, tile_matrix, column_source, matrices, multipole, products);
  check_launch("dmma_kernel");
}

// ---------------------------------------------------------------------------------------------

__device__ __forceinline__ unsigned hash(unsigned x) {
  x ^= x >> 16;
  x *= 0x7feb352dU;
  x ^= x >> 15;
  x *= 0x846ca68bU;
  x ^= x >> 16;
  return x;
}

__global__ void fill_random_kernel(double* data, std::size_t count, unsigned seed) {
  for (std::size_t x = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; x < count;
       x += static_cast<std::size_t>(gridDim.x) * blockDim.x)
    data[x] = hash(static_cast<unsigned>(x) * 2654435761U + seed) * (2.0 / 4294967295.0) - 1.0;
}

constexpr int kFmaChains = 8;

__global__ void fma_kernel(double* sink, int iterations) {
  double a[kFmaChains];
#pragma unroll
  for (int c = 0; c < kFmaChains; ++c) a[c] = 1.0 + 1e-9 * (threadIdx.x + c);
  const double b = 0.999999999, d = 1e-9;
  for (int it = 0; it < iterations; ++it)
#pragma unroll
    for (int c = 0; c < kFmaChains; ++c) a[c] = fma(a[c], b, d);
  double s = 0.0;
#pragma unroll
  for (int c = 0; c < kFmaChains; ++c) s += a[c];
  if (s == 12345.0) sink[0] = s;  // never true; keeps the chains alive
}

}  // namespace

void launch_basic(int size, int blocks, int staged, const int* target_cells, const int* offsets,
                  const int2* entries, const double2* matrices, const double2* multipole,
                  double2* local, cudaStream_t stream) {
  if (blocks == 0) return;
  const int threads = std::min(size, 1024);
  const std::size_t shared = static_cast<std::size_t>(staged) * size * sizeof(double2);
  allow_shared(basic_kernel, shared);
  basic_kernel<<<blocks, threads, shared, stream>>>(size, staged, target_cells, offsets, entries,
                                                    matrices, multipole, local);
  check_launch("basic_kernel");
}

void launch_sibling(int size, int clusters, const int* cluster_targets, const int* item_offsets,
                    const SiblingItem* items, const double2* matrices, const double2* multipole,
                    double2* local, cudaStream_t stream) {
  if (clusters == 0) return;
  const int threads = std::min(size, 1024);
  sibling_kernel<<<clusters, threads, 0, stream>>>(size, cluster_targets, item_offsets, items,
                                                   matrices, multipole, local);
  check_launch("sibling_kernel");
}

int cluster_rows(int size) { return size > 32 ? 64 : 32; }

std::size_t cluster_shared_bytes(int size, int max_targets) {
  return (static_cast<std::size_t>(kClusterWarps) * kClusterStage +
          static_cast<std::size_t>(max_targets) * cluster_rows(size)) *
         sizeof(double2);
}

void launch_cluster(int size, int chunks, int max_targets, const int* target_offsets,
                    const int* targets, const int* item_offsets, const ClusterItem* items,
                    const int2* pairs, const double2* matrices, const double2* multipole,
                    double2* local, cudaStream_t stream) {
  if (chunks == 0) return;
  const std::size_t shared = cluster_shared_bytes(size, max_targets);
  const int rows = cluster_rows(size);
  const dim3 grid(chunks, (size + rows - 1) / rows);
  // Always: the kernel's static shared word counts against the default 48 KiB as well.
  const auto set_shared = [&](auto kernel) {
    check(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                               static_cast<int>(shared)),
          "cudaFuncSetAttribute (shared memory)");
  };
  if (rows == 64) {
    set_shared(cluster_kernel<2>);
    cluster_kernel<2><<<grid, kClusterWarps * 32, shared, stream>>>(
        size, target_offsets, targets, item_offsets, items, pairs, matrices, multipole, local);
  } else {
    set_shared(cluster_kernel<1>);
    cluster_kernel<1><<<grid, kClusterWarps * 32, shared, stream>>>(
        size, target_offsets, targets, item_offsets, items, pairs, matrices, multipole, local);
  }
  check_launch("cluster_kernel");
}

// The stage ring: two stages of the largest lists at least, all the shared memory (up to
// kIjShared) when more fits; the teams' sums reuse it at the end. Then the lists.
static std::size_t ij_ring(int tm, int teams, int columns, int max_sources, int max_matrices,
                           int max_entries) {
  const std::size_t rows = static_cast<std::size_t>(kIjTeam) * tm;
  const std::size_t lists =
      (static_cast<std::size_t>(max_entries) * teams + max_matrices + max_sources) * sizeof(int);
  const std::size_t two =
      2 * static_cast<std::size_t>(columns) *
      (static_cast<std::size_t>(max_matrices) * rows + static_cast<std::size_t>(max_sources));
  const std::size_t least = std::max(two, 2 * static_cast<std::size_t>(teams) * rows);
  const std::size_t most = lists < kIjShared ? (kIjShared - lists) / sizeof(double2) : 0;
  return std::max(least, most);
}

std::size_t ij_shared_bytes(int tm, int teams, int columns, int max_sources, int max_matrices,
                            int max_entries) {
  return ij_ring(tm, teams, columns, max_sources, max_matrices, max_entries) * sizeof(double2) +
         (static_cast<std::size_t>(max_entries) * teams + max_matrices + max_sources) * sizeof(int);
}

void launch_ij(int size, int chunks, int tm, int teams, int columns, int max_sources,
               int max_matrices, int max_entries, const int* source_offsets, const int* sources,
               const int* matrix_offsets, const int* chunk_matrices, const int* target_offsets,
               const int* targets, const int2* target_teams, const long long* entry_offsets,
               const int* entry_counts, const unsigned* entries, const double2* matrices,
               const double2* multipole, double2* local, cudaStream_t stream) {
  if (chunks == 0) return;
  const std::size_t shared =
      ij_shared_bytes(tm, teams, columns, max_sources, max_matrices, max_entries);
  const int ring =
      static_cast<int>(ij_ring(tm, teams, columns, max_sources, max_matrices, max_entries));
  const int rows = kIjTeam * tm;
  const dim3 grid(chunks, (size + rows - 1) / rows);
  const auto run = [&](auto kernel) {
    allow_shared(kernel, shared);
    kernel<<<grid, teams * kIjTeam, shared, stream>>>(
        size, teams, ring, max_sources, max_matrices, max_entries, source_offsets, sources,
        matrix_offsets, chunk_matrices, target_offsets, targets, target_teams, entry_offsets,
        entry_counts, entries, matrices, multipole, local);
  };
  const auto with_columns = [&](auto tm_constant) {
    constexpr int TM = decltype(tm_constant)::value;
    if (columns == 4)
      run(ij_kernel<TM, 4>);
    else if (columns == 2)
      run(ij_kernel<TM, 2>);
    else
      run(ij_kernel<TM, 1>);
  };
  if (tm == 4)
    with_columns(std::integral_constant<int, 4>{});
  else if (tm == 2)
    with_columns(std::integral_constant<int, 2>{});
  else
    with_columns(std::integral_constant<int, 1>{});
  check_launch("ij_kernel");
}

void launch_gather(int size, std::size_t columns, const int* column_source,
                   const double2* multipole, double2* gathered, cudaStream_t stream) {
  const long long total = static_cast<long long>(columns) * size;
  if (total == 0) return;
  const int threads = 256;
  const long long blocks = std::min<long long>((total + threads - 1) / threads, 132LL * 64);
  gather_kernel<<<static_cast<unsigned>(blocks), threads, 0, stream>>>(size, total, column_source,
                                                                       multipole, gathered);
  check_launch("gather_kernel");
}

void launch_reduce(int size, int num_targets, const int* targets, const int* offsets,
                   const int* columns, const double2* products, double2* local,
                   cudaStream_t stream) {
  if (num_targets == 0) return;
  const int threads = 256, per_block = threads / 32;
  reduce_kernel<<<(num_targets + per_block - 1) / per_block, threads, 0, stream>>>(
      size, num_targets, targets, offsets, columns, products, local);
  check_launch("reduce_kernel");
}

int dmma_rows(int size) { return size <= 16 ? 16 : size <= 64 ? 64 : 128; }

// Warps of 32 x 16 products (the default; measured faster at p = 8, equal at p = 16 on an
// H100) or, with FMBEM_DMMA_WARP_COLUMNS=32 (benchmarks), of 32 x 32: half the warps, twice
// the registers each.
int dmma_warp_columns() {
  static const int columns = [] {
    const char* text = std::getenv("FMBEM_DMMA_WARP_COLUMNS");
    return text && std::atoi(text) == 32 ? 32 : 16;
  }();
  return columns;
}

void launch_dmma(int size, int row_pad, int col_pad, int tiles, const int* tile_matrix,
                 const int* column_source, const double2* matrices, const double2* multipole,
                 double2* products, cudaStream_t stream) {
  const bool narrow = dmma_warp_columns() == 16;
  switch (dmma_rows(size)) {
    case 16:
      if (narrow)
        run_dmma<16, 16, 16>(size, row_pad, col_pad, tiles, tile_matrix, column_source, matrices,
                             multipole, products, stream);
      else
        run_dmma<16, 16, 32>(size, row_pad, col_pad, tiles, tile_matrix, column_source, matrices,
                             multipole, products, stream);
      break;
    case 64:
      if (narrow)
        run_dmma<64, 32, 16>(size, row_pad, col_pad, tiles, tile_matrix, column_source, matrices,
                             multipole, products, stream);
      else
        run_dmma<64, 32, 32>(size, row_pad, col_pad, tiles, tile_matrix, column_source, matrices,
                             multipole, products, stream);
      break;
    default:
      if (narrow)
        run_dmma<128, 32, 16>(size, row_pad, col_pad, tiles, tile_matrix, column_source, matrices,
                              multipole, products, stream);
      else
        run_dmma<128, 32, 32>(size, row_pad, col_pad, tiles, tile_matrix, column_source, matrices,
                              multipole, products, stream);
  }
}

void launch_fill_random(double* data, std::size_t count, unsigned seed) {
  if (count == 0) return;
  fill_random_kernel<<<132 * 16, 256>>>(data, count, seed);
  check_launch("fill_random_kernel");
}

double launch_fma_peak(double* sink, int blocks, int threads, int iterations) {
  fma_kernel<<<blocks, threads>>>(sink, iterations);
  check_launch("fma_kernel");
  return 2.0 * kFmaChains * static_cast<double>(iterations) * blocks * threads;
}

}  // namespace fmbem::fmm::cuda
