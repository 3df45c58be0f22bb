// LOCTRANS against hand computations: the value sent at each coupling date of a run of puts,
// double and float, and a restart in the middle of an accumulation continuing bit-identically.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "base/error.h"
#include "coupler/time_op.h"

using isthmus::coupler::Accumulator;
using isthmus::coupler::TimeOp;
using isthmus::coupler::average_factor;

namespace {

bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

// Two points; put k (k = 1, 2, ...) holds {k, -2k} at point 0 and 1, except that point 1
// alternates in sign so that min and max differ from the first and the last put.
std::vector<double> put_values(int k) { return {double(k), (k % 2 ? -2.0 : 3.0) * k}; }

std::vector<double> result_of(const Accumulator& a) {
  std::vector<double> out(a.size());
  a.result(out.data());
  return out;
}

}  // namespace

TEST(TimeOp, AverageFactorIsOasisSinglePrecisionReciprocal) {
  EXPECT_EQ(average_factor(0), 1.0);
  EXPECT_EQ(average_factor(1), 1.0);
  EXPECT_EQ(average_factor(2), 0.5);
  EXPECT_EQ(average_factor(4), 0.25);
  // 1/3 rounded to float, then widened: not the double 1/3.
  EXPECT_TRUE(same_bits(average_factor(3), static_cast<double>(1.0f / 3.0f)));
  EXPECT_FALSE(same_bits(average_factor(3), 1.0 / 3.0));
  EXPECT_TRUE(same_bits(average_factor(3), 0.3333333432674408));
}

// Puts 1, 2, 3 between two coupling dates (the last is the coupling date's own put).
TEST(TimeOp, EachOperationAgainstHandComputation) {
  struct Case {
    TimeOp op;
    std::vector<double> expected;
  };
  const double third = static_cast<double>(1.0f / 3.0f);
  const std::vector<Case> cases = {
      {TimeOp::Instant, {3.0, -6.0}},
      {TimeOp::Accumul, {6.0, -2.0 + 6.0 - 6.0}},
      {TimeOp::Average, {6.0 * third, -2.0 * third}},
      {TimeOp::TMin, {1.0, -6.0}},
      {TimeOp::TMax, {3.0, 6.0}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(isthmus::coupler::time_op_name(c.op));
    Accumulator a(c.op, 2);
    for (int k = 1; k <= 3; ++k) a.add(put_values(k).data());
    EXPECT_EQ(a.count(), 3);
    const std::vector<double> r = result_of(a);
    for (int i = 0; i < 2; ++i) EXPECT_TRUE(same_bits(r[i], c.expected[i])) << i << ": " << r[i];
    // The coupling date resets: the next window starts empty.
    a.reset();
    EXPECT_EQ(a.count(), 0);
    a.add(put_values(7).data());
    const std::vector<double> r2 = result_of(a);
    EXPECT_EQ(r2, put_values(7));  // one put: every operation sends it as it is
  }
}

// The first coupling at t = 0 holds only the put at t = 0; an average over one put is not
// multiplied (OASIS: only counts above 1 are).
TEST(TimeOp, FirstCouplingDateHoldsOnlyItsOwnPut) {
  Accumulator a(TimeOp::Average, 1);
  const double x = 0.1;
  a.add(&x);
  double r = 0;
  a.result(&r);
  EXPECT_TRUE(same_bits(r, 0.1));
}

TEST(TimeOp, FloatPutsAccumulateInDouble) {
  // 16777216 + 1 + 1 is 16777218 in double; a float sum would stay at 16777216.
  const float big = 16777216.0f, one = 1.0f;
  Accumulator a(TimeOp::Accumul, 1);
  a.add(&big);
  a.add(&one);
  a.add(&one);
  double r = 0;
  a.result(&r);
  EXPECT_EQ(r, 16777218.0);

  Accumulator avg(TimeOp::Average, 1);
  const float v[3] = {0.1f, 0.2f, 0.4f};
  for (const float& x : v) avg.add(&x);
  avg.result(&r);
  const double sum = double(0.1f) + double(0.2f) + double(0.4f);
  EXPECT_TRUE(same_bits(r, sum * static_cast<double>(1.0f / 3.0f)));

  Accumulator mn(TimeOp::TMin, 1), mx(TimeOp::TMax, 1);
  for (const float& x : v) {
    mn.add(&x);
    mx.add(&x);
  }
  mn.result(&r);
  EXPECT_TRUE(same_bits(r, double(0.1f)));
  mx.result(&r);
  EXPECT_TRUE(same_bits(r, double(0.4f)));
}

// A run stopped after put 5 of a window and restarted from state()/count gives the same bits
// at the coupling date as an uninterrupted run, for every operation.
TEST(TimeOp, RestoreContinuesBitIdentically) {
  const TimeOp ops[] = {TimeOp::Instant, TimeOp::Accumul, TimeOp::Average, TimeOp::TMin,
                        TimeOp::TMax};
  const int n = 5;
  auto values = [](int k) {
    std::vector<double> v(n);
    for (int i = 0; i < n; ++i) v[i] = 1.0 / (k + 3.0 * i + 1.0) - 0.3 * (k % 3);
    return v;
  };
  for (TimeOp op : ops) {
    SCOPED_TRACE(isthmus::coupler::time_op_name(op));
    Accumulator whole(op, n), first(op, n);
    for (int k = 0; k < 9; ++k) whole.add(values(k).data());
    for (int k = 0; k < 5; ++k) first.add(values(k).data());
    Accumulator second(op, n);
    second.restore(first.state(), first.count());
    for (int k = 5; k < 9; ++k) second.add(values(k).data());
    EXPECT_EQ(second.count(), 9);
    const std::vector<double> a = result_of(whole), b = result_of(second);
    for (int i = 0; i < n; ++i) EXPECT_TRUE(same_bits(a[i], b[i])) << i;
  }
}

// A state read from an OASIS restart carries OASIS's counter, which is 1 for ACCUMUL, T_MIN and
// T_MAX whatever the number of puts: the results are the same.
TEST(TimeOp, OasisCounterRoundTrip) {
  Accumulator acc(TimeOp::Accumul, 1), avg(TimeOp::Average, 1), mn(TimeOp::TMin, 1);
  EXPECT_EQ(mn.oasis_counter(), 0);
  for (double x : {4.0, 2.0, 3.0}) {
    acc.add(&x);
    avg.add(&x);
    mn.add(&x);
  }
  EXPECT_EQ(acc.oasis_counter(), 1);
  EXPECT_EQ(avg.oasis_counter(), 3);
  EXPECT_EQ(mn.oasis_counter(), 1);
  Accumulator mn2(TimeOp::TMin, 1), acc2(TimeOp::Accumul, 1);
  mn2.restore(mn.state(), mn.oasis_counter());
  acc2.restore(acc.state(), acc.oasis_counter());
  const double five = 5.0, one = 1.0;
  mn2.add(&five);  // counter 1: compared with the restored minimum, not taken as the first put
  acc2.add(&one);
  double r = 0;
  mn2.result(&r);
  EXPECT_EQ(r, 2.0);
  acc2.result(&r);
  EXPECT_EQ(r, 10.0);
}

TEST(TimeOp, MisuseIsAnError) {
  Accumulator a(TimeOp::Average, 3);
  try {
    a.restore(std::vector<double>(2), 1);
    FAIL() << "no error";
  } catch (const isthmus::Error& e) {
    EXPECT_EQ(e.code(), ISTHMUS_ERR_ARG);
    EXPECT_STREQ(e.what(), "time operation AVERAGE: restored state has 2 values, expected 3");
  }
  EXPECT_THROW(a.add(static_cast<const double*>(nullptr)), isthmus::Error);
}
