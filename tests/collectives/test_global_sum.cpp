// The five global sums. gather and reprosum must give the same bits at every rank count
// (1..world size, on sub-communicators) and for block, cyclic and random decompositions with
// shuffled local order; reprosum must be the exact sum rounded to nearest, checked against an
// exact fixed-point big integer computed here, on ill-conditioned data (1e16 + 1 - 1e16,
// values spanning 2^-900..2^900 that cancel, subnormals, sums beyond the double range).
#include <gtest/gtest.h>

#include <algorithm>
#include <cfenv>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "base/error.h"
#include "collectives/global_sum.h"
#include "mpi_test_util.h"

#if defined(__SSE2__)
#include <pmmintrin.h>
#endif

using namespace isthmus;

namespace {

// Exact sum of doubles: signed base-2^32 digits of the value in units of 2^-1074 (every double
// is an integer multiple of 2^-1074 below 2^1024, so 80 digits hold any sum of < 2^400 values).
struct Exact {
  std::vector<int64_t> d = std::vector<int64_t>(80, 0);
  void add(double x, int sign = 1) {
    uint64_t u;
    std::memcpy(&u, &x, 8);
    uint64_t be = (u >> 52) & 0x7ff, m = u & ((uint64_t(1) << 52) - 1);
    if (be) m |= uint64_t(1) << 52;
    if (!m) return;
    int64_t pos = int64_t(std::max<uint64_t>(be, 1)) - 1075 + 1074;
    unsigned __int128 v = (unsigned __int128)m << (pos % 32);
    int s = (u >> 63 ? -1 : 1) * sign;
    for (int64_t i = pos / 32; v; ++i, v >>= 32) d[size_t(i)] += s * int64_t(uint64_t(v) & 0xffffffffu);
  }
  // Normalizes to digits in [0, 2^32) and returns the sign (-1, 0, 1); the digits then hold |x|.
  int normalize() {
    std::vector<int64_t> original = d;
    int64_t carry = 0;
    for (auto& x : d) {
      int64_t t = x + carry;
      int64_t r = ((t % (int64_t(1) << 32)) + (int64_t(1) << 32)) % (int64_t(1) << 32);
      carry = (t - r) >> 32;
      x = r;
    }
    if (carry < 0) {
      d = original;
      for (auto& x : d) x = -x;
      normalize();
      return -1;
    }
    for (auto x : d)
      if (x) return 1;
    return 0;
  }
  int64_t highest() const {  // highest set bit of the normalized magnitude, -1 if zero
    for (size_t i = d.size(); i-- > 0;)
      if (d[i]) return int64_t(i) * 32 + 63 - __builtin_clzll(uint64_t(d[i]));
    return -1;
  }
  bool only_bit(int64_t pos) const {
    for (size_t i = 0; i < d.size(); ++i) {
      uint64_t want = (pos / 32 == int64_t(i)) ? (uint64_t(1) << (pos % 32)) : 0;
      if (uint64_t(d[i]) != want) return false;
    }
    return true;
  }
};

// True when r is the exact sum of v rounded to nearest (|r - exact| <= half an ulp of r).
bool correctly_rounded(const std::vector<double>& v, double r, std::string* why) {
  Exact e;
  for (double x : v) e.add(x);
  e.add(r, -1);
  e.normalize();
  int64_t ulp_pos = 0;  // ulp of r in units of 2^-1074
  if (r != 0 && std::fabs(r) >= DBL_MIN) {
    int ex;
    std::frexp(r, &ex);
    ulp_pos = ex - 53 + 1074;
  }
  int64_t h = e.highest();
  bool ok = h < 0 || (ulp_pos > 0 && (h < ulp_pos - 1 || (h == ulp_pos - 1 && e.only_bit(h))));
  if (!ok && why) *why = "error of 2^" + std::to_string(h - 1074) + " with an ulp of 2^" + std::to_string(ulp_pos - 1074);
  return ok;
}

uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

const int N = 999;
enum Dataset { Smooth, Cancel, Wide, Subnormal, Zeros, NearMax, NumDatasets };
const char* dataset_name[] = {"smooth", "cancel", "wide", "subnormal", "zeros", "near-max"};

double value(int ds, int g) {
  uint64_t h = mix(uint64_t(ds) * 100000 + uint64_t(g));
  switch (ds) {
    case Smooth: return std::sin(g * 0.01) * 1e3 + 1e-3 * std::cos(g * 0.7);
    case Cancel: {  // 1e16, 1, -1e16 in triples (with a twist so the pattern varies): sum 333
      int t = g % 3;
      double big = 1e16 * (1 + (g / 3) % 5);
      return t == 0 ? big : t == 1 ? 1.0 : -big;
    }
    case Wide: {  // x, then -x(1 + tiny): the huge parts cancel, the small ones decide the sum
      int pair = g / 2;
      uint64_t hp = mix(uint64_t(ds) * 100000 + uint64_t(pair) + 7777);
      double m = 1.0 + double(hp % (uint64_t(1) << 52)) / 4503599627370496.0;
      int e = int(hp >> 53) % 1801 - 900;
      double x = std::ldexp(m, e) * ((hp >> 40) & 1 ? -1 : 1);
      if (g == N - 1) return std::ldexp(1.0, -900);
      return g % 2 == 0 ? x : -x;
    }
    case Subnormal: {
      double s = std::ldexp(double(h % 1000), -1074);  // subnormal
      if (g % 7 == 0) s = DBL_MIN * (1 + double(h % 17) / 16);
      return (h >> 63) ? -s : s;
    }
    case Zeros: return g % 2 ? -0.0 : 0.0;
    case NearMax: return g < 3 ? (g == 2 ? -DBL_MAX : DBL_MAX) : (g % 2 ? 1.0 : -1.0) * double(g);
  }
  return 0;
}

// The points of a rank among q: block, cyclic or random owner (seeded), local order shuffled
// except for block.
// Of n points; "cyclic" deals them out in runs of `run` consecutive points.
std::vector<int> owned_points(int n, int run, int kind, int seed, int q, int r) {
  std::vector<int> pts;
  for (int g = 0; g < n; ++g) {
    int owner = kind == 0 ? int(int64_t(g) * q / n) : kind == 1 ? (g / run) % q : int(mix(uint64_t(seed) * 7919 + g) % q);
    if (owner == r) pts.push_back(g);
  }
  if (kind != 0) std::shuffle(pts.begin(), pts.end(), std::mt19937(unsigned(seed * 131 + r)));
  return pts;
}

std::vector<int> my_points(int kind, int seed, int q, int r) { return owned_points(N, 1, kind, seed, q, r); }

struct Local {
  std::vector<int64_t> index;
  std::vector<std::vector<double>> field;
  std::vector<const double*> ptr;
};

// Datasets 0 .. count-1 of value_of at the points pts, in their local order.
Local data_at(const std::vector<int>& pts, int count, double (*value_of)(int, int)) {
  Local l;
  l.field.resize(size_t(count));
  for (int g : pts) l.index.push_back(g);
  for (int ds = 0; ds < count; ++ds) {
    for (int g : pts) l.field[size_t(ds)].push_back(value_of(ds, g));
    l.ptr.push_back(l.field[size_t(ds)].data());
  }
  return l;
}

Local local_data(const std::vector<int>& pts) { return data_at(pts, NumDatasets, value); }

std::vector<double> sums_on(MPI_Comm comm, GlobalSumMethod m, const Local& l) {
  std::vector<double> s(NumDatasets, -12345.0);
  global_sum(comm, NumDatasets, l.ptr.data(), int64_t(l.index.size()), l.index.data(), m, s.data());
  return s;
}

bool same_bits(double a, double b) { return std::memcmp(&a, &b, 8) == 0; }

std::vector<double> all_values(int ds) {
  std::vector<double> v;
  for (int g = 0; g < N; ++g) v.push_back(value(ds, g));
  return v;
}

}  // namespace

TEST(GlobalSum, ReprosumIsCorrectlyRoundedAtEveryRankCountAndDecomposition) {
  int me = world_rank(), n = world_size();
  std::vector<double> ref(NumDatasets);
  // The serial reference: one rank, all points in order.
  {
    Local all = local_data(my_points(0, 0, 1, 0));
    ref = sums_on(MPI_COMM_SELF, GlobalSumMethod::Reprosum, all);
    for (int ds = 0; ds < NumDatasets; ++ds) {
      std::string why;
      EXPECT_TRUE(correctly_rounded(all_values(ds), ref[size_t(ds)], &why)) << dataset_name[ds] << ": " << why;
    }
    // The checker itself rejects a sum one off, or a lost tiny remainder.
    EXPECT_FALSE(correctly_rounded(all_values(Cancel), 332.0, nullptr));
    EXPECT_FALSE(correctly_rounded(all_values(Wide), 0.0, nullptr));
    EXPECT_FALSE(correctly_rounded(all_values(Smooth), std::nextafter(ref[Smooth], 1e300), nullptr));
    EXPECT_EQ(ref[Cancel], 333.0);
    EXPECT_EQ(ref[Wide], std::ldexp(1.0, -900));
    EXPECT_TRUE(same_bits(ref[Zeros], 0.0));
  }
  for (int q = 1; q <= n; ++q) {
    MPI_Comm sub;
    MPI_Comm_split(MPI_COMM_WORLD, me < q ? 0 : MPI_UNDEFINED, me, &sub);
    bool ok = true;
    std::string what;
    if (sub != MPI_COMM_NULL) {
      for (int kind = 0; kind < 3; ++kind)
        for (int seed = 1; seed <= (kind == 2 ? 2 : 1); ++seed) {
          Local l = local_data(my_points(kind, seed, q, me));
          std::vector<double> s = sums_on(sub, GlobalSumMethod::Reprosum, l);
          for (int ds = 0; ds < NumDatasets; ++ds)
            if (!same_bits(s[size_t(ds)], ref[size_t(ds)])) {
              ok = false;
              what = std::string(dataset_name[ds]) + " on " + std::to_string(q) + " ranks, decomposition " +
                     std::to_string(kind) + ": " + std::to_string(s[size_t(ds)]);
            }
        }
      MPI_Comm_free(&sub);
    }
    EXPECT_TRUE(all_ranks(ok)) << what;
  }
}

TEST(GlobalSum, GatherIsTheOrderedSerialSumEverywhere) {
  int me = world_rank(), n = world_size();
  std::vector<double> want(NumDatasets, 0.0);
  for (int ds = 0; ds < NumDatasets; ++ds)
    for (int g = 0; g < N; ++g) want[size_t(ds)] += value(ds, g);
  for (int q = 1; q <= n; ++q) {
    MPI_Comm sub;
    MPI_Comm_split(MPI_COMM_WORLD, me < q ? 0 : MPI_UNDEFINED, me, &sub);
    bool ok = true;
    std::string what;
    if (sub != MPI_COMM_NULL) {
      for (int kind = 0; kind < 3; ++kind) {
        Local l = local_data(my_points(kind, 3, q, me));
        std::vector<double> s = sums_on(sub, GlobalSumMethod::Gather, l);
        for (int ds = 0; ds < NumDatasets; ++ds)
          if (!same_bits(s[size_t(ds)], want[size_t(ds)]))
            ok = false, what = std::string(dataset_name[ds]) + " on " + std::to_string(q) + " ranks";
      }
      MPI_Comm_free(&sub);
    }
    EXPECT_TRUE(all_ranks(ok)) << what;
  }
}

TEST(GlobalSum, OtherMethodsAreCloseAndLsum8IsReproducibleForAFixedDecomposition) {
  int me = world_rank(), n = world_size();
  Local l = local_data(my_points(2, 5, n, me));
  std::vector<double> exact = sums_on(MPI_COMM_WORLD, GlobalSumMethod::Reprosum, l);
  std::vector<double> a = sums_on(MPI_COMM_WORLD, GlobalSumMethod::Lsum8, l);
  std::vector<double> b = sums_on(MPI_COMM_WORLD, GlobalSumMethod::Lsum8, l);
  bool same = true;
  for (int ds = 0; ds < NumDatasets; ++ds) same = same && same_bits(a[size_t(ds)], b[size_t(ds)]);
  EXPECT_TRUE(all_ranks(same));
  std::vector<double> root = a;
  MPI_Bcast(root.data(), NumDatasets, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  EXPECT_TRUE(all_ranks(std::memcmp(root.data(), a.data(), sizeof(double) * NumDatasets) == 0));
  double scale = 0;
  for (int g = 0; g < N; ++g) scale += std::fabs(value(Smooth, g));
  for (GlobalSumMethod m : {GlobalSumMethod::Lsum8, GlobalSumMethod::Lsum16, GlobalSumMethod::Ddpdd}) {
    std::vector<double> s = sums_on(MPI_COMM_WORLD, m, l);
    EXPECT_NEAR(s[Smooth], exact[Smooth], 1e-13 * scale) << global_sum_method_name(m);
    if (m != GlobalSumMethod::Lsum8) {
      // 1e16 + 1 needs 54 bits: quadruple and double-double precision keep the ones.
      EXPECT_EQ(s[Cancel], 333.0) << global_sum_method_name(m);
      // DBL_MAX + DBL_MAX - DBL_MAX: only quadruple precision has the exponent range.
      if (m == GlobalSumMethod::Lsum16) {
        EXPECT_EQ(s[NearMax], exact[NearMax]);
      }
    }
  }
  EXPECT_EQ(exact[NearMax], DBL_MAX);  // DBL_MAX - 498 rounds to DBL_MAX
}

TEST(GlobalSum, SpecialValues) {
  int me = world_rank(), n = world_size();
  const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  // field 0: +Inf on the last rank; 1: NaN on rank 0; 2: +Inf and -Inf; 3: -Inf; 4: overflow
  std::vector<std::vector<double>> f(5, std::vector<double>(2, 1.0));
  if (me == n - 1) f[0][1] = inf;
  if (me == 0) f[1][0] = nan;
  if (me == 0) f[2][0] = inf;
  if (me == n - 1) f[2][1] = -inf;
  if (me == 0) f[3][1] = -inf;
  f[4][0] = f[4][1] = DBL_MAX;
  std::vector<const double*> p;
  for (auto& v : f) p.push_back(v.data());
  std::vector<int64_t> idx = {2 * me, 2 * me + 1};
  for (GlobalSumMethod m : {GlobalSumMethod::Reprosum, GlobalSumMethod::Gather, GlobalSumMethod::Lsum8,
                            GlobalSumMethod::Lsum16, GlobalSumMethod::Ddpdd}) {
    std::vector<double> s(5);
    global_sum(MPI_COMM_WORLD, 5, p.data(), 2, idx.data(), m, s.data());
    const char* name = global_sum_method_name(m);
    EXPECT_EQ(s[0], inf) << name;
    EXPECT_TRUE(std::isnan(s[1])) << name;
    EXPECT_TRUE(std::isnan(s[2])) << name;
    EXPECT_EQ(s[3], -inf) << name;
    EXPECT_EQ(s[4], inf) << name;
  }
}

TEST(GlobalSum, EmptyRanksAndErrors) {
  int me = world_rank(), n = world_size();
  // Only the last rank holds points.
  std::vector<double> v = {1.5, 2.25};
  std::vector<int64_t> idx = {1, 0};
  const double* p = v.data();
  for (int m = 0; m <= 5; ++m) {
    double s = -1;
    bool mine = me == n - 1;
    global_sum(MPI_COMM_WORLD, 1, mine ? &p : nullptr, mine ? 2 : 0, mine ? idx.data() : nullptr,
               GlobalSumMethod(m), &s);
    EXPECT_EQ(s, 3.75) << global_sum_method_name(GlobalSumMethod(m));
  }
  std::vector<int64_t> dup = {0, 0};
  try {
    double s;
    global_sum(MPI_COMM_WORLD, 1, &p, 2, dup.data(), GlobalSumMethod::Gather, &s);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ISTHMUS_ERR_ARG);
    EXPECT_STREQ(e.what(), "global_sum gather: global index 0 is given twice (the indices must number the points 0..N-1)");
  }
  std::vector<int64_t> far = {0, 5 * n};
  try {
    double s;
    global_sum(MPI_COMM_WORLD, 1, &p, 2, far.data(), GlobalSumMethod::Gather, &s);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ISTHMUS_ERR_ARG);
    EXPECT_EQ(std::string(e.what()), "global_sum gather: global index " + std::to_string(5 * n) +
                                         " is outside [0, number of points) (the indices must number the points 0..N-1)");
  }
  try {
    parse_global_sum_method("bfb");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "unknown global sum method 'bfb' (auto, gather, lsum8, lsum16, ddpdd, reprosum)");
  }
}

// Long fields: many chunks per rank, so that reprosum's local accumulation takes all its paths
// (levels guessed from the previous chunk or not, more levels, remainders and huge values summed
// per exponent, Inf and NaN deep in a field). The same exactness and bit-for-bit checks.
namespace {

const int NL = 40000;
enum LongDataset { Growing, Jumps, Wide100, Wide400, WithSubnormals, Huge, Edge, Sparse, NumLong };
const char* long_name[] = {"growing", "jumps", "wide100", "wide400", "with-subnormals", "huge", "edge", "sparse"};

double long_value(int ds, int g) {
  uint64_t h = mix(uint64_t(ds) * 1000003 + uint64_t(g) + 99);
  double m = 1.0 + double(h % (uint64_t(1) << 52)) / 4503599627370496.0;  // [1, 2)
  double sign = (h >> 63) ? -1 : 1;
  switch (ds) {
    case Growing: return std::sin(g * 1e-3) * std::exp(g * 2e-4);
    case Jumps: return sign * std::ldexp(m, 40 * ((g / 700) % 5) - 80);  // the scale jumps 2^40
    case Wide100: return sign * std::ldexp(m, int((h >> 20) % 101) - 50);
    case Wide400: return sign * std::ldexp(m, int((h >> 20) % 401) - 200);
    case WithSubnormals: return g % 97 ? sign * m : sign * std::ldexp(double(h % 4096), -1074);
    case Huge: {  // pairs +-2^(1015..1021) that cancel exactly, and small values
      int t = g % 3;
      double big = std::ldexp(1.5, 1015 + (g / 3) % 7);
      return t == 0 ? big : t == 1 ? -big : sign * m;
    }
    case Edge:  // just below a binade, all of one sign, and a tiny value now and then
      return g % 1000 == 999 ? std::ldexp(1.0, -60) : std::ldexp(2.0 - std::ldexp(1.0, -52), 30);
    case Sparse: return g % 5000 == 17 ? sign * m : (g % 2 ? -0.0 : 0.0);
  }
  return 0;
}

std::vector<int> long_points(int kind, int seed, int q, int r) { return owned_points(NL, 37, kind, seed, q, r); }

Local long_data(const std::vector<int>& pts) { return data_at(pts, NumLong, long_value); }

std::vector<double> long_sums_on(MPI_Comm comm, const Local& l) {
  std::vector<double> s(NumLong, -12345.0);
  global_sum(comm, NumLong, l.ptr.data(), int64_t(l.index.size()), l.index.data(), GlobalSumMethod::Reprosum,
             s.data());
  return s;
}

}  // namespace

TEST(GlobalSum, ReprosumIsExactOnLongFieldsAtEveryRankCount) {
  int me = world_rank(), n = world_size();
  std::vector<double> ref;
  {
    Local all = long_data(long_points(0, 0, 1, 0));
    ref = long_sums_on(MPI_COMM_SELF, all);
    for (int ds = 0; ds < NumLong; ++ds) {
      std::string why;
      EXPECT_TRUE(correctly_rounded(all.field[size_t(ds)], ref[size_t(ds)], &why)) << long_name[ds] << ": " << why;
    }
  }
  for (int q = 1; q <= n; ++q) {
    MPI_Comm sub;
    MPI_Comm_split(MPI_COMM_WORLD, me < q ? 0 : MPI_UNDEFINED, me, &sub);
    bool ok = true;
    std::string what;
    if (sub != MPI_COMM_NULL) {
      for (int kind = 0; kind < 3; ++kind) {
        Local l = long_data(long_points(kind, 4, q, me));
        std::vector<double> s = long_sums_on(sub, l);
        for (int ds = 0; ds < NumLong; ++ds)
          if (!same_bits(s[size_t(ds)], ref[size_t(ds)]))
            ok = false, what = std::string(long_name[ds]) + " on " + std::to_string(q) + " ranks, decomposition " +
                              std::to_string(kind) + ": " + std::to_string(s[size_t(ds)]);
      }
      MPI_Comm_free(&sub);
    }
    EXPECT_TRUE(all_ranks(ok)) << what;
  }
}

TEST(GlobalSum, ReprosumSpecialValuesDeepInLongFields) {
  int me = world_rank(), n = world_size();
  const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  // Every rank holds 5000 points of 0.5; one value (at global position 4321 or 9876 of rank 0's
  // or the last rank's field) is replaced. 0: NaN; 1: +Inf; 2: -Inf; 3: +Inf and -Inf in
  // different chunks; 4: NaN and Inf; 5: all -0; 6: DBL_MAX twice (the sum overflows); 7: a NaN
  // in a chunk of zeros.
  const int per = 5000, F = 8;
  std::vector<std::vector<double>> f(F, std::vector<double>(per, 0.5));
  const bool first = me == 0, last = me == n - 1;
  if (last) f[0][4321] = nan;
  if (first) f[1][4321] = inf;
  if (last) f[2][9 * per / 10] = -inf;
  if (first) f[3][100] = inf;
  if (last) f[3][4900] = -inf;
  if (first) f[4][2000] = inf;
  if (last) f[4][3000] = nan;
  std::fill(f[5].begin(), f[5].end(), -0.0);
  if (first) f[6][1500] = DBL_MAX, f[6][1600] = DBL_MAX;
  std::fill(f[7].begin(), f[7].end(), 0.0);
  if (last) f[7][2500] = nan;
  std::vector<const double*> p;
  for (auto& v : f) p.push_back(v.data());
  std::vector<double> s(F);
  global_sum(MPI_COMM_WORLD, F, p.data(), per, nullptr, GlobalSumMethod::Reprosum, s.data());
  EXPECT_TRUE(std::isnan(s[0]));
  EXPECT_EQ(s[1], inf);
  EXPECT_EQ(s[2], -inf);
  EXPECT_TRUE(std::isnan(s[3]));
  EXPECT_TRUE(std::isnan(s[4]));
  EXPECT_TRUE(same_bits(s[5], 0.0));
  EXPECT_EQ(s[6], inf);
  EXPECT_TRUE(std::isnan(s[7]));
  double quiet = std::numeric_limits<double>::quiet_NaN();
  EXPECT_TRUE(same_bits(s[0], quiet) && same_bits(s[3], quiet) && same_bits(s[4], quiet) && same_bits(s[7], quiet));
}

TEST(GlobalSum, ReprosumIgnoresTheCallersFloatingPointModes) {
  // Rounding toward zero, and flush-to-zero with denormals-are-zero (x86): the same bits, also
  // where subnormals, or the subnormal low bits of tiny normal values, decide the sum.
  int me = world_rank(), n = world_size();
  Local l = long_data(long_points(2, 6, n, me));
  for (int k = 0; k < 2; ++k) {
    std::vector<double> v;
    for (int g : long_points(2, 6, n, me)) {
      uint64_t h = mix(uint64_t(g / 3) + 555 + 1000000 * uint64_t(k));
      double m = (1.0 + double(h % (uint64_t(1) << 52)) / 4503599627370496.0) * ((h >> 63) ? -1 : 1);
      double x = k == 0 ? std::ldexp(m, int(h >> 40) % 41 - 20) : std::ldexp(m, -1000 - int(h >> 40) % 20);
      double small = k == 0 ? std::ldexp(double(h % 4096), -1074) : std::ldexp(1.0, -1021);
      v.push_back(g % 3 == 0 ? x : g % 3 == 1 ? -x : small);  // x and -x cancel
    }
    l.field.push_back(v);
  }
  l.ptr.clear();
  for (auto& f : l.field) l.ptr.push_back(f.data());
  const int F = int(l.field.size());
  auto sums = [&] {
    std::vector<double> s(size_t(F), -12345.0);
    global_sum(MPI_COMM_WORLD, F, l.ptr.data(), int64_t(l.index.size()), nullptr, GlobalSumMethod::Reprosum,
               s.data());
    return s;
  };
  const std::vector<double> want = sums();
  EXPECT_NE(want[size_t(F) - 2], 0.0);
  std::fenv_t saved;
  std::fegetenv(&saved);
  for (int mode = 0; mode < 2; ++mode) {
    if (mode == 0) {
      std::fesetround(FE_TOWARDZERO);
    } else {
#if defined(__SSE2__)
      _MM_SET_FLUSH_ZERO_MODE(_MM_FLUSH_ZERO_ON);
      _MM_SET_DENORMALS_ZERO_MODE(_MM_DENORMALS_ZERO_ON);
#else
      continue;
#endif
    }
    std::vector<double> got = sums();
    std::fesetenv(&saved);
    for (int ds = 0; ds < F; ++ds)
      EXPECT_TRUE(same_bits(got[size_t(ds)], want[size_t(ds)])) << "field " << ds << " in mode " << mode << " " << got[size_t(ds)] << " " << want[size_t(ds)];
  }
}
