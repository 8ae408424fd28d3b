#pragma once
#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "fmbem/core/vec3.hpp"
#include "fmbem/io/field_points.hpp"
#include "fmbem/mesh/image_planes.hpp"
#include "fmbem/mesh/surface.hpp"

namespace fmbem::io {

// A NumCalc project: the input of Mesh2HRTF's solver (NC.inp with its node and element files),
// read as NumCalc 1.2.4 reads it (NC_Input.cpp), and NumCalc's result files written as it writes
// them (NC_PostProcessing.cpp), so that Mesh2HRTF's post-processing reads ours unchanged.
//
// NC.inp is a fixed sequence of lines; blank lines and lines whose first word holds a '#' are
// skipped everywhere. In order: "Mesh2HRTF <version>", a title, Controlparameter I (unused),
// Controlparameter II ("1 N dt t0 ...": N frequency steps at times t0 + i dt, i = 1..N), the load
// frequency curve ("0 M", then M lines "time frequency_hz"; a step's frequency is the curve at
// its time, linear between points, clamped beyond them), Main Parameters I ("groups elements
// nodes terms symmetry_planes . . method solver"), II ("plane_waves point_sources interior
// cluster preconditioner"), III (unused), IV ("c rho time_factor ..."), NODES and ELEMENTS (a
// file a line, paths relative to NC.inp's folder), BOUNDARY ("ELEM a TO b KIND re cre im cim"
// lines up to RETU), PLANE WAVES and POINT SOURCES ("id x y z re cre im cim", present when
// counted in Main Parameters II), CURVES (optional), POST PROCESS, END.
//
// Conventions are fmbem's own (exp(-i omega t) for a time factor other than -1, normals by the
// right-hand rule into the fluid, VELO the normal velocity into the fluid in m/s, PRES in Pa,
// ADMI the admittance normalised by rho c, IMPE the impedance normalised by rho c, a plane wave
// A exp(i k d.x), a point source A exp(ikr) / (4 pi r)): README's NumCalc section lists the
// mapping and what is refused.

// A CURVES curve: factor over frequency, linear between its points and constant beyond them.
struct NumCalcCurve {
  int id = 0;
  std::size_t line = 0;  // of its header in NC.inp
  std::vector<double> frequencies_hz, factors;
  double at(double frequency_hz) const;
};

// A BOUNDARY line: a condition on the boundary elements with ids first..last (inclusive).
struct NumCalcBoundary {
  enum class Kind { velocity, pressure, admittance, impedance };
  std::size_t line = 0;
  // Its surface group's name: "NC.inp line 23", or with several sources "source_2/NC.inp line
  // 23" (read_numcalc_input).
  std::string group;
  std::string file;  // the NC.inp that gives it
  long long first = 0, last = 0;
  Kind kind = Kind::velocity;
  cplx value{};
  // The curves scaling the real and the imaginary part (both or neither).
  std::optional<int> curve_re, curve_im;
};
const char* numcalc_keyword(NumCalcBoundary::Kind kind);  // "VELO", "PRES", "ADMI", "IMPE"

// A PLANE WAVES or POINT SOURCES line.
struct NumCalcWave {
  std::size_t line = 0;
  bool plane = true;  // a plane wave towards `vector`, or a point source at it
  Vec3 vector{};
  cplx amplitude{};
};

// One NumCalc source of a Mesh2HRTF project (NumCalc/source_N): its NC.inp, and the BOUNDARY
// lines (indices into NumCalcInput::boundary) that it alone has: its velocity sources (an ear).
struct NumCalcSource {
  std::string path, folder;
  std::vector<std::size_t> own_lines;
};

struct NumCalcInput {
  std::string path;          // NC.inp (the first source's, with several)
  std::string version_line;  // its first line, words joined by one blank (the outputs' first)
  std::string title;
  std::vector<double> frequencies_hz;  // one per step
  double sound_speed = 0.0, density = 0.0;
  std::size_t element_count = 0, node_count = 0;  // Main Parameters I
  // The NODES and ELEMENTS files, resolved against NC.inp's folder, and their NC.inp lines.
  std::vector<std::string> node_files, element_files;
  std::vector<std::size_t> node_file_lines, element_file_lines;
  // The SYMMETRY section's planes (none: empty), with NumCalc's data convention
  // (ImagePlanes::with_whole_data).
  ImagePlanes planes;
  std::vector<NumCalcBoundary> boundary;
  std::vector<NumCalcWave> waves;
  std::vector<NumCalcCurve> curves;
  // Settings read and not used (NumCalc's own solver choices), one sentence each.
  std::vector<std::string> notes;
  // The sources: one (NC.inp's folder, every line its own: a single NumCalc run's problem), or
  // each NumCalc/source_N of a project folder.
  std::vector<NumCalcSource> sources;
  const NumCalcCurve* curve(int id) const;  // nullptr when none has that id
};

// Largest NC.inp read (a project's NC.inp is a few kilobytes; its meshes are separate files).
inline constexpr std::size_t kMaxNumCalcInputBytes = std::size_t{16} << 20;

// Parses NC.inp's text; `path` names it in messages and resolves the mesh files. Throws
// fmbem::Error "<path>, line N: ..." for anything NumCalc refuses or reads differently from what
// it says (a missing section or END, a wrong field count, a number that is not one, counts that
// disagree, a curve named and not given, both curve fields not -1 or both numbers) and for what
// fmbem cannot solve, with the reason: symmetry planes, an interior problem, the time factor
// exp(+i omega t) (-1), TRAD/TRIM, frequency curves on IMPE or on a wave's amplitude, NumCalc's
// internal test source (-1 point sources), a frequency <= 0.
NumCalcInput parse_numcalc_input(std::string_view text, const std::string& path);
// The project at `path`: NC.inp itself, a folder holding one, or a Mesh2HRTF project folder
// (holding NumCalc/source_N/NC.inp) or its NumCalc folder (holding source_N/NC.inp): then its
// sources in the order of N, solved together (one set-up per frequency). Their NC.inp must give
// one problem (the same frequencies, medium, mesh files, incident waves, and the same BOUNDARY
// lines but for velocity sources, Mesh2HRTF's ears): the lines every source has are kept once,
// a line some have (a VELO) is its sources' own. Throws as parse_numcalc_input, when a file is
// missing, not a regular file, or larger than kMaxNumCalcInputBytes, and naming the files and
// what differs when the sources are not one problem.
NumCalcInput read_numcalc_input(const std::string& path);

// The project's elements: the boundary elements as the surface (their nodes its vertices, both
// in the files' order) and the evaluation elements' nodes as field points.
struct NumCalcMesh {
  // One surface group a BOUNDARY line (named NumCalcBoundary::group, tag its line number), holding
  // the boundary elements its range reaches; the other elements are in no group.
  Surface surface;
  std::vector<long long> element_ids;     // each triangle's id in the element files
  std::vector<long long> element_groups;  // and its NumCalc element group
  std::size_t group_count = 0;            // distinct element groups, evaluation ones included
  FieldPoints grid;                       // the evaluation nodes in the files' order; cells
  std::vector<long long> grid_node_ids;   // their ids
  long long grid_group = 0;               // the evaluation elements' one group
  std::vector<std::string> warnings;      // a BOUNDARY line reaching no boundary element
};

// Reads the node and element files. Throws fmbem::Error naming the file and line: a malformed
// line (nodes "id x y z", elements "id n1 n2 n3 [n4] property 0 group", property 0 boundary or
// 2 evaluation), a repeated id, an unknown node, counts other than Main Parameters I's, a node
// in both a boundary and an evaluation element or in none, evaluation elements in more than one
// group, a quadrilateral boundary element (fmbem's elements are triangles), no boundary element;
// two BOUNDARY lines reaching one element (each element takes one condition here).
NumCalcMesh read_numcalc_mesh(const NumCalcInput& input);
// Every file the project reads (NC.inp, then its node and element files): no output may be one.
std::vector<std::string> numcalc_input_files(const NumCalcInput& input);

// NumCalc's pBoundary or vBoundary of one frequency step: the version line, the number of
// element groups, then for each group holding boundary elements (in order of first appearance)
// "group count" and "id re im" a boundary element ("%5d % E % E"). `values`: one per triangle of
// mesh.surface.
void write_numcalc_boundary(const std::string& path, const std::string& version_line,
                            const NumCalcMesh& mesh, std::span<const cplx> values);
// pEvalGrid: the version line, "    1", "group count", then "id re im" an evaluation node.
void write_numcalc_grid(const std::string& path, const std::string& version_line,
                        const NumCalcMesh& mesh, std::span<const cplx> values);
// vEvalGrid: the same head, then "id vx_re vx_im vy_re vy_im vz_re vz_im" an evaluation node
// ("%5d %E %E %E %E %E %E", NumCalc's). `velocity`: x, y, z of each node, 3 per node.
void write_numcalc_grid_velocity(const std::string& path, const std::string& version_line,
                                 const NumCalcMesh& mesh, std::span<const cplx> velocity);

}  // namespace fmbem::io
