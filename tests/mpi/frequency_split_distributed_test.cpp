// -bem_split frequencies' gathers on 1-4 ranks: each entry owned by one rank (a seeded random
// choice, the same on every rank) reaches rank 0 exactly, texts of any length and bytes, rows
// and steps with every field (NaN included), entries of other ranks left alone elsewhere.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "fmbem/solver/frequency_split.hpp"
#include "mpi_world.hpp"

namespace fmbem {
namespace {

constexpr std::size_t kEntries = 37;

// Entry i's owner: a seeded draw, so every rank knows it without talking.
std::vector<int> owners() {
  std::mt19937 draw(11);
  std::vector<int> owner(kEntries);
  for (int &o : owner) o = int(draw() % unsigned(test::world_size()));
  return owner;
}

std::vector<char> owned_here(const std::vector<int> &owner) {
  std::vector<char> owned(owner.size());
  for (std::size_t i = 0; i < owner.size(); ++i) owned[i] = owner[i] == test::world_rank();
  return owned;
}

// Entry i's text: i times a character of its own, NUL bytes inside some.
std::string text_of(std::size_t i) {
  std::string text(i * 7, char('a' + i % 26));
  if (i % 3 == 0 && !text.empty()) text[text.size() / 2] = '\0';
  return text;
}

SweepRow row_of(std::size_t i) {
  SweepRow row;
  row.k = 0.1 * double(i) + 1.0 / 3.0;
  row.source = i % 4;
  row.frequency = 100.0 * double(i);
  row.iterations = long(i * 3 + 1);
  row.reason = i % 5 == 0 ? "DIVERGED_ITS" : "CONVERGED_RTOL";
  row.solved = i % 5 != 0;
  row.setup_seconds = std::sqrt(double(i));
  row.solve_seconds = -0.0;
  row.residual = 1e-7 / double(i + 1);
  row.has_error = i % 2 == 0;
  row.error_max = row.has_error ? std::exp(-double(i)) : std::numeric_limits<double>::quiet_NaN();
  row.error_relative_l2 = std::numeric_limits<double>::denorm_min() * double(i);
  return row;
}

TEST(GatherOwned, TextsReachRankZeroFromTheirOwners) {
  const std::vector<int> owner = owners();
  std::vector<std::string> texts(kEntries, "not mine");
  for (std::size_t i = 0; i < kEntries; ++i)
    if (owner[i] == test::world_rank()) texts[i] = text_of(i);
  gather_owned(MPI_COMM_WORLD, texts, owned_here(owner));
  bool right = true;
  for (std::size_t i = 0; i < kEntries; ++i) {
    const bool mine = owner[i] == test::world_rank();
    right = right && texts[i] == (test::world_rank() == 0 || mine ? text_of(i) : "not mine");
  }
  EXPECT_TRUE(test::on_every_rank(right));
}

TEST(GatherOwned, RowsComeWholeWithEveryField) {
  const std::vector<int> owner = owners();
  std::vector<SweepRow> rows(kEntries);
  for (std::size_t i = 0; i < kEntries; ++i)
    if (owner[i] == test::world_rank()) rows[i] = row_of(i);
  gather_owned(MPI_COMM_WORLD, rows, owned_here(owner));
  bool right = true;
  if (test::world_rank() == 0)
    for (std::size_t i = 0; i < kEntries; ++i) {
      const SweepRow want = row_of(i), &got = rows[i];
      right = right && got.k == want.k && got.source == want.source &&
              got.frequency == want.frequency && got.iterations == want.iterations &&
              got.reason == want.reason && got.solved == want.solved &&
              got.setup_seconds == want.setup_seconds && got.solve_seconds == 0.0 &&
              got.residual == want.residual && got.has_error == want.has_error &&
              (want.has_error ? got.error_max == want.error_max : std::isnan(got.error_max)) &&
              got.error_relative_l2 == want.error_relative_l2;
    }
  EXPECT_TRUE(test::on_every_rank(right));
}

TEST(GatherOwned, NumCalcStepsComeWhole) {
  const std::vector<int> owner = owners();
  const auto step_of = [](std::size_t i) {
    NumCalcStep step;
    step.frequency_hz = 100.0 * double(i + 1);
    step.solved = i % 4 != 1;
    step.iterations = long(i);
    step.residual = 1e-9 * double(i);
    step.setup_seconds = 0.5 * double(i);
    step.solve_seconds = 1.0 / double(i + 1);
    step.output_seconds = 3.0;
    return step;
  };
  std::vector<NumCalcStep> steps(kEntries);
  for (std::size_t i = 0; i < kEntries; ++i)
    if (owner[i] == test::world_rank()) steps[i] = step_of(i);
  gather_owned(MPI_COMM_WORLD, steps, owned_here(owner));
  bool right = true;
  if (test::world_rank() == 0)
    for (std::size_t i = 0; i < kEntries; ++i) {
      const NumCalcStep want = step_of(i), &got = steps[i];
      right = right && got.frequency_hz == want.frequency_hz && got.solved == want.solved &&
              got.iterations == want.iterations && got.residual == want.residual &&
              got.setup_seconds == want.setup_seconds && got.solve_seconds == want.solve_seconds &&
              got.output_seconds == want.output_seconds;
    }
  EXPECT_TRUE(test::on_every_rank(right));
}

}  // namespace
}  // namespace fmbem
