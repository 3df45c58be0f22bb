#include "collectives/global_sum.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "base/agreement.h"
#include "base/error.h"

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
  ISTHMUS_MPI(MPI_Gather(&nl, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, comm));
  int64_t total = 0;
  if (rank == 0) {
    displs.resize(size);
    for (int p = 0; p < size; ++p) total += counts[p];
    if (total <= INT_MAX / std::max(1, nf))
      for (int p = 0, at = 0; p < size; ++p) displs[p] = at, at += counts[p];
  }
  ISTHMUS_MPI(MPI_Bcast(&total, 1, MPI_INT64_T, 0, comm));
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
  ISTHMUS_MPI(MPI_Gatherv(mine.data(), nl * nf, MPI_DOUBLE, all.data(), vcounts.data(),
                          vdispls.data(), MPI_DOUBLE, 0, comm));
  std::vector<int64_t> idx(rank == 0 && all_index ? size_t(total) : 0);
  if (all_index)
    ISTHMUS_MPI(MPI_Gatherv(gidx, nl, MPI_INT64_T, idx.data(), counts.data(), displs.data(),
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
  ISTHMUS_MPI(MPI_Bcast(result.data(), 2 + nf, MPI_DOUBLE, 0, comm));
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
  ISTHMUS_MPI(MPI_Allreduce(local.data(), sums, nf, MPI_DOUBLE, MPI_SUM, comm));
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
  ISTHMUS_MPI(MPI_Allreduce(local.data(), global.data(), nf, t.type, t.op, comm));
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
  ISTHMUS_MPI(MPI_Allreduce(local.data(), global.data(), nf, t.type, t.op, comm));
  for (int f = 0; f < nf; ++f) sums[f] = global[2 * f] + global[2 * f + 1];
}

// ---- reprosum ----------------------------------------------------------------------------
//
// A finite double is m * 2^(eb - 1075) with m < 2^53 an integer and eb = max(biased exponent,
// 1). The exact sums are held as L levels of B-bit signed digits on a grid whose bit 0 has the
// value 2^low; level j is summed over ranks as an int64, and B leaves headroom so that no sum of
// digits can overflow.

struct Grid {
  int64_t low = 0;  // exponent of bit 0 of level 0
  int B = 62, L = 0;
  bool nan = false, pinf = false, ninf = false;
};

inline uint64_t bits_of(double x) {
  uint64_t u;
  std::memcpy(&u, &x, sizeof u);
  return u;
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
  uint64_t take(int64_t pos, int count) const {  // bits [pos, pos+count), count <= 63
    uint64_t v = 0;
    for (int i = 0; i < count; ++i) v |= uint64_t(bit(pos + i)) << i;
    return v;
  }
};

double round_levels(const int64_t* S, const Grid& g) {
  using i128 = __int128;
  const int B = g.B, L = g.L;
  const i128 base = i128(1) << B;
  std::vector<int64_t> digit(L);
  auto normalize = [&](int sign) {
    i128 carry = 0;
    for (int j = 0; j < L; ++j) {
      i128 t = i128(S[j]) * sign + carry;
      i128 d = t % base;
      if (d < 0) d += base;
      digit[j] = int64_t(d);
      carry = (t - d) / base;
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

// True when some value is Inf or NaN: the top bit of |x| + 2^52 is set exactly for exponent
// field 0x7ff. A loop of ands, adds and ors that the compiler vectorizes when asked (-O2 alone
// does not).
#if defined(__GNUC__) && !defined(__clang__)
__attribute__((optimize("O3")))
#endif
bool any_special(const double* x, int64_t n) {
  uint64_t sp = 0;
  const uint64_t abs_mask = ~(uint64_t(1) << 63);
  for (int64_t i = 0; i < n; ++i) sp |= (bits_of(x[i]) & abs_mask) + (uint64_t(1) << 52);
  return sp >> 63;
}

// Exact per-exponent sums of one field: bin[be] = sum of +-m over the finite values with
// biased exponent be (be 0 and 1 share the scale 2^-1074). One 128-bit integer add per value,
// no comparisons; two interleaved bin sets so that neighbours with one exponent do not wait on
// each other's store.
void bin_by_exponent(const double* x, int64_t n, __int128* bins /* 2 x 2048 */) {
  const uint64_t frac = (uint64_t(1) << 52) - 1;
  for (int64_t i = 0; i < n; ++i) {
    uint64_t u = bits_of(x[i]);
    uint64_t be = (u >> 52) & 0x7ff;
    int64_t m = int64_t((u & frac) | (be ? uint64_t(1) << 52 : 0));
    int64_t sgn = -int64_t(u >> 63);  // 0 or -1: (m ^ sgn) - sgn is m or -m
    bins[size_t(i & 1) * 2048 + be] += (m ^ sgn) - sgn;
  }
}

// Mirin & Worley's method with the per-value split replaced by exact per-exponent binning:
//  1. each rank bins its values by exponent (exact 128-bit sums);
//  2. reduction 1 (MPI_MAX): the range of exponents of non-zero bins, Inf/NaN flags and the
//     number of local non-zero bins, over all ranks;
//  3. every bin is cut into B-bit digits on a common grid of L levels, B chosen so that the
//     digit sums of all ranks' bins cannot overflow 64 bits;
//  4. reduction 2 (MPI_SUM over int64): exact, so independent of order;
//  5. the exact total is rounded to the nearest double (round_levels).
// The grid depends on the decomposition (cancellation inside a bin), the exact total does
// not, and the rounding depends only on the exact total: hence bit-for-bit reproducibility.
void sum_reprosum(MPI_Comm comm, int size, int nf, const double* const* fields, int64_t n, double* sums) {
  const int W = 6;  // per field: max be, -min be, NaN, +Inf, -Inf, non-zero bins
  std::vector<int64_t> loc(size_t(W) * nf), glob(loc.size());
  std::vector<__int128> bins(size_t(nf) * 2048);
  std::vector<__int128> two(2 * 2048);
  const __int128 zero = 0;
  for (int f = 0; f < nf; ++f) {
    const double* x = fields[f];
    std::fill(two.begin(), two.end(), zero);
    bin_by_exponent(x, n, two.data());
    __int128* b = bins.data() + size_t(f) * 2048;
    for (int be = 0; be < 2047; ++be) b[be] = two[size_t(be)] + two[size_t(2048 + be)];
    b[1] += b[0], b[0] = 0;  // be 0 (subnormal) has the scale of be 1
    bool nan = false, pinf = false, ninf = false;
    if (any_special(x, n))
      for (int64_t i = 0; i < n; ++i) {
        if (std::isnan(x[i])) nan = true;
        else if (std::isinf(x[i])) (x[i] > 0 ? pinf : ninf) = true;
      }
    int64_t emax = 0, emin = 4096, nonzero = 0;
    for (int be = 1; be < 2047; ++be)
      if (b[be] != 0) emax = std::max<int64_t>(emax, be), emin = std::min<int64_t>(emin, be), ++nonzero;
    int64_t* o = loc.data() + size_t(W) * f;
    o[0] = emax, o[1] = -emin, o[2] = nan, o[3] = pinf, o[4] = ninf, o[5] = nonzero;
  }
  ISTHMUS_MPI(MPI_Allreduce(loc.data(), glob.data(), int(loc.size()), MPI_INT64_T, MPI_MAX, comm));
  std::vector<Grid> grid(static_cast<size_t>(nf));
  std::vector<size_t> first(size_t(nf) + 1, 0);
  for (int f = 0; f < nf; ++f) {
    const int64_t* o = glob.data() + size_t(W) * f;
    Grid& g = grid[size_t(f)];
    g.nan = o[2], g.pinf = o[3], g.ninf = o[4];
    // Each level receives at most one digit per non-zero bin per rank.
    double digits = double(size) * double(std::max<int64_t>(o[5], 1));
    g.B = 62 - int(std::ceil(std::log2(digits + 1)));
    if (o[0] > 0) {
      int64_t emax = o[0], emin = -o[1];
      g.low = emin - 1075;
      // A bin holds at most n * 2^53 < 2^(53+64): its bits lie below 2^(emax - 1075 + 117).
      int64_t span = (emax - 1075 + 117) - g.low;
      g.L = int((span + g.B - 1) / g.B) + 1;
    }
    first[size_t(f) + 1] = first[size_t(f)] + size_t(g.L);
  }
  std::vector<int64_t> acc(std::max<size_t>(first[size_t(nf)], 1), 0), tot(acc.size(), 0);
  for (int f = 0; f < nf; ++f) {
    const Grid& g = grid[size_t(f)];
    if (!g.L) continue;
    const int B = g.B;
    const uint64_t mask = (uint64_t(1) << B) - 1;
    int64_t* a = acc.data() + first[size_t(f)];
    const __int128* b = bins.data() + size_t(f) * 2048;
    for (int be = 1; be < 2047; ++be) {
      if (b[be] == 0) continue;
      bool neg = b[be] < 0;
      unsigned __int128 mag = neg ? (unsigned __int128)(-b[be]) : (unsigned __int128)b[be];
      // the two 64-bit halves of mag, at bit positions s and s + 64 of the grid
      for (int half = 0; half < 2; ++half) {
        uint64_t part = uint64_t(mag >> (64 * half));
        if (!part) continue;
        int64_t s = int64_t(be) - 1075 - g.low + 64 * half;
        int64_t j = s / B, off = s - j * B;
        unsigned __int128 w = (unsigned __int128)part << off;
        for (; w; ++j, w >>= B) {
          int64_t d = int64_t(uint64_t(w) & mask);
          a[j] += neg ? -d : d;
        }
      }
    }
  }
  if (first[size_t(nf)])
    ISTHMUS_MPI(MPI_Allreduce(acc.data(), tot.data(), int(first[size_t(nf)]), MPI_INT64_T, MPI_SUM, comm));
  for (int f = 0; f < nf; ++f) {
    const Grid& g = grid[size_t(f)];
    if (g.nan || (g.pinf && g.ninf)) sums[f] = std::numeric_limits<double>::quiet_NaN();
    else if (g.pinf) sums[f] = std::numeric_limits<double>::infinity();
    else if (g.ninf) sums[f] = -std::numeric_limits<double>::infinity();
    else sums[f] = g.L ? round_levels(tot.data() + first[size_t(f)], g) : 0.0;
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
