#pragma once
#include <petscsys.h>

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "fmbem/bem/density_reconstruction.hpp"
#include "fmbem/bem/near_field.hpp"
#include "fmbem/fmm/fmm.hpp"
#include "fmbem/io/numcalc_project.hpp"
#include "fmbem/problem/problem.hpp"
#include "fmbem/problem/sources.hpp"
#include "fmbem/solver/field_output.hpp"
#include "fmbem/solver/leaf_block_preconditioner.hpp"
#include "fmbem/solver/preconditioner.hpp"

namespace fmbem {

// bem_solve's FMM defaults: p from a 1e-4 MatMult accuracy, leaves of 100 elements, M2L on
// the GPU when one is present.
inline fmm::FmmOptions default_fmm_options() {
  fmm::FmmOptions options;
  options.tolerance = 1e-4;
  options.max_leaf = 100;
  options.device = fmm::FmmOptions::Device::automatic;
  return options;
}

// -bem_operator: the FMM, or the O(N^2) direct sum (the reference).
enum class OperatorBackend { fmm, direct };
inline const char *name_of(OperatorBackend backend) {
  return backend == OperatorBackend::fmm ? "fmm" : "direct";
}

// -bem_pc: PETSc's -pc_type, or the leaf blocks (the PC type kLeafBlockPC).
enum class PreconditionerChoice { petsc, leaf_block };

// Every -bem_* option, read once, in one place; -help lists them with their
// defaults. KSP and PC options are PETSc's own (KSPSetFromOptions).
struct SolveOptions {
  std::string mesh;     // file or icosphere:L[:R]
  ImagePlanes planes;   // -bem_planes (none: empty)
  ProblemSpec problem;  // problem.k: the first of `wavenumbers`
  // Conditions on surface groups (-bem_project, -bem_velocity, ...; empty: none, and the
  // problem is -bem_problem's) and the medium (-bem_sound_speed, -bem_density).
  SurfaceConditions conditions;
  Medium medium;
  // -k or -bem_frequency: the sweep's wavenumbers (one for a single solve), and the frequencies
  // (Hz) they came from (empty with -k); -bem_sweep_csv: the sweep's table.
  std::vector<double> wavenumbers, frequencies;
  std::string sweep_csv_path;
  int quadrature_points = 3;
  // How the double-layer density is read (-bem_double_density; auto: quadratic with bm).
  DensityModel double_density = DensityModel::constant;
  // bm's adjoint double layer with the curvature correction (-bem_curvature_correction; only
  // where bm applies D' to a single density: soft scattering and radiation).
  bool curvature_correction = false;
  NearFieldOptions near;
  OperatorBackend operator_backend = OperatorBackend::fmm;
  fmm::FmmOptions fmm = default_fmm_options();
  bool fmm_view = false;
  // -fmm_distribute: on more than one rank, the FMM partitioned over the ranks.
  bool fmm_distribute = true;
  // -bem_split frequencies: each rank solves its own frequencies of the sweep whole (on
  // PETSC_COMM_SELF), rank 0 gathers the table, the summaries and the SOFA and NumCalc logs.
  bool split_frequencies = false;
  // -fmm_overlap: the distributed FMM's multipole exchange during the near field (CPU).
  bool fmm_overlap = false;
  // The near-field block assembled as the preconditioning matrix (-bem_near_matrix: on, or auto
  // and the PC needs a matrix, i.e. is neither jacobi, none nor leaf_block), and its pairs.
  bool assemble_near_matrix = false;
  NearPairs near_matrix_pairs = NearPairs::close;
  // The leaf blocks (with these settings from -bem_pc_block, -bem_pc_overlap and
  // -bem_pc_block_entries) or PETSc's -pc_type; pc_type: the PC type the solve runs (-pc_type's,
  // or the default: leaf_block, none for rbm, jacobi).
  PreconditionerChoice pc = PreconditionerChoice::petsc;
  std::string pc_type;
  LeafBlockSettings leaf_block;
  std::string vtu_path, csv_path;
  FieldRequest field;         // -bem_field*, -bem_farfield*
  bool source_given = false;  // radiation defaults to the centre of the bounding box
  // Several sources, each its own solve with one set-up per k (-bem_incident_dir and
  // -bem_source lists, -bem_sources separate); empty lists: the problem's one source.
  SourceList sources;
  bool allow_coarse = false;  // solve even below 2 elements per wavelength
  // -bem_numcalc: the project as given (an NC.inp, its folder, or a project of several sources:
  // it gave the problem, and mesh is "numcalc:" + it), -bem_numcalc_output (empty: each
  // source's own folder), and what the solve takes differently from NumCalc.
  std::string numcalc_path, numcalc_output;
  std::vector<std::string> numcalc_notes;
  std::shared_ptr<const io::NumCalcInput> numcalc;  // the project as read (read once)
  bool help = false;                                // -help: list the options, solve nothing
};

// A frequency sweep's values (-k, -bem_frequency): comma-separated entries, each a number or a
// range first:last:step, in the order given. A range holds first + i step for i = 0, 1, ... up
// to last; last itself is included when it lies within 1e-9 steps of the grid (so 1:10:0.1 ends
// at 10 whatever the rounding of 0.1), and that point is then exactly last. Throws fmbem::Error
// naming `option` and the entry: an empty entry, a non-numeric or non-finite number, a negative
// value, a step <= 0, last < first (a sweep with zero steps), or more than kMaxSweepValues
// (sweep.hpp) values.
std::vector<double> parse_sweep_values(const char *option, std::string_view text);

// At most this many sources a run (-bem_incident_dir, -bem_source, the excited groups).
constexpr std::size_t kMaxSources = 10000;

// Points or directions x,y,z separated by ';' (-bem_source, -bem_incident_dir), at most
// kMaxSources; with `generators` also fibonacci:N (N directions of a Fibonacci sphere) and
// circle:N (N directions on the x-z great circle from +z, the far field's). Throws fmbem::Error
// naming `option` and the entry: an empty entry, not three finite numbers, N not an integer in
// 1..kMaxSources.
std::vector<Vec3> parse_vec3_list(const char *option, std::string_view text, bool generators);

// Reads the options (collective). Every value is parsed strictly (the whole
// text, finite, in range); an invalid or inapplicable value, or an unknown
// -bem_*/-fmm_* option, throws fmbem::Error naming the option.
PetscErrorCode read_solve_options(MPI_Comm comm, SolveOptions *options);

// Names (without the dash) of bem_solve's own options.
std::vector<std::string_view> solve_option_names();

// Options the user gave that nothing has read so far, except those PETSc
// reads only during or after the solve (-ksp_view, -log_view, ...). Called
// after KSPSetUp, these are mistyped or inapplicable.
std::vector<std::string> unused_options(bool include_late_options);

// " (did you mean -mesh?)" for a near miss of a known name, else "".
std::string suggestion_for(std::string_view unknown_name);

}  // namespace fmbem
