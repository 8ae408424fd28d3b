// How consistent the collocated hypersingular operator N is. On the unit sphere the
// spherical harmonics are eigenfunctions of the Laplace N: N Y_n = -n(n+1)/(2n+1) Y_n. This
// applies the discrete N (piecewise-constant density at the centroids, the same operator
// bem_solve uses: (D + N) minus D of FmmLayerPotentials with coupling 1 and 0) to Y_1 = z and
// Y_2 ~ xy on icospheres and prints the relative L2 and max errors per level, with the constant
// read of the density (the default rule: 3 points, near radius 2.5; the 7-point rule; a near
// radius of 6) and with the quadratic read (DensityModel::quadratic: 3, 6 and 7 points). The last
// column compares with the derivative along the element's own normal instead of the radius (the
// flat element's normal is tilted by O(h) from the radius at its centroid).
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
  std::printf(
      "| level | N | density read | rule, near radius | n | rel. L2 error of N Y_n | max error "
      "| rel. L2 error along n_e |\n");
  std::printf("|---|---|---|---|---|---|---|---|\n");
  struct Variant {
    int points;
    double near_factor;
    DensityModel model;
  };
  constexpr DensityModel constant = DensityModel::constant, quadratic = DensityModel::quadratic;
  for (const Variant v :
       {Variant{3, 2.5, constant}, Variant{7, 2.5, constant}, Variant{3, 6.0, constant},
        Variant{3, 2.5, quadratic}, Variant{6, 2.5, quadratic}, Variant{7, 2.5, quadratic}})
    for (int level = 2; level <= max_level; ++level) {
      const Mesh mesh = Mesh::from_surface(make_icosphere(level, 1.0), "icosphere");
      const Discretization disc(mesh, v.points);
      const RowRange rows{0, mesh.size()};
      NearFieldOptions near;
      near.near_factor = v.near_factor;
      fmm::FmmOptions fmm_options;
      fmm_options.order = 12;
      const FmmLayerPotentials plain(disc, 0.0, rows, near, fmm_options, nullptr, 0.0, v.model);
      const FmmLayerPotentials with_n(disc, 0.0, rows, near, fmm_options, nullptr, 1.0, v.model);
      for (int n = 1; n <= 2; ++n) {
        std::vector<cplx> u(mesh.size()), d(mesh.size()), dn(mesh.size());
        std::vector<double> exact(mesh.size()), along_normal(mesh.size());
        const double n_eigenvalue = -double(n * (n + 1)) / (2 * n + 1);
        const double d_eigenvalue = -1.0 / (2.0 * (2 * n + 1));  // D's direct value
        for (std::size_t e = 0; e < mesh.size(); ++e) {
          const Vec3 c = mesh.centroids()[e], r = c * (1.0 / norm(c));
          // The harmonic at the centroid's direction (its value at the centroid itself would add
          // the O(h^2) element-to-element scatter of |c| to the density).
          const double y = n == 1 ? r.z : r.x * r.y;
          u[e] = y;
          exact[e] = n_eigenvalue * y;
          // The element's normal n_e is tilted from the radius by O(h) (the centroid is not the
          // circumcentre): the derivative along n_e of D Y_n, averaged over the two sides, is
          // n_eigenvalue Y_n (n_e . r) + d_eigenvalue n_e . grad_surface Y_n.
          const Vec3& normal = mesh.normals()[e];
          const Vec3 grad = n == 1 ? Vec3{0, 0, 1} : Vec3{r.y, r.x, 0};
          const Vec3 surface_grad = grad - r * dot(r, grad);
          along_normal[e] =
              n_eigenvalue * y * dot(normal, r) + d_eigenvalue * dot(normal, surface_grad);
        }
        plain.apply(u, {}, d);
        with_n.apply(u, {}, dn);
        double error2 = 0.0, exact2 = 0.0, worst = 0.0, tilted2 = 0.0;
        for (std::size_t e = 0; e < mesh.size(); ++e) {
          const double got = (dn[e] - d[e]).real(), w = mesh.areas()[e];
          error2 += w * (got - exact[e]) * (got - exact[e]);
          exact2 += w * exact[e] * exact[e];
          worst = std::max(worst, std::abs(got - exact[e]));
          tilted2 += w * (got - along_normal[e]) * (got - along_normal[e]);
        }
        std::printf("| %d | %zu | %s | %d points, %.1f | %d | %.3e | %.3e | %.3e |\n", level,
                    mesh.size(), v.model == constant ? "constant" : "quadratic", v.points,
                    v.near_factor, n, std::sqrt(error2 / exact2), worst,
                    std::sqrt(tilted2 / exact2));
        std::fflush(stdout);
      }
    }
}
