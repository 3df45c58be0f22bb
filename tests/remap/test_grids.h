// Synthetic grids shared by the weight generation tests (tests/remap/test_gen_*.cpp and
// test_weights_gen.cpp).
#pragma once
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "remap/grid.h"

namespace isthmus::remap::synthetic {

// The blocks a method prepared for a rank's share is tried on (make_*'s dst_points): points
// (ascending) in 7 runs of consecutive ones, the first alone, the last alone, and every 5th (a
// band of latitudes from scattered points).
inline std::vector<std::vector<int64_t>> test_blocks(const std::vector<int64_t>& points) {
  std::vector<std::vector<int64_t>> blocks;
  const size_t n = points.size();
  for (size_t b = 0; b < 7; ++b)
    blocks.emplace_back(points.begin() + long(n * b / 7), points.begin() + long(n * (b + 1) / 7));
  blocks.push_back({points.front()});
  blocks.push_back({points.back()});
  blocks.emplace_back();
  for (size_t i = 0; i < n; i += 5) blocks.back().push_back(points[i]);
  return blocks;
}

// A lon-lat grid of nx × ny cells from (lon0, lat0) by (dlon, dlat) degrees, cell (i, j) at
// j * nx + i; corners counter-clockwise from the south-west one.
inline Grid lonlat(int nx, int ny, double lon0, double lat0, double dlon, double dlat,
                   const std::string& name = "ll") {
  constexpr double deg = M_PI / 180.0;
  Grid g;
  g.name = name;
  g.source = "test";
  g.dims = {nx, ny};
  g.num_corners = 4;
  for (int j = 0; j < ny; ++j)
    for (int i = 0; i < nx; ++i) {
      const double w = lon0 + i * dlon, e = w + dlon, s = lat0 + j * dlat, n = s + dlat;
      g.lon.push_back((w + 0.5 * dlon) * deg);
      g.lat.push_back((s + 0.5 * dlat) * deg);
      const double clo[4] = {w, e, e, w}, cla[4] = {s, s, n, n};
      for (int k = 0; k < 4; ++k) {
        g.corner_lon.push_back(clo[k] * deg);
        g.corner_lat.push_back(cla[k] * deg);
      }
    }
  return g;
}

// The centres alone of a global regular grid of nx × ny cells, x fastest, shifted by lon0
// radians: lon0 + (i + 1/2) 2π/nx, -π/2 + (j + 1/2) π/ny (the point methods' tests).
inline Grid lonlat_grid(int nx, int ny, double lon0 = 0.0) {
  Grid g;
  g.name = "lonlat";
  g.source = "test";
  g.dims = {nx, ny};
  for (int j = 0; j < ny; ++j)
    for (int i = 0; i < nx; ++i) {
      g.lon.push_back(lon0 + (i + 0.5) * 2.0 * M_PI / nx);
      g.lat.push_back(-M_PI / 2 + (j + 0.5) * M_PI / ny);
    }
  return g;
}

}  // namespace isthmus::remap::synthetic
