#pragma once

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "fmbem/bem/curvature_correction.hpp"
#include "fmbem/bem/density_reconstruction.hpp"
#include "fmbem/bem/layer_potentials.hpp"
#include "fmbem/bem/near_field.hpp"
#include "fmbem/fmm/distributed.hpp"
#include "fmbem/mesh/mesh.hpp"
#include "fmbem/mesh/neighbourhoods.hpp"

namespace fmbem {

// How far a rank's halo reaches beyond the elements its FMM reads: its rows'
// near-field columns out to pattern_factor corner radii (NearFieldOptions), and every element
// within `rings` vertex neighbourhoods of those, of the FMM's and of the rows.
struct HaloReach {
  int rings = 0;
  double pattern_factor = 2.5;
};

// The reach that CorrectedLayerPotentials's part reads with these options: with the quadratic
// read the pattern out to the refined radius and 3 rings (the fits are the elements read grown
// by two rings, and a fit reads the triangles at its corners); with the curvature correction at
// least 1 (an element's curvature vector reads the faces across its edges).
HaloReach halo_reach(const NearFieldOptions& near, DensityModel double_density,
                     bool curvature_correction);

namespace detail {
struct DistributedElementRecord;  // an element as the distribution moves it (distributed_mesh.cpp)
struct DistributedGroups;         // the whole mesh's groups on every rank (distributed_mesh.cpp)
}  // namespace detail

// Rank 0's surface groups and their overlap on every rank of comm (the other ranks' arguments
// are not read). Collective.
struct SurfaceGroupList {
  std::vector<SurfaceGroup> groups;
  std::optional<GroupOverlap> overlap;
};
SurfaceGroupList broadcast_group_list(MPI_Comm comm, std::span<const SurfaceGroup> groups,
                                      const std::optional<GroupOverlap>& overlap);

// Rank r's slab of a mesh of n elements over `ranks` ranks: elements [mesh_slab_begin(n, r,
// ranks), mesh_slab_begin(n, r + 1, ranks)) of the input order.
std::size_t mesh_slab_begin(std::size_t n, int rank, int ranks);

// The whole mesh's extent formed by the ranks of `comm` from their slabs (each rank's as
// mesh_slab_begin gives it), without any rank holding it: its box, longest edge, counts and no
// flips, bit for bit Mesh::from_surface's; its volume summed over each slab in element order,
// then over the slabs in rank order (equal to the whole mesh's to rounding). Checks what
// Mesh::from_surface checks of the coordinates (finite, their scale), naming `name`.
// Collective; errors are raised on every rank.
MeshExtent slab_extent(MPI_Comm comm, const MeshSlab& slab, const std::string& name);

// The whole mesh's vertices in this rank's block (vertex v on rank v P / V, as the stars of
// distributed_neighbourhood_reach), each once, in ascending order, with their coordinates, from
// the ranks' slabs: the vertices that no triangle uses are not there. Collective.
std::vector<Vec3> slab_vertex_block(MPI_Comm comm, const MeshSlab& slab);

// A mesh distributed over the ranks of `comm` for the distributed FMM. Each rank
// starts from its slab (N/P consecutive elements of the input order): rank 0 holds the whole
// mesh as read and sends each rank its slab, or each rank generates or reads its own
// (MeshSlab); the ranks partition the FMM's tree from their slabs (fmm::DistributedFmmPartition:
// the elements numbered part by part, each part a contiguous range of the solver's numbering),
// and each rank receives its part's elements and the halo its operator reads: every element
// with a source point in a leaf its FMM reads (the LET's readers of the leaf), every element
// whose near-field test can hold one of its rows, and everything within reach.rings vertex
// neighbourhoods of those. The halo is found from the tree's leaves and per-element bounds
// (neighbourhood_reach's, formed by the ranks from their slabs:
// distributed_neighbourhood_reach): a superset of what is read, checked where it is
// read (the FMM's part view counts each leaf's sources, a fit needs its corners complete).
// No rank but rank 0 holds more than its slab and its part with halo. Collective; errors are
// raised on every rank.
class DistributedMesh {
 public:
  // whole: the validated mesh on rank 0 (ignored elsewhere, may be null); name: the mesh's name
  // (every rank); quadrature_points and fmm: the discretisation's rule and the FMM's options
  // (its leaf size), as the operator's; observer (may be null): told of each phase on this rank.
  DistributedMesh(MPI_Comm comm, const Mesh* whole, const std::string& name, int quadrature_points,
                  const fmm::FmmOptions& fmm, const HaloReach& reach,
                  fmm::DistributionObserver* observer = nullptr);
  // slab: this rank's, generated or read by it (elements [mesh_slab_begin(N, rank, P),
  // mesh_slab_begin(N, rank + 1, P)), e.g. icosphere_slab), so that no rank holds the whole
  // mesh; its extent is formed by the ranks (slab_extent). The rest as above: from the same
  // slabs, the same parts, halos and local meshes as the whole mesh's on rank 0 gives.
  DistributedMesh(MPI_Comm comm, const MeshSlab& slab, const std::string& name,
                  int quadrature_points, const fmm::FmmOptions& fmm, const HaloReach& reach,
                  fmm::DistributionObserver* observer = nullptr);

  // This rank's part: its elements and halo in ascending order of their solver index (a
  // Mesh::part_of: no closedness, per-vertex completeness, the whole mesh's extent; the whole
  // mesh's groups and overlap, and each element's group, as rank 0's mesh has them; its image
  // planes, where the whole mesh has them: a mesh read in slabs has none).
  const Mesh& mesh() const { return *mesh_; }
  // Per element of mesh(): its index in the solver's numbering (ascending) and in the input.
  std::span<const std::size_t> solver_elements() const { return solver_elements_; }
  std::span<const std::size_t> input_elements() const { return input_elements_; }
  // The rank's rows, as elements of mesh() (contiguous), and the solver index of the first.
  RowRange rows() const { return rows_; }
  std::size_t first_row() const { return first_row_; }
  // The whole mesh's element count.
  std::size_t whole_size() const { return whole_size_; }
  // The partition: this rank's locally essential tree, the partition's tree as the shape of the
  // rank's FMMs (FmmPart::tree: a view of the cells they can read alone, with their
  // lists, fmm::cells_read_by_part), this part's modelled work and every part's size.
  const fmm::LocallyEssentialTree& locally_essential_tree() const { return let_; }
  std::shared_ptr<const fmm::Octree> tree() const { return tree_; }
  double work() const { return work_; }
  const std::vector<std::size_t>& part_sizes() const { return part_sizes_; }

 private:
  // From this rank's slab and the whole mesh's extent: the partition, the halo, the local mesh.
  // With image planes (the whole mesh's) each element's mirror sources are sources of it, its
  // mirror centroids split the tree, and the halo holds what the rows' mirror images read.
  void distribute(MPI_Comm comm, std::vector<detail::DistributedElementRecord>& slab,
                  const MeshExtent& extent, const detail::DistributedGroups& groups,
                  const ImagePlanes& planes, const std::string& name, int quadrature_points,
                  const fmm::FmmOptions& fmm, const HaloReach& reach,
                  fmm::DistributionObserver* observer);

  std::optional<Mesh> mesh_;  // set by the constructor
  std::vector<std::size_t> solver_elements_, input_elements_;
  RowRange rows_;
  std::size_t first_row_ = 0, whole_size_ = 0;
  fmm::LocallyEssentialTree let_;
  std::shared_ptr<const fmm::Octree> tree_;
  double work_ = 0.0;
  std::vector<std::size_t> part_sizes_;
};

// neighbourhood_reach's bounds of a slab of the whole mesh's elements, formed by the ranks of
// `comm` together, each from its slab alone: bit for bit those neighbourhood_reach
// forms from the whole mesh. slab: the rank's elements (a Mesh::part_of of their corners, each
// element's own, in the whole mesh's corner order); vertices: per slab element its three corners'
// indices in the whole mesh (3 per element), below vertex_count. Each vertex's star is gathered
// on one rank (vertex v on rank v P / vertex_count), which forms, ring by ring, each of its
// elements' largest |c_e - c_m| + reach(m) over the star; the element's ranks take the largest
// over its corners. Also gives each corner's valence (its triangles in the whole mesh).
// Collective; errors are raised on every rank.
struct SlabNeighbourhoodReach {
  NeighbourhoodReach bounds;
  std::vector<std::uint32_t> valences;  // 3 per slab element
};
SlabNeighbourhoodReach distributed_neighbourhood_reach(MPI_Comm comm, const Mesh& slab,
                                                       std::span<const std::int64_t> vertices,
                                                       std::size_t vertex_count, int rings);

// The whole surface's feature edges for the curvature correction of a distributed mesh (each
// rank's part holds those around its own elements alone): every rank's rows' own edges
// (feature_edge_segments with its rows: each edge of the whole mesh is one rank's), gathered on
// every rank in rank order. Collective; errors are raised on every rank.
std::vector<FeatureSegment> gather_feature_segments(MPI_Comm comm, const DistributedMesh& mesh,
                                                    double feature_angle);

}  // namespace fmbem
