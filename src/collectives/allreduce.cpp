#include "collectives/allreduce.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "base/agreement.h"
#include "base/error.h"
#include "base/wait.h"

namespace isthmus {

const char* allreduce_algorithm_name(AllreduceAlgorithm a) {
  switch (a) {
    case AllreduceAlgorithm::Auto: return "auto";
    case AllreduceAlgorithm::RecursiveK: return "recursive-k";
    case AllreduceAlgorithm::RecursiveDoubling: return "recursive-doubling";
    case AllreduceAlgorithm::Native: return "native";
  }
  return "unknown";
}

AllreduceAlgorithm parse_allreduce_algorithm(const char* name) {
  std::string s = name ? name : "";
  for (int a = 0; a <= 3; ++a)
    if (s == allreduce_algorithm_name(static_cast<AllreduceAlgorithm>(a)))
      return static_cast<AllreduceAlgorithm>(a);
  fail(ISTHMUS_ERR_ARG, "unknown allreduce algorithm '", s,
       "' (auto, recursive-k, recursive-doubling, native)");
}

int auto_radix(int nranks) {
  // docs/results/collectives.md, "Why no radix wins at 0.5 us". A round of recursive-k costs
  // about (k-1) send overheads o plus one latency L, and there are log_k n rounds: k = 4 beats
  // k = 2 when o < L (mean latency of a round) and is 1.5x faster when o <= L/5. The library
  // cannot know o/L, so k = 4 is a constant chosen for its costs on either side (simulated on
  // fattree-m): with o = 0.5 us (o ~ L) k = 2 is best and k = 4 costs 1-4% per call (2-8% of
  // the algorithm's own time) at 1024-16384 ranks; with o = 0.05 us k = 4 is 1.2-1.3x faster
  // per call than k = 2 (1.6-1.7x the algorithm's time). Choosing by timing at run time would
  // make the summation order, hence the bits, depend on timing noise. Up to 4 ranks, one round.
  if (nranks <= 4) return std::max(2, nranks);
  return 4;
}

namespace {

template <typename T>
MPI_Datatype mpi_type();
template <>
MPI_Datatype mpi_type<double>() { return MPI_DOUBLE; }
template <>
MPI_Datatype mpi_type<int64_t>() { return MPI_INT64_T; }

MPI_Op mpi_op(ReduceOp op) {
  switch (op) {
    case ReduceOp::Sum: return MPI_SUM;
    case ReduceOp::Min: return MPI_MIN;
    case ReduceOp::Max: return MPI_MAX;
  }
  fail(ISTHMUS_ERR_ARG, "allreduce: unknown reduction operation ", int(op));
}

template <typename T>
void combine(T* acc, const T* x, int count, ReduceOp op) {
  switch (op) {
    case ReduceOp::Sum: for (int i = 0; i < count; ++i) acc[i] += x[i]; break;
    case ReduceOp::Min: for (int i = 0; i < count; ++i) acc[i] = std::min(acc[i], x[i]); break;
    case ReduceOp::Max: for (int i = 0; i < count; ++i) acc[i] = std::max(acc[i], x[i]); break;
  }
}

struct Tally {
  trace::Counters* c;
  void msg(bool out, int64_t bytes) {
    if (!c) return;
    if (out) ++c->messages_sent, c->bytes_sent += bytes;
    else ++c->messages_received, c->bytes_received += bytes;
  }
};

// recursive-k on n ranks: m = k^p <= n < k^(p+1). Rank i >= m folds into rank (i-m) mod m
// (so up to k-1 ranks fold into one when n is far above m); then p rounds: in round j the
// group of rank i holds the k ranks that differ from i only in base-k digit j-1; finally the
// folded ranks receive the result.
template <typename T>
void recursive_k(const T* send, T* recv, int count, ReduceOp op, MPI_Comm comm, int k, int tag,
                 Tally tally) {
  int rank = 0, n = 1;
  ISTHMUS_MPI(MPI_Comm_rank(comm, &rank));
  ISTHMUS_MPI(MPI_Comm_size(comm, &n));
  MPI_Datatype type = mpi_type<T>();
  int64_t bytes = int64_t(count) * sizeof(T);
  if (recv != send) std::copy(send, send + count, recv);
  if (n == 1 || count == 0) return;
  int64_t m = 1;
  int p = 0;
  while (m * k <= n) m *= k, ++p;
  if (rank >= m) {
    int home = int((rank - m) % m);
    ISTHMUS_MPI(wmpi::Send(recv, count, type, home, tag, comm));
    tally.msg(true, bytes);
    ISTHMUS_MPI(wmpi::Recv(recv, count, type, home, tag + 1, comm, MPI_STATUS_IGNORE));
    tally.msg(false, bytes);
    return;
  }
  std::vector<int> folded;
  for (int64_t f = rank + m; f < n; f += m) folded.push_back(int(f));
  // Buffers for k values; slot d holds group member d's vector, so every member reduces in the
  // same order and obtains the same bits.
  std::vector<T> slots(size_t(std::max<int64_t>(k, int64_t(folded.size()) + 1)) * count);
  if (!folded.empty()) {
    std::vector<MPI_Request> req(folded.size());
    for (size_t f = 0; f < folded.size(); ++f)
      ISTHMUS_MPI(MPI_Irecv(slots.data() + (f + 1) * count, count, type, folded[f], tag, comm, &req[f]));
    ISTHMUS_MPI(wmpi::Waitall(int(req.size()), req.data(), MPI_STATUSES_IGNORE));
    for (size_t f = 0; f < folded.size(); ++f) {
      combine(recv, slots.data() + (f + 1) * count, count, op);
      tally.msg(false, bytes);
    }
  }
  std::vector<MPI_Request> req(2 * size_t(k));
  int64_t stride = 1;
  for (int j = 0; j < p; ++j, stride *= k) {
    int digit = int((rank / stride) % k);
    int64_t base = rank - digit * stride;
    if (k == 2) {  // one partner: a send-receive, as recursive doubling is usually written
      int peer = int(base + (1 - digit) * stride);
      T* other = slots.data() + size_t(1 - digit) * count;
      ISTHMUS_MPI(wmpi::Sendrecv(recv, count, type, peer, tag + 2 + j, other, count, type, peer,
                               tag + 2 + j, comm, MPI_STATUS_IGNORE));
      tally.msg(true, bytes);
      tally.msg(false, bytes);
      std::copy(recv, recv + count, slots.data() + size_t(digit) * count);
      std::copy(slots.data(), slots.data() + count, recv);
      combine(recv, slots.data() + count, count, op);
      continue;
    }
    size_t nreq = 0;
    for (int d = 0; d < k; ++d) {
      if (d == digit) continue;
      int peer = int(base + d * stride);
      ISTHMUS_MPI(MPI_Irecv(slots.data() + size_t(d) * count, count, type, peer, tag + 2 + j, comm, &req[nreq++]));
    }
    for (int d = 0; d < k; ++d) {
      if (d == digit) continue;
      int peer = int(base + d * stride);
      ISTHMUS_MPI(MPI_Isend(recv, count, type, peer, tag + 2 + j, comm, &req[nreq++]));
      tally.msg(true, bytes);
      tally.msg(false, bytes);
    }
    ISTHMUS_MPI(wmpi::Waitall(int(nreq), req.data(), MPI_STATUSES_IGNORE));
    std::copy(recv, recv + count, slots.data() + size_t(digit) * count);
    std::copy(slots.data(), slots.data() + count, recv);
    for (int d = 1; d < k; ++d) combine(recv, slots.data() + size_t(d) * count, count, op);
  }
  // The folded ranks' results leave together: one blocking send after another would wait for
  // each delivery in turn (up to k-1 latencies in a row when n is far above m).
  if (!folded.empty()) {
    std::vector<MPI_Request> out(folded.size());
    for (size_t f = 0; f < folded.size(); ++f) {
      ISTHMUS_MPI(MPI_Isend(recv, count, type, folded[f], tag + 1, comm, &out[f]));
      tally.msg(true, bytes);
    }
    ISTHMUS_MPI(wmpi::Waitall(int(out.size()), out.data(), MPI_STATUSES_IGNORE));
  }
}

template <typename T>
void allreduce_any(const T* send, T* recv, int count, ReduceOp op, MPI_Comm comm,
                   const AllreduceOptions& o, Agreement* pending) {
  Agreement own;
  Agreement& a = pending ? *pending : own;
  a.check([&] {
    if (count < 0) fail(ISTHMUS_ERR_ARG, "allreduce: count ", count, " < 0");
    if (count > 0 && !send) fail(ISTHMUS_ERR_ARG, "allreduce: sendbuf is NULL with count ", count);
    if (count > 0 && !recv) fail(ISTHMUS_ERR_ARG, "allreduce: recvbuf is NULL with count ", count);
    if (count > 0 && send != recv) {
      const uintptr_t s = uintptr_t(send), r = uintptr_t(recv), bytes = uintptr_t(count) * sizeof(T);
      if (s < r + bytes && r < s + bytes)
        fail(ISTHMUS_ERR_ARG, "allreduce: sendbuf and recvbuf overlap without being equal (",
             count, " values; pass the same pointer to reduce in place)");
    }
    if (int(op) < 0 || int(op) > 2)
      fail(ISTHMUS_ERR_ARG, "allreduce: op ", int(op), " is not one of 0..2 (sum, min, max)");
    if (int(o.algorithm) < 0 || int(o.algorithm) > 3)
      fail(ISTHMUS_ERR_ARG, "allreduce: algorithm ", int(o.algorithm),
           " is not one of 0..3 (auto, recursive-k, recursive-doubling, native)");
    if (o.k < 0 || o.k == 1) fail(ISTHMUS_ERR_ARG, "allreduce: radix k = ", o.k, " (need k >= 2, or 0 for auto)");
    if (o.tag < 0) fail(ISTHMUS_ERR_ARG, "allreduce: tag = ", o.tag, " < 0");
  });
  const bool uses_k = o.algorithm == AllreduceAlgorithm::Auto || o.algorithm == AllreduceAlgorithm::RecursiveK;
  a.match("allreduce: count", count);
  a.match("allreduce: op", int(op));
  a.match("allreduce: algorithm", int(o.algorithm));
  a.match("allreduce: k", uses_k ? std::optional<int64_t>(o.k) : std::nullopt);
  a.match("allreduce: tag", o.tag);
  a.match("allreduce: value type (0 double, 1 int64)", std::is_same<T, double>::value ? 0 : 1);
  a.conclude(comm);
  MPI_Op mop = mpi_op(op);
  int n = 1;
  ISTHMUS_MPI(MPI_Comm_size(comm, &n));
  if (o.counters) ++o.counters->exchanges;
  switch (o.algorithm) {
    case AllreduceAlgorithm::Native:
      ISTHMUS_MPI(wmpi::Allreduce(send == recv ? MPI_IN_PLACE : send, recv, count, mpi_type<T>(), mop, comm));
      return;
    case AllreduceAlgorithm::RecursiveDoubling:
      return recursive_k(send, recv, count, op, comm, 2, o.tag, Tally{o.counters});
    case AllreduceAlgorithm::RecursiveK:
    case AllreduceAlgorithm::Auto:
      return recursive_k(send, recv, count, op, comm, o.k ? o.k : auto_radix(n), o.tag, Tally{o.counters});
  }
  fail(ISTHMUS_ERR_ARG, "allreduce: unknown algorithm ", int(o.algorithm));
}

}  // namespace

void allreduce(const double* s, double* r, int count, ReduceOp op, MPI_Comm comm,
               const AllreduceOptions& o, Agreement* pending) {
  allreduce_any(s, r, count, op, comm, o, pending);
}
void allreduce(const int64_t* s, int64_t* r, int count, ReduceOp op, MPI_Comm comm,
               const AllreduceOptions& o, Agreement* pending) {
  allreduce_any(s, r, count, op, comm, o, pending);
}

}  // namespace isthmus
