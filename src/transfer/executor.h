// Executors move the messages of one exchange direction. They know peers, byte counts and
// buffers, never fields: a Packer fills the message for a send peer and empties the message of a
// receive peer, so every executor (p2p, alltoallv, neighbour collective, later butterfly) serves
// every redistribution unchanged.
#pragma once
#include <mpi.h>

#include <cstddef>
#include <memory>
#include <vector>

#include "trace/counters.h"

namespace isthmus {

enum class Method { Auto = 0, P2P = 1, Alltoallv = 2, Neighbor = 3, Butterfly = 4, Adaptive = 5 };
const char* method_name(Method m);

// Where each message lives in the executor's send and receive buffers.
struct MessageLayout {
  std::vector<int> send_peers;          // sorted, never this rank
  std::vector<size_t> send_bytes, send_offset;
  std::vector<int> recv_peers;          // sorted, never this rank
  std::vector<size_t> recv_bytes, recv_offset;
  size_t send_total() const;
  size_t recv_total() const;
};

class Packer {
 public:
  virtual ~Packer() = default;
  virtual void pack(size_t send_index, char* message) = 0;
  virtual void unpack(size_t recv_index, const char* message) = 0;
  // Work that needs no message (local copies, fill values): executors run it while messages
  // are in flight.
  virtual void local() = 0;
};

class Executor {
 public:
  virtual ~Executor() = default;
  // One whole exchange.
  virtual void run(Packer& packer, trace::Trace& trace) = 0;
  // The same in two halves, so that computation can overlap communication: start packs and
  // posts (after it returns the inputs may be reused), finish completes and unpacks. An
  // executor that cannot split does everything in start.
  virtual void start(Packer& packer, trace::Trace& trace) { run(packer, trace); }
  virtual void finish(Packer& packer, trace::Trace& trace) { (void)packer, (void)trace; }
};

// Buffers are owned by the caller and must outlive the executor; they are bound once (persistent
// requests), so an exchange allocates nothing. Collective over comm for Neighbor.
std::unique_ptr<Executor> make_executor(Method method, MPI_Comm comm, int tag,
                                        const MessageLayout& layout, char* send_buffer,
                                        char* recv_buffer);

}  // namespace isthmus
