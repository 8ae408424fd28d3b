#pragma once
#include <array>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "fmbem/core/vec3.hpp"
#include "fmbem/fmm/direct_sum.hpp"
#include "fmbem/fmm/octree.hpp"
#include "fmbem/fmm/translations.hpp"

namespace fmbem::fmm {

struct FmmOptions {
  // Expansion order p: degrees 0..p-1, p^2 coefficients. 0: chosen from tolerance.
  int order = 0;
  double tolerance = 1e-6;
  int max_leaf = 100;
  // Source-target pairs closer than this are skipped (a collocation point that
  // is also a quadrature point: its self term is added elsewhere).
  double skip_radius = 0.0;
};

// The expansion order whose measured MatMult error stays below tolerance
// (calibrated on BEM operators: tests/unit/fmm/fmm_test.cpp).
int order_for_tolerance(double tolerance);

enum class FmmPhase { tree, translations, p2m, m2m, m2l, l2l, l2p, near_field, count };
const char* phase_name(FmmPhase phase);

// Told when each phase begins and ends (solver/ turns these into PETSc events;
// benchmarks into timings). The FMM itself knows nothing of PETSc.
class FmmObserver {
 public:
  virtual ~FmmObserver() = default;
  virtual void begin(FmmPhase phase) = 0;
  virtual void end(FmmPhase phase) = 0;
};

struct FmmStatistics {
  int order = 0, levels = 0;
  std::vector<int> cells_per_level, leaves_per_level, m2l_pairs_per_level,
      transfer_matrices_per_level;
  std::size_t leaves = 0, max_leaf_targets = 0;
  double mean_leaf_targets = 0.0;
  std::size_t near_pairs = 0;  // source-target point pairs summed directly
  std::size_t tree_bytes = 0, translation_bytes = 0, expansion_bytes = 0, source_bytes = 0;
  double max_kappa = 0.0;  // k times the width of the coarsest level with M2L
  std::size_t total_bytes() const {
    return tree_bytes + translation_bytes + expansion_bytes + source_bytes;
  }
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
// lists, every phase OpenMP-parallel over cells.
class Fmm {
 public:
  Fmm(double k, std::span<const Vec3> sources, std::span<const Vec3> source_normals,
      std::span<const Vec3> targets, const FmmOptions& options, FmmObserver* observer = nullptr);
  ~Fmm();
  Fmm(const Fmm&) = delete;
  Fmm& operator=(const Fmm&) = delete;

  // potential has one entry per target; charges or dipoles may be empty.
  void apply(std::span<const cplx> charges, std::span<const cplx> dipoles,
             std::span<cplx> potential, FmmObserver* observer = nullptr) const;

  int order() const { return order_; }
  const Octree& tree() const { return *tree_; }
  const FmmStatistics& statistics() const { return statistics_; }
  // Tree, lists, order and memory, for -fmm_view.
  std::string describe() const;

 private:
  struct Level;
  struct Batch;
  void build_translations();
  void build_near_lists();

  double k_;
  int order_;
  FmmOptions options_;
  std::vector<Vec3> sources_, normals_, targets_;
  std::unique_ptr<Octree> tree_;
  std::vector<Level> levels_;
  // Per target leaf (index into tree().leaves()): source point ranges summed directly.
  std::vector<std::size_t> near_offsets_;
  std::vector<std::array<std::size_t, 2>> near_ranges_;
  FmmStatistics statistics_;
};

}  // namespace fmbem::fmm
