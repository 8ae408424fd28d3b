// The FMM's CPU executor (fmm_executor.hpp): every phase OpenMP-parallel over cells, on host
// expansions of this apply (one p^2 block per held cell: the whole tree's, or a distributed
// part's own and ghost cells in Fmm::slot's order).
#include <omp.h>

#include <algorithm>

#include "diagonal_levels.hpp"
#include "fmbem/core/error.hpp"
#include "fmbem/fmm/m2l_plan.hpp"
#include "fmm_executor.hpp"

namespace fmbem::fmm {

namespace {

// y += a x, a row-major rows x columns.
void multiply_add(std::size_t rows, std::size_t columns, const cplx* a, const cplx* x, cplx* y) {
  for (std::size_t i = 0; i < rows; ++i) {
    cplx sum = 0.0;
    const cplx* row = a + i * columns;
    for (std::size_t j = 0; j < columns; ++j) sum += row[j] * x[j];
    y[i] += sum;
  }
}

// y += a x, a row-major size x size.
void multiply_add(int size, const cplx* a, const cplx* x, cplx* y) {
  multiply_add(std::size_t(size), std::size_t(size), a, x, y);
}

// y[b] += a x[b] for up to eight vectors x[b] at once (count of them), a row-major rows x
// columns: one pass over a for them all, the vectors' parts apart in `work` (2 * 8 * columns
// doubles) so that the products vectorise over them.
[[gnu::always_inline]] inline void multiply_add_eight(std::size_t rows, std::size_t columns,
                                                      const cplx* a, const cplx* const* x,
                                                      cplx* const* y, int count, double* work) {
  constexpr int lanes = 8;
  for (std::size_t j = 0; j < columns; ++j)
    for (int b = 0; b < lanes; ++b) {
      const cplx v = b < count ? x[b][j] : cplx(0.0);
      work[j * 2 * lanes + b] = v.real();
      work[j * 2 * lanes + lanes + b] = v.imag();
    }
  for (std::size_t i = 0; i < rows; ++i) {
    const cplx* row = a + i * columns;
    double re[lanes] = {}, im[lanes] = {};
    for (std::size_t j = 0; j < columns; ++j) {
      const double ar = row[j].real(), ai = row[j].imag();
      const double* v = work + j * 2 * lanes;
#pragma omp simd
      for (int b = 0; b < lanes; ++b) {
        re[b] += ar * v[b] - ai * v[lanes + b];
        im[b] += ar * v[lanes + b] + ai * v[b];
      }
    }
    for (int b = 0; b < count; ++b) y[b][i] += cplx(re[b], im[b]);
  }
}

// Built for x86-64-v3 (AVX2 + FMA) and the baseline; the loader picks the one the CPU runs.
__attribute__((target_clones("arch=x86-64-v3", "default"))) void multiply_add_many(
    std::size_t rows, std::size_t columns, const cplx* a, const cplx* const* x, cplx* const* y,
    int count, double* work) {
  multiply_add_eight(rows, columns, a, x, y, count, work);
}

// y[i] += a x[i] for every vector of a list, eight at a time, on the threads.
void multiply_add_all(std::size_t rows, std::size_t columns, const std::vector<cplx>& a,
                      const std::vector<const cplx*>& x, const std::vector<cplx*>& y) {
  const std::size_t vectors = x.size();
#pragma omp parallel
  {
    std::vector<double> work(2 * 8 * columns);
#pragma omp for schedule(dynamic)
    for (std::size_t first = 0; first < vectors; first += 8)
      multiply_add_many(rows, columns, a.data(), x.data() + first, y.data() + first,
                        int(std::min<std::size_t>(8, vectors - first)), work.data());
  }
}

}  // namespace

class Fmm::CpuExecutor final : public Executor {
 public:
  explicit CpuExecutor(const Fmm& fmm) : fmm_(fmm) {
    if (!fmm_.diagonal_) return;
    // Each diagonal level's signatures at an offset of one array; its pairs by target, so that
    // M2L runs in parallel over targets (each written by one thread).
    const DiagonalLevels& d = *fmm_.diagonal_;
    std::size_t offset = 0;
    for (const DiagonalLevels::Level& lv : d.levels) {
      signature_offset_.push_back(offset);
      offset += lv.cells * lv.grid->size();
    }
    for (const DiagonalLevelPlan& lv : d.plan.levels) {
      std::vector<std::size_t> order(lv.pairs.size());
      for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
      std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
        return lv.pairs[a].target < lv.pairs[b].target;
      });
      pairs_by_target_.push_back(std::move(order));
    }
  }

  void start(const Arrays& arrays) override {
    const std::size_t sources = fmm_.source_count_;
    charges_ =
        arrays.charges ? std::span<const cplx>(arrays.charges, sources) : std::span<const cplx>();
    dipoles_ =
        arrays.dipoles ? std::span<const cplx>(arrays.dipoles, sources) : std::span<const cplx>();
    potential_ = std::span<cplx>(arrays.potential,
                                 fmm_.targets_.size() * std::size_t(fmm_.outputs_per_target()));
    const std::size_t coefficients =
        (fmm_.slot_.empty() ? fmm_.tree_->cells().size() : fmm_.num_slots_) * fmm_.order_ *
        fmm_.order_;
    multipole_.assign(coefficients, 0.0);
    local_.assign(coefficients, 0.0);
    if (fmm_.diagonal_) {
      outgoing_.assign(fmm_.diagonal_->signature_entries(), 0.0);
      incoming_.assign(fmm_.diagonal_->signature_entries(), 0.0);
    }
    std::fill(potential_.begin(), potential_.end(), cplx(0.0));
  }
  void p2m() override { run_p2m(charges_, dipoles_, multipole_); }
  void m2m() override {
    run_m2m(multipole_);
    // The M2L translates each level's leading coefficients alone (its order); the
    // conversion and the exchanges read the same truncated multipoles as the GPU's.
    fmm_.truncate_to_level_orders(multipole_);
    if (fmm_.diagonal_) run_diagonal_upward();
  }
  void m2l() override {
    apply_m2l_reference(fmm_.m2l_plan_, multipole_.data(), local_.data());
    if (fmm_.diagonal_) run_diagonal_m2l();
  }
  void l2l() override {
    if (fmm_.diagonal_) run_diagonal_downward();
    run_l2l(local_);
  }
  void l2p() override { run_l2p(local_, potential_); }
  void near_field() override {
    add_near_field_cpu(fmm_.near_field_lists(), charges_, dipoles_, potential_);
  }
  // The expansions are an apply's alone: no memory held between applies.
  void finish() override {
    multipole_ = {};
    local_ = {};
    outgoing_ = {};
    incoming_ = {};
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
  // The diagonal levels (a wideband FMM, whose leaves all lie below them): the conversion
  // level's signatures from its multipoles and the coarser levels' from their children's
  // (interpolated, shifted); the diagonal M2L; the local signatures down (shifted,
  // anterpolated) to the conversion level, whose local coefficients take them.
  void run_diagonal_upward();
  void run_diagonal_m2l();
  void run_diagonal_downward();
  cplx* signature(std::vector<cplx>& array, int level, int cell) {
    const DiagonalLevels& d = *fmm_.diagonal_;
    const DiagonalLevels::Level& lv = d.at(level);
    return array.data() + signature_offset_[std::size_t(level - d.first_level())] +
           lv.slot(cell) * lv.grid->size();
  }

  const Fmm& fmm_;
  // This apply's strengths and potentials (host arrays) and expansions.
  std::span<const cplx> charges_, dipoles_;
  std::span<cplx> potential_;
  std::vector<cplx> multipole_, local_;
  // The diagonal levels' outgoing and local signatures, level after level, and where each
  // level's start; per level its pairs (indices) by target.
  std::vector<cplx> outgoing_, incoming_;
  std::vector<std::size_t> signature_offset_;
  std::vector<std::vector<std::size_t>> pairs_by_target_;
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
  // A wideband FMM's multipoles stop at the conversion level (signatures above it).
  const int first = fmm_.diagonal_ ? fmm_.diagonal_->conversion_level() : 2;
  for (int level = tree.levels() - 2; level >= first; --level) {
    const auto ids = tree.cells_at_level(level);
    const Level& children = fmm_.levels_[level + 1];
#pragma omp parallel
    {
      std::vector<double> workspace(children.shifts ? rotation_workspace(fmm_.order_) : 0);
#pragma omp for schedule(dynamic, 8)
      for (std::size_t i = 0; i < ids.size(); ++i) {
        const Cell& cell = cells[ids[i]];
        if (cell.is_leaf() || cell.source_begin == cell.source_end) continue;
        if (!fmm_.own_cells_.empty() && !fmm_.own_cells_[ids[i]]) continue;
        cplx* parent = &multipole[fmm_.slot(ids[i]) * size];
        // By rotation the children below and above the parent's centre (one rotation each) go
        // in two batches, the children in their order within each.
        const cplx* batch[2][8];
        cplx* parents[8];
        int octants[2][8], count[2] = {0, 0};
        for (int ch = cell.first_child; ch < cell.first_child + cell.num_children; ++ch) {
          // A child without this part's leaves below has no partial multipole here.
          if (cells[ch].source_begin == cells[ch].source_end ||
              (!fmm_.own_cells_.empty() && !fmm_.own_cells_[ch]))
            continue;
          const cplx* child = &multipole[fmm_.slot(ch) * size];
          if (children.shifts) {
            const int side = cells[ch].octant & 4 ? 1 : 0;
            octants[side][count[side]] = cells[ch].octant;
            batch[side][count[side]++] = child;
          } else {
            multiply_add(size, children.m2m[cells[ch].octant].data(), child, parent);
          }
        }
        std::fill(parents, parents + 8, parent);
        for (int side = 0; side < 2; ++side)
          if (count[side] > 0)
            children.shifts->multipole_to_multipole_many(octants[side], batch[side], parents,
                                                         count[side], workspace);
      }
    }
  }
}

void Fmm::CpuExecutor::run_l2l(std::span<cplx> local) const {
  const Octree& tree = *fmm_.tree_;
  const auto& cells = tree.cells();
  const int size = fmm_.order_ * fmm_.order_;
  // Below a wideband FMM's conversion level (which its local signatures fill).
  const int first = fmm_.diagonal_ ? fmm_.diagonal_->conversion_level() + 1 : 3;
  for (int level = first; level < tree.levels(); ++level) {
    const auto ids = tree.cells_at_level(level);
    const Level& lv = fmm_.levels_[level];
    if (!lv.shifts) {
#pragma omp parallel for schedule(dynamic, 8)
      for (std::size_t i = 0; i < ids.size(); ++i) {
        const Cell& cell = cells[ids[i]];
        if (cell.target_begin == cell.target_end) continue;
        multiply_add(size, lv.l2l[cell.octant].data(), &local[fmm_.slot(cell.parent) * size],
                     &local[fmm_.slot(ids[i]) * size]);
      }
      continue;
    }
    // By rotation: the children of one parent below and above its centre (one rotation each) in
    // two batches, the children in their order within each.
    const auto parent_ids = tree.cells_at_level(level - 1);
#pragma omp parallel
    {
      std::vector<double> workspace(rotation_workspace(fmm_.order_));
#pragma omp for schedule(dynamic, 8)
      for (std::size_t i = 0; i < parent_ids.size(); ++i) {
        const Cell& parent_cell = cells[parent_ids[i]];
        if (parent_cell.is_leaf()) continue;
        const cplx* parents[8];
        cplx* batch[2][8];
        int octants[2][8], count[2] = {0, 0};
        for (int ch = parent_cell.first_child;
             ch < parent_cell.first_child + parent_cell.num_children; ++ch) {
          const Cell& cell = cells[ch];
          if (cell.target_begin == cell.target_end) continue;
          const int side = cell.octant & 4 ? 1 : 0;
          octants[side][count[side]] = cell.octant;
          batch[side][count[side]++] = &local[fmm_.slot(ch) * size];
        }
        // A parent holds a local expansion where a child has targets.
        if (count[0] + count[1] == 0) continue;
        std::fill(parents, parents + 8, &local[fmm_.slot(parent_ids[i]) * size]);
        for (int side = 0; side < 2; ++side)
          if (count[side] > 0)
            lv.shifts->local_to_local_many(octants[side], parents, batch[side], count[side],
                                           workspace);
      }
    }
  }
}

void Fmm::CpuExecutor::run_l2p(std::span<const cplx> local, std::span<cplx> potential) const {
  const auto& cells = fmm_.tree_->cells();
  const auto target_order = fmm_.tree_->target_order();
  const int p = fmm_.order_, size = p * p, extended = (p + 1) * (p + 1);
  const auto& leaves = fmm_.target_leaves_;
  const bool with_normals = !fmm_.target_normals_.empty();
  const bool apart = fmm_.derivative_apart_;
  const std::size_t targets = fmm_.targets_.size();
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
            combined[c] = c < size && !apart ? lc[c] + from_gradient : from_gradient;
          }
          for (int c = 0; c < extended; ++c) sum += combined[c] * basis[c];
          if (apart) {  // sum is n . grad phi; phi from the locals alone
            potential[targets + t] += sum;
            sum = 0.0;
            for (int c = 0; c < size; ++c) sum += lc[c] * basis[c];
          }
        }
        potential[t] += sum;
      }
    }
  }
}

void Fmm::CpuExecutor::run_diagonal_upward() {
  const DiagonalLevels& d = *fmm_.diagonal_;
  const auto& cells = d.cells;
  const int conversion = d.conversion_level();
  const DiagonalLevels::Level& last = d.at(conversion);
  const std::size_t size = std::size_t(fmm_.order_) * std::size_t(fmm_.order_);
  // A part's conversion-level multipoles are its leaves' partial sums: gathered by the tree's
  // cells and summed over the parts, every part then forms every signature.
  std::vector<cplx> gathered;
  if (d.part) {
    gathered.assign(last.cells * size, 0.0);
    for (std::size_t i = 0; i < last.cells; ++i)
      if (const int held = d.held[i]; held >= 0 && (fmm_.slot_.empty() || fmm_.slot_[held] >= 0))
        std::copy_n(&multipole_[fmm_.slot(held) * size], size, &gathered[i * size]);
    if (!fmm_.parts_sum_)
      throw Error("FMM: a distributed part's diagonal levels need the sum over the parts");
    fmm_.parts_sum_(gathered);
  }
  {
    // The conversion level: signatures from the multipoles, eight cells a pass over the matrix.
    std::vector<const cplx*> multipoles;
    std::vector<cplx*> signatures;
    for (std::size_t i = 0; i < last.cells; ++i) {
      const int id = last.first_cell + int(i);
      if (!d.has_sources[std::size_t(id)]) continue;
      multipoles.push_back(d.part ? &gathered[i * size] : &multipole_[fmm_.slot(d.held[i]) * size]);
      signatures.push_back(signature(outgoing_, conversion, id));
    }
    multiply_add_all(last.grid->size(), size, d.to_signature, multipoles, signatures);
  }
  // The coarser levels from their children: interpolated to the parent's grid, then shifted. A
  // parent's children are interpolated together (one batch, vectorised over them).
  for (int level = d.plan.switch_level; level >= d.first_level(); --level) {
    const DiagonalLevels::Level& lv = d.at(level);
    const std::size_t grid_size = lv.grid->size();
#pragma omp parallel
    {
      std::vector<cplx> moved(8 * grid_size);
#pragma omp for schedule(dynamic, 4)
      for (std::size_t i = 0; i < lv.cells; ++i) {
        const int id = lv.first_cell + int(i);
        const Cell& cell = cells[std::size_t(id)];
        if (cell.is_leaf() || !d.has_sources[std::size_t(id)]) continue;
        const cplx* children[8];
        cplx* shifted[8];
        int octants[8], count = 0;
        for (int ch = cell.first_child; ch < cell.first_child + cell.num_children; ++ch) {
          if (!d.has_sources[std::size_t(ch)]) continue;
          children[count] = signature(outgoing_, level + 1, ch);
          shifted[count] = moved.data() + std::size_t(count) * grid_size;
          octants[count++] = cells[std::size_t(ch)].octant;
        }
        std::fill(moved.begin(), moved.begin() + std::ptrdiff_t(count * grid_size), cplx(0.0));
        lv.from_children->interpolate(std::span<const cplx* const>(children, std::size_t(count)),
                                      std::span<cplx* const>(shifted, std::size_t(count)));
        cplx* parent = signature(outgoing_, level, id);
        for (int b = 0; b < count; ++b)
          diagonal_m2l(lv.up_phases[std::size_t(octants[b])],
                       std::span<const cplx>(shifted[b], grid_size),
                       std::span<cplx>(parent, grid_size));
      }
    }
  }
}

void Fmm::CpuExecutor::run_diagonal_m2l() {
  const DiagonalLevels& d = *fmm_.diagonal_;
  for (std::size_t i = 0; i < d.levels.size(); ++i) {
    const DiagonalLevels::Level& lv = d.levels[i];
    const DiagonalLevelPlan& plan = d.plan.levels[i];
    const std::vector<std::size_t>& order = pairs_by_target_[i];
    const std::size_t grid_size = lv.grid->size();
    // Runs of one target: each thread writes its targets' local signatures alone.
    std::vector<std::size_t> starts;
    for (std::size_t at = 0; at < order.size(); ++at)
      if (at == 0 || plan.pairs[order[at]].target != plan.pairs[order[at - 1]].target)
        starts.push_back(at);
    starts.push_back(order.size());
    const std::size_t runs = starts.size() - 1;
#pragma omp parallel for schedule(dynamic, 4)
    for (std::size_t r = 0; r < runs; ++r)
      for (std::size_t at = starts[r]; at < starts[r + 1]; ++at) {
        const M2LPair& pair = plan.pairs[order[at]];
        diagonal_m2l(std::span<const cplx>(
                         lv.transfer.data() + std::size_t(pair.matrix) * grid_size, grid_size),
                     std::span<const cplx>(signature(outgoing_, lv.level, pair.source), grid_size),
                     std::span<cplx>(signature(incoming_, lv.level, pair.target), grid_size));
      }
  }
}

void Fmm::CpuExecutor::run_diagonal_downward() {
  const DiagonalLevels& d = *fmm_.diagonal_;
  const auto& cells = d.cells;
  // Each child's local signature from its parent's: shifted, then anterpolated; a parent's
  // children together (one batch, vectorised over them).
  for (int level = d.first_level() + 1; level <= d.conversion_level(); ++level) {
    const DiagonalLevels::Level& above = d.at(level - 1);
    const std::size_t grid_size = above.grid->size();
#pragma omp parallel
    {
      std::vector<cplx> moved(8 * grid_size);
#pragma omp for schedule(dynamic, 4)
      for (std::size_t i = 0; i < above.cells; ++i) {
        const int id = above.first_cell + int(i);
        const Cell& cell = cells[std::size_t(id)];
        if (cell.is_leaf()) continue;
        const cplx* parent = signature(incoming_, level - 1, id);
        const cplx* shifted[8];
        cplx* children[8];
        int count = 0;
        for (int ch = cell.first_child; ch < cell.first_child + cell.num_children; ++ch) {
          if (!d.wanted[std::size_t(ch)]) continue;
          cplx* to = moved.data() + std::size_t(count) * grid_size;
          std::fill(to, to + grid_size, cplx(0.0));
          diagonal_m2l(above.down_phases[std::size_t(cells[std::size_t(ch)].octant)],
                       std::span<const cplx>(parent, grid_size), std::span<cplx>(to, grid_size));
          shifted[count] = to;
          children[count++] = signature(incoming_, level, ch);
        }
        above.from_children->anterpolate(std::span<const cplx* const>(shifted, std::size_t(count)),
                                         std::span<cplx* const>(children, std::size_t(count)));
      }
    }
  }
  // The conversion level's local coefficients (the FMM's cells holding them) take its local
  // signatures.
  const int conversion = d.conversion_level();
  const DiagonalLevels::Level& last = d.at(conversion);
  const std::size_t size = std::size_t(fmm_.order_) * std::size_t(fmm_.order_);
  std::vector<const cplx*> signatures;
  std::vector<cplx*> locals;
  for (std::size_t i = 0; i < last.cells; ++i) {
    const int id = last.first_cell + int(i);
    if (!d.wanted[std::size_t(id)]) continue;
    signatures.push_back(signature(incoming_, conversion, id));
    locals.push_back(&local_[fmm_.slot(d.held[i]) * size]);
  }
  multiply_add_all(size, last.grid->size(), d.to_local, signatures, locals);
}

}  // namespace fmbem::fmm
