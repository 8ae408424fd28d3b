#pragma once
// Pieces shared by the exact/ series (private to src/exact): the overflow-free spherical Hankel
// steppers and the Legendre sum. Conventions as in sphere.hpp (h_n = h_n^(1), x > 0).
#include <complex>
#include <numbers>
#include <string>
#include <vector>

#include "fmbem/core/error.hpp"
#include "fmbem/core/vec3.hpp"
#include "fmbem/exact/legendre.hpp"
#include "fmbem/exact/sphere.hpp"

namespace fmbem::exact::detail {

inline constexpr double kFourPi = 4.0 * std::numbers::pi;
inline constexpr cplx kI{0.0, 1.0};

// Advances n = 0, 1, 2, ... and keeps, for x > 0,
//   eta_n(x) = h_n(x)/h_{n-1}(x)  (eta_0 = h_0/h_{-1} = -i since h_{-1}(x) = exp(ix)/x),
//   h_n'(x)/h_n(x) = 1/eta_n - (n+1)/x.
// Upward recurrence eta_{n+1} = (2n+1)/x - 1/eta_n: h_n^(1) is dominant for n > x and oscillates
// with slowly varying modulus for n < x, so errors grow at most linearly in n.
class EtaStepper {
 public:
  explicit EtaStepper(double x) : inv_x_(1.0 / x) {}
  cplx eta() const { return eta_; }
  cplx log_derivative() const { return 1.0 / eta_ - double(n_ + 1) * inv_x_; }
  void advance() {
    eta_ = double(2 * n_ + 1) * inv_x_ - 1.0 / eta_;
    ++n_;
  }

 private:
  double inv_x_;
  int n_ = 0;
  cplx eta_{0.0, -1.0};
};

// h_n(x_num)/h_n(x_den), starting from h_0(x) = -i exp(ix)/x and multiplying by eta ratios.
class HankelRatioStepper {
 public:
  HankelRatioStepper(double x_num, double x_den)
      : num_(x_num), den_(x_den), ratio_(std::polar(x_den / x_num, x_num - x_den)) {}
  cplx h_over_h() const { return ratio_; }
  cplx h_over_dh() const { return ratio_ / den_.log_derivative(); }
  // h_n'(x_den)/h_n(x_den)
  cplx den_log_derivative() const { return den_.log_derivative(); }
  void advance() {
    num_.advance();
    den_.advance();
    ratio_ *= num_.eta() / den_.eta();
  }

 private:
  EtaStepper num_, den_;
  cplx ratio_;
};

// 1/h_n(x), starting from 1/h_0(x) = i x exp(-ix); multiplying by 1/eta_n only shrinks it for
// n > x, so it underflows to 0 instead of overflowing.
class InverseHankelStepper {
 public:
  explicit InverseHankelStepper(double x) : eta_(x), inv_h_(std::polar(x, -x) * kI) {}
  cplx inv_h() const { return inv_h_; }
  cplx inv_dh() const { return inv_h_ / eta_.log_derivative(); }
  cplx log_derivative() const { return eta_.log_derivative(); }  // h_n'(x)/h_n(x)
  void advance() {
    eta_.advance();
    inv_h_ /= eta_.eta();
  }

 private:
  EtaStepper eta_;
  cplx inv_h_;
};

// v / |v|; Error naming `what` for a zero or non-finite v.
inline Vec3 unit_vector(const Vec3& v, const char* what) {
  const double length = norm(v);
  if (!(length > 0.0 && std::isfinite(length)))
    throw Error(std::string("exact: ") + what + " must be a finite non-zero vector");
  return v * (1.0 / length);
}

std::string describe(double value);

// Checks the admittance argument of SphereScattering / SphereScatteredField (errors as there).
void check_admittance(SphereBoundary bc, cplx admittance);

}  // namespace fmbem::exact::detail
