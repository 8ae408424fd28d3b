#include "fmbem/mesh/intersections.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numbers>
#include <span>

namespace fmbem {
namespace {

// Below this many triangles the loops run on one thread.
constexpr std::size_t kThreadedTriangles = 16384;
// The grid's cell is this many mean triangle extents (measured: fewer cells cost more pair
// tests, more cells more entries), with at most kCellsPerTriangle cells a triangle.
constexpr double kCellExtents = 1.5;
constexpr double kCellsPerTriangle = 2.0;

struct Box {
  Vec3 lo, hi;
};

double extent(const Box& b) {
  return std::max({b.hi.x - b.lo.x, b.hi.y - b.lo.y, b.hi.z - b.lo.z});
}

bool overlap(const Box& a, const Box& b) {
  return a.lo.x <= b.hi.x && b.lo.x <= a.hi.x && a.lo.y <= b.hi.y && b.lo.y <= a.hi.y &&
         a.lo.z <= b.hi.z && b.lo.z <= a.hi.z;
}

// A triangle as the pair tests read it: corners, vertex indices, unit normal, size (its box's
// longest side) and box widened by kTouchingFraction of its size (so touching pairs are
// candidates).
struct Item {
  std::array<Vec3, 3> p;
  Triangle ids;
  Vec3 normal;
  double size;
  Box box;
};

// A triangle as the grid's pair loop reads it: its box, vertices and the cell of its box's
// lowest corner.
struct Candidate {
  Box box;
  Triangle ids;
  std::array<std::int64_t, 3> low_cell;
};

Item make_item(const std::array<Vec3, 3>& p, const Triangle& ids) {
  Item item{p, ids, normalized(cross(p[1] - p[0], p[2] - p[0])), 0.0, {p[0], p[0]}};
  for (const Vec3& q : p) {
    item.box.lo = {std::min(item.box.lo.x, q.x), std::min(item.box.lo.y, q.y),
                   std::min(item.box.lo.z, q.z)};
    item.box.hi = {std::max(item.box.hi.x, q.x), std::max(item.box.hi.y, q.y),
                   std::max(item.box.hi.z, q.z)};
  }
  item.size = extent(item.box);
  const double g = kTouchingFraction * item.size;
  item.box.lo -= Vec3{g, g, g};
  item.box.hi += Vec3{g, g, g};
  return item;
}

// The box of triangle p, widened as make_item's.
Box widened_box(const std::array<Vec3, 3>& p) {
  Box box{p[0], p[0]};
  for (const Vec3& q : p) {
    box.lo = {std::min(box.lo.x, q.x), std::min(box.lo.y, q.y), std::min(box.lo.z, q.z)};
    box.hi = {std::max(box.hi.x, q.x), std::max(box.hi.y, q.y), std::max(box.hi.z, q.z)};
  }
  const double g = kTouchingFraction * extent(box);
  box.lo -= Vec3{g, g, g};
  box.hi += Vec3{g, g, g};
  return box;
}

// Whether b's corners lie all strictly on one side of a's plane (farther than gap).
bool beside_plane(const Item& a, const Item& b, double gap) {
  int above = 0, below = 0;
  for (const Vec3& q : b.p) {
    const double d = dot(a.normal, q - a.p[0]);
    above += d > gap;
    below += d < -gap;
  }
  return above == 3 || below == 3;
}

// Closed triangles a, b within gap of each other: no separating axis among the two normals, the
// nine edge-edge crosses and the six in-plane edge normals (complete for two triangles, coplanar
// ones included). Any axis is sound, so ill-conditioned crosses need no cut-off.
bool closed_triangles_meet(const Item& a, const Item& b, double gap) {
  const Vec3 o = a.p[0];  // relative coordinates: offsets from the origin cost no accuracy
  const std::array<Vec3, 3> A{Vec3{}, a.p[1] - o, a.p[2] - o},
      B{b.p[0] - o, b.p[1] - o, b.p[2] - o};
  const std::array<Vec3, 3> ea{A[1] - A[0], A[2] - A[1], A[0] - A[2]},
      eb{B[1] - B[0], B[2] - B[1], B[0] - B[2]};
  const auto separates = [&](const Vec3& u) {
    const double length = norm(u);
    if (length == 0.0) return false;
    double a_lo = dot(u, A[0]), a_hi = a_lo, b_lo = dot(u, B[0]), b_hi = b_lo;
    for (int k = 1; k < 3; ++k) {
      const double da = dot(u, A[k]), db = dot(u, B[k]);
      a_lo = std::min(a_lo, da);
      a_hi = std::max(a_hi, da);
      b_lo = std::min(b_lo, db);
      b_hi = std::max(b_hi, db);
    }
    const double margin = gap * length;
    return a_hi + margin < b_lo || b_hi + margin < a_lo;
  };
  if (separates(a.normal) || separates(b.normal)) return false;
  for (const Vec3& e : ea)
    for (const Vec3& f : eb)
      if (separates(cross(e, f))) return false;
  for (const Vec3& e : ea)
    if (separates(cross(a.normal, e))) return false;
  for (const Vec3& f : eb)
    if (separates(cross(b.normal, f))) return false;
  return true;
}

// Whether direction w from a corner lies strictly inside the corner's angle between edges e1 and
// e2 (n: the unit normal, e1 x e2 along it), by more than kTouchingFraction radians.
bool inside_angle(const Vec3& w, const Vec3& e1, const Vec3& e2, const Vec3& n) {
  const double w_length = norm(w);
  return dot(cross(e1, w), n) > kTouchingFraction * norm(e1) * w_length &&
         dot(cross(w, e2), n) > kTouchingFraction * w_length * norm(e2);
}

// Whether the two corners of b other than corner j lie strictly on one side of a's plane: then
// b meets that plane at b's corner j only.
bool beside_corner(const Item& a, const Item& b, int j, double gap) {
  const Vec3& v = b.p[j];
  const double d1 = dot(a.normal, b.p[(j + 1) % 3] - v), d2 = dot(a.normal, b.p[(j + 2) % 3] - v);
  return (d1 > gap && d2 > gap) || (d1 < -gap && d2 < -gap);
}

// Triangle b overlaps triangle a beyond their shared corner v (a's corner i, b's corner j): b's
// trace on a's plane is a segment from v (the intersection of two convex sets holding v is
// convex), so they overlap when it leaves v into a's angle; coplanar, when the angles overlap.
bool folded_at_vertex(const Item& a, int i, const Item& b, int j, double gap) {
  const Vec3 v = a.p[i];
  const Vec3 e1 = a.p[(i + 1) % 3] - v, e2 = a.p[(i + 2) % 3] - v;
  const Vec3 f1 = b.p[(j + 1) % 3] - v, f2 = b.p[(j + 2) % 3] - v;
  const double d1 = dot(a.normal, f1), d2 = dot(a.normal, f2);
  const int s1 = (d1 > gap) - (d1 < -gap), s2 = (d2 > gap) - (d2 < -gap);
  if (s1 * s2 > 0) return false;
  if (s1 == 0 && s2 == 0) {
    const Vec3 bisector = normalized(f1) + normalized(f2);
    return inside_angle(f1, e1, e2, a.normal) || inside_angle(f2, e1, e2, a.normal) ||
           inside_angle(e1, f1, f2, b.normal) || inside_angle(e2, f1, f2, b.normal) ||
           inside_angle(bisector, e1, e2, a.normal);
  }
  const Vec3 w = s1 == 0 ? f1 : s2 == 0 ? f2 : f1 + (f2 - f1) * (d1 / (d1 - d2));
  return inside_angle(w, e1, e2, a.normal);
}

// Triangles on a shared edge (p, q) folded onto each other: b's far corner d in a's plane, on the
// side of the edge where a's far corner lies.
bool folded_at_edge(const Item& a, const Vec3& p, const Vec3& q, const Vec3& d, double gap) {
  if (std::abs(dot(a.normal, d - p)) > gap) return false;
  const Vec3 e = q - p;
  // a's far corner is on the side where cross(e, x - p) runs along a's normal or against it.
  const Vec3 c = a.p[0] + a.p[1] + a.p[2] - p - q;
  const double side = dot(cross(e, c - p), a.normal) > 0.0 ? 1.0 : -1.0;
  return side * dot(cross(e, d - p), a.normal) > kTouchingFraction * norm(e) * norm(d - p);
}

// triangles_meet on prepared items; `near` gets a point near where they meet.
bool items_meet(const Item& a, const Item& b, Vec3& near) {
  const double gap = kTouchingFraction * std::max(a.size, b.size);
  int shared = 0, ai[3] = {}, bj[3] = {};
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j)
      if (a.ids[i] == b.ids[j]) {
        ai[shared] = i;
        bj[shared] = j;
        ++shared;
      }
  if (shared == 0) {
    if (beside_plane(a, b, gap) || beside_plane(b, a, gap) || !closed_triangles_meet(a, b, gap))
      return false;
    near = (a.p[0] + a.p[1] + a.p[2] + b.p[0] + b.p[1] + b.p[2]) * (1.0 / 6.0);
    return true;
  }
  if (shared == 1) {
    // Either plane leaving the other's free corners strictly on one side settles it (most pairs).
    if (beside_corner(a, b, bj[0], gap) || beside_corner(b, a, ai[0], gap) ||
        (!folded_at_vertex(a, ai[0], b, bj[0], gap) && !folded_at_vertex(b, bj[0], a, ai[0], gap)))
      return false;
    near = a.p[ai[0]];
    return true;
  }
  if (shared == 2) {
    const Vec3 &p = a.p[ai[0]], &q = a.p[ai[1]];
    const Vec3 c = a.p[3 - ai[0] - ai[1]], d = b.p[3 - bj[0] - bj[1]];
    // Folded flat needs each far corner in the other's plane.
    if (std::abs(dot(a.normal, d - p)) > gap || std::abs(dot(b.normal, c - p)) > gap ||
        (!folded_at_edge(a, p, q, d, gap) && !folded_at_edge(b, p, q, c, gap)))
      return false;
    near = (p + q) * 0.5;
    return true;
  }
  near = a.p[0];
  return true;  // the same three vertices
}

// Whether no two triangles at vertex v overlap beyond v (a certificate that spares their pair
// tests): seen along the fan's mean normal, its triangles, walked once round v edge to edge,
// each turn strictly counter-clockwise by less than pi and in all one turn. Projected wedges
// that tile the circle once meet only on their shared rays, so the triangles meet only at v
// and on their shared edges. False (test the pairs) for anything else: a saddle folded over
// itself, a fold, a vertex of two fans.
bool fan_is_flat_once(const std::vector<Vec3>& vertices, const std::vector<Triangle>& triangles,
                      std::span<const std::int32_t> fan, std::int32_t v) {
  constexpr std::size_t kMostCorners = 64;
  const std::size_t k = fan.size();
  if (k < 3 || k > kMostCorners) return false;
  const Vec3& x = vertices[std::size_t(v)];
  // Per triangle its corners after v (a, b): the walk goes a -> b, the next triangle's a is b.
  std::array<std::int32_t, kMostCorners> a, b;
  Vec3 normal{};
  for (std::size_t i = 0; i < k; ++i) {
    const Triangle& t = triangles[std::size_t(fan[i])];
    const int c = t[0] == v ? 0 : t[1] == v ? 1 : 2;
    a[i] = t[(c + 1) % 3];
    b[i] = t[(c + 2) % 3];
    normal += cross(vertices[std::size_t(a[i])] - x, vertices[std::size_t(b[i])] - x);
  }
  std::array<Vec3, kMostCorners> ray;  // the walk's edge directions from v
  std::size_t at = 0;
  for (std::size_t step = 0; step < k; ++step) {
    ray[step] = vertices[std::size_t(a[at])] - x;
    std::size_t next = k;
    for (std::size_t j = 0; j < k; ++j)
      if (a[j] == b[at]) next = j;
    if (next == k || (next == 0) != (step + 1 == k)) return false;  // not one cycle through all
    at = next;
  }
  const double n_length = norm(normal);
  if (!(n_length > 0.0)) return false;
  // Angles in the plane by a pseudo-angle in [0, 4) about the first ray (monotone in the angle;
  // the frame's scale does not change the order).
  const Vec3 u = ray[0] - normal * (dot(normal, ray[0]) / (n_length * n_length)),
             w = cross(normal, u);
  double previous = 0.0;
  for (std::size_t i = 0; i < k; ++i) {
    const Vec3 &e1 = ray[i], &e2 = ray[(i + 1) % k];
    if (!(dot(normal, cross(e1, e2)) > kTouchingFraction * n_length * norm(e1) * norm(e2)))
      return false;
    if (i + 1 == k) break;
    const double px = dot(u, e2), py = dot(w, e2) / n_length, sum = std::abs(px) + std::abs(py);
    const double angle = py >= 0.0 ? 1.0 - px / sum : 3.0 + px / sum;
    if (!(angle > previous)) return false;
    previous = angle;
  }
  return true;
}

// A uniform grid over a box: cell size h, dims cells an axis.
struct Grid {
  Vec3 origin;
  double h = 1.0;
  std::array<std::int64_t, 3> dims{1, 1, 1};
  std::int64_t cells() const { return dims[0] * dims[1] * dims[2]; }
  std::int64_t coordinate(double x, double o, int axis) const {
    const double at = (x - o) / h;
    return at <= 0.0 ? 0 : std::min(std::int64_t(at), dims[std::size_t(axis)] - 1);
  }
  std::array<std::int64_t, 3> cell(const Vec3& x) const {
    return {coordinate(x.x, origin.x, 0), coordinate(x.y, origin.y, 1),
            coordinate(x.z, origin.z, 2)};
  }
  std::int64_t index(const std::array<std::int64_t, 3>& c) const {
    return c[0] + dims[0] * (c[1] + dims[1] * c[2]);
  }
};

}  // namespace

bool triangles_meet(const std::array<Vec3, 3>& p, const Triangle& ip, const std::array<Vec3, 3>& q,
                    const Triangle& iq) {
  Vec3 near;
  return items_meet(make_item(p, ip), make_item(q, iq), near);
}

std::optional<TrianglePair> first_self_intersection(const std::vector<Vec3>& vertices,
                                                    const std::vector<Triangle>& triangles) {
  const std::size_t n = triangles.size();
  if (n < 2) return std::nullopt;
  const auto corners = [&](std::size_t t) {
    const Triangle& ids = triangles[t];
    return std::array<Vec3, 3>{vertices[std::size_t(ids[0])], vertices[std::size_t(ids[1])],
                               vertices[std::size_t(ids[2])]};
  };
  const auto item = [&](std::size_t t) { return make_item(corners(t), triangles[t]); };
  const bool threaded = n > kThreadedTriangles;

  // The grid: cells of kCellExtents mean triangle extents over the triangles' box, at most
  // kCellsPerTriangle n of them.
  constexpr double inf = std::numeric_limits<double>::infinity();
  double lx = inf, ly = inf, lz = inf, hx = -inf, hy = -inf, hz = -inf, extents = 0.0;
#pragma omp parallel for schedule(static) if (threaded) reduction(min : lx, ly, lz) \
    reduction(max : hx, hy, hz) reduction(+ : extents)
  for (std::size_t t = 0; t < n; ++t) {
    const Box box = widened_box(corners(t));
    lx = std::min(lx, box.lo.x);
    ly = std::min(ly, box.lo.y);
    lz = std::min(lz, box.lo.z);
    hx = std::max(hx, box.hi.x);
    hy = std::max(hy, box.hi.y);
    hz = std::max(hz, box.hi.z);
    extents += extent(box);
  }
  Grid grid;
  grid.origin = {lx, ly, lz};
  const std::array<double, 3> side{hx - lx, hy - ly, hz - lz};
  const double widest = std::max({side[0], side[1], side[2]});
  grid.h = std::max(kCellExtents * extents / double(n), widest * 1e-6);
  const double most = std::max(1.0, kCellsPerTriangle * double(n));
  for (;;) {
    double cells = 1.0;
    for (int a = 0; a < 3; ++a) {
      grid.dims[std::size_t(a)] =
          std::max<std::int64_t>(1, std::int64_t(std::ceil(side[std::size_t(a)] / grid.h)));
      cells *= double(grid.dims[std::size_t(a)]);
    }
    if (cells <= most) break;
    grid.h *= std::max(1.01, std::cbrt(cells / most));
  }

  // f(cell) for every cell triangle t's widened box overlaps; returns how many.
  const auto for_each_cell_of = [&](std::size_t t, auto&& f) {
    const Box box = widened_box(corners(t));
    const auto lo = grid.cell(box.lo), hi = grid.cell(box.hi);
    for (std::int64_t z = lo[2]; z <= hi[2]; ++z)
      for (std::int64_t y = lo[1]; y <= hi[1]; ++y)
        for (std::int64_t x = lo[0]; x <= hi[0]; ++x) f(std::size_t(grid.index({x, y, z})));
    return std::uint64_t((hi[0] - lo[0] + 1) * (hi[1] - lo[1] + 1) * (hi[2] - lo[2] + 1));
  };
  // Each triangle in every cell its box overlaps (counting sort, CSR).
  std::vector<std::uint32_t> start;
  std::vector<std::int32_t> entries;
  for (;;) {
    start.assign(std::size_t(grid.cells()) + 1, 0);
    std::uint64_t total = 0;
#pragma omp parallel for schedule(static) if (threaded) reduction(+ : total)
    for (std::size_t t = 0; t < n; ++t)
      total += for_each_cell_of(t, [&](std::size_t c) {
#pragma omp atomic
        ++start[c + 1];
      });
    if (total < std::numeric_limits<std::uint32_t>::max()) break;
    grid.h *= 2.0;  // a few huge triangles over a fine grid: coarser cells (never in practice)
    for (int a = 0; a < 3; ++a)
      grid.dims[std::size_t(a)] =
          std::max<std::int64_t>(1, std::int64_t(std::ceil(side[std::size_t(a)] / grid.h)));
  }
  const auto used_cells = std::size_t(grid.cells());
  for (std::size_t c = 0; c < used_cells; ++c) start[c + 1] += start[c];
  entries.resize(start[used_cells]);
  // Filled by advancing each cell's start to its end, then shifted back.
#pragma omp parallel for schedule(static) if (threaded)
  for (std::size_t t = 0; t < n; ++t)
    for_each_cell_of(t, [&](std::size_t c) {
      std::uint32_t at;
#pragma omp atomic capture
      at = start[c]++;
      entries[at] = std::int32_t(t);
    });
  for (std::size_t c = used_cells; c > 0; --c) start[c] = start[c - 1];
  start[0] = 0;

  // Pairs sharing a vertex: at each vertex whose fan is not certified flat once, every pair of
  // its triangles (few: a surface's vertices are certified but where it folds or is very rough).
  std::vector<std::int64_t> star_start(vertices.size() + 1, 0);
  for (const Triangle& t : triangles)
    for (std::int32_t v : t) ++star_start[std::size_t(v) + 1];
  for (std::size_t v = 0; v < vertices.size(); ++v) star_start[v + 1] += star_start[v];
  std::vector<std::int32_t> star(std::size_t(star_start.back()));
  {
    std::vector<std::int64_t> fill(star_start.begin(), star_start.end() - 1);
    for (std::size_t t = 0; t < n; ++t)
      for (std::int32_t v : triangles[t])
        star[std::size_t(fill[std::size_t(v)]++)] = std::int32_t(t);
  }
  constexpr std::size_t none = std::numeric_limits<std::size_t>::max();
  TrianglePair best{none, none, {}};
  const auto keep = [](TrianglePair& into, const TrianglePair& found) {
    if (found.first < into.first || (found.first == into.first && found.second < into.second))
      into = found;
  };
#pragma omp parallel if (threaded)
  {
    TrianglePair mine{none, none, {}};
#pragma omp for schedule(dynamic, 1024) nowait
    for (std::size_t v = 0; v < vertices.size(); ++v) {
      const std::span<const std::int32_t> fan(star.data() + star_start[v],
                                              std::size_t(star_start[v + 1] - star_start[v]));
      if (fan.empty() || fan_is_flat_once(vertices, triangles, fan, std::int32_t(v))) continue;
      for (std::size_t i = 0; i < fan.size(); ++i)
        for (std::size_t j = i + 1; j < fan.size(); ++j) {
          const auto ta = std::size_t(std::min(fan[i], fan[j])),
                     tb = std::size_t(std::max(fan[i], fan[j]));
          Vec3 near;
          if (items_meet(item(ta), item(tb), near)) keep(mine, {ta, tb, near});
        }
    }
#pragma omp critical(fmbem_self_intersection)
    keep(best, mine);
  }

  // Pairs sharing no vertex within each cell, each tested in the one cell holding its boxes'
  // common lowest corner; the lowest pair found by any thread (the same on any thread count).
#pragma omp parallel if (threaded)
  {
    std::vector<Candidate> items;
    TrianglePair mine{none, none, {}};
#pragma omp for schedule(dynamic, 256) nowait
    for (std::size_t c = 0; c < used_cells; ++c) {
      const std::uint32_t begin = start[c], end = start[c + 1];
      if (end - begin < 2) continue;
      const auto here = std::int64_t(c);
      const std::array<std::int64_t, 3> at{here % grid.dims[0], here / grid.dims[0] % grid.dims[1],
                                           here / (grid.dims[0] * grid.dims[1])};
      items.clear();
      for (std::uint32_t k = begin; k < end; ++k) {
        const auto t = std::size_t(entries[k]);
        const Box box = widened_box(corners(t));
        items.push_back({box, triangles[t], grid.cell(box.lo)});
      }
      for (std::size_t i = 0; i < items.size(); ++i)
        for (std::size_t j = i + 1; j < items.size(); ++j) {
          const Candidate &a = items[i], &b = items[j];
          // The cell of the boxes' common lowest corner (the grid's cells are monotone in x).
          if (std::max(a.low_cell[0], b.low_cell[0]) != at[0] ||
              std::max(a.low_cell[1], b.low_cell[1]) != at[1] ||
              std::max(a.low_cell[2], b.low_cell[2]) != at[2] || !overlap(a.box, b.box))
            continue;
          bool shared = false;
          for (std::int32_t p : a.ids) shared |= p == b.ids[0] || p == b.ids[1] || p == b.ids[2];
          if (shared) continue;  // the fans' part
          const auto ta = std::size_t(entries[begin + i]), tb = std::size_t(entries[begin + j]);
          const std::size_t first = std::min(ta, tb), second = std::max(ta, tb);
          if (first > mine.first || (first == mine.first && second >= mine.second)) continue;
          Vec3 near;
          if (items_meet(item(first), item(second), near)) mine = {first, second, near};
        }
    }
#pragma omp critical(fmbem_self_intersection)
    keep(best, mine);
  }
  if (best.first == none) return std::nullopt;
  return best;
}

double winding_number(const std::vector<Vec3>& vertices, const std::vector<Triangle>& triangles,
                      const std::vector<std::size_t>& members, const Vec3& x) {
  double sum = 0.0;
  const std::size_t m = members.size();
#pragma omp parallel for schedule(static) reduction(+ : sum) if (m > kThreadedTriangles)
  for (std::size_t k = 0; k < m; ++k) {
    const Triangle& t = triangles[members[k]];
    const Vec3 a = vertices[std::size_t(t[0])] - x, b = vertices[std::size_t(t[1])] - x,
               c = vertices[std::size_t(t[2])] - x;
    const double la = norm(a), lb = norm(b), lc = norm(c);
    // Van Oosterom and Strackee's solid angle of a triangle seen from x.
    sum += 2.0 * std::atan2(dot(a, cross(b, c)),
                            la * lb * lc + dot(a, b) * lc + dot(a, c) * lb + dot(b, c) * la);
  }
  return sum / (4.0 * std::numbers::pi);
}

std::optional<NestedParts> first_nested_part(const std::vector<Vec3>& vertices,
                                             const std::vector<Triangle>& triangles,
                                             const std::vector<int>& component, int parts) {
  if (parts < 2) return std::nullopt;
  const auto count = std::size_t(parts);
  constexpr double inf = std::numeric_limits<double>::infinity();
  std::vector<std::size_t> first(count, triangles.size());
  std::vector<Box> boxes(count, Box{{inf, inf, inf}, {-inf, -inf, -inf}});
  std::vector<std::vector<std::size_t>> members(count);
  for (std::size_t t = 0; t < triangles.size(); ++t) {
    const auto c = std::size_t(component[t]);
    first[c] = std::min(first[c], t);
    members[c].push_back(t);
    Box& b = boxes[c];
    for (std::int32_t v : triangles[t]) {
      const Vec3& p = vertices[std::size_t(v)];
      b.lo = {std::min(b.lo.x, p.x), std::min(b.lo.y, p.y), std::min(b.lo.z, p.z)};
      b.hi = {std::max(b.hi.x, p.x), std::max(b.hi.y, p.y), std::max(b.hi.z, p.z)};
    }
  }
  // A part inside another lies inside its box: candidates by a sweep along x (an active list of
  // the boxes reaching the current one), so many parts side by side cost about their number.
  std::vector<std::size_t> order(count);
  for (std::size_t c = 0; c < count; ++c) order[c] = c;
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    if (boxes[a].lo.x != boxes[b].lo.x) return boxes[a].lo.x < boxes[b].lo.x;
    if (boxes[a].hi.x != boxes[b].hi.x) return boxes[a].hi.x > boxes[b].hi.x;
    return a < b;
  });
  std::vector<std::pair<std::size_t, std::size_t>> candidates;  // (inner, outer)
  std::vector<std::size_t> active;
  for (std::size_t b : order) {
    const Box& inner = boxes[b];
    std::erase_if(active, [&](std::size_t a) { return boxes[a].hi.x < inner.lo.x; });
    for (std::size_t a : active) {
      const Box& outer = boxes[a];
      if (outer.lo.y <= inner.lo.y && outer.lo.z <= inner.lo.z && inner.hi.x <= outer.hi.x &&
          inner.hi.y <= outer.hi.y && inner.hi.z <= outer.hi.z)
        candidates.emplace_back(b, a);
    }
    active.push_back(b);
  }
  std::sort(candidates.begin(), candidates.end());
  for (const auto& [inner, outer] : candidates) {
    const Triangle& t = triangles[first[inner]];
    const Vec3 centroid =
        (vertices[std::size_t(t[0])] + vertices[std::size_t(t[1])] + vertices[std::size_t(t[2])]) *
        (1.0 / 3.0);
    if (winding_number(vertices, triangles, members[outer], centroid) > 0.5)
      return NestedParts{first[outer], first[inner]};
  }
  return std::nullopt;
}

}  // namespace fmbem
