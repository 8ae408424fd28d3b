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
#include "fmbem/bem/discretization.hpp"
#include "fmbem/bem/distributed_mesh.hpp"
#include "fmbem/bem/fmm_layer_potentials.hpp"
#include "fmbem/core/error.hpp"
#include "fmbem/field/problem_field.hpp"
#include "fmbem/fmm/distributed.hpp"
#include "fmbem/fmm/gpu_device.hpp"
#include "fmbem/io/csv_writer.hpp"
#include "fmbem/io/field_points.hpp"
#include "fmbem/io/mesh_source.hpp"
#include "fmbem/io/numcalc_project.hpp"
#include "fmbem/io/output_file.hpp"
#include "fmbem/io/sofa_writer.hpp"
#include "fmbem/io/vtk_writer.hpp"
#include "fmbem/solver/collective.hpp"
#include "fmbem/solver/field_output.hpp"
#include "fmbem/solver/frequency_split.hpp"
#include "fmbem/solver/numcalc_run.hpp"
#include "fmbem/solver/options.hpp"
#include "fmbem/solver/output_plan.hpp"
#include "fmbem/solver/preconditioner.hpp"
#include "fmbem/solver/solve_stages.hpp"
#include "fmbem/solver/sweep.hpp"
#include "fmbem/solver/threaded_vector.hpp"

namespace fmbem {
namespace {

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

// Values of every element gathered on rank 0 in the solver's order, in the user's (the solver's
// order is part by part when distributed); elsewhere (empty) as they are.
template <class Values>
Values in_user_order(const Distribution *distribution, Values values) {
  if (!distribution || values.empty()) return values;
  Values out = values;
  const std::vector<std::size_t> &order = distribution->element_order;
  for (std::size_t i = 0; i < order.size(); ++i) out[order[i]] = values[i];
  return out;
}

// The element classes of the user's mesh (surface conditions; empty for the other problems),
// on rank 0.
std::span<const std::int32_t> user_element_classes(const Distribution *distribution,
                                                   const Problem &problem) {
  if (problem.spec().kind != ProblemKind::Surface) return {};
  return distribution ? std::span<const std::int32_t>(distribution->user_element_class)
                      : std::span<const std::int32_t>(*problem.spec().element_class);
}

// The field and far field of `problem`'s solution, given whole in the user's element order, on
// the user's mesh (rank 0): the stage's summary lines.
std::vector<std::string> evaluate_field(FieldStage &stage, const Distribution *distribution,
                                        const Problem &problem, const Discretization &disc,
                                        std::span<const cplx> user_solution,
                                        const SolveOptions &opt) {
  const field::FieldOptions options{opt.near, opt.fmm,
                                    opt.operator_backend == OperatorBackend::fmm};
  if (!distribution) return stage.evaluate(problem, disc, user_solution, options);
  return stage.evaluate(problem, distribution->user_disc.value(), user_solution, options,
                        user_element_classes(distribution, problem));
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
// A program's sink (`recording`) receives the whole solution too.
bool gathers_solution(const SolveOptions &opt, bool recording) {
  return recording || (!opt.vtu_path.empty() && !writes_pieces(opt)) || !opt.csv_path.empty() ||
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

// A run's sweep: its surface stage (what every k shares) and what the command line's outputs
// need beside it.
struct SweepContext : SurfaceStage {
  FieldStage &field_stage;
  // Surface conditions: each class's elements and area over the whole mesh (the summary).
  std::vector<ClassExtent> class_extents;
  std::size_t source_count = 1;      // the run's sources, each solved at every k
  SofaCollector *sofa = nullptr;     // rank 0 with -bem_sofa
  NumCalcWriter *numcalc = nullptr;  // rank 0 with -bem_numcalc
  // -bem_split frequencies: the run's ranks, each solving its own k on PETSC_COMM_SELF (comm,
  // rank and size above are then that one rank's); 0 otherwise.
  PetscMPIInt split_ranks = 0, split_rank = 0;
  // A program's sink receives every solve (SolveRecord): the solution is gathered for it.
  bool recording = false;
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

// The summary's opening lines, of the set-up that every source of sweep point `index` shares
// (rank 0).
PetscErrorCode print_setup_summary(const SweepContext &sweep, const OperatorStage &stage,
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
PetscErrorCode solve_source(const SweepContext &sweep, OperatorStage &stage, const Problem &problem,
                            const OutputIndex &at, const std::string &source_label, SweepRow *row,
                            SolveRecord *record) {
  PetscFunctionBeginUser;
  const MPI_Comm comm = sweep.comm;
  const PetscMPIInt rank = sweep.rank, size = sweep.size;
  const SolveOptions &opt = sweep.opt;
  const Mesh &mesh = sweep.mesh;
  const Discretization &disc = sweep.disc;
  const RowRange rows = sweep.rows;
  const Vec x = sweep.x;
  const SolveEvents &events = solve_events();
  FieldStage &field_stage = sweep.field_stage;
  const std::size_t count = at.k_count;
  const bool first = at.source == 0, several = at.source_count > 1;
  const double k = problem.spec().k;
  // A later source's set-up is its right-hand side alone.
  PetscLogDouble t_begin;
  PetscCall(PetscTime(&t_begin));
  if (first) t_begin = stage.t_start;
  SolveOutcome outcome;
  PetscCall(solve_problem(sweep, stage, problem, t_begin, &outcome));
  const PetscInt iterations = outcome.iterations;
  const KSPConvergedReason reason = outcome.reason;
  const PetscReal true_residual = outcome.true_residual, true_absolute = outcome.true_absolute;
  const PetscReal rtol = outcome.rtol, abstol = outcome.abstol;
  const char *ksp_type = outcome.ksp_type.c_str();
  const int rounds = outcome.rounds;
  const bool solved = outcome.solved;
  const PetscLogDouble t_setup = outcome.t_setup, t_solved = outcome.t_solved;
  const PetscInt mat_mults = outcome.mat_mults;
  const PetscLogDouble mat_mult_seconds = outcome.mat_mult_seconds;
  if (sweep.numcalc) {
    sweep.numcalc->solver_name = ksp_type;
    for (char &c : sweep.numcalc->solver_name) c = char(std::toupper((unsigned char)c));
  }

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
  if (solved && gathers_solution(opt, sweep.recording)) {
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
      if (!gathers_solution(opt, sweep.recording)) return;
      // The files and the field in the user's element order and on the user's mesh (the
      // solver's order is part by part when distributed, and the ranks hold parts alone).
      const auto user_mesh = [&]() -> const Mesh & {
        return sweep.distribution ? sweep.distribution->user_mesh.value() : mesh;
      };
      const auto to_user = [&](auto values) {
        return in_user_order(sweep.distribution, std::move(values));
      };
      const std::span<const std::int32_t> user_classes =
          user_element_classes(sweep.distribution, problem);
      if (opt.field.field() || opt.field.farfield_directions > 0) {
        lines =
            evaluate_field(field_stage, sweep.distribution, problem, disc, to_user(solution), opt);
        if (sweep.sofa)
          sweep.sofa->add(at, field_stage.hrtf(),
                          sofa_receiver(problem.spec(), *field_stage.reference()));
      }
      const auto physical = [&] {
        return physical_fields(problem, user_mesh(), user_classes, 0, to_user(solution));
      };
      if (record) {
        record->unknown_name = problem.unknown_name();
        record->unknown = to_user(solution);
        record->surface =
            solution_fields(problem.unknown_name(), solution,
                            part(error_values, [](const cplx &c) { return c.real(); }));
        for (io::CellField &field : record->surface)
          field.values = to_user(std::move(field.values));
        if (!user_classes.empty()) {
          std::vector<io::CellField> more = physical();
          record->surface.insert(record->surface.end(), std::make_move_iterator(more.begin()),
                                 std::make_move_iterator(more.end()));
        }
        if (opt.field.field()) record->field = field_stage.field_columns();
        if (opt.field.farfield_directions > 0) record->farfield = field_stage.farfield_columns();
      }
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

// One run of bem_solve, as the stages run_bem_solve calls in turn; what a stage forms, later
// stages read (the members, in the order the stages form them).
class BemRun {
 public:
  BemRun(MPI_Comm comm, const SolveRecordSink &sink) : comm(comm), sink(sink) {
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
  }
  // The GPU of this rank, the options (the same on every rank; *help: -help was answered).
  PetscErrorCode read_options(bool *help);
  // The outputs checked before any work, the field's points and a NumCalc project's writer.
  PetscErrorCode prepare_outputs();
  // The mesh: whole on every rank, or the distributed FMM's parts.
  PetscErrorCode read_mesh();
  // Its resolution at every k, and the surface conditions on its elements.
  PetscErrorCode assign_conditions_to_mesh();
  // The sources, what each needs of the whole surface, and the gathered outputs' order.
  PetscErrorCode prepare_sources();
  // The solution and right-hand side vectors, and this rank's rows.
  PetscErrorCode make_vectors();
  // Every source and output checked before any work, the warnings printed, the
  // discretisation and the density's scatter.
  PetscErrorCode check_before_work();
  // Every k and source: an operator stage a k, a solve, its report and files.
  PetscErrorCode solve_sweep();
  // The run's table, its CSV and SOFA files, its ranks' results put together.
  PetscErrorCode finish();
  int status() const { return exit_status; }

  // What OpenRun gives a program: the stages before the sweep (the help answered: *help), the
  // operator stage at point i, source s's right-hand side at point i for it, x gathered.
  PetscErrorCode prepare(bool *help);
  PetscErrorCode build_operator_at(std::size_t i, OperatorStage &stage);
  PetscErrorCode right_hand_side_at(const OperatorStage &stage, std::size_t i, std::size_t s,
                                    Vec b);
  PetscErrorCode gather_in_mesh_order(Vec x, std::vector<cplx> *whole);
  // The field and far field of source s's solution x at point i, as the sweep's record holds
  // them (on rank 0; empty elsewhere).
  PetscErrorCode field_at(std::size_t i, std::size_t s, Vec x, std::vector<io::NamedColumn> *field,
                          std::vector<io::NamedColumn> *farfield);
  const SolveOptions &options() const { return opt; }
  const std::vector<SourceCase> &source_list() const { return cases; }
  Vec layout() const { return vectors.x; }

 private:
  struct RunVectors {
    Vec x = nullptr, b = nullptr, x_all = nullptr;
    VecScatter gather = nullptr;
    ~RunVectors() {
      VecScatterDestroy(&gather);
      VecDestroy(&x_all);
      VecDestroy(&x);
      VecDestroy(&b);
    }
  };

  // Work of the ranks that evaluate fields and write files: rank 0, or each rank for its k.
  // Source s's problem at sweep point i over `rows` of the operator's mesh.
  Problem problem_at(std::size_t i, std::size_t s, RowRange rows) const {
    ProblemSpec spec = cases.at(s).spec;
    spec.k = opt.wavenumbers.at(i);
    return Problem(*mesh_, spec, rows, &facts[s]);
  }
  // What every k of the run shares, for its operator stages.
  SurfaceStage surface_stage() {
    return {sweep_comm,
            sweep_rank,
            sweep_size,
            opt,
            *mesh_,
            *disc,
            own_rows,
            n,
            row_begin,
            row_end,
            vectors.x,
            vectors.b,
            vectors.gather,
            vectors.x_all,
            curvature_correction,
            distribution.get()};
  }
  template <class Work>
  void on_writing_ranks(Work &&work) {
    if (split)
      on_every_rank(comm, work);
    else
      on_rank_zero(comm, work);
  }

  MPI_Comm comm;
  const SolveRecordSink &sink;
  PetscMPIInt rank = 0, size = 1;
  int exit_status = kExitSolved;
  SolveOptions opt;
  PetscLogDouble t_start = 0;
  // -bem_split frequencies: every rank runs the sweep alone (PETSC_COMM_SELF) for its own
  // points; `comm` holds the run together (the mesh read once, the results gathered on rank 0).
  bool split = false;
  MPI_Comm sweep_comm = MPI_COMM_NULL;
  PetscMPIInt sweep_rank = 0, sweep_size = 1;
  std::size_t listed_sources = 1;
  // The field points are read where they are evaluated.
  FieldStage field_stage;
  std::optional<NumCalcWriter> numcalc;
  std::vector<std::string> warnings;
  std::optional<Mesh> whole_mesh;
  std::optional<MeshSlab> mesh_slab;  // this rank's, where each rank reads its own
  std::unique_ptr<Distribution> distribution;
  const Mesh *mesh_ = nullptr;  // the operator's: whole_mesh's, or this rank's part
  std::vector<ClassExtent> class_extents;
  std::vector<SourceCase> cases;
  std::vector<SurfaceFacts> facts;
  PetscInt n = 0, row_begin = 0, row_end = 0;
  RowRange own_rows;
  RunVectors vectors;
  std::optional<Discretization> disc;
  std::optional<std::vector<double>> curvature_correction;
  std::optional<SofaCollector> sofa;
  std::size_t count = 0, sources = 0;
  // One row per k and source, the sources of a k together.
  std::vector<SweepRow> table;
  // The k this rank solves (all of them, but with -bem_split frequencies), and there what it
  // printed solving each (kept apart, printed by rank 0 in the sweep's order).
  std::vector<char> own_k;
  std::vector<std::string> printed;
  std::vector<NumCalcStep> numcalc_steps;
};

PetscErrorCode BemRun::read_options(bool *help) {
  PetscFunctionBeginUser;
  solve_events();  // registered before any work, in -log_view's order
  PetscCall(register_leaf_block_pc());

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
  PetscCall(read_solve_options(comm, &opt));
  if (opt.help) {
    PetscCall(print_solver_help(comm));
    *help = true;
    PetscFunctionReturn(0);
  }
  PetscCall(PetscTime(&t_start));
  // -bem_split frequencies: every rank runs the sweep below alone (PETSC_COMM_SELF) for its own
  // points; `comm` holds the run together (the mesh read once, the results gathered on rank 0).
  split = opt.split_frequencies && size > 1;
  sweep_comm = split ? PETSC_COMM_SELF : comm;
  sweep_rank = split ? 0 : rank;
  sweep_size = split ? 1 : size;
  PetscFunctionReturn(0);
}

PetscErrorCode BemRun::prepare_outputs() {
  PetscFunctionBeginUser;
  // The sources' count as the options give it; separate groups are known once the mesh's
  // groups are (checked again then when the count differs).
  listed_sources =
      std::max<std::size_t>(1, opt.problem.incident.kind == exact::Incident::Kind::PlaneWave &&
                                       opt.problem.kind != ProblemKind::Radiation
                                   ? opt.sources.directions.size()
                                   : opt.sources.positions.size());
  on_rank_zero(comm, [&] { check_outputs(opt, sweep_size, listed_sources); });
  // The field points are read where they are evaluated.
  on_writing_ranks([&] {
    if (!opt.numcalc_path.empty()) {
      numcalc.emplace(opt);
      if (rank == 0)
        for (const std::string &note : opt.numcalc_notes)
          std::printf("bem_solve: note: %s\n", note.c_str());
    }
    field_stage.prepare(opt.field, numcalc ? &numcalc->mesh.grid : nullptr);
  });
  PetscFunctionReturn(0);
}

PetscErrorCode BemRun::read_mesh() {
  PetscFunctionBeginUser;
  const SolveEvents &events = solve_events();
  // The distributed FMM: rank 0 alone reads and validates the mesh (a generated
  // icosphere: each rank its own slab, io::read_slab), and each rank
  // builds its operator on its part with the halo the operator reads (DistributedMesh: the tree
  // partitioned over the ranks, the elements numbered part by part, so that each rank's rows are
  // a contiguous range, PETSc's layout); the files keep the user's order. Otherwise every rank
  // holds the whole mesh.
  const bool distribute =
      sweep_size > 1 && opt.fmm_distribute && opt.operator_backend == OperatorBackend::fmm;
  if (!distribute) {
    whole_mesh.emplace(Mesh::from_surface(read_surface_everywhere(comm, opt.mesh, warnings),
                                          opt.mesh, opt.planes));
  } else {
    PetscCall(PetscLogEventBegin(events.partition, 0, 0, 0, 0));
    distribution = std::make_unique<Distribution>();
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
                                            partition_fmm, reach, events.distribution);
      // The gathered outputs are written on rank 0 from the user's mesh, read whole there.
      if (gathers_solution(opt, bool(sink)))
        on_rank_zero(comm, [&] { whole_mesh.emplace(io::load_mesh(opt.mesh)); });
    } else {
      Surface surface = read_surface_on_rank_zero(comm, opt.mesh, warnings);
      on_rank_zero(comm, [&] {
        whole_mesh.emplace(Mesh::from_surface(std::move(surface), opt.mesh, opt.planes));
      });
      distribution->local = std::make_unique<DistributedMesh>(
          comm, whole_mesh ? &*whole_mesh : nullptr, opt.mesh, opt.quadrature_points, partition_fmm,
          reach, events.distribution);
    }
    PetscCall(PetscLogEventEnd(events.partition, 0, 0, 0, 0));
  }
  mesh_ = distribution ? &distribution->local->mesh() : &*whole_mesh;
  PetscFunctionReturn(0);
}

PetscErrorCode BemRun::assign_conditions_to_mesh() {
  PetscFunctionBeginUser;
  const Mesh &mesh = *mesh_;
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
  PetscFunctionReturn(0);
}

PetscErrorCode BemRun::prepare_sources() {
  PetscFunctionBeginUser;
  const Mesh &mesh = *mesh_;
  // The run's sources: each its own right-hand side of one operator per k.
  cases = source_cases(opt.problem, opt.sources);
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
  facts.resize(cases.size());
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
    if (gathers_solution(opt, bool(sink))) {
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
  PetscFunctionReturn(0);
}

PetscErrorCode BemRun::make_vectors() {
  PetscFunctionBeginUser;
  n = PetscInt(distribution ? distribution->local->whole_size() : mesh_->size());
  Vec &x = vectors.x, &b = vectors.b;
  PetscCall(VecCreate(sweep_comm, &x));
  PetscCall(VecSetSizes(
      x, distribution ? PetscInt(distribution->local->rows().size()) : PETSC_DECIDE, n));
  // GMRES's vector work on every core (-vec_type still overrides).
  PetscCall(register_threaded_vector_type());
  PetscCall(VecSetType(x, threaded_vector_type));
  PetscCall(VecSetFromOptions(x));
  PetscCall(VecDuplicate(x, &b));
  PetscCall(VecGetOwnershipRange(x, &row_begin, &row_end));
  // This rank's rows as elements of `mesh`: the operator's, and the problem's exact solution,
  // over which the report's error is summed.
  own_rows = distribution ? distribution->local->rows()
                          : RowRange{std::size_t(row_begin), std::size_t(row_end)};
  if (distribution && std::size_t(row_begin) != distribution->local->first_row())
    throw Error("the distributed mesh's rows are not PETSc's (a defect: please report it)");
  PetscFunctionReturn(0);
}

PetscErrorCode BemRun::check_before_work() {
  PetscFunctionBeginUser;
  const Mesh &mesh = *mesh_;
  Vec &x = vectors.x;
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
    const Problem checked = problem_at(0, s, RowRange{own_rows.begin, own_rows.begin});
    for (const std::string &w : checked.warnings())
      if (std::find(warnings.begin(), warnings.end(), w) == warnings.end()) warnings.push_back(w);
  }
  warnings.insert(warnings.end(), field_stage.warnings().begin(), field_stage.warnings().end());
  for (const std::string &w : warnings)
    PetscCall(PetscPrintf(comm, "bem_solve: warning: %s\n", w.c_str()));
  disc.emplace(mesh, opt.quadrature_points);

  VecScatter &gather = vectors.gather;
  Vec &x_all = vectors.x_all;
  // The whole density on every rank, unless each rank's operator reads its columns alone.
  if (!distribution) PetscCall(VecScatterCreateToAll(x, &gather, &x_all));
  // -bem_sofa: the HRTFs of every k and source, on rank 0 where the field is evaluated.
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
  PetscFunctionReturn(0);
}

PetscErrorCode BemRun::solve_sweep() {
  PetscFunctionBeginUser;
  const SweepContext sweep{surface_stage(),
                           field_stage,
                           std::move(class_extents),
                           cases.size(),
                           sofa ? &*sofa : nullptr,
                           numcalc ? &*numcalc : nullptr,
                           split ? size : 0,
                           split ? rank : 0,
                           bool(sink)};
  count = opt.wavenumbers.size();
  sources = cases.size();
  // One row per k and source, the sources of a k together.
  table.resize(count * sources);
  // The k this rank solves (all of them, but with -bem_split frequencies), and there what it
  // printed solving each (kept apart, printed by rank 0 in the sweep's order).
  own_k.assign(count, 1);
  if (split)
    for (std::size_t i = 0; i < count; ++i) own_k[i] = frequency_owner(i, size) == rank;
  printed.resize(split ? count : 0);
  numcalc_steps.resize(count * sources);
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
    std::unique_ptr<OperatorStage> stage;
    for (std::size_t s = 0; s < sources; ++s) {
      SweepRow &row = table[i * sources + s];
      const bool first_solve = first_own_k && s == 0;
      // Where this source's time starts: its row's set-up (the k's with the first source).
      PetscLogDouble t_source = t_k;
      if (s > 0) PetscCall(PetscTime(&t_source));
      std::string refused;
      SolveRecord record;
      PetscErrorCode ierr = 0;
      bool building = false;  // the k's shared set-up, whose failure is every source's
      try {
        const Problem problem = problem_at(i, s, own_rows);
        if (i > 0 || s > 0)
          for (const std::string &w : problem.warnings())
            if (std::find(warnings.begin(), warnings.end(), w) == warnings.end())
              PetscCall(PetscPrintf(sweep_comm, "bem_solve: warning: %s\n", w.c_str()));
        if (s == 0) {
          building = true;
          stage = std::make_unique<OperatorStage>();
          ierr = build_operator_stage(sweep, problem, t_k, *stage);
          // What the user gave that nothing has read by now is a typo or does not apply.
          if (!ierr) refuse_unused_options();
          if (!ierr) building = false;
        }
        if (!ierr && stage)
          ierr = solve_source(sweep, *stage, problem, OutputIndex{i, count, s, sources},
                              cases[s].label, &row, sink ? &record : nullptr);
      } catch (const Error &e) {
        if (first_solve && !split) throw;
        refused = e.what();
      }
      if (ierr && first_solve && !split) PetscFunctionReturn(ierr);
      if (ierr) refused = petsc_error_text(ierr);
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
      if (!row.solved) exit_status = kExitSolveFailed;
      if (sink && sweep_rank == 0) {
        record.row = row;
        record.refusal = refused;
        record.k_index = i;
        record.source_label = cases[s].label;
        if (!row.solved) {  // a refusal after the solve: nothing of it is handed on
          record.unknown.clear();
          record.surface.clear();
          record.field.clear();
          record.farfield.clear();
        }
        sink(std::move(record));
      }
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
  PetscFunctionReturn(0);
}

PetscErrorCode BemRun::finish() {
  PetscFunctionBeginUser;
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
    PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &exit_status, 1, MPI_INT, MPI_MAX, comm));
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
      exit_status = kExitSolveFailed;
    }
  }
  for (const std::string &name : unused_options(false))
    PetscCall(PetscPrintf(comm, "bem_solve: warning: option -%s was not used\n", name.c_str()));
  PetscFunctionReturn(0);
}

std::string petsc_error_text(PetscErrorCode ierr) {
  const char *text = nullptr;
  char *specific = nullptr;
  PetscErrorMessage(ierr, &text, &specific);
  return std::string("PETSc: ") + (specific && *specific ? specific : text ? text : "error");
}

PetscErrorCode BemRun::prepare(bool *help) {
  PetscFunctionBeginUser;
  PetscCall(read_options(help));
  if (*help) PetscFunctionReturn(0);
  PetscCall(prepare_outputs());
  PetscCall(read_mesh());
  PetscCall(assign_conditions_to_mesh());
  PetscCall(prepare_sources());
  PetscCall(make_vectors());
  PetscCall(check_before_work());
  PetscFunctionReturn(0);
}

PetscErrorCode BemRun::build_operator_at(std::size_t i, OperatorStage &stage) {
  PetscFunctionBeginUser;
  PetscLogDouble t;
  PetscCall(PetscTime(&t));
  PetscCall(build_operator_stage(surface_stage(), problem_at(i, 0, own_rows), t, stage));
  PetscFunctionReturn(0);
}

PetscErrorCode BemRun::right_hand_side_at(const OperatorStage &stage, std::size_t i, std::size_t s,
                                          Vec b) {
  PetscFunctionBeginUser;
  PetscCall(right_hand_side(stage, problem_at(i, s, own_rows), b));
  PetscFunctionReturn(0);
}

PetscErrorCode BemRun::gather_in_mesh_order(Vec x, std::vector<cplx> *whole) {
  PetscFunctionBeginUser;
  std::vector<cplx> solver_order;
  PetscCall(gather_to_rank_zero(x, &solver_order));
  *whole = in_user_order(distribution.get(), std::move(solver_order));
  PetscFunctionReturn(0);
}

PetscErrorCode BemRun::field_at(std::size_t i, std::size_t s, Vec x,
                                std::vector<io::NamedColumn> *field,
                                std::vector<io::NamedColumn> *farfield) {
  PetscFunctionBeginUser;
  std::vector<cplx> whole;
  PetscCall(gather_in_mesh_order(x, &whole));
  on_rank_zero(comm, [&] {
    evaluate_field(field_stage, distribution.get(), problem_at(i, s, own_rows), *disc, whole, opt);
    *field = field_stage.field_columns();
    *farfield = field_stage.farfield_columns();
  });
  PetscFunctionReturn(0);
}

namespace {
// A PETSc failure of an open run's step as the exception a program catches.
void check(PetscErrorCode ierr) {
  if (ierr) throw Error(petsc_error_text(ierr));
}
// A program's open run gathers its solutions, as a sink's run does.
const SolveRecordSink kOpenRunSink = [](SolveRecord &&) {};
}  // namespace

OpenRun::OpenRun(MPI_Comm comm) : run_(std::make_unique<BemRun>(comm, kOpenRunSink)) {
  bool help = false;
  check(run_->prepare(&help));
  if (help) throw Error("-help: the options are listed above; nothing is solved");
}

OpenRun::~OpenRun() = default;

const std::vector<double> &OpenRun::wavenumbers() const { return run_->options().wavenumbers; }
std::size_t OpenRun::sources() const { return run_->source_list().size(); }
const std::string &OpenRun::source_label(std::size_t s) const {
  return run_->source_list().at(s).label;
}

std::unique_ptr<OperatorStage> OpenRun::operator_at(std::size_t i) {
  if (i >= wavenumbers().size())
    throw Error("no sweep point " + std::to_string(i) + " (the run has " +
                std::to_string(wavenumbers().size()) + ")");
  auto stage = std::make_unique<OperatorStage>();
  check(run_->build_operator_at(i, *stage));
  // What the program gave that nothing has read by the first stage (whose KSP reads the -ksp_*
  // and -pc_* options) is a typo or does not apply.
  if (!options_checked_) refuse_unused_options();
  options_checked_ = true;
  return stage;
}

Vec OpenRun::new_vector() const {
  Vec v;
  check(VecDuplicate(run_->layout(), &v));
  return v;
}

void OpenRun::check_point_and_source(std::size_t i, std::size_t s) const {
  if (i >= wavenumbers().size() || s >= sources())
    throw Error("no sweep point " + std::to_string(i) + " or source " + std::to_string(s));
}

void OpenRun::right_hand_side(const OperatorStage &stage, std::size_t i, std::size_t s, Vec b) {
  check_point_and_source(i, s);
  check(run_->right_hand_side_at(stage, i, s, b));
}

std::vector<cplx> OpenRun::gather(Vec x) {
  std::vector<cplx> whole;
  check(run_->gather_in_mesh_order(x, &whole));
  return whole;
}

OpenRun::Field OpenRun::field(std::size_t i, std::size_t s, Vec x) {
  check_point_and_source(i, s);
  const FieldRequest &asked = run_->options().field;
  if (!asked.field() && asked.farfield_directions == 0)
    throw Error(
        "the run has no field points and no far field: give -bem_field (field_points), "
        "-bem_field_plane, -bem_field_sphere or -bem_farfield");
  Field out;
  check(run_->field_at(i, s, x, &out.field, &out.farfield));
  return out;
}

PetscErrorCode run_bem_solve(MPI_Comm comm, int *exit_status, const SolveRecordSink &sink) {
  PetscFunctionBeginUser;
  *exit_status = kExitSolved;
  BemRun run(comm, sink);
  bool help = false;
  PetscCall(run.prepare(&help));
  if (help) PetscFunctionReturn(0);
  PetscCall(run.solve_sweep());
  PetscCall(run.finish());
  *exit_status = run.status();
  PetscFunctionReturn(0);
}

}  // namespace fmbem
