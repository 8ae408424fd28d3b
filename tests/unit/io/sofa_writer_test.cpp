// The SOFA writer's refusals (what it writes is read back by sofar in tests/system, case sofa).
#include "fmbem/io/sofa_writer.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <limits>
#include <string>

#include "scratch_test.hpp"

namespace fmbem::io {
namespace {

class SofaFiles : public ScratchTest {};

#if FMBEM_HAVE_NETCDF
SofaHrtf one_ear(std::size_t positions, std::size_t frequencies) {
  SofaHrtf h;
  for (std::size_t m = 0; m < positions; ++m) h.source_positions.push_back({1.0 + double(m), 0, 0});
  h.receiver_positions = {{0, 0.09, 0}};
  for (std::size_t n = 0; n < frequencies; ++n) h.frequencies.push_back(100.0 * double(n + 1));
  h.data.assign(positions * frequencies, cplx(1.0, -0.5));
  return h;
}

std::string error_of(const std::string& path, const SofaHrtf& h) {
  try {
    write_sofa_hrtf(path, h);
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

TEST_F(SofaFiles, WritesAndRefusesInconsistentOrNonFiniteData) {
  const std::string path = scratch_file("h.sofa");
  EXPECT_EQ(error_of(path, one_ear(3, 2)), "no error");
  EXPECT_GT(std::filesystem::file_size(path), 0u);
  SofaHrtf short_data = one_ear(3, 2);
  short_data.data.pop_back();
  EXPECT_NE(error_of(path, short_data).find("5 values for 3 positions, 1 receivers and 2"),
            std::string::npos);
  SofaHrtf nan = one_ear(2, 2);
  nan.data[3] = cplx(std::numeric_limits<double>::quiet_NaN(), 0.0);
  EXPECT_NE(error_of(path, nan).find("value 3 is not finite"), std::string::npos);
  SofaHrtf at_listener = one_ear(2, 1);
  at_listener.source_positions[1] = at_listener.listener_position;
  EXPECT_NE(error_of(path, at_listener).find("position 2 is the listener's own"),
            std::string::npos);
  EXPECT_NE(error_of(scratch_file("missing/h.sofa"), one_ear(1, 1)).find("cannot write SOFA"),
            std::string::npos);
}
#else
TEST_F(SofaFiles, RefusedWithoutNetcdf) {
  EXPECT_FALSE(sofa_available());
  EXPECT_THROW(write_sofa_hrtf(scratch_file("h.sofa"), SofaHrtf{}), Error);
}
#endif

}  // namespace
}  // namespace fmbem::io
