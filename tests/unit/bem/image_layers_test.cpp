// The layer potentials of a mesh part with image planes against the whole mesh: a part's layers
// applied to a density are the whole body's applied to the density and its signed images, at the
// part's rows. The same integrals summed in another order: equal to rounding.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <map>
#include <memory>
#include <numbers>
#include <string>
#include <tuple>
#include <vector>

#include "bem_test_support.hpp"
#include "fmbem/bem/curvature_correction.hpp"
#include "fmbem/bem/direct_layer_potentials.hpp"
#include "fmbem/bem/discretization.hpp"
#include "fmbem/bem/fmm_layer_potentials.hpp"
#include "fmbem/core/error.hpp"
#include "fmbem/mesh/feature_edges.hpp"
#include "fmbem/mesh/mesh.hpp"

namespace fmbem {
namespace {

constexpr double kK = 3.0;
const double kFeatureAngle = kDefaultFeatureAngleDegrees * std::numbers::pi / 180.0;

// A part of the octasphere (the coordinates of `axes` >= 0) with its planes, the whole sphere, and
// for each part element and image the whole's element there.
struct PartAndWhole {
  Mesh whole, part;
  std::vector<std::vector<std::size_t>> whole_element;  // [image][part element]
};

PartAndWhole part_and_whole(const std::string& axes, const std::string& planes) {
  std::array<bool, 3> keep{};
  for (char a : axes) keep[std::size_t(a - 'x')] = true;
  PartAndWhole s{
      Mesh::from_surface(make_octasphere(3, 1.0), "whole"),
      Mesh::from_surface(make_octasphere(3, 1.0, keep), "part", parse_image_planes(planes)),
      {}};
  using Key = std::tuple<long, long, long>;
  const auto key = [](const Vec3& c) {
    return Key{std::lround(c.x * 1e9), std::lround(c.y * 1e9), std::lround(c.z * 1e9)};
  };
  std::map<Key, std::size_t> at;
  for (std::size_t e = 0; e < s.whole.size(); ++e) at[key(s.whole.centroids()[e])] = e;
  const ImagePlanes& images = s.part.image_planes();
  s.whole_element.resize(images.images());
  for (std::size_t g = 0; g < images.images(); ++g)
    for (std::size_t e = 0; e < s.part.size(); ++e)
      s.whole_element[g].push_back(at.at(key(images.reflect(g, s.part.centroids()[e]))));
  return s;
}

// The whole's density of a part density: on each image, the image's sign times it.
std::vector<cplx> whole_density(const PartAndWhole& s, const std::vector<cplx>& part) {
  std::vector<cplx> whole(s.whole.size(), cplx(std::nan(""), 0.0));
  const ImagePlanes& images = s.part.image_planes();
  for (std::size_t g = 0; g < images.images(); ++g)
    for (std::size_t e = 0; e < part.size(); ++e)
      whole[s.whole_element[g][e]] = images.sign(g) * part[e];
  return whole;
}

// max |a_part - a_whole at the part's rows| / max |a_whole| over `outputs` blocks of rows.
double part_difference(const PartAndWhole& s, const std::vector<cplx>& part,
                       const std::vector<cplx>& whole, int outputs) {
  double worst = 0.0, largest = 0.0;
  const std::size_t n = s.part.size(), w = s.whole.size();
  for (int o = 0; o < outputs; ++o)
    for (std::size_t e = 0; e < n; ++e) {
      const cplx reference = whole[std::size_t(o) * w + s.whole_element[0][e]];
      worst = std::max(worst, std::abs(part[std::size_t(o) * n + e] - reference));
      largest = std::max(largest, std::abs(reference));
    }
  return worst / largest;
}

// The curvature correction's operator maker: direct Laplace layers with the weights asked for.
LayerMaker direct_maker(const Discretization& disc, cplx coupling) {
  return [&disc, coupling](const std::vector<double>& weights) {
    NearFieldOptions near;
    near.image_weights = weights;
    return std::unique_ptr<LayerPotentials>(std::make_unique<DirectLayerPotentials>(
        disc, 0.0, RowRange{0, disc.size()}, near, coupling));
  };
}

struct Case {
  const char* axes;
  const char* planes;
};
const Case kCases[] = {{"x", "x=0:symmetric"},
                       {"x", "x=0:antisymmetric"},
                       {"xz", "x=0:antisymmetric,z=0:soft"},
                       {"xyz", "x=0:rigid,y=0:symmetric,z=0:antisymmetric"}};

TEST(ImageLayers, DirectLayersEqualTheWholeBodysOnSignedImages) {
  for (const Case& c : kCases)
    for (const DensityModel model : {DensityModel::constant, DensityModel::quadratic})
      for (const LayerCoupling coupling : {LayerCoupling(0.0), LayerCoupling(cplx(0.0, 1.0 / kK)),
                                           LayerCoupling::derivative_apart()}) {
        const PartAndWhole s = part_and_whole(c.axes, c.planes);
        const Discretization part_disc(s.part, 6), whole_disc(s.whole, 6);
        const NearFieldOptions near;
        const DirectLayerPotentials part(part_disc, kK, {0, s.part.size()}, near, coupling, model);
        const DirectLayerPotentials whole(whole_disc, kK, {0, s.whole.size()}, near, coupling,
                                          model);
        const std::vector<cplx> u = test::random_density(s.part.size(), 7),
                                q = test::random_density(s.part.size(), 8);
        const int outputs = coupling.outputs();
        std::vector<cplx> y_part(std::size_t(outputs) * s.part.size()),
            y_whole(std::size_t(outputs) * s.whole.size());
        part.apply(u, q, y_part);
        whole.apply(whole_density(s, u), whole_density(s, q), y_whole);
        // Rounding of sums of O(N) terms of O(1): 1e-12 of the largest entry.
        EXPECT_LT(part_difference(s, y_part, y_whole, outputs), 1e-12)
            << c.planes << " quadratic " << (model == DensityModel::quadratic) << " outputs "
            << outputs << " alpha " << coupling.alpha;
        // The diagonals are the real element's own (no image holds its collocation point).
        for (std::size_t e = 0; e < s.part.size(); ++e)
          if (model == DensityModel::constant)
            EXPECT_NEAR(std::abs(part.single_layer_diagonal()[e] -
                                 whole.single_layer_diagonal()[s.whole_element[0][e]]),
                        0.0, 1e-14);
      }
}

TEST(ImageLayers, FmmLayersEqualTheDirectOnes) {
  // The FMM with the images' collocation points as further targets, against the direct sum with
  // images: to the FMM's tolerance (1e-8 asked, 1e-7 of the largest entry allowed).
  for (const Case& c : kCases) {
    const PartAndWhole s = part_and_whole(c.axes, c.planes);
    const Discretization disc(s.part, 6);
    const NearFieldOptions near;
    fmm::FmmOptions options;
    options.tolerance = 1e-8;
    options.max_leaf = 16;
    const LayerCoupling coupling(cplx(0.0, 1.0 / kK));
    const FmmLayerPotentials fast(disc, kK, {0, s.part.size()}, near, options, nullptr, coupling,
                                  DensityModel::quadratic);
    const DirectLayerPotentials direct(disc, kK, {0, s.part.size()}, near, coupling,
                                       DensityModel::quadratic);
    const std::vector<cplx> u = test::random_density(s.part.size(), 3),
                            q = test::random_density(s.part.size(), 4);
    std::vector<cplx> y_fast(s.part.size()), y_direct(s.part.size());
    fast.apply(u, q, y_fast);
    direct.apply(u, q, y_direct);
    double worst = 0.0, largest = 0.0;
    for (std::size_t e = 0; e < y_fast.size(); ++e) {
      worst = std::max(worst, std::abs(y_fast[e] - y_direct[e]));
      largest = std::max(largest, std::abs(y_direct[e]));
    }
    EXPECT_LT(worst / largest, 1e-7) << c.planes;
  }
}

TEST(ImageLayers, CurvatureCorrectionIsTheWholeBodys) {
  // The correction from the union's identity (image weights per vector component) equals the
  // whole mesh's at the part's rows: the same integrals, to rounding.
  for (const Case& c : kCases) {
    const PartAndWhole s = part_and_whole(c.axes, c.planes);
    const Discretization part_disc(s.part, 3), whole_disc(s.whole, 3);
    const std::vector<double> part = adjoint_double_layer_curvature_correction(
        s.part, direct_maker(part_disc, 0.0), direct_maker(part_disc, 1.0), kFeatureAngle);
    const std::vector<double> whole = adjoint_double_layer_curvature_correction(
        s.whole, direct_maker(whole_disc, 0.0), direct_maker(whole_disc, 1.0), kFeatureAngle);
    double worst = 0.0, largest = 0.0;
    for (std::size_t e = 0; e < s.part.size(); ++e) {
      worst = std::max(worst, std::abs(part[e] - whole[s.whole_element[0][e]]));
      largest = std::max(largest, std::abs(whole[s.whole_element[0][e]]));
    }
    EXPECT_LT(worst / largest, 1e-10) << c.planes;
    // The form with the operators given refuses planes (their weights are the maker's to set).
    const DirectLayerPotentials plain(part_disc, 0.0, {0, s.part.size()}, NearFieldOptions{});
    const DirectLayerPotentials coupled(part_disc, 0.0, {0, s.part.size()}, NearFieldOptions{},
                                        1.0);
    EXPECT_THROW(adjoint_double_layer_curvature_correction(s.part, plain, coupled, kFeatureAngle),
                 Error);
  }
}

TEST(ImageLayers, CurvatureCorrectionOfABoxOnItsPlane) {
  // Feature edges with images: the cube [-1/2, 1/2]^3 cut at x = 0 (its edges in the plane are
  // smooth there, the cube's own edges are features), against the whole cube made of the half and
  // its mirror image (make_box's diagonals are not mirror-symmetric, and the correction on a
  // polyhedron is the quadrature's error, which depends on them).
  const Surface box = make_box(4, 1.0);
  Surface half_box = box, mirrored = box;
  half_box.triangles.clear();
  for (const Triangle& t : box.triangles) {
    const double cx = (box.vertices[std::size_t(t[0])].x + box.vertices[std::size_t(t[1])].x +
                       box.vertices[std::size_t(t[2])].x) /
                      3.0;
    if (cx > 0.0) half_box.triangles.push_back(t);
  }
  const std::int32_t shift = std::int32_t(box.vertices.size());
  for (const Vec3& v : box.vertices) mirrored.vertices.push_back({-v.x, v.y, v.z});
  mirrored.triangles = half_box.triangles;
  for (const Triangle& t : half_box.triangles)
    mirrored.triangles.push_back({t[0] + shift, t[2] + shift, t[1] + shift});
  const Mesh whole = Mesh::from_surface(mirrored, "box");
  const Mesh half = Mesh::from_surface(half_box, "half box", parse_image_planes("x=0:soft"));
  const Discretization half_disc(half, 3), whole_disc(whole, 3);
  const std::vector<double> c_half = adjoint_double_layer_curvature_correction(
      half, direct_maker(half_disc, 0.0), direct_maker(half_disc, 1.0), kFeatureAngle);
  const std::vector<double> c_whole = adjoint_double_layer_curvature_correction(
      whole, direct_maker(whole_disc, 0.0), direct_maker(whole_disc, 1.0), kFeatureAngle);
  std::map<std::tuple<long, long, long>, std::size_t> at;
  for (std::size_t e = 0; e < whole.size(); ++e) {
    const Vec3& c = whole.centroids()[e];
    at[{std::lround(c.x * 1e9), std::lround(c.y * 1e9), std::lround(c.z * 1e9)}] = e;
  }
  double worst = 0.0, largest = 0.0;
  for (std::size_t e = 0; e < half.size(); ++e) {
    const Vec3& c = half.centroids()[e];
    const double reference =
        c_whole[at.at({std::lround(c.x * 1e9), std::lround(c.y * 1e9), std::lround(c.z * 1e9)})];
    worst = std::max(worst, std::abs(c_half[e] - reference));
    largest = std::max(largest, std::abs(reference));
  }
  EXPECT_GT(largest, 0.0);
  EXPECT_LT(worst / largest, 1e-10);
}

}  // namespace
}  // namespace fmbem
