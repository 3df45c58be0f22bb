// The C API of the collectives: results through the context's communicator, and the error
// codes and messages of bad arguments.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "isthmus.h"
#include "mpi_test_util.h"

namespace {

struct Ctx {
  isthmus_context* c = nullptr;
  Ctx() { EXPECT_EQ(isthmus_context_create(MPI_COMM_WORLD, &c), ISTHMUS_OK); }
  ~Ctx() { isthmus_context_destroy(&c); }
};

}  // namespace

TEST(CapiCollectives, AlltoallvEveryAlgorithm) {
  Ctx ctx;
  int n = world_size(), me = world_rank();
  std::vector<int> sc(n), sd(n), rc(n), rd(n);
  for (int p = 0; p < n; ++p) sc[p] = (me + p) % 3, rc[p] = (p + me) % 3;
  for (int p = 0, s = 0, r = 0; p < n; ++p) sd[p] = s, rd[p] = r, s += sc[p], r += rc[p];
  std::vector<int32_t> send(size_t(sd[n - 1] + sc[n - 1]) + 1), recv(size_t(rd[n - 1] + rc[n - 1]) + 1);
  for (int p = 0; p < n; ++p)
    for (int e = 0; e < sc[p]; ++e) send[size_t(sd[p] + e)] = me * 1000 + p * 10 + e;
  for (int a = ISTHMUS_ALLTOALLV_AUTO; a <= ISTHMUS_ALLTOALLV_NATIVE; ++a) {
    std::fill(recv.begin(), recv.end(), -1);
    ASSERT_EQ(isthmus_alltoallv(ctx.c, send.data(), sc.data(), sd.data(), recv.data(), rc.data(),
                                rd.data(), ISTHMUS_INT32, a, 2),
              ISTHMUS_OK)
        << isthmus_last_error(ctx.c);
    bool ok = true;
    for (int p = 0; p < n; ++p)
      for (int e = 0; e < rc[p]; ++e) ok = ok && recv[size_t(rd[p] + e)] == p * 1000 + me * 10 + e;
    EXPECT_TRUE(all_ranks(ok)) << "algorithm " << a;
  }
  EXPECT_EQ(isthmus_alltoallv(ctx.c, send.data(), sc.data(), sd.data(), recv.data(), rc.data(),
                              rd.data(), 7, ISTHMUS_ALLTOALLV_RING, 2),
            ISTHMUS_ERR_ARG);
  EXPECT_EQ(std::string(isthmus_last_error(ctx.c)),
            "isthmus: rank " + std::to_string(me) +
                ": isthmus_alltoallv: datatype 7 (0 ISTHMUS_DOUBLE, 1 ISTHMUS_FLOAT, 2 ISTHMUS_INT32)");
}

TEST(CapiCollectives, AllreduceAndGlobalSum) {
  Ctx ctx;
  int n = world_size(), me = world_rank();
  for (int a = ISTHMUS_ALLREDUCE_AUTO; a <= ISTHMUS_ALLREDUCE_NATIVE; ++a) {
    double x[2] = {double(me), 1.0}, r[2] = {0, 0};
    ASSERT_EQ(isthmus_allreduce_double(ctx.c, x, r, 2, ISTHMUS_SUM, a, 0), ISTHMUS_OK) << isthmus_last_error(ctx.c);
    EXPECT_EQ(r[0], n * (n - 1) / 2.0);
    EXPECT_EQ(r[1], double(n));
    int64_t i = me, m = -1;
    ASSERT_EQ(isthmus_allreduce_int64(ctx.c, &i, &m, 1, ISTHMUS_MAX, a, 3), ISTHMUS_OK);
    EXPECT_EQ(m, n - 1);
  }
  double x = 0;
  EXPECT_EQ(isthmus_allreduce_double(ctx.c, &x, &x, 1, 3, ISTHMUS_ALLREDUCE_NATIVE, 0), ISTHMUS_ERR_ARG);
  EXPECT_EQ(std::string(isthmus_last_error(ctx.c)),
            "isthmus: rank " + std::to_string(me) + ": isthmus_allreduce_double: reduction op 3 is not one of 0..2");
  // 1e16, 1, -1e16 on three consecutive global points spread over the ranks.
  std::vector<double> v;
  std::vector<int64_t> idx;
  for (int g = me; g < 300; g += n) v.push_back(g % 3 == 0 ? 1e16 : g % 3 == 1 ? 1.0 : -1e16), idx.push_back(g);
  const double* f = v.data();
  for (int m = ISTHMUS_GSUM_AUTO; m <= ISTHMUS_GSUM_REPROSUM; ++m) {
    double s = -1;
    ASSERT_EQ(isthmus_global_sum(ctx.c, 1, &f, int64_t(v.size()), idx.data(), m, &s), ISTHMUS_OK)
        << isthmus_last_error(ctx.c);
    // gather and lsum8 add 1 to 1e16 in double and lose it
    if (m != ISTHMUS_GSUM_LSUM8 && m != ISTHMUS_GSUM_GATHER) {
      EXPECT_EQ(s, 100.0) << "method " << m;
    }
  }
  EXPECT_EQ(isthmus_global_sum(ctx.c, 1, &f, -1, nullptr, ISTHMUS_GSUM_REPROSUM, &x), ISTHMUS_ERR_ARG);
  EXPECT_EQ(std::string(isthmus_last_error(ctx.c)),
            "isthmus: rank " + std::to_string(me) + ": isthmus_global_sum: global_sum: n = -1 local points < 0");
}
