// Issue 10, single density: the collocated adjoint double layer D' on icospheres, with and
// without the curvature correction (curvature_correction.hpp, docs/burton-miller.md).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <numbers>
#include <vector>

#include "fmbem/bem/curvature_correction.hpp"
#include "fmbem/bem/direct_layer_potentials.hpp"
#include "fmbem/mesh/mesh.hpp"

namespace fmbem {
namespace {

TEST(CurvatureCorrection, CurvatureVectorsOfAClosedSurface) {
  // Summed over a closed polyhedron the edge vectors v_e |e| cancel (the integral of 2 H n over
  // a closed surface is 0), and their normal parts add up to the total mean curvature, 8 pi on
  // the unit sphere (Steiner), the inscribed polyhedron's falling like h^2: 4 a level.
  double previous = 0.0;
  for (int level = 1; level <= 4; ++level) {
    const Mesh mesh = Mesh::from_surface(make_icosphere(level, 1.0), "icosphere");
    const std::vector<Vec3> w = element_curvature_vectors(mesh);
    Vec3 total{0.0, 0.0, 0.0};
    double normal_part = 0.0, magnitude = 0.0;
    for (std::size_t j = 0; j < mesh.size(); ++j) {
      total = total + w[j] * mesh.areas()[j];
      normal_part += dot(w[j], mesh.normals()[j]) * mesh.areas()[j];
      magnitude += norm(w[j]) * mesh.areas()[j];
    }
    EXPECT_LT(norm(total), 1e-13 * magnitude) << level;
    const double error = std::abs(normal_part - 8.0 * std::numbers::pi);
    if (level > 1) EXPECT_LT(error, previous / 3.5) << level;
    previous = error;
  }
}

// The relative L2 error of the discrete D' (k = 0, direct backend, 3-point rule) applied to
// Y_1 = z and Y_2 ~ xy at the centroids' directions, against the exact value along each
// element's normal: D' Y_n = -Y_n / (2(2n+1)) radially plus (S Y_n = Y_n / (2n+1))'s tangential
// derivative times the normal's O(h) tilt.
struct DprimeErrors {
  double plain[2], corrected[2];
};

DprimeErrors dprime_errors(int level) {
  const Mesh mesh = Mesh::from_surface(make_icosphere(level, 1.0), "icosphere");
  const Discretization disc(mesh, 3);
  const std::size_t size = mesh.size();
  const RowRange rows{0, size};
  const NearFieldOptions near;
  const DirectLayerPotentials plain(disc, 0.0, rows, near);
  const DirectLayerPotentials coupled(disc, 0.0, rows, near, cplx(1.0));
  const std::vector<double> c = adjoint_double_layer_curvature_correction(mesh, plain, coupled);
  DprimeErrors out{};
  for (int n = 1; n <= 2; ++n) {
    std::vector<cplx> u(size), s(size), sd(size);
    std::vector<double> exact(size);
    const double s_eigenvalue = 1.0 / (2 * n + 1), d_eigenvalue = -0.5 * s_eigenvalue;
    for (std::size_t e = 0; e < size; ++e) {
      const Vec3 r = mesh.centroids()[e] * (1.0 / norm(mesh.centroids()[e]));
      const Vec3 grad = n == 1 ? Vec3{0, 0, 1} : Vec3{r.y, r.x, 0};
      const Vec3& normal = mesh.normals()[e];
      u[e] = n == 1 ? r.z : r.x * r.y;
      exact[e] = d_eigenvalue * u[e].real() * dot(normal, r) +
                 s_eigenvalue * dot(normal, grad - r * dot(r, grad));
    }
    plain.apply({}, u, s);
    coupled.apply({}, u, sd);
    double plain2 = 0.0, corrected2 = 0.0, exact2 = 0.0;
    for (std::size_t e = 0; e < size; ++e) {
      const double got = (sd[e] - s[e]).real(), w = mesh.areas()[e];
      const double fixed = got + c[e] * u[e].real();
      plain2 += w * (got - exact[e]) * (got - exact[e]);
      corrected2 += w * (fixed - exact[e]) * (fixed - exact[e]);
      exact2 += w * exact[e] * exact[e];
    }
    out.plain[n - 1] = std::sqrt(plain2 / exact2);
    out.corrected[n - 1] = std::sqrt(corrected2 / exact2);
  }
  return out;
}

TEST(CurvatureCorrection, AdjointDoubleLayerConvergesOnTheSphere) {
  // Without the correction D' is O(h) off on every density (the edges' curvature next to the
  // collocation point; constants too): the error halves a level (h halves; measured ratios 1.93
  // to 1.96), 25 % and 41 % on icosphere:2. With it the error falls like h^1.5 to h^2 (the
  // exact sphere curvature gives 4.2 a level, the edge-spread estimate 2.85 to 3.3: measured
  // 1.81e-2, 6.13e-3, 2.15e-3 for Y_1 and 3.66e-2, 1.12e-2, 3.72e-3 for Y_2 on icosphere:2..4).
  // Bounds: the plain ratio within 1.8..2.2 (O(h)); the corrected one above 2.6 (faster than
  // h^1.35) and the corrected error below a tenth of the plain one from icosphere:3 on.
  DprimeErrors previous{};
  for (int level = 2; level <= 4; ++level) {
    const DprimeErrors e = dprime_errors(level);
    std::printf("icosphere:%d  D' Y_1: %.3e plain, %.3e corrected;  D' Y_2: %.3e, %.3e\n", level,
                e.plain[0], e.corrected[0], e.plain[1], e.corrected[1]);
    for (int n = 0; n < 2; ++n) {
      if (level > 2) {
        const double plain_ratio = previous.plain[n] / e.plain[n];
        EXPECT_GT(plain_ratio, 1.8) << level << " Y_" << n + 1;
        EXPECT_LT(plain_ratio, 2.2) << level << " Y_" << n + 1;
        EXPECT_GT(previous.corrected[n] / e.corrected[n], 2.6) << level << " Y_" << n + 1;
        EXPECT_LT(e.corrected[n], 0.1 * e.plain[n]) << level << " Y_" << n + 1;
      }
    }
    previous = e;
  }
}

}  // namespace
}  // namespace fmbem
