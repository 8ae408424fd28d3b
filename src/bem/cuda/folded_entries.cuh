#pragma once
// The near-field entries with the quadratic read of the double density, on the GPU
// (folded_entries.cu); called by GpuNearFieldCorrection. Not a public header.
#include <cstdint>
#include <span>

#include "device_integrals.cuh"
#include "fmbem/bem/near_field.hpp"

namespace fmbem {
class DensityReconstruction;
}

namespace fmbem::bem_cuda {

// Device arrays the entries go to: single and dbl one per nonzero of the folded pattern,
// self_single and self_double one per row.
// Output o's entries are value_weight[o] (S, D) + derivative_weight[o] (D', N)
// (normal_derivatives; else S, D), for outputs (1 or 2) outputs from one pass of the integrals.
constexpr int kMaxFoldedOutputs = 2;
struct FoldedOutputs {
  int outputs = 1;
  Z *single[kMaxFoldedOutputs] = {}, *dbl[kMaxFoldedOutputs] = {};
  Z *self_single[kMaxFoldedOutputs] = {}, *self_double[kMaxFoldedOutputs] = {};
  Z value_weight[kMaxFoldedOutputs] = {Z{1.0, 0.0}, Z{1.0, 0.0}};
  Z derivative_weight[kMaxFoldedOutputs] = {};
  std::int64_t nonzeros = 0;
  bool normal_derivatives = false;
};

// NearFieldCorrection::fold_reconstruction's entries for the folded pattern (device_row_start,
// device_columns: each row's close and refined elements and their stencils, ascending), from
// the host's close and refined patterns; radial is its kMomentRadialPoints rule. Rows go in
// chunks of at most chunk_pairs pairs (at least one row). Returns when the entries are written.
void folded_entries(const Discretization& disc, double k, RowRange rows,
                    const NearFieldPattern& close, const NearFieldPattern& refined,
                    const std::int64_t* device_row_start, const std::int32_t* device_columns,
                    const GaussLegendre& angular, const GaussLegendre& radial,
                    const DensityReconstruction& reconstruction, std::int64_t chunk_pairs,
                    const FoldedOutputs& out);

// CorrectedLayerPotentials::near_block on the device: one entry per nonzero of the correction's
// pattern (row_start, columns on the device; single and dbl its entries), identity I +
// double_layer (D + alpha N) + single_layer (S + alpha D' + the diagonal single_extra, a host
// array of one per row or empty), the regular rule with the quadratic read where
// reconstruction is given. Returns when device_block is written.
struct NearBlockInputs {
  const std::int64_t* row_start = nullptr;
  const std::int32_t* columns = nullptr;
  // The element of each column entry (a part's column space); null: entry j is element j.
  const std::int32_t* column_elements = nullptr;
  std::int64_t nonzeros = 0;
  const Z *single = nullptr, *dbl = nullptr;
  std::span<const cplx> single_extra;
  cplx identity, double_layer, single_layer;
  // A mixed problem's coefficients per element of the mesh (host arrays, all three or none):
  // row i's identity and column j's layers those of elements i and j.
  std::span<const cplx> element_identity, element_double, element_single;
};
void near_block_entries(const Discretization& disc, double k, RowRange rows, cplx coupling,
                        const DensityReconstruction* reconstruction, const NearBlockInputs& in,
                        Z* device_block);

}  // namespace fmbem::bem_cuda
