#include "fmbem/bem/centroid_grid.hpp"

#include <algorithm>
#include <utility>

#include "fmbem/core/error.hpp"
#include "fmbem/core/parallel_sort.hpp"

namespace fmbem {

CentroidGrid::CentroidGrid(const std::vector<Vec3>& centroids, double cell)
    : cell_(cell * (1.0 + 1e-9)) {
  const std::size_t n = centroids.size();
  if (n == 0) return;
  low_ = high_ = centroids[0];
  for (const Vec3& c : centroids) {
    low_ = {std::min(low_.x, c.x), std::min(low_.y, c.y), std::min(low_.z, c.z)};
    high_ = {std::max(high_.x, c.x), std::max(high_.y, c.y), std::max(high_.z, c.z)};
  }
  for (int d = 0; d < 3; ++d) {
    const double extent = d == 0 ? high_.x - low_.x : d == 1 ? high_.y - low_.y : high_.z - low_.z;
    const double cells = std::floor(extent / cell_) + 1.0;
    // Keys are products of the dimensions: keep them inside 64 bits.
    if (!(cells < double(1 << 21)))
      throw Error("near field: the mesh spans more than 2^21 cells of the near radius");
    dims_[d] = std::int64_t(cells);
  }
  std::vector<std::pair<std::uint64_t, std::int32_t>> entries(n);
#pragma omp parallel for schedule(static)
  for (std::size_t e = 0; e < n; ++e) {
    const auto [ix, iy, iz] = index(centroids[e]);
    entries[e] = {key(ix, iy, iz), std::int32_t(e)};
  }
  // Distinct elements: a total order, the same bits on any thread count.
  parallel_sort(entries.begin(), entries.end());
  keys_.resize(n);
  elements_.resize(n);
  for (std::size_t p = 0; p < n; ++p) {
    keys_[p] = entries[p].first;
    elements_[p] = entries[p].second;
  }
}

std::vector<std::size_t> CentroidGrid::cell_starts() const {
  std::vector<std::size_t> starts;
  for (std::size_t p = 0; p < keys_.size(); ++p)
    if (p == 0 || keys_[p] != keys_[p - 1]) starts.push_back(p);
  starts.push_back(keys_.size());
  return starts;
}

}  // namespace fmbem
