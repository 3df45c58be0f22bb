// Executors move the messages of one exchange direction. They know peers, byte counts and
// buffers, never fields: a Packer fills the message for a send peer and empties the message of a
// receive peer, so every executor (p2p, alltoallv, neighbour collective, later butterfly) serves
// every redistribution unchanged.
#pragma once
#include <mpi.h>

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
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

// A bound on a wait, so that a partner that never sends becomes an error (ISTHMUS_ERR_TIMEOUT)
// naming it instead of a silent hang. describe_peer turns a rank of the executor's communicator
// into words for that message (a coupler names the component); empty: "rank N".
struct WaitTimeout {
  double seconds = 0;  // 0: wait for ever
  std::function<std::string(int rank)> describe_peer;
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
  // False when this executor cannot bound its waits (it waits inside a blocking collective).
  // After a wait has timed out the executor's messages are out of step with its peers', so it
  // must not run again.
  virtual bool set_wait_timeout(const WaitTimeout& timeout) { return timeout.seconds == 0; }
  // True when a timed-out wait left sends that MPI may still read from the send buffer (a peer
  // can post its receive late): the buffers must then outlive the executor.
  virtual bool abandoned_sends() const { return false; }
};

// Buffers are owned by the caller and must outlive the executor; they are bound once (persistent
// requests), so an exchange allocates nothing. Collective over comm for Neighbor.
std::unique_ptr<Executor> make_executor(Method method, MPI_Comm comm, int tag,
                                        const MessageLayout& layout, char* send_buffer,
                                        char* recv_buffer);

}  // namespace isthmus
