#include "fmbem/fmm/fmm.hpp"

#include <omp.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <iomanip>
#include <numeric>
#include <optional>
#include <sstream>

#include "diagonal_levels.hpp"
#include "fmbem/core/error.hpp"
#include "fmbem/fmm/m2l_plan.hpp"
#include "fmbem/fmm/rotation_translations.hpp"
#include "fmbem/fmm/wideband_plan.hpp"
#include "fmm_executor.hpp"

namespace fmbem::fmm {

namespace {

using PhaseScope = ObservedPhase<FmmPhase>;

// The accuracy the wideband plan is built for: the tolerance asked, 1e-6 where an order was
// given instead.
double wideband_eps(const FmmOptions& options) {
  return options.tolerance > 0.0 && options.tolerance < 1.0 ? options.tolerance : 1e-6;
}

template <class Work>
void run_phase(FmmObserver* observer, FmmPhase phase, Work&& work) {
  PhaseScope scope(observer, phase);
  work();
}

// The indices whose mark is set, ascending.
std::vector<std::size_t> marked_indices(const std::vector<char>& marks) {
  std::vector<std::size_t> indices;
  for (std::size_t i = 0; i < marks.size(); ++i)
    if (marks[i]) indices.push_back(i);
  return indices;
}

// A part's view of the given tree (FmmPart::tree): the sources of the leaves the part
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
  // box, k = 0 and 8: tests/unit/bem/fmm_layer_potentials_test.cpp) at
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

Fmm::~Fmm() = default;

Fmm::Fmm(double k, std::span<const Vec3> sources, std::span<const Vec3> source_normals,
         std::span<const Vec3> targets, std::span<const Vec3> splitting_points,
         const FmmOptions& options, FmmObserver* observer,
         const TargetNormalDerivative& normal_derivative, const std::optional<FmmPart>& part)
    : k_(options.screened ? Wavenumber::screened(k) : Wavenumber(k)),
      options_(options),
      source_count_(sources.size()),
      with_normals_(!source_normals.empty()),
      targets_(targets.begin(), targets.end()) {
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
  // (A part without targets, a rank that owns no rows, has no normals to give.)
  if (normal_derivative.apart && normal_derivative.normals.empty() && !targets.empty())
    throw Error("FMM: the normal derivative apart needs the target normals");
  if (normal_derivative.apart ||
      (!normal_derivative.normals.empty() && normal_derivative.weight != 0.0)) {
    target_normals_.assign(normal_derivative.normals.begin(), normal_derivative.normals.end());
    target_normal_weight_ = normal_derivative.apart ? 1.0 : normal_derivative.weight;
    derivative_apart_ = normal_derivative.apart;
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
    tree_ = part && part->tree ? part_view(*part->tree, part->let, options_.max_leaf, sources,
                                           targets, splitting_points)
                               : std::make_unique<Octree>(sources, targets, splitting_points,
                                                          OctreeOptions{options_.max_leaf});
    // A part's own tree is its partition's (FmmPartition's): no leaf on the diagonal levels of
    // every k up to options.largest_wavenumber.
    if (part && !part->tree)
      if (const int level = diagonal_min_leaf_level(*tree_, options_);
          level > 0 && holds_leaf_above(*tree_, level))
        tree_ = std::make_unique<Octree>(
            sources, targets, splitting_points,
            OctreeOptions{.max_leaf = options_.max_leaf, .min_leaf_level = level});
    // Cells too large for the low-frequency expansions translate in the diagonal form (a
    // wideband FMM): the whole tree's plan, before the near lists, which take its direct pairs.
    if (k_.oscillation() > 0.0 && options.high_frequency)
      plan_diagonal_levels(sources, targets, splitting_points, wideband_eps(options), part);
    for (int leaf : tree_->leaves())
      if (tree_->cells()[leaf].target_begin < tree_->cells()[leaf].target_end)
        target_leaves_.push_back(leaf);
    upward_leaf_end_ = tree_->leaves().size();
    upward_leaves_ = tree_->leaves();
    // The part's LocallyEssentialTree in this tree's cell ids, renumbered once.
    if (part) {
      part_in_tree = in_tree_cells(part->let);
      part_leaves = mark_part(*part_in_tree);
    }
    build_near_lists();
    hold_sources(sources, source_normals);
    if (options.strengths_of_sources_read) number_strengths_by_sources_read();
  }
  {
    PhaseScope scope(observer, FmmPhase::translations);
    build_translations(gpu);
    choose_executor();
    if (part) {
      finish_restriction(*part_in_tree, part_leaves);
      constructed_part_cells_ = part->let.own_cells;
    }
  }
}

void Fmm::plan_diagonal_levels(std::span<const Vec3> sources, std::span<const Vec3> targets,
                               std::span<const Vec3> splitting_points, double eps,
                               const std::optional<FmmPart>& part) {
  // The plan is the whole tree's: a part's FMM holds a view of the partition's tree (or a whole
  // tree of its own, given a LocallyEssentialTree without one) and builds the plan on that.
  const Octree& shape = part && part->tree ? *part->tree : *tree_;
  // An order chosen from the tolerance rises where the levels below the diagonal ones need it;
  // one the caller gave stays (and without a valid plan the FMM stays low-frequency).
  const int given_order = order_;
  const double k = k_.oscillation();
  if (options_.order <= 0) order_ = wideband_order(shape, given_order, k, eps);
  WidebandPlan wideband = build_wideband_plan(shape, order_, k, eps);
  // No leaf on the diagonal levels: their points would each form and evaluate signatures of the
  // level's bandwidth (and their deferred pairs be summed directly); split down to the
  // conversion level they take the low-frequency P2M and L2P there instead. The widths are the
  // root's halvings, so the rebuilt tree keeps the plan's levels. A part cannot rebuild the
  // partition's tree (its LocallyEssentialTree is of that tree): the partition must be built
  // without such leaves (FmmOptions::largest_wavenumber), else the part stays low-frequency.
  if (wideband.uses_diagonal_form() && holds_leaf_above(shape, wideband.switch_level + 1)) {
    if (part) {
      order_ = given_order;
      statistics_.diagonal_refused = true;
      return;
    }
    tree_ = std::make_unique<Octree>(
        sources, targets, splitting_points,
        OctreeOptions{.max_leaf = options_.max_leaf, .min_leaf_level = wideband.switch_level + 1});
    if (options_.order <= 0) order_ = wideband_order(*tree_, given_order, k, eps);
    wideband = build_wideband_plan(*tree_, order_, k, eps);
  }
  if (!wideband.uses_diagonal_form()) return;
  if (!part) {
    diagonal_ = std::make_unique<DiagonalLevels>(*tree_, std::move(wideband), k, order_, eps);
    return;
  }
  if (!wideband.direct_pairs.empty())
    throw Error("FMM: a distributed part's diagonal levels met a leaf above them (a defect)");
  // A part: the cells above its own targets' conversion-level cells are the ones its diagonal
  // M2L and downward pass serve; its conversion-level cells (in its view, if it holds one) hold
  // their expansions. Ids of tree_ to the shape's through the whole tree's (either may be a
  // view of held cells).
  const int conversion = wideband.levels.back().level;
  const auto shape_ids = shape.cells_at_level(conversion);
  std::vector<char> wanted(std::size_t(shape_ids.back()) + 1, 0);
  std::vector<int> held(shape_ids.size(), -1);
  for (int c : tree_->cells_at_level(conversion)) {
    const int whole = shape.cell_of_whole_id(tree_->whole_cell_id(c));
    if (whole < 0) throw Error("FMM: the part's view holds a cell its tree does not (a defect)");
    held[std::size_t(whole - shape_ids.front())] = c;
    const Cell& cell = tree_->cells()[std::size_t(c)];
    if (cell.target_begin == cell.target_end) continue;
    for (int a = whole; a >= 0 && !wanted[std::size_t(a)]; a = shape.cells()[std::size_t(a)].parent)
      wanted[std::size_t(a)] = 1;
  }
  diagonal_ = std::make_unique<DiagonalLevels>(shape, std::move(wideband), k, order_, eps,
                                               std::move(wanted), std::move(held));
}

int diagonal_min_leaf_level(const Octree& tree, const FmmOptions& options) {
  const double k = options.largest_wavenumber;
  if (!options.high_frequency || !(k > 0.0)) return 0;
  const double eps = wideband_eps(options);
  const int order = options.order > 0
                        ? options.order
                        : wideband_order(tree, chosen_tree_size(options).order, k, eps);
  const int switch_level = wideband_switch_level(tree, order, k, eps);
  return switch_level < 0 ? 0 : switch_level + 1;
}

std::vector<int> diagonal_level_cells(const Octree& tree, const FmmOptions& options) {
  const int level = diagonal_min_leaf_level(tree, options);
  std::vector<int> cells;
  for (int l = 0; level > 0 && l <= level && l < tree.levels(); ++l)
    for (int c : tree.cells_at_level(l)) cells.push_back(c);
  return cells;
}

void Fmm::truncate_to_level_orders(std::span<cplx> expansions) const {
  const std::size_t size = std::size_t(order_) * std::size_t(order_);
  for (int level : truncated_levels_) {
    const std::size_t kept = std::size_t(level_orders_[std::size_t(level)]) *
                             std::size_t(level_orders_[std::size_t(level)]);
    const auto ids = tree_->cells_at_level(level);
#pragma omp parallel for schedule(static)
    for (std::size_t i = 0; i < ids.size(); ++i) {
      if (!slot_.empty() && slot_[ids[i]] < 0) continue;
      cplx* cell = expansions.data() + slot(ids[i]) * size;
      std::fill(cell + kept, cell + size, cplx(0.0));
    }
  }
}

bool Fmm::diagonal_levels_on_part() const { return diagonal_ && diagonal_->part; }

FmmTreeSize chosen_tree_size(const FmmOptions& options) {
  FmmTreeSize chosen;
  chosen.order = options.order > 0 ? options.order : order_for_tolerance(options.tolerance);
  chosen.gpu = options.device != FmmOptions::Device::cpu && gpu_available();
  chosen.max_leaf =
      options.measured_max_leaf ? default_max_leaf(chosen.gpu, chosen.order) : options.max_leaf;
  return chosen;
}

int default_max_leaf(bool gpu, int order) {
  // Where the near field's direct sum and the M2L balance (bench/results/gpu_fmm.md and
  // cpu_translations.md): on the CPU, since its translations are vectorised, 40 is the fastest
  // or within 15 % of it from one core to 16, p = 11 and 17, 3 and 6 source points an element;
  // above p = 17 (not measured since) the leaves of the older measurement stay.
  if (!gpu) return order <= 17 ? 40 : 100;
  return order <= 12 ? 50 : 150;
}

M2LScheme default_m2l_scheme(int order) { return order <= 8 ? M2LScheme::dmma : M2LScheme::gemm; }

void Fmm::check_no_diagonal_levels(const char* what) const {
  if (diagonal_)
    throw Error(std::string(what) + ": this FMM's levels 2.." +
                std::to_string(diagonal_->plan.switch_level) +
                " run in the high-frequency (diagonal) form, which a distributed FMM does not run "
                "yet (build it with its part)");
}

void Fmm::choose_executor() {
  std::string why;
  if (options_.device != FmmOptions::Device::cpu && gpu_available(&why)) {
#if FMBEM_HAVE_CUDA  // else there is no GPU executor, and gpu_available says why
    executor_ = make_gpu_executor(statistics_);
    return;
#endif
  }
  if (options_.device == FmmOptions::Device::gpu) throw Error("-fmm_device gpu: " + why);
  if (options_.device == FmmOptions::Device::automatic)
    statistics_.m2l_device = "cpu (no GPU: " + why + ")";
  executor_ = make_cpu_executor();
}

bool Fmm::upward_pass_on_gpu() const { return executor_->expansions_on_device(); }

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
                        .target_normal_weight = target_normal_weight_,
                        .derivative_apart = derivative_apart_};
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
    const auto add_cell = [&](int s) {
      if (cells[s].source_begin < cells[s].source_end) {
        const auto whole = tree.whole_source_range(s);
        cell_ranges.push_back({cells[s].source_begin, cells[s].source_end, whole[0], whole[1]});
      }
    };
    tree.for_each_near_source_cell(leaf, add_cell);
    // A wideband FMM's deferred pairs that met a leaf.
    if (diagonal_) {
      const auto& direct = diagonal_->plan.direct_pairs;
      for (auto it = std::lower_bound(direct.begin(), direct.end(), std::pair<int, int>(leaf, -1));
           it != direct.end() && it->first == leaf; ++it)
        add_cell(it->second);
    }
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
    statistics_.translation_bytes += lv.gradient.size() * sizeof(GradientTerm);
  }
  // The CPU shifts by rotation from the order its M2L does (the GPU's far field takes the dense
  // matrices): O(p^3) a child instead of p^4, tables of O(p^3).
  const bool rotate = !gpu && p >= rotation_m2l_min_order && p <= max_rotation_order;
  for (int level = 2; level < num_levels; ++level) {
    Level& lv = levels_[level];
    if (rotate) {
      lv.shifts = std::make_shared<const RotationShifts>(p, k_, tree.width(level - 1));
      statistics_.translation_bytes += lv.shifts->bytes();
    } else {
      statistics_.translation_bytes += 16 * size * size * sizeof(cplx);
    }
  }
  // The shifts of levels >= 2, one (level, octant) a thread: at p = 16 each is milliseconds.
  const int shifts = rotate ? 0 : 8 * std::max(0, num_levels - 2);
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
  // Each low-frequency level's order: where the coarsest one needs more than the tolerance's p
  // (wideband_order raised p for it), the finer ones keep theirs. Their expansions are
  // truncated to it after M2M (and, on the GPU, the locals after M2L), so that every executor
  // and part translates the same truncated expansions.
  const int first_m2l_level = diagonal_ ? diagonal_->conversion_level() : 2;
  level_orders_ =
      options_.order <= 0 && k_.oscillation() > 0.0
          ? low_frequency_level_orders(tree, p, order_for_tolerance(options_.tolerance),
                                       k_.oscillation(), wideband_eps(options_), first_m2l_level)
          : std::vector<int>(std::size_t(num_levels), p);
  truncated_levels_.clear();
  for (int level = 0; level < num_levels; ++level)
    if (level_orders_[std::size_t(level)] < p) truncated_levels_.push_back(level);
  if (!truncated_levels_.empty()) statistics_.level_orders = level_orders_;
  // M2L: one plan for the CPU and the GPU executors; the GPU's builds its matrices itself.
  m2l_plan_ =
      build_m2l_plan(tree, p, k_, !gpu, first_m2l_level, rotation_m2l_min_order, level_orders_);
  if (diagonal_) {
    statistics_.switch_level = diagonal_->plan.switch_level;
    statistics_.diagonal_pairs = diagonal_->plan.diagonal_pair_count();
    statistics_.deferred_direct_pairs = diagonal_->plan.direct_pairs.size();
    for (const DiagonalLevels::Level& lv : diagonal_->levels)
      statistics_.diagonal_bandwidths.push_back(lv.grid->bandwidth());
    statistics_.translation_bytes += diagonal_->bytes();
  }
  for (const M2LLevelPlan& lv : m2l_plan_.levels) {
    statistics_.m2l_pairs_per_level[lv.level] = static_cast<int>(lv.pairs.size());
    statistics_.transfer_matrices_per_level[lv.level] = static_cast<int>(lv.matrix_count());
    statistics_.translation_bytes += lv.matrices.size() * sizeof(cplx) +
                                     lv.pairs.size() * sizeof(M2LPair) +
                                     (lv.rotations ? lv.rotations->bytes() : 0);
    if (statistics_.max_kappa == 0.0) statistics_.max_kappa = k_.oscillation() * lv.sigma;
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
  statistics_.expansion_bytes = 2 * cells.size() * size * sizeof(cplx) +
                                (diagonal_ ? 2 * diagonal_->signature_entries() * sizeof(cplx) : 0);
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
  // The diagonal levels' signatures are not exchanged: every part runs the whole upward pass
  // (the same result, the upward pass not shared).
  if (diagonal_) return;
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
  exchange_ = parts > 1 ? std::make_unique<WholeArrayExchange>(std::move(combine), nullptr, false)
                        : nullptr;
}

void Fmm::distribute_upward_pass(const LocallyEssentialTree& let,
                                 std::function<void(std::span<cplx> multipoles)> exchange) {
  if (!exchange) throw Error("FMM: the distributed upward pass needs an exchange");
  restrict_upward_pass(let);
  exchange_ = std::make_unique<WholeArrayExchange>(std::move(exchange), nullptr, false);
}

void Fmm::distribute_upward_pass(const LocallyEssentialTree& let, PackedMultipoleExchange exchange,
                                 bool overlap) {
  if (!executor_->expansions_on_device())
    throw Error(
        "FMM: the packed multipole exchange is the GPU upward pass's; on the CPU the exchange "
        "takes the multipole array");
  if (!exchange.begin || !exchange.end)
    throw Error("FMM: the distributed upward pass needs an exchange");
  std::unique_ptr<Exchange> packed =
      executor_->packed_exchange(in_tree_cells(let), std::move(exchange), overlap);
  restrict_upward_pass(let);
  statistics_.gpu_bytes += packed->device_bytes();
  exchange_ = std::move(packed);  // in place of a share_upward_pass's before
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
  if (executor_->expansions_on_device()) {
    // The GPU's P2M visits the part's leaves (their indices into leaves(), which is ascending)
    // and its M2M the part's own cells; its expansions are its tree's cells' (a part's view:
    // the cells the part reads), zero at the cells the part does not own until the exchange
    // adds the received partials.
    const auto& all = tree_->leaves();
    std::vector<std::size_t> indices;
    for (int leaf : leaves)
      indices.push_back(std::size_t(std::lower_bound(all.begin(), all.end(), leaf) - all.begin()));
    std::sort(indices.begin(), indices.end());
    executor_->restrict_upward_pass(indices, own_cells_);
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
    // Restricted at construction (FmmPart): the tree given now must be that one.
    if (let.own_cells != *constructed_part_cells_)
      throw Error("FMM: the locally essential tree differs from the part this FMM was built for");
    return;
  }
  check_no_diagonal_levels("FMM: distributing the upward pass");
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
  if (!exchange_begin) throw Error("FMM: the distributed upward pass needs an exchange");
  restrict_upward_pass(let);
  // Apart (the near field between) where the executor's multipoles are the host's own.
  exchange_ = std::make_unique<WholeArrayExchange>(
      std::move(exchange_begin), std::move(exchange_end), executor_->multipoles_on_host());
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
  if (potential.size() != targets_.size() * std::size_t(outputs_per_target()) ||
      (!charges.empty() && charges.size() != source_count_) ||
      (!dipoles.empty() && dipoles.size() != source_count_))
    throw Error("FMM: charges, dipoles or potentials of the wrong size");
  if (!dipoles.empty() && !with_normals_) throw Error("FMM: dipoles need source normals");
  run_phases({charges.empty() ? nullptr : charges.data(),
              dipoles.empty() ? nullptr : dipoles.data(), potential.data(), false},
             observer);
}

bool Fmm::runs_on_gpu() const { return executor_->runs_on_device(); }

void Fmm::apply_device(const cplx* device_charges, const cplx* device_dipoles,
                       cplx* device_potential, FmmObserver* observer) const {
  if (!runs_on_gpu())
    throw Error(
        "FMM: apply_device needs the whole FMM on the GPU (-fmm_device gpu or auto with a "
        "GPU, and the near field there)");
  if (device_dipoles && !with_normals_) throw Error("FMM: dipoles need source normals");
  run_phases({device_charges, device_dipoles, device_potential, true}, observer);
}

// exafmm-t's upward and downward passes, once for every executor: each phase a named, observed
// step (on a device, waited for at its end when observed, so that its time is the device's).
void Fmm::run_phases(const Arrays& arrays, FmmObserver* observer) const {
  Executor& executor = *executor_;
  const auto phase = [&](FmmPhase name, auto&& work) {
    run_phase(observer, name, [&] {
      work();
      if (observer) executor.synchronize();
    });
  };
  const auto near = [&] { phase(FmmPhase::near_field, [&] { executor.near_field(); }); };
  const bool overlap = exchange_ && exchange_->overlaps_near_field();
  executor.start(arrays);
  phase(FmmPhase::p2m, [&] { executor.p2m(); });
  phase(FmmPhase::m2m, [&] { executor.m2m(); });
  if (exchange_) {
    phase(FmmPhase::exchange, [&] { exchange_->begin(executor); });
    if (overlap) near();  // the near field needs no multipole: it runs while they travel
    if (exchange_->has_end()) phase(FmmPhase::exchange, [&] { exchange_->end(executor); });
  }
  phase(FmmPhase::m2l, [&] { executor.m2l(); });
  phase(FmmPhase::l2l, [&] { executor.l2l(); });
  phase(FmmPhase::l2p, [&] { executor.l2p(); });
  if (!overlap) near();
  executor.finish();
}

void Fmm::WholeArrayExchange::begin(Executor& executor) {
  executor.with_multipoles([&](std::span<cplx> multipoles) {
    begin_(multipoles);
    if (end_ && !apart_) end_(multipoles);
  });
}

void Fmm::WholeArrayExchange::end(Executor& executor) {
  if (apart_) executor.with_multipoles(end_);
}

std::string Fmm::describe() const {
  const FmmStatistics& s = statistics_;
  std::ostringstream out;
  out << "FMM: " << (k_.imaginary ? "screened, kappa = " : "k = ") << k_.magnitude
      << ", p = " << s.order << " (" << s.order * s.order << " coefficients), max leaf "
      << options_.max_leaf << ", " << s.levels << " levels, " << s.leaves << " leaves; "
      << targets_.size() << " targets in " << s.target_leaves << " of them (max "
      << s.max_leaf_targets << ", mean " << std::fixed << std::setprecision(1)
      << s.mean_leaf_targets << " a leaf)\n";
  if (derivative_apart_)
    out << "  output phi and dphi/dn_t apart (target normals)\n";
  else if (!target_normals_.empty())
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
  if (s.switch_level >= 0) {
    out << "  high-frequency (diagonal) levels 2.." << s.switch_level << ", converted at level "
        << s.switch_level + 1 << "; sphere-grid bandwidths";
    for (int b : s.diagonal_bandwidths) out << " " << b;
    out << "; " << s.diagonal_pairs << " diagonal pairs, " << s.deferred_direct_pairs
        << " deferred pairs summed directly\n";
  }
  if (!s.level_orders.empty()) {
    out << "  low-frequency orders by level (expansions truncated after M2M):";
    for (std::size_t l = 2; l < s.level_orders.size(); ++l)
      out << " " << l << ":" << s.level_orders[l];
    out << "\n";
  }
  if (s.diagonal_refused)
    out << "  no diagonal levels: the distributed partition's tree holds a leaf on them (built "
           "for a lower k); low-frequency throughout\n";
  out << "  near-field point pairs of these targets " << s.near_pairs
      << ", k * (coarsest M2L cell width) " << std::setprecision(3) << s.max_kappa << "\n";
  const double mb = 1.0 / (1024.0 * 1024.0);
  out << "  memory (MiB): tree and lists " << std::setprecision(1) << s.tree_bytes * mb
      << ", translation matrices " << s.translation_bytes * mb << ", expansions "
      << s.expansion_bytes * mb << ", sources " << s.source_bytes * mb << ", total "
      << s.total_bytes() * mb << "\n";
  out << executor_->describe(s);
  if (s.gpu_bytes > 0)
    out << "  device memory held (also the peak of apply_device) " << s.gpu_bytes * mb << " MiB"
        << (runs_on_gpu() ? ", apply_device available" : "") << "\n";
  return out.str();
}

}  // namespace fmbem::fmm
