// Seed 001 sect. 5 experiments: p2p, butterfly and adaptive transfer side by side.
//
//   bench_transfer --case toy|random|gamil|cesm|interp --ranks-per-model M
//                  [--msgs K] [--fields F] [--reps 5] [--methods p2p,butterfly,adaptive]
//                  [--plan-cache FILE] [--seed S] [--points N (toy/random grid size)]
//
// Cases (sender ranks [0, M), receiver ranks [M, 2M): the world must have 2M ranks; interp
// rearranges within one model, on [0, M) for both sides):
//   toy     192x480 grid, Algorithm 1 balanced, K messages per sender (Figs. 15-17), 10 fields
//   random  96 points per rank, Algorithm 1 random, K = 34 on average (Fig. 18), 20 fields
//   gamil   128x60, CLM3 round-robin -> GAMIL2 2-D blocks (Fig. 20), 14 fields
//   cesm    144x96, CLM4 clumps of 4 points dealt round-robin -> CPL7 1-D blocks (Fig. 19), 32 fields
//   interp  144x96, 2-D blocks -> transposed 2-D blocks on the same ranks (sect. 5.4, Fig. 21), 10 fields
// Prints one JSON object per method: the steady-state exchange time (median/min/max over reps,
// slowest rank), the plan, messages per rank of p2p and of the method, and for adaptive the
// exchanges and time profiling took (with --plan-cache a second adaptive run reads the cache).
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "common/bench_util.h"
#include "common/grid_decompositions.h"
#include "isthmus.h"

namespace {

using bench::block1d;
using bench::block2d;
using bench::roundrobin;

struct Case {
  std::string name;
  int64_t n = 0;
  int fields = 10;
  bool has_src = false, has_dst = false;
  std::vector<int64_t> src, dst;
  isthmus_decomp *dsrc = nullptr, *ddst = nullptr;
};

void die(const char* what, isthmus_context* ctx) {
  std::fprintf(stderr, "bench_transfer: %s: %s\n", what, ctx ? isthmus_last_error(ctx) : "");
  MPI_Abort(MPI_COMM_WORLD, 2);
}

std::vector<int64_t> indices_of(isthmus_decomp* d) {
  int64_t len = 0;
  isthmus_decomp_info(d, &len, nullptr, nullptr);
  std::vector<int64_t> v(len);
  isthmus_decomp_indices(d, v.data());
  return v;
}

Case make_case(isthmus_context* ctx, const std::string& name, int M, double msgs, uint64_t seed,
               int64_t points) {
  int me = 0, W = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &W);
  Case c;
  c.name = name;
  const bool same_ranks = name == "interp";
  if ((same_ranks && W != M) || (!same_ranks && W != 2 * M)) {
    if (me == 0)
      std::fprintf(stderr, "bench_transfer: case %s with %d ranks per model needs %d ranks, not %d\n",
                   name.c_str(), M, same_ranks ? M : 2 * M, W);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const bool sender = me < M;
  const bool receiver = same_ranks ? true : me >= M;
  const int rpart = same_ranks ? me : me - M;
  c.has_src = sender;
  c.has_dst = receiver;
  if (name == "toy" || name == "random") {
    const bool balanced = name == "toy";
    c.n = balanced ? 192 * 480 : 96 * static_cast<int64_t>(M);
    if (points > 0) c.n = points;
    c.fields = balanced ? 10 : 20;
    int rc = ISTHMUS_OK;
    if (sender)
      rc = isthmus_decomp_create_generated(ctx, c.n, M, M, msgs, balanced, seed,
                                           ISTHMUS_GENERATED_SENDER, me, &c.dsrc);
    else
      rc = isthmus_decomp_create_generated(ctx, c.n, M, M, msgs, balanced, seed,
                                           ISTHMUS_GENERATED_RECEIVER, rpart, &c.ddst);
    if (rc != ISTHMUS_OK) die("Algorithm 1", ctx);
    if (sender) c.src = indices_of(c.dsrc);
    if (!sender) c.dst = indices_of(c.ddst);
    return c;
  }
  if (name == "gamil") {
    c.n = 128 * 60;
    c.fields = 14;
    if (sender)
      for (int64_t g = me; g < c.n; g += M) c.src.push_back(g);
    if (receiver) c.dst = block2d(128, 60, M, rpart, false);
  } else if (name == "cesm") {
    c.n = 144 * 96;
    c.fields = 32;
    const int clump = 4;
    if (sender)
      for (int64_t k = me; k * clump < c.n; k += M)
        for (int64_t g = k * clump; g < std::min<int64_t>(c.n, (k + 1) * clump); ++g) c.src.push_back(g);
    if (receiver) {
      auto b = block1d(c.n, M, rpart);
      for (int64_t i = 0; i < b.second; ++i) c.dst.push_back(b.first + i);
    }
  } else if (name == "interp") {
    c.n = 144 * 96;
    c.fields = 10;
    c.src = block2d(144, 96, M, me, false);
    c.dst = block2d(144, 96, M, me, true);
  } else {
    if (me == 0) std::fprintf(stderr, "bench_transfer: unknown case '%s'\n", name.c_str());
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  if (c.has_src &&
      isthmus_decomp_create_indices(ctx, c.n, static_cast<int64_t>(c.src.size()), c.src.data(), &c.dsrc))
    die("source decomposition", ctx);
  if (c.has_dst &&
      isthmus_decomp_create_indices(ctx, c.n, static_cast<int64_t>(c.dst.size()), c.dst.data(), &c.ddst))
    die("destination decomposition", ctx);
  return c;
}

struct Spread {
  double avg = 0, max = 0;
};
// Average and maximum over the ranks where `active` holds.
Spread spread(double v, bool active) {
  double in[2] = {active ? v : 0.0, active ? 1.0 : 0.0}, sum[2] = {0, 0};
  double mx = active ? v : 0.0, gmax = 0;
  MPI_Allreduce(in, sum, 2, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  MPI_Allreduce(&mx, &gmax, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return {sum[1] > 0 ? sum[0] / sum[1] : 0.0, gmax};
}

std::string plan_text(const isthmus_transfer_plan& p) {
  if (p.collective == ISTHMUS_METHOD_ALLTOALLV) return "alltoallv";
  if (p.collective == ISTHMUS_METHOD_NEIGHBOR) return "neighbor";
  std::string s;
  for (int i = 0; i < p.nruns; ++i) s += (i ? "," : "") + std::to_string(p.runs[i]);
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  auto [world, me, W] = bench::init(argc, argv);
  bench::Args args(argc, argv);
  const std::string kase = args.get("case", "toy");
  const int M = static_cast<int>(args.integer("ranks-per-model", 4));
  const double msgs = std::stod(args.get("msgs", kase == "random" ? "34" : "4"));
  const int reps = static_cast<int>(args.integer("reps", 5));
  const uint64_t seed = static_cast<uint64_t>(args.integer("seed", 1));
  const std::string methods = args.get("methods", "p2p,butterfly,adaptive");
  const std::string cache = args.get("plan-cache", "");

  isthmus_context* ctx = nullptr;
  if (isthmus_context_create(MPI_COMM_WORLD, &ctx)) die("context", nullptr);
  Case c = make_case(ctx, kase, M, msgs, seed, args.integer("points", 0));
  if (args.flag("fields")) c.fields = static_cast<int>(args.integer("fields", c.fields));

  isthmus_xmap* x = nullptr;
  double t0 = MPI_Wtime();
  if (isthmus_xmap_create(ctx, c.dsrc, c.ddst, nullptr, &x)) die("xmap", ctx);
  double xmap_s = MPI_Wtime() - t0;
  isthmus_xmap_info info;
  isthmus_xmap_get_info(x, &info);
  const bool sends = info.send_peers > 0;
  Spread p2p_msgs = spread(info.send_peers, c.has_src);
  const double bytes_per_point = 8.0 * c.fields;
  Spread p2p_bytes = spread(sends ? bytes_per_point * info.send_points / info.send_peers : 0.0, sends);

  // One allocation for all fields of both sides: under SMPI each shared allocation costs about
  // ten memory mappings, and 2048 ranks x 2 x 100 fields would exceed vm.max_map_count (65530).
  const size_t src_len = std::max<size_t>(c.src.size(), 1), dst_len = std::max<size_t>(c.dst.size(), 1);
  double* block =
      static_cast<double*>(bench::alloc_field(sizeof(double) * (src_len + dst_len) * c.fields));
  double* src_block = block;
  double* dst_block = block + src_len * c.fields;
  std::vector<void*> src(c.fields), dst(c.fields);
  for (int f = 0; f < c.fields; ++f) {
    src[f] = src_block + f * src_len;
    dst[f] = dst_block + f * dst_len;
  }
  std::vector<int> types(c.fields, ISTHMUS_DOUBLE), levels(c.fields, 1);

  auto run_method = [&](const std::string& name, int method, const char* cache_path,
                        const std::string& label) {
    MPI_Barrier(MPI_COMM_WORLD);
    double s0 = MPI_Wtime();
    isthmus_redist* r = nullptr;
    if (isthmus_redist_create(ctx, x, c.fields, types.data(), levels.data(), method, &r))
      die("redist", ctx);
    if (cache_path && isthmus_redist_set_plan_cache(r, cache_path)) die("plan cache", ctx);
    double setup = MPI_Wtime() - s0, setup_max = 0;
    MPI_Allreduce(&setup, &setup_max, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    auto exchange = [&] {
      if (isthmus_redist_exchange(r, c.has_src ? src.data() : nullptr, c.has_dst ? dst.data() : nullptr))
        die("exchange", ctx);
    };
    // Adaptive: the exchanges until the plan is chosen (they deliver data) are its setup.
    isthmus_transfer_plan plan{};
    int profiling = 0;
    double prof_s = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    double p0 = MPI_Wtime();
    for (;;) {
      isthmus_redist_get_plan(r, 0, &plan);
      if (plan.decided) break;
      exchange();
      ++profiling;
    }
    prof_s = MPI_Wtime() - p0;
    double prof_max = 0;
    MPI_Allreduce(&prof_s, &prof_max, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    exchange();  // warm-up of the chosen plan
    bench::Stats st = bench::time_collective(MPI_COMM_WORLD, reps, exchange);
    isthmus_redist_get_plan(r, 0, &plan);
    const bool active = plan.messages_sent > 0 || (plan.messages_sent < 0 && sends);
    Spread m = spread(plan.messages_sent >= 0 ? static_cast<double>(plan.messages_sent) : info.send_peers,
                      active);
    if (me == 0) {
      bench::Json j;
      j.str("bench", "transfer").str("case", kase).integer("ranks_per_model", M).integer("ranks", W)
          .integer("grid_points", c.n).integer("fields", c.fields).num("msgs_target", msgs)
          .num("p2p_msgs_avg", p2p_msgs.avg).num("p2p_msgs_max", p2p_msgs.max)
          .num("p2p_msg_bytes_avg", p2p_bytes.avg)
          .str("method", name).str("label", label).str("plan", plan_text(plan))
          .integer("stages", plan.stages).num("msgs_sent_avg", m.avg).num("msgs_sent_max", m.max)
          .num("xmap_s", xmap_s).num("setup_s", setup_max)
          .integer("profiling_exchanges", plan.profiling_exchanges)
          .integer("exchanges_until_decided", profiling).num("profiling_s", prof_max)
          .boolean("from_cache", plan.from_cache != 0)
          .boolean("simulated", bench::buffers_are_shared())
          .stats("", st);
      j.print();
    }
    isthmus_redist_destroy(&r);
  };

  auto want = [&](const std::string& m) { return ("," + methods + ",").find("," + m + ",") != std::string::npos; };
  if (want("p2p")) run_method("p2p", ISTHMUS_METHOD_P2P, nullptr, "p2p");
  if (want("butterfly")) run_method("butterfly", ISTHMUS_METHOD_BUTTERFLY, nullptr, "butterfly");
  if (want("adaptive")) {
    run_method("adaptive", ISTHMUS_METHOD_ADAPTIVE, cache.empty() ? nullptr : cache.c_str(), "adaptive");
    if (!cache.empty())
      run_method("adaptive", ISTHMUS_METHOD_ADAPTIVE, cache.c_str(), "adaptive-cached");
  }

  bench::free_field(block);
  isthmus_xmap_destroy(&x);
  if (c.dsrc) isthmus_decomp_destroy(&c.dsrc);
  if (c.ddst) isthmus_decomp_destroy(&c.ddst);
  isthmus_context_destroy(&ctx);
  MPI_Finalize();
  return 0;
}
