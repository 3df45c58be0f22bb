#include "base/clock.h"

#include <limits>

#include "base/comm.h"
#include "base/error.h"
#include "base/wait.h"

namespace isthmus {

namespace {

constexpr int kTagPing = 31'001;  // on the communicator being timed, inside a collective call

bool wtime_is_global() {
#ifdef ISTHMUS_SMPI
  return true;  // one simulated clock
#else
  int* flag = nullptr;
  int found = 0;
  MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_WTIME_IS_GLOBAL, &flag, &found);
  return found && flag && *flag;
#endif
}

}  // namespace

GlobalClock::GlobalClock(MPI_Comm comm, int rounds) {
  if (wtime_is_global()) return;
  int me = 0, size = 1;
  ISTHMUS_MPI(MPI_Comm_rank(comm, &me));
  ISTHMUS_MPI(MPI_Comm_size(comm, &size));
  if (size == 1) return;
  if (me == 0) {
    // every other rank in turn: its pings, each answered with this clock's time
    for (int r = 1; r < size; ++r)
      for (int i = 0; i < rounds; ++i) {
        ISTHMUS_MPI(wmpi::Recv(nullptr, 0, MPI_BYTE, r, kTagPing, comm, MPI_STATUS_IGNORE));
        const double t = MPI_Wtime();
        ISTHMUS_MPI(wmpi::Send(&t, 1, MPI_DOUBLE, r, kTagPing, comm));
      }
    return;
  }
  double shortest = std::numeric_limits<double>::infinity();
  for (int i = 0; i < rounds; ++i) {
    const double t1 = MPI_Wtime();
    ISTHMUS_MPI(wmpi::Send(nullptr, 0, MPI_BYTE, 0, kTagPing, comm));
    double t0 = 0;
    ISTHMUS_MPI(wmpi::Recv(&t0, 1, MPI_DOUBLE, 0, kTagPing, comm, MPI_STATUS_IGNORE));
    const double t2 = MPI_Wtime();
    if (t2 - t1 < shortest) {
      shortest = t2 - t1;
      offset_ = t0 - 0.5 * (t1 + t2);
    }
  }
  error_ = 0.5 * shortest;
}

const GlobalClock& GlobalClock::of(MPI_Comm comm) {
  return attached<GlobalClock>(comm, [&] { return GlobalClock(comm); });
}

}  // namespace isthmus
