// Butterfly and adaptive redistributions through the C API: several fields of every type and
// level count, every value checked at its global index, forward and reverse, over disjoint,
// overlapping and Algorithm-1 decompositions; the plan query and the plan cache.
#include <unistd.h>

#include <cstdio>

#include "../redist/redist_test_util.h"

namespace {

std::string prefix() { return "isthmus: rank " + std::to_string(world_rank()) + ": "; }

const std::vector<int> kTypes = {ISTHMUS_DOUBLE, ISTHMUS_FLOAT, ISTHMUS_INT32, ISTHMUS_DOUBLE};
const std::vector<int> kLevels = {2, 1, 3, 1};

struct Parts {
  std::vector<int64_t> src, dst;
  bool has_src = false, has_dst = false;
};

struct World {
  isthmus_context* ctx = nullptr;
  std::vector<isthmus_decomp*> decomps;
  World() { EXPECT_EQ(isthmus_context_create(MPI_COMM_WORLD, &ctx), ISTHMUS_OK); }
  ~World() {
    for (auto* d : decomps) isthmus_decomp_destroy(&d);
    isthmus_context_destroy(&ctx);
  }
  isthmus_decomp* decomp(int64_t n, const std::vector<int64_t>& idx) {
    isthmus_decomp* d = nullptr;
    EXPECT_EQ(isthmus_decomp_create_indices(ctx, n, static_cast<int64_t>(idx.size()), idx.data(), &d),
              ISTHMUS_OK) << isthmus_last_error(ctx);
    decomps.push_back(d);
    return d;
  }
};

// Source: round-robin over ranks [s0, s1); destination: blocks over [d0, d1).
Parts rr_to_blocks(int64_t n, int s0, int s1, int d0, int d1) {
  Parts p;
  const int me = world_rank();
  if (me >= s0 && me < s1) {
    p.has_src = true;
    for (int64_t g = me - s0; g < n; g += s1 - s0) p.src.push_back(g);
  }
  if (me >= d0 && me < d1) {
    p.has_dst = true;
    auto b = block(n, d1 - d0, me - d0);
    for (int64_t i = 0; i < b.second; ++i) p.dst.push_back(b.first + i);
  }
  return p;
}

// Forward exchanges an adaptive redistribution of n stages profiles at most.
// at most stages + 3 pairs, each of two plans timed 1 + up to 15 times (AdaptiveOptions)
int kProfiling(int stages) { return 32 * (stages + 3) + 2; }

// Runs `rounds` forward exchanges and one reverse exchange, every value checked; returns the
// forward plan after the last forward exchange.
isthmus_transfer_plan exchange_and_check(World& w, isthmus_xmap* x, const Parts& p, int method,
                                         int rounds, const char* cache = nullptr) {
  isthmus_transfer_plan plan{};
  isthmus_redist* r = nullptr;
  int rc = isthmus_redist_create(w.ctx, x, static_cast<int>(kTypes.size()), kTypes.data(),
                                 kLevels.data(), method, &r);
  EXPECT_EQ(rc, ISTHMUS_OK) << isthmus_last_error(w.ctx);
  if (rc != ISTHMUS_OK) return plan;
  if (cache) {
    EXPECT_EQ(isthmus_redist_set_plan_cache(r, cache), ISTHMUS_OK) << isthmus_last_error(w.ctx);
  }
  FieldSet src(kTypes, kLevels, static_cast<int64_t>(p.src.size()));
  FieldSet dst(kTypes, kLevels, static_cast<int64_t>(p.dst.size()));
  src.fill_reference(p.src);
  for (int round = 0; round < rounds; ++round) {
    dst.fill_constant(-1);
    auto in = src.in();
    auto out = dst.out();
    EXPECT_EQ(isthmus_redist_exchange(r, p.has_src ? in.data() : nullptr,
                                      p.has_dst ? out.data() : nullptr), ISTHMUS_OK)
        << isthmus_last_error(w.ctx);
    EXPECT_EQ(dst.count_wrong(p.dst), 0) << "method " << method << " round " << round;
  }
  FieldSet back(kTypes, kLevels, static_cast<int64_t>(p.src.size()));
  back.fill_constant(-1);
  auto din = dst.in();
  auto bout = back.out();
  EXPECT_EQ(isthmus_redist_exchange_reverse(r, p.has_dst ? din.data() : nullptr,
                                            p.has_src ? bout.data() : nullptr), ISTHMUS_OK)
      << isthmus_last_error(w.ctx);
  EXPECT_EQ(back.count_wrong(p.src), 0) << "method " << method << " reverse";
  EXPECT_EQ(isthmus_redist_get_plan(r, 0, &plan), ISTHMUS_OK);
  int m = -1;
  isthmus_redist_method(r, &m);
  EXPECT_EQ(m, method);
  isthmus_redist_destroy(&r);
  return plan;
}

void check_layout(int64_t n, const Parts& p) {
  World w;
  isthmus_xmap* x = nullptr;
  ASSERT_EQ(isthmus_xmap_create(w.ctx, p.has_src ? w.decomp(n, p.src) : nullptr,
                                p.has_dst ? w.decomp(n, p.dst) : nullptr, nullptr, &x),
            ISTHMUS_OK) << isthmus_last_error(w.ctx);
  isthmus_transfer_plan b = exchange_and_check(w, x, p, ISTHMUS_METHOD_BUTTERFLY, 2);
  EXPECT_EQ(b.method, ISTHMUS_METHOD_BUTTERFLY);
  EXPECT_EQ(b.nruns, b.stages);  // [1,...,1]
  for (int i = 0; i < b.nruns; ++i) EXPECT_EQ(b.runs[i], 1);
  // Enough forward exchanges to finish profiling (at most n + 3 pairs: p2p and the butterfly,
  // the walk, the final pair and two collectives; up to 32 exchanges each).
  isthmus_transfer_plan a = exchange_and_check(w, x, p, ISTHMUS_METHOD_ADAPTIVE, kProfiling(b.stages));
  EXPECT_EQ(a.decided, 1);
  EXPECT_EQ(a.stages, b.stages);
  if (a.collective != 0) {  // an MPI collective beat every plan
    EXPECT_TRUE(a.collective == ISTHMUS_METHOD_ALLTOALLV || a.collective == ISTHMUS_METHOD_NEIGHBOR) << a.collective;
    EXPECT_EQ(a.nruns, 0);
  } else {
    int sum = 0;
    for (int i = 0; i < a.nruns; ++i) sum += a.runs[i];
    EXPECT_EQ(sum, a.stages);
  }
  isthmus_xmap_destroy(&x);
}

}  // namespace

TEST(ButterflyRedist, RoundRobinToBlocksOnAllRanks) {
  const int W = world_size();
  check_layout(1000, rr_to_blocks(1000, 0, W, 0, W));
}

TEST(ButterflyRedist, DisjointAndOverlappingRankSets) {
  const int W = world_size();
  if (W < 2) GTEST_SKIP() << "needs two ranks";
  check_layout(777, rr_to_blocks(777, 0, W / 2, W / 2, W));         // disjoint
  check_layout(777, rr_to_blocks(777, 0, (W + 1) / 2 + 1 > W ? W : (W + 1) / 2 + 1, W / 3, W));  // overlap
}

TEST(ButterflyRedist, GeneratedDecompositionHasTheAskedMessageCount) {
  const int W = world_size();
  if (W < 2) GTEST_SKIP() << "needs two ranks";
  World w;
  const int M = W / 2, N = W - M, me = world_rank();
  const int64_t n = 64 * W;
  const double avg = std::min(N, 3);
  Parts p;
  isthmus_decomp *s = nullptr, *d = nullptr;
  if (me < M) {
    ASSERT_EQ(isthmus_decomp_create_generated(w.ctx, n, M, N, avg, 1, 42, ISTHMUS_GENERATED_SENDER, me, &s),
              ISTHMUS_OK) << isthmus_last_error(w.ctx);
    w.decomps.push_back(s);
    p.has_src = true;
    int64_t len = 0;
    isthmus_decomp_info(s, &len, nullptr, nullptr);
    p.src.resize(len);
    isthmus_decomp_indices(s, p.src.data());
  } else {
    ASSERT_EQ(isthmus_decomp_create_generated(w.ctx, n, M, N, avg, 1, 42, ISTHMUS_GENERATED_RECEIVER,
                                              me - M, &d), ISTHMUS_OK) << isthmus_last_error(w.ctx);
    w.decomps.push_back(d);
    p.has_dst = true;
    int64_t len = 0;
    isthmus_decomp_info(d, &len, nullptr, nullptr);
    p.dst.resize(len);
    isthmus_decomp_indices(d, p.dst.data());
  }
  isthmus_xmap* x = nullptr;
  ASSERT_EQ(isthmus_xmap_create(w.ctx, s, d, nullptr, &x), ISTHMUS_OK) << isthmus_last_error(w.ctx);
  isthmus_xmap_info info;
  isthmus_xmap_get_info(x, &info);
  if (me < M) {
    EXPECT_EQ(info.send_peers, static_cast<int>(avg));
  }
  exchange_and_check(w, x, p, ISTHMUS_METHOD_ADAPTIVE, 20);
  isthmus_xmap_destroy(&x);

  isthmus_decomp* bad = nullptr;
  EXPECT_EQ(isthmus_decomp_create_generated(w.ctx, n, M, N, avg, 1, 42, 2, 0, &bad), ISTHMUS_ERR_ARG);
  EXPECT_EQ(std::string(isthmus_last_error(w.ctx)),
            prefix() + "isthmus_decomp_create_generated: side is 2 (0 ISTHMUS_GENERATED_SENDER, 1 "
                       "ISTHMUS_GENERATED_RECEIVER)");
  EXPECT_EQ(isthmus_decomp_create_generated(w.ctx, n, M, N, N + 1, 1, 42, 0, 0, &bad), ISTHMUS_ERR_ARG);
  EXPECT_EQ(bad, nullptr);
}

TEST(ButterflyRedist, PlanCacheSkipsProfilingInTheNextRun) {
  const int W = world_size();
  World w;
  char path[256] = {0};
  if (world_rank() == 0) std::snprintf(path, sizeof path, "/tmp/isthmus-redist-%d.cache", static_cast<int>(getpid()));
  MPI_Bcast(path, sizeof path, MPI_CHAR, 0, MPI_COMM_WORLD);
  Parts p = rr_to_blocks(500, 0, W, 0, W);
  isthmus_xmap* x = nullptr;
  ASSERT_EQ(isthmus_xmap_create(w.ctx, w.decomp(500, p.src), w.decomp(500, p.dst), nullptr, &x), ISTHMUS_OK);
  int stages = 0;
  for (int k = W; k > 1; k /= 2) ++stages;
  isthmus_transfer_plan first = exchange_and_check(w, x, p, ISTHMUS_METHOD_ADAPTIVE, kProfiling(stages), path);
  isthmus_transfer_plan second = exchange_and_check(w, x, p, ISTHMUS_METHOD_ADAPTIVE, 1, path);
  EXPECT_EQ(first.decided, 1);
  EXPECT_EQ(first.from_cache, 0);
  EXPECT_EQ(second.decided, 1);
  EXPECT_EQ(second.profiling_exchanges, 0);
  // profiled and cached whenever something is sent (with one stage, p2p against the collectives)
  EXPECT_EQ(second.from_cache, first.stages >= 1 ? 1 : 0);
  EXPECT_EQ(second.collective, first.collective);
  ASSERT_EQ(second.nruns, first.nruns);
  for (int i = 0; i < first.nruns; ++i) EXPECT_EQ(second.runs[i], first.runs[i]);
  EXPECT_GE(second.messages_sent, 0);

  // A plan cache needs an adaptive redistribution.
  isthmus_redist* r = nullptr;
  int t = ISTHMUS_DOUBLE, l = 1;
  ASSERT_EQ(isthmus_redist_create(w.ctx, x, 1, &t, &l, ISTHMUS_METHOD_P2P, &r), ISTHMUS_OK);
  EXPECT_EQ(isthmus_redist_set_plan_cache(r, path), ISTHMUS_ERR_ARG);
  EXPECT_EQ(std::string(isthmus_last_error(w.ctx)),
            prefix() + "isthmus_redist_set_plan_cache: the redistribution uses method 'p2p'; a plan "
                       "cache needs method adaptive (5)");
  isthmus_transfer_plan q{};
  EXPECT_EQ(isthmus_redist_get_plan(r, 2, &q), ISTHMUS_ERR_ARG);
  EXPECT_EQ(isthmus_redist_get_plan(r, 1, &q), ISTHMUS_OK);
  EXPECT_EQ(q.method, ISTHMUS_METHOD_P2P);
  EXPECT_EQ(q.nruns, 0);
  isthmus_redist_destroy(&r);
  isthmus_xmap_destroy(&x);
  MPI_Barrier(MPI_COMM_WORLD);
  if (world_rank() == 0) std::remove(path);
}
