#include "fmbem/io/msh_check.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <string>

#include "fmbem/core/error.hpp"
#include "msh_samples.hpp"

namespace fmbem::io {
namespace {

const std::string kCubeMsh = std::string(FMBEM_SOURCE_DIR) + "/meshes/cube.msh";
const std::string kSphereMsh = std::string(FMBEM_SOURCE_DIR) + "/meshes/sphere.msh";

std::string file_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// check_msh's message for `text`, or a test failure if it accepts it.
std::string rejection(const std::string& text) {
  try {
    check_msh(text, "t.msh");
  } catch (const Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "check_msh accepted:\n" << text;
  return {};
}

#define EXPECT_REJECTED(text, needle)                                                         \
  do {                                                                                        \
    const std::string message_ = rejection(text);                                             \
    EXPECT_NE(message_.find(needle), std::string::npos) << message_;                          \
    EXPECT_EQ(message_.rfind("mesh file 't.msh' ", 0), 0u) << "names the file: " << message_; \
  } while (0)

// A tetrahedron's surface: 4 nodes, 4 triangles.
samples::MeshData tetrahedron() {
  return samples::from_surface(Surface{{{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}},
                                       {{0, 2, 1}, {0, 1, 3}, {0, 3, 2}, {1, 2, 3}}});
}

const std::string kHead22 = "$MeshFormat\n2.2 0 8\n$EndMeshFormat\n";
const std::string kNodes22 = "$Nodes\n4\n1 0 0 0\n2 1 0 0\n3 0 1 0\n4 0 0 1\n$EndNodes\n";
std::string elements22(const std::string& count, const std::string& last = "4 2 2 0 1 2 3 4") {
  return "$Elements\n" + count + "\n1 2 2 0 1 1 3 2\n2 2 2 0 1 1 2 4\n3 2 2 0 1 1 4 3\n" + last +
         "\n$EndElements\n";
}

TEST(MshCheck, ShippedMeshes) {
  const MshLayout cube = check_msh(file_text(kCubeMsh), kCubeMsh);
  EXPECT_EQ(cube.major_version, 2);
  EXPECT_EQ(cube.minor_version, 2);
  EXPECT_FALSE(cube.binary);
  EXPECT_EQ(cube.nodes, 1218u);
  EXPECT_EQ(cube.triangles, 2432u);
  EXPECT_EQ(cube.elements, 2596u);  // with the points and lines of the edges
  const MshLayout sphere = check_msh(file_text(kSphereMsh), kSphereMsh);
  EXPECT_EQ(sphere.major_version, 4);
  EXPECT_EQ(sphere.minor_version, 1);
  EXPECT_EQ(sphere.triangles, 5434u);
}

TEST(MshCheck, EveryVersionAndByteOrder) {
  const samples::MeshData mesh = samples::from_surface(make_icosphere(1, 1.0));
  for (bool binary : {false, true})
    for (bool big_endian : {false, true}) {
      if (!binary && big_endian) continue;
      for (int version : {2, 4}) {
        const std::string text = version == 2 ? samples::msh22(mesh, binary, big_endian)
                                              : samples::msh41(mesh, binary, big_endian);
        const MshLayout layout = check_msh(text, "t.msh");
        EXPECT_EQ(layout.major_version, version);
        EXPECT_EQ(layout.binary, binary);
        EXPECT_EQ(layout.byte_swapped, big_endian);
        EXPECT_EQ(layout.nodes, 42u);
        EXPECT_EQ(layout.triangles, 80u);
      }
    }
}

// What Gmsh's reader accepts, and so must the check: trailing blanks after section
// names, '+' signs, CRLF line ends, tabs, an element split over lines (Gmsh reads
// numbers with fscanf), any data size in ASCII, blank lines and skipped sections.
TEST(MshCheck, TolerantWhereGmshIs) {
  const std::string text =
      "$MeshFormat \r\n2.2 0 4\r\n$EndMeshFormat\r\n\r\n"
      "$Comments\nanything: System \"x\";\n$EndComments\n"
      "$Nodes\t\n+4\n1 0 0 0\n2\t+1 0 0\r\n+3 0 1 0\n4 0 0 1.0e+0\n$EndNodes\n"
      "$PhysicalNames\n1\n2 1 \"surface\"\n$EndPhysicalNames\n"
      "$Elements  \n4\n1 2 2 0 1 1 3 2\n2 2 2 0 1\n1 2 4\n"
      "3 2 2 0 1 1 4 3\n4 2 2 0 1 2 3 +4\n$EndElements\r\n";
  const MshLayout layout = check_msh(text, "t.msh");
  EXPECT_EQ(layout.nodes, 4u);
  EXPECT_EQ(layout.triangles, 4u);
}

TEST(MshCheck, UndefinedNodes) {
  // Gmsh 4.8 segfaults on these (a node tag one past the last, or tag 0).
  EXPECT_REJECTED(kHead22 + kNodes22 + elements22("4", "4 2 2 0 1 2 3 5"),
                  "element 4 uses node 5, which the file does not define (line 16)");
  EXPECT_REJECTED(kHead22 + kNodes22 + elements22("4", "4 2 2 0 1 2 3 0"), "uses node 0");
  EXPECT_REJECTED(kHead22 + kNodes22 + elements22("4", "4 2 2 0 1 2 3 -1"), "uses node -1");
  samples::MeshData mesh = tetrahedron();
  mesh.elements[2].nodes[1] = 5;
  for (bool big_endian : {false, true})
    EXPECT_REJECTED(samples::msh22(mesh, true, big_endian), "element 3 uses node 5");
  EXPECT_REJECTED(samples::msh41(mesh, false), "element 3 uses node 5");
  EXPECT_REJECTED(samples::msh41(mesh, true, true), "element 3 uses node 5");
}

TEST(MshCheck, LyingCountsAreNamedAsSuch) {
  EXPECT_REJECTED(kHead22 + kNodes22 + elements22("0"),
                  "the $Elements section holds more data than its counts say");
  EXPECT_REJECTED(kHead22 + kNodes22 + elements22("3"), "holds more data than its counts say");
  EXPECT_REJECTED(kHead22 + kNodes22 + elements22("5"),
                  "$EndElements comes after 4 of the 5 elements its count says");
  EXPECT_REJECTED(kHead22 + kNodes22 + elements22("99999999"), "long before the 99999999");
  EXPECT_REJECTED(
      kHead22 + "$Nodes\n5\n1 0 0 0\n2 1 0 0\n3 0 1 0\n4 0 0 1\n$EndNodes\n" + elements22("4"),
      "$EndNodes comes long before the 5 nodes its count says");
  EXPECT_REJECTED(kHead22 + kNodes22 + elements22("four"), "expected the element count");
  EXPECT_REJECTED(kHead22 + kNodes22 + elements22("4294967297"), "expected the element count");
  // Binary: the section's size does not fit its count.
  std::string binary = samples::msh22(tetrahedron(), true);
  binary.replace(binary.find("$Nodes\n4\n"), 9, "$Nodes\n5\n");
  EXPECT_REJECTED(binary, "$EndNodes comes long before the 5 nodes its count says");
  // MSH 4.1: block sizes, header counts and tag ranges must agree.
  const std::string msh41 = samples::msh41(tetrahedron(), false);
  const auto with = [&](const std::string& from, const std::string& to) {
    std::string text = msh41;
    text.replace(text.find(from), from.size(), to);
    return text;
  };
  EXPECT_REJECTED(with("$Elements\n4 4 1 4", "$Elements\n4 5 1 5"),
                  "the element blocks hold 4 elements, the header says 5");
  EXPECT_REJECTED(with("$Elements\n4 4 1 4", "$Elements\n3 4 1 4"),
                  "the element blocks hold 3 elements, the header says 4");
  EXPECT_REJECTED(with("$Elements\n4 4 1 4", "$Elements\n4 3 1 4"),
                  "the blocks hold more than the 3 elements the header says");
  EXPECT_REJECTED(with("2 1 2 1\n4", "2 1 2 0\n4"),
                  "the element blocks hold 3 elements, the header says 4");
  // A block size that lies mid-section makes the next numbers misread: an error too.
  EXPECT_REJECTED(with("2 1 2 1\n1", "2 1 2 0\n1"),
                  "an element block of dimension 1 holds elements of type 3");
  EXPECT_REJECTED(with("$Nodes\n1 4 1 4", "$Nodes\n1 4 2 4"),
                  "node tag 1 is outside the range 2 to 4 that the section's header declares");
  EXPECT_REJECTED(with("2 1 0 4", "2 1 0 3"), "the node blocks hold 3 nodes, the header says 4");
}

// MSH 4.0 (written by Gmsh 4.0): entity tag before dimension, no tag ranges, each
// node's tag with its coordinates. Gmsh 4.8 segfaults on a negative node tag there.
TEST(MshCheck, Msh40) {
  const std::string head =
      "$MeshFormat\n4 0 8\n$EndMeshFormat\n$Entities\n0 0 1 0\n"
      "1 0 0 0 1 1 1 0 0\n$EndEntities\n$Nodes\n1 4\n1 2 0 4\n1 0 0 0\n"
      "2 1 0 0\n3 0 1 0\n4 0 0 1\n$EndNodes\n";
  const auto elements = [](const std::string& last) {
    return "$Elements\n1 4\n1 2 2 4\n1 1 3 2\n2 1 2 4\n3 1 4 3\n" + last + "\n$EndElements\n";
  };
  const MshLayout layout = check_msh(head + elements("4 2 3 4"), "t.msh");
  EXPECT_EQ(layout.major_version, 4);
  EXPECT_EQ(layout.minor_version, 0);
  EXPECT_EQ(layout.triangles, 4u);
  EXPECT_REJECTED(head + elements("4 2 3 -7"),
                  "the element line '4 2 3 -7' must hold positive numbers separated by spaces");
  EXPECT_REJECTED(head + elements("4 2 3 5"), "element 4 uses node 5");
  EXPECT_REJECTED(head + elements("4 2 3 4 5"),
                  "the element line '4 2 3 4 5' holds 5 numbers, where its type 2 needs 4");
  EXPECT_REJECTED("$MeshFormat\n4 1 8\n", "binary MSH 4.0 is not supported");
}

// Gmsh 4.8 reads MSH 4 ASCII elements line by line: an element split over lines,
// a '+' sign or a tab between nodes makes it fail, so the check says so first.
TEST(MshCheck, Msh4ElementsOneLineEach) {
  const std::string text = samples::msh41(tetrahedron(), false);
  const auto with = [&](const std::string& from, const std::string& to) {
    std::string changed = text;
    changed.replace(changed.find(from), from.size(), to);
    return changed;
  };
  EXPECT_NO_THROW(check_msh(with("\n2 1 2 4\n", "\n2  1 2 4 \t\r\n"), "t.msh"));
  EXPECT_REJECTED(with("\n2 1 2 4\n", "\n2 1 2\n4\n"), "holds 3 numbers, where its type 2 needs 4");
  EXPECT_REJECTED(with("\n2 1 2 4\n", "\n2 1 2 +4\n"),
                  "must hold positive numbers separated by spaces");
  EXPECT_REJECTED(with("\n2 1 2 4\n", "\n2 1 2\t4\n"),
                  "must hold positive numbers separated by spaces");
  EXPECT_REJECTED(with("1\n2 1 2 4\n", "1 2 1 2 4\n"), "does not start on a line of its own");
}

// Gmsh refuses elements in an entity that neither $Entities nor a node block
// defines, and misreads entity sections with damaged counts: both checked first.
TEST(MshCheck, Msh4Entities) {
  const std::string text = samples::msh41(tetrahedron(), false);
  std::string elsewhere = text;
  elsewhere.replace(elsewhere.rfind("2 1 2 1\n"), 8, "2 3 2 1\n");
  EXPECT_REJECTED(elsewhere,
                  "an element block is in the entity of dimension 2 and tag 3, which "
                  "neither $Entities nor a node block defines");
  const std::string entities =
      "$Entities\n0 0 2 0\n1 0 0 0 1 1 1 0 0\n3 0 0 0 1 1 1 1 7 0\n"
      "$EndEntities\n";
  const std::size_t after_format = text.find("$Nodes");
  EXPECT_EQ(check_msh(std::string(elsewhere).insert(after_format, entities), "t.msh").triangles,
            4u);
  std::string damaged = entities;
  damaged.replace(damaged.find("1 7 0"), 5, "9 7 0");
  EXPECT_REJECTED(std::string(text).insert(after_format, damaged),
                  "$EndEntities comes long before the 9 physical tags its count says");
  EXPECT_REJECTED(
      std::string(text).insert(after_format, "$Entities\n0 0 99999999 0\n$EndEntities\n"),
      "long before the 99999999 entities its count says");
  damaged = entities;
  damaged.replace(damaged.find("1 1 1 0 0"), 9, "1 nan 1 0 0");
  EXPECT_REJECTED(std::string(text).insert(after_format, damaged),
                  "entity 1 of dimension 2 has a non-finite bounding box coordinate (nan)");
}

// Gmsh 4.8 reads an MSH 4 section up to the line "$End" + the rest of its line
// (blanks and line end included) and skips whatever lies between, '$' lines too;
// MSH 2 sections end at the next '$' line. So for MSH 4 "$Nodes  " or a stray
// "$EndNodes" would make Gmsh silently drop the rest of the file.
TEST(MshCheck, Msh4SectionsEndAsGmshEndsThem) {
  const std::string text = samples::msh41(tetrahedron(), false);
  const auto with = [&](const std::string& from, const std::string& to) {
    std::string changed = text;
    changed.replace(changed.find(from), from.size(), to);
    return changed;
  };
  EXPECT_REJECTED(with("$Nodes\n", "$Nodes  \n"),
                  "its line '$Nodes' must read $Nodes alone, without trailing blanks");
  EXPECT_REJECTED(with("$MeshFormat\n", "$MeshFormat \n"), "must read $MeshFormat alone");
  EXPECT_REJECTED(with("$EndNodes\n", "$EndNodes\n$EndNodes\n"),
                  "no line '$EndEndNodes' closes its line '$EndNodes', so Gmsh 4.8 would skip");
  EXPECT_REJECTED(with("$Nodes\n", "$Nodes\r\n"),
                  "expected a line $EndNodes, found '$EndNodes' "
                  "(with other blanks or line end");
  EXPECT_REJECTED(with("$Elements\n", "$Comments\n$Elements\n"), "no line '$EndComments'");
  // Skipped whole, '$' lines included: no second $Nodes section for Gmsh.
  const MshLayout skipped = check_msh(
      with("$Elements\n", "$Comments\n$Nodes\n1 2 3\n$EndComments\n$Elements\n"), "t.msh");
  EXPECT_EQ(skipped.nodes, 4u);
  std::string crlf;
  for (char c : text) crlf += c == '\n' ? std::string("\r\n") : std::string(1, c);
  EXPECT_EQ(check_msh(crlf, "t.msh").triangles, 4u);
  EXPECT_EQ(check_msh(text + "$EndElements\n", "t.msh").triangles, 4u);  // nothing to skip
}

TEST(MshCheck, NodeDefinedTwice) {
  const std::string twice = "$Nodes\n5\n1 0 0 0\n2 1 0 0\n3 0 1 0\n4 0 0 1\n2 5 5 5\n$EndNodes\n";
  EXPECT_REJECTED(kHead22 + twice + elements22("4"),
                  "node 2 is defined twice, at (1, 0, 0) and at (5, 5, 5)");
  const std::string same = "$Nodes\n5\n1 0 0 0\n2 1 0 0\n3 0 1 0\n4 0 0 1\n2 1 0 0\n$EndNodes\n";
  EXPECT_EQ(check_msh(kHead22 + same + elements22("4"), "t.msh").nodes, 4u);
  samples::MeshData mesh = tetrahedron();
  std::string msh41 = samples::msh41(mesh, false);
  msh41.replace(msh41.find("\n4\n0 0 0"), 3, "\n2\n");  // tags 1 2 3 2
  EXPECT_REJECTED(msh41, "node 2 is defined twice");
}

TEST(MshCheck, ElementTagUsedTwice) {
  EXPECT_REJECTED(kHead22 + kNodes22 + elements22("4", "3 2 2 0 1 2 3 4"),
                  "two elements have the tag 3 (Gmsh would keep only one)");
}

TEST(MshCheck, NonFiniteCoordinates) {
  for (const std::string bad : {"nan", "-inf", "INF", "nan(0x7)"})
    EXPECT_REJECTED(kHead22 + "$Nodes\n4\n1 0 0 0\n2 1 0 0\n3 0 " + bad +
                        " 0\n4 0 0 1\n$EndNodes\n" + elements22("4"),
                    "node 3 has a non-finite coordinate");
  EXPECT_REJECTED(
      kHead22 + "$Nodes\n4\n1 0 0 0\n2 1e999 0 0\n3 0 1 0\n4 0 0 1\n$EndNodes\n" + elements22("4"),
      "a coordinate of node 2 '1e999' is beyond the range of a double");
  samples::MeshData mesh = tetrahedron();
  mesh.nodes[3].z = std::numeric_limits<double>::quiet_NaN();
  EXPECT_REJECTED(samples::msh22(mesh, true, true), "node 4 has a non-finite coordinate (nan)");
  EXPECT_REJECTED(samples::msh41(mesh, true), "node 4 has a non-finite coordinate (nan)");
}

TEST(MshCheck, StructureAndVocabulary) {
  EXPECT_REJECTED(kHead22 + "System \"touch /tmp/x\";\n" + kNodes22 + elements22("4"),
                  "unexpected text outside any section: 'System \"touch /tmp/x\";' (line 4)");
  EXPECT_REJECTED(kHead22 + kNodes22 + kNodes22 + elements22("4"),
                  "it has a second $Nodes section");
  EXPECT_REJECTED(kHead22 + elements22("4") + kNodes22, "comes before any $Nodes section");
  EXPECT_REJECTED(kHead22 + kNodes22, "it has no $Elements section");
  EXPECT_REJECTED(kHead22, "it has neither a $Nodes nor an $Elements section");
  EXPECT_REJECTED(kHead22 + kNodes22 + elements22("4", "4 250 2 0 1 2 3 4"),
                  "element 4 has type 250, which is not a Gmsh element type");
  EXPECT_REJECTED(kHead22 + kNodes22 + elements22("4", "4 2 2 0 -1 2 3 4"),
                  "element 4 has the negative entity tag -1");
  EXPECT_REJECTED(kHead22 + "$NOD\n" + kNodes22, "is not supported (MSH 1 or parametric nodes)");
  EXPECT_REJECTED(kHead22 + kNodes22 + elements22("4") + "$MeshFormat\n2.2 0 8\n$EndMeshFormat\n",
                  "a second $MeshFormat section");
  EXPECT_REJECTED("$MeshFormat\n2.2 0 8\n", "$EndMeshFormat");
  EXPECT_REJECTED("$MeshFormat\n2.2 zero 8\n$EndMeshFormat\n", "is not 'version file-type");
  EXPECT_REJECTED("$MeshFormat\n2.2 1 4\n", "binary data of size 4");
  const char marker7[] = "$MeshFormat\n2.2 1 8\n\x07\0\0\0\n$EndMeshFormat\n";
  EXPECT_REJECTED(std::string(marker7, sizeof marker7 - 1),
                  "the binary marker after the version is 7");
  EXPECT_REJECTED("$MeshFormat\n3.0 0 8\n$EndMeshFormat\n", "MSH format version '3.0 0 8'");
  EXPECT_REJECTED("garbage\n", "is not a Gmsh .msh file");
  EXPECT_REJECTED(std::string(), "is empty");
}

// Gmsh reads lines into a 256-byte buffer: a 255-character line followed by
// "$Elements" starts a section for Gmsh, so it must for the check too.
TEST(MshCheck, SectionsFoundAsGmshFindsThem) {
  const std::string hidden = "$Comments\n" + std::string(255, 'x') +
                             "$Elements\n1\n1 2 2 0 1 1 2 7\n$EndElements\n$EndComments\n";
  EXPECT_REJECTED(kHead22 + kNodes22 + hidden + elements22("4"), "element 1 uses node 7");
  const std::string harmless = "$Comments\n" + std::string(254, 'x') +
                               "$Elements\n1\n1 2 2 0 1 1 2 7\n$EndElements\n$EndComments\n";
  EXPECT_EQ(check_msh(kHead22 + kNodes22 + harmless + elements22("4"), "t.msh").triangles, 4u);
}

// Every prefix of small files of each layout: an error naming the file, never a
// crash, a hang or another exception (AddressSanitizer checks the reads).
TEST(MshCheck, EveryTruncationIsAnError) {
  const samples::MeshData mesh = tetrahedron();
  for (const std::string& text :
       {samples::msh22(mesh, false), samples::msh22(mesh, true), samples::msh22(mesh, true, true),
        samples::msh41(mesh, false), samples::msh41(mesh, true, true)}) {
    ASSERT_NO_THROW(check_msh(text, "t.msh"));
    const std::size_t complete = text.rfind("$EndElements");
    for (std::size_t size = 0; size < complete; ++size)
      EXPECT_FALSE(rejection(text.substr(0, size)).empty()) << size;
  }
}

}  // namespace
}  // namespace fmbem::io
