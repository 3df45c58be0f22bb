// NEMO's optimal decomposition (seed 004 sect. 2.1): Table 1, optimality against brute force,
// land-only subdomain removal on synthetic and real ORCA2 masks, the north-fold j sizing, the
// too-many-processes warning, neighbour tables and the square-node rank placement (Fig. 11).
#include <gtest/gtest.h>

#include <climits>
#include <fstream>
#include <string>
#include <vector>

#include "base/error.h"
#include "decomp/decomposition.h"

using namespace isthmus;
using namespace isthmus::decomp;

namespace {

// Seed 004 Table 1: jpiglo = 10 points including NEMO's own halo of 1 on each side, i.e. 8
// interior points; jpi_max for jpni = 1..9.
TEST(Decomposition, ReproducesTable1) {
  const int64_t jpi_max[9] = {10, 6, 5, 4, 4, 4, 4, 3, 3};
  for (int n = 1; n <= 9; ++n) EXPECT_EQ(largest_part(8, n, 1), jpi_max[n - 1]) << "jpni " << n;
  EXPECT_EQ(useful_part_counts(8, 1, 9), (std::vector<int>{1, 2, 3, 4, 8}));
}

// Without a mask the chosen layout has the smallest largest subdomain of all layouts with at
// most P subdomains, and among those the fewest subdomains.
TEST(Decomposition, OptimalMatchesBruteForce) {
  for (int64_t nx : {30, 97, 182})
    for (int64_t ny : {20, 149})
      for (int p : {1, 2, 3, 5, 7, 12, 16, 31, 64, 100}) {
        Options o;
        Decomposition d = Decomposition::optimal(nx, ny, p, o);
        int64_t best = -1, fewest = 0;
        for (int a = 1; a <= p && a <= nx; ++a)
          for (int b = 1; a * b <= p && b <= ny; ++b) {
            int64_t s = largest_part(nx, a, 1) * largest_part(ny, b, 1);
            if (best < 0 || s < best || (s == best && a * b < fewest)) {
              best = s;
              fewest = a * b;
            }
          }
        EXPECT_EQ(d.largest_subdomain(), best) << nx << "x" << ny << " P=" << p;
        EXPECT_EQ(d.ni() * d.nj(), fewest) << nx << "x" << ny << " P=" << p;
        EXPECT_LE(d.nranks(), p);
      }
}

TEST(Decomposition, WarnsWhenMoreProcessesThanUseful) {
  Options o;
  Decomposition d = Decomposition::optimal(10, 10, 200, o);
  EXPECT_EQ(d.ni() * d.nj(), 100);
  EXPECT_EQ(d.warning(), "decomposition: 200 processes given but only 100 ocean subdomains are "
                         "useful (10 x 10 layout); 100 processes get no subdomain");
}

TEST(Decomposition, NorthFoldSizing) {
  Options o;
  o.boundary = Boundary::FoldT;
  Decomposition d = Decomposition::regular(20, 100, 1, 7, o);
  // 100 rows in 7: all 15 rows except the northern one with 10 (sect. 2.1.4).
  EXPECT_EQ(d.j_starts(), (std::vector<int64_t>{0, 15, 30, 45, 60, 75, 90, 100}));
  o.boundary = Boundary::Closed;
  Decomposition c = Decomposition::regular(20, 100, 1, 7, o);
  EXPECT_EQ(c.j_starts(), (std::vector<int64_t>{0, 15, 30, 44, 58, 72, 86, 100}));
  // The largest subdomain does not change.
  EXPECT_EQ(d.largest_subdomain(), c.largest_subdomain());
  // Too thin a northern part for a T pivot (needs 3 interior rows): the default split.
  o.boundary = Boundary::FoldT;
  Decomposition t = Decomposition::regular(20, 10, 1, 4, o);
  EXPECT_EQ(t.j_starts(), (std::vector<int64_t>{0, 3, 6, 8, 10}));
  Decomposition f = Decomposition::regular(20, 11, 1, 3, o);
  EXPECT_EQ(f.j_starts(), (std::vector<int64_t>{0, 4, 8, 11}));
}

// An ORCA-like mask: Antarctica, two continents, an Arctic cap with a strait.
std::vector<uint8_t> orca_like(int64_t nx, int64_t ny) {
  std::vector<uint8_t> m(nx * ny, 1);
  for (int64_t j = 0; j < ny; ++j)
    for (int64_t i = 0; i < nx; ++i) {
      bool land = j < ny / 8;                                                  // Antarctica
      land |= i >= nx / 6 && i < nx / 3 && j >= ny / 4 && j < 3 * ny / 4;      // America
      land |= i >= nx / 2 && i < 2 * nx / 3 && j >= ny / 3 && j < 7 * ny / 8;  // Eurasia
      land |= j >= 15 * ny / 16 && (i < nx / 2 - 3 || i > nx / 2 + 3);        // Arctic rim
      if (land) m[j * nx + i] = 0;
    }
  return m;
}

int land_blocks_kept(const Decomposition& d) {
  int n = 0;
  for (int r = 0; r < d.nranks(); ++r) {
    int b = d.block_of_rank(r);
    n += d.ocean_points(b % d.ni(), b / d.ni()) == 0;
  }
  return n;
}

TEST(Decomposition, NeverKeepsLandOnlySubdomainsOnOrcaLikeMask) {
  const int64_t nx = 180, ny = 148;
  auto mask = orca_like(nx, ny);
  Options o;
  o.boundary = Boundary::FoldT;
  o.ocean_mask = mask.data();
  int removed_somewhere = 0;
  for (int p : {4, 9, 16, 30, 64, 100, 128, 200, 256}) {
    Decomposition d = Decomposition::optimal(nx, ny, p, o);
    EXPECT_LE(d.nranks(), p) << "P=" << p;
    if (d.warning().empty()) {
      EXPECT_EQ(land_blocks_kept(d), 0) << "P=" << p;
    }
    removed_somewhere += d.land_blocks_removed();
    // Removal must pay: the chosen layout is at least as fine as the best one without a mask.
    Options nomask = o;
    nomask.ocean_mask = nullptr;
    EXPECT_LE(d.largest_subdomain(), Decomposition::optimal(nx, ny, p, nomask).largest_subdomain())
        << "P=" << p;
  }
  EXPECT_GT(removed_somewhere, 0);
}

std::vector<uint8_t> read_orca2(int64_t* nx, int64_t* ny) {
  std::ifstream in(std::string(ISTHMUS_TEST_DATA) + "/orca2-lmdz/torc_imask.txt");
  std::string line;
  std::getline(in, line);  // header
  std::vector<uint8_t> m;
  *ny = 0;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    *nx = static_cast<int64_t>(line.size());
    for (char c : line) m.push_back(c == '1');
    ++*ny;
  }
  return m;
}

TEST(Decomposition, RealOrca2Mask) {
  int64_t nx = 0, ny = 0;
  auto mask = read_orca2(&nx, &ny);
  ASSERT_EQ(nx, 182);
  ASSERT_EQ(ny, 149);
  Options o;
  o.boundary = Boundary::FoldF;
  o.ocean_mask = mask.data();
  Decomposition d = Decomposition::optimal(nx, ny, 64, o);
  // 7 x 10 = 70 blocks, 7 all land: 63 ocean subdomains, the finest that fit 64 processes.
  EXPECT_EQ(d.ni(), 7);
  EXPECT_EQ(d.nj(), 10);
  EXPECT_EQ(d.nranks(), 63);
  EXPECT_EQ(d.warning(), "decomposition: 64 processes given but only 63 ocean subdomains are "
                         "useful (7 x 10 layout); 1 processes get no subdomain");
  EXPECT_EQ(land_blocks_kept(d), 0);
  o.keep_land_for_surplus = true;  // NEMO's choice for AGRIF: every process gets a subdomain
  Decomposition k = Decomposition::optimal(nx, ny, 64, o);
  EXPECT_EQ(k.nranks(), 64);
  EXPECT_EQ(land_blocks_kept(k), 1);
  o.keep_land_for_surplus = false;
  for (int p : {8, 16, 32, 48, 96, 128}) {
    Decomposition e = Decomposition::optimal(nx, ny, p, o);
    EXPECT_EQ(land_blocks_kept(e), 0) << "P=" << p;
    EXPECT_LE(e.nranks(), p);
  }
  EXPECT_GT(d.land_blocks_removed(), 0);
  EXPECT_LE(d.nranks(), 64);
  EXPECT_GT(d.ni() * d.nj(), 64);  // removal lets more, smaller subdomains fit 64 processes
  // Every ocean point belongs to a kept block.
  for (int64_t j = 0; j < ny; ++j)
    for (int64_t i = 0; i < nx; ++i)
      if (mask[j * nx + i]) {
        ASSERT_GE(d.owner(i, j), 0) << i << "," << j;
      }
}

TEST(Decomposition, NeighbourTables) {
  Options o;
  o.boundary = Boundary::PeriodicEW;
  Decomposition d = Decomposition::regular(12, 9, 3, 3, o);
  auto n = d.neighbours(3);  // block (0, 1)
  EXPECT_EQ(n[West], 5);
  EXPECT_EQ(n[East], 4);
  EXPECT_EQ(n[South], 0);
  EXPECT_EQ(n[North], 6);
  EXPECT_EQ(n[SouthWest], 2);
  EXPECT_EQ(n[NorthEast], 7);
  o.boundary = Boundary::Closed;
  Decomposition c = Decomposition::regular(12, 9, 3, 3, o);
  EXPECT_EQ(c.neighbours(0)[West], -1);
  EXPECT_EQ(c.neighbours(0)[South], -1);
  EXPECT_EQ(c.neighbours(8)[NorthEast], -1);
}

// Fig. 11 / sect. 4: x^2 processes per node in a square instead of a line: the inter-node
// fraction of neighbour links drops from about 1/2 to 1/x on a bi-periodic layout.
TEST(Decomposition, SquareNodePlacement) {
  Options o;
  o.boundary = Boundary::Biperiodic;
  Decomposition d = Decomposition::regular(64, 64, 16, 16, o);
  EXPECT_DOUBLE_EQ(d.internode_fraction(16), 0.5);  // a node = one row of 16
  auto tile = d.place_on_nodes(16);
  EXPECT_EQ(tile[0], 4);
  EXPECT_EQ(tile[1], 4);
  EXPECT_DOUBLE_EQ(d.internode_fraction(16), 0.25);
  // Placement is a renumbering: every block still has exactly one rank.
  std::vector<int> seen(256, 0);
  for (int r = 0; r < d.nranks(); ++r) seen[d.block_of_rank(r)]++;
  for (int s : seen) EXPECT_EQ(s, 1);
  Decomposition e = Decomposition::regular(64, 64, 16, 16, o);
  e.place_on_nodes(64);  // 8 x 8 nodes: 1/8
  EXPECT_DOUBLE_EQ(e.internode_fraction(64), 0.125);
}

TEST(Decomposition, ErrorsAreNamed) {
  Options o;
  try {
    Decomposition::regular(10, 10, 11, 1, o);
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "decomposition: layout 11 x 1 does not fit grid 10 x 10 (need 1 <= ni "
                           "<= nx, 1 <= nj <= ny)");
  }
  std::vector<uint8_t> land(100, 0);
  o.ocean_mask = land.data();
  try {
    Decomposition::optimal(10, 10, 4, o);
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "decomposition: the land-sea mask has no ocean point");
  }
  o.ocean_mask = nullptr;
  o.boundary = Boundary::FoldF;
  try {
    Decomposition::optimal(11, 10, 4, o);
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "decomposition: a north fold needs an even nx (got 11): the fold "
                           "pairs column i with a mirrored column");
  }
}

// Range checks at the limits of int and int64_t: no overflow, a clear error or a right result.
TEST(Decomposition, LimitsOfIntAndInt64) {
  const int64_t big = INT64_MAX;
  EXPECT_EQ(largest_part(big, 1, 0), big);
  EXPECT_EQ(largest_part(big, 2, 0), big / 2 + 1);
  EXPECT_EQ(largest_part(big - 1, INT_MAX, 0), 4294967298);  // 2^63 - 2 = 2 (2^31 - 1) (2^31 + 1)
  EXPECT_EQ(largest_part(big, INT_MAX, 0), 4294967299);
  auto message = [](auto&& make) {
    try {
      make();
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ISTHMUS_ERR_ARG);
      return std::string(e.what());
    }
    return std::string("no error");
  };
  Options o;
  EXPECT_EQ(message([&] { Decomposition::optimal(big, big, 4, o); }),
            "decomposition: grid 9223372036854775807 x 9223372036854775807 with a halo of 1 is "
            "too large: (nx + 2 halo) * (ny + 2 halo) must be at most 2^60");
  EXPECT_EQ(message([&] { Decomposition::regular(big - 1, 1, 1, 1, o); }),
            "decomposition: grid 9223372036854775806 x 1 with a halo of 1 is too large: "
            "(nx + 2 halo) * (ny + 2 halo) must be at most 2^60");
  o.halo = INT_MAX;
  EXPECT_EQ(message([&] { Decomposition::regular(10, 10, 1, 1, o); }),
            "decomposition: grid 10 x 10 with a halo of 2147483647 is too large: "
            "(nx + 2 halo) * (ny + 2 halo) must be at most 2^60");
  o.halo = 0;
  EXPECT_EQ(message([&] { Decomposition::regular(int64_t{1} << 40, 1 << 20, 1 << 12, 1 << 13, o); }),
            "decomposition: layout 4096 x 8192 has 33554432 blocks, more than the 16777216 a "
            "layout may have");
  // The largest grid allowed, and INT_MAX processes: capped, with the warning.
  Decomposition g = Decomposition::regular(int64_t{1} << 30, int64_t{1} << 30, 1, 1, o);
  EXPECT_EQ(g.largest_subdomain(), int64_t{1} << 60);
  Decomposition p = Decomposition::optimal(40, 30, INT_MAX, o);
  EXPECT_LE(p.nranks(), 1200);
  EXPECT_NE(p.warning(), "");
  // INT_MAX cores per node: one node holds everything.
  Decomposition q = Decomposition::regular(64, 64, 8, 8, o);
  q.place_on_nodes(INT_MAX);
  EXPECT_EQ(q.internode_fraction(INT_MAX), 0.0);
  EXPECT_EQ(message([&] { q.place_on_nodes(INT_MIN); }), "cores per node -2147483648 < 1");
}

}  // namespace

TEST(Decomposition, BoundaryNamesRoundTripAndUnknownNamesAreRefused) {
  for (Boundary b : {Boundary::Closed, Boundary::PeriodicEW, Boundary::Biperiodic, Boundary::FoldT,
                     Boundary::FoldF})
    EXPECT_EQ(parse_boundary(boundary_name(b)), b);
  EXPECT_EQ(parse_boundary("periodic"), Boundary::PeriodicEW);
  try {
    parse_boundary("fold");
    FAIL() << "no error";
  } catch (const isthmus::Error& e) {
    EXPECT_EQ(e.code(), ISTHMUS_ERR_ARG);
    EXPECT_STREQ(e.what(), "unknown boundary 'fold': expected closed, periodic (or periodic-ew), "
                           "biperiodic, fold-t or fold-f");
  }
}
