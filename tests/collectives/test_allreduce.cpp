// recursive-k for every k and rank count (powers of k or not, k above the rank count) equals
// the naive reference: exactly for integers and for doubles whose sums are exact, and within
// rounding for general doubles; every rank receives the same bits.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "base/error.h"
#include "collectives/allreduce.h"
#include "collectives/barrier.h"
#include "mpi_test_util.h"

using namespace isthmus;

namespace {

struct Algo {
  AllreduceAlgorithm a;
  int k;
};

std::vector<Algo> algos() {
  std::vector<Algo> v = {{AllreduceAlgorithm::Native, 0},
                         {AllreduceAlgorithm::RecursiveDoubling, 0},
                         {AllreduceAlgorithm::Auto, 0}};
  for (int k : {2, 3, 4, 5, 7, 8, 9, 16, 32}) v.push_back({AllreduceAlgorithm::RecursiveK, k});
  return v;
}

std::string name(Algo a) { return std::string(allreduce_algorithm_name(a.a)) + " k=" + std::to_string(a.k); }

// Every rank holds the same bytes (compared through rank 0's copy).
template <typename T>
bool same_on_all_ranks(const std::vector<T>& v) {
  std::vector<T> root = v;
  MPI_Bcast(root.data(), int(root.size() * sizeof(T)), MPI_BYTE, 0, MPI_COMM_WORLD);
  return all_ranks(std::memcmp(root.data(), v.data(), v.size() * sizeof(T)) == 0);
}

}  // namespace

TEST(Allreduce, Int64SumMinMaxExact) {
  int me = world_rank(), n = world_size();
  for (int count : {0, 1, 3, 100})
    for (Algo a : algos()) {
      AllreduceOptions o;
      o.algorithm = a.a;
      o.k = a.k;
      std::vector<int64_t> x(count), r(count, -1);
      for (int i = 0; i < count; ++i) x[size_t(i)] = int64_t(me + 1) * (i + 1) * ((i + me) % 2 ? -1 : 1) + (int64_t(1) << 40);
      for (ReduceOp op : {ReduceOp::Sum, ReduceOp::Min, ReduceOp::Max}) {
        allreduce(x.data(), r.data(), count, op, MPI_COMM_WORLD, o);
        bool ok = true;
        for (int i = 0; i < count; ++i) {
          int64_t want = op == ReduceOp::Sum ? 0 : op == ReduceOp::Min ? INT64_MAX : INT64_MIN;
          for (int p = 0; p < n; ++p) {
            int64_t v = int64_t(p + 1) * (i + 1) * ((i + p) % 2 ? -1 : 1) + (int64_t(1) << 40);
            want = op == ReduceOp::Sum ? want + v : op == ReduceOp::Min ? std::min(want, v) : std::max(want, v);
          }
          ok = ok && r[size_t(i)] == want;
        }
        EXPECT_TRUE(all_ranks(ok)) << name(a) << " op " << int(op) << " count " << count;
      }
    }
}

TEST(Allreduce, DoubleSumsAgreeWithReferenceAndAcrossRanks) {
  int me = world_rank(), n = world_size();
  for (int count : {1, 2, 3, 17})
    for (Algo a : algos()) {
      AllreduceOptions o;
      o.algorithm = a.a;
      o.k = a.k;
      // Exact case: small integers times powers of two, every partial sum representable.
      std::vector<double> x(count), r(count);
      for (int i = 0; i < count; ++i) x[size_t(i)] = std::ldexp(double(me * 3 - i), i);
      allreduce(x.data(), r.data(), count, ReduceOp::Sum, MPI_COMM_WORLD, o);
      bool exact = true;
      for (int i = 0; i < count; ++i) {
        double want = 0;
        for (int p = 0; p < n; ++p) want += std::ldexp(double(p * 3 - i), i);
        exact = exact && r[size_t(i)] == want;
      }
      EXPECT_TRUE(all_ranks(exact)) << name(a) << " count " << count;
      // Inexact case: within rounding of the naive sum, and the same bits on every rank.
      for (int i = 0; i < count; ++i) x[size_t(i)] = std::sin(1.0 + me * 7.3 + i * 0.37) * 1e3;
      std::vector<double> y = x;  // in place
      allreduce(y.data(), y.data(), count, ReduceOp::Sum, MPI_COMM_WORLD, o);
      bool close = true;
      for (int i = 0; i < count; ++i) {
        double want = 0;
        for (int p = 0; p < n; ++p) want += std::sin(1.0 + p * 7.3 + i * 0.37) * 1e3;
        close = close && std::fabs(y[size_t(i)] - want) <= 1e-12 * 1e3 * n;
      }
      EXPECT_TRUE(all_ranks(close)) << name(a) << " count " << count;
      EXPECT_TRUE(same_on_all_ranks(y)) << name(a) << " count " << count;
      // Max and min of doubles are exact.
      allreduce(x.data(), r.data(), count, ReduceOp::Max, MPI_COMM_WORLD, o);
      bool mx = true;
      for (int i = 0; i < count; ++i) {
        double want = -1e300;
        for (int p = 0; p < n; ++p) want = std::max(want, std::sin(1.0 + p * 7.3 + i * 0.37) * 1e3);
        mx = mx && r[size_t(i)] == want;
      }
      EXPECT_TRUE(all_ranks(mx)) << name(a);
    }
}

TEST(Allreduce, CountsMessagesOfRecursiveK) {
  // With n = k^p ranks, recursive-k sends p(k-1) messages per rank and folds nothing.
  int n = world_size();
  for (int k : {2, 3, 4, 5, 7, 8}) {
    int p = 0, m = 1;
    while (m * k <= n) m *= k, ++p;
    if (m != n) continue;
    trace::Counters c;
    AllreduceOptions o;
    o.algorithm = AllreduceAlgorithm::RecursiveK;
    o.k = k;
    o.counters = &c;
    double x = 1, r = 0;
    allreduce(&x, &r, 1, ReduceOp::Sum, MPI_COMM_WORLD, o);
    EXPECT_EQ(r, double(n));
    EXPECT_EQ(c.messages_sent, int64_t(p) * (k - 1)) << "k=" << k;
  }
}

TEST(Allreduce, RejectsBadRadixAndNames) {
  double x = 1, r = 0;
  AllreduceOptions o;
  o.algorithm = AllreduceAlgorithm::RecursiveK;
  o.k = 1;
  try {
    allreduce(&x, &r, 1, ReduceOp::Sum, MPI_COMM_WORLD, o);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ISTHMUS_ERR_ARG);
    EXPECT_STREQ(e.what(), "allreduce: radix k = 1 (need k >= 2, or 0 for auto)");
  }
  EXPECT_EQ(parse_allreduce_algorithm("recursive-k"), AllreduceAlgorithm::RecursiveK);
  EXPECT_EQ(auto_radix(100000), 4);
  EXPECT_EQ(auto_radix(3), 3);
  EXPECT_EQ(auto_radix(1), 2);
}

TEST(Barrier, NoRankLeavesBeforeTheLastEntered) {
  // The last rank enters 20 ms late; every rank must leave after it entered. The ranks share
  // one host, so the system-wide monotonic clock is comparable between them (MPI_Wtime is not:
  // Open MPI counts it from each process's MPI_Init).
  int me = world_rank(), n = world_size();
  for (int round = 0; round < 2; ++round) {
    auto now = [] {
      return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
    };
    double entered = 0;
    if (me == n - 1) {
      double t0 = now();
      while (now() - t0 < 0.02) {
      }
      entered = now();
    }
    isthmus::dissemination_barrier(MPI_COMM_WORLD);
    double left = now();
    double last_entry = entered;
    MPI_Bcast(&last_entry, 1, MPI_DOUBLE, n - 1, MPI_COMM_WORLD);
    EXPECT_TRUE(all_ranks(left >= last_entry)) << "rank " << me << " left " << last_entry - left << " s early";
  }
}
