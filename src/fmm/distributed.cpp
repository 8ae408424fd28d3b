#include "fmbem/fmm/distributed.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <limits>
#include <new>
#include <string>
#include <utility>

#include "fmbem/core/error.hpp"
#include "fmbem/core/parallel_sort.hpp"

namespace fmbem::fmm {
namespace {

static_assert(sizeof(std::size_t) == sizeof(std::uint64_t), "counts travel as MPI_UINT64_T");

// MPI counts are int: large arrays go in pieces.
constexpr std::size_t kMpiChunk = std::size_t(1) << 30;

}  // namespace

void throw_if_any_rank(MPI_Comm comm, const std::string& error) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  int first_failed = error.empty() ? size : rank;
  MPI_Allreduce(MPI_IN_PLACE, &first_failed, 1, MPI_INT, MPI_MIN, comm);
  if (first_failed == size) return;
  std::string message = error;
  unsigned long long length = message.size();
  MPI_Bcast(&length, 1, MPI_UNSIGNED_LONG_LONG, first_failed, comm);
  message.resize(length);
  MPI_Bcast(message.data(), int(length), MPI_CHAR, first_failed, comm);
  throw Error(message);
}

WorkModel default_work_model(int order) {
  // Seconds per operation over seconds per near pair (partition_volume.md's calibrations).
  struct Calibration {
    double p, m2l, source, target;
  };
  const Calibration a{8, 1.613e-09 / 5.940e-12, 1.144e-09 / 5.940e-12, 1.595e-08 / 5.940e-12};
  const Calibration b{16, 1.746e-08 / 5.531e-12, 3.789e-09 / 5.531e-12, 1.801e-08 / 5.531e-12};
  const double t = std::log(double(std::max(order, 1)) / a.p) / std::log(b.p / a.p);
  const auto between = [t](double x, double y) {
    return std::exp(std::log(x) + t * std::log(y / x));
  };
  return WorkModel{.near_pair = 1.0,
                   .m2l_pair = between(a.m2l, b.m2l),
                   .source_point = between(a.source, b.source),
                   .target_point = between(a.target, b.target)};
}

FmmPartition::FmmPartition(std::span<const Vec3> sources, std::span<const Vec3> targets,
                           std::span<const std::size_t> source_element, const FmmOptions& options,
                           int parts) {
  if (parts < 1) throw Error("FMM partition: at least one part is needed");
  if (source_element.size() != sources.size())
    throw Error("FMM partition: one element per source is needed");
  const FmmTreeSize size = chosen_tree_size(options);
  tree_ = std::make_unique<Octree>(sources, targets, targets, OctreeOptions{size.max_leaf});
  // No leaf on the diagonal levels of the FMMs the parts build on this tree (they cannot split).
  if (const int level = diagonal_min_leaf_level(*tree_, options);
      level > 0 && holds_leaf_above(*tree_, level))
    tree_ =
        std::make_unique<Octree>(sources, targets, targets,
                                 OctreeOptions{.max_leaf = size.max_leaf, .min_leaf_level = level});
  const std::vector<double> work =
      leaf_work(*tree_, count_work(*tree_), default_work_model(size.order));
  partition_ = std::make_unique<TreePartition>(*tree_, work, parts, source_element);
}

std::vector<std::size_t> FmmPartition::element_order() const {
  std::vector<std::size_t> order;
  for (int q = 0; q < parts(); ++q) {
    const std::vector<std::size_t> own = partition_->elements(q);
    order.insert(order.end(), own.begin(), own.end());
  }
  return order;
}

std::vector<std::size_t> FmmPartition::part_sizes() const {
  std::vector<std::size_t> sizes(std::size_t(parts()), 0);
  for (int q = 0; q < parts(); ++q) sizes[std::size_t(q)] = partition_->elements(q).size();
  return sizes;
}

void MpiPartReduction::extremes(std::array<double, 3>& low, std::array<double, 3>& high) const {
  MPI_Allreduce(MPI_IN_PLACE, low.data(), 3, MPI_DOUBLE, MPI_MIN, comm_);
  MPI_Allreduce(MPI_IN_PLACE, high.data(), 3, MPI_DOUBLE, MPI_MAX, comm_);
}

void MpiPartReduction::sum(std::span<std::size_t> counts) const {
  for (std::size_t done = 0; done < counts.size(); done += kMpiChunk)
    MPI_Allreduce(MPI_IN_PLACE, counts.data() + done,
                  int(std::min(kMpiChunk, counts.size() - done)), MPI_UINT64_T, MPI_SUM, comm_);
}

DistributedFmmPartition::DistributedFmmPartition(
    MPI_Comm comm, std::span<const Vec3> sources, std::span<const Vec3> targets,
    std::span<const std::size_t> source_element, std::size_t first_element,
    const FmmOptions& options, DistributionObserver* observer, const MirrorImages& mirror)
    : comm_(comm) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const std::size_t ranks = static_cast<std::size_t>(size);
  const FmmTreeSize tree_size = chosen_tree_size(options);

  // Every rank's slab and leaf size, so that each checks the whole split the same way.
  std::string error;
  if (source_element.size() != sources.size())
    error = "distributed FMM partition: one element per source is needed (" +
            std::to_string(source_element.size()) + " for " + std::to_string(sources.size()) +
            " sources on rank " + std::to_string(rank) + ")";
  for (std::size_t e : source_element)
    if (error.empty() && e >= targets.size())
      error = "distributed FMM partition: source element " + std::to_string(e) + " outside rank " +
              std::to_string(rank) + "'s slab of " + std::to_string(targets.size()) + " elements";
  throw_if_any_rank(comm, error);
  const std::uint64_t mine[3] = {first_element, targets.size(), std::uint64_t(tree_size.max_leaf)};
  std::vector<std::uint64_t> slabs(3 * ranks);
  MPI_Allgather(mine, 3, MPI_UINT64_T, slabs.data(), 3, MPI_UINT64_T, comm);
  for (int r = 0; r < size; ++r) {
    const std::uint64_t expected_first = r == 0 ? 0 : slabs[3 * (r - 1)] + slabs[3 * (r - 1) + 1];
    if (slabs[3 * r] != expected_first)
      throw Error("distributed FMM partition: rank " + std::to_string(r) + "'s slab starts at " +
                  "element " + std::to_string(slabs[3 * r]) + ", not " +
                  std::to_string(expected_first) + " (the slabs must follow each other in rank " +
                  "order from element 0)");
    if (slabs[3 * r + 2] != slabs[2])
      throw Error("distributed FMM partition: the ranks chose different leaf sizes (" +
                  std::to_string(slabs[2]) + " on rank 0, " + std::to_string(slabs[3 * r + 2]) +
                  " on rank " + std::to_string(r) + "): give -fmm_max_leaf");
  }

  // The tree's cells on every rank; its lists per part: each rank forms those of its share of
  // the cells to count the work, then keeps its own cells' (all its LET and its FMMs read).
  std::shared_ptr<Octree> tree;
  {
    DistributionPhaseScope scope(observer, DistributionPhase::tree);
    std::vector<Vec3> joined;
    if (!mirror.splitting_points.empty()) {
      joined.reserve(targets.size() + mirror.splitting_points.size());
      joined.insert(joined.end(), targets.begin(), targets.end());
      joined.insert(joined.end(), mirror.splitting_points.begin(), mirror.splitting_points.end());
    }
    const std::span<const Vec3> splitting =
        mirror.splitting_points.empty() ? targets : std::span<const Vec3>(joined);
    tree = std::make_shared<Octree>(sources, targets, splitting, OctreeOptions{tree_size.max_leaf},
                                    MpiPartReduction(comm));
    // No leaf on the diagonal levels of the FMMs the parts build on this tree (they cannot
    // split it): every rank finds the same level from the same cells.
    if (const int level = diagonal_min_leaf_level(*tree, options);
        level > 0 && holds_leaf_above(*tree, level))
      tree = std::make_shared<Octree>(
          sources, targets, splitting,
          OctreeOptions{.max_leaf = tree_size.max_leaf, .min_leaf_level = level},
          MpiPartReduction(comm));
  }
  // The slab's points' leaves, from the build.
  slab_leaves_ = tree->take_target_leaves();
  const std::vector<int> source_leaves = tree->take_source_leaves();
  std::vector<double> work;
  {
    DistributionPhaseScope scope(observer, DistributionPhase::work);
    work = leaf_work(*tree, count_work(*tree, MpiPartReduction(comm), rank, size),
                     default_work_model(tree_size.order));
  }
  {
    DistributionPhaseScope scope(observer, DistributionPhase::cut);
    // Every rank finds the same leaders from the same cells.
    const std::vector<int> leaders =
        mirror.real_position ? mirror_leaders(*tree, mirror.real_position) : std::vector<int>();
    partition_ = std::make_unique<TreePartition>(*tree, work, size, leaders);
    // Its own cells' lists, and the diagonal levels' cells' (every part's FMM reads those).
    std::vector<int> listed = partition_->own_cells(rank);
    const std::vector<int> coarse = diagonal_level_cells(*tree, options);
    listed.insert(listed.end(), coarse.begin(), coarse.end());
    tree->hold_lists_of(listed);
  }
  tree_ = std::move(tree);
  {
    DistributionPhaseScope scope(observer, DistributionPhase::let);
    let_ = partition_->locally_essential_tree(rank);
  }
  DistributionPhaseScope densities_scope(observer, DistributionPhase::densities);

  // The slab's elements' parts: the owner of each target's leaf.
  const std::vector<int>& target_leaves = slab_leaves_;
  // The tree was built from these very points: each lies in a leaf (checked on every rank
  // together, as a rank that stopped alone would leave the others waiting).
  const bool all_in_leaves =
      std::find(target_leaves.begin(), target_leaves.end(), -1) == target_leaves.end() &&
      std::find(source_leaves.begin(), source_leaves.end(), -1) == source_leaves.end();
  throw_if_any_rank(comm, all_in_leaves ? ""
                                        : "distributed FMM partition: a point outside the "
                                          "tree built from it (an internal error)");
  slab_parts_.resize(targets.size());
  std::vector<std::size_t> slab_part_sizes(ranks, 0);
  for (std::size_t i = 0; i < targets.size(); ++i) {
    slab_parts_[i] = partition_->part_of_leaf(target_leaves[i]);
    ++slab_part_sizes[std::size_t(slab_parts_[i])];
  }
  // Numbered part by part, each part's elements in input order: the slabs before this one come
  // first within each part.
  part_sizes_ = slab_part_sizes;
  MpiPartReduction(comm).sum(part_sizes_);
  std::vector<std::size_t> next(ranks, 0);
  MPI_Exscan(slab_part_sizes.data(), next.data(), size, MPI_UINT64_T, MPI_SUM, comm);
  if (rank == 0) std::fill(next.begin(), next.end(), 0);  // Exscan leaves rank 0's undefined
  for (std::size_t q = 0, begin = 0; q < ranks; begin += part_sizes_[q++]) next[q] += begin;
  slab_new_indices_.resize(targets.size());
  for (std::size_t i = 0; i < targets.size(); ++i)
    slab_new_indices_[i] = next[std::size_t(slab_parts_[i])]++;

  // The densities: an element's goes from its owner to every other part reading one of its
  // source points (readers_of_leaf, as TreePartition's send lists). The slab's rank tells both:
  // records {2 peer + 0, element} for the owner's send lists, {2 peer + 1, ...} for receive.
  // Each distinct leaf's readers, formed on the threads from one colleague search.
  std::vector<int>& read_leaves = slab_source_leaves_;
  read_leaves.assign(source_leaves.begin(), source_leaves.end());
  std::sort(read_leaves.begin(), read_leaves.end());
  read_leaves.erase(std::unique(read_leaves.begin(), read_leaves.end()), read_leaves.end());
  slab_source_leaf_readers_ = partition_->readers_of_leaves(read_leaves);
  std::vector<std::pair<std::size_t, int>> element_readers;
  // No exception may leave an OpenMP region: memory running out is raised after it.
  std::atomic<bool> out_of_memory{false};
#pragma omp parallel
  {
    std::vector<std::pair<std::size_t, int>> found;
#pragma omp for schedule(static) nowait
    for (std::size_t j = 0; j < sources.size(); ++j) {
      if (out_of_memory) continue;
      const std::size_t k =
          std::size_t(std::lower_bound(read_leaves.begin(), read_leaves.end(), source_leaves[j]) -
                      read_leaves.begin());
      const std::size_t i = source_element[j];
      try {
        for (int q : slab_source_leaf_readers_[k])
          if (q != slab_parts_[i] && (found.empty() || found.back() != std::pair{i, q}))
            found.emplace_back(i, q);
      } catch (const std::bad_alloc&) {
        out_of_memory = true;
      }
    }
#pragma omp critical(distributed_partition_readers)
    try {
      element_readers.insert(element_readers.end(), found.begin(), found.end());
    } catch (const std::bad_alloc&) {
      out_of_memory = true;
    }
  }
  if (out_of_memory) throw std::bad_alloc();
  // Sorted, the same list whatever the threads' order.
  parallel_sort(element_readers.begin(), element_readers.end());
  element_readers.erase(std::unique(element_readers.begin(), element_readers.end()),
                        element_readers.end());
  std::vector<std::vector<std::uint64_t>> outgoing(ranks);
  for (const auto& [i, q] : element_readers) {
    const int owner = slab_parts_[i];
    const std::uint64_t element = first_element + i;
    outgoing[std::size_t(owner)].insert(outgoing[std::size_t(owner)].end(),
                                        {2 * std::uint64_t(q), element});
    outgoing[std::size_t(q)].insert(outgoing[std::size_t(q)].end(),
                                    {2 * std::uint64_t(owner) + 1, element});
  }
  std::vector<int> send_counts(ranks), send_displs(ranks + 1, 0);
  std::vector<int> receive_counts(ranks), receive_displs(ranks + 1, 0);
  std::vector<std::uint64_t> send_buffer;
  for (int q = 0; q < size; ++q) {
    if (outgoing[q].size() > std::size_t(std::numeric_limits<int>::max() / 2))
      throw Error("distributed FMM partition: too many density records for one message");
    send_counts[q] = int(outgoing[q].size());
    send_displs[q + 1] = send_displs[q] + send_counts[q];
    send_buffer.insert(send_buffer.end(), outgoing[q].begin(), outgoing[q].end());
  }
  MPI_Alltoall(send_counts.data(), 1, MPI_INT, receive_counts.data(), 1, MPI_INT, comm);
  for (int q = 0; q < size; ++q) receive_displs[q + 1] = receive_displs[q] + receive_counts[q];
  std::vector<std::uint64_t> receive_buffer(std::size_t(receive_displs[size]));
  MPI_Alltoallv(send_buffer.data(), send_counts.data(), send_displs.data(), MPI_UINT64_T,
                receive_buffer.data(), receive_counts.data(), receive_displs.data(), MPI_UINT64_T,
                comm);
  for (std::size_t k = 0; k < receive_buffer.size(); k += 2) {
    const std::size_t peer = receive_buffer[k] / 2;
    auto& lists = receive_buffer[k] % 2 == 0 ? let_.send_densities : let_.receive_densities;
    lists[peer].push_back(receive_buffer[k + 1]);
  }
  for (auto* lists : {&let_.send_densities, &let_.receive_densities})
    for (auto& list : *lists) std::sort(list.begin(), list.end());

  slab_sizes_.resize(ranks);
  for (int r = 0; r < size; ++r) slab_sizes_[r] = slabs[3 * r + 1];
}

const char* phase_name(DistributionPhase phase) {
  static const char* names[] = {"Slabs", "Bounds",    "Tree", "Work",    "Cut",
                                "LET",   "Densities", "Halo", "Records", "LocalMesh"};
  return names[static_cast<int>(phase)];
}

const std::vector<int>* DistributedFmmPartition::slab_leaf_readers(int leaf) const {
  const auto at = std::lower_bound(slab_source_leaves_.begin(), slab_source_leaves_.end(), leaf);
  if (at == slab_source_leaves_.end() || *at != leaf) return nullptr;
  return &slab_source_leaf_readers_[std::size_t(at - slab_source_leaves_.begin())];
}

std::vector<std::size_t> DistributedFmmPartition::element_order() const {
  std::size_t total = 0;
  for (std::size_t n : slab_sizes_) total += n;
  if (total > std::size_t(std::numeric_limits<int>::max()))
    throw Error(
        "distributed FMM partition: more than 2^31 elements: the whole element order "
        "cannot be gathered");
  std::vector<int> counts(slab_sizes_.size()), displs(slab_sizes_.size(), 0);
  for (std::size_t r = 0; r < slab_sizes_.size(); ++r) {
    counts[r] = int(slab_sizes_[r]);
    if (r > 0) displs[r] = displs[r - 1] + counts[r - 1];
  }
  std::vector<std::size_t> new_of_input(total);
  MPI_Allgatherv(slab_new_indices_.data(), int(slab_new_indices_.size()), MPI_UINT64_T,
                 new_of_input.data(), counts.data(), displs.data(), MPI_UINT64_T, comm_);
  std::vector<std::size_t> order(total);
  for (std::size_t e = 0; e < total; ++e) order[new_of_input[e]] = e;
  return order;
}

}  // namespace fmbem::fmm
