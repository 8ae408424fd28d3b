#pragma once
// Work on the ranks of a communicator that fails as one: a failure on one rank (bad input, out of
// memory) is thrown on every rank with one message, so that none is left waiting in a
// collective call for a rank that has given up.
#include <mpi.h>

#include <algorithm>
#include <cstddef>
#include <new>
#include <string>

#include "fmbem/core/error.hpp"

namespace fmbem {

// MPI_Bcast of `bytes` bytes in chunks (MPI counts are int), and of a string.
inline void broadcast_bytes(MPI_Comm comm, void *data, std::size_t bytes, int root = 0) {
  constexpr std::size_t kChunk = std::size_t{1} << 30;  // MPI counts are int
  auto *p = static_cast<char *>(data);
  for (std::size_t done = 0; done < bytes; done += kChunk)
    MPI_Bcast(p + done, int(std::min(kChunk, bytes - done)), MPI_BYTE, root, comm);
}

inline void broadcast_string(MPI_Comm comm, std::string &text, int root = 0) {
  unsigned long long size = text.size();
  MPI_Bcast(&size, 1, MPI_UNSIGNED_LONG_LONG, root, comm);
  text.resize(size);
  broadcast_bytes(comm, text.data(), size, root);
}

// `work`'s failure as a message (empty: none), for the collective helpers below.
template <class Work>
std::string failure_of(Work &&work) {
  try {
    work();
  } catch (const Error &e) {
    return *e.what() ? e.what() : "unknown error";
  } catch (const std::bad_alloc &) {
    return "out of memory";
  }
  return {};
}

// Runs `work` on rank 0 only and makes its failure everyone's: an error
// there is thrown on every rank, so that no rank waits in a collective call
// for one that has given up.
template <class Work>
void on_rank_zero(MPI_Comm comm, Work &&work) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  std::string failure;
  if (rank == 0) failure = failure_of(work);
  broadcast_string(comm, failure);
  if (!failure.empty()) throw Error(failure);
}

// Runs `work` on every rank; when it fails on any, the failure of the lowest such rank is thrown
// on all of them (one message, and no rank left waiting in a collective call).
template <class Work>
void on_every_rank(MPI_Comm comm, Work &&work) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  std::string failure = failure_of(work);
  int first_failed = failure.empty() ? size : rank;
  MPI_Allreduce(MPI_IN_PLACE, &first_failed, 1, MPI_INT, MPI_MIN, comm);
  if (first_failed == size) return;
  broadcast_string(comm, failure, first_failed);
  throw Error(failure);
}

}  // namespace fmbem
