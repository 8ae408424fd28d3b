#pragma once
#include <array>
#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "fmbem/core/vec3.hpp"
#include "fmbem/fmm/octree.hpp"
#include "fmbem/fmm/translations.hpp"

// The FMM's passes besides M2L on a CUDA GPU (no CUDA types here: the kernels live in
// src/fmm/cuda/fmm_kernels.cu): P2M, M2M, L2L and L2P on device-resident sorted points, cell
// lists and translation matrices, with the multipole and local arrays kept on the device between
// applies (Fmm runs M2L between them with GpuM2L on the same arrays).
//
// Kernels (complex double; Rhat ported with the CPU's recurrences, see expansions.hpp):
//   P2M  one block per leaf; its points staged in chunks of 32, a thread each forming the
//        radial factors, P_m^m and e^{i m phi}; then a thread per coefficient (n, m) runs the
//        Legendre recurrence in n for each point and sums charge conj(Rhat); dipoles sum per q
//        and apply the level's gradient terms once per leaf, as the CPU does.
//   M2M, L2L  one launch per level over tiles of up to 16 parents a block: per octant, the
//        tile's input vectors staged in shared memory, a thread per row of the octant's matrix
//        (column-major, coalesced) multiplying all of them, so a matrix entry read from L2
//        feeds up to 16 complex FMAs.
//   L2P  one block per target leaf, its locals in shared memory, a thread per target forming
//        Rhat by the same recurrences and summing L Rhat. With target normals the block first
//        forms the three vectors Lq (the gradient terms applied to L, in shared memory) and
//        each thread sums (L + w sum_q (n_t . g_q) Lq) Rhat with Rhat to degree p.
namespace fmbem::fmm {

// What the GPU far field needs of an FMM plan (views: they need live only during construction).
struct GpuFarFieldPlan {
  struct Level {
    double sigma = 0.0;
    std::span<const GradientTerm> gradient;
    // Row-major p^2 x p^2 per octant, empty for levels 0 and 1.
    std::array<std::span<const cplx>, 8> m2m, l2l;
  };
  Wavenumber k;
  int order = 0;
  const Octree* tree = nullptr;
  // P2M's source points (and normals, may be empty) by position, source_order the input index
  // at each position (where the strengths are), and the leaves P2M visits with the positions of
  // their points, by leaf index (into tree->leaves()) ascending.
  std::span<const Vec3> sources, normals;
  std::span<const std::size_t> source_order;
  struct P2MLeaf {
    int cell = 0;
    std::size_t leaf_index = 0, begin = 0, end = 0;
  };
  std::vector<P2MLeaf> p2m_leaves;
  std::span<const Vec3> targets;       // input order
  std::span<const int> target_leaves;  // the leaves L2P visits, ascending
  std::vector<Level> levels;
  // Device memory this executor may take (0: whatever is free); bytes above it are an error.
  std::size_t memory_limit = 0;
  // With target normals (input order, one per target) L2P gives phi + target_normal_weight
  // n_t . grad phi (TargetNormalDerivative); empty: phi.
  std::span<const Vec3> target_normals;
  cplx target_normal_weight = 0.0;
  // With target normals: phi and n_t . grad phi apart (TargetNormalDerivative::apart), the
  // potentials two per target.
  bool derivative_apart = false;
};

// A level's cells, [first_cell, first_cell + cells), whose expansions keep their leading `kept`
// coefficients alone (a level-dependent order, Fmm's level orders).
struct ExpansionTruncation {
  int first_cell = 0, cells = 0, kept = 0;
};

// Zeroes in device expansions of `size` coefficients a cell every coefficient from `kept` on in
// each truncation's cells; enqueued on the CUDA default stream.
void truncate_expansions(cplx* device_expansions, int size,
                         std::span<const ExpansionTruncation> levels);

class GpuFarField {
 public:
  // Uploads the plan and allocates the expansions. Throws fmbem::Error without a usable GPU or
  // when the device memory (or plan.memory_limit) does not suffice, naming the bytes needed.
  explicit GpuFarField(const GpuFarFieldPlan& plan);
  ~GpuFarField();
  GpuFarField(const GpuFarField&) = delete;
  GpuFarField& operator=(const GpuFarField&) = delete;

  // The device arrays of num_cells * p^2 coefficients.
  cplx* multipole();
  cplx* local();

  // Each enqueued on the CUDA default stream. Device arrays in input order, null: zero.
  // Zeroes the multipoles and locals.
  void clear_expansions();
  // The moments of the leaves leaves()[leaf_begin, leaf_end) (see Fmm::share_upward_pass).
  void p2m(const cplx* device_charges, const cplx* device_dipoles, std::size_t leaf_begin,
           std::size_t leaf_end);
  // P2M from now on only for the leaves tree().leaves()[i], i in leaf_indices (ascending): a part's
  // leaves in the distributed FMM (Fmm::distribute_upward_pass); p2m's range then counts them.
  void restrict_p2m(std::span<const std::size_t> leaf_indices);
  // M2M from now on only into the parents with own_cells[parent] set and only from the children
  // with own_cells[child] set (per cell id: a part's own cells, Fmm::distribute_upward_pass): the
  // other cells keep what they hold (zero after clear_expansions, as the part has no partial
  // multipole there).
  void restrict_m2m(std::span<const char> own_cells);
  void m2m();
  void l2l();
  // potential[t] += the local expansion at t (with target normals: plus the weight times its
  // normal derivative) for the targets of leaves at levels >= 2 (others are left alone).
  void l2p(cplx* device_potential);
  // potential[t] = 0 for every target.
  void zero_potential(cplx* device_potential);
  // Waits for the default stream; throws fmbem::Error if a kernel failed.
  void synchronize();
  // Synchronous copies of the whole multipole array (share_upward_pass's combine).
  void download_multipoles(std::span<cplx> host);
  void upload_multipoles(std::span<const cplx> host);

  // Device memory held.
  std::size_t device_bytes() const;
  std::string describe() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace fmbem::fmm
