#pragma once
#include <petscvec.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "fmbem/core/vec3.hpp"
#include "fmbem/io/csv_writer.hpp"
#include "fmbem/io/field_writer.hpp"
#include "fmbem/solver/sweep.hpp"

namespace fmbem {

// Exit statuses of bem_solve (README, "Exit codes").
constexpr int kExitSolved = 0;
constexpr int kExitBadInput = 1;     // bad option, file, mesh or setting; nothing solved
constexpr int kExitSolveFailed = 2;  // the Krylov solve did not converge (or gave NaN/Inf)

// One solve of a run (a k and a source) as a program that embeds fmbem receives it: what the
// files hold, in memory. Every array is in the user's element (or point) order.
struct SolveRecord {
  SweepRow row;              // k, frequency, source, iterations, reason, times, residual, errors
  std::size_t k_index = 0;   // the sweep point (0-based)
  std::string source_label;  // the source as the summary names it
  std::string refusal;       // why a solve after the first was refused (row.reason REFUSED)
  // The solved-for boundary value per element ("u": the pressure, "q": its normal derivative),
  // and the per-element arrays of -o's file (the unknown's parts, err_abs where an exact
  // solution is known; with surface conditions the group, p, v_n and the level). Empty when
  // the solve failed.
  std::string unknown_name;
  std::vector<cplx> unknown;
  std::vector<io::CellField> surface;
  // -bem_field*'s and -bem_farfield's tables (the columns of their CSV files; empty when not
  // asked or the solve failed).
  std::vector<io::NamedColumn> field, farfield;
};
// Called once for every k and source of the run (also a failed or refused one, with
// row.solved false) on the rank that writes its files: rank 0, or with -bem_split frequencies
// the rank that solved it.
using SolveRecordSink = std::function<void(SolveRecord &&)>;

// The bem_solve program between PetscInitialize and PetscFinalize: reads the
// options and the mesh, assembles the operator as a MatShell, solves with
// KSP, reports the error against an exact solution, writes VTU/CSV, and hands each solve to
// `sink` when one is given.
// fmbem::Error escapes for bad input; PETSc failures return their code; a
// failed solve sets *exit_status to kExitSolveFailed and writes no output.
PetscErrorCode run_bem_solve(MPI_Comm comm, int *exit_status, const SolveRecordSink &sink = {});

class BemRun;
struct OperatorStage;

// A run held open for a program that drives the solve itself (its own KSP, petsc4py): the
// options read from PETSc's database and everything a run does before its first k (every
// check, the mesh on the ranks, the conditions, the sources, the vectors); then the operator
// stage at any of the run's wavenumbers (operator, preconditioner and KSP set up as the run's),
// each source's right-hand side for it, and a solution gathered. Collective on `comm`. Throws
// fmbem::Error with bem_solve's message for bad input and PETSc's failures.
class OpenRun {
 public:
  explicit OpenRun(MPI_Comm comm);
  ~OpenRun();
  OpenRun(const OpenRun &) = delete;
  OpenRun &operator=(const OpenRun &) = delete;
  const std::vector<double> &wavenumbers() const;
  std::size_t sources() const;
  const std::string &source_label(std::size_t s) const;
  // A new operator stage at sweep point i (the caller holds it; it reads this run's vectors, so
  // it lives no longer than the run). The first refuses the options nothing has read (with the
  // options as the run read them still set: PETSc's database marks what was read).
  std::unique_ptr<OperatorStage> operator_at(std::size_t i);
  // A vector of the operator's layout (the caller destroys it).
  Vec new_vector() const;
  // Source s's right-hand side at point i, for `stage` (built at i), into b.
  void right_hand_side(const OperatorStage &stage, std::size_t i, std::size_t s, Vec b);
  // x on rank 0 in the mesh's element order (the user's; empty on the other ranks).
  std::vector<cplx> gather(Vec x);
  // The field at the run's field points and its far field (-bem_field*, -bem_farfield) of
  // source s's solution x at point i: the columns a solve's record holds, on rank 0 (empty
  // elsewhere). Throws fmbem::Error when the run asked for neither.
  struct Field {
    std::vector<io::NamedColumn> field, farfield;
  };
  Field field(std::size_t i, std::size_t s, Vec x);

 private:
  // Throws fmbem::Error unless i is a sweep point and s a source of the run.
  void check_point_and_source(std::size_t i, std::size_t s) const;
  std::unique_ptr<BemRun> run_;
  bool options_checked_ = false;
};

// "PETSc: " and PETSc's message of a failure's code, one line.
std::string petsc_error_text(PetscErrorCode ierr);

}  // namespace fmbem
