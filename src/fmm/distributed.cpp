#include "fmbem/fmm/distributed.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "fmbem/core/error.hpp"

namespace fmbem::fmm {

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
  // As Fmm chooses them (fmm.cpp).
  const int order = options.order > 0 ? options.order : order_for_tolerance(options.tolerance);
  const bool gpu = options.device != FmmOptions::Device::cpu && gpu_available();
  const int max_leaf = options.measured_max_leaf ? default_max_leaf(gpu, order) : options.max_leaf;
  tree_ = std::make_unique<Octree>(sources, targets, targets, OctreeOptions{max_leaf});
  const std::vector<double> work = leaf_work(*tree_, count_work(*tree_), default_work_model(order));
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

}  // namespace fmbem::fmm
