#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <utility>

#include "fmbem/core/error.hpp"
#include "fmbem/mesh/intersections.hpp"
#include "fmbem/mesh/mesh.hpp"

namespace fmbem {
namespace {

// Where the verdicts must not change: moved far from the origin, scaled down and up.
struct Placement {
  double scale;
  Vec3 offset;
};
const Placement kPlacements[] = {{1.0, {}},           {1.0, {1e4, 0, 0}}, {1e-6, {}},
                                 {1e-6, {1e4, 0, 0}}, {1e6, {}},          {1e6, {1e4, -1e4, 3e3}}};

Surface placed(Surface s, const Placement& at) {
  for (Vec3& p : s.vertices) p = p * at.scale + at.offset;
  return s;
}

Surface joined(Surface a, const Surface& b) {
  const auto base = std::int32_t(a.vertices.size());
  a.vertices.insert(a.vertices.end(), b.vertices.begin(), b.vertices.end());
  for (Triangle t : b.triangles) {
    for (auto& v : t) v += base;
    a.triangles.push_back(t);
  }
  return a;
}

// The validation's message, or nothing for a valid mesh.
std::optional<std::string> refusal(const Surface& s) {
  try {
    Mesh::from_surface(s, "test");
    return std::nullopt;
  } catch (const Error& e) {
    return std::string(e.what());
  }
}

// The message up to "near (": the part that names the triangles (the point scales with the mesh).
std::string named_part(const std::string& message) {
  return message.substr(0, message.find(" near ("));
}

std::array<Vec3, 3> corners(const Surface& s, std::size_t t) {
  const Triangle& ids = s.triangles[t];
  return {s.vertices[std::size_t(ids[0])], s.vertices[std::size_t(ids[1])],
          s.vertices[std::size_t(ids[2])]};
}

// The first meeting pair by testing every pair (the reference for the grid's candidates).
std::optional<std::pair<std::size_t, std::size_t>> first_meeting_pair(const Surface& s) {
  for (std::size_t a = 0; a < s.triangles.size(); ++a)
    for (std::size_t b = a + 1; b < s.triangles.size(); ++b)
      if (triangles_meet(corners(s, a), s.triangles[a], corners(s, b), s.triangles[b]))
        return std::pair{a, b};
  return std::nullopt;
}

TEST(SelfIntersection, IcospheresAreValidAtEveryPlacement) {
  for (int level = 0; level <= 5; ++level)
    for (const Placement& at : kPlacements) {
      const auto message = refusal(placed(make_icosphere(level, 1.0), at));
      EXPECT_FALSE(message) << level << ": " << *message;
    }
  for (int level = 0; level <= 3; ++level)
    EXPECT_FALSE(first_meeting_pair(make_icosphere(level, 1.0)));
  for (const Placement& at : kPlacements) EXPECT_FALSE(refusal(placed(make_box(4, 2.0), at)));
}

TEST(SelfIntersection, NestedSpheresAreRefusedNamingBoth) {
  const Surface outer = make_icosphere(2, 1.0), inner = make_icosphere(1, 0.5, {0.1, 0, 0});
  for (const Placement& at : kPlacements) {
    const auto message = refusal(placed(joined(outer, inner), at));
    ASSERT_TRUE(message);
    EXPECT_NE(message->find("mesh 'test': the surface has a closed part inside another (the part "
                            "of triangle 1 contains the part of triangle 321, 1-based in the "
                            "file's order): nested bodies are not supported."),
              std::string::npos)
        << *message;
    // Listed inner first, the same two parts.
    const auto swapped = refusal(placed(joined(inner, outer), at));
    ASSERT_TRUE(swapped);
    EXPECT_NE(swapped->find("(the part of triangle 81 contains the part of triangle 1,"),
              std::string::npos)
        << *swapped;
  }
}

TEST(SelfIntersection, BodiesSideBySideAreValid) {
  // Apart; and a small sphere in a corner of the big one's box, outside it (the box test passes,
  // the winding number decides).
  const Surface big = make_icosphere(3, 1.0);
  for (const Placement& at : kPlacements) {
    EXPECT_FALSE(refusal(placed(joined(big, make_icosphere(2, 1.0, {2.5, 0, 0})), at)));
    EXPECT_FALSE(refusal(placed(joined(big, make_icosphere(2, 0.1, {0.8, 0.8, 0.8})), at)));
  }
}

TEST(SelfIntersection, ManySmallBodiesSideBySideOrInsideOne) {
  Surface lattice;
  for (int i = 0; i < 10; ++i)
    for (int j = 0; j < 10; ++j)
      for (int k = 0; k < 10; ++k)
        lattice =
            joined(std::move(lattice), make_icosphere(0, 0.3, {double(i), double(j), double(k)}));
  EXPECT_FALSE(refusal(lattice));
  // The same 1000 inside a sphere around them: the first of them is named.
  const auto message = refusal(joined(lattice, make_icosphere(3, 12.0, {4.5, 4.5, 4.5})));
  ASSERT_TRUE(message);
  EXPECT_NE(message->find("(the part of triangle 20001 contains the part of triangle 1,"),
            std::string::npos)
      << *message;
}

TEST(SelfIntersection, DentPushedThroughTheFarSideIsRefused) {
  Surface dented = make_icosphere(3, 1.0);
  dented.vertices[0] = dented.vertices[0] * -1.3;  // through the centre and out the far side
  const auto pair = first_meeting_pair(dented);
  ASSERT_TRUE(pair);
  const std::string expected =
      "mesh 'test': the surface intersects itself: triangles " + std::to_string(pair->first + 1) +
      " and " + std::to_string(pair->second + 1) + " (1-based, in the file's order) cross or touch";
  for (const Placement& at : kPlacements) {
    const auto message = refusal(placed(dented, at));
    ASSERT_TRUE(message);
    EXPECT_EQ(named_part(*message), expected) << *message;
  }
  // The pair found: a triangle at the moved vertex and one of the far side that it crosses.
  const Triangle& t = dented.triangles[pair->first];
  const Triangle& s = dented.triangles[pair->second];
  EXPECT_TRUE(t[0] == 0 || t[1] == 0 || t[2] == 0 || s[0] == 0 || s[1] == 0 || s[2] == 0);
}

TEST(SelfIntersection, OverlappingBodiesSayTheirPartsOverlap) {
  const Surface a = make_icosphere(2, 1.0), b = make_icosphere(2, 1.0, {1.5, 0, 0});
  const Surface both = joined(a, b);
  const auto pair = first_meeting_pair(both);
  ASSERT_TRUE(pair);
  for (const Placement& at : kPlacements) {
    const auto message = refusal(placed(both, at));
    ASSERT_TRUE(message);
    EXPECT_EQ(named_part(*message), "mesh 'test': the surface intersects itself: triangles " +
                                        std::to_string(pair->first + 1) + " and " +
                                        std::to_string(pair->second + 1) +
                                        " (1-based, in the file's order) cross or touch")
        << *message;
    EXPECT_NE(message->find("where two of its closed parts overlap or touch"), std::string::npos);
  }
}

// Two tetrahedra whose bases overlap in the plane z = 0, one above it, one below: they meet
// only where the bases (and the edges on them) overlap, coplanar.
TEST(SelfIntersection, CoplanarOverlappingBasesAreRefused) {
  const Surface up{{{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0.2, 0.2, 1}},
                   {{0, 2, 1}, {0, 1, 3}, {1, 2, 3}, {2, 0, 3}}};
  const Surface down{{{0.3, 0.3, 0}, {1.3, 0.3, 0}, {0.3, 1.3, 0}, {0.5, 0.5, -1}},
                     {{0, 1, 2}, {0, 3, 1}, {1, 3, 2}, {2, 3, 0}}};
  const Surface both = joined(up, down);
  const auto pair = first_meeting_pair(both);
  ASSERT_TRUE(pair);
  EXPECT_EQ(*pair, (std::pair<std::size_t, std::size_t>{0, 4}));  // the two bases
  for (const Placement& at : kPlacements) {
    const auto message = refusal(placed(both, at));
    ASSERT_TRUE(message);
    EXPECT_EQ(named_part(*message),
              "mesh 'test': the surface intersects itself: triangles 1 and 5 (1-based, in the "
              "file's order) cross or touch")
        << *message;
  }
  // Moved apart along x, they are two valid bodies.
  Surface apart = down;
  for (Vec3& p : apart.vertices) p.x += 1.5;
  for (const Placement& at : kPlacements) EXPECT_FALSE(refusal(placed(joined(up, apart), at)));
}

TEST(TrianglesMeet, CoplanarPairs) {
  const std::array<Vec3, 3> a{Vec3{0, 0, 0}, {1, 0, 0}, {0, 1, 0}};
  const Triangle ia{0, 1, 2}, ib{3, 4, 5};
  for (const Placement& at : kPlacements) {
    const auto put = [&](std::array<Vec3, 3> p) {
      for (Vec3& q : p) q = q * at.scale + at.offset;
      return p;
    };
    const auto meet = [&](const std::array<Vec3, 3>& b) {
      return triangles_meet(put(a), ia, put(b), ib);
    };
    EXPECT_TRUE(meet({Vec3{0.2, 0.2, 0}, {1.2, 0.2, 0}, {0.2, 1.2, 0}}));   // overlapping
    EXPECT_TRUE(meet({Vec3{0.1, 0.1, 0}, {0.3, 0.1, 0}, {0.1, 0.3, 0}}));   // inside
    EXPECT_FALSE(meet({Vec3{0.6, 0.6, 0}, {1.6, 0.6, 0}, {0.6, 1.6, 0}}));  // beyond the hypotenuse
    EXPECT_FALSE(meet({Vec3{0.2, 0.2, 1e-3}, {1.2, 0.2, 1e-3}, {0.2, 1.2, 1e-3}}));    // above
    EXPECT_TRUE(meet({Vec3{0.2, 0.2, 1e-13}, {1.2, 0.2, 1e-13}, {0.2, 1.2, 1e-13}}));  // touching
    // Crossing: a's plane cuts b through a's interior; b only reaching down to a's plane beside a.
    EXPECT_TRUE(meet({Vec3{0.2, 0.2, -0.5}, {0.3, 0.2, 0.5}, {0.2, 0.3, 0.5}}));
    EXPECT_FALSE(meet({Vec3{1.2, 0.2, -0.5}, {1.3, 0.2, 0.5}, {1.2, 0.3, 0.5}}));
  }
}

TEST(TrianglesMeet, FoldsAtASharedVertexOrEdge) {
  const std::array<Vec3, 3> a{Vec3{0, 0, 0}, {1, 0, 0}, {0, 1, 0}};
  const Triangle ia{0, 1, 2}, vertex{0, 3, 4}, edge{1, 0, 3};
  for (const Placement& at : kPlacements) {
    const auto put = [&](std::array<Vec3, 3> p) {
      for (Vec3& q : p) q = q * at.scale + at.offset;
      return p;
    };
    const auto meet = [&](const std::array<Vec3, 3>& b, const Triangle& ib) {
      return triangles_meet(put(a), ia, put(b), ib);
    };
    // Sharing the corner (0, 0, 0): folded through a's interior, coplanar and overlapping,
    // coplanar side by side, and bent away.
    EXPECT_TRUE(meet({Vec3{0, 0, 0}, {1, 0.2, 0.3}, {0.2, 1, -0.3}}, vertex));
    EXPECT_TRUE(meet({Vec3{0, 0, 0}, {0.5, 0.5, 0}, {-1, 1, 0}}, vertex));
    EXPECT_TRUE(meet({Vec3{0, 0, 0}, {0.5, 0.1, 0}, {0.1, 0.5, 0}}, vertex));
    EXPECT_FALSE(meet({Vec3{0, 0, 0}, {-1, 0.5, 0}, {-1, -0.5, 0}}, vertex));
    EXPECT_FALSE(meet({Vec3{0, 0, 0}, {-1, 0.2, 0.3}, {0.2, -1, 0.1}}, vertex));
    EXPECT_FALSE(meet({Vec3{0, 0, 0}, {1, 0, 0.5}, {0, 1, 0.5}}, vertex));  // above, over a
    // Sharing the edge (0,0,0)-(1,0,0): folded flat onto a, flat beside it, and bent.
    EXPECT_TRUE(meet({Vec3{1, 0, 0}, {0, 0, 0}, {0.5, 0.5, 0}}, edge));
    EXPECT_FALSE(meet({Vec3{1, 0, 0}, {0, 0, 0}, {0.5, -0.5, 0}}, edge));
    EXPECT_FALSE(meet({Vec3{1, 0, 0}, {0, 0, 0}, {0.5, 0.5, 0.5}}, edge));
  }
}

TEST(TrianglesMeet, PairsOfAnIcosphereMeetOnlyWhereTheyShare) {
  const Surface s = make_icosphere(2, 1.0);
  EXPECT_FALSE(first_meeting_pair(s));
  EXPECT_FALSE(first_self_intersection(s.vertices, s.triangles));
}

}  // namespace
}  // namespace fmbem
