// C API of the butterfly and adaptive transfer (plan cache, plan query, Algorithm 1 generator)
// and of the wait timeout.
#include "capi/handles.h"
#include "transfer/adaptive.h"
#include "transfer/butterfly.h"
#include "transfer/decomp_generator.h"

using namespace isthmus;

namespace {

void fill_runs(isthmus_transfer_plan* out, const Plan& plan) {
  if (const Method m = collective_of(plan); m != Method::Auto) {
    out->collective = static_cast<int>(m);
    out->nruns = 0;
    return;
  }
  if (plan.size() > static_cast<size_t>(ISTHMUS_PLAN_MAX_RUNS))
    fail(ISTHMUS_ERR_INTERNAL, "plan with ", plan.size(), " runs exceeds ISTHMUS_PLAN_MAX_RUNS");
  out->nruns = static_cast<int>(plan.size());
  for (size_t i = 0; i < plan.size(); ++i) out->runs[i] = plan[i];
}

}  // namespace

extern "C" {

int isthmus_redist_set_plan_cache(isthmus_redist* r, const char* path) {
  ISTHMUS_REQUIRE_HANDLE(r);
  return guarded(r->ctx.get(), __func__, [&] {
    int adaptive = 0;
    for (bool reverse : {false, true}) {
      if (auto* a = dynamic_cast<AdaptiveExecutor*>(&r->redist->executor(reverse))) {
        a->set_cache_path(path ? path : "");
        ++adaptive;
      }
    }
    if (adaptive == 0)
      fail(ISTHMUS_ERR_ARG, "the redistribution uses method '", method_name(r->redist->method()),
           "'; a plan cache needs method adaptive (", static_cast<int>(Method::Adaptive), ")");
  });
}

int isthmus_redist_set_wait_timeout(isthmus_redist* r, double seconds) {
  ISTHMUS_REQUIRE_HANDLE(r);
  return guarded(r->ctx.get(), __func__, [&] { r->redist->set_wait_timeout(seconds); });
}

int isthmus_redist_get_plan(const isthmus_redist* r, int reverse, isthmus_transfer_plan* out) {
  ISTHMUS_REQUIRE_HANDLE(r);
  return guarded(r->ctx.get(), __func__, [&] {
    require(out, "plan");
    if (reverse != 0 && reverse != 1)
      fail(ISTHMUS_ERR_ARG, "reverse is ", reverse, " (0 forward, 1 reverse)");
    *out = isthmus_transfer_plan{};
    out->method = static_cast<int>(r->redist->method());
    out->decided = 1;
    out->messages_sent = -1;
    out->bytes_sent = -1;
    const Executor& ex = r->redist->executor(reverse == 1);
    if (auto* b = dynamic_cast<const ButterflyExecutor*>(&ex)) {
      out->stages = static_cast<int>(round_bounds(b->plan()).back());
      fill_runs(out, b->plan());
      out->messages_sent = b->messages_sent();
      out->bytes_sent = b->bytes_sent();
    } else if (auto* a = dynamic_cast<const AdaptiveExecutor*>(&ex)) {
      out->decided = a->decided() ? 1 : 0;
      out->from_cache = a->from_cache() ? 1 : 0;
      out->profiling_exchanges = a->profiling_exchanges();
      out->stages = a->stages();
      fill_runs(out, a->plan());
      if (const ButterflyExecutor* c = a->chosen()) {
        out->messages_sent = c->messages_sent();
        out->bytes_sent = c->bytes_sent();
      } else if (a->decided()) {  // p2p or a collective: the schedule's own messages
        out->messages_sent = static_cast<int64_t>(a->layout().send_peers.size());
        out->bytes_sent = static_cast<int64_t>(a->layout().send_total());
      }
    }
  });
}

int isthmus_decomp_create_generated(isthmus_context* ctx, int64_t grid_points, int senders,
                                    int receivers, double avg_send_msgs, int balanced,
                                    uint64_t seed, int side, int part, isthmus_decomp** decomp) {
  ISTHMUS_REQUIRE_HANDLE(ctx);
  return guarded(ctx->state.get(), __func__, [&] {
    require(decomp, "output handle pointer");
    *decomp = nullptr;
    ctx->state->usable_comm();
    if (side != ISTHMUS_GENERATED_SENDER && side != ISTHMUS_GENERATED_RECEIVER)
      fail(ISTHMUS_ERR_ARG, "side is ", side, " (0 ISTHMUS_GENERATED_SENDER, 1 ISTHMUS_GENERATED_RECEIVER)");
    const int count = side == ISTHMUS_GENERATED_SENDER ? senders : receivers;
    if (part < 0 || part >= count)
      fail(ISTHMUS_ERR_ARG, "part ", part, " is outside 0..", count - 1, " (",
           side == ISTHMUS_GENERATED_SENDER ? "senders" : "receivers", ")");
    GeneratorParams p;
    p.grid_points = grid_points;
    p.senders = senders;
    p.receivers = receivers;
    p.avg_send_msgs = avg_send_msgs;
    p.balanced = balanced != 0;
    p.seed = seed;
    GeneratedDecomposition g = generate_decomposition(p);
    const std::vector<int64_t>& idx =
        side == ISTHMUS_GENERATED_SENDER ? g.sender[part] : g.receiver[part];
    *decomp = new isthmus_decomp{ctx->state, IndexList::from_indices(
                                                 grid_points, idx.data(),
                                                 static_cast<int64_t>(idx.size()))};
  });
}

}  // extern "C"
