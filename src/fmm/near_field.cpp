#include "fmbem/fmm/near_field.hpp"

#include "fmbem/core/error.hpp"
#include "fmbem/fmm/direct_sum.hpp"

namespace fmbem::fmm {

std::size_t NearFieldLists::pair_count() const {
  std::size_t pairs = 0;
  for (std::size_t l = 0; l < leaf_targets.size(); ++l)
    for (std::size_t r = offsets[l]; r < offsets[l + 1]; ++r)
      pairs += (ranges[r][1] - ranges[r][0]) * (leaf_targets[l][1] - leaf_targets[l][0]);
  return pairs;
}

void add_near_field_cpu(const NearFieldLists& lists, std::span<const cplx> charges,
                        std::span<const cplx> dipoles, std::span<cplx> potential) {
  if (!lists.target_normals.empty() && lists.target_normals.size() != lists.targets.size())
    throw Error("near field: one target normal per target is needed");
  if ((!charges.empty() && charges.size() != lists.source_count) ||
      (!dipoles.empty() && dipoles.size() != lists.source_count))
    throw Error("near field: charges or dipoles of the wrong size");
  if (lists.sources.size() != lists.source_order.size() ||
      (!lists.normals.empty() && lists.normals.size() != lists.sources.size()))
    throw Error("near field: one point (and normal) per source read is needed");
  const PointSources sorted(PointSources::PointsInOrder{}, lists.sources, lists.normals,
                            lists.source_order, charges, dipoles);
  const double skip2 = lists.skip_radius * lists.skip_radius;
  const bool with_normals = !lists.target_normals.empty();
  const cplx weight = lists.target_normal_weight;
#pragma omp parallel for schedule(dynamic, 4)
  for (std::size_t l = 0; l < lists.leaf_targets.size(); ++l)
    for (std::size_t i = lists.leaf_targets[l][0]; i < lists.leaf_targets[l][1]; ++i) {
      const std::size_t t = lists.target_order[i];
      cplx sum = 0.0;
      if (!with_normals) {
        for (std::size_t r = lists.offsets[l]; r < lists.offsets[l + 1]; ++r)
          sum += sorted.potential(lists.ranges[r][0], lists.ranges[r][1], lists.k, lists.targets[t],
                                  skip2);
      } else {
        // phi + weight dphi/dn_t, the value and the derivative summed apart.
        cplx value = 0.0, derivative = 0.0;
        for (std::size_t r = lists.offsets[l]; r < lists.offsets[l + 1]; ++r) {
          const auto v = sorted.potential_and_normal_derivative(
              lists.ranges[r][0], lists.ranges[r][1], lists.k, lists.targets[t],
              lists.target_normals[t], skip2);
          value += v.value;
          derivative += v.normal_derivative;
        }
        if (lists.derivative_apart) {
          potential[lists.targets.size() + t] += derivative;
          sum = value;
        } else {
          sum = value + weight * derivative;
        }
      }
      potential[t] += sum;
    }
}

}  // namespace fmbem::fmm
