#pragma once
// The FMM tests' point sets (fmm_test.cpp, wideband_fmm_test.cpp): surface points with normals,
// targets and strengths, and the direct sum they are checked against.
#include <cmath>
#include <numeric>
#include <ostream>
#include <random>
#include <vector>

#include "fmbem/core/vec3.hpp"
#include "fmbem/fmm/direct_sum.hpp"

namespace fmbem::fmm::testing {

struct PointSet {
  std::vector<Vec3> sources, normals, targets, target_normals;
  std::vector<cplx> charges, dipoles;
};

// Points on the unit sphere (normals radial) or on the surface of an
// elongated box [-2, 2] x [-0.5, 0.5] x [-0.25, 0.25] (normals along the
// face), which gives an adaptive tree with leaves on several levels. Every
// 7th target coincides with a source, as collocation points do with the
// centroid of the 1- and 7-point rules.
inline PointSet make_points(bool sphere, std::size_t num_sources, std::size_t num_targets,
                            unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> gauss;
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  auto surface_point = [&](Vec3& normal) {
    if (sphere) {
      normal = normalized(Vec3{gauss(rng), gauss(rng), gauss(rng)});
      return normal;
    }
    const double half[3] = {2.0, 0.5, 0.25};
    // Faces picked in proportion to their area.
    const double areas[3] = {half[1] * half[2], half[0] * half[2], half[0] * half[1]};
    double pick = 0.5 * (u(rng) + 1.0) * (areas[0] + areas[1] + areas[2]);
    int axis = 0;
    while (axis < 2 && pick > areas[axis]) pick -= areas[axis++];
    double c[3] = {u(rng) * half[0], u(rng) * half[1], u(rng) * half[2]};
    const double side = u(rng) < 0.0 ? -1.0 : 1.0;
    c[axis] = side * half[axis];
    double n[3] = {0.0, 0.0, 0.0};
    n[axis] = side;
    normal = {n[0], n[1], n[2]};
    return Vec3{c[0], c[1], c[2]};
  };
  PointSet set;
  for (std::size_t i = 0; i < num_sources; ++i) {
    Vec3 normal;
    set.sources.push_back(surface_point(normal));
    set.normals.push_back(normal);
    set.charges.emplace_back(u(rng), u(rng));
    set.dipoles.emplace_back(u(rng), u(rng));
  }
  for (std::size_t i = 0; i < num_targets; ++i) {
    Vec3 normal;
    if (i % 7 == 0) {
      set.targets.push_back(set.sources[i]);
      set.target_normals.push_back(set.normals[i]);
    } else {
      set.targets.push_back(surface_point(normal));
      set.target_normals.push_back(normal);
    }
  }
  return set;
}

inline constexpr double skip_radius = 1e-12;

inline std::vector<cplx> direct(Wavenumber k, const PointSet& set) {
  std::vector<std::size_t> order(set.sources.size());
  std::iota(order.begin(), order.end(), 0);
  const PointSources sources(set.sources, set.normals, order, set.charges, set.dipoles);
  std::vector<cplx> phi(set.targets.size());
#pragma omp parallel for
  for (std::size_t i = 0; i < set.targets.size(); ++i)
    phi[i] = sources.potential(0, sources.size(), k, set.targets[i], skip_radius * skip_radius);
  return phi;
}

inline double relative_error(const std::vector<cplx>& a, const std::vector<cplx>& b) {
  double num = 0.0, den = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    num += std::norm(a[i] - b[i]);
    den += std::norm(b[i]);
  }
  return std::sqrt(num / den);
}

// The wideband FMM's cases (wideband_fmm_test.cpp, gpu_wideband_test.cpp): the unit sphere or
// the box, a wavenumber and -fmm_eps.
struct WideCase {
  bool sphere;
  double k;
  double tolerance;
  // The targets on a second sphere beside the sources' (radius 0.5 each, centres 2 apart):
  // every pair far, carried by the coarse levels' expansions.
  bool apart = false;
};

inline void PrintTo(const WideCase& c, std::ostream* os) {
  *os << (c.apart    ? "two spheres"
          : c.sphere ? "sphere"
                     : "box")
      << ", k = " << c.k << ", eps = " << c.tolerance;
}

// A case's 20,000 sources and 10,000 targets with coherent strengths (a plane wave's trace, as a
// scattering problem's density: the far field is then of the near field's size, not the small
// remainder of random signs).
inline PointSet wide_case_points(const WideCase& c, unsigned seed) {
  PointSet set = make_points(c.sphere, 20000, 10000, seed);
  if (c.apart) {
    for (Vec3& y : set.sources) y = Vec3{-1.0, 0.0, 0.0} + 0.5 * y;
    for (Vec3& x : set.targets) x = Vec3{1.0, 0.0, 0.0} + 0.5 * normalized(x);
  }
  const Vec3 direction = normalized(Vec3{1.0, 2.0, 3.0});
  for (std::size_t j = 0; j < set.sources.size(); ++j) {
    const cplx wave = std::exp(cplx(0.0, c.k * dot(direction, set.sources[j])));
    set.charges[j] = wave;
    set.dipoles[j] = wave * dot(direction, set.normals[j]);
  }
  return set;
}

}  // namespace fmbem::fmm::testing
