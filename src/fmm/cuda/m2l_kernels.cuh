#pragma once
// The M2L kernels of the GPU schemes and their launches (not a public header). Expansions are
// double2 (re, im) arrays, cell-major: cell c owns [c size, (c + 1) size), size = p^2.
// Matrices are column-major p^2 x p^2 (entry (i, j) at j size + i) so that threads owning
// consecutive rows read consecutive entries; dmma's are padded (see launch_dmma).
#include <cuda_runtime.h>

#include <cstddef>

namespace fmbem::fmm::cuda {

// sibling: one matrix-matrix product of a cluster pair: the sources of the target cluster's
// children (by octant, -1 where that child has no pair with this matrix here).
struct SiblingItem {
  int matrix;
  int source[8];
};

// cluster: one job of a chunk: its pairs [begin, end) that use one matrix (at most
// kClusterColumns of them; a matrix with more pairs in the chunk gives several jobs).
struct ClusterItem {
  int matrix;
  int begin, end;
};

// basic: block b computes local[target_cells[b]] += sum over entries [offsets[b],
// offsets[b + 1]) of T[entry.y] multipole[entry.x]; blocks of min(size, 1024) threads, staged
// source moments per shared-memory pass.
void launch_basic(int size, int blocks, int staged, const int* target_cells, const int* offsets,
                  const int2* entries, const double2* matrices, const double2* multipole,
                  double2* local, cudaStream_t stream);

// sibling: block c for target cluster c, cluster_targets[8 c + octant] its children (-1: none),
// items [item_offsets[c], item_offsets[c + 1]).
void launch_sibling(int size, int clusters, const int* cluster_targets, const int* item_offsets,
                    const SiblingItem* items, const double2* matrices, const double2* multipole,
                    double2* local, cudaStream_t stream);

// cluster: block (chunk, row tile of cluster_rows(size) rows), kClusterWarps warps; each warp
// takes the chunk's jobs in turn (jobs [item_offsets[c], item_offsets[c + 1]) of chunk c) and
// computes the job's product for the block's rows, lane l owning rows l, l + 32 (..): T read
// straight from device memory into registers, once per chunk, each entry reused for all the
// job's pairs; the pairs' source moments read as warp-wide broadcasts. Pairs are (target index
// within the chunk, source cell); the products accumulate in shared memory per target (targets
// of chunk c: targets[target_offsets[c] ..]). max_targets: the most targets of one chunk.
constexpr int kClusterWarps = 8;
constexpr int kClusterColumns = 16;
int cluster_rows(int size);
void launch_cluster(int size, int chunks, int max_targets, const int* target_offsets,
                    const int* targets, const int* item_offsets, const ClusterItem* items,
                    const int2* pairs, const double2* matrices, const double2* multipole,
                    double2* local, cudaStream_t stream);
std::size_t cluster_shared_bytes(int size, int max_targets);

// ij: block (chunk, tile of 8 tm rows), teams of kIjTeam threads (a quarter warp); member m of a
// team owns rows m, m + 8, .. of the tile. The chunk's target cells go in units of one or two
// cells; each unit has one or more teams (the merged interaction list of its cells cut into
// segments of at most entry_counts[c] entries). Per stage of `columns` columns j, M_j of all
// the chunk's sources and T_ij of all its matrices (rows of the tile) lie in shared memory
// (cp.async, a ring of 2 to 4 stages in flight); each team runs through its
// segment of the list. Per chunk c: sources [source_offsets[c], ..), matrices
// [matrix_offsets[c], ..), targets [target_offsets[c], ..) with target_teams[target_offsets[c]
// + t] = (first team | cell of the unit (0, 1) << 16, end team) of target t, and the entries
// (matrix index v within the chunk | source index within the chunk of the unit's first cell
// << 10 | of its second << 21, kIjNone where that cell has no pair with v), entry e of team k
// at entries[entry_offsets[c] + e teams + k], kIjEnd after the segment's last.
constexpr int kIjTeam = 8;
constexpr int kIjMaxTeams = 128;
constexpr int kIjNone = 2047;
constexpr unsigned kIjEnd = 0xffffffffu;
constexpr std::size_t kIjShared = 227 * 1024;  // a block's shared memory, all of it
void launch_ij(int size, int chunks, int tm, int teams, int columns, int max_sources,
               int max_matrices, int max_entries, const int* source_offsets, const int* sources,
               const int* matrix_offsets, const int* chunk_matrices, const int* target_offsets,
               const int* targets, const int2* target_teams, const long long* entry_offsets,
               const int* entry_counts, const unsigned* entries, const double2* matrices,
               const double2* multipole, double2* local, cudaStream_t stream);
std::size_t ij_shared_bytes(int tm, int teams, int columns, int max_sources, int max_matrices,
                            int max_entries);

// gathered[col size + j] = multipole[column_source[col] size + j] (zero where -1).
void launch_gather(int size, std::size_t columns, const int* column_source,
                   const double2* multipole, double2* gathered, cudaStream_t stream);

// local[targets[t]] += sum of products[columns[c]] over c in [offsets[t], offsets[t + 1]).
void launch_reduce(int size, int num_targets, const int* targets, const int* offsets,
                   const int* columns, const double2* products, double2* local,
                   cudaStream_t stream);

// dmma: products[col] = T[tile_matrix[col / 64]] multipole[column_source[col]] for the
// tiles' 64 columns each (those with a source), on the FP64 tensor cores. Matrices padded:
// entry (i, j) of matrix m at m row_pad col_pad + j row_pad + i, zero beyond size, row_pad a
// multiple of dmma_rows(size), col_pad of 16.
constexpr int kDmmaColumns = 64;
int dmma_rows(int size);
int dmma_warp_columns();
void launch_dmma(int size, int row_pad, int col_pad, int tiles, const int* tile_matrix,
                 const int* column_source, const double2* matrices, const double2* multipole,
                 double2* products, cudaStream_t stream);

// Benchmark helpers: fill with deterministic pseudo-random values in [-1, 1]; a kernel of
// independent FMA chains (returns its flops).
void launch_fill_random(double* data, std::size_t count, unsigned seed);
double launch_fma_peak(double* sink, int blocks, int threads, int iterations);

}  // namespace fmbem::fmm::cuda
