// Weight generation (issue 15): the nearest (OASIS DISTWGT) and gaussian (OASIS GAUSWGT)
// methods against a brute-force search over every active source point, on synthetic grids
// and on the ORCA2 -> LMDZ grids of tests/data.
#include <gtest/gtest.h>
#include <netcdf.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "base/error.h"
#include "remap/grid.h"
#include "remap/sphere.h"
#include "remap/weights_gen.h"
#include "test_grids.h"

namespace isthmus::remap {
namespace {

constexpr double kDeg = M_PI / 180.0;

using synthetic::lonlat_grid;

// Gauss-Legendre latitudes (roots of P_n by Newton's iteration), nx equally spaced longitudes.
Grid gaussian_grid(int nx, int nlat) {
  std::vector<double> lats;
  for (int k = 1; k <= nlat; ++k) {
    double x = std::cos(M_PI * (k - 0.25) / (nlat + 0.5));
    for (int it = 0; it < 100; ++it) {
      double p0 = 1.0, p1 = x;
      for (int l = 2; l <= nlat; ++l) {
        const double p2 = ((2.0 * l - 1.0) * x * p1 - (l - 1.0) * p0) / l;
        p0 = p1;
        p1 = p2;
      }
      const double dp = nlat * (x * p1 - p0) / (x * x - 1.0);
      const double dx = p1 / dp;
      x -= dx;
      if (std::fabs(dx) < 1e-16) break;
    }
    lats.push_back(std::asin(x));
  }
  Grid g;
  g.name = "gaussian";
  g.dims = {nx, nlat};
  for (int j = 0; j < nlat; ++j)
    for (int i = 0; i < nx; ++i) {
      g.lon.push_back(i * 2.0 * M_PI / nx);
      g.lat.push_back(lats[j]);
    }
  return g;
}

// Random points uniform on the sphere, a random fraction masked.
Grid random_grid(int n, unsigned seed, double masked_fraction) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  Grid g;
  g.name = "random";
  g.dims = {n};
  for (int k = 0; k < n; ++k) {
    g.lon.push_back(2.0 * M_PI * u(rng) - M_PI);
    g.lat.push_back(std::asin(2.0 * u(rng) - 1.0));
    g.mask.push_back(u(rng) < masked_fraction ? 0 : 1);
  }
  return g;
}

std::vector<int64_t> active_points(const Grid& g) {
  std::vector<int64_t> v;
  for (int64_t c = 0; c < g.size(); ++c)
    if (g.active(c)) v.push_back(c);
  return v;
}

// The k nearest active source points of (lon, lat) by brute force: squared chords computed as
// nanoflann does, ordered by (distance, index).
void brute_nearest(const Grid& src, double lon, double lat, int k, std::vector<int64_t>* ids,
                   std::vector<double>* dist) {
  const Vec3 q = to_xyz(lon, lat);
  std::vector<std::pair<double, int64_t>> all;
  for (int64_t s = 0; s < src.size(); ++s) {
    if (!src.active(s)) continue;
    const Vec3 p = to_xyz(src.lon[s], src.lat[s]);
    const double dx = q.x - p.x, dy = q.y - p.y, dz = q.z - p.z;
    double c2 = 0.0;
    c2 += dx * dx;
    c2 += dy * dy;
    c2 += dz * dz;
    all.emplace_back(c2, s);
  }
  std::sort(all.begin(), all.end());
  all.resize(std::min<size_t>(all.size(), static_cast<size_t>(k)));
  ids->clear();
  dist->clear();
  for (const auto& a : all) {
    ids->push_back(a.second);
    dist->push_back(chord2_to_angle(a.first));
  }
}

// OASIS GAUSWGT's mean distance between consecutive source points (cyclic, all points).
double mean_consecutive(const Grid& g) {
  double s = 0.0;
  for (int64_t i = 0; i < g.size(); ++i) {
    const int64_t j = (i + 1) % g.size();
    s += great_circle(g.lon[i], g.lat[i], g.lon[j], g.lat[j]);
  }
  return s / static_cast<double>(g.size());
}

enum class Kind { kNearest, kGaussian };

// Checks every destination point of todo: its links are the brute-force neighbours in the same
// order, with the weights of the brute-force distances (so the distances agree), summing to 1.
void check_against_brute(const Grid& src, const Grid& dst, const GenOptions& o, Kind kind,
                         const std::vector<int64_t>& todo, const GenLinks& links) {
  const double sigma2 = o.gaussian_variance * std::pow(mean_consecutive(src), 2);
  std::vector<int64_t> ids;
  std::vector<double> dist;
  int64_t at = 0;
  for (const int64_t d : todo) {
    brute_nearest(src, dst.lon[d], dst.lat[d], o.num_neighbours, &ids, &dist);
    ASSERT_FALSE(ids.empty());
    std::vector<double> w(ids.size());
    if (kind == Kind::kNearest && dist[0] < 1e-12) {
      ids.resize(1);
      w.assign(1, 1.0);
    } else {
      double sum = 0.0;
      for (size_t k = 0; k < ids.size(); ++k)
        sum += (w[k] = kind == Kind::kNearest ? 1.0 / dist[k]
                                              : std::exp(-dist[k] * dist[k] / (2.0 * sigma2)));
      for (double& x : w) x /= sum;
    }
    double sum = 0.0;
    for (size_t k = 0; k < ids.size(); ++k, ++at) {
      ASSERT_LT(at, links.size());
      ASSERT_EQ(links.dst[at], d);
      ASSERT_EQ(links.src[at], ids[k]) << "destination " << d << " neighbour " << k;
      ASSERT_TRUE(src.active(links.src[at]));
      ASSERT_TRUE(std::isfinite(links.w[at]));
      EXPECT_NEAR(links.w[at], w[k], 1e-13 * std::max(1.0, w[k])) << "destination " << d;
      sum += links.w[at];
    }
    EXPECT_NEAR(sum, 1.0, 1e-14) << "destination " << d;
  }
  EXPECT_EQ(at, links.size());
}

std::unique_ptr<WeightMethod> make(Kind kind, const Grid& src, const Grid& dst,
                                   const GenOptions& o) {
  return kind == Kind::kNearest ? make_nearest(src, dst, o) : make_gaussian(src, dst, o);
}

// The links of every active destination point, all of them served.
GenLinks serve_all(const WeightMethod& m, const Grid& dst) {
  GenLinks links;
  std::vector<int64_t> unserved;
  m.compute(active_points(dst), &links, &unserved);
  EXPECT_TRUE(unserved.empty());
  return links;
}

void run_and_check(const Grid& src, const Grid& dst, int n, Kind kind, double var = 1.0) {
  GenOptions o;
  o.num_neighbours = n;
  o.gaussian_variance = var;
  auto m = make(kind, src, dst, o);
  EXPECT_EQ(m->num_wgts(), 1);
  check_against_brute(src, dst, o, kind, active_points(dst), serve_all(*m, dst));
}

TEST(GenNearest, Names) {
  const Grid g = lonlat_grid(8, 4);
  GenOptions o;
  EXPECT_EQ(make_nearest(g, g, o)->name(), "nearest");
  EXPECT_EQ(make_gaussian(g, g, o)->name(), "gaussian");
}

TEST(GenNearest, LonLatToRandomAgainstBruteForce) {
  const Grid src = lonlat_grid(72, 36);
  const Grid dst = random_grid(3000, 7, 0.2);
  for (int n : {1, 4, 9}) {
    SCOPED_TRACE(n);
    run_and_check(src, dst, n, Kind::kNearest);
    run_and_check(src, dst, n, Kind::kGaussian, 0.5);
  }
}

TEST(GenNearest, GaussianGridToLonLatAgainstBruteForce) {
  // Many exact ties: the destination is a regular grid offset by half a cell in longitude.
  const Grid src = gaussian_grid(64, 32);
  const Grid dst = lonlat_grid(90, 45, 0.5 * 2.0 * M_PI / 64);
  for (int n : {1, 4, 8}) {
    SCOPED_TRACE(n);
    run_and_check(src, dst, n, Kind::kNearest);
    run_and_check(src, dst, n, Kind::kGaussian, 2.0);
  }
}

TEST(GenNearest, TiesAtCellCornersAgainstBruteForce) {
  // Destination points at the corners of the source cells: up to 4 source points at the same
  // distance (bit for bit or not, the order is (distance, source index) as the brute force's).
  const Grid src = lonlat_grid(36, 18);
  Grid dst;
  dst.dims = {36, 17};
  for (int j = 1; j < 18; ++j)
    for (int i = 0; i < 36; ++i) {
      dst.lon.push_back(i * 2.0 * M_PI / 36);
      dst.lat.push_back(-M_PI / 2 + j * M_PI / 18);
    }
  for (int n : {1, 2, 3, 4, 6}) {
    SCOPED_TRACE(n);
    run_and_check(src, dst, n, Kind::kNearest);
    run_and_check(src, dst, n, Kind::kGaussian);
  }
}

TEST(GenNearest, MaskedRandomSourceAgainstBruteForce) {
  const Grid src = random_grid(5000, 11, 0.4);  // masked source points never used (checked)
  const Grid dst = gaussian_grid(48, 24);
  for (int n : {1, 4, 16}) {
    SCOPED_TRACE(n);
    run_and_check(src, dst, n, Kind::kNearest);
    run_and_check(src, dst, n, Kind::kGaussian);
  }
}

// OASIS's mask rules (GenOptions::oasis_masks, the coupler's SCRIPR): the n nearest of all
// source points by brute force, masked ones dropped and the rest weighed; where all n are
// masked, the nearest active point alone with weight 1. A mask in large patches (whole bands of
// latitude) makes both cases common.
TEST(GenNearest, OasisMaskRulesAgainstBruteForce) {
  Grid src = random_grid(3000, 21, 0.0);
  for (int64_t s = 0; s < src.size(); ++s)
    src.mask[s] = std::sin(3.0 * src.lat[s]) + 0.5 * std::cos(2.0 * src.lon[s]) > 0.3 ? 0 : 1;
  const Grid dst = gaussian_grid(40, 20);
  Grid unmasked = src;
  unmasked.mask.assign(src.size(), 1);
  for (Kind kind : {Kind::kNearest, Kind::kGaussian})
    for (int n : {1, 4, 9}) {
      SCOPED_TRACE(std::to_string(n) + (kind == Kind::kNearest ? " nearest" : " gaussian"));
      GenOptions o;
      o.num_neighbours = n;
      o.oasis_masks = true;
      const GenLinks links = serve_all(*make(kind, src, dst, o), dst);
      const auto todo = active_points(dst);
      const double sigma2 = o.gaussian_variance * std::pow(mean_consecutive(src), 2);
      int64_t at = 0, partly = 0, fallback = 0;
      std::vector<int64_t> ids;
      std::vector<double> dist;
      for (const int64_t d : todo) {
        brute_nearest(unmasked, dst.lon[d], dst.lat[d], n, &ids, &dist);
        std::vector<int64_t> kid;
        std::vector<double> kd;
        for (size_t k = 0; k < ids.size(); ++k)
          if (src.active(ids[k])) kid.push_back(ids[k]), kd.push_back(dist[k]);
        std::vector<double> w;
        if (kid.empty()) {
          brute_nearest(src, dst.lon[d], dst.lat[d], 1, &kid, &kd);
          w = {1.0};
          ++fallback;
        } else {
          partly += kid.size() < ids.size();
          double sum = 0.0;
          for (double x : kd)
            sum += w.emplace_back(kind == Kind::kNearest ? 1.0 / x : std::exp(-x * x / (2.0 * sigma2)));
          for (double& x : w) x /= sum;
        }
        for (size_t k = 0; k < kid.size(); ++k, ++at) {
          ASSERT_LT(at, links.size());
          ASSERT_EQ(links.dst[at], d);
          ASSERT_EQ(links.src[at], kid[k]) << "destination " << d << " neighbour " << k;
          EXPECT_NEAR(links.w[at], w[k], 1e-13) << "destination " << d;
        }
      }
      EXPECT_EQ(at, links.size());
      if (n > 1) {
        EXPECT_GT(partly, 0);  // both cases were met
      }
      EXPECT_GT(fallback, 0);
    }
}

TEST(GenNearest, ExactHitTakesWeightOneAlone) {
  const Grid src = gaussian_grid(32, 16);
  Grid dst = src;
  for (int64_t c = 0; c < dst.size(); c += 3) dst.lon[c] += 2.0 * M_PI;  // same point, written otherwise
  GenOptions o;
  o.num_neighbours = 4;
  auto m = make_nearest(src, dst, o);
  const auto todo = active_points(dst);
  GenLinks links;
  std::vector<int64_t> unserved;
  m->compute(todo, &links, &unserved);
  EXPECT_TRUE(unserved.empty());
  ASSERT_EQ(links.size(), dst.size());
  for (int64_t c = 0; c < dst.size(); ++c) {
    EXPECT_EQ(links.src[c], c);
    EXPECT_EQ(links.dst[c], c);
    EXPECT_EQ(links.w[c], 1.0);
  }
  // Gaussian has no special case: all 4 links, the coincident point the heaviest.
  auto g = make_gaussian(src, dst, o);
  GenLinks gl;
  g->compute(todo, &gl, &unserved);
  EXPECT_TRUE(unserved.empty());
  ASSERT_EQ(gl.size(), 4 * dst.size());
  for (int64_t c = 0; c < dst.size(); ++c) {
    EXPECT_EQ(gl.src[4 * c], c);
    EXPECT_GT(gl.w[4 * c], gl.w[4 * c + 1]);
  }
}

TEST(GenNearest, FewerActiveSourcePointsThanNeighbours) {
  Grid src = lonlat_grid(6, 3);
  src.mask.assign(src.size(), 0);
  src.mask[2] = src.mask[9] = src.mask[16] = 1;
  const Grid dst = random_grid(200, 3, 0.0);
  for (Kind kind : {Kind::kNearest, Kind::kGaussian}) {
    GenOptions o;
    o.num_neighbours = 8;
    const GenLinks links = serve_all(*make(kind, src, dst, o), dst);
    EXPECT_EQ(links.size(), 3 * dst.size());
    check_against_brute(src, dst, o, kind, active_points(dst), links);
  }
}

TEST(GenNearest, NoActiveSourcePointLeavesEveryPointUnserved) {
  Grid src = lonlat_grid(10, 5);
  src.mask.assign(src.size(), 0);
  Grid empty;
  empty.dims = {0};
  const Grid dst = random_grid(50, 5, 0.3);
  const auto todo = active_points(dst);
  for (const Grid* s : {&src, &empty})
    for (Kind kind : {Kind::kNearest, Kind::kGaussian}) {
      auto m = make(kind, *s, dst, GenOptions());
      GenLinks links;
      std::vector<int64_t> unserved = {-1};  // appended to, not replaced
      m->compute(todo, &links, &unserved);
      EXPECT_EQ(links.size(), 0);
      ASSERT_EQ(unserved.size(), todo.size() + 1);
      EXPECT_TRUE(std::equal(todo.begin(), todo.end(), unserved.begin() + 1));
    }
}

TEST(GenNearest, NonFiniteDestinationIsUnserved) {
  const Grid src = lonlat_grid(20, 10);
  Grid dst = lonlat_grid(7, 5, 0.1);
  dst.lat[3] = NAN;
  dst.lon[10] = INFINITY;
  for (Kind kind : {Kind::kNearest, Kind::kGaussian}) {
    auto m = make(kind, src, dst, GenOptions());
    const auto todo = active_points(dst);
    GenLinks links;
    std::vector<int64_t> unserved;
    m->compute(todo, &links, &unserved);
    EXPECT_EQ(unserved, (std::vector<int64_t>{3, 10}));
    EXPECT_EQ(links.size(), 4 * (dst.size() - 2));
    for (double w : links.w) EXPECT_TRUE(std::isfinite(w));
  }
}

TEST(GenNearest, GaussianFarPointsNeverNaN) {
  // A tiny variance: every exp(-d²/2σ²) underflows, the weights must still be finite.
  const Grid src = lonlat_grid(360, 180);
  const Grid dst = random_grid(100, 9, 0.0);
  GenOptions o;
  o.num_neighbours = 4;
  o.gaussian_variance = 1e-6;
  auto m = make_gaussian(src, dst, o);
  GenLinks links;
  std::vector<int64_t> unserved;
  m->compute(active_points(dst), &links, &unserved);
  EXPECT_TRUE(unserved.empty());
  for (double w : links.w) EXPECT_TRUE(std::isfinite(w));
}

TEST(GenNearest, GaussianVarianceIsRelativeToTheMeanConsecutiveDistance) {
  // 4 points on the equator 90° apart: the mean consecutive distance is π/2 (OASIS's
  // grid_dist_average), so with VAR = 0.5, σ² = π²/8.
  Grid src;
  src.dims = {4};
  src.lon = {0, M_PI / 2, M_PI, 3 * M_PI / 2};
  src.lat = {0, 0, 0, 0};
  Grid dst;
  dst.dims = {1};
  dst.lon = {0.3};
  dst.lat = {0.2};
  GenOptions o;
  o.num_neighbours = 2;
  o.gaussian_variance = 0.5;
  auto m = make_gaussian(src, dst, o);
  GenLinks links;
  std::vector<int64_t> unserved;
  m->compute({0}, &links, &unserved);
  ASSERT_EQ(links.size(), 2);
  EXPECT_EQ(links.src[0], 0);
  EXPECT_EQ(links.src[1], 1);
  const double s2 = M_PI * M_PI / 8;
  const double d0 = great_circle(0.3, 0.2, 0, 0), d1 = great_circle(0.3, 0.2, M_PI / 2, 0);
  const double w0 = std::exp(-d0 * d0 / (2 * s2)), w1 = std::exp(-d1 * d1 / (2 * s2));
  EXPECT_NEAR(links.w[0], w0 / (w0 + w1), 1e-14);
  EXPECT_NEAR(links.w[1], w1 / (w0 + w1), 1e-14);
}

TEST(GenNearest, InvalidOptionsThrow) {
  const Grid g = lonlat_grid(8, 4);
  GenOptions o;
  o.num_neighbours = 0;
  EXPECT_THROW(make_nearest(g, g, o), Error);
  EXPECT_THROW(make_gaussian(g, g, o), Error);
  o.num_neighbours = 4;
  for (double v : {0.0, -1.0, double(NAN), double(INFINITY)}) {
    o.gaussian_variance = v;
    EXPECT_THROW(make_gaussian(g, g, o), Error) << v;
  }
}

TEST(GenNearest, SameResultsWholeOrInHalves) {
  const Grid src = random_grid(4000, 21, 0.3);
  const Grid dst = gaussian_grid(96, 48);
  const auto todo = active_points(dst);
  for (Kind kind : {Kind::kNearest, Kind::kGaussian}) {
    GenOptions o;
    o.num_neighbours = 5;
    auto m = make(kind, src, dst, o);
    GenLinks whole, halves;
    std::vector<int64_t> u1, u2;
    m->compute(todo, &whole, &u1);
    const size_t h = todo.size() / 2 + 17;
    m->compute(std::vector<int64_t>(todo.begin(), todo.begin() + h), &halves, &u2);
    m->compute(std::vector<int64_t>(todo.begin() + h, todo.end()), &halves, &u2);
    EXPECT_EQ(whole.src, halves.src);
    EXPECT_EQ(whole.dst, halves.dst);
    EXPECT_EQ(whole.w, halves.w);  // bit for bit
    EXPECT_EQ(u1, u2);
  }
}

// A method called batch by batch on the same links reserves room for each batch: the arrays
// must then grow geometrically (a handful of moves for 2,000 batches), not once per batch; the
// first reservation on empty links is exact.
TEST(GenLinks, ReserveMoreGrowsGeometrically) {
  GenLinks l;
  l.num_wgts = 3;
  l.reserve_more(1000);
  EXPECT_EQ(l.src.capacity(), 1000u);
  EXPECT_EQ(l.w.capacity(), 3000u);
  int moves = 0;
  const double weights[3] = {1, 2, 3};
  for (int batch = 0; batch < 2000; ++batch) {
    const int64_t* before = l.src.data();
    l.reserve_more(100);
    if (l.src.data() != before) ++moves;
    for (int k = 0; k < 100; ++k) l.add(k, batch, weights);
  }
  EXPECT_LE(moves, 10);
  EXPECT_EQ(l.size(), 200000);
  EXPECT_EQ(l.w.size(), 600000u);
  EXPECT_EQ(l.w[599999], 3.0);
}

// PointIndex::nearest's hint (the previous query's points bound the next's k-th distance): the
// same points and distances as without it, in any order of queries, and for a query repeated
// with its own points as the hint, where the bound is exactly the k-th distance and a tie there
// must keep the lower ids (5 points at exactly the same chord from the pole, asked for 4).
TEST(PointIndex, AHintChangesNothing) {
  std::vector<Vec3> pts;
  std::vector<int64_t> ids;
  const double a = 0.6, b = 0.8;  // a² + b² = 1 is not needed: the chords are what tie
  for (const Vec3 v : {Vec3{a, 0, b}, Vec3{-a, 0, b}, Vec3{0, a, b}, Vec3{0, -a, b}, Vec3{a, 0, b}}) {
    pts.push_back(v);
    ids.push_back(static_cast<int64_t>(100 - pts.size()));  // ids against the insertion order
  }
  std::mt19937 rng(5);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  for (int k = 0; k < 3000; ++k) {
    const Vec3 v{u(rng), u(rng), u(rng)};
    if (norm(v) < 0.1 || normalized(v).z > 0.5) continue;  // none nearer the pole than the 5
    pts.push_back(normalized(v));
    ids.push_back(1000 + k);
  }
  const PointIndex index(pts, ids);
  std::vector<Vec3> queries = {Vec3{0, 0, 1}, Vec3{0, 0, 1}};
  for (int j = 0; j < 40; ++j)  // a coherent path, then random points
    queries.push_back(to_xyz(0.05 * j, 0.3 + 0.02 * j));
  for (int j = 0; j < 200; ++j) queries.push_back(normalized(Vec3{u(rng), u(rng), u(rng) + 2.0}));
  for (const int k : {1, 4, 7}) {
    SCOPED_TRACE(k);
    PointIndex::Hint hint;
    std::vector<int64_t> want_ids, got_ids;
    std::vector<double> want_d, got_d;
    for (size_t j = 0; j < queries.size(); ++j) {
      index.nearest(queries[j], k, &want_ids, &want_d);
      index.nearest(queries[j], k, &got_ids, &got_d, std::numeric_limits<double>::infinity(),
                    &hint);
      ASSERT_EQ(got_ids, want_ids) << "query " << j;
      ASSERT_EQ(got_d, want_d) << "query " << j;  // bit for bit
      ASSERT_EQ(got_ids.size(), static_cast<size_t>(k));
    }
  }
  // The pole's 4 of the 5 tied points: the 4 lowest ids (95, 96, 97, 98), twice.
  PointIndex::Hint hint;
  std::vector<int64_t> got;
  std::vector<double> d;
  for (int twice = 0; twice < 2; ++twice) {
    index.nearest(Vec3{0, 0, 1}, 4, &got, &d, std::numeric_limits<double>::infinity(), &hint);
    EXPECT_EQ(got, (std::vector<int64_t>{95, 96, 97, 98})) << twice;
  }
}

// ---- The real grids: ORCA2 (torc) -> LMDZ -------------------------------------------------

// lon, lat (y, x) degrees and imask (y, x), 1 = active, of the shared data's grid_*.nc.
Grid read_test_grid(const std::string& file) {
  const std::string path = std::string(ISTHMUS_TEST_DATA) + "/orca2-lmdz/" + file;
  int nc = -1;
  if (nc_open(path.c_str(), NC_NOWRITE, &nc) != NC_NOERR) ADD_FAILURE() << "cannot open " << path;
  Grid g;
  g.name = file;
  g.source = path;
  int var = -1, dims[2];
  size_t ny = 0, nx = 0;
  nc_inq_varid(nc, "lon", &var);
  nc_inq_vardimid(nc, var, dims);
  nc_inq_dimlen(nc, dims[0], &ny);
  nc_inq_dimlen(nc, dims[1], &nx);
  g.dims = {static_cast<int64_t>(nx), static_cast<int64_t>(ny)};
  g.lon.resize(nx * ny);
  g.lat.resize(nx * ny);
  std::vector<int> mask(nx * ny);
  EXPECT_EQ(nc_get_var_double(nc, var, g.lon.data()), NC_NOERR);
  nc_inq_varid(nc, "lat", &var);
  EXPECT_EQ(nc_get_var_double(nc, var, g.lat.data()), NC_NOERR);
  nc_inq_varid(nc, "imask", &var);
  EXPECT_EQ(nc_get_var_int(nc, var, mask.data()), NC_NOERR);
  nc_close(nc);
  for (auto& x : g.lon) x *= kDeg;
  for (auto& x : g.lat) x *= kDeg;
  for (int m : mask) g.mask.push_back(m != 0 ? 1 : 0);
  return g;
}

// The grid through read_grid, checked against a direct read of lon, lat and imask.
Grid read_and_check(const std::string& file) {
  const Grid direct = read_test_grid(file);
  Grid g = read_grid(std::string(ISTHMUS_TEST_DATA) + "/orca2-lmdz/" + file);
  EXPECT_EQ(g.dims, direct.dims) << file;
  EXPECT_EQ(g.size(), direct.size()) << file;
  if (g.size() == direct.size())
    for (int64_t c = 0; c < g.size(); ++c) {
      EXPECT_NEAR(g.lon[c], direct.lon[c], 1e-14) << file << " point " << c;
      EXPECT_NEAR(g.lat[c], direct.lat[c], 1e-14) << file << " point " << c;
      EXPECT_EQ(g.active(c), direct.active(c)) << file << " point " << c;
    }
  return g;
}

TEST(GenNearest, OrcaToLmdz) {
  const Grid torc = read_and_check("grid_torc.nc");
  const Grid lmdz = read_and_check("grid_lmdz.nc");
  ASSERT_EQ(torc.size(), 182 * 149);
  ASSERT_EQ(lmdz.size(), 96 * 72);
  GenOptions o;
  o.num_neighbours = 4;
  const auto todo = active_points(lmdz);

  using Clock = std::chrono::steady_clock;
  const auto t0 = Clock::now();
  auto m = make_nearest(torc, lmdz, o);
  const auto t1 = Clock::now();
  GenLinks links;
  std::vector<int64_t> unserved;
  m->compute(todo, &links, &unserved);
  const auto t2 = Clock::now();
  auto ms = [](auto a, auto b) { return std::chrono::duration<double, std::milli>(b - a).count(); };
  std::printf("torc -> lmdz nearest n=4: %zu active of %lld destination points, %lld links; "
              "make_nearest %.2f ms, compute %.2f ms\n",
              todo.size(), static_cast<long long>(lmdz.size()),
              static_cast<long long>(links.size()), ms(t0, t1), ms(t1, t2));
  EXPECT_TRUE(unserved.empty());
  EXPECT_EQ(links.size(), 4 * static_cast<int64_t>(todo.size()));

  // Brute force on a sample of the points (every 7th, and its links).
  std::vector<int64_t> sample;
  GenLinks sample_links;
  for (size_t k = 0; k < todo.size(); ++k) {
    if (k % 7 != 0) continue;
    sample.push_back(todo[k]);
    for (int64_t l = 4 * static_cast<int64_t>(k); l < 4 * static_cast<int64_t>(k) + 4; ++l)
      sample_links.add(links.src[l], links.dst[l], links.w[l]);
  }
  check_against_brute(torc, lmdz, o, Kind::kNearest, sample, sample_links);

  // Interpolation error of a smooth function.
  auto f = [](double lon, double lat) {
    return 2.0 + std::cos(lat) * std::cos(lat) * std::cos(2.0 * lon);
  };
  std::vector<double> y(lmdz.size(), 0.0);
  for (int64_t l = 0; l < links.size(); ++l)
    y[links.dst[l]] += links.w[l] * f(torc.lon[links.src[l]], torc.lat[links.src[l]]);
  double max_err = 0.0, sum2 = 0.0;
  for (int64_t d : todo) {
    const double e = std::fabs(y[d] - f(lmdz.lon[d], lmdz.lat[d]));
    max_err = std::max(max_err, e);
    sum2 += e * e;
  }
  const double rms = std::sqrt(sum2 / static_cast<double>(todo.size()));
  std::printf("torc -> lmdz nearest n=4, f = 2 + cos²(lat)·cos(2·lon): max error %.3e, RMS %.3e\n",
              max_err, rms);
  EXPECT_LT(max_err, 0.5);
  EXPECT_LT(rms, 0.1);

  // Gaussian (VAR = 1) on the same grids: timing and the same error, loosely.
  const auto t3 = Clock::now();
  auto g = make_gaussian(torc, lmdz, o);
  const auto t4 = Clock::now();
  GenLinks gl;
  std::vector<int64_t> gu;
  g->compute(todo, &gl, &gu);
  const auto t5 = Clock::now();
  EXPECT_TRUE(gu.empty());
  std::fill(y.begin(), y.end(), 0.0);
  for (int64_t l = 0; l < gl.size(); ++l)
    y[gl.dst[l]] += gl.w[l] * f(torc.lon[gl.src[l]], torc.lat[gl.src[l]]);
  max_err = 0.0;
  sum2 = 0.0;
  for (int64_t d : todo) {
    const double e = std::fabs(y[d] - f(lmdz.lon[d], lmdz.lat[d]));
    max_err = std::max(max_err, e);
    sum2 += e * e;
  }
  std::printf("torc -> lmdz gaussian n=4 VAR=1: make %.2f ms, compute %.2f ms, max error %.3e, "
              "RMS %.3e\n",
              ms(t3, t4), ms(t4, t5), max_err, std::sqrt(sum2 / static_cast<double>(todo.size())));
  EXPECT_LT(max_err, 0.5);
}

}  // namespace
}  // namespace isthmus::remap
