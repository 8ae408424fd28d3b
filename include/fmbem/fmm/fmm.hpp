#pragma once
#include <array>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "fmbem/core/vec3.hpp"
#include "fmbem/fmm/direct_sum.hpp"
#include "fmbem/fmm/gpu_options.hpp"
#include "fmbem/fmm/m2l_plan.hpp"
#include "fmbem/fmm/near_field.hpp"
#include "fmbem/fmm/octree.hpp"
#include "fmbem/fmm/partition.hpp"
#include "fmbem/fmm/translations.hpp"

namespace fmbem::fmm {

struct FmmOptions {
  // Expansion order p: degrees 0..p-1, p^2 coefficients. 0: chosen from tolerance.
  int order = 0;
  double tolerance = 1e-6;
  // An octree cell splits while it holds more than max_leaf splitting points (see Fmm).
  int max_leaf = 100;
  // Source-target pairs closer than this are skipped (a collocation point that
  // is also a quadrature point: its self term is added elsewhere).
  double skip_radius = 0.0;
  // Where the phases run: the CPU, the GPU (an error when none is usable) or, automatic, the GPU
  // when one is usable. On the GPU every phase runs there (P2M, M2M, M2L, L2L, L2P, and the near
  // field unless gpu_near_field is false), the expansions resident on the device.
  enum class Device { cpu, gpu, automatic } device = Device::cpu;
  // The GPU M2L scheme; none: the fastest measured for the order (default_m2l_scheme).
  std::optional<M2LScheme> m2l_scheme;
  GpuM2LOptions gpu_m2l;
  // On the GPU: the near field there too (false: on the CPU, for comparisons; then apply_device
  // is refused).
  bool gpu_near_field = true;
  GpuNearFieldOptions gpu_near;
  // Device memory the GPU far field may take (0: what is free); more is a clear error.
  std::size_t gpu_memory_limit = 0;
  // Instead of max_leaf, the fastest measured for where the FMM runs and its order
  // (default_max_leaf). Last, so that aggregate initialisers keep their meaning.
  bool measured_max_leaf = false;
  // apply's and apply_device's strength arrays hold one entry per sources_read() (in that
  // order) instead of one per source: a part's per-apply strengths then scale with the part,
  // not with the problem. (Where every source is read the two are the same.)
  bool strengths_of_sources_read = false;
  // The diagonal (high-frequency) levels where the cells need them (docs/wideband.md), on
  // either executor, one rank or distributed; false: the low-frequency FMM alone (for
  // comparisons with it).
  bool high_frequency = true;
  // The largest wavenumber of the FMMs a distributed partition's tree serves (a sweep's): the
  // partition (DistributedFmmPartition) builds its tree with no leaf on their diagonal levels,
  // which a part cannot split further. 0: any (the tree as the leaf size makes it).
  double largest_wavenumber = 0.0;
  // The screened (Yukawa) kernel exp(-k r) / (4 pi r): the wavenumber given to Fmm is then the
  // screening constant kappa (k = i kappa of the same expansions, Wavenumber). It never takes the
  // diagonal form (it does not oscillate) and needs no more terms than Laplace's.
  bool screened = false;
};

// The distributed FMM's part (a rank of the partition), given at construction and read there
// only: the FMM then keeps only the source points its part reads (P2M of the part's leaves, its
// near lists), P2M and M2M are the part's from the start, and distribute_upward_pass must be
// given the same let. Without one the FMM keeps every source point (distribute_upward_pass may
// still restrict it later).
struct FmmPart {
  const LocallyEssentialTree& let;
  // The tree's cells and lists, given (the distributed partition's tree of the split points,
  // DistributedFmmPartition::tree); null: the FMM builds its own. Given, the FMM neither
  // builds nor orders the whole tree: it finds which of the given sources lie in the leaves its
  // part reads and sorts those alone, and its targets, into a part's view of the tree holding
  // the cells its part reads alone, numbered anew (Octree::holds_cell_subset: its own and ghost
  // cells, its near, W and X lists' cells and the leaves below them, the M2L sources of its
  // targets' cells, their ancestors), so that its cells, lists and expansions (host and GPU)
  // scale with the part. Same answers as without, bit for bit on the CPU. The tree must be
  // that of these sources with every collocation point (splitting_points) as target and
  // splitting point, and of this FMM's leaf size (chosen_tree_size); or the sources and
  // collocation points may be a subset of those (a rank's part of the mesh with its halo,
  // bem's DistributedMesh) holding every source of each leaf the part reads (checked).
  const Octree* tree = nullptr;
};

// The fastest GPU M2L scheme measured on an H100 for order p (bench/results/gpu_m2l.md):
// our tensor-core kernel dmma up to p = 8, cuBLAS's batched ZGEMM (gemm) above.
M2LScheme default_m2l_scheme(int order);

// The leaf size of the fastest MatMult measured for order p on the CPU (40 at p <= 17, 100
// above: bench/results/cpu_translations.md) or on the GPU (H100, icosphere of 1.3M elements,
// bench/results/gpu_fmm.md: 50 at p = 8, 150 at p = 16), where the near field and M2L balance.
int default_max_leaf(bool gpu, int order);

// The expansion order whose measured MatMult error stays below tolerance
// (calibrated on BEM operators: tests/unit/fmm/fmm_test.cpp).
int order_for_tolerance(double tolerance);

// The level above which a tree for the FMMs of `options` (at every k up to
// options.largest_wavenumber) must hold no leaf: the conversion level of their diagonal levels,
// found on `tree` (its widths and depth) as Fmm's construction finds it; 0 where none has
// diagonal levels. A tree with no leaf above it serves every smaller k (whose conversion levels
// lie no deeper).
int diagonal_min_leaf_level(const Octree& tree, const FmmOptions& options);
// The cells of levels 0 .. diagonal_min_leaf_level (ascending ids; none where it is 0): every
// part's FMM reads them all and their M2L lists (a distributed part's diagonal levels form the
// whole coarse tree's signatures), so a part's view of the tree holds them.
std::vector<int> diagonal_level_cells(const Octree& tree, const FmmOptions& options);

// What Fmm's construction chooses from its options: the order (options.order, or from the
// tolerance), whether it runs on the GPU, and the leaf size its tree is built with. One choice
// for the Fmm and for the distributed partition, whose tree must be the Fmm's.
struct FmmTreeSize {
  int order = 0, max_leaf = 0;
  bool gpu = false;
};
FmmTreeSize chosen_tree_size(const FmmOptions& options);

// exchange: the multipoles of other ranks added (share_upward_pass's combine, the distributed
// FMM's MultipoleExchange); where the exchange is begun and ended apart, two such phases.
enum class FmmPhase { tree, translations, p2m, m2m, m2l, l2l, l2p, near_field, exchange, count };
const char* phase_name(FmmPhase phase);

// Told when each phase of a piece of work begins and ends (solver/ turns these into PETSc
// events; benchmarks into timings). The FMM itself knows nothing of PETSc.
template <class Phase>
class PhaseObserver {
 public:
  virtual ~PhaseObserver() = default;
  virtual void begin(Phase phase) = 0;
  virtual void end(Phase phase) = 0;
};
using FmmObserver = PhaseObserver<FmmPhase>;

// Tells an observer (may be null) of a scope's phase: begin(phase) now, end(phase) when the
// scope closes (also by an exception).
template <class Phase>
class ObservedPhase {
 public:
  ObservedPhase(PhaseObserver<Phase>* observer, Phase phase) : observer_(observer), phase_(phase) {
    if (observer_) observer_->begin(phase_);
  }
  ~ObservedPhase() {
    if (observer_) observer_->end(phase_);
  }
  ObservedPhase(const ObservedPhase&) = delete;
  ObservedPhase& operator=(const ObservedPhase&) = delete;

 private:
  PhaseObserver<Phase>* observer_;
  Phase phase_;
};

struct DiagonalLevels;

struct FmmStatistics {
  int order = 0, levels = 0;
  int max_leaf = 0;  // the leaf size the tree was built with (max_leaf or default_max_leaf)
  std::vector<int> cells_per_level, leaves_per_level, m2l_pairs_per_level,
      transfer_matrices_per_level;
  std::size_t leaves = 0;         // of the whole tree
  std::size_t target_leaves = 0;  // leaves holding targets of this FMM: those apply() visits
  std::size_t max_leaf_targets = 0;
  double mean_leaf_targets = 0.0;  // over the target leaves
  // Source-target point pairs summed directly for this FMM's targets: over the parts of a split
  // of the targets (same splitting points) they add up to the count of the whole.
  std::size_t near_pairs = 0;
  std::size_t tree_bytes = 0, translation_bytes = 0, expansion_bytes = 0, source_bytes = 0;
  // The source points (with their normals) this FMM holds: every source, or where its targets
  // are a part's (FmmPart) those the part reads alone.
  std::size_t source_points = 0;
  double max_kappa = 0.0;  // k times the width of the coarsest level with low-frequency M2L
  // The wideband FMM's diagonal levels (docs/wideband.md): the finest of them (-1: none, the
  // low-frequency FMM alone), their pairs, the pairs summed directly because a deferred pair met a
  // leaf, and their bandwidths (levels 2 .. switch_level + 1).
  int switch_level = -1;
  std::size_t diagonal_pairs = 0, deferred_direct_pairs = 0;
  std::vector<int> diagonal_bandwidths;
  // Per level, the low-frequency M2L's order where some level's is below p (the expansions of
  // those levels are truncated to it); empty: p on every level.
  std::vector<int> level_orders;
  // A distributed part whose cells needed the diagonal levels but whose partition's tree holds
  // a leaf on them (built without FmmOptions::largest_wavenumber): it stays low-frequency.
  bool diagonal_refused = false;
  // Where M2L runs, in words ("cpu", "gpu, scheme dmma", or "cpu (no GPU: ...)").
  std::string m2l_device = "cpu";
  std::string near_field_device = "cpu";  // "cpu" or "gpu"
  std::string far_field_device = "cpu";   // where P2M, M2M, L2L and L2P run: "cpu" or "gpu"
  // Device memory held by the GPU path (M2L, near field, far field with the expansions, the
  // potentials): also the peak of apply_device, which allocates nothing. apply from host arrays
  // adds the strengths of every source (16 bytes each, twice with dipoles) at its first call.
  std::size_t gpu_bytes = 0;
  std::size_t total_bytes() const {
    return tree_bytes + translation_bytes + expansion_bytes + source_bytes;
  }
};

// What apply gives at each target besides the potential phi: with normals (one unit vector per
// target, input order) the output is phi + weight * n_t . grad phi, the normal derivative formed
// in the same pass (L2P differentiates the local expansion, the near field sums the kernels'
// derivatives). Burton-Miller's operators S + alpha D' and D + alpha N in one FMM. Without
// normals (the default) the output is phi. apart (with normals; weight unused): the output holds
// two entries per target, phi at [0, targets) and n_t . grad phi at [targets, 2 targets): the
// regularised Burton-Miller equation applies an operator to the normal derivative alone, still
// from one pass.
struct TargetNormalDerivative {
  std::span<const Vec3> normals;
  cplx weight = 0.0;
  bool apart = false;
};

// Whether the expansions of order p converge on the coarsest M2L level: the
// low-frequency method needs p above about k times the cell diagonal there
// (tests/unit/fmm/fmm_test.cpp measures where it stops).
bool low_frequency_accurate(const FmmStatistics& statistics);

// Low-frequency FMM for the Helmholtz kernel G = exp(ikr) / (4 pi r) (k = 0:
// Laplace) and its normal derivative at the sources:
//   phi(x_i) = sum_j G(x_i - y_j) q_j + dG/dn_y(x_i, y_j) d_j.
// The plan (octree, lists, translation matrices) is built once for a set of
// sources with normals and a set of targets; apply() runs P2M, M2M, M2L
// (dense p^2 x p^2 matrices per level and transfer vector, applied in
// batches that share a matrix), L2L, L2P and the direct sum of the near
// lists: on the CPU every phase OpenMP-parallel over cells, on the GPU every phase a kernel on
// device-resident points, lists, matrices and expansions (apply_device).
//
// The octree's shape comes from the splitting points (Octree). When the
// targets are split into parts (MPI ranks owning rows), give every part the
// targets of the whole as splitting points: each builds the same tree, the
// work per part falls as the parts grow in number, and the result for a
// target does not depend on the split (the same operations in the same order).
// Cells without this FMM's targets cost nothing beyond the upward pass.
class Fmm {
 public:
  Fmm(double k, std::span<const Vec3> sources, std::span<const Vec3> source_normals,
      std::span<const Vec3> targets, std::span<const Vec3> splitting_points,
      const FmmOptions& options, FmmObserver* observer = nullptr,
      const TargetNormalDerivative& normal_derivative = {},
      const std::optional<FmmPart>& part = std::nullopt);
  // The targets are the splitting points.
  Fmm(double k, std::span<const Vec3> sources, std::span<const Vec3> source_normals,
      std::span<const Vec3> targets, const FmmOptions& options, FmmObserver* observer = nullptr)
      : Fmm(k, sources, source_normals, targets, targets, options, observer) {}
  ~Fmm();
  Fmm(const Fmm&) = delete;
  Fmm& operator=(const Fmm&) = delete;

  // potential has outputs_per_target() entries per target (phi, or phi + weight n_t . grad phi
  // with a TargetNormalDerivative, or phi and n_t . grad phi apart); charges or dipoles may be
  // empty.
  void apply(std::span<const cplx> charges, std::span<const cplx> dipoles,
             std::span<cplx> potential, FmmObserver* observer = nullptr) const;

  // Whether every phase of apply runs on the GPU (the device-resident plan): then apply_device
  // may be called, and apply copies the strengths in and the potentials out once.
  bool runs_on_gpu() const;
  // apply on device arrays in input order (null charges or dipoles: zero); device_potential
  // (outputs_per_target() entries per target) is overwritten. Enqueued on the CUDA default stream,
  // so later work there sees the result; with an observer each phase is synchronised at its end
  // (phase timings). Throws fmbem::Error unless runs_on_gpu().
  void apply_device(const cplx* device_charges, const cplx* device_dipoles, cplx* device_potential,
                    FmmObserver* observer = nullptr) const;

  // Splits the upward pass among `parts` FMMs with the same tree (MPI ranks owning rows): this
  // one forms the moments of part `part` of the leaves only (contiguous in Morton order, equal
  // shares of the sources), M2M translates these partial moments (it is linear), and `combine`
  // must then sum the multipole arrays of all parts in place (an MPI_Allreduce), before M2L.
  // Without a share every FMM does the whole upward pass.
  void share_upward_pass(int part, int parts,
                         std::function<void(std::span<cplx> multipoles)> combine);

  // The distributed upward pass: this FMM forms the moments of its part's leaves only
  // (the leaves among let.own_cells; let is a LocallyEssentialTree of a TreePartition of a tree
  // of this FMM's shape: the whole problem's sources and splitting points), M2M runs only over
  // their ancestors (partial multipoles where other parts own leaves below too), and `exchange`
  // must then add the other parts' partial multipoles of the cells this FMM's M2L reads
  // (MultipoleExchange, fmm::distribute), before M2L. This FMM's targets should be the part's
  // elements' (TreePartition::elements), so that M2L, L2L, L2P and the near field are the
  // part's alone. On the GPU too (P2M and M2M restricted alike), though there `exchange` gets
  // the whole multipole array copied through the host: the packed form below moves less.
  void distribute_upward_pass(const LocallyEssentialTree& let,
                              std::function<void(std::span<cplx> multipoles)> exchange);
  // The same with the exchange overlapped with the near field on the CPU: exchange_begin starts
  // sending this part's partials after M2M, the near field runs, exchange_end adds the received
  // ones before M2L. (On the GPU the two run one after the other.)
  void distribute_upward_pass(const LocallyEssentialTree& let,
                              std::function<void(std::span<cplx> multipoles)> exchange_begin,
                              std::function<void(std::span<cplx> multipoles)> exchange_end);
  // The exchange on packed buffers (MultipoleExchange::begin_packed, end_packed): begin(send,
  // receive) starts sending `send`, the partials of let's send cells in packed order
  // (LocallyEssentialTree::packed_send_cells, p^2 each), and receiving into `receive` (those of
  // packed_receive_cells); end() waits for it. The buffers stay untouched between the two.
  struct PackedMultipoleExchange {
    std::function<void(std::span<const cplx> send, std::span<cplx> receive)> begin;
    std::function<void()> end;
  };
  // The distributed upward pass on the GPU (upward_pass_on_gpu(); an error otherwise), where only
  // the exchanged cells cross to the host: P2M over the part's leaves and M2M over its own cells
  // on the device, the send cells gathered there into one buffer and copied to pinned host
  // memory, exchanged, and the received partials copied back and added to their cells on the
  // device. overlap (with the near field on the GPU): the exchange runs while the near field's
  // kernels do.
  void distribute_upward_pass(const LocallyEssentialTree& let, PackedMultipoleExchange exchange,
                              bool overlap);
  // A distributed part's diagonal levels (a wideband FMM built with its FmmPart): every part
  // forms the whole coarse tree's signatures from the conversion level's multipoles, its
  // partial sums added over the parts by `sum` in place (an MPI_Allreduce), once an apply
  // after M2M; its diagonal M2L and downward pass serve its own targets. Needed before apply
  // where diagonal_levels_on_part(); the applies of all parts are then collective.
  void set_parts_sum(std::function<void(std::span<cplx> values)> sum) {
    parts_sum_ = std::move(sum);
  }
  bool diagonal_levels_on_part() const;
  // let with its cells numbered as this FMM's tree numbers them: a part's view of the given
  // partition's tree (FmmPart::tree) holds the cells its part reads alone, numbered
  // anew; elsewhere the same ids. Throws fmbem::Error where the tree lacks one of let's cells.
  LocallyEssentialTree in_tree_cells(const LocallyEssentialTree& let) const;
  // Whether the upward pass (P2M, M2M, the expansions) runs on the GPU.
  bool upward_pass_on_gpu() const;
  // Where each cell's expansions lie in the arrays apply forms and exchange receives (per cell id:
  // the position in cells, -1 where not held); empty: at the cell id. On the CPU a distributed
  // FMM holds its LocallyEssentialTree::expansion_cells() alone, in that order.
  std::span<const int> expansion_slots() const { return slot_; }
  // The sources whose strengths apply reads (input indices, ascending): those of the leaves of
  // its upward pass and of the near lists of its targets. The other strengths may hold anything.
  std::vector<std::size_t> sources_read() const;
  // The entries apply's strength arrays have: one per source, or with
  // FmmOptions::strengths_of_sources_read one per sources_read().
  std::size_t strength_count() const { return source_count_; }
  // The source (input index) of each entry of apply's strength arrays where they are of the
  // sources read and some source is not read; empty: entry i is source i.
  std::span<const std::size_t> strength_sources() const { return read_sources_; }

  int order() const { return order_; }
  // 2 where the normal derivative is given apart (TargetNormalDerivative::apart), else 1.
  int outputs_per_target() const { return derivative_apart_ ? 2 : 1; }
  const Octree& tree() const { return *tree_; }
  const FmmStatistics& statistics() const { return statistics_; }
  // The near lists (views of this FMM's arrays), for the GPU executor and for tests.
  NearFieldLists near_field_lists() const;
  // Tree, lists, order and memory, for -fmm_view.
  std::string describe() const;

 private:
  struct Level;
  // gpu: the GPU executor will be built (choose_executor), so the M2L matrices are built there.
  void build_translations(bool gpu);
  void build_near_lists();
  // near_source_order_ from near_ranges_, which it renumbers.
  void compact_near_sources();
  // The near store's order: per position the source's input index (or, with
  // strengths_of_sources_read, its position in read_sources_): near_source_order_, or the tree's
  // order where the store holds every source.
  std::span<const std::size_t> near_store_order() const;
  // FmmOptions::strengths_of_sources_read: the stores' order arrays renumbered from input indices
  // to positions in sources_read() (kept in read_sources_).
  void number_strengths_by_sources_read();
  // Per input source whether apply reads its strength (sources_read() as marks).
  std::vector<char> source_read_marks() const;
  // The near store and, where it lacks some, the upward store from the input-order points.
  void hold_sources(std::span<const Vec3> sources, std::span<const Vec3> normals);
  // The points P2M reads for `leaf` (one of upward_leaves_): positions [begin, end) of points,
  // normals (empty: none) and order (input index per position, for the strengths).
  struct LeafSources {
    std::span<const Vec3> points, normals;
    std::span<const std::size_t> order;
    std::size_t begin = 0, end = 0;
  };
  LeafSources leaf_sources(int leaf) const;
  // The part's own cells and leaves (own_cells_, upward_leaves_) from let; the rest of
  // restrict_upward_pass (finish_restriction) needs the translations and executors.
  std::vector<int> mark_part(const LocallyEssentialTree& let);
  void finish_restriction(const LocallyEssentialTree& let, const std::vector<int>& leaves);
  // The part given at construction (FmmPart): its own cells, to check the tree given
  // to distribute_upward_pass against (nullopt: none given; empty: a part without cells).
  std::optional<std::vector<int>> constructed_part_cells_;
  // The executors (fmm_executor.hpp): the CPU's, and the GPU's where fmbem is built with CUDA.
  class Executor;
  class CpuExecutor;
  class GpuExecutor;
  struct Arrays;
  // The exchange of multipoles between parts (none: a serial FMM), a strategy of its own.
  class Exchange;
  class WholeArrayExchange;
  std::unique_ptr<Executor> make_cpu_executor() const;
  // Defined by src/fmm/cuda/gpu_executor.cpp, built with CUDA alone; fills the statistics'
  // devices and device memory.
  std::unique_ptr<Executor> make_gpu_executor(FmmStatistics& statistics) const;
  // The executor options_.device asks for (an fmbem::Error where the GPU is asked for and none
  // is usable).
  void choose_executor();
  // distribute_upward_pass's common part: checks let against the tree, marks own_cells_, and
  // restricts P2M and M2M to the part (on the CPU also the expansions to its held cells).
  void restrict_upward_pass(const LocallyEssentialTree& let);

  // The phase list of one apply: the upward pass, the exchange, the downward pass and the near
  // field (between the exchange's begin and end where it overlaps them), whichever executor
  // runs it.
  void run_phases(const Arrays& arrays, FmmObserver* observer) const;

  Wavenumber k_;
  int order_;
  FmmOptions options_;
  // The entries of apply's strength arrays: the problem's sources, or the sources read.
  std::size_t source_count_ = 0;
  // With FmmOptions::strengths_of_sources_read where some source is not read: sources_read(),
  // whose positions the order arrays (near_source_order_, upward_order_) then hold.
  std::vector<std::size_t> read_sources_;
  bool with_normals_ = false;
  std::vector<Vec3> targets_;
  // The source points the near lists read and their normals, by position: near_source_order_'s
  // positions, or the tree's (source_order()) when the lists read every source.
  std::vector<Vec3> near_sources_, near_normals_;
  // The runs of tree positions the near store holds: {first, end, position of first} each,
  // ascending; empty when it holds every source.
  std::vector<std::array<std::size_t, 3>> near_intervals_;
  // Where the near store does not hold every source: the leaves P2M visits (ascending cell ids),
  // and per leaf whether its points lie in the near store or in the upward store (the points of
  // the leaves outside the near store, tree order, with the input index at each position), and
  // the position of its first point there. Empty: P2M reads the near store by tree positions.
  std::vector<Vec3> upward_sources_, upward_normals_;
  std::vector<std::size_t> upward_order_;
  std::vector<int> upward_store_leaves_;
  std::vector<std::size_t> upward_store_begin_;
  std::vector<char> upward_in_near_store_;
  // TargetNormalDerivative: the targets' unit normals (input order; empty: the output is phi)
  // and the weight of n_t . grad phi.
  std::vector<Vec3> target_normals_;
  cplx target_normal_weight_ = 0.0;
  bool derivative_apart_ = false;
  std::unique_ptr<Octree> tree_;
  std::vector<Level> levels_;
  // The leaves holding targets, ascending: L2P and the near field visit only these.
  std::vector<int> target_leaves_;
  // Per target leaf (index into target_leaves_): its targets' tree positions, and the source
  // point ranges summed directly.
  std::vector<std::array<std::size_t, 2>> near_targets_;
  std::vector<std::size_t> near_offsets_;
  std::vector<std::array<std::size_t, 2>> near_ranges_;
  // The sources the near lists read, in tree order (input indices, or positions in read_sources_),
  // and near_ranges_ as positions
  // among them; empty when they read every source (then near_ranges_ are tree positions). On a
  // part of a distributed FMM they are a small share of all, and the near field's per-apply
  // copies (PointSources, the GPU's sorted points and strengths) hold only these.
  std::vector<std::size_t> near_source_order_;
  // The near store holds every source in the tree's order (near_source_order_ empty, the near
  // ranges tree positions): where the ranges read every source of a tree whose order indexes
  // every given source. Never a part's view holding some sources only, whose order's indices
  // strengths_of_sources_read does not renumber (only the stores' orders).
  bool near_store_is_tree_order_ = false;
  FmmStatistics statistics_;
  // share_upward_pass: the leaves this FMM forms moments for (indices into tree().leaves()).
  std::size_t upward_leaf_begin_ = 0, upward_leaf_end_ = 0;
  // The leaves P2M visits (cell ids): tree().leaves()[upward_leaf_begin_, upward_leaf_end_), or a
  // part's leaves (distribute_upward_pass).
  std::vector<int> upward_leaves_;
  // distribute_upward_pass: per cell id, whether the part owns it (a leaf of the part or an
  // ancestor of one: M2M forms its partial multipole); empty: all (not distributed).
  std::vector<char> own_cells_;
  // distribute_upward_pass on the CPU: per cell id, where its expansions lie in the arrays of
  // apply (-1: not held); empty: at the cell id (the whole tree's expansions).
  std::vector<int> slot_;
  std::size_t num_slots_ = 0;
  std::size_t slot(int cell) const {
    return slot_.empty() ? std::size_t(cell) : std::size_t(slot_[cell]);
  }
  // The M2L pairs and matrices of every low-frequency level, applied by the CPU
  // (apply_m2l_reference) or uploaded to the GPU.
  M2LPlan m2l_plan_;
  // The diagonal levels of a wideband FMM (null: the low-frequency FMM alone).
  std::unique_ptr<DiagonalLevels> diagonal_;
  // Per tree level, the order of its low-frequency M2L (p where it needs all), and the levels
  // below p: their expansions are truncated to it (truncate_to_level_orders, on the host arrays
  // in slot order; the GPU executor's kernels alike).
  std::vector<int> level_orders_;
  std::vector<int> truncated_levels_;
  void truncate_to_level_orders(std::span<cplx> expansions) const;
  // A part's diagonal levels: the sum of the conversion level's multipoles over the parts.
  std::function<void(std::span<cplx> values)> parts_sum_;
  // Refuses distributing an FMM built with diagonal levels (a part given after construction).
  void check_no_diagonal_levels(const char* what) const;
  // The wideband plan and the diagonal levels (construction): on the whole tree, or on the
  // partition's tree for a part.
  void plan_diagonal_levels(std::span<const Vec3> sources, std::span<const Vec3> targets,
                            std::span<const Vec3> splitting_points, double eps,
                            const std::optional<FmmPart>& part);
  // The phases' executor; mutable: its expansions (and device buffers) are scratch of apply().
  mutable std::unique_ptr<Executor> executor_;
  // The multipoles of other parts before M2L: share_upward_pass's combine or
  // distribute_upward_pass's exchange (null: none). It may read the executor's device buffers.
  std::unique_ptr<Exchange> exchange_;
};

}  // namespace fmbem::fmm
