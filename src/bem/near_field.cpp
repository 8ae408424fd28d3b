#include "fmbem/bem/near_field.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <utility>

#include "fmbem/bem/gpu_correction.hpp"
#include "fmbem/bem/hypersingular_integrals.hpp"
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

// Element centroids sorted by their cell of a uniform grid whose cell is the largest search
// radius (enlarged by 1e-9, so that rounding in the cell index cannot lose a pair), z fastest:
// the close elements of a point lie in its 27 surrounding cells, which are 9 runs of 3 cells
// consecutive in z, each a contiguous range of the sorted array found by binary search. A sort
// and two arrays instead of a hash map of vectors: at N = 1.3M the map cost seconds.
class CentroidGrid {
 public:
  CentroidGrid(const std::vector<Vec3>& centroids, double cell) : cell_(cell * (1.0 + 1e-9)) {
    const std::size_t n = centroids.size();
    if (n == 0) return;
    Vec3 high = centroids[0];
    low_ = centroids[0];
    for (const Vec3& c : centroids) {
      low_ = {std::min(low_.x, c.x), std::min(low_.y, c.y), std::min(low_.z, c.z)};
      high = {std::max(high.x, c.x), std::max(high.y, c.y), std::max(high.z, c.z)};
    }
    for (int d = 0; d < 3; ++d) {
      const double extent = d == 0 ? high.x - low_.x : d == 1 ? high.y - low_.y : high.z - low_.z;
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
    std::sort(entries.begin(), entries.end());
    keys_.resize(n);
    elements_.resize(n);
    for (std::size_t p = 0; p < n; ++p) {
      keys_[p] = entries[p].first;
      elements_[p] = entries[p].second;
    }
  }
  // The elements in cell order: neighbours in this order share cells, so that visiting rows
  // in it keeps the binary searches in cache.
  const std::vector<std::int32_t>& cell_order() const { return elements_; }
  template <class Visit>
  void for_each_near(const Vec3& x, Visit&& visit) const {
    if (keys_.empty()) return;
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
  // The cell of x, clamped to the grid (centroids are inside it).
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
  Vec3 low_;
  std::array<std::int64_t, 3> dims_{1, 1, 1};
  std::vector<std::uint64_t> keys_;  // ascending
  std::vector<std::int32_t> elements_;
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

NearFieldPattern near_field_pattern(const Mesh& mesh, RowRange rows, double near_factor) {
  const std::size_t n = mesh.size();
  std::vector<double> radius(n);
  double largest = 0.0;
  for (std::size_t e = 0; e < n; ++e)
    largest = std::max(largest, radius[e] = corner_radius(mesh, e));
  const CentroidGrid grid(mesh.centroids(), near_factor * largest);
  const auto close = [&](std::size_t i, std::int32_t j) {
    return std::size_t(j) == i ||
           norm(mesh.centroids()[i] - mesh.centroids()[j]) < near_factor * radius[j];
  };

  // Counted, then written in place and sorted; rows visited in cell order.
  NearFieldPattern p;
  p.row_start.assign(rows.size() + 1, 0);
  const std::vector<std::int32_t>& order = grid.cell_order();
#pragma omp parallel for schedule(dynamic, 1024)
  for (std::size_t o = 0; o < n; ++o) {
    const std::size_t i = std::size_t(order[o]);
    if (i < rows.begin || i >= rows.end) continue;
    std::int64_t count = 0;
    grid.for_each_near(mesh.centroids()[i], [&](std::int32_t j) { count += close(i, j); });
    p.row_start[i - rows.begin + 1] = count;
  }
  for (std::size_t r = 0; r < rows.size(); ++r) p.row_start[r + 1] += p.row_start[r];
  p.columns.resize(std::size_t(p.row_start.back()));
#pragma omp parallel for schedule(dynamic, 1024)
  for (std::size_t o = 0; o < n; ++o) {
    const std::size_t i = std::size_t(order[o]);
    if (i < rows.begin || i >= rows.end) continue;
    const std::size_t r = i - rows.begin;
    std::int32_t* out = p.columns.data() + p.row_start[r];
    grid.for_each_near(mesh.centroids()[i], [&](std::int32_t j) {
      if (close(i, j)) *out++ = j;
    });
    std::sort(p.columns.data() + p.row_start[r], out);
  }
  return p;
}

NearFieldCorrection::NearFieldCorrection(const Discretization& disc, double k, RowRange rows,
                                         const NearFieldOptions& options, cplx coupling)
    : rows_(rows) {
  if (!(options.near_factor >= 1.0))
    throw Error("-bem_near_factor must be at least 1 (it is " +
                std::to_string(options.near_factor) + ")");
  const Mesh& mesh = disc.mesh();
  NearFieldPattern pattern = near_field_pattern(mesh, rows, options.near_factor);
  row_start_ = std::move(pattern.row_start);
  columns_ = std::move(pattern.columns);
  self_single_.resize(rows.size());
  self_double_.resize(rows.size());

  // Pass 2: accurate minus regular integrals, on the GPU or here.
  const GaussLegendre angular(options.angular_points);
  const bool burton_miller = coupling != cplx(0.0);
  if (options.gpu && !burton_miller) {
    gpu_ = std::make_unique<GpuNearFieldCorrection>(disc, k, rows, row_start_, columns_, angular);
    gpu_->download_self_terms(self_single_, self_double_);
    return;
  }
  single_.resize(columns_.size());
  double_.resize(columns_.size());
#pragma omp parallel for schedule(dynamic, 64)
  for (std::size_t i = rows.begin; i < rows.end; ++i) {
    const std::size_t r = i - rows.begin;
    const Vec3& x = mesh.centroids()[i];
    const Vec3& n_x = mesh.normals()[i];
    for (std::int64_t at = row_start_[r]; at < row_start_[r + 1]; ++at) {
      const std::size_t j = std::size_t(columns_[std::size_t(at)]);
      const Vec3 &a = mesh.corner(j, 0), &b = mesh.corner(j, 1), &c = mesh.corner(j, 2);
      const RegularPair regular = regular_integrals(disc, k, j, x);
      cplx exact_single, exact_double, regular_single = regular.single_layer,
                                       regular_double = regular.double_layer;
      if (burton_miller) {
        const HypersingularIntegrals exact = hypersingular_integrals(k, a, b, c, x, n_x, angular);
        const RegularBurtonMiller extra = regular_burton_miller_integrals(disc, k, j, x, n_x);
        exact_single = exact.single_layer + coupling * exact.adjoint_double_layer;
        exact_double = exact.double_layer + coupling * exact.hypersingular;
        regular_single += coupling * extra.adjoint_double_layer;
        regular_double += coupling * extra.hypersingular;
      } else {
        const PanelIntegrals exact = panel_integrals(k, a, b, c, x, angular);
        exact_single = exact.single_layer;
        exact_double = exact.double_layer;
      }
      single_[std::size_t(at)] = exact_single - regular_single;
      double_[std::size_t(at)] = exact_double - regular_double;
      if (j == i) {
        self_single_[r] = exact_single;
        self_double_[r] = exact_double;
      }
    }
  }
  if (options.gpu) {
    // The SpMV resident on the GPU; the host copies stay (add_to and the accessors), so the
    // lazy download (download_entries) is marked done without copying anything back.
    gpu_ = std::make_unique<GpuNearFieldCorrection>(rows, row_start_, columns_, single_, double_,
                                                    self_single_, self_double_);
    std::call_once(downloaded_, [] {});
  }
}

NearFieldCorrection::~NearFieldCorrection() = default;

void NearFieldCorrection::download_entries() const {
  if (!gpu_) return;
  std::call_once(downloaded_, [&] {
    single_.resize(columns_.size());
    double_.resize(columns_.size());
    gpu_->download_entries(single_, double_);
  });
}

std::span<const cplx> NearFieldCorrection::single_entries() const {
  download_entries();
  return single_;
}

std::span<const cplx> NearFieldCorrection::double_entries() const {
  download_entries();
  return double_;
}

void NearFieldCorrection::apply_device(const cplx* device_double_density,
                                       const cplx* device_single_density, cplx* device_y) const {
  if (!gpu_) throw Error("near-field correction: apply_device needs the entries on the GPU");
  gpu_->apply_device(device_double_density, device_single_density, device_y);
}

std::size_t NearFieldCorrection::device_bytes() const { return gpu_ ? gpu_->device_bytes() : 0; }

void NearFieldCorrection::add_to(std::span<const cplx> double_density,
                                 std::span<const cplx> single_density, std::span<cplx> y) const {
  download_entries();
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
