// Does piecewise-constant collocation keep the bounded iteration counts of the S_{i kappa}-
// regularised Burton-Miller equation that the unit sphere's spectral model predicts
// (bench/results/bm_regularised_model.md)? The rigid sphere (plane wave along z), three
// equations with the operators bem_solve uses (FMM layers, 6 Gauss points, quadratic read of the
// double density, near radius 2.5):
//   cbie   (1/2) u - D u                                   = u_inc
//   bm     (1/2) u - (D + alpha N) u                       = u_inc + alpha du_inc/dn
//   reg    (1/2) u - D u - beta S~ (N u)                   = u_inc + beta S~ du_inc/dn
//   right  bm's operator times S~ (right preconditioning: u = S~ v; needs no N u of its own)
// with alpha = i / k, beta = i, and S~ the collocated single layer at the imaginary wavenumber
// i kappa (kernel exp(-kappa r) / (4 pi r)) applied to N u read as a piecewise-constant density:
// the 1/r part of close pairs integrated exactly (panel_integrals at k = 0), the smooth rest by
// the element's Gauss rule, farther pairs by the centroid rule, pairs farther than
// cut / kappa left out (exp(-cut) small: the same S~ in the operator and the right-hand side keeps
// the exact solution, so S~ need not be accurate). D and N come from two FMM layer objects (with
// coupling 0 and 1), S~ from a direct sum: a measurement of iteration counts and errors, not of
// time. GMRES without restart, zero start, no preconditioner, relative residual rtol.
//   regularised_bm K MIN_LEVEL MAX_LEVEL [KAPPA_FACTOR=1] [CUT=7] [RTOL=1e-5]
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <numbers>
#include <vector>

#include "fmbem/bem/fmm_layer_potentials.hpp"
#include "fmbem/bem/panel_integrals.hpp"
#include "fmbem/exact/incident.hpp"
#include "fmbem/exact/sphere.hpp"
#include "fmbem/mesh/mesh.hpp"

using namespace fmbem;

namespace {

using Operator = std::function<void(const std::vector<cplx>&, std::vector<cplx>&)>;

cplx dot_conj(const std::vector<cplx>& a, const std::vector<cplx>& b) {
  cplx s = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) s += std::conj(a[i]) * b[i];
  return s;
}
double norm2(const std::vector<cplx>& a) { return std::sqrt(dot_conj(a, a).real()); }

// Unrestarted GMRES (modified Gram-Schmidt, Givens rotations) from x = 0; returns the iterations
// to ||b - A x|| <= rtol ||b|| (the recurrence's residual) and x.
int gmres(const Operator& apply, const std::vector<cplx>& b, double rtol, int max_iterations,
          std::vector<cplx>& x) {
  const std::size_t n = b.size();
  const double beta = norm2(b);
  std::vector<std::vector<cplx>> v{b};
  for (cplx& e : v[0]) e /= beta;
  std::vector<std::vector<cplx>> h;
  std::vector<cplx> cs, sn, g{beta};
  int it = 0;
  for (; it < max_iterations && std::abs(g.back()) > rtol * beta; ++it) {
    std::vector<cplx> w(n);
    apply(v[it], w);
    std::vector<cplx> column(it + 2);
    for (int j = 0; j <= it; ++j) {
      column[j] = dot_conj(v[j], w);
      for (std::size_t i = 0; i < n; ++i) w[i] -= column[j] * v[j][i];
    }
    column[it + 1] = norm2(w);
    for (int j = 0; j < it; ++j) {
      const cplx t = std::conj(cs[j]) * column[j] + std::conj(sn[j]) * column[j + 1];
      column[j + 1] = -sn[j] * column[j] + cs[j] * column[j + 1];
      column[j] = t;
    }
    const double r = std::hypot(std::abs(column[it]), std::abs(column[it + 1]));
    cs.push_back(column[it] / r);
    sn.push_back(column[it + 1] / r);
    column[it] = r;
    column[it + 1] = 0.0;
    g.push_back(-sn[it] * g[it]);
    g[it] = std::conj(cs[it]) * g[it];
    h.push_back(column);
    const double wn = norm2(w);
    for (cplx& e : w) e /= wn;
    v.push_back(std::move(w));
  }
  std::vector<cplx> y(it);
  for (int j = it - 1; j >= 0; --j) {
    cplx s = g[j];
    for (int l = j + 1; l < it; ++l) s -= h[l][j] * y[l];
    y[j] = s / h[j][j];
  }
  x.assign(n, 0.0);
  for (int j = 0; j < it; ++j)
    for (std::size_t i = 0; i < n; ++i) x[i] += y[j] * v[j][i];
  return it;
}

// The collocated single layer at the imaginary wavenumber i kappa, truncated at `cut_radius`.
class YukawaSingleLayer {
 public:
  YukawaSingleLayer(const Discretization& disc, double kappa, double cut_radius)
      : disc_(disc), kappa_(kappa), cut_(cut_radius) {
    const Mesh& mesh = disc.mesh();
    const std::size_t n = mesh.size();
    double longest = 0.0;
    for (std::size_t e = 0; e < n; ++e)
      for (int c = 0; c < 3; ++c)
        longest = std::max(longest, norm(mesh.corner(e, c) - mesh.corner(e, (c + 1) % 3)));
    near_ = 3.0 * longest;
    const GaussLegendre angular(16);
    near_start_.assign(n + 1, 0);
    std::vector<std::vector<std::pair<std::int32_t, double>>> rows(n);
#pragma omp parallel for schedule(dynamic, 64)
    for (std::size_t i = 0; i < n; ++i) {
      const Vec3 x = mesh.centroids()[i];
      for (std::size_t j = 0; j < n; ++j) {
        if (norm(mesh.centroids()[j] - x) >= near_) continue;
        double value = panel_integrals(0.0, mesh.corner(j, 0), mesh.corner(j, 1), mesh.corner(j, 2),
                                       x, angular)
                           .single_layer.real();
        const std::size_t m = disc.points_per_element();
        for (std::size_t q = j * m; q < (j + 1) * m; ++q) {
          const double r = norm(disc.quadrature_points()[q] - x);
          value +=
              disc.quadrature_weights()[q] * std::expm1(-kappa * r) / (4 * std::numbers::pi * r);
        }
        rows[i].push_back({std::int32_t(j), value});
      }
    }
    for (std::size_t i = 0; i < n; ++i) near_start_[i + 1] = near_start_[i] + rows[i].size();
    for (auto& row : rows)
      for (auto [j, v] : row) {
        near_column_.push_back(j);
        near_value_.push_back(v);
      }
  }

  void apply(const std::vector<cplx>& g, std::vector<cplx>& y) const {
    const Mesh& mesh = disc_.mesh();
    const std::size_t n = mesh.size();
    const auto& c = mesh.centroids();
    const auto& a = mesh.areas();
#pragma omp parallel for schedule(dynamic, 64)
    for (std::size_t i = 0; i < n; ++i) {
      const Vec3 x = c[i];
      cplx s = 0.0;
      for (std::size_t j = 0; j < n; ++j) {
        const double dx = c[j].x - x.x, dy = c[j].y - x.y, dz = c[j].z - x.z;
        const double r2 = dx * dx + dy * dy + dz * dz;
        if (r2 >= cut_ * cut_ || r2 < near_ * near_) continue;
        const double r = std::sqrt(r2);
        s += g[j] * (a[j] * std::exp(-kappa_ * r) / (4 * std::numbers::pi * r));
      }
      for (std::size_t p = near_start_[i]; p < near_start_[i + 1]; ++p)
        s += near_value_[p] * g[std::size_t(near_column_[p])];
      y[i] = s;
    }
  }

 private:
  const Discretization& disc_;
  double kappa_, cut_, near_ = 0.0;
  std::vector<std::size_t> near_start_;
  std::vector<std::int32_t> near_column_;
  std::vector<double> near_value_;
};

double relative_l2(const Mesh& mesh, const std::vector<cplx>& u, const std::vector<cplx>& exact) {
  double e2 = 0.0, x2 = 0.0;
  for (std::size_t i = 0; i < u.size(); ++i) {
    e2 += mesh.areas()[i] * std::norm(u[i] - exact[i]);
    x2 += mesh.areas()[i] * std::norm(exact[i]);
  }
  return std::sqrt(e2 / x2);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr,
                 "usage: regularised_bm K MIN_LEVEL MAX_LEVEL [KAPPA_FACTOR=1] [CUT=7] "
                 "[RTOL=1e-5]\n");
    return 2;
  }
  const double k = std::atof(argv[1]);
  const int min_level = std::atoi(argv[2]), max_level = std::atoi(argv[3]);
  const double kappa_factor = argc > 4 ? std::atof(argv[4]) : 1.0;
  const double cut = argc > 5 ? std::atof(argv[5]) : 7.0;
  const double rtol = argc > 6 ? std::atof(argv[6]) : 1e-5;
  const double kappa = kappa_factor * k;
  const cplx alpha = cplx(0, 1) / k, beta = cplx(0, 1);
  std::printf(
      "k = %g, kappa = %g, cut at kappa r = %g, rtol %g, %d threads\n\n| mesh | N | cbie it | "
      "cbie err | bm it | bm err | reg it | reg err | right it | right err |\n"
      "|---|---|---|---|---|---|---|---|---|---|\n",
      k, kappa, cut, rtol, omp_get_max_threads());
  for (int level = min_level; level <= max_level; ++level) {
    const Mesh mesh = Mesh::from_surface(make_icosphere(level, 1.0), "icosphere");
    const std::size_t n = mesh.size();
    const Discretization disc(mesh, 6);
    const RowRange rows{0, n};
    NearFieldOptions near;
    fmm::FmmOptions fmm_options;
    fmm_options.tolerance = 1e-6;
    const FmmLayerPotentials plain(disc, k, rows, near, fmm_options, nullptr, 0.0,
                                   DensityModel::quadratic);
    const FmmLayerPotentials with_n(disc, k, rows, near, fmm_options, nullptr, 1.0,
                                    DensityModel::quadratic);
    const YukawaSingleLayer regulariser(disc, kappa, cut / kappa);
    const exact::Incident wave = exact::Incident::plane_wave({0, 0, 1});
    const exact::SphereScattering mie(k, 1.0, {0, 0, 0}, exact::SphereBoundary::Rigid, wave);
    std::vector<cplx> u_inc(n), dn_inc(n), exact(n);
    for (std::size_t i = 0; i < n; ++i) {
      u_inc[i] = exact::incident_field(k, wave, mesh.centroids()[i]);
      dn_inc[i] =
          exact::incident_normal_derivative(k, wave, mesh.centroids()[i], mesh.normals()[i]);
      exact[i] = mie.surface_value(mesh.centroids()[i]);
    }
    // D u and N u of one density.
    const auto parts = [&](const std::vector<cplx>& u, std::vector<cplx>& d,
                           std::vector<cplx>& nu) {
      d.assign(n, 0.0);
      nu.assign(n, 0.0);
      plain.apply(u, {}, d);
      with_n.apply(u, {}, nu);
      for (std::size_t i = 0; i < n; ++i) nu[i] -= d[i];
    };
    std::vector<cplx> d, nu, s(n);
    const Operator cbie = [&](const std::vector<cplx>& u, std::vector<cplx>& y) {
      y.assign(n, 0.0);
      plain.apply(u, {}, y);
      for (std::size_t i = 0; i < n; ++i) y[i] = 0.5 * u[i] - y[i];
    };
    const Operator bm = [&](const std::vector<cplx>& u, std::vector<cplx>& y) {
      parts(u, d, nu);
      y.resize(n);
      for (std::size_t i = 0; i < n; ++i) y[i] = 0.5 * u[i] - d[i] - alpha * nu[i];
    };
    const Operator reg = [&](const std::vector<cplx>& u, std::vector<cplx>& y) {
      parts(u, d, nu);
      regulariser.apply(nu, s);
      y.resize(n);
      for (std::size_t i = 0; i < n; ++i) y[i] = 0.5 * u[i] - d[i] - beta * s[i];
    };
    std::vector<cplx> f_bm(n), f_reg(n), x;
    regulariser.apply(dn_inc, s);
    for (std::size_t i = 0; i < n; ++i) {
      f_bm[i] = u_inc[i] + alpha * dn_inc[i];
      f_reg[i] = u_inc[i] + beta * s[i];
    }
    const int it_cbie = gmres(cbie, u_inc, rtol, 500, x);
    const double err_cbie = relative_l2(mesh, x, exact);
    const int it_bm = gmres(bm, f_bm, rtol, 500, x);
    const double err_bm = relative_l2(mesh, x, exact);
    const int it_reg = gmres(reg, f_reg, rtol, 500, x);
    const double err_reg = relative_l2(mesh, x, exact);
    std::vector<cplx> v;
    const Operator right = [&](const std::vector<cplx>& w, std::vector<cplx>& y) {
      std::vector<cplx> u(n);
      regulariser.apply(w, u);
      bm(u, y);
    };
    const int it_right = gmres(right, f_bm, rtol, 500, v);
    regulariser.apply(v, x);
    const double err_right = relative_l2(mesh, x, exact);
    std::printf("| icosphere:%d | %zu | %d | %.3e | %d | %.3e | %d | %.3e | %d | %.3e |\n", level,
                n, it_cbie, err_cbie, it_bm, err_bm, it_reg, err_reg, it_right, err_right);
    std::fflush(stdout);
  }
}
