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
// - The poles: when the first (last) row of a periodic grid winds once around the globe, keeps
//   close to a parallel and ends within twice its row spacing of the pole (cap_is_small), the
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
#include <limits>
#include <memory>
#include <mutex>
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
  BilinearMethod(const Grid& src, const Grid& dst, bool cubic,
                 const std::vector<int64_t>* dst_points, const SourceRows* rows)
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

    // Periodicity and the pole rows are the whole grid's: a window of its rows is told them.
    periodic_ = true;
    if (rows) {
      periodic_ = rows->periodic;
    } else {
      for (int64_t j : {ny_ / 4, ny_ / 2, (3 * ny_) / 4})
        periodic_ = periodic_ && bilinear_row_closes(src, j * nx_, nx_);
    }
    if (periodic_) {
      for (int side = 0; side < 2; ++side) {
        const int64_t j = side == 0 ? 0 : ny_ - 1;
        if (rows && !(side == 0 ? rows->first : rows->last)) continue;  // not the grid's
        if (ny_ < 2 || !row_winds(j) || !cap_is_small(j)) continue;
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
    // The band of z (sin latitude) of the points to be located: a quad whose circumscribed cap
    // misses it contains none of them and is not listed (a rank's block of rows needs the
    // source rows about its own).
    double zlo = -2, zhi = 2, lo = 0, hi = 0;
    if (dst_points && latitude_range(dst, *dst_points, &lo, &hi)) {
      zlo = std::sin(lo) - 1e-9;
      zhi = std::sin(hi) + 1e-9;
    }
    build_voxels(zlo, zhi, dst_points);
    if (any_masked) build_points();  // OASIS's fallback only
  }

  std::string name() const override { return cubic_ ? "bicubic" : "bilinear"; }
  int num_wgts() const override { return cubic_ ? 4 : 1; }

  void compute(const std::vector<int64_t>& todo, GenLinks* out,
               std::vector<int64_t>* unserved) const override {
    std::vector<int64_t> ids;
    std::vector<double> dist;
    out->reserve_more(static_cast<int64_t>(todo.size()) * 4);  // 4 links a point at most
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
      } else if (!emit_fallback(d, p, q, out, &ids, &dist)) {
        unserved->push_back(d);
      }
    }
  }

 private:
  // Whether row j (periodic) winds once around the globe.
  bool row_winds(int64_t j) const {
    const int64_t r = j * nx_;
    double turn = 0;
    for (int64_t i = 0; i < nx_; ++i) turn += wrap(src_.lon[r + (i + 1) % nx_] - src_.lon[r + i]);
    return std::fabs(std::fabs(turn) - kTwoPi) < 1e-6;
  }

  // Whether the cap beyond row j (the first or the last) is small enough for pole quads: the row
  // keeps close to one parallel (its latitudes within a quarter of its distance to the pole),
  // and that distance is at most twice the row's spacing from its neighbour row. Then pole quads
  // across the cap interpolate as the grid's other quads do (a regular grid's last row at
  // 89.5°); a grid ending far from the pole (a regional ocean grid at 66-72°N) would have quads
  // joining points 40° apart across a hole, and the points there are left to the stack's next
  // step instead (nearest, creep), as SCRIP leaves them to its distance-weighted fallback.
  bool cap_is_small(int64_t j) const {
    const int64_t r = j * nx_, r2 = (j == 0 ? 1 : j - 1) * nx_;
    double mean = 0, spacing = 0;
    for (int64_t i = 0; i < nx_; ++i) {
      mean += src_.lat[r + i];
      spacing += std::fabs(src_.lat[r + i] - src_.lat[r2 + i]);
    }
    mean /= static_cast<double>(nx_);
    spacing /= static_cast<double>(nx_);
    double spread = 0;
    for (int64_t i = 0; i < nx_; ++i) spread = std::max(spread, std::fabs(src_.lat[r + i] - mean));
    const double cap = 0.5 * kPi - std::fabs(mean);
    return spread <= 0.25 * cap && cap <= 2.0 * spacing;
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
  // lists a few quads. Only the voxels that reach the unit sphere are listed (no point of the
  // sphere looks into the others).
  // points: the destination points to be located (any when null): when they are few, only
  // their voxels are listed, so that a small destination over a large source lists a few
  // quads, not all of them.
  void build_voxels(double zlo, double zhi, const std::vector<int64_t>* points) {
    const int64_t i_end = periodic_ ? nx_ : nx_ - 1;
    const size_t nquads = static_cast<size_t>((ny_ - 1) * i_end);
    // The quads listed (in increasing number): those with a circumscribed cap (under a
    // hemisphere) that reaches the band. (Reserved for all: pages are touched only as used.)
    struct Cap {
      uint64_t entry;  // the quad's entry in list_ (its number and band of latitudes)
      Vec3 centre;
      double chord;  // circumscribed cap's chord radius
    };
    const int qbits = std::max(1, static_cast<int>(std::ceil(std::log2(nx_ * ny_ + 2 * nx_ + 1))));
    if (qbits > 40)
      fail(ISTHMUS_ERR_ARG, name(), " weights: the source grid '", src_.name, "' is too large");
    qbits_ = qbits;
    // The bits above an entry's quad: its band of latitudes, lbits_ each end, in units of
    // π / 2^lbits_ from the south pole.
    lbits_ = std::min(21, (64 - qbits) / 2);
    lscale_ = std::ldexp(1.0, lbits_) / kPi;
    std::vector<Cap> cap;
    cap.reserve(nquads);
    std::vector<double> diameters;
    diameters.reserve(nquads);
    for (int64_t j0 = 0; j0 + 1 < ny_; ++j0)
      for (int64_t i0 = 0; i0 < i_end; ++i0) {
        const int64_t i1 = i0 + 1 == nx_ ? 0 : i0 + 1;
        const int64_t c[4] = {j0 * nx_ + i0, j0 * nx_ + i1, (j0 + 1) * nx_ + i1,
                              (j0 + 1) * nx_ + i0};
        {
          // Outside the band by the ball about corner 0 through the others (when under 90°,
          // the cap it cuts holds the quad): not listed, its cap not computed.
          double d2 = 0;
          for (int k = 1; k < 4; ++k) {
            const Vec3 e = xyz_[c[k]] - xyz_[c[0]];
            d2 = std::max(d2, dot(e, e));
          }
          const double z0 = xyz_[c[0]].z, d = std::sqrt(d2) + 1e-9;
          if (d2 < 1.9 && (z0 - d > zhi || z0 + d < zlo)) continue;
        }
        Vec3 s;
        for (int k = 0; k < 4; ++k) s = s + xyz_[c[k]];
        if (norm(s) < 1e-12) continue;
        const Vec3 centre = normalized(s);
        // The circumscribed cap's chord radius: the largest chord from the centre to a corner
        // (unit vectors: accurate to a few ulps), widened past that rounding. Not a quad when
        // wider than a hemisphere (chord sqrt(2)).
        double c2max = 0;
        for (int k = 0; k < 4; ++k) {
          const Vec3 e = xyz_[c[k]] - centre;
          c2max = std::max(c2max, dot(e, e));
        }
        if (c2max >= 2.0 - 2e-9) continue;
        const double chord = std::sqrt(c2max) * (1.0 + 1e-12) + 1e-9;
        diameters.push_back(2.0 * chord);
        if (centre.z - chord > zhi || centre.z + chord < zlo) continue;  // |p.z - c.z| <= |p - c|
        const uint64_t key = static_cast<uint64_t>(j0 * nx_ + i0);
        cap.push_back({(lat_band(c, chord) << qbits) | key, centre, chord});
      }
    const int64_t max_cells = int64_t(1) << std::min(20, (64 - qbits) / 3);
    double h = 2.0 / static_cast<double>(max_cells - 1);
    if (!diameters.empty()) {
      std::nth_element(diameters.begin(), diameters.begin() + diameters.size() / 2,
                       diameters.end());
      h = std::max(h, 1.5 * diameters[diameters.size() / 2]);
    }
    h = std::min(h, 2.0);
    h_ = h;
    cells_ = static_cast<int64_t>(std::ceil(2.0 / h)) + 1;
    inv_h_ = 1.0 / h;
    // Per axis, the least and greatest square of a coordinate in each voxel (with a margin): a
    // voxel reaches the sphere if its least |x|^2 is <= 1 and its greatest >= 1.
    std::vector<double> lo2(static_cast<size_t>(cells_)), hi2(static_cast<size_t>(cells_));
    for (int64_t c = 0; c < cells_; ++c) {
      const double lo = static_cast<double>(c) / inv_h_ - 1.0 - 1e-9;
      const double hi = static_cast<double>(c + 1) / inv_h_ - 1.0 + 1e-9;
      lo2[c] = lo <= 0 && hi >= 0 ? 0.0 : std::min(lo * lo, hi * hi);
      hi2[c] = std::max(lo * lo, hi * hi);
    }
    constexpr double kShellLo = 1.0 - 1e-6, kShellHi = 1.0 + 1e-6;
    // The voxels of the points to be located (as locate() finds them), in an open-addressing
    // set of voxel + 1 (0: empty), when they are few next to the quads (otherwise nearly every
    // voxel holds one, and the test would only cost).
    std::vector<uint64_t> wanted;
    // The place of voxel v in `wanted`: its own, or the first after it holding v or nothing.
    const auto place = [&wanted](uint64_t v) {
      const size_t mask = wanted.size() - 1;
      size_t at = static_cast<size_t>(((v + 1) * 0x9E3779B97F4A7C15ull) >> 20) & mask;
      while (wanted[at] != 0 && wanted[at] != v + 1) at = (at + 1) & mask;
      return at;
    };
    if (points && points->size() < nquads / 8) {
      size_t size = 16;
      while (size < 2 * points->size()) size *= 2;
      wanted.assign(size, 0);
      for (const int64_t d : *points) {
        const Vec3 p = to_xyz(dst_.lon[d], dst_.lat[d]);
        if (!std::isfinite(p.x) || !std::isfinite(p.y) || !std::isfinite(p.z)) continue;
        const uint64_t v = voxel_of(p);
        wanted[place(v)] = v + 1;
      }
    }
    const auto is_wanted = [&](uint64_t v) { return wanted.empty() || wanted[place(v)] != 0; };
    // The registrations (voxel << qbits) | quad, in increasing quad: a stable sort by voxel
    // (LSD radix) sorts them by (voxel, quad).
    int vbits = 1;
    while ((int64_t(1) << vbits) < cells_ * cells_ * cells_) ++vbits;
    constexpr int kDigit = 13;
    const int passes = (vbits + kDigit - 1) / kDigit;
    const int digit = (vbits + passes - 1) / passes;
    const uint64_t dmask = (uint64_t(1) << digit) - 1;
    std::vector<uint64_t> reg;
    {
      size_t bound = 0;
      for (const Cap& q : cap) {
        const Vec3 c = q.centre;
        const double rho = q.chord;
        bound += static_cast<size_t>((cell(c.x + rho) - cell(c.x - rho) + 1) *
                                     (cell(c.y + rho) - cell(c.y - rho) + 1) *
                                     (cell(c.z + rho) - cell(c.z - rho) + 1));
      }
      reg.reserve(bound);
    }
    // The registrations hold an index into `entry`, the entries of the caps listed at least once
    // (in the order of the quads' numbers), until the voxels are known. (A few points over a
    // large source list a small part of the band's caps.)
    std::vector<uint64_t> entry;
    for (const Cap& q : cap) {
      bool listed = false;
      const Vec3 c = q.centre;
      const double rho = q.chord;
      const int64_t x0 = cell(c.x - rho), x1 = cell(c.x + rho);
      const int64_t y0 = cell(c.y - rho), y1 = cell(c.y + rho);
      const int64_t z0 = cell(c.z - rho), z1 = cell(c.z + rho);
      for (int64_t x = x0; x <= x1; ++x)
        for (int64_t y = y0; y <= y1; ++y) {
          const double l2 = lo2[x] + lo2[y], g2 = hi2[x] + hi2[y];
          for (int64_t z = z0; z <= z1; ++z) {
            if (l2 + lo2[z] > kShellHi || g2 + hi2[z] < kShellLo) continue;
            const uint64_t v = static_cast<uint64_t>((x * cells_ + y) * cells_ + z);
            if (!is_wanted(v)) continue;
            if (!listed) {
              entry.push_back(q.entry);
              listed = true;
            }
            reg.push_back((v << qbits) | (entry.size() - 1));
          }
        }
    }
    cap = std::vector<Cap>();
    {
      std::vector<uint64_t> tmp(reg.size());
      std::vector<size_t> hd;
      for (int d = 0; d < passes; ++d) {
        hd.assign(size_t(1) << digit, 0);
        const int shift = qbits + d * digit;
        for (const uint64_t r : reg) ++hd[(r >> shift) & dmask];
        size_t sum = 0;
        for (auto& c : hd) {
          const size_t t = c;
          c = sum;
          sum += t;
        }
        for (const uint64_t r : reg) tmp[hd[(r >> shift) & dmask]++] = r;
        reg.swap(tmp);
      }
    }
    if (reg.size() >= (size_t(1) << 32))
      fail(ISTHMUS_ERR_ARG, name(), " weights: the source grid '", src_.name, "' is too large");
    size_t unique = 0;
    for (size_t k = 0; k < reg.size(); ++k)
      if (k == 0 || (reg[k] >> qbits) != (reg[k - 1] >> qbits)) ++unique;
    size_t slots = 16;
    while (slots < 2 * unique) slots *= 2;
    slot_bits_ = static_cast<int>(std::log2(static_cast<double>(slots)) + 0.5);
    slots_.assign(slots, Slot{kEmpty, 0, 0});
    for (size_t k = 0; k < reg.size();) {
      const uint64_t v = reg[k] >> qbits;
      size_t e = k;
      while (e < reg.size() && (reg[e] >> qbits) == v) ++e;
      size_t s = slot_of(v);
      while (slots_[s].key != kEmpty) s = (s + 1) & (slots - 1);
      slots_[s] = Slot{v, static_cast<uint32_t>(k), static_cast<uint32_t>(e)};
      k = e;
    }
    const uint64_t imask = (uint64_t(1) << qbits) - 1;
    for (uint64_t& r : reg) r = entry[r & imask];
    list_ = std::move(reg);
  }
  static constexpr uint64_t kEmpty = ~uint64_t(0);
  int64_t cell(double x) const {
    const int64_t c = static_cast<int64_t>(std::floor((x + 1.0) * inv_h_));
    return std::min(std::max(c, int64_t(0)), cells_ - 1);
  }
  // The voxel of a point of the sphere (the one locate() looks into).
  uint64_t voxel_of(Vec3 p) const {
    return static_cast<uint64_t>((cell(p.x) * cells_ + cell(p.y)) * cells_ + cell(p.z));
  }
  // The latitudes a small quad's points may have, in SCRIP's plane or on the sphere, as the
  // bits of its entry in list_ (low end << lbits_ | high end, rounded outwards): its corners',
  // widened by what a great-circle edge may bulge towards the pole (for an edge of length L at
  // latitude φ about L²/8 · tan φ; L <= 2 · chord and tan 80° < 6, and twice that is taken), and
  // by 1e-9 for the containment tests' tolerance. Every latitude for quads that are not small
  // (chord >= 0.1), reach beyond 80° (where a pole may be near or inside) or have a corner
  // without a finite latitude.
  uint64_t lat_band(const int64_t* c, double chord) const {
    const uint64_t lmax = (uint64_t(1) << lbits_) - 1;
    double a = kPi, b = -kPi;
    for (int k = 0; k < 4; ++k) {
      const double lat = src_.lat[c[k]];
      if (!(std::fabs(lat) < 80.0 * kPi / 180.0) || !(chord < 0.1)) return lmax;  // [0, lmax]
      a = std::min(a, lat);
      b = std::max(b, lat);
    }
    const double bulge = 6.0 * chord * chord + 1e-9;
    const double lo = std::floor((a - bulge + 0.5 * kPi) * lscale_) - 1.0;
    const double hi = std::ceil((b + bulge + 0.5 * kPi) * lscale_) + 1.0;
    const uint64_t l = lo <= 0.0 ? 0 : static_cast<uint64_t>(lo);
    const uint64_t h = hi >= double(lmax) ? lmax : static_cast<uint64_t>(hi);
    return (l << lbits_) | h;
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
    const uint64_t v = voxel_of(p);
    size_t s = slot_of(v);
    while (slots_[s].key != v) {
      if (slots_[s].key == kEmpty) return locate_pole(p, q, a, b);
      s = (s + 1) & (slots_.size() - 1);
    }
    const uint64_t qmask = (uint64_t(1) << qbits_) - 1;
    const size_t begin = slots_[s].begin, end = slots_[s].end;
    // A quad whose band of latitudes misses p's contains it neither way (a point beyond the
    // poles' latitudes, which the bands do not order, is tested against every quad). A point at
    // a pole is at the end of the scale, inside the bands of every latitude (polar quads').
    const uint64_t lmax = (uint64_t(1) << lbits_) - 1;
    const double pl = std::min((plat + 0.5 * kPi) * lscale_, double(lmax));
    const bool banded = plat >= -0.5 * kPi && plat <= 0.5 * kPi;
    const auto outside = [&](uint64_t e) {
      const uint64_t band = e >> qbits_;
      return banded && (pl < double(band >> lbits_) || pl > double(band & lmax));
    };
    double x[4], y[4];
    for (size_t k = begin; k < end; ++k) {
      if (outside(list_[k])) continue;
      const Quad t = quad(static_cast<int64_t>(list_[k] & qmask));
      const bool found = lonlat_plane(t, plon, plat, x, y)
                             ? plane_contains(x, y) && inverse_bilinear(x, y, a, b) &&
                                   in_unit(*a) && in_unit(*b)
                             : contains(t, p) && solve_gnomonic(t, p, a, b);
      if (found) {
        *q = t;
        return true;
      }
    }
    for (size_t k = begin; k < end; ++k) {
      if (outside(list_[k])) continue;
      const Quad t = quad(static_cast<int64_t>(list_[k] & qmask));
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

  // The index of the source points for OASIS's fallback: a uniform grid of cells over [-1, 1]^3
  // (twice the voxels' edge, at most 256 per axis), each listing its points in increasing
  // address; and, on a coarse grid of 64^3 cells, which hold an active point (a bit mask of z
  // per (x, y) column).
  void build_points() {
    const int64_t n = src_.size();
    if (n >= (int64_t(1) << 32)) return;  // the k-d tree only
    pcells_ = std::min<int64_t>(256, static_cast<int64_t>(std::ceil(2.0 / (2.0 * h_))) + 1);
    inv_hp_ = static_cast<double>(pcells_ - 1) / 2.0;
    if (2.0 * h_ * inv_hp_ > 1.0) inv_hp_ = 1.0 / (2.0 * h_);
    const size_t ncells = static_cast<size_t>(pcells_ * pcells_ * pcells_);
    std::vector<uint32_t> of(static_cast<size_t>(n));
    pstart_.assign(ncells + 1, 0);
    coarse_.assign(size_t(64) * 64, 0);
    for (int64_t k = 0; k < n; ++k) {
      const Vec3 v = xyz_[k];
      const uint32_t c = static_cast<uint32_t>((pcell(v.x) * pcells_ + pcell(v.y)) * pcells_ + pcell(v.z));
      of[k] = c;
      ++pstart_[c + 1];
      if (!src_.active(k)) continue;
      coarse_[ccell(v.x) * 64 + ccell(v.y)] |= uint64_t(1) << ccell(v.z);
      for (int side = 0; side < 2; ++side)
        pole_active_[side] = std::min(pole_active_[side], norm(v - kPoles[side]));
    }
    for (size_t c = 0; c < ncells; ++c) pstart_[c + 1] += pstart_[c];
    pids_.resize(static_cast<size_t>(n));
    std::vector<uint32_t> fill(pstart_.begin(), pstart_.end() - 1);
    for (int64_t k = 0; k < n; ++k) pids_[fill[of[k]]++] = static_cast<uint32_t>(k);
    have_points_ = true;
  }
  int64_t pcell(double x) const {
    const int64_t c = static_cast<int64_t>(std::floor((x + 1.0) * inv_hp_));
    return std::min(std::max(c, int64_t(0)), pcells_ - 1);
  }
  static int64_t ccell(double x) {
    const int64_t c = static_cast<int64_t>(std::floor((x + 1.0) * 31.5));
    return std::min(std::max(c, int64_t(0)), int64_t(63));
  }
  // The squared chord as the k-d tree computes it.
  static double chord2(Vec3 p, Vec3 v) {
    const double dx = p.x - v.x, dy = p.y - v.y, dz = p.z - v.z;
    return dx * dx + dy * dy + dz * dz;
  }

  // The 4 nearest source centres to p (masked ones included; by distance, ties by address):
  // false if none of them is active. q (containing p) bounds their distance. *reach: the
  // distance within which every source point was considered (GenLinks::reach).
  bool nearest4(Vec3 p, const Quad& q, std::vector<int64_t>* ids, std::vector<double>* dist,
                double* reach) const {
    ids->clear();
    dist->clear();
    // Any 4 distinct points bound the 4th distance: the quad's corners, and for a pole quad
    // (whose far corners are across the pole) the near row's points next to its near edge.
    int64_t cand[12];
    int nc = 0;
    for (int k = 0; k < 4; ++k) cand[nc++] = q.c[k];
    if (q.idir[2] < 0) {  // the row's points either side of each corner
      const int64_t r = q.c[0] - q.c[0] % nx_;
      for (int k = 0; k < 4; ++k) {
        cand[nc++] = r + (q.c[k] - r + nx_ - 1) % nx_;
        cand[nc++] = r + (q.c[k] - r + 1) % nx_;
      }
    }
    double cd[12];
    int nd = 0;
    for (int k = 0; k < nc; ++k) {
      bool dup = false;
      for (int l = 0; l < k; ++l) dup = dup || cand[l] == cand[k];
      if (!dup) cd[nd++] = chord2(p, xyz_[cand[k]]);
    }
    if (!have_points_ || nd < 4) return nearest4_tree(p, ids, dist, reach);
    for (int k = 1; k < nd; ++k)  // insertion sort: nd <= 12
      for (int l = k; l > 0 && cd[l] < cd[l - 1]; --l) std::swap(cd[l], cd[l - 1]);
    const double bound = cd[3];
    if (!(bound >= 0) || !std::isfinite(bound)) return nearest4_tree(p, ids, dist, reach);
    // Every point as near as the bound is in the box p +- s.
    const double s = std::sqrt(bound) * (1.0 + 1e-9) + 1e-300;
    *reach = 2.0 * std::asin(std::min(1.0, 0.5 * s));
    // No active point as near as the bound: the 4 are masked. First by the chord from the poles
    // to the nearest active point (the triangle inequality), then by the coarse cells.
    for (int side = 0; side < 2; ++side)
      if (s * (1.0 + 1e-9) + 1e-12 < (pole_active_[side] - norm(p - kPoles[side])) * (1.0 - 1e-9))
        return false;
    {
      const int64_t x0 = ccell(p.x - s), x1 = ccell(p.x + s), y0 = ccell(p.y - s),
                    y1 = ccell(p.y + s), z0 = ccell(p.z - s), z1 = ccell(p.z + s);
      const uint64_t zm = (z1 == 63 ? ~uint64_t(0) : (uint64_t(1) << (z1 + 1)) - 1) &
                          ~((uint64_t(1) << z0) - 1);
      bool any = false;
      for (int64_t x = x0; x <= x1 && !any; ++x)
        for (int64_t y = y0; y <= y1; ++y)
          if (coarse_[x * 64 + y] & zm) {
            any = true;
            break;
          }
      if (!any) return false;
    }
    // The 4 least (distance, address) of the points in the box p +- sb, sb growing to s until
    // the 4th is nearer than the box's sides.
    double bd[4];
    int64_t bi[4];
    int nb = 0;
    for (double sb = std::min(s, 2.0 / inv_hp_);; sb = std::min(s, 2.0 * sb)) {
      const int64_t x0 = pcell(p.x - sb), x1 = pcell(p.x + sb), y0 = pcell(p.y - sb),
                    y1 = pcell(p.y + sb), z0 = pcell(p.z - sb), z1 = pcell(p.z + sb);
      if ((x1 - x0 + 1) * (y1 - y0 + 1) * (z1 - z0 + 1) > (int64_t(1) << 18))
        return nearest4_tree(p, ids, dist, reach);
      nb = 0;
      for (int64_t x = x0; x <= x1; ++x)
        for (int64_t y = y0; y <= y1; ++y) {
          const size_t c0 = static_cast<size_t>((x * pcells_ + y) * pcells_);
          for (uint32_t k = pstart_[c0 + z0]; k < pstart_[c0 + z1 + 1]; ++k) {
            const int64_t id = pids_[k];
            const double d2 = chord2(p, xyz_[id]);
            if (nb == 4 && !(d2 < bd[3] || (d2 == bd[3] && id < bi[3]))) continue;
            int m = nb < 4 ? nb++ : 3;
            for (; m > 0 && (d2 < bd[m - 1] || (d2 == bd[m - 1] && id < bi[m - 1])); --m) {
              bd[m] = bd[m - 1];
              bi[m] = bi[m - 1];
            }
            bd[m] = d2;
            bi[m] = id;
          }
        }
      if (sb >= s || (nb == 4 && std::sqrt(bd[3]) * (1.0 + 1e-9) + 1e-300 <= sb)) break;
    }
    if (nb < 4) return nearest4_tree(p, ids, dist, reach);  // not expected: the bound's 4 are in
    bool any_active = false;
    for (int k = 0; k < 4; ++k) {
      ids->push_back(bi[k]);
      dist->push_back(chord2_to_angle(bd[k]));
      any_active = any_active || src_.active(bi[k]);
    }
    return any_active;
  }
  bool nearest4_tree(Vec3 p, std::vector<int64_t>* ids, std::vector<double>* dist,
                     double* reach) const {
    std::call_once(tree_once_, [this] {
      std::vector<int64_t> all(static_cast<size_t>(src_.size()));
      for (int64_t k = 0; k < src_.size(); ++k) all[k] = k;
      tree_ = std::make_unique<PointIndex>(xyz_, std::move(all));
    });
    tree_->nearest(p, 4, ids, dist);
    *reach = ids->size() == 4 ? dist->back() : std::numeric_limits<double>::infinity();
    for (const int64_t id : *ids)
      if (src_.active(id)) return true;
    return false;
  }

  // OASIS's fallback for a quad with a masked corner (see the top). False: no active one.
  bool emit_fallback(int64_t d, Vec3 p, const Quad& q, GenLinks* out, std::vector<int64_t>* ids,
                     std::vector<double>* dist) const {
    double reach = std::numeric_limits<double>::infinity();
    const bool found = nearest4(p, q, ids, dist, &reach);
    if (out->want_reach) out->reach.emplace_back(d, reach);
    if (!found) return false;
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
  // The fallback's index (build_points), and the k-d tree of all points for what it cannot
  // answer (built on first use).
  bool have_points_ = false;
  int64_t pcells_ = 1;
  double inv_hp_ = 1;
  std::vector<uint32_t> pstart_, pids_;
  std::vector<uint64_t> coarse_;
  static constexpr Vec3 kPoles[2] = {{0, 0, -1}, {0, 0, 1}};
  double pole_active_[2] = {4.0, 4.0};  // chord from each pole to the nearest active point
  mutable std::once_flag tree_once_;
  mutable std::unique_ptr<PointIndex> tree_;
  std::vector<int64_t> opposite_[2];   // first and last rows, when they wind around a pole
  std::vector<std::pair<double, int64_t>> pole_lon_[2];  // those rows' points by longitude
  // The voxels (build_voxels).
  struct Slot {
    uint64_t key;         // the voxel, kEmpty: none
    uint32_t begin, end;  // its quads in list_
  };
  int slot_bits_ = 4;
  int qbits_ = 1;
  int lbits_ = 0;      // bits of each end of a list entry's band of latitudes
  double lscale_ = 0;  // 2^lbits_ / π
  int64_t cells_ = 1;
  double h_ = 2, inv_h_ = 1;
  // By voxel, then quad: (latitude band's low end << lbits_ | high end) << qbits_ | quad.
  std::vector<uint64_t> list_;
  std::vector<Slot> slots_;
};

}  // namespace

bool bilinear_row_closes(const Grid& g, int64_t first, int64_t nx) {
  double turn = 0, longest = 0;
  for (int64_t i = 0; i + 1 < nx; ++i) {
    turn += wrap(g.lon[first + i + 1] - g.lon[first + i]);
    longest = std::max(longest, angle(to_xyz(g.lon[first + i], g.lat[first + i]),
                                      to_xyz(g.lon[first + i + 1], g.lat[first + i + 1])));
  }
  turn += wrap(g.lon[first] - g.lon[first + nx - 1]);
  const double closing = angle(to_xyz(g.lon[first + nx - 1], g.lat[first + nx - 1]),
                               to_xyz(g.lon[first], g.lat[first]));
  return std::fabs(std::fabs(turn) - kTwoPi) < 1e-6 && closing <= 2.0 * longest;
}

double bilinear_quad_reach(const Vec3* lower, const Vec3* upper, int64_t nx) {
  double widest = 0;  // the largest squared chord between two corners of a quad
  for (int64_t i = 0; i < nx; ++i) {
    const int64_t i1 = (i + 1) % nx;  // the closing quad too: a superset costs nothing
    const Vec3 v[4] = {lower[i], lower[i1], upper[i1], upper[i]};
    bool finite_quad = true;
    for (const Vec3& c : v) finite_quad = finite_quad && std::isfinite(c.x + c.y + c.z);
    if (!finite_quad) continue;
    for (int a = 0; a < 4; ++a)
      for (int b = a + 1; b < 4; ++b) {
        const Vec3 e = v[a] - v[b];
        widest = std::max(widest, dot(e, e));
      }
  }
  const double chord = std::min(2.0, std::sqrt(widest));
  return 2.0 * std::asin(0.5 * chord) * 1.01 + 1e-9;
}

std::unique_ptr<WeightMethod> make_bilinear(const Grid& src, const Grid& dst, const GenOptions&,
                                            const std::vector<int64_t>* dst_points,
                                            const SourceRows* rows) {
  return std::make_unique<BilinearMethod>(src, dst, false, dst_points, rows);
}

std::unique_ptr<WeightMethod> make_bicubic(const Grid& src, const Grid& dst, const GenOptions&,
                                           const std::vector<int64_t>* dst_points,
                                           const SourceRows* rows) {
  return std::make_unique<BilinearMethod>(src, dst, true, dst_points, rows);
}

}  // namespace isthmus::remap
