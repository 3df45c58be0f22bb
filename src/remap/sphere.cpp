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

// nanoflann's result set for the k nearest points by (squared chord, id): a point at the k-th
// distance is still offered (the search's bound is then the next double above it) and a tie
// goes to the lower id, so the k are the first k of every point so ordered, whatever the tree's
// shape. Until k are found, the bound is max_chord2 (strictly less).
class TiedNearest {
 public:
  TiedNearest(size_t k, const int64_t* ids, double max_chord2, uint32_t* idx, double* d2)
      : k_(k), ids_(ids), idx_(idx), d2_(d2), worst_(max_chord2) {}
  size_t size() const { return count_; }
  bool full() const { return count_ == k_; }
  double worstDist() const { return worst_; }
  bool addPoint(double d, uint32_t i) {
    if (full() && !before(d, i, d2_[k_ - 1], idx_[k_ - 1])) return true;
    size_t j = full() ? k_ - 1 : count_++;
    for (; j > 0 && before(d, i, d2_[j - 1], idx_[j - 1]); --j) {
      d2_[j] = d2_[j - 1];
      idx_[j] = idx_[j - 1];
    }
    d2_[j] = d;
    idx_[j] = i;
    if (full()) worst_ = std::nextafter(d2_[k_ - 1], std::numeric_limits<double>::infinity());
    return true;
  }

 private:
  bool before(double a, uint32_t ia, double b, uint32_t ib) const {
    return a != b ? a < b : ids_[ia] < ids_[ib];
  }
  size_t k_, count_ = 0;
  const int64_t* ids_;
  uint32_t* idx_;
  double* d2_;
  double worst_;
};

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
                         double max_chord2, Hint* hint) const {
  ids->clear();
  dist->clear();
  const int64_t n = size();
  if (k <= 0 || n == 0) return;
  const size_t kk = static_cast<size_t>(std::min<int64_t>(k, n));
  const double qq[3] = {q.x, q.y, q.z};
  uint32_t idx_small[16];
  double d2_small[16];
  std::vector<uint32_t> idx_big;
  std::vector<double> d2_big;
  uint32_t* idx = idx_small;
  double* d2 = d2_small;
  if (kk > 16) {
    idx_big.resize(kk);
    d2_big.resize(kk);
    idx = idx_big.data();
    d2 = d2_big.data();
  }
  if (hint && hint->pos.size() == kk) {
    // Any kk distinct points bound the kk-th distance (widened past the tree's own rounding of
    // the same sums; the bound is strict, so a point at the kk-th distance stays in).
    double bound = 0;
    for (const uint32_t p : hint->pos) {
      const Vec3 e = impl_->cloud.pts[p] - q;
      bound = std::max(bound, dot(e, e));
    }
    max_chord2 = std::min(max_chord2, bound * (1.0 + 1e-9) + 1e-300);
  }
  TiedNearest rs(kk, impl_->ids.data(), max_chord2, idx, d2);
  impl_->tree->findNeighbors(rs, qq, nanoflann::SearchParams());
  if (hint && rs.size() == kk) hint->pos.assign(idx, idx + kk);
  for (size_t i = 0; i < rs.size(); ++i) {
    ids->push_back(impl_->ids[idx[i]]);
    dist->push_back(chord2_to_angle(d2[i]));
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
  // ±90°, and the product far from underflow) and Σ |num| / den < 3 (so that
  // |Σ E/2| <= Σ atan(|num| / den) < π) — any cell or overlap smaller than a hemisphere.
  // Otherwise (or for polygons of many vertices, whose product could overflow) the atan2 of
  // each triangle, summed. Both keep the relative precision of small areas: the product's
  // imaginary part sums terms of one sign for a convex polygon.
  if (n < 3) return 0.0;
  const auto triangle = [v](int i, double* num, double* den) {
    const Vec3 a = v[0], b = v[i], c = v[i + 1];
    *num = dot(a, cross(b, c));
    *den = 1.0 + dot(a, b) + dot(b, c) + dot(c, a);
  };
  double num = 0, den = 0;
  if (n <= 34) {
    double re = 1.0, im = 0.0, bound = 0.0;
    bool fused = true;
    for (int i = 1; i + 1 < n && fused; ++i) {
      triangle(i, &num, &den);
      fused = den > 0.5;  // small triangles have den near 4; and no underflow
      bound += std::fabs(num) / den;
      const double r = re * den - im * num;
      im = re * num + im * den;
      re = r;
    }
    if (fused && bound < 3.0) return std::fabs(2.0 * std::atan2(im, re));
  }
  double sum = 0.0;
  for (int i = 1; i + 1 < n; ++i) {
    triangle(i, &num, &den);
    sum += 2.0 * std::atan2(num, den);
  }
  return std::fabs(sum);
}

}  // namespace isthmus::remap
