#include "fmbem/fmm/high_frequency.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <boost/math/special_functions/bessel.hpp>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <numbers>
#include <numeric>
#include <random>

#include "fmbem/core/error.hpp"
#include "fmbem/fmm/direct_sum.hpp"
#include "fmbem/fmm/expansions.hpp"
#include "fmbem/fmm/translations.hpp"

namespace fmbem::fmm {
namespace {

// Sources or targets in a cube: random points plus the 8 corners (the worst case of the
// expansions), random unit normals and random complex strengths.
struct PointSet {
  std::vector<Vec3> points, normals;
  std::vector<cplx> charges, dipoles;
};

PointSet cube_points(const Vec3& centre, double width, int random_count, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-0.5, 0.5);
  std::normal_distribution<double> gauss;
  PointSet set;
  for (int c = 0; c < 8; ++c)
    set.points.push_back(centre +
                         width * Vec3{c & 1 ? 0.5 : -0.5, c & 2 ? 0.5 : -0.5, c & 4 ? 0.5 : -0.5});
  for (int i = 0; i < random_count; ++i)
    set.points.push_back(centre + width * Vec3{u(rng), u(rng), u(rng)});
  for (std::size_t i = 0; i < set.points.size(); ++i) {
    set.normals.push_back(normalized(Vec3{gauss(rng), gauss(rng), gauss(rng)}));
    set.charges.push_back(cplx(u(rng), u(rng)));
    set.dipoles.push_back(cplx(u(rng), u(rng)));
  }
  return set;
}

// The direct sum's potential and normal derivative at the targets (direct_sum.hpp: the
// FMM's own exact reference).
struct Field {
  std::vector<cplx> value, normal_derivative;
};

Field direct_field(double k, const PointSet& sources, const PointSet& targets) {
  std::vector<std::size_t> order(sources.points.size());
  std::iota(order.begin(), order.end(), 0);
  const PointSources direct(sources.points, sources.normals, order, sources.charges,
                            sources.dipoles);
  Field field;
  for (std::size_t i = 0; i < targets.points.size(); ++i) {
    const auto vd = direct.potential_and_normal_derivative(0, direct.size(), k, targets.points[i],
                                                           targets.normals[i], 0.0);
    field.value.push_back(vd.value);
    field.normal_derivative.push_back(vd.normal_derivative);
  }
  return field;
}

// The field of a local signature: phi, and dphi/dn as (phi + dphi/dn) - phi.
Field signature_field(const SphereGrid& grid, double k, const Vec3& centre,
                      std::span<const cplx> local, const PointSet& targets) {
  Field field;
  const std::size_t n = targets.points.size();
  field.value.assign(n, 0.0);
  std::vector<cplx> both(n, 0.0);
  evaluate_local_signature(grid, k, centre, local, targets.points, {}, 0.0, field.value);
  evaluate_local_signature(grid, k, centre, local, targets.points, targets.normals, 1.0, both);
  for (std::size_t i = 0; i < n; ++i) field.normal_derivative.push_back(both[i] - field.value[i]);
  return field;
}

// max |a - b| / max |b|.
double relative_error(const std::vector<cplx>& a, const std::vector<cplx>& b) {
  double error = 0.0, scale = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    error = std::max(error, std::abs(a[i] - b[i]));
    scale = std::max(scale, std::abs(b[i]));
  }
  return error / scale;
}

double field_error(const Field& a, const Field& b) {
  return std::max(relative_error(a.value, b.value),
                  relative_error(a.normal_derivative, b.normal_derivative));
}

// One M2L in the diagonal form at bandwidth L between a source cube at the origin and a target
// cube at t (width w): the largest relative error of phi and dphi/dn.
double one_m2l_error(double k, double w, const Vec3& t, int bandwidth, unsigned seed) {
  const PointSet sources = cube_points(Vec3{}, w, 12, seed);
  const PointSet targets = cube_points(t, w, 12, seed + 1);
  const SphereGrid grid(bandwidth);
  std::vector<cplx> outgoing(grid.size(), 0.0), local(grid.size(), 0.0), transfer(grid.size());
  form_signature(grid, k, Vec3{}, sources.points, sources.normals, sources.charges, sources.dipoles,
                 outgoing);
  transfer_function(grid, k, t, transfer);
  diagonal_m2l(transfer, outgoing, local);
  return field_error(signature_field(grid, k, t, local, targets),
                     direct_field(k, sources, targets));
}

const double kws[] = {1, 2, 4, 8, 16, 32, 64};
const double epss[] = {1e-4, 1e-6};

// The three named octree transfer vectors and two random ones (|t|_inf >= 2w, components
// multiples of w).
std::vector<Vec3> test_transfer_vectors(double w, unsigned seed) {
  std::vector<Vec3> vectors = {Vec3{2 * w, 0, 0}, Vec3{2 * w, 2 * w, 2 * w}, Vec3{3 * w, w, 0}};
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> offset(-3, 3);
  while (vectors.size() < 5) {
    const Vec3 v{double(offset(rng)), double(offset(rng)), double(offset(rng))};
    if (std::max({std::abs(v.x), std::abs(v.y), std::abs(v.z)}) >= 2) vectors.push_back(w * v);
  }
  return vectors;
}

// Tolerances: the bandwidth and the k w where the diagonal form is declared accurate are
// calibrated so that the truncation error of the worst octree geometry stays below eps; rounding
// adds about 1e-13 there (the errors beyond the truncation's reach), so the bound is eps itself.
TEST(HighFrequency, OneM2LMatchesDirectSum) {
  for (double eps : epss)
    for (double kw : kws) {
      const double w = 1.0, k = kw;
      const int bandwidth = signature_bandwidth(k, std::sqrt(3.0) * w, eps);
      const bool accurate = diagonal_form_accurate(k, w, eps);
      double worst = 0.0;
      for (const Vec3& t : test_transfer_vectors(w, 7)) {
        const double error = one_m2l_error(k, w, t, bandwidth, 3);
        worst = std::max(worst, error);
        if (accurate)
          EXPECT_LE(error, eps) << "k w " << kw << " t " << t.x << " " << t.y << " " << t.z;
      }
      std::printf("one M2L: eps %g k w %g L %d %s worst error %.2e\n", eps, kw, bandwidth,
                  accurate ? "accurate" : "below the switch", worst);
    }
}

// Just below the measured threshold the error exceeds eps at the closest transfer vector: the
// threshold is the breakdown, not a guess far on the safe side.
TEST(HighFrequency, BreakdownIsWhereMeasured) {
  const double eps = 1e-4, kw = 0.93 * diagonal_form_min_kw(eps);
  const int bandwidth = signature_bandwidth(kw, std::sqrt(3.0), eps);
  double worst = 0.0;
  for (unsigned seed : {3u, 11u})
    worst = std::max(worst, one_m2l_error(kw, 1.0, Vec3{2, 0, 0}, bandwidth, seed));
  EXPECT_GT(worst, eps);
  EXPECT_FALSE(diagonal_form_accurate(kw, 1.0, eps));
  EXPECT_TRUE(diagonal_form_accurate(kw / 0.93, 1.0, eps));
}

// The two-level chain: sources in two children of a source parent (width 2w), P2M at the
// children (bandwidth for width w), interpolation to the parent's grid and shift to its centre,
// M2L at the parent's level, shift to each target child and anterpolation to its grid, L2P.
// Interpolation and anterpolation are exact for the band-limited parts, so the chain's error is
// the parent-level M2L's (declared accurate where 2 k w passes) plus the children's signature
// tails beyond L_c (below eps by the same bandwidth rule): bound eps.
double chain_error(double k, double w, const Vec3& parent_t, double eps, unsigned seed) {
  const double parent_w = 2 * w;
  const SphereGrid child_grid(signature_bandwidth(k, std::sqrt(3.0) * w, eps));
  const SphereGrid parent_grid(signature_bandwidth(k, std::sqrt(3.0) * parent_w, eps));
  const SphereInterpolator interpolator(child_grid, parent_grid);
  const std::size_t nc = child_grid.size(), np = parent_grid.size();
  // Children holding the parents' opposite corners: the worst case of the parent-level M2L at
  // t = (2 w_parent, 0, 0).
  const Vec3 offsets[2] = {Vec3{0.5, -0.5, -0.5} * w, Vec3{-0.5, 0.5, 0.5} * w};
  const Vec3 target_offsets[2] = {Vec3{-0.5, 0.5, 0.5} * w, Vec3{0.5, -0.5, -0.5} * w};
  PointSet all_sources;
  std::vector<cplx> child_outgoing(2 * nc, 0.0);
  for (int c = 0; c < 2; ++c) {
    const PointSet s = cube_points(offsets[c], w, 6, seed + c);
    form_signature(child_grid, k, offsets[c], s.points, s.normals, s.charges, s.dipoles,
                   std::span<cplx>(child_outgoing).subspan(c * nc, nc));
    for (auto* v : {&all_sources}) {
      v->points.insert(v->points.end(), s.points.begin(), s.points.end());
      v->normals.insert(v->normals.end(), s.normals.begin(), s.normals.end());
      v->charges.insert(v->charges.end(), s.charges.begin(), s.charges.end());
      v->dipoles.insert(v->dipoles.end(), s.dipoles.begin(), s.dipoles.end());
    }
  }
  std::vector<cplx> interpolated(2 * np, 0.0), parent_outgoing(np, 0.0);
  interpolator.interpolate(child_outgoing, interpolated);
  for (int c = 0; c < 2; ++c) {
    const auto phases = plane_wave_phases(parent_grid, k, Vec3{} - offsets[c]);
    std::span<cplx> one(interpolated.data() + c * np, np);
    multiply_by_phases(phases, one);
    for (std::size_t g = 0; g < np; ++g) parent_outgoing[g] += one[g];
  }
  std::vector<cplx> transfer(np), parent_local(np, 0.0);
  transfer_function(parent_grid, k, parent_t, transfer);
  diagonal_m2l(transfer, parent_outgoing, parent_local);
  double worst = 0.0;
  for (int c = 0; c < 2; ++c) {
    std::vector<cplx> shifted = parent_local, child_local(nc, 0.0);
    multiply_by_phases(plane_wave_phases(parent_grid, k, target_offsets[c]), shifted);
    interpolator.anterpolate(shifted, child_local);
    const Vec3 centre = parent_t + target_offsets[c];
    const PointSet targets = cube_points(centre, w, 6, seed + 10 + c);
    worst =
        std::max(worst, field_error(signature_field(child_grid, k, centre, child_local, targets),
                                    direct_field(k, all_sources, targets)));
  }
  return worst;
}

TEST(HighFrequency, TwoLevelChainMatchesDirectSum) {
  for (double eps : epss)
    for (double kw : kws) {
      const double w = 1.0, k = kw;
      // The largest size (parent bandwidth 260) once, at the smaller eps: the suite stays fast.
      if (!diagonal_form_accurate(k, 2 * w, eps) || (kw == 64 && eps > 1e-6)) continue;
      double worst = 0.0;
      for (const Vec3& t : {Vec3{4, 0, 0}, Vec3{6, 2, 0}}) {
        const double error = chain_error(k, w, t, eps, 5);
        worst = std::max(worst, error);
        EXPECT_LE(error, eps) << "child k w " << kw << " t " << t.x << " " << t.y;
      }
      std::printf("chain: eps %g child k w %g (parent %g) worst error %.2e\n", eps, kw, 2 * kw,
                  worst);
    }
}

// Band-limited data: interpolation is exact, and anterpolation after it the identity.
TEST(HighFrequency, InterpolationRoundTripIsIdentity) {
  for (auto [lc, lp] : {std::pair{6, 13}, std::pair{20, 41}, std::pair{40, 80}}) {
    const SphereGrid child(lc), parent(lp);
    const SphereInterpolator interpolator(child, parent);
    const int count = (lc + 1) * (lc + 1);
    std::mt19937_64 rng(lc);
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    std::vector<cplx> coefficients(count), y(count);
    for (cplx& c : coefficients) c = cplx(u(rng), u(rng));
    auto sample = [&](const SphereGrid& grid) {
      std::vector<cplx> values(grid.size(), 0.0);
      for (std::size_t g = 0; g < grid.size(); ++g) {
        spherical_harmonics(lc, grid.directions()[g], y.data());
        for (int c = 0; c < count; ++c) values[g] += coefficients[c] * y[c];
      }
      return values;
    };
    const std::vector<cplx> on_child = sample(child), on_parent = sample(parent);
    std::vector<cplx> up(parent.size(), 0.0), back(child.size(), 0.0);
    interpolator.interpolate(on_child, up);
    interpolator.anterpolate(up, back);
    // Rounding of O(L) sums of O(1) terms, on values of size about sqrt(count): 1e-12.
    EXPECT_LE(relative_error(up, on_parent), 1e-12) << lc;
    EXPECT_LE(relative_error(back, on_child), 1e-12) << lc;
    // Anterpolation is the adjoint in the quadratures: sum_p w_p (I f) g = sum_c w_c f (A g)
    // for any parent data g.
    std::vector<cplx> g(parent.size()), ag(child.size(), 0.0);
    for (cplx& v : g) v = cplx(u(rng), u(rng));
    interpolator.anterpolate(g, ag);
    cplx left = 0.0, right = 0.0;
    for (std::size_t i = 0; i < parent.size(); ++i) left += parent.weights()[i] * up[i] * g[i];
    for (std::size_t i = 0; i < child.size(); ++i)
      right += child.weights()[i] * on_child[i] * ag[i];
    EXPECT_LE(std::abs(left - right), 1e-12 * std::abs(left)) << lc;
    std::printf("interpolation L %d -> %d: interpolation %.1e, round trip %.1e\n", lc, lp,
                relative_error(up, on_parent), relative_error(back, on_child));
  }
}

// Cells passed together (the executor passes a parent's children, 1 to 8, and the contiguous
// form runs eight at a time with a remainder) are each transformed exactly, and bit for bit as
// when passed alone: a cell's arithmetic does not depend on the cells beside it, which the
// distributed FMM's bit-for-bit equality with the whole FMM relies on.
TEST(HighFrequency, CellsTransformedTogetherEqualCellsAlone) {
  const int lc = 9, lp = 14;
  const SphereGrid child(lc), parent(lp);
  const SphereInterpolator interpolator(child, parent);
  const int harmonics = (lc + 1) * (lc + 1), cells = 11;
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<cplx> y(harmonics), on_child(cells * child.size(), 0.0),
      on_parent(cells * parent.size(), 0.0);
  for (int c = 0; c < cells; ++c) {
    std::vector<cplx> coefficients(harmonics);
    for (cplx& v : coefficients) v = cplx(u(rng), u(rng));
    for (const auto& [grid, values] :
         {std::pair{&child, &on_child}, std::pair{&parent, &on_parent}})
      for (std::size_t g = 0; g < grid->size(); ++g) {
        spherical_harmonics(lc, grid->directions()[g], y.data());
        for (int h = 0; h < harmonics; ++h)
          (*values)[c * grid->size() + g] += coefficients[h] * y[h];
      }
  }
  std::vector<cplx> all_up(on_parent.size(), 0.0), all_back(on_child.size(), 0.0);
  interpolator.interpolate(on_child, all_up);
  interpolator.anterpolate(all_up, all_back);
  // Bandwidth lc data are interpolated exactly and anterpolation undoes it (rounding: 1e-12 as
  // in the round trip above).
  EXPECT_LE(relative_error(all_up, on_parent), 1e-12);
  EXPECT_LE(relative_error(all_back, on_child), 1e-12);
  for (int together = 1; together <= cells; ++together) {
    std::vector<const cplx*> from;
    std::vector<cplx*> to;
    std::vector<cplx> up(together * parent.size(), 0.0), back(together * child.size(), 0.0);
    for (int c = 0; c < together; ++c) {
      from.push_back(&on_child[c * child.size()]);
      to.push_back(&up[c * parent.size()]);
    }
    interpolator.interpolate(from, to);
    from.clear();
    to.clear();
    for (int c = 0; c < together; ++c) {
      from.push_back(&up[c * parent.size()]);
      to.push_back(&back[c * child.size()]);
    }
    interpolator.anterpolate(from, to);
    for (int c = 0; c < together; ++c) {
      std::vector<cplx> alone_up(parent.size(), 0.0), alone_back(child.size(), 0.0);
      interpolator.interpolate(std::span<const cplx>(&on_child[c * child.size()], child.size()),
                               alone_up);
      interpolator.anterpolate(alone_up, alone_back);
      EXPECT_TRUE(std::equal(alone_up.begin(), alone_up.end(), up.begin() + c * parent.size()))
          << together << " together, cell " << c;
      EXPECT_TRUE(std::equal(alone_back.begin(), alone_back.end(), back.begin() + c * child.size()))
          << together << " together, cell " << c;
    }
  }
}

// The FMM's own P2M (cpu_executor.cpp): moments of charges and dipoles about centre.
std::vector<cplx> low_frequency_moments(int p, double k, double sigma, const Vec3& centre,
                                        const PointSet& s) {
  const int size = p * p, extended = (p + 1) * (p + 1);
  const GauntTable gaunt(p + 1);
  const auto gradient = gradient_terms(gaunt, p, k, sigma);
  const HarmonicGradient g[3] = {harmonic_gradient(-1), harmonic_gradient(0), harmonic_gradient(1)};
  std::vector<cplx> m(size, 0.0), basis(extended), by_q(3 * extended, 0.0);
  for (std::size_t j = 0; j < s.points.size(); ++j) {
    regular_basis(p, k, sigma, s.points[j] - centre, basis.data());
    for (int c = 0; c < size; ++c) m[c] += s.charges[j] * std::conj(basis[c]);
    for (int q = 0; q < 3; ++q) {
      const Vec3& nu = s.normals[j];
      const cplx weight = s.dipoles[j] * std::conj(g[q].x * nu.x + g[q].y * nu.y + g[q].z * nu.z);
      for (int c = 0; c < extended; ++c) by_q[q * extended + c] += weight * std::conj(basis[c]);
    }
  }
  for (const GradientTerm& term : gradient)
    m[term.target] += std::conj(term.coefficient) * by_q[(term.q + 1) * extended + term.source];
  return m;
}

// The order a low-frequency expansion of a cell needs: the tail of exp(ik s.r) beyond degree
// p - 1, sum_{n >= p} (2n + 1) |j_n(k r)| (times 1 + n / (k r) for the dipoles' gradient),
// r the cell's half diagonal, below eps / 10.
int low_frequency_order(double k, double w, double eps) {
  const double r = std::sqrt(3.0) / 2 * w;
  for (int p = 1; p <= max_degree; ++p) {
    double tail = 0.0;
    for (int n = p; n < p + 40; ++n)
      tail += (2.0 * n + 1.0) * std::abs(boost::math::sph_bessel(n, k * r)) * (1.0 + n / (k * r));
    if (tail < eps / 10) return p;
  }
  return max_degree;
}

// Multipole moments (the FMM's P2M at the cell's p) converted to a signature equal the signature
// formed from the sources, to the truncation at p (below eps / 10 relative to the largest
// source term: bound eps against max |F|, which the random strengths keep of that order).
TEST(HighFrequency, MultipoleToSignatureMatchesSources) {
  for (double eps : epss)
    for (double kw : {1.0, 2.0, 4.0, 8.0, 16.0}) {
      const double w = 1.0, k = kw;
      const int p = low_frequency_order(k, w, eps);
      const SphereGrid grid(std::max(p, signature_bandwidth(k, std::sqrt(3.0) * w, eps)));
      const PointSet s = cube_points(Vec3{}, w, 12, 21);
      std::vector<cplx> direct(grid.size(), 0.0);
      form_signature(grid, k, Vec3{}, s.points, s.normals, s.charges, s.dipoles, direct);
      const std::vector<cplx> moments = low_frequency_moments(p, k, w, Vec3{}, s);
      const std::vector<cplx> matrix = multipole_to_signature(grid, p, k, w);
      std::vector<cplx> converted(grid.size(), 0.0);
      for (std::size_t g = 0; g < grid.size(); ++g)
        for (int c = 0; c < p * p; ++c) converted[g] += matrix[g * p * p + c] * moments[c];
      const double error = relative_error(converted, direct);
      EXPECT_LE(error, eps) << "k w " << kw;
      std::printf("multipole -> signature: eps %g k w %g p %d error %.2e\n", eps, kw, p, error);
    }
}

// A local signature from far sources (transfer vector (3w, 3w, 3w): |d| / |t| = 1/3, so the
// diagonal form converges fast even at small k w, with 6 degrees above the bandwidth rule; at
// k w = 1 any bandwidth that converges there already loses digits to h_n(k|t|))
// converted to local coefficients at the cell's p and evaluated with the FMM's regular basis
// equals the direct sum, to the local expansion's truncation (eps / 10) and the M2L's: bound eps.
TEST(HighFrequency, SignatureToLocalMatchesDirectSum) {
  for (double eps : epss)
    for (double kw : {2.0, 4.0, 8.0, 16.0}) {
      const double w = 1.0, k = kw;
      const int p = low_frequency_order(k, w, eps);
      const Vec3 t{3 * w, 3 * w, 3 * w};
      const SphereGrid grid(std::max(p, signature_bandwidth(k, std::sqrt(3.0) * w, eps) + 6));
      const PointSet s = cube_points(Vec3{}, w, 12, 31), targets = cube_points(t, w, 12, 32);
      std::vector<cplx> outgoing(grid.size(), 0.0), local(grid.size(), 0.0), transfer(grid.size());
      form_signature(grid, k, Vec3{}, s.points, s.normals, s.charges, s.dipoles, outgoing);
      transfer_function(grid, k, t, transfer);
      diagonal_m2l(transfer, outgoing, local);
      const std::vector<cplx> matrix = signature_to_local(grid, p, k, w);
      std::vector<cplx> coefficients(p * p, 0.0), basis(p * p);
      for (int c = 0; c < p * p; ++c)
        for (std::size_t g = 0; g < grid.size(); ++g)
          coefficients[c] += matrix[c * grid.size() + g] * local[g];
      std::vector<cplx> potential;
      for (const Vec3& x : targets.points) {
        regular_basis(p - 1, k, w, x - t, basis.data());
        cplx sum = 0.0;
        for (int c = 0; c < p * p; ++c) sum += coefficients[c] * basis[c];
        potential.push_back(sum);
      }
      const double error = relative_error(potential, direct_field(k, s, targets).value);
      EXPECT_LE(error, eps) << "k w " << kw;
      std::printf("signature -> local: eps %g k w %g p %d L %d error %.2e\n", eps, kw, p,
                  grid.bandwidth(), error);
    }
}

TEST(HighFrequency, BadInputIsAnError) {
  EXPECT_THROW(SphereGrid(-1), Error);
  EXPECT_THROW(signature_bandwidth(-1.0, 1.0, 1e-4), Error);
  EXPECT_THROW(signature_bandwidth(1.0, 1.0, 0.0), Error);
  EXPECT_THROW(diagonal_form_accurate(-1.0, 1.0, 1e-4), Error);
  const SphereGrid grid(4), small(2);
  std::vector<cplx> wrong(grid.size() + 1);
  EXPECT_THROW(transfer_function(grid, 1.0, Vec3{2, 0, 0}, wrong), Error);
  EXPECT_THROW(transfer_function(grid, 1.0, Vec3{}, std::span<cplx>(wrong).first(grid.size())),
               Error);
  EXPECT_THROW(diagonal_m2l(std::vector<cplx>(grid.size()), wrong, wrong), Error);
  EXPECT_THROW(SphereInterpolator(grid, small), Error);
  EXPECT_THROW(multipole_to_signature(grid, 0, 1.0, 1.0), Error);
  EXPECT_THROW(signature_to_local(grid, 4, -1.0, 1.0), Error);
}

// The sphere grid integrates spherical harmonics of degree <= 2L + 1 exactly.
TEST(HighFrequency, SphereGridIsExact) {
  const int bandwidth = 10;
  const SphereGrid grid(bandwidth);
  const int degree = 2 * bandwidth + 1, count = (degree + 1) * (degree + 1);
  std::vector<cplx> integral(count, 0.0), y(count);
  for (std::size_t g = 0; g < grid.size(); ++g) {
    spherical_harmonics(degree, grid.directions()[g], y.data());
    for (int c = 0; c < count; ++c) integral[c] += grid.weights()[g] * y[c];
  }
  EXPECT_NEAR(integral[0].real(), std::sqrt(4.0 * std::numbers::pi), 1e-13);
  for (int c = 1; c < count; ++c) EXPECT_LE(std::abs(integral[c]), 1e-13) << c;
}

// Timings of the level operations at L = 32, 64, 128 (one cell; interpolation from L / 2).
TEST(HighFrequency, Timings) {
  using clock = std::chrono::steady_clock;
  for (int bandwidth : {32, 64, 128}) {
    const SphereGrid grid(bandwidth), child(bandwidth / 2);
    const SphereInterpolator interpolator(child, grid);
    std::vector<cplx> transfer(grid.size()), outgoing(grid.size(), 1.0), local(grid.size(), 0.0);
    std::vector<cplx> child_values(child.size(), 1.0);
    auto t0 = clock::now();
    transfer_function(grid, 40.0, Vec3{2, 0, 0}, transfer);
    auto t1 = clock::now();
    const int repeats = 20;
    for (int r = 0; r < repeats; ++r) diagonal_m2l(transfer, outgoing, local);
    auto t2 = clock::now();
    interpolator.interpolate(child_values, local);
    auto t3 = clock::now();
    interpolator.anterpolate(local, child_values);
    auto t4 = clock::now();
    auto ms = [](auto a, auto b) {
      return std::chrono::duration<double, std::milli>(b - a).count();
    };
    std::printf(
        "L %d (%zu points): transfer function %.2f ms, M2L %.4f ms, interpolation %d -> "
        "%d %.2f ms, anterpolation %.2f ms\n",
        bandwidth, grid.size(), ms(t0, t1), ms(t1, t2) / repeats, bandwidth / 2, bandwidth,
        ms(t2, t3), ms(t3, t4));
  }
}

// Calibration runs (slow: about a minute each; --gtest_also_run_disabled_tests). They measured
// excess_bandwidth_constant and the thresholds of diagonal_form_min_kw.
TEST(HighFrequencyCalibration, DISABLED_MinimalBandwidth) {
  for (double eps : epss)
    for (double kw : {16.0, 24.0, 32.0, 48.0, 64.0}) {
      const double k = kw, kd = k * std::sqrt(3.0);
      const auto vectors = test_transfer_vectors(1.0, 7);
      int found = -1;
      for (int bandwidth = int(kd); bandwidth < int(kd) + 80 && found < 0; ++bandwidth) {
        double worst = 0.0;
        for (const Vec3& t : vectors)
          worst = std::max(worst, one_m2l_error(k, 1.0, t, bandwidth, 3));
        if (worst <= eps) found = bandwidth;
      }
      const double c = (found - kd) / (std::pow(std::log10(1 / eps), 2.0 / 3.0) * std::cbrt(kd));
      std::printf("eps %g k w %g: minimal L %d (constant %.2f), rule's L %d\n", eps, kw, found,
                  found < 0 ? 0.0 : c, signature_bandwidth(k, std::sqrt(3.0), eps));
    }
}

TEST(HighFrequencyCalibration, DISABLED_Breakdown) {
  for (double eps : {1e-3, 1e-4, 1e-5, 1e-6, 1e-7}) {
    auto worst = [&](double kw) {
      const int bandwidth = signature_bandwidth(kw, std::sqrt(3.0), eps);
      double e = 0.0;
      for (unsigned seed : {3u, 11u})
        for (const Vec3& t : test_transfer_vectors(1.0, 7))
          e = std::max(e, one_m2l_error(kw, 1.0, t, bandwidth, seed));
      return e;
    };
    double lo = 2, hi = 128;
    if (worst(hi) > eps) {
      std::printf("eps %g: not reached at k w 128\n", eps);
      continue;
    }
    while (hi / lo > 1.01) {
      const double mid = std::sqrt(lo * hi);
      (worst(mid) <= eps ? hi : lo) = mid;
    }
    std::printf("eps %g: breakdown at k w %.2f (error %.2e there, %.2e at 0.95 of it)\n", eps, hi,
                worst(hi), worst(0.95 * hi));
  }
}

}  // namespace
}  // namespace fmbem::fmm
