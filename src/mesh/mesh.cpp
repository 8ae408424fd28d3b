#include "fmbem/mesh/mesh.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <iomanip>
#include <queue>
#include <sstream>
#include <unordered_map>

#include "fmbem/core/error.hpp"
#include "fmbem/core/parallel_sort.hpp"
#include "fmbem/mesh/intersections.hpp"

namespace fmbem {
namespace {

[[noreturn]] void fail(const std::string& name, const std::string& what) {
  throw Error("mesh '" + name + "': " + what);
}

std::array<Vec3, 2> bounding_box(const std::vector<Vec3>& points) {
  Vec3 lo = points.front(), hi = points.front();
  for (const Vec3& p : points) {
    lo = {std::min(lo.x, p.x), std::min(lo.y, p.y), std::min(lo.z, p.z)};
    hi = {std::max(hi.x, p.x), std::max(hi.y, p.y), std::max(hi.z, p.z)};
  }
  return {lo, hi};
}

// Readers may repeat a vertex per surface entity; merging coincident vertices
// (to a tolerance far below any element size) lets the topology checks see
// the surface as the one closed body it is.
void merge_coincident_vertices(Surface& s, double tolerance) {
  const std::size_t n = s.vertices.size();
  std::vector<std::int32_t> order(n);
  for (std::size_t i = 0; i < n; ++i) order[i] = std::int32_t(i);
  std::sort(order.begin(), order.end(),
            [&](std::int32_t a, std::int32_t b) { return s.vertices[a].x < s.vertices[b].x; });
  std::vector<std::int32_t> representative(n);
  for (std::size_t i = 0; i < n; ++i) representative[i] = std::int32_t(i);
  for (std::size_t a = 0; a < n; ++a) {
    const std::int32_t ia = order[a];
    if (representative[ia] != ia) continue;
    for (std::size_t b = a + 1; b < n && s.vertices[order[b]].x - s.vertices[ia].x <= tolerance;
         ++b) {
      const std::int32_t ib = order[b];
      if (representative[ib] == ib && norm(s.vertices[ib] - s.vertices[ia]) <= tolerance)
        representative[ib] = ia;
    }
  }
  // Keep only used, representative vertices, in their original order.
  std::vector<std::int32_t> new_index(n, -1);
  std::vector<char> used(n, 0);
  for (const Triangle& t : s.triangles)
    for (std::int32_t v : t) used[representative[v]] = 1;
  std::vector<Vec3> kept;
  for (std::size_t i = 0; i < n; ++i)
    if (used[i] && representative[i] == std::int32_t(i)) {
      new_index[i] = std::int32_t(kept.size());
      kept.push_back(s.vertices[i]);
    }
  for (Triangle& t : s.triangles)
    for (std::int32_t& v : t) v = new_index[representative[v]];
  s.vertices = std::move(kept);
}

// Below this many triangles the validation's loops run on one thread.
constexpr std::size_t kThreadedTriangles = 16384;

// The first t in [0, n) where bad(t), or n: on the threads, the lowest index found by any.
template <class Bad>
std::size_t first_triangle_where(std::size_t n, Bad&& bad) {
  std::size_t first = n;
#pragma omp parallel for schedule(static) reduction(min : first) if (n > kThreadedTriangles)
  for (std::size_t t = 0; t < n; ++t)
    if (t < first && bad(t)) first = t;
  return first;
}

// Vertices closer than this fraction of the mesh size are one vertex.
constexpr double kCoincident = 1e-12;
// Coordinates up to 1e30 in magnitude and meshes at least 1e-30 across (from
// nanometres to light years, in metres, with room to spare) keep the products the
// solver forms far from overflow and from subnormal numbers: a triangle's area is
// the root of a sum of fourth powers of edge lengths, volumes are cubes, the
// double-layer kernel divides by cubed distances.
constexpr double kLargestCoordinate = 1e30;
constexpr double kSmallestSize = 1e-30;
// Double precision resolves a vertex to about 1e-16 of its distance from the
// origin: a mesh 1e12 times smaller than that distance cannot be told apart.
constexpr double kLargestOffset = 1e12;

// |v| without squaring its components, which could underflow or overflow.
double scaled_norm(const Vec3& v) {
  const double largest = std::max({std::abs(v.x), std::abs(v.y), std::abs(v.z)});
  return largest > 0.0 ? largest * norm(Vec3{v.x / largest, v.y / largest, v.z / largest}) : 0.0;
}

std::string number(double value, int digits = 3) {
  std::ostringstream text;
  text << std::setprecision(digits) << value;
  return text.str();
}

// A vertex within kInPlane of the mesh's diameter from a plane lies in it.
constexpr double kInPlane = 1e-9;

// Per vertex the planes it lies in, a bit per plane (empty without planes).
std::vector<std::uint8_t> vertices_in_planes(std::span<const Vec3> vertices,
                                             const ImagePlanes& planes, double diameter) {
  std::vector<std::uint8_t> in_plane(planes.empty() ? 0 : vertices.size(), 0);
  for (std::size_t p = 0; p < planes.planes().size(); ++p)
    for (std::size_t v = 0; v < vertices.size(); ++v)
      if (std::abs(planes.planes()[p].signed_distance(vertices[v])) <= kInPlane * diameter)
        in_plane[v] |= std::uint8_t(1u << p);
  return in_plane;
}

// Checks that the coordinates of the used vertices are in a range the solver can
// compute with and returns the diameter of their bounding box.
double check_scale(const Surface& s, const std::string& name) {
  std::vector<char> used(s.vertices.size(), 0);
  for (const Triangle& t : s.triangles)
    for (std::int32_t v : t) used[v] = 1;
  double largest = 0.0;
  Vec3 lo{}, hi{};
  bool first = true;
  for (std::size_t i = 0; i < s.vertices.size(); ++i) {
    if (!used[i]) continue;
    const Vec3& p = s.vertices[i];
    largest = std::max({largest, std::abs(p.x), std::abs(p.y), std::abs(p.z)});
    lo = first ? p : Vec3{std::min(lo.x, p.x), std::min(lo.y, p.y), std::min(lo.z, p.z)};
    hi = first ? p : Vec3{std::max(hi.x, p.x), std::max(hi.y, p.y), std::max(hi.z, p.z)};
    first = false;
  }
  return check_coordinate_scale(name, largest, lo, hi);
}

// The icosahedron (unit vertices) and its 30 edges, each as (lower, higher) vertex, ascending.
struct Icosahedron {
  std::array<Vec3, 12> vertices;
  std::array<Triangle, 20> faces;
  std::array<std::array<std::int32_t, 2>, 30> edges;
};

const Icosahedron& icosahedron() {
  static const Icosahedron shape = [] {
    Icosahedron s;
    const double phi = (1.0 + std::sqrt(5.0)) / 2.0;
    s.vertices = {Vec3{-1, phi, 0}, {1, phi, 0}, {-1, -phi, 0}, {1, -phi, 0},
                  {0, -1, phi},     {0, 1, phi}, {0, -1, -phi}, {0, 1, -phi},
                  {phi, 0, -1},     {phi, 0, 1}, {-phi, 0, -1}, {-phi, 0, 1}};
    for (Vec3& p : s.vertices) p = normalized(p);
    s.faces = {Triangle{0, 11, 5}, {0, 5, 1},  {0, 1, 7},   {0, 7, 10}, {0, 10, 11},
               {1, 5, 9},          {5, 11, 4}, {11, 10, 2}, {10, 7, 6}, {7, 1, 8},
               {3, 9, 4},          {3, 4, 2},  {3, 2, 6},   {3, 6, 8},  {3, 8, 9},
               {4, 9, 5},          {2, 4, 11}, {6, 2, 10},  {8, 6, 7},  {9, 8, 1}};
    std::vector<std::array<std::int32_t, 2>> edges;
    for (const Triangle& f : s.faces)
      for (int c = 0; c < 3; ++c)
        edges.push_back({std::min(f[c], f[(c + 1) % 3]), std::max(f[c], f[(c + 1) % 3])});
    std::sort(edges.begin(), edges.end());
    edges.erase(std::unique(edges.begin(), edges.end()), edges.end());
    std::copy(edges.begin(), edges.end(), s.edges.begin());
    return s;
  }();
  return shape;
}

// A point of an icosphere of level L: its face of the icosahedron and its weights on the face's
// three corners, in units of 1 / 2^L (they sum to 2^L).
using FaceWeights = std::array<std::int64_t, 3>;

// The point's index: where it lies (a corner, inside an edge, inside a face), not on the face it
// was reached from, so the faces sharing an edge number its points alike.
std::int64_t icosphere_vertex(int face, const FaceWeights& w, std::int64_t n) {
  const Icosahedron& shape = icosahedron();
  const Triangle& f = shape.faces[std::size_t(face)];
  const int zeros = int(w[0] == 0) + int(w[1] == 0) + int(w[2] == 0);
  if (zeros == 2) return f[w[0] == n ? 0 : w[1] == n ? 1 : 2];
  if (zeros == 1) {
    const int missing = w[0] == 0 ? 0 : w[1] == 0 ? 1 : 2;
    const int a = (missing + 1) % 3, b = (missing + 2) % 3;
    const std::int32_t lower = std::min(f[a], f[b]), higher = std::max(f[a], f[b]);
    const std::int64_t along = f[a] == higher ? w[a] : w[b];  // the weight on the higher corner
    const auto edge = std::lower_bound(shape.edges.begin(), shape.edges.end(),
                                       std::array<std::int32_t, 2>{lower, higher}) -
                      shape.edges.begin();
    return 12 + edge * (n - 1) + (along - 1);
  }
  const std::int64_t i = w[0], j = w[1];  // both 1.., i + j <= n - 1
  return 12 + 30 * (n - 1) + face * ((n - 1) * (n - 2) / 2) + (i - 1) * (n - 1) - (i - 1) * i / 2 +
         (j - 1);
}

// Calls visit(t, corners, vertices) for each triangle t in [first, last) of the icosphere of
// `level` (unit sphere), in order. Each midpoint is normalized(p + q) of its edge's ends, as the
// level-by-level refinement forms it (p + q == q + p: the same bits from either triangle).
template <class Visit>
void for_each_icosphere_triangle(int level, std::size_t first, std::size_t last, Visit&& visit) {
  const Icosahedron& shape = icosahedron();
  const std::int64_t n = std::int64_t(1) << level;
  struct Node {
    std::array<Vec3, 3> p;
    std::array<FaceWeights, 3> w;
  };
  const auto mid = [](const FaceWeights& a, const FaceWeights& b) {
    return FaceWeights{(a[0] + b[0]) / 2, (a[1] + b[1]) / 2, (a[2] + b[2]) / 2};
  };
  // Depth first over the subtrees that meet [first, last).
  const auto descend = [&](auto&& self, int face, int depth, std::size_t begin,
                           const Node& node) -> void {
    const std::size_t count = std::size_t(1) << (2 * depth);
    if (begin >= last || begin + count <= first) return;
    if (depth == 0) {
      std::array<std::int64_t, 3> ids;
      for (int c = 0; c < 3; ++c) ids[std::size_t(c)] = icosphere_vertex(face, node.w[c], n);
      visit(begin, node.p, ids);
      return;
    }
    const auto& [a, b, c] = node.p;
    const Vec3 ab = normalized(a + b), bc = normalized(b + c), ca = normalized(c + a);
    const FaceWeights wab = mid(node.w[0], node.w[1]), wbc = mid(node.w[1], node.w[2]),
                      wca = mid(node.w[2], node.w[0]);
    const std::size_t quarter = count / 4;
    self(self, face, depth - 1, begin, Node{{a, ab, ca}, {node.w[0], wab, wca}});
    self(self, face, depth - 1, begin + quarter, Node{{b, bc, ab}, {node.w[1], wbc, wab}});
    self(self, face, depth - 1, begin + 2 * quarter, Node{{c, ca, bc}, {node.w[2], wca, wbc}});
    self(self, face, depth - 1, begin + 3 * quarter, Node{{ab, bc, ca}, {wab, wbc, wca}});
  };
  const std::size_t per_face = std::size_t(1) << (2 * level);
  for (int face = 0; face < 20; ++face) {
    const Triangle& f = shape.faces[std::size_t(face)];
    descend(descend, face, level, std::size_t(face) * per_face,
            Node{{shape.vertices[std::size_t(f[0])], shape.vertices[std::size_t(f[1])],
                  shape.vertices[std::size_t(f[2])]},
                 {FaceWeights{n, 0, 0}, {0, n, 0}, {0, 0, n}}});
  }
}

void check_icosphere(int level, double radius, const Vec3& center) {
  if (level < 0 || level > 10) throw Error("icosphere level must be between 0 and 10");
  if (!(radius > 0.0) || !std::isfinite(radius)) throw Error("icosphere radius must be positive");
  if (!std::isfinite(center.x) || !std::isfinite(center.y) || !std::isfinite(center.z))
    throw Error("icosphere centre must be finite");
}

// The groups of a mesh of `elements` triangles (of `whole` in the whole mesh): each element's
// group one of the groups, a surface's; the overlap's element one of the whole's, in two
// different surface groups.
void check_groups(const std::string& name, std::size_t elements, std::size_t whole,
                  const std::vector<SurfaceGroup>& groups,
                  const std::vector<std::int32_t>& element_groups,
                  const std::optional<GroupOverlap>& overlap) {
  const auto surface_group = [&](std::int32_t g) {
    return g >= 0 && std::size_t(g) < groups.size() && groups[std::size_t(g)].dimension == 2;
  };
  for (const SurfaceGroup& group : groups)
    if (group.dimension < 0 || group.dimension > 3)
      fail(name, "its group '" + group.name + "' (tag " + std::to_string(group.tag) +
                     ") has dimension " + std::to_string(group.dimension) + ", not 0 to 3");
  if (!element_groups.empty() && element_groups.size() != elements)
    fail(name, "it has " + std::to_string(element_groups.size()) + " element groups for " +
                   std::to_string(elements) + " triangles");
  for (std::size_t t = 0; t < element_groups.size(); ++t)
    if (element_groups[t] != -1 && !surface_group(element_groups[t]))
      fail(name, "triangle " + std::to_string(t) + "'s group " + std::to_string(element_groups[t]) +
                     " is not one of its " + std::to_string(groups.size()) + " groups of surfaces");
  if (overlap && (overlap->triangle >= whole || !surface_group(overlap->first) ||
                  !surface_group(overlap->second) || overlap->first == overlap->second))
    fail(name, "its group overlap names triangle " + std::to_string(overlap->triangle) +
                   " and groups " + std::to_string(overlap->first) + " and " +
                   std::to_string(overlap->second) +
                   ", not a triangle in two of its surface groups");
}

}  // namespace

double check_coordinate_scale(const std::string& name, double largest, const Vec3& lo,
                              const Vec3& hi) {
  if (largest > kLargestCoordinate)
    fail(name, "its coordinates reach " + number(largest) +
                   ", too large to compute with (products of them overflow); fmbem needs "
                   "coordinates below " +
                   number(kLargestCoordinate) + " in magnitude: rescale the mesh");
  const double diameter = scaled_norm(hi - lo);
  if (diameter < kSmallestSize)
    fail(name, "it measures only " + number(diameter) +
                   " across, too small to compute with (products of its coordinates underflow "
                   "to subnormal numbers or zero); fmbem needs a size of at least " +
                   number(kSmallestSize) + ": rescale the mesh");
  if (largest > kLargestOffset * diameter)
    fail(name, "it measures " + number(diameter) + " across but lies " + number(largest) +
                   " from the origin, where double precision cannot tell its vertices apart: "
                   "move it near the origin");
  return diameter;
}

Mesh Mesh::from_surface(Surface surface, const std::string& name, const ImagePlanes& planes) {
  if (surface.triangles.empty()) fail(name, "contains no triangles");
  check_groups(name, surface.triangles.size(), surface.triangles.size(), surface.groups,
               surface.triangle_group, surface.overlap);
  if (surface.overlap &&
      (surface.triangle_group.empty() ||
       surface.triangle_group[surface.overlap->triangle] != surface.overlap->first))
    fail(name, "its group overlap's triangle " + std::to_string(surface.overlap->triangle) +
                   " is not in the overlap's first group");
  const auto num_vertices = std::int64_t(surface.vertices.size());
  for (std::size_t t = 0; t < surface.triangles.size(); ++t)
    for (std::int32_t v : surface.triangles[t])
      if (v < 0 || v >= num_vertices)
        fail(name, "triangle " + std::to_string(t) + " refers to a missing vertex");
  for (const Vec3& p : surface.vertices)
    if (!std::isfinite(p.x) || !std::isfinite(p.y) || !std::isfinite(p.z))
      fail(name, "a vertex has a non-finite coordinate");

  {
    const auto& tris = surface.triangles;
    const std::size_t first = first_triangle_where(tris.size(), [&](std::size_t t) {
      const auto [a, b, c] = tris[t];
      return a == b || b == c || a == c;
    });
    if (first < tris.size())
      fail(name, "triangle " + std::to_string(first) + " is degenerate (repeated vertex)");
  }
  const double diameter = check_scale(surface, name);
  merge_coincident_vertices(surface, kCoincident * diameter);
  const auto& verts = surface.vertices;
  auto& tris = surface.triangles;
  const std::size_t n = tris.size();

  // Degenerate triangles, by tolerances relative to the mesh and to the triangle:
  // corners merged as coincident, or (numerically) zero area for its size. The first such
  // triangle is named, as a loop in order would.
  {
    const auto merged = [&](std::size_t t) {
      const auto [a, b, c] = tris[t];
      return a == b || b == c || a == c;
    };
    const auto collinear = [&](std::size_t t) {
      const auto [a, b, c] = tris[t];
      const Vec3 e1 = verts[b] - verts[a], e2 = verts[c] - verts[a], e3 = verts[c] - verts[b];
      const double longest = std::max({norm(e1), norm(e2), norm(e3)});
      return norm(cross(e1 * (1.0 / longest), e2 * (1.0 / longest))) <= 1e-10;
    };
    const std::size_t first =
        first_triangle_where(n, [&](std::size_t t) { return merged(t) || collinear(t); });
    if (first < n && merged(first))
      fail(name, "triangle " + std::to_string(first) +
                     " is degenerate: two of its corners coincide (closer than " +
                     number(kCoincident) + " of the mesh size)");
    if (first < n)
      fail(name, "triangle " + std::to_string(first) +
                     " is degenerate (zero area: its corners are collinear)");
  }

  // Duplicate triangles: the same three vertices in any order (sorted with the triangle's
  // index: a total order, the same sequence on any number of threads).
  {
    std::vector<std::pair<Triangle, std::size_t>> sorted(n);
#pragma omp parallel for schedule(static) if (n > kThreadedTriangles)
    for (std::size_t t = 0; t < n; ++t) {
      Triangle k = tris[t];
      std::sort(k.begin(), k.end());
      sorted[t] = {k, t};
    }
    parallel_sort(sorted.begin(), sorted.end());
    for (std::size_t i = 1; i < n; ++i)
      if (sorted[i].first == sorted[i - 1].first)
        fail(name, "triangles " + std::to_string(sorted[i - 1].second) + " and " +
                       std::to_string(sorted[i].second) + " are duplicates");
  }

  // The planes: every vertex on one side of each (or in it), no element in one; a vertex within
  // kInPlane of the diameter lies in the plane (where the mesh may be open).
  ImagePlanes kept_planes = planes;
  std::vector<std::uint8_t> in_plane = vertices_in_planes(verts, planes, diameter);
  // Per plane the vertices' least and greatest signed distance (0 included).
  std::array<double, 3> plane_low{}, plane_high{};
  if (!planes.empty()) {
    for (std::size_t p = 0; p < planes.planes().size(); ++p) {
      const ImagePlane& plane = planes.planes()[p];
      double& low = plane_low[p];
      double& high = plane_high[p];
      for (std::size_t v = 0; v < verts.size(); ++v) {
        const double d = plane.signed_distance(verts[v]);
        low = std::min(low, d);
        high = std::max(high, d);
      }
      const std::string named = std::string("the plane ") + "xyz"[plane.axis] + " = " +
                                number(plane.offset, 6) + " (" + plane_kind_name(plane.kind) + ")";
      if (low < -kInPlane * diameter && high > kInPlane * diameter)
        fail(name, "it lies on both sides of " + named +
                       ": the mesh must be the part on one side of each plane (cut it there)");
      const bool wholly_in = high <= kInPlane * diameter && low >= -kInPlane * diameter;
      if (wholly_in && plane.kind != PlaneKind::rigid) fail(name, "it lies wholly in " + named);
      // (Wholly in a rigid plane: a baffled piston; its side is its normals', below.)
      const std::size_t first = first_triangle_where(n, [&](std::size_t t) {
        return (in_plane[tris[t][0]] & in_plane[tris[t][1]] & in_plane[tris[t][2]]) >> p & 1u;
      });
      if (first < n && plane.kind != PlaneKind::rigid)
        fail(name, "triangle " + std::to_string(first + 1) + " (1-based) lies in " + named +
                       (plane.reflects()
                            ? ": only a rigid plane takes elements flush with it (a piston in a "
                              "baffle)"
                            : ": the mesh must end at a symmetry plane, not cover it"));
    }
  }
  // The images must be as computable as the mesh: the union's coordinates within the same limits
  // (a plane 1e300 away would put the images' coordinates beyond what products of them hold).
  if (!planes.empty()) {
    const auto [lo, hi] = bounding_box(verts);
    Vec3 union_lo = lo, union_hi = hi;
    for (std::size_t g = 1; g < planes.images(); ++g) {
      const Vec3 a = planes.reflect(g, lo), b = planes.reflect(g, hi);
      union_lo = {std::min({union_lo.x, a.x, b.x}), std::min({union_lo.y, a.y, b.y}),
                  std::min({union_lo.z, a.z, b.z})};
      union_hi = {std::max({union_hi.x, a.x, b.x}), std::max({union_hi.y, a.y, b.y}),
                  std::max({union_hi.z, a.z, b.z})};
    }
    const double largest =
        std::max({std::abs(union_lo.x), std::abs(union_lo.y), std::abs(union_lo.z),
                  std::abs(union_hi.x), std::abs(union_hi.y), std::abs(union_hi.z)});
    try {
      check_coordinate_scale(name, largest, union_lo, union_hi);
    } catch (const Error& e) {
      throw Error(std::string(e.what()) + " (the mesh together with its images across " +
                  planes.description() + ")");
    }
  }
  // An edge of one triangle is where the mesh meets a plane when both its ends lie in one.
  const auto edge_in_plane = [&](std::int32_t a, std::int32_t b) {
    return !in_plane.empty() && (in_plane[std::size_t(a)] & in_plane[std::size_t(b)]) != 0;
  };

  // Edge neighbours from the triangles around each vertex (a CSR "star"): a closed 2-manifold
  // has every edge in exactly two triangles. The stars are O(n) with local memory access; a hash
  // map of the 1.5 n edges cost seconds at a million triangles (cache misses).
  std::vector<std::int64_t> star_start(verts.size() + 1, 0);
  for (const Triangle& t : tris)
    for (std::int32_t v : t) ++star_start[std::size_t(v) + 1];
  for (std::size_t v = 0; v < verts.size(); ++v) star_start[v + 1] += star_start[v];
  std::vector<std::int64_t> star(star_start.back());
  {
    std::vector<std::int64_t> fill(star_start.begin(), star_start.end() - 1);
    for (std::size_t t = 0; t < n; ++t)
      for (std::int32_t v : tris[t]) star[fill[v]++] = std::int64_t(t);
  }
  // neighbour[3 t + e]: the other triangle on edge e (corners e, e + 1) of triangle t.
  std::vector<std::int64_t> neighbour(3 * n, -1);
  bool non_manifold = false;
  std::size_t open_edges = 0, cut_edges = 0;
#pragma omp parallel for schedule(static) reduction(|| : non_manifold) \
    reduction(+ : open_edges, cut_edges) if (n > kThreadedTriangles)
  for (std::size_t t = 0; t < n; ++t)
    for (int e = 0; e < 3; ++e) {
      const std::int32_t a = tris[t][e], b = tris[t][(e + 1) % 3];
      int found = 0;
      for (std::int64_t i = star_start[a]; i < star_start[a + 1]; ++i) {
        const std::size_t s = std::size_t(star[i]);
        if (s != t && (tris[s][0] == b || tris[s][1] == b || tris[s][2] == b)) {
          neighbour[3 * t + e] = std::int64_t(s);
          ++found;
        }
      }
      non_manifold |= found > 1;
      open_edges += found == 0 && !edge_in_plane(a, b);
      cut_edges += found == 0;
    }
  if (non_manifold)
    fail(name, "the surface is non-manifold: an edge is shared by more than two triangles");
  if (open_edges > 0)
    fail(name, "the surface is open: " + std::to_string(open_edges) +
                   " edges belong to one triangle only (a closed surface is needed" +
                   (planes.empty() ? std::string(")")
                                   : std::string(", open only where it meets one of the planes)")));

  // Consistent orientation by breadth-first search over edge neighbours: a
  // neighbour must run through the shared edge in the opposite direction.
  auto runs_forward = [&](std::size_t t, std::int32_t a, std::int32_t b) {
    for (int e = 0; e < 3; ++e)
      if (tris[t][e] == a && tris[t][(e + 1) % 3] == b) return true;
    return false;
  };
  std::vector<int> component(n, -1);
  std::vector<char> flipped(n, 0);
  int num_components = 0;
  for (std::size_t seed = 0; seed < n; ++seed) {
    if (component[seed] >= 0) continue;
    const int c = num_components++;
    std::vector<std::size_t> members{seed};
    std::queue<std::size_t> queue;
    queue.push(seed);
    component[seed] = c;
    while (!queue.empty()) {
      const std::size_t t = queue.front();
      queue.pop();
      for (int e = 0; e < 3; ++e) {
        const std::int32_t a = tris[t][e], b = tris[t][(e + 1) % 3];
        // The neighbour across (a, b) is the one holding both (flips reorder corners, not
        // vertex sets; in a manifold without duplicates only one other triangle holds both).
        const auto holds = [&](std::size_t s, std::int32_t v) {
          return tris[s][0] == v || tris[s][1] == v || tris[s][2] == v;
        };
        std::size_t other = t;
        for (int f = 0; f < 3; ++f) {
          if (neighbour[3 * t + f] < 0) continue;  // an edge in a plane
          const auto s = std::size_t(neighbour[3 * t + f]);
          if (holds(s, a) && holds(s, b)) other = s;
        }
        if (other == t) continue;  // an edge in a plane: no neighbour across it
        const bool consistent = !runs_forward(other, a, b);
        if (component[other] < 0) {
          if (!consistent) {
            std::swap(tris[other][1], tris[other][2]);
            flipped[other] ^= 1;
          }
          component[other] = c;
          members.push_back(other);
          queue.push(other);
        } else if (!consistent) {
          fail(name, "the surface is not orientable (e.g. a Moebius strip)");
        }
      }
    }
    // Outward normals: the signed volume each closed component encloses
    // (divergence theorem about its first vertex) must be positive. A component open at the
    // planes is closed by them: about a point in every plane their faces add nothing.
    const Vec3 origin = planes.empty() ? verts[tris[seed][0]] : planes.origin();
    double volume6 = 0.0;
    for (std::size_t t : members)
      volume6 += dot(verts[tris[t][0]] - origin,
                     cross(verts[tris[t][1]] - origin, verts[tris[t][2]] - origin));
    if (volume6 < 0.0)
      for (std::size_t t : members) {
        std::swap(tris[t][1], tris[t][2]);
        flipped[t] ^= 1;
      }
  }

  // Elements flush with a rigid plane (all corners in it: a piston or membrane in a baffle) face
  // the fluid: a mesh lying wholly in the plane has its fluid on its normals' side; any other
  // mesh has it on its own side, and a flush element facing away is an error (a body's face
  // resting on the plane belongs out of the mesh: the plane closes the body there).
  std::vector<std::uint8_t> flush;
  if (!planes.empty()) {
    std::array<int, 3> sides{1, 1, 1};
    for (std::size_t p = 0; p < planes.planes().size(); ++p) {
      const ImagePlane& plane = planes.planes()[p];
      int side = 0;
      if (plane_high[p] > kInPlane * diameter) side = 1;
      if (plane_low[p] < -kInPlane * diameter) side = -1;
      for (std::size_t t = 0; t < n; ++t) {
        if (!((in_plane[tris[t][0]] & in_plane[tris[t][1]] & in_plane[tris[t][2]]) >> p & 1u))
          continue;
        if (flush.empty()) flush.assign(n, 0);
        flush[t] = std::uint8_t(1u << p);
        const Vec3 normal =
            cross(verts[tris[t][1]] - verts[tris[t][0]], verts[tris[t][2]] - verts[tris[t][0]]);
        const double along = fmbem::component(normal, plane.axis);
        if (side == 0) side = along > 0.0 ? 1 : -1;
        if (along * double(side) <= 0.0)
          fail(name, "triangle " + std::to_string(t + 1) + " (1-based) lies in the plane " +
                         "xyz"[plane.axis] + " = " + number(plane.offset, 6) +
                         " (rigid) facing away from the fluid: a body's face resting on the "
                         "plane belongs out of the mesh (the plane closes the body there), and a "
                         "piston or membrane in the plane must face the fluid (the mesh's side, "
                         "or for a mesh wholly in the plane its first triangle's normal)");
      }
      sides[p] = side;
    }
    kept_planes.set_sides(sides);
  }

  // A surface that crosses or touches itself, or a closed part inside another, has no exterior
  // the integral equation describes (solved, such meshes gave errors of 65 % and 86 %). Named
  // 1-based: the k-th triangle of the file.
  if (const auto meet = first_self_intersection(verts, tris)) {
    const Vec3& x = meet->near;
    fail(name, "the surface intersects itself: triangles " + std::to_string(meet->first + 1) +
                   " and " + std::to_string(meet->second + 1) +
                   " (1-based, in the file's order) cross or touch near (" + number(x.x, 6) + ", " +
                   number(x.y, 6) + ", " + number(x.z, 6) + ")" +
                   (component[meet->first] != component[meet->second]
                        ? ", where two of its closed parts overlap or touch"
                        : "") +
                   "; fmbem needs closed surfaces that neither cross nor touch themselves or "
                   "each other");
  }
  // (A part open at a plane has an inside only with its images: the test is of closed parts.)
  if (const auto nested =
          cut_edges > 0 ? std::nullopt : first_nested_part(verts, tris, component, num_components))
    fail(name, "the surface has a closed part inside another (the part of triangle " +
                   std::to_string(nested->outer + 1) + " contains the part of triangle " +
                   std::to_string(nested->inner + 1) +
                   ", 1-based in the file's order): nested bodies are not supported. fmbem "
                   "solves for the field outside the bodies, which a surface inside a body "
                   "does not meet: remove the inner surface, or mesh a hollow body whose cavity "
                   "is open to the outside as one closed surface (outer and inner walls joined "
                   "at the opening)");

  Mesh mesh;
  mesh.name_ = name;
  mesh.planes_ = kept_planes;
  mesh.flush_ = std::move(flush);
  mesh.vertex_planes_ = std::move(in_plane);
  mesh.flipped_ = std::size_t(std::count(flipped.begin(), flipped.end(), 1));
  mesh.vertices_ = std::move(surface.vertices);
  mesh.triangles_ = std::move(surface.triangles);
  // In the triangles' order: the checks above flip triangles, never reorder or drop them.
  mesh.groups_ = std::move(surface.groups);
  mesh.element_groups_ = std::move(surface.triangle_group);
  mesh.group_overlap_ = surface.overlap;
  mesh.compute_geometry();
  return mesh;
}

Mesh Mesh::part_of(const std::string& name, std::vector<Vec3> vertices,
                   std::vector<Triangle> triangles, std::vector<std::uint8_t> vertex_complete,
                   const MeshExtent& whole, std::vector<std::int32_t> element_groups,
                   std::vector<SurfaceGroup> groups, std::optional<GroupOverlap> overlap,
                   const ImagePlanes& planes) {
  if (vertex_complete.size() != vertices.size())
    throw Error("a mesh part needs one completeness flag per vertex");
  for (const Triangle& t : triangles)
    for (std::int32_t v : t)
      if (v < 0 || std::size_t(v) >= vertices.size())
        throw Error("a mesh part's triangle names a vertex it does not hold");
  check_groups(name, triangles.size(), whole.elements, groups, element_groups, overlap);
  Mesh mesh;
  mesh.name_ = name;
  mesh.part_ = true;
  mesh.vertices_ = std::move(vertices);
  mesh.triangles_ = std::move(triangles);
  mesh.vertex_complete_ = std::move(vertex_complete);
  mesh.groups_ = std::move(groups);
  mesh.element_groups_ = std::move(element_groups);
  mesh.group_overlap_ = overlap;
  mesh.compute_geometry();
  // The whole surface's, which the part's own elements cannot give.
  mesh.box_min_ = whole.box_min;
  mesh.box_max_ = whole.box_max;
  mesh.volume_ = whole.volume;
  mesh.max_edge_ = whole.max_edge;
  mesh.flipped_ = whole.flipped;
  mesh.whole_size_ = whole.elements;
  mesh.whole_vertices_ = whole.vertices;
  // The whole mesh's planes (validated there) and its classification of these vertices and
  // elements against them.
  mesh.planes_ = planes;
  mesh.vertex_planes_ =
      vertices_in_planes(mesh.vertices_, planes, scaled_norm(whole.box_max - whole.box_min));
  for (std::size_t t = 0; t < mesh.triangles_.size() && !planes.empty(); ++t) {
    const Triangle& c = mesh.triangles_[t];
    const std::uint8_t all = mesh.vertex_planes_[std::size_t(c[0])] &
                             mesh.vertex_planes_[std::size_t(c[1])] &
                             mesh.vertex_planes_[std::size_t(c[2])];
    if (all == 0) continue;
    if (mesh.flush_.empty()) mesh.flush_.assign(mesh.triangles_.size(), 0);
    mesh.flush_[t] = all;
  }
  return mesh;
}

MeshExtent Mesh::extent() const {
  return {box_min_,
          box_max_,
          volume_,
          max_edge_,
          part_ ? whole_size_ : size(),
          flipped_,
          part_ ? whole_vertices_ : vertices_.size()};
}

void Mesh::compute_geometry() {
  const std::size_t n = triangles_.size();
  centroids_.resize(n);
  normals_.resize(n);
  areas_.resize(n);
  double max_edge = 0.0;
#pragma omp parallel for schedule(static) reduction(max : max_edge) if (n > 4096)
  for (std::size_t t = 0; t < n; ++t) {
    const Vec3 &a = corner(t, 0), &b = corner(t, 1), &c = corner(t, 2);
    const Vec3 twice_area_normal = cross(b - a, c - a);
    const double twice_area = norm(twice_area_normal);
    centroids_[t] = (a + b + c) * (1.0 / 3.0);
    normals_[t] = twice_area_normal * (1.0 / twice_area);
    areas_[t] = 0.5 * twice_area;
    max_edge = std::max({max_edge, norm(b - a), norm(c - b), norm(a - c)});
  }
  max_edge_ = max_edge;
  // Summed in element order: the same bits on any thread count.
  // About a point in every plane: a body open at them is closed by them.
  const Vec3 origin = planes_.origin();
  volume_ = 0.0;
  for (std::size_t t = 0; t < n; ++t)
    volume_ +=
        dot(corner(t, 0) - origin, cross(corner(t, 1) - origin, corner(t, 2) - origin)) / 6.0;
  if (vertices_.empty()) return;  // a part without elements (part_of sets the whole's box)
  const auto [lo, hi] = bounding_box(vertices_);
  box_min_ = lo;
  box_max_ = hi;
}

Surface make_octasphere(int level, double radius, std::array<bool, 3> keep_positive) {
  check_icosphere(level, radius, {});
  const int divisions = 1 << level;
  Surface surface;
  for (int octant = 0; octant < 8; ++octant) {
    const double sx = octant & 1 ? -1.0 : 1.0, sy = octant & 2 ? -1.0 : 1.0,
                 sz = octant & 4 ? -1.0 : 1.0;
    if ((keep_positive[0] && sx < 0) || (keep_positive[1] && sy < 0) ||
        (keep_positive[2] && sz < 0))
      continue;
    // The face's grid points (i, j) with i + j <= divisions: barycentric (i, j, rest) / divisions.
    const auto vertex = [&](int i, int j) {
      const double a = double(i) / divisions, b = double(j) / divisions, c = 1.0 - a - b;
      const Vec3 p{sx * a, sy * b, sz * std::max(c, 0.0)};
      return p * (radius / norm(p));
    };
    const auto index = [&](int i, int j) {
      // Row i holds divisions + 1 - i points.
      return std::int32_t(surface.vertices.size()) +
             std::int32_t(i * (divisions + 1) - i * (i - 1) / 2 + j);
    };
    std::vector<Vec3> face;
    for (int i = 0; i <= divisions; ++i)
      for (int j = 0; i + j <= divisions; ++j) face.push_back(vertex(i, j));
    const auto add = [&](std::int32_t a, std::int32_t b, std::int32_t c) {
      const std::size_t base = surface.vertices.size();
      const Vec3 &pa = face[std::size_t(a) - base], &pb = face[std::size_t(b) - base],
                 &pc = face[std::size_t(c) - base];
      if (dot(cross(pb - pa, pc - pa), pa + pb + pc) < 0.0) std::swap(b, c);
      surface.triangles.push_back({a, b, c});
    };
    for (int i = 0; i < divisions; ++i)
      for (int j = 0; i + j < divisions; ++j) {
        add(index(i, j), index(i + 1, j), index(i, j + 1));
        if (i + j + 1 < divisions) add(index(i + 1, j), index(i + 1, j + 1), index(i, j + 1));
      }
    surface.vertices.insert(surface.vertices.end(), face.begin(), face.end());
  }
  return surface;
}

std::size_t icosphere_triangles(int level) { return 20 * (std::size_t(1) << (2 * level)); }
std::size_t icosphere_vertices(int level) { return 10 * (std::size_t(1) << (2 * level)) + 2; }

Surface make_icosphere(int level, double radius, const Vec3& center) {
  check_icosphere(level, radius, center);
  const std::size_t triangles = icosphere_triangles(level);
  Surface surface;
  surface.vertices.resize(icosphere_vertices(level));
  surface.triangles.resize(triangles);
  for_each_icosphere_triangle(
      level, 0, triangles,
      [&](std::size_t t, const std::array<Vec3, 3>& p, const std::array<std::int64_t, 3>& ids) {
        for (std::size_t c = 0; c < 3; ++c) {
          surface.triangles[t][c] = std::int32_t(ids[c]);
          surface.vertices[std::size_t(ids[c])] = center + p[c] * radius;
        }
      });
  return surface;
}

MeshSlab icosphere_slab(int level, double radius, std::size_t first, std::size_t last,
                        const Vec3& center) {
  check_icosphere(level, radius, center);
  const std::size_t triangles = icosphere_triangles(level);
  if (first > last || last > triangles)
    throw Error("icosphere slab [" + std::to_string(first) + ", " + std::to_string(last) +
                ") is not a range of the " + std::to_string(triangles) + " triangles");
  MeshSlab slab;
  slab.first = first;
  slab.whole_elements = triangles;
  slab.whole_vertices = icosphere_vertices(level);
  slab.corners.resize(3 * (last - first));
  slab.vertices.resize(3 * (last - first));
  for_each_icosphere_triangle(
      level, first, last,
      [&](std::size_t t, const std::array<Vec3, 3>& p, const std::array<std::int64_t, 3>& ids) {
        for (std::size_t c = 0; c < 3; ++c) {
          slab.corners[3 * (t - first) + c] = center + p[c] * radius;
          slab.vertices[3 * (t - first) + c] = ids[c];
        }
      });
  return slab;
}

Surface make_box(int divisions, double side) {
  if (divisions < 1) throw Error("make_box: divisions must be at least 1");
  const int m = divisions;
  Surface surface;
  // Lattice points (i, j, k) in 0..m, one vertex each, created on first use.
  std::unordered_map<std::int64_t, std::int32_t> index;
  const auto vertex = [&](int i, int j, int k) {
    const std::int64_t key = (std::int64_t(i) * (m + 1) + j) * (m + 1) + k;
    const auto [at, added] = index.try_emplace(key, std::int32_t(surface.vertices.size()));
    if (added)
      surface.vertices.push_back(
          Vec3{i * side / m - side / 2, j * side / m - side / 2, k * side / m - side / 2});
    return at->second;
  };
  for (int axis = 0; axis < 3; ++axis)
    for (int level : {0, m}) {
      const Vec3 outward =
          Vec3{axis == 0 ? 1.0 : 0.0, axis == 1 ? 1.0 : 0.0, axis == 2 ? 1.0 : 0.0} *
          (level == 0 ? -1.0 : 1.0);
      const auto at = [&](int u, int v) {
        int c[3];
        c[axis] = level;
        c[(axis + 1) % 3] = u;
        c[(axis + 2) % 3] = v;
        return vertex(c[0], c[1], c[2]);
      };
      for (int u = 0; u < m; ++u)
        for (int v = 0; v < m; ++v) {
          const std::int32_t q[4] = {at(u, v), at(u + 1, v), at(u + 1, v + 1), at(u, v + 1)};
          for (const Triangle t : {Triangle{q[0], q[1], q[2]}, Triangle{q[0], q[2], q[3]}}) {
            const Vec3& a = surface.vertices[std::size_t(t[0])];
            const Vec3 normal = cross(surface.vertices[std::size_t(t[1])] - a,
                                      surface.vertices[std::size_t(t[2])] - a);
            surface.triangles.push_back(dot(normal, outward) > 0.0 ? t
                                                                   : Triangle{t[0], t[2], t[1]});
          }
        }
    }
  return surface;
}

}  // namespace fmbem
