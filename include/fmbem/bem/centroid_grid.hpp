#pragma once
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <vector>

#include "fmbem/mesh/mesh.hpp"
#include "fmbem/mesh/neighbourhoods.hpp"  // element_corner_radius

namespace fmbem {

// Element centroids sorted by their cell of a uniform grid whose cell is the largest search
// radius (enlarged by 1e-9, so that rounding in the cell index cannot lose a pair), z fastest:
// the elements whose centroid lies within one cell of a point are in its 27 surrounding cells,
// which are 9 runs of 3 cells consecutive in z, each a contiguous range of the sorted array
// found by binary search. A sort and two arrays instead of a hash map of vectors: at N = 1.3M
// the map cost seconds. Used by the near-field pattern (collocation points) and by the field
// evaluation (points off the surface).
class CentroidGrid {
 public:
  CentroidGrid(const std::vector<Vec3>& centroids, double cell);

  // The elements in cell order: neighbours in this order share cells, so that visiting rows
  // in it keeps the binary searches in cache.
  const std::vector<std::int32_t>& cell_order() const { return elements_; }
  // Where each occupied cell's elements start in cell_order(), then its size: the elements of
  // one cell share the 27 cells around it, so for_each_near of any of them visits the same.
  std::vector<std::size_t> cell_starts() const;

  // Calls visit(j) for every element j in the 27 cells around x (a superset of those whose
  // centroid is within one cell of x). Points more than one cell outside the centroids' box
  // have none.
  template <class Visit>
  void for_each_near(const Vec3& x, Visit&& visit) const {
    if (keys_.empty() || x.x < low_.x - cell_ || x.y < low_.y - cell_ || x.z < low_.z - cell_ ||
        x.x > high_.x + cell_ || x.y > high_.y + cell_ || x.z > high_.z + cell_)
      return;
    const auto [ix, iy, iz] = index(x);
    const std::int64_t z0 = std::max<std::int64_t>(iz - 1, 0);
    const std::int64_t z1 = std::min<std::int64_t>(iz + 1, dims_[2] - 1);
    for (std::int64_t gx = std::max<std::int64_t>(ix - 1, 0);
         gx <= std::min<std::int64_t>(ix + 1, dims_[0] - 1); ++gx)
      for (std::int64_t gy = std::max<std::int64_t>(iy - 1, 0);
           gy <= std::min<std::int64_t>(iy + 1, dims_[1] - 1); ++gy) {
        const auto first = std::lower_bound(keys_.begin(), keys_.end(), key(gx, gy, z0));
        const auto last = std::upper_bound(first, keys_.end(), key(gx, gy, z1));
        for (auto p = first; p != last; ++p) visit(elements_[std::size_t(p - keys_.begin())]);
      }
  }

 private:
  // The cell of x, clamped to the grid.
  std::array<std::int64_t, 3> index(const Vec3& x) const {
    const auto at = [&](double v, int d) {
      return std::clamp(std::int64_t(std::floor(v / cell_)), std::int64_t(0), dims_[d] - 1);
    };
    return {at(x.x - low_.x, 0), at(x.y - low_.y, 1), at(x.z - low_.z, 2)};
  }
  std::uint64_t key(std::int64_t x, std::int64_t y, std::int64_t z) const {
    return std::uint64_t((x * dims_[1] + y) * dims_[2] + z);
  }
  double cell_;
  Vec3 low_, high_;
  std::array<std::int64_t, 3> dims_{1, 1, 1};
  std::vector<std::uint64_t> keys_;  // ascending
  std::vector<std::int32_t> elements_;
};

}  // namespace fmbem
