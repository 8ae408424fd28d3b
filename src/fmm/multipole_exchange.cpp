#include "fmbem/fmm/multipole_exchange.hpp"

#include <algorithm>
#include <climits>
#include <memory>
#include <string>

#include "fmbem/core/error.hpp"

namespace fmbem::fmm {

namespace {

void check(int code, const char* what) {
  if (code != MPI_SUCCESS) throw Error(std::string("multipole exchange: ") + what + " failed");
}

// Each peer with cells, and its count and displacement in coefficients in the packed buffer
// (LocallyEssentialTree::packed_send_cells, packed_receive_cells: the lists in peer order).
void flatten(const std::vector<std::vector<int>>& lists, std::size_t coefficients,
             std::vector<int>& peers, std::vector<int>& counts, std::vector<int>& displs) {
  std::size_t begin = 0;
  for (int q = 0; q < int(lists.size()); ++q) {
    if (lists[q].empty()) continue;
    const std::size_t count = lists[q].size() * coefficients;
    if (begin + count > std::size_t(INT_MAX))
      throw Error("multipole exchange: more than 2^31 coefficients to one rank");
    peers.push_back(q);
    displs.push_back(int(begin));
    counts.push_back(int(count));
    begin += count;
  }
}

}  // namespace

MultipoleExchange::MultipoleExchange(MPI_Comm comm, const LocallyEssentialTree& let,
                                     std::size_t coefficients, std::span<const int> slots)
    : coefficients_(coefficients) {
  int rank = 0, size = 0;
  check(MPI_Comm_rank(comm, &rank), "MPI_Comm_rank");
  check(MPI_Comm_size(comm, &size), "MPI_Comm_size");
  if (let.part != rank || int(let.receive_multipoles.size()) != size ||
      int(let.send_multipoles.size()) != size)
    throw Error("multipole exchange: rank " + std::to_string(rank) + " of " + std::to_string(size) +
                " was given part " + std::to_string(let.part) + " of " +
                std::to_string(let.receive_multipoles.size()));
  flatten(let.receive_multipoles, coefficients, sources_, receive_counts_, receive_displs_);
  flatten(let.send_multipoles, coefficients, destinations_, send_counts_, send_displs_);
  receive_cells_ = let.packed_receive_cells();
  send_cells_ = let.packed_send_cells();
  if (!slots.empty())
    for (std::vector<int>* cells : {&send_cells_, &receive_cells_})
      for (int& cell : *cells) {
        if (cell < 0 || std::size_t(cell) >= slots.size() || slots[cell] < 0)
          throw Error("multipole exchange: cell " + std::to_string(cell) + " has no slot");
        cell = slots[cell];
      }
  check(MPI_Dist_graph_create_adjacent(comm, int(sources_.size()), sources_.data(), MPI_UNWEIGHTED,
                                       int(destinations_.size()), destinations_.data(),
                                       MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &graph_),
        "MPI_Dist_graph_create_adjacent");
}

MultipoleExchange::~MultipoleExchange() {
  if (request_ != MPI_REQUEST_NULL) MPI_Wait(&request_, MPI_STATUS_IGNORE);  // begun, not ended
  if (graph_ != MPI_COMM_NULL) MPI_Comm_free(&graph_);
}

void MultipoleExchange::exchange(std::span<cplx> multipoles) {
  begin(multipoles);
  end(multipoles);
}

void MultipoleExchange::begin(std::span<const cplx> multipoles) {
  if (request_ != MPI_REQUEST_NULL) throw Error("multipole exchange: begun twice");
  const std::size_t c = coefficients_;
  // Allocated at the first use: the packed form (the GPU's) brings its own buffers.
  send_buffer_.resize(send_cells_.size() * c);
  receive_buffer_.resize(receive_cells_.size() * c);
  for (std::size_t i = 0; i < send_cells_.size(); ++i)
    std::copy_n(&multipoles[std::size_t(send_cells_[i]) * c], c, &send_buffer_[i * c]);
  begin_packed(send_buffer_, receive_buffer_);
}

void MultipoleExchange::begin_packed(std::span<const cplx> send, std::span<cplx> receive) {
  if (request_ != MPI_REQUEST_NULL) throw Error("multipole exchange: begun twice");
  if (send.size() != send_cells_.size() * coefficients_ ||
      receive.size() != receive_cells_.size() * coefficients_)
    throw Error("multipole exchange: packed buffers of the wrong size");
  check(MPI_Ineighbor_alltoallv(send.data(), send_counts_.data(), send_displs_.data(),
                                MPI_C_DOUBLE_COMPLEX, receive.data(), receive_counts_.data(),
                                receive_displs_.data(), MPI_C_DOUBLE_COMPLEX, graph_, &request_),
        "MPI_Ineighbor_alltoallv");
}

void MultipoleExchange::end_packed() {
  if (request_ == MPI_REQUEST_NULL) throw Error("multipole exchange: ended before begun");
  check(MPI_Wait(&request_, MPI_STATUS_IGNORE), "MPI_Wait");
}

void MultipoleExchange::end(std::span<cplx> multipoles) {
  end_packed();
  const std::size_t c = coefficients_;
  // Peers in ascending order, each list ascending: the same sum on every rank count's run.
  for (std::size_t i = 0; i < receive_cells_.size(); ++i) {
    cplx* m = &multipoles[std::size_t(receive_cells_[i]) * c];
    const cplx* r = &receive_buffer_[i * c];
    for (std::size_t j = 0; j < c; ++j) m[j] += r[j];
  }
}

void distribute(Fmm& fmm, const LocallyEssentialTree& let, MPI_Comm comm, bool overlap) {
  // The slots are known once the FMM is distributed; the exchange is set in the holder then.
  auto holder = std::make_shared<std::unique_ptr<MultipoleExchange>>();
  if (fmm.upward_pass_on_gpu())  // only the exchanged cells cross to the host
    fmm.distribute_upward_pass(
        let,
        Fmm::PackedMultipoleExchange{
            .begin = [holder](std::span<const cplx> send,
                              std::span<cplx> receive) { (*holder)->begin_packed(send, receive); },
            .end = [holder] { (*holder)->end_packed(); }},
        overlap);
  else if (overlap)
    fmm.distribute_upward_pass(
        let, [holder](std::span<cplx> multipoles) { (*holder)->begin(multipoles); },
        [holder](std::span<cplx> multipoles) { (*holder)->end(multipoles); });
  else
    fmm.distribute_upward_pass(
        let, [holder](std::span<cplx> multipoles) { (*holder)->exchange(multipoles); });
  // A wideband part's diagonal levels: the conversion level's partial multipoles summed over the
  // ranks (in pieces an int counts).
  if (fmm.diagonal_levels_on_part())
    fmm.set_parts_sum([comm](std::span<cplx> values) {
      constexpr std::size_t piece = std::size_t(1) << 28;
      for (std::size_t at = 0; at < values.size(); at += piece)
        MPI_Allreduce(MPI_IN_PLACE, values.data() + at, int(std::min(piece, values.size() - at)),
                      MPI_C_DOUBLE_COMPLEX, MPI_SUM, comm);
    });
  // The FMM's slots are of its tree's cells (a part's view numbers its cells anew).
  *holder = std::make_unique<MultipoleExchange>(comm, fmm.in_tree_cells(let),
                                                std::size_t(fmm.order()) * std::size_t(fmm.order()),
                                                fmm.expansion_slots());
}

}  // namespace fmbem::fmm
