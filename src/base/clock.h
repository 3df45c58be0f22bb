// One clock for the ranks of a communicator, for timings that compare ranks' times (the last
// rank's start against the last rank's end, as the adaptive executor's profiling and the
// benchmarks time an exchange).
//
// MPI_Wtime is not such a clock: MPI_WTIME_IS_GLOBAL is false in Open MPI 4.1 and MPICH, and
// Open MPI counts MPI_Wtime from each process's own start, so that two processes on one node read
// clocks that differ by the time between their starts (45 us to 0.25 ms with 4 and 8 processes
// on this machine): as much as an exchange of the OASIS toy takes. GlobalClock adds to MPI_Wtime
// this rank's offset to rank 0's clock, estimated once (Cristian's method: rank 0 answers each
// rank's pings with its time; of several round trips the shortest gives the offset, to within
// half its length). Where MPI says its clock is global (MPI_WTIME_IS_GLOBAL, SimGrid's SMPI) the
// offset is 0 and nothing is exchanged.
#pragma once
#include <mpi.h>

namespace isthmus {

class GlobalClock {
 public:
  // The clock of comm, estimated at the first call for that communicator (collective then: every
  // rank of comm calls it, at the same point of its program) and kept with it as an MPI
  // attribute (freed with the communicator). Later calls cost nothing and are local.
  static const GlobalClock& of(MPI_Comm comm);

  double now() const { return MPI_Wtime() + offset_; }
  double offset() const { return offset_; }      // this rank's: rank 0's clock minus its own
  double uncertainty() const { return error_; }  // half the shortest round trip (0 at rank 0)

  // Estimates the offsets afresh (collective over comm); rounds: round trips per rank.
  explicit GlobalClock(MPI_Comm comm, int rounds = 8);

 private:
  double offset_ = 0, error_ = 0;
};

}  // namespace isthmus
