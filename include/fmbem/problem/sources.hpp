#pragma once
#include <string>
#include <vector>

#include "fmbem/core/vec3.hpp"
#include "fmbem/problem/problem.hpp"

namespace fmbem {

// Several right-hand sides of one operator: plane-wave directions, point sources (incident, or
// the radiating monopole), and with `separate_groups` each excited surface group on its own (a
// head's two ears). Each source is solved apart; what they share is everything the operator
// depends on (the mesh, k, the formulation, each element's kind of condition and its
// admittance), so one set-up per k serves them all.
struct SourceList {
  std::vector<Vec3> directions;  // plane waves (scattering, or surface conditions' incident wave)
  std::vector<Vec3> positions;   // point sources: incident (outside) or radiating (inside)
  // Surface conditions: each class with a velocity or pressure (not a constant 0) its own
  // source, the others silenced, and each incident wave a source with every class silenced.
  // Otherwise the classes' data go with every incident wave (or are the one source).
  bool separate_groups = false;
  // Surface conditions: each set of classes its own source (a NumCalc project's sources, each
  // its ears' velocities), the classes of the other sets silenced; the incident wave and the
  // classes of no set in every source. With sets, the lists above are empty.
  std::vector<std::vector<std::size_t>> class_sets;
  std::vector<std::string> set_labels;
};

struct SourceCase {
  ProblemSpec spec;
  std::string label;  // "plane wave towards 1,0,0", "group 'left_ear' (velocity)", ...
};

// Whether the class's condition drives the field: a velocity or pressure that is not the
// constant 0 (a table counts, whatever its values).
bool is_excitation(const GroupCondition& condition);

// The run's sources from `base` (its kind, conditions, incident kind) and `list`, in the order:
// the incident waves or monopoles as listed, then (separate_groups) the excited classes in class
// order; with class_sets a source a set, in their order. A silenced velocity class becomes rigid
// and a silenced pressure class pressure 0: the same unknown and operator columns, no data. Throws
// fmbem::Error: separate_groups without surface conditions, or with nothing to solve for (no
// excited class and no incident wave). An empty list keeps base's one incident wave or monopole.
std::vector<SourceCase> source_cases(const ProblemSpec& base, const SourceList& list);

}  // namespace fmbem
