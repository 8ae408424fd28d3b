#include "fmbem/bem/density_reconstruction.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <string>

#include "fmbem/core/error.hpp"

namespace fmbem {
namespace {

// Cholesky factor of the terms x terms matrix a (row-major, in place); false when a pivot falls
// below 1e-10 of its diagonal entry (the neighbours do not fix that many terms).
bool cholesky(std::array<double, 25>& a, int terms) {
  for (int j = 0; j < terms; ++j) {
    double pivot = a[j * terms + j];
    for (int l = 0; l < j; ++l) pivot -= a[j * terms + l] * a[j * terms + l];
    if (!(pivot > 1e-10 * a[j * terms + j])) return false;
    const double root = std::sqrt(pivot);
    a[j * terms + j] = root;
    for (int i = j + 1; i < terms; ++i) {
      double v = a[i * terms + j];
      for (int l = 0; l < j; ++l) v -= a[i * terms + l] * a[j * terms + l];
      a[i * terms + j] = v / root;
    }
  }
  return true;
}

void cholesky_solve(const std::array<double, 25>& l, int terms, double* b) {
  for (int i = 0; i < terms; ++i) {
    for (int c = 0; c < i; ++c) b[i] -= l[i * terms + c] * b[c];
    b[i] /= l[i * terms + i];
  }
  for (int i = terms - 1; i >= 0; --i) {
    for (int c = i + 1; c < terms; ++c) b[i] -= l[c * terms + i] * b[c];
    b[i] /= l[i * terms + i];
  }
}

// A neighbour of an element's fit: an element, or its mirror image (ImagePlanes' image index).
struct Neighbour {
  std::int32_t element;
  std::uint8_t image;
  auto operator<=>(const Neighbour&) const = default;
};

}  // namespace

DensityReconstruction::DensityReconstruction(const Mesh& mesh, double feature_angle)
    : DensityReconstruction(mesh, feature_angle, {}, 0) {}

DensityReconstruction::DensityReconstruction(const Mesh& mesh, double feature_angle,
                                             std::span<const std::uint8_t> seeds, int rings) {
  const std::size_t n = mesh.size();
  if (!seeds.empty() && seeds.size() != n)
    throw Error("density reconstruction: one flag per element is needed");
  const std::vector<std::uint8_t> on_feature =
      feature_vertices(mesh, mesh_edges(mesh), feature_angle);
  origin_ = mesh.centroids();
  axes_.resize(2 * n);
#pragma omp parallel for schedule(static)
  for (std::size_t e = 0; e < n; ++e) {
    axes_[2 * e] = normalized(mesh.corner(e, 1) - mesh.corner(e, 0));
    axes_[2 * e + 1] = cross(mesh.normals()[e], axes_[2 * e]);
  }

  // The elements at each vertex (CSR), then each element's stencil: the elements at its corners.
  const std::size_t vertices = mesh.vertices().size();
  std::vector<std::int64_t> at_start(vertices + 1, 0);
  for (const Triangle& t : mesh.triangles())
    for (int c = 0; c < 3; ++c) ++at_start[std::size_t(t[c]) + 1];
  for (std::size_t v = 0; v < vertices; ++v) at_start[v + 1] += at_start[v];
  std::vector<std::int32_t> at(std::size_t(at_start.back()));
  {
    std::vector<std::int64_t> next(at_start.begin(), at_start.end() - 1);
    for (std::size_t e = 0; e < n; ++e)
      for (int c = 0; c < 3; ++c)
        at[std::size_t(next[std::size_t(mesh.triangles()[e][c])]++)] = std::int32_t(e);
  }
  // With image planes a corner in a plane (Mesh::vertex_planes) also has the mirror images of
  // the elements at it (the union's neighbours).
  const ImagePlanes& planes = mesh.image_planes();
  // e's neighbours (element, image), ascending: the elements at its corners, and where a corner
  // lies in planes their images across every combination of them.
  const auto neighbours = [&](std::size_t e, std::vector<Neighbour>& out) {
    out.clear();
    for (int c = 0; c < 3; ++c) {
      const std::size_t v = std::size_t(mesh.triangles()[e][c]);
      const unsigned in = mesh.vertex_planes(v);
      for (unsigned g = in;; g = (g - 1) & in) {
        for (std::int64_t a = at_start[v]; a < at_start[v + 1]; ++a)
          out.push_back({at[std::size_t(a)], std::uint8_t(g)});
        if (g == 0) break;
      }
    }
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
  };
  // The stencil: the neighbours' elements, each once.
  const auto gather = [&](std::size_t e, std::vector<Neighbour>& around,
                          std::vector<std::int32_t>& out) {
    neighbours(e, around);
    out.clear();
    for (const Neighbour& o : around) out.push_back(o.element);
    out.erase(std::unique(out.begin(), out.end()), out.end());
  };
  // The elements fitted: all, or the seeds grown by `rings` vertex neighbourhoods (per ring: the
  // corners of the fitted elements marked, then every element with a marked corner fitted).
  std::vector<std::uint8_t> fit(seeds.begin(), seeds.end());
  for (int ring = 0; ring < rings && !fit.empty(); ++ring) {
    std::vector<std::uint8_t> corner(vertices, 0);
    for (std::size_t e = 0; e < n; ++e)
      if (fit[e])
        for (int c = 0; c < 3; ++c) corner[std::size_t(mesh.triangles()[e][c])] = 1;
#pragma omp parallel for schedule(static)
    for (std::size_t e = 0; e < n; ++e)
      for (int c = 0; c < 3; ++c) fit[e] |= corner[std::size_t(mesh.triangles()[e][c])];
  }
  const auto fitting = [&](std::size_t e) { return fit.empty() || fit[e] != 0; };
  // A part of a mesh (a rank's elements and halo) fits an element from the triangles at its
  // corners: all of them must be in the part, or the fit is not the whole mesh's.
  if (mesh.is_part())
    for (std::size_t e = 0; e < n; ++e)
      if (fitting(e) && !mesh.corners_complete(e))
        throw Error("density reconstruction: element " + std::to_string(e) +
                    " of this mesh part is fitted, but not every triangle at its corners is in "
                    "the part (its halo is too thin: a defect, please report it)");
  stencil_start_.assign(n + 1, 0);
#pragma omp parallel
  {
    std::vector<std::int32_t> local;
    std::vector<Neighbour> around;
#pragma omp for schedule(static)
    for (std::size_t e = 0; e < n; ++e) {
      if (!fitting(e)) continue;
      gather(e, around, local);
      stencil_start_[e + 1] = std::int64_t(local.size());
    }
  }
  for (std::size_t e = 0; e < n; ++e) stencil_start_[e + 1] += stencil_start_[e];
  columns_.resize(std::size_t(stencil_start_.back()));
  values_.resize(columns_.size() * kTerms);

  std::size_t linear = 0, constant = 0, feature = 0;
#pragma omp parallel reduction(+ : linear, constant, feature)
  {
    std::vector<std::int32_t> local;
    std::vector<Neighbour> around;
    std::vector<std::array<double, kTerms>> rows;
    std::vector<double> weights;
    std::vector<Vec3> offsets;
#pragma omp for schedule(static)
    for (std::size_t e = 0; e < n; ++e) {
      if (!fitting(e)) continue;
      gather(e, around, local);
      std::copy(local.begin(), local.end(), columns_.begin() + stencil_start_[e]);
      const Vec3& normal = mesh.normals()[e];
      const Vec3 &t1 = axes_[2 * e], &t2 = axes_[2 * e + 1];
      // A neighbour's centroid and normal (an image's reflected).
      const auto centroid_of = [&](const Neighbour& o) {
        return planes.reflect(o.image, origin_[std::size_t(o.element)]);
      };
      const auto normal_of = [&](const Neighbour& o) {
        return planes.reflect_direction(o.image, mesh.normals()[std::size_t(o.element)]);
      };
      const auto is_self = [&](const Neighbour& o) {
        return std::size_t(o.element) == e && o.image == 0;
      };
      // The neighbours' offsets in e's plane (unfolded), scaled by the largest distance so that
      // the normal equations are well scaled whatever the mesh size.
      offsets.clear();
      double scale = 0.0;
      for (const Neighbour& o : around) {
        if (is_self(o)) continue;
        const Vec3 d = centroid_of(o) - origin_[e];
        Vec3 in_plane = d - normal * dot(d, normal);
        const double length = norm(in_plane);
        if (length > 0.0) in_plane = in_plane * (norm(d) / length);
        offsets.push_back(in_plane);
        scale = std::max(scale, norm(d));
      }
      rows.clear();
      weights.clear();
      for (const Vec3& d : offsets) {
        const double x = dot(d, t1) / scale, y = dot(d, t2) / scale;
        rows.push_back({x, y, x * x, x * y, y * y});
        weights.push_back(x * x + y * y > 0.0 ? 1.0 / (x * x + y * y) : 0.0);
      }
      // The quadratic fit, or the linear one where the neighbours do not fix a quadratic.
      int terms = 0;
      std::array<double, 25> factor{};
      const Triangle& corners = mesh.triangles()[e];
      const bool at_feature = on_feature[std::size_t(corners[0])] ||
                              on_feature[std::size_t(corners[1])] ||
                              on_feature[std::size_t(corners[2])];
      // Next to a feature edge: a linear fit to the neighbours on e's own side only (normals
      // within the feature angle of e's); the others get weight 0, hence coefficient 0. On the
      // cube the bm error then falls 4 a level (bench/results/bm_sharp_edges.md); the constant
      // read there, or a quadratic one-sided fit, leave an O(h) error.
      std::size_t usable = rows.size();
      if (at_feature) {
        ++feature;
        usable = 0;
        std::size_t s = 0;
        for (const Neighbour& o : around) {
          if (is_self(o)) continue;
          const Vec3 other = normal_of(o);
          if (std::atan2(norm(cross(other, normal)), dot(other, normal)) > feature_angle)
            weights[s] = 0.0;
          else
            ++usable;
          ++s;
        }
      }
      for (const int tried : {kTerms, 2}) {
        if (at_feature && tried == kTerms) continue;
        if (usable < std::size_t(tried)) continue;
        factor.fill(0.0);
        for (std::size_t s = 0; s < rows.size(); ++s)
          for (int a = 0; a < tried; ++a)
            for (int b = 0; b < tried; ++b)
              factor[a * tried + b] += weights[s] * rows[s][a] * rows[s][b];
        if (cholesky(factor, tried)) {
          terms = tried;
          break;
        }
      }
      if (terms == 2 && !at_feature) ++linear;
      if (terms == 0 && !at_feature) ++constant;
      const std::size_t length = local.size();
      const std::size_t self = std::size_t(
          std::lower_bound(local.begin(), local.end(), std::int32_t(e)) - local.begin());
      double* out = values_.data() + std::size_t(stencil_start_[e]) * kTerms;
      std::fill(out, out + std::size_t(kTerms) * length, 0.0);
      // Each neighbour's coefficient in the unknowns: (A^T W A)^-1 A^T W e_s; u_e's is minus
      // their sum (the fit is of u_k - u_e). Degree d monomials scale by scale^d.
      const double unscale[kTerms] = {1.0 / scale, 1.0 / scale, 1.0 / (scale * scale),
                                      1.0 / (scale * scale), 1.0 / (scale * scale)};
      // An image neighbour's value is its element's times the image's sign (ImagePlanes::sign).
      std::size_t s = 0;
      for (const Neighbour& o : around) {
        if (is_self(o)) continue;
        const std::size_t col =
            std::size_t(std::lower_bound(local.begin(), local.end(), o.element) - local.begin());
        const double sign = planes.sign(o.image);
        double b[kTerms];
        for (int a = 0; a < terms; ++a) b[a] = weights[s] * rows[s][a];
        cholesky_solve(factor, terms, b);
        for (int a = 0; a < terms; ++a) {
          out[std::size_t(a) * length + col] += sign * b[a] * unscale[a];
          out[std::size_t(a) * length + self] -= b[a] * unscale[a];
        }
        ++s;
      }
    }
  }
  linear_fits_ = linear;
  constant_fits_ = constant;
  feature_elements_ = feature;
}

double DensityReconstruction::coefficient(std::size_t e, int m, std::size_t j) const {
  const std::span<const std::int32_t> columns = stencil(e);
  const auto at = std::lower_bound(columns.begin(), columns.end(), std::int32_t(j));
  if (at == columns.end() || std::size_t(*at) != j) return 0.0;
  return coefficients(e, m)[std::size_t(at - columns.begin())];
}

std::size_t DensityReconstruction::memory_bytes() const {
  return (origin_.size() + axes_.size()) * sizeof(Vec3) +
         stencil_start_.size() * sizeof(std::int64_t) + columns_.size() * sizeof(std::int32_t) +
         values_.size() * sizeof(double);
}

}  // namespace fmbem
