#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "fmbem/core/error.hpp"
#include "fmbem/core/vec3.hpp"

namespace fmbem {

// The rows (collocation points) a process computes: [begin, end).
struct RowRange {
  std::size_t begin = 0, end = 0;
  std::size_t size() const { return end - begin; }
};

// What layers with Burton-Miller's normal derivatives output: combined, one output a row,
// D + alpha N and S + alpha D' (alpha 0: the conventional D and S, no derivative formed), or
// apart, two outputs a row: D u + S q at [0, rows) and N u + D' q at [rows, 2 rows) (the
// regularised Burton-Miller equation applies an operator to the second alone). Output o is
// value_weight(o) times the operators plus derivative_weight(o) times their normal derivatives.
struct LayerCoupling {
  cplx alpha = 0.0;
  bool apart = false;
  // Implicit: a coupling given as a number is combined.
  LayerCoupling(cplx combined = 0.0) : alpha(combined) {}  // NOLINT(google-explicit-constructor)
  LayerCoupling(double combined) : alpha(combined) {}      // NOLINT(google-explicit-constructor)
  static LayerCoupling derivative_apart() {
    LayerCoupling c;
    c.apart = true;
    return c;
  }
  // Whether the normal derivatives are formed (Burton-Miller's integrals).
  bool normal_derivatives() const { return apart || alpha != cplx(0.0); }
  int outputs() const { return apart ? 2 : 1; }
  cplx value_weight(int output) const { return apart && output == 1 ? 0.0 : 1.0; }
  cplx derivative_weight(int output) const {
    return apart ? (output == 1 ? cplx(1.0) : cplx(0.0)) : alpha;
  }
};

// Discrete single and double layer operators of piecewise-constant
// collocation, S_ij = integral over element j of G(x_i - y) and
// D_ij = integral over element j of dG/dn_y (x_i, y), for the rows of one
// process. Backends: direct (O(N^2), here) and the FMM.
//
// With a Burton-Miller coupling alpha != 0 (coupling()) the two operators are
//   S + alpha D'  and  D + alpha N,
// D'_ij = integral over element j of dG/dn_x (x_i, y) (adjoint double layer) and
// N_ij = n_i . grad_x of D_ij's integral (hypersingular, finite part on the diagonal), n_i the
// collocation point's normal: each conventional operator plus alpha times its normal derivative
// at the collocation point, which is what every Burton-Miller equation is made of
// (docs/burton-miller.md). One apply forms both parts in one pass.
class LayerPotentials {
 public:
  virtual ~LayerPotentials() = default;

  // y[i - rows().begin] = sum_j (D + alpha N)_ij double_density[j] +
  // (S + alpha D')_ij single_density[j]; apart (outputs() 2): y[i - rows().begin] that of D and
  // S, y[rows().size() + i - rows().begin] that of N and D'. Densities have columns() entries, one
  // per element of column_elements(); an empty span skips that layer.
  virtual void apply(std::span<const cplx> double_density, std::span<const cplx> single_density,
                     std::span<cplx> y) const = 0;

  // apply with the densities double_scale[j] x[j] and single_scale[j] x[j] (each empty: that
  // layer unused): a mixed problem's operator, whose densities are the unknown scaled per
  // column. The default forms them here; the GPU-resident layers form them on the device (one
  // upload of x, however many layers). scales_id: non-zero when the scales stay the same for
  // every call with that id (BoundaryOperator's, unique to the process), so that they are
  // copied to the device once.
  virtual void apply_columns(std::span<const cplx> x, std::span<const cplx> double_scale,
                             std::span<const cplx> single_scale, std::span<cplx> y,
                             std::uint64_t scales_id = 0) const;

  // The diagonals of the two operators for the rows (accurately integrated self terms):
  // S_ii + alpha D'_ii (D'_ii = 0 on a flat element) and D_ii + alpha N_ii.
  virtual const std::vector<cplx>& single_layer_diagonal() const = 0;
  virtual const std::vector<cplx>& double_layer_diagonal() const = 0;
  virtual RowRange rows() const = 0;
  // The entries of a density: entry j is element column_elements()[j] (ascending), or where
  // that is empty and columns() is the mesh's size element j, every element in order (a part
  // without elements may have no columns). A part of the distributed FMM reads its rows and a
  // halo alone (its densities are that long, not the problem's).
  virtual std::size_t columns() const = 0;
  virtual std::span<const std::size_t> column_elements() const { return {}; }
  // The entry of row rows().begin's element among the columns (the rows are contiguous there).
  std::size_t first_row_column() const {
    const std::span<const std::size_t> elements = column_elements();
    if (elements.empty()) return rows().begin;
    return std::size_t(std::lower_bound(elements.begin(), elements.end(), rows().begin) -
                       elements.begin());
  }
  // alpha (0: the conventional operators, or the normal derivatives apart).
  virtual cplx coupling() const = 0;
  // 2 where the normal derivatives are output apart (LayerCoupling): apply's y then holds
  // 2 rows().size() entries, and the diagonals the value's rows then the derivative's.
  virtual int outputs() const { return 1; }
};

// Each element's entry in a column space (its elements ascending, each once): the one lookup
// that renumbers element indices to entries at set-up (the correction's columns, the strength
// matrix's stencils, the FMM's strength points). 4 bytes an element up to the last column; it
// views `elements`, which must outlive it.
class ColumnEntries {
 public:
  explicit ColumnEntries(std::span<const std::size_t> elements) : elements_(elements) {
    // Checked whole before the table is sized by the last element.
    if (std::adjacent_find(elements.begin(), elements.end(), std::greater_equal<>()) !=
        elements.end())
      throw Error("a column space must list its elements ascending, each once");
    entry_.assign(elements.empty() ? 0 : elements.back() + 1, -1);
    for (std::size_t j = 0; j < elements.size(); ++j) entry_[elements[j]] = std::int32_t(j);
  }
  // The element's entry; -1 where it is not a column.
  std::int32_t operator()(std::size_t element) const {
    return element < entry_.size() ? entry_[element] : -1;
  }
  std::span<const std::size_t> elements() const { return elements_; }

 private:
  std::span<const std::size_t> elements_;
  std::vector<std::int32_t> entry_;
};

// A density in the layers' columns: value(e) for the element e of each column.
template <class PerElement>
std::vector<cplx> column_density(const LayerPotentials& layers, PerElement value) {
  const std::span<const std::size_t> elements = layers.column_elements();
  std::vector<cplx> density(layers.columns());
  for (std::size_t j = 0; j < density.size(); ++j)
    density[j] = value(elements.empty() ? j : elements[j]);
  return density;
}

}  // namespace fmbem
