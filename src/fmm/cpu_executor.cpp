// The FMM's CPU executor (fmm_executor.hpp): every phase OpenMP-parallel over cells, on host
// expansions of this apply (one p^2 block per held cell: the whole tree's, or a distributed
// part's own and ghost cells in Fmm::slot's order).
#include <omp.h>

#include <algorithm>

#include "fmbem/core/error.hpp"
#include "fmbem/fmm/m2l_plan.hpp"
#include "fmm_executor.hpp"

namespace fmbem::fmm {

namespace {

// y += a x, a row-major size x size.
void multiply_add(int size, const cplx* a, const cplx* x, cplx* y) {
  for (int i = 0; i < size; ++i) {
    cplx sum = 0.0;
    const cplx* row = a + static_cast<std::size_t>(i) * size;
    for (int j = 0; j < size; ++j) sum += row[j] * x[j];
    y[i] += sum;
  }
}

}  // namespace

class Fmm::CpuExecutor final : public Executor {
 public:
  explicit CpuExecutor(const Fmm& fmm) : fmm_(fmm) {}

  void start(const Arrays& arrays) override {
    const std::size_t sources = fmm_.source_count_;
    charges_ =
        arrays.charges ? std::span<const cplx>(arrays.charges, sources) : std::span<const cplx>();
    dipoles_ =
        arrays.dipoles ? std::span<const cplx>(arrays.dipoles, sources) : std::span<const cplx>();
    potential_ = std::span<cplx>(arrays.potential, fmm_.targets_.size());
    const std::size_t coefficients =
        (fmm_.slot_.empty() ? fmm_.tree_->cells().size() : fmm_.num_slots_) * fmm_.order_ *
        fmm_.order_;
    multipole_.assign(coefficients, 0.0);
    local_.assign(coefficients, 0.0);
    std::fill(potential_.begin(), potential_.end(), cplx(0.0));
  }
  void p2m() override { run_p2m(charges_, dipoles_, multipole_); }
  void m2m() override { run_m2m(multipole_); }
  void m2l() override { apply_m2l_reference(fmm_.m2l_plan_, multipole_.data(), local_.data()); }
  void l2l() override { run_l2l(local_); }
  void l2p() override { run_l2p(local_, potential_); }
  void near_field() override {
    add_near_field_cpu(fmm_.near_field_lists(), charges_, dipoles_, potential_);
  }
  // The expansions are an apply's alone: no memory held between applies.
  void finish() override {
    multipole_ = {};
    local_ = {};
  }

  void with_multipoles(const std::function<void(std::span<cplx>)>& work) override {
    work(multipole_);
  }
  bool multipoles_on_host() const override { return true; }
  void restrict_upward_pass(std::span<const std::size_t>, std::span<const char>) override {}
  std::unique_ptr<Exchange> packed_exchange(const LocallyEssentialTree&, PackedMultipoleExchange,
                                            bool) override {
    throw Error(
        "FMM: the packed multipole exchange is the GPU upward pass's; on the CPU the exchange "
        "takes the multipole array");
  }
  bool runs_on_device() const override { return false; }
  bool expansions_on_device() const override { return false; }
  std::string describe(const FmmStatistics& s) const override {
    return "  P2M, M2M, L2L, L2P on " + s.far_field_device + "\n  M2L on " + s.m2l_device +
           "\n  near field on " + s.near_field_device + "\n";
  }

 private:
  void run_p2m(std::span<const cplx> charges, std::span<const cplx> dipoles,
               std::span<cplx> multipole) const;
  void run_m2m(std::span<cplx> multipole) const;
  void run_l2l(std::span<cplx> local) const;
  void run_l2p(std::span<const cplx> local, std::span<cplx> potential) const;

  const Fmm& fmm_;
  // This apply's strengths and potentials (host arrays) and expansions.
  std::span<const cplx> charges_, dipoles_;
  std::span<cplx> potential_;
  std::vector<cplx> multipole_, local_;
};

std::unique_ptr<Fmm::Executor> Fmm::make_cpu_executor() const {
  return std::make_unique<CpuExecutor>(*this);
}

void Fmm::CpuExecutor::run_p2m(std::span<const cplx> charges, std::span<const cplx> dipoles,
                               std::span<cplx> multipole) const {
  const Octree& tree = *fmm_.tree_;
  const auto& cells = tree.cells();
  const int p = fmm_.order_, size = p * p;
  const bool with_dipoles = !dipoles.empty(), with_charges = !charges.empty();
  const auto& leaves = fmm_.upward_leaves_;
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
      const Level& lv = fmm_.levels_[cell.level];
      cplx* m = &multipole[fmm_.slot(leaves[l]) * size];
      if (with_dipoles) std::fill(by_q.begin(), by_q.end(), cplx(0.0));
      const LeafSources held = fmm_.leaf_sources(leaves[l]);
      for (std::size_t i = held.begin; i < held.end; ++i) {
        const std::size_t j = held.order[i];
        regular_basis(with_dipoles ? p : p - 1, fmm_.k_, lv.sigma, held.points[i] - cell.center,
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

void Fmm::CpuExecutor::run_m2m(std::span<cplx> multipole) const {
  const Octree& tree = *fmm_.tree_;
  const auto& cells = tree.cells();
  const int size = fmm_.order_ * fmm_.order_;
  for (int level = tree.levels() - 2; level >= 2; --level) {
    const auto ids = tree.cells_at_level(level);
#pragma omp parallel for schedule(dynamic, 8)
    for (std::size_t i = 0; i < ids.size(); ++i) {
      const Cell& cell = cells[ids[i]];
      if (cell.is_leaf() || cell.source_begin == cell.source_end) continue;
      if (!fmm_.own_cells_.empty() && !fmm_.own_cells_[ids[i]]) continue;
      for (int ch = cell.first_child; ch < cell.first_child + cell.num_children; ++ch)
        // A child without this part's leaves below has no partial multipole here.
        if (cells[ch].source_begin < cells[ch].source_end &&
            (fmm_.own_cells_.empty() || fmm_.own_cells_[ch]))
          multiply_add(size, fmm_.levels_[level + 1].m2m[cells[ch].octant].data(),
                       &multipole[fmm_.slot(ch) * size], &multipole[fmm_.slot(ids[i]) * size]);
    }
  }
}

void Fmm::CpuExecutor::run_l2l(std::span<cplx> local) const {
  const Octree& tree = *fmm_.tree_;
  const auto& cells = tree.cells();
  const int size = fmm_.order_ * fmm_.order_;
  for (int level = 3; level < tree.levels(); ++level) {
    const auto ids = tree.cells_at_level(level);
#pragma omp parallel for schedule(dynamic, 8)
    for (std::size_t i = 0; i < ids.size(); ++i) {
      const Cell& cell = cells[ids[i]];
      if (cell.target_begin == cell.target_end) continue;
      multiply_add(size, fmm_.levels_[level].l2l[cell.octant].data(),
                   &local[fmm_.slot(cell.parent) * size], &local[fmm_.slot(ids[i]) * size]);
    }
  }
}

void Fmm::CpuExecutor::run_l2p(std::span<const cplx> local, std::span<cplx> potential) const {
  const auto& cells = fmm_.tree_->cells();
  const auto target_order = fmm_.tree_->target_order();
  const int p = fmm_.order_, size = p * p, extended = (p + 1) * (p + 1);
  const auto& leaves = fmm_.target_leaves_;
  const bool with_normals = !fmm_.target_normals_.empty();
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
      const Level& lv = fmm_.levels_[cell.level];
      const cplx* lc = &local[fmm_.slot(leaves[l]) * size];
      if (with_normals) {
        std::fill(by_q.begin(), by_q.end(), cplx(0.0));
        for (const GradientTerm& term : lv.gradient)
          by_q[(term.q + 1) * extended + term.source] += term.coefficient * lc[term.target];
      }
      for (std::size_t i = cell.target_begin; i < cell.target_end; ++i) {
        const std::size_t t = target_order[i];
        cplx sum = 0.0;
        if (!with_normals) {
          regular_basis(p - 1, fmm_.k_, lv.sigma, fmm_.targets_[t] - cell.center, basis.data());
          for (int c = 0; c < size; ++c) sum += lc[c] * basis[c];
        } else {
          regular_basis(p, fmm_.k_, lv.sigma, fmm_.targets_[t] - cell.center, basis.data());
          const Vec3& n = fmm_.target_normals_[t];
          cplx w[3];
          for (int q = 0; q < 3; ++q)
            w[q] = fmm_.target_normal_weight_ * (g[q].x * n.x + g[q].y * n.y + g[q].z * n.z);
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

}  // namespace fmbem::fmm
