// Sparse data exchange: each rank sends to a few ranks that do not know in advance that they
// will receive. Messages are routed along a hypercube: in stage s a rank swaps, with partner
// rank XOR 2^s, every message whose destination differs from its own rank in bit s; ranks
// beyond the largest power of two hand their messages to a proxy in the lower half first.
// log2 P blocking pairwise steps, no polling, no O(P) array, O(data * log P) volume per rank:
// the setup cost the design asks for, and cheap to simulate (SMPI 3.32 slows down badly on the
// probe-and-test loops of nonblocking-consensus algorithms at 10^3 ranks).
#pragma once
#include <mpi.h>

#include <cstdint>
#include <vector>

namespace isthmus {

struct Message {
  int rank;                   // destination (outgoing) or source (incoming)
  std::vector<int64_t> data;
};

// Collective over comm: every rank calls it, with or without messages. At most one outgoing
// message per destination. Messages to oneself are delivered without MPI. The result is sorted
// by source rank, so what a rank does with it does not depend on timing.
//
// sums (optional, n values): summed over every rank on the way, in place: the exchange's
// log2 P rounds reach every rank from every other, so a small allreduce of integers rides on
// them instead of costing log2 P rounds of its own (each rank's values enter once).
std::vector<Message> sparse_exchange(MPI_Comm comm, int tag, const std::vector<Message>& out,
                                     int64_t* sums = nullptr, int n = 0);

}  // namespace isthmus
