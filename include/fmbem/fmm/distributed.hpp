#pragma once
#include <mpi.h>

#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "fmbem/fmm/fmm.hpp"
#include "fmbem/fmm/partition.hpp"

// The distributed FMM's set-up: the whole problem's tree, as every rank's Fmm builds
// it, cut into parts of balanced work (TreePartition). Each rank then builds its Fmm with its
// part's elements as targets (and every element as a splitting point), calls
// Fmm::distribute_upward_pass with a MultipoleExchange of its LocallyEssentialTree, and feeds
// apply the strengths of Fmm::sources_read() alone.
namespace fmbem::fmm {

// The work model in units of one near pair, from the H100 calibration of
// bench/results/partition_volume.md (p = 8 and 16, log-linear in p between and beyond). Only the
// ratios matter to the partition; the CPU's ratios are of the same order (an M2L pair is a
// p^2 x p^2 complex matrix-vector product, a near pair one kernel evaluation).
WorkModel default_work_model(int order);

class FmmPartition {
 public:
  // sources: the quadrature points; targets: every element's collocation point (also the
  // splitting points); source_element: per source, its element. The leaf size and the order are
  // chosen from options as Fmm chooses them. Throws fmbem::Error for parts < 1 or bad sizes.
  FmmPartition(std::span<const Vec3> sources, std::span<const Vec3> targets,
               std::span<const std::size_t> source_element, const FmmOptions& options, int parts);

  const Octree& tree() const { return *tree_; }
  const TreePartition& partition() const { return *partition_; }
  int parts() const { return partition_->parts(); }
  // The elements by part (part 0's ascending, then part 1's, ...): new index -> input index. A
  // numbering in which each part's elements are contiguous (PETSc's row ownership); the identity
  // for one part.
  std::vector<std::size_t> element_order() const;
  // Per part, its element count.
  std::vector<std::size_t> part_sizes() const;

 private:
  std::unique_ptr<Octree> tree_;
  std::unique_ptr<TreePartition> partition_;
};

// Sums and extremes over the ranks of a communicator, one part of a split point set each
// (Octree's tree of a split point set). Collective: every rank calls each reduction in turn.
class MpiPartReduction final : public Octree::PartReduction {
 public:
  explicit MpiPartReduction(MPI_Comm comm) : comm_(comm) {}
  void extremes(std::array<double, 3>& low, std::array<double, 3>& high) const override;
  void sum(std::span<std::size_t> counts) const override;

 private:
  MPI_Comm comm_;
};

// The phases of the distributed set-up, as DistributedFmmPartition and bem's DistributedMesh run
// them, for -log_view and the benchmarks: slabs (rank 0 sends each rank its slab of the mesh),
// bounds (the halo bounds and valences from the slabs), tree (the tree of the split points), work
// (the work counted over the ranks' shares of the cells), cut (the cut and the own cells' lists),
// let (the locally essential tree), densities (the slab's parts and new indices, the moved
// densities' owners and readers), halo (which ranks need each slab element), records (the
// elements' all-to-all), local_mesh (the part's mesh built).
enum class DistributionPhase {
  slabs,
  bounds,
  tree,
  work,
  cut,
  let,
  densities,
  halo,
  records,
  local_mesh,
  count
};
const char* phase_name(DistributionPhase phase);

// Told when each phase begins and ends on this rank (as FmmObserver).
using DistributionObserver = PhaseObserver<DistributionPhase>;
using DistributionPhaseScope = ObservedPhase<DistributionPhase>;

// The same fmbem::Error on every rank of comm where any rank's `error` is not empty (the lowest
// such rank's message); returns where all are empty. Collective.
void throw_if_any_rank(MPI_Comm comm, const std::string& error);

// With image planes, what the mirror images add to a DistributedFmmPartition.
struct MirrorImages {
  // Points that split the tree as the targets do but are no element's: the targets' mirror
  // images, where the mirror sources need leaves as fine as the real ones (an element's mirror
  // sources are then sources of it).
  std::span<const Vec3> splitting_points;
  // A point of a mirror image -> the real point it mirrors. Each mirror image's leaf then goes to
  // the part owning the real leaf it mirrors (mirror_leaders): a part's mirror sources are then
  // mostly its own elements', and its halo its own region's. Empty: the Morton cut alone.
  std::function<Vec3(const Vec3&)> real_position;
};

// FmmPartition computed by the ranks of comm together, each from its slab of the elements: the
// elements split into contiguous ranges of their input order, rank r holding the r-th (any may be
// empty), with their source points. No rank holds more than its slab, the tree's cells and lists
// (Octree of a split point set), and the answers for its slab's elements, yet the partition is
// FmmPartition's of the whole problem: the same tree, cut, parts, element numbering and locally
// essential trees, part q being comm's rank q. Collective (construction and element_order).
class DistributedFmmPartition {
 public:
  // sources: the slab's quadrature points; targets: its elements' collocation points (also the
  // splitting points); source_element: per source, its element's position in the slab;
  // first_element: the slab's first element in the input order; mirror: with image planes, the
  // slab's mirror images. Throws fmbem::Error on every rank where any rank's input is wrong
  // (sizes, an element out of its slab, slabs that are not contiguous in rank order, ranks
  // choosing different leaf sizes).
  DistributedFmmPartition(MPI_Comm comm, std::span<const Vec3> sources,
                          std::span<const Vec3> targets,
                          std::span<const std::size_t> source_element, std::size_t first_element,
                          const FmmOptions& options, DistributionObserver* observer = nullptr,
                          const MirrorImages& mirror = {});

  // The tree's cells, without point orders, holding the lists of this rank's own cells alone
  // (TreePartition::own_cells: what its LET and its FMMs read; Octree::list_of forms any other);
  // shared, to outlive the partition as the shape of the rank's FMMs (FmmPart::tree).
  const Octree& tree() const { return *tree_; }
  std::shared_ptr<const Octree> shared_tree() const { return tree_; }
  const TreePartition& partition() const { return *partition_; }
  int parts() const { return partition_->parts(); }
  // This rank's part's locally essential tree, densities included (elements in input indices).
  const LocallyEssentialTree& locally_essential_tree() const { return let_; }
  // Per element of the slab: its part, and its index in FmmPartition::element_order's numbering
  // (parts in turn, each part's elements in input order).
  const std::vector<int>& slab_parts() const { return slab_parts_; }
  // Per element of the slab: the leaf holding its target (its centroid).
  const std::vector<int>& slab_leaves() const { return slab_leaves_; }
  const std::vector<std::size_t>& slab_new_indices() const { return slab_new_indices_; }
  // Per part, its element count (every rank).
  const std::vector<std::size_t>& part_sizes() const { return part_sizes_; }
  // The readers (TreePartition::readers_of_leaf) of each leaf holding a source of the slab,
  // formed in one batch for the density lists; or null for another leaf. A halo search reads
  // many of the same leaves' readers.
  const std::vector<int>* slab_leaf_readers(int leaf) const;
  // FmmPartition::element_order (new index -> input index) on every rank: 8 bytes an element,
  // for what still takes the whole mesh. Collective.
  std::vector<std::size_t> element_order() const;

 private:
  MPI_Comm comm_;
  std::shared_ptr<const Octree> tree_;
  std::unique_ptr<TreePartition> partition_;
  LocallyEssentialTree let_;
  std::vector<int> slab_parts_, slab_leaves_;
  std::vector<std::size_t> slab_new_indices_;
  std::vector<std::size_t> part_sizes_;
  std::vector<std::size_t> slab_sizes_;  // per rank
  std::vector<int> slab_source_leaves_;  // ascending
  std::vector<std::vector<int>> slab_source_leaf_readers_;
};

}  // namespace fmbem::fmm
