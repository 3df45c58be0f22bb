// C API of the collectives layer: alltoallv, allreduce and global sums on the context's
// communicator.
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
    AllreduceOptions o;
    o.algorithm = checked_enum<AllreduceAlgorithm>(algorithm, 3, "allreduce algorithm");
    o.k = k;
    allreduce(s, r, count, checked_enum<ReduceOp>(op, 2, "reduction op"), ctx->state->comm, o);
  });
}

}  // namespace

extern "C" {

int isthmus_alltoallv(isthmus_context* ctx, const void* sendbuf, const int* sendcounts,
                      const int* sdispls, void* recvbuf, const int* recvcounts,
                      const int* rdispls, int datatype, int algorithm, int ring_k) {
  ISTHMUS_REQUIRE_HANDLE(ctx);
  return guarded(ctx->state.get(), __func__, [&] {
    AlltoallvOptions o;
    o.algorithm = checked_enum<AlltoallvAlgorithm>(algorithm, 5, "alltoallv algorithm");
    o.ring_k = ring_k;
    alltoallv(sendbuf, sendcounts, sdispls, recvbuf, recvcounts, rdispls, element_bytes(datatype),
              ctx->state->comm, o);
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
    global_sum(ctx->state->comm, nfields, fields, n, global_index,
               checked_enum<GlobalSumMethod>(method, 5, "global sum method"), sums);
  });
}

}  // extern "C"
