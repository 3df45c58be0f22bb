// Global sums of distributed fields: the five CONSERV methods of OASIS3-MCT 4.0 (seed 000,
// sect. 2.4). Several fields are summed at once, with one set of reductions for all of them.
//
//   gather    every value is gathered on rank 0 and summed serially in global index order, then
//             broadcast. Bit-for-bit across rank counts and decompositions; costs a gather of
//             the whole field.
//   lsum8     local double sum, MPI_Allreduce. Fast; reproducible only for a fixed
//             decomposition and rank count.
//   lsum16    local sum and reduction in quadruple precision (__float128), rounded to double
//             at the end. Differences across decompositions are rare but possible.
//   ddpdd     double-double local sums (Knuth two-sum) and one reduction with He & Ding's
//             double-double operator. About 106 bits; rarely not reproducible.
//   reprosum  exact, in one reduction: each rank sums its values exactly, chunk by chunk, in
//             levels of floating-point accumulators pinned to one binade each (Demmel and
//             Nguyen's extraction: every addition's rounding error is exact and goes on to the
//             next level, until none is left; vectorised, no branch in the loop), adds the
//             levels into 128-bit integer digits, and writes them as 64-bit digits on a grid
//             fixed in advance (bit 0 = 2^-1074, width 62 - ceil(log2 P)); one MPI_SUM over
//             int64 adds them (exact, so order-free) with the Inf/NaN counts, and the exact
//             total is rounded to the nearest double (ties to even). Bit-for-bit across rank
//             counts, decompositions and orderings, correctly rounded (within half an ulp of
//             the exact sum), whatever the caller's floating-point mode (rounding, flush to
//             zero); 0.6-1.5 x lsum8's time (docs/results/collectives.md).
//   auto      reprosum: the bit-for-bit method, at a cost close to lsum8.
//
// Special values. reprosum and gather: a field with a NaN sums to NaN; a field with +Inf and
// -Inf sums to NaN; otherwise +Inf (-Inf) if it holds +Inf (-Inf). reprosum returns the
// quiet NaN std::numeric_limits<double>::quiet_NaN() (one bit pattern); gather returns what
// IEEE addition gives. A finite exact sum beyond the double range rounds to +-Inf in
// reprosum. lsum8, lsum16 and ddpdd follow IEEE addition (ddpdd falls back to a plain sum
// when a partial sum is not finite, so Inf gives Inf, not the NaN of its error term). A sum
// that is exactly zero is +0 in reprosum (even when every value is -0).
#pragma once
#include <mpi.h>

#include <cstdint>

namespace isthmus {

class Agreement;

enum class GlobalSumMethod { Auto = 0, Gather = 1, Lsum8 = 2, Lsum16 = 3, Ddpdd = 4, Reprosum = 5 };
const char* global_sum_method_name(GlobalSumMethod m);
GlobalSumMethod parse_global_sum_method(const char* name);  // "gather", "lsum8", ...

// sums[f] = sum over all ranks and all i < n of fields[f][i], for f < nfields. n may differ
// between ranks and be 0 (fields may then be NULL). global_index (used by gather only; may
// be NULL) gives the global position of each local point: gather sums in that order, which
// makes it independent of the decomposition; without it gather sums in rank order, then
// local order. With global_index, the indices over all ranks must be exactly 0..N-1 (N the
// total number of points). Collective over comm.
//
// Errors (docs/errors.md): each rank checks its arguments (nfields < 0, n < 0, NULL sums,
// fields or field with points to sum, a bad method, more points than one gather message
// holds), then all ranks agree in ONE small reduction (base/agreement.h) that also compares
// nfields, method and, for gather, whether the ranks with points give global_index; on any
// error every rank throws the same code before the sums travel. Gather's checks of the
// indices themselves and of the total size are made on rank 0 and broadcast, so they too fail
// on every rank. pending: checks the caller ran already (the C API's), concluded in the same
// agreement.
void global_sum(MPI_Comm comm, int nfields, const double* const* fields, int64_t n,
                const int64_t* global_index, GlobalSumMethod method, double* sums,
                Agreement* pending = nullptr);

}  // namespace isthmus
