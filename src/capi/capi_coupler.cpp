// The coupler's C API: a thin translation onto coupler::Coupler; messages land in the coupler's
// own context state (isthmus_coupler_last_error).
#include <algorithm>
#include <climits>
#include <memory>
#include <optional>

#include "capi/handles.h"
#include "coupler/coupler.h"
#include "base/comm.h"
#include "base/wait.h"

using namespace isthmus;

struct isthmus_coupler {
  std::shared_ptr<ContextState> state;
  std::unique_ptr<coupler::Coupler> c;
};

namespace {

coupler::Coupler& usable(isthmus_coupler* cpl) {
  if (!cpl->c)
    fail(ISTHMUS_ERR_ARG, "the coupler is not usable: its creation failed (",
         cpl->state->creation_error, ")");
  return *cpl->c;
}

}  // namespace

extern "C" {

int isthmus_coupler_create(MPI_Comm world, const char* component, const char* config_path,
                           const isthmus_coupler_options* opt, isthmus_coupler** cpl) {
  auto st = std::make_shared<ContextState>();
  MPI_Comm_rank(MPI_COMM_WORLD, &st->rank);
  std::unique_ptr<coupler::Coupler> c;
  const int rc = guarded(st.get(), __func__, [&] {
    if (cpl) *cpl = nullptr;
    if (world == MPI_COMM_NULL) fail(ISTHMUS_ERR_ARG, "world is MPI_COMM_NULL");
    require(cpl, "cpl (the output pointer)");
    require(config_path, "config_path");
    coupler::CouplerOptions o;
    if (opt && opt->run_dir) o.run_dir = opt->run_dir;
    if (opt) {
      if (!(opt->timeout_seconds >= 0))
        fail(ISTHMUS_ERR_ARG, "timeout_seconds is ", opt->timeout_seconds, " (>= 0; 0: no timeout)");
      o.timeout_s = opt->timeout_seconds;
    }
    c = std::make_unique<coupler::Coupler>(world, component ? component : "", std::string(config_path), o);
    if (c->local_comm() != MPI_COMM_NULL) {
      st->comm = duplicate(c->local_comm());
      ISTHMUS_MPI(MPI_Comm_set_errhandler(st->comm, MPI_ERRORS_RETURN));
      ISTHMUS_MPI(MPI_Comm_rank(st->comm, &st->rank));
      ISTHMUS_MPI(MPI_Comm_size(st->comm, &st->size));
    }
  });
  if (rc != ISTHMUS_OK) {
    c.reset();
    if (st->comm != MPI_COMM_NULL) MPI_Comm_free(&st->comm);
    st->creation_error = st->last_error;
  }
  if (cpl) *cpl = new isthmus_coupler{st, std::move(c)};
  return rc;
}

int isthmus_coupler_destroy(isthmus_coupler** cpl) {
  ISTHMUS_REQUIRE_HANDLE(cpl);
  delete *cpl;
  *cpl = nullptr;
  return ISTHMUS_OK;
}

const char* isthmus_coupler_last_error(const isthmus_coupler* cpl) {
  if (!cpl) return "isthmus: the coupler is NULL";
  return cpl->state->last_error.c_str();
}

int isthmus_coupler_get_local_comm(const isthmus_coupler* cpl, MPI_Comm* comm) {
  ISTHMUS_REQUIRE_HANDLE(cpl);
  return guarded(cpl->state.get(), __func__, [&] {
    require(comm, "comm (the output pointer)");
    *comm = cpl->c ? cpl->c->local_comm() : MPI_COMM_NULL;
  });
}

int isthmus_coupler_get_context(const isthmus_coupler* cpl, isthmus_context** ctx) {
  ISTHMUS_REQUIRE_HANDLE(cpl);
  return guarded(cpl->state.get(), __func__, [&] {
    require(ctx, "ctx (the output pointer)");
    *ctx = new isthmus_context{cpl->state};
  });
}

int isthmus_coupler_set_couplcomm(isthmus_coupler* cpl, MPI_Comm coupling) {
  ISTHMUS_REQUIRE_HANDLE(cpl);
  return guarded(cpl->state.get(), __func__, [&] { usable(cpl).set_coupling_comm(coupling); });
}

int isthmus_coupler_set_couplcomm_f(isthmus_coupler* cpl, MPI_Fint coupling) {
  return isthmus_coupler_set_couplcomm(cpl, MPI_Comm_f2c(coupling));
}

int isthmus_coupler_def_partition(isthmus_coupler* cpl, const isthmus_decomp* points,
                                  const char* name, int* partition) {
  ISTHMUS_REQUIRE_HANDLE(cpl);
  return guarded(cpl->state.get(), __func__, [&] {
    coupler::Coupler& c = usable(cpl);
    // a NULL output is this rank's failure of the definition, as a NULL input is
    std::optional<Error> bad;
    if (!partition) bad = Error(ISTHMUS_ERR_ARG, "partition (the output pointer) is NULL");
    const int id = c.def_partition(points ? &points->list : nullptr, name ? name : "", bad);
    *partition = id;
  });
}

int isthmus_coupler_def_partition_oasis(isthmus_coupler* cpl, int64_t global_size,
                                        const int* ig_paral, int n, const char* name,
                                        int* partition) {
  ISTHMUS_REQUIRE_HANDLE(cpl);
  return guarded(cpl->state.get(), __func__, [&] {
    coupler::Coupler& c = usable(cpl);
    // A bad ig_paral is this rank's failure of the definition (kept for enddef)
    std::optional<IndexList> points;
    std::optional<Error> bad;
    // a serial partition is the whole grid: its length is the size; any other kind without a
    // size is read against a bound, and its size settled in enddef from every rank's points
    const bool serial = ig_paral && n >= 3 && ig_paral[0] == 0;
    try {
      if (!partition) fail(ISTHMUS_ERR_ARG, "partition (the output pointer) is NULL");
      if (!ig_paral) fail(ISTHMUS_ERR_ARG, "ig_paral is NULL");
      const int64_t bound = global_size > 0 ? global_size : serial ? ig_paral[2] : INT64_MAX / 4;
      points = IndexList::from_oasis(bound, ig_paral, n);
    } catch (const Error& e) {
      bad = e;
    }
    *partition = c.def_partition(points ? &*points : nullptr, name ? name : "", bad,
                                 global_size <= 0 && !serial);
  });
}

int isthmus_coupler_def_var(isthmus_coupler* cpl, const char* name, int partition, int direction,
                            int type, int bundle, int* var) {
  ISTHMUS_REQUIRE_HANDLE(cpl);
  return guarded(cpl->state.get(), __func__, [&] {
    coupler::Coupler& c = usable(cpl);
    // a bad argument is this rank's failure of the definition (kept for enddef)
    std::optional<Error> bad;
    if (!var) bad = Error(ISTHMUS_ERR_ARG, "var (the output pointer) is NULL");
    else if (direction != ISTHMUS_VAR_IN && direction != ISTHMUS_VAR_OUT)
      bad = Error(ISTHMUS_ERR_ARG, "direction " + std::to_string(direction) +
                                       " (0 ISTHMUS_VAR_IN, 1 ISTHMUS_VAR_OUT)");
    else if (type != ISTHMUS_DOUBLE && type != ISTHMUS_FLOAT)
      bad = Error(ISTHMUS_ERR_ARG, "type " + std::to_string(type) + " (0 ISTHMUS_DOUBLE, 1 ISTHMUS_FLOAT)");
    const int id = c.def_var(name ? name : "", partition,
                             static_cast<coupler::VarDirection>(bad ? 0 : direction),
                             bad ? DataType::Double : static_cast<DataType>(type), bundle, bad);
    *var = id;
  });
}

int isthmus_coupler_enddef(isthmus_coupler* cpl) {
  ISTHMUS_REQUIRE_HANDLE(cpl);
  return guarded(cpl->state.get(), __func__, [&] { usable(cpl).enddef(); });
}

int isthmus_coupler_put(isthmus_coupler* cpl, int var, int date, const void* data, int* info) {
  ISTHMUS_REQUIRE_HANDLE(cpl);
  return guarded(cpl->state.get(), __func__, [&] {
    const int i = usable(cpl).put(var, date, data);
    if (info) *info = i;
  });
}

int isthmus_coupler_get(isthmus_coupler* cpl, int var, int date, void* data, int* info) {
  ISTHMUS_REQUIRE_HANDLE(cpl);
  return guarded(cpl->state.get(), __func__, [&] {
    const int i = usable(cpl).get(var, date, data);
    if (info) *info = i;
  });
}

int isthmus_coupler_terminate(isthmus_coupler* cpl) {
  ISTHMUS_REQUIRE_HANDLE(cpl);
  return guarded(cpl->state.get(), __func__, [&] { usable(cpl).terminate(); });
}

int isthmus_coupler_put_flags(isthmus_coupler* cpl, int var, int date, const void* data, int flags,
                              int* info) {
  ISTHMUS_REQUIRE_HANDLE(cpl);
  return guarded(cpl->state.get(), __func__, [&] {
    if (flags & ~ISTHMUS_PUT_WRITE_RESTART)
      fail(ISTHMUS_ERR_ARG, "flags ", flags, " (1 ISTHMUS_PUT_WRITE_RESTART)");
    const int i = usable(cpl).put(var, date, data, (flags & ISTHMUS_PUT_WRITE_RESTART) != 0);
    if (info) *info = i;
  });
}

int isthmus_coupler_put_terms(isthmus_coupler* cpl, int var, int date, const void* data,
                              const void* const* terms, int nterms, int flags, int* info) {
  return isthmus_coupler_put_fracwgt(cpl, var, date, data, terms, nterms, nullptr, flags, info);
}

int isthmus_coupler_put_fracwgt(isthmus_coupler* cpl, int var, int date, const void* data,
                                const void* const* terms, int nterms, const void* fracwgt,
                                int flags, int* info) {
  ISTHMUS_REQUIRE_HANDLE(cpl);
  return guarded(cpl->state.get(), __func__, [&] {
    if (flags & ~ISTHMUS_PUT_WRITE_RESTART)
      fail(ISTHMUS_ERR_ARG, "flags ", flags, " (1 ISTHMUS_PUT_WRITE_RESTART)");
    if (nterms < 0 || nterms > coupler::Coupling::kMaxTerms)
      fail(ISTHMUS_ERR_ARG, "nterms is ", nterms, "; OASIS's higher-order terms are fld2..fld5 (0 to ",
           coupler::Coupling::kMaxTerms, ")");
    if (nterms > 0 && !terms) fail(ISTHMUS_ERR_ARG, "terms is NULL but nterms is ", nterms);
    const void* all[coupler::Coupling::kMaxTerms] = {};
    for (int j = 0; j < nterms; ++j) all[j] = terms[j];
    const int i = usable(cpl).put(var, date, data, (flags & ISTHMUS_PUT_WRITE_RESTART) != 0, all, fracwgt);
    if (info) *info = i;
  });
}

int isthmus_coupler_put_inquire(isthmus_coupler* cpl, int var, int date, int* info) {
  ISTHMUS_REQUIRE_HANDLE(cpl);
  return guarded(cpl->state.get(), __func__, [&] {
    require(info, "info (the output pointer)");
    *info = usable(cpl).put_inquire(var, date);
  });
}

int isthmus_coupler_get_ncpl(isthmus_coupler* cpl, int var, int* ncpl) {
  ISTHMUS_REQUIRE_HANDLE(cpl);
  return guarded(cpl->state.get(), __func__, [&] {
    require(ncpl, "ncpl (the output pointer)");
    *ncpl = usable(cpl).coupling_count(var);
  });
}

int isthmus_coupler_get_freqs(isthmus_coupler* cpl, int var, int n, int* periods) {
  ISTHMUS_REQUIRE_HANDLE(cpl);
  return guarded(cpl->state.get(), __func__, [&] {
    const std::vector<int> p = usable(cpl).periods(var);
    if (n < static_cast<int>(p.size()))
      fail(ISTHMUS_ERR_ARG, "n is ", n, " but the field has ", p.size(), " couplings");
    if (!p.empty()) require(periods, "periods");
    std::copy(p.begin(), p.end(), periods);
  });
}

int isthmus_coupler_get_intracomm(isthmus_coupler* cpl, const char* other, MPI_Comm* comm) {
  ISTHMUS_REQUIRE_HANDLE(cpl);
  return guarded(cpl->state.get(), __func__, [&] {
    require(other, "other");
    require(comm, "comm (the output pointer)");
    *comm = usable(cpl).intracomm(other);
  });
}

int isthmus_coupler_get_intercomm(isthmus_coupler* cpl, const char* other, MPI_Comm* comm) {
  ISTHMUS_REQUIRE_HANDLE(cpl);
  return guarded(cpl->state.get(), __func__, [&] {
    require(other, "other");
    require(comm, "comm (the output pointer)");
    *comm = usable(cpl).intercomm(other);
  });
}

int isthmus_coupler_get_multi_intracomm(isthmus_coupler* cpl, int n, const char* const* names,
                                        MPI_Comm* comm, int* root_ranks) {
  ISTHMUS_REQUIRE_HANDLE(cpl);
  return guarded(cpl->state.get(), __func__, [&] {
    if (n < 0) fail(ISTHMUS_ERR_ARG, "n is ", n, " (the number of names)");
    if (n > 0) require(names, "names");
    require(comm, "comm (the output pointer)");
    std::vector<std::string> list(static_cast<size_t>(n));
    for (int k = 0; k < n; ++k)
      if (names[k]) list[k] = names[k];
    std::vector<int> roots;
    *comm = usable(cpl).multi_intracomm(list, &roots);
    if (root_ranks) std::copy(roots.begin(), roots.end(), root_ranks);
  });
}

int isthmus_coupler_report(isthmus_coupler* cpl, char* text, int64_t size, int64_t* length) {
  ISTHMUS_REQUIRE_HANDLE(cpl);
  return guarded(cpl->state.get(), __func__, [&] {
    const std::string r = usable(cpl).report();
    if (size > 0) require(text, "text");
    copy_text(r, text, size, length);
  });
}

int isthmus_coupler_is_configured(const isthmus_coupler* cpl, const char* field, int* configured) {
  ISTHMUS_REQUIRE_HANDLE(cpl);
  return guarded(cpl->state.get(), __func__, [&] {
    require(field, "field");
    require(configured, "configured (the output pointer)");
    if (!cpl->c) fail(ISTHMUS_ERR_ARG, "the coupler is not usable: its creation failed");
    *configured = cpl->c->configured(field) ? 1 : 0;
  });
}

int isthmus_coupler_get_var_size(isthmus_coupler* cpl, int var, int64_t* points, int* bundle) {
  ISTHMUS_REQUIRE_HANDLE(cpl);
  return guarded(cpl->state.get(), __func__, [&] {
    coupler::Coupler& c = usable(cpl);
    if (points) *points = c.local_points(var);
    if (bundle) *bundle = c.bundle(var);
  });
}

int isthmus_coupler_get_partition_size(isthmus_coupler* cpl, int partition, int64_t* points,
                                       int64_t* global_size) {
  ISTHMUS_REQUIRE_HANDLE(cpl);
  return guarded(cpl->state.get(), __func__, [&] {
    const auto [n, g] = usable(cpl).partition_size(partition);
    if (points) *points = n;
    if (global_size) *global_size = g;
  });
}

int isthmus_coupler_gather(isthmus_coupler* cpl, int partition, int64_t global_size,
                           const double* local, double* global) {
  ISTHMUS_REQUIRE_HANDLE(cpl);
  return guarded(cpl->state.get(), __func__,
                 [&] { usable(cpl).gather_partition(partition, global_size, local, global); });
}

int isthmus_coupler_get_component_index(const isthmus_coupler* cpl, int* index) {
  ISTHMUS_REQUIRE_HANDLE(cpl);
  return guarded(cpl->state.get(), __func__, [&] {
    require(index, "index (the output pointer)");
    *index = cpl->c ? cpl->c->component_index() : -1;
  });
}

/* Fortran communicators (MPI_Fint), as for isthmus_context_create_f */
int isthmus_coupler_create_f(MPI_Fint world, const char* component, const char* config_path,
                             const isthmus_coupler_options* opt, isthmus_coupler** cpl) {
  return isthmus_coupler_create(MPI_Comm_f2c(world), component, config_path, opt, cpl);
}

int isthmus_coupler_get_local_comm_f(const isthmus_coupler* cpl, MPI_Fint* comm) {
  MPI_Comm c = MPI_COMM_NULL;
  const int rc = isthmus_coupler_get_local_comm(cpl, &c);
  if (rc == ISTHMUS_OK && comm) *comm = MPI_Comm_c2f(c);
  return rc;
}

int isthmus_coupler_get_intracomm_f(isthmus_coupler* cpl, const char* other, MPI_Fint* comm) {
  MPI_Comm c = MPI_COMM_NULL;
  const int rc = isthmus_coupler_get_intracomm(cpl, other, &c);
  if (rc == ISTHMUS_OK && comm) *comm = MPI_Comm_c2f(c);
  return rc;
}

int isthmus_coupler_get_intercomm_f(isthmus_coupler* cpl, const char* other, MPI_Fint* comm) {
  MPI_Comm c = MPI_COMM_NULL;
  const int rc = isthmus_coupler_get_intercomm(cpl, other, &c);
  if (rc == ISTHMUS_OK && comm) *comm = MPI_Comm_c2f(c);
  return rc;
}

int isthmus_coupler_get_multi_intracomm_f(isthmus_coupler* cpl, int n, int len, const char* names,
                                          MPI_Fint* comm, int* root_ranks) {
  MPI_Comm c = MPI_COMM_NULL;
  if (n < 0 || !names)  // the C function names what is wrong
    return isthmus_coupler_get_multi_intracomm(cpl, n, nullptr, &c, nullptr);
  if (len < 0) len = 0;
  std::vector<std::string> list(static_cast<size_t>(n));
  for (int k = 0; k < n; ++k) {
    std::string s(names + static_cast<size_t>(k) * len, static_cast<size_t>(len));
    s.erase(s.find_last_not_of(' ') + 1);  // Fortran's padding
    list[k] = std::move(s);
  }
  std::vector<const char*> ptrs(list.size());
  for (size_t k = 0; k < list.size(); ++k) ptrs[k] = list[k].c_str();
  const int rc = isthmus_coupler_get_multi_intracomm(cpl, n, ptrs.data(), &c, root_ranks);
  if (rc == ISTHMUS_OK && comm) *comm = MPI_Comm_c2f(c);
  return rc;
}

}  // extern "C"
