// C API of the foundation layers: context, index, xmap, transfer, trace.
#include <optional>

#include "base/comm.h"
#include "base/agreement.h"
#include "capi/handles.h"

using namespace isthmus;

namespace {

ContextState* state_of(isthmus_context* c) { return c ? c->state.get() : nullptr; }

XmapOptions to_options(const isthmus_xmap_options* o) {
  XmapOptions x;
  if (!o) return x;
  if (o->unowned != ISTHMUS_UNOWNED_ERROR && o->unowned != ISTHMUS_UNOWNED_FILL)
    fail(ISTHMUS_ERR_ARG, "options.unowned is ", o->unowned,
         " (0 ISTHMUS_UNOWNED_ERROR, 1 ISTHMUS_UNOWNED_FILL)");
  x.fill_unowned = o->unowned == ISTHMUS_UNOWNED_FILL;
  x.fill_value = o->fill_value;
  x.warn_duplicates = o->warn_duplicates != 0;
  if (o->combine != ISTHMUS_COMBINE_LOWEST && o->combine != ISTHMUS_COMBINE_SUM)
    fail(ISTHMUS_ERR_ARG, "options.combine is ", o->combine,
         " (0 ISTHMUS_COMBINE_LOWEST, 1 ISTHMUS_COMBINE_SUM)");
  x.combine = o->combine == ISTHMUS_COMBINE_SUM ? Combine::Sum : Combine::Lowest;
  return x;
}

// The local checks of both map constructors, recorded in the agreement.
XmapOptions map_checks(Agreement& agreement, isthmus_xmap** xmap, const isthmus_xmap_options* opt) {
  XmapOptions o;
  agreement.check([&] {
    require(xmap, "xmap (the output pointer)");
    *xmap = nullptr;
    o = to_options(opt);
  });
  return o;
}

template <typename Make>
int make_decomp(isthmus_context* ctx, isthmus_decomp** out, const char* fn, Make&& make) {
  ISTHMUS_REQUIRE_HANDLE(ctx);
  return guarded(state_of(ctx), fn, [&] {
    require(out, "output handle pointer");
    *out = nullptr;
    ctx->state->usable_comm();
    *out = new isthmus_decomp{ctx->state, make()};
  });
}

}  // namespace

extern "C" {

int isthmus_context_create(MPI_Comm comm, isthmus_context** ctx) {
  auto st = std::make_shared<ContextState>();
  // Until the communicator is known, messages name the rank in MPI_COMM_WORLD.
  MPI_Comm_rank(MPI_COMM_WORLD, &st->rank);
  int rc = guarded(st.get(), __func__, [&] {
    if (ctx) *ctx = nullptr;
    // A rank without a usable communicator cannot meet its peers: it fails alone.
    if (comm == MPI_COMM_NULL) fail(ISTHMUS_ERR_ARG, "comm is MPI_COMM_NULL");
    int inter = 0;
    ISTHMUS_MPI(MPI_Comm_test_inter(comm, &inter));
    if (inter)
      fail(ISTHMUS_ERR_ARG, "comm is an intercommunicator; a context needs an intracommunicator "
           "(maps between two groups take the intercommunicator: isthmus_xmap_create_inter)");
    st->comm = duplicate(comm);
    // Every communicator the library makes from this one inherits: MPI errors are returned.
    ISTHMUS_MPI(MPI_Comm_set_errhandler(st->comm, MPI_ERRORS_RETURN));
    ISTHMUS_MPI(MPI_Comm_rank(st->comm, &st->rank));
    ISTHMUS_MPI(MPI_Comm_size(st->comm, &st->size));
    Agreement agreement;
    agreement.check([&] { require(ctx, "ctx (the output pointer)"); });
    agreement.conclude(st->comm);
  });
  if (rc != ISTHMUS_OK) {
    // The caller still gets a handle, holding only the message (unless ctx itself is NULL).
    if (st->comm != MPI_COMM_NULL) MPI_Comm_free(&st->comm);
    st->creation_error = st->last_error;
  }
  if (ctx) *ctx = new isthmus_context{st};
  return rc;
}

int isthmus_context_create_f(MPI_Fint comm, isthmus_context** ctx) {
  return isthmus_context_create(MPI_Comm_f2c(comm), ctx);
}

int isthmus_context_destroy(isthmus_context** ctx) {
  ISTHMUS_REQUIRE_HANDLE(ctx);
  delete *ctx;
  *ctx = nullptr;
  return ISTHMUS_OK;
}

const char* isthmus_last_error(const isthmus_context* ctx) {
  if (!ctx) return "isthmus: the context is NULL";
  return ctx->state->last_error.c_str();
}

int isthmus_context_rank(const isthmus_context* ctx, int* rank, int* size) {
  ISTHMUS_REQUIRE_HANDLE(ctx);
  if (rank) *rank = ctx->state->rank;
  if (size) *size = ctx->state->size;
  return ISTHMUS_OK;
}

int isthmus_decomp_create_indices(isthmus_context* ctx, int64_t global_size, int64_t n,
                                  const int64_t* indices, isthmus_decomp** decomp) {
  return make_decomp(ctx, decomp, __func__,
                     [&] { return IndexList::from_indices(global_size, indices, n); });
}

int isthmus_decomp_create_segments(isthmus_context* ctx, int64_t global_size, int64_t nseg,
                                   const int64_t* starts, const int64_t* lengths,
                                   isthmus_decomp** decomp) {
  return make_decomp(ctx, decomp, __func__,
                     [&] { return IndexList::from_segments(global_size, starts, lengths, nseg); });
}

int isthmus_decomp_create_box(isthmus_context* ctx, int64_t global_size, int64_t offset,
                              int64_t local_nx, int64_t local_ny, int64_t global_nx,
                              isthmus_decomp** decomp) {
  return make_decomp(ctx, decomp, __func__, [&] {
    return IndexList::from_box(global_size, offset, local_nx, local_ny, global_nx);
  });
}

int isthmus_decomp_create_oasis(isthmus_context* ctx, int64_t global_size, const int* ig_paral,
                                int n, isthmus_decomp** decomp) {
  return make_decomp(ctx, decomp, __func__,
                     [&] { return IndexList::from_oasis(global_size, ig_paral, n); });
}

int isthmus_decomp_destroy(isthmus_decomp** decomp) {
  ISTHMUS_REQUIRE_HANDLE(decomp);
  delete *decomp;
  *decomp = nullptr;
  return ISTHMUS_OK;
}

int isthmus_decomp_info(const isthmus_decomp* d, int64_t* local_size, int64_t* num_segments,
                        int64_t* global_size) {
  ISTHMUS_REQUIRE_HANDLE(d);
  if (local_size) *local_size = d->list.size();
  if (num_segments) *num_segments = static_cast<int64_t>(d->list.segments().size());
  if (global_size) *global_size = d->list.global_size();
  return ISTHMUS_OK;
}

int isthmus_decomp_indices(const isthmus_decomp* d, int64_t* indices) {
  ISTHMUS_REQUIRE_HANDLE(d);
  return guarded(d->ctx.get(), __func__, [&] {
    if (d->list.size() > 0) require(indices, "indices");
    int64_t k = 0;
    for (const Segment& s : d->list.segments())
      for (int64_t i = 0; i < s.length; ++i) indices[k++] = s.start + i;
  });
}

int isthmus_xmap_options_init(isthmus_xmap_options* opt) {
  ISTHMUS_REQUIRE_HANDLE(opt);
  opt->unowned = ISTHMUS_UNOWNED_ERROR;
  opt->fill_value = 0.0;
  opt->warn_duplicates = 0;
  opt->combine = ISTHMUS_COMBINE_LOWEST;
  return ISTHMUS_OK;
}

int isthmus_xmap_create(isthmus_context* ctx, const isthmus_decomp* src, const isthmus_decomp* dst,
                        const isthmus_xmap_options* opt, isthmus_xmap** xmap) {
  ISTHMUS_REQUIRE_HANDLE(ctx);
  return guarded(state_of(ctx), __func__, [&] {
    MPI_Comm comm = ctx->state->usable_comm();
    Agreement agreement;
    XmapOptions o = map_checks(agreement, xmap, opt);
    auto x = std::make_shared<Xmap>(comm, src ? &src->list : nullptr, dst ? &dst->list : nullptr,
                                    o, agreement);
    *xmap = new isthmus_xmap{ctx->state, std::move(x)};
  });
}

int isthmus_xmap_create_inter(isthmus_context* ctx, MPI_Comm intercomm, const isthmus_decomp* src,
                              const isthmus_decomp* dst, const isthmus_xmap_options* opt,
                              isthmus_xmap** xmap) {
  ISTHMUS_REQUIRE_HANDLE(ctx);
  return guarded(state_of(ctx), __func__, [&] {
    ctx->state->usable_comm();
    Agreement agreement;
    XmapOptions o = map_checks(agreement, xmap, opt);
    auto x = Xmap::across(intercomm, src ? &src->list : nullptr, dst ? &dst->list : nullptr, o,
                          agreement);
    *xmap = new isthmus_xmap{ctx->state, std::move(x)};
    (*xmap)->inter = true;
  });
}

int isthmus_xmap_create_inter_f(isthmus_context* ctx, MPI_Fint intercomm,
                                const isthmus_decomp* src, const isthmus_decomp* dst,
                                const isthmus_xmap_options* opt, isthmus_xmap** xmap) {
  return isthmus_xmap_create_inter(ctx, MPI_Comm_f2c(intercomm), src, dst, opt, xmap);
}

int isthmus_xmap_destroy(isthmus_xmap** xmap) {
  ISTHMUS_REQUIRE_HANDLE(xmap);
  delete *xmap;
  *xmap = nullptr;
  return ISTHMUS_OK;
}

int isthmus_xmap_get_info(const isthmus_xmap* x, isthmus_xmap_info* info) {
  ISTHMUS_REQUIRE_HANDLE(x);
  return guarded(x->ctx.get(), __func__, [&] {
    require(info, "info");
    const Schedule& s = x->xmap->forward();
    info->send_peers = static_cast<int>(s.sends.size());
    info->recv_peers = static_cast<int>(s.recvs.size());
    info->send_points = s.send_points();
    info->recv_points = s.recv_points();
    info->self_points = s.copy_points();
    info->fill_points = s.fill_points();
    info->global_duplicates = x->xmap->global_duplicates();
    info->global_unowned = x->xmap->global_unowned();
  });
}

int isthmus_redist_create(isthmus_context* ctx, const isthmus_xmap* xmap, int nfields,
                          const int* types, const int* nlevels, int method,
                          isthmus_redist** redist) {
  ISTHMUS_REQUIRE_HANDLE(ctx);
  return guarded(state_of(ctx), __func__, [&] {
    // A rank given a NULL map still meets its peers over the context's communicator.
    MPI_Comm comm = xmap ? xmap->agreement_comm() : ctx->state->usable_comm();
    Agreement agreement;
    std::vector<FieldSpec> fields;
    agreement.check([&] {
      require(redist, "redist (the output pointer)");
      *redist = nullptr;
      require(xmap, "xmap");
      if (nfields < 1) fail(ISTHMUS_ERR_ARG, "nfields is ", nfields, "; at least 1 needed");
      require(types, "types");
      require(nlevels, "nlevels");
      if (method < ISTHMUS_METHOD_AUTO || method > ISTHMUS_METHOD_ADAPTIVE)
        fail(ISTHMUS_ERR_ARG, "method is ", method,
             " (0 auto, 1 p2p, 2 alltoallv, 3 neighbor, 4 butterfly, 5 adaptive)");
      fields.resize(nfields);
      for (int f = 0; f < nfields; ++f) fields[f] = {static_cast<DataType>(types[f]), nlevels[f]};
    });
    const bool arrays = nfields > 0 && types && nlevels;
    agreement.match("nfields", nfields);
    agreement.match("method", method);
    agreement.match_hash("the field types", arrays ? std::optional<uint64_t>(hash_values(types, nfields)) : std::nullopt);
    agreement.match_hash("the field levels", arrays ? std::optional<uint64_t>(hash_values(nlevels, nfields)) : std::nullopt);
    if (agreement.failed()) agreement.conclude(comm);  // no map to build on: throws everywhere
    auto r = std::make_unique<Redist>(xmap->xmap, std::move(fields), static_cast<Method>(method),
                                      agreement, comm);
    *redist = new isthmus_redist{ctx->state, std::move(r)};
  });
}

int isthmus_redist_destroy(isthmus_redist** redist) {
  ISTHMUS_REQUIRE_HANDLE(redist);
  delete *redist;
  *redist = nullptr;
  return ISTHMUS_OK;
}

int isthmus_redist_exchange(isthmus_redist* r, const void* const* src, void* const* dst) {
  ISTHMUS_REQUIRE_HANDLE(r);
  return guarded(r->ctx.get(), __func__, [&] { r->redist->exchange(src, dst); });
}

int isthmus_redist_exchange_reverse(isthmus_redist* r, const void* const* dst, void* const* src) {
  ISTHMUS_REQUIRE_HANDLE(r);
  return guarded(r->ctx.get(), __func__, [&] { r->redist->exchange_reverse(dst, src); });
}

int isthmus_redist_start(isthmus_redist* r, int direction, const void* const* in, void* const* out) {
  ISTHMUS_REQUIRE_HANDLE(r);
  return guarded(r->ctx.get(), __func__, [&] {
    r->redist->start(direction, in, out);
  });
}

int isthmus_redist_wait(isthmus_redist* r) {
  ISTHMUS_REQUIRE_HANDLE(r);
  return guarded(r->ctx.get(), __func__, [&] { r->redist->wait(); });
}

int isthmus_redist_set_tracing(isthmus_redist* r, int on) {
  ISTHMUS_REQUIRE_HANDLE(r);
  r->redist->trace().set_on(on != 0);
  return ISTHMUS_OK;
}

int isthmus_redist_get_counters(const isthmus_redist* r, isthmus_trace_counters* out) {
  ISTHMUS_REQUIRE_HANDLE(r);
  return guarded(r->ctx.get(), __func__, [&] {
    require(out, "counters");
    to_public(r->redist->trace().counters(), out);
  });
}

int isthmus_redist_reset_counters(isthmus_redist* r) {
  ISTHMUS_REQUIRE_HANDLE(r);
  r->redist->trace().reset();
  return ISTHMUS_OK;
}

int isthmus_redist_method(const isthmus_redist* r, int* method) {
  ISTHMUS_REQUIRE_HANDLE(r);
  return guarded(r->ctx.get(), __func__, [&] {
    require(method, "method");
    *method = static_cast<int>(r->redist->method());
  });
}

}  // extern "C"
