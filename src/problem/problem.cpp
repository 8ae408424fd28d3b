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
#include "fmbem/exact/sphere_cap.hpp"

namespace fmbem {
namespace {

std::string format_number(double x) {
  std::ostringstream s;
  s << x;
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
  if (spec.kind == ProblemKind::Surface && !spec.incident_wave) return std::nullopt;
  if (spec.incident.kind == exact::Incident::Kind::PointSource) return spec.incident.source;
  return std::nullopt;
}

// A point source must lie strictly on the mesh's side of every plane: on a plane it would meet
// its own image (doubled across a rigid plane, cancelled across a soft one).
void check_source_side(const ImagePlanes &planes, const Vec3 &source, double diameter,
                       const std::string &what) {
  for (std::size_t p = 0; p < planes.planes().size(); ++p) {
    const ImagePlane &plane = planes.planes()[p];
    const double side = double(planes.sides()[p]) * plane.signed_distance(source);
    const std::string named = std::string("the plane ") + "xyz"[plane.axis] + " = " +
                              format_number(plane.offset) + " (" + plane_kind_name(plane.kind) +
                              ")";
    if (std::abs(side) <= 1e-9 * diameter)
      throw Error(what + " " + format_point(source) + " lies on " + named +
                  ", where it would meet its own image: move it to the mesh's side");
    if (side < 0.0)
      throw Error(what + " " + format_point(source) + " lies beyond " + named +
                  ", on the side of the mesh's images: give the source on the mesh's side (its "
                  "images are added)");
  }
}

// Whether every plane passes through the sphere's centre: its images are then the sphere itself
// and its series, symmetrized, is the exact solution.
bool planes_through_center(const ImagePlanes &planes, const SphereFit &sphere) {
  return planes.all_pass_through(sphere.center, 1e-6 * sphere.radius);
}

// Whether the spec has an incident wave (scattering, or surface conditions with one).
bool has_incident(const ProblemSpec &spec) {
  return spec.kind == ProblemKind::Scattering ||
         (spec.kind == ProblemKind::Surface && spec.incident_wave);
}

// The surface conditions' exact solutions on a sphere (SurfaceFacts' uniform_class and
// cap_class), from the whole mesh's element classes.
void find_exact_surface_conditions(const Mesh &mesh, const ProblemSpec &spec, SurfaceFacts &facts) {
  if (spec.kind != ProblemKind::Surface || !facts.is_sphere || !spec.element_class) return;
  const std::vector<std::int32_t> &classes = *spec.element_class;
  if (classes.empty()) return;
  if (std::all_of(classes.begin(), classes.end(),
                  [&](std::int32_t c) { return c == classes[0]; })) {
    facts.uniform_class = classes[0];
    return;
  }
  // A cap: one velocity class, every other element rigid.
  std::int32_t moving = -1;
  for (const std::int32_t c : classes) {
    const ConditionKind kind = spec.surface->classes[std::size_t(c)].kind;
    if (kind == ConditionKind::rigid) continue;
    if (kind != ConditionKind::velocity || (moving >= 0 && moving != c)) return;
    moving = c;
  }
  if (moving < 0) return;
  const Vec3 &center = facts.sphere.center;
  // The cap's edge: the vertices of both a moving and a rigid element. On a circle of the
  // sphere they satisfy (v - c) . w = 1 for w = axis / (R cos theta0): least squares for w.
  std::vector<std::uint8_t> side(mesh.vertices().size(), 0);  // bit 1: moving, bit 2: rigid
  for (std::size_t e = 0; e < mesh.size(); ++e)
    for (int c = 0; c < 3; ++c)
      side[std::size_t(mesh.triangles()[e][std::size_t(c)])] |= classes[e] == moving ? 1 : 2;
  double ata[3][3] = {}, atb[3] = {};
  std::size_t edge_vertices = 0;
  for (std::size_t v = 0; v < side.size(); ++v) {
    if (side[v] != 3) continue;
    ++edge_vertices;
    const Vec3 d = (mesh.vertices()[v] - center) * (1.0 / facts.sphere.radius);
    const double row[3] = {d.x, d.y, d.z};
    for (int i = 0; i < 3; ++i) {
      atb[i] += row[i];
      for (int j = 0; j < 3; ++j) ata[i][j] += row[i] * row[j];
    }
  }
  // A cap's edge is a circle: fewer than 6 points on it (a single triangle's 3, a quad's 4) are
  // too coarse a polygon for the cap's series to be its solution (a single inscribed triangle
  // covers 41 % of its circle's cap).
  if (edge_vertices < 6) return;
  // Cramer's rule on the 3x3 normal equations.
  const auto det = [](const double m[3][3]) {
    return m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1]) -
           m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0]) +
           m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0]);
  };
  const double whole = det(ata);
  if (!(std::abs(whole) > 1e-12 * std::pow(double(edge_vertices), 3))) return;
  double w[3];
  for (int i = 0; i < 3; ++i) {
    double m[3][3];
    for (int r = 0; r < 3; ++r)
      for (int c = 0; c < 3; ++c) m[r][c] = c == i ? atb[r] : ata[r][c];
    w[i] = det(m) / whole;
  }
  Vec3 axis{w[0], w[1], w[2]};
  double cos_angle = 1.0 / norm(axis);
  axis = normalized(axis);
  // The cap is the side its elements lie on.
  Vec3 towards{};
  for (std::size_t e = 0; e < mesh.size(); ++e)
    if (classes[e] == moving) towards += (mesh.centroids()[e] - center) * mesh.areas()[e];
  if (dot(towards, axis) < 0.0) {
    axis = axis * -1.0;
    cos_angle = -cos_angle;
  }
  if (!(std::abs(cos_angle) <= 1.0)) return;
  const double half_angle = std::acos(cos_angle);
  // Every moving vertex within the edge's angle, every rigid one outside it (to the sphere
  // fit's 1e-6).
  for (std::size_t e = 0; e < mesh.size(); ++e)
    for (int c = 0; c < 3; ++c) {
      const Vec3 d = normalized(mesh.corner(e, c) - center);
      const double angle = std::acos(std::clamp(dot(d, axis), -1.0, 1.0));
      if (classes[e] == moving ? angle > half_angle + 1e-6 : angle < half_angle - 1e-6) return;
    }
  // And its elements cover the cap: their flat area within 20 % of its 2 pi R^2 (1 - cos).
  double moving_area = 0.0;
  for (std::size_t e = 0; e < mesh.size(); ++e)
    if (classes[e] == moving) moving_area += mesh.areas()[e];
  const double radius = facts.sphere.radius;
  const double cap_area = 2.0 * std::numbers::pi * radius * radius * (1.0 - cos_angle);
  if (!(moving_area > 0.8 * cap_area && moving_area < 1.2 * cap_area)) return;
  facts.cap_class = moving;
  facts.cap_axis = axis;
  facts.cap_half_angle = half_angle;
}

}  // namespace

std::string format_point(const Vec3 &p) {
  std::ostringstream s;
  s << p.x << "," << p.y << "," << p.z;
  return s.str();
}

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

// The sphere fit of vertices held in pieces (a rank's each): sum(values) sums a
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
  switch (formulation) {
    case Formulation::BurtonMiller:
      return "bm";
    case Formulation::Regularised:
      return "rbm";
    case Formulation::Conventional:
      break;
  }
  return "cbie";
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
    // With image planes, of the body closed by its images: the nearest element of any image,
    // and the winding numbers of all of them (each image's about the source, the mesh's about
    // the source reflected).
    const ImagePlanes &planes = mesh.image_planes();
    facts.source_distance = distance_to_surface(mesh, *source);
    facts.source_winding = winding_number(mesh, *source);
    for (std::size_t g = 1; g < planes.images(); ++g) {
      const Vec3 image = planes.reflect(g, *source);
      const SurfaceDistance d = distance_to_surface(mesh, image);
      if (d.distance < facts.source_distance.distance) facts.source_distance = d;
      facts.source_winding += winding_number(mesh, image);
    }
  }
  find_exact_surface_conditions(mesh, spec, facts);
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
  // A slab's mesh has no groups: every element takes the default condition.
  if (spec.kind == ProblemKind::Surface && facts.is_sphere && spec.surface &&
      spec.surface->classes.size() == 1)
    facts.uniform_class = 0;
  return facts;
}

namespace {

// u = a x + u0 and q = b x + q0 on an element of the class: a = 1, b = robin where u is the
// unknown, a = 0, b = 1 where the pressure is given.
struct UnknownWeights {
  cplx a, b;
};
UnknownWeights unknown_weights(const ClassData &d) {
  return d.pressure_given ? UnknownWeights{0.0, 1.0} : UnknownWeights{1.0, d.robin};
}

}  // namespace

Problem::Problem(const Mesh &mesh, const ProblemSpec &spec, std::optional<RowRange> exact_rows,
                 const SurfaceFacts *whole)
    : mesh_(&mesh), spec_(spec), exact_rows_(exact_rows.value_or(RowRange{0, mesh.size()})) {
  if (exact_rows_.begin > exact_rows_.end || exact_rows_.end > mesh.size())
    throw Error("the exact solution's rows run past the mesh's elements");
  if (!std::isfinite(spec.k) || spec.k < 0.0)
    throw Error("the wavenumber k must be finite and >= 0 (k = 0 is Laplace)");
  if (!std::isfinite(spec.incident.amplitude.real()) ||
      !std::isfinite(spec.incident.amplitude.imag()))
    throw Error("the incident wave's amplitude must be finite");
  if (spec.formulation != Formulation::Conventional) {
    if (spec.k == 0.0)
      throw Error(std::string("the ") +
                  (spec.formulation == Formulation::Regularised ? "regularised " : "") +
                  "Burton-Miller formulation needs k > 0 (Laplace has no fictitious frequencies: "
                  "use -bem_formulation cbie)");
    coupling_ = spec.bm_alpha == cplx(0.0) ? default_bm_alpha(spec.k) : spec.bm_alpha;
    if (!std::isfinite(coupling_.real()) || !std::isfinite(coupling_.imag()) ||
        coupling_.imag() == 0.0)
      throw Error(
          "the Burton-Miller coupling alpha must be finite with a non-zero imaginary part (a real "
          "alpha does not remove the fictitious frequencies; the default is i/k)");
  } else if (spec.bm_alpha != cplx(0.0)) {
    throw Error(
        "-bem_bm_alpha applies to the Burton-Miller formulations only (-bem_formulation bm or "
        "rbm)");
  }
  if (whole == nullptr && mesh.is_part())
    throw Error("a problem on a part of the mesh needs the whole surface's facts");
  facts_ = whole ? *whole : surface_facts(mesh, spec);
  const SurfaceFacts &facts = facts_;
  if (facts.has_source != source_of(spec).has_value())
    throw Error("the surface's facts were formed for another problem's source");
  const std::size_t first = exact_rows_.begin, rows = exact_rows_.size();
  const auto &x = mesh.centroids();
  const auto &normals = mesh.normals();

  if (spec.kind == ProblemKind::Surface) {
    if (!spec.surface || !spec.element_class || spec.element_class->size() != mesh.size())
      throw Error("surface conditions: one class per element of the mesh expected");
    if (!(spec.k > 0.0))
      throw Error(
          "boundary conditions on surface groups need a frequency above 0 (k > 0): give "
          "-bem_frequency or -k");
    class_data_.reserve(spec.surface->classes.size());
    for (std::size_t c = 0; c < spec.surface->classes.size(); ++c)
      class_data_.push_back(fmbem::class_data(spec.surface->classes[c], spec.k,
                                              spec.surface->medium, spec.surface->labels[c]));
  }
  const ImagePlanes &planes = mesh.image_planes();
  if (const auto source = source_of(spec); source && !planes.empty())
    check_source_side(
        planes, *source, mesh.diameter(),
        spec.kind == ProblemKind::Radiation ? "the radiation source" : "the incident point source");
  // A sphere's series is exact with planes only where they all pass through its centre.
  const bool sphere_exact =
      facts.is_sphere && (planes.empty() || planes_through_center(planes, facts.sphere));
  if (has_incident(spec)) {
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
    if (sphere_exact && spec.kind == ProblemKind::Scattering) {
      const SphereFit *sphere = &facts.sphere;
      const exact::SphereScattering mie(spec.k, sphere->radius, sphere->center,
                                        spec.bc == BoundaryCondition::Neumann
                                            ? exact::SphereBoundary::Rigid
                                            : exact::SphereBoundary::Soft,
                                        spec.incident);
      std::vector<cplx> values(rows);
#pragma omp parallel for schedule(static)
      for (std::size_t i = 0; i < rows; ++i)
        values[i] =
            planes.symmetrize(x[first + i], [&](const Vec3 &at) { return mie.surface_value(at); });
      exact_ = std::move(values);
      exact_name_ = std::string(spec.bc == BoundaryCondition::Neumann ? "rigid" : "soft") +
                    " sphere " + (spec.k > 0 ? "Mie series" : "Laplace series") + " (" +
                    std::to_string(mie.terms()) + " terms)";
    }
  }
  if (spec.kind == ProblemKind::Surface) {
    set_surface_exact_solution(facts);
  } else if (spec.kind == ProblemKind::Radiation) {
    check_source_clearance(facts.source_distance, spec.source, "the radiation source", warnings_);
    if (facts.source_winding < 0.5)
      throw Error("the radiation source " + format_point(spec.source) +
                  " must lie inside the body (use -bem_source x,y,z)");
    std::vector<cplx> values(rows);
    for (std::size_t i = 0; i < rows; ++i) {
      const std::size_t e = first + i;
      values[i] = spec.bc == BoundaryCondition::Neumann
                      ? radiating_monopole(x[e], normals[e], false)
                      : radiating_monopole(x[e], normals[e], true);
    }
    exact_ = std::move(values);
    exact_name_ = "monopole at " + format_point(spec.source);
  }
}

cplx Problem::radiating_monopole(const Vec3 &x, const Vec3 &normal, bool derivative) const {
  const ImagePlanes &planes = mesh_->image_planes();
  cplx sum{};
  for (std::size_t g = 0; g < planes.images(); ++g) {
    const Vec3 at = planes.reflect(g, x);
    sum += planes.data_weight(g) *
           (derivative ? exact::monopole_normal_derivative(spec_.k, spec_.source, at,
                                                           planes.reflect_direction(g, normal))
                       : exact::monopole(spec_.k, spec_.source, at));
  }
  return sum;
}

void Problem::set_surface_exact_solution(const SurfaceFacts &facts) {
  if (!facts.is_sphere) return;
  // With planes: the incident wave's series symmetrized where the planes pass through the
  // centre; the element data's series (cap, pulsating sphere) are not the images' data.
  const ImagePlanes &planes = mesh_->image_planes();
  if (!planes.empty() && (!spec_.incident_wave || !planes_through_center(planes, facts.sphere)))
    return;
  const SphereFit &sphere = facts.sphere;
  const std::size_t first = exact_rows_.begin, rows = exact_rows_.size();
  const auto &x = mesh_->centroids();
  const auto fill = [&](auto &&value_at) {
    std::vector<cplx> values(rows);
#pragma omp parallel for schedule(static)
    for (std::size_t i = 0; i < rows; ++i) values[i] = value_at(x[first + i]);
    exact_ = std::move(values);
  };
  if (facts.cap_class >= 0 && !spec_.incident_wave) {
    const ClassData &cap = class_data_[std::size_t(facts.cap_class)];
    const exact::SphereCapRadiation series(spec_.k, sphere.radius, sphere.center, facts.cap_axis,
                                           facts.cap_half_angle, cap.value);
    fill([&](const Vec3 &at) { return series.surface_value(at); });
    char name[128];
    std::snprintf(name, sizeof name, "vibrating cap series (half-angle %.4g degrees, %d terms)",
                  facts.cap_half_angle * 180.0 / std::numbers::pi, series.terms());
    exact_name_ = name;
    return;
  }
  if (facts.uniform_class < 0) return;
  const ClassData &all = class_data_[std::size_t(facts.uniform_class)];
  if (!spec_.incident_wave) {
    // Every element at one velocity: the pulsating sphere, u = A e^{ikr} / r outside with
    // du/dr = q at r = a, so u(a) = q a / (ika - 1).
    if (all.pressure_given || all.robin != cplx(0.0)) return;
    const cplx u = all.value * sphere.radius / cplx(-1.0, spec_.k * sphere.radius);
    fill([&](const Vec3 &) { return u; });
    exact_name_ = "pulsating sphere (a monopole at its centre)";
    return;
  }
  if (all.value != cplx(0.0)) return;
  if (all.pressure_given) {  // pressure 0: the soft sphere, its unknown q
    const exact::SphereScattering mie(spec_.k, sphere.radius, sphere.center,
                                      exact::SphereBoundary::Soft, spec_.incident);
    fill([&](const Vec3 &at) {
      return planes.symmetrize(at, [&](const Vec3 &y) { return mie.surface_value(y); });
    });
    exact_name_ = "soft sphere Mie series (" + std::to_string(mie.terms()) + " terms)";
    return;
  }
  // q = robin u = -i k B u: the admittance sphere (B = 0: rigid).
  const cplx admittance = all.robin / cplx(0.0, -spec_.k);
  if (admittance.real() < 0.0) return;  // an active surface: the series may not be unique
  const exact::SphereScattering series(spec_.k, sphere.radius, sphere.center,
                                       exact::SphereBoundary::Admittance, spec_.incident,
                                       admittance);
  fill([&](const Vec3 &at) {
    return planes.symmetrize(at, [&](const Vec3 &y) { return series.surface_value(y); });
  });
  exact_name_ = "admittance sphere series (" + std::to_string(series.terms()) + " terms)";
}

std::shared_ptr<ElementCoefficients> Problem::element_coefficients(cplx coupling) const {
  auto per_element = std::make_shared<ElementCoefficients>();
  const std::size_t n = mesh_->size();
  per_element->identity.resize(n);
  per_element->double_layer.resize(n);
  per_element->single_layer.resize(n);
  for (std::size_t e = 0; e < n; ++e) {
    const UnknownWeights w = unknown_weights(class_data_[std::size_t(element_class(e))]);
    per_element->identity[e] = value_jump(e) * w.a + derivative_jump(e) * coupling * w.b;
    per_element->double_layer[e] = -w.a;
    per_element->single_layer[e] = w.b;
  }
  return per_element;
}

OperatorCoefficients Problem::coefficients() const {
  if (spec_.formulation == Formulation::Regularised)
    throw Error("the regularised formulation's coefficients are regularised_coefficients()");
  if (spec_.kind == ProblemKind::Surface) {
    // Row i: (a_i + alpha b_i) / 2; column j: -a_j (D + alpha N) and b_j (S + alpha D').
    OperatorCoefficients c;
    c.per_element = element_coefficients(coupling_);
    return c;
  }
  // The layers carry alpha D' and alpha N; only the identity's share is added here: the
  // Dirichlet equation's alpha (1/2) q (the jump of the single layer's normal derivative).
  // Elements flush with a rigid plane have their own jumps (value_jump, derivative_jump).
  if (mesh_->has_flush_elements()) {
    const bool neumann = spec_.bc == BoundaryCondition::Neumann;
    return flush_coefficients(
        [&](std::size_t e) {
          return neumann ? cplx(value_jump(e)) : coupling_ * derivative_jump(e);
        },
        neumann ? -1.0 : 0.0, neumann ? 0.0 : 1.0);
  }
  if (spec_.bc == BoundaryCondition::Neumann) return {0.5, -1.0, 0.0, nullptr};
  return {0.5 * coupling_, 0.0, 1.0, nullptr};
}

template <class Identity>
OperatorCoefficients Problem::flush_coefficients(Identity identity, cplx double_layer,
                                                 cplx single_layer) const {
  auto per_element = std::make_shared<ElementCoefficients>();
  const std::size_t n = mesh_->size();
  per_element->identity.resize(n);
  per_element->double_layer.assign(n, double_layer);
  per_element->single_layer.assign(n, single_layer);
  for (std::size_t e = 0; e < n; ++e) per_element->identity[e] = identity(e);
  OperatorCoefficients c;
  c.per_element = per_element;
  return c;
}

LayerCoupling Problem::layer_coupling() const {
  if (spec_.formulation == Formulation::Regularised) return LayerCoupling::derivative_apart();
  return coupling_;
}

RegularisedCoefficients Problem::regularised_coefficients() const {
  if (spec_.formulation != Formulation::Regularised)
    throw Error("regularised coefficients of a problem in another formulation");
  RegularisedCoefficients r;
  r.alpha = coupling_;
  r.beta = regulariser_beta;
  if (spec_.kind == ProblemKind::Surface) {
    // Row i: C's identity a_i / 2, H's b_i / 2; column j: -a_j (D, N) and b_j (S, D'); the rows
    // where u is unknown (a_i = 1) regularised.
    r.value.per_element = element_coefficients(0.0);
    const std::size_t n = mesh_->size();
    r.derivative_identity.resize(n);
    r.regularised.resize(n);
    for (std::size_t e = 0; e < n; ++e) {
      const ClassData &d = class_data_[std::size_t(element_class(e))];
      r.derivative_identity[e] = derivative_jump(e) * unknown_weights(d).b;
      r.regularised[e] = d.pressure_given ? 0 : 1;
    }
    return r;
  }
  // Neumann (u unknown): C = 1/2 - D, H = -N, every row regularised. Dirichlet (q unknown):
  // C = S, H = 1/2 + D', no row regularised (Burton-Miller's rows).
  if (spec_.bc == BoundaryCondition::Neumann) {
    r.value =
        mesh_->has_flush_elements()
            ? flush_coefficients([&](std::size_t e) { return cplx(value_jump(e)); }, -1.0, 0.0)
            : OperatorCoefficients{0.5, -1.0, 0.0, nullptr};
  } else {
    r.value = {0.0, 0.0, 1.0, nullptr};
    r.derivative_identity_uniform = 0.5;
    if (mesh_->has_flush_elements())
      for (std::size_t e = 0; e < mesh_->size(); ++e)
        r.derivative_identity.push_back(derivative_jump(e));
    r.regularised.assign(mesh_->size(), 0);
  }
  return r;
}

Problem::RightHandSideParts Problem::incident_at(RowRange rows, bool with_derivative) const {
  RightHandSideParts f{std::vector<cplx>(rows.size(), cplx(0.0)),
                       std::vector<cplx>(with_derivative ? rows.size() : 0, cplx(0.0))};
  const bool incident = spec_.kind == ProblemKind::Scattering ||
                        (spec_.kind == ProblemKind::Surface && spec_.incident_wave);
  if (!incident) return f;
  const auto &x = mesh_->centroids();
  // With image planes the wave's images too (ImagePlanes::data_weight).
  const ImagePlanes &planes = mesh_->image_planes();
  for (std::size_t i = rows.begin; i < rows.end; ++i)
    for (std::size_t g = 0; g < planes.images(); ++g) {
      const Vec3 at = planes.reflect(g, x[i]);
      const double w = planes.data_weight(g);
      f.value[i - rows.begin] += w * exact::incident_field(spec_.k, spec_.incident, at);
      if (with_derivative)
        f.derivative[i - rows.begin] +=
            w * exact::incident_normal_derivative(spec_.k, spec_.incident, at,
                                                  planes.reflect_direction(g, mesh_->normals()[i]));
    }
  return f;
}

Problem::KnownData Problem::known_data(const LayerPotentials &layers) const {
  KnownData known;
  const auto &x = mesh_->centroids();
  if (spec_.kind == ProblemKind::Radiation) {
    // The monopole's data on every element the layers read: Neumann (u unknown) knows q_s,
    // Dirichlet knows u_s.
    const bool neumann = spec_.bc == BoundaryCondition::Neumann;
    (neumann ? known.q0 : known.u0) = column_density(layers, [&](std::size_t e) -> cplx {
      return radiating_monopole(x[e], mesh_->normals()[e], neumann);
    });
  } else if (spec_.kind == ProblemKind::Surface) {
    // u0 where the pressure is given, q0 elsewhere (where some class has a value).
    bool any_u0 = false, any_q0 = false;
    for (const ClassData &d : class_data_) {
      if (d.value == cplx(0.0)) continue;
      (d.pressure_given ? any_u0 : any_q0) = true;
    }
    const auto known_where = [&](bool pressure) {
      return column_density(layers, [&](std::size_t e) -> cplx {
        const ClassData &d = class_data_[std::size_t(element_class(e))];
        return d.pressure_given == pressure ? d.value : cplx(0.0);
      });
    };
    if (any_u0) known.u0 = known_where(true);
    if (any_q0) known.q0 = known_where(false);
  }
  return known;
}

void Problem::subtract_known(const LayerPotentials &layers, const LayerCoupling &coupling,
                             KnownData known, std::span<cplx> f) const {
  if (known.u0.empty() && known.q0.empty()) return;
  const std::size_t rows = layers.rows().size(), first = layers.first_row_column();
  // C and H of the known data are (1/2) u0 - D u0 + S q0 and (1/2) q0 - N u0 + D' q0: each output
  // of the layers applied to (-u0, q0), with the identities weighted as the output is.
  std::vector<cplx> parts(f.size());
  std::vector<cplx> minus_u0 = std::move(known.u0);
  for (cplx &v : minus_u0) v = -v;
  layers.apply(minus_u0, known.q0, parts);
  const std::size_t first_row = layers.rows().begin;
  for (int o = 0; o < coupling.outputs(); ++o) {
    const cplx v = coupling.value_weight(o), w = coupling.derivative_weight(o);
    const std::size_t block = std::size_t(o) * rows;
    for (std::size_t r = 0; r < rows; ++r) {
      cplx &out = f[block + r];
      out -= parts[block + r];
      const std::size_t e = first_row + r;
      if (!minus_u0.empty() && v != cplx(0.0)) out -= value_jump(e) * v * -minus_u0[first + r];
      if (!known.q0.empty() && w != cplx(0.0)) out -= derivative_jump(e) * w * known.q0[first + r];
    }
  }
}

Problem::RightHandSideParts Problem::right_hand_side_parts(const LayerPotentials &layers) const {
  if (spec_.formulation != Formulation::Regularised || layers.outputs() != 2)
    throw Error(
        "right-hand side parts: a regularised problem and layers with the normal derivatives "
        "apart are needed");
  const std::size_t count = layers.rows().size();
  RightHandSideParts f = incident_at(layers.rows(), true);
  std::vector<cplx> both(2 * count);
  std::copy(f.value.begin(), f.value.end(), both.begin());
  std::copy(f.derivative.begin(), f.derivative.end(), both.begin() + std::ptrdiff_t(count));
  subtract_known(layers, LayerCoupling::derivative_apart(), known_data(layers), both);
  std::copy(both.begin(), both.begin() + std::ptrdiff_t(count), f.value.begin());
  std::copy(both.begin() + std::ptrdiff_t(count), both.end(), f.derivative.begin());
  return f;
}

bool Problem::uses_single_layer() const {
  if (spec_.kind != ProblemKind::Surface)
    return spec_.bc == BoundaryCondition::Dirichlet || spec_.kind == ProblemKind::Radiation;
  for (const ClassData &d : class_data_)
    if (d.pressure_given || d.robin != cplx(0.0) || d.value != cplx(0.0)) return true;
  return false;
}

std::vector<cplx> Problem::right_hand_side(const LayerPotentials &layers) const {
  if (spec_.formulation == Formulation::Regularised)
    throw Error("the regularised formulation's right-hand side is right_hand_side_parts()");
  if (layers.coupling() != coupling_ || layers.outputs() != 1)
    throw Error("right-hand side: the layer potentials' coupling is not the problem's");
  // u_inc + alpha du_inc/dn, then the known data (the radiating monopole's, the surface
  // conditions' values) moved over: f -= (1/2) u0 + (alpha/2) q0 - (D + alpha N) u0 +
  // (S + alpha D') q0.
  const bool with_derivative = coupling_ != cplx(0.0);
  RightHandSideParts incident = incident_at(layers.rows(), with_derivative);
  std::vector<cplx> f = std::move(incident.value);
  if (with_derivative)
    for (std::size_t r = 0; r < f.size(); ++r) f[r] += coupling_ * incident.derivative[r];
  subtract_known(layers, coupling_, known_data(layers), f);
  return f;
}

std::string Problem::unknown_name() const {
  if (spec_.kind == ProblemKind::Surface) return "unknown";
  return spec_.bc == BoundaryCondition::Neumann ? "u" : "q";
}

namespace {

// ", plane wave towards x,y,z" or ", point source at x,y,z", with ", amplitude A" unless 1.
std::string incident_text(const exact::Incident &incident) {
  std::string text = incident.kind == exact::Incident::Kind::PlaneWave
                         ? ", plane wave towards " + format_point(incident.direction)
                         : ", point source at " + format_point(incident.source);
  if (incident.amplitude != cplx(1.0)) {
    char amplitude[96];
    std::snprintf(amplitude, sizeof amplitude, ", amplitude %.6g%+.6gi", incident.amplitude.real(),
                  incident.amplitude.imag());
    text += amplitude;
  }
  return text;
}

}  // namespace

std::string Problem::description() const {
  std::string text = spec_.k > 0 ? "Helmholtz" : "Laplace";
  if (spec_.kind == ProblemKind::Surface) {
    text += " surface conditions on " + std::to_string(spec_.surface->classes.size()) +
            (spec_.surface->classes.size() == 1 ? " class" : " classes") + " of elements";
    if (spec_.incident_wave) text += incident_text(spec_.incident);
    return text;
  }
  if (spec_.kind == ProblemKind::Scattering) {
    text += spec_.bc == BoundaryCondition::Neumann ? " rigid (Neumann) scattering"
                                                   : " soft (Dirichlet) scattering";
    text += incident_text(spec_.incident);
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
  if (spec_.formulation == Formulation::Regularised) {
    char beta[96];
    std::snprintf(beta, sizeof beta, "%.6g%+.6gi", regulariser_beta.real(),
                  regulariser_beta.imag());
    const double kappa = spec_.regulariser_kappa_factor * spec_.k;
    char single_layer[96];
    if (kappa > 0.0)
      std::snprintf(single_layer, sizeof single_layer, "S of exp(-kappa r)/(4 pi r), kappa = %.6g",
                    kappa);
    else
      std::snprintf(single_layer, sizeof single_layer, "the Laplace single layer");
    return std::string("regularised Burton-Miller (rbm), beta = ") + beta + " with " +
           single_layer + " where u is unknown, alpha = " + alpha + " where the pressure is given";
  }
  return std::string("Burton-Miller (bm), alpha = ") + alpha;
}

}  // namespace fmbem
