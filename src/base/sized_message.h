// Point-to-point messages whose size the receiver does not know, without MPI_Probe.
//
// The receiver posts one receive of a fixed capacity (kSizedHead bytes): the message's first
// part, which starts with the total byte count and carries up to the rest of that capacity of
// the data. A longer message sends the remainder as a second message with the same tag, which
// MPI's non-overtaking rule delivers after the first; the receiver receives it straight into its
// destination buffer.
//
// Why not MPI_Probe + MPI_Recv: a blocking probe costs the same latency as a receive on a real
// MPI, but SimGrid's SMPI implements it as a loop of MPI_Iprobe calls, each a simulated delay and
// a simulator event; the distributed directory's hypercube (log2 P probes per rank and set-up)
// spent most of a simulated coupler set-up in that loop. One posted receive is one blocking wait
// in either world.
#pragma once
#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "base/error.h"
#include "base/wait.h"

namespace isthmus {

// Capacity of a message's first part, its 8-byte length included.
inline constexpr size_t kSizedHead = 16384;

// A send in flight: start, then wait (the data must stay valid until wait returns).
class SizedSend {
 public:
  SizedSend() = default;
  SizedSend(const SizedSend&) = delete;
  SizedSend& operator=(const SizedSend&) = delete;
  ~SizedSend() { wait(); }

  void start(const void* data, size_t bytes, int dest, int tag, MPI_Comm comm);
  void wait();

 private:
  std::vector<char> head_;
  MPI_Request req_[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
};

// Blocking send of `bytes` bytes (the SizedSend above, started and waited for).
void send_sized(const void* data, size_t bytes, int dest, int tag, MPI_Comm comm);

// Receives the first part of the message `src` sent with send_sized/SizedSend and this tag:
// `head` gets the data bytes it carried, `*total` the message's length; the remaining
// total - head.size() bytes follow as one more message from src with the same tag.
void recv_sized_bytes(std::vector<char>& head, int src, int tag, MPI_Comm comm, size_t* total);

// Receives such a message into a vector of trivially copyable T (the message's byte count must
// be a multiple of sizeof(T)).
template <typename T>
std::vector<T> recv_sized(int src, int tag, MPI_Comm comm) {
  std::vector<char> head;
  size_t total = 0;
  recv_sized_bytes(head, src, tag, comm, &total);
  if (total % sizeof(T) != 0)
    fail(ISTHMUS_ERR_INTERNAL, "message from rank ", src, " (tag ", tag, ") has ", total,
         " bytes, not a multiple of ", sizeof(T));
  std::vector<T> out(total / sizeof(T));
  const size_t first = head.size();  // the data bytes that came with the first part
  if (first > 0) std::memcpy(static_cast<void*>(out.data()), head.data(), first);
  if (total > first) {
    const size_t rest = total - first;
    if (rest > static_cast<size_t>(INT32_MAX))
      fail(ISTHMUS_ERR_INTERNAL, "message from rank ", src, " of ", total, " bytes is too large");
    ISTHMUS_MPI(wmpi::Recv(reinterpret_cast<char*>(out.data()) + first, static_cast<int>(rest),
                         MPI_BYTE, src, tag, comm, MPI_STATUS_IGNORE));
  }
  return out;
}

}  // namespace isthmus
