#include "fmbem/problem/problem.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numbers>
#include <span>
#include <sstream>

#include "fmbem/bem/distributed_mesh.hpp"
#include "fmbem/core/error.hpp"
#include "fmbem/exact/sphere.hpp"

namespace fmbem {
namespace {

std::string format_number(double x) {
  std::ostringstream s;
  s << x;
  return s.str();
}

std::string format_point(const Vec3 &p) {
  std::ostringstream s;
  s << p.x << "," << p.y << "," << p.z;
  return s.str();
}

// A source closer to the surface than this fraction of the nearest element's
// size lies on it for our purposes: the incident data at the nearest
// collocation point is then wrong by orders of magnitude.
constexpr double kOnSurfaceFraction = 0.01;
// Closer than this fraction, one element cannot resolve the source's field.
constexpr double kUnresolvedFraction = 0.5;

// Refuses a source on the surface, warns about one too close to it (`near`: its distance).
void check_source_clearance(const SurfaceDistance &near, const Vec3 &source,
                            const std::string &what, std::vector<std::string> &warnings) {
  const std::string where = what + " " + format_point(source);
  const std::string distances = "distance " + format_number(near.distance) +
                                ", nearest element size " + format_number(near.element_size);
  if (near.distance < kOnSurfaceFraction * near.element_size)
    throw Error(where + " lies on the surface (" + distances + "): move it off the surface");
  if (near.distance < kUnresolvedFraction * near.element_size)
    warnings.push_back(where + " is closer to the surface than half an element (" + distances +
                       "): the elements cannot resolve its field there; refine the mesh or "
                       "move the source");
}

// The spec's point source: the incident one (scattering) or the monopole (radiation).
std::optional<Vec3> source_of(const ProblemSpec &spec) {
  if (spec.kind == ProblemKind::Radiation) return spec.source;
  if (spec.incident.kind == exact::Incident::Kind::PointSource) return spec.incident.source;
  return std::nullopt;
}

}  // namespace

// Ericson, Real-Time Collision Detection 5.1.5.
Vec3 closest_point_on_triangle(const Vec3 &x, const Vec3 &a, const Vec3 &b, const Vec3 &c) {
  const Vec3 ab = b - a, ac = c - a, ax = x - a;
  const double d1 = dot(ab, ax), d2 = dot(ac, ax);
  if (d1 <= 0 && d2 <= 0) return a;
  const Vec3 bx = x - b;
  const double d3 = dot(ab, bx), d4 = dot(ac, bx);
  if (d3 >= 0 && d4 <= d3) return b;
  const double vc = d1 * d4 - d3 * d2;
  if (vc <= 0 && d1 >= 0 && d3 <= 0) return a + ab * (d1 / (d1 - d3));
  const Vec3 cx = x - c;
  const double d5 = dot(ab, cx), d6 = dot(ac, cx);
  if (d6 >= 0 && d5 <= d6) return c;
  const double vb = d5 * d2 - d1 * d6;
  if (vb <= 0 && d2 >= 0 && d6 <= 0) return a + ac * (d2 / (d2 - d6));
  const double va = d3 * d6 - d5 * d4;
  if (va <= 0 && (d4 - d3) >= 0 && (d5 - d6) >= 0)
    return b + (c - b) * ((d4 - d3) / ((d4 - d3) + (d5 - d6)));
  const double denom = 1.0 / (va + vb + vc);
  return a + ab * (vb * denom) + ac * (vc * denom);
}

namespace {

// The nearest of elements [0, count) to x (the first of equals), corner(e, c) giving corners.
template <class Corner>
SurfaceDistance nearest_element(std::size_t count, Corner &&corner, const Vec3 &x) {
  SurfaceDistance nearest{INFINITY, 0.0};
  for (std::size_t e = 0; e < count; ++e) {
    const Vec3 &a = corner(e, 0), &b = corner(e, 1), &c = corner(e, 2);
    const double d = norm(x - closest_point_on_triangle(x, a, b, c));
    if (d < nearest.distance) nearest = {d, std::max({norm(b - a), norm(c - b), norm(a - c)})};
  }
  return nearest;
}

// The solid angles of elements [0, count) seen from x, summed in element order: Van Oosterom &
// Strackee's formula.
template <class Corner>
double solid_angle_sum(std::size_t count, Corner &&corner, const Vec3 &x) {
  double total = 0.0;
  for (std::size_t e = 0; e < count; ++e) {
    const Vec3 a = corner(e, 0) - x, b = corner(e, 1) - x, c = corner(e, 2) - x;
    const double la = norm(a), lb = norm(b), lc = norm(c);
    total += 2.0 * std::atan2(dot(a, cross(b, c)),
                              la * lb * lc + dot(a, b) * lc + dot(a, c) * lb + dot(b, c) * la);
  }
  return total;
}

// The sphere fit of vertices held in pieces (a rank's each, issue 13): sum(values) sums a
// rank's partial sums over every piece in place, extremes(low, high) takes the smallest low and
// the largest high. With one piece (both doing nothing) the whole mesh's fit.
template <class Sum, class Extremes>
std::optional<SphereFit> fit_sphere_of(std::span<const Vec3> vs, Sum &&sum, Extremes &&extremes) {
  // Linear least squares for |v|^2 = 2 c.v + (R^2 - |c|^2), about the vertex
  // mean for conditioning; then every vertex must lie at R to 1e-6.
  double count_and_sum[4] = {double(vs.size()), 0.0, 0.0, 0.0};
  {
    Vec3 total{};
    for (const Vec3 &v : vs) total += v;
    count_and_sum[1] = total.x;
    count_and_sum[2] = total.y;
    count_and_sum[3] = total.z;
  }
  sum(std::span<double>(count_and_sum));
  if (count_and_sum[0] < 12) return std::nullopt;
  Vec3 mean{count_and_sum[1], count_and_sum[2], count_and_sum[3]};
  mean *= 1.0 / count_and_sum[0];
  // And in units of the body's size: the unknowns c and R^2 - |c|^2 mix lengths with their
  // squares, so at radius 1e-25 the column of ones would dwarf the others and partial pivoting
  // would pick rounding for a pivot.
  double scale = 0.0, unused = 0.0;
  for (const Vec3 &w : vs) {
    const Vec3 v = w - mean;
    scale = std::max({scale, std::abs(v.x), std::abs(v.y), std::abs(v.z)});
  }
  extremes(unused, scale);
  if (!(scale > 0.0)) return std::nullopt;
  double ata[4][4] = {}, atb[4] = {};
  for (const Vec3 &w : vs) {
    const Vec3 v = (w - mean) * (1.0 / scale);
    const double row[4] = {2 * v.x, 2 * v.y, 2 * v.z, 1.0}, rhs = dot(v, v);
    for (int i = 0; i < 4; ++i) {
      atb[i] += row[i] * rhs;
      for (int j = 0; j < 4; ++j) ata[i][j] += row[i] * row[j];
    }
  }
  sum(std::span<double>(&ata[0][0], 16));
  sum(std::span<double>(atb, 4));
  // Gaussian elimination with partial pivoting on the 4x4 normal equations.
  for (int c = 0; c < 4; ++c) {
    int pivot = c;
    for (int r = c + 1; r < 4; ++r)
      if (std::abs(ata[r][c]) > std::abs(ata[pivot][c])) pivot = r;
    if (std::abs(ata[pivot][c]) < 1e-300) return std::nullopt;
    std::swap(ata[c], ata[pivot]);
    std::swap(atb[c], atb[pivot]);
    for (int r = c + 1; r < 4; ++r) {
      const double f = ata[r][c] / ata[c][c];
      for (int j = c; j < 4; ++j) ata[r][j] -= f * ata[c][j];
      atb[r] -= f * atb[c];
    }
  }
  double sol[4];
  for (int r = 3; r >= 0; --r) {
    double s = atb[r];
    for (int j = r + 1; j < 4; ++j) s -= ata[r][j] * sol[j];
    sol[r] = s / ata[r][r];
  }
  const Vec3 center = mean + Vec3{sol[0], sol[1], sol[2]} * scale;
  double r_min = INFINITY, r_max = 0.0;
  for (const Vec3 &v : vs) {
    r_min = std::min(r_min, norm(v - center));
    r_max = std::max(r_max, norm(v - center));
  }
  extremes(r_min, r_max);
  if (r_max - r_min > 1e-6 * r_max) return std::nullopt;
  return SphereFit{center, 0.5 * (r_min + r_max)};
}

}  // namespace

SurfaceDistance distance_to_surface(const Mesh &mesh, const Vec3 &x) {
  return nearest_element(
      mesh.size(), [&](std::size_t e, int c) -> const Vec3 & { return mesh.corner(e, c); }, x);
}

std::optional<SphereFit> fit_sphere(const Mesh &mesh) {
  return fit_sphere_of(
      mesh.vertices(), [](std::span<double>) {}, [](double &, double &) {});
}

double winding_number(const Mesh &mesh, const Vec3 &x) {
  return solid_angle_sum(
             mesh.size(), [&](std::size_t e, int c) -> const Vec3 & { return mesh.corner(e, c); },
             x) /
         (4.0 * std::numbers::pi);
}

ErrorSums error_sums(const Mesh &mesh, RowRange rows, std::span<const cplx> solution,
                     std::span<const cplx> exact) {
  ErrorSums sums;
  for (std::size_t e = rows.begin; e < rows.end; ++e) {
    const double diff = std::abs(solution[e - rows.begin] - exact[e - rows.begin]);
    sums.max_abs = std::max(sums.max_abs, diff);
    sums.error2 += mesh.areas()[e] * diff * diff;
    sums.exact2 += mesh.areas()[e] * std::norm(exact[e - rows.begin]);
  }
  return sums;
}

ErrorNorms error_norms(const ErrorSums &sums) {
  return {sums.max_abs, std::sqrt(sums.error2 / sums.exact2)};
}

const char *formulation_name(Formulation formulation) {
  return formulation == Formulation::BurtonMiller ? "bm" : "cbie";
}

cplx default_bm_alpha(double k) { return cplx(0.0, 1.0 / k); }

SurfaceFacts surface_facts(const Mesh &mesh, const ProblemSpec &spec) {
  if (mesh.is_part()) throw Error("the surface's facts need the whole mesh, not a part of it");
  SurfaceFacts facts;
  if (const auto sphere = fit_sphere(mesh)) {
    facts.is_sphere = true;
    facts.sphere = *sphere;
  }
  if (const auto source = source_of(spec)) {
    facts.has_source = true;
    facts.source_distance = distance_to_surface(mesh, *source);
    facts.source_winding = winding_number(mesh, *source);
  }
  return facts;
}

SurfaceFacts surface_facts(MPI_Comm comm, const MeshSlab &slab, const ProblemSpec &spec) {
  int size = 1;
  MPI_Comm_size(comm, &size);
  // Each rank's partial values gathered on every rank and combined in rank order: the same bits
  // on every rank, whatever MPI's reduction order.
  const auto sum = [&](std::span<double> values) {
    std::vector<double> all(values.size() * std::size_t(size));
    MPI_Allgather(values.data(), int(values.size()), MPI_DOUBLE, all.data(), int(values.size()),
                  MPI_DOUBLE, comm);
    for (std::size_t i = 0; i < values.size(); ++i) {
      values[i] = 0.0;
      for (int r = 0; r < size; ++r) values[i] += all[std::size_t(r) * values.size() + i];
    }
  };
  const auto extremes = [&](double &low, double &high) {
    MPI_Allreduce(MPI_IN_PLACE, &low, 1, MPI_DOUBLE, MPI_MIN, comm);
    MPI_Allreduce(MPI_IN_PLACE, &high, 1, MPI_DOUBLE, MPI_MAX, comm);
  };
  SurfaceFacts facts;
  if (const auto sphere = fit_sphere_of(slab_vertex_block(comm, slab), sum, extremes)) {
    facts.is_sphere = true;
    facts.sphere = *sphere;
  }
  if (const auto source = source_of(spec)) {
    facts.has_source = true;
    const auto corner = [&](std::size_t e, int c) -> const Vec3 & {
      return slab.corners[3 * e + std::size_t(c)];
    };
    // The first nearest in rank order is the whole mesh's first nearest: the slabs are in order.
    const SurfaceDistance own = nearest_element(slab.size(), corner, *source);
    std::vector<SurfaceDistance> nearest(static_cast<std::size_t>(size));
    static_assert(sizeof(SurfaceDistance) == 2 * sizeof(double));
    MPI_Allgather(&own, 2, MPI_DOUBLE, nearest.data(), 2, MPI_DOUBLE, comm);
    facts.source_distance = nearest.front();
    for (const SurfaceDistance &d : nearest)
      if (d.distance < facts.source_distance.distance) facts.source_distance = d;
    double angle = solid_angle_sum(slab.size(), corner, *source);
    sum(std::span<double>(&angle, 1));
    facts.source_winding = angle / (4.0 * std::numbers::pi);
  }
  return facts;
}

Problem::Problem(const Mesh &mesh, const ProblemSpec &spec, std::optional<RowRange> exact_rows,
                 const SurfaceFacts *whole)
    : mesh_(&mesh), spec_(spec), exact_rows_(exact_rows.value_or(RowRange{0, mesh.size()})) {
  if (exact_rows_.begin > exact_rows_.end || exact_rows_.end > mesh.size())
    throw Error("the exact solution's rows run past the mesh's elements");
  if (!std::isfinite(spec.k) || spec.k < 0.0)
    throw Error("the wavenumber k must be finite and >= 0 (k = 0 is Laplace)");
  if (spec.formulation == Formulation::BurtonMiller) {
    if (spec.k == 0.0)
      throw Error(
          "the Burton-Miller formulation needs k > 0 (Laplace has no fictitious frequencies: use "
          "-bem_formulation cbie)");
    coupling_ = spec.bm_alpha == cplx(0.0) ? default_bm_alpha(spec.k) : spec.bm_alpha;
    if (!std::isfinite(coupling_.real()) || !std::isfinite(coupling_.imag()) ||
        coupling_.imag() == 0.0)
      throw Error(
          "the Burton-Miller coupling alpha must be finite with a non-zero imaginary part (a real "
          "alpha does not remove the fictitious frequencies; the default is i/k)");
  } else if (spec.bm_alpha != cplx(0.0)) {
    throw Error(
        "-bem_bm_alpha applies to the Burton-Miller formulation only (-bem_formulation bm)");
  }
  if (whole == nullptr && mesh.is_part())
    throw Error("a problem on a part of the mesh needs the whole surface's facts");
  const SurfaceFacts facts = whole ? *whole : surface_facts(mesh, spec);
  if (facts.has_source != source_of(spec).has_value())
    throw Error("the surface's facts were formed for another problem's source");
  const std::size_t first = exact_rows_.begin, rows = exact_rows_.size();
  const auto &x = mesh.centroids();
  const auto &normals = mesh.normals();

  if (spec.kind == ProblemKind::Scattering) {
    if (spec.incident.kind == exact::Incident::Kind::PointSource) {
      check_source_clearance(facts.source_distance, spec.incident.source,
                             "the incident point source", warnings_);
      if (std::abs(facts.source_winding) > 0.5)
        throw Error("the incident point source " + format_point(spec.incident.source) +
                    " must lie outside the body");
    }
    if (spec.incident.kind == exact::Incident::Kind::PlaneWave &&
        norm(spec.incident.direction) == 0)
      throw Error("the incident direction must be a non-zero vector");
    if (facts.is_sphere) {
      const SphereFit *sphere = &facts.sphere;
      const exact::SphereScattering mie(spec.k, sphere->radius, sphere->center,
                                        spec.bc == BoundaryCondition::Neumann
                                            ? exact::SphereBoundary::Rigid
                                            : exact::SphereBoundary::Soft,
                                        spec.incident);
      std::vector<cplx> values(rows);
#pragma omp parallel for schedule(static)
      for (std::size_t i = 0; i < rows; ++i) values[i] = mie.surface_value(x[first + i]);
      exact_ = std::move(values);
      exact_name_ = std::string(spec.bc == BoundaryCondition::Neumann ? "rigid" : "soft") +
                    " sphere " + (spec.k > 0 ? "Mie series" : "Laplace series") + " (" +
                    std::to_string(mie.terms()) + " terms)";
    }
  } else {
    check_source_clearance(facts.source_distance, spec.source, "the radiation source", warnings_);
    if (facts.source_winding < 0.5)
      throw Error("the radiation source " + format_point(spec.source) +
                  " must lie inside the body (use -bem_source x,y,z)");
    std::vector<cplx> values(rows);
    for (std::size_t i = 0; i < rows; ++i) {
      const std::size_t e = first + i;
      values[i] = spec.bc == BoundaryCondition::Neumann
                      ? exact::monopole(spec.k, spec.source, x[e])
                      : exact::monopole_normal_derivative(spec.k, spec.source, x[e], normals[e]);
    }
    exact_ = std::move(values);
    exact_name_ = "monopole at " + format_point(spec.source);
  }
}

OperatorCoefficients Problem::coefficients() const {
  // The layers carry alpha D' and alpha N; only the identity's share is added here: the
  // Dirichlet equation's alpha (1/2) q (the jump of the single layer's normal derivative).
  if (spec_.bc == BoundaryCondition::Neumann) return {0.5, -1.0, 0.0};
  return {0.5 * coupling_, 0.0, 1.0};
}

std::vector<cplx> Problem::right_hand_side(const LayerPotentials &layers) const {
  if (layers.coupling() != coupling_)
    throw Error("right-hand side: the layer potentials' coupling is not the problem's");
  const RowRange rows = layers.rows();
  const auto &x = mesh_->centroids();
  std::vector<cplx> f(rows.size());
  if (spec_.kind == ProblemKind::Scattering) {
    for (std::size_t i = rows.begin; i < rows.end; ++i) {
      f[i - rows.begin] = exact::incident_field(spec_.k, spec_.incident, x[i]);
      if (coupling_ != cplx(0.0))
        f[i - rows.begin] += coupling_ * exact::incident_normal_derivative(
                                             spec_.k, spec_.incident, x[i], mesh_->normals()[i]);
    }
    return f;
  }
  // Radiation: the monopole's boundary data on every element the layers read (their columns),
  // then the layer operator the known half of the BIE needs.
  const std::vector<cplx> data = column_density(layers, [&](std::size_t e) -> cplx {
    return spec_.bc == BoundaryCondition::Neumann
               ? -exact::monopole_normal_derivative(spec_.k, spec_.source, x[e],
                                                    mesh_->normals()[e])  // -S q
               : exact::monopole(spec_.k, spec_.source, x[e]);            // D u - u/2
  });
  const std::size_t first = layers.first_row_column();
  if (spec_.bc == BoundaryCondition::Neumann) {
    layers.apply({}, data, f);
    if (coupling_ != cplx(0.0))  // -(alpha/2) q_s
      for (std::size_t r = 0; r < rows.size(); ++r) f[r] += 0.5 * coupling_ * data[first + r];
  } else {
    layers.apply(data, {}, f);
    for (std::size_t r = 0; r < rows.size(); ++r) f[r] -= 0.5 * data[first + r];
  }
  return f;
}

std::string Problem::unknown_name() const {
  return spec_.bc == BoundaryCondition::Neumann ? "u" : "q";
}

std::string Problem::description() const {
  std::string text = spec_.k > 0 ? "Helmholtz" : "Laplace";
  if (spec_.kind == ProblemKind::Scattering) {
    text += spec_.bc == BoundaryCondition::Neumann ? " rigid (Neumann) scattering"
                                                   : " soft (Dirichlet) scattering";
    text += spec_.incident.kind == exact::Incident::Kind::PlaneWave
                ? ", plane wave towards " + format_point(spec_.incident.direction)
                : ", point source at " + format_point(spec_.incident.source);
  } else {
    text += spec_.bc == BoundaryCondition::Neumann ? " radiation, Neumann data"
                                                   : " radiation, Dirichlet data";
    text += " of a monopole at " + format_point(spec_.source);
  }
  return text;
}

std::string Problem::formulation_description() const {
  if (coupling_ == cplx(0.0)) return "conventional equation (cbie)";
  char alpha[96];
  std::snprintf(alpha, sizeof alpha, "%.6g%+.6gi", coupling_.real(), coupling_.imag());
  return std::string("Burton-Miller (bm), alpha = ") + alpha;
}

}  // namespace fmbem
