// The error contract (docs/errors.md) for the context, decomposition, exchange-map and
// redistribution functions: misuse on one rank (the last) and on every rank, each case under a
// watchdog. A collective call returns the same code on every rank, with a message naming the
// function, the argument, the value and the failing rank; no rank hangs; after a failure the
// objects still work.
#include "redist_test_util.h"

namespace {

std::string prefix(const char* fn) {
  return "isthmus: rank " + std::to_string(world_rank()) + ": " + fn + ": ";
}
const int kLast = -1;  // placeholder resolved to world_size() - 1
int last_rank() { return world_size() - 1; }

// The message every rank must hold after a collective call failed on `failing` (the lowest
// failing rank) with `why`: the failing rank's own message, or the remote form.
std::string expected(const char* fn, int failing, const std::string& why, bool failed_here) {
  if (failed_here) return prefix(fn) + why;
  return prefix(fn) + "failed on rank " + std::to_string(failing) + ": " + why;
}

struct World {
  isthmus_context* ctx = nullptr;
  World() { EXPECT_EQ(isthmus_context_create(MPI_COMM_WORLD, &ctx), ISTHMUS_OK); }
  ~World() { isthmus_context_destroy(&ctx); }
  std::string msg() const { return isthmus_last_error(ctx); }
};

// Round-robin source, blocks of 40 destination points: with up to 40 ranks every rank sends to
// and receives from every other rank, so a failing rank is every rank's peer.
struct AllToAll {
  int64_t n;
  std::vector<int64_t> src, dst;
  isthmus_decomp *s = nullptr, *d = nullptr;
  isthmus_xmap* x = nullptr;
  explicit AllToAll(isthmus_context* ctx) : n(40 * world_size()) {
    for (int64_t g = world_rank(); g < n; g += world_size()) src.push_back(g);
    for (int64_t g = 40 * world_rank(); g < 40 * (world_rank() + 1); ++g) dst.push_back(g);
    EXPECT_EQ(isthmus_decomp_create_indices(ctx, n, src.size(), src.data(), &s), ISTHMUS_OK);
    EXPECT_EQ(isthmus_decomp_create_indices(ctx, n, dst.size(), dst.data(), &d), ISTHMUS_OK);
    EXPECT_EQ(isthmus_xmap_create(ctx, s, d, nullptr, &x), ISTHMUS_OK) << isthmus_last_error(ctx);
  }
  ~AllToAll() {
    isthmus_xmap_destroy(&x);
    isthmus_decomp_destroy(&s);
    isthmus_decomp_destroy(&d);
  }
};

const std::vector<int> kTypes2 = {ISTHMUS_DOUBLE, ISTHMUS_INT32};
const std::vector<int> kLevels2 = {2, 1};

// One forward exchange with correct arguments on every rank; true if every value arrived.
bool exchange_works(isthmus_redist* r, const AllToAll& m) {
  FieldSet a(kTypes2, kLevels2, static_cast<int64_t>(m.src.size()));
  FieldSet b(kTypes2, kLevels2, static_cast<int64_t>(m.dst.size()));
  a.fill_reference(m.src);
  b.fill_constant(-1);
  auto in = a.in();
  auto out = b.out();
  int rc = isthmus_redist_exchange(r, in.data(), out.data());
  return all_ranks(rc == ISTHMUS_OK && b.count_wrong(m.dst) == 0);
}

}  // namespace

// ---- context ------------------------------------------------------------------------------

TEST(Misuse, ContextNullOutputPointer) {
  for (MisuseOn on : {MisuseOn::OneRank, MisuseOn::AllRanks}) {
    SCOPED_TRACE(misuse_name(on));
    Watchdog w(std::string("context_create NULL output on ") + misuse_name(on));
    isthmus_context* ctx = nullptr;
    const bool bad = is_misused(on);
    int rc = isthmus_context_create(MPI_COMM_WORLD, bad ? nullptr : &ctx);
    EXPECT_TRUE(same_code_everywhere(rc, ISTHMUS_ERR_ARG));
    if (!bad) {
      // the others hold a context that carries the message and refuses to work
      ASSERT_NE(ctx, nullptr);
      const int failing = on == MisuseOn::AllRanks ? 0 : last_rank();
      const std::string why = "ctx (the output pointer) is NULL";
      EXPECT_EQ(std::string(isthmus_last_error(ctx)),
                expected("isthmus_context_create", failing, why, false));
      isthmus_xmap* x = nullptr;
      EXPECT_EQ(isthmus_xmap_create(ctx, nullptr, nullptr, nullptr, &x), ISTHMUS_ERR_ARG);
      EXPECT_EQ(std::string(isthmus_last_error(ctx)).rfind(prefix("isthmus_xmap_create") +
                "the context is not usable: its creation failed (", 0), 0u);
      isthmus_decomp* d = nullptr;
      EXPECT_EQ(isthmus_decomp_create_indices(ctx, 1, 0, nullptr, &d), ISTHMUS_ERR_ARG);
      EXPECT_EQ(isthmus_context_destroy(&ctx), ISTHMUS_OK);
    }
  }
  World ok;  // and a correct call afterwards works
  EXPECT_NE(ok.ctx, nullptr);
}

TEST(Misuse, ContextNullOrInterCommunicator) {
  Watchdog w("context_create with MPI_COMM_NULL / an intercommunicator on every rank");
  // A rank without a communicator cannot meet its peers; on every rank it fails alone, cleanly.
  for (int fortran = 0; fortran < 2; ++fortran) {
    isthmus_context* ctx = nullptr;
    int rc = fortran ? isthmus_context_create_f(MPI_Comm_c2f(MPI_COMM_NULL), &ctx)
                     : isthmus_context_create(MPI_COMM_NULL, &ctx);
    EXPECT_EQ(rc, ISTHMUS_ERR_ARG);
    ASSERT_NE(ctx, nullptr);
    const char* fn = fortran ? "isthmus_context_create" : "isthmus_context_create";
    EXPECT_EQ(std::string(isthmus_last_error(ctx)), prefix(fn) + "comm is MPI_COMM_NULL");
    isthmus_context_destroy(&ctx);
  }
  if (world_size() < 2) return;
  MPI_Comm local, inter;
  const bool in_a = world_rank() < world_size() / 2;
  MPI_Comm_split(MPI_COMM_WORLD, in_a, world_rank(), &local);
  MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, in_a ? world_size() / 2 : 0, 5, &inter);
  isthmus_context* ctx = nullptr;
  EXPECT_EQ(isthmus_context_create(inter, &ctx), ISTHMUS_ERR_ARG);
  EXPECT_EQ(std::string(isthmus_last_error(ctx)),
            prefix("isthmus_context_create") +
                "comm is an intercommunicator; a context needs an intracommunicator (maps between "
                "two groups take the intercommunicator: isthmus_xmap_create_inter)");
  isthmus_context_destroy(&ctx);
  MPI_Comm_free(&inter);
  MPI_Comm_free(&local);
}

TEST(Misuse, NullHandlesAndOutputs) {
  Watchdog w("local calls with NULL handles and outputs");
  World c;
  // No context: nothing can hold a message, the code says it.
  isthmus_decomp* d = nullptr;
  EXPECT_EQ(isthmus_decomp_create_indices(nullptr, 4, 0, nullptr, &d), ISTHMUS_ERR_ARG);
  EXPECT_EQ(isthmus_context_rank(nullptr, nullptr, nullptr), ISTHMUS_ERR_ARG);
  EXPECT_STREQ(isthmus_last_error(nullptr), "isthmus: the context is NULL");
  EXPECT_EQ(isthmus_context_destroy(nullptr), ISTHMUS_ERR_ARG);
  // A handle but a NULL output: the code and a message in the handle's context.
  EXPECT_EQ(isthmus_decomp_create_indices(c.ctx, 4, 0, nullptr, nullptr), ISTHMUS_ERR_ARG);
  EXPECT_EQ(c.msg(), prefix("isthmus_decomp_create_indices") + "output handle pointer is NULL");
  int64_t idx[] = {1, 2};
  ASSERT_EQ(isthmus_decomp_create_indices(c.ctx, 4, 2, idx, &d), ISTHMUS_OK);
  EXPECT_EQ(isthmus_decomp_indices(d, nullptr), ISTHMUS_ERR_ARG);
  EXPECT_EQ(c.msg(), prefix("isthmus_decomp_indices") + "indices is NULL");
  isthmus_decomp_destroy(&d);
  EXPECT_EQ(isthmus_decomp_create_indices(c.ctx, 4, -3, idx, &d), ISTHMUS_ERR_ARG);
  EXPECT_EQ(c.msg(), prefix("isthmus_decomp_create_indices") + "number of indices -3 is negative");
  isthmus_decomp_destroy(&d);

  AllToAll m(c.ctx);
  EXPECT_EQ(isthmus_xmap_get_info(m.x, nullptr), ISTHMUS_ERR_ARG);
  EXPECT_EQ(c.msg(), prefix("isthmus_xmap_get_info") + "info is NULL");
  isthmus_redist* r = nullptr;
  ASSERT_EQ(isthmus_redist_create(c.ctx, m.x, 2, kTypes2.data(), kLevels2.data(),
                                  ISTHMUS_METHOD_P2P, &r), ISTHMUS_OK) << c.msg();
  EXPECT_EQ(isthmus_redist_get_counters(r, nullptr), ISTHMUS_ERR_ARG);
  EXPECT_EQ(c.msg(), prefix("isthmus_redist_get_counters") + "counters is NULL");
  EXPECT_EQ(isthmus_redist_method(r, nullptr), ISTHMUS_ERR_ARG);
  EXPECT_EQ(c.msg(), prefix("isthmus_redist_method") + "method is NULL");
  EXPECT_EQ(isthmus_redist_get_plan(r, 0, nullptr), ISTHMUS_ERR_ARG);
  EXPECT_EQ(c.msg(), prefix("isthmus_redist_get_plan") + "plan is NULL");
  isthmus_transfer_plan plan;
  EXPECT_EQ(isthmus_redist_get_plan(r, 2, &plan), ISTHMUS_ERR_ARG);
  EXPECT_EQ(c.msg(), prefix("isthmus_redist_get_plan") + "reverse is 2 (0 forward, 1 reverse)");
  EXPECT_EQ(isthmus_redist_set_plan_cache(r, "x"), ISTHMUS_ERR_ARG);
  EXPECT_EQ(c.msg(), prefix("isthmus_redist_set_plan_cache") +
                         "the redistribution uses method 'p2p'; a plan cache needs method adaptive (5)");
  EXPECT_EQ(isthmus_redist_wait(r), ISTHMUS_ERR_ARG);  // local: nothing was started anywhere
  EXPECT_EQ(c.msg(), prefix("isthmus_redist_wait") + "wait: no exchange was started");
  EXPECT_TRUE(exchange_works(r, m));
  isthmus_redist_destroy(&r);
  EXPECT_EQ(isthmus_redist_destroy(nullptr), ISTHMUS_ERR_ARG);
  EXPECT_EQ(isthmus_xmap_destroy(nullptr), ISTHMUS_ERR_ARG);
}

// ---- exchange maps ------------------------------------------------------------------------

TEST(Misuse, XmapCreate) {
  World c;
  AllToAll m(c.ctx);
  for (MisuseOn on : {MisuseOn::OneRank, MisuseOn::AllRanks}) {
    SCOPED_TRACE(misuse_name(on));
    const bool bad = is_misused(on);
    const int failing = on == MisuseOn::AllRanks ? 0 : last_rank();
    {
      Watchdog w(std::string("xmap_create NULL output on ") + misuse_name(on));
      isthmus_xmap* x = nullptr;
      int rc = isthmus_xmap_create(c.ctx, m.s, m.d, nullptr, bad ? nullptr : &x);
      EXPECT_TRUE(same_code_everywhere(rc, ISTHMUS_ERR_ARG));
      EXPECT_EQ(x, nullptr);
      EXPECT_EQ(c.msg(), expected("isthmus_xmap_create", failing, "xmap (the output pointer) is NULL", bad));
    }
    {
      Watchdog w(std::string("xmap_create bad option on ") + misuse_name(on));
      isthmus_xmap_options opt;
      isthmus_xmap_options_init(&opt);
      if (bad) opt.unowned = 7;
      isthmus_xmap* x = nullptr;
      int rc = isthmus_xmap_create(c.ctx, m.s, m.d, &opt, &x);
      EXPECT_TRUE(same_code_everywhere(rc, ISTHMUS_ERR_ARG));
      EXPECT_EQ(c.msg(), expected("isthmus_xmap_create", failing,
                                  "options.unowned is 7 (0 ISTHMUS_UNOWNED_ERROR, 1 ISTHMUS_UNOWNED_FILL)", bad));
    }
    {
      Watchdog w(std::string("xmap_create source and destination of different sizes on ") + misuse_name(on));
      isthmus_decomp* other = nullptr;
      ASSERT_EQ(isthmus_decomp_create_indices(c.ctx, m.n + 1, 0, nullptr, &other), ISTHMUS_OK);
      isthmus_xmap* x = nullptr;
      int rc = isthmus_xmap_create(c.ctx, m.s, bad ? other : m.d, nullptr, &x);
      EXPECT_TRUE(same_code_everywhere(rc, ISTHMUS_ERR_DECOMP));
      EXPECT_EQ(c.msg(), expected("isthmus_xmap_create", failing,
                                  "the source part has global size " + std::to_string(m.n) +
                                      " but the destination part " + std::to_string(m.n + 1), bad));
      isthmus_decomp_destroy(&other);
    }
  }
  Watchdog w("xmap_create after the failures");
  isthmus_xmap* x = nullptr;
  EXPECT_TRUE(all_ranks(isthmus_xmap_create(c.ctx, m.s, m.d, nullptr, &x) == ISTHMUS_OK));
  isthmus_xmap_destroy(&x);
}

TEST(Misuse, XmapCreateInter) {
  if (world_size() < 2) GTEST_SKIP() << "needs two groups";
  World c;
  MPI_Comm local, inter;
  const int half = world_size() / 2;
  const bool in_a = world_rank() < half;
  MPI_Comm_split(MPI_COMM_WORLD, in_a, world_rank(), &local);
  MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, in_a ? half : 0, 6, &inter);
  const int64_t n = 100;
  std::vector<int64_t> mine;
  const int k = in_a ? world_rank() : world_rank() - half, parts = in_a ? half : world_size() - half;
  auto b = block(n, parts, k);
  for (int64_t g = b.first; g < b.first + b.second; ++g) mine.push_back(g);
  isthmus_decomp* part = nullptr;
  ASSERT_EQ(isthmus_decomp_create_indices(c.ctx, n, mine.size(), mine.data(), &part), ISTHMUS_OK);
  for (MisuseOn on : {MisuseOn::OneRank, MisuseOn::AllRanks}) {
    SCOPED_TRACE(misuse_name(on));
    const bool bad = is_misused(on);
    // the merged communicator puts group A (the low group) first
    const int failing = on == MisuseOn::AllRanks ? 0 : last_rank();
    Watchdog w(std::string("xmap_create_inter NULL output on ") + misuse_name(on));
    isthmus_xmap* x = nullptr;
    int rc = isthmus_xmap_create_inter(c.ctx, inter, in_a ? part : nullptr, in_a ? nullptr : part,
                                       nullptr, bad ? nullptr : &x);
    EXPECT_TRUE(same_code_everywhere(rc, ISTHMUS_ERR_ARG));
    EXPECT_EQ(c.msg(), expected("isthmus_xmap_create_inter", failing,
                                "xmap (the output pointer) is NULL", bad));
  }
  {
    Watchdog w("xmap_create_inter with MPI_COMM_NULL and with an intracommunicator on every rank");
    isthmus_xmap* x = nullptr;
    EXPECT_EQ(isthmus_xmap_create_inter(c.ctx, MPI_COMM_NULL, part, nullptr, nullptr, &x), ISTHMUS_ERR_ARG);
    EXPECT_EQ(c.msg(), prefix("isthmus_xmap_create_inter") + "intercomm is MPI_COMM_NULL");
    EXPECT_EQ(isthmus_xmap_create_inter_f(c.ctx, MPI_Comm_c2f(MPI_COMM_NULL), part, nullptr, nullptr, &x),
              ISTHMUS_ERR_ARG);
    EXPECT_EQ(isthmus_xmap_create_inter(c.ctx, MPI_COMM_WORLD, part, nullptr, nullptr, &x), ISTHMUS_ERR_ARG);
    EXPECT_EQ(c.msg(), prefix("isthmus_xmap_create_inter") +
                           "intercomm is an intracommunicator, not an intercommunicator");
  }
  Watchdog w("xmap_create_inter and an exchange after the failures");
  isthmus_xmap* x = nullptr;
  ASSERT_TRUE(all_ranks(isthmus_xmap_create_inter(c.ctx, inter, in_a ? part : nullptr,
                                                  in_a ? nullptr : part, nullptr, &x) == ISTHMUS_OK));
  // a NULL map on one rank of an intercommunicator map cannot be agreed (the ranks it would
  // agree with are the merged group's, which that rank does not know): tested on every rank
  isthmus_redist* r = nullptr;
  int t = ISTHMUS_DOUBLE, l = 1;
  ASSERT_TRUE(all_ranks(isthmus_redist_create(c.ctx, x, 1, &t, &l, ISTHMUS_METHOD_P2P, &r) == ISTHMUS_OK));
  std::vector<double> a(mine.size()), got(mine.size(), -1);
  for (size_t i = 0; i < mine.size(); ++i) a[i] = static_cast<double>(mine[i]);
  // method 9 on one rank: every rank of both groups fails alike
  isthmus_redist* r2 = nullptr;
  const int method = world_rank() == last_rank() ? 9 : ISTHMUS_METHOD_P2P;
  EXPECT_TRUE(same_code_everywhere(isthmus_redist_create(c.ctx, x, 1, &t, &l, method, &r2), ISTHMUS_ERR_ARG));
  const void* in[] = {a.data()};
  void* out[] = {got.data()};
  EXPECT_TRUE(all_ranks(isthmus_redist_exchange(r, in_a ? in : nullptr, in_a ? nullptr : out) == ISTHMUS_OK));
  for (size_t i = 0; !in_a && i < mine.size(); ++i) EXPECT_EQ(got[i], static_cast<double>(mine[i]));
  isthmus_redist_destroy(&r);
  isthmus_xmap_destroy(&x);
  isthmus_decomp_destroy(&part);
  MPI_Comm_free(&inter);
  MPI_Comm_free(&local);
}

// ---- redistributions: creation --------------------------------------------------------------

TEST(Misuse, RedistCreate) {
  World c;
  AllToAll m(c.ctx);
  struct Case {
    const char* name;
    int code;
    std::string why;  // "" for a mismatch: checked separately
  };
  const int last = last_rank();
  for (MisuseOn on : {MisuseOn::OneRank, MisuseOn::AllRanks}) {
    SCOPED_TRACE(misuse_name(on));
    const bool bad = is_misused(on);
    const int failing = on == MisuseOn::AllRanks ? 0 : last;
    auto run = [&](const char* name, int nfields, const int* types, const int* levels, int method,
                   bool null_map, bool null_out, int code, const std::string& why) {
      SCOPED_TRACE(name);
      Watchdog w(std::string("redist_create ") + name + " on " + misuse_name(on));
      isthmus_redist* r = nullptr;
      int rc = isthmus_redist_create(c.ctx, null_map ? nullptr : m.x, nfields, types, levels,
                                     method, null_out ? nullptr : &r);
      EXPECT_TRUE(same_code_everywhere(rc, code)) << c.msg();
      EXPECT_EQ(r, nullptr);
      if (!why.empty()) {
        EXPECT_EQ(c.msg(), expected("isthmus_redist_create", failing, why, bad));
      }
      return c.msg();
    };
    const int* T = kTypes2.data();
    const int* L = kLevels2.data();
    int bad_types[] = {ISTHMUS_DOUBLE, 9}, bad_levels[] = {2, 0}, float_types[] = {ISTHMUS_DOUBLE, ISTHMUS_FLOAT},
        more_levels[] = {2, 3};
    run("bad type", 2, bad ? bad_types : T, L, 1, false, false, ISTHMUS_ERR_ARG,
        "field 1 has unknown type 9 (0 double, 1 float, 2 int32)");
    run("zero levels", 2, T, bad ? bad_levels : L, 1, false, false, ISTHMUS_ERR_ARG,
        "field 1 has 0 levels; at least 1 needed");
    run("negative nfields", bad ? -2 : 2, T, L, 1, false, false, ISTHMUS_ERR_ARG,
        "nfields is -2; at least 1 needed");
    run("bad method", 2, T, L, bad ? 17 : 1, false, false, ISTHMUS_ERR_ARG,
        "method is 17 (0 auto, 1 p2p, 2 alltoallv, 3 neighbor, 4 butterfly, 5 adaptive)");
    run("NULL types", 2, bad ? nullptr : T, L, 1, false, false, ISTHMUS_ERR_ARG, "types is NULL");
    run("NULL levels", 2, T, bad ? nullptr : L, 1, false, false, ISTHMUS_ERR_ARG, "nlevels is NULL");
    run("NULL output", 2, T, L, 1, false, bad, ISTHMUS_ERR_ARG, "redist (the output pointer) is NULL");
    run("NULL map", 2, T, L, 1, bad, false, ISTHMUS_ERR_ARG, "xmap is NULL");
    if (on == MisuseOn::OneRank && world_size() > 1) {
      // Arguments that differ across ranks: the first mismatched one is named with two ranks.
      std::string got = run("different nfields", bad ? 1 : 2, T, L, 1, false, false, ISTHMUS_ERR_ARG, "");
      EXPECT_EQ(got, prefix("isthmus_redist_create") + "nfields must be the same on every rank, but rank " +
                         std::to_string(last) + " passes 1 and rank 0 passes 2");
      got = run("different method", 2, T, L, bad ? ISTHMUS_METHOD_ALLTOALLV : ISTHMUS_METHOD_P2P, false,
                false, ISTHMUS_ERR_ARG, "");
      EXPECT_EQ(got, prefix("isthmus_redist_create") + "method must be the same on every rank, but rank 0 "
                         "passes 1 and rank " + std::to_string(last) + " passes 2");
      got = run("different types", 2, bad ? float_types : T, L, 1, false, false, ISTHMUS_ERR_ARG, "");
      EXPECT_EQ(got, prefix("isthmus_redist_create") + "the field types must be the same on every rank, "
                         "but ranks 0 and " + std::to_string(last) + " pass different ones");
      got = run("different levels", 2, T, bad ? more_levels : L, 1, false, false, ISTHMUS_ERR_ARG, "");
      EXPECT_EQ(got, prefix("isthmus_redist_create") + "the field levels must be the same on every rank, "
                         "but ranks 0 and " + std::to_string(last) + " pass different ones");
    }
  }
  Watchdog w("redist_create and exchange after the failures");
  isthmus_redist* r = nullptr;
  ASSERT_TRUE(all_ranks(isthmus_redist_create(c.ctx, m.x, 2, kTypes2.data(), kLevels2.data(),
                                              ISTHMUS_METHOD_P2P, &r) == ISTHMUS_OK));
  EXPECT_TRUE(exchange_works(r, m));
  isthmus_redist_destroy(&r);
}

TEST(Misuse, FillValueIsConvertedToEachType) {
  Watchdog w("fill value conversion");
  World c;
  // the last rank asks for one index nobody owns
  const int64_t n = world_size() + 1;
  std::vector<int64_t> src = {world_rank()}, dst = {world_rank()};
  if (world_rank() == last_rank()) dst.push_back(n - 1);
  isthmus_decomp *s = nullptr, *d = nullptr;
  ASSERT_EQ(isthmus_decomp_create_indices(c.ctx, n, 1, src.data(), &s), ISTHMUS_OK);
  ASSERT_EQ(isthmus_decomp_create_indices(c.ctx, n, dst.size(), dst.data(), &d), ISTHMUS_OK);
  isthmus_xmap_options opt;
  isthmus_xmap_options_init(&opt);
  opt.unowned = ISTHMUS_UNOWNED_FILL;
  opt.fill_value = -7.75;
  isthmus_xmap* x = nullptr;
  ASSERT_EQ(isthmus_xmap_create(c.ctx, s, d, &opt, &x), ISTHMUS_OK) << c.msg();
  int types[] = {ISTHMUS_DOUBLE, ISTHMUS_FLOAT, ISTHMUS_INT32}, levels[] = {1, 1, 1};
  isthmus_redist* r = nullptr;
  ASSERT_EQ(isthmus_redist_create(c.ctx, x, 3, types, levels, ISTHMUS_METHOD_P2P, &r), ISTHMUS_OK) << c.msg();
  double sd = 1, dd[2] = {0, 0};
  float sf = 2, df[2] = {0, 0};
  int32_t si = 3, di[2] = {0, 0};
  const void* in[] = {&sd, &sf, &si};
  void* out[] = {dd, df, di};
  ASSERT_EQ(isthmus_redist_exchange(r, in, out), ISTHMUS_OK) << c.msg();
  if (world_rank() == last_rank()) {
    EXPECT_EQ(dd[1], -7.75);
    EXPECT_EQ(df[1], -7.75f);
    EXPECT_EQ(di[1], -7);  // C's conversion truncates toward zero
  }
  isthmus_redist_destroy(&r);
  isthmus_xmap_destroy(&x);
  isthmus_decomp_destroy(&s);
  isthmus_decomp_destroy(&d);
}

// ---- redistributions: exchanges -------------------------------------------------------------

// A NULL array on one rank: that rank still takes part; each rank that receives from it
// fails with its code and names it; with every rank a peer of every other, every rank fails.
TEST(Misuse, ExchangeWithNullArrays) {
  World c;
  AllToAll m(c.ctx);
  const int last = last_rank();
  for (int method : all_methods()) {
#ifdef ISTHMUS_SMPI
    if (method == ISTHMUS_METHOD_NEIGHBOR) continue;
#endif
    SCOPED_TRACE(method_label(method));
    isthmus_redist* r = nullptr;
    ASSERT_TRUE(all_ranks(isthmus_redist_create(c.ctx, m.x, 2, kTypes2.data(), kLevels2.data(),
                                                method, &r) == ISTHMUS_OK)) << c.msg();
    for (MisuseOn on : {MisuseOn::OneRank, MisuseOn::AllRanks}) {
      SCOPED_TRACE(misuse_name(on));
      const bool bad = is_misused(on);
      FieldSet a(kTypes2, kLevels2, static_cast<int64_t>(m.src.size()));
      FieldSet b(kTypes2, kLevels2, static_cast<int64_t>(m.dst.size()));
      a.fill_reference(m.src);
      auto in = a.in();
      auto out = b.out();
      std::vector<const void*> bad_in = {nullptr, in[1]};
      const std::string npts = std::to_string(m.src.size());
      const std::string peer_why = "rank " + std::to_string(last) + " could not take part "
          "(ISTHMUS_ERR_ARG; its own message says why) and sent no data: the points it sends to "
          "this rank were not written";
      // One blocking exchange in each direction with one NULL array on the misused ranks.
      auto null_array_case = [&](const char* fn, const char* direction, int rc, const std::string& why) {
        EXPECT_TRUE(same_code_everywhere(rc, ISTHMUS_ERR_ARG));
        EXPECT_EQ(c.msg(), prefix(fn) + direction + ": " + (bad ? why : peer_why));
      };
      {
        Watchdog w("exchange with a NULL input on " + std::string(misuse_name(on)) + ", " + method_label(method));
        null_array_case("isthmus_redist_exchange", "forward exchange",
                        isthmus_redist_exchange(r, bad ? bad_in.data() : in.data(), out.data()),
                        "input array of field 0 is NULL but this rank holds " + npts + " points");
      }
      {
        Watchdog w("reverse exchange with a NULL output on " + std::string(misuse_name(on)) + ", " + method_label(method));
        auto bin = b.in();
        std::vector<void*> bad_out = {a.out()[0], nullptr};
        null_array_case("isthmus_redist_exchange_reverse", "reverse exchange",
                        isthmus_redist_exchange_reverse(r, bin.data(), bad ? bad_out.data() : a.out().data()),
                        "output array of field 1 is NULL but this rank holds " + npts + " points");
      }
      {
        Watchdog w("split exchange with a bad direction on " + std::string(misuse_name(on)) + ", " + method_label(method));
        int rc = isthmus_redist_start(r, bad ? 7 : ISTHMUS_FORWARD, in.data(), out.data());
        if (bad) {
          EXPECT_EQ(rc, ISTHMUS_ERR_ARG);
          EXPECT_EQ(c.msg(), prefix("isthmus_redist_start") + "direction is 7 (0 ISTHMUS_FORWARD, 1 "
                             "ISTHMUS_REVERSE); this rank took part in the forward exchange without data");
        } else {
          EXPECT_EQ(rc, ISTHMUS_OK) << c.msg();
          rc = isthmus_redist_wait(r);
          EXPECT_EQ(rc, ISTHMUS_ERR_ARG);
          EXPECT_EQ(c.msg(), prefix("isthmus_redist_wait") + "wait of a forward exchange: " + peer_why);
        }
      }
      {
        Watchdog w("split exchange with a NULL input on " + std::string(misuse_name(on)) + ", " + method_label(method));
        int rc = isthmus_redist_start(r, ISTHMUS_FORWARD, bad ? bad_in.data() : in.data(), out.data());
        if (!bad) {
          EXPECT_EQ(rc, ISTHMUS_OK) << c.msg();
          rc = isthmus_redist_wait(r);
        }
        EXPECT_TRUE(same_code_everywhere(rc, ISTHMUS_ERR_ARG));
      }
      Watchdog w("a correct exchange after the failures, " + method_label(method));
      EXPECT_TRUE(exchange_works(r, m));
    }
    isthmus_redist_destroy(&r);
  }
}

// An exchange started on one rank while its previous one is pending: the pending one is
// completed, the new one run without data from that rank, and nobody waits for ever.
TEST(Misuse, ExchangeWhileOneIsPending) {
  World c;
  AllToAll m(c.ctx);
  isthmus_redist* r = nullptr;
  ASSERT_TRUE(all_ranks(isthmus_redist_create(c.ctx, m.x, 2, kTypes2.data(), kLevels2.data(),
                                              ISTHMUS_METHOD_P2P, &r) == ISTHMUS_OK));
  const bool bad = world_rank() == last_rank();
  FieldSet a(kTypes2, kLevels2, static_cast<int64_t>(m.src.size()));
  FieldSet b(kTypes2, kLevels2, static_cast<int64_t>(m.dst.size()));
  a.fill_reference(m.src);
  b.fill_constant(-1);
  auto in = a.in();
  auto out = b.out();
  Watchdog w("exchange while a split exchange is pending on one rank");
  ASSERT_EQ(isthmus_redist_start(r, ISTHMUS_FORWARD, in.data(), out.data()), ISTHMUS_OK);
  if (!bad) {
    ASSERT_EQ(isthmus_redist_wait(r), ISTHMUS_OK);  // the last rank forgets its wait
  }
  int rc = isthmus_redist_exchange(r, in.data(), out.data());
  EXPECT_TRUE(same_code_everywhere(rc, ISTHMUS_ERR_ARG));
  if (bad) {
    EXPECT_EQ(c.msg(), prefix("isthmus_redist_exchange") + "forward exchange: an exchange started "
                       "earlier had not been waited for (it has now been completed)");
  }
  EXPECT_EQ(b.count_wrong(m.dst), 0);  // the first exchange delivered everywhere
  EXPECT_TRUE(exchange_works(r, m));
  isthmus_redist_destroy(&r);
}

// ---- the remaining local functions of the foundation -----------------------------------------

TEST(Misuse, LocalFunctionsOfTheFoundation) {
  Watchdog w("generated decompositions, options, error names");
  World c;
  isthmus_decomp* d = nullptr;
  EXPECT_EQ(isthmus_decomp_create_generated(c.ctx, 100, 2, 3, 1.0, 1, 7, 5, 0, &d), ISTHMUS_ERR_ARG);
  EXPECT_EQ(c.msg(), prefix("isthmus_decomp_create_generated") +
                         "side is 5 (0 ISTHMUS_GENERATED_SENDER, 1 ISTHMUS_GENERATED_RECEIVER)");
  EXPECT_EQ(isthmus_decomp_create_generated(c.ctx, 100, 2, 3, 1.0, 1, 7, ISTHMUS_GENERATED_RECEIVER, 3, &d),
            ISTHMUS_ERR_ARG);
  EXPECT_EQ(c.msg(), prefix("isthmus_decomp_create_generated") + "part 3 is outside 0..2 (receivers)");
  EXPECT_EQ(isthmus_decomp_create_generated(c.ctx, 100, 2, 3, 1.0, 1, 7, 0, 0, nullptr), ISTHMUS_ERR_ARG);
  EXPECT_EQ(c.msg(), prefix("isthmus_decomp_create_generated") + "output handle pointer is NULL");
  EXPECT_EQ(d, nullptr);
  ASSERT_EQ(isthmus_decomp_create_generated(c.ctx, 100, 2, 3, 1.0, 1, 7, 0, 1, &d), ISTHMUS_OK) << c.msg();
  int64_t local = -1, nseg = -1, global = -1;
  EXPECT_EQ(isthmus_decomp_info(d, &local, &nseg, &global), ISTHMUS_OK);  // outputs are optional
  EXPECT_EQ(local, 50);
  EXPECT_EQ(global, 100);
  EXPECT_EQ(isthmus_decomp_info(d, nullptr, nullptr, nullptr), ISTHMUS_OK);
  EXPECT_EQ(isthmus_decomp_info(nullptr, &local, nullptr, nullptr), ISTHMUS_ERR_ARG);
  isthmus_decomp_destroy(&d);
  EXPECT_EQ(isthmus_xmap_options_init(nullptr), ISTHMUS_ERR_ARG);
  isthmus_xmap_options opt;
  opt.unowned = 9;
  ASSERT_EQ(isthmus_xmap_options_init(&opt), ISTHMUS_OK);
  EXPECT_EQ(opt.unowned, ISTHMUS_UNOWNED_ERROR);
  EXPECT_STREQ(isthmus_error_name(ISTHMUS_ERR_MPI), "ISTHMUS_ERR_MPI");
  EXPECT_STREQ(isthmus_error_name(-4), "ISTHMUS_ERR_UNKNOWN");
  int rank = -1, size = -1;
  EXPECT_EQ(isthmus_context_rank(c.ctx, &rank, &size), ISTHMUS_OK);
  EXPECT_EQ(rank, world_rank());
  EXPECT_EQ(size, world_size());
  EXPECT_EQ(isthmus_redist_set_tracing(nullptr, 1), ISTHMUS_ERR_ARG);
  EXPECT_EQ(isthmus_redist_reset_counters(nullptr), ISTHMUS_ERR_ARG);
  EXPECT_EQ(isthmus_redist_start(nullptr, 0, nullptr, nullptr), ISTHMUS_ERR_ARG);
  EXPECT_EQ(isthmus_redist_exchange(nullptr, nullptr, nullptr), ISTHMUS_ERR_ARG);
}
