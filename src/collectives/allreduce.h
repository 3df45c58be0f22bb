// Allreduce with a choice of algorithm. recursive-k (seed 003 sect. 3.3, Fig. 4c) generalizes
// recursive doubling: p = floor(log_k n) rounds in groups of k ranks, the ranks beyond k^p
// folded into the first ones before and served after. Large k means few rounds, which wins
// when latency (not bandwidth) dominates, as for the 2-3 doubles of a GCR iteration.
#pragma once
#include <mpi.h>

#include <cstdint>

#include "trace/counters.h"

namespace isthmus {

class Agreement;

enum class AllreduceAlgorithm { Auto = 0, RecursiveK = 1, RecursiveDoubling = 2, Native = 3 };
enum class ReduceOp { Sum = 0, Min = 1, Max = 2 };

const char* allreduce_algorithm_name(AllreduceAlgorithm a);
AllreduceAlgorithm parse_allreduce_algorithm(const char* name);  // "auto", "recursive-k", ...

struct AllreduceOptions {
  AllreduceAlgorithm algorithm = AllreduceAlgorithm::Auto;
  int k = 0;        // radix of recursive-k; 0 = chosen by auto_radix()
  int tag = 7412;   // point-to-point tag used on comm (the same on every rank)
  trace::Counters* counters = nullptr;
};

// The radix Auto uses for n ranks (docs/results/collectives.md, "allreduce: the auto rule").
int auto_radix(int nranks);

// Every rank gets the same bits: each group reduces its members' values in rank order, and
// every member of a group computes the same expression. Sum, min, max on double and int64.
// sendbuf may equal recvbuf (in place). Collective over comm.
//
// Errors (docs/errors.md): each rank checks its arguments (count < 0, a NULL buffer with
// count > 0, buffers that overlap without being equal, a bad op or algorithm, k < 0 or k = 1),
// then all ranks agree in ONE small reduction (base/agreement.h) that also compares count, op,
// algorithm, k (where it is used), tag and the value type; on any error every rank throws the
// same code before the data moves. pending: checks the caller ran already (the C API's),
// concluded in the same agreement.
void allreduce(const double* sendbuf, double* recvbuf, int count, ReduceOp op, MPI_Comm comm,
               const AllreduceOptions& options = {}, Agreement* pending = nullptr);
void allreduce(const int64_t* sendbuf, int64_t* recvbuf, int count, ReduceOp op, MPI_Comm comm,
               const AllreduceOptions& options = {}, Agreement* pending = nullptr);

}  // namespace isthmus
