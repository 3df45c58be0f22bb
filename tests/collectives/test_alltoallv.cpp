// Every alltoallv algorithm delivers exactly what the definition says: element e of the block
// from rank i to rank j, placed at rdispls[i] + e on j, for counts with zeros, gaps between
// blocks and blocks in reverse order, at every rank count.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "base/error.h"
#include "collectives/alltoallv.h"
#include "mpi_test_util.h"

using namespace isthmus;

namespace {

uint64_t mix(uint64_t x) {  // splitmix64: the same numbers on every rank and platform
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

enum class Pattern { Random, AllZero, OnlyRankZeroSends, Uniform, Large };

int count_of(Pattern pat, int from, int to, int seed) {
  switch (pat) {
    case Pattern::Random: {
      uint64_t h = mix(uint64_t(seed) * 1000003 + uint64_t(from) * 1009 + uint64_t(to));
      return h % 3 == 0 ? 0 : int(h % 7);  // a third of the blocks are empty
    }
    case Pattern::AllZero: return 0;
    case Pattern::OnlyRankZeroSends: return from == 0 ? 1 + to : 0;
    case Pattern::Uniform: return 3;
    case Pattern::Large: return 2000 + (from + to) % 5;  // beyond the eager limit of shared memory
  }
  return 0;
}

int64_t value_of(int from, int to, int e) { return (int64_t(from) << 40) | (int64_t(to) << 20) | e; }

struct Layout {
  std::vector<int> scount, sdispl, rcount, rdispl;
  size_t sbuf = 0, rbuf = 0;
};

// Blocks in reverse rank order with a gap of one element after each, so that displacements
// are really used and a write outside a block is seen.
Layout layout(Pattern pat, int seed) {
  int n = world_size(), me = world_rank();
  Layout l;
  l.scount.resize(n), l.sdispl.resize(n), l.rcount.resize(n), l.rdispl.resize(n);
  size_t s = 0, r = 0;
  for (int p = n - 1; p >= 0; --p) {
    l.scount[p] = count_of(pat, me, p, seed);
    l.sdispl[p] = int(s);
    s += l.scount[p] + 1;
    l.rcount[p] = count_of(pat, p, me, seed);
    l.rdispl[p] = int(r);
    r += l.rcount[p] + 1;
  }
  l.sbuf = s, l.rbuf = r;
  return l;
}

struct Case {
  AlltoallvAlgorithm algorithm;
  int k;
};

std::vector<Case> all_cases() {
  return {{AlltoallvAlgorithm::Burst, 0},  {AlltoallvAlgorithm::Pairwise, 0},
          {AlltoallvAlgorithm::Bruck, 0},  {AlltoallvAlgorithm::Ring, 1},
          {AlltoallvAlgorithm::Ring, 2},   {AlltoallvAlgorithm::Ring, 3},
          {AlltoallvAlgorithm::Ring, 5},   {AlltoallvAlgorithm::Ring, 64},
          {AlltoallvAlgorithm::Native, 0}, {AlltoallvAlgorithm::Auto, 0}};
}

// Runs one algorithm and checks every received element and every gap on this rank.
std::string check(Pattern pat, int seed, Case c) {
  int me = world_rank(), n = world_size();
  Layout l = layout(pat, seed);
  const int64_t sentinel = -7;
  std::vector<int64_t> send(l.sbuf, sentinel), recv(l.rbuf, sentinel);
  for (int p = 0; p < n; ++p)
    for (int e = 0; e < l.scount[p]; ++e) send[size_t(l.sdispl[p] + e)] = value_of(me, p, e);
  trace::Counters counters;
  AlltoallvOptions o;
  o.algorithm = c.algorithm;
  o.ring_k = c.k;
  o.counters = &counters;
  alltoallv(send.data(), l.scount.data(), l.sdispl.data(), recv.data(), l.rcount.data(),
            l.rdispl.data(), sizeof(int64_t), MPI_COMM_WORLD, o);
  std::string where = std::string(alltoallv_algorithm_name(c.algorithm)) + " k=" +
                      std::to_string(c.k) + " pattern " + std::to_string(int(pat)) + " rank " +
                      std::to_string(me) + ": ";
  std::vector<bool> inside(l.rbuf, false);
  for (int p = 0; p < n; ++p)
    for (int e = 0; e < l.rcount[p]; ++e) {
      size_t at = size_t(l.rdispl[p] + e);
      inside[at] = true;
      if (recv[at] != value_of(p, me, e))
        return where + "element " + std::to_string(e) + " from rank " + std::to_string(p) + " is " +
               std::to_string(recv[at]);
    }
  for (size_t i = 0; i < l.rbuf; ++i)
    if (!inside[i] && recv[i] != sentinel) return where + "gap at " + std::to_string(i) + " written";
  if (c.algorithm != AlltoallvAlgorithm::Bruck && c.algorithm != AlltoallvAlgorithm::Auto) {
    int64_t payload = 0;
    for (int p = 0; p < n; ++p)
      if (p != me) payload += int64_t(l.scount[p]) * 8;
    if (counters.bytes_sent != payload)
      return where + "counted " + std::to_string(counters.bytes_sent) + " bytes sent, not " +
             std::to_string(payload);
  }
  return "";
}

}  // namespace

TEST(Alltoallv, EveryAlgorithmDeliversEveryElement) {
  for (Pattern pat : {Pattern::Random, Pattern::AllZero, Pattern::OnlyRankZeroSends,
                      Pattern::Uniform, Pattern::Large})
    for (int seed = 1; seed <= (pat == Pattern::Random ? 3 : 1); ++seed)
      for (Case c : all_cases()) {
        std::string err = check(pat, seed, c);
        EXPECT_TRUE(all_ranks(err.empty())) << err;
      }
}

TEST(Alltoallv, OddElementSizeAndPlanReuse) {
  // 3-byte elements through a plan executed twice with different data.
  int n = world_size(), me = world_rank();
  std::vector<int> sc(n), sd(n), rc(n), rd(n);
  for (int p = 0; p < n; ++p) sc[p] = (me + 2 * p) % 4, rc[p] = (p + 2 * me) % 4;
  for (int p = 0, s = 0, r = 0; p < n; ++p) sd[p] = s, rd[p] = r, s += sc[p], r += rc[p];
  for (Case c : all_cases()) {
    AlltoallvOptions o;
    o.algorithm = c.algorithm;
    o.ring_k = c.k;
    AlltoallvPlan plan(MPI_COMM_WORLD, sc.data(), sd.data(), rc.data(), rd.data(), 3, o);
    EXPECT_NE(plan.algorithm(), AlltoallvAlgorithm::Auto);
    for (int round = 0; round < 2; ++round) {
      std::vector<unsigned char> s(size_t(sd[n - 1] + sc[n - 1]) * 3 + 1), r(size_t(rd[n - 1] + rc[n - 1]) * 3 + 1, 0);
      for (int p = 0; p < n; ++p)
        for (int b = 0; b < sc[p] * 3; ++b) s[size_t(sd[p]) * 3 + b] = (unsigned char)(me * 31 + p * 7 + b + round);
      plan.execute(s.data(), r.data());
      bool ok = true;
      for (int p = 0; p < n; ++p)
        for (int b = 0; b < rc[p] * 3; ++b)
          ok = ok && r[size_t(rd[p]) * 3 + b] == (unsigned char)(p * 31 + me * 7 + b + round);
      EXPECT_TRUE(all_ranks(ok)) << alltoallv_algorithm_name(c.algorithm) << " round " << round;
    }
  }
}

TEST(Alltoallv, AutoRuleAndNames) {
  EXPECT_EQ(choose_alltoallv(2, 1e6).algorithm, AlltoallvAlgorithm::Pairwise);
  EXPECT_EQ(choose_alltoallv(32, 256).algorithm, AlltoallvAlgorithm::Ring);
  EXPECT_EQ(choose_alltoallv(3, 1e6).algorithm, AlltoallvAlgorithm::Ring);
  EXPECT_EQ(choose_alltoallv(1024, 2048).ring_k, 4);
  EXPECT_EQ(parse_alltoallv_algorithm("ring"), AlltoallvAlgorithm::Ring);
  try {
    parse_alltoallv_algorithm("ring4");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ISTHMUS_ERR_ARG);
    EXPECT_STREQ(e.what(), "unknown alltoallv algorithm 'ring4' (auto, burst, pairwise, bruck, ring, native)");
  }
}

TEST(Alltoallv, RejectsNegativeCounts) {
  int n = world_size();
  std::vector<int> c(n, 1), d(n, 0);
  c[n - 1] = -2;
  try {
    AlltoallvPlan(MPI_COMM_WORLD, c.data(), d.data(), c.data(), d.data(), 8);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ISTHMUS_ERR_ARG);
    std::string want = "alltoallv: negative count or displacement for rank " + std::to_string(n - 1) +
                       " (sendcount -2, sdispl 0, recvcount -2, rdispl 0)";
    EXPECT_EQ(std::string(e.what()), want);
  }
}

// Values only the agreement knows: a tag that differs on one rank fails on every rank, and
// bruck's forwarded messages are bounded with the largest block over all ranks.
TEST(Alltoallv, AgreementComparesTagAndBoundsBruck) {
  const int n = world_size(), me = world_rank();
  std::vector<int> c(static_cast<size_t>(n), 1), d(static_cast<size_t>(n));
  for (int p = 0; p < n; ++p) d[size_t(p)] = p;
  if (n >= 2) {
    AlltoallvOptions o;
    o.tag = me == n - 1 ? 99 : 7411;
    int code = ISTHMUS_OK;
    std::string msg;
    try {
      AlltoallvPlan(MPI_COMM_WORLD, c.data(), d.data(), c.data(), d.data(), 8, o);
    } catch (const Error& e) {
      code = e.code(), msg = e.what();
    }
    EXPECT_TRUE(all_ranks(code == ISTHMUS_ERR_ARG));
    EXPECT_EQ(msg, "alltoallv: tag must be the same on every rank, but rank " + std::to_string(n - 1) +
                       " passes 99 and rank 0 passes 7411");
    // Blocks of 1.5 GB (1500 elements of 1 MiB) each fit one message, but bruck would forward
    // two or more of them in one: refused on every rank before any message.
    std::vector<int> big(size_t(n), 1500), zero(size_t(n), 0);
    o = AlltoallvOptions{};
    o.algorithm = AlltoallvAlgorithm::Bruck;
    code = ISTHMUS_OK;
    try {
      AlltoallvPlan(MPI_COMM_WORLD, big.data(), zero.data(), big.data(), zero.data(), 1 << 20, o);
    } catch (const Error& e) {
      code = e.code(), msg = e.what();
    }
    EXPECT_TRUE(all_ranks(code == ISTHMUS_ERR_ARG));
    EXPECT_EQ(msg, "alltoallv: the receive blocks from ranks 0 and 1 overlap (rdispls[0] = 0, recvcounts[0] = 1500, "
                   "rdispls[1] = 0)");
    // With disjoint receive blocks it is bruck's bound that refuses.
    std::vector<int> rd(static_cast<size_t>(n));
    for (int p = 0; p < n; ++p) rd[size_t(p)] = 1500 * p;
    code = ISTHMUS_OK;
    try {
      AlltoallvPlan(MPI_COMM_WORLD, big.data(), zero.data(), big.data(), rd.data(), 1 << 20, o);
    } catch (const Error& e) {
      code = e.code(), msg = e.what();
    }
    EXPECT_TRUE(all_ranks(code == ISTHMUS_ERR_ARG));
    EXPECT_EQ(msg, "alltoallv: bruck forwards up to " + std::to_string(n / 2 + 1) +
                       " blocks in one message, and with blocks of up to 1572864000 bytes one message could "
                       "exceed the 2 GiB limit of one MPI message: choose another algorithm");
  }
}
