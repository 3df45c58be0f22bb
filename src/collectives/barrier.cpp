#include "collectives/barrier.h"

#include "base/error.h"
#include "base/wait.h"

namespace isthmus {

void dissemination_barrier(MPI_Comm comm, int tag) {
  int rank = 0, n = 1;
  ISTHMUS_MPI(MPI_Comm_rank(comm, &rank));
  ISTHMUS_MPI(MPI_Comm_size(comm, &n));
  for (int d = 1; d < n; d <<= 1) {
    char s = 0, r = 0;
    ISTHMUS_MPI(wmpi::Sendrecv(&s, 0, MPI_BYTE, (rank + d) % n, tag, &r, 0, MPI_BYTE, (rank - d + n) % n,
                             tag, comm, MPI_STATUS_IGNORE));
  }
}

}  // namespace isthmus
