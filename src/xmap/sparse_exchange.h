// Sparse data exchange: each rank sends to a few ranks that do not know in advance that they
// will receive. Nonblocking consensus (synchronous sends + a nonblocking barrier, Hoefler,
// Siebert and Lumsdaine 2010) costs O(messages + log P) per rank and no O(P) array, which is
// what lets directory-based setup scale. Every send is synchronous, so it does not rely on
// eager buffering (SMPI with send-is-detached-thresh:0 behaves the same).
#pragma once
#include <mpi.h>

#include <cstdint>
#include <vector>

namespace isthmus {

struct Message {
  int rank;                   // destination (outgoing) or source (incoming)
  std::vector<int64_t> data;
};

// Collective over comm. Messages to oneself are delivered without MPI. The result is sorted by
// source rank, so what a rank does with it does not depend on arrival order.
std::vector<Message> sparse_exchange(MPI_Comm comm, int tag, const std::vector<Message>& out);

}  // namespace isthmus
