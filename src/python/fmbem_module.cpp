// fmbem._fmbem: the C++ side of the Python module (python/fmbem). A run is bem_solve's own
// (run_bem_solve) with the options set in PETSc's database and every solve handed back as
// arrays, so that Python gets the command line's numbers bit for bit; meshes from arrays are
// MemorySurface objects, read by their "memory:NAME" spec as a file would be, and field points
// from arrays MemoryFieldPoints objects, the -bem_field "memory:NAME".
#include <petscsys.h>
#include <pybind11/complex.h>
#include <pybind11/functional.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <charconv>
#include <cstdarg>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "fmbem/core/error.hpp"
#include "fmbem/io/field_points.hpp"
#include "fmbem/io/mesh_source.hpp"
#include "fmbem/mesh/mesh.hpp"
#include "fmbem/solver/bem_solve.hpp"
#include "fmbem/solver/solve_stages.hpp"

namespace py = pybind11;

// PETSc's own printer (libpetsc exports it; its headers do not declare it), which PetscVFPrintf
// points to until petsc4py replaces it.
extern "C" PetscErrorCode PetscVFPrintfDefault(FILE *, const char[], va_list);

namespace fmbem {
namespace {

// PETSc (and MPI, unless the program started it) initialised at the first run and finalised
// when the interpreter exits, unless petsc4py started it. PETSc's signal handlers stay off:
// Python's own handle Ctrl-C, which a run checks between solves.
bool petsc_started = false;

void start_petsc() {
  if (petsc_started) return;
  // petsc4py may have started PETSc already (fmbem.petsc()): then it also ends it.
  PetscBool already = PETSC_FALSE;
  PetscInitialized(&already);
  if (!already) {
    int argc = 2;
    char name[] = "fmbem", no_signals[] = "-no_signal_handler";
    char *args[] = {name, no_signals, nullptr};
    char **argv = args;
    if (PetscInitialize(&argc, &argv, nullptr, nullptr) != 0)
      throw Error("PETSc could not be initialised");
    // At the very end of the interpreter's finalisation, after the objects that hold PETSc's
    // (ours, petsc4py's) are gone: a finalised MPI may not be called again.
    Py_AtExit([] {
      PetscPopErrorHandler();
      PetscFinalize();
    });
  }
  // PETSc's errors come back as codes and become one exception, not a printed trace.
  PetscPushErrorHandler(PetscReturnErrorHandler, nullptr);
  petsc_started = true;
}

bool is_number(const std::string &text) {
  double value;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  return error == std::errc() && end == text.data() + text.size();
}

// The run's options as PETSc reads a command line: "-name [value]", a value being the next word
// unless that is another name (a negative number is a value).
void set_options(const std::vector<std::string> &words) {
  PetscOptionsClear(nullptr);
  for (std::size_t i = 0; i < words.size(); ++i) {
    const std::string &name = words[i];
    if (name.size() < 2 || name[0] != '-' || is_number(name))
      throw Error("option value '" + name + "' follows no option name (options are -name value)");
    const bool has_value =
        i + 1 < words.size() &&
        (words[i + 1].empty() || words[i + 1][0] != '-' || is_number(words[i + 1]));
    const char *value = has_value ? words[i + 1].c_str() : nullptr;
    if (PetscOptionsSetValue(nullptr, name.c_str(), value) != 0)
      throw Error("PETSc refused the option '" + name + "'");
    if (has_value) ++i;
  }
}

// `work` with the run's options set in PETSc's database, cleared after it whatever happens (the
// next run starts from none).
template <class Work>
void with_options(const std::vector<std::string> &words, Work &&work) {
  set_options(words);
  try {
    work();
  } catch (...) {
    PetscOptionsClear(nullptr);
    throw;
  }
  PetscOptionsClear(nullptr);
}

template <typename T>
py::array_t<T> to_array(const std::vector<T> &values) {
  return py::array_t<T>(py::ssize_t(values.size()), values.data());
}

py::dict columns_of(const std::vector<io::NamedColumn> &columns) {
  py::dict out;
  for (const io::NamedColumn &c : columns) out[py::str(c.name)] = to_array(c.values);
  return out;
}

py::dict record_to_dict(const SolveRecord &r) {
  py::dict d;
  d["k"] = r.row.k;
  d["k_index"] = r.k_index;
  d["frequency"] = r.row.frequency > 0 ? py::object(py::float_(r.row.frequency)) : py::none();
  d["source"] = r.row.source;
  d["source_label"] = r.source_label;
  d["solved"] = r.row.solved;
  d["reason"] = r.row.reason;
  d["refusal"] = r.refusal;
  d["iterations"] = r.row.iterations;
  d["residual"] = r.row.residual;
  d["setup_seconds"] = r.row.setup_seconds;
  d["solve_seconds"] = r.row.solve_seconds;
  d["error_max"] = r.row.has_error ? py::object(py::float_(r.row.error_max)) : py::none();
  d["error_relative_l2"] =
      r.row.has_error ? py::object(py::float_(r.row.error_relative_l2)) : py::none();
  d["unknown_name"] = r.unknown_name;
  d["unknown"] = to_array(r.unknown);
  py::dict surface;
  for (const io::CellField &c : r.surface) surface[py::str(c.name)] = to_array(c.values);
  d["surface"] = surface;
  d["field"] = columns_of(r.field);
  d["farfield"] = columns_of(r.farfield);
  return d;
}

// One run: `words` the command line's options (with -mesh), `on_solve` called with each solve's
// dict as it finishes (on this thread, the GIL held). Returns bem_solve's exit status (0 or 2);
// bad input raises fmbem.Error with the command line's message.
int run(const std::vector<std::string> &words, const py::function &on_solve) {
  start_petsc();
  int status = kExitSolved;
  PetscErrorCode ierr = 0;
  with_options(words, [&] {
    // PETSc's own printing to the process's standard output while the GIL is released: petsc4py,
    // once imported, routes PetscPrintf to Python's sys.stdout, which needs the GIL.
    struct DefaultPrinting {
      decltype(PetscVFPrintf) saved = PetscVFPrintf;
      DefaultPrinting() { PetscVFPrintf = PetscVFPrintfDefault; }
      ~DefaultPrinting() { PetscVFPrintf = saved; }
    } printing;
    py::gil_scoped_release release;
    const SolveRecordSink sink = [&](SolveRecord &&record) {
      py::gil_scoped_acquire acquire;
      // Ctrl-C (or a callback's exception) ends the run between solves.
      if (PyErr_CheckSignals() != 0) throw py::error_already_set();
      on_solve(record_to_dict(record));
    };
    try {
      ierr = run_bem_solve(PETSC_COMM_WORLD, &status, sink);
    } catch (...) {
      std::fflush(stdout);
      throw;
    }
    std::fflush(stdout);
  });
  if (ierr) throw Error(petsc_error_text(ierr));
  return status;
}

using PointArray = py::array_t<double, py::array::c_style | py::array::forcecast>;

// The rows of an (n, 3) array as points; `shape_error` the message for any other shape.
std::vector<Vec3> points_of(const PointArray &array, const char *shape_error) {
  if (array.ndim() != 2 || array.shape(1) != 3) throw Error(shape_error);
  std::vector<Vec3> points(std::size_t(array.shape(0)));
  const double *p = array.data();
  for (std::size_t i = 0; i < points.size(); ++i)
    points[i] = {p[3 * i], p[3 * i + 1], p[3 * i + 2]};
  return points;
}

// A surface from arrays, held in memory under `name` for as long as the Python object lives.
std::shared_ptr<io::MemorySurface> make_surface(
    const std::string &name, const PointArray &vertices,
    py::array_t<std::int64_t, py::array::c_style | py::array::forcecast> triangles,
    std::optional<py::array_t<std::int64_t, py::array::c_style | py::array::forcecast>> groups,
    const std::map<std::int64_t, std::string> &group_names) {
  Surface surface;
  surface.vertices = points_of(vertices, "vertices: expected an array of shape (n, 3)");
  if (triangles.ndim() != 2 || triangles.shape(1) != 3)
    throw Error("triangles: expected an array of shape (m, 3) of vertex indices");
  const std::size_t n = surface.vertices.size(), m = std::size_t(triangles.shape(0));
  const std::int64_t *t = triangles.data();
  for (std::size_t i = 0; i < m; ++i) {
    Triangle tri;
    for (std::size_t c = 0; c < 3; ++c) {
      const std::int64_t index = t[3 * i + c];
      if (index < 0 || std::uint64_t(index) >= n)
        throw Error("triangles: triangle " + std::to_string(i) + " names vertex " +
                    std::to_string(index) + ", outside 0.." + std::to_string(n) + " - 1");
      tri[c] = std::int32_t(index);
    }
    surface.triangles.push_back(tri);
  }
  if (groups) {
    if (groups->ndim() != 1 || std::size_t(groups->shape(0)) != m)
      throw Error("groups: expected one group tag per triangle (" + std::to_string(m) + ")");
    // The groups in the order of their tags; a tag <= 0 is no group.
    std::map<std::int64_t, std::int32_t> index_of;
    const std::int64_t *g = groups->data();
    for (std::size_t i = 0; i < m; ++i)
      if (g[i] > 0) index_of.emplace(g[i], 0);
    for (const auto &[tag, name] : group_names)
      if (!index_of.contains(tag))
        throw Error("group_names: no triangle has the group tag " + std::to_string(tag));
    for (auto &[tag, index] : index_of) {
      index = std::int32_t(surface.groups.size());
      const auto named = group_names.find(tag);
      surface.groups.push_back({named == group_names.end() ? "" : named->second, int(tag), 2});
    }
    for (std::size_t i = 0; i < m; ++i)
      surface.triangle_group.push_back(g[i] > 0 ? index_of.at(g[i]) : -1);
  } else if (!group_names.empty()) {
    throw Error("group_names given without groups (one tag per triangle)");
  }
  return std::make_shared<io::MemorySurface>(name, std::move(surface));
}

// Field points from an (m, 3) array, held in memory under `name` while the Python object lives.
std::shared_ptr<io::MemoryFieldPoints> make_field_points(const std::string &name,
                                                         const PointArray &points) {
  return std::make_shared<io::MemoryFieldPoints>(
      name, points_of(points, "field_points: expected an array of shape (m, 3)"));
}

template <typename T>
py::array_t<T> rows_of(const std::vector<T> &flat, std::size_t columns) {
  py::array_t<T> out({py::ssize_t(flat.size() / columns), py::ssize_t(columns)});
  std::copy(flat.begin(), flat.end(), out.mutable_data());
  return out;
}

// The mesh `spec` names as bem_solve reads and checks it: its arrays (vertices, triangles,
// centroids, normals, areas, each triangle's group tag or -1) and group names by tag.
py::dict load_mesh(const std::string &spec) {
  const Mesh mesh = io::load_mesh(spec);
  std::vector<double> vertices, centroids, normals;
  for (const Vec3 &p : mesh.vertices()) vertices.insert(vertices.end(), {p.x, p.y, p.z});
  for (const Vec3 &p : mesh.centroids()) centroids.insert(centroids.end(), {p.x, p.y, p.z});
  for (const Vec3 &p : mesh.normals()) normals.insert(normals.end(), {p.x, p.y, p.z});
  std::vector<std::int64_t> triangles, groups;
  for (const Triangle &t : mesh.triangles()) triangles.insert(triangles.end(), t.begin(), t.end());
  for (std::size_t e = 0; e < mesh.size(); ++e) {
    const std::int32_t g = mesh.element_groups().empty() ? -1 : mesh.element_groups()[e];
    groups.push_back(g < 0 ? -1 : mesh.groups()[std::size_t(g)].tag);
  }
  py::dict names;
  for (const SurfaceGroup &g : mesh.groups())
    if (g.dimension == 2) names[py::int_(g.tag)] = g.name;
  py::dict d;
  d["vertices"] = rows_of(vertices, 3);
  d["triangles"] = rows_of(triangles, 3);
  d["centroids"] = rows_of(centroids, 3);
  d["normals"] = rows_of(normals, 3);
  d["areas"] = to_array(mesh.areas());
  d["groups"] = to_array(groups);
  d["group_names"] = names;
  return d;
}

// petsc4py's object for a PETSc handle, through petsc4py's C API (the capsules import_petsc4py
// reads): it takes a reference of its own, so the object lives while either side holds it.
template <class Handle>
py::object petsc4py_object(const char *constructor, const char *signature, Handle handle) {
  py::module_ petsc;
  try {
    petsc = py::module_::import("petsc4py.PETSc");
  } catch (py::error_already_set &e) {
    throw Error(std::string("petsc4py is not importable (Debian: python3-petsc4py-complex): ") +
                e.what());
  }
  const py::dict api = petsc.attr("__pyx_capi__");
  const py::object capsule = api[constructor];
  void *function = PyCapsule_GetPointer(capsule.ptr(), signature);
  if (!function) throw py::error_already_set();
  PyObject *object = reinterpret_cast<PyObject *(*)(Handle)>(function)(handle);
  if (!object) throw py::error_already_set();
  return py::reinterpret_steal<py::object>(object);
}

// fmbem.Operator's core: an open run (shared by the operators of its sweep points) and the
// operator stage at one point, which lives as long as this object: the PETSc objects handed to
// petsc4py keep the Python object, and so this, alive (fmbem.Operator ties them). The run's
// options are set again whenever a stage is built (KSPSetFromOptions reads them), so that other
// runs between do not leak in.
class PythonOperator {
 public:
  // A new run and its stage at point `index`, from one setting of the options (so that the
  // options nothing read are refused).
  PythonOperator(std::vector<std::string> words, std::size_t index)
      : words_(std::move(words)), index_(index) {
    start_petsc();
    with_options(words_, [&] {
      run_ = std::make_shared<OpenRun>(PETSC_COMM_WORLD);
      stage_ = run_->operator_at(index);
    });
  }
  // The same run's stage at another point.
  PythonOperator at(std::size_t index) const {
    PythonOperator other(*this, index);
    with_options(words_, [&] { other.stage_ = other.run_->operator_at(index); });
    return other;
  }
  const std::vector<double> &wavenumbers() const { return run_->wavenumbers(); }
  std::size_t sources() const { return run_->sources(); }
  std::string source_label(std::size_t s) const { return run_->source_label(s); }
  std::size_t index() const { return index_; }
  py::object mat() { return petsc4py_object("PyPetscMat_New", "PyObject *(Mat)", stage_->A); }
  py::object ksp() { return petsc4py_object("PyPetscKSP_New", "PyObject *(KSP)", stage_->ksp); }
  py::object vector() {
    Vec v = run_->new_vector();
    py::object out = petsc4py_object("PyPetscVec_New", "PyObject *(Vec)", v);
    VecDestroy(&v);  // petsc4py holds its own reference
    return out;
  }
  py::object right_hand_side(std::size_t source) {
    Vec b = run_->new_vector();
    try {
      run_->right_hand_side(*stage_, index_, source, b);
    } catch (...) {
      VecDestroy(&b);
      throw;
    }
    py::object out = petsc4py_object("PyPetscVec_New", "PyObject *(Vec)", b);
    VecDestroy(&b);
    return out;
  }
  py::array_t<cplx> gather(const py::object &x) {
    // petsc4py's Vec: its handle is the PETSc object's address.
    const Vec v = reinterpret_cast<Vec>(x.attr("handle").cast<std::uintptr_t>());
    return to_array(run_->gather(v));
  }
  // The field and far field of source `source`'s solution x (a petsc4py Vec of the operator's
  // layout), as a solve's record gives them.
  py::dict field(std::size_t source, const py::object &x) {
    const Vec v = reinterpret_cast<Vec>(x.attr("handle").cast<std::uintptr_t>());
    const OpenRun::Field f = run_->field(index_, source, v);
    py::dict out;
    out["field"] = columns_of(f.field);
    out["farfield"] = columns_of(f.farfield);
    return out;
  }

 private:
  PythonOperator(const PythonOperator &other, std::size_t index)
      : words_(other.words_), run_(other.run_), index_(index) {}
  std::vector<std::string> words_;
  std::shared_ptr<OpenRun> run_;
  // Declared after the run, whose vectors it reads: destroyed first.
  std::unique_ptr<OperatorStage> stage_;
  std::size_t index_ = 0;
};

}  // namespace
}  // namespace fmbem

PYBIND11_MODULE(_fmbem, m) {
  m.doc() = "fmbem's C++ core (use the fmbem package)";
  m.attr("petsc_dir") = FMBEM_PETSC_DIR;
  py::register_exception<fmbem::Error>(m, "Error", PyExc_RuntimeError);
  py::class_<fmbem::io::MemorySurface, std::shared_ptr<fmbem::io::MemorySurface>>(m,
                                                                                  "MemorySurface")
      .def_property_readonly("spec", &fmbem::io::MemorySurface::spec)
      .def_property_readonly("name", &fmbem::io::MemorySurface::name);
  m.def("make_surface", &fmbem::make_surface, py::arg("name"), py::arg("vertices"),
        py::arg("triangles"), py::arg("groups") = py::none(),
        py::arg("group_names") = std::map<std::int64_t, std::string>{});
  py::class_<fmbem::io::MemoryFieldPoints, std::shared_ptr<fmbem::io::MemoryFieldPoints>>(
      m, "MemoryFieldPoints")
      .def_property_readonly("spec", &fmbem::io::MemoryFieldPoints::spec);
  m.def("make_field_points", &fmbem::make_field_points, py::arg("name"), py::arg("points"));
  m.def("load_mesh", &fmbem::load_mesh, py::arg("spec"));
  m.def("run", &fmbem::run, py::arg("words"), py::arg("on_solve"));
  py::class_<fmbem::PythonOperator>(m, "Operator")
      .def(py::init<std::vector<std::string>, std::size_t>(), py::arg("words"), py::arg("index"))
      .def("at", &fmbem::PythonOperator::at, py::arg("index"))
      .def_property_readonly("wavenumbers", &fmbem::PythonOperator::wavenumbers)
      .def_property_readonly("sources", &fmbem::PythonOperator::sources)
      .def_property_readonly("index", &fmbem::PythonOperator::index)
      .def("source_label", &fmbem::PythonOperator::source_label)
      .def("mat", &fmbem::PythonOperator::mat)
      .def("ksp", &fmbem::PythonOperator::ksp)
      .def("vector", &fmbem::PythonOperator::vector)
      .def("right_hand_side", &fmbem::PythonOperator::right_hand_side, py::arg("source"))
      .def("gather", &fmbem::PythonOperator::gather, py::arg("x"))
      .def("field", &fmbem::PythonOperator::field, py::arg("source"), py::arg("x"));
}
