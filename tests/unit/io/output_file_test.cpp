#include "fmbem/io/output_file.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "fmbem/core/error.hpp"
#include "scratch_test.hpp"

namespace fmbem::io {
namespace {

namespace fs = std::filesystem;

class OutputFileSteps : public ScratchTest {
 protected:
  std::string read(const std::string& path) const {
    std::ifstream in(path);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  }
  static void write_text(const std::string& path, const std::string& text) {
    std::ofstream(path) << text;
  }
  std::size_t files() const {
    return std::size_t(std::distance(fs::directory_iterator(scratch_), fs::directory_iterator()));
  }
};

// The pieces of a .pvtu: every rank fills its file, and only then are they renamed.
TEST_F(OutputFileSteps, FillLeavesTheTargetUntilCommit) {
  const std::string target = scratch_file("piece_0.vtu");
  write_text(target, "old");
  OutputFile file(target, "-o");
  file.fill([](const std::string& path) { write_text(path, "new"); });
  EXPECT_EQ(read(target), "old");
  file.commit();
  EXPECT_EQ(read(target), "new");
  EXPECT_EQ(files(), 1u) << "no temporary left";
  EXPECT_THROW(file.commit(), Error);
}

TEST_F(OutputFileSteps, FilledButNeverCommittedLeavesTheTargetAndNoTemporary) {
  const std::string target = scratch_file("piece_1.vtu");
  write_text(target, "old");
  {
    OutputFile file(target, "-o");
    file.fill([](const std::string& path) { write_text(path, "new"); });
  }  // another rank failed: no commit
  EXPECT_EQ(read(target), "old");
  EXPECT_EQ(files(), 1u);
}

TEST_F(OutputFileSteps, CommitBeforeFillIsAnError) {
  OutputFile file(scratch_file("x.vtu"), "-o");
  try {
    file.commit();
    FAIL() << "expected fmbem::Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("never filled"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(fs::exists(scratch_file("x.vtu")));
}

}  // namespace
}  // namespace fmbem::io
