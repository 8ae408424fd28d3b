#include "fmbem/solver/field_output.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <tuple>

#include "fmbem/core/error.hpp"
#include "fmbem/field/far_field.hpp"
#include "fmbem/field/problem_field.hpp"
#include "fmbem/io/field_writer.hpp"
#include "fmbem/io/vtk_writer.hpp"
#include "fmbem/solver/sweep.hpp"

namespace fmbem {
namespace {

// Levels below this (amplitudes under 1e-15 of the reference) are written as this: -inf would
// break colour maps and CSV readers alike.
constexpr double kFloorDecibels = -300.0;

double decibels(double amplitude) {
  if (std::isnan(amplitude)) return amplitude;
  return std::max(kFloorDecibels, 20.0 * std::log10(amplitude));
}

std::string format(const char* pattern, auto... values) {
  char text[512];
  std::snprintf(text, sizeof text, pattern, values...);
  return text;
}

bool ends_with(const std::string& s, const char* suffix) {
  const std::string tail(suffix);
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

template <class F>
std::vector<double> map(std::span<const cplx> values, F&& f) {
  std::vector<double> out(values.size());
  for (std::size_t i = 0; i < values.size(); ++i) out[i] = f(values[i]);
  return out;
}

void add_complex(std::vector<io::NamedColumn>& columns, const std::string& name,
                 std::span<const cplx> values) {
  columns.push_back({name + "_re", map(values, [](cplx v) { return v.real(); })});
  columns.push_back({name + "_im", map(values, [](cplx v) { return v.imag(); })});
  columns.push_back({name + "_abs", map(values, [](cplx v) { return std::abs(v); })});
}

}  // namespace

struct FieldStage::Tables {
  std::vector<io::NamedColumn> field, farfield;
};

FieldStage::FieldStage() = default;
FieldStage::~FieldStage() = default;

void FieldStage::prepare(const FieldRequest& request, const io::FieldPoints* given) {
  request_ = request;
  if (!request.vtk_path.empty()) {
    const char* extension = request.plane ? ".vts" : ".vtu";
    if (!ends_with(request.vtk_path, extension))
      throw Error("-bem_field_vtk '" + request.vtk_path + "': the field file must end in " +
                  extension +
                  (request.plane ? " (a structured grid, for -bem_field_plane)"
                                 : " (an unstructured grid, for -bem_field or -bem_field_sphere)") +
                  "; use -bem_field_csv for CSV");
    if (!io::vtk_available())
      throw Error("-bem_field_vtk '" + request.vtk_path +
                  "': this build has no VTK (FMBEM_WITH_VTK=OFF); use -bem_field_csv");
  }
  if (request.plane) {
    // What the field stage holds a point (geometry, close pairs, values, the output's arrays):
    // peak resident memory grew by 336 bytes a point from 9e4 to 1e6 points of a plane
    // (icosphere:2, CSV, 2026-12-01). A plane that cannot fit would fail only after the solve.
    constexpr double kFieldBytesPerPoint = 336.0;
    const double points = double(request.plane->count_a) * double(request.plane->count_b);
    const double need = points * kFieldBytesPerPoint;
    const double memory = double(::sysconf(_SC_PHYS_PAGES)) * double(::sysconf(_SC_PAGE_SIZE));
    if (memory > 0 && need > memory)
      throw Error(
          format("-bem_field_plane: %.4g points need about %.3g GB for the field (%.0f "
                 "bytes a point), more than this machine's %.3g GB of memory; use fewer "
                 "points, or several planes in several runs",
                 points, need / 1e9, kFieldBytesPerPoint, memory / 1e9));
    points_ = io::plane_points(*request.plane);
  } else if (request.sphere) {
    points_ = io::sphere_points(*request.sphere);
  } else if (!request.points_file.empty()) {
    points_ = io::read_field_points(request.points_file);
  } else if (given) {
    points_ = *given;
  }
}

std::vector<std::string> FieldStage::evaluate(const Problem& problem, const Discretization& disc,
                                              std::span<const cplx> solution,
                                              const field::FieldOptions& options,
                                              std::span<const std::int32_t> element_class) {
  using field::PointLocation;
  std::vector<std::string> lines;
  tables_ = std::make_unique<Tables>();
  hrtf_.clear();
  reference_.reset();
  const Mesh& mesh = disc.mesh();
  const ProblemSpec& spec = problem.spec();
  const bool scattering = spec.kind == ProblemKind::Scattering ||
                          (spec.kind == ProblemKind::Surface && spec.incident_wave);
  const field::SurfaceTraces traces = field::surface_traces(problem, mesh, solution, element_class);

  total_.clear();
  velocity_.clear();
  if (request_.field() && !points_.points.empty()) {
    const bool reused = geometry_ != nullptr;  // a sweep's later k
    if (!reused) geometry_ = std::make_unique<field::FieldGeometry>(disc, points_.points, options);
    const field::FieldGeometry& geometry = *geometry_;
    const std::size_t m = points_.points.size();
    const std::size_t outside = geometry.count(PointLocation::exterior),
                      surface = geometry.count(PointLocation::surface),
                      inside = geometry.count(PointLocation::interior);
    lines.push_back(format(
        "field           %s: %zu points, %zu outside, %zu on the surface, %zu "
        "inside the body%s (flagged, NaN); %zu close pairs",
        points_.description.c_str(), m, outside, surface, inside,
        disc.mesh().image_planes().empty() ? "" : " or its images or beyond a reflecting plane",
        geometry.close_pairs()));
    // The velocity needs omega > 0 (checked with the options; a sweep through k = 0 gives none
    // there).
    const bool velocity = request_.velocity && spec.k > 0.0;
    const field::FieldEvaluator evaluator(geometry, spec.k, velocity);
    const std::vector<cplx> incident = field::incident_field_at(problem, points_.points);
    const field::FieldValues values = evaluator.evaluate(traces.u, traces.q, incident);
    const field::FieldStatistics& stats = evaluator.statistics();
    // Outside the body every value must be finite (inside, NaN is the flag): anything else is a
    // defect, and is not written as if it were a field.
    std::size_t not_finite = 0, first = m;
    for (std::size_t i = 0; i < m; ++i)
      if (geometry.locations()[i] != PointLocation::interior &&
          !(std::isfinite(values.scattered[i].real()) &&
            std::isfinite(values.scattered[i].imag()))) {
        ++not_finite;
        first = std::min(first, i);
      }
    if (not_finite > 0)
      throw Error(
          format("the field is not finite at %zu of the points outside the body (the "
                 "first: point %zu, at %.17g, %.17g, %.17g); no field file is written "
                 "(a defect: please report it with the mesh and the points)",
                 not_finite, first + 1, points_.points[first].x, points_.points[first].y,
                 points_.points[first].z));
    lines.push_back(
        format("field times     inside/outside %.3f s%s, %s on %s: set-up %.3f s, "
               "sum %.3f s, close elements %.3f s",
               geometry.seconds(), reused ? " (at the first k, reused)" : "", stats.method.c_str(),
               stats.device.c_str(), stats.setup_seconds, stats.fmm_seconds, stats.near_seconds));
    if (!stats.note.empty()) lines.push_back("field note      " + stats.note);

    std::vector<io::NamedColumn>& columns = tables_->field;
    std::vector<double> location(m);
    for (std::size_t i = 0; i < m; ++i) location[i] = double(geometry.locations()[i]);
    columns.push_back({"location", std::move(location), true});
    const std::span<const cplx> scattered = values.scattered, total = values.total;
    total_.assign(total.begin(), total.end());
    if (scattering) {
      add_complex(columns, "scattered", scattered);
      add_complex(columns, "total", total);
    } else {
      add_complex(columns, "radiated", scattered);
    }
    if (velocity) {
      // -i omega rho v = -grad p: v = grad p / (i omega rho), grad p = grad u_s + grad u_inc.
      const Medium medium =
          spec.kind == ProblemKind::Surface ? spec.surface->medium : request_.medium;
      const double omega = spec.k * medium.sound_speed;
      const cplx per_gradient = 1.0 / cplx(0.0, omega * medium.density);
      const std::vector<cplx> incident_gradient =
          field::incident_gradient_at(problem, points_.points);
      velocity_.resize(3 * m);
      for (std::size_t c = 0; c < 3 * m; ++c)
        velocity_[c] = (values.scattered_gradient[c] +
                        (incident_gradient.empty() ? cplx(0.0) : incident_gradient[c])) *
                       per_gradient;
      const char* names[3] = {"velocity_x", "velocity_y", "velocity_z"};
      for (std::size_t a = 0; a < 3; ++a) {
        std::vector<double> re(m), im(m);
        for (std::size_t i = 0; i < m; ++i) {
          re[i] = velocity_[3 * i + a].real();
          im[i] = velocity_[3 * i + a].imag();
        }
        columns.push_back({std::string(names[a]) + "_re", std::move(re)});
        columns.push_back({std::string(names[a]) + "_im", std::move(im)});
      }
      std::vector<double> magnitude(m);
      for (std::size_t i = 0; i < m; ++i)
        magnitude[i] = std::sqrt(std::norm(velocity_[3 * i]) + std::norm(velocity_[3 * i + 1]) +
                                 std::norm(velocity_[3 * i + 2]));
      columns.push_back({"velocity_abs", std::move(magnitude)});
      lines.push_back(
          format("field velocity  v = grad p / (i omega rho), rho = %g kg/m^3, c = %g "
                 "m/s; NaN on the surface and inside",
                 medium.density, medium.sound_speed));
    }
    if (spec.kind == ProblemKind::Surface)  // Pa: the rms |p| / sqrt 2 re 20 uPa
      columns.push_back({"spl_dB", map(total, [](cplx v) {
                           return decibels(std::abs(v) / (std::sqrt(2.0) * 20e-6));
                         })});
    else
      columns.push_back({"spl_dB_re1", map(total, [](cplx v) { return decibels(std::abs(v)); })});
    if (request_.reference_center) {
      // The HRTF: the total field over the free-field pressure of the reference source.
      const Vec3 center = *request_.reference_center;
      const field::ReferenceSource source =
          field::reference_source(problem, mesh, element_class, center);
      const std::vector<cplx> reference =
          field::reference_pressure(problem, source, center, points_.points);
      std::vector<cplx> hrtf(m);
      for (std::size_t i = 0; i < m; ++i) hrtf[i] = total[i] / reference[i];
      lines.push_back("field reference " + source.description);
      columns.push_back({"reference_re", map(reference, [](cplx v) { return v.real(); })});
      columns.push_back({"reference_im", map(reference, [](cplx v) { return v.imag(); })});
      add_complex(columns, "hrtf", hrtf);
      columns.push_back({"hrtf_dB", map(hrtf, [](cplx v) { return decibels(std::abs(v)); })});
      hrtf_ = std::move(hrtf);
      reference_ = source;
    }
    if (const auto exact =
            field::exact_scattered_field(problem, mesh, points_.points, geometry.locations())) {
      const field::FieldError error = field::field_error(scattered, exact->values);
      lines.push_back("field exact     " + exact->name);
      if (error.count > 0 && std::isnan(error.relative_l2))  // a zero exact field
        lines.push_back(
            format("field error     max |u_s - exact| = %.3e over the %zu outside "
                   "points (the exact field is 0 there)",
                   error.max_abs, error.count));
      else if (error.count > 0)
        lines.push_back(
            format("field error     relative L2 = %.3e, max |u_s - exact| = %.3e over "
                   "the %zu outside points",
                   error.relative_l2, error.max_abs, error.count));
      columns.push_back({"exact_re", map(exact->values, [](cplx v) { return v.real(); })});
      columns.push_back({"exact_im", map(exact->values, [](cplx v) { return v.imag(); })});
      std::vector<double> error_abs(m);
      for (std::size_t i = 0; i < m; ++i) error_abs[i] = std::abs(scattered[i] - exact->values[i]);
      columns.push_back({"error_abs", std::move(error_abs)});
    } else {
      lines.push_back("field exact     none for this geometry and problem");
    }
  }

  if (request_.farfield_directions > 0) {
    const auto start = std::chrono::steady_clock::now();
    const field::FarFieldDirections dirs =
        request_.farfield_sphere ? field::fibonacci_sphere(request_.farfield_directions)
                                 : field::great_circle(request_.farfield_directions);
    const std::vector<cplx> far =
        field::far_field_amplitude(disc, spec.k, traces.u, traces.q, dirs.directions);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    // Target strength: the level of F per unit amplitude of the incident plane wave.
    const bool target_strength =
        scattering && spec.incident.kind == exact::Incident::Kind::PlaneWave;
    const std::string level = target_strength ? "TS_dB" : "level_dB";
    const double per_amplitude = target_strength ? 1.0 / std::abs(spec.incident.amplitude) : 1.0;
    const auto level_of = [per_amplitude](cplx v) { return decibels(std::abs(v) * per_amplitude); };
    double largest = 0.0;
    for (cplx f : far) largest = std::max(largest, std::abs(f));
    lines.push_back(
        format("farfield        %s, F(d) (u_s ~ F e^{ikr}/r) from the surface solution "
               "in %.3f s; max |F| = %.4g (%s %.2f)",
               dirs.description().c_str(), seconds, largest, target_strength ? "TS" : "level",
               decibels(largest * per_amplitude)));
    std::vector<io::NamedColumn>& columns = tables_->farfield;
    if (dirs.kind == field::FarFieldDirections::Kind::circle) {
      columns.push_back({"angle_deg", dirs.angle});
    } else {
      columns.push_back({"theta_deg", dirs.theta});
      columns.push_back({"phi_deg", dirs.phi});
    }
    const char* axes[3] = {"dx", "dy", "dz"};
    for (int d = 0; d < 3; ++d) {
      std::vector<double> component(dirs.directions.size());
      for (std::size_t i = 0; i < component.size(); ++i)
        component[i] = d == 0   ? dirs.directions[i].x
                       : d == 1 ? dirs.directions[i].y
                                : dirs.directions[i].z;
      columns.push_back({axes[d], std::move(component)});
    }
    add_complex(columns, "F", far);
    columns.push_back({level, map(far, level_of)});
    if (const auto exact = field::exact_far_field(problem, mesh, dirs.directions)) {
      const field::FieldError error = field::field_error(far, *exact);
      double level_difference = 0.0;
      for (std::size_t i = 0; i < far.size(); ++i)
        level_difference = std::max(level_difference, std::abs(decibels(std::abs(far[i])) -
                                                               decibels(std::abs((*exact)[i]))));
      lines.push_back(format(
          "farfield error  relative L2 = %.3e, max |F - exact| = %.3e, "
          "largest %s difference %.3f dB",
          error.relative_l2, error.max_abs, target_strength ? "TS" : "level", level_difference));
      columns.push_back({"exact_re", map(*exact, [](cplx v) { return v.real(); })});
      columns.push_back({"exact_im", map(*exact, [](cplx v) { return v.imag(); })});
      columns.push_back({"exact_" + level, map(*exact, level_of)});
    }
  }
  return lines;
}

std::vector<io::NamedColumn> FieldStage::field_columns() const {
  if (!tables_ || tables_->field.empty()) return {};
  return io::field_table(points_, tables_->field);
}

std::vector<io::NamedColumn> FieldStage::farfield_columns() const {
  return tables_ ? tables_->farfield : std::vector<io::NamedColumn>{};
}

void FieldStage::fill(const OutputIndex& at, const AddOutput& add) const {
  if (!tables_) return;
  if (!request_.vtk_path.empty())
    add(sweep_output_path(request_.vtk_path, at), "-bem_field_vtk",
        [&](const std::string& path) { io::write_field_vtk(path, points_, tables_->field); });
  if (!request_.csv_path.empty())
    add(sweep_output_path(request_.csv_path, at), "-bem_field_csv",
        [&](const std::string& path) { io::write_field_csv(path, points_, tables_->field); });
  if (!request_.farfield_csv.empty())
    add(sweep_output_path(request_.farfield_csv, at), "-bem_farfield_csv",
        [&](const std::string& path) { io::write_table_csv(path, tables_->farfield); });
}

}  // namespace fmbem
