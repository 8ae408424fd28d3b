#pragma once
#include <mpi.h>

#include <algorithm>
#include <cstddef>
#include <span>
#include <vector>

#include "fmbem/core/vec3.hpp"
#include "fmbem/fmm/fmm.hpp"
#include "fmbem/fmm/partition.hpp"

namespace fmbem::fmm {

// The per-MatMult multipole exchange of the distributed FMM: each rank sends the
// partial multipoles of its LocallyEssentialTree's send lists and adds those of its receive lists
// to its own, one MPI_Neighbor_alltoallv on a graph communicator of the peers that exchange
// anything (built once). Rank r of `comm` must hold part r's tree; every rank constructs it
// (collective) and calls exchange together (collective).
class MultipoleExchange {
 public:
  // coefficients: per cell (p^2); slots: per cell id, where its multipole lies in the arrays
  // exchange is given (Fmm::expansion_slots; empty: at the cell id).
  MultipoleExchange(MPI_Comm comm, const LocallyEssentialTree& let, std::size_t coefficients,
                    std::span<const int> slots = {});
  ~MultipoleExchange();
  MultipoleExchange(const MultipoleExchange&) = delete;
  MultipoleExchange& operator=(const MultipoleExchange&) = delete;

  // multipoles: this rank's partials (at their slots); on return the received partials are added
  // (each receive list's cells, peers in ascending order).
  void exchange(std::span<cplx> multipoles);
  // exchange in two halves, for overlap with other work: begin packs and starts a nonblocking
  // MPI_Ineighbor_alltoallv, end waits and adds (same multipole array, untouched between).
  void begin(std::span<const cplx> multipoles);
  void end(std::span<cplx> multipoles);
  // The same on buffers the caller packs and unpacks (the GPU FMM, whose multipoles stay on the
  // device): send holds the partials of LocallyEssentialTree::packed_send_cells (p^2 each, in
  // that order), receive gets those of packed_receive_cells; both untouched until end_packed.
  void begin_packed(std::span<const cplx> send, std::span<cplx> receive);
  void end_packed();

  // Per exchange, this rank's.
  std::size_t sent_bytes() const { return send_cells_.size() * coefficients_ * sizeof(cplx); }
  std::size_t received_bytes() const {
    return receive_cells_.size() * coefficients_ * sizeof(cplx);
  }
  int peers() const { return int(std::max(sources_.size(), destinations_.size())); }

 private:
  MPI_Comm graph_ = MPI_COMM_NULL;
  MPI_Request request_ = MPI_REQUEST_NULL;
  std::size_t coefficients_;
  std::vector<int> sources_, destinations_;  // ranks, ascending
  std::vector<int> send_counts_, send_displs_, receive_counts_, receive_displs_;
  std::vector<int> send_cells_, receive_cells_;     // slots, by peer, concatenated
  std::vector<cplx> send_buffer_, receive_buffer_;  // begin's and end's (not the packed form's)
};

// Makes fmm part let.part with its multipoles exchanged over comm (Fmm::distribute_upward_pass
// with a MultipoleExchange of let, at the FMM's slots; on the GPU its packed form, so that only
// the exchanged cells cross to the host); rank r of comm must pass part r. Collective. The
// exchange lives as long as the FMM holds it.
// overlap: the exchange runs while the near field is summed (MultipoleExchange::begin and end).
void distribute(Fmm& fmm, const LocallyEssentialTree& let, MPI_Comm comm, bool overlap = false);

}  // namespace fmbem::fmm
