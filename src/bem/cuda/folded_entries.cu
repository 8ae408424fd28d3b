// The near-field entries with the quadratic read of the double density on the GPU
// (NearFieldCorrection's fold_reconstruction): the CPU's monomial_moments,
// refined_rule_integrals and regular sums (src/bem/host_device; device_integrals.cuh says why
// they then agree to rounding), and the fold of each row's pairs into its sparse row.
//
// Rows go in chunks of at most chunk_pairs corrected pairs, so that the per-pair scratch stays
// bounded (192 bytes a pair). Per chunk: split_pairs lists the close and the refined-only pairs
// (one thread a row), pair_entries computes each pair's constant and monomial entries (one
// thread a pair; the close pairs, semi-analytic and about ten times the work, in their own
// launch so that a warp's threads take the same branch), and fold_rows adds them into the row's
// entries in the CPU's order (one thread a row: no atomics, and every sum is formed as the CPU
// forms it).
#include <algorithm>
#include <array>
#include <climits>
#include <memory>
#include <vector>

#include "../host_device/moment_integrals.hpp"
#include "device_integrals.cuh"
#include "fmbem/bem/density_reconstruction.hpp"
#include "fmbem/core/error.hpp"
#include "fmbem/quadrature/triangle_rule.hpp"
#include "folded_entries.cuh"

namespace fmbem::bem_cuda {
namespace {

constexpr int kTerms = DensityReconstruction::kTerms;
static_assert(kTerms == 5);

// The remainder series (RemainderSeries) and triangle_rule(7), copied from the host.
__device__ Z series_chi[host_device::RemainderSeries::kTerms];
__device__ Z series_omega[host_device::RemainderSeries::kTerms];
struct DeviceRemainderSeries {
  __device__ Z chi(int j) const { return series_chi[j]; }
  __device__ Z omega(int j) const { return series_omega[j]; }
};
constexpr int kRefinedPoints = 7;
__constant__ double refined_barycentric[kRefinedPoints][3];
__constant__ double refined_weights[kRefinedPoints];

// MonomialMoments: the monomials' D and N.
using Moments = BasicMonomialMoments<Z>;

// The reconstruction's frames and stencils on the device.
struct Frames {
  const double* origins = nullptr;  // 3 per element
  const double* axes = nullptr;     // 6 per element: axis 0, then axis 1
  const std::int64_t* stencil_start = nullptr;
  const std::int32_t* stencil_columns = nullptr;
  const double* values = nullptr;  // per element kTerms rows of its stencil's length

  __device__ host_device::MonomialFrame frame(std::int64_t e) const {
    return {load(origins, e), load(axes, 2 * e), load(axes, 2 * e + 1)};
  }
};

// The buffers behind Frames, uploaded for one computation.
class DeviceFrames {
 public:
  DeviceFrames(const Discretization& disc, const DensityReconstruction& reconstruction) {
    std::vector<Vec3> origin_list(disc.size()), axis_list(2 * disc.size());
    for (std::size_t e = 0; e < disc.size(); ++e) {
      origin_list[e] = reconstruction.origin(e);
      axis_list[2 * e] = reconstruction.axis(e, 0);
      axis_list[2 * e + 1] = reconstruction.axis(e, 1);
    }
    origins_ = Buffer<double>(flatten(origin_list), "reconstruction origins");
    axes_ = Buffer<double>(flatten(axis_list), "reconstruction axes");
    const auto starts = reconstruction.stencil_starts();
    const auto columns = reconstruction.stencil_columns();
    const auto values = reconstruction.stencil_values();
    stencil_start_ = Buffer<std::int64_t>(starts.data(), starts.size(), "reconstruction stencils");
    stencil_columns_ =
        Buffer<std::int32_t>(columns.data(), columns.size(), "reconstruction stencils");
    values_ = Buffer<double>(values.data(), values.size(), "reconstruction coefficients");
    view_.origins = origins_.data();
    view_.axes = axes_.data();
    view_.stencil_start = stencil_start_.data();
    view_.stencil_columns = stencil_columns_.data();
    view_.values = values_.data();
  }
  const Frames& view() const { return view_; }

 private:
  Buffer<double> origins_, axes_, values_;
  Buffer<std::int64_t> stencil_start_;
  Buffer<std::int32_t> stencil_columns_;
  Frames view_;
};

// ---- the per-pair entries and the fold ----

// Per pair of a chunk (slot = its position in the chunk's refined pairs), structure of arrays:
// the constant entries accurate minus regular, and per monomial t the entry (accurate minus
// regular, coupled) and the accurate integral (for the diagonal).
struct Scratch {
  Z* constant_single = nullptr;
  Z* constant_double = nullptr;
  Z* entry = nullptr;       // kTerms x chunk pairs
  Z* accurate = nullptr;    // kTerms x chunk pairs
  std::int64_t stride = 0;  // chunk pairs
};

struct PairArgs {
  Geometry g;
  Frames f;
  double k = 0.0;
  // Each output's weights of (S, D) and (D', N) (burton_miller; else S, D alone).
  int outputs = 1;
  Z value_weight[kMaxFoldedOutputs] = {}, derivative_weight[kMaxFoldedOutputs] = {};
  bool burton_miller = false;
  std::int64_t row_begin = 0;   // collocation point of row 0
  std::int64_t first_row = 0;   // the chunk's first row
  std::int64_t first_pair = 0;  // refined.row_start[first_row]
  const std::int32_t* refined_columns = nullptr;
  GaussLegendreView radial;  // on the device
  // The pairs of this launch: their slots and rows (chunk-relative).
  std::int64_t count = 0;
  const std::int32_t* slots = nullptr;
  const std::int32_t* rows = nullptr;
  Scratch out[kMaxFoldedOutputs];
  Z* self_single[kMaxFoldedOutputs] = {};  // per row: the accurate S_ii
  Z* self_double[kMaxFoldedOutputs] = {};  // per row: the accurate D_ii, until fold_rows's
};

// One thread a pair: the body of fold_reconstruction's pair loop up to the scatter.
template <bool kClose>
__global__ void __launch_bounds__(128) pair_entries(PairArgs a) {
  const std::int64_t item = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (item >= a.count) return;
  const std::int64_t slot = a.slots[item];
  const std::int64_t r = a.first_row + a.rows[item], i = a.row_begin + r;
  const std::int64_t l = a.refined_columns[a.first_pair + slot];
  const Geometry& g = a.g;
  const Vec3 x = load(g.centroids, i), n_x = load(g.normals, i);
  const Vec3 va = g.corner(l, 0), vb = g.corner(l, 1), vc = g.corner(l, 2);
  const host_device::MonomialFrame frame = a.f.frame(l);
  BasicHypersingularIntegrals<Z> exact;
  Moments accurate;
  if constexpr (kClose) {
    exact = host_device::hypersingular_integrals<Z>(a.k, va, vb, vc, x, n_x, g.angular);
    accurate =
        host_device::monomial_moments<Z>(a.k, va, vb, vc, frame.origin, frame.axis1, frame.axis2, x,
                                         n_x, exact, g.angular, a.radial, DeviceRemainderSeries{});
  } else {
    const BasicRefinedIntegrals<Z> refined = host_device::refined_rule_integrals<Z>(
        a.k, va, vb, vc, frame.origin, frame.axis1, frame.axis2, x, n_x, refined_barycentric,
        refined_weights, kRefinedPoints);
    exact = refined.constant;
    accurate = refined.monomials;
  }
  // One pass for the constant read's S, D, D', N and the monomials' D, N.
  const host_device::RegularSums<Z> regular =
      host_device::regular_sums<Z, host_device::kLayers | host_device::kNormalDerivatives |
                                       host_device::kMoments>(a.k, g.rule(l), x, n_x, frame);
  const Moments& rule = regular.moments;
  for (int o = 0; o < a.outputs; ++o) {
    Z exact_single = exact.single_layer, exact_double = exact.double_layer;
    Z regular_single = regular.single_layer, regular_double = regular.double_layer;
    const Z v = a.value_weight[o], w = a.derivative_weight[o];
    if (a.burton_miller) {
      exact_single = v * exact_single + w * exact.adjoint_double_layer;
      exact_double = v * exact_double + w * exact.hypersingular;
      regular_single = v * regular_single + w * regular.adjoint_double_layer;
      regular_double = v * regular_double + w * regular.hypersingular;
    }
    const Scratch& out = a.out[o];
    out.constant_single[slot] = exact_single - regular_single;
    out.constant_double[slot] = exact_double - regular_double;
    if (l == i) {
      a.self_single[o][r] = exact_single;
      a.self_double[o][r] = exact_double;
    }
#pragma unroll
    for (int t = 0; t < kTerms; ++t) {
      const Z accurate_t = v * accurate.double_layer[t] + w * accurate.hypersingular[t];
      out.entry[t * out.stride + slot] =
          accurate_t - v * rule.double_layer[t] - w * rule.hypersingular[t];
      out.accurate[t * out.stride + slot] = accurate_t;
    }
  }
}

struct SplitArgs {
  std::int64_t first_row = 0, rows = 0;  // the chunk
  const std::int64_t *close_start = nullptr, *refined_start = nullptr;
  const std::int32_t *close_columns = nullptr, *refined_columns = nullptr;
  std::int32_t *close_slots = nullptr, *close_rows = nullptr;
  std::int32_t *far_slots = nullptr, *far_rows = nullptr;
};

// One thread a row: its close and its refined-only pairs (both rows ascending, the close
// elements a subset of the refined ones), as chunk slots.
__global__ void split_pairs(SplitArgs a) {
  const std::int64_t local = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (local >= a.rows) return;
  const std::int64_t r = a.first_row + local;
  const std::int64_t first_close = a.close_start[a.first_row];
  const std::int64_t first_pair = a.refined_start[a.first_row];
  std::int64_t next_close = a.close_start[r];
  std::int64_t far = (a.refined_start[r] - first_pair) - (next_close - first_close);
  for (std::int64_t at = a.refined_start[r]; at < a.refined_start[r + 1]; ++at) {
    const std::int32_t slot = std::int32_t(at - first_pair);
    if (next_close < a.close_start[r + 1] && a.close_columns[next_close] == a.refined_columns[at]) {
      a.close_slots[next_close - first_close] = slot;
      a.close_rows[next_close - first_close] = std::int32_t(local);
      ++next_close;
    } else {
      a.far_slots[far] = slot;
      a.far_rows[far] = std::int32_t(local);
      ++far;
    }
  }
}

struct FoldArgs {
  Frames f;
  std::int64_t row_begin = 0, first_row = 0, rows = 0, first_pair = 0;
  const std::int64_t* refined_start = nullptr;
  const std::int32_t* refined_columns = nullptr;
  const std::int64_t* row_start = nullptr;  // the folded pattern
  const std::int32_t* columns = nullptr;
  Scratch in;
  Z *single = nullptr, *dbl = nullptr;  // the entries, zero before the first chunk
  Z* self_double = nullptr;
};

// One thread a row: fold_reconstruction's scatter, pair by pair in the row's order. For each
// stencil column the five monomials' terms are added in the CPU's order (t = 0..4 on the same
// running value: the stencil's columns are distinct), so every entry is the CPU's sum.
__global__ void fold_rows(FoldArgs a) {
  const std::int64_t local = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (local >= a.rows) return;
  const std::int64_t r = a.first_row + local, i = a.row_begin + r;
  const std::int64_t first = a.row_start[r], last = a.row_start[r + 1];
  const std::int64_t stride = a.in.stride;
  Z diagonal{0.0, 0.0};
  for (std::int64_t at = a.refined_start[r]; at < a.refined_start[r + 1]; ++at) {
    const std::int64_t slot = at - a.first_pair;
    const std::int32_t l = a.refined_columns[at];
    // The column's place in the sorted row (the pattern holds every stencil of its pairs).
    const std::int64_t own = last_at_most(a.columns, first, last, l);
    a.single[own] = a.in.constant_single[slot];
    a.dbl[own] += a.in.constant_double[slot];
    if (l == i) diagonal += a.self_double[r];  // the accurate D_ii, left by pair_entries
    Z entry[kTerms], accurate[kTerms];
#pragma unroll
    for (int t = 0; t < kTerms; ++t) {
      entry[t] = a.in.entry[t * stride + slot];
      accurate[t] = a.in.accurate[t * stride + slot];
    }
    const std::int64_t stencil = a.f.stencil_start[l];
    const std::int64_t length = a.f.stencil_start[l + 1] - stencil;
    const double* coefficients = a.f.values + stencil * kTerms;
    for (std::int64_t s = 0; s < length; ++s) {
      const std::int32_t j = a.f.stencil_columns[stencil + s];
      const std::int64_t at_j = last_at_most(a.columns, first, last, j);
      Z value = a.dbl[at_j];
#pragma unroll
      for (int t = 0; t < kTerms; ++t) value += entry[t] * coefficients[t * length + s];
      a.dbl[at_j] = value;
      if (j == i) {
#pragma unroll
        for (int t = 0; t < kTerms; ++t) diagonal += accurate[t] * coefficients[t * length + s];
      }
    }
  }
  a.self_double[r] = diagonal;
}

// CorrectedLayerPotentials::near_block's entries on the device.
struct BlockArgs {
  Geometry g;
  Frames f;  // with kQuadratic
  double k = 0.0;
  Z coupling{0.0, 0.0};
  std::int64_t rows = 0, row_begin = 0, nonzeros = 0;
  const std::int64_t* row_start = nullptr;
  const std::int32_t* columns = nullptr;
  const std::int32_t* column_elements = nullptr;  // null: column entry j is element j
  const Z *single = nullptr, *dbl = nullptr;      // the correction's entries
  const Z* single_extra = nullptr;                // per row, or null
  Z identity{0.0, 0.0}, double_layer{0.0, 0.0}, single_layer{0.0, 0.0};
  // Per element (null: the uniform three above).
  const Z *element_identity = nullptr, *element_double = nullptr, *element_single = nullptr;
  Z* block = nullptr;
};

// One thread a nonzero (i, j): the regular rule's S + alpha D' and D + alpha N of element j,
// with the quadratic read the moments of every element l whose stencil holds j (those of j's
// own stencil, ascending: the CPU's row loop meets them in that order) times R's coefficient of
// u_j, then plus the correction and combined, every sum in the CPU's order. The CPU forms each
// l's moments once per row; here once per (row, column): about ten times the arithmetic, and no
// per-row merge of stencils.
template <bool kBurtonMiller, bool kQuadratic>
__global__ void __launch_bounds__(128) near_block_entries(BlockArgs a) {
  const std::int64_t at = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (at >= a.nonzeros) return;
  const std::int64_t r = row_of(a.row_start, a.rows, at), i = a.row_begin + r;
  const std::int32_t j = a.column_elements ? a.column_elements[a.columns[at]] : a.columns[at];
  const Geometry& g = a.g;
  const Vec3 x = load(g.centroids, i), n_x = load(g.normals, i);
  constexpr unsigned kSums =
      kBurtonMiller ? host_device::kLayers | host_device::kNormalDerivatives : host_device::kLayers;
  const host_device::RegularSums<Z> regular =
      host_device::regular_sums<Z, kSums>(a.k, g.rule(j), x, n_x);
  Z single = regular.single_layer, dbl = regular.double_layer;
  if constexpr (kBurtonMiller) {
    single += a.coupling * regular.adjoint_double_layer;
    dbl += a.coupling * regular.hypersingular;
  }
  if constexpr (kQuadratic) {
    for (std::int64_t e = a.f.stencil_start[j]; e < a.f.stencil_start[j + 1]; ++e) {
      const std::int32_t l = a.f.stencil_columns[e];
      const std::int64_t first = a.f.stencil_start[l];
      const std::int64_t length = a.f.stencil_start[l + 1] - first;
      std::int64_t s = 0;  // j's place in l's stencil
      while (s < length && a.f.stencil_columns[first + s] != j) ++s;
      if (s == length) continue;
      const Moments rule =
          host_device::regular_sums<Z, host_device::kMoments>(a.k, g.rule(l), x, n_x, a.f.frame(l))
              .moments;
      const double* coefficients = a.f.values + first * kTerms;
#pragma unroll
      for (int t = 0; t < kTerms; ++t) {
        const Z weight = rule.double_layer[t] + a.coupling * rule.hypersingular[t];
        dbl += weight * coefficients[t * length + s];
      }
    }
  }
  Z s = single + a.single[at];
  if (j == i && a.single_extra) s += a.single_extra[r];
  const Z d = dbl + a.dbl[at];
  Z out = a.element_double ? a.element_double[j] * d + a.element_single[j] * s
                           : a.double_layer * d + a.single_layer * s;
  if (j == i) out += a.element_identity ? a.element_identity[i] : a.identity;
  a.block[at] = out;
}

}  // namespace

void folded_entries(const Discretization& disc, double k, RowRange rows,
                    const NearFieldPattern& close, const NearFieldPattern& refined,
                    const std::int64_t* device_row_start, const std::int32_t* device_columns,
                    const GaussLegendre& angular, const GaussLegendre& radial,
                    const DensityReconstruction& reconstruction, std::int64_t chunk_pairs,
                    const FoldedOutputs& out) {
  const std::size_t n_rows = rows.size();
  if (close.row_start.size() != n_rows + 1 || refined.row_start.size() != n_rows + 1)
    throw Error("GPU near-field correction: close or refined pattern of the wrong size");
  if (n_rows == 0) return;

  // The constants: the remainder series and the refined rule, as the CPU forms them.
  {
    const host_device::RemainderSeries series;
    static_assert(sizeof(series.chi_terms) == sizeof(series_chi));
    check(cudaMemcpyToSymbol(series_chi, series.chi_terms.data(), sizeof(series_chi)),
          "remainder series");
    check(cudaMemcpyToSymbol(series_omega, series.omega_terms.data(), sizeof(series_omega)),
          "remainder series");
    const TriangleRule& rule = triangle_rule(kRefinedPoints);
    double barycentric[kRefinedPoints][3], weights[kRefinedPoints];
    for (int q = 0; q < kRefinedPoints; ++q) {
      for (int c3 = 0; c3 < 3; ++c3) barycentric[q][c3] = rule.barycentric[std::size_t(q)][c3];
      weights[q] = rule.weights[std::size_t(q)];
    }
    check(cudaMemcpyToSymbol(refined_barycentric, barycentric, sizeof(barycentric)),
          "refined rule");
    check(cudaMemcpyToSymbol(refined_weights, weights, sizeof(weights)), "refined rule");
  }

  const DeviceGeometry geometry(disc, angular);
  const DeviceFrames device_frames(disc, reconstruction);
  const Buffer<double> d_radial_nodes(radial.nodes, "radial rule");
  const Buffer<double> d_radial_weights(radial.weights, "radial rule");
  // The close and refined pairs (the refined pattern holds both).
  const Buffer<std::int64_t> d_close_start(close.row_start, "close pairs");
  const Buffer<std::int32_t> d_close_columns(close.columns.data(), close.columns.size(),
                                             "close pairs");
  const Buffer<std::int64_t> d_refined_start(refined.row_start, "refined pairs");
  const Buffer<std::int32_t> d_refined_columns(refined.columns.data(), refined.columns.size(),
                                               "refined pairs");

  const Frames frames = device_frames.view();

  if (out.outputs < 1 || out.outputs > kMaxFoldedOutputs)
    throw Error("GPU near-field correction: 1 or 2 outputs of the folded entries");
  for (int o = 0; o < out.outputs; ++o) {
    check(cudaMemset(out.single[o], 0, std::size_t(out.nonzeros) * sizeof(Z)),
          "near-field entries");
    check(cudaMemset(out.dbl[o], 0, std::size_t(out.nonzeros) * sizeof(Z)), "near-field entries");
  }

  // The chunk: at most chunk_pairs pairs, at least the largest row.
  const std::vector<std::int64_t>& pair_start = refined.row_start;
  std::int64_t largest_row = 0;
  for (std::size_t r = 0; r < n_rows; ++r)
    largest_row = std::max(largest_row, pair_start[r + 1] - pair_start[r]);
  // Slots within a chunk are 32-bit.
  const std::int64_t stride =
      std::min({std::max(chunk_pairs, largest_row), pair_start.back(), std::int64_t(INT32_MAX)});
  if (largest_row > INT32_MAX)
    throw Error("GPU near-field correction: a row with more than 2^31 corrected pairs");
  if (stride == 0) return;
  // Each output's scratch, one after the other.
  const std::size_t outputs = std::size_t(out.outputs);
  Buffer<Z> constant_single(outputs * std::size_t(stride), "near-field pair scratch");
  Buffer<Z> constant_double(outputs * std::size_t(stride), "near-field pair scratch");
  Buffer<Z> entry(outputs * std::size_t(stride) * kTerms, "near-field pair scratch");
  Buffer<Z> accurate(outputs * std::size_t(stride) * kTerms, "near-field pair scratch");
  Buffer<std::int32_t> close_slots(std::size_t(stride), "near-field pair lists");
  Buffer<std::int32_t> close_rows(std::size_t(stride), "near-field pair lists");
  Buffer<std::int32_t> far_slots(std::size_t(stride), "near-field pair lists");
  Buffer<std::int32_t> far_rows(std::size_t(stride), "near-field pair lists");
  Scratch scratch[kMaxFoldedOutputs];
  for (std::size_t o = 0; o < outputs; ++o)
    scratch[o] = Scratch{constant_single.data() + o * std::size_t(stride),
                         constant_double.data() + o * std::size_t(stride),
                         entry.data() + o * std::size_t(stride) * kTerms,
                         accurate.data() + o * std::size_t(stride) * kTerms, stride};

  PairArgs pair;
  pair.g = geometry.view();
  pair.f = frames;
  pair.k = k;
  pair.outputs = out.outputs;
  for (std::size_t o = 0; o < outputs; ++o) {
    pair.value_weight[o] = out.value_weight[o];
    pair.derivative_weight[o] = out.derivative_weight[o];
    pair.out[o] = scratch[o];
    pair.self_single[o] = out.self_single[o];
    pair.self_double[o] = out.self_double[o];
  }
  pair.burton_miller = out.normal_derivatives;
  pair.row_begin = std::int64_t(rows.begin);
  pair.refined_columns = d_refined_columns.data();
  pair.radial = {d_radial_nodes.data(), d_radial_weights.data(), int(radial.size())};

  FoldArgs fold;
  fold.f = frames;
  fold.row_begin = std::int64_t(rows.begin);
  fold.refined_start = d_refined_start.data();
  fold.refined_columns = d_refined_columns.data();
  fold.row_start = device_row_start;
  fold.columns = device_columns;

  for (std::size_t first = 0; first < n_rows;) {
    // The rows [first, last) whose pairs fit in the scratch.
    const auto end = std::upper_bound(pair_start.begin() + std::ptrdiff_t(first) + 1,
                                      pair_start.end(), pair_start[first] + stride);
    const std::size_t last = std::size_t(end - pair_start.begin()) - 1;
    const std::int64_t chunk_rows = std::int64_t(last - first);
    const std::int64_t pairs = pair_start[last] - pair_start[first];
    const std::int64_t closes = close.row_start[last] - close.row_start[first];

    SplitArgs split;
    split.first_row = std::int64_t(first);
    split.rows = chunk_rows;
    split.close_start = d_close_start.data();
    split.refined_start = d_refined_start.data();
    split.close_columns = d_close_columns.data();
    split.refined_columns = d_refined_columns.data();
    split.close_slots = close_slots.data();
    split.close_rows = close_rows.data();
    split.far_slots = far_slots.data();
    split.far_rows = far_rows.data();
    split_pairs<<<blocks(chunk_rows, 128), 128>>>(split);
    check(cudaGetLastError(), "the near-field pair split");

    pair.first_row = std::int64_t(first);
    pair.first_pair = pair_start[first];
    constexpr int threads = 128;
    if (closes > 0) {
      pair.count = closes;
      pair.slots = close_slots.data();
      pair.rows = close_rows.data();
      pair_entries<true><<<blocks(closes, threads), threads>>>(pair);
      check(cudaGetLastError(), "the close-pair entry kernel");
    }
    if (pairs > closes) {
      pair.count = pairs - closes;
      pair.slots = far_slots.data();
      pair.rows = far_rows.data();
      pair_entries<false><<<blocks(pairs - closes, threads), threads>>>(pair);
      check(cudaGetLastError(), "the refined-pair entry kernel");
    }

    fold.first_row = std::int64_t(first);
    fold.rows = chunk_rows;
    fold.first_pair = pair_start[first];
    for (std::size_t o = 0; o < outputs; ++o) {
      fold.in = scratch[o];
      fold.single = out.single[o];
      fold.dbl = out.dbl[o];
      fold.self_double = out.self_double[o];
      fold_rows<<<blocks(chunk_rows, 128), 128>>>(fold);
      check(cudaGetLastError(), "the near-field fold kernel");
    }
    first = last;
  }
  // The scratch and the uploaded arrays are freed on return: wait for the kernels first.
  check(cudaDeviceSynchronize(), "the near-field entry kernels");
}

void near_block_entries(const Discretization& disc, double k, RowRange rows, cplx coupling,
                        const DensityReconstruction* reconstruction, const NearBlockInputs& in,
                        Z* device_block) {
  if (in.nonzeros == 0) return;
  const DeviceGeometry geometry(disc, GaussLegendre(1));  // the angular rule is not read
  const std::unique_ptr<const DeviceFrames> frames =
      reconstruction ? std::make_unique<const DeviceFrames>(disc, *reconstruction) : nullptr;
  Buffer<Z> extra;
  if (!in.single_extra.empty()) {
    if (in.single_extra.size() != rows.size())
      throw Error("GPU near block: a diagonal of the wrong size");
    extra = Buffer<Z>(reinterpret_cast<const Z*>(in.single_extra.data()), in.single_extra.size(),
                      "the single-layer diagonal extra");
  }
  BlockArgs a;
  a.g = geometry.view();
  if (frames) a.f = frames->view();
  a.k = k;
  a.coupling = Z{coupling.real(), coupling.imag()};
  a.rows = std::int64_t(rows.size());
  a.row_begin = std::int64_t(rows.begin);
  a.nonzeros = in.nonzeros;
  a.row_start = in.row_start;
  a.columns = in.columns;
  a.column_elements = in.column_elements;
  a.single = in.single;
  a.dbl = in.dbl;
  a.single_extra = in.single_extra.empty() ? nullptr : extra.data();
  a.identity = Z{in.identity.real(), in.identity.imag()};
  a.double_layer = Z{in.double_layer.real(), in.double_layer.imag()};
  a.single_layer = Z{in.single_layer.real(), in.single_layer.imag()};
  Buffer<Z> element_identity, element_double, element_single;
  if (!in.element_identity.empty()) {
    const auto upload = [](std::span<const cplx> host, const char* what) {
      return Buffer<Z>(reinterpret_cast<const Z*>(host.data()), host.size(), what);
    };
    element_identity = upload(in.element_identity, "the per-element identity coefficients");
    element_double = upload(in.element_double, "the per-element double-layer coefficients");
    element_single = upload(in.element_single, "the per-element single-layer coefficients");
    a.element_identity = element_identity.data();
    a.element_double = element_double.data();
    a.element_single = element_single.data();
  }
  a.block = device_block;
  constexpr int threads = 128;
  const unsigned grid = blocks(in.nonzeros, threads);
  const bool bm = coupling != cplx(0.0);
  if (bm && frames)
    near_block_entries<true, true><<<grid, threads>>>(a);
  else if (bm)
    near_block_entries<true, false><<<grid, threads>>>(a);
  else if (frames)
    near_block_entries<false, true><<<grid, threads>>>(a);
  else
    near_block_entries<false, false><<<grid, threads>>>(a);
  check(cudaGetLastError(), "the near-block kernel");
  // The uploaded arrays are freed on return: wait for the kernel first.
  check(cudaDeviceSynchronize(), "the near-block kernel");
}

}  // namespace fmbem::bem_cuda
