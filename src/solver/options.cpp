#include "fmbem/solver/options.hpp"

#include <petscoptions.h>
#include <petscpc.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <map>
#include <numbers>
#include <optional>
#include <system_error>
#include <tuple>

#include "fmbem/core/error.hpp"
#include "fmbem/field/far_field.hpp"
#include "fmbem/io/mesh_source.hpp"
#include "fmbem/io/numcalc_project.hpp"
#include "fmbem/io/sofa_writer.hpp"
#include "fmbem/problem/number_text.hpp"
#include "fmbem/solver/numcalc_run.hpp"
#include "fmbem/solver/preconditioner.hpp"
#include "fmbem/solver/project_file.hpp"
#include "fmbem/solver/sweep.hpp"

namespace fmbem {
namespace {

// bem_solve's own options, in -help order. Every value is read as text and
// parsed here, so that a bad number gives one line naming the option instead
// of PETSc's trace, and an integer cannot wrap around.
struct OptionSpec {
  const char *name;      // without the dash
  const char *fallback;  // the default's text; nullptr: another module's (default_text)
  const char *help;
};
constexpr OptionSpec kOptions[] = {
    {"mesh", "",
     "Gmsh .msh file (or a pipe), or icosphere:L[:R] (20*4^L triangles), or "
     "octasphere:L[:R[:AXES]] "
     "(8*4^L triangles; AXES some of x, y, z: the part with those coordinates >= 0, for "
     "-bem_planes)"},
    {"bem_planes", "",
     "Symmetry and reflecting planes, up to three on distinct axes: AXIS=OFFSET:KIND[,...], e.g. "
     "x=0:symmetric,z=-0.5:rigid. symmetric / antisymmetric: the mesh is the part on one side "
     "and the solution is even / odd across the plane (the incident wave's even / odd part); "
     "rigid / soft: an infinite hard / pressure-release plane (a baffle, the ground, the sea "
     "surface) that reflects the incident wave; the fluid is the mesh's side"},
    {"bem_numcalc", "",
     "Solve a NumCalc (Mesh2HRTF) project: its NC.inp or folder (or a project folder: every "
     "NumCalc/source_N in one run) gives the mesh, frequencies, medium, conditions, incident wave "
     "and evaluation grid; NumCalc's result files are written (be.out/be.N/pBoundary, vBoundary, "
     "pEvalGrid; NC.out)"},
    {"bem_numcalc_output", "",
     "The folder that receives -bem_numcalc's be.out and NC.out (default: each source's folder; "
     "with several sources DIR/source_N)"},
    {"k", "1",
     "Wavenumber (0: Laplace), or a sweep: a list 1,2,4 and ranges first:last:step (1:10:0.25), "
     "each solved in one run"},
    {"bem_frequency", "",
     "Frequencies in Hz instead of -k (same list and range syntax): k = 2 pi f / c"},
    {"bem_sound_speed", nullptr,
     "Speed of sound c (m/s) of the medium (air at 20 degrees C): k = 2 pi f / c"},
    {"bem_density", nullptr,
     "Density rho (kg/m^3) of the medium (air at 20 degrees C): velocities and impedances are "
     "in units of it"},
    {"bem_sweep_csv", "",
     "Write the sweep's table (k, frequency, iterations, times, error) to this CSV file"},
    {"kernel", "helmholtz", "helmholtz, or laplace (same as -k 0)"},
    {"bem_problem", "scattering", "scattering or radiation"},
    {"bem_bc", "neumann", "neumann (rigid) or dirichlet (soft)"},
    {"bem_incident", "planewave",
     "planewave or pointsource (scattering); with surface conditions also none (their "
     "default)"},
    {"bem_incident_dir", "0,0,1",
     "Plane wave direction x,y,z; several x,y,z;x,y,z;... (each its own solve, one set-up), or "
     "fibonacci:N or circle:N (N directions of a Fibonacci sphere, of the x-z circle)"},
    {"bem_source", "",
     "Point source x,y,z: outside the body for scattering, inside for radiation (default there: "
     "box centre); several x,y,z;x,y,z;... each its own solve"},
    {"bem_sources", "together",
     "Surface groups' velocities and pressures: together (one source, with each incident wave) "
     "or separate (each excited group its own solve, the others silent; each incident wave too)"},
    {"bem_rigid", "", "Surface groups that are rigid (v_n = 0): G[,G...], G a name or a tag"},
    {"bem_velocity", "",
     "Normal velocity (m/s, positive into the fluid) of surface groups: G:V[,G:V...], V a complex "
     "number (1e-3, 2e-3-1e-4i) or a CSV table frequency_hz,re,im"},
    {"bem_pressure", "", "Pressure (Pa) of surface groups: G:P[,G:P...] (P as V)"},
    {"bem_admittance", "",
     "Normalised admittance B = rho c v_in / p of surface groups (locally reacting; Re B > 0 "
     "absorbs): G:B[,G:B...]"},
    {"bem_impedance", "", "Normalised impedance Z = 1 / B of surface groups: G:Z[,G:Z...]"},
    {"bem_default_condition", "rigid",
     "Condition of the elements in no group given one: rigid, velocity:V, pressure:P, "
     "admittance:B or impedance:Z"},
    {"bem_project", "",
     "A TOML project file: the medium and the groups' conditions (README, Surface groups)"},
    {"bem_formulation", "auto",
     "cbie (conventional; fails near the body's interior eigenfrequencies), bm (Burton-Miller, "
     "unique at every k > 0; see README), rbm (regularised Burton-Miller: as unique, iterations "
     "bounded in N and k, no preconditioner), or auto (rbm for k > 0, bm when a preconditioner "
     "is asked for, cbie for Laplace and for sweeps that include k = 0)"},
    {"bem_bm_alpha", "i/k",
     "Burton-Miller coupling alpha, a complex number (0.125i, 0.1+0.2i) with a non-zero imaginary "
     "part (rbm: on the rows where the pressure is given)"},
    {"bem_rbm_kappa", nullptr,
     "rbm: the regulariser S~ is the single layer of the screened kernel exp(-kappa r)/(4 pi r) "
     "with kappa = this factor times k (0: the Laplace single layer; 0..10)"},
    {"bem_double_density", "auto",
     "How the double-layer density is read on each element: constant, quadratic (fitted to the "
     "neighbours' values; makes bm's hypersingular operator consistent), or auto (quadratic with "
     "bm where the double layer is used, constant otherwise)"},
    {"bem_curvature_correction", "true",
     "bm: correct the adjoint double layer D' for the flat elements' edge-concentrated "
     "curvature (its error is O(h) without; docs/burton-miller.md); soft and radiation only"},
    {"bem_feature_angle", nullptr,
     "Degrees between neighbouring elements' normals above which their common edge is the "
     "body's own (sharp) edge: bm's quadratic read does not fit across it and the curvature "
     "correction leaves its curvature on the edge (0 < angle <= 180; the smooth meshes we ship "
     "stay below 23, boxes have 90)"},
    {"bem_quad_order", "auto",
     "Gauss points per triangle: 1, 3, 6 or 7; auto: 6 with the quadratic double density, else 3"},
    {"bem_near_factor", nullptr, "Close pair: centroid distance < factor * element radius (1..10)"},
    {"bem_near_quad", nullptr, "Angular Gauss points of the accurate integrals (2..128)"},
    {"bem_near_matrix", "auto",
     "The near-field block (close pairs, accurate) assembled as the preconditioning matrix, so "
     "that -pc_type ilu, bjacobi, asm, lu, ... apply to it: auto (when the PC is neither jacobi "
     "nor none), on, off"},
    {"bem_near_matrix_pairs", "close",
     "Pairs of the near-field matrix: close (the near-field correction's), leaf or neighbours "
     "(also the regular rule for the rest of the row's FMM leaf, or of its U list)"},
    {"bem_pc", "auto",
     "Preconditioner: petsc (PETSc's -pc_type, default jacobi), leaf_block (the dense "
     "operator blocks of groups of nearby elements, inverted once; on the GPU with the MatMult), "
     "or auto (leaf_block for bm unless -pc_type is given, else petsc); leaf_block is also the "
     "PETSc PC type -pc_type leaf_block (-pc_leaf_block_size, _overlap, _entries)"},
    {"bem_pc_block", nullptr, "-bem_pc leaf_block: at most this many elements a block (1..512)"},
    {"bem_pc_overlap", nullptr,
     "-bem_pc leaf_block: layers of neighbouring elements (sharing a vertex) each block takes "
     "in, factorised with it but not written by it (restricted additive Schwarz; 0: block "
     "Jacobi), 0..4"},
    {"bem_pc_block_entries", nullptr,
     "-bem_pc leaf_block: near (the close pairs' entries, zero elsewhere) or full (the regular "
     "rule for the other pairs of the block too)"},
    {"bem_allow_coarse", "false",
     "Solve even below 2 elements per wavelength (the answer is then "
     "meaningless)"},
    {"bem_operator", "fmm", "fmm (fast multipole) or direct (O(N^2) reference)"},
    {"fmm_p", "0", "FMM expansion order p (degrees 0..p-1), 1..40; 0: chosen from -fmm_eps"},
    {"fmm_eps", nullptr, "FMM relative MatMult accuracy (sets p unless -fmm_p)"},
    {"fmm_max_leaf", "auto",
     "FMM octree: a cell splits above this many elements; auto: the fastest measured (CPU 40 at "
     "p <= 17, 100 above; GPU 50 at p <= 12, 150 above)"},
    {"fmm_view", "false", "Print the FMM tree, order and memory"},
    {"fmm_distribute", "true",
     "On more than one MPI rank, the FMM partitioned over the ranks: leaves and rows cut by work "
     "along the Morton curve, each rank's upward pass its own leaves', the partial multipoles and "
     "the densities its lists read exchanged; false: every rank a share of the upward pass, an "
     "allreduce of all multipoles, the whole density gathered"},
    {"bem_split", "elements",
     "With several MPI ranks: elements (each solve spread over every rank) or frequencies (each "
     "rank, with its own GPU where there are several, solves its share of the sweep's "
     "frequencies whole; one table, one output set)"},
    {"fmm_overlap", "false",
     "With -fmm_distribute on more than one rank: the multipole exchange runs while the near "
     "field is summed (nonblocking neighbourhood collective; on the GPU while its near-field "
     "kernels run)"},
    {"fmm_device", "auto",
     "Where the MatMult runs (every FMM phase and the near-field correction): cpu, gpu, or auto "
     "(the GPU when present)"},
    {"fmm_m2l_scheme", "fastest",
     "GPU M2L scheme: basic, sibling, cluster, ij (reference paper), gemm, dmma (ours); "
     "fastest: dmma up to p = 8, gemm above"},
    {"fmm_m2l_chunk", "3", "B of the cluster and ij schemes: chunks of B x B x B clusters (1..8)"},
    {"o", "",
     "Write the solution: FILE.vtu, one file (gathered on rank 0); FILE.pvtu, each rank its own "
     "elements as the piece FILE_R.vtu beside it, nothing gathered (ParaView opens FILE.pvtu)"},
    {"bem_csv", "", "Write x,y,z,re,im per element to this file"},
    {"bem_field", "",
     "Evaluate the field at these points: a Gmsh .msh (its nodes; triangles, quadrangles, "
     "tetrahedra, hexahedra kept as cells), a Mesh2HRTF evaluation grid (its folder or its "
     "Nodes.txt, with Elements.txt beside it) or a CSV of x,y,z"},
    {"bem_field_plane", "",
     "Evaluate the field on a plane grid ox,oy,oz,ax,ay,az,bx,by,bz,na,nb: corner o, edges a and "
     "b, na x nb points (corners included)"},
    {"bem_field_sphere", "",
     "Evaluate the field on a sphere: fibonacci:N:R (N points), lebedev:N:R (the Lebedev rule "
     "of N points, 6 to 5810) or equiangular:D:R (D degrees in polar angle and azimuth, D "
     "dividing 180), radius R, centre :x,y,z (default the origin)"},
    {"bem_field_reference", "",
     "With field points: add the reference pressure and the HRTF (the total field over it) of a "
     "source as strong as the problem's at x,y,z (default the origin): the vibrating surface's "
     "volume velocity as a point source (Mesh2HRTF's), the monopole, or the incident wave there"},
    {"bem_field_velocity", "false",
     "With field points: add the particle velocity v = grad p / (i omega rho) (m/s, x, y, z; the "
     "medium's rho), the gradient of the field's representation; k > 0"},
    {"bem_sofa", "",
     "Write the transfer functions of every frequency and source at the field points to this "
     "SOFA file, referenced as -bem_field_reference (the origin unless given): two vibrating ears "
     "(-bem_sources separate) as SimpleFreeFieldHRTF, other ears or incident waves as GeneralTF"},
    {"bem_field_vtk", "",
     "Write the field to this .vtu (-bem_field, -bem_field_sphere) or .vts (-bem_field_plane)"},
    {"bem_field_csv", "", "Write the field to this CSV file"},
    {"bem_farfield", "0",
     "Far-field amplitude F (u_s ~ F e^{ikr}/r) in N directions on the great circle of the x-z "
     "plane (from +z towards +x), with target strength 20 log10 |F|"},
    {"bem_farfield_sphere", "false", "-bem_farfield: N directions of a Fibonacci sphere instead"},
    {"bem_farfield_csv", "", "Write the far field to this CSV file"},
};

// Options PETSc reads during or after KSPSolve (viewers, logging, checks at
// PetscFinalize): unused after KSPSetUp without being mistyped.
constexpr std::string_view kLateOptionPrefixes[] = {"ksp_view",
                                                    "ksp_converged_",
                                                    "ksp_error_if_not_converged",
                                                    "mat_view",
                                                    "vec_view",
                                                    "log",
                                                    "options_",
                                                    "memory_view",
                                                    "malloc",
                                                    "objects_dump",
                                                    "history",
                                                    "info",
                                                    "help",
                                                    "version",
                                                    "viewer",
                                                    "draw",
                                                    "nox",
                                                    "display",
                                                    "on_error",
                                                    "fp_trap",
                                                    "no_signal_",
                                                    "check_pointer",
                                                    "skip_petscrc",
                                                    "petsc",
                                                    "saws"};

// Appended, not "-" + std::string(name): GCC 12 warns falsely (-Wrestrict) on that form.
std::string dashed(std::string_view name) { return std::string("-").append(name); }

// The shortest text that reads back as x.
std::string shortest_text(double x) {
  char text[32];
  const auto [end, error] = std::to_chars(text, text + sizeof text, x);
  return std::string(text, end);
}

// An option's default as text: the table's, or where the value has a default in the module that
// uses it (the medium, the near field, the FMM, the problem, the leaf-block PC type) that one, so
// that each default is written once.
std::string default_text(std::string_view name) {
  const LeafBlockSettings leaf_block;
  const NearFieldOptions near;
  const Medium medium;
  if (name == "bem_pc_block") return std::to_string(leaf_block.block_size);
  if (name == "bem_pc_overlap") return std::to_string(leaf_block.overlap);
  if (name == "bem_pc_block_entries") return name_of(leaf_block.entries);
  if (name == "bem_sound_speed") return shortest_text(medium.sound_speed);
  if (name == "bem_density") return shortest_text(medium.density);
  if (name == "bem_rbm_kappa") return shortest_text(ProblemSpec{}.regulariser_kappa_factor);
  if (name == "bem_feature_angle") return shortest_text(kDefaultFeatureAngleDegrees);
  if (name == "bem_near_factor") return shortest_text(near.near_factor);
  if (name == "bem_near_quad") return std::to_string(near.angular_points);
  if (name == "fmm_eps") return shortest_text(default_fmm_options().tolerance);
  for (const OptionSpec &spec : kOptions)
    if (spec.name == name && spec.fallback) return spec.fallback;
  throw Error("internal: option -" + std::string(name) + " has no default");
}

// The value an option's text names, from its allowed names; anything else is one line naming
// the option and the choices.
template <class Value>
Value choose(const char *option, const std::string &text,
             std::initializer_list<std::pair<const char *, Value>> allowed) {
  std::string list;
  for (const auto &[name, value] : allowed) {
    if (text == name) return value;
    list += std::string(list.empty() ? "" : ", ") + name;
  }
  throw Error(std::string(option) + " " + text + " is not known (choose " + list + ")");
}

long long parse_integer(const char *option, std::string_view text, long long lowest,
                        long long highest) {
  const std::string_view digits = number_text(text);
  long long value = 0;
  const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  const std::string range = " (" + std::to_string(lowest) + ".." + std::to_string(highest) + ")";
  if (digits.empty() || error == std::errc::invalid_argument ||
      end != digits.data() + digits.size())
    throw Error(std::string(option) + " " + std::string(text) + ": not an integer" + range);
  if (error == std::errc::result_out_of_range || value < lowest || value > highest)
    throw Error(std::string(option) + " " + std::string(text) + ": out of range" + range);
  return value;
}

bool parse_bool(const char *option, std::string_view text) {
  // Given without a value (-fmm_view), PETSc's convention is true.
  if (text.empty() || text == "1" || text == "true" || text == "yes" || text == "on") return true;
  if (text == "0" || text == "false" || text == "no" || text == "off") return false;
  throw Error(std::string(option) + " " + std::string(text) + ": not true or false");
}

Vec3 parse_vec3(const char *option, std::string_view text) {
  double xyz[3];
  std::string_view rest = text;
  for (int c = 0; c < 3; ++c) {
    const std::size_t comma = rest.find(',');
    if ((c < 2) != (comma != std::string_view::npos))
      throw Error(std::string(option) + " " + std::string(text) +
                  ": needs exactly three numbers x,y,z");
    try {
      xyz[c] = parse_real(option, rest.substr(0, comma));
    } catch (const Error &) {
      throw Error(std::string(option) + " " + std::string(text) + ": '" +
                  std::string(rest.substr(0, comma)) + "' is not a finite number");
    }
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
  }
  return {xyz[0], xyz[1], xyz[2]};
}

// N of `text` = "<name>:N" (1..kMaxSources), or none when text has another form.
std::optional<std::size_t> generator_count(const char *option, std::string_view text,
                                           std::string_view name) {
  if (text.substr(0, name.size() + 1) != std::string(name) + ":") return std::nullopt;
  return std::size_t(
      parse_integer(option, text.substr(name.size() + 1), 1, (long long)(kMaxSources)));
}

}  // namespace

std::vector<Vec3> parse_vec3_list(const char *option, std::string_view text, bool generators) {
  if (generators) {
    if (const auto n = generator_count(option, text, "fibonacci"))
      return field::fibonacci_sphere(*n).directions;
    if (const auto n = generator_count(option, text, "circle"))
      return field::great_circle(*n).directions;
  }
  std::vector<Vec3> list;
  std::string_view rest = text;
  while (true) {
    const std::size_t end = rest.find(';');
    const std::string_view entry = rest.substr(0, end);
    if (entry.empty())
      throw Error(std::string(option) + " " + std::string(text) +
                  ": an empty entry (entries are x,y,z separated by ';')");
    if (list.size() == kMaxSources)
      throw Error(std::string(option) + ": more than " + std::to_string(kMaxSources) + " entries");
    list.push_back(parse_vec3(option, entry));
    if (end == std::string_view::npos) break;
    rest = rest.substr(end + 1);
  }
  return list;
}

namespace {

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t next =
          std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = row[j];
      row[j] = next;
    }
  }
  return row[b.size()];
}

bool is_late_option(std::string_view name) {
  return std::any_of(std::begin(kLateOptionPrefixes), std::end(kLateOptionPrefixes),
                     [&](std::string_view prefix) { return name.starts_with(prefix); });
}

// One entry of a sweep list: a number, or first:last:step.
void append_sweep_entry(const char *option, std::string_view text, std::string_view entry,
                        std::vector<double> &values) {
  const std::string where = std::string(option) + " " + std::string(text) + ": ";
  const auto number = [&](std::string_view part, const char *what) {
    try {
      return parse_real(option, part);
    } catch (const Error &) {
      throw Error(where + what + " '" + std::string(part) + "' is not a finite number");
    }
  };
  const std::size_t colon = entry.find(':');
  if (colon == std::string_view::npos) {
    const double value = number(entry, "entry");
    if (value < 0) throw Error(where + "entry '" + std::string(entry) + "' is negative");
    values.push_back(value);
    return;
  }
  const std::size_t colon2 = entry.find(':', colon + 1);
  if (colon2 == std::string_view::npos || entry.find(':', colon2 + 1) != std::string_view::npos)
    throw Error(where + "range '" + std::string(entry) + "' needs exactly first:last:step");
  const double first = number(entry.substr(0, colon), "range start");
  const double last = number(entry.substr(colon + 1, colon2 - colon - 1), "range end");
  const double step = number(entry.substr(colon2 + 1), "range step");
  const std::string range = "range '" + std::string(entry) + "'";
  if (first < 0) throw Error(where + range + " starts below 0");
  if (!(step > 0)) throw Error(where + range + ": the step must be > 0 (a sweep with zero steps)");
  if (last < first) throw Error(where + range + ": last < first (a sweep with zero steps)");
  // last belongs to the grid when within 1e-9 steps of it (1:10:0.1 ends at 10).
  constexpr double kGridSlack = 1e-9;
  const double steps = (last - first) / step;
  if (!(steps < double(kMaxSweepValues)))
    throw Error(where + range + ": more than " + std::to_string(kMaxSweepValues) + " values");
  const std::size_t count = std::size_t(std::floor(steps + kGridSlack)) + 1;
  for (std::size_t i = 0; i < count; ++i) values.push_back(first + double(i) * step);
  if (std::abs(values.back() - last) <= kGridSlack * step) values.back() = last;
}

}  // namespace

std::vector<double> parse_sweep_values(const char *option, std::string_view text) {
  std::vector<double> values;
  if (text.empty()) throw Error(std::string(option) + " needs a value");
  for (std::size_t begin = 0;;) {
    const std::size_t comma = std::min(text.find(',', begin), text.size());
    const std::string_view entry = text.substr(begin, comma - begin);
    if (entry.empty())
      throw Error(std::string(option) + " " + std::string(text) + ": an empty entry (write " +
                  "values as 1,2,4 or ranges as first:last:step)");
    append_sweep_entry(option, text, entry, values);
    if (values.size() > kMaxSweepValues)
      throw Error(std::string(option) + " " + std::string(text) + ": more than " +
                  std::to_string(kMaxSweepValues) + " values");
    if (comma == text.size()) break;
    begin = comma + 1;
  }
  return values;
}

std::vector<std::string_view> solve_option_names() {
  std::vector<std::string_view> names;
  for (const OptionSpec &spec : kOptions) names.emplace_back(spec.name);
  return names;
}

std::string suggestion_for(std::string_view unknown_name) {
  std::string_view best;
  std::size_t best_distance = 3;  // at most two edits away, and closer than the rest
  for (const OptionSpec &spec : kOptions) {
    const std::size_t d = edit_distance(unknown_name, spec.name);
    if (d < best_distance) {
      best_distance = d;
      best = spec.name;
    }
  }
  return best.empty() ? std::string() : " (did you mean " + dashed(best) + "?)";
}

std::vector<std::string> unused_options(bool include_late_options) {
  PetscInt count = 0;
  char **names = nullptr, **values = nullptr;
  PetscCallAbort(PETSC_COMM_SELF, PetscOptionsLeftGet(nullptr, &count, &names, &values));
  std::vector<std::string> unused;
  for (PetscInt i = 0; i < count; ++i) {
    std::string_view name = names[i];
    if (name.starts_with('-')) name.remove_prefix(1);
    if (include_late_options || !is_late_option(name)) unused.emplace_back(name);
  }
  PetscCallAbort(PETSC_COMM_SELF, PetscOptionsLeftRestore(nullptr, &count, &names, &values));
  return unused;
}

PetscErrorCode read_solve_options(MPI_Comm comm, SolveOptions *opt) {
  PetscFunctionBeginUser;
  std::map<std::string, std::string, std::less<>> given;  // option -> its text, if given
  PetscOptionsBegin(comm, nullptr, "fmbem boundary element solver options", "BEM");
  for (const OptionSpec &spec : kOptions) {
    char text[PETSC_MAX_PATH_LEN];
    PetscBool set = PETSC_FALSE;
    PetscCall(PetscOptionsString(dashed(spec.name).c_str(), spec.help, "",
                                 default_text(spec.name).c_str(), text, sizeof(text), &set));
    // The value itself, not the copy above: PETSc cuts a copy at its buffer's 4095 characters
    // (a long -k list would lose its last values, a long path name another file).
    const char *whole = nullptr;
    PetscBool found = PETSC_FALSE;
    PetscCall(PetscOptionsFindPair(nullptr, nullptr, dashed(spec.name).c_str(), &whole, &found));
    if (set) given[spec.name] = found && whole ? whole : text;
  }
  PetscOptionsEnd();
  {
    PetscBool help = PETSC_FALSE;
    PetscCall(PetscOptionsHasHelp(nullptr, &help));
    opt->help = help == PETSC_TRUE;
  }
  if (opt->help) PetscFunctionReturn(0);

  // A -bem_/-fmm_ option we do not read is a typo: say so before any work.
  for (const std::string &name : unused_options(true))
    if (name.starts_with("bem_") || name.starts_with("fmm_"))
      throw Error("unknown option " + dashed(name) + suggestion_for(name));

  const auto value = [&](std::string_view name) -> std::optional<std::string> {
    const auto found = given.find(name);
    if (found == given.end()) return std::nullopt;
    return found->second;
  };
  const auto text_or = [&](std::string_view name, const char *fallback) {
    return value(name).value_or(fallback);
  };
  // The option's text, or its default (default_text).
  const auto text_of = [&](std::string_view name) {
    return value(name).value_or(default_text(name));
  };

  opt->mesh = text_of("mesh");
  // Surface conditions: the project file's, then the options' (a group given two is refused).
  std::optional<Medium> project_medium;
  // A NumCalc project gives the problem; bem_solve's options choose how it is solved.
  const io::NumCalcInput *numcalc = nullptr;  // opt->numcalc's
  if (value("bem_numcalc")) {
    for (const char *given_too : {"mesh",
                                  "k",
                                  "bem_frequency",
                                  "bem_sound_speed",
                                  "bem_density",
                                  "kernel",
                                  "bem_project",
                                  "bem_rigid",
                                  "bem_velocity",
                                  "bem_pressure",
                                  "bem_admittance",
                                  "bem_impedance",
                                  "bem_default_condition",
                                  "bem_problem",
                                  "bem_bc",
                                  "bem_incident",
                                  "bem_incident_dir",
                                  "bem_source",
                                  "bem_sources",
                                  "bem_field",
                                  "bem_field_plane",
                                  "bem_field_sphere"})
      if (value(given_too))
        throw Error(dashed(given_too) +
                    " and -bem_numcalc: the NumCalc project gives the mesh, the frequencies, "
                    "the medium, the conditions, the incident wave and the evaluation grid; "
                    "change them in its NC.inp");
    opt->numcalc =
        std::make_shared<const io::NumCalcInput>(io::read_numcalc_input(*value("bem_numcalc")));
    numcalc = opt->numcalc.get();
    // The path as given: a project folder names all its sources.
    opt->numcalc_path = *value("bem_numcalc");
    opt->numcalc_output = text_of("bem_numcalc_output");
    if (value("bem_numcalc_output") && opt->numcalc_output.empty())
      throw Error("-bem_numcalc_output needs a folder");
    // A project's sources (its ears): one set-up per frequency for all of them.
    if (numcalc->sources.size() > 1)
      for (const io::NumCalcSource &source : numcalc->sources) {
        opt->sources.class_sets.push_back(source.own_lines);
        opt->sources.set_labels.push_back("NumCalc " + source.path);
      }
    opt->mesh = std::string(io::kNumCalcMeshPrefix) + opt->numcalc_path;
    opt->conditions = numcalc_conditions(*numcalc, opt->numcalc_notes);
    opt->numcalc_notes.insert(opt->numcalc_notes.begin(), numcalc->notes.begin(),
                              numcalc->notes.end());
    project_medium = Medium{numcalc->sound_speed, numcalc->density};
    if (numcalc->waves.size() > 1)
      throw Error(numcalc->path + ", line " + std::to_string(numcalc->waves[1].line) +
                  ": a second incident wave (line " + std::to_string(numcalc->waves[0].line) +
                  " gives the first): fmbem takes one a project (NumCalc superposes them); solve "
                  "each in its own project and add the results");
    if (!numcalc->waves.empty()) {
      const io::NumCalcWave &wave = numcalc->waves.front();
      char text[128];
      std::snprintf(text, sizeof text, "%.17g,%.17g,%.17g", wave.vector.x, wave.vector.y,
                    wave.vector.z);
      given[wave.plane ? "bem_incident_dir" : "bem_source"] = text;
    }
    opt->field.numcalc_project = opt->numcalc_path;
  } else if (value("bem_numcalc_output")) {
    throw Error("-bem_numcalc_output applies only to -bem_numcalc");
  }
  if (value("bem_project")) {
    Project project = read_project_file(*value("bem_project"));
    opt->conditions.add_all(project.conditions);
    project_medium = project.medium;
  }
  constexpr std::pair<const char *, ConditionKind> kConditionOptions[] = {
      {"bem_rigid", ConditionKind::rigid},
      {"bem_velocity", ConditionKind::velocity},
      {"bem_pressure", ConditionKind::pressure},
      {"bem_admittance", ConditionKind::admittance},
      {"bem_impedance", ConditionKind::impedance}};
  for (const auto &[name, kind] : kConditionOptions)
    if (value(name))
      add_condition_option(opt->conditions, kind, dashed(name).c_str(), *value(name));
  if (value("bem_default_condition"))
    opt->conditions.set_fallback(
        parse_default_condition("-bem_default_condition", *value("bem_default_condition")));
  const bool surface_conditions = !opt->conditions.empty();
  for (const char *medium_option : {"bem_sound_speed", "bem_density"})
    if (value(medium_option) && project_medium)
      throw Error(dashed(medium_option) +
                  " and the project file's [medium] both give the medium: "
                  "give it in one place");
  if (project_medium) opt->medium = *project_medium;
  // The density enters surface conditions and the field's particle velocity alone.
  if (value("bem_density") && !surface_conditions && !value("bem_field_velocity"))
    throw Error(
        "-bem_density applies only to surface conditions (-bem_velocity, ...) and "
        "-bem_field_velocity");
  if (!project_medium)
    for (auto [name, quantity] : {std::pair{"bem_sound_speed", &opt->medium.sound_speed},
                                  std::pair{"bem_density", &opt->medium.density}}) {
      const std::string text = text_of(name);
      *quantity = parse_real(dashed(name).c_str(), text);
      if (!(*quantity > 0)) throw Error(dashed(name) + " " + text + ": must be > 0");
    }
  // One k as before; a list or range is a sweep.
  if (value("k") && value("bem_frequency"))
    throw Error("-k and -bem_frequency both give the wavenumbers: give one of them");
  if (value("bem_sound_speed") && !value("bem_frequency") && !surface_conditions)
    throw Error("-bem_sound_speed applies only to -bem_frequency and surface conditions");
  std::vector<double> &wavenumbers = opt->wavenumbers;
  if (numcalc) {
    opt->frequencies = numcalc->frequencies_hz;
    for (double f : opt->frequencies)
      wavenumbers.push_back(2 * std::numbers::pi * f / opt->medium.sound_speed);
  } else if (value("bem_frequency")) {
    const double sound_speed = opt->medium.sound_speed;
    opt->frequencies = parse_sweep_values("-bem_frequency", *value("bem_frequency"));
    for (double f : opt->frequencies) wavenumbers.push_back(2 * std::numbers::pi * f / sound_speed);
  } else if (const auto k_text = value("k");
             k_text && k_text->find_first_of(",:") == std::string::npos) {
    const double k = parse_real("-k", *k_text);  // its message as before
    if (k < 0) throw Error("-k " + *k_text + ": the wavenumber must be >= 0 (0: Laplace)");
    wavenumbers = {k};
  } else {
    wavenumbers = k_text ? parse_sweep_values("-k", *k_text) : std::vector<double>{1.0};
  }
  const bool laplace =
      choose("-kernel", text_of("kernel"), {std::pair{"helmholtz", false}, {"laplace", true}});
  if (laplace) {
    if (value("bem_frequency"))
      throw Error("-kernel laplace contradicts -bem_frequency (Laplace is k = 0)");
    if (value("k") && (wavenumbers.size() > 1 || wavenumbers[0] != 0))
      throw Error("-kernel laplace contradicts -k " + *value("k") + " (Laplace is k = 0)");
    wavenumbers = {0.0};
  }
  opt->problem.k = wavenumbers.front();
  // Every frequency of a sweep inside every table before any work (not a failed k later).
  const auto check_table = [&](const GroupCondition &c) {
    if (c.value.table)
      for (double k_value : wavenumbers) c.value_at(frequency_of(k_value, opt->medium));
  };
  for (const GroupCondition &c : opt->conditions.groups) check_table(c);
  if (opt->conditions.fallback) check_table(*opt->conditions.fallback);
  // The checks below that need k > 0 hold for every k of a sweep when they hold for the lowest.
  const double k = *std::min_element(wavenumbers.begin(), wavenumbers.end());
  opt->sweep_csv_path = text_of("bem_sweep_csv");
  if (value("bem_sweep_csv") && opt->sweep_csv_path.empty())
    throw Error("-bem_sweep_csv needs a file name");

  opt->problem.kind = choose(
      "-bem_problem", text_of("bem_problem"),
      {std::pair{"scattering", ProblemKind::Scattering}, {"radiation", ProblemKind::Radiation}});
  const bool scattering = opt->problem.kind == ProblemKind::Scattering;
  if (surface_conditions) {
    if (!scattering)
      throw Error(
          "-bem_problem radiation (the monopole inside the body) does not combine with surface "
          "conditions: a vibrating surface is -bem_velocity G:V");
    if (value("bem_bc"))
      throw Error(
          "-bem_bc does not apply with surface conditions: the groups' conditions are the "
          "boundary conditions (-bem_default_condition for the rest)");
    if (k == 0)
      throw Error(
          "surface conditions need a frequency above 0 (k > 0; Laplace and k = 0 have no "
          "velocity or impedance)");
    opt->problem.kind = ProblemKind::Surface;
    // Incident waves add to the vibrating surfaces' field; by default there is none.
    const std::string incident = text_or("bem_incident", value("bem_incident_dir") ? "planewave"
                                                         : value("bem_source")     ? "pointsource"
                                                                                   : "none");
    opt->problem.incident_wave =
        choose("-bem_incident", incident,
               {std::pair{"planewave", true}, {"pointsource", true}, {"none", false}});
    if (!opt->problem.incident_wave && (value("bem_incident_dir") || value("bem_source")))
      throw Error("-bem_incident none has no direction or source");
    given["bem_incident"] = opt->problem.incident_wave ? incident : "planewave";
  }
  opt->problem.bc = choose("-bem_bc", text_of("bem_bc"),
                           {std::pair{"neumann", BoundaryCondition::Neumann},
                            {"dirichlet", BoundaryCondition::Dirichlet}});
  if (!scattering && value("bem_incident"))
    throw Error(
        "-bem_incident does not apply to -bem_problem radiation (its source is "
        "-bem_source, inside the body)");
  opt->problem.incident.kind = choose("-bem_incident", text_of("bem_incident"),
                                      {std::pair{"planewave", exact::Incident::Kind::PlaneWave},
                                       {"pointsource", exact::Incident::Kind::PointSource}});
  const bool point_source = opt->problem.incident.kind == exact::Incident::Kind::PointSource;
  if (value("bem_incident_dir") && (!scattering || point_source))
    throw Error(
        "-bem_incident_dir applies only to plane-wave scattering "
        "(-bem_incident planewave)");
  if (value("bem_incident_dir"))
    opt->sources.directions =
        parse_vec3_list("-bem_incident_dir", *value("bem_incident_dir"), true);
  opt->problem.incident.direction =
      opt->sources.directions.empty() ? Vec3{0, 0, 1} : opt->sources.directions.front();
  for (const Vec3 &d : opt->sources.directions)
    if (norm(d) == 0)
      throw Error(
          "-bem_incident_dir: the plane-wave direction must be a "
          "non-zero vector");
  if (value("bem_source") && scattering && !point_source)
    throw Error(
        "-bem_source does not apply to plane-wave scattering (add "
        "-bem_incident "
        "pointsource, or -bem_problem radiation)");
  if (scattering && point_source && !value("bem_source"))
    throw Error("-bem_incident pointsource needs -bem_source x,y,z (outside the body)");
  opt->source_given = value("bem_source").has_value();
  if (opt->source_given)
    opt->sources.positions = parse_vec3_list("-bem_source", *value("bem_source"), false);
  const Vec3 source = opt->source_given ? opt->sources.positions.front() : Vec3{};
  opt->problem.incident.source = source;
  opt->problem.source = source;
  if (numcalc && !numcalc->waves.empty())
    opt->problem.incident.amplitude = numcalc->waves.front().amplitude;
  opt->sources.separate_groups = choose("-bem_sources", text_of("bem_sources"),
                                        {std::pair{"together", false}, {"separate", true}});
  if (opt->sources.separate_groups && !surface_conditions)
    throw Error(
        "-bem_sources separate applies to surface groups' velocities and pressures "
        "(-bem_velocity, -bem_pressure, -bem_project); this problem has none");

  // For k > 0 the regularised Burton-Miller formulation: unique at every k like bm, its
  // iterations bounded in N and k without a preconditioner, its error at or below bm's
  // (bench/results/bm_regularised.md); bm where a preconditioner is asked for (rbm's operator
  // has no diagonal or near-field block to build one from). Laplace has no fictitious
  // frequencies and keeps cbie. A sweep is solved with one formulation, cbie when it includes
  // k = 0.
  char pc_type[256] = "";
  PetscBool pc_type_set = PETSC_FALSE;
  PetscCall(
      PetscOptionsGetString(nullptr, nullptr, "-pc_type", pc_type, sizeof pc_type, &pc_type_set));
  const bool preconditioner_asked = (pc_type_set && std::string_view(pc_type) != PCNONE) ||
                                    (value("bem_pc") && *value("bem_pc") != "auto") ||
                                    (value("bem_near_matrix") && *value("bem_near_matrix") == "on");
  const std::optional<Formulation> formulation_choice =
      choose("-bem_formulation", text_of("bem_formulation"),
             {std::pair{"auto", std::optional<Formulation>()},
              {"cbie", std::optional(Formulation::Conventional)},
              {"bm", std::optional(Formulation::BurtonMiller)},
              {"rbm", std::optional(Formulation::Regularised)}});
  opt->problem.formulation = formulation_choice     ? *formulation_choice
                             : k == 0               ? Formulation::Conventional
                             : preconditioner_asked ? Formulation::BurtonMiller
                                                    : Formulation::Regularised;
  if (opt->problem.formulation != Formulation::Conventional && k == 0)
    throw Error("-bem_formulation " + text_of("bem_formulation") +
                " needs k > 0 (Laplace has no fictitious frequencies: use -bem_formulation cbie)");
  // The regularised formulation reads the layers as Burton-Miller does (the quadratic read,
  // the curvature correction of D').
  const bool regularised = opt->problem.formulation == Formulation::Regularised;
  const bool burton_miller = opt->problem.formulation == Formulation::BurtonMiller || regularised;
  if (value("bem_bm_alpha")) {
    if (!burton_miller)
      throw Error(
          "-bem_bm_alpha applies only to the Burton-Miller formulations (-bem_formulation bm or "
          "rbm)");
    opt->problem.bm_alpha = parse_complex("-bem_bm_alpha", *value("bem_bm_alpha"));
    const cplx alpha = opt->problem.bm_alpha;
    if (alpha.imag() == 0.0)
      throw Error("-bem_bm_alpha " + *value("bem_bm_alpha") +
                  ": alpha needs a non-zero imaginary part (a real alpha does not remove the "
                  "fictitious frequencies; the default is i/k)");
  }

  if (value("bem_rbm_kappa") && !regularised)
    throw Error(
        "-bem_rbm_kappa applies only to the regularised formulation (-bem_formulation rbm)");
  opt->problem.regulariser_kappa_factor = parse_real("-bem_rbm_kappa", text_of("bem_rbm_kappa"));
  if (!(opt->problem.regulariser_kappa_factor >= 0.0 &&
        opt->problem.regulariser_kappa_factor <= 10.0))
    throw Error("-bem_rbm_kappa " + *value("bem_rbm_kappa") + ": must lie in 0..10");

  // Burton-Miller (bm) reads the double density as a quadratic fitted to the neighbours (its
  // hypersingular operator is inconsistent with the constant read) wherever the double layer is
  // used (all but soft scattering). The read's far field needs a rule of degree 4 (6 points): the
  // 3-point rule leaves an O(1) error of its linear part against the hypersingular kernel just
  // outside the close pairs (bench/results/hypersingular_consistency.md).
  // With surface conditions the double layer reads u wherever it is unknown or a given
  // pressure other than 0; elements in no group are rigid unless a default is given.
  const auto pressure_release = [](const GroupCondition &c) {
    return c.kind == ConditionKind::pressure && !c.value.table && c.value.constant == cplx(0.0);
  };
  bool conditions_use_double_layer =
      !opt->conditions.fallback || !pressure_release(*opt->conditions.fallback);
  for (const GroupCondition &c : opt->conditions.groups)
    conditions_use_double_layer = conditions_use_double_layer || !pressure_release(c);
  const bool double_layer_used =
      surface_conditions ? conditions_use_double_layer
                         : !(scattering && opt->problem.bc == BoundaryCondition::Dirichlet);
  const std::optional<DensityModel> double_density =
      choose("-bem_double_density", text_of("bem_double_density"),
             {std::pair{"auto", std::optional<DensityModel>()},
              {"constant", std::optional(DensityModel::constant)},
              {"quadratic", std::optional(DensityModel::quadratic)}});
  opt->double_density = double_density                       ? *double_density
                        : burton_miller && double_layer_used ? DensityModel::quadratic
                                                             : DensityModel::constant;
  opt->quadrature_points = int(parse_integer(
      "-bem_quad_order",
      text_or("bem_quad_order", opt->double_density == DensityModel::quadratic ? "6" : "3"), 1, 7));
  opt->near.near_factor = parse_real("-bem_near_factor", text_of("bem_near_factor"));
  // Beyond 10 the close pairs grow towards all N^2 pairs (memory and set-up).
  if (!(opt->near.near_factor >= 1 && opt->near.near_factor <= 10))
    throw Error("-bem_near_factor " + *value("bem_near_factor") + ": must lie in 1..10");
  opt->near.angular_points = int(parse_integer("-bem_near_quad", text_of("bem_near_quad"), 2, 128));
  opt->allow_coarse = parse_bool("-bem_allow_coarse", text_of("bem_allow_coarse"));
  // D' on flat elements is O(h) off (the mean curvature sits on the edges); bm applies
  // it to the single density in the soft and radiation problems (the rigid one has none).
  // With surface conditions: wherever some q is not zero (a velocity, pressure, admittance).
  bool conditions_have_q = opt->conditions.fallback.has_value() &&
                           opt->conditions.fallback->kind != ConditionKind::rigid;
  for (const GroupCondition &c : opt->conditions.groups)
    conditions_have_q = conditions_have_q || c.kind != ConditionKind::rigid;
  const bool correction_applies =
      burton_miller &&
      (surface_conditions ? conditions_have_q
                          : !(scattering && opt->problem.bc == BoundaryCondition::Neumann));
  if (value("bem_curvature_correction") && !correction_applies)
    throw Error(
        "-bem_curvature_correction applies only to Burton-Miller's soft-scattering, radiation "
        "and non-rigid surface-condition problems (the correction is of D' on the single "
        "density, which " +
        std::string(burton_miller ? "rigid scattering does not have)"
                                  : "the conventional equation does not use)"));
  opt->curvature_correction =
      parse_bool("-bem_curvature_correction", text_of("bem_curvature_correction")) &&
      correction_applies;
  // Sharp edges: the smooth meshes' discretisation angles stay below 23 degrees, a
  // box's edges are 90; a 42-degree edge is better fitted across (bench/results/bm_sharp_edges.md).
  const double feature_degrees = parse_real("-bem_feature_angle", text_of("bem_feature_angle"));
  if (!(feature_degrees > 0 && feature_degrees <= 180))
    throw Error("-bem_feature_angle " + *value("bem_feature_angle") + ": must lie in (0, 180]");
  opt->near.feature_angle = feature_degrees * std::numbers::pi / 180.0;
  if (value("bem_feature_angle") && opt->double_density != DensityModel::quadratic &&
      !opt->curvature_correction)
    throw Error(
        "-bem_feature_angle applies only where the double density is read as a quadratic or the "
        "curvature correction is made (Burton-Miller; here neither is)");
  enum class NearMatrixChoice { automatic, on, off };
  const NearMatrixChoice near_matrix = choose("-bem_near_matrix", text_of("bem_near_matrix"),
                                              {std::pair{"auto", NearMatrixChoice::automatic},
                                               {"on", NearMatrixChoice::on},
                                               {"off", NearMatrixChoice::off}});
  opt->near_matrix_pairs = choose("-bem_near_matrix_pairs", text_of("bem_near_matrix_pairs"),
                                  {std::pair{"close", NearPairs::close},
                                   {"leaf", NearPairs::leaf},
                                   {"neighbours", NearPairs::neighbours}});
  // The default PC (bench/results/near_pc.md): point Jacobi for cbie, which no near-field PC
  // helps; the leaf blocks for bm, the one PC with which GMRES converges on a body with a thin
  // part (box with a 4 mm plate, 1 kHz: Jacobi stagnates, ILU(0) diverges) and as fast as
  // ILU(0) on the sphere on the CPU. -pc_type alone (a PETSc PC) keeps PETSc's.
  const std::optional<PreconditionerChoice> pc_choice =
      choose("-bem_pc", text_of("bem_pc"),
             {std::pair{"auto", std::optional<PreconditionerChoice>()},
              {"petsc", std::optional(PreconditionerChoice::petsc)},
              {"leaf_block", std::optional(PreconditionerChoice::leaf_block)}});
  const bool leaf_block_type = pc_type_set && std::string_view(pc_type) == kLeafBlockPC;
  opt->pc = pc_choice && !leaf_block_type ? *pc_choice
            : leaf_block_type || (burton_miller && !regularised && !pc_type_set)
                ? PreconditionerChoice::leaf_block
                : PreconditionerChoice::petsc;
  const bool leaf_block = opt->pc == PreconditionerChoice::leaf_block;
  if (regularised && leaf_block)
    throw Error(
        "-bem_pc leaf_block: the regularised Burton-Miller operator (rbm) has no near-field "
        "block to invert; it converges without a preconditioner");
  if (regularised && near_matrix == NearMatrixChoice::on)
    throw Error(
        "-bem_near_matrix on: the regularised Burton-Miller operator (rbm) has no near-field "
        "matrix (its S~ H part couples every pair)");
  for (const char *block_option : {"bem_pc_block", "bem_pc_overlap", "bem_pc_block_entries"})
    if (value(block_option) && !leaf_block)
      throw Error(dashed(block_option) + " applies only to -bem_pc leaf_block");
  opt->leaf_block.block_size = int(parse_integer("-bem_pc_block", text_of("bem_pc_block"), 1, 512));
  opt->leaf_block.overlap = int(parse_integer("-bem_pc_overlap", text_of("bem_pc_overlap"), 0, 4));
  opt->leaf_block.entries = choose("-bem_pc_block_entries", text_of("bem_pc_block_entries"),
                                   {std::pair{name_of(BlockEntries::near), BlockEntries::near},
                                    {name_of(BlockEntries::full), BlockEntries::full}});
  // PCs that need what a matrix-free operator and its near-field block cannot give (PETSc
  // crashes inside them rather than refusing).
  for (const char *unsupported : {PCREDISTRIBUTE})
    if (pc_type_set && std::string_view(pc_type) == unsupported && !leaf_block)
      throw Error("-pc_type " + std::string(pc_type) +
                  " is not supported by bem_solve (its operator is matrix-free; the PCs that "
                  "work on the near-field matrix are jacobi, none, ilu, icc, lu, bjacobi, asm, "
                  "gamg, sor and their kin)");
  if (leaf_block && pc_type_set && std::string_view(pc_type) != kLeafBlockPC)
    throw Error("-bem_pc leaf_block is the preconditioner and -pc_type " + std::string(pc_type) +
                " another: give one of them");
  // The PC the solve runs: -pc_type's (KSPSetFromOptions reads the same option), else ours.
  // The regularised operator has neither a diagonal nor a near-field block: no PC.
  opt->pc_type = pc_type_set   ? pc_type
                 : leaf_block  ? kLeafBlockPC
                 : regularised ? PCNONE
                               : PCJACOBI;
  if (regularised && opt->pc_type != PCNONE)
    throw Error("-pc_type " + opt->pc_type +
                ": the regularised Burton-Miller operator (rbm) has no diagonal and no "
                "near-field matrix to build a preconditioner from; it converges without one "
                "(-pc_type none, its default)");
  // The near-field block as the preconditioning matrix, for the PCs that factor or split one.
  const bool matrix_free =
      opt->pc_type == PCJACOBI || opt->pc_type == PCNONE || opt->pc_type == kLeafBlockPC;
  opt->assemble_near_matrix = near_matrix == NearMatrixChoice::on ||
                              (near_matrix == NearMatrixChoice::automatic && !matrix_free);
  if (!opt->assemble_near_matrix && !matrix_free)
    throw Error("-pc_type " + opt->pc_type +
                " needs an assembled matrix, and -bem_near_matrix off leaves none (the "
                "operator is matrix-free: use -pc_type jacobi or none, or drop "
                "-bem_near_matrix off)");
  if (!opt->assemble_near_matrix && opt->near_matrix_pairs != NearPairs::close)
    throw Error("-bem_near_matrix_pairs " + text_of("bem_near_matrix_pairs") +
                " does not apply: -pc_type " + opt->pc_type + " assembles no near-field matrix");

  opt->operator_backend =
      choose("-bem_operator", text_of("bem_operator"),
             {std::pair{"fmm", OperatorBackend::fmm}, {"direct", OperatorBackend::direct}});
  if (opt->operator_backend == OperatorBackend::direct)
    for (const char *fmm_option :
         {"fmm_p", "fmm_eps", "fmm_max_leaf", "fmm_view", "fmm_distribute", "fmm_overlap"})
      if (value(fmm_option))
        throw Error(dashed(fmm_option) + " does not apply to -bem_operator direct");
  if (opt->near_matrix_pairs != NearPairs::close && opt->operator_backend != OperatorBackend::fmm)
    throw Error("-bem_near_matrix_pairs " + text_of("bem_near_matrix_pairs") +
                " needs the FMM's octree (-bem_operator fmm)");
  if (value("fmm_p") && value("fmm_eps"))
    throw Error("-fmm_p and -fmm_eps both set the FMM order: give one of them");
  opt->fmm.order = int(parse_integer("-fmm_p", text_of("fmm_p"), 0, fmm::max_degree));
  opt->fmm.tolerance = parse_real("-fmm_eps", text_of("fmm_eps"));
  if (!(opt->fmm.tolerance > 0 && opt->fmm.tolerance < 1))
    throw Error("-fmm_eps " + *value("fmm_eps") + ": must lie strictly between 0 and 1");
  opt->fmm.max_leaf =
      int(parse_integer("-fmm_max_leaf", text_or("fmm_max_leaf", "100"), 1, 1 << 20));
  opt->fmm.measured_max_leaf = !value("fmm_max_leaf");  // fmm::default_max_leaf
  opt->fmm_view = parse_bool("-fmm_view", text_of("fmm_view"));
  if (value("bem_planes")) opt->planes = parse_image_planes(*value("bem_planes"));
  if (numcalc && !numcalc->planes.empty()) {
    if (value("bem_planes"))
      throw Error("-bem_planes and -bem_numcalc: the project's SYMMETRY section gives the planes");
    opt->planes = numcalc->planes;
  }
  opt->fmm_distribute = parse_bool("-fmm_distribute", text_of("fmm_distribute"));
  opt->fmm_overlap = parse_bool("-fmm_overlap", text_of("fmm_overlap"));
  opt->split_frequencies = choose("-bem_split", text_of("bem_split"),
                                  {std::pair{"elements", false}, {"frequencies", true}});
  if (opt->split_frequencies) {
    PetscMPIInt ranks = 1;
    PetscCallMPI(MPI_Comm_size(comm, &ranks));
    // A rank without a frequency would idle through the run: the user meant another split.
    if (opt->wavenumbers.size() < std::size_t(ranks))
      throw Error("-bem_split frequencies: " + std::to_string(opt->wavenumbers.size()) +
                  (opt->wavenumbers.size() == 1 ? " frequency" : " frequencies") + " for " +
                  std::to_string(ranks) +
                  " ranks: give at most as many ranks as frequencies, or -bem_split elements");
    for (const char *distributed_option : {"fmm_distribute", "fmm_overlap"})
      if (value(distributed_option))
        throw Error(dashed(distributed_option) +
                    " partitions one solve over the ranks; -bem_split frequencies gives each "
                    "rank whole solves");
  }
  if (opt->fmm_overlap && !opt->fmm_distribute)
    throw Error(
        "-fmm_overlap overlaps the distributed FMM's exchange: it needs -fmm_distribute true");
  using Device = fmm::FmmOptions::Device;
  opt->fmm.device =
      choose("-fmm_device", text_of("fmm_device"),
             {std::pair{"cpu", Device::cpu}, {"gpu", Device::gpu}, {"auto", Device::automatic}});
  if (value("fmm_m2l_scheme") && *value("fmm_m2l_scheme") != "fastest") {
    try {
      opt->fmm.m2l_scheme = fmm::parse_m2l_scheme(*value("fmm_m2l_scheme"));
    } catch (const Error &e) {
      throw Error("-fmm_m2l_scheme: " + std::string(e.what()));
    }
  }
  opt->fmm.gpu_m2l.chunk = int(parse_integer("-fmm_m2l_chunk", text_of("fmm_m2l_chunk"), 1, 8));
  if (opt->fmm.device == Device::cpu)
    for (const char *gpu_option : {"fmm_m2l_scheme", "fmm_m2l_chunk"})
      if (value(gpu_option)) throw Error(dashed(gpu_option) + " does not apply to -fmm_device cpu");
  if (value("fmm_m2l_chunk") && opt->fmm.m2l_scheme != fmm::M2LScheme::cluster &&
      opt->fmm.m2l_scheme != fmm::M2LScheme::ij)
    throw Error("-fmm_m2l_chunk applies only to -fmm_m2l_scheme cluster or ij");

  opt->vtu_path = text_of("o");
  opt->csv_path = text_of("bem_csv");
  if (value("o") && opt->vtu_path.empty())
    throw Error("-o needs a file name (FILE.vtu or FILE.pvtu)");
  if (value("bem_csv") && opt->csv_path.empty()) throw Error("-bem_csv needs a file name");
  // The field off the surface and the far field.
  FieldRequest &field = opt->field;
  field.points_file = text_of("bem_field");
  if (value("bem_field") && field.points_file.empty())
    throw Error("-bem_field needs a file name (.msh, or CSV of x,y,z)");
  if (int(value("bem_field").has_value()) + int(value("bem_field_plane").has_value()) +
          int(value("bem_field_sphere").has_value()) >
      1)
    throw Error(
        "-bem_field, -bem_field_plane and -bem_field_sphere each give the field points: give one "
        "of them");
  if (value("bem_field_plane"))
    field.plane = io::parse_field_plane("-bem_field_plane", *value("bem_field_plane"));
  if (value("bem_field_sphere"))
    field.sphere = io::parse_field_sphere("-bem_field_sphere", *value("bem_field_sphere"));
  field.vtk_path = text_of("bem_field_vtk");
  field.csv_path = text_of("bem_field_csv");
  // What the field's points are needed for: each refused without them.
  for (const char *output :
       {"bem_field_vtk", "bem_field_csv", "bem_sofa", "bem_field_reference", "bem_field_velocity"})
    if (value(output) && !field.field())
      throw Error(dashed(output) +
                  " needs field points: -bem_field FILE, -bem_field_plane or -bem_field_sphere "
                  "(or a NumCalc project's evaluation grid)");
  if (value("bem_sofa")) {
    field.sofa_path = *value("bem_sofa");
    if (field.sofa_path.size() < 6 ||
        field.sofa_path.compare(field.sofa_path.size() - 5, 5, ".sofa") != 0)
      throw Error("-bem_sofa '" + field.sofa_path + "': the HRTF file must end in .sofa");
    if (!io::sofa_available())
      throw Error("-bem_sofa '" + field.sofa_path +
                  "': this build has no netCDF (FMBEM_WITH_NETCDF=OFF); use -bem_field_csv");
  }
  if (value("bem_field_reference") || value("bem_sofa")) {
    const std::string text = text_of("bem_field_reference");
    field.reference_center = text.empty() ? Vec3{} : parse_vec3("-bem_field_reference", text);
    if (*std::min_element(wavenumbers.begin(), wavenumbers.end()) == 0)
      throw Error("-bem_field_reference needs k > 0 (a Laplace field has no acoustic reference)");
  }
  field.velocity = parse_bool("-bem_field_velocity", text_of("bem_field_velocity"));
  if (field.velocity && *std::min_element(wavenumbers.begin(), wavenumbers.end()) == 0)
    throw Error("-bem_field_velocity needs k > 0 (v = grad p / (i omega rho))");
  // NumCalc's vEvalGrid: the velocity at the project's grid, as NumCalc writes it.
  if (!field.numcalc_project.empty()) field.velocity = true;
  field.medium = opt->medium;
  if (value("bem_field_vtk") && field.vtk_path.empty())
    throw Error("-bem_field_vtk needs a file name");
  if (value("bem_field_csv") && field.csv_path.empty())
    throw Error("-bem_field_csv needs a file name");
  field.farfield_directions = std::size_t(parse_integer(
      "-bem_farfield", text_or("bem_farfield", "0"), value("bem_farfield") ? 1 : 0, 1'000'000));
  field.farfield_sphere = parse_bool("-bem_farfield_sphere", text_of("bem_farfield_sphere"));
  field.farfield_csv = text_of("bem_farfield_csv");
  for (const char *farfield_option : {"bem_farfield_sphere", "bem_farfield_csv"})
    if (value(farfield_option) && field.farfield_directions == 0)
      throw Error(dashed(farfield_option) + " needs -bem_farfield N");
  if (value("bem_farfield_csv") && field.farfield_csv.empty())
    throw Error("-bem_farfield_csv needs a file name");
  if (field.farfield_directions > 0 && k == 0)
    throw Error("-bem_farfield needs k > 0 (a Laplace field has no far-field pattern)");
  if (opt->mesh.empty()) throw Error("no mesh: give -mesh FILE.msh or -mesh icosphere:L[:R]");
  PetscFunctionReturn(0);
}

}  // namespace fmbem
