#include "fmbem/bem/curvature_correction.hpp"

#include <algorithm>
#include <cstdint>
#include <map>
#include <utility>

#include "fmbem/core/error.hpp"

namespace fmbem {

std::vector<Vec3> element_curvature_vectors(const Mesh& mesh) {
  const std::size_t n = mesh.size();
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::vector<std::size_t>> faces_of;
  for (std::size_t e = 0; e < n; ++e)
    for (int k = 0; k < 3; ++k) {
      const auto a = std::uint32_t(mesh.triangles()[e][std::size_t(k)]);
      const auto b = std::uint32_t(mesh.triangles()[e][std::size_t((k + 1) % 3)]);
      faces_of[{std::min(a, b), std::max(a, b)}].push_back(e);
    }
  std::vector<Vec3> w(n, Vec3{0.0, 0.0, 0.0});
  for (const auto& [key, faces] : faces_of) {
    const Vec3 &a = mesh.vertices()[key.first], &b = mesh.vertices()[key.second];
    // v_e: the faces' outward in-plane normals of the edge (pointing from the face's centroid
    // across the edge).
    Vec3 v{0.0, 0.0, 0.0};
    double diamond = 0.0;
    for (const std::size_t f : faces) {
      Vec3 m = normalized(cross(b - a, mesh.normals()[f]));
      if (dot(m, (a + b) * 0.5 - mesh.centroids()[f]) < 0.0) m = m * -1.0;
      v = v + m;
      diamond += mesh.areas()[f];
    }
    const Vec3 density = v * (norm(b - a) / diamond);
    for (const std::size_t f : faces) w[f] = w[f] + density;
  }
  return w;
}

std::vector<double> adjoint_double_layer_curvature_correction(const Mesh& mesh,
                                                              const LayerPotentials& plain,
                                                              const LayerPotentials& coupled) {
  const std::size_t n = mesh.size();
  const RowRange rows = plain.rows();
  if (plain.columns() != n || coupled.columns() != n || coupled.rows().begin != rows.begin ||
      coupled.rows().end != rows.end || plain.coupling() != cplx(0.0) ||
      coupled.coupling() != cplx(1.0))
    throw Error("curvature correction: layer potentials of another mesh, rows or coupling");
  const std::vector<Vec3> w = element_curvature_vectors(mesh);
  std::vector<double> c(rows.size(), 0.0);
  std::vector<cplx> normal(n), curvature(n), y(rows.size());
  // -n_i . (D[n] + S[w]), one Cartesian component at a time.
  for (int axis = 0; axis < 3; ++axis) {
    const auto component = [axis](const Vec3& v) {
      return axis == 0 ? v.x : axis == 1 ? v.y : v.z;
    };
    for (std::size_t j = 0; j < n; ++j) {
      normal[j] = component(mesh.normals()[j]);
      curvature[j] = component(w[j]);
    }
    plain.apply(normal, curvature, y);
    for (std::size_t r = 0; r < rows.size(); ++r)
      c[r] -= component(mesh.normals()[rows.begin + r]) * y[r].real();
  }
  // -D'[1] = -((S + D')[1] - S[1]).
  const std::vector<cplx> ones(n, 1.0);
  std::vector<cplx> s(rows.size());
  plain.apply({}, ones, s);
  coupled.apply({}, ones, y);
  for (std::size_t r = 0; r < rows.size(); ++r) c[r] -= (y[r] - s[r]).real();
  return c;
}

}  // namespace fmbem
