#include "fmbem/fmm/m2l_plan.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <numeric>
#include <string>

#include "fmbem/core/error.hpp"
#include "fmbem/fmm/rotation_translations.hpp"
#include "fmbem/fmm/translations.hpp"

namespace fmbem::fmm {

namespace {

// Columns multiplied together: one pass over a matrix serves this many pairs.
constexpr int kBlockColumns = 16;

// c(i, :) = sum_j t(i, j) b(j, :) for kBlockColumns columns, t complex row-major, b and c with
// real and imaginary parts split so that the column loop vectorises.
__attribute__((target_clones("arch=x86-64-v3", "default"))) void multiply_block(
    int size, const cplx* __restrict t, const double* __restrict b_re,
    const double* __restrict b_im, double* __restrict c_re, double* __restrict c_im) {
  for (int i = 0; i < size; ++i) {
    double acc_re[kBlockColumns] = {}, acc_im[kBlockColumns] = {};
    const cplx* row = t + static_cast<std::size_t>(i) * size;
    for (int j = 0; j < size; ++j) {
      const double a = row[j].real(), b = row[j].imag();
      const double* x_re = b_re + j * kBlockColumns;
      const double* x_im = b_im + j * kBlockColumns;
#pragma omp simd
      for (int c = 0; c < kBlockColumns; ++c) {
        acc_re[c] += a * x_re[c] - b * x_im[c];
        acc_im[c] += a * x_im[c] + b * x_re[c];
      }
    }
    for (int c = 0; c < kBlockColumns; ++c) {
      c_re[i * kBlockColumns + c] = acc_re[c];
      c_im[i * kBlockColumns + c] = acc_im[c];
    }
  }
}

void apply_level(const M2LLevelPlan& lv, int p, std::size_t num_cells, const cplx* multipole,
                 cplx* local) {
  const int size = p * p;
  const std::size_t matrix_size = static_cast<std::size_t>(size) * size;
  // Each thread owns a range of target cells holding an equal share of the pairs and takes,
  // from every matrix's group, the pairs of its targets: no two threads write one cell.
  std::vector<std::size_t> pairs_before(num_cells + 1, 0);
  for (const M2LPair& pair : lv.pairs) ++pairs_before[pair.target + 1];
  std::partial_sum(pairs_before.begin(), pairs_before.end(), pairs_before.begin());
  const std::size_t total = lv.pairs.size();
#pragma omp parallel
  {
    const int threads = omp_get_num_threads(), thread = omp_get_thread_num();
    const auto owned = [&](int t) {
      return static_cast<int>(
          std::lower_bound(pairs_before.begin(), pairs_before.end(), total * t / threads) -
          pairs_before.begin());
    };
    const int first_target = owned(thread), end_target = owned(thread + 1);
    std::vector<double> b_re(size * kBlockColumns), b_im(size * kBlockColumns),
        c_re(size * kBlockColumns), c_im(size * kBlockColumns);
    const auto by_target = [](const M2LPair& pair, int target) { return pair.target < target; };
    std::vector<double> workspace(lv.rotations ? rotation_workspace(p) : 0);
    for (std::size_t m = 0; m < lv.matrix_count(); ++m) {
      const auto group_begin = lv.pairs.begin() + lv.matrix_begin[m];
      const auto group_end = lv.pairs.begin() + lv.matrix_begin[m + 1];
      const auto lo = std::lower_bound(group_begin, group_end, first_target, by_target);
      const auto hi = std::lower_bound(lo, group_end, end_target, by_target);
      if (lv.rotations) {
        // A transfer vector's pairs have distinct targets: rotation_lanes of them at once.
        for (auto first = lo; first < hi; first += rotation_lanes) {
          const int count = static_cast<int>(std::min<std::ptrdiff_t>(rotation_lanes, hi - first));
          const cplx* sources[rotation_lanes];
          cplx* targets[rotation_lanes];
          for (int c = 0; c < count; ++c) {
            sources[c] = multipole + static_cast<std::size_t>(first[c].source) * size;
            targets[c] = local + static_cast<std::size_t>(first[c].target) * size;
          }
          lv.rotations->apply_many(m, sources, targets, count, workspace);
        }
        continue;
      }
      for (auto first = lo; first < hi; first += kBlockColumns) {
        const int count = static_cast<int>(std::min<std::ptrdiff_t>(kBlockColumns, hi - first));
        std::fill(b_re.begin(), b_re.end(), 0.0);
        std::fill(b_im.begin(), b_im.end(), 0.0);
        for (int c = 0; c < count; ++c) {
          const cplx* x = multipole + static_cast<std::size_t>(first[c].source) * size;
          for (int j = 0; j < size; ++j) {
            b_re[j * kBlockColumns + c] = x[j].real();
            b_im[j * kBlockColumns + c] = x[j].imag();
          }
        }
        multiply_block(size, lv.matrices.data() + m * matrix_size, b_re.data(), b_im.data(),
                       c_re.data(), c_im.data());
        for (int c = 0; c < count; ++c) {
          cplx* y = local + static_cast<std::size_t>(first[c].target) * size;
          for (int i = 0; i < size; ++i)
            y[i] += cplx(c_re[i * kBlockColumns + c], c_im[i * kBlockColumns + c]);
        }
      }
    }
  }
}

}  // namespace

std::size_t M2LPlan::pair_count() const {
  std::size_t count = 0;
  for (const M2LLevelPlan& lv : levels) count += lv.pairs.size();
  return count;
}

double M2LPlan::flops() const {
  const double size = coefficients();
  return 8.0 * size * size * static_cast<double>(pair_count());
}

M2LPlan build_m2l_plan(const Octree& tree, int order, Wavenumber k, bool host_matrices,
                       int first_level, int rotation_min_order, std::span<const int> level_orders) {
  if (order < 1 || order > max_degree)
    throw Error("M2L plan: the expansion order p must lie in 1.." + std::to_string(max_degree));
  if (!level_orders.empty() && level_orders.size() != std::size_t(tree.levels()))
    throw Error("M2L plan: one order per level of the tree is needed");
  for (int p : level_orders)
    if (p < 1 || p > order) throw Error("M2L plan: a level's order must lie in 1..p");
  if (!k.finite_and_valid()) throw Error("M2L plan: the wavenumber must be finite and >= 0");
  const auto& cells = tree.cells();
  M2LPlan plan;
  plan.order = order;
  plan.k = k;
  plan.num_cells = cells.size();
  plan.coords.resize(cells.size());
  plan.parent.resize(cells.size());
  for (std::size_t c = 0; c < cells.size(); ++c) {
    plan.coords[c] = cells[c].coords;
    plan.parent[c] = cells[c].parent;
  }
  const int size = order * order;
  const std::size_t matrix_size = static_cast<std::size_t>(size) * size;
  const bool rotations =
      host_matrices && order >= rotation_min_order && order <= max_rotation_order;
  std::unique_ptr<MultipoleToLocalTable> table;
  if (host_matrices && !rotations)
    table = std::make_unique<MultipoleToLocalTable>(GauntTable(order), order);
  for (int level = std::max(2, first_level); level < tree.levels(); ++level) {
    // The pairs of this level by transfer vector, as the CPU FMM groups them.
    std::vector<std::vector<M2LPair>> by_vector(Octree::kTransferCount);
    for (int c : tree.cells_at_level(level)) {
      if (cells[c].target_begin == cells[c].target_end) continue;
      for (int s : tree.m2l(c)) {
        // The whole problem's sources: a part's view holds none of a received cell's.
        if (tree.sources_in_whole(s) == 0) continue;
        by_vector[Octree::transfer_index(cells[c].coords, cells[s].coords)].push_back({c, s, 0});
      }
    }
    M2LLevelPlan lv;
    lv.level = level;
    lv.order = level_orders.empty() ? order : level_orders[std::size_t(level)];
    lv.sigma = tree.width(level);
    lv.matrix_begin.push_back(0);
    for (int v = 0; v < Octree::kTransferCount; ++v) {
      if (by_vector[v].empty()) continue;
      const int m = static_cast<int>(lv.transfer.size());
      lv.transfer.push_back(v);
      for (M2LPair pair : by_vector[v]) {
        pair.matrix = m;
        lv.pairs.push_back(pair);
      }
      lv.matrix_begin.push_back(lv.pairs.size());
    }
    if (lv.pairs.empty()) continue;
    if (rotations) {
      std::vector<Vec3> vectors;
      for (int v : lv.transfer) vectors.push_back(transfer_offset(v) * lv.sigma);
      lv.rotations =
          std::make_shared<const RotationMultipoleToLocal>(lv.order, k, lv.sigma, vectors);
    } else if (table) {
      lv.matrices.resize(lv.transfer.size() * matrix_size);
#pragma omp parallel for schedule(dynamic)
      for (std::size_t m = 0; m < lv.transfer.size(); ++m) {
        TranslationMatrix matrix =
            (*table)(k, lv.sigma, transfer_offset(lv.transfer[m]) * lv.sigma);
        // Truncated to the level's order: zero beyond its leading coefficients.
        const int kept = lv.order * lv.order;
        for (int i = 0; i < size; ++i)
          for (int j = 0; j < size; ++j)
            if (i >= kept || j >= kept) matrix[std::size_t(i) * size + j] = 0.0;
        std::copy(matrix.begin(), matrix.end(), lv.matrices.begin() + m * matrix_size);
      }
    }
    plan.levels.push_back(std::move(lv));
  }
  return plan;
}

void apply_m2l_reference(const M2LPlan& plan, const cplx* multipole, cplx* local) {
  const std::size_t matrix_size = std::size_t(plan.coefficients()) * plan.coefficients();
  for (const M2LLevelPlan& lv : plan.levels)
    if (!lv.rotations && lv.matrices.size() != lv.matrix_count() * matrix_size)
      throw Error("M2L reference: the plan has no host translations (built for the GPU)");
  for (const M2LLevelPlan& lv : plan.levels)
    apply_level(lv, plan.order, plan.num_cells, multipole, local);
}

}  // namespace fmbem::fmm
