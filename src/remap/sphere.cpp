// The spatial index of weight generation (nanoflann's k-d tree) and the area of a spherical
// polygon.
#include "remap/sphere.h"

#include "remap/nanoflann.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

namespace isthmus::remap {

namespace {

struct Cloud {
  std::vector<Vec3> pts;
  size_t kdtree_get_point_count() const { return pts.size(); }
  double kdtree_get_pt(size_t i, size_t d) const {
    return d == 0 ? pts[i].x : (d == 1 ? pts[i].y : pts[i].z);
  }
  template <class BBox>
  bool kdtree_get_bbox(BBox&) const {
    return false;
  }
};

using Tree = nanoflann::KDTreeSingleIndexAdaptor<nanoflann::L2_Simple_Adaptor<double, Cloud>,
                                                 Cloud, 3, uint32_t>;

}  // namespace

struct PointIndex::Impl {
  Cloud cloud;
  std::vector<int64_t> ids;
  std::unique_ptr<Tree> tree;

  // (squared chord, position) of every point within squared chord r2 (inclusive), sorted by
  // distance then id.
  void collect(const double q[3], double r2, std::vector<std::pair<uint32_t, double>>* hits) const {
    hits->clear();
    nanoflann::SearchParams params;
    params.sorted = false;
    tree->radiusSearch(q, std::nextafter(r2, std::numeric_limits<double>::infinity()), *hits,
                       params);
    std::sort(hits->begin(), hits->end(), [this](const auto& a, const auto& b) {
      return a.second != b.second ? a.second < b.second : ids[a.first] < ids[b.first];
    });
  }
};

PointIndex::PointIndex(std::vector<Vec3> points, std::vector<int64_t> ids)
    : impl_(std::make_unique<Impl>()) {
  impl_->cloud.pts = std::move(points);
  impl_->ids = std::move(ids);
  impl_->tree = std::make_unique<Tree>(3, impl_->cloud, nanoflann::KDTreeSingleIndexAdaptorParams(16));
}

PointIndex::~PointIndex() = default;
PointIndex::PointIndex(PointIndex&&) noexcept = default;
PointIndex& PointIndex::operator=(PointIndex&&) noexcept = default;

int64_t PointIndex::size() const { return static_cast<int64_t>(impl_->ids.size()); }

void PointIndex::nearest(Vec3 q, int k, std::vector<int64_t>* ids, std::vector<double>* dist,
                         double max_chord2) const {
  ids->clear();
  dist->clear();
  const int64_t n = size();
  if (k <= 0 || n == 0) return;
  const size_t kk = static_cast<size_t>(std::min<int64_t>(k, n));
  const double qq[3] = {q.x, q.y, q.z};
  // One more than asked: when it is strictly further than the k-th, no tie crosses the k-th
  // place and the k nearest need only ordering ties among themselves by id.
  const size_t kq = std::min<size_t>(kk + 1, static_cast<size_t>(n));
  uint32_t idx_small[17];
  double d2_small[17];
  std::vector<uint32_t> idx_big;
  std::vector<double> d2_big;
  uint32_t* idx = idx_small;
  double* d2 = d2_small;
  if (kq > 17) {
    idx_big.resize(kq);
    d2_big.resize(kq);
    idx = idx_big.data();
    d2 = d2_big.data();
  }
  nanoflann::KNNResultSet<double, uint32_t> rs(kq);
  rs.init(idx, d2);
  // A bound: the result set's worst distance until it is full, so the search prunes beyond it.
  if (max_chord2 < std::numeric_limits<double>::infinity()) d2[kq - 1] = max_chord2;
  impl_->tree->findNeighbors(rs, qq, nanoflann::SearchParams());
  const size_t m = rs.size();  // below kq only with a bound
  if (m == kq && (kq == kk || d2[kk] > d2[kk - 1])) {
    // Insertion sort of the k by (distance, id): k is small.
    for (size_t i = 1; i < kk; ++i)
      for (size_t j = i; j > 0 && (d2[j] < d2[j - 1] ||
                                   (d2[j] == d2[j - 1] && impl_->ids[idx[j]] < impl_->ids[idx[j - 1]]));
           --j) {
        std::swap(d2[j], d2[j - 1]);
        std::swap(idx[j], idx[j - 1]);
      }
    for (size_t i = 0; i < kk; ++i) {
      ids->push_back(impl_->ids[idx[i]]);
      dist->push_back(chord2_to_angle(d2[i]));
    }
    return;
  }
  // Points at the k-th distance are more than one: take them all, order by (distance, id).
  // Fewer than k + 1 within the bound (no tie crosses the k-th place), or rounding in the
  // tree's pruning: what the k-NN gave, so ordered.
  std::vector<std::pair<uint32_t, double>> hits;
  if (m == kq) impl_->collect(qq, d2[kk - 1], &hits);
  const size_t given = std::min(kk, m);
  if (hits.size() < given) {
    hits.clear();
    for (size_t i = 0; i < given; ++i) hits.emplace_back(idx[i], d2[i]);
    std::sort(hits.begin(), hits.end(), [this](const auto& a, const auto& b) {
      return a.second != b.second ? a.second < b.second : impl_->ids[a.first] < impl_->ids[b.first];
    });
  }
  if (hits.size() > kk) hits.resize(kk);
  for (const auto& h : hits) {
    ids->push_back(impl_->ids[h.first]);
    dist->push_back(chord2_to_angle(h.second));
  }
}

void PointIndex::within(Vec3 q, double radius, std::vector<int64_t>* ids,
                        std::vector<double>* dist) const {
  ids->clear();
  dist->clear();
  if (size() == 0 || radius < 0) return;
  const double qq[3] = {q.x, q.y, q.z};
  std::vector<std::pair<uint32_t, double>> hits;
  impl_->collect(qq, angle_to_chord2(std::min(radius, M_PI)), &hits);
  for (const auto& h : hits) {
    ids->push_back(impl_->ids[h.first]);
    dist->push_back(chord2_to_angle(h.second));
  }
}

double spherical_polygon_area(const Vec3* v, int n) {
  // Sum of the signed areas of the triangles (v0, vi, vi+1), each by the formula of Van
  // Oosterom and Strackee: tan(E/2) = a·(b×c) / (1 + a·b + b·c + c·a) = num / den. The half
  // excesses E/2 add as the arguments of the complex numbers den + i·num multiply, so one
  // atan2 of their product gives the sum when it cannot wrap: every den > 1/2 (each E/2 within
  // ±90°, and the product far from underflow) and Σ |num| / den < 3 (so |Σ E/2| <= Σ atan(|num| / den) < π) — any cell or overlap
  // smaller than a hemisphere. Otherwise (or for polygons of many vertices, whose product could
  // overflow) the atan2 of each triangle, summed. Both keep the relative precision of small
  // areas: the product's imaginary part sums terms of one sign for a convex polygon.
  if (n < 3) return 0.0;
  if (n <= 34) {
    double re = 1.0, im = 0.0, bound = 0.0;
    bool fused = true;
    for (int i = 1; i + 1 < n; ++i) {
      const Vec3 a = v[0], b = v[i], c = v[i + 1];
      const double num = dot(a, cross(b, c));
      const double den = 1.0 + dot(a, b) + dot(b, c) + dot(c, a);
      if (!(den > 0.5)) {  // small triangles have den near 4; and no underflow
        fused = false;
        break;
      }
      bound += std::fabs(num) / den;
      const double r = re * den - im * num;
      im = re * num + im * den;
      re = r;
    }
    if (fused && bound < 3.0) return std::fabs(2.0 * std::atan2(im, re));
  }
  double sum = 0.0;
  for (int i = 1; i + 1 < n; ++i) {
    const Vec3 a = v[0], b = v[i], c = v[i + 1];
    const double num = dot(a, cross(b, c));
    const double den = 1.0 + dot(a, b) + dot(b, c) + dot(c, a);
    sum += 2.0 * std::atan2(num, den);
  }
  return std::fabs(sum);
}

}  // namespace isthmus::remap
