// What the library keeps per communicator and how it spends collectives on it: base/broadcast.h
// (a short string in one broadcast, a long one in two), base/comm.h (a value attached to a
// communicator, made once), base/nodes.h (the ranks' nodes, learnt once) and Xmap::lend_comm
// (a map's first redistribution uses the map's communicator, later ones their own).
#include <gtest/gtest.h>
#include <mpi.h>

#include <memory>
#include <optional>
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

// Exchange maps built together (one directory over their index spaces laid end to end): each
// map's exchanges, in flight at the same time, deliver its own values to the right positions,
// with parts that make the whole schedule's runs cross from one map's positions to the next
// (adjacent positions merged), ranks holding no part of a map, and local copies; an unowned
// index fails every rank and names its map.
TEST(XmapBuildTogether, EachMapDeliversItsOwnValues) {
  const int size = world_size(), me = world_rank();
  XmapOptions opt;
  opt.forward_only = true;
  // map k: n_k points; source blocks over all ranks, destination a rotation (every rank's
  // points from the next rank's block); map 1 has no destination on rank 0
  const std::vector<int64_t> n = {7 * size, 3 * size + 1, 5 * size};
  std::vector<std::vector<int64_t>> s_idx(3), d_idx(3);
  for (int k = 0; k < 3; ++k) {
    for (int64_t g = 0; g < n[k]; ++g) {
      if (g * size / n[k] == me) s_idx[k].push_back(g);
      const int64_t r = (g + n[k] / size + (k == 2 ? 0 : 1)) % n[k];  // map 2: mostly local copies
      if (r * size / n[k] == me && !(k == 1 && me == 0)) d_idx[k].push_back(g);
    }
  }
  std::vector<IndexList> S, D;
  for (int k = 0; k < 3; ++k) {
    S.push_back(IndexList::from_indices(n[k], s_idx[k].data(), static_cast<int64_t>(s_idx[k].size())));
    D.push_back(IndexList::from_indices(n[k], d_idx[k].data(), static_cast<int64_t>(d_idx[k].size())));
  }
  std::vector<Xmap::Part> parts;
  for (int k = 0; k < 3; ++k) parts.push_back({&S[k], (k == 1 && me == 0) ? nullptr : &D[k], n[k]});
  std::vector<std::shared_ptr<Xmap>> maps = Xmap::build_together(Xmap::Vouched{}, MPI_COMM_WORLD, parts, opt);
  ASSERT_EQ(maps.size(), 3u);
  std::vector<std::unique_ptr<Redist>> redists;
  std::vector<std::vector<double>> in(3), out(3);
  for (int k = 0; k < 3; ++k) {
    Agreement a;
    redists.push_back(std::make_unique<Redist>(maps[k], std::vector<FieldSpec>{{DataType::Double, 1}},
                                               Method::P2P, a, MPI_COMM_WORLD));
    for (int64_t g : s_idx[k]) in[k].push_back(1000.0 * k + static_cast<double>(g));
    out[k].assign(d_idx[k].size(), -1.0);
  }
  for (int k = 0; k < 3; ++k) {
    const void* i[] = {in[k].data()};
    void* o[] = {out[k].data()};
    redists[k]->start(0, i, o);
  }
  for (int k = 2; k >= 0; --k) redists[k]->wait();
  int64_t wrong = 0;
  for (int k = 0; k < 3; ++k)
    for (size_t i = 0; i < d_idx[k].size(); ++i) wrong += out[k][i] != 1000.0 * k + static_cast<double>(d_idx[k][i]);
  EXPECT_TRUE(all_ranks(wrong == 0)) << wrong << " values wrong";
  EXPECT_EQ(maps[2]->forward().copy_points() + maps[2]->forward().recv_points(), static_cast<int64_t>(d_idx[2].size()));

  // index 0 of map 1 owned by no rank
  std::vector<int64_t> s1;
  for (int64_t g : s_idx[1])
    if (g != 0) s1.push_back(g);
  IndexList S1 = IndexList::from_indices(n[1], s1.data(), static_cast<int64_t>(s1.size()));
  std::vector<int64_t> all1(static_cast<size_t>(n[1]));
  for (int64_t g = 0; g < n[1]; ++g) all1[static_cast<size_t>(g)] = g;
  IndexList D1 = IndexList::from_indices(n[1], all1.data(), me == 0 ? n[1] : 0);
  std::vector<Xmap::Part> bad = {{&S[0], &D[0], n[0]}, {&S1, &D1, n[1]}};
  int code = ISTHMUS_OK;
  std::string msg;
  try {
    Xmap::build_together(Xmap::Vouched{}, MPI_COMM_WORLD, bad, opt);
  } catch (const Error& e) {
    code = e.code();
    msg = e.what();
  }
  EXPECT_TRUE(all_ranks(code == ISTHMUS_ERR_UNOWNED)) << msg;
  EXPECT_NE(msg.find("destination global index 0 of exchange map 1 of 2"), std::string::npos) << msg;
}

// Agreements concluded together: the agreed values of each, and, where two fail, the first's
// failure on every rank.
TEST(AgreementTogether, AgreesEachAndThrowsTheFirstFailure) {
  const int size = world_size(), me = world_rank();
  Agreement a, b, c;
  const int sa = a.maximum("a's largest rank", me);
  a.match("a's size", size);
  const int sb = b.value("b's size where known", me == 0 ? std::optional<int64_t>(size) : std::nullopt);
  Agreement::conclude_together(MPI_COMM_WORLD, {&a, &b, &c});
  EXPECT_EQ(a.agreed(sa).value_or(-1), size - 1);
  EXPECT_EQ(b.agreed(sb).value_or(-1), size);
  Agreement d, e, f;
  e.check([&] {
    if (me == size / 2) fail(ISTHMUS_ERR_DECOMP, "e fails on one rank");
  });
  f.record(ISTHMUS_ERR_CONFIG, "f fails everywhere");
  int code = ISTHMUS_OK;
  std::string msg;
  try {
    Agreement::conclude_together(MPI_COMM_WORLD, {&d, &e, &f});
  } catch (const Error& err) {
    code = err.code();
    msg = err.what();
  }
  EXPECT_TRUE(all_ranks(code == ISTHMUS_ERR_DECOMP)) << msg;
  EXPECT_NE(msg.find("e fails on one rank"), std::string::npos) << msg;
}

}  // namespace
