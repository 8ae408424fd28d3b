#include "fmbem/exact/incident.hpp"

#include <cmath>
#include <numbers>
#include <sstream>

#include "fmbem/core/error.hpp"

namespace fmbem::exact {
namespace {

constexpr double kFourPi = 4.0 * std::numbers::pi;

void check_wavenumber(double k) {
  if (!(std::isfinite(k) && k >= 0.0)) {
    std::ostringstream msg;
    msg.precision(10);
    msg << "exact: the wavenumber k must be finite and >= 0, got " << k;
    throw Error(msg.str());
  }
}

Vec3 unit_direction(const Vec3& d) {
  const double length = norm(d);
  if (!(length > 0.0 && std::isfinite(length))) {
    throw Error("exact: the plane-wave direction must be a finite non-zero vector");
  }
  return d * (1.0 / length);
}

// Distance from the source; the kernel is singular there, so that is an input error.
double source_distance(const Vec3& source, const Vec3& x) {
  const double r = norm(x - source);
  if (!(r > 0.0)) throw Error("exact: the observation point coincides with the point source");
  return r;
}

}  // namespace

cplx monopole(double k, const Vec3& source, const Vec3& x) {
  check_wavenumber(k);
  const double r = source_distance(source, x);
  return std::polar(1.0 / (kFourPi * r), k * r);
}

cplx monopole_normal_derivative(double k, const Vec3& source, const Vec3& x, const Vec3& n) {
  check_wavenumber(k);
  const Vec3 diff = x - source;
  const double r = source_distance(source, x);
  // grad G = G (ik - 1/r) (x - s)/r.
  const cplx g = std::polar(1.0 / (kFourPi * r), k * r);
  return g * cplx(-1.0 / r, k) * (dot(diff, n) / r);
}

cplx incident_field(double k, const Incident& inc, const Vec3& x) {
  check_wavenumber(k);
  if (inc.kind == Incident::Kind::PointSource) return inc.amplitude * monopole(k, inc.source, x);
  const Vec3 d = unit_direction(inc.direction);
  return inc.amplitude * std::polar(1.0, k * dot(d, x));
}

cplx incident_normal_derivative(double k, const Incident& inc, const Vec3& x, const Vec3& n) {
  check_wavenumber(k);
  if (inc.kind == Incident::Kind::PointSource) {
    return inc.amplitude * monopole_normal_derivative(k, inc.source, x, n);
  }
  const Vec3 d = unit_direction(inc.direction);
  return inc.amplitude * cplx(0.0, k * dot(d, n)) * std::polar(1.0, k * dot(d, x));
}

}  // namespace fmbem::exact
