#pragma once
#include <vector>

namespace fmbem {

// n-point Gauss-Legendre rule on [-1, 1] (nodes from Boost.Math).
struct GaussLegendre {
  explicit GaussLegendre(int n);
  std::vector<double> nodes, weights;
  std::size_t size() const { return nodes.size(); }
};

}  // namespace fmbem
