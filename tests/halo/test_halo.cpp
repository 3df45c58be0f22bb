// Every halo cell equals the value its owner holds at the global point it stands for, for
// every boundary, method, halo width (thin and wider than a neighbour) and layout, at any rank
// count; grouped exchanges are bit-identical to separate ones and send one message per peer.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <tuple>

#include "base/error.h"
#include "halo_test_util.h"
#include "mpi_test_util.h"

using namespace isthmus;
using namespace isthmus::halo;
using namespace halo_test;

namespace {

constexpr int64_t NX = 24, NY = 14;

// Layouts for P ranks: the most square ni x nj = P, all in i, all in j.
std::pair<int, int> layout(int kind, int p) {
  if (kind == 1) return {p, 1};
  if (kind == 2) return {1, p};
  int nj = 1;
  for (int a = 1; a * a <= p; ++a)
    if (p % a == 0) nj = a;
  return {p / nj, nj};
}

const PointType kTypes[4] = {PointType::T, PointType::U, PointType::V, PointType::F};
const int kSigns[4] = {1, -1, -1, 1};

// Exchanges T, U, V, F fields (signs + - - +, 2 levels) together and checks every cell.
void check_case(const Decomposition& d, int h, HaloMethod m, const std::string& what) {
  std::vector<HaloField> fields;
  for (int f = 0; f < 4; ++f) fields.push_back({kTypes[f], 2, kSigns[f], DataType::Double});
  HaloExchange x(MPI_COMM_WORLD, d, h, fields, m, kFill);
  std::vector<std::vector<double>> a(4);
  std::vector<void*> ptr(4, nullptr);
  if (x.has_subdomain())
    for (int f = 0; f < 4; ++f) {
      init_local(a[f], x, f, 2);
      ptr[f] = a[f].data();
    }
  x.exchange(ptr.data());
  x.exchange(ptr.data());  // a second exchange (persistent requests) must give the same
  int64_t bad = 0;
  std::string first;
  if (x.has_subdomain())
    for (int f = 0; f < 4; ++f) bad += check_local(a[f], x, d, f, 2, kTypes[f], kSigns[f], &first);
  EXPECT_EQ(bad, 0) << what << " rank " << world_rank() << ": " << first;
  EXPECT_TRUE(all_ranks(bad == 0)) << what;
}

using Case = std::tuple<int /*boundary*/, int /*method*/, int /*h*/, int /*layout*/>;

class HaloAllCases : public ::testing::TestWithParam<Case> {};

TEST_P(HaloAllCases, EveryHaloCellHoldsItsOwnersValue) {
  auto [bnd, meth, h, lay] = GetParam();
  decomp::Options o;
  o.boundary = static_cast<decomp::Boundary>(bnd);
  o.halo = h;
  auto [ni, nj] = layout(lay, world_size());
  Decomposition d = Decomposition::regular(NX, NY, ni, nj, o);
  std::string what = std::string(decomp::boundary_name(o.boundary)) + " " +
                     method_name(static_cast<HaloMethod>(meth)) + " h=" + std::to_string(h) +
                     " layout " + std::to_string(ni) + "x" + std::to_string(nj);
  check_case(d, h, static_cast<HaloMethod>(meth), what);
}

INSTANTIATE_TEST_SUITE_P(Halo, HaloAllCases,
                         ::testing::Combine(::testing::Values(0, 1, 2, 3, 4),  // boundaries
                                            ::testing::Values(1, 2, 3),        // methods
                                            ::testing::Values(1, 2, 5),        // halo widths
                                            ::testing::Values(0, 1, 2)));      // layouts

// A halo wider than the neighbouring subdomains takes points from neighbours' neighbours.
TEST(Halo, WideHaloCrossesTwoNeighbours) {
  decomp::Options o;
  o.boundary = decomp::Boundary::PeriodicEW;
  int p = world_size();
  Decomposition d = Decomposition::regular(NX, NY, p, 1, o);
  const int h = 7;  // wider than any box when p >= 4 (24 / p <= 6)
  HaloExchange x(MPI_COMM_WORLD, d, h, {HaloField{}}, HaloMethod::SingleSweep, kFill);
  if (p >= 4) {
    // Peers: every rank within 7 columns on both sides (wrapping), at least 4 distinct ranks.
    EXPECT_GE(x.distinct_peers(), std::min(p - 1, 4));
  }
  check_case(d, h, HaloMethod::TwoSweep, "wide periodic two-sweep");
  check_case(d, h, HaloMethod::SingleSweep, "wide periodic single-sweep");
}

// Land-only subdomains removed: no messages to or from them, fill values in their place.
class HaloLand : public ::testing::TestWithParam<std::tuple<int, int, int>> {};

TEST_P(HaloLand, RemovedNeighboursGiveFillValues) {
  auto [bnd, meth, h] = GetParam();
  const int p = world_size();
  const int ni = p + 1;  // one block more than ranks; block 1 is all land
  decomp::Options o;
  o.boundary = static_cast<decomp::Boundary>(bnd);
  o.halo = h;
  std::vector<uint8_t> mask(NX * NY, 1);
  Decomposition probe = Decomposition::regular(NX, NY, ni, 1, o);
  for (int64_t j = 0; j < NY; ++j)
    for (int64_t i = probe.i_starts()[1]; i < probe.i_starts()[2]; ++i) mask[j * NX + i] = 0;
  o.ocean_mask = mask.data();
  Decomposition d = Decomposition::regular(NX, NY, ni, 1, o);
  ASSERT_EQ(d.nranks(), p);
  ASSERT_EQ(d.rank_of_block(1, 0), -1);
  check_case(d, h, static_cast<HaloMethod>(meth), std::string("land ") + decomp::boundary_name(o.boundary));
}

INSTANTIATE_TEST_SUITE_P(Halo, HaloLand,
                         ::testing::Combine(::testing::Values(0, 2, 3, 4), ::testing::Values(1, 2),
                                            ::testing::Values(1, 3)));

// Grouping: one exchange of many arrays equals separate exchanges bit for bit, and sends
// exactly one message per peer.
TEST(Halo, GroupedEqualsSeparateWithOneMessagePerPeer) {
  decomp::Options o;
  o.boundary = decomp::Boundary::FoldF;
  auto [ni, nj] = layout(0, world_size());
  Decomposition d = Decomposition::regular(NX, NY, ni, nj, o);
  std::vector<HaloField> fields = {{PointType::T, 3, 1, DataType::Double},
                                   {PointType::U, 1, -1, DataType::Float},
                                   {PointType::V, 2, -1, DataType::Double},
                                   {PointType::F, 1, 1, DataType::Float},
                                   {PointType::T, 1, 1, DataType::Int32}};
  const int nf = static_cast<int>(fields.size());
  HaloExchange grouped(MPI_COMM_WORLD, d, 2, fields, HaloMethod::SingleSweep, kFill);
  grouped.trace().set_on(true);
  std::vector<std::vector<char>> g(nf), s(nf);
  std::vector<void*> gp(nf, nullptr);
  for (int f = 0; f < nf; ++f) {
    size_t n = grouped.plane_size() * fields[f].nlevels * type_size(fields[f].type);
    g[f].resize(n);
    // Interior and halo both hold a distinct pattern; bytes are compared afterwards.
    for (size_t b = 0; b < n; b += type_size(fields[f].type)) {
      int64_t e = b / type_size(fields[f].type);
      double v = (world_rank() + 1) * 100000.0 + f * 1000.0 + e;
      if (fields[f].type == DataType::Double) { double x = v; std::memcpy(&g[f][b], &x, 8); }
      if (fields[f].type == DataType::Float) { float x = static_cast<float>(v); std::memcpy(&g[f][b], &x, 4); }
      if (fields[f].type == DataType::Int32) { int32_t x = static_cast<int32_t>(v); std::memcpy(&g[f][b], &x, 4); }
    }
    s[f] = g[f];
    if (grouped.has_subdomain()) gp[f] = g[f].data();
  }
  grouped.exchange(gp.data());
  int separate_messages = 0;
  for (int f = 0; f < nf; ++f) {
    HaloExchange one(MPI_COMM_WORLD, d, 2, {fields[f]}, HaloMethod::SingleSweep, kFill);
    void* p1 = grouped.has_subdomain() ? s[f].data() : nullptr;
    one.exchange(&p1);
    // Point types may differ in peers across the fold; grouped sends to the union, once.
    EXPECT_LE(one.messages_per_exchange(), grouped.messages_per_exchange());
    separate_messages += one.messages_per_exchange();
  }
  if (grouped.messages_per_exchange() > 0) {
    EXPECT_GE(separate_messages, 4 * grouped.messages_per_exchange());
  }
  bool same = true;
  for (int f = 0; f < nf; ++f) same = same && g[f] == s[f];
  EXPECT_TRUE(all_ranks(same));
  const auto& c = grouped.trace().counters();
  EXPECT_EQ(c.exchanges, 1);
  EXPECT_EQ(c.messages_sent, grouped.distinct_peers());
  EXPECT_EQ(grouped.messages_per_exchange(), grouped.distinct_peers());
  if (world_size() >= 4) {
    EXPECT_GT(grouped.distinct_peers(), 0);
  }
}

// Two-sweep sends only to east/west then north/south neighbours: corners are relayed.
TEST(Halo, TwoSweepTalksOnlyToRowAndColumnNeighbours) {
  if (world_size() != 4 && world_size() != 8) GTEST_SKIP() << "needs a 2-D layout";
  decomp::Options o;
  o.boundary = decomp::Boundary::Biperiodic;
  auto [ni, nj] = layout(0, world_size());
  Decomposition d = Decomposition::regular(NX, NY, ni, nj, o);
  HaloExchange two(MPI_COMM_WORLD, d, 1, {HaloField{}}, HaloMethod::TwoSweep, kFill);
  HaloExchange one(MPI_COMM_WORLD, d, 1, {HaloField{}}, HaloMethod::SingleSweep, kFill);
  auto nb = d.neighbours(world_rank());
  std::vector<int> four = {nb[0], nb[1], nb[2], nb[3]};
  std::sort(four.begin(), four.end());
  four.erase(std::unique(four.begin(), four.end()), four.end());
  four.erase(std::remove(four.begin(), four.end(), world_rank()), four.end());
  EXPECT_EQ(two.distinct_peers(), static_cast<int>(four.size()));
  EXPECT_GE(one.distinct_peers(), two.distinct_peers());
}

TEST(HaloErrors, BadArgumentsAreNamed) {
  decomp::Options o;
  Decomposition d = Decomposition::regular(NX, NY, 1, 1, o);
  try {
    HaloExchange x(MPI_COMM_WORLD, d, 0, {HaloField{}}, HaloMethod::Auto);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ISTHMUS_ERR_ARG);
    EXPECT_STREQ(e.what(), "halo: halo width 0 < 1");
  }
  try {
    HaloExchange x(MPI_COMM_WORLD, d, 1, {HaloField{PointType::U, 1, 2, DataType::Double}},
                   HaloMethod::Auto);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "halo: field 0 has sign 2 (must be 1 or -1)");
  }
  Decomposition big = Decomposition::regular(NX, NY, 9, 1, o);
  try {
    HaloExchange x(MPI_COMM_WORLD, big, 1, {HaloField{}}, HaloMethod::Auto);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "halo: the decomposition has 9 subdomains but the "
              "communicator only " + std::to_string(world_size()) + " ranks");
  }
  o.boundary = decomp::Boundary::FoldT;
  // Only the northern subdomains see the fold, but the widest halo is a property of the layout:
  // every rank rejects it before any communication, with the same message.
  const int p = world_size();
  Decomposition thin = Decomposition::regular(8 * p, 4 * p, 1, p, o);
  try {
    HaloExchange x(MPI_COMM_WORLD, thin, 4 * p + 2, {HaloField{}}, HaloMethod::Auto);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ISTHMUS_ERR_ARG);
    EXPECT_EQ(std::string(e.what()), "halo: halo width " + std::to_string(4 * p + 2) +
              " is too wide for the north fold: row " + std::to_string(8 * p - 1) +
              " of field 0 (T points) folds onto row -1, outside the " + std::to_string(4 * p) +
              "-row grid; at most " + std::to_string(4 * p - 1) + " for this field");
  }
  // The widest halo the fold allows for V and F points (one row less than for T and U) works.
  check_case(thin, 4 * p - 2, HaloMethod::SingleSweep, "widest fold halo");
  check_case(thin, 4 * p - 2, HaloMethod::TwoSweep, "widest fold halo");
}

}  // namespace
