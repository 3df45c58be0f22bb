#include "transfer/process_mapping.h"

#include <algorithm>

#include "base/error.h"

namespace isthmus {

namespace {

int ceil_pow2(int x) {
  int p = 1;
  while (p < x) p *= 2;
  return p;
}

struct Group {
  int64_t size;
  std::vector<int> members;
};

// Maps the processes of one side (ranks with their sizes) onto `nodes` butterfly nodes.
void map_side(const std::vector<int>& ranks, const std::vector<int64_t>& sizes_by_rank,
              int nodes, std::vector<int>& node_of_rank, std::vector<int>* first_real) {
  const int padded = std::max(ceil_pow2(static_cast<int>(ranks.size())), nodes);
  std::vector<int64_t> sizes(padded, 0);
  for (size_t i = 0; i < ranks.size(); ++i) sizes[i] = sizes_by_rank[ranks[i]];
  const std::vector<int> order = iterative_pairing(sizes);
  const int per_node = padded / nodes;
  for (int k = 0; k < padded; ++k) {
    if (order[k] >= static_cast<int>(ranks.size())) continue;  // an empty (padding) process
    const int rank = ranks[order[k]];
    const int node = k / per_node;
    node_of_rank[rank] = node;
    if (first_real && (*first_real)[node] < 0) (*first_real)[node] = rank;
  }
}

}  // namespace

std::vector<int> iterative_pairing(const std::vector<int64_t>& sizes) {
  const size_t n = sizes.size();
  if (n == 0) return {};
  if ((n & (n - 1)) != 0)
    fail(ISTHMUS_ERR_INTERNAL, "iterative pairing needs a power-of-two number of processes, got ",
         n);
  std::vector<Group> groups(n);
  for (size_t i = 0; i < n; ++i) groups[i] = {sizes[i], {static_cast<int>(i)}};
  while (groups.size() > 1) {
    std::stable_sort(groups.begin(), groups.end(),
                     [](const Group& a, const Group& b) { return a.size > b.size; });
    const size_t g = groups.size();
    std::vector<Group> next(g / 2);
    for (size_t i = 0; i < g / 2; ++i) {
      Group& big = groups[i];
      Group& small = groups[g - 1 - i];
      next[i].size = big.size + small.size;
      next[i].members = std::move(big.members);
      next[i].members.insert(next[i].members.end(), small.members.begin(), small.members.end());
    }
    groups = std::move(next);
  }
  return groups[0].members;
}

ButterflyMapping map_processes(const std::vector<int64_t>& send_bytes,
                               const std::vector<int64_t>& recv_bytes) {
  if (send_bytes.size() != recv_bytes.size())
    fail(ISTHMUS_ERR_INTERNAL, "process mapping: ", send_bytes.size(), " send sizes but ",
         recv_bytes.size(), " receive sizes");
  const int P = static_cast<int>(send_bytes.size());
  ButterflyMapping m;
  m.sender_node.assign(P, -1);
  m.receiver_node.assign(P, -1);
  std::vector<int> senders, receivers, receiver_only;
  for (int r = 0; r < P; ++r) {
    if (send_bytes[r] > 0) senders.push_back(r);
    if (recv_bytes[r] > 0) receivers.push_back(r);
    if (recv_bytes[r] > 0 && send_bytes[r] <= 0) receiver_only.push_back(r);
  }
  m.senders = static_cast<int>(senders.size());
  m.receivers = static_cast<int>(receivers.size());
  m.unique = m.senders + static_cast<int>(receiver_only.size());
  if (m.senders == 0 || m.receivers == 0) return m;
  m.nodes = 1;
  while (m.nodes * 2 <= m.unique) {
    m.nodes *= 2;
    ++m.stages;
  }
  // A node is played by a sender mapped onto it where possible, so that the sender's first hop
  // stays on the rank; the other nodes take the remaining processes, senders first (sect. 3.1).
  std::vector<int> first_sender(m.nodes, -1);
  map_side(senders, send_bytes, m.nodes, m.sender_node, &first_sender);
  map_side(receivers, recv_bytes, m.nodes, m.receiver_node, nullptr);
  m.node_rank = first_sender;
  std::vector<char> used(P, 0);
  for (int r : m.node_rank)
    if (r >= 0) used[r] = 1;
  std::vector<int> pool;
  for (int r : senders)
    if (!used[r]) pool.push_back(r);
  pool.insert(pool.end(), receiver_only.begin(), receiver_only.end());
  size_t next = 0;
  for (int& r : m.node_rank)
    if (r < 0) r = pool[next++];
  return m;
}

}  // namespace isthmus
