// base/clock.h: the ranks' times on one clock. MPI_Wtime counts from each process's own start
// under Open MPI, so a message sent at MPI_Wtime() = t can arrive at a rank whose MPI_Wtime() is
// below t; on GlobalClock a message never arrives before it left (to within the estimate's
// uncertainty).
#include <gtest/gtest.h>
#include <mpi.h>

#include <vector>

#include "base/clock.h"
#include "mpi_test_util.h"

using isthmus::GlobalClock;

namespace {

// Every rank sends rank 0 its time and rank 0 sends every rank its time, several times: each
// receiver reads its clock on arrival, which must not be earlier than the sender's reading.
TEST(GlobalClock, NoMessageArrivesBeforeItLeft) {
  MPI_Comm comm;
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  const GlobalClock& clock = GlobalClock::of(comm);
  const int me = world_rank(), size = world_size();
  if (me == 0) {
    EXPECT_EQ(clock.offset(), 0.0);
  }
  // the uncertainties of all ranks, for the tolerance of each pair
  std::vector<double> err(size);
  const double mine = clock.uncertainty();
  MPI_Allgather(&mine, 1, MPI_DOUBLE, err.data(), 1, MPI_DOUBLE, comm);
  int late = 0;
  for (int round = 0; round < 5; ++round)
    for (int r = 1; r < size; ++r) {
      const double slack = err[r] + 1e-6;
      if (me == 0) {
        const double sent = clock.now();
        MPI_Send(&sent, 1, MPI_DOUBLE, r, 7, comm);
        double theirs = 0;
        MPI_Recv(&theirs, 1, MPI_DOUBLE, r, 8, comm, MPI_STATUS_IGNORE);
        if (clock.now() < theirs - slack) ++late;
      } else if (me == r) {
        double theirs = 0;
        MPI_Recv(&theirs, 1, MPI_DOUBLE, 0, 7, comm, MPI_STATUS_IGNORE);
        if (clock.now() < theirs - slack) ++late;
        const double sent = clock.now();
        MPI_Send(&sent, 1, MPI_DOUBLE, 0, 8, comm);
      }
    }
  EXPECT_EQ(late, 0) << "messages arrived before they left on rank " << me << "'s clock";
  // a second call finds the clock kept with the communicator
  EXPECT_EQ(&GlobalClock::of(comm), &clock);
  MPI_Comm_free(&comm);
}

}  // namespace
