// Coupling files in OASIS3-MCT's layout: restart files written from one random decomposition
// and read back in another rank count and decomposition, bit-identical; read-modify-write of a
// shared restart file; files written by hand with netcdf-c in OASIS's layout read correctly, and
// ours inspected with netcdf-c; EXPOUT/OUTPUT records and INPUT records; missing file, variable,
// record and wrong sizes with their exact code and message on every rank.
#include <gtest/gtest.h>
#include <mpi.h>
#include <netcdf.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "base/error.h"
#include "coupler/field_files.h"
#include "mpi_test_util.h"
#include "outcome.h"

using isthmus::DataType;
using isthmus::Error;
using isthmus::IndexList;
using namespace isthmus::coupler;

namespace {

const GridShape kShape{15, 11};
const int64_t kN = kShape.nx * kShape.ny;

// A value no other (point, level, field, version) has, exact in float too.
double value(int64_t g, int level, int field, int version = 0) {
  return static_cast<float>(0.001 * g + 17.0 * level + 1000.0 * field + 0.5 * version - 3.25);
}

// Points dealt to the ranks of comm at random (the same draw on every rank); some ranks may
// hold none. Each rank's points are in a random order.
IndexList random_points(MPI_Comm comm, unsigned seed) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  std::mt19937 rng(seed);
  std::vector<int64_t> order(kN);
  for (int64_t g = 0; g < kN; ++g) order[g] = g;
  std::shuffle(order.begin(), order.end(), rng);
  std::vector<int64_t> mine;
  for (int64_t g : order)
    if (static_cast<int>(rng() % size) == rank) mine.push_back(g);
  return IndexList::from_indices(kN, mine.data(), static_cast<int64_t>(mine.size()));
}

template <typename T>
std::vector<T> local_values(const IndexList& p, int nlevels, int field, int version = 0) {
  const std::vector<int64_t> idx = p.indices();
  std::vector<T> v(idx.size() * nlevels);
  for (int l = 0; l < nlevels; ++l)
    for (size_t i = 0; i < idx.size(); ++i)
      v[l * idx.size() + i] = static_cast<T>(value(idx[i], l, field, version));
  return v;
}

template <typename T>
bool same_bits(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0;
}

// A directory of this run (several rank counts may run at once), made by rank 0.
std::string run_dir() {
  int pid = static_cast<int>(getpid());
  MPI_Bcast(&pid, 1, MPI_INT, 0, MPI_COMM_WORLD);
  const std::string dir = (std::filesystem::temp_directory_path() /
                           ("isthmus_files_np" + std::to_string(world_size()) + "_" +
                            std::to_string(pid)))
                              .string() +
                          "/";
  if (world_rank() == 0) std::filesystem::create_directories(dir);
  MPI_Barrier(MPI_COMM_WORLD);
  return dir;
}

void nc_ok(int rc, const char* what) {
  if (rc != NC_NOERR) {
    ADD_FAILURE() << what << ": " << nc_strerror(rc);
    throw std::runtime_error(what);
  }
}

// The names of a variable's dimensions, in C order.
std::vector<std::string> dim_names(int id, int var) {
  int nd = 0;
  nc_ok(nc_inq_varndims(id, var, &nd), "ndims");
  std::vector<int> dims(nd);
  nc_ok(nc_inq_vardimid(id, var, dims.data()), "dims");
  std::vector<std::string> names;
  for (int d : dims) {
    char name[NC_MAX_NAME + 1] = {};
    nc_ok(nc_inq_dimname(id, d, name), "dimname");
    names.push_back(name);
  }
  return names;
}

class FieldFiles : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { dir_ = new std::string(run_dir()); }
  static void TearDownTestSuite() {
    MPI_Barrier(MPI_COMM_WORLD);
    if (world_rank() == 0) std::filesystem::remove_all(*dir_);
    delete dir_;
  }
  static std::string* dir_;
  const std::string& dir() const { return *dir_; }
};
std::string* FieldFiles::dir_ = nullptr;

}  // namespace

TEST(FieldFileNames, AsOasis) {
  EXPECT_EQ(level_name("SST", 0, 1), "SST");
  EXPECT_EQ(level_name("SST", 0, 3), "SST.001");
  EXPECT_EQ(level_name("SST", 2, 3), "SST.003");
  EXPECT_EQ(loctrans_prefix(3), "loc000003_");
  EXPECT_EQ(loctrans_counter_name(12), "loc000012_cnt");
  EXPECT_EQ(loctrans_prefix_oasis2(TimeOp::Average), "loc02_");
  EXPECT_EQ(loctrans_counter_name_oasis2(TimeOp::TMax), "loc05_cnt");
  EXPECT_EQ(output_file_name("FSENDOCN", "ocn", 3), "FSENDOCN_ocn_03.nc");
  EXPECT_EQ(input_file_name("SSTOC.002", "atm"), "SSTOC.002_atm.nc");
}

// Written from one decomposition on every rank, read back on about half the ranks in another:
// the same bits, double, float and a bundle of three levels, and the counters.
TEST_F(FieldFiles, RestartRoundTripAcrossDecompositions) {
  Watchdog w("restart round trip");
  const std::string path = dir() + "rst_roundtrip.nc";
  const IndexList a = random_points(MPI_COMM_WORLD, 11);
  std::vector<double> sst = local_values<double>(a, 1, 0);
  std::vector<float> ice = local_values<float>(a, 3, 1);
  std::vector<FieldData> fields = {{"SST", 1, DataType::Double, sst.data()},
                                   {"ICE", 3, DataType::Float, ice.data()}};
  write_restart(MPI_COMM_WORLD, path, a, kShape, loctrans_prefix(4), fields,
                {{loctrans_counter_name(4), {5, 5, 5, 5}}});

  MPI_Comm half;
  const int readers = (world_size() + 1) / 2;
  MPI_Comm_split(MPI_COMM_WORLD, world_rank() < readers ? 0 : MPI_UNDEFINED, world_rank(), &half);
  bool ok = true;
  if (half != MPI_COMM_NULL) {
    const IndexList b = random_points(half, 29);
    std::vector<double> sst_b(b.size(), -1);
    std::vector<float> ice_b(3 * b.size(), -1);
    std::vector<RestartCounter> counters = {{loctrans_counter_name(4), std::vector<int>(4)}};
    read_restart(half, path, b, kShape, loctrans_prefix(4),
                 {{"SST", 1, DataType::Double, sst_b.data()},
                  {"ICE", 3, DataType::Float, ice_b.data()}},
                 &counters);
    ok = same_bits(sst_b, local_values<double>(b, 1, 0)) &&
         same_bits(ice_b, local_values<float>(b, 3, 1)) &&
         counters[0].values == std::vector<int>({5, 5, 5, 5});
    // The float bundle read as double: the float values exactly.
    std::vector<double> ice_d(3 * b.size());
    read_restart(half, path, b, kShape, loctrans_prefix(4),
                 {{"ICE", 3, DataType::Double, ice_d.data()}});
    ok = ok && same_bits(ice_d, local_values<double>(b, 3, 1));
    MPI_Comm_free(&half);
  }
  EXPECT_TRUE(all_ranks(ok));

  // The layout OASIS writes (oasis_io_write_avfile, oasis_io_write_array), read with netcdf-c.
  if (world_rank() == 0) {
    int id = -1, var = -1;
    nc_ok(nc_open(path.c_str(), NC_NOWRITE, &id), "open");
    nc_ok(nc_inq_varid(id, "loc000004_ICE.002", &var), "ICE.002");
    nc_type t = NC_NAT;
    nc_ok(nc_inq_vartype(id, var, &t), "type");
    EXPECT_EQ(t, NC_DOUBLE);
    EXPECT_EQ(dim_names(id, var),
              std::vector<std::string>({"loc000004_ICE.002_ny", "loc000004_ICE.002_nx"}));
    std::vector<double> all(kN);
    nc_ok(nc_get_var_double(id, var, all.data()), "get");
    for (int64_t g = 0; g < kN; ++g) EXPECT_EQ(all[g], double(float(value(g, 1, 1)))) << g;
    nc_ok(nc_inq_varid(id, "loc000004_cnt", &var), "cnt");
    nc_ok(nc_inq_vartype(id, var, &t), "type");
    EXPECT_EQ(t, NC_INT);
    EXPECT_EQ(dim_names(id, var), std::vector<std::string>({"loc000004_cnt_ncnt"}));
    nc_close(id);
    // Nothing left under a temporary name.
    int files = 0;
    for (const auto& e : std::filesystem::directory_iterator(dir()))
      if (e.path().string().find(".tmp-isthmus-") != std::string::npos) ++files;
    EXPECT_EQ(files, 0);
  }
}

// Two entries share one restart file: writing the second keeps the first, and writing the first
// again (new values) keeps the second.
TEST_F(FieldFiles, SharedRestartFileKeepsOtherVariables) {
  Watchdog w("shared restart");
  const std::string path = dir() + "rst_shared.nc";
  const IndexList p = random_points(MPI_COMM_WORLD, 3);
  std::vector<double> a0 = local_values<double>(p, 1, 0), b0 = local_values<double>(p, 2, 1);
  write_restart(MPI_COMM_WORLD, path, p, kShape, "", {{"FSENDOCN", 1, DataType::Double, a0.data()}});
  write_restart(MPI_COMM_WORLD, path, p, kShape, "",
                {{"FSENDATM", 2, DataType::Double, b0.data()}});
  std::vector<double> a1 = local_values<double>(p, 1, 0, 1);
  write_restart(MPI_COMM_WORLD, path, p, kShape, "", {{"FSENDOCN", 1, DataType::Double, a1.data()}});
  const IndexList q = random_points(MPI_COMM_WORLD, 4);
  std::vector<double> ra(q.size()), rb(2 * q.size());
  read_restart(MPI_COMM_WORLD, path, q, kShape, "",
               {{"FSENDOCN", 1, DataType::Double, ra.data()},
                {"FSENDATM", 2, DataType::Double, rb.data()}});
  EXPECT_TRUE(all_ranks(same_bits(ra, local_values<double>(q, 1, 0, 1)) &&
                        same_bits(rb, local_values<double>(q, 2, 1))));
}

// Files as OASIS3-MCT writes them, made here with netcdf-c: a 2-D lagged field with its dimensions
// defined nx first, a LOCTRANS state and counter, and a 1-D field (a grid without 2-D shape).
TEST_F(FieldFiles, ReadsOasisLayoutWrittenByHand) {
  Watchdog w("oasis layout");
  const std::string path = dir() + "rst_oasis.nc";
  if (world_rank() == 0) {
    int id = -1, dnx = -1, dny = -1, dc = -1, d1 = -1, d1b = -1, v = -1, vl = -1, vc = -1, v1 = -1;
    nc_ok(nc_create(path.c_str(), NC_CLOBBER, &id), "create");
    nc_ok(nc_def_dim(id, "SSTOCEAN_nx", kShape.nx, &dnx), "nx");
    nc_ok(nc_def_dim(id, "SSTOCEAN_ny", kShape.ny, &dny), "ny");
    int dims[2] = {dny, dnx};  // Fortran (nx, ny)
    nc_ok(nc_def_var(id, "SSTOCEAN", NC_DOUBLE, 2, dims, &v), "var");
    nc_ok(nc_def_dim(id, "loc000002_cnt_ncnt", 1, &dc), "ncnt");
    nc_ok(nc_def_var(id, "loc000002_cnt", NC_INT, 1, &dc, &vc), "cnt");
    int dlx = -1, dly = -1;
    nc_ok(nc_def_dim(id, "loc000002_FSENDOCN_nx", kShape.nx, &dlx), "nx");
    nc_ok(nc_def_dim(id, "loc000002_FSENDOCN_ny", kShape.ny, &dly), "ny");
    int ldims[2] = {dly, dlx};
    nc_ok(nc_def_var(id, "loc000002_FSENDOCN", NC_DOUBLE, 2, ldims, &vl), "loc var");
    nc_ok(nc_def_dim(id, "RUNOFF_nx", kN, &d1), "1d");
    nc_ok(nc_def_dim(id, "RUNOFF_ny", 1, &d1b), "1d ny");
    int dims1[2] = {d1b, d1};
    nc_ok(nc_def_var(id, "RUNOFF", NC_DOUBLE, 2, dims1, &v1), "1d var");
    int flat = -1, dflat = -1;
    nc_ok(nc_def_dim(id, "FLAT_n", kN, &dflat), "flat");
    nc_ok(nc_def_var(id, "FLAT", NC_FLOAT, 1, &dflat, &flat), "flat var");
    nc_ok(nc_enddef(id), "enddef");
    std::vector<double> a(kN), b(kN), c(kN);
    std::vector<float> d(kN);
    for (int64_t g = 0; g < kN; ++g) {
      a[g] = value(g, 0, 7);
      b[g] = value(g, 0, 8) * 3.0;
      c[g] = value(g, 0, 9);
      d[g] = static_cast<float>(value(g, 0, 10));
    }
    const int cnt = 3;
    nc_ok(nc_put_var_double(id, v, a.data()), "put");
    nc_ok(nc_put_var_double(id, vl, b.data()), "put");
    nc_ok(nc_put_var_double(id, v1, c.data()), "put");
    nc_ok(nc_put_var_float(id, flat, d.data()), "put");
    nc_ok(nc_put_var_int(id, vc, &cnt), "put");
    nc_close(id);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  const IndexList p = random_points(MPI_COMM_WORLD, 5);
  const std::vector<int64_t> idx = p.indices();
  std::vector<double> sst(p.size()), loc(p.size()), runoff(p.size()), flat(p.size());
  read_restart(MPI_COMM_WORLD, path, p, kShape, "",
               {{"SSTOCEAN", 1, DataType::Double, sst.data()},
                {"RUNOFF", 1, DataType::Double, runoff.data()},
                {"FLAT", 1, DataType::Double, flat.data()}});
  std::vector<RestartCounter> cnt = {{loctrans_counter_name(2), {0}}};
  read_restart(MPI_COMM_WORLD, path, p, kShape, loctrans_prefix(2),
               {{"FSENDOCN", 1, DataType::Double, loc.data()}}, &cnt);
  bool ok = cnt[0].values[0] == 3;
  for (size_t i = 0; i < idx.size(); ++i)
    ok = ok && sst[i] == value(idx[i], 0, 7) && loc[i] == value(idx[i], 0, 8) * 3.0 &&
         runoff[i] == value(idx[i], 0, 9) && flat[i] == double(float(value(idx[i], 0, 10)));
  EXPECT_TRUE(all_ranks(ok));
  EXPECT_TRUE(all_ranks(restart_has_variable(MPI_COMM_WORLD, path, "loc000002_FSENDOCN")));
  EXPECT_FALSE(restart_has_variable(MPI_COMM_WORLD, path, "loc02_FSENDOCN"));
  EXPECT_FALSE(restart_has_variable(MPI_COMM_WORLD, dir() + "none.nc", "SSTOCEAN"));
}

// A restart file a user prepared, as OASIS3-MCT's tutorial ships them (fdocn.nc: the field
// over dimensions named i and j, beside the grid's coordinates): the lagged field is written into
// the variable that is there, whatever its dimensions are called and whether it is double or
// float (as OASIS's oasis_io_write_avfile does), and the file's other variables are kept.
TEST_F(FieldFiles, WritesIntoAPreparedRestartFile) {
  Watchdog w("prepared restart");
  const std::string path = dir() + "fdocn.nc";
  if (world_rank() == 0) {
    int id = -1, di = -1, dj = -1, dn = -1, v = -1, lon = -1, f = -1;
    nc_ok(nc_create(path.c_str(), NC_CLOBBER, &id), "create");
    nc_ok(nc_def_dim(id, "i", kShape.nx, &di), "i");
    nc_ok(nc_def_dim(id, "j", kShape.ny, &dj), "j");
    nc_ok(nc_def_dim(id, "n", kN, &dn), "n");
    int dims[2] = {dj, di};
    nc_ok(nc_def_var(id, "FSENDOCN", NC_DOUBLE, 2, dims, &v), "var");
    nc_ok(nc_def_var(id, "torc.lon", NC_DOUBLE, 2, dims, &lon), "lon");
    nc_ok(nc_def_var(id, "FSENDICE", NC_FLOAT, 1, &dn, &f), "float var");
    nc_ok(nc_enddef(id), "enddef");
    std::vector<double> zero(kN, 0.0), coord(kN);
    for (int64_t g = 0; g < kN; ++g) coord[g] = 0.5 * g;
    nc_ok(nc_put_var_double(id, v, zero.data()), "put");
    nc_ok(nc_put_var_double(id, lon, coord.data()), "put");
    nc_ok(nc_put_var_double(id, f, zero.data()), "put");
    nc_close(id);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  const IndexList p = random_points(MPI_COMM_WORLD, 11);
  std::vector<double> a = local_values<double>(p, 1, 0), b = local_values<double>(p, 1, 1);
  write_restart(MPI_COMM_WORLD, path, p, kShape, "",
                {{"FSENDOCN", 1, DataType::Double, a.data()},
                 {"FSENDICE", 1, DataType::Double, b.data()}});
  if (world_rank() == 0) {
    int id = -1, v = -1, lon = -1, f = -1;
    nc_ok(nc_open(path.c_str(), NC_NOWRITE, &id), "open");
    nc_ok(nc_inq_varid(id, "FSENDOCN", &v), "var");
    nc_ok(nc_inq_varid(id, "torc.lon", &lon), "lon");
    nc_ok(nc_inq_varid(id, "FSENDICE", &f), "float var");
    EXPECT_EQ(dim_names(id, v), (std::vector<std::string>{"j", "i"}));
    EXPECT_EQ(dim_names(id, f), (std::vector<std::string>{"n"}));
    nc_type t = NC_NAT;
    nc_ok(nc_inq_vartype(id, f, &t), "type");
    EXPECT_EQ(t, NC_FLOAT);
    std::vector<double> got(kN), gotf(kN), coord(kN);
    nc_ok(nc_get_var_double(id, v, got.data()), "get");
    nc_ok(nc_get_var_double(id, f, gotf.data()), "get");
    nc_ok(nc_get_var_double(id, lon, coord.data()), "get");
    nc_close(id);
    for (int64_t g = 0; g < kN; ++g) {
      ASSERT_EQ(got[g], value(g, 0, 0)) << g;
      ASSERT_EQ(gotf[g], value(g, 0, 1)) << g;  // exact in float
      ASSERT_EQ(coord[g], 0.5 * g) << g;
    }
  }
  // read back through another decomposition
  const IndexList q = random_points(MPI_COMM_WORLD, 12);
  std::vector<double> ra(q.size());
  read_restart(MPI_COMM_WORLD, path, q, kShape, "", {{"FSENDOCN", 1, DataType::Double, ra.data()}});
  EXPECT_TRUE(all_ranks(same_bits(ra, local_values<double>(q, 1, 0))));
}

// Each error with its code and exact message, the same on every rank.
TEST_F(FieldFiles, RestartErrorsAgreedOnEveryRank) {
  Watchdog w("restart errors");
  const std::string path = dir() + "rst_err.nc";
  const IndexList p = random_points(MPI_COMM_WORLD, 8);
  std::vector<double> x = local_values<double>(p, 1, 0);
  write_restart(MPI_COMM_WORLD, path, p, kShape, "", {{"SST", 1, DataType::Double, x.data()}});

  auto expect = [&](const char* what, std::pair<int, std::string> got, int code,
                    const std::string& message) {
    SCOPED_TRACE(what);
    EXPECT_TRUE(same_code_everywhere(got.first, code));
    EXPECT_EQ(got.second, message);
  };
  const std::string missing = dir() + "missing.nc";
  expect("missing file", outcome([&] {
           read_restart(MPI_COMM_WORLD, missing, p, kShape, "",
                        {{"SST", 1, DataType::Double, x.data()}});
         }),
         ISTHMUS_ERR_FILE,
         "cannot open the restart file \"" + missing + "\": No such file or directory");
  expect("missing variable", outcome([&] {
           read_restart(MPI_COMM_WORLD, path, p, kShape, "",
                        {{"SST", 1, DataType::Double, x.data()},
                         {"SSS", 1, DataType::Double, x.data()}});
         }),
         ISTHMUS_ERR_FILE, "restart file \"" + path + "\": no variable \"SSS\"");
  std::vector<RestartCounter> cnt = {{"loc000001_cnt", {0}}};
  expect("missing counter", outcome([&] {
           read_restart(MPI_COMM_WORLD, path, p, kShape, "",
                        {{"SST", 1, DataType::Double, x.data()}}, &cnt);
         }),
         ISTHMUS_ERR_FILE, "restart file \"" + path + "\": no variable \"loc000001_cnt\"");
  // The same file read for a grid of another size.
  const GridShape other{16, 11};
  std::vector<int64_t> qi;
  for (int64_t g = world_rank(); g < other.nx * other.ny; g += world_size()) qi.push_back(g);
  const IndexList wide = IndexList::from_indices(other.nx * other.ny, qi.data(), int64_t(qi.size()));
  std::vector<double> y(wide.size());
  expect("wrong size", outcome([&] {
           read_restart(MPI_COMM_WORLD, path, wide, other, "",
                        {{"SST", 1, DataType::Double, y.data()}});
         }),
         ISTHMUS_ERR_FILE,
         "restart file \"" + path +
             "\": variable \"SST\" has dimensions (SST_ny = 11, SST_nx = 15), expected 16 x 11 "
             "= 176 points in 1 or 2 dimensions");
  expect("rewritten with another size", outcome([&] {
           write_restart(MPI_COMM_WORLD, path, wide, other, "",
                         {{"SST", 1, DataType::Double, y.data()}});
         }),
         ISTHMUS_ERR_FILE,
         "restart file \"" + path +
             "\": variable \"SST\" has dimensions (SST_ny = 11, SST_nx = 15), expected 16 x 11 "
             "= 176 points in 1 or 2 dimensions");
  // The failed write left the file as it was.
  std::vector<double> back(p.size());
  read_restart(MPI_COMM_WORLD, path, p, kShape, "", {{"SST", 1, DataType::Double, back.data()}});
  EXPECT_TRUE(all_ranks(same_bits(back, x)));
  // A directory that does not exist.
  const std::string nodir = dir() + "no/such/dir/rst.nc";
  const auto got = outcome([&] {
    write_restart(MPI_COMM_WORLD, nodir, p, kShape, "", {{"SST", 1, DataType::Double, x.data()}});
  });
  EXPECT_TRUE(same_code_everywhere(got.first, ISTHMUS_ERR_FILE));
  EXPECT_EQ(got.second.rfind("cannot create the restart file \"" + nodir + "\": ", 0), 0u)
      << got.second;
  // A NULL array on the last rank (when it holds points): an argument error on every rank.
  const bool holds = all_ranks(world_rank() != world_size() - 1 || p.size() > 0);
  if (holds) {
    const auto null = outcome([&] {
      write_restart(MPI_COMM_WORLD, path, p, kShape, "",
                    {{"SST", 1, DataType::Double,
                      world_rank() == world_size() - 1 ? nullptr : x.data()}});
    });
    EXPECT_TRUE(same_code_everywhere(null.first, ISTHMUS_ERR_ARG));
  }
}

// EXPOUT/OUTPUT: one file per field level, one record per coupling date, in OASIS's layout;
// a run done again from date 0 starts the files anew.
TEST_F(FieldFiles, OutputRecordsAsOasis) {
  Watchdog w("output");
  const IndexList p = random_points(MPI_COMM_WORLD, 13);
  OutputFile out(MPI_COMM_WORLD, p, kShape, "ocn", 3, dir());
  for (int k = 0; k < 3; ++k) {
    std::vector<double> a = local_values<double>(p, 1, 0, k);
    std::vector<float> b = local_values<float>(p, 2, 1, k);
    out.write(3600 * k, {{"FSENDOCN", 1, DataType::Double, a.data()},
                         {"BUNDLE", 2, DataType::Float, b.data()}});
  }
  if (world_rank() == 0) {
    for (const char* name : {"FSENDOCN", "BUNDLE.001", "BUNDLE.002"}) {
      SCOPED_TRACE(name);
      const std::string path = dir() + name + "_ocn_03.nc";
      int id = -1, dim = -1, var = -1, unlim = -1;
      nc_ok(nc_open(path.c_str(), NC_NOWRITE, &id), "open");
      size_t len = 0;
      nc_ok(nc_inq_dimid(id, "nx", &dim), "nx");
      nc_ok(nc_inq_dimlen(id, dim, &len), "nx");
      EXPECT_EQ(len, size_t(kShape.nx));
      nc_ok(nc_inq_dimid(id, "ny", &dim), "ny");
      nc_ok(nc_inq_dimlen(id, dim, &len), "ny");
      EXPECT_EQ(len, size_t(kShape.ny));
      nc_ok(nc_inq_dimid(id, "time", &dim), "time");
      nc_ok(nc_inq_unlimdim(id, &unlim), "unlim");
      EXPECT_EQ(dim, unlim);
      nc_ok(nc_inq_varid(id, "time", &var), "time var");
      nc_type t = NC_NAT;
      nc_ok(nc_inq_vartype(id, var, &t), "time type");
      EXPECT_EQ(t, NC_INT);
      std::vector<int> times(3);
      nc_ok(nc_get_var_int(id, var, times.data()), "times");
      EXPECT_EQ(times, std::vector<int>({0, 3600, 7200}));
      nc_ok(nc_inq_varid(id, name, &var), "field");
      nc_ok(nc_inq_vartype(id, var, &t), "field type");
      EXPECT_EQ(t, NC_DOUBLE);
      EXPECT_EQ(dim_names(id, var), std::vector<std::string>({"time", "ny", "nx"}));
      std::vector<double> all(3 * kN);
      nc_ok(nc_get_var_double(id, var, all.data()), "get");
      const int field = name[0] == 'F' ? 0 : 1, level = name[0] == 'F' ? 0 : name[9] - '1';
      for (int k = 0; k < 3; ++k)
        for (int64_t g = 0; g < kN; ++g)
          ASSERT_EQ(all[k * kN + g], value(g, level, field, k)) << k << " " << g;
      nc_close(id);
    }
  }
  // The run again: date 0 starts the file anew.
  OutputFile again(MPI_COMM_WORLD, p, kShape, "ocn", 3, dir());
  std::vector<double> a = local_values<double>(p, 1, 0, 9);
  again.write(0, {{"FSENDOCN", 1, DataType::Double, a.data()}});
  if (world_rank() == 0) {
    int id = -1, dim = -1;
    size_t len = 0;
    nc_ok(nc_open((dir() + "FSENDOCN_ocn_03.nc").c_str(), NC_NOWRITE, &id), "open");
    nc_ok(nc_inq_dimid(id, "time", &dim), "time");
    nc_ok(nc_inq_dimlen(id, dim, &len), "len");
    EXPECT_EQ(len, 1u);
    nc_close(id);
  }
}

// INPUT: the record of the date, from <name>_<comp>.nc or from the entry's file, written here in
// the layout OASIS reads (oasis_io_read_avfbf).
TEST_F(FieldFiles, InputRecordsAsOasis) {
  Watchdog w("input");
  if (world_rank() == 0) {
    for (const char* name : {"SSTIN_atm.nc", "forcing.nc"}) {
      int id = -1, dx = -1, dy = -1, dt = -1, vt = -1, v = -1;
      nc_ok(nc_create((dir() + name).c_str(), NC_CLOBBER, &id), "create");
      nc_ok(nc_def_dim(id, "nx", kShape.nx, &dx), "nx");
      nc_ok(nc_def_dim(id, "ny", kShape.ny, &dy), "ny");
      nc_ok(nc_def_dim(id, "time", NC_UNLIMITED, &dt), "time");
      nc_ok(nc_def_var(id, "time", NC_INT, 1, &dt, &vt), "time");
      int dims[3] = {dt, dy, dx};
      nc_ok(nc_def_var(id, "SSTIN", NC_DOUBLE, 3, dims, &v), "var");
      nc_ok(nc_enddef(id), "enddef");
      for (int k = 0; k < 3; ++k) {
        const int time = 86400 * k;
        const size_t t0 = k, one = 1;
        nc_ok(nc_put_vara_int(id, vt, &t0, &one, &time), "time");
        std::vector<double> rec(kN);
        for (int64_t g = 0; g < kN; ++g) rec[g] = value(g, 0, 4, k);
        const size_t start[3] = {size_t(k), 0, 0}, count[3] = {1, size_t(kShape.ny), size_t(kShape.nx)};
        nc_ok(nc_put_vara_double(id, v, start, count, rec.data()), "rec");
      }
      nc_close(id);
    }
  }
  MPI_Barrier(MPI_COMM_WORLD);
  const IndexList p = random_points(MPI_COMM_WORLD, 21);
  InputFile by_name(MPI_COMM_WORLD, p, kShape, "", "atm", dir());
  std::vector<float> f(p.size());
  by_name.read(86400, {{"SSTIN", 1, DataType::Float, f.data()}});
  EXPECT_TRUE(all_ranks(same_bits(f, local_values<float>(p, 1, 4, 1))));
  InputFile named(MPI_COMM_WORLD, p, kShape, "forcing.nc", "atm", dir());
  std::vector<double> d(p.size());
  named.read(172800, {{"SSTIN", 1, DataType::Double, d.data()}});
  EXPECT_TRUE(all_ranks(same_bits(d, local_values<double>(p, 1, 4, 2))));

  const auto got = outcome([&] { named.read(3600, {{"SSTIN", 1, DataType::Double, d.data()}}); });
  EXPECT_TRUE(same_code_everywhere(got.first, ISTHMUS_ERR_FILE));
  EXPECT_EQ(got.second, "input file \"" + dir() +
                            "forcing.nc\": no record at time 3600 (3 records, from 0 to 172800)");
  const auto none = outcome([&] { by_name.read(0, {{"SSSIN", 1, DataType::Double, d.data()}}); });
  EXPECT_TRUE(same_code_everywhere(none.first, ISTHMUS_ERR_FILE));
  EXPECT_EQ(none.second, "cannot open the input file \"" + dir() +
                             "SSSIN_atm.nc\": No such file or directory");
  const auto novar = outcome([&] { named.read(0, {{"SSSIN", 1, DataType::Double, d.data()}}); });
  EXPECT_TRUE(same_code_everywhere(novar.first, ISTHMUS_ERR_FILE));
  EXPECT_EQ(novar.second, "input file \"" + dir() + "forcing.nc\": no variable \"SSSIN\"");
}
