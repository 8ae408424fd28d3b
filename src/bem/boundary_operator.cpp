#include "fmbem/bem/boundary_operator.hpp"

namespace fmbem {

void BoundaryOperator::apply(std::span<const cplx> x, std::span<cplx> y) const {
  const auto scaled = [&](cplx factor) {
    std::vector<cplx> v;
    if (factor != cplx(0.0)) {
      v.resize(x.size());
      for (std::size_t j = 0; j < x.size(); ++j) v[j] = factor * x[j];
    }
    return v;
  };
  const std::vector<cplx> double_density = scaled(coefficients_.double_layer);
  const std::vector<cplx> single_density = scaled(coefficients_.single_layer);
  if (double_density.empty() && single_density.empty())
    std::fill(y.begin(), y.end(), cplx(0.0));
  else
    layers_->apply(double_density, single_density, y);
  const std::size_t rows = layers_->rows().size(), first = layers_->first_row_column();
  for (std::size_t r = 0; r < rows; ++r) y[r] += coefficients_.identity * x[first + r];
}

std::vector<cplx> BoundaryOperator::diagonal() const {
  const auto& s = layers_->single_layer_diagonal();
  const auto& d = layers_->double_layer_diagonal();
  std::vector<cplx> diag(s.size());
  for (std::size_t r = 0; r < diag.size(); ++r)
    diag[r] = coefficients_.identity + coefficients_.double_layer * d[r] +
              coefficients_.single_layer * s[r];
  return diag;
}

}  // namespace fmbem
