// Helpers for MPI tests: rank/size of MPI_COMM_WORLD and an assertion that a condition holds
// on every rank (a per-rank EXPECT alone would let ranks disagree on what to do next).
#pragma once
#include <mpi.h>

inline int world_rank() { int r; MPI_Comm_rank(MPI_COMM_WORLD, &r); return r; }
inline int world_size() { int s; MPI_Comm_size(MPI_COMM_WORLD, &s); return s; }
inline bool all_ranks(bool ok, MPI_Comm comm = MPI_COMM_WORLD) {
  int l = ok ? 1 : 0, g = 0;
  MPI_Allreduce(&l, &g, 1, MPI_INT, MPI_MIN, comm);
  return g == 1;
}
