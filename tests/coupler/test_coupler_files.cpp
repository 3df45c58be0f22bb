// The coupler's files, as OASIS3-MCT's oasis_advance_init and oasis_advance_run use them: a run
// cut in two segments (the second a new coupler reading the first one's restart file) receives
// the same bits as an uninterrupted run, with LAG and with partial LOCTRANS accumulations, and
// the restart file has OASIS's variables; write_restart's dated files; EXPOUT, OUTPUT and INPUT
// entries with their return codes and records; a missing lagged restart fails on every rank.
// With one rank the two components become one that holds both sides.
#include <gtest/gtest.h>
#include <mpi.h>
#include <netcdf.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <map>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "base/error.h"
#include "coupler/coupler.h"
#include "coupler/field_files.h"
#include "coupler/time_op.h"
#include "core_test_util.h"
#include "mpi_test_util.h"

using namespace isthmus;
using namespace isthmus::coupler;

using isthmus::test::Outcome;
using isthmus::test::outcome_of;
using isthmus::test::random_part;

namespace {

const int64_t kNx = 13, kNy = 7, kN = kNx * kNy;


IndexList list_of(const std::vector<int64_t>& idx) {
  return IndexList::from_indices(kN, idx.data(), static_cast<int64_t>(idx.size()));
}
// def_partition copies the list: a temporary's address is all it needs
const IndexList* ptr(const IndexList& l) { return &l; }

// "ocean" puts, "atmos" gets; at one rank a single component "both" does both.
struct Layout {
  int me = world_rank(), size = world_size();
  int nocean = std::max(1, size / 2);
  bool two() const { return size > 1; }
  bool src() const { return !two() || me < nocean; }
  bool dst() const { return !two() || me >= nocean; }
  std::string component() const { return two() ? (me < nocean ? "ocean" : "atmos") : "both"; }
  std::string src_component() const { return two() ? "ocean" : "both"; }
  std::string dst_component() const { return two() ? "atmos" : "both"; }
  int local_rank() const { return two() && me >= nocean ? me - nocean : me; }
  int local_size() const { return two() ? (me < nocean ? nocean : size - nocean) : 1; }
};

Entry entry(const std::string& src, const std::string& dst, int period, int line) {
  Entry e;
  e.src_names = {src};
  e.dst_names = {dst};
  e.period = period;
  e.src_nx = e.dst_nx = kNx;
  e.src_ny = e.dst_ny = kNy;
  e.src_grid = "gsrc";
  e.dst_grid = "gdst";
  e.line = line;
  return e;
}

// The value put at point g, level l, date t of the whole run (not of a segment).
double value(int64_t g, int t, int l = 0, int field = 0) {
  return std::sin(0.013 * g + l + field) * 100 + t * 0.37 + l * 10 + field * 1000;
}

struct Dir : TempRunDir {
  explicit Dir(const std::string& tag) : TempRunDir("cplfiles_" + tag) {}
};

// A netCDF file read on one rank, for checking layouts and values.
class NcReader {
 public:
  explicit NcReader(const std::string& path) : path_(path) {
    ok_ = nc_open(path.c_str(), NC_NOWRITE, &id_) == NC_NOERR;
  }
  ~NcReader() {
    if (ok_) nc_close(id_);
  }
  NcReader(const NcReader&) = delete;
  NcReader& operator=(const NcReader&) = delete;
  bool ok() const { return ok_; }
  bool has(const std::string& var) const {
    int v = -1;
    return ok_ && nc_inq_varid(id_, var.c_str(), &v) == NC_NOERR;
  }
  nc_type type(const std::string& var) const {
    nc_type t = NC_NAT;
    nc_inq_vartype(id_, varid(var), &t);
    return t;
  }
  // "name=length" of each dimension, in C order
  std::vector<std::string> dims(const std::string& var) const {
    const int v = varid(var);
    int nd = 0;
    nc_inq_varndims(id_, v, &nd);
    std::vector<int> ids(nd);
    nc_inq_vardimid(id_, v, ids.data());
    std::vector<std::string> out;
    for (int d : ids) {
      char name[NC_MAX_NAME + 1] = {};
      size_t len = 0;
      nc_inq_dim(id_, d, name, &len);
      out.push_back(std::string(name) + "=" + std::to_string(len));
    }
    return out;
  }
  std::vector<double> doubles(const std::string& var, size_t n) const {
    std::vector<double> x(n, -1.0);
    EXPECT_EQ(nc_get_var_double(id_, varid(var), x.data()), NC_NOERR) << path_ << " " << var;
    return x;
  }
  std::vector<int> ints(const std::string& var, size_t n) const {
    std::vector<int> x(n, -1);
    EXPECT_EQ(nc_get_var_int(id_, varid(var), x.data()), NC_NOERR) << path_ << " " << var;
    return x;
  }

 private:
  int varid(const std::string& var) const {
    int v = -1;
    EXPECT_EQ(nc_inq_varid(id_, var.c_str(), &v), NC_NOERR) << path_ << " has no " << var;
    return v;
  }
  std::string path_;
  int id_ = -1;
  bool ok_ = false;
};

bool same_bits(const std::vector<double>& a, const std::vector<double>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0;
}

// ---- the restart run ---------------------------------------------------------------------

// Three entries sharing one restart file: a lagged AVERAGE, an ACCUMUL without lag (a partial
// state only) and a lagged INSTANT bundle whose LAG is its period.
struct Coupled {
  const char* src;
  const char* dst;
  int period, lag, levels;
  TimeOp op;
};
const Coupled kCoupled[] = {{"SST", "SSTA", 4, 2, 1, TimeOp::Average},
                            {"FLX", "FLXA", 3, 0, 1, TimeOp::Accumul},
                            {"TAU", "TAUA", 3, 3, 2, TimeOp::Instant}};
const int kEntries = 3;
const int kSegment = 12;  // a multiple of every period, as OASIS assumes

Config restart_config(int runtime) {
  Config cfg;
  cfg.file = "namcouple";
  cfg.runtime = runtime;
  for (int k = 0; k < kEntries; ++k) {
    Entry e = entry(kCoupled[k].src, kCoupled[k].dst, kCoupled[k].period, 10 + 4 * k);
    e.lag = kCoupled[k].lag;
    if (kCoupled[k].op != TimeOp::Instant) e.loctrans = kCoupled[k].op;
    e.restart_file = "rst_ocean.nc";
    cfg.entries.push_back(e);
  }
  return cfg;
}

// Per entry and coupling date of the whole run, the received global field (levels * kN).
using Received = std::vector<std::map<int, std::vector<double>>>;

Received empty_received(int dates) {
  Received r(kEntries);
  for (int k = 0; k < kEntries; ++k)
    for (int t = 0; t < dates; t += kCoupled[k].period)
      r[k][t].assign(static_cast<size_t>(kCoupled[k].levels) * kN, 0.0);
  return r;
}

// Every point is received by one rank: a sum over the ranks assembles the fields exactly.
void assemble(Received& r) {
  for (auto& by_date : r)
    for (auto& [t, x] : by_date)
      MPI_Allreduce(MPI_IN_PLACE, x.data(), static_cast<int>(x.size()), MPI_DOUBLE, MPI_SUM,
                    MPI_COMM_WORLD);
}

double initial_restart(int64_t g, int l, int k) { return value(g, -100, l, k) + 0.125; }

// One run of `runtime` seconds whose date 0 is `first` of the whole run, in `dir`, with
// decompositions drawn from `seed`. write_initial: the run starts from a restart file the test
// writes (as a first OASIS run needs for its lagged fields). Returns the wrong return codes.
int64_t run_segment(const Layout& L, const std::string& dir, int runtime, int first, unsigned seed,
                    bool write_initial, Received& got) {
  CouplerOptions opt;
  opt.run_dir = dir;
  Coupler c(MPI_COMM_WORLD, L.component(), restart_config(runtime), opt);
  const int lr = L.local_rank(), ls = L.local_size();
  const std::vector<int64_t> sidx = random_part(kN, ls, lr, seed);
  const std::vector<int64_t> didx = random_part(kN, ls, lr, seed + 7);
  int sp = -1, dp = -1;
  if (L.src()) sp = c.def_partition(ptr(list_of(sidx)), "src");
  if (L.dst()) dp = c.def_partition(ptr(list_of(didx)), "dst");
  int out[kEntries], in[kEntries];
  for (int k = 0; k < kEntries; ++k) {
    if (L.src())
      out[k] = c.def_var(kCoupled[k].src, sp, VarDirection::Out, DataType::Double, kCoupled[k].levels);
    if (L.dst())
      in[k] = c.def_var(kCoupled[k].dst, dp, VarDirection::In, DataType::Double, kCoupled[k].levels);
  }
  if (write_initial && L.src()) {
    // the lagged fields of date 0, as a previous run (OASIS or isthmus) would have left them
    std::vector<std::vector<double>> init(kEntries);
    std::vector<FieldData> fields;
    for (int k : {0, 2}) {
      const int levels = kCoupled[k].levels;
      init[k].resize(levels * sidx.size());
      for (int l = 0; l < levels; ++l)
        for (size_t i = 0; i < sidx.size(); ++i)
          init[k][l * sidx.size() + i] = initial_restart(sidx[i], l, k);
      fields.push_back({kCoupled[k].src, levels, DataType::Double, init[k].data()});
    }
    write_restart(c.local_comm(), dir + "/rst_ocean.nc", list_of(sidx), GridShape{kNx, kNy}, "",
                  fields);
  }
  c.enddef();
  int64_t wrong = 0;
  std::vector<double> x, y;
  for (int d = 0; d < runtime; ++d) {
    const int t = first + d;
    for (int k = 0; k < kEntries; ++k) {
      const Coupled& cp = kCoupled[k];
      auto put = [&] {
        if (!L.src()) return;
        x.resize(cp.levels * sidx.size());
        for (int l = 0; l < cp.levels; ++l)
          for (size_t i = 0; i < sidx.size(); ++i) x[l * sidx.size() + i] = value(sidx[i], t, l, k);
        const int lagged = d + cp.lag;
        int expected = cp.op == TimeOp::Instant ? kOk : kLocTrans;
        if (lagged % cp.period == 0) expected = lagged < runtime ? kSent : lagged == runtime ? kToRest : expected;
        wrong += c.put(out[k], d, x.data()) != expected;
      };
      auto get = [&] {
        if (!L.dst()) return;
        y.assign(cp.levels * didx.size(), -1.0);
        const int info = c.get(in[k], d, y.data());
        wrong += info != (d % cp.period == 0 ? kRecvd : kOk);
        if (info != kRecvd) return;
        std::vector<double>& g = got[k].at(t);
        for (int l = 0; l < cp.levels; ++l)
          for (size_t i = 0; i < didx.size(); ++i) g[l * kN + didx[i]] = y[l * didx.size() + i];
      };
      // on ranks of both sides a lagged date's value was sent before: get first; otherwise
      // the put of the date must come first
      if (cp.lag > 0) {
        get();
        put();
      } else {
        put();
        get();
      }
    }
  }
  c.terminate();
  return wrong;
}

// The restart file a segment of kSegment seconds leaves, in OASIS's layout.
void check_restart_file(const std::string& path) {
  NcReader f(path);
  ASSERT_TRUE(f.ok()) << path;
  auto dims = [](const std::string& v) {
    return std::vector<std::string>{v + "_ny=" + std::to_string(kNy), v + "_nx=" + std::to_string(kNx)};
  };
  // the lagged AVERAGE: the puts at 7, 8, 9, 10, sent by OASIS's single-precision reciprocal
  EXPECT_EQ(f.type("SST"), NC_DOUBLE);
  EXPECT_EQ(f.dims("SST"), dims("SST"));
  std::vector<double> sst(kN);
  for (int64_t g = 0; g < kN; ++g) {
    double s = 0.0;
    for (int t = 7; t <= 10; ++t) s += value(g, t, 0, 0);
    sst[g] = s * average_factor(4);
  }
  EXPECT_TRUE(same_bits(f.doubles("SST", kN), sst));
  // the lagged INSTANT bundle: the put at 9, one variable per level
  for (int l = 0; l < 2; ++l) {
    const std::string v = level_name("TAU", l, 2);
    EXPECT_EQ(f.dims(v), dims(v));
    std::vector<double> tau(kN);
    for (int64_t g = 0; g < kN; ++g) tau[g] = value(g, 9, l, 2);
    EXPECT_TRUE(same_bits(f.doubles(v, kN), tau)) << v;
  }
  // partial states after the last put (11): AVERAGE holds the put at 11, ACCUMUL 10 + 11
  EXPECT_EQ(f.dims("loc000001_SST"), dims("loc000001_SST"));
  std::vector<double> loc1(kN), loc2(kN);
  for (int64_t g = 0; g < kN; ++g) {
    loc1[g] = value(g, 11, 0, 0);
    loc2[g] = value(g, 10, 0, 1) + value(g, 11, 0, 1);
  }
  EXPECT_TRUE(same_bits(f.doubles("loc000001_SST", kN), loc1));
  EXPECT_TRUE(same_bits(f.doubles("loc000002_FLX", kN), loc2));
  EXPECT_EQ(f.type("loc000001_cnt"), NC_INT);
  EXPECT_EQ(f.dims("loc000001_cnt"), std::vector<std::string>{"loc000001_cnt_ncnt=1"});
  EXPECT_EQ(f.ints("loc000001_cnt", 1), std::vector<int>{1});
  EXPECT_EQ(f.ints("loc000002_cnt", 1), std::vector<int>{1});  // OASIS counts ACCUMUL as 0 or 1
  // an INSTANT entry has no partial state
  EXPECT_FALSE(f.has("loc000003_TAU.001"));
  EXPECT_FALSE(f.has("loc000003_cnt"));
}

}  // namespace

// [0, 2T) at once against [0, T) and then [T, 2T) by a new coupler that continues from the
// restart file (dates start at 0 in each segment, $RUNTIME is the segment's length, as OASIS
// runs segments), with other decompositions in the second segment: every received field is
// bit-identical, the lagged date 0 of each segment comes from the restart file.
TEST(CouplerFiles, RestartedRunIsBitIdentical) {
  Watchdog w("restart bit-identical", 120);
  Layout L;
  Dir whole("whole"), cut("cut");
  Received a = empty_received(2 * kSegment), b = empty_received(2 * kSegment);
  const int64_t wrong_a = run_segment(L, whole.path(), 2 * kSegment, 0, 1, true, a);
  const int64_t wrong_b1 = run_segment(L, cut.path(), kSegment, 0, 1, true, b);
  MPI_Barrier(MPI_COMM_WORLD);
  if (world_rank() == 0) check_restart_file(cut / "rst_ocean.nc");
  const int64_t wrong_b2 = run_segment(L, cut.path(), kSegment, kSegment, 11, false, b);
  EXPECT_TRUE(all_ranks(wrong_a == 0 && wrong_b1 == 0 && wrong_b2 == 0))
      << wrong_a << " " << wrong_b1 << " " << wrong_b2 << " wrong return codes";
  assemble(a);
  assemble(b);
  for (int k = 0; k < kEntries; ++k)
    for (const auto& [t, x] : a[k]) EXPECT_TRUE(same_bits(x, b[k].at(t))) << kCoupled[k].src << " at " << t;
  // and the values are the ones OASIS sends: date 0 of a lagged entry from the file, the
  // lagged AVERAGE's date 4 the puts at 0, 1, 2
  int64_t bad = 0;
  for (int64_t g = 0; g < kN; ++g) {
    bad += a[0].at(0)[g] != initial_restart(g, 0, 0);
    bad += a[2].at(0)[kN + g] != initial_restart(g, 1, 2);
    bad += a[0].at(4)[g] != ((value(g, 0) + value(g, 1)) + value(g, 2)) * average_factor(3);
  }
  EXPECT_EQ(bad, 0);
}

// A lagged entry whose restart file or variable is missing fails enddef on every rank of both
// components: the source ranks with the message, the destination ranks naming the rank it came
// from. $NNOREST true starts from zeros instead.
TEST(CouplerFiles, MissingLaggedRestartIsAnErrorOnEveryRank) {
  Watchdog w("missing restart");
  Layout L;
  Dir dir("missing");
  for (int variant = 0; variant < 3; ++variant) {
    Config cfg;
    cfg.file = "namcouple";
    cfg.runtime = 4;
    Entry e = entry("SST", "SSTA", 2, 10);
    e.lag = 1;
    e.restart_file = variant == 0 ? "nothere.nc" : "other.nc";
    cfg.entries.push_back(e);
    if (variant == 2) cfg.nnorest = true;
    CouplerOptions opt;
    opt.run_dir = dir.path();
    Coupler c(MPI_COMM_WORLD, L.component(), cfg, opt);
    const std::vector<int64_t> sidx = random_part(kN, L.local_size(), L.local_rank(), 3);
    const std::vector<int64_t> didx = random_part(kN, L.local_size(), L.local_rank(), 4);
    int sp = -1, dp = -1, out = -1, in = -1;
    if (L.src()) sp = c.def_partition(ptr(list_of(sidx)));
    if (L.dst()) dp = c.def_partition(ptr(list_of(didx)));
    if (L.src()) out = c.def_var("SST", sp, VarDirection::Out, DataType::Double);
    if (L.dst()) in = c.def_var("SSTA", dp, VarDirection::In, DataType::Double);
    if (variant == 1 && L.src()) {
      std::vector<double> z(sidx.size(), 1.0);
      write_restart(c.local_comm(), dir / "other.nc", list_of(sidx), GridShape{kNx, kNy}, "",
                    {{"OTHER", 1, DataType::Double, z.data()}});
    }
    const Outcome o = outcome_of([&] { c.enddef(); });
    if (variant == 2) {
      EXPECT_EQ(o.code, ISTHMUS_OK) << o.msg;
      int64_t bad = 0;
      if (L.dst()) {
        std::vector<double> y(didx.size(), -1.0);
        bad += c.get(in, 0, y.data()) != kRecvd;
        for (double v : y) bad += v != 0.0;
      }
      if (L.src()) {
        std::vector<double> x(sidx.size(), 2.0);
        bad += c.put(out, 0, x.data()) != kOk;
      }
      c.terminate();
      EXPECT_TRUE(all_ranks(bad == 0));
      continue;
    }
    const std::string why =
        variant == 0 ? "the restart file \"" + (dir / "nothere.nc") + "\" does not exist"
                     : "the restart file \"" + (dir / "other.nc") + "\" has no variable \"SST\"";
    const std::string msg = "entry SST (line 10): LAG=1: " + why +
                            " (it holds the lagged value of SST for date 0; $NNOREST true starts "
                            "from zeros)";
    EXPECT_EQ(o.code, ISTHMUS_ERR_FILE);
    EXPECT_EQ(o.msg, L.src() ? msg : "failed on rank 0: " + msg);
    EXPECT_TRUE(same_code_everywhere(o.code, ISTHMUS_ERR_FILE));
  }
}

// write_restart (OASIS 4.0's optional argument of oasis_put): at a coupling date the value sent
// goes to TC<date>_<file>; at another date the partial state goes to TA<date>_<file>, once.
TEST(CouplerFiles, WriteRestartWritesDatedFiles) {
  Watchdog w("write_restart");
  Layout L;
  Dir dir("wrst");
  Config cfg;
  cfg.file = "namcouple";
  cfg.runtime = 16;
  Entry e = entry("SST", "SSTA", 4, 10);
  e.loctrans = TimeOp::Average;
  e.restart_file = "rst.nc";
  cfg.entries.push_back(e);
  CouplerOptions opt;
  opt.run_dir = dir.path();
  Coupler c(MPI_COMM_WORLD, L.component(), cfg, opt);
  const std::vector<int64_t> sidx = random_part(kN, L.local_size(), L.local_rank(), 5);
  const std::vector<int64_t> didx = random_part(kN, L.local_size(), L.local_rank(), 6);
  int out = -1, in = -1;
  if (L.src())
    out = c.def_var("SST", c.def_partition(ptr(list_of(sidx))),
                    VarDirection::Out, DataType::Double);
  if (L.dst())
    in = c.def_var("SSTA", c.def_partition(ptr(list_of(didx))),
                   VarDirection::In, DataType::Double);
  c.enddef();
  int64_t bad = 0;
  for (int d = 0; d < 16; ++d) {
    if (L.src()) {
      std::vector<double> x(sidx.size());
      for (size_t i = 0; i < sidx.size(); ++i) x[i] = value(sidx[i], d);
      bad += c.put(out, d, x.data(), d == 4 || d == 6) != (d % 4 == 0 ? kSent : kLocTrans);
    }
    if (L.dst()) {
      std::vector<double> y(didx.size());
      bad += c.get(in, d, y.data()) != (d % 4 == 0 ? kRecvd : kOk);
    }
  }
  c.terminate();
  EXPECT_TRUE(all_ranks(bad == 0));
  MPI_Barrier(MPI_COMM_WORLD);
  if (world_rank() != 0) return;
  std::vector<double> tc(kN), ta(kN), end(kN);
  for (int64_t g = 0; g < kN; ++g) {
    tc[g] = (((value(g, 1) + value(g, 2)) + value(g, 3)) + value(g, 4)) * average_factor(4);
    ta[g] = value(g, 5) + value(g, 6);
    end[g] = (value(g, 13) + value(g, 14)) + value(g, 15);
  }
  NcReader c4(dir / "TC000000004_rst.nc");
  ASSERT_TRUE(c4.ok());
  EXPECT_TRUE(same_bits(c4.doubles("SST", kN), tc));
  EXPECT_FALSE(c4.has("loc000001_SST"));
  NcReader a6(dir / "TA000000006_rst.nc");
  ASSERT_TRUE(a6.ok());
  EXPECT_TRUE(same_bits(a6.doubles("loc000001_SST", kN), ta));
  EXPECT_EQ(a6.ints("loc000001_cnt", 1), std::vector<int>{2});
  EXPECT_FALSE(std::filesystem::exists(dir / "TA000000004_rst.nc"));
  EXPECT_FALSE(std::filesystem::exists(dir / "TC000000006_rst.nc"));
  NcReader r(dir / "rst.nc");
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(same_bits(r.doubles("loc000001_SST", kN), end));
  EXPECT_EQ(r.ints("loc000001_cnt", 1), std::vector<int>{3});
}

// EXPOUT: the put side writes what it sends (after BLASOLD) and returns kSentOut; the get side
// writes what it receives and returns kRecvOut (OASIS sets the output flag on both sides).
// One record per coupling date, time in seconds of the run.
TEST(CouplerFiles, ExpoutWritesBothSides) {
  Watchdog w("expout");
  Layout L;
  Dir dir("expout");
  Config cfg;
  cfg.file = "namcouple";
  cfg.runtime = 8;
  Entry e = entry("SST", "SSTA", 2, 10);
  e.status = FieldStatus::Expout;
  e.restart_file = "rst.nc";
  e.blasold = BlasSpec{};
  e.blasold->scale = 2.0;
  e.blasold->add = 1.0;
  cfg.entries.push_back(e);
  CouplerOptions opt;
  opt.run_dir = dir.path();
  Coupler c(MPI_COMM_WORLD, L.component(), cfg, opt);
  const std::vector<int64_t> sidx = random_part(kN, L.local_size(), L.local_rank(), 7);
  const std::vector<int64_t> didx = random_part(kN, L.local_size(), L.local_rank(), 8);
  int out = -1, in = -1;
  if (L.src())
    out = c.def_var("SST", c.def_partition(ptr(list_of(sidx))),
                    VarDirection::Out, DataType::Double);
  if (L.dst())
    in = c.def_var("SSTA", c.def_partition(ptr(list_of(didx))),
                   VarDirection::In, DataType::Double);
  c.enddef();
  int64_t bad = 0;
  for (int d = 0; d < 8; ++d) {
    if (L.src()) {
      std::vector<double> x(sidx.size());
      for (size_t i = 0; i < sidx.size(); ++i) x[i] = value(sidx[i], d);
      bad += c.put(out, d, x.data()) != (d % 2 == 0 ? kSentOut : kOk);
    }
    if (L.dst()) {
      std::vector<double> y(didx.size());
      bad += c.get(in, d, y.data()) != (d % 2 == 0 ? kRecvOut : kOk);
      for (size_t i = 0; i < didx.size() && d % 2 == 0; ++i) bad += y[i] != 2.0 * value(didx[i], d) + 1.0;
    }
  }
  c.terminate();
  EXPECT_TRUE(all_ranks(bad == 0));
  MPI_Barrier(MPI_COMM_WORLD);
  if (world_rank() != 0) return;
  std::vector<double> sent;
  for (int t = 0; t < 8; t += 2)
    for (int64_t g = 0; g < kN; ++g) sent.push_back(2.0 * value(g, t) + 1.0);
  for (const std::string& file : {"SST_" + L.src_component() + "_01.nc", "SSTA_" + L.dst_component() + "_01.nc"}) {
    NcReader f(dir / file);
    ASSERT_TRUE(f.ok()) << file;
    const std::string var = file.substr(0, file.find('_'));
    EXPECT_EQ(f.ints("time", 4), (std::vector<int>{0, 2, 4, 6})) << file;
    EXPECT_EQ(f.dims(var), (std::vector<std::string>{"time=4", "ny=7", "nx=13"})) << file;
    EXPECT_TRUE(same_bits(f.doubles(var, sent.size()), sent)) << file;
  }
}

// OUTPUT: one component, no partner; the LOCTRANS result is written at each coupling date and
// the put returns kOutput there (kLocTrans between).
TEST(CouplerFiles, OutputEntryWritesWithoutPartner) {
  Watchdog w("output");
  Layout L;
  Dir dir("output");
  Config cfg;
  cfg.file = "namcouple";
  cfg.runtime = 9;
  Entry e = entry("SST", "SST", 3, 10);
  e.status = FieldStatus::Output;
  e.loctrans = TimeOp::Accumul;
  cfg.entries.push_back(e);
  CouplerOptions opt;
  opt.run_dir = dir.path();
  Coupler c(MPI_COMM_WORLD, L.component(), cfg, opt);
  const std::vector<int64_t> sidx = random_part(kN, L.local_size(), L.local_rank(), 9);
  int out = -1;
  if (L.src())
    out = c.def_var("SST", c.def_partition(ptr(list_of(sidx))),
                    VarDirection::Out, DataType::Double);
  c.enddef();
  int64_t bad = 0;
  if (L.src()) {
    EXPECT_FALSE(c.couplings().at(0)->exchanges());
    for (int d = 0; d < 9; ++d) {
      std::vector<double> x(sidx.size());
      for (size_t i = 0; i < sidx.size(); ++i) x[i] = value(sidx[i], d);
      bad += c.put(out, d, x.data()) != (d % 3 == 0 ? kOutput : kLocTrans);
    }
  } else {
    EXPECT_TRUE(c.couplings().empty());
  }
  c.terminate();
  EXPECT_TRUE(all_ranks(bad == 0));
  MPI_Barrier(MPI_COMM_WORLD);
  if (world_rank() != 0) return;
  std::vector<double> expected;
  for (int t = 0; t < 9; t += 3)
    for (int64_t g = 0; g < kN; ++g) {
      double s = value(g, t);
      if (t > 0) s = (value(g, t - 2) + value(g, t - 1)) + value(g, t);
      expected.push_back(s);
    }
  NcReader f(dir / ("SST_" + L.src_component() + "_01.nc"));
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(f.ints("time", 3), (std::vector<int>{0, 3, 6}));
  EXPECT_TRUE(same_bits(f.doubles("SST", expected.size()), expected));
}

// Output files are numbered as OASIS3-MCT 4 and 5 number them: by the entry's place once the
// entries are sorted by SEQ (a stable sort; an entry without SEQ counts as SEQ=1), not by its
// line in the namcouple. Three OUTPUT entries, SEQ=2, none, 1: files _03, _01, _02.
TEST(CouplerFiles, OutputFilesNumberedInSeqOrder) {
  Watchdog w("output seq");
  Layout L;
  Dir dir("outseq");
  Config cfg;
  cfg.file = "namcouple";
  cfg.runtime = 2;
  const std::vector<std::pair<std::string, int>> fields = {{"SST", 2}, {"SSS", 0}, {"ICE", 1}};
  for (const auto& [name, seq] : fields) {
    Entry e = entry(name, name, 1, 10 + seq);
    e.status = FieldStatus::Output;
    e.seq = seq;
    cfg.entries.push_back(e);
  }
  CouplerOptions opt;
  opt.run_dir = dir.path();
  Coupler c(MPI_COMM_WORLD, L.component(), cfg, opt);
  const std::vector<int64_t> sidx = random_part(kN, L.local_size(), L.local_rank(), 5);
  std::vector<int> ids;
  if (L.src())
    for (const auto& f : fields)
      ids.push_back(c.def_var(f.first, c.def_partition(ptr(list_of(sidx))), VarDirection::Out,
                              DataType::Double));
  c.enddef();
  int64_t bad = 0;
  for (size_t k = 0; k < ids.size(); ++k) {
    std::vector<double> x(sidx.size());
    for (size_t i = 0; i < sidx.size(); ++i) x[i] = value(sidx[i], 0, 0, static_cast<int>(k));
    bad += c.put(ids[k], 0, x.data()) != kOutput;
  }
  c.terminate();
  EXPECT_TRUE(all_ranks(bad == 0));
  MPI_Barrier(MPI_COMM_WORLD);
  if (world_rank() != 0) return;
  const std::vector<std::string> names = {"SST", "SSS", "ICE"}, numbers = {"03", "01", "02"};
  for (size_t k = 0; k < names.size(); ++k) {
    const std::string file = names[k] + "_" + L.src_component() + "_" + numbers[k] + ".nc";
    NcReader f(dir / file);
    ASSERT_TRUE(f.ok()) << file;
    std::vector<double> sent;
    for (int64_t g = 0; g < kN; ++g) sent.push_back(value(g, 0, 0, static_cast<int>(k)));
    EXPECT_TRUE(same_bits(f.doubles(names[k], sent.size()), sent)) << file;
  }
}

// An OUTPUT entry whose namcouple line names only its grids ("torc torc", as OASIS3-MCT's
// tutorial writes it) is written in the 2-D shape another entry gives the same partition, as
// OASIS keeps the shape per partition; with no such entry, as a line of points.
TEST(CouplerFiles, OutputEntryTakesThePartitionsShape) {
  Watchdog w("output shape");
  Layout L;
  Dir dir("outshape");
  Config cfg;
  cfg.file = "namcouple";
  cfg.runtime = 2;
  Entry out = entry("SST", "SST", 1, 10);
  out.status = FieldStatus::Output;
  out.src_nx = out.src_ny = out.dst_nx = out.dst_ny = 0;  // "gsrc gsrc": no dimensions
  Entry lone = out;                                        // on a partition of its own
  lone.src_names = lone.dst_names = {"SSS"};
  cfg.entries.push_back(out);
  cfg.entries.push_back(lone);
  Entry sent = entry("SST", "SSTA", 1, 12);  // an exchange of SST giving 13 x 7
  sent.status = FieldStatus::Exported;
  cfg.entries.push_back(sent);
  CouplerOptions opt;
  opt.run_dir = dir.path();
  Coupler c(MPI_COMM_WORLD, L.component(), cfg, opt);
  const std::vector<int64_t> sidx = random_part(kN, L.local_size(), L.local_rank(), 6);
  const std::vector<int64_t> didx = random_part(kN, L.local_size(), L.local_rank(), 7);
  int sst = -1, sss = -1, in = -1;
  if (L.src()) {
    sst = c.def_var("SST", c.def_partition(ptr(list_of(sidx))), VarDirection::Out, DataType::Double);
    sss = c.def_var("SSS", c.def_partition(ptr(list_of(sidx))), VarDirection::Out, DataType::Double);
  }
  if (L.dst())
    in = c.def_var("SSTA", c.def_partition(ptr(list_of(didx))), VarDirection::In, DataType::Double);
  c.enddef();
  std::vector<double> x(sidx.size()), y(didx.size());
  for (size_t i = 0; i < sidx.size(); ++i) x[i] = value(sidx[i], 0);
  if (L.src()) {
    c.put(sst, 0, x.data());
    c.put(sss, 0, x.data());
  }
  if (L.dst()) c.get(in, 0, y.data());
  c.terminate();
  MPI_Barrier(MPI_COMM_WORLD);
  if (world_rank() != 0) return;
  NcReader f(dir / ("SST_" + L.src_component() + "_01.nc"));
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(f.dims("SST"), (std::vector<std::string>{"time=1", "ny=7", "nx=13"}));
  NcReader g(dir / ("SSS_" + L.src_component() + "_02.nc"));
  ASSERT_TRUE(g.ok());
  EXPECT_EQ(g.dims("SSS"), (std::vector<std::string>{"time=1", "ny=1", "nx=91"}));
}

// INPUT: the get reads the record of its date from the entry's file at each coupling date and
// returns kInput (kOk between); records at other times are left alone.
TEST(CouplerFiles, InputEntryReadsItsDates) {
  Watchdog w("input");
  Layout L;
  Dir dir("input");
  const std::string file = "ALB_" + L.dst_component() + "_07.nc";
  Config cfg;
  cfg.file = "namcouple";
  cfg.runtime = 9;
  Entry e = entry("ALB", "ALB", 3, 10);
  e.status = FieldStatus::Input;
  e.input_file = file;
  e.src_nx = e.src_ny = e.dst_nx = e.dst_ny = 0;  // an INPUT entry has no grid line
  cfg.entries.push_back(e);
  CouplerOptions opt;
  opt.run_dir = dir.path();
  Coupler c(MPI_COMM_WORLD, L.component(), cfg, opt);
  const std::vector<int64_t> didx = random_part(kN, L.local_size(), L.local_rank(), 10);
  int in = -1;
  if (L.dst()) {
    in = c.def_var("ALB", c.def_partition(ptr(list_of(didx))),
                   VarDirection::In, DataType::Double);
    // the forcing file, written as OASIS's output files are (records at 0, 1, 3 and 6)
    OutputFile forcing(c.local_comm(), list_of(didx), GridShape{kNx, kNy}, L.dst_component(), 7,
                       dir.path() + "/");
    for (int t : {0, 1, 3, 6}) {
      std::vector<double> x(didx.size());
      for (size_t i = 0; i < didx.size(); ++i) x[i] = value(didx[i], t, 0, 5);
      forcing.write(t, {{"ALB", 1, DataType::Double, x.data()}});
    }
  }
  c.enddef();
  int64_t bad = 0;
  if (L.dst()) {
    for (int d = 0; d < 9; ++d) {
      std::vector<double> y(didx.size(), -1.0);
      const int info = c.get(in, d, y.data());
      bad += info != (d % 3 == 0 ? kInput : kOk);
      for (size_t i = 0; i < didx.size() && d % 3 == 0; ++i) bad += y[i] != value(didx[i], d, 0, 5);
    }
  }
  c.terminate();
  EXPECT_TRUE(all_ranks(bad == 0));
}
