// OASIS's masks.nc and areas.nc read for CONSERV: each rank gets its points' areas and active
// flags (OASIS mask 1 = masked becomes inactive), for any partition; a missing file is named.
#include <gtest/gtest.h>
#include <mpi.h>
#include <netcdf.h>
#include <unistd.h>

#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "base/error.h"
#include "coupler/grid_files.h"
#include "mpi_test_util.h"

using namespace isthmus;
using namespace isthmus::coupler;

namespace {

constexpr int64_t kNx = 13, kNy = 7, kN = kNx * kNy;

double area(int64_t g) { return 1e9 + 1e7 * (g % 11); }
int masked(int64_t g) { return g % 4 == 1; }

void ok(int rc) { ASSERT_EQ(rc, NC_NOERR) << nc_strerror(rc); }

// rank 0 writes the two files in OASIS's layout: <grid>.msk int and <grid>.srf double (ny, nx)
void write_grid_files(const std::string& dir) {
  if (world_rank() == 0) {
    int id, dx, dy, v;
    ok(nc_create((dir + "masks.nc").c_str(), NC_CLOBBER, &id));
    ok(nc_def_dim(id, "x_torc", kNx, &dx));
    ok(nc_def_dim(id, "y_torc", kNy, &dy));
    int dims[2] = {dy, dx};
    ok(nc_def_var(id, "torc.msk", NC_INT, 2, dims, &v));
    ok(nc_enddef(id));
    std::vector<int> m(kN);
    for (int64_t g = 0; g < kN; ++g) m[g] = masked(g);
    ok(nc_put_var_int(id, v, m.data()));
    ok(nc_close(id));
    ok(nc_create((dir + "areas.nc").c_str(), NC_CLOBBER, &id));
    ok(nc_def_dim(id, "x_torc", kNx, &dx));
    ok(nc_def_dim(id, "y_torc", kNy, &dy));
    dims[0] = dy;
    dims[1] = dx;
    ok(nc_def_var(id, "torc.srf", NC_DOUBLE, 2, dims, &v));
    ok(nc_enddef(id));
    std::vector<double> a(kN);
    for (int64_t g = 0; g < kN; ++g) a[g] = area(g);
    ok(nc_put_var_double(id, v, a.data()));
    ok(nc_close(id));
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

}  // namespace

TEST(GridFiles, AreasAndMasksReachEachRanksPoints) {
  Watchdog w("grid files");
  const TempRunDir run("grids");
  const std::string dir = run.path() + "/";
  write_grid_files(dir);
  std::mt19937 rng(5);
  std::vector<int64_t> mine;
  for (int64_t g = 0; g < kN; ++g)
    if (static_cast<int>(rng() % world_size()) == world_rank()) mine.push_back(g);
  std::shuffle(mine.begin(), mine.end(), rng);
  IndexList p = IndexList::from_indices(kN, mine.data(), static_cast<int64_t>(mine.size()));
  AreasAndMask am = read_areas_and_mask(MPI_COMM_WORLD, dir, "torc", p, {kNx, kNy});
  int64_t wrong = 0;
  for (size_t i = 0; i < mine.size(); ++i)
    wrong += am.area[i] != area(mine[i]) || am.active[i] != !masked(mine[i]);
  EXPECT_EQ(wrong, 0);
  // a grid the files do not hold
  int code = ISTHMUS_OK;
  std::string msg;
  try {
    read_areas_and_mask(MPI_COMM_WORLD, dir, "lmdz", p, {kNx, kNy});
  } catch (const Error& e) {
    code = e.code();
    msg = e.what();
  }
  EXPECT_TRUE(same_code_everywhere(code, ISTHMUS_ERR_FILE));
  EXPECT_EQ(msg, "grid file \"" + dir + "areas.nc\": no variable \"lmdz.srf\"");
}
