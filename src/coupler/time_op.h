// LOCTRANS: what the source side sends at a coupling date, made from the puts since the last one.
// The rules are OASIS3-MCT's (oasis_advance_run in mod_oasis_advance.F90, docs/coupler-files.md):
// every put is added, the put at the coupling date itself included; at the coupling date the
// result is sent and the accumulator reset; at the end of a run the partial accumulation goes
// to the restart file and the next run continues it.
#pragma once
#include <cstddef>
#include <vector>

#include "coupler/config.h"

namespace isthmus::coupler {

class Accumulator {
 public:
  Accumulator(TimeOp op, size_t n);  // n values (points * levels * fields)

  // One put (every put call, coupling date or not). Float fields (OASIS_Real) are widened to
  // double first, as OASIS does before it accumulates.
  void add(const double* x);
  void add(const float* x);

  int count() const { return count_; }  // puts since the last reset (or as restored)
  // INSTANT: the last put; ACCUMUL: the sum; AVERAGE: the sum times OASIS's reciprocal of the
  // count (see average_factor); T_MIN/T_MAX: the minimum/maximum. With no put since the
  // reset: zeros (INSTANT, ACCUMUL, AVERAGE, as OASIS's zeroed vector) or the restored state.
  void result(double* out) const;
  void reset();  // after the coupling date's result was taken: zeros, count 0

  // Restart: the state (sum, min/max or last values) and the count, restored bit-identically.
  // The state is also OASIS's loc<ID>_<field> restart variable, and oasis_counter() its
  // loc<ID>_cnt value, so either run can continue the other's accumulation.
  const std::vector<double>& state() const { return state_; }
  void restore(std::vector<double> state, int count);
  // What OASIS writes in loc<ID>_cnt: the count for AVERAGE; for ACCUMUL, T_MIN and T_MAX only
  // "any put yet" (0 or 1), which is all those operations need.
  int oasis_counter() const;

  TimeOp op() const { return op_; }
  size_t size() const { return state_.size(); }

 private:
  template <typename T>
  void add_values(const T* x);

  TimeOp op_;
  int count_ = 0;
  std::vector<double> state_;
};

// The factor AVERAGE multiplies the sum by: OASIS computes 1.0/count in default (single
// precision) REAL and multiplies the double sum by it, so that is what we do, to send the same
// bits as OASIS. 1 for count <= 1 (OASIS leaves the sum alone then).
double average_factor(int count);

}  // namespace isthmus::coupler
