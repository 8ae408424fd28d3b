#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "fmbem/core/vec3.hpp"
#include "fmbem/mesh/mesh.hpp"
#include "fmbem/problem/surface_conditions.hpp"

namespace fmbem {

// Boundary conditions on surface groups mapped to the elements of a mesh: each element belongs
// to one class, a class being one condition as the user gave it (a group's, or the default of
// the elements in no group). Independent of k: a class's data at a wavenumber are formed by
// class_data, so a sweep maps the groups once and reads no table again.
struct SurfaceData {
  std::vector<GroupCondition> classes;
  // For the summary and messages: "group 'left_ear' (tag 2)", "elements in no group".
  std::vector<std::string> labels;
  Medium medium;
};

struct ElementClasses {
  std::shared_ptr<const SurfaceData> data;
  std::vector<std::int32_t> element_class;  // per element of the mesh: an index into classes
};

// Maps `conditions` onto the mesh's groups (Mesh::groups, element_groups; a part of a mesh
// carries the whole list, so every rank forms the same classes). Throws fmbem::Error: a
// condition naming a group the mesh does not have (a mesh without groups, an icosphere, says
// so), a group of another dimension than 2 (a volume), two conditions reaching one group (by
// its name and its tag), an element in two groups (Mesh::group_overlap) when any condition
// names a group. Elements in no group with a condition take the default (rigid unless given);
// a group given no condition is such a group too.
ElementClasses assign_conditions(const Mesh& mesh, const SurfaceConditions& conditions,
                                 const Medium& medium);

// A class's data in the core's units at wavenumber k > 0 (frequency f = k c / (2 pi) for its
// tables): with u the pressure (Pa) and q = du/dn along the normal into the fluid, either
// u = value (pressure given: the unknown is q) or q = value + robin u (the unknown is u). From
// the momentum equation -i omega rho v = -grad p: q = i omega rho v_n = i k rho c v_n; a
// locally reacting surface of normalised admittance B (v into the surface = B p / (rho c))
// gives q = -i k B u, an impedance Z the same with B = 1 / Z.
struct ClassData {
  bool pressure_given = false;
  cplx value{}, robin{};
};
ClassData class_data(const GroupCondition& condition, double k, const Medium& medium,
                     const std::string& label);

// The frequency (Hz) of wavenumber k in the medium.
double frequency_of(double k, const Medium& medium);

}  // namespace fmbem
