#pragma once
// What the Gmsh reader's tests share: the expected-error helper, files written or re-saved by
// Gmsh in a scratch folder, and comparisons of surfaces read.

#include <algorithm>
#include <clocale>
#include <fstream>
#include <iterator>
#include <string>
#include <utility>

#include "fmbem/core/error.hpp"
#include "fmbem/io/gmsh_reader.hpp"
#include "fmbem/mesh/mesh.hpp"
#include "scratch_test.hpp"

#if FMBEM_HAVE_GMSH
#include <gmsh.h>
#endif

namespace fmbem::io::test {

// Runs `call`, expects fmbem::Error, and returns its message.
template <typename Call>
std::string error_message(Call&& call) {
  try {
    call();
  } catch (const Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected fmbem::Error";
  return {};
}

#if FMBEM_HAVE_GMSH

inline std::string file_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

class GmshTest : public ScratchTest {
 protected:
  std::string write_text(const std::string& name, const std::string& text) const {
    const std::string path = scratch_file(name);
    std::ofstream(path, std::ios::binary) << text;
    return path;
  }

  // Re-saves a mesh through the Gmsh API in another MSH version and/or binary.
  // Gmsh changes the locale on initialise: put it back for the other tests.
  std::string convert(const std::string& from, const std::string& name, double version,
                      bool binary) const {
    const std::string to = scratch_file(name);
    const std::string locale = std::setlocale(LC_ALL, nullptr);
    gmsh::initialize(0, nullptr, false);
    gmsh::option::setNumber("General.Terminal", 0);
    gmsh::open(from);
    gmsh::option::setNumber("Mesh.MshFileVersion", version);
    gmsh::option::setNumber("Mesh.Binary", binary ? 1 : 0);
    gmsh::write(to);
    gmsh::finalize();
    std::setlocale(LC_ALL, locale.c_str());
    return to;
  }
};

inline void expect_identical(const Surface& a, const Surface& b) {
  ASSERT_EQ(a.vertices.size(), b.vertices.size());
  ASSERT_EQ(a.triangles.size(), b.triangles.size());
  EXPECT_TRUE(a.vertices == b.vertices);
  EXPECT_TRUE(a.triangles == b.triangles);
}

// ASCII files written by Gmsh keep 16 significant digits, which need not
// round-trip a double exactly: allow a couple of units in the last place.
inline void expect_same_up_to_printing(const Surface& a, const Surface& b) {
  ASSERT_EQ(a.vertices.size(), b.vertices.size());
  EXPECT_TRUE(a.triangles == b.triangles);
  double largest_gap = 0.0;
  for (std::size_t v = 0; v < a.vertices.size(); ++v)
    largest_gap = std::max(largest_gap, norm(a.vertices[v] - b.vertices[v]));
  EXPECT_LE(largest_gap, 1e-15);
}

inline Surface surface_of(const std::string& path) {
  SurfaceRead read = read_gmsh(path);
  EXPECT_TRUE(read.warnings.empty()) << read.warnings.front();
  return std::move(read.surface);
}

#endif  // FMBEM_HAVE_GMSH

}  // namespace fmbem::io::test
