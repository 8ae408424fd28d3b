#include "fmbem/fmm/fmm.hpp"

#include <omp.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <iomanip>
#include <numeric>
#include <optional>
#include <sstream>

#include "fmbem/core/error.hpp"
#include "fmbem/fmm/m2l_plan.hpp"

namespace fmbem::fmm {

namespace {

using PhaseScope = ObservedPhase<FmmPhase>;

template <class Work>
void run_phase(FmmObserver* observer, FmmPhase phase, Work&& work) {
  PhaseScope scope(observer, phase);
  work();
}

// y += a x, a row-major size x size.
void multiply_add(int size, const cplx* a, const cplx* x, cplx* y) {
  for (int i = 0; i < size; ++i) {
    cplx sum = 0.0;
    const cplx* row = a + static_cast<std::size_t>(i) * size;
    for (int j = 0; j < size; ++j) sum += row[j] * x[j];
    y[i] += sum;
  }
}

// The indices whose mark is set, ascending.
std::vector<std::size_t> marked_indices(const std::vector<char>& marks) {
  std::vector<std::size_t> indices;
  for (std::size_t i = 0; i < marks.size(); ++i)
    if (marks[i]) indices.push_back(i);
  return indices;
}

// A part's view of the given tree (FmmOptions::part_tree): the sources of the leaves the part
// reads (P2M of its own leaves, the near, W and X lists of its targets' leaves) sorted into it.
std::unique_ptr<Octree> part_view(const Octree& shape, const LocallyEssentialTree& part,
                                  int max_leaf, std::span<const Vec3> sources,
                                  std::span<const Vec3> targets,
                                  std::span<const Vec3> splitting_points) {
  const auto& cells = shape.cells();
  if (shape.options().max_leaf != max_leaf)
    throw Error("FMM: the given tree has leaves of " + std::to_string(shape.options().max_leaf) +
                " points, this FMM's are of " + std::to_string(max_leaf));
  // The sources and splitting points of the whole problem, or of a rank's part of the mesh with
  // its halo (bem's DistributedMesh): never more than the tree's. Each leaf read is checked whole
  // below. (A view of held cells of it holds no points: its whole source count is the check.)
  if (shape.sources_in_whole(0) < sources.size() ||
      (!shape.holds_cell_subset() &&
       cells[0].target_end - cells[0].target_begin < splitting_points.size()))
    throw Error("FMM: the given tree is not of this FMM's sources and splitting points");
  std::vector<int> target_leaves = shape.leaf_of(targets);
  std::sort(target_leaves.begin(), target_leaves.end());
  target_leaves.erase(std::unique(target_leaves.begin(), target_leaves.end()), target_leaves.end());
  // The cells whose sources the part reads (every leaf below them: W cells may be coarse), and
  // the cells the view holds.
  const PartCells part_cells = cells_read_by_part(shape, part, target_leaves);
  const std::vector<char>& read = part_cells.read;
  // The sources' leaves a slice at a time: a few MB whatever the problem.
  constexpr std::size_t kSlice = std::size_t(1) << 20;
  std::vector<std::size_t> held;
  std::vector<std::size_t> held_in_leaf(cells.size(), 0);
  for (std::size_t first = 0; first < sources.size(); first += kSlice) {
    const std::size_t count = std::min(kSlice, sources.size() - first);
    const std::vector<int> leaves = shape.leaf_of(sources.subspan(first, count));
    for (std::size_t i = 0; i < count; ++i) {
      // In a view of held cells a source may lie in no held cell: one the part does not read.
      if (leaves[i] < 0 && shape.holds_cell_subset()) continue;
      if (leaves[i] < 0) throw Error("FMM: a source lies outside the given tree");
      if (!read[leaves[i]]) continue;
      held.push_back(first + i);
      ++held_in_leaf[leaves[i]];
    }
  }
  for (int leaf : shape.leaves())
    if (read[leaf] && held_in_leaf[leaf] != shape.sources_in_whole(leaf))
      throw Error("FMM: the given tree is not of this FMM's sources (leaf " + std::to_string(leaf) +
                  " holds " + std::to_string(shape.sources_in_whole(leaf)) +
                  " of the tree's sources, " + std::to_string(held_in_leaf[leaf]) + " of these)");
  return std::make_unique<Octree>(shape, part_cells.held, sources, held, targets);
}

}  // namespace

const char* phase_name(FmmPhase phase) {
  static const char* names[] = {"Tree", "Translations", "P2M",  "M2M",     "M2L",
                                "L2L",  "L2P",          "Near", "Exchange"};
  return names[static_cast<int>(phase)];
}

int order_for_tolerance(double tolerance) {
  if (!(tolerance > 0.0) || tolerance >= 1.0) throw Error("FMM: the tolerance must lie in (0, 1)");
  // The largest relative MatMult error measured on BEM operators (sphere and
  // box, k = 0 and 8: tests/unit/bem/test_fmm_layer_potentials.cpp) at
  // p = 4, 8, 12, 16; log-linear in between, a factor 0.5 per order beyond.
  const double orders[] = {4, 8, 12, 16}, errors[] = {1.3e-1, 2.6e-3, 1.6e-5, 1.5e-6};
  if (tolerance >= errors[0]) return 4;
  for (int i = 0; i < 3; ++i)
    if (tolerance >= errors[i + 1]) {
      const double t = std::log(errors[i] / tolerance) / std::log(errors[i] / errors[i + 1]);
      return static_cast<int>(std::ceil(orders[i] + t * (orders[i + 1] - orders[i]) - 1e-9));
    }
  const int p = static_cast<int>(std::ceil(16.0 + std::log(errors[3] / tolerance) / std::log(2.0)));
  return std::min(p, max_degree);
}

bool low_frequency_accurate(const FmmStatistics& statistics) {
  return statistics.max_kappa * std::sqrt(3.0) <= statistics.order;
}

struct Fmm::Level {
  double sigma = 0.0;
  std::vector<GradientTerm> gradient;
  // For children at this level, by octant: M_parent += m2m M_child,
  // L_child += l2l L_parent.
  std::array<TranslationMatrix, 8> m2m, l2l;
};

Fmm::~Fmm() = default;

Fmm::Fmm(double k, std::span<const Vec3> sources, std::span<const Vec3> source_normals,
         std::span<const Vec3> targets, std::span<const Vec3> splitting_points,
         const FmmOptions& options, FmmObserver* observer,
         const TargetNormalDerivative& normal_derivative)
    : k_(k),
      options_(options),
      source_count_(sources.size()),
      with_normals_(!source_normals.empty()),
      targets_(targets.begin(), targets.end()) {
  options_.part = nullptr;  // read here only
  options_.part_tree = nullptr;
  if (!(k >= 0.0) || !std::isfinite(k)) throw Error("FMM: the wavenumber must be finite and >= 0");
  if (options.order < 0 || options.order > max_degree)
    throw Error("FMM: the expansion order p must lie in 1.." + std::to_string(max_degree));
  if (options.max_leaf < 1) throw Error("FMM: the leaf size must be at least 1");
  if (!source_normals.empty() && source_normals.size() != sources.size())
    throw Error("FMM: one normal per source is needed");
  if (!normal_derivative.normals.empty() && normal_derivative.normals.size() != targets.size())
    throw Error("FMM: the target normal derivative needs one normal per target (" +
                std::to_string(normal_derivative.normals.size()) + " normals for " +
                std::to_string(targets.size()) + " targets)");
  // Weight 0 asks for phi alone: the plan without normals gives it, at no extra cost.
  if (!normal_derivative.normals.empty() && normal_derivative.weight != 0.0) {
    target_normals_.assign(normal_derivative.normals.begin(), normal_derivative.normals.end());
    target_normal_weight_ = normal_derivative.weight;
  }
  const FmmTreeSize chosen = chosen_tree_size(options);
  order_ = chosen.order;
  // The GPU executors are built (or -fmm_device gpu fails) unless on the CPU by choice or need.
  const bool gpu = chosen.gpu;
  options_.max_leaf = chosen.max_leaf;
  statistics_.max_leaf = options_.max_leaf;
  std::vector<int> part_leaves;
  std::optional<LocallyEssentialTree> part_in_tree;
  {
    PhaseScope scope(observer, FmmPhase::tree);
    if (options.part_tree && !options.part)
      throw Error("FMM: a given tree (FmmOptions::part_tree) needs its part");
    tree_ = options.part_tree ? part_view(*options.part_tree, *options.part, options_.max_leaf,
                                          sources, targets, splitting_points)
                              : std::make_unique<Octree>(sources, targets, splitting_points,
                                                         OctreeOptions{options_.max_leaf});
    for (int leaf : tree_->leaves())
      if (tree_->cells()[leaf].target_begin < tree_->cells()[leaf].target_end)
        target_leaves_.push_back(leaf);
    upward_leaf_end_ = tree_->leaves().size();
    upward_leaves_ = tree_->leaves();
    // The part's LocallyEssentialTree in this tree's cell ids, renumbered once.
    if (options.part) {
      part_in_tree = in_tree_cells(*options.part);
      part_leaves = mark_part(*part_in_tree);
    }
    build_near_lists();
    hold_sources(sources, source_normals);
    if (options.strengths_of_sources_read) number_strengths_by_sources_read();
  }
  {
    PhaseScope scope(observer, FmmPhase::translations);
    build_translations(gpu);
    set_up_gpu();
    if (options.part) {
      finish_restriction(*part_in_tree, part_leaves);
      constructed_part_cells_ = options.part->own_cells;
    }
  }
}

FmmTreeSize chosen_tree_size(const FmmOptions& options) {
  FmmTreeSize chosen;
  chosen.order = options.order > 0 ? options.order : order_for_tolerance(options.tolerance);
  chosen.gpu = options.device != FmmOptions::Device::cpu && gpu_available();
  chosen.max_leaf =
      options.measured_max_leaf ? default_max_leaf(chosen.gpu, chosen.order) : options.max_leaf;
  return chosen;
}

int default_max_leaf(bool gpu, int order) {
  if (!gpu) return 100;
  return order <= 12 ? 50 : 150;
}

M2LScheme default_m2l_scheme(int order) { return order <= 8 ? M2LScheme::dmma : M2LScheme::gemm; }

void Fmm::set_up_gpu() {
  if (options_.device == FmmOptions::Device::cpu) return;
  std::string why;
  if (!gpu_available(&why)) {
    if (options_.device == FmmOptions::Device::gpu) throw Error("-fmm_device gpu: " + why);
    statistics_.m2l_device = "cpu (no GPU: " + why + ")";
    return;
  }
  const std::size_t limit = options_.gpu_memory_limit;
  const auto check_limit = [&](const char* what) {
    if (limit > 0 && statistics_.gpu_bytes > limit) {
      std::ostringstream out;
      out << std::fixed << std::setprecision(1) << "GPU out of memory: the GPU FMM needs "
          << statistics_.gpu_bytes / 1048576.0 << " MiB of device memory for " << what
          << ", above the limit of " << limit / 1048576.0 << " MiB";
      throw Error(out.str());
    }
  };
  const M2LScheme scheme = options_.m2l_scheme.value_or(default_m2l_scheme(order_));
  gpu_m2l_ = std::make_unique<GpuM2L>(m2l_plan_, scheme, options_.gpu_m2l);
  statistics_.m2l_device = std::string("gpu, scheme ") + m2l_scheme_name(scheme);
  statistics_.gpu_bytes = gpu_m2l_->statistics().device_bytes;
  check_limit("M2L translation matrices and lists");
  if (options_.gpu_near_field) {
    gpu_near_field_ = std::make_unique<GpuNearField>(near_field_lists(), options_.gpu_near);
    statistics_.near_field_device = "gpu";
    statistics_.gpu_bytes += gpu_near_field_->statistics().device_bytes;
    check_limit("M2L and near field");
  }
  GpuFarFieldPlan plan{.k = k_,
                       .order = order_,
                       .tree = tree_.get(),
                       .sources = {},
                       .normals = {},
                       .source_order = {},
                       .p2m_leaves = {},
                       .targets = targets_,
                       .target_leaves = target_leaves_,
                       .levels = {},
                       .memory_limit = limit > 0 ? limit - statistics_.gpu_bytes : 0,
                       .target_normals = target_normals_,
                       .target_normal_weight = target_normal_weight_};
  if (limit > 0 && plan.memory_limit == 0) plan.memory_limit = 1;
  // P2M's points: the near store by tree positions where it holds every source, else those of
  // the leaves P2M visits gathered from both stores (host copies for the upload only).
  std::vector<Vec3> p2m_points, p2m_normals;
  std::vector<std::size_t> p2m_order;
  const auto& all_leaves = tree_->leaves();
  if (near_store_is_tree_order_) {
    plan.sources = near_sources_;
    plan.normals = near_normals_;
    plan.source_order = tree_->source_order();
    for (std::size_t l = 0; l < all_leaves.size(); ++l) {
      const Cell& c = tree_->cells()[all_leaves[l]];
      plan.p2m_leaves.push_back({all_leaves[l], l, c.source_begin, c.source_end});
    }
  } else {
    // Each leaf's points at the running count of the ones before, gathered on the threads.
    std::vector<LeafSources> held;
    held.reserve(upward_store_leaves_.size());
    std::size_t count = 0;
    for (int leaf : upward_store_leaves_) {
      const LeafSources& points = held.emplace_back(leaf_sources(leaf));
      const std::size_t l = std::size_t(
          std::lower_bound(all_leaves.begin(), all_leaves.end(), leaf) - all_leaves.begin());
      plan.p2m_leaves.push_back({leaf, l, count, count + points.end - points.begin});
      count += points.end - points.begin;
    }
    p2m_points.resize(count);
    p2m_order.resize(count);
    if (with_normals_) p2m_normals.resize(count);
#pragma omp parallel for schedule(dynamic, 64)
    for (std::size_t l = 0; l < held.size(); ++l) {
      const LeafSources& points = held[l];
      for (std::size_t i = points.begin, at = plan.p2m_leaves[l].begin; i < points.end; ++i, ++at) {
        p2m_points[at] = points.points[i];
        if (with_normals_) p2m_normals[at] = points.normals[i];
        p2m_order[at] = points.order[i];
      }
    }
    plan.sources = p2m_points;
    plan.normals = p2m_normals;
    plan.source_order = p2m_order;
  }
  for (const Level& lv : levels_) {
    GpuFarFieldPlan::Level& out = plan.levels.emplace_back();
    out.sigma = lv.sigma;
    out.gradient = lv.gradient;
    for (int octant = 0; octant < 8; ++octant) {
      out.m2m[octant] = lv.m2m[octant];
      out.l2l[octant] = lv.l2l[octant];
    }
  }
  gpu_far_field_ = std::make_unique<GpuFarField>(plan);
  statistics_.far_field_device = "gpu";
  statistics_.gpu_bytes += gpu_far_field_->device_bytes();
  // apply from host arrays uploads the strengths of every source: those arrays are allocated by
  // its first call (resident users, apply_device, never need them).
  device_potential_ = std::make_unique<DeviceArray>(targets_.size());
  statistics_.gpu_bytes += device_potential_->size() * sizeof(cplx);
  check_limit("device arrays");
}

NearFieldLists Fmm::near_field_lists() const {
  return NearFieldLists{.k = k_,
                        .skip_radius = options_.skip_radius,
                        .sources = near_sources_,
                        .normals = near_normals_,
                        .source_order = near_store_order(),
                        .source_count = source_count_,
                        .targets = targets_,
                        .target_order = tree_->target_order(),
                        .leaf_targets = near_targets_,
                        .offsets = near_offsets_,
                        .ranges = near_ranges_,
                        .target_normals = target_normals_,
                        .target_normal_weight = target_normal_weight_};
}

void Fmm::build_near_lists() {
  const Octree& tree = *tree_;
  const auto& cells = tree.cells();
  const auto& leaves = target_leaves_;
  std::vector<std::vector<std::array<std::size_t, 2>>> ranges(leaves.size());
#pragma omp parallel for schedule(dynamic, 16)
  for (std::size_t l = 0; l < leaves.size(); ++l) {
    const int leaf = leaves[l];
    // Per cell its range and, in a part's view, its range in the whole order besides.
    std::vector<std::array<std::size_t, 4>> cell_ranges;
    tree.for_each_near_source_cell(leaf, [&](int s) {
      if (cells[s].source_begin < cells[s].source_end) {
        const auto whole = tree.whole_source_range(s);
        cell_ranges.push_back({cells[s].source_begin, cells[s].source_end, whole[0], whole[1]});
      }
    });
    std::sort(cell_ranges.begin(), cell_ranges.end());
    // Cells that follow each other on the curve make one range: in the whole order, so that a
    // part's view sums in the same pieces as the whole tree (the same rounding).
    auto& out = ranges[l];
    std::size_t whole_end = 0;
    for (const auto& r : cell_ranges) {
      if (!out.empty() && out.back()[1] == r[0] && whole_end == r[2])
        out.back()[1] = r[1];
      else
        out.push_back({r[0], r[1]});
      whole_end = r[3];
    }
  }
  near_offsets_.assign(leaves.size() + 1, 0);
  near_targets_.resize(leaves.size());
  std::size_t pairs = 0;
  for (std::size_t l = 0; l < leaves.size(); ++l) {
    near_offsets_[l + 1] = near_offsets_[l] + ranges[l].size();
    const Cell& c = cells[leaves[l]];
    near_targets_[l] = {c.target_begin, c.target_end};
    for (const auto& r : ranges[l]) pairs += (r[1] - r[0]) * (c.target_end - c.target_begin);
  }
  near_ranges_.reserve(near_offsets_.back());
  for (const auto& r : ranges) near_ranges_.insert(near_ranges_.end(), r.begin(), r.end());
  statistics_.near_pairs = pairs;
  compact_near_sources();
}

void Fmm::compact_near_sources() {
  // The tree position intervals the ranges cover, merged.
  std::vector<std::array<std::size_t, 2>> read(near_ranges_);
  std::sort(read.begin(), read.end());
  std::size_t kept = 0, count = 0;
  for (const auto& r : read) {
    if (kept > 0 && r[0] <= read[kept - 1][1])
      read[kept - 1][1] = std::max(read[kept - 1][1], r[1]);
    else
      read[kept++] = r;
  }
  read.resize(kept);
  for (const auto& r : read) count += r[1] - r[0];
  near_source_order_.clear();
  near_intervals_.clear();
  // Every source read, of a tree holding every given source: tree positions as they are.
  near_store_is_tree_order_ = count == tree_->source_order().size() && count == source_count_;
  if (near_store_is_tree_order_) return;
  std::vector<std::size_t> start(read.size());
  near_source_order_.reserve(count);
  const auto& order = tree_->source_order();
  for (std::size_t i = 0; i < read.size(); ++i) {
    start[i] = near_source_order_.size();
    near_intervals_.push_back({read[i][0], read[i][1], start[i]});
    near_source_order_.insert(near_source_order_.end(), order.begin() + read[i][0],
                              order.begin() + read[i][1]);
  }
  for (auto& r : near_ranges_) {
    const std::size_t i =
        std::size_t(std::upper_bound(read.begin(), read.end(), r,
                                     [](const auto& a, const auto& b) { return a[0] < b[0]; }) -
                    read.begin()) -
        1;
    r = {start[i] + (r[0] - read[i][0]), start[i] + (r[1] - read[i][0])};
  }
}

void Fmm::build_translations(bool gpu) {
  const Octree& tree = *tree_;
  const auto& cells = tree.cells();
  const int p = order_, size = p * p, num_levels = tree.levels();
  const GauntTable gaunt(p);
  levels_.resize(num_levels);
  statistics_.order = p;
  statistics_.levels = num_levels;
  statistics_.cells_per_level.assign(num_levels, 0);
  statistics_.leaves_per_level.assign(num_levels, 0);
  statistics_.m2l_pairs_per_level.assign(num_levels, 0);
  statistics_.transfer_matrices_per_level.assign(num_levels, 0);
  for (int level = 0; level < num_levels; ++level) {
    Level& lv = levels_[level];
    lv.sigma = tree.width(level);
    statistics_.cells_per_level[level] = static_cast<int>(tree.cells_at_level(level).size());
    if (level < 2) continue;  // no cell of levels 0, 1 is well separated from another
    lv.gradient = gradient_terms(gaunt, p, k_, lv.sigma);
    statistics_.translation_bytes +=
        16 * size * size * sizeof(cplx) + lv.gradient.size() * sizeof(GradientTerm);
  }
  // The shifts of levels >= 2, one (level, octant) a thread: at p = 16 each is milliseconds.
  const int shifts = 8 * std::max(0, num_levels - 2);
#pragma omp parallel for schedule(dynamic)
  for (int x = 0; x < shifts; ++x) {
    const int level = 2 + x / 8, octant = x % 8;
    Level& lv = levels_[level];
    const double h = 0.25 * tree.width(level - 1);
    const Vec3 t{octant & 1 ? h : -h, octant & 2 ? h : -h, octant & 4 ? h : -h};
    const TranslationMatrix c = regular_shift(gaunt, p, k_, tree.width(level - 1), t);
    lv.m2m[octant].resize(size * size);
    lv.l2l[octant].resize(size * size);
    for (int i = 0; i < size; ++i)
      for (int j = 0; j < size; ++j) {
        lv.m2m[octant][i * size + j] = std::conj(c[i * size + j]);
        lv.l2l[octant][j * size + i] = c[i * size + j];
      }
  }
  // M2L: one plan for the CPU and the GPU executors; the GPU's builds its matrices itself.
  m2l_plan_ = build_m2l_plan(tree, p, k_, !gpu);
  for (const M2LLevelPlan& lv : m2l_plan_.levels) {
    statistics_.m2l_pairs_per_level[lv.level] = static_cast<int>(lv.pairs.size());
    statistics_.transfer_matrices_per_level[lv.level] = static_cast<int>(lv.matrix_count());
    statistics_.translation_bytes +=
        lv.matrices.size() * sizeof(cplx) + lv.pairs.size() * sizeof(M2LPair);
    if (statistics_.max_kappa == 0.0) statistics_.max_kappa = k_ * lv.sigma;
  }
  std::size_t max_targets = 0;
  for (int leaf : tree.leaves()) {
    const Cell& c = cells[leaf];
    ++statistics_.leaves_per_level[c.level];
    max_targets = std::max(max_targets, c.target_end - c.target_begin);
  }
  statistics_.leaves = tree.leaves().size();
  statistics_.target_leaves = target_leaves_.size();
  statistics_.max_leaf_targets = max_targets;
  statistics_.mean_leaf_targets =
      double(targets_.size()) / std::max<std::size_t>(1, statistics_.target_leaves);
  statistics_.tree_bytes =
      cells.size() * sizeof(Cell) +
      (tree.source_order().size() + tree.target_order().size()) * sizeof(std::size_t) +
      (near_ranges_.size() + near_targets_.size()) * 2 * sizeof(std::size_t) +
      near_source_order_.size() * sizeof(std::size_t) + target_leaves_.size() * sizeof(int);
  statistics_.tree_bytes += tree.list_bytes();
  statistics_.expansion_bytes = 2 * cells.size() * size * sizeof(cplx);
  // The points and normals, and the near field's per-apply copy of the sources it reads.
  statistics_.source_points = near_sources_.size() + upward_sources_.size();
  statistics_.source_bytes = (near_sources_.size() + near_normals_.size() + upward_sources_.size() +
                              upward_normals_.size()) *
                                 sizeof(Vec3) +
                             (upward_order_.size() + read_sources_.size()) * sizeof(std::size_t) +
                             near_field_lists().source_order.size() * 11 * sizeof(double) +
                             target_normals_.size() * sizeof(Vec3);
}

void Fmm::share_upward_pass(int part, int parts,
                            std::function<void(std::span<cplx> multipoles)> combine) {
  if (parts < 1 || part < 0 || part >= parts || (parts > 1 && !combine))
    throw Error("FMM: bad share of the upward pass");
  if (!own_cells_.empty()) throw Error("FMM: the upward pass is distributed already");
  // Cut the leaves (Morton order) where the running source count crosses part / parts.
  const auto& leaves = tree_->leaves();
  const auto& cells = tree_->cells();
  std::vector<std::size_t> sources_before(leaves.size() + 1, 0);
  for (std::size_t l = 0; l < leaves.size(); ++l)
    sources_before[l + 1] =
        sources_before[l] + cells[leaves[l]].source_end - cells[leaves[l]].source_begin;
  const auto cut = [&](int q) {
    const std::size_t wanted = sources_before.back() * std::size_t(q) / std::size_t(parts);
    return std::size_t(std::lower_bound(sources_before.begin(), sources_before.end() - 1, wanted) -
                       sources_before.begin());
  };
  upward_leaf_begin_ = part == 0 ? 0 : cut(part);
  upward_leaf_end_ = part == parts - 1 ? leaves.size() : cut(part + 1);
  upward_leaves_.assign(leaves.begin() + std::ptrdiff_t(upward_leaf_begin_),
                        leaves.begin() + std::ptrdiff_t(upward_leaf_end_));
  own_cells_.clear();
  slot_.clear();
  combine_multipoles_ = parts > 1 ? std::move(combine) : nullptr;
}

void Fmm::distribute_upward_pass(const LocallyEssentialTree& let,
                                 std::function<void(std::span<cplx> multipoles)> exchange) {
  if (!exchange) throw Error("FMM: the distributed upward pass needs an exchange");
  restrict_upward_pass(let);
  combine_multipoles_ = std::move(exchange);
  exchange_end_ = nullptr;
}

void Fmm::distribute_upward_pass(const LocallyEssentialTree& let, PackedMultipoleExchange exchange,
                                 bool overlap) {
  if (!gpu_far_field_)
    throw Error(
        "FMM: the packed multipole exchange is the GPU upward pass's; on the CPU the exchange "
        "takes the multipole array");
  if (!exchange.begin || !exchange.end)
    throw Error("FMM: the distributed upward pass needs an exchange");
  const LocallyEssentialTree in_tree = in_tree_cells(let);
  auto packing = std::make_unique<GpuMultipolePacking>(in_tree.packed_send_cells(),
                                                       in_tree.packed_receive_cells(), order_);
  restrict_upward_pass(let);
  gpu_packing_ = std::move(packing);
  statistics_.gpu_bytes += gpu_packing_->device_bytes();
  packed_exchange_ = std::move(exchange);
  overlap_packed_exchange_ = overlap;
  combine_multipoles_ = nullptr;  // a share_upward_pass's before
  exchange_end_ = nullptr;
}

LocallyEssentialTree Fmm::in_tree_cells(const LocallyEssentialTree& let) const {
  if (!tree_->holds_cell_subset()) return let;
  LocallyEssentialTree out = let;
  const auto renumber = [&](std::vector<int>& cells) {
    for (int& c : cells) {
      const int held = tree_->cell_of_whole_id(c);
      if (held < 0)
        throw Error("FMM: the locally essential tree names cell " + std::to_string(c) +
                    ", which this FMM's part view does not hold (not the part it was built for)");
      c = held;
    }
  };
  renumber(out.own_cells);
  renumber(out.ghost_cells);
  for (auto* lists : {&out.send_multipoles, &out.receive_multipoles})
    for (std::vector<int>& list : *lists) renumber(list);
  return out;
}

std::vector<int> Fmm::mark_part(const LocallyEssentialTree& let) {
  if (!own_cells_.empty()) throw Error("FMM: the upward pass is distributed already");
  const auto& cells = tree_->cells();
  // The part's leaves: its own cells that are leaves (ascending cell ids). The tree must be of
  // this FMM's shape (its cell ids are this tree's).
  const auto check = [&](int c) {
    if (c < 0 || std::size_t(c) >= cells.size())
      throw Error("FMM: the locally essential tree is not of this FMM's tree");
  };
  std::vector<int> leaves;
  for (int c : let.own_cells) {
    check(c);
    if (cells[c].is_leaf()) leaves.push_back(c);
  }
  for (int c : let.ghost_cells) check(c);
  for (const auto* lists : {&let.send_multipoles, &let.receive_multipoles})
    for (const std::vector<int>& list : *lists)
      for (int c : list) check(c);
  own_cells_.assign(cells.size(), 0);
  for (int leaf : leaves) {
    own_cells_[leaf] = 1;
    for (int c = cells[leaf].parent; c >= 0 && !own_cells_[c]; c = cells[c].parent)
      own_cells_[c] = 1;
  }
  upward_leaves_ = leaves;
  upward_leaf_begin_ = 0;
  upward_leaf_end_ = tree_->leaves().size();
  return leaves;
}

void Fmm::finish_restriction(const LocallyEssentialTree& let, const std::vector<int>& leaves) {
  const auto& cells = tree_->cells();
  if (gpu_far_field_) {
    // The GPU's P2M visits the part's leaves (their indices into leaves(), which is ascending)
    // and its M2M the part's own cells; its expansions are its tree's cells' (a part's view:
    // the cells the part reads), zero at the cells the part does not own until the exchange
    // adds the received partials.
    const auto& all = tree_->leaves();
    std::vector<std::size_t> indices;
    for (int leaf : leaves)
      indices.push_back(std::size_t(std::lower_bound(all.begin(), all.end(), leaf) - all.begin()));
    std::sort(indices.begin(), indices.end());
    gpu_far_field_->restrict_p2m(indices);
    gpu_far_field_->restrict_m2m(own_cells_);
  } else {
    // On the CPU the expansions of the part's own and ghost cells alone, in ascending cell order
    // (so M2L's pairs keep their order): memory and zeroing per part, not per tree.
    slot_.assign(cells.size(), -1);
    const std::vector<int> held = let.expansion_cells();
    for (std::size_t i = 0; i < held.size(); ++i) slot_[held[i]] = int(i);
    num_slots_ = held.size();
    for (M2LLevelPlan& lv : m2l_plan_.levels)
      for (M2LPair& pair : lv.pairs) {
        if (slot_[pair.target] < 0 || slot_[pair.source] < 0)
          throw Error("FMM: the locally essential tree lacks a cell of this FMM's M2L");
        pair.target = slot_[pair.target];
        pair.source = slot_[pair.source];
      }
    m2l_plan_.num_cells = num_slots_;
    for (int leaf : leaves)
      if (slot_[leaf] < 0) throw Error("FMM: the locally essential tree lacks a leaf of its part");
    statistics_.expansion_bytes = 2 * num_slots_ * std::size_t(order_ * order_) * sizeof(cplx);
  }
}

void Fmm::restrict_upward_pass(const LocallyEssentialTree& let) {
  if (constructed_part_cells_) {
    // Restricted at construction (FmmOptions::part): the tree given now must be that one.
    if (let.own_cells != *constructed_part_cells_)
      throw Error("FMM: the locally essential tree differs from the part this FMM was built for");
    return;
  }
  const LocallyEssentialTree in_tree = in_tree_cells(let);
  const std::vector<int> leaves = mark_part(in_tree);
  finish_restriction(in_tree, leaves);
}

void Fmm::hold_sources(std::span<const Vec3> sources, std::span<const Vec3> normals) {
  const std::span<const std::size_t> order = near_store_order();
  const auto gather = [](std::span<const Vec3> points, std::span<const std::size_t> at,
                         std::vector<Vec3>& out) {
    out.resize(at.size());
#pragma omp parallel for schedule(static)
    for (std::size_t i = 0; i < at.size(); ++i) out[i] = points[at[i]];
  };
  gather(sources, order, near_sources_);
  if (!normals.empty()) gather(normals, order, near_normals_);
  upward_sources_.clear();
  upward_normals_.clear();
  upward_order_.clear();
  upward_store_leaves_.clear();
  upward_store_begin_.clear();
  upward_in_near_store_.clear();
  if (near_store_is_tree_order_) return;  // P2M reads the near store by tree positions
  // P2M's leaves (level >= 2, with sources; the whole tree's unless the part was given at
  // construction): inside a run of the near store most are, read there; the others apart.
  const auto& cells = tree_->cells();
  const auto& tree_order = tree_->source_order();
  for (int leaf : upward_leaves_) {
    const Cell& c = cells[leaf];
    if (c.level < 2 || c.source_begin == c.source_end) continue;
    upward_store_leaves_.push_back(leaf);
    const auto run = std::upper_bound(
        near_intervals_.begin(), near_intervals_.end(), c.source_begin,
        [](std::size_t position, const auto& interval) { return position < interval[0]; });
    if (run != near_intervals_.begin() && c.source_end <= (run - 1)->at(1)) {
      upward_store_begin_.push_back((run - 1)->at(2) + (c.source_begin - (run - 1)->at(0)));
      upward_in_near_store_.push_back(1);
      continue;
    }
    upward_store_begin_.push_back(upward_order_.size());
    upward_in_near_store_.push_back(0);
    upward_order_.insert(upward_order_.end(), tree_order.begin() + std::ptrdiff_t(c.source_begin),
                         tree_order.begin() + std::ptrdiff_t(c.source_end));
  }
  gather(sources, upward_order_, upward_sources_);
  if (!normals.empty()) gather(normals, upward_order_, upward_normals_);
}

void Fmm::number_strengths_by_sources_read() {
  const std::vector<char> marks = source_read_marks();
  // Each source's position among the sources read: an exclusive count of the marks, so that
  // every order entry is renumbered by one look-up (not a search in a sorted list).
  std::vector<std::size_t> position(marks.size());
  std::size_t count = 0;
  for (std::size_t s = 0; s < marks.size(); ++s) {
    position[s] = count;
    count += std::size_t(marks[s]);
  }
  if (count == source_count_) return;  // every source read: positions are input indices
  // Only the two stores' orders hold input indices where some source is not read (the tree's
  // order is read directly only when the near store holds every source).
  const auto renumber = [&position](std::vector<std::size_t>& order) {
#pragma omp parallel for schedule(static)
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = position[order[i]];
  };
  renumber(near_source_order_);
  renumber(upward_order_);
  read_sources_ = marked_indices(marks);
  source_count_ = read_sources_.size();
}

std::span<const std::size_t> Fmm::near_store_order() const {
  if (near_store_is_tree_order_) return tree_->source_order();
  return near_source_order_;
}

Fmm::LeafSources Fmm::leaf_sources(int leaf) const {
  const Cell& c = tree_->cells()[leaf];
  if (near_store_is_tree_order_)
    return {near_sources_, near_normals_, tree_->source_order(), c.source_begin, c.source_end};
  const auto at = std::lower_bound(upward_store_leaves_.begin(), upward_store_leaves_.end(), leaf);
  if (at == upward_store_leaves_.end() || *at != leaf)
    throw Error("FMM: P2M asked for the points of a leaf it does not hold");
  const std::size_t i = std::size_t(at - upward_store_leaves_.begin());
  const std::size_t begin = upward_store_begin_[i], end = begin + (c.source_end - c.source_begin);
  if (upward_in_near_store_[i])
    return {near_sources_, near_normals_, near_source_order_, begin, end};
  return {upward_sources_, upward_normals_, upward_order_, begin, end};
}

void Fmm::distribute_upward_pass(const LocallyEssentialTree& let,
                                 std::function<void(std::span<cplx> multipoles)> exchange_begin,
                                 std::function<void(std::span<cplx> multipoles)> exchange_end) {
  if (!exchange_end) throw Error("FMM: the overlapped exchange needs its end");
  distribute_upward_pass(let, std::move(exchange_begin));
  exchange_end_ = std::move(exchange_end);
}

std::vector<std::size_t> Fmm::sources_read() const {
  if (!read_sources_.empty()) return read_sources_;  // the stores' orders hold positions in it
  return marked_indices(source_read_marks());
}

std::vector<char> Fmm::source_read_marks() const {
  // A mark per input source: the near ranges overlap (each source lies in the lists of about 27
  // leaves), so collecting them first would take many times the sources' memory, and a sort.
  std::vector<char> marks(source_count_, 0);
  const auto mark = [&marks](std::size_t source) {
    std::atomic_ref<char>(marks[source]).store(1, std::memory_order_relaxed);
  };
  const auto& cells = tree_->cells();
  const auto order = tree_->source_order();
#pragma omp parallel for schedule(dynamic, 64)
  for (std::size_t l = 0; l < upward_leaves_.size(); ++l) {
    const Cell& c = cells[upward_leaves_[l]];
    if (c.level < 2) continue;
    for (std::size_t i = c.source_begin; i < c.source_end; ++i) mark(order[i]);
  }
  // The near lists read their sources exactly (compact_near_sources).
  const auto near = near_field_lists().source_order;
#pragma omp parallel for schedule(static)
  for (std::size_t i = 0; i < near.size(); ++i) mark(near[i]);
  return marks;
}

void Fmm::apply(std::span<const cplx> charges, std::span<const cplx> dipoles,
                std::span<cplx> potential, FmmObserver* observer) const {
  if (potential.size() != targets_.size() ||
      (!charges.empty() && charges.size() != source_count_) ||
      (!dipoles.empty() && dipoles.size() != source_count_))
    throw Error("FMM: charges, dipoles or potentials of the wrong size");
  if (!dipoles.empty() && !with_normals_) throw Error("FMM: dipoles need source normals");
  if (gpu_far_field_)
    apply_gpu_from_host(charges, dipoles, potential, observer);
  else
    apply_cpu(charges, dipoles, potential, observer);
}

// The CPU executor: the six phases in turn, on expansions of this apply.
void Fmm::apply_cpu(std::span<const cplx> charges, std::span<const cplx> dipoles,
                    std::span<cplx> potential, FmmObserver* observer) const {
  const std::size_t coefficients =
      (slot_.empty() ? tree_->cells().size() : num_slots_) * order_ * order_;
  std::vector<cplx> multipole(coefficients, 0.0), local(coefficients, 0.0);
  std::fill(potential.begin(), potential.end(), cplx(0.0));
  run_phase(observer, FmmPhase::p2m, [&] { p2m_cpu(charges, dipoles, multipole); });
  run_phase(observer, FmmPhase::m2m, [&] { m2m_cpu(multipole); });
  const auto near = [&] {
    run_phase(observer, FmmPhase::near_field, [&] { near_field_cpu(charges, dipoles, potential); });
  };
  if (combine_multipoles_)
    run_phase(observer, FmmPhase::exchange, [&] { combine_multipoles_(multipole); });
  if (exchange_end_) {  // the near field needs no multipole: it runs while they travel
    near();
    run_phase(observer, FmmPhase::exchange, [&] { exchange_end_(multipole); });
  }
  run_phase(observer, FmmPhase::m2l, [&] { m2l_cpu(multipole, local); });
  run_phase(observer, FmmPhase::l2l, [&] { l2l_cpu(local); });
  run_phase(observer, FmmPhase::l2p, [&] { l2p_cpu(local, potential); });
  if (!exchange_end_) near();
}

void Fmm::p2m_cpu(std::span<const cplx> charges, std::span<const cplx> dipoles,
                  std::span<cplx> multipole) const {
  const Octree& tree = *tree_;
  const auto& cells = tree.cells();
  const int p = order_, size = p * p;
  const bool with_dipoles = !dipoles.empty(), with_charges = !charges.empty();
  const auto& leaves = upward_leaves_;
#pragma omp parallel
  {
    const int extended = (p + 1) * (p + 1);
    // Dipoles: grad Rhat_n^m = sum over terms of c g_q Rhat_a^(m-q), so the
    // moments need, per q, sum_j d_j conj(n_j . g_q) conj(Rhat(y_j)); the
    // gradient terms are applied once per leaf, not once per point.
    std::vector<cplx> basis(extended), by_q(3 * extended);
    const HarmonicGradient g[3] = {harmonic_gradient(-1), harmonic_gradient(0),
                                   harmonic_gradient(1)};
#pragma omp for schedule(dynamic, 8)
    for (std::size_t l = 0; l < leaves.size(); ++l) {
      const Cell& cell = cells[leaves[l]];
      if (cell.level < 2 || cell.source_begin == cell.source_end) continue;
      const Level& lv = levels_[cell.level];
      cplx* m = &multipole[slot(leaves[l]) * size];
      if (with_dipoles) std::fill(by_q.begin(), by_q.end(), cplx(0.0));
      const LeafSources held = leaf_sources(leaves[l]);
      for (std::size_t i = held.begin; i < held.end; ++i) {
        const std::size_t j = held.order[i];
        regular_basis(with_dipoles ? p : p - 1, k_, lv.sigma, held.points[i] - cell.center,
                      basis.data());
        if (with_charges)
          for (int c = 0; c < size; ++c) m[c] += charges[j] * std::conj(basis[c]);
        if (with_dipoles && dipoles[j] != 0.0)
          for (int q = -1; q <= 1; ++q) {
            const HarmonicGradient& h = g[q + 1];
            const Vec3& nu = held.normals[i];
            const cplx weight = dipoles[j] * std::conj(h.x * nu.x + h.y * nu.y + h.z * nu.z);
            cplx* acc = &by_q[(q + 1) * extended];
            for (int c = 0; c < extended; ++c) acc[c] += weight * std::conj(basis[c]);
          }
      }
      if (with_dipoles)
        for (const GradientTerm& term : lv.gradient)
          m[term.target] +=
              std::conj(term.coefficient) * by_q[(term.q + 1) * extended + term.source];
    }
  }
}

void Fmm::m2m_cpu(std::span<cplx> multipole) const {
  const Octree& tree = *tree_;
  const auto& cells = tree.cells();
  const int size = order_ * order_;
  for (int level = tree.levels() - 2; level >= 2; --level) {
    const auto ids = tree.cells_at_level(level);
#pragma omp parallel for schedule(dynamic, 8)
    for (std::size_t i = 0; i < ids.size(); ++i) {
      const Cell& cell = cells[ids[i]];
      if (cell.is_leaf() || cell.source_begin == cell.source_end) continue;
      if (!own_cells_.empty() && !own_cells_[ids[i]]) continue;
      for (int ch = cell.first_child; ch < cell.first_child + cell.num_children; ++ch)
        // A child without this part's leaves below has no partial multipole here.
        if (cells[ch].source_begin < cells[ch].source_end && (own_cells_.empty() || own_cells_[ch]))
          multiply_add(size, levels_[level + 1].m2m[cells[ch].octant].data(),
                       &multipole[slot(ch) * size], &multipole[slot(ids[i]) * size]);
    }
  }
}

void Fmm::m2l_cpu(std::span<const cplx> multipole, std::span<cplx> local) const {
  apply_m2l_reference(m2l_plan_, multipole.data(), local.data());
}

void Fmm::l2l_cpu(std::span<cplx> local) const {
  const Octree& tree = *tree_;
  const auto& cells = tree.cells();
  const int size = order_ * order_;
  for (int level = 3; level < tree.levels(); ++level) {
    const auto ids = tree.cells_at_level(level);
#pragma omp parallel for schedule(dynamic, 8)
    for (std::size_t i = 0; i < ids.size(); ++i) {
      const Cell& cell = cells[ids[i]];
      if (cell.target_begin == cell.target_end) continue;
      multiply_add(size, levels_[level].l2l[cell.octant].data(), &local[slot(cell.parent) * size],
                   &local[slot(ids[i]) * size]);
    }
  }
}

void Fmm::l2p_cpu(std::span<const cplx> local, std::span<cplx> potential) const {
  const auto& cells = tree_->cells();
  const auto target_order = tree_->target_order();
  const int p = order_, size = p * p, extended = (p + 1) * (p + 1);
  const auto& leaves = target_leaves_;
  const bool with_normals = !target_normals_.empty();
#pragma omp parallel
  {
    // With target normals: grad Rhat_n^m = sum over terms of c g_q Rhat_a^(m-q) (degree a up to
    // p), so n . grad phi = sum_q (n . g_q) sum_a Rhat_a Lq_a with Lq_a = sum of c L_nm over the
    // terms (q, a) (no conjugation: L2P uses Rhat itself), formed once per leaf; per target one
    // combined vector L + weight sum_q (n . g_q) Lq and one dot product with Rhat to degree p.
    std::vector<cplx> basis(with_normals ? extended : size);
    std::vector<cplx> by_q(with_normals ? 3 * extended : 0), combined(with_normals ? extended : 0);
    const HarmonicGradient g[3] = {harmonic_gradient(-1), harmonic_gradient(0),
                                   harmonic_gradient(1)};
#pragma omp for schedule(dynamic, 8)
    for (std::size_t l = 0; l < leaves.size(); ++l) {
      const Cell& cell = cells[leaves[l]];
      if (cell.level < 2) continue;
      const Level& lv = levels_[cell.level];
      const cplx* lc = &local[slot(leaves[l]) * size];
      if (with_normals) {
        std::fill(by_q.begin(), by_q.end(), cplx(0.0));
        for (const GradientTerm& term : lv.gradient)
          by_q[(term.q + 1) * extended + term.source] += term.coefficient * lc[term.target];
      }
      for (std::size_t i = cell.target_begin; i < cell.target_end; ++i) {
        const std::size_t t = target_order[i];
        cplx sum = 0.0;
        if (!with_normals) {
          regular_basis(p - 1, k_, lv.sigma, targets_[t] - cell.center, basis.data());
          for (int c = 0; c < size; ++c) sum += lc[c] * basis[c];
        } else {
          regular_basis(p, k_, lv.sigma, targets_[t] - cell.center, basis.data());
          const Vec3& n = target_normals_[t];
          cplx w[3];
          for (int q = 0; q < 3; ++q)
            w[q] = target_normal_weight_ * (g[q].x * n.x + g[q].y * n.y + g[q].z * n.z);
          for (int c = 0; c < extended; ++c) {
            const cplx from_gradient =
                w[0] * by_q[c] + w[1] * by_q[extended + c] + w[2] * by_q[2 * extended + c];
            combined[c] = c < size ? lc[c] + from_gradient : from_gradient;
          }
          for (int c = 0; c < extended; ++c) sum += combined[c] * basis[c];
        }
        potential[t] += sum;
      }
    }
  }
}

void Fmm::near_field_cpu(std::span<const cplx> charges, std::span<const cplx> dipoles,
                         std::span<cplx> potential) const {
  add_near_field_cpu(near_field_lists(), charges, dipoles, potential);
}

// The GPU executor's phases: each a launch on the default stream, the expansions resident; with
// an observer each phase waits for its kernels, so that its time is the GPU's.
void Fmm::gpu_phase(FmmObserver* observer, FmmPhase phase,
                    const std::function<void()>& work) const {
  run_phase(observer, phase, [&] {
    work();
    if (observer) gpu_far_field_->synchronize();
  });
}

// The upward pass on the GPU (device_potential zeroed for the far and near fields to add to);
// distributed, the packed exchange is begun.
void Fmm::upward_pass_gpu(const cplx* device_charges, const cplx* device_dipoles,
                          cplx* device_potential, FmmObserver* observer) const {
  GpuFarField& gpu = *gpu_far_field_;
  gpu.clear_expansions();
  gpu.zero_potential(device_potential);
  gpu_phase(observer, FmmPhase::p2m,
            [&] { gpu.p2m(device_charges, device_dipoles, upward_leaf_begin_, upward_leaf_end_); });
  gpu_phase(observer, FmmPhase::m2m, [&] { gpu.m2m(); });
  if (combine_multipoles_)
    gpu_phase(observer, FmmPhase::exchange, [&] { combine_multipoles_gpu(); });
  if (gpu_packing_)
    gpu_phase(observer, FmmPhase::exchange, [&] {
      gpu_packing_->gather(gpu.multipole());
      packed_exchange_.begin(gpu_packing_->send_buffer(), gpu_packing_->receive_buffer());
    });
}

// The downward pass on the GPU, adding to device_potential; distributed, the packed exchange is
// completed first.
void Fmm::downward_pass_gpu(cplx* device_potential, FmmObserver* observer) const {
  GpuFarField& gpu = *gpu_far_field_;
  if (gpu_packing_)
    gpu_phase(observer, FmmPhase::exchange, [&] {
      packed_exchange_.end();
      gpu_packing_->add_received(gpu.multipole());
    });
  gpu_phase(observer, FmmPhase::m2l, [&] { gpu_m2l_->apply_device(gpu.multipole(), gpu.local()); });
  gpu_phase(observer, FmmPhase::l2l, [&] { gpu.l2l(); });
  gpu_phase(observer, FmmPhase::l2p, [&] { gpu.l2p(device_potential); });
}

// share_upward_pass's combine, or a distributed exchange on the multipole array: correct, not
// fast (all multipoles cross the host; distribute() gives the GPU the packed exchange).
void Fmm::combine_multipoles_gpu() const {
  std::vector<cplx> host(tree_->cells().size() * order_ * order_);
  gpu_far_field_->download_multipoles(host);
  combine_multipoles_(host);
  if (exchange_end_) exchange_end_(host);
  gpu_far_field_->upload_multipoles(host);
}

void Fmm::apply_gpu_from_host(std::span<const cplx> charges, std::span<const cplx> dipoles,
                              std::span<cplx> potential, FmmObserver* observer) const {
  if (!device_charges_) {
    device_charges_ = std::make_unique<DeviceArray>(source_count_);
    device_dipoles_ = std::make_unique<DeviceArray>(with_normals_ ? source_count_ : 0);
  }
  if (!charges.empty()) device_charges_->upload(charges.data());
  if (!dipoles.empty()) device_dipoles_->upload(dipoles.data());
  const cplx* device_charges = charges.empty() ? nullptr : device_charges_->data();
  const cplx* device_dipoles = dipoles.empty() ? nullptr : device_dipoles_->data();
  if (gpu_near_field_) {
    apply_device(device_charges, device_dipoles, device_potential_->data(), observer);
    device_potential_->download(potential.data());
  } else {  // the near field on the host after the download, never overlapped
    upward_pass_gpu(device_charges, device_dipoles, device_potential_->data(), observer);
    downward_pass_gpu(device_potential_->data(), observer);
    device_potential_->download(potential.data());
    run_phase(observer, FmmPhase::near_field, [&] { near_field_cpu(charges, dipoles, potential); });
  }
}

bool Fmm::runs_on_gpu() const { return gpu_far_field_ && gpu_near_field_; }

void Fmm::apply_device(const cplx* device_charges, const cplx* device_dipoles,
                       cplx* device_potential, FmmObserver* observer) const {
  if (!runs_on_gpu())
    throw Error(
        "FMM: apply_device needs the whole FMM on the GPU (-fmm_device gpu or auto with a "
        "GPU, and the near field there)");
  if (device_dipoles && !with_normals_) throw Error("FMM: dipoles need source normals");
  const auto near = [&] {
    gpu_phase(observer, FmmPhase::near_field, [&] {
      gpu_near_field_->apply_device(device_charges, device_dipoles, device_potential);
    });
  };
  upward_pass_gpu(device_charges, device_dipoles, device_potential, observer);
  // Overlapped: the near field's kernels run while the multipoles travel (it needs none).
  if (overlap_packed_exchange_) near();
  downward_pass_gpu(device_potential, observer);
  if (!overlap_packed_exchange_) near();
}

std::string Fmm::describe() const {
  const FmmStatistics& s = statistics_;
  std::ostringstream out;
  out << "FMM: k = " << k_ << ", p = " << s.order << " (" << s.order * s.order
      << " coefficients), max leaf " << options_.max_leaf << ", " << s.levels << " levels, "
      << s.leaves << " leaves; " << targets_.size() << " targets in " << s.target_leaves
      << " of them (max " << s.max_leaf_targets << ", mean " << std::fixed << std::setprecision(1)
      << s.mean_leaf_targets << " a leaf)\n";
  if (!target_normals_.empty())
    out << "  output phi + w dphi/dn_t (target normals), w = " << std::defaultfloat
        << std::setprecision(6) << target_normal_weight_.real()
        << (target_normal_weight_.imag() < 0 ? " - " : " + ")
        << std::abs(target_normal_weight_.imag()) << "i\n"
        << std::fixed;
  out << "  level   cells  leaves  M2L pairs  transfer matrices\n";
  for (int l = 0; l < s.levels; ++l)
    out << "  " << std::setw(5) << l << std::setw(8) << s.cells_per_level[l] << std::setw(8)
        << s.leaves_per_level[l] << std::setw(11) << s.m2l_pairs_per_level[l] << std::setw(19)
        << s.transfer_matrices_per_level[l] << "\n";
  out << "  near-field point pairs of these targets " << s.near_pairs
      << ", k * (coarsest M2L cell width) " << std::setprecision(3) << s.max_kappa << "\n";
  const double mb = 1.0 / (1024.0 * 1024.0);
  out << "  memory (MiB): tree and lists " << std::setprecision(1) << s.tree_bytes * mb
      << ", translation matrices " << s.translation_bytes * mb << ", expansions "
      << s.expansion_bytes * mb << ", sources " << s.source_bytes * mb << ", total "
      << s.total_bytes() * mb << "\n";
  out << "  P2M, M2M, L2L, L2P on " << s.far_field_device;
  if (gpu_far_field_)
    out << ": " << gpu_far_field_->describe() << ", " << gpu_far_field_->device_bytes() * mb
        << " MiB of device memory (expansions included)";
  out << "\n  M2L on " << s.m2l_device;
  if (gpu_m2l_)
    out << ": " << gpu_m2l_->describe() << ", " << gpu_m2l_->statistics().device_bytes * mb
        << " MiB of device memory";
  out << "\n  near field on " << s.near_field_device;
  if (gpu_near_field_)
    out << ": " << gpu_near_field_->describe() << ", "
        << gpu_near_field_->statistics().device_bytes * mb << " MiB of device memory";
  out << "\n";
  if (s.gpu_bytes > 0)
    out << "  device memory held (also the peak of apply_device) " << s.gpu_bytes * mb << " MiB"
        << (runs_on_gpu() ? ", apply_device available" : "") << "\n";
  return out.str();
}

}  // namespace fmbem::fmm
