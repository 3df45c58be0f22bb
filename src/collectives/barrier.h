// A dissemination barrier: ceil(log2 n) rounds of empty messages, so that every rank leaves
// within a few message latencies of the others. Benchmarks use it to start a timed operation
// together: a linear barrier (SMPI's default, for one) releases the last rank about n
// per-message overheads after the first, and that skew is then measured as if it were cost.
#pragma once
#include <mpi.h>

namespace isthmus {

void dissemination_barrier(MPI_Comm comm, int tag = 7400);  // tags 7411.. are the others'

}  // namespace isthmus
