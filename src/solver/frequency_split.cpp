#include "fmbem/solver/frequency_split.hpp"

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <vector>

#include "fmbem/core/error.hpp"

namespace fmbem {

int frequency_owner(std::size_t index, int ranks) {
  if (ranks < 1) throw Error("frequency_owner: no rank");
  const std::size_t round = index / std::size_t(ranks), place = index % std::size_t(ranks);
  return int(round % 2 == 0 ? place : std::size_t(ranks) - 1 - place);
}

namespace {

std::string *captured = nullptr;
PetscErrorCode (*passed_on)(FILE *, const char[], va_list) = nullptr;

PetscErrorCode capture_stdout(FILE *fd, const char format[], va_list args) {
  if (fd != PETSC_STDOUT || !captured) return passed_on(fd, format, args);
  // PETSc's own formatting (PetscVSNPrintf: its %g and integer conventions), into a buffer
  // grown to the whole text.
  char small[1024];
  std::size_t length = 0;
  va_list again;
  va_copy(again, args);
  PetscErrorCode ierr = PetscVSNPrintf(small, sizeof small, format, &length, args);
  if (!ierr && length <= sizeof small) {
    captured->append(small);
  } else if (!ierr) {
    std::vector<char> large(length + 1);
    ierr = PetscVSNPrintf(large.data(), large.size(), format, nullptr, again);
    if (!ierr) captured->append(large.data());
  }
  va_end(again);
  return ierr;
}

}  // namespace

CapturedStdout::CapturedStdout(std::string &into) {
  if (captured) throw Error("CapturedStdout: one capture at a time (a defect: please report it)");
  captured = &into;
  passed_on = PetscVFPrintf;
  PetscVFPrintf = capture_stdout;
}

CapturedStdout::~CapturedStdout() {
  PetscVFPrintf = passed_on;
  captured = nullptr;
}

void gather_owned(MPI_Comm comm, std::vector<std::string> &texts, const std::vector<char> &owned) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  if (owned.size() != texts.size())
    throw Error("gather_owned: the ownership does not match the texts (a defect)");
  // Each entry's length + 1 where owned, 0 elsewhere; the owned texts end to end.
  const std::size_t count = texts.size();
  std::vector<unsigned long long> lengths(count, 0);
  std::string joined;
  for (std::size_t i = 0; i < count; ++i)
    if (owned[i]) {
      lengths[i] = texts[i].size() + 1;
      joined += texts[i];
    }
  std::vector<unsigned long long> all_lengths(rank == 0 ? count * std::size_t(size) : 0);
  MPI_Gather(lengths.data(), int(count), MPI_UNSIGNED_LONG_LONG, all_lengths.data(), int(count),
             MPI_UNSIGNED_LONG_LONG, 0, comm);
  // Each rank's bytes, from its lengths. The texts are summaries and labels: their total
  // stays far below MPI's int counts, checked.
  std::vector<int> counts(rank == 0 ? std::size_t(size) : 0), offsets(counts.size());
  unsigned long long total = 0;
  for (std::size_t r = 0; r < counts.size(); ++r) {
    unsigned long long bytes = 0;
    for (std::size_t i = 0; i < count; ++i)
      if (const unsigned long long length = all_lengths[r * count + i]) bytes += length - 1;
    offsets[r] = int(total);
    counts[r] = int(bytes);
    total += bytes;
  }
  int too_long = total > 0x7fffffffULL;
  MPI_Bcast(&too_long, 1, MPI_INT, 0, comm);
  if (too_long) throw Error("gather_owned: more than 2 GB of text to gather");
  std::string received(std::size_t(total), '\0');
  MPI_Gatherv(joined.data(), int(joined.size()), MPI_CHAR, received.data(), counts.data(),
              offsets.data(), MPI_CHAR, 0, comm);
  if (rank != 0) return;
  for (int r = 0; r < size; ++r) {
    std::size_t at = std::size_t(offsets[std::size_t(r)]);
    for (std::size_t i = 0; i < count; ++i) {
      const unsigned long long length = all_lengths[std::size_t(r) * count + i];
      if (length == 0) continue;
      texts[i] = received.substr(at, length - 1);
      at += length - 1;
    }
  }
}

namespace {

// Records as numbers: each rank its owned records, zeros elsewhere, summed on rank 0 (x + 0 is
// x exactly, NaN included).
template <class Record, std::size_t Width, class ToNumbers, class FromNumbers>
void sum_owned(MPI_Comm comm, std::vector<Record> &records, const std::vector<char> &owned,
               ToNumbers &&to_numbers, FromNumbers &&from_numbers) {
  if (owned.size() != records.size())
    throw Error("gather_owned: the ownership does not match the records (a defect)");
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  std::vector<double> numbers(records.size() * Width, 0.0);
  for (std::size_t i = 0; i < records.size(); ++i)
    if (owned[i]) to_numbers(records[i], &numbers[i * Width]);
  MPI_Reduce(rank == 0 ? MPI_IN_PLACE : numbers.data(), numbers.data(), int(numbers.size()),
             MPI_DOUBLE, MPI_SUM, 0, comm);
  if (rank == 0)
    for (std::size_t i = 0; i < records.size(); ++i) from_numbers(&numbers[i * Width], records[i]);
}

}  // namespace

void gather_owned(MPI_Comm comm, std::vector<SweepRow> &rows, const std::vector<char> &owned) {
  sum_owned<SweepRow, 11>(
      comm, rows, owned,
      [](const SweepRow &row, double *to) {
        const double numbers[11] = {row.k,
                                    double(row.source),
                                    row.frequency,
                                    double(row.iterations),
                                    row.solved ? 1.0 : 0.0,
                                    row.setup_seconds,
                                    row.solve_seconds,
                                    row.residual,
                                    row.has_error ? 1.0 : 0.0,
                                    row.error_max,
                                    row.error_relative_l2};
        std::copy(numbers, numbers + 11, to);
      },
      [](const double *from, SweepRow &row) {
        row.k = from[0];
        row.source = std::size_t(from[1]);
        row.frequency = from[2];
        row.iterations = long(from[3]);
        row.solved = from[4] != 0.0;
        row.setup_seconds = from[5];
        row.solve_seconds = from[6];
        row.residual = from[7];
        row.has_error = from[8] != 0.0;
        row.error_max = from[9];
        row.error_relative_l2 = from[10];
      });
  std::vector<std::string> reasons(rows.size());
  for (std::size_t i = 0; i < rows.size(); ++i) reasons[i] = rows[i].reason;
  gather_owned(comm, reasons, owned);
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  if (rank == 0)
    for (std::size_t i = 0; i < rows.size(); ++i) rows[i].reason = std::move(reasons[i]);
}

void gather_owned(MPI_Comm comm, std::vector<NumCalcStep> &steps, const std::vector<char> &owned) {
  sum_owned<NumCalcStep, 7>(
      comm, steps, owned,
      [](const NumCalcStep &step, double *to) {
        const double numbers[7] = {
            step.frequency_hz,  step.solved ? 1.0 : 0.0, double(step.iterations), step.residual,
            step.setup_seconds, step.solve_seconds,      step.output_seconds};
        std::copy(numbers, numbers + 7, to);
      },
      [](const double *from, NumCalcStep &step) {
        step.frequency_hz = from[0];
        step.solved = from[1] != 0.0;
        step.iterations = long(from[2]);
        step.residual = from[3];
        step.setup_seconds = from[4];
        step.solve_seconds = from[5];
        step.output_seconds = from[6];
      });
}

}  // namespace fmbem
