#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "fmbem/mesh/image_planes.hpp"
#include "fmbem/mesh/surface.hpp"

namespace fmbem {

// What a part of a mesh cannot compute from its own elements (a rank's elements and
// halo): the whole surface's box, enclosed volume, longest edge, element and vertex counts and
// flips.
struct MeshExtent {
  Vec3 box_min, box_max;
  double volume = 0.0, max_edge = 0.0;
  std::size_t elements = 0, flipped = 0, vertices = 0;
};

// A validated closed triangle surface with consistently oriented triangles
// whose unit normals point out of the body, plus per-element geometry.
class Mesh {
 public:
  // Validates the surface and fixes its orientation; throws fmbem::Error
  // naming `name` and the problem (no triangles, non-finite coordinates,
  // coordinates out of the range the solver computes with (beyond 1e30, a mesh
  // smaller than 1e-30, or one too far from the origin for its size), degenerate
  // or duplicate triangles, open or non-manifold surface, non-orientable surface, a surface
  // that crosses or touches itself (first_self_intersection), a closed part inside another
  // (first_nested_part); several closed parts side by side are valid).
  // Tolerances are relative: vertices closer than 1e-12 of the mesh size are one,
  // a triangle is degenerate when its area is below 1e-10 of its longest edge
  // squared; so a mesh and the same mesh scaled by 1e-25 or 1e25 are equally valid.
  // The surface's groups are kept with the triangles, in the same order (from_surface neither
  // reorders nor drops triangles); it throws fmbem::Error for group indices out of range or a
  // triangle in a group that is not a surface's (a group's overlap is not an error here).
  // With planes (ImagePlanes) the surface must be closed together with its mirror images: it
  // may be open where it meets a plane (an edge lying in one), every vertex lies on one side of
  // each plane or in it, and no element lies in a plane; the planes are kept with the sides the
  // mesh lies on (image_planes()), and the orientation and volume are those of the body closed
  // by the planes.
  static Mesh from_surface(Surface surface, const std::string& name,
                           const ImagePlanes& planes = {});
  // A part of a mesh validated whole (a rank's elements and halo): its triangles as
  // they are (oriented already), not checked for closedness; the per-element geometry is
  // computed from its own vertices (the same bits as the whole mesh's), the box, volume, longest
  // edge and flips are the whole's (`whole`). vertex_complete: per vertex, whether every
  // triangle of the whole mesh at it is in the part (where not, the part's edges, stencils and
  // feature edges there are not the whole mesh's). element_groups: empty or per triangle its
  // group in `groups`, the whole mesh's list, as is `overlap` (its triangle numbered in the
  // whole mesh). planes: the whole mesh's (image_planes(), its sides set), against which the
  // part's vertices and flush elements are classified as the whole's. Throws fmbem::Error for a
  // vertex or group index out of range or sizes that do not match.
  static Mesh part_of(const std::string& name, std::vector<Vec3> vertices,
                      std::vector<Triangle> triangles, std::vector<std::uint8_t> vertex_complete,
                      const MeshExtent& whole, std::vector<std::int32_t> element_groups = {},
                      std::vector<SurfaceGroup> groups = {},
                      std::optional<GroupOverlap> overlap = {}, const ImagePlanes& planes = {});
  // The planes the mesh was validated with (none: an empty set), with the mesh's sides.
  const ImagePlanes& image_planes() const { return planes_; }
  // Whether element e lies in a rigid plane (flush with a baffle: a piston, a membrane). Its
  // image there is itself, facing the other way: its row's identity is whole, not half.
  bool flush(std::size_t e) const { return !flush_.empty() && flush_[e] != 0; }
  bool has_flush_elements() const { return !flush_.empty(); }
  // The planes vertex v lies in, one bit per plane in image_planes() order (within 1e-9 of the
  // diameter): where the mesh may be open and its elements meet their mirror images.
  std::uint8_t vertex_planes(std::size_t v) const {
    return vertex_planes_.empty() ? 0 : vertex_planes_[v];
  }
  // Whether this is a part (part_of), and then whether vertex v has all its triangles.
  bool is_part() const { return part_; }
  bool vertex_complete(std::size_t v) const { return !part_ || vertex_complete_[v] != 0; }
  // Whether every triangle at each corner of `element` is here (always on a whole mesh): what
  // reads the element's neighbours (its fit, its curvature vector) needs them.
  bool corners_complete(std::size_t element) const {
    const Triangle& t = triangles_[element];
    return vertex_complete(std::size_t(t[0])) && vertex_complete(std::size_t(t[1])) &&
           vertex_complete(std::size_t(t[2]));
  }
  // The whole mesh's (a part's: the one it was cut from).
  MeshExtent extent() const;

  const std::string& name() const { return name_; }
  std::size_t size() const { return triangles_.size(); }
  const std::vector<Vec3>& vertices() const { return vertices_; }
  const std::vector<Triangle>& triangles() const { return triangles_; }
  const std::vector<Vec3>& centroids() const { return centroids_; }
  const std::vector<Vec3>& normals() const { return normals_; }
  const std::vector<double>& areas() const { return areas_; }
  const Vec3& corner(std::size_t element, int k) const { return vertices_[triangles_[element][k]]; }

  // The mesh file's physical groups (of every dimension; empty for a file without them and a
  // generated surface), each element's surface group (empty, or one per element: an index into
  // groups(), -1 for none) and the first element found in two surface groups (then
  // element_groups() holds the first; a part's element is numbered in the whole mesh).
  const std::vector<SurfaceGroup>& groups() const { return groups_; }
  const std::vector<std::int32_t>& element_groups() const { return element_groups_; }
  const std::optional<GroupOverlap>& group_overlap() const { return group_overlap_; }

  // Number of triangles whose vertex order was reversed to make the surface
  // consistently oriented with outward normals.
  std::size_t flipped_triangles() const { return flipped_; }
  // Diagonal and centre of the axis-aligned bounding box.
  double diameter() const { return norm(box_max_ - box_min_); }
  Vec3 bounding_box_center() const { return (box_min_ + box_max_) * 0.5; }
  // Enclosed volume (positive: normals point outward).
  double volume() const { return volume_; }
  // Longest edge of any triangle.
  double max_edge() const { return max_edge_; }

 private:
  Mesh() = default;
  void compute_geometry();
  bool part_ = false;
  std::vector<std::uint8_t> vertex_complete_;
  std::size_t whole_size_ = 0, whole_vertices_ = 0;

  std::string name_;
  ImagePlanes planes_;
  std::vector<std::uint8_t> vertex_planes_;  // empty without planes
  std::vector<std::uint8_t> flush_;          // per element the plane bit it lies in (empty: none)
  std::vector<Vec3> vertices_;
  std::vector<Triangle> triangles_;
  std::vector<Vec3> centroids_, normals_;
  std::vector<double> areas_;
  std::vector<SurfaceGroup> groups_;
  std::vector<std::int32_t> element_groups_;
  std::optional<GroupOverlap> group_overlap_;
  std::size_t flipped_ = 0;
  Vec3 box_min_, box_max_;
  double volume_ = 0.0, max_edge_ = 0.0;
};

// Icosahedral sphere: 20 * 4^level triangles, vertices projected on the
// sphere of `radius` about `center`, normals outward. Triangle t's parent at the level above is
// t / 4 (each of the 20 faces subdivided in turn, depth first); vertices are numbered by where
// they lie, not by when they were made: the 12 corners of the icosahedron, then the points inside
// its 30 edges (2^level - 1 each), then those inside its 20 faces, so that any range of triangles
// can be generated alone with the same coordinates and indices (icosphere_slab). A valid closed
// surface that Mesh::from_surface keeps as it is (no flips, no merged vertices).
Surface make_icosphere(int level, double radius, const Vec3& center = {});
// Octahedral sphere: each of the octahedron's 8 faces (one per octant) split into 4^level
// triangles, vertices projected on the sphere of `radius` about the origin, normals outward.
// No triangle crosses a coordinate plane, so the part in x >= 0 (keep_positive[0]), y >= 0, z >= 0
// is a half, quarter or eighth that the coordinate planes close (the tests of symmetry planes).
// Vertices are repeated per face (Mesh::from_surface merges them). Throws fmbem::Error for a
// level outside 0..10 or a radius not positive and finite.
Surface make_octasphere(int level, double radius, std::array<bool, 3> keep_positive = {});

// Its triangles and vertices: 20 * 4^level and 10 * 4^level + 2 (level 0..10).
std::size_t icosphere_triangles(int level);
std::size_t icosphere_vertices(int level);

// A slab of a whole mesh's elements as one rank holds it: the elements
// [first, first + size()) of the whole mesh's order, each with its three corners (in the
// element's corner order) and their vertices' indices in the whole mesh, and the whole mesh's
// element and vertex counts. Its triangles are those of a valid, consistently oriented closed
// surface (the generator's or reader's promise: a slab is not validated whole).
struct MeshSlab {
  std::size_t first = 0;
  std::vector<Vec3> corners;           // 3 per element
  std::vector<std::int64_t> vertices;  // 3 per element
  std::size_t whole_elements = 0, whole_vertices = 0;
  std::size_t size() const { return corners.size() / 3; }
};

// Triangles [first, last) of make_icosphere(level, radius, center), generated alone (O(last -
// first + level) work): the same coordinates, bit for bit, and vertex indices. Throws
// fmbem::Error as make_icosphere does, and for a range outside 0..20 * 4^level.
MeshSlab icosphere_slab(int level, double radius, std::size_t first, std::size_t last,
                        const Vec3& center = {});

// What Mesh::from_surface requires of a surface's coordinates, from the largest magnitude of
// any coordinate and the bounding box of the used vertices: throws fmbem::Error naming `name`
// for coordinates beyond 1e30, a mesh under 1e-30 across, or one too far from the origin for
// its size. Returns the box's diameter.
double check_coordinate_scale(const std::string& name, double largest, const Vec3& lo,
                              const Vec3& hi);

// The cube [-side/2, side/2]^3, each face a divisions x divisions grid of squares split into two
// triangles each (12 divisions^2 triangles), normals outward: a body whose only sharp edges are
// the cube's 12 (tests of the feature-edge handling).
Surface make_box(int divisions, double side);

}  // namespace fmbem
