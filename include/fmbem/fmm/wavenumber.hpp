#pragma once
#include <cmath>

namespace fmbem::fmm {

// The wavenumber of the FMM's kernel G = exp(i k r) / (4 pi r): a real k >= 0 (Helmholtz;
// Laplace at 0), or an imaginary one, k = i kappa, the screened (Yukawa) kernel
// exp(-kappa r) / (4 pi r). The low-frequency expansions are analytic in k: the scaled radial
// functions continue to real ones (jhat_n(i y) = ihat_n(y), hhat_n(i y) = khat_n(y),
// expansions.hpp) and the translations read k only through k^2, so one code serves both.
// Implicit from a double: every real-k caller reads as before.
struct Wavenumber {
  double magnitude = 0.0;  // k, or kappa when imaginary
  bool imaginary = false;

  constexpr Wavenumber(double k = 0.0) : magnitude(k) {}
  static constexpr Wavenumber screened(double kappa) {
    Wavenumber w(kappa);
    w.imaginary = true;
    return w;
  }
  // k^2: negative for the screened kernel.
  constexpr double squared() const {
    return imaginary ? -magnitude * magnitude : magnitude * magnitude;
  }
  // The k of the kernel's oscillation, which the wideband plan and the high-frequency
  // (diagonal) form read: 0 for the screened kernel, which does not oscillate and whose
  // expansions need no more terms than Laplace's.
  constexpr double oscillation() const { return imaginary ? 0.0 : magnitude; }
  bool finite_and_valid() const { return std::isfinite(magnitude) && magnitude >= 0.0; }
};

}  // namespace fmbem::fmm
