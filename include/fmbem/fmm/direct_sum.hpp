#pragma once
#include <cstddef>
#include <span>
#include <vector>

#include "fmbem/core/vec3.hpp"
#include "fmbem/fmm/wavenumber.hpp"

namespace fmbem::fmm {

// Point sources in structure-of-arrays form: position, charge q and dipole
// d n (strength d along the unit normal n) split in real and imaginary
// parts, so that the summation loop is plain real arithmetic that
// vectorises (with glibc's vector sin/cos).
class PointSources {
 public:
  // order[i] is the input index of the i-th stored source (a permutation or
  // a prefix of one); charges or dipoles may be empty (zero).
  PointSources(std::span<const Vec3> points, std::span<const Vec3> normals,
               std::span<const std::size_t> order, std::span<const cplx> charges,
               std::span<const cplx> dipoles);
  // Points (and normals) stored in order already: the i-th source is points[i], its strengths
  // charges[order[i]] and dipoles[order[i]] (points.size() == order.size()).
  struct PointsInOrder {};
  PointSources(PointsInOrder, std::span<const Vec3> points, std::span<const Vec3> normals,
               std::span<const std::size_t> order, std::span<const cplx> charges,
               std::span<const cplx> dipoles);
  std::size_t size() const { return x_.size(); }

  // sum over sources i in [begin, end) of G(x - y_i) q_i + dG/dn_y(x, y_i) d_i,
  // skipping sources closer to x than sqrt(skip_radius2).
  // G = exp(ikr) / (4 pi r), or exp(-kappa r) / (4 pi r) for k = i kappa.
  cplx potential(std::size_t begin, std::size_t end, Wavenumber k, const Vec3& x,
                 double skip_radius2) const;

  // The same sum and its derivative along the unit vector n_x at x (the target's normal):
  //   value             = sum G q + dG/dn_y d,
  //   normal_derivative = sum dG/dn_x q + d^2G/dn_x dn_y d
  // (the adjoint double and the hypersingular kernel: what Burton-Miller adds), in one pass.
  struct ValueAndNormalDerivative {
    cplx value, normal_derivative;
  };
  ValueAndNormalDerivative potential_and_normal_derivative(std::size_t begin, std::size_t end,
                                                           Wavenumber k, const Vec3& x,
                                                           const Vec3& n_x,
                                                           double skip_radius2) const;

 private:
  template <bool Screened>
  cplx potential_loop(std::size_t begin, std::size_t end, double k, const Vec3& x,
                      double skip_radius2) const;
  template <bool Screened>
  ValueAndNormalDerivative potential_and_normal_derivative_loop(std::size_t begin, std::size_t end,
                                                                double k, const Vec3& x,
                                                                const Vec3& n_x,
                                                                double skip_radius2) const;
  void fill(std::span<const Vec3> points, std::span<const Vec3> normals,
            std::span<const std::size_t> order, std::span<const cplx> charges,
            std::span<const cplx> dipoles, bool points_in_order);
  std::vector<double> x_, y_, z_, q_re_, q_im_, d_re_x_, d_re_y_, d_re_z_, d_im_x_, d_im_y_,
      d_im_z_;
};

}  // namespace fmbem::fmm
