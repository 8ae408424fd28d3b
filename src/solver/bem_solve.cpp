#include "fmbem/solver/bem_solve.hpp"

#include <petscksp.h>
#include <petsctime.h>

#include <array>
#include <memory>
#include <string>

#include "fmbem/bem/direct_layer_potentials.hpp"
#include "fmbem/bem/discretization.hpp"
#include "fmbem/bem/fmm_layer_potentials.hpp"
#include "fmbem/core/error.hpp"
#include "fmbem/io/csv_writer.hpp"
#include "fmbem/io/mesh_source.hpp"
#include "fmbem/io/vtk_writer.hpp"
#include "fmbem/solver/options.hpp"

namespace fmbem {
namespace {

struct LogEvents {
  PetscLogEvent near_setup, operator_apply;
};

// One PETSc event per FMM phase, so that -log_view shows them.
class FmmEvents final : public fmm::FmmObserver {
 public:
  explicit FmmEvents(PetscClassId class_id) {
    for (int i = 0; i < int(fmm::FmmPhase::count); ++i) {
      const std::string name = std::string("FMM") + fmm::phase_name(fmm::FmmPhase(i));
      PetscCallAbort(PETSC_COMM_SELF, PetscLogEventRegister(name.c_str(), class_id, &events_[i]));
    }
  }
  void begin(fmm::FmmPhase phase) override {
    PetscCallAbort(PETSC_COMM_SELF, PetscLogEventBegin(events_[int(phase)], 0, 0, 0, 0));
  }
  void end(fmm::FmmPhase phase) override {
    PetscCallAbort(PETSC_COMM_SELF, PetscLogEventEnd(events_[int(phase)], 0, 0, 0, 0));
  }

 private:
  std::array<PetscLogEvent, int(fmm::FmmPhase::count)> events_{};
};

// MatShell context: the operator needs the whole density on every rank (the
// far field couples every pair), so MatMult gathers x, then each rank
// computes its own rows.
struct ShellContext {
  const BoundaryOperator* op;
  VecScatter gather;
  Vec x_all;
  LogEvents events;
  PetscInt mat_mults = 0;
  PetscLogDouble mat_mult_seconds = 0;
};

PetscErrorCode shell_mult(Mat A, Vec x, Vec y) {
  ShellContext* ctx;
  PetscFunctionBeginUser;
  PetscCall(MatShellGetContext(A, &ctx));
  PetscLogDouble start;
  PetscCall(PetscTime(&start));
  PetscCall(PetscLogEventBegin(ctx->events.operator_apply, A, x, y, 0));
  PetscCall(VecScatterBegin(ctx->gather, x, ctx->x_all, INSERT_VALUES, SCATTER_FORWARD));
  PetscCall(VecScatterEnd(ctx->gather, x, ctx->x_all, INSERT_VALUES, SCATTER_FORWARD));
  const PetscScalar* xa;
  PetscScalar* ya;
  PetscInt n_all, n_local;
  PetscCall(VecGetSize(ctx->x_all, &n_all));
  PetscCall(VecGetLocalSize(y, &n_local));
  PetscCall(VecGetArrayRead(ctx->x_all, &xa));
  PetscCall(VecGetArray(y, &ya));
  ctx->op->apply(std::span<const cplx>(xa, std::size_t(n_all)),
                 std::span<cplx>(ya, std::size_t(n_local)));
  PetscCall(VecRestoreArray(y, &ya));
  PetscCall(VecRestoreArrayRead(ctx->x_all, &xa));
  PetscCall(PetscLogEventEnd(ctx->events.operator_apply, A, x, y, 0));
  PetscLogDouble end;
  PetscCall(PetscTime(&end));
  ctx->mat_mults++;
  ctx->mat_mult_seconds += end - start;
  PetscFunctionReturn(0);
}

PetscErrorCode shell_diagonal(Mat A, Vec d) {
  ShellContext* ctx;
  PetscFunctionBeginUser;
  PetscCall(MatShellGetContext(A, &ctx));
  const std::vector<cplx> diag = ctx->op->diagonal();
  PetscScalar* da;
  PetscCall(VecGetArray(d, &da));
  std::copy(diag.begin(), diag.end(), da);
  PetscCall(VecRestoreArray(d, &da));
  PetscFunctionReturn(0);
}

std::vector<double> part(const std::vector<cplx>& v, double (*f)(const cplx&)) {
  std::vector<double> out(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) out[i] = f(v[i]);
  return out;
}

}  // namespace

PetscErrorCode run_bem_solve(MPI_Comm comm) {
  PetscFunctionBeginUser;
  PetscMPIInt rank, size;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  PetscCallMPI(MPI_Comm_size(comm, &size));
  LogEvents events;
  PetscClassId class_id;
  PetscCall(PetscClassIdRegister("fmbem", &class_id));
  PetscCall(PetscLogEventRegister("BEMNearSetup", class_id, &events.near_setup));
  PetscCall(PetscLogEventRegister("BEMOperator", class_id, &events.operator_apply));

  SolveOptions opt;
  PetscCall(read_solve_options(comm, &opt));
  PetscLogDouble t_start, t_setup, t_solved;
  PetscCall(PetscTime(&t_start));

  // Every rank reads the mesh (it is small next to the operator's data).
  const Mesh mesh = io::load_mesh(opt.mesh);
  if (opt.problem.kind == ProblemKind::Radiation && !opt.source_given)
    opt.problem.source = mesh.bounding_box_center();
  const Problem problem(mesh, opt.problem);
  const Discretization disc(mesh, opt.quadrature_points);
  const PetscInt n = PetscInt(mesh.size());

  Vec x, b;
  PetscCall(VecCreate(comm, &x));
  PetscCall(VecSetSizes(x, PETSC_DECIDE, n));
  PetscCall(VecSetFromOptions(x));
  PetscCall(VecDuplicate(x, &b));
  PetscInt row_begin, row_end;
  PetscCall(VecGetOwnershipRange(x, &row_begin, &row_end));
  const RowRange rows{std::size_t(row_begin), std::size_t(row_end)};

  FmmEvents fmm_events(class_id);
  std::unique_ptr<CorrectedLayerPotentials> layer_potentials;
  const FmmLayerPotentials* fmm_layers = nullptr;
  PetscCall(PetscLogEventBegin(events.near_setup, 0, 0, 0, 0));
  if (opt.operator_backend == "fmm") {
    auto fast = std::make_unique<FmmLayerPotentials>(disc, opt.problem.k, rows, opt.near, opt.fmm,
                                                     &fmm_events);
    fmm_layers = fast.get();
    layer_potentials = std::move(fast);
  } else {
    layer_potentials = std::make_unique<DirectLayerPotentials>(disc, opt.problem.k, rows, opt.near);
  }
  PetscCall(PetscLogEventEnd(events.near_setup, 0, 0, 0, 0));
  const CorrectedLayerPotentials& layers = *layer_potentials;
  if (fmm_layers) {
    const fmm::FmmStatistics& stats = fmm_layers->fmm().statistics();
    if (opt.fmm_view) PetscCall(PetscPrintf(comm, "%s", fmm_layers->fmm().describe().c_str()));
    if (!fmm::low_frequency_accurate(stats))
      PetscCall(PetscPrintf(comm,
                            "bem_solve: warning: k * cell width = %.3g on the coarsest FMM level "
                            "is beyond the low-frequency range for p = %d: the MatMult error "
                            "may exceed -fmm_eps. Raise -fmm_p or use -bem_operator direct.\n",
                            stats.max_kappa, stats.order));
  }
  const BoundaryOperator op(layers, problem.coefficients());

  ShellContext ctx{&op, nullptr, nullptr, events};
  PetscCall(VecScatterCreateToAll(x, &ctx.gather, &ctx.x_all));
  Mat A;
  PetscCall(MatCreateShell(comm, row_end - row_begin, row_end - row_begin, n, n, &ctx, &A));
  PetscCall(MatShellSetOperation(A, MATOP_MULT, (void (*)(void))shell_mult));
  PetscCall(MatShellSetOperation(A, MATOP_GET_DIAGONAL, (void (*)(void))shell_diagonal));

  {
    const std::vector<cplx> f = problem.right_hand_side(layers);
    PetscScalar* ba;
    PetscCall(VecGetArray(b, &ba));
    std::copy(f.begin(), f.end(), ba);
    PetscCall(VecRestoreArray(b, &ba));
  }
  PetscCall(PetscTime(&t_setup));

  KSP ksp;
  PC pc;
  PetscCall(KSPCreate(comm, &ksp));
  PetscCall(KSPSetOperators(ksp, A, A));
  PetscCall(KSPSetType(ksp, KSPGMRES));
  PetscCall(KSPGetPC(ksp, &pc));
  PetscCall(PCSetType(pc, PCJACOBI));
  PetscCall(KSPSetTolerances(ksp, 1e-5, PETSC_DEFAULT, PETSC_DEFAULT, PETSC_DEFAULT));
  PetscCall(KSPSetInitialGuessNonzero(ksp, PETSC_FALSE));
  PetscCall(KSPSetFromOptions(ksp));
  PetscCall(KSPSolve(ksp, b, x));
  PetscCall(PetscTime(&t_solved));
  PetscInt iterations;
  KSPConvergedReason reason;
  PetscCall(KSPGetIterationNumber(ksp, &iterations));
  PetscCall(KSPGetConvergedReason(ksp, &reason));

  // Gather the solution on rank 0 for the report and the files.
  VecScatter to_zero;
  Vec x0;
  PetscCall(VecScatterCreateToZero(x, &to_zero, &x0));
  PetscCall(VecScatterBegin(to_zero, x, x0, INSERT_VALUES, SCATTER_FORWARD));
  PetscCall(VecScatterEnd(to_zero, x, x0, INSERT_VALUES, SCATTER_FORWARD));

  const NearFieldCorrection& near_field = layers.near_field();
  std::size_t near_bytes_total = 0, near_nnz = 0;
  {
    unsigned long long local[2] = {near_field.memory_bytes(), near_field.nonzeros()}, total[2];
    PetscCallMPI(MPI_Allreduce(local, total, 2, MPI_UNSIGNED_LONG_LONG, MPI_SUM, comm));
    near_bytes_total = total[0];
    near_nnz = total[1];
  }

  if (rank == 0) {
    const PetscScalar* xa;
    PetscCall(VecGetArrayRead(x0, &xa));
    const std::vector<cplx> solution(xa, xa + n);
    PetscCall(VecRestoreArrayRead(x0, &xa));
    const std::string u = problem.unknown_name();
    PetscCall(PetscPrintf(PETSC_COMM_SELF, "\nfmbem bem_solve summary\n"));
    PetscCall(PetscPrintf(PETSC_COMM_SELF,
                          "  mesh            %s: N = %" PetscInt_FMT
                          " elements, %zu vertices, diameter %.4g\n",
                          opt.mesh.c_str(), n, mesh.vertices().size(), mesh.diameter()));
    if (mesh.flipped_triangles() > 0)
      PetscCall(
          PetscPrintf(PETSC_COMM_SELF,
                      "  orientation     %zu triangles flipped to make normals point outward\n",
                      mesh.flipped_triangles()));
    PetscCall(PetscPrintf(PETSC_COMM_SELF, "  problem         %s, k = %g\n",
                          problem.description().c_str(), opt.problem.k));
    PetscCall(PetscPrintf(
        PETSC_COMM_SELF,
        "  discretization  piecewise constant, collocation at centroids, %d-point Gauss rule\n",
        opt.quadrature_points));
    PetscCall(PetscPrintf(PETSC_COMM_SELF,
                          "  operator        %s on %d rank(s); near-field correction %zu pairs, "
                          "%.1f MB\n",
                          opt.operator_backend.c_str(), size, near_nnz, near_bytes_total / 1e6));
    if (fmm_layers) {
      const fmm::FmmStatistics& stats = fmm_layers->fmm().statistics();
      PetscCall(PetscPrintf(PETSC_COMM_SELF,
                            "  fmm             p = %d, %d levels, %zu leaves (max leaf %d), "
                            "%.1f MB on rank 0\n",
                            stats.order, stats.levels, stats.leaves, opt.fmm.max_leaf,
                            stats.total_bytes() / 1e6));
    }
    PetscCall(PetscPrintf(PETSC_COMM_SELF, "  solver          %" PetscInt_FMT " iterations, %s\n",
                          iterations, KSPConvergedReasons[reason]));
    PetscCall(PetscPrintf(
        PETSC_COMM_SELF,
        "  times           set-up %.3f s, solve %.3f s, %.4f s per MatMult (%" PetscInt_FMT
        " MatMults)\n",
        t_setup - t_start, t_solved - t_setup,
        ctx.mat_mults ? ctx.mat_mult_seconds / ctx.mat_mults : 0.0, ctx.mat_mults));
    std::vector<io::CellField> fields = {
        {u + "_re", part(solution, [](const cplx& c) { return c.real(); })},
        {u + "_im", part(solution, [](const cplx& c) { return c.imag(); })},
        {u + "_abs", part(solution, [](const cplx& c) { return std::abs(c); })}};
    if (const auto& exact = problem.exact_solution()) {
      const ErrorNorms err = error_norms(mesh, solution, *exact);
      PetscCall(
          PetscPrintf(PETSC_COMM_SELF, "  exact           %s\n", problem.exact_name().c_str()));
      PetscCall(PetscPrintf(PETSC_COMM_SELF,
                            "  error           max |%s - exact| = %.3e, relative L2 = %.3e\n",
                            u.c_str(), err.max_abs, err.relative_l2));
      std::vector<double> err_abs(solution.size());
      for (std::size_t e = 0; e < solution.size(); ++e)
        err_abs[e] = std::abs(solution[e] - (*exact)[e]);
      fields.push_back({"err_abs", std::move(err_abs)});
    } else {
      PetscCall(
          PetscPrintf(PETSC_COMM_SELF, "  exact           none for this geometry and problem\n"));
    }
    if (!opt.vtu_path.empty()) {
      io::write_vtu(opt.vtu_path, mesh, fields);
      PetscCall(PetscPrintf(PETSC_COMM_SELF, "  wrote           %s\n", opt.vtu_path.c_str()));
    }
    if (!opt.csv_path.empty()) {
      io::write_csv(opt.csv_path, mesh, solution);
      PetscCall(PetscPrintf(PETSC_COMM_SELF, "  wrote           %s\n", opt.csv_path.c_str()));
    }
  }

  PetscCall(VecScatterDestroy(&to_zero));
  PetscCall(VecDestroy(&x0));
  PetscCall(KSPDestroy(&ksp));
  PetscCall(MatDestroy(&A));
  PetscCall(VecScatterDestroy(&ctx.gather));
  PetscCall(VecDestroy(&ctx.x_all));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&b));
  PetscFunctionReturn(0);
}

}  // namespace fmbem
