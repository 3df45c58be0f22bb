#include "xmap/sparse_exchange.h"

#include <algorithm>

#include "base/error.h"
#include "base/sized_message.h"

namespace isthmus {

namespace {

// Messages in transit are packed back to back: [destination, source, length, data...].
struct Transit {
  std::vector<int64_t> packed;
  void add(int64_t dest, int64_t src, const int64_t* data, size_t n) {
    packed.push_back(dest);
    packed.push_back(src);
    packed.push_back(static_cast<int64_t>(n));
    packed.insert(packed.end(), data, data + n);
  }
  template <typename F>
  void for_each(F&& f) const {
    for (size_t k = 0; k < packed.size();) {
      int64_t n = packed[k + 2];
      f(packed[k], packed[k + 1], packed.data() + k + 3, static_cast<size_t>(n));
      k += 3 + static_cast<size_t>(n);
    }
  }
};

std::vector<int64_t> recv_packed(MPI_Comm comm, int tag, int src) {
  return recv_sized<int64_t>(src, tag, comm);
}

void send_packed(MPI_Comm comm, int tag, int dest, const std::vector<int64_t>& data) {
  send_sized(data.data(), data.size() * sizeof(int64_t), dest, tag, comm);
}

// Swaps two packed buffers with a partner: one message each way (two when longer than
// base/sized_message.h's first part).
std::vector<int64_t> swap_with(MPI_Comm comm, int tag, int partner, const std::vector<int64_t>& send) {
  SizedSend out;
  out.start(send.data(), send.size() * sizeof(int64_t), partner, tag, comm);
  std::vector<int64_t> recv = recv_packed(comm, tag, partner);
  out.wait();
  return recv;
}

}  // namespace

std::vector<Message> sparse_exchange(MPI_Comm comm, int tag, const std::vector<Message>& out,
                                     int64_t* sums, int n) {
  int me = 0, size = 1;
  ISTHMUS_MPI(MPI_Comm_rank(comm, &me));
  ISTHMUS_MPI(MPI_Comm_size(comm, &size));
  int m = 1;  // the largest power of two not above size
  while (2 * m <= size) m *= 2;
  if (!sums) n = 0;
  const size_t ns = static_cast<size_t>(n);
  // Every buffer on the wire starts with the sender's n running sums.
  auto with_sums = [&](std::vector<int64_t>& packed) -> const std::vector<int64_t>& {
    packed.insert(packed.begin(), sums, sums + ns);
    return packed;
  };
  auto take_sums = [&](std::vector<int64_t>& v, bool add) {
    if (v.size() < ns)
      fail(ISTHMUS_ERR_INTERNAL, "a sparse exchange's message has ", v.size(), " values, fewer than its ",
           ns, " sums");
    for (size_t k = 0; k < ns; ++k)  // wrapping, so that the order of additions cannot matter
      sums[k] = add ? static_cast<int64_t>(static_cast<uint64_t>(sums[k]) + static_cast<uint64_t>(v[k])) : v[k];
    v.erase(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(ns));
    return std::move(v);
  };

  Transit mine;
  for (const Message& msg : out) mine.add(msg.rank, me, msg.data.data(), msg.data.size());

  std::vector<Message> in;
  if (me >= m) {
    // Beyond the hypercube: the proxy me - m routes for this rank in both directions (and
    // returns the sums of all).
    send_packed(comm, tag, me - m, with_sums(mine.packed));
    std::vector<int64_t> back = recv_packed(comm, tag, me - m);
    Transit got{take_sums(back, false)};
    got.for_each([&](int64_t, int64_t src, const int64_t* d, size_t n) {
      in.push_back({static_cast<int>(src), std::vector<int64_t>(d, d + n)});
    });
  } else {
    Transit transit = std::move(mine);
    if (me + m < size) {
      std::vector<int64_t> from_extra = recv_packed(comm, tag, me + m);
      Transit extra{take_sums(from_extra, true)};
      transit.packed.insert(transit.packed.end(), extra.packed.begin(), extra.packed.end());
    }
    // A message is routed to the hypercube node of its destination (the proxy for ranks >= m).
    auto node = [m](int64_t dest) { return static_cast<int>(dest >= m ? dest - m : dest); };
    for (int bit = 1; bit < m; bit *= 2) {
      int partner = me ^ bit;
      Transit keep, move;
      transit.for_each([&](int64_t dest, int64_t src, const int64_t* d, size_t n) {
        ((node(dest) & bit) == (me & bit) ? keep : move).add(dest, src, d, n);
      });
      std::vector<int64_t> got = swap_with(comm, tag, partner, with_sums(move.packed));
      got = take_sums(got, true);
      keep.packed.insert(keep.packed.end(), got.begin(), got.end());
      transit = std::move(keep);
    }
    Transit for_extra;
    transit.for_each([&](int64_t dest, int64_t src, const int64_t* d, size_t n) {
      if (dest == me)
        in.push_back({static_cast<int>(src), std::vector<int64_t>(d, d + n)});
      else
        for_extra.add(dest, src, d, n);  // dest == me + m
    });
    if (me + m < size) send_packed(comm, tag, me + m, with_sums(for_extra.packed));
  }
  std::sort(in.begin(), in.end(), [](const Message& a, const Message& b) { return a.rank < b.rank; });
  return in;
}

}  // namespace isthmus
