#pragma once
// What the bem/ tests share: random densities and the relative 2-norm difference.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <span>
#include <vector>

#include "fmbem/core/vec3.hpp"
#include "fmbem/fmm/fmm.hpp"
#include "fmbem/mesh/mesh.hpp"
#include "fmbem/mesh/neighbourhoods.hpp"

namespace fmbem::test {

// n complex values with real and imaginary parts uniform in [-1, 1), reproducible from seed.
inline std::vector<cplx> random_density(std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<cplx> d(n);
  for (auto& v : d) v = cplx(u(rng), u(rng));
  return d;
}

// FMM options of order p on the CPU, and the same on the GPU where one is present (the device
// tests' pair).
struct CpuAndGpuOptions {
  fmm::FmmOptions cpu, gpu;
};
inline CpuAndGpuOptions cpu_and_gpu_options(int order) {
  CpuAndGpuOptions o;
  o.cpu.order = order;
  o.cpu.device = fmm::FmmOptions::Device::cpu;
  o.gpu = o.cpu;
  o.gpu.device = fmm::FmmOptions::Device::automatic;
  return o;
}

// ||a - b|| / ||b|| in the 2-norm.
inline double relative_error(const std::vector<cplx>& a, const std::vector<cplx>& b) {
  double num = 0.0, den = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    num += std::norm(a[i] - b[i]);
    den += std::norm(b[i]);
  }
  return std::sqrt(num / den);
}

// The part of `whole` holding `elements` (ascending), in their order, as a rank holds its
// elements and halo (Mesh::part_of: per vertex whether all its triangles are kept).
inline Mesh part_of_elements(const Mesh& whole, std::span<const std::size_t> elements) {
  const VertexStars stars = vertex_stars(whole);
  std::vector<std::int32_t> local_of(whole.vertices().size(), -1);
  std::vector<Vec3> vertices;
  std::vector<std::uint8_t> complete;
  std::vector<Triangle> triangles;
  for (const std::size_t e : elements) {
    Triangle t;
    for (std::size_t c = 0; c < 3; ++c) {
      const std::size_t v = std::size_t(whole.triangles()[e][c]);
      if (local_of[v] < 0) {
        local_of[v] = std::int32_t(vertices.size());
        vertices.push_back(whole.vertices()[v]);
        bool all = true;
        for (std::int64_t at = stars.start[v]; at < stars.start[v + 1]; ++at)
          all = all && std::binary_search(elements.begin(), elements.end(),
                                          std::size_t(stars.elements[std::size_t(at)]));
        complete.push_back(all ? 1 : 0);
      }
      t[c] = local_of[v];
    }
    triangles.push_back(t);
  }
  return Mesh::part_of(whole.name(), std::move(vertices), std::move(triangles), std::move(complete),
                       whole.extent());
}

// `elements` (ascending) grown by one vertex ring: with every element sharing a corner.
inline std::vector<std::size_t> grown_by_a_ring(const Mesh& whole,
                                                std::span<const std::size_t> elements) {
  const VertexStars stars = vertex_stars(whole);
  std::vector<std::size_t> out(elements.begin(), elements.end());
  for (const std::size_t e : elements)
    for (const std::int32_t v : whole.triangles()[e])
      for (std::int64_t at = stars.start[std::size_t(v)]; at < stars.start[std::size_t(v) + 1];
           ++at)
        out.push_back(std::size_t(stars.elements[std::size_t(at)]));
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

}  // namespace fmbem::test
