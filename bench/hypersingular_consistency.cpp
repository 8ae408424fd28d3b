// Issue 10: how consistent the collocated hypersingular operator N is. On the unit sphere the
// spherical harmonics are eigenfunctions of the Laplace N: N Y_n = -n(n+1)/(2n+1) Y_n. This
// applies the discrete N (piecewise-constant density at the centroids, the same operator
// bem_solve uses: (D + N) minus D of FmmLayerPotentials with coupling 1 and 0) to Y_1 = z and
// Y_2 ~ xy on icospheres and prints the relative L2 and max errors per level, with the default
// rule (3 points, near radius 2.5), the 7-point rule, and a near radius of 6.
//   hypersingular_consistency [MAX_LEVEL=5]
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "fmbem/bem/fmm_layer_potentials.hpp"
#include "fmbem/mesh/mesh.hpp"

using namespace fmbem;

int main(int argc, char** argv) {
  const int max_level = argc > 1 ? std::atoi(argv[1]) : 5;
  std::printf("| level | N | rule, near radius | n | rel. L2 error of N Y_n | max error |\n");
  std::printf("|---|---|---|---|---|---|\n");
  struct Variant {
    int points;
    double near_factor;
  };
  for (const Variant v : {Variant{3, 2.5}, Variant{7, 2.5}, Variant{3, 6.0}})
    for (int level = 2; level <= max_level; ++level) {
      const Mesh mesh = Mesh::from_surface(make_icosphere(level, 1.0), "icosphere");
      const Discretization disc(mesh, v.points);
      const RowRange rows{0, mesh.size()};
      NearFieldOptions near;
      near.near_factor = v.near_factor;
      fmm::FmmOptions fmm_options;
      fmm_options.order = 12;
      const FmmLayerPotentials plain(disc, 0.0, rows, near, fmm_options, nullptr, 0.0);
      const FmmLayerPotentials with_n(disc, 0.0, rows, near, fmm_options, nullptr, 1.0);
      for (int n = 1; n <= 2; ++n) {
        std::vector<cplx> u(mesh.size()), d(mesh.size()), dn(mesh.size());
        std::vector<double> exact(mesh.size());
        for (std::size_t e = 0; e < mesh.size(); ++e) {
          const Vec3 c = mesh.centroids()[e], on_sphere = c * (1.0 / norm(c));
          u[e] = n == 1 ? c.z : c.x * c.y;
          exact[e] = (n == 1 ? on_sphere.z : on_sphere.x * on_sphere.y) *
                     (-double(n * (n + 1)) / (2 * n + 1));
        }
        plain.apply(u, {}, d);
        with_n.apply(u, {}, dn);
        double error2 = 0.0, exact2 = 0.0, worst = 0.0;
        for (std::size_t e = 0; e < mesh.size(); ++e) {
          const double got = (dn[e] - d[e]).real(), w = mesh.areas()[e];
          error2 += w * (got - exact[e]) * (got - exact[e]);
          exact2 += w * exact[e] * exact[e];
          worst = std::max(worst, std::abs(got - exact[e]));
        }
        std::printf("| %d | %zu | %d points, %.1f | %d | %.3e | %.3e |\n", level, mesh.size(),
                    v.points, v.near_factor, n, std::sqrt(error2 / exact2), worst);
      }
    }
}
