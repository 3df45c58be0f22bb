// Coupling benchmark: the ping-pong of OASIS3-MCT's paper (seed 000, sect. 3.2) through the
// coupler's C API. Two components on disjoint ranks -- "ocn" on the first ranks, "atm" on the
// rest -- exchange fields back and forth through a namcouple that this program writes: at date t
// ocn puts, atm gets, atm puts, ocn gets (one round trip). Beside the coupler, the same pair of
// mappings on the same decompositions is run through the remap layer alone, fused and (side dst)
// unfused, OASIS3-MCT's two-phase path, as the reference and for the split between the mapping's
// arithmetic and the transfer.
//
//   bench_coupling [--case orca2-lmdz,toy] [--fields 1,10] [--grouping colon,entries]
//                  [--side dst,src] [--partition apple|box] [--ocn-ranks A]
//                  [--reps 1000] [--unbarriered-reps R] [--warmup 10] [--setup-reps 1]
//                  [--reference yes|no] [--workdir /tmp/isthmus-bench-coupling]
//
// Cases:
//   orca2-lmdz  ocn = ORCA2 (182 x 149), atm = LMDZ (96 x 72), OASIS's bilinear files of
//               tests/data/orca2-lmdz (rmp_torc_to_lmdz_BILINEAR.nc, rmp_lmdz_to_torc_BILINEAR.nc)
//   toy         seed 000's toy: ocn = an ORCA025-sized regular lat-lon grid (1442 x 1021), atm =
//               a T799-sized reduced grid (800 rows, 843,490 points), five-nearest-neighbour
//               weights (inverse distance) generated here (toy_grids.h) and written once in
//               --workdir with the SCRIP writer: T799 -> ORCA025 4.49 M links, ORCA025 -> T799
//               2.99 M links, as in seed 000 sect. 3.2 (masked points left without links).
//
// Per case, side and number of fields, one JSON object per variant:
//   coupler          set-up = isthmus_coupler_create .. isthmus_coupler_enddef (median of
//                    --setup-reps), ping-pong = one round trip of put/get (median, min, max of
//                    --reps samples, each from the last rank's start to the last rank's end, with a
//                    barrier before it, bench::time_collective's rule), and the mean of
//                    --unbarriered-reps round trips run back to back without barriers (what the
//                    seed reports: 1000 ping-pongs averaged). The coupler is always fused.
//   mapping-fused    the same two mappings through remap::Mapping (fused), set-up = reading the
//                    two files + building both mappings; ping-pong = apply ocn -> atm, then
//                    atm -> ocn. Its redistribution's trace counters give the split: mapping_s =
//                    for each direction the largest time a rank spends in apply outside the
//                    exchange (the multiplication, or the partial sums), summed over the two
//                    directions; transfer_s = ping-pong - mapping_s.
//   mapping-unfused  side dst only: remap::Mapping with fused = false (rearrange within the
//                    source ranks, multiply there, transfer the results), OASIS3-MCT's way.
// The reference variants alternate sample by sample; the coupler's samples come first.
#include <isthmus.h>
#include <mpi.h>
#include <sys/stat.h>

#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "base/agreement.h"
#include "base/error.h"
#include "base/hash.h"
#include "capi/handles.h"
#include "common/bench_util.h"
#include "common/grid_decompositions.h"
#include "coupling/toy_grids.h"
#include "remap/mapping.h"
#include "remap/scrip_weights.h"

namespace {

using isthmus::IndexList;
using isthmus::remap::Mapping;
using isthmus::remap::MappingOptions;
using isthmus::remap::Side;

#ifdef ISTHMUS_SMPI
constexpr bool kSimulated = true;
#else
constexpr bool kSimulated = false;
#endif

// One grid pair: the ocn grid (first component) and the atm grid, and the two weights files.
struct GridPair {
  std::string kase, ocn_grid, atm_grid;
  int64_t ocn_nx = 0, ocn_ny = 0, atm_nx = 0, atm_ny = 0;  // ny = 1: no 2-D shape (apple only)
  std::string run_dir, o2a_file, a2o_file;                // files relative to run_dir
  int64_t ocn_size() const { return ocn_nx * ocn_ny; }
  int64_t atm_size() const { return atm_nx * atm_ny; }
};

struct Options {
  std::vector<int> fields;
  std::vector<std::string> groupings, sides;
  std::string partition = "apple", workdir;
  int reps = 1000, unbarriered = -1, warmup = 10, setup_reps = 1;
  bool reference = true;
  std::string commit, date;
};

// The OASIS partition of this rank: apple (a band of consecutive points) or box (a 2-D block of
// a row-major nx x ny grid); a grid without 2-D shape is always apple.
std::vector<int> oasis_partition(const std::string& kind, int64_t nx, int64_t ny, int parts, int part) {
  if (kind == "box" && ny > 1) {
    int px = 1, py = 1;
    bench::factor(parts, px, py);
    const auto xs = bench::block1d(nx, px, part % px), ys = bench::block1d(ny, py, part / px);
    return {2, static_cast<int>(ys.first * nx + xs.first), static_cast<int>(xs.second),
            static_cast<int>(ys.second), static_cast<int>(nx)};
  }
  const auto b = bench::block1d(nx * ny, parts, part);
  return {1, static_cast<int>(b.first), static_cast<int>(b.second)};
}

std::string names(const char* prefix, int first, int count) {
  std::string s;
  for (int f = first; f < first + count; ++f) {
    char b[32];
    std::snprintf(b, sizeof b, "%s%02d", prefix, f + 1);
    s += (f > first ? ":" : "") + std::string(b);
  }
  return s;
}

// The namcouple: ocn -> atm (O_Fnn -> A_Fnn) and atm -> ocn (A_Gnn -> O_Gnn), period 1 s, the
// fields in one colon-grouped entry per direction or one entry per field.
std::string namcouple(const GridPair& g, int nfields, bool colon, const std::string& side, int runtime) {
  const std::string strategy = side == "dst" ? "dst bfb" : "src sum";
  const int per_entry = colon ? nfields : 1, entries = colon ? 1 : nfields;
  std::ostringstream o;
  o << "$NFIELDS\n  " << 2 * entries << "\n$END\n$RUNTIME\n  " << runtime
    << "\n$END\n$NLOGPRT\n  0 0\n$END\n$STRINGS\n";
  for (int e = 0; e < entries; ++e)
    o << names("O_F", e * per_entry, per_entry) << " " << names("A_F", e * per_entry, per_entry)
      << " 1 1 1 rst_o.nc EXPORTED\n"
      << g.ocn_nx << " " << g.ocn_ny << " " << g.atm_nx << " " << g.atm_ny << " " << g.ocn_grid << " "
      << g.atm_grid << "\nP 0 P 0\nMAPPING\n" << g.o2a_file << " " << strategy << "\n";
  for (int e = 0; e < entries; ++e)
    o << names("A_G", e * per_entry, per_entry) << " " << names("O_G", e * per_entry, per_entry)
      << " 1 1 1 rst_a.nc EXPORTED\n"
      << g.atm_nx << " " << g.atm_ny << " " << g.ocn_nx << " " << g.ocn_ny << " " << g.atm_grid << " "
      << g.ocn_grid << "\nP 0 P 0\nMAPPING\n" << g.a2o_file << " " << strategy << "\n";
  o << "$END\n";
  return o.str();
}

// Values of field f at global point g (the same on every decomposition).
double value(int64_t g, int f) { return std::sin(0.001 * static_cast<double>(g)) * 50.0 + 280.0 + f; }

// Sum over ranks of a hash of (global index, field, bits): equal iff the fields are equal.
uint64_t checksum(MPI_Comm comm, const IndexList* part, const std::vector<double*>& fields) {
  uint64_t h = 0;
  if (part) {
    const std::vector<int64_t> idx = part->indices();
    for (size_t f = 0; f < fields.size(); ++f)
      for (size_t p = 0; p < idx.size(); ++p) {
        uint64_t bits;
        std::memcpy(&bits, &fields[f][p], 8);
        h += isthmus::mix64(isthmus::mix64(static_cast<uint64_t>(idx[p]) * 64 + f) ^ bits);
      }
  }
  uint64_t all = 0;
  MPI_Allreduce(&h, &all, 1, MPI_UINT64_T, MPI_SUM, comm);
  return all;
}

struct Result {
  std::string variant, error;
  bool fused = true;
  bench::Stats setup, pingpong, pingpong_cpu;  // cpu: the largest thread CPU time of a rank
  double unbarriered = -1, mapping_s = -1, transfer_s = -1, setup_cpu = -1;
  int64_t info_errors = 0, messages = -1, bytes = -1;
  int same_bits = -1;  // coupler vs mapping-fused, mapping-unfused vs mapping-fused (-1: n/a)
};

// Field buffers of one component side: nfields arrays of n values.
struct Buffers {
  std::vector<double*> p;
  Buffers(int nfields, int64_t n) {
    for (int f = 0; f < nfields; ++f) p.push_back(static_cast<double*>(bench::alloc_field(sizeof(double) * (n ? n : 1))));
  }
  ~Buffers() {
    for (double* x : p) bench::free_field(x);
  }
  Buffers(const Buffers&) = delete;
  Buffers& operator=(const Buffers&) = delete;
};

struct Layout {
  int nocn = 1, natm = 1;
  bool ocn = false;
  int part = 0;  // this rank's part number within its component
};

// One coupler run: set-up (setup_reps times), warm-up, timed round trips; then the reference
// mappings. Prints the records on rank 0.
void run_case(MPI_Comm world, int me, const Layout& lay, const GridPair& g, const Options& o,
              const std::string& side, int nfields, const std::string& grouping) {
  const bool colon = grouping == "colon";
  const int rounds = o.warmup + o.reps + o.unbarriered;
  const int runtime = rounds + 1;
  const std::string nam = o.workdir + "/namcouple_bench_coupling";
  if (me == 0) {
    std::ofstream f(nam);
    f << namcouple(g, nfields, colon, side, runtime);
  }
  MPI_Barrier(world);
  std::vector<Result> results;
  Result cr;
  cr.variant = "coupler";
  const int64_t nglobal_mine = lay.ocn ? g.ocn_size() : g.atm_size();
  const std::vector<int> ig = lay.ocn ? oasis_partition(o.partition, g.ocn_nx, g.ocn_ny, lay.nocn, lay.part)
                                      : oasis_partition(o.partition, g.atm_nx, g.atm_ny, lay.natm, lay.part);
  isthmus_coupler* cpl = nullptr;
  isthmus_context* ctx = nullptr;
  isthmus_decomp* decomp = nullptr;
  std::vector<int> out_vars(nfields), in_vars(nfields);
  int failed = 0;
  std::string error;
  auto check = [&](int code, const char* what) {
    if (code != ISTHMUS_OK && !failed) {
      failed = 1;
      error = std::string(what) + ": " + (cpl ? isthmus_coupler_last_error(cpl) : "no coupler");
    }
  };
  auto teardown = [&] {
    if (cpl) isthmus_coupler_terminate(cpl);
    if (decomp) isthmus_decomp_destroy(&decomp);
    if (ctx) isthmus_context_destroy(&ctx);
    if (cpl) isthmus_coupler_destroy(&cpl);
  };
  isthmus_coupler_options copt{g.run_dir.c_str(), 0.0};
  std::vector<double> setup, setup_cpu;
  for (int r = 0; r < o.setup_reps && !failed; ++r) {
    teardown();
    bench::Timing t = bench::time_collective_with(world, 1, [&] {
      check(isthmus_coupler_create(world, lay.ocn ? "ocn" : "atm", nam.c_str(), &copt, &cpl), "create");
      if (failed) return;
      check(isthmus_coupler_get_context(cpl, &ctx), "get_context");
      check(isthmus_decomp_create_oasis(ctx, nglobal_mine, ig.data(), static_cast<int>(ig.size()), &decomp),
            "decomp_create_oasis");
      int part = -1;
      check(isthmus_coupler_def_partition(cpl, decomp, lay.ocn ? g.ocn_grid.c_str() : g.atm_grid.c_str(), &part),
            "def_partition");
      for (int f = 0; f < nfields; ++f) {
        const std::string out = names(lay.ocn ? "O_F" : "A_G", f, 1), in = names(lay.ocn ? "O_G" : "A_F", f, 1);
        check(isthmus_coupler_def_var(cpl, out.c_str(), part, ISTHMUS_VAR_OUT, ISTHMUS_DOUBLE, 1, &out_vars[f]),
              "def_var");
        check(isthmus_coupler_def_var(cpl, in.c_str(), part, ISTHMUS_VAR_IN, ISTHMUS_DOUBLE, 1, &in_vars[f]),
              "def_var");
      }
      check(isthmus_coupler_enddef(cpl), "enddef");
    }, [world] { MPI_Barrier(world); });
    setup.push_back(t.wall.median);
    setup_cpu.push_back(t.cpu.median);
    int any = 0;
    MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, world);
    failed = any;
  }
  cr.setup = bench::stats(setup);
  cr.setup_cpu = bench::stats(setup_cpu).median;

  // Fields: this rank's points of its component's grid, out and in.
  const IndexList* mine = decomp ? &decomp->list : nullptr;
  const int64_t n = mine ? mine->size() : 0;
  Buffers out(nfields, n), in(nfields, n);
  const bool shared = bench::buffers_are_shared();
  if (!shared && mine) {
    const std::vector<int64_t> idx = mine->indices();
    for (int f = 0; f < nfields; ++f)
      for (int64_t p = 0; p < n; ++p) out.p[f][p] = value(idx[p], lay.ocn ? f : f + 100);
  }
  int64_t bad_info = 0;
  auto round_trip = [&](int date) {
    int info = -1;
    auto put_all = [&] {
      for (int f = 0; f < nfields; ++f) {
        check(isthmus_coupler_put(cpl, out_vars[f], date, out.p[f], &info), "put");
        const int want = colon && f + 1 < nfields ? ISTHMUS_COUPLING_WAITGROUP : ISTHMUS_COUPLING_SENT;
        bad_info += info != want;
      }
    };
    auto get_all = [&] {
      for (int f = 0; f < nfields; ++f) {
        check(isthmus_coupler_get(cpl, in_vars[f], date, in.p[f], &info), "get");
        bad_info += info != ISTHMUS_COUPLING_RECVD;
      }
    };
    if (lay.ocn) {
      put_all();
      get_all();
    } else {
      get_all();
      put_all();
    }
  };
  // The reference: the two mappings through the remap layer on the same decompositions, built
  // beside the coupler so that their samples alternate with the coupler's.
  IndexList ocn_part = mine && lay.ocn ? *mine : IndexList::from_segments(g.ocn_size(), nullptr, nullptr, 0);
  IndexList atm_part = mine && !lay.ocn ? *mine : IndexList::from_segments(g.atm_size(), nullptr, nullptr, 0);
  const IndexList* ocn = lay.ocn ? &ocn_part : nullptr;
  const IndexList* atm = lay.ocn ? nullptr : &atm_part;
  struct Variant {
    Result r;
    std::unique_ptr<Mapping> o2a, a2o;
    std::vector<double> setup, samples, cpu;
    double in_apply = 0;           // this rank's time in apply, summed over the timed samples
    std::unique_ptr<Buffers> got;  // its results on this rank
  };
  std::vector<Variant> vs;
  if (o.reference && !failed && o.reps > 0) {
    vs.resize(side == "dst" ? 2 : 1);
    vs[0].r.variant = "mapping-fused";
    if (vs.size() > 1) {
      vs[1].r.variant = "mapping-unfused";
      vs[1].r.fused = false;
    }
  }
  for (int r = 0; r < o.setup_reps; ++r)
    for (Variant& v : vs) {
      v.o2a.reset();
      v.a2o.reset();
      try {
        v.setup.push_back(bench::time_collective(world, 1, [&] {
          auto build = [&](const std::string& file, const IndexList* src, const IndexList* dst) {
            isthmus::remap::WeightsInfo info;
            auto slab = isthmus::remap::read_scrip_weights(world, g.run_dir + "/" + file, {}, &info);
            MappingOptions mo;
            mo.side = side == "dst" ? Side::Dst : Side::Src;
            mo.method = isthmus::Method::P2P;  // the coupler's executor
            mo.nlevels.assign(nfields, 1);
            mo.fused = v.r.fused;
            isthmus::Agreement agreement;
            return std::make_unique<Mapping>(world, src, dst, info.src_grid_size, info.dst_grid_size,
                                             isthmus::remap::links_of(slab, info.num_wgts), mo, agreement);
          };
          v.o2a = build(g.o2a_file, ocn, atm);
          v.a2o = build(g.a2o_file, atm, ocn);
        }).median);
      } catch (const isthmus::Error& e) {
        v.r.error = e.what();
        v.o2a.reset();
        v.a2o.reset();
      }
    }
  for (Variant& v : vs) v.got = std::make_unique<Buffers>(nfields, n);
  auto apply = [&](Variant& v) {
    // ocn -> atm, then atm -> ocn; each rank passes its arrays for its role
    double t0 = MPI_Wtime();
    v.o2a->apply(lay.ocn ? out.p.data() : nullptr, lay.ocn ? nullptr : v.got->p.data());
    v.a2o->apply(lay.ocn ? nullptr : out.p.data(), lay.ocn ? v.got->p.data() : nullptr);
    v.in_apply += MPI_Wtime() - t0;
  };

  int date = 0;
  if (!failed && o.reps > 0) {
    for (int k = 0; k < o.warmup; ++k) round_trip(date++);
    for (Variant& v : vs)
      if (v.o2a) {
        for (int k = 0; k < o.warmup; ++k) apply(v);
        v.in_apply = 0;
        for (Mapping* m : {v.o2a.get(), v.a2o.get()}) {
          m->redist().trace().set_on(v.r.fused);
          m->redist().trace().reset();
        }
      }
    // the samples alternate: a coupler round trip, then each reference's
    std::vector<double> samples, cpu;
    auto barrier = [world] { MPI_Barrier(world); };
    for (int r = 0; r < o.reps; ++r) {
      bench::Timing t = bench::time_collective_with(world, 1, [&] { round_trip(date++); }, barrier);
      samples.push_back(t.wall.median);
      cpu.push_back(t.cpu.median);
      for (Variant& v : vs)
        if (v.o2a) {
          t = bench::time_collective_with(world, 1, [&] { apply(v); }, barrier);
          v.samples.push_back(t.wall.median);
          v.cpu.push_back(t.cpu.median);
        }
    }
    cr.pingpong = bench::stats(samples);
    cr.pingpong_cpu = bench::stats(cpu);
    if (o.unbarriered > 0) {
      bench::Stats u = bench::time_collective(world, 1, [&] {
        for (int k = 0; k < o.unbarriered; ++k) round_trip(date++);
      });
      cr.unbarriered = u.median / o.unbarriered;
    }
  }
  MPI_Allreduce(&bad_info, &cr.info_errors, 1, MPI_INT64_T, MPI_SUM, world);
  {
    int any = 0;
    MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, world);
    if (any) {
      int len = static_cast<int>(error.size());
      // the lowest failing rank's message
      struct {
        int f, r;
      } loc{failed ? 0 : 1, me}, low;
      MPI_Allreduce(&loc, &low, 1, MPI_2INT, MPI_MINLOC, world);
      MPI_Bcast(&len, 1, MPI_INT, low.r, world);
      error.resize(len);
      MPI_Bcast(error.data(), len, MPI_CHAR, low.r, world);
      cr.error = error;
    }
  }
  const uint64_t coupler_sum = (cr.error.empty() && !shared) ? checksum(world, mine, in.p) : 0;

  std::vector<uint64_t> sums(vs.size(), 0);
  for (size_t i = 0; i < vs.size(); ++i) {
    Variant& v = vs[i];
    if (!v.r.error.empty()) {
      results.push_back(v.r);
      continue;
    }
    v.r.setup = bench::stats(v.setup);
    v.r.pingpong = bench::stats(v.samples);
    v.r.pingpong_cpu = bench::stats(v.cpu);
    int64_t msg = 0, bytes = 0;
    double exchange = 0;
    for (Mapping* m : {v.o2a.get(), v.a2o.get()}) {
      const auto c = m->redist().trace().counters();
      msg += c.messages_sent;
      bytes += c.bytes_sent;
      exchange += c.total_seconds;
      m->redist().trace().set_on(false);
    }
    if (v.r.fused) {
      // per round trip: each direction's arithmetic happens on one side (dst: the receiving
      // component multiplies; src: the sending one forms partial sums); each rank maps in one
      // direction only, so the largest outside-exchange time of each component, summed
      double outside[2] = {lay.ocn ? (v.in_apply - exchange) / o.reps : 0.0,
                           lay.ocn ? 0.0 : (v.in_apply - exchange) / o.reps},
             worst[2];
      MPI_Allreduce(outside, worst, 2, MPI_DOUBLE, MPI_MAX, world);
      v.r.mapping_s = worst[0] + worst[1];
      v.r.transfer_s = v.r.pingpong.median - v.r.mapping_s;
      int64_t loc[2] = {msg, bytes}, sum[2];
      MPI_Allreduce(loc, sum, 2, MPI_INT64_T, MPI_SUM, world);
      v.r.messages = sum[0] / o.reps;
      v.r.bytes = sum[1] / o.reps;
    }
    if (!shared) {
      sums[i] = checksum(world, mine, v.got->p);
      if (v.r.fused) cr.same_bits = cr.error.empty() && sums[i] == coupler_sum;
      else if (vs[0].r.error.empty()) v.r.same_bits = sums[i] == sums[0];
    }
    results.push_back(v.r);
  }
  if (!results.empty() && results[0].error.empty()) {
    cr.mapping_s = results[0].mapping_s;
    cr.transfer_s = cr.pingpong.median - cr.mapping_s;
  }
  vs.clear();
  results.insert(results.begin(), cr);
  teardown();

  if (me != 0) return;
  for (const Result& r : results) {
    bench::Json j;
    j.str("bench", "coupling").str("case", g.kase).str("variant", r.variant)
        .str("grids", g.ocn_grid + " <-> " + g.atm_grid).integer("ocn_points", g.ocn_size())
        .integer("atm_points", g.atm_size()).integer("ranks_src", lay.nocn).integer("ranks_dst", lay.natm)
        .str("partition", o.partition).integer("fields", nfields)
        .str("grouping", nfields == 1 ? "single" : (colon ? "colon (one entry per direction)" : "one entry per field"))
        .str("side", side).str("strategy", side == "dst" ? "bfb" : "sum").boolean("fused", r.fused)
        .str("method", "p2p");
    if (!r.error.empty()) {
      j.str("error", r.error).boolean("simulated", kSimulated).str("commit", o.commit).str("date", o.date).print();
      continue;
    }
    j.num("setup_s", r.setup.median).stats("setup_", r.setup);
    if (r.variant == "coupler") j.num("setup_cpu_s", r.setup_cpu).integer("info_errors", r.info_errors);
    if (o.reps > 0) {
      j.stats("pingpong_", r.pingpong).num("pingpong_cpu_median_s", r.pingpong_cpu.median);
      if (r.unbarriered >= 0) j.num("pingpong_unbarriered_mean_s", r.unbarriered).integer("unbarriered_reps", o.unbarriered);
      if (r.mapping_s >= 0) {
        j.num("mapping_s", r.mapping_s).num("transfer_s", r.transfer_s)
            .str("split_from", "mapping-fused: largest per-rank time in apply outside the exchange, per direction, summed");
      }
      if (r.messages >= 0) j.integer("messages_per_pingpong", r.messages).integer("bytes_per_pingpong", r.bytes);
      if (r.same_bits >= 0) j.boolean(r.variant == "coupler" ? "same_bits_as_mapping" : "same_bits_as_fused", r.same_bits == 1);
    }
    j.integer("warmup", o.warmup).boolean("simulated", kSimulated).str("commit", o.commit).str("date", o.date).print();
  }
}

std::string utc_now() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char b[32];
  std::strftime(b, sizeof b, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return b;
}

}  // namespace

int main(int argc, char** argv) {
  auto [world, me, size] = bench::init(argc, argv);
  bench::Args args(argc, argv);
  auto usage = [&](const std::string& why) {
    if (me == 0) std::fprintf(stderr, "bench_coupling: %s\n", why.c_str());
    MPI_Abort(world, 2);
  };
  if (size < 2) usage("needs at least 2 ranks (two components)");
  Options o;
  for (const auto& s : args.list("fields", "1,10")) o.fields.push_back(std::stoi(s));
  o.groupings = args.list("grouping", "colon");
  o.sides = args.list("side", "dst,src");
  o.partition = args.get("partition", "apple");
  o.workdir = args.get("workdir", "/tmp/isthmus-bench-coupling");
  o.reps = static_cast<int>(args.integer("reps", 1000));
  o.unbarriered = static_cast<int>(args.integer("unbarriered-reps", o.reps));
  o.warmup = static_cast<int>(args.integer("warmup", 10));
  o.setup_reps = static_cast<int>(args.integer("setup-reps", 1));
  o.reference = args.get("reference", "yes") == "yes";
  if (o.partition != "apple" && o.partition != "box") usage("--partition apple|box");
  for (const auto& s : o.sides)
    if (s != "dst" && s != "src") usage("--side dst,src");
  for (const auto& s : o.groupings)
    if (s != "colon" && s != "entries") usage("--grouping colon,entries");
  if (o.reps < 0 || o.setup_reps < 1 || o.warmup < 0) usage("--reps >= 0, --setup-reps >= 1, --warmup >= 0");
  if (o.reps == 0) o.unbarriered = 0;
  const char* commit = std::getenv("ISTHMUS_GIT_COMMIT");
  o.commit = commit ? commit : "unknown";
  o.date = utc_now();
  Layout lay;
  lay.nocn = static_cast<int>(args.integer("ocn-ranks", size / 2));
  if (lay.nocn < 1 || lay.nocn >= size) usage("--ocn-ranks must be in [1, ranks - 1]");
  lay.natm = size - lay.nocn;
  lay.ocn = me < lay.nocn;
  lay.part = lay.ocn ? me : me - lay.nocn;
  if (me == 0) ::mkdir(o.workdir.c_str(), 0755);  // may exist

  for (const std::string& kase : args.list("case", "orca2-lmdz")) {
    GridPair g;
    g.kase = kase;
    if (kase == "orca2-lmdz") {
      g.ocn_grid = "torc";
      g.atm_grid = "lmdz";
      g.ocn_nx = 182, g.ocn_ny = 149, g.atm_nx = 96, g.atm_ny = 72;
      g.run_dir = std::string(ISTHMUS_SOURCE_DIR) + "/tests/data/orca2-lmdz";
      g.o2a_file = "rmp_torc_to_lmdz_BILINEAR.nc";
      g.a2o_file = "rmp_lmdz_to_torc_BILINEAR.nc";
    } else if (kase == "toy") {
      const bench::ToyGrids toy;
      g.ocn_grid = "orca025";
      g.atm_grid = "t799";
      g.ocn_nx = toy.orca.nx, g.ocn_ny = toy.orca.ny, g.atm_nx = toy.t799.size(), g.atm_ny = 1;
      g.run_dir = o.workdir;
      g.o2a_file = bench::ToyGrids::kOrcaToT799;
      g.a2o_file = bench::ToyGrids::kT799ToOrca;
      bench::ensure_toy_weights(world, me, toy, o.workdir);
    } else {
      usage("unknown --case " + kase + " (orca2-lmdz, toy)");
    }
    for (const std::string& side : o.sides)
      for (int nf : o.fields)
        for (const std::string& grouping : o.groupings) {
          if (nf == 1 && grouping != o.groupings.front()) continue;  // the same run
          run_case(world, me, lay, g, o, side, nf, grouping);
        }
  }
  MPI_Finalize();
  return 0;
}
