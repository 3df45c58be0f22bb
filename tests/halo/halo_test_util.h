// Expected halo values, computed independently of the library: the fold mirrors are NEMO's
// lbc_nfd index formulas (T pivot = jperio 4, F pivot = jperio 6) rewritten for 0-based
// interior indices (column i of NEMO's jpiglo grid with its two cyclic columns is i + 2).
#pragma once
#include <cstdint>
#include <vector>

#include "decomp/decomposition.h"
#include "halo/halo_exchange.h"

namespace halo_test {

using isthmus::decomp::Boundary;
using isthmus::decomp::Decomposition;
using isthmus::halo::PointType;

inline int64_t wrap(int64_t a, int64_t n) { return ((a % n) + n) % n; }

struct Expected {
  enum Kind { Untouched, Value, Fill } kind = Untouched;
  int64_t i = 0, j = 0;
  int sign = 1;
};

// Mirror (i', j') of a point past the fold, per pivot and point type.
inline void mirror(Boundary b, PointType p, int64_t nx, int64_t ny, int64_t i, int64_t j,
                   int64_t* mi, int64_t* mj) {
  int t = static_cast<int>(p);
  if (b == Boundary::FoldT) {
    static const int di[4] = {0, -1, 0, -1};   // T U V F
    static const int dj[4] = {-2, -2, -3, -3};
    *mi = wrap(di[t] - i, nx);
    *mj = 2 * ny + dj[t] - j;
  } else {
    static const int di[4] = {-1, -2, -1, -2};
    static const int dj[4] = {-1, -1, -2, -2};
    *mi = wrap(di[t] - i, nx);
    *mj = 2 * ny + dj[t] - j;
  }
}

// What global cell (gi, gj) of a field of point type p must hold after an exchange.
inline Expected expected(const Decomposition& d, PointType p, int sign, int64_t gi, int64_t gj) {
  const Boundary b = d.boundary();
  const int64_t nx = d.nx(), ny = d.ny();
  Expected e;
  bool wrap_i = b != Boundary::Closed, wrap_j = b == Boundary::Biperiodic;
  bool fold = b == Boundary::FoldT || b == Boundary::FoldF;
  if (wrap_i) gi = wrap(gi, nx);
  if (wrap_j) gj = wrap(gj, ny);
  if (gi < 0 || gi >= nx || gj < 0) return e;
  e.i = gi;
  e.j = gj;
  if (fold) {
    int64_t mi, mj;
    mirror(b, p, nx, ny, gi, gj, &mi, &mj);
    // Past the fold, or on a row that maps onto itself where the larger i takes the mirror.
    if (mj < gj || (mj == gj && mi < gi)) {
      e.i = mi;
      e.j = mj;
      e.sign = sign;
    }
  }
  if (e.j >= ny) return e;
  e.kind = d.owner(e.i, e.j) < 0 ? Expected::Fill : Expected::Value;
  return e;
}

// The value a field holds at global point (i, j), level k: unique, exact in float for small
// grids.
inline double value(int field, int k, int64_t i, int64_t j) {
  return 1.0 + i + 64.0 * j + 4096.0 * k + 32768.0 * field;
}

constexpr double kSentinel = -7.0;
constexpr double kFill = -1.0e3;

// Fills a local array: interior = value(), halo = sentinel.
template <typename T>
void init_local(std::vector<T>& a, const isthmus::halo::HaloExchange& x, int field, int nlev) {
  const auto& b = x.box();
  const int h = x.halo_width();
  a.assign(x.plane_size() * nlev, static_cast<T>(kSentinel));
  for (int k = 0; k < nlev; ++k)
    for (int64_t lj = 0; lj < b.nj; ++lj)
      for (int64_t li = 0; li < b.ni; ++li)
        a[(k * x.extent_j() + lj + h) * x.extent_i() + li + h] =
            static_cast<T>(value(field, k, b.i0 + li, b.j0 + lj));
}

// Number of cells that differ from the expectation (0 = all right); first bad cell reported.
template <typename T>
int64_t check_local(const std::vector<T>& a, const isthmus::halo::HaloExchange& x,
                    const Decomposition& d, int field, int nlev, PointType p, int sign,
                    std::string* first_bad) {
  const auto& b = x.box();
  const int h = x.halo_width();
  int64_t bad = 0;
  for (int k = 0; k < nlev; ++k)
    for (int64_t lj = -h; lj < b.nj + h; ++lj)
      for (int64_t li = -h; li < b.ni + h; ++li) {
        Expected e = expected(d, p, sign, b.i0 + li, b.j0 + lj);
        T want;
        if (e.kind == Expected::Untouched) want = static_cast<T>(kSentinel);
        else if (e.kind == Expected::Fill) want = static_cast<T>(kFill);
        else want = static_cast<T>(e.sign * value(field, k, e.i, e.j));
        T got = a[(k * x.extent_j() + lj + h) * x.extent_i() + li + h];
        if (got != want) {
          if (bad == 0 && first_bad)
            *first_bad = "field " + std::to_string(field) + " level " + std::to_string(k) +
                         " global (" + std::to_string(b.i0 + li) + ", " +
                         std::to_string(b.j0 + lj) + "): got " + std::to_string(got) +
                         " want " + std::to_string(want);
          ++bad;
        }
      }
  return bad;
}

}  // namespace halo_test
