#include "base/sized_message.h"
#include "base/wait.h"

#include <algorithm>

namespace isthmus {

void SizedSend::start(const void* data, size_t bytes, int dest, int tag, MPI_Comm comm) {
  wait();
  const size_t inline_bytes = std::min(bytes, kSizedHead - sizeof(uint64_t));
  if (bytes - inline_bytes > static_cast<size_t>(INT32_MAX))  // the second part's int count
    fail(ISTHMUS_ERR_INTERNAL, "message to rank ", dest, " of ", bytes, " bytes is too large");
  head_.resize(sizeof(uint64_t) + inline_bytes);
  const uint64_t total = bytes;
  std::memcpy(head_.data(), &total, sizeof total);
  if (inline_bytes > 0) std::memcpy(head_.data() + sizeof total, data, inline_bytes);
  ISTHMUS_MPI(MPI_Isend(head_.data(), static_cast<int>(head_.size()), MPI_BYTE, dest, tag, comm,
                        &req_[0]));
  if (bytes > inline_bytes)
    ISTHMUS_MPI(MPI_Isend(static_cast<const char*>(data) + inline_bytes,
                          static_cast<int>(bytes - inline_bytes), MPI_BYTE, dest, tag, comm,
                          &req_[1]));
}

void SizedSend::wait() {
  if (req_[0] == MPI_REQUEST_NULL && req_[1] == MPI_REQUEST_NULL) return;
  ISTHMUS_MPI(wmpi::Waitall(2, req_, MPI_STATUSES_IGNORE));
}

void send_sized(const void* data, size_t bytes, int dest, int tag, MPI_Comm comm) {
  SizedSend s;
  s.start(data, bytes, dest, tag, comm);
  s.wait();
}

void recv_sized_bytes(std::vector<char>& head, int src, int tag, MPI_Comm comm, size_t* total) {
  std::vector<char> buf(kSizedHead);
  MPI_Status st;
  ISTHMUS_MPI(wmpi::Recv(buf.data(), static_cast<int>(kSizedHead), MPI_BYTE, src, tag, comm, &st));
  int got = 0;
  ISTHMUS_MPI(MPI_Get_count(&st, MPI_BYTE, &got));
  uint64_t n = 0;
  if (got < static_cast<int>(sizeof n))
    fail(ISTHMUS_ERR_INTERNAL, "message from rank ", src, " (tag ", tag, ") has ", got,
         " bytes, less than its length word");
  std::memcpy(&n, buf.data(), sizeof n);
  const size_t inline_bytes = static_cast<size_t>(got) - sizeof n;
  if (inline_bytes > n || (inline_bytes < n && inline_bytes != kSizedHead - sizeof n))
    fail(ISTHMUS_ERR_INTERNAL, "message from rank ", src, " (tag ", tag, ") says ", n,
         " bytes but its first part carries ", inline_bytes);
  head.assign(buf.begin() + sizeof n, buf.begin() + got);
  *total = static_cast<size_t>(n);
}

}  // namespace isthmus
