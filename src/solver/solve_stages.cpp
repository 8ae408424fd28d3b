#include "fmbem/solver/solve_stages.hpp"

#include <petsctime.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <functional>
#include <span>
#include <string>

#include "fmbem/bem/direct_layer_potentials.hpp"
#include "fmbem/bem/regularised_operator.hpp"
#include "fmbem/core/error.hpp"
#include "fmbem/solver/collective.hpp"
#include "fmbem/solver/leaf_block_preconditioner.hpp"

namespace fmbem {
namespace {

// One PETSc event per phase of an observed piece (the FMM's, the distribution's), named
// prefix + phase_name(phase), so that -log_view shows them.
template <class Phase>
class PhaseEvents final : public fmm::PhaseObserver<Phase> {
 public:
  PhaseEvents(PetscClassId class_id, const char *prefix) {
    for (int i = 0; i < int(Phase::count); ++i) {
      const std::string name = std::string(prefix) + phase_name(Phase(i));
      PetscCallAbort(PETSC_COMM_SELF, PetscLogEventRegister(name.c_str(), class_id, &events_[i]));
    }
  }
  void begin(Phase phase) override {
    PetscCallAbort(PETSC_COMM_SELF, PetscLogEventBegin(events_[int(phase)], 0, 0, 0, 0));
  }
  void end(Phase phase) override {
    PetscCallAbort(PETSC_COMM_SELF, PetscLogEventEnd(events_[int(phase)], 0, 0, 0, 0));
  }

 private:
  std::array<PetscLogEvent, int(Phase::count)> events_{};
};

PetscErrorCode shell_mult(Mat A, Vec x, Vec y) {
  OperatorShell *ctx;
  PetscFunctionBeginUser;
  PetscCall(MatShellGetContext(A, &ctx));
  PetscLogDouble start;
  PetscCall(PetscTime(&start));
  PetscCall(PetscLogEventBegin(solve_events().operator_apply, A, x, y, 0));
  PetscCall(VecScatterBegin(ctx->gather, x, ctx->x_columns, INSERT_VALUES, SCATTER_FORWARD));
  PetscCall(VecScatterEnd(ctx->gather, x, ctx->x_columns, INSERT_VALUES, SCATTER_FORWARD));
  const PetscScalar *xa;
  PetscScalar *ya;
  PetscInt n_all, n_local;
  PetscCall(VecGetSize(ctx->x_columns, &n_all));
  PetscCall(VecGetLocalSize(y, &n_local));
  PetscCall(VecGetArrayRead(ctx->x_columns, &xa));
  PetscCall(VecGetArray(y, &ya));
  // No C++ exception may unwind through PETSc's C frames: it becomes a PETSc
  // error.
  std::string failure;
  try {
    ctx->op->apply(std::span<const cplx>(xa, std::size_t(n_all)),
                   std::span<cplx>(ya, std::size_t(n_local)));
  } catch (const std::exception &e) {
    failure = e.what();
  }
  PetscCheck(failure.empty(), PETSC_COMM_SELF, PETSC_ERR_LIB, "%s", failure.c_str());
  PetscCall(VecRestoreArray(y, &ya));
  PetscCall(VecRestoreArrayRead(ctx->x_columns, &xa));
  PetscCall(PetscLogEventEnd(solve_events().operator_apply, A, x, y, 0));
  PetscLogDouble end;
  PetscCall(PetscTime(&end));
  ctx->mat_mults++;
  ctx->mat_mult_seconds += end - start;
  PetscFunctionReturn(0);
}

PetscErrorCode shell_diagonal(Mat A, Vec d) {
  OperatorShell *ctx;
  PetscFunctionBeginUser;
  PetscCall(MatShellGetContext(A, &ctx));
  const std::vector<cplx> diag = ctx->op->diagonal();
  PetscScalar *da;
  PetscCall(VecGetArray(d, &da));
  std::copy(diag.begin(), diag.end(), da);
  PetscCall(VecRestoreArray(d, &da));
  PetscFunctionReturn(0);
}

// Tolerances PETSc accepts but that make no solve: caught before it starts.
PetscErrorCode check_tolerances(KSP ksp) {
  PetscFunctionBeginUser;
  PetscReal rtol, abstol, dtol;
  PetscInt max_it;
  PetscCall(KSPGetTolerances(ksp, &rtol, &abstol, &dtol, &max_it));
  char text[128] = "";
  if (!(rtol >= 0 && rtol < 1))
    std::snprintf(text, sizeof text, "-ksp_rtol %g: must lie in [0, 1)", double(rtol));
  else if (!(abstol >= 0))
    std::snprintf(text, sizeof text, "-ksp_atol %g: must be >= 0", double(abstol));
  else if (max_it < 1)
    std::snprintf(text, sizeof text, "-ksp_max_it %" PetscInt_FMT ": must be at least 1", max_it);
  if (*text) throw Error(text);
  PetscFunctionReturn(0);
}

// The near-field block of the operator (near_matrix_rows) as an AIJ matrix with this rank's
// rows: sequential on one rank, MPI (diagonal and off-diagonal blocks) on more.
PetscErrorCode assemble_near_matrix(MPI_Comm comm, const SparseRows &near, RowRange rows,
                                    PetscInt n, Mat *matrix) {
  PetscFunctionBeginUser;
  const std::vector<cplx> &block = near.values;
  const auto &row_start = near.row_start;
  const auto &columns = near.columns;
  const PetscInt m = PetscInt(rows.size());
  std::vector<PetscInt> diagonal_nnz(rows.size()), off_diagonal_nnz(rows.size());
  for (std::size_t r = 0; r < rows.size(); ++r)
    for (std::int64_t at = row_start[r]; at < row_start[r + 1]; ++at) {
      const std::size_t j = std::size_t(columns[std::size_t(at)]);
      (j >= rows.begin && j < rows.end ? diagonal_nnz : off_diagonal_nnz)[r]++;
    }
  PetscCall(MatCreate(comm, matrix));
  PetscCall(MatSetSizes(*matrix, m, m, n, n));
  PetscCall(MatSetType(*matrix, MATAIJ));
  PetscCall(MatSeqAIJSetPreallocation(*matrix, 0, diagonal_nnz.data()));
  PetscCall(MatMPIAIJSetPreallocation(*matrix, 0, diagonal_nnz.data(), 0, off_diagonal_nnz.data()));
  std::vector<PetscInt> row_columns;
  for (std::size_t r = 0; r < rows.size(); ++r) {
    const PetscInt row = PetscInt(rows.begin + r);
    const std::int64_t first = row_start[r], count = row_start[r + 1] - first;
    row_columns.assign(columns.begin() + first, columns.begin() + first + count);
    PetscCall(MatSetValues(*matrix, 1, &row, PetscInt(count), row_columns.data(),
                           reinterpret_cast<const PetscScalar *>(block.data() + first),
                           INSERT_VALUES));
  }
  PetscCall(MatAssemblyBegin(*matrix, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(*matrix, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(0);
}

}  // namespace

const SolveEvents &solve_events() {
  static const SolveEvents events = [] {
    SolveEvents e;
    PetscClassId class_id;
    PetscCallAbort(PETSC_COMM_SELF, PetscClassIdRegister("fmbem", &class_id));
    const auto event = [class_id](const char *name, PetscLogEvent *id) {
      PetscCallAbort(PETSC_COMM_SELF, PetscLogEventRegister(name, class_id, id));
    };
    event("BEMNearSetup", &e.near_setup);
    event("BEMCurvature", &e.curvature);
    event("BEMPartition", &e.partition);
    event("BEMOperator", &e.operator_apply);
    event("BEMRegulariser", &e.regulariser);
    event("BEMOutput", &e.outputs);
    // Alive as long as the process: PETSc's log keeps their ids.
    e.fmm = new PhaseEvents<fmm::FmmPhase>(class_id, "FMM");
    e.regulariser_fmm = new PhaseEvents<fmm::FmmPhase>(class_id, "BEMRegFMM");
    e.distribution = new PhaseEvents<fmm::DistributionPhase>(class_id, "Dist");
    return e;
  }();
  return events;
}

PetscErrorCode build_operator_stage(const SurfaceStage &surface, const Problem &problem,
                                    PetscLogDouble t_start, OperatorStage &stage) {
  PetscFunctionBeginUser;
  const MPI_Comm comm = surface.comm;
  const PetscMPIInt rank = surface.rank, size = surface.size;
  const SolveOptions &opt = surface.opt;
  const Mesh &mesh = surface.mesh;
  const Discretization &disc = surface.disc;
  const PetscInt n = surface.n, row_begin = surface.row_begin, row_end = surface.row_end;
  // This rank's rows as elements of `mesh` (the operator's, the problem's), and as PETSc's.
  const RowRange rows = surface.rows, petsc_rows{std::size_t(row_begin), std::size_t(row_end)};
  const std::span<const std::size_t> solver_elements =
      surface.distribution ? surface.distribution->local->solver_elements()
                           : std::span<const std::size_t>();
  const Vec x = surface.x;
  const SolveEvents &events = solve_events();
  const double k = problem.spec().k;
  stage.t_start = t_start;
  std::unique_ptr<CorrectedLayerPotentials> &layer_potentials = stage.layers;
  const FmmLayerPotentials *&fmm_layers = stage.fmm_layers;
  PetscCall(PetscLogEventBegin(events.near_setup, 0, 0, 0, 0));
  // The distributed FMM is built for this rank's part: it keeps only the source points the part
  // reads.
  std::optional<fmm::FmmPart> fmm_part;
  if (surface.distribution)
    fmm_part.emplace(fmm::FmmPart{surface.distribution->local->locally_essential_tree(),
                                  surface.distribution->local->tree().get()});
  // Burton-Miller's curvature correction first, so that its two Laplace operators (FMMs and
  // near-field corrections) are gone before the Helmholtz one is built: the set-up's peak holds
  // two operators, not three.
  if (opt.curvature_correction) {
    // c_i from the Laplace layer potentials of the same backend (plain and with coupling 1);
    // the geometric error is the kernel's singular part, the Helmholtz one differs by
    // O((k h)^2). Added to S + alpha D' as alpha c_i (below). k-independent: formed once a surface.
    if (!surface.curvature_correction) {
      PetscCall(PetscLogEventBegin(events.curvature, 0, 0, 0, 0));
      // Each Laplace operator built when needed and freed before the next: one alive at a time.
      const auto make =
          [&](cplx coupling,
              const std::vector<double> &image_weights) -> std::unique_ptr<LayerPotentials> {
        NearFieldOptions near = opt.near;
        near.image_weights = image_weights;
        if (opt.operator_backend != OperatorBackend::fmm)
          return std::make_unique<DirectLayerPotentials>(disc, 0.0, rows, near, coupling);
        // Built on every rank before any of them exchanges (a failure on one, a GPU out of
        // memory or a halo a defect left too thin, is every rank's: none waits for it).
        std::unique_ptr<FmmLayerPotentials> laplace;
        on_every_rank(comm, [&] {
          laplace = std::make_unique<FmmLayerPotentials>(
              disc, 0.0, rows, near, opt.fmm, nullptr, coupling, DensityModel::constant, fmm_part);
          check_curvature_columns(mesh, *laplace);
        });
        // The same tree as the Helmholtz FMM's (same splitting points, leaf size and order), so
        // the same locally essential tree: each rank forms only its own leaves' moments.
        if (surface.distribution)
          laplace->distribute(surface.distribution->local->locally_essential_tree(), comm);
        return laplace;
      };
      // The coupled operator's coupling: a length of the body's order, the same on every rank
      // (the largest part's diameter), so that S[1] and L D'[1] are alike in size.
      double length = mesh.diameter();
      PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &length, 1, MPI_DOUBLE, MPI_MAX, comm));
      surface.curvature_correction = adjoint_double_layer_curvature_correction(
          mesh, [&](const std::vector<double> &weights) { return make(0.0, weights); },
          [&](const std::vector<double> &weights) { return make(length, weights); },
          opt.near.feature_angle,
          surface.distribution ? &surface.distribution->feature_segments : nullptr);
      PetscCall(PetscLogEventEnd(events.curvature, 0, 0, 0, 0));
    }
  }
  if (opt.operator_backend == OperatorBackend::fmm) {
    std::unique_ptr<FmmLayerPotentials> fast;
    on_every_rank(comm, [&] {
      fast = std::make_unique<FmmLayerPotentials>(disc, k, rows, opt.near, opt.fmm, events.fmm,
                                                  problem.layer_coupling(), opt.double_density,
                                                  fmm_part);
    });
    if (surface.distribution) {
      // Each rank forms the partial multipoles of its own leaves and exchanges those its peers'
      // M2L lists read.
      fast->distribute(surface.distribution->local->locally_essential_tree(), comm,
                       opt.fmm_overlap);
    } else if (size > 1)
      // Every rank has the same tree: each forms the moments of its share of the leaves, and one
      // sum over the ranks per MatMult makes them whole (instead of each rank repeating P2M).
      fast->share_upward_pass(rank, size, [comm](std::span<cplx> multipoles) {
        MPI_Allreduce(MPI_IN_PLACE, multipoles.data(), int(multipoles.size()), MPI_C_DOUBLE_COMPLEX,
                      MPI_SUM, comm);
      });
    fmm_layers = fast.get();
    layer_potentials = std::move(fast);
  } else {
    layer_potentials = std::make_unique<DirectLayerPotentials>(
        disc, k, rows, opt.near, problem.layer_coupling(), opt.double_density);
  }
  const bool regularised = problem.spec().formulation == Formulation::Regularised;
  stage.regularised = regularised;
  if (opt.curvature_correction) {
    // Of D' itself where the layers give it apart, else of alpha D'.
    const std::vector<double> &c = *surface.curvature_correction;
    const cplx scale = regularised ? cplx(1.0) : problem.coupling();
    std::vector<cplx> extra(c.size());
    for (std::size_t r = 0; r < c.size(); ++r) extra[r] = scale * c[r];
    layer_potentials->set_single_layer_diagonal_extra(std::move(extra));
  }
  // The regularised formulation's S~: the single layer of the screened kernel
  // exp(-kappa r) / (4 pi r), kappa = -bem_rbm_kappa times k (symmetric positive definite like
  // the Laplace one, kappa = 0, so the equation stays unique; kappa ~ k/2 keeps the low modes'
  // regularisation bounded where the Laplace one grows like k / |xi|: flat iterations in k), on
  // the same rows, its product timed apart.
  // S~ need not be accurate: the same S~ in the operator and in f keeps the exact solution, and
  // a change of S~ moves the discrete solution by that change times the residual of the
  // discretisation (the centroid rule against the 6-point one: 3.1e-6 of the solution on
  // icosphere:3, 9.9e-7 on icosphere:4, below the solver's default tolerance). So: a looser FMM
  // tolerance, and the centroid rule for its regular part (a sixth of the points to sum). The
  // distributed FMM's parts are cut from a tree of the operator's points: there S~ keeps the
  // operator's rule (its solution differs from one rank's by that much).
  std::unique_ptr<CorrectedLayerPotentials> &regulariser = stage.regulariser;
  std::optional<Discretization> &centroid_rule = stage.centroid_rule;
  if (regularised && !surface.distribution) centroid_rule.emplace(mesh, 1);
  const Discretization &regulariser_disc = centroid_rule ? *centroid_rule : disc;
  if (regularised) {
    // Its close pairs' S by 6 angular points a piece: within 1e-10 of 48 on a mesh's own close
    // pairs, 1e-2 on targets 1e-4 of a size from an element (bench/near_quad_convergence.cpp).
    NearFieldOptions regulariser_near = opt.near;
    regulariser_near.angular_points = std::min(opt.near.angular_points, 6);
    fmm::FmmOptions regulariser_fmm = opt.fmm;
    regulariser_fmm.order = 0;
    regulariser_fmm.tolerance = std::max(opt.fmm.tolerance, 1e-3);
    const fmm::Wavenumber screened =
        fmm::Wavenumber::screened(problem.spec().regulariser_kappa_factor * k);
    if (opt.operator_backend == OperatorBackend::fmm) {
      std::unique_ptr<FmmLayerPotentials> single_layer;
      on_every_rank(comm, [&] {
        single_layer = std::make_unique<FmmLayerPotentials>(
            regulariser_disc, screened, rows, regulariser_near, regulariser_fmm,
            events.regulariser_fmm, 0.0, DensityModel::constant, fmm_part);
      });
      if (surface.distribution)
        single_layer->distribute(surface.distribution->local->locally_essential_tree(), comm);
      else if (size > 1)
        single_layer->share_upward_pass(rank, size, [comm](std::span<cplx> multipoles) {
          MPI_Allreduce(MPI_IN_PLACE, multipoles.data(), int(multipoles.size()),
                        MPI_C_DOUBLE_COMPLEX, MPI_SUM, comm);
        });
      regulariser = std::move(single_layer);
    } else {
      regulariser = std::make_unique<DirectLayerPotentials>(regulariser_disc, screened, rows,
                                                            regulariser_near, 0.0);
    }
  }
  PetscCall(PetscLogEventEnd(events.near_setup, 0, 0, 0, 0));
  const CorrectedLayerPotentials &layers = *layer_potentials;
  if (fmm_layers) {
    const fmm::FmmStatistics &stats = fmm_layers->fmm().statistics();
    if (opt.fmm_view) PetscCall(PetscPrintf(comm, "%s", fmm_layers->fmm().describe().c_str()));
    if (!fmm::low_frequency_accurate(stats))
      PetscCall(PetscPrintf(comm,
                            "bem_solve: warning: k * cell width = %.3g on the coarsest FMM level "
                            "is beyond the low-frequency range for p = %d: the MatMult error "
                            "may exceed -fmm_eps. Raise -fmm_p or use -bem_operator direct.\n",
                            stats.max_kappa, stats.order));
  }
  stage.coefficients = regularised ? OperatorCoefficients{} : problem.coefficients();
  const OperatorCoefficients &coefficients = stage.coefficients;
  std::unique_ptr<SurfaceOperator> &op = stage.op;
  if (regularised) {
    PetscCall(VecDuplicate(x, &stage.h_rows));
    const std::span<const std::size_t> columns = regulariser->column_elements();
    const std::size_t count = regulariser->columns();
    std::vector<PetscInt> indices(count);
    for (std::size_t j = 0; j < count; ++j) {
      const std::size_t e = columns.empty() ? j : columns[j];
      indices[j] = PetscInt(surface.distribution ? solver_elements[e] : e);
    }
    IS from, to;
    PetscCall(ISCreateGeneral(PETSC_COMM_SELF, PetscInt(count), indices.data(), PETSC_COPY_VALUES,
                              &from));
    PetscCall(ISCreateStride(PETSC_COMM_SELF, PetscInt(count), 0, 1, &to));
    PetscCall(VecCreateSeq(PETSC_COMM_SELF, PetscInt(count), &stage.h_columns));
    PetscCall(VecScatterCreate(stage.h_rows, from, stage.h_columns, to, &stage.h_scatter));
    PetscCall(ISDestroy(&from));
    PetscCall(ISDestroy(&to));
    // Called inside MatMult: PETSc errors become exceptions there (shell_mult turns them back).
    const OperatorStage *held = &stage;
    const auto gather = [held](std::span<const cplx> on_rows, std::span<cplx> on_columns) {
      const Vec h_rows = held->h_rows, h_columns = held->h_columns;
      const VecScatter h_scatter = held->h_scatter;
      const auto check = [](PetscErrorCode code) {
        if (code)
          throw Error("the regulariser's gather failed (PETSc error " + std::to_string(int(code)) +
                      ")");
      };
      PetscScalar *ha;
      check(VecGetArray(h_rows, &ha));
      std::copy(on_rows.begin(), on_rows.end(), ha);
      check(VecRestoreArray(h_rows, &ha));
      check(VecScatterBegin(h_scatter, h_rows, h_columns, INSERT_VALUES, SCATTER_FORWARD));
      check(VecScatterEnd(h_scatter, h_rows, h_columns, INSERT_VALUES, SCATTER_FORWARD));
      const PetscScalar *ca;
      check(VecGetArrayRead(h_columns, &ca));
      std::copy(ca, ca + on_columns.size(), on_columns.begin());
      check(VecRestoreArrayRead(h_columns, &ca));
    };
    const PetscLogEvent regulariser_event = events.regulariser;
    const auto timed = [regulariser_event](const std::function<void()> &work) {
      PetscCallAbort(PETSC_COMM_SELF, PetscLogEventBegin(regulariser_event, 0, 0, 0, 0));
      work();
      PetscCallAbort(PETSC_COMM_SELF, PetscLogEventEnd(regulariser_event, 0, 0, 0, 0));
    };
    // One process holding every row needs no gather: H x is on the columns already.
    const bool whole = size == 1 && !surface.distribution;
    op = std::make_unique<RegularisedOperator>(
        layers, *regulariser, problem.regularised_coefficients(),
        whole ? RegularisedOperator::Gather{} : RegularisedOperator::Gather(gather), timed);
  } else {
    op = std::make_unique<BoundaryOperator>(layers, coefficients);
  }

  VecScatter &density_scatter = stage.density_scatter;
  Vec &x_columns = stage.x_columns;
  stage.columns_read = layers.columns();
  if (surface.distribution) {
    const std::span<const std::size_t> columns = layers.column_elements();
    std::vector<PetscInt> indices(columns.size());
    for (std::size_t j = 0; j < columns.size(); ++j)
      indices[j] = PetscInt(solver_elements[columns[j]]);
    IS from, to;
    PetscCall(ISCreateGeneral(PETSC_COMM_SELF, PetscInt(indices.size()), indices.data(),
                              PETSC_COPY_VALUES, &from));
    PetscCall(ISCreateStride(PETSC_COMM_SELF, PetscInt(indices.size()), 0, 1, &to));
    PetscCall(VecCreateSeq(PETSC_COMM_SELF, PetscInt(indices.size()), &x_columns));
    PetscCall(VecScatterCreate(x, from, x_columns, to, &density_scatter));
    PetscCall(ISDestroy(&from));
    PetscCall(ISDestroy(&to));
  }
  stage.ctx = OperatorShell{op.get(), density_scatter ? density_scatter : surface.gather,
                            x_columns ? x_columns : surface.x_all};
  Mat &A = stage.A;
  PetscCall(MatCreateShell(comm, row_end - row_begin, row_end - row_begin, n, n, &stage.ctx, &A));
  PetscCall(MatShellSetOperation(A, MATOP_MULT, (void (*)(void))shell_mult));
  if (op->has_diagonal())
    PetscCall(MatShellSetOperation(A, MATOP_GET_DIAGONAL, (void (*)(void))shell_diagonal));
  // The operator's near field for a leaf_block PC (-pc_type leaf_block reads it from A).
  if (!regularised) {
    stage.leaf_block_source =
        LeafBlockSource{&mesh, rows, &layers, coefficients, opt.planes.empty()};
    PetscCall(attach_leaf_block_source(A, &stage.leaf_block_source));
  }

  KSP &ksp = stage.ksp;
  PC pc;
  PetscCall(KSPCreate(comm, &ksp));
  PetscCall(KSPSetOperators(ksp, A, A));
  PetscCall(KSPSetType(ksp, KSPGMRES));
  PetscCall(KSPGetPC(ksp, &pc));
  // The PC and whether the near-field matrix is assembled for it are chosen (and checked) in
  // options.cpp.
  PetscCall(PCSetType(pc, opt.pc_type.c_str()));
  // -pc_leaf_block_* given override these (-bem_pc_block and its kin).
  if (opt.pc == PreconditionerChoice::leaf_block)
    PetscCall(set_leaf_block_settings(pc, opt.leaf_block));
  PetscCall(KSPSetTolerances(ksp, 1e-5, PETSC_DEFAULT, PETSC_DEFAULT, PETSC_DEFAULT));
  PetscCall(KSPSetInitialGuessNonzero(ksp, PETSC_FALSE));
  PetscCall(KSPSetFromOptions(ksp));
  PetscCall(check_tolerances(ksp));
  // The near-field block as the preconditioning matrix, for the PCs that factor or split one;
  // or ours, the leaf blocks.
  Mat &near_matrix = stage.near_matrix;
  double &near_matrix_seconds = stage.near_matrix_seconds,
         &near_matrix_nonzeros = stage.near_matrix_nonzeros,
         &near_matrix_bytes = stage.near_matrix_bytes;
  std::string &pc_name = stage.pc_name;
  PetscLogDouble t_pc_start, t_pc_ready;
  PetscCall(PetscTime(&t_pc_start));
  {
    PCType pc_type;
    PetscCall(PCGetType(pc, &pc_type));
    const std::string type = pc_type ? pc_type : "";
    pc_name = type;
    if (type != opt.pc_type)
      throw Error("internal: the PC type " + type + " is not the one the options chose (" +
                  opt.pc_type + ")");
    const bool assemble = opt.assemble_near_matrix;
    if (assemble) {
      PetscLogDouble t0, t1;
      PetscCall(PetscTime(&t0));
      SparseRows near_rows =
          near_matrix_rows(layers, coefficients, opt.near_matrix_pairs,
                           fmm_layers ? &fmm_layers->fmm() : nullptr, disc.points_per_element());
      // Its columns are elements of the rank's part: PETSc's are their solver indices (the
      // same order: the part's elements are ascending in it).
      if (surface.distribution)
        for (std::int32_t &j : near_rows.columns) j = std::int32_t(solver_elements[std::size_t(j)]);
      PetscCall(assemble_near_matrix(comm, near_rows, petsc_rows, n, &near_matrix));
      PetscCall(PetscTime(&t1));
      near_matrix_seconds = t1 - t0;
      MatInfo info;
      PetscCall(MatGetInfo(near_matrix, MAT_GLOBAL_SUM, &info));
      near_matrix_nonzeros = info.nz_used;
      // Values and column indices (AIJ's row offsets are small beside them).
      near_matrix_bytes = info.nz_allocated * double(sizeof(PetscScalar) + sizeof(PetscInt));
      // The near-field matrix is the operator's too: a leaf_block PC reads the operator there.
      if (!regularised) PetscCall(attach_leaf_block_source(near_matrix, &stage.leaf_block_source));
      PetscCall(KSPSetOperators(ksp, A, near_matrix));
    }
  }
  PetscCall(KSPSetUp(ksp));
  PetscCall(leaf_block_state(pc, &stage.leaf_blocks, &stage.leaf_block_settings));
  // Block PCs (bjacobi, asm) factor their blocks at the first solve unless asked here: the
  // summary's PC set-up time and memory then include them.
  PetscCall(KSPSetUpOnBlocks(ksp));
  PetscCall(PetscTime(&t_pc_ready));
  stage.pc_seconds = t_pc_ready - t_pc_start;
  // The PC's own memory (the near-field matrix apart), summed over the ranks.
  {
    double local = 0.0;
    const LeafBlockPreconditioner *leaf_blocks = stage.leaf_blocks;
    if (leaf_blocks)
      local = double(leaf_blocks->host_bytes() + leaf_blocks->device_bytes());
    else
      PetscCall(preconditioner_bytes(pc, &local));
    PetscCallMPI(MPI_Allreduce(&local, &stage.pc_bytes, 1, MPI_DOUBLE, MPI_SUM, comm));
    unsigned long long count = leaf_blocks ? leaf_blocks->blocks().count() : 0,
                       largest = leaf_blocks ? leaf_blocks->blocks().largest() : 0;
    PetscCallMPI(
        MPI_Allreduce(&count, &stage.leaf_block_count, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, comm));
    PetscCallMPI(MPI_Allreduce(&largest, &stage.leaf_block_largest, 1, MPI_UNSIGNED_LONG_LONG,
                               MPI_MAX, comm));
  }
  // The summary's statistics of the operator, reduced over the ranks.
  {
    const NearFieldCorrection &near_field = layers.near_field();
    // Every rank has the same FMM tree and sums the near pairs of its own rows.
    unsigned long long local[3] = {near_field.memory_bytes(), near_field.pairs(),
                                   fmm_layers ? fmm_layers->fmm().statistics().near_pairs : 0},
                       total[3];
    PetscCallMPI(MPI_Allreduce(local, total, 3, MPI_UNSIGNED_LONG_LONG, MPI_SUM, comm));
    stage.near_bytes_total = total[0];
    stage.near_nonzeros = total[1];
    stage.fmm_near_pairs = total[2];
  }
  // The elements a rank holds (its part with the halo) and the quadratic read's fits it forms
  // (what its operator reads), largest over the ranks.
  stage.held_elements = mesh.size();
  if (surface.distribution) {
    if (layers.reconstruction())
      for (std::size_t e = 0; e < mesh.size(); ++e)
        stage.fitted_elements += layers.reconstruction()->fitted(e) ? 1 : 0;
    unsigned long long held[2] = {stage.held_elements, stage.fitted_elements};
    PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, held, 2, MPI_UNSIGNED_LONG_LONG, MPI_MAX, comm));
    stage.held_elements = held[0];
    stage.fitted_elements = held[1];
    const double local[3] = {
        surface.distribution->local->work(), double(stage.columns_read - rows.size()),
        double(surface.distribution->local->locally_essential_tree().received_multipoles()) * 16.0 *
            double(fmm_layers->fmm().order() * fmm_layers->fmm().order())};
    PetscCallMPI(MPI_Allreduce(local, stage.distribution_max, 3, MPI_DOUBLE, MPI_MAX, comm));
    PetscCallMPI(MPI_Allreduce(local, stage.distribution_sum, 3, MPI_DOUBLE, MPI_SUM, comm));
  }
  PetscCall(PetscTime(&stage.t_ready));
  PetscFunctionReturn(0);
}

PetscErrorCode right_hand_side(const OperatorStage &stage, const Problem &problem, Vec b) {
  PetscFunctionBeginUser;
  std::vector<cplx> f;
  if (!stage.regularised) {
    f = problem.right_hand_side(*stage.layers);
  } else {
    const Problem::RightHandSideParts parts = problem.right_hand_side_parts(*stage.layers);
    f = static_cast<const RegularisedOperator &>(*stage.op).right_hand_side(parts.value,
                                                                            parts.derivative);
  }
  PetscScalar *ba;
  PetscCall(VecGetArray(b, &ba));
  std::copy(f.begin(), f.end(), ba);
  PetscCall(VecRestoreArray(b, &ba));
  PetscFunctionReturn(0);
}

PetscErrorCode solve_problem(const SurfaceStage &surface, OperatorStage &stage,
                             const Problem &problem, PetscLogDouble t_begin,
                             SolveOutcome *outcome) {
  PetscFunctionBeginUser;
  const Vec x = surface.x, b = surface.b;
  const KSP ksp = stage.ksp;
  const Mat A = stage.A;
  const OperatorShell &ctx = stage.ctx;
  const PetscInt mat_mults_before = ctx.mat_mults;
  const PetscLogDouble mat_mult_seconds_before = ctx.mat_mult_seconds;
  PetscLogDouble t_setup, t_solved;
  PetscCall(right_hand_side(stage, problem, b));
  PetscCall(PetscTime(&t_setup));
  PetscCall(KSPSolve(ksp, b, x));
  PetscCall(PetscTime(&t_solved));
  PetscInt iterations;
  KSPConvergedReason reason;
  PetscCall(KSPGetIterationNumber(ksp, &iterations));
  PetscCall(KSPGetConvergedReason(ksp, &reason));

  // The true residual |b - A x| / |b|, independent of the preconditioner and of the convergence
  // test KSP used (one more MatMult).
  PetscReal true_residual = 0.0, true_absolute = 0.0, b_norm = 0.0;
  PetscCall(VecNorm(b, NORM_2, &b_norm));
  const auto measure_true_residual = [&]() -> PetscErrorCode {
    PetscFunctionBeginUser;
    Vec r;
    PetscCall(VecDuplicate(b, &r));
    PetscCall(MatMult(A, x, r));
    PetscCall(VecAYPX(r, -1.0, b));
    PetscCall(VecNorm(r, NORM_2, &true_absolute));
    true_residual = b_norm > 0 ? true_absolute / b_norm : true_absolute;
    PetscCall(VecDestroy(&r));
    PetscFunctionReturn(0);
  };
  PetscCall(measure_true_residual());
  // Success means the true residual met what the user asked: the relative one -ksp_rtol (or,
  // with -ksp_rtol 0, the absolute one -ksp_atol). KSP's own test reads the preconditioned
  // residual by default (left-preconditioned GMRES), which may stop short of it; then the solve
  // continues from its answer with the tolerance tightened by the shortfall, a few rounds at most
  // and within -ksp_max_it. An -ksp_atol that stops KSP first, or -ksp_type preonly, is not
  // success unless the true residual met the target anyway.
  PetscReal rtol, abstol, dtol;
  PetscInt max_it;
  PetscCall(KSPGetTolerances(ksp, &rtol, &abstol, &dtol, &max_it));
  const auto target_met = [&] {
    return std::isfinite(double(true_residual)) &&
           (rtol > 0 ? true_residual <= rtol : true_absolute <= abstol);
  };
  KSPType ksp_type;
  PetscCall(KSPGetType(ksp, &ksp_type));
  const bool continues = std::string(ksp_type) != KSPPREONLY && rtol > 0;
  int rounds = 0;
  for (PetscReal round_rtol = rtol;
       continues && reason > 0 && !target_met() && rounds < 3 && iterations < max_it; ++rounds) {
    // KSP's relative test is against |b| (or |B b|) also from a non-zero start: tighten by the
    // measured shortfall, halved for margin.
    round_rtol *= 0.5 * double(rtol / true_residual);
    PetscCall(KSPSetInitialGuessNonzero(ksp, PETSC_TRUE));
    PetscCall(KSPSetTolerances(ksp, round_rtol, abstol, dtol, max_it - iterations));
    PetscLogDouble round_start, round_end;
    PetscCall(PetscTime(&round_start));
    PetscCall(KSPSolve(ksp, b, x));
    PetscCall(PetscTime(&round_end));
    t_solved += round_end - round_start;  // the solve's time, not the true residuals' checks
    PetscInt more;
    PetscCall(KSPGetIterationNumber(ksp, &more));
    PetscCall(KSPGetConvergedReason(ksp, &reason));
    iterations += more;
    PetscCall(measure_true_residual());
  }
  if (rounds > 0) {
    PetscCall(KSPSetInitialGuessNonzero(ksp, PETSC_FALSE));
    PetscCall(KSPSetTolerances(ksp, rtol, abstol, dtol, max_it));
  }
  const bool solved = reason > 0 && target_met();
  const PetscInt mat_mults = ctx.mat_mults - mat_mults_before;
  const PetscLogDouble mat_mult_seconds = ctx.mat_mult_seconds - mat_mult_seconds_before;
  outcome->iterations = iterations;
  outcome->reason = reason;
  outcome->true_residual = true_residual;
  outcome->true_absolute = true_absolute;
  outcome->rtol = rtol;
  outcome->abstol = abstol;
  outcome->ksp_type = ksp_type;
  outcome->rounds = rounds;
  outcome->solved = solved;
  outcome->t_begin = t_begin;
  outcome->t_setup = t_setup;
  outcome->t_solved = t_solved;
  outcome->mat_mults = mat_mults;
  outcome->mat_mult_seconds = mat_mult_seconds;
  PetscFunctionReturn(0);
}

}  // namespace fmbem
