// Destination-side mapping fused with the transfer: every destination value equals, bit for
// bit, a serial reference that sums each point's links in link-number order, whatever the rank
// count and the decompositions of both sides; unmapped points get the fill value or keep theirs.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <random>

#include "core_test_util.h"
#include "mpi_test_util.h"
#include "remap/mapping.h"

using namespace isthmus;
using namespace isthmus::remap;

using isthmus::test::Outcome;
using isthmus::test::outcome_of;
using isthmus::test::random_part;

namespace {

struct Problem {
  int64_t nsrc, ndst, nlinks;
  std::vector<int64_t> src, dst;  // per link (global numbering = position)
  std::vector<double> w;
};

// Links: each destination point but every 7th gets 1..5 links to random source points.
Problem make_problem(int64_t nsrc, int64_t ndst, unsigned seed) {
  Problem p{nsrc, ndst, 0, {}, {}, {}};
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> wd(-0.5, 1.5);
  for (int64_t d = 0; d < ndst; ++d) {
    if (d % 7 == 3) continue;
    const int n = 1 + static_cast<int>(rng() % 5);
    for (int k = 0; k < n; ++k) {
      p.src.push_back(static_cast<int64_t>(rng() % nsrc));
      p.dst.push_back(d);
      p.w.push_back(wd(rng));
    }
  }
  // shuffle the file order, so that link numbers do not follow the destination
  std::vector<size_t> perm(p.src.size());
  std::iota(perm.begin(), perm.end(), 0);
  std::shuffle(perm.begin(), perm.end(), rng);
  Problem q = p;
  for (size_t k = 0; k < perm.size(); ++k) {
    q.src[k] = p.src[perm[k]];
    q.dst[k] = p.dst[perm[k]];
    q.w[k] = p.w[perm[k]];
  }
  q.nlinks = static_cast<int64_t>(q.src.size());
  return q;
}

// Links that reach few points of large grids: `linked` destination points spread over the
// destination grid, each with 1..4 links to source points spread over the source grid. The
// distinct points a rank's links name are then far fewer than the grid's points (the case where
// they are numbered with a hash table instead of a table over the grid).
Problem make_sparse_problem(int64_t nsrc, int64_t ndst, int64_t linked, unsigned seed) {
  Problem p{nsrc, ndst, 0, {}, {}, {}};
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> wd(-0.5, 1.5);
  for (int64_t i = 0; i < linked; ++i) {
    const int64_t d = i * (ndst / linked) + static_cast<int64_t>(rng() % (ndst / linked));
    const int n = 1 + static_cast<int>(rng() % 4);
    for (int k = 0; k < n; ++k) {
      p.src.push_back(static_cast<int64_t>(rng() % nsrc));
      p.dst.push_back(d);
      p.w.push_back(wd(rng));
    }
  }
  p.nlinks = static_cast<int64_t>(p.src.size());
  return p;
}

// The links of a problem dealt round-robin over the ranks, as file slabs would be.
Links share_of(const Problem& p, int me, int size) {
  Links links;
  for (int64_t k = me; k < p.nlinks; k += size) {
    links.number.push_back(k);
    links.src.push_back(p.src[k]);
    links.dst.push_back(p.dst[k]);
    links.weights.push_back(p.w[k]);
  }
  return links;
}

double value(int64_t g, int f, int l) { return std::sin(0.37 * g + f) * 1e3 + g * 1e-3 + l; }

// The serial reference: per destination point, its links in link-number order.
std::vector<double> reference(const Problem& p, int f, int l, double fill, bool& mapped_any) {
  std::vector<double> y(p.ndst, fill);
  std::vector<bool> seen(p.ndst, false);
  for (int64_t k = 0; k < p.nlinks; ++k) {
    const double t = p.w[k] * value(p.src[k], f, l);
    y[p.dst[k]] = seen[p.dst[k]] ? y[p.dst[k]] + t : t;
    seen[p.dst[k]] = true;
  }
  mapped_any = true;
  return y;
}


// Runs the mapping with the source on [s0, s1) and the destination on [d0, d1) of the world.
void check(const Problem& p, int s0, int s1, int d0, int d1, unsigned seed, Method method,
           const std::vector<int>& levels, bool fused = true, Side side = Side::Dst,
           bool split = false, NodeStage node_stage = NodeStage::Auto, int node_ranks = 0,
           bool shared_sources = false, bool links_on_first = false) {
  const int me = world_rank(), size = world_size();
  std::vector<int64_t> sidx, didx;
  const bool has_src = me >= s0 && me < s1, has_dst = me >= d0 && me < d1;
  if (has_src) sidx = random_part(p.nsrc, s1 - s0, me - s0, seed);
  if (has_src && shared_sources && s1 - s0 > 1) {
    // also every third point of the next source rank's part (as a halo would be), and on the
    // first source rank the block [0, 50) whole (a run that contains other ranks' runs): those
    // points are held twice, and the routing must give their links to one holder only
    for (int64_t g : random_part(p.nsrc, s1 - s0, (me - s0 + 1) % (s1 - s0), seed))
      if (g % 3 == 0 && g >= 50) sidx.push_back(g);
    if (me == s0) {
      sidx.erase(std::remove_if(sidx.begin(), sidx.end(), [](int64_t g) { return g < 50; }), sidx.end());
      for (int64_t g = 0; g < 50; ++g) sidx.push_back(g);
    }
  }
  if (has_dst) didx = random_part(p.ndst, d1 - d0, me - d0, seed + 1);
  IndexList S = IndexList::from_indices(p.nsrc, sidx.data(), static_cast<int64_t>(sidx.size()));
  IndexList D = IndexList::from_indices(p.ndst, didx.data(), static_cast<int64_t>(didx.size()));
  // every rank holds a round-robin share of the links, as a file slab would be (or rank 0 all)
  Links links = links_on_first ? (me == 0 ? share_of(p, 0, 1) : Links{}) : share_of(p, me, size);
  MappingOptions opt;
  opt.method = method;
  opt.nlevels = levels;
  opt.fill_value = -777.0;
  opt.fused = fused;
  opt.side = side;
  opt.node_stage = node_stage;
  opt.node_ranks = node_ranks;
  Agreement a;
  Mapping m(MPI_COMM_WORLD, has_src ? &S : nullptr, has_dst ? &D : nullptr, p.nsrc, p.ndst, links,
            opt, a);
  EXPECT_EQ(m.info().global_unused_links, 0);
  if (node_stage == NodeStage::On && fused && m.info().side == Side::Dst) {
    EXPECT_TRUE(m.info().node_stage);
    EXPECT_EQ(m.node_redist() != nullptr, has_dst);
  }
  const int nf = static_cast<int>(levels.size());
  std::vector<std::vector<double>> x(nf), y(nf);
  std::vector<const double*> xp;
  std::vector<double*> yp;
  for (int f = 0; f < nf; ++f) {
    for (int l = 0; l < levels[f]; ++l)
      for (int64_t g : sidx) x[f].push_back(value(g, f, l));
    y[f].assign(didx.size() * levels[f], 0.0);
    xp.push_back(x[f].data());
    yp.push_back(y[f].data());
  }
  if (split) {
    // twice: the second start/finish reuses the first one's buffers
    for (int rep = 0; rep < 2; ++rep) {
      m.start(has_src ? xp.data() : nullptr);
      m.finish(has_dst ? yp.data() : nullptr);
    }
  } else {
    m.apply(has_src ? xp.data() : nullptr, has_dst ? yp.data() : nullptr);
  }
  int64_t wrong = 0;
  // the destination side gives the reference's bits; the source side adds partial sums in
  // another order: equal to 1e-14 relative
  const bool exact = m.info().side == Side::Dst;
  for (int f = 0; f < nf; ++f)
    for (int l = 0; l < levels[f]; ++l) {
      bool any = false;
      std::vector<double> ref = reference(p, f, l, -777.0, any);
      for (size_t i = 0; i < didx.size(); ++i) {
        const double v = y[f][l * didx.size() + i], r = ref[didx[i]];
        if (exact ? std::memcmp(&v, &r, sizeof(double)) != 0 : std::fabs(v - r) > 1e-14 * (std::fabs(r) + 1e3))
          ++wrong;
      }
    }
  EXPECT_TRUE(all_ranks(wrong == 0)) << wrong << " values differ from the serial reference";
}

}  // namespace

// The same bits as the serial reference at every rank count, for random decompositions of
// both sides: identical, disjoint and overlapping rank sets, several fields and levels.
TEST(Mapping, DestinationSideIsBitIdenticalToTheSerialSum) {
  Watchdog w("mapping dst side");
  const int size = world_size();
  Problem p = make_problem(977, 613, 5);
  for (unsigned seed : {11u, 12u}) {
    check(p, 0, size, 0, size, seed, Method::P2P, {1});
    check(p, 0, size, 0, size, seed, Method::Auto, {2, 1, 3});
  }
  if (size > 1) {
    const int half = size / 2;
    check(p, 0, half, half, size, 13, Method::P2P, {1, 2});          // disjoint, as two components
    check(p, 0, size - 1, 1, size, 14, Method::Alltoallv, {1});      // overlapping
    check(p, size - 1, size, 0, 1, 15, Method::Butterfly, {1});      // one rank each
  }
}

// The source side (OASIS sum): partial sums on the source ranks, added on arrival in
// source-rank order by the transfer layer's reduction mode; auto takes the side that moves less.
TEST(Mapping, SourceSideAndAutoAgreeWithTheDestinationSide) {
  Watchdog w("mapping src side and auto");
  const int size = world_size();
  Problem p = make_problem(977, 613, 7);
  check(p, 0, size, 0, size, 41, Method::P2P, {1, 2}, true, Side::Src);
  check(p, 0, size, 0, size, 42, Method::Auto, {1}, true, Side::Auto);
  if (size > 1) {
    check(p, 0, size / 2, size / 2, size, 43, Method::P2P, {1}, true, Side::Src);
    check(p, 0, size - 1, 1, size, 44, Method::Butterfly, {2}, true, Side::Src);
  }
  // auto records both counts and takes the smaller: 977 source points feed 613 destination
  // points, so with few links per point the destination side moves fewer values
  const int me = world_rank();
  std::vector<int64_t> sidx = random_part(p.nsrc, size, me, 45), didx = random_part(p.ndst, size, me, 46);
  IndexList S = IndexList::from_indices(p.nsrc, sidx.data(), static_cast<int64_t>(sidx.size()));
  IndexList D = IndexList::from_indices(p.ndst, didx.data(), static_cast<int64_t>(didx.size()));
  Links links = share_of(p, me, size);
  MappingOptions opt;
  opt.side = Side::Auto;
  Agreement a;
  Mapping m(MPI_COMM_WORLD, &S, &D, p.nsrc, p.ndst, links, opt, a);
  EXPECT_GT(m.info().dst_side_values, 0);
  EXPECT_GT(m.info().src_side_values, 0);
  EXPECT_EQ(m.info().side, m.info().src_side_values < m.info().dst_side_values ? Side::Src : Side::Dst);
}

// Links that name few of a large grid's points: the points are numbered another way (hashing
// instead of a table over the grid) with the same result, on both sides.
TEST(Mapping, FewPointsOfALargeGridGiveTheSameBits) {
  Watchdog w("mapping sparse links");
  const int size = world_size();
  Problem wide_src = make_sparse_problem(600000, 4000, 300, 17);
  check(wide_src, 0, size, 0, size, 71, Method::P2P, {1, 2});
  Problem wide_dst = make_sparse_problem(900, 600000, 300, 18);
  check(wide_dst, 0, size, 0, size, 72, Method::P2P, {1}, true, Side::Src);
  if (size > 1) check(wide_src, 0, size / 2, size / 2, size, 73, Method::P2P, {1});
}

// Source points held by two ranks (a halo): each link is used once, on either side, so the
// results are the serial reference's (the routing's lookups take another path when the parts
// overlap).
TEST(Mapping, SourcePointsHeldTwiceAreUsedOnce) {
  Watchdog w("mapping shared sources");
  const int size = world_size();
  Problem p = make_problem(977, 613, 9);
  check(p, 0, size, 0, size, 51, Method::P2P, {1, 2}, true, Side::Dst, false, NodeStage::Auto, 0, true);
  check(p, 0, size, 0, size, 52, Method::P2P, {1}, true, Side::Src, false, NodeStage::Auto, 0, true);
  if (size > 2) {
    check(p, 0, size - 1, 1, size, 53, Method::P2P, {1}, true, Side::Dst, false, NodeStage::Auto, 0, true);
    check(p, 0, size - 1, 1, size, 54, Method::P2P, {2}, true, Side::Src, false, NodeStage::Auto, 0, true);
  }
}

// Links routed in several rounds (2^17 records per rank and round): rank 0 holds all of some
// 300,000 links and needs three rounds, the others none; every rank must run rank 0's count.
TEST(Mapping, RoutesInAsManyRoundsAsTheBusiestRankNeeds) {
  Watchdog w("mapping routing rounds");
  const int size = world_size();
  Problem p = make_problem(5000, 120000, 10);
  ASSERT_GT(p.nlinks, 2 * (int64_t{1} << 17));
  check(p, 0, size, 0, size, 61, Method::P2P, {1}, true, Side::Dst, false, NodeStage::Auto, 0, false, true);
  check(p, 0, size, 0, size, 62, Method::P2P, {1}, true, Side::Src, false, NodeStage::Auto, 0, false, true);
}

// The unfused reference path (rearrange on the source ranks, multiply, transfer) gives the
// same bits as the fused one.
TEST(Mapping, UnfusedPathGivesTheSameBits) {
  Watchdog w("mapping unfused");
  const int size = world_size();
  Problem p = make_problem(977, 613, 6);
  check(p, 0, size, 0, size, 31, Method::P2P, {1, 2}, false);
  if (size > 1) check(p, 0, size / 2, size / 2, size, 32, Method::Auto, {1}, false);
}

// The node stage (a value needed by several destination ranks of a node crosses to the node
// once, then within it): the same bits as the serial reference, with nodes of 1, 2 and 3
// ranks, for apply and start/finish, the two sides on the same, disjoint or overlapping ranks.
TEST(Mapping, NodeStageGivesTheSameBits) {
  Watchdog w("mapping node stage");
  const int size = world_size();
  Problem p = make_problem(977, 613, 9);
  for (int node_ranks : {1, 2, 3}) {
    SCOPED_TRACE("ranks per node " + std::to_string(node_ranks));
    check(p, 0, size, 0, size, 71, Method::P2P, {1, 2}, true, Side::Dst, false, NodeStage::On, node_ranks);
    check(p, 0, size, 0, size, 72, Method::Auto, {2}, true, Side::Dst, true, NodeStage::On, node_ranks);
    if (size > 1) {
      check(p, 0, size / 2, size / 2, size, 73, Method::P2P, {1}, true, Side::Dst, true, NodeStage::On,
            node_ranks);
      check(p, 0, size - 1, 1, size, 74, Method::Alltoallv, {3, 1}, true, Side::Dst, false,
            NodeStage::On, node_ranks);
    }
  }
  check(p, 0, size, 0, size, 75, Method::P2P, {1}, true, Side::Dst, false, NodeStage::On, 0);
  // the source side and the unfused path ignore it
  check(p, 0, size, 0, size, 76, Method::P2P, {1}, true, Side::Src, false, NodeStage::On, 2);
  check(p, 0, size, 0, size, 77, Method::P2P, {1}, false, Side::Dst, false, NodeStage::On, 2);
}

// What the node stage saves: each point a node's destination ranks need crosses to the node
// once, so the points of the first exchange, summed over a node's ranks, are the distinct points
// its ranks need; auto takes the stage when that cuts the points sent by a fifth and there is
// more than one node, and never on one node.
TEST(Mapping, NodeStageSendsEachPointToANodeOnce) {
  Watchdog w("mapping node stage counts");
  const int me = world_rank(), size = world_size();
  // every destination point reads 3 of 40 source points: the ranks need nearly the same ones
  Problem p{40, 300, 0, {}, {}, {}};
  for (int64_t d = 0; d < p.ndst; ++d)
    for (int k = 0; k < 3; ++k) {
      p.src.push_back((d * 7 + k * 13) % p.nsrc);
      p.dst.push_back(d);
      p.w.push_back(0.25 + k);
    }
  p.nlinks = static_cast<int64_t>(p.src.size());
  std::vector<int64_t> sidx = random_part(p.nsrc, size, me, 81), didx = random_part(p.ndst, size, me, 82);
  IndexList S = IndexList::from_indices(p.nsrc, sidx.data(), static_cast<int64_t>(sidx.size()));
  IndexList D = IndexList::from_indices(p.ndst, didx.data(), static_cast<int64_t>(didx.size()));
  Links links = share_of(p, me, size);
  // what this rank needs, and its node (pairs of ranks) as a whole
  const int node_ranks = 2;
  MPI_Comm node;
  MPI_Comm_split(MPI_COMM_WORLD, me / node_ranks, me, &node);
  std::vector<int> mine(p.nsrc, 0), any(p.nsrc, 0);
  std::vector<int64_t> sorted = didx;
  std::sort(sorted.begin(), sorted.end());
  for (int64_t k = 0; k < p.nlinks; ++k)
    if (std::binary_search(sorted.begin(), sorted.end(), p.dst[k])) mine[p.src[k]] = 1;
  MPI_Allreduce(mine.data(), any.data(), static_cast<int>(p.nsrc), MPI_INT, MPI_MAX, node);
  int node_rank = 0;
  MPI_Comm_rank(node, &node_rank);
  const int64_t needed = std::accumulate(mine.begin(), mine.end(), int64_t{0});
  const int64_t node_needed = std::accumulate(any.begin(), any.end(), int64_t{0});
  int64_t local[2] = {needed, node_rank == 0 ? node_needed : 0}, total[2];
  MPI_Allreduce(local, total, 2, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
  for (NodeStage stage : {NodeStage::Auto, NodeStage::On, NodeStage::Off}) {
    SCOPED_TRACE(node_stage_name(stage));
    MappingOptions opt;
    opt.node_stage = stage;
    opt.node_ranks = node_ranks;
    Agreement a;
    Mapping m(MPI_COMM_WORLD, &S, &D, p.nsrc, p.ndst, links, opt, a);
    const bool expected = stage == NodeStage::On ||
                          (stage == NodeStage::Auto && size > node_ranks && 5 * total[1] <= 4 * total[0]);
    EXPECT_EQ(m.info().node_stage, expected);
    EXPECT_EQ(m.info().needed_points, needed);
    if (!m.info().node_stage) continue;
    int64_t first = m.info().first_points, node_first = 0;
    MPI_Allreduce(&first, &node_first, 1, MPI_INT64_T, MPI_SUM, node);
    EXPECT_EQ(node_first, node_needed);
  }
  // here the ranks need nearly the same points: with more than one node, auto takes the stage
  if (size >= 4) {
    EXPECT_LE(5 * total[1], 4 * total[0]);
  }
  MPI_Comm_free(&node);
}

// start/finish (the coupler's put and get) give the bits apply gives, on both sides and on the
// unfused path, with the two sides on the same, disjoint or overlapping ranks.
TEST(Mapping, SplitApplyGivesTheSameBits) {
  Watchdog w("mapping start/finish");
  const int size = world_size();
  Problem p = make_problem(977, 613, 8);
  check(p, 0, size, 0, size, 51, Method::P2P, {1, 2}, true, Side::Dst, true);
  check(p, 0, size, 0, size, 52, Method::P2P, {2}, true, Side::Src, true);
  check(p, 0, size, 0, size, 53, Method::P2P, {1}, false, Side::Dst, true);
  if (size > 1) {
    check(p, 0, size / 2, size / 2, size, 54, Method::P2P, {1}, true, Side::Dst, true);
    check(p, 0, size - 1, 1, size, 55, Method::P2P, {3}, true, Side::Src, true);
  }
}

// A split apply with a conservation step: the source ranks sum their integral among
// themselves at start, the destination ranks theirs at finish; with the reproducible sum the
// result has apply's bits, for the four corrections, the two sides on the same, disjoint or
// overlapping ranks, and the source side too.
TEST(Mapping, SplitApplyConservesWithApplysBits) {
  Watchdog w("mapping start/finish with CONSERV");
  const int me = world_rank(), size = world_size();
  Problem p = make_problem(300, 200, 10);
  for (double& x : p.w) x = std::fabs(x) + 0.01;
  struct Ranks { int s0, s1, d0, d1; };
  std::vector<Ranks> layouts = {{0, size, 0, size}};
  if (size > 1) layouts.push_back({0, size / 2, size / 2, size});
  if (size > 2) layouts.push_back({0, size - 1, 1, size});
  for (const Ranks& r : layouts)
    for (Side side : {Side::Dst, Side::Src})
      for (Conserv type : {Conserv::Global, Conserv::Glbpos, Conserv::Basbal, Conserv::Baspos}) {
        SCOPED_TRACE(std::string(conserv_name(type)) + " side " + side_name(side) + " ranks " +
                     std::to_string(r.s0) + "-" + std::to_string(r.s1) + " / " +
                     std::to_string(r.d0) + "-" + std::to_string(r.d1));
        const bool hs = me >= r.s0 && me < r.s1, hd = me >= r.d0 && me < r.d1;
        std::vector<int64_t> sidx, didx;
        if (hs) sidx = random_part(p.nsrc, r.s1 - r.s0, me - r.s0, 61);
        if (hd) didx = random_part(p.ndst, r.d1 - r.d0, me - r.d0, 62);
        IndexList S = IndexList::from_indices(p.nsrc, sidx.data(), static_cast<int64_t>(sidx.size()));
        IndexList D = IndexList::from_indices(p.ndst, didx.data(), static_cast<int64_t>(didx.size()));
        Conservation c;
        c.type = type;
        for (int64_t g : sidx) c.src_area.push_back(1.0 + 0.3 * std::sin(0.2 * g));
        for (int64_t g : didx) c.dst_area.push_back(1.0 + 0.4 * std::cos(0.1 * g));
        for (int64_t g : didx) c.dst_mask.push_back(g % 7 != 2);
        MappingOptions opt;
        opt.side = side;
        opt.method = Method::P2P;
        std::vector<double> x;
        for (int64_t g : sidx) x.push_back(2.0 + std::sin(0.3 * g));
        const double* xp = x.data();
        std::vector<double> y1(didx.size()), y2(didx.size());
        double* y1p = y1.data();
        double* y2p = y2.data();
        Agreement a1, a2, c1, c2;
        Mapping m1(MPI_COMM_WORLD, hs ? &S : nullptr, hd ? &D : nullptr, p.nsrc, p.ndst,
                   share_of(p, me, size), opt, a1);
        Mapping m2(MPI_COMM_WORLD, hs ? &S : nullptr, hd ? &D : nullptr, p.nsrc, p.ndst,
                   share_of(p, me, size), opt, a2);
        m1.set_conservation(c, c1);
        m2.set_conservation(c, c2);
        m1.apply(hs ? &xp : nullptr, hd ? &y1p : nullptr);
        for (int rep = 0; rep < 2; ++rep) {
          m2.start(hs ? &xp : nullptr);
          m2.finish(hd ? &y2p : nullptr);
        }
        EXPECT_TRUE(all_ranks(y1.empty() || std::memcmp(y1.data(), y2.data(), y1.size() * sizeof(double)) == 0));
      }
}

TEST(Mapping, UnmappedPointsKeepTheirValueOnRequest) {
  Watchdog w("mapping keep unmapped");
  const int me = world_rank(), size = world_size();
  Problem p = make_problem(50, 40, 3);
  std::vector<int64_t> didx;
  for (int64_t g = me; g < p.ndst; g += size) didx.push_back(g);
  std::vector<int64_t> sidx;
  for (int64_t g = me; g < p.nsrc; g += size) sidx.push_back(g);
  IndexList S = IndexList::from_indices(p.nsrc, sidx.data(), static_cast<int64_t>(sidx.size()));
  IndexList D = IndexList::from_indices(p.ndst, didx.data(), static_cast<int64_t>(didx.size()));
  Links links;
  if (me == 0)
    for (int64_t k = 0; k < p.nlinks; ++k) {
      links.number.push_back(k);
      links.src.push_back(p.src[k]);
      links.dst.push_back(p.dst[k]);
      links.weights.push_back(p.w[k]);
    }
  MappingOptions opt;
  opt.keep_unmapped = true;
  Agreement a;
  Mapping m(MPI_COMM_WORLD, &S, &D, p.nsrc, p.ndst, links, opt, a);
  std::vector<double> x(sidx.size(), 1.0), y(didx.size(), 42.0);
  const double* xp[] = {x.data()};
  double* yp[] = {y.data()};
  m.apply(xp, yp);
  int64_t unmapped = 0;
  for (size_t i = 0; i < didx.size(); ++i)
    if (didx[i] % 7 == 3) {
      ++unmapped;
      EXPECT_EQ(y[i], 42.0);
    } else {
      EXPECT_NE(y[i], 42.0);
    }
  EXPECT_EQ(m.info().unmapped_points, unmapped);
}

TEST(Mapping, BadLinkOnOneRankFailsEverywhere) {
  Watchdog w("mapping bad link on one rank");
  const int me = world_rank(), size = world_size();
  std::vector<int64_t> idx;
  for (int64_t g = me; g < 20; g += size) idx.push_back(g);
  IndexList L = IndexList::from_indices(20, idx.data(), static_cast<int64_t>(idx.size()));
  Links links;
  links.number = {me};
  links.src = {me == size - 1 ? 20 : me % 20};
  links.dst = {me % 20};
  links.weights = {1.0};
  MappingOptions opt;
  Outcome o = outcome_of([&] {
    Agreement a;
    Mapping m(MPI_COMM_WORLD, &L, &L, 20, 20, links, opt, a);
  });
  EXPECT_TRUE(same_code_everywhere(o.code, ISTHMUS_ERR_ARG));
  const std::string why = "link " + std::to_string(size - 1) + " has source index 20, outside [0, 20)";
  EXPECT_EQ(o.msg, me == size - 1 ? why : "failed on rank " + std::to_string(size - 1) + ": " + why);
  // an unknown side fails alike
  opt.side = static_cast<Side>(7);
  links.src = {me % 20};
  o = outcome_of([&] {
    Agreement a;
    Mapping m(MPI_COMM_WORLD, &L, &L, 20, 20, links, opt, a);
  });
  EXPECT_TRUE(same_code_everywhere(o.code, ISTHMUS_ERR_ARG));
  EXPECT_EQ(o.msg, "mapping side 7 (0 dst, 1 src, 2 auto)");
}

// CONSERV: after the correction the active destination integral equals the source one (GLOBAL,
// GLBPOS) or the source one scaled by the ratio of active areas (BASBAL, BASPOS), to the global
// sum's precision; masked destination points are left as mapped; GLBPOS keeps signs.
TEST(Mapping, ConservRestoresTheIntegral) {
  Watchdog w("mapping CONSERV");
  const int me = world_rank(), size = world_size();
  Problem p = make_problem(300, 200, 9);
  for (double& x : p.w) x = std::fabs(x) + 0.01;  // positive weights: positive fields map positive
  std::vector<int64_t> sidx = random_part(p.nsrc, size, me, 21), didx = random_part(p.ndst, size, me, 22);
  IndexList S = IndexList::from_indices(p.nsrc, sidx.data(), static_cast<int64_t>(sidx.size()));
  IndexList D = IndexList::from_indices(p.ndst, didx.data(), static_cast<int64_t>(didx.size()));
  Links links = share_of(p, me, size);
  auto area = [](int64_t g, bool src) { return 1.0 + 0.5 * std::cos(0.1 * g + (src ? 0 : 1)); };
  auto active = [](int64_t g, bool src) { return (g % (src ? 5 : 6)) != 1; };
  Conservation base;
  for (int64_t g : sidx) base.src_area.push_back(area(g, true)), base.src_mask.push_back(active(g, true));
  for (int64_t g : didx) base.dst_area.push_back(area(g, false)), base.dst_mask.push_back(active(g, false));
  // two fields, the second with 2 levels; positive values
  MappingOptions opt;
  opt.nlevels = {1, 2};
  std::vector<std::vector<double>> x(2);
  for (int f = 0; f < 2; ++f)
    for (int l = 0; l < opt.nlevels[f]; ++l)
      for (int64_t g : sidx) x[f].push_back(2.0 + std::sin(0.3 * g + f + l));
  const double* xp[] = {x[0].data(), x[1].data()};
  // the plain mapping, for the masked points
  Agreement a0;
  Mapping plain(MPI_COMM_WORLD, &S, &D, p.nsrc, p.ndst, links, opt, a0);
  std::vector<std::vector<double>> y0 = {std::vector<double>(didx.size()), std::vector<double>(2 * didx.size())};
  double* y0p[] = {y0[0].data(), y0[1].data()};
  plain.apply(xp, y0p);
  // integrals, by a plain sum in long double (independent of the library's sums)
  auto integral = [&](const std::vector<int64_t>& idx, const double* v, bool src) {
    long double s = 0;
    for (size_t i = 0; i < idx.size(); ++i)
      if (active(idx[i], src)) s += static_cast<long double>(v[i]) * area(idx[i], src);
    double local = static_cast<double>(s), global = 0;
    MPI_Allreduce(&local, &global, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    return global;
  };
  auto total_area = [&](const std::vector<int64_t>& idx, bool src) {
    std::vector<double> one(idx.size(), 1.0);
    return integral(idx, one.data(), src);
  };
  const double ws = total_area(sidx, true), wd = total_area(didx, false);
  for (Conserv type : {Conserv::Global, Conserv::Glbpos, Conserv::Basbal, Conserv::Baspos}) {
    SCOPED_TRACE(conserv_name(type));
    Agreement a;
    Mapping m(MPI_COMM_WORLD, &S, &D, p.nsrc, p.ndst, links, opt, a);
    Conservation c = base;
    c.type = type;
    Agreement ac;
    m.set_conservation(c, ac);
    std::vector<std::vector<double>> y = {std::vector<double>(didx.size()), std::vector<double>(2 * didx.size())};
    double* yp[] = {y[0].data(), y[1].data()};
    m.apply(xp, yp);
    for (int f = 0; f < 2; ++f)
      for (int l = 0; l < opt.nlevels[f]; ++l) {
        const double ss = integral(sidx, x[f].data() + l * sidx.size(), true);
        const double sd = integral(didx, y[f].data() + l * didx.size(), false);
        const bool scaled = type == Conserv::Basbal || type == Conserv::Baspos;
        const double want = scaled ? ss * (wd / ws) : ss;
        EXPECT_NEAR(sd, want, 1e-12 * std::fabs(want)) << "field " << f << " level " << l;
        for (size_t i = 0; i < didx.size(); ++i) {
          const double v = y[f][l * didx.size() + i], v0 = y0[f][l * didx.size() + i];
          if (!active(didx[i], false)) {
            EXPECT_EQ(v, v0);  // masked: as mapped
          } else if (v0 > 0 && (type == Conserv::Glbpos || type == Conserv::Baspos)) {
            EXPECT_GT(v, 0.0);  // signs kept
          }
        }
      }
  }
  // a conservation type every rank must share
  Agreement a;
  Mapping m(MPI_COMM_WORLD, &S, &D, p.nsrc, p.ndst, links, opt, a);
  Conservation c = base;
  c.type = me == size - 1 ? Conserv::Glbpos : Conserv::Global;
  const Outcome o = outcome_of([&] {
    Agreement ac;
    m.set_conservation(c, ac);
  });
  EXPECT_TRUE(same_code_everywhere(o.code, size > 1 ? ISTHMUS_ERR_ARG : ISTHMUS_OK));
}

// Masked source points contribute nothing, on both sides: the serial reference skips their
// links, and a destination point left without links is unmapped (fill value).
TEST(Mapping, MaskedSourcesContributeNothing) {
  Watchdog w("mapping source mask");
  const int me = world_rank(), size = world_size();
  Problem p = make_problem(400, 300, 17);
  auto active = [](int64_t g) { return g % 3 != 0; };
  for (int variant = 0; variant < 3; ++variant) {
    const Side side = variant == 1 ? Side::Src : Side::Dst;
    SCOPED_TRACE(std::string(side_name(side)) + (variant == 2 ? " with the node stage" : ""));
    std::vector<int64_t> sidx = random_part(p.nsrc, size, me, 51), didx = random_part(p.ndst, size, me, 52);
    IndexList S = IndexList::from_indices(p.nsrc, sidx.data(), static_cast<int64_t>(sidx.size()));
    IndexList D = IndexList::from_indices(p.ndst, didx.data(), static_cast<int64_t>(didx.size()));
    Links links = share_of(p, me, size);
    MappingOptions opt;
    opt.side = side;
    opt.fill_value = -5.0;
    if (variant == 2) {
      opt.node_stage = NodeStage::On;
      opt.node_ranks = 2;
    }
    for (int64_t g : sidx) opt.src_mask.push_back(active(g) ? 1 : 0);
    Agreement a;
    Mapping m(MPI_COMM_WORLD, &S, &D, p.nsrc, p.ndst, links, opt, a);
    std::vector<double> x, y(didx.size());
    for (int64_t g : sidx) x.push_back(active(g) ? value(g, 0, 0) : std::nan(""));  // masked: garbage
    const double* xp[] = {x.data()};
    double* yp[] = {y.data()};
    m.apply(xp, yp);
    // reference without the masked links
    std::vector<double> ref(p.ndst, -5.0);
    std::vector<bool> seen(p.ndst, false);
    for (int64_t k = 0; k < p.nlinks; ++k) {
      if (!active(p.src[k])) continue;
      const double t = p.w[k] * value(p.src[k], 0, 0);
      ref[p.dst[k]] = seen[p.dst[k]] ? ref[p.dst[k]] + t : t;
      seen[p.dst[k]] = true;
    }
    int64_t wrong = 0;
    for (size_t i = 0; i < didx.size(); ++i) {
      const double v = y[i], r = ref[didx[i]];
      if (side == Side::Dst ? std::memcmp(&v, &r, sizeof v) != 0 : !(std::fabs(v - r) <= 1e-14 * (std::fabs(r) + 1e3)))
        ++wrong;
    }
    EXPECT_TRUE(all_ranks(wrong == 0)) << wrong << " values differ";
  }
}

// Several weights per link (SCRIP's second-order conservative: the field and its two
// gradients): each link adds w1 x + w2 g1 + w3 g2; the same bits as the serial sum at every rank
// count, fused and unfused, on the destination side; the source side within 1e-14.
TEST(Mapping, SecondOrderWeightsUseTheGradients) {
  Watchdog w("mapping with 3 weights per link");
  const int me = world_rank(), size = world_size();
  Problem p = make_problem(500, 400, 23);
  std::vector<double> w3;
  std::mt19937_64 rng(99);
  std::uniform_real_distribution<double> g(-0.1, 0.1);
  for (double x : p.w) w3.insert(w3.end(), {x, g(rng), g(rng)});
  auto comp = [](int64_t s, int j) { return j == 0 ? value(s, 0, 0) : std::cos(0.01 * s * j) * j; };
  std::vector<double> ref(p.ndst, -777.0);
  std::vector<bool> seen(p.ndst, false);
  for (int64_t k = 0; k < p.nlinks; ++k) {
    double t = w3[3 * k] * comp(p.src[k], 0);
    t += w3[3 * k + 1] * comp(p.src[k], 1);
    t += w3[3 * k + 2] * comp(p.src[k], 2);
    ref[p.dst[k]] = seen[p.dst[k]] ? ref[p.dst[k]] + t : t;
    seen[p.dst[k]] = true;
  }
  std::vector<int64_t> sidx = random_part(p.nsrc, size, me, 61), didx = random_part(p.ndst, size, me, 62);
  IndexList S = IndexList::from_indices(p.nsrc, sidx.data(), static_cast<int64_t>(sidx.size()));
  IndexList D = IndexList::from_indices(p.ndst, didx.data(), static_cast<int64_t>(didx.size()));
  Links links;
  links.num_wgts = 3;
  for (int64_t k = me; k < p.nlinks; k += size) {
    links.number.push_back(k);
    links.src.push_back(p.src[k]);
    links.dst.push_back(p.dst[k]);
    links.weights.insert(links.weights.end(), {w3[3 * k], w3[3 * k + 1], w3[3 * k + 2]});
  }
  std::vector<std::vector<double>> x(3);
  for (int j = 0; j < 3; ++j)
    for (int64_t s : sidx) x[j].push_back(comp(s, j));
  const double* xp[] = {x[0].data(), x[1].data(), x[2].data()};
  for (int variant = 0; variant < 3; ++variant) {
    const bool fused = variant != 1;
    SCOPED_TRACE(variant == 1 ? "unfused" : variant == 2 ? "fused, node stage" : "fused");
    MappingOptions opt;
    opt.fill_value = -777.0;
    opt.fused = fused;
    if (variant == 2) {
      opt.node_stage = NodeStage::On;
      opt.node_ranks = 3;
    }
    Agreement a;
    Mapping m(MPI_COMM_WORLD, &S, &D, p.nsrc, p.ndst, links, opt, a);
    std::vector<double> y(didx.size());
    double* yp[] = {y.data()};
    m.apply(xp, yp);
    int64_t wrong = 0;
    for (size_t i = 0; i < didx.size(); ++i)
      if (std::memcmp(&y[i], &ref[didx[i]], sizeof(double)) != 0) ++wrong;
    EXPECT_TRUE(all_ranks(wrong == 0)) << wrong << " values differ";
  }
  // The source side (OASIS3-MCT's place for higher-order terms: the put side) forms partial
  // sums of the same link terms: equal within 1e-14. A companion given as NULL adds nothing:
  // with both NULL, the bits of a mapping of the first weights alone; auto counts the three
  // arrays a needed point would move on the destination side.
  std::vector<double> ref1(p.ndst, -777.0);
  for (int64_t k = 0; k < p.nlinks; ++k) {
    const double t = w3[3 * k] * comp(p.src[k], 0);
    ref1[p.dst[k]] = ref1[p.dst[k]] == -777.0 ? t : ref1[p.dst[k]] + t;
  }
  Links first = links;
  first.num_wgts = 1;
  first.weights.clear();
  for (size_t k = 0; k < links.size(); ++k) first.weights.push_back(links.weights[3 * k]);
  for (Side side : {Side::Src, Side::Auto}) {
    SCOPED_TRACE(side_name(side));
    MappingOptions opt;
    opt.side = side;
    opt.fill_value = -777.0;
    Agreement a;
    Mapping m(MPI_COMM_WORLD, &S, &D, p.nsrc, p.ndst, links, opt, a);
    if (side == Side::Auto) {
      EXPECT_EQ(m.info().side, Side::Src);
      EXPECT_EQ(m.info().dst_side_values % 3, 0);
    }
    std::vector<double> y(didx.size());
    double* yp[] = {y.data()};
    m.apply(xp, yp);
    int64_t wrong = 0;
    for (size_t i = 0; i < didx.size(); ++i)
      if (!(std::fabs(y[i] - ref[didx[i]]) <= 1e-14 * (std::fabs(ref[didx[i]]) + 1.0))) ++wrong;
    EXPECT_TRUE(all_ranks(wrong == 0)) << wrong << " values differ from the serial sum";
    const double* only_first[] = {x[0].data(), nullptr, nullptr};
    m.apply(only_first, yp);
    MappingOptions o1 = opt;
    o1.side = Side::Src;
    Agreement a1;
    Mapping m1(MPI_COMM_WORLD, &S, &D, p.nsrc, p.ndst, first, o1, a1);
    std::vector<double> y1(didx.size());
    double* y1p[] = {y1.data()};
    const double* x1p[] = {x[0].data()};
    m1.apply(x1p, y1p);
    wrong = 0;
    for (size_t i = 0; i < didx.size(); ++i) {
      if (std::memcmp(&y[i], &y1[i], sizeof(double)) != 0) ++wrong;
      if (!(std::fabs(y[i] - ref1[didx[i]]) <= 1e-14 * (std::fabs(ref1[didx[i]]) + 1.0))) ++wrong;
    }
    EXPECT_TRUE(all_ranks(wrong == 0)) << wrong << " values differ without the companions";
  }
}

namespace {

// One mapping of several built together: its problem, its parts on this rank, its side.
struct Joint {
  Problem p;
  std::vector<int64_t> sidx, didx;
  bool has_src = false, has_dst = false;
  IndexList S, D;
  Side side = Side::Dst;
};

Joint make_joint(Problem p, int s0, int s1, int d0, int d1, unsigned seed, Side side) {
  const int me = world_rank();
  Joint j{std::move(p), {}, {}, me >= s0 && me < s1, me >= d0 && me < d1, {}, {}, side};
  if (j.has_src) j.sidx = random_part(j.p.nsrc, s1 - s0, me - s0, seed);
  if (j.has_dst) j.didx = random_part(j.p.ndst, d1 - d0, me - d0, seed + 1);
  j.S = IndexList::from_indices(j.p.nsrc, j.sidx.data(), static_cast<int64_t>(j.sidx.size()));
  j.D = IndexList::from_indices(j.p.ndst, j.didx.data(), static_cast<int64_t>(j.didx.size()));
  return j;
}

// The links of j prepared by its side's ranks (all ranks here: a rank without a part of that
// side passes none).
PreparedLinks prepared_of(const Joint& j) {
  const bool dst = j.side == Side::Dst;
  const bool holds = dst ? j.has_dst : j.has_src;
  return prepare_links(MPI_COMM_WORLD, j.side, holds ? (dst ? &j.D : &j.S) : nullptr, j.p.nsrc, j.p.ndst,
                       share_of(j.p, world_rank(), world_size()));
}

MappingOptions joint_options(const Joint& j, const std::vector<int>& levels) {
  MappingOptions opt;
  opt.method = Method::P2P;
  opt.nlevels = levels;
  opt.fill_value = -777.0;
  opt.side = j.side;
  return opt;
}

// Applies m to j's source values; the destination values, level-major per field.
std::vector<std::vector<double>> applied(Mapping& m, const Joint& j, const std::vector<int>& levels) {
  const int nf = static_cast<int>(levels.size());
  std::vector<std::vector<double>> x(nf), y(nf);
  std::vector<const double*> xp;
  std::vector<double*> yp;
  for (int f = 0; f < nf; ++f) {
    for (int l = 0; l < levels[f]; ++l)
      for (int64_t g : j.sidx) x[f].push_back(value(g, f, l));
    y[f].assign(j.didx.size() * levels[f], 0.0);
    xp.push_back(x[f].data());
    yp.push_back(y[f].data());
  }
  m.apply(j.has_src ? xp.data() : nullptr, j.has_dst ? yp.data() : nullptr);
  return y;
}

}  // namespace

// A coupler's mappings between the same two components are built together (one reduction, one
// directory for the exchange maps of the same options): each gives the bits it gives built
// alone, the destination side the serial reference's, whatever the sides, grids and rank sets
// (both sides on every rank, the two sides on disjoint halves, the source side multiplying).
TEST(Mapping, MappingsBuiltTogetherGiveTheBitsOfEachBuiltAlone) {
  const int size = world_size();
  const int h = size > 1 ? size / 2 : 1;
  const std::vector<int> levels = {1, 3};
  std::vector<Joint> js;
  js.push_back(make_joint(make_problem(300, 200, 11), 0, size, 0, size, 5, Side::Dst));
  js.push_back(make_joint(make_problem(150, 400, 12), 0, h, size > 1 ? h : 0, size, 6, Side::Dst));
  js.push_back(make_joint(make_problem(250, 180, 13), 0, size, 0, size, 7, Side::Src));
  js.push_back(make_joint(make_problem(90, 60, 14), size > 1 ? h : 0, size, 0, h, 8, Side::Dst));
  std::vector<Agreement> agreements(js.size());
  std::vector<Mapping::Request> requests;
  for (size_t k = 0; k < js.size(); ++k) {
    Mapping::Request r;
    r.src = js[k].has_src ? &js[k].S : nullptr;
    r.dst = js[k].has_dst ? &js[k].D : nullptr;
    r.src_grid_size = js[k].p.nsrc;
    r.dst_grid_size = js[k].p.ndst;
    r.prepared = prepared_of(js[k]);
    r.opt = joint_options(js[k], levels);
    r.agreement = &agreements[k];
    requests.push_back(std::move(r));
  }
  std::vector<std::unique_ptr<Mapping>> together = Mapping::build_together(MPI_COMM_WORLD, requests);
  ASSERT_EQ(together.size(), js.size());
  int64_t wrong = 0, wrong_ref = 0;
  for (size_t k = 0; k < js.size(); ++k) {
    const Joint& j = js[k];
    Agreement a;
    Mapping alone(MPI_COMM_WORLD, j.has_src ? &j.S : nullptr, j.has_dst ? &j.D : nullptr, j.p.nsrc,
                  j.p.ndst, prepared_of(j), joint_options(j, levels), a);
    EXPECT_EQ(together[k]->info().side, j.side);
    EXPECT_EQ(together[k]->info().local_links, alone.info().local_links);
    const auto y_together = applied(*together[k], j, levels);
    const auto y_alone = applied(alone, j, levels);
    for (size_t f = 0; f < levels.size(); ++f) {
      if (y_together[f].size() != y_alone[f].size() ||
          (!y_alone[f].empty() &&
           std::memcmp(y_together[f].data(), y_alone[f].data(), y_alone[f].size() * sizeof(double)) != 0))
        ++wrong;
      for (int l = 0; l < levels[f] && j.side == Side::Dst; ++l) {
        bool any = false;
        const std::vector<double> ref = reference(j.p, static_cast<int>(f), l, -777.0, any);
        for (size_t i = 0; i < j.didx.size(); ++i)
          if (std::memcmp(&y_together[f][l * j.didx.size() + i], &ref[j.didx[i]], sizeof(double)) != 0) ++wrong_ref;
      }
    }
  }
  EXPECT_TRUE(all_ranks(wrong == 0)) << wrong << " fields differ from the mappings built alone";
  EXPECT_TRUE(all_ranks(wrong_ref == 0)) << wrong_ref << " values differ from the serial reference";
}

// A failure recorded in one request's agreement (as a coupler entry's missing restart file)
// fails every rank, with that request's code and message, as if the agreements were concluded
// in turn; the first failing request in order is the one named.
TEST(Mapping, MappingsBuiltTogetherFailOnEveryRankWithTheFirstFailure) {
  const int size = world_size(), me = world_rank();
  const std::vector<int> levels = {1};
  std::vector<Joint> js;
  for (unsigned k = 0; k < 3; ++k)
    js.push_back(make_joint(make_problem(120, 80, 20 + k), 0, size, 0, size, 30 + k, Side::Dst));
  std::vector<Agreement> agreements(js.size());
  agreements[1].check([&] {
    if (me == size - 1) fail(ISTHMUS_ERR_FILE, "entry 2: the restart file is missing");
  });
  agreements[2].record(ISTHMUS_ERR_CONFIG, "entry 3: not this one");
  std::vector<Mapping::Request> requests;
  for (size_t k = 0; k < js.size(); ++k) {
    Mapping::Request r;
    r.src = &js[k].S;
    r.dst = &js[k].D;
    r.src_grid_size = js[k].p.nsrc;
    r.dst_grid_size = js[k].p.ndst;
    r.prepared = prepared_of(js[k]);
    r.opt = joint_options(js[k], levels);
    r.agreement = &agreements[k];
    requests.push_back(std::move(r));
  }
  const Outcome o = outcome_of([&] { Mapping::build_together(MPI_COMM_WORLD, requests); });
  EXPECT_EQ(o.code, ISTHMUS_ERR_FILE) << o.msg;
  EXPECT_NE(o.msg.find("entry 2: the restart file is missing"), std::string::npos) << o.msg;
  EXPECT_TRUE(all_ranks(o.code == ISTHMUS_ERR_FILE));
}
