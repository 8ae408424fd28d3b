// The FMM's CUDA executor (fmm_executor.hpp): every phase on the device, the expansions resident
// there (GpuFarField: P2M, M2M, L2L, L2P; GpuM2L; GpuNearField, or the CPU's near field after the
// far field where gpu_near_field is off). Built with CUDA alone: without it there is no GPU
// executor, and Fmm's construction says so where the GPU is asked for. Only the .cu files of
// this folder launch kernels; this one calls them.
#include <iomanip>
#include <sstream>

#include "../fmm_executor.hpp"
#include "fmbem/core/error.hpp"
#include "fmbem/fmm/gpu_device.hpp"
#include "fmbem/fmm/gpu_far_field.hpp"
#include "fmbem/fmm/gpu_m2l.hpp"
#include "fmbem/fmm/gpu_multipole_packing.hpp"
#include "fmbem/fmm/gpu_near_field.hpp"
#include "gpu_diagonal_levels.hpp"

namespace fmbem::fmm {

class Fmm::GpuExecutor final : public Executor {
 public:
  GpuExecutor(const Fmm& fmm, FmmStatistics& statistics);

  void start(const Arrays& arrays) override;
  // A wideband FMM's diagonal levels in the CPU executor's order (its leaves all lie below
  // them). The far field's M2M and L2L run on every level as before: above the conversion level
  // their expansions are never read (the low-frequency M2L starts there) and their locals stay
  // zero.
  void p2m() override {
    far_->p2m(charges_, dipoles_, fmm_.upward_leaf_begin_, fmm_.upward_leaf_end_);
  }
  // Level orders: the multipoles truncated after M2M and the locals after M2L (the M2L's
  // matrices are of order p), as the CPU's truncated translations give them.
  void m2m() override {
    far_->m2m();
    truncate_expansions(far_->multipole(), fmm_.order_ * fmm_.order_, truncations_);
    if (diagonal_) diagonal_->upward(far_->multipole(), fmm_.parts_sum_);
  }
  void m2l() override {
    m2l_->apply_device(far_->multipole(), far_->local());
    truncate_expansions(far_->local(), fmm_.order_ * fmm_.order_, truncations_);
    if (diagonal_) diagonal_->m2l();
  }
  void l2l() override {
    if (diagonal_) diagonal_->downward(far_->local());
    far_->l2l();
  }
  void l2p() override { far_->l2p(potential_); }
  void near_field() override;
  void finish() override;
  void synchronize() override { far_->synchronize(); }

  void with_multipoles(const std::function<void(std::span<cplx>)>& work) override;
  bool multipoles_on_host() const override { return false; }
  void restrict_upward_pass(std::span<const std::size_t> leaf_indices,
                            std::span<const char> own_cells) override {
    far_->restrict_p2m(leaf_indices);
    far_->restrict_m2m(own_cells);
  }
  std::unique_ptr<Exchange> packed_exchange(const LocallyEssentialTree& let,
                                            PackedMultipoleExchange exchange,
                                            bool overlap) override;
  bool runs_on_device() const override { return near_ != nullptr; }
  bool expansions_on_device() const override { return true; }
  std::string describe(const FmmStatistics& statistics) const override;

 private:
  class PackedExchange;

  const Fmm& fmm_;
  std::unique_ptr<GpuM2L> m2l_;
  // The near field when it runs on the GPU too (FmmOptions::gpu_near_field).
  std::unique_ptr<GpuNearField> near_;
  std::unique_ptr<GpuFarField> far_;
  // A wideband FMM's diagonal levels (null: the low-frequency FMM alone).
  std::unique_ptr<GpuDiagonalLevels> diagonal_;
  // The levels whose expansions keep fewer than p^2 coefficients (Fmm's level orders).
  std::vector<ExpansionTruncation> truncations_;
  // apply from host arrays: the strengths (allocated by its first call: resident users,
  // apply_device, never need them) and the potentials on the device.
  std::unique_ptr<DeviceArray> device_charges_, device_dipoles_, device_potential_;
  // This apply's arrays on the device, and the host's where apply was given host arrays.
  const cplx *charges_ = nullptr, *dipoles_ = nullptr;
  cplx* potential_ = nullptr;
  Arrays host_;
  // The potentials are on the host already (the CPU's near field added them there).
  bool downloaded_ = false;
};

// The distributed exchange on packed buffers: only the exchanged cells cross to the host.
class Fmm::GpuExecutor::PackedExchange final : public Exchange {
 public:
  PackedExchange(std::unique_ptr<GpuMultipolePacking> packing, PackedMultipoleExchange exchange,
                 bool overlap, GpuFarField& far)
      : packing_(std::move(packing)),
        exchange_(std::move(exchange)),
        overlap_(overlap),
        far_(far) {}
  void begin(Executor&) override {
    packing_->gather(far_.multipole());
    exchange_.begin(packing_->send_buffer(), packing_->receive_buffer());
  }
  bool has_end() const override { return true; }
  void end(Executor&) override {
    exchange_.end();
    packing_->add_received(far_.multipole());
  }
  bool overlaps_near_field() const override { return overlap_; }
  std::size_t device_bytes() const override { return packing_->device_bytes(); }

 private:
  std::unique_ptr<GpuMultipolePacking> packing_;
  PackedMultipoleExchange exchange_;
  bool overlap_;
  GpuFarField& far_;
};

std::unique_ptr<Fmm::Executor> Fmm::make_gpu_executor(FmmStatistics& statistics) const {
  return std::make_unique<GpuExecutor>(*this, statistics);
}

Fmm::GpuExecutor::GpuExecutor(const Fmm& fmm, FmmStatistics& statistics) : fmm_(fmm) {
  const FmmOptions& options = fmm.options_;
  const std::size_t limit = options.gpu_memory_limit;
  const auto check_limit = [&](const char* what) {
    if (limit > 0 && statistics.gpu_bytes > limit) {
      std::ostringstream out;
      out << std::fixed << std::setprecision(1) << "GPU out of memory: the GPU FMM needs "
          << statistics.gpu_bytes / 1048576.0 << " MiB of device memory for " << what
          << ", above the limit of " << limit / 1048576.0 << " MiB";
      throw Error(out.str());
    }
  };
  const M2LScheme scheme = options.m2l_scheme.value_or(default_m2l_scheme(fmm.order_));
  m2l_ = std::make_unique<GpuM2L>(fmm.m2l_plan_, scheme, options.gpu_m2l);
  statistics.m2l_device = std::string("gpu, scheme ") + m2l_scheme_name(scheme);
  statistics.gpu_bytes = m2l_->statistics().device_bytes;
  check_limit("M2L translation matrices and lists");
  if (options.gpu_near_field) {
    near_ = std::make_unique<GpuNearField>(fmm.near_field_lists(), options.gpu_near);
    statistics.near_field_device = "gpu";
    statistics.gpu_bytes += near_->statistics().device_bytes;
    check_limit("M2L and near field");
  }
  GpuFarFieldPlan plan{.k = fmm.k_,
                       .order = fmm.order_,
                       .tree = fmm.tree_.get(),
                       .sources = {},
                       .normals = {},
                       .source_order = {},
                       .p2m_leaves = {},
                       .targets = fmm.targets_,
                       .target_leaves = fmm.target_leaves_,
                       .levels = {},
                       .memory_limit = limit > 0 ? limit - statistics.gpu_bytes : 0,
                       .target_normals = fmm.target_normals_,
                       .target_normal_weight = fmm.target_normal_weight_,
                       .derivative_apart = fmm.derivative_apart_};
  if (limit > 0 && plan.memory_limit == 0) plan.memory_limit = 1;
  // P2M's points: the near store by tree positions where it holds every source, else those of
  // the leaves P2M visits gathered from both stores (host copies for the upload only).
  std::vector<Vec3> p2m_points, p2m_normals;
  std::vector<std::size_t> p2m_order;
  const auto& all_leaves = fmm.tree_->leaves();
  if (fmm.near_store_is_tree_order_) {
    plan.sources = fmm.near_sources_;
    plan.normals = fmm.near_normals_;
    plan.source_order = fmm.tree_->source_order();
    for (std::size_t l = 0; l < all_leaves.size(); ++l) {
      const Cell& c = fmm.tree_->cells()[all_leaves[l]];
      plan.p2m_leaves.push_back({all_leaves[l], l, c.source_begin, c.source_end});
    }
  } else {
    // Each leaf's points at the running count of the ones before, gathered on the threads.
    std::vector<LeafSources> held;
    held.reserve(fmm.upward_store_leaves_.size());
    std::size_t count = 0;
    for (int leaf : fmm.upward_store_leaves_) {
      const LeafSources& points = held.emplace_back(fmm.leaf_sources(leaf));
      const std::size_t l = std::size_t(
          std::lower_bound(all_leaves.begin(), all_leaves.end(), leaf) - all_leaves.begin());
      plan.p2m_leaves.push_back({leaf, l, count, count + points.end - points.begin});
      count += points.end - points.begin;
    }
    p2m_points.resize(count);
    p2m_order.resize(count);
    if (fmm.with_normals_) p2m_normals.resize(count);
#pragma omp parallel for schedule(dynamic, 64)
    for (std::size_t l = 0; l < held.size(); ++l) {
      const LeafSources& points = held[l];
      for (std::size_t i = points.begin, at = plan.p2m_leaves[l].begin; i < points.end; ++i, ++at) {
        p2m_points[at] = points.points[i];
        if (fmm.with_normals_) p2m_normals[at] = points.normals[i];
        p2m_order[at] = points.order[i];
      }
    }
    plan.sources = p2m_points;
    plan.normals = p2m_normals;
    plan.source_order = p2m_order;
  }
  for (const Level& lv : fmm.levels_) {
    GpuFarFieldPlan::Level& out = plan.levels.emplace_back();
    out.sigma = lv.sigma;
    out.gradient = lv.gradient;
    for (int octant = 0; octant < 8; ++octant) {
      out.m2m[octant] = lv.m2m[octant];
      out.l2l[octant] = lv.l2l[octant];
    }
  }
  far_ = std::make_unique<GpuFarField>(plan);
  statistics.far_field_device = "gpu";
  statistics.gpu_bytes += far_->device_bytes();
  for (int level : fmm.truncated_levels_) {
    const auto ids = fmm.tree_->cells_at_level(level);
    if (ids.empty()) continue;
    const int order = fmm.level_orders_[std::size_t(level)];
    truncations_.push_back({ids.front(), int(ids.size()), order * order});
  }
  if (fmm.diagonal_) {
    diagonal_ = std::make_unique<GpuDiagonalLevels>(
        GpuDiagonalPlan{.levels = fmm.diagonal_.get(), .order = fmm.order_});
    statistics.gpu_bytes += diagonal_->device_bytes();
    check_limit("the diagonal levels");
  }
  device_potential_ =
      std::make_unique<DeviceArray>(fmm.targets_.size() * std::size_t(fmm.outputs_per_target()));
  statistics.gpu_bytes += device_potential_->size() * sizeof(cplx);
  check_limit("device arrays");
}

void Fmm::GpuExecutor::start(const Arrays& arrays) {
  host_ = arrays;
  downloaded_ = false;
  if (arrays.on_device) {
    charges_ = arrays.charges;
    dipoles_ = arrays.dipoles;
    potential_ = arrays.potential;
  } else {  // the strengths in once, the potentials out once (finish)
    if (!device_charges_) {
      device_charges_ = std::make_unique<DeviceArray>(fmm_.source_count_);
      device_dipoles_ = std::make_unique<DeviceArray>(fmm_.with_normals_ ? fmm_.source_count_ : 0);
    }
    if (arrays.charges) device_charges_->upload(arrays.charges);
    if (arrays.dipoles) device_dipoles_->upload(arrays.dipoles);
    charges_ = arrays.charges ? device_charges_->data() : nullptr;
    dipoles_ = arrays.dipoles ? device_dipoles_->data() : nullptr;
    potential_ = device_potential_->data();
  }
  far_->clear_expansions();
  if (diagonal_) diagonal_->clear();
  far_->zero_potential(potential_);
}

void Fmm::GpuExecutor::near_field() {
  if (near_) {
    near_->apply_device(charges_, dipoles_, potential_);
    return;
  }
  // On the host after the far field (never overlapped: the exchange is not, where the near field
  // is the CPU's), adding to the downloaded potentials.
  const std::size_t sources = fmm_.source_count_;
  const std::span<cplx> potential(host_.potential,
                                  fmm_.targets_.size() * std::size_t(fmm_.outputs_per_target()));
  device_potential_->download(potential.data());
  downloaded_ = true;
  add_near_field_cpu(
      fmm_.near_field_lists(),
      host_.charges ? std::span<const cplx>(host_.charges, sources) : std::span<const cplx>(),
      host_.dipoles ? std::span<const cplx>(host_.dipoles, sources) : std::span<const cplx>(),
      potential);
}

void Fmm::GpuExecutor::finish() {
  if (!host_.on_device && !downloaded_) device_potential_->download(host_.potential);
}

// The whole array through the host: correct, not fast (the packed exchange moves less).
void Fmm::GpuExecutor::with_multipoles(const std::function<void(std::span<cplx>)>& work) {
  std::vector<cplx> host(fmm_.tree_->cells().size() * fmm_.order_ * fmm_.order_);
  far_->download_multipoles(host);
  work(host);
  far_->upload_multipoles(host);
}

std::unique_ptr<Fmm::Exchange> Fmm::GpuExecutor::packed_exchange(const LocallyEssentialTree& let,
                                                                 PackedMultipoleExchange exchange,
                                                                 bool overlap) {
  auto packing = std::make_unique<GpuMultipolePacking>(let.packed_send_cells(),
                                                       let.packed_receive_cells(), fmm_.order_);
  // The near field on the host runs after the far field's download: never overlapped.
  return std::make_unique<PackedExchange>(std::move(packing), std::move(exchange),
                                          overlap && near_ != nullptr, *far_);
}

std::string Fmm::GpuExecutor::describe(const FmmStatistics& s) const {
  const double mb = 1.0 / (1024.0 * 1024.0);
  std::ostringstream out;
  out << std::fixed << std::setprecision(1);
  out << "  P2M, M2M, L2L, L2P on " << s.far_field_device << ": " << far_->describe() << ", "
      << far_->device_bytes() * mb << " MiB of device memory (expansions included)";
  out << "\n  M2L on " << s.m2l_device << ": " << m2l_->describe() << ", "
      << m2l_->statistics().device_bytes * mb << " MiB of device memory";
  if (diagonal_) out << "\n  diagonal levels on gpu: " << diagonal_->describe();
  out << "\n  near field on " << s.near_field_device;
  if (near_)
    out << ": " << near_->describe() << ", " << near_->statistics().device_bytes * mb
        << " MiB of device memory";
  out << "\n";
  return out.str();
}

}  // namespace fmbem::fmm
