#include "fmbem/bem/near_field.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <utility>

#include "fmbem/bem/centroid_grid.hpp"
#include "fmbem/bem/density_reconstruction.hpp"
#include "fmbem/bem/gpu_correction.hpp"
#include "fmbem/bem/hypersingular_integrals.hpp"
#include "fmbem/bem/moment_integrals.hpp"
#include "fmbem/bem/panel_integrals.hpp"
#include "fmbem/core/error.hpp"
#include "fmbem/fmm/gpu_options.hpp"
#include "host_device/regular_integrals.hpp"

namespace fmbem {

RegularPair regular_integrals(const Discretization& disc, double k, std::size_t element,
                              const Vec3& x) {
  const host_device::RegularSums<cplx> sum = host_device::regular_sums<cplx, host_device::kLayers>(
      k, host_device::regular_rule(disc, element), x, Vec3{});
  return {sum.single_layer, sum.double_layer};
}

namespace {

// The rows a pass integrates: an image's are the few near a plane, clustered, so handed out
// one at a time (chunks of 64 would leave most threads idle); the real rows all, in chunks.
struct BusyRows {
  BusyRows(std::span<const std::int64_t> row_start, bool sparse) : chunk(sparse ? 1 : 64) {
    const std::size_t n = row_start.size() - 1;
    for (std::size_t r = 0; r < n; ++r)
      if (!sparse || row_start[r + 1] > row_start[r]) rows.push_back(r);
  }
  std::vector<std::size_t> rows;
  int chunk;
};

// Each element's corner radius and the centroids' grid whose cell is the largest reach.
struct CloseSearch {
  std::vector<double> radius;
  CentroidGrid grid;
};
CloseSearch close_search(const Mesh& mesh, double near_factor) {
  std::vector<double> radius(mesh.size());
  double largest = 0.0;
#pragma omp parallel for schedule(static) reduction(max : largest)
  for (std::size_t e = 0; e < mesh.size(); ++e)
    largest = std::max(largest, radius[e] = element_corner_radius(mesh, e));
  return {std::move(radius), CentroidGrid(mesh.centroids(), near_factor * largest)};
}

}  // namespace

NearFieldPattern near_field_pattern(const Mesh& mesh, RowRange rows, double near_factor) {
  const CloseSearch search = close_search(mesh, near_factor);
  const std::vector<double>& radius = search.radius;
  const CentroidGrid& grid = search.grid;
  const std::vector<Vec3>& centroids = mesh.centroids();
  const std::vector<std::int32_t>& order = grid.cell_order();
  const std::vector<std::size_t> cell_starts = grid.cell_starts();
  const std::int64_t cells = std::int64_t(cell_starts.size()) - 1;
  const auto is_row = [&](std::size_t i) { return i >= rows.begin && i < rows.end; };
  // The rows of one grid cell share their candidates (the 27 cells around it): gathered once a
  // cell with what the test reads, then each row tests them from that compact copy.
  struct Candidate {
    Vec3 centroid;
    double reach;
    std::int32_t element;
  };
  const auto gather = [&](std::int64_t cell, std::vector<Candidate>& candidates) {
    const std::size_t begin = cell_starts[std::size_t(cell)],
                      end = cell_starts[std::size_t(cell) + 1];
    candidates.clear();
    if (std::none_of(order.begin() + std::ptrdiff_t(begin), order.begin() + std::ptrdiff_t(end),
                     [&](std::int32_t i) { return is_row(std::size_t(i)); }))
      return std::span<const std::int32_t>();
    grid.for_each_near(centroids[std::size_t(order[begin])], [&](std::int32_t j) {
      candidates.push_back({centroids[std::size_t(j)], near_factor * radius[std::size_t(j)], j});
    });
    return std::span<const std::int32_t>(order.data() + begin, end - begin);
  };
  const auto close = [&](std::size_t i, const Candidate& c) {
    return std::size_t(c.element) == i || norm(centroids[i] - c.centroid) < c.reach;
  };

  // visit(r, i, candidates) for each row i (the pattern's row r) with its grid cell's
  // candidates, on the threads by cell.
  const auto for_each_row = [&](auto&& visit) {
#pragma omp parallel
    {
      std::vector<Candidate> candidates;
#pragma omp for schedule(dynamic, 16)
      for (std::int64_t cell = 0; cell < cells; ++cell)
        for (std::int32_t element : gather(cell, candidates)) {
          const std::size_t i = std::size_t(element);
          if (is_row(i)) visit(i - rows.begin, i, candidates);
        }
    }
  };

  // Counted, then written in place and sorted.
  NearFieldPattern p;
  p.row_start.assign(rows.size() + 1, 0);
  for_each_row([&](std::size_t r, std::size_t i, const std::vector<Candidate>& candidates) {
    std::int64_t count = 0;
    for (const Candidate& c : candidates) count += close(i, c);
    p.row_start[r + 1] = count;
  });
  for (std::size_t r = 0; r < rows.size(); ++r) p.row_start[r + 1] += p.row_start[r];
  p.columns.resize(std::size_t(p.row_start.back()));
  for_each_row([&](std::size_t r, std::size_t i, const std::vector<Candidate>& candidates) {
    std::int32_t* out = p.columns.data() + p.row_start[r];
    for (const Candidate& c : candidates)
      if (close(i, c)) *out++ = c.element;
    std::sort(p.columns.data() + p.row_start[r], out);
  });
  return p;
}

NearFieldPattern image_pattern(const Mesh& mesh, std::span<const Vec3> points, double near_factor) {
  const CloseSearch search = close_search(mesh, near_factor);
  const std::vector<double>& radius = search.radius;
  const CentroidGrid& grid = search.grid;
  const std::vector<Vec3>& centroids = mesh.centroids();
  const auto for_each_close = [&](std::size_t r, auto&& take) {
    grid.for_each_near(points[r], [&](std::int32_t j) {
      if (norm(points[r] - centroids[std::size_t(j)]) < near_factor * radius[std::size_t(j)])
        take(j);
    });
  };
  NearFieldPattern p;
  p.row_start.assign(points.size() + 1, 0);
#pragma omp parallel for schedule(dynamic, 64)
  for (std::size_t r = 0; r < points.size(); ++r) {
    std::int64_t count = 0;
    for_each_close(r, [&](std::int32_t) { ++count; });
    p.row_start[r + 1] = count;
  }
  for (std::size_t r = 0; r < points.size(); ++r) p.row_start[r + 1] += p.row_start[r];
  p.columns.resize(std::size_t(p.row_start.back()));
#pragma omp parallel for schedule(dynamic, 64)
  for (std::size_t r = 0; r < points.size(); ++r) {
    std::int32_t* const first = p.columns.data() + p.row_start[r];
    std::int32_t* out = first;
    for_each_close(r, [&](std::int32_t j) { *out++ = j; });
    std::sort(first, out);
  }
  return p;
}

NearFieldPattern restrict_pattern(const Mesh& mesh, RowRange rows, const NearFieldPattern& wider,
                                  double near_factor, std::span<const Vec3> row_points) {
  // The same test as near_field_pattern's on the wider pattern's pairs (a superset), in order.
  std::vector<double> radius(mesh.size());
#pragma omp parallel for schedule(static)
  for (std::size_t e = 0; e < mesh.size(); ++e) radius[e] = element_corner_radius(mesh, e);
  const std::size_t n_rows = rows.size();
  // Row points given: those of an image's rows, which have no self element.
  const auto close = [&](std::size_t i, std::int32_t j) {
    if (!row_points.empty())
      return norm(row_points[i - rows.begin] - mesh.centroids()[j]) < near_factor * radius[j];
    return std::size_t(j) == i ||
           norm(mesh.centroids()[i] - mesh.centroids()[j]) < near_factor * radius[j];
  };
  NearFieldPattern p;
  p.row_start.assign(n_rows + 1, 0);
#pragma omp parallel for schedule(static)
  for (std::size_t r = 0; r < n_rows; ++r) {
    std::int64_t count = 0;
    for (std::int64_t at = wider.row_start[r]; at < wider.row_start[r + 1]; ++at)
      count += close(rows.begin + r, wider.columns[std::size_t(at)]);
    p.row_start[r + 1] = count;
  }
  for (std::size_t r = 0; r < n_rows; ++r) p.row_start[r + 1] += p.row_start[r];
  p.columns.resize(std::size_t(p.row_start.back()));
#pragma omp parallel for schedule(static)
  for (std::size_t r = 0; r < n_rows; ++r) {
    std::int32_t* out = p.columns.data() + p.row_start[r];
    for (std::int64_t at = wider.row_start[r]; at < wider.row_start[r + 1]; ++at)
      if (close(rows.begin + r, wider.columns[std::size_t(at)]))
        *out++ = wider.columns[std::size_t(at)];
  }
  return p;
}

NearFieldPattern folded_pattern(const NearFieldPattern& refined,
                                const DensityReconstruction& reconstruction) {
  const std::size_t rows = refined.row_start.size() - 1;
  NearFieldPattern p;
  p.row_start.assign(rows + 1, 0);
  // Two passes over the rows on the threads, a stamp per element marking those a row already
  // took: the distinct columns counted, then (the offsets known) written in place and sorted.
  // Nothing is gathered in per-thread buffers first: at a million elements the rows hold
  // hundreds of megabytes, and copying them (and zeroing them on one thread) was most of the
  // fold's set-up.
  const auto visit = [&](std::size_t r, std::vector<std::int32_t>& taken, std::int32_t stamp,
                         auto&& take) {
    for (std::int64_t at = refined.row_start[r]; at < refined.row_start[r + 1]; ++at)
      for (const std::int32_t j :
           reconstruction.stencil(std::size_t(refined.columns[std::size_t(at)])))
        if (taken[std::size_t(j)] != stamp) {
          taken[std::size_t(j)] = stamp;
          take(j);
        }
  };
  if (rows > std::size_t(std::numeric_limits<std::int32_t>::max() / 2))
    throw Error("near-field correction: too many rows for one pattern");
#pragma omp parallel
  {
    std::vector<std::int32_t> taken(reconstruction.size(), -1);  // the last stamp that took it
#pragma omp for schedule(dynamic, 256)
    for (std::size_t r = 0; r < rows; ++r) {
      std::int64_t count = 0;
      visit(r, taken, std::int32_t(r), [&](std::int32_t) { ++count; });
      p.row_start[r + 1] = count;
    }
#pragma omp single
    {
      for (std::size_t r = 0; r < rows; ++r) p.row_start[r + 1] += p.row_start[r];
      p.columns.resize(std::size_t(p.row_start.back()));
    }
#pragma omp for schedule(dynamic, 256)
    for (std::size_t r = 0; r < rows; ++r) {
      std::int32_t* const first = p.columns.data() + p.row_start[r];
      std::int32_t* out = first;
      visit(r, taken, std::int32_t(rows + r), [&](std::int32_t j) { *out++ = j; });
      std::sort(first, out);
    }
  }
  return p;
}

NearFieldCorrection::NearFieldCorrection(const Discretization& disc, fmm::Wavenumber wavenumber,
                                         RowRange rows, const NearFieldOptions& options,
                                         LayerCoupling coupling,
                                         const DensityReconstruction* reconstruction,
                                         const NearFieldPattern* refined_given)
    : NearFieldCorrection(disc, wavenumber, rows, options, coupling, reconstruction, refined_given,
                          0) {
  // The images' close pairs: each image's rows (the collocation points reflected) against the
  // real elements, signed and added to the same rows. Formed on the CPU (only rows near a plane
  // have any); with the entries on the GPU they are uploaded beside the real rows' there.
  pairs_ = columns_.size();
  const ImagePlanes& planes = disc.mesh().image_planes();
  if (planes.empty()) return;
  // The images summed apart first (their patterns are small), then merged into the real rows'
  // once.
  NearFieldOptions on_cpu = options;
  on_cpu.gpu = false;
  NearFieldCorrection images(rows, outputs_);
  for (std::size_t g = 1; g < planes.images(); ++g)
    images.add_image(
        NearFieldCorrection(disc, wavenumber, rows, on_cpu, coupling, reconstruction, nullptr, g),
        options.image_weight(planes, g));
  pairs_ += images.columns_.size();
  if (gpu_)
    keep_images_beside(std::move(images));
  else
    add_image(images, 1.0);
}

NearFieldCorrection::NearFieldCorrection(const Discretization& disc, fmm::Wavenumber wavenumber,
                                         RowRange rows, const NearFieldOptions& options,
                                         LayerCoupling coupling,
                                         const DensityReconstruction* reconstruction,
                                         const NearFieldPattern* refined_given, std::size_t image)
    : rows_(rows), outputs_(coupling.outputs()) {
  if (options.gpu && image > 0)
    throw Error("the near-field correction of an image on the GPU (a defect: please report it)");
  if (!(options.near_factor >= 1.0))
    throw Error("-bem_near_factor must be at least 1 (it is " +
                std::to_string(options.near_factor) + ")");
  const bool screened = wavenumber.imaginary;
  const double k = wavenumber.magnitude;
  if (screened && (reconstruction || coupling.normal_derivatives()))
    throw Error(
        "the near-field correction of the screened kernel: S and D with the constant "
        "read alone");
  const Mesh& mesh = disc.mesh();
  const std::size_t outputs = std::size_t(outputs_);
  self_single_.resize(outputs * rows.size());
  self_double_.resize(outputs * rows.size());
  const GaussLegendre angular(options.angular_points);
  set_targets(mesh, image);
  const auto search = [&](double factor) {
    return image == 0 ? near_field_pattern(mesh, rows, factor)
                      : image_pattern(mesh, target_points_, factor);
  };
  if (reconstruction) {
    std::optional<NearFieldPattern> searched;
    if (!refined_given) searched = search(std::max(options.near_factor, options.refined_factor));
    const NearFieldPattern& refined = refined_given ? *refined_given : *searched;
    const NearFieldPattern pattern =
        restrict_pattern(mesh, rows, refined, options.near_factor, target_points_);
    NearFieldPattern folded = folded_pattern(refined, *reconstruction);
    if (options.gpu) {
      fmm::require_gpu("the near-field correction on the GPU");
#if FMBEM_HAVE_CUDA
      gpu_ = make_gpu_near_field_correction(disc, k, rows, folded, pattern, refined, angular,
                                            GaussLegendre(kMomentRadialPoints), coupling,
                                            *reconstruction, options.gpu_chunk_pairs);
      gpu_->download_self_terms(self_single_, self_double_);
#endif
    }
    row_start_ = std::move(folded.row_start);
    columns_ = std::move(folded.columns);
    if (!options.gpu)
      fold_reconstruction(disc, k, pattern, refined, angular, coupling, *reconstruction);
    return;
  }
  NearFieldPattern pattern = search(options.near_factor);
  row_start_ = std::move(pattern.row_start);
  columns_ = std::move(pattern.columns);

  // Pass 2: accurate minus regular integrals, on the GPU or here.
  const bool burton_miller = coupling.normal_derivatives();
  if (options.gpu) {
    fmm::require_gpu("the near-field correction on the GPU");
#if FMBEM_HAVE_CUDA
    gpu_ = make_gpu_near_field_correction(disc, wavenumber, rows, row_start_, columns_, angular,
                                          coupling);
    gpu_->download_self_terms(self_single_, self_double_);
#endif
    return;
  }
  const std::size_t nonzeros = columns_.size();
  single_.resize(outputs * nonzeros);
  double_.resize(outputs * nonzeros);
  const BusyRows busy(row_start_, image > 0);
#pragma omp parallel for schedule(dynamic, busy.chunk)
  for (std::size_t b = 0; b < busy.rows.size(); ++b) {
    const std::size_t r = busy.rows[b], i = rows.begin + r;
    const Vec3& x = target_point(mesh, r);
    const Vec3& n_x = target_normal(mesh, r);
    for (std::int64_t at = row_start_[r]; at < row_start_[r + 1]; ++at) {
      const std::size_t j = std::size_t(columns_[std::size_t(at)]);
      const Vec3 &a = mesh.corner(j, 0), &b = mesh.corner(j, 1), &c = mesh.corner(j, 2);
      const host_device::RegularRule rule = host_device::regular_rule(disc, j);
      if (burton_miller) {
        const HypersingularIntegrals exact = hypersingular_integrals(k, a, b, c, x, n_x, angular);
        const host_device::RegularSums<cplx> regular =
            host_device::regular_sums<cplx, host_device::kLayers | host_device::kNormalDerivatives>(
                k, rule, x, n_x);
        for (std::size_t o = 0; o < outputs; ++o) {
          const cplx v = coupling.value_weight(int(o)), w = coupling.derivative_weight(int(o));
          const cplx exact_single = v * exact.single_layer + w * exact.adjoint_double_layer;
          const cplx exact_double = v * exact.double_layer + w * exact.hypersingular;
          single_[o * nonzeros + std::size_t(at)] =
              exact_single - (v * regular.single_layer + w * regular.adjoint_double_layer);
          double_[o * nonzeros + std::size_t(at)] =
              exact_double - (v * regular.double_layer + w * regular.hypersingular);
          if (j == i && image == 0) {
            self_single_[o * rows.size() + r] = exact_single;
            self_double_[o * rows.size() + r] = exact_double;
          }
        }
      } else {
        const PanelIntegrals exact = screened ? screened_panel_integrals(k, a, b, c, x, angular)
                                              : panel_integrals(k, a, b, c, x, angular);
        const host_device::RegularSums<cplx> regular =
            screened
                ? host_device::regular_sums<cplx, host_device::kLayers | host_device::kScreened>(
                      k, rule, x, n_x)
                : host_device::regular_sums<cplx, host_device::kLayers>(k, rule, x, n_x);
        single_[std::size_t(at)] = exact.single_layer - regular.single_layer;
        double_[std::size_t(at)] = exact.double_layer - regular.double_layer;
        if (j == i && image == 0) {
          self_single_[r] = exact.single_layer;
          self_double_[r] = exact.double_layer;
        }
      }
    }
  }
}

void NearFieldCorrection::fold_reconstruction(const Discretization& disc, double k,
                                              const NearFieldPattern& close,
                                              const NearFieldPattern& refined,
                                              const GaussLegendre& angular,
                                              const LayerCoupling& coupling,
                                              const DensityReconstruction& reconstruction) {
  const Mesh& mesh = disc.mesh();
  const RowRange rows = rows_;
  const std::size_t outputs = std::size_t(outputs_), nonzeros = columns_.size();
  // The pattern (row_start_, columns_) is folded_pattern's.
  single_.assign(outputs * nonzeros, 0.0);
  double_.assign(outputs * nonzeros, 0.0);

  // Pass 2: per close or refined pair the constant entries as without a reconstruction, and the
  // monomials' accurate minus regular integrals times R's rows, added at the stencil's columns;
  // "accurate" is semi-analytic for the close pairs, the refined rule beyond them.
  const GaussLegendre radial(kMomentRadialPoints);
  const bool burton_miller = coupling.normal_derivatives();
  constexpr unsigned kFolded = host_device::kLayers | host_device::kMoments;
  constexpr unsigned kFoldedBurtonMiller = kFolded | host_device::kNormalDerivatives;
  const BusyRows busy(refined.row_start, !target_points_.empty());
#pragma omp parallel
  {
    // Where each stencil column of the pair's element sits in the row, found once a pair.
    std::vector<std::size_t> stencil_at;
#pragma omp for schedule(dynamic, busy.chunk)
    for (std::size_t b = 0; b < busy.rows.size(); ++b) {
      const std::size_t r = busy.rows[b];
      const std::span<const std::int32_t> local(columns_.data() + row_start_[r],
                                                columns_.data() + row_start_[r + 1]);
      // An image's rows have no element of their own (no diagonal).
      const std::size_t i = target_points_.empty() ? rows.begin + r : mesh.size();
      const Vec3& x = target_point(mesh, r);
      const Vec3& n_x = target_normal(mesh, r);
      const auto position = [&](std::size_t j) {
        return std::size_t(row_start_[r]) +
               std::size_t(std::lower_bound(local.begin(), local.end(), std::int32_t(j)) -
                           local.begin());
      };
      cplx diagonal[2] = {};
      // Both patterns' rows are ascending: a close element is met in `refined` in order.
      std::int64_t next_close = close.row_start[r];
      for (std::int64_t at = refined.row_start[r]; at < refined.row_start[r + 1]; ++at) {
        const std::size_t l = std::size_t(refined.columns[std::size_t(at)]);
        const Vec3 &a = mesh.corner(l, 0), &b = mesh.corner(l, 1), &c = mesh.corner(l, 2);
        const bool is_close = next_close < close.row_start[r + 1] &&
                              std::size_t(close.columns[std::size_t(next_close)]) == l;
        if (is_close) ++next_close;
        HypersingularIntegrals exact;
        MonomialMoments accurate;
        if (is_close) {
          exact = hypersingular_integrals(k, a, b, c, x, n_x, angular);
          accurate =
              monomial_moments(k, a, b, c, reconstruction.origin(l), reconstruction.axis(l, 0),
                               reconstruction.axis(l, 1), x, n_x, exact, angular, radial);
        } else {
          const RefinedIntegrals rule =
              refined_rule_integrals(k, a, b, c, reconstruction.origin(l),
                                     reconstruction.axis(l, 0), reconstruction.axis(l, 1), x, n_x);
          exact = rule.constant;
          accurate = rule.monomials;
        }
        // The regular S, D (D', N with the coupling) and the monomials' D, N in one pass.
        const host_device::RegularRule element_rule = host_device::regular_rule(disc, l);
        const host_device::MonomialFrame frame = host_device::monomial_frame(reconstruction, l);
        const host_device::RegularSums<cplx> regular =
            burton_miller
                ? host_device::regular_sums<cplx, kFoldedBurtonMiller>(k, element_rule, x, n_x,
                                                                       frame)
                : host_device::regular_sums<cplx, kFolded>(k, element_rule, x, n_x, frame);
        const std::size_t own = position(l);
        const MonomialMoments& rule = regular.moments;
        const std::span<const std::int32_t> stencil = reconstruction.stencil(l);
        stencil_at.resize(stencil.size());
        for (std::size_t s = 0; s < stencil.size(); ++s)
          stencil_at[s] = position(std::size_t(stencil[s]));
        for (std::size_t o = 0; o < outputs; ++o) {
          const std::size_t base = o * nonzeros;
          cplx exact_single = exact.single_layer, exact_double = exact.double_layer;
          cplx regular_single = regular.single_layer, regular_double = regular.double_layer;
          // Combined with alpha = 0 the derivatives are not formed; with them, output o is
          // v (S, D) + w (D', N).
          const cplx v = coupling.value_weight(int(o)), w = coupling.derivative_weight(int(o));
          if (burton_miller) {
            exact_single = v * exact_single + w * exact.adjoint_double_layer;
            exact_double = v * exact_double + w * exact.hypersingular;
            regular_single = v * regular_single + w * regular.adjoint_double_layer;
            regular_double = v * regular_double + w * regular.hypersingular;
          }
          single_[base + own] = exact_single - regular_single;
          double_[base + own] += exact_double - regular_double;
          if (l == i) {
            self_single_[o * rows.size() + r] = exact_single;
            diagonal[o] += exact_double;
          }
          for (int t = 0; t < DensityReconstruction::kTerms; ++t) {
            const cplx accurate_t = v * accurate.double_layer[t] + w * accurate.hypersingular[t];
            const cplx entry = accurate_t - v * rule.double_layer[t] - w * rule.hypersingular[t];
            const std::span<const double> coefficients = reconstruction.coefficients(l, t);
            for (std::size_t s = 0; s < stencil.size(); ++s) {
              double_[base + stencil_at[s]] += entry * coefficients[s];
              if (std::size_t(stencil[s]) == i) diagonal[o] += accurate_t * coefficients[s];
            }
          }
        }
      }
      for (std::size_t o = 0; o < outputs; ++o) self_double_[o * rows.size() + r] = diagonal[o];
    }
  }
}

void NearFieldCorrection::set_targets(const Mesh& mesh, std::size_t image) {
  if (image == 0) return;
  const ImagePlanes& planes = mesh.image_planes();
  target_points_.resize(rows_.size());
  target_normals_.resize(rows_.size());
  for (std::size_t r = 0; r < rows_.size(); ++r) {
    target_points_[r] = planes.reflect(image, mesh.centroids()[rows_.begin + r]);
    target_normals_[r] = planes.reflect_direction(image, mesh.normals()[rows_.begin + r]);
  }
}

namespace {

// The union of two CSR patterns of the same rows (each row's columns ascending), and where each
// entry of a and of b lands in it.
struct MergedPattern {
  std::vector<std::int64_t> row_start;
  UninitializedVector<std::int32_t> columns;
  std::vector<std::int64_t> position_a, position_b;
};
MergedPattern merge_patterns(std::span<const std::int64_t> a_start,
                             std::span<const std::int32_t> a_columns,
                             std::span<const std::int64_t> b_start,
                             std::span<const std::int32_t> b_columns) {
  const std::size_t rows = a_start.size() - 1;
  MergedPattern m;
  m.row_start.assign(rows + 1, 0);
  m.position_a.resize(a_columns.size());
  m.position_b.resize(b_columns.size());
  // Counted, then written: two passes of the same walk.
  for (int pass = 0; pass < 2; ++pass) {
    if (pass == 1) m.columns.resize(std::size_t(m.row_start[rows]));
#pragma omp parallel for schedule(dynamic, 256)
    for (std::size_t r = 0; r < rows; ++r) {
      // Pass 0 counts the row's entries (no row reads another's start).
      std::int64_t a = a_start[r], b = b_start[r], at = pass == 0 ? 0 : m.row_start[r];
      while (a < a_start[r + 1] || b < b_start[r + 1]) {
        const std::int32_t ca = a < a_start[r + 1] ? a_columns[std::size_t(a)] : INT32_MAX;
        const std::int32_t cb = b < b_start[r + 1] ? b_columns[std::size_t(b)] : INT32_MAX;
        if (pass == 1) {
          m.columns[std::size_t(at)] = std::min(ca, cb);
          if (ca <= cb) m.position_a[std::size_t(a)] = at;
          if (cb <= ca) m.position_b[std::size_t(b)] = at;
        }
        a += ca <= cb;
        b += cb <= ca;
        ++at;
      }
      if (pass == 0) m.row_start[r + 1] = at;
    }
    if (pass == 0)
      for (std::size_t r = 0; r < rows; ++r) m.row_start[r + 1] += m.row_start[r];
  }
  return m;
}

// Output-major entries (outputs x positions.size()) scattered into outputs x nonzeros, times
// weight, added.
void scatter_add(std::span<const cplx> from, std::span<const std::int64_t> positions,
                 std::size_t outputs, double weight, std::size_t nonzeros, std::vector<cplx>& to) {
  // Each part's positions are distinct: its entries land apart.
  for (std::size_t o = 0; o < outputs; ++o)
#pragma omp parallel for schedule(static)
    for (std::size_t k = 0; k < positions.size(); ++k)
      to[o * nonzeros + std::size_t(positions[k])] += weight * from[o * positions.size() + k];
}

}  // namespace

NearFieldCorrection::NearFieldCorrection(RowRange rows, int outputs)
    : rows_(rows), row_start_(rows.size() + 1, 0), outputs_(outputs) {}

void NearFieldCorrection::add_image(const NearFieldCorrection& image, double sign) {
  MergedPattern m = merge_patterns(row_start_, columns_, image.row_start_, image.columns_);
  const std::size_t outputs = std::size_t(outputs_), nonzeros = m.columns.size();
  std::vector<cplx> single(outputs * nonzeros, 0.0), dbl(outputs * nonzeros, 0.0);
  scatter_add(single_, m.position_a, outputs, 1.0, nonzeros, single);
  scatter_add(double_, m.position_a, outputs, 1.0, nonzeros, dbl);
  scatter_add(image.single_, m.position_b, outputs, sign, nonzeros, single);
  scatter_add(image.double_, m.position_b, outputs, sign, nonzeros, dbl);
  row_start_ = std::move(m.row_start);
  columns_ = std::move(m.columns);
  single_ = std::move(single);
  double_ = std::move(dbl);
}

void NearFieldCorrection::keep_images_beside(NearFieldCorrection&& images) {
#if FMBEM_HAVE_CUDA
  gpu_images_ = upload_near_field_correction(rows_, images.row_start_, images.columns_,
                                             images.single_, images.double_, outputs_);
#endif
  image_row_start_ = std::move(images.row_start_);
  image_columns_ = std::move(images.columns_);
  image_single_ = std::move(images.single_);
  image_double_ = std::move(images.double_);
}

void NearFieldCorrection::make_union() const {
  if (!gpu_images_) return;
  std::call_once(union_made_, [&] {
    MergedPattern m = merge_patterns(row_start_, columns_, image_row_start_, image_columns_);
    row_start_ = std::move(m.row_start);
    columns_ = std::move(m.columns);
    own_positions_ = std::move(m.position_a);
    image_positions_ = std::move(m.position_b);
  });
}

NearFieldCorrection::~NearFieldCorrection() = default;

void NearFieldCorrection::download_entries() const {
  if (!gpu_) return;
  make_union();
  std::call_once(downloaded_, [&] {
    const std::size_t outputs = std::size_t(outputs_), nonzeros = columns_.size();
    if (!gpu_images_) {
      single_.resize(outputs * nonzeros);
      double_.resize(outputs * nonzeros);
      gpu_->download_entries(single_, double_);
      return;
    }
    // With image planes: the real rows' entries and the images' into the union's pattern.
    std::vector<cplx> own_single(outputs * own_positions_.size()),
        own_double(outputs * own_positions_.size());
    gpu_->download_entries(own_single, own_double);
    single_.assign(outputs * nonzeros, 0.0);
    double_.assign(outputs * nonzeros, 0.0);
    scatter_add(own_single, own_positions_, outputs, 1.0, nonzeros, single_);
    scatter_add(own_double, own_positions_, outputs, 1.0, nonzeros, double_);
    scatter_add(image_single_, image_positions_, outputs, 1.0, nonzeros, single_);
    scatter_add(image_double_, image_positions_, outputs, 1.0, nonzeros, double_);
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

void NearFieldCorrection::mark_columns(std::span<char> marks) const {
  for (std::int32_t c : columns_) marks[std::size_t(c)] = 1;
  for (std::int32_t c : image_columns_) marks[std::size_t(c)] = 1;
}

void NearFieldCorrection::renumber_columns(const ColumnEntries& columns) {
  if (!own_positions_.empty())
    throw Error("near-field correction: columns renumbered after the union was read (a defect)");
  const auto renumber = [&](std::span<std::int32_t> part) {
    for (std::int32_t& column : part) {
      const std::int32_t renumbered = columns(std::size_t(column));
      if (renumbered < 0)
        throw Error("near-field correction: column " + std::to_string(column) +
                    " is not in the column space");
      column = renumbered;
    }
  };
  renumber(columns_);
  renumber(image_columns_);
  if (gpu_) gpu_->renumber_columns(columns_, columns.elements());
  if (gpu_images_) gpu_images_->renumber_columns(image_columns_, columns.elements());
}

void NearFieldCorrection::apply_device(const cplx* device_double_density,
                                       const cplx* device_single_density, cplx* device_y) const {
  if (!gpu_) throw Error("near-field correction: apply_device needs the entries on the GPU");
  gpu_->apply_device(device_double_density, device_single_density, device_y);
  if (gpu_images_)
    gpu_images_->apply_device(device_double_density, device_single_density, device_y);
}

std::size_t NearFieldCorrection::device_bytes() const {
  return (gpu_ ? gpu_->device_bytes() : 0) + (gpu_images_ ? gpu_images_->device_bytes() : 0);
}

void NearFieldCorrection::add_to(std::span<const cplx> double_density,
                                 std::span<const cplx> single_density, std::span<cplx> y) const {
  download_entries();
  const bool with_double = !double_density.empty(), with_single = !single_density.empty();
  const std::size_t nonzeros = columns_.size();
  for (std::size_t o = 0; o < std::size_t(outputs_); ++o) {
    const cplx* dbl = double_.data() + o * nonzeros;
    const cplx* single = single_.data() + o * nonzeros;
    cplx* out = y.data() + o * rows_.size();
#pragma omp parallel for schedule(static)
    for (std::size_t r = 0; r < rows_.size(); ++r) {
      cplx sum{};
      for (std::int64_t at = row_start_[r]; at < row_start_[r + 1]; ++at) {
        const std::size_t j = std::size_t(columns_[at]);
        if (with_double) sum += dbl[at] * double_density[j];
        if (with_single) sum += single[at] * single_density[j];
      }
      out[r] += sum;
    }
  }
}

std::size_t NearFieldCorrection::memory_bytes() const {
  return (row_start_.size() + image_row_start_.size() + own_positions_.size() +
          image_positions_.size()) *
             sizeof(std::int64_t) +
         (columns_.size() + image_columns_.size()) * sizeof(std::int32_t) +
         (single_.size() + double_.size() + self_single_.size() + self_double_.size() +
          image_single_.size() + image_double_.size()) *
             sizeof(cplx);
}

}  // namespace fmbem
