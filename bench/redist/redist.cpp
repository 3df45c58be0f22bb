// Redistribution benchmark: fields of a 2-D grid moved between two decompositions.
//
//   bench_redist [--nx 192] [--ny 480] [--fields 10] [--levels 1]
//                [--src-ranks A] [--dst-ranks B] [--pattern block-roundrobin]
//                [--method all|p2p|alltoallv|neighbor|auto|compare] [--reps 5] [--separate]
//
// Ranks: A + B <= P puts the source on [0, A) and the destination on [A, A + B) (disjoint);
// otherwise the source is on [0, A) and the destination on [P - B, P) (identical when A = B = P).
// Patterns: block-roundrobin (GAMIL2 -> CLM3), roundrobin-block, block-block (transposed block
// shapes), random (a random permutation).
// Prints one JSON object per case: setup (the map), redist_setup (creating the redistribution)
// and exchange for each method, and with --separate the same fields sent as one redistribution
// per field (what aggregation saves). --method compare: auto against p2p, alltoallv and
// neighbor, their exchanges interleaved round by round (case "compare": ratio_to_best_fixed of
// the medians, and paired_ratio_to_best_fixed, the median of the per-round ratios).
#include <mpi.h>

#include <algorithm>
#include <numeric>
#include <cinttypes>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "base/hash.h"
#include "common/bench_util.h"
#include "common/grid_decompositions.h"
#include "isthmus.h"

namespace {

using bench::block1d;
using bench::block2d;
using bench::roundrobin;

struct Layout {
  bool has_src = false, has_dst = false;
  std::vector<int64_t> src, dst;
};

std::vector<int64_t> random_part(int64_t n, int parts, int part, unsigned seed) {
  std::vector<int64_t> perm(n);
  for (int64_t i = 0; i < n; ++i) perm[i] = i;
  std::mt19937_64 rng(seed);
  std::shuffle(perm.begin(), perm.end(), rng);
  auto b = block1d(n, parts, part);
  return std::vector<int64_t>(perm.begin() + b.first, perm.begin() + b.first + b.second);
}

double ref_value(int64_t g, int f, int l) { return g * 1024.0 + f * 32.0 + l + 0.125; }

using isthmus::mix64;

const char* method_name(int m) {
  switch (m) {
    case ISTHMUS_METHOD_P2P: return "p2p";
    case ISTHMUS_METHOD_ALLTOALLV: return "alltoallv";
    case ISTHMUS_METHOD_NEIGHBOR: return "neighbor";
    default: return "auto";
  }
}

#define CHECK(ctx, call)                                                       \
  do {                                                                         \
    if ((call) != ISTHMUS_OK) {                                                \
      std::fprintf(stderr, "%s\n", isthmus_last_error(ctx));                   \
      MPI_Abort(MPI_COMM_WORLD, 1);                                            \
    }                                                                          \
  } while (0)

}  // namespace

int main(int argc, char** argv) {
  auto [world, me, size] = bench::init(argc, argv);
  bench::Args args(argc, argv);
  const int64_t nx = args.integer("nx", 192), ny = args.integer("ny", 480), n = nx * ny;
  const int nfields = static_cast<int>(args.integer("fields", 10));
  const int nlevels = static_cast<int>(args.integer("levels", 1));
  const int reps = static_cast<int>(args.integer("reps", 5));
  int nsrc = static_cast<int>(args.integer("src-ranks", size));
  int ndst = static_cast<int>(args.integer("dst-ranks", size));
  const std::string pattern = args.get("pattern", "block-roundrobin");
  const std::string which = args.get("method", "all");
  if (nsrc < 1 || ndst < 1 || nsrc > size || ndst > size) {
    if (me == 0) std::fprintf(stderr, "bench_redist: --src-ranks and --dst-ranks must be in [1, %d]\n", size);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  int s0 = 0, d0 = (nsrc + ndst <= size) ? nsrc : size - ndst;
  std::string ranksets = nsrc + ndst <= size ? "disjoint" : (nsrc == size && ndst == size ? "identical" : "overlapping");

  Layout lay;
  if (me >= s0 && me < s0 + nsrc) {
    lay.has_src = true;
    int k = me - s0;
    if (pattern == "roundrobin-block") lay.src = roundrobin(n, nsrc, k);
    else if (pattern == "random") lay.src = random_part(n, nsrc, k, 1);
    else lay.src = block2d(nx, ny, nsrc, k, false);
  }
  if (me >= d0 && me < d0 + ndst) {
    lay.has_dst = true;
    int k = me - d0;
    if (pattern == "block-roundrobin") lay.dst = roundrobin(n, ndst, k);
    else if (pattern == "block-block") lay.dst = block2d(nx, ny, ndst, k, true);
    else if (pattern == "random") lay.dst = random_part(n, ndst, k, 2);
    else lay.dst = block2d(nx, ny, ndst, k, false);
  }

  isthmus_context* ctx = nullptr;
  if (isthmus_context_create(MPI_COMM_WORLD, &ctx) != ISTHMUS_OK) MPI_Abort(MPI_COMM_WORLD, 1);
  isthmus_decomp *sd = nullptr, *dd = nullptr;
  if (lay.has_src) CHECK(ctx, isthmus_decomp_create_indices(ctx, n, lay.src.size(), lay.src.data(), &sd));
  if (lay.has_dst) CHECK(ctx, isthmus_decomp_create_indices(ctx, n, lay.dst.size(), lay.dst.data(), &dd));

  auto base = [&](bench::Json& j, const std::string& kase) -> bench::Json& {
    return j.str("bench", "redist").str("case", kase).str("pattern", pattern).str("ranksets", ranksets)
        .integer("ranks", size).integer("src_ranks", nsrc).integer("dst_ranks", ndst)
        .integer("nx", nx).integer("ny", ny).integer("fields", nfields).integer("levels", nlevels);
  };

  // Setup: building the exchange map (the distributed directory).
  isthmus_xmap* x = nullptr;
  bench::Stats setup = bench::time_collective(MPI_COMM_WORLD, reps, [&] {
    if (x) isthmus_xmap_destroy(&x);
    CHECK(ctx, isthmus_xmap_create(ctx, sd, dd, nullptr, &x));
  });
  isthmus_xmap_info info;
  isthmus_xmap_get_info(x, &info);
  int64_t loc[3] = {info.send_peers, info.recv_peers, info.send_points}, mx[3], sm[3];
  MPI_Allreduce(loc, mx, 3, MPI_INT64_T, MPI_MAX, MPI_COMM_WORLD);
  MPI_Allreduce(loc, sm, 3, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
  if (me == 0) {
    bench::Json j;
    base(j, "setup").str("method", "xmap").stats("", setup).integer("messages_total", sm[0])
        .integer("max_send_peers", mx[0]).integer("max_recv_peers", mx[1]).integer("points_sent", sm[2]).print();
  }

  // Fields: level-major arrays filled with the reference values.
  const int64_t ns = lay.src.size(), nd = lay.dst.size();
  std::vector<void*> src(nfields), dst(nfields);
  for (int f = 0; f < nfields; ++f) {
    src[f] = bench::alloc_field(sizeof(double) * ns * nlevels);
    dst[f] = bench::alloc_field(sizeof(double) * nd * nlevels);
  }
  const bool shared = bench::buffers_are_shared();
  if (!shared)
    for (int f = 0; f < nfields; ++f)
      for (int l = 0; l < nlevels; ++l)
        for (int64_t p = 0; p < ns; ++p) static_cast<double*>(src[f])[l * ns + p] = ref_value(lay.src[p], f, l);
  auto verify = [&](int64_t& errors, std::string& checksum) {
    int64_t bad = 0;
    uint64_t h = 0;
    if (!shared)
      for (int f = 0; f < nfields; ++f)
        for (int l = 0; l < nlevels; ++l)
          for (int64_t p = 0; p < nd; ++p) {
            double v = static_cast<double*>(dst[f])[l * nd + p];
            if (v != ref_value(lay.dst[p], f, l)) ++bad;
            uint64_t bits;
            std::memcpy(&bits, &v, 8);
            h += mix64(mix64(static_cast<uint64_t>(lay.dst[p]) * 4096 + f * 64 + l) ^ bits);
          }
    uint64_t gh = 0;
    MPI_Allreduce(&h, &gh, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(&bad, &errors, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
    char hex[32];
    std::snprintf(hex, sizeof hex, "%016" PRIx64, gh);
    checksum = shared ? "n/a (shared buffers)" : hex;
    if (shared) errors = -1;
  };

  std::vector<int> methods;
  if (which == "all") {
    methods = {ISTHMUS_METHOD_P2P, ISTHMUS_METHOD_ALLTOALLV};
#ifndef ISTHMUS_SMPI
    methods.push_back(ISTHMUS_METHOD_NEIGHBOR);
#endif
  } else if (which == "p2p") methods = {ISTHMUS_METHOD_P2P};
  else if (which == "alltoallv") methods = {ISTHMUS_METHOD_ALLTOALLV};
  else if (which == "neighbor") methods = {ISTHMUS_METHOD_NEIGHBOR};
  else if (which == "auto") methods = {ISTHMUS_METHOD_AUTO};
  else if (which == "compare") methods = {};  // below
  else {
    if (me == 0) std::fprintf(stderr, "bench_redist: unknown --method %s\n", which.c_str());
    MPI_Abort(MPI_COMM_WORLD, 2);
  }

  std::vector<int> types(nfields, ISTHMUS_DOUBLE), levels(nfields, nlevels);
  const double bytes_total = static_cast<double>(sm[2]) * nfields * nlevels * 8;
  for (int m : methods) {
    // Redistribution set-up: schedules, buffers and a communicator built from the map. As for
    // the map, each repetition destroys the previous one and creates one; the last is exchanged.
    isthmus_redist* r = nullptr;
    bench::Stats create = bench::time_collective(MPI_COMM_WORLD, reps, [&] {
      if (r) isthmus_redist_destroy(&r);
      CHECK(ctx, isthmus_redist_create(ctx, x, nfields, types.data(), levels.data(), m, &r));
    });
    if (me == 0) {
      bench::Json j;
      base(j, "redist_setup").str("method", method_name(m)).stats("", create).print();
    }
    isthmus_redist_exchange(r, src.data(), dst.data());  // warm-up
    isthmus_redist_set_tracing(r, 1);
    isthmus_redist_reset_counters(r);
    bench::Stats st = bench::time_collective(MPI_COMM_WORLD, reps, [&] {
      CHECK(ctx, isthmus_redist_exchange(r, src.data(), dst.data()));
    });
    isthmus_trace_counters c;
    isthmus_redist_get_counters(r, &c);
    int64_t msgs = 0, my = c.messages_sent / std::max<int64_t>(c.exchanges, 1);
    MPI_Allreduce(&my, &msgs, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
    int64_t errors = 0;
    std::string checksum;
    verify(errors, checksum);
    if (me == 0) {
      bench::Json j;
      base(j, "exchange").str("method", method_name(m)).stats("", st).integer("messages_per_exchange", msgs)
          .num("bytes_per_exchange", bytes_total).str("checksum", checksum).integer("errors", errors).print();
    }
    isthmus_redist_destroy(&r);
  }

  if (which == "compare") {
    // auto against every fixed method, side by side: one redistribution each, auto warmed up
    // until it has decided, then rounds in which every method exchanges once (in an order
    // shuffled from round to round), each exchange timed by the collective rule; a noisy spell
    // so hits all methods alike.
    // A second p2p redistribution ("p2p-twin") is the control: two instances of one method
    // differ only by the noise (and by where their buffers lie), which bounds what a comparison
    // of methods can tell.
    std::vector<int> ms = {ISTHMUS_METHOD_P2P, ISTHMUS_METHOD_ALLTOALLV};
#ifndef ISTHMUS_SMPI
    ms.push_back(ISTHMUS_METHOD_NEIGHBOR);
#endif
    const size_t nfixed = ms.size();
    ms.push_back(ISTHMUS_METHOD_AUTO);
    const size_t auto_k = ms.size() - 1;
    ms.push_back(ISTHMUS_METHOD_P2P);
    const size_t twin_k = ms.size() - 1;
    std::vector<isthmus_redist*> rs(ms.size(), nullptr);
    for (size_t k = 0; k < ms.size(); ++k)
      CHECK(ctx, isthmus_redist_create(ctx, x, nfields, types.data(), levels.data(), ms[k], &rs[k]));
    isthmus_redist* a = rs[auto_k];
    isthmus_transfer_plan plan{};
    int warmup = 0;
    for (;;) {
      CHECK(ctx, isthmus_redist_exchange(a, src.data(), dst.data()));
      ++warmup;
      CHECK(ctx, isthmus_redist_get_plan(a, 0, &plan));
      if (plan.decided) break;
    }
    for (isthmus_redist* r : rs) CHECK(ctx, isthmus_redist_exchange(r, src.data(), dst.data()));
    // The order is a fresh permutation each round, the same on every rank (a seeded generator):
    // a rotation made each method always follow the same one, and the one after a collective
    // (the ranks leave it together) ran up to 24 % faster than the same method elsewhere.
    std::vector<std::vector<double>> samples(ms.size());
    std::vector<size_t> order(ms.size());
    std::mt19937 shuffle_rng(12345);
    for (int round = 0; round < reps; ++round) {
      std::iota(order.begin(), order.end(), size_t{0});
      std::shuffle(order.begin(), order.end(), shuffle_rng);
      for (size_t i = 0; i < ms.size(); ++i) {
        const size_t k = order[i];
        bench::Stats one = bench::time_collective(MPI_COMM_WORLD, 1, [&] {
          CHECK(ctx, isthmus_redist_exchange(rs[k], src.data(), dst.data()));
        });
        samples[k].push_back(one.median);
      }
    }
    int64_t errors = 0;
    std::string checksum;
    verify(errors, checksum);  // the last exchange's values (a fixed method's or auto's)
    double best = 0;
    size_t best_k = 0;
    for (size_t k = 0; k < nfixed; ++k) {
      const double med = bench::stats(samples[k]).median;
      if (k == 0 || med < best) {
        best = med;
        best_k = k;
      }
    }
    // Paired: the median over rounds of a method's time over another's in the same round. A
    // slow spell (another process given the cores, the cache) hits one round's methods alike,
    // so the per-round ratio cancels what the ratio of two medians keeps.
    auto paired = [&](size_t k, size_t over) {
      std::vector<double> r;
      for (size_t i = 0; i < samples[k].size(); ++i) r.push_back(samples[k][i] / samples[over][i]);
      return bench::stats(r).median;
    };
    std::string chosen = "p2p";
    if (plan.collective == ISTHMUS_METHOD_ALLTOALLV) chosen = "alltoallv";
    else if (plan.collective == ISTHMUS_METHOD_NEIGHBOR) chosen = "neighbor";
    else if (plan.nruns > 1) {
      chosen.clear();
      for (int i = 0; i < plan.nruns; ++i) chosen += (i ? "," : "") + std::to_string(plan.runs[i]);
    }
    if (me == 0)
      for (size_t k = 0; k < ms.size(); ++k) {
        bench::Json j;
        base(j, "compare").str("method", k == twin_k ? "p2p-twin" : method_name(ms[k]))
            .stats("", bench::stats(samples[k]))
            .num("ratio_to_best_fixed", bench::stats(samples[k]).median / best)
            .str("best_fixed", method_name(ms[best_k]))
            .num("paired_ratio_to_best_fixed", paired(k, best_k))
            .num("paired_ratio_to_p2p", paired(k, 0));
        if (k == auto_k) j.str("auto_chose", chosen).integer("warmup_exchanges", warmup);
        if (k == twin_k) j.num("ratio_to_p2p", bench::stats(samples[k]).median / bench::stats(samples[0]).median);
        std::string all = "[";
        for (size_t i = 0; i < samples[k].size(); ++i) {
          char b[32];
          std::snprintf(b, sizeof b, "%s%.9g", i ? ", " : "", samples[k][i]);
          all += b;
        }
        j.raw("samples_s", all + "]");
        j.str("checksum", checksum).integer("errors", errors).print();
      }
    for (isthmus_redist*& r : rs) isthmus_redist_destroy(&r);
  }

  if (args.flag("separate")) {
    // The same fields as one redistribution each, exchanged one after the other.
    std::vector<isthmus_redist*> rs(nfields);
    int t = ISTHMUS_DOUBLE;
    for (int f = 0; f < nfields; ++f)
      CHECK(ctx, isthmus_redist_create(ctx, x, 1, &t, &nlevels, ISTHMUS_METHOD_P2P, &rs[f]));
    auto all = [&] {
      for (int f = 0; f < nfields; ++f) CHECK(ctx, isthmus_redist_exchange(rs[f], &src[f], &dst[f]));
    };
    all();
    bench::Stats st = bench::time_collective(MPI_COMM_WORLD, reps, all);
    int64_t errors = 0;
    std::string checksum;
    verify(errors, checksum);
    if (me == 0) {
      bench::Json j;
      base(j, "separate-fields").str("method", "p2p").stats("", st)
          .integer("messages_per_exchange", sm[0] * nfields).num("bytes_per_exchange", bytes_total)
          .str("checksum", checksum).integer("errors", errors).print();
    }
    for (auto& r : rs) isthmus_redist_destroy(&r);
  }

  for (int f = 0; f < nfields; ++f) {
    bench::free_field(src[f]);
    bench::free_field(dst[f]);
  }
  isthmus_xmap_destroy(&x);
  isthmus_decomp_destroy(&sd);
  isthmus_decomp_destroy(&dd);
  isthmus_context_destroy(&ctx);
  MPI_Finalize();
  return 0;
}
