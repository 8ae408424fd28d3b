#pragma once
// The M2L translation matrices of a plan, built on the device (not a public header).
#include <cuda_runtime.h>

#include <cstddef>

#include "fmbem/fmm/m2l_plan.hpp"

namespace fmbem::fmm::cuda {

// Matrix m of level l of the plan (its transfer vector transfer_offset(transfer[m]) * sigma)
// to out + (first + m) row_pad col_pad, first the matrices of the levels before l: column-major,
// entry (i, j) at j row_pad + i, zero outside p^2 x p^2 (row_pad, col_pad >= p^2). Each entry
// is MultipoleToLocalTable's sum of the same terms with the same inputs (Shat(t) and the powers
// of k sigma, computed on the host: a few hundred vectors a level), in the same order; one
// thread owns an entry of up to kMatrixGroup matrices of a level, so a term read once serves
// them all. The plan's host matrices are not read. Ordered on stream; the temporaries (the
// term table, the inputs) are freed before this returns, which waits for the kernel.
constexpr int kMatrixGroup = 8;
void build_m2l_matrices(const M2LPlan& plan, int row_pad, int col_pad, double2* out,
                        cudaStream_t stream);

}  // namespace fmbem::fmm::cuda
