#include "fmbem/solver/bem_solve.hpp"

#include <malloc.h>
#include <petscksp.h>
#include <petsctime.h>
#include <sys/resource.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <new>
#include <numbers>
#include <optional>
#include <span>
#include <string>
#include <type_traits>

#include "fmbem/bem/curvature_correction.hpp"
#include "fmbem/bem/direct_layer_potentials.hpp"
#include "fmbem/bem/discretization.hpp"
#include "fmbem/bem/distributed_mesh.hpp"
#include "fmbem/bem/fmm_layer_potentials.hpp"
#include "fmbem/bem/regularised_operator.hpp"
#include "fmbem/core/error.hpp"
#include "fmbem/field/problem_field.hpp"
#include "fmbem/fmm/distributed.hpp"
#include "fmbem/fmm/gpu_device.hpp"
#include "fmbem/fmm/multipole_exchange.hpp"
#include "fmbem/io/csv_writer.hpp"
#include "fmbem/io/field_points.hpp"
#include "fmbem/io/mesh_source.hpp"
#include "fmbem/io/numcalc_project.hpp"
#include "fmbem/io/output_file.hpp"
#include "fmbem/io/sofa_writer.hpp"
#include "fmbem/io/vtk_writer.hpp"
#include "fmbem/solver/field_output.hpp"
#include "fmbem/solver/frequency_split.hpp"
#include "fmbem/solver/numcalc_run.hpp"
#include "fmbem/solver/options.hpp"
#include "fmbem/solver/output_plan.hpp"
#include "fmbem/solver/preconditioner.hpp"
#include "fmbem/solver/sweep.hpp"
#include "fmbem/solver/threaded_vector.hpp"

namespace fmbem {
namespace {

struct LogEvents {
  // curvature: the curvature correction's set-up (its two Laplace FMMs), inside near_setup.
  // partition: rank 0's read and the mesh's distribution (partition and halo).
  // regulariser: the regularised formulation's product S~ H x, inside operator_apply.
  PetscLogEvent near_setup, curvature, operator_apply, regulariser, partition;
  // After the solve: the gather to rank 0 (when an output needs it) and the files.
  PetscLogEvent outputs;
};

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
using FmmEvents = PhaseEvents<fmm::FmmPhase>;
// Inside BEMPartition: Dist + Slabs, Bounds, Tree, Work, Cut, LET, Densities, Halo, Records,
// LocalMesh (fmm::DistributionPhase).
using DistributionEvents = PhaseEvents<fmm::DistributionPhase>;

// MatShell context: the operator reads the density of every column its rows couple to (the far
// field all of them), so MatMult gathers x into x_columns, then each rank computes its own rows.
// x_columns holds the operator's columns (LayerPotentials::column_elements): every element, or
// with the distributed FMM the rank's rows and halo alone, and `gather` moves those.
struct ShellContext {
  const SurfaceOperator *op;
  VecScatter gather;
  Vec x_columns;
  LogEvents events;
  PetscInt mat_mults = 0;
  PetscLogDouble mat_mult_seconds = 0;
};

PetscErrorCode shell_mult(Mat A, Vec x, Vec y) {
  ShellContext *ctx;
  PetscFunctionBeginUser;
  PetscCall(MatShellGetContext(A, &ctx));
  PetscLogDouble start;
  PetscCall(PetscTime(&start));
  PetscCall(PetscLogEventBegin(ctx->events.operator_apply, A, x, y, 0));
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
  PetscCall(PetscLogEventEnd(ctx->events.operator_apply, A, x, y, 0));
  PetscLogDouble end;
  PetscCall(PetscTime(&end));
  ctx->mat_mults++;
  ctx->mat_mult_seconds += end - start;
  PetscFunctionReturn(0);
}

PetscErrorCode shell_diagonal(Mat A, Vec d) {
  ShellContext *ctx;
  PetscFunctionBeginUser;
  PetscCall(MatShellGetContext(A, &ctx));
  const std::vector<cplx> diag = ctx->op->diagonal();
  PetscScalar *da;
  PetscCall(VecGetArray(d, &da));
  std::copy(diag.begin(), diag.end(), da);
  PetscCall(VecRestoreArray(d, &da));
  PetscFunctionReturn(0);
}

std::vector<double> part(std::span<const cplx> v, double (*f)(const cplx &)) {
  std::vector<double> out(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) out[i] = f(v[i]);
  return out;
}

// The cell data of the solution files: u_re, u_im, u_abs (u: the unknown's name) and, when the
// error is known (not empty), err_abs.
std::vector<io::CellField> solution_fields(const std::string &u, std::span<const cplx> solution,
                                           std::vector<double> error_abs) {
  std::vector<io::CellField> fields = {
      {u + "_re", part(solution, [](const cplx &c) { return c.real(); })},
      {u + "_im", part(solution, [](const cplx &c) { return c.imag(); })},
      {u + "_abs", part(solution, [](const cplx &c) { return std::abs(c); })}};
  if (!error_abs.empty()) fields.push_back({"err_abs", std::move(error_abs)});
  return fields;
}

// The error norms of the whole solution from each rank's sums, on rank 0: the ranks' sums are
// added in rank order there (one rank: the one sum over all elements, as before the split).
PetscErrorCode reduce_error_norms(MPI_Comm comm, const ErrorSums &own, ErrorNorms *norms) {
  PetscFunctionBeginUser;
  PetscMPIInt rank, size;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  PetscCallMPI(MPI_Comm_size(comm, &size));
  const double mine[3] = {own.max_abs, own.error2, own.exact2};
  std::vector<double> all(rank == 0 ? 3 * std::size_t(size) : 0);
  PetscCallMPI(MPI_Gather(mine, 3, MPI_DOUBLE, all.data(), 3, MPI_DOUBLE, 0, comm));
  ErrorSums total;
  for (std::size_t r = 0; r < all.size() / 3; ++r) {
    total.max_abs = std::max(total.max_abs, all[3 * r]);
    total.error2 += all[3 * r + 1];
    total.exact2 += all[3 * r + 2];
  }
  if (rank == 0) *norms = error_norms(total);
  PetscFunctionReturn(0);
}

// The whole of a distributed vector on rank 0 (`whole` stays empty on the others).
PetscErrorCode gather_to_rank_zero(Vec v, std::vector<cplx> *whole) {
  PetscFunctionBeginUser;
  VecScatter to_zero;
  Vec v0;
  PetscCall(VecScatterCreateToZero(v, &to_zero, &v0));
  PetscCall(VecScatterBegin(to_zero, v, v0, INSERT_VALUES, SCATTER_FORWARD));
  PetscCall(VecScatterEnd(to_zero, v, v0, INSERT_VALUES, SCATTER_FORWARD));
  PetscInt size;
  PetscCall(VecGetLocalSize(v0, &size));
  const PetscScalar *va;
  PetscCall(VecGetArrayRead(v0, &va));
  whole->assign(va, va + size);
  PetscCall(VecRestoreArrayRead(v0, &va));
  PetscCall(VecScatterDestroy(&to_zero));
  PetscCall(VecDestroy(&v0));
  PetscFunctionReturn(0);
}

void broadcast_bytes(MPI_Comm comm, void *data, std::size_t bytes, int root = 0) {
  constexpr std::size_t kChunk = std::size_t{1} << 30;  // MPI counts are int
  auto *p = static_cast<char *>(data);
  for (std::size_t done = 0; done < bytes; done += kChunk)
    MPI_Bcast(p + done, int(std::min(kChunk, bytes - done)), MPI_BYTE, root, comm);
}

void broadcast_string(MPI_Comm comm, std::string &text, int root = 0) {
  unsigned long long size = text.size();
  MPI_Bcast(&size, 1, MPI_UNSIGNED_LONG_LONG, root, comm);
  text.resize(size);
  broadcast_bytes(comm, text.data(), size, root);
}

// `work`'s failure as a message (empty: none), for the collective helpers below.
template <class Work>
std::string failure_of(Work &&work) {
  try {
    work();
  } catch (const Error &e) {
    return *e.what() ? e.what() : "unknown error";
  } catch (const std::bad_alloc &) {
    return "out of memory";
  }
  return {};
}

// Runs `work` on rank 0 only and makes its failure everyone's: an error
// there is thrown on every rank, so that no rank waits in a collective call
// for one that has given up.
template <class Work>
void on_rank_zero(MPI_Comm comm, Work &&work) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  std::string failure;
  if (rank == 0) failure = failure_of(work);
  broadcast_string(comm, failure);
  if (!failure.empty()) throw Error(failure);
}

// Runs `work` on every rank; when it fails on any, the failure of the lowest such rank is thrown
// on all of them (one message, and no rank left waiting in a collective call).
template <class Work>
void on_every_rank(MPI_Comm comm, Work &&work) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  std::string failure = failure_of(work);
  int first_failed = failure.empty() ? size : rank;
  MPI_Allreduce(MPI_IN_PLACE, &first_failed, 1, MPI_INT, MPI_MIN, comm);
  if (first_failed == size) return;
  broadcast_string(comm, failure, first_failed);
  throw Error(failure);
}

// The surface read once, on rank 0 (a pipe can be read only once); empty on the other ranks.
Surface read_surface_on_rank_zero(MPI_Comm comm, const std::string &spec,
                                  std::vector<std::string> &warnings) {
  Surface surface;
  on_rank_zero(comm, [&] {
    io::SurfaceRead read = io::read_surface(spec);
    surface = std::move(read.surface);
    warnings = std::move(read.warnings);
  });
  return surface;
}

// The surface read on rank 0 and sent to the other ranks; they all validate it the same way.
Surface read_surface_everywhere(MPI_Comm comm, const std::string &spec,
                                std::vector<std::string> &warnings) {
  Surface surface = read_surface_on_rank_zero(comm, spec, warnings);
  unsigned long long sizes[2] = {surface.vertices.size(), surface.triangles.size()};
  MPI_Bcast(sizes, 2, MPI_UNSIGNED_LONG_LONG, 0, comm);
  surface.vertices.resize(sizes[0]);
  surface.triangles.resize(sizes[1]);
  broadcast_bytes(comm, surface.vertices.data(), sizes[0] * sizeof(Vec3));
  broadcast_bytes(comm, surface.triangles.data(), sizes[1] * sizeof(Triangle));
  SurfaceGroupList groups = broadcast_group_list(comm, surface.groups, surface.overlap);
  surface.groups = std::move(groups.groups);
  surface.overlap = groups.overlap;
  unsigned long long triangle_groups = surface.triangle_group.size();
  MPI_Bcast(&triangle_groups, 1, MPI_UNSIGNED_LONG_LONG, 0, comm);
  surface.triangle_group.resize(triangle_groups);
  broadcast_bytes(comm, surface.triangle_group.data(), triangle_groups * sizeof(std::int32_t));
  return surface;
}

// Piecewise-constant elements need about 6-10 per wavelength for a few per
// cent; below 2 the answer is meaningless whatever GMRES reports.
constexpr double kWarnElementsPerWavelength = 6.0;
constexpr double kMinElementsPerWavelength = 2.0;
// Below this k times the diameter the Helmholtz problem equals Laplace's to
// double precision, and the Mie series' (ka)^-2 terms lose every digit.
constexpr double kMinHelmholtzKD = 1e-6;

// The mesh must resolve the wavelength: a warning below 6 elements per
// wavelength, a refusal below 2 unless the user insists.
std::optional<std::string> check_resolution(const Mesh &mesh, double k, bool allow_coarse) {
  if (k == 0) return std::nullopt;
  char text[512];
  if (k * mesh.diameter() < kMinHelmholtzKD) {
    std::snprintf(text, sizeof text,
                  "-k %g: k times the body's diameter is %.3g, below %g, where the "
                  "Helmholtz "
                  "equation is the Laplace equation to double precision; use -k 0",
                  k, k * mesh.diameter(), kMinHelmholtzKD);
    throw Error(text);
  }
  const double wavelength = 2 * std::numbers::pi / k;
  const double per_wavelength = wavelength / mesh.max_edge();
  std::snprintf(text, sizeof text,
                "-k %g on '%s': %.3g elements per wavelength (wavelength %.4g, "
                "longest edge "
                "%.4g); piecewise-constant elements need about 6-10 for "
                "per-cent accuracy",
                k, mesh.name().c_str(), per_wavelength, wavelength, mesh.max_edge());
  if (per_wavelength < kMinElementsPerWavelength && !allow_coarse)
    throw Error(std::string(text) +
                ": refine the mesh (or insist with "
                "-bem_allow_coarse; the answer is then "
                "meaningless)");
  if (per_wavelength < kWarnElementsPerWavelength) return std::string(text);
  return std::nullopt;
}

bool ends_with(const std::string &text, const std::string &tail) {
  return text.size() >= tail.size() &&
         text.compare(text.size() - tail.size(), tail.size(), tail) == 0;
}

// -o name.pvtu: every rank writes its own elements as a piece (io::pvtu_piece_path), rank 0 the
// summary; -o name.vtu is one file of the whole solution, gathered on rank 0.
bool writes_pieces(const SolveOptions &opt) { return ends_with(opt.vtu_path, ".pvtu"); }

// The outputs that rank 0 writes from the whole solution, which it then gathers: the .vtu, the
// CSV, the field and the far field. The report needs no gather, nor do the .pvtu's pieces.
bool gathers_solution(const SolveOptions &opt) {
  return (!opt.vtu_path.empty() && !writes_pieces(opt)) || !opt.csv_path.empty() ||
         opt.field.field() || opt.field.farfield_directions > 0 || !opt.numcalc_path.empty();
}

// True when `path` names a piece that -o name.pvtu writes on `ranks` ranks (for any k of a
// sweep and any of `sources`): "name_P.vtu", "name_kNNNN_P.vtu" in a sweep, "name_sNNNN_P.vtu"
// with several sources (both: name_kNNNN_sNNNN_P.vtu), beside the summary.
bool is_piece_of_pvtu(const std::string &path, const SolveOptions &opt, int ranks,
                      std::size_t sources) {
  namespace fs = std::filesystem;
  const auto folder = [](const fs::path &p) {
    return p.has_parent_path() ? p.parent_path().string() : std::string(".");
  };
  const fs::path target(path), summary(opt.vtu_path);
  const std::string summary_name = summary.filename().string();
  const std::string stem = summary_name.substr(0, summary_name.size() - 5) + "_";
  std::string rest = target.filename().string();
  if (rest.rfind(stem, 0) != 0 || !ends_with(rest, ".vtu")) return false;
  rest = rest.substr(stem.size(), rest.size() - stem.size() - 4);
  // A number in [low, high) written as `format` writes it.
  const auto number_in = [](const std::string &text, const char *format, std::size_t low,
                            std::size_t high) {
    if (text.empty() || text.size() > 18 ||
        !std::all_of(text.begin(), text.end(), [](unsigned char c) { return std::isdigit(c); }))
      return false;
    const std::size_t value = std::stoull(text);
    char written[32];
    std::snprintf(written, sizeof written, format, value);
    return value >= low && value < high && text == written;
  };
  // The numbered parts, "kNNNN_" then "sNNNN_", where the run has several.
  for (const auto &[letter, count] :
       {std::pair{'k', opt.wavenumbers.size()}, std::pair{'s', sources}}) {
    if (count <= 1) continue;
    const std::size_t bar = rest.find('_');
    if (bar == std::string::npos || rest[0] != letter ||
        !number_in(rest.substr(1, bar - 1), "%04zu", 1, count + 1))
      return false;
    rest = rest.substr(bar + 1);
  }
  return number_in(rest, "%zu", 0, std::size_t(ranks)) &&
         io::same_file(folder(target), folder(summary));
}

// Output files: every one of every k and source checked before any work (OutputPlan: against the
// inputs and each other), each made when it is written and a solve's all committed together
// (OutputBatch).
void check_outputs(const SolveOptions &opt, int ranks, std::size_t sources) {
  if (!opt.vtu_path.empty()) {
    const std::string &p = opt.vtu_path;
    if (!ends_with(p, ".vtu") && !writes_pieces(opt))
      throw Error("-o '" + p +
                  "': the solution file must end in .vtu (one file, gathered on rank 0) or .pvtu "
                  "(one piece per rank); use -bem_csv for CSV");
    if (!io::vtk_available())
      throw Error("-o '" + p + "': this build has no VTK (FMBEM_WITH_VTK=OFF); use -bem_csv");
    if (writes_pieces(opt))
      for (const auto &[option, other] : {std::pair{"-bem_csv", &opt.csv_path},
                                          {"-bem_sweep_csv", &opt.sweep_csv_path},
                                          {"-bem_field_vtk", &opt.field.vtk_path},
                                          {"-bem_field_csv", &opt.field.csv_path},
                                          {"-bem_farfield_csv", &opt.field.farfield_csv},
                                          {"-bem_field", &opt.field.points_file},
                                          {"-mesh", &opt.mesh}})
        if (!other->empty() && is_piece_of_pvtu(*other, opt, ranks, sources))
          throw Error(std::string(option) + " '" + *other + "' is a piece of -o '" + p + "' on " +
                      std::to_string(ranks) + " rank(s); it would be overwritten");
  }
  const std::size_t count = opt.wavenumbers.size();
  OutputPlan plan;
  plan.add_input("-mesh", opt.mesh, "input mesh");
  if (opt.numcalc)
    for (const std::string &file : io::numcalc_input_files(*opt.numcalc))
      plan.add_input("-bem_numcalc", file, "NumCalc project file");
  if (!opt.field.points_file.empty())
    for (const std::string &file : io::field_point_files(opt.field.points_file))
      plan.add_input("-bem_field", file, "field file");
  plan.add_output("-o", opt.vtu_path, count, sources);
  plan.add_output("-bem_csv", opt.csv_path, count, sources);
  plan.add_output("-bem_field_vtk", opt.field.vtk_path, count, sources);
  plan.add_output("-bem_field_csv", opt.field.csv_path, count, sources);
  plan.add_output("-bem_farfield_csv", opt.field.farfield_csv, count, sources);
  plan.add_single_output("-bem_sweep_csv", opt.sweep_csv_path);
  plan.add_single_output("-bem_sofa", opt.field.sofa_path);
  plan.check();
}

// A solve's files, each filled (its hidden temporary written) as it is added and all renamed over
// their targets by commit(): a failure before then (a full disk at the third file) leaves every
// target as it was, and the temporaries go with this object.
class OutputBatch {
 public:
  io::OutputFile &add(const std::string &path, const std::string &option,
                      const std::function<void(const std::string &)> &writer) {
    files_.push_back(std::make_unique<io::OutputFile>(path, option));
    files_.back()->fill(writer);
    return *files_.back();
  }
  void commit() {
    for (const auto &file : files_) file->commit();
  }

 private:
  std::vector<std::unique_ptr<io::OutputFile>> files_;
};

// -help: PETSc prints our options in read_solve_options and the KSP/PC ones
// here; nothing is solved.
PetscErrorCode print_solver_help(MPI_Comm comm) {
  PetscFunctionBeginUser;
  KSP ksp;
  PetscCall(KSPCreate(comm, &ksp));
  PetscCall(KSPSetType(ksp, KSPGMRES));
  PC pc;
  PetscCall(KSPGetPC(ksp, &pc));
  PetscCall(PCSetType(pc, PCJACOBI));
  PetscCall(KSPSetFromOptions(ksp));
  PetscCall(KSPDestroy(&ksp));
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

// Everything the user gave that nothing read is a typo or does not apply.
void refuse_unused_options() {
  const std::vector<std::string> unused = unused_options(false);
  if (unused.empty()) return;
  std::string list;
  for (const std::string &name : unused) list += (list.empty() ? "-" : ", -") + name;
  throw Error("unknown option" + std::string(unused.size() > 1 ? "s " : " ") + list +
              (unused.size() == 1 ? suggestion_for(unused[0]) : std::string()) +
              "; bem_solve -help lists the options");
}

// A class of surface conditions' share of the surface.
struct ClassExtent {
  unsigned long long elements = 0;
  double area = 0.0;
};

// Surface conditions' boundary values in SI units: the pressure p (Pa) and the normal velocity
// v_n = q / (i k rho c) (m/s, into the fluid) of each element. Value i is element first + i's,
// `element_class` the problem's classes of the mesh.
struct SurfaceValues {
  std::vector<cplx> pressure, velocity;
};
SurfaceValues surface_values(const Problem &problem, std::span<const std::int32_t> element_class,
                             std::size_t first, std::span<const cplx> solution) {
  const std::size_t n = solution.size();
  const Medium &medium = problem.spec().surface->medium;
  const cplx to_velocity = 1.0 / cplx(0.0, problem.spec().k * medium.density * medium.sound_speed);
  SurfaceValues out{std::vector<cplx>(n), std::vector<cplx>(n)};
  for (std::size_t i = 0; i < n; ++i) {
    const ClassData &d = problem.class_data()[std::size_t(element_class[first + i])];
    out.pressure[i] = d.pressure_given ? d.value : solution[i];
    out.velocity[i] =
        (d.pressure_given ? solution[i] : d.value + d.robin * solution[i]) * to_velocity;
  }
  return out;
}

// Those values as cell data: the element's group (its tag; -1: none), p, v_n and the sound
// pressure level of p's rms |p| / sqrt 2 (dB re 20 uPa), of the elements of `mesh` from first.
std::vector<io::CellField> physical_fields(const Problem &problem, const Mesh &mesh,
                                           std::span<const std::int32_t> element_class,
                                           std::size_t first, std::span<const cplx> solution) {
  const SurfaceValues values = surface_values(problem, element_class, first, solution);
  const std::size_t n = solution.size();
  std::vector<double> group(n), p_re(n), p_im(n), p_abs(n), v_re(n), v_im(n), v_abs(n), spl(n);
  const std::vector<std::int32_t> &groups = mesh.element_groups();
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t e = first + i;
    const cplx p = values.pressure[i], v = values.velocity[i];
    group[i] =
        groups.empty() || groups[e] < 0 ? -1.0 : double(mesh.groups()[std::size_t(groups[e])].tag);
    p_re[i] = p.real();
    p_im[i] = p.imag();
    p_abs[i] = std::abs(p);
    v_re[i] = v.real();
    v_im[i] = v.imag();
    v_abs[i] = std::abs(v);
    spl[i] = 20.0 * std::log10(std::abs(p) / std::sqrt(2.0) / 20e-6);
  }
  return {{"group", std::move(group)},  {"p_re", std::move(p_re)},  {"p_im", std::move(p_im)},
          {"p_abs", std::move(p_abs)},  {"vn_re", std::move(v_re)}, {"vn_im", std::move(v_im)},
          {"vn_abs", std::move(v_abs)}, {"spl_db", std::move(spl)}};
}

// What a sweep builds once and every k uses: the mesh and its discretisation, the
// vectors and the scatter of the density to every rank, the reserved outputs and the field
// stage (the field points and their FieldGeometry). Everything else depends on k and is built
// by solve_at for each: the FMM (octree, lists, translations), the near-field correction, the
// operator, the right-hand side, the preconditioner and the KSP.
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

// -bem_sofa on rank 0: every (k, source)'s HRTFs at the field points, written after the run.
// A SOFA receiver's position: the ear's centre, the incident plane wave's direction (unit: where
// Mesh2HRTF puts it) or its point source.
Vec3 sofa_receiver(const ProblemSpec &spec, const field::ReferenceSource &reference) {
  if (reference.kind != field::ReferenceSource::Kind::incident) return reference.vibrating_center;
  return spec.incident.kind == exact::Incident::Kind::PlaneWave
             ? normalized(spec.incident.direction)
             : spec.incident.source;
}

struct SofaCollector {
  io::SofaHrtf hrtf;
  std::vector<char> filled;  // per k and source
  std::size_t sources = 0;
  void add(const OutputIndex &at, std::span<const cplx> values, const Vec3 &receiver) {
    const std::size_t n = hrtf.frequencies.size();
    for (std::size_t m = 0; m < values.size(); ++m)
      hrtf.data[(m * sources + at.source) * n + at.k] = values[m];
    hrtf.receiver_positions[at.source] = receiver;
    filled[at.k * sources + at.source] = 1;
  }
};

// -bem_split frequencies: every rank's HRTFs to rank 0's collector (each (k, source) filled on
// the one rank that solved it, zero elsewhere); a receiver from the lowest rank that has it.
PetscErrorCode gather_sofa(MPI_Comm comm, SofaCollector &sofa) {
  PetscFunctionBeginUser;
  PetscMPIInt rank, size;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  PetscCallMPI(MPI_Comm_size(comm, &size));
  std::vector<cplx> &data = sofa.hrtf.data;
  constexpr std::size_t kChunk = std::size_t{1} << 28;  // MPI counts are int
  for (std::size_t at = 0; at < data.size(); at += kChunk) {
    const int n = int(std::min(kChunk, data.size() - at));
    PetscCallMPI(MPI_Reduce(rank == 0 ? MPI_IN_PLACE : &data[at], &data[at], n,
                            MPI_C_DOUBLE_COMPLEX, MPI_SUM, 0, comm));
  }
  const std::size_t ks = sofa.filled.size() / std::max<std::size_t>(1, sofa.sources);
  for (std::size_t s = 0; s < sofa.sources; ++s) {
    int holder = size;
    for (std::size_t i = 0; i < ks && holder == size; ++i)
      if (sofa.filled[i * sofa.sources + s]) holder = rank;
    PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &holder, 1, MPI_INT, MPI_MIN, comm));
    if (holder < size)
      PetscCallMPI(MPI_Bcast(&sofa.hrtf.receiver_positions[s], 3, MPI_DOUBLE, holder, comm));
  }
  PetscCallMPI(MPI_Reduce(rank == 0 ? MPI_IN_PLACE : sofa.filled.data(), sofa.filled.data(),
                          int(sofa.filled.size()), MPI_UNSIGNED_CHAR, MPI_MAX, 0, comm));
  PetscFunctionReturn(0);
}

// -bem_numcalc on rank 0: the project's ids and groups, and for each of its sources NumCalc's
// result files of each frequency step (be.out/be.N: pBoundary, vBoundary, pEvalGrid, vEvalGrid)
// and its log NC.out, rewritten after each step so that an interrupted run reports the steps it
// finished.
struct NumCalcWriter {
  const io::NumCalcInput &input;  // the options'
  io::NumCalcMesh mesh;
  std::vector<std::string> folders;  // a source's be.out and NC.out go in folders[source]
  std::vector<std::vector<NumCalcStep>> steps;  // a source's steps so far
  std::string start_time = numcalc_time_now();
  std::string solver_name = "KSP";  // PETSc's KSP type, as NC.out names its solver

  explicit NumCalcWriter(const SolveOptions &opt)
      : input(*opt.numcalc), mesh(io::read_numcalc_mesh(input)), steps(input.sources.size()) {
    // Each source's folder (NumCalc writes in its working folder), or -bem_numcalc_output's
    // (with several sources, source_N in it).
    const bool given = !opt.numcalc_output.empty();
    std::error_code ec;
    if (given && !std::filesystem::is_directory(opt.numcalc_output, ec))
      throw Error("-bem_numcalc_output '" + opt.numcalc_output + "': no such folder");
    for (std::size_t s = 0; s < input.sources.size(); ++s) {
      std::string folder = !given ? input.sources[s].folder
                           : input.sources.size() == 1
                               ? opt.numcalc_output
                               : opt.numcalc_output + "/source_" + std::to_string(s + 1);
      std::filesystem::create_directories(folder, ec);
      if (ec) throw Error("-bem_numcalc: cannot make the folder '" + folder + "': " + ec.message());
      folders.push_back(folder);
    }
    // NumCalc's outputs never replace the project's inputs (a grid kept in be.out, say).
    const std::vector<std::string> inputs = io::numcalc_input_files(input);
    for (std::size_t s = 0; s < folders.size(); ++s) {
      std::vector<std::string> outputs{log_path(s)};
      for (std::size_t k = 0; k < input.frequencies_hz.size(); ++k)
        for (const char *name : {"pBoundary", "vBoundary", "pEvalGrid", "vEvalGrid"})
          outputs.push_back(step_folder(s, k) + "/" + name);
      for (const std::string &out : outputs)
        for (const std::string &in : inputs)
          if (io::same_file(out, in))
            throw Error("-bem_numcalc: the result file '" + out + "' is the project's input '" +
                        in +
                        "'; it would be overwritten (give -bem_numcalc_output another folder)");
    }
  }
  std::string step_folder(std::size_t source, std::size_t k) const {
    return folders[source] + "/be.out/be." + std::to_string(k + 1);
  }
  std::string log_path(std::size_t source) const { return folders[source] + "/NC.out"; }
  void write_log(std::size_t source, bool finished) const {
    io::OutputFile(log_path(source), "-bem_numcalc").write([&](const std::string &path) {
      std::ofstream out(path);
      out << numcalc_log(input, steps[source], start_time, finished ? numcalc_time_now() : "",
                         solver_name);
      if (!out) throw Error("cannot write '" + log_path(source) + "'");
    });
  }
};

struct SweepContext {
  MPI_Comm comm;
  PetscMPIInt rank, size;
  const SolveOptions &opt;
  // The mesh the operator is built on: the whole mesh, or with the distributed FMM this rank's
  // part with its halo (local indices); `rows` are this rank's rows as its elements, and
  // [row_begin, row_end) the same rows in the solver's numbering (PETSc's).
  const Mesh &mesh;
  const Discretization &disc;
  RowRange rows;
  PetscInt n, row_begin, row_end;
  Vec x, b;
  // x to x_all: the whole density on every rank (ShellContext); null with the distributed FMM,
  // whose ranks read their columns alone.
  VecScatter gather;
  Vec x_all;
  LogEvents events;
  FmmEvents &fmm_events;
  // The regularised formulation's S~ FMM (phases named BEMRegFMM...).
  FmmEvents &regulariser_fmm_events;
  FieldStage &field_stage;
  // The curvature correction's c_i of this rank's rows (Laplace: the same for every k), formed
  // by the first solve_at that needs it.
  std::optional<std::vector<double>> &curvature_correction;
  const Distribution *distribution;  // null: every rank the whole FMM upward pass
  // Surface conditions: each class's elements and area over the whole mesh (the summary).
  std::vector<ClassExtent> class_extents;
  std::size_t source_count = 1;      // the run's sources, each solved at every k
  SofaCollector *sofa = nullptr;     // rank 0 with -bem_sofa
  NumCalcWriter *numcalc = nullptr;  // rank 0 with -bem_numcalc
  // -bem_split frequencies: the run's ranks, each solving its own k on PETSC_COMM_SELF (comm,
  // rank and size above are then that one rank's); 0 otherwise.
  PetscMPIInt split_ranks = 0, split_rank = 0;
};

// -o name.pvtu of one solve (`at`): every rank fills its rows' piece into `batch` (`fields`:
// their values, with the user's index of each element), and rank 0 the summary, which lists
// them, into `summary` (committed after the pieces), adding its line to `lines`.
void fill_pieces(const SweepContext &sweep, const OutputIndex &at,
                 const std::vector<io::CellField> &fields, OutputBatch &batch, OutputBatch &summary,
                 std::vector<std::string> &lines) {
  const std::size_t first = sweep.rows.begin, count = sweep.rows.size();
  std::vector<std::int64_t> element_ids(count);
  for (std::size_t i = 0; i < count; ++i)
    element_ids[i] = std::int64_t(
        sweep.distribution ? sweep.distribution->local->input_elements()[first + i] : first + i);
  const std::string summary_path = sweep_output_path(sweep.opt.vtu_path, at);
  on_every_rank(sweep.comm, [&] {
    batch.add(io::pvtu_piece_path(summary_path, std::size_t(sweep.rank)), "-o",
              [&](const std::string &path) {
                io::write_vtu_piece(path, sweep.mesh, {first, count, element_ids}, fields);
              });
  });
  on_rank_zero(sweep.comm, [&] {
    std::vector<std::string> sources, names;
    for (int p = 0; p < sweep.size; ++p)
      sources.push_back(std::filesystem::path(io::pvtu_piece_path(summary_path, std::size_t(p)))
                            .filename()
                            .string());
    for (const io::CellField &field : fields) names.push_back(field.name);
    summary.add(summary_path, "-o",
                [&](const std::string &path) { io::write_pvtu(path, names, sources); });
    lines.push_back("wrote           " + summary_path + " (" + std::to_string(sweep.size) +
                    (sweep.size == 1 ? " piece: " : " pieces: ") + sources.front() +
                    (sweep.size == 1 ? "" : " to " + sources.back()) + ")");
  });
}
// The operator at one k and what is built on it (the layer potentials with their FMM and
// correction, the regulariser, the shell matrix, the preconditioner, the KSP): every source of
// that k is solved with it. It owns its PETSc objects, destroyed with it also when a later step
// throws; members are declared before what reads them (the operator reads the layers, the
// regulariser reads the centroid rule, the KSP's PC the leaf blocks).
struct KStage {
  KStage() = default;
  KStage(const KStage &) = delete;
  KStage &operator=(const KStage &) = delete;
  ~KStage() {
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
  ShellContext ctx{};
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

// Builds `stage` for `problem` (the first source of its k; the others share its operator);
// t_start: when its set-up began.
PetscErrorCode build_stage(const SweepContext &sweep, const Problem &problem,
                           PetscLogDouble t_start, KStage &stage) {
  PetscFunctionBeginUser;
  const MPI_Comm comm = sweep.comm;
  const PetscMPIInt rank = sweep.rank, size = sweep.size;
  const SolveOptions &opt = sweep.opt;
  const Mesh &mesh = sweep.mesh;
  const Discretization &disc = sweep.disc;
  const PetscInt n = sweep.n, row_begin = sweep.row_begin, row_end = sweep.row_end;
  // This rank's rows as elements of `mesh` (the operator's, the problem's), and as PETSc's.
  const RowRange rows = sweep.rows, petsc_rows{std::size_t(row_begin), std::size_t(row_end)};
  const std::span<const std::size_t> solver_elements =
      sweep.distribution ? sweep.distribution->local->solver_elements()
                         : std::span<const std::size_t>();
  const Vec x = sweep.x;
  const LogEvents events = sweep.events;
  const double k = problem.spec().k;
  stage.t_start = t_start;
  std::unique_ptr<CorrectedLayerPotentials> &layer_potentials = stage.layers;
  const FmmLayerPotentials *&fmm_layers = stage.fmm_layers;
  PetscCall(PetscLogEventBegin(events.near_setup, 0, 0, 0, 0));
  // The distributed FMM is built for this rank's part: it keeps only the source points the part
  // reads.
  std::optional<fmm::FmmPart> fmm_part;
  if (sweep.distribution)
    fmm_part.emplace(fmm::FmmPart{sweep.distribution->local->locally_essential_tree(),
                                  sweep.distribution->local->tree().get()});
  // Burton-Miller's curvature correction first, so that its two Laplace operators (FMMs and
  // near-field corrections) are gone before the Helmholtz one is built: the set-up's peak holds
  // two operators, not three.
  if (opt.curvature_correction) {
    // c_i from the Laplace layer potentials of the same backend (plain and with coupling 1);
    // the geometric error is the kernel's singular part, the Helmholtz one differs by
    // O((k h)^2). Added to S + alpha D' as alpha c_i (below). k-independent: formed once a sweep.
    if (!sweep.curvature_correction) {
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
        if (sweep.distribution)
          laplace->distribute(sweep.distribution->local->locally_essential_tree(), comm);
        return laplace;
      };
      // The coupled operator's coupling: a length of the body's order, the same on every rank
      // (the largest part's diameter), so that S[1] and L D'[1] are alike in size.
      double length = mesh.diameter();
      PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &length, 1, MPI_DOUBLE, MPI_MAX, comm));
      sweep.curvature_correction = adjoint_double_layer_curvature_correction(
          mesh, [&](const std::vector<double> &weights) { return make(0.0, weights); },
          [&](const std::vector<double> &weights) { return make(length, weights); },
          opt.near.feature_angle,
          sweep.distribution ? &sweep.distribution->feature_segments : nullptr);
      PetscCall(PetscLogEventEnd(events.curvature, 0, 0, 0, 0));
    }
  }
  if (opt.operator_backend == OperatorBackend::fmm) {
    std::unique_ptr<FmmLayerPotentials> fast;
    on_every_rank(comm, [&] {
      fast = std::make_unique<FmmLayerPotentials>(disc, k, rows, opt.near, opt.fmm,
                                                  &sweep.fmm_events, problem.layer_coupling(),
                                                  opt.double_density, fmm_part);
    });
    if (sweep.distribution) {
      // Each rank forms the partial multipoles of its own leaves and exchanges those its peers'
      // M2L lists read.
      fast->distribute(sweep.distribution->local->locally_essential_tree(), comm, opt.fmm_overlap);
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
    const std::vector<double> &c = *sweep.curvature_correction;
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
  if (regularised && !sweep.distribution) centroid_rule.emplace(mesh, 1);
  const Discretization &regulariser_disc = centroid_rule ? *centroid_rule : disc;
  if (regularised) {
    fmm::FmmOptions regulariser_fmm = opt.fmm;
    regulariser_fmm.order = 0;
    regulariser_fmm.tolerance = std::max(opt.fmm.tolerance, 1e-3);
    const fmm::Wavenumber screened =
        fmm::Wavenumber::screened(problem.spec().regulariser_kappa_factor * k);
    if (opt.operator_backend == OperatorBackend::fmm) {
      std::unique_ptr<FmmLayerPotentials> single_layer;
      on_every_rank(comm, [&] {
        single_layer = std::make_unique<FmmLayerPotentials>(
            regulariser_disc, screened, rows, opt.near, regulariser_fmm,
            &sweep.regulariser_fmm_events, 0.0, DensityModel::constant, fmm_part);
      });
      if (sweep.distribution)
        single_layer->distribute(sweep.distribution->local->locally_essential_tree(), comm);
      else if (size > 1)
        single_layer->share_upward_pass(rank, size, [comm](std::span<cplx> multipoles) {
          MPI_Allreduce(MPI_IN_PLACE, multipoles.data(), int(multipoles.size()),
                        MPI_C_DOUBLE_COMPLEX, MPI_SUM, comm);
        });
      regulariser = std::move(single_layer);
    } else {
      regulariser =
          std::make_unique<DirectLayerPotentials>(regulariser_disc, screened, rows, opt.near, 0.0);
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
      indices[j] = PetscInt(sweep.distribution ? solver_elements[e] : e);
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
    const KStage *held = &stage;
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
    const bool whole = size == 1 && !sweep.distribution;
    op = std::make_unique<RegularisedOperator>(
        layers, *regulariser, problem.regularised_coefficients(),
        whole ? RegularisedOperator::Gather{} : RegularisedOperator::Gather(gather), timed);
  } else {
    op = std::make_unique<BoundaryOperator>(layers, coefficients);
  }

  VecScatter &density_scatter = stage.density_scatter;
  Vec &x_columns = stage.x_columns;
  stage.columns_read = layers.columns();
  if (sweep.distribution) {
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
  stage.ctx = ShellContext{op.get(), density_scatter ? density_scatter : sweep.gather,
                           x_columns ? x_columns : sweep.x_all, events};
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
      if (sweep.distribution)
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
  if (sweep.distribution) {
    if (layers.reconstruction())
      for (std::size_t e = 0; e < mesh.size(); ++e)
        stage.fitted_elements += layers.reconstruction()->fitted(e) ? 1 : 0;
    unsigned long long held[2] = {stage.held_elements, stage.fitted_elements};
    PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, held, 2, MPI_UNSIGNED_LONG_LONG, MPI_MAX, comm));
    stage.held_elements = held[0];
    stage.fitted_elements = held[1];
    const double local[3] = {
        sweep.distribution->local->work(), double(stage.columns_read - rows.size()),
        double(sweep.distribution->local->locally_essential_tree().received_multipoles()) * 16.0 *
            double(fmm_layers->fmm().order() * fmm_layers->fmm().order())};
    PetscCallMPI(MPI_Allreduce(local, stage.distribution_max, 3, MPI_DOUBLE, MPI_MAX, comm));
    PetscCallMPI(MPI_Allreduce(local, stage.distribution_sum, 3, MPI_DOUBLE, MPI_SUM, comm));
  }
  refuse_unused_options();
  PetscCall(PetscTime(&stage.t_ready));
  PetscFunctionReturn(0);
}

// The summary's opening lines, of the set-up that every source of sweep point `index` shares
// (rank 0).
PetscErrorCode print_setup_summary(const SweepContext &sweep, const KStage &stage,
                                   const Problem &problem, std::size_t index) {
  PetscFunctionBeginUser;
  const SolveOptions &opt = sweep.opt;
  const Mesh &mesh = sweep.mesh;
  const PetscInt n = sweep.n;
  const PetscMPIInt size = sweep.size;
  const std::size_t count = opt.wavenumbers.size();
  const bool several = sweep.source_count > 1;
  const double k = problem.spec().k;
  const FmmLayerPotentials *fmm_layers = stage.fmm_layers;
  if (count == 1)
    PetscCall(PetscPrintf(PETSC_COMM_SELF, "\nfmbem bem_solve summary\n"));
  else
    PetscCall(PetscPrintf(PETSC_COMM_SELF, "\nfmbem bem_solve summary, k %zu of %zu\n", index + 1,
                          count));
  PetscCall(PetscPrintf(PETSC_COMM_SELF,
                        "  mesh            %s: N = %" PetscInt_FMT
                        " elements, %zu vertices, diameter %.4g\n",
                        opt.mesh.c_str(), n, mesh.extent().vertices, mesh.diameter()));
  if (!opt.planes.empty())
    PetscCall(PetscPrintf(PETSC_COMM_SELF,
                          "  planes          %s (%zu mirror image%s of each element)\n",
                          opt.planes.description().c_str(), opt.planes.images() - 1,
                          opt.planes.images() == 2 ? "" : "s"));
  // The whole mesh's (a part keeps the whole's count).
  const std::size_t flipped = mesh.flipped_triangles();
  if (flipped > 0)
    PetscCall(PetscPrintf(PETSC_COMM_SELF,
                          "  orientation     %zu triangles flipped to make "
                          "normals point outward\n",
                          flipped));
  if (!several)
    PetscCall(PetscPrintf(PETSC_COMM_SELF, "  problem         %s, k = %g\n",
                          problem.description().c_str(), k));
  PetscCall(PetscPrintf(PETSC_COMM_SELF, "  formulation     %s\n",
                        problem.formulation_description().c_str()));
  if (problem.spec().kind == ProblemKind::Surface) {
    // The groups' conditions as given (a source of several may silence some).
    const SurfaceData &data = *opt.problem.surface;
    // Formatted here: PetscPrintf's %g writes 343 as "343.".
    char medium[160];
    std::snprintf(medium, sizeof medium, "c = %g m/s, rho = %g kg/m^3; f = %g Hz",
                  data.medium.sound_speed, data.medium.density, frequency_of(k, data.medium));
    PetscCall(PetscPrintf(PETSC_COMM_SELF, "  medium          %s\n", medium));
    for (std::size_t c = 0; c < data.classes.size(); ++c) {
      const GroupCondition &condition = data.classes[c];
      std::string what = condition_name(condition.kind);
      if (condition.kind != ConditionKind::rigid) {
        const cplx v = condition.value_at(frequency_of(k, data.medium));
        char text[160];
        std::snprintf(text, sizeof text, " %.6g%+.6gi%s%s", v.real(), v.imag(),
                      condition.kind == ConditionKind::velocity   ? " m/s"
                      : condition.kind == ConditionKind::pressure ? " Pa"
                                                                  : " (of rho c)",
                      condition.value.table ? " (table)" : "");
        what += text;
      }
      char extent[96];
      std::snprintf(extent, sizeof extent, "%llu elements, area %.6g",
                    sweep.class_extents[c].elements, sweep.class_extents[c].area);
      PetscCall(PetscPrintf(PETSC_COMM_SELF, "  group           %s: %s, %s\n",
                            data.labels[c].c_str(), extent, what.c_str()));
    }
  }
  PetscCall(PetscPrintf(
      PETSC_COMM_SELF,
      "  discretization  piecewise constant, collocation "
      "at centroids, %d-point Gauss rule%s%s\n",
      opt.quadrature_points,
      opt.double_density == DensityModel::quadratic
          ? "; double-layer density read as a quadratic fitted to the "
            "neighbours"
          : "",
      opt.curvature_correction ? "; D' corrected for the flat elements' edge curvature" : ""));
  PetscCall(PetscPrintf(PETSC_COMM_SELF,
                        "  operator        %s on %d rank(s); near-field correction %llu pairs, "
                        "%.1f MB\n",
                        name_of(opt.operator_backend), size, stage.near_nonzeros,
                        stage.near_bytes_total / 1e6));
  if (sweep.split_ranks > 0)
    PetscCall(PetscPrintf(PETSC_COMM_SELF,
                          "  split           frequencies over %d ranks (-bem_split frequencies): "
                          "this k on rank %d\n",
                          sweep.split_ranks, sweep.split_rank));
  if (sweep.distribution)
    PetscCall(PetscPrintf(PETSC_COMM_SELF,
                          "  distributed     tree partitioned over %d ranks (Morton order, "
                          "modelled work max/mean %.4f); per MatMult a rank receives at most "
                          "%.0f densities and %.3f MB of multipoles (all ranks %.0f, %.3f MB)\n",
                          size, stage.distribution_max[0] / (stage.distribution_sum[0] / size),
                          stage.distribution_max[1], stage.distribution_max[2] / 1e6,
                          stage.distribution_sum[1], stage.distribution_sum[2] / 1e6));
  if (sweep.distribution)
    PetscCall(
        PetscPrintf(PETSC_COMM_SELF,
                    "  distributed     mesh read %s; a rank holds at most %llu of "
                    "the %" PetscInt_FMT " elements (its part and the halo its operator "
                    "reads)\n",
                    io::reads_in_slabs(opt.mesh) ? "in slabs, each rank its own" : "on rank 0",
                    stage.held_elements, n));
  if (stage.fitted_elements > 0)
    PetscCall(PetscPrintf(
        PETSC_COMM_SELF,
        "  distributed     the quadratic read's fits: at most %llu of the %" PetscInt_FMT
        " elements a rank\n",
        stage.fitted_elements, n));
  if (fmm_layers) {
    const fmm::FmmStatistics &stats = fmm_layers->fmm().statistics();
    PetscCall(PetscPrintf(PETSC_COMM_SELF,
                          "  fmm             p = %d, %d levels, %zu leaves (max leaf %d), "
                          "%llu near-field point pairs (all ranks), %.1f MB on rank 0; "
                          "P2M/M2M/L2L/L2P on %s, M2L on %s, near field on %s\n",
                          stats.order, stats.levels, stats.leaves, stats.max_leaf,
                          stage.fmm_near_pairs, stats.total_bytes() / 1e6,
                          stats.far_field_device.c_str(), stats.m2l_device.c_str(),
                          stats.near_field_device.c_str()));
  }
  const double pc_seconds = stage.pc_seconds, pc_bytes = stage.pc_bytes;
  const std::string &pc_name = stage.pc_name;
  if (stage.leaf_blocks)
    PetscCall(PetscPrintf(
        PETSC_COMM_SELF,
        "  preconditioner  leaf_block on the %s: %llu blocks of at most %llu "
        "elements (groups of %d and %d layers, %s entries), inverses %.1f MB; "
        "set up in %.3f s\n",
        stage.leaf_blocks->device() == LeafBlockPreconditioner::Device::gpu ? "gpu" : "cpu",
        stage.leaf_block_count, stage.leaf_block_largest, stage.leaf_block_settings.block_size,
        stage.leaf_block_settings.overlap, name_of(stage.leaf_block_settings.entries),
        pc_bytes / 1e6, pc_seconds));
  else if (stage.near_matrix)
    PetscCall(PetscPrintf(PETSC_COMM_SELF,
                          "  preconditioner  %s on the near-field matrix (%.0f nonzeros, "
                          "%s pairs, %.1f MB, assembled in %.3f s); set up in %.3f s, %.1f MB\n",
                          pc_name.c_str(), stage.near_matrix_nonzeros,
                          name_of(opt.near_matrix_pairs), stage.near_matrix_bytes / 1e6,
                          stage.near_matrix_seconds, pc_seconds, pc_bytes / 1e6));
  else
    PetscCall(PetscPrintf(PETSC_COMM_SELF,
                          "  preconditioner  %s (matrix-free: no near-field matrix); set up in "
                          "%.3f s, %.1f MB\n",
                          pc_name.c_str(), pc_seconds, pc_bytes / 1e6));
  PetscFunctionReturn(0);
}

// Solves source `at.source` of sweep point `at.k` with `stage` (built for its k): its
// right-hand side, the KSP with the true residual's rounds, the error, its summary (the
// set-up's lines with the first source) and its outputs on rank 0. A failed solve is reported
// (one error line) and leaves row->solved false.
PetscErrorCode solve_source(const SweepContext &sweep, KStage &stage, const Problem &problem,
                            const OutputIndex &at, const std::string &source_label, SweepRow *row) {
  PetscFunctionBeginUser;
  const MPI_Comm comm = sweep.comm;
  const PetscMPIInt rank = sweep.rank, size = sweep.size;
  const SolveOptions &opt = sweep.opt;
  const Mesh &mesh = sweep.mesh;
  const Discretization &disc = sweep.disc;
  const RowRange rows = sweep.rows;
  const Vec x = sweep.x, b = sweep.b;
  const LogEvents events = sweep.events;
  FieldStage &field_stage = sweep.field_stage;
  const std::size_t count = at.k_count;
  const bool first = at.source == 0, several = at.source_count > 1;
  const double k = problem.spec().k;
  const CorrectedLayerPotentials &layers = *stage.layers;
  const KSP ksp = stage.ksp;
  const Mat A = stage.A;
  const ShellContext &ctx = stage.ctx;
  const PetscInt mat_mults_before = ctx.mat_mults;
  const PetscLogDouble mat_mult_seconds_before = ctx.mat_mult_seconds;
  // A later source's set-up is its right-hand side alone.
  PetscLogDouble t_begin, t_setup, t_solved;
  PetscCall(PetscTime(&t_begin));
  if (first) t_begin = stage.t_start;
  {
    std::vector<cplx> f;
    if (stage.regularised) {
      const Problem::RightHandSideParts parts = problem.right_hand_side_parts(layers);
      f = static_cast<const RegularisedOperator &>(*stage.op).right_hand_side(parts.value,
                                                                              parts.derivative);
    } else {
      f = problem.right_hand_side(layers);
    }
    PetscScalar *ba;
    PetscCall(VecGetArray(b, &ba));
    std::copy(f.begin(), f.end(), ba);
    PetscCall(VecRestoreArray(b, &ba));
  }
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
  if (sweep.numcalc) {
    sweep.numcalc->solver_name = ksp_type;
    for (char &c : sweep.numcalc->solver_name) c = char(std::toupper((unsigned char)c));
  }
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

  // This rank's rows of the solution and, where the problem has an exact one, of the error: the
  // report's norms are reduced from them and the .pvtu's pieces written; only the outputs that
  // rank 0 writes whole gather them (gathers_solution).
  std::vector<cplx> own_solution(rows.size());
  {
    const PetscScalar *xa;
    PetscCall(VecGetArrayRead(x, &xa));
    std::copy(xa, xa + rows.size(), own_solution.begin());
    PetscCall(VecRestoreArrayRead(x, &xa));
  }
  const std::optional<std::vector<cplx>> &exact = problem.exact_solution();
  const bool has_error = exact && solved;
  std::vector<double> own_error;  // |u - exact| of this rank's rows
  ErrorNorms error{};             // on rank 0
  if (has_error) {
    if (problem.exact_rows().begin != rows.begin || problem.exact_rows().end != rows.end)
      throw Error("the exact solution was evaluated for other rows than this rank's");
    own_error.resize(rows.size());
    for (std::size_t i = 0; i < rows.size(); ++i)
      own_error[i] = std::abs(own_solution[i] - (*exact)[i]);
    PetscCall(reduce_error_norms(comm, error_sums(mesh, rows, own_solution, *exact), &error));
  }
  PetscCall(PetscLogEventBegin(events.outputs, 0, 0, 0, 0));
  std::vector<cplx> solution, error_values;  // rank 0: every element's, when gathered
  if (solved && gathers_solution(opt)) {
    PetscCall(gather_to_rank_zero(x, &solution));
    if (has_error) {
      Vec error_vector;
      PetscCall(VecDuplicate(x, &error_vector));
      PetscScalar *ea;
      PetscCall(VecGetArray(error_vector, &ea));
      std::copy(own_error.begin(), own_error.end(), ea);
      PetscCall(VecRestoreArray(error_vector, &ea));
      PetscCall(gather_to_rank_zero(error_vector, &error_values));
      PetscCall(VecDestroy(&error_vector));
    }
  }

  // The largest resident set of any rank so far, and the largest heap in use now (what a rank
  // holds through the solve, the set-up's transients gone).
  double host_bytes[2] = {0, 0};
  {
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    double local[2] = {double(usage.ru_maxrss) * 1024.0, 0.0};  // Linux: kilobytes
    // The heap in use (the resident set keeps what the allocator holds for reuse).
    const struct mallinfo2 heap = mallinfo2();
    local[1] = double(heap.uordblks + heap.hblkhd);
    PetscCallMPI(MPI_Allreduce(local, host_bytes, 2, MPI_DOUBLE, MPI_MAX, comm));
  }
  const double peak_host_bytes = host_bytes[0], held_host_bytes = host_bytes[1];
  std::string failure;  // rank 0's reason for exit status 2
  if (rank == 0) {
    const std::string u = problem.unknown_name();
    if (first) PetscCall(print_setup_summary(sweep, stage, problem, at.k));
    if (several) {
      PetscCall(PetscPrintf(PETSC_COMM_SELF, "  source          %zu of %zu: %s\n", at.source + 1,
                            at.source_count, source_label.c_str()));
      PetscCall(PetscPrintf(PETSC_COMM_SELF, "  problem         %s, k = %g\n",
                            problem.description().c_str(), k));
    }
    char continued[128] = "";
    if (rounds > 0)
      std::snprintf(continued, sizeof continued, " (continued %d time(s) %s)", rounds,
                    solved ? "until the true residual met -ksp_rtol"
                           : "from KSP's answer; the true residual still misses -ksp_rtol");
    PetscCall(PetscPrintf(
        PETSC_COMM_SELF,
        "  solver          %" PetscInt_FMT " iterations, %s, true relative residual %.2e%s\n",
        iterations, KSPConvergedReasons[reason], double(true_residual), continued));
    PetscCall(PetscPrintf(PETSC_COMM_SELF,
                          "  times           set-up %.3f s, solve %.3f s, %.4f s per "
                          "MatMult (%" PetscInt_FMT " MatMults)\n",
                          t_setup - t_begin, t_solved - t_setup,
                          mat_mults ? mat_mult_seconds / mat_mults : 0.0, mat_mults));
    PetscCall(PetscPrintf(PETSC_COMM_SELF,
                          "  memory          peak host %.3f GB resident (max over %d rank(s), "
                          "after the solve); heap in use after it %.3f GB\n",
                          peak_host_bytes / 1e9, size, held_host_bytes / 1e9));
    if (has_error) {
      row->has_error = true;
      row->error_max = error.max_abs;
      row->error_relative_l2 = error.relative_l2;
      PetscCall(
          PetscPrintf(PETSC_COMM_SELF, "  exact           %s\n", problem.exact_name().c_str()));
      PetscCall(PetscPrintf(PETSC_COMM_SELF,
                            "  error           max |%s - exact| = %.3e, relative L2 = %.3e\n",
                            u.c_str(), error.max_abs, error.relative_l2));
    } else if (solved) {
      PetscCall(
          PetscPrintf(PETSC_COMM_SELF, "  exact           none for this geometry and problem\n"));
    }
    if (!solved) {
      char text[512];
      char at_k[96] = "";
      if (count > 1) std::snprintf(at_k, sizeof at_k, " at k = %g", k);
      if (several)
        std::snprintf(at_k + std::strlen(at_k), sizeof at_k - std::strlen(at_k), " for source %zu",
                      at.source + 1);
      char target[160] = "";
      if (reason > 0 && rtol > 0)
        std::snprintf(target, sizeof target, ", above -ksp_rtol %g: KSP's own test stopped it%s",
                      double(rtol),
                      std::string(ksp_type) == KSPPREONLY
                          ? " (-ksp_type preonly applies the preconditioner once)"
                          : (reason == KSP_CONVERGED_ATOL ? " (-ksp_atol)" : ""));
      else if (reason > 0)
        std::snprintf(target, sizeof target, ", absolute %.2e above -ksp_atol %g",
                      double(true_absolute), double(abstol));
      std::snprintf(text, sizeof text,
                    "the solve failed%s: %s after %" PetscInt_FMT
                    " iterations (true relative residual %.2e%s); no output written%s",
                    at_k, KSPConvergedReasons[reason], iterations, double(true_residual), target,
                    count == 1 && !several ? "" : " for it");
      failure = text;
    }
  }
  if (solved) {
    std::vector<std::string> lines;  // rank 0's: the field's summary, then the files written
    // Every file of this k filled first, then all committed: pieces, rank 0's files, and the
    // .pvtu's summary last (a reader that sees it finds its pieces).
    OutputBatch batch, summary;
    on_rank_zero(comm, [&] {
      if (!gathers_solution(opt)) return;
      // The files and the field in the user's element order and on the user's mesh (the
      // solver's order is part by part when distributed, and the ranks hold parts alone).
      const auto user_mesh = [&]() -> const Mesh & {
        return sweep.distribution ? sweep.distribution->user_mesh.value() : mesh;
      };
      const auto to_user = [&](auto values) {
        if (!sweep.distribution) return values;
        auto out = values;
        const std::vector<std::size_t> &order = sweep.distribution->element_order;
        for (std::size_t i = 0; i < order.size(); ++i) out[order[i]] = values[i];
        return out;
      };
      // The element classes of the user's mesh (surface conditions).
      const std::span<const std::int32_t> user_classes =
          problem.spec().kind != ProblemKind::Surface ? std::span<const std::int32_t>()
          : sweep.distribution
              ? std::span<const std::int32_t>(sweep.distribution->user_element_class)
              : std::span<const std::int32_t>(*problem.spec().element_class);
      if (opt.field.field() || opt.field.farfield_directions > 0) {
        const field::FieldOptions field_options{opt.near, opt.fmm,
                                                opt.operator_backend == OperatorBackend::fmm};
        lines = sweep.distribution
                    ? field_stage.evaluate(problem, sweep.distribution->user_disc.value(),
                                           to_user(solution), field_options, user_classes)
                    : field_stage.evaluate(problem, disc, solution, field_options);
        if (sweep.sofa)
          sweep.sofa->add(at, field_stage.hrtf(),
                          sofa_receiver(problem.spec(), *field_stage.reference()));
      }
      const auto physical = [&] {
        return physical_fields(problem, user_mesh(), user_classes, 0, to_user(solution));
      };
      if (!opt.vtu_path.empty() && !writes_pieces(opt)) {
        std::vector<io::CellField> fields =
            solution_fields(problem.unknown_name(), solution,
                            part(error_values, [](const cplx &c) { return c.real(); }));
        for (io::CellField &field : fields) field.values = to_user(std::move(field.values));
        if (!user_classes.empty()) {
          std::vector<io::CellField> more = physical();
          fields.insert(fields.end(), std::make_move_iterator(more.begin()),
                        std::make_move_iterator(more.end()));
        }
        const io::OutputFile &vtu =
            batch.add(sweep_output_path(opt.vtu_path, at), "-o",
                      [&](const std::string &path) { io::write_vtu(path, user_mesh(), fields); });
        lines.push_back("wrote           " + vtu.path());
      }
      if (!opt.csv_path.empty()) {
        const io::OutputFile &csv = batch.add(
            sweep_output_path(opt.csv_path, at), "-bem_csv", [&](const std::string &path) {
              if (user_classes.empty())
                io::write_csv(path, user_mesh(), to_user(solution));
              else
                io::write_csv(path, user_mesh(), physical());
            });
        lines.push_back("wrote           " + csv.path());
      }
      if (sweep.numcalc) {
        // NumCalc's files of this step: the pressure and normal velocity at each boundary
        // element's centroid, the total pressure and the particle velocity at each evaluation node.
        const NumCalcWriter &nc = *sweep.numcalc;
        const std::string folder = nc.step_folder(at.source, at.k);
        std::error_code ec;
        std::filesystem::create_directories(folder, ec);
        if (ec)
          throw Error("-bem_numcalc: cannot make the folder '" + folder + "': " + ec.message());
        const SurfaceValues values = surface_values(problem, user_classes, 0, to_user(solution));
        batch.add(folder + "/pBoundary", "-bem_numcalc", [&](const std::string &path) {
          io::write_numcalc_boundary(path, nc.input.version_line, nc.mesh, values.pressure);
        });
        batch.add(folder + "/vBoundary", "-bem_numcalc", [&](const std::string &path) {
          io::write_numcalc_boundary(path, nc.input.version_line, nc.mesh, values.velocity);
        });
        if (!nc.mesh.grid_node_ids.empty()) {
          batch.add(folder + "/pEvalGrid", "-bem_numcalc", [&](const std::string &path) {
            io::write_numcalc_grid(path, nc.input.version_line, nc.mesh, field_stage.total());
          });
          batch.add(folder + "/vEvalGrid", "-bem_numcalc", [&](const std::string &path) {
            io::write_numcalc_grid_velocity(path, nc.input.version_line, nc.mesh,
                                            field_stage.velocity());
          });
        }
        lines.push_back("wrote           " + folder + "/ (NumCalc's pBoundary, vBoundary" +
                        (nc.mesh.grid_node_ids.empty() ? "" : ", pEvalGrid, vEvalGrid") + ")");
      }
      field_stage.fill(at, [&](const std::string &path, const std::string &option,
                               const std::function<void(const std::string &)> &writer) {
        batch.add(path, option, writer);
        lines.push_back("wrote           " + path);
      });
    });
    if (writes_pieces(opt)) {
      std::vector<io::CellField> fields =
          solution_fields(problem.unknown_name(), own_solution, own_error);
      if (problem.spec().kind == ProblemKind::Surface) {
        std::vector<io::CellField> more =
            physical_fields(problem, mesh, *problem.spec().element_class, rows.begin, own_solution);
        fields.insert(fields.end(), std::make_move_iterator(more.begin()),
                      std::make_move_iterator(more.end()));
      }
      fill_pieces(sweep, at, fields, batch, summary, lines);
    }
    on_every_rank(comm, [&] { batch.commit(); });
    on_rank_zero(comm, [&] { summary.commit(); });
    for (const std::string &line : lines) PetscCall(PetscPrintf(comm, "  %s\n", line.c_str()));
  }
  PetscCall(PetscLogEventEnd(events.outputs, 0, 0, 0, 0));
  if (!solved && rank == 0) std::fprintf(stderr, "bem_solve: error: %s\n", failure.c_str());
  row->iterations = long(iterations);
  row->reason = KSPConvergedReasons[reason];
  row->solved = solved;
  row->source = at.source;
  row->setup_seconds = t_setup - t_begin;
  row->solve_seconds = t_solved - t_setup;
  row->residual = double(true_residual);

  PetscFunctionReturn(0);
}

}  // namespace

PetscErrorCode run_bem_solve(MPI_Comm comm, int *exit_status) {
  PetscFunctionBeginUser;
  *exit_status = kExitSolved;
  PetscMPIInt rank, size;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  PetscCallMPI(MPI_Comm_size(comm, &size));
  LogEvents events;
  PetscClassId class_id;
  PetscCall(PetscClassIdRegister("fmbem", &class_id));
  PetscCall(PetscLogEventRegister("BEMNearSetup", class_id, &events.near_setup));
  PetscCall(PetscLogEventRegister("BEMCurvature", class_id, &events.curvature));
  PetscCall(PetscLogEventRegister("BEMPartition", class_id, &events.partition));
  PetscCall(PetscLogEventRegister("BEMOperator", class_id, &events.operator_apply));
  PetscCall(PetscLogEventRegister("BEMRegulariser", class_id, &events.regulariser));
  PetscCall(register_leaf_block_pc());
  PetscCall(PetscLogEventRegister("BEMOutput", class_id, &events.outputs));

  // One GPU per rank: the node-local rank picks the device, before any other CUDA call.
  {
    MPI_Comm node;
    PetscMPIInt local_rank;
    PetscCallMPI(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
    PetscCallMPI(MPI_Comm_rank(node, &local_rank));
    PetscCallMPI(MPI_Comm_free(&node));
    try {
      fmm::select_gpu(local_rank);
    } catch (const std::exception &e) {
      SETERRQ(PETSC_COMM_SELF, PETSC_ERR_LIB, "%s", e.what());
    }
  }

  // Every rank must have been given the same options: with per-rank command lines (MPMD) an
  // option only one rank has would leave the others waiting for work it does alone, and
  // different -k would be mixed into one answer.
  {
    char *all = nullptr;
    PetscCall(PetscOptionsGetAll(nullptr, &all));
    std::string mine = all ? all : "", first = mine;
    PetscCall(PetscFree(all));
    broadcast_string(comm, first);
    int differs = mine != first ? rank : size;
    PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &differs, 1, MPI_INT, MPI_MIN, comm));
    if (differs < size)
      throw Error("the ranks were given different options (rank " + std::to_string(differs) +
                  "'s differ from rank 0's): give every rank the same command line");
  }
  SolveOptions opt;
  PetscCall(read_solve_options(comm, &opt));
  if (opt.help) {
    PetscCall(print_solver_help(comm));
    PetscFunctionReturn(0);
  }
  PetscLogDouble t_start;
  PetscCall(PetscTime(&t_start));
  // -bem_split frequencies: every rank runs the sweep below alone (PETSC_COMM_SELF) for its own
  // points; `comm` holds the run together (the mesh read once, the results gathered on rank 0).
  const bool split = opt.split_frequencies && size > 1;
  const MPI_Comm sweep_comm = split ? PETSC_COMM_SELF : comm;
  const PetscMPIInt sweep_rank = split ? 0 : rank, sweep_size = split ? 1 : size;
  // Work of the ranks that evaluate fields and write files: rank 0, or each rank for its k.
  const auto on_writing_ranks = [&](auto &&work) {
    if (split)
      on_every_rank(comm, work);
    else
      on_rank_zero(comm, work);
  };

  // The sources' count as the options give it; separate groups are known once the mesh's
  // groups are (checked again then when the count differs).
  const std::size_t listed_sources =
      std::max<std::size_t>(1, opt.problem.incident.kind == exact::Incident::Kind::PlaneWave &&
                                       opt.problem.kind != ProblemKind::Radiation
                                   ? opt.sources.directions.size()
                                   : opt.sources.positions.size());
  on_rank_zero(comm, [&] { check_outputs(opt, sweep_size, listed_sources); });
  // The field points are read where they are evaluated.
  FieldStage field_stage;
  std::optional<NumCalcWriter> numcalc;
  on_writing_ranks([&] {
    if (!opt.numcalc_path.empty()) {
      numcalc.emplace(opt);
      if (rank == 0)
        for (const std::string &note : opt.numcalc_notes)
          std::printf("bem_solve: note: %s\n", note.c_str());
    }
    field_stage.prepare(opt.field, numcalc ? &numcalc->mesh.grid : nullptr);
  });
  std::vector<std::string> warnings;
  // The distributed FMM: rank 0 alone reads and validates the mesh (a generated
  // icosphere: each rank its own slab, io::read_slab), and each rank
  // builds its operator on its part with the halo the operator reads (DistributedMesh: the tree
  // partitioned over the ranks, the elements numbered part by part, so that each rank's rows are
  // a contiguous range, PETSc's layout); the files keep the user's order. Otherwise every rank
  // holds the whole mesh.
  const bool distribute =
      sweep_size > 1 && opt.fmm_distribute && opt.operator_backend == OperatorBackend::fmm;
  std::optional<Mesh> whole_mesh;
  std::optional<MeshSlab> mesh_slab;  // this rank's, where each rank reads its own
  std::unique_ptr<Distribution> distribution;
  if (!distribute) {
    whole_mesh.emplace(Mesh::from_surface(read_surface_everywhere(comm, opt.mesh, warnings),
                                          opt.mesh, opt.planes));
  } else {
    PetscCall(PetscLogEventBegin(events.partition, 0, 0, 0, 0));
    distribution = std::make_unique<Distribution>();
    DistributionEvents distribution_events(class_id, "Dist");
    const HaloReach reach = halo_reach(opt.near, opt.double_density, opt.curvature_correction);
    // The partition's tree serves every k of the sweep: no leaf on the highest k's diagonal
    // levels (a rank's FMM cannot split it further).
    fmm::FmmOptions partition_fmm = opt.fmm;
    partition_fmm.largest_wavenumber =
        *std::max_element(opt.wavenumbers.begin(), opt.wavenumbers.end());
    // (A mesh with image planes is validated whole against them: rank 0 reads it.)
    if (io::reads_in_slabs(opt.mesh) && opt.planes.empty()) {
      // Each rank reads its own slab (a generated icosphere): no rank holds the whole mesh.
      on_every_rank(comm, [&] {
        const std::size_t elements = io::slab_source_elements(opt.mesh);
        mesh_slab.emplace(io::read_slab(opt.mesh, mesh_slab_begin(elements, rank, size),
                                        mesh_slab_begin(elements, rank + 1, size)));
      });
      distribution->local =
          std::make_unique<DistributedMesh>(comm, *mesh_slab, opt.mesh, opt.quadrature_points,
                                            partition_fmm, reach, &distribution_events);
      // The gathered outputs are written on rank 0 from the user's mesh, read whole there.
      if (gathers_solution(opt))
        on_rank_zero(comm, [&] { whole_mesh.emplace(io::load_mesh(opt.mesh)); });
    } else {
      Surface surface = read_surface_on_rank_zero(comm, opt.mesh, warnings);
      on_rank_zero(comm, [&] {
        whole_mesh.emplace(Mesh::from_surface(std::move(surface), opt.mesh, opt.planes));
      });
      distribution->local = std::make_unique<DistributedMesh>(
          comm, whole_mesh ? &*whole_mesh : nullptr, opt.mesh, opt.quadrature_points, partition_fmm,
          reach, &distribution_events);
    }
    PetscCall(PetscLogEventEnd(events.partition, 0, 0, 0, 0));
  }
  const Mesh &mesh = distribution ? distribution->local->mesh() : *whole_mesh;
  // Every k of a sweep is checked before any work; the highest k's warning is the one to give.
  // (A part keeps the whole mesh's box and longest edge.)
  {
    std::optional<std::string> coarse;
    const double highest = *std::max_element(opt.wavenumbers.begin(), opt.wavenumbers.end());
    for (double k : opt.wavenumbers)
      if (auto warning = check_resolution(mesh, k, opt.allow_coarse);
          warning && (!coarse || k == highest))
        coarse = std::move(warning);
    if (coarse) warnings.push_back(*coarse);
  }
  if (opt.problem.kind == ProblemKind::Radiation && !opt.source_given)
    opt.problem.source = mesh.bounding_box_center();
  // Surface conditions mapped to the elements once a sweep (tables are read already): this
  // rank's mesh (a part carries the whole group list, so every rank has the same classes), and
  // rank 0's whole mesh for the surface's facts and the outputs.
  std::vector<ClassExtent> class_extents;
  if (opt.problem.kind == ProblemKind::Surface) {
    std::optional<ElementClasses> classes;
    on_every_rank(comm, [&] { classes = assign_conditions(mesh, opt.conditions, opt.medium); });
    for (const std::string &w : passivity_warnings(opt.conditions)) warnings.push_back(w);
    opt.problem.surface = classes->data;
    opt.problem.element_class =
        std::make_shared<const std::vector<std::int32_t>>(std::move(classes->element_class));
    // Each class's share of the surface: this rank's rows (a part's; every row on one rank
    // that holds the whole mesh), summed over the ranks.
    const RowRange counted = distribution ? distribution->local->rows() : RowRange{0, mesh.size()};
    const std::size_t count = classes->data->classes.size();
    std::vector<double> sums(2 * count, 0.0);
    for (std::size_t e = counted.begin; e < counted.end; ++e) {
      const std::size_t c = std::size_t((*opt.problem.element_class)[e]);
      sums[2 * c] += 1.0;
      sums[2 * c + 1] += mesh.areas()[e];
    }
    if (distribution)
      PetscCallMPI(
          MPI_Allreduce(MPI_IN_PLACE, sums.data(), int(sums.size()), MPI_DOUBLE, MPI_SUM, comm));
    class_extents.resize(count);
    for (std::size_t c = 0; c < count; ++c)
      class_extents[c] = {static_cast<unsigned long long>(sums[2 * c]), sums[2 * c + 1]};
  }
  // The run's sources: each its own right-hand side of one operator per k.
  const std::vector<SourceCase> cases = source_cases(opt.problem, opt.sources);
  if (cases.size() != listed_sources)
    on_rank_zero(comm, [&] { check_outputs(opt, sweep_size, cases.size()); });
  // A source's spec with the whole mesh's element classes (rank 0's, where the whole mesh is).
  const auto whole_spec = [&](const Mesh &whole, ProblemSpec spec) {
    if (spec.kind == ProblemKind::Surface)
      spec.element_class = std::make_shared<const std::vector<std::int32_t>>(
          assign_conditions(whole, opt.conditions, opt.medium).element_class);
    return spec;
  };
  // What each source's problem needs of the whole surface (its sphere fit, the source's
  // clearance and winding number, a vibrating cap): formed where the whole mesh is, for every
  // k.
  std::vector<SurfaceFacts> facts(cases.size());
  if (!distribution) {
    for (std::size_t s = 0; s < cases.size(); ++s) facts[s] = surface_facts(mesh, cases[s].spec);
  } else {
    if (mesh_slab) {
      for (std::size_t s = 0; s < cases.size(); ++s)
        facts[s] = surface_facts(comm, *mesh_slab, cases[s].spec);
      mesh_slab.reset();
    } else {
      static_assert(std::is_trivially_copyable_v<SurfaceFacts>);
      on_rank_zero(comm, [&] {
        for (std::size_t s = 0; s < cases.size(); ++s)
          facts[s] = surface_facts(*whole_mesh, whole_spec(*whole_mesh, cases[s].spec));
      });
      broadcast_bytes(comm, facts.data(), facts.size() * sizeof(SurfaceFacts));
    }
    // The gathered outputs' element order (solver -> user) and the user's mesh, on rank 0.
    const DistributedMesh &local = *distribution->local;
    if (gathers_solution(opt)) {
      std::vector<unsigned long long> own(local.rows().size());
      for (std::size_t i = 0; i < own.size(); ++i)
        own[i] = local.input_elements()[local.rows().begin + i];
      std::vector<int> counts(rank == 0 ? std::size_t(size) : 0),
          offsets(rank == 0 ? std::size_t(size) : 0);
      if (rank == 0)
        for (int r = 0; r < size; ++r) {
          counts[std::size_t(r)] = int(local.part_sizes()[std::size_t(r)]);
          if (r > 0)
            offsets[std::size_t(r)] = offsets[std::size_t(r) - 1] + counts[std::size_t(r) - 1];
        }
      std::vector<unsigned long long> order(rank == 0 ? local.whole_size() : 0);
      PetscCallMPI(MPI_Gatherv(own.data(), int(own.size()), MPI_UNSIGNED_LONG_LONG, order.data(),
                               counts.data(), offsets.data(), MPI_UNSIGNED_LONG_LONG, 0, comm));
      distribution->element_order.assign(order.begin(), order.end());
      if (rank == 0) {
        distribution->user_mesh.emplace(std::move(*whole_mesh));
        if (opt.problem.kind == ProblemKind::Surface)
          distribution->user_element_class =
              *whole_spec(*distribution->user_mesh, opt.problem).element_class;
        if (opt.field.field() || opt.field.farfield_directions > 0)
          distribution->user_disc.emplace(*distribution->user_mesh, opt.quadrature_points);
      }
    }
    whole_mesh.reset();
    if (opt.curvature_correction)
      distribution->feature_segments = gather_feature_segments(comm, local, opt.near.feature_angle);
  }
  const PetscInt n = PetscInt(distribution ? distribution->local->whole_size() : mesh.size());
  Vec x, b;
  PetscCall(VecCreate(sweep_comm, &x));
  PetscCall(VecSetSizes(
      x, distribution ? PetscInt(distribution->local->rows().size()) : PETSC_DECIDE, n));
  // GMRES's vector work on every core (-vec_type still overrides).
  PetscCall(register_threaded_vector_type());
  PetscCall(VecSetType(x, threaded_vector_type));
  PetscCall(VecSetFromOptions(x));
  PetscCall(VecDuplicate(x, &b));
  PetscInt row_begin, row_end;
  PetscCall(VecGetOwnershipRange(x, &row_begin, &row_end));
  // This rank's rows as elements of `mesh`: the operator's, and the problem's exact solution,
  // over which the report's error is summed.
  const RowRange own_rows = distribution ? distribution->local->rows()
                                         : RowRange{std::size_t(row_begin), std::size_t(row_end)};
  if (distribution && std::size_t(row_begin) != distribution->local->first_row())
    throw Error("the distributed mesh's rows are not PETSc's (a defect: please report it)");

  if (opt.field.reference_center)
    for (const SourceCase &c : cases) field::check_reference(c.spec);
  // -bem_sofa's receivers: every source a vibrating ear (HRTFs by reciprocity), or every one an
  // incident wave (its transfer functions to the grid, Mesh2HRTF's plane-wave and point-source
  // projects); one kind a file.
  const auto is_ear = [](const ProblemSpec &spec) {
    return spec.kind == ProblemKind::Surface && !spec.incident_wave;
  };
  if (!opt.field.sofa_path.empty()) {
    // A SOFA file's transfer functions are defined everywhere on its grid: none beyond a
    // reflecting plane, where there is no fluid.
    for (const Vec3 &p : field_stage.points())
      if (!mesh.image_planes().in_fluid(p))
        throw Error("-bem_sofa: the grid point " + format_point(p) + " lies beyond a reflecting " +
                    "plane (" + mesh.image_planes().description() +
                    "), where there is no fluid: give a grid on the fluid's side");
    for (std::size_t s = 0; s < cases.size(); ++s) {
      const ProblemSpec &spec = cases[s].spec;
      if (spec.kind == ProblemKind::Radiation)
        throw Error("-bem_sofa: source " + std::to_string(s + 1) + " (" + cases[s].label +
                    ") is a radiating monopole: a SOFA file's sources are vibrating ears or "
                    "incident waves");
      if (is_ear(spec) != is_ear(cases.front().spec))
        throw Error("-bem_sofa: source " + std::to_string(s + 1) + " (" + cases[s].label + ") is " +
                    (is_ear(spec) ? "a vibrating ear" : "an incident wave") + " and source 1 (" +
                    cases.front().label + ") " +
                    (is_ear(spec) ? "an incident wave" : "a vibrating ear") +
                    ": a SOFA file holds one kind of receiver (write two runs)");
    }
  }
  // Every source checked before any work (a point source inside the body, on the surface): its
  // problem at the first k, over no rows (no exact values formed).
  for (std::size_t s = 0; s < cases.size(); ++s) {
    ProblemSpec spec = cases[s].spec;
    spec.k = opt.wavenumbers.front();
    const Problem checked(mesh, spec, RowRange{own_rows.begin, own_rows.begin}, &facts[s]);
    for (const std::string &w : checked.warnings())
      if (std::find(warnings.begin(), warnings.end(), w) == warnings.end()) warnings.push_back(w);
  }
  warnings.insert(warnings.end(), field_stage.warnings().begin(), field_stage.warnings().end());
  for (const std::string &w : warnings)
    PetscCall(PetscPrintf(comm, "bem_solve: warning: %s\n", w.c_str()));
  const Discretization disc(mesh, opt.quadrature_points);

  FmmEvents fmm_events(class_id, "FMM");
  FmmEvents regulariser_fmm_events(class_id, "BEMRegFMM");
  VecScatter gather = nullptr;
  Vec x_all = nullptr;
  // The whole density on every rank, unless each rank's operator reads its columns alone.
  if (!distribution) PetscCall(VecScatterCreateToAll(x, &gather, &x_all));
  std::optional<std::vector<double>> curvature_correction;
  // -bem_sofa: the HRTFs of every k and source, on rank 0 where the field is evaluated.
  std::optional<SofaCollector> sofa;
  if (!opt.field.sofa_path.empty() && sweep_rank == 0) {
    sofa.emplace();
    io::SofaHrtf &h = sofa->hrtf;
    h.listener_position = *opt.field.reference_center;
    h.source_positions = field_stage.points();
    h.receiver_positions.resize(cases.size());
    h.frequencies = opt.frequencies;
    if (h.frequencies.empty())  // -k: the frequencies at the medium's sound speed
      for (double k : opt.wavenumbers) h.frequencies.push_back(frequency_of(k, opt.medium));
    h.data.assign(h.source_positions.size() * cases.size() * h.frequencies.size(), cplx(0.0));
    h.title = "HRTFs of " + opt.mesh;
    h.comment = "fmbem bem_solve: the pressure at each source position over the reference (" +
                std::to_string(cases.size()) + " receivers: " + cases.front().label +
                (cases.size() > 1 ? ", ..." : "") + ")";
    // Mesh2HRTF's choice: two ears are SimpleFreeFieldHRTF, anything else GeneralTF.
    h.general = !(cases.size() == 2 && is_ear(cases.front().spec));
    sofa->filled.assign(opt.wavenumbers.size() * cases.size(), 0);
    sofa->sources = cases.size();
  }
  const SweepContext sweep{sweep_comm,
                           sweep_rank,
                           sweep_size,
                           opt,
                           mesh,
                           disc,
                           own_rows,
                           n,
                           row_begin,
                           row_end,
                           x,
                           b,
                           gather,
                           x_all,
                           events,
                           fmm_events,
                           regulariser_fmm_events,
                           field_stage,
                           curvature_correction,
                           distribution.get(),
                           std::move(class_extents),
                           cases.size(),
                           sofa ? &*sofa : nullptr,
                           numcalc ? &*numcalc : nullptr,
                           split ? size : 0,
                           split ? rank : 0};
  const std::size_t count = opt.wavenumbers.size(), sources = cases.size();
  // One row per k and source, the sources of a k together.
  std::vector<SweepRow> table(count * sources);
  // The k this rank solves (all of them, but with -bem_split frequencies), and there what it
  // printed solving each (kept apart, printed by rank 0 in the sweep's order).
  std::vector<char> own_k(count, 1);
  if (split)
    for (std::size_t i = 0; i < count; ++i) own_k[i] = frequency_owner(i, size) == rank;
  std::vector<std::string> printed(split ? count : 0);
  std::vector<NumCalcStep> numcalc_steps(count * sources);
  bool first_own_k = true;
  for (std::size_t i = 0; i < count; ++i) {
    for (std::size_t s = 0; s < sources; ++s) {
      SweepRow &row = table[i * sources + s];
      row.k = opt.wavenumbers[i];
      row.source = s;
      if (!opt.frequencies.empty()) row.frequency = opt.frequencies[i];
    }
    if (!own_k[i]) continue;
    PetscLogDouble t_k = t_start;  // a rank's first k's set-up includes the mesh's
    if (!first_own_k) PetscCall(PetscTime(&t_k));
    std::optional<CapturedStdout> capture;
    if (split) capture.emplace(printed[i]);
    // A refusal after the first solve (a later k's set-up, a source's, its files) fails that k
    // or source alone: the others are solved and written, so the run's answer is exit status 2
    // with the table saying which.
    std::unique_ptr<KStage> stage;
    for (std::size_t s = 0; s < sources; ++s) {
      SweepRow &row = table[i * sources + s];
      const bool first_solve = first_own_k && s == 0;
      // Where this source's time starts: its row's set-up (the k's with the first source).
      PetscLogDouble t_source = t_k;
      if (s > 0) PetscCall(PetscTime(&t_source));
      std::string refused;
      PetscErrorCode ierr = 0;
      bool building = false;  // the k's shared set-up, whose failure is every source's
      try {
        ProblemSpec spec = cases[s].spec;
        spec.k = opt.wavenumbers[i];
        const Problem problem(mesh, spec, own_rows, &facts[s]);
        if (i > 0 || s > 0)
          for (const std::string &w : problem.warnings())
            if (std::find(warnings.begin(), warnings.end(), w) == warnings.end())
              PetscCall(PetscPrintf(sweep_comm, "bem_solve: warning: %s\n", w.c_str()));
        if (s == 0) {
          building = true;
          stage = std::make_unique<KStage>();
          ierr = build_stage(sweep, problem, t_k, *stage);
          if (!ierr) building = false;
        }
        if (!ierr && stage)
          ierr = solve_source(sweep, *stage, problem, OutputIndex{i, count, s, sources},
                              cases[s].label, &row);
      } catch (const Error &e) {
        if (first_solve && !split) throw;
        refused = e.what();
      }
      if (ierr && first_solve && !split) PetscFunctionReturn(ierr);
      if (ierr) {
        const char *text = nullptr;
        char *specific = nullptr;
        PetscErrorMessage(ierr, &text, &specific);
        refused = std::string("PETSc: ") + (specific && *specific ? specific
                                            : text                ? text
                                                                  : "error");
      }
      // A k whose set-up failed has no stage: each of its sources is refused with its reason.
      if (building) stage.reset();
      if (!stage && refused.empty()) refused = "the set-up of this k failed";
      if (split && first_solve) {
        // The first solve's failure ends the run, as on one rank: each rank's first solve
        // learns of the others', and all end with the lowest failing rank's message (none is
        // left waiting in the gathers after the sweep).
        int first_failed = refused.empty() ? size : rank;
        PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &first_failed, 1, MPI_INT, MPI_MIN, comm));
        if (first_failed < size) {
          broadcast_string(comm, refused, first_failed);
          throw Error(refused);
        }
      }
      if (!refused.empty()) {
        row.solved = false;
        row.reason = "REFUSED";
        if (sweep_rank == 0) {
          char source_text[64] = "";
          if (sources > 1) std::snprintf(source_text, sizeof source_text, ", source %zu", s + 1);
          std::fprintf(stderr, "bem_solve: error: at k = %g%s: %s; nothing written for it\n", row.k,
                       source_text, refused.c_str());
        }
      }
      if (!row.solved) *exit_status = kExitSolveFailed;
      if (numcalc) {
        PetscLogDouble t_done;
        PetscCall(PetscTime(&t_done));
        NumCalcStep step;
        step.frequency_hz = opt.frequencies[i];
        step.solved = row.solved;
        step.iterations = row.iterations;
        step.residual = row.residual;
        step.setup_seconds = row.setup_seconds;
        step.solve_seconds = row.solve_seconds;
        step.output_seconds =
            std::max(0.0, double(t_done - t_source) - row.setup_seconds - row.solve_seconds);
        numcalc_steps[i * sources + s] = step;
        // With the frequencies split, rank 0 writes NC.out once it has every rank's steps.
        if (!split) {
          numcalc->steps[s].push_back(step);
          numcalc->write_log(s, i + 1 == count);
        }
      }
      if ((count > 1 || sources > 1) && sweep_rank == 0) {
        // Progress of a long run, apart from the summaries (stdout may go to a file).
        char source_text[64] = "", rank_text[32] = "";
        if (sources > 1)
          std::snprintf(source_text, sizeof source_text, ", source %zu of %zu", s + 1, sources);
        if (split) std::snprintf(rank_text, sizeof rank_text, " on rank %d", rank);
        std::fprintf(stderr, "bem_solve: k = %g (%zu of %zu)%s%s: %ld iterations, %s, %.3f s\n",
                     row.k, i + 1, count, source_text, rank_text, row.iterations,
                     row.reason.c_str(), row.setup_seconds + row.solve_seconds);
        std::fflush(stderr);
      }
    }
    first_own_k = false;
  }
  if (split) {
    // Rank 0 puts the run together: every rank's rows, summaries, NumCalc steps and HRTFs, and
    // the run's exit status is the worst of the ranks'.
    std::vector<char> own_row(count * sources);
    for (std::size_t i = 0; i < own_row.size(); ++i) own_row[i] = own_k[i / sources];
    gather_owned(comm, table, own_row);
    gather_owned(comm, printed, own_k);
    if (rank == 0)
      for (const std::string &text : printed) std::fputs(text.c_str(), stdout);
    std::fflush(stdout);
    if (numcalc) {
      gather_owned(comm, numcalc_steps, own_row);
      if (rank == 0)
        for (std::size_t s = 0; s < sources; ++s) {
          numcalc->steps[s].clear();
          for (std::size_t i = 0; i < count; ++i)
            numcalc->steps[s].push_back(numcalc_steps[i * sources + s]);
          numcalc->write_log(s, true);
        }
    }
    if (sofa) PetscCall(gather_sofa(comm, *sofa));
    if (rank != 0) sofa.reset();
    PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, exit_status, 1, MPI_INT, MPI_MAX, comm));
  }
  if (rank == 0 && table.size() > 1)
    PetscCall(PetscPrintf(PETSC_COMM_SELF, "\n%s",
                          sweep_table(table, !opt.frequencies.empty(), sources > 1).c_str()));
  if (!opt.sweep_csv_path.empty()) {
    on_rank_zero(comm, [&] {
      io::OutputFile(opt.sweep_csv_path, "-bem_sweep_csv").write([&](const std::string &path) {
        write_sweep_csv(path, table, !opt.frequencies.empty(), sources > 1);
      });
    });
    PetscCall(PetscPrintf(comm, "  wrote           %s\n", opt.sweep_csv_path.c_str()));
  }

  if (sofa) {
    const std::size_t missing =
        std::size_t(std::count(sofa->filled.begin(), sofa->filled.end(), char(0)));
    if (missing == 0) {
      io::OutputFile(opt.field.sofa_path, "-bem_sofa").write([&](const std::string &path) {
        io::write_sofa_hrtf(path, sofa->hrtf);
      });
      PetscCall(PetscPrintf(PETSC_COMM_SELF,
                            "  wrote           %s (%s: %zu positions, %zu "
                            "receivers, %zu frequencies)\n",
                            opt.field.sofa_path.c_str(),
                            sofa->hrtf.general ? "GeneralTF" : "SimpleFreeFieldHRTF",
                            sofa->hrtf.source_positions.size(),
                            sofa->hrtf.receiver_positions.size(), sofa->hrtf.frequencies.size()));
    } else {
      std::fprintf(stderr,
                   "bem_solve: error: -bem_sofa '%s' not written: %zu of the %zu solves failed\n",
                   opt.field.sofa_path.c_str(), missing, sofa->filled.size());
      *exit_status = kExitSolveFailed;
    }
  }
  for (const std::string &name : unused_options(false))
    PetscCall(PetscPrintf(comm, "bem_solve: warning: option -%s was not used\n", name.c_str()));

  PetscCall(VecScatterDestroy(&gather));
  PetscCall(VecDestroy(&x_all));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&b));
  PetscFunctionReturn(0);
}

}  // namespace fmbem
