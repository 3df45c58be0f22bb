// Weight generation (issue 15): first- and second-order conservative remapping (OASIS3-MCT's
// CONSERV, SCRIP's conservative remapping, CDO's gencon).
//
// Cells. Every cell of both grids is a spherical polygon with great-circle edges through its
// corners, taken as 3-D unit vectors once in make_conservative (so the poles and the date line
// need no special case). Its corners are cleaned: repeated consecutive corners (within 1e-12
// radians, e.g. the two corners of a lon-lat cell at a pole, or SCRIP's padding of unstructured
// cells) are dropped, and the order is made counter-clockwise (a clockwise cell is reversed, not
// dropped). A convex cell is one piece; a simple non-convex cell is cut into triangles (ear
// clipping); a cell with a non-finite corner, under 3 distinct corners, (near) zero area, or a
// self-crossing boundary (a bow-tie) is EMPTY: as a source it never gets a link, as a
// destination it overlaps nothing (so it is unserved, or served by FRACNNEI's nearest
// neighbour). Areas are the cells' own spherical areas (spherical_polygon_area of the pieces),
// never those of a file.
//
// Overlaps. Each active source cell is built once, the first time compute() needs it (so a rank
// builds only the cells its destination points overlap; compute() is not thread-safe), each
// destination cell when compute() asks for it. Each cell lies in the spherical cap of chord
// radius `chord` about its grid centre (or its corners' mean when the grid centre is 90° or more
// from a corner). make_conservative takes, for a cell not built yet, its grid centre and a bound
// of that chord without trigonometry (the length of the straight line from the centre to each
// corner in longitude and latitude, whose metric is dlat² + cos² lat dlon²); the few cells for
// which the bound is not safe (non-finite centre, latitudes over 90°, caps near 90°) are built
// there. Given the destination points it will be asked for (a rank's block), it leaves out the
// source cells whose caps' latitudes miss the block's (its centres' latitudes widened by the
// largest of its cells' bounds), so that ranks divide this work. Candidate source cells come
// from buckets of the cap centres (the cube's faces cut in N × N, one set per class of cap
// radius, halving from the largest): those within chord_dst +
// chord_src of the destination's centre (chord(a + b) <= chord(a) + chord(b)) by the bound,
// then, built, by the exact chord. The few source cells with outsized caps (over 4 times the
// 99.9th percentile, or over 80°) are kept apart and tested against every destination cell.
// A pair's overlap is the sum over piece pairs of the area of the source piece clipped
// (Sutherland–Hodgman, in 3-D) by the great-circle planes of the convex destination piece's
// edges. Overlaps at or under kSliver·min(chord_dst, chord_src) steradians are dropped: they
// are the rounding slivers of cells that only share an edge or a corner (an exact overlap of
// area 0 comes out as ~1e-16·length).
//
// Normalisation (GenOptions::normalization, OASIS CONSERV / SCRIP norm_opt), with A∩ the
// overlap of destination cell d and active source cell s and A_d the area of d:
//   "destarea": w = A∩ / A_d (a partly covered cell's weights sum to its covered fraction);
//   "fracarea": w = A∩ / Σ_s A∩ (weights sum to 1 for every point with any overlap);
//   "fracnnei": "fracarea", plus: an active destination point with no overlap gets its nearest
//               active source point (great-circle distance between the grids' centres, ties
//               by index; any active point, even an empty cell)
//               with weight 1 (OASIS's fracnnei; OASIS does it only for points whose overlaps
//               are all with masked sources, i.e. also not for points outside the source grid).
// A destination point with no overlap (and not FRACNNEI) is left unserved.
//
// Second order (GenOptions::conservative_order = 2, SCRIP's second-order conservative): three
// weights per link, as SCRIP's remap_conserv (weights(2..3) from line_integral, then the
// centroid correction before normalisation):
//   w1 = A∩ · f,
//   w2 = (∫_{d∩s} θ dA − A∩ θ_s) · f,            θ_s = ∫_s θ dA / A_s,
//   w3 = (∫_{d∩s} φ' cos θ dA − A∩ φ_s) · f,     φ_s = ∫_s φ' cos θ dA / A_s,
// with θ the latitude, φ' the longitude minus the source cell's centre longitude wrapped into
// [-π, π), f the normalisation factor (1/A_d or 1/Σ A∩) and the destination value
// Σ w1·F_s + w2·∂F/∂θ|_s + w3·(1/cos θ)·∂F/∂φ|_s (SCRIP's grad1_lat and grad1_lon). SCRIP gets
// the integrals from line integrals with a trapezoidal rule along lat-lon straight edges; here
// they are integrals over the great-circle polygons, by a 7-point degree-5 rule on every triangle
// of a fan of the polygon (radially projected from the flat triangle). φ' is discontinuous
// across the meridian opposite the source centre: for a source cell around a pole this makes
// w3 approximate (as SCRIP's, which has the same singularity). FRACNNEI's nearest-neighbour
// links are (1, 0, 0).
//
// Links of a point are in ascending source index; they depend only on the two grids and the
// options, never on the batch of points asked for (nor on which source cells are built).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "base/error.h"
#include "remap/sphere.h"
#include "remap/weights_gen.h"

namespace isthmus::remap {

namespace {

constexpr double kPi = 3.14159265358979323846;
// Corners closer than this (chord, radians) are one corner.
constexpr double kSameCorner = 1e-12;
// A turn whose sine is above -kStraight counts as convex (collinear corners, rounding).
constexpr double kStraight = 1e-12;
// Overlaps at or under kSliver · min(cap radius) steradians are rounding slivers.
constexpr double kSliver = 1e-14;

// The signed area of the triangle (a, b, c): positive when counter-clockwise seen from outside.
inline double signed_triangle(Vec3 a, Vec3 b, Vec3 c) {
  // det(a, b, c) as a·((b−a)×(c−a)): no cancellation for small triangles.
  const double num = dot(a, cross(b - a, c - a));
  const double den = 1.0 + dot(a, b) + dot(b, c) + dot(c, a);
  return 2.0 * std::atan2(num, den);
}

double signed_area(const Vec3* v, int n) {
  double s = 0.0;
  for (int i = 1; i + 1 < n; ++i) s += signed_triangle(v[0], v[i], v[i + 1]);
  return s;
}

// The sine-like turn at b on the path a → b → c: > 0 for a left (counter-clockwise) turn,
// scaled by the two edge lengths.
inline double turn(Vec3 a, Vec3 b, Vec3 c) { return dot(b, cross(b - a, c - b)); }

// Do the great-circle arcs a-b and c-d cross (not counting shared end points)? For arcs of
// under a half circle.
bool arcs_cross(Vec3 a, Vec3 b, Vec3 c, Vec3 d) {
  const Vec3 n1 = cross(a, b), n2 = cross(c, d);
  const double sc = dot(n1, c), sd = dot(n1, d), sa = dot(n2, a), sb = dot(n2, b);
  if (!((sc > 0 && sd < 0) || (sc < 0 && sd > 0))) return false;
  if (!((sa > 0 && sb < 0) || (sa < 0 && sb > 0))) return false;
  // The planes cross on the line ±n1×n2: the arcs meet when it is on the same side as them.
  return dot(a + b, c + d) > 0;
}

// Is p inside the counter-clockwise triangle (a, b, c) (boundary included)?
bool in_triangle(Vec3 p, Vec3 a, Vec3 b, Vec3 c) {
  return dot(cross(a, b), p) >= 0 && dot(cross(b, c), p) >= 0 && dot(cross(c, a), p) >= 0 &&
         dot(p, a + b + c) > 0;
}

// The convex pieces of all cells of one grid.
struct Cells {
  std::vector<Vec3> verts;       // piece p: verts[pbeg[p] .. pbeg[p + 1])
  std::vector<int64_t> pbeg;     // size pieces + 1
  std::vector<int64_t> cbeg;     // cell c: pieces cbeg[c] .. cbeg[c + 1] (none: empty cell)
  std::vector<double> area;      // steradians
  std::vector<Vec3> centre;      // cap centre (the grid's centre, or the corners' mean)
  std::vector<double> chord;     // cap radius (chord): the cell lies within it
  bool empty(int64_t c) const { return cbeg[c] == cbeg[c + 1]; }
};

// Cleans the corners of one cell into *poly (counter-clockwise, distinct); then appends its
// convex pieces to *cells. Returns false (nothing appended) for an empty cell.
bool add_pieces(std::vector<Vec3>& poly, Cells* cells) {
  int n = static_cast<int>(poly.size());
  // Drop repeated consecutive corners (cyclically).
  {
    int m = 0;
    // (the square first: a norm only when it may be under kSameCorner)
    auto same = [](Vec3 a, Vec3 b) {
      const Vec3 d = a - b;
      return dot(d, d) < 1.001 * kSameCorner * kSameCorner && norm(d) < kSameCorner;
    };
    for (int i = 0; i < n; ++i) {
      if (m > 0 && same(poly[i], poly[m - 1])) continue;
      poly[m++] = poly[i];
    }
    while (m > 1 && same(poly[m - 1], poly[0])) --m;
    n = m;
    poly.resize(n);
  }
  if (n < 3) return false;
  double a = signed_area(poly.data(), n);
  if (!std::isfinite(a)) return false;
  if (a < 0) {
    std::reverse(poly.begin(), poly.end());
    a = -a;
  }
  double maxedge2 = 0;  // the longest edge is the square root of the largest square
  for (int i = 0; i < n; ++i) {
    const Vec3 e = poly[(i + 1) % n] - poly[i];
    maxedge2 = std::max(maxedge2, dot(e, e));
  }
  const double maxedge = std::sqrt(maxedge2);
  if (!(a > 1e-12 * maxedge * maxedge) || a >= 2.0 * kPi) return false;  // sliver / too big

  bool convex = true;
  for (int i = 0; i < n && convex; ++i) {
    const Vec3 p = poly[(i + n - 1) % n], q = poly[i], r = poly[(i + 1) % n];
    const double t = turn(p, q, r);
    if (t < 0 && t < -kStraight * norm(q - p) * norm(r - q)) convex = false;
  }
  auto push_piece = [cells](const Vec3* v, int k) {
    cells->verts.insert(cells->verts.end(), v, v + k);
    cells->pbeg.push_back(static_cast<int64_t>(cells->verts.size()));
  };
  if (convex) {
    push_piece(poly.data(), n);
    return true;
  }
  // Non-convex: reject a self-crossing boundary, then cut ears.
  for (int i = 0; i < n; ++i)
    for (int j = i + 2; j < n; ++j) {
      if (i == 0 && j == n - 1) continue;  // adjacent
      if (arcs_cross(poly[i], poly[(i + 1) % n], poly[j], poly[(j + 1) % n])) return false;
    }
  std::vector<Vec3> rest = poly;
  std::vector<Vec3> tris;
  while (rest.size() > 3) {
    const int k = static_cast<int>(rest.size());
    int ear = -1;
    for (int i = 0; i < k && ear < 0; ++i) {
      const Vec3 p = rest[(i + k - 1) % k], q = rest[i], r = rest[(i + 1) % k];
      if (turn(p, q, r) <= 0) continue;
      bool clear = true;
      for (int j = 0; j < k && clear; ++j) {
        if (j == i || j == (i + 1) % k || j == (i + k - 1) % k) continue;
        if (in_triangle(rest[j], p, q, r)) clear = false;
      }
      if (clear) ear = i;
    }
    if (ear < 0) return false;
    tris.push_back(rest[(ear + k - 1) % k]);
    tris.push_back(rest[ear]);
    tris.push_back(rest[(ear + 1) % k]);
    rest.erase(rest.begin() + ear);
  }
  if (signed_area(rest.data(), 3) > 0) tris.insert(tris.end(), rest.begin(), rest.end());
  for (size_t t = 0; t + 2 < tris.size(); t += 3) push_piece(&tris[t], 3);
  return true;
}

// Appends the pieces of cell c of g to *cells (none for an empty cell; poly: scratch) and
// returns whether it has any; sets *area (when with_area), *centre and *chord (the chord of its
// cap's radius; 2 when no cap of under 90° holds it). trig: to_xyz's cache, if any;
// centre_known: *centre already holds to_xyz of the grid's (finite) centre.
bool make_cell(const Grid& g, int64_t c, bool with_area, std::vector<Vec3>* poly, Cells* cells,
               double* area, Vec3* centre, double* chord, TrigCache* trig = nullptr,
               bool centre_known = false) {
  const int nc = g.num_corners;
  poly->clear();
  for (int k = 0; k < nc; ++k) {
    const double lo = g.corner_lon[c * nc + k], la = g.corner_lat[c * nc + k];
    if (!std::isfinite(lo) || !std::isfinite(la)) return false;
    poly->push_back(trig ? trig->xyz(lo, la) : to_xyz(lo, la));
  }
  const int64_t p0 = static_cast<int64_t>(cells->pbeg.size()) - 1;
  if (!add_pieces(*poly, cells)) {
    cells->pbeg.resize(p0 + 1);
    cells->verts.resize(cells->pbeg.back());
    return false;
  }
  const int64_t p1 = static_cast<int64_t>(cells->pbeg.size()) - 1;
  if (with_area) {
    double a = 0;
    for (int64_t p = p0; p < p1; ++p)
      a += spherical_polygon_area(&cells->verts[cells->pbeg[p]],
                                  static_cast<int>(cells->pbeg[p + 1] - cells->pbeg[p]));
    *area = a;
  }
  // The grid's centre if the cell lies in a (convex) cap of under 90° about it, else the
  // corners' mean; a cell in no such cap is a candidate of every cell.
  auto cap = [poly](Vec3 o) {
    double r2 = 0;
    for (const Vec3& v : *poly) {
      const Vec3 d = v - o;
      r2 = std::max(r2, dot(d, d));
    }
    return std::sqrt(r2);
  };
  constexpr double kRightAngle = 1.4142135623730951;  // the chord of 90°
  double r = 2;
  if (std::isfinite(g.lon[c]) && std::isfinite(g.lat[c])) {
    if (!centre_known) *centre = trig ? trig->xyz(g.lon[c], g.lat[c]) : to_xyz(g.lon[c], g.lat[c]);
    r = cap(*centre);
  }
  if (!(r < kRightAngle)) {
    Vec3 mean;
    for (const Vec3& v : *poly) mean = mean + v;
    *centre = normalized(mean);
    r = cap(*centre);
    if (!(r < kRightAngle)) r = 2;
  }
  *chord = std::min(2.0, r * (1 + 1e-12) + 1e-14);
  return true;
}

// Clips the polygon `in` (k vertices) by the half-spaces dot(normal[i], x) >= 0 (m planes);
// returns the number of vertices of the result, in buf[0] or buf[1] as *which says (each of
// k + m vertices at least). Vertices are unit vectors.
int clip(const Vec3* in, int k, const Vec3* normal, int m, Vec3* buf[2], int* which) {
  const Vec3* poly = in;
  int np = k, cur = 0;
  for (int i = 0; i < m && np >= 3; ++i) {
    const Vec3 nrm = normal[i];
    Vec3* out = buf[cur];
    int no = 0;
    Vec3 s = poly[np - 1];
    double ds = dot(nrm, s);
    for (int j = 0; j < np; ++j) {
      const Vec3 e = poly[j];
      const double de = dot(nrm, e);
      if ((de >= 0) != (ds >= 0)) out[no++] = normalized(std::fabs(de) * s + std::fabs(ds) * e);
      if (de >= 0) out[no++] = e;
      s = e;
      ds = de;
    }
    poly = out;
    np = no;
    cur ^= 1;
  }
  if (poly == in) {  // no plane: a copy
    std::copy(in, in + k, buf[0]);
    cur = 1;
  }
  *which = cur ^ 1;
  return np;
}

// ∫ (θ − lat_ref) dA and ∫ wrap(φ − lon_ref) cos θ dA over the convex polygon v (k vertices),
// by Dunavant's 7-point rule of degree 5 on each triangle of the fan from v[0], mapped radially
// (x = p/|p|, dA = det(a, b, c)/|p|³ on the flat triangle), each triangle's rule scaled to give
// its exact area. Centring on the source cell's centre keeps the rounding and the rule's error
// relative to the cell's size. Near a pole (under 11° from it) the triangles are cut into 4 or
// 64 (the latitude has a cone there).
void tri_moments(Vec3 a, Vec3 b, Vec3 c, double lon_ref, double lat_ref, int depth, double* sl,
                 double* sp) {
  if (depth > 0) {  // four triangles between the edges' midpoints
    const Vec3 ab = normalized(a + b), bc = normalized(b + c), ca = normalized(c + a);
    tri_moments(a, ab, ca, lon_ref, lat_ref, depth - 1, sl, sp);
    tri_moments(ab, b, bc, lon_ref, lat_ref, depth - 1, sl, sp);
    tri_moments(ca, bc, c, lon_ref, lat_ref, depth - 1, sl, sp);
    tri_moments(ab, bc, ca, lon_ref, lat_ref, depth - 1, sl, sp);
    return;
  }
  static const double kA1 = 0.059715871789770, kB1 = 0.470142064105115;
  static const double kA2 = 0.797426985353087, kB2 = 0.101286507323456;
  static const double kW0 = 0.225, kW1 = 0.132394152788506, kW2 = 0.125939180544827;
  static const double bary[7][3] = {{1.0 / 3, 1.0 / 3, 1.0 / 3}, {kA1, kB1, kB1}, {kB1, kA1, kB1},
                                    {kB1, kB1, kA1},             {kA2, kB2, kB2}, {kB2, kA2, kB2},
                                    {kB2, kB2, kA2}};
  static const double wq[7] = {kW0, kW1, kW1, kW1, kW2, kW2, kW2};
  const double exact = signed_triangle(a, b, c);
  double tl = 0, tp = 0, ta = 0;
  for (int q = 0; q < 7; ++q) {
    const Vec3 p = bary[q][0] * a + bary[q][1] * b + bary[q][2] * c;
    const double r = norm(p);
    const double jac = wq[q] / (r * r * r);
    const double h = std::sqrt(p.x * p.x + p.y * p.y);
    const double lat = std::atan2(p.z, h) - lat_ref;
    const double dl = std::remainder(std::atan2(p.y, p.x) - lon_ref, 2.0 * kPi);  // [-π, π]
    ta += jac;
    tl += jac * lat;
    tp += jac * dl * (h / r);
  }
  if (ta > 0) {
    *sl += exact * tl / ta;
    *sp += exact * tp / ta;
  }
}

void moments(const Vec3* v, int k, double lon_ref, double lat_ref, double* mlat, double* mlon) {
  // Latitude is not smooth at a pole (a cone): fan from the corner nearest a pole, and cut the
  // triangles finer near one.
  int apex = 0;
  for (int i = 1; i < k; ++i)
    if (std::fabs(v[i].z) > std::fabs(v[apex].z)) apex = i;
  const double h = std::hypot(v[apex].x, v[apex].y);
  const int depth = h < 0.05 ? 3 : (h < 0.2 ? 1 : 0);
  double sl = 0, sp = 0;
  for (int t = 1; t + 1 < k; ++t)
    tri_moments(v[apex], v[(apex + t) % k], v[(apex + t + 1) % k], lon_ref, lat_ref, depth, &sl,
                &sp);
  *mlat = sl;
  *mlon = sp;
}

// A bound of the chord from cell c's grid centre to its farthest point, from the corners'
// longitudes and latitudes without trigonometry but one cosine: the straight line from the
// centre to a corner in (longitude, latitude) is no shorter than the great circle, which is no
// shorter than the chord, and along it cos(latitude) <= cos(centre's) + |Δ latitude|. Returns
// false where that bound is not safe (a non-finite centre, a latitude over 90°, a cap near 90°):
// such a cell must be built to know its cap. A non-finite corner ends the bound (the cell is
// found empty when built).
bool cap_bound(const Grid& g, int64_t c, double* bound) {
  constexpr double kHalfPi = 0.5 * kPi;
  constexpr double kRightAngle = 1.4142135623730951;  // the chord of 90°
  const int nc = g.num_corners;
  const double lo = g.lon[c], la = g.lat[c];
  if (!(std::isfinite(lo) && std::isfinite(la)) || std::fabs(la) > kHalfPi) return false;
  const double cl = std::cos(la);
  double b2 = 0;
  for (int k = 0; k < nc; ++k) {
    const double klo = g.corner_lon[c * nc + k], kla = g.corner_lat[c * nc + k];
    if (!std::isfinite(klo) || !std::isfinite(kla)) break;
    if (std::fabs(kla) > kHalfPi) return false;
    double dl = std::fabs(klo - lo);
    if (dl > kPi) dl = std::fabs(dl - 2.0 * kPi * std::nearbyint(dl / (2.0 * kPi)));
    const double dp = std::fabs(kla - la), m = std::min(1.0, cl + dp) * dl;
    b2 = std::max(b2, dp * dp + m * m);
  }
  *bound = std::sqrt(b2) * (1 + 1e-9) + 1e-12;
  return *bound < 0.9 * kRightAngle;
}

// An upper bound of the angle (radians) whose chord is c <= 0.9·√2: 2·asin(c/2) <= c·π/(2√2)
// for c <= √2 (asin(x)/x grows with x).
inline double angle_above_chord(double c) { return c * 1.1107207345395915; }

// The latitudes cell c of g can reach, from its cap bound.
inline void reach_of(const Grid& g, int64_t c, double bound, double* lo, double* hi) {
  const double reach = angle_above_chord(bound);
  *lo = g.lat[c] - reach;
  *hi = g.lat[c] + reach;
}

// The index of the searched source cells' cap centres: the centres bucketed by the face of the
// cube they project on and an N × N grid of that face (u, v = the other two coordinates over
// the dominant one), in counting-sort order. Cheaper to build and to ask than a k-d tree for
// the many small caps of a grid's cells.
class CentreIndex {
 public:
  void build(const std::vector<Vec3>& pts, const std::vector<double>& chords,
             const std::vector<int64_t>& ids) {
    const size_t n = pts.size();
    n_ = std::max(1, std::min(2048, static_cast<int>(std::sqrt(static_cast<double>(n) / 12.0))));
    const size_t nb = static_cast<size_t>(6) * n_ * n_;
    std::vector<uint32_t> bucket(n);
    start_.assign(nb + 1, 0);
    for (size_t i = 0; i < n; ++i) {
      bucket[i] = static_cast<uint32_t>(bucket_of(pts[i]));
      ++start_[bucket[i] + 1];
    }
    for (size_t b = 0; b < nb; ++b) start_[b + 1] += start_[b];
    std::vector<uint32_t> fill(start_.begin(), start_.end() - 1);
    pts_.resize(n);
    ids_.resize(n);
    for (size_t i = 0; i < n; ++i) {
      const uint32_t at = fill[bucket[i]]++;
      pts_[at] = {pts[i], chords[i]};
      ids_[at] = ids[i];
    }
  }
  // Appends to *out the ids of the points p whose cap meets the cap of chord radius cq about q:
  // |p − q| <= cq + chord(p) (and maybe a few more); rmax: cq + the largest chord(p).
  void within(Vec3 q, double cq, double rmax, std::vector<int64_t>* out) const {
    const double r = rmax * (1 + 1e-9) + 1e-12;
    const double qc[3] = {q.x, q.y, q.z};
    constexpr double kFaceMin = 0.57;  // a point's dominant coordinate is over 1/√3 (0.577)
    for (int f = 0; f < 6; ++f) {
      const int a = f >> 1;
      const double sg = (f & 1) ? -1.0 : 1.0;
      const double whi = sg * qc[a] + r;
      if (whi < kFaceMin) continue;
      const double wlo = std::max(kFaceMin, sg * qc[a] - r);
      const int b = a == 0 ? 1 : 0, c = a == 2 ? 1 : 2;
      int lo[2], hi[2];
      const int ax[2] = {b, c};
      for (int k = 0; k < 2; ++k) {
        const double xlo = qc[ax[k]] - r, xhi = qc[ax[k]] + r;
        const double umin = xlo / (xlo >= 0 ? whi : wlo), umax = xhi / (xhi >= 0 ? wlo : whi);
        lo[k] = cell_of(umin);
        hi[k] = cell_of(umax);
      }
      for (int j = lo[1]; j <= hi[1]; ++j) {
        const size_t row = (static_cast<size_t>(f) * n_ + j) * n_;
        const uint32_t e = start_[row + hi[0] + 1];
        for (uint32_t i = start_[row + lo[0]]; i < e; ++i) {
          const Vec3 d = pts_[i].p - q;
          const double rr = cq + pts_[i].chord;
          if (dot(d, d) <= rr * rr) out->push_back(ids_[i]);
        }
      }
    }
  }

 private:
  int cell_of(double u) const {
    const double t = (u + 1.0) * 0.5 * n_;
    if (!(t > 0)) return 0;
    return t >= n_ ? n_ - 1 : static_cast<int>(t);
  }
  size_t bucket_of(Vec3 p) const {
    const double ac[3] = {std::fabs(p.x), std::fabs(p.y), std::fabs(p.z)};
    const double pc[3] = {p.x, p.y, p.z};
    int a = 0;
    if (ac[1] > ac[a]) a = 1;
    if (ac[2] > ac[a]) a = 2;
    const int f = 2 * a + (pc[a] < 0 ? 1 : 0);
    const double w = ac[a];
    const int b = a == 0 ? 1 : 0, c = a == 2 ? 1 : 2;
    return (static_cast<size_t>(f) * n_ + cell_of(pc[c] / w)) * n_ + cell_of(pc[b] / w);
  }
  struct Point {
    Vec3 p;
    double chord;
  };
  int n_ = 1;
  std::vector<uint32_t> start_;
  std::vector<Point> pts_;
  std::vector<int64_t> ids_;
};

class Conservative : public WeightMethod {
 public:
  Conservative(const Grid& src, const Grid& dst, const GenOptions& o,
               const std::vector<int64_t>* dst_points)
      : src_(src), dst_(dst), order_(o.conservative_order) {
    if (o.normalization == "destarea") {
      norm_ = Norm::kDestArea;
    } else if (o.normalization == "fracarea") {
      norm_ = Norm::kFracArea;
    } else if (o.normalization == "fracnnei") {
      norm_ = Norm::kFracArea;
      nnei_ = true;
    } else {
      fail(ISTHMUS_ERR_ARG, "conservative: normalization \"", o.normalization,
           "\" is not known (expected destarea, fracarea or fracnnei)");
    }
    if (order_ != 1 && order_ != 2)
      fail(ISTHMUS_ERR_ARG, "conservative: order ", order_, " is not 1 or 2");
    for (const Grid* g : {&src, &dst}) {
      if (!g->has_corners())
        fail(ISTHMUS_ERR_ARG, "conservative: grid ", g->name, " (", g->source,
             ") has no cell corners");
      const size_t want = static_cast<size_t>(g->size()) * g->num_corners;
      if (g->corner_lon.size() != want || g->corner_lat.size() != want ||
          g->lon.size() != g->lat.size())
        fail(ISTHMUS_ERR_ARG, "conservative: grid ", g->name, " (", g->source, ") has ",
             g->corner_lon.size(), " corner longitudes and ", g->corner_lat.size(),
             " corner latitudes for ", g->size(), " cells of ", g->num_corners, " corners");
    }
    // Source cells are built on first use (a rank builds those its points overlap). Here only
    // their cap centres and a bound of their caps' radii (cap_bound); the cells where that bound
    // is not safe are built now. Masked source cells are never built: they stay empty, and so
    // do the cells outside the band of latitudes the destination points asked for can reach
    // (a rank's block of a grid in rows needs the source rows near its own).
    const int64_t n = src.size();
    state_.assign(n, kEmpty);
    first_.assign(n, 0);
    count_.assign(n, 0);
    centre_.resize(n);
    chord_.assign(n, 0.0);
    if (order_ == 2) {
      centroid_lat_.assign(n, 0.0);
      centroid_lon_.assign(n, 0.0);
    }
    double band_lo = -kPi, band_hi = kPi;  // no restriction
    if (dst_points && !dst_points->empty() &&
        !conservative_band(dst, *dst_points, &band_lo, &band_hi)) {
      band_lo = -kPi;
      band_hi = kPi;
    }
    s_.pbeg.assign(1, 0);
    {
      int64_t active = 0;
      for (int64_t c = 0; c < n; ++c) active += src.active(c) ? 1 : 0;
      s_.pbeg.reserve(active + 1);
      s_.verts.reserve(active * src.num_corners);
    }
    for (int64_t c = 0; c < n; ++c) {
      if (!src.active(c)) continue;
      double bound = 0;
      if (!cap_bound(src, c, &bound)) {
        build(c);
        continue;
      }
      double lo = 0, hi = 0;
      reach_of(src, c, bound, &lo, &hi);
      if (hi < band_lo || lo > band_hi) continue;
      centre_[c] = to_xyz(src.lon[c], src.lat[c]);
      state_[c] = kLazy;
      chord_[c] = bound;
    }

    // The search: the source cells not known to be empty; outsized caps apart.
    std::vector<double> radii;
    for (int64_t c = 0; c < n; ++c)
      if (state_[c] != kEmpty) radii.push_back(chord_[c]);
    double big = 1.2855752193730785;  // the chord of 80°
    if (!radii.empty()) {
      const size_t q = std::min(radii.size() - 1, static_cast<size_t>(0.999 * radii.size()));
      std::nth_element(radii.begin(), radii.begin() + q, radii.end());
      big = std::min(big, 4.0 * radii[q]);
    }
    for (int64_t c = 0; c < n; ++c) {
      if (state_[c] == kEmpty) continue;
      if (chord_[c] > big) {
        big_.push_back(c);
      } else {
        ids_.push_back(c);
        cmax_ = std::max(cmax_, chord_[c]);
      }
    }
    // One index per class of cap radius (halving from the largest), each searched with the
    // radius of its largest cap.
    {
      std::vector<Vec3> pts[kClasses];
      std::vector<double> chords[kClasses];
      std::vector<int64_t> ids[kClasses];
      for (const int64_t c : ids_) {
        int k = 0;
        while (k + 1 < kClasses && chord_[c] <= std::ldexp(cmax_, -(k + 1))) ++k;
        pts[k].push_back(centre_[c]);
        chords[k].push_back(chord_[c]);
        ids[k].push_back(c);
      }
      for (int k = 0; k < kClasses; ++k) {
        if (ids[k].empty()) continue;
        index_.emplace_back();
        index_.back().cmax = *std::max_element(chords[k].begin(), chords[k].end());
        index_.back().index.build(pts[k], chords[k], ids[k]);
      }
    }
  }

  std::string name() const override { return "conservative"; }
  int num_wgts() const override { return order_ == 2 ? 3 : 1; }

  void compute(const std::vector<int64_t>& todo, GenLinks* out,
               std::vector<int64_t>* unserved) const override {
    const int nw = num_wgts();
    std::vector<int64_t> cand;
    std::vector<double> dist;
    PointIndex::Hint hint;  // FRACNNEI's searches
    std::vector<Vec3> poly, normals, clipped, tmp;
    Cells dcell;  // the destination cell's pieces
    struct Overlap {
      int64_t s;
      double area, mlat, mlon;
    };
    std::vector<Overlap> overlaps;
    TrigCache trig;
    double w[3];
    for (const int64_t d : todo) {
      overlaps.clear();
      dcell.verts.clear();
      dcell.pbeg.assign(1, 0);
      double darea = 0, cd = 0;
      Vec3 dc;
      if (make_cell(dst_, d, true, &poly, &dcell, &darea, &dc, &cd, &trig)) {
        out->area.emplace_back(d, darea);  // the file's dst_grid_area
        cand.clear();
        if (cd >= 2 || cmax_ >= 2) {
          cand = ids_;
        } else {
          for (const Class& k : index_)  // chord(a + b) <= chord(a) + chord(b)
            k.index.within(dc, cd, cd + k.cmax, &cand);
        }
        cand.insert(cand.end(), big_.begin(), big_.end());
        // The planes of the destination pieces' edges.
        const int dpieces = static_cast<int>(dcell.pbeg.size()) - 1;
        normals.clear();
        for (int p = 0; p < dpieces; ++p) {
          const int64_t b = dcell.pbeg[p], e = dcell.pbeg[p + 1];
          for (int64_t i = b; i < e; ++i)
            normals.push_back(cross(dcell.verts[i], dcell.verts[i + 1 < e ? i + 1 : b]));
        }
        for (const int64_t s : cand) {
          const Vec3 sep = dc - centre_[s];
          const double sep2 = dot(sep, sep);
          if (state_[s] == kLazy) {
            if (sep2 > (cd + chord_[s]) * (cd + chord_[s])) continue;  // the bound
            build(s);
          }
          if (state_[s] == kEmpty) continue;
          const double cs = chord_[s];
          if (sep2 > (cd + cs) * (cd + cs)) continue;
          // Clip buffers: a source piece has at most max_piece_ vertices, a clip adds one a
          // plane.
          const size_t need = static_cast<size_t>(max_piece_) + normals.size() + 1;
          if (clipped.size() < need) {
            clipped.resize(need);
            tmp.resize(need);
          }
          Vec3* buf[2] = {clipped.data(), tmp.data()};
          double area = 0, ml = 0, mp = 0;
          const double ref = order_ == 2 ? lon_ref(s) : 0.0, lref = order_ == 2 ? lat_ref(s) : 0.0;
          for (int64_t sp = first_[s]; sp < first_[s] + count_[s]; ++sp) {
            const Vec3* sv = &s_.verts[s_.pbeg[sp]];
            const int sk = static_cast<int>(s_.pbeg[sp + 1] - s_.pbeg[sp]);
            int64_t noff = 0;
            for (int p = 0; p < dpieces; ++p) {
              const int dk = static_cast<int>(dcell.pbeg[p + 1] - dcell.pbeg[p]);
              int which = 0;
              const int nv = clip(sv, sk, &normals[noff], dk, buf, &which);
              noff += dk;
              if (nv < 3) continue;
              area += spherical_polygon_area(buf[which], nv);
              if (order_ == 2) {
                double a, b;
                moments(buf[which], nv, ref, lref, &a, &b);
                ml += a;
                mp += b;
              }
            }
          }
          if (area > kSliver * std::min(cd, cs) && std::isfinite(area))
            overlaps.push_back({s, area, ml, mp});
        }
      }
      if (overlaps.empty()) {
        if (nnei_ && dst_.active(d) && std::isfinite(dst_.lon[d]) && std::isfinite(dst_.lat[d])) {
          nnei_index().nearest(to_xyz(dst_.lon[d], dst_.lat[d]), 1, &cand, &dist,
                               std::numeric_limits<double>::infinity(), &hint);
          if (out->want_reach)
            out->reach.emplace_back(d, cand.empty() ? std::numeric_limits<double>::infinity() : dist[0]);
          if (!cand.empty()) {
            w[0] = 1.0;
            w[1] = w[2] = 0.0;
            out->add(cand[0], d, w);
            out->frac.emplace_back(d, 0.0);  // served, but no active source covers it
            continue;
          }
        }
        unserved->push_back(d);
        continue;
      }
      std::sort(overlaps.begin(), overlaps.end(),
                [](const Overlap& a, const Overlap& b) { return a.s < b.s; });
      double f;
      double covered = 0;
      for (const Overlap& o : overlaps) covered += o.area;
      if (norm_ == Norm::kDestArea) {
        f = 1.0 / darea;
      } else {
        f = 1.0 / covered;
      }
      // SCRIP's dst_grid_frac: the part of the cell active source cells cover.
      out->frac.emplace_back(d, std::min(1.0, covered / darea));
      for (const Overlap& o : overlaps) {
        w[0] = o.area * f;
        if (nw == 3) {
          w[1] = (o.mlat - o.area * centroid_lat_[o.s]) * f;
          w[2] = (o.mlon - o.area * centroid_lon_[o.s]) * f;
          for (int k = 1; k < 3; ++k)
            if (!std::isfinite(w[k])) w[k] = 0.0;
        }
        out->add(o.s, d, w);
      }
    }
  }

 private:
  enum class Norm { kDestArea, kFracArea };
  // A source cell's state: empty (masked, or found empty when built), not built yet (centre_
  // is its grid centre, chord_ a bound of its cap), or built.
  static constexpr uint8_t kEmpty = 0, kLazy = 1, kBuilt = 2;

  // Builds source cell c: its pieces, its cap (centre_, chord_) and, for the second order, its
  // area and centroid.
  void build(int64_t c) const {
    const int64_t p0 = static_cast<int64_t>(s_.pbeg.size()) - 1;
    double area = 0;
    if (!make_cell(src_, c, order_ == 2, &poly_, &s_, &area, &centre_[c], &chord_[c], &trig_,
                   state_[c] == kLazy)) {
      state_[c] = kEmpty;
      return;
    }
    state_[c] = kBuilt;
    first_[c] = p0;
    count_[c] = static_cast<int32_t>(static_cast<int64_t>(s_.pbeg.size()) - 1 - p0);
    for (int64_t p = p0; p < p0 + count_[c]; ++p)
      max_piece_ = std::max<int64_t>(max_piece_, s_.pbeg[p + 1] - s_.pbeg[p]);
    if (order_ == 2) {
      if (!(area > 0)) return;
      const double ref = lon_ref(c), lref = lat_ref(c);
      double ml = 0, mp = 0;
      for (int64_t p = p0; p < p0 + count_[c]; ++p) {
        double a, b;
        moments(&s_.verts[s_.pbeg[p]], static_cast<int>(s_.pbeg[p + 1] - s_.pbeg[p]), ref, lref,
                &a, &b);
        ml += a;
        mp += b;
      }
      centroid_lat_[c] = ml / area;
      centroid_lon_[c] = mp / area;
    }
  }

  // FRACNNEI's nearest neighbours: every active source point (built on first use).
  const PointIndex& nnei_index() const {
    if (!index_nnei_) {
      std::vector<Vec3> all;
      std::vector<int64_t> all_ids;
      for (int64_t c = 0; c < src_.size(); ++c) {
        if (!src_.active(c) || !std::isfinite(src_.lon[c]) || !std::isfinite(src_.lat[c]))
          continue;
        all.push_back(to_xyz(src_.lon[c], src_.lat[c]));
        all_ids.push_back(c);
      }
      index_nnei_ = std::make_unique<PointIndex>(std::move(all), std::move(all_ids));
    }
    return *index_nnei_;
  }

  // The source cell's centre: the grid's, or its cap's centre.
  double lon_ref(int64_t s) const {
    return std::isfinite(src_.lon[s]) ? src_.lon[s] : std::atan2(centre_[s].y, centre_[s].x);
  }
  double lat_ref(int64_t s) const {
    const Vec3 c = centre_[s];
    return std::isfinite(src_.lat[s]) ? src_.lat[s] : std::atan2(c.z, std::hypot(c.x, c.y));
  }

  const Grid& src_;
  const Grid& dst_;
  int order_;
  Norm norm_ = Norm::kFracArea;
  bool nnei_ = false;
  // The source cells, built by compute() on first use (compute() runs on one thread).
  mutable Cells s_;                      // their pieces (verts, pbeg only)
  mutable std::vector<uint8_t> state_;   // kEmpty, kLazy or kBuilt
  mutable std::vector<int64_t> first_;   // cell c: pieces first_[c] .. first_[c] + count_[c]
  mutable std::vector<int32_t> count_;
  mutable std::vector<Vec3> centre_;     // cap centre
  mutable std::vector<double> chord_;    // cap radius (chord); a bound of it until built
  mutable std::vector<double> centroid_lat_, centroid_lon_;  // second order
  mutable int64_t max_piece_ = 0;        // the most vertices of a built source piece
  mutable std::vector<Vec3> poly_;       // scratch of build()
  mutable TrigCache trig_;               // of build()
  std::vector<int64_t> big_;  // source cells with outsized caps, ascending
  std::vector<int64_t> ids_;  // the other non-empty ones, ascending: the index's points
  double cmax_ = 0;           // their largest cap (chord)
  static constexpr int kClasses = 4;
  struct Class {
    double cmax;  // the largest cap (chord) of its cells
    CentreIndex index;
  };
  std::vector<Class> index_;
  mutable std::unique_ptr<PointIndex> index_nnei_;
};

}  // namespace

bool conservative_band(const Grid& dst, const std::vector<int64_t>& points, double* lo, double* hi) {
  double lat_lo = kPi, lat_hi = -kPi, bmax = 0, b = 0;
  for (const int64_t d : points) {
    if (!cap_bound(dst, d, &b)) return false;
    lat_lo = std::min(lat_lo, dst.lat[d]);
    lat_hi = std::max(lat_hi, dst.lat[d]);
    bmax = std::max(bmax, b);
  }
  if (points.empty()) return false;
  *lo = lat_lo - angle_above_chord(bmax);
  *hi = lat_hi + angle_above_chord(bmax);
  return true;
}

bool conservative_reach(const Grid& src, int64_t c, double* lo, double* hi) {
  double bound = 0;
  if (!cap_bound(src, c, &bound)) return false;
  reach_of(src, c, bound, lo, hi);
  return true;
}

std::unique_ptr<WeightMethod> make_conservative(const Grid& src, const Grid& dst,
                                                const GenOptions& o,
                                                const std::vector<int64_t>* dst_points) {
  return std::make_unique<Conservative>(src, dst, o, dst_points);
}

}  // namespace isthmus::remap
