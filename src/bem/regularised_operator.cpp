#include "fmbem/bem/regularised_operator.hpp"

#include <algorithm>
#include <atomic>

#include "fmbem/core/error.hpp"

namespace fmbem {

RegularisedOperator::RegularisedOperator(const LayerPotentials& layers,
                                         const LayerPotentials& regulariser,
                                         RegularisedCoefficients coefficients, Gather gather,
                                         Timed timed)
    : layers_(&layers),
      regulariser_(&regulariser),
      coefficients_(std::move(coefficients)),
      gather_(std::move(gather)),
      timed_(std::move(timed)) {
  if (layers.outputs() != 2)
    throw Error("regularised operator: the layers must give their normal derivatives apart");
  const RowRange rows = layers.rows();
  if (regulariser.rows().begin != rows.begin || regulariser.rows().end != rows.end)
    throw Error("regularised operator: the regulariser must have the layers' rows");
  if (!gather_ && (regulariser.columns() != rows.size() || rows.begin != 0 ||
                   !regulariser.column_elements().empty()))
    throw Error("regularised operator: without a gather every column must be a row");
  const OperatorCoefficients& c = coefficients_.value;
  const std::span<const std::size_t> elements = layers.column_elements();
  std::size_t read = std::max(rows.end, elements.empty() ? layers.columns() : 0);
  if (!elements.empty()) read = std::max(read, elements.back() + 1);
  c.check_size(read);
  if ((!coefficients_.derivative_identity.empty() &&
       coefficients_.derivative_identity.size() < rows.end) ||
      (!coefficients_.regularised.empty() && coefficients_.regularised.size() < rows.end))
    throw Error("regularised operator: one coefficient per element of the mesh expected");
  static std::atomic<std::uint64_t> operators{0};
  scales_id_ = (std::uint64_t(1) << 63) | ++operators;  // apart from BoundaryOperator's ids
  const std::size_t n = layers.columns();
  if (c.uses_double_layer()) column_double_.resize(n);
  if (c.uses_single_layer()) column_single_.resize(n);
  for (std::size_t j = 0; j < n; ++j) {
    const std::size_t e = elements.empty() ? j : elements[j];
    if (!column_double_.empty()) column_double_[j] = c.double_layer_of(e);
    if (!column_single_.empty()) column_single_[j] = c.single_layer_of(e);
  }
  row_value_identity_.resize(rows.size());
  row_derivative_identity_.resize(rows.size());
  row_regularised_.resize(rows.size());
  for (std::size_t r = 0; r < rows.size(); ++r) {
    const std::size_t e = rows.begin + r;
    row_value_identity_[r] = c.identity_of(e);
    row_derivative_identity_[r] = coefficients_.derivative_identity_of(e);
    row_regularised_[r] = coefficients_.is_regularised(e) ? 1 : 0;
  }
}

void RegularisedOperator::combine(std::span<const cplx> value, std::span<const cplx> h,
                                  std::span<cplx> y) const {
  const std::size_t rows = row_regularised_.size();
  // S~ h on the rows: h moved to the regulariser's columns first.
  std::vector<cplx> s_h(rows);
  const auto product = [&] {
    std::vector<cplx> columns;
    if (gather_) {
      columns.resize(regulariser_->columns());
      gather_(h, columns);
    }
    regulariser_->apply({}, gather_ ? std::span<const cplx>(columns) : h, s_h);
  };
  if (timed_)
    timed_(product);
  else
    product();
  const cplx alpha = coefficients_.alpha, beta = coefficients_.beta;
  const std::ptrdiff_t count = std::ptrdiff_t(rows);
#pragma omp parallel for schedule(static)
  for (std::ptrdiff_t i = 0; i < count; ++i) {
    const std::size_t r = std::size_t(i);
    y[r] = value[r] + (row_regularised_[r] ? beta * s_h[r] : alpha * h[r]);
  }
}

void RegularisedOperator::apply(std::span<const cplx> x, std::span<cplx> y) const {
  const std::size_t rows = row_regularised_.size();
  if (x.size() != layers_->columns() || y.size() != rows)
    throw Error("regularised operator: density or result of the wrong size");
  // One pass of the layers: C's and H's layer parts apart, then each identity.
  std::vector<cplx> parts(2 * rows, cplx(0.0));
  if (!column_double_.empty() || !column_single_.empty())
    layers_->apply_columns(x, column_double_, column_single_, parts, scales_id_);
  const std::size_t first = layers_->first_row_column();
  const std::ptrdiff_t count = std::ptrdiff_t(rows);
#pragma omp parallel for schedule(static)
  for (std::ptrdiff_t i = 0; i < count; ++i) {
    const std::size_t r = std::size_t(i);
    parts[r] += row_value_identity_[r] * x[first + r];
    parts[rows + r] += row_derivative_identity_[r] * x[first + r];
  }
  combine(std::span<const cplx>(parts).first(rows), std::span<const cplx>(parts).subspan(rows), y);
}

std::vector<cplx> RegularisedOperator::diagonal() const {
  throw Error(
      "the regularised Burton-Miller operator has no explicit diagonal (beta S~ H sums over the "
      "whole surface): use -pc_type none");
}

std::vector<cplx> RegularisedOperator::right_hand_side(std::span<const cplx> value,
                                                       std::span<const cplx> derivative) const {
  const std::size_t rows = row_regularised_.size();
  if (value.size() != rows || derivative.size() != rows)
    throw Error("regularised operator: right-hand side parts of the wrong size");
  std::vector<cplx> f(rows);
  combine(value, derivative, f);
  return f;
}

}  // namespace fmbem
