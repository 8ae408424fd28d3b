#pragma once
#include <memory>
#include <span>
#include <vector>

#include "fmbem/fmm/fmm.hpp"
#include "fmbem/fmm/partition.hpp"

// The distributed FMM's set-up (issue 13): the whole problem's tree, as every rank's Fmm builds
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

}  // namespace fmbem::fmm
