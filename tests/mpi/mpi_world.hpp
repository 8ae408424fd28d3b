#pragma once
// The MPI tests' rank and rank count in MPI_COMM_WORLD.
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

}  // namespace fmbem::test
