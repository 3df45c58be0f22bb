// The weights writer's file layer (remap/nc_out.h) and the collective SCRIP writer on it, both
// ways: every rank writing its own rows (PnetCDF, where the build has it) and every rank's rows
// through rank 0 (netCDF-C; ISTHMUS_PNETCDF=0). Values checked at their global place, read
// back with netCDF-C; errors on one rank fail every rank with the same code.
#include <gtest/gtest.h>
#include <mpi.h>
#include <netcdf.h>

#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "base/error.h"
#include "mpi_test_util.h"
#include "outcome.h"
#include "remap/nc_out.h"
#include "remap/scrip_weights.h"

using isthmus::Error;
using isthmus::remap::LinkSlab;
using isthmus::remap::ParallelNcFile;
using isthmus::remap::read_scrip_weights;
using isthmus::remap::ScripWeightsWriter;
using isthmus::remap::WeightsInfo;

namespace {

// The ways this build can write: through rank 0 always, each rank its own where PnetCDF is in.
std::vector<bool> ways() {
  if (ParallelNcFile::parallel_available()) return {true, false};
  return {false};
}

// Sets ISTHMUS_PNETCDF for one way, for the lifetime of the object.
struct Way {
  explicit Way(bool parallel) { setenv("ISTHMUS_PNETCDF", parallel ? "1" : "0", 1); }
  ~Way() { unsetenv("ISTHMUS_PNETCDF"); }
};

// Rows of rank r: uneven, rank 1 none, the last rank enough doubles for two messages to rank 0
// (32 MiB each) with 5 values per row.
int64_t rows_of(int r, int p) {
  if (p > 1 && r == 1) return 0;
  if (r == p - 1) return 900000;
  return 3 + 7 * r;
}

double value_at(int64_t row, int64_t col) { return double(row) * 8 + double(col) + 0.25; }

}  // namespace

TEST(ParallelNcFile, EveryRankWritesItsRowsAtTheirPlace) {
  Watchdog dog("ParallelNcFile.EveryRankWritesItsRowsAtTheirPlace", 300);
  TempRunDir dir("nc_out_rows");
  const int rank = world_rank(), p = world_size();
  int64_t first = 0, total = 0;
  for (int r = 0; r < p; ++r) {
    if (r < rank) first += rows_of(r, p);
    total += rows_of(r, p);
  }
  const int64_t mine = rows_of(rank, p);
  std::vector<double> d(static_cast<size_t>(mine * 5));
  std::vector<int> i(static_cast<size_t>(mine));
  std::vector<long long> ll(static_cast<size_t>(mine));
  std::vector<signed char> b(static_cast<size_t>(mine));
  for (int64_t k = 0; k < mine; ++k) {
    for (int c = 0; c < 5; ++c) d[size_t(k * 5 + c)] = value_at(first + k, c);
    i[size_t(k)] = int(first + k) - 7;
    ll[size_t(k)] = first + k + 1;
    b[size_t(k)] = static_cast<signed char>((first + k) % 200 - 100);
  }
  for (const bool parallel : ways()) {
    Way way(parallel);
    const std::string path = dir / (parallel ? "parallel.nc" : "rank0.nc");
    {
      ParallelNcFile f(MPI_COMM_WORLD, path, false);
      EXPECT_EQ(f.parallel(), parallel);
      const int n = f.def_dim("n", total), five = f.def_dim("five", 5);
      const int vd = f.def_var("d", ParallelNcFile::Double, {n, five});
      const int vi = f.def_var("i", ParallelNcFile::Int, {n});
      const int vl = f.def_var("l", ParallelNcFile::Int, {n});  // long long into int
      const int vb = f.def_var("b", ParallelNcFile::Byte, {n});
      f.put_att_text(-1, "title", "rows of every rank");
      f.put_att_text(vd, "units", "none");
      f.enddef();
      f.put_rows(vd, first, mine, d.data());
      f.put_rows(vi, first, mine, i.data());
      f.put_rows(vl, first, mine, ll.data());
      f.put_rows(vb, first, mine, b.data());
      f.close();
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank != 0) continue;
    int id = -1;
    ASSERT_EQ(nc_open(path.c_str(), NC_NOWRITE, &id), NC_NOERR);
    int format = 0;
    nc_inq_format(id, &format);
    EXPECT_EQ(format, NC_FORMAT_64BIT_OFFSET);
    std::vector<double> gd(static_cast<size_t>(total * 5));
    std::vector<int> gi(static_cast<size_t>(total)), gl(static_cast<size_t>(total));
    std::vector<signed char> gb(static_cast<size_t>(total));
    int v = -1;
    ASSERT_EQ(nc_inq_varid(id, "d", &v), NC_NOERR);
    ASSERT_EQ(nc_get_var_double(id, v, gd.data()), NC_NOERR);
    ASSERT_EQ(nc_inq_varid(id, "i", &v), NC_NOERR);
    ASSERT_EQ(nc_get_var_int(id, v, gi.data()), NC_NOERR);
    ASSERT_EQ(nc_inq_varid(id, "l", &v), NC_NOERR);
    ASSERT_EQ(nc_get_var_int(id, v, gl.data()), NC_NOERR);
    ASSERT_EQ(nc_inq_varid(id, "b", &v), NC_NOERR);
    ASSERT_EQ(nc_get_var_schar(id, v, gb.data()), NC_NOERR);
    char title[64] = {};
    ASSERT_EQ(nc_get_att_text(id, NC_GLOBAL, "title", title), NC_NOERR);
    EXPECT_STREQ(title, "rows of every rank");
    nc_close(id);
    int64_t bad = 0;
    for (int64_t k = 0; k < total; ++k) {
      for (int c = 0; c < 5; ++c) bad += gd[size_t(k * 5 + c)] != value_at(k, c);
      bad += gi[size_t(k)] != int(k) - 7;
      bad += gl[size_t(k)] != int(k + 1);
      bad += gb[size_t(k)] != static_cast<signed char>(k % 200 - 100);
    }
    EXPECT_EQ(bad, 0) << (parallel ? "parallel" : "through rank 0");
  }
}

TEST(ParallelNcFile, AnErrorOnOneRankFailsEveryRank) {
  Watchdog dog("ParallelNcFile.AnErrorOnOneRankFailsEveryRank", 120);
  TempRunDir dir("nc_out_errors");
  const int rank = world_rank(), p = world_size();
  for (const bool parallel : ways()) {
    Way way(parallel);
    // Rows past the end of the dimension, on the last rank only.
    {
      ParallelNcFile f(MPI_COMM_WORLD, dir / "past_the_end.nc", false);
      const int n = f.def_dim("n", p);
      const int v = f.def_var("x", ParallelNcFile::Double, {n});
      f.enddef();
      const double x[2] = {1, 2};
      const auto [code, what] = outcome([&] {  // agreed when the file is closed
        f.put_rows(v, rank, rank == p - 1 ? 2 : 1, x);
        f.close();
      });
      EXPECT_TRUE(same_code_everywhere(code, ISTHMUS_ERR_FILE)) << what;
      EXPECT_NE(what.find("past_the_end.nc\": x rows [" + std::to_string(p - 1) + ", " +
                          std::to_string(p + 1) + ")"),
                std::string::npos)
          << what;
    }
    // A value out of the variable's range (2^40 into an int), on rank 0 only.
    {
      ParallelNcFile f(MPI_COMM_WORLD, dir / "range.nc", false);
      const int n = f.def_dim("n", p);
      const int v = f.def_var("i", ParallelNcFile::Int, {n});
      f.enddef();
      const long long x = rank == 0 ? (1LL << 40) : 5;
      const auto [code, what] = outcome([&] {
        f.put_rows(v, rank, 1, &x);
        f.close();
      });
      EXPECT_TRUE(same_code_everywhere(code, ISTHMUS_ERR_FILE)) << what;
      EXPECT_NE(what.find("i rows [0, 1)"), std::string::npos) << what;
    }
    // Definitions that differ between ranks: every rank would write at its own offsets.
    if (p > 1) {
      const auto [code, what] = outcome([&] {
        ParallelNcFile f(MPI_COMM_WORLD, dir / "headers.nc", false);
        const int n = f.def_dim("n", 4);
        f.def_var("x", ParallelNcFile::Double, {n});
        f.put_att_text(-1, "key", rank == p - 1 ? "abcdef" : "abc");
        f.enddef();
      });
      // PnetCDF's safe mode (PNETCDF_SAFE_MODE=1) compares each definition itself, first.
      const bool safe_mode = parallel && std::getenv("PNETCDF_SAFE_MODE") &&
                             std::string(std::getenv("PNETCDF_SAFE_MODE")) == "1";
      if (safe_mode) {
        EXPECT_TRUE(same_code_everywhere(code, ISTHMUS_ERR_FILE)) << what;
        EXPECT_NE(what.find("attribute key: "), std::string::npos) << what;
      } else {
        EXPECT_TRUE(same_code_everywhere(code, ISTHMUS_ERR_ARG)) << what;
        EXPECT_NE(what.find("the definitions of the file"), std::string::npos) << what;
      }
    }
    // A file that cannot be created.
    {
      const auto [code, what] = outcome([&] {
        ParallelNcFile f(MPI_COMM_WORLD, dir / "no_such_dir/x.nc", false);
      });
      EXPECT_TRUE(same_code_everywhere(code, ISTHMUS_ERR_FILE)) << what;
      EXPECT_NE(what.find("no_such_dir/x.nc\": create"), std::string::npos) << what;
    }
  }
}

// The collective SCRIP writer: every rank appends its links (one rank more than a chunk of 2^20,
// one none), twice; the file lists them in rank order, call after call.
TEST(ScripWeightsWriterCollective, LinksInRankOrderCallAfterCall) {
  Watchdog dog("ScripWeightsWriterCollective.LinksInRankOrderCallAfterCall", 300);
  TempRunDir dir("nc_out_links");
  const int rank = world_rank(), p = world_size();
  const auto count = [&](int call, int r) -> int64_t {
    if (p > 1 && r == p - 1 && call == 0) return 0;
    if (r == 0 && call == 1) return (int64_t{1} << 20) + 3;
    return 11 + 5 * r + call;
  };
  const int64_t nsrc = 1000, ndst = 2000;
  WeightsInfo info;
  info.num_wgts = 2;
  info.src_grid_size = nsrc;
  info.dst_grid_size = ndst;
  info.map_method = "test";
  std::vector<int64_t> before(2, 0);
  for (int call = 0; call < 2; ++call)
    for (int r = 0; r < p; ++r) {
      info.num_links += count(call, r);
      if (r < rank) before[size_t(call)] += count(call, r);
    }
  const int64_t after_first = info.num_links - [&] {
    int64_t s = 0;
    for (int r = 0; r < p; ++r) s += count(1, r);
    return s;
  }();
  // link number k (global): src k % nsrc, dst (3k) % ndst, weights k + 0.5 and -k
  const auto link = [&](int64_t k, int64_t* s, int32_t* d, double* w) {
    *s = k % nsrc;
    *d = static_cast<int32_t>((3 * k) % ndst);
    w[0] = double(k) + 0.5;
    w[1] = -double(k);
  };
  for (const bool parallel : ways()) {
    Way way(parallel);
    const std::string path = dir / (parallel ? "parallel.nc" : "rank0.nc");
    {
      ScripWeightsWriter writer(MPI_COMM_WORLD, path, info);
      EXPECT_EQ(writer.parallel(), parallel);
      for (int call = 0; call < 2; ++call) {
        const int64_t n = count(call, rank), k0 = (call == 0 ? 0 : after_first) + before[size_t(call)];
        std::vector<int64_t> s(static_cast<size_t>(n));
        std::vector<int32_t> d(static_cast<size_t>(n));
        std::vector<double> w(static_cast<size_t>(2 * n));
        for (int64_t k = 0; k < n; ++k) link(k0 + k, &s[size_t(k)], &d[size_t(k)], &w[size_t(2 * k)]);
        writer.append(s.data(), d.data(), w.data(), n);
      }
      writer.close();
    }
    WeightsInfo got;
    const LinkSlab slab = read_scrip_weights(MPI_COMM_WORLD, path, {nsrc, ndst}, &got);
    EXPECT_EQ(got.num_links, info.num_links);
    int64_t bad = 0;
    for (int64_t i = 0; i < slab.size(); ++i) {
      int64_t s;
      int32_t d;
      double w[2];
      link(slab.first_link + i, &s, &d, w);
      bad += slab.src[size_t(i)] != s || slab.dst[size_t(i)] != d ||
             slab.weights[size_t(2 * i)] != w[0] || slab.weights[size_t(2 * i + 1)] != w[1];
    }
    EXPECT_EQ(bad, 0) << (parallel ? "parallel" : "through rank 0");
    int64_t read = slab.size();
    MPI_Allreduce(MPI_IN_PLACE, &read, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
    EXPECT_EQ(read, info.num_links);
  }
}

// Grid variables by slabs: each rank its points; a slab past the grid's end on the last rank
// fails every rank, with the same code, when the file is closed (puts do not wait to agree).
TEST(ScripWeightsWriterCollective, GridSlabsAndAnErrorAgreedAtClose) {
  Watchdog dog("ScripWeightsWriterCollective.GridSlabsAndAnErrorAgreedAtClose", 120);
  TempRunDir dir("nc_out_grid");
  const int rank = world_rank(), p = world_size();
  isthmus::remap::Grid g;
  g.name = "g";
  const int64_t n = 10 * p;
  g.dims = {n};
  for (int64_t c = 0; c < n; ++c) {
    g.lon.push_back(0.01 * double(c));
    g.lat.push_back(-0.02 * double(c));
    g.mask.push_back(c % 3 != 0);
  }
  WeightsInfo info;
  info.src_grid_size = info.dst_grid_size = n;
  isthmus::remap::WeightsGridVariables vars;
  vars.src = vars.dst = &g;
  vars.fractions = true;
  for (const bool parallel : ways()) {
    Way way(parallel);
    const std::string path = dir / (parallel ? "parallel.nc" : "rank0.nc");
    for (const bool broken : {false, true}) {
      const auto [code, what] = outcome([&] {
        ScripWeightsWriter writer(MPI_COMM_WORLD, path, info, &vars);
        const int64_t b = 10 * rank, e = broken && rank == p - 1 ? b + 11 : b + 10;
        std::vector<double> frac;
        for (int64_t c = b; c < e; ++c) frac.push_back(0.5 * double(c));
        for (int side = 0; side < 2; ++side) {
          writer.write_points(side, g, 0, side == 0 ? b : n - e, e - b);  // dst from the end
          writer.write_fractions(side, side == 0 ? b : n - e, e - b, frac.data());
        }
        writer.close();
      });
      EXPECT_TRUE(same_code_everywhere(code, broken ? ISTHMUS_ERR_ARG : ISTHMUS_OK)) << what;
      if (broken) {
        EXPECT_NE(what.find("src points [" + std::to_string(n - 10) + ", " + std::to_string(n + 1) + ")"),
                  std::string::npos)
            << what;
        continue;
      }
      if (rank != 0) continue;
      int id = -1, v = -1;
      ASSERT_EQ(nc_open(path.c_str(), NC_NOWRITE, &id), NC_NOERR);
      for (const char* side : {"src", "dst"}) {
        std::vector<double> lat(static_cast<size_t>(n)), frac(static_cast<size_t>(n));
        std::vector<int> mask(static_cast<size_t>(n));
        ASSERT_EQ(nc_inq_varid(id, (std::string(side) + "_grid_center_lat").c_str(), &v), NC_NOERR);
        ASSERT_EQ(nc_get_var_double(id, v, lat.data()), NC_NOERR);
        ASSERT_EQ(nc_inq_varid(id, (std::string(side) + "_grid_imask").c_str(), &v), NC_NOERR);
        ASSERT_EQ(nc_get_var_int(id, v, mask.data()), NC_NOERR);
        ASSERT_EQ(nc_inq_varid(id, (std::string(side) + "_grid_frac").c_str(), &v), NC_NOERR);
        ASSERT_EQ(nc_get_var_double(id, v, frac.data()), NC_NOERR);
        int64_t bad = 0;
        for (int64_t c = 0; c < n; ++c) {
          bad += lat[size_t(c)] != -0.02 * double(c) || mask[size_t(c)] != (c % 3 != 0 ? 1 : 0);
          // the destination's fractions were written rank by rank from the grid's end
          const int64_t r = side[0] == 's' ? c / 10 : (n - 1 - c) / 10;
          const int64_t k = side[0] == 's' ? c : 10 * r + (c - (n - 10 * (r + 1)));
          bad += frac[size_t(c)] != 0.5 * double(k);
        }
        EXPECT_EQ(bad, 0) << side << (parallel ? " parallel" : " through rank 0");
      }
      nc_close(id);
    }
  }
}

// ISTHMUS_PNETCDF set on some ranks only: rank 0's choice holds on every rank (else some ranks
// would wait in MPI-IO's collective open while the others sent their rows to rank 0).
TEST(ParallelNcFile, RankZerosChoiceOfTheWayHoldsEverywhere) {
  Watchdog dog("ParallelNcFile.RankZerosChoiceOfTheWayHoldsEverywhere", 60);
  TempRunDir dir("nc_out_choice");
  const int rank = world_rank();
  for (const bool parallel : ways()) {
    Way way(rank == 0 ? parallel : !parallel);
    ParallelNcFile f(MPI_COMM_WORLD, dir / "choice.nc", false);
    EXPECT_EQ(f.parallel(), parallel);
    const int n = f.def_dim("n", world_size());
    const int v = f.def_var("x", ParallelNcFile::Double, {n});
    f.enddef();
    const double x = rank;
    f.put_rows(v, rank, 1, &x);
    f.close();
  }
}
