#pragma once
#include <cstdint>
#include <span>
#include <vector>

#include "fmbem/bem/discretization.hpp"
#include "fmbem/bem/layer_potentials.hpp"

namespace fmbem {

struct NearFieldOptions {
  // Element j is a close neighbour of collocation point x_i when
  // |x_i - c_j| < near_factor * R_j (c_j centroid, R_j its distance to the
  // farthest corner); the self element always is.
  double near_factor = 2.5;
  // Gauss-Legendre points per edge sector of the semi-analytic integrals.
  int angular_points = 16;
};

// Sparse correction, built once: for close pairs, the accurate integral
// (panel_integrals) minus what the regular Gauss rule gives for the pair, so
// that regular sum + correction is accurate for every pair. Stored in CSR
// form, one row per collocation point of `rows`.
class NearFieldCorrection {
 public:
  NearFieldCorrection(const Discretization& disc, double k, RowRange rows,
                      const NearFieldOptions& options);

  // y[i - rows.begin] += sum over close j of dD_ij dd[j] + dS_ij sd[j].
  void add_to(std::span<const cplx> double_density, std::span<const cplx> single_density,
              std::span<cplx> y) const;

  const std::vector<cplx>& single_layer_diagonal() const { return self_single_; }
  const std::vector<cplx>& double_layer_diagonal() const { return self_double_; }
  std::size_t nonzeros() const { return columns_.size(); }
  std::size_t memory_bytes() const;

 private:
  RowRange rows_;
  std::vector<std::int64_t> row_start_;
  std::vector<std::int32_t> columns_;
  std::vector<cplx> single_, double_;
  std::vector<cplx> self_single_, self_double_;
};

// The regular Gauss rule's S and D integrals over one element for the target
// x, as the far field computes them (coincident points skipped).
struct RegularPair {
  cplx single_layer, double_layer;
};
RegularPair regular_integrals(const Discretization& disc, double k, std::size_t element,
                              const Vec3& x);

}  // namespace fmbem
