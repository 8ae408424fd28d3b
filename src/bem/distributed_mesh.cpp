#include "fmbem/bem/distributed_mesh.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <limits>
#include <mutex>
#include <new>
#include <numeric>
#include <optional>
#include <string>
#include <utility>

#include "fmbem/bem/discretization.hpp"
#include "fmbem/core/error.hpp"
#include "fmbem/core/parallel_sort.hpp"
#include "fmbem/mesh/neighbourhoods.hpp"

namespace fmbem {

namespace detail {
// One element as it travels: its corners, their vertices in the whole mesh and how many
// triangles each has there, its surface group (Mesh::element_groups), its reach bounds, and its
// indices.
struct DistributedElementRecord {
  std::array<Vec3, 3> corners;
  std::array<std::int64_t, 3> vertices;
  std::array<std::uint32_t, 3> valences;
  std::int32_t group = -1;
  // Radii about the centroid: the FMM's readers within reach, the rows' owners within
  // pattern_reach (HaloReach, neighbourhood_reach).
  double reach = 0.0, pattern_reach = 0.0;
  std::uint64_t input = 0, solver = 0;
};

// The whole mesh's groups as every rank holds them: rank 0's mesh's list, whether its elements
// have groups (then each record carries its own) and its overlap.
struct DistributedGroups {
  std::vector<SurfaceGroup> groups;
  bool per_element = false;
  std::optional<GroupOverlap> overlap;
};
}  // namespace detail

SurfaceGroupList broadcast_group_list(MPI_Comm comm, std::span<const SurfaceGroup> groups,
                                      const std::optional<GroupOverlap>& overlap) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  // Per group its tag, dimension and name's length, then the overlap's flag and numbers; the
  // names joined; the two sizes first.
  std::vector<std::int64_t> numbers;
  std::string names;
  if (rank == 0) {
    for (const SurfaceGroup& g : groups) {
      numbers.insert(numbers.end(), {g.tag, g.dimension, std::int64_t(g.name.size())});
      names += g.name;
    }
    numbers.insert(numbers.end(), {std::int64_t(overlap.has_value()),
                                   overlap ? std::int64_t(overlap->triangle) : 0,
                                   overlap ? overlap->first : 0, overlap ? overlap->second : 0});
  }
  std::uint64_t sizes[2] = {numbers.size(), names.size()};
  MPI_Bcast(sizes, 2, MPI_UINT64_T, 0, comm);
  numbers.resize(sizes[0]);
  names.resize(sizes[1]);
  MPI_Bcast(numbers.data(), int(sizes[0]), MPI_INT64_T, 0, comm);
  MPI_Bcast(names.data(), int(sizes[1]), MPI_CHAR, 0, comm);
  SurfaceGroupList out;
  const std::size_t count = (numbers.size() - 4) / 3;
  std::size_t at = 0;
  for (std::size_t g = 0; g < count; ++g) {
    const std::int64_t* of_g = &numbers[3 * g];
    out.groups.push_back({names.substr(at, std::size_t(of_g[2])), int(of_g[0]), int(of_g[1])});
    at += std::size_t(of_g[2]);
  }
  const std::int64_t* tail = &numbers[3 * count];
  if (tail[0] != 0)
    out.overlap = GroupOverlap{std::size_t(tail[1]), std::int32_t(tail[2]), std::int32_t(tail[3])};
  return out;
}

namespace {

using ElementRecord = detail::DistributedElementRecord;
using detail::DistributedGroups;

// An MPI datatype of one T (counts in records, not bytes: no int overflow below 2^31 records).
template <class T>
class ContiguousType {
 public:
  ContiguousType() {
    MPI_Type_contiguous(int(sizeof(T)), MPI_BYTE, &type_);
    MPI_Type_commit(&type_);
  }
  ~ContiguousType() { MPI_Type_free(&type_); }
  ContiguousType(const ContiguousType&) = delete;
  ContiguousType& operator=(const ContiguousType&) = delete;
  MPI_Datatype get() const { return type_; }

 private:
  MPI_Datatype type_;
};

// Rank r's slab of the whole mesh: corners, vertices and indices (the bounds and valences are
// formed by the ranks, distributed_neighbourhood_reach).
std::vector<ElementRecord> slab_records(const Mesh& whole, std::size_t first, std::size_t last) {
  std::vector<ElementRecord> records(last - first);
  const std::vector<std::int32_t>& groups = whole.element_groups();
#pragma omp parallel for schedule(static)
  for (std::size_t e = first; e < last; ++e) {
    ElementRecord& r = records[e - first];
    if (!groups.empty()) r.group = groups[e];
    for (int c = 0; c < 3; ++c) {
      const std::int32_t v = whole.triangles()[e][std::size_t(c)];
      r.corners[std::size_t(c)] = whole.vertices()[std::size_t(v)];
      r.vertices[std::size_t(c)] = v;
    }
    r.input = e;
  }
  return records;
}

// Rank 0's groups to every rank, as numbers and the names' characters.
DistributedGroups broadcast_groups(MPI_Comm comm, const Mesh* whole) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  const bool root = rank == 0;
  SurfaceGroupList list = broadcast_group_list(
      comm, root ? std::span<const SurfaceGroup>(whole->groups()) : std::span<const SurfaceGroup>(),
      root ? whole->group_overlap() : std::optional<GroupOverlap>());
  std::int64_t per_element = root && !whole->element_groups().empty();
  MPI_Bcast(&per_element, 1, MPI_INT64_T, 0, comm);
  return {std::move(list.groups), per_element != 0, list.overlap};
}

// Rank 0's image planes, with the sides its validation found, to every rank.
ImagePlanes broadcast_planes(MPI_Comm comm, const Mesh* whole) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  // Per plane axis, offset and kind; then the sides and whether the data are halved.
  std::vector<double> numbers;
  if (rank == 0) {
    const ImagePlanes& planes = whole->image_planes();
    for (const ImagePlane& p : planes.planes())
      numbers.insert(numbers.end(), {double(p.axis), p.offset, double(int(p.kind))});
    for (std::size_t p = 0; p < 3; ++p)
      numbers.push_back(p < planes.sides().size() ? double(planes.sides()[p]) : 1.0);
    numbers.push_back(planes.halved_data() ? 1.0 : 0.0);
  }
  std::uint64_t count = numbers.size();
  MPI_Bcast(&count, 1, MPI_UINT64_T, 0, comm);
  numbers.resize(count);
  MPI_Bcast(numbers.data(), int(count), MPI_DOUBLE, 0, comm);
  std::vector<ImagePlane> list;
  const std::size_t planes_count = (count - 4) / 3;
  for (std::size_t p = 0; p < planes_count; ++p)
    list.push_back({int(numbers[3 * p]), numbers[3 * p + 1], PlaneKind(int(numbers[3 * p + 2]))});
  ImagePlanes planes(std::move(list));
  const double* tail = &numbers[3 * planes_count];
  planes.set_sides({int(tail[0]), int(tail[1]), int(tail[2])});
  return tail[3] != 0.0 ? planes : planes.with_whole_data();
}

// The distance from x to the cube of half width `half` about `center` (0 inside it).
double distance_to_cube(const Vec3& center, double half, const Vec3& x) {
  const auto outside = [half](double offset) { return std::max(std::abs(offset) - half, 0.0); };
  return norm(Vec3{outside(x.x - center.x), outside(x.y - center.y), outside(x.z - center.z)});
}

// A cell's cube's half width.
double half_width(const fmm::Octree& tree, int c) {
  return 0.5 * tree.width(tree.cells()[std::size_t(c)].level);
}

// Calls visit(leaf, distance) for each leaf of `tree` whose cube lies within `radius` of x
// (distance: from x to the cube, 0 inside it). `stack`: the descent's work space, kept by the
// caller from one call to the next (no allocation an element).
template <class Visit>
void for_each_leaf_within(const fmm::Octree& tree, const Vec3& x, double radius,
                          std::vector<int>& stack, Visit&& visit) {
  const auto& cells = tree.cells();
  stack.assign(1, 0);
  while (!stack.empty()) {
    const int c = stack.back();
    stack.pop_back();
    const double distance = distance_to_cube(cells[c].center, half_width(tree, c), x);
    if (distance > radius) continue;
    if (cells[c].is_leaf()) {
      visit(c, distance);
      continue;
    }
    for (int k = 0; k < cells[c].num_children; ++k) stack.push_back(cells[c].first_child + k);
  }
}

struct ReachPair {
  double reach = 0.0, largest = 0.0;
};

// Sends send[offsets[q] .. offsets[q] + counts[q]) to rank q (counts: one a rank); returns what
// each rank sent here, in rank order, with the counts received (to send answers back the same
// way).
template <class T>
struct Received {
  std::vector<T> values;
  std::vector<int> counts;
};
template <class T>
Received<T> all_to_all(MPI_Comm comm, const std::vector<T>& send, const std::vector<int>& counts) {
  const std::size_t size = counts.size();
  Received<T> received{{}, std::vector<int>(size, 0)};
  std::vector<int> offsets(size, 0), received_offsets(size, 0);
  std::exclusive_scan(counts.begin(), counts.end(), offsets.begin(), 0);
  MPI_Alltoall(counts.data(), 1, MPI_INT, received.counts.data(), 1, MPI_INT, comm);
  std::exclusive_scan(received.counts.begin(), received.counts.end(), received_offsets.begin(), 0);
  received.values.resize(
      std::size_t(std::accumulate(received.counts.begin(), received.counts.end(), 0)));
  const ContiguousType<T> type;
  MPI_Alltoallv(send.data(), counts.data(), offsets.data(), type.get(), received.values.data(),
                received.counts.data(), received_offsets.data(), type.get(), comm);
  return received;
}

// The error naming the first of `vertices` that is not one of the mesh's vertex_count, or empty.
std::string vertex_out_of_range(std::span<const std::int64_t> vertices, std::size_t vertex_count,
                                const char* what) {
  for (std::int64_t v : vertices)
    if (v < 0 || std::uint64_t(v) >= vertex_count)
      return std::string(what) + ": vertex " + std::to_string(v) + " is not one of the " +
             std::to_string(vertex_count) + " of the mesh";
  return {};
}

// Each vertex's rank: blocks of ceil(V / P) vertices in rank order.
struct VertexBlocks {
  VertexBlocks(std::size_t vertex_count, int ranks)
      : per_rank((std::uint64_t(vertex_count) + std::uint64_t(ranks) - 1) /
                 std::max<std::uint64_t>(1, std::uint64_t(ranks))) {}
  int owner(std::int64_t v) const { return int(std::uint64_t(v) / per_rank); }
  std::uint64_t per_rank;
};

}  // namespace

std::vector<Vec3> slab_vertex_block(MPI_Comm comm, const MeshSlab& slab) {
  int size = 1;
  MPI_Comm_size(comm, &size);
  struct Corner {
    std::int64_t vertex;
    Vec3 point;
  };
  const VertexBlocks blocks(slab.whole_vertices, size);
  fmm::throw_if_any_rank(comm,
                         vertex_out_of_range(slab.vertices, slab.whole_vertices, "slab vertices"));
  std::vector<int> counts(std::size_t(size), 0);
  for (std::int64_t v : slab.vertices) ++counts[std::size_t(blocks.owner(v))];
  std::vector<int> next(std::size_t(size), 0);
  std::exclusive_scan(counts.begin(), counts.end(), next.begin(), 0);
  std::vector<Corner> sent(slab.vertices.size());
  for (std::size_t i = 0; i < slab.vertices.size(); ++i)
    sent[std::size_t(next[std::size_t(blocks.owner(slab.vertices[i]))]++)] = {slab.vertices[i],
                                                                              slab.corners[i]};
  const std::vector<Corner> received = all_to_all(comm, sent, counts).values;
  // A vertex's corners carry the same point: the first received of each vertex stands for it,
  // placed by its index in this rank's block of vertices (no sort of the corners).
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  const std::uint64_t base = std::uint64_t(rank) * blocks.per_rank;
  const std::uint64_t block_size = std::min<std::uint64_t>(
      blocks.per_rank,
      std::uint64_t(slab.whole_vertices) - std::min<std::uint64_t>(base, slab.whole_vertices));
  std::vector<char> held(block_size, 0);
  std::vector<Vec3> by_vertex(block_size);
  for (const Corner& corner : received) {
    const std::uint64_t at = std::uint64_t(corner.vertex) - base;
    if (!held[at]) by_vertex[at] = corner.point;
    held[at] = 1;
  }
  std::vector<Vec3> block;
  for (std::uint64_t at = 0; at < block_size; ++at)
    if (held[at]) block.push_back(by_vertex[at]);
  return block;
}

SlabNeighbourhoodReach distributed_neighbourhood_reach(MPI_Comm comm, const Mesh& slab,
                                                       std::span<const std::int64_t> vertices,
                                                       std::size_t vertex_count, int rings) {
  int size = 1;
  MPI_Comm_size(comm, &size);
  std::string error;
  if (rings < 0) error = "neighbourhood reach: the rings must be 0 or more";
  if (vertices.size() != 3 * slab.size())
    error = "neighbourhood reach: 3 vertices an element are needed, " +
            std::to_string(vertices.size()) + " given for " + std::to_string(slab.size());
  if (const std::string out = vertex_out_of_range(vertices, vertex_count, "neighbourhood reach");
      !out.empty())
    error = out;
  fmm::throw_if_any_rank(comm, error);

  const std::size_t n = slab.size(), corners = 3 * n;
  const std::vector<Vec3>& centroids = slab.centroids();
  SlabNeighbourhoodReach out;
  NeighbourhoodReach& bounds = out.bounds;
  bounds.reach.resize(n);
#pragma omp parallel for schedule(static)
  for (std::size_t e = 0; e < n; ++e) bounds.reach[e] = element_corner_radius(slab, e);
  bounds.largest_corner_radius = bounds.reach;

  // Each corner goes to its vertex's rank (blocks of vertices), in rank order: slot[i] is corner
  // i's place in what is sent, and in what comes back.
  const VertexBlocks blocks(vertex_count, size);
  const std::uint64_t per_rank = blocks.per_rank;
  const auto owner = [&](std::int64_t v) { return blocks.owner(v); };
  std::vector<int> counts(std::size_t(size), 0);
  for (std::int64_t v : vertices) ++counts[std::size_t(owner(v))];
  std::vector<int> next(std::size_t(size), 0);
  std::exclusive_scan(counts.begin(), counts.end(), next.begin(), 0);
  std::vector<std::size_t> slot(corners);
  Received<std::int64_t> star_vertices;
  {
    std::vector<std::int64_t> sent(corners);
    for (std::size_t i = 0; i < corners; ++i) {
      slot[i] = std::size_t(next[std::size_t(owner(vertices[i]))]++);
      sent[slot[i]] = vertices[i];
    }
    star_vertices = all_to_all(comm, sent, counts);
  }
  const std::vector<int>& received_counts = star_vertices.counts;
  const std::size_t members = star_vertices.values.size();

  // The stars: the received corners grouped by vertex, by a counting sort over this rank's block
  // of vertices (each star in the order received). Vertices of no triangle make empty stars.
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  const std::uint64_t first_vertex =
                          std::min<std::uint64_t>(per_rank * std::uint64_t(rank), vertex_count),
                      last_vertex = std::min<std::uint64_t>(first_vertex + per_rank, vertex_count);
  std::vector<std::size_t> star_begin(last_vertex - first_vertex + 1, 0);
  for (std::int64_t v : star_vertices.values)
    ++star_begin[std::size_t(std::uint64_t(v) - first_vertex) + 1];
  std::partial_sum(star_begin.begin(), star_begin.end(), star_begin.begin());
  std::vector<std::size_t> by_vertex(members);
  {
    std::vector<std::size_t> next(star_begin.begin(), star_begin.end() - 1);
    for (std::size_t i = 0; i < members; ++i)
      by_vertex[next[std::size_t(std::uint64_t(star_vertices.values[i]) - first_vertex)]++] = i;
  }
  const std::size_t stars = star_begin.size() - 1;

  // Each corner's valence: its star's size.
  {
    std::vector<std::uint32_t> valence(members);
#pragma omp parallel for schedule(static)
    for (std::size_t s = 0; s < stars; ++s)
      for (std::size_t k = star_begin[s]; k < star_begin[s + 1]; ++k)
        valence[by_vertex[k]] = std::uint32_t(star_begin[s + 1] - star_begin[s]);
    const std::vector<std::uint32_t> back = all_to_all(comm, valence, received_counts).values;
    out.valences.resize(corners);
#pragma omp parallel for schedule(static)
    for (std::size_t i = 0; i < corners; ++i) out.valences[i] = back[slot[i]];
  }
  if (rings == 0) return out;

  // The members' centroids, sent as the vertices were (the same slots).
  std::vector<Vec3> star_centroids;
  {
    std::vector<Vec3> sent(corners);
#pragma omp parallel for schedule(static)
    for (std::size_t i = 0; i < corners; ++i) sent[slot[i]] = centroids[i / 3];
    star_centroids = all_to_all(comm, sent, counts).values;
  }

  // Ring by ring as neighbourhood_reach: reach(e) = max over m sharing a corner with e (e
  // included) of |c_e - c_m| + reach(m); the star's rank forms the max over its star, the
  // element's rank over its corners (max is exact: the same bits in any order).
  std::vector<ReachPair> current(corners);
  for (int ring = 0; ring < rings; ++ring) {
#pragma omp parallel for schedule(static)
    for (std::size_t i = 0; i < corners; ++i)
      current[slot[i]] = {bounds.reach[i / 3], bounds.largest_corner_radius[i / 3]};
    const std::vector<ReachPair> of_members = all_to_all(comm, current, counts).values;
    std::vector<ReachPair> answers(of_members.size());
#pragma omp parallel
    {
      std::vector<double> reach;  // the star's members' maxima
#pragma omp for schedule(dynamic, 256)
      for (std::size_t s = 0; s < stars; ++s) {
        const std::size_t begin = star_begin[s], count = star_begin[s + 1] - begin;
        double largest = 0.0;
        reach.resize(count);
        // Each member against itself (distance 0), then each pair once: |c_a - c_b| and
        // |c_b - c_a| are the same bits.
        for (std::size_t a = 0; a < count; ++a) {
          const ReachPair& member = of_members[by_vertex[begin + a]];
          largest = std::max(largest, member.largest);
          reach[a] = member.reach;
        }
        for (std::size_t a = 0; a < count; ++a) {
          const std::size_t ea = by_vertex[begin + a];
          for (std::size_t b = a + 1; b < count; ++b) {
            const std::size_t eb = by_vertex[begin + b];
            const double distance = norm(star_centroids[ea] - star_centroids[eb]);
            reach[a] = std::max(reach[a], distance + of_members[eb].reach);
            reach[b] = std::max(reach[b], distance + of_members[ea].reach);
          }
        }
        for (std::size_t a = 0; a < count; ++a) answers[by_vertex[begin + a]] = {reach[a], largest};
      }
    }
    const std::vector<ReachPair> back = all_to_all(comm, answers, received_counts).values;
#pragma omp parallel for schedule(static)
    for (std::size_t e = 0; e < n; ++e)
      for (std::size_t k = 3 * e; k < 3 * e + 3; ++k) {
        const ReachPair& answer = back[slot[k]];
        bounds.reach[e] = std::max(bounds.reach[e], answer.reach);
        bounds.largest_corner_radius[e] = std::max(bounds.largest_corner_radius[e], answer.largest);
      }
  }
  return out;
}

HaloReach halo_reach(const NearFieldOptions& near, DensityModel double_density,
                     bool curvature_correction) {
  HaloReach reach{0, near.near_factor};
  if (double_density == DensityModel::quadratic) {
    reach.rings = 3;
    reach.pattern_factor = std::max(near.near_factor, near.refined_factor);
  }
  if (curvature_correction) reach.rings = std::max(reach.rings, 1);
  return reach;
}

std::size_t mesh_slab_begin(std::size_t n, int rank, int ranks) {
  return n * std::size_t(rank) / std::size_t(ranks);
}

MeshExtent slab_extent(MPI_Comm comm, const MeshSlab& slab, const std::string& name) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  std::string error;
  if (slab.vertices.size() != slab.corners.size() || slab.corners.size() % 3 != 0)
    error = "mesh '" + name + "': rank " + std::to_string(rank) +
            "'s slab needs three corners and three vertex indices an element";
  for (const Vec3& p : slab.corners)
    if (error.empty() && (!std::isfinite(p.x) || !std::isfinite(p.y) || !std::isfinite(p.z)))
      error = "mesh '" + name + "': a vertex has a non-finite coordinate";
  fmm::throw_if_any_rank(comm, error);
  // Per slab: the box, the largest coordinate and edge (exact under min and max: the whole
  // mesh's bits in any order), and the volume in element order, as Mesh::compute_geometry.
  constexpr double inf = std::numeric_limits<double>::infinity();
  std::array<double, 3> low{inf, inf, inf}, high{-inf, -inf, -inf};
  double extremes[2] = {0.0, 0.0};  // largest |coordinate|, longest edge
  double volume = 0.0;
  for (std::size_t e = 0; e < slab.size(); ++e) {
    const Vec3 &a = slab.corners[3 * e], &b = slab.corners[3 * e + 1], &c = slab.corners[3 * e + 2];
    for (const Vec3& p : {a, b, c}) {
      low = {std::min(low[0], p.x), std::min(low[1], p.y), std::min(low[2], p.z)};
      high = {std::max(high[0], p.x), std::max(high[1], p.y), std::max(high[2], p.z)};
      extremes[0] = std::max({extremes[0], std::abs(p.x), std::abs(p.y), std::abs(p.z)});
    }
    extremes[1] = std::max({extremes[1], norm(b - a), norm(c - b), norm(a - c)});
    volume += dot(a, cross(b, c)) / 6.0;
  }
  MPI_Allreduce(MPI_IN_PLACE, low.data(), 3, MPI_DOUBLE, MPI_MIN, comm);
  MPI_Allreduce(MPI_IN_PLACE, high.data(), 3, MPI_DOUBLE, MPI_MAX, comm);
  MPI_Allreduce(MPI_IN_PLACE, extremes, 2, MPI_DOUBLE, MPI_MAX, comm);
  std::vector<double> volumes(std::size_t(size), 0.0);
  MPI_Allgather(&volume, 1, MPI_DOUBLE, volumes.data(), 1, MPI_DOUBLE, comm);
  // Every rank the same slab split of the same mesh: per rank its first element, its size, the
  // whole mesh's elements and vertices.
  const std::uint64_t mine[4] = {slab.first, slab.size(), slab.whole_elements, slab.whole_vertices};
  std::vector<std::uint64_t> slabs(4 * std::size_t(size));
  MPI_Allgather(mine, 4, MPI_UINT64_T, slabs.data(), 4, MPI_UINT64_T, comm);
  const std::uint64_t whole = slabs[2], vertices = slabs[3];
  for (int r = 0; r < size && error.empty(); ++r) {
    const std::uint64_t* of_r = &slabs[4 * std::size_t(r)];
    const std::size_t first = mesh_slab_begin(whole, r, size),
                      last = mesh_slab_begin(whole, r + 1, size);
    if (of_r[2] != whole || of_r[0] != first || of_r[1] != last - first)
      error = "mesh '" + name + "': rank " + std::to_string(r) + "'s slab is elements [" +
              std::to_string(of_r[0]) + ", " + std::to_string(of_r[0] + of_r[1]) + ") of " +
              std::to_string(of_r[2]) + ", not [" + std::to_string(first) + ", " +
              std::to_string(last) + ") of " + std::to_string(whole) + " (a defect)";
    else if (of_r[3] != vertices)
      error = "mesh '" + name + "': the ranks' slabs give different vertex counts (a defect)";
  }
  if (error.empty() && whole == 0) error = "mesh '" + name + "': contains no triangles";
  for (std::int64_t v : slab.vertices)
    if (error.empty() && (v < 0 || std::uint64_t(v) >= vertices))
      error = "mesh '" + name + "': a triangle refers to a missing vertex";
  fmm::throw_if_any_rank(comm, error);
  check_coordinate_scale(name, extremes[0], Vec3{low[0], low[1], low[2]},
                         Vec3{high[0], high[1], high[2]});
  MeshExtent extent;
  extent.box_min = {low[0], low[1], low[2]};
  extent.box_max = {high[0], high[1], high[2]};
  extent.volume = 0.0;
  for (double v : volumes) extent.volume += v;
  extent.max_edge = extremes[1];
  extent.elements = whole;
  extent.flipped = 0;
  extent.vertices = vertices;
  return extent;
}

DistributedMesh::DistributedMesh(MPI_Comm comm, const Mesh* whole, const std::string& name,
                                 int quadrature_points, const fmm::FmmOptions& fmm,
                                 const HaloReach& reach, fmm::DistributionObserver* observer) {
  using fmm::DistributionPhase;
  using Scope = fmm::DistributionPhaseScope;
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  std::string error;
  if (rank == 0 && whole == nullptr) error = "distributed mesh: rank 0 needs the whole mesh";
  if (rank == 0 && whole != nullptr && whole->is_part())
    error = "distributed mesh: rank 0's mesh is a part, not the whole mesh";
  fmm::throw_if_any_rank(comm, error);

  // The whole mesh's extent and size, from rank 0.
  MeshExtent extent;
  if (rank == 0) extent = whole->extent();
  MPI_Bcast(&extent, int(sizeof(extent)), MPI_BYTE, 0, comm);
  const std::size_t first = mesh_slab_begin(extent.elements, rank, size),
                    last = mesh_slab_begin(extent.elements, rank + 1, size);

  // Rank 0 sends each rank its slab in turn: one slab's records at a time, not the whole mesh's.
  const ContiguousType<ElementRecord> record_type;
  std::vector<ElementRecord> slab;
  if (Scope scope(observer, DistributionPhase::slabs); rank == 0) {
    for (int r = size - 1; r >= 0; --r) {
      slab = slab_records(*whole, mesh_slab_begin(extent.elements, r, size),
                          mesh_slab_begin(extent.elements, r + 1, size));
      if (r > 0) MPI_Send(slab.data(), int(slab.size()), record_type.get(), r, 0, comm);
    }
  } else {
    slab.resize(last - first);
    MPI_Recv(slab.data(), int(slab.size()), record_type.get(), 0, 0, comm, MPI_STATUS_IGNORE);
  }
  distribute(comm, slab, extent, broadcast_groups(comm, whole), broadcast_planes(comm, whole), name,
             quadrature_points, fmm, reach, observer);
}

DistributedMesh::DistributedMesh(MPI_Comm comm, const MeshSlab& mesh_slab, const std::string& name,
                                 int quadrature_points, const fmm::FmmOptions& fmm,
                                 const HaloReach& reach, fmm::DistributionObserver* observer) {
  std::vector<ElementRecord> slab;
  MeshExtent extent;
  {
    fmm::DistributionPhaseScope scope(observer, fmm::DistributionPhase::slabs);
    extent = slab_extent(comm, mesh_slab, name);
    slab.resize(mesh_slab.size());
#pragma omp parallel for schedule(static)
    for (std::size_t e = 0; e < slab.size(); ++e) {
      ElementRecord& r = slab[e];
      for (std::size_t c = 0; c < 3; ++c) {
        r.corners[c] = mesh_slab.corners[3 * e + c];
        r.vertices[c] = mesh_slab.vertices[3 * e + c];
      }
      r.input = mesh_slab.first + e;
    }
  }
  // A mesh read in slabs (a generated icosphere) has no groups.
  distribute(comm, slab, extent, {}, {}, name, quadrature_points, fmm, reach, observer);
}

void DistributedMesh::distribute(MPI_Comm comm, std::vector<ElementRecord>& slab,
                                 const MeshExtent& extent, const DistributedGroups& groups,
                                 const ImagePlanes& planes, const std::string& name,
                                 int quadrature_points, const fmm::FmmOptions& fmm,
                                 const HaloReach& reach, fmm::DistributionObserver* observer) {
  using fmm::DistributionPhase;
  using Scope = fmm::DistributionPhaseScope;
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  std::string error;
  if (reach.rings < 0 || !(reach.pattern_factor >= 0.0) || !std::isfinite(reach.pattern_factor))
    error = "distributed mesh: the halo's rings and pattern factor must be 0 or more";
  fmm::throw_if_any_rank(comm, error);
  whole_size_ = extent.elements;
  const std::size_t first = mesh_slab_begin(whole_size_, rank, size);
  const ContiguousType<ElementRecord> record_type;

  std::unique_ptr<fmm::DistributedFmmPartition> partition;
  {
    // A mesh of the slab's triangles: the same corners as the whole mesh's, so the same
    // centroids and quadrature points, bit for bit.
    std::vector<Vec3> corners;
    std::vector<Triangle> triangles;
    std::vector<std::int64_t> vertex_ids;
    corners.reserve(3 * slab.size());
    vertex_ids.reserve(3 * slab.size());
    for (const ElementRecord& r : slab) {
      const std::int32_t at = std::int32_t(corners.size());
      corners.insert(corners.end(), r.corners.begin(), r.corners.end());
      vertex_ids.insert(vertex_ids.end(), r.vertices.begin(), r.vertices.end());
      triangles.push_back({at, at + 1, at + 2});
    }
    std::vector<std::uint8_t> complete(corners.size(), 0);
    const Mesh slab_mesh =
        Mesh::part_of(name, std::move(corners), std::move(triangles), std::move(complete), extent);

    // The halo bounds and the corners' valences, from the whole mesh's neighbourhoods formed by
    // the ranks together.
    {
      Scope scope(observer, DistributionPhase::bounds);
      const SlabNeighbourhoodReach formed = distributed_neighbourhood_reach(
          comm, slab_mesh, vertex_ids, extent.vertices, reach.rings);
      // Rounding in the distances tested against the bounds: far below any element's size.
      const double margin = 1e-9 * slab_mesh.diameter();
      for (std::size_t e = 0; e < slab.size(); ++e) {
        ElementRecord& r = slab[e];
        for (std::size_t c = 0; c < 3; ++c) r.valences[c] = formed.valences[3 * e + c];
        r.reach = formed.bounds.reach[e] + margin;
        r.pattern_reach = formed.bounds.reach[e] +
                          reach.pattern_factor * formed.bounds.largest_corner_radius[e] + margin;
      }
    }

    // The partition from the slabs' points, formed as Discretization forms them; with image
    // planes each element's mirror images of them too (image-major after the real ones, as the
    // operator's FMM holds them: FmmLayerPotentials).
    const TriangleRule& rule = triangle_rule(quadrature_points);
    const std::size_t images = planes.images();
    std::vector<Vec3> sources = quadrature_points_of(slab_mesh, rule, 0, slab_mesh.size());
    const std::size_t real_sources = sources.size();
    if (images > 1) sources = planes.images_of(sources);
    const std::vector<Vec3> mirror_centroids = planes.images_of(slab_mesh.centroids(), 1);
    std::vector<std::size_t> source_element(sources.size());
    for (std::size_t s = 0; s < sources.size(); ++s)
      source_element[s] = s % real_sources / rule.size();
    fmm::MirrorImages mirror;
    if (images > 1) {
      mirror.splitting_points = mirror_centroids;
      mirror.real_position = [&planes](const Vec3& x) { return planes.real_image(x); };
    }
    partition = std::make_unique<fmm::DistributedFmmPartition>(
        comm, sources, slab_mesh.centroids(), source_element, first, fmm, observer, mirror);
    // Which parts need each slab element: its owner, the FMM's readers of the leaves within
    // its reach, the owners of the leaves within its pattern reach (their rows).
    std::vector<std::pair<int, std::size_t>> sends;  // (part, slab element)
    {
      Scope scope(observer, DistributionPhase::halo);
      const fmm::Octree& tree = partition->tree();
      const fmm::TreePartition& cut = partition->partition();
      // Each leaf's readers: the partition's for its slab's source leaves (formed in a batch),
      // any other's formed once by whichever thread first needs them.
      std::vector<std::vector<int>> readers(tree.cells().size());
      std::vector<std::once_flag> readers_formed(tree.cells().size());
      const auto readers_of = [&](int leaf) -> const std::vector<int>& {
        if (const std::vector<int>* formed = partition->slab_leaf_readers(leaf)) return *formed;
        std::call_once(readers_formed[std::size_t(leaf)],
                       [&] { readers[std::size_t(leaf)] = cut.readers_of_leaf(leaf); });
        return readers[std::size_t(leaf)];
      };
      // The elements grouped by the leaf holding their centroid (a split point of the tree: each
      // lies in a leaf, DistributedFmmPartition::slab_leaves, which the partition checks on
      // every rank): one descent a group finds the leaves
      // within its elements' largest reach of the leaf's centre o, and each element tests those
      // alone. A leaf within r of c_e lies within r + |c_e - o| of o, so an element finds every
      // leaf a descent of its own finds (that descent also drops a leaf whose parent's distance
      // rounds above r: a leaf more here, within r, is still only a recipient more).
      const std::vector<Vec3>& centroids = slab_mesh.centroids();
      std::vector<std::pair<int, std::size_t>> by_leaf(slab.size());
      {
        const std::vector<int>& leaves = partition->slab_leaves();
#pragma omp parallel for schedule(static)
        for (std::size_t e = 0; e < slab.size(); ++e) by_leaf[e] = {leaves[e], e};
      }
      parallel_sort(by_leaf.begin(), by_leaf.end());
      std::vector<std::size_t> group_begin;
      for (std::size_t i = 0; i < by_leaf.size(); ++i)
        if (i == 0 || by_leaf[i].first != by_leaf[i - 1].first) group_begin.push_back(i);
      group_begin.push_back(by_leaf.size());
      // No exception may leave an OpenMP region: memory running out is caught per group and
      // raised after it, on every rank.
      std::atomic<bool> out_of_memory{false};
#pragma omp parallel
      {
        std::vector<std::pair<int, std::size_t>> own_sends;
        std::vector<int> stack;
        // A group's leaves within reach, with what each element's test and recipients need.
        struct Candidate {
          Vec3 center;
          double half;
          int leaf, part;
          const std::vector<int>* readers;  // formed when an element first needs them
        };
        // Per image: the leaves within reach of the group's mirror image (an element's mirror
        // sources are read there, and rows there have it as a mirror image's close pair).
        std::vector<std::vector<Candidate>> candidates(images);
        // The parts an element is sent to, each once: marked with the element's number.
        std::vector<std::size_t> marked(std::size_t(size), std::numeric_limits<std::size_t>::max());
        const auto send = [&](int q, std::size_t e) {
          if (marked[std::size_t(q)] == e) return;
          marked[std::size_t(q)] = e;
          own_sends.emplace_back(q, e);
        };
        const std::size_t groups = group_begin.size() - 1;
#pragma omp for schedule(dynamic, 16) nowait
        for (std::size_t g = 0; g < groups; ++g) {
          if (out_of_memory) continue;
          try {
            const Vec3 origin = tree.cells()[std::size_t(by_leaf[group_begin[g]].first)].center;
            double radius = 0.0;
            for (std::size_t i = group_begin[g]; i < group_begin[g + 1]; ++i) {
              const std::size_t e = by_leaf[i].second;
              radius = std::max(radius, slab[e].pattern_reach + norm(centroids[e] - origin));
            }
            // (A reflection keeps distances: the radius serves every image.)
            for (std::size_t image = 0; image < images; ++image) {
              candidates[image].clear();
              for_each_leaf_within(
                  tree, planes.reflect(image, origin), radius, stack, [&](int leaf, double) {
                    candidates[image].push_back({tree.cells()[std::size_t(leaf)].center,
                                                 half_width(tree, leaf), leaf,
                                                 cut.part_of_leaf(leaf), nullptr});
                  });
            }
            for (std::size_t i = group_begin[g]; i < group_begin[g + 1]; ++i) {
              const std::size_t e = by_leaf[i].second;
              ElementRecord& r = slab[e];
              r.solver = partition->slab_new_indices()[e];
              send(partition->slab_parts()[e], e);
              for (std::size_t image = 0; image < images; ++image) {
                const Vec3 centroid = planes.reflect(image, centroids[e]);
                for (Candidate& c : candidates[image]) {
                  const double distance = distance_to_cube(c.center, c.half, centroid);
                  if (distance > r.pattern_reach) continue;
                  send(c.part, e);
                  if (distance > r.reach) continue;
                  if (!c.readers) c.readers = &readers_of(c.leaf);
                  for (int q : *c.readers) send(q, e);
                }
              }
            }
          } catch (const std::bad_alloc&) {
            out_of_memory = true;
          }
        }
#pragma omp critical(distributed_mesh_sends)
        try {
          sends.insert(sends.end(), own_sends.begin(), own_sends.end());
        } catch (const std::bad_alloc&) {
          out_of_memory = true;
        }
      }
      if (out_of_memory)
        error = "distributed mesh: out of memory finding rank " + std::to_string(rank) +
                "'s halo recipients";
      fmm::throw_if_any_rank(comm, error);
    }
    Scope scope(observer, DistributionPhase::records);
    // By part, then element: the same buffer whatever the threads' order.
    parallel_sort(sends.begin(), sends.end());
    std::vector<ElementRecord> send_buffer(sends.size());
    std::vector<int> send_counts(std::size_t(size), 0), send_offsets(std::size_t(size), 0);
#pragma omp parallel for schedule(static)
    for (std::size_t i = 0; i < sends.size(); ++i) send_buffer[i] = slab[sends[i].second];
    for (const auto& [q, e] : sends) ++send_counts[std::size_t(q)];
    std::exclusive_scan(send_counts.begin(), send_counts.end(), send_offsets.begin(), 0);
    std::vector<int> receive_counts(std::size_t(size), 0), receive_offsets(std::size_t(size), 0);
    MPI_Alltoall(send_counts.data(), 1, MPI_INT, receive_counts.data(), 1, MPI_INT, comm);
    std::exclusive_scan(receive_counts.begin(), receive_counts.end(), receive_offsets.begin(), 0);
    slab.clear();
    slab.shrink_to_fit();
    slab.resize(std::size_t(receive_offsets.back() + receive_counts.back()));
    MPI_Alltoallv(send_buffer.data(), send_counts.data(), send_offsets.data(), record_type.get(),
                  slab.data(), receive_counts.data(), receive_offsets.data(), record_type.get(),
                  comm);
  }
  let_ = partition->locally_essential_tree();
  {
    // The rank keeps, as its FMMs' shape, the partition tree's cells they can read (with every
    // own leaf as a target's) and their lists, not the whole tree's cells.
    const fmm::Octree& whole_tree = partition->tree();
    std::vector<int> own_leaves;
    for (int c : let_.own_cells)
      if (whole_tree.cells()[std::size_t(c)].is_leaf()) own_leaves.push_back(c);
    // And the cells of the diagonal levels (its wideband FMMs read the whole coarse tree).
    std::vector<int> held = fmm::cells_read_by_part(whole_tree, let_, own_leaves).held;
    const std::vector<int> coarse = fmm::diagonal_level_cells(whole_tree, fmm);
    held.insert(held.end(), coarse.begin(), coarse.end());
    std::sort(held.begin(), held.end());
    held.erase(std::unique(held.begin(), held.end()), held.end());
    tree_ = std::make_shared<const fmm::Octree>(whole_tree, held, std::span<const Vec3>{},
                                                std::span<const std::size_t>{},
                                                std::span<const Vec3>{});
  }
  work_ = partition->partition().work(rank);
  part_sizes_ = partition->part_sizes();
  partition.reset();

  // The part with its halo, in solver order (the records sorted by index: 16 bytes moved, not
  // 144); vertices numbered by their whole-mesh index.
  Scope local_mesh_scope(observer, DistributionPhase::local_mesh);
  const std::vector<ElementRecord>& part = slab;
  const std::size_t n = part.size();
  std::vector<std::pair<std::uint64_t, std::size_t>> solver_order(n);
#pragma omp parallel for schedule(static)
  for (std::size_t i = 0; i < n; ++i) solver_order[i] = {part[i].solver, i};
  parallel_sort(solver_order.begin(), solver_order.end());
  // The corners by whole-mesh vertex (then corner slot 3 e + c of the part's element e): each run
  // of one vertex is one local vertex, numbered in whole-mesh order, held by the run's length of
  // triangles. Every write below has one writer.
  std::vector<std::pair<std::int64_t, std::size_t>> corners_by_vertex(3 * n);
#pragma omp parallel for schedule(static)
  for (std::size_t e = 0; e < n; ++e) {
    const ElementRecord& r = part[solver_order[e].second];
    for (std::size_t c = 0; c < 3; ++c) corners_by_vertex[3 * e + c] = {r.vertices[c], 3 * e + c};
  }
  parallel_sort(corners_by_vertex.begin(), corners_by_vertex.end());
  std::vector<std::size_t> run_begin;  // per local vertex, its first corner in corners_by_vertex
  for (std::size_t k = 0; k < corners_by_vertex.size(); ++k)
    if (k == 0 || corners_by_vertex[k].first != corners_by_vertex[k - 1].first)
      run_begin.push_back(k);
  run_begin.push_back(corners_by_vertex.size());
  const std::size_t vertex_count = run_begin.size() - 1;
  std::vector<Vec3> vertices(vertex_count);
  std::vector<std::uint8_t> complete(vertex_count);
  std::vector<Triangle> triangles(n);
#pragma omp parallel for schedule(static)
  for (std::size_t v = 0; v < vertex_count; ++v) {
    const std::size_t first_slot = corners_by_vertex[run_begin[v]].second;
    const ElementRecord& r = part[solver_order[first_slot / 3].second];
    vertices[v] = r.corners[first_slot % 3];
    complete[v] = run_begin[v + 1] - run_begin[v] == r.valences[first_slot % 3];
    for (std::size_t k = run_begin[v]; k < run_begin[v + 1]; ++k) {
      const std::size_t slot = corners_by_vertex[k].second;
      triangles[slot / 3][slot % 3] = std::int32_t(v);
    }
  }
  solver_elements_.resize(n);
  input_elements_.resize(n);
  std::vector<std::int32_t> element_groups(groups.per_element ? n : 0);
#pragma omp parallel for schedule(static)
  for (std::size_t e = 0; e < n; ++e) {
    const ElementRecord& r = part[solver_order[e].second];
    solver_elements_[e] = r.solver;
    input_elements_[e] = r.input;
    if (groups.per_element) element_groups[e] = r.group;
  }
  first_row_ = std::accumulate(part_sizes_.begin(), part_sizes_.begin() + rank, std::size_t(0));
  const auto row_begin =
      std::lower_bound(solver_elements_.begin(), solver_elements_.end(), first_row_) -
      solver_elements_.begin();
  const auto row_end = std::lower_bound(solver_elements_.begin(), solver_elements_.end(),
                                        first_row_ + part_sizes_[std::size_t(rank)]) -
                       solver_elements_.begin();
  rows_ = {std::size_t(row_begin), std::size_t(row_end)};
  if (rows_.size() != part_sizes_[std::size_t(rank)])
    error = "distributed mesh: rank " + std::to_string(rank) + " received " +
            std::to_string(rows_.size()) + " of its " +
            std::to_string(part_sizes_[std::size_t(rank)]) +
            " elements (a defect: please report it)";
  fmm::throw_if_any_rank(comm, error);
  slab.clear();
  slab.shrink_to_fit();
  mesh_.emplace(Mesh::part_of(name, std::move(vertices), std::move(triangles), std::move(complete),
                              extent, std::move(element_groups), groups.groups, groups.overlap,
                              planes));
}

std::vector<FeatureSegment> gather_feature_segments(MPI_Comm comm, const DistributedMesh& mesh,
                                                    double feature_angle) {
  int size = 1;
  MPI_Comm_size(comm, &size);
  std::vector<FeatureSegment> own;
  std::string error;
  try {
    own = feature_edge_segments(mesh.mesh(), feature_angle, mesh.rows());
  } catch (const Error& e) {
    error = e.what();
  }
  fmm::throw_if_any_rank(comm, error);
  const ContiguousType<FeatureSegment> segment_type;
  int count = int(own.size());
  std::vector<int> counts(static_cast<std::size_t>(size)), offsets(counts.size());
  MPI_Allgather(&count, 1, MPI_INT, counts.data(), 1, MPI_INT, comm);
  std::exclusive_scan(counts.begin(), counts.end(), offsets.begin(), 0);
  std::vector<FeatureSegment> all(std::size_t(offsets.back() + counts.back()));
  MPI_Allgatherv(own.data(), count, segment_type.get(), all.data(), counts.data(), offsets.data(),
                 segment_type.get(), comm);
  return all;
}

}  // namespace fmbem
