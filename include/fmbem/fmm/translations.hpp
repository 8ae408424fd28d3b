#pragma once
#include <vector>

#include "fmbem/core/vec3.hpp"
#include "fmbem/fmm/expansions.hpp"

// Translation operators of the scaled bases (expansions.hpp) as dense
// p^2 x p^2 matrices, from the addition theorem
//   X_n^m(r + t) = sum_ab 4 pi sum_l i^(a+l-n) G(n,m; a,b; l) Z_l^(m-b)(t) W_a^b(r)
// with (X, Z, W) = (R, R, R) everywhere and (S, S, R) for |r| < |t|, R, S the
// unscaled regular and singular bases, G the Gaunt coefficients below. The
// powers of kappa = k sigma that the scaling brings in are non-negative, so
// the matrices are finite for any k sigma >= 0 (k = 0 is Laplace).
namespace fmbem::fmm {

// G(n,m; a,b; l) = integral over the unit sphere of Y_n^m conj(Y_a^b)
// conj(Y_l^(m-b)), for n, a <= max_n, computed exactly (to rounding) by a
// Gauss-Legendre rule in cos(theta): the integrand is a polynomial there.
class GauntTable {
 public:
  explicit GauntTable(int max_n);
  int max_degree() const { return max_n_; }
  // Zero unless |n - a| <= l <= n + a, n + a + l even and |m - b| <= l.
  double operator()(int n, int m, int a, int b, int l) const;

 private:
  int max_n_;
  std::vector<int> offsets_;  // per (nm, ab) pair: first value, l = |n-a|, |n-a|+2, ...
  std::vector<double> values_;
};

// A p^2 x p^2 matrix, row-major: entry (i, j) at i * p^2 + j, rows and
// columns indexed by coefficient_index.
using TranslationMatrix = std::vector<cplx>;

// C with Rhat_a^b(r + t; sigma) = sum_nm C(ab, nm) Rhat_n^m(r; sigma / 2):
// the child-to-parent shift, t = child centre - parent centre, sigma the
// parent's width. M2M is M_parent = conj(C) M_child; L2L is
// L_child = C^T L_parent (same t).
TranslationMatrix regular_shift(const GauntTable& gaunt, int p, Wavenumber k, double sigma,
                                const Vec3& t);

// T with L^ab = sum_nm T(ab, nm) M^nm: multipole moments about s to local
// coefficients about o, t = o - s, both of one level of width sigma.
TranslationMatrix multipole_to_local(const GauntTable& gaunt, int p, Wavenumber k, double sigma,
                                     const Vec3& t);

// The same matrices for many transfer vectors: the part of each entry that
// does not depend on t, k or sigma (Gaunt coefficient, phase, factorials) is
// tabulated once, so a matrix costs one pass over the table:
//   T[entry] = (sum over the entry's terms of constant * (kappa^power * Shat[harmonic](t))) / sigma
// with kappa = k sigma. The GPU builds its matrices from the same terms and inputs
// (src/fmm/cuda/m2l_matrices.cu).
class MultipoleToLocalTable {
 public:
  struct Term {
    int entry;      // ab * p^2 + nm
    int harmonic;   // coefficient_index(l, m - b) of Shat(t)
    int power;      // of kappa: n + a - l
    cplx constant;  // 4 pi i^(a+l-n) G (2l-1)!! / ((2n-1)!! (2a+1)!! (2n+1))
  };

  MultipoleToLocalTable(const GauntTable& gaunt, int p);
  TranslationMatrix operator()(Wavenumber k, double sigma, const Vec3& t) const;

  int order() const { return p_; }
  // By entry (ascending), each entry's terms by l ascending: the order operator() sums them in.
  const std::vector<Term>& terms() const { return terms_; }
  // The inputs operator() combines the terms with: Shat_l^q(t), l <= 2p - 2 ((2p - 1)^2
  // values, coefficient_index order), and kappa^e for the even e = 0 .. 2p (0^0 = 1; from
  // kappa^2 = k^2 sigma^2, negative for the screened kernel; odd e are NaN, never read).
  std::vector<cplx> singular_harmonics(Wavenumber k, double sigma, const Vec3& t) const;
  std::vector<double> kappa_powers(Wavenumber k, double sigma) const;

 private:
  int p_;
  std::vector<Term> terms_;
};

// grad Rhat_n^m(r) = sum over terms (q, a) of coefficient * g_q * Rhat_a^(m-q)(r)
// with a = n +- 1 and g_q the gradient of |r| Y_1^q: g_0 = sqrt(3/4pi) e_z,
// g_(+-1) = -+sqrt(3/8pi) (e_x +- i e_y). Used for the double-layer moments.
struct GradientTerm {
  int target = 0;  // coefficient_index(n, m) of the differentiated function
  int source = 0;  // coefficient_index(a, m - q)
  int q = 0;
  cplx coefficient;
};
std::vector<GradientTerm> gradient_terms(const GauntTable& gaunt, int p, Wavenumber k,
                                         double sigma);

// The three vectors g_q, q = -1, 0, 1, as (x, y, z) complex components.
struct HarmonicGradient {
  cplx x, y, z;
};
HarmonicGradient harmonic_gradient(int q);

}  // namespace fmbem::fmm
