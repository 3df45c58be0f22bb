// Conservative weight generation (src/remap/gen_conservative.cpp): normalisations, conservation,
// poles and the date line, masks, partial cover, degenerate cells, batch independence, second
// order, and the ORCA2 -> LMDZ grids against OASIS's CONSERV FRACNNEI weights.
#include <gtest/gtest.h>
#include <netcdf.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "base/error.h"
#include "core_test_util.h"
#include "remap/grid.h"
#include "remap/sphere.h"
#include "remap/weights_gen.h"
#include "test_grids.h"

namespace isthmus::remap {
namespace {

constexpr double kPi = 3.14159265358979323846;
constexpr double kDeg = kPi / 180.0;

using synthetic::lonlat;

Grid global(double dlon, double dlat, double lon0 = 0.0) {
  return lonlat(static_cast<int>(std::lround(360 / dlon)), static_cast<int>(std::lround(180 / dlat)),
                lon0, -90, dlon, dlat);
}

std::vector<int64_t> all_points(const Grid& g) {
  std::vector<int64_t> t;
  for (int64_t i = 0; i < g.size(); ++i)
    if (g.active(i)) t.push_back(i);
  return t;
}

struct Result {
  GenLinks links;
  std::vector<int64_t> unserved;
};

Result run(const Grid& src, const Grid& dst, const std::string& norm, int order = 1,
           std::vector<int64_t> todo = {}) {
  GenOptions o;
  o.normalization = norm;
  o.conservative_order = order;
  auto m = make_conservative(src, dst, o);
  Result r;
  r.links.num_wgts = m->num_wgts();
  if (todo.empty()) todo = all_points(dst);
  m->compute(todo, &r.links, &r.unserved);
  return r;
}

// Sum of the first weights per destination point.
std::vector<double> sums(const Result& r, int64_t ndst) {
  std::vector<double> s(ndst, 0.0);
  for (int64_t l = 0; l < r.links.size(); ++l) s[r.links.dst[l]] += r.links.w[l * r.links.num_wgts];
  return s;
}

// Every weight finite, links of a point consecutive and by ascending source.
void check_shape(const Result& r) {
  for (double w : r.links.w) ASSERT_TRUE(std::isfinite(w));
  for (int64_t l = 1; l < r.links.size(); ++l) {
    if (r.links.dst[l] == r.links.dst[l - 1]) {
      ASSERT_LT(r.links.src[l - 1], r.links.src[l]);
    }
  }
}

TEST(GenConservative, FracareaSumsToOneAndDestareaConserves) {
  const Grid src = global(2, 2), dst = global(3, 2.5, 0.7);
  Result fr = run(src, dst, "fracarea");
  check_shape(fr);
  EXPECT_TRUE(fr.unserved.empty());
  std::vector<double> s = sums(fr, dst.size());
  double worst = 0;
  for (double x : s) worst = std::max(worst, std::fabs(x - 1));
  EXPECT_LT(worst, 1e-12);

  Result da = run(src, dst, "destarea");
  check_shape(da);
  ASSERT_EQ(da.links.size(), fr.links.size());
  std::vector<double> got(src.size(), 0.0);
  double total = 0;
  for (int64_t l = 0; l < da.links.size(); ++l) {
    const double a = da.links.w[l] * cell_area(dst, da.links.dst[l]);
    got[da.links.src[l]] += a;
    total += a;
  }
  double worst_rel = 0, sum_src = 0;
  for (int64_t c = 0; c < src.size(); ++c) {
    worst_rel = std::max(worst_rel, std::fabs(got[c] - cell_area(src, c)) / cell_area(src, c));
    sum_src += cell_area(src, c);
  }
  EXPECT_LT(worst_rel, 1e-12);
  EXPECT_NEAR(total / (4 * kPi), 1.0, 1e-12);
  EXPECT_NEAR(sum_src / (4 * kPi), 1.0, 1e-12);
  // Global integral of a field.
  double in = 0, out = 0;
  for (int64_t c = 0; c < src.size(); ++c)
    in += cell_area(src, c) * (2 + std::sin(3 * src.lon[c]) * std::cos(src.lat[c]));
  for (int64_t l = 0; l < da.links.size(); ++l) {
    const int64_t c = da.links.src[l];
    out += da.links.w[l] * cell_area(dst, da.links.dst[l]) *
           (2 + std::sin(3 * src.lon[c]) * std::cos(src.lat[c]));
  }
  EXPECT_NEAR(out / in, 1.0, 1e-12);
  std::printf("2x2 -> 3x2.5: %lld links, max |sum-1| %.2e, max src area rel err %.2e\n",
              static_cast<long long>(fr.links.size()), worst, worst_rel);
}

// A grid with polar cap cells (36 corners at ±85°, others padded by repeating their last
// corner) and longitudes from -175° (cells across the date line), against one in [0, 360).
Grid capped_grid() {
  Grid g;
  g.name = "capped";
  g.source = "test";
  const int nc = 36, nx = 36, ny = 17;  // 10° × 10° between -85 and 85
  g.num_corners = nc;
  auto add = [&](double lon, double lat, std::vector<double> clo, std::vector<double> cla) {
    g.lon.push_back(lon * kDeg);
    g.lat.push_back(lat * kDeg);
    while (static_cast<int>(clo.size()) < nc) {
      clo.push_back(clo.back());
      cla.push_back(cla.back());
    }
    for (int k = 0; k < nc; ++k) {
      g.corner_lon.push_back(clo[k] * kDeg);
      g.corner_lat.push_back(cla[k] * kDeg);
    }
  };
  {
    std::vector<double> clo, cla;  // south cap, counter-clockwise seen from outside
    for (int i = nx; i > 0; --i) {
      clo.push_back(-175 + 10 * (i % nx));
      cla.push_back(-85);
    }
    add(0, -90, clo, cla);
  }
  for (int j = 0; j < ny; ++j)
    for (int i = 0; i < nx; ++i) {
      const double w = -175 + 10 * i, e = w + 10, s = -85 + 10 * j, n = s + 10;
      add(w + 5, s + 5, {w, e, e, w}, {s, s, n, n});
    }
  {
    std::vector<double> clo, cla;
    for (int i = 0; i < nx; ++i) {
      clo.push_back(-175 + 10 * i);
      cla.push_back(85);
    }
    add(0, 90, clo, cla);
  }
  g.dims = {g.size()};
  return g;
}

TEST(GenConservative, PolesAndDateLine) {
  const Grid cap = capped_grid();
  double a = 0;
  for (int64_t c = 0; c < cap.size(); ++c) a += cell_area(cap, c);
  EXPECT_NEAR(a / (4 * kPi), 1.0, 1e-12);
  const Grid ll = global(7.5, 6, 3);  // poles: corners sharing the pole; 0..360
  for (int dir = 0; dir < 2; ++dir) {
    const Grid& src = dir ? cap : ll;
    const Grid& dst = dir ? ll : cap;
    Result fr = run(src, dst, "fracarea");
    check_shape(fr);
    EXPECT_TRUE(fr.unserved.empty());
    for (double x : sums(fr, dst.size())) EXPECT_NEAR(x, 1.0, 1e-12);
    Result da = run(src, dst, "destarea");
    std::vector<double> got(src.size(), 0.0);
    for (int64_t l = 0; l < da.links.size(); ++l)
      got[da.links.src[l]] += da.links.w[l] * cell_area(dst, da.links.dst[l]);
    for (int64_t c = 0; c < src.size(); ++c)
      EXPECT_NEAR(got[c] / cell_area(src, c), 1.0, 1e-12) << "dir " << dir << " cell " << c;
  }
  // The cap cell of ll's north pole row overlaps the north cap only in the cap (lat > 85).
  Result r = run(cap, ll, "destarea");
  const int64_t pole_cell = ll.size() - 1;
  std::map<int64_t, double> w;
  for (int64_t l = 0; l < r.links.size(); ++l)
    if (r.links.dst[l] == pole_cell) w[r.links.src[l]] = r.links.w[l];
  EXPECT_EQ(w.count(cap.size() - 1), 1u);
}

TEST(GenConservative, MaskedSources) {
  Grid src = global(5, 5);
  src.mask.assign(src.size(), 1);
  for (int64_t c = 0; c < src.size(); ++c)
    if (c % 3 == 0 || (src.lat[c] > 40 * kDeg && src.lon[c] < 60 * kDeg)) src.mask[c] = 0;
  const Grid dst = global(8, 6, 1);
  Result fr = run(src, dst, "fracarea"), da = run(src, dst, "destarea");
  check_shape(fr);
  for (int64_t s : fr.links.src) ASSERT_TRUE(src.active(s));
  ASSERT_EQ(fr.links.size(), da.links.size());
  std::vector<double> cover = sums(da, dst.size()), one = sums(fr, dst.size());
  int partial = 0;
  for (int64_t l = 0; l < fr.links.size(); ++l) {
    const int64_t d = fr.links.dst[l];
    EXPECT_EQ(fr.links.src[l], da.links.src[l]);
    EXPECT_NEAR(da.links.w[l], fr.links.w[l] * cover[d], 1e-14);
  }
  for (int64_t d = 0; d < dst.size(); ++d) {
    if (one[d] == 0) continue;
    EXPECT_NEAR(one[d], 1.0, 1e-12);
    EXPECT_LE(cover[d], 1.0 + 1e-12);
    if (cover[d] < 0.99) ++partial;
  }
  EXPECT_GT(partial, 10);
  // Points whose cells lie on masked sources only: unserved by fracarea, served by fracnnei.
  std::vector<int64_t> none;
  for (int64_t d = 0; d < dst.size(); ++d)
    if (one[d] == 0) none.push_back(d);
  EXPECT_EQ(none, fr.unserved);
  EXPECT_FALSE(none.empty());
  Result nn = run(src, dst, "fracnnei");
  EXPECT_TRUE(nn.unserved.empty());
  EXPECT_EQ(nn.links.size(), fr.links.size() + static_cast<int64_t>(none.size()));
  for (double x : sums(nn, dst.size())) EXPECT_NEAR(x, 1.0, 1e-12);
}

TEST(GenConservative, PartialCover) {
  const Grid src = lonlat(30, 30, 0, 0, 1, 1);  // 0..30 E, 0..30 N
  Grid dst = lonlat(1, 1, 29, 10, 2, 2);         // half outside
  const Grid sliver = lonlat(1, 1, 29.9999, 12, 2, 2);  // 1e-4 / 2 of it inside
  const Grid out = lonlat(1, 1, 40, 12, 2, 2);           // outside
  for (const Grid* g : {&sliver, &out}) {
    dst.lon.push_back(g->lon[0]);
    dst.lat.push_back(g->lat[0]);
    dst.corner_lon.insert(dst.corner_lon.end(), g->corner_lon.begin(), g->corner_lon.end());
    dst.corner_lat.insert(dst.corner_lat.end(), g->corner_lat.begin(), g->corner_lat.end());
  }
  dst.dims = {3};
  Result fr = run(src, dst, "fracarea"), da = run(src, dst, "destarea");
  check_shape(fr);
  std::vector<double> one = sums(fr, 3), cover = sums(da, 3);
  EXPECT_NEAR(one[0], 1.0, 1e-12);
  EXPECT_NEAR(cover[0], 0.5, 1e-3);
  EXPECT_NEAR(one[1], 1.0, 1e-12);
  EXPECT_GT(cover[1], 0.0);
  EXPECT_NEAR(cover[1], 0.5e-4, 1e-6);
  EXPECT_EQ(fr.unserved, std::vector<int64_t>{2});
  EXPECT_EQ(da.unserved, std::vector<int64_t>{2});
  Result nn = run(src, dst, "fracnnei");
  EXPECT_TRUE(nn.unserved.empty());
  ASSERT_GE(nn.links.size(), 1);
  EXPECT_EQ(nn.links.dst.back(), 2);
  EXPECT_EQ(nn.links.src.back(), 13 * 30 + 29);  // (29.5 E, 13.5 N): nearest to (41 E, 13 N)
  EXPECT_EQ(nn.links.w.back(), 1.0);
  std::printf("half cell: destarea sum %.6f; sliver cell: destarea sum %.3e, %d links\n", cover[0],
              cover[1], static_cast<int>(std::count(fr.links.dst.begin(), fr.links.dst.end(), 1)));
}

TEST(GenConservative, DegenerateCells) {
  Grid src = lonlat(10, 10, 0, 0, 1, 1);
  const int64_t n = src.size();
  auto set = [&](int64_t c, std::vector<double> clo, std::vector<double> cla) {
    for (int k = 0; k < 4; ++k) {
      src.corner_lon[c * 4 + k] = clo[k] * kDeg;
      src.corner_lat[c * 4 + k] = cla[k] * kDeg;
    }
  };
  set(11, {1.5, 1.5, 1.5, 1.5}, {1.5, 1.5, 1.5, 1.5});          // one point
  set(12, {2, 3, 2, 3}, {1, 2, 2, 1});                          // bow-tie
  set(13, {4, 3, 3, 4}, {1, 1, 2, 2});                          // clockwise
  set(14, {4, 5, 5, 4}, {1, 1, 1, 1});                          // a line
  set(15, {5, 6, 5.5, 5}, {1, 1, 1.5, 2});                      // non-convex (dart)
  set(16, {6, 7, 7, 7}, {1, 1, 2, 2});                          // repeated corner: triangle
  set(17, {7, NAN, 8, 7}, {1, 1, 2, 2});                        // non-finite
  const Grid dst = lonlat(40, 40, 0, 0, 0.25, 0.25);
  Result da = run(src, dst, "destarea");
  check_shape(da);
  std::vector<double> got(n, 0.0);
  for (int64_t l = 0; l < da.links.size(); ++l)
    got[da.links.src[l]] += da.links.w[l] * cell_area(dst, da.links.dst[l]);
  for (int64_t c : {11, 12, 14, 17}) EXPECT_EQ(got[c], 0.0) << c;
  // (Not the cells of the last row: their northern great circles bulge beyond the destination's
  // shorter ones.)
  for (int64_t c : {13, 15, 16, 0, 55}) EXPECT_NEAR(got[c] / cell_area(src, c), 1.0, 1e-11) << c;
  // The non-convex cell: its area, not its hull's.
  std::vector<Vec3> dart = {to_xyz(5 * kDeg, 1 * kDeg), to_xyz(6 * kDeg, 1 * kDeg),
                            to_xyz(5.5 * kDeg, 1.5 * kDeg), to_xyz(5 * kDeg, 2 * kDeg)};
  EXPECT_NEAR(got[15] / spherical_polygon_area(dart.data(), 4), 1.0, 1e-11);
  // As destinations, the same cells do not abort; the empty ones are unserved.
  Result back = run(dst, src, "fracarea");
  check_shape(back);
  EXPECT_EQ(back.unserved, (std::vector<int64_t>{11, 12, 14, 17}));
  for (double x : sums(back, n)) EXPECT_TRUE(x == 0.0 || std::fabs(x - 1) < 1e-12);
}

TEST(GenConservative, BatchIndependence) {
  Grid src = global(4, 3, 0.3);
  src.mask.assign(src.size(), 1);
  for (int64_t c = 0; c < src.size(); c += 7) src.mask[c] = 0;
  const Grid dst = global(5, 4, 1);
  for (int order : {1, 2}) {
    Result all = run(src, dst, "fracnnei", order);
    std::mt19937 rng(5);
    std::vector<int64_t> a, b;
    for (int64_t d = 0; d < dst.size(); ++d) (rng() % 3 ? a : b).push_back(d);
    Result ra = run(src, dst, "fracnnei", order, a), rb = run(src, dst, "fracnnei", order, b);
    // Per point links of the parts equal those of the whole, bitwise.
    auto per_point = [](const Result& r) {
      std::map<int64_t, std::vector<double>> m;
      for (int64_t l = 0; l < r.links.size(); ++l) {
        auto& v = m[r.links.dst[l]];
        v.push_back(static_cast<double>(r.links.src[l]));
        for (int k = 0; k < r.links.num_wgts; ++k) v.push_back(r.links.w[l * r.links.num_wgts + k]);
      }
      return m;
    };
    auto whole = per_point(all), pa = per_point(ra), pb = per_point(rb);
    for (auto& kv : pb) pa.insert(kv);
    EXPECT_TRUE(whole == pa) << "order " << order;
  }
}

TEST(GenConservative, Errors) {
  const Grid g = global(10, 10);
  Grid bare = g;
  bare.name = "bare";
  bare.num_corners = 0;
  bare.corner_lon.clear();
  bare.corner_lat.clear();
  GenOptions o;
  auto e1 = test::outcome_of([&] { make_conservative(bare, g, o); });
  EXPECT_EQ(e1.code, ISTHMUS_ERR_ARG);
  EXPECT_NE(e1.msg.find("bare"), std::string::npos) << e1.msg;
  auto e2 = test::outcome_of([&] { make_conservative(g, bare, o); });
  EXPECT_EQ(e2.code, ISTHMUS_ERR_ARG);
  EXPECT_NE(e2.msg.find("bare"), std::string::npos) << e2.msg;
  o.normalization = "fracarae";
  auto e3 = test::outcome_of([&] { make_conservative(g, g, o); });
  EXPECT_EQ(e3.code, ISTHMUS_ERR_ARG);
  EXPECT_NE(e3.msg.find("fracarae"), std::string::npos) << e3.msg;
}

// The mean of f over a cell (lon-lat quad with great-circle edges) by brute force: each of the
// two triangles cut into n² sub-triangles, each by the value at its (projected) centroid.
template <class F>
double cell_mean(const Grid& g, int64_t c, F f, int n = 48) {
  Vec3 v[4];
  for (int k = 0; k < 4; ++k) v[k] = to_xyz(g.corner_lon[c * 4 + k], g.corner_lat[c * 4 + k]);
  double sum = 0, area = 0;
  for (int t = 0; t < 2; ++t) {
    const Vec3 a = v[0], b = v[t + 1], cc = v[t + 2];
    auto at = [&](double i, double j) { return (1.0 - (i + j) / n) * a + (i / n) * b + (j / n) * cc; };
    for (int i = 0; i < n; ++i)
      for (int j = 0; i + j < n; ++j)
        for (int up = 0; up < 2; ++up) {
          if (up && i + j + 2 > n) continue;
          Vec3 p[3];
          if (!up) {
            p[0] = normalized(at(i, j)); p[1] = normalized(at(i + 1, j)); p[2] = normalized(at(i, j + 1));
          } else {
            p[0] = normalized(at(i + 1, j)); p[1] = normalized(at(i + 1, j + 1)); p[2] = normalized(at(i, j + 1));
          }
          const double da = spherical_polygon_area(p, 3);
          double lon, lat;
          to_lonlat(normalized(p[0] + p[1] + p[2]), &lon, &lat);
          sum += da * f(lon, lat);
          area += da;
        }
  }
  return sum / area;
}

// Second order: w1 is the first-order weight; weights 2 and 3 vanish in sum over a fully
// covered source cell (destarea); with the source cells' exact means and exact gradients, the
// latitude term makes f = lat exact and the two terms cut the error of a smooth field.
TEST(GenConservative, SecondOrder) {
  const Grid src = global(4, 4, 0.5), dst = global(3, 2.5, 0.7);
  Result r1 = run(src, dst, "destarea", 1), r2 = run(src, dst, "destarea", 2);
  check_shape(r2);
  ASSERT_EQ(r2.links.num_wgts, 3);
  ASSERT_EQ(r1.links.size(), r2.links.size());
  for (int64_t l = 0; l < r1.links.size(); ++l) ASSERT_EQ(r1.links.w[l], r2.links.w[3 * l]);
  std::vector<double> g2(src.size(), 0.0), g3(src.size(), 0.0);
  for (int64_t l = 0; l < r2.links.size(); ++l) {
    const double a = cell_area(dst, r2.links.dst[l]);
    g2[r2.links.src[l]] += r2.links.w[3 * l + 1] * a;
    g3[r2.links.src[l]] += r2.links.w[3 * l + 2] * a;
  }
  double w2 = 0, w3 = 0;
  for (int64_t c = 0; c < src.size(); ++c) {
    w2 = std::max(w2, std::fabs(g2[c]) / cell_area(src, c));
    w3 = std::max(w3, std::fabs(g3[c]) / cell_area(src, c));
  }
  EXPECT_LT(w2, 1e-9);  // the quadrature: ~1e-10 for 4° cells
  EXPECT_LT(w3, 1e-9);
  std::printf("second order: max |sum of w2, w3 . A_dst| / A_src %.2e %.2e\n", w2, w3);

  Result f2 = run(src, dst, "fracarea", 2);
  auto lat = [](double, double la) { return la; };
  auto smooth = [](double lo, double la) { return 2 + std::cos(la) * std::cos(la) * std::cos(2 * lo); };
  auto d_lat = [](double lo, double la) { return -2 * std::cos(la) * std::sin(la) * std::cos(2 * lo); };
  auto d_lon = [](double lo, double la) { return -2 * std::cos(la) * std::sin(2 * lo); };  // (1/cos)∂/∂lon
  std::vector<double> ms_lat(src.size()), ms_f(src.size()), md_lat(dst.size()), md_f(dst.size());
  for (int64_t c = 0; c < src.size(); ++c) {
    ms_lat[c] = cell_mean(src, c, lat);
    ms_f[c] = cell_mean(src, c, smooth);
  }
  for (int64_t d = 0; d < dst.size(); ++d) {
    md_lat[d] = cell_mean(dst, d, lat);
    md_f[d] = cell_mean(dst, d, smooth);
  }
  std::vector<double> lat1(dst.size(), 0.0), lat2(dst.size(), 0.0), f1v(dst.size(), 0.0), f2v(dst.size(), 0.0);
  for (int64_t l = 0; l < f2.links.size(); ++l) {
    const int64_t s = f2.links.src[l], d = f2.links.dst[l];
    const double* w = &f2.links.w[3 * l];
    lat1[d] += w[0] * ms_lat[s];
    lat2[d] += w[0] * ms_lat[s] + w[1];
    f1v[d] += w[0] * ms_f[s];
    f2v[d] += w[0] * ms_f[s] + w[1] * d_lat(src.lon[s], src.lat[s]) + w[2] * d_lon(src.lon[s], src.lat[s]);
  }
  double el1 = 0, el2 = 0, ef1 = 0, ef2 = 0, mf1 = 0, mf2 = 0;
  for (int64_t d = 0; d < dst.size(); ++d) {
    el1 = std::max(el1, std::fabs(lat1[d] - md_lat[d]));
    el2 = std::max(el2, std::fabs(lat2[d] - md_lat[d]));
    mf1 += std::fabs(f1v[d] - md_f[d]) / dst.size();
    mf2 += std::fabs(f2v[d] - md_f[d]) / dst.size();
    if (std::fabs(dst.lat[d]) < 80 * kDeg) {
      ef1 = std::max(ef1, std::fabs(f1v[d] - md_f[d]));
      ef2 = std::max(ef2, std::fabs(f2v[d] - md_f[d]));
    }
  }
  std::printf("second order: f = lat max error %.3e (first order %.3e); smooth f mean error %.3e "
              "(first order %.3e), max below 80° %.3e (%.3e)\n", el2, el1, mf2, mf1, ef2, ef1);
  EXPECT_LT(el2, 1e-6);
  EXPECT_GT(el1, 1e-3);
  EXPECT_LT(mf2, 0.2 * mf1);
  EXPECT_LT(ef2, 0.2 * ef1);
}

// ---- The ORCA2 -> LMDZ grids against OASIS's CONSERV FRACNNEI weights ----

void nc_check(int rc, const std::string& what) {
  if (rc != NC_NOERR) FAIL() << what << ": " << nc_strerror(rc);
}

std::vector<double> nc_doubles(int nc, const char* name, size_t n) {
  int v = -1;
  std::vector<double> out(n);
  if (nc_inq_varid(nc, name, &v) != NC_NOERR || nc_get_var_double(nc, v, out.data()) != NC_NOERR)
    ADD_FAILURE() << "cannot read " << name;
  return out;
}
std::vector<int> nc_ints(int nc, const char* name, size_t n) {
  int v = -1;
  std::vector<int> out(n);
  if (nc_inq_varid(nc, name, &v) != NC_NOERR || nc_get_var_int(nc, v, out.data()) != NC_NOERR)
    ADD_FAILURE() << "cannot read " << name;
  return out;
}
size_t nc_dim(int nc, const char* name) {
  int d = -1;
  size_t n = 0;
  if (nc_inq_dimid(nc, name, &d) != NC_NOERR || nc_inq_dimlen(nc, d, &n) != NC_NOERR)
    ADD_FAILURE() << "no dimension " << name;
  return n;
}

// The shared data's grid_NAME.nc: lon, lat (y, x), clo, cla (crn, y, x) degrees, imask 1 = active.
Grid read_test_grid(const std::string& name) {
  const std::string path = std::string(ISTHMUS_TEST_DATA) + "/orca2-lmdz/grid_" + name + ".nc";
  Grid g;
  int nc = -1;
  if (nc_open(path.c_str(), NC_NOWRITE, &nc) != NC_NOERR) {
    ADD_FAILURE() << "cannot open " << path;
    return g;
  }
  const size_t nx = nc_dim(nc, ("x_" + name).c_str()), ny = nc_dim(nc, ("y_" + name).c_str()),
               ncr = nc_dim(nc, ("crn_" + name).c_str()), n = nx * ny;
  g.name = name;
  g.source = path;
  g.dims = {static_cast<int64_t>(nx), static_cast<int64_t>(ny)};
  g.num_corners = static_cast<int>(ncr);
  g.lon = nc_doubles(nc, "lon", n);
  g.lat = nc_doubles(nc, "lat", n);
  for (double& x : g.lon) x *= kDeg;
  for (double& x : g.lat) x *= kDeg;
  const std::vector<double> clo = nc_doubles(nc, "clo", n * ncr), cla = nc_doubles(nc, "cla", n * ncr);
  g.corner_lon.resize(n * ncr);
  g.corner_lat.resize(n * ncr);
  for (size_t c = 0; c < n; ++c)
    for (size_t k = 0; k < ncr; ++k) {
      g.corner_lon[c * ncr + k] = clo[k * n + c] * kDeg;
      g.corner_lat[c * ncr + k] = cla[k * n + c] * kDeg;
    }
  const std::vector<int> m = nc_ints(nc, "imask", n);
  g.mask.assign(m.begin(), m.end());
  nc_close(nc);
  return g;
}

double field(double lon, double lat) { return 2 + std::cos(lat) * std::cos(lat) * std::cos(2 * lon); }

TEST(GenConservative, Orca2ToLmdzAgainstOasis) {
  const Grid src = read_test_grid("torc"), dst = read_test_grid("lmdz");
  ASSERT_EQ(src.size(), 27118);
  ASSERT_EQ(dst.size(), 6912);
  GenOptions o;
  o.normalization = "fracnnei";
  const auto t0 = std::chrono::steady_clock::now();
  auto m = make_conservative(src, dst, o);
  const auto t1 = std::chrono::steady_clock::now();
  Result ours;
  m->compute(all_points(dst), &ours.links, &ours.unserved);
  const auto t2 = std::chrono::steady_clock::now();
  check_shape(ours);
  EXPECT_TRUE(ours.unserved.empty());
  for (int64_t s : ours.links.src) ASSERT_TRUE(src.active(s));

  // OASIS's file.
  const std::string path = std::string(ISTHMUS_TEST_DATA) + "/orca2-lmdz/rmp_torc_to_lmdz_CONSERV_FRACNNEI.nc";
  int nc = -1;
  nc_check(nc_open(path.c_str(), NC_NOWRITE, &nc), path);
  const size_t nl = nc_dim(nc, "num_links");
  const std::vector<int> sa = nc_ints(nc, "src_address", nl), dad = nc_ints(nc, "dst_address", nl);
  const std::vector<double> rm = nc_doubles(nc, "remap_matrix", nl);
  nc_close(nc);
  EXPECT_EQ(nl, 39194u);

  std::map<std::pair<int64_t, int64_t>, double> theirs, mine;
  for (size_t l = 0; l < nl; ++l)
    if (sa[l] > 0) theirs[{dad[l] - 1, sa[l] - 1}] += rm[l];
  for (int64_t l = 0; l < ours.links.size(); ++l) mine[{ours.links.dst[l], ours.links.src[l]}] += ours.links.w[l];
  int64_t common = 0, only_ours = 0, only_theirs = 0;
  double maxdiff = 0, sum_only_ours = 0, sum_only_theirs = 0;
  for (const auto& kv : mine) {
    auto it = theirs.find(kv.first);
    if (it == theirs.end()) {
      ++only_ours;
      sum_only_ours = std::max(sum_only_ours, kv.second);
    } else {
      ++common;
      maxdiff = std::max(maxdiff, std::fabs(kv.second - it->second));
    }
  }
  for (const auto& kv : theirs)
    if (!mine.count(kv.first)) {
      ++only_theirs;
      sum_only_theirs = std::max(sum_only_theirs, kv.second);
    }

  // Interpolation error of f at the destination centres, over the points both serve.
  std::vector<double> vo(dst.size(), 0.0), vt(dst.size(), 0.0), so(dst.size(), 0.0), st(dst.size(), 0.0);
  for (const auto& kv : mine) {
    vo[kv.first.first] += kv.second * field(src.lon[kv.first.second], src.lat[kv.first.second]);
    so[kv.first.first] += kv.second;
  }
  for (const auto& kv : theirs) {
    vt[kv.first.first] += kv.second * field(src.lon[kv.first.second], src.lat[kv.first.second]);
    st[kv.first.first] += kv.second;
  }
  double eo_max = 0, et_max = 0, eo_mean = 0, et_mean = 0;
  int64_t both = 0;
  for (int64_t d = 0; d < dst.size(); ++d) {
    if (so[d] == 0 || st[d] == 0) continue;
    ++both;
    const double f = field(dst.lon[d], dst.lat[d]);
    eo_max = std::max(eo_max, std::fabs(vo[d] - f));
    et_max = std::max(et_max, std::fabs(vt[d] - f));
    eo_mean += std::fabs(vo[d] - f);
    et_mean += std::fabs(vt[d] - f);
  }
  eo_mean /= both;
  et_mean /= both;
  std::printf(
      "ORCA2 -> LMDZ fracnnei: ours %lld links (%lld points), OASIS %zu links; common %lld, only "
      "ours %lld (max w %.3e), only OASIS %lld (max w %.3e); max |dw| on common links %.3e\n",
      static_cast<long long>(ours.links.size()), static_cast<long long>(dst.size() - static_cast<int64_t>(ours.unserved.size())), nl,
      static_cast<long long>(common), static_cast<long long>(only_ours), sum_only_ours,
      static_cast<long long>(only_theirs), sum_only_theirs, maxdiff);
  std::printf("  |error| of f = 2 + cos^2(lat) cos(2 lon) over %lld points: ours mean %.4e max %.4e,"
              " OASIS mean %.4e max %.4e\n",
              static_cast<long long>(both), eo_mean, eo_max, et_mean, et_max);
  std::printf("  time: setup %.3f s, compute %.3f s\n", std::chrono::duration<double>(t1 - t0).count(),
              std::chrono::duration<double>(t2 - t1).count());
  // The way back onto every ORCA2 cell, masked ones too (degenerate corners): no abort, sums 1.
  {
    std::vector<int64_t> every(src.size());
    for (int64_t i = 0; i < src.size(); ++i) every[i] = i;
    Result back = run(dst, src, "fracarea", 1, every);
    check_shape(back);
    for (double x : sums(back, src.size())) EXPECT_TRUE(x == 0.0 || std::fabs(x - 1) < 1e-12);
    int64_t active_unserved = 0;
    for (int64_t c : back.unserved) active_unserved += src.active(c);
    EXPECT_EQ(active_unserved, 0);
    std::printf("  LMDZ -> every ORCA2 cell: %lld links, %zu cells unserved (empty)\n",
                static_cast<long long>(back.links.size()), back.unserved.size());
  }
  // OASIS's north pole row of LMDZ has weights of -0.0002 and 1.0002 (SCRIP's pole handling):
  // the large differences on common links are there.
  EXPECT_LE(eo_mean, et_mean * 1.05);
  EXPECT_LE(eo_max, et_max * 1.10);
  EXPECT_GT(common, static_cast<int64_t>(0.9 * nl));
}

// spherical_polygon_area multiplies the triangles' (den + i·num) and takes one atan2 where the
// sum cannot wrap, else sums an atan2 per triangle: both ways against the sum written out here
// (to 1e-14 relative) on caps of 3-64 vertices from 1e-6 to 170 degrees of radius (the large
// ones, over a hemisphere, take the summed way), and the octant's exact π/2.
TEST(SphericalPolygonArea, OneAtan2AgreesWithTheSumOfTheTriangles) {
  const auto summed = [](const std::vector<Vec3>& v) {
    double sum = 0;
    for (size_t i = 1; i + 1 < v.size(); ++i) {
      const Vec3 a = v[0], b = v[i], c = v[i + 1];
      sum += 2.0 * std::atan2(dot(a, cross(b, c)), 1.0 + dot(a, b) + dot(b, c) + dot(c, a));
    }
    return std::fabs(sum);
  };
  const std::vector<Vec3> octant = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
  EXPECT_DOUBLE_EQ(spherical_polygon_area(octant.data(), 3), kPi / 2);
  // A wedge from the pole down to 30°S over 330° of longitude (13 vertices): fan triangles with
  // den near 0.9, whose half excesses add up past π (its area is about 2.75π): the product's
  // argument would wrap, so the sum must be taken.
  {
    std::vector<Vec3> w = {{0, 0, 1}};
    for (int k = 0; k <= 11; ++k) w.push_back(to_xyz(k * 30.0 * kDeg, -30 * kDeg));
    const double got = spherical_polygon_area(w.data(), int(w.size()));
    EXPECT_NEAR(got, summed(w), 1e-14 * got);
    EXPECT_NEAR(got, 330.0 / 360.0 * 3 * kPi, 0.1 * kPi);
  }
  for (int n : {3, 4, 5, 8, 33, 34, 40, 64})
    for (double radius_deg : {1e-6, 1e-3, 0.25, 10.0, 60.0, 89.0, 120.0, 170.0}) {
      // A cap's polygon about (lon 30°, lat 40°), counter-clockwise, and clockwise.
      std::vector<Vec3> v;
      const Vec3 c = to_xyz(30 * kDeg, 40 * kDeg), e1 = normalized(cross({0, 0, 1}, c)),
                 e2 = cross(c, e1);
      const double r = radius_deg * kDeg;
      for (int k = 0; k < n; ++k) {
        const double t = 2 * kPi * k / n;
        v.push_back(std::cos(r) * c + std::sin(r) * (std::cos(t) * e1 + std::sin(t) * e2));
      }
      for (int turn = 0; turn < 2; ++turn) {
        SCOPED_TRACE(std::to_string(n) + " vertices, radius " + std::to_string(radius_deg) +
                     (turn ? " clockwise" : ""));
        const double want = summed(v), got = spherical_polygon_area(v.data(), n);
        EXPECT_NEAR(got, want, 1e-14 * want);
        // Against the cap's area, which the polygon fills (where the vertices' own rounding,
        // ~1e-16 of a radius of 1e-8 radians, does not swamp it).
        EXPECT_GT(got, 0);
        if (radius_deg >= 1e-3 && radius_deg <= 89.0) {
          EXPECT_LT(got, 2 * kPi * (1 - std::cos(r)) * (1 + 1e-9));
        }
        std::reverse(v.begin(), v.end());
      }
    }
}

// A method prepared for a block of destination points (a rank's share: make_conservative's
// dst_points) leaves out the source cells outside the block's band of latitudes; it must give
// every point of the block the bits of a method prepared for all of them: ORCA2 (fold, masked
// degenerate cells) and LMDZ (pole rows) both ways, a global grid onto one across the date line,
// in 7 blocks of rows (and blocks of single points and of every 5th point: a band from scattered
// points), first and second order.
TEST(GenConservative, APreparedBlockGivesTheBitsOfTheWholeDestination) {
  const Grid torc = read_test_grid("torc"), lmdz = read_test_grid("lmdz");
  const Grid coarse = global(10, 10), fine = global(7.5, 6, -180);
  struct Pair {
    const Grid* src;
    const Grid* dst;
    std::string norm;
    int order;
  };
  for (const Pair& p : {Pair{&torc, &lmdz, "fracnnei", 1}, Pair{&lmdz, &torc, "destarea", 1},
                        Pair{&coarse, &fine, "fracarea", 2}, Pair{&lmdz, &torc, "fracarea", 2}}) {
    GenOptions o;
    o.normalization = p.norm;
    o.conservative_order = p.order;
    const auto whole = make_conservative(*p.src, *p.dst, o);
    const std::vector<int64_t> points = all_points(*p.dst);
    for (const std::vector<int64_t>& block : synthetic::test_blocks(points)) {
      const auto part = make_conservative(*p.src, *p.dst, o, &block);
      Result a, b;
      a.links.num_wgts = b.links.num_wgts = whole->num_wgts();
      whole->compute(block, &a.links, &a.unserved);
      part->compute(block, &b.links, &b.unserved);
      const std::string what = p.src->name + " -> " + p.dst->name + " " + p.norm + " order " +
                               std::to_string(p.order) + ", block from " +
                               std::to_string(block.front()) + " of " + std::to_string(block.size());
      ASSERT_GT(a.links.size(), 0) << what;
      EXPECT_EQ(a.links.src, b.links.src) << what;
      EXPECT_EQ(a.links.dst, b.links.dst) << what;
      ASSERT_EQ(a.links.w.size(), b.links.w.size()) << what;
      EXPECT_EQ(std::memcmp(a.links.w.data(), b.links.w.data(), a.links.w.size() * sizeof(double)), 0)
          << what;
      EXPECT_EQ(a.unserved, b.unserved) << what;
      EXPECT_EQ(a.links.frac, b.links.frac) << what;
    }
  }
}

// The size of CDO's benchmark (ORCA025-like 1442 × 1021 source to a 0.25° grid, 1 036 800
// points): ISTHMUS_BENCH_CONSERV=1 to run it.
TEST(GenConservative, Benchmark) {
  if (!std::getenv("ISTHMUS_BENCH_CONSERV")) GTEST_SKIP() << "set ISTHMUS_BENCH_CONSERV=1";
  // A distorted lon-lat source (curvilinear, like a tripolar grid south of its fold).
  const int nx = 1442, ny = 1021;
  Grid src = lonlat(nx, ny, -1.3, -80, 360.0 / nx, 170.0 / ny);
  for (size_t k = 0; k < src.corner_lat.size(); ++k) {
    const double lo = src.corner_lon[k], la = src.corner_lat[k];
    src.corner_lat[k] = la + 0.002 * std::sin(3 * lo) * std::cos(la);
  }
  const Grid dst = global(0.25, 0.25, 0.1);
  GenOptions o;
  o.normalization = "fracarea";
  const auto t0 = std::chrono::steady_clock::now();
  auto m = make_conservative(src, dst, o);
  const auto t1 = std::chrono::steady_clock::now();
  GenLinks links;
  std::vector<int64_t> unserved;
  m->compute(all_points(dst), &links, &unserved);
  const auto t2 = std::chrono::steady_clock::now();
  std::printf("bench %lld -> %lld: setup %.3f s, compute %.3f s, %lld links, %zu unserved\n",
              static_cast<long long>(src.size()), static_cast<long long>(dst.size()),
              std::chrono::duration<double>(t1 - t0).count(),
              std::chrono::duration<double>(t2 - t1).count(), static_cast<long long>(links.size()),
              unserved.size());
}

}  // namespace
}  // namespace isthmus::remap
