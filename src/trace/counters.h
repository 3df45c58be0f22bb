// Communication counters of one communication object. Timing is only read when tracing is
// on, so a disabled trace costs one predictable branch per exchange.
#pragma once
#include <mpi.h>

#include <cstdint>

namespace isthmus::trace {

struct Counters {
  int64_t exchanges = 0;
  int64_t messages_sent = 0;
  int64_t messages_received = 0;
  int64_t bytes_sent = 0;
  int64_t bytes_received = 0;
  double wait_seconds = 0;
  double total_seconds = 0;
};

class Trace {
 public:
  explicit Trace(bool on = false) : on_(on) {}
  bool on() const { return on_; }
  void set_on(bool on) { on_ = on; }
  const Counters& counters() const { return c_; }
  Counters& counters() { return c_; }
  void reset() { c_ = Counters{}; }
  double now() const { return on_ ? MPI_Wtime() : 0.0; }

 private:
  bool on_;
  Counters c_;
};

// True when the environment asks for tracing (ISTHMUS_TRACE=1). Read when an object is
// created, never during an exchange.
bool enabled_by_environment();

}  // namespace isthmus::trace
