#pragma once
#include <cstddef>
#include <span>
#include <vector>

#include "fmbem/core/vec3.hpp"
#include "fmbem/fmm/expansions.hpp"

// The low-frequency translations (M2M, M2L, L2L) at O(p^3) cost and memory by rotation ("point
// and shoot"): rotate the expansion so that the translation vector t lies along +z, translate
// along z, rotate back. With t = |t| (sin b cos a, sin b sin a, cos b),
//   translation(t) = Z(-a) E(b) B(|t|) E(b)^T Z(a)
// where Z(a) = diag(e^{i m a}), E(b) the real rotation blocks of WignerRotation (one
// (2n+1) x (2n+1) block per degree) and B the coaxial translation, block diagonal in m
// (one (p-|m|) x (p-|m|) block per order m, B^-m = B^m). The operators equal the dense matrices of
// translations.hpp (multipole_to_local, regular_shift) on the same coefficient vectors
// (coefficient_index order, the scaled bases of expansions.hpp), for p up to
// max_rotation_order.
//
// Cost of one translation (real flops): the phases 12 p^2, each rotation 4 sum_n (2n+1)^2 ~ 16/3
// p^3, the coaxial block 8 sum_m (p-|m|)^2 ~ 16/3 p^3: about 16 p^3 against 8 p^4 for a dense
// matrix (p = 40: 1.0 Mflop against 20 Mflop).
// Memory: E(b) holds sum_n (2n+1)^2 = p(4p^2-1)/3 doubles per distinct polar angle b (p = 40:
// 0.68 MB, p = 80: 5.5 MB); B holds sum_{m>=0} (p-m)^2 ~ p^3/3 complex per distinct |t| (p = 40:
// 0.35 MB, p = 80: 2.8 MB). An octree level's 316 M2L transfer vectors have 15 distinct lengths
// and 49 distinct polar angles (tests/unit/fmm/rotation_translations_test.cpp counts them):
// 39 MB at p = 40, 309 MB at p = 80 (dense: 316 x 41 MB, 316 x 655 MB). The angles are the same
// on every level, so one set of rotations at the largest p can serve the tree.
namespace fmbem::fmm {

// Largest order p of the rotation-based translations: the bases hold 1e-12 to degree 2p - 2.
inline constexpr int max_rotation_order = max_basis_degree / 2;

// A translation vector in spherical coordinates: t = distance (sin beta cos alpha,
// sin beta sin alpha, cos beta). Throws fmbem::Error for t = 0 or a non-finite t.
struct TranslationDirection {
  double distance = 0.0, alpha = 0.0, beta = 0.0;
};
TranslationDirection translation_direction(const Vec3& t);

// E^n_{m m'}(beta) for degrees n < p: the real matrices with
//   Y_n^m(R_y(beta) x) = sum_m' E^n_{m m'} Y_n^m'(x),
// R_y(beta) the rotation by beta about the y axis, Y the orthonormal harmonics of
// spherical_harmonics. Computed from E^n_{m 0} = sqrt(4 pi / (2n+1)) Y_n^m(R_y(beta) e_z) by the
// recurrences of the angular momentum operators (L_y commutes with R_y; L_z gives the column
// m' = 1), over the wedge m >= |m'| only, the rest by the symmetries
// E_{m' m} = (-1)^(m+m') E_{m m'} = E_{-m,-m'}: the scheme of Gumerov and Duraiswami (2015),
// stable to high degree.
class WignerRotation {
 public:
  WignerRotation(int p, double beta);

  int order() const { return p_; }
  double beta() const { return beta_; }
  double operator()(int n, int m, int m_prime) const {
    return values_[block_offset(n) + (m + n) * (2 * n + 1) + (m_prime + n)];
  }
  // out_n = E^n in_n (transposed: (E^n)^T in_n) for every degree n < p; in != out.
  void apply(const cplx* in, cplx* out, bool transposed) const;
  // Degree n's (2n+1) x (2n+1) block, row-major (rows m, columns m').
  const double* block(int n) const { return &values_[block_offset(n)]; }
  std::size_t bytes() const { return values_.size() * sizeof(double); }

 private:
  static std::size_t block_offset(int n) { return std::size_t(n) * (4 * n * n - 1) / 3; }
  void compute_recurrence(double beta);

  int p_;
  double beta_;
  std::vector<double> values_;  // degree n's block row-major at block_offset(n)
};

// Which translation a coaxial block performs, in the FMM's conventions (translations.hpp):
// multipole_to_local: L = B M, multipoles about s to locals about s + t, one level of width
// sigma; multipole_to_multipole: M_parent = B M_child and local_to_local: L_child = B L_parent,
// sigma the parent's width, t = child centre - parent centre.
enum class CoaxialKind { multipole_to_local, multipole_to_multipole, local_to_local };

// The translation along +z by distance d, block diagonal in m. The coefficients of
//   Fhat_n^m(r + d e_z) = sum_l X^m_{n l} Rhat_l^m(r)   (Fhat = Shat for M2L, Rhat for shifts)
// in the scaled bases come from the derivative relations of the bases: d/dz and d/dx - i d/dy
// applied to both sides give a recurrence in l (column by column) and one from order m to
// m + 1, started from X^0_{n 0} = sqrt(4 pi) Fhat_n^0(d e_z). Only kappa^2 = (k sigma)^2
// multiplies (never divides), so k = 0 (Laplace) is the same code, and so is the screened
// kernel (kappa^2 < 0, real radial functions).
class CoaxialTranslation {
 public:
  CoaxialTranslation(CoaxialKind kind, int p, Wavenumber k, double sigma, double distance);

  int order() const { return p_; }
  CoaxialKind kind() const { return kind_; }
  // B^|m|(n, n') for |m| <= n, n' < p: output degree n, input degree n'.
  cplx operator()(int m, int n, int n_prime) const {
    const int size = p_ - m;
    return values_[offsets_[m] + std::size_t(n - m) * size + (n_prime - m)];
  }
  // out[(n, m)] = sum_n' B^|m|(n, n') in[(n', m)] for all (n, m); in != out.
  void apply(const cplx* in, cplx* out) const;
  // Order |m|'s (p - |m|) x (p - |m|) block, row-major (output degree, input degree).
  const cplx* block(int m) const { return &values_[offsets_[m]]; }
  std::size_t bytes() const { return values_.size() * sizeof(cplx); }

 private:
  int p_;
  CoaxialKind kind_;
  std::vector<cplx> values_;          // order m >= 0: (p - m)^2 entries, row-major
  std::vector<std::size_t> offsets_;  // first entry of order m
};

// out += Z(-alpha) E B E^T Z(alpha) in: one translation by rotation. workspace: 2 p^2 values.
void rotate_translate_add(const WignerRotation& rotation, double alpha,
                          const CoaxialTranslation& coaxial, const cplx* in, cplx* out,
                          std::span<cplx> workspace);

// out[b] += Z(-alpha_b) E B E^T Z(alpha_b) in[b] for up to rotation_lanes expansions at once
// (count of them) sharing the rotation E and the coaxial block B: several pairs, vectorised over
// the pairs. phases[b] holds e^{i m alpha_b} for m = 0..p-1 (rotation_phases). Lanes may share
// an output (added in lane order); each lane's arithmetic is the same whatever the others hold.
// workspace: rotation_workspace(p) doubles.
inline constexpr int rotation_lanes = 8;
std::size_t rotation_workspace(int p);
std::vector<cplx> rotation_phases(int p, double alpha);
void rotate_translate_add_many(const WignerRotation& rotation, const CoaxialTranslation& coaxial,
                               const cplx* const* phases, const cplx* const* in, cplx* const* out,
                               int count, std::span<double> workspace);

// A level's M2L by rotation for a list of transfer vectors t = o - s (the plan's, at most 316):
// the rotations per distinct polar angle and the coaxial blocks per distinct length, shared.
// Expansions of many cells are contiguous p^2 blocks: apply takes one pair's pointers, so a
// batch of pairs of one transfer vector is a loop over offsets into the level's arrays.
class RotationMultipoleToLocal {
 public:
  RotationMultipoleToLocal(int p, Wavenumber k, double sigma,
                           std::span<const Vec3> transfer_vectors);

  int order() const { return p_; }
  std::size_t vector_count() const { return entries_.size(); }
  std::size_t rotation_count() const { return rotations_.size(); }
  std::size_t coaxial_count() const { return coaxials_.size(); }
  // local += T(transfer_vectors[vector]) multipole; workspace: 2 p^2 values.
  void apply(std::size_t vector, const cplx* multipole, cplx* local,
             std::span<cplx> workspace) const;
  // local[b] += T(transfer_vectors[vector]) multipole[b] for up to rotation_lanes pairs (count);
  // workspace: rotation_workspace(p) doubles.
  void apply_many(std::size_t vector, const cplx* const* multipoles, cplx* const* locals, int count,
                  std::span<double> workspace) const;
  std::size_t bytes() const;

 private:
  struct Entry {
    std::size_t rotation, coaxial;
    double alpha;
  };
  int p_;
  std::vector<WignerRotation> rotations_;
  std::vector<CoaxialTranslation> coaxials_;
  std::vector<double> distances_;  // of coaxials_
  std::vector<Entry> entries_;
  std::vector<cplx> phases_;  // rotation_phases of entry v at v * p
};

// The child-parent shifts of one level by rotation, octants as Fmm numbers them: child centre
// - parent centre = (+-h, +-h, +-h), h = sigma / 4, bit 0 of the octant the sign of x (set:
// +), bit 1 of y, bit 2 of z; sigma the parent's width. Two polar angles, one length.
class RotationShifts {
 public:
  RotationShifts(int p, Wavenumber k, double sigma);

  int order() const { return p_; }
  // parent += M2M(octant) child; child += L2L(octant) parent. workspace: 2 p^2 values.
  void multipole_to_multipole(int octant, const cplx* child, cplx* parent,
                              std::span<cplx> workspace) const;
  void local_to_local(int octant, const cplx* parent, cplx* child, std::span<cplx> workspace) const;
  // The same for up to rotation_lanes shifts at once (count), every octant's z on the same side
  // (one rotation: same_rotation); outputs may repeat. workspace: rotation_workspace(p) doubles.
  static bool same_rotation(int octant, int other) { return (octant & 4) == (other & 4); }
  void multipole_to_multipole_many(const int* octants, const cplx* const* children,
                                   cplx* const* parents, int count,
                                   std::span<double> workspace) const;
  void local_to_local_many(const int* octants, const cplx* const* parents, cplx* const* children,
                           int count, std::span<double> workspace) const;
  std::size_t bytes() const;

 private:
  int p_;
  std::vector<WignerRotation> rotations_;  // beta of the octants with z > 0, then z < 0
  CoaxialTranslation m2m_, l2l_;
  double alpha_[8];
  std::vector<cplx> phases_;  // rotation_phases of octant o at o * p
  void shift_many(const CoaxialTranslation& coaxial, const int* octants, const cplx* const* in,
                  cplx* const* out, int count, std::span<double> workspace) const;
};

}  // namespace fmbem::fmm
