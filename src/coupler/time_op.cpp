#include "coupler/time_op.h"

#include <algorithm>
#include <cstdint>

#include "base/error.h"

namespace isthmus::coupler {

double average_factor(int count) {
  if (count <= 1) return 1.0;
  // OASIS: rcnt = 1.0/avcnt, a default-REAL literal over an integer: single precision.
  const float reciprocal = 1.0f / static_cast<float>(count);
  return static_cast<double>(reciprocal);
}

Accumulator::Accumulator(TimeOp op, size_t n) : op_(op), state_(n, 0.0) {}

template <typename T>
void Accumulator::add_values(const T* x) {
  const size_t n = state_.size();
  if (n > 0 && !x) fail(ISTHMUS_ERR_ARG, "time operation ", time_op_name(op_), ": the put array is NULL");
  double* s = state_.data();
  switch (op_) {
    case TimeOp::Instant:
      for (size_t i = 0; i < n; ++i) s[i] = static_cast<double>(x[i]);
      break;
    case TimeOp::Accumul:
    case TimeOp::Average:
      for (size_t i = 0; i < n; ++i) s[i] += static_cast<double>(x[i]);
      break;
    case TimeOp::TMin:
      // OASIS keeps the first put after a reset as it is (its vector holds zeros then).
      if (count_ == 0) {
        for (size_t i = 0; i < n; ++i) s[i] = static_cast<double>(x[i]);
      } else {
        for (size_t i = 0; i < n; ++i) s[i] = std::min(s[i], static_cast<double>(x[i]));
      }
      break;
    case TimeOp::TMax:
      if (count_ == 0) {
        for (size_t i = 0; i < n; ++i) s[i] = static_cast<double>(x[i]);
      } else {
        for (size_t i = 0; i < n; ++i) s[i] = std::max(s[i], static_cast<double>(x[i]));
      }
      break;
  }
  ++count_;
}

void Accumulator::add(const double* x) { add_values(x); }
void Accumulator::add(const float* x) { add_values(x); }

void Accumulator::result(double* out) const {
  const size_t n = state_.size();
  if (n > 0 && !out) fail(ISTHMUS_ERR_ARG, "time operation ", time_op_name(op_), ": the result array is NULL");
  if (op_ == TimeOp::Average && count_ > 1) {
    const double f = average_factor(count_);
    for (size_t i = 0; i < n; ++i) out[i] = state_[i] * f;
  } else {
    std::copy(state_.begin(), state_.end(), out);
  }
}

void Accumulator::reset() {
  std::fill(state_.begin(), state_.end(), 0.0);
  count_ = 0;
}

void Accumulator::restore(std::vector<double> state, int count) {
  if (state.size() != state_.size())
    fail(ISTHMUS_ERR_ARG, "time operation ", time_op_name(op_), ": restored state has ",
         state.size(), " values, expected ", state_.size());
  if (count < 0)
    fail(ISTHMUS_ERR_ARG, "time operation ", time_op_name(op_), ": restored count ", count,
         " is negative");
  state_ = std::move(state);
  count_ = count;
}

int Accumulator::oasis_counter() const {
  if (op_ == TimeOp::Average) return count_;
  return count_ > 0 ? 1 : 0;
}

}  // namespace isthmus::coupler
