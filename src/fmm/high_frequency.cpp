#include "fmbem/fmm/high_frequency.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <numeric>
#include <string>

#include "fmbem/core/error.hpp"
#include "fmbem/fmm/expansions.hpp"
#include "fmbem/quadrature/gauss_legendre.hpp"

namespace fmbem::fmm {

namespace {

constexpr double pi = std::numbers::pi;
constexpr cplx imag_unit{0.0, 1.0};

void require_positive_k(double k, const char* what) {
  if (!(k > 0.0) || !std::isfinite(k))
    throw Error(std::string(what) + ": the high-frequency form needs a finite k > 0, got " +
                std::to_string(k));
}

void require_same_size(std::size_t a, std::size_t b, const char* what) {
  if (a != b)
    throw Error(std::string(what) + ": arrays of sizes " + std::to_string(a) + " and " +
                std::to_string(b) + " do not match");
}

// Whole cells of `cell` values each in `size` values.
std::size_t cell_count(std::size_t size, std::size_t cell, const char* what) {
  if (cell == 0 || size % cell != 0)
    throw Error(std::string(what) + ": " + std::to_string(size) +
                " values are not whole cells of " + std::to_string(cell));
  return size / cell;
}

// h_n^(1)(x), n = 0..max_n, by upward recurrence: h_n is the dominant solution for n > x and
// of constant size below, so the recurrence is stable throughout.
void spherical_hankel(int max_n, double x, cplx* h) {
  const cplx e = std::exp(imag_unit * x);
  h[0] = -imag_unit * e / x;
  if (max_n >= 1) h[1] = -e * (x + imag_unit) / (x * x);
  for (int n = 1; n < max_n; ++n) h[n + 1] = (2.0 * n + 1.0) / x * h[n] - h[n - 1];
}

// Normalised associated Legendre functions, int_{-1}^{1} Pbar_n^m(x)^2 dx = 1, for one m and
// n = m..max_n at x, in long double: sin(theta)^m underflows a double near the poles for the
// largest m, and the values grow back within the n range.
void normalised_legendre(int m, int max_n, double x, long double* out) {
  const long double s = std::sqrt(std::max(0.0L, 1.0L - (long double)x * x));
  long double p_mm = std::sqrt(0.5L);
  for (int i = 1; i <= m; ++i) p_mm *= std::sqrt((2.0L * i + 1.0L) / (2.0L * i)) * s;
  if (m > max_n) return;
  out[0] = p_mm;
  if (max_n == m) return;
  long double p_prev = p_mm, p_cur = std::sqrt(2.0L * m + 3.0L) * x * p_mm;
  out[1] = p_cur;
  for (int n = m + 2; n <= max_n; ++n) {
    const long double a =
        std::sqrt((4.0L * n * n - 1.0L) / ((long double)n * n - (long double)m * m));
    const long double b = std::sqrt(((n - 1.0L) * (n - 1.0L) - (long double)m * m) /
                                    (4.0L * (n - 1.0L) * (n - 1.0L) - 1.0L));
    const long double p_next = a * (x * p_cur - b * p_prev);
    p_prev = p_cur;
    p_cur = p_next;
    out[n - m] = p_cur;
  }
}

// The smallest k w at which the diagonal form, with signature_bandwidth for the diagonal
// sqrt(3) w, reaches eps at every octree transfer vector with sources and targets anywhere in
// their cells (corners included), at log10(1/eps) = 3, 4, 5, 6, 7: measured by
// HighFrequencyCalibration.Breakdown in tests/unit/fmm/high_frequency_test.cpp (bisection in
// k w to 1 %) with excess_bandwidth_constant = 2.5. The limit is the closest vector (2w, 0, 0),
// where |d| / |t| reaches sqrt(3) / 2: the truncation converges slowly there, and the bandwidth
// that would make it converge sits beyond k|t|, where h_n(k|t|) grows and the quadrature
// cancels (e.g. k w = 32, eps = 1e-6: the error is at least 2e-6 for every L).
constexpr double measured_min_kw[] = {16.80, 21.44, 31.40, 41.05, 53.24};
constexpr double measured_digits_first = 3.0;
// A margin on the measured values: the measurement samples random points (two seeds) besides
// the corners.
constexpr double min_kw_margin = 1.05;

}  // namespace

SphereGrid::SphereGrid(int bandwidth) : bandwidth_(bandwidth) {
  if (bandwidth < 0)
    throw Error("sphere grid: the bandwidth must be >= 0, got " + std::to_string(bandwidth));
  const GaussLegendre rule(bandwidth + 1);
  std::vector<int> order(rule.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(),
            [&](int a, int b) { return rule.nodes[a] < rule.nodes[b]; });
  const int nphi = num_phi();
  for (int i : order) {
    cos_theta_.push_back(rule.nodes[i]);
    theta_weights_.push_back(rule.weights[i]);
  }
  for (int i = 0; i < num_theta(); ++i) {
    const double c = cos_theta_[i], s = std::sqrt(std::max(0.0, 1.0 - c * c));
    for (int j = 0; j < nphi; ++j) {
      const double phi = 2.0 * pi * j / nphi;
      directions_.push_back(Vec3{s * std::cos(phi), s * std::sin(phi), c});
      weights_.push_back(theta_weights_[i] * 2.0 * pi / nphi);
    }
  }
}

int signature_bandwidth(double k, double cell_diagonal, double eps) {
  require_positive_k(k, "signature bandwidth");
  if (!(cell_diagonal > 0.0) || !(eps > 0.0 && eps < 1.0))
    throw Error("signature bandwidth: needs a cell diagonal > 0 and 0 < eps < 1");
  const double kd = k * cell_diagonal;
  return int(std::ceil(kd + excess_bandwidth(excess_bandwidth_constant, kd, eps)));
}

double excess_bandwidth(double constant, double kd, double eps) {
  return constant * std::pow(std::log10(1.0 / eps), 2.0 / 3.0) * std::cbrt(kd);
}

double diagonal_form_min_kw(double eps) {
  if (!(eps > 0.0 && eps < 1.0))
    throw Error("diagonal form: eps must be in (0, 1), got " + std::to_string(eps));
  constexpr int count = std::size(measured_min_kw);
  // Linear in the digits between measurements; above eps = 1e-3 the 1e-3 value (conservative),
  // below 1e-7 the last step extended (not measured: an extra 10 %).
  const double digits = std::max(-std::log10(eps) - measured_digits_first, 0.0);
  const int below = std::min(int(digits), count - 2);
  const double fraction = digits - below;
  const double kw =
      measured_min_kw[below] + fraction * (measured_min_kw[below + 1] - measured_min_kw[below]);
  return min_kw_margin * kw * (digits > count - 1 ? 1.1 : 1.0);
}

bool diagonal_form_accurate(double k, double cell_width, double eps) {
  require_positive_k(k, "diagonal form");
  if (!(cell_width > 0.0))
    throw Error("diagonal form: the cell width must be > 0, got " + std::to_string(cell_width));
  return k * cell_width >= diagonal_form_min_kw(eps);
}

void transfer_function(const SphereGrid& grid, double k, const Vec3& t, std::span<cplx> transfer) {
  require_positive_k(k, "transfer function");
  require_same_size(transfer.size(), grid.size(), "transfer function");
  const double len = norm(t);
  if (!(len > 0.0)) throw Error("transfer function: the transfer vector must not be zero");
  const int bandwidth = grid.bandwidth();
  std::vector<cplx> coefficient(bandwidth + 1);
  spherical_hankel(bandwidth, k * len, coefficient.data());
  cplx i_power = 1.0;
  for (int n = 0; n <= bandwidth; ++n) {
    coefficient[n] *= i_power * (2.0 * n + 1.0) * (imag_unit * k / (16.0 * pi * pi));
    i_power *= imag_unit;
  }
  const Vec3 axis = t * (1.0 / len);
  const auto directions = grid.directions();
  for (std::size_t g = 0; g < grid.size(); ++g) {
    const double x = std::clamp(dot(directions[g], axis), -1.0, 1.0);
    double p_prev = 1.0, p_cur = x;
    cplx sum = coefficient[0];
    if (bandwidth >= 1) sum += coefficient[1] * x;
    for (int n = 1; n < bandwidth; ++n) {
      const double p_next = ((2.0 * n + 1.0) * x * p_cur - n * p_prev) / (n + 1.0);
      p_prev = p_cur;
      p_cur = p_next;
      sum += coefficient[n + 1] * p_cur;
    }
    transfer[g] = sum;
  }
}

std::vector<cplx> transfer_functions(const SphereGrid& grid, double k,
                                     std::span<const Vec3> transfer_vectors) {
  std::vector<cplx> table(transfer_vectors.size() * grid.size());
#pragma omp parallel for schedule(dynamic, 1)
  for (std::size_t v = 0; v < transfer_vectors.size(); ++v)
    transfer_function(grid, k, transfer_vectors[v],
                      std::span<cplx>(table).subspan(v * grid.size(), grid.size()));
  return table;
}

void form_signature(const SphereGrid& grid, double k, const Vec3& centre,
                    std::span<const Vec3> points, std::span<const Vec3> normals,
                    std::span<const cplx> charges, std::span<const cplx> dipoles,
                    std::span<cplx> signature) {
  require_positive_k(k, "signature");
  require_same_size(signature.size(), grid.size(), "signature");
  if (!charges.empty()) require_same_size(charges.size(), points.size(), "signature charges");
  if (!dipoles.empty()) {
    require_same_size(dipoles.size(), points.size(), "signature dipoles");
    require_same_size(normals.size(), points.size(), "signature normals");
  }
  const auto directions = grid.directions();
  for (std::size_t j = 0; j < points.size(); ++j) {
    const Vec3 r = points[j] - centre;
    const cplx q = charges.empty() ? cplx(0.0) : charges[j];
    const cplx ikd = dipoles.empty() ? cplx(0.0) : imag_unit * k * dipoles[j];
    const Vec3 normal = dipoles.empty() ? Vec3{} : normals[j];
    for (std::size_t g = 0; g < grid.size(); ++g) {
      const double phase = -k * dot(directions[g], r);
      signature[g] +=
          cplx(std::cos(phase), std::sin(phase)) * (q - ikd * dot(directions[g], normal));
    }
  }
}

namespace {

// local += transfer .* outgoing on one grid of n points, on the parts (std::complex's product
// does not vectorise); built for x86-64-v3 (AVX2 + FMA) and the baseline.
__attribute__((target_clones("arch=x86-64-v3", "default"))) void pointwise_multiply_add(
    std::size_t n, const cplx* transfer, const cplx* outgoing, cplx* local) {
  const double* t = reinterpret_cast<const double*>(transfer);
  const double* x = reinterpret_cast<const double*>(outgoing);
  double* y = reinterpret_cast<double*>(local);
#pragma omp simd
  for (std::size_t g = 0; g < n; ++g) {
    const double tr = t[2 * g], ti = t[2 * g + 1], xr = x[2 * g], xi = x[2 * g + 1];
    y[2 * g] += tr * xr - ti * xi;
    y[2 * g + 1] += tr * xi + ti * xr;
  }
}

}  // namespace

void diagonal_m2l(std::span<const cplx> transfer, std::span<const cplx> outgoing,
                  std::span<cplx> local) {
  require_same_size(outgoing.size(), local.size(), "diagonal M2L");
  const std::size_t cells = cell_count(outgoing.size(), transfer.size(), "diagonal M2L");
  const std::size_t size = transfer.size();
  for (std::size_t c = 0; c < cells; ++c)
    pointwise_multiply_add(size, transfer.data(), outgoing.data() + c * size,
                           local.data() + c * size);
}

void evaluate_local_signature(const SphereGrid& grid, double k, const Vec3& centre,
                              std::span<const cplx> local, std::span<const Vec3> targets,
                              std::span<const Vec3> normals, cplx normal_weight,
                              std::span<cplx> potential) {
  require_positive_k(k, "local signature");
  require_same_size(local.size(), grid.size(), "local signature");
  require_same_size(potential.size(), targets.size(), "local signature targets");
  if (!normals.empty())
    require_same_size(normals.size(), targets.size(), "local signature normals");
  const auto directions = grid.directions();
  const auto weights = grid.weights();
  for (std::size_t i = 0; i < targets.size(); ++i) {
    const Vec3 r = targets[i] - centre;
    const cplx ikw = imag_unit * k * normal_weight;
    const Vec3 normal = normals.empty() ? Vec3{} : normals[i];
    cplx sum = 0.0;
    for (std::size_t g = 0; g < grid.size(); ++g) {
      const double phase = k * dot(directions[g], r);
      const cplx factor = normals.empty() ? cplx(1.0) : 1.0 + ikw * dot(directions[g], normal);
      sum += weights[g] * cplx(std::cos(phase), std::sin(phase)) * factor * local[g];
    }
    potential[i] += sum;
  }
}

std::vector<cplx> plane_wave_phases(const SphereGrid& grid, double k, const Vec3& v) {
  require_positive_k(k, "plane-wave phases");
  std::vector<cplx> phases(grid.size());
  const auto directions = grid.directions();
  for (std::size_t g = 0; g < grid.size(); ++g) {
    const double phase = k * dot(directions[g], v);
    phases[g] = cplx(std::cos(phase), std::sin(phase));
  }
  return phases;
}

void multiply_by_phases(std::span<const cplx> phases, std::span<cplx> values) {
  cell_count(values.size(), phases.size(), "shift");
  const std::size_t size = phases.size();
  for (std::size_t i = 0; i < values.size(); ++i) values[i] *= phases[i % size];
}

SphereInterpolator::SphereInterpolator(const SphereGrid& child, const SphereGrid& parent)
    : child_bandwidth_(child.bandwidth()),
      parent_bandwidth_(parent.bandwidth()),
      child_size_(child.size()),
      parent_size_(parent.size()) {
  if (parent_bandwidth_ < child_bandwidth_)
    throw Error("sphere interpolation: the parent's bandwidth " +
                std::to_string(parent_bandwidth_) + " is below the child's " +
                std::to_string(child_bandwidth_));
  const int lc = child_bandwidth_, lp = parent_bandwidth_, modes = 2 * lc + 1;
  auto dft = [&](const SphereGrid& grid, std::vector<cplx>& forward, std::vector<cplx>& inverse) {
    const int nphi = grid.num_phi();
    forward.resize(std::size_t(nphi) * modes);
    inverse.resize(std::size_t(modes) * nphi);
    for (int j = 0; j < nphi; ++j)
      for (int m = -lc; m <= lc; ++m) {
        // The angle reduced exactly (m j mod nphi) so that large m loses no digits.
        const long long turn = ((long long)m * j % nphi + nphi) % nphi;
        const double angle = 2.0 * pi * double(turn) / nphi;
        const cplx e(std::cos(angle), std::sin(angle));
        forward[std::size_t(j) * modes + (m + lc)] = std::conj(e) / double(nphi);
        inverse[std::size_t(m + lc) * nphi + j] = e;
      }
  };
  dft(child, child_forward_, child_inverse_);
  dft(parent, parent_forward_, parent_inverse_);
  const int nc = lc + 1, np = lp + 1;
  // Legendre values per node: child[b][n - m], parent[a][n - m].
  up_.assign(std::size_t(modes) * np * nc, 0.0);
  down_.assign(std::size_t(modes) * nc * np, 0.0);
  std::vector<long double> child_values(std::size_t(nc) * nc), parent_values(std::size_t(np) * nc);
  for (int m = 0; m <= lc; ++m) {
    for (int b = 0; b < nc; ++b)
      normalised_legendre(m, lc, child.cos_theta()[b], &child_values[std::size_t(b) * nc]);
    for (int a = 0; a < np; ++a)
      normalised_legendre(m, lc, parent.cos_theta()[a], &parent_values[std::size_t(a) * nc]);
    for (int a = 0; a < np; ++a)
      for (int b = 0; b < nc; ++b) {
        long double sum = 0.0L;
        for (int n = m; n <= lc; ++n)
          sum += parent_values[std::size_t(a) * nc + (n - m)] *
                 child_values[std::size_t(b) * nc + (n - m)];
        // Pbar_n^-m = +-Pbar_n^m: the sum over n is the same matrix for -m.
        for (int sign : {-1, 1}) {
          const int mode = sign * m + lc;
          up_[(std::size_t(mode) * np + a) * nc + b] = double(sum * child.theta_weights()[b]);
          down_[(std::size_t(mode) * nc + b) * np + a] = double(sum * parent.theta_weights()[a]);
        }
      }
  }
}

namespace {

// The shape of one separable pass: values rows_in x cols_in per cell (grid-major) to
// rows_out x cols_out, through `modes` phi modes.
struct PassShape {
  int rows_in, cols_in, rows_out, cols_out, modes;
};

// One separable pass on `Lanes` cells at once (count <= Lanes of them real, the rest zero): a DFT
// along phi (forward: cols_in x modes), per mode a rows_out x rows_in real matrix along theta, an
// inverse DFT (modes x cols_out), accumulated into out[b]. The cells are the innermost index of
// the work arrays, real and imaginary parts apart, so that every product is a vector of
// fused multiply-adds over the cells (std::complex per cell does not vectorise); each cell's
// arithmetic is the same whatever the other lanes hold.
template <int Lanes>
[[gnu::always_inline]] inline void separable_lanes(const cplx* const* in, cplx* const* out,
                                                   int count, const PassShape& s,
                                                   const cplx* forward, const double* theta,
                                                   const cplx* inverse, double* work) {
  constexpr int L2 = 2 * Lanes;
  double* spectrum = work;                                       // [i][m][re/im][lane]
  double* mixed = work + std::size_t(s.rows_in) * s.modes * L2;  // [m][r][re/im][lane]
  // Both grids have an even number of phi points, and phi + pi multiplies mode m by (-1)^m: the
  // even modes see x_j + x_{j + n/2}, the odd ones x_j - x_{j + n/2} (a radix-2 step, half the
  // products of the plain DFT), and the inverse gives y_j and y_{j + n/2} from the even and odd
  // modes' sums likewise.
  const int lc = (s.modes - 1) / 2, first_even = lc % 2, first_odd = 1 - first_even;
  const int half_in = s.cols_in / 2, half_out = s.cols_out / 2;
  std::fill(spectrum, spectrum + std::size_t(s.rows_in) * s.modes * L2, 0.0);
  for (int i = 0; i < s.rows_in; ++i) {
    double* row = spectrum + std::size_t(i) * s.modes * L2;
    for (int j = 0; j < half_in; ++j) {
      double sum[L2], difference[L2];
      for (int b = 0; b < Lanes; ++b) {
        const cplx v = b < count ? in[b][std::size_t(i) * s.cols_in + j] : cplx(0.0);
        const cplx w = b < count ? in[b][std::size_t(i) * s.cols_in + j + half_in] : cplx(0.0);
        sum[b] = v.real() + w.real();
        sum[Lanes + b] = v.imag() + w.imag();
        difference[b] = v.real() - w.real();
        difference[Lanes + b] = v.imag() - w.imag();
      }
      const cplx* f = forward + std::size_t(j) * s.modes;
      for (const auto& [first, x] : {std::pair{first_even, sum}, std::pair{first_odd, difference}})
        for (int m = first; m < s.modes; m += 2) {
          const double fr = f[m].real(), fi = f[m].imag();
          double* sm = row + std::size_t(m) * L2;
#pragma omp simd
          for (int b = 0; b < Lanes; ++b) {
            sm[b] += fr * x[b] - fi * x[Lanes + b];
            sm[Lanes + b] += fr * x[Lanes + b] + fi * x[b];
          }
        }
    }
  }
  for (int m = 0; m < s.modes; ++m)
    for (int r = 0; r < s.rows_out; ++r) {
      const double* a = theta + (std::size_t(m) * s.rows_out + r) * s.rows_in;
      double acc[L2] = {};
      for (int i = 0; i < s.rows_in; ++i) {
        const double ai = a[i];
        const double* sm = spectrum + (std::size_t(i) * s.modes + m) * L2;
#pragma omp simd
        for (int b = 0; b < L2; ++b) acc[b] += ai * sm[b];
      }
      std::copy(acc, acc + L2, mixed + (std::size_t(m) * s.rows_out + r) * L2);
    }
  for (int r = 0; r < s.rows_out; ++r)
    for (int j = 0; j < half_out; ++j) {
      double parts[2][L2] = {};  // the even modes' sum, the odd modes'
      for (int parity = 0; parity < 2; ++parity) {
        double* acc = parts[parity];
        for (int m = parity == 0 ? first_even : first_odd; m < s.modes; m += 2) {
          const cplx e = inverse[std::size_t(m) * s.cols_out + j];
          const double er = e.real(), ei = e.imag();
          const double* mm = mixed + (std::size_t(m) * s.rows_out + r) * L2;
#pragma omp simd
          for (int b = 0; b < Lanes; ++b) {
            acc[b] += er * mm[b] - ei * mm[Lanes + b];
            acc[Lanes + b] += er * mm[Lanes + b] + ei * mm[b];
          }
        }
      }
      for (int b = 0; b < count; ++b) {
        const cplx even(parts[0][b], parts[0][Lanes + b]), odd(parts[1][b], parts[1][Lanes + b]);
        cplx* row = out[b] + std::size_t(r) * s.cols_out;
        row[j] += even + odd;
        row[j + half_out] += even - odd;
      }
    }
}

std::size_t separable_work_size(const PassShape& s, int lanes) {
  return std::size_t(2 * lanes) * s.modes * std::size_t(s.rows_in + s.rows_out);
}

// Built for x86-64-v3 (AVX2 + FMA) and for the baseline; the loader picks the one the CPU runs.
__attribute__((target_clones("arch=x86-64-v3", "default"))) void separable_4(
    const cplx* const* in, cplx* const* out, int count, const PassShape& s, const cplx* forward,
    const double* theta, const cplx* inverse, double* work) {
  separable_lanes<4>(in, out, count, s, forward, theta, inverse, work);
}

__attribute__((target_clones("arch=x86-64-v3", "default"))) void separable_8(
    const cplx* const* in, cplx* const* out, int count, const PassShape& s, const cplx* forward,
    const double* theta, const cplx* inverse, double* work) {
  separable_lanes<8>(in, out, count, s, forward, theta, inverse, work);
}

// The pass on any number of cells, eight (or, for the rest, four) at a time.
void separable_pass(std::span<const cplx* const> in, std::span<cplx* const> out, const PassShape& s,
                    const std::vector<cplx>& forward, const std::vector<double>& theta,
                    const std::vector<cplx>& inverse) {
  thread_local std::vector<double> work;
  const std::size_t needed = separable_work_size(s, 8);
  if (work.size() < needed) work.resize(needed);
  for (std::size_t at = 0; at < in.size();) {
    const int count = int(std::min<std::size_t>(8, in.size() - at));
    if (count > 4)
      separable_8(in.data() + at, out.data() + at, count, s, forward.data(), theta.data(),
                  inverse.data(), work.data());
    else
      separable_4(in.data() + at, out.data() + at, count, s, forward.data(), theta.data(),
                  inverse.data(), work.data());
    at += std::size_t(count);
  }
}

}  // namespace

void SphereInterpolator::interpolate(std::span<const cplx> child, std::span<cplx> parent) const {
  change_bandwidth(true, child, parent);
}

void SphereInterpolator::anterpolate(std::span<const cplx> parent, std::span<cplx> child) const {
  change_bandwidth(false, parent, child);
}

void SphereInterpolator::interpolate(std::span<const cplx* const> child,
                                     std::span<cplx* const> parent) const {
  change_bandwidth(true, child, parent);
}

void SphereInterpolator::anterpolate(std::span<const cplx* const> parent,
                                     std::span<cplx* const> child) const {
  change_bandwidth(false, parent, child);
}

void SphereInterpolator::change_bandwidth(bool up, std::span<const cplx> in,
                                          std::span<cplx> out) const {
  const char* what = up ? "interpolation" : "anterpolation";
  const std::size_t in_size = up ? child_size_ : parent_size_,
                    out_size = up ? parent_size_ : child_size_;
  const std::size_t cells = cell_count(in.size(), in_size, what);
  require_same_size(out.size(), cells * out_size, what);
  constexpr std::size_t block = 8;
#pragma omp parallel for schedule(dynamic) if (cells > block)
  for (std::size_t first = 0; first < cells; first += block) {
    const std::size_t count = std::min(block, cells - first);
    const cplx* from[block];
    cplx* to[block];
    for (std::size_t b = 0; b < count; ++b) {
      from[b] = in.data() + (first + b) * in_size;
      to[b] = out.data() + (first + b) * out_size;
    }
    change_bandwidth(up, std::span<const cplx* const>(from, count),
                     std::span<cplx* const>(to, count));
  }
}

void SphereInterpolator::change_bandwidth(bool up, std::span<const cplx* const> in,
                                          std::span<cplx* const> out) const {
  require_same_size(in.size(), out.size(), up ? "interpolation" : "anterpolation");
  const int from = up ? child_bandwidth_ : parent_bandwidth_;
  const int to = up ? parent_bandwidth_ : child_bandwidth_;
  const PassShape shape{from + 1, 2 * from + 2, to + 1, 2 * to + 2, 2 * child_bandwidth_ + 1};
  separable_pass(in, out, shape, up ? child_forward_ : parent_forward_, up ? up_ : down_,
                 up ? parent_inverse_ : child_inverse_);
}

namespace {

// 4 pi (+-i)^n kappa^n / (2n+1)!! for n < p: the factor between exp(+-ik s.r) and the scaled
// regular basis.
std::vector<cplx> conversion_factors(int p, double k, double sigma, cplx i_sign) {
  std::vector<cplx> factor(p);
  cplx value = 4.0 * pi;
  const double kappa = k * sigma;
  for (int n = 0; n < p; ++n) {
    factor[n] = value;
    value *= i_sign * kappa / (2.0 * n + 3.0);
  }
  return factor;
}

void require_order(int p, double sigma, const char* what) {
  if (p < 1 || p > max_degree + 1)
    throw Error(std::string(what) + ": order p must be in 1.." + std::to_string(max_degree + 1) +
                ", got " + std::to_string(p));
  if (!(sigma > 0.0)) throw Error(std::string(what) + ": the scale sigma must be > 0");
}

// The conversion matrix entry(g, c) = factor[n] * value(g, Y_c(s_g)) for every grid point g and
// coefficient c = (n, m) of degree n < p, at position index(g, c).
template <class Value, class Index>
std::vector<cplx> conversion_matrix(const SphereGrid& grid, int p, const std::vector<cplx>& factor,
                                    Value value, Index index) {
  std::vector<cplx> matrix(grid.size() * p * p), y(std::size_t(p) * p);
  for (std::size_t g = 0; g < grid.size(); ++g) {
    spherical_harmonics(p - 1, grid.directions()[g], y.data());
    for (int n = 0; n < p; ++n)
      for (int m = -n; m <= n; ++m) {
        const int c = coefficient_index(n, m);
        matrix[index(g, c)] = factor[n] * value(g, y[c]);
      }
  }
  return matrix;
}

}  // namespace

std::vector<cplx> multipole_to_signature(const SphereGrid& grid, int p, double k, double sigma) {
  require_positive_k(k, "multipole to signature");
  require_order(p, sigma, "multipole to signature");
  const std::size_t size = std::size_t(p) * p;
  return conversion_matrix(
      grid, p, conversion_factors(p, k, sigma, -imag_unit), [](std::size_t, cplx y) { return y; },
      [size](std::size_t g, int c) { return g * size + c; });
}

std::vector<cplx> signature_to_local(const SphereGrid& grid, int p, double k, double sigma) {
  require_positive_k(k, "signature to local");
  require_order(p, sigma, "signature to local");
  const auto weights = grid.weights();
  const std::size_t points = grid.size();
  return conversion_matrix(
      grid, p, conversion_factors(p, k, sigma, imag_unit),
      [weights](std::size_t g, cplx y) { return weights[g] * std::conj(y); },
      [points](std::size_t g, int c) { return c * points + g; });
}

}  // namespace fmbem::fmm
