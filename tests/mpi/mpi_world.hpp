#pragma once
// The MPI tests' rank and rank count in MPI_COMM_WORLD, and whether every rank found a thing.
#include <mpi.h>

namespace fmbem::test {

inline int world_rank() {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return rank;
}

inline int world_size() {
  int size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  return size;
}

// Whether every rank found `equal`.
inline bool on_every_rank(bool equal) {
  int all = equal ? 1 : 0;
  MPI_Allreduce(MPI_IN_PLACE, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  return all == 1;
}

}  // namespace fmbem::test
