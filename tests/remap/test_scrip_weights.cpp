// The SCRIP weights reader: on the real ORCA2 -> LMDZ files (the union of the slabs is the file,
// compared with a serial netcdf-c read), and on a table of broken files written here, each with
// its exact code and message on every rank (docs/errors.md).
#include <gtest/gtest.h>
#include <mpi.h>
#include <netcdf.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <limits>
#include <numeric>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "mpi_test_util.h"
#include "remap/scrip_weights.h"

using isthmus::Agreement;
using isthmus::Error;
using isthmus::remap::LinkSlab;
using isthmus::remap::read_scrip_weights;
using isthmus::remap::read_scrip_weights_chunked;
using isthmus::remap::slab_begin;
using isthmus::remap::WeightsExpect;
using isthmus::remap::WeightsInfo;
using isthmus::remap::write_scrip_weights;

namespace {

const std::string kData = std::string(ISTHMUS_TEST_DATA) + "/orca2-lmdz/";

// The whole file read serially with netcdf-c, without the reader.
struct SerialLinks {
  std::vector<int64_t> src, dst;  // 0-based
  std::vector<double> weights;
};

void nc_ok(int rc, const char* what) {
  if (rc != NC_NOERR) {
    ADD_FAILURE() << what << ": " << nc_strerror(rc);
    throw std::runtime_error(what);
  }
}

SerialLinks serial_read(const std::string& path) {
  SerialLinks s;
  int id = -1, dim = -1, var = -1;
  size_t links = 0, nw = 0;
  nc_ok(nc_open(path.c_str(), NC_NOWRITE, &id), "open");
  nc_ok(nc_inq_dimid(id, "num_links", &dim), "num_links");
  nc_ok(nc_inq_dimlen(id, dim, &links), "num_links");
  nc_ok(nc_inq_dimid(id, "num_wgts", &dim), "num_wgts");
  nc_ok(nc_inq_dimlen(id, dim, &nw), "num_wgts");
  std::vector<long long> a(links);
  nc_ok(nc_inq_varid(id, "src_address", &var), "src_address");
  nc_ok(nc_get_var_longlong(id, var, a.data()), "src_address");
  for (long long v : a) s.src.push_back(v - 1);
  nc_ok(nc_inq_varid(id, "dst_address", &var), "dst_address");
  nc_ok(nc_get_var_longlong(id, var, a.data()), "dst_address");
  for (long long v : a) s.dst.push_back(v - 1);
  s.weights.resize(links * nw);
  nc_ok(nc_inq_varid(id, "remap_matrix", &var), "remap_matrix");
  nc_ok(nc_get_var_double(id, var, s.weights.data()), "remap_matrix");
  nc_close(id);
  return s;
}

// The links of a serial read without its null links (an address 0, all weights 0).
SerialLinks without_null_links(const SerialLinks& all, int nw, int64_t* null_links = nullptr) {
  SerialLinks kept;
  int64_t nulls = 0;
  for (size_t l = 0; l < all.src.size(); ++l) {
    bool zero = true;
    for (int k = 0; k < nw; ++k) zero = zero && all.weights[l * size_t(nw) + size_t(k)] == 0.0;
    if (zero && (all.src[l] == -1 || all.dst[l] == -1)) {
      ++nulls;
      continue;
    }
    kept.src.push_back(all.src[l]);
    kept.dst.push_back(all.dst[l]);
    for (int k = 0; k < nw; ++k) kept.weights.push_back(all.weights[l * size_t(nw) + size_t(k)]);
  }
  if (null_links) *null_links = nulls;
  return kept;
}

// Every rank's slab gathered on every rank, after checking that the slabs' ranges are
// contiguous, in rank order, and each within 1 of L/R on the R = `readers` ranks reader_index
// names (0: as many as read with min_slab_links 1, min(P, L)), the others empty. Returns the links of all slabs in rank order; *null_links: the links left
// out, over all slabs.
SerialLinks gather_slabs(const LinkSlab& slab, const WeightsInfo& info,
                         int64_t* null_links = nullptr, int readers = 0) {
  const int ranks = world_size();
  const int p = readers > 0 ? readers : isthmus::remap::readers_of(info.num_links, ranks, 1);
  const int64_t mine[4] = {slab.first_link, slab.end_link, slab.size(), slab.null_links};
  std::vector<int64_t> all(4 * size_t(ranks));
  MPI_Allgather(mine, 4, MPI_INT64_T, all.data(), 4, MPI_INT64_T, MPI_COMM_WORLD);
  int64_t next = 0, kept = 0, nulls = 0;
  std::vector<int> counts(static_cast<size_t>(ranks)), displs(static_cast<size_t>(ranks));
  for (int k = 0; k < ranks; ++k) {
    const int64_t first = all[4 * size_t(k)], end = all[4 * size_t(k) + 1];
    const int64_t n = all[4 * size_t(k) + 2], nn = all[4 * size_t(k) + 3];
    if (isthmus::remap::reader_index(k, ranks, p) < 0) {  // not a reader
      EXPECT_EQ(n + nn, 0) << "rank " << k << " reads no link";
      displs[size_t(k)] = static_cast<int>(kept);
      continue;
    }
    EXPECT_EQ(first, next) << "slab of rank " << k;
    EXPECT_LE(std::llabs((end - first) * p - info.num_links), p - 1)
        << "slab of rank " << k << ": " << end - first << " links";
    EXPECT_EQ(first, slab_begin(info.num_links, isthmus::remap::reader_index(k, ranks, p), p));
    EXPECT_EQ(n + nn, end - first) << "slab of rank " << k;
    next = end;
    counts[size_t(k)] = static_cast<int>(n);
    displs[size_t(k)] = static_cast<int>(kept);
    kept += n;
    nulls += nn;
  }
  EXPECT_EQ(next, info.num_links);
  EXPECT_EQ(slab.weights.size(), size_t(slab.size()) * size_t(info.num_wgts));
  if (null_links) *null_links = nulls;
  SerialLinks g;
  g.src.resize(size_t(kept));
  g.dst.resize(size_t(kept));
  g.weights.resize(size_t(kept) * size_t(info.num_wgts));
  MPI_Allgatherv(slab.src.data(), static_cast<int>(slab.size()), MPI_INT64_T, g.src.data(),
                 counts.data(), displs.data(), MPI_INT64_T, MPI_COMM_WORLD);
  MPI_Allgatherv(slab.dst.data(), static_cast<int>(slab.size()), MPI_INT64_T, g.dst.data(),
                 counts.data(), displs.data(), MPI_INT64_T, MPI_COMM_WORLD);
  for (int k = 0; k < ranks; ++k) {
    counts[size_t(k)] *= info.num_wgts;
    displs[size_t(k)] *= info.num_wgts;
  }
  MPI_Allgatherv(slab.weights.data(), static_cast<int>(slab.weights.size()), MPI_DOUBLE,
                 g.weights.data(), counts.data(), displs.data(), MPI_DOUBLE, MPI_COMM_WORLD);
  return g;
}

void expect_same_links(const SerialLinks& got, const SerialLinks& want) {
  EXPECT_EQ(got.src, want.src);
  EXPECT_EQ(got.dst, want.dst);
  ASSERT_EQ(got.weights.size(), want.weights.size());
  for (size_t i = 0; i < got.weights.size(); ++i)
    ASSERT_EQ(got.weights[i], want.weights[i]) << "weight " << i;  // exact
}

// A temporary directory: rank 0 creates it, every rank learns its name; removed at the end.
class TempDir {
 public:
  TempDir() {
    char name[256] = {0};
    if (world_rank() == 0) {
      const char* tmp = std::getenv("TMPDIR");
      std::snprintf(name, sizeof name, "%s/isthmus_scrip_XXXXXX", tmp && *tmp ? tmp : "/tmp");
      if (!mkdtemp(name)) name[0] = '\0';
    }
    MPI_Bcast(name, sizeof name, MPI_CHAR, 0, MPI_COMM_WORLD);
    path_ = name;
  }
  ~TempDir() {
    MPI_Barrier(MPI_COMM_WORLD);
    if (world_rank() == 0 && !path_.empty())
      (void)std::system(("rm -rf '" + path_ + "'").c_str());
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// ---- A small netCDF file described as data, so that each broken file is a small edit --------

struct NcVar {
  std::string name;
  nc_type type;
  std::vector<std::string> dims;
  std::vector<double> data;  // converted to the variable's type by netCDF
};
struct NcSpec {
  std::vector<std::pair<std::string, size_t>> dims;
  std::vector<NcVar> vars;
  std::vector<std::pair<std::string, std::string>> attributes;

  NcVar& var(const std::string& name) {
    for (NcVar& v : vars)
      if (v.name == name) return v;
    throw std::runtime_error("no variable " + name);
  }
  void remove_var(const std::string& name) {
    for (size_t i = 0; i < vars.size(); ++i)
      if (vars[i].name == name) vars.erase(vars.begin() + long(i));
  }
  void remove_dim(const std::string& name) {
    for (size_t i = 0; i < dims.size(); ++i)
      if (dims[i].first == name) dims.erase(dims.begin() + long(i));
  }
  void write(const std::string& path) const {
    int id = -1;
    nc_ok(nc_create(path.c_str(), NC_CLOBBER, &id), "create");
    std::vector<std::pair<std::string, int>> ids;
    for (const auto& [name, len] : dims) {
      int d = -1;
      nc_ok(nc_def_dim(id, name.c_str(), len, &d), name.c_str());
      ids.push_back({name, d});
    }
    std::vector<int> varids;
    for (const NcVar& v : vars) {
      std::vector<int> d;
      for (const std::string& n : v.dims)
        for (const auto& [dn, di] : ids)
          if (dn == n) d.push_back(di);
      int vid = -1;
      nc_ok(nc_def_var(id, v.name.c_str(), v.type, int(d.size()), d.data(), &vid), v.name.c_str());
      varids.push_back(vid);
    }
    for (const auto& [name, value] : attributes)
      nc_ok(nc_put_att_text(id, NC_GLOBAL, name.c_str(), value.size(), value.c_str()), "att");
    nc_ok(nc_enddef(id), "enddef");
    for (size_t i = 0; i < vars.size(); ++i) {
      // Integer variables from integers (NaN cannot become an int), the others from doubles.
      if (vars[i].type == NC_INT) {
        std::vector<long long> ll(vars[i].data.begin(), vars[i].data.end());
        nc_ok(nc_put_var_longlong(id, varids[i], ll.data()), vars[i].name.c_str());
      } else {
        nc_ok(nc_put_var_double(id, varids[i], vars[i].data.data()), vars[i].name.c_str());
      }
    }
    nc_ok(nc_close(id), "close");
  }
};

constexpr int kLinks = 40, kSrcX = 6, kSrcY = 5, kDstX = 4, kDstY = 5;

// A good file: 40 links from a 6 x 5 grid to a 4 x 5 grid, one weight per link.
NcSpec good_spec() {
  NcSpec s;
  s.dims = {{"src_grid_size", kSrcX * kSrcY}, {"dst_grid_size", kDstX * kDstY},
            {"src_grid_rank", 2},           {"dst_grid_rank", 2},
            {"num_links", kLinks},          {"num_wgts", 1}};
  NcVar src{"src_address", NC_INT, {"num_links"}, {}};
  NcVar dst{"dst_address", NC_INT, {"num_links"}, {}};
  NcVar w{"remap_matrix", NC_DOUBLE, {"num_links", "num_wgts"}, {}};
  for (int l = 0; l < kLinks; ++l) {
    src.data.push_back((l * 7) % (kSrcX * kSrcY) + 1);
    dst.data.push_back(l % (kDstX * kDstY) + 1);
    w.data.push_back(0.25 + 0.01 * l);
  }
  s.vars = {{"src_grid_dims", NC_INT, {"src_grid_rank"}, {kSrcX, kSrcY}},
            {"dst_grid_dims", NC_INT, {"dst_grid_rank"}, {kDstX, kDstY}},
            src,
            dst,
            w};
  s.attributes = {{"title", "synthetic"}, {"map_method", "Bilinear remapping"},
                  {"normalization", "no norm"}, {"conventions", "SCRIP"}};
  return s;
}

// The rank whose slab holds link `link` (1-based) at the current rank count.
int owner_of_link(int64_t link, int64_t num_links) {
  const int p = world_size();
  for (int k = p - 1; k >= 0; --k)
    if (slab_begin(num_links, k, p) <= link - 1) return k;
  return 0;
}

struct BrokenCase {
  const char* name;
  std::function<void(NcSpec&)> edit;  // nullptr: no file at all
  WeightsExpect expect;
  int code;
  std::string message;  // "%s" stands for the path
  int64_t bad_link;     // 0: a header error, found by every rank alike
};

std::string with_path(std::string m, const std::string& path) {
  const size_t at = m.find("%s");
  if (at != std::string::npos) m.replace(at, 2, path);
  return m;
}

void set_link(NcSpec& s, const char* var, int link, double value) {
  s.var(var).data[size_t(link - 1)] = value;
}

std::vector<BrokenCase> broken_cases() {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  const WeightsExpect none;
  return {
      {"missing file", nullptr, none, ISTHMUS_ERR_FILE,
       "cannot open the weights file \"%s\": No such file or directory", 0},
      {"missing src_address", [](NcSpec& s) { s.remove_var("src_address"); }, none,
       ISTHMUS_ERR_FILE, "weights file \"%s\": no variable src_address", 0},
      {"missing dst_address", [](NcSpec& s) { s.remove_var("dst_address"); }, none,
       ISTHMUS_ERR_FILE, "weights file \"%s\": no variable dst_address", 0},
      {"missing remap_matrix", [](NcSpec& s) { s.remove_var("remap_matrix"); }, none,
       ISTHMUS_ERR_FILE, "weights file \"%s\": no variable remap_matrix", 0},
      {"remap_matrix second dimension",
       [](NcSpec& s) {
         NcVar& w = s.var("remap_matrix");
         w.dims = {"num_links", "src_grid_rank"};
         std::vector<double> d;
         for (double x : w.data) d.insert(d.end(), {x, x});
         w.data = d;
       },
       none, ISTHMUS_ERR_FILE,
       "weights file \"%s\": variable remap_matrix has dimensions (num_links, src_grid_rank), "
       "expected (num_links, num_wgts)",
       0},
      {"remap_matrix one-dimensional",
       [](NcSpec& s) { s.var("remap_matrix").dims = {"num_links"}; }, none, ISTHMUS_ERR_FILE,
       "weights file \"%s\": variable remap_matrix has dimensions (num_links), expected "
       "(num_links, num_wgts)",
       0},
      {"remap_matrix of integers", [](NcSpec& s) { s.var("remap_matrix").type = NC_INT; }, none,
       ISTHMUS_ERR_FILE,
       "weights file \"%s\": variable remap_matrix has type int, expected double or float", 0},
      {"src_address of doubles", [](NcSpec& s) { s.var("src_address").type = NC_DOUBLE; }, none,
       ISTHMUS_ERR_FILE,
       "weights file \"%s\": variable src_address has type double, expected an integer type", 0},
      {"dst_address over the wrong dimension",
       [](NcSpec& s) {
         s.var("dst_address").dims = {"dst_grid_size"};
         s.var("dst_address").data.resize(kDstX * kDstY, 1);
       },
       none, ISTHMUS_ERR_FILE,
       "weights file \"%s\": variable dst_address has dimensions (dst_grid_size), expected "
       "(num_links)",
       0},
      {"num_links dimension missing",
       [](NcSpec& s) {
         for (auto& d : s.dims)
           if (d.first == "num_links") d.first = "n_s";
         for (NcVar& v : s.vars)
           for (std::string& d : v.dims)
             if (d == "num_links") d = "n_s";
       },
       none, ISTHMUS_ERR_FILE, "weights file \"%s\": no dimension num_links", 0},
      {"num_wgts dimension missing",
       [](NcSpec& s) {
         s.remove_dim("num_wgts");
         s.var("remap_matrix").dims = {"num_links"};
       },
       none, ISTHMUS_ERR_FILE, "weights file \"%s\": no dimension num_wgts", 0},
      {"no source grid size",
       [](NcSpec& s) {
         s.remove_var("src_grid_dims");
         s.remove_dim("src_grid_size");
       },
       none, ISTHMUS_ERR_FILE,
       "weights file \"%s\": no dimension src_grid_size and no variable src_grid_dims", 0},
      {"grid dims disagree with grid size",
       [](NcSpec& s) { s.var("dst_grid_dims").data = {kDstX, kDstY + 1}; }, none,
       ISTHMUS_ERR_FILE,
       "weights file \"%s\": dimension dst_grid_size is 20, but the product of variable "
       "dst_grid_dims is 24",
       0},
      {"source grid size disagrees with expect", [](NcSpec&) {}, WeightsExpect{31, 20}, ISTHMUS_ERR_FILE,
       "weights file \"%s\": src_grid_size is 30, but the source grid has 31 points", 0},
      {"destination grid size disagrees with expect", [](NcSpec&) {}, WeightsExpect{30, 19}, ISTHMUS_ERR_FILE,
       "weights file \"%s\": dst_grid_size is 20, but the destination grid has 19 points", 0},
      {"dst_address 0", [](NcSpec& s) { set_link(s, "dst_address", 13, 0); }, none,
       ISTHMUS_ERR_FILE,
       "weights file \"%s\": link 13: dst_address is 0, outside 1..20 (dst_grid_size) in a link "
       "with a non-zero weight",
       13},
      {"src_address above the grid size", [](NcSpec& s) { set_link(s, "src_address", 5, 31); },
       none, ISTHMUS_ERR_FILE,
       "weights file \"%s\": link 5: src_address is 31, outside 1..30 (src_grid_size)", 5},
      {"null link with a bad other address",
       [](NcSpec& s) {
         set_link(s, "src_address", 4, 0);
         set_link(s, "dst_address", 4, 21);
         set_link(s, "remap_matrix", 4, 0.0);
       },
       none, ISTHMUS_ERR_FILE,
       "weights file \"%s\": link 4: src_address is 0, outside 1..30 (src_grid_size) in a link "
       "with a non-zero weight",
       4},
      {"negative src_address", [](NcSpec& s) { set_link(s, "src_address", 20, -3); }, none,
       ISTHMUS_ERR_FILE,
       "weights file \"%s\": link 20: src_address is -3, outside 1..30 (src_grid_size)", 20},
      {"NaN weight", [=](NcSpec& s) { set_link(s, "remap_matrix", 9, nan); }, none,
       ISTHMUS_ERR_FILE, "weights file \"%s\": link 9: remap_matrix weight 1 of 1 is nan", 9},
      {"Inf weight", [=](NcSpec& s) { set_link(s, "remap_matrix", 2, inf); }, none,
       ISTHMUS_ERR_FILE, "weights file \"%s\": link 2: remap_matrix weight 1 of 1 is inf", 2},
      {"-Inf weight", [=](NcSpec& s) { set_link(s, "remap_matrix", 27, -inf); }, none,
       ISTHMUS_ERR_FILE, "weights file \"%s\": link 27: remap_matrix weight 1 of 1 is -inf", 27},
      {"bad link in the last rank's slab",
       [](NcSpec& s) { set_link(s, "dst_address", kLinks, 21); }, none, ISTHMUS_ERR_FILE,
       "weights file \"%s\": link 40: dst_address is 21, outside 1..20 (dst_grid_size)", kLinks},
      {"two bad links in different slabs",
       [=](NcSpec& s) {
         set_link(s, "remap_matrix", 3, nan);
         set_link(s, "src_address", kLinks - 1, 0);
       },
       none, ISTHMUS_ERR_FILE, "weights file \"%s\": link 3: remap_matrix weight 1 of 1 is nan",
       3},
      {"two bad things in one link: the address is named",
       [=](NcSpec& s) {
         set_link(s, "remap_matrix", 31, nan);
         set_link(s, "src_address", 31, 0);
       },
       none, ISTHMUS_ERR_FILE,
       "weights file \"%s\": link 31: src_address is 0, outside 1..30 (src_grid_size) in a link "
       "with a non-zero weight",
       31},
  };
}

}  // namespace

TEST(ScripWeights, RealBilinearFile) {
  Watchdog dog("RealBilinearFile");
  const std::string path = kData + "rmp_torc_to_lmdz_BILINEAR.nc";
  WeightsInfo info;
  const LinkSlab slab = read_scrip_weights(MPI_COMM_WORLD, path, WeightsExpect{27118, 6912}, &info);
  EXPECT_EQ(info.path, path);
  EXPECT_EQ(info.num_links, 19860);
  EXPECT_EQ(info.src_grid_size, 27118);
  EXPECT_EQ(info.dst_grid_size, 6912);
  EXPECT_EQ(info.num_wgts, 1);
  EXPECT_EQ(info.src_grid_dims, (std::vector<int64_t>{182, 149}));
  EXPECT_EQ(info.dst_grid_dims, (std::vector<int64_t>{96, 72}));
  EXPECT_EQ(info.title, "torc to lmdz BILINEAR remapping");
  EXPECT_EQ(info.map_method, "Bilinear remapping");
  EXPECT_EQ(info.normalization, "no norm");
  EXPECT_EQ(info.conventions, "SCRIP");
  // ranks spread over comm read, at least kMinSlabLinks links each (19,860 links: one reader)
  const int readers = isthmus::remap::readers_of(19860, world_size());
  EXPECT_EQ(readers, std::min<int64_t>(world_size(), (19860 + isthmus::remap::kMinSlabLinks - 1) /
                                                         isthmus::remap::kMinSlabLinks));
  const int reader = isthmus::remap::reader_index(world_rank(), world_size(), readers);
  EXPECT_EQ(slab.first_link, reader >= 0 ? slab_begin(19860, reader, readers) : 0);
  // 639 links of the file are OASIS's null links (src_address 0, weight 0): left out.
  int64_t null_read = 0, null_serial = 0;
  const SerialLinks want = without_null_links(serial_read(path), 1, &null_serial);
  expect_same_links(gather_slabs(slab, info, &null_read, readers), want);
  EXPECT_EQ(null_serial, 639);
  EXPECT_EQ(null_read, 639);
  EXPECT_EQ(int64_t(want.src.size()), 19860 - 639);
  // Null links across chunk boundaries: the same links in chunks of 5, a slab on every rank.
  WeightsInfo info5;
  const LinkSlab slab5 =
      read_scrip_weights_chunked(MPI_COMM_WORLD, path, WeightsExpect{}, &info5, nullptr, 5, 1);
  EXPECT_EQ(slab5.first_link, slab_begin(19860, world_rank(), world_size()));
  expect_same_links(gather_slabs(slab5, info5), want);
  // At least 5,000 links per reader: four readers (when there are four ranks).
  WeightsInfo info4;
  const LinkSlab slab4 = read_scrip_weights_chunked(MPI_COMM_WORLD, path, WeightsExpect{}, &info4,
                                                    nullptr, 1000, 5000);
  const int four = isthmus::remap::readers_of(19860, world_size(), 5000);
  EXPECT_EQ(four, std::min(4, world_size()));
  expect_same_links(gather_slabs(slab4, info4, nullptr, four), want);
  EXPECT_TRUE(all_ranks(!HasFailure()));
}

// The readers are spread over the ranks: reader j is rank floor(j * P / R), rank 0 first, each
// rank at most one reader, and every reader found.
TEST(ScripWeights, ReadersAreSpreadOverTheRanks) {
  using isthmus::remap::reader_index;
  for (int p : {1, 2, 3, 5, 7, 8, 16, 100, 2048})
    for (int r = 1; r <= std::min(p, 40); ++r) {
      std::vector<int> seen;
      for (int k = 0; k < p; ++k) {
        const int j = reader_index(k, p, r);
        if (j < 0) continue;
        EXPECT_EQ(k, static_cast<int>(int64_t{j} * p / r)) << p << " ranks, " << r << " readers";
        seen.push_back(j);
      }
      ASSERT_EQ(static_cast<int>(seen.size()), r) << p << " ranks, " << r << " readers";
      for (int j = 0; j < r; ++j) EXPECT_EQ(seen[static_cast<size_t>(j)], j);
    }
  // 4 readers of 16 ranks: 0, 4, 8, 12 (not 0-3: one node of four)
  EXPECT_EQ(reader_index(4, 16, 4), 1);
  EXPECT_EQ(reader_index(1, 16, 4), -1);
}

TEST(ScripWeights, RealConservativeFileInSmallChunks) {
  Watchdog dog("RealConservativeFileInSmallChunks");
  const std::string path = kData + "rmp_torc_to_lmdz_CONSERV_FRACNNEI.nc";
  const SerialLinks want = serial_read(path);
  for (int64_t chunk : {int64_t{1} << 16, int64_t{1000}, int64_t{7}}) {
    WeightsInfo info;
    const LinkSlab slab =
        read_scrip_weights_chunked(MPI_COMM_WORLD, path, WeightsExpect{}, &info, nullptr, chunk, 1);
    EXPECT_EQ(info.num_links, 39194);
    EXPECT_EQ(info.src_grid_size, 27118);
    EXPECT_EQ(info.dst_grid_size, 6912);
    EXPECT_EQ(info.num_wgts, 1);
    EXPECT_EQ(info.map_method, "Conservative remapping");
    EXPECT_EQ(info.normalization, "fracarea");
    int64_t nulls = -1;
    expect_same_links(gather_slabs(slab, info, &nulls), want);
    EXPECT_EQ(nulls, 0);
  }
  EXPECT_TRUE(all_ranks(!HasFailure()));
}

TEST(ScripWeights, SecondOrderThreeWeightsWrittenAndRead) {
  Watchdog dog("SecondOrderThreeWeightsWrittenAndRead");
  TempDir dir;
  const std::string path = dir.path() + "/second_order.nc";
  WeightsInfo w;
  w.title = "second order";
  w.map_method = "Conservative remapping";
  w.normalization = "destarea";
  w.conventions = "SCRIP";
  w.num_links = 1001;
  w.num_wgts = 3;
  w.src_grid_size = 300;
  w.dst_grid_size = 77;
  w.src_grid_dims = {20, 15};
  SerialLinks want;
  for (int64_t l = 0; l < w.num_links; ++l) {
    want.src.push_back((l * 37) % w.src_grid_size);
    want.dst.push_back(l % w.dst_grid_size);
    for (int k = 0; k < 3; ++k) want.weights.push_back(std::ldexp(double(l), -7) - k * 1e-3);
  }
  if (world_rank() == 0) write_scrip_weights(path, w, want.src, want.dst, want.weights);
  MPI_Barrier(MPI_COMM_WORLD);
  for (int64_t chunk : {int64_t{1} << 16, int64_t{10}}) {
    WeightsInfo info;
    const LinkSlab slab = read_scrip_weights_chunked(MPI_COMM_WORLD, path, WeightsExpect{300, 77},
                                                     &info, nullptr, chunk, 1);
    EXPECT_EQ(info.num_wgts, 3);
    EXPECT_EQ(info.num_links, 1001);
    EXPECT_EQ(info.title, "second order");
    EXPECT_EQ(info.map_method, "Conservative remapping");
    EXPECT_EQ(info.normalization, "destarea");
    EXPECT_EQ(info.conventions, "SCRIP");
    EXPECT_EQ(info.src_grid_dims, (std::vector<int64_t>{20, 15}));
    EXPECT_EQ(info.dst_grid_dims, (std::vector<int64_t>{77}));
    expect_same_links(gather_slabs(slab, info), want);
  }
  EXPECT_TRUE(all_ranks(!HasFailure()));
}

// Variants a reader must accept: a float matrix, grid sizes from *_grid_dims only, no
// attributes, fewer links than ranks.
TEST(ScripWeights, AcceptedVariants) {
  Watchdog dog("AcceptedVariants");
  TempDir dir;
  const std::vector<std::pair<const char*, std::function<void(NcSpec&)>>> variants = {
      {"float matrix", [](NcSpec& s) { s.var("remap_matrix").type = NC_FLOAT; }},
      {"sizes from grid dims",
       [](NcSpec& s) {
         // A file without the size dimensions: drop them (no variable uses them here).
         s.remove_dim("src_grid_size");
         s.remove_dim("dst_grid_size");
       }},
      {"no attributes", [](NcSpec& s) { s.attributes.clear(); }},
      {"null links (an address 0, weight 0) left out",
       [](NcSpec& s) {
         for (int l : {1, 17, 18, kLinks}) {
           set_link(s, l % 2 ? "src_address" : "dst_address", l, 0);
           set_link(s, "remap_matrix", l, l == 17 ? -0.0 : 0.0);
         }
       }},
      {"three links",
       [](NcSpec& s) {
         for (auto& d : s.dims)
           if (d.first == "num_links") d.second = 3;
         for (const char* v : {"src_address", "dst_address", "remap_matrix"})
           s.var(v).data.resize(3);
       }},
  };
  int i = 0;
  for (const auto& [name, edit] : variants) {
    SCOPED_TRACE(name);
    const std::string path = dir.path() + "/variant" + std::to_string(i++) + ".nc";
    NcSpec spec = good_spec();
    edit(spec);
    if (world_rank() == 0) spec.write(path);
    MPI_Barrier(MPI_COMM_WORLD);
    WeightsInfo info;
    LinkSlab slab;
    int rc = ISTHMUS_OK;
    std::string message;
    try {
      slab = read_scrip_weights_chunked(MPI_COMM_WORLD, path, WeightsExpect{30, 20}, &info, nullptr,
                                        1 << 16, 1);
    } catch (const Error& e) {
      rc = e.code();
      message = e.what();
    }
    ASSERT_TRUE(all_ranks(rc == ISTHMUS_OK)) << message;
    EXPECT_EQ(info.src_grid_size, 30);
    EXPECT_EQ(info.dst_grid_size, 20);
    EXPECT_EQ(info.src_grid_dims, (std::vector<int64_t>{kSrcX, kSrcY}));
    if (std::string(name) == "no attributes") {
      EXPECT_EQ(info.title, "");
      EXPECT_EQ(info.map_method, "");
    }
    int64_t nulls = -1, want_nulls = -2;
    expect_same_links(gather_slabs(slab, info, &nulls),
                      without_null_links(serial_read(path), 1, &want_nulls));
    EXPECT_EQ(nulls, want_nulls);
  }
  EXPECT_TRUE(all_ranks(!HasFailure()));
}

TEST(ScripWeights, BrokenFiles) {
  TempDir dir;
  int i = 0;
  for (const BrokenCase& c : broken_cases()) {
    SCOPED_TRACE(c.name);
    Watchdog dog(c.name);
    const std::string path = dir.path() + "/broken" + std::to_string(i++) + ".nc";
    if (world_rank() == 0 && c.edit) {
      NcSpec spec = good_spec();
      c.edit(spec);
      spec.write(path);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    WeightsInfo info;
    int rc = ISTHMUS_OK;
    std::string message;
    try {
      // a slab on every rank, so that the first bad link is some rank's
      read_scrip_weights_chunked(MPI_COMM_WORLD, path, c.expect, &info, nullptr, 1 << 16, 1);
    } catch (const Error& e) {
      rc = e.code();
      message = e.what();
    }
    EXPECT_TRUE(same_code_everywhere(rc, c.code)) << "rank " << world_rank() << ": " << message;
    std::string want = with_path(c.message, path);
    if (c.bad_link > 0) {
      // The rank whose slab holds the first bad link names it; every other rank names that rank.
      const int owner = owner_of_link(c.bad_link, kLinks);
      if (world_rank() != owner) want = "failed on rank " + std::to_string(owner) + ": " + want;
    }
    EXPECT_EQ(message, want) << "rank " << world_rank();
    ASSERT_TRUE(all_ranks(!HasFailure()));
  }
}

TEST(ScripWeights, CallerMistakes) {
  Watchdog dog("CallerMistakes");
  const std::string path = kData + "rmp_torc_to_lmdz_BILINEAR.nc";
  const auto run = [&](const std::function<void()>& f) {
    try {
      f();
    } catch (const Error& e) {
      return std::make_pair(e.code(), std::string(e.what()));
    }
    return std::make_pair(int(ISTHMUS_OK), std::string());
  };
  // info NULL on the last rank only: every rank fails with its message.
  const bool last = world_rank() == world_size() - 1;
  WeightsInfo info;
  auto [rc, msg] = run([&] { read_scrip_weights(MPI_COMM_WORLD, path, {}, last ? nullptr : &info); });
  EXPECT_TRUE(same_code_everywhere(rc, ISTHMUS_ERR_ARG));
  const std::string null_info = "info is NULL";
  EXPECT_EQ(msg, last ? null_info
                      : "failed on rank " + std::to_string(world_size() - 1) + ": " + null_info);

  std::tie(rc, msg) = run([&] { read_scrip_weights(MPI_COMM_WORLD, path, {-2, -1}, &info); });
  EXPECT_TRUE(same_code_everywhere(rc, ISTHMUS_ERR_ARG));
  EXPECT_EQ(msg, "expect.src_grid_size (-2) and expect.dst_grid_size (-1) must be -1 "
                 "(unchecked) or sizes");

  // A caller's pending agreement: its failure wins, the file is not read, one reduction.
  Agreement pending;
  pending.check([&] {
    if (last) isthmus::fail(ISTHMUS_ERR_DECOMP, "the caller's own check");
  });
  std::tie(rc, msg) = run([&] { read_scrip_weights(MPI_COMM_WORLD, path, {}, &info, &pending); });
  EXPECT_TRUE(same_code_everywhere(rc, ISTHMUS_ERR_DECOMP));
  EXPECT_EQ(msg, last ? std::string("the caller's own check")
                      : "failed on rank " + std::to_string(world_size() - 1) +
                            ": the caller's own check");

  // Different files on different ranks: an argument mismatch named on every rank.
  if (world_size() > 1) {
    const std::string other = kData + (last ? "rmp_torc_to_lmdz_CONSERV_FRACNNEI.nc"
                                            : "rmp_torc_to_lmdz_BILINEAR.nc");
    std::tie(rc, msg) = run([&] { read_scrip_weights(MPI_COMM_WORLD, other, {}, &info); });
    EXPECT_TRUE(same_code_everywhere(rc, ISTHMUS_ERR_ARG));
    EXPECT_EQ(msg, "the path of the weights file must be the same on every rank, but ranks 0 and " +
                       std::to_string(world_size() - 1) + " pass different ones");
  }
  // A correct call afterwards works.
  std::tie(rc, msg) = run([&] { read_scrip_weights(MPI_COMM_WORLD, path, {}, &info); });
  EXPECT_TRUE(same_code_everywhere(rc, ISTHMUS_OK)) << msg;
  EXPECT_TRUE(all_ranks(!HasFailure()));
}

// ---- Each destination rank reading its own links (read_links_of_destinations) ---------------

namespace {

using isthmus::IndexList;
using isthmus::remap::read_links_of_destinations;

// This rank's destination points under a named layout of a grid of n points: "blocks"
// (contiguous), "rows" (rows of `row` points dealt round-robin: many runs), "random" (each point
// to a seeded random rank: a run per point or so, which the direct reading declines beyond one
// rank), "empty-first" (blocks over the ranks but the first, which holds nothing).
std::vector<int64_t> dst_points(const std::string& layout, int64_t n, int64_t row) {
  const int p = world_size(), r = world_rank();
  std::vector<int64_t> mine;
  if (layout == "blocks") {
    for (int64_t g = n * r / p; g < n * (r + 1) / p; ++g) mine.push_back(g);
  } else if (layout == "rows") {
    for (int64_t g = 0; g < n; ++g)
      if ((g / row) % p == r) mine.push_back(g);
  } else if (layout == "random") {
    std::mt19937 rng(5);
    for (int64_t g = 0; g < n; ++g)
      if (static_cast<int>(rng() % static_cast<unsigned>(p)) == r) mine.push_back(g);
  } else if (layout == "empty-first") {
    const int q = std::max(1, p - 1), k = p > 1 ? r - 1 : 0;
    if (k >= 0)
      for (int64_t g = n * k / q; g < n * (k + 1) / q; ++g) mine.push_back(g);
  }
  return mine;
}

// Every rank's links, gathered on every rank and put in file order by their numbers.
struct NumberedLinks {
  std::vector<int64_t> number, src, dst;
  std::vector<double> weights;
};
NumberedLinks gather_numbered(const LinkSlab& slab, int nw) {
  const int p = world_size();
  const int n = static_cast<int>(slab.size());
  std::vector<int> counts(static_cast<size_t>(p)), displs(static_cast<size_t>(p), 0);
  MPI_Allgather(&n, 1, MPI_INT, counts.data(), 1, MPI_INT, MPI_COMM_WORLD);
  for (int k = 1; k < p; ++k) displs[size_t(k)] = displs[size_t(k) - 1] + counts[size_t(k) - 1];
  const size_t total = size_t(displs.back() + counts.back());
  NumberedLinks all, sorted;
  for (auto [from, to] : {std::pair{&slab.number, &all.number}, std::pair{&slab.src, &all.src},
                          std::pair{&slab.dst, &all.dst}}) {
    to->resize(total);
    MPI_Allgatherv(from->data(), n, MPI_INT64_T, to->data(), counts.data(), displs.data(),
                   MPI_INT64_T, MPI_COMM_WORLD);
  }
  for (int k = 0; k < p; ++k) counts[size_t(k)] *= nw, displs[size_t(k)] *= nw;
  all.weights.resize(total * size_t(nw));
  MPI_Allgatherv(slab.weights.data(), n * nw, MPI_DOUBLE, all.weights.data(), counts.data(),
                 displs.data(), MPI_DOUBLE, MPI_COMM_WORLD);
  std::vector<size_t> order(total);
  std::iota(order.begin(), order.end(), size_t{0});
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return all.number[a] < all.number[b]; });
  for (size_t i : order) {
    sorted.number.push_back(all.number[i]);
    sorted.src.push_back(all.src[i]);
    sorted.dst.push_back(all.dst[i]);
    for (int k = 0; k < nw; ++k) sorted.weights.push_back(all.weights[i * size_t(nw) + size_t(k)]);
  }
  return sorted;
}

}  // namespace

// The real files list their links by destination: every rank gets exactly the links of its own
// destination points, numbered by their place in the file; together, every link of the file
// once but OASIS's null links (left out, as by the slab reader), in any layout of the points.
TEST(ScripWeights, LinksOfDestinationsReadByTheirRanks) {
  Watchdog dog("LinksOfDestinationsReadByTheirRanks");
  for (const char* name : {"rmp_torc_to_lmdz_BILINEAR.nc", "rmp_lmdz_to_torc_BILINEAR.nc",
                           "rmp_torc_to_lmdz_CONSERV_FRACNNEI.nc"}) {
    const std::string path = kData + name;
    const SerialLinks file = serial_read(path);
    int nw = 1;
    WeightsInfo header;
    read_scrip_weights(MPI_COMM_WORLD, path, {}, &header);
    nw = header.num_wgts;
    // the file's links but its null links, with their 0-based places in the file
    NumberedLinks want;
    for (size_t l = 0; l < file.src.size(); ++l) {
      bool zero = true;
      for (int k = 0; k < nw; ++k) zero = zero && file.weights[l * size_t(nw) + size_t(k)] == 0.0;
      if (zero && (file.src[l] == -1 || file.dst[l] == -1)) continue;
      want.number.push_back(static_cast<int64_t>(l));
      want.src.push_back(file.src[l]);
      want.dst.push_back(file.dst[l]);
      for (int k = 0; k < nw; ++k) want.weights.push_back(file.weights[l * size_t(nw) + size_t(k)]);
    }
    const int64_t nd = header.dst_grid_size;
    for (const char* layout : {"blocks", "rows", "random", "empty-first"}) {
      const std::vector<int64_t> mine = dst_points(layout, nd, header.dst_grid_dims[0]);
      const IndexList part = IndexList::from_indices(nd, mine.data(), static_cast<int64_t>(mine.size()));
      WeightsInfo info;
      const std::optional<LinkSlab> own =
          read_links_of_destinations(MPI_COMM_WORLD, path, {header.src_grid_size, nd}, &part, &info);
      // a part scattered point by point is left to the slabs and the directory
      const bool scattered = std::string(layout) == "random" && world_size() > 1;
      ASSERT_TRUE(all_ranks(own.has_value() != scattered)) << name << ", " << layout;
      if (scattered) continue;
      EXPECT_EQ(info.num_links, header.num_links);
      EXPECT_EQ(info.num_wgts, nw);
      EXPECT_EQ(info.src_grid_size, header.src_grid_size);
      EXPECT_EQ(info.dst_grid_size, nd);
      EXPECT_EQ(own->weights.size(), own->src.size() * size_t(nw));
      int64_t foreign = 0;
      for (int64_t d : own->dst) foreign += !std::binary_search(mine.begin(), mine.end(), d);
      EXPECT_EQ(foreign, 0) << name << ", " << layout << ": links of other ranks' points";
      const NumberedLinks got = gather_numbered(*own, nw);
      EXPECT_EQ(got.number, want.number) << name << ", " << layout;
      EXPECT_EQ(got.src, want.src) << name << ", " << layout;
      EXPECT_EQ(got.dst, want.dst) << name << ", " << layout;
      EXPECT_EQ(got.weights, want.weights) << name << ", " << layout;  // exact
    }
  }
  EXPECT_TRUE(all_ranks(!HasFailure()));
}

// Whatever the direct reading cannot vouch for, it declines on every rank alike (the caller then
// reads slabs and routes them, which names what is wrong): links not listed by destination, a
// point no rank holds or two ranks hold, a bad link, no file, a part of another grid.
TEST(ScripWeights, LinksOfDestinationsDeclineWhatTheyCannotVouchFor) {
  Watchdog dog("LinksOfDestinationsDecline");
  const TempDir dir;
  const int64_t nd = kDstX * kDstY, ns = kSrcX * kSrcY;
  // a file listing its links by destination: two links per destination point
  auto sorted_spec = [] {
    NcSpec s = good_spec();
    for (int l = 0; l < kLinks; ++l) s.var("dst_address").data[size_t(l)] = l / 2 + 1;
    return s;
  };
  const std::vector<int64_t> blocks = dst_points("blocks", nd, kDstX);
  struct Case {
    const char* name;
    std::function<void(NcSpec&)> edit;  // nullptr: no file
    std::vector<int64_t> points;        // this rank's points (the blocks when empty)
    int64_t part_size = 0;              // 0: nd
    bool read = false;                  // read directly (the file as written)
  };
  std::vector<int64_t> without_first = blocks, doubled = blocks;
  if (world_rank() == 0 && !without_first.empty()) without_first.erase(without_first.begin());
  if (world_rank() == world_size() - 1 && world_size() > 1) doubled.insert(doubled.begin(), 0);  // rank 0's too
  const double nan = std::numeric_limits<double>::quiet_NaN();
  // (links in any order are read by a single rank: it takes every link of the file)
  const bool one = world_size() == 1;
  std::vector<Case> cases = {
      {"listed by destination", [](NcSpec&) {}, {}, 0, true},
      {"two links out of order",
       [](NcSpec& s) { std::swap(s.var("dst_address").data[3], s.var("dst_address").data[30]); }, {}, 0, one},
      {"listed backwards",
       [](NcSpec& s) {
         auto& d = s.var("dst_address").data;
         std::reverse(d.begin(), d.end());
       },
       {}, 0, one},
      {"a point with links held by no rank", [](NcSpec&) {}, without_first, 0, false},
      {"a NaN weight", [=](NcSpec& s) { set_link(s, "remap_matrix", 17, nan); }, {}, 0, false},
      {"an address 0 with a weight", [](NcSpec& s) { set_link(s, "src_address", 9, 0); }, {}, 0, false},
      {"no file", nullptr, {}, 0, false},
      {"a part of another grid", [](NcSpec&) {}, {}, nd + 1, false},
  };
  if (world_size() > 1) cases.push_back({"a point held by two ranks", [](NcSpec&) {}, doubled, 0, false});
  int i = 0;
  for (const Case& c : cases) {
    const std::string path = dir.path() + "/case" + std::to_string(i++) + ".nc";
    if (world_rank() == 0 && c.edit) {
      NcSpec s = sorted_spec();
      c.edit(s);
      s.write(path);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    const std::vector<int64_t>& pts = c.points.empty() ? blocks : c.points;
    const IndexList p = IndexList::from_indices(c.part_size ? c.part_size : nd, pts.data(),
                                                static_cast<int64_t>(pts.size()));
    WeightsInfo info;
    std::optional<LinkSlab> own;
    try {
      own = read_links_of_destinations(MPI_COMM_WORLD, path, {ns, -1}, &p, &info);
    } catch (const Error& e) {
      ADD_FAILURE() << c.name << ": threw " << e.what();
    }
    EXPECT_TRUE(all_ranks(own.has_value() == c.read)) << c.name;
    if (c.read && own) {
      EXPECT_EQ(own->size(), 2 * static_cast<int64_t>(blocks.size())) << c.name;
    }
  }
  EXPECT_TRUE(all_ranks(!HasFailure()));
}
