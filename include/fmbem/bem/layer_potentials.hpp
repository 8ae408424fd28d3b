#pragma once
#include <cstddef>
#include <span>
#include <vector>

#include "fmbem/core/vec3.hpp"

namespace fmbem {

// The rows (collocation points) a process computes: [begin, end).
struct RowRange {
  std::size_t begin = 0, end = 0;
  std::size_t size() const { return end - begin; }
};

// Discrete single and double layer operators of piecewise-constant
// collocation, S_ij = integral over element j of G(x_i - y) and
// D_ij = integral over element j of dG/dn_y (x_i, y), for the rows of one
// process. Backends: direct (O(N^2), here) and the FMM.
class LayerPotentials {
 public:
  virtual ~LayerPotentials() = default;

  // y[i - rows().begin] = sum_j D_ij double_density[j] + S_ij single_density[j].
  // Densities have one entry per element; an empty span skips that layer.
  virtual void apply(std::span<const cplx> double_density, std::span<const cplx> single_density,
                     std::span<cplx> y) const = 0;

  // S_ii and D_ii for the rows (accurately integrated self terms).
  virtual const std::vector<cplx>& single_layer_diagonal() const = 0;
  virtual const std::vector<cplx>& double_layer_diagonal() const = 0;
  virtual RowRange rows() const = 0;
  virtual std::size_t columns() const = 0;
};

}  // namespace fmbem
