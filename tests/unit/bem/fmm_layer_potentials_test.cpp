#include <gtest/gtest.h>

#include <cmath>
#include <ostream>
#include <random>

#include "bem_test_support.hpp"
#include "fmbem/bem/direct_layer_potentials.hpp"
#include "fmbem/bem/fmm_layer_potentials.hpp"
#include "fmbem/core/error.hpp"
#include "fmbem/mesh/mesh.hpp"

namespace fmbem {
namespace {

using test::random_density;
using test::relative_error;

// Surface of the box [-1.5, 1.5] x [-0.5, 0.5] x [-0.5, 0.5], each unit
// square face split into n x n squares of two triangles: sharp edges and a
// non-spherical, elongated tree.
Surface make_box(int n) {
  Surface s;
  const int nx = 3 * n;
  auto add_face = [&](int axis, double side, int cells_u, int cells_v, double u0, double v0) {
    const int first = static_cast<int>(s.vertices.size());
    const double h = 1.0 / n;
    for (int j = 0; j <= cells_v; ++j)
      for (int i = 0; i <= cells_u; ++i) {
        double c[3];
        c[axis] = side;
        c[(axis + 1) % 3] = u0 + i * h;
        c[(axis + 2) % 3] = v0 + j * h;
        s.vertices.push_back({c[0], c[1], c[2]});
      }
    for (int j = 0; j < cells_v; ++j)
      for (int i = 0; i < cells_u; ++i) {
        const int a = first + j * (cells_u + 1) + i, b = a + 1, c = a + cells_u + 1, d = c + 1;
        s.triangles.push_back({a, b, d});
        s.triangles.push_back({a, d, c});
      }
  };
  // (axis + 1, axis + 2) spans: x face -> (y, z), y face -> (z, x), z face -> (x, y).
  for (double side : {-1.5, 1.5}) add_face(0, side, n, n, -0.5, -0.5);
  for (double side : {-0.5, 0.5}) add_face(1, side, n, nx, -0.5, -1.5);
  for (double side : {-0.5, 0.5}) add_face(2, side, nx, n, -1.5, -0.5);
  return s;  // coincident edge vertices are merged by Mesh::from_surface
}

struct Case {
  const char* name;
  bool sphere;
  double k;
  // Measured relative 2-norm errors of D u + S q at p = 8 and 16 (2026-11-23).
  double measured_p8, measured_p16;
};

// gtest prints parameters in CTest's test names: readable and the same in every build (its
// default prints the struct's bytes, pointers and padding included).
void PrintTo(const Case& c, std::ostream* os) { *os << c.name << ", k = " << c.k; }

class FmmOperator : public ::testing::TestWithParam<Case> {};

// The FMM MatMult against the direct one on random densities for both layers.
// The bound is twice the measured error: the error is deterministic (fixed
// mesh, densities and tree), so the factor only absorbs rounding and
// compiler differences, while a lost term or a wrong translation (errors of
// 1e-2 or more) fails at once.
TEST_P(FmmOperator, MatchesDirectOperator) {
  const Case c = GetParam();
  const Mesh mesh = Mesh::from_surface(c.sphere ? make_icosphere(3, 1.0) : make_box(12), c.name);
  const Discretization disc(mesh, 3);
  const RowRange rows{0, disc.size()};
  const NearFieldOptions near;
  const DirectLayerPotentials direct(disc, c.k, rows, near);
  const auto dd = random_density(disc.size(), 1), sd = random_density(disc.size(), 2);
  std::vector<cplx> reference(disc.size());
  direct.apply(dd, sd, reference);
  double previous = 1.0;
  for (int p : {4, 8, 12, 16}) {
    const FmmLayerPotentials fmm(disc, c.k, rows, near, fmm::FmmOptions{p, 0.0, 30});
    std::vector<cplx> y(disc.size());
    fmm.apply(dd, sd, y);
    const double error = relative_error(y, reference);
    std::printf("%s k %g p %d levels %d error %.3e\n", c.name, c.k, p,
                fmm.fmm().statistics().levels, error);
    EXPECT_LT(error, previous) << "p " << p;
    previous = error;
    if (p == 8) EXPECT_LT(error, 2.0 * c.measured_p8);
    if (p == 16) EXPECT_LT(error, 2.0 * c.measured_p16);
  }
}

// Where no GPU can be used: the correction's entries asked for on it are one error that says
// why, and layers whose FMM may use one ("automatic") stay on the CPU with the CPU's answer.
TEST(FmmLayerPotentials, AMissingGpuIsOneClearErrorOrTheCpu) {
  std::string why;
  if (fmm::gpu_available(&why)) GTEST_SKIP() << "a GPU is present";
  const Mesh mesh = Mesh::from_surface(make_icosphere(2, 1.0), "sphere");
  const Discretization disc(mesh, 3);
  const RowRange rows{0, disc.size()};
  NearFieldOptions near;
  near.gpu = true;
  try {
    const NearFieldCorrection correction(disc, 2.0, rows, near);
    FAIL() << "entries on a GPU that is not there";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "the near-field correction on the GPU: " + why);
  }
  near.gpu = false;
  fmm::FmmOptions options{6, 0.0, 30};
  const FmmLayerPotentials cpu(disc, 2.0, rows, near, options);
  options.device = fmm::FmmOptions::Device::automatic;
  const FmmLayerPotentials automatic(disc, 2.0, rows, near, options);
  EXPECT_FALSE(automatic.resident_on_device());
  EXPECT_FALSE(automatic.near_field().on_device());
  const auto dd = random_density(disc.size(), 3), sd = random_density(disc.size(), 4);
  std::vector<cplx> expected(disc.size()), y(disc.size());
  cpu.apply(dd, sd, expected);
  automatic.apply(dd, sd, y);
  EXPECT_EQ(y, expected);
}

INSTANTIATE_TEST_SUITE_P(Meshes, FmmOperator,
                         ::testing::Values(Case{"sphere", true, 8.0, 5.46e-4, 3.13e-7},
                                           Case{"sphere", true, 0.0, 1.87e-4, 4.46e-7},
                                           Case{"box", false, 8.0, 2.60e-3, 1.02e-6},
                                           Case{"box", false, 0.0, 1.93e-4, 1.44e-6}),
                         [](const auto& info) {
                           return std::string(info.param.name) +
                                  (info.param.k == 0.0 ? "_laplace" : "_k8");
                         });

}  // namespace
}  // namespace fmbem
