#include "collectives/global_sum.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstring>
#include <cfenv>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "base/agreement.h"
#include "base/error.h"
#include "base/wait.h"

namespace isthmus {

const char* global_sum_method_name(GlobalSumMethod m) {
  switch (m) {
    case GlobalSumMethod::Auto: return "auto";
    case GlobalSumMethod::Gather: return "gather";
    case GlobalSumMethod::Lsum8: return "lsum8";
    case GlobalSumMethod::Lsum16: return "lsum16";
    case GlobalSumMethod::Ddpdd: return "ddpdd";
    case GlobalSumMethod::Reprosum: return "reprosum";
  }
  return "unknown";
}

GlobalSumMethod parse_global_sum_method(const char* name) {
  std::string s = name ? name : "";
  for (int m = 0; m <= 5; ++m)
    if (s == global_sum_method_name(static_cast<GlobalSumMethod>(m)))
      return static_cast<GlobalSumMethod>(m);
  fail(ISTHMUS_ERR_ARG, "unknown global sum method '", s,
       "' (auto, gather, lsum8, lsum16, ddpdd, reprosum)");
}

namespace {

// ---- gather ------------------------------------------------------------------------------

// all_index: the ranks with points give global_index (agreed on every rank before: ranks
// without points may pass none). The local limit (n x nf values in one message) was checked
// before the agreement; the total is known on rank 0 only, which broadcasts its verdict.
void sum_gather(MPI_Comm comm, int rank, int size, int nf, const double* const* fields, int64_t n,
                const int64_t* gidx, bool all_index, double* sums) {
  int nl = int(n);
  std::vector<int> counts(rank == 0 ? size : 0), displs;
  ISTHMUS_MPI(wmpi::Gather(&nl, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, comm));
  int64_t total = 0;
  if (rank == 0) {
    displs.resize(size);
    for (int p = 0; p < size; ++p) total += counts[p];
    if (total <= INT_MAX / std::max(1, nf))
      for (int p = 0, at = 0; p < size; ++p) displs[p] = at, at += counts[p];
  }
  ISTHMUS_MPI(wmpi::Bcast(&total, 1, MPI_INT64_T, 0, comm));
  if (total > INT_MAX / std::max(1, nf))
    fail(ISTHMUS_ERR_ARG, "global_sum gather: ", total, " points x ", nf,
         " fields exceed the 2^31 - 1 values one gather message holds");
  // Values travel field-major per rank: one gather for all fields.
  std::vector<double> mine(size_t(n) * nf);
  for (int f = 0; f < nf; ++f)
    if (n) std::memcpy(mine.data() + size_t(f) * n, fields[f], size_t(n) * sizeof(double));
  std::vector<int> vcounts, vdispls;
  if (rank == 0) {
    vcounts.resize(size), vdispls.resize(size);
    for (int p = 0; p < size; ++p) vcounts[p] = counts[p] * nf, vdispls[p] = displs[p] * nf;
  }
  std::vector<double> all(rank == 0 ? size_t(total) * nf : 0);
  ISTHMUS_MPI(wmpi::Gatherv(mine.data(), nl * nf, MPI_DOUBLE, all.data(), vcounts.data(),
                          vdispls.data(), MPI_DOUBLE, 0, comm));
  std::vector<int64_t> idx(rank == 0 && all_index ? size_t(total) : 0);
  if (all_index)
    ISTHMUS_MPI(wmpi::Gatherv(gidx, nl, MPI_INT64_T, idx.data(), counts.data(), displs.data(),
                            MPI_INT64_T, 0, comm));
  // Rank 0 broadcasts [status, bad index, sums...] so that a bad index fails on every rank.
  std::vector<double> result(2 + nf, 0.0);
  if (rank == 0) {
    std::vector<int64_t> pos(size_t(total), -1);  // gathered position of global index g
    bool ok = true;
    for (int p = 0; p < size && ok; ++p)
      for (int i = 0; i < counts[p]; ++i) {
        int64_t at = int64_t(displs[p]) + i;
        int64_t g = all_index ? idx[size_t(at)] : at;
        if (g < 0 || g >= total || pos[size_t(g)] >= 0) {
          result[0] = g < 0 || g >= total ? 1 : 2;
          result[1] = double(g);
          ok = false;
          break;
        }
        pos[size_t(g)] = at;
      }
    if (ok) {
      // Serial sum in global index order; the gathered layout is rank-major, field-major.
      std::vector<int> rank_of(static_cast<size_t>(total), 0);
      for (int p = 0; p < size; ++p)
        for (int i = 0; i < counts[p]; ++i) rank_of[size_t(displs[p]) + i] = p;
      for (int f = 0; f < nf; ++f) {
        double s = 0;
        for (int64_t g = 0; g < total; ++g) {
          int64_t at = pos[size_t(g)];
          int p = rank_of[size_t(at)];
          s += all[size_t(vdispls[p]) + size_t(f) * counts[p] + size_t(at - displs[p])];
        }
        result[2 + f] = s;
      }
    }
  }
  ISTHMUS_MPI(wmpi::Bcast(result.data(), 2 + nf, MPI_DOUBLE, 0, comm));
  if (result[0] == 1)
    fail(ISTHMUS_ERR_ARG, "global_sum gather: global index ", int64_t(result[1]),
         " is outside [0, number of points) (the indices must number the points 0..N-1)");
  if (result[0] == 2)
    fail(ISTHMUS_ERR_ARG, "global_sum gather: global index ", int64_t(result[1]),
         " is given twice (the indices must number the points 0..N-1)");
  std::copy(result.begin() + 2, result.end(), sums);
}

// ---- lsum8 -------------------------------------------------------------------------------

void sum_lsum8(MPI_Comm comm, int nf, const double* const* fields, int64_t n, double* sums) {
  std::vector<double> local(nf, 0.0);
  for (int f = 0; f < nf; ++f) {
    double s = 0;
    const double* x = fields[f];
    for (int64_t i = 0; i < n; ++i) s += x[i];
    local[f] = s;
  }
  ISTHMUS_MPI(wmpi::Allreduce(local.data(), sums, nf, MPI_DOUBLE, MPI_SUM, comm));
}

// ---- lsum16 ------------------------------------------------------------------------------

#ifdef __SIZEOF_FLOAT128__
using Quad = __float128;
#else
using Quad = long double;
#endif

void quad_sum_op(void* in, void* inout, int* len, MPI_Datatype*) {
  // Quad values travel as raw bytes; memcpy keeps this free of alignment assumptions.
  for (int i = 0; i < *len; ++i) {
    Quad a, b;
    std::memcpy(&a, static_cast<char*>(in) + i * sizeof(Quad), sizeof(Quad));
    std::memcpy(&b, static_cast<char*>(inout) + i * sizeof(Quad), sizeof(Quad));
    b += a;
    std::memcpy(static_cast<char*>(inout) + i * sizeof(Quad), &b, sizeof(Quad));
  }
}

// Derived types and user operations are created per call and freed on every path.
struct TypeAndOp {
  MPI_Datatype type = MPI_DATATYPE_NULL;
  MPI_Op op = MPI_OP_NULL;
  TypeAndOp(MPI_Datatype base, int count, MPI_User_function* fn) {
    ISTHMUS_MPI(MPI_Type_contiguous(count, base, &type));
    ISTHMUS_MPI(MPI_Type_commit(&type));
    ISTHMUS_MPI(MPI_Op_create(fn, 1, &op));
  }
  ~TypeAndOp() {
    if (op != MPI_OP_NULL) MPI_Op_free(&op);
    if (type != MPI_DATATYPE_NULL) MPI_Type_free(&type);
  }
};

void sum_lsum16(MPI_Comm comm, int nf, const double* const* fields, int64_t n, double* sums) {
  std::vector<Quad> local(nf), global(nf);
  for (int f = 0; f < nf; ++f) {
    Quad s = 0;
    const double* x = fields[f];
    for (int64_t i = 0; i < n; ++i) s += x[i];
    local[f] = s;
  }
  TypeAndOp t(MPI_BYTE, int(sizeof(Quad)), quad_sum_op);
  ISTHMUS_MPI(wmpi::Allreduce(local.data(), global.data(), nf, t.type, t.op, comm));
  for (int f = 0; f < nf; ++f) sums[f] = double(global[f]);
}

// ---- ddpdd -------------------------------------------------------------------------------

// He & Ding (2001): add double-double a to double-double b, in place in b.
inline void dd_add(const double* a, double* b) {
  double t1 = a[0] + b[0];
  if (!std::isfinite(t1)) {  // the error terms would turn Inf into NaN
    b[0] = t1, b[1] = 0;
    return;
  }
  double e = t1 - a[0];
  double t2 = ((b[0] - e) + (a[0] - (t1 - e))) + a[1] + b[1];
  b[0] = t1 + t2;
  b[1] = t2 - (b[0] - t1);
}

void ddpdd_op(void* in, void* inout, int* len, MPI_Datatype*) {
  const double* a = static_cast<const double*>(in);
  double* b = static_cast<double*>(inout);
  for (int i = 0; i < *len; ++i) dd_add(a + 2 * i, b + 2 * i);
}

void sum_ddpdd(MPI_Comm comm, int nf, const double* const* fields, int64_t n, double* sums) {
  std::vector<double> local(2 * size_t(nf)), global(2 * size_t(nf));
  for (int f = 0; f < nf; ++f) {
    double hi = 0, lo = 0;
    const double* x = fields[f];
    for (int64_t i = 0; i < n; ++i) {  // Knuth two-sum, error accumulated in lo
      double s = hi + x[i];
      double bp = s - hi;
      lo += (hi - (s - bp)) + (x[i] - bp);
      hi = s;
    }
    if (!std::isfinite(hi) || !std::isfinite(lo)) {
      hi = 0, lo = 0;
      for (int64_t i = 0; i < n; ++i) hi += x[i];
    }
    double s = hi + lo;  // renormalize
    local[2 * f] = s;
    local[2 * f + 1] = std::isfinite(s) ? lo - (s - hi) : 0;
  }
  TypeAndOp t(MPI_DOUBLE, 2, ddpdd_op);
  ISTHMUS_MPI(wmpi::Allreduce(local.data(), global.data(), nf, t.type, t.op, comm));
  for (int f = 0; f < nf; ++f) sums[f] = global[2 * f] + global[2 * f + 1];
}

// ---- reprosum ----------------------------------------------------------------------------
//
// A finite double is an integer multiple of 2^-1074 below 2^1024. Every rank holds the exact
// sum of its values as signed integer digits on ONE grid, fixed before any data is seen: digit
// j weighs 2^(j B - 1074), with B = 62 - ceil(log2(ranks)) bits so that the digits of all ranks
// add up in 64-bit integers without overflow. A single MPI_SUM reduction over int64 is then
// exact (so independent of the order of the ranks), and the exact total is rounded once.
//
// The local exact sum is one pass over L1-sized chunks of each field (after Demmel & Nguyen's
// binned summation and Rump, Ogita & Oishi's error-free extraction, made exact):
//  1. a bound on the chunk's largest magnitude M: the previous chunk's, with a binade of
//     margin, checked against the chunk's own M found in the same pass (else, and for the
//     first chunk, a pass that finds M and whether the chunk holds Inf or NaN comes first);
//  2. levels of floating-point accumulators S = 1.5 * 2^E, E chosen from M so that every
//     accumulator stays in its binade [2^E, 2^(E+1)) for the whole chunk: then t = S + x is
//     rounded to a multiple of ulp(S) = 2^(E-52), q = t - S is exact, and r = x - q (exact: the
//     rounding error of an addition is representable) goes on to the next level, 43 bits lower.
//     Levels are added until every remainder is zero (a level with ulp 2^-1074 always
//     leaves none), so nothing is lost: the chunk's sum is exactly the sum of the accumulators.
//     Two vectors per level (4 accumulators with SSE2, 8 with AVX2) hide the latency of the
//     additions; no branch in the loop.
//  3. each accumulator holds (S - 1.5 * 2^E) / ulp(S) in its mantissa bits: an integer of at
//     most 50 bits, added exactly into the rank's 128-bit digits once per chunk.
// Chunks with Inf, NaN or values near the top of the double range, and the remainders that
// would need more than 6 levels (a chunk spanning more than about 250 binades), are summed
// exactly per binary exponent instead (128-bit bins, the previous method, about 3x slower).

struct Grid {
  int64_t low = 0;  // exponent of bit 0 of level 0
  int B = 62, L = 0;
};

inline uint64_t bits_of(double x) {
  uint64_t u;
  std::memcpy(&u, &x, sizeof u);
  return u;
}

inline double double_of(uint64_t u) {
  double x;
  std::memcpy(&x, &u, sizeof x);
  return x;
}

// exact magnitude in units of 2^low as a bit string, rounded to the nearest double
struct BitString {
  std::vector<uint64_t> w;
  explicit BitString(size_t nbits) : w(nbits / 64 + 3, 0) {}
  void put(uint64_t v, int64_t pos) {  // v < 2^63
    size_t word = size_t(pos / 64);
    int off = int(pos % 64);
    w[word] |= v << off;
    if (off && (v >> (64 - off))) w[word + 1] |= v >> (64 - off);
  }
  bool bit(int64_t pos) const { return pos >= 0 && ((w[size_t(pos / 64)] >> (pos % 64)) & 1u); }
  int64_t highest() const {
    for (size_t i = w.size(); i-- > 0;)
      if (w[i]) return int64_t(i) * 64 + 63 - __builtin_clzll(w[i]);
    return -1;
  }
  bool any_below(int64_t pos) const {  // any set bit at a position < pos
    for (int64_t i = 0; i < pos && i / 64 < int64_t(w.size()); i += 64) {
      uint64_t word = w[size_t(i / 64)];
      if (pos - i < 64) word &= (uint64_t(1) << (pos - i)) - 1;
      if (word) return true;
    }
    return false;
  }
  uint64_t take(int64_t pos, int count) const {  // bits [pos, pos+count), pos >= 0, count <= 63
    size_t word = size_t(pos / 64);
    int off = int(pos % 64);
    uint64_t v = w[word] >> off;
    if (off && word + 1 < w.size()) v |= w[word + 1] << (64 - off);
    return v & ((uint64_t(1) << count) - 1);
  }
};

double round_levels(const int64_t* S, const Grid& g) {
  using i128 = __int128;
  const int B = g.B, L = g.L;
  const i128 mask = (i128(1) << B) - 1;
  std::vector<int64_t> digit(L);
  auto normalize = [&](int sign) {  // digits in [0, 2^B), returns the carry out of the top
    i128 carry = 0;
    for (int j = 0; j < L; ++j) {
      i128 t = i128(S[j]) * sign + carry;
      digit[j] = int64_t(t & mask);
      carry = t >> B;  // floor division by 2^B
    }
    return carry;
  };
  int sign = 1;
  i128 top = normalize(1);
  if (top < 0) sign = -1, top = normalize(-1);
  BitString m(size_t(L + 1) * B + 128);
  for (int j = 0; j < L; ++j)
    if (digit[j]) m.put(uint64_t(digit[j]), int64_t(j) * B);
  uint64_t top_lo = uint64_t(top & ((i128(1) << 62) - 1)), top_hi = uint64_t(top >> 62);
  if (top_lo) m.put(top_lo, int64_t(L) * B);
  if (top_hi) m.put(top_hi, int64_t(L) * B + 62);
  int64_t h = m.highest();
  if (h < 0) return 0.0;
  int64_t q = std::max<int64_t>(h - 52, -1074 - g.low);  // position of the last kept bit
  double r;
  if (q <= 0) {
    r = std::ldexp(double(m.take(0, int(h + 1))), int(g.low));
  } else {
    uint64_t kept = m.take(q, int(h - q + 1));
    bool half = m.bit(q - 1), sticky = m.any_below(q - 1);
    if (half && (sticky || (kept & 1))) ++kept;
    int64_t e = q + g.low;
    r = e > 2000 ? std::numeric_limits<double>::infinity() : std::ldexp(double(kept), int(e));
  }
  return sign * r;
}

// The rank's exact sum of one field: signed 128-bit digits acc[j] of weight 2^(j B - 1074)
// (not normalized; each receives at most a dozen additions of < 2^115 per chunk, or of < 2^125
// per exponent bin, far from 2^127).
struct Digits {
  int B;
  __int128* acc;
  // acc += v * 2^(s - 1074), |v| < 2^64, 0 <= s
  void add(__int128 v, int64_t s) const {
    int64_t j = s / B;
    int off = int(s - j * B);
    __int128 w = v * (__int128(1) << off);  // |w| < 2^(64 + 61)
    acc[j] += w & ((__int128(1) << B) - 1);
    acc[j + 1] += w >> B;  // floor: w = (w >> B) 2^B + (w & mask)
  }
};

constexpr int kChunk = 1024;     // values per chunk: 8 KiB, in L1 while its levels are summed
constexpr int kLanes = 8;        // at most 8 accumulators per level (4 with 2-lane vectors)
constexpr int kLog2PerLane = 8;  // at most 2^8 values per accumulator per chunk
constexpr int kMaxLevels = 6;    // then the remainders go to the exponent bins
constexpr int kMinE = -1022;     // a level with this E has ulp 2^-1074: exact for any double
constexpr int kMaxE = 1021;      // the accumulators stay below 2^1023
// E of the level below a level with exponent E: its inputs are |r| <= 2^(E-53), at most 2^8 of
// them per accumulator, so |sum of q| <= 2^8 (|r| + ulp/2) < 2^(E'-2) + 2^(E'-45): the
// accumulator stays within [1.25, 1.75) 2^E' up to a few ulps, far inside its binade.
inline int next_level(int E) { return std::max(E - 53 + kLog2PerLane + 2, kMinE); }
// E of the first level for values |x| < 2^(e+1) (the same bound)
inline int first_level(int e) { return std::max(e + 1 + kLog2PerLane + 2, kMinE); }
inline double sigma(int E) { return double_of(uint64_t(E + 1023) << 52 | uint64_t(1) << 51); }
// e with |x| < 2^(e+1) for every |x| <= M (M finite)
inline int exponent_bound(double M) { return int(bits_of(M) >> 52) - 1023; }

// The kernels are written once with GCC's generic vectors (2 lanes: SSE2, NEON; 4 lanes: AVX2,
// selected at run time), two vectors per level, so 4 or 8 independent accumulators.
typedef double v2d __attribute__((vector_size(16)));
typedef uint64_t v2u __attribute__((vector_size(16)));
typedef double v4d __attribute__((vector_size(32)));
typedef uint64_t v4u __attribute__((vector_size(32)));
#define ISTHMUS_KERNEL inline __attribute__((always_inline))

// Largest |x| (NaN ignored) of c values, c a multiple of 8; special: some value is Inf or NaN
// (the top bit of |x| + 2^52 is set exactly for exponent field 0x7ff).
template <class V, class U>
ISTHMUS_KERNEL double chunk_max(const double* x, int c, bool* special) {
  constexpr int W = int(sizeof(V) / 8);
  U abs_mask, two52, sp = {};
  for (int k = 0; k < W; ++k) abs_mask[k] = ~0ull >> 1, two52[k] = 1ull << 52;
  V m0 = {}, m1 = {};
  for (int i = 0; i < c; i += 2 * W) {
    U a, b;
    std::memcpy(&a, x + i, sizeof a), std::memcpy(&b, x + i + W, sizeof b);
    a &= abs_mask, b &= abs_mask;
    sp |= (a + two52) | (b + two52);
    V da = (V)a, db = (V)b;
    m0 = da > m0 ? da : m0;
    m1 = db > m1 ? db : m1;
  }
  m0 = m1 > m0 ? m1 : m0;
  uint64_t any = 0;
  double M = 0;
  for (int k = 0; k < W; ++k) any |= sp[k], M = std::max(M, double(m0[k]));
  *special = (any >> 63) != 0;
  return M;
}

// One or two levels over c values (a multiple of 8): s1 (and s2) hold 2W accumulators each;
// the remainders go to r (which may be x). With Max, *maxabs = the largest |x| (NaN ignored).
// Returns whether some remainder is not zero.
template <class V, class U, bool Two, bool Max>
ISTHMUS_KERNEL bool deposit(const double* x, int c, double* s1, double* s2, double* r, double* maxabs) {
  constexpr int W = int(sizeof(V) / 8);
  V a1, b1, a2 = {}, b2 = {}, m0 = {}, m1 = {};
  U abs_mask, nz = {};
  for (int k = 0; k < W; ++k) abs_mask[k] = ~0ull >> 1;
  std::memcpy(&a1, s1, sizeof a1), std::memcpy(&b1, s1 + W, sizeof b1);
  if (Two) std::memcpy(&a2, s2, sizeof a2), std::memcpy(&b2, s2 + W, sizeof b2);
  for (int i = 0; i < c; i += 2 * W) {
    V xa, xb;
    std::memcpy(&xa, x + i, sizeof xa), std::memcpy(&xb, x + i + W, sizeof xb);
    if (Max) {
      V aa = (V)((U)xa & abs_mask), ab = (V)((U)xb & abs_mask);
      m0 = aa > m0 ? aa : m0;
      m1 = ab > m1 ? ab : m1;
    }
    V ta = a1 + xa, tb = b1 + xb;  // rounded to the accumulator's ulp
    xa -= ta - a1, xb -= tb - b1;  // the exact remainders
    a1 = ta, b1 = tb;
    if (Two) {
      ta = a2 + xa, tb = b2 + xb;
      xa -= ta - a2, xb -= tb - b2;
      a2 = ta, b2 = tb;
    }
    std::memcpy(r + i, &xa, sizeof xa), std::memcpy(r + i + W, &xb, sizeof xb);
    nz |= (U)xa | (U)xb;
  }
  std::memcpy(s1, &a1, sizeof a1), std::memcpy(s1 + W, &b1, sizeof b1);
  if (Two) std::memcpy(s2, &a2, sizeof a2), std::memcpy(s2 + W, &b2, sizeof b2);
  uint64_t any = 0;
  double M = 0;
  m0 = m1 > m0 ? m1 : m0;
  for (int k = 0; k < W; ++k) any |= nz[k], M = std::max(M, double(m0[k]));
  if (Max) *maxabs = M;
  return (any << 1) != 0;  // -0 is zero
}

// Adds the accumulators of a level with exponent E to the digits: each is 1.5 * 2^E plus a
// multiple k of ulp = 2^(E-52), |k| < 2^50, and k + 2^51 is its mantissa field.
inline void flush_level(const double* s, int lanes, int E, const Digits& d) {
  int64_t k = 0;
  for (int a = 0; a < lanes; ++a) k += int64_t(bits_of(s[a]) & ((uint64_t(1) << 52) - 1)) - (int64_t(1) << 51);
  if (k) d.add(k, E - 52 + 1074);
}

// Exact per-exponent sums (bin[be] = sum of +-m over the finite values with biased exponent be)
// and the Inf / NaN flags, for the chunks the levels do not take.
struct Bins {
  std::vector<__int128> bin;
  bool nan = false, pinf = false, ninf = false;
  void add(const double* x, int64_t n) {
    if (bin.empty()) bin.assign(2048, 0);
    const uint64_t frac = (uint64_t(1) << 52) - 1;
    for (int64_t i = 0; i < n; ++i) {
      uint64_t u = bits_of(x[i]);
      uint64_t be = (u >> 52) & 0x7ff;
      if (be == 0x7ff) {
        if (u & frac) nan = true;
        else (u >> 63 ? ninf : pinf) = true;
        continue;
      }
      int64_t m = int64_t((u & frac) | (be ? uint64_t(1) << 52 : 0));
      bin[be] += u >> 63 ? -m : m;
    }
  }
  void flush(const Digits& d) {  // bin be has the scale 2^(max(be, 1) - 1075)
    for (int be = 0; be < int(bin.size()); ++be) {
      __int128 b = bin[size_t(be)];
      if (!b) continue;
      int64_t s = std::max(be, 1) - 1;
      d.add(b & ((__int128(1) << 64) - 1), s);  // |b| < 2^117: two 64-bit halves
      d.add(b >> 64, s + 64);
    }
    bin.clear();
  }
};

// The exact sum of x[0..n) added to d; Inf and NaN flagged in bins. Each chunk first tries the
// levels of the previous chunk's largest magnitude, with a binade of margin, in one pass that
// also finds its own; when its values are larger, or Inf or NaN, it starts again from its own.
template <class V, class U>
ISTHMUS_KERNEL void local_exact_sum_impl(const double* x, int64_t n, const Digits& d, Bins& bins) {
  constexpr int lanes = int(2 * sizeof(V) / 8);
  constexpr int max_e = kMaxE - kLog2PerLane - 3;  // first_level(e) <= kMaxE
  alignas(64) double pad[kChunk], res[kChunk];
  alignas(64) double s[kMaxLevels][kLanes];
  int E[kMaxLevels];
  bool guess = false;
  int guess_E = 0;
  for (int64_t at = 0; at < n; at += kChunk) {
    const int c = int(std::min<int64_t>(kChunk, n - at)), cv = (c + 7) & ~7;
    const double* p = x + at;
    if (cv != c) {  // the last chunk, padded with zeros to whole vectors
      std::memcpy(pad, p, sizeof(double) * size_t(c));
      std::fill(pad + c, pad + cv, 0.0);
      p = pad;
    }
    bool done = false, more = false;
    if (guess) {
      E[0] = guess_E, E[1] = next_level(E[0]);
      std::fill(s[0], s[0] + lanes, sigma(E[0]));
      std::fill(s[1], s[1] + lanes, sigma(E[1]));
      double M;
      more = deposit<V, U, true, true>(p, cv, s[0], s[1], res, &M);
      bool nan = false;
      for (int a = 0; a < lanes; ++a) nan |= s[0][a] != s[0][a];
      const int e = exponent_bound(M);  // 1024 for Inf
      done = !nan && first_level(e) <= E[0];
      guess = e + 1 <= max_e, guess_E = first_level(e + 1);
    }
    if (!done) {
      bool special;
      const double M = chunk_max<V, U>(p, cv, &special);
      if (!special && M == 0) continue;
      const int e = exponent_bound(M);
      guess = !special && e + 1 <= max_e, guess_E = first_level(e + 1);
      if (special || e > max_e) {  // Inf, NaN, or values the accumulators cannot take
        bins.add(p, c);
        continue;
      }
      E[0] = first_level(e), E[1] = next_level(E[0]);
      std::fill(s[0], s[0] + lanes, sigma(E[0]));
      std::fill(s[1], s[1] + lanes, sigma(E[1]));
      more = deposit<V, U, true, false>(p, cv, s[0], s[1], res, nullptr);
    }
    int levels = 2;
    for (; more && levels < kMaxLevels; ++levels) {
      E[levels] = next_level(E[levels - 1]);
      std::fill(s[levels], s[levels] + lanes, sigma(E[levels]));
      more = deposit<V, U, false, false>(res, cv, s[levels], nullptr, res, nullptr);
    }
    if (more) bins.add(res, cv);
    for (int k = 0; k < levels; ++k) flush_level(s[k], lanes, E[k], d);
  }
}

#if defined(__GNUC__) && defined(__x86_64__)
__attribute__((target("avx2"))) void local_exact_sum_avx2(const double* x, int64_t n, const Digits& d, Bins& bins) {
  local_exact_sum_impl<v4d, v4u>(x, n, d, bins);
}
#endif

// The levels need IEEE addition rounded to nearest, with subnormals: the caller's rounding
// mode, flush-to-zero or denormals-are-zero (set by some compilers' fast modes) and trapping
// exceptions are set aside meanwhile, and its exception flags left as they were.
__attribute__((noinline)) void local_exact_sum(const double* x, int64_t n, const Digits& d, Bins& bins) {
#if defined(__GNUC__) && defined(__x86_64__)
  static const bool avx2 = __builtin_cpu_supports("avx2");
  if (avx2) return local_exact_sum_avx2(x, n, d, bins);
#endif
  local_exact_sum_impl<v2d, v2u>(x, n, d, bins);
}
#undef ISTHMUS_KERNEL

// One reduction: every rank adds its exact sums, as normalized B-bit digits on the fixed grid,
// and its Inf/NaN flags, in one MPI_SUM over int64; then each field's exact total is rounded to
// the nearest double (ties to even). The total is exact and does not depend on the
// decomposition, the order of the values or of the ranks, and neither does its rounding:
// bit-for-bit reproducibility.
void sum_reprosum(MPI_Comm comm, int size, int nf, const double* const* fields, int64_t n, double* sums) {
  // digits of P ranks add up to < P 2^B <= 2^62
  int lg = 0;
  while ((int64_t(1) << lg) < size) ++lg;
  const int B = 62 - lg;
  // |local sum| < n 2^1024 <= 2^(63 + 1024 + 1074) units: the top digit, above (L - 1) B >= 2162
  // bits, is 0 or -1 after normalization; the additions reach at most digit 2109 / B + 1 < L - 1.
  const int L = (2162 + B - 1) / B + 2;
  const int W = 3 + L;  // per field: NaN, +Inf, -Inf, digits
  std::vector<int64_t> loc(size_t(W) * size_t(nf), 0), glob(loc.size());
  std::vector<__int128> acc(size_t(L) + 1);
  const __int128 mask = (__int128(1) << B) - 1;
  for (int f = 0; f < nf; ++f) {
    std::fill(acc.begin(), acc.end(), __int128(0));
    Digits d{B, acc.data()};
    Bins bins;
    std::fenv_t caller;
    std::fegetenv(&caller);
    std::fesetenv(FE_DFL_ENV);
    local_exact_sum(fields[f], n, d, bins);
    std::fesetenv(&caller);
    bins.flush(d);
    int64_t* o = loc.data() + size_t(W) * size_t(f);
    o[0] = bins.nan, o[1] = bins.pinf, o[2] = bins.ninf;
    __int128 carry = 0;
    for (int j = 0; j < L; ++j) {
      __int128 t = acc[size_t(j)] + carry;
      if (j == L - 1) {
        o[3 + j] = int64_t(t);  // 0 or -1
      } else {
        o[3 + j] = int64_t(t & mask);
        carry = t >> B;
      }
    }
  }
  ISTHMUS_MPI(wmpi::Allreduce(loc.data(), glob.data(), int(loc.size()), MPI_INT64_T, MPI_SUM, comm));
  Grid g;
  g.low = -1074, g.B = B, g.L = L;
  for (int f = 0; f < nf; ++f) {
    const int64_t* o = glob.data() + size_t(W) * size_t(f);
    if (o[0] || (o[1] && o[2])) sums[f] = std::numeric_limits<double>::quiet_NaN();
    else if (o[1]) sums[f] = std::numeric_limits<double>::infinity();
    else if (o[2]) sums[f] = -std::numeric_limits<double>::infinity();
    else sums[f] = round_levels(o + 3, g);
  }
}

}  // namespace

void global_sum(MPI_Comm comm, int nfields, const double* const* fields, int64_t n,
                const int64_t* global_index, GlobalSumMethod method, double* sums,
                Agreement* pending) {
  Agreement own;
  Agreement& a = pending ? *pending : own;
  a.check([&] {
    if (nfields < 0) fail(ISTHMUS_ERR_ARG, "global_sum: nfields = ", nfields, " < 0");
    if (n < 0) fail(ISTHMUS_ERR_ARG, "global_sum: n = ", n, " local points < 0");
    if (int(method) < 0 || int(method) > 5)
      fail(ISTHMUS_ERR_ARG, "global_sum: method ", int(method),
           " is not one of 0..5 (auto, gather, lsum8, lsum16, ddpdd, reprosum)");
    if (nfields > 0 && !sums) fail(ISTHMUS_ERR_ARG, "global_sum: sums is NULL with nfields = ", nfields);
    if (n > 0) {
      if (nfields > 0 && !fields)
        fail(ISTHMUS_ERR_ARG, "global_sum: fields is NULL with n = ", n, " local points");
      for (int f = 0; f < nfields; ++f)
        if (!fields[f])
          fail(ISTHMUS_ERR_ARG, "global_sum: fields[", f, "] is NULL with n = ", n, " local points");
    }
    if (method == GlobalSumMethod::Gather && n > INT_MAX / std::max(1, nfields))
      fail(ISTHMUS_ERR_ARG, "global_sum gather: n = ", n, " local points x ", nfields,
           " fields exceed the 2^31 - 1 values one gather message holds");
  });
  a.match("global_sum: nfields", nfields);
  a.match("global_sum: method", int(method));
  // Gather: the ranks with points give global_index (1) or all leave it NULL (0).
  std::optional<int64_t> has_index;
  if (method == GlobalSumMethod::Gather && n > 0) has_index = global_index != nullptr;
  const int index_slot =
      a.value("global_sum: whether global_index is given (1) or NULL (0) on ranks with points", has_index);
  a.conclude(comm);
  int rank = 0, size = 1;
  ISTHMUS_MPI(MPI_Comm_rank(comm, &rank));
  ISTHMUS_MPI(MPI_Comm_size(comm, &size));
  if (nfields == 0) return;
  std::vector<const double*> none;
  if (n == 0 && !fields) none.assign(size_t(nfields), nullptr), fields = none.data();
  switch (method) {
    case GlobalSumMethod::Gather:
      return sum_gather(comm, rank, size, nfields, fields, n, global_index,
                        a.agreed(index_slot).value_or(0) == 1, sums);
    case GlobalSumMethod::Lsum8: return sum_lsum8(comm, nfields, fields, n, sums);
    case GlobalSumMethod::Lsum16: return sum_lsum16(comm, nfields, fields, n, sums);
    case GlobalSumMethod::Ddpdd: return sum_ddpdd(comm, nfields, fields, n, sums);
    case GlobalSumMethod::Auto:
    case GlobalSumMethod::Reprosum: return sum_reprosum(comm, size, nfields, fields, n, sums);
  }
  fail(ISTHMUS_ERR_ARG, "global_sum: unknown method ", int(method));
}

}  // namespace isthmus
