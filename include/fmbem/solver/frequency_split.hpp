#pragma once
// -bem_split frequencies: each rank solves its own points of a sweep whole (its own GPU where
// there are several), and rank 0 puts the run back together: the table, the summaries in the
// sweep's order, the SOFA file and NumCalc's logs.
#include <mpi.h>
#include <petscsys.h>

#include <cstddef>
#include <string>
#include <vector>

#include "fmbem/solver/numcalc_run.hpp"
#include "fmbem/solver/sweep.hpp"

namespace fmbem {

// The rank that solves sweep point `index` over `ranks` ranks: rounds of `ranks` points in the
// sweep's order, every other round reversed, so that a sweep rising in frequency (each point
// dearer than the last) gives every rank a like share of the dear points.
int frequency_owner(std::size_t index, int ranks);

// While it lives, what PETSc prints to stdout on this process (PetscPrintf, -ksp_monitor,
// -ksp_view, the summaries) is appended to `into` instead, formatted as PETSc formats it; other
// streams pass through. One at a time: the ranks' summaries would otherwise interleave line by
// line, so each rank keeps its own and rank 0 prints them in the sweep's order.
class CapturedStdout {
 public:
  explicit CapturedStdout(std::string &into);
  ~CapturedStdout();
  CapturedStdout(const CapturedStdout &) = delete;
  CapturedStdout &operator=(const CapturedStdout &) = delete;
};

// Rank 0 gets each entry from the rank that owns it (owned[i] true on exactly one rank);
// collective over `comm`. The others' vectors are left as they are.
void gather_owned(MPI_Comm comm, std::vector<std::string> &texts, const std::vector<char> &owned);
void gather_owned(MPI_Comm comm, std::vector<SweepRow> &rows, const std::vector<char> &owned);
void gather_owned(MPI_Comm comm, std::vector<NumCalcStep> &steps, const std::vector<char> &owned);

}  // namespace fmbem
