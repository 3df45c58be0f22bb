#include <sched.h>
#include <time.h>

#include <algorithm>
#include <climits>
#include <iomanip>
#include <numeric>
#include <sstream>

#include "base/error.h"
#include "transfer/adaptive.h"
#include "transfer/butterfly.h"
#include "transfer/executor.h"
#include "base/wait.h"

namespace isthmus {

const char* method_name(Method m) {
  switch (m) {
    case Method::Auto: return "auto";
    case Method::P2P: return "p2p";
    case Method::Alltoallv: return "alltoallv";
    case Method::Neighbor: return "neighbor";
    case Method::Butterfly: return "butterfly";
    case Method::Adaptive: return "adaptive";
  }
  return "unknown";
}

size_t MessageLayout::send_total() const {
  return std::accumulate(send_bytes.begin(), send_bytes.end(), size_t{0});
}
size_t MessageLayout::recv_total() const {
  return std::accumulate(recv_bytes.begin(), recv_bytes.end(), size_t{0});
}

namespace {

int as_count(size_t bytes) {
  if (bytes > static_cast<size_t>(INT_MAX))
    fail(ISTHMUS_ERR_ARG, "a message of ", bytes, " bytes exceeds MPI's int count; use fewer "
         "fields per redistribution");
  return static_cast<int>(bytes);
}

void count_traffic(trace::Trace& t, const MessageLayout& L) {
  auto& c = t.counters();
  c.messages_sent += static_cast<int64_t>(L.send_peers.size());
  c.messages_received += static_cast<int64_t>(L.recv_peers.size());
  c.bytes_sent += static_cast<int64_t>(L.send_total());
  c.bytes_received += static_cast<int64_t>(L.recv_total());
}

// Between polls of a wait with a timeout: first a few polls that only yield the core (a
// message of a running exchange arrives within microseconds, and a coupler's get must not pay a
// sleep's granularity per exchange), then sleeps of 10 us doubling to 1 ms, back to the start
// after progress. A poll every millisecond keeps a rank waiting for seconds near zero CPU (8
// ranks share 2 cores here). nanosleep, not std::this_thread: SMPI maps it to simulated time.
class Backoff {
 public:
  void reset() {
    ns_ = kFirst;
    yields_ = 0;
  }
  void sleep() {
    if (yields_ < kYields) {
      ++yields_;
      sched_yield();
      return;
    }
    timespec ts{0, ns_};
    nanosleep(&ts, nullptr);
    ns_ = std::min(ns_ * 2, kLast);
  }

 private:
  static constexpr long kFirst = 10'000, kLast = 1'000'000;
  static constexpr int kYields = 200;
  long ns_ = kFirst;
  int yields_ = 0;
};

// A message that is long at scale (thousands of silent peers) would hide the point; the first
// ones name the culprit as well as all of them would.
constexpr size_t kMaxPeersNamed = 16;

void list_peers(std::ostringstream& os, const std::vector<MPI_Request>& req,
                const std::vector<int>& peers, const std::vector<size_t>& bytes,
                const char* preposition, const WaitTimeout& timeout) {
  size_t named = 0, pending = 0;
  for (size_t i = 0; i < req.size(); ++i) {
    if (req[i] == MPI_REQUEST_NULL) continue;
    if (++pending > kMaxPeersNamed) continue;
    os << (named++ ? ", " : "") << bytes[i] << " bytes " << preposition << " "
       << (timeout.describe_peer ? timeout.describe_peer(peers[i])
                                 : "rank " + std::to_string(peers[i]));
  }
  if (pending > named) os << ", and " << pending - named << " more";
}

size_t count_pending(const std::vector<MPI_Request>& req) {
  return static_cast<size_t>(std::count_if(req.begin(), req.end(),
                                           [](MPI_Request r) { return r != MPI_REQUEST_NULL; }));
}

// Receives posted first, each message packed and sent as soon as it is ready, messages
// unpacked in the order they arrive. Requests are plain (not persistent) and live in member
// arrays filled from the precomputed layout, so nothing is allocated per exchange; persistent
// requests would save little on a real MPI, and SimGrid SMPI 3.32 charges them no per-message
// overhead, which would make simulated exchanges free of the very cost that matters at scale.
class P2PExecutor final : public Executor {
 public:
  P2PExecutor(MPI_Comm comm, int tag, const MessageLayout& L, char* sbuf, char* rbuf)
      : comm_(comm), tag_(tag), layout_(L), sbuf_(sbuf), rbuf_(rbuf),
        send_(L.send_peers.size(), MPI_REQUEST_NULL), recv_(L.recv_peers.size(), MPI_REQUEST_NULL),
        done_(std::max(L.recv_peers.size(), L.send_peers.size())) {
    int me = 0;
    ISTHMUS_MPI(MPI_Comm_rank(comm, &me));
    for (size_t b : L.send_bytes) scount_.push_back(as_count(b));
    for (size_t b : L.recv_bytes) rcount_.push_back(as_count(b));
    // Start with the first peer above this rank, so that ranks do not all hit rank 0 first.
    size_t first = 0;
    while (first < L.send_peers.size() && L.send_peers[first] < me) ++first;
    for (size_t k = 0; k < send_.size(); ++k) order_.push_back((first + k) % send_.size());
  }
  void run(Packer& packer, trace::Trace& trace) override {
    start(packer, trace);
    finish(packer, trace);
  }
  void start(Packer& packer, trace::Trace&) override {
    for (size_t i = 0; i < recv_.size(); ++i)
      ISTHMUS_MPI(MPI_Irecv(rbuf_ + layout_.recv_offset[i], rcount_[i], MPI_BYTE,
                            layout_.recv_peers[i], tag_, comm_, &recv_[i]));
    for (size_t i : order_) {
      packer.pack(i, sbuf_ + layout_.send_offset[i]);
      ISTHMUS_MPI(MPI_Isend(sbuf_ + layout_.send_offset[i], scount_[i], MPI_BYTE,
                            layout_.send_peers[i], tag_, comm_, &send_[i]));
    }
    packer.local();
  }
  void finish(Packer& packer, trace::Trace& trace) override {
    if (timeout_.seconds > 0) return finish_polling(packer, trace);
    double wait = 0;
    size_t remaining = recv_.size();
    while (remaining > 0) {
      int n = 0;
      double t0 = trace.now();
      ISTHMUS_MPI(wmpi::Waitsome(static_cast<int>(recv_.size()), recv_.data(), &n, done_.data(),
                               MPI_STATUSES_IGNORE));
      wait += trace.now() - t0;
      if (n == MPI_UNDEFINED) break;
      for (int k = 0; k < n; ++k) packer.unpack(done_[k], rbuf_ + layout_.recv_offset[done_[k]]);
      remaining -= static_cast<size_t>(n);
    }
    double t0 = trace.now();
    if (!send_.empty())
      ISTHMUS_MPI(wmpi::Waitall(static_cast<int>(send_.size()), send_.data(), MPI_STATUSES_IGNORE));
    if (trace.on()) {
      trace.counters().wait_seconds += wait + (trace.now() - t0);
      count_traffic(trace, layout_);
    }
  }
  bool set_wait_timeout(const WaitTimeout& timeout) override {
    timeout_ = timeout;
    return true;
  }
  bool abandoned_sends() const override { return abandoned_sends_; }

 private:
  // finish with a timeout: MPI_Testsome and a sleep instead of MPI_Waitsome, which cannot be
  // interrupted. The sends are bounded too: a large message waits for its receiver to post.
  void finish_polling(Packer& packer, trace::Trace& trace) {
    const double begin = MPI_Wtime();
    double unpacking = 0;
    Backoff backoff;
    for (std::vector<MPI_Request>* req : {&recv_, &send_}) {
      for (;;) {
        int n = 0;
        ISTHMUS_MPI(MPI_Testsome(static_cast<int>(req->size()), req->data(), &n, done_.data(),
                                 MPI_STATUSES_IGNORE));
        if (n == MPI_UNDEFINED) break;  // all complete
        if (n > 0) {
          double t0 = trace.now();
          if (req == &recv_)
            for (int k = 0; k < n; ++k)
              packer.unpack(done_[k], rbuf_ + layout_.recv_offset[done_[k]]);
          unpacking += trace.now() - t0;
          backoff.reset();
          continue;
        }
        if (MPI_Wtime() - begin >= timeout_.seconds) time_out(begin);
        backoff.sleep();
      }
    }
    if (trace.on()) {
      trace.counters().wait_seconds += MPI_Wtime() - begin - unpacking;
      count_traffic(trace, layout_);
    }
  }

  [[noreturn]] void time_out(double begin) {
    const double waited = MPI_Wtime() - begin;
    // The sends are not polled while receives are pending: those that have completed since
    // are not news, only the ones still pending are.
    int n = 0;
    ISTHMUS_MPI(MPI_Testsome(static_cast<int>(send_.size()), send_.data(), &n, done_.data(),
                             MPI_STATUSES_IGNORE));
    std::ostringstream os;
    os << "timed out after " << std::fixed << std::setprecision(2) << waited << std::defaultfloat
       << std::setprecision(6) << " s (timeout " << timeout_.seconds << " s) waiting for ";
    const size_t recv_pending = count_pending(recv_), send_pending = count_pending(send_);
    if (recv_pending > 0) {
      os << recv_pending << " of " << recv_.size() << " messages to this rank: ";
      list_peers(os, recv_, layout_.recv_peers, layout_.recv_bytes, "from", timeout_);
    }
    if (send_pending > 0) {
      os << (recv_pending > 0 ? "; and for " : "") << send_pending << " of " << send_.size()
         << " messages from this rank to be received: ";
      list_peers(os, send_, layout_.send_peers, layout_.send_bytes, "to", timeout_);
    }
    // A cancelled receive completes locally (MPI guarantees the wait returns), and afterwards
    // MPI writes nothing more into the receive buffer.
    for (MPI_Request& r : recv_)
      if (r != MPI_REQUEST_NULL) {
        MPI_Cancel(&r);
        wmpi::Wait(&r, MPI_STATUS_IGNORE);
      }
    // Cancelling a send is deprecated and not implemented by Open MPI (a wait on it would block):
    // the request is left to MPI, and the buffer it reads must outlive this executor.
    for (MPI_Request& r : send_)
      if (r != MPI_REQUEST_NULL) {
        MPI_Request_free(&r);
        abandoned_sends_ = true;
      }
    fail(ISTHMUS_ERR_TIMEOUT, os.str());
  }

  MPI_Comm comm_;
  int tag_;
  const MessageLayout layout_;
  char* sbuf_;
  char* rbuf_;
  std::vector<MPI_Request> send_, recv_;
  std::vector<int> scount_, rcount_, done_;
  std::vector<size_t> order_;
  WaitTimeout timeout_;
  bool abandoned_sends_ = false;
};

// The collective executors pack every message, run one collective call, then unpack every
// message; only the call differs.
class CollectiveExecutor : public Executor {
 public:
  CollectiveExecutor(const MessageLayout& L, char* sbuf, char* rbuf)
      : layout_(L), sbuf_(sbuf), rbuf_(rbuf) {}
  void run(Packer& packer, trace::Trace& trace) override {
    pack_all(packer);
    double t0 = trace.now();
    exchange();
    account(trace, t0);
    unpack_all(packer);
  }
  void start(Packer& packer, trace::Trace&) override {
    pack_all(packer);
    post(&request_);
  }
  void finish(Packer& packer, trace::Trace& trace) override {
    double t0 = trace.now();
    ISTHMUS_MPI(wmpi::Wait(&request_, MPI_STATUS_IGNORE));
    account(trace, t0);
    unpack_all(packer);
  }

 protected:
  virtual void exchange() = 0;               // the blocking collective
  virtual void post(MPI_Request* req) = 0;   // its nonblocking twin
  const MessageLayout layout_;
  char* sbuf_;
  char* rbuf_;
  std::vector<int> scount_, sdispl_, rcount_, rdispl_;

 private:
  void pack_all(Packer& packer) {
    for (size_t i = 0; i < layout_.send_peers.size(); ++i)
      packer.pack(i, sbuf_ + layout_.send_offset[i]);
    packer.local();
  }
  void unpack_all(Packer& packer) {
    for (size_t i = 0; i < layout_.recv_peers.size(); ++i)
      packer.unpack(i, rbuf_ + layout_.recv_offset[i]);
  }
  void account(trace::Trace& trace, double t0) {
    if (trace.on()) {
      trace.counters().wait_seconds += trace.now() - t0;
      count_traffic(trace, layout_);
    }
  }
  MPI_Request request_ = MPI_REQUEST_NULL;
};

// One MPI_Alltoallv with counts for every rank of the communicator (O(P) arrays).
class AlltoallvExecutor final : public CollectiveExecutor {
 public:
  AlltoallvExecutor(MPI_Comm comm, const MessageLayout& L, char* sbuf, char* rbuf)
      : CollectiveExecutor(L, sbuf, rbuf), comm_(comm) {
    int size = 0;
    ISTHMUS_MPI(MPI_Comm_size(comm, &size));
    scount_.assign(size, 0);
    sdispl_.assign(size, 0);
    rcount_.assign(size, 0);
    rdispl_.assign(size, 0);
    for (size_t i = 0; i < L.send_peers.size(); ++i) {
      scount_[L.send_peers[i]] = as_count(L.send_bytes[i]);
      sdispl_[L.send_peers[i]] = as_count(L.send_offset[i]);
    }
    for (size_t i = 0; i < L.recv_peers.size(); ++i) {
      rcount_[L.recv_peers[i]] = as_count(L.recv_bytes[i]);
      rdispl_[L.recv_peers[i]] = as_count(L.recv_offset[i]);
    }
  }

 private:
  void exchange() override {
    ISTHMUS_MPI(wmpi::Alltoallv(sbuf_, scount_.data(), sdispl_.data(), MPI_BYTE, rbuf_,
                              rcount_.data(), rdispl_.data(), MPI_BYTE, comm_));
  }
  void post(MPI_Request* req) override {
    ISTHMUS_MPI(MPI_Ialltoallv(sbuf_, scount_.data(), sdispl_.data(), MPI_BYTE, rbuf_,
                               rcount_.data(), rdispl_.data(), MPI_BYTE, comm_, req));
  }
  MPI_Comm comm_;
};

// MPI_Neighbor_alltoallv on a distributed graph whose edges are exactly the schedule's peers.
class NeighborExecutor final : public CollectiveExecutor {
 public:
  NeighborExecutor(MPI_Comm comm, const MessageLayout& L, char* sbuf, char* rbuf)
      : CollectiveExecutor(L, sbuf, rbuf) {
#ifdef ISTHMUS_SMPI
    (void)comm;
    fail(ISTHMUS_ERR_ARG, "method 'neighbor' is not available under SimGrid SMPI 3.32, which does "
         "not implement neighbourhood collectives; use 'p2p' or 'alltoallv'");
#else
    for (size_t i = 0; i < L.send_peers.size(); ++i) {
      scount_.push_back(as_count(L.send_bytes[i]));
      sdispl_.push_back(as_count(L.send_offset[i]));
    }
    for (size_t i = 0; i < L.recv_peers.size(); ++i) {
      rcount_.push_back(as_count(L.recv_bytes[i]));
      rdispl_.push_back(as_count(L.recv_offset[i]));
    }
    ISTHMUS_MPI(MPI_Dist_graph_create_adjacent(
        comm, static_cast<int>(L.recv_peers.size()), L.recv_peers.data(), MPI_UNWEIGHTED,
        static_cast<int>(L.send_peers.size()), L.send_peers.data(), MPI_UNWEIGHTED,
        MPI_INFO_NULL, 0, &graph_));
#endif
  }
  ~NeighborExecutor() override {
    if (graph_ != MPI_COMM_NULL) MPI_Comm_free(&graph_);
  }

 private:
  void exchange() override {
#ifndef ISTHMUS_SMPI
    ISTHMUS_MPI(MPI_Neighbor_alltoallv(sbuf_, scount_.data(), sdispl_.data(), MPI_BYTE, rbuf_,
                                       rcount_.data(), rdispl_.data(), MPI_BYTE, graph_));
#endif
  }
  void post(MPI_Request* req) override {
#ifndef ISTHMUS_SMPI
    ISTHMUS_MPI(MPI_Ineighbor_alltoallv(sbuf_, scount_.data(), sdispl_.data(), MPI_BYTE, rbuf_,
                                        rcount_.data(), rdispl_.data(), MPI_BYTE, graph_, req));
#else
    (void)req;
#endif
  }
  MPI_Comm graph_ = MPI_COMM_NULL;
};

}  // namespace

std::unique_ptr<Executor> make_executor(Method method, MPI_Comm comm, int tag,
                                        const MessageLayout& layout, char* send_buffer,
                                        char* recv_buffer) {
  switch (method) {
    case Method::Auto:
    case Method::P2P:
      return std::make_unique<P2PExecutor>(comm, tag, layout, send_buffer, recv_buffer);
    case Method::Alltoallv:
      return std::make_unique<AlltoallvExecutor>(comm, layout, send_buffer, recv_buffer);
    case Method::Neighbor:
      return std::make_unique<NeighborExecutor>(comm, layout, send_buffer, recv_buffer);
    case Method::Butterfly: {
      auto topology = ButterflyTopology::build(comm, layout);
      const int stages = topology->mapping.stages;
      return std::make_unique<ButterflyExecutor>(std::move(topology), tag, layout, send_buffer,
                                                 recv_buffer, full_butterfly_plan(stages));
    }
    case Method::Adaptive:
      return std::make_unique<AdaptiveExecutor>(comm, tag, layout, send_buffer, recv_buffer,
                                                adaptive_options_from_environment());
  }
  fail(ISTHMUS_ERR_ARG, "unknown transfer method ", static_cast<int>(method));
}

}  // namespace isthmus
