#pragma once
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "fmbem/bem/discretization.hpp"
#include "fmbem/field/field_evaluator.hpp"
#include "fmbem/field/problem_field.hpp"
#include "fmbem/io/field_points.hpp"
#include "fmbem/io/field_writer.hpp"
#include "fmbem/problem/problem.hpp"
#include "fmbem/solver/sweep.hpp"

namespace fmbem {

// -bem_field*, -bem_farfield*: the field off the surface and the far field that bem_solve
// evaluates after a successful solve.
struct FieldRequest {
  std::string points_file;                // -bem_field: a Gmsh .msh or a CSV of x,y,z
  std::optional<io::FieldPlane> plane;    // -bem_field_plane
  std::optional<io::FieldSphere> sphere;  // -bem_field_sphere
  std::string vtk_path, csv_path;         // -bem_field_vtk (.vtu, or .vts for a plane), _csv
  std::size_t farfield_directions = 0;    // -bem_farfield N (0: none)
  bool farfield_sphere = false;           // -bem_farfield_sphere: Fibonacci sphere, not a circle
  std::string farfield_csv;               // -bem_farfield_csv
  // -bem_field_reference: the field's points also get the reference pressure and the HRTF (the
  // total field over it) of a source as strong as the problem's at this centre
  // (field::reference_source).
  std::optional<Vec3> reference_center;
  // -bem_sofa: the HRTFs of every frequency and source (each a vibrating ear) at the field's
  // points, one SimpleFreeFieldHRTF file (io::write_sofa_hrtf); implies the reference.
  std::string sofa_path;
  // -bem_numcalc: the points are the project's evaluation grid (FieldStage::prepare gets them;
  // a project may have none).
  std::string numcalc_project;
  // -bem_field_velocity (and NumCalc's vEvalGrid): the particle velocity at the points,
  // v = grad p / (i omega rho) (exp(-i omega t)), rho and c the medium's: the problem's surface
  // data's where it has them, else this (-bem_sound_speed, -bem_density).
  bool velocity = false;
  Medium medium;
  bool field() const { return !points_file.empty() || plane || sphere || !numcalc_project.empty(); }
};

// bem_solve's field stage, on rank 0: prepare() before any work (the outputs' kinds checked,
// points read: bad input fails at once and leaves nothing behind; OutputPlan checks the paths),
// evaluate() after a successful solve (summary lines), fill() last (the files of a k handed to
// the caller's batch, which commits them with the k's other files).
class FieldStage {
 public:
  FieldStage();
  ~FieldStage();
  FieldStage(const FieldStage&) = delete;
  FieldStage& operator=(const FieldStage&) = delete;

  // Throws fmbem::Error: an output with the wrong extension (-bem_field_vtk: .vtu for points
  // from a file, .vts for a plane), a VTK output without VTK, a field file that is missing,
  // malformed or without points.
  // `given`: the points of a NumCalc project's evaluation grid (request.numcalc_project), read
  // by the caller; none (an empty grid) leaves the stage without field points.
  void prepare(const FieldRequest& request, const io::FieldPoints* given = nullptr);
  // Evaluates the field (FieldGeometry, built at the first call and kept for the next k of a
  // sweep: it does not depend on k; FieldEvaluator) and the far field of the solution;
  // returns the summary lines (without indentation), none when nothing was asked.
  // element_class: surface conditions' classes of disc's mesh (empty: the problem's own).
  std::vector<std::string> evaluate(const Problem& problem, const Discretization& disc,
                                    std::span<const cplx> solution,
                                    const field::FieldOptions& options,
                                    std::span<const std::int32_t> element_class = {});
  // The outputs of one solve (`at`: its sweep point and source; what the last evaluate gave),
  // each handed to add(path, option, writer) to be filled and committed by the caller.
  using AddOutput = std::function<void(const std::string& path, const std::string& option,
                                       const std::function<void(const std::string&)>& writer)>;
  void fill(const OutputIndex& at, const AddOutput& add) const;
  // What the last evaluate gave as the columns of -bem_field_csv's file (x, y, z first) and of
  // -bem_farfield_csv's (empty: not asked, or no evaluate yet).
  std::vector<io::NamedColumn> field_columns() const;
  std::vector<io::NamedColumn> farfield_columns() const;
  // The field's points, and what the last evaluate gave with -bem_field_reference: the HRTF at
  // each point and the reference source (empty / none otherwise).
  const std::vector<Vec3>& points() const { return points_.points; }
  // The total field at them from the last evaluate (NaN inside the body).
  const std::vector<cplx>& total() const { return total_; }
  // With the velocity asked: v at them (x, y, z, 3 per point; NaN on the surface and inside).
  const std::vector<cplx>& velocity() const { return velocity_; }
  const std::vector<cplx>& hrtf() const { return hrtf_; }
  const std::optional<field::ReferenceSource>& reference() const { return reference_; }
  // What prepare read (for -bem_field): its warnings, one sentence each.
  const std::vector<std::string>& warnings() const { return points_.warnings; }

 private:
  FieldRequest request_;
  io::FieldPoints points_;
  std::unique_ptr<field::FieldGeometry> geometry_;
  std::vector<cplx> hrtf_, total_, velocity_;
  std::optional<field::ReferenceSource> reference_;
  // What write() writes: the point arrays and the far-field table.
  struct Tables;
  std::unique_ptr<Tables> tables_;
};

}  // namespace fmbem
