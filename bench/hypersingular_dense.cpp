// How consistent the collocated D and N are with a reconstructed double
// density, measured with brute-force accurate integration (no FMM, no 3-point rule): every pair
// by adaptive subdivision with a Duffy product Gauss rule, the self element in polar coordinates
// about its centroid (finite part of the Laplace kernel analytic, the Helmholtz remainder by
// Gauss-Legendre in the radius). Densities per element j, in the element's plane (xi, eta):
//   const:     u_j
//   lin:       u_j + g_j . (xi, eta), g_j by weighted least squares over the vertex neighbours
//   quad1:     u_j + g_j . (xi, eta) + (1/2) (xi, eta) H_j (xi, eta)^T, least squares over the
//              vertex neighbours (Hessian too)
//   quad:      the same over the vertex neighbours and their vertex neighbours
//   exact3d:   the 3D polynomial (z or xy) itself on each flat element (no reconstruction; N Y_1
//              only, not solved): what the flat geometry alone leaves
// (weights 1 / distance^2, neighbours' centroid offsets projected on the element's plane; the
// library's DensityReconstruction is quad1 with the offsets' lengths kept). Prints the relative
// L2 error of N Y_n and D Y_n (n = 1, 2, the harmonic at the centroids' directions) against the
// unit sphere's exact eigenvalues, and (solve) the dense rigid-sphere solution at k = 8 with cbie
// and bm (alpha = i/k, GMRES to 1e-10) against the Mie series. Results:
// bench/results/hypersingular_consistency.md.
//   hypersingular_dense MIN_LEVEL MAX_LEVEL [solve [SUBDIVISION_RATIO=0.3]]
#include <omp.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <numbers>
#include <set>
#include <string>
#include <vector>

#include "fmbem/bem/hypersingular_integrals.hpp"
#include "fmbem/exact/incident.hpp"
#include "fmbem/exact/sphere.hpp"
#include "fmbem/kernel/kernel.hpp"
#include "fmbem/mesh/mesh.hpp"
#include "fmbem/quadrature/gauss_legendre.hpp"

using namespace fmbem;

namespace {

constexpr int kBasis = 6;  // 1, xi, eta, xi^2, xi eta, eta^2
constexpr int kDegree[kBasis] = {0, 1, 1, 2, 2, 2};

struct Frame {
  Vec3 c, t1, t2, n;
};

Frame frame_of(const Mesh& mesh, std::size_t e) {
  Frame f;
  f.c = mesh.centroids()[e];
  f.n = mesh.normals()[e];
  f.t1 = normalized(mesh.corner(e, 1) - mesh.corner(e, 0));
  f.t2 = cross(f.n, f.t1);
  return f;
}

void monomials(const Frame& f, const Vec3& y, double out[kBasis]) {
  const double xi = dot(y - f.c, f.t1), eta = dot(y - f.c, f.t2);
  out[0] = 1.0;
  out[1] = xi;
  out[2] = eta;
  out[3] = xi * xi;
  out[4] = xi * eta;
  out[5] = eta * eta;
}

struct Moments {
  cplx d[kBasis]{}, n[kBasis]{};
};

struct RefRule {
  std::vector<std::array<double, 3>> bary;
  std::vector<double> w;  // sum 1
};

RefRule duffy_rule(int n) {
  const GaussLegendre g(n);
  RefRule r;
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      const double s = 0.5 * (1.0 + g.nodes[i]), t = 0.5 * (1.0 + g.nodes[j]);
      r.bary.push_back({s, (1.0 - s) * t, (1.0 - s) * (1.0 - t)});
      r.w.push_back(0.25 * g.weights[i] * g.weights[j] * (1.0 - s) * 2.0);
    }
  return r;
}

struct Integrator {
  double k;
  double ratio;  // subdivide while size > ratio * distance
  RefRule coarse = duffy_rule(5), fine = duffy_rule(9);

  void integrate(const Vec3& a, const Vec3& b, const Vec3& c, const Vec3& x, const Vec3& n_x,
                 const Vec3& n_y, const Frame& f, Moments& acc, int depth = 0) const {
    const Vec3 g = (a + b + c) * (1.0 / 3.0);
    const double size = std::max({norm(a - g), norm(b - g), norm(c - g)});
    const double dist = norm(x - g);
    if (depth < 16 && (size > ratio * dist || k * size > 0.5)) {
      const Vec3 ab = (a + b) * 0.5, bc = (b + c) * 0.5, ca = (c + a) * 0.5;
      integrate(a, ab, ca, x, n_x, n_y, f, acc, depth + 1);
      integrate(ab, b, bc, x, n_x, n_y, f, acc, depth + 1);
      integrate(ca, bc, c, x, n_x, n_y, f, acc, depth + 1);
      integrate(ab, bc, ca, x, n_x, n_y, f, acc, depth + 1);
      return;
    }
    const RefRule& rule = size < 0.12 * dist ? coarse : fine;
    const double area = 0.5 * norm(cross(b - a, c - a));
    double mono[kBasis];
    for (std::size_t q = 0; q < rule.w.size(); ++q) {
      const Vec3 y = a * rule.bary[q][0] + b * rule.bary[q][1] + c * rule.bary[q][2];
      const double w = area * rule.w[q];
      const cplx kd = w * green_normal_derivative(k, x, y, n_y);
      const cplx kn = w * green_double_normal_derivative(k, x, y, n_x, n_y);
      monomials(f, y, mono);
      for (int m = 0; m < kBasis; ++m) {
        acc.d[m] += kd * mono[m];
        acc.n[m] += kn * mono[m];
      }
    }
  }
};

// (exp(iz)(iz - 1) + 1) / z^2, by its series for small z.
cplx remainder_ratio(double z) {
  if (std::abs(z) < 0.5) {
    cplx sum{}, power(1.0, 0.0);
    double factorial = 2.0;
    for (int m = 2; m < 24; ++m) {
      sum += power * (double(m - 1) * (-1.0) / factorial);
      power *= cplx(0.0, z);
      factorial *= double(m + 1);
    }
    return sum;
  }
  const cplx phase(std::cos(z), std::sin(z));
  return (phase * cplx(-1.0, z) + 1.0) / (z * z);
}

// N moments of the self element at its centroid (finite part); D's are 0 (in-plane).
Moments self_moments(const Mesh& mesh, std::size_t e, double k, const GaussLegendre& angular,
                     const GaussLegendre& radial) {
  const Frame f = frame_of(mesh, e);
  const Vec3& x = f.c;
  Moments m;
  for (int edge = 0; edge < 3; ++edge) {
    const Vec3 v1 = mesh.corner(e, edge), v2 = mesh.corner(e, (edge + 1) % 3);
    const Vec3 s = normalized(v2 - v1);
    const double t1 = dot(v1 - x, s), t2 = dot(v2 - x, s);
    const Vec3 foot = v1 - s * t1;
    const double dist = norm(foot - x);
    const double u1 = std::asinh(t1 / dist), u2 = std::asinh(t2 / dist);
    const double half = 0.5 * (u2 - u1), mid = 0.5 * (u2 + u1);
    for (std::size_t q = 0; q < angular.size(); ++q) {
      const double u = mid + half * angular.nodes[q];
      const double t = dist * std::sinh(u);
      const Vec3 point = foot + s * t;
      const double rho_max = norm(point - x);
      const Vec3 dir = (point - x) * (1.0 / rho_max);
      const double w = half * angular.weights[q] / std::cosh(u);
      const double e1 = dot(dir, f.t1), e2 = dot(dir, f.t2);
      const double b[kBasis] = {1.0, e1, e2, e1 * e1, e1 * e2, e2 * e2};
      // Laplace finite parts of integral_0^rho_max rho^j rho / rho^3 d rho / (4 pi).
      const double laplace[3] = {-1.0 / rho_max, std::log(rho_max), rho_max};
      cplx rest[3]{};
      if (k != 0.0)
        for (std::size_t p = 0; p < radial.size(); ++p) {
          const double rho = 0.5 * rho_max * (1.0 + radial.nodes[p]);
          const cplx v = 0.5 * rho_max * radial.weights[p] * remainder_ratio(k * rho);
          rest[0] += v;
          rest[1] += v * rho;
          rest[2] += v * rho * rho;
        }
      for (int j = 0; j < kBasis; ++j)
        m.n[j] += w * b[j] * inv_4pi * (laplace[kDegree[j]] - k * k * rest[kDegree[j]]);
    }
  }
  return m;
}

// Small dense least squares by normal equations (Gaussian elimination with pivoting).
std::vector<double> solve_dense(std::vector<double> a, std::vector<double> b, int n) {
  for (int col = 0; col < n; ++col) {
    int pivot = col;
    for (int r = col + 1; r < n; ++r)
      if (std::abs(a[r * n + col]) > std::abs(a[pivot * n + col])) pivot = r;
    for (int c = 0; c < n; ++c) std::swap(a[col * n + c], a[pivot * n + c]);
    std::swap(b[col], b[pivot]);
    for (int r = col + 1; r < n; ++r) {
      const double factor = a[r * n + col] / a[col * n + col];
      for (int c = col; c < n; ++c) a[r * n + c] -= factor * a[col * n + c];
      b[r] -= factor * b[col];
    }
  }
  for (int r = n - 1; r >= 0; --r) {
    for (int c = r + 1; c < n; ++c) b[r] -= a[r * n + c] * b[c];
    b[r] /= a[r * n + r];
  }
  return b;
}

// A reconstruction: per element, per basis function, a sparse combination of the unknowns.
struct Term {
  std::size_t element;
  double coefficient;
};
using Reconstruction = std::vector<std::array<std::vector<Term>, kBasis>>;

std::vector<std::vector<std::size_t>> vertex_neighbours(const Mesh& mesh) {
  std::vector<std::vector<std::size_t>> by_vertex(mesh.vertices().size());
  for (std::size_t e = 0; e < mesh.size(); ++e)
    for (int c = 0; c < 3; ++c) by_vertex[mesh.triangles()[e][c]].push_back(e);
  std::vector<std::vector<std::size_t>> out(mesh.size());
  for (std::size_t e = 0; e < mesh.size(); ++e) {
    std::set<std::size_t> s;
    for (int c = 0; c < 3; ++c)
      for (std::size_t o : by_vertex[mesh.triangles()[e][c]])
        if (o != e) s.insert(o);
    out[e].assign(s.begin(), s.end());
  }
  return out;
}

// Least squares fit of u_k - u_j over the stencil with `unknowns` terms (2: gradient; 5:
// gradient and Hessian), weights 1/|d|^2; keep_hessian false drops the fitted Hessian.
Reconstruction fit(const Mesh& mesh, const std::vector<std::vector<std::size_t>>& stencils,
                   int unknowns, bool keep_hessian) {
  Reconstruction r(mesh.size());
  for (std::size_t j = 0; j < mesh.size(); ++j) {
    const Frame f = frame_of(mesh, j);
    r[j][0].push_back({j, 1.0});
    const auto& st = stencils[j];
    std::vector<std::vector<double>> rows;
    std::vector<double> weights;
    for (std::size_t k : st) {
      const Vec3 d = mesh.centroids()[k] - f.c;
      const double xi = dot(d, f.t1), eta = dot(d, f.t2);
      std::vector<double> row = {xi, eta};
      if (unknowns == 5) {
        row.push_back(0.5 * xi * xi);
        row.push_back(xi * eta);
        row.push_back(0.5 * eta * eta);
      }
      rows.push_back(row);
      weights.push_back(1.0 / (xi * xi + eta * eta));
    }
    std::vector<double> normal(unknowns * unknowns, 0.0);
    for (std::size_t s = 0; s < st.size(); ++s)
      for (int a = 0; a < unknowns; ++a)
        for (int b = 0; b < unknowns; ++b)
          normal[a * unknowns + b] += weights[s] * rows[s][a] * rows[s][b];
    // Coefficient of u_k for each unknown: (A^T W A)^-1 A^T W e_k.
    std::vector<std::vector<double>> coef(unknowns, std::vector<double>(st.size()));
    for (std::size_t s = 0; s < st.size(); ++s) {
      std::vector<double> rhs(unknowns);
      for (int a = 0; a < unknowns; ++a) rhs[a] = weights[s] * rows[s][a];
      const std::vector<double> x = solve_dense(normal, rhs, unknowns);
      for (int a = 0; a < unknowns; ++a) coef[a][s] = x[a];
    }
    // basis coefficient = unknown: xi <- g1, eta <- g2, xi^2 <- H11/2, xi eta <- H12, eta^2 <-
    // H22/2
    const int target[5] = {1, 2, 3, 4, 5};
    const double scale[5] = {1.0, 1.0, 0.5, 1.0, 0.5};
    for (int a = 0; a < (keep_hessian ? unknowns : 2); ++a) {
      double sum = 0.0;
      for (std::size_t s = 0; s < st.size(); ++s) {
        r[j][target[a]].push_back({st[s], scale[a] * coef[a][s]});
        sum += scale[a] * coef[a][s];
      }
      r[j][target[a]].push_back({j, -sum});
    }
  }
  return r;
}

double legendre_sph(int n, const Vec3& p) {  // Y_1 ~ z, Y_2 ~ xy on the unit sphere
  return n == 1 ? p.z : p.x * p.y;
}

// Eigenvalues of N and D (direct value) of the Helmholtz kernel on the unit sphere, k > 0.
void eigenvalues(double k, int n, cplx& lambda_n, cplx& lambda_d) {
  if (k == 0.0) {
    lambda_n = -double(n * (n + 1)) / (2 * n + 1);
    lambda_d = -0.5 / (2 * n + 1) * 1.0;  // D Y_n = (n - (n+1))... direct value: -1/(2(2n+1))
    lambda_d = -1.0 / (2.0 * (2 * n + 1));
    return;
  }
  const auto j = [&](int m) { return std::sph_bessel(m, k); };
  const auto y = [&](int m) { return std::sph_neumann(m, k); };
  const double jp = (n * j(n - 1) - (n + 1) * j(n + 1)) / (2 * n + 1);
  const double yp = (n * y(n - 1) - (n + 1) * y(n + 1)) / (2 * n + 1);
  const cplx hp(jp, yp);
  const cplx i(0.0, 1.0);
  lambda_n = i * k * k * k * jp * hp;
  lambda_d = i * k * k * j(n) * hp + 0.5;
}

// GMRES without restart on a dense row-major matrix.
std::vector<cplx> gmres(const std::vector<cplx>& a, const std::vector<cplx>& b, std::size_t n,
                        double rtol, int& iterations) {
  const auto matvec = [&](const std::vector<cplx>& v) {
    std::vector<cplx> out(n);
#pragma omp parallel for schedule(static)
    for (std::size_t i = 0; i < n; ++i) {
      cplx s{};
      const cplx* row = a.data() + i * n;
      for (std::size_t j = 0; j < n; ++j) s += row[j] * v[j];
      out[i] = s;
    }
    return out;
  };
  const auto dotc = [&](const std::vector<cplx>& u, const std::vector<cplx>& v) {
    cplx s{};
    for (std::size_t i = 0; i < n; ++i) s += std::conj(u[i]) * v[i];
    return s;
  };
  const int max_it = 400;
  std::vector<std::vector<cplx>> basis;
  std::vector<std::vector<cplx>> h(max_it + 1, std::vector<cplx>(max_it, 0.0));
  std::vector<cplx> cs(max_it), sn(max_it), g(max_it + 1, 0.0);
  const double beta = std::sqrt(dotc(b, b).real());
  basis.push_back(b);
  for (auto& v : basis[0]) v /= beta;
  g[0] = beta;
  int it = 0;
  for (; it < max_it; ++it) {
    std::vector<cplx> w = matvec(basis[it]);
    for (int l = 0; l <= it; ++l) {
      h[l][it] = dotc(basis[l], w);
      for (std::size_t i = 0; i < n; ++i) w[i] -= h[l][it] * basis[l][i];
    }
    h[it + 1][it] = std::sqrt(dotc(w, w).real());
    for (auto& v : w) v /= h[it + 1][it];
    basis.push_back(w);
    for (int l = 0; l < it; ++l) {
      const cplx t = std::conj(cs[l]) * h[l][it] + std::conj(sn[l]) * h[l + 1][it];
      h[l + 1][it] = -sn[l] * h[l][it] + cs[l] * h[l + 1][it];
      h[l][it] = t;
    }
    const double denom = std::hypot(std::abs(h[it][it]), std::abs(h[it + 1][it]));
    cs[it] = h[it][it] / denom;
    sn[it] = h[it + 1][it] / denom;
    h[it][it] = std::conj(cs[it]) * h[it][it] + std::conj(sn[it]) * h[it + 1][it];
    h[it + 1][it] = 0.0;
    g[it + 1] = -sn[it] * g[it];
    g[it] = std::conj(cs[it]) * g[it];
    if (std::abs(g[it + 1]) < rtol * beta) {
      ++it;
      break;
    }
  }
  iterations = it;
  std::vector<cplx> y(it);
  for (int l = it - 1; l >= 0; --l) {
    cplx s = g[l];
    for (int c = l + 1; c < it; ++c) s -= h[l][c] * y[c];
    y[l] = s / h[l][l];
  }
  std::vector<cplx> x(n, 0.0);
  for (int l = 0; l < it; ++l)
    for (std::size_t i = 0; i < n; ++i) x[i] += y[l] * basis[l][i];
  return x;
}

}  // namespace

int main(int argc, char** argv) {
  const int min_level = argc > 1 ? std::atoi(argv[1]) : 2;
  const int max_level = argc > 2 ? std::atoi(argv[2]) : 3;
  const bool solve = argc > 3 && std::string(argv[3]) == "solve";
  const double ratio = argc > 4 ? std::atof(argv[4]) : 0.3;
  const GaussLegendre angular(32), radial(16), edge_rule(16);
  const char* names[5] = {"const", "lin", "quad1", "quad", "exact3d"};
  std::printf(
      "| level | N | k | variant | n | N Y_n rel. L2 | D Y_n rel. L2 "
      "|\n|---|---|---|---|---|---|---|\n");
  for (int level = min_level; level <= max_level; ++level) {
    const Mesh mesh = Mesh::from_surface(make_icosphere(level, 1.0), "icosphere");
    const std::size_t n = mesh.size();
    const auto ring1 = vertex_neighbours(mesh);
    std::vector<std::vector<std::size_t>> ring2(n);
    for (std::size_t e = 0; e < n; ++e) {
      std::set<std::size_t> s(ring1[e].begin(), ring1[e].end());
      for (std::size_t o : ring1[e]) s.insert(ring1[o].begin(), ring1[o].end());
      s.erase(e);
      ring2[e].assign(s.begin(), s.end());
    }
    std::vector<Reconstruction> variants;
    variants.push_back(fit(mesh, ring1, 2, false));
    for (auto& row : variants[0])
      for (int m = 1; m < kBasis; ++m) row[m].clear();  // const
    variants.push_back(fit(mesh, ring1, 2, false));
    variants.push_back(fit(mesh, ring1, 5, true));
    variants.push_back(fit(mesh, ring2, 5, true));
    // exact3d: the 3D polynomial (z or xy) itself on each flat element (no reconstruction).
    variants.push_back(Reconstruction(n));
    const int nv = int(variants.size());
    std::vector<Frame> frames(n);
    for (std::size_t e = 0; e < n; ++e) frames[e] = frame_of(mesh, e);

    for (const double k : {0.0, 8.0}) {
      const Integrator integrator{k, ratio};
      // Basis coefficients of each variant for u = Y_1, Y_2 (values at the projected centroids).
      std::vector<double> u[2];
      for (int f = 0; f < 2; ++f) {
        u[f].resize(n);
        for (std::size_t e = 0; e < n; ++e)
          u[f][e] = legendre_sph(f + 1, normalized(mesh.centroids()[e]));
      }
      std::vector<double> coef(std::size_t(nv) * 2 * n * kBasis, 0.0);
      for (int v = 0; v < nv; ++v)
        for (int f = 0; f < 2; ++f)
          for (std::size_t e = 0; e < n; ++e)
            for (int m = 0; m < kBasis; ++m) {
              double s = 0.0;
              for (const Term& t : variants[v][e][m]) s += t.coefficient * u[f][t.element];
              if (v == 4) {
                const Frame& fr = frames[e];
                const Vec3 c = fr.c, a = fr.t1, b = fr.t2;
                const double poly1[kBasis] = {c.z, a.z, b.z, 0, 0, 0};
                const double poly2[kBasis] = {
                    c.x * c.y, c.x * a.y + a.x * c.y, c.x * b.y + b.x * c.y,
                    a.x * a.y, a.x * b.y + b.x * a.y, b.x * b.y};
                s = f == 0 ? poly1[m] : poly2[m];
              }
              coef[((std::size_t(v) * 2 + f) * n + e) * kBasis + m] = s;
            }
      // With solve (k > 0): dense matrices of cbie (1/2 - D R) and bm (1/2 - (D + alpha N) R).
      const bool with_solve = solve && k > 0.0;
      const cplx alpha(0.0, 1.0 / (k > 0 ? k : 1.0));
      std::vector<std::vector<cplx>> cbie, bm;
      if (with_solve) {
        cbie.assign(nv - 1, std::vector<cplx>(n * n, 0.0));
        bm.assign(nv - 1, std::vector<cplx>(n * n, 0.0));
      }
      std::vector<cplx> result_n(std::size_t(nv) * 2 * n), result_d(std::size_t(nv) * 2 * n);
      double self_check = 0.0;
#pragma omp parallel for schedule(dynamic, 4) reduction(max : self_check)
      for (std::size_t i = 0; i < n; ++i) {
        const Vec3& x = mesh.centroids()[i];
        const Vec3& n_x = mesh.normals()[i];
        for (std::size_t j = 0; j < n; ++j) {
          Moments mom;
          if (i == j) {
            mom = self_moments(mesh, j, k, angular, radial);
            const cplx closed = hypersingular(k, mesh.corner(j, 0), mesh.corner(j, 1),
                                              mesh.corner(j, 2), x, n_x, edge_rule);
            self_check = std::max(self_check, std::abs(mom.n[0] - closed) / std::abs(closed));
          } else {
            integrator.integrate(mesh.corner(j, 0), mesh.corner(j, 1), mesh.corner(j, 2), x, n_x,
                                 mesh.normals()[j], frames[j], mom);
          }
          for (int v = 0; v < nv; ++v)
            for (int f = 0; f < 2; ++f) {
              const double* c = &coef[((std::size_t(v) * 2 + f) * n + j) * kBasis];
              cplx sn{}, sd{};
              for (int m = 0; m < kBasis; ++m) {
                sn += mom.n[m] * c[m];
                sd += mom.d[m] * c[m];
              }
              result_n[(std::size_t(v) * 2 + f) * n + i] += sn;
              result_d[(std::size_t(v) * 2 + f) * n + i] += sd;
            }
          if (with_solve)
            for (int v = 0; v < nv - 1; ++v)
              for (int m = 0; m < kBasis; ++m)
                for (const Term& t : variants[v][j][m]) {
                  cbie[v][i * n + t.element] -= t.coefficient * mom.d[m];
                  bm[v][i * n + t.element] -= t.coefficient * (mom.d[m] + alpha * mom.n[m]);
                }
        }
      }
      std::fprintf(stderr, "level %d k %g: self N constant vs closed form %.2e\n", level, k,
                   self_check);
      for (int v = 0; v < nv; ++v)
        for (int f = 0; f < 2; ++f) {
          cplx ln, ld;
          eigenvalues(k, f + 1, ln, ld);
          double en = 0, ed = 0, xn = 0, xd = 0;
          for (std::size_t e = 0; e < n; ++e) {
            const double w = mesh.areas()[e], y = u[f][e];
            en += w * std::norm(result_n[(std::size_t(v) * 2 + f) * n + e] - ln * y);
            ed += w * std::norm(result_d[(std::size_t(v) * 2 + f) * n + e] - ld * y);
            xn += w * std::norm(ln * y);
            xd += w * std::norm(ld * y);
          }
          std::printf("| %d | %zu | %g | %s | %d | %.3e | %.3e |\n", level, n, k, names[v], f + 1,
                      std::sqrt(en / xn), std::sqrt(ed / xd));
        }
      std::fflush(stdout);
      if (with_solve) {
        const exact::Incident inc = exact::Incident::plane_wave({0, 0, 1});
        const exact::SphereScattering mie(k, 1.0, {}, exact::SphereBoundary::Rigid, inc);
        std::vector<cplx> rhs_cbie(n), rhs_bm(n), exact_u(n);
        for (std::size_t e = 0; e < n; ++e) {
          const Vec3& x = mesh.centroids()[e];
          rhs_cbie[e] = exact::incident_field(k, inc, x);
          rhs_bm[e] =
              rhs_cbie[e] + alpha * exact::incident_normal_derivative(k, inc, x, mesh.normals()[e]);
          exact_u[e] = mie.surface_value(x);
        }
        for (int v = 0; v < nv - 1; ++v)
          for (int form = 0; form < 2; ++form) {
            std::vector<cplx>& a = form == 0 ? cbie[v] : bm[v];
            for (std::size_t e = 0; e < n; ++e) a[e * n + e] += 0.5;
            int its = 0;
            const std::vector<cplx> sol = gmres(a, form == 0 ? rhs_cbie : rhs_bm, n, 1e-10, its);
            double err = 0, ex = 0;
            for (std::size_t e = 0; e < n; ++e) {
              err += mesh.areas()[e] * std::norm(sol[e] - exact_u[e]);
              ex += mesh.areas()[e] * std::norm(exact_u[e]);
            }
            std::printf("solve level %d k %g %s %s: iterations %d, rel. L2 error %.4e\n", level, k,
                        names[v], form == 0 ? "cbie" : "bm", its, std::sqrt(err / ex));
            std::fflush(stdout);
          }
      }
    }
  }
}
