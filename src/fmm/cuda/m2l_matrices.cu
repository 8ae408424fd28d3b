// M2L matrices on the device: the t-independent term table uploaded once per executor, the
// t-dependent inputs (Shat(t), powers of k sigma) computed on the host per matrix and level, and
// one kernel that writes every entry of every matrix of every level once.
#include <algorithm>
#include <vector>

#include "cuda_util.cuh"
#include "fmbem/core/error.hpp"
#include "fmbem/fmm/translations.hpp"
#include "m2l_matrices.cuh"

namespace fmbem::fmm::cuda {

namespace {

constexpr int kMatrixThreads = 256;

// Matrices [first, first + count) (global indices, count <= kMatrixGroup) of one level.
struct MatrixGroup {
  int first, count, level;
};

// Thread e of block (x, y) owns entry e = x kMatrixThreads + threadIdx.x (column-major:
// row e % size, column e / size) of the matrices of group y. Its terms are
// [entry_begin[e], entry_begin[e + 1]), each (constant, harmonic | power << 16).
__global__ void __launch_bounds__(kMatrixThreads)
    m2l_matrices_kernel(int size, int harmonics, int powers, const int* __restrict__ entry_begin,
                        const double2* __restrict__ constants, const int* __restrict__ factors,
                        const MatrixGroup* __restrict__ groups,
                        const double2* __restrict__ singular,
                        const double* __restrict__ kappa_powers, const double* __restrict__ sigma,
                        int row_pad, std::size_t block, double2* __restrict__ out) {
  const int e = blockIdx.x * kMatrixThreads + threadIdx.x;
  if (e >= size * size) return;
  const MatrixGroup g = groups[blockIdx.y];
  const double2* st = singular + std::size_t(g.first) * harmonics;
  const double* kp = kappa_powers + std::size_t(g.level) * powers;
  double2 acc[kMatrixGroup];
#pragma unroll
  for (int x = 0; x < kMatrixGroup; ++x) acc[x] = double2{0.0, 0.0};
  const int end = entry_begin[e + 1];
  for (int t = entry_begin[e]; t < end; ++t) {
    const double2 c = constants[t];
    const int f = factors[t], h = f & 0xffff;
    const double w = kp[f >> 16];
    // As the host: constant * (kappa^power * Shat[harmonic]).
#pragma unroll
    for (int x = 0; x < kMatrixGroup; ++x)
      if (x < g.count) {
        const double2 s = st[std::size_t(x) * harmonics + h];
        const double re = w * s.x, im = w * s.y;
        acc[x].x += c.x * re - c.y * im;
        acc[x].y += c.x * im + c.y * re;
      }
  }
  const double width = sigma[g.level];
  const std::size_t at = std::size_t(e / size) * row_pad + e % size;
#pragma unroll
  for (int x = 0; x < kMatrixGroup; ++x)
    if (x < g.count)
      out[std::size_t(g.first + x) * block + at] = double2{acc[x].x / width, acc[x].y / width};
}

}  // namespace

void build_m2l_matrices(const M2LPlan& plan, int row_pad, int col_pad, double2* out,
                        cudaStream_t stream) {
  const int p = plan.order, size = p * p;
  if (row_pad < size || col_pad < size) throw Error("GPU M2L: matrix padding below p^2");
  std::size_t count = 0;
  for (const M2LLevelPlan& lv : plan.levels) {
    for (int v : lv.transfer)
      if (v < 0 || v >= 343) throw Error("GPU M2L: a transfer index of the plan is out of range");
    count += lv.matrix_count();
  }
  if (count == 0) return;
  const std::size_t block = std::size_t(row_pad) * col_pad;
  const MultipoleToLocalTable table(GauntTable(p), p);

  // The terms by column-major entry (a counting sort keeps each entry's terms in table order).
  const auto& terms = table.terms();
  std::vector<int> entry_begin(std::size_t(size) * size + 1, 0);
  const auto column_major = [size](int entry) { return entry % size * size + entry / size; };
  for (const auto& term : terms) ++entry_begin[column_major(term.entry) + 1];
  for (std::size_t e = 0; e + 1 < entry_begin.size(); ++e) entry_begin[e + 1] += entry_begin[e];
  std::vector<int> next(entry_begin.begin(), entry_begin.end() - 1), factors(terms.size());
  std::vector<double2> constants(terms.size());
  for (const auto& term : terms) {
    const int at = next[column_major(term.entry)]++;
    constants[at] = double2{term.constant.real(), term.constant.imag()};
    factors[at] = term.harmonic | term.power << 16;
  }

  // Per level its powers of kappa and sigma; per matrix its Shat(t); per group of matrices.
  const int harmonics = (2 * p - 1) * (2 * p - 1), powers = 2 * p + 1;
  std::vector<double> kappa_powers, sigma;
  std::vector<MatrixGroup> groups;
  struct Vector {
    double sigma;
    Vec3 t;
  };
  std::vector<Vector> vectors;
  for (std::size_t l = 0; l < plan.levels.size(); ++l) {
    const M2LLevelPlan& lv = plan.levels[l];
    const std::vector<double> w = table.kappa_powers(plan.k, lv.sigma);
    kappa_powers.insert(kappa_powers.end(), w.begin(), w.end());
    sigma.push_back(lv.sigma);
    for (std::size_t m = 0; m < lv.matrix_count(); m += kMatrixGroup)
      groups.push_back({int(vectors.size() + m),
                        int(std::min<std::size_t>(kMatrixGroup, lv.matrix_count() - m)), int(l)});
    for (int v : lv.transfer) vectors.push_back({lv.sigma, transfer_offset(v) * lv.sigma});
  }
  std::vector<double2> singular(vectors.size() * harmonics);
#pragma omp parallel for schedule(dynamic, 4)
  for (std::size_t m = 0; m < vectors.size(); ++m) {
    const std::vector<cplx> st = table.singular_harmonics(plan.k, vectors[m].sigma, vectors[m].t);
    for (int h = 0; h < harmonics; ++h)
      singular[m * harmonics + h] = double2{st[h].real(), st[h].imag()};
  }
  if (groups.size() > 65535) throw Error("GPU M2L: too many translation matrices");

  const DeviceVector<int> d_entry_begin(entry_begin, "M2L term table");
  const DeviceVector<double2> d_constants(constants, "M2L term table");
  const DeviceVector<int> d_factors(factors, "M2L term table");
  const DeviceVector<MatrixGroup> d_groups(groups, "M2L matrix groups");
  const DeviceVector<double2> d_singular(singular, "M2L transfer harmonics");
  const DeviceVector<double> d_kappa_powers(kappa_powers, "M2L kappa powers");
  const DeviceVector<double> d_sigma(sigma, "M2L cell widths");
  if (row_pad > size || col_pad > size)
    check(cudaMemsetAsync(out, 0, count * block * sizeof(double2), stream), "cudaMemsetAsync");
  const dim3 grid((size * size + kMatrixThreads - 1) / kMatrixThreads, unsigned(groups.size()));
  m2l_matrices_kernel<<<grid, kMatrixThreads, 0, stream>>>(
      size, harmonics, powers, d_entry_begin.data(), d_constants.data(), d_factors.data(),
      d_groups.data(), d_singular.data(), d_kappa_powers.data(), d_sigma.data(), row_pad, block,
      out);
  check_launch("m2l_matrices_kernel");
  // The temporaries are freed on return: wait for the kernel that reads them.
  check(cudaStreamSynchronize(stream), "the M2L matrix kernel");
}

}  // namespace fmbem::fmm::cuda
