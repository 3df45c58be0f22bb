// The mapping through the public C API: links in memory, many fields, CONSERV, counters, and
// the error contract (misuse on one rank fails every rank alike, nobody hangs).
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "isthmus.h"
#include "mpi_test_util.h"

namespace {

struct World {
  isthmus_context* ctx = nullptr;
  World() { EXPECT_EQ(isthmus_context_create(MPI_COMM_WORLD, &ctx), ISTHMUS_OK); }
  ~World() { isthmus_context_destroy(&ctx); }
  std::string msg() const { return isthmus_last_error(ctx); }
};

std::string prefix(const char* fn) {
  return "isthmus: rank " + std::to_string(world_rank()) + ": " + fn + ": ";
}

// A 1-D smoothing: destination d = 0.25 x[d-1] + 0.5 x[d] + 0.25 x[d+1] (periodic), N points on
// both sides; source round-robin, destination in blocks; the links are held by rank 0 only.
struct Smoothing {
  static constexpr int64_t N = 64;
  std::vector<int64_t> numbers, src, dst, sidx, didx;
  std::vector<double> w;
  isthmus_decomp *S = nullptr, *D = nullptr;
  explicit Smoothing(isthmus_context* ctx) {
    const int me = world_rank(), size = world_size();
    if (me == 0)
      for (int64_t d = 0; d < N; ++d)
        for (int k = -1; k <= 1; ++k) {
          numbers.push_back(static_cast<int64_t>(numbers.size()));
          src.push_back((d + k + N) % N);
          dst.push_back(d);
          w.push_back(k == 0 ? 0.5 : 0.25);
        }
    for (int64_t g = me; g < N; g += size) sidx.push_back(g);
    const int64_t b = N * me / size, e = N * (me + 1) / size;
    for (int64_t g = b; g < e; ++g) didx.push_back(g);
    EXPECT_EQ(isthmus_decomp_create_indices(ctx, N, sidx.size(), sidx.data(), &S), ISTHMUS_OK);
    EXPECT_EQ(isthmus_decomp_create_indices(ctx, N, didx.size(), didx.data(), &D), ISTHMUS_OK);
  }
  ~Smoothing() {
    isthmus_decomp_destroy(&S);
    isthmus_decomp_destroy(&D);
  }
  int create(isthmus_context* ctx, int nfields, const int* levels, const isthmus_mapping_options* o,
             isthmus_mapping** m) {
    return isthmus_mapping_create(ctx, S, D, N, N, static_cast<int64_t>(numbers.size()), numbers.data(),
                                  src.data(), dst.data(), w.data(), nfields, levels, o, m);
  }
};

double x_of(int64_t g, int f, int l) { return static_cast<double>((g * 7 + f * 3 + l) % 17); }

}  // namespace

TEST(CapiMapping, SmoothsEveryFieldAndLevel) {
  Watchdog w("capi mapping apply");
  World c;
  Smoothing s(c.ctx);
  int levels[] = {1, 3};
  isthmus_mapping_options opt;
  ASSERT_EQ(isthmus_mapping_options_init(&opt), ISTHMUS_OK);
  opt.method = ISTHMUS_METHOD_P2P;
  isthmus_mapping* m = nullptr;
  ASSERT_EQ(s.create(c.ctx, 2, levels, &opt, &m), ISTHMUS_OK) << c.msg();
  std::vector<std::vector<double>> x(2), y(2);
  for (int f = 0; f < 2; ++f) {
    for (int l = 0; l < levels[f]; ++l)
      for (int64_t g : s.sidx) x[f].push_back(x_of(g, f, l));
    y[f].assign(s.didx.size() * levels[f], -1);
  }
  const double* xp[] = {x[0].data(), x[1].data()};
  double* yp[] = {y[0].data(), y[1].data()};
  ASSERT_EQ(isthmus_mapping_set_tracing(m, 1), ISTHMUS_OK);
  ASSERT_EQ(isthmus_mapping_apply(m, xp, yp), ISTHMUS_OK) << c.msg();
  const int64_t N = Smoothing::N;
  for (int f = 0; f < 2; ++f)
    for (int l = 0; l < levels[f]; ++l)
      for (size_t i = 0; i < s.didx.size(); ++i) {
        const int64_t d = s.didx[i];
        // the same order as the links: d-1, d, d+1, from the first product
        double want = 0.25 * x_of((d - 1 + N) % N, f, l);
        want += 0.5 * x_of(d, f, l);
        want += 0.25 * x_of((d + 1) % N, f, l);
        EXPECT_EQ(y[f][l * s.didx.size() + i], want) << "d " << d;
      }
  isthmus_mapping_info info;
  ASSERT_EQ(isthmus_mapping_get_info(m, &info), ISTHMUS_OK);
  EXPECT_EQ(info.side, ISTHMUS_SIDE_DST);
  EXPECT_EQ(info.local_links, 3 * static_cast<int64_t>(s.didx.size()));
  EXPECT_EQ(info.unmapped_points, 0);
  EXPECT_EQ(info.global_unused_links, 0);
  isthmus_trace_counters tc;
  ASSERT_EQ(isthmus_mapping_get_counters(m, &tc), ISTHMUS_OK);
  EXPECT_EQ(tc.exchanges, 1);
  // GLOBAL conservation on unit areas: the sum is restored exactly enough
  std::vector<double> sa(s.sidx.size(), 1.0), da(s.didx.size(), 1.0);
  ASSERT_EQ(isthmus_mapping_set_conservation(m, ISTHMUS_CONSERV_GLOBAL, ISTHMUS_GSUM_REPROSUM, sa.data(),
                                             nullptr, da.data(), nullptr), ISTHMUS_OK) << c.msg();
  ASSERT_EQ(isthmus_mapping_apply(m, xp, yp), ISTHMUS_OK) << c.msg();
  double ls = 0, ld = 0, gs = 0, gd = 0;
  for (double v : x[0]) ls += v;
  for (size_t i = 0; i < s.didx.size(); ++i) ld += y[0][i];
  MPI_Allreduce(&ls, &gs, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  MPI_Allreduce(&ld, &gd, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  EXPECT_NEAR(gd, gs, 1e-12 * gs);
  EXPECT_EQ(isthmus_mapping_destroy(&m), ISTHMUS_OK);
  EXPECT_EQ(m, nullptr);
}

TEST(CapiMapping, MisuseOnOneRankFailsEveryRank) {
  World c;
  Smoothing s(c.ctx);
  const int last = world_size() - 1;
  int levels[] = {1};
  for (MisuseOn on : {MisuseOn::OneRank, MisuseOn::AllRanks}) {
    SCOPED_TRACE(misuse_name(on));
    const bool bad = is_misused(on);
    const int failing = on == MisuseOn::AllRanks ? 0 : last;
    auto expect_msg = [&](const char* fn, const std::string& why) {
      EXPECT_EQ(c.msg(), prefix(fn) + (bad ? why : "failed on rank " + std::to_string(failing) + ": " + why));
    };
    isthmus_mapping* m = nullptr;
    {
      Watchdog w(std::string("mapping_create bad side on ") + misuse_name(on));
      isthmus_mapping_options opt;
      isthmus_mapping_options_init(&opt);
      if (bad) opt.side = 7;
      EXPECT_TRUE(same_code_everywhere(s.create(c.ctx, 1, levels, &opt, &m), ISTHMUS_ERR_ARG));
      expect_msg("isthmus_mapping_create", "options.side is 7 (0 dst, 1 src, 2 auto)");
    }
    {
      Watchdog w(std::string("mapping_create NULL output on ") + misuse_name(on));
      EXPECT_TRUE(same_code_everywhere(s.create(c.ctx, 1, levels, nullptr, bad ? nullptr : &m), ISTHMUS_ERR_ARG));
      expect_msg("isthmus_mapping_create", "mapping (the output pointer) is NULL");
    }
    {
      Watchdog w(std::string("mapping_create zero fields on ") + misuse_name(on));
      EXPECT_TRUE(same_code_everywhere(s.create(c.ctx, bad ? 0 : 1, levels, nullptr, &m), ISTHMUS_ERR_ARG));
      expect_msg("isthmus_mapping_create", "nfields is 0; at least 1 needed");
    }
    EXPECT_EQ(m, nullptr);
    // apply with a NULL source array on the misused ranks, with a conservation step: every
    // rank reaches the conservation's global sum and fails there alike
    ASSERT_TRUE(all_ranks(s.create(c.ctx, 1, levels, nullptr, &m) == ISTHMUS_OK)) << c.msg();
    std::vector<double> sa(s.sidx.size(), 1.0), da(s.didx.size(), 1.0);
    ASSERT_EQ(isthmus_mapping_set_conservation(m, ISTHMUS_CONSERV_GLBPOS, ISTHMUS_GSUM_AUTO, sa.data(),
                                               nullptr, da.data(), nullptr), ISTHMUS_OK) << c.msg();
    std::vector<double> x(s.sidx.size(), 1.0), y(s.didx.size(), 0.0);
    const double* xp[] = {x.data()};
    const double* xbad[] = {nullptr};
    double* yp[] = {y.data()};
    {
      Watchdog w(std::string("mapping_apply NULL source on ") + misuse_name(on));
      const bool holds = !s.sidx.empty();
      int rc = isthmus_mapping_apply(m, bad && holds ? xbad : xp, yp);
      // every rank fails when some rank holding source points misused it
      const bool any = !all_ranks(!(bad && holds));
      EXPECT_TRUE(same_code_everywhere(rc, any ? ISTHMUS_ERR_ARG : ISTHMUS_OK)) << c.msg();
    }
    {
      Watchdog w("mapping_apply after the failure");
      EXPECT_TRUE(all_ranks(isthmus_mapping_apply(m, xp, yp) == ISTHMUS_OK)) << c.msg();
      for (double v : y) EXPECT_NEAR(v, 1.0, 1e-14);  // a constant maps to itself
    }
    isthmus_mapping_destroy(&m);
  }
  EXPECT_EQ(isthmus_mapping_get_info(nullptr, nullptr), ISTHMUS_ERR_ARG);
  EXPECT_EQ(isthmus_mapping_apply(nullptr, nullptr, nullptr), ISTHMUS_ERR_ARG);
  EXPECT_EQ(isthmus_mapping_options_init(nullptr), ISTHMUS_ERR_ARG);
}
