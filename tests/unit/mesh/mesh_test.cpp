#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <numbers>
#include <random>

#include "fmbem/core/error.hpp"
#include "fmbem/mesh/mesh.hpp"

namespace fmbem {
namespace {

void expect_error_containing(const Surface& s, const std::string& needle) {
  try {
    Mesh::from_surface(s, "test");
    FAIL() << "expected an Error containing '" << needle << "'";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

TEST(Icosphere, CountsClosedAndOutward) {
  for (int level = 0; level <= 4; ++level) {
    const Mesh mesh = Mesh::from_surface(make_icosphere(level, 2.0), "ico");
    const std::size_t n = 20 * (std::size_t(1) << (2 * level));
    EXPECT_EQ(mesh.size(), n);
    EXPECT_EQ(mesh.vertices().size(), n / 2 + 2);  // Euler: V - E + F = 2, E = 3F/2
    EXPECT_EQ(mesh.flipped_triangles(), 0u);       // generated outward already
    for (const Vec3& v : mesh.vertices()) EXPECT_NEAR(norm(v), 2.0, 1e-14);
    for (std::size_t t = 0; t < n; ++t) EXPECT_GT(dot(mesh.normals()[t], mesh.centroids()[t]), 0);
    // The inscribed polyhedron's volume approaches the ball's from below.
    const double ball = 4.0 / 3.0 * std::numbers::pi * 8.0;
    EXPECT_LT(mesh.volume(), ball);
    if (level == 4) EXPECT_NEAR(mesh.volume() / ball, 1.0, 5e-3);
  }
}

TEST(Icosphere, RejectsBadParameters) {
  EXPECT_THROW(make_icosphere(-1, 1.0), Error);
  EXPECT_THROW(make_icosphere(11, 1.0), Error);
  EXPECT_THROW(make_icosphere(2, 0.0), Error);
  EXPECT_THROW(make_icosphere(2, -1.0), Error);
}

// The icosphere as refined level by level, vertices numbered as they are made (the generator
// before vertices were numbered by where they lie): the reference for coordinates and triangles.
Surface refined_icosphere(int level, double radius, const Vec3& center) {
  const double phi = (1.0 + std::sqrt(5.0)) / 2.0;
  std::vector<Vec3> v = {{-1, phi, 0}, {1, phi, 0}, {-1, -phi, 0}, {1, -phi, 0},
                         {0, -1, phi}, {0, 1, phi}, {0, -1, -phi}, {0, 1, -phi},
                         {phi, 0, -1}, {phi, 0, 1}, {-phi, 0, -1}, {-phi, 0, 1}};
  for (Vec3& p : v) p = normalized(p);
  std::vector<Triangle> t = {{0, 11, 5}, {0, 5, 1},  {0, 1, 7},   {0, 7, 10}, {0, 10, 11},
                             {1, 5, 9},  {5, 11, 4}, {11, 10, 2}, {10, 7, 6}, {7, 1, 8},
                             {3, 9, 4},  {3, 4, 2},  {3, 2, 6},   {3, 6, 8},  {3, 8, 9},
                             {4, 9, 5},  {2, 4, 11}, {6, 2, 10},  {8, 6, 7},  {9, 8, 1}};
  for (int l = 0; l < level; ++l) {
    std::map<std::pair<std::int32_t, std::int32_t>, std::int32_t> midpoint;
    const auto mid = [&](std::int32_t a, std::int32_t b) {
      const auto [at, added] =
          midpoint.try_emplace({std::min(a, b), std::max(a, b)}, std::int32_t(v.size()));
      if (added) v.push_back(normalized(v[std::size_t(a)] + v[std::size_t(b)]));
      return at->second;
    };
    std::vector<Triangle> refined;
    for (const auto& [a, b, c] : t) {
      const std::int32_t ab = mid(a, b), bc = mid(b, c), ca = mid(c, a);
      refined.insert(refined.end(), {{a, ab, ca}, {b, bc, ab}, {c, ca, bc}, {ab, bc, ca}});
    }
    t = std::move(refined);
  }
  for (Vec3& p : v) p = center + p * radius;
  return {std::move(v), std::move(t)};
}

bool same_bits(const Vec3& a, const Vec3& b) { return std::memcmp(&a, &b, sizeof(Vec3)) == 0; }

TEST(Icosphere, TheRefinedSpheresTrianglesNumberedByWhereTheyLie) {
  const Vec3 center{0.25, -1.5, 3.0};
  for (int level = 0; level <= 5; ++level) {
    const Surface made = make_icosphere(level, 1.7, center);
    const Surface reference = refined_icosphere(level, 1.7, center);
    ASSERT_EQ(made.triangles.size(), reference.triangles.size());
    ASSERT_EQ(made.vertices.size(), reference.vertices.size());
    // Each triangle's corners are the reference's, bit for bit, and one vertex index means one
    // reference vertex: the numbering is a one-to-one renaming.
    std::vector<std::int32_t> renamed(made.vertices.size(), -1);
    for (std::size_t t = 0; t < made.triangles.size(); ++t)
      for (std::size_t c = 0; c < 3; ++c) {
        const std::int32_t ours = made.triangles[t][c], theirs = reference.triangles[t][c];
        ASSERT_TRUE(
            same_bits(made.vertices[std::size_t(ours)], reference.vertices[std::size_t(theirs)]))
            << "level " << level << " triangle " << t << " corner " << c;
        if (renamed[std::size_t(ours)] < 0) renamed[std::size_t(ours)] = theirs;
        ASSERT_EQ(renamed[std::size_t(ours)], theirs) << "level " << level;
      }
    std::sort(renamed.begin(), renamed.end());
    for (std::size_t v = 0; v < renamed.size(); ++v) ASSERT_EQ(renamed[v], std::int32_t(v));
    // Validation keeps it as made: no flips, no merges, the same triangles.
    const Mesh mesh = Mesh::from_surface(made, "ico");
    EXPECT_EQ(mesh.flipped_triangles(), 0u);
    EXPECT_EQ(mesh.vertices().size(), made.vertices.size());
    EXPECT_EQ(mesh.triangles(), made.triangles);
  }
}

TEST(Icosphere, SlabsAreTheWholeSpheresTriangles) {
  const Vec3 center{-2.0, 0.5, 1.0};
  for (int level : {0, 1, 3, 4}) {
    const Surface whole = make_icosphere(level, 0.8, center);
    const std::size_t n = whole.triangles.size();
    for (std::size_t parts : {1u, 2u, 3u, 7u, 64u}) {
      for (std::size_t p = 0; p < parts; ++p) {
        const std::size_t first = n * p / parts, last = n * (p + 1) / parts;
        const MeshSlab slab = icosphere_slab(level, 0.8, first, last, center);
        EXPECT_EQ(slab.first, first);
        EXPECT_EQ(slab.whole_elements, n);
        EXPECT_EQ(slab.whole_vertices, whole.vertices.size());
        ASSERT_EQ(slab.size(), last - first);
        ASSERT_EQ(slab.vertices.size(), 3 * slab.size());
        for (std::size_t e = 0; e < slab.size(); ++e)
          for (std::size_t c = 0; c < 3; ++c) {
            const std::int32_t v = whole.triangles[first + e][c];
            EXPECT_EQ(slab.vertices[3 * e + c], v);
            EXPECT_TRUE(same_bits(slab.corners[3 * e + c], whole.vertices[std::size_t(v)]));
          }
      }
    }
  }
  EXPECT_THROW(icosphere_slab(2, 1.0, 5, 4), Error);
  EXPECT_THROW(icosphere_slab(2, 1.0, 0, 321), Error);
  EXPECT_THROW(icosphere_slab(11, 1.0, 0, 1), Error);
  EXPECT_THROW(icosphere_slab(2, -1.0, 0, 1), Error);
  EXPECT_EQ(icosphere_slab(2, 1.0, 320, 320).size(), 0u);
}

TEST(Mesh, GeometryOfTetrahedron) {
  // Right-angle tetrahedron, inward-ordered on purpose: orientation is fixed.
  Surface s{{{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}},
            {{0, 1, 2}, {0, 1, 3}, {0, 2, 3}, {1, 2, 3}}};
  const Mesh mesh = Mesh::from_surface(s, "tet");
  EXPECT_NEAR(mesh.volume(), 1.0 / 6.0, 1e-15);
  double area = 0;
  for (double a : mesh.areas()) area += a;
  EXPECT_NEAR(area, 1.5 + std::sqrt(3.0) / 2.0, 1e-14);
  const Vec3 centre{0.25, 0.25, 0.25};
  for (std::size_t t = 0; t < 4; ++t)
    EXPECT_GT(dot(mesh.normals()[t], mesh.centroids()[t] - centre), 0);
  EXPECT_NEAR(mesh.max_edge(), std::sqrt(2.0), 1e-15);
}

TEST(Mesh, FixesRandomFlipsAndGlobalInversion) {
  Surface s = make_icosphere(3, 1.0);
  std::mt19937 rng(7);
  std::size_t flips = 0;
  for (Triangle& t : s.triangles)
    if (rng() % 3 == 0) {
      std::swap(t[0], t[1]);
      ++flips;
    }
  const Mesh mesh = Mesh::from_surface(s, "ico");
  EXPECT_EQ(mesh.flipped_triangles(), flips);
  for (std::size_t t = 0; t < mesh.size(); ++t)
    EXPECT_GT(dot(mesh.normals()[t], mesh.centroids()[t]), 0);

  Surface inverted = make_icosphere(2, 1.0);
  for (Triangle& t : inverted.triangles) std::swap(t[1], t[2]);
  const Mesh fixed = Mesh::from_surface(inverted, "ico");
  EXPECT_EQ(fixed.flipped_triangles(), fixed.size());
  EXPECT_GT(fixed.volume(), 0);
}

TEST(Mesh, TwoBodiesAreEachOrientedOutward) {
  Surface a = make_icosphere(1, 1.0), b = make_icosphere(1, 0.5, {3, 0, 0});
  for (Triangle& t : b.triangles) {
    std::swap(t[1], t[2]);
    for (auto& v : t) v += std::int32_t(a.vertices.size());
  }
  a.vertices.insert(a.vertices.end(), b.vertices.begin(), b.vertices.end());
  a.triangles.insert(a.triangles.end(), b.triangles.begin(), b.triangles.end());
  const Mesh mesh = Mesh::from_surface(a, "two");
  EXPECT_EQ(mesh.flipped_triangles(), 80u);
  const Vec3 centre_b{3, 0, 0};
  for (std::size_t t = 0; t < mesh.size(); ++t) {
    const Vec3 c = mesh.centroids()[t];
    const Vec3 centre = c.x > 2 ? centre_b : Vec3{};
    EXPECT_GT(dot(mesh.normals()[t], c - centre), 0);
  }
}

TEST(Mesh, MergesRepeatedVerticesOfSeparateEntities) {
  // Each triangle with its own copy of its corners, as a file with one
  // surface entity per triangle may give.
  const Surface shared = make_icosphere(1, 1.0);
  Surface split;
  for (const Triangle& t : shared.triangles) {
    const auto base = std::int32_t(split.vertices.size());
    for (auto v : t) split.vertices.push_back(shared.vertices[v]);
    split.triangles.push_back({base, base + 1, base + 2});
  }
  const Mesh mesh = Mesh::from_surface(split, "split");
  EXPECT_EQ(mesh.vertices().size(), shared.vertices.size());
}

TEST(Mesh, RejectsBadSurfaces) {
  expect_error_containing(Surface{}, "no triangles");

  Surface open = make_icosphere(1, 1.0);
  open.triangles.pop_back();
  expect_error_containing(open, "open");

  Surface duplicate = make_icosphere(1, 1.0);
  duplicate.triangles.push_back(
      {duplicate.triangles[0][1], duplicate.triangles[0][2], duplicate.triangles[0][0]});
  expect_error_containing(duplicate, "duplicates");

  Surface repeated = make_icosphere(1, 1.0);
  repeated.triangles[3][1] = repeated.triangles[3][0];
  expect_error_containing(repeated, "degenerate");

  Surface flat = make_icosphere(1, 1.0);
  const auto [a, b, c] = flat.triangles[5];
  flat.vertices[c] = flat.vertices[a] * 0.5 + flat.vertices[b] * 0.5;  // collinear corners
  expect_error_containing(flat, "degenerate");

  Surface fin = make_icosphere(1, 1.0);
  fin.vertices.push_back({5, 5, 5});
  fin.triangles.push_back(
      {fin.triangles[0][0], fin.triangles[0][1], std::int32_t(fin.vertices.size() - 1)});
  expect_error_containing(fin, "non-manifold");

  Surface missing = make_icosphere(0, 1.0);
  missing.triangles[0][0] = 99;
  expect_error_containing(missing, "missing vertex");

  Surface nan = make_icosphere(0, 1.0);
  nan.vertices[0].x = std::nan("");
  expect_error_containing(nan, "non-finite");
}

Surface scaled(Surface s, double factor, const Vec3& offset = {}) {
  for (Vec3& p : s.vertices) p = p * factor + offset;
  return s;
}

// Validation is relative to the mesh size: the same sphere at any usable scale.
TEST(Mesh, ValidAtEveryUsableScale) {
  const Mesh unit = Mesh::from_surface(make_icosphere(2, 1.0), "unit");
  for (double factor : {1e-25, 1e-10, 1e10, 1e25}) {
    const Mesh mesh = Mesh::from_surface(scaled(make_icosphere(2, 1.0), factor), "scaled");
    EXPECT_EQ(mesh.size(), unit.size());
    EXPECT_EQ(mesh.vertices().size(), unit.vertices().size()) << factor;
    EXPECT_EQ(mesh.flipped_triangles(), 0u);
    EXPECT_NEAR(mesh.volume() / (factor * factor * factor), unit.volume(), 1e-12);
  }
  // A vertex that no triangle uses does not count, wherever it is.
  Surface stray = make_icosphere(1, 1.0);
  stray.vertices.push_back({1e200, 0, 0});
  EXPECT_EQ(Mesh::from_surface(stray, "stray").vertices().size(), 42u);
}

// Coordinates the solver cannot compute with are named as such, not reported as
// degenerate triangles.
TEST(Mesh, CoordinatesOutOfRangeAreNamed) {
  expect_error_containing(scaled(make_icosphere(1, 1.0), 1e200),
                          "its coordinates reach 1e+200, too large to compute with");
  expect_error_containing(scaled(make_icosphere(1, 1.0), 1e-200),
                          "it measures only 3.46e-200 across, too small to compute with");
  expect_error_containing(scaled(make_icosphere(1, 1.0), 1e-310),  // subnormal coordinates
                          "too small to compute with (products of its coordinates underflow");
  expect_error_containing(scaled(make_icosphere(1, 1.0), 1e40), "its coordinates reach 1e+40");
  expect_error_containing(scaled(make_icosphere(1, 1.0), 1e-40),
                          "it measures only 3.46e-40 across");
  expect_error_containing(scaled(make_icosphere(1, 1.0), 1.0, {1e20, 0, 0}),
                          "it measures 2.83 across but lies 1e+20 from the origin");
  Surface point = make_icosphere(0, 1.0);
  for (Vec3& p : point.vertices) p = {3, 3, 3};
  expect_error_containing(point, "it measures only 0 across");
}

TEST(Mesh, DegenerateTrianglesSayWhy) {
  Surface repeated = make_icosphere(1, 1.0);
  repeated.triangles[3][1] = repeated.triangles[3][0];
  expect_error_containing(repeated, "triangle 3 is degenerate (repeated vertex)");

  // Two corners 1e-14 apart on a unit sphere: one vertex for the mesh.
  Surface close = make_icosphere(1, 1.0);
  const auto [a, b, c] = close.triangles[5];
  close.vertices[b] = close.vertices[a] + Vec3{1e-14, 0, 0};
  expect_error_containing(close,
                          "two of its corners coincide (closer than 1e-12 of the mesh size)");

  Surface flat = make_icosphere(1, 1.0);
  const auto [d, e, f] = flat.triangles[5];
  flat.vertices[f] = flat.vertices[d] * 0.5 + flat.vertices[e] * 0.5;
  expect_error_containing(flat, "triangle 5 is degenerate (zero area: its corners are collinear)");
}

// A closed but non-orientable surface: a Klein bottle (figure-8 immersion),
// the grid's seam identified with a reflection (v offset by half a step so
// that no two grid vertices fall on the immersion's self-intersection).
TEST(Mesh, RejectsNonOrientableSurface) {
  const int nu = 8, nv = 6;
  Surface klein;
  for (int i = 0; i < nu; ++i)
    for (int j = 0; j < nv; ++j) {
      const double u = 2 * std::numbers::pi * i / nu, v = 2 * std::numbers::pi * (j + 0.5) / nv;
      const double r = 3 + std::cos(u / 2) * std::sin(v) - std::sin(u / 2) * std::sin(2 * v);
      klein.vertices.push_back({r * std::cos(u), r * std::sin(u),
                                std::sin(u / 2) * std::sin(v) + std::cos(u / 2) * std::sin(2 * v)});
    }
  auto id = [&](int i, int j) {
    if (i == nu) return std::int32_t(nv - 1 - (j % nv));  // seam: v -> -v
    return std::int32_t(i * nv + (j % nv));
  };
  for (int i = 0; i < nu; ++i)
    for (int j = 0; j < nv; ++j) {
      klein.triangles.push_back({id(i, j), id(i + 1, j), id(i + 1, j + 1)});
      klein.triangles.push_back({id(i, j), id(i + 1, j + 1), id(i, j + 1)});
    }
  expect_error_containing(klein, "not orientable");
}

}  // namespace
}  // namespace fmbem
