// The coupler through the C API, as a model uses it: a namcouple in the run directory, OASIS
// partitions, the real ORCA2 <-> LMDZ bilinear weights both ways (destination side one way,
// partial sums on the source side the other), put/get with OASIS's info codes, and errors.
#include <gtest/gtest.h>
#include <isthmus.h>
#include <mpi.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "capi_reference.h"
#include "mpi_test_util.h"

namespace {

const std::string kData = std::string(ISTHMUS_TEST_DATA) + "/orca2-lmdz";

double sst(int64_t g) { return 271.0 + 30 * std::sin(g * 0.0007) + g * 1e-7; }
double flux(int64_t g) { return -120.0 + 80 * std::cos(g * 0.003); }

// The serial sum of a weights file in file order (the destination side's bits, which
// tests/remap/test_mapping_file.cpp proves equal to a hand-written serial sum): the mapping
// applied on this rank alone.
std::vector<double> reference(const std::string& file, int64_t ns, int64_t nd, double (*f)(int64_t)) {
  std::vector<double> x(static_cast<size_t>(ns));
  for (int64_t g = 0; g < ns; ++g) x[g] = f(g);
  const std::vector<std::vector<double>> y = apply_serially(kData + "/" + file, ns, nd, {x});
  return y.empty() ? std::vector<double>(static_cast<size_t>(nd), 0.0) : y[0];
}

// OASIS apple partition of [0, n) over `size` ranks: {1, offset, length}.
std::vector<int> apple(int64_t n, int size, int rank) {
  const int64_t a = n * rank / size, b = n * (rank + 1) / size;
  return {1, static_cast<int>(a), static_cast<int>(b - a)};
}

}  // namespace

// The namcouple, then its YAML form (isthmus_config_convert): the same values, bit for bit.
TEST(CapiCoupler, Orca2LmdzBothWaysThroughANamcoupleAndItsYaml) {
  Watchdog w("capi coupler orca2-lmdz");
  const int me = world_rank(), size = world_size();
  if (size < 2) GTEST_SKIP() << "needs two components";
  const TempRunDir dir("capi_coupler");
  const std::string nam = dir.write("namcouple",
             "$NFIELDS\n  2\n$END\n$RUNTIME\n  8\n$END\n$NLOGPRT\n  0 0\n$END\n$STRINGS\n"
             "O_SST A_SST 1 2 1 rst_o.nc EXPORTED\n182 149 96 72 torc lmdz\nP 2 P 0\nMAPPING\n"
             "rmp_torc_to_lmdz_BILINEAR.nc dst bfb\n"
             "A_FLX O_FLX 1 4 1 rst_a.nc EXPORTED\n96 72 182 149 lmdz torc\nP 0 P 2\nMAPPING\n"
             "rmp_lmdz_to_torc_BILINEAR.nc src sum\n$END\n");
  const std::string yaml = dir / "coupling.yaml";
  if (me == 0) {
    int64_t length = 0;
    char err[512];
    ASSERT_EQ(isthmus_config_convert(nam.c_str(), nullptr, 0, &length, err, sizeof err), ISTHMUS_OK) << err;
    std::string text(length + 1, '\0');
    ASSERT_EQ(isthmus_config_convert(nam.c_str(), text.data(), length + 1, &length, err, sizeof err), ISTHMUS_OK);
    text.resize(length);
    std::ofstream(yaml) << text;
  }
  MPI_Barrier(MPI_COMM_WORLD);
  const bool ocean = me < size / 2 + (size % 2);
  const int nocean = size / 2 + (size % 2);
  std::vector<std::vector<double>> received(2);
  for (int format = 0; format < 2; ++format) {
    SCOPED_TRACE(format == 0 ? "namcouple" : "YAML");
    isthmus_coupler_options opt{kData.c_str(), 0.0};
    isthmus_coupler* cpl = nullptr;
    ASSERT_EQ(isthmus_coupler_create(MPI_COMM_WORLD, ocean ? "ocean" : "atmos",
                                     (format == 0 ? nam : yaml).c_str(), &opt, &cpl),
              ISTHMUS_OK)
        << isthmus_coupler_last_error(cpl);
    MPI_Comm local;
    ASSERT_EQ(isthmus_coupler_get_local_comm(cpl, &local), ISTHMUS_OK);
    int lr, ls;
    MPI_Comm_rank(local, &lr);
    MPI_Comm_size(local, &ls);
    EXPECT_EQ(ls, ocean ? nocean : size - nocean);
    isthmus_context* ctx = nullptr;
    ASSERT_EQ(isthmus_coupler_get_context(cpl, &ctx), ISTHMUS_OK);
    const int64_t no = 182 * 149, na = 96 * 72, n = ocean ? no : na;
    std::vector<int> ig = apple(n, ls, lr);
    isthmus_decomp* d = nullptr;
    ASSERT_EQ(isthmus_decomp_create_oasis(ctx, n, ig.data(), 3, &d), ISTHMUS_OK);
    int part = -1, out = -1, in = -1;
    // the atmosphere through a decomposition, the ocean straight from its ig_paral with the
    // grid size left to OASIS's rule (the largest index named, plus one)
    if (ocean) {
      ASSERT_EQ(isthmus_coupler_def_partition_oasis(cpl, 0, ig.data(), 3, "grid", &part), ISTHMUS_OK)
          << isthmus_coupler_last_error(cpl);
    } else {
      ASSERT_EQ(isthmus_coupler_def_partition(cpl, d, "grid", &part), ISTHMUS_OK);
    }
    ASSERT_EQ(isthmus_coupler_def_var(cpl, ocean ? "O_SST" : "A_FLX", part, ISTHMUS_VAR_OUT,
                                      ISTHMUS_DOUBLE, 1, &out), ISTHMUS_OK);
    ASSERT_EQ(isthmus_coupler_def_var(cpl, ocean ? "O_FLX" : "A_SST", part, ISTHMUS_VAR_IN,
                                      ISTHMUS_DOUBLE, 1, &in), ISTHMUS_OK);
    ASSERT_EQ(isthmus_coupler_enddef(cpl), ISTHMUS_OK) << isthmus_coupler_last_error(cpl);
    const std::vector<double> to_atmos = reference("rmp_torc_to_lmdz_BILINEAR.nc", no, na, sst);
    const std::vector<double> to_ocean = reference("rmp_lmdz_to_torc_BILINEAR.nc", na, no, flux);
    const int64_t first = ig[1], len = ig[2];
    std::vector<double> x(len), y(len);
    for (int64_t i = 0; i < len; ++i) x[i] = ocean ? sst(first + i) : flux(first + i);
    int64_t wrong = 0, codes = 0;
    // OASIS's inquiries: one coupling per field, its period; the two components' communicators
    int ncpl = -1, period = -1;
    EXPECT_EQ(isthmus_coupler_get_ncpl(cpl, out, &ncpl), ISTHMUS_OK);
    EXPECT_EQ(ncpl, 1);
    EXPECT_EQ(isthmus_coupler_get_freqs(cpl, in, 1, &period), ISTHMUS_OK);
    EXPECT_EQ(period, ocean ? 4 : 2);
    MPI_Comm intra = MPI_COMM_NULL, inter = MPI_COMM_NULL;
    ASSERT_EQ(isthmus_coupler_get_intracomm(cpl, ocean ? "atmos" : "ocean", &intra), ISTHMUS_OK)
        << isthmus_coupler_last_error(cpl);
    ASSERT_EQ(isthmus_coupler_get_intercomm(cpl, ocean ? "atmos" : "ocean", &inter), ISTHMUS_OK)
        << isthmus_coupler_last_error(cpl);
    int intra_size = 0, remote = 0;
    MPI_Comm_size(intra, &intra_size);
    MPI_Comm_remote_size(inter, &remote);
    EXPECT_EQ(intra_size, size);
    EXPECT_EQ(remote, ocean ? size - nocean : nocean);
    MPI_Comm_free(&intra);
    MPI_Comm_free(&inter);
    // what a front end asks: configured names, array sizes, the component's number, Fortran comms
    int yes = -1, absent = -1, index = -1, bundle = -1;
    int64_t points = -1;
    EXPECT_EQ(isthmus_coupler_is_configured(cpl, "O_SST", &yes), ISTHMUS_OK);
    EXPECT_EQ(isthmus_coupler_is_configured(cpl, "O_NOPE", &absent), ISTHMUS_OK);
    EXPECT_EQ(yes, 1);
    EXPECT_EQ(absent, 0);
    EXPECT_EQ(isthmus_coupler_get_var_size(cpl, out, &points, &bundle), ISTHMUS_OK);
    EXPECT_EQ(points, ig[2]);
    EXPECT_EQ(bundle, 1);
    EXPECT_EQ(isthmus_coupler_get_component_index(cpl, &index), ISTHMUS_OK);
    EXPECT_EQ(index, ocean ? 0 : 1);
    MPI_Fint flocal = 0;
    EXPECT_EQ(isthmus_coupler_get_local_comm_f(cpl, &flocal), ISTHMUS_OK);
    int fsize = 0;
    MPI_Comm_size(MPI_Comm_f2c(flocal), &fsize);
    EXPECT_EQ(fsize, ls);
    for (int date = 0; date < 8; ++date) {
      int info = -1, inquired = -1;
      ASSERT_EQ(isthmus_coupler_put_inquire(cpl, out, date, &inquired), ISTHMUS_OK);
      // both components put first, then get: no wait on each other's put
      ASSERT_EQ(isthmus_coupler_put(cpl, out, date, x.data(), &info), ISTHMUS_OK)
          << isthmus_coupler_last_error(cpl);
      codes += info != inquired;
      codes += info != (date % (ocean ? 2 : 4) == 0 ? ISTHMUS_COUPLING_SENT : ISTHMUS_COUPLING_OK);
      std::fill(y.begin(), y.end(), -1.0);
      ASSERT_EQ(isthmus_coupler_get(cpl, in, date, y.data(), &info), ISTHMUS_OK)
          << isthmus_coupler_last_error(cpl);
      const bool coupled = date % (ocean ? 4 : 2) == 0;
      codes += info != (coupled ? ISTHMUS_COUPLING_RECVD : ISTHMUS_COUPLING_OK);
      if (!coupled) continue;
      received[format].insert(received[format].end(), y.begin(), y.end());
      for (int64_t i = 0; i < len; ++i) {
        // to the atmosphere: destination side, the serial sum's bits; to the ocean: partial
        // sums added on arrival, to 1e-14 relative (unmapped ocean points get 0)
        const double r = ocean ? to_ocean[first + i] : to_atmos[first + i];
        wrong += ocean ? std::fabs(y[i] - r) > 1e-14 * std::fabs(r) : std::memcmp(&y[i], &r, sizeof r) != 0;
      }
    }
    EXPECT_EQ(isthmus_coupler_terminate(cpl), ISTHMUS_OK);
    EXPECT_TRUE(all_ranks(codes == 0)) << codes << " wrong info codes";
    EXPECT_TRUE(all_ranks(wrong == 0)) << wrong << " wrong values";
    isthmus_decomp_destroy(&d);
    isthmus_context_destroy(&ctx);
    isthmus_coupler_destroy(&cpl);
  }
  EXPECT_FALSE(received[0].empty());
  EXPECT_TRUE(all_ranks(received[0].size() == received[1].size() &&
                        std::memcmp(received[0].data(), received[1].data(),
                                    received[0].size() * sizeof(double)) == 0));
}

// Errors through the C API: a missing configuration file fails on every rank with
// ISTHMUS_ERR_CONFIG and a message naming it; the handle then refuses every call; a get
// before enddef names the component.
TEST(CapiCoupler, ErrorsNameWhatAndWhere) {
  Watchdog w("capi coupler errors");
  isthmus_coupler* cpl = nullptr;
  int rc = isthmus_coupler_create(MPI_COMM_WORLD, "ocean", "/nonexistent/namcouple", nullptr, &cpl);
  EXPECT_TRUE(same_code_everywhere(rc, ISTHMUS_ERR_CONFIG));
  EXPECT_EQ(std::string(isthmus_coupler_last_error(cpl)),
            "isthmus: rank " + std::to_string(world_rank()) +
                ": isthmus_coupler_create: the configuration file /nonexistent/namcouple cannot be "
                "read (component ocean)");
  EXPECT_EQ(isthmus_coupler_enddef(cpl), ISTHMUS_ERR_ARG);
  isthmus_coupler_destroy(&cpl);
  EXPECT_EQ(cpl, nullptr);

  const TempRunDir dir("capi_coupler_errors");
  const std::string nam = dir.write("namcouple.empty", "$NFIELDS\n  0\n$END\n$RUNTIME\n  10\n$END\n$STRINGS\n$END\n");
  ASSERT_EQ(isthmus_coupler_create(MPI_COMM_WORLD, "ocean", nam.c_str(), nullptr, &cpl), ISTHMUS_OK)
      << isthmus_coupler_last_error(cpl);
  double v = 0;
  int info = -1;
  EXPECT_EQ(isthmus_coupler_get(cpl, 0, 0, &v, &info), ISTHMUS_ERR_ARG);
  EXPECT_EQ(std::string(isthmus_coupler_last_error(cpl)),
            "isthmus: rank " + std::to_string(world_rank()) +
                ": isthmus_coupler_get: get before enddef (component ocean)");
  // Definitions are local (as OASIS's): an OASIS partition of an unknown kind fails on the
  // last rank only, and the id is not used up (the last rank goes on with a good one)
  const int last = world_size() - 1;
  const std::string me = "isthmus: rank " + std::to_string(world_rank()) + ": ";
  int part = -1;
  const int good[3] = {1, world_rank() * 10, 10}, bad[3] = {9, 0, 10};
  rc = isthmus_coupler_def_partition_oasis(cpl, 0, world_rank() == last ? bad : good, 3, "p", &part);
  EXPECT_EQ(rc, world_rank() == last ? ISTHMUS_ERR_DECOMP : ISTHMUS_OK);
  if (world_rank() == last) {
    EXPECT_EQ(std::string(isthmus_coupler_last_error(cpl)),
              me + "isthmus_coupler_def_partition_oasis: OASIS partition kind 9 is unknown (0 "
                   "serial, 1 apple, 2 box, 3 orange, 4 points)");
  } else {
    EXPECT_EQ(part, 0);
  }
  if (world_rank() == last) {
    EXPECT_EQ(isthmus_coupler_def_partition_oasis(cpl, 0, good, 3, "p", &part), ISTHMUS_OK)
        << isthmus_coupler_last_error(cpl);
    EXPECT_EQ(part, 0);
  }
  // a bad direction on the last rank only: its own error, the others go on
  int var = -1;
  rc = isthmus_coupler_def_var(cpl, "F", 0, world_rank() == last ? 7 : ISTHMUS_VAR_OUT,
                               ISTHMUS_DOUBLE, 1, &var);
  EXPECT_EQ(rc, world_rank() == last ? ISTHMUS_ERR_ARG : ISTHMUS_OK);
  if (world_rank() == last) {
    EXPECT_EQ(std::string(isthmus_coupler_last_error(cpl)),
              me + "isthmus_coupler_def_var: direction 7 (0 ISTHMUS_VAR_IN, 1 ISTHMUS_VAR_OUT)");
  }
  // a serial partition without isize: the grid is its length, known at once
  const int serial[3] = {0, 0, 57};
  EXPECT_EQ(isthmus_coupler_def_partition_oasis(cpl, 0, serial, 3, "s", &part), ISTHMUS_OK)
      << isthmus_coupler_last_error(cpl);
  EXPECT_EQ(part, 1);
  int64_t npoints = 0, gsize = 0;
  EXPECT_EQ(isthmus_coupler_get_partition_size(cpl, 1, &npoints, &gsize), ISTHMUS_OK);
  EXPECT_EQ(npoints, 57);
  EXPECT_EQ(gsize, 57);
  // enddef compares the definitions: the last rank's first failed where the others' succeeded
  // (one rank alone failed alike with itself, and goes on)
  rc = isthmus_coupler_enddef(cpl);
  if (world_size() == 1) {
    EXPECT_EQ(rc, ISTHMUS_OK) << isthmus_coupler_last_error(cpl);
  } else {
    EXPECT_TRUE(same_code_everywhere(rc, ISTHMUS_ERR_ARG)) << isthmus_coupler_last_error(cpl);
    EXPECT_EQ(std::string(isthmus_coupler_last_error(cpl)),
              me + "isthmus_coupler_enddef: enddef: the coupling ranks of component ocean made "
                   "different definitions: definition 1 is \"def_partition 0 \"p\": global size "
                   "from the points\" on rank 0 but \"def_partition \"p\": failed: OASIS partition "
                   "kind 9 is unknown (0 serial, 1 apple, 2 box, 3 orange, 4 points)\" on rank " +
                   std::to_string(last) +
                   " (every coupling rank makes the same definitions in the same order)");
  }
  isthmus_coupler_destroy(&cpl);
}

// Definitions are local and compared in enddef: a partition without a global size gets the
// largest index of any rank's points (plus one) there, and definitions that differ between the
// ranks fail enddef on every rank, naming the first that differs and the two ranks.
TEST(CapiCoupler, DefinitionsAreComparedAndSettledInEnddef) {
  Watchdog w("capi coupler definitions");
  const TempRunDir dir("capi_coupler_definitions");
  const std::string nam = dir.write("namcouple.empty", "$NFIELDS\n  0\n$END\n$RUNTIME\n  10\n$END\n$STRINGS\n$END\n");
  const int last = world_size() - 1;
  const std::string me = "isthmus: rank " + std::to_string(world_rank()) + ": ";
  enum Variant { Same, OtherBundle, Missing };
  for (Variant v : {Same, OtherBundle, Missing}) {
    SCOPED_TRACE(v);
    isthmus_coupler* cpl = nullptr;
    ASSERT_EQ(isthmus_coupler_create(MPI_COMM_WORLD, "ocean", nam.c_str(), nullptr, &cpl), ISTHMUS_OK)
        << isthmus_coupler_last_error(cpl);
    // an apple partition of 10 points per rank, without isize
    const int apple[3] = {1, world_rank() * 10, 10};
    int part = -1, var = -1;
    ASSERT_EQ(isthmus_coupler_def_partition_oasis(cpl, 0, apple, 3, "p", &part), ISTHMUS_OK)
        << isthmus_coupler_last_error(cpl);
    int64_t npoints = 0, gsize = 0;
    EXPECT_EQ(isthmus_coupler_get_partition_size(cpl, part, &npoints, &gsize), ISTHMUS_OK);
    EXPECT_EQ(npoints, 10);
    EXPECT_EQ(gsize, -1);  // not settled before enddef
    const bool odd = world_size() > 1 && world_rank() == last;
    if (!(odd && v == Missing)) {
      ASSERT_EQ(isthmus_coupler_def_var(cpl, "F", part, ISTHMUS_VAR_OUT, ISTHMUS_DOUBLE,
                                        odd && v == OtherBundle ? 2 : 1, &var),
                ISTHMUS_OK)
          << isthmus_coupler_last_error(cpl);
    }
    const int rc = isthmus_coupler_enddef(cpl);
    if (v == Same || world_size() == 1) {
      EXPECT_TRUE(same_code_everywhere(rc, ISTHMUS_OK)) << isthmus_coupler_last_error(cpl);
      EXPECT_EQ(isthmus_coupler_get_partition_size(cpl, part, &npoints, &gsize), ISTHMUS_OK);
      EXPECT_EQ(gsize, 10 * world_size());
    } else {
      EXPECT_TRUE(same_code_everywhere(rc, ISTHMUS_ERR_ARG)) << isthmus_coupler_last_error(cpl);
      const std::string theirs = v == Missing ? "no definition"
                                              : "\"def_var \"F\": partition 0, out, double, bundle 2\"";
      EXPECT_EQ(std::string(isthmus_coupler_last_error(cpl)),
                me + "isthmus_coupler_enddef: enddef: the coupling ranks of component ocean made "
                     "different definitions: definition 2 is \"def_var \"F\": partition 0, out, "
                     "double, bundle 1\" on rank 0 but " + theirs + " on rank " +
                     std::to_string(last) +
                     " (every coupling rank makes the same definitions in the same order)");
    }
    isthmus_coupler_destroy(&cpl);
  }
  // more partitions without a size than ride on enddef's allgather (four): the others are
  // settled by a reduction; each gets one more than the largest index of any rank
  isthmus_coupler* cpl = nullptr;
  ASSERT_EQ(isthmus_coupler_create(MPI_COMM_WORLD, "ocean", nam.c_str(), nullptr, &cpl), ISTHMUS_OK)
      << isthmus_coupler_last_error(cpl);
  constexpr int kParts = 7;
  for (int k = 0; k < kParts; ++k) {
    // k + 1 points per rank, the last rank's shifted by k: the largest index (k+1) * size + k - 1
    const int offset = world_rank() * (k + 1) + (world_rank() == world_size() - 1 ? k : 0);
    const int apple[3] = {1, offset, k + 1};
    int part = -1;
    ASSERT_EQ(isthmus_coupler_def_partition_oasis(cpl, 0, apple, 3, "q", &part), ISTHMUS_OK)
        << isthmus_coupler_last_error(cpl);
  }
  ASSERT_TRUE(same_code_everywhere(isthmus_coupler_enddef(cpl), ISTHMUS_OK)) << isthmus_coupler_last_error(cpl);
  for (int k = 0; k < kParts; ++k) {
    int64_t npoints = 0, gsize = 0;
    EXPECT_EQ(isthmus_coupler_get_partition_size(cpl, k, &npoints, &gsize), ISTHMUS_OK);
    EXPECT_EQ(npoints, k + 1);
    EXPECT_EQ(gsize, int64_t{k + 1} * world_size() + k) << "partition " << k;
  }
  isthmus_coupler_destroy(&cpl);
}
