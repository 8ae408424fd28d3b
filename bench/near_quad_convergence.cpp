// The angular rule of the close pairs' semi-analytic integrals (-bem_near_quad): how their error
// falls with the number of Gauss points, and what a pair costs. For each count n, against the
// same integrals with 48 points: the worst difference of the unit density's S, D, D', N
// (hypersingular_integrals) and of the quadratic read's monomials' D and N (monomial_moments),
// each relative to the largest of its group at that target, over
//   * the close pairs of icospheres (every row's elements within 2.5 radii, the self term
//     included, targets at the centroids with their normals): the pairs bem_solve integrates,
//     at k = 8 and at the k of 6 elements a wavelength;
//   * a stress set: targets 1e-1 to 1e-4 of the size above the triangle and beside its edges,
//     tilted target normals, k = 0, 3, 8 on a triangle of size 1.
// The microseconds per pair are those of the icosphere pairs (one thread).
//   near_quad_convergence [LEVEL=4]
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "fmbem/bem/density_reconstruction.hpp"
#include "fmbem/bem/hypersingular_integrals.hpp"
#include "fmbem/bem/moment_integrals.hpp"
#include "fmbem/bem/near_field.hpp"
#include "fmbem/mesh/mesh.hpp"

using namespace fmbem;

namespace {

struct Pair {
  double k;
  Vec3 a, b, c, origin, axis1, axis2, x, n_x;
};

struct Values {
  cplx constant[4];
  cplx moments[10];
};

Values integrate(const Pair& p, const GaussLegendre& angular, const GaussLegendre& radial) {
  const HypersingularIntegrals h = hypersingular_integrals(p.k, p.a, p.b, p.c, p.x, p.n_x, angular);
  const MonomialMoments m = monomial_moments(p.k, p.a, p.b, p.c, p.origin, p.axis1, p.axis2, p.x,
                                             p.n_x, h, angular, radial);
  Values v{{h.single_layer, h.double_layer, h.adjoint_double_layer, h.hypersingular}, {}};
  for (int t = 0; t < 5; ++t) {
    v.moments[t] = m.double_layer[t];
    v.moments[5 + t] = m.hypersingular[t];
  }
  return v;
}

template <std::size_t M>
double group_error(const cplx (&got)[M], const cplx (&want)[M]) {
  double scale = 0.0, error = 0.0;
  for (std::size_t i = 0; i < M; ++i) {
    scale = std::max(scale, std::abs(want[i]));
    error = std::max(error, std::abs(got[i] - want[i]));
  }
  return scale > 0.0 ? error / scale : error;
}

std::vector<Pair> icosphere_pairs(int level, double k) {
  const Mesh mesh = Mesh::from_surface(make_icosphere(level, 1.0), "icosphere");
  const DensityReconstruction reconstruction(mesh);
  const std::size_t rows = std::min<std::size_t>(mesh.size(), 400);
  const NearFieldPattern close = near_field_pattern(mesh, {0, rows}, 2.5);
  std::vector<Pair> pairs;
  for (std::size_t i = 0; i < rows; ++i)
    for (std::int64_t at = close.row_start[i]; at < close.row_start[i + 1]; ++at) {
      const std::size_t l = std::size_t(close.columns[std::size_t(at)]);
      pairs.push_back({k, mesh.corner(l, 0), mesh.corner(l, 1), mesh.corner(l, 2),
                       reconstruction.origin(l), reconstruction.axis(l, 0),
                       reconstruction.axis(l, 1), mesh.centroids()[i], mesh.normals()[i]});
    }
  return pairs;
}

std::vector<Pair> stress_pairs() {
  const Vec3 a{0, 0, 0}, b{1, 0.1, 0}, c{0.3, 0.9, 0.05};
  const Vec3 n = normalized(cross(b - a, c - a));
  const Vec3 origin = (a + b + c) * (1.0 / 3.0), axis1 = normalized(b - a), axis2 = cross(n, axis1);
  std::mt19937 gen(7);
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<Pair> pairs;
  for (const double k : {0.0, 3.0, 8.0})
    for (int trial = 0; trial < 200; ++trial) {
      Vec3 x;
      double height;
      if (trial % 2 == 0) {  // above the interior
        x = origin + Vec3{u(gen), u(gen), 0} * 0.8;
        height = std::pow(10.0, -1.0 - 3.0 * 0.5 * (1.0 + u(gen)));
      } else {  // beside the edges, p outside
        x = Vec3{1.2 + 0.3 * u(gen), 0.5 + 0.5 * u(gen), 0};
        height = std::pow(10.0, -3.0 * 0.5 * (1.0 + u(gen)));
      }
      x = x - n * dot(x - a, n) + n * (u(gen) > 0 ? height : -height);
      const Vec3 n_x = normalized(Vec3{u(gen), u(gen), u(gen)} * 0.5 + n);
      pairs.push_back({k, a, b, c, origin, axis1, axis2, x, n_x});
    }
  return pairs;
}

}  // namespace

int main(int argc, char** argv) {
  const int level = argc > 1 ? std::atoi(argv[1]) : 4;
  // The radial rule bem_solve uses (NearFieldCorrection::kMomentRadialPoints).
  const GaussLegendre radial(6), reference(48);
  // k of about 6 elements a wavelength: the icosphere's edge is about 1.1 * 2^-level.
  const double h = 1.1 / std::pow(2.0, level), k_resolved = 2.0 * 3.14159265358979 / (6.0 * h);
  struct Set {
    const char* name;
    std::vector<Pair> pairs;
  };
  char name8[64], name_resolved[64];
  std::snprintf(name8, sizeof name8, "icosphere:%d close pairs, k = 8", level);
  std::snprintf(name_resolved, sizeof name_resolved, "icosphere:%d close pairs, k = %.0f", level,
                k_resolved);
  const Set sets[] = {{name8, icosphere_pairs(level, 8.0)},
                      {name_resolved, icosphere_pairs(level, k_resolved)},
                      {"stress: heights 1e-4..1e-1, beside edges", stress_pairs()}};
  std::printf(
      "| pairs | angular points | worst S, D, D', N | worst monomials' D, N | us a pair |\n");
  std::printf("|---|---|---|---|---|\n");
  for (const Set& set : sets) {
    std::vector<Values> want;
    for (const Pair& p : set.pairs) want.push_back(integrate(p, reference, radial));
    for (const int n : {6, 8, 10, 12, 16, 20}) {
      const GaussLegendre angular(n);
      double constant = 0.0, moments = 0.0;
      std::vector<Values> got(set.pairs.size());
      const auto start = std::chrono::steady_clock::now();
      for (std::size_t i = 0; i < set.pairs.size(); ++i)
        got[i] = integrate(set.pairs[i], angular, radial);
      const double seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      for (std::size_t i = 0; i < set.pairs.size(); ++i) {
        constant = std::max(constant, group_error(got[i].constant, want[i].constant));
        moments = std::max(moments, group_error(got[i].moments, want[i].moments));
      }
      std::printf("| %s (%zu) | %d | %.1e | %.1e | %.2f |\n", set.name, set.pairs.size(), n,
                  constant, moments, 1e6 * seconds / double(set.pairs.size()));
    }
  }
  return 0;
}
