#include "diagonal_levels.hpp"

#include <algorithm>
#include <cmath>

#include "fmbem/core/error.hpp"

namespace fmbem::fmm {

int diagonal_level_bandwidth(double k, double width, double eps) {
  if (!(k > 0.0) || !(width > 0.0) || !(eps > 0.0 && eps < 1.0))
    throw Error("diagonal level: k, the cell width and eps must be positive (eps below 1)");
  const double kd = k * std::sqrt(3.0) * width, kw = k * width;
  const double constant = 2.5 + 3.5 / kw;
  const double excess = excess_bandwidth(constant, kd, eps);
  return std::max(4, int(std::ceil(kd + excess)));
}

DiagonalLevels::DiagonalLevels(const Octree& tree, WidebandPlan wideband, double k, int order,
                               double eps, std::vector<char> wanted_cells,
                               std::vector<int> held_cells)
    : plan(std::move(wideband)), wanted(std::move(wanted_cells)), held(std::move(held_cells)) {
  if (plan.levels.empty()) throw Error("diagonal levels: the plan has no diagonal level");
  const auto conversion_ids = tree.cells_at_level(plan.levels.back().level);
  const std::size_t held_end = std::size_t(conversion_ids.back()) + 1;
  cells.assign(tree.cells().begin(), tree.cells().begin() + std::ptrdiff_t(held_end));
  has_sources.resize(held_end);
  for (std::size_t c = 0; c < held_end; ++c) has_sources[c] = tree.sources_in_whole(int(c)) > 0;
  if (wanted.empty()) {
    wanted.resize(held_end);
    for (std::size_t c = 0; c < held_end; ++c)
      wanted[c] = cells[c].target_begin < cells[c].target_end;
  }
  part = !held.empty();
  if (!part)
    for (int id : conversion_ids) held.push_back(id);
  if (wanted.size() != held_end || held.size() != conversion_ids.size())
    throw Error(
        "diagonal levels: the wanted cells or the held conversion cells do not fit the tree");
  // A part's diagonal M2L serves its own targets' cells alone.
  for (DiagonalLevelPlan& lv : plan.levels) {
    std::erase_if(lv.pairs, [&](const M2LPair& pair) { return !wanted[std::size_t(pair.target)]; });
    lv.transfer_begin.assign(lv.transfer.size() + 1, 0);
    for (const M2LPair& pair : lv.pairs) ++lv.transfer_begin[std::size_t(pair.matrix) + 1];
    for (std::size_t g = 0; g < lv.transfer.size(); ++g)
      lv.transfer_begin[g + 1] += lv.transfer_begin[g];
  }
  levels.resize(plan.levels.size());
  for (std::size_t i = 0; i < levels.size(); ++i) {
    const DiagonalLevelPlan& planned = plan.levels[i];
    Level& lv = levels[i];
    lv.level = planned.level;
    const auto ids = tree.cells_at_level(planned.level);
    lv.first_cell = ids.empty() ? 0 : ids.front();
    lv.cells = ids.size();
    lv.grid = std::make_unique<SphereGrid>(diagonal_level_bandwidth(k, planned.width, eps));
    std::vector<Vec3> vectors;
    for (int v : planned.transfer) vectors.push_back(planned.width * wide_transfer_offset(v));
    lv.transfer = transfer_functions(*lv.grid, k, vectors);
  }
  // Shifts and interpolation between each level and the next (its children).
  for (std::size_t i = 0; i + 1 < levels.size(); ++i) {
    Level& lv = levels[i];
    const double quarter = 0.25 * plan.levels[i].width;
    for (int octant = 0; octant < 8; ++octant) {
      const Vec3 offset{octant & 1 ? quarter : -quarter, octant & 2 ? quarter : -quarter,
                        octant & 4 ? quarter : -quarter};
      lv.up_phases[std::size_t(octant)] = plane_wave_phases(*lv.grid, k, -1.0 * offset);
      lv.down_phases[std::size_t(octant)] = plane_wave_phases(*lv.grid, k, offset);
    }
    lv.from_children = std::make_unique<SphereInterpolator>(*levels[i + 1].grid, *lv.grid);
  }
  const SphereGrid& last = *levels.back().grid;
  const double sigma = plan.levels.back().width;
  to_signature = multipole_to_signature(last, order, k, sigma);
  to_local = signature_to_local(last, order, k, sigma);
}

std::size_t DiagonalLevels::bytes() const {
  std::size_t entries = to_signature.size() + to_local.size();
  for (const Level& lv : levels) {
    entries += lv.transfer.size();
    for (int o = 0; o < 8; ++o)
      entries += lv.up_phases[std::size_t(o)].size() + lv.down_phases[std::size_t(o)].size();
  }
  return entries * sizeof(cplx);
}

std::size_t DiagonalLevels::signature_entries() const {
  std::size_t entries = 0;
  for (const Level& lv : levels) entries += lv.cells * lv.grid->size();
  return entries;
}

}  // namespace fmbem::fmm
