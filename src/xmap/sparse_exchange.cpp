#include "xmap/sparse_exchange.h"

#include <algorithm>
#include <climits>

#include "base/error.h"

namespace isthmus {

std::vector<Message> sparse_exchange(MPI_Comm comm, int tag, const std::vector<Message>& out) {
  int me = 0;
  ISTHMUS_MPI(MPI_Comm_rank(comm, &me));
  std::vector<Message> in;
  std::vector<MPI_Request> sends;
  sends.reserve(out.size());
  for (const Message& m : out) {
    if (m.rank == me) {
      in.push_back({me, m.data});
      continue;
    }
    if (m.data.size() > static_cast<size_t>(INT_MAX))
      fail(ISTHMUS_ERR_INTERNAL, "directory message of ", m.data.size(), " values is too large");
    sends.emplace_back();
    ISTHMUS_MPI(MPI_Issend(m.data.data(), static_cast<int>(m.data.size()), MPI_INT64_T, m.rank,
                           tag, comm, &sends.back()));
  }
  MPI_Request barrier = MPI_REQUEST_NULL;
  bool barrier_started = false;
  for (;;) {
    int flag = 0;
    MPI_Status st;
    ISTHMUS_MPI(MPI_Iprobe(MPI_ANY_SOURCE, tag, comm, &flag, &st));
    if (flag) {
      int count = 0;
      ISTHMUS_MPI(MPI_Get_count(&st, MPI_INT64_T, &count));
      Message m{st.MPI_SOURCE, std::vector<int64_t>(count)};
      ISTHMUS_MPI(MPI_Recv(m.data.data(), count, MPI_INT64_T, st.MPI_SOURCE, tag, comm,
                           MPI_STATUS_IGNORE));
      in.push_back(std::move(m));
      continue;
    }
    if (!barrier_started) {
      int done = 0;
      ISTHMUS_MPI(MPI_Testall(static_cast<int>(sends.size()), sends.data(), &done,
                              MPI_STATUSES_IGNORE));
      if (done) {
        ISTHMUS_MPI(MPI_Ibarrier(comm, &barrier));
        barrier_started = true;
      }
    } else {
      int done = 0;
      ISTHMUS_MPI(MPI_Test(&barrier, &done, MPI_STATUS_IGNORE));
      if (done) break;
    }
  }
  std::sort(in.begin(), in.end(), [](const Message& a, const Message& b) { return a.rank < b.rank; });
  return in;
}

}  // namespace isthmus
