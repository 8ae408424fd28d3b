#include "fmbem/fmm/rotation_translations.hpp"

#include <gtest/gtest.h>

#include <boost/math/special_functions/bessel.hpp>
#include <boost/math/special_functions/spherical_harmonic.hpp>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <numbers>
#include <random>

#include "fmbem/core/error.hpp"
#include "fmbem/fmm/translations.hpp"
#include "fmbem/quadrature/gauss_legendre.hpp"

namespace fmbem::fmm {
namespace {

constexpr double eps = 2.220446049250313e-16;

std::vector<cplx> random_coefficients(int p, std::mt19937& rng) {
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<cplx> c(std::size_t(p) * p);
  for (cplx& v : c) v = {u(rng), u(rng)};
  return c;
}

double norm2(const std::vector<cplx>& v) {
  double s = 0.0;
  for (const cplx& x : v) s += std::norm(x);
  return std::sqrt(s);
}

double relative_difference(const std::vector<cplx>& a, const std::vector<cplx>& b) {
  std::vector<cplx> d(a.size());
  for (std::size_t i = 0; i < a.size(); ++i) d[i] = a[i] - b[i];
  return norm2(d) / norm2(b);
}

std::vector<cplx> multiply(const TranslationMatrix& a, const std::vector<cplx>& x) {
  const std::size_t size = x.size();
  std::vector<cplx> y(size, 0.0);
  for (std::size_t i = 0; i < size; ++i)
    for (std::size_t j = 0; j < size; ++j) y[i] += a[i * size + j] * x[j];
  return y;
}

Vec3 rotate_y(const Vec3& x, double beta) {
  const double c = std::cos(beta), s = std::sin(beta);
  return {c * x.x + s * x.z, x.y, -s * x.x + c * x.z};
}

// The 316 M2L transfer vectors of an octree level of unit width.
std::vector<Vec3> octree_transfer_vectors() {
  std::vector<Vec3> t;
  for (int i = -3; i <= 3; ++i)
    for (int j = -3; j <= 3; ++j)
      for (int k = -3; k <= 3; ++k)
        if (std::max({std::abs(i), std::abs(j), std::abs(k)}) >= 2)
          t.push_back(Vec3{double(i), double(j), double(k)});
  return t;
}

// (a) E^n is the rotation of the harmonics: Y_n^m(R_y(beta) x) = sum_m' E_{m m'} Y_n^m'(x), to
// degree 99, on both branches (recurrence, |sin beta| >= 0.2; product near the poles) and at
// the poles. A sum of 2n+1 terms of size |Y_n| <= sqrt((2n+1)/4pi): rounding alone gives
// ~ (2n+1) eps |Y_n|; the recurrence's growth is measured below that times 10.
TEST(RotationTranslations, WignerRotationRotatesHarmonics) {
  const int p = max_rotation_order;
  std::mt19937 rng(7);
  std::normal_distribution<double> g;
  std::vector<cplx> y(p * p), y_rotated(p * p);
  double worst = 0.0;
  for (double beta : {0.0, std::numbers::pi, 0.3, 1.1, 0.5 * std::numbers::pi, 2.5, 0.05,
                      std::numbers::pi - 0.1, -0.7}) {
    const WignerRotation e(p, beta);
    for (int trial = 0; trial < 3; ++trial) {
      const Vec3 x{g(rng), g(rng), g(rng)};
      spherical_harmonics(p - 1, x, y.data());
      spherical_harmonics(p - 1, rotate_y(x, beta), y_rotated.data());
      for (int n = 0; n < p; ++n) {
        const double size = std::sqrt((2.0 * n + 1.0) / (4.0 * std::numbers::pi));
        for (int m = -n; m <= n; ++m) {
          cplx sum = 0.0;
          for (int j = -n; j <= n; ++j) sum += e(n, m, j) * y[coefficient_index(n, j)];
          const double error = std::abs(sum - y_rotated[coefficient_index(n, m)]) / size;
          worst = std::max(worst, error / ((2.0 * n + 1.0) * eps));
          ASSERT_LT(error, 10.0 * (2.0 * n + 1.0) * eps)
              << "beta " << beta << " n " << n << " m " << m;
        }
      }
    }
  }
  std::printf("rotation of the harmonics to degree %d: worst error %.2f (2n+1) eps |Y_n|\n", p - 1,
              worst);
}

// (a) Rotating an expansion's coefficients and evaluating at the rotated point equals evaluating
// the expansion: sum c Rhat(r) = sum c' Rhat(Q r), c' = E^T Z(alpha) c, Q t_hat = e_z; and the
// round trip E E^T is the identity (E orthogonal) to rounding.
TEST(RotationTranslations, RotatedCoefficientsEvaluateAtRotatedPoint) {
  std::mt19937 rng(11);
  const int p = 60;
  const double k = 3.0, sigma = 1.0;
  for (const Vec3& t : {Vec3{2, -1, 3}, Vec3{-3, 2, -1}, Vec3{0, 0, -2}, Vec3{1, 1, 0.01}}) {
    const TranslationDirection dir = translation_direction(t);
    const WignerRotation e(p, dir.beta);
    const std::vector<cplx> c = random_coefficients(p, rng);
    std::vector<cplx> phased(c.size()), rotated(c.size()), back(c.size());
    for (int n = 0; n < p; ++n)
      for (int m = -n; m <= n; ++m)
        phased[coefficient_index(n, m)] =
            std::polar(1.0, m * dir.alpha) * c[coefficient_index(n, m)];
    e.apply(phased.data(), rotated.data(), true);
    e.apply(rotated.data(), back.data(), false);
    EXPECT_LT(relative_difference(back, phased), 100 * p * eps);
    std::vector<cplx> basis(c.size()), basis_rotated(c.size());
    for (const Vec3& r : {Vec3{0.3, -0.2, 0.25}, Vec3{-0.4, 0.1, -0.3}}) {
      // Q r = R_y(-beta) R_z(-alpha) r.
      const double ca = std::cos(dir.alpha), sa = std::sin(dir.alpha);
      const Vec3 qr = rotate_y(Vec3{ca * r.x + sa * r.y, -sa * r.x + ca * r.y, r.z}, -dir.beta);
      regular_basis(p - 1, k, sigma, r, basis.data());
      regular_basis(p - 1, k, sigma, qr, basis_rotated.data());
      cplx direct = 0.0, through_rotation = 0.0, scale = 0.0;
      for (std::size_t i = 0; i < c.size(); ++i) {
        direct += c[i] * basis[i];
        through_rotation += rotated[i] * basis_rotated[i];
        scale += std::abs(c[i] * basis[i]);
      }
      EXPECT_LT(std::abs(direct - through_rotation), 100 * p * eps * std::abs(scale));
    }
  }
}

// (b) M2L, M2M and L2L by rotation equal the dense Gaunt-based matrices on random coefficients.
// Both sides sum O(p^2) products of entries of size up to ~1 per output (the scaled bases keep
// them in range), so each output carries ~ p^2 eps of rounding relative to the largest terms;
// the dense side's Gaunt sums, with terms of alternating phase, are the larger source: a bound
// of p^2 eps (1.3e-13 at p = 24) times 10 is the tolerance, below 1e-12 for every p here.
TEST(RotationTranslations, EqualDenseMatrices) {
  std::mt19937 rng(3);
  const GauntTable gaunt(23);
  std::vector<cplx> workspace(2 * 24 * 24);
  const std::vector<Vec3> vectors = {Vec3{2, 0, 0},   Vec3{3, -2, 1}, Vec3{-1, 2, -3},
                                     Vec3{0, 0, 2},   Vec3{0, 0, -3}, Vec3{2, 2, 2},
                                     Vec3{-3, -3, 3}, Vec3{1, 0, -2}};
  for (int p : {4, 8, 16, 24}) {
    const MultipoleToLocalTable dense_m2l(gaunt, p);
    const double bound = 10.0 * p * p * eps;
    for (double kappa : {0.0, 0.5, 4.0, 16.0}) {
      double worst_m2l = 0.0, worst_shift = 0.0;
      for (double sigma : {1.0, 0.25}) {
        const double k = kappa / sigma;
        std::vector<Vec3> scaled;
        for (const Vec3& t : vectors) scaled.push_back(t * sigma);
        const RotationMultipoleToLocal m2l(p, k, sigma, scaled);
        for (std::size_t v = 0; v < scaled.size(); ++v) {
          const std::vector<cplx> m = random_coefficients(p, rng);
          const std::vector<cplx> expected = multiply(dense_m2l(k, sigma, scaled[v]), m);
          std::vector<cplx> local(m.size(), 0.0);
          m2l.apply(v, m.data(), local.data(), workspace);
          const double error = relative_difference(local, expected);
          worst_m2l = std::max(worst_m2l, error);
          EXPECT_LT(error, bound) << "M2L p " << p << " kappa " << kappa << " vector " << v;
        }
        const RotationShifts shifts(p, k, sigma);
        for (int octant = 0; octant < 8; ++octant) {
          const double h = 0.25 * sigma;
          const Vec3 t{octant & 1 ? h : -h, octant & 2 ? h : -h, octant & 4 ? h : -h};
          const TranslationMatrix c = regular_shift(gaunt, p, k, sigma, t);
          const std::size_t size = std::size_t(p) * p;
          TranslationMatrix m2m(size * size), l2l(size * size);
          for (std::size_t i = 0; i < size; ++i)
            for (std::size_t j = 0; j < size; ++j) {
              m2m[i * size + j] = std::conj(c[i * size + j]);
              l2l[j * size + i] = c[i * size + j];
            }
          const std::vector<cplx> x = random_coefficients(p, rng);
          std::vector<cplx> parent(size, 0.0), child(size, 0.0);
          shifts.multipole_to_multipole(octant, x.data(), parent.data(), workspace);
          shifts.local_to_local(octant, x.data(), child.data(), workspace);
          const double e_m2m = relative_difference(parent, multiply(m2m, x));
          const double e_l2l = relative_difference(child, multiply(l2l, x));
          worst_shift = std::max({worst_shift, e_m2m, e_l2l});
          EXPECT_LT(e_m2m, bound) << "M2M p " << p << " kappa " << kappa << " octant " << octant;
          EXPECT_LT(e_l2l, bound) << "L2L p " << p << " kappa " << kappa << " octant " << octant;
        }
      }
      std::printf("p %2d kappa %5.1f: M2L %.1e, M2M/L2L %.1e relative to the dense matrices\n", p,
                  kappa, worst_m2l, worst_shift);
    }
  }
}

// The M2L of several pairs at once (apply_many, up to rotation_lanes) equals the dense matrices
// to the same bound as one pair's, and each pair's result is bit for bit the same whichever
// pairs travel with it (the distributed FMM's equality with the whole FMM relies on it).
TEST(RotationTranslations, PairsTranslatedTogetherEqualDenseMatricesAndEachOther) {
  std::mt19937 rng(5);
  const GauntTable gaunt(16);
  for (int p : {5, 16}) {
    const MultipoleToLocalTable dense_m2l(gaunt, p);
    const double bound = 10.0 * p * p * eps;
    const double k = 4.0, sigma = 1.0;
    const std::vector<Vec3> vectors = {Vec3{3, -2, 1}, Vec3{0, 0, -3}};
    const RotationMultipoleToLocal m2l(p, k, sigma, vectors);
    std::vector<double> workspace(rotation_workspace(p));
    const std::size_t size = std::size_t(p) * p;
    for (std::size_t v = 0; v < vectors.size(); ++v) {
      std::vector<std::vector<cplx>> m, expected;
      for (int b = 0; b < rotation_lanes; ++b) {
        m.push_back(random_coefficients(p, rng));
        expected.push_back(multiply(dense_m2l(k, sigma, vectors[v]), m.back()));
      }
      std::vector<std::vector<cplx>> all(rotation_lanes, std::vector<cplx>(size, 0.0));
      std::vector<const cplx*> in;
      std::vector<cplx*> out;
      for (int b = 0; b < rotation_lanes; ++b) {
        in.push_back(m[b].data());
        out.push_back(all[b].data());
      }
      m2l.apply_many(v, in.data(), out.data(), rotation_lanes, workspace);
      for (int b = 0; b < rotation_lanes; ++b) {
        EXPECT_LT(relative_difference(all[b], expected[b]), bound) << "p " << p << " pair " << b;
        // Alone, and with the pair in another lane among fewer.
        std::vector<cplx> alone(size, 0.0), shifted(size, 0.0), other(size, 0.0);
        const cplx* one = m[b].data();
        cplx* to = alone.data();
        m2l.apply_many(v, &one, &to, 1, workspace);
        const cplx* two[2] = {m[(b + 1) % rotation_lanes].data(), m[b].data()};
        cplx* two_out[2] = {other.data(), shifted.data()};
        m2l.apply_many(v, two, two_out, 2, workspace);
        EXPECT_EQ(alone, all[b]) << "p " << p << " pair " << b;
        EXPECT_EQ(shifted, all[b]) << "p " << p << " pair " << b;
      }
    }
  }
  std::vector<double> small(rotation_workspace(4) - 1);
  const RotationMultipoleToLocal m2l(4, 1.0, 1.0, std::vector<Vec3>{Vec3{2, 0, 0}});
  std::vector<cplx> x(16), y(16);
  const cplx* in = x.data();
  cplx* out = y.data();
  EXPECT_THROW(m2l.apply_many(0, &in, &out, 1, small), Error);
  std::vector<double> workspace(rotation_workspace(4));
  EXPECT_THROW(m2l.apply_many(0, &in, &out, rotation_lanes + 1, workspace), Error);
}

// The relative truncation error of the addition theorem at order p for |x - y| = |t + r|,
// |r| <= r_max: k |t| sum_{n >= p} (2n+1) |j_n(k r_max)| |h_n(k |t|)|, the Gegenbauer series'
// tail against the kernel's size 1 / |t| (sum_{n >= p} (r_max / |t|)^n in the Laplace limit).
double truncation_prediction(int p, double k, double r_max, double distance) {
  // |j_n(x)| |h_n(X)| = jhat_n(x) |hhat_n(X)| (x / X)^n / ((2n + 1) X): no overflow at high n.
  const int top = std::min(p + 100, max_basis_degree);
  std::vector<double> jhat(top + 1);
  std::vector<cplx> hhat(top + 1);
  scaled_bessel_j(top, k * r_max, jhat.data());
  scaled_hankel(top, k * distance, hhat.data());
  double tail = 0.0;
  for (int n = p; n <= top; ++n)
    tail += std::abs(jhat[n] * hhat[n]) * std::pow(r_max / distance, n);
  return tail;
}

cplx helmholtz(double k, const Vec3& x, const Vec3& y) {
  const double r = norm(x - y);
  return std::exp(cplx(0.0, k * r)) / (4.0 * std::numbers::pi * r);
}

// (c) The whole chain P2M -> M2M -> M2L -> L2L -> L2P by rotation against the direct sum, for
// point sources in a child of a cell and targets in a child of a well-separated cell of width w
// (|t| >= 2w between the centres). The error falls with p as the truncation of the M2L's
// addition theorem predicts: once p exceeds k (r_s + r_t), geometrically like
// ((r_s + r_t) / |t|)^p, r_s, r_t the largest distances of the sources and targets from the
// centres.
TEST(RotationTranslations, ChainMatchesDirectSumAtHighOrder) {
  std::mt19937 rng(5);
  std::uniform_real_distribution<double> u(0.0, 0.5);
  const double w = 1.0, h = 0.25 * w;
  for (const Vec3& t : {Vec3{2, 0, 0}, Vec3{-2, 3, 1}}) {
    const Vec3 s{0.1, -0.2, 0.3}, o = s + t * w;
    const Vec3 source_child = s + Vec3{h, h, h}, target_child = o - Vec3{h, h, h};
    std::vector<Vec3> sources(40), targets(10);
    std::vector<cplx> charges(sources.size());
    double r_s = 0.0, r_t = 0.0;
    for (std::size_t i = 0; i < sources.size(); ++i) {
      sources[i] = s + Vec3{u(rng), u(rng), u(rng)} * w;
      charges[i] = {u(rng) - 0.25, u(rng) - 0.25};
      r_s = std::max(r_s, norm(sources[i] - s));
    }
    for (Vec3& x : targets) {
      x = o - Vec3{u(rng), u(rng), u(rng)} * w;
      r_t = std::max(r_t, norm(x - o));
    }
    // The children's far corners: the largest r_s, r_t the prediction assumes.
    sources[0] = s + Vec3{0.5, 0.5, 0.5} * w;
    targets[0] = o - Vec3{0.5, 0.5, 0.5} * w;
    r_s = r_t = norm(Vec3{0.5, 0.5, 0.5} * w);
    for (double kw : {8.0, 16.0, 32.0}) {
      const double k = kw / w;
      std::vector<cplx> direct(targets.size(), 0.0);
      double scale = 0.0;
      for (std::size_t i = 0; i < targets.size(); ++i) {
        for (std::size_t j = 0; j < sources.size(); ++j)
          direct[i] += charges[j] * helmholtz(k, targets[i], sources[j]);
        scale = std::max(scale, std::abs(direct[i]));
      }
      std::printf("t (%g %g %g) w, k w %4.1f, error (predicted):", t.x, t.y, t.z, kw);
      for (int p : {20, 40, 60, 80, max_rotation_order}) {
        const std::size_t size = std::size_t(p) * p;
        std::vector<cplx> child_m(size, 0.0), parent_m(size, 0.0), parent_l(size, 0.0),
            child_l(size, 0.0), basis(size), workspace(2 * size);
        for (std::size_t j = 0; j < sources.size(); ++j) {
          regular_basis(p - 1, k, 0.5 * w, sources[j] - source_child, basis.data());
          for (std::size_t c = 0; c < size; ++c) child_m[c] += charges[j] * std::conj(basis[c]);
        }
        const RotationShifts shifts(p, k, w);
        shifts.multipole_to_multipole(7, child_m.data(), parent_m.data(), workspace);
        const std::vector<Vec3> vector = {t * w};
        RotationMultipoleToLocal(p, k, w, vector)
            .apply(0, parent_m.data(), parent_l.data(), workspace);
        shifts.local_to_local(0, parent_l.data(), child_l.data(), workspace);
        double error = 0.0;
        for (std::size_t i = 0; i < targets.size(); ++i) {
          regular_basis(p - 1, k, 0.5 * w, targets[i] - target_child, basis.data());
          cplx sum = 0.0;
          for (std::size_t c = 0; c < size; ++c) sum += child_l[c] * basis[c];
          error = std::max(error, std::abs(sum - direct[i]) / scale);
        }
        const double predicted = truncation_prediction(p, k, r_s + r_t, norm(t * w));
        std::printf("  p %d: %.1e (%.0e)", p, error, predicted);
        // Rounding: p^2 terms per coefficient, each translation; 1e-12 is the floor asked for.
        EXPECT_LT(error, 10.0 * predicted + 1e-12) << "p " << p << " k w " << kw;
        if (predicted < 1e-15) EXPECT_LT(error, 1e-13) << "p " << p << " k w " << kw;
      }
      std::printf("\n");
    }
  }
}

// The bases to max_basis_degree against Boost: jhat_n, hhat_n to 1e-12 relative (where Boost's
// j_n, y_n are normal numbers), the harmonics orthonormal to 1e-12 at degree 100 (a
// Gauss-Legendre x trapezoid grid exact for the products).
TEST(RotationTranslations, BasesAccurateToMaxBasisDegree) {
  const int top = max_basis_degree;
  std::vector<double> jhat(top + 1);
  std::vector<cplx> hhat(top + 1);
  double worst = 0.0;
  for (double x : {0.01, 0.7, 5.0, 30.0, 80.0, 150.0, 250.0}) {
    scaled_bessel_j(top, x, jhat.data());
    scaled_hankel(top, x, hhat.data());
    double log_odd = 0.0;  // log (2n+1)!!
    for (int n = 0; n <= top; ++n) {
      log_odd += std::log(2.0 * n + 1.0);
      const double j = boost::math::sph_bessel(n, x);
      if (std::abs(j) < 1e-290) continue;
      const double expected_j = j * std::exp(log_odd - n * std::log(x));
      const double e_j = std::abs(jhat[n] - expected_j) / std::abs(expected_j);
      worst = std::max(worst, e_j);
      EXPECT_LT(e_j, 1e-12) << "jhat n " << n << " x " << x;
      const double y = boost::math::sph_neumann(n, x);
      if (std::abs(j * y) < 1e-300 || !std::isfinite(y) || std::abs(y) > 1e290) continue;
      // hhat_n = i (j_n + i y_n) x^(n+1) / (2n-1)!!.
      const double scale = std::exp((n + 1) * std::log(x) - log_odd + std::log(2.0 * n + 1.0));
      const cplx expected_h = cplx(-y, j) * scale;
      const double e_h = std::abs(hhat[n] - expected_h) / std::abs(expected_h);
      worst = std::max(worst, e_h);
      EXPECT_LT(e_h, 1e-12) << "hhat n " << n << " x " << x;
    }
  }
  // The harmonics against Boost's at random directions, relative to |Y_n| <= sqrt((2n+1)/4pi).
  std::mt19937 rng(9);
  std::normal_distribution<double> g;
  std::vector<cplx> y((top + 1) * (top + 1));
  double worst_harmonic = 0.0;
  for (int trial = 0; trial < 4; ++trial) {
    const Vec3 r{g(rng), g(rng), g(rng)};
    spherical_harmonics(top, r, y.data());
    const double theta = std::acos(r.z / norm(r)), phi = std::atan2(r.y, r.x);
    for (int n = 0; n <= top; n += 7)
      for (int m = -n; m <= n; m += 3) {
        const cplx expected = boost::math::spherical_harmonic(n, m, theta, phi);
        const double size = std::sqrt((2.0 * n + 1.0) / (4.0 * std::numbers::pi));
        worst_harmonic =
            std::max(worst_harmonic, std::abs(y[coefficient_index(n, m)] - expected) / size);
      }
  }
  EXPECT_LT(worst_harmonic, 1e-12);
  std::printf("bases to degree %d: jhat, hhat %.1e relative, harmonics %.1e against Boost\n", top,
              worst, worst_harmonic);
}

// One M2L by rotation against the dense p^2 x p^2 matrix-vector product, one core, and the
// tables of a level; a measurement, not a check (--gtest_also_run_disabled_tests).
TEST(RotationTranslations, DISABLED_TimingAgainstDenseMatrix) {
  std::mt19937 rng(1);
  for (int p : {16, 24, 40, 60, 80}) {
    const std::size_t size = std::size_t(p) * p;
    const std::vector<Vec3> vectors = {Vec3{3, -2, 1}};
    const RotationMultipoleToLocal m2l(p, 8.0, 1.0, vectors);
    const std::vector<cplx> m = random_coefficients(p, rng);
    std::vector<cplx> local(size, 0.0), workspace(2 * size);
    const int repeats = std::max(2, 200000 / int(size * p));
    auto start = std::chrono::steady_clock::now();
    for (int r = 0; r < repeats; ++r) m2l.apply(0, m.data(), local.data(), workspace);
    const double rotation =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() / repeats;
    double dense = 0.0;
    if (p <= 40) {  // 41 MB at p = 40; the values do not change the time
      const std::vector<cplx> matrix = random_coefficients(int(size), rng);
      start = std::chrono::steady_clock::now();
      for (int r = 0; r < 3; ++r)
        for (std::size_t i = 0; i < size; ++i) {
          cplx sum = 0.0;
          for (std::size_t j = 0; j < size; ++j) sum += matrix[i * size + j] * m[j];
          local[i] += sum;
        }
      dense = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() / 3;
    }
    std::printf("p %d: M2L by rotation %.1f us, dense %.1f us; level tables %.1f MB\n", p,
                rotation * 1e6, dense * 1e6,
                RotationMultipoleToLocal(p, 8.0, 1.0, octree_transfer_vectors()).bytes() / 1e6);
  }
}

// The tables an octree level shares among its 316 transfer vectors.
TEST(RotationTranslations, LevelSharesRotationsAndCoaxialBlocks) {
  const RotationMultipoleToLocal level(8, 1.0, 1.0, octree_transfer_vectors());
  EXPECT_EQ(level.vector_count(), 316u);
  EXPECT_EQ(level.rotation_count(), 49u);
  EXPECT_EQ(level.coaxial_count(), 15u);
}

// (d) Bad input is fmbem::Error.
TEST(RotationTranslations, BadInputThrows) {
  EXPECT_THROW(WignerRotation(0, 0.3), Error);
  EXPECT_THROW(WignerRotation(max_rotation_order + 1, 0.3), Error);
  EXPECT_THROW(WignerRotation(8, std::nan("")), Error);
  EXPECT_THROW(translation_direction(Vec3{}), Error);
  EXPECT_THROW(
      CoaxialTranslation(CoaxialKind::multipole_to_local, max_rotation_order + 1, 1.0, 1.0, 2.0),
      Error);
  EXPECT_THROW(CoaxialTranslation(CoaxialKind::multipole_to_local, 8, -1.0, 1.0, 2.0), Error);
  EXPECT_THROW(CoaxialTranslation(CoaxialKind::local_to_local, 8, 1.0, 0.0, 2.0), Error);
  EXPECT_THROW(CoaxialTranslation(CoaxialKind::local_to_local, 8, 1.0, 1.0, 0.0), Error);
  const std::vector<Vec3> zero = {Vec3{2, 0, 0}, Vec3{}};
  EXPECT_THROW(RotationMultipoleToLocal(8, 1.0, 1.0, zero), Error);
  EXPECT_THROW(RotationShifts(max_rotation_order + 1, 1.0, 1.0), Error);
  const RotationShifts shifts(4, 1.0, 1.0);
  std::vector<cplx> x(16), y(16), small(8), workspace(32);
  EXPECT_THROW(shifts.multipole_to_multipole(8, x.data(), y.data(), workspace), Error);
  EXPECT_THROW(shifts.local_to_local(0, x.data(), y.data(), small), Error);
  EXPECT_THROW(scaled_bessel_j(max_basis_degree + 1, 1.0, nullptr), Error);
}

}  // namespace
}  // namespace fmbem::fmm
