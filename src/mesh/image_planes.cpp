#include "fmbem/mesh/image_planes.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "fmbem/core/error.hpp"

namespace fmbem {
namespace {

std::string trimmed(const std::string& s) {
  const std::size_t first = s.find_first_not_of(" \t");
  if (first == std::string::npos) return {};
  return s.substr(first, s.find_last_not_of(" \t") - first + 1);
}

}  // namespace

const char* plane_kind_name(PlaneKind kind) {
  switch (kind) {
    case PlaneKind::symmetric:
      return "symmetric";
    case PlaneKind::antisymmetric:
      return "antisymmetric";
    case PlaneKind::rigid:
      return "rigid";
    case PlaneKind::soft:
      return "soft";
  }
  return "?";
}

ImagePlanes::ImagePlanes(std::vector<ImagePlane> planes) : planes_(std::move(planes)) {
  if (planes_.size() > 3) throw Error("at most three planes (one per axis) can be given");
  bool taken[3] = {false, false, false};
  for (const ImagePlane& p : planes_) {
    if (p.axis < 0 || p.axis > 2) throw Error("a plane's axis must be x, y or z");
    if (taken[p.axis])
      throw Error(std::string("two planes perpendicular to ") + "xyz"[p.axis] +
                  ": parallel planes would mirror each other's images without end; give one "
                  "plane per axis");
    taken[p.axis] = true;
    if (!std::isfinite(p.offset)) throw Error("a plane's offset must be finite");
  }
}

Vec3 ImagePlanes::reflect(std::size_t image, const Vec3& x) const {
  Vec3 y = x;
  for (std::size_t p = 0; p < planes_.size(); ++p)
    if (image >> p & 1u) {
      double& c = component(y, planes_[p].axis);
      c = 2.0 * planes_[p].offset - c;
    }
  return y;
}

Vec3 ImagePlanes::real_image(const Vec3& x) const {
  std::size_t image = 0;
  for (std::size_t p = 0; p < planes_.size(); ++p)
    if (planes_[p].signed_distance(x) * sides_[p] < 0.0) image |= std::size_t(1) << p;
  return reflect(image, x);
}

Vec3 ImagePlanes::reflect_direction(std::size_t image, const Vec3& d) const {
  Vec3 y = d;
  for (std::size_t p = 0; p < planes_.size(); ++p)
    if (image >> p & 1u) component(y, planes_[p].axis) = -component(y, planes_[p].axis);
  return y;
}

std::vector<Vec3> ImagePlanes::images_of(std::span<const Vec3> points, std::size_t first) const {
  std::vector<Vec3> all;
  all.reserve(points.size() * (images() - std::min(first, images())));
  for (std::size_t g = first; g < images(); ++g)
    for (const Vec3& x : points) all.push_back(reflect(g, x));
  return all;
}

std::vector<Vec3> ImagePlanes::directions_of(std::span<const Vec3> directions,
                                             std::size_t first) const {
  std::vector<Vec3> all;
  all.reserve(directions.size() * (images() - std::min(first, images())));
  for (std::size_t g = first; g < images(); ++g)
    for (const Vec3& d : directions) all.push_back(reflect_direction(g, d));
  return all;
}

double ImagePlanes::sign(std::size_t image) const {
  double s = 1.0;
  for (std::size_t p = 0; p < planes_.size(); ++p)
    if (image >> p & 1u) s *= planes_[p].sign();
  return s;
}

double ImagePlanes::data_weight(std::size_t image) const {
  double w = sign(image);
  if (halved_data_)
    for (const ImagePlane& p : planes_)
      if (!p.reflects()) w *= 0.5;
  return w;
}

bool ImagePlanes::in_fluid(const Vec3& x) const {
  for (std::size_t p = 0; p < planes_.size(); ++p)
    if (planes_[p].reflects() && double(sides_[p]) * planes_[p].signed_distance(x) < 0.0)
      return false;
  return true;
}

bool ImagePlanes::all_pass_through(const Vec3& x, double tolerance) const {
  for (const ImagePlane& p : planes_)
    if (std::abs(p.signed_distance(x)) > tolerance) return false;
  return true;
}

Vec3 ImagePlanes::origin() const {
  Vec3 o{};
  for (const ImagePlane& p : planes_) component(o, p.axis) = p.offset;
  return o;
}

std::string ImagePlanes::description() const {
  std::ostringstream out;
  out.precision(6);
  for (std::size_t p = 0; p < planes_.size(); ++p)
    out << (p ? ", " : "") << "xyz"[planes_[p].axis] << " = " << planes_[p].offset << " "
        << plane_kind_name(planes_[p].kind);
  return out.str();
}

ImagePlanes parse_image_planes(const std::string& text) {
  const std::string usage =
      "bad -bem_planes '" + text +
      "': expected AXIS=OFFSET:KIND[,...], e.g. x=0:symmetric,z=-0.5:rigid (AXIS x, y or z; "
      "KIND symmetric, antisymmetric, rigid or soft)";
  std::vector<ImagePlane> planes;
  if (!text.empty() && text.back() == ',') throw Error(usage);
  std::istringstream items(text);
  std::string item;
  while (std::getline(items, item, ',')) {
    item = trimmed(item);
    const std::size_t equals = item.find('='), colon = item.find(':');
    if (equals == std::string::npos || colon == std::string::npos || colon < equals)
      throw Error(usage);
    const std::string axis = trimmed(item.substr(0, equals));
    const std::string offset = trimmed(item.substr(equals + 1, colon - equals - 1));
    const std::string kind = trimmed(item.substr(colon + 1));
    ImagePlane plane;
    if (axis == "x" || axis == "X")
      plane.axis = 0;
    else if (axis == "y" || axis == "Y")
      plane.axis = 1;
    else if (axis == "z" || axis == "Z")
      plane.axis = 2;
    else
      throw Error(usage);
    std::size_t used = 0;
    try {
      plane.offset = std::stod(offset, &used);
    } catch (const std::exception&) {
      throw Error(usage);
    }
    if (used != offset.size() || !std::isfinite(plane.offset)) throw Error(usage);
    if (kind == "symmetric")
      plane.kind = PlaneKind::symmetric;
    else if (kind == "antisymmetric")
      plane.kind = PlaneKind::antisymmetric;
    else if (kind == "rigid")
      plane.kind = PlaneKind::rigid;
    else if (kind == "soft")
      plane.kind = PlaneKind::soft;
    else
      throw Error(usage);
    planes.push_back(plane);
  }
  if (planes.empty()) throw Error(usage);
  return ImagePlanes(std::move(planes));
}

}  // namespace fmbem
