// Weight generation (issue 15): the n nearest active source points of every destination point,
// weighted by inverse distance (OASIS3-MCT's DISTWGT, CDO's gennn/gendis) or by a Gaussian of
// the distance (OASIS3-MCT's GAUSWGT).
//
// Both methods put the active source points with finite coordinates in one k-d tree (built once,
// in make_*) and ask it, for each destination point, for its n = GenOptions::num_neighbours
// nearest points by great-circle distance, ties by source index. A point's links are written in
// that order: (distance, source index). Nothing is carried from one point to the next, so the
// links of a point depend only on the two grids and the options, never on the batch it is asked
// in; compute() only reads the method and may run concurrently.
//
// Fewer than n active source points: every active source point is used (the weights are still
// normalised). No active source point: every destination point is left unserved. A destination
// point with a non-finite coordinate is left unserved too (never served with non-finite weights).
//
// Unlike OASIS, which takes the n nearest points of the whole source grid and then drops the
// masked ones (falling back to the single nearest active point when all n are masked), masked
// source points never enter the search: a point always gets min(n, active) links. With
// GenOptions::oasis_masks (the coupler's SCRIPR entries) the search is OASIS's: a second tree
// holds every source point with finite coordinates, masked or not; a point's n nearest in it
// are asked for, the masked ones dropped, and where none is left the nearest active point
// (from the first tree) serves it alone, with weight 1.
#include <algorithm>
#include <cmath>
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

// Below this great-circle distance (radians, about 6 µm on the Earth) a source point coincides
// with the destination point: DISTWGT gives it weight 1 alone (the first one by (distance,
// index) if several do). OASIS adds epsilon(1d0) to every distance instead, which gives the
// coincident point a weight of 1 - O(1e-14); CDO uses a threshold of 1e-14. 1e-12 stays well
// above the rounding of unit vectors of the same position written two ways (lon vs lon + 360°,
// ~1e-15) and well below any grid spacing.
constexpr double kCoincident = 1e-12;
constexpr double kInf = std::numeric_limits<double>::infinity();

bool finite(double lon, double lat) { return std::isfinite(lon) && std::isfinite(lat); }

// The search shared by both methods: the active source points with finite coordinates.
class NeighbourSearch {
 public:
  NeighbourSearch(const Grid& src, const Grid& dst, const GenOptions& o, const char* method)
      : dst_(dst), n_(o.num_neighbours), src_(src) {
    check_neighbour_search(method, o, dst);
    if (static_cast<int64_t>(src.lat.size()) != src.size() ||
        (!src.mask.empty() && static_cast<int64_t>(src.mask.size()) != src.size()))
      fail(ISTHMUS_ERR_ARG, method, ": source grid ", src.name, " has ", src.size(),
           " longitudes, ", src.lat.size(), " latitudes and ", src.mask.size(), " mask values");
    index_ = points(src, true);
    if (o.oasis_masks && index_) all_ = points(src, false);
  }

  // Neighbours of every point of todo in turn: weigh(ids, dist, weights) fills the weights of
  // the point's neighbours (nearest first) and returns false to leave the point unserved.
  template <class Weigh>
  void run(const std::vector<int64_t>& todo, GenLinks* out, std::vector<int64_t>* unserved,
           const Weigh& weigh) const {
    if (!index_) {
      unserved->insert(unserved->end(), todo.begin(), todo.end());
      if (out->want_reach)
        for (const int64_t d : todo)
          if (finite(dst_.lon[d], dst_.lat[d])) out->reach.emplace_back(d, kInf);
      return;
    }
    const size_t per = static_cast<size_t>(std::min<int64_t>(n_, index_->size()));
    out->reserve_more(static_cast<int64_t>(todo.size() * per));
    std::vector<int64_t> ids;
    std::vector<double> dist, w;
    PointIndex::Hint hint, hint_all;
    ids.reserve(per);
    dist.reserve(per);
    w.reserve(per);
    for (const int64_t d : todo) {
      const double lon = dst_.lon[d], lat = dst_.lat[d];
      if (!finite(lon, lat)) {
        unserved->push_back(d);
        continue;
      }
      const Vec3 q = to_xyz(lon, lat);
      // The radius of the search: the n-th distance (or all points were taken: unbounded).
      double reach = kInf;
      if (all_) {
        // OASIS: the n nearest of every point, the masked ones dropped; none left, the
        // nearest active point alone (weighed below like any single neighbour: weight 1)
        all_->nearest(q, n_, &ids, &dist, kInf, &hint_all);
        if (static_cast<int>(ids.size()) == n_) reach = dist.back();
        size_t kept = 0;
        for (size_t k = 0; k < ids.size(); ++k)
          if (src_.active(ids[k])) {
            ids[kept] = ids[k];
            dist[kept++] = dist[k];
          }
        ids.resize(kept);
        dist.resize(kept);
        if (kept == 0) {
          index_->nearest(q, 1, &ids, &dist, kInf, &hint);
          if (ids.empty()) reach = kInf;
          else reach = std::max(reach, dist[0]);
        }
      } else {
        index_->nearest(q, n_, &ids, &dist, kInf, &hint);
        if (static_cast<int>(ids.size()) == n_) reach = dist.back();
      }
      if (out->want_reach) out->reach.emplace_back(d, reach);
      w.assign(ids.size(), 0.0);
      bool ok = !ids.empty() && weigh(ids, dist, &w);
      for (size_t k = 0; ok && k < w.size(); ++k) ok = std::isfinite(w[k]);
      if (!ok) {
        unserved->push_back(d);
        continue;
      }
      for (size_t k = 0; k < ids.size(); ++k) out->add(ids[k], d, w[k]);
    }
  }

 private:
  // The source points with finite coordinates (only the active ones: active_only), or null.
  static std::unique_ptr<PointIndex> points(const Grid& src, bool active_only) {
    std::vector<Vec3> pts;
    std::vector<int64_t> ids;
    pts.reserve(static_cast<size_t>(src.size()));
    ids.reserve(static_cast<size_t>(src.size()));
    for (int64_t s = 0; s < src.size(); ++s) {
      if ((active_only && !src.active(s)) || !finite(src.lon[s], src.lat[s])) continue;
      pts.push_back(to_xyz(src.lon[s], src.lat[s]));
      ids.push_back(s);
    }
    if (ids.empty()) return nullptr;
    return std::make_unique<PointIndex>(std::move(pts), std::move(ids));
  }

  const Grid& dst_;
  int n_;
  const Grid& src_;
  std::unique_ptr<PointIndex> index_;  // the active source points; null: none
  std::unique_ptr<PointIndex> all_;    // every source point (GenOptions::oasis_masks), or null
};

// DISTWGT: weights 1/d normalised; a coincident point (d < kCoincident) takes weight 1 alone.
class Nearest final : public WeightMethod {
 public:
  Nearest(const Grid& src, const Grid& dst, const GenOptions& o)
      : search_(src, dst, o, "nearest") {}
  std::string name() const override { return "nearest"; }
  void compute(const std::vector<int64_t>& todo, GenLinks* out,
               std::vector<int64_t>* unserved) const override {
    search_.run(todo, out, unserved, distwgt_weights);
  }

 private:
  NeighbourSearch search_;
};

// OASIS GAUSWGT's mean distance between the source points (grid_dist_average in
// remap_gauswgt.f): the great-circle distances between consecutive points of the source grid
// in its storage order, the last point followed by the first, averaged (the mean over the N
// pairs (i, i+1 mod N)). As OASIS, every point counts, masked or not; pairs with a non-finite
// coordinate (which OASIS does not expect) are left out. 0 without 2 points.
double mean_consecutive_distance(const Grid& g) {
  const int64_t n = g.size();
  if (n < 2) return 0.0;
  double sum = 0.0;
  int64_t count = 0;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t j = (i + 1) % n;
    add_consecutive_distance(g.lon[i], g.lat[i], g.lon[j], g.lat[j], &sum, &count);
  }
  return count > 0 ? sum / static_cast<double>(count) : 0.0;
}

// GAUSWGT: weights exp(-d²/(2σ²)) normalised, with σ² = VAR · dm², VAR =
// GenOptions::gaussian_variance and dm the mean distance between consecutive source points
// (mean_consecutive_distance), as OASIS's remap_gauswgt.f. The weights are computed as
// exp(-(d² - d0²)/(2σ²)), d0 the nearest distance (the same after normalisation): the nearest
// gets 1, so the sum never underflows to 0. σ² = 0 (all source points in one place) is the
// limit σ → 0: equal weights on the points at the nearest distance, 0 on the others.
class Gaussian final : public WeightMethod {
 public:
  Gaussian(const Grid& src, const Grid& dst, const GenOptions& o, const SourceRows* rows)
      : search_(src, dst, o, "gaussian") {
    two_sigma2_ = gauswgt_two_sigma2(o, rows ? rows->mean_distance : mean_consecutive_distance(src));
  }
  std::string name() const override { return "gaussian"; }
  void compute(const std::vector<int64_t>& todo, GenLinks* out,
               std::vector<int64_t>* unserved) const override {
    const double two_sigma2 = two_sigma2_;
    search_.run(todo, out, unserved,
                [two_sigma2](std::vector<int64_t>& ids, std::vector<double>& dist,
                             std::vector<double>* w) {
                  return gauswgt_weights(two_sigma2, ids, dist, w);
                });
  }

 private:
  NeighbourSearch search_;
  double two_sigma2_ = 0.0;
};

}  // namespace

void add_consecutive_distance(double lon1, double lat1, double lon2, double lat2, double* sum,
                              int64_t* count) {
  if (!finite(lon1, lat1) || !finite(lon2, lat2)) return;
  *sum += great_circle(lon1, lat1, lon2, lat2);
  ++*count;
}

void check_neighbour_search(const std::string& method, const GenOptions& o, const Grid& dst) {
  if (o.num_neighbours < 1)
    fail(ISTHMUS_ERR_ARG, method, ": the number of neighbours must be at least 1, not ",
         o.num_neighbours);
  if (static_cast<int64_t>(dst.lat.size()) != dst.size())
    fail(ISTHMUS_ERR_ARG, method, ": destination grid ", dst.name, " has ", dst.size(),
         " longitudes and ", dst.lat.size(), " latitudes");
}

void check_gaussian_variance(const GenOptions& o) {
  const double var = o.gaussian_variance;
  if (!(var > 0.0) || !std::isfinite(var))
    fail(ISTHMUS_ERR_ARG, "gaussian: the variance (OASIS GAUSWGT's VAR) must be positive and "
                          "finite, not ", var);
}

double gauswgt_two_sigma2(const GenOptions& o, double mean_distance) {
  check_gaussian_variance(o);
  return 2.0 * o.gaussian_variance * mean_distance * mean_distance;
}

bool gauswgt_weights(double two_sigma2, std::vector<int64_t>& ids, std::vector<double>& dist,
                     std::vector<double>* w) {
  w->assign(ids.size(), 0.0);
  if (ids.empty()) return false;
  const double d02 = dist[0] * dist[0];
  double sum = 0.0;
  for (size_t k = 0; k < dist.size(); ++k) {
    const double e = dist[k] * dist[k] - d02;
    const double x = two_sigma2 > 0.0 ? std::exp(-e / two_sigma2) : (e == 0.0 ? 1.0 : 0.0);
    sum += ((*w)[k] = x);
  }
  for (double& x : *w) x /= sum;
  return true;
}

bool distwgt_weights(std::vector<int64_t>& ids, std::vector<double>& dist, std::vector<double>* w) {
  w->assign(ids.size(), 0.0);
  if (ids.empty()) return false;
  if (dist[0] < kCoincident) {  // nearest first: only the first can coincide
    ids.resize(1);
    dist.resize(1);
    w->assign(1, 1.0);
    return true;
  }
  double sum = 0.0;
  for (size_t k = 0; k < dist.size(); ++k) sum += ((*w)[k] = 1.0 / dist[k]);
  for (double& x : *w) x /= sum;
  return true;
}

std::unique_ptr<WeightMethod> make_nearest(const Grid& src, const Grid& dst, const GenOptions& o) {
  return std::make_unique<Nearest>(src, dst, o);
}

std::unique_ptr<WeightMethod> make_gaussian(const Grid& src, const Grid& dst,
                                            const GenOptions& o, const SourceRows* rows) {
  return std::make_unique<Gaussian>(src, dst, o, rows);
}

}  // namespace isthmus::remap
