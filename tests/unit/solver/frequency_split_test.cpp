// -bem_split frequencies' pieces on one process: which rank solves which k, the capture of what
// PETSc prints, and the gathers (on one rank: the identity; tests/mpi runs them on 1-4 ranks).
#include "fmbem/solver/frequency_split.hpp"

#include <gtest/gtest.h>
#include <petscsys.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "fmbem/core/error.hpp"

namespace fmbem {
namespace {

TEST(FrequencyOwner, RoundsInOrderEveryOtherReversed) {
  const std::vector<int> want{0, 1, 2, 2, 1, 0, 0, 1};
  for (std::size_t i = 0; i < want.size(); ++i) EXPECT_EQ(frequency_owner(i, 3), want[i]) << i;
  for (std::size_t i = 0; i < 5; ++i) EXPECT_EQ(frequency_owner(i, 1), 0);
  EXPECT_THROW(frequency_owner(0, 0), Error);
}

TEST(FrequencyOwner, ARisingCostIsSharedEvenly) {
  // A point costing its index: rounds 2j and 2j+1 give rank r the points 2jR + r and
  // (2j+1)R + R - 1 - r, together (4j+2)R - 1 whatever r, so whole pairs of rounds balance
  // exactly.
  for (int ranks : {1, 2, 3, 4, 7, 16}) {
    for (std::size_t pairs : {1u, 2u, 5u}) {
      const std::size_t count = 2 * std::size_t(ranks) * pairs;
      std::vector<double> cost(std::size_t(ranks), 0.0);
      std::vector<std::size_t> points(std::size_t(ranks), 0);
      for (std::size_t i = 0; i < count; ++i) {
        const int r = frequency_owner(i, ranks);
        ASSERT_GE(r, 0);
        ASSERT_LT(r, ranks);
        cost[std::size_t(r)] += double(i);
        ++points[std::size_t(r)];
      }
      for (int r = 0; r < ranks; ++r) {
        EXPECT_EQ(cost[std::size_t(r)], cost[0]) << ranks << " ranks, rank " << r;
        EXPECT_EQ(points[std::size_t(r)], 2 * pairs);
      }
    }
    // Any count: each rank's number of points within one of every other's.
    for (std::size_t count = 1; count < 40; ++count) {
      std::vector<std::size_t> points(std::size_t(ranks), 0);
      for (std::size_t i = 0; i < count; ++i) ++points[std::size_t(frequency_owner(i, ranks))];
      const auto [low, high] = std::minmax_element(points.begin(), points.end());
      EXPECT_LE(*high - *low, 1u) << ranks << " ranks, " << count << " points";
    }
  }
}

// PETSc's own formatting of the same text (its %g writes 343 as "343.").
std::string petsc_formatted(const char *format, double value, const char *word, PetscInt n) {
  char text[256];
  PetscSNPrintf(text, sizeof text, format, value, word, n);
  return text;
}

TEST(CapturedStdout, KeepsWhatPetscPrintsAsPetscFormatsIt) {
  const char *format = "value %g, %s, %" PetscInt_FMT "\n";
  std::string kept;
  testing::internal::CaptureStdout();
  {
    CapturedStdout capture(kept);
    ASSERT_EQ(PetscPrintf(PETSC_COMM_SELF, format, 343.0, "word", PetscInt(7)), 0);
    // A text longer than any fixed buffer comes whole.
    const std::string long_line(5000, 'x');
    ASSERT_EQ(PetscPrintf(PETSC_COMM_SELF, "%s|\n", long_line.c_str()), 0);
    EXPECT_THROW({ CapturedStdout second(kept); }, Error);  // one capture at a time
  }
  ASSERT_EQ(PetscPrintf(PETSC_COMM_SELF, "after\n"), 0);
  const std::string printed = testing::internal::GetCapturedStdout();
  EXPECT_EQ(kept, petsc_formatted(format, 343.0, "word", 7) + std::string(5000, 'x') + "|\n");
  EXPECT_EQ(printed, "after\n");  // nothing of the capture reached stdout, the rest does
}

TEST(CapturedStdout, OtherStreamsPassThrough) {
  std::string kept;
  testing::internal::CaptureStderr();
  {
    CapturedStdout capture(kept);
    ASSERT_EQ(PetscFPrintf(PETSC_COMM_SELF, PETSC_STDERR, "to stderr %d\n", 5), 0);
  }
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "to stderr 5\n");
  EXPECT_EQ(kept, "");
}

TEST(GatherOwned, OneRankKeepsItsOwn) {
  std::vector<std::string> texts{"a", "", std::string("b\0c", 3)};
  gather_owned(MPI_COMM_SELF, texts, {1, 1, 1});
  EXPECT_EQ(texts, (std::vector<std::string>{"a", "", std::string("b\0c", 3)}));
  std::vector<SweepRow> rows(2);
  rows[0].k = 1.5;
  rows[0].reason = "CONVERGED_RTOL";
  rows[0].error_max = std::numeric_limits<double>::quiet_NaN();
  rows[1].source = 3;
  rows[1].iterations = 12;
  rows[1].solved = rows[1].has_error = true;
  gather_owned(MPI_COMM_SELF, rows, {1, 1});
  EXPECT_EQ(rows[0].k, 1.5);
  EXPECT_EQ(rows[0].reason, "CONVERGED_RTOL");
  EXPECT_TRUE(std::isnan(rows[0].error_max));
  EXPECT_EQ(rows[1].source, 3u);
  EXPECT_EQ(rows[1].iterations, 12);
  EXPECT_TRUE(rows[1].solved && rows[1].has_error);
  std::vector<std::string> wrong(2);
  EXPECT_THROW(gather_owned(MPI_COMM_SELF, wrong, {1}), Error);
}

}  // namespace
}  // namespace fmbem
