// C API of the collectives layer: alltoallv, allreduce and global sums on the context's
// communicator. Every call is collective and follows the error contract (docs/errors.md): the
// checks of the C arguments (enums, datatype) run in an Agreement that the core function
// concludes together with its own checks, in one small reduction, so every rank returns the
// same code and no rank is left waiting.
#include "base/agreement.h"
#include "capi/handles.h"
#include "collectives/allreduce.h"
#include "collectives/alltoallv.h"
#include "collectives/global_sum.h"

using namespace isthmus;

namespace {

int element_bytes(int datatype) {
  switch (datatype) {
    case ISTHMUS_DOUBLE: return 8;
    case ISTHMUS_FLOAT: return 4;
    case ISTHMUS_INT32: return 4;
  }
  fail(ISTHMUS_ERR_ARG, "datatype ", datatype, " (0 ISTHMUS_DOUBLE, 1 ISTHMUS_FLOAT, 2 ISTHMUS_INT32)");
}

template <typename E>
E checked_enum(int v, int last, const char* what) {
  if (v < 0 || v > last) fail(ISTHMUS_ERR_ARG, what, " ", v, " is not one of 0..", last);
  return static_cast<E>(v);
}

template <typename T>
int allreduce_c(isthmus_context* ctx, const char* fn, const T* s, T* r, int count, int op,
                int algorithm, int k) {
  ISTHMUS_REQUIRE_HANDLE(ctx);
  return guarded(ctx->state.get(), fn, [&] {
    MPI_Comm comm = ctx->state->usable_comm();
    Agreement a;
    AllreduceOptions o;
    ReduceOp rop = ReduceOp::Sum;
    a.check([&] {
      o.algorithm = checked_enum<AllreduceAlgorithm>(algorithm, 3, "allreduce algorithm");
      rop = checked_enum<ReduceOp>(op, 2, "reduction op");
    });
    o.k = k;
    allreduce(s, r, count, rop, comm, o, &a);
  });
}

}  // namespace

extern "C" {

int isthmus_alltoallv(isthmus_context* ctx, const void* sendbuf, const int* sendcounts,
                      const int* sdispls, void* recvbuf, const int* recvcounts,
                      const int* rdispls, int datatype, int algorithm, int ring_k) {
  ISTHMUS_REQUIRE_HANDLE(ctx);
  return guarded(ctx->state.get(), __func__, [&] {
    MPI_Comm comm = ctx->state->usable_comm();
    Agreement a;
    AlltoallvOptions o;
    int esize = 1;
    a.check([&] {
      o.algorithm = checked_enum<AlltoallvAlgorithm>(algorithm, 5, "alltoallv algorithm");
      esize = element_bytes(datatype);
    });
    a.match("datatype", datatype);
    o.ring_k = ring_k;
    alltoallv(sendbuf, sendcounts, sdispls, recvbuf, recvcounts, rdispls, esize, comm, o, &a);
  });
}

int isthmus_allreduce_double(isthmus_context* ctx, const double* sendbuf, double* recvbuf,
                             int count, int op, int algorithm, int k) {
  return allreduce_c(ctx, __func__, sendbuf, recvbuf, count, op, algorithm, k);
}

int isthmus_allreduce_int64(isthmus_context* ctx, const int64_t* sendbuf, int64_t* recvbuf,
                            int count, int op, int algorithm, int k) {
  return allreduce_c(ctx, __func__, sendbuf, recvbuf, count, op, algorithm, k);
}

int isthmus_global_sum(isthmus_context* ctx, int nfields, const double* const* fields, int64_t n,
                       const int64_t* global_index, int method, double* sums) {
  ISTHMUS_REQUIRE_HANDLE(ctx);
  return guarded(ctx->state.get(), __func__, [&] {
    MPI_Comm comm = ctx->state->usable_comm();
    Agreement a;
    GlobalSumMethod m = GlobalSumMethod::Auto;
    a.check([&] { m = checked_enum<GlobalSumMethod>(method, 5, "global sum method"); });
    global_sum(comm, nfields, fields, n, global_index, m, sums, &a);
  });
}

}  // extern "C"
