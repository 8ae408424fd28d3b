#pragma once
// Point sets for the M2L plan and GPU M2L tests: the sources and targets FmmLayerPotentials
// gives the FMM (the 3 Gauss points of every triangle, and the centroids, which also split the
// tree) on icospheres, and random moments.
#include <random>
#include <vector>

#include "fmbem/fmm/m2l_plan.hpp"
#include "fmbem/fmm/octree.hpp"
#include "fmbem/mesh/mesh.hpp"
#include "fmbem/quadrature/triangle_rule.hpp"

namespace fmbem::fmm::testing {

struct Cloud {
  std::vector<Vec3> sources, targets;
};

inline void add_surface(const Surface& surface, Cloud& cloud) {
  const TriangleRule& rule = triangle_rule(3);
  for (const Triangle& t : surface.triangles) {
    const Vec3 &a = surface.vertices[t[0]], &b = surface.vertices[t[1]],
               &c = surface.vertices[t[2]];
    for (const auto& w : rule.barycentric) cloud.sources.push_back(w[0] * a + w[1] * b + w[2] * c);
    cloud.targets.push_back((a + b + c) * (1.0 / 3.0));
  }
}

// Uniform: one icosphere of radius 1.
inline Cloud icosphere_cloud(int level) {
  Cloud cloud;
  add_surface(make_icosphere(level, 1.0), cloud);
  return cloud;
}

// Strongly adaptive: a unit sphere and a sphere 500 times smaller beside it, so that the tree
// is deep near the small one and shallow elsewhere. The big sphere's targets above z = 0.5 are
// left out (cells with sources only) and a line of targets without sources is added (cells
// with targets only); missing cells abound.
inline Cloud two_sphere_cloud() {
  Cloud big, small;
  add_surface(make_icosphere(3, 1.0), big);
  add_surface(make_icosphere(3, 0.002, Vec3{0.9, 0.3, -0.2}), small);
  Cloud cloud;
  cloud.sources = big.sources;
  cloud.sources.insert(cloud.sources.end(), small.sources.begin(), small.sources.end());
  for (const Vec3& t : big.targets)
    if (t.z < 0.5) cloud.targets.push_back(t);
  cloud.targets.insert(cloud.targets.end(), small.targets.begin(), small.targets.end());
  for (int i = 0; i < 300; ++i) cloud.targets.push_back(Vec3{-1.4 + 0.002 * i, -1.3, 1.2});
  return cloud;
}

inline Octree make_tree(const Cloud& cloud, int max_leaf) {
  return Octree(cloud.sources, cloud.targets, OctreeOptions{max_leaf});
}

inline std::vector<cplx> random_coefficients(std::size_t count, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<cplx> v(count);
  for (cplx& x : v) x = cplx(u(rng), u(rng));
  return v;
}

}  // namespace fmbem::fmm::testing
