#include "fmbem/bem/near_field.hpp"

#include <algorithm>
#include <cmath>
#include <unordered_map>

#include "fmbem/bem/panel_integrals.hpp"
#include "fmbem/core/error.hpp"
#include "fmbem/kernel/kernel.hpp"

namespace fmbem {
namespace {

double corner_radius(const Mesh& mesh, std::size_t e) {
  const Vec3& c = mesh.centroids()[e];
  return std::max(
      {norm(mesh.corner(e, 0) - c), norm(mesh.corner(e, 1) - c), norm(mesh.corner(e, 2) - c)});
}

// Uniform bucket grid of element centroids, cell size = the largest search
// radius, so the close elements of a point lie in its 27 surrounding cells.
class CentroidGrid {
 public:
  CentroidGrid(const std::vector<Vec3>& centroids, double cell) : cell_(cell) {
    for (std::size_t e = 0; e < centroids.size(); ++e)
      cells_[key(centroids[e])].push_back(std::int32_t(e));
  }
  template <class Visit>
  void for_each_near(const Vec3& x, Visit&& visit) const {
    const auto [ix, iy, iz] = index(x);
    for (int dx = -1; dx <= 1; ++dx)
      for (int dy = -1; dy <= 1; ++dy)
        for (int dz = -1; dz <= 1; ++dz) {
          const auto it = cells_.find(pack(ix + dx, iy + dy, iz + dz));
          if (it != cells_.end())
            for (std::int32_t e : it->second) visit(e);
        }
  }

 private:
  std::array<std::int64_t, 3> index(const Vec3& x) const {
    return {std::int64_t(std::floor(x.x / cell_)), std::int64_t(std::floor(x.y / cell_)),
            std::int64_t(std::floor(x.z / cell_))};
  }
  static std::uint64_t pack(std::int64_t x, std::int64_t y, std::int64_t z) {
    const auto m = [](std::int64_t v) { return std::uint64_t(v + (1 << 20)) & 0x1fffff; };
    return (m(x) << 42) | (m(y) << 21) | m(z);
  }
  std::uint64_t key(const Vec3& x) const {
    const auto [ix, iy, iz] = index(x);
    return pack(ix, iy, iz);
  }
  double cell_;
  std::unordered_map<std::uint64_t, std::vector<std::int32_t>> cells_;
};

}  // namespace

RegularPair regular_integrals(const Discretization& disc, double k, std::size_t element,
                              const Vec3& x) {
  const std::size_t m = disc.points_per_element();
  const Vec3& normal = disc.mesh().normals()[element];
  const double coincident = disc.coincidence_radius();
  RegularPair sum{};
  for (std::size_t q = element * m; q < (element + 1) * m; ++q) {
    const Vec3& y = disc.quadrature_points()[q];
    if (norm(y - x) <= coincident) continue;
    const double w = disc.quadrature_weights()[q];
    sum.single_layer += w * green(k, norm(y - x));
    sum.double_layer += w * green_normal_derivative(k, x, y, normal);
  }
  return sum;
}

NearFieldCorrection::NearFieldCorrection(const Discretization& disc, double k, RowRange rows,
                                         const NearFieldOptions& options)
    : rows_(rows) {
  if (!(options.near_factor >= 1.0))
    throw Error("-bem_near_factor must be at least 1 (it is " +
                std::to_string(options.near_factor) + ")");
  const Mesh& mesh = disc.mesh();
  const std::size_t n = mesh.size();
  std::vector<double> radius(n);
  double largest = 0.0;
  for (std::size_t e = 0; e < n; ++e)
    largest = std::max(largest, radius[e] = corner_radius(mesh, e));
  const CentroidGrid grid(mesh.centroids(), options.near_factor * largest);

  // Pass 1: the close elements of each row.
  std::vector<std::vector<std::int32_t>> close(rows.size());
#pragma omp parallel for schedule(dynamic, 256)
  for (std::size_t i = rows.begin; i < rows.end; ++i) {
    const Vec3& x = mesh.centroids()[i];
    auto& list = close[i - rows.begin];
    grid.for_each_near(x, [&](std::int32_t j) {
      if (std::size_t(j) == i || norm(x - mesh.centroids()[j]) < options.near_factor * radius[j])
        list.push_back(j);
    });
    std::sort(list.begin(), list.end());
  }
  row_start_.assign(rows.size() + 1, 0);
  for (std::size_t r = 0; r < rows.size(); ++r)
    row_start_[r + 1] = row_start_[r] + std::int64_t(close[r].size());
  columns_.resize(row_start_.back());
  single_.resize(columns_.size());
  double_.resize(columns_.size());
  self_single_.resize(rows.size());
  self_double_.resize(rows.size());

  // Pass 2: accurate minus regular integrals.
  const GaussLegendre angular(options.angular_points);
#pragma omp parallel for schedule(dynamic, 64)
  for (std::size_t i = rows.begin; i < rows.end; ++i) {
    const std::size_t r = i - rows.begin;
    const Vec3& x = mesh.centroids()[i];
    for (std::size_t c = 0; c < close[r].size(); ++c) {
      const std::size_t j = std::size_t(close[r][c]);
      const PanelIntegrals exact =
          panel_integrals(k, mesh.corner(j, 0), mesh.corner(j, 1), mesh.corner(j, 2), x, angular);
      const RegularPair regular = regular_integrals(disc, k, j, x);
      const std::size_t at = std::size_t(row_start_[r]) + c;
      columns_[at] = std::int32_t(j);
      single_[at] = exact.single_layer - regular.single_layer;
      double_[at] = exact.double_layer - regular.double_layer;
      if (j == i) {
        self_single_[r] = exact.single_layer;
        self_double_[r] = exact.double_layer;
      }
    }
  }
}

void NearFieldCorrection::add_to(std::span<const cplx> double_density,
                                 std::span<const cplx> single_density, std::span<cplx> y) const {
  const bool with_double = !double_density.empty(), with_single = !single_density.empty();
#pragma omp parallel for schedule(static)
  for (std::size_t r = 0; r < rows_.size(); ++r) {
    cplx sum{};
    for (std::int64_t at = row_start_[r]; at < row_start_[r + 1]; ++at) {
      const std::size_t j = std::size_t(columns_[at]);
      if (with_double) sum += double_[at] * double_density[j];
      if (with_single) sum += single_[at] * single_density[j];
    }
    y[r] += sum;
  }
}

std::size_t NearFieldCorrection::memory_bytes() const {
  return row_start_.size() * sizeof(std::int64_t) + columns_.size() * sizeof(std::int32_t) +
         (single_.size() + double_.size() + self_single_.size() + self_double_.size()) *
             sizeof(cplx);
}

}  // namespace fmbem
