#pragma once
// Legendre series sum_n c_n P_n(t), the angular part of every axisymmetric series in exact/.
#include <complex>
#include <vector>

namespace fmbem::exact {

// sum_{n < terms} c(n) P_n(t) by the upward recurrence P_{n+1} = a_n t P_n - b_n P_{n-1} (stable
// for |t| <= 1), with the multipliers tabulated once so that a sum costs no division.
class LegendreSum {
 public:
  explicit LegendreSum(int terms = 0) : a_(terms), b_(terms) {
    for (int n = 0; n < terms; ++n) {
      a_[n] = (2.0 * n + 1.0) / (n + 1.0);
      b_[n] = n / (n + 1.0);
    }
  }
  int terms() const { return static_cast<int>(a_.size()); }
  // Calls c(n, P_n(t)) for n = 0 .. terms - 1 while it returns true (c accumulates).
  template <class Visit>
  void visit(int terms, double t, Visit&& c) const {
    double p_previous = 0.0, p = 1.0;  // P_{n-1}, P_n
    for (int n = 0; n < terms; ++n) {
      if (!c(n, p)) return;
      const double p_next = a_[n] * t * p - b_[n] * p_previous;
      p_previous = p;
      p = p_next;
    }
  }
  // sum_{n < terms} c(n) P_n(t).
  template <class Coefficient>
  std::complex<double> sum(int terms, double t, Coefficient&& c) const {
    std::complex<double> total = 0.0;
    visit(terms, t, [&](int n, double p) {
      total += c(n) * p;
      return true;
    });
    return total;
  }

 private:
  std::vector<double> a_, b_;
};

}  // namespace fmbem::exact
