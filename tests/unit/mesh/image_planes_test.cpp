// Image planes: parsing, the group of reflections, and the mesh closed by its images.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <functional>
#include <map>
#include <string>
#include <tuple>

#include "fmbem/core/error.hpp"
#include "fmbem/mesh/feature_edges.hpp"
#include "fmbem/mesh/image_planes.hpp"
#include "fmbem/mesh/mesh.hpp"

namespace fmbem {
namespace {

void expect_error_containing(const std::function<void()>& f, const std::string& needle) {
  try {
    f();
    FAIL() << "expected an Error containing '" << needle << "'";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

TEST(ImagePlanes, ParsesPlanesAndRefusesMalformedOnes) {
  const ImagePlanes planes = parse_image_planes("x=0:symmetric, z = -0.5:rigid,Y=2:soft");
  ASSERT_EQ(planes.planes().size(), 3u);
  EXPECT_EQ(planes.planes()[0].axis, 0);
  EXPECT_EQ(planes.planes()[1].axis, 2);
  EXPECT_EQ(planes.planes()[1].offset, -0.5);
  EXPECT_EQ(planes.planes()[1].kind, PlaneKind::rigid);
  EXPECT_EQ(planes.planes()[2].axis, 1);
  EXPECT_EQ(planes.planes()[2].kind, PlaneKind::soft);
  EXPECT_EQ(planes.images(), 8u);
  EXPECT_EQ(planes.description(), "x = 0 symmetric, z = -0.5 rigid, y = 2 soft");
  EXPECT_EQ(parse_image_planes("x=1e-3:antisymmetric").planes()[0].kind, PlaneKind::antisymmetric);
  for (const char* bad : {"", "x=0", "x:symmetric", "w=0:symmetric", "x=0:mirror", "x=zero:soft",
                          "x=0:soft,", "x=1e999:soft", "x=0:soft:x"})
    EXPECT_THROW(parse_image_planes(bad), Error) << bad;
  expect_error_containing([] { parse_image_planes("x=0:soft,x=1:rigid"); }, "two planes");
  expect_error_containing([] { ImagePlanes(std::vector<ImagePlane>(4, ImagePlane{})); },
                          "at most three");
}

TEST(ImagePlanes, ReflectionsSignsAndWeights) {
  const ImagePlanes planes = parse_image_planes("x=1:symmetric,z=-2:soft");
  const Vec3 x{0.3, -0.7, 1.1};
  EXPECT_EQ(planes.reflect(0, x), x);
  const Vec3 across_x = planes.reflect(1, x), across_z = planes.reflect(2, x),
             across_both = planes.reflect(3, x);
  EXPECT_DOUBLE_EQ(across_x.x, 1.7);
  EXPECT_DOUBLE_EQ(across_z.z, -5.1);
  EXPECT_DOUBLE_EQ(across_both.x, 1.7);
  EXPECT_DOUBLE_EQ(across_both.z, -5.1);
  EXPECT_EQ(across_both.y, x.y);
  for (std::size_t g = 0; g < planes.images(); ++g) {
    const Vec3 back = planes.reflect(g, planes.reflect(g, x));
    EXPECT_NEAR(norm(back - x), 0.0, 1e-15);
    // A direction has the reflection's linear part: the difference of two points' images.
    const Vec3 d{0.2, 0.5, -0.4};
    EXPECT_NEAR(
        norm(planes.reflect_direction(g, d) - (planes.reflect(g, x + d) - planes.reflect(g, x))),
        0.0, 1e-15);
  }
  // Signs: the soft plane's images are negative; the symmetry plane halves the data's weight.
  EXPECT_EQ(planes.sign(0), 1.0);
  EXPECT_EQ(planes.sign(1), 1.0);
  EXPECT_EQ(planes.sign(2), -1.0);
  EXPECT_EQ(planes.sign(3), -1.0);
  EXPECT_EQ(planes.data_weight(0), 0.5);
  EXPECT_EQ(planes.data_weight(2), -0.5);
  // A field even across x = 1 stays itself; the soft plane adds its reflection, negated.
  const auto f = [](const Vec3& y) { return std::cos(y.x - 1.0) * (y.z + 3.0); };
  EXPECT_NEAR(planes.symmetrize(x, f), f(x) - f(across_z), 1e-15);
  // The fluid: the mesh's side of the soft plane (sides +1: z > -2), both sides of the other.
  EXPECT_TRUE(planes.in_fluid({5.0, 0.0, -1.0}));
  EXPECT_FALSE(planes.in_fluid({0.0, 0.0, -3.0}));
  EXPECT_EQ(planes.origin(), (Vec3{1.0, 0.0, -2.0}));
}

// The triangles of `surface` whose centroid passes `keep`, vertices kept.
Surface kept(Surface surface, const std::function<bool(const Vec3&)>& keep) {
  std::vector<Triangle> triangles;
  for (const Triangle& t : surface.triangles) {
    const Vec3 c = (surface.vertices[std::size_t(t[0])] + surface.vertices[std::size_t(t[1])] +
                    surface.vertices[std::size_t(t[2])]) *
                   (1.0 / 3.0);
    if (keep(c)) triangles.push_back(t);
  }
  surface.triangles = triangles;
  return surface;
}

TEST(ImagePlanesMesh, APartClosedByItsPlanesIsValid) {
  const Mesh whole = Mesh::from_surface(make_octasphere(3, 1.0), "whole");
  EXPECT_EQ(whole.size(), 512u);
  const char* parts[] = {"x", "xy", "xyz"};
  const char* specs[] = {"x=0:symmetric", "x=0:symmetric,y=0:antisymmetric",
                         "x=0:rigid,y=0:soft,z=0:symmetric"};
  for (int m = 0; m < 3; ++m) {
    const std::array<bool, 3> keep{true, m >= 1, m >= 2};
    const Surface part = make_octasphere(3, 1.0, keep);
    expect_error_containing([&] { Mesh::from_surface(part, "part"); }, "the surface is open");
    const Mesh mesh = Mesh::from_surface(part, parts[m], parse_image_planes(specs[m]));
    EXPECT_EQ(mesh.size() << (m + 1), whole.size());
    EXPECT_EQ(mesh.flipped_triangles(), 0u);
    // The volume of the body closed by the planes: the whole's share, to rounding.
    EXPECT_NEAR(mesh.volume() * double(1 << (m + 1)), whole.volume(), 1e-13 * whole.volume());
    for (int side : mesh.image_planes().sides()) EXPECT_EQ(side, 1);
  }
  // The negative side: the planes' sides are the mesh's.
  const Surface below = kept(make_octasphere(3, 1.0), [](const Vec3& c) { return c.z < 0.0; });
  const Mesh lower = Mesh::from_surface(below, "lower", parse_image_planes("z=0:symmetric"));
  EXPECT_EQ(lower.image_planes().sides()[0], -1);
  EXPECT_GT(lower.volume(), 0.0);
  // A closed body beside a reflecting plane.
  const Mesh above = Mesh::from_surface(make_icosphere(2, 1.0), "above",
                                        parse_image_planes("z=-1.5:rigid,x=2:soft"));
  EXPECT_EQ(above.image_planes().sides()[0], 1);
  EXPECT_EQ(above.image_planes().sides()[1], -1);
  EXPECT_TRUE(above.image_planes().in_fluid({0.0, 0.0, 0.0}));
  EXPECT_FALSE(above.image_planes().in_fluid({0.0, 0.0, -1.6}));
  EXPECT_FALSE(above.image_planes().in_fluid({2.1, 0.0, 0.0}));
}

TEST(ImagePlanesMesh, RefusesWhatItsPlanesDoNotClose) {
  const Surface half = make_octasphere(3, 1.0, {true, false, false});
  // Open where no plane is: the open edges lie in x = 0, not y = 0.
  expect_error_containing(
      [&] { Mesh::from_surface(half, "half", parse_image_planes("y=0:symmetric")); },
      "lies on both sides of the plane y = 0");
  expect_error_containing(
      [&] { Mesh::from_surface(half, "half", parse_image_planes("x=0.5:symmetric")); },
      "lies on both sides of the plane x = 0.5");
  // A body crossing a plane.
  expect_error_containing(
      [&] { Mesh::from_surface(make_icosphere(2, 1.0), "ico", parse_image_planes("z=0.2:rigid")); },
      "both sides");
  // A plane so far away that the images' coordinates overflow products.
  expect_error_containing(
      [&] {
        Mesh::from_surface(make_icosphere(2, 1.0), "ico", parse_image_planes("z=1e300:rigid"));
      },
      "together with its images across z = 1e+300 rigid");
  // Open at a plane it does not reach.
  const Surface open = kept(make_octasphere(3, 1.0), [](const Vec3& c) { return c.x > 0.3; });
  expect_error_containing(
      [&] { Mesh::from_surface(open, "open", parse_image_planes("x=0:symmetric")); },
      "open only where it meets one of the planes");
  // Elements in a plane: the box [-1/2, 1/2]^3 on z = -1/2, its bottom face in the plane and
  // facing away from the fluid (a rigid plane takes flush elements that face the fluid alone).
  for (const char* kind : {"symmetric", "soft", "rigid"}) {
    const std::string spec = std::string("z=-0.5:") + kind;
    expect_error_containing(
        [&] { Mesh::from_surface(make_box(2, 1.0), "box", parse_image_planes(spec)); },
        kind == std::string("symmetric") ? "must end at a symmetry plane"
        : kind == std::string("soft")    ? "only a rigid plane takes elements flush"
                                         : "facing away from the fluid");
  }
}

TEST(ImagePlanesMesh, FlushElementsFaceTheFluid) {
  // A flat patch of two triangles in z = 0, wholly in a rigid plane (a baffled piston): its side
  // is its normals' (the first triangle's), and its elements are flush.
  Surface disc;
  disc.vertices = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {-1, 0, 0}};
  disc.triangles = {{0, 1, 2}, {0, 2, 3}};
  const Mesh up = Mesh::from_surface(disc, "up", parse_image_planes("z=0:rigid"));
  EXPECT_EQ(up.image_planes().sides()[0], 1);
  EXPECT_TRUE(up.flush(0) && up.flush(1) && up.has_flush_elements());
  EXPECT_GT(up.normals()[0].z, 0.0);
  disc.triangles = {{0, 2, 1}, {0, 3, 2}};
  const Mesh down = Mesh::from_surface(disc, "down", parse_image_planes("z=0:rigid"));
  EXPECT_EQ(down.image_planes().sides()[0], -1);
  EXPECT_TRUE(down.image_planes().in_fluid({0.2, 0.2, -1.0}));
  EXPECT_FALSE(down.image_planes().in_fluid({0.2, 0.2, 1.0}));
  // A hemisphere on the plane is not flush anywhere.
  const Mesh dome = Mesh::from_surface(make_octasphere(2, 1.0, {false, false, true}), "dome",
                                       parse_image_planes("z=0:rigid"));
  EXPECT_FALSE(dome.has_flush_elements());
}

TEST(ImagePlanesMesh, EdgesInAPlanePairAnElementWithItsMirror) {
  // The half's edges in x = 0 are the whole mesh's edges there: the same curvature vector and
  // angle (its other face being the mirror image of the half's).
  const Mesh whole = Mesh::from_surface(make_octasphere(3, 1.0), "whole");
  const Mesh half = Mesh::from_surface(make_octasphere(3, 1.0, {true, false, false}), "half",
                                       parse_image_planes("x=0:symmetric"));
  using Key = std::tuple<long, long, long, long, long, long>;
  const auto key = [](const Mesh& mesh, const MeshEdge& e) {
    const auto r = [](double v) { return std::lround(v * 1e9); };
    Vec3 a = mesh.vertices()[std::size_t(e.vertices[0])],
         b = mesh.vertices()[std::size_t(e.vertices[1])];
    if (std::tie(a.x, a.y, a.z) > std::tie(b.x, b.y, b.z)) std::swap(a, b);
    return Key{r(a.x), r(a.y), r(a.z), r(b.x), r(b.y), r(b.z)};
  };
  std::map<Key, MeshEdge> by_place;
  for (const MeshEdge& e : mesh_edges(whole)) by_place[key(whole, e)] = e;
  std::size_t cut = 0;
  for (const MeshEdge& e : mesh_edges(half)) {
    const auto found = by_place.find(key(half, e));
    ASSERT_NE(found, by_place.end());
    EXPECT_NEAR(norm(e.curvature - found->second.curvature), 0.0, 1e-14);
    EXPECT_NEAR(e.angle, found->second.angle, 1e-14);
    cut += e.faces[0] == e.faces[1];
  }
  EXPECT_EQ(cut, 4u * 8u);  // the great circle x = 0: four octant edges of 2^3 segments each
}

}  // namespace
}  // namespace fmbem
