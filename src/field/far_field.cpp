#include "fmbem/field/far_field.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "fmbem/core/error.hpp"
#include "fmbem/core/fibonacci_sphere.hpp"

namespace fmbem::field {

std::string FarFieldDirections::description() const {
  const std::string n = std::to_string(directions.size());
  return kind == Kind::circle ? n + " directions on the great circle of the x-z plane"
                              : n + " directions of a Fibonacci sphere";
}

FarFieldDirections great_circle(std::size_t n) {
  if (n < 1) throw Error("far field: at least one direction is needed");
  FarFieldDirections out;
  out.kind = FarFieldDirections::Kind::circle;
  for (std::size_t i = 0; i < n; ++i) {
    const double degrees = 360.0 * double(i) / double(n);
    const double t = degrees * std::numbers::pi / 180.0;
    out.directions.push_back({std::sin(t), 0.0, std::cos(t)});
    out.angle.push_back(degrees);
  }
  return out;
}

FarFieldDirections fibonacci_sphere(std::size_t n) {
  if (n < 1) throw Error("far field: at least one direction is needed");
  FarFieldDirections out;
  out.kind = FarFieldDirections::Kind::sphere;
  for (std::size_t i = 0; i < n; ++i) {
    const Vec3 d = fibonacci_direction(i, n);
    out.directions.push_back(d);
    out.theta.push_back(std::acos(std::clamp(d.z, -1.0, 1.0)) * 180.0 / std::numbers::pi);
    out.phi.push_back(std::atan2(d.y, d.x) * 180.0 / std::numbers::pi);
  }
  return out;
}

namespace {

// The real elements' far-field amplitude along each direction (no images).
std::vector<cplx> element_pattern(const Discretization& disc, double k, std::span<const cplx> u,
                                  std::span<const cplx> q, std::span<const Vec3> directions) {
  const std::size_t n = disc.size(), m = disc.points_per_element();
  const auto& points = disc.quadrature_points();
  const auto& weights = disc.quadrature_weights();
  const auto& normals = disc.mesh().normals();
  std::vector<cplx> amplitude(directions.size());
#pragma omp parallel for schedule(dynamic, 1)
  for (std::size_t i = 0; i < directions.size(); ++i) {
    const Vec3& d = directions[i];
    cplx sum = 0.0;
    for (std::size_t e = 0; e < n; ++e) {
      // -ik (d . n) u - q, constant on the element.
      const cplx density = (u.empty() ? cplx(0.0) : cplx(0.0, -k * dot(d, normals[e])) * u[e]) -
                           (q.empty() ? cplx(0.0) : q[e]);
      cplx element = 0.0;
      for (std::size_t p = e * m; p < (e + 1) * m; ++p) {
        const double phase = -k * dot(d, points[p]);
        element += weights[p] * cplx(std::cos(phase), std::sin(phase));
      }
      sum += density * element;
    }
    amplitude[i] = sum * (0.25 / std::numbers::pi);
  }
  return amplitude;
}

}  // namespace

std::vector<cplx> far_field_amplitude(const Discretization& disc, double k, std::span<const cplx> u,
                                      std::span<const cplx> q, std::span<const Vec3> directions) {
  if (!(k > 0.0) || !std::isfinite(k))
    throw Error("far field: the far-field amplitude needs a finite k > 0");
  const std::size_t n = disc.size();
  if ((!u.empty() && u.size() != n) || (!q.empty() && q.size() != n))
    throw Error("far field: the surface densities need one value per element");
  const ImagePlanes& planes = disc.mesh().image_planes();
  if (planes.empty()) return element_pattern(disc, k, u, q, directions);
  // With image planes: the real elements' pattern along every image of each direction, combined.
  const std::size_t images = planes.images();
  std::vector<Vec3> reflected;
  reflected.reserve(directions.size() * images);
  for (const Vec3& d : directions)
    for (std::size_t g = 0; g < images; ++g) reflected.push_back(planes.reflect_direction(g, d));
  const std::vector<cplx> patterns = element_pattern(disc, k, u, q, reflected);
  std::vector<cplx> amplitude(directions.size());
  for (std::size_t i = 0; i < directions.size(); ++i)
    amplitude[i] =
        far_field_images(planes, k, directions[i], false,
                         [&](std::size_t g, const Vec3&) { return patterns[i * images + g]; });
  return amplitude;
}

}  // namespace fmbem::field
