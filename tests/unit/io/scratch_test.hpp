#pragma once
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

namespace fmbem::io {

// A scratch folder per test, so that tests run in parallel (ctest -j) never share files.
class ScratchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    scratch_ = std::filesystem::path(FMBEM_BINARY_DIR) / "test_io_scratch" /
               (std::string(info->test_suite_name()) + "." + info->name());
    std::filesystem::remove_all(scratch_);
    std::filesystem::create_directories(scratch_);
  }
  void TearDown() override { std::filesystem::remove_all(scratch_); }

  std::string scratch_file(const std::string& name) const { return (scratch_ / name).string(); }

  std::filesystem::path scratch_;
};

}  // namespace fmbem::io
