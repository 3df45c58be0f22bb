// The directory's sparse exchange: whatever the pattern (none, self, all, random, to ranks
// beyond the largest power of two), every message arrives once, intact, sorted by source.
#include <gtest/gtest.h>

#include <climits>
#include <cstdint>
#include <random>

#include "base/sized_message.h"
#include "mpi_test_util.h"
#include "xmap/sparse_exchange.h"

using isthmus::Message;

namespace {

// Lengths 0..4; patterns 8 and up also send messages longer than one first part of
// base/sized_message.h (so that a hypercube step's bundle crosses it in both directions).
std::vector<int64_t> payload(int src, int dst, int seed) {
  size_t n = static_cast<size_t>((src * 7 + dst * 3 + seed) % 5);
  if (seed >= 8) n += (src + dst) % 2 ? 3000 : isthmus::kSizedHead / 8 - 4;
  std::vector<int64_t> v(n);
  for (size_t i = 0; i < v.size(); ++i) v[i] = src * 1000000 + dst * 1000 + static_cast<int64_t>(i);
  return v;
}

// Whether src sends to dst in pattern `seed` (the same on every rank).
bool sends(int src, int dst, int seed) {
  if (seed == 0) return false;
  if (seed == 1) return true;
  if (seed == 2) return src == dst;
  if (seed == 8) return true;
  std::mt19937 rng(static_cast<unsigned>(seed * 7919 + src * 31 + dst));
  return rng() % 3 == 0;
}

// This rank's messages of pattern `seed`.
std::vector<Message> outgoing(int seed) {
  const int me = world_rank(), size = world_size();
  std::vector<Message> out;
  for (int d = 0; d < size; ++d)
    if (sends(me, d, seed)) out.push_back({d, payload(me, d, seed)});
  return out;
}

// Whether `in` is exactly what this rank receives in pattern `seed`, sorted by source.
void expect_incoming(const std::vector<Message>& in, int seed) {
  const int me = world_rank(), size = world_size();
  std::vector<Message> want;
  for (int s = 0; s < size; ++s)
    if (sends(s, me, seed)) want.push_back({s, payload(s, me, seed)});
  ASSERT_EQ(in.size(), want.size());
  for (size_t i = 0; i < in.size(); ++i) {
    EXPECT_EQ(in[i].rank, want[i].rank);
    EXPECT_EQ(in[i].data, want[i].data);
  }
}

}  // namespace

TEST(SparseExchange, EveryMessageArrivesOnceSortedBySource) {
  for (int seed = 0; seed < 11; ++seed) {
    SCOPED_TRACE("pattern " + std::to_string(seed));
    expect_incoming(isthmus::sparse_exchange(MPI_COMM_WORLD, 5, outgoing(seed)), seed);
  }
}

// Sums riding on the exchange: every rank ends with the sums over all ranks (wrapping, values
// near the int64 limits included), whatever the messages, and the messages are unchanged.
TEST(SparseExchange, SumsRideOnTheRoundsToEveryRank) {
  const int me = world_rank(), size = world_size();
  for (int seed : {0, 1, 3, 8}) {
    SCOPED_TRACE("pattern " + std::to_string(seed));
    const auto value = [seed](int r, int k) -> int64_t {
      if (k == 2) return INT64_MAX - r;  // wraps beyond two ranks
      return (r + 1) * (k == 0 ? 1 : 1000003) + seed;
    };
    int64_t sums[3] = {value(me, 0), value(me, 1), value(me, 2)};
    std::vector<Message> in = isthmus::sparse_exchange(MPI_COMM_WORLD, 6, outgoing(seed), sums, 3);
    for (int k = 0; k < 3; ++k) {
      uint64_t want = 0;
      for (int r = 0; r < size; ++r) want += static_cast<uint64_t>(value(r, k));
      EXPECT_EQ(sums[k], static_cast<int64_t>(want)) << "sum " << k;
    }
    expect_incoming(in, seed);
  }
}

// A message of unknown length arrives whole at every length around the first part's capacity,
// and a first part that claims more than it can carry is an error, not a hang or an overrun.
TEST(SizedMessage, EveryLengthArrivesWhole) {
  const int me = world_rank(), size = world_size();
  const int next = (me + 1) % size, prev = (me + size - 1) % size;
  const size_t head = isthmus::kSizedHead;
  for (size_t bytes : {size_t(0), size_t(1), head - 9, head - 8, head - 7, head, 3 * head + 5}) {
    SCOPED_TRACE(std::to_string(bytes) + " bytes");
    std::vector<char> out(bytes);
    for (size_t i = 0; i < bytes; ++i) out[i] = static_cast<char>((i * 31 + me) % 251);
    isthmus::SizedSend s;
    s.start(out.data(), out.size(), next, 9, MPI_COMM_WORLD);
    std::vector<char> in = isthmus::recv_sized<char>(prev, 9, MPI_COMM_WORLD);
    s.wait();
    ASSERT_EQ(in.size(), bytes);
    for (size_t i = 0; i < bytes; ++i) ASSERT_EQ(in[i], static_cast<char>((i * 31 + prev) % 251)) << i;
  }
  // 12 bytes of int64 values: not a whole number of elements
  std::vector<char> odd(12, 1);
  isthmus::SizedSend s;
  s.start(odd.data(), odd.size(), next, 10, MPI_COMM_WORLD);
  try {
    isthmus::recv_sized<int64_t>(prev, 10, MPI_COMM_WORLD);
    ADD_FAILURE() << "no error";
  } catch (const isthmus::Error& e) {
    EXPECT_NE(std::string(e.what()).find("12 bytes, not a multiple of 8"), std::string::npos) << e.what();
  }
  s.wait();
}
