#pragma once
#include <vector>

namespace fmbem {

// A rule's nodes and weights as code both compilers build reads them (the device has no
// std::vector); the arrays are the host's or their copy on the device.
struct GaussLegendreView {
  const double* nodes = nullptr;
  const double* weights = nullptr;
  int size = 0;
};

// n-point Gauss-Legendre rule on [-1, 1] (nodes from Boost.Math).
struct GaussLegendre {
  explicit GaussLegendre(int n);
  std::vector<double> nodes, weights;
  std::size_t size() const { return nodes.size(); }
  GaussLegendreView view() const { return {nodes.data(), weights.data(), int(size())}; }
};

}  // namespace fmbem
