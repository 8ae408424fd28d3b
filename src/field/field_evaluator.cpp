#include "fmbem/field/field_evaluator.hpp"

#include <omp.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <limits>
#include <numbers>
#include <numeric>
#include <sstream>

#include "fmbem/bem/centroid_grid.hpp"
#include "fmbem/bem/hypersingular_integrals.hpp"
#include "fmbem/bem/panel_integrals.hpp"
#include "fmbem/bem/point_strengths.hpp"
#include "fmbem/core/error.hpp"
#include "fmbem/field/field_limits.hpp"
#include "fmbem/fmm/direct_sum.hpp"
#include "fmbem/fmm/expansions.hpp"
#include "fmbem/problem/problem.hpp"

namespace fmbem::field {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// The field's FMM raises p up to this where the field points widen the octree; the points beyond
// are summed directly. The set-up grows fast with p (N = 20,480 on 16 cores: 0.37 s at p = 11,
// 2.5 s at p = 21; bench/results/field.md), while the direct sum costs O(N) a point.
constexpr int kMaxRaisedOrder = 24;

// The expansion order of the classification's Laplace FMM: its measured MatMult error 2.6e-3
// (fmm::order_for_tolerance) is far below the margin 1/2 that W needs.
constexpr int kClassificationOrder = 8;

// Solid angle of triangle abc seen from x (Van Oosterom and Strackee), positive when x lies on
// the side the normal (b - a) x (c - a) points away from.
double solid_angle(const Vec3& a0, const Vec3& b0, const Vec3& c0, const Vec3& x) {
  const Vec3 a = a0 - x, b = b0 - x, c = c0 - x;
  const double la = norm(a), lb = norm(b), lc = norm(c);
  return 2.0 * std::atan2(dot(a, cross(b, c)),
                          la * lb * lc + dot(a, b) * lc + dot(a, c) * lb + dot(b, c) * la);
}

// The close elements of a point: those whose centroid c_j is nearer than near_factor * R_j,
// found in CentroidGrid's cells of the largest such radius.
class CloseElementSearch {
 public:
  CloseElementSearch(const Mesh& mesh, double near_factor)
      : mesh_(&mesh),
        factor_(near_factor),
        radius_(radii(mesh)),
        grid_(mesh.centroids(), near_factor * *std::max_element(radius_.begin(), radius_.end())) {}

  double radius(std::size_t element) const { return radius_[element]; }

  // Appends the close elements of x, ascending.
  void close_to(const Vec3& x, std::vector<std::int32_t>& out) const {
    const std::size_t first_out = out.size();
    grid_.for_each_near(x, [&](std::int32_t j) {
      if (norm(x - mesh_->centroids()[std::size_t(j)]) < factor_ * radius_[std::size_t(j)])
        out.push_back(j);
    });
    std::sort(out.begin() + std::ptrdiff_t(first_out), out.end());
  }

 private:
  static std::vector<double> radii(const Mesh& mesh) {
    std::vector<double> r(mesh.size());
    for (std::size_t e = 0; e < r.size(); ++e) r[e] = element_corner_radius(mesh, e);
    return r;
  }

  const Mesh* mesh_;
  double factor_;
  std::vector<double> radius_;
  CentroidGrid grid_;
};

// The collocation points and the targets: the FMM tree splits on both, so that no leaf holds
// more than max_leaf of either (a plane of field points away from the body gets leaves of its
// own size).
std::vector<Vec3> splitting_points(const Discretization& disc, std::span<const Vec3> targets) {
  std::vector<Vec3> split(disc.collocation_points());
  split.insert(split.end(), targets.begin(), targets.end());
  return split;
}

// The points' bounding-box extent (largest side).
double extent(std::span<const Vec3> a, std::span<const Vec3> b) {
  Vec3 low{INFINITY, INFINITY, INFINITY}, high{-INFINITY, -INFINITY, -INFINITY};
  for (const auto& set : {a, b})
    for (const Vec3& p : set) {
      low = {std::min(low.x, p.x), std::min(low.y, p.y), std::min(low.z, p.z)};
      high = {std::max(high.x, p.x), std::max(high.y, p.y), std::max(high.z, p.z)};
    }
  return std::max({high.x - low.x, high.y - low.y, high.z - low.z});
}

// The far-field form of the Gauss-rule sum D u - S q at x (FieldEvaluator's comment): y, normals,
// charges (-w q) and dipoles (w u) per Gauss point, either strength list empty for zero.
cplx far_sum(std::span<const Vec3> y, std::span<const Vec3> normals, std::span<const cplx> charges,
             std::span<const cplx> dipoles, double k, const Vec3& center, const Vec3& x) {
  const Vec3 X = x - center;
  const double R = norm(X);
  cplx sum = 0.0;
  for (std::size_t j = 0; j < y.size(); ++j) {
    const Vec3 rho = y[j] - center, d = X - rho;  // d = x - y_j
    const double r = norm(d);
    const double r_minus_R = (dot(rho, rho) - 2.0 * dot(X, rho)) / (r + R);
    cplx term = charges.empty() ? cplx(0.0) : charges[j];
    if (!dipoles.empty()) term += dipoles[j] * (dot(d, normals[j]) / r) * cplx(1.0 / r, -k);
    sum += std::polar(R / r, k * r_minus_R) * term;
  }
  return std::polar(1.0 / (4.0 * std::numbers::pi * R), k * R) * sum;
}

// The gradient at x of far_sum's sum, term by term in the same far-field form: with d = x - y_j,
// r = |d|, dhat = d / r, G = e^{ikr} / (4 pi r), grad G = G (ik - 1/r) dhat for a charge and, for
// a dipole's dG/dn_y = (dhat . n)(1/r - ik) G,
//   grad = G [n (1/r - ik) / r + (dhat . n) dhat (k^2 + 3ik/r - 3/r^2)].
std::array<cplx, 3> far_gradient(std::span<const Vec3> y, std::span<const Vec3> normals,
                                 std::span<const cplx> charges, std::span<const cplx> dipoles,
                                 double k, const Vec3& center, const Vec3& x) {
  const Vec3 X = x - center;
  const double R = norm(X);
  std::array<cplx, 3> sum{};
  const cplx ik(0.0, k);
  for (std::size_t j = 0; j < y.size(); ++j) {
    const Vec3 rho = y[j] - center, d = X - rho;
    const double r = norm(d);
    const Vec3 dhat = d * (1.0 / r);
    const double r_minus_R = (dot(rho, rho) - 2.0 * dot(X, rho)) / (r + R);
    const cplx phase = std::polar(R / r, k * r_minus_R);
    cplx along_d = charges.empty() ? cplx(0.0) : charges[j] * (ik - 1.0 / r), along_n = 0.0;
    if (!dipoles.empty()) {
      along_n = dipoles[j] * (1.0 / r - ik) / r;
      along_d += dipoles[j] * dot(dhat, normals[j]) * (k * k + 3.0 * ik / r - 3.0 / (r * r));
    }
    const Vec3& n = normals[j];
    sum[0] += phase * (along_d * dhat.x + along_n * n.x);
    sum[1] += phase * (along_d * dhat.y + along_n * n.y);
    sum[2] += phase * (along_d * dhat.z + along_n * n.z);
  }
  const cplx outside = std::polar(1.0 / (4.0 * std::numbers::pi * R), k * R);
  for (cplx& g : sum) g *= outside;
  return sum;
}

constexpr Vec3 kAxes[3] = {{1.0, 0.0, 0.0}, {0.0, 1.0, 0.0}, {0.0, 0.0, 1.0}};

// The Gauss points with their strengths (charges -w q, dipoles w u) for the direct sum, in the
// discretisation's order.
fmm::PointSources gauss_point_sources(const Discretization& disc, std::span<const Vec3> normals,
                                      std::span<const cplx> charges,
                                      std::span<const cplx> dipoles) {
  std::vector<std::size_t> order(disc.quadrature_points().size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  return fmm::PointSources(disc.quadrature_points(), normals, order, charges, dipoles);
}

}  // namespace

FieldGeometry::FieldGeometry(const Discretization& disc, std::vector<Vec3> points,
                             const FieldOptions& options)
    : disc_(&disc), options_(options), points_(std::move(points)) {
  const auto start = Clock::now();
  const Mesh& mesh = disc.mesh();
  for (std::size_t i = 0; i < points_.size(); ++i)
    if (!within_field_range(points_[i]))
      throw Error("field: field point " + std::to_string(i + 1) + " of " +
                  std::to_string(points_.size()) + " " + out_of_range_reason(points_[i]));
  if (!(options.near.near_factor >= 1.0)) throw Error("field: the near factor must be at least 1");
  if (!(options.surface_tolerance >= 0.0 && options.surface_tolerance < 1.0))
    throw Error("field: the surface tolerance must lie in [0, 1)");
  const std::size_t m = points_.size();
  const CloseElementSearch search(mesh, options.near.near_factor);
  // With image planes each point stands for its images too (slots): it lies on the surface where
  // an image lies on an element, inside where the images' solid angles add up to the body's,
  // and beyond a reflecting plane it is not in the fluid at all.
  const ImagePlanes& planes = mesh.image_planes();
  images_ = planes.images();
  const auto image_of = [&](std::size_t i, std::size_t g) {
    return images_ == 1 ? points_[i] : planes.reflect(g, points_[i]);
  };

  // Close elements of every point's images, and the points on the surface.
  std::vector<std::vector<std::int32_t>> close(m * images_);
  locations_.assign(m, PointLocation::exterior);
  surface_element_.assign(m, -1);
  if (images_ > 1) surface_sign_.assign(m, 1.0);
#pragma omp parallel for schedule(dynamic, 256)
  for (std::size_t i = 0; i < m; ++i) {
    double nearest = INFINITY;
    std::int32_t nearest_element = -1;
    std::size_t nearest_image = 0;
    for (std::size_t g = 0; g < images_; ++g) {
      const Vec3 x = image_of(i, g);
      std::vector<std::int32_t>& near = close[i * images_ + g];
      search.close_to(x, near);
      for (std::int32_t j : near) {
        const std::size_t e = std::size_t(j);
        const Vec3 y =
            closest_point_on_triangle(x, mesh.corner(e, 0), mesh.corner(e, 1), mesh.corner(e, 2));
        const double d = norm(x - y) / search.radius(e);
        if (d < nearest) {
          nearest = d;
          nearest_element = j;
          nearest_image = g;
        }
      }
    }
    if (!planes.in_fluid(points_[i])) {
      locations_[i] = PointLocation::interior;
    } else if (nearest <= options.surface_tolerance) {
      locations_[i] = PointLocation::surface;
      surface_element_[i] = nearest_element;
      if (images_ > 1) surface_sign_[i] = planes.sign(nearest_image);
    }
  }

  // Inside or outside: W(x) for the points in the surface's bounding box (the others are
  // outside), by a Laplace FMM with unit dipoles plus the close elements' exact solid angles.
  // With image planes W sums over the images (the mesh's W at each image of x) for every point:
  // an open part's W is not 0 outside its box.
  std::vector<std::size_t> boxed;  // slots i * images + g of the points tested
  {
    Vec3 low = mesh.vertices()[0], high = low;
    for (const Vec3& v : mesh.vertices()) {
      low = {std::min(low.x, v.x), std::min(low.y, v.y), std::min(low.z, v.z)};
      high = {std::max(high.x, v.x), std::max(high.y, v.y), std::max(high.z, v.z)};
    }
    for (std::size_t i = 0; i < m; ++i) {
      const Vec3& x = points_[i];
      if (locations_[i] == PointLocation::exterior &&
          (images_ > 1 || (x.x >= low.x && x.y >= low.y && x.z >= low.z && x.x <= high.x &&
                           x.y <= high.y && x.z <= high.z)))
        for (std::size_t g = 0; g < images_; ++g) boxed.push_back(i * images_ + g);
    }
  }
  if (!boxed.empty()) {
    std::vector<Vec3> targets(boxed.size());
    for (std::size_t b = 0; b < boxed.size(); ++b)
      targets[b] = image_of(boxed[b] / images_, boxed[b] % images_);
    const std::vector<cplx> unit(disc.size(), 1.0);
    const std::vector<cplx> dipoles = point_strengths(disc, unit);
    const std::vector<Vec3> normals = quadrature_point_normals(disc);
    std::vector<cplx> w(boxed.size());
    if (options.use_fmm) {
      fmm::FmmOptions laplace = options.fmm;
      laplace.order = kClassificationOrder;
      laplace.skip_radius = disc.coincidence_radius();
      const fmm::Fmm fmm(0.0, disc.quadrature_points(), normals, targets,
                         splitting_points(disc, targets), laplace);
      fmm.apply({}, dipoles, w);
    } else {
      std::vector<std::size_t> order(disc.quadrature_points().size());
      std::iota(order.begin(), order.end(), std::size_t{0});
      const fmm::PointSources sources(disc.quadrature_points(), normals, order, {}, dipoles);
      const double skip2 = disc.coincidence_radius() * disc.coincidence_radius();
#pragma omp parallel for schedule(dynamic, 64)
      for (std::size_t b = 0; b < boxed.size(); ++b)
        w[b] = sources.potential(0, sources.size(), 0.0, targets[b], skip2);
    }
    std::vector<double> solid(boxed.size());
#pragma omp parallel for schedule(dynamic, 256)
    for (std::size_t b = 0; b < boxed.size(); ++b) {
      solid[b] = w[b].real();
      for (std::int32_t j : close[boxed[b]]) {
        const std::size_t e = std::size_t(j);
        solid[b] +=
            -solid_angle(mesh.corner(e, 0), mesh.corner(e, 1), mesh.corner(e, 2), targets[b]) /
                (4.0 * std::numbers::pi) -
            regular_integrals(disc, 0.0, e, targets[b]).double_layer.real();
      }
    }
    // A point's images are consecutive in `boxed`.
    for (std::size_t b = 0; b < boxed.size(); b += images_) {
      double total = 0.0;
      for (std::size_t g = 0; g < images_; ++g) total += solid[b + g];
      if (total < -0.5) locations_[boxed[b] / images_] = PointLocation::interior;
    }
  }

  close_start_.assign(1, 0);
  for (std::size_t i = 0; i < m; ++i) {
    if (locations_[i] != PointLocation::exterior) continue;
    exterior_.push_back(i);
    for (std::size_t g = 0; g < images_; ++g) {
      close_.insert(close_.end(), close[i * images_ + g].begin(), close[i * images_ + g].end());
      close_start_.push_back(close_.size());
    }
  }
  seconds_ = seconds_since(start);
}

Vec3 FieldGeometry::slot_point(std::size_t slot) const {
  const Vec3& x = points_[exterior_[slot / images_]];
  return images_ == 1 ? x : disc_->mesh().image_planes().reflect(slot % images_, x);
}

std::size_t FieldGeometry::count(PointLocation location) const {
  return std::size_t(std::count(locations_.begin(), locations_.end(), location));
}

FieldEvaluator::FieldEvaluator(const FieldGeometry& geometry, double k, bool gradients)
    : geometry_(&geometry), k_(k), gradients_(gradients) {
  if (!(k >= 0.0) || !std::isfinite(k)) throw Error("field: k must be finite and >= 0");
  const auto start = Clock::now();
  const FieldOptions& options = geometry.options();
  const Discretization& disc = geometry.discretization();
  statistics_.method = "direct sum";
  statistics_.device = "cpu";
  // The slots: the exterior points' images (the points themselves without image planes).
  const std::size_t n_exterior = geometry.slots();
  const std::span<const Vec3> sources = disc.quadrature_points();
  const double source_width = extent(sources, {});
  {
    Vec3 low = sources[0], high = sources[0];
    for (const Vec3& y : sources) {
      low = {std::min(low.x, y.x), std::min(low.y, y.y), std::min(low.z, y.z)};
      high = {std::max(high.x, y.x), std::max(high.y, y.y), std::max(high.z, y.z)};
    }
    center_ = (low + high) * 0.5;
  }
  // Far points get the far-field form of the sum (far_sum); the FMM's tree never spans them.
  const double far = kFarWidths * source_width;
  std::vector<std::size_t> near;  // the other exterior points
  for (std::size_t e = 0; e < n_exterior; ++e) {
    const Vec3 d = geometry.slot_point(e) - center_;
    if (std::max({std::abs(d.x), std::abs(d.y), std::abs(d.z)}) > far) {
      // e^{ikR} needs kR finite: only an absurd k (above 1e150 / |x|) fails.
      if (!std::isfinite(k * norm(d)))
        throw Error("field: k = " + std::to_string(k) + " times the distance of field point " +
                    std::to_string(geometry.exterior()[e / geometry.images()] + 1) + " overflows");
      far_.push_back(e);
    } else {
      near.push_back(e);
    }
  }
  std::ostringstream note;
  note.precision(3);
  if (!far_.empty())
    note << far_.size() << " of the " << n_exterior << " points lie farther than "
         << int(kFarWidths) << " body widths and are summed directly in the far-field form; ";
  const auto finish = [&] {
    statistics_.note += note.str();
    if (statistics_.note.ends_with("; ")) statistics_.note.resize(statistics_.note.size() - 2);
    statistics_.setup_seconds = seconds_since(start);
  };
  if (!options.use_fmm || near.empty()) {
    direct_ = near;
    finish();
    return;
  }
  // The low-frequency FMM needs p >= sqrt(3) k w on its coarsest M2L level (level 2, w = a
  // quarter of the root cube: fmm::low_frequency_accurate), and field points far from the body
  // widen the root. p is raised as far as kMaxRaisedOrder; the points beyond the cube that p
  // covers (centred on the Gauss points' box) are summed directly, O(N) each. In double: the
  // order for a wide box exceeds an int.
  const auto order_for = [&](double width) {
    return std::ceil(std::sqrt(3.0) * k * width * (1.0 + 1e-6) / 4.0);
  };
  const int p =
      options.fmm.order > 0 ? options.fmm.order : fmm::order_for_tolerance(options.fmm.tolerance);
  const int most = std::max(p, kMaxRaisedOrder);
  std::vector<Vec3> all(near.size());
  for (std::size_t t = 0; t < near.size(); ++t) all[t] = geometry.slot_point(near[t]);
  std::vector<Vec3> targets;
  if (order_for(extent(sources, all)) <= most) {
    targets = all;
    fmm_targets_ = near;
  } else {
    const double half = 0.5 * std::max(source_width, 4.0 * most / (std::sqrt(3.0) * k) /
                                                         (1.0 + 1e-6) * (1.0 - 1e-9));
    for (std::size_t t = 0; t < near.size(); ++t) {
      const Vec3 d = all[t] - center_;
      if (std::max({std::abs(d.x), std::abs(d.y), std::abs(d.z)}) <= half) {
        fmm_targets_.push_back(near[t]);
        targets.push_back(all[t]);
      } else {
        direct_.push_back(near[t]);
      }
    }
    note << direct_.size() << " of the " << n_exterior
         << " points lie beyond the FMM's low-frequency range and are summed directly; ";
  }
  const double needed = targets.empty() ? 0.0 : order_for(extent(sources, targets));
  if (targets.empty() || needed > fmm::max_degree) {
    // Even the body's own box is beyond the range: every point directly.
    direct_ = near;
    fmm_targets_.clear();
    statistics_.note = "direct sum: the body is beyond the low-frequency FMM's range at p <= " +
                       std::to_string(fmm::max_degree) + "; ";
    note.str("");
    if (!far_.empty())
      note << far_.size() << " points farther than " << int(kFarWidths)
           << " body widths in the far-field form";
    finish();
    return;
  }
  if (needed > p)
    note << "p raised from " << p << " to " << needed
         << ": the field points widen the octree (k * coarsest M2L cell width "
         << k * extent(sources, targets) / 4.0 << ")";
  fmm::FmmOptions fmm_options = options.fmm;
  fmm_options.skip_radius = disc.coincidence_radius();
  fmm_options.order = std::max(p, int(needed));
  const std::vector<Vec3> source_normals = quadrature_point_normals(disc);
  const std::vector<Vec3> splitting = splitting_points(disc, targets);
  fmm_ = std::make_unique<fmm::Fmm>(k, sources, source_normals, targets, splitting, fmm_options);
  if (gradients) {
    // The same splitting points, so the same tree and order as fmm_.
    std::vector<Vec3> tripled, axes;
    tripled.reserve(3 * targets.size());
    axes.reserve(3 * targets.size());
    for (const Vec3& t : targets)
      for (const Vec3& axis : kAxes) {
        tripled.push_back(t);
        axes.push_back(axis);
      }
    fmm::TargetNormalDerivative derivative;
    derivative.normals = axes;
    derivative.apart = true;
    gradient_fmm_ = std::make_unique<fmm::Fmm>(k, sources, source_normals, tripled, splitting,
                                               fmm_options, nullptr, derivative);
  }
  statistics_.method = "fmm, p = " + std::to_string(fmm_->order());
  if (!direct_.empty() || !far_.empty()) statistics_.method += " (and a direct sum)";
  statistics_.device = fmm_->statistics().far_field_device;
  finish();
}

FieldEvaluator::~FieldEvaluator() = default;

FieldValues FieldEvaluator::evaluate(std::span<const cplx> u, std::span<const cplx> q,
                                     std::span<const cplx> incident) const {
  const FieldGeometry& geometry = *geometry_;
  const Discretization& disc = geometry.discretization();
  const Mesh& mesh = disc.mesh();
  const std::size_t n = disc.size(), m = geometry.points().size();
  if ((!u.empty() && u.size() != n) || (!q.empty() && q.size() != n))
    throw Error("field: the surface densities need one value per element");
  if (!incident.empty() && incident.size() != m)
    throw Error("field: the incident field needs one value per field point");

  // Exterior points: D u - S q, the Gauss rule over all elements (charges -w q, dipoles w u), at
  // each slot (an exterior point's image; with image planes summed over them below).
  const std::size_t n_exterior = geometry.slots();
  std::vector<cplx> exterior(n_exterior);
  auto start = Clock::now();
  std::vector<cplx> charges = point_strengths(disc, q);
  for (cplx& c : charges) c = -c;
  const std::vector<cplx> dipoles = point_strengths(disc, u);
  if (n_exterior > 0 && (!u.empty() || !q.empty())) {
    if (fmm_) {
      std::vector<cplx> values(fmm_targets_.size());
      fmm_->apply(charges, dipoles, values);
      for (std::size_t t = 0; t < fmm_targets_.size(); ++t) exterior[fmm_targets_[t]] = values[t];
    }
    if (!direct_.empty()) {
      const fmm::PointSources sources =
          gauss_point_sources(disc, quadrature_point_normals(disc), charges, dipoles);
      const double skip2 = disc.coincidence_radius() * disc.coincidence_radius();
#pragma omp parallel for schedule(dynamic, 16)
      for (std::size_t d = 0; d < direct_.size(); ++d) {
        const std::size_t e = direct_[d];
        exterior[e] = sources.potential(0, sources.size(), k_, geometry.slot_point(e), skip2);
      }
    }
    if (!far_.empty()) {
      const std::vector<Vec3> normals = quadrature_point_normals(disc);
#pragma omp parallel for schedule(dynamic, 1)
      for (std::size_t f = 0; f < far_.size(); ++f) {
        const std::size_t e = far_[f];
        exterior[e] = far_sum(disc.quadrature_points(), normals, charges, dipoles, k_, center_,
                              geometry.slot_point(e));
      }
    }
  }
  statistics_.fmm_seconds = seconds_since(start);

  // Close elements: accurate minus regular.
  start = Clock::now();
  const GaussLegendre angular(geometry.options().near.angular_points);
#pragma omp parallel for schedule(dynamic, 64)
  for (std::size_t e = 0; e < n_exterior; ++e) {
    const Vec3 x = geometry.slot_point(e);
    cplx correction = 0.0;
    for (std::int32_t j : geometry.close_elements(e)) {
      const std::size_t el = std::size_t(j);
      const PanelIntegrals exact = panel_integrals(k_, mesh.corner(el, 0), mesh.corner(el, 1),
                                                   mesh.corner(el, 2), x, angular);
      const RegularPair regular = regular_integrals(disc, k_, el, x);
      if (!u.empty()) correction += (exact.double_layer - regular.double_layer) * u[el];
      if (!q.empty()) correction -= (exact.single_layer - regular.single_layer) * q[el];
    }
    exterior[e] += correction;
  }
  statistics_.near_seconds = seconds_since(start);

  const double nan = std::numeric_limits<double>::quiet_NaN();
  FieldValues values;
  values.scattered.assign(m, cplx(nan, nan));
  values.total.assign(m, cplx(nan, nan));
  const auto incident_at = [&](std::size_t i) {
    return incident.empty() ? cplx(0.0) : incident[i];
  };
  const std::size_t images = geometry.images();
  const ImagePlanes& planes = mesh.image_planes();
  for (std::size_t e = 0; e < geometry.exterior().size(); ++e) {
    const std::size_t i = geometry.exterior()[e];
    cplx sum = exterior[e * images];
    for (std::size_t g = 1; g < images; ++g) sum += planes.sign(g) * exterior[e * images + g];
    values.scattered[i] = sum;
    values.total[i] = sum + incident_at(i);
  }
  for (std::size_t i = 0; i < m; ++i) {
    const std::int32_t j = geometry.surface_element(i);
    if (j < 0) continue;
    values.total[i] = u.empty() ? cplx(0.0) : geometry.surface_sign(i) * u[std::size_t(j)];
    values.scattered[i] = values.total[i] - incident_at(i);
  }
  if (gradients_) values.scattered_gradient = gradient(u, q, charges, dipoles);
  return values;
}

std::vector<cplx> FieldEvaluator::gradient(std::span<const cplx> u, std::span<const cplx> q,
                                           std::span<const cplx> charges,
                                           std::span<const cplx> dipoles) const {
  const FieldGeometry& geometry = *geometry_;
  const Discretization& disc = geometry.discretization();
  const Mesh& mesh = disc.mesh();
  const std::size_t n_exterior = geometry.slots();
  std::vector<std::array<cplx, 3>> exterior(n_exterior, std::array<cplx, 3>{});
  auto start = Clock::now();
  if (n_exterior > 0 && (!u.empty() || !q.empty())) {
    if (gradient_fmm_) {
      // apart: the potential of the 3T targets, then their derivatives along their axes.
      const std::size_t count = 3 * fmm_targets_.size();
      std::vector<cplx> out(2 * count);
      gradient_fmm_->apply(charges, dipoles, out);
      for (std::size_t t = 0; t < fmm_targets_.size(); ++t)
        for (int a = 0; a < 3; ++a) exterior[fmm_targets_[t]][a] = out[count + 3 * t + a];
    }
    const std::vector<Vec3> normals = quadrature_point_normals(disc);
    if (!direct_.empty()) {
      const fmm::PointSources sources = gauss_point_sources(disc, normals, charges, dipoles);
      const double skip2 = disc.coincidence_radius() * disc.coincidence_radius();
#pragma omp parallel for schedule(dynamic, 16)
      for (std::size_t d = 0; d < direct_.size(); ++d) {
        const std::size_t e = direct_[d];
        const Vec3 x = geometry.slot_point(e);
        for (int a = 0; a < 3; ++a)
          exterior[e][a] =
              sources.potential_and_normal_derivative(0, sources.size(), k_, x, kAxes[a], skip2)
                  .normal_derivative;
      }
    }
#pragma omp parallel for schedule(dynamic, 1)
    for (std::size_t f = 0; f < far_.size(); ++f) {
      const std::size_t e = far_[f];
      exterior[e] = far_gradient(disc.quadrature_points(), normals, charges, dipoles, k_, center_,
                                 geometry.slot_point(e));
    }
  }
  statistics_.fmm_seconds += seconds_since(start);

  // Close elements: the accurate gradients minus the regular rule's.
  start = Clock::now();
  const GaussLegendre angular(geometry.options().near.angular_points);
#pragma omp parallel for schedule(dynamic, 64)
  for (std::size_t e = 0; e < n_exterior; ++e) {
    const Vec3 x = geometry.slot_point(e);
    for (std::int32_t j : geometry.close_elements(e)) {
      const std::size_t el = std::size_t(j);
      const PanelGradients exact = panel_gradients(k_, mesh.corner(el, 0), mesh.corner(el, 1),
                                                   mesh.corner(el, 2), x, angular);
      for (int a = 0; a < 3; ++a) {
        // Along axis a: D' = a . grad S, N = a . grad D.
        const RegularBurtonMiller regular =
            regular_burton_miller_integrals(disc, k_, el, x, kAxes[a]);
        if (!u.empty()) exterior[e][a] += (exact.double_layer[a] - regular.hypersingular) * u[el];
        if (!q.empty())
          exterior[e][a] -= (exact.single_layer[a] - regular.adjoint_double_layer) * q[el];
      }
    }
  }
  statistics_.near_seconds += seconds_since(start);

  const double nan = std::numeric_limits<double>::quiet_NaN();
  std::vector<cplx> gradient(3 * geometry.points().size(), cplx(nan, nan));
  // With image planes: the gradient of u at x's image g is L_g times u's gradient there (L_g the
  // reflection's linear part), signed and summed.
  const std::size_t images = geometry.images();
  const ImagePlanes& planes = mesh.image_planes();
  for (std::size_t e = 0; e < geometry.exterior().size(); ++e) {
    std::array<cplx, 3> sum = exterior[e * images];
    for (std::size_t g = 1; g < images; ++g) {
      const std::array<cplx, 3>& at = exterior[e * images + g];
      const Vec3 flip = planes.reflect_direction(g, Vec3{1.0, 1.0, 1.0});
      const double sign = planes.sign(g);
      sum[0] += sign * flip.x * at[0];
      sum[1] += sign * flip.y * at[1];
      sum[2] += sign * flip.z * at[2];
    }
    for (std::size_t a = 0; a < 3; ++a) gradient[3 * geometry.exterior()[e] + a] = sum[a];
  }
  return gradient;
}

}  // namespace fmbem::field
