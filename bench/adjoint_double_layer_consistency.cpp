// Burton-Miller on the single density: how consistent the collocated adjoint double layer D' is on
// icospheres. On the unit sphere at k = 0, D' Y_n = -Y_n / (2(2n+1)) (S Y_n = Y_n / (2n+1)).
// This applies the discrete D' ((S + D') minus S of FmmLayerPotentials with coupling 1 and 0:
// the operator bem_solve's Burton-Miller uses on the single density) to Y_0 = 1, Y_1 = z and
// Y_2 ~ xy sampled at the centroids' directions and prints the relative L2 error per level,
// against the derivative along the element's own normal n_e (what the collocated equation and
// its right-hand side use; the radial reference differs by the O(h) tilt of n_e).
//
// Rows: the regular rule (3 or 6 points; the single density is read as a constant), and the
// same operator plus the curvature correction c_i q_i of docs/burton-miller.md: on a closed
// surface D'[1](x) = -n_x . integral of 2 H n G - integral of (n_x . n) dG/dn_y (the surface
// divergence theorem); on the polyhedron the mean curvature H sits on the edges, and
//   c_i = n_i . (sum over edges of v_e integral over e of G  -  sum over elements of w_j S_ij)
// moves it onto the elements (v_e the sum of the two faces' outward in-plane edge normals, w_j
// the element's curvature vector 2 H n: "edges" = half of each edge's v_e |e| / A_j, "sphere" =
// the exact 2 r for the unit sphere). Laplace, every pair (O(N^2)): a measurement, not a method.
//   adjoint_double_layer_consistency [MAX_LEVEL=4]
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <vector>

#include "fmbem/bem/fmm_layer_potentials.hpp"
#include "fmbem/bem/hypersingular_integrals.hpp"
#include "fmbem/kernel/kernel.hpp"
#include "fmbem/mesh/mesh.hpp"
#include "fmbem/quadrature/triangle_rule.hpp"

using namespace fmbem;

namespace {

// Integral over the segment [a, b] of 1 / (4 pi |x - y|) (x off the segment's line).
double edge_single_layer(const Vec3& x, const Vec3& a, const Vec3& b) {
  const double length = norm(b - a);
  const Vec3 unit = (b - a) * (1.0 / length);
  const double t1 = dot(a - x, unit), t2 = dot(b - x, unit);
  const double dist = norm((a - x) - unit * t1);
  return (std::asinh(t2 / dist) - std::asinh(t1 / dist)) * inv_4pi;
}

enum class Curvature { none, edges, diamonds, sphere };

// c_i (see above); the close pairs' S by hypersingular_integrals, the rest by the 7-point rule.
std::vector<double> curvature_correction(const Mesh& mesh, Curvature curvature) {
  const std::size_t n = mesh.size();
  std::vector<double> c(n, 0.0);
  if (curvature == Curvature::none) return c;
  struct Edge {
    Vec3 a, b, v;
  };
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::vector<std::size_t>> faces_of;
  for (std::size_t e = 0; e < n; ++e)
    for (int k = 0; k < 3; ++k) {
      const std::uint32_t a = mesh.triangles()[e][k], b = mesh.triangles()[e][(k + 1) % 3];
      faces_of[{std::min(a, b), std::max(a, b)}].push_back(e);
    }
  std::vector<Edge> edges;
  std::vector<Vec3> w(n, Vec3{0, 0, 0});
  for (const auto& [key, faces] : faces_of) {
    const Vec3 a = mesh.vertices()[key.first], b = mesh.vertices()[key.second];
    Vec3 v{0, 0, 0};
    for (const std::size_t f : faces) {
      Vec3 m = normalized(cross(b - a, mesh.normals()[f]));
      if (dot(m, (a + b) * 0.5 - mesh.centroids()[f]) < 0) m = m * -1.0;
      v = v + m;
    }
    edges.push_back({a, b, v});
    double diamond = 0.0;
    for (const std::size_t f : faces) diamond += mesh.areas()[f];
    for (const std::size_t f : faces)
      w[f] = w[f] + v * (curvature == Curvature::diamonds ? norm(b - a) / diamond
                                                          : 0.5 * norm(b - a) / mesh.areas()[f]);
  }
  if (curvature == Curvature::sphere)
    for (std::size_t j = 0; j < n; ++j)
      w[j] = mesh.centroids()[j] * (2.0 / norm(mesh.centroids()[j]));
  const NearFieldPattern close = near_field_pattern(mesh, RowRange{0, n}, 2.5);
  const GaussLegendre angular(16);
  const TriangleRule& rule = triangle_rule(7);
#pragma omp parallel for schedule(dynamic, 16)
  for (std::size_t i = 0; i < n; ++i) {
    const Vec3 &x = mesh.centroids()[i], &n_i = mesh.normals()[i];
    double on_edges = 0.0, on_faces = 0.0;
    for (const Edge& e : edges) on_edges += dot(n_i, e.v) * edge_single_layer(x, e.a, e.b);
    std::int64_t at = close.row_start[i];
    for (std::size_t j = 0; j < n; ++j) {
      double s = 0.0;
      if (at < close.row_start[i + 1] && std::size_t(close.columns[std::size_t(at)]) == j) {
        s = hypersingular_integrals(0.0, mesh.corner(j, 0), mesh.corner(j, 1), mesh.corner(j, 2), x,
                                    n_i, angular)
                .single_layer.real();
        ++at;
      } else {
        for (std::size_t q = 0; q < rule.size(); ++q) {
          const auto& l = rule.barycentric[q];
          const Vec3 y =
              mesh.corner(j, 0) * l[0] + mesh.corner(j, 1) * l[1] + mesh.corner(j, 2) * l[2];
          s += rule.weights[q] * mesh.areas()[j] * inv_4pi / norm(x - y);
        }
      }
      on_faces += dot(n_i, w[j]) * s;
    }
    c[i] = on_edges - on_faces;
  }
  return c;
}

}  // namespace

int main(int argc, char** argv) {
  const int max_level = argc > 1 ? std::atoi(argv[1]) : 4;
  std::printf(
      "| level | N | rule | curvature correction | rel. L2 error of D' Y_0 | D' Y_1 | D' Y_2 | "
      "D' Y_1, radial reference |\n");
  std::printf("|---|---|---|---|---|---|---|---|\n");
  for (int level = 2; level <= max_level; ++level) {
    const Mesh mesh = Mesh::from_surface(make_icosphere(level, 1.0), "icosphere");
    const std::size_t size = mesh.size();
    const RowRange rows{0, size};
    for (const int points : {3, 6}) {
      const Discretization disc(mesh, points);
      fmm::FmmOptions fmm_options;
      fmm_options.order = 12;
      const NearFieldOptions near;
      const FmmLayerPotentials plain(disc, 0.0, rows, near, fmm_options, nullptr, 0.0);
      const FmmLayerPotentials with_d(disc, 0.0, rows, near, fmm_options, nullptr, 1.0);
      std::vector<std::vector<double>> density(3, std::vector<double>(size)),
          applied(3, std::vector<double>(size)), along_normal(3, std::vector<double>(size)),
          radial(3, std::vector<double>(size));
      for (int n = 0; n <= 2; ++n) {
        std::vector<cplx> u(size), s(size), sd(size);
        const double s_eigenvalue = 1.0 / (2 * n + 1), d_eigenvalue = -0.5 * s_eigenvalue;
        for (std::size_t e = 0; e < size; ++e) {
          const Vec3 r = mesh.centroids()[e] * (1.0 / norm(mesh.centroids()[e]));
          const double y = n == 0 ? 1.0 : n == 1 ? r.z : r.x * r.y;
          const Vec3 grad = n == 0 ? Vec3{0, 0, 0} : n == 1 ? Vec3{0, 0, 1} : Vec3{r.y, r.x, 0};
          const Vec3 surface_grad = grad - r * dot(r, grad);
          const Vec3& normal = mesh.normals()[e];
          u[e] = y;
          density[n][e] = y;
          radial[n][e] = d_eigenvalue * y;
          along_normal[n][e] =
              d_eigenvalue * y * dot(normal, r) + s_eigenvalue * dot(normal, surface_grad);
        }
        plain.apply({}, u, s);
        with_d.apply({}, u, sd);
        for (std::size_t e = 0; e < size; ++e) applied[n][e] = (sd[e] - s[e]).real();
      }
      for (const Curvature curvature :
           {Curvature::none, Curvature::edges, Curvature::diamonds, Curvature::sphere}) {
        if (points == 6 && curvature != Curvature::none) continue;
        const std::vector<double> c = curvature_correction(mesh, curvature);
        const auto error = [&](int n, const std::vector<double>& exact) {
          double error2 = 0.0, exact2 = 0.0;
          for (std::size_t e = 0; e < size; ++e) {
            const double got = applied[std::size_t(n)][e] + c[e] * density[std::size_t(n)][e];
            const double d = got - exact[e], w = mesh.areas()[e];
            error2 += w * d * d;
            exact2 += w * exact[e] * exact[e];
          }
          return std::sqrt(error2 / exact2);
        };
        std::printf("| %d | %zu | %d points | %s | %.3e | %.3e | %.3e | %.3e |\n", level, size,
                    points,
                    curvature == Curvature::none       ? "none"
                    : curvature == Curvature::edges    ? "edges (faces split)"
                    : curvature == Curvature::diamonds ? "edges (diamonds)"
                                                       : "sphere (exact 2H n)",
                    error(0, along_normal[0]), error(1, along_normal[1]), error(2, along_normal[2]),
                    error(1, radial[1]));
        std::fflush(stdout);
      }
    }
  }
}
