#include "fmbem/bem/curvature_correction.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <ranges>

#include "fmbem/core/error.hpp"

namespace fmbem {

std::vector<Vec3> element_curvature_vectors(const Mesh& mesh, double feature_angle) {
  std::vector<Vec3> w(mesh.size(), Vec3{0.0, 0.0, 0.0});
  for (const MeshEdge& edge : mesh_edges(mesh)) {
    if (is_feature_edge(edge, feature_angle)) continue;
    const Vec3 &a = mesh.vertices()[std::size_t(edge.vertices[0])],
               &b = mesh.vertices()[std::size_t(edge.vertices[1])];
    const std::size_t f0 = std::size_t(edge.faces[0]), f1 = std::size_t(edge.faces[1]);
    const Vec3 density = edge.curvature * (norm(b - a) / (mesh.areas()[f0] + mesh.areas()[f1]));
    w[f0] = w[f0] + density;
    if (f1 != f0) w[f1] = w[f1] + density;  // (f1 == f0: the other face is f0's mirror image)
  }
  return w;
}

double segment_single_layer(const Vec3& x, const Vec3& a, const Vec3& b) {
  const double length = norm(b - a);
  const Vec3 t = (b - a) * (1.0 / length);
  const double along = dot(x - a, t);  // the foot of the perpendicular, from a
  const double distance = norm(x - a - t * along);
  if (along > 0.0 && along < length && distance > 0.0)
    // Beside the segment: asinh((L - s) / d) + asinh(s / d), without the cancellation in
    // r_a + r_b - L (which loses digits like L^2 / d^2 as the target nears the segment).
    return (std::asinh((length - along) / distance) + std::asinh(along / distance)) /
           (4.0 * std::numbers::pi);
  // Beyond an end: ln((r_a + r_b + L) / (r_a + r_b - L)), r_a + r_b - L >= 2 min(r_a, r_b).
  const double ra = norm(x - a), rb = norm(x - b);
  return std::log1p(2.0 * length / (ra + rb - length)) / (4.0 * std::numbers::pi);
}

std::vector<FeatureSegment> feature_edge_segments(const Mesh& mesh, double feature_angle,
                                                  std::optional<RowRange> lower_face_in) {
  if (mesh.is_part() && !lower_face_in)
    throw Error("curvature correction: a part's feature edges are not the whole mesh's");
  if (lower_face_in)
    for (std::size_t e = lower_face_in->begin; e < lower_face_in->end; ++e)
      if (!mesh.corners_complete(e))
        throw Error(
            "curvature correction: a row's corner lacks triangles in this part (its halo "
            "is too thin: a defect, please report it)");
  std::vector<FeatureSegment> segments;
  for (const MeshEdge& edge : mesh_edges(mesh)) {
    if (!is_feature_edge(edge, feature_angle)) continue;
    const std::size_t lower = std::size_t(std::min(edge.faces[0], edge.faces[1]));
    if (lower_face_in && (lower < lower_face_in->begin || lower >= lower_face_in->end)) continue;
    // An edge where the mesh meets an image plane is its own image there: the sum over the
    // images (feature_edge_curvature_term) meets it twice.
    const double share = edge.faces[0] == edge.faces[1] ? 0.5 : 1.0;
    segments.push_back({mesh.vertices()[std::size_t(edge.vertices[0])],
                        mesh.vertices()[std::size_t(edge.vertices[1])], edge.curvature * share});
  }
  return segments;
}

std::vector<double> feature_edge_curvature_term(const Mesh& mesh, RowRange rows,
                                                double feature_angle) {
  return feature_edge_curvature_term(mesh, rows, feature_edge_segments(mesh, feature_angle));
}

std::vector<double> feature_edge_curvature_term(const Mesh& mesh, RowRange rows,
                                                std::span<const FeatureSegment> segments) {
  std::vector<double> term(rows.size(), 0.0);
  if (segments.empty()) return term;
  // With image planes the images' feature edges too: image g's edge seen from x_i is the real
  // edge seen from x_i's image, its v_e . n_i the real v_e . (n_i reflected).
  const ImagePlanes& planes = mesh.image_planes();
#pragma omp parallel for schedule(static)
  for (std::size_t r = 0; r < rows.size(); ++r) {
    double sum = 0.0;
    for (std::size_t g = 0; g < planes.images(); ++g) {
      const Vec3 x = planes.reflect(g, mesh.centroids()[rows.begin + r]);
      const Vec3 n = planes.reflect_direction(g, mesh.normals()[rows.begin + r]);
      for (const FeatureSegment& s : segments)
        sum += dot(n, s.v) * segment_single_layer(x, s.a, s.b);
    }
    term[r] = sum;
  }
  return term;
}

void check_curvature_columns(const Mesh& mesh, const LayerPotentials& op) {
  if (!mesh.is_part()) return;
  const std::span<const std::size_t> columns = op.column_elements();
  const auto complete = [&](std::size_t e) { return mesh.corners_complete(e); };
  const bool all_complete =
      columns.empty()
          ? std::ranges::all_of(std::views::iota(std::size_t(0), op.columns()), complete)
          : std::ranges::all_of(columns, complete);
  if (!all_complete)
    throw Error(
        "curvature correction: an element read lacks its neighbours in this part (its "
        "halo is too thin: a defect, please report it)");
}

namespace {

// `coupled`: the operator must have a real, positive coupling (a length), else none.
void check_operator(const Mesh& mesh, const LayerPotentials& op, bool coupled, RowRange rows) {
  const std::span<const std::size_t> columns = op.column_elements();
  // Every element, a part's (ascending), or none (a part without elements).
  const bool of_mesh = columns.empty() ? op.columns() == mesh.size() || op.columns() == 0
                                       : columns.back() < mesh.size();
  const cplx coupling = op.coupling();
  const bool coupling_right =
      coupled ? coupling.imag() == 0.0 && coupling.real() > 0.0 && std::isfinite(coupling.real())
              : coupling == 0.0;
  if (!of_mesh || op.rows().begin != rows.begin || op.rows().end != rows.end || !coupling_right)
    throw Error("curvature correction: layer potentials of another mesh, rows or coupling");
  check_curvature_columns(mesh, op);
}

// The weights of the images (NearFieldOptions::image_weights) under which the layers give the
// union of the mesh and its images' identity: for a scalar density (axis -1) every image's 1,
// for a component of a vector density (n, w) -1 where the image reflects that axis (its
// element's vector is the reflection). Empty without planes.
std::vector<double> geometric_image_weights(const ImagePlanes& planes, int axis) {
  if (planes.empty()) return {};
  std::vector<double> weights(planes.images(), 1.0);
  for (std::size_t g = 0; g < planes.images(); ++g)
    for (std::size_t p = 0; p < planes.planes().size(); ++p)
      if ((g >> p & 1u) && planes.planes()[p].axis == axis) weights[g] = -weights[g];
  return weights;
}

// The plain operators' share of c: -n_i . L_feature(x_i) - n_i . (D[n] + S[w_smooth])(x_i), and
// S[1] for the coupled share. plain(weights): the plain operator with those image weights, each
// asked for once (at most two alive); without planes one operator.
std::vector<double> plain_share(
    const Mesh& mesh,
    const std::function<const LayerPotentials&(const std::vector<double>&)>& plain,
    double feature_angle, std::span<const FeatureSegment> segments, std::vector<cplx>& s) {
  const std::vector<Vec3> w = element_curvature_vectors(mesh, feature_angle);
  const ImagePlanes& planes = mesh.image_planes();
  const std::vector<double> scalar = geometric_image_weights(planes, -1);
  const RowRange rows = plain(scalar).rows();
  // -n_i . L_feature(x_i): the feature edges' curvature, kept on the edges.
  std::vector<double> c = feature_edge_curvature_term(mesh, rows, segments);
  for (double& value : c) value = -value;
  std::vector<cplx> y(rows.size());
  // -n_i . (D[n] + S[w_smooth]), one Cartesian component at a time.
  for (int axis = 0; axis < 3; ++axis) {
    const LayerPotentials& op = plain(geometric_image_weights(planes, axis));
    const std::vector<cplx> normal =
        column_density(op, [&](std::size_t e) { return component(mesh.normals()[e], axis); });
    const std::vector<cplx> curvature =
        column_density(op, [&](std::size_t e) { return component(w[e], axis); });
    op.apply(normal, curvature, y);
    for (std::size_t r = 0; r < rows.size(); ++r)
      c[r] -= component(mesh.normals()[rows.begin + r], axis) * y[r].real();
  }
  const LayerPotentials& op = plain(scalar);
  const std::vector<cplx> ones = column_density(op, [](std::size_t) { return 1.0; });
  s.assign(rows.size(), 0.0);
  op.apply({}, ones, s);
  return c;
}

// -D'[1] = -((S + L D')[1] - S[1]) / L, added to c, L the coupled operator's coupling.
void add_coupled_share(const LayerPotentials& coupled, const std::vector<cplx>& s,
                       std::vector<double>& c) {
  const std::vector<cplx> ones = column_density(coupled, [](std::size_t) { return 1.0; });
  std::vector<cplx> y(s.size());
  coupled.apply({}, ones, y);
  const double length = coupled.coupling().real();
  for (std::size_t r = 0; r < s.size(); ++r) c[r] -= (y[r] - s[r]).real() / length;
}

}  // namespace

std::vector<double> adjoint_double_layer_curvature_correction(const Mesh& mesh,
                                                              const LayerPotentials& plain,
                                                              const LayerPotentials& coupled,
                                                              double feature_angle) {
  if (!mesh.image_planes().empty())
    throw Error(
        "curvature correction: with image planes the operators are built per image "
        "weighting (the form with makers)");
  check_operator(mesh, plain, false, plain.rows());
  check_operator(mesh, coupled, true, plain.rows());
  std::vector<cplx> s;
  std::vector<double> c = plain_share(
      mesh, [&](const std::vector<double>&) -> const LayerPotentials& { return plain; },
      feature_angle, feature_edge_segments(mesh, feature_angle), s);
  add_coupled_share(coupled, s, c);
  return c;
}

std::vector<double> adjoint_double_layer_curvature_correction(
    const Mesh& mesh, const LayerMaker& make_plain, const LayerMaker& make_coupled,
    double feature_angle, const std::vector<FeatureSegment>* whole_segments) {
  std::vector<FeatureSegment> own;
  if (!whole_segments) own = feature_edge_segments(mesh, feature_angle);
  const std::span<const FeatureSegment> segments =
      whole_segments ? std::span<const FeatureSegment>(*whole_segments) : own;
  std::vector<cplx> s;
  std::vector<double> c;
  RowRange rows;
  {
    // The plain operator of the weights last asked for (a new set of weights: a new operator).
    std::unique_ptr<LayerPotentials> plain;
    std::vector<double> plain_weights;
    const auto plain_of = [&](const std::vector<double>& weights) -> const LayerPotentials& {
      if (!plain || weights != plain_weights) {
        plain.reset();
        plain = make_plain(weights);
        plain_weights = weights;
        check_operator(mesh, *plain, false, plain->rows());
        rows = plain->rows();
      }
      return *plain;
    };
    c = plain_share(mesh, plain_of, feature_angle, segments, s);
  }
  const std::unique_ptr<LayerPotentials> coupled =
      make_coupled(geometric_image_weights(mesh.image_planes(), -1));
  check_operator(mesh, *coupled, true, rows);
  add_coupled_share(*coupled, s, c);
  // An element flush with a rigid plane: its D' and its image's cancel whatever the curvature.
  for (std::size_t r = 0; r < rows.size(); ++r)
    if (mesh.flush(rows.begin + r)) c[r] = 0.0;
  return c;
}

}  // namespace fmbem
