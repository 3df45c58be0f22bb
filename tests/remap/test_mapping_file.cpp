// Mappings from OASIS3-MCT's real ORCA2 -> LMDZ weights files, through the C API: at every rank
// count and for random decompositions of both grids, the same bits as the mapping on one rank.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "isthmus.h"
#include "mpi_test_util.h"

namespace {

const std::string kData = ISTHMUS_TEST_DATA "/orca2-lmdz/";
constexpr int64_t kTorc = 182 * 149, kLmdz = 96 * 72;

std::vector<int64_t> random_part(int64_t n, int parts, int part, unsigned seed) {
  std::vector<int64_t> perm(n);
  std::iota(perm.begin(), perm.end(), 0);
  std::mt19937_64 rng(seed);
  std::shuffle(perm.begin(), perm.end(), rng);
  return std::vector<int64_t>(perm.begin() + n * part / parts, perm.begin() + n * (part + 1) / parts);
}

double sst(int64_t g, int l) { return 271.0 + 30.0 * std::sin(g * 0.001 + l) + (g % 13) * 0.01; }

// Maps two fields (1 and 2 levels) with the file on comm, the source and destination parts
// given; returns the destination values (field 0, then field 1 level-major).
std::vector<double> map_on(MPI_Comm comm, const std::string& file, const std::vector<int64_t>& s,
                           const std::vector<int64_t>& d, int method, int unfused = 0) {
  isthmus_context* ctx = nullptr;
  EXPECT_EQ(isthmus_context_create(comm, &ctx), ISTHMUS_OK);
  isthmus_decomp *S = nullptr, *D = nullptr;
  EXPECT_EQ(isthmus_decomp_create_indices(ctx, kTorc, s.size(), s.data(), &S), ISTHMUS_OK);
  EXPECT_EQ(isthmus_decomp_create_indices(ctx, kLmdz, d.size(), d.data(), &D), ISTHMUS_OK);
  isthmus_mapping_options opt;
  isthmus_mapping_options_init(&opt);
  opt.method = method;
  opt.fill_value = -1e30;
  opt.unfused = unfused;
  int levels[] = {1, 2};
  isthmus_mapping* m = nullptr;
  int rc = isthmus_mapping_create_file(ctx, file.c_str(), S, D, 2, levels, &opt, &m);
  EXPECT_EQ(rc, ISTHMUS_OK) << isthmus_last_error(ctx);
  std::vector<double> x0, x1, y0(d.size()), y1(2 * d.size());
  for (int64_t g : s) x0.push_back(sst(g, 0));
  for (int l = 0; l < 2; ++l)
    for (int64_t g : s) x1.push_back(sst(g, l + 1));
  const double* in[] = {x0.data(), x1.data()};
  double* out[] = {y0.data(), y1.data()};
  if (rc == ISTHMUS_OK) {
    EXPECT_EQ(isthmus_mapping_apply(m, in, out), ISTHMUS_OK) << isthmus_last_error(ctx);
  }
  isthmus_mapping_destroy(&m);
  isthmus_decomp_destroy(&S);
  isthmus_decomp_destroy(&D);
  isthmus_context_destroy(&ctx);
  y0.insert(y0.end(), y1.begin(), y1.end());
  return y0;
}

}  // namespace

TEST(MappingFile, OrcaToLmdzHasTheSameBitsAtEveryRankCount) {
  Watchdog w("mapping from the ORCA2 -> LMDZ files");
  const int me = world_rank(), size = world_size();
  for (const char* name : {"rmp_torc_to_lmdz_BILINEAR.nc", "rmp_torc_to_lmdz_CONSERV_FRACNNEI.nc"}) {
    SCOPED_TRACE(name);
    const std::string file = kData + name;
    // the reference: the whole mapping on rank 0 alone
    std::vector<int64_t> all_s(kTorc), all_d(kLmdz);
    std::iota(all_s.begin(), all_s.end(), 0);
    std::iota(all_d.begin(), all_d.end(), 0);
    std::vector<double> ref;
    if (me == 0) ref = map_on(MPI_COMM_SELF, file, all_s, all_d, ISTHMUS_METHOD_P2P);
    for (int method : {ISTHMUS_METHOD_P2P, ISTHMUS_METHOD_AUTO}) {
      std::vector<int64_t> s = random_part(kTorc, size, me, 3 + method), d = random_part(kLmdz, size, me, 4 + method);
      std::vector<double> y = map_on(MPI_COMM_WORLD, file, s, d, method);
      // gather (global index, field-level, value) on rank 0 and compare the bits
      const int64_t nd = static_cast<int64_t>(d.size());
      std::vector<double> mine;
      for (int k = 0; k < 3; ++k)
        for (int64_t i = 0; i < nd; ++i) mine.insert(mine.end(), {static_cast<double>(d[i]), double(k), y[k * nd + i]});
      int n = static_cast<int>(mine.size());
      std::vector<int> counts(size), displs(size);
      MPI_Gather(&n, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
      std::partial_sum(counts.begin(), counts.end() - 1, displs.begin() + 1);
      std::vector<double> all(me == 0 ? displs.back() + counts.back() : 0);
      MPI_Gatherv(mine.data(), n, MPI_DOUBLE, all.data(), counts.data(), displs.data(), MPI_DOUBLE, 0, MPI_COMM_WORLD);
      int64_t wrong = 0, mapped = 0;
      for (size_t k = 0; me == 0 && k < all.size(); k += 3) {
        const int64_t g = static_cast<int64_t>(all[k]);
        const int fl = static_cast<int>(all[k + 1]);
        const double want = ref[fl * kLmdz + g];
        if (std::memcmp(&all[k + 2], &want, sizeof want) != 0) ++wrong;
        if (want != -1e30) ++mapped;
      }
      EXPECT_TRUE(all_ranks(wrong == 0)) << wrong << " values differ";
      if (me == 0) {
        EXPECT_GT(mapped, 3 * 4000);  // most ocean points of LMDZ receive a value
      }
      // OASIS3-MCT's two phases through the C API (options.unfused): the same bits
      std::vector<double> u = map_on(MPI_COMM_WORLD, file, s, d, method, 1);
      EXPECT_TRUE(all_ranks(u.size() == y.size() &&
                            (y.empty() || std::memcmp(u.data(), y.data(), y.size() * sizeof(double)) == 0)));
    }
  }
}

TEST(MappingFile, AMissingFileFailsEveryRank) {
  Watchdog w("mapping from a missing file");
  isthmus_context* ctx = nullptr;
  ASSERT_EQ(isthmus_context_create(MPI_COMM_WORLD, &ctx), ISTHMUS_OK);
  int levels[] = {1};
  isthmus_mapping* m = nullptr;
  const std::string file = kData + "no_such_file.nc";
  int rc = isthmus_mapping_create_file(ctx, file.c_str(), nullptr, nullptr, 1, levels, nullptr, &m);
  EXPECT_TRUE(same_code_everywhere(rc, ISTHMUS_ERR_FILE));
  EXPECT_NE(std::string(isthmus_last_error(ctx)).find(file), std::string::npos) << isthmus_last_error(ctx);
  EXPECT_EQ(m, nullptr);
  // NULL path on one rank: every rank fails alike
  rc = isthmus_mapping_create_file(ctx, world_rank() == world_size() - 1 ? nullptr : file.c_str(), nullptr,
                                   nullptr, 1, levels, nullptr, &m);
  EXPECT_TRUE(all_ranks(rc != ISTHMUS_OK));
  EXPECT_TRUE(same_code_everywhere(rc, codes_of_all_ranks(rc)[world_size() - 1]));
  isthmus_context_destroy(&ctx);
}
