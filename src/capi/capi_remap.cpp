// C API of the remap layer: mappings (sparse matrices fused with the transfer) and CONSERV.
#include <optional>

#include "base/agreement.h"
#include "capi/handles.h"
#include "remap/mapping.h"
#include "remap/weights_gen.h"

using namespace isthmus;
using namespace isthmus::remap;

struct isthmus_mapping {
  std::shared_ptr<ContextState> ctx;
  std::unique_ptr<Mapping> m;
};

namespace {

// The local checks of the options and the field list, recorded in the agreement.
MappingOptions mapping_options(Agreement& agreement, const isthmus_mapping_options* o, int nfields,
                               const int* nlevels) {
  MappingOptions mo;
  agreement.check([&] {
    if (nfields < 1) fail(ISTHMUS_ERR_ARG, "nfields is ", nfields, "; at least 1 needed");
    require(nlevels, "nlevels");
    mo.nlevels.assign(nlevels, nlevels + nfields);
    if (!o) return;
    if (o->side < ISTHMUS_SIDE_DST || o->side > ISTHMUS_SIDE_AUTO)
      fail(ISTHMUS_ERR_ARG, "options.side is ", o->side, " (0 dst, 1 src, 2 auto)");
    if (o->method < ISTHMUS_METHOD_AUTO || o->method > ISTHMUS_METHOD_ADAPTIVE)
      fail(ISTHMUS_ERR_ARG, "options.method is ", o->method,
           " (0 auto, 1 p2p, 2 alltoallv, 3 neighbor, 4 butterfly, 5 adaptive)");
    mo.side = static_cast<Side>(o->side);
    mo.method = static_cast<Method>(o->method);
    mo.keep_unmapped = o->keep_unmapped != 0;
    mo.fill_value = o->fill_value;
    mo.fused = o->unfused == 0;
  });
  return mo;
}

}  // namespace

extern "C" {

int isthmus_mapping_options_init(isthmus_mapping_options* opt) {
  ISTHMUS_REQUIRE_HANDLE(opt);
  opt->side = ISTHMUS_SIDE_DST;
  opt->method = ISTHMUS_METHOD_AUTO;
  opt->keep_unmapped = 0;
  opt->fill_value = 0.0;
  opt->unfused = 0;
  return ISTHMUS_OK;
}

int isthmus_mapping_create(isthmus_context* ctx, const isthmus_decomp* src,
                           const isthmus_decomp* dst, int64_t src_grid_size,
                           int64_t dst_grid_size, int64_t nlinks, const int64_t* numbers,
                           const int64_t* src_indices, const int64_t* dst_indices,
                           const double* weights, int nfields, const int* nlevels,
                           const isthmus_mapping_options* opt, isthmus_mapping** mapping) {
  ISTHMUS_REQUIRE_HANDLE(ctx);
  return guarded(ctx->state.get(), __func__, [&] {
    MPI_Comm comm = ctx->state->usable_comm();
    Agreement agreement;
    Links links;
    agreement.check([&] {
      require(mapping, "mapping (the output pointer)");
      *mapping = nullptr;
      if (nlinks < 0) fail(ISTHMUS_ERR_ARG, "nlinks is ", nlinks, "; it must not be negative");
      if (nlinks > 0) {
        require(numbers, "numbers");
        require(src_indices, "src_indices");
        require(dst_indices, "dst_indices");
        require(weights, "weights");
      }
      links.number.assign(numbers, numbers + nlinks);
      links.src.assign(src_indices, src_indices + nlinks);
      links.dst.assign(dst_indices, dst_indices + nlinks);
      links.weights.assign(weights, weights + nlinks);
    });
    MappingOptions mo = mapping_options(agreement, opt, nfields, nlevels);
    auto m = std::make_unique<Mapping>(comm, src ? &src->list : nullptr, dst ? &dst->list : nullptr,
                                       src_grid_size, dst_grid_size, links, mo, agreement);
    *mapping = new isthmus_mapping{ctx->state, std::move(m)};
  });
}

int isthmus_mapping_create_file(isthmus_context* ctx, const char* path, const isthmus_decomp* src,
                                const isthmus_decomp* dst, int nfields, const int* nlevels,
                                const isthmus_mapping_options* opt, isthmus_mapping** mapping) {
  ISTHMUS_REQUIRE_HANDLE(ctx);
  return guarded(ctx->state.get(), __func__, [&] {
    MPI_Comm comm = ctx->state->usable_comm();
    Agreement read_agreement;
    read_agreement.check([&] {
      require(mapping, "mapping (the output pointer)");
      *mapping = nullptr;
      require(path, "path");
    });
    WeightsExpect expect;
    if (src) expect.src_grid_size = src->list.global_size();
    if (dst) expect.dst_grid_size = dst->list.global_size();
    WeightsInfo info;
    LinkSlab slab = read_scrip_weights(comm, path ? path : "", expect, &info, &read_agreement);
    Agreement agreement;
    MappingOptions mo = mapping_options(agreement, opt, nfields, nlevels);
    auto m = std::make_unique<Mapping>(comm, src ? &src->list : nullptr, dst ? &dst->list : nullptr,
                                       info.src_grid_size, info.dst_grid_size,
                                       links_of(std::move(slab), info.num_wgts), mo, agreement);
    *mapping = new isthmus_mapping{ctx->state, std::move(m)};
  });
}

int isthmus_weights_generate(isthmus_context* ctx, const char* src_grid, const char* dst_grid,
                             const char* stack, const char* options, const char* out_path,
                             int* generated) {
  ISTHMUS_REQUIRE_HANDLE(ctx);
  return guarded(ctx->state.get(), __func__, [&] {
    MPI_Comm comm = ctx->state->usable_comm();
    GenOptions o;
    Agreement a;
    a.check([&] {
      require(src_grid, "src_grid");
      require(dst_grid, "dst_grid");
      require(stack, "stack");
      require(out_path, "out_path");
      parse_stack(stack);
      o = parse_gen_options(options ? options : "");
    });
    a.conclude(comm);
    const std::string src = src_grid, dst = dst_grid;
    const bool made = ensure_weights_file(comm, out_path, src, dst, stack, o);
    if (generated) *generated = made ? 1 : 0;
  });
}

int isthmus_mapping_destroy(isthmus_mapping** mapping) {
  ISTHMUS_REQUIRE_HANDLE(mapping);
  delete *mapping;
  *mapping = nullptr;
  return ISTHMUS_OK;
}

int isthmus_mapping_apply(isthmus_mapping* m, const double* const* src_fields,
                          double* const* dst_fields) {
  ISTHMUS_REQUIRE_HANDLE(m);
  return guarded(m->ctx.get(), __func__, [&] { m->m->apply(src_fields, dst_fields); });
}

int isthmus_mapping_set_conservation(isthmus_mapping* m, int type, int sum_method,
                                     const double* src_area, const int* src_mask,
                                     const double* dst_area, const int* dst_mask) {
  ISTHMUS_REQUIRE_HANDLE(m);
  return guarded(m->ctx.get(), __func__, [&] {
    Agreement agreement;
    Conservation c;
    c.type = static_cast<Conserv>(type);
    c.method = static_cast<GlobalSumMethod>(sum_method);
    const int64_t ns = m->m->source_points(), nd = m->m->destination_points();
    agreement.check([&] {
      if (type == ISTHMUS_CONSERV_NONE) return;
      if (ns > 0) require(src_area, "src_area");
      if (nd > 0) require(dst_area, "dst_area");
      if (src_area) c.src_area.assign(src_area, src_area + ns);
      if (dst_area) c.dst_area.assign(dst_area, dst_area + nd);
      if (src_mask) c.src_mask.assign(src_mask, src_mask + ns);
      if (dst_mask) c.dst_mask.assign(dst_mask, dst_mask + nd);
    });
    m->m->set_conservation(std::move(c), agreement);
  });
}

int isthmus_mapping_get_info(const isthmus_mapping* m, isthmus_mapping_info* info) {
  ISTHMUS_REQUIRE_HANDLE(m);
  return guarded(m->ctx.get(), __func__, [&] {
    require(info, "info");
    const MappingInfo& i = m->m->info();
    info->side = static_cast<int>(i.side);
    info->local_links = i.local_links;
    info->needed_points = i.needed_points;
    info->partial_points = i.partial_points;
    info->unmapped_points = i.unmapped_points;
    info->global_unused_links = i.global_unused_links;
    info->dst_side_values = i.dst_side_values;
    info->src_side_values = i.src_side_values;
  });
}

int isthmus_mapping_set_tracing(isthmus_mapping* m, int on) {
  ISTHMUS_REQUIRE_HANDLE(m);
  m->m->redist().trace().set_on(on != 0);
  return ISTHMUS_OK;
}

int isthmus_mapping_get_counters(const isthmus_mapping* m, isthmus_trace_counters* counters) {
  ISTHMUS_REQUIRE_HANDLE(m);
  return guarded(m->ctx.get(), __func__, [&] {
    require(counters, "counters");
    to_public(m->m->redist().trace().counters(), counters);
  });
}

}  // extern "C"
