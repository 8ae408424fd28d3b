#pragma once
#include <cstddef>
#include <span>
#include <vector>

#include "fmbem/core/vec3.hpp"

// Building blocks of the high-frequency ("diagonal") form of the Helmholtz FMM, for the levels
// of a wideband FMM whose cells are large against the wavelength. A cell's field is a function
// on the unit sphere sampled on a SphereGrid:
//   outgoing signature of sources y_j (charges q_j, dipoles d_j along unit normals n_j) about c:
//     F(s) = sum_j exp(-ik s.(y_j - c)) (q_j - ik d_j s.n_j)
//   (the dipole is the derivative in the source point, as in direct_sum.hpp), and
//   local signature about o: L(s), whose field is phi(x) = integral exp(ik s.(x - o)) L(s) ds.
// With t = o - c and d = (x - o) - (y - c), |d| < |t|, the plane-wave form of the kernel
//   G(t + d) = ik / (16 pi^2) integral exp(ik s.d) T_L(s, t) ds,
//   T_L(s, t) = sum_{n=0}^{L} i^n (2n+1) h_n^(1)(k|t|) P_n(s.t/|t|)
// (Gegenbauer's addition theorem and Funk-Hecke) makes M2L the pointwise product
//   L(s) += transfer(s) F(s),  transfer = ik / (16 pi^2) T_L,
// and the integral the grid's quadrature. The shifts between parent and child centres are
// pointwise phases, a change of bandwidth between levels is interpolation (child to parent) or
// its adjoint, anterpolation (parent to child). Arrays of a level are contiguous, grid-major per
// cell: cell c's signature is [c * grid.size(), (c + 1) * grid.size()), so that the phases
// can be batched over cells (CPU or GPU executors).
namespace fmbem::fmm {

// Gauss-Legendre in cos(theta) (L + 1 nodes, ascending) times 2L + 2 uniform phi_j = 2 pi j /
// (2L + 2): exact for spherical harmonics of degree up to 2L + 1, so the product of two
// functions of bandwidth L is integrated exactly. Point (i, j) is i * num_phi() + j.
class SphereGrid {
 public:
  explicit SphereGrid(int bandwidth);
  int bandwidth() const { return bandwidth_; }
  int num_theta() const { return bandwidth_ + 1; }
  int num_phi() const { return 2 * bandwidth_ + 2; }
  std::size_t size() const { return directions_.size(); }
  std::span<const double> cos_theta() const { return cos_theta_; }
  std::span<const double> theta_weights() const { return theta_weights_; }
  std::span<const Vec3> directions() const { return directions_; }
  // Quadrature weights on the sphere (they sum to 4 pi).
  std::span<const double> weights() const { return weights_; }

 private:
  int bandwidth_;
  std::vector<double> cos_theta_, theta_weights_, weights_;
  std::vector<Vec3> directions_;
};

// The excess-bandwidth constant C of signature_bandwidth, calibrated by
// tests/unit/fmm/high_frequency_test.cpp (HighFrequencyCalibration.MinimalBandwidth) on the
// worst octree transfer vector (2w, 0, 0) with sources and targets at the cells' corners: the
// smallest C that reaches eps there ranges over 1.3 (k w = 64, eps = 1e-4) to 2.4 (k w = 24 and
// 48) where the diagonal form is accurate; the literature's 1.8 falls short below k w = 48.
inline constexpr double excess_bandwidth_constant = 2.5;

// The bandwidth for a cell of diagonal d (sources and targets within d / 2 of the centres, so
// |d| <= diagonal in the kernel's expansion): L = kd + C log10(1/eps)^(2/3) (kd)^(1/3), rounded
// up. k > 0, cell_diagonal > 0, 0 < eps < 1.
int signature_bandwidth(double k, double cell_diagonal, double eps);

// The excess-bandwidth term constant * log10(1/eps)^(2/3) (kd)^(1/3) that signature_bandwidth,
// the diagonal levels' bandwidths and the low-frequency switch each add to kd with their own
// constant.
double excess_bandwidth(double constant, double kd, double eps);

// Whether the diagonal form reaches eps in double precision for the octree's M2L geometry at
// cell width w (|t| >= 2w between centres, sources and targets anywhere in their cells, the
// bandwidth of signature_bandwidth for the diagonal sqrt(3) w). Below a k w that depends on eps
// the truncated transfer function loses the digits (h_n(k|t|) grows with n beyond k|t|, and the
// sum cancels); the switch level of a wideband FMM is the finest level where this holds.
bool diagonal_form_accurate(double k, double cell_width, double eps);

// The smallest k w at which diagonal_form_accurate(k, w, eps) holds: measured thresholds
// (tests/unit/fmm/high_frequency_test.cpp) with a 5 % margin, interpolated in log10(eps).
double diagonal_form_min_kw(double eps);

// transfer(s) = ik / (16 pi^2) T_L(s, t) on the grid (L = grid.bandwidth()), t = o - c the
// target centre minus the source centre; k > 0, t != 0. h_n by upward recurrence (the dominant
// solution), P_n by the three-term recurrence.
void transfer_function(const SphereGrid& grid, double k, const Vec3& t, std::span<cplx> transfer);

// The transfer functions of many transfer vectors (a level has at most 316), vector-major:
// vector v at [v * grid.size(), (v + 1) * grid.size()).
std::vector<cplx> transfer_functions(const SphereGrid& grid, double k,
                                     std::span<const Vec3> transfer_vectors);

// signature += the outgoing signature of the sources about centre (see above). charges or
// dipoles may be empty (zero); normals are needed with dipoles.
void form_signature(const SphereGrid& grid, double k, const Vec3& centre,
                    std::span<const Vec3> points, std::span<const Vec3> normals,
                    std::span<const cplx> charges, std::span<const cplx> dipoles,
                    std::span<cplx> signature);

// local += transfer .* outgoing, for `count` cells at once (each array count * grid size long
// unless transfer is one grid long: then it serves every cell). The CPU executor's pointwise
// products, the shifts' phases too (vectorised: built for x86-64-v3 and the baseline).
void diagonal_m2l(std::span<const cplx> transfer, std::span<const cplx> outgoing,
                  std::span<cplx> local);

// potential[i] += phi(x_i) + normal_weight n_i . grad phi(x_i) for the field of the local
// signature about centre (the FMM's TargetNormalDerivative; normals empty: phi alone).
void evaluate_local_signature(const SphereGrid& grid, double k, const Vec3& centre,
                              std::span<const cplx> local, std::span<const Vec3> targets,
                              std::span<const Vec3> normals, cplx normal_weight,
                              std::span<cplx> potential);

// exp(ik s.v) on the grid: the phases of the shifts. An outgoing signature about a child
// centre c moves to its parent's centre P by multiplying with plane_wave_phases(P - c); a local
// signature about P moves to c with plane_wave_phases(c - P). One table per octant and level.
std::vector<cplx> plane_wave_phases(const SphereGrid& grid, double k, const Vec3& v);

// values *= phases pointwise, for `count` cells (values count * phases.size() long).
void multiply_by_phases(std::span<const cplx> phases, std::span<cplx> values);

// Exact change of bandwidth between a child grid (L_c) and its parent's (L_p >= L_c), done
// separably: a DFT in phi (modes |m| <= L_c), per mode m a real (L_p + 1) x (L_c + 1) matrix in
// theta (projection onto the normalised Legendre functions P_n^m, n <= L_c, by the child's
// Gauss rule, evaluated at the parent's nodes), an inverse DFT. interpolate is exact for data of
// bandwidth <= L_c; anterpolate is its adjoint in the grids' quadratures, i.e. the exact
// projection onto bandwidth L_c of the parent's data, evaluated on the child grid: integrals
// against any function of bandwidth <= L_c agree. Cost per cell, with L_c = L_p / 2, about
// 3 L_p^3 complex-by-real or complex multiply-adds (dense; batched products on a GPU).
class SphereInterpolator {
 public:
  SphereInterpolator(const SphereGrid& child, const SphereGrid& parent);
  int child_bandwidth() const { return child_bandwidth_; }
  int parent_bandwidth() const { return parent_bandwidth_; }

  // parent += interpolation of child, for count cells (arrays count * grid size long).
  void interpolate(std::span<const cplx> child, std::span<cplx> parent) const;
  // child += anterpolation of parent, for count cells.
  void anterpolate(std::span<const cplx> parent, std::span<cplx> child) const;
  // The same for cells whose arrays lie apart, on the calling thread: parent[b] += the
  // interpolation of child[b] (child[b] += the anterpolation of parent[b]), each array one
  // grid long. Cells passed together are transformed together (eight at a time, vectorised
  // over the cells).
  void interpolate(std::span<const cplx* const> child, std::span<cplx* const> parent) const;
  void anterpolate(std::span<const cplx* const> parent, std::span<cplx* const> child) const;

  // The separable factors, for executors that run the passes themselves (the GPU's): forward
  // DFTs (num_phi x modes, row-major, modes m = -L_c..L_c), inverse DFTs (modes x num_phi) on
  // each grid, and per mode the theta matrices up (parent nodes x child nodes) and down (child
  // nodes x parent nodes), mode-major.
  struct Factors {
    std::span<const cplx> child_forward, child_inverse, parent_forward, parent_inverse;
    std::span<const double> up, down;
  };
  Factors factors() const {
    return {child_forward_, child_inverse_, parent_forward_, parent_inverse_, up_, down_};
  }

 private:
  // up: child to parent (interpolate), else parent to child (anterpolate); out += result.
  void change_bandwidth(bool up, std::span<const cplx> in, std::span<cplx> out) const;
  void change_bandwidth(bool up, std::span<const cplx* const> in, std::span<cplx* const> out) const;
  int child_bandwidth_, parent_bandwidth_;
  std::size_t child_size_, parent_size_;
  // Forward DFTs e^{-i m phi_j} / num_phi (j, m) and inverse ones e^{i m phi_j} (m, j) for the
  // modes m = -L_c..L_c, on each grid.
  std::vector<cplx> child_forward_, child_inverse_, parent_forward_, parent_inverse_;
  // Per mode m (index m + L_c): up[a][b] (parent node a, child node b) with the child's
  // weights, down[b][a] with the parent's.
  std::vector<double> up_, down_;
};

// Conversions at the switch level between the low-frequency expansions of a cell (the scaled
// bases of expansions.hpp at sigma = the cell width, truncation p) and signatures on its grid.
// Dense matrices, row-major, so that a level's conversion is one batched product.
//   multipole -> signature (grid.size() x p^2): F(s_g) = sum_nm C(g, nm) M_nm,
//     C(g, nm) = 4 pi (-i)^n kappa^n / (2n+1)!! Y_n^m(s_g), kappa = k sigma,
//   from exp(-ik s.r) = 4 pi sum_n (-i)^n j_n(k|r|) sum_m conj(Y_n^m(r/|r|)) Y_n^m(s) and
//   conj(Rhat_n^m(r)) = j_n(k|r|) (2n+1)!! / kappa^n conj(Y_n^m(r/|r|)).
std::vector<cplx> multipole_to_signature(const SphereGrid& grid, int p, double k, double sigma);
//   local signature -> local coefficients (p^2 x grid.size()): L_nm = sum_g D(nm, g) L(s_g),
//     D(nm, g) = 4 pi i^n kappa^n / (2n+1)!! w_g conj(Y_n^m(s_g)),
//   so that sum_nm L_nm Rhat_n^m(x - o) = sum_g w_g exp(ik s_g.(x - o)) L(s_g) to degree p - 1.
std::vector<cplx> signature_to_local(const SphereGrid& grid, int p, double k, double sigma);

}  // namespace fmbem::fmm
