// Every coupler feature end to end through the C API alone (include/isthmus.h), as a model uses
// it: namcouples written as text into a run directory, OASIS partitions
// (isthmus_coupler_def_partition_oasis: apple, box, orange, points), the world cut in two
// components ("ocean" puts, "atmos" gets; at one rank a single component "both" holds both
// sides, or the case is skipped where two components are the point). The values are checked
// against hand computations (LOCTRANS with OASIS's rules, docs/coupler-files.md), against the
// serial application of the shared ORCA2 -> LMDZ weights, against an uninterrupted run
// (restarts), against the source integral (CONSERV) and against the files written (restart,
// EXPOUT). Errors are checked by code, by rank and by their exact message.
#include <gtest/gtest.h>
#include <isthmus.h>
#include <mpi.h>
#include <netcdf.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <type_traits>
#include <vector>

#include "capi_reference.h"
#include "mpi_test_util.h"

namespace {

const std::string kData = std::string(ISTHMUS_TEST_DATA) + "/orca2-lmdz";

// ---- layout: who runs which component -----------------------------------------------------

// "ocean" on the first max(1, size / 2) ranks, "atmos" on the others; at one rank "both".
struct Layout {
  int me = world_rank(), size = world_size();
  int nocean = std::max(1, size / 2);
  bool two() const { return size > 1; }
  bool src() const { return !two() || me < nocean; }
  bool dst() const { return !two() || me >= nocean; }
  std::string component() const { return two() ? (me < nocean ? "ocean" : "atmos") : "both"; }
  int local_rank() const { return two() && me >= nocean ? me - nocean : me; }
  int local_size() const { return two() ? (me < nocean ? nocean : size - nocean) : 1; }
};

// ---- OASIS partitions (ig_paral) and the global indices they name -------------------------

std::vector<int> apple(int64_t n, int ls, int lr) {
  const int64_t a = n * lr / ls, b = n * (lr + 1) / ls;
  return {1, static_cast<int>(a), static_cast<int>(b - a)};
}

// 2-D boxes: two columns of boxes when the rank count is even, one otherwise
std::vector<int> box(int nx, int ny, int ls, int lr) {
  const int px = ls % 2 == 0 ? 2 : 1, py = ls / px, cx = lr % px, cy = lr / px;
  const int x0 = nx * cx / px, x1 = nx * (cx + 1) / px, y0 = ny * cy / py, y1 = ny * (cy + 1) / py;
  return {2, y0 * nx + x0, x1 - x0, y1 - y0, nx};
}

// segments of `seg` points dealt round robin
std::vector<int> orange(int64_t n, int ls, int lr, int seg) {
  std::vector<int> ig = {3, 0};
  for (int64_t s = 0; s * seg < n; ++s)
    if (s % ls == lr) {
      ig.push_back(static_cast<int>(s * seg));
      ig.push_back(static_cast<int>(std::min<int64_t>(seg, n - s * seg)));
      ++ig[1];
    }
  return ig;
}

// scattered points, in descending order
std::vector<int> points(int64_t n, int ls, int lr) {
  std::vector<int> ig = {4, 0};
  for (int64_t g = n - 1; g >= 0; --g)
    if ((static_cast<uint64_t>(g) * 0x9E3779B97F4A7C15ull >> 33) % static_cast<uint64_t>(ls) ==
        static_cast<uint64_t>(lr)) {
      ig.push_back(static_cast<int>(g));
      ++ig[1];
    }
  return ig;
}

// The global indices of an ig_paral in local order (0-based, as isthmus.h documents).
std::vector<int64_t> indices_of(const std::vector<int>& ig) {
  std::vector<int64_t> out;
  switch (ig[0]) {
    case 1:
      for (int i = 0; i < ig[2]; ++i) out.push_back(ig[1] + i);
      break;
    case 2:
      for (int j = 0; j < ig[3]; ++j)
        for (int i = 0; i < ig[2]; ++i) out.push_back(ig[1] + static_cast<int64_t>(j) * ig[4] + i);
      break;
    case 3:
      for (int s = 0; s < ig[1]; ++s)
        for (int i = 0; i < ig[3 + 2 * s]; ++i) out.push_back(ig[2 + 2 * s] + i);
      break;
    case 4:
      for (int p = 0; p < ig[1]; ++p) out.push_back(ig[2 + p]);
      break;
  }
  return out;
}

// ---- run directories, namcouples ----------------------------------------------------------

// This binary's run directories, where the shared weights are linked as OASIS looks them up.
struct RunDir : TempRunDir {
  explicit RunDir(const std::string& tag) : TempRunDir("capi_features_" + tag) {}
  void link_data(const std::string& file) const {
    if (world_rank() == 0) std::filesystem::create_symlink(kData + "/" + file, *this / file);
    MPI_Barrier(MPI_COMM_WORLD);
  }
};

// The namcouple's first section in OASIS3-MCT 4.0's style (no $END after the keywords).
std::string head(int nfields, int runtime, const std::string& extra = "") {
  return "# written by test_capi_features\n$NFIELDS\n  " + std::to_string(nfields) + "\n$RUNTIME\n  " +
         std::to_string(runtime) + "\n$NLOGPRT\n  0 0\n" + extra + "$STRINGS\n";
}

// The line (from 1) on which `needle` starts in `text`.
int line_of(const std::string& text, const std::string& needle) {
  const size_t at = text.find(needle);
  EXPECT_NE(at, std::string::npos) << needle;
  return 1 + static_cast<int>(std::count(text.begin(), text.begin() + static_cast<long>(at), '\n'));
}

// ---- the coupler through the C API --------------------------------------------------------

// Owns a coupler handle; destroyed at scope end.
struct Cpl {
  isthmus_coupler* c = nullptr;
  Cpl() = default;
  Cpl(const Cpl&) = delete;
  Cpl& operator=(const Cpl&) = delete;
  ~Cpl() { isthmus_coupler_destroy(&c); }
  const char* err() const { return isthmus_coupler_last_error(c); }
  int local_rank() const {
    MPI_Comm local = MPI_COMM_NULL;
    isthmus_coupler_get_local_comm(c, &local);
    int r = -1;
    MPI_Comm_rank(local, &r);
    return r;
  }
};

int create(Cpl& cpl, const std::string& component, const std::string& nam, const std::string& dir,
           double timeout = 0.0) {
  isthmus_coupler_options opt{dir.c_str(), timeout};
  return isthmus_coupler_create(MPI_COMM_WORLD, component.c_str(), nam.c_str(), &opt, &cpl.c);
}

// A partition from an ig_paral of a grid of n points.
int partition(Cpl& cpl, int64_t n, const std::vector<int>& ig, const char* name) {
  int part = -1;
  const int rc = isthmus_coupler_def_partition_oasis(cpl.c, n, ig.data(), static_cast<int>(ig.size()),
                                                     name, &part);
  EXPECT_EQ(rc, ISTHMUS_OK) << cpl.err();
  return part;
}

int var(Cpl& cpl, const std::string& name, int part, int dir, int type = ISTHMUS_DOUBLE, int bundle = 1) {
  int v = -1;
  EXPECT_EQ(isthmus_coupler_def_var(cpl.c, name.c_str(), part, dir, type, bundle, &v), ISTHMUS_OK)
      << cpl.err();
  return v;
}

// The value put at point g, date t (of the whole run), level l, of field f.
double value(int64_t g, int t, int l = 0, int f = 0) {
  return std::sin(0.013 * g + 0.7 * t + l + f) * 100 + t * 0.37 + l * 10 + f * 1000;
}

// OASIS's AVERAGE factor: the reciprocal of the count in single precision, used only when the
// count is above 1 (docs/coupler-files.md) — written here independently of the library.
double oasis_average(double sum, int count) {
  return count > 1 ? sum * static_cast<double>(1.0f / static_cast<float>(count)) : sum;
}

bool same_bits(const std::vector<double>& a, const std::vector<double>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0;
}

// A netCDF variable read whole on this process (empty if anything fails, with a failure).
template <typename T>
std::vector<T> read_nc(const std::string& path, const std::string& name, std::vector<size_t>* dims = nullptr) {
  int id = -1, v = -1, nd = 0;
  std::vector<T> out;
  if (nc_open(path.c_str(), NC_NOWRITE, &id) != NC_NOERR) {
    ADD_FAILURE() << "cannot open " << path;
    return out;
  }
  if (nc_inq_varid(id, name.c_str(), &v) != NC_NOERR) {
    ADD_FAILURE() << path << " has no variable " << name;
    nc_close(id);
    return out;
  }
  nc_inq_varndims(id, v, &nd);
  std::vector<int> ids(nd);
  nc_inq_vardimid(id, v, ids.data());
  size_t total = 1;
  if (dims) dims->clear();
  for (int d : ids) {
    size_t len = 0;
    nc_inq_dimlen(id, d, &len);
    total *= len;
    if (dims) dims->push_back(len);
  }
  out.resize(total);
  int rc;
  if constexpr (std::is_same_v<T, double>) rc = nc_get_var_double(id, v, out.data());
  else rc = nc_get_var_int(id, v, out.data());
  EXPECT_EQ(rc, NC_NOERR) << path << " " << name;
  nc_close(id);
  return out;
}

// Every point is received by one rank: a sum over the world assembles a global array.
void assemble(std::vector<double>& x) {
  MPI_Allreduce(MPI_IN_PLACE, x.data(), static_cast<int>(x.size()), MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
}

int64_t total(int64_t x) {
  long long l = x, g = 0;
  MPI_Allreduce(&l, &g, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  return g;
}

}  // namespace

// ---- 1. LOCTRANS ---------------------------------------------------------------------------

// Each time operation against a hand computation: the value of a coupling date combines the
// puts after the previous coupling date up to and including this one; AVERAGE multiplies the
// sum by the single-precision reciprocal of the count. Info codes: a put between coupling
// dates returns LOCTRANS (OK for INSTANT), at one SENT; a get RECVD at coupling dates, else OK.
// Source on apple partitions, destination on orange ones.
TEST(CapiFeatures, EachLoctransAgainstAHandComputation) {
  Watchdog w("capi features loctrans");
  Layout L;
  RunDir dir("loctrans");
  const int nx = 13, ny = 7, n = nx * ny, period = 3, runtime = 12;
  const char* ops[] = {"INSTANT", "ACCUMUL", "AVERAGE", "T_MIN", "T_MAX"};
  std::string text = head(5, runtime);
  for (int k = 0; k < 5; ++k)
    text += std::string("S_") + ops[k] + " R_" + ops[k] + " 1 3 1 rst.nc EXPORTED\n13 7 13 7 gsrc gdst\n" +
            "R 0 R 0\nLOCTRANS\n" + ops[k] + "\n";
  text += "$END\n";
  const std::string nam = dir.write("namcouple", text);
  Cpl cpl;
  ASSERT_TRUE(all_ranks(create(cpl, L.component(), nam, dir.path()) == ISTHMUS_OK)) << cpl.err();
  const std::vector<int> sig = apple(n, L.local_size(), L.local_rank());
  const std::vector<int> dig = orange(n, L.local_size(), L.local_rank(), 5);
  const std::vector<int64_t> sidx = indices_of(sig), didx = indices_of(dig);
  int sp = -1, dp = -1, out[5], in[5];
  if (L.src()) sp = partition(cpl, n, sig, "gsrc");
  if (L.dst()) dp = partition(cpl, n, dig, "gdst");
  for (int k = 0; k < 5; ++k) {
    if (L.src()) out[k] = var(cpl, std::string("S_") + ops[k], sp, ISTHMUS_VAR_OUT);
    if (L.dst()) in[k] = var(cpl, std::string("R_") + ops[k], dp, ISTHMUS_VAR_IN);
  }
  ASSERT_TRUE(all_ranks(isthmus_coupler_enddef(cpl.c) == ISTHMUS_OK)) << cpl.err();
  int64_t codes = 0, checked = 0;
  int64_t wrong[5] = {0, 0, 0, 0, 0};
  std::vector<double> x(sidx.size()), y(didx.size());
  for (int t = 0; t < runtime; ++t) {
    const bool coupling = t % period == 0;
    if (L.src()) {
      for (int k = 0; k < 5; ++k) {
        for (size_t i = 0; i < sidx.size(); ++i) x[i] = value(sidx[i], t, 0, k);
        int info = -1;
        EXPECT_EQ(isthmus_coupler_put(cpl.c, out[k], t, x.data(), &info), ISTHMUS_OK) << cpl.err();
        const int expected = coupling ? ISTHMUS_COUPLING_SENT : k == 0 ? ISTHMUS_COUPLING_OK : ISTHMUS_COUPLING_LOCTRANS;
        codes += info != expected;
      }
    }
    if (!L.dst()) continue;
    const int first = t == 0 ? 0 : t - period + 1;  // the puts after the previous coupling date
    for (int k = 0; k < 5; ++k) {
      std::fill(y.begin(), y.end(), -12345.0);
      int info = -1;
      EXPECT_EQ(isthmus_coupler_get(cpl.c, in[k], t, y.data(), &info), ISTHMUS_OK) << cpl.err();
      codes += info != (coupling ? ISTHMUS_COUPLING_RECVD : ISTHMUS_COUPLING_OK);
      if (!coupling) continue;
      for (size_t i = 0; i < didx.size(); ++i) {
        double sum = value(didx[i], first, 0, k), lo = sum, hi = sum;
        for (int s = first + 1; s <= t; ++s) {
          const double v = value(didx[i], s, 0, k);
          sum += v;
          lo = std::min(lo, v);
          hi = std::max(hi, v);
        }
        const double expected[5] = {value(didx[i], t, 0, k), sum, oasis_average(sum, t - first + 1), lo, hi};
        wrong[k] += std::memcmp(&y[i], &expected[k], sizeof(double)) != 0;
        ++checked;
      }
    }
  }
  EXPECT_EQ(isthmus_coupler_terminate(cpl.c), ISTHMUS_OK) << cpl.err();
  EXPECT_TRUE(all_ranks(codes == 0)) << codes << " wrong info codes";
  for (int k = 0; k < 5; ++k) EXPECT_EQ(total(wrong[k]), 0) << ops[k] << ": wrong values";
  EXPECT_EQ(total(checked), 5 * 4 * n);  // every point of every operation at 0, 3, 6, 9
}

// ---- 2. LAG, restarts, ToRest; SEQ ----------------------------------------------------------

namespace {

// A lagged AVERAGE (LAG 2, period 4) and a lagged INSTANT bundle of 2 levels (LAG = period =
// 3), one restart file. $NNOREST T for a run that starts from nothing (lagged date 0 = zeros).
const int kRx = 13, kRy = 7, kRn = kRx * kRy, kSeg = 12;

std::string restart_namcouple(int runtime, bool nnorest) {
  return head(2, runtime, nnorest ? "$NNOREST\n  T\n" : "") +
         "SST SSTA 1 4 1 rst_ocean.nc EXPORTED\n13 7 13 7 gsrc gdst LAG=2\nR 0 R 0\nLOCTRANS\nAVERAGE\n"
         "TAU TAUA 1 3 0 rst_ocean.nc EXPORTED\n13 7 13 7 gsrc gdst LAG=3\nR 0 R 0\n$END\n";
}

struct Lagged {
  const char* src;
  const char* dst;
  int period, lag, levels;
  bool instant;
};
const Lagged kLagged[2] = {{"SST", "SSTA", 4, 2, 1, false}, {"TAU", "TAUA", 3, 3, 2, true}};

// One run of `runtime` seconds whose date 0 is date `first` of the whole run; `got[k][t]` the
// global field received by entry k at date t of the whole run (assembled by the caller).
// Returns the wrong info codes; `torest` counts the puts that returned TOREST.
int64_t run_segment(const Layout& L, const RunDir& dir, const std::string& nam_file, int runtime,
                    int first, int variant, std::vector<std::map<int, std::vector<double>>>& got,
                    int64_t& torest) {
  const std::string nam = dir.write(nam_file, restart_namcouple(runtime, first == 0));
  Cpl cpl;
  const int rc = create(cpl, L.component(), nam, dir.path());
  EXPECT_EQ(rc, ISTHMUS_OK) << cpl.err();
  if (!all_ranks(rc == ISTHMUS_OK)) return 1;
  const int ls = L.local_size(), lr = L.local_rank();
  // other partitions in each segment: the restart file is global, not per rank
  const std::vector<int> sig = variant == 0 ? apple(kRn, ls, lr) : points(kRn, ls, lr);
  const std::vector<int> dig = variant == 0 ? orange(kRn, ls, lr, 4) : box(kRx, kRy, ls, lr);
  const std::vector<int64_t> sidx = indices_of(sig), didx = indices_of(dig);
  int sp = -1, dp = -1, out[2] = {-1, -1}, in[2] = {-1, -1};
  if (L.src()) sp = partition(cpl, kRn, sig, "gsrc");
  if (L.dst()) dp = partition(cpl, kRn, dig, "gdst");
  for (int k = 0; k < 2; ++k) {
    if (L.src()) out[k] = var(cpl, kLagged[k].src, sp, ISTHMUS_VAR_OUT, ISTHMUS_DOUBLE, kLagged[k].levels);
    if (L.dst()) in[k] = var(cpl, kLagged[k].dst, dp, ISTHMUS_VAR_IN, ISTHMUS_DOUBLE, kLagged[k].levels);
  }
  const int end = isthmus_coupler_enddef(cpl.c);
  EXPECT_EQ(end, ISTHMUS_OK) << cpl.err();
  if (!all_ranks(end == ISTHMUS_OK)) return 1;
  int64_t wrong = 0;
  std::vector<double> x, y;
  for (int d = 0; d < runtime; ++d) {
    const int t = first + d;
    for (int k = 0; k < 2; ++k) {
      const Lagged& e = kLagged[k];
      // a lagged date's value was sent by an earlier put: get first, then put
      if (L.dst()) {
        y.assign(e.levels * didx.size(), -1.0);
        int info = -1;
        EXPECT_EQ(isthmus_coupler_get(cpl.c, in[k], d, y.data(), &info), ISTHMUS_OK) << cpl.err();
        wrong += info != (d % e.period == 0 ? ISTHMUS_COUPLING_RECVD : ISTHMUS_COUPLING_OK);
        if (info == ISTHMUS_COUPLING_RECVD) {
          std::vector<double>& g = got[k][t];
          g.assign(e.levels * kRn, 0.0);
          for (int l = 0; l < e.levels; ++l)
            for (size_t i = 0; i < didx.size(); ++i) g[l * kRn + didx[i]] = y[l * didx.size() + i];
        }
      }
      if (L.src()) {
        x.resize(e.levels * sidx.size());
        for (int l = 0; l < e.levels; ++l)
          for (size_t i = 0; i < sidx.size(); ++i) x[l * sidx.size() + i] = value(sidx[i], t, l, k);
        const int lagged = d + e.lag;
        int expected = e.instant ? ISTHMUS_COUPLING_OK : ISTHMUS_COUPLING_LOCTRANS;
        if (lagged % e.period == 0)
          expected = lagged < runtime ? ISTHMUS_COUPLING_SENT : lagged == runtime ? ISTHMUS_COUPLING_TOREST : expected;
        int info = -1;
        EXPECT_EQ(isthmus_coupler_put(cpl.c, out[k], d, x.data(), &info), ISTHMUS_OK) << cpl.err();
        wrong += info != expected;
        torest += info == ISTHMUS_COUPLING_TOREST;
      }
    }
  }
  EXPECT_EQ(isthmus_coupler_terminate(cpl.c), ISTHMUS_OK) << cpl.err();
  return wrong;
}

// every coupling date of [0, dates) of entry k, zeros everywhere (filled by the receiving ranks)
std::vector<std::map<int, std::vector<double>>> empty_received(int dates) {
  std::vector<std::map<int, std::vector<double>>> r(2);
  for (int k = 0; k < 2; ++k)
    for (int t = 0; t < dates; t += kLagged[k].period) r[k][t].assign(kLagged[k].levels * kRn, 0.0);
  return r;
}

}  // namespace

// [0, 24) in one run against [0, 12) then [12, 24) by a second coupler reading the first one's
// restart file (other partitions in the second): every received field bit-identical; the puts
// whose lagged date is $RUNTIME return TOREST and leave OASIS's variables in the restart file.
TEST(CapiFeatures, LaggedRestartGivesTheBitsOfAnUninterruptedRun) {
  Watchdog w("capi features restart", 90);
  Layout L;
  RunDir whole("whole"), cut("cut");
  auto a = empty_received(2 * kSeg), b = empty_received(2 * kSeg);
  int64_t torest_a = 0, torest_b1 = 0, torest_b2 = 0;
  const int64_t wrong_a = run_segment(L, whole, "namcouple", 2 * kSeg, 0, 0, a, torest_a);
  const int64_t wrong_b1 = run_segment(L, cut, "namcouple.1", kSeg, 0, 0, b, torest_b1);
  // the restart file the first segment leaves: the lagged AVERAGE of date 12 (the puts at 7,
  // 8, 9, 10) and the lagged INSTANT bundle of date 12 (the put at 9), one variable per level
  if (world_rank() == 0) {
    std::vector<size_t> dims;
    const std::vector<double> sst = read_nc<double>(cut / "rst_ocean.nc", "SST", &dims);
    EXPECT_EQ(dims, (std::vector<size_t>{kRy, kRx}));
    std::vector<double> expected(kRn);
    for (int64_t g = 0; g < kRn; ++g) {
      double s = value(g, 7);
      for (int t = 8; t <= 10; ++t) s += value(g, t);
      expected[g] = oasis_average(s, 4);
    }
    EXPECT_TRUE(same_bits(sst, expected)) << "SST in the restart file";
    for (int l = 0; l < 2; ++l) {
      for (int64_t g = 0; g < kRn; ++g) expected[g] = value(g, 9, l, 1);
      EXPECT_TRUE(same_bits(read_nc<double>(cut / "rst_ocean.nc", "TAU.00" + std::to_string(l + 1)), expected))
          << "TAU level " << l + 1 << " in the restart file";
    }
  }
  MPI_Barrier(MPI_COMM_WORLD);
  const int64_t wrong_b2 = run_segment(L, cut, "namcouple.2", kSeg, kSeg, 1, b, torest_b2);
  EXPECT_TRUE(all_ranks(wrong_a == 0 && wrong_b1 == 0 && wrong_b2 == 0))
      << wrong_a << " " << wrong_b1 << " " << wrong_b2 << " wrong info codes";
  // one TOREST per entry and source rank in each run (SST's put at 10 or 22, TAU's at 9 or 21)
  const int nsrc = L.two() ? L.nocean : 1;
  EXPECT_EQ(total(torest_a), 2 * nsrc);
  EXPECT_EQ(total(torest_b1), 2 * nsrc);
  EXPECT_EQ(total(torest_b2), 2 * nsrc);
  for (int k = 0; k < 2; ++k)
    for (auto& [t, x] : a[k]) {
      assemble(x);
      assemble(b[k].at(t));
      EXPECT_TRUE(same_bits(x, b[k].at(t))) << kLagged[k].src << " at date " << t;
    }
  // and they are OASIS's values: zeros at date 0 ($NNOREST), the lagged AVERAGE of date 4 the
  // puts at 0, 1, 2; of date 16 the puts at 11 (first segment, restored) to 14
  int64_t bad = 0;
  for (int64_t g = 0; g < kRn; ++g) {
    bad += a[0].at(0)[g] != 0.0 || a[1].at(0)[g] != 0.0;
    bad += a[0].at(4)[g] != oasis_average((value(g, 0) + value(g, 1)) + value(g, 2), 3);
    bad += b[0].at(16)[g] != oasis_average(((value(g, 11) + value(g, 12)) + value(g, 13)) + value(g, 14), 4);
    bad += b[1].at(12)[kRn + g] != value(g, 9, 1, 1);
  }
  EXPECT_EQ(bad, 0);
}

// SEQ: a get before a due coupling of lower SEQ fails with ISTHMUS_ERR_ARG and OASIS's reason,
// consuming nothing: the gets in the configured order then receive the right values.
TEST(CapiFeatures, AGetOutOfSeqOrderFails) {
  Watchdog w("capi features SEQ");
  Layout L;
  RunDir dir("seq");
  const int n = 30;
  const std::string text = head(2, 4) +
                           "SA RA 1 2 0 rst.nc EXPORTED\n30 1 30 1 ga gb SEQ=1\nR 0 R 0\n"
                           "SB RB 1 2 0 rst.nc EXPORTED\n30 1 30 1 ga gb SEQ=2\nR 0 R 0\n$END\n";
  const std::string nam = dir.write("namcouple", text);
  Cpl cpl;
  ASSERT_TRUE(all_ranks(create(cpl, L.component(), nam, dir.path()) == ISTHMUS_OK)) << cpl.err();
  const std::vector<int> sig = apple(n, L.local_size(), L.local_rank()), dig = points(n, L.local_size(), L.local_rank());
  const std::vector<int64_t> sidx = indices_of(sig), didx = indices_of(dig);
  int sa = -1, sb = -1, ra = -1, rb = -1;
  if (L.src()) {
    const int p = partition(cpl, n, sig, "ga");
    sa = var(cpl, "SA", p, ISTHMUS_VAR_OUT);
    sb = var(cpl, "SB", p, ISTHMUS_VAR_OUT);
  }
  if (L.dst()) {
    const int p = partition(cpl, n, dig, "gb");
    ra = var(cpl, "RA", p, ISTHMUS_VAR_IN);
    rb = var(cpl, "RB", p, ISTHMUS_VAR_IN);
  }
  ASSERT_TRUE(all_ranks(isthmus_coupler_enddef(cpl.c) == ISTHMUS_OK)) << cpl.err();
  const int lr = cpl.local_rank();
  int64_t bad = 0, refused = 0, other_message = 0;
  std::vector<double> xa(sidx.size()), xb(sidx.size()), y(didx.size());
  auto put = [&](int v, int t, std::vector<double>& x, int f) {
    for (size_t i = 0; i < sidx.size(); ++i) x[i] = value(sidx[i], t, 0, f);
    int info = -1;
    EXPECT_EQ(isthmus_coupler_put(cpl.c, v, t, x.data(), &info), ISTHMUS_OK) << cpl.err();
    bad += info != ISTHMUS_COUPLING_SENT;
  };
  auto get = [&](int v, int t, int f) {
    std::fill(y.begin(), y.end(), -1.0);
    int info = -1;
    EXPECT_EQ(isthmus_coupler_get(cpl.c, v, t, y.data(), &info), ISTHMUS_OK) << cpl.err();
    bad += info != ISTHMUS_COUPLING_RECVD;
    for (size_t i = 0; i < didx.size(); ++i) bad += y[i] != value(didx[i], t, 0, f);
  };
  for (int t = 0; t <= 2; t += 2) {
    // at one rank the component puts SB only, so that SA's coupling is due when RB is asked for
    if (L.src()) put(sb, t, xb, 1);
    if (L.two() && L.src()) put(sa, t, xa, 0);
    if (L.dst() && t == 2) {
      int info = -1;
      const int rc = isthmus_coupler_get(cpl.c, rb, t, y.data(), &info);
      EXPECT_EQ(rc, ISTHMUS_ERR_ARG);
      refused += rc == ISTHMUS_ERR_ARG;
      const std::string expected =
          "isthmus: rank " + std::to_string(lr) + ": isthmus_coupler_get: component " + L.component() +
          " at date 2: get of RB (line " + std::to_string(line_of(text, "SB RB")) +
          ", SEQ=2) before the coupling of SA (line " + std::to_string(line_of(text, "SA RA")) +
          ", SEQ=1) due at date 2: the configuration's sequence says that one comes first (a "
          "partner waiting in that order would wait for ever)";
      EXPECT_EQ(std::string(cpl.err()), expected);
      other_message += std::string(cpl.err()) != expected;
    }
    if (!L.two()) put(sa, t, xa, 0);
    if (L.dst()) {
      get(ra, t, 0);
      get(rb, t, 1);
    }
  }
  EXPECT_EQ(isthmus_coupler_terminate(cpl.c), ISTHMUS_OK) << cpl.err();
  EXPECT_TRUE(all_ranks(bad == 0)) << bad << " wrong codes or values";
  EXPECT_EQ(total(refused), L.two() ? L.size - L.nocean : 1);
  EXPECT_EQ(total(other_message), 0) << "ranks whose refusal has another message";
}

// ---- 3. colon groups, bundles, floats ------------------------------------------------------

// U:V -> UA:VA travel together: the first put of a coupling date returns WAITGROUP (put_inquire
// says so before), the second SENT; 3 levels per point (var_nodims(2) = 3), UA double and VA
// float on the destination. T (float, put) -> TA (double, get) with ACCUMUL: the floats are
// widened to double before they are added. Source on boxes, destination on scattered points.
TEST(CapiFeatures, ColonGroupsBundlesAndFloatFields) {
  Watchdog w("capi features groups");
  Layout L;
  RunDir dir("groups");
  const int nx = 13, ny = 7, n = nx * ny, period = 3, runtime = 9, levels = 3;
  const std::string text = head(2, runtime) +
                           "U:V UA:VA 1 3 1 rst.nc EXPORTED\n13 7 13 7 gsrc gdst\nR 0 R 0\nLOCTRANS\nAVERAGE\n"
                           "T TA 1 3 1 rst.nc EXPORTED\n13 7 13 7 gsrc gdst\nR 0 R 0\nLOCTRANS\nACCUMUL\n$END\n";
  const std::string nam = dir.write("namcouple", text);
  Cpl cpl;
  ASSERT_TRUE(all_ranks(create(cpl, L.component(), nam, dir.path()) == ISTHMUS_OK)) << cpl.err();
  const std::vector<int> sig = box(nx, ny, L.local_size(), L.local_rank());
  const std::vector<int> dig = points(n, L.local_size(), L.local_rank());
  const std::vector<int64_t> sidx = indices_of(sig), didx = indices_of(dig);
  const size_t ms = sidx.size(), md = didx.size();
  int u = -1, v = -1, t_ = -1, ua = -1, va = -1, ta = -1;
  if (L.src()) {
    const int p = partition(cpl, n, sig, "gsrc");
    u = var(cpl, "U", p, ISTHMUS_VAR_OUT, ISTHMUS_DOUBLE, levels);
    v = var(cpl, "V", p, ISTHMUS_VAR_OUT, ISTHMUS_DOUBLE, levels);
    t_ = var(cpl, "T", p, ISTHMUS_VAR_OUT, ISTHMUS_FLOAT);
  }
  if (L.dst()) {
    const int p = partition(cpl, n, dig, "gdst");
    ua = var(cpl, "UA", p, ISTHMUS_VAR_IN, ISTHMUS_DOUBLE, levels);
    va = var(cpl, "VA", p, ISTHMUS_VAR_IN, ISTHMUS_FLOAT, levels);
    ta = var(cpl, "TA", p, ISTHMUS_VAR_IN, ISTHMUS_DOUBLE);
  }
  ASSERT_TRUE(all_ranks(isthmus_coupler_enddef(cpl.c) == ISTHMUS_OK)) << cpl.err();
  if (L.src()) {
    int64_t pts = -1;
    int bundle = -1;
    EXPECT_EQ(isthmus_coupler_get_var_size(cpl.c, u, &pts, &bundle), ISTHMUS_OK);
    EXPECT_EQ(pts, static_cast<int64_t>(ms));
    EXPECT_EQ(bundle, levels);
  }
  auto tvalue = [](int64_t g, int t) { return static_cast<float>(std::cos(0.05 * g + 1.1 * t) * 7.5); };
  int64_t codes = 0, wrong = 0, checked = 0;
  for (int t = 0; t < runtime; ++t) {
    const bool coupling = t % period == 0;
    if (L.src()) {
      std::vector<double> a(levels * ms), b(levels * ms);
      std::vector<float> z(ms);
      for (int l = 0; l < levels; ++l)
        for (size_t i = 0; i < ms; ++i) {
          a[l * ms + i] = value(sidx[i], t, l, 0);
          b[l * ms + i] = value(sidx[i], t, l, 1);
        }
      for (size_t i = 0; i < ms; ++i) z[i] = tvalue(sidx[i], t);
      const int idle = ISTHMUS_COUPLING_LOCTRANS;
      int info = -1, inquired = -1;
      EXPECT_EQ(isthmus_coupler_put_inquire(cpl.c, u, t, &inquired), ISTHMUS_OK) << cpl.err();
      codes += inquired != (coupling ? ISTHMUS_COUPLING_WAITGROUP : idle);
      EXPECT_EQ(isthmus_coupler_put(cpl.c, u, t, a.data(), &info), ISTHMUS_OK) << cpl.err();
      codes += info != (coupling ? ISTHMUS_COUPLING_WAITGROUP : idle);
      EXPECT_EQ(isthmus_coupler_put_inquire(cpl.c, v, t, &inquired), ISTHMUS_OK) << cpl.err();
      codes += inquired != (coupling ? ISTHMUS_COUPLING_SENT : idle);
      EXPECT_EQ(isthmus_coupler_put(cpl.c, v, t, b.data(), &info), ISTHMUS_OK) << cpl.err();
      codes += info != (coupling ? ISTHMUS_COUPLING_SENT : idle);
      EXPECT_EQ(isthmus_coupler_put(cpl.c, t_, t, z.data(), &info), ISTHMUS_OK) << cpl.err();
      codes += info != (coupling ? ISTHMUS_COUPLING_SENT : idle);
    }
    if (!L.dst()) continue;
    std::vector<double> a(levels * md, -1.0), z(md, -1.0);
    std::vector<float> b(levels * md, -1.0f);
    int ia = -1, ib = -1, iz = -1;
    EXPECT_EQ(isthmus_coupler_get(cpl.c, ua, t, a.data(), &ia), ISTHMUS_OK) << cpl.err();
    EXPECT_EQ(isthmus_coupler_get(cpl.c, va, t, b.data(), &ib), ISTHMUS_OK) << cpl.err();
    EXPECT_EQ(isthmus_coupler_get(cpl.c, ta, t, z.data(), &iz), ISTHMUS_OK) << cpl.err();
    const int expected = coupling ? ISTHMUS_COUPLING_RECVD : ISTHMUS_COUPLING_OK;
    codes += (ia != expected) + (ib != expected) + (iz != expected);
    if (!coupling) continue;
    const int first = t == 0 ? 0 : t - period + 1;
    for (size_t i = 0; i < md; ++i) {
      for (int l = 0; l < levels; ++l) {
        double sa = value(didx[i], first, l, 0), sb = value(didx[i], first, l, 1);
        for (int s = first + 1; s <= t; ++s) {
          sa += value(didx[i], s, l, 0);
          sb += value(didx[i], s, l, 1);
        }
        const double ea = oasis_average(sa, t - first + 1);
        const float eb = static_cast<float>(oasis_average(sb, t - first + 1));
        wrong += std::memcmp(&a[l * md + i], &ea, sizeof ea) != 0;
        wrong += std::memcmp(&b[l * md + i], &eb, sizeof eb) != 0;
      }
      double sz = static_cast<double>(tvalue(didx[i], first));
      for (int s = first + 1; s <= t; ++s) sz += static_cast<double>(tvalue(didx[i], s));
      wrong += std::memcmp(&z[i], &sz, sizeof sz) != 0;
      ++checked;
    }
  }
  EXPECT_EQ(isthmus_coupler_terminate(cpl.c), ISTHMUS_OK) << cpl.err();
  EXPECT_TRUE(all_ranks(codes == 0)) << codes << " wrong info codes";
  EXPECT_EQ(total(wrong), 0) << "wrong values";
  EXPECT_EQ(total(checked), 3 * n);
}

// ---- 4. mapping with the shared weights on both sides -------------------------------------

namespace {

const int64_t kTorc = 182 * 149, kLmdz = 96 * 72;

double sst(int64_t g, int t) { return 271.0 + 30 * std::sin(g * 0.0007 + t) + g * 1e-7; }

// The serial application of a weights file (this rank alone), for each date.
std::vector<std::vector<double>> reference_of(const std::string& path, int dates) {
  std::vector<std::vector<double>> inputs(static_cast<size_t>(dates), std::vector<double>(kTorc));
  for (int t = 0; t < dates; ++t)
    for (int64_t g = 0; g < kTorc; ++g) inputs[t][g] = sst(g, t);
  return apply_serially(path, kTorc, kLmdz, inputs);
}

std::vector<std::vector<double>> reference(const std::string& file, int dates) {
  return reference_of(kData + "/" + file, dates);
}

}  // namespace

// The ORCA2 -> LMDZ bilinear weights through two entries, one `dst bfb` (destination side: the
// bits of the serial application at every rank count), one `src sum` (partial sums on the
// source side: within 1e-14 relative). Source on 2-D boxes, destination on orange segments.
TEST(CapiFeatures, MappingBfbAndSumWithTheSharedWeights) {
  Watchdog w("capi features mapping");
  Layout L;
  RunDir dir("mapping");
  dir.link_data("rmp_torc_to_lmdz_BILINEAR.nc");
  const int dates = 2;
  const std::string text = head(2, dates) +
                           "O_B A_B 1 1 1 rst.nc EXPORTED\n182 149 96 72 torc lmdz\nP 2 P 0\nMAPPING\n"
                           "rmp_torc_to_lmdz_BILINEAR.nc dst bfb\n"
                           "O_S A_S 1 1 1 rst.nc EXPORTED\n182 149 96 72 torc lmdz\nP 2 P 0\nMAPPING\n"
                           "rmp_torc_to_lmdz_BILINEAR.nc src sum\n$END\n";
  const std::string nam = dir.write("namcouple", text);
  const std::vector<std::vector<double>> ref = reference("rmp_torc_to_lmdz_BILINEAR.nc", dates);
  ASSERT_TRUE(all_ranks(ref.size() == static_cast<size_t>(dates)));
  Cpl cpl;
  ASSERT_TRUE(all_ranks(create(cpl, L.component(), nam, dir.path()) == ISTHMUS_OK)) << cpl.err();
  const std::vector<int> sig = box(182, 149, L.local_size(), L.local_rank());
  const std::vector<int> dig = orange(kLmdz, L.local_size(), L.local_rank(), 500);
  const std::vector<int64_t> sidx = indices_of(sig), didx = indices_of(dig);
  int ob = -1, os = -1, ab = -1, as = -1;
  if (L.src()) {
    const int p = partition(cpl, kTorc, sig, "torc");
    ob = var(cpl, "O_B", p, ISTHMUS_VAR_OUT);
    os = var(cpl, "O_S", p, ISTHMUS_VAR_OUT);
  }
  if (L.dst()) {
    const int p = partition(cpl, kLmdz, dig, "lmdz");
    ab = var(cpl, "A_B", p, ISTHMUS_VAR_IN);
    as = var(cpl, "A_S", p, ISTHMUS_VAR_IN);
  }
  ASSERT_TRUE(all_ranks(isthmus_coupler_enddef(cpl.c) == ISTHMUS_OK)) << cpl.err();
  int64_t codes = 0, not_bfb = 0, not_close = 0, differ = 0, checked = 0;
  for (int t = 0; t < dates; ++t) {
    if (L.src()) {
      std::vector<double> x(sidx.size());
      for (size_t i = 0; i < sidx.size(); ++i) x[i] = sst(sidx[i], t);
      int info = -1;
      EXPECT_EQ(isthmus_coupler_put(cpl.c, ob, t, x.data(), &info), ISTHMUS_OK) << cpl.err();
      codes += info != ISTHMUS_COUPLING_SENT;
      EXPECT_EQ(isthmus_coupler_put(cpl.c, os, t, x.data(), &info), ISTHMUS_OK) << cpl.err();
      codes += info != ISTHMUS_COUPLING_SENT;
    }
    if (!L.dst()) continue;
    std::vector<double> yb(didx.size(), -1.0), ys(didx.size(), -1.0);
    int ib = -1, is = -1;
    EXPECT_EQ(isthmus_coupler_get(cpl.c, ab, t, yb.data(), &ib), ISTHMUS_OK) << cpl.err();
    EXPECT_EQ(isthmus_coupler_get(cpl.c, as, t, ys.data(), &is), ISTHMUS_OK) << cpl.err();
    codes += (ib != ISTHMUS_COUPLING_RECVD) + (is != ISTHMUS_COUPLING_RECVD);
    for (size_t i = 0; i < didx.size(); ++i) {
      const double r = ref[t][didx[i]];
      not_bfb += std::memcmp(&yb[i], &r, sizeof r) != 0;
      not_close += std::fabs(ys[i] - r) > 1e-14 * std::fabs(r);
      differ += std::fabs(ys[i] - yb[i]) > 1e-14 * std::fabs(yb[i]);
      ++checked;
    }
  }
  EXPECT_EQ(isthmus_coupler_terminate(cpl.c), ISTHMUS_OK) << cpl.err();
  EXPECT_TRUE(all_ranks(codes == 0)) << codes << " wrong info codes";
  EXPECT_EQ(total(not_bfb), 0) << "bfb values that are not the serial application's bits";
  EXPECT_EQ(total(not_close), 0) << "sum values further than 1e-14 from the serial application";
  EXPECT_EQ(total(differ), 0) << "bfb and sum further apart than 1e-14";
  EXPECT_EQ(total(checked), dates * kLmdz);
}

// ---- 5. CONSERV GLOBAL ---------------------------------------------------------------------

// The conservative ORCA2 -> LMDZ weights with CONSERV GLOBAL; areas.nc and masks.nc written in
// the run directory by the grid-writing C API from the shared grid files (srf; OASIS's msk =
// 1 - imask): the integral over the active destination cells equals the source's to 1e-12.
// The same entry without CONSERV is further off (the check can fail).
TEST(CapiFeatures, ConservGlobalRestoresTheSourceIntegral) {
  Watchdog w("capi features CONSERV");
  Layout L;
  RunDir dir("conserv");
  dir.link_data("rmp_torc_to_lmdz_CONSERV_FRACNNEI.nc");
  struct Grid {
    const char* name;
    int nx, ny;
    std::vector<double> srf;
    std::vector<int> imask;
  };
  Grid grids[2] = {{"torc", 182, 149, {}, {}}, {"lmdz", 96, 72, {}, {}}};
  for (Grid& g : grids) {
    g.srf = read_nc<double>(kData + "/grid_" + g.name + ".nc", "srf");
    g.imask = read_nc<int>(kData + "/grid_" + g.name + ".nc", "imask");
    ASSERT_TRUE(all_ranks(g.srf.size() == static_cast<size_t>(g.nx) * g.ny &&
                          g.imask.size() == g.srf.size()));
  }
  int written = ISTHMUS_OK;
  if (world_rank() == 0) {
    for (Grid& g : grids) {
      std::vector<int> msk(g.imask.size());
      for (size_t i = 0; i < msk.size(); ++i) msk[i] = 1 - g.imask[i];
      char err[512] = "";
      int rc = isthmus_grids_write_areas(dir.path().c_str(), g.name, g.nx, g.ny, g.srf.data(), err, sizeof err);
      EXPECT_EQ(rc, ISTHMUS_OK) << err;
      written = rc != ISTHMUS_OK ? rc : written;
      rc = isthmus_grids_write_mask(dir.path().c_str(), g.name, g.nx, g.ny, msk.data(), err, sizeof err);
      EXPECT_EQ(rc, ISTHMUS_OK) << err;
      written = rc != ISTHMUS_OK ? rc : written;
    }
  }
  ASSERT_TRUE(all_ranks(written == ISTHMUS_OK));
  const std::string text = head(2, 1) +
                           "O_C A_C 1 1 2 rst.nc EXPORTED\n182 149 96 72 torc lmdz\nP 2 P 0\nMAPPING CONSERV\n"
                           "rmp_torc_to_lmdz_CONSERV_FRACNNEI.nc\nGLOBAL\n"
                           "O_N A_N 1 1 1 rst.nc EXPORTED\n182 149 96 72 torc lmdz\nP 2 P 0\nMAPPING\n"
                           "rmp_torc_to_lmdz_CONSERV_FRACNNEI.nc\n$END\n";
  const std::string nam = dir.write("namcouple", text);
  Cpl cpl;
  ASSERT_TRUE(all_ranks(create(cpl, L.component(), nam, dir.path()) == ISTHMUS_OK)) << cpl.err();
  const std::vector<int> sig = orange(kTorc, L.local_size(), L.local_rank(), 1000);
  const std::vector<int> dig = box(96, 72, L.local_size(), L.local_rank());
  const std::vector<int64_t> sidx = indices_of(sig), didx = indices_of(dig);
  int oc = -1, on = -1, ac = -1, an = -1;
  if (L.src()) {
    const int p = partition(cpl, kTorc, sig, "torc");
    oc = var(cpl, "O_C", p, ISTHMUS_VAR_OUT);
    on = var(cpl, "O_N", p, ISTHMUS_VAR_OUT);
  }
  if (L.dst()) {
    const int p = partition(cpl, kLmdz, dig, "lmdz");
    ac = var(cpl, "A_C", p, ISTHMUS_VAR_IN);
    an = var(cpl, "A_N", p, ISTHMUS_VAR_IN);
  }
  ASSERT_TRUE(all_ranks(isthmus_coupler_enddef(cpl.c) == ISTHMUS_OK)) << cpl.err();
  auto f = [](int64_t g) { return 1.0 + 0.5 * std::sin(g * 0.01); };
  int64_t codes = 0;
  if (L.src()) {
    std::vector<double> x(sidx.size());
    for (size_t i = 0; i < sidx.size(); ++i) x[i] = f(sidx[i]);
    int info = -1;
    EXPECT_EQ(isthmus_coupler_put(cpl.c, oc, 0, x.data(), &info), ISTHMUS_OK) << cpl.err();
    codes += info != ISTHMUS_COUPLING_SENT;
    EXPECT_EQ(isthmus_coupler_put(cpl.c, on, 0, x.data(), &info), ISTHMUS_OK) << cpl.err();
    codes += info != ISTHMUS_COUPLING_SENT;
  }
  long double local[2] = {0, 0};
  if (L.dst()) {
    std::vector<double> yc(didx.size(), -1.0), yn(didx.size(), -1.0);
    int info = -1;
    EXPECT_EQ(isthmus_coupler_get(cpl.c, ac, 0, yc.data(), &info), ISTHMUS_OK) << cpl.err();
    codes += info != ISTHMUS_COUPLING_RECVD;
    EXPECT_EQ(isthmus_coupler_get(cpl.c, an, 0, yn.data(), &info), ISTHMUS_OK) << cpl.err();
    codes += info != ISTHMUS_COUPLING_RECVD;
    for (size_t i = 0; i < didx.size(); ++i)
      if (grids[1].imask[didx[i]]) {
        local[0] += static_cast<long double>(yc[i]) * grids[1].srf[didx[i]];
        local[1] += static_cast<long double>(yn[i]) * grids[1].srf[didx[i]];
      }
  }
  EXPECT_EQ(isthmus_coupler_terminate(cpl.c), ISTHMUS_OK) << cpl.err();
  EXPECT_TRUE(all_ranks(codes == 0)) << codes << " wrong info codes";
  double dst[2] = {static_cast<double>(local[0]), static_cast<double>(local[1])};
  MPI_Allreduce(MPI_IN_PLACE, dst, 2, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  long double s = 0;
  for (int64_t g = 0; g < kTorc; ++g)
    if (grids[0].imask[g]) s += static_cast<long double>(f(g)) * grids[0].srf[g];
  const double src = static_cast<double>(s);
  EXPECT_NEAR(dst[0], src, 1e-12 * src) << "CONSERV GLOBAL";
  EXPECT_GT(std::fabs(dst[1] - src), 1e-9 * src) << "without CONSERV the integral is not kept";
}

// ---- 5b. SCRIPR: weights generated at initialisation --------------------------------------

// Two SCRIPR entries (BILINEAR, CONSERV FRACNNEI) with no weights file in the run directory,
// only OASIS's grids.nc and masks.nc (written by the grid-writing C API from the shared grid
// files): enddef generates rmp_torc_to_lmdz_BILINEAR.nc and rmp_torc_to_lmdz_CONSERV_FRACNNEI.nc
// (as OASIS names them), the fields received are the generated files applied serially (within
// 1e-14: SCRIPR leaves the side to isthmus), every active LMDZ point gets a value, and a second
// start reuses the files.
TEST(CapiFeatures, ScriprGeneratesTheWeightsAtInitialisation) {
  Watchdog w("capi features SCRIPR", 240);
  Layout L;
  RunDir dir("scripr");
  struct G {
    const char* name;
    int nx, ny;
  };
  const G grids[2] = {{"torc", 182, 149}, {"lmdz", 96, 72}};
  int written = ISTHMUS_OK;
  if (world_rank() == 0) {
    for (const G& g : grids) {
      const std::string file = kData + "/grid_" + g.name + ".nc";
      const std::vector<double> lon = read_nc<double>(file, "lon"), lat = read_nc<double>(file, "lat");
      const std::vector<double> clo = read_nc<double>(file, "clo"), cla = read_nc<double>(file, "cla");
      const std::vector<int> imask = read_nc<int>(file, "imask");
      std::vector<int> msk(imask.size());
      for (size_t i = 0; i < msk.size(); ++i) msk[i] = 1 - imask[i];
      char err[512] = "";
      for (int rc : {isthmus_grids_write_centers(dir.path().c_str(), g.name, g.nx, g.ny, lon.data(),
                                                 lat.data(), err, sizeof err),
                     isthmus_grids_write_corners(dir.path().c_str(), g.name, g.nx, g.ny, 4,
                                                 clo.data(), cla.data(), err, sizeof err),
                     isthmus_grids_write_mask(dir.path().c_str(), g.name, g.nx, g.ny, msk.data(),
                                              err, sizeof err)}) {
        EXPECT_EQ(rc, ISTHMUS_OK) << err;
        if (rc != ISTHMUS_OK) written = rc;
      }
    }
  }
  ASSERT_TRUE(all_ranks(written == ISTHMUS_OK));
  const std::string text = head(2, 1) +
                           "O_B A_B 1 1 1 rst.nc EXPORTED\n182 149 96 72 torc lmdz\nP 2 P 0\nSCRIPR\n"
                           "BILINEAR LR SCALAR LATLON 1\n"
                           "O_C A_C 1 1 1 rst.nc EXPORTED\n182 149 96 72 torc lmdz\nP 2 P 0\nSCRIPR\n"
                           "CONSERV LR SCALAR LATLON 1 FRACNNEI FIRST\n$END\n";
  const std::string nam = dir.write("namcouple", text);
  const std::string files[2] = {"rmp_torc_to_lmdz_BILINEAR.nc", "rmp_torc_to_lmdz_CONSERV_FRACNNEI.nc"};
  // Without grids.nc in a run directory, enddef fails on every rank naming the weights file it
  // looked for and why it could not make it.
  {
    RunDir bare("scripr_bare");
    const std::string bare_nam = bare.write("namcouple", text);
    Cpl cpl;
    ASSERT_TRUE(all_ranks(create(cpl, L.component(), bare_nam, bare.path()) == ISTHMUS_OK)) << cpl.err();
    if (L.src()) {
      const int p = partition(cpl, kTorc, apple(kTorc, L.local_size(), L.local_rank()), "torc");
      var(cpl, "O_B", p, ISTHMUS_VAR_OUT);
      var(cpl, "O_C", p, ISTHMUS_VAR_OUT);
    }
    if (L.dst()) {
      const int p = partition(cpl, kLmdz, box(96, 72, L.local_size(), L.local_rank()), "lmdz");
      var(cpl, "A_B", p, ISTHMUS_VAR_IN);
      var(cpl, "A_C", p, ISTHMUS_VAR_IN);
    }
    const int rc = isthmus_coupler_enddef(cpl.c);
    EXPECT_TRUE(same_code_everywhere(rc, ISTHMUS_ERR_FILE));
    EXPECT_NE(std::string(cpl.err()).find("SCRIPR: no weights file rmp_torc_to_lmdz_BILINEAR.nc in the run directory"),
              std::string::npos) << cpl.err();
    EXPECT_NE(std::string(cpl.err()).find("grids.nc"), std::string::npos) << cpl.err();
  }
  const std::vector<int> sig = apple(kTorc, L.local_size(), L.local_rank());
  const std::vector<int> dig = box(96, 72, L.local_size(), L.local_rank());
  const std::vector<int64_t> sidx = indices_of(sig), didx = indices_of(dig);
  const std::vector<int> lmdz_imask = read_nc<int>(kData + "/grid_lmdz.nc", "imask");
  std::filesystem::file_time_type made[2];
  for (int start = 0; start < 2; ++start) {
    Cpl cpl;
    ASSERT_TRUE(all_ranks(create(cpl, L.component(), nam, dir.path()) == ISTHMUS_OK)) << cpl.err();
    int ob = -1, oc = -1, ab = -1, ac = -1;
    if (L.src()) {
      const int p = partition(cpl, kTorc, sig, "torc");
      ob = var(cpl, "O_B", p, ISTHMUS_VAR_OUT);
      oc = var(cpl, "O_C", p, ISTHMUS_VAR_OUT);
    }
    if (L.dst()) {
      const int p = partition(cpl, kLmdz, dig, "lmdz");
      ab = var(cpl, "A_B", p, ISTHMUS_VAR_IN);
      ac = var(cpl, "A_C", p, ISTHMUS_VAR_IN);
    }
    ASSERT_TRUE(all_ranks(isthmus_coupler_enddef(cpl.c) == ISTHMUS_OK)) << cpl.err();
    for (int k = 0; k < 2; ++k) {
      ASSERT_TRUE(all_ranks(std::filesystem::exists(dir / files[k]))) << files[k];
      const auto t = std::filesystem::last_write_time(dir / files[k]);
      if (start == 0) made[k] = t;
      else EXPECT_TRUE(t == made[k]) << files[k] << " was made again at the second start";
    }
    if (L.src()) {
      std::vector<double> x(sidx.size());
      for (size_t i = 0; i < sidx.size(); ++i) x[i] = sst(sidx[i], 0);
      int info = -1;
      EXPECT_EQ(isthmus_coupler_put(cpl.c, ob, 0, x.data(), &info), ISTHMUS_OK) << cpl.err();
      EXPECT_EQ(isthmus_coupler_put(cpl.c, oc, 0, x.data(), &info), ISTHMUS_OK) << cpl.err();
    }
    int64_t not_bfb = 0, unmapped = 0, checked = 0;
    if (L.dst()) {
      for (int k = 0; k < 2; ++k) {
        const std::vector<std::vector<double>> ref = reference_of(dir / files[k], 1);
        ASSERT_EQ(ref.size(), 1u);
        std::vector<double> y(didx.size(), -1.0);
        int info = -1;
        EXPECT_EQ(isthmus_coupler_get(cpl.c, k == 0 ? ab : ac, 0, y.data(), &info), ISTHMUS_OK)
            << cpl.err();
        EXPECT_EQ(info, ISTHMUS_COUPLING_RECVD);
        for (size_t i = 0; i < didx.size(); ++i) {
          // SCRIPR leaves the side to isthmus (docs/coupler.md): partial sums on the source side
          // are within 1e-14 of the serial application, the destination side its bits.
          not_bfb += std::fabs(y[i] - ref[0][didx[i]]) > 1e-14 * std::fabs(ref[0][didx[i]]);
          // SST of 241-301 K: every active point gets a value in that range.
          if (lmdz_imask[didx[i]]) unmapped += !(y[i] > 240.0 && y[i] < 302.0);
          ++checked;
        }
      }
    }
    EXPECT_EQ(isthmus_coupler_terminate(cpl.c), ISTHMUS_OK) << cpl.err();
    EXPECT_EQ(total(not_bfb), 0) << "values further than 1e-14 from the generated file's serial application";
    EXPECT_EQ(total(unmapped), 0) << "active LMDZ points without a plausible value";
    EXPECT_EQ(total(checked), 2 * kLmdz);
  }
}

// ---- 6. within one component; EXPOUT ------------------------------------------------------

// One component "model" on every rank, two partitions of one grid (physics on apple, dynamics
// on scattered points held by other ranks), an EXPOUT entry: the put comes first and returns
// SENTOUT, the get RECVOUT; both fields' files <name>_model_01.nc hold one record per coupling
// date, time in seconds, values as put.
TEST(CapiFeatures, CouplingWithinOneComponentAndExpout) {
  Watchdog w("capi features within one component");
  RunDir dir("expout");
  const int nx = 11, ny = 5, n = nx * ny, period = 2, runtime = 8;
  const std::string text = head(1, runtime) + "PHYS DYN 1 2 0 rst.nc EXPOUT\n11 5 11 5 phys dyn\nR 0 R 0\n$END\n";
  const std::string nam = dir.write("namcouple", text);
  Cpl cpl;
  ASSERT_TRUE(all_ranks(create(cpl, "model", nam, dir.path()) == ISTHMUS_OK)) << cpl.err();
  const int ls = world_size(), lr = cpl.local_rank();
  const std::vector<int> pig = apple(n, ls, lr), dig = points(n, ls, (lr + 1) % ls);
  const std::vector<int64_t> pidx = indices_of(pig), didx = indices_of(dig);
  const int phys = var(cpl, "PHYS", partition(cpl, n, pig, "phys"), ISTHMUS_VAR_OUT);
  const int dyn = var(cpl, "DYN", partition(cpl, n, dig, "dyn"), ISTHMUS_VAR_IN);
  ASSERT_TRUE(all_ranks(isthmus_coupler_enddef(cpl.c) == ISTHMUS_OK)) << cpl.err();
  int64_t codes = 0, wrong = 0;
  for (int t = 0; t < runtime; ++t) {
    const bool coupling = t % period == 0;
    std::vector<double> x(pidx.size()), y(didx.size(), -1.0);
    for (size_t i = 0; i < pidx.size(); ++i) x[i] = value(pidx[i], t);
    int info = -1;
    EXPECT_EQ(isthmus_coupler_put(cpl.c, phys, t, x.data(), &info), ISTHMUS_OK) << cpl.err();
    codes += info != (coupling ? ISTHMUS_COUPLING_SENTOUT : ISTHMUS_COUPLING_OK);
    EXPECT_EQ(isthmus_coupler_get(cpl.c, dyn, t, y.data(), &info), ISTHMUS_OK) << cpl.err();
    codes += info != (coupling ? ISTHMUS_COUPLING_RECVOUT : ISTHMUS_COUPLING_OK);
    for (size_t i = 0; i < didx.size() && coupling; ++i) wrong += y[i] != value(didx[i], t);
  }
  EXPECT_EQ(isthmus_coupler_terminate(cpl.c), ISTHMUS_OK) << cpl.err();
  EXPECT_TRUE(all_ranks(codes == 0)) << codes << " wrong info codes";
  EXPECT_EQ(total(wrong), 0) << "wrong values";
  MPI_Barrier(MPI_COMM_WORLD);
  if (world_rank() != 0) return;
  std::vector<double> expected;
  for (int t = 0; t < runtime; t += period)
    for (int64_t g = 0; g < n; ++g) expected.push_back(value(g, t));
  for (const std::string name : {"PHYS", "DYN"}) {
    const std::string file = dir / (name + "_model_01.nc");
    ASSERT_TRUE(std::filesystem::exists(file)) << file;
    std::vector<size_t> dims;
    EXPECT_EQ(read_nc<int>(file, "time"), (std::vector<int>{0, 2, 4, 6})) << file;
    EXPECT_TRUE(same_bits(read_nc<double>(file, name, &dims), expected)) << file;
    EXPECT_EQ(dims, (std::vector<size_t>{4, ny, nx})) << file;
  }
}

// ---- 7. configuration errors ---------------------------------------------------------------

// An unknown LOCTRANS word fails isthmus_coupler_create on every rank with ISTHMUS_ERR_CONFIG,
// the message naming the file and the line; a field of the namcouple that no component defines
// fails enddef on every rank, naming the field, the line and the components.
TEST(CapiFeatures, ConfigurationErrorsSurfaceThroughTheCApi) {
  Watchdog w("capi features configuration errors");
  Layout L;
  RunDir dir("config");
  {
    const std::string text = head(1, 8) + "SST SSTA 1 2 1 rst.nc EXPORTED\n10 1 10 1 ga gb\nR 0 R 0\nLOCTRANS\nAVRAGE\n$END\n";
    const std::string nam = dir.write("namcouple.bad", text);
    Cpl cpl;
    const int rc = create(cpl, L.component(), nam, dir.path());
    EXPECT_TRUE(same_code_everywhere(rc, ISTHMUS_ERR_CONFIG)) << cpl.err();
    EXPECT_EQ(std::string(cpl.err()),
              "isthmus: rank " + std::to_string(world_rank()) + ": isthmus_coupler_create: " + nam + ":" +
                  std::to_string(line_of(text, "AVRAGE")) +
                  ": LOCTRANS: unknown time operation \"AVRAGE\" (expected INSTANT, ACCUMUL, AVERAGE, T_MIN or T_MAX)");
    EXPECT_EQ(isthmus_coupler_enddef(cpl.c), ISTHMUS_ERR_ARG);  // the failed coupler refuses
  }
  {
    const std::string text = head(1, 8) + "SST MISSING 1 2 0 rst.nc EXPORTED\n10 1 10 1 ga gb\nR 0 R 0\n$END\n";
    const std::string nam = dir.write("namcouple.missing", text);
    Cpl cpl;
    ASSERT_TRUE(all_ranks(create(cpl, L.component(), nam, dir.path()) == ISTHMUS_OK)) << cpl.err();
    const int n = 10;
    if (L.src()) var(cpl, "SST", partition(cpl, n, apple(n, L.local_size(), L.local_rank()), "ga"), ISTHMUS_VAR_OUT);
    if (L.dst()) var(cpl, "SSTA", partition(cpl, n, points(n, L.local_size(), L.local_rank()), "gb"), ISTHMUS_VAR_IN);
    const int rc = isthmus_coupler_enddef(cpl.c);
    EXPECT_TRUE(same_code_everywhere(rc, ISTHMUS_ERR_CONFIG)) << cpl.err();
    EXPECT_EQ(std::string(cpl.err()),
              "isthmus: rank " + std::to_string(cpl.local_rank()) + ": isthmus_coupler_enddef: " + nam + ":" +
                  std::to_string(line_of(text, "SST MISSING")) +
                  ": field MISSING (destination of entry SST) is declared in by no component (components: " +
                  (L.two() ? "ocean, atmos" : "both") + ")");
  }
}

// ---- 8. a partner that never comes -------------------------------------------------------

// The ocean puts at date 0 only; the atmosphere's get at date 2 fails after its 0.3 s timeout
// with ISTHMUS_ERR_TIMEOUT on every atmosphere rank (no hang), naming the entry, the date and
// the partner component. The date 0 exchange is made to wait for nothing (the ocean has put
// before the atmosphere gets), and the ocean, without a timeout, just terminates: only the
// missing put can time out, however loaded the machine.
TEST(CapiFeatures, AGetWhosePutNeverComesTimesOut) {
  Watchdog w("capi features timeout");
  Layout L;
  if (!L.two()) GTEST_SKIP() << "needs two components";
  RunDir dir("timeout");
  const int n = 40;
  const std::string text = head(1, 8) + "SST SSTA 1 2 0 rst.nc EXPORTED\n40 1 40 1 ga gb\nR 0 R 0\n$END\n";
  const std::string nam = dir.write("namcouple", text);
  Cpl cpl;
  ASSERT_TRUE(all_ranks(create(cpl, L.component(), nam, dir.path(), L.dst() ? 0.3 : 0.0) == ISTHMUS_OK))
      << cpl.err();
  const std::vector<int> ig = L.src() ? apple(n, L.local_size(), L.local_rank()) : points(n, L.local_size(), L.local_rank());
  const int v = var(cpl, L.src() ? "SST" : "SSTA", partition(cpl, n, ig, L.src() ? "ga" : "gb"),
                    L.src() ? ISTHMUS_VAR_OUT : ISTHMUS_VAR_IN);
  ASSERT_TRUE(all_ranks(isthmus_coupler_enddef(cpl.c) == ISTHMUS_OK)) << cpl.err();
  std::vector<double> x(indices_of(ig).size(), 1.0);
  int info = -1, rc = ISTHMUS_OK;
  double seconds = 0;
  if (L.src()) {
    EXPECT_EQ(isthmus_coupler_put(cpl.c, v, 0, x.data(), &info), ISTHMUS_OK) << cpl.err();
    EXPECT_EQ(info, ISTHMUS_COUPLING_SENT);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (L.dst()) {
    EXPECT_EQ(isthmus_coupler_get(cpl.c, v, 0, x.data(), &info), ISTHMUS_OK) << cpl.err();
    EXPECT_EQ(info, ISTHMUS_COUPLING_RECVD);
    const auto t0 = std::chrono::steady_clock::now();
    rc = isthmus_coupler_get(cpl.c, v, 2, x.data(), &info);
    seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  } else {
    EXPECT_EQ(isthmus_coupler_terminate(cpl.c), ISTHMUS_OK) << cpl.err();
  }
  const std::vector<int> codes = codes_of_all_ranks(rc);
  for (int r = 0; r < L.size; ++r)
    EXPECT_EQ(codes[r], r < L.nocean ? ISTHMUS_OK : ISTHMUS_ERR_TIMEOUT) << "world rank " << r;
  // every atmosphere rank checks its own message; rank 0 (an ocean rank) reports the count
  int64_t bad = 0;
  if (L.dst()) {
    EXPECT_GE(seconds, 0.29);
    EXPECT_LT(seconds, 10.0);
    bad += seconds < 0.29 || seconds >= 10.0;
    const std::string msg = cpl.err();
    const std::string start = "isthmus: rank " + std::to_string(cpl.local_rank()) +
                              ": isthmus_coupler_get: get of entry SST (line " +
                              std::to_string(line_of(text, "SST SSTA")) +
                              ") at date 2 in component atmos: its data never came from ocean";
    EXPECT_EQ(msg.substr(0, start.size()), start) << msg;
    EXPECT_NE(msg.find("timed out after"), std::string::npos) << msg;
    EXPECT_NE(msg.find("of component ocean (world rank "), std::string::npos) << msg;
    bad += msg.substr(0, start.size()) != start || msg.find("timed out after") == std::string::npos ||
           msg.find("of component ocean (world rank ") == std::string::npos;
  }
  EXPECT_EQ(total(bad), 0) << "atmosphere ranks with a wrong wait time or message";
}

// ---- 9. several components in one communicator (oasis_get_multi_intracomm) ---------------

// Three components dealt round robin over the world (rank % 3: ice, atmos, ocean; numbered by
// their first world rank, so ice 0, atmos 1, ocean 2, not in the order of their names), the
// ocean's coupling communicator in reverse rank order: the joined communicator holds the listed
// components in order of their number, each in its local order, and root_ranks points at each
// one's first local rank. Wrong lists fail on the rank that gives them, before any collective,
// naming what is wrong.
TEST(CapiFeatures, MultiIntracommJoinsComponentsInTheirOrder) {
  Watchdog w("capi features multi intracomm");
  const int me = world_rank(), size = world_size();
  if (size < 3) GTEST_SKIP() << "needs three components";
  RunDir dir("multi");
  const std::string nam = dir.write("namcouple", head(1, 2) +
      "I_T O_T 1 1 0 rst.nc EXPORTED\n10 1 10 1 gi go\nR 0 R 0\n$END\n");
  const char* names[3] = {"ice", "atmos", "ocean"};
  const int comp = me % 3;
  std::vector<int> count(3, 0);
  for (int r = 0; r < size; ++r) ++count[r % 3];
  Cpl cpl;
  ASSERT_TRUE(all_ranks(create(cpl, names[comp], nam, dir.path()) == ISTHMUS_OK)) << cpl.err();
  MPI_Comm full = MPI_COMM_NULL, reversed = MPI_COMM_NULL;
  ASSERT_EQ(isthmus_coupler_get_local_comm(cpl.c, &full), ISTHMUS_OK);
  int full_rank = 0;
  MPI_Comm_rank(full, &full_rank);
  if (comp == 2) {
    MPI_Comm_split(full, 0, -full_rank, &reversed);
    ASSERT_EQ(isthmus_coupler_set_couplcomm(cpl.c, reversed), ISTHMUS_OK) << cpl.err();
  }
  const int n = 10;
  if (comp == 0) var(cpl, "I_T", partition(cpl, n, apple(n, count[0], full_rank), "gi"), ISTHMUS_VAR_OUT);
  if (comp == 2) {
    int lr = 0;
    MPI_Comm_rank(reversed, &lr);
    var(cpl, "O_T", partition(cpl, n, apple(n, count[2], lr), "go"), ISTHMUS_VAR_IN);
  }
  ASSERT_EQ(isthmus_coupler_enddef(cpl.c), ISTHMUS_OK) << cpl.err();
  const int local_rank = cpl.local_rank();

  // who is where in a joined communicator: (component, local rank) of each of its ranks
  auto members = [&](MPI_Comm c) {
    int s = 0;
    MPI_Comm_size(c, &s);
    std::vector<int> mine = {comp, local_rank}, all(2 * static_cast<size_t>(s));
    MPI_Allgather(mine.data(), 2, MPI_INT, all.data(), 2, MPI_INT, c);
    return all;
  };
  auto expected = [&](const std::vector<int>& comps) {
    std::vector<int> e;
    for (int c : comps)
      for (int r = 0; r < count[c]; ++r) e.insert(e.end(), {c, r});
    return e;
  };
  // ice and ocean, listed out of order with a blank between (C names)
  if (comp != 1) {
    const char* list[3] = {"ocean", "  ", "ice"};
    MPI_Comm joined = MPI_COMM_NULL;
    int roots[3] = {7, 7, 7};
    ASSERT_EQ(isthmus_coupler_get_multi_intracomm(cpl.c, 3, list, &joined, roots), ISTHMUS_OK) << cpl.err();
    EXPECT_EQ(members(joined), expected({0, 2}));
    EXPECT_EQ(std::vector<int>(roots, roots + 3), (std::vector<int>{count[0], -1, 0}));
    MPI_Comm_free(&joined);
  }
  // all three, as Fortran passes them (blank-padded, fixed length)
  {
    const std::string list = "atmos   ocean   ice     ";
    MPI_Fint joined = 0;
    int roots[3] = {7, 7, 7};
    ASSERT_EQ(isthmus_coupler_get_multi_intracomm_f(cpl.c, 3, 8, list.c_str(), &joined, roots), ISTHMUS_OK)
        << cpl.err();
    MPI_Comm c = MPI_Comm_f2c(joined);
    EXPECT_EQ(members(c), expected({0, 1, 2}));
    EXPECT_EQ(std::vector<int>(roots, roots + 3), (std::vector<int>{count[0], count[0] + count[1], 0}));
    MPI_Comm_free(&c);
  }
  // an intercommunicator between ice and the ocean, whose coupling communicator is reversed:
  // both sides take each component's lowest world rank as its leader (the ocean's rank 0 is
  // its highest), or they would wait for leaders that never meet
  if (comp != 1) {
    MPI_Comm inter = MPI_COMM_NULL;
    ASSERT_EQ(isthmus_coupler_get_intercomm(cpl.c, comp == 0 ? "ocean" : "ice", &inter), ISTHMUS_OK)
        << cpl.err();
    int remote = 0;
    MPI_Comm_remote_size(inter, &remote);
    EXPECT_EQ(remote, count[comp == 0 ? 2 : 0]);
    MPI_Comm_free(&inter);
  }
  // wrong lists: each fails alone, with nothing to wait for
  // (errors name the rank of the whole component)
  const std::string where = "isthmus: rank " + std::to_string(full_rank) + ": isthmus_coupler_get_multi_intracomm: ";
  MPI_Comm none = MPI_COMM_NULL;
  const char* alone[1] = {names[comp]};
  EXPECT_EQ(isthmus_coupler_get_multi_intracomm(cpl.c, 1, alone, &none, nullptr), ISTHMUS_ERR_ARG);
  EXPECT_EQ(std::string(cpl.err()), where + "get_multi_intracomm: the list must name at least two components (it names 1)");
  const char* twice[3] = {names[comp], names[(comp + 1) % 3], names[comp]};
  EXPECT_EQ(isthmus_coupler_get_multi_intracomm(cpl.c, 3, twice, &none, nullptr), ISTHMUS_ERR_ARG);
  EXPECT_EQ(std::string(cpl.err()), where + "get_multi_intracomm: component \"" + names[comp] +
                                        "\" is listed twice (entry 3)");
  const char* unknown[2] = {names[comp], "land"};
  EXPECT_EQ(isthmus_coupler_get_multi_intracomm(cpl.c, 2, unknown, &none, nullptr), ISTHMUS_ERR_ARG);
  EXPECT_EQ(std::string(cpl.err()), where + "get_multi_intracomm: no component is named \"land\" "
                                            "(components: ice, atmos, ocean)");
  const char* others[2] = {names[(comp + 1) % 3], names[(comp + 2) % 3]};
  EXPECT_EQ(isthmus_coupler_get_multi_intracomm(cpl.c, 2, others, &none, nullptr), ISTHMUS_ERR_ARG);
  EXPECT_EQ(std::string(cpl.err()), where + "get_multi_intracomm: the list must name this rank's own component, " +
                                        names[comp]);
  EXPECT_EQ(none, MPI_COMM_NULL);
  EXPECT_EQ(isthmus_coupler_terminate(cpl.c), ISTHMUS_OK) << cpl.err();
  if (reversed != MPI_COMM_NULL) MPI_Comm_free(&reversed);
}
