// Plans, the iterative pairing of Fig. 11 and Algorithm 1: pure functions, no MPI.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "base/error.h"
#include "transfer/decomp_generator.h"
#include "transfer/plan.h"
#include "transfer/process_mapping.h"

using namespace isthmus;

namespace {

std::string error_of(void (*f)()) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST(Plan, AllCompositions) {
  EXPECT_EQ(all_plans(0), std::vector<Plan>{Plan{}});
  for (int n = 1; n <= 6; ++n) {
    std::vector<Plan> plans = all_plans(n);
    EXPECT_EQ(plans.size(), size_t{1} << (n - 1));
    std::set<Plan> distinct(plans.begin(), plans.end());
    EXPECT_EQ(distinct.size(), plans.size());
    for (const Plan& p : plans) EXPECT_NO_THROW(validate_plan(p, n));
    EXPECT_TRUE(distinct.count(full_butterfly_plan(n)));
    EXPECT_TRUE(distinct.count(p2p_plan(n)));
  }
  EXPECT_EQ(all_plans(3), (std::vector<Plan>{{3}, {1, 2}, {2, 1}, {1, 1, 1}}));
}

TEST(Plan, MergeAndBounds) {
  EXPECT_EQ(merge_at({1, 1, 1, 1}, 2), (Plan{1, 2, 1}));
  EXPECT_EQ(merge_at({1, 2, 1}, 1), (Plan{3, 1}));
  EXPECT_EQ(merge_at({1, 2, 1}, 2), (Plan{1, 2, 1}));  // inside a run: nothing to merge
  EXPECT_EQ(merge_at({3, 1}, 3), (Plan{4}));
  EXPECT_EQ(round_bounds({1, 2, 1}), (std::vector<int>{0, 1, 3, 4}));
}

TEST(Plan, TextRoundTripAndErrors) {
  for (const Plan& p : all_plans(5)) EXPECT_EQ(parse_plan(plan_string(p)), p);
  EXPECT_EQ(plan_string({1, 2, 1}), "1,2,1");
  EXPECT_EQ(error_of([] { parse_plan("1,x"); }),
            "transfer plan '1,x': 'x' is not a positive run length (expected e.g. \"1,2,1\")");
  EXPECT_EQ(error_of([] { parse_plan("1,0"); }),
            "transfer plan '1,0': '0' is not a positive run length (expected e.g. \"1,2,1\")");
  EXPECT_EQ(error_of([] { validate_plan({1, 2}, 4); }),
            "transfer plan '1,2' covers 3 stages but the butterfly has 4");
}

// Seed 001, Fig. 11: five senders, ten receivers, eight butterfly nodes. The sizes are chosen so
// that the pairing reproduces the figure's groups; the reordered lists are the paper's.
TEST(ProcessMapping, Figure11) {
  std::vector<int64_t> s = {35, 40, 30, 20, 25, 0, 0, 0};
  EXPECT_EQ(iterative_pairing(s), (std::vector<int>{4, 3, 2, 5, 1, 7, 0, 6}));
  std::vector<int64_t> r = {50, 88, 67, 62, 59, 81, 44, 80, 39, 93, 0, 0, 0, 0, 0, 0};
  EXPECT_EQ(iterative_pairing(r),
            (std::vector<int>{9, 15, 7, 12, 4, 8, 3, 10, 1, 14, 5, 13, 0, 6, 2, 11}));

  // As ranks: senders 0..4, receivers 5..14 (disjoint).
  std::vector<int64_t> send(15, 0), recv(15, 0);
  for (int i = 0; i < 5; ++i) send[i] = s[i];
  for (int i = 0; i < 10; ++i) recv[5 + i] = r[i];
  ButterflyMapping m = map_processes(send, recv);
  EXPECT_EQ(m.nodes, 8);
  EXPECT_EQ(m.stages, 3);
  EXPECT_EQ(m.unique, 15);
  // S4 S3 S2 S5 S1 S7 S0 S6 onto B0..B7 one each.
  EXPECT_EQ(m.sender_node[4], 0);
  EXPECT_EQ(m.sender_node[3], 1);
  EXPECT_EQ(m.sender_node[2], 2);
  EXPECT_EQ(m.sender_node[1], 4);
  EXPECT_EQ(m.sender_node[0], 6);
  // Receivers in pairs: (R9 R15) -> B0, (R7 R12) -> B1, (R4 R8) -> B2, (R3 R10) -> B3, ...
  const int expect_r[10] = {6, 4, 7, 3, 2, 5, 6, 1, 2, 0};
  for (int i = 0; i < 10; ++i) EXPECT_EQ(m.receiver_node[5 + i], expect_r[i]) << "R" << i;
  for (int i = 5; i < 15; ++i) EXPECT_EQ(m.sender_node[i], -1);
  // Nodes played by the mapped senders first, then the other senders' slots by receivers.
  EXPECT_EQ(m.node_rank[0], 4);
  EXPECT_EQ(m.node_rank[1], 3);
  EXPECT_EQ(m.node_rank[2], 2);
  EXPECT_EQ(m.node_rank[4], 1);
  EXPECT_EQ(m.node_rank[6], 0);
  EXPECT_EQ(m.node_rank[3], 5);
  EXPECT_EQ(m.node_rank[5], 6);
  EXPECT_EQ(m.node_rank[7], 7);
}

TEST(ProcessMapping, EveryCountMapsOntoDistinctNodes) {
  for (int S = 1; S <= 9; ++S)
    for (int R = 1; R <= 9; ++R)
      for (int overlap = 0; overlap <= 1; ++overlap) {
        const int P = overlap ? std::max(S, R) : S + R;
        std::vector<int64_t> send(P, 0), recv(P, 0);
        for (int i = 0; i < S; ++i) send[i] = 10 + (i * 7) % 5;
        for (int i = 0; i < R; ++i) recv[overlap ? i : S + i] = 3 + (i * 5) % 7;
        ButterflyMapping m = map_processes(send, recv);
        const int unique = overlap ? std::max(S, R) : S + R;
        EXPECT_EQ(m.unique, unique);
        EXPECT_LE(m.nodes, unique);
        EXPECT_GT(2 * m.nodes, unique);
        std::set<int> ranks(m.node_rank.begin(), m.node_rank.end());
        EXPECT_EQ(ranks.size(), static_cast<size_t>(m.nodes)) << S << " " << R;
        // Senders first: all nodes are senders when there are enough of them.
        for (int r : m.node_rank) {
          if (S >= m.nodes) {
            EXPECT_GT(send[r], 0);
          }
        }
        // No many-to-many mapping: a node takes at most padded/nodes processes of a side.
        std::vector<int> per_node_s(m.nodes, 0), per_node_r(m.nodes, 0);
        for (int r = 0; r < P; ++r) {
          EXPECT_EQ(m.sender_node[r] >= 0, send[r] > 0);
          EXPECT_EQ(m.receiver_node[r] >= 0, recv[r] > 0);
          if (m.sender_node[r] >= 0) ++per_node_s[m.sender_node[r]];
          if (m.receiver_node[r] >= 0) ++per_node_r[m.receiver_node[r]];
        }
        for (int b = 0; b < m.nodes; ++b) {
          EXPECT_LE(per_node_s[b], 2);
          EXPECT_LE(per_node_r[b], 2);
        }
      }
}

TEST(ProcessMapping, NothingToSend) {
  ButterflyMapping m = map_processes({0, 0, 0}, {0, 0, 0});
  EXPECT_EQ(m.nodes, 0);
  EXPECT_EQ(m.stages, 0);
}

TEST(DecompGenerator, BalancedHasExactMessageCounts) {
  GeneratorParams p;
  p.grid_points = 192 * 48;
  p.senders = 32;
  p.receivers = 24;
  p.avg_send_msgs = 12;
  GeneratedDecomposition d = generate_decomposition(p);
  // Every point exactly once on each side.
  std::vector<int> seen_s(p.grid_points, 0), seen_r(p.grid_points, 0), owner_r(p.grid_points, -1);
  for (const auto& s : d.sender)
    for (int64_t g : s) ++seen_s[g];
  for (int r = 0; r < p.receivers; ++r)
    for (int64_t g : d.receiver[r]) {
      ++seen_r[g];
      owner_r[g] = r;
    }
  for (int64_t g = 0; g < p.grid_points; ++g) {
    ASSERT_EQ(seen_s[g], 1);
    ASSERT_EQ(seen_r[g], 1);
  }
  // The p2p message count of each sender is the number of receivers its points go to.
  for (int m = 0; m < p.senders; ++m) {
    std::set<int> peers;
    for (int64_t g : d.sender[m]) peers.insert(owner_r[g]);
    EXPECT_EQ(peers.size(), 12u) << "sender " << m;
    EXPECT_EQ(d.messages[m], 12);
  }
  // Receivers balanced to within one message.
  size_t lo = SIZE_MAX, hi = 0;
  for (const auto& r : d.receiver) {
    lo = std::min(lo, r.size());
    hi = std::max(hi, r.size());
  }
  EXPECT_LE(hi - lo, 24u);  // within one message (288 / 12 points)
}

TEST(DecompGenerator, RandomHasTheAverageAndIsDeterministic) {
  GeneratorParams p;
  p.grid_points = 96 * 64;
  p.senders = 64;
  p.receivers = 64;
  p.avg_send_msgs = 34;
  p.balanced = false;
  p.seed = 7;
  GeneratedDecomposition a = generate_decomposition(p), b = generate_decomposition(p);
  EXPECT_EQ(a.receiver, b.receiver);
  int64_t total = 0;
  int lo = 1 << 30, hi = 0;
  for (int k : a.messages) {
    total += k;
    lo = std::min(lo, k);
    hi = std::max(hi, k);
  }
  EXPECT_EQ(total, 34 * 64);
  EXPECT_LT(lo, hi);  // random counts differ
  p.seed = 8;
  EXPECT_NE(generate_decomposition(p).receiver, a.receiver);
}

TEST(DecompGenerator, Errors) {
  EXPECT_EQ(error_of([] {
              GeneratorParams p;
              p.grid_points = 100;
              p.senders = 10;
              p.receivers = 4;
              p.avg_send_msgs = 5;
              generate_decomposition(p);
            }),
            "decomposition generator: average of 5 messages per sender is outside [1, 4] (at "
            "most the receivers, 4, and the points per sender, 10)");
  EXPECT_EQ(error_of([] {
              GeneratorParams p;
              p.grid_points = 3;
              p.senders = 4;
              generate_decomposition(p);
            }),
            "decomposition generator: 3 grid points cannot give each of 4 senders a point");
}
