// Mapping benchmark: SCRIP weights read in slabs and applied between two decompositions as one
// redistribution fused with the multiplication (isthmus::remap::Mapping), beside the unfused
// two-phase path OASIS3-MCT takes (rearrange within the source ranks, multiply, transfer).
//
//   bench_mapping [--case orca2-lmdz|synthetic|memory (a list)] [--weights bilinear,conserv]
//                 [--src-ranks A] [--dst-ranks B] [--src-pattern apple|box]
//                 [--pattern block|roundrobin] [--side dst,src,auto] [--fused both|yes|no]
//                 [--fields 1,10] [--levels 1] [--reps 10] [--setup-reps 3] [--method auto]
//                 [--warmup 5] [--max-warmup 500] [--node-stage auto,off,on (a list)]
//                 [--node-ranks 0]
//                 [--src-nx 1442] [--src-ny 1021] [--dst-points 2000000] [--workdir /tmp]
//                 [--file PATH]
//
// Ranks: the source on [0, A) and the destination on [A, A + B) when A + B <= P (two
// components on disjoint ranks; default A = P / 2, B = P - A), otherwise the destination on
// [P - B, P) (with one rank both are on rank 0). Every rank reads a slab of the weights file.
// Source decompositions: apple (OASIS: bands of whole rows) or box (2-D blocks); destination:
// block (contiguous ranges) or roundrobin.
//
// Cases:
//   orca2-lmdz  OASIS's ORCA2 (182 x 149) -> LMDZ (96 x 72) files of tests/data/orca2-lmdz
//               (--weights bilinear: rmp_torc_to_lmdz_BILINEAR.nc, conserv:
//               rmp_torc_to_lmdz_CONSERV_FRACNNEI.nc), or any SCRIP file given by --file.
//   synthetic   a src-nx x src-ny source (ORCA025's 1442 x 1021 by default) and a dst-points
//               destination (2000 x 1000 by default), 4 bilinear links per destination point
//               to the 4 source points around its position (positive weights summing to 1),
//               written by rank 0 as a SCRIP file in --workdir (reused when one with the same
//               parameters is there), then read and mapped like orca2-lmdz. A linear source
//               field is reproduced exactly by bilinear weights: "errors" counts the
//               destination values that differ from it by more than 1e-7.
//   memory      reads a synthetic file (default 2,500,000 x 4 = 10^7 links) and reports every
//               rank's peak resident memory (VmHWM, reset before the read through
//               /proc/self/clear_refs) over its resident size before the read, against its
//               share of the file (links / P * 24 bytes: src, dst, weight of 8 bytes each);
//               then the same for building the mapping from those links.
//
// For every side, number of fields and fused/unfused variant, one JSON object: set-up
// (read_scrip_weights + the Mapping constructor, median of --setup-reps) and apply (median,
// min, max of --reps), the variants alternating rep by rep so that they see the same machine.
// With a list of node stages (MappingOptions::node_stage), one fused variant per entry, the
// first one's time in the unfused record's fused_over_unfused, each one's in its own
// over_unfused. A side the library does not have yet prints an object with "error" and the run goes on.
// Method auto is the transfer layer's adaptive executor: its first exchanges profile plans, so
// the warm-up applies until it has decided (the plan is reported), then --warmup more.
#include <mpi.h>
#include <netcdf.h>

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <sys/stat.h>
#include <vector>

#include "base/agreement.h"
#include "base/error.h"
#include "base/hash.h"
#include "common/bench_util.h"
#include "common/grid_decompositions.h"
#include "index/index_list.h"
#include "remap/mapping.h"
#include "remap/scrip_weights.h"
#include "transfer/adaptive.h"
#include "transfer/plan.h"

namespace {

using isthmus::Agreement;
using isthmus::IndexList;
using isthmus::remap::LinkSlab;
using isthmus::remap::Mapping;
using isthmus::remap::MappingOptions;
using isthmus::remap::Side;
using isthmus::remap::WeightsExpect;
using isthmus::remap::WeightsInfo;

#ifdef ISTHMUS_SMPI
constexpr bool kSimulated = true;
#else
constexpr bool kSimulated = false;
#endif

using isthmus::mix64;

// ---- ranks and decompositions ------------------------------------------------------------

struct Layout {
  int nsrc = 1, ndst = 1, s0 = 0, d0 = 0;
  std::string ranksets;
  bool has_src = false, has_dst = false;
  int ksrc = -1, kdst = -1;  // this rank's part number on each side
};

Layout make_layout(int me, int size, int nsrc, int ndst) {
  Layout l;
  if (nsrc <= 0) nsrc = size == 1 ? 1 : size / 2;
  if (ndst <= 0) ndst = size == 1 ? 1 : size - nsrc;
  l.nsrc = nsrc;
  l.ndst = ndst;
  l.d0 = nsrc + ndst <= size ? nsrc : size - ndst;
  l.ranksets = nsrc + ndst <= size ? "disjoint" : (nsrc == size && ndst == size ? "identical" : "overlapping");
  l.has_src = me >= l.s0 && me < l.s0 + nsrc;
  l.has_dst = me >= l.d0 && me < l.d0 + ndst;
  if (l.has_src) l.ksrc = me - l.s0;
  if (l.has_dst) l.kdst = me - l.d0;
  return l;
}

IndexList segment(int64_t n, int64_t start, int64_t len) {
  if (len <= 0) return IndexList::from_segments(n, nullptr, nullptr, 0);
  return IndexList::from_segments(n, &start, &len, 1);
}

// The source part: apple (bands of whole rows, OASIS's apple of a row-major grid) or box.
IndexList source_part(const std::string& pattern, int64_t nx, int64_t ny, int parts, int part) {
  if (pattern == "box") {
    auto v = bench::block2d(nx, ny, parts, part, false);
    return IndexList::from_indices(nx * ny, v.data(), static_cast<int64_t>(v.size()));
  }
  auto rows = bench::block1d(ny, parts, part);
  return segment(nx * ny, rows.first * nx, rows.second * nx);
}

// The destination part: block (contiguous ranges) or roundrobin.
IndexList destination_part(const std::string& pattern, int64_t n, int parts, int part) {
  if (pattern == "roundrobin") {
    auto v = bench::roundrobin(n, parts, part);
    return IndexList::from_indices(n, v.data(), static_cast<int64_t>(v.size()));
  }
  auto b = bench::block1d(n, parts, part);
  return segment(n, b.first, b.second);
}

// ---- the synthetic matrix ----------------------------------------------------------------

// A destination of n points laid out row by row on a dnx x dny grid about twice as wide as
// high (the last row may be partial), each point's position mapped onto the source grid.
struct Synthetic {
  int64_t snx = 0, sny = 0, n = 0, dnx = 0, dny = 0;

  Synthetic(int64_t src_nx, int64_t src_ny, int64_t points) : snx(src_nx), sny(src_ny), n(points) {
    dny = std::max<int64_t>(1, std::llround(std::sqrt(static_cast<double>(n) / 2.0)));
    dnx = (n + dny - 1) / dny;
  }
  int64_t links() const { return 4 * n; }
  // Source coordinates of destination point d: its cell (i0, j0) and offsets in (0, 1).
  void position(int64_t d, int64_t& i0, int64_t& j0, double& fx, double& fy) const {
    const double x = (static_cast<double>(d % dnx) + 0.5) * static_cast<double>(snx) / static_cast<double>(dnx) - 0.5;
    const double y = (static_cast<double>(d / dnx) + 0.5) * static_cast<double>(sny) / static_cast<double>(dny) - 0.5;
    i0 = std::clamp<int64_t>(static_cast<int64_t>(std::floor(x)), 0, snx - 2);
    j0 = std::clamp<int64_t>(static_cast<int64_t>(std::floor(y)), 0, sny - 2);
    fx = std::clamp(x - static_cast<double>(i0), 1e-3, 1 - 1e-3);
    fy = std::clamp(y - static_cast<double>(j0), 1e-3, 1 - 1e-3);
  }
  // Link k (destination point k / 4, corner k % 4).
  void link(int64_t k, int64_t& src, int64_t& dst, double& w) const {
    int64_t i0, j0;
    double fx, fy;
    dst = k / 4;
    position(dst, i0, j0, fx, fy);
    const int cx = static_cast<int>(k % 2), cy = static_cast<int>((k / 2) % 2);
    src = (j0 + cy) * snx + i0 + cx;
    w = (cx ? fx : 1 - fx) * (cy ? fy : 1 - fy);
  }
  // What the links give for the linear source field value(g) = i + 1000 j + f.
  double expected(int64_t d, int f) const {
    int64_t i0, j0;
    double fx, fy;
    position(d, i0, j0, fx, fy);
    return static_cast<double>(i0) + fx + 1000.0 * (static_cast<double>(j0) + fy) + f;
  }
  std::string title() const {
    return "isthmus bench_mapping synthetic v1 " + std::to_string(snx) + "x" + std::to_string(sny) +
           " -> " + std::to_string(n);
  }
  std::string file(const std::string& workdir) const {
    return workdir + "/isthmus_bench_mapping_" + std::to_string(snx) + "x" + std::to_string(sny) + "_" +
           std::to_string(n) + ".nc";
  }
};

// True when `path` is a complete file written for these parameters (its title and sizes).
bool synthetic_file_ok(const std::string& path, const Synthetic& s) {
  int nc = -1;
  if (nc_open(path.c_str(), NC_NOWRITE, &nc) != NC_NOERR) return false;
  bool ok = true;
  auto dim = [&](const char* name) -> int64_t {
    int id;
    size_t len = 0;
    if (nc_inq_dimid(nc, name, &id) != NC_NOERR || nc_inq_dimlen(nc, id, &len) != NC_NOERR) return -1;
    return static_cast<int64_t>(len);
  };
  ok = dim("num_links") == s.links() && dim("src_grid_size") == s.snx * s.sny && dim("dst_grid_size") == s.n;
  size_t len = 0;
  std::string title;
  if (ok && nc_inq_attlen(nc, NC_GLOBAL, "title", &len) == NC_NOERR) {
    title.resize(len);
    ok = nc_get_att_text(nc, NC_GLOBAL, "title", title.data()) == NC_NOERR && title == s.title();
  } else {
    ok = false;
  }
  nc_close(nc);
  return ok;
}

// Rank 0 writes the file (streaming, 1 << 18 links at a time) unless it is there already;
// the others wait. Returns its path, the same on every rank.
std::string synthetic_file(MPI_Comm comm, int me, const Synthetic& s, const std::string& workdir) {
  const std::string path = s.file(workdir);
  int status[2] = {0, 0};  // written, failed
  double seconds = 0;
  std::string error;
  if (me == 0 && !synthetic_file_ok(path, s)) {
    double t0 = MPI_Wtime();
    const std::string tmp = path + ".part";
    ::mkdir(workdir.c_str(), 0755);  // may exist already
    try {
      WeightsInfo info;
      info.title = s.title();
      info.map_method = "Bilinear remapping (synthetic)";
      info.normalization = "no norm";
      info.conventions = "SCRIP";
      info.num_links = s.links();
      info.num_wgts = 1;
      info.src_grid_size = s.snx * s.sny;
      info.dst_grid_size = s.n;
      info.src_grid_dims = {s.snx, s.sny};
      info.dst_grid_dims = s.dnx * s.dny == s.n ? std::vector<int64_t>{s.dnx, s.dny} : std::vector<int64_t>{s.n};
      isthmus::remap::ScripWeightsWriter w(tmp, info);
      const int64_t chunk = int64_t(1) << 18;
      std::vector<int64_t> src(chunk), dst(chunk);
      std::vector<double> wt(chunk);
      for (int64_t k0 = 0; k0 < s.links(); k0 += chunk) {
        const int64_t m = std::min(chunk, s.links() - k0);
        for (int64_t i = 0; i < m; ++i) s.link(k0 + i, src[i], dst[i], wt[i]);
        w.append(src.data(), dst.data(), wt.data(), m);
      }
      w.close();
      if (std::rename(tmp.c_str(), path.c_str()) != 0) throw isthmus::Error(ISTHMUS_ERR_FILE, "cannot rename " + tmp);
      status[0] = 1;
    } catch (const std::exception& e) {
      status[1] = 1;
      error = e.what();
    }
    seconds = MPI_Wtime() - t0;
  }
  MPI_Bcast(status, 2, MPI_INT, 0, comm);
  if (status[1]) {
    if (me == 0) std::fprintf(stderr, "bench_mapping: writing %s: %s\n", path.c_str(), error.c_str());
    MPI_Abort(comm, 1);
  }
  if (me == 0)
    std::fprintf(stderr, "bench_mapping: %s %s (%" PRId64 " links)%s\n", status[0] ? "wrote" : "reusing",
                 path.c_str(), s.links(), status[0] ? (" in " + std::to_string(seconds) + " s").c_str() : "");
  return path;
}

// ---- memory -------------------------------------------------------------------------------

// A field of /proc/self/status in bytes (VmRSS, VmHWM), -1 when unavailable.
double status_bytes(const char* key) {
  FILE* f = std::fopen("/proc/self/status", "r");
  if (!f) return -1;
  char line[256];
  double v = -1;
  const size_t n = std::strlen(key);
  while (std::fgets(line, sizeof line, f))
    if (std::strncmp(line, key, n) == 0 && line[n] == ':') {
      v = 1024.0 * std::strtod(line + n + 1, nullptr);
      break;
    }
  std::fclose(f);
  return v;
}

// Resets VmHWM to the current resident size (Linux >= 4.0); false if it could not.
bool reset_peak() {
  FILE* f = std::fopen("/proc/self/clear_refs", "w");
  if (!f) return false;
  bool ok = std::fputs("5", f) >= 0;
  ok = std::fclose(f) == 0 && ok;
  return ok;
}

std::string json_array(const std::vector<double>& v, double scale = 1.0) {
  std::string s = "[";
  char b[64];
  for (size_t i = 0; i < v.size(); ++i) {
    std::snprintf(b, sizeof b, "%.6g", v[i] * scale);
    s += (i ? ", " : "") + std::string(b);
  }
  return s + "]";
}

std::vector<double> gather(MPI_Comm comm, double x, int size) {
  std::vector<double> all(size);
  MPI_Gather(&x, 1, MPI_DOUBLE, all.data(), 1, MPI_DOUBLE, 0, comm);
  return all;
}

// ---- the timed mapping cases ----------------------------------------------------------------

struct Setting {
  std::string kase, weights, path;
  const Synthetic* synthetic = nullptr;  // data check for the synthetic case
  int64_t src_nx = 0, src_ny = 0, dst_n = 0;
  std::string src_pattern, dst_pattern;
  isthmus::Method method = isthmus::Method::Auto;
  int levels = 1, reps = 10, setup_reps = 3, warmup = 5, max_warmup = 500;
  std::vector<isthmus::remap::NodeStage> node_stages = {isthmus::remap::NodeStage::Auto};
  int node_ranks = 0;
};

struct Variant {
  bool fused = true;
  isthmus::remap::NodeStage node_stage_option = isthmus::remap::NodeStage::Auto;
  std::unique_ptr<Mapping> m;
  std::vector<double> setup, read, apply;
  std::string error;
  std::string checksum;
  std::string chosen;  // the side the mapping took (auto picks one)
  std::string plan;    // the adaptive executor's plan (method auto)
  int warmup_applies = 0, profiling = -1;
  int64_t errors = 0;
  int64_t links_applied = 0, needed_points = 0, null_links = 0, file_links = 0;
  int64_t messages = 0, bytes = 0;
  bool node_stage = false;
  int64_t first_points = 0, node_messages = 0, node_bytes = 0;  // the node stage's
  double start_skew = 0;  // the largest spread of the ranks' start times over the timed applies
};

// One sample with time_collective's rule (from the last rank's start to the last rank's end).
template <typename Fn>
double timed(MPI_Comm comm, Fn&& fn) {
  return bench::time_collective(comm, 1, fn).median;
}

// The same, also giving how far apart the ranks left the barrier (last start - first start).
// Work a rank does before the last rank starts is not in the sample: with a skew as long as an
// apply, a phase among the early ranks (the unfused path's rearrangement within the source
// ranks) disappears from it. SMPI's default linear barrier releases rank r about r x 0.5 us
// after rank 1 (docs/simulation.md), which made the unfused path look 2-4 x faster than the
// fused one at 512 + 512 and 1024 + 1024 ranks (docs/results/mapping.md).
template <typename Fn>
double timed(MPI_Comm comm, Fn&& fn, double& skew) {
  const isthmus::GlobalClock& clock = isthmus::GlobalClock::of(comm);
  MPI_Barrier(comm);
  const double t0 = clock.now();
  fn();
  double local[3] = {t0, clock.now(), -t0}, last[3];
  MPI_Allreduce(local, last, 3, MPI_DOUBLE, MPI_MAX, comm);
  skew = last[0] + last[2];
  return last[1] - last[0];
}

void run_side(MPI_Comm comm, int me, int size, const Setting& s, const Layout& lay, const IndexList* src,
              const IndexList* dst, Side side, int nfields, const std::vector<bool>& fused_list) {
  std::vector<Variant> vs;
  for (bool fused : fused_list)
    for (isthmus::remap::NodeStage stage : fused ? s.node_stages : std::vector{isthmus::remap::NodeStage::Off}) {
      vs.emplace_back();
      vs.back().fused = fused;
      vs.back().node_stage_option = stage;
    }
  MappingOptions opt;
  opt.side = side;
  opt.method = s.method;
  opt.nlevels.assign(nfields, s.levels);
  opt.node_ranks = s.node_ranks;
  WeightsExpect expect;
  expect.src_grid_size = s.src_nx * s.src_ny;
  expect.dst_grid_size = s.dst_n;

  // Set-up: read the file and build the mapping, the variants alternating.
  for (int r = 0; r < s.setup_reps; ++r)
    for (Variant& v : vs) {
      if (!v.error.empty()) continue;
      double read_local = 0;
      try {
        double t = timed(comm, [&] {
          v.m.reset();
          double t0 = MPI_Wtime();
          WeightsInfo info;
          LinkSlab slab = isthmus::remap::read_scrip_weights(comm, s.path, expect, &info);
          read_local = MPI_Wtime() - t0;
          v.null_links = slab.null_links;
          v.file_links = info.num_links;
          MappingOptions o = opt;
          o.fused = v.fused;
          o.node_stage = v.node_stage_option;
          Agreement agreement;
          v.m = std::make_unique<Mapping>(comm, src, dst, info.src_grid_size, info.dst_grid_size,
                                          isthmus::remap::links_of(slab, info.num_wgts), o, agreement);
        });
        double read_max = 0;
        MPI_Allreduce(&read_local, &read_max, 1, MPI_DOUBLE, MPI_MAX, comm);
        v.setup.push_back(t);
        v.read.push_back(read_max);
      } catch (const isthmus::Error& e) {
        v.error = e.what();
        v.m.reset();
      }
    }

  // Fields: value(g) = i + 1000 j + f on the source grid, level-major.
  const int64_t ns = src ? src->size() : 0, nd = dst ? dst->size() : 0;
  const bool shared = bench::buffers_are_shared();
  std::vector<double*> in(nfields), out(nfields), ref(nfields);
  const std::vector<int64_t> src_idx = (src && !shared) ? src->indices() : std::vector<int64_t>{};
  const std::vector<int64_t> dst_idx = (dst && !shared) ? dst->indices() : std::vector<int64_t>{};
  for (int f = 0; f < nfields; ++f) {
    in[f] = static_cast<double*>(bench::alloc_field(sizeof(double) * ns * s.levels));
    out[f] = static_cast<double*>(bench::alloc_field(sizeof(double) * nd * s.levels));
    if (!shared)
      for (int l = 0; l < s.levels; ++l)
        for (int64_t p = 0; p < ns; ++p) {
          const int64_t g = src_idx[p];
          in[f][l * ns + p] = static_cast<double>(g % s.src_nx) + 1000.0 * static_cast<double>(g / s.src_nx) + f + 0.5 * l;
        }
  }
  bool any = false;
  for (Variant& v : vs) any = any || v.m;
  if (any) {
    // Warm-up: method auto is the adaptive executor, whose first exchanges profile plans; apply
    // until its decision (collective: all ranks take it together), then --warmup more (the
    // unfused path's inner redistribution, not reachable from here, spans the same ranks and
    // profiles as long).
    for (Variant& v : vs) {
      if (!v.m) continue;
      auto* adaptive = dynamic_cast<isthmus::AdaptiveExecutor*>(&v.m->redist().executor(false));
      int n = 0;
      while (adaptive && !adaptive->decided() && n < s.max_warmup) {
        v.m->apply(in.data(), out.data());
        ++n;
      }
      for (int k = 0; k < s.warmup; ++k) v.m->apply(in.data(), out.data());
      v.warmup_applies = n + s.warmup;
      if (adaptive) {
        v.plan = adaptive->decided() ? isthmus::plan_string(adaptive->plan()) : "undecided";
        v.profiling = adaptive->profiling_exchanges();
      }
    }
    for (int r = 0; r < s.reps; ++r)
      for (Variant& v : vs)
        if (v.m) {
          double skew = 0;
          v.apply.push_back(timed(comm, [&] { v.m->apply(in.data(), out.data()); }, skew));
          v.start_skew = std::max(v.start_skew, skew);
        }
  }
  // Per variant: counters of one traced apply, the results' checksum and data check.
  for (Variant& v : vs) {
    if (!v.m) continue;
    auto& tr = v.m->redist().trace();
    isthmus::Redist* node = v.m->node_redist();
    for (auto* t : {&tr, node ? &node->trace() : nullptr})
      if (t) {
        t->set_on(true);
        t->reset();
      }
    v.m->apply(in.data(), out.data());
    const auto c = tr.counters();
    const isthmus::trace::Counters nc = node ? node->trace().counters() : isthmus::trace::Counters{};
    tr.set_on(false);
    if (node) node->trace().set_on(false);
    int64_t loc[8] = {c.messages_sent, c.bytes_sent, v.m->info().local_links, v.m->info().needed_points,
                      v.null_links, v.m->info().first_points, nc.messages_sent, nc.bytes_sent}, sum[8];
    MPI_Allreduce(loc, sum, 8, MPI_INT64_T, MPI_SUM, comm);
    v.node_stage = v.m->info().node_stage;
    v.first_points = sum[5];
    v.node_messages = sum[6];
    v.node_bytes = sum[7];
    v.null_links = sum[4];
    v.chosen = isthmus::remap::side_name(v.m->info().side);
    v.messages = sum[0];
    v.bytes = sum[1];
    v.links_applied = sum[2];
    v.needed_points = sum[3];
    uint64_t h = 0;
    int64_t bad = 0;
    if (!shared)
      for (int f = 0; f < nfields; ++f)
        for (int l = 0; l < s.levels; ++l)
          for (int64_t p = 0; p < nd; ++p) {
            const double y = out[f][l * nd + p];
            uint64_t bits;
            std::memcpy(&bits, &y, 8);
            h += mix64(mix64(static_cast<uint64_t>(dst_idx[p]) * 4096 + f * 64 + l) ^ bits);
            if (s.synthetic && std::fabs(y - (s.synthetic->expected(dst_idx[p], f) + 0.5 * l)) > 1e-7) ++bad;
          }
    uint64_t gh = 0;
    MPI_Allreduce(&h, &gh, 1, MPI_UINT64_T, MPI_SUM, comm);
    MPI_Allreduce(&bad, &v.errors, 1, MPI_INT64_T, MPI_SUM, comm);
    char hex[32];
    std::snprintf(hex, sizeof hex, "%016" PRIx64, gh);
    v.checksum = shared ? "n/a (shared buffers)" : hex;
    if (shared || !s.synthetic) v.errors = -1;
  }
  for (int f = 0; f < nfields; ++f) {
    bench::free_field(in[f]);
    bench::free_field(out[f]);
  }

  if (me != 0) return;
  const Variant* fused = nullptr;
  const Variant* unfused = nullptr;
  for (const Variant& v : vs) {
    if (v.fused && v.m && !fused) fused = &v;
    if (!v.fused && v.m) unfused = &v;
  }
  for (const Variant& v : vs) {
    bench::Json j;
    j.str("bench", "mapping").str("case", s.kase).str("weights", s.weights).integer("ranks", size)
        .integer("src_ranks", lay.nsrc).integer("dst_ranks", lay.ndst).str("ranksets", lay.ranksets)
        .str("src_pattern", s.src_pattern).str("dst_pattern", s.dst_pattern)
        .integer("src_points", s.src_nx * s.src_ny).integer("dst_points", s.dst_n)
        .str("side", isthmus::remap::side_name(side)).boolean("fused", v.fused).integer("fields", nfields)
        .integer("levels", s.levels).str("method", isthmus::method_name(s.method));
    if (!v.error.empty()) {
      j.str("error", v.error).boolean("simulated", kSimulated).print();
      continue;
    }
    bench::Stats st = bench::stats(v.setup), rd = bench::stats(v.read), ap = bench::stats(v.apply);
    j.str("chosen_side", v.chosen).integer("links", v.file_links).integer("null_links", v.null_links).integer("links_applied", v.links_applied)
        .integer("needed_points", v.needed_points).num("setup_s", st.median).stats("setup_", st)
        .num("read_median_s", rd.median).stats("apply_", ap).num("apply_start_skew_max_s", v.start_skew)
        .integer("messages_per_apply", v.messages).integer("bytes_per_apply", v.bytes)
        .str("counted", v.fused ? (v.node_stage ? "the fused redistribution's first exchange (node_*: the node stage's)" : "the fused redistribution") : "the final transfer only (not the rearrangement within the source ranks)")
        .str("node_stage_option", isthmus::remap::node_stage_name(v.node_stage_option)).boolean("node_stage", v.node_stage)
        .integer("warmup_applies", v.warmup_applies).str("checksum", v.checksum);
    if (v.node_stage)
      j.integer("first_points", v.first_points).integer("node_messages_per_apply", v.node_messages)
          .integer("node_bytes_per_apply", v.node_bytes);
    if (!v.plan.empty()) j.str("adaptive_plan", v.plan).integer("profiling_exchanges", v.profiling);
    if (v.errors >= 0) j.integer("errors", v.errors);
    if (v.fused && unfused) j.num("over_unfused", ap.median / bench::stats(unfused->apply).median);
    if (!v.fused && fused) {
      if (!bench::buffers_are_shared()) j.boolean("same_bits_as_fused", v.checksum == fused->checksum);
      j.num("fused_over_unfused", bench::stats(fused->apply).median / ap.median);
    }
    j.boolean("simulated", kSimulated).print();
  }
}

std::vector<int> integers(const std::vector<std::string>& v) {
  std::vector<int> out;
  for (const auto& s : v) out.push_back(std::stoi(s));
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  auto [world, me, size] = bench::init(argc, argv);
  bench::Args args(argc, argv);
  auto usage = [&](const std::string& why) {
    if (me == 0) std::fprintf(stderr, "bench_mapping: %s\n", why.c_str());
    MPI_Abort(world, 2);
  };
  const auto cases = args.list("case", "orca2-lmdz");
  Layout lay = make_layout(me, size, static_cast<int>(args.integer("src-ranks", 0)),
                           static_cast<int>(args.integer("dst-ranks", 0)));
  if (lay.nsrc < 1 || lay.ndst < 1 || lay.nsrc > size || lay.ndst > size)
    usage("--src-ranks and --dst-ranks must be in [1, " + std::to_string(size) + "]");

  Setting base;
  base.src_pattern = args.get("src-pattern", "apple");
  base.dst_pattern = args.get("pattern", "block");
  if (base.src_pattern != "apple" && base.src_pattern != "box") usage("--src-pattern apple|box");
  if (base.dst_pattern != "block" && base.dst_pattern != "roundrobin") usage("--pattern block|roundrobin");
  const std::string method = args.get("method", "auto");
  bool known = false;
  for (int m = 0; m <= 5; ++m)
    if (method == isthmus::method_name(static_cast<isthmus::Method>(m))) {
      base.method = static_cast<isthmus::Method>(m);
      known = true;
    }
  if (!known) usage("unknown --method " + method);
  base.levels = static_cast<int>(args.integer("levels", 1));
  base.reps = static_cast<int>(args.integer("reps", 10));
  base.setup_reps = static_cast<int>(args.integer("setup-reps", 3));
  base.warmup = static_cast<int>(args.integer("warmup", 5));
  base.max_warmup = static_cast<int>(args.integer("max-warmup", 500));
  base.node_stages.clear();
  for (const auto& n : args.list("node-stage", "auto")) {
    if (n == "auto") base.node_stages.push_back(isthmus::remap::NodeStage::Auto);
    else if (n == "off") base.node_stages.push_back(isthmus::remap::NodeStage::Off);
    else if (n == "on") base.node_stages.push_back(isthmus::remap::NodeStage::On);
    else usage("--node-stage auto,off,on (a list)");
  }
  base.node_ranks = static_cast<int>(args.integer("node-ranks", 0));
  const std::string fused_arg = args.get("fused", "both");
  std::vector<bool> fused_list;
  if (fused_arg == "both") fused_list = {true, false};
  else if (fused_arg == "yes") fused_list = {true};
  else if (fused_arg == "no") fused_list = {false};
  else usage("--fused both|yes|no");
  std::vector<Side> sides;
  for (const auto& s : args.list("side", "dst,src,auto")) {
    if (s == "dst") sides.push_back(Side::Dst);
    else if (s == "src") sides.push_back(Side::Src);
    else if (s == "auto") sides.push_back(Side::Auto);
    else usage("unknown --side " + s);
  }
  const std::vector<int> fields = integers(args.list("fields", "1,10"));
  const std::string workdir = args.get("workdir", "/tmp");
  const int64_t src_nx = args.integer("src-nx", 1442), src_ny = args.integer("src-ny", 1021);
  if (src_nx < 2 || src_ny < 2) usage("--src-nx and --src-ny must be at least 2");

  // One mapping setting: decompositions from the file's grid shapes, then every side and
  // number of fields.
  auto run = [&](Setting s) {
    WeightsInfo info;
    {
      LinkSlab warm = isthmus::remap::read_scrip_weights(world, s.path, WeightsExpect{}, &info);  // also warms the page cache
    }
    s.src_nx = info.src_grid_dims.size() == 2 ? info.src_grid_dims[0] : info.src_grid_size;
    s.src_ny = info.src_grid_dims.size() == 2 ? info.src_grid_dims[1] : 1;
    s.dst_n = info.dst_grid_size;
    std::unique_ptr<IndexList> src, dst;
    if (lay.has_src) src = std::make_unique<IndexList>(source_part(s.src_pattern, s.src_nx, s.src_ny, lay.nsrc, lay.ksrc));
    if (lay.has_dst) dst = std::make_unique<IndexList>(destination_part(s.dst_pattern, s.dst_n, lay.ndst, lay.kdst));
    for (Side side : sides)
      for (int nf : fields) run_side(world, me, size, s, lay, src.get(), dst.get(), side, nf, fused_list);
  };

  for (const std::string& kase : cases) {
    if (kase == "orca2-lmdz") {
      const std::string dir = std::string(ISTHMUS_SOURCE_DIR) + "/tests/data/orca2-lmdz/";
      std::vector<std::pair<std::string, std::string>> files;
      if (!args.get("file", "").empty()) files.push_back({"file", args.get("file", "")});
      else
        for (const auto& w : args.list("weights", "bilinear"))
          if (w == "bilinear") files.push_back({"BILINEAR", dir + "rmp_torc_to_lmdz_BILINEAR.nc"});
          else if (w == "conserv") files.push_back({"CONSERV_FRACNNEI", dir + "rmp_torc_to_lmdz_CONSERV_FRACNNEI.nc"});
          else usage("--weights bilinear,conserv");
      for (const auto& [w, path] : files) {
        Setting s = base;
        s.kase = kase;
        s.weights = w;
        s.path = path;
        run(s);
      }
    } else if (kase == "synthetic") {
      Synthetic syn(src_nx, src_ny, args.integer("dst-points", 2000000));
      Setting s = base;
      s.kase = kase;
      s.weights = "bilinear-4";
      s.synthetic = &syn;
      s.path = synthetic_file(world, me, syn, workdir);
      run(s);
    } else if (kase == "memory") {
      Synthetic syn(src_nx, src_ny, args.integer("dst-points", 2500000));
      const std::string path = synthetic_file(world, me, syn, workdir);
      MPI_Barrier(world);
      const bool reset = reset_peak();
      const double rss0 = status_bytes("VmRSS");
      WeightsInfo info;
      double t0 = MPI_Wtime();
      LinkSlab slab = isthmus::remap::read_scrip_weights(world, path, WeightsExpect{}, &info);
      const double read_s = MPI_Wtime() - t0;
      const double hwm_read = status_bytes("VmHWM");
      const double held = static_cast<double>(slab.size()) * 24.0;
      const double share = static_cast<double>(info.num_links) / size * 24.0;
      // then the mapping built from those links (the slab freed once they are copied)
      std::unique_ptr<IndexList> src, dst;
      if (lay.has_src) src = std::make_unique<IndexList>(source_part(base.src_pattern, syn.snx, syn.sny, lay.nsrc, lay.ksrc));
      if (lay.has_dst) dst = std::make_unique<IndexList>(destination_part(base.dst_pattern, syn.n, lay.ndst, lay.kdst));
      MPI_Barrier(world);
      const bool reset2 = reset_peak();
      const double rss1 = status_bytes("VmRSS");
      std::unique_ptr<Mapping> m;
      {
        auto links = isthmus::remap::links_of(slab, info.num_wgts);
        slab = LinkSlab{};
        MappingOptions o;
        o.fused = true;
        Agreement agreement;
        m = std::make_unique<Mapping>(world, src.get(), dst.get(), info.src_grid_size, info.dst_grid_size, links, o, agreement);
      }
      const double hwm_map = status_bytes("VmHWM");
      const double rss_map = status_bytes("VmRSS");
      int ok_local = reset && reset2 ? 1 : 0, ok = 0;
      MPI_Allreduce(&ok_local, &ok, 1, MPI_INT, MPI_MIN, world);
      auto before = gather(world, rss0, size), peak = gather(world, hwm_read, size),
           mine = gather(world, held, size), before_map = gather(world, rss1, size),
           peak_map = gather(world, hwm_map, size), after_map = gather(world, rss_map, size);
      const double mb = 1.0 / (1024.0 * 1024.0);
      if (me == 0) {
        std::vector<double> growth(size), ratio(size), growth_map(size), ratio_map(size);
        double worst = 0, worst_map = 0;
        for (int r = 0; r < size; ++r) {
          growth[r] = peak[r] - before[r];
          ratio[r] = growth[r] / share;
          growth_map[r] = peak_map[r] - before_map[r];
          ratio_map[r] = growth_map[r] / share;
          worst = std::max(worst, ratio[r]);
          worst_map = std::max(worst_map, ratio_map[r]);
        }
        bench::Json j;
        j.str("bench", "mapping").str("case", "memory").integer("ranks", size).integer("src_ranks", lay.nsrc)
            .integer("dst_ranks", lay.ndst).integer("links", info.num_links).integer("src_points", info.src_grid_size)
            .integer("dst_points", info.dst_grid_size).num("share_mb", share * mb)
            .boolean("peak_reset", ok == 1).num("read_s", read_s)
            .raw("held_mb", json_array(mine, mb)).raw("rss_before_read_mb", json_array(before, mb))
            .raw("peak_read_mb", json_array(peak, mb)).raw("read_growth_mb", json_array(growth, mb))
            .raw("read_growth_over_share", json_array(ratio)).num("read_worst_over_share", worst)
            .boolean("read_goal_met", worst < 2.0)
            .raw("rss_before_mapping_mb", json_array(before_map, mb)).raw("peak_mapping_mb", json_array(peak_map, mb))
            .raw("rss_after_mapping_mb", json_array(after_map, mb))
            .raw("mapping_growth_over_share", json_array(ratio_map)).num("mapping_worst_over_share", worst_map)
            .boolean("simulated", kSimulated).print();
      }
    } else {
      usage("unknown --case " + kase + " (orca2-lmdz, synthetic, memory)");
    }
  }
  MPI_Finalize();
  return 0;
}
