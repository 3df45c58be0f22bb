// The grids and weights of seed 000's T799 <-> ORCA025 toy (sect. 3.1-3.2), synthesised:
//
// - ORCA025 stand-in: a regular 1442 x 1021 lat-lon grid (cell centres, periodic in longitude),
//   1,472,282 points. The real ORCA025 is tripolar; only its size and row-major layout matter to
//   the communication.
// - T799 stand-in: a reduced grid of 800 equally spaced latitude rows (TL799 runs on the N400
//   reduced Gaussian grid: 800 rows, 1600 points at the equator), row r holding 18 points plus a
//   share of the rest proportional to cos(latitude), 843,490 points in all (the seed's count),
//   numbered row by row from the north, row r's k-th point at longitude k * 360 / n_r.
// - Masks: the seed's 4.5 M links T799 -> ORCA025 are 61 % of 5 links per ORCA025 point and its
//   3.0 M links ORCA025 -> T799 71 % of 5 per T799 point (review reply, sect. 3.2: masked
//   points). A smooth "land" function of (lon, lat) marks 39 % of the ORCA025 points and 29 % of
//   the T799 points (thresholds at those quantiles) as masked destination points without links.
// - Weights: for every unmasked destination point, the 5 nearest source points among 16
//   candidates found by grid arithmetic (the 4 rows around its latitude, the 4 points around its
//   longitude in each), inverse great-circle distance, normalised to sum 1, nearest first.
//   Exact 5-NN would sometimes pick a point two rows away; for the communication pattern (which
//   source points each destination needs) this is immaterial.
#pragma once
#include <mpi.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <netcdf.h>
#include <string>
#include <sys/stat.h>
#include <vector>

#include "base/error.h"
#include "remap/scrip_weights.h"

namespace bench {

constexpr double kPi = 3.14159265358979323846;

struct RegularGrid {
  int64_t nx = 1442, ny = 1021;
  int64_t size() const { return nx * ny; }
  double lon(int64_t g) const { return (static_cast<double>(g % nx) + 0.5) * 360.0 / static_cast<double>(nx); }
  double lat(int64_t g) const { return -90.0 + (static_cast<double>(g / nx) + 0.5) * 180.0 / static_cast<double>(ny); }
  // Up to 16 points around (lon, lat) in degrees: 4 rows, 4 columns (periodic), distinct.
  void candidates(double lo, double la, std::vector<int64_t>& out) const {
    out.clear();
    const int64_t j = static_cast<int64_t>(std::floor((la + 90.0) * static_cast<double>(ny) / 180.0 - 0.5));
    const int64_t i = static_cast<int64_t>(std::floor(lo * static_cast<double>(nx) / 360.0 - 0.5));
    for (int64_t jj = std::max<int64_t>(0, j - 1); jj <= std::min<int64_t>(ny - 1, j + 2); ++jj)
      for (int64_t ii = i - 1; ii <= i + 2; ++ii) out.push_back(jj * nx + ((ii % nx) + nx) % nx);
  }
};

struct ReducedGrid {
  int rows = 800;
  std::vector<int64_t> count, start;
  explicit ReducedGrid(int nrows = 800, int64_t total = 843490, int64_t min_row = 18) : rows(nrows) {
    std::vector<double> w(rows), frac(rows);
    double wsum = 0;
    for (int r = 0; r < rows; ++r) wsum += (w[r] = std::cos(lat_row(r) * kPi / 180.0));
    const int64_t rest = total - min_row * rows;
    int64_t sum = 0;
    count.resize(rows);
    for (int r = 0; r < rows; ++r) {
      const double x = static_cast<double>(rest) * w[r] / wsum;
      count[r] = min_row + static_cast<int64_t>(std::floor(x));
      frac[r] = x - std::floor(x);
      sum += count[r];
    }
    std::vector<int> order(rows);
    for (int r = 0; r < rows; ++r) order[r] = r;
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return frac[a] > frac[b]; });
    for (int k = 0; sum < total; ++k, ++sum) ++count[order[k % rows]];
    start.assign(rows + 1, 0);
    for (int r = 0; r < rows; ++r) start[r + 1] = start[r] + count[r];
  }
  int64_t size() const { return start[rows]; }
  double lat_row(int r) const { return 90.0 - (r + 0.5) * 180.0 / rows; }
  int row_of(int64_t g) const {
    return static_cast<int>(std::upper_bound(start.begin(), start.end(), g) - start.begin()) - 1;
  }
  double lat(int64_t g) const { return lat_row(row_of(g)); }
  double lon(int64_t g) const {
    const int r = row_of(g);
    return static_cast<double>(g - start[r]) * 360.0 / static_cast<double>(count[r]);
  }
  void candidates(double lo, double la, std::vector<int64_t>& out) const {
    out.clear();
    const int r = static_cast<int>(std::floor((90.0 - la) * rows / 180.0 - 0.5));
    for (int rr = std::max(0, r - 1); rr <= std::min(rows - 1, r + 2); ++rr) {
      const int64_t n = count[rr], k = static_cast<int64_t>(std::floor(lo * static_cast<double>(n) / 360.0));
      for (int64_t kk = k - 1; kk <= k + 2; ++kk) out.push_back(start[rr] + ((kk % n) + n) % n);
    }
  }
};

struct ToyGrids {
  RegularGrid orca;
  ReducedGrid t799;
  static constexpr int kNeighbours = 5;
  static constexpr double kOrcaOcean = 0.61, kT799Linked = 0.71;
  static constexpr const char* kT799ToOrca = "rmp_t799_to_orca025_5NN.nc";
  static constexpr const char* kOrcaToT799 = "rmp_orca025_to_t799_5NN.nc";
  static constexpr const char* kTitle = "isthmus bench_coupling toy v1";
};

// A smooth land/sea pattern on the sphere (degrees in).
inline double land(double lo, double la) {
  const double l = lo * kPi / 180.0, p = la * kPi / 180.0;
  return std::sin(3 * l) * std::cos(2 * p) + 0.5 * std::sin(5 * p + 1) + 0.3 * std::cos(7 * l + 2 * p);
}

inline std::array<double, 3> unit(double lo, double la) {
  const double l = lo * kPi / 180.0, p = la * kPi / 180.0;
  return {std::cos(p) * std::cos(l), std::cos(p) * std::sin(l), std::sin(p)};
}

// The destination points that receive links: the `fraction` of the grid with the lowest land().
template <typename Grid>
std::vector<char> linked_points(const Grid& g, double fraction) {
  const int64_t n = g.size();
  std::vector<double> v(n);
  for (int64_t k = 0; k < n; ++k) v[k] = land(g.lon(k), g.lat(k));
  std::vector<double> sorted = v;
  const int64_t keep = static_cast<int64_t>(std::llround(fraction * static_cast<double>(n)));
  std::nth_element(sorted.begin(), sorted.begin() + keep, sorted.end());
  const double threshold = sorted[keep];
  std::vector<char> linked(n);
  for (int64_t k = 0; k < n; ++k) linked[k] = v[k] < threshold;
  return linked;
}

inline bool toy_file_ok(const std::string& path, int64_t links, int64_t src_n, int64_t dst_n, const std::string& title) {
  int nc = -1;
  if (nc_open(path.c_str(), NC_NOWRITE, &nc) != NC_NOERR) return false;
  auto dim = [&](const char* name) -> int64_t {
    int id;
    size_t len = 0;
    if (nc_inq_dimid(nc, name, &id) != NC_NOERR || nc_inq_dimlen(nc, id, &len) != NC_NOERR) return -1;
    return static_cast<int64_t>(len);
  };
  bool ok = dim("num_links") == links && dim("src_grid_size") == src_n && dim("dst_grid_size") == dst_n;
  size_t len = 0;
  std::string t;
  if (ok && nc_inq_attlen(nc, NC_GLOBAL, "title", &len) == NC_NOERR) {
    t.resize(len);
    ok = nc_get_att_text(nc, NC_GLOBAL, "title", t.data()) == NC_NOERR && t == title;
  } else {
    ok = false;
  }
  nc_close(nc);
  return ok;
}

// Writes the 5-NN file src -> dst (streaming) unless a complete one is there. Returns links.
template <typename Src, typename Dst>
int64_t write_toy_weights(const std::string& path, const Src& src, const Dst& dst, double fraction,
                          const std::vector<int64_t>& src_dims, const std::vector<int64_t>& dst_dims, bool* wrote) {
  const std::vector<char> linked = linked_points(dst, fraction);
  int64_t nlinked = 0;
  for (char c : linked) nlinked += c;
  const int64_t links = ToyGrids::kNeighbours * nlinked;
  const std::string title = std::string(ToyGrids::kTitle) + " " + path.substr(path.rfind('/') + 1);
  *wrote = false;
  if (toy_file_ok(path, links, src.size(), dst.size(), title)) return links;
  isthmus::remap::WeightsInfo info;
  info.title = title;
  info.map_method = "5 nearest neighbours, inverse distance (synthetic toy)";
  info.normalization = "no norm";
  info.conventions = "SCRIP";
  info.num_links = links;
  info.num_wgts = 1;
  info.src_grid_size = src.size();
  info.dst_grid_size = dst.size();
  info.src_grid_dims = src_dims;
  info.dst_grid_dims = dst_dims;
  const std::string tmp = path + ".part";
  {
    isthmus::remap::ScripWeightsWriter w(tmp, info);
    std::vector<int64_t> s, d, cand;
    std::vector<double> wt;
    std::vector<std::pair<double, int64_t>> near;
    for (int64_t k = 0; k < dst.size(); ++k) {
      if (!linked[k]) continue;
      const double lo = dst.lon(k), la = dst.lat(k);
      const auto p = unit(lo, la);
      src.candidates(lo, la, cand);
      near.clear();
      for (int64_t c : cand) {
        const auto q = unit(src.lon(c), src.lat(c));
        const double chord = std::sqrt((p[0] - q[0]) * (p[0] - q[0]) + (p[1] - q[1]) * (p[1] - q[1]) +
                                       (p[2] - q[2]) * (p[2] - q[2]));
        near.push_back({2 * std::asin(std::min(1.0, chord / 2)), c});
      }
      std::partial_sort(near.begin(), near.begin() + ToyGrids::kNeighbours, near.end());
      double sum = 0;
      for (int n = 0; n < ToyGrids::kNeighbours; ++n) sum += 1.0 / std::max(near[n].first, 1e-12);
      for (int n = 0; n < ToyGrids::kNeighbours; ++n) {
        s.push_back(near[n].second);
        d.push_back(k);
        wt.push_back(1.0 / std::max(near[n].first, 1e-12) / sum);
      }
      if (s.size() >= (1u << 18)) {
        w.append(s.data(), d.data(), wt.data(), static_cast<int64_t>(s.size()));
        s.clear(), d.clear(), wt.clear();
      }
    }
    w.append(s.data(), d.data(), wt.data(), static_cast<int64_t>(s.size()));
    w.close();
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) throw isthmus::Error(ISTHMUS_ERR_FILE, "cannot rename " + tmp);
  *wrote = true;
  return links;
}

// Rank 0 makes sure both files are in workdir; the others wait. Aborts on failure.
inline void ensure_toy_weights(MPI_Comm comm, int me, const ToyGrids& toy, const std::string& workdir) {
  int failed = 0;
  if (me == 0) {
    ::mkdir(workdir.c_str(), 0755);
    try {
      const double t0 = MPI_Wtime();
      bool w1 = false, w2 = false;
      const int64_t l1 = write_toy_weights(workdir + "/" + ToyGrids::kT799ToOrca, toy.t799, toy.orca,
                                           ToyGrids::kOrcaOcean, {toy.t799.size()}, {toy.orca.nx, toy.orca.ny}, &w1);
      const int64_t l2 = write_toy_weights(workdir + "/" + ToyGrids::kOrcaToT799, toy.orca, toy.t799,
                                           ToyGrids::kT799Linked, {toy.orca.nx, toy.orca.ny}, {toy.t799.size()}, &w2);
      std::fprintf(stderr, "bench_coupling: toy weights in %s: T799 -> ORCA025 %lld links (%s), ORCA025 -> T799 %lld links (%s), %.1f s\n",
                   workdir.c_str(), static_cast<long long>(l1), w1 ? "written" : "reused", static_cast<long long>(l2),
                   w2 ? "written" : "reused", MPI_Wtime() - t0);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "bench_coupling: writing the toy weights: %s\n", e.what());
      failed = 1;
    }
  }
  MPI_Bcast(&failed, 1, MPI_INT, 0, comm);
  if (failed) MPI_Abort(comm, 1);
}

}  // namespace bench
