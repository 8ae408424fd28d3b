#pragma once
// The stages a solve goes through, as objects a program holds: the surface stage (what every k
// of a run shares), the operator stage at one k (operator, preconditioner, KSP; RAII over the
// PETSc objects) and the solve of one right-hand side with it. bem_solve (run_bem_solve) is
// option reading, progress and file output over these.
#include <petscksp.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "fmbem/bem/boundary_operator.hpp"
#include "fmbem/bem/corrected_layer_potentials.hpp"
#include "fmbem/bem/curvature_correction.hpp"
#include "fmbem/bem/discretization.hpp"
#include "fmbem/bem/distributed_mesh.hpp"
#include "fmbem/bem/fmm_layer_potentials.hpp"
#include "fmbem/fmm/distributed.hpp"
#include "fmbem/fmm/fmm.hpp"
#include "fmbem/problem/problem.hpp"
#include "fmbem/solver/options.hpp"
#include "fmbem/solver/preconditioner.hpp"

namespace fmbem {

// The solve's PETSc log events (-log_view): BEMNearSetup, BEMCurvature, BEMPartition,
// BEMOperator, BEMRegulariser, BEMOutput, and per phase the FMM's (FMM...), the regulariser's FMM
// (BEMRegFMM...) and the mesh's distribution (Dist...). Registered at the first call (PETSc
// started), the same for every later run of the process.
struct SolveEvents {
  // curvature: the curvature correction's set-up (its two Laplace FMMs), inside near_setup.
  // partition: rank 0's read and the mesh's distribution (partition and halo).
  // regulariser: the regularised formulation's product S~ H x, inside operator_apply.
  PetscLogEvent near_setup, curvature, operator_apply, regulariser, partition;
  // After the solve: the gather to rank 0 (when an output needs it) and the files.
  PetscLogEvent outputs;
  fmm::FmmObserver *fmm = nullptr, *regulariser_fmm = nullptr;
  fmm::DistributionObserver *distribution = nullptr;
};
const SolveEvents &solve_events();

// The distributed FMM (-fmm_distribute, more than one rank): rank 0 alone reads the mesh, and
// each rank holds its part's elements and the halo its operator reads (DistributedMesh: local
// indices; the solver numbers the elements part by part, each rank's rows a contiguous range),
// the partition's locally essential tree and tree (the shape of the rank's FMMs). Rank 0 keeps
// the user's mesh only for the outputs gathered there.
struct Distribution {
  std::unique_ptr<DistributedMesh> local;
  // Solver index -> user index of every element, on rank 0 when an output gathers the solution.
  std::vector<std::size_t> element_order;
  // The user's mesh as read, on rank 0 for the gathered outputs (.vtu, CSV, field, far field),
  // and its discretisation for the field and the far field.
  std::optional<Mesh> user_mesh;
  std::optional<Discretization> user_disc;
  // Surface conditions: the user's mesh's element classes, on rank 0 with user_mesh.
  std::vector<std::int32_t> user_element_class;
  // The whole surface's feature edges, gathered (the curvature correction: each rank's part
  // holds those about its own elements alone).
  std::vector<FeatureSegment> feature_segments;
};

// What every k of a run shares (built once a run): the communicator, the options, the mesh the
// operator is built on (the whole mesh, or with the distributed FMM this rank's part with its
// halo, local indices) and its discretisation, this rank's rows (`rows` as elements of `mesh`,
// [row_begin, row_end) in the solver's numbering, PETSc's), the solution and right-hand side
// vectors, and x to x_all: the whole density on every rank (null with the distributed FMM,
// whose ranks read their columns alone). The curvature correction's c_i (the same for every k)
// is formed by the first operator stage that needs it.
struct SurfaceStage {
  MPI_Comm comm;
  PetscMPIInt rank, size;
  const SolveOptions &opt;
  const Mesh &mesh;
  const Discretization &disc;
  RowRange rows;
  PetscInt n, row_begin, row_end;
  Vec x, b;
  VecScatter gather;
  Vec x_all;
  std::optional<std::vector<double>> &curvature_correction;
  const Distribution *distribution;  // null: every rank the whole FMM upward pass
};

// MatShell context: the operator reads the density of every column its rows couple to (the far
// field all of them), so MatMult gathers x into x_columns, then each rank computes its own rows.
// x_columns holds the operator's columns (LayerPotentials::column_elements): every element, or
// with the distributed FMM the rank's rows and halo alone, and `gather` moves those.
struct OperatorShell {
  const SurfaceOperator *op;
  VecScatter gather;
  Vec x_columns;
  PetscInt mat_mults = 0;
  PetscLogDouble mat_mult_seconds = 0;
};

// The operator at one k and what is built on it (the layer potentials with their FMM and
// correction, the regulariser, the shell matrix A, the preconditioner, the KSP): every source of
// that k is solved with it (solve_problem), and a program may drive A and ksp itself. It owns its
// PETSc objects, destroyed with it also when a later step throws; members are declared before what
// reads them (the operator reads the layers, the regulariser reads the centroid rule, the KSP's PC
// the leaf blocks).
struct OperatorStage {
  OperatorStage() = default;
  OperatorStage(const OperatorStage &) = delete;
  OperatorStage &operator=(const OperatorStage &) = delete;
  ~OperatorStage() {
    KSPDestroy(&ksp);
    MatDestroy(&A);
    MatDestroy(&near_matrix);
    VecScatterDestroy(&density_scatter);
    VecDestroy(&x_columns);
    VecScatterDestroy(&h_scatter);
    VecDestroy(&h_columns);
    VecDestroy(&h_rows);
  }
  std::unique_ptr<CorrectedLayerPotentials> layers;
  const FmmLayerPotentials *fmm_layers = nullptr;
  std::optional<Discretization> centroid_rule;
  std::unique_ptr<CorrectedLayerPotentials> regulariser;
  bool regularised = false;
  OperatorCoefficients coefficients;
  std::unique_ptr<SurfaceOperator> op;
  // H x on the rows to the regulariser's columns: through a vector of x's layout and a scatter
  // to those columns (every element, or a part's), as x itself moves.
  Vec h_rows = nullptr, h_columns = nullptr;
  VecScatter h_scatter = nullptr;
  // The distributed FMM's densities hold its columns alone (column_elements, elements of the
  // rank's part): x moves only those (their solver indices), into a vector that long.
  VecScatter density_scatter = nullptr;
  Vec x_columns = nullptr;
  std::size_t columns_read = 0;
  OperatorShell ctx{};
  Mat A = nullptr;
  // What a leaf_block PC forms its blocks from (attached to A); its blocks, the PC's.
  LeafBlockSource leaf_block_source;
  const LeafBlockPreconditioner *leaf_blocks = nullptr;
  LeafBlockSettings leaf_block_settings;
  Mat near_matrix = nullptr;
  KSP ksp = nullptr;
  // For the summary.
  std::string pc_name;
  double near_matrix_seconds = 0.0, near_matrix_nonzeros = 0.0, near_matrix_bytes = 0.0;
  double pc_seconds = 0.0, pc_bytes = 0.0;
  unsigned long long leaf_block_count = 0, leaf_block_largest = 0;
  unsigned long long near_bytes_total = 0, near_nonzeros = 0, fmm_near_pairs = 0;
  // Largest over the ranks: the elements a rank holds and the quadratic read's fits it forms.
  unsigned long long held_elements = 0, fitted_elements = 0;
  // The distributed FMM's balance and traffic per MatMult, largest and summed over the ranks:
  // the modelled work, the densities read from other ranks, the multipole bytes received.
  double distribution_max[3] = {0.0, 0.0, 0.0}, distribution_sum[3] = {0.0, 0.0, 0.0};
  PetscLogDouble t_start = 0, t_ready = 0;  // the set-up began; the KSP is ready
};

// Builds `stage` for `problem` (at its k; a later source of that k shares the stage): the
// layer potentials with their FMM and near-field correction, the regulariser, the shell matrix,
// the preconditioner (the near-field matrix when the PC needs one) and the KSP, set up with
// PETSc's options (KSPSetFromOptions). t_start: when its set-up began (the summary's times).
// fmbem::Error for bad input (tolerances, a PC that cannot apply); PETSc's errors as codes.
PetscErrorCode build_operator_stage(const SurfaceStage &surface, const Problem &problem,
                                    PetscLogDouble t_start, OperatorStage &stage);

// `problem`'s right-hand side on this rank's rows for the stage's equation (the regularised
// formulation's mixes the data's value and derivative through its regulariser), into b.
PetscErrorCode right_hand_side(const OperatorStage &stage, const Problem &problem, Vec b);

// One right-hand side solved with a stage.
struct SolveOutcome {
  PetscInt iterations = 0;
  KSPConvergedReason reason = KSP_CONVERGED_ITERATING;
  // |b - A x| / |b| and |b - A x| (one more MatMult), and what KSP was asked.
  PetscReal true_residual = 0.0, true_absolute = 0.0, rtol = 0.0, abstol = 0.0;
  std::string ksp_type;
  int rounds = 0;       // continuations after KSP stopped short of the true residual's target
  bool solved = false;  // KSP converged and the true residual met -ksp_rtol (or -ksp_atol)
  PetscLogDouble t_begin = 0, t_setup = 0, t_solved = 0;  // began, right-hand side ready, solved
  PetscInt mat_mults = 0;                                 // this solve's
  PetscLogDouble mat_mult_seconds = 0;
};

// Solves `problem` (at the stage's k) into surface.x: the right-hand side into surface.b, KSP
// from a zero guess, the true residual measured; a KSP that stops short of -ksp_rtol in the true
// residual (its own test reads the preconditioned one) continues from its answer with the
// tolerance tightened by the shortfall, at most three rounds within -ksp_max_it. t_begin: when
// this solve's time starts (the first source of a k: the stage's set-up).
PetscErrorCode solve_problem(const SurfaceStage &surface, OperatorStage &stage,
                             const Problem &problem, PetscLogDouble t_begin, SolveOutcome *outcome);

}  // namespace fmbem
