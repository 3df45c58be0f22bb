// Process mapping of the butterfly (seed 001, sect. 3.1-3.2, Fig. 11): which communicator ranks
// act as the N_B = 2^n butterfly nodes, and which node each sender sends from and each receiver
// receives at. Senders and receivers are padded with empty processes to powers of two, reordered
// by iterative pairing (the largest with the smallest data size, then pairs of pairs, ...) and
// mapped in groups of consecutive reordered processes onto the nodes, so that the pairs that
// talk at each stage carry balanced amounts of data, and no node serves more than one group.
#pragma once
#include <cstdint>
#include <vector>

namespace isthmus {

// Iterative pairing of sizes.size() processes (a power of two, padding included): at each stage
// the groups, sorted by total size (descending, ties in their current order), are paired first
// with last, second with second-to-last, ...; the larger group of a pair comes first. Returns
// the process indices in their final order.
std::vector<int> iterative_pairing(const std::vector<int64_t>& sizes);

struct ButterflyMapping {
  int stages = 0;                  // n = log2 N_B
  int nodes = 0;                   // N_B (0 when no rank sends anything)
  int senders = 0, receivers = 0;  // ranks with data to send / to receive
  int unique = 0;                  // N_T: ranks that send or receive
  std::vector<int> node_rank;      // butterfly node -> communicator rank
  std::vector<int> sender_node;    // rank -> node it sends from, -1 if it sends nothing
  std::vector<int> receiver_node;  // rank -> node it receives at, -1 if it receives nothing
};

// send_bytes[r] / recv_bytes[r]: bytes rank r sends to / receives from other ranks. Every rank
// computes the same mapping from the same (allgathered) sizes.
ButterflyMapping map_processes(const std::vector<int64_t>& send_bytes,
                               const std::vector<int64_t>& recv_bytes);

}  // namespace isthmus
