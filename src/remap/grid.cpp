// Grid readers (SCRIP, OASIS's grids.nc/masks.nc/areas.nc, the shared data's grid_*.nc, CF) and
// the SCRIP grid writer. See grid.h.
#include "remap/grid.h"

#include <netcdf.h>
#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <optional>
#include <set>
#include <sstream>

#include "base/error.h"
#include "base/text.h"
#include "remap/nc_file.h"

namespace isthmus::remap {

namespace {

constexpr double kPi = 3.14159265358979323846;
constexpr double kDegree = kPi / 180.0;

bool is_file(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

std::string directory_of(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? "" : path.substr(0, slash + 1);
}

// "dir/grid_torc.nc" -> "grid_torc"
std::string stem_of(const std::string& path) {
  std::string base = path.substr(path.rfind('/') == std::string::npos ? 0 : path.rfind('/') + 1);
  const size_t dot = base.rfind('.');
  return dot == std::string::npos || dot == 0 ? base : base.substr(0, dot);
}

size_t product(const std::vector<size_t>& lengths) {
  size_t n = 1;
  for (size_t l : lengths) n *= l;
  return n;
}

// A variable's name, id and dimensions (netCDF's order: slowest first).
struct Var {
  std::string name;
  int id = -1;
  std::vector<size_t> len;
  std::vector<std::string> dim_names;
  std::vector<int> dim_ids;
  int rank() const { return static_cast<int>(len.size()); }
  size_t count() const { return product(len); }
  // "(y_torc 149, x_torc 182)"
  std::string shape() const {
    std::string s = "(";
    for (size_t i = 0; i < len.size(); ++i)
      s += (i ? ", " : "") + dim_names[i] + " " + std::to_string(len[i]);
    return s + ")";
  }
};

// "182 x 149" (fastest first, as grid_dims and Fortran's arrays)
std::string extent(const std::vector<size_t>& len) {
  if (len.empty()) return "1";
  std::string s;
  for (size_t i = len.size(); i-- > 0;) s += std::to_string(len[i]) + (i ? " x " : "");
  return s;
}

// A grid file being read: its variables described for the readers.
class NcIn {
 public:
  explicit NcIn(const std::string& path) : file_(path, NcFile::Mode::Read, NcFile::named("grid", path)) {}

  const std::string& path() const { return file_.path(); }

  void check(int rc, const std::string& what) const { file_.check(rc, "read " + what); }

  bool has(const std::string& name) const {
    int id = -1;
    return nc_inq_varid(ncid(), name.c_str(), &id) == NC_NOERR;
  }

  std::optional<Var> find(const std::string& name) const {
    int id = -1;
    if (nc_inq_varid(ncid(), name.c_str(), &id) != NC_NOERR) return std::nullopt;
    return describe(id);
  }

  Var var(const std::string& name, const std::string& why = "") const {
    std::optional<Var> v = find(name);
    if (!v) fail(ISTHMUS_ERR_FILE, path(), ": no variable ", name, why);
    return *v;
  }

  Var describe(int id) const {
    Var v;
    v.id = id;
    char name[NC_MAX_NAME + 1] = {0};
    check(nc_inq_varname(ncid(), id, name), "a variable's name");
    v.name = name;
    int ndims = 0;
    check(nc_inq_varndims(ncid(), id, &ndims), "the dimensions of variable " + v.name);
    v.dim_ids.resize(static_cast<size_t>(ndims));
    check(nc_inq_vardimid(ncid(), id, v.dim_ids.data()), "the dimensions of variable " + v.name);
    for (int d : v.dim_ids) {
      char dname[NC_MAX_NAME + 1] = {0};
      size_t l = 0;
      check(nc_inq_dim(ncid(), d, dname, &l), "the dimensions of variable " + v.name);
      v.dim_names.push_back(dname);
      v.len.push_back(l);
    }
    return v;
  }

  std::vector<Var> variables() const {
    int n = 0;
    check(nc_inq_nvars(ncid(), &n), "the number of variables");
    std::vector<Var> out;
    for (int i = 0; i < n; ++i) out.push_back(describe(i));
    return out;
  }

  std::optional<size_t> dimension(const char* name) const {
    int d = -1;
    if (nc_inq_dimid(ncid(), name, &d) != NC_NOERR) return std::nullopt;
    size_t l = 0;
    check(nc_inq_dimlen(ncid(), d, &l), std::string("dimension ") + name);
    return l;
  }

  // A text attribute of a variable (NC_GLOBAL for the file's), "" when absent or not text.
  std::string text(int var, const char* att) const {
    nc_type type = NC_NAT;
    size_t len = 0;
    if (nc_inq_att(ncid(), var, att, &type, &len) != NC_NOERR) return "";
    if (type == NC_CHAR) {
      std::string s(len, '\0');
      check(nc_get_att_text(ncid(), var, att, s.data()), std::string("attribute ") + att);
      while (!s.empty() && s.back() == '\0') s.pop_back();
      return s;
    }
    if (type == NC_STRING && len >= 1) {
      std::vector<char*> v(len, nullptr);
      check(nc_get_att_string(ncid(), var, att, v.data()), std::string("attribute ") + att);
      std::string s = v[0] ? v[0] : "";
      nc_free_string(len, v.data());
      return s;
    }
    return "";
  }

  // A variable whole, or a hyperslab (netCDF's order: slowest first)
  std::vector<double> doubles(const Var& v) const { return doubles(v, std::vector<size_t>(v.len.size()), v.len); }
  std::vector<int> ints(const Var& v) const { return ints(v, std::vector<size_t>(v.len.size()), v.len); }
  std::vector<double> doubles(const Var& v, const std::vector<size_t>& start,
                              const std::vector<size_t>& count) const {
    return values<double>(v, start, count, nc_get_vara_double);
  }
  std::vector<int> ints(const Var& v, const std::vector<size_t>& start,
                        const std::vector<size_t>& count) const {
    return values<int>(v, start, count, nc_get_vara_int);
  }

 private:
  template <typename T, typename Get>
  std::vector<T> values(const Var& v, const std::vector<size_t>& start,
                        const std::vector<size_t>& count, Get get) const {
    std::vector<T> out(product(count));
    if (!out.empty()) check(get(ncid(), v.id, start.data(), count.data(), out.data()), "variable " + v.name);
    return out;
  }

  int ncid() const { return file_.id(); }

  NcFile file_;
};

// Radians per unit of an angle variable, by its `units` (degrees when it has none, as OASIS's
// grids.nc and the shared data's grid_lmdz.nc).
double angle_unit(const NcIn& f, const Var& v) {
  const std::string u = lower(trimmed(f.text(v.id, "units")));
  if (u.empty() || u.rfind("degree", 0) == 0 || u == "deg") return kDegree;
  if (u == "radians" || u == "radian" || u == "rad") return 1.0;
  fail(ISTHMUS_ERR_FILE, f.path(), ": variable ", v.name, ": units \"", u,
       "\" are neither degrees nor radians");
}

// The points a reader is asked for: [begin, end) in the grid's order (clamped to the grid).
struct PointRange {
  size_t begin = 0, end = SIZE_MAX;
};

// Where a variable's corner dimension is: none (centres, masks, areas); first, as OASIS's
// (crn, y, x); last, as SCRIP's (cell, crn) and CF's (y, x, nv).
enum class CornerAxis { None, First, Last };

// The grid's points: the centres' variable and what messages call them, and which of them are
// read: [first, first + count), the whole rows of a 2-D grid that hold the range asked for.
struct Points {
  Var lon;                  // its shape is the grid's
  size_t size = 0;
  std::vector<int64_t> dims;  // fastest first
  size_t first = 0, count = 0;

  // Sets first and count for the range r: whole rows when lon is 2-D.
  void cover(PointRange r) {
    size_t b = std::min(r.begin, size), e = std::min(r.end, size);
    if (e < b) e = b;
    if (lon.rank() == 2 && lon.len[1] > 0) {
      const size_t nx = lon.len[1];
      b = b / nx * nx;
      e = std::min(size, (e + nx - 1) / nx * nx);
    }
    first = b;
    count = e - b;
  }
  // The hyperslab of the points read in variable v: v has the centres' shape (with a corner
  // dimension where axis says), or one dimension of the grid's size.
  void slab(const Var& v, CornerAxis axis, std::vector<size_t>* start, std::vector<size_t>* n) const {
    start->assign(size_t(v.rank()), 0);
    n->assign(v.len.begin(), v.len.end());
    const size_t d = axis == CornerAxis::First ? 1 : 0;  // v's first dimension of points
    const int point_dims = v.rank() - (axis == CornerAxis::None ? 0 : 1);
    if (point_dims == 1) {
      (*start)[d] = first;
      (*n)[d] = count;
    } else if (point_dims == 2 && v.len[d + 1] > 0) {
      (*start)[d] = first / v.len[d + 1];
      (*n)[d] = count / v.len[d + 1];
    }
  }

  std::string where(size_t c) const {
    std::ostringstream os;
    os << "point " << c;
    if (dims.size() == 2) os << " (i " << c % dims[0] << ", j " << c / dims[0] << ")";
    return os.str();
  }
};

void check_finite(const NcIn& f, const Var& v, const Points& p, const std::vector<double>& x,
                  int num_corners) {
  for (size_t i = 0; i < x.size(); ++i)
    if (!std::isfinite(x[i])) {
      const size_t c = p.first + (num_corners ? i / size_t(num_corners) : i);
      std::ostringstream os;
      if (num_corners) os << "corner " << i % size_t(num_corners) << " of ";
      os << p.where(c) << " is " << x[i];
      fail(ISTHMUS_ERR_FILE, f.path(), ": variable ", v.name, ": ", os.str());
    }
}

// Centres lon, lat of the same shape (rank 1 or 2 unless `rank` says), in radians: those of
// the points covering r (Points::cover).
Points read_centres(const NcIn& f, const std::string& lon_name, const std::string& lat_name,
                    Grid& g, PointRange r, int rank = 0) {
  Points p;
  p.lon = f.var(lon_name);
  const Var lat = f.var(lat_name);
  if (rank ? p.lon.rank() != rank : p.lon.rank() < 1 || p.lon.rank() > 2)
    fail(ISTHMUS_ERR_FILE, f.path(), ": variable ", lon_name, " has dimensions ", p.lon.shape(),
         ", expected ", rank ? std::to_string(rank) : std::string("1 or 2"), " dimension",
         rank == 1 ? "" : "s");
  if (lat.len != p.lon.len)
    fail(ISTHMUS_ERR_FILE, f.path(), ": variable ", lat_name, " has dimensions ", lat.shape(),
         " but ", lon_name, " has ", p.lon.shape(), ": lon and lat must have the same shape");
  p.size = p.lon.count();
  if (p.size == 0) fail(ISTHMUS_ERR_FILE, f.path(), ": variable ", lon_name, " has no points");
  for (size_t i = p.lon.len.size(); i-- > 0;) p.dims.push_back(static_cast<int64_t>(p.lon.len[i]));
  g.dims = p.dims;
  p.cover(r);
  std::vector<size_t> start, count;
  p.slab(p.lon, CornerAxis::None, &start, &count);
  g.lon = f.doubles(p.lon, start, count);
  g.lat = f.doubles(lat, start, count);
  const double ulon = angle_unit(f, p.lon), ulat = angle_unit(f, lat);
  check_finite(f, p.lon, p, g.lon, 0);
  check_finite(f, lat, p, g.lat, 0);
  for (double& x : g.lon) x *= ulon;
  for (double& x : g.lat) x *= ulat;
  return p;
}

// Corners clo, cla: the centres' shape with a corner dimension first or last. Read as they are
// (degenerate cells included), transposed to cell-major.
void read_corners(const NcIn& f, const std::string& clo_name, const std::string& cla_name,
                  CornerAxis axis, const Points& p, Grid& g, double default_unit = 0) {
  const Var clo = f.var(clo_name), cla = f.var(cla_name);
  const int want = p.lon.rank() + 1;
  const std::string layout = axis == CornerAxis::First ? "the corners first, then the dimensions of "
                                                       : "the dimensions of ";
  const std::string tail = axis == CornerAxis::First ? "" : ", then the corners";
  for (const Var* v : {&clo, &cla}) {
    if (v->rank() != want)
      fail(ISTHMUS_ERR_FILE, f.path(), ": variable ", v->name, " has ", v->rank(), " dimension",
           v->rank() == 1 ? "" : "s", " ", v->shape(), ", expected ", want, ": ", layout,
           p.lon.name, " ", p.lon.shape(), tail);
    std::vector<size_t> cells(v->len.begin(), v->len.end());
    cells.erase(axis == CornerAxis::First ? cells.begin() : cells.end() - 1);
    if (cells != p.lon.len)
      fail(ISTHMUS_ERR_FILE, f.path(), ": variable ", v->name, ": ", p.lon.name, " has ",
           extent(p.lon.len), " points ", p.lon.shape(), " but ", v->name, " has ", extent(cells),
           " cells ", v->shape(), " (expected ", layout, p.lon.name, tail, ")");
  }
  if (cla.len != clo.len)
    fail(ISTHMUS_ERR_FILE, f.path(), ": variable ", cla.name, " has dimensions ", cla.shape(),
         " but ", clo.name, " has ", clo.shape(), ": both corner variables must have the same shape");
  const size_t nc = axis == CornerAxis::First ? clo.len.front() : clo.len.back();
  if (nc == 0) fail(ISTHMUS_ERR_FILE, f.path(), ": variable ", clo.name, " has 0 corners per cell");
  if (nc > 1000)
    fail(ISTHMUS_ERR_FILE, f.path(), ": variable ", clo.name, " has ", nc, " corners per cell");
  const size_t n = p.count;
  g.num_corners = static_cast<int>(nc);
  std::vector<size_t> start, count;
  p.slab(clo, axis, &start, &count);
  for (int which = 0; which < 2; ++which) {
    const Var& v = which ? cla : clo;
    std::vector<double> in = f.doubles(v, start, count);
    std::vector<double>& out = which ? g.corner_lat : g.corner_lon;
    if (axis == CornerAxis::Last) {
      out = std::move(in);
    } else {
      out.resize(n * nc);
      for (size_t k = 0; k < nc; ++k)
        for (size_t c = 0; c < n; ++c) out[c * nc + k] = in[k * n + c];
    }
    check_finite(f, v, p, out, g.num_corners);
    const double unit = default_unit && f.text(v.id, "units").empty() ? default_unit : angle_unit(f, v);
    for (double& x : out) x *= unit;
  }
}

// A per-point variable (mask, area): the grid's shape, or one dimension of the grid's size (as
// OASIS's readers accept).
void check_per_point(const NcIn& f, const Var& v, const Points& p, const std::string& grid_file,
                     const char* what) {
  const bool same = v.len == p.lon.len || (v.rank() == 1 && v.len[0] == p.size);
  if (!same)
    fail(ISTHMUS_ERR_FILE, f.path(), ": variable ", v.name, " has dimensions ", v.shape(),
         v.rank() > 1 ? " (" + extent(v.len) + ")" : std::string(), ", the grid has ",
         extent(p.lon.len), " points (", grid_file,
         p.lon.name, " ", p.lon.shape(), "): ", what, " must have the grid's shape");
}

// active_value: the value of an active point when the file's convention is a single value (OASIS:
// 0); -1 for SCRIP's (nonzero = active).
void read_mask(const NcIn& f, const Var& v, const Points& p, const std::string& grid_file,
               int active_value, Grid& g) {
  check_per_point(f, v, p, grid_file, "the mask");
  std::vector<size_t> start, count;
  p.slab(v, CornerAxis::None, &start, &count);
  const std::vector<int> m = f.ints(v, start, count);
  g.mask.resize(m.size());
  for (size_t i = 0; i < m.size(); ++i)
    g.mask[i] = active_value < 0 ? m[i] != 0 : m[i] == active_value;
}

void read_area(const NcIn& f, const Var& v, const Points& p, const std::string& grid_file,
               const char* default_units, Grid& g) {
  check_per_point(f, v, p, grid_file, "the areas");
  std::vector<size_t> start, count;
  p.slab(v, CornerAxis::None, &start, &count);
  g.area = f.doubles(v, start, count);
  g.area_units = trimmed(f.text(v.id, "units"));
  if (g.area_units.empty()) g.area_units = default_units;
}

// Keeps the points of r (within the grid) of g, which holds those p read (Points::cover).
void keep(Grid& g, const Points& p, PointRange r) {
  const size_t b = std::min(std::max(r.begin, p.first), p.first + p.count) - p.first;
  const size_t e = std::max(std::min(r.end, p.first + p.count), p.first) - p.first;
  if (b == 0 && e == p.count) return;
  auto cut = [b, e](auto& v, size_t per) {
    if (v.empty()) return;
    v.erase(v.begin() + long((e > b ? e : b) * per), v.end());
    v.erase(v.begin(), v.begin() + long(b * per));
  };
  cut(g.lon, 1);
  cut(g.lat, 1);
  cut(g.corner_lon, size_t(g.num_corners));
  cut(g.corner_lat, size_t(g.num_corners));
  cut(g.mask, 1);
  cut(g.area, 1);
}

Grid scrip_from(const NcIn& f, PointRange r, bool with_corners = true) {
  Grid g;
  g.name = stem_of(f.path());
  g.source = f.path();
  const std::optional<size_t> size = f.dimension("grid_size");
  if (!size) fail(ISTHMUS_ERR_FILE, f.path(), ": no dimension grid_size (a SCRIP grid file has one)");
  Points p = read_centres(f, "grid_center_lon", "grid_center_lat", g, r, 1);
  if (p.lon.len[0] != *size)
    fail(ISTHMUS_ERR_FILE, f.path(), ": variable grid_center_lon has dimensions ", p.lon.shape(),
         ", expected (grid_size ", *size, ")");
  if (std::optional<Var> d = f.find("grid_dims")) {
    if (d->rank() != 1 || d->len[0] < 1 || d->len[0] > 8)
      fail(ISTHMUS_ERR_FILE, f.path(), ": variable grid_dims has dimensions ", d->shape(),
           ", expected (grid_rank) with grid_rank 1 to 8");
    const std::vector<int> dims = f.ints(*d);
    int64_t product = 1;
    for (int x : dims) {
      if (x < 1) fail(ISTHMUS_ERR_FILE, f.path(), ": variable grid_dims holds ", x, ", expected positive sizes");
      product *= x;
    }
    if (product != static_cast<int64_t>(*size)) {
      std::ostringstream os;
      for (size_t i = 0; i < dims.size(); ++i) os << (i ? " x " : "") << dims[i];
      fail(ISTHMUS_ERR_FILE, f.path(), ": variable grid_dims is ", os.str(), " = ", product,
           " points, but grid_size is ", *size);
    }
    g.dims.assign(dims.begin(), dims.end());
    p.dims = g.dims;
  }
  const bool has_clo = f.has("grid_corner_lon"), has_cla = f.has("grid_corner_lat");
  if (with_corners && (has_clo || has_cla)) {
    if (!has_clo || !has_cla)
      fail(ISTHMUS_ERR_FILE, f.path(), ": no variable ", has_clo ? "grid_corner_lat" : "grid_corner_lon",
           " (", has_clo ? "grid_corner_lon" : "grid_corner_lat", " is there: corners need both)");
    read_corners(f, "grid_corner_lon", "grid_corner_lat", CornerAxis::Last, p, g);
  }
  if (std::optional<Var> m = f.find("grid_imask")) read_mask(f, *m, p, "", -1, g);
  if (std::optional<Var> a = f.find("grid_area")) read_area(f, *a, p, "", "steradians", g);
  keep(g, p, r);
  return g;
}

// The shared data's grid_*.nc: lon, lat (y, x); clo, cla (crn, y, x); srf; imask 1 = active.
Grid shared_layout_from(const NcIn& f, PointRange r, bool with_corners = true) {
  Grid g;
  g.name = stem_of(f.path());
  g.source = f.path();
  const Points p = read_centres(f, "lon", "lat", g, r);
  if (with_corners && (f.has("clo") || f.has("cla")))
    read_corners(f, "clo", "cla", CornerAxis::First, p, g);
  if (std::optional<Var> m = f.find("imask")) read_mask(f, *m, p, "", -1, g);
  if (std::optional<Var> a = f.find("srf")) read_area(f, *a, p, "", "m2", g);
  keep(g, p, r);
  return g;
}

// OASIS's grid names in a grids.nc: the prefixes of its <name>.lon variables.
std::string oasis_names(const NcIn& f) {
  std::string s;
  for (const Var& v : f.variables())
    if (v.name.size() > 4 && v.name.compare(v.name.size() - 4, 4, ".lon") == 0)
      s += (s.empty() ? "" : ", ") + v.name.substr(0, v.name.size() - 4);
  return s;
}

// CF: the longitude (or latitude) variable, the best by standard_name, then units, then name.
std::optional<Var> cf_coordinate(const NcIn& f, const std::vector<Var>& vars,
                                 const std::set<std::string>& bounds, bool longitude) {
  const std::string standard = longitude ? "longitude" : "latitude";
  const std::set<std::string> units =
      longitude ? std::set<std::string>{"degrees_east", "degree_east", "degree_e", "degrees_e",
                                        "degreee", "degreese"}
                : std::set<std::string>{"degrees_north", "degree_north", "degree_n", "degrees_n",
                                        "degreen", "degreesn"};
  const std::set<std::string> names =
      longitude ? std::set<std::string>{"lon", "longitude", "nav_lon"}
                : std::set<std::string>{"lat", "latitude", "nav_lat"};
  std::optional<Var> best;
  int best_score = 0;
  for (const Var& v : vars) {
    if (bounds.count(v.name) || v.rank() < 1 || v.rank() > 2) continue;
    int score = 0;
    if (lower(trimmed(f.text(v.id, "standard_name"))) == standard) score = 3;
    else if (units.count(lower(trimmed(f.text(v.id, "units"))))) score = 2;
    else if (names.count(lower(v.name))) score = 1;
    if (score > best_score) best = v, best_score = score;
  }
  return best;
}

const char* kCfLooked =
    "a longitude and a latitude variable (standard_name longitude/latitude, units "
    "degrees_east/degrees_north, or a name lon/lat, longitude/latitude, nav_lon/nav_lat)";

Grid cf_from(const NcIn& f, PointRange r, bool with_corners = true) {
  Grid g;
  g.name = stem_of(f.path());
  g.source = f.path();
  const std::vector<Var> vars = f.variables();
  std::set<std::string> bounds;
  for (const Var& v : vars) {
    const std::string b = trimmed(f.text(v.id, "bounds"));
    if (!b.empty()) bounds.insert(b);
  }
  const std::optional<Var> lon = cf_coordinate(f, vars, bounds, true);
  const std::optional<Var> lat = cf_coordinate(f, vars, bounds, false);
  if (!lon || !lat)
    fail(ISTHMUS_ERR_FILE, f.path(), ": no ", lon ? "latitude" : "longitude", " variable: a CF grid has ",
         kCfLooked);
  const std::string lon_b = trimmed(f.text(lon->id, "bounds")), lat_b = trimmed(f.text(lat->id, "bounds"));
  if (lon_b.empty() != lat_b.empty())
    fail(ISTHMUS_ERR_FILE, f.path(), ": variable ", lon_b.empty() ? lon->name : lat->name,
         " has no bounds attribute but ", lon_b.empty() ? lat->name : lon->name,
         " has one: a grid's cells need both");
  const bool regular = lon->rank() == 1 && lat->rank() == 1 && lon->dim_ids != lat->dim_ids;
  if (!regular) {
    if (lon->rank() != lat->rank())
      fail(ISTHMUS_ERR_FILE, f.path(), ": variable ", lat->name, " has dimensions ", lat->shape(),
           " but ", lon->name, " has ", lon->shape(), ": lon and lat must have the same shape");
    const Points p = read_centres(f, lon->name, lat->name, g, r);
    if (with_corners && !lon_b.empty()) {
      const double unit = angle_unit(f, *lon);
      if (unit != angle_unit(f, *lat))
        fail(ISTHMUS_ERR_FILE, f.path(), ": variables ", lon->name, " and ", lat->name,
             " have different units");
      read_corners(f, lon_b, lat_b, CornerAxis::Last, p, g, unit);
    }
    keep(g, p, r);
    return g;
  }
  // A regular lon-lat grid: lon(nx), lat(ny), bounds (nx, 2) and (ny, 2).
  const size_t nx = lon->len[0], ny = lat->len[0];
  if (nx == 0 || ny == 0) fail(ISTHMUS_ERR_FILE, f.path(), ": the grid has no points (", nx, " x ", ny, ")");
  const double ulon = angle_unit(f, *lon), ulat = angle_unit(f, *lat);
  const std::vector<double> x = f.doubles(*lon), y = f.doubles(*lat);
  Points p;
  p.lon = *lon;
  p.lon.len = {ny, nx};
  p.lon.dim_names = {lat->dim_names[0], lon->dim_names[0]};
  p.size = nx * ny;
  p.dims = {static_cast<int64_t>(nx), static_cast<int64_t>(ny)};
  check_finite(f, *lon, p, x, 0);
  check_finite(f, *lat, p, y, 0);
  g.dims = p.dims;
  p.cover(r);  // rows [j0, j1)
  const size_t j0 = p.first / nx, j1 = j0 + p.count / nx;
  g.lon.resize(p.count);
  g.lat.resize(p.count);
  for (size_t j = j0; j < j1; ++j)
    for (size_t i = 0; i < nx; ++i) {
      g.lon[(j - j0) * nx + i] = x[i] * ulon;
      g.lat[(j - j0) * nx + i] = y[j] * ulat;
    }
  if (lon_b.empty() || !with_corners) {
    keep(g, p, r);
    return g;
  }
  std::vector<double> bx, by;
  for (int which = 0; which < 2; ++which) {
    const Var& c = which ? *lat : *lon;
    const Var b = f.var(which ? lat_b : lon_b, " (named by the bounds attribute of " + c.name + ")");
    if (b.rank() != 2 || b.len[0] != c.len[0] || b.len[1] != 2)
      fail(ISTHMUS_ERR_FILE, f.path(), ": variable ", b.name, " has dimensions ", b.shape(),
           ", expected (", c.dim_names[0], " ", c.len[0], ", 2): the bounds of ", c.name, " ",
           c.shape());
    std::vector<double> v = f.doubles(b);
    for (size_t i = 0; i < v.size(); ++i)
      if (!std::isfinite(v[i]))
        fail(ISTHMUS_ERR_FILE, f.path(), ": variable ", b.name, ": bound ", i % 2, " of ",
             c.name, " ", i / 2, " is ", v[i]);
    const double unit = f.text(b.id, "units").empty() ? (which ? ulat : ulon) : angle_unit(f, b);
    for (double& t : v) t *= unit;
    (which ? by : bx) = std::move(v);
  }
  // counter-clockwise: west to east, then south to north
  for (size_t i = 0; i < nx; ++i)
    if (bx[2 * i + 1] < bx[2 * i] && bx[2 * i] - bx[2 * i + 1] < kPi) std::swap(bx[2 * i], bx[2 * i + 1]);
  for (size_t j = 0; j < ny; ++j)
    if (by[2 * j + 1] < by[2 * j]) std::swap(by[2 * j], by[2 * j + 1]);
  g.num_corners = 4;
  g.corner_lon.resize(4 * p.count);
  g.corner_lat.resize(4 * p.count);
  for (size_t j = j0; j < j1; ++j)
    for (size_t i = 0; i < nx; ++i) {
      double* lo = &g.corner_lon[4 * ((j - j0) * nx + i)];
      double* la = &g.corner_lat[4 * ((j - j0) * nx + i)];
      lo[0] = bx[2 * i], lo[1] = bx[2 * i + 1], lo[2] = bx[2 * i + 1], lo[3] = bx[2 * i];
      la[0] = by[2 * j], la[1] = by[2 * j], la[2] = by[2 * j + 1], la[3] = by[2 * j + 1];
    }
  keep(g, p, r);
  return g;
}

bool is_shared_layout(const NcIn& f) {
  return f.has("lon") && f.has("lat") && f.has("clo") && f.has("cla");
}

Grid oasis_from(const std::string& grids_nc, const std::string& name, PointRange r,
                bool with_corners) {
  if (name.empty()) fail(ISTHMUS_ERR_ARG, grids_nc, ": the grid name is empty");
  Grid g;
  g.name = name;
  g.source = grids_nc + ":" + name;
  NcIn f(grids_nc);
  if (!f.has(name + ".lon")) {
    const std::string names = oasis_names(f);
    fail(ISTHMUS_ERR_FILE, grids_nc, ": no variable ", name, ".lon (no grid ", name, " in the file",
         names.empty() ? std::string(", which holds none") : "; it holds " + names, ")");
  }
  const Points p = read_centres(f, name + ".lon", name + ".lat", g, r);
  const bool has_clo = f.has(name + ".clo"), has_cla = f.has(name + ".cla");
  if (has_clo != has_cla)
    fail(ISTHMUS_ERR_FILE, grids_nc, ": no variable ", name, has_clo ? ".cla" : ".clo", " (", name,
         has_clo ? ".clo" : ".cla", " is there: corners need both)");
  if (has_clo && with_corners) read_corners(f, name + ".clo", name + ".cla", CornerAxis::First, p, g);
  const std::string dir = directory_of(grids_nc);
  const std::string grid_file = grids_nc + "'s ";
  // masks.nc and areas.nc are optional, and so are this grid's variables in them
  if (is_file(dir + "masks.nc")) {
    NcIn m(dir + "masks.nc");
    if (std::optional<Var> v = m.find(name + ".msk")) read_mask(m, *v, p, grid_file, 0, g);
  }
  if (is_file(dir + "areas.nc")) {
    NcIn a(dir + "areas.nc");
    if (std::optional<Var> v = a.find(name + ".srf")) read_area(a, *v, p, grid_file, "m2", g);
  }
  keep(g, p, r);
  return g;
}

// read_grid's formats, the points of r only.
Grid read_points(const std::string& spec, PointRange r, bool with_corners) {
  const size_t colon = spec.rfind(':');
  if (colon != std::string::npos && colon + 1 < spec.size()) {
    const std::string name = spec.substr(colon + 1), path = spec.substr(0, colon);
    if (name.find('/') == std::string::npos && is_file(path)) return oasis_from(path, name, r, with_corners);
  }
  if (!is_file(spec))
    fail(ISTHMUS_ERR_FILE, "grid \"", spec, "\": no such file",
         colon == std::string::npos ? "" : " (nor FILE:NAME with an existing FILE)");
  NcIn f(spec);
  if (f.has("grid_center_lat")) return scrip_from(f, r, with_corners);
  if (is_shared_layout(f)) return shared_layout_from(f, r, with_corners);
  const std::vector<Var> vars = f.variables();
  std::set<std::string> bounds;
  for (const Var& v : vars) {
    const std::string b = trimmed(f.text(v.id, "bounds"));
    if (!b.empty()) bounds.insert(b);
  }
  if (cf_coordinate(f, vars, bounds, true) && cf_coordinate(f, vars, bounds, false))
    return cf_from(f, r, with_corners);
  const std::string names = oasis_names(f);
  fail(ISTHMUS_ERR_FILE, spec, ": not a grid file: looked for grid_center_lat (SCRIP), lon, lat, "
       "clo and cla (OASIS's grid layout), and ", kCfLooked, " (CF)",
       names.empty() ? std::string() : "; it holds OASIS grids (" + names + "): name one as " + spec + ":NAME");
}

}  // namespace

Grid read_scrip_grid(const std::string& path) {
  NcIn f(path);
  if (f.has("grid_center_lat")) return scrip_from(f, PointRange{});
  if (is_shared_layout(f)) return shared_layout_from(f, PointRange{});
  fail(ISTHMUS_ERR_FILE, path, ": no variable grid_center_lat (a SCRIP grid file) nor lon, lat, clo "
       "and cla (OASIS's grid layout)");
}

Grid read_oasis_grid(const std::string& grids_nc, const std::string& name, bool with_corners) {
  return oasis_from(grids_nc, name, PointRange{}, with_corners);
}

Grid read_cf_grid(const std::string& path) {
  NcIn f(path);
  return cf_from(f, PointRange{});
}

Grid read_grid(const std::string& spec, bool with_corners) {
  return read_points(spec, PointRange{}, with_corners);
}

void write_scrip_grid(const std::string& path, const Grid& g) {
  const size_t n = g.lon.size();
  const std::string what = "grid " + g.name + " (" + g.source + ")";
  if (n == 0) fail(ISTHMUS_ERR_ARG, "write_scrip_grid: ", what, " has no points");
  if (g.lat.size() != n)
    fail(ISTHMUS_ERR_ARG, "write_scrip_grid: ", what, ": ", n, " longitudes but ", g.lat.size(), " latitudes");
  const size_t nc = static_cast<size_t>(std::max(g.num_corners, 0));
  if (g.corner_lon.size() != n * nc || g.corner_lat.size() != n * nc)
    fail(ISTHMUS_ERR_ARG, "write_scrip_grid: ", what, ": ", g.corner_lon.size(), " and ",
         g.corner_lat.size(), " corners, expected ", n, " points x ", nc);
  if (!g.mask.empty() && g.mask.size() != n)
    fail(ISTHMUS_ERR_ARG, "write_scrip_grid: ", what, ": mask of ", g.mask.size(), " for ", n, " points");
  if (!g.area.empty() && g.area.size() != n)
    fail(ISTHMUS_ERR_ARG, "write_scrip_grid: ", what, ": ", g.area.size(), " areas for ", n, " points");
  std::vector<int> dims;
  int64_t product = 1;
  for (int64_t d : g.dims) dims.push_back(static_cast<int>(d)), product *= d;
  if (dims.empty()) dims.push_back(static_cast<int>(n)), product = static_cast<int64_t>(n);
  if (product != static_cast<int64_t>(n))
    fail(ISTHMUS_ERR_ARG, "write_scrip_grid: ", what, ": dims make ", product, " points, not ", n);

  NcFile f(path, NcFile::Mode::Create, NcFile::named("grid", path));
  auto dim = [&f](const char* name, size_t len) {
    int d = -1;
    f.check(nc_def_dim(f.id(), name, len, &d), std::string("define dimension ") + name);
    return d;
  };
  auto var = [&f](const char* name, nc_type type, std::vector<int> dims, const std::string& units) {
    int v = -1;
    f.check(nc_def_var(f.id(), name, type, static_cast<int>(dims.size()), dims.data(), &v),
            std::string("define variable ") + name);
    if (!units.empty())
      f.check(nc_put_att_text(f.id(), v, "units", units.size(), units.c_str()),
              std::string("write the units of ") + name);
    return v;
  };
  const int size_dim = dim("grid_size", n);
  const int rank_dim = dim("grid_rank", dims.size());
  const int corner_dim = nc ? dim("grid_corners", nc) : -1;
  const int v_dims = var("grid_dims", NC_INT, {rank_dim}, "");
  const int v_lat = var("grid_center_lat", NC_DOUBLE, {size_dim}, "degrees");
  const int v_lon = var("grid_center_lon", NC_DOUBLE, {size_dim}, "degrees");
  const int v_mask = var("grid_imask", NC_INT, {size_dim}, "unitless");
  const int v_clat = nc ? var("grid_corner_lat", NC_DOUBLE, {size_dim, corner_dim}, "degrees") : -1;
  const int v_clon = nc ? var("grid_corner_lon", NC_DOUBLE, {size_dim, corner_dim}, "degrees") : -1;
  const int v_area = g.area.empty() ? -1 : var("grid_area", NC_DOUBLE, {size_dim}, g.area_units);
  if (!g.name.empty())
    f.check(nc_put_att_text(f.id(), NC_GLOBAL, "title", g.name.size(), g.name.c_str()), "write the title");
  f.check(nc_enddef(f.id()), "end the definitions");

  auto degrees = [](const std::vector<double>& r) {
    std::vector<double> d(r.size());
    for (size_t i = 0; i < r.size(); ++i) d[i] = r[i] / kDegree;
    return d;
  };
  f.check(nc_put_var_int(f.id(), v_dims, dims.data()), "write grid_dims");
  f.check(nc_put_var_double(f.id(), v_lat, degrees(g.lat).data()), "write grid_center_lat");
  f.check(nc_put_var_double(f.id(), v_lon, degrees(g.lon).data()), "write grid_center_lon");
  std::vector<int> mask(n, 1);  // SCRIP's readers want grid_imask: all active without a mask
  for (size_t i = 0; i < g.mask.size(); ++i) mask[i] = g.mask[i] ? 1 : 0;
  f.check(nc_put_var_int(f.id(), v_mask, mask.data()), "write grid_imask");
  if (nc) {
    f.check(nc_put_var_double(f.id(), v_clat, degrees(g.corner_lat).data()), "write grid_corner_lat");
    f.check(nc_put_var_double(f.id(), v_clon, degrees(g.corner_lon).data()), "write grid_corner_lon");
  }
  if (v_area >= 0) f.check(nc_put_var_double(f.id(), v_area, g.area.data()), "write grid_area");
  f.close();
}

GridSlabs::GridSlabs(const std::string& spec) : spec_(spec) {
  // The header through the readers' own checks of names, shapes and units: a read of no point
  header_ = read_points(spec, PointRange{0, 0}, true);
  size_ = 1;
  for (int64_t d : header_.dims) size_ *= d;
}

Grid GridSlabs::read(int64_t begin, int64_t end, bool with_corners) const {
  if (begin < 0 || end > size_ || begin > end)
    fail(ISTHMUS_ERR_ARG, "grid \"", spec_, "\": points [", begin, ", ", end, ") out of the grid's ",
         size_);
  Grid g = read_points(spec_, PointRange{size_t(begin), size_t(end)}, with_corners);
  g.dims = {end - begin};
  return g;
}

}  // namespace isthmus::remap
