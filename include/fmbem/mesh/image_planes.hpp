#pragma once
#include <array>
#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include "fmbem/core/vec3.hpp"

namespace fmbem {

// What the field does across a plane x_axis = offset:
//   symmetric / antisymmetric: the body is the mesh together with its mirror images and the
//     solution is even / odd across the plane (the mesh may be open where it meets the plane);
//   rigid / soft: an infinite hard / pressure-release reflecting plane; the fluid is the
//     half-space on the mesh's side (a baffle, the ground, the sea surface).
// In every case the Green's function is the sum over the images, each times its sign
// (ImagePlanes::sign): the mesh holds only the real part.
enum class PlaneKind { symmetric, antisymmetric, rigid, soft };
const char* plane_kind_name(PlaneKind kind);

struct ImagePlane {
  int axis = 0;  // 0, 1, 2: x, y, z
  double offset = 0.0;
  PlaneKind kind = PlaneKind::symmetric;
  // +1 for symmetric and rigid (the image source has the source's sign), -1 otherwise.
  double sign() const {
    return kind == PlaneKind::symmetric || kind == PlaneKind::rigid ? 1.0 : -1.0;
  }
  bool reflects() const { return kind == PlaneKind::rigid || kind == PlaneKind::soft; }
  // x's coordinate along the axis less the offset: positive on the axis' side.
  double signed_distance(const Vec3& x) const { return component(x, axis) - offset; }
};

// Up to three planes on distinct axes (two planes on one axis would mirror each other's images
// without end) and their images: image g (0 .. images() - 1) reflects across the planes whose
// bit is set in g; image 0 is the identity. Reflections across perpendicular planes commute, so
// this is the whole group.
class ImagePlanes {
 public:
  ImagePlanes() = default;
  // Throws fmbem::Error for more than three planes, an axis given twice, a non-finite offset.
  explicit ImagePlanes(std::vector<ImagePlane> planes);

  bool empty() const { return planes_.empty(); }
  std::span<const ImagePlane> planes() const { return planes_; }
  std::size_t images() const { return std::size_t(1) << planes_.size(); }
  Vec3 reflect(std::size_t image, const Vec3& x) const;
  // A direction (normal, gradient, wave direction): the reflection's linear part.
  Vec3 reflect_direction(std::size_t image, const Vec3& d) const;
  // Each point's images from image `first` on, image-major (image first's of every point, then
  // the next image's, ...); reflect_direction's for directions.
  std::vector<Vec3> images_of(std::span<const Vec3> points, std::size_t first = 0) const;
  std::vector<Vec3> directions_of(std::span<const Vec3> directions, std::size_t first = 0) const;
  // The product of the reflected planes' signs: the image's weight in the Green's function.
  double sign(std::size_t image) const;
  // The weight of image g of a field the user gives (an incident wave, a monopole): the sign,
  // halved for each symmetric or antisymmetric plane. Across those the data's even or odd part
  // is solved for (data already even or odd stays as it is); across a reflecting plane the
  // field and its reflection both are there. NumCalc's convention (with_whole_data): the sign
  // alone, the data and its images summed across every plane.
  double data_weight(std::size_t image) const;
  bool halved_data() const { return halved_data_; }
  ImagePlanes with_whole_data() const {
    ImagePlanes planes = *this;
    planes.halved_data_ = false;
    return planes;
  }
  // Sum over the images of data_weight(g) f(reflect(g, x)).
  template <class Field>
  auto symmetrize(const Vec3& x, Field&& f) const {
    auto sum = f(x) * data_weight(0);
    for (std::size_t g = 1; g < images(); ++g) sum += f(reflect(g, x)) * data_weight(g);
    return sum;
  }
  // Whether x lies in the fluid: on the mesh's side (side(), set by validation) of every
  // reflecting plane, or on it. A symmetry plane has fluid on both sides.
  bool in_fluid(const Vec3& x) const;
  // The side of each plane the mesh lies on (+1 or -1, per plane in planes() order); all +1
  // until set_sides.
  std::span<const int> sides() const { return {sides_.data(), planes_.size()}; }
  void set_sides(std::array<int, 3> sides) { sides_ = sides; }
  // x reflected across each plane it lies beyond (off the mesh's side): the real point a point
  // of a mirror image mirrors; x itself on the mesh's side.
  Vec3 real_image(const Vec3& x) const;
  // Whether every plane passes within `tolerance` of x (a sphere centred there is its own
  // image).
  bool all_pass_through(const Vec3& x, double tolerance) const;
  // The point where the planes meet (offset along each plane's axis, 0 along the others).
  Vec3 origin() const;
  // "x = 0 symmetric, z = -1.5 rigid".
  std::string description() const;

 private:
  std::vector<ImagePlane> planes_;
  std::array<int, 3> sides_{1, 1, 1};
  bool halved_data_ = true;
};

// Parses "-bem_planes": comma-separated AXIS=OFFSET:KIND, e.g. "x=0:symmetric,z=-0.5:rigid"
// (KIND symmetric, antisymmetric, rigid or soft). Throws fmbem::Error naming what is wrong.
ImagePlanes parse_image_planes(const std::string& text);

}  // namespace fmbem
