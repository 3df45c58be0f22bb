// A redistribution moves many fields (any number of levels; double, float or int32) over one
// exchange map, all fields to a peer in one message, forward or reverse. Buffers, requests and
// layouts are built once; an exchange allocates nothing.
#pragma once
#include <mpi.h>

#include <memory>
#include <vector>

#include "transfer/executor.h"
#include "xmap/xmap.h"

namespace isthmus {

enum class DataType { Double = 0, Float = 1, Int32 = 2 };
size_t type_size(DataType t);
const char* type_name(DataType t);

struct FieldSpec {
  DataType type;
  int nlevels;
};

class Redist {
 public:
  // Collective over the xmap's communicator.
  Redist(std::shared_ptr<const Xmap> xmap, std::vector<FieldSpec> fields, Method method);
  ~Redist();
  Redist(const Redist&) = delete;
  Redist& operator=(const Redist&) = delete;

  // Field arrays are level-major: level l of local point p at [l * local_size + p].
  void exchange(const void* const* src_fields, void* const* dst_fields);
  void exchange_reverse(const void* const* dst_fields, void* const* src_fields);

  // Split exchange: start packs and posts the messages (the inputs may be reused as soon as it
  // returns); wait completes them and writes the outputs, which must not be touched in between.
  // One exchange at a time per redistribution.
  void start(bool reverse, const void* const* in, void* const* out);
  void wait();
  bool pending() const { return pending_ != nullptr; }

  Method method() const { return method_; }
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
  };
  void setup(Direction& d, const Schedule& s, char* sbuf, char* rbuf, int tag);
  void check_arrays(const Direction& d, const void* const* in, void* const* out,
                    const char* what) const;
  void run(Direction& d, const void* const* in, void* const* out, const char* what);
  void count_exchange(double t0);  // trace: one exchange that began at t0
  void release();                  // executors, then the communicator

  std::shared_ptr<const Xmap> xmap_;
  std::vector<FieldSpec> fields_;
  Method method_;
  size_t point_bytes_ = 0;
  MPI_Comm comm_ = MPI_COMM_NULL;
  std::vector<char> buf_a_, buf_b_;
  Direction forward_, reverse_;
  trace::Trace trace_;
  Direction* pending_ = nullptr;       // the direction of a started exchange
  std::vector<void*> pending_out_;      // its output arrays (copied: the caller's list may go)
  double pending_t0_ = 0;
};

}  // namespace isthmus
