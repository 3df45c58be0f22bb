// A redistribution moves many fields (any number of levels; double, float or int32) over one
// exchange map, all fields to a peer in one message, forward or reverse. Buffers, requests and
// layouts are built once; an exchange allocates nothing.
// Over a Combine::Sum map the forward direction is a reduction: every destination point gets the
// sum of its contributions, added in increasing order of source rank once all have arrived.
#pragma once
#include <mpi.h>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/agreement.h"
#include "transfer/executor.h"
#include "transfer/message_status.h"
#include "xmap/xmap.h"

namespace isthmus {

enum class DataType { Double = 0, Float = 1, Int32 = 2 };
size_t type_size(DataType t);
const char* type_name(DataType t);
// The reduction of a Combine::Sum map's forward direction (defined in redist.cpp).
struct SumStage;

struct FieldSpec {
  DataType type;
  int nlevels;
};

class Redist {
 public:
  // Collective over the xmap's ranks. `agreement` holds the caller's local checks; the
  // constructor adds its own and concludes it over agreement_comm (ranks that are the xmap's,
  // e.g. the context's communicator) before any communication (docs/errors.md).
  Redist(std::shared_ptr<const Xmap> xmap, std::vector<FieldSpec> fields, Method method,
         Agreement& agreement, MPI_Comm agreement_comm);
  // The same for a caller whose own agreement already covered the fields and the method on
  // every rank (Agreement::conclude_vouched: a local failure is ISTHMUS_ERR_INTERNAL): no
  // reduction.
  struct Vouched {};
  Redist(Vouched, std::shared_ptr<const Xmap> xmap, std::vector<FieldSpec> fields, Method method);
  // A twin of `base`: the same map, fields and communicator, with its own buffers and its own
  // messages, point to point under tags `tag` (forward) and tag + 1 (reverse), which no
  // executor of a constructed redistribution uses (tag >= kTwinTags). Local: no communication,
  // so ranks may add one when each learns it needs a second exchange in flight at once (the
  // coupler's fracwgt). Every rank of the map that takes part in base's exchanges must build
  // the twin with the same tag before its first exchange; it must be destroyed before base.
  static constexpr int kTwinTags = 1024;
  Redist(const Redist& base, int tag);
  ~Redist();
  Redist(const Redist&) = delete;
  Redist& operator=(const Redist&) = delete;

  // Field arrays are level-major: level l of local point p at [l * local_size + p].
  // Misuse on one rank (NULL arrays, an exchange while one is pending, a bad direction) never
  // leaves its peers waiting: that rank still takes part, its messages flagged with its error
  // code, and throws; a peer that receives a flagged message throws the same code naming it
  // (message_status.h). Ranks that receive nothing from it are unaffected.
  void exchange(const void* const* src_fields, void* const* dst_fields);
  void exchange_reverse(const void* const* dst_fields, void* const* src_fields);

  // Split exchange: start packs and posts the messages (the inputs may be reused as soon as it
  // returns); wait completes them and writes the outputs, which must not be touched in between.
  // One exchange at a time per redistribution. direction: 0 forward, 1 reverse; any other
  // value is misuse and takes part in the forward exchange as a failed rank.
  void start(int direction, const void* const* in, void* const* out);
  void wait();
  bool pending() const { return pending_ != nullptr; }

  // A bound on every later wait for messages (exchange, exchange_reverse, wait), from when the
  // wait begins; 0 or infinity waits for ever (the default, MPI's own blocking wait). Past it the
  // call throws ISTHMUS_ERR_TIMEOUT naming the peers (ranks of the xmap's communicator, put into
  // words by describe_peer if given) whose messages had not arrived and their bytes. Local.
  // Only Method::P2P can bound its waits; for the others a positive timeout is ISTHMUS_ERR_ARG.
  // After a timeout the redistribution is unusable: its receives were cancelled, and a late
  // message would be taken for a later exchange's, so every call fails with ISTHMUS_ERR_ARG.
  void set_wait_timeout(double seconds,
                        std::function<std::string(int rank)> describe_peer = nullptr);
  bool timed_out() const { return !timed_out_.empty(); }

  Method method() const { return method_; }
  // Its own communicator (a twin's is its base's): its exchanges' messages and nothing else.
  MPI_Comm comm() const { return comm_; }
  // The executor of a direction, e.g. to query an adaptive executor's plan.
  Executor& executor(bool reverse) { return *(reverse ? reverse_ : forward_).executor; }
  const Executor& executor(bool reverse) const { return *(reverse ? reverse_ : forward_).executor; }
  trace::Trace& trace() { return trace_; }
  const trace::Trace& trace() const { return trace_; }
  const std::vector<FieldSpec>& fields() const { return fields_; }
  // Bytes one point carries in a message: the sum over fields of levels * type size.
  size_t bytes_per_point() const { return point_bytes_; }

 private:
  struct Direction {
    const Schedule* schedule = nullptr;
    MessageLayout layout;
    std::unique_ptr<Executor> executor;
    // Forward over a Combine::Sum map: messages are staged and summed once all have arrived.
    std::shared_ptr<SumStage> sum;
  };
  // the constructors' body: checks, the agreement (or the caller's vouching), the executors
  void set_up(Agreement& agreement, MPI_Comm agreement_comm, bool vouched);
  void lay_out(Direction& d, const Schedule& s);
  // both directions' layouts, and the summing stage of a Combine::Sum map
  void lay_out_directions();
  // the buffers and both directions' executors (method_; tags `tag` forward, tag + 1 reverse)
  void make_executors(int tag);
  // Calls f(packer) with the packer of direction d: the summing one over a Combine::Sum map's
  // forward direction (whose staging is reset when `begin`, at the start of an exchange).
  template <typename F>
  void with_packer(Direction& d, const void* const* in, void* const* out, bool begin, F&& f);
  void check_arrays(const Direction& d, const void* const* in, void* const* out,
                    const char* what) const;
  // Validates the call; on misuse returns the error this rank takes part with (after finishing
  // a pending exchange, whose outputs are then written).
  std::optional<Error> misuse(const Direction& d, const void* const* in, void* const* out,
                              const char* what);
  void run(Direction& d, const void* const* in, void* const* out, const char* what);
  void start_direction(int direction, const void* const* in, void* const* out, const char* what);
  void finish_pending();
  // Takes part in the exchange without data (as start + finish when `split`), then throws e.
  [[noreturn]] void run_failed(Direction& d, const Error& e, bool split);
  void count_exchange(double t0);  // trace: one exchange that began at t0
  // Runs f, the body of a public call named `what`; a wait in it that times out leaves the
  // redistribution unusable.
  template <typename F>
  void bounded(const char* what, F&& f);
  void check_usable(const char* what) const;
  void release();                  // executors, then the communicator

  std::shared_ptr<const Xmap> xmap_;
  std::vector<FieldSpec> fields_;
  Method method_;
  size_t point_bytes_ = 0;
  MPI_Comm comm_ = MPI_COMM_NULL;
  bool borrowed_ = false;  // comm_ is the map's (Xmap::lend_comm), not this one's to free
  std::vector<char> buf_a_, buf_b_;
  Direction forward_, reverse_;
  trace::Trace trace_;
  Direction* pending_ = nullptr;       // the direction of a started exchange
  std::optional<StatusPacker::Failure> pending_failure_;  // a failed peer seen during start
  std::vector<void*> pending_out_;      // its output arrays (copied: the caller's list may go)
  double pending_t0_ = 0;
  std::string timed_out_;  // the message of the wait that timed out, if one did
};

}  // namespace isthmus
