#include "fmbem/fmm/octree.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <initializer_list>
#include <limits>
#include <numeric>
#include <string>
#include <utility>

#include "fmbem/core/error.hpp"

namespace fmbem::fmm {
namespace {

using MortonKey = std::uint64_t;

// Moves bit b of the low 21 bits of v to bit 3b.
constexpr MortonKey spread_bits(MortonKey v) {
  v &= 0x1fffff;
  v = (v | v << 32) & 0x1f00000000ffff;
  v = (v | v << 16) & 0x1f0000ff0000ff;
  v = (v | v << 8) & 0x100f00f00f00f00f;
  v = (v | v << 4) & 0x10c30c30c30c30c3;
  v = (v | v << 2) & 0x1249249249249249;
  return v;
}

// x in bit 0 of every triple, so that a key's lowest digit is the octant of Cell::octant.
constexpr MortonKey morton_key(const std::array<int, 3>& c) {
  return spread_bits(MortonKey(c[0])) | spread_bits(MortonKey(c[1])) << 1 |
         spread_bits(MortonKey(c[2])) << 2;
}
static_assert(morton_key({1, 0, 0}) == 1 && morton_key({0, 1, 0}) == 2 &&
              morton_key({0, 0, 1}) == 4 && morton_key({2, 0, 0}) == 8);
static_assert(morton_key({0x1fffff, 0x1fffff, 0x1fffff}) == (MortonKey(1) << 63) - 1);

struct KeyedIndex {
  MortonKey key;
  std::size_t index;
};

// Below this many points (or cells) a loop costs less than waking the threads.
constexpr std::int64_t kParallelPoints = 1 << 14;
constexpr int kParallelCells = 1 << 10;

constexpr int kDigitBits = 8;
constexpr int kBuckets = 1 << kDigitBits;
// Below this many items (256 KiB) a range sorts in cache, least significant digit first.
constexpr std::size_t kCacheSizedRange = std::size_t(1) << 14;

int digit_of(const KeyedIndex& item, int shift) {
  return int((item.key >> shift) & (kBuckets - 1));
}

// Stable LSD radix sort of a cache-sized range by the low key_bits bits of the keys.
void lsd_radix_sort(std::span<KeyedIndex> items, std::span<KeyedIndex> buffer, int key_bits) {
  std::span<KeyedIndex> from = items, to = buffer.first(items.size());
  for (int shift = 0; shift < key_bits; shift += kDigitBits) {
    std::array<std::size_t, kBuckets> next{};
    for (const KeyedIndex& item : from) ++next[digit_of(item, shift)];
    // A digit that all keys share (common in clustered clouds) leaves the order as is.
    if (std::find(next.begin(), next.end(), from.size()) != next.end()) continue;
    std::size_t offset = 0;
    for (std::size_t& count : next) offset += std::exchange(count, offset);
    for (const KeyedIndex& item : from) to[next[digit_of(item, shift)]++] = item;
    std::swap(from, to);
  }
  if (from.data() != items.data()) std::copy(from.begin(), from.end(), items.begin());
}

// Stable radix sort by the low key_bits bits: most significant digit first while a range is
// bigger than the cache, so that the remaining passes run on cache-sized pieces, in parallel.
// Chunks and buckets do not depend on the thread count; being stable, the result is unique.
void radix_sort(std::span<KeyedIndex> items, std::span<KeyedIndex> buffer, int key_bits) {
  const std::size_t n = items.size();
  if (n <= kCacheSizedRange || key_bits <= kDigitBits) {
    lsd_radix_sort(items, buffer, key_bits);
    return;
  }
  const int shift = key_bits - kDigitBits;
  const std::int64_t chunk_count = std::clamp<std::int64_t>(std::int64_t(n / 32768), 1, 64);
  const auto chunk_begin = [&](std::int64_t chunk) { return n * chunk / chunk_count; };
  std::vector<std::array<std::size_t, kBuckets>> histograms(chunk_count);
#pragma omp parallel for schedule(static)
  for (std::int64_t chunk = 0; chunk < chunk_count; ++chunk) {
    auto& histogram = histograms[chunk];
    histogram.fill(0);
    for (std::size_t i = chunk_begin(chunk); i < chunk_begin(chunk + 1); ++i)
      ++histogram[digit_of(items[i], shift)];
  }
  std::array<std::size_t, kBuckets + 1> bucket_begin{};
  for (int digit = 0; digit < kBuckets; ++digit) {
    bucket_begin[digit + 1] = bucket_begin[digit];
    for (const auto& histogram : histograms) bucket_begin[digit + 1] += histogram[digit];
  }
  if (std::adjacent_find(bucket_begin.begin(), bucket_begin.end(),
                         [n](auto a, auto b) { return b - a == n; }) != bucket_begin.end()) {
    radix_sort(items, buffer, shift);
    return;
  }
  // Digit-major, chunk-minor offsets keep equal digits in input order.
  for (int digit = 0; digit < kBuckets; ++digit) {
    std::size_t offset = bucket_begin[digit];
    for (auto& histogram : histograms) offset += std::exchange(histogram[digit], offset);
  }
#pragma omp parallel for schedule(static)
  for (std::int64_t chunk = 0; chunk < chunk_count; ++chunk) {
    auto& next = histograms[chunk];
    for (std::size_t i = chunk_begin(chunk); i < chunk_begin(chunk + 1); ++i)
      buffer[next[digit_of(items[i], shift)]++] = items[i];
  }
#pragma omp parallel for schedule(static)
  for (std::int64_t chunk = 0; chunk < chunk_count; ++chunk) {
    std::copy(buffer.begin() + chunk_begin(chunk), buffer.begin() + chunk_begin(chunk + 1),
              items.begin() + chunk_begin(chunk));
  }
  // Nested (off by default), the parallel loops above get one thread: the buckets carry the work.
#pragma omp parallel for schedule(dynamic)
  for (int digit = 0; digit < kBuckets; ++digit) {
    const std::size_t begin = bucket_begin[digit], size = bucket_begin[digit + 1] - begin;
    if (size > 1) radix_sort(items.subspan(begin, size), buffer.subspan(begin, size), shift);
  }
}

// Closed boxes compared at the finer level's resolution: touching counts, and so does overlap
// (a cell and its ancestors).
bool adjacent(const Cell& a, const Cell& b) {
  const int level = std::max(a.level, b.level);
  const int shift_a = level - a.level, shift_b = level - b.level;
  for (int dim = 0; dim < 3; ++dim) {
    const std::int64_t low_a = std::int64_t(a.coords[dim]) << shift_a;
    const std::int64_t high_a = std::int64_t(a.coords[dim] + 1) << shift_a;
    const std::int64_t low_b = std::int64_t(b.coords[dim]) << shift_b;
    const std::int64_t high_b = std::int64_t(b.coords[dim] + 1) << shift_b;
    if (low_a > high_b || low_b > high_a) return false;
  }
  return true;
}

bool same_level_adjacent(const Cell& a, const Cell& b) {
  for (int dim = 0; dim < 3; ++dim)
    if (std::abs(a.coords[dim] - b.coords[dim]) > 1) return false;
  return true;
}

// Same-level cells adjacent to a cell or the cell itself: at most 3^3.
struct Colleagues {
  std::array<int, 27> cells;
  int count = 0;
  std::span<const int> list() const { return std::span<const int>(cells).first(count); }
};

// The colleagues of `cell` (same-level adjacent cells and itself), each passed to push in
// ascending order: the children of its parent's colleagues (ascending) adjacent to it, since
// those hold every colleague of a child and siblings are contiguous. The one step of every
// colleague search (the whole tree's table, a part's closure, one cell's chain).
template <class Push>
void append_colleagues(const std::vector<Cell>& cells, int cell,
                       std::span<const int> parent_colleagues, Push&& push) {
  for (int uncle : parent_colleagues) {
    const Cell& u = cells[uncle];
    for (int other = u.first_child; other < u.first_child + u.num_children; ++other)
      if (same_level_adjacent(cells[cell], cells[other])) push(other);
  }
}

// Built level by level from the parent's colleagues' children, which hold every colleague of a
// child. Parents come in index order and siblings are contiguous, so each list is ascending.
std::vector<Colleagues> find_colleagues(const std::vector<Cell>& cells,
                                        const std::vector<int>& level_begin) {
  std::vector<Colleagues> colleagues(cells.size());
  colleagues[0].cells[0] = 0;
  colleagues[0].count = 1;
  for (std::size_t level = 1; level + 1 < level_begin.size(); ++level) {
#pragma omp parallel for if (level_begin[level + 1] - level_begin[level] > kParallelCells)
    for (int cell = level_begin[level]; cell < level_begin[level + 1]; ++cell) {
      Colleagues& mine = colleagues[cell];
      append_colleagues(cells, cell, colleagues[cells[cell].parent].list(),
                        [&](int other) { mine.cells[mine.count++] = other; });
    }
  }
  return colleagues;
}

// Fills per-cell lists in parallel: fill(cell, lists, scratch) appends cell's entries to each
// of lists[k]. Cells are cut into fixed chunks and every list is sorted, so the result does not
// depend on the thread count or schedule.
template <std::size_t kLists, class Fill>
std::array<detail::CellLists, kLists> build_cell_lists(int cell_count, const Fill& fill) {
  constexpr int kChunk = 256;
  const int chunk_count = (cell_count + kChunk - 1) / kChunk;
  std::vector<std::array<std::vector<int>, kLists>> chunk_lists(chunk_count);
  std::array<detail::CellLists, kLists> result;
  for (auto& lists : result) lists.offsets.assign(cell_count + 1, 0);
#pragma omp parallel if (cell_count > kParallelCells)
  {
    std::vector<int> scratch;
#pragma omp for schedule(dynamic)
    for (int chunk = 0; chunk < chunk_count; ++chunk) {
      auto& lists = chunk_lists[chunk];
      for (int cell = chunk * kChunk; cell < std::min(cell_count, (chunk + 1) * kChunk); ++cell) {
        std::array<std::size_t, kLists> before;
        for (std::size_t k = 0; k < kLists; ++k) before[k] = lists[k].size();
        fill(cell, lists, scratch);
        for (std::size_t k = 0; k < kLists; ++k) {
          std::sort(lists[k].begin() + before[k], lists[k].end());
          result[k].offsets[cell + 1] = lists[k].size() - before[k];
        }
      }
    }
  }
  for (auto& lists : result) {
    std::partial_sum(lists.offsets.begin(), lists.offsets.end(), lists.offsets.begin());
    lists.indices.resize(lists.offsets.back());
  }
#pragma omp parallel for if (cell_count > kParallelCells)
  for (int chunk = 0; chunk < chunk_count; ++chunk)
    for (std::size_t k = 0; k < kLists; ++k)
      std::copy(chunk_lists[chunk][k].begin(), chunk_lists[chunk][k].end(),
                result[k].indices.begin() + result[k].offsets[chunk * kChunk]);
  return result;
}

// The X list is W read backwards: d in x(c) exactly when c in w(d). Walking d in ascending order
// keeps each x(c) sorted.
detail::CellLists invert(const detail::CellLists& lists, int cell_count) {
  detail::CellLists inverse;
  inverse.offsets.assign(cell_count + 1, 0);
  for (int cell : lists.indices) ++inverse.offsets[cell + 1];
  std::partial_sum(inverse.offsets.begin(), inverse.offsets.end(), inverse.offsets.begin());
  inverse.indices.resize(lists.indices.size());
  std::vector<std::size_t> next(inverse.offsets.begin(), inverse.offsets.end() - 1);
  for (int from = 0; from < cell_count; ++from)
    for (int to : lists.row(from)) inverse.indices[next[to]++] = from;
  return inverse;
}

bool is_finite(const Vec3& p) {
  return std::isfinite(p.x) && std::isfinite(p.y) && std::isfinite(p.z);
}

std::size_t count_non_finite(std::span<const Vec3> points) {
  std::size_t non_finite = 0;
  const std::int64_t n = std::int64_t(points.size());
#pragma omp parallel for if (n > kParallelPoints) reduction(+ : non_finite)
  for (std::int64_t i = 0; i < n; ++i) non_finite += !is_finite(points[i]);
  return non_finite;
}

// The tree of one whole point set: a single part, nothing to reduce.
struct SinglePart final : Octree::PartReduction {
  void extremes(std::array<double, 3>&, std::array<double, 3>&) const override {}
  void sum(std::span<std::size_t>) const override {}
};

struct Box {
  Vec3 low, high;
};

// The same span twice: the default splitting points are the targets themselves.
bool same_points(std::span<const Vec3> a, std::span<const Vec3> b) {
  return a.data() == b.data() && a.size() == b.size();
}

// Of the union of point sets, any of which may be empty (then low > high).
Box bounding_box(std::initializer_list<std::span<const Vec3>> point_sets) {
  constexpr double kInfinity = std::numeric_limits<double>::infinity();
  // C arrays: OpenMP reduces array sections, not std::array.
  double low[3] = {kInfinity, kInfinity, kInfinity};
  double high[3] = {-kInfinity, -kInfinity, -kInfinity};
  for (std::span<const Vec3> points : point_sets) {
    const std::int64_t n = std::int64_t(points.size());
    // clang-format off
#pragma omp parallel for if (n > kParallelPoints) reduction(min : low[:3]) reduction(max : high[:3])
    // clang-format on
    for (std::int64_t i = 0; i < n; ++i) {
      const double p[3] = {points[i].x, points[i].y, points[i].z};
      for (int dim = 0; dim < 3; ++dim) {
        low[dim] = std::min(low[dim], p[dim]);
        high[dim] = std::max(high[dim], p[dim]);
      }
    }
  }
  return {{low[0], low[1], low[2]}, {high[0], high[1], high[2]}};
}

// The Morton key of a point's cell at max_level. Clamped in double, before the cast: rounding
// may put a point a hair outside the root.
class PointKeys {
 public:
  PointKeys(const Vec3& root_low, double root_width, int max_level)
      : root_low_(root_low),
        cells_per_side_(std::ldexp(1.0, max_level)),
        scale_(cells_per_side_ / root_width) {}
  MortonKey operator()(const Vec3& p) const {
    return morton_key(
        {coordinate(p.x, root_low_.x), coordinate(p.y, root_low_.y), coordinate(p.z, root_low_.z)});
  }

 private:
  int coordinate(double value, double low) const {
    return int(std::clamp(std::floor((value - low) * scale_), 0.0, cells_per_side_ - 1.0));
  }
  Vec3 root_low_;
  double cells_per_side_, scale_;
};

// Points sorted by the Morton key of their cell at max_level (stable: equal keys keep their
// order); of the points at `held` (ascending indices) where given, else of all.
std::vector<KeyedIndex> sorted_by_key(std::span<const Vec3> points, const PointKeys& key_of,
                                      int max_level, std::span<const std::size_t> held = {},
                                      bool all = true) {
  const std::int64_t n = std::int64_t(all ? points.size() : held.size());
  std::vector<KeyedIndex> items(n);
#pragma omp parallel for if (n > kParallelPoints)
  for (std::int64_t i = 0; i < n; ++i) {
    const std::size_t index = all ? std::size_t(i) : held[i];
    items[i] = {key_of(points[index]), index};
  }
  std::vector<KeyedIndex> buffer(items.size());
  radix_sort(items, buffer, 3 * max_level);
  return items;
}

// The first item of a key-sorted range whose key is >= key.
std::size_t first_at_or_after(const std::vector<KeyedIndex>& items, std::size_t begin,
                              std::size_t end, MortonKey key) {
  const auto it = std::partition_point(items.begin() + begin, items.begin() + end,
                                       [key](const KeyedIndex& item) { return item.key < key; });
  return std::size_t(it - items.begin());
}

// A cell's key-sorted range [begin, end) cut by its children's octants: octant k is
// [at[k], at[k + 1]). Within the cell all keys share its prefix, so the octant digit is sorted.
std::array<std::size_t, 9> octant_bounds(const std::vector<KeyedIndex>& items, std::size_t begin,
                                         std::size_t end, MortonKey cell_key, int child_shift) {
  std::array<std::size_t, 9> at;
  at[0] = begin;
  at[8] = end;
  for (int octant = 1; octant < 8; ++octant)
    at[octant] = first_at_or_after(items, at[octant - 1], end,
                                   (cell_key << 3 | MortonKey(octant)) << child_shift);
  return at;
}

}  // namespace

Octree::Octree(std::span<const Vec3> sources, std::span<const Vec3> targets,
               std::span<const Vec3> splitting_points, const OctreeOptions& options)
    : options_(options) {
  check_and_build(sources, targets, splitting_points, SinglePart{});
}

Octree::Octree(std::span<const Vec3> sources, std::span<const Vec3> targets,
               std::span<const Vec3> splitting_points, const OctreeOptions& options,
               const PartReduction& parts)
    : options_(options), holds_point_orders_(false) {
  check_and_build(sources, targets, splitting_points, parts);
  // No part holds the whole tree's lists: each keeps its own cells' (hold_lists_of).
  auto none = std::make_shared<Lists>();
  none->row_of_cell.assign(cells_.size(), -1);
  for (detail::CellLists* list : {&none->near, &none->m2l, &none->w, &none->x}) list->offsets = {0};
  lists_ = std::move(none);
}

void Octree::check_and_build(std::span<const Vec3> sources, std::span<const Vec3> targets,
                             std::span<const Vec3> splitting_points, const PartReduction& parts) {
  if (options_.max_leaf < 1)
    throw Error("Octree: max_leaf must be >= 1, got " + std::to_string(options_.max_leaf));
  if (options_.max_level < 0 || options_.max_level > kMaxLevel)
    throw Error("Octree: max_level must be in 0.." + std::to_string(kMaxLevel) + ", got " +
                std::to_string(options_.max_level));
  // Counted over all parts, so that every part throws the same error or none does. Called with
  // the targets as splitting points (on every part), the messages name the targets.
  const bool targets_split_here = same_points(splitting_points, targets);
  std::array<std::size_t, 7> counts = {sources.size(),
                                       targets.size(),
                                       splitting_points.size(),
                                       count_non_finite(sources),
                                       count_non_finite(targets),
                                       targets_split_here ? 0 : count_non_finite(splitting_points),
                                       targets_split_here ? 0u : 1u};
  parts.sum(counts);
  const bool targets_split = counts[6] == 0;
  const auto check = [](std::size_t size, std::size_t non_finite, const char* what,
                        bool may_be_empty) {
    if (size == 0 && !may_be_empty) throw Error(std::string("Octree: no ") + what);
    if (non_finite > 0) throw Error(std::string("Octree: non-finite coordinate among the ") + what);
  };
  check(counts[0], counts[3], "sources", false);
  check(counts[1], counts[4], "targets", !targets_split);
  if (!targets_split) check(counts[2], counts[5], "splitting points", false);
  build_cells(sources, targets, splitting_points, parts);
  if (holds_point_orders_) build_lists();
}

Octree::Octree(const Octree& shape, std::span<const Vec3> sources,
               std::span<const std::size_t> held_sources, std::span<const Vec3> targets)
    : options_(shape.options_),
      root_center_(shape.root_center_),
      root_width_(shape.root_width_),
      cells_(shape.cells_),
      level_begin_(shape.level_begin_),
      cell_ids_(shape.cell_ids_),
      leaves_(shape.leaves_),
      whole_cell_ids_(shape.whole_cell_ids_),
      lists_(shape.lists_) {
  whole_source_ranges_.resize(cells_.size());
  for (int cell = 0; cell < int(cells_.size()); ++cell)
    whole_source_ranges_[cell] = shape.whole_source_range(cell);
  sort_part_points(sources, held_sources, targets);
}

Octree::Octree(const Octree& shape, std::span<const int> cells, std::span<const Vec3> sources,
               std::span<const std::size_t> held_sources, std::span<const Vec3> targets)
    : options_(shape.options_), root_center_(shape.root_center_), root_width_(shape.root_width_) {
  const int shape_cells = int(shape.cells_.size());
  if (cells.empty() || cells[0] != 0)
    throw Error("Octree: a view of held cells holds the root first");
  for (std::size_t i = 1; i < cells.size(); ++i)
    if (cells[i] <= cells[i - 1] || cells[i] >= shape_cells)
      throw Error("Octree: a view's held cells must be ascending ids of the tree's cells");
  whole_cell_ids_.resize(cells.size());
  for (std::size_t i = 0; i < cells.size(); ++i) whole_cell_ids_[i] = shape.whole_cell_id(cells[i]);
  // Per cell of shape, its id here (-1: not held): 4 bytes a shape cell while this is built.
  std::vector<int> local_of(std::size_t(shape_cells), -1);
  for (std::size_t i = 0; i < cells.size(); ++i) local_of[std::size_t(cells[i])] = int(i);
  const auto local = [&](int cell) { return cell < 0 ? -1 : local_of[std::size_t(cell)]; };
  // Children of one cell are contiguous in shape, so those held are contiguous here.
  cells_.resize(cells.size());
  whole_source_ranges_.resize(cells.size());
  for (std::size_t i = 0; i < cells.size(); ++i) {
    Cell c = shape.cells_[std::size_t(cells[i])];
    whole_source_ranges_[i] = shape.whole_source_range(cells[i]);
    if (i > 0) {
      c.parent = local(c.parent);
      if (c.parent < 0)
        throw Error("Octree: a view of held cells must hold each held cell's parent (cell " +
                    std::to_string(cells[i]) + ")");
      Cell& parent = cells_[std::size_t(c.parent)];
      if (parent.num_children++ == 0) parent.first_child = int(i);
    }
    c.first_child = -1;
    c.num_children = 0;
    cells_[i] = c;
  }
  // Levels in order (the shape's ids are breadth-first).
  for (std::size_t i = 0; i < cells_.size(); ++i)
    while (int(level_begin_.size()) <= cells_[i].level) level_begin_.push_back(int(i));
  level_begin_.push_back(int(cells_.size()));
  cell_ids_.resize(cells_.size());
  std::iota(cell_ids_.begin(), cell_ids_.end(), 0);
  for (int cell = 0; cell < int(cells_.size()); ++cell)
    if (cells_[cell].is_leaf()) leaves_.push_back(cell);

  // The shape's held lists of held cells, renumbered; a list naming a cell not held is dropped.
  auto lists = std::make_shared<Lists>();
  lists->row_of_cell.assign(cells_.size(), -1);
  std::array<detail::CellLists*, 4> out = {&lists->near, &lists->m2l, &lists->w, &lists->x};
  for (detail::CellLists* list : out) list->offsets.assign(1, 0);
  int rows = 0;
  for (int cell = 0; cell < int(cells_.size()); ++cell) {
    const int whole = cells[std::size_t(cell)];
    if (!shape.holds_lists_of(whole)) continue;
    const std::array<std::span<const int>, 4> in = {shape.near(whole), shape.m2l(whole),
                                                    shape.w_list(whole), shape.x_list(whole)};
    bool complete = true;
    for (const std::span<const int> list : in)
      for (int entry : list) complete = complete && local(entry) >= 0;
    if (!complete) continue;
    for (std::size_t k = 0; k < 4; ++k) {
      for (int entry : in[k]) out[k]->indices.push_back(local(entry));
      out[k]->offsets.push_back(out[k]->indices.size());
    }
    lists->row_of_cell[std::size_t(cell)] = rows++;
  }
  lists_ = std::move(lists);
  sort_part_points(sources, held_sources, targets);
}

int Octree::cell_of_whole_id(int whole_cell) const {
  if (whole_cell_ids_.empty())
    return whole_cell >= 0 && std::size_t(whole_cell) < cells_.size() ? whole_cell : -1;
  const auto at = std::lower_bound(whole_cell_ids_.begin(), whole_cell_ids_.end(), whole_cell);
  return at != whole_cell_ids_.end() && *at == whole_cell ? int(at - whole_cell_ids_.begin()) : -1;
}

void Octree::sort_part_points(std::span<const Vec3> sources,
                              std::span<const std::size_t> held_sources,
                              std::span<const Vec3> targets) {
  for (std::size_t i = 0; i < held_sources.size(); ++i)
    if (held_sources[i] >= sources.size() || (i > 0 && held_sources[i] <= held_sources[i - 1]))
      throw Error("Octree: a part's held sources must be ascending indices of its sources");
  std::size_t non_finite = count_non_finite(targets);
  for (std::size_t s : held_sources) non_finite += !is_finite(sources[s]);
  if (non_finite > 0) throw Error("Octree: non-finite coordinate among a part's points");

  const int max_level = options_.max_level;
  const PointKeys key_of(root_center_ - Vec3{0.5, 0.5, 0.5} * root_width_, root_width_, max_level);
  const std::vector<KeyedIndex> source_items =
      sorted_by_key(sources, key_of, max_level, held_sources, false);
  const std::vector<KeyedIndex> target_items = sorted_by_key(targets, key_of, max_level);
  source_order_.resize(source_items.size());
  target_order_.resize(target_items.size());
  for (std::size_t i = 0; i < source_items.size(); ++i) source_order_[i] = source_items[i].index;
  for (std::size_t i = 0; i < target_items.size(); ++i) target_order_[i] = target_items[i].index;
  // Parents before children (cells are breadth-first): a child's range is its octant's part of
  // its parent's, found by the octant's first key as in build_cells.
  cells_[0].source_begin = cells_[0].target_begin = 0;
  cells_[0].source_end = source_items.size();
  cells_[0].target_end = target_items.size();
  for (int index = 0; index < int(cells_.size()); ++index) {
    Cell& parent = cells_[index];
    if (parent.is_leaf()) continue;
    const int child_shift = 3 * (max_level - parent.level - 1);
    const MortonKey parent_key = morton_key(parent.coords);
    for (const bool of_sources : {true, false}) {
      const std::vector<KeyedIndex>& items = of_sources ? source_items : target_items;
      const std::size_t begin = of_sources ? parent.source_begin : parent.target_begin;
      const std::size_t end = of_sources ? parent.source_end : parent.target_end;
      const std::array<std::size_t, 9> at =
          octant_bounds(items, begin, end, parent_key, child_shift);
      std::size_t placed = 0;
      for (int child = parent.first_child; child < parent.first_child + parent.num_children;
           ++child) {
        const int octant = cells_[child].octant;
        (of_sources ? cells_[child].source_begin : cells_[child].target_begin) = at[octant];
        (of_sources ? cells_[child].source_end : cells_[child].target_end) = at[octant + 1];
        placed += at[octant + 1] - at[octant];
      }
      if (placed != end - begin)
        throw Error(std::string("Octree: a part's ") + (of_sources ? "source" : "target") +
                    " lies in no cell of the tree it was given (not a point of that tree)");
    }
  }
}

double Octree::width(int level) const { return std::ldexp(root_width_, -level); }

void Octree::build_cells(std::span<const Vec3> sources, std::span<const Vec3> targets,
                         std::span<const Vec3> splitting_points, const PartReduction& parts) {
  Box box = bounding_box({sources, targets, splitting_points});
  {
    std::array<double, 3> low = {box.low.x, box.low.y, box.low.z};
    std::array<double, 3> high = {box.high.x, box.high.y, box.high.z};
    parts.extremes(low, high);
    box = {{low[0], low[1], low[2]}, {high[0], high[1], high[2]}};
  }
  const Vec3 extent = box.high - box.low;
  const double largest_extent = std::max({extent.x, extent.y, extent.z});
  const double magnitude =
      std::max({std::abs(box.low.x), std::abs(box.low.y), std::abs(box.low.z), std::abs(box.high.x),
                std::abs(box.high.y), std::abs(box.high.z)});
  root_center_ = 0.5 * (box.low + box.high);
  // The floor keeps the cube well above the coordinates' rounding when the cloud is tiny
  // compared with its distance from the origin; relative to the coordinates alone, so that a
  // body of any size (1e-25 or 1e25) gets the same tree. Points all at the origin get a unit cube.
  root_width_ = std::max(largest_extent * (1.0 + 1e-6), 1e-12 * magnitude);
  if (!(root_width_ > 0.0)) root_width_ = 1.0;
  const Vec3 root_low = root_center_ - Vec3{0.5, 0.5, 0.5} * root_width_;

  const int max_level = options_.max_level;
  const PointKeys key_of(root_low, root_width_, max_level);
  const bool targets_split = same_points(splitting_points, targets);
  const std::vector<KeyedIndex> source_items = sorted_by_key(sources, key_of, max_level);
  const std::vector<KeyedIndex> target_items = sorted_by_key(targets, key_of, max_level);
  std::vector<KeyedIndex> own_splitting_items;
  if (!targets_split) own_splitting_items = sorted_by_key(splitting_points, key_of, max_level);
  const std::vector<KeyedIndex>& splitting_items =
      targets_split ? target_items : own_splitting_items;
  if (holds_point_orders_) {
    source_order_.resize(source_items.size());
    target_order_.resize(target_items.size());
#pragma omp parallel for if (source_items.size() > kParallelPoints)
    for (std::size_t i = 0; i < source_items.size(); ++i) source_order_[i] = source_items[i].index;
#pragma omp parallel for if (target_items.size() > kParallelPoints)
    for (std::size_t i = 0; i < target_items.size(); ++i) target_order_[i] = target_items[i].index;
  }

  // A cell's points of the three kinds, as ranges: in the union's sorted order (the cells'
  // ranges; for the splitting points, by cell index here) and in this part's sorted items.
  enum Kind { kSources, kTargets, kSplitting, kKinds };
  using Ranges = std::array<std::array<std::size_t, 2>, kKinds>;
  const std::array<const std::vector<KeyedIndex>*, kKinds> items = {&source_items, &target_items,
                                                                    &splitting_items};
  std::array<std::size_t, kKinds> totals = {sources.size(), targets.size(),
                                            splitting_points.size()};
  parts.sum(totals);
  std::vector<std::array<std::size_t, 2>> splitting_range = {{0, totals[kSplitting]}};
  std::vector<Ranges> local_ranges = {
      {{{0, sources.size()}, {0, targets.size()}, {0, splitting_items.size()}}}};
  Cell root;
  root.center = root_center_;
  root.source_end = totals[kSources];
  root.target_end = totals[kTargets];
  cells_.push_back(root);
  level_begin_ = {0};
  // This part's octant boundaries in a splitting cell: octant k is [at[k], at[k + 1]).
  using OctantBounds = std::array<std::array<std::size_t, 9>, kKinds>;
  std::vector<int> splitting_cells;
  std::vector<OctantBounds> bounds;
  std::vector<std::size_t> octant_counts;
  // Children are appended parent by parent, so each level is contiguous and, parents being in
  // Morton order, in Morton order itself.
  for (int level = 0; level_begin_.back() < int(cells_.size()); ++level) {
    const int level_begin = level_begin_.back(), level_end = int(cells_.size());
    level_begin_.push_back(level_end);
    if (level == max_level) continue;
    const int child_shift = 3 * (max_level - level - 1);
    splitting_cells.clear();
    // Every stored cell holds a point (children are stored only where they do; an empty root
    // splits into none), so above min_leaf_level every cell splits.
    for (int index = level_begin; index < level_end; ++index)
      if (splitting_range[index][1] - splitting_range[index][0] > std::size_t(options_.max_leaf) ||
          level < options_.min_leaf_level)
        splitting_cells.push_back(index);
    const int split_count = int(splitting_cells.size());
    // The binary searches, cache misses mostly, run in parallel; appending the children
    // in order does not.
    bounds.assign(split_count, {});
    octant_counts.assign(std::size_t(split_count) * 8 * kKinds, 0);
#pragma omp parallel for if (split_count > kParallelCells)
    for (int s = 0; s < split_count; ++s) {
      const int index = splitting_cells[s];
      const MortonKey parent_key = morton_key(cells_[index].coords);
      for (int kind = 0; kind < kKinds; ++kind) {
        const auto [begin, end] = local_ranges[index][kind];
        const auto& at = bounds[s][kind] =
            octant_bounds(*items[kind], begin, end, parent_key, child_shift);
        for (int octant = 0; octant < 8; ++octant)
          octant_counts[(std::size_t(s) * 8 + octant) * kKinds + kind] =
              at[octant + 1] - at[octant];
      }
    }
    // The union's counts per octant: the children's ranges in the union's order follow.
    parts.sum(octant_counts);
    const double child_width = width(level + 1);
    for (int s = 0; s < split_count; ++s) {
      const int index = splitting_cells[s];
      const std::array<int, 3> parent_coords = cells_[index].coords;
      std::array<std::size_t, kKinds> next = {
          cells_[index].source_begin, cells_[index].target_begin, splitting_range[index][0]};
      cells_[index].first_child = int(cells_.size());
      for (int octant = 0; octant < 8; ++octant) {
        const std::size_t* count = &octant_counts[(std::size_t(s) * 8 + octant) * kKinds];
        if (count[kSources] == 0 && count[kTargets] == 0 && count[kSplitting] == 0) continue;
        Cell child;
        child.level = level + 1;
        for (int dim = 0; dim < 3; ++dim)
          child.coords[dim] = 2 * parent_coords[dim] + ((octant >> dim) & 1);
        child.center =
            root_low +
            Vec3{child.coords[0] + 0.5, child.coords[1] + 0.5, child.coords[2] + 0.5} * child_width;
        child.parent = index;
        child.octant = std::int16_t(octant);
        child.source_begin = next[kSources];
        child.source_end = next[kSources] + count[kSources];
        child.target_begin = next[kTargets];
        child.target_end = next[kTargets] + count[kTargets];
        splitting_range.push_back({next[kSplitting], next[kSplitting] + count[kSplitting]});
        for (int kind = 0; kind < kKinds; ++kind) next[kind] += count[kind];
        Ranges local;
        for (int kind = 0; kind < kKinds; ++kind)
          local[kind] = {bounds[s][kind][octant], bounds[s][kind][octant + 1]};
        local_ranges.push_back(local);
        cells_.push_back(child);  // may reallocate: no references into cells_ are held here
        ++cells_[index].num_children;
        cells_[index].leaf = false;
      }
    }
  }
  cell_ids_.resize(cells_.size());
  std::iota(cell_ids_.begin(), cell_ids_.end(), 0);
  for (int index = 0; index < int(cells_.size()); ++index)
    if (cells_[index].is_leaf()) leaves_.push_back(index);
  if (holds_point_orders_) return;
  // A part's given points' leaves: each leaf's range of this part's sorted points, the ones the
  // octants' bounds put there by the keys leaf_of descends by.
  given_source_leaves_.assign(sources.size(), -1);
  given_target_leaves_.assign(targets.size(), -1);
  const std::int64_t leaf_count = std::int64_t(leaves_.size());
#pragma omp parallel for schedule(static) if (leaf_count > kParallelCells)
  for (std::int64_t l = 0; l < leaf_count; ++l) {
    const int leaf = leaves_[std::size_t(l)];
    for (const auto& [kind, out] :
         {std::pair{kSources, &given_source_leaves_}, std::pair{kTargets, &given_target_leaves_}}) {
      const auto [begin, end] = local_ranges[std::size_t(leaf)][kind];
      for (std::size_t i = begin; i < end; ++i) (*out)[(*items[kind])[i].index] = leaf;
    }
  }
}

std::vector<int> Octree::leaf_of(std::span<const Vec3> points) const {
  const int max_level = options_.max_level;
  const PointKeys key_of(root_center_ - Vec3{0.5, 0.5, 0.5} * root_width_, root_width_, max_level);
  std::vector<int> leaves(points.size(), -1);
  const std::int64_t n = std::int64_t(points.size());
#pragma omp parallel for if (n > kParallelPoints)
  for (std::int64_t i = 0; i < n; ++i) {
    const MortonKey key = key_of(points[i]);
    int cell = 0;
    while (cell >= 0 && !cells_[cell].is_leaf()) {
      const int octant = int((key >> (3 * (max_level - cells_[cell].level - 1))) & 7);
      const Cell& parent = cells_[cell];
      cell = -1;
      for (int child = parent.first_child; child < parent.first_child + parent.num_children;
           ++child)
        if (cells_[child].octant == octant) cell = child;
    }
    leaves[i] = cell;
  }
  return leaves;
}

void Octree::build_lists() {
  const std::vector<Cell>& cells = cells_;
  const int cell_count = int(cells.size());
  const std::vector<Colleagues> colleagues = find_colleagues(cells, level_begin_);

  // Per cell the colleagues of it and of each ancestor, the chain form_near_and_w and form_m2l
  // read.
  const auto chain_of = [&](int cell) {
    std::vector<std::span<const int>> chain;
    for (int a = cell; a >= 0; a = cells[a].parent) chain.push_back(colleagues[a].list());
    return chain;
  };
  const auto fill_near_and_w = [&](int cell, std::array<std::vector<int>, 2>& lists,
                                   std::vector<int>&) {
    form_near_and_w(cell, chain_of(cell), lists[0], lists[1]);
  };
  Lists lists;
  auto near_and_w = build_cell_lists<2>(cell_count, fill_near_and_w);
  lists.near = std::move(near_and_w[0]);
  lists.w = std::move(near_and_w[1]);

  const auto fill_m2l = [&](int cell, std::array<std::vector<int>, 1>& lists, std::vector<int>&) {
    form_m2l(cell, chain_of(cell), lists[0]);
  };
  lists.m2l = std::move(build_cell_lists<1>(cell_count, fill_m2l)[0]);
  lists.x = invert(lists.w, cell_count);
  lists_ = std::make_shared<const Lists>(std::move(lists));
}

void Octree::throw_lists_not_held(int cell) const {
  throw Error("Octree: the interaction lists of cell " + std::to_string(cell) +
              " are not held by this part (an internal error: a part reads its own cells' lists)");
}

void Octree::check_lists_can_be_formed() const {
  if (holds_cell_subset())
    throw Error(
        "Octree: a view of held cells forms no lists (an internal error: a part reads its "
        "own cells' lists)");
}

std::vector<std::vector<int>> Octree::colleague_chain(int cell) const {
  check_lists_can_be_formed();
  std::vector<int> path;
  for (int a = cell; a >= 0; a = cells_[a].parent) path.push_back(a);
  // Root first, each level's colleagues from its parent's colleagues' children, as
  // find_colleagues forms them (so each list is ascending), then turned to cell first.
  std::vector<std::vector<int>> chain(path.size());
  chain.back() = {0};
  for (std::size_t i = path.size() - 1; i-- > 0;)
    append_colleagues(cells_, path[i], chain[i + 1], [&](int other) { chain[i].push_back(other); });
  return chain;
}

namespace {

std::vector<std::span<const int>> as_spans(const std::vector<std::vector<int>>& lists) {
  return {lists.begin(), lists.end()};
}

// The colleagues of some cells and of all their ancestors, formed top-down as find_colleagues
// forms them: for many cells of a part at the cost of one search a cell, without the whole
// tree's table (a per-cell colleague_chain searches from the root every time).
struct ColleagueClosure {
  std::vector<int> row;  // per cell of the tree: its row, -1 outside the closure
  std::vector<Colleagues> rows;

  ColleagueClosure(const std::vector<Cell>& cells, std::span<const int> wanted)
      : row(cells.size(), -1) {
    for (int c : wanted)
      for (int a = c; a >= 0 && row[a] < 0; a = cells[a].parent) row[a] = 0;
    int count = 0;
    for (int& r : row)  // parents come before children
      if (r == 0) r = count++;
    rows.resize(std::size_t(count));
    if (count == 0) return;
    rows[0] = Colleagues{.cells = {0}, .count = 1};
    for (std::size_t cell = 1; cell < cells.size(); ++cell) {
      if (row[cell] < 0) continue;
      Colleagues& mine = rows[row[cell]];
      append_colleagues(cells, int(cell), rows[row[cells[cell].parent]].list(),
                        [&](int other) { mine.cells[mine.count++] = other; });
    }
  }

  // chain[i]: the colleagues of the cell's i-th ancestor (the cell's own first).
  std::vector<std::span<const int>> chain(const std::vector<Cell>& cells, int cell) const {
    std::vector<std::span<const int>> out;
    for (int a = cell; a >= 0; a = cells[a].parent) out.push_back(rows[row[a]].list());
    return out;
  }
};

// visit(cell, chain) for each of `wanted` (any order) on the OpenMP threads, chain its
// ColleagueClosure chain: the loop of every batch of lists formed from one colleague search.
template <class Visit>
void for_each_with_colleague_chain(const std::vector<Cell>& cells, std::span<const int> wanted,
                                   Visit&& visit) {
  const ColleagueClosure closure(cells, wanted);
  const std::int64_t count = std::int64_t(wanted.size());
#pragma omp parallel for schedule(dynamic, 16) if (count > kParallelCells)
  for (std::int64_t i = 0; i < count; ++i) {
    const int cell = wanted[std::size_t(i)];
    const std::vector<std::span<const int>> chain = closure.chain(cells, cell);
    visit(cell, std::span<const std::span<const int>>(chain));
  }
}

}  // namespace

// U and W of a leaf c; chain[i]: the colleagues of c's i-th ancestor (c's own first). Coarser
// adjacent leaves are colleagues of c's ancestors (the ancestor at their level touches them).
// Finer ones and W are found by descending from c's colleagues: a descendant adjacent to c is a
// U leaf or is opened further; the first non-adjacent one on a path is in W (its parent, opened,
// is adjacent).
void Octree::form_near_and_w(int cell, std::span<const std::span<const int>> chain,
                             std::vector<int>& near, std::vector<int>& w) const {
  const Cell& c = cells_[cell];
  if (!c.is_leaf()) return;
  // Appended to what the lists hold already (hold_lists_of fills several cells' in one).
  const std::size_t near_begin = near.size(), w_begin = w.size();
  for (std::size_t i = 1; i < chain.size(); ++i)
    for (int other : chain[i])
      if (cells_[other].is_leaf() && adjacent(cells_[other], c)) near.push_back(other);
  std::vector<int> pending;
  for (int other : chain[0]) {
    if (cells_[other].is_leaf()) {
      near.push_back(other);
    } else {
      for (int k = 0; k < cells_[other].num_children; ++k)
        pending.push_back(cells_[other].first_child + k);
    }
  }
  while (!pending.empty()) {
    const int other = pending.back();
    pending.pop_back();
    const Cell& d = cells_[other];
    if (!adjacent(d, c)) {
      w.push_back(other);
    } else if (d.is_leaf()) {
      near.push_back(other);
    } else {
      for (int k = 0; k < d.num_children; ++k) pending.push_back(d.first_child + k);
    }
  }
  std::sort(near.begin() + near_begin, near.end());
  std::sort(w.begin() + w_begin, w.end());
}

void Octree::form_m2l(int cell, std::span<const std::span<const int>> chain,
                      std::vector<int>& m2l) const {
  const Cell& c = cells_[cell];
  if (c.parent < 0) return;
  const std::size_t begin = m2l.size();
  for (int uncle : chain[1]) {
    const Cell& u = cells_[uncle];
    for (int other = u.first_child; other < u.first_child + u.num_children; ++other)
      if (!same_level_adjacent(c, cells_[other])) m2l.push_back(other);
  }
  std::sort(m2l.begin() + begin, m2l.end());
}

// d is in x(c) when c is in w(d): d a leaf whose descent from its colleague g (an ancestor of
// c at d's level) opens every cell down to c's parent (each adjacent to d, none a leaf) and stops
// at c (not adjacent). So d is a leaf colleague of a strict ancestor of c, other than that
// ancestor, adjacent to c's parent and not to c.
void Octree::form_x(int cell, std::span<const std::span<const int>> chain,
                    std::vector<int>& x) const {
  const Cell& c = cells_[cell];
  if (c.parent < 0) return;
  const Cell& parent = cells_[c.parent];
  const std::size_t begin = x.size();
  for (std::size_t i = 1; i < chain.size(); ++i)
    for (int d : chain[i])
      if (cells_[d].is_leaf() && adjacent(cells_[d], parent) && !adjacent(cells_[d], c))
        x.push_back(d);
  std::sort(x.begin() + begin, x.end());
}

// A part holds its own leaves' lists and their ancestors' (TreePartition::own_cells).
bool Octree::holds_near_source_lists_of(int leaf) const {
  for (int a = leaf; a >= 0; a = cells_[a].parent)
    if (!holds_lists_of(a)) return false;
  return true;
}

Octree::NearSourceLists Octree::near_source_lists_of(int leaf) const {
  check_cell(leaf);
  if (!cells_[leaf].is_leaf()) return {};
  if (holds_near_source_lists_of(leaf)) return near_source_lists_from(leaf, {});
  const std::vector<std::vector<int>> colleagues = colleague_chain(leaf);
  return near_source_lists_from(leaf, as_spans(colleagues));
}

Octree::NearSourceLists Octree::near_source_lists_from(
    int leaf, std::span<const std::span<const int>> chain) const {
  NearSourceLists lists;
  if (holds_near_source_lists_of(leaf)) {
    lists.near.assign(near(leaf).begin(), near(leaf).end());
    lists.w.assign(w_list(leaf).begin(), w_list(leaf).end());
    for (int a = leaf; a >= 0; a = cells_[a].parent)
      lists.x.insert(lists.x.end(), x_list(a).begin(), x_list(a).end());
    return lists;
  }
  form_near_and_w(leaf, chain, lists.near, lists.w);
  for (int a = leaf, i = 0; a >= 0; a = cells_[a].parent, ++i)
    form_x(a, chain.subspan(std::size_t(i)), lists.x);
  return lists;
}

void Octree::visit_near_source_lists_of(
    std::span<const int> leaves,
    const std::function<void(int, const NearSourceLists&)>& visit) const {
  check_lists_can_be_formed();
  for (int c : leaves) check_cell(c);
  for_each_with_colleague_chain(cells_, leaves, [&](int leaf, const auto& chain) {
    visit(leaf, cells_[leaf].is_leaf() ? near_source_lists_from(leaf, chain) : NearSourceLists{});
  });
}

void Octree::check_cell(int cell) const {
  if (cell < 0 || std::size_t(cell) >= cells_.size())
    throw Error("Octree: cell " + std::to_string(cell) + " out of range");
}

Octree::CellListSet Octree::lists_of(int cell) const {
  check_cell(cell);
  CellListSet lists;
  if (holds_lists_of(cell)) {
    const auto copy = [](std::span<const int> held) {
      return std::vector<int>(held.begin(), held.end());
    };
    lists.near = copy(near(cell));
    lists.m2l = copy(m2l(cell));
    lists.w = copy(w_list(cell));
    lists.x = copy(x_list(cell));
    return lists;
  }
  const std::vector<std::vector<int>> colleagues = colleague_chain(cell);
  const std::vector<std::span<const int>> chain = as_spans(colleagues);
  form_lists(cell, chain, lists);
  return lists;
}

void Octree::form_lists(int cell, std::span<const std::span<const int>> chain,
                        CellListSet& lists) const {
  form_near_and_w(cell, chain, lists.near, lists.w);
  form_m2l(cell, chain, lists.m2l);
  form_x(cell, chain, lists.x);
}

void Octree::visit_lists_of(std::span<const int> cells,
                            const std::function<void(int, const CellListSet&)>& visit) const {
  check_lists_can_be_formed();
  for (int c : cells) check_cell(c);
  for_each_with_colleague_chain(cells_, cells, [&](int cell, const auto& chain) {
    CellListSet lists;
    if (holds_lists_of(cell)) {
      lists = lists_of(cell);
    } else {
      form_lists(cell, chain, lists);
    }
    visit(cell, lists);
  });
}

std::vector<int> Octree::list_of(ListKind kind, int cell) const {
  CellListSet lists = lists_of(cell);
  switch (kind) {
    case ListKind::near:
      return std::move(lists.near);
    case ListKind::m2l:
      return std::move(lists.m2l);
    case ListKind::w:
      return std::move(lists.w);
    case ListKind::x:
      break;
  }
  return std::move(lists.x);
}

void Octree::hold_lists_of(std::span<const int> cells) {
  check_lists_can_be_formed();
  if (lists_.use_count() > 1 || lists_->row_of_cell.empty() || !lists_->near.indices.empty() ||
      lists_->near.offsets.size() > 1)
    throw Error("Octree: hold_lists_of is for a tree that holds no lists and shares none");
  std::vector<int> held(cells.begin(), cells.end());
  for (int c : held) check_cell(c);
  std::sort(held.begin(), held.end());
  held.erase(std::unique(held.begin(), held.end()), held.end());
  const int count = int(held.size());
  const ColleagueClosure closure(cells_, held);
  // Rows in ascending cell order, filled as build_lists fills its chunks.
  const auto fill = [&](int row, std::array<std::vector<int>, 4>& lists, std::vector<int>&) {
    const int cell = held[row];
    const std::vector<std::span<const int>> chain = closure.chain(cells_, cell);
    form_near_and_w(cell, chain, lists[0], lists[2]);
    form_m2l(cell, chain, lists[1]);
    form_x(cell, chain, lists[3]);
  };
  auto formed = build_cell_lists<4>(count, fill);
  auto lists = std::make_shared<Lists>();
  lists->near = std::move(formed[0]);
  lists->m2l = std::move(formed[1]);
  lists->w = std::move(formed[2]);
  lists->x = std::move(formed[3]);
  lists->row_of_cell.assign(cells_.size(), -1);
  for (int row = 0; row < count; ++row) lists->row_of_cell[held[row]] = row;
  lists_ = std::move(lists);
}

std::size_t Octree::list_bytes() const {
  std::size_t bytes = lists_->row_of_cell.size() * sizeof(int);
  for (const detail::CellLists* list : {&lists_->near, &lists_->m2l, &lists_->w, &lists_->x})
    bytes += list->indices.size() * sizeof(int) + list->offsets.size() * sizeof(std::size_t);
  return bytes;
}

bool holds_leaf_above(const Octree& tree, int level) {
  return std::any_of(tree.leaves().begin(), tree.leaves().end(),
                     [&](int leaf) { return tree.cells()[std::size_t(leaf)].level < level; });
}

}  // namespace fmbem::fmm
