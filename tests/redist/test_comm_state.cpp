// What the library keeps per communicator and how it spends collectives on it: base/broadcast.h
// (a short string in one broadcast, a long one in two), base/comm.h (a value attached to a
// communicator, made once), base/nodes.h (the ranks' nodes, learnt once) and Xmap::lend_comm
// (a map's first redistribution uses the map's communicator, later ones their own).
#include <gtest/gtest.h>
#include <mpi.h>

#include <memory>
#include <string>
#include <vector>

#include "base/agreement.h"
#include "base/broadcast.h"
#include "base/comm.h"
#include "base/nodes.h"
#include "index/index_list.h"
#include "mpi_test_util.h"
#include "transfer/redist.h"
#include "xmap/xmap.h"

using namespace isthmus;

namespace {

// Every length around the one-broadcast limit arrives whole, from any root, with bytes that
// tell their position (so a piece put in the wrong place shows).
TEST(Broadcast, ShortAndLongStringsArriveWholeFromAnyRoot) {
  const int size = world_size(), me = world_rank();
  for (size_t n : {size_t{0}, size_t{1}, size_t{kBroadcastInline - 9}, size_t{kBroadcastInline - 8},
                   size_t{kBroadcastInline - 7}, size_t{kBroadcastInline}, size_t{3 * kBroadcastInline + 5}}) {
    for (int root : {0, size - 1}) {
      std::string expected(n, '\0');
      for (size_t i = 0; i < n; ++i) expected[i] = static_cast<char>((i * 7 + n + root) % 251);
      std::string s = me == root ? expected : std::string("stale contents");
      broadcast(MPI_COMM_WORLD, s, root);
      EXPECT_EQ(s, expected) << "length " << n << ", root " << root;
    }
  }
}

struct Made {
  int value = 0;
};

TEST(Attached, IsMadeOnceAndReplacedByAttach) {
  MPI_Comm comm;
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  int calls = 0;
  Made& a = attached<Made>(comm, [&] { ++calls; return Made{42}; });
  Made& b = attached<Made>(comm, [&] { ++calls; return Made{7}; });
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(&a, &b);
  EXPECT_EQ(b.value, 42);
  attach<Made>(comm, Made{9});
  EXPECT_EQ(attached<Made>(comm, [&] { ++calls; return Made{7}; }).value, 9);
  EXPECT_EQ(calls, 1);
  // another communicator has its own
  MPI_Comm other;
  MPI_Comm_dup(MPI_COMM_WORLD, &other);
  EXPECT_EQ(attached<Made>(other, [] { return Made{5}; }).value, 5);
  MPI_Comm_free(&other);
  MPI_Comm_free(&comm);
}

TEST(Nodes, OneHostIsOneNodeLearntOnce) {
  MPI_Comm comm;
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  const Nodes& n = Nodes::of(comm);  // collective: every rank
  EXPECT_EQ(n.count, 1);
  EXPECT_EQ(n.leader, 0);
  // kept: a second call is local, so ranks may make it alone (a collective would hang here)
  if (world_rank() % 2 == 1) {
    EXPECT_EQ(&Nodes::of(comm), &n);
  }
  MPI_Comm_free(&comm);
}

TEST(Nodes, BlocksAndNamedRunsGiveTheSameNodes) {
  MPI_Comm comm;
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  const int size = world_size(), me = world_rank();
  const Nodes b = Nodes::blocks(comm, 2);
  EXPECT_EQ(b.count, (size + 1) / 2);
  EXPECT_EQ(b.leader, me / 2 * 2);
  // names in an order that is not the ranks': rank r on node (r / 2), named from the end, and
  // the last node's name given twice (a node's ranks need not be one run)
  std::vector<std::pair<int, uint64_t>> runs;
  for (int r = 0; r < size; r += 2) runs.push_back({r, 1000 - static_cast<uint64_t>(r / 2)});
  if (size % 2 == 0 && size >= 4) runs.push_back({size - 1, runs.back().second});
  const Nodes& a = Nodes::attach_runs(comm, runs);
  EXPECT_EQ(a.count, b.count);
  EXPECT_EQ(a.leader, b.leader);
  EXPECT_EQ(&Nodes::of(comm), &a);  // attached: of() learns nothing (and makes no collective)
  MPI_Comm_free(&comm);
}

// A map lends its communicator to its first redistribution only: two redistributions of one
// map with exchanges in flight at the same time (started in one order, finished in the other)
// each receive their own values.
TEST(XmapLendComm, TwoRedistributionsOfOneMapDoNotMeet) {
  const int size = world_size(), me = world_rank();
  const int64_t per = 5, n = per * size;
  // source: block of rank me; destination: the block of the next rank (every value travels)
  std::vector<int64_t> src_idx, dst_idx;
  for (int64_t i = 0; i < per; ++i) {
    src_idx.push_back(me * per + i);
    dst_idx.push_back(((me + 1) % size) * per + i);
  }
  IndexList src = IndexList::from_indices(n, src_idx.data(), per);
  IndexList dst = IndexList::from_indices(n, dst_idx.data(), per);
  Agreement xa;
  auto xmap = std::make_shared<Xmap>(MPI_COMM_WORLD, &src, &dst, XmapOptions{}, xa);
  Agreement ra, rb;
  Redist a(xmap, {{DataType::Double, 1}}, Method::P2P, ra, MPI_COMM_WORLD);
  Redist b(xmap, {{DataType::Double, 1}}, Method::P2P, rb, MPI_COMM_WORLD);
  std::vector<double> in_a(per), in_b(per), out_a(per, -1), out_b(per, -1);
  for (int64_t i = 0; i < per; ++i) {
    in_a[i] = static_cast<double>(src_idx[i]);
    in_b[i] = 1e6 + static_cast<double>(src_idx[i]);
  }
  const void* ia[] = {in_a.data()};
  const void* ib[] = {in_b.data()};
  void* oa[] = {out_a.data()};
  void* ob[] = {out_b.data()};
  a.start(0, ia, oa);
  b.start(0, ib, ob);
  b.wait();
  a.wait();
  for (int64_t i = 0; i < per; ++i) {
    EXPECT_EQ(out_a[i], static_cast<double>(dst_idx[i])) << "point " << i;
    EXPECT_EQ(out_b[i], 1e6 + static_cast<double>(dst_idx[i])) << "point " << i;
  }
  // the map's communicator went to the first redistribution only
  EXPECT_EQ(xmap->lend_comm(), MPI_COMM_NULL);
}

}  // namespace
