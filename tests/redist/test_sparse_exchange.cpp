// The directory's sparse exchange: whatever the pattern (none, self, all, random, to ranks
// beyond the largest power of two), every message arrives once, intact, sorted by source.
#include <gtest/gtest.h>

#include <random>

#include "mpi_test_util.h"
#include "xmap/sparse_exchange.h"

using isthmus::Message;

namespace {

std::vector<int64_t> payload(int src, int dst, int seed) {
  std::vector<int64_t> v(static_cast<size_t>((src * 7 + dst * 3 + seed) % 5));  // lengths 0..4
  for (size_t i = 0; i < v.size(); ++i) v[i] = src * 1000000 + dst * 1000 + static_cast<int64_t>(i);
  return v;
}

// Whether src sends to dst in pattern `seed` (the same on every rank).
bool sends(int src, int dst, int seed) {
  if (seed == 0) return false;
  if (seed == 1) return true;
  if (seed == 2) return src == dst;
  std::mt19937 rng(static_cast<unsigned>(seed * 7919 + src * 31 + dst));
  return rng() % 3 == 0;
}

}  // namespace

TEST(SparseExchange, EveryMessageArrivesOnceSortedBySource) {
  int me = world_rank(), size = world_size();
  for (int seed = 0; seed < 8; ++seed) {
    SCOPED_TRACE("pattern " + std::to_string(seed));
    std::vector<Message> out;
    for (int d = 0; d < size; ++d)
      if (sends(me, d, seed)) out.push_back({d, payload(me, d, seed)});
    std::vector<Message> in = isthmus::sparse_exchange(MPI_COMM_WORLD, 5, out);
    std::vector<Message> want;
    for (int s = 0; s < size; ++s)
      if (sends(s, me, seed)) want.push_back({s, payload(s, me, seed)});
    ASSERT_EQ(in.size(), want.size());
    for (size_t i = 0; i < in.size(); ++i) {
      EXPECT_EQ(in[i].rank, want[i].rank);
      EXPECT_EQ(in[i].data, want[i].data);
    }
  }
}
