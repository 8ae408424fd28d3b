#pragma once
#include <optional>
#include <string>

#include "fmbem/problem/surface_conditions.hpp"

namespace fmbem {

// A project file: the boundary conditions on the mesh's surface groups and the medium, in TOML
// (examples/box_groups_project/project.toml):
//
//   [medium]                 # optional; a key left out keeps Medium's default (air, 20 C)
//   sound_speed = 343.0      # m/s
//   density = 1.204          # kg/m^3
//
//   [default]                # elements in no group; omitted: rigid
//   condition = "admittance"
//   value = 0.3              # a number, [re, im], or table = "file.csv"
//
//   [[group]]                # one per group
//   name = "lid"             # or: tag = 1 (a Gmsh physical tag); not both
//   condition = "velocity"   # rigid, velocity, pressure, admittance, impedance
//   value = [1e-3, 0.0]      # none for rigid; else value or table, not both
//   table = "lid.csv"        # a FrequencyTable CSV, relative to this file's folder
//
// Units and meanings: surface_conditions.hpp. Strict: an unknown key or table anywhere, a wrong
// type, a value that is not finite, and each rule above broken is one fmbem::Error
// "<path>, line N: ..." (TOML syntax errors: "<path>, line N, column C: ..."). Tables are read
// here, once. Conditions are checked (check_condition); active ones are allowed
// (passivity_warnings).
struct Project {
  SurfaceConditions conditions;
  std::optional<Medium> medium;  // when the file has [medium]
  std::string path;
};

Project read_project_file(const std::string& path);

// Project files larger than this are refused before they are read.
inline constexpr std::size_t kMaxProjectFileBytes = std::size_t{1} << 20;

}  // namespace fmbem
