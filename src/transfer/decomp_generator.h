// Algorithm 1 of seed 001 (sect. 5.2): decompositions of a grid for M senders and N receivers
// such that each sender sends a given average number of p2p messages, balanced (every sender
// the same count, evenly sized messages) or random (random counts and sizes). Senders hold
// contiguous blocks of ~G/M points; each message of a sender goes to a distinct receiver, the
// biggest messages to the receivers that hold the fewest points so far, so receivers stay
// balanced. Deterministic for a given seed, so every rank can generate the same decomposition
// and keep its own part (a benchmark input; it holds the whole grid while it runs).
#pragma once
#include <cstdint>
#include <vector>

namespace isthmus {

struct GeneratorParams {
  int64_t grid_points = 0;
  int senders = 1;              // M
  int receivers = 1;            // N
  double avg_send_msgs = 1;     // average messages per sender, 1 <= avg <= min(N, G/M)
  bool balanced = true;
  uint64_t seed = 1;
};

struct GeneratedDecomposition {
  std::vector<std::vector<int64_t>> sender;    // global indices of each sender, ascending
  std::vector<std::vector<int64_t>> receiver;  // global indices of each receiver, ascending
  std::vector<int> messages;                   // p2p messages of each sender
};

// Throws Error(ISTHMUS_ERR_ARG) naming the bad parameter.
GeneratedDecomposition generate_decomposition(const GeneratorParams& p);

}  // namespace isthmus
