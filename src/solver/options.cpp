#include "fmbem/solver/options.hpp"

#include <cmath>

#include "fmbem/core/error.hpp"

namespace fmbem {
namespace {

Vec3 to_vec3(const PetscReal v[3]) { return {double(v[0]), double(v[1]), double(v[2])}; }

std::string choose(const char* option, const std::string& value,
                   std::initializer_list<const char*> allowed) {
  std::string list;
  for (const char* a : allowed) {
    if (value == a) return value;
    list += std::string(list.empty() ? "" : ", ") + a;
  }
  throw Error(std::string(option) + " " + value + " is not known (choose " + list + ")");
}

}  // namespace

PetscErrorCode read_solve_options(MPI_Comm comm, SolveOptions* opt) {
  char text[PETSC_MAX_PATH_LEN] = "";
  PetscBool set = PETSC_FALSE;
  PetscReal k = 1.0;
  char problem[64] = "scattering", bc[64] = "neumann", incident[64] = "planewave",
       backend[64] = "fmm", kernel[64] = "helmholtz";
  PetscReal direction[3] = {0, 0, 1}, source[3] = {0, 0, 0};
  PetscInt n_direction = 3, n_source = 3;
  PetscBool source_set = PETSC_FALSE, direction_set = PETSC_FALSE;
  PetscInt quad = 3, angular = opt->near.angular_points;
  PetscReal near_factor = opt->near.near_factor;
  char vtu[PETSC_MAX_PATH_LEN] = "", csv[PETSC_MAX_PATH_LEN] = "";
  PetscInt fmm_p = opt->fmm.order, max_leaf = opt->fmm.max_leaf;
  PetscReal fmm_eps = opt->fmm.tolerance;
  PetscBool fmm_view = PETSC_FALSE;

  PetscOptionsBegin(comm, nullptr, "fmbem boundary element solver options", "BEM");
  PetscCall(PetscOptionsString("-mesh", "Gmsh .msh file, or icosphere:L[:R] (20*4^L triangles)", "",
                               text, text, sizeof(text), &set));
  PetscCall(PetscOptionsReal("-k", "Wavenumber (0: Laplace)", "", k, &k, nullptr));
  PetscCall(PetscOptionsString("-kernel", "helmholtz, or laplace (same as -k 0)", "", kernel,
                               kernel, sizeof(kernel), nullptr));
  PetscCall(PetscOptionsString("-bem_problem", "scattering or radiation", "", problem, problem,
                               sizeof(problem), nullptr));
  PetscCall(PetscOptionsString("-bem_bc", "neumann (rigid) or dirichlet (soft)", "", bc, bc,
                               sizeof(bc), nullptr));
  PetscCall(PetscOptionsString("-bem_incident", "planewave or pointsource", "", incident, incident,
                               sizeof(incident), nullptr));
  PetscCall(PetscOptionsRealArray("-bem_incident_dir", "Plane wave direction x,y,z", "", direction,
                                  &n_direction, &direction_set));
  PetscCall(PetscOptionsRealArray("-bem_source",
                                  "Point source x,y,z (outside the body for "
                                  "scattering, inside for radiation; default: box centre)",
                                  "", source, &n_source, &source_set));
  PetscCall(PetscOptionsInt("-bem_quad_order", "Gauss points per triangle: 1, 3, 6 or 7", "", quad,
                            &quad, nullptr));
  PetscCall(PetscOptionsReal("-bem_near_factor",
                             "Close pair: centroid distance < factor * element radius", "",
                             near_factor, &near_factor, nullptr));
  PetscCall(PetscOptionsInt("-bem_near_quad", "Angular Gauss points of the accurate integrals", "",
                            angular, &angular, nullptr));
  PetscCall(PetscOptionsString("-bem_operator", "fmm (fast multipole) or direct (O(N^2) reference)",
                               "", backend, backend, sizeof(backend), nullptr));
  PetscCall(PetscOptionsInt("-fmm_p",
                            "FMM expansion order p (degrees 0..p-1); 0: chosen from -fmm_eps", "",
                            fmm_p, &fmm_p, nullptr));
  PetscCall(PetscOptionsReal("-fmm_eps", "FMM relative MatMult accuracy (sets p unless -fmm_p)", "",
                             fmm_eps, &fmm_eps, nullptr));
  PetscCall(PetscOptionsInt("-fmm_max_leaf", "FMM octree: a cell splits above this many elements",
                            "", max_leaf, &max_leaf, nullptr));
  PetscCall(PetscOptionsBool("-fmm_view", "Print the FMM tree, order and memory", "", fmm_view,
                             &fmm_view, nullptr));
  PetscCall(PetscOptionsString("-o", "Write the solution to this .vtu file", "", vtu, vtu,
                               sizeof(vtu), nullptr));
  PetscCall(PetscOptionsString("-bem_csv", "Write x,y,z,re,im per element to this file", "", csv,
                               csv, sizeof(csv), nullptr));
  PetscOptionsEnd();

  opt->mesh = text;
  if (!std::isfinite(double(k)) || k < 0) throw Error("-k must be a finite number >= 0");
  if (choose("-kernel", kernel, {"helmholtz", "laplace"}) == "laplace") k = 0;
  opt->problem.k = double(k);
  opt->problem.kind = choose("-bem_problem", problem, {"scattering", "radiation"}) == "scattering"
                          ? ProblemKind::Scattering
                          : ProblemKind::Radiation;
  opt->problem.bc = choose("-bem_bc", bc, {"neumann", "dirichlet"}) == "neumann"
                        ? BoundaryCondition::Neumann
                        : BoundaryCondition::Dirichlet;
  opt->problem.incident.kind =
      choose("-bem_incident", incident, {"planewave", "pointsource"}) == "planewave"
          ? exact::Incident::Kind::PlaneWave
          : exact::Incident::Kind::PointSource;
  if (direction_set && n_direction != 3) throw Error("-bem_incident_dir needs three numbers x,y,z");
  if (source_set && n_source != 3) throw Error("-bem_source needs three numbers x,y,z");
  opt->problem.incident.direction = to_vec3(direction);
  if (opt->problem.incident.kind == exact::Incident::Kind::PointSource && !source_set &&
      opt->problem.kind == ProblemKind::Scattering)
    throw Error("-bem_incident pointsource needs -bem_source x,y,z (outside the body)");
  opt->problem.incident.source = to_vec3(source);
  opt->problem.source = to_vec3(source);
  opt->source_given = source_set == PETSC_TRUE;
  opt->quadrature_points = int(quad);
  opt->near.near_factor = double(near_factor);
  opt->near.angular_points = int(angular);
  opt->operator_backend = choose("-bem_operator", backend, {"fmm", "direct"});
  if (fmm_p < 0 || fmm_p > fmm::max_degree)
    throw Error("-fmm_p must lie in 1.." + std::to_string(fmm::max_degree) +
                " (or 0 to choose it from -fmm_eps)");
  if (!(fmm_eps > 0 && fmm_eps < 1)) throw Error("-fmm_eps must lie strictly between 0 and 1");
  if (max_leaf < 1) throw Error("-fmm_max_leaf must be at least 1");
  opt->fmm.order = int(fmm_p);
  opt->fmm.tolerance = double(fmm_eps);
  opt->fmm.max_leaf = int(max_leaf);
  opt->fmm_view = fmm_view == PETSC_TRUE;
  opt->vtu_path = vtu;
  opt->csv_path = csv;
  if (opt->mesh.empty()) throw Error("no mesh: give -mesh FILE.msh or -mesh icosphere:L[:R]");
  return 0;
}

}  // namespace fmbem
