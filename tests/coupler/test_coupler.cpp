// The coupler through its C++ core: two components in one executable (the world cut in two),
// coupling within one component, dates and periods, LOCTRANS, colon groups, bundles, float
// fields, mappings with the real ORCA2 -> LMDZ weights, and definition errors.
#include <gtest/gtest.h>
#include <mpi.h>
#include <netcdf.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <memory>
#include <numeric>
#include <random>
#include <sstream>

#include "base/error.h"
#include "coupler/coupler.h"
#include "core_test_util.h"
#include "mpi_test_util.h"
#include "remap/mapping.h"
#include "remap/scrip_weights.h"

using namespace isthmus;
using namespace isthmus::coupler;

using isthmus::test::Outcome;
using isthmus::test::outcome_of;
using isthmus::test::random_part;

namespace {


IndexList list_of(int64_t n, const std::vector<int64_t>& idx) {
  return IndexList::from_indices(n, idx.data(), static_cast<int64_t>(idx.size()));
}
// def_partition copies the list: a temporary's address is all it needs
const IndexList* ptr(const IndexList& l) { return &l; }

// The world cut in two components: "ocean" on the first ranks, "atmos" on the others (at one
// rank both cannot exist: tests that need two components then run one within the component).
struct Layout {
  int me = world_rank(), size = world_size();
  int nocean = std::max(1, size / 2);
  bool ocean() const { return me < nocean; }
  bool two() const { return size > 1; }
  std::string component() const { return ocean() ? "ocean" : "atmos"; }
  int local_rank() const { return ocean() ? me : me - nocean; }
  int local_size() const { return ocean() ? nocean : size - nocean; }
};

Entry entry(const std::string& src, const std::string& dst, int period, int64_t nx, int64_t ny) {
  Entry e;
  auto split = [](const std::string& s) {
    std::vector<std::string> v;
    size_t a = 0;
    for (size_t b; (b = s.find(':', a)) != std::string::npos; a = b + 1) v.push_back(s.substr(a, b - a));
    v.push_back(s.substr(a));
    return v;
  };
  e.src_names = split(src);
  e.dst_names = split(dst);
  e.period = period;
  e.src_nx = e.dst_nx = nx;
  e.src_ny = e.dst_ny = ny;
  e.src_grid = "gsrc";
  e.dst_grid = "gdst";
  e.line = 10;
  return e;
}

// SO (ORCA2, torc) -> SA (LMDZ, lmdz) every second through a weights file
Entry orca2_to_lmdz(const std::string& weights) {
  Entry e = entry("SO", "SA", 1, 182, 149);
  e.dst_nx = 96;
  e.dst_ny = 72;
  e.src_grid = "torc";
  e.dst_grid = "lmdz";
  e.mapping = MappingSpec{};
  e.mapping->file = weights;
  return e;
}

double value(int64_t g, int date, int f = 0, int l = 0) {
  return std::sin(0.01 * g + f) * 100 + date * 0.25 + l * 1000;
}


}  // namespace

// Ocean sends a field to the atmosphere every 3 s, the models step by 1 s: puts at other dates
// return kOk and move nothing; each get at a coupling date receives the put of that date at the
// right global index, for random partitions on both sides.
TEST(Coupler, TwoComponentsExchangeAtCouplingDatesOnly) {
  Watchdog w("coupler two components");
  Layout L;
  if (!L.two()) GTEST_SKIP() << "needs two components";
  const int64_t nx = 37, ny = 11, n = nx * ny;
  Config cfg;
  cfg.file = "namcouple";
  cfg.runtime = 12;
  cfg.entries.push_back(entry("SST", "SSTA", 3, nx, ny));
  Coupler c(MPI_COMM_WORLD, L.component(), cfg);
  std::vector<int64_t> idx = random_part(n, L.local_size(), L.local_rank(), L.ocean() ? 1 : 2);
  const int part = c.def_partition(ptr(list_of(n, idx)));
  const int var = L.ocean() ? c.def_var("SST", part, VarDirection::Out, DataType::Double)
                            : c.def_var("SSTA", part, VarDirection::In, DataType::Double);
  c.enddef();
  {
    // a second enddef fails on every rank, within the declarations' first collective
    int code = ISTHMUS_OK;
    std::string what;
    try {
      c.enddef();
    } catch (const isthmus::Error& e) {
      code = e.code();
      what = e.what();
    }
    EXPECT_EQ(code, ISTHMUS_ERR_ARG);
    EXPECT_NE(what.find("enddef after enddef (component " + L.component() + ")"), std::string::npos) << what;
  }
  int64_t wrong = 0, codes = 0;
  std::vector<double> x(idx.size());
  for (int date = 0; date < 12; ++date) {
    const bool coupling = date % 3 == 0;
    if (L.ocean()) {
      for (size_t i = 0; i < idx.size(); ++i) x[i] = value(idx[i], date);
      codes += c.put(var, date, x.data()) != (coupling ? kSent : kOk);
    } else {
      std::fill(x.begin(), x.end(), -1.0);
      const int info = c.get(var, date, x.data());
      codes += info != (coupling ? kRecvd : kOk);
      for (size_t i = 0; i < idx.size() && coupling; ++i) wrong += x[i] != value(idx[i], date);
    }
  }
  c.terminate();
  EXPECT_TRUE(all_ranks(codes == 0)) << codes << " wrong return codes";
  EXPECT_TRUE(all_ranks(wrong == 0)) << wrong << " wrong values";
  // the communication report: 12 calls and 4 exchanges per rank, on the component's first rank
  const std::string report = c.report();
  EXPECT_EQ(report.empty(), L.local_rank() != 0);
  if (L.local_rank() == 0) {
    std::istringstream in(report.substr(report.find("SST>SSTA")));
    std::string entry, side;
    long long puts, gets, sent, recvd, messages;
    in >> entry >> side >> puts >> gets >> sent >> recvd >> messages;
    const long long ls = L.local_size();
    EXPECT_EQ(side, L.ocean() ? "put" : "get") << report;
    EXPECT_EQ(puts, L.ocean() ? 12 * ls : 0) << report;
    EXPECT_EQ(gets, L.ocean() ? 0 : 12 * ls) << report;
    EXPECT_EQ(sent, L.ocean() ? 4 * ls : 0) << report;
    EXPECT_EQ(recvd, L.ocean() ? 0 : 4 * ls) << report;
    EXPECT_GT(messages, 0) << report;
  }
}

// LOCTRANS AVERAGE and T_MAX with OASIS's rule: the value sent at a coupling date is made of
// the puts since the previous one (excluded) up to this one (included); a colon group of two
// fields travels once both are put (the first put returns kWaitgroup); a bundle of 3 levels;
// float fields on the receiving side.
TEST(Coupler, TimeOperationsColonGroupsBundlesAndFloats) {
  Watchdog w("coupler loctrans");
  Layout L;
  if (!L.two()) GTEST_SKIP() << "needs two components";
  const int64_t nx = 20, ny = 9, n = nx * ny;
  Config cfg;
  cfg.file = "namcouple";
  cfg.runtime = 16;
  Entry avg = entry("U:V", "UA:VA", 4, nx, ny);
  avg.loctrans = TimeOp::Average;
  Entry mx = entry("T", "TA", 4, nx, ny);
  mx.loctrans = TimeOp::TMax;
  cfg.entries = {avg, mx};
  Coupler c(MPI_COMM_WORLD, L.component(), cfg);
  std::vector<int64_t> idx = random_part(n, L.local_size(), L.local_rank(), L.ocean() ? 3 : 4);
  const int part = c.def_partition(ptr(list_of(n, idx)));
  const DataType t = L.ocean() ? DataType::Double : DataType::Float;
  const VarDirection d = L.ocean() ? VarDirection::Out : VarDirection::In;
  const int u = c.def_var(L.ocean() ? "U" : "UA", part, d, t, 3);
  const int v = c.def_var(L.ocean() ? "V" : "VA", part, d, t, 3);
  const int tt = c.def_var(L.ocean() ? "T" : "TA", part, d, t, 3);
  c.enddef();
  const size_t m = idx.size();
  int64_t wrong = 0, codes = 0;
  for (int date = 0; date < 16; ++date) {
    const bool coupling = date % 4 == 0;
    if (L.ocean()) {
      std::vector<double> a(3 * m), b(3 * m), z(3 * m);
      for (int l = 0; l < 3; ++l)
        for (size_t i = 0; i < m; ++i) {
          a[l * m + i] = value(idx[i], date, 0, l);
          b[l * m + i] = value(idx[i], date, 1, l);
          z[l * m + i] = std::cos(idx[i] + 0.7 * date) + l;
        }
      codes += c.put(u, date, a.data()) != (coupling ? kWaitgroup : kLocTrans);
      codes += c.put(v, date, b.data()) != (coupling ? kSent : kLocTrans);
      codes += c.put(tt, date, z.data()) != (coupling ? kSent : kLocTrans);
    } else {
      std::vector<float> a(3 * m), b(3 * m), z(3 * m);
      const int ia = c.get(u, date, a.data()), ib = c.get(v, date, b.data()),
                iz = c.get(tt, date, z.data());
      codes += ia != (coupling ? kRecvd : kOk) || ib != ia || iz != ia;
      if (!coupling) continue;
      const int first = date == 0 ? 0 : date - 3;  // the puts after the previous coupling date
      for (int l = 0; l < 3; ++l)
        for (size_t i = 0; i < m; ++i) {
          double sa = 0, sb = 0, zmax = -1e300;
          for (int s = first; s <= date; ++s) {
            sa += value(idx[i], s, 0, l);
            sb += value(idx[i], s, 1, l);
            zmax = std::max(zmax, std::cos(idx[i] + 0.7 * s) + l);
          }
          const double k = average_factor(date - first + 1);
          wrong += a[l * m + i] != static_cast<float>(date == 0 ? sa : sa * k);
          wrong += b[l * m + i] != static_cast<float>(date == 0 ? sb : sb * k);
          wrong += z[l * m + i] != static_cast<float>(zmax);
        }
    }
  }
  c.terminate();
  EXPECT_TRUE(all_ranks(codes == 0)) << codes << " wrong return codes";
  EXPECT_TRUE(all_ranks(wrong == 0)) << wrong << " wrong values";
}

// One component, two decompositions of one grid on the same ranks (physics -> dynamics), and
// ranks that run no component at all (an I/O server) between them.
TEST(Coupler, CouplingWithinOneComponentOnOverlappingRanks) {
  Watchdog w("coupler within one component");
  const int me = world_rank(), size = world_size();
  const bool idle = size > 2 && me == 1;  // takes part in init only
  const int64_t n = 503;
  Config cfg;
  cfg.file = "namcouple";
  cfg.runtime = 4;
  cfg.entries.push_back(entry("PHYS", "DYN", 1, 0, 0));
  Coupler c(MPI_COMM_WORLD, idle ? "" : "model", cfg);
  if (idle) {
    EXPECT_EQ(c.local_comm(), MPI_COMM_NULL);
    c.enddef();
    return;
  }
  int lr = 0, ls = 0;
  MPI_Comm_rank(c.local_comm(), &lr);
  MPI_Comm_size(c.local_comm(), &ls);
  std::vector<int64_t> phys = random_part(n, ls, lr, 5);
  std::vector<int64_t> dyn = random_part(n, ls, (lr + 1) % ls, 6);
  const int pp = c.def_partition(ptr(list_of(n, phys)), "physics");
  const int pd = c.def_partition(ptr(list_of(n, dyn)), "dynamics");
  const int out = c.def_var("PHYS", pp, VarDirection::Out, DataType::Double);
  const int in = c.def_var("DYN", pd, VarDirection::In, DataType::Double);
  c.enddef();
  int64_t wrong = 0;
  for (int date = 0; date < 4; ++date) {
    std::vector<double> x(phys.size()), y(dyn.size(), -1.0);
    for (size_t i = 0; i < phys.size(); ++i) x[i] = value(phys[i], date);
    EXPECT_EQ(c.put(out, date, x.data()), kSent);
    EXPECT_EQ(c.get(in, date, y.data()), kRecvd);
    for (size_t i = 0; i < dyn.size(); ++i) wrong += y[i] != value(dyn[i], date);
  }
  c.terminate();
  EXPECT_EQ(wrong, 0);
}

// Two components with a rank that runs none between them: only the components' ranks make
// the communicator of every component's ranks (the idle rank takes part in init's allgather
// alone), and enddef swaps the declarations over it.
TEST(Coupler, TwoComponentsAroundARankThatRunsNone) {
  Watchdog w("coupler two components and an idle rank");
  const int me = world_rank(), size = world_size();
  if (size < 3) GTEST_SKIP() << "needs three ranks";
  // rank 1 idle, the last rank and the other odd ones the atmosphere, the rest the ocean
  auto name_of = [size](int r) -> std::string {
    if (r == 1) return "";
    return r == size - 1 || r % 2 == 1 ? "atmos" : "ocean";
  };
  const bool idle = name_of(me).empty();
  Config cfg;
  cfg.file = "namcouple";
  cfg.runtime = 4;
  Coupler c(MPI_COMM_WORLD, name_of(me), cfg);
  if (!idle) {
    int ls = 0, same = 0;
    MPI_Comm_size(c.local_comm(), &ls);
    for (int r = 0; r < size; ++r) same += name_of(r) == name_of(me);
    EXPECT_EQ(ls, same);
  }
  c.enddef();
  if (!idle) c.terminate();
}

// An ORCA2 -> LMDZ weights file `file` in `dir`, mapped by the coupler on each side: the
// destination side (bfb) gives the bits of a serial sum in file order of `reference`'s links
// (first weights) at every rank count; the source side (sum) and auto agree to 1e-14.
// A coupler of `cfg` after enddef, over two components (or one holding both grids when the
// layout has one rank): the ocean's SO, SO2 on a random partition of ORCA2, the atmosphere's
// SA, SA2 on one of LMDZ.
// blocks: contiguous parts (OASIS's apple partitions) instead of random points.
std::vector<int64_t> block_part(int64_t n, int parts, int part) {
  std::vector<int64_t> v;
  for (int64_t g = n * part / parts; g < n * (part + 1) / parts; ++g) v.push_back(g);
  return v;
}

struct TwoFields {
  TwoFields(const Config& cfg, const CouplerOptions& opt, bool blocks = false) {
    const int64_t ns = 182 * 149, nd = 96 * 72;
    const int lr = L.two() ? L.local_rank() : 0, ls = L.two() ? L.local_size() : 1;
    c = std::make_unique<Coupler>(MPI_COMM_WORLD, L.two() ? L.component() : "both", cfg, opt);
    src = !L.two() || L.ocean();
    dst = !L.two() || !L.ocean();
    sidx = blocks ? block_part(ns, ls, lr) : random_part(ns, ls, lr, 7);
    didx = blocks ? block_part(nd, ls, lr) : random_part(nd, ls, lr, 8);
    if (src) {
      const int part = c->def_partition(ptr(list_of(ns, sidx)));
      so = c->def_var("SO", part, VarDirection::Out, DataType::Double);
      so2 = c->def_var("SO2", part, VarDirection::Out, DataType::Double);
    }
    if (dst) {
      const int part = c->def_partition(ptr(list_of(nd, didx)));
      sa = c->def_var("SA", part, VarDirection::In, DataType::Double);
      sa2 = c->def_var("SA2", part, VarDirection::In, DataType::Double);
    }
    c->enddef();
  }
  Layout L;
  std::unique_ptr<Coupler> c;
  bool src = false, dst = false;
  std::vector<int64_t> sidx, didx;
  int so = -1, sa = -1, so2 = -1, sa2 = -1;
};

// by_destination: whether the file lists its links by destination, so that the destination
// side's ranks read their own links straight from it (MappingInfo says which route was taken;
// a single destination rank reads every link itself, in whatever order; parts of random points
// are left to the slabs and the directory). blocks: contiguous parts, else random points.
void check_orca2_lmdz_mapping(const std::string& dir, const std::string& file,
                              const std::string& reference, bool by_destination = true,
                              bool blocks = false) {
  Layout L;
  const int64_t ns = 182 * 149, nd = 96 * 72;
  // serial reference on every rank
  remap::WeightsInfo info;
  remap::LinkSlab slab = remap::read_scrip_weights(MPI_COMM_SELF, reference, {}, &info);
  auto src_value = [](int64_t g) { return 273.0 + 20 * std::sin(g * 0.001) + g * 1e-6; };
  std::vector<double> ref(nd, 0.0);
  std::vector<bool> seen(nd, false);
  for (int64_t k = 0; k < slab.size(); ++k) {
    const double t = slab.weights[k * info.num_wgts] * src_value(slab.src[k]);
    ref[slab.dst[k]] = seen[slab.dst[k]] ? ref[slab.dst[k]] + t : t;
    seen[slab.dst[k]] = true;
  }
  for (MapSide side : {MapSide::Dst, MapSide::Src, MapSide::Auto}) {
    Config cfg;
    cfg.file = "namcouple";
    cfg.runtime = 2;
    Entry e = orca2_to_lmdz(file);
    e.mapping->side = side;
    e.mapping->side_given = true;
    cfg.entries.push_back(e);
    // a second entry with the same weights file and partitions (its links are shared)
    e.src_names = {"SO2"};
    e.dst_names = {"SA2"};
    e.line = 20;
    cfg.entries.push_back(e);
    CouplerOptions opt;
    opt.run_dir = dir;
    // two components, or one component holding both grids at one rank
    TwoFields run(cfg, opt, blocks);
    Coupler& c = *run.c;
    const bool src = run.src, dst = run.dst;
    const std::vector<int64_t>&sidx = run.sidx, &didx = run.didx;
    const int so = run.so, sa = run.sa, so2 = run.so2, sa2 = run.sa2;
    if (dst && side != MapSide::Auto) {
      const remap::MappingInfo* mi = c.couplings()[0]->mapping_info();
      ASSERT_NE(mi, nullptr);
      // (a destination component of one rank reads every link itself, in any order)
      const bool one_rank = (L.two() ? L.local_size() : world_size()) == 1;
      EXPECT_EQ(mi->links_read_by_destination,
                side == MapSide::Dst && (one_rank || (by_destination && blocks)))
          << "side " << static_cast<int>(side);
    }
    // the second field is the first times 2: exactly twice its mapping's result
    std::vector<double> x(sidx.size()), x2(sidx.size()), y(didx.size(), -1.0), y2(didx.size(), -1.0);
    for (size_t i = 0; i < sidx.size(); ++i) x2[i] = 2 * (x[i] = src_value(sidx[i]));
    int64_t wrong = 0;
    for (int date = 0; date < 2; ++date) {
      if (src) {
        EXPECT_EQ(c.put(so, date, x.data()), kSent);
        EXPECT_EQ(c.put(so2, date, x2.data()), kSent);
      }
      if (dst) {
        EXPECT_EQ(c.get(sa, date, y.data()), kRecvd);
        EXPECT_EQ(c.get(sa2, date, y2.data()), kRecvd);
        const bool exact = c.couplings()[0]->side() == remap::Side::Dst;
        for (size_t i = 0; i < didx.size(); ++i) {
          const double r = seen[didx[i]] ? ref[didx[i]] : 0.0;
          wrong += exact ? std::memcmp(&y[i], &r, sizeof r) != 0
                         : std::fabs(y[i] - r) > 1e-14 * std::fabs(r);
          const double r2 = 2 * r;  // doubling every product and sum is exact
          wrong += exact ? std::memcmp(&y2[i], &r2, sizeof r2) != 0
                         : std::fabs(y2[i] - r2) > 1e-14 * std::fabs(r2);
        }
      }
    }
    if (side == MapSide::Auto && L.two()) {
      // each component prepared its own side's links; the choice and its counts are those of
      // a mapping that routes the file's links to both sides itself
      remap::MappingOptions mo;
      mo.side = remap::Side::Auto;
      remap::Links share;
      for (int64_t k = world_rank(); k < slab.size(); k += world_size()) {
        share.number.push_back(k);
        share.src.push_back(slab.src[k]);
        share.dst.push_back(slab.dst[k]);
        share.weights.push_back(slab.weights[k * info.num_wgts]);
      }
      IndexList S = list_of(ns, sidx), D = list_of(nd, didx);
      Agreement a;
      remap::Mapping m(MPI_COMM_WORLD, src ? &S : nullptr, dst ? &D : nullptr, ns, nd, share, mo, a);
      const remap::MappingInfo* got = c.couplings()[0]->mapping_info();
      ASSERT_NE(got, nullptr);
      EXPECT_EQ(got->dst_side_values, m.info().dst_side_values);
      EXPECT_EQ(got->src_side_values, m.info().src_side_values);
      EXPECT_EQ(got->side, m.info().side);
      EXPECT_GT(got->dst_side_values, 0);
    }
    c.terminate();
    EXPECT_TRUE(all_ranks(wrong == 0)) << wrong << " wrong values, side " << static_cast<int>(side);
  }
}

TEST(Coupler, MappingWithTheOrca2LmdzWeights) {
  Watchdog w("coupler mapping");
  const std::string dir = std::string(ISTHMUS_TEST_DATA) + "/orca2-lmdz";
  check_orca2_lmdz_mapping(dir, "rmp_torc_to_lmdz_BILINEAR.nc", dir + "/rmp_torc_to_lmdz_BILINEAR.nc");
  check_orca2_lmdz_mapping(dir, "rmp_torc_to_lmdz_BILINEAR.nc", dir + "/rmp_torc_to_lmdz_BILINEAR.nc",
                           true, true);
}

// A file whose links are not listed by destination (the same links, shuffled): the destination
// side cannot read its own links from it, and reads slabs and routes them instead; the received
// values are still those of a serial sum in the file's order, to the bit.
TEST(Coupler, MappingWithTheLinksInAnyOrder) {
  Watchdog w("coupler shuffled links");
  const TempRunDir run("shuffled_links");
  const std::string shuffled = "rmp_torc_to_lmdz_BILINEAR_shuffled.nc";
  if (world_rank() == 0) {
    remap::WeightsInfo info;
    remap::LinkSlab slab = remap::read_scrip_weights(
        MPI_COMM_SELF, std::string(ISTHMUS_TEST_DATA) + "/orca2-lmdz/rmp_torc_to_lmdz_BILINEAR.nc", {}, &info);
    std::vector<int64_t> order(static_cast<size_t>(slab.size()));
    std::iota(order.begin(), order.end(), 0);
    std::mt19937 rng(11);
    std::shuffle(order.begin(), order.end(), rng);
    std::vector<int64_t> s, d;
    std::vector<double> wt;
    for (int64_t k : order) {
      s.push_back(slab.src[k]);
      d.push_back(slab.dst[k]);
      wt.push_back(slab.weights[k]);
    }
    info.num_links = slab.size();
    remap::ScripWeightsWriter out(run.path() + "/" + shuffled, info);
    out.append(s.data(), d.data(), wt.data(), slab.size());
    out.close();
  }
  MPI_Barrier(MPI_COMM_WORLD);
  check_orca2_lmdz_mapping(run.path(), shuffled, run.path() + "/" + shuffled, false, true);
}

namespace {
// The shared first-order ORCA2 -> LMDZ file rewritten with two more columns of weights, by
// rank 0 into `dir`; returns its name.
std::string three_weights_file(const std::string& dir) {
  const std::string one = std::string(ISTHMUS_TEST_DATA) + "/orca2-lmdz/rmp_torc_to_lmdz_CONSERV_FRACNNEI.nc";
  const std::string three = "rmp_torc_to_lmdz_CONSERV_3W.nc";
  if (world_rank() == 0) {
    remap::WeightsInfo info;
    remap::LinkSlab slab = remap::read_scrip_weights(MPI_COMM_SELF, one, {}, &info);
    info.num_wgts = 3;
    std::vector<double> w3;
    for (int64_t k = 0; k < slab.size(); ++k)
      for (double x : {slab.weights[k], 7.5 + k % 11, -3.25 * (k % 5)}) w3.push_back(x);
    remap::ScripWeightsWriter out(dir + "/" + three, info);
    out.append(slab.src.data(), slab.dst.data(), w3.data(), slab.size());
    out.close();
  }
  MPI_Barrier(MPI_COMM_WORLD);
  return three;
}

// A 3-weight slab applied serially to term(g, j) (j = 0: the field, 1 and 2: its higher-order
// terms): each link's w_j * term added into ref at its destination point, and the terms'
// magnitudes into mag (the scale of the rounding).
void serial_terms(const remap::LinkSlab& slab, const std::function<double(int64_t, int)>& term,
                  double* ref, double* mag) {
  for (int64_t k = 0; k < slab.size(); ++k)
    for (int j = 0; j < 3; ++j) {
      const double t = slab.weights[3 * k + j] * term(slab.src[k], j);
      ref[slab.dst[k]] += t;
      mag[slab.dst[k]] += std::fabs(t);
    }
}
}  // namespace

// SCRIP's conservative weights files, as OASIS3-MCT's own, carry 3 weights per link (the 2nd and
// 3rd for the gradients of second-order remapping). A put without higher-order terms gets the
// first weight alone, as OASIS3-MCT applies without fld2..fld5, on every side; an
// unchanged OASIS3-MCT example (liboasis3-doc's test_interpolation) stopped at its first put on
// such a file before. Here: the shared first-order file rewritten with two more columns of
// weights, which must change nothing (the same bits as the reference's first column).
TEST(Coupler, MappingAppliesTheFirstOfThreeWeights) {
  Watchdog w("coupler three weights");
  const TempRunDir run("three_weights");
  const std::string one = std::string(ISTHMUS_TEST_DATA) + "/orca2-lmdz/rmp_torc_to_lmdz_CONSERV_FRACNNEI.nc";
  check_orca2_lmdz_mapping(run.path(), three_weights_file(run.path()), one);
}

// OASIS3-MCT's higher-order terms (oasis_put's fld2..fld5, e.g. the gradients of second-order
// conservative remapping) where the source side multiplies (MAPPING ... sum): each link adds
// w1 x + w2 fld2 + w3 fld3. A term is on from its first put: an INSTANT put without it counts
// as zeros; AVERAGE averages what was given over all the field's puts. Where the destination
// side multiplies, or beyond the file's weights, or with T_MAX, a put with terms fails naming
// the entry and what to write instead.
TEST(Coupler, HigherOrderTermsOnTheSourceSide) {
  Watchdog w("coupler higher-order terms");
  Layout L;
  const TempRunDir run("higher_order");
  const std::string file = three_weights_file(run.path());
  const int64_t ns = 182 * 149, nd = 96 * 72;
  remap::WeightsInfo info;
  const remap::LinkSlab slab = remap::read_scrip_weights(MPI_COMM_SELF, run.path() + "/" + file, {}, &info);
  ASSERT_EQ(info.num_wgts, 3);
  auto x_at = [](int64_t g, int date) { return 273.0 + 20 * std::sin(g * 0.001) + date; };
  auto g1_at = [](int64_t g, int date) { return std::cos(g * 0.002) + 0.5 * date; };
  auto g2_at = [](int64_t g, int date) { return std::sin(g * 0.003) - 0.25 * date; };
  // the serial reference: per destination point the sum of its links' terms (and of their
  // magnitudes, the scale of the rounding)
  auto reference = [&](const std::function<double(int64_t, int)>& term, std::vector<double>* sum,
                       std::vector<double>* mag) {
    sum->assign(nd, 0.0);
    mag->assign(nd, 0.0);
    serial_terms(slab, term, sum->data(), mag->data());
  };
  Config cfg;
  cfg.file = "namcouple";
  cfg.runtime = 4;
  Entry inst = orca2_to_lmdz(file);
  inst.period = 2;
  inst.mapping->side = MapSide::Src;
  inst.mapping->side_given = true;
  inst.mapping->strategy = "sum";
  Entry avg = inst;
  avg.src_names = {"SO2"};
  avg.dst_names = {"SA2"};
  avg.line = 20;
  avg.loctrans = TimeOp::Average;
  cfg.entries = {inst, avg};
  CouplerOptions opt;
  opt.run_dir = run.path();
  TwoFields two(cfg, opt);
  Coupler& c = *two.c;
  const bool src = two.src, dst = two.dst;
  const std::vector<int64_t>&sidx = two.sidx, &didx = two.didx;
  const int so = two.so, sa = two.sa, so2 = two.so2, sa2 = two.sa2;
  std::vector<double> ref, mag;
  int64_t wrong = 0;
  auto check = [&](const std::vector<double>& y, const char* what) {
    int64_t bad = 0;
    for (size_t i = 0; i < didx.size(); ++i)
      if (!(std::fabs(y[i] - ref[didx[i]]) <= 1e-14 * mag[didx[i]])) ++bad;
    EXPECT_EQ(bad, 0) << what;
    wrong += bad;
  };
  for (int date = 0; date < 4; ++date) {
    if (src) {
      std::vector<double> x(sidx.size()), g1(sidx.size()), g2(sidx.size());
      for (size_t i = 0; i < sidx.size(); ++i) {
        x[i] = x_at(sidx[i], date);
        g1[i] = g1_at(sidx[i], date);
        g2[i] = g2_at(sidx[i], date);
      }
      // INSTANT: both terms at date 0, only fld2 at date 2 (fld3 is on: zeros then)
      const void* terms[4] = {g1.data(), date == 2 ? nullptr : g2.data(), nullptr, nullptr};
      EXPECT_EQ(c.put(so, date, x.data(), false, terms), date % 2 == 0 ? kSent : kOk);
      // AVERAGE: fld2 at date 1 only, fld3 never: the coupling of date 2 sends the mean of the
      // puts of dates 1 and 2, and half of date 1's fld2
      const void* avg_terms[4] = {date == 1 ? g1.data() : nullptr, nullptr, nullptr, nullptr};
      EXPECT_EQ(c.put(so2, date, x.data(), false, avg_terms), date % 2 == 0 ? kSent : kLocTrans);
    }
    if (dst && date % 2 == 0) {
      std::vector<double> y(didx.size()), y2(didx.size());
      EXPECT_EQ(c.get(sa, date, y.data()), kRecvd);
      EXPECT_EQ(c.get(sa2, date, y2.data()), kRecvd);
      reference([&](int64_t g, int j) {
        return j == 0 ? x_at(g, date) : j == 1 ? g1_at(g, date) : date == 2 ? 0.0 : g2_at(g, date);
      }, &ref, &mag);
      check(y, "INSTANT");
      reference([&](int64_t g, int j) {
        if (date == 0) return j == 0 ? x_at(g, 0) : 0.0;
        return j == 0 ? (x_at(g, 1) + x_at(g, 2)) * 0.5 : j == 1 ? g1_at(g, 1) * 0.5 : 0.0;
      }, &ref, &mag);
      check(y2, "AVERAGE");
    }
  }
  c.terminate();
  EXPECT_TRUE(all_ranks(wrong == 0));

  // the errors, at the first put with terms (before anything is sent)
  struct Case {
    MapSide side;
    std::optional<TimeOp> op;
    int term;  // 2..5
    std::string says;
  };
  const Case cases[] = {
      {MapSide::Dst, std::nullopt, 2,
       "put of SO at date 0: fld2 (a higher-order term) is multiplied where the source side "
       "multiplies, but entry SO (line 10) does not multiply there (MAPPING bfb): "
       "write `sum` in its MAPPING line (OASIS3-MCT applies higher-order terms on the put side "
       "only, too)"},
      // opt may choose the source side, but its mapping applies the first weights alone
      {MapSide::Auto, std::nullopt, 2,
       "put of SO at date 0: fld2 (a higher-order term) is multiplied where the source side "
       "multiplies, but entry SO (line 10) does not multiply there (MAPPING opt): "
       "write `sum` in its MAPPING line (OASIS3-MCT applies higher-order terms on the put side "
       "only, too)"},
      {MapSide::Src, std::nullopt, 5,
       "put of SO at date 0: fld5 (a higher-order term) needs 5 weights per link, but the weights "
       "file " + file + " of entry SO (line 10) has 3"},
      {MapSide::Src, TimeOp::TMax, 2,
       "put of SO at date 0: fld2 (a higher-order term): LOCTRANS T_MAX takes no higher-order "
       "terms (nor does OASIS3-MCT)"}};
  const std::string comp = L.two() ? L.component() : "both";
  for (const Case& k : cases) {
    Config bad;
    bad.file = "namcouple";
    bad.runtime = 2;
    Entry e = orca2_to_lmdz(file);
    e.mapping->side = k.side;
    e.mapping->side_given = true;
    e.mapping->strategy = k.side == MapSide::Dst ? "bfb" : k.side == MapSide::Src ? "sum" : "opt";
    e.loctrans = k.op;
    bad.entries = {e};
    Coupler b(MPI_COMM_WORLD, comp, bad, opt);
    int v = -1, u = -1;
    if (src) v = b.def_var("SO", b.def_partition(ptr(list_of(ns, sidx))), VarDirection::Out, DataType::Double);
    if (dst) u = b.def_var("SA", b.def_partition(ptr(list_of(nd, didx))), VarDirection::In, DataType::Double);
    b.enddef();
    if (src) {
      std::vector<double> x(sidx.size(), 1.0);
      const void* terms[4] = {};
      terms[k.term - 2] = x.data();
      const Outcome o = outcome_of([&] { b.put(v, 0, x.data(), false, terms); });
      EXPECT_EQ(o.code, ISTHMUS_ERR_ARG) << o.msg;
      EXPECT_EQ(o.msg, k.says);
      b.put(v, 0, x.data());  // without terms it goes
    }
    if (dst) {
      std::vector<double> y(didx.size());
      b.get(u, 0, y.data());
    }
    b.terminate();
  }
  EXPECT_TRUE(all_ranks(!::testing::Test::HasFailure()));
}

// Higher-order terms of a bundle (2 levels, level-major as the field): each level's terms
// multiply its own source values' weights, in one put; a term given for the bundle covers both
// levels.
TEST(Coupler, HigherOrderTermsOfABundle) {
  Watchdog w("coupler higher-order terms of a bundle");
  Layout L;
  const TempRunDir run("higher_order_bundle");
  const std::string file = three_weights_file(run.path());
  const int64_t ns = 182 * 149, nd = 96 * 72;
  const int levels = 2;
  remap::WeightsInfo info;
  const remap::LinkSlab slab = remap::read_scrip_weights(MPI_COMM_SELF, run.path() + "/" + file, {}, &info);
  // term j of level l at source point g
  auto term = [](int64_t g, int j, int l) { return std::cos(0.001 * g * (j + 1) + l) * (j ? 1.0 : 100.0) + l; };
  std::vector<double> ref(static_cast<size_t>(nd) * levels, 0.0), mag(ref.size(), 0.0);
  for (int l = 0; l < levels; ++l)
    serial_terms(slab, [&](int64_t g, int j) { return term(g, j, l); }, ref.data() + l * nd,
                 mag.data() + l * nd);
  Config cfg;
  cfg.file = "namcouple";
  cfg.runtime = 2;
  Entry e = orca2_to_lmdz(file);
  e.mapping->side = MapSide::Src;
  e.mapping->side_given = true;
  e.mapping->strategy = "sum";
  cfg.entries = {e};
  CouplerOptions opt;
  opt.run_dir = run.path();
  Coupler c(MPI_COMM_WORLD, L.two() ? L.component() : "both", cfg, opt);
  const int lr = L.two() ? L.local_rank() : 0, ls = L.two() ? L.local_size() : 1;
  const bool src = !L.two() || L.ocean(), dst = !L.two() || !L.ocean();
  const std::vector<int64_t> sidx = random_part(ns, ls, lr, 17), didx = random_part(nd, ls, lr, 18);
  int so = -1, sa = -1;
  if (src) so = c.def_var("SO", c.def_partition(ptr(list_of(ns, sidx))), VarDirection::Out, DataType::Double, levels);
  if (dst) sa = c.def_var("SA", c.def_partition(ptr(list_of(nd, didx))), VarDirection::In, DataType::Double, levels);
  c.enddef();
  int64_t bad = 0;
  if (src) {
    const size_t n = sidx.size();
    std::vector<double> x(n * levels), g1(n * levels), g2(n * levels);
    for (int l = 0; l < levels; ++l)
      for (size_t i = 0; i < n; ++i) {
        x[l * n + i] = term(sidx[i], 0, l);
        g1[l * n + i] = term(sidx[i], 1, l);
        g2[l * n + i] = term(sidx[i], 2, l);
      }
    const void* terms[4] = {g1.data(), g2.data(), nullptr, nullptr};
    EXPECT_EQ(c.put(so, 0, x.data(), false, terms), kSent);
  }
  if (dst) {
    const size_t n = didx.size();
    std::vector<double> y(n * levels);
    EXPECT_EQ(c.get(sa, 0, y.data()), kRecvd);
    for (int l = 0; l < levels; ++l)
      for (size_t i = 0; i < n; ++i) {
        const size_t r = static_cast<size_t>(l * nd + didx[i]);
        if (!(std::fabs(y[l * n + i] - ref[r]) <= 1e-14 * mag[r])) ++bad;
      }
  }
  c.terminate();
  EXPECT_TRUE(all_ranks(bad == 0)) << bad << " values differ from the serial sums";
}

// A weights file that cannot be used fails enddef on every rank of both components with the
// file's error (the component that multiplies reads it: the other must not be left waiting),
// for each side; nothing hangs.
TEST(Coupler, WeightsFileErrorsFailBothComponents) {
  Watchdog w("coupler weights file errors");
  Layout L;
  const std::string dir = std::string(ISTHMUS_TEST_DATA) + "/orca2-lmdz";
  struct Case {
    std::string file, says;
  };
  const Case cases[] = {
      {"rmp_none_such.nc", "cannot open the weights file \"" + dir + "/rmp_none_such.nc\""},
      // the other direction's file: its grids are the wrong way round
      {"rmp_lmdz_to_torc_BILINEAR.nc",
       "weights file \"" + dir + "/rmp_lmdz_to_torc_BILINEAR.nc\": src_grid_size is 6912, but the "
       "source grid has 27118 points"}};
  for (const Case& k : cases)
    for (MapSide side : {MapSide::Dst, MapSide::Src, MapSide::Auto}) {
      Config cfg;
      cfg.file = "namcouple";
      cfg.runtime = 2;
      Entry e = orca2_to_lmdz(k.file);
      e.mapping->side = side;
      e.mapping->side_given = true;
      cfg.entries.push_back(e);
      CouplerOptions opt;
      opt.run_dir = dir;
      const std::string comp = L.two() ? L.component() : "both";
      Coupler c(MPI_COMM_WORLD, comp, cfg, opt);
      const int lr = L.two() ? L.local_rank() : 0, ls = L.two() ? L.local_size() : 1;
      const bool src = !L.two() || L.ocean(), dst = !L.two() || !L.ocean();
      std::vector<int64_t> sidx = random_part(182 * 149, ls, lr, 7), didx = random_part(96 * 72, ls, lr, 8);
      if (src) c.def_var("SO", c.def_partition(ptr(list_of(182 * 149, sidx))), VarDirection::Out, DataType::Double);
      if (dst) c.def_var("SA", c.def_partition(ptr(list_of(96 * 72, didx))), VarDirection::In, DataType::Double);
      const Outcome o = outcome_of([&] { c.enddef(); });
      EXPECT_EQ(o.code, ISTHMUS_ERR_FILE) << k.file << ", side " << static_cast<int>(side) << ": " << o.msg;
      EXPECT_NE(o.msg.find(k.says), std::string::npos) << o.msg;
    }
  EXPECT_TRUE(all_ranks(!::testing::Test::HasFailure()));
}

// The outcome of enddef for a configuration of one entry from the ocean's field SST: each
// component's ranks define a partition of n points, the ocean SST on it, and `atmos` the
// atmosphere's field.
Outcome enddef_of_sst_entry(const Layout& L, const Entry& e, int64_t n,
                            const std::function<void(Coupler&, int)>& atmos) {
  Config cfg;
  cfg.file = "namcouple";
  cfg.entries.push_back(e);
  Coupler c(MPI_COMM_WORLD, L.component(), cfg);
  std::vector<int64_t> idx = random_part(n, L.local_size(), L.local_rank(), 9);
  const int part = c.def_partition(ptr(list_of(n, idx)));
  if (L.ocean()) {
    c.def_var("SST", part, VarDirection::Out, DataType::Double);
  } else {
    atmos(c, part);
  }
  return outcome_of([&] { c.enddef(); });
}

// Definition errors are raised at enddef on every rank of every component alike, naming the
// configuration line, the field and the components.
TEST(Coupler, DefinitionErrorsNameFieldLineAndComponents) {
  Watchdog w("coupler definition errors");
  Layout L;
  if (!L.two()) GTEST_SKIP() << "needs two components";
  const int64_t nx = 10, ny = 10, n = nx * ny;
  struct Case {
    Entry e;
    int bundle_atmos;
    std::string expected;
  };
  std::vector<Case> cases;
  cases.push_back({entry("SST", "MISSING", 2, nx, ny), 1,
                   "namcouple:10: field MISSING (destination of entry SST) is declared in by no "
                   "component (components: ocean, atmos)"});
  cases.push_back({entry("SST", "SSTA", 2, nx, ny), 2,
                   "namcouple:10: field SST of ocean has bundle size 1 but SSTA of atmos has 2"});
  Entry wrong_size = entry("SST", "SSTA", 2, 11, ny);
  cases.push_back({wrong_size, 1,
                   "namcouple:10: entry SST gives the source grid gsrc as 11 x 10 = 110 points, but "
                   "ocean defines SST on a partition of 100 points"});
  for (const Case& k : cases) {
    const Outcome o = enddef_of_sst_entry(L, k.e, n, [&](Coupler& c, int part) {
      c.def_var("SSTA", part, VarDirection::In, DataType::Double, k.bundle_atmos);
    });
    EXPECT_EQ(o.code, ISTHMUS_ERR_CONFIG);
    EXPECT_EQ(o.msg, k.expected);
  }
}

// Definitions are local: a bad one on the atmosphere's last rank fails there; enddef then
// finds the atmosphere's ranks' definitions differ and fails on every rank of both components,
// the ocean's naming the atmosphere; so it does for a field of another type on that rank. No
// rank is left waiting for the declarations.
TEST(Coupler, AFailedOrDifferingDefinitionFailsEnddefInEveryComponent) {
  Watchdog w("coupler failed definitions");
  Layout L;
  if (!L.two()) GTEST_SKIP() << "needs two components";
  const int64_t nx = 10, ny = 10, n = nx * ny;
  const int natmos = L.size - L.nocean;
  const bool odd = !L.ocean() && L.local_rank() == natmos - 1;
  for (int k = 0; k < 2; ++k) {
    const bool bad_bundle = k == 0, other_type = k == 1;
    const Outcome o = enddef_of_sst_entry(L, entry("SST", "SSTA", 2, nx, ny), n, [&](Coupler& c, int part) {
      const Outcome d = outcome_of([&] {
        c.def_var("SSTA", part, VarDirection::In, odd && other_type ? DataType::Float : DataType::Double,
                  odd && bad_bundle ? 0 : 1);
      });
      EXPECT_EQ(d.code, odd && bad_bundle ? ISTHMUS_ERR_ARG : ISTHMUS_OK) << d.msg;
      if (odd && bad_bundle) {
        EXPECT_EQ(d.msg, "def_var SSTA: bundle size 0 < 1");
      }
    });
    if (natmos == 1) {  // one atmosphere rank cannot differ from itself
      if (bad_bundle) {
        EXPECT_EQ(o.code, ISTHMUS_ERR_CONFIG) << o.msg;
        EXPECT_EQ(o.msg, "namcouple:10: field SSTA (destination of entry SST) is declared in by no "
                         "component (components: ocean, atmos)");
      } else {
        EXPECT_EQ(o.code, ISTHMUS_OK) << o.msg;
      }
      continue;
    }
    EXPECT_EQ(o.code, ISTHMUS_ERR_ARG) << o.msg;
    std::string says =
        "enddef: the coupling ranks of component atmos made different definitions: definition 2 "
        "is \"def_var \"SSTA\": partition 0, in, double, bundle 1\" on rank 0 but " +
        std::string(bad_bundle ? "\"def_var \"SSTA\": failed: def_var SSTA: bundle size 0 < 1\""
                               : "\"def_var \"SSTA\": partition 0, in, float, bundle 1\"") +
        " on rank " + std::to_string(natmos - 1) +
        " (every coupling rank makes the same definitions in the same order)";
    if (L.ocean()) says = "enddef of component atmos failed: " + says;
    EXPECT_EQ(o.msg, says);
  }
  EXPECT_TRUE(all_ranks(!::testing::Test::HasFailure()));
}

namespace {

// OASIS's areas.nc and masks.nc for the two shared grids, made by rank 0 from the grid files of
// tests/data (srf; imask 1 = active, the inverse of OASIS's msk).
void write_oasis_grid_files(const std::string& dir) {
  if (world_rank() != 0) return;
  auto ok = [](int rc) { ASSERT_EQ(rc, NC_NOERR) << nc_strerror(rc); };
  int areas, masks;
  ok(nc_create((dir + "/areas.nc").c_str(), NC_CLOBBER, &areas));
  ok(nc_create((dir + "/masks.nc").c_str(), NC_CLOBBER, &masks));
  struct Grid { const char* name; int nx, ny; std::vector<double> srf; std::vector<int> msk; int va, vm; };
  std::vector<Grid> grids = {{"torc", 182, 149, {}, {}, 0, 0}, {"lmdz", 96, 72, {}, {}, 0, 0}};
  for (Grid& g : grids) {
    int id, v;
    ok(nc_open((std::string(ISTHMUS_TEST_DATA) + "/orca2-lmdz/grid_" + g.name + ".nc").c_str(), NC_NOWRITE, &id));
    g.srf.resize(g.nx * g.ny);
    g.msk.resize(g.nx * g.ny);
    ok(nc_inq_varid(id, "srf", &v));
    ok(nc_get_var_double(id, v, g.srf.data()));
    ok(nc_inq_varid(id, "imask", &v));
    ok(nc_get_var_int(id, v, g.msk.data()));
    ok(nc_close(id));
    for (int& m : g.msk) m = !m;
    for (int f : {areas, masks}) {
      int dx, dy;
      ok(nc_def_dim(f, (std::string("x_") + g.name).c_str(), g.nx, &dx));
      ok(nc_def_dim(f, (std::string("y_") + g.name).c_str(), g.ny, &dy));
      int dims[2] = {dy, dx};
      if (f == areas) ok(nc_def_var(f, (std::string(g.name) + ".srf").c_str(), NC_DOUBLE, 2, dims, &g.va));
      else ok(nc_def_var(f, (std::string(g.name) + ".msk").c_str(), NC_INT, 2, dims, &g.vm));
    }
  }
  ok(nc_enddef(areas));
  ok(nc_enddef(masks));
  for (Grid& g : grids) {
    ok(nc_put_var_double(areas, g.va, g.srf.data()));
    ok(nc_put_var_int(masks, g.vm, g.msk.data()));
  }
  ok(nc_close(areas));
  ok(nc_close(masks));
}

// The areas and OASIS masks of a grid, read back for the test's own integrals.
void grid_of(const std::string& dir, const std::string& grid, std::vector<double>& area, std::vector<int>& msk) {
  int id, v, n;
  nc_open((dir + "/areas.nc").c_str(), NC_NOWRITE, &id);
  nc_inq_varid(id, (grid + ".srf").c_str(), &v);
  n = grid == "torc" ? 182 * 149 : 96 * 72;
  area.resize(n);
  nc_get_var_double(id, v, area.data());
  nc_close(id);
  nc_open((dir + "/masks.nc").c_str(), NC_NOWRITE, &id);
  nc_inq_varid(id, (grid + ".msk").c_str(), &v);
  msk.resize(n);
  nc_get_var_int(id, v, msk.data());
  nc_close(id);
}

}  // namespace

// CONSERV through the coupler with the real ORCA2 -> LMDZ conservative weights and OASIS's
// areas.nc/masks.nc in the run directory: GLOBAL restores the source integral over the active
// points to the reproducible sum's precision, GLBPOS too while keeping signs; the source and
// destination components sum their own integrals (the put never joins the get's sums).
TEST(Coupler, ConservRestoresTheSourceIntegral) {
  Watchdog w("coupler CONSERV");
  Layout L;
  const TempRunDir run("conserv");
  const std::string& dir = run.path();
  write_oasis_grid_files(dir);
  MPI_Barrier(MPI_COMM_WORLD);
  std::vector<double> as, ad;
  std::vector<int> ms, md;
  grid_of(dir, "torc", as, ms);
  grid_of(dir, "lmdz", ad, md);
  const int64_t ns = 182 * 149, nd = 96 * 72;
  auto sst = [](int64_t g) { return 1.0 + 0.5 * std::sin(g * 0.01); };  // positive
  for (ConservType type : {ConservType::Global, ConservType::Glbpos}) {
    Config cfg;
    cfg.file = "namcouple";
    cfg.runtime = 2;
    Entry e = orca2_to_lmdz(std::string(ISTHMUS_TEST_DATA) + "/orca2-lmdz/rmp_torc_to_lmdz_CONSERV_FRACNNEI.nc");
    e.conserv = ConservSpec{};
    e.conserv->type = type;
    cfg.entries.push_back(e);
    CouplerOptions opt;
    opt.run_dir = dir;
    Coupler c(MPI_COMM_WORLD, L.two() ? L.component() : "both", cfg, opt);
    const int lr = L.two() ? L.local_rank() : 0, ls = L.two() ? L.local_size() : 1;
    const bool src = !L.two() || L.ocean(), dst = !L.two() || !L.ocean();
    std::vector<int64_t> sidx = random_part(ns, ls, lr, 17), didx = random_part(nd, ls, lr, 18);
    int so = -1, sa = -1;
    if (src) so = c.def_var("SO", c.def_partition(ptr(list_of(ns, sidx))), VarDirection::Out, DataType::Double);
    if (dst) sa = c.def_var("SA", c.def_partition(ptr(list_of(nd, didx))), VarDirection::In, DataType::Double);
    c.enddef();
    std::vector<double> x(sidx.size()), y(didx.size());
    for (size_t i = 0; i < sidx.size(); ++i) x[i] = sst(sidx[i]);
    if (src) {
      EXPECT_EQ(c.put(so, 0, x.data()), kSent);
    }
    long double s_dst = 0, s_src = 0;
    int64_t negative = 0;
    if (dst) {
      EXPECT_EQ(c.get(sa, 0, y.data()), kRecvd);
      for (size_t i = 0; i < didx.size(); ++i)
        if (!md[didx[i]]) {
          s_dst += static_cast<long double>(y[i]) * ad[didx[i]];
          negative += y[i] < 0;
        }
    }
    for (int64_t g = 0; g < ns; ++g)
      if (!ms[g]) s_src += static_cast<long double>(sst(g)) * as[g];
    double local = static_cast<double>(s_dst), total = 0;
    MPI_Allreduce(&local, &total, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    c.terminate();
    EXPECT_NEAR(total, static_cast<double>(s_src), 1e-12 * static_cast<double>(s_src))
        << (type == ConservType::Global ? "GLOBAL" : "GLBPOS");
    EXPECT_TRUE(all_ranks(negative == 0));
  }
}

// A get whose put never comes (the ocean stops putting after date 2, the atmosphere still
// gets at date 4): with a timeout the get fails on every atmosphere rank with
// ISTHMUS_ERR_TIMEOUT, naming the entry, the date, the component it waits for and its ranks,
// instead of hanging.
TEST(Coupler, AGetWhosePutNeverComesIsReportedNotHung) {
  Watchdog w("coupler deadlock diagnosis");
  Layout L;
  if (!L.two()) GTEST_SKIP() << "needs two components";
  const int64_t n = 40;
  Config cfg;
  cfg.file = "namcouple";
  cfg.runtime = 8;
  cfg.entries.push_back(entry("SST", "SSTA", 2, n, 1));
  CouplerOptions opt;
  // long enough that the exchanges of dates 0 and 2 never time out on a loaded machine (with
  // 0.3 s a get of date 0 timed out there now and then, and its rank left the others in the
  // barrier below until the watchdog)
  opt.timeout_s = 1.5;
  Coupler c(MPI_COMM_WORLD, L.component(), cfg, opt);
  std::vector<int64_t> idx = random_part(n, L.local_size(), L.local_rank(), 19);
  const int part = c.def_partition(ptr(list_of(n, idx)));
  const int var = L.ocean() ? c.def_var("SST", part, VarDirection::Out, DataType::Double)
                            : c.def_var("SSTA", part, VarDirection::In, DataType::Double);
  c.enddef();
  std::vector<double> x(idx.size(), 1.0);
  Outcome o;
  if (L.ocean()) {
    for (int date = 0; date <= 2; date += 2) c.put(var, date, x.data());
  } else {
    for (int date = 0; date <= 2; date += 2) c.get(var, date, x.data());
    o = outcome_of([&] { c.get(var, 4, x.data()); });
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (L.ocean()) return;
  EXPECT_EQ(o.code, ISTHMUS_ERR_TIMEOUT);
  const std::string head =
      "get of entry SST (line 10) at date 4 in component atmos: its data never came from ocean "
      "(no put at that date? a period or LAG that never reaches it?); wait of a forward exchange: "
      "timed out after ";
  EXPECT_EQ(o.msg.substr(0, head.size()), head) << o.msg;
  // every ocean rank that holds points this atmosphere rank needs is named, none of the others
  for (int r = 0; r < L.nocean; ++r) {
    const std::string who = "rank " + std::to_string(r) + " of component ocean (world rank " +
                            std::to_string(r) + ")";
    const bool named = o.msg.find(who) != std::string::npos;
    std::vector<int64_t> theirs = random_part(n, L.nocean, r, 19);
    bool needed = false;
    for (int64_t g : theirs) needed |= std::find(idx.begin(), idx.end(), g) != idx.end();
    EXPECT_EQ(named, needed) << who << " in: " << o.msg;
  }
}

// OASIS's deadlock traps, raised before anything waits: a model whose time step misses a
// coupling date, and a get that comes before a due coupling of a lower SEQ.
TEST(Coupler, SkippedDatesAndSequenceOrderAreReported) {
  Watchdog w("coupler SEQ");
  Layout L;
  if (!L.two()) GTEST_SKIP() << "needs two components";
  const int64_t n = 30;
  std::vector<int64_t> idx = random_part(n, L.local_size(), L.local_rank(), 23);
  {
    // period 2, but both models step by 3: at date 3 the coupling of date 2 was skipped
    Config cfg;
    cfg.file = "namcouple";
    cfg.runtime = 12;
    cfg.entries.push_back(entry("SST", "SSTA", 2, n, 1));
    Coupler c(MPI_COMM_WORLD, L.component(), cfg);
    const int part = c.def_partition(ptr(list_of(n, idx)));
    const int var = L.ocean() ? c.def_var("SST", part, VarDirection::Out, DataType::Double)
                              : c.def_var("SSTA", part, VarDirection::In, DataType::Double);
    c.enddef();
    std::vector<double> x(idx.size(), 1.0);
    auto step = [&](int date) { return L.ocean() ? c.put(var, date, x.data()) : c.get(var, date, x.data()); };
    EXPECT_EQ(step(0), L.ocean() ? kSent : kRecvd);
    Outcome o = outcome_of([&] { step(3); });
    EXPECT_EQ(o.code, ISTHMUS_ERR_ARG);
    EXPECT_EQ(o.msg, "component " + L.component() + " at date 3: the coupling of SST (line 10, period 2) "
                     "last exchanged at 0 and skipped date 2: the model's time step does not reach "
                     "every coupling date (a partner would wait for it for ever)");
  }
  {
    // SEQ=1 before SEQ=2 at every date; the atmosphere asks for the second first
    Config cfg;
    cfg.file = "namcouple";
    cfg.runtime = 12;
    Entry a = entry("SA", "RA", 2, n, 1), b = entry("SB", "RB", 2, n, 1);
    a.seq = 1;
    b.seq = 2;
    b.line = 15;
    cfg.entries = {a, b};
    Coupler c(MPI_COMM_WORLD, L.component(), cfg);
    const int part = c.def_partition(ptr(list_of(n, idx)));
    const VarDirection d = L.ocean() ? VarDirection::Out : VarDirection::In;
    const int va = c.def_var(L.ocean() ? "SA" : "RA", part, d, DataType::Double);
    const int vb = c.def_var(L.ocean() ? "SB" : "RB", part, d, DataType::Double);
    c.enddef();
    std::vector<double> x(idx.size(), 1.0);
    for (int date = 0; date <= 2; date += 2) {
      if (L.ocean()) {
        c.put(va, date, x.data());
        c.put(vb, date, x.data());
        continue;
      }
      if (date == 2) {
        Outcome o = outcome_of([&] { c.get(vb, date, x.data()); });
        EXPECT_EQ(o.code, ISTHMUS_ERR_ARG);
        EXPECT_EQ(o.msg, "component atmos at date 2: get of RB (line 15, SEQ=2) before the coupling "
                         "of SA (line 10, SEQ=1) due at date 2: the configuration's sequence says "
                         "that one comes first (a partner waiting in that order would wait for ever)");
      }
      // in the configured order: nothing was consumed by the refused get
      EXPECT_EQ(c.get(va, date, x.data()), kRecvd);
      EXPECT_EQ(c.get(vb, date, x.data()), kRecvd);
    }
    c.terminate();
  }
}

// OASIS's couplcomm: only some ranks of a component couple (here the ocean's first rank does
// not, so the component's first rank speaks for ranks it is not one of); the others call
// enddef only. Values arrive at the right global index from the coupling ranks' partitions.
TEST(Coupler, OnlyTheCouplingRanksOfAComponentCouple) {
  Watchdog w("coupler couplcomm");
  Layout L;
  if (L.nocean < 2) GTEST_SKIP() << "needs an ocean of two ranks";
  const int64_t n = 71;
  Config cfg;
  cfg.file = "namcouple";
  cfg.runtime = 4;
  cfg.entries.push_back(entry("SST", "SSTA", 2, n, 1));
  Coupler c(MPI_COMM_WORLD, L.component(), cfg);
  const bool couples = !L.ocean() || L.local_rank() > 0;
  MPI_Comm sub = MPI_COMM_NULL;
  MPI_Comm_split(c.local_comm(), couples ? 0 : MPI_UNDEFINED, L.local_rank(), &sub);
  c.set_coupling_comm(sub);
  if (sub != MPI_COMM_NULL) MPI_Comm_free(&sub);
  EXPECT_EQ(c.local_comm() != MPI_COMM_NULL, couples);
  std::vector<int64_t> idx;
  int var = -1;
  if (couples) {
    const int parts = L.ocean() ? L.nocean - 1 : L.local_size(), me = L.ocean() ? L.local_rank() - 1 : L.local_rank();
    idx = random_part(n, parts, me, L.ocean() ? 29 : 30);
    const int part = c.def_partition(ptr(list_of(n, idx)));
    var = L.ocean() ? c.def_var("SST", part, VarDirection::Out, DataType::Double)
                    : c.def_var("SSTA", part, VarDirection::In, DataType::Double);
  } else {
    const Outcome o = outcome_of([&] { c.def_partition(ptr(list_of(n, idx))); });
    EXPECT_EQ(o.msg, "def_partition: this rank of ocean is not in its coupling communicator");
  }
  c.enddef();
  int64_t wrong = 0;
  for (int date = 0; date < 4 && couples; date += 2) {
    std::vector<double> x(idx.size());
    if (L.ocean()) {
      for (size_t i = 0; i < idx.size(); ++i) x[i] = value(idx[i], date);
      EXPECT_EQ(c.put(var, date, x.data()), kSent);
    } else {
      EXPECT_EQ(c.get(var, date, x.data()), kRecvd);
      for (size_t i = 0; i < idx.size(); ++i) wrong += x[i] != value(idx[i], date);
    }
  }
  c.terminate();
  EXPECT_TRUE(all_ranks(wrong == 0));
}

// fracwgt's rules, each failing with a message that says what to do: on or off from the
// entry's first exchange on (a put that differs fails, at a later date, on either side of the
// change); INSTANT only (OASIS3-MCT maps every put of an AVERAGE period, isthmus once), not
// with CONSERV; ignored without a mapping, as OASIS3-MCT does.
TEST(Coupler, FracwgtRules) {
  Watchdog w("coupler fracwgt rules");
  Layout L;
  const TempRunDir run("fracwgt_rules");
  write_oasis_grid_files(run.path());  // CONSERV's areas and masks
  const std::string weights = std::string(ISTHMUS_TEST_DATA) + "/orca2-lmdz/rmp_torc_to_lmdz_CONSERV_FRACNNEI.nc";
  const int64_t ns = 182 * 149, nd = 96 * 72;
  struct Case {
    std::optional<TimeOp> op;
    bool conserv;
    int first_with, later_with;  // 1: date 0's put gives fracwgt; later: date 2's
    std::string says;            // date 0's error if not empty, else date 2's
  };
  const Case cases[] = {
      {std::nullopt, false, 1, 0,
       "put of SO at date 2: no fracwgt, but the entry's first exchange (entry SO (line 10)) went "
       "with one; it is on or off from the first coupling date on, as in OASIS3-MCT"},
      {std::nullopt, false, 0, 1,
       "put of SO at date 2: fracwgt given, but the entry's first exchange (entry SO (line 10)) "
       "went without it; it is on or off from the first coupling date on, as in OASIS3-MCT"},
      {TimeOp::Average, false, 1, 1,
       "put of SO at date 0: fracwgt with LOCTRANS AVERAGE (entry SO (line 10)): OASIS3-MCT maps "
       "every put of the period on the source side and averages the mapped fields; isthmus maps "
       "once, at the coupling date, so it takes fracwgt with INSTANT only"},
      {std::nullopt, true, 1, 1,
       "put of SO at date 0: fracwgt with CONSERV is not supported (entry SO (line 10)): the "
       "corrections would have to weigh both grids' areas by the fractions"}};
  const std::string comp = L.two() ? L.component() : "both";
  const int lr = L.two() ? L.local_rank() : 0, ls = L.two() ? L.local_size() : 1;
  const bool src = !L.two() || L.ocean(), dst = !L.two() || !L.ocean();
  const std::vector<int64_t> sidx = random_part(ns, ls, lr, 5), didx = random_part(nd, ls, lr, 6);
  for (const Case& k : cases) {
    Config bad;
    bad.file = "namcouple";
    bad.runtime = 4;
    Entry e = orca2_to_lmdz(weights);
    e.period = 2;
    e.loctrans = k.op;
    if (k.conserv) e.conserv = ConservSpec{};
    bad.entries = {e};
    CouplerOptions opt;
    opt.run_dir = run.path();
    Coupler b(MPI_COMM_WORLD, comp, bad, opt);
    int v = -1, u = -1;
    if (src) v = b.def_var("SO", b.def_partition(ptr(list_of(ns, sidx))), VarDirection::Out, DataType::Double);
    if (dst) u = b.def_var("SA", b.def_partition(ptr(list_of(nd, didx))), VarDirection::In, DataType::Double);
    b.enddef();
    std::vector<double> x(sidx.size(), 3.0), f(sidx.size(), 0.5), y(didx.size());
    const bool fails_first = k.op || k.conserv;
    for (int date = 0; date < 4; date += 2) {
      // a case that fails at date 0 puts without fracwgt after
      const bool with = fails_first ? date == 0 : (date == 0 ? k.first_with : k.later_with) != 0;
      if (src) {
        const Outcome o = outcome_of([&] { b.put(v, date, x.data(), false, nullptr, with ? f.data() : nullptr); });
        const bool fails = fails_first ? date == 0 : date == 2;
        EXPECT_EQ(o.code, fails ? ISTHMUS_ERR_ARG : ISTHMUS_OK) << o.msg;
        if (fails) {
          EXPECT_EQ(o.msg, k.says);
          // the put as it may be made: without fracwgt (it goes), or as first decided
          const bool first = k.first_with != 0 && !fails_first;
          EXPECT_EQ(b.put(v, date, x.data(), false, nullptr, first ? f.data() : nullptr), kSent);
        }
      }
      if (dst) {
        EXPECT_EQ(b.get(u, date, y.data()), kRecvd);
      }
      if (dst && date == 0 && !fails_first && k.first_with) {
        for (double yi : y) EXPECT_TRUE(yi == 0.0 || std::fabs(yi - 3.0) < 1e-13) << yi;  // 3 * f / f
      }
    }
    b.terminate();
  }
  EXPECT_TRUE(all_ranks(!::testing::Test::HasFailure()));
}

namespace {

// fracwgt's tests: the ORCA2 -> LMDZ entries SO1..SO3 -> SA1..SA3, each `adjust`ed, on random
// partitions of the given seed; two components, or one holding both grids at one rank. put
// sends x * f, f, and x with fracwgt f; check gets the three and counts the points where the
// third is not the first divided by the second (0 where the second is 0), to the bit.
struct FracwgtRun {
  FracwgtRun(Config cfg, const std::string& weights, const std::string& run_dir, unsigned seed,
             const std::function<void(Entry&)>& adjust) {
    const int64_t ns = 182 * 149, nd = 96 * 72;
    for (int k = 0; k < 3; ++k) {
      Entry e = orca2_to_lmdz(weights);
      e.src_names = {"SO" + std::to_string(k + 1)};
      e.dst_names = {"SA" + std::to_string(k + 1)};
      e.line = 10 * (k + 1);
      e.period = 2;
      adjust(e);
      cfg.entries.push_back(e);
    }
    CouplerOptions opt;
    opt.run_dir = run_dir;
    const int lr = L.two() ? L.local_rank() : 0, ls = L.two() ? L.local_size() : 1;
    c = std::make_unique<Coupler>(MPI_COMM_WORLD, L.two() ? L.component() : "both", cfg, opt);
    src = !L.two() || L.ocean();
    dst = !L.two() || !L.ocean();
    sidx = random_part(ns, ls, lr, seed);
    didx = random_part(nd, ls, lr, seed + 1);
    const int sp = src ? c->def_partition(ptr(list_of(ns, sidx))) : -1;
    const int dp = dst ? c->def_partition(ptr(list_of(nd, didx))) : -1;
    for (int k = 0; k < 3; ++k) {
      if (src) so[k] = c->def_var("SO" + std::to_string(k + 1), sp, VarDirection::Out, DataType::Double);
      if (dst) sa[k] = c->def_var("SA" + std::to_string(k + 1), dp, VarDirection::In, DataType::Double);
    }
    c->enddef();
  }
  // x and f at global source point g
  void put(int date, const std::function<double(int64_t)>& x_at, const std::function<double(int64_t)>& f_at, int info) {
    if (!src) return;
    std::vector<double> x(sidx.size()), f(sidx.size()), xf(sidx.size());
    for (size_t i = 0; i < sidx.size(); ++i) {
      x[i] = x_at(sidx[i]);
      f[i] = f_at(sidx[i]);
      xf[i] = x[i] * f[i];
    }
    EXPECT_EQ(c->put(so[0], date, xf.data()), info);
    EXPECT_EQ(c->put(so[1], date, f.data()), info);
    EXPECT_EQ(c->put(so[2], date, x.data(), false, nullptr, f.data()), info);
  }
  // the wrong points; `fractional` counts those whose mapped fraction is neither 0 nor 1,
  // `zero` those where it is 0
  int64_t check(int date, int64_t* fractional = nullptr, int64_t* zero = nullptr) {
    if (!dst) return 0;
    std::vector<double> num(didx.size()), den(didx.size()), y(didx.size(), -1.0);
    EXPECT_EQ(c->get(sa[0], date, num.data()), kRecvd);
    EXPECT_EQ(c->get(sa[1], date, den.data()), kRecvd);
    EXPECT_EQ(c->get(sa[2], date, y.data()), kRecvd);
    int64_t wrong = 0;
    for (size_t i = 0; i < didx.size(); ++i) {
      const double r = den[i] != 0.0 ? num[i] / den[i] : 0.0;
      wrong += std::memcmp(&y[i], &r, sizeof r) != 0;
      if (fractional) *fractional += den[i] != 0.0 && den[i] != 1.0 && y[i] != 0.0;
      if (zero) *zero += den[i] == 0.0;
    }
    return wrong;
  }
  Layout L;
  std::unique_ptr<Coupler> c;
  bool src = false, dst = false;
  std::vector<int64_t> sidx, didx;
  int so[3] = {-1, -1, -1}, sa[3] = {-1, -1, -1};
};

}  // namespace

// fracwgt through a lagged restart file, as OASIS3-MCT 5.0 keeps it: the first segment starts
// without a restart file ($NNOREST: zeros, no fraction) and puts with fracwgt from date 0 on;
// the fraction of the value it leaves for the next segment goes into the file beside it
// (avfw<entry>_<field>), and the next segment's first exchange, from the file, divides by its
// mapped fraction. Checked against the same values put plainly (field * fraction, fraction) on
// two more lagged entries, whose restart values the same file keeps.
TEST(Coupler, FracwgtGoesThroughTheLaggedRestartFile) {
  Watchdog w("coupler fracwgt restart");
  const TempRunDir run("fracwgt_restart");
  const std::string weights = std::string(ISTHMUS_TEST_DATA) + "/orca2-lmdz/rmp_torc_to_lmdz_CONSERV_FRACNNEI.nc";
  auto f_at = [](int64_t g, int t) {
    const double f = 0.5 + 0.7 * std::sin(g * 0.0023 + t);
    return f < 0.05 ? 0.0 : f > 1.0 ? 1.0 : f;
  };
  Config cfg;
  cfg.file = "namcouple";
  cfg.runtime = 4;
  cfg.nnorest = true;
  int64_t wrong = 0, divided = 0;
  for (int segment = 0; segment < 2; ++segment) {
    FracwgtRun r(cfg, weights, run.path(), 21 + 2 * segment, [](Entry& e) {
      e.lag = 2;
      e.restart_file = "rst.nc";
    });
    for (int date = 0; date < 4; date += 2) {
      const int t = 4 * segment + date;  // the run's time
      int64_t fractional = 0;
      wrong += r.check(date, &fractional);  // the lagged value comes first
      if (t > 0) divided += fractional;
      r.put(date, [t](int64_t g) { return 5.0 + std::cos(g * 0.0011) + t; },
            [&](int64_t g) { return f_at(g, t); }, date + 2 == 4 ? kToRest : kSent);
    }
    r.c->terminate();
    MPI_Barrier(MPI_COMM_WORLD);
    if (segment == 0 && world_rank() == 0) {
      int id = -1, v = -1;
      ASSERT_EQ(nc_open((run.path() + "/rst.nc").c_str(), NC_NOWRITE, &id), NC_NOERR);
      EXPECT_EQ(nc_inq_varid(id, "avfw000003_SO3", &v), NC_NOERR);
      EXPECT_EQ(nc_inq_varid(id, "SO3", &v), NC_NOERR);
      EXPECT_NE(nc_inq_varid(id, "avfw000001_SO1", &v), NC_NOERR);
      nc_close(id);
    }
  }
  EXPECT_TRUE(all_ranks(wrong == 0)) << wrong << " wrong values";
  int64_t total = divided;
  MPI_Allreduce(MPI_IN_PLACE, &total, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
  EXPECT_GT(total, 3 * 1000);  // dates 2, 4 (the restart's) and 6
}

// CHECKIN and CHECKOUT (OASIS3-MCT's oasis_advance_avdiag): at each coupling date the source
// component's first rank appends the put values' statistics (after BLASOLD), the destination's
// the received ones (after BLASNEW), to <run dir>/isthmus_check_<component>.txt, in OASIS's
// lines: the minimum and maximum with their (i, j) and 1-based index (the lowest where several
// points hold it), the mean and the sum over all ranks. Checked against the serial values.
TEST(Coupler, CheckinCheckoutWriteTheFieldsStatistics) {
  Watchdog w("coupler checkin");
  Layout L;
  const TempRunDir run("checkin");
  const int64_t nx = 37, ny = 11, n = nx * ny;
  Config cfg;
  cfg.file = "namcouple";
  cfg.runtime = 6;
  Entry e = entry("SST", "SSTA", 3, nx, ny);
  e.checkin = e.checkout = true;
  e.blasnew = BlasSpec{};
  e.blasnew->scale = 2.0;
  cfg.entries.push_back(e);
  CouplerOptions opt;
  opt.run_dir = run.path();
  const bool src = !L.two() || L.ocean(), dst = !L.two() || !L.ocean();
  Coupler c(MPI_COMM_WORLD, L.two() ? L.component() : "both", cfg, opt);
  const int lr = L.two() ? L.local_rank() : 0, ls = L.two() ? L.local_size() : 1;
  const std::vector<int64_t> sidx = random_part(n, ls, lr, 31), didx = random_part(n, ls, lr, 32);
  int so = -1, sa = -1;
  if (src) so = c.def_var("SST", c.def_partition(ptr(list_of(n, sidx))), VarDirection::Out, DataType::Double);
  if (dst) sa = c.def_var("SSTA", c.def_partition(ptr(list_of(n, didx))), VarDirection::In, DataType::Double);
  c.enddef();
  // a field whose minimum is held by two points (the lowest index counts) and whose maximum by one
  auto x_at = [](int64_t g, int date) { return g == 40 || g == 300 ? -7.0 : std::sin(0.1 * g) + date; };
  for (int date = 0; date < 6; ++date) {
    if (src) {
      std::vector<double> x(sidx.size());
      for (size_t i = 0; i < sidx.size(); ++i) x[i] = x_at(sidx[i], date);
      c.put(so, date, x.data());
    }
    if (dst) {
      std::vector<double> y(didx.size());
      c.get(sa, date, y.data());
    }
  }
  c.terminate();
  MPI_Barrier(MPI_COMM_WORLD);
  if (world_rank() != 0) return;
  for (const char* side : {"CHECKIN", "CHECKOUT"}) {
    const std::string comp = L.two() ? (side[5] == 'I' ? "ocean" : "atmos") : "both";
    std::ifstream in(run.path() + "/isthmus_check_" + comp + ".txt");
    ASSERT_TRUE(in.good()) << comp;
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    for (int date : {0, 3}) {
      const double scale = side[5] == 'I' ? 1.0 : 2.0;  // BLASNEW doubles what arrives
      double lo = 1e300, hi = -1e300, sum = 0.0;
      int64_t ilo = -1, ihi = -1;
      for (int64_t g = 0; g < n; ++g) {
        const double v = scale * x_at(g, date);
        sum += v;
        if (v < lo) lo = v, ilo = g;
        if (v > hi) hi = v, ihi = g;
      }
      const std::string head = std::string(side) + " entry SST (line 10), date " + std::to_string(date);
      const size_t at = text.find(head);
      ASSERT_NE(at, std::string::npos) << head << "\n" << text;
      const std::string fld = side[5] == 'I' ? "SST" : "SSTA";
      char line[256];
      std::snprintf(line, sizeof line, "  minimum value   = %24.16g %s\n     min val at   = (%6lld,%6lld) %9lld %s",
                    lo, fld.c_str(), static_cast<long long>(ilo % nx + 1), static_cast<long long>(ilo / nx + 1),
                    static_cast<long long>(ilo + 1), fld.c_str());
      EXPECT_NE(text.find(line, at), std::string::npos) << line << "\n" << text.substr(at, 600);
      std::snprintf(line, sizeof line, "  maximum value   = %24.16g %s\n     max val at   = (%6lld,%6lld) %9lld %s",
                    hi, fld.c_str(), static_cast<long long>(ihi % nx + 1), static_cast<long long>(ihi / nx + 1),
                    static_cast<long long>(ihi + 1), fld.c_str());
      EXPECT_NE(text.find(line, at), std::string::npos) << line;
      const size_t s = text.find("unweighted sum  = ", at);
      ASSERT_NE(s, std::string::npos);
      EXPECT_NEAR(std::stod(text.substr(s + 18, 24)), sum, 1e-12 * std::fabs(sum) + 1e-12);
      EXPECT_NE(text.find("  array size      =          407\n", at), std::string::npos);
    }
    EXPECT_EQ(text.find(std::string(side) + " entry SST (line 10), date 1"), std::string::npos);
  }
}

// OASIS3-MCT 5.0's fracwgt (oasis_put(..., fracwgt=f), pyoasis Var.put(..., fracwgt=f)): the
// destination receives map(x * f) / map(f), 0 where the mapped fraction is 0. As OASIS's own
// example does: x * f put plainly on one entry, f on another, x with fracwgt f on a third; the
// third must be the first divided by the second, to the bit, for every side that multiplies, at
// two coupling dates (the second runs on the fraction's lane already built), with the fraction
// 0 or 1 over whole regions. The source component's puts decide alone: the destination
// learns it at its first get.
TEST(Coupler, FracwgtDividesByTheMappedFraction) {
  Watchdog w("coupler fracwgt");
  const TempRunDir run("fracwgt");
  const std::string one = std::string(ISTHMUS_TEST_DATA) + "/orca2-lmdz/rmp_torc_to_lmdz_CONSERV_FRACNNEI.nc";
  // and the file with 3 weights per link, where the source side multiplies (its mapping keeps
  // them all: the fraction's lanes carry no terms)
  const std::string three = three_weights_file(run.path());
  auto f_at = [](int64_t g, int date) {
    const double f = 1.0 / (1.0 + std::exp(-0.2 * (std::fabs(std::fmod(g * 0.37, 180.0) - 90.0) - 30.0 + 10.0 * date)));
    return f <= 0.1 ? 0.0 : f >= 0.9 ? 1.0 : f;
  };
  const std::pair<MapSide, std::string> cases[] = {
      {MapSide::Dst, one}, {MapSide::Src, one}, {MapSide::Auto, one}, {MapSide::Src, three}};
  for (const auto& [side, weights] : cases) {
    Config cfg;
    cfg.file = "namcouple";
    cfg.runtime = 4;
    FracwgtRun r(cfg, weights, run.path(), 17, [side = side](Entry& e) {
      e.mapping->side = side;
      e.mapping->side_given = true;
    });
    int64_t wrong = 0, counts[2] = {0, 0};
    for (int date = 0; date < 4; date += 2) {
      r.put(date, [date](int64_t g) { return 2.0 + std::sin(g * 0.0007) * std::cos(g * 0.013) + date; },
            [&](int64_t g) { return f_at(g, date); }, kSent);
      wrong += r.check(date, &counts[0], &counts[1]);
    }
    r.c->terminate();
    EXPECT_TRUE(all_ranks(wrong == 0)) << wrong << " wrong values, side " << static_cast<int>(side);
    // the fraction is 0 at some destination points and strictly between 0 and 1 at others
    MPI_Allreduce(MPI_IN_PLACE, counts, 2, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
    EXPECT_GT(counts[0], 1000);
    EXPECT_GT(counts[1], 100);
  }
}
