// Grid readers for weight generation (remap/grid.h): the shared ORCA2/LMDZ grid files, OASIS's
// grids.nc/masks.nc/areas.nc, SCRIP grid files (degrees and radians), CF files, and broken files.
#include "remap/grid.h"

#include <gtest/gtest.h>
#include <netcdf.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <limits>
#include <map>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "base/error.h"

namespace {

using isthmus::remap::Grid;
namespace fs = std::filesystem;

constexpr double kDeg = 3.14159265358979323846 / 180.0;
const std::string kData = std::string(ISTHMUS_TEST_DATA) + "/orca2-lmdz/";

void nc_ok(int rc, const std::string& what) {
  if (rc != NC_NOERR) throw std::runtime_error(what + ": " + nc_strerror(rc));
}

// A netCDF file for the tests: dimensions, then variables (values as doubles, converted by
// netCDF to the variable's type) with text attributes; written on close().
class NcWriter {
 public:
  explicit NcWriter(const std::string& path) : path_(path) {
    nc_ok(nc_create(path.c_str(), NC_CLOBBER | NC_64BIT_OFFSET, &id_), "create " + path);
  }
  ~NcWriter() {
    if (open_) nc_close(id_);
  }
  NcWriter& dim(const std::string& name, size_t len) {
    int d = -1;
    nc_ok(nc_def_dim(id_, name.c_str(), len, &d), "dimension " + name);
    dims_[name] = d;
    return *this;
  }
  NcWriter& var(const std::string& name, nc_type type, const std::vector<std::string>& dims,
                std::vector<double> values, const std::map<std::string, std::string>& atts = {}) {
    std::vector<int> ids;
    for (const std::string& d : dims) ids.push_back(dims_.at(d));
    int v = -1;
    nc_ok(nc_def_var(id_, name.c_str(), type, static_cast<int>(ids.size()), ids.data(), &v), "variable " + name);
    for (const auto& [k, t] : atts) nc_ok(nc_put_att_text(id_, v, k.c_str(), t.size(), t.c_str()), k);
    pending_.push_back({v, std::move(values)});
    return *this;
  }
  void close() {
    nc_ok(nc_enddef(id_), "enddef");
    for (auto& [v, values] : pending_)
      if (!values.empty()) nc_ok(nc_put_var_double(id_, v, values.data()), "write " + path_);
    open_ = false;
    nc_ok(nc_close(id_), "close");
  }

 private:
  std::string path_;
  int id_ = -1;
  bool open_ = true;
  std::map<std::string, int> dims_;
  std::vector<std::pair<int, std::vector<double>>> pending_;
};

class TempDir {
 public:
  TempDir() {
    std::string t = (fs::temp_directory_path() / "isthmus_grid_XXXXXX").string();
    if (!::mkdtemp(t.data())) throw std::runtime_error("mkdtemp");
    path_ = t;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// The error a call throws: its code must be `code`; "" (and a failure) when none.
std::string error_of(const std::function<void()>& f, int code = ISTHMUS_ERR_FILE) {
  try {
    f();
  } catch (const isthmus::Error& e) {
    EXPECT_EQ(e.code(), code) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "no error";
  return "";
}

int64_t active_count(const Grid& g) {
  int64_t n = 0;
  for (int64_t c = 0; c < g.size(); ++c) n += g.active(c);
  return n;
}

// ---------------------------------------------------------------------------------------------
// The shared data's grid_torc.nc and grid_lmdz.nc (values from ncdump)

TEST(GridShared, Torc) {
  const Grid g = isthmus::remap::read_scrip_grid(kData + "grid_torc.nc");
  EXPECT_EQ(g.name, "grid_torc");
  EXPECT_EQ(g.source, kData + "grid_torc.nc");
  ASSERT_EQ(g.dims, (std::vector<int64_t>{182, 149}));
  ASSERT_EQ(g.size(), 27118);
  ASSERT_EQ(g.num_corners, 4);
  ASSERT_EQ(g.corner_lon.size(), 4u * 27118);
  ASSERT_EQ(g.corner_lat.size(), 4u * 27118);
  ASSERT_EQ(g.mask.size(), 27118u);
  EXPECT_EQ(active_count(g), 16501);
  ASSERT_EQ(g.area.size(), 27118u);
  EXPECT_EQ(g.area_units, "m2");

  // point (i 100, j 74): on the equator, off South America's coast, active
  const int64_t c = 74 * 182 + 100;
  EXPECT_NEAR(g.lon[c], 277.99982353169401 * kDeg, 1e-14);
  EXPECT_NEAR(g.lat[c], 0.50069164975003799 * kDeg, 1e-14);
  EXPECT_TRUE(g.active(c));
  EXPECT_NEAR(g.area[c], 12420945880.1376, 1e-3);
  const double clo[4] = {278.99961072297401, 276.99964490330399, 276.99964490330399, 278.99961072297401};
  const double cla[4] = {0.75266247772030004, 0.75266247772030004, 0.25007381663369099, 0.25007381663369099};
  for (int k = 0; k < 4; ++k) {
    EXPECT_NEAR(g.corner_lon[c * 4 + k], clo[k] * kDeg, 1e-14) << k;
    EXPECT_NEAR(g.corner_lat[c * 4 + k], cla[k] * kDeg, 1e-14) << k;
  }
  // point 0: Antarctica, masked, a degenerate cell (its four corners on one latitude): read as is
  EXPECT_FALSE(g.active(0));
  EXPECT_NEAR(g.lon[0], 78.000036715677197 * kDeg, 1e-14);
  EXPECT_NEAR(g.lat[0], -78.190584955855201 * kDeg, 1e-14);
  for (int k = 0; k < 4; ++k) EXPECT_NEAR(g.corner_lat[k], -77.984170336470896 * kDeg, 1e-14) << k;
  EXPECT_NEAR(g.corner_lon[0], 79.000038597532694 * kDeg, 1e-14);
  EXPECT_NEAR(g.corner_lon[1], 77.000115638993506 * kDeg, 1e-14);
  // the last point
  EXPECT_NEAR(g.lon[27117], 80 * kDeg, 1e-14);
  EXPECT_NEAR(g.lat[27117], 49.978894357705698 * kDeg, 1e-14);
  EXPECT_FALSE(g.active(27117));
}

TEST(GridShared, Lmdz) {
  // through read_grid, which tells the layout by its variables
  const Grid g = isthmus::remap::read_grid(kData + "grid_lmdz.nc");
  ASSERT_EQ(g.dims, (std::vector<int64_t>{96, 72}));
  ASSERT_EQ(g.size(), 6912);
  ASSERT_EQ(g.num_corners, 4);
  EXPECT_EQ(active_count(g), 4965);
  EXPECT_EQ(g.area_units, "m2");  // no units attribute: OASIS's m²
  const int64_t c = 36 * 96 + 10;
  EXPECT_NEAR(g.lon[c], -142.5 * kDeg, 1e-14);  // not wrapped
  EXPECT_NEAR(g.lat[c], 1.2676012516021729 * kDeg, 1e-14);
  EXPECT_NEAR(g.area[c], 117498900138.021, 1e-2);
  const double clo[4] = {-144.375, -140.625, -140.625, -144.375};
  const double cla[4] = {-2.6822090148925781e-06, -2.6822090148925781e-06, 2.5352078676223755,
                         2.5352078676223755};
  for (int k = 0; k < 4; ++k) {
    EXPECT_NEAR(g.corner_lon[c * 4 + k], clo[k] * kDeg, 1e-14) << k;
    EXPECT_NEAR(g.corner_lat[c * 4 + k], cla[k] * kDeg, 1e-14) << k;
  }
}

// ---------------------------------------------------------------------------------------------
// A small synthetic logically rectangular grid, nx × ny, 20° cells, counter-clockwise corners.

struct Synthetic {
  int nx = 4, ny = 3;
  std::vector<double> lon, lat;          // degrees, (y, x)
  std::vector<double> clo, cla;          // degrees, (crn, y, x) as OASIS writes them
  std::vector<double> msk, srf;          // OASIS: 1 = masked
  Synthetic() {
    const int n = nx * ny;
    clo.resize(4 * n);
    cla.resize(4 * n);
    const double dx[4] = {-10, 10, 10, -10}, dy[4] = {-10, -10, 10, 10};
    for (int j = 0; j < ny; ++j)
      for (int i = 0; i < nx; ++i) {
        const int c = j * nx + i;
        lon.push_back(10 + 20 * i);
        lat.push_back(-20 + 20 * j);
        msk.push_back((i + j) % 3 == 0 ? 1 : 0);
        srf.push_back(1e10 * (c + 1));
        for (int k = 0; k < 4; ++k) {
          clo[k * n + c] = lon.back() + dx[k];
          cla[k * n + c] = lat.back() + dy[k];
        }
      }
  }
  int size() const { return nx * ny; }
};

// grids.nc (with another grid, "atm", before "ocn"), masks.nc, areas.nc in dir
void write_oasis_trio(const TempDir& dir, const Synthetic& s, bool masks = true, bool areas = true) {
  NcWriter g(dir / "grids.nc");
  g.dim("x_atm", 2).dim("y_atm", 1).dim("crn_atm", 4);
  g.var("atm.lon", NC_DOUBLE, {"y_atm", "x_atm"}, {0, 180});
  g.var("atm.lat", NC_DOUBLE, {"y_atm", "x_atm"}, {0, 0});
  g.dim("x_ocn", s.nx).dim("y_ocn", s.ny).dim("crn_ocn", 4);
  g.var("ocn.lon", NC_DOUBLE, {"y_ocn", "x_ocn"}, s.lon);
  g.var("ocn.lat", NC_DOUBLE, {"y_ocn", "x_ocn"}, s.lat);
  g.var("ocn.clo", NC_DOUBLE, {"crn_ocn", "y_ocn", "x_ocn"}, s.clo);
  g.var("ocn.cla", NC_DOUBLE, {"crn_ocn", "y_ocn", "x_ocn"}, s.cla);
  g.close();
  if (masks) {
    NcWriter m(dir / "masks.nc");
    m.dim("x_ocn", s.nx).dim("y_ocn", s.ny);
    m.var("ocn.msk", NC_INT, {"y_ocn", "x_ocn"}, s.msk);
    m.close();
  }
  if (areas) {
    NcWriter a(dir / "areas.nc");
    a.dim("x_ocn", s.nx).dim("y_ocn", s.ny);
    a.var("ocn.srf", NC_DOUBLE, {"y_ocn", "x_ocn"}, s.srf);
    a.close();
  }
}

TEST(GridOasis, TrioReadBackWithTheMaskInverted) {
  TempDir dir;
  const Synthetic s;
  write_oasis_trio(dir, s);
  const Grid g = isthmus::remap::read_grid(dir / "grids.nc:ocn");
  EXPECT_EQ(g.name, "ocn");
  EXPECT_EQ(g.source, dir / "grids.nc:ocn");
  ASSERT_EQ(g.dims, (std::vector<int64_t>{4, 3}));
  ASSERT_EQ(g.size(), 12);
  ASSERT_EQ(g.num_corners, 4);
  ASSERT_EQ(g.mask.size(), 12u);
  ASSERT_EQ(g.area.size(), 12u);
  EXPECT_EQ(g.area_units, "m2");
  const int n = s.size();
  for (int c = 0; c < n; ++c) {
    EXPECT_DOUBLE_EQ(g.lon[c], s.lon[c] * kDeg);
    EXPECT_DOUBLE_EQ(g.lat[c], s.lat[c] * kDeg);
    EXPECT_EQ(g.mask[c], s.msk[c] == 0 ? 1 : 0) << c;  // OASIS 1 = masked -> 0
    EXPECT_EQ(g.area[c], s.srf[c]);
    for (int k = 0; k < 4; ++k) {
      EXPECT_DOUBLE_EQ(g.corner_lon[c * 4 + k], s.clo[k * n + c] * kDeg);
      EXPECT_DOUBLE_EQ(g.corner_lat[c * 4 + k], s.cla[k * n + c] * kDeg);
    }
  }
  // point (i 1, j 2) = 9: (1 + 2) % 3 == 0, masked; corner 2 is its north-east one
  EXPECT_FALSE(g.active(9));
  EXPECT_TRUE(g.active(1));
  EXPECT_DOUBLE_EQ(g.corner_lon[9 * 4 + 2], 40 * kDeg);
  EXPECT_DOUBLE_EQ(g.corner_lat[9 * 4 + 2], 30 * kDeg);
  EXPECT_EQ(active_count(g), 8);

  // the other grid of the same grids.nc: no corners, and no mask or areas in the files
  const Grid atm = isthmus::remap::read_oasis_grid(dir / "grids.nc", "atm");
  EXPECT_EQ(atm.dims, (std::vector<int64_t>{2, 1}));
  EXPECT_DOUBLE_EQ(atm.lon[1], 180 * kDeg);
  EXPECT_FALSE(atm.has_corners());
  EXPECT_TRUE(atm.mask.empty());
  EXPECT_TRUE(atm.area.empty());
}

TEST(GridOasis, MasksAndAreasAreOptional) {
  TempDir dir;
  write_oasis_trio(dir, Synthetic(), false, false);
  const Grid g = isthmus::remap::read_oasis_grid(dir / "grids.nc", "ocn");
  EXPECT_EQ(g.size(), 12);
  EXPECT_TRUE(g.mask.empty());
  EXPECT_TRUE(g.area.empty());
  EXPECT_EQ(active_count(g), 12);
  EXPECT_DOUBLE_EQ(g.lon[5], 30 * kDeg);
}

// ---------------------------------------------------------------------------------------------
// SCRIP grid files

Grid small_grid() {
  Grid g;
  g.name = "small";
  g.dims = {3, 2};
  for (int j = 0; j < 2; ++j)
    for (int i = 0; i < 3; ++i) {
      const double lo = (-170 + 120 * i) * kDeg, la = (-45 + 90 * j) * kDeg;
      g.lon.push_back(lo);
      g.lat.push_back(la);
      const double dlo[4] = {-60, 60, 60, -60}, dla[4] = {-45, -45, 45, 45};
      for (int k = 0; k < 4; ++k) {
        g.corner_lon.push_back(lo + dlo[k] * kDeg);
        g.corner_lat.push_back(la + dla[k] * kDeg);
      }
      g.mask.push_back(i == 1 ? 0 : 1);
      g.area.push_back(0.5 + i + 3 * j);
    }
  g.num_corners = 4;
  g.area_units = "square radians";
  return g;
}

TEST(GridScrip, WriteAndReadBackInDegrees) {
  TempDir dir;
  const Grid in = small_grid();
  const std::string path = dir / "small.nc";
  isthmus::remap::write_scrip_grid(path, in);

  // the file holds degrees, with units "degrees", and SCRIP's variables
  int id = -1;
  nc_ok(nc_open(path.c_str(), NC_NOWRITE, &id), "open");
  int v = -1;
  nc_ok(nc_inq_varid(id, "grid_center_lon", &v), "grid_center_lon");
  char units[32] = {0};
  nc_ok(nc_get_att_text(id, v, "units", units), "units");
  EXPECT_STREQ(units, "degrees");
  std::vector<double> lon(6);
  nc_ok(nc_get_var_double(id, v, lon.data()), "lon");
  EXPECT_NEAR(lon[2], 70, 1e-12);
  int dims[2] = {0, 0};
  nc_ok(nc_inq_varid(id, "grid_dims", &v), "grid_dims");
  nc_ok(nc_get_var_int(id, v, dims), "grid_dims");
  EXPECT_EQ(dims[0], 3);
  EXPECT_EQ(dims[1], 2);
  std::vector<double> clat(24);
  nc_ok(nc_inq_varid(id, "grid_corner_lat", &v), "grid_corner_lat");
  nc_ok(nc_get_var_double(id, v, clat.data()), "grid_corner_lat");
  EXPECT_NEAR(clat[4 * 3 + 2], 90, 1e-12);
  nc_close(id);

  const Grid out = isthmus::remap::read_grid(path);
  EXPECT_EQ(out.name, "small");
  EXPECT_EQ(out.dims, in.dims);
  ASSERT_EQ(out.size(), 6);
  ASSERT_EQ(out.num_corners, 4);
  EXPECT_EQ(out.mask, in.mask);
  EXPECT_EQ(out.area, in.area);
  EXPECT_EQ(out.area_units, "square radians");
  for (int c = 0; c < 6; ++c) {
    EXPECT_NEAR(out.lon[c], in.lon[c], 1e-15);
    EXPECT_NEAR(out.lat[c], in.lat[c], 1e-15);
  }
  for (int i = 0; i < 24; ++i) {
    EXPECT_NEAR(out.corner_lon[i], in.corner_lon[i], 1e-15);
    EXPECT_NEAR(out.corner_lat[i], in.corner_lat[i], 1e-15);
  }

  // without a mask, areas or corners: grid_imask all 1, no corners read back
  Grid bare = in;
  bare.mask.clear();
  bare.area.clear();
  bare.num_corners = 0;
  bare.corner_lon.clear();
  bare.corner_lat.clear();
  isthmus::remap::write_scrip_grid(dir / "bare.nc", bare);
  const Grid b = isthmus::remap::read_scrip_grid(dir / "bare.nc");
  EXPECT_EQ(b.mask, std::vector<uint8_t>(6, 1));
  EXPECT_FALSE(b.has_corners());
  EXPECT_TRUE(b.area.empty());
  EXPECT_NEAR(b.lat[4], 45 * kDeg, 1e-15);
}

TEST(GridScrip, HandWrittenRadiansUnstructured) {
  // two triangles and a quadrilateral (triangles repeat their last corner), grid_rank 1, radians
  TempDir dir;
  const std::string path = dir / "tri.nc";
  NcWriter w(path);
  w.dim("grid_size", 3).dim("grid_corners", 4).dim("grid_rank", 1);
  w.var("grid_dims", NC_INT, {"grid_rank"}, {3});
  w.var("grid_center_lat", NC_DOUBLE, {"grid_size"}, {0.1, 0.2, -0.3}, {{"units", "radians"}});
  w.var("grid_center_lon", NC_DOUBLE, {"grid_size"}, {1.0, 2.0, 7.0}, {{"units", "radians"}});
  w.var("grid_corner_lat", NC_DOUBLE, {"grid_size", "grid_corners"},
        {0, 0, 0.3, 0.3, 0, 0.1, 0.4, 0.4, -0.5, -0.5, -0.1, -0.1}, {{"units", "radians"}});
  w.var("grid_corner_lon", NC_DOUBLE, {"grid_size", "grid_corners"},
        {0.9, 1.1, 1.0, 1.0, 1.9, 2.1, 2.0, 2.0, 6.9, 7.1, 7.1, 6.9}, {{"units", "radians"}});
  w.var("grid_imask", NC_INT, {"grid_size"}, {1, 0, 1});
  w.close();
  const Grid g = isthmus::remap::read_grid(path);
  EXPECT_EQ(g.dims, std::vector<int64_t>{3});
  EXPECT_FALSE(g.rectangular());
  EXPECT_EQ(g.lon, (std::vector<double>{1.0, 2.0, 7.0}));  // radians: as they are, not wrapped
  EXPECT_EQ(g.lat, (std::vector<double>{0.1, 0.2, -0.3}));
  ASSERT_EQ(g.num_corners, 4);
  EXPECT_EQ(g.corner_lat[6], 0.4);
  EXPECT_EQ(g.corner_lon[11], 6.9);
  EXPECT_EQ(g.mask, (std::vector<uint8_t>{1, 0, 1}));
  EXPECT_TRUE(g.area.empty());
}

TEST(GridScrip, DegreeSpellings) {
  TempDir dir;
  const std::string path = dir / "spell.nc";
  NcWriter w(path);
  w.dim("grid_size", 2).dim("grid_rank", 1);
  w.var("grid_center_lat", NC_DOUBLE, {"grid_size"}, {10, 20}, {{"units", "degrees_north"}});
  w.var("grid_center_lon", NC_FLOAT, {"grid_size"}, {30, 40}, {{"units", "Degree_E"}});
  w.close();
  const Grid g = isthmus::remap::read_scrip_grid(path);
  EXPECT_EQ(g.dims, std::vector<int64_t>{2});  // no grid_dims: one dimension
  EXPECT_DOUBLE_EQ(g.lat[1], 20 * kDeg);
  EXPECT_DOUBLE_EQ(g.lon[0], 30 * kDeg);
  EXPECT_TRUE(g.mask.empty());
}

// ---------------------------------------------------------------------------------------------
// CF files

TEST(GridCf, RegularWithOneDimensionalBounds) {
  TempDir dir;
  const std::string path = dir / "cf.nc";
  NcWriter w(path);
  w.dim("x", 3).dim("y", 2).dim("nv", 2);
  w.var("x", NC_DOUBLE, {"x"}, {0, 120, 240},
        {{"standard_name", "longitude"}, {"units", "degrees_east"}, {"bounds", "x_b"}});
  // latitudes north to south, bounds in that order: corners still counter-clockwise
  w.var("y", NC_DOUBLE, {"y"}, {45, -45},
        {{"standard_name", "latitude"}, {"units", "degrees_north"}, {"bounds", "y_b"}});
  w.var("x_b", NC_DOUBLE, {"x", "nv"}, {-60, 60, 60, 180, 180, 300});
  w.var("y_b", NC_DOUBLE, {"y", "nv"}, {90, 0, 0, -90});
  w.var("sst", NC_FLOAT, {"y", "x"}, {}, {{"units", "K"}});
  w.close();
  const Grid g = isthmus::remap::read_grid(path);
  EXPECT_EQ(g.name, "cf");
  ASSERT_EQ(g.dims, (std::vector<int64_t>{3, 2}));
  ASSERT_EQ(g.size(), 6);
  EXPECT_TRUE(g.mask.empty());
  EXPECT_EQ(active_count(g), 6);
  // point j * nx + i
  EXPECT_DOUBLE_EQ(g.lon[4], 120 * kDeg);
  EXPECT_DOUBLE_EQ(g.lat[4], -45 * kDeg);
  EXPECT_DOUBLE_EQ(g.lat[2], 45 * kDeg);
  ASSERT_EQ(g.num_corners, 4);
  // (lon0, lat0), (lon1, lat0), (lon1, lat1), (lon0, lat1), west to east and south to north
  const double lo[4] = {60, 180, 180, 60}, la[4] = {-90, -90, 0, 0};
  for (int k = 0; k < 4; ++k) {
    EXPECT_DOUBLE_EQ(g.corner_lon[4 * 4 + k], lo[k] * kDeg) << k;
    EXPECT_DOUBLE_EQ(g.corner_lat[4 * 4 + k], la[k] * kDeg) << k;
  }
  EXPECT_DOUBLE_EQ(g.corner_lat[2 * 4 + 2], 90 * kDeg);
  // read_cf_grid directly gives the same
  const Grid d = isthmus::remap::read_cf_grid(path);
  EXPECT_EQ(d.corner_lon, g.corner_lon);
  EXPECT_EQ(d.lat, g.lat);
}

TEST(GridCf, TwoDimensionalWithBounds) {
  TempDir dir;
  const std::string path = dir / "curv.nc";
  NcWriter w(path);
  w.dim("y", 1).dim("x", 2).dim("nvertex", 4);
  w.var("nav_lon", NC_DOUBLE, {"y", "x"}, {5, 15}, {{"bounds", "bounds_lon"}});
  w.var("nav_lat", NC_DOUBLE, {"y", "x"}, {50, 50}, {{"bounds", "bounds_lat"}});
  w.var("bounds_lon", NC_DOUBLE, {"y", "x", "nvertex"}, {0, 10, 10, 0, 10, 20, 20, 10});
  w.var("bounds_lat", NC_DOUBLE, {"y", "x", "nvertex"}, {45, 45, 55, 55, 45, 45, 55, 55});
  w.close();
  const Grid g = isthmus::remap::read_grid(path);
  ASSERT_EQ(g.dims, (std::vector<int64_t>{2, 1}));
  ASSERT_EQ(g.num_corners, 4);
  EXPECT_DOUBLE_EQ(g.lon[1], 15 * kDeg);
  EXPECT_DOUBLE_EQ(g.corner_lon[4 + 1], 20 * kDeg);
  EXPECT_DOUBLE_EQ(g.corner_lat[4 + 3], 55 * kDeg);
}

// ---------------------------------------------------------------------------------------------
// Broken files: each fails with ISTHMUS_ERR_FILE and a message naming what and why.

struct Broken {
  const char* name;
  std::function<std::string(const TempDir&)> make;  // writes the file(s), returns the spec
  std::vector<std::string> expect;                  // substrings of the message
  std::function<Grid(const std::string&)> read = [](const std::string& spec) {
    return isthmus::remap::read_grid(spec);
  };
};

std::string scrip(const TempDir& dir, const std::function<void(NcWriter&)>& extra,
                  bool lon = true) {
  NcWriter w(dir / "scrip.nc");
  w.dim("grid_size", 6).dim("grid_corners", 4).dim("grid_rank", 2).dim("other", 5);
  w.var("grid_dims", NC_INT, {"grid_rank"}, {3, 2});
  w.var("grid_center_lat", NC_DOUBLE, {"grid_size"}, {0, 0, 0, 1, 1, 1}, {{"units", "degrees"}});
  if (lon) w.var("grid_center_lon", NC_DOUBLE, {"grid_size"}, {0, 1, 2, 0, 1, 2}, {{"units", "degrees"}});
  extra(w);
  w.close();
  return dir / "scrip.nc";
}

std::vector<double> corners_with(double bad, int at) {
  std::vector<double> v(24, 1.0);
  v[at] = bad;
  return v;
}

const std::vector<Broken>& broken_files() {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  static const std::vector<Broken> cases = {
      {"scrip corner NaN",
       [nan](const TempDir& d) {
         return scrip(d, [&](NcWriter& w) {
           w.var("grid_corner_lat", NC_DOUBLE, {"grid_size", "grid_corners"}, corners_with(0, 0));
           w.var("grid_corner_lon", NC_DOUBLE, {"grid_size", "grid_corners"}, corners_with(nan, 4 * 4 + 2));
         });
       },
       {"scrip.nc: variable grid_corner_lon: corner 2 of point 4 (i 1, j 1) is nan"}},
      {"oasis corner Inf",
       [inf](const TempDir& d) {
         Synthetic s;
         s.cla[2 * 12 + 5] = -inf;
         write_oasis_trio(d, s);
         return d / "grids.nc:ocn";
       },
       {"grids.nc: variable ocn.cla: corner 2 of point 5 (i 1, j 1) is -inf"}},
      {"centre NaN",
       [nan](const TempDir& d) {
         Synthetic s;
         s.lat[7] = nan;
         write_oasis_trio(d, s);
         return d / "grids.nc:ocn";
       },
       {"variable ocn.lat: point 7 (i 3, j 1) is nan"}},
      {"oasis mask transposed",
       [](const TempDir& d) {
         write_oasis_trio(d, Synthetic(), false);
         NcWriter m(d / "masks.nc");
         m.dim("x_ocn", 4).dim("y_ocn", 3);
         m.var("ocn.msk", NC_INT, {"x_ocn", "y_ocn"}, std::vector<double>(12, 0));
         m.close();
         return d / "grids.nc:ocn";
       },
       {"masks.nc: variable ocn.msk has dimensions (x_ocn 4, y_ocn 3) (3 x 4), the grid has 4 x 3 points",
        "grids.nc's ocn.lon", "the mask must have the grid's shape"}},
      {"oasis area too short",
       [](const TempDir& d) {
         write_oasis_trio(d, Synthetic(), true, false);
         NcWriter a(d / "areas.nc");
         a.dim("n", 11);
         a.var("ocn.srf", NC_DOUBLE, {"n"}, std::vector<double>(11, 1));
         a.close();
         return d / "grids.nc:ocn";
       },
       {"areas.nc: variable ocn.srf has dimensions (n 11)", "the areas must have the grid's shape"}},
      {"scrip mask of another size",
       [](const TempDir& d) {
         return scrip(d, [](NcWriter& w) { w.var("grid_imask", NC_INT, {"other"}, {1, 1, 1, 1, 1}); });
       },
       {"scrip.nc: variable grid_imask has dimensions (other 5)", "the grid has 6 points",
        "the mask must have the grid's shape"}},
      {"lon and lat of different shapes",
       [](const TempDir& d) {
         NcWriter w(d / "grid_x.nc");
         w.dim("y", 2).dim("x", 3).dim("crn", 4);
         w.var("lon", NC_DOUBLE, {"y", "x"}, std::vector<double>(6, 0));
         w.var("lat", NC_DOUBLE, {"x", "y"}, std::vector<double>(6, 0));
         w.var("clo", NC_DOUBLE, {"crn", "y", "x"}, std::vector<double>(24, 0));
         w.var("cla", NC_DOUBLE, {"crn", "y", "x"}, std::vector<double>(24, 0));
         w.close();
         return d / "grid_x.nc";
       },
       {"grid_x.nc: variable lat has dimensions (x 3, y 2) but lon has (y 2, x 3)",
        "lon and lat must have the same shape"}},
      {"cf lon 2-D, lat 1-D",
       [](const TempDir& d) {
         NcWriter w(d / "cf.nc");
         w.dim("y", 2).dim("x", 3);
         w.var("lon", NC_DOUBLE, {"y", "x"}, std::vector<double>(6, 0), {{"units", "degrees_east"}});
         w.var("lat", NC_DOUBLE, {"y"}, {0, 1}, {{"units", "degrees_north"}});
         w.close();
         return d / "cf.nc";
       },
       {"cf.nc: variable lat has dimensions (y 2) but lon has (y 2, x 3)"}},
      {"oasis corners of 2 dimensions",
       [](const TempDir& d) {
         NcWriter w(d / "grids.nc");
         w.dim("x_torc", 3).dim("y_torc", 2);
         w.var("torc.lon", NC_DOUBLE, {"y_torc", "x_torc"}, std::vector<double>(6, 0));
         w.var("torc.lat", NC_DOUBLE, {"y_torc", "x_torc"}, std::vector<double>(6, 0));
         w.var("torc.clo", NC_DOUBLE, {"y_torc", "x_torc"}, std::vector<double>(6, 0));
         w.var("torc.cla", NC_DOUBLE, {"y_torc", "x_torc"}, std::vector<double>(6, 0));
         w.close();
         return d / "grids.nc:torc";
       },
       {"grids.nc: variable torc.clo has 2 dimensions (y_torc 2, x_torc 3), expected 3: the corners "
        "first, then the dimensions of torc.lon (y_torc 2, x_torc 3)"}},
      {"oasis corners of another grid",
       [](const TempDir& d) {
         NcWriter w(d / "grids.nc");
         w.dim("x_torc", 3).dim("y_torc", 2).dim("crn_torc", 4).dim("x2", 4);
         w.var("torc.lon", NC_DOUBLE, {"y_torc", "x_torc"}, std::vector<double>(6, 0));
         w.var("torc.lat", NC_DOUBLE, {"y_torc", "x_torc"}, std::vector<double>(6, 0));
         w.var("torc.clo", NC_DOUBLE, {"crn_torc", "y_torc", "x2"}, std::vector<double>(32, 0));
         w.var("torc.cla", NC_DOUBLE, {"crn_torc", "y_torc", "x2"}, std::vector<double>(32, 0));
         w.close();
         return d / "grids.nc:torc";
       },
       {"grids.nc: variable torc.clo: torc.lon has 3 x 2 points (y_torc 2, x_torc 3) but torc.clo "
        "has 4 x 2 cells (crn_torc 4, y_torc 2, x2 4)"}},
      {"scrip corners of 1 dimension",
       [](const TempDir& d) {
         return scrip(d, [](NcWriter& w) {
           w.var("grid_corner_lat", NC_DOUBLE, {"grid_size"}, std::vector<double>(6, 0));
           w.var("grid_corner_lon", NC_DOUBLE, {"grid_size"}, std::vector<double>(6, 0));
         });
       },
       {"scrip.nc: variable grid_corner_lon has 1 dimension (grid_size 6), expected 2"}},
      {"scrip without grid_center_lon",
       [](const TempDir& d) { return scrip(d, [](NcWriter&) {}, false); },
       {"scrip.nc: no variable grid_center_lon"}},
      {"scrip with one corner variable",
       [](const TempDir& d) {
         return scrip(d, [](NcWriter& w) {
           w.var("grid_corner_lon", NC_DOUBLE, {"grid_size", "grid_corners"}, std::vector<double>(24, 0));
         });
       },
       {"scrip.nc: no variable grid_corner_lat (grid_corner_lon is there"}},
      {"scrip grid_dims against grid_size",
       [](const TempDir& d) {
         NcWriter w(d / "dims.nc");
         w.dim("grid_size", 6).dim("grid_rank", 2);
         w.var("grid_dims", NC_INT, {"grid_rank"}, {2, 2});
         w.var("grid_center_lat", NC_DOUBLE, {"grid_size"}, std::vector<double>(6, 0));
         w.var("grid_center_lon", NC_DOUBLE, {"grid_size"}, std::vector<double>(6, 0));
         w.close();
         return d / "dims.nc";
       },
       {"dims.nc: variable grid_dims is 2 x 2 = 4 points, but grid_size is 6"}},
      {"units neither degrees nor radians",
       [](const TempDir& d) {
         NcWriter w(d / "units.nc");
         w.dim("grid_size", 2);
         w.var("grid_center_lat", NC_DOUBLE, {"grid_size"}, {0, 0}, {{"units", "m"}});
         w.var("grid_center_lon", NC_DOUBLE, {"grid_size"}, {0, 0}, {{"units", "degrees"}});
         w.close();
         return d / "units.nc";
       },
       {"units.nc: variable grid_center_lat: units \"m\" are neither degrees nor radians"}},
      {"oasis lat missing",
       [](const TempDir& d) {
         NcWriter w(d / "grids.nc");
         w.dim("x_ocn", 3).dim("y_ocn", 2);
         w.var("ocn.lon", NC_DOUBLE, {"y_ocn", "x_ocn"}, std::vector<double>(6, 0));
         w.close();
         return d / "grids.nc:ocn";
       },
       {"grids.nc: no variable ocn.lat"}},
      {"oasis grid not in the file",
       [](const TempDir& d) {
         write_oasis_trio(d, Synthetic());
         return d / "grids.nc:torc";
       },
       {"grids.nc: no variable torc.lon (no grid torc in the file; it holds atm, ocn)"}},
      {"grids.nc without a name",
       [](const TempDir& d) {
         write_oasis_trio(d, Synthetic());
         return d / "grids.nc";
       },
       {"grids.nc: not a grid file: looked for grid_center_lat (SCRIP), lon, lat, clo and cla",
        "it holds OASIS grids (atm, ocn): name one as"}},
      {"cf bounds variable missing",
       [](const TempDir& d) {
         NcWriter w(d / "cf.nc");
         w.dim("lon", 3).dim("lat", 2);
         w.var("lon", NC_DOUBLE, {"lon"}, {0, 1, 2}, {{"bounds", "lon_bnds"}});
         w.var("lat", NC_DOUBLE, {"lat"}, {0, 1}, {{"bounds", "lat_bnds"}});
         w.close();
         return d / "cf.nc";
       },
       {"cf.nc: no variable lon_bnds (named by the bounds attribute of lon)"}},
      {"cf bounds of a wrong shape",
       [](const TempDir& d) {
         NcWriter w(d / "cf.nc");
         w.dim("lon", 3).dim("lat", 2).dim("nv", 3);
         w.var("lon", NC_DOUBLE, {"lon"}, {0, 1, 2}, {{"bounds", "lon_bnds"}});
         w.var("lat", NC_DOUBLE, {"lat"}, {0, 1}, {{"bounds", "lat_bnds"}});
         w.var("lon_bnds", NC_DOUBLE, {"lon", "nv"}, std::vector<double>(9, 0));
         w.var("lat_bnds", NC_DOUBLE, {"lat", "nv"}, std::vector<double>(6, 0));
         w.close();
         return d / "cf.nc";
       },
       {"cf.nc: variable lon_bnds has dimensions (lon 3, nv 3), expected (lon 3, 2)"}},
      {"cf without latitude",
       [](const TempDir& d) {
         NcWriter w(d / "cf.nc");
         w.dim("x", 3);
         w.var("longitude", NC_DOUBLE, {"x"}, {0, 1, 2});
         w.close();
         return d / "cf.nc";
       },
       {"cf.nc: no latitude variable: a CF grid has a longitude and a latitude variable"},
       isthmus::remap::read_cf_grid},
      {"not a grid file",
       [](const TempDir& d) {
         NcWriter w(d / "data.nc");
         w.dim("t", 2);
         w.var("sst", NC_DOUBLE, {"t"}, {1, 2});
         w.close();
         return d / "data.nc";
       },
       {"data.nc: not a grid file: looked for grid_center_lat (SCRIP), lon, lat, clo and cla",
        "standard_name longitude/latitude"}},
      {"not a SCRIP file", [](const TempDir& d) { return scrip(d, [](NcWriter&) {}) + "x"; },
       {"cannot open the grid file \"", "scrip.ncx\": "}, isthmus::remap::read_scrip_grid},
      {"no such file", [](const TempDir& d) { return d / "nothere.nc:ocn"; },
       {"nothere.nc:ocn\": no such file (nor FILE:NAME with an existing FILE)"}},
      {"not netCDF",
       [](const TempDir& d) {
         FILE* f = std::fopen((d / "text.nc").c_str(), "w");
         std::fputs("hello\n", f);
         std::fclose(f);
         return d / "text.nc";
       },
       {"cannot open the grid file \"", "text.nc\": "}},
  };
  return cases;
}

TEST(GridBroken, EachFileFailsWithItsMessage) {
  for (const Broken& b : broken_files()) {
    SCOPED_TRACE(b.name);
    TempDir dir;
    const std::string spec = b.make(dir);
    const std::string msg = error_of([&] { b.read(spec); });
    for (const std::string& e : b.expect) EXPECT_NE(msg.find(e), std::string::npos) << "expected: " << e << "\ngot: " << msg;
  }
}

TEST(GridBroken, DegenerateCellsAreNotErrors) {
  TempDir dir;
  Synthetic s;
  const int n = s.size();
  for (int k = 0; k < 4; ++k) s.clo[k * n + 3] = 70, s.cla[k * n + 3] = -30;  // a point, not a cell
  write_oasis_trio(dir, s);
  const Grid g = isthmus::remap::read_grid(dir / "grids.nc:ocn");
  for (int k = 0; k < 4; ++k) {
    EXPECT_DOUBLE_EQ(g.corner_lon[3 * 4 + k], 70 * kDeg);
    EXPECT_DOUBLE_EQ(g.corner_lat[3 * 4 + k], -30 * kDeg);
  }
}

// Read without corners (the methods that need only centres): the same centres, mask, areas and
// shape, no corners; and the corners' errors are not found, since they are not read. The shared
// layout (ORCA2), OASIS's trio, SCRIP and CF's 1-D bounds.
void expect_centres_only(const std::string& spec) {
  SCOPED_TRACE(spec);
  const Grid all = isthmus::remap::read_grid(spec);
  const Grid g = isthmus::remap::read_grid(spec, false);
  EXPECT_GT(all.num_corners, 0);
  EXPECT_EQ(g.num_corners, 0);
  EXPECT_TRUE(g.corner_lon.empty() && g.corner_lat.empty());
  EXPECT_FALSE(g.has_corners());
  EXPECT_EQ(g.name, all.name);
  EXPECT_EQ(g.dims, all.dims);
  EXPECT_EQ(g.lon, all.lon);
  EXPECT_EQ(g.lat, all.lat);
  EXPECT_EQ(g.mask, all.mask);
  EXPECT_EQ(g.area, all.area);
}

TEST(GridRead, WithoutCornersTheCentresAlone) {
  expect_centres_only(kData + "grid_torc.nc");
  TempDir dir;
  write_oasis_trio(dir, Synthetic());
  expect_centres_only(dir / "grids.nc:ocn");
  for (const Broken& b : broken_files()) {
    const std::string name = b.name;
    if (name != "scrip corner NaN" && name != "oasis corner Inf" && name != "cf bounds of a wrong shape")
      continue;
    SCOPED_TRACE(name);
    TempDir d;
    const std::string spec = b.make(d);
    EXPECT_NE(error_of([&] { isthmus::remap::read_grid(spec); }), "");
    const Grid g = isthmus::remap::read_grid(spec, false);
    EXPECT_EQ(g.num_corners, 0);
    EXPECT_GT(g.size(), 0);
  }
}

TEST(GridWrite, InconsistentGridIsAnArgumentError) {
  TempDir dir;
  Grid g = small_grid();
  g.mask.pop_back();
  EXPECT_NE(error_of([&] { isthmus::remap::write_scrip_grid(dir / "x.nc", g); }, ISTHMUS_ERR_ARG)
                .find("mask of 5 for 6 points"),
            std::string::npos);
  g = small_grid();
  g.dims = {4, 2};
  EXPECT_NE(error_of([&] { isthmus::remap::write_scrip_grid(dir / "x.nc", g); }, ISTHMUS_ERR_ARG)
                .find("dims make 8 points, not 6"),
            std::string::npos);
  g = small_grid();
  g.corner_lat.pop_back();
  EXPECT_NE(error_of([&] { isthmus::remap::write_scrip_grid(dir / "x.nc", g); }, ISTHMUS_ERR_ARG)
                .find("corners, expected 6 points x 4"),
            std::string::npos);
}

// ---------------------------------------------------------------------------------------------
// Grids read a range of points at a time (GridSlabs, the streamed source's reader): every format
// read_grid reads, every range (empty, whole, within a row, across rows, the last point), with
// and without corners, gives the whole grid's points of that range; and the header without its
// points.

void expect_slabs_are_slices(const std::string& spec) {
  SCOPED_TRACE(spec);
  const Grid all = isthmus::remap::read_grid(spec);
  const isthmus::remap::GridSlabs slabs(spec);
  const Grid& h = slabs.header();
  EXPECT_EQ(slabs.size(), all.size());
  EXPECT_EQ(h.dims, all.dims);
  EXPECT_EQ(h.name, all.name);
  EXPECT_EQ(h.source, all.source);
  EXPECT_EQ(h.num_corners, all.num_corners);
  EXPECT_EQ(h.size(), 0);
  const int64_t n = all.size(), nx = all.dims.front();
  const std::vector<std::pair<int64_t, int64_t>> ranges = {
      {0, 0}, {0, n}, {1, std::min<int64_t>(n, 3)}, {nx > 1 ? nx - 1 : 0, std::min(n, nx + 1)},
      {std::min(n, nx), std::min(n, 2 * nx)}, {n - 1, n}, {n, n}};
  for (const auto& [b, e] : ranges)
    for (const bool corners : {true, false}) {
      SCOPED_TRACE("points [" + std::to_string(b) + ", " + std::to_string(e) + ")" +
                   (corners ? "" : " without corners"));
      const Grid g = slabs.read(b, e, corners);
      ASSERT_EQ(g.dims, (std::vector<int64_t>{e - b}));
      ASSERT_EQ(g.size(), e - b);
      const auto slice = [b = b, e = e](const auto& v, int per) {
        using V = std::decay_t<decltype(v)>;
        return v.empty() ? V() : V(v.begin() + b * per, v.begin() + e * per);
      };
      EXPECT_EQ(g.lon, slice(all.lon, 1));
      EXPECT_EQ(g.lat, slice(all.lat, 1));
      EXPECT_EQ(g.mask, slice(all.mask, 1));
      EXPECT_EQ(g.area, slice(all.area, 1));
      EXPECT_EQ(g.num_corners, corners ? all.num_corners : 0);
      if (corners) {
        EXPECT_EQ(g.corner_lon, slice(all.corner_lon, all.num_corners));
        EXPECT_EQ(g.corner_lat, slice(all.corner_lat, all.num_corners));
      } else {
        EXPECT_TRUE(g.corner_lon.empty() && g.corner_lat.empty());
      }
    }
  const std::string out = error_of([&] { slabs.read(0, n + 1); }, ISTHMUS_ERR_ARG);
  EXPECT_NE(out.find("points [0, " + std::to_string(n + 1) + ") out of the grid's " + std::to_string(n)),
            std::string::npos) << out;
}

TEST(GridSlabs, EveryFormatReadsItsRangesAsTheWholeGrid) {
  expect_slabs_are_slices(kData + "grid_torc.nc");  // the shared layout: (crn, y, x) corners
  TempDir dir;
  write_oasis_trio(dir, Synthetic());
  expect_slabs_are_slices(dir / "grids.nc:ocn");  // OASIS, with masks.nc and areas.nc
  const Grid small = small_grid();
  isthmus::remap::write_scrip_grid(dir / "small.nc", small);
  expect_slabs_are_slices(dir / "small.nc");  // SCRIP
  {
    NcWriter w(dir / "cf.nc");  // CF, a regular grid: 1-D lon and lat, 1-D bounds
    w.dim("x", 3).dim("y", 4).dim("nv", 2);
    w.var("x", NC_DOUBLE, {"x"}, {0, 120, 240},
          {{"standard_name", "longitude"}, {"units", "degrees_east"}, {"bounds", "x_b"}});
    w.var("y", NC_DOUBLE, {"y"}, {-60, -20, 20, 60},
          {{"standard_name", "latitude"}, {"units", "degrees_north"}, {"bounds", "y_b"}});
    w.var("x_b", NC_DOUBLE, {"x", "nv"}, {-60, 60, 60, 180, 180, 300});
    w.var("y_b", NC_DOUBLE, {"y", "nv"}, {-90, -40, -40, 0, 0, 40, 40, 90});
    w.close();
  }
  expect_slabs_are_slices(dir / "cf.nc");
  {
    NcWriter w(dir / "curv.nc");  // CF, curvilinear: 2-D lon and lat, (y, x, nv) bounds
    w.dim("y", 2).dim("x", 2).dim("nvertex", 4);
    w.var("nav_lon", NC_DOUBLE, {"y", "x"}, {5, 15, 5, 15}, {{"bounds", "bounds_lon"}});
    w.var("nav_lat", NC_DOUBLE, {"y", "x"}, {50, 50, 60, 60}, {{"bounds", "bounds_lat"}});
    w.var("bounds_lon", NC_DOUBLE, {"y", "x", "nvertex"},
          {0, 10, 10, 0, 10, 20, 20, 10, 0, 10, 10, 0, 10, 20, 20, 10});
    w.var("bounds_lat", NC_DOUBLE, {"y", "x", "nvertex"},
          {45, 45, 55, 55, 45, 45, 55, 55, 55, 55, 65, 65, 55, 55, 65, 65});
    w.close();
  }
  expect_slabs_are_slices(dir / "curv.nc");
}

// A slab's bad value is named by its place in the whole grid, as the whole read names it.
TEST(GridSlabs, ABadValueIsNamedByItsPointInTheGrid) {
  TempDir dir;
  Synthetic s;
  s.cla[2 * s.size() + 9] = std::numeric_limits<double>::quiet_NaN();  // corner 2 of point 9
  write_oasis_trio(dir, s);
  const isthmus::remap::GridSlabs slabs(dir / "grids.nc:ocn");
  const std::string whole = error_of([&] { isthmus::remap::read_grid(dir / "grids.nc:ocn"); });
  const std::string slab = error_of([&] { slabs.read(8, 12); });
  EXPECT_NE(whole.find("corner 2 of point 9 (i 1, j 2) is nan"), std::string::npos) << whole;
  EXPECT_EQ(slab, whole);
  EXPECT_EQ(slabs.read(0, 8).size(), 8);  // rows 0 and 1 hold no bad value
}

}  // namespace
