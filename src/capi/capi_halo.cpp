// C API of the decomp and halo layers: layouts (box decompositions) and halo exchanges.
#include <memory>
#include <optional>

#include "base/agreement.h"
#include "capi/handles.h"
#include "decomp/decomposition.h"
#include "halo/halo_exchange.h"

using namespace isthmus;

struct isthmus_layout {
  std::shared_ptr<ContextState> ctx;
  decomp::Decomposition d;
};
struct isthmus_halo {
  std::shared_ptr<ContextState> ctx;
  std::unique_ptr<halo::HaloExchange> x;
};

namespace {

void require_rank(const decomp::Decomposition& d, int rank) {
  if (rank < 0 || rank >= d.nranks())
    fail(ISTHMUS_ERR_ARG, "rank ", rank, " holds no subdomain (", d.nranks(), " subdomains)");
}

decomp::Options options(int halo, int boundary, const uint8_t* mask) {
  if (boundary < ISTHMUS_BOUNDARY_CLOSED || boundary > ISTHMUS_BOUNDARY_FOLD_F)
    fail(ISTHMUS_ERR_ARG, "boundary is ", boundary,
         " (0 closed, 1 periodic-ew, 2 biperiodic, 3 fold-t, 4 fold-f)");
  decomp::Options o;
  o.halo = halo;
  o.boundary = static_cast<decomp::Boundary>(boundary);
  o.ocean_mask = mask;
  return o;
}

template <typename Make>
int make_layout(isthmus_context* ctx, isthmus_layout** out, const char* fn, Make&& make) {
  ISTHMUS_REQUIRE_HANDLE(ctx);
  return guarded(ctx->state.get(), fn, [&] {
    require(out, "output handle pointer");
    *out = nullptr;
    *out = new isthmus_layout{ctx->state, make()};
  });
}

}  // namespace

extern "C" {

int isthmus_layout_create_optimal(isthmus_context* ctx, int64_t nx, int64_t ny, int nprocs,
                                  int halo, int boundary, const uint8_t* ocean_mask,
                                  int keep_land_for_surplus, isthmus_layout** layout) {
  return make_layout(ctx, layout, __func__, [&] {
    decomp::Options o = options(halo, boundary, ocean_mask);
    o.keep_land_for_surplus = keep_land_for_surplus != 0;
    return decomp::Decomposition::optimal(nx, ny, nprocs, o);
  });
}

int isthmus_layout_create_regular(isthmus_context* ctx, int64_t nx, int64_t ny, int ni, int nj,
                                  int halo, int boundary, const uint8_t* ocean_mask,
                                  isthmus_layout** layout) {
  return make_layout(ctx, layout, __func__, [&] {
    return decomp::Decomposition::regular(nx, ny, ni, nj, options(halo, boundary, ocean_mask));
  });
}

int isthmus_layout_destroy(isthmus_layout** layout) {
  ISTHMUS_REQUIRE_HANDLE(layout);
  delete *layout;
  *layout = nullptr;
  return ISTHMUS_OK;
}

int isthmus_layout_get_info(const isthmus_layout* l, isthmus_layout_info* info) {
  ISTHMUS_REQUIRE_HANDLE(l);
  return guarded(l->ctx.get(), __func__, [&] {
    require(info, "info");
    const decomp::Decomposition& d = l->d;
    info->nx = d.nx();
    info->ny = d.ny();
    info->ni = d.ni();
    info->nj = d.nj();
    info->nsubdomains = d.nranks();
    info->land_removed = d.land_blocks_removed();
    info->halo = d.halo();
    info->boundary = static_cast<int>(d.boundary());
    info->largest_subdomain = d.largest_subdomain();
  });
}

int isthmus_layout_warning(const isthmus_layout* l, const char** message) {
  ISTHMUS_REQUIRE_HANDLE(l);
  return guarded(l->ctx.get(), __func__, [&] {
    require(message, "message");
    *message = l->d.warning().c_str();
  });
}

int isthmus_layout_box(const isthmus_layout* l, int rank, int64_t box[4]) {
  ISTHMUS_REQUIRE_HANDLE(l);
  return guarded(l->ctx.get(), __func__, [&] {
    require(box, "box");
    decomp::Box b = l->d.box(rank);
    box[0] = b.i0;
    box[1] = b.j0;
    box[2] = b.ni;
    box[3] = b.nj;
  });
}

int isthmus_layout_neighbours(const isthmus_layout* l, int rank, int neighbours[8]) {
  ISTHMUS_REQUIRE_HANDLE(l);
  return guarded(l->ctx.get(), __func__, [&] {
    require(neighbours, "neighbours");
    require_rank(l->d, rank);
    auto n = l->d.neighbours(rank);
    for (int k = 0; k < 8; ++k) neighbours[k] = n[k];
  });
}

int isthmus_layout_block_ranks(const isthmus_layout* l, int* ranks) {
  ISTHMUS_REQUIRE_HANDLE(l);
  return guarded(l->ctx.get(), __func__, [&] {
    require(ranks, "ranks");
    for (int bj = 0; bj < l->d.nj(); ++bj)
      for (int bi = 0; bi < l->d.ni(); ++bi)
        ranks[bj * l->d.ni() + bi] = l->d.rank_of_block(bi, bj);
  });
}

int isthmus_layout_starts(const isthmus_layout* l, int64_t* i_starts, int64_t* j_starts) {
  ISTHMUS_REQUIRE_HANDLE(l);
  return guarded(l->ctx.get(), __func__, [&] {
    // Either output may be NULL (documented).
    if (i_starts)
      for (size_t k = 0; k < l->d.i_starts().size(); ++k) i_starts[k] = l->d.i_starts()[k];
    if (j_starts)
      for (size_t k = 0; k < l->d.j_starts().size(); ++k) j_starts[k] = l->d.j_starts()[k];
  });
}

int isthmus_layout_place_on_nodes(isthmus_layout* l, int cores_per_node, int tile[2]) {
  ISTHMUS_REQUIRE_HANDLE(l);
  return guarded(l->ctx.get(), __func__, [&] {
    auto t = l->d.place_on_nodes(cores_per_node);
    if (tile) {
      tile[0] = t[0];
      tile[1] = t[1];
    }
  });
}

int isthmus_layout_internode_fraction(const isthmus_layout* l, int cores_per_node,
                                      double* fraction) {
  ISTHMUS_REQUIRE_HANDLE(l);
  return guarded(l->ctx.get(), __func__, [&] {
    require(fraction, "fraction");
    *fraction = l->d.internode_fraction(cores_per_node);
  });
}

int isthmus_halo_create(isthmus_context* ctx, const isthmus_layout* layout, int halo_width,
                        int nfields, const isthmus_halo_field* fields, int method,
                        double fill_value, isthmus_halo** out) {
  ISTHMUS_REQUIRE_HANDLE(ctx);
  return guarded(ctx->state.get(), __func__, [&] {
    // Collective (docs/errors.md): this function's own checks join the agreement of the core
    // constructor, which checks the rest, compares what must match and reduces once.
    Agreement a;
    std::vector<halo::HaloField> f;
    std::unique_ptr<isthmus_halo> handle;  // allocated before the reduction
    a.check([&] {
      require(out, "output handle pointer");
      *out = nullptr;
      ctx->state->usable_comm();
      require(layout, "layout");
      if (nfields < 1) fail(ISTHMUS_ERR_ARG, "nfields is ", nfields, "; at least 1 needed");
      require(fields, "fields");
      f.resize(nfields);
      // Out-of-range enumerators are caught by the core's checks, with the field's number.
      for (int k = 0; k < nfields; ++k)
        f[k] = {static_cast<halo::PointType>(fields[k].point), fields[k].nlevels, fields[k].sign,
                static_cast<DataType>(fields[k].type)};
      handle = std::make_unique<isthmus_halo>();
      handle->ctx = ctx->state;
    });
    // Throws on every rank if any rank failed above or in the core's checks.
    auto x = std::make_unique<halo::HaloExchange>(
        a, ctx->state->comm, layout && !a.failed() ? &layout->d : nullptr, halo_width,
        std::move(f), static_cast<halo::HaloMethod>(method), fill_value);
    handle->x = std::move(x);
    *out = handle.release();
  });
}

int isthmus_halo_destroy(isthmus_halo** h) {
  ISTHMUS_REQUIRE_HANDLE(h);
  delete *h;
  *h = nullptr;
  return ISTHMUS_OK;
}

int isthmus_halo_exchange(isthmus_halo* h, void* const* arrays) {
  ISTHMUS_REQUIRE_HANDLE(h);
  return guarded(h->ctx.get(), __func__, [&] { h->x->exchange(arrays); });
}

int isthmus_halo_local_shape(const isthmus_halo* h, int64_t box[4], int64_t* extent_i,
                             int64_t* extent_j) {
  ISTHMUS_REQUIRE_HANDLE(h);
  // Any output may be NULL (documented).
  const decomp::Box& b = h->x->box();
  if (box) {
    box[0] = b.i0;
    box[1] = b.j0;
    box[2] = b.ni;
    box[3] = b.nj;
  }
  if (extent_i) *extent_i = h->x->extent_i();
  if (extent_j) *extent_j = h->x->extent_j();
  return ISTHMUS_OK;
}

int isthmus_halo_method(const isthmus_halo* h, int* method, int* messages_per_exchange) {
  ISTHMUS_REQUIRE_HANDLE(h);
  // Either output may be NULL, as for isthmus_halo_local_shape.
  if (method) *method = static_cast<int>(h->x->method());
  if (messages_per_exchange) *messages_per_exchange = h->x->messages_per_exchange();
  return ISTHMUS_OK;
}

int isthmus_halo_set_tracing(isthmus_halo* h, int on) {
  ISTHMUS_REQUIRE_HANDLE(h);
  h->x->trace().set_on(on != 0);
  return ISTHMUS_OK;
}

int isthmus_halo_get_counters(const isthmus_halo* h, isthmus_trace_counters* out) {
  ISTHMUS_REQUIRE_HANDLE(h);
  return guarded(h->ctx.get(), __func__, [&] {
    require(out, "counters");
    to_public(h->x->trace().counters(), out);
  });
}

}  // extern "C"
