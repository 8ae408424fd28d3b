#pragma once
// The near-field direct-sum kernels and their launches (not a public header). Points and
// strengths are in tree (Morton) order, one double array a coordinate; complex numbers are
// double2 (re, im).
#include <cuda_runtime.h>

namespace fmbem::fmm::cuda {

// Threads per block: a multiple of 32 up to this.
constexpr int kNearFieldMaxThreads = 256;

struct NearFieldArgs {
  // Block b: item items[b] = (first range, end range, tree position of the first target,
  // number of targets m). The item's sources are its ranges concatenated: range r covers the
  // positions below ranges[r].x (and from ranges[r - 1].x on, or 0 for the item's first), and
  // position g is source (tree position) g + ranges[r].y.
  const int4* items = nullptr;
  const int2* ranges = nullptr;
  const double *sx = nullptr, *sy = nullptr, *sz = nullptr;  // sources
  const double *nx = nullptr, *ny = nullptr, *nz = nullptr;  // their unit normals
  const double2 *charges = nullptr, *dipoles = nullptr;      // their strengths
  const double *tx = nullptr, *ty = nullptr, *tz = nullptr;  // targets
  const int* target_order = nullptr;  // tree position i holds target target_order[i]
  double2* potential = nullptr;       // input order: potential[target] += the sum
  double k = 0.0, skip2 = 0.0;
  // The screened kernel exp(-k r) / (4 pi r) instead of exp(ikr) / (4 pi r).
  bool screened = false;
  // With target normals (tree order, as tx; null: phi alone) the sum is phi + weight dphi/dn_t:
  // the kernels dG/dn_x for the charges and d^2G/dn_x dn_y for the dipoles added.
  const double *tnx = nullptr, *tny = nullptr, *tnz = nullptr;
  double2 weight{0.0, 0.0};
  // With target normals, apart: potential[target] += phi and potential[targets + target] +=
  // dphi/dn_t (the weight unused).
  bool apart = false;
  int targets = 0;
};

// One block of `threads` threads per item; the kernel that k != 0 (and screened), charges and
// dipoles (non-null args.charges / args.dipoles), target normals (non-null args.tnx) and
// targets_per_thread (1 or 2) ask for.
void launch_near_field(const NearFieldArgs& args, int items, int threads, int targets_per_thread,
                       cudaStream_t stream);
// Dynamic shared memory of one block.
std::size_t near_field_shared_bytes(bool charges, bool dipoles, int threads, int targets_per_thread,
                                    bool target_normals = false);

// sorted[i] = in[order[i]] for i < n.
void launch_gather_strengths(int n, const int* order, const double2* in, double2* sorted,
                             cudaStream_t stream);

}  // namespace fmbem::fmm::cuda
