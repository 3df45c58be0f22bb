// Allreduce with a choice of algorithm. recursive-k (seed 003 sect. 3.3, Fig. 4c) generalizes
// recursive doubling: p = floor(log_k n) rounds in groups of k ranks, the ranks beyond k^p
// folded into the first ones before and served after. Large k means few rounds, which wins
// when latency (not bandwidth) dominates, as for the 2-3 doubles of a GCR iteration.
#pragma once
#include <mpi.h>

#include <cstdint>

#include "trace/counters.h"

namespace isthmus {

enum class AllreduceAlgorithm { Auto = 0, RecursiveK = 1, RecursiveDoubling = 2, Native = 3 };
enum class ReduceOp { Sum = 0, Min = 1, Max = 2 };

const char* allreduce_algorithm_name(AllreduceAlgorithm a);
AllreduceAlgorithm parse_allreduce_algorithm(const char* name);  // "auto", "recursive-k", ...

struct AllreduceOptions {
  AllreduceAlgorithm algorithm = AllreduceAlgorithm::Auto;
  int k = 0;        // radix of recursive-k; 0 = chosen by auto_radix()
  int tag = 7412;   // point-to-point tag used on comm
  trace::Counters* counters = nullptr;
};

// The radix Auto uses for n ranks (docs/results/collectives.md, "allreduce: the auto rule").
int auto_radix(int nranks);

// Every rank gets the same bits: each group reduces its members' values in rank order, and
// every member of a group computes the same expression. Sum, min, max on double and int64.
// sendbuf may equal recvbuf (in place). Collective over comm.
void allreduce(const double* sendbuf, double* recvbuf, int count, ReduceOp op, MPI_Comm comm,
               const AllreduceOptions& options = {});
void allreduce(const int64_t* sendbuf, int64_t* recvbuf, int count, ReduceOp op, MPI_Comm comm,
               const AllreduceOptions& options = {});

}  // namespace isthmus
