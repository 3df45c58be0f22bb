// Redistribution between decompositions: every element of every field and level is checked
// against f(global index, field, level), for every method, forward and reverse.
#include "redist_test_util.h"

namespace {

struct Parts {
  bool has_src = false, has_dst = false;
  std::vector<int64_t> src, dst;  // global indices in local order
};

// Three fields: double with 1 level, float with 3, int32 with 2.
const std::vector<int> kTypes = {ISTHMUS_DOUBLE, ISTHMUS_FLOAT, ISTHMUS_INT32};
const std::vector<int> kLevels = {1, 3, 2};

// Forward with every method (several rounds, persistent objects), then reverse.
// `intercomm` != MPI_COMM_NULL builds the map across the two groups of that intercommunicator.
void check_exchanges(MPI_Comm comm, int64_t n, const Parts& p, MPI_Comm intercomm = MPI_COMM_NULL) {
  Fixture fx(comm);
  isthmus_decomp* s = p.has_src ? fx.decomp(n, p.src) : nullptr;
  isthmus_decomp* d = p.has_dst ? fx.decomp(n, p.dst) : nullptr;
  isthmus_xmap* x = nullptr;
  int rc = intercomm == MPI_COMM_NULL ? isthmus_xmap_create(fx.ctx, s, d, nullptr, &x)
                                      : isthmus_xmap_create_inter(fx.ctx, intercomm, s, d, nullptr, &x);
  ASSERT_EQ(rc, ISTHMUS_OK) << isthmus_last_error(fx.ctx);
  isthmus_xmap_info info;
  isthmus_xmap_get_info(x, &info);
  // every source index is wanted by exactly one destination point in these tests
  EXPECT_EQ(info.send_points + info.self_points, static_cast<int64_t>(p.src.size()));
  EXPECT_EQ(info.recv_points + info.self_points, static_cast<int64_t>(p.dst.size()));
  EXPECT_EQ(info.global_unowned, 0);

  for (int method : all_methods()) {
    SCOPED_TRACE("method " + method_label(method));
    isthmus_redist* r = nullptr;
    ASSERT_EQ(isthmus_redist_create(fx.ctx, x, 3, kTypes.data(), kLevels.data(), method, &r), ISTHMUS_OK)
        << isthmus_last_error(fx.ctx);
    FieldSet src(kTypes, kLevels, static_cast<int64_t>(p.src.size()));
    FieldSet dst(kTypes, kLevels, static_cast<int64_t>(p.dst.size()));
    src.fill_reference(p.src);
    for (int round = 0; round < 3; ++round) {
      dst.fill_constant(-1);
      auto in = src.in();
      auto out = dst.out();
      ASSERT_EQ(isthmus_redist_exchange(r, p.has_src ? in.data() : nullptr, p.has_dst ? out.data() : nullptr),
                ISTHMUS_OK) << isthmus_last_error(fx.ctx);
      EXPECT_EQ(dst.count_wrong(p.dst), 0) << "round " << round;
    }
    // Reverse: every source index is held by exactly one destination in these tests.
    FieldSet back(kTypes, kLevels, static_cast<int64_t>(p.src.size()));
    back.fill_constant(-1);
    auto din = dst.in();
    auto bout = back.out();
    ASSERT_EQ(isthmus_redist_exchange_reverse(r, p.has_dst ? din.data() : nullptr,
                                              p.has_src ? bout.data() : nullptr), ISTHMUS_OK)
        << isthmus_last_error(fx.ctx);
    EXPECT_EQ(back.count_wrong(p.src), 0);
    isthmus_redist_destroy(&r);
  }
  isthmus_xmap_destroy(&x);
}

std::vector<int64_t> range(int64_t start, int64_t len) {
  std::vector<int64_t> v(len);
  for (int64_t i = 0; i < len; ++i) v[i] = start + i;
  return v;
}

// Source: blocks over src_ranks [s0, s1); destination: a random permutation dealt in random-size
// pieces over dst ranks [d0, d1). Both rank ranges are of comm.
Parts random_parts(int64_t n, int me, int s0, int s1, int d0, int d1, unsigned seed) {
  Parts p;
  if (me >= s0 && me < s1) {
    auto b = block(n, s1 - s0, me - s0);
    p.has_src = true;
    p.src = range(b.first, b.second);
  }
  std::vector<int64_t> perm = range(0, n);
  std::mt19937_64 rng(seed);
  std::shuffle(perm.begin(), perm.end(), rng);
  if (me >= d0 && me < d1) {
    p.has_dst = true;
    // uneven pieces: rank k of the destination gets a share proportional to k + 1
    int nd = d1 - d0, k = me - d0;
    int64_t weight = static_cast<int64_t>(nd) * (nd + 1) / 2;
    int64_t start = n * (static_cast<int64_t>(k) * (k + 1) / 2) / weight;
    int64_t end = n * (static_cast<int64_t>(k + 1) * (k + 2) / 2) / weight;
    p.dst.assign(perm.begin() + start, perm.begin() + end);
  }
  return p;
}

}  // namespace

TEST(Redist, RandomPermutationSameRanks) {
  int size = world_size(), me = world_rank();
  for (unsigned seed : {1u, 2u, 3u}) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    check_exchanges(MPI_COMM_WORLD, 1000 + 37 * size, random_parts(1000 + 37 * size, me, 0, size, 0, size, seed));
  }
}

// GAMIL2 -> CLM3 (C-Coupler paper sect. 2.2): a 128x60 grid in 2-D blocks to round-robin points.
TEST(Redist, BlockToRoundRobin) {
  int size = world_size(), me = world_rank();
  const int64_t nx = 128, ny = 60, n = nx * ny;
  int px = 1;
  for (int d = 1; d * d <= size; ++d)
    if (size % d == 0) px = d;
  int py = size / px;
  auto bx = block(nx, px, me % px), by = block(ny, py, me / px);
  Parts p;
  p.has_src = p.has_dst = true;
  for (int64_t j = 0; j < by.second; ++j)
    for (int64_t i = 0; i < bx.second; ++i) p.src.push_back((by.first + j) * nx + bx.first + i);
  for (int64_t g = me; g < n; g += size) p.dst.push_back(g);
  check_exchanges(MPI_COMM_WORLD, n, p);
}

TEST(Redist, DisjointRankSets) {
  int size = world_size(), me = world_rank();
  if (size < 2) GTEST_SKIP() << "needs two ranks";
  int s = (size + 1) / 2;  // sources [0, s), destinations [s, size)
  check_exchanges(MPI_COMM_WORLD, 997, random_parts(997, me, 0, s, s, size, 7));
}

TEST(Redist, OverlappingRankSetsAndRanksWithNeither) {
  int size = world_size(), me = world_rank();
  // sources [0, a), destinations [b, size); with b > a some ranks hold neither.
  int a = std::max(1, (2 * size) / 3), b = size / 3;
  check_exchanges(MPI_COMM_WORLD, 1201, random_parts(1201, me, 0, a, b, size, 11));
  if (size >= 3) {
    int a2 = size / 3, b2 = std::max(a2 + 1, (2 * size) / 3);
    check_exchanges(MPI_COMM_WORLD, 1201, random_parts(1201, me, 0, std::max(1, a2), b2, size, 12));
  }
}

TEST(Redist, OneRankOwnsEverything) {
  int size = world_size(), me = world_rank();
  // Every other rank has nothing to send.
  check_exchanges(MPI_COMM_WORLD, 500, random_parts(500, me, size - 1, size, 0, size, 5));
}

TEST(Redist, Intercommunicator) {
  int size = world_size(), me = world_rank();
  if (size < 2) GTEST_SKIP() << "needs two ranks";
  int s = size / 2;  // group A = [0, s) holds the source, group B the destination
  bool in_a = me < s;
  MPI_Comm local, inter;
  MPI_Comm_split(MPI_COMM_WORLD, in_a ? 0 : 1, me, &local);
  MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, in_a ? s : 0, 99, &inter);
  int lr = 0, ls = 0;
  MPI_Comm_rank(local, &lr);
  MPI_Comm_size(local, &ls);
  const int64_t n = 2048 + size;
  Parts p;
  if (in_a) {
    auto b = block(n, ls, lr);
    p.has_src = true;
    p.src = range(b.first, b.second);
  } else {
    p.has_dst = true;
    for (int64_t g = lr; g < n; g += ls) p.dst.push_back(n - 1 - g);  // reversed round-robin
  }
  check_exchanges(local, n, p, inter);
  MPI_Comm_free(&inter);
  MPI_Comm_free(&local);
}

// All fields of an exchange travel to a peer in one message: the counters show one message per
// peer per exchange, and the bytes of all fields and levels.
TEST(Redist, OneMessagePerPeerAndCounters) {
  int size = world_size(), me = world_rank();
  Parts p = random_parts(3000, me, 0, size, 0, size, 21);
  Fixture fx(MPI_COMM_WORLD);
  isthmus_decomp* s = fx.decomp(3000, p.src);
  isthmus_decomp* d = fx.decomp(3000, p.dst);
  isthmus_xmap* x = nullptr;
  ISTHMUS_OK_OR_FAIL(fx.ctx, isthmus_xmap_create(fx.ctx, s, d, nullptr, &x));
  isthmus_xmap_info info;
  isthmus_xmap_get_info(x, &info);
  EXPECT_EQ(info.send_peers, size > 1 ? size - 1 : 0);  // a random permutation touches everyone
  for (int method : {ISTHMUS_METHOD_P2P, ISTHMUS_METHOD_ALLTOALLV, ISTHMUS_METHOD_NEIGHBOR}) {
    isthmus_redist* r = nullptr;
    ISTHMUS_OK_OR_FAIL(fx.ctx, isthmus_redist_create(fx.ctx, x, 3, kTypes.data(), kLevels.data(), method, &r));
    isthmus_redist_set_tracing(r, 1);
    FieldSet src(kTypes, kLevels, static_cast<int64_t>(p.src.size()));
    FieldSet dst(kTypes, kLevels, static_cast<int64_t>(p.dst.size()));
    src.fill_reference(p.src);
    auto in = src.in();
    auto out = dst.out();
    for (int k = 0; k < 4; ++k) ISTHMUS_OK_OR_FAIL(fx.ctx, isthmus_redist_exchange(r, in.data(), out.data()));
    isthmus_trace_counters c;
    isthmus_redist_get_counters(r, &c);
    const int64_t point_bytes = 1 * 8 + 3 * 4 + 2 * 4;
    EXPECT_EQ(c.exchanges, 4);
    EXPECT_EQ(c.messages_sent, 4 * info.send_peers);
    EXPECT_EQ(c.messages_received, 4 * info.recv_peers);
    const int64_t status_bytes = 8;  // every message starts with a status word (docs/errors.md)
    EXPECT_EQ(c.bytes_sent, 4 * (info.send_points * point_bytes + info.send_peers * status_bytes));
    EXPECT_EQ(c.bytes_received, 4 * (info.recv_points * point_bytes + info.recv_peers * status_bytes));
    EXPECT_GE(c.total_seconds, c.wait_seconds);
    isthmus_redist_reset_counters(r);
    isthmus_redist_get_counters(r, &c);
    EXPECT_EQ(c.messages_sent, 0);
    int used = -1;
    isthmus_redist_method(r, &used);
    EXPECT_EQ(used, method);
    isthmus_redist_destroy(&r);
  }
  isthmus_xmap_destroy(&x);
}

// An index owned by several source ranks belongs to the lowest of them.
TEST(Redist, DuplicateOwnersLowestRankWins) {
  int size = world_size(), me = world_rank();
  const int64_t n = 100;
  Fixture fx(MPI_COMM_WORLD);
  // every rank owns [0, 60) shifted by nothing, and its own block of [60, 100)
  std::vector<int64_t> src = range(0, 60);
  auto b = block(40, size, me);
  for (int64_t i = 0; i < b.second; ++i) src.push_back(60 + b.first + i);
  std::vector<int64_t> dst;
  for (int64_t g = me; g < n; g += size) dst.push_back(g);
  isthmus_xmap_options opt;
  isthmus_xmap_options_init(&opt);
  opt.warn_duplicates = 1;
  isthmus_xmap* x = nullptr;
  testing::internal::CaptureStderr();
  int rc = isthmus_xmap_create(fx.ctx, fx.decomp(n, src), fx.decomp(n, dst), &opt, &x);
  std::string warnings = testing::internal::GetCapturedStderr();
  ASSERT_EQ(rc, ISTHMUS_OK) << isthmus_last_error(fx.ctx);
  // index block [0, ceil(100 / size)) has its home on rank 0, which warns about it
  if (me == 0 && size > 1) {
    int64_t home_end = std::min<int64_t>(60, (n + size - 1) / size);
    std::string ranks;
    for (int k = 0; k < size; ++k) ranks += (k ? ", " : "") + std::to_string(k);
    EXPECT_NE(warnings.find("isthmus: warning: rank 0 (directory): global indices [0, " +
                            std::to_string(home_end) + ") are owned by source ranks " + ranks +
                            "; rank 0, the lowest, owns them"), std::string::npos) << warnings;
  }
  if (size == 1) {
    EXPECT_EQ(warnings, "");
  }
  isthmus_xmap_info info;
  isthmus_xmap_get_info(x, &info);
  EXPECT_EQ(info.global_duplicates, static_cast<int64_t>(size - 1) * 60);
  int type = ISTHMUS_DOUBLE, lev = 1;
  isthmus_redist* r = nullptr;
  ISTHMUS_OK_OR_FAIL(fx.ctx, isthmus_redist_create(fx.ctx, x, 1, &type, &lev, ISTHMUS_METHOD_P2P, &r));
  std::vector<double> sv(src.size()), dv(dst.size(), -1);
  for (size_t i = 0; i < src.size(); ++i) sv[i] = src[i] * 10.0 + me;  // tells the owner apart
  const void* in[] = {sv.data()};
  void* out[] = {dv.data()};
  ISTHMUS_OK_OR_FAIL(fx.ctx, isthmus_redist_exchange(r, in, out));
  for (size_t i = 0; i < dst.size(); ++i) {
    int64_t g = dst[i];
    int owner = g < 60 ? 0 : [&] {
      for (int k = 0; k < size; ++k) {
        auto bk = block(40, size, k);
        if (g - 60 >= bk.first && g - 60 < bk.first + bk.second) return k;
      }
      return -1;
    }();
    EXPECT_EQ(dv[i], g * 10.0 + owner) << "global index " << g;
  }
  isthmus_redist_destroy(&r);
  isthmus_xmap_destroy(&x);
}

// An index held by several destination ranks reaches all of them; in reverse the lowest provides it.
TEST(Redist, SharedDestinationIndices) {
  int size = world_size(), me = world_rank();
  const int64_t n = 64;
  Fixture fx(MPI_COMM_WORLD);
  auto b = block(n, size, me);
  std::vector<int64_t> src = range(b.first, b.second);
  std::vector<int64_t> dst = range(0, n);  // every rank wants everything (a gather to all)
  isthmus_xmap* x = nullptr;
  ISTHMUS_OK_OR_FAIL(fx.ctx, isthmus_xmap_create(fx.ctx, fx.decomp(n, src), fx.decomp(n, dst), nullptr, &x));
  int type = ISTHMUS_DOUBLE, lev = 2;
  for (int method : all_methods()) {
    isthmus_redist* r = nullptr;
    ISTHMUS_OK_OR_FAIL(fx.ctx, isthmus_redist_create(fx.ctx, x, 1, &type, &lev, method, &r));
    std::vector<double> sv(2 * src.size()), dv(2 * n, -1);
    for (size_t i = 0; i < src.size(); ++i) {
      sv[i] = ref_value(src[i], 0, 0);
      sv[src.size() + i] = ref_value(src[i], 0, 1);
    }
    const void* in[] = {sv.data()};
    void* out[] = {dv.data()};
    ISTHMUS_OK_OR_FAIL(fx.ctx, isthmus_redist_exchange(r, in, out));
    for (int64_t g = 0; g < n; ++g) {
      EXPECT_EQ(dv[g], ref_value(g, 0, 0));
      EXPECT_EQ(dv[n + g], ref_value(g, 0, 1));
    }
    // reverse: each rank marks its copy with its rank; the lowest (0) must win everywhere
    for (int64_t g = 0; g < 2 * n; ++g) dv[g] = 1000.0 * me + g;
    std::vector<double> back(2 * src.size(), -1);
    const void* rin[] = {dv.data()};
    void* rout[] = {back.data()};
    ISTHMUS_OK_OR_FAIL(fx.ctx, isthmus_redist_exchange_reverse(r, rin, rout));
    for (size_t i = 0; i < src.size(); ++i) {
      EXPECT_EQ(back[i], static_cast<double>(src[i]));
      EXPECT_EQ(back[src.size() + i], static_cast<double>(n + src[i]));
    }
    isthmus_redist_destroy(&r);
  }
  isthmus_xmap_destroy(&x);
}

// With the fill policy, destination points that no source owns receive the fill value.
TEST(Redist, FillValueForUnownedPoints) {
  int size = world_size(), me = world_rank();
  const int64_t n = 300;
  Fixture fx(MPI_COMM_WORLD);
  auto b = block(200, size, me);  // sources own [0, 200) only
  std::vector<int64_t> src = range(b.first, b.second);
  std::vector<int64_t> dst;
  for (int64_t g = me; g < n; g += size) dst.push_back(g);
  isthmus_xmap_options opt;
  isthmus_xmap_options_init(&opt);
  opt.unowned = ISTHMUS_UNOWNED_FILL;
  opt.fill_value = -7;
  isthmus_xmap* x = nullptr;
  ISTHMUS_OK_OR_FAIL(fx.ctx, isthmus_xmap_create(fx.ctx, fx.decomp(n, src), fx.decomp(n, dst), &opt, &x));
  isthmus_xmap_info info;
  isthmus_xmap_get_info(x, &info);
  EXPECT_EQ(info.global_unowned, 100);
  int64_t local_unowned = 0;
  for (int64_t g : dst) local_unowned += g >= 200;
  EXPECT_EQ(info.fill_points, local_unowned);
  std::vector<int> types = {ISTHMUS_DOUBLE, ISTHMUS_INT32, ISTHMUS_FLOAT}, levels = {1, 2, 1};
  isthmus_redist* r = nullptr;
  ISTHMUS_OK_OR_FAIL(fx.ctx, isthmus_redist_create(fx.ctx, x, 3, types.data(), levels.data(), ISTHMUS_METHOD_AUTO, &r));
  FieldSet s(types, levels, static_cast<int64_t>(src.size())), d(types, levels, static_cast<int64_t>(dst.size()));
  s.fill_reference(src);
  d.fill_constant(99);
  auto in = s.in();
  auto out = d.out();
  ISTHMUS_OK_OR_FAIL(fx.ctx, isthmus_redist_exchange(r, in.data(), out.data()));
  for (int f = 0; f < 3; ++f)
    for (int l = 0; l < levels[f]; ++l)
      for (size_t i = 0; i < dst.size(); ++i)
        EXPECT_EQ(d.get(f, i, l), dst[i] < 200 ? ref_value(dst[i], f, l) : -7.0)
            << "field " << f << " level " << l << " global " << dst[i];
  isthmus_redist_destroy(&r);
  isthmus_xmap_destroy(&x);
}

// Identical source and destination decompositions: everything stays local, no message.
TEST(Redist, IdenticalDecompositionsAreLocalCopies) {
  int size = world_size(), me = world_rank();
  auto b = block(777, size, me);
  Parts p;
  p.has_src = p.has_dst = true;
  p.src = p.dst = range(b.first, b.second);
  std::reverse(p.dst.begin(), p.dst.end());
  Fixture fx(MPI_COMM_WORLD);
  isthmus_xmap* x = nullptr;
  ISTHMUS_OK_OR_FAIL(fx.ctx, isthmus_xmap_create(fx.ctx, fx.decomp(777, p.src), fx.decomp(777, p.dst), nullptr, &x));
  isthmus_xmap_info info;
  isthmus_xmap_get_info(x, &info);
  EXPECT_EQ(info.send_peers, 0);
  EXPECT_EQ(info.recv_peers, 0);
  EXPECT_EQ(info.self_points, b.second);
  isthmus_xmap_destroy(&x);
  check_exchanges(MPI_COMM_WORLD, 777, p);
}

// start/wait: the source may be overwritten as soon as start returns; wait delivers.
TEST(Redist, SplitExchangeOverlapsAndReusesInputs) {
  int size = world_size(), me = world_rank();
  const int64_t n = 1500;
  Parts p = random_parts(n, me, 0, size, 0, size, 31);
  Fixture fx(MPI_COMM_WORLD);
  isthmus_xmap* x = nullptr;
  ISTHMUS_OK_OR_FAIL(fx.ctx, isthmus_xmap_create(fx.ctx, fx.decomp(n, p.src), fx.decomp(n, p.dst), nullptr, &x));
  for (int method : all_methods()) {
    SCOPED_TRACE("method " + method_label(method));
    isthmus_redist* r = nullptr;
    ISTHMUS_OK_OR_FAIL(fx.ctx, isthmus_redist_create(fx.ctx, x, 3, kTypes.data(), kLevels.data(), method, &r));
    FieldSet src(kTypes, kLevels, static_cast<int64_t>(p.src.size()));
    FieldSet dst(kTypes, kLevels, static_cast<int64_t>(p.dst.size()));
    src.fill_reference(p.src);
    dst.fill_constant(-1);
    auto in = src.in();
    auto out = dst.out();
    ISTHMUS_OK_OR_FAIL(fx.ctx, isthmus_redist_start(r, ISTHMUS_FORWARD, in.data(), out.data()));
    src.fill_constant(-5);  // the model goes on computing: the data already left
    // A second start before wait is misuse: the pending exchange is completed (its outputs
    // written), and this rank takes part in the new one without data (docs/errors.md).
    EXPECT_EQ(isthmus_redist_start(r, ISTHMUS_FORWARD, in.data(), out.data()), ISTHMUS_ERR_ARG);
    EXPECT_EQ(std::string(isthmus_last_error(fx.ctx)),
              "isthmus: rank " + std::to_string(me) + ": isthmus_redist_start: start of a forward "
              "exchange: an exchange started earlier had not been waited for (it has now been "
              "completed)");
    EXPECT_EQ(dst.count_wrong(p.dst), 0);
    EXPECT_EQ(isthmus_redist_wait(r), ISTHMUS_ERR_ARG);  // nothing is pending any more
    EXPECT_EQ(std::string(isthmus_last_error(fx.ctx)),
              "isthmus: rank " + std::to_string(me) + ": isthmus_redist_wait: wait: no exchange was started");
    // and back
    FieldSet back(kTypes, kLevels, static_cast<int64_t>(p.src.size()));
    back.fill_constant(-1);
    auto din = dst.in();
    auto bout = back.out();
    ISTHMUS_OK_OR_FAIL(fx.ctx, isthmus_redist_start(r, ISTHMUS_REVERSE, din.data(), bout.data()));
    ISTHMUS_OK_OR_FAIL(fx.ctx, isthmus_redist_wait(r));
    EXPECT_EQ(back.count_wrong(p.src), 0);
    EXPECT_EQ(isthmus_redist_wait(r), ISTHMUS_ERR_ARG);
    EXPECT_EQ(std::string(isthmus_last_error(fx.ctx)),
              "isthmus: rank " + std::to_string(me) + ": isthmus_redist_wait: wait: no exchange was started");
    EXPECT_EQ(isthmus_redist_start(r, 2, din.data(), bout.data()), ISTHMUS_ERR_ARG);
    isthmus_redist_destroy(&r);
  }
  isthmus_xmap_destroy(&x);
}
