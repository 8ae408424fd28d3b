#include "fmbem/fmm/rotation_translations.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <string>

#include "fmbem/core/error.hpp"

namespace fmbem::fmm {

namespace {

void check_rotation_order(int p, const char* what) {
  if (p < 1 || p > max_rotation_order)
    throw Error(std::string(what) + ": the expansion order p must lie in 1.." +
                std::to_string(max_rotation_order) + ", got " + std::to_string(p));
}

// The ladder coefficients: L_+ Y_n^m = raise(n, m) Y_n^(m+1), L_- Y_n^m = lower(n, m) Y_n^(m-1).
double raise(int n, int m) { return std::sqrt(double(n - m) * (n + m + 1)); }
double lower(int n, int m) { return std::sqrt(double(n + m) * (n - m + 1)); }

// The coefficients of the derivative relations of the bases (Gumerov and Duraiswami's a_n^m,
// b_n^m): d/dz F_n^m involves a_(n-1)^m F_(n-1)^m and a_n^m F_(n+1)^m; (d/dx - i d/dy) F_n^m
// involves b_(n+1)^(m-1) F_(n+1)^(m-1) and b_n^-m F_(n-1)^(m-1).
double coefficient_a(int n, int m) {
  const int am = std::abs(m);
  if (n < am) return 0.0;
  return std::sqrt(double(n + 1 + am) * (n + 1 - am) / ((2.0 * n + 1.0) * (2.0 * n + 3.0)));
}

double coefficient_b(int n, int m) {
  if (std::abs(m) > n) return 0.0;
  const double product = double(n - m - 1) * (n - m);
  if (product == 0.0) return 0.0;
  const double value = std::sqrt(product / ((2.0 * n - 1.0) * (2.0 * n + 1.0)));
  return m >= 0 ? value : -value;
}

}  // namespace

TranslationDirection translation_direction(const Vec3& t) {
  const double rho = std::hypot(t.x, t.y), distance = std::hypot(rho, t.z);
  if (!(distance > 0.0) || !std::isfinite(distance))
    throw Error("rotation translation: the translation vector must be finite and non-zero");
  return {distance, rho > 0.0 ? std::atan2(t.y, t.x) : 0.0, std::atan2(rho, t.z)};
}

WignerRotation::WignerRotation(int p, double beta) : p_(p), beta_(beta) {
  check_rotation_order(p, "Wigner rotation");
  if (!std::isfinite(beta)) throw Error("Wigner rotation: the angle must be finite");
  values_.assign(block_offset(p), 0.0);
  const double s = std::sin(beta), c = std::cos(beta);
  if (s == 0.0) {
    // beta = 0: the identity; beta = pi: Y_n^m(R_y(pi) x) = (-1)^(n+m) Y_n^-m(x).
    for (int n = 0; n < p; ++n)
      for (int m = -n; m <= n; ++m) {
        const int column = c > 0.0 ? m : -m;
        values_[block_offset(n) + (m + n) * (2 * n + 1) + (column + n)] =
            c > 0.0 ? 1.0 : ((n + m) % 2 ? -1.0 : 1.0);
      }
    return;
  }
  if (std::abs(s) >= 0.2) {
    compute_recurrence(beta);
    return;
  }
  // The column m' = 1 divides by sin(beta): near the poles compose two well-conditioned
  // rotations, E(beta) = E(pi/2) E(beta - pi/2) (R_y(a) R_y(b) = R_y(a + b)).
  const WignerRotation quarter(p, 0.5 * std::numbers::pi), rest(p, beta - 0.5 * std::numbers::pi);
  for (int n = 0; n < p; ++n) {
    const int width = 2 * n + 1;
    const std::size_t at = block_offset(n);
    for (int i = 0; i < width; ++i)
      for (int j = 0; j < width; ++j) {
        double sum = 0.0;
        for (int l = 0; l < width; ++l)
          sum += quarter.values_[at + i * width + l] * rest.values_[at + l * width + j];
        values_[at + i * width + j] = sum;
      }
  }
}

void WignerRotation::compute_recurrence(double beta) {
  const double s = std::sin(beta);
  std::vector<cplx> y(std::size_t(p_) * p_);
  spherical_harmonics(p_ - 1, Vec3{s, 0.0, std::cos(beta)}, y.data());
  for (int n = 0; n < p_; ++n) {
    const int width = 2 * n + 1;
    double* block = &values_[block_offset(n)];
    const auto e = [&](int m, int j) -> double& { return block[(m + n) * width + (j + n)]; };
    const auto below = [&](int m, int j) { return m + 1 <= n ? e(m + 1, j) : 0.0; };
    // Column 0 from the harmonics at R_y(beta) e_z (real: the point has phi = 0).
    const double norm = std::sqrt(4.0 * std::numbers::pi / width);
    for (int m = 0; m <= n; ++m) e(m, 0) = norm * y[coefficient_index(n, m)].real();
    if (n > 0) {
      // L_z and L_y on both sides of Y_n^m(R x) = sum E Y_n^j(x) give, at j = 0,
      // E_{m,1} + E_{m,-1} = -2m E_{m,0} / (c sin beta) and
      // E_{m,-1} - E_{m,1} = (raise E_{m+1,0} - lower E_{m-1,0}) / c, c = sqrt(n(n+1)).
      const double cn = std::sqrt(double(n) * (n + 1));
      for (int m = 1; m <= n; ++m)
        e(m, 1) = (lower(n, m) * e(m - 1, 0) - raise(n, m) * below(m, 0) - 2.0 * m * e(m, 0) / s) /
                  (2.0 * cn);
    }
    // L_y commutes with R_y: raise(j-1) E_{m,j-1} - lower(j+1) E_{m,j+1} =
    // raise(m) E_{m+1,j} - lower(m) E_{m-1,j}, marched outwards in j over the wedge m >= |j|.
    for (int j = 1; j < n; ++j)
      for (int m = j + 1; m <= n; ++m)
        e(m, j + 1) = (raise(n, j - 1) * e(m, j - 1) - raise(n, m) * below(m, j) +
                       lower(n, m) * e(m - 1, j)) /
                      lower(n, j + 1);
    for (int j = 0; j > -n; --j)
      for (int m = 1 - j; m <= n; ++m)
        e(m, j - 1) = (lower(n, j + 1) * e(m, j + 1) + raise(n, m) * below(m, j) -
                       lower(n, m) * e(m - 1, j)) /
                      raise(n, j - 1);
    // The rest by E_{j,m} = (-1)^(m+j) E_{m,j} and E_{-m,-j} = (-1)^(m+j) E_{m,j}.
    for (int m = -n; m <= n; ++m)
      for (int j = -n; j <= n; ++j) {
        if (m >= std::abs(j)) continue;
        const double sign = (m + j) % 2 ? -1.0 : 1.0;
        if (std::abs(m) >= std::abs(j))
          e(m, j) = sign * e(-m, -j);  // m < 0
        else if (j >= 0)
          e(m, j) = sign * e(j, m);
        else
          e(m, j) = e(-j, -m);
      }
  }
}

void WignerRotation::apply(const cplx* in, cplx* out, bool transposed) const {
  for (int n = 0; n < p_; ++n) {
    const int width = 2 * n + 1, first = n * n;
    const double* block = &values_[block_offset(n)];
    const cplx* x = in + first;
    cplx* y = out + first;
    if (!transposed) {
      for (int i = 0; i < width; ++i) {
        const double* row = block + i * width;
        double re = 0.0, im = 0.0;
        for (int j = 0; j < width; ++j) {
          re += row[j] * x[j].real();
          im += row[j] * x[j].imag();
        }
        y[i] = {re, im};
      }
    } else {
      std::fill(y, y + width, cplx(0.0));
      for (int j = 0; j < width; ++j) {
        const double* row = block + j * width;
        const cplx xj = x[j];
        for (int i = 0; i < width; ++i) y[i] += row[i] * xj;
      }
    }
  }
}

CoaxialTranslation::CoaxialTranslation(CoaxialKind kind, int p, Wavenumber k, double sigma,
                                       double distance)
    : p_(p), kind_(kind) {
  check_rotation_order(p, "coaxial translation");
  if (!k.finite_and_valid())
    throw Error("coaxial translation: the wavenumber must be finite and >= 0");
  if (!(sigma > 0.0) || !std::isfinite(sigma))
    throw Error("coaxial translation: the scale sigma must be finite and > 0");
  if (!(distance > 0.0) || !std::isfinite(distance))
    throw Error("coaxial translation: the distance must be finite and > 0");
  const bool singular = kind == CoaxialKind::multipole_to_local;
  const double kappa2 = k.squared() * sigma * sigma, d = distance / sigma;
  // d/dz Fhat_n = down(n) a_(n-1) Fhat_(n-1) - up(n) a_n Fhat_(n+1), and the same pair of
  // factors in (d/dx - i d/dy): (2n+1, kappa^2/(2n+3)) for Rhat, (kappa^2/(2n-1), 2n+1) for Shat.
  const auto down = [&](int n) { return singular ? kappa2 / (2.0 * n - 1.0) : 2.0 * n + 1.0; };
  const auto up = [&](int n) { return singular ? 2.0 * n + 1.0 : kappa2 / (2.0 * n + 3.0); };
  const int top = 2 * p - 2, rows = top + 2;  // degrees n of Fhat used: 0 .. 2p - 2
  // X^0_{n 0} = sqrt(4 pi) Fhat_n^0(d e_z) = radial_n sqrt(2n + 1).
  std::vector<cplx> current(std::size_t(rows) * p, 0.0), next(current.size(), 0.0);
  const auto x = [&](std::vector<cplx>& v, int n, int l) -> cplx& {
    return v[std::size_t(n) * p + l];
  };
  if (singular) {
    std::vector<cplx> hhat(top + 1);
    singular_radial(top, k, distance, hhat.data());
    double power = 1.0 / d;  // d^-(n+1)
    for (int n = 0; n <= top; ++n, power /= d)
      x(current, n, 0) = hhat[n] * (power * std::sqrt(2.0 * n + 1.0));
  } else {
    std::vector<double> jhat(top + 1);
    regular_radial(top, k, distance, jhat.data());
    double power = 1.0;  // d^n
    for (int n = 0; n <= top; ++n, power *= d)
      x(current, n, 0) = jhat[n] * power * std::sqrt(2.0 * n + 1.0);
  }
  offsets_.resize(p + 1, 0);
  for (int m = 0; m < p; ++m) offsets_[m + 1] = offsets_[m] + std::size_t(p - m) * (p - m);
  values_.assign(offsets_[p], 0.0);
  for (int m = 0; m < p; ++m) {
    if (m > 0) {
      // (d/dx - i d/dy) on both sides at the coefficient of Rhat_(m-1)^(m-1): order m from m - 1.
      std::fill(next.begin(), next.end(), cplx(0.0));
      const double denominator = (2.0 * m + 1.0) * coefficient_b(m, -m);
      for (int n = m; n <= top - m; ++n)
        x(next, n, m) = -(up(n) * coefficient_b(n + 1, m - 1) * x(current, n + 1, m - 1) -
                          down(n) * coefficient_b(n, -m) * x(current, n - 1, m - 1)) /
                        denominator;
      std::swap(current, next);
    }
    // d/dz on both sides at the coefficient of Rhat_l^m: column l + 1 from columns l, l - 1.
    for (int l = m; l < p - 1; ++l) {
      const double a_l = coefficient_a(l, m), a_below = coefficient_a(l - 1, m);
      const double from_below = kappa2 / (2.0 * l + 1.0) * a_below;
      for (int n = m; n <= top - l - 1; ++n) {
        cplx sum = -up(n) * coefficient_a(n, m) * x(current, n + 1, l);
        if (n > m) sum += down(n) * coefficient_a(n - 1, m) * x(current, n - 1, l);
        if (l > m) sum += from_below * x(current, n, l - 1);
        x(current, n, l + 1) = sum / ((2.0 * l + 3.0) * a_l);
      }
    }
    const int size = p - m;
    cplx* block = &values_[offsets_[m]];
    for (int i = m; i < p; ++i)
      for (int j = m; j < p; ++j) {
        cplx& out = block[std::size_t(i - m) * size + (j - m)];
        switch (kind) {
          case CoaxialKind::multipole_to_local:  // L_i = sum_j X_{j i} M_j / (sigma (2j+1))
            out = x(current, j, i) / (sigma * (2.0 * j + 1.0));
            break;
          case CoaxialKind::local_to_local:  // child degree i, Rhat_l(r; sigma) = 2^-l Rhat_l(r;
                                             // sigma/2)
            out = x(current, j, i) * std::ldexp(1.0, -i);
            break;
          case CoaxialKind::multipole_to_multipole:
            out = std::conj(x(current, i, j)) * std::ldexp(1.0, -j);
            break;
        }
      }
  }
}

void CoaxialTranslation::apply(const cplx* in, cplx* out) const {
  for (int m = -(p_ - 1); m < p_; ++m) {
    const int am = std::abs(m), size = p_ - am;
    const cplx* block = &values_[offsets_[am]];
    for (int i = 0; i < size; ++i) {
      const cplx* row = block + std::size_t(i) * size;
      cplx sum = 0.0;
      for (int j = 0; j < size; ++j) sum += row[j] * in[coefficient_index(am + j, m)];
      out[coefficient_index(am + i, m)] = sum;
    }
  }
}

void rotate_translate_add(const WignerRotation& rotation, double alpha,
                          const CoaxialTranslation& coaxial, const cplx* in, cplx* out,
                          std::span<cplx> workspace) {
  const int p = rotation.order(), size = p * p;
  if (coaxial.order() != p)
    throw Error("rotation translation: the rotation and the coaxial block differ in order");
  if (workspace.size() < 2 * std::size_t(size))
    throw Error("rotation translation: the workspace needs 2 p^2 values");
  cplx* a = workspace.data();
  cplx* b = a + size;
  // e^{i m alpha} for m = 0 .. p - 1; e^{-i m alpha} = conj.
  std::vector<cplx> phase(p);
  for (int m = 0; m < p; ++m) phase[m] = std::polar(1.0, m * alpha);
  for (int n = 0; n < p; ++n)
    for (int m = -n; m <= n; ++m) {
      const cplx z = m >= 0 ? phase[m] : std::conj(phase[-m]);
      a[coefficient_index(n, m)] = z * in[coefficient_index(n, m)];
    }
  rotation.apply(a, b, true);
  coaxial.apply(b, a);
  rotation.apply(a, b, false);
  for (int n = 0; n < p; ++n)
    for (int m = -n; m <= n; ++m) {
      const cplx z = m >= 0 ? std::conj(phase[m]) : phase[-m];
      out[coefficient_index(n, m)] += z * b[coefficient_index(n, m)];
    }
}

std::size_t rotation_workspace(int p) {
  return 2 * std::size_t(p) * std::size_t(p) * 2 * rotation_lanes;
}

namespace {

constexpr int lanes = rotation_lanes;

// Expansions of `lanes` pairs side by side: coefficient c's real parts at [c][0][lane], its
// imaginary parts at [c][1][lane].
inline double* lane_values(double* values, int c) { return values + std::size_t(c) * 2 * lanes; }
inline const double* lane_values(const double* values, int c) {
  return values + std::size_t(c) * 2 * lanes;
}

// out = E^n in or (E^n)^T in on every degree, a real matrix times the lanes.
[[gnu::always_inline]] inline void rotate_lanes(const WignerRotation& rotation, const double* in,
                                                double* out, bool transposed) {
  for (int n = 0; n < rotation.order(); ++n) {
    const int width = 2 * n + 1, first = n * n;
    const double* block = rotation.block(n);
    for (int i = 0; i < width; ++i) {
      double acc[2 * lanes] = {};
      for (int j = 0; j < width; ++j) {
        const double e = transposed ? block[j * width + i] : block[i * width + j];
        const double* x = lane_values(in, first + j);
#pragma omp simd
        for (int b = 0; b < 2 * lanes; ++b) acc[b] += e * x[b];
      }
      std::copy(acc, acc + 2 * lanes, lane_values(out, first + i));
    }
  }
}

// out[(n, m)] = sum_n' B^|m|(n, n') in[(n', m)]: complex matrices times the lanes.
[[gnu::always_inline]] inline void translate_lanes(const CoaxialTranslation& coaxial,
                                                   const double* in, double* out) {
  const int p = coaxial.order();
  for (int m = -(p - 1); m < p; ++m) {
    const int am = std::abs(m), size = p - am;
    const cplx* block = coaxial.block(am);
    for (int i = 0; i < size; ++i) {
      double re[lanes] = {}, im[lanes] = {};
      for (int j = 0; j < size; ++j) {
        const double br = block[std::size_t(i) * size + j].real(),
                     bi = block[std::size_t(i) * size + j].imag();
        const double* x = lane_values(in, coefficient_index(am + j, m));
#pragma omp simd
        for (int b = 0; b < lanes; ++b) {
          re[b] += br * x[b] - bi * x[lanes + b];
          im[b] += br * x[lanes + b] + bi * x[b];
        }
      }
      double* y = lane_values(out, coefficient_index(am + i, m));
      std::copy(re, re + lanes, y);
      std::copy(im, im + lanes, y + lanes);
    }
  }
}

}  // namespace

std::vector<cplx> rotation_phases(int p, double alpha) {
  std::vector<cplx> phase(std::size_t(std::max(p, 0)));
  for (int m = 0; m < p; ++m) phase[std::size_t(m)] = std::polar(1.0, m * alpha);
  return phase;
}

// Built for x86-64-v3 (AVX2 + FMA) and the baseline; the loader picks the one the CPU runs.
__attribute__((target_clones("arch=x86-64-v3", "default"))) void rotate_translate_add_many(
    const WignerRotation& rotation, const CoaxialTranslation& coaxial, const cplx* const* phases,
    const cplx* const* in, cplx* const* out, int count, std::span<double> workspace) {
  const int p = rotation.order(), size = p * p;
  if (coaxial.order() != p)
    throw Error("rotation translation: the rotation and the coaxial block differ in order");
  if (count < 0 || count > lanes)
    throw Error("rotation translation: up to " + std::to_string(lanes) + " pairs at once");
  if (workspace.size() < rotation_workspace(p))
    throw Error("rotation translation: the workspace is too small");
  double* a = workspace.data();
  double* b = a + std::size_t(size) * 2 * lanes;
  // Z(alpha): coefficient (n, m) times e^{i m alpha} (e^{-i |m| alpha}, the conjugate, for m < 0).
  for (int n = 0; n < p; ++n)
    for (int m = -n; m <= n; ++m) {
      const int c = coefficient_index(n, m);
      double* y = lane_values(a, c);
      for (int l = 0; l < lanes; ++l) {
        cplx v = 0.0;
        if (l < count) v = (m >= 0 ? phases[l][m] : std::conj(phases[l][-m])) * in[l][c];
        y[l] = v.real();
        y[lanes + l] = v.imag();
      }
    }
  rotate_lanes(rotation, a, b, true);
  translate_lanes(coaxial, b, a);
  rotate_lanes(rotation, a, b, false);
  for (int n = 0; n < p; ++n)
    for (int m = -n; m <= n; ++m) {
      const int c = coefficient_index(n, m);
      const double* y = lane_values(b, c);
      for (int l = 0; l < count; ++l) {
        const cplx z = m >= 0 ? std::conj(phases[l][m]) : phases[l][-m];
        out[l][c] += z * cplx(y[l], y[lanes + l]);
      }
    }
}

RotationMultipoleToLocal::RotationMultipoleToLocal(int p, Wavenumber k, double sigma,
                                                   std::span<const Vec3> transfer_vectors)
    : p_(p) {
  check_rotation_order(p, "M2L by rotation");
  // Distinct angles and lengths up to rounding: the octree's vectors are integer multiples of
  // the cell width, so equal ones agree to a few ulps.
  const double tolerance = 1e-12;
  for (const Vec3& t : transfer_vectors) {
    const TranslationDirection dir = translation_direction(t);
    const auto rotation = std::find_if(rotations_.begin(), rotations_.end(), [&](const auto& r) {
      return std::abs(r.beta() - dir.beta) <= tolerance;
    });
    std::size_t rotation_index = rotation - rotations_.begin();
    if (rotation == rotations_.end()) rotations_.emplace_back(p, dir.beta);
    std::size_t coaxial_index = 0;
    for (; coaxial_index < distances_.size(); ++coaxial_index)
      if (std::abs(distances_[coaxial_index] - dir.distance) <= tolerance * dir.distance) break;
    if (coaxial_index == distances_.size()) {
      distances_.push_back(dir.distance);
      coaxials_.emplace_back(CoaxialKind::multipole_to_local, p, k, sigma, dir.distance);
    }
    entries_.push_back({rotation_index, coaxial_index, dir.alpha});
    const std::vector<cplx> phase = rotation_phases(p, dir.alpha);
    phases_.insert(phases_.end(), phase.begin(), phase.end());
  }
}

void RotationMultipoleToLocal::apply(std::size_t vector, const cplx* multipole, cplx* local,
                                     std::span<cplx> workspace) const {
  const Entry& e = entries_.at(vector);
  rotate_translate_add(rotations_[e.rotation], e.alpha, coaxials_[e.coaxial], multipole, local,
                       workspace);
}

void RotationMultipoleToLocal::apply_many(std::size_t vector, const cplx* const* multipoles,
                                          cplx* const* locals, int count,
                                          std::span<double> workspace) const {
  const Entry& e = entries_.at(vector);
  const cplx* phase = &phases_[vector * std::size_t(p_)];
  const cplx* phases[lanes] = {phase, phase, phase, phase, phase, phase, phase, phase};
  rotate_translate_add_many(rotations_[e.rotation], coaxials_[e.coaxial], phases, multipoles,
                            locals, count, workspace);
}

std::size_t RotationMultipoleToLocal::bytes() const {
  std::size_t total = entries_.size() * sizeof(Entry);
  for (const auto& r : rotations_) total += r.bytes();
  for (const auto& c : coaxials_) total += c.bytes();
  return total;
}

namespace {

Vec3 octant_vector(int octant, double sigma) {
  const double h = 0.25 * sigma;
  return {octant & 1 ? h : -h, octant & 2 ? h : -h, octant & 4 ? h : -h};
}

}  // namespace

RotationShifts::RotationShifts(int p, Wavenumber k, double sigma)
    : p_(p),
      m2m_(CoaxialKind::multipole_to_multipole, p, k, sigma, std::sqrt(3.0) * 0.25 * sigma),
      l2l_(CoaxialKind::local_to_local, p, k, sigma, std::sqrt(3.0) * 0.25 * sigma) {
  rotations_.emplace_back(p, translation_direction(octant_vector(7, sigma)).beta);
  rotations_.emplace_back(p, translation_direction(octant_vector(0, sigma)).beta);
  for (int octant = 0; octant < 8; ++octant) {
    alpha_[octant] = translation_direction(octant_vector(octant, sigma)).alpha;
    const std::vector<cplx> phase = rotation_phases(p, alpha_[octant]);
    phases_.insert(phases_.end(), phase.begin(), phase.end());
  }
}

void RotationShifts::shift_many(const CoaxialTranslation& coaxial, const int* octants,
                                const cplx* const* in, cplx* const* out, int count,
                                std::span<double> workspace) const {
  if (count < 1 || count > lanes)
    throw Error("shifts by rotation: 1.." + std::to_string(lanes) + " shifts at once");
  const cplx* phases[lanes];
  for (int l = 0; l < count; ++l) {
    if (octants[l] < 0 || octants[l] > 7)
      throw Error("shifts by rotation: the octant must lie in 0..7");
    if (!same_rotation(octants[l], octants[0]))
      throw Error("shifts by rotation: octants on both sides of z in one batch");
    phases[l] = &phases_[std::size_t(octants[l]) * std::size_t(p_)];
  }
  rotate_translate_add_many(rotations_[octants[0] & 4 ? 0 : 1], coaxial, phases, in, out, count,
                            workspace);
}

void RotationShifts::multipole_to_multipole_many(const int* octants, const cplx* const* children,
                                                 cplx* const* parents, int count,
                                                 std::span<double> workspace) const {
  shift_many(m2m_, octants, children, parents, count, workspace);
}

void RotationShifts::local_to_local_many(const int* octants, const cplx* const* parents,
                                         cplx* const* children, int count,
                                         std::span<double> workspace) const {
  shift_many(l2l_, octants, parents, children, count, workspace);
}

void RotationShifts::multipole_to_multipole(int octant, const cplx* child, cplx* parent,
                                            std::span<cplx> workspace) const {
  if (octant < 0 || octant > 7) throw Error("M2M by rotation: the octant must lie in 0..7");
  rotate_translate_add(rotations_[octant & 4 ? 0 : 1], alpha_[octant], m2m_, child, parent,
                       workspace);
}

void RotationShifts::local_to_local(int octant, const cplx* parent, cplx* child,
                                    std::span<cplx> workspace) const {
  if (octant < 0 || octant > 7) throw Error("L2L by rotation: the octant must lie in 0..7");
  rotate_translate_add(rotations_[octant & 4 ? 0 : 1], alpha_[octant], l2l_, parent, child,
                       workspace);
}

std::size_t RotationShifts::bytes() const {
  return rotations_[0].bytes() + rotations_[1].bytes() + m2m_.bytes() + l2l_.bytes();
}

}  // namespace fmbem::fmm
