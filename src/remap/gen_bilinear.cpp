// Bilinear and bicubic weights (issue 15), as OASIS3-MCT's SCRIP library (remap_bilinear.f,
// remap_bicubic.f) computes them, with a search on the sphere.
//
// The cells of the interpolation are the quadrilaterals of source CENTRES (i,j), (i+1,j),
// (i+1,j+1), (i,j+1) of a logically rectangular source grid (SCRIP's corners 1..4, in this order:
// the order of every point's links).
//
// - Periodicity in x: the grid is periodic when, on each of the rows ny/4, ny/2 and 3ny/4, the
//   longitude steps (each wrapped to [-pi, pi]) including the closing step (nx-1 -> 0) add up to
//   a whole turn, and the closing step is no longer (great-circle) than twice the row's longest
//   step. Then the quads (nx-1, j) -> (0, j) exist too. An overlap (ORCA's columns 0 and nx-1
//   repeating nx-2 and 1) only makes duplicate quads: the first found wins.
// - The search: the quads are listed in a uniform grid of voxels of 3-D space (each quad in the
//   voxels its circumscribed cap reaches), built once in make_*. A point tests the quads of its
//   voxel in increasing number (the address of their first corner): the first that contains it
//   wins; the pole quads (below) come after, found by the point's longitude among the pole row's
//   points (the few quads starting or ending there), never through the voxels, whose
//   circumscribed caps reaching across the pole would list each in a great many voxels. "Contains" is decided in SCRIP's plane (longitude unwrapped around the
//   point's, latitude: as SCRIP, so that the weights are SCRIP's and a field bilinear in
//   (lon, lat) is reproduced exactly on a regular lon-lat grid) for quads spanning less than 90
//   degrees of longitude, and on the sphere (great-circle edges: the point on the same side of
//   the 4 edges, by the signs of the triple products; collapsed edges ignored) for the others
//   (ORCA's Arctic, the pole quads). A point in neither (the thin gaps where the two kinds meet,
//   e.g. between the last row's parallel and the great circle of a pole quad) takes the first
//   quad that contains it on the sphere. ORCA's tripolar fold needs nothing special: the quads
//   above the fold repeat those below it, mirrored. Points in no quad are left UNSERVED.
// - The poles: when the first (last) row of a periodic grid winds once around the globe, the
//   cap beyond it is covered by "pole quads" (i, i+1, o(i), o(i+1)) of that row, o(i) being the
//   row's point farthest from point i (i + nx/2 on a regular grid): a thin quad through the pole
//   (its far side runs along -i). (SCRIP finds no quad there and falls back to distances.)
// - (alpha, beta) solve the inverse bilinear map by Newton's iteration from (1/2, 1/2), as SCRIP,
//   in the plane the quad was found in: SCRIP's, or the gnomonic projection centred on the point
//   (great circles are straight lines in it); never outside [0, 1] by more than 1e-6.
// - Masks (as OASIS's SCRIP, checked on rmp_torc_to_lmdz_BILINEAR.nc): when a corner of the
//   containing quad is masked, the point gets the inverse-distance average (weights 1/(d + 1e-14),
//   d the great-circle distance) of the active ones among its 4 nearest source centres, masked
//   ones included in the choice of the 4 (ties by address), renormalised over the active ones;
//   links in order of distance, none to a masked point (OASIS writes them with weight 0). When
//   none of the 4 is active, OASIS takes the nearest active source point (its "1 real + 3 null
//   links" points): here the point is left UNSERVED, for the stack's next method (nearest).
//   OASIS also takes that inverse-distance average when it finds no quad; here such points are
//   left UNSERVED too. (OASIS looks for its 4 nearest within latitude bins only, so that at a few
//   points its 4 are not the nearest: there the weights differ.)
// - Bilinear: num_wgts 1, 4 links per point in corner order (zero weights kept, as SCRIP).
//   Bicubic: num_wgts 4 (SCRIP's: the weights of the value and of the field's derivatives d/di,
//   d/dj, d2/didj at each corner, Hermite cubics in alpha and beta); the fallback's links carry
//   (w, 0, 0, 0). At the far corners of a pole quad, alpha runs along -i and beta along -j
//   (north; the other way round at the near corners of the south cap): their derivative weights
//   change sign accordingly (the derivatives are those of the field's index space).
// GenOptions is not read.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/error.h"
#include "remap/sphere.h"
#include "remap/weights_gen.h"

namespace isthmus::remap {

namespace {

constexpr double kPi = 3.14159265358979323846;
constexpr double kTwoPi = 2.0 * kPi;
constexpr double kTiny = 1e-14;                     // OASIS's `tiny` in 1/(d + tiny)
constexpr double kLonLatMaxSpan = 0.5 * kPi;       // SCRIP's plane for quads narrower
constexpr double kEdgeTol = 1e-12;                  // radians: a point on an edge is inside

inline double wrap(double d) { return std::remainder(d, kTwoPi); }  // to [-pi, pi]

// Solves c0 + a (c1 - c0) + b (c3 - c0) + a b (c0 - c1 + c2 - c3) = 0 (the point at the origin)
// by Newton's iteration from (1/2, 1/2). False if it does not converge.
bool inverse_bilinear(const double x[4], const double y[4], double* alpha, double* beta) {
  const double ex = x[1] - x[0], fx = x[3] - x[0], gx = x[0] - x[1] + x[2] - x[3];
  const double ey = y[1] - y[0], fy = y[3] - y[0], gy = y[0] - y[1] + y[2] - y[3];
  double a = 0.5, b = 0.5;
  for (int iter = 0; iter < 100; ++iter) {
    const double rx = x[0] + a * ex + b * fx + a * b * gx;
    const double ry = y[0] + a * ey + b * fy + a * b * gy;
    const double j11 = ex + b * gx, j12 = fx + a * gx;
    const double j21 = ey + b * gy, j22 = fy + a * gy;
    const double det = j11 * j22 - j12 * j21;
    if (!(std::fabs(det) > 0.0) || !std::isfinite(det)) return false;
    const double da = -(rx * j22 - j12 * ry) / det;
    const double db = -(j11 * ry - j21 * rx) / det;
    a += da;
    b += db;
    if (!std::isfinite(a) || !std::isfinite(b)) return false;
    if (std::fabs(da) < 1e-14 && std::fabs(db) < 1e-14) {
      *alpha = a;
      *beta = b;
      return true;
    }
  }
  return false;
}

// A quad of source centres: corners in SCRIP's order, and the signs of i along alpha and of j
// along beta at each corner (not all +1 in a pole quad only).
struct Quad {
  std::array<int64_t, 4> c{};
  std::array<int, 4> idir{{1, 1, 1, 1}};
  std::array<int, 4> jdir{{1, 1, 1, 1}};
};

class BilinearMethod : public WeightMethod {
 public:
  BilinearMethod(const Grid& src, const Grid& dst, bool cubic)
      : src_(src), dst_(dst), cubic_(cubic), nx_(src.nx()), ny_(src.ny()) {
    const char* what = cubic ? "bicubic" : "bilinear";
    if (!src.rectangular())
      fail(ISTHMUS_ERR_ARG, what, " weights: the source grid '", src.name, "' (", src.source,
           ") is not logically rectangular (", src.dims.size(),
           " dimensions): bilinear and bicubic need an nx x ny grid");
    if (nx_ < 2 || ny_ < 2 || nx_ * ny_ != src.size())
      fail(ISTHMUS_ERR_ARG, what, " weights: the source grid '", src.name, "' (", src.source,
           ") is ", nx_, " x ", ny_, " for ", src.size(), " points: need at least 2 x 2");
    if (!src.mask.empty() && static_cast<int64_t>(src.mask.size()) != src.size())
      fail(ISTHMUS_ERR_ARG, what, " weights: the source grid '", src.name, "' has ",
           src.mask.size(), " mask values for ", src.size(), " points");
    xyz_.resize(src.size());
    bool any_masked = false;
    for (int64_t k = 0; k < src.size(); ++k) {
      xyz_[k] = to_xyz(src.lon[k], src.lat[k]);
      any_masked = any_masked || !src.active(k);
    }
    if (any_masked) {  // OASIS's fallback only: its 4 nearest centres, masked ones included
      std::vector<int64_t> ids(src.size());
      for (int64_t k = 0; k < src.size(); ++k) ids[k] = k;
      index_ = std::make_unique<PointIndex>(xyz_, std::move(ids));
    }

    periodic_ = true;
    for (int64_t j : {ny_ / 4, ny_ / 2, (3 * ny_) / 4}) periodic_ = periodic_ && row_closes(j);
    if (periodic_) {
      for (int side = 0; side < 2; ++side) {
        const int64_t j = side == 0 ? 0 : ny_ - 1;
        if (!row_winds(j)) continue;
        auto& o = opposite_[side];
        o.resize(nx_);
        for (int64_t i = 0; i < nx_; ++i) {
          const Vec3 v = xyz_[j * nx_ + i];
          int64_t best = i;
          double best_dot = 2.0;
          for (int64_t m = 0; m < nx_; ++m) {
            const double d = dot(v, xyz_[j * nx_ + m]);
            if (d < best_dot) best_dot = d, best = m;
          }
          o[i] = best;
        }
      }
    }
    // The pole quads are found by longitude, not through the voxels: each reaches across the
    // pole, so its circumscribed cap would list it in a great many voxels (a 1442-wide grid's
    // caps took gigabytes).
    for (int side = 0; side < 2; ++side) {
      if (opposite_[side].empty()) continue;
      const int64_t r = (side == 0 ? 0 : ny_ - 1) * nx_;
      auto& order = pole_lon_[side];
      for (int64_t i = 0; i < nx_; ++i)
        order.emplace_back(std::atan2(xyz_[r + i].y, xyz_[r + i].x), i);
      std::sort(order.begin(), order.end());
    }
    build_voxels();
  }

  std::string name() const override { return cubic_ ? "bicubic" : "bilinear"; }
  int num_wgts() const override { return cubic_ ? 4 : 1; }

  void compute(const std::vector<int64_t>& todo, GenLinks* out,
               std::vector<int64_t>* unserved) const override {
    std::vector<int64_t> ids;
    std::vector<double> dist;
    for (const int64_t d : todo) {
      const double plon = dst_.lon[d], plat = dst_.lat[d];
      const Vec3 p = to_xyz(plon, plat);
      Quad q;
      double a = 0, b = 0;
      if (!locate(p, plon, plat, &q, &a, &b)) {
        unserved->push_back(d);
        continue;
      }
      bool all_active = true;
      for (int k = 0; k < 4; ++k) all_active = all_active && src_.active(q.c[k]);
      if (all_active) {
        emit_quad(d, q, a, b, out);
      } else if (!emit_fallback(d, p, out, &ids, &dist)) {
        unserved->push_back(d);
      }
    }
  }

 private:
  // Whether row j closes the circle (see the file's comment).
  bool row_closes(int64_t j) const {
    const int64_t r = j * nx_;
    double turn = 0, longest = 0;
    for (int64_t i = 0; i + 1 < nx_; ++i) {
      turn += wrap(src_.lon[r + i + 1] - src_.lon[r + i]);
      longest = std::max(longest, angle(xyz_[r + i], xyz_[r + i + 1]));
    }
    turn += wrap(src_.lon[r] - src_.lon[r + nx_ - 1]);
    const double closing = angle(xyz_[r + nx_ - 1], xyz_[r]);
    return std::fabs(std::fabs(turn) - kTwoPi) < 1e-6 && closing <= 2.0 * longest;
  }
  // Whether row j (periodic) winds once around the globe.
  bool row_winds(int64_t j) const {
    const int64_t r = j * nx_;
    double turn = 0;
    for (int64_t i = 0; i < nx_; ++i) turn += wrap(src_.lon[r + (i + 1) % nx_] - src_.lon[r + i]);
    return std::fabs(std::fabs(turn) - kTwoPi) < 1e-6;
  }

  // Quads are numbered by their first corner's address (ordinary ones: (i0, j0) at j0 nx + i0),
  // then the pole quads (nx ny + side nx + i0; side 0 the first row, 1 the last).
  Quad quad(int64_t key) const {
    Quad q;
    if (key < nx_ * ny_) {
      const int64_t i0 = key % nx_, j0 = key / nx_, i1 = i0 + 1 == nx_ ? 0 : i0 + 1;
      q.c = {j0 * nx_ + i0, j0 * nx_ + i1, (j0 + 1) * nx_ + i1, (j0 + 1) * nx_ + i0};
      return q;
    }
    const int64_t k = key - nx_ * ny_;
    const int side = static_cast<int>(k / nx_);
    const int64_t i0 = k % nx_, i1 = i0 + 1 == nx_ ? 0 : i0 + 1;
    const int64_t r = (side == 0 ? 0 : ny_ - 1) * nx_;
    const auto& o = opposite_[side];
    // Across the pole the far side runs the other way: (i, i+1, o(i), o(i+1)) is convex.
    q.c = {r + i0, r + i1, r + o[i0], r + o[i1]};
    // beta runs from the near row across the pole: +j at the near corners of the north cap;
    // alpha runs along -i at the far corners.
    const int near = side == 0 ? -1 : 1;
    q.idir = {1, 1, -1, -1};
    q.jdir = {near, near, -near, -near};
    return q;
  }

  // The spatial index of the quads: a uniform grid of voxels over [-1, 1]^3, each listing (in
  // increasing number) the quads whose circumscribed cap may reach into it. The voxel's edge is
  // 1.5 times the median quad's diameter (at least 2 / (cells - 1), cells the number of voxels
  // per axis that the key's bits allow), so that a quad is listed in a few voxels and a voxel
  // lists a few quads.
  void build_voxels() {
    std::vector<int64_t> keys;
    const int64_t i_end = periodic_ ? nx_ : nx_ - 1;
    for (int64_t j0 = 0; j0 + 1 < ny_; ++j0)
      for (int64_t i0 = 0; i0 < i_end; ++i0) keys.push_back(j0 * nx_ + i0);
    std::vector<Vec3> centre(keys.size());
    std::vector<double> chord(keys.size());  // circumscribed cap's chord radius; < 0: none
    std::vector<double> diameters;
    diameters.reserve(keys.size());
    for (size_t n = 0; n < keys.size(); ++n) {
      const Quad q = quad(keys[n]);
      Vec3 s;
      for (int k = 0; k < 4; ++k) s = s + xyz_[q.c[k]];
      chord[n] = -1;
      if (norm(s) < 1e-12) continue;
      centre[n] = normalized(s);
      double r = 0;
      for (int k = 0; k < 4; ++k) r = std::max(r, angle(centre[n], xyz_[q.c[k]]));
      if (r >= 0.5 * kPi - 1e-9) continue;  // wider than a hemisphere: not a quad
      chord[n] = 2.0 * std::sin(0.5 * r) + 1e-9;
      diameters.push_back(2.0 * chord[n]);
    }
    const int qbits = std::max(1, static_cast<int>(std::ceil(std::log2(nx_ * ny_ + 2 * nx_ + 1))));
    if (qbits > 40)
      fail(ISTHMUS_ERR_ARG, name(), " weights: the source grid '", src_.name, "' is too large");
    const int64_t max_cells = int64_t(1) << std::min(20, (64 - qbits) / 3);
    double h = 2.0 / static_cast<double>(max_cells - 1);
    if (!diameters.empty()) {
      std::nth_element(diameters.begin(), diameters.begin() + diameters.size() / 2,
                       diameters.end());
      h = std::max(h, 1.5 * diameters[diameters.size() / 2]);
    }
    h = std::min(h, 2.0);
    cells_ = static_cast<int64_t>(std::ceil(2.0 / h)) + 1;
    inv_h_ = 1.0 / h;
    std::vector<uint64_t> reg;  // (voxel << qbits) | quad
    for (size_t n = 0; n < keys.size(); ++n) {
      if (chord[n] < 0) continue;
      const Vec3 c = centre[n];
      const double rho = chord[n];
      const int64_t x0 = cell(c.x - rho), x1 = cell(c.x + rho);
      const int64_t y0 = cell(c.y - rho), y1 = cell(c.y + rho);
      const int64_t z0 = cell(c.z - rho), z1 = cell(c.z + rho);
      for (int64_t x = x0; x <= x1; ++x)
        for (int64_t y = y0; y <= y1; ++y)
          for (int64_t z = z0; z <= z1; ++z)
            reg.push_back((static_cast<uint64_t>((x * cells_ + y) * cells_ + z) << qbits) |
                          static_cast<uint64_t>(keys[n]));
    }
    std::sort(reg.begin(), reg.end());
    const uint64_t qmask = (uint64_t(1) << qbits) - 1;
    list_.resize(reg.size());
    size_t unique = 0;
    for (size_t k = 0; k < reg.size(); ++k) {
      list_[k] = reg[k] & qmask;
      if (k == 0 || (reg[k] >> qbits) != (reg[k - 1] >> qbits)) ++unique;
    }
    size_t slots = 16;
    while (slots < 2 * unique) slots *= 2;
    slot_bits_ = static_cast<int>(std::log2(static_cast<double>(slots)) + 0.5);
    slot_key_.assign(slots, kEmpty);
    slot_begin_.assign(slots, 0);
    slot_end_.assign(slots, 0);
    for (size_t k = 0; k < reg.size();) {
      const uint64_t v = reg[k] >> qbits;
      size_t e = k;
      while (e < reg.size() && (reg[e] >> qbits) == v) ++e;
      size_t s = slot_of(v);
      while (slot_key_[s] != kEmpty) s = (s + 1) & (slots - 1);
      slot_key_[s] = v;
      slot_begin_[s] = k;
      slot_end_[s] = e;
      k = e;
    }
  }
  static constexpr uint64_t kEmpty = ~uint64_t(0);
  int64_t cell(double x) const {
    const int64_t c = static_cast<int64_t>(std::floor((x + 1.0) * inv_h_));
    return std::min(std::max(c, int64_t(0)), cells_ - 1);
  }
  size_t slot_of(uint64_t v) const {
    return static_cast<size_t>((v * 0x9E3779B97F4A7C15ull) >> (64 - slot_bits_));
  }

  // Whether p is inside the quad on the sphere (either orientation, edges inclusive).
  bool contains(const Quad& q, Vec3 p) const {
    int pos = 0, neg = 0, edges = 0;
    for (int k = 0; k < 4; ++k) {
      const Vec3 a = xyz_[q.c[k]], b = xyz_[q.c[(k + 1) % 4]];
      if (dot(a, p) <= 0.0) return false;  // more than 90 degrees away: not this quad
      const Vec3 n = cross(a, b);
      const double len2 = dot(n, n);
      if (len2 < 1e-30) continue;  // collapsed edge
      ++edges;
      const double s = dot(n, p);  // sin(distance to the edge's great circle) * |n|
      if (s * s > kEdgeTol * kEdgeTol * len2) (s > 0 ? pos : neg) += 1;
    }
    return edges >= 3 && (pos == 0 || neg == 0);
  }

  // The quad's corners in SCRIP's plane around p (longitude unwrapped around p's, latitude; p at
  // the origin). False when the quad spans kLonLatMaxSpan of longitude or more (near a pole).
  bool lonlat_plane(const Quad& q, double plon, double plat, double* x, double* y) const {
    double xmin = 0, xmax = 0;
    for (int k = 0; k < 4; ++k) {
      double dl = src_.lon[q.c[k]] - plon;
      if (dl > kPi || dl < -kPi) dl -= kTwoPi * std::nearbyint(dl * (1.0 / kTwoPi));
      x[k] = dl;
      y[k] = src_.lat[q.c[k]] - plat;
      xmin = std::min(xmin, dl);
      xmax = std::max(xmax, dl);
    }
    return xmax - xmin < kLonLatMaxSpan;
  }

  // Whether the origin is inside the plane quad (either orientation, edges inclusive).
  static bool plane_contains(const double* x, const double* y) {
    int pos = 0, neg = 0, edges = 0;
    for (int k = 0; k < 4; ++k) {
      const int l = (k + 1) % 4;
      const double ex = x[l] - x[k], ey = y[l] - y[k];
      const double len2 = ex * ex + ey * ey;
      if (len2 < 1e-30) continue;
      ++edges;
      const double s = x[k] * y[l] - x[l] * y[k];
      if (s * s > kEdgeTol * kEdgeTol * len2) (s > 0 ? pos : neg) += 1;
    }
    return edges >= 3 && (pos == 0 || neg == 0);
  }

  // (alpha, beta) in the gnomonic projection centred on p.
  bool solve_gnomonic(const Quad& q, Vec3 p, double* a, double* b) const {
    double x[4], y[4];
    const Vec3 axis = std::fabs(p.z) < 0.9 ? Vec3{0, 0, 1} : Vec3{1, 0, 0};
    const Vec3 e1 = normalized(cross(axis, p));
    const Vec3 e2 = cross(p, e1);
    for (int k = 0; k < 4; ++k) {
      const Vec3 v = xyz_[q.c[k]];
      const double h = dot(v, p);
      if (!(h > 0.0)) return false;
      x[k] = dot(v, e1) / h;
      y[k] = dot(v, e2) / h;
    }
    return inverse_bilinear(x, y, a, b) && in_unit(*a) && in_unit(*b);
  }
  static bool in_unit(double t) { return t >= -1e-6 && t <= 1 + 1e-6; }

  // The quad containing p and (alpha, beta) in it: the first quad (by number) of p's voxel that
  // contains p in SCRIP's plane, or on the sphere for quads too wide in longitude for the plane;
  // failing that (the thin gaps between the two kinds), the first that contains p on the sphere.
  bool locate(Vec3 p, double plon, double plat, Quad* q, double* a, double* b) const {
    const uint64_t v = static_cast<uint64_t>((cell(p.x) * cells_ + cell(p.y)) * cells_ + cell(p.z));
    size_t s = slot_of(v);
    while (slot_key_[s] != v) {
      if (slot_key_[s] == kEmpty) return locate_pole(p, q, a, b);
      s = (s + 1) & (slot_key_.size() - 1);
    }
    double x[4], y[4];
    for (size_t k = slot_begin_[s]; k < slot_end_[s]; ++k) {
      const Quad t = quad(static_cast<int64_t>(list_[k]));
      const bool found = lonlat_plane(t, plon, plat, x, y)
                             ? plane_contains(x, y) && inverse_bilinear(x, y, a, b) &&
                                   in_unit(*a) && in_unit(*b)
                             : contains(t, p) && solve_gnomonic(t, p, a, b);
      if (found) {
        *q = t;
        return true;
      }
    }
    for (size_t k = slot_begin_[s]; k < slot_end_[s]; ++k) {
      const Quad t = quad(static_cast<int64_t>(list_[k]));
      if (contains(t, p) && solve_gnomonic(t, p, a, b)) {
        *q = t;
        return true;
      }
    }
    return locate_pole(p, q, a, b);
  }

  // The pole quads: those whose near edge starts at the row points of p's longitude sector, or
  // whose far edge does, a few either side; the first (by number) containing p on the sphere.
  bool locate_pole(Vec3 p, Quad* q, double* a, double* b) const {
    for (int side = 0; side < 2; ++side) {
      const auto& order = pole_lon_[side];
      if (order.empty()) continue;
      const double l = std::atan2(p.y, p.x);
      const size_t pos = static_cast<size_t>(
          std::upper_bound(order.begin(), order.end(), std::make_pair(l, INT64_MAX)) - order.begin());
      const int64_t k = order[(pos + order.size() - 1) % order.size()].second;
      int64_t keys[10];
      int n = 0;
      for (const int64_t c : {k, opposite_[side][k]})
        for (int64_t m = -2; m <= 2; ++m) keys[n++] = nx_ * ny_ + side * nx_ + ((c + m) % nx_ + nx_) % nx_;
      std::sort(keys, keys + n);
      for (int i = 0; i < n; ++i) {
        if (i > 0 && keys[i] == keys[i - 1]) continue;
        const Quad t = quad(keys[i]);
        if (contains(t, p) && solve_gnomonic(t, p, a, b)) {
          *q = t;
          return true;
        }
      }
    }
    return false;
  }

  void emit_quad(int64_t d, const Quad& q, double a, double b, GenLinks* out) const {
    if (!cubic_) {
      const double w[4] = {(1 - a) * (1 - b), a * (1 - b), a * b, (1 - a) * b};
      for (int k = 0; k < 4; ++k) out->add(q.c[k], d, w[k]);
      return;
    }
    // Hermite cubics: value basis h0(t) = 1 - t^2 (3 - 2t), h1 = t^2 (3 - 2t); derivative basis
    // g0(t) = t (t - 1)^2, g1(t) = t^2 (t - 1).
    const double ha1 = a * a * (3 - 2 * a), ha0 = 1 - ha1;
    const double hb1 = b * b * (3 - 2 * b), hb0 = 1 - hb1;
    const double ga0 = a * (a - 1) * (a - 1), ga1 = a * a * (a - 1);
    const double gb0 = b * (b - 1) * (b - 1), gb1 = b * b * (b - 1);
    const double ha[4] = {ha0, ha1, ha1, ha0}, hb[4] = {hb0, hb0, hb1, hb1};
    const double ga[4] = {ga0, ga1, ga1, ga0}, gb[4] = {gb0, gb0, gb1, gb1};
    for (int k = 0; k < 4; ++k) {
      const double si = q.idir[k], sj = q.jdir[k];
      const double w[4] = {ha[k] * hb[k], si * ga[k] * hb[k], sj * ha[k] * gb[k],
                           si * sj * ga[k] * gb[k]};
      out->add(q.c[k], d, w);
    }
  }

  // OASIS's fallback for a quad with a masked corner (see the top). False: no active one.
  bool emit_fallback(int64_t d, Vec3 p, GenLinks* out, std::vector<int64_t>* ids,
                     std::vector<double>* dist) const {
    index_->nearest(p, 4, ids, dist);
    double sum = 0;
    for (size_t k = 0; k < ids->size(); ++k)
      if (src_.active((*ids)[k])) sum += 1.0 / ((*dist)[k] + kTiny);
    if (!(sum > 0)) return false;
    for (size_t k = 0; k < ids->size(); ++k) {
      if (!src_.active((*ids)[k])) continue;
      const double w = (1.0 / ((*dist)[k] + kTiny)) / sum;
      if (cubic_) {
        const double ws[4] = {w, 0, 0, 0};
        out->add((*ids)[k], d, ws);
      } else {
        out->add((*ids)[k], d, w);
      }
    }
    return true;
  }

  const Grid& src_;
  const Grid& dst_;
  bool cubic_;
  int64_t nx_, ny_;
  bool periodic_ = false;
  std::vector<Vec3> xyz_;
  std::unique_ptr<PointIndex> index_;  // built when the source has masked points
  std::vector<int64_t> opposite_[2];   // first and last rows, when they wind around a pole
  std::vector<std::pair<double, int64_t>> pole_lon_[2];  // those rows' points by longitude
  // The voxels (build_voxels).
  int slot_bits_ = 4;
  int64_t cells_ = 1;
  double inv_h_ = 1;
  std::vector<uint64_t> list_;
  std::vector<uint64_t> slot_key_;
  std::vector<size_t> slot_begin_, slot_end_;
};

}  // namespace

std::unique_ptr<WeightMethod> make_bilinear(const Grid& src, const Grid& dst, const GenOptions&) {
  return std::make_unique<BilinearMethod>(src, dst, false);
}

std::unique_ptr<WeightMethod> make_bicubic(const Grid& src, const Grid& dst, const GenOptions&) {
  return std::make_unique<BilinearMethod>(src, dst, true);
}

}  // namespace isthmus::remap
