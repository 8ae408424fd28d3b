#pragma once
// The FMM's executors and exchanges (DESIGN.md, "Executors"): the phases P2M, M2M, M2L, L2L, L2P
// and the near field as one interface, a CPU implementation (cpu_executor.cpp) and a CUDA one
// (cuda/gpu_executor.cpp, built with CUDA alone) chosen at Fmm's construction; Fmm::apply runs
// the phase list once, whichever runs it, with the exchange of multipoles between parts a
// strategy of its own. Not a public header.
#include <array>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "fmbem/fmm/fmm.hpp"
#include "fmbem/fmm/rotation_translations.hpp"

namespace fmbem::fmm {

// A level's translations: for children at this level, by octant, M_parent += m2m M_child and
// L_child += l2l L_parent (dense, or by rotation on the CPU from rotation_m2l_min_order: then
// shifts, and m2m and l2l empty); the gradient terms of P2M's dipoles and L2P's normal
// derivative.
struct Fmm::Level {
  double sigma = 0.0;
  std::vector<GradientTerm> gradient;
  std::array<TranslationMatrix, 8> m2m, l2l;
  std::shared_ptr<const RotationShifts> shifts;
};

// One apply's strengths and potentials: host arrays (apply) or, on the GPU, device arrays
// (apply_device). Null charges or dipoles: zero.
struct Fmm::Arrays {
  const cplx* charges = nullptr;
  const cplx* dipoles = nullptr;
  cplx* potential = nullptr;
  bool on_device = false;
};

// An apply at a time: start, the phases in Fmm::apply's order, finish. The expansions are the
// executor's (host or device memory), scratch of the apply.
class Fmm::Executor {
 public:
  virtual ~Executor() = default;
  // The expansions and the potentials zeroed for this apply's arrays.
  virtual void start(const Arrays& arrays) = 0;
  virtual void p2m() = 0;
  virtual void m2m() = 0;
  virtual void m2l() = 0;
  virtual void l2l() = 0;
  virtual void l2p() = 0;
  virtual void near_field() = 0;
  // The potentials in the arrays start was given (a device executor from host arrays copies
  // them out here).
  virtual void finish() {}
  // Waits for the work enqueued so far: an observed phase then times the device's work.
  virtual void synchronize() {}

  // The multipole array (every held cell's p^2 coefficients) handed to work and, where it lies on
  // a device, copied back after: the whole-array exchange's access.
  virtual void with_multipoles(const std::function<void(std::span<cplx>)>& work) = 0;
  // Whether with_multipoles hands the executor's own array (no copies): an exchange may then
  // begin and end apart.
  virtual bool multipoles_on_host() const = 0;
  // The distributed upward pass on the device: P2M over the part's leaves (indices into the
  // tree's leaves, ascending), M2M over its own cells (one mark per cell id). The CPU's are
  // Fmm's own (its expansions of held cells).
  virtual void restrict_upward_pass(std::span<const std::size_t> leaf_indices,
                                    std::span<const char> own_cells) = 0;
  // The packed exchange of let's cells (Fmm::distribute_upward_pass): the GPU's alone.
  virtual std::unique_ptr<Exchange> packed_exchange(const LocallyEssentialTree& let,
                                                    PackedMultipoleExchange exchange,
                                                    bool overlap) = 0;
  // Whether every phase runs on the device (apply_device may be called).
  virtual bool runs_on_device() const = 0;
  // Whether the upward pass and the expansions are on the device.
  virtual bool expansions_on_device() const = 0;
  // Where the phases run, for Fmm::describe: one line each for the far field (P2M, M2M, L2L,
  // L2P), M2L and the near field.
  virtual std::string describe(const FmmStatistics& statistics) const = 0;
};

// How the multipoles of other parts reach this FMM's before M2L (none: a serial FMM holds no
// exchange). begin runs after M2M, end before M2L; where it overlaps the near field, the near
// field runs between the two.
class Fmm::Exchange {
 public:
  virtual ~Exchange() = default;
  virtual void begin(Executor& executor) = 0;
  // Whether there is an end phase (else begin did the whole exchange).
  virtual bool has_end() const = 0;
  virtual void end(Executor& executor) = 0;
  virtual bool overlaps_near_field() const = 0;
  // Device memory the exchange holds (its packed buffers).
  virtual std::size_t device_bytes() const { return 0; }
};

// The exchange on the whole multipole array: share_upward_pass's combine, or a distributed
// exchange given as functions (distribute_upward_pass). With an end and the array on the host
// the two run apart, the near field between; through a device's copy, both in begin.
class Fmm::WholeArrayExchange final : public Exchange {
 public:
  using Work = std::function<void(std::span<cplx> multipoles)>;
  WholeArrayExchange(Work begin, Work end, bool apart)
      : begin_(std::move(begin)), end_(std::move(end)), apart_(apart && end_) {}
  void begin(Executor& executor) override;
  bool has_end() const override { return apart_; }
  void end(Executor& executor) override;
  bool overlaps_near_field() const override { return apart_; }

 private:
  Work begin_, end_;
  bool apart_;
};

}  // namespace fmbem::fmm
