// The reduction mode of a redistribution (ISTHMUS_COMBINE_SUM): an index owned by several source
// ranks is sent by every one of them, and the destination writes the sum of the contributions,
// added in increasing order of source rank starting from the first. Every result is compared
// bit for bit with a serial reference that adds in that order.
#include <cmath>
#include <cstring>

#include "redist_test_util.h"

namespace {

constexpr double kFill = -7.25;

// Who owns what, and who wants what; every rank draws the same (the seed is shared), so each can
// compute the reference for its own points.
struct Pattern {
  int64_t n = 0;
  std::vector<std::vector<int>> owners;  // per global index, increasing ranks (may be empty)
  std::vector<int> holder;               // per global index, the destination rank or -1
  std::vector<std::vector<int64_t>> src, dst;  // per rank, global indices in local order
};

// Each index owned by 0..4 random ranks of [s0, s1) (none with probability `p_none`), each
// destination index by one random rank of [d0, d1) (a few by none), local orders shuffled.
Pattern make_pattern(int64_t n, int size, int s0, int s1, int d0, int d1, double p_none,
                     unsigned seed) {
  std::mt19937_64 rng(seed);
  Pattern p;
  p.n = n;
  p.owners.resize(n);
  p.holder.assign(n, -1);
  p.src.resize(size);
  p.dst.resize(size);
  std::uniform_real_distribution<double> u(0, 1);
  const int ns = s1 - s0;
  for (int64_t g = 0; g < n; ++g) {
    if (u(rng) >= p_none) {
      int k = 1 + static_cast<int>(rng() % static_cast<uint64_t>(std::min(4, ns)));
      std::vector<int> r(ns);
      for (int i = 0; i < ns; ++i) r[i] = s0 + i;
      std::shuffle(r.begin(), r.end(), rng);
      r.resize(k);
      std::sort(r.begin(), r.end());
      p.owners[g] = r;
      for (int o : r) p.src[o].push_back(g);
    }
    if (u(rng) < 0.95) {
      p.holder[g] = d0 + static_cast<int>(rng() % static_cast<uint64_t>(d1 - d0));
      p.dst[p.holder[g]].push_back(g);
    }
  }
  for (int r = 0; r < size; ++r) {
    std::shuffle(p.src[r].begin(), p.src[r].end(), rng);
    std::shuffle(p.dst[r].begin(), p.dst[r].end(), rng);
  }
  return p;
}

// What rank r contributes to index g (field f, level l): magnitudes spread over 2^-40..2^40, so
// that the order of the additions shows in the result. Index multiples of 13 with one owner
// contribute -0.0.
double contribution(const Pattern& p, int64_t g, int r, int f, int l) {
  if (g % 13 == 0 && p.owners[g].size() == 1) return -0.0;
  uint64_t h = static_cast<uint64_t>(g) * 0x9E3779B97F4A7C15ull ^
               (static_cast<uint64_t>(r) + 1) * 0xC2B2AE3D27D4EB4Full ^
               (static_cast<uint64_t>(f * 64 + l) + 7) * 0x165667B19E3779F9ull;
  h ^= h >> 29;
  h *= 0xBF58476D1CE4E5B9ull;
  h ^= h >> 32;
  double mant = static_cast<double>(h % 2000001) / 1000000.0 - 1.0;  // [-1, 1]
  int expo = static_cast<int>((h >> 24) % 81) - 40;
  return std::ldexp(mant, expo);
}

int32_t int_contribution(int64_t g, int r, int l) {
  uint64_t h = (static_cast<uint64_t>(g) + 3) * 0x9E3779B97F4A7C15ull ^
               (static_cast<uint64_t>(r * 8 + l) + 1) * 0xC2B2AE3D27D4EB4Full;
  h ^= h >> 31;
  return static_cast<int32_t>(static_cast<uint32_t>(h));  // full range: sums wrap
}

// The serial reference: contributions added in increasing rank order, in the field's type.
template <typename T>
T reference_sum(const Pattern& p, int64_t g, int f, int l) {
  const auto& o = p.owners[g];
  T x = static_cast<T>(contribution(p, g, o[0], f, l));
  for (size_t k = 1; k < o.size(); ++k) x += static_cast<T>(contribution(p, g, o[k], f, l));
  return x;
}

isthmus_xmap_options sum_options(bool fill) {
  isthmus_xmap_options opt;
  isthmus_xmap_options_init(&opt);
  opt.combine = ISTHMUS_COMBINE_SUM;
  if (fill) {
    opt.unowned = ISTHMUS_UNOWNED_FILL;
    opt.fill_value = kFill;
  }
  return opt;
}

const std::vector<int> kTypes = {ISTHMUS_DOUBLE, ISTHMUS_FLOAT, ISTHMUS_DOUBLE};
const std::vector<int> kLevels = {1, 3, 2};

// Source fields of rank `me`: every rank's own contributions.
FieldSet source_fields(const Pattern& p, int me, const std::vector<int>& types,
                       const std::vector<int>& levels) {
  const auto& idx = p.src[me];
  FieldSet s(types, levels, static_cast<int64_t>(idx.size()));
  for (int f = 0; f < s.nfields(); ++f)
    for (int l = 0; l < levels[f]; ++l)
      for (size_t k = 0; k < idx.size(); ++k) {
        char* base = s.data[f].data();
        size_t at = static_cast<size_t>(l) * idx.size() + k;
        double v = contribution(p, idx[k], me, f, l);
        if (types[f] == ISTHMUS_DOUBLE) reinterpret_cast<double*>(base)[at] = v;
        if (types[f] == ISTHMUS_FLOAT) reinterpret_cast<float*>(base)[at] = static_cast<float>(v);
        if (types[f] == ISTHMUS_INT32) reinterpret_cast<int32_t*>(base)[at] = int_contribution(idx[k], me, l);
      }
  return s;
}

// The destination fields rank `me` must hold, byte for byte. `skip_rank` >= 0: points to which
// that rank contributes (from another rank) keep `sentinel`.
FieldSet expected_fields(const Pattern& p, int me, const std::vector<int>& types,
                         const std::vector<int>& levels, int skip_rank = -1, double sentinel = 0) {
  const auto& idx = p.dst[me];
  FieldSet e(types, levels, static_cast<int64_t>(idx.size()));
  for (int f = 0; f < e.nfields(); ++f)
    for (int l = 0; l < levels[f]; ++l)
      for (size_t k = 0; k < idx.size(); ++k) {
        const int64_t g = idx[k];
        const auto& o = p.owners[g];
        char* base = e.data[f].data();
        size_t at = static_cast<size_t>(l) * idx.size() + k;
        const bool skipped = skip_rank >= 0 && skip_rank != me &&
                             std::find(o.begin(), o.end(), skip_rank) != o.end();
        if (o.empty() || skipped) {
          e.set(f, static_cast<int64_t>(k), l, o.empty() ? kFill : sentinel);
        } else if (types[f] == ISTHMUS_DOUBLE) {
          reinterpret_cast<double*>(base)[at] = reference_sum<double>(p, g, f, l);
        } else if (types[f] == ISTHMUS_FLOAT) {
          reinterpret_cast<float*>(base)[at] = reference_sum<float>(p, g, f, l);
        } else {
          uint32_t x = static_cast<uint32_t>(int_contribution(g, o[0], l));
          for (size_t j = 1; j < o.size(); ++j) x += static_cast<uint32_t>(int_contribution(g, o[j], l));
          std::memcpy(base + at * 4, &x, 4);
        }
      }
  return e;
}

// The first (field, level, point) where two field sets differ in any bit, or "".
std::string first_difference(const FieldSet& a, const FieldSet& b, const std::vector<int64_t>& idx) {
  for (int f = 0; f < a.nfields(); ++f) {
    const size_t es = FieldSet::esize(a.types[f]);
    for (int l = 0; l < a.levels[f]; ++l)
      for (int64_t k = 0; k < a.npts; ++k) {
        size_t at = (static_cast<size_t>(l) * a.npts + k) * es;
        if (std::memcmp(a.data[f].data() + at, b.data[f].data() + at, es) != 0)
          return "field " + std::to_string(f) + " level " + std::to_string(l) + " point " +
                 std::to_string(k) + " (global " + std::to_string(idx[k]) + "): got " +
                 std::to_string(a.get(f, k, l)) + ", expected " + std::to_string(b.get(f, k, l));
      }
  }
  return "";
}

bool same_bits(const FieldSet& a, const FieldSet& b) {
  for (int f = 0; f < a.nfields(); ++f)
    if (a.data[f] != b.data[f]) return false;
  return true;
}

// Forward (twice, blocking), split (inputs overwritten between start and wait) and reverse, for
// every method. `world` ranks in p are ranks of comm; with an intercommunicator the map is
// built across its groups and `me` is the rank in the pattern.
void check_sum(MPI_Comm comm, const Pattern& p, int me, const std::vector<int>& types,
               const std::vector<int>& levels, bool fill, MPI_Comm intercomm = MPI_COMM_NULL) {
  Fixture fx(comm);
  const bool has_src = !p.src[me].empty(), has_dst = !p.dst[me].empty();
  isthmus_decomp* s = has_src ? fx.decomp(p.n, p.src[me]) : nullptr;
  isthmus_decomp* d = has_dst ? fx.decomp(p.n, p.dst[me]) : nullptr;
  isthmus_xmap_options opt = sum_options(fill);
  isthmus_xmap* x = nullptr;
  int rc = intercomm == MPI_COMM_NULL ? isthmus_xmap_create(fx.ctx, s, d, &opt, &x)
                                      : isthmus_xmap_create_inter(fx.ctx, intercomm, s, d, &opt, &x);
  ASSERT_EQ(rc, ISTHMUS_OK) << fx.msg();

  // Counts: every contribution travels; duplicates as before.
  isthmus_xmap_info info;
  ASSERT_EQ(isthmus_xmap_get_info(x, &info), ISTHMUS_OK);
  int64_t contributions = 0, duplicates = 0, unowned = 0, sent = 0;
  for (int64_t g : p.dst[me]) {
    contributions += static_cast<int64_t>(p.owners[g].size());
    if (p.owners[g].empty()) ++unowned;
  }
  for (int64_t g = 0; g < p.n; ++g) {
    duplicates += std::max<int64_t>(0, static_cast<int64_t>(p.owners[g].size()) - 1);
    if (p.holder[g] >= 0 && std::count(p.owners[g].begin(), p.owners[g].end(), me)) ++sent;
  }
  int64_t global_unowned = 0;
  MPI_Allreduce(&unowned, &global_unowned, 1, MPI_INT64_T, MPI_SUM, comm);
  EXPECT_EQ(info.recv_points + info.self_points, contributions);
  EXPECT_EQ(info.send_points + info.self_points, sent);
  EXPECT_EQ(info.global_duplicates, duplicates);
  EXPECT_EQ(info.global_unowned, fill ? global_unowned : 0);

  FieldSet src = source_fields(p, me, types, levels);
  FieldSet want = expected_fields(p, me, types, levels);
  const int nf = static_cast<int>(types.size());
  for (int method : all_methods()) {
    SCOPED_TRACE("method " + method_label(method));
    isthmus_redist* r = nullptr;
    ASSERT_EQ(isthmus_redist_create(fx.ctx, x, nf, types.data(), levels.data(), method, &r),
              ISTHMUS_OK) << fx.msg();
    FieldSet out(types, levels, static_cast<int64_t>(p.dst[me].size()));
    // Enough rounds for the adaptive executor's profiling to pass through several plans.
    const int rounds = method == ISTHMUS_METHOD_AUTO || method == ISTHMUS_METHOD_ADAPTIVE ? 12 : 2;
    for (int round = 0; round < rounds; ++round) {
      out.fill_constant(12345);
      auto in = src.in();
      auto o = out.out();
      ASSERT_EQ(isthmus_redist_exchange(r, has_src ? in.data() : nullptr, has_dst ? o.data() : nullptr),
                ISTHMUS_OK) << fx.msg();
      EXPECT_TRUE(same_bits(out, want)) << "round " << round << ": "
                                        << first_difference(out, want, p.dst[me]);
    }
    {  // split: the inputs may be reused as soon as start returns
      FieldSet scratch = src;
      out.fill_constant(12345);
      auto in = scratch.in();
      auto o = out.out();
      ASSERT_EQ(isthmus_redist_start(r, ISTHMUS_FORWARD, has_src ? in.data() : nullptr,
                                     has_dst ? o.data() : nullptr), ISTHMUS_OK) << fx.msg();
      scratch.fill_constant(99);
      ASSERT_EQ(isthmus_redist_wait(r), ISTHMUS_OK) << fx.msg();
      EXPECT_TRUE(same_bits(out, want)) << "split: " << first_difference(out, want, p.dst[me]);
    }
    {  // reverse: every contributor gets the destination value; others keep theirs
      FieldSet dvals(types, levels, static_cast<int64_t>(p.dst[me].size()));
      for (int f = 0; f < nf; ++f)
        for (int l = 0; l < levels[f]; ++l)
          for (size_t k = 0; k < p.dst[me].size(); ++k)
            dvals.set(f, static_cast<int64_t>(k), l, ref_value(p.dst[me][k], f, l));
      FieldSet back(types, levels, static_cast<int64_t>(p.src[me].size()));
      back.fill_constant(-1);
      auto din = dvals.in();
      auto bout = back.out();
      ASSERT_EQ(isthmus_redist_exchange_reverse(r, has_dst ? din.data() : nullptr,
                                                has_src ? bout.data() : nullptr), ISTHMUS_OK)
          << fx.msg();
      int64_t bad = 0;
      for (int f = 0; f < nf; ++f)
        for (int l = 0; l < levels[f]; ++l)
          for (size_t k = 0; k < p.src[me].size(); ++k) {
            const int64_t g = p.src[me][k];
            double w = p.holder[g] >= 0 ? ref_value(g, f, l) : -1;
            if (back.get(f, static_cast<int64_t>(k), l) != w) ++bad;
          }
      EXPECT_EQ(bad, 0);
    }
    isthmus_redist_destroy(&r);
  }
  isthmus_xmap_destroy(&x);
}

}  // namespace

TEST(RedistSum, RandomOverlapsEveryMethodBitForBit) {
  const int size = world_size(), me = world_rank();
  for (unsigned seed : {1u, 2u}) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    Pattern p = make_pattern(700, size, 0, size, 0, size, 0.0, seed + 10 * size);
    check_sum(MPI_COMM_WORLD, p, me, kTypes, kLevels, false);
  }
}

TEST(RedistSum, UnownedPointsGetTheFillValue) {
  const int size = world_size(), me = world_rank();
  Pattern p = make_pattern(500, size, 0, size, 0, size, 0.1, 77 + size);
  check_sum(MPI_COMM_WORLD, p, me, kTypes, kLevels, true);
}

TEST(RedistSum, DisjointSourceAndDestinationRanks) {
  const int size = world_size(), me = world_rank();
  if (size < 2) GTEST_SKIP() << "needs two ranks";
  const int half = (size + 1) / 2;
  Pattern p = make_pattern(400, size, 0, half, half, size, 0.05, 5 + size);
  check_sum(MPI_COMM_WORLD, p, me, kTypes, kLevels, true);
}

// int32 fields are summed in two's complement, wrapping modulo 2^32 (exact and independent of
// the order); mixed with a double field in one redistribution.
TEST(RedistSum, Int32FieldsWrap) {
  const int size = world_size(), me = world_rank();
  Pattern p = make_pattern(300, size, 0, size, 0, size, 0.05, 31 + size);
  check_sum(MPI_COMM_WORLD, p, me, {ISTHMUS_INT32, ISTHMUS_DOUBLE}, {2, 1}, true);
}

// A single contribution is copied exactly, whatever its value: -0.0 stays -0.0 (0 + -0.0 would
// give +0.0), and a NaN payload passes unchanged.
TEST(RedistSum, SingleContributionIsCopiedExactly) {
  const int size = world_size(), me = world_rank();
  Fixture fx(MPI_COMM_WORLD);
  const int64_t n = 4 * size;
  // Rank r owns [4r, 4r + 4); every destination rank wants a rotated block.
  std::vector<int64_t> sidx, didx;
  for (int64_t k = 0; k < 4; ++k) sidx.push_back(4 * me + k);
  const int from = (me + 1) % size;
  for (int64_t k = 0; k < 4; ++k) didx.push_back(4 * from + k);
  isthmus_xmap_options opt = sum_options(false);
  isthmus_xmap* x = nullptr;
  ASSERT_EQ(isthmus_xmap_create(fx.ctx, fx.decomp(n, sidx), fx.decomp(n, didx), &opt, &x),
            ISTHMUS_OK) << fx.msg();
  int types[2] = {ISTHMUS_DOUBLE, ISTHMUS_FLOAT}, levels[2] = {1, 1};
  isthmus_redist* r = nullptr;
  ASSERT_EQ(isthmus_redist_create(fx.ctx, x, 2, types, levels, ISTHMUS_METHOD_P2P, &r), ISTHMUS_OK);
  uint64_t nan_bits = 0x7FF800000000BEEFull;
  double nan;
  std::memcpy(&nan, &nan_bits, 8);
  double din[4] = {-0.0, nan, 1e-310, -3.5};
  float fin[4] = {-0.0f, 1.0f, -1e-40f, 3.25f};
  double dout[4];
  float fout[4];
  const void* in[2] = {din, fin};
  void* out[2] = {dout, fout};
  ASSERT_EQ(isthmus_redist_exchange(r, in, out), ISTHMUS_OK) << fx.msg();
  EXPECT_EQ(std::memcmp(din, dout, sizeof din), 0);
  EXPECT_EQ(std::memcmp(fin, fout, sizeof fin), 0);
  EXPECT_TRUE(std::signbit(dout[0]));
  EXPECT_TRUE(std::signbit(fout[0]));
  isthmus_redist_destroy(&r);
  isthmus_xmap_destroy(&x);
}

// The order is that of the source ranks, not of the messages' arrival: every rank contributes
// to one index, with values where each order of addition gives another result.
TEST(RedistSum, AddedInIncreasingRankOrder) {
  const int size = world_size(), me = world_rank();
  Fixture fx(MPI_COMM_WORLD);
  std::vector<int64_t> sidx = {0}, didx;
  if (me == size - 1) didx = {0};
  isthmus_xmap_options opt = sum_options(false);
  isthmus_xmap* x = nullptr;
  ASSERT_EQ(isthmus_xmap_create(fx.ctx, fx.decomp(1, sidx), didx.empty() ? nullptr : fx.decomp(1, didx),
                                &opt, &x), ISTHMUS_OK) << fx.msg();
  // rank r contributes (r even: 1e16, r odd: -1e16) + r: big terms cancel in rank order only.
  auto value = [](int r) { return (r % 2 ? -1e16 : 1e16) + r; };
  double want = value(0);
  for (int r = 1; r < size; ++r) want += value(r);
  for (int method : all_methods()) {
    SCOPED_TRACE("method " + method_label(method));
    int type = ISTHMUS_DOUBLE, levels = 1;
    isthmus_redist* r = nullptr;
    ASSERT_EQ(isthmus_redist_create(fx.ctx, x, 1, &type, &levels, method, &r), ISTHMUS_OK);
    for (int round = 0; round < 12; ++round) {
      double in = value(me), out = 0;
      const void* pin[1] = {&in};
      void* pout[1] = {&out};
      ASSERT_EQ(isthmus_redist_exchange(r, pin, didx.empty() ? nullptr : pout), ISTHMUS_OK);
      if (!didx.empty()) {
        EXPECT_EQ(std::memcmp(&out, &want, 8), 0) << out << " vs " << want;
      }
    }
    isthmus_redist_destroy(&r);
  }
  isthmus_xmap_destroy(&x);
}

// Two components joined by an intercommunicator: the lower half owns (overlapping), the upper
// half receives. The merged communicator's rank order is MPI's choice, so the values are
// integers whose sums are exact in any order.
TEST(RedistSum, Intercommunicator) {
  const int size = world_size(), me = world_rank();
  if (size < 2) GTEST_SKIP() << "needs two ranks";
  const int half = size / 2;
  const bool in_a = me < half;
  MPI_Comm local, inter;
  MPI_Comm_split(MPI_COMM_WORLD, in_a ? 0 : 1, me, &local);
  MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, in_a ? half : 0, 98, &inter);
  const int64_t n = 300;
  Pattern p = make_pattern(n, size, 0, half, half, size, 0.0, 1234 + size);
  Fixture fx(local);
  isthmus_decomp* s = p.src[me].empty() ? nullptr : fx.decomp(n, p.src[me]);
  isthmus_decomp* d = p.dst[me].empty() ? nullptr : fx.decomp(n, p.dst[me]);
  isthmus_xmap_options opt = sum_options(false);
  isthmus_xmap* x = nullptr;
  ASSERT_EQ(isthmus_xmap_create_inter(fx.ctx, inter, s, d, &opt, &x), ISTHMUS_OK) << fx.msg();
  auto ival = [](int64_t g, int r, int l) { return static_cast<double>((g * 7 + r * 1000 + l) % 4096); };
  for (int method : all_methods()) {
    SCOPED_TRACE("method " + method_label(method));
    int types[2] = {ISTHMUS_DOUBLE, ISTHMUS_FLOAT}, levels[2] = {2, 1};
    isthmus_redist* r = nullptr;
    ASSERT_EQ(isthmus_redist_create(fx.ctx, x, 2, types, levels, method, &r), ISTHMUS_OK) << fx.msg();
    FieldSet src({ISTHMUS_DOUBLE, ISTHMUS_FLOAT}, {2, 1}, static_cast<int64_t>(p.src[me].size()));
    for (int f = 0; f < 2; ++f)
      for (int l = 0; l < levels[f]; ++l)
        for (size_t k = 0; k < p.src[me].size(); ++k)
          src.set(f, static_cast<int64_t>(k), l, ival(p.src[me][k], me, l));
    FieldSet out({ISTHMUS_DOUBLE, ISTHMUS_FLOAT}, {2, 1}, static_cast<int64_t>(p.dst[me].size()));
    for (int round = 0; round < 3; ++round) {
      out.fill_constant(-1);
      auto in = src.in();
      auto o = out.out();
      ASSERT_EQ(isthmus_redist_exchange(r, s ? in.data() : nullptr, d ? o.data() : nullptr), ISTHMUS_OK)
          << fx.msg();
      int64_t bad = 0;
      for (int f = 0; f < 2; ++f)
        for (int l = 0; l < levels[f]; ++l)
          for (size_t k = 0; k < p.dst[me].size(); ++k) {
            double w = 0;
            for (int o2 : p.owners[p.dst[me][k]]) w += ival(p.dst[me][k], o2, l);
            if (out.get(f, static_cast<int64_t>(k), l) != w) ++bad;
          }
      EXPECT_EQ(bad, 0) << "round " << round;
    }
    isthmus_redist_destroy(&r);
  }
  isthmus_xmap_destroy(&x);
  MPI_Comm_free(&inter);
  MPI_Comm_free(&local);
}

// The error contract (docs/errors.md).
TEST(RedistSum, BadCombineOnOneRankFailsEverywhere) {
  const int size = world_size(), me = world_rank();
  Fixture fx(MPI_COMM_WORLD);
  std::vector<int64_t> idx = {me};
  isthmus_decomp* s = fx.decomp(size, idx);
  isthmus_decomp* d = fx.decomp(size, idx);
  auto prefix = [&] { return "isthmus: rank " + std::to_string(me) + ": isthmus_xmap_create: "; };
  const int last = size - 1;
  {
    Watchdog w("bad combine value");
    isthmus_xmap_options opt;
    isthmus_xmap_options_init(&opt);
    EXPECT_EQ(opt.combine, ISTHMUS_COMBINE_LOWEST);
    if (me == last) opt.combine = 7;
    isthmus_xmap* x = nullptr;
    int rc = isthmus_xmap_create(fx.ctx, s, d, &opt, &x);
    EXPECT_TRUE(same_code_everywhere(rc, ISTHMUS_ERR_ARG));
    EXPECT_EQ(x, nullptr);
    const std::string why = "options.combine is 7 (0 ISTHMUS_COMBINE_LOWEST, 1 ISTHMUS_COMBINE_SUM)";
    EXPECT_EQ(fx.msg(), me == last ? prefix() + why
                                   : prefix() + "failed on rank " + std::to_string(last) + ": " + why);
  }
  if (size > 1) {
    Watchdog w("combine differs between ranks");
    isthmus_xmap_options opt = sum_options(false);
    if (me != last) opt.combine = ISTHMUS_COMBINE_LOWEST;
    isthmus_xmap* x = nullptr;
    int rc = isthmus_xmap_create(fx.ctx, s, d, &opt, &x);
    EXPECT_TRUE(same_code_everywhere(rc, ISTHMUS_ERR_ARG));
    EXPECT_EQ(fx.msg(), prefix() + "options.combine must be the same on every rank, but rank 0 "
                                   "passes 0 and rank " + std::to_string(last) + " passes 1");
  }
  {  // and a correct call afterwards works
    isthmus_xmap_options opt = sum_options(false);
    isthmus_xmap* x = nullptr;
    ASSERT_EQ(isthmus_xmap_create(fx.ctx, s, d, &opt, &x), ISTHMUS_OK) << fx.msg();
    isthmus_xmap_destroy(&x);
  }
}

// A rank that passes NULL inputs takes part without data: its receivers fail naming it, and
// leave exactly the points it contributes to unwritten; every other point is right.
TEST(RedistSum, MisuseAtExchangeLeavesItsPointsUnwritten) {
  const int size = world_size(), me = world_rank();
  const int last = size - 1;
  Pattern p = make_pattern(400, size, 0, size, 0, size, 0.05, 555 + size);
  if (p.src[last].empty()) GTEST_SKIP() << "the last rank owns nothing";
  Fixture fx(MPI_COMM_WORLD);
  const bool has_src = !p.src[me].empty(), has_dst = !p.dst[me].empty();
  isthmus_decomp* s = has_src ? fx.decomp(p.n, p.src[me]) : nullptr;
  isthmus_decomp* d = has_dst ? fx.decomp(p.n, p.dst[me]) : nullptr;
  isthmus_xmap_options opt = sum_options(true);
  isthmus_xmap* x = nullptr;
  ASSERT_EQ(isthmus_xmap_create(fx.ctx, s, d, &opt, &x), ISTHMUS_OK) << fx.msg();
  bool hears_last = false;  // some point here has a contribution from the last rank
  for (int64_t g : p.dst[me])
    for (int o : p.owners[g]) hears_last |= (o == last && me != last);
  const double sentinel = 4242;
  FieldSet src = source_fields(p, me, kTypes, kLevels);
  FieldSet want = expected_fields(p, me, kTypes, kLevels, last, sentinel);
  for (int method : all_methods()) {
    for (bool split : {false, true}) {
      SCOPED_TRACE("method " + method_label(method) + (split ? " split" : ""));
      Watchdog w("sum misuse " + method_label(method));
      isthmus_redist* r = nullptr;
      ASSERT_EQ(isthmus_redist_create(fx.ctx, x, 3, kTypes.data(), kLevels.data(), method, &r), ISTHMUS_OK);
      FieldSet out(kTypes, kLevels, static_cast<int64_t>(p.dst[me].size()));
      out.fill_constant(sentinel);
      auto in = src.in();
      auto o = out.out();
      const void* const* pin = me == last ? nullptr : (has_src ? in.data() : nullptr);
      int rc;
      if (split) {
        rc = isthmus_redist_start(r, ISTHMUS_FORWARD, pin, has_dst ? o.data() : nullptr);
        if (rc == ISTHMUS_OK) rc = isthmus_redist_wait(r);
      } else {
        rc = isthmus_redist_exchange(r, pin, has_dst ? o.data() : nullptr);
      }
      if (me == last) {
        EXPECT_EQ(rc, ISTHMUS_ERR_ARG);
      } else if (hears_last) {
        EXPECT_EQ(rc, ISTHMUS_ERR_ARG);
        const std::string what = split ? "wait of a forward exchange" : "forward exchange";
        const std::string fn = split ? "isthmus_redist_wait" : "isthmus_redist_exchange";
        EXPECT_EQ(fx.msg(), "isthmus: rank " + std::to_string(me) + ": " + fn + ": " + what +
                                ": rank " + std::to_string(last) +
                                " could not take part (ISTHMUS_ERR_ARG; its own message says "
                                "why) and sent no data: the points it sends to this rank were "
                                "not written");
        EXPECT_TRUE(same_bits(out, want)) << first_difference(out, want, p.dst[me]);
      } else {
        EXPECT_EQ(rc, ISTHMUS_OK) << fx.msg();
        EXPECT_TRUE(same_bits(out, want)) << first_difference(out, want, p.dst[me]);
      }
      // The next correct exchange works.
      auto in2 = src.in();
      ASSERT_EQ(isthmus_redist_exchange(r, has_src ? in2.data() : nullptr, has_dst ? o.data() : nullptr),
                ISTHMUS_OK) << fx.msg();
      FieldSet full = expected_fields(p, me, kTypes, kLevels);
      EXPECT_TRUE(same_bits(out, full)) << first_difference(out, full, p.dst[me]);
      isthmus_redist_destroy(&r);
    }
  }
  isthmus_xmap_destroy(&x);
}
