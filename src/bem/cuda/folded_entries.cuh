#pragma once
// The near-field entries with the quadratic read of the double density, on the GPU
// (folded_entries.cu); called by GpuNearFieldCorrection. Not a public header.
#include <cstdint>

#include "device_integrals.cuh"
#include "fmbem/bem/near_field.hpp"

namespace fmbem {
class DensityReconstruction;
}

namespace fmbem::bem_cuda {

// Device arrays the entries go to: single and dbl one per nonzero of the folded pattern,
// self_single and self_double one per row.
struct FoldedOutputs {
  Z *single = nullptr, *dbl = nullptr, *self_single = nullptr, *self_double = nullptr;
  std::int64_t nonzeros = 0;
};

// NearFieldCorrection::fold_reconstruction's entries for the folded pattern (device_row_start,
// device_columns: each row's close and refined elements and their stencils, ascending), from
// the host's close and refined patterns; radial is its kMomentRadialPoints rule. Rows go in
// chunks of at most chunk_pairs pairs (at least one row). Returns when the entries are written.
void folded_entries(const Discretization& disc, double k, RowRange rows,
                    const NearFieldPattern& close, const NearFieldPattern& refined,
                    const std::int64_t* device_row_start, const std::int32_t* device_columns,
                    const GaussLegendre& angular, const GaussLegendre& radial, cplx coupling,
                    const DensityReconstruction& reconstruction, std::int64_t chunk_pairs,
                    const FoldedOutputs& out);

}  // namespace fmbem::bem_cuda
