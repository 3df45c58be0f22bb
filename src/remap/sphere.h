// Geometry on the unit sphere for weight generation: unit vectors, great-circle distances, and
// the spatial index of points (nanoflann's k-d tree over unit vectors: the chord distance
// orders points as the great-circle distance does).
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <limits>
#include <vector>

namespace isthmus::remap {

struct Vec3 {
  double x = 0, y = 0, z = 0;
};
inline Vec3 operator+(Vec3 a, Vec3 b) { return {a.x + b.x, a.y + b.y, a.z + b.z}; }
inline Vec3 operator-(Vec3 a, Vec3 b) { return {a.x - b.x, a.y - b.y, a.z - b.z}; }
inline Vec3 operator*(double s, Vec3 a) { return {s * a.x, s * a.y, s * a.z}; }
inline double dot(Vec3 a, Vec3 b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
inline Vec3 cross(Vec3 a, Vec3 b) {
  return {a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x};
}
inline double norm(Vec3 a) { return std::sqrt(dot(a, a)); }
inline Vec3 normalized(Vec3 a) { return (1.0 / norm(a)) * a; }

// lon, lat in radians.
inline Vec3 to_xyz(double lon, double lat) {
  const double c = std::cos(lat);
  return {c * std::cos(lon), c * std::sin(lon), std::sin(lat)};
}
// to_xyz with the sines and cosines of the last few longitudes and latitudes kept (the cells of
// a lon-lat or structured grid, asked for in index order, share most of them): the same bits as
// to_xyz.
class TrigCache {
 public:
  Vec3 xyz(double lon, double lat) {
    const SinCos a = lookup(lat, lat_), o = lookup(lon, lon_);
    return {a.c * o.c, a.c * o.s, a.s};
  }

 private:
  struct SinCos {
    double c, s;
  };
  struct Ring {
    uint64_t key[8] = {};
    SinCos val[8] = {};
    int used = 0, next = 0;
  };
  static SinCos lookup(double x, Ring& r) {
    uint64_t k;
    std::memcpy(&k, &x, sizeof k);
    for (int i = 0; i < r.used; ++i)
      if (r.key[i] == k) return r.val[i];
    const SinCos v{std::cos(x), std::sin(x)};
    r.key[r.next] = k;
    r.val[r.next] = v;
    r.next = (r.next + 1) & 7;
    r.used = std::min(r.used + 1, 8);
    return v;
  }
  Ring lat_, lon_;
};

inline void to_lonlat(Vec3 v, double* lon, double* lat) {
  *lon = std::atan2(v.y, v.x);
  *lat = std::atan2(v.z, std::sqrt(v.x * v.x + v.y * v.y));
}

// The angle between two unit vectors (radians), accurate for small and large angles.
inline double angle(Vec3 a, Vec3 b) { return std::atan2(norm(cross(a, b)), dot(a, b)); }
inline double great_circle(double lon1, double lat1, double lon2, double lat2) {
  return angle(to_xyz(lon1, lat1), to_xyz(lon2, lat2));
}
// The angle whose chord is sqrt(chord2), and back.
inline double chord2_to_angle(double chord2) { return 2.0 * std::asin(std::min(1.0, std::sqrt(chord2) / 2.0)); }
inline double angle_to_chord2(double a) { const double c = 2.0 * std::sin(a / 2.0); return c * c; }

// A k-d tree over a set of points of the sphere (e.g. a grid's active cell centres). Queries
// are const and may run concurrently. Results are ordered by distance, ties by point id, so
// that they do not depend on the tree's shape or the query order.
class PointIndex {
 public:
  // ids[i] is the id reported for point i (e.g. its grid index); points given by lon/lat (radians).
  PointIndex(std::vector<Vec3> points, std::vector<int64_t> ids);
  ~PointIndex();
  PointIndex(PointIndex&&) noexcept;
  PointIndex& operator=(PointIndex&&) noexcept;

  int64_t size() const;

  // The k nearest points to q (fewer if the index has fewer): ids and great-circle distances
  // (radians), nearest first, ties by id. With max_chord2, only among the points within that
  // squared chord (strictly less; fewer or none if fewer are): the search prunes beyond it.
  // hint: the state of a sequence of queries of one k (one per caller, e.g. per batch): the
  // last full answer's k points, whose distances to q bound q's k-th (any k distinct points
  // do), so that the search prunes from its start; a query whose nearest lies far outside its
  // own leaf's box (a point inside a masked continent) then searches much less. The same
  // results with or without it; queries in a coherent order gain.
  struct Hint {
    std::vector<uint32_t> pos;  // positions in the index of the previous query's k points
  };
  void nearest(Vec3 q, int k, std::vector<int64_t>* ids, std::vector<double>* dist,
               double max_chord2 = std::numeric_limits<double>::infinity(),
               Hint* hint = nullptr) const;
  // Every point within `radius` radians of q, nearest first, ties by id.
  void within(Vec3 q, double radius, std::vector<int64_t>* ids, std::vector<double>* dist) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The area (steradians) of the spherical polygon with great-circle edges through the given
// vertices, in order (either orientation; the result is >= 0). Degenerate polygons give 0.
double spherical_polygon_area(const Vec3* v, int n);

}  // namespace isthmus::remap
