#include "fmbem/io/gmsh_reader.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <clocale>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <numbers>
#include <string>
#include <thread>

#include "fmbem/core/error.hpp"
#include "fmbem/mesh/mesh.hpp"
#include "gmsh_test_support.hpp"
#include "msh_samples.hpp"
#include "scratch_test.hpp"

#if FMBEM_HAVE_GMSH
#include <fcntl.h>
#include <gmsh.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>
#endif
#if defined(_OPENMP)
#include <omp.h>
#endif

namespace fmbem::io {
namespace {

namespace fs = std::filesystem;
using test::error_message;
#if FMBEM_HAVE_GMSH
using test::expect_identical;
using test::expect_same_up_to_printing;
using test::file_text;
using test::surface_of;
#endif

const std::string kSphereMsh = std::string(FMBEM_SOURCE_DIR) + "/meshes/sphere.msh";
const std::string kCubeMsh = std::string(FMBEM_SOURCE_DIR) + "/meshes/cube.msh";

#if FMBEM_HAVE_GMSH

// Feeds `text` into a pipe from a thread, as a shell's `<(cat f.msh)` does; path()
// names the pipe's read end. Endless when `repeat` is set, until the reader goes.
class PipeFeeder {
 public:
  explicit PipeFeeder(std::string text, bool repeat = false) {
    if (::pipe(ends_) != 0) throw std::runtime_error("pipe");
    writer_ = std::thread([this, text = std::move(text), repeat] {
      sigset_t pipe_signal;  // a reader that stops early: EPIPE here, no SIGPIPE
      sigemptyset(&pipe_signal);
      sigaddset(&pipe_signal, SIGPIPE);
      pthread_sigmask(SIG_BLOCK, &pipe_signal, nullptr);
      do {
        for (std::size_t done = 0; done < text.size();) {
          const ssize_t n = ::write(ends_[1], text.data() + done, text.size() - done);
          if (n <= 0) {
            ::close(ends_[1]);
            return;
          }
          done += static_cast<std::size_t>(n);
        }
      } while (repeat);
      ::close(ends_[1]);
    });
  }
  ~PipeFeeder() {
    ::close(ends_[0]);  // an endless writer sees EPIPE now
    writer_.join();
  }
  std::string path() const { return "/dev/fd/" + std::to_string(ends_[0]); }
  int read_end() const { return ends_[0]; }

 private:
  int ends_[2] = {-1, -1};
  std::thread writer_;
};

using GmshReader = test::GmshTest;

// Euler: V - E + F = 2 on a closed genus-0 triangle surface, with E = 3F / 2.
bool euler_sphere_like(const Surface& s) { return 2 * s.vertices.size() == s.triangles.size() + 4; }

// A tetrahedron's surface, outward.
samples::MeshData tetrahedron() {
  return samples::from_surface(Surface{{{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}},
                                       {{0, 2, 1}, {0, 1, 3}, {0, 3, 2}, {1, 2, 3}}});
}

// The tetrahedron plus a quadrangle: the check passes it, Gmsh's child refuses it.
std::string quadrangle_mesh() {
  samples::MeshData mesh = tetrahedron();
  mesh.elements.push_back({3, {1, 2, 3, 4}});
  return samples::msh22(mesh, false);
}

TEST_F(GmshReader, ShippedSphereIsUnitSphereMsh41) {
  const Surface sphere = surface_of(kSphereMsh);
  EXPECT_GE(sphere.triangles.size(), 4000u);
  EXPECT_LE(sphere.triangles.size(), 6000u);
  EXPECT_TRUE(euler_sphere_like(sphere)) << "only used vertices are kept";
  double worst = 0.0;
  for (const Vec3& v : sphere.vertices) worst = std::max(worst, std::abs(norm(v) - 1.0));
  EXPECT_LE(worst, 1e-12);

  const Mesh mesh = Mesh::from_surface(sphere, kSphereMsh);
  EXPECT_NEAR(mesh.volume(), 4.0 / 3.0 * std::numbers::pi, 0.01);
  EXPECT_LT(mesh.volume(), 4.0 / 3.0 * std::numbers::pi);  // inscribed polyhedron
}

TEST_F(GmshReader, ShippedCubeIsUnitCubeMsh22) {
  std::ifstream file(kCubeMsh);
  std::string header, version;
  std::getline(file, header);
  std::getline(file, version);
  EXPECT_EQ(version, "2.2 0 8");

  // Its points and lines (the cube's corners and edges) are ignored without a word.
  const Surface cube = surface_of(kCubeMsh);
  EXPECT_GE(cube.triangles.size(), 1000u);
  EXPECT_LE(cube.triangles.size(), 3000u);
  EXPECT_TRUE(euler_sphere_like(cube));
  Vec3 low{1e9, 1e9, 1e9}, high{-1e9, -1e9, -1e9};
  for (const Vec3& v : cube.vertices) {
    low = {std::min(low.x, v.x), std::min(low.y, v.y), std::min(low.z, v.z)};
    high = {std::max(high.x, v.x), std::max(high.y, v.y), std::max(high.z, v.z)};
  }
  EXPECT_EQ(low, (Vec3{-0.5, -0.5, -0.5}));
  EXPECT_EQ(high, (Vec3{0.5, 0.5, 0.5}));

  const Mesh mesh = Mesh::from_surface(cube, kCubeMsh);
  EXPECT_NEAR(mesh.volume(), 1.0, 1e-12);  // flat faces: exact up to rounding
  double area = 0.0;
  for (double a : mesh.areas()) area += a;
  EXPECT_NEAR(area, 6.0, 1e-12);
}

TEST_F(GmshReader, BinaryMsh41EqualsAscii) {
  expect_identical(surface_of(convert(kSphereMsh, "sphere_bin.msh", 4.1, true)),
                   surface_of(kSphereMsh));
}

TEST_F(GmshReader, BinaryMsh22EqualsAscii) {
  expect_identical(surface_of(convert(kCubeMsh, "cube_bin.msh", 2.2, true)), surface_of(kCubeMsh));
}

TEST_F(GmshReader, Msh22EqualsMsh41) {
  expect_same_up_to_printing(surface_of(convert(kSphereMsh, "sphere22.msh", 2.2, false)),
                             surface_of(kSphereMsh));
  expect_same_up_to_printing(surface_of(convert(kCubeMsh, "cube41.msh", 4.1, false)),
                             surface_of(kCubeMsh));
}

TEST_F(GmshReader, Msh40IsRead) {
  expect_same_up_to_printing(surface_of(convert(kCubeMsh, "cube40.msh", 4.0, false)),
                             surface_of(kCubeMsh));
}

// Binary files of the other endianness (Gmsh swaps bytes when the integer 1 after
// the version reads otherwise): the same surface as little-endian and ASCII.
TEST_F(GmshReader, BigEndianBinary) {
  const samples::MeshData mesh = samples::from_surface(make_icosphere(2, 1.0));
  const Surface ascii = surface_of(write_text("ascii.msh", samples::msh22(mesh, false)));
  EXPECT_EQ(ascii.triangles.size(), 320u);
  expect_identical(surface_of(write_text("big22.msh", samples::msh22(mesh, true, true))), ascii);
  expect_identical(surface_of(write_text("little22.msh", samples::msh22(mesh, true))), ascii);
  expect_identical(surface_of(write_text("big41.msh", samples::msh41(mesh, true, true))), ascii);
}

TEST_F(GmshReader, ReadsTwiceInOneProcess) {
  const Surface first = surface_of(kCubeMsh);
  const Surface second = surface_of(kCubeMsh);
  expect_identical(first, second);
}

// The child inherits this process's stdout and stderr (captured here): Gmsh must
// print nothing there, and this process's locale and OpenMP threads are untouched.
TEST_F(GmshReader, PrintsNothingAndRestoresProcessState) {
  const std::string locale_before = std::setlocale(LC_ALL, nullptr);
#if defined(_OPENMP)
  omp_set_num_threads(3);
#endif
  ::testing::internal::CaptureStdout();
  ::testing::internal::CaptureStderr();
  read_gmsh(kSphereMsh);
  EXPECT_THROW(read_gmsh(write_text("bad.msh", "$MeshFormat\n4.1 0 8\n$EndMeshFormat\n$Nodes\n9")),
               Error);
  EXPECT_THROW(read_gmsh(write_text("quad.msh", quadrangle_mesh())), Error);  // in the child
  const std::string out = ::testing::internal::GetCapturedStdout();
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(out, "");
  EXPECT_EQ(err, "");
  EXPECT_EQ(std::setlocale(LC_ALL, nullptr), locale_before);
#if defined(_OPENMP)
  EXPECT_EQ(omp_get_max_threads(), 3);
#endif
}

TEST_F(GmshReader, SiblingOptionFileIsNotRun) {
  // Gmsh runs "<mesh>.opt" as a script when it opens <mesh>; read_gmsh must not.
  const std::string mesh = scratch_file("cube.msh");
  fs::copy_file(kCubeMsh, mesh);
  const std::string marker = scratch_file("ran");
  write_text("cube.msh.opt", "System \"touch " + marker + "\";\nGeneral.Terminal = 1;\n");
  ::testing::internal::CaptureStdout();
  expect_identical(surface_of(mesh), surface_of(kCubeMsh));
  EXPECT_EQ(::testing::internal::GetCapturedStdout(), "");
  EXPECT_FALSE(fs::exists(marker));
}

// Gmsh picks its reader by the file's extension: a mesh named .geo would be run as
// a script. The private copy is always mesh.msh, so a script line inside a section
// Gmsh's mesh reader skips stays text.
TEST_F(GmshReader, MeshNamedGeoWithScriptRunsNothing) {
  const std::string marker = scratch_file("ran");
  const std::string text = samples::msh22(tetrahedron(), false) + "$Comments\nSystem \"touch " +
                           marker + "\";\n$EndComments\n";
  const SurfaceRead read = read_gmsh(write_text("evil.geo", text));
  EXPECT_EQ(read.surface.triangles.size(), 4u);
  EXPECT_FALSE(fs::exists(marker));
  // The same through a pipe.
  const PipeFeeder feeder(text);
  EXPECT_EQ(read_gmsh(feeder.path()).surface.triangles.size(), 4u);
  EXPECT_FALSE(fs::exists(marker));
}

// The attack: a stream that starts like a mesh and goes on with a script
// line. Formerly the header check consumed the start of the pipe and Gmsh parsed
// the rest as a .geo script, running the command.
TEST_F(GmshReader, ScriptLineInAStreamRunsNothing) {
  const std::string marker = scratch_file("ran");
  const std::string text =
      "$MeshFormat\n2.2 0 8\n$EndMeshFormat\nSystem \"touch " + marker + "\";\n";
  {
    const PipeFeeder feeder(text);
    const std::string message = error_message([&] { read_gmsh(feeder.path()); });
    EXPECT_NE(message.find("mesh file '" + feeder.path() +
                           "' is malformed: unexpected text outside any section: 'System \"touch"),
              std::string::npos)
        << message;
  }
  const std::string fifo = scratch_file("mesh.fifo");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::thread writer([&] { std::ofstream(fifo, std::ios::binary) << text; });
  const std::string message = error_message([&] { read_gmsh(fifo); });
  writer.join();
  EXPECT_NE(message.find("unexpected text outside any section"), std::string::npos) << message;
  EXPECT_FALSE(fs::exists(marker));
}

TEST_F(GmshReader, ProcessSubstitutionAndStdin) {
  const Surface cube = surface_of(kCubeMsh);
  {
    const PipeFeeder feeder(file_text(kCubeMsh));  // bash's <(cat cube.msh)
    expect_identical(surface_of(feeder.path()), cube);
  }
  const PipeFeeder feeder(file_text(kCubeMsh));
  const int saved_stdin = ::dup(STDIN_FILENO);
  ASSERT_GE(saved_stdin, 0);
  ASSERT_GE(::dup2(feeder.read_end(), STDIN_FILENO), 0);
  SurfaceRead read;
  EXPECT_NO_THROW(read = read_gmsh("/dev/stdin"));
  ::dup2(saved_stdin, STDIN_FILENO);
  ::close(saved_stdin);
  expect_identical(read.surface, cube);
}

TEST_F(GmshReader, FifoWithWriter) {
  const std::string fifo = scratch_file("mesh.fifo");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::thread writer([&] { std::ofstream(fifo, std::ios::binary) << file_text(kCubeMsh); });
  const Surface read = surface_of(fifo);
  writer.join();
  expect_identical(read, surface_of(kCubeMsh));
}

TEST_F(GmshReader, FifoWithoutWriterTimesOut) {
  const std::string fifo = scratch_file("mesh.fifo");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  GmshReadOptions options;
  options.stream_timeout = std::chrono::milliseconds(300);
  const auto start = std::chrono::steady_clock::now();
  const std::string message = error_message([&] { read_gmsh(fifo, options); });
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(message,
            "cannot read mesh file '" + fifo +
                "': nothing arrived within 0.3 s (a pipe or FIFO that nothing writes to?)");
  EXPECT_GE(seconds, 0.3);
  EXPECT_LT(seconds, 10.0);
}

TEST_F(GmshReader, EndlessStreamThatIsNoMeshStopsAtOnce) {
  const PipeFeeder feeder("y\n", /*repeat=*/true);
  const auto start = std::chrono::steady_clock::now();
  const std::string message = error_message([&] { read_gmsh(feeder.path()); });
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 5.0);
  EXPECT_NE(message.find("is not a Gmsh .msh file"), std::string::npos) << message;
}

TEST_F(GmshReader, SizeIsCapped) {
  GmshReadOptions options;
  options.max_bytes = 1000;
  EXPECT_EQ(error_message([&] { read_gmsh(kCubeMsh, options); }),
            "mesh file '" + kCubeMsh + "' is larger than 1000 bytes, the most fmbem reads");
  const PipeFeeder feeder(file_text(kCubeMsh));
  EXPECT_NE(error_message([&] { read_gmsh(feeder.path(), options); }).find("larger than 1000"),
            std::string::npos);
}

TEST_F(GmshReader, DevicesAreRefused) {
  for (const std::string device : {"/dev/null", "/dev/zero"}) {
    const std::string message = error_message([&] { read_gmsh(device); });
    EXPECT_EQ(message, "cannot read mesh file '" + device +
                           "': it is a device (a terminal?), not a file or a pipe");
  }
}

// Files on which Gmsh 4.8's reader itself segfaults (element nodes one past the
// last node, or negative in MSH 4.0): one clear error, precise because the check
// finds the cause before Gmsh runs.
TEST_F(GmshReader, FilesThatCrashGmshGiveACleanError) {
  const std::string msh22 =
      write_text("crash22.msh",
                 "$MeshFormat\n2.2 0 8\n$EndMeshFormat\n$Nodes\n4\n1 0 0 0\n2 1 0 0\n3 0 1 0\n"
                 "4 0 0 1\n$EndNodes\n$Elements\n4\n1 2 2 0 1 1 2 3\n2 2 2 0 1 1 2 4\n"
                 "3 2 2 0 1 1 3 4\n4 2 2 0 1 2 3 5\n$EndElements\n");
  EXPECT_EQ(error_message([&] { read_gmsh(msh22); }),
            "mesh file '" + msh22 +
                "' is malformed: element 4 uses node 5, which the file does not define (line 16)");
  const std::string msh40 =
      write_text("crash40.msh",
                 "$MeshFormat\n4 0 8\n$EndMeshFormat\n$Entities\n0 0 1 0\n1 0 0 0 1 1 1 0 0\n"
                 "$EndEntities\n$Nodes\n1 4\n1 2 0 4\n1 0 0 0\n2 1 0 0\n3 0 1 0\n4 0 0 1\n"
                 "$EndNodes\n$Elements\n1 4\n1 2 2 4\n1 1 2 3\n2 1 2 4\n3 1 3 4\n4 2 3 -7\n"
                 "$EndElements\n");
  EXPECT_EQ(error_message([&] { read_gmsh(msh40); }),
            "mesh file '" + msh40 +
                "' is malformed: the element line '4 2 3 -7' must hold positive numbers separated "
                "by spaces (Gmsh 4.8 misreads signs and tabs there) (line 22)");
}

// Sections the check skips are Gmsh's to judge; its messages name the user's
// path, not the private copy's.
TEST_F(GmshReader, GmshMessagesNameTheUsersPath) {
  const std::string path = write_text(
      "periodic.msh", samples::msh41(tetrahedron(), false) + "$Periodic\n2\n$EndPeriodic\n");
  EXPECT_EQ(error_message([&] { read_gmsh(path); }),
            "cannot read mesh file '" + path + "': Gmsh says: Could not read periodic section");
}

// $PhysicalNames is read by the check (Gmsh 4.8 keeps one tag per name).
TEST_F(GmshReader, DamagedPhysicalNames) {
  const std::string mesh = samples::msh41(tetrahedron(), false);
  for (const auto& [names, expected] :
       {std::pair{"2\n2 1 \"a\"\n",
                  "$EndPhysicalNames comes after 1 names (a count in the section "
                  "is larger than its data) (line 30)"},
        std::pair{"1\n2 1 \"a\"\n2 2 \"b\"\n",
                  "its $PhysicalNames line '2 2 \"b\"' is more than its count (line 30)"},
        std::pair{"1\n4 1 \"a\"\n",
                  "its $PhysicalNames line '4 1 \"a\"' is not 'dimension tag \"name\"' with the "
                  "dimension 0 to 3 (line 29)"},
        std::pair{"1\n2 1 a\n",
                  "its $PhysicalNames line '2 1 a' is not 'dimension tag \"name\"' "
                  "with the dimension 0 to 3 (line 29)"},
        std::pair{"x\n", "its $PhysicalNames line 'x' is not a count of names (line 28)"}}) {
    const std::string path =
        write_text("names.msh", mesh + "$PhysicalNames\n" + names + "$EndPhysicalNames\n");
    EXPECT_EQ(error_message([&] { read_gmsh(path); }),
              "mesh file '" + path + "' is malformed: " + expected);
  }
}

TEST_F(GmshReader, MissingFile) {
  const std::string path = scratch_file("nowhere.msh");
  EXPECT_EQ(error_message([&] { read_gmsh(path); }),
            "cannot read mesh file '" + path + "': no such file");
}

TEST_F(GmshReader, Directory) {
  const std::string message = error_message([&] { read_gmsh(scratch_.string()); });
  EXPECT_NE(message.find("it is a directory"), std::string::npos) << message;
}

TEST_F(GmshReader, EmptyFileAndEmptyStream) {
  const std::string path = write_text("empty.msh", "");
  EXPECT_EQ(error_message([&] { read_gmsh(path); }), "mesh file '" + path + "' is empty");
  const PipeFeeder feeder("");
  EXPECT_EQ(error_message([&] { read_gmsh(feeder.path()); }),
            "mesh file '" + feeder.path() + "' is empty");
}

TEST_F(GmshReader, GarbageText) {
  const std::string path = write_text("garbage.msh", "garbage text\n1 2 3\n");
  const std::string message = error_message([&] { read_gmsh(path); });
  EXPECT_NE(message.find("not a Gmsh .msh file"), std::string::npos) << message;
}

TEST_F(GmshReader, GeoScriptIsNotExecuted) {
  // Gmsh would run a .geo script (which can call System); read_gmsh refuses it.
  const std::string marker = scratch_file("ran");
  const std::string path = write_text("script.geo", "System \"touch " + marker + "\";\n");
  const std::string message = error_message([&] { read_gmsh(path); });
  EXPECT_NE(message.find("not a Gmsh .msh file"), std::string::npos) << message;
  EXPECT_FALSE(fs::exists(marker));
}

TEST_F(GmshReader, UnsupportedVersion) {
  const std::string path = write_text("v3.msh", "$MeshFormat\n3.0 0 8\n$EndMeshFormat\n");
  const std::string message = error_message([&] { read_gmsh(path); });
  EXPECT_NE(message.find("MSH format version '3.0 0 8'"), std::string::npos) << message;
}

TEST_F(GmshReader, TruncatedFiles) {
  const std::string text = file_text(kSphereMsh);
  const std::string path = write_text("truncated.msh", text.substr(0, text.size() / 2));
  const std::string ascii = error_message([&] { read_gmsh(path); });
  EXPECT_EQ(ascii.rfind("mesh file '" + path +
                            "' is malformed: the file ends inside its $Nodes section where a "
                            "coordinate of node ",
                        0),
            0u)
      << ascii;
  EXPECT_NE(ascii.find("should be (the file is truncated)"), std::string::npos) << ascii;
  const std::string binary = convert(kSphereMsh, "sphere_bin.msh", 4.1, true);
  fs::resize_file(binary, fs::file_size(binary) * 3 / 4);
  const std::string message = error_message([&] { read_gmsh(binary); });
  EXPECT_NE(message.find("the file ends inside its $Elements section"), std::string::npos)
      << message;
}

TEST_F(GmshReader, NoTriangles) {
  const std::string path = write_text("lines.msh",
                                      "$MeshFormat\n2.2 0 8\n$EndMeshFormat\n"
                                      "$Nodes\n3\n1 0 0 0\n2 1 0 0\n3 1 1 0\n$EndNodes\n"
                                      "$Elements\n3\n1 15 2 0 1 1\n2 1 2 0 1 1 2\n"
                                      "3 1 2 0 1 2 3\n$EndElements\n");
  const std::string message = error_message([&] { read_gmsh(path); });
  EXPECT_EQ(message, "mesh file '" + path +
                         "' has no 3-node triangles (Gmsh element type 2); it holds: Line 2, "
                         "Point");
}

// A count that lies is named as such, never reported as "no elements at all".
TEST_F(GmshReader, LyingElementCount) {
  std::string text = samples::msh22(tetrahedron(), false);
  text.replace(text.find("$Elements\n4\n"), 12, "$Elements\n0\n");
  const std::string path = write_text("lying.msh", text);
  EXPECT_EQ(error_message([&] { read_gmsh(path); }),
            "mesh file '" + path +
                "' is malformed: the $Elements section holds more data than its counts say "
                "(found '1 2 2 0 1 1 3 2' where $EndElements should be) (line 13)");
}

TEST_F(GmshReader, IgnoresOtherElementsAndUnusedNodes) {
  // Node 9 is used by no triangle, node tags are sparse, a point and a line
  // come along, and triangle tags are out of order in the file.
  const std::string path = write_text("mixed.msh",
                                      "$MeshFormat\n2.2 0 8\n$EndMeshFormat\n"
                                      "$Nodes\n5\n10 0 0 0\n20 1 0 0\n30 0 1 0\n40 0 0 1\n"
                                      "9 5 5 5\n$EndNodes\n"
                                      "$Elements\n4\n1 15 2 0 1 9\n2 1 2 0 1 10 20\n"
                                      "8 2 2 0 1 10 20 40\n7 2 2 0 1 10 30 20\n$EndElements\n");
  const Surface s = surface_of(path);
  ASSERT_EQ(s.vertices.size(), 4u);
  EXPECT_EQ(s.vertices[0], (Vec3{0, 0, 0}));
  EXPECT_EQ(s.vertices[3], (Vec3{0, 0, 1}));
  ASSERT_EQ(s.triangles.size(), 2u);
  EXPECT_EQ(s.triangles[0], (Triangle{0, 2, 1}));  // element 7 first
  EXPECT_EQ(s.triangles[1], (Triangle{0, 1, 3}));
}

// Volume elements are dropped with a warning that counts them; the surface stays.
TEST_F(GmshReader, TetrahedraAreIgnoredWithAWarning) {
  samples::MeshData mesh = tetrahedron();
  mesh.elements.push_back({4, {1, 2, 3, 4}});
  mesh.elements.push_back({4, {4, 3, 2, 1}});
  const std::string path22 = write_text("tets22.msh", samples::msh22(mesh, false));
  for (const std::string& path : {path22, convert(path22, "tets41.msh", 4.1, true)}) {
    const SurfaceRead read = read_gmsh(path);
    EXPECT_EQ(read.surface.triangles.size(), 4u);
    ASSERT_EQ(read.warnings.size(), 1u);
    EXPECT_EQ(read.warnings[0], "mesh file '" + path +
                                    "': ignored 2 volume elements (2 Tetrahedron 4); fmbem uses "
                                    "the surface triangles only");
  }
}

// Quadrangles (and other 2D elements but the 3-node triangle) would leave holes.
TEST_F(GmshReader, QuadranglesAreAnError) {
  samples::MeshData mesh = tetrahedron();
  mesh.elements.push_back({3, {1, 2, 3, 4}});
  for (const auto& [name, text] : {std::pair{"quad22.msh", samples::msh22(mesh, false)},
                                   std::pair{"quad41.msh", samples::msh41(mesh, true)}}) {
    const std::string path = write_text(name, text);
    const std::string message = error_message([&] { read_gmsh(path); });
    EXPECT_EQ(message.rfind("mesh file '" + path +
                                "' has 2D elements other than 3-node triangles (1 "
                                "Quadrilateral 4); fmbem reads surfaces of 3-node triangles only",
                            0),
              0u)
        << message;
  }
}

TEST_F(GmshReader, NodeDefinedTwiceWithDifferentCoordinates) {
  for (int version : {2, 4}) {
    samples::MeshData mesh = tetrahedron();
    mesh.nodes.push_back({0.5, 0.5, 0.5});
    std::string text = version == 2 ? samples::msh22(mesh, false) : samples::msh41(mesh, false);
    // The fifth node gets the tag of the second.
    text.replace(text.find(version == 2 ? "\n5 0.5" : "\n5\n"), 3, version == 2 ? "\n2 " : "\n2\n");
    const std::string path = write_text("twice.msh", text);
    const std::string message = error_message([&] { read_gmsh(path); });
    EXPECT_NE(message.find("' is malformed: node 2 is defined twice, at (1, 0, 0) and at (0.5, "
                           "0.5, 0.5)"),
              std::string::npos)
        << message;
  }
}

// Gmsh 4.8 itself segfaults on these MSH 2 files (node tag one past the last).
TEST_F(GmshReader, UndefinedNodeInAsciiMsh22) {
  const std::string path = write_text("undefined.msh",
                                      "$MeshFormat\n2.2 0 8\n$EndMeshFormat\n"
                                      "$Nodes\n3\n1 0 0 0\n2 1 0 0\n3 0 1 0\n$EndNodes\n"
                                      "$Elements\n2\n1 2 2 0 1 1 2 3\n2 2 2 0 1 1 2 4\n"
                                      "$EndElements\n");
  EXPECT_EQ(error_message([&] { read_gmsh(path); }),
            "mesh file '" + path +
                "' is malformed: element 2 uses node 4, which the file does not define (line 13)");
}

TEST_F(GmshReader, UndefinedNodeInBinaryMsh22) {
  // Last int of the cube's binary element section is a node of its last triangle.
  const std::string path = convert(kCubeMsh, "cube_bin.msh", 2.2, true);
  std::string bytes = file_text(path);
  const std::size_t last_node = bytes.rfind("\n$EndElements") - sizeof(std::int32_t);
  const Surface cube = surface_of(kCubeMsh);
  const std::int32_t one_past = static_cast<std::int32_t>(cube.vertices.size()) + 1;
  std::memcpy(&bytes[last_node], &one_past, sizeof one_past);
  std::ofstream(path, std::ios::binary) << bytes;
  const std::string message = error_message([&] { read_gmsh(path); });
  EXPECT_NE(message.find("uses node " + std::to_string(one_past) +
                         ", which the file does not define (byte offset " +
                         std::to_string(last_node) + ")"),
            std::string::npos)
      << message;
}

TEST_F(GmshReader, UndefinedNodeInMsh41) {
  const std::string path = write_text("undefined41.msh",
                                      "$MeshFormat\n4.1 0 8\n$EndMeshFormat\n"
                                      "$Nodes\n1 3 1 3\n2 1 0 3\n1\n2\n3\n"
                                      "0 0 0\n1 0 0\n0 1 0\n$EndNodes\n"
                                      "$Elements\n1 1 1 1\n2 1 2 1\n1 1 2 4\n$EndElements\n");
  const std::string message = error_message([&] { read_gmsh(path); });
  EXPECT_NE(message.find("element 1 uses node 4, which the file does not define"),
            std::string::npos)
      << message;
}

TEST_F(GmshReader, NonFiniteCoordinate) {
  const std::string path = write_text("nan.msh",
                                      "$MeshFormat\n2.2 0 8\n$EndMeshFormat\n"
                                      "$Nodes\n3\n1 0 0 0\n2 1 0 0\n3 nan 1 0\n$EndNodes\n"
                                      "$Elements\n1\n1 2 2 0 1 1 2 3\n$EndElements\n");
  const std::string message = error_message([&] { read_gmsh(path); });
  EXPECT_NE(message.find("node 3 has a non-finite coordinate (nan)"), std::string::npos) << message;
}

#else  // FMBEM_HAVE_GMSH

TEST(GmshReader, BuildWithoutGmshSaysSo) {
  EXPECT_FALSE(gmsh_available());
  const std::string message = error_message([] { read_gmsh(kSphereMsh); });
  EXPECT_NE(message.find("no Gmsh support"), std::string::npos) << message;
}

#endif  // FMBEM_HAVE_GMSH

}  // namespace
}  // namespace fmbem::io
