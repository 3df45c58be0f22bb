// Butterfly data transfer (seed 001, sect. 3) as an executor of the transfer layer, for any plan
// of merged stages (sect. 4). Each message of the direct (p2p) layout is a block tagged by its
// origin and final destination; a block travels sender -> node after round 1 -> ... -> receiver,
// where after the rounds covering stages [0, T) it sits on the node whose low T bits are those
// of its receiver's node and whose high bits are those of its sender's node. The sender->node
// and node->receiver process mappings are folded into the first and last rounds, so the plan
// [n] is exactly p2p and [1,...,1] the full butterfly. Blocks are copied whole and never split;
// which blocks travel in which message is agreed once at setup (one sparse exchange of
// descriptors per intermediate round), so an exchange sends no headers and allocates nothing.
#pragma once
#include <mpi.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "transfer/executor.h"
#include "transfer/plan.h"
#include "transfer/process_mapping.h"
#include "xmap/sparse_exchange.h"

namespace isthmus {

// What every plan over one layout shares: the process mapping and the schedule's fingerprint.
struct ButterflyTopology {
  MPI_Comm comm = MPI_COMM_NULL;  // not owned
  int rank = 0, size = 1;
  ButterflyMapping mapping;
  std::vector<int> node_of_rank;                // rank -> the node it plays, -1 if none
  std::vector<std::vector<int>> node_senders;   // node -> the senders mapped onto it (<= 2)
  // Identical on every rank: a hash of every rank's peers and message sizes.
  uint64_t fingerprint = 0;
  // The most peers any rank sends to or receives from (whichever is more).
  int max_peers = 0;

  // Collective over comm: allgathers two sizes and a peer count per rank (the mapping needs
  // every rank's data size) and reduces the fingerprint.
  static std::shared_ptr<const ButterflyTopology> build(MPI_Comm comm, const MessageLayout& layout);
};

class ButterflyExecutor final : public Executor {
 public:
  // Collective over the topology's communicator. tag must be at most 510 (rounds use
  // tag * 64 + 1 .. tag * 64 + 63). Setup rounds of up to max_direct_stages merged stages
  // exchange descriptors with every possible partner; larger ones use the sparse exchange.
  ButterflyExecutor(std::shared_ptr<const ButterflyTopology> topology, int tag,
                    const MessageLayout& layout, char* send_buffer, char* recv_buffer, Plan plan,
                    int max_direct_stages = 5);
  ~ButterflyExecutor() override;
  ButterflyExecutor(const ButterflyExecutor&) = delete;
  ButterflyExecutor& operator=(const ButterflyExecutor&) = delete;

  void run(Packer& packer, trace::Trace& trace) override;

  const Plan& plan() const { return plan_; }
  int rounds() const { return static_cast<int>(rounds_.size()); }
  // Per exchange on this rank: messages and bytes sent to other ranks over all rounds.
  int64_t messages_sent() const { return messages_sent_; }
  int64_t bytes_sent() const { return bytes_sent_; }
  int64_t messages_received() const { return messages_received_; }
  int64_t bytes_received() const { return bytes_received_; }

 private:
  struct Piece {
    int buffer;  // 0: caller's send buffer, 1..m-1: round buffers, m: caller's receive buffer
    size_t offset;
    size_t bytes;
    char* data = nullptr;
  };
  struct Outgoing {
    int peer;
    size_t bytes = 0;
    std::vector<Piece> pieces;             // contiguous runs of blocks, in message order
    std::vector<size_t> own_blocks;        // round 1: layout send indices, in message order
    bool staged = false;                   // several pieces: copied to the staging buffer
    char* data = nullptr;
  };
  struct Incoming {
    int peer;
    size_t bytes = 0;
    size_t offset = 0;                     // in the round's buffer
    std::vector<size_t> recv_index;        // last round: layout receive index of each block
    std::vector<size_t> block_offset;      //   and its offset in the message
  };
  struct Round {
    int tag = 0;
    std::vector<Outgoing> out;
    std::vector<Incoming> in;
    std::vector<MPI_Request> send_req, recv_req;
    std::vector<size_t> send_order;
  };
  struct Held {
    int s, r;
    size_t bytes;
    int buffer;
    size_t offset;
    size_t send_index;  // for blocks still in the caller's send buffer (round 0)
  };

  int holder(int round, int s, int r) const;
  // Setup of round j < m: hands each next holder the descriptors of its blocks. Small rounds
  // talk to every possible partner (known from the mapping, blocking receives); large merged
  // rounds use the sparse exchange.
  std::vector<Message> exchange_descriptors(int j, std::vector<Message>& out);
  char* buffer(int b) const;
  void setup(const MessageLayout& L);

  std::shared_ptr<const ButterflyTopology> topo_;
  Plan plan_;
  std::vector<int> bounds_;
  int tag_;
  char* sbuf_;
  char* rbuf_;
  int max_direct_stages_;
  std::vector<Round> rounds_;                      // rounds_[j - 1] is round j
  std::vector<std::vector<char>> round_buffers_;   // index 1..m-1
  std::vector<char> stage_;
  std::vector<size_t> pack_offset_;                // send index -> offset in the send buffer
  std::vector<size_t> kept_after_round1_;          // send indices of blocks round 1 keeps here
  std::vector<std::pair<size_t, Piece>> kept_final_;  // blocks already here at the last round
  std::vector<int> done_;
  int64_t messages_sent_ = 0, bytes_sent_ = 0, messages_received_ = 0, bytes_received_ = 0;
};

}  // namespace isthmus
