// base/wait.h: every blocking call the library makes, under both policies (block: MPI's own
// call; sleep: the nonblocking twin and a polling wait that naps), gives what MPI's call gives:
// values at the right ranks, statuses, Waitsome's MPI_UNDEFINED, a probe's size.
#include <gtest/gtest.h>
#include <mpi.h>

#include <numeric>
#include <vector>

#include "base/wait.h"
#include "mpi_test_util.h"

using isthmus::WaitPolicy;
namespace wmpi = isthmus::wmpi;

namespace {

class Wait : public ::testing::TestWithParam<WaitPolicy> {
 protected:
  void SetUp() override {
    before_ = isthmus::wait_policy();
    isthmus::set_wait_policy_for_tests(GetParam());
  }
  void TearDown() override { isthmus::set_wait_policy_for_tests(before_); }
  WaitPolicy before_ = WaitPolicy::Block;
};

TEST_P(Wait, CollectivesGiveMpisValues) {
  const int W = world_size(), me = world_rank();
  ASSERT_EQ(isthmus::wait_policy(), GetParam());
  long v = me + 1, sum = 0;
  ASSERT_EQ(wmpi::Allreduce(&v, &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD), MPI_SUCCESS);
  EXPECT_EQ(sum, static_cast<long>(W) * (W + 1) / 2);
  long inplace = me;
  ASSERT_EQ(wmpi::Allreduce(MPI_IN_PLACE, &inplace, 1, MPI_LONG, MPI_MAX, MPI_COMM_WORLD), MPI_SUCCESS);
  EXPECT_EQ(inplace, W - 1);
  int b = me == W - 1 ? 42 : 0;
  ASSERT_EQ(wmpi::Bcast(&b, 1, MPI_INT, W - 1, MPI_COMM_WORLD), MPI_SUCCESS);
  EXPECT_EQ(b, 42);
  std::vector<int> all(W, -1);
  ASSERT_EQ(wmpi::Allgather(&me, 1, MPI_INT, all.data(), 1, MPI_INT, MPI_COMM_WORLD), MPI_SUCCESS);
  for (int r = 0; r < W; ++r) EXPECT_EQ(all[r], r);
  std::vector<int> got(W, -1);
  ASSERT_EQ(wmpi::Gather(&me, 1, MPI_INT, got.data(), 1, MPI_INT, 0, MPI_COMM_WORLD), MPI_SUCCESS);
  if (me == 0) {
    for (int r = 0; r < W; ++r) EXPECT_EQ(got[r], r);
  }
  int one = 1, below = -7;
  ASSERT_EQ(wmpi::Exscan(&one, &below, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD), MPI_SUCCESS);
  if (me > 0) {
    EXPECT_EQ(below, me);
  }
  std::vector<int> to(W), from(W, -1);
  for (int r = 0; r < W; ++r) to[r] = me * 100 + r;
  ASSERT_EQ(wmpi::Alltoall(to.data(), 1, MPI_INT, from.data(), 1, MPI_INT, MPI_COMM_WORLD), MPI_SUCCESS);
  for (int r = 0; r < W; ++r) EXPECT_EQ(from[r], r * 100 + me);
  long red = 0;
  ASSERT_EQ(wmpi::Reduce(&v, &red, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD), MPI_SUCCESS);
  if (me == 0) {
    EXPECT_EQ(red, static_cast<long>(W) * (W + 1) / 2);
  }
  EXPECT_EQ(wmpi::Barrier(MPI_COMM_WORLD), MPI_SUCCESS);
}

TEST_P(Wait, PointToPointAndWaitsome) {
  const int W = world_size(), me = world_rank();
  const int right = (me + 1) % W, left = (me + W - 1) % W;
  // a ring with a late sender: the left neighbour sleeps a little before it sends
  int in = -1, out = me;
  MPI_Status st;
  ASSERT_EQ(wmpi::Sendrecv(&out, 1, MPI_INT, right, 5, &in, 1, MPI_INT, left, 5, MPI_COMM_WORLD, &st),
            MPI_SUCCESS);
  EXPECT_EQ(in, left);
  EXPECT_EQ(st.MPI_SOURCE, left);
  if (W > 1) {
    // even ranks send a message of 1000 + rank doubles to the right; its receiver probes its size
    std::vector<double> msg(1000 + me, me);
    if (me % 2 == 0 && right != me) {
      ASSERT_EQ(wmpi::Send(msg.data(), static_cast<int>(msg.size()), MPI_DOUBLE, right, 6, MPI_COMM_WORLD),
                MPI_SUCCESS);
    }
    if (left % 2 == 0 && left != me) {
      ASSERT_EQ(wmpi::Probe(left, 6, MPI_COMM_WORLD, &st), MPI_SUCCESS);
      int n = 0;
      MPI_Get_count(&st, MPI_DOUBLE, &n);
      EXPECT_EQ(n, 1000 + left);
      std::vector<double> r(n, -1);
      ASSERT_EQ(wmpi::Recv(r.data(), n, MPI_DOUBLE, left, 6, MPI_COMM_WORLD, &st), MPI_SUCCESS);
      EXPECT_EQ(r[n - 1], left);
    }
  }
  // Waitsome until every request is done, then MPI_UNDEFINED for the inactive ones.
  std::vector<MPI_Request> reqs(2, MPI_REQUEST_NULL);
  int a = -1, b = me;
  MPI_Irecv(&a, 1, MPI_INT, left, 7, MPI_COMM_WORLD, &reqs[0]);
  MPI_Isend(&b, 1, MPI_INT, right, 7, MPI_COMM_WORLD, &reqs[1]);
  int done = 0, n = 0, idx[2];
  while (done < 2) {
    ASSERT_EQ(wmpi::Waitsome(2, reqs.data(), &n, idx, MPI_STATUSES_IGNORE), MPI_SUCCESS);
    ASSERT_GT(n, 0);
    done += n;
  }
  EXPECT_EQ(a, left);
  ASSERT_EQ(wmpi::Waitsome(2, reqs.data(), &n, idx, MPI_STATUSES_IGNORE), MPI_SUCCESS);
  EXPECT_EQ(n, MPI_UNDEFINED);
  MPI_Request r = MPI_REQUEST_NULL;
  EXPECT_EQ(wmpi::Wait(&r, MPI_STATUS_IGNORE), MPI_SUCCESS);  // a null request completes at once
  EXPECT_EQ(wmpi::Waitall(2, reqs.data(), MPI_STATUSES_IGNORE), MPI_SUCCESS);
}

INSTANTIATE_TEST_SUITE_P(Policies, Wait, ::testing::Values(WaitPolicy::Block, WaitPolicy::Sleep),
                         [](const auto& info) { return info.param == WaitPolicy::Block ? "block" : "sleep"; });

}  // namespace

// The default (auto) naps where the launcher's ranks on the node outnumber the cores, and only
// there; block and sleep are taken as said; unknown counts block.
TEST(WaitPolicyRule, AutoSleepsWhereRanksOutnumberCores) {
  EXPECT_EQ(isthmus::wait_policy_for(nullptr, 8, 2), WaitPolicy::Sleep);
  EXPECT_EQ(isthmus::wait_policy_for("auto", 3, 2), WaitPolicy::Sleep);
  EXPECT_EQ(isthmus::wait_policy_for(nullptr, 2, 2), WaitPolicy::Block);
  EXPECT_EQ(isthmus::wait_policy_for(nullptr, 128, 128), WaitPolicy::Block);
  EXPECT_EQ(isthmus::wait_policy_for(nullptr, 0, 2), WaitPolicy::Block);
  EXPECT_EQ(isthmus::wait_policy_for(nullptr, 8, 0), WaitPolicy::Block);
  EXPECT_EQ(isthmus::wait_policy_for("block", 8, 2), WaitPolicy::Block);
  EXPECT_EQ(isthmus::wait_policy_for("sleep", 1, 64), WaitPolicy::Sleep);
}
