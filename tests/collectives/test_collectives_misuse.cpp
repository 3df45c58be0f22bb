// Misuse of the collective calls of the C API (docs/errors.md, issue 11): isthmus_alltoallv,
// isthmus_allreduce_double/int64 and isthmus_global_sum with a bad argument on one rank (the
// last) and on every rank, with arguments that differ across ranks where they must match, and
// with alltoallv counts that do not pair up, for every algorithm. Every case runs under a
// Watchdog and asserts the same code on every rank and the exact message on every rank; after
// each case a correct call on the same context must still work.
#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "isthmus.h"
#include "mpi_test_util.h"

namespace {

struct Ctx {
  isthmus_context* c = nullptr;
  Ctx() { EXPECT_EQ(isthmus_context_create(MPI_COMM_WORLD, &c), ISTHMUS_OK); }
  ~Ctx() { isthmus_context_destroy(&c); }
};

const MisuseOn kOnWhom[] = {MisuseOn::OneRank, MisuseOn::AllRanks};

std::string str(int64_t v) { return std::to_string(v); }
std::string head(const std::string& fn, int rank) { return "isthmus: rank " + str(rank) + ": " + fn + ": "; }

// The message rank `me` must report when the misused ranks fail with own(r) on rank r: its own
// message on a misused rank, "failed on rank F: <F's message>" (F the lowest misused rank)
// on the others.
std::string failure_message(const std::string& fn, MisuseOn on, const std::function<std::string(int)>& own) {
  const int me = world_rank(), f = on == MisuseOn::AllRanks ? 0 : world_size() - 1;
  return is_misused(on) ? head(fn, me) + own(me) : head(fn, me) + "failed on rank " + str(f) + ": " + own(f);
}

// A mismatch of values that must be equal: the same message on every rank.
std::string mismatch_message(const std::string& fn, const std::string& what, int rank_a, int64_t a,
                             int rank_b, int64_t b) {
  return head(fn, world_rank()) + what + " must be the same on every rank, but rank " + str(rank_a) +
         " passes " + str(a) + " and rank " + str(rank_b) + " passes " + str(b);
}

// The code on every rank, and this rank's message (asserted on every rank).
void expect_failure(const std::string& name, int rc, int code, isthmus_context* c, const std::string& want) {
  const std::vector<int> codes = codes_of_all_ranks(rc);
  bool same = true;
  for (int x : codes) same = same && x == code;
  std::string all;
  for (int x : codes) all += " " + str(x);
  EXPECT_TRUE(same) << name << ": codes" << all << ", want " << code << " everywhere";
  const std::string got = isthmus_last_error(c);
  EXPECT_EQ(got, want) << name << " (rank " << world_rank() << ")";
  EXPECT_TRUE(all_ranks(got == want)) << name << ": a rank has another message";
}

// ---- alltoallv --------------------------------------------------------------------------

// Counts rank i sends rank j: 2 + (i + j) % 3 (never 0, so that every block has data).
struct A2A {
  int n = world_size(), me = world_rank();
  std::vector<int> sc, sd, rc, rd;
  std::vector<int32_t> send, recv;
  const void* sb;
  void* rb;
  const int *psc, *psd, *prc, *prd;
  int datatype = ISTHMUS_INT32, algorithm = ISTHMUS_ALLTOALLV_RING, ring_k = 2;
  A2A() : sc(size_t(n)), sd(size_t(n)), rc(size_t(n)), rd(size_t(n)) {
    for (int p = 0; p < n; ++p) sc[size_t(p)] = count(me, p), rc[size_t(p)] = count(p, me);
    for (int p = 0, s = 0, r = 0; p < n; ++p) sd[size_t(p)] = s, rd[size_t(p)] = r, s += sc[size_t(p)], r += rc[size_t(p)];
    send.resize(size_t(sd.back() + sc.back()) + 8);
    recv.assign(size_t(rd.back() + rc.back()) + 8, -1);
    for (int p = 0; p < n; ++p)
      for (int e = 0; e < sc[size_t(p)]; ++e) send[size_t(sd[size_t(p)] + e)] = me * 1000 + p * 10 + e;
    sb = send.data(), rb = recv.data(), psc = sc.data(), psd = sd.data(), prc = rc.data(), prd = rd.data();
  }
  static int count(int from, int to) { return 2 + (from + to) % 3; }
  int call(isthmus_context* c) const {
    return isthmus_alltoallv(c, sb, psc, psd, rb, prc, prd, datatype, algorithm, ring_k);
  }
  bool received_right() const {
    bool ok = true;
    for (int p = 0; p < n; ++p)
      for (int e = 0; e < count(p, me); ++e) ok = ok && recv[size_t(rd[size_t(p)] + e)] == p * 1000 + me * 10 + e;
    return ok;
  }
};

// A correct alltoallv with the given algorithm still works on the context.
void expect_alltoallv_works(isthmus_context* c, const std::string& after, int algorithm = ISTHMUS_ALLTOALLV_AUTO) {
  A2A a;
  a.algorithm = algorithm;
  const int rc = a.call(c);
  EXPECT_TRUE(all_ranks(rc == ISTHMUS_OK && a.received_right()))
      << "a correct alltoallv after '" << after << "' failed: " << isthmus_last_error(c);
}

struct A2ACase {
  std::string name;
  std::function<void(A2A&)> misuse;        // applied on the misused ranks
  std::function<std::string(int)> message;  // the misused rank r's own message
};

TEST(CollectivesMisuse, AlltoallvBadArgument) {
  Ctx ctx;
  const int n = world_size();
  const std::string fn = "isthmus_alltoallv";
  const std::vector<A2ACase> cases = {
      {"negative sendcount", [](A2A& a) { a.sc[0] = -1; },
       [](int r) {
         return "alltoallv: negative count or displacement for rank 0 (sendcount -1, sdispl 0, recvcount " +
                str(A2A::count(0, r)) + ", rdispl 0)";
       }},
      {"negative rdispl", [](A2A& a) { a.rd[0] = -7; },
       [](int r) {
         return "alltoallv: negative count or displacement for rank 0 (sendcount " + str(A2A::count(r, 0)) +
                ", sdispl 0, recvcount " + str(A2A::count(0, r)) + ", rdispl -7)";
       }},
      {"NULL sendcounts", [](A2A& a) { a.psc = nullptr; }, [](int) { return "alltoallv: sendcounts is NULL"; }},
      {"NULL sdispls", [](A2A& a) { a.psd = nullptr; }, [](int) { return "alltoallv: sdispls is NULL"; }},
      {"NULL recvcounts", [](A2A& a) { a.prc = nullptr; }, [](int) { return "alltoallv: recvcounts is NULL"; }},
      {"NULL rdispls", [](A2A& a) { a.prd = nullptr; }, [](int) { return "alltoallv: rdispls is NULL"; }},
      {"NULL sendbuf", [](A2A& a) { a.sb = nullptr; },
       [](int r) { return "alltoallv: sendbuf is NULL but sendcounts[0] = " + str(A2A::count(r, 0)); }},
      {"NULL recvbuf", [](A2A& a) { a.rb = nullptr; },
       [](int r) { return "alltoallv: recvbuf is NULL but recvcounts[0] = " + str(A2A::count(0, r)); }},
      {"recvbuf = sendbuf", [](A2A& a) { a.rb = const_cast<void*>(a.sb); },
       [](int r) {
         const std::string c = str(A2A::count(r, 0));
         return "alltoallv: the send block for rank 0 (sdispls[0] = 0, sendcounts[0] = " + c +
                ") overlaps the receive block from rank 0 (rdispls[0] = 0, recvcounts[0] = " + c +
                "): sendbuf and recvbuf must not overlap";
       }},
      {"bad datatype", [](A2A& a) { a.datatype = 7; },
       [](int) { return std::string("datatype 7 (0 ISTHMUS_DOUBLE, 1 ISTHMUS_FLOAT, 2 ISTHMUS_INT32)"); }},
      {"bad algorithm 6", [](A2A& a) { a.algorithm = 6; },
       [](int) { return std::string("alltoallv algorithm 6 is not one of 0..5"); }},
      {"bad algorithm -1", [](A2A& a) { a.algorithm = -1; },
       [](int) { return std::string("alltoallv algorithm -1 is not one of 0..5"); }},
      {"ring_k < 0", [](A2A& a) { a.ring_k = -1; },
       [](int) { return std::string("alltoallv: ring_k = -1 < 0 (0 means 4)"); }},
      {"self count differs", [](A2A& a) { a.sc[size_t(a.me)] += 1; },
       [](int r) {
         return "alltoallv: rank " + str(r) + " sends " + str(A2A::count(r, r) + 1) + " elements to itself (sendcounts[" +
                str(r) + "]) but expects " + str(A2A::count(r, r)) + " (recvcounts[" + str(r) + "])";
       }},
  };
  for (const A2ACase& k : cases)
    for (MisuseOn on : kOnWhom) {
      const std::string name = "alltoallv " + k.name + " on " + misuse_name(on);
      {
        Watchdog w(name);
        A2A a;
        if (is_misused(on)) k.misuse(a);
        const int rc = a.call(ctx.c);
        expect_failure(name, rc, ISTHMUS_ERR_ARG, ctx.c, failure_message(fn, on, k.message));
      }
      expect_alltoallv_works(ctx.c, name);
    }
  // Receive blocks that overlap need two peers.
  if (n >= 2)
    for (MisuseOn on : kOnWhom) {
      const std::string name = std::string("alltoallv overlapping receive blocks on ") + misuse_name(on);
      {
        Watchdog w(name);
        A2A a;
        if (is_misused(on)) a.rd[1] = a.rd[0] + 1;
        const int rc = a.call(ctx.c);
        expect_failure(name, rc, ISTHMUS_ERR_ARG, ctx.c, failure_message(fn, on, [](int r) {
                         return "alltoallv: the receive blocks from ranks 0 and 1 overlap (rdispls[0] = 0, recvcounts[0] = " +
                                str(A2A::count(0, r)) + ", rdispls[1] = 1)";
                       }));
      }
      expect_alltoallv_works(ctx.c, name);
    }
}

TEST(CollectivesMisuse, AlltoallvArgumentsDifferAcrossRanks) {
  const int n = world_size(), last = n - 1;
  if (n < 2) GTEST_SKIP() << "one rank cannot disagree with another";
  Ctx ctx;
  const std::string fn = "isthmus_alltoallv";
  struct Case {
    std::string name;
    std::function<void(A2A&)> on_last;
    std::string what;
    int64_t others, mine;
  };
  const std::vector<Case> cases = {
      {"datatype", [](A2A& a) { a.datatype = ISTHMUS_FLOAT; }, "datatype", ISTHMUS_INT32, ISTHMUS_FLOAT},
      {"algorithm", [](A2A& a) { a.algorithm = ISTHMUS_ALLTOALLV_PAIRWISE; }, "alltoallv: algorithm",
       ISTHMUS_ALLTOALLV_RING, ISTHMUS_ALLTOALLV_PAIRWISE},
      {"ring_k", [](A2A& a) { a.ring_k = 3; }, "alltoallv: ring_k", 2, 3},
  };
  for (const Case& k : cases) {
    const std::string name = "alltoallv " + k.name + " differs on the last rank";
    {
      Watchdog w(name);
      A2A a;
      if (world_rank() == last) k.on_last(a);
      const int rc = a.call(ctx.c);
      const bool last_smaller = k.mine < k.others;
      expect_failure(name, rc, ISTHMUS_ERR_ARG, ctx.c,
                     last_smaller ? mismatch_message(fn, k.what, last, k.mine, 0, k.others)
                                  : mismatch_message(fn, k.what, 0, k.others, last, k.mine));
    }
    expect_alltoallv_works(ctx.c, name);
  }
}

// (c) of issue 11: counts that do not pair up fail alike for every algorithm, before any
// message, with the first pair that disagrees named on every rank.
TEST(CollectivesMisuse, AlltoallvCountsDoNotPairUp) {
  const int n = world_size(), last = n - 1;
  if (n < 2) GTEST_SKIP() << "needs two ranks";
  Ctx ctx;
  const std::string fn = "isthmus_alltoallv";
  const auto message = [&](int i, int j, int sends, int expects) {
    return head(fn, world_rank()) + "alltoallv: sendcounts and recvcounts disagree: rank " + str(i) + " sends " +
           str(sends) + " elements to rank " + str(j) + " (its sendcounts[" + str(j) + "]), which expects " +
           str(expects) + " (its recvcounts[" + str(i) + "])";
  };
  for (int alg = ISTHMUS_ALLTOALLV_AUTO; alg <= ISTHMUS_ALLTOALLV_NATIVE; ++alg) {
    const std::string tag = " (algorithm " + str(alg) + ")";
    {
      const std::string name = "the last rank sends one more to rank 0" + tag;
      Watchdog w(name);
      A2A a;
      a.algorithm = alg;
      if (a.me == last) a.sc[0] += 1;
      expect_failure(name, a.call(ctx.c), ISTHMUS_ERR_ARG, ctx.c,
                     message(last, 0, A2A::count(last, 0) + 1, A2A::count(last, 0)));
    }
    {
      const std::string name = "rank 0 expects nothing from the last rank" + tag;
      Watchdog w(name);
      A2A a;
      a.algorithm = alg;
      if (a.me == 0) a.rc[size_t(last)] = 0;
      expect_failure(name, a.call(ctx.c), ISTHMUS_ERR_ARG, ctx.c, message(last, 0, A2A::count(last, 0), 0));
    }
    {
      const std::string name = "the last rank sends nothing to rank 0, which expects data" + tag;
      Watchdog w(name);
      A2A a;
      a.algorithm = alg;
      if (a.me == last) a.sc[0] = 0;
      expect_failure(name, a.call(ctx.c), ISTHMUS_ERR_ARG, ctx.c, message(last, 0, 0, A2A::count(last, 0)));
    }
    {
      const std::string name = "every rank sends one more to every other rank" + tag;
      Watchdog w(name);
      A2A a;
      a.algorithm = alg;
      for (int p = 0; p < n; ++p)
        if (p != a.me) a.sc[size_t(p)] += 1;
      expect_failure(name, a.call(ctx.c), ISTHMUS_ERR_ARG, ctx.c, message(0, 1, A2A::count(0, 1) + 1, A2A::count(0, 1)));
    }
    expect_alltoallv_works(ctx.c, "inconsistent counts" + tag, alg);
  }
}

// ---- allreduce --------------------------------------------------------------------------

struct Red {
  double dx[3] = {1, 2, 3}, dr[3] = {0, 0, 0};
  int64_t ix[3] = {1, 2, 3}, ir[3] = {0, 0, 0};
  const void* send = nullptr;
  void* recv = nullptr;
  int count = 2, op = ISTHMUS_SUM, algorithm = ISTHMUS_ALLREDUCE_RECURSIVE_K, k = 3;
  bool as_int64 = false;
  int call(isthmus_context* c) const {
    if (as_int64)
      return isthmus_allreduce_int64(c, static_cast<const int64_t*>(send), static_cast<int64_t*>(recv), count, op,
                                     algorithm, k);
    return isthmus_allreduce_double(c, static_cast<const double*>(send), static_cast<double*>(recv), count, op,
                                    algorithm, k);
  }
  Red(const Red&) = delete;  // send and recv point into the object
  Red& operator=(const Red&) = delete;
  explicit Red(bool int64) : as_int64(int64) {
    send = int64 ? static_cast<const void*>(ix) : dx;
    recv = int64 ? static_cast<void*>(ir) : dr;
  }
  const char* fn() const { return as_int64 ? "isthmus_allreduce_int64" : "isthmus_allreduce_double"; }
};

void expect_allreduce_works(isthmus_context* c, const std::string& after) {
  const int n = world_size();
  for (int alg = ISTHMUS_ALLREDUCE_AUTO; alg <= ISTHMUS_ALLREDUCE_NATIVE; ++alg) {
    double x[2] = {1.0, double(world_rank())}, r[2] = {0, 0};
    int64_t i = world_rank(), m = -1;
    const int a = isthmus_allreduce_double(c, x, r, 2, ISTHMUS_SUM, alg, 0);
    const int b = isthmus_allreduce_int64(c, &i, &m, 1, ISTHMUS_MAX, alg, 0);
    EXPECT_TRUE(all_ranks(a == ISTHMUS_OK && b == ISTHMUS_OK && r[0] == n && r[1] == n * (n - 1) / 2.0 && m == n - 1))
        << "a correct allreduce (algorithm " << alg << ") after '" << after << "' failed: " << isthmus_last_error(c);
  }
}

TEST(CollectivesMisuse, AllreduceBadArgument) {
  Ctx ctx;
  struct Case {
    std::string name;
    std::function<void(Red&)> misuse;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"negative count", [](Red& r) { r.count = -1; }, "allreduce: count -1 < 0"},
      {"NULL sendbuf", [](Red& r) { r.send = nullptr; }, "allreduce: sendbuf is NULL with count 2"},
      {"NULL recvbuf", [](Red& r) { r.recv = nullptr; }, "allreduce: recvbuf is NULL with count 2"},
      {"overlapping buffers",
       [](Red& r) { r.recv = static_cast<char*>(const_cast<void*>(r.send)) + 8; },
       "allreduce: sendbuf and recvbuf overlap without being equal (2 values; pass the same pointer to reduce in place)"},
      {"bad op 3", [](Red& r) { r.op = 3; }, "reduction op 3 is not one of 0..2"},
      {"bad op -1", [](Red& r) { r.op = -1; }, "reduction op -1 is not one of 0..2"},
      {"bad algorithm", [](Red& r) { r.algorithm = 4; }, "allreduce algorithm 4 is not one of 0..3"},
      {"k = 1", [](Red& r) { r.k = 1; }, "allreduce: radix k = 1 (need k >= 2, or 0 for auto)"},
      {"k < 0", [](Red& r) { r.k = -2; }, "allreduce: radix k = -2 (need k >= 2, or 0 for auto)"},
  };
  for (bool int64 : {false, true})
    for (const Case& k : cases)
      for (MisuseOn on : kOnWhom) {
        Red r(int64);
        const std::string name = std::string(r.fn()) + " " + k.name + " on " + misuse_name(on);
        {
          Watchdog w(name);
          if (is_misused(on)) k.misuse(r);
          const int rc = r.call(ctx.c);
          expect_failure(name, rc, ISTHMUS_ERR_ARG, ctx.c, failure_message(r.fn(), on, [&](int) { return k.message; }));
        }
        expect_allreduce_works(ctx.c, name);
      }
}

TEST(CollectivesMisuse, AllreduceArgumentsDifferAcrossRanks) {
  const int n = world_size(), last = n - 1;
  if (n < 2) GTEST_SKIP() << "one rank cannot disagree with another";
  Ctx ctx;
  struct Case {
    std::string name;
    std::function<void(Red&)> on_last;
    std::string what;
    int64_t others, mine;
  };
  const std::vector<Case> cases = {
      {"count", [](Red& r) { r.count = 3; }, "allreduce: count", 2, 3},
      {"op", [](Red& r) { r.op = ISTHMUS_MAX; }, "allreduce: op", ISTHMUS_SUM, ISTHMUS_MAX},
      {"algorithm", [](Red& r) { r.algorithm = ISTHMUS_ALLREDUCE_NATIVE; }, "allreduce: algorithm",
       ISTHMUS_ALLREDUCE_RECURSIVE_K, ISTHMUS_ALLREDUCE_NATIVE},
      {"k", [](Red& r) { r.k = 2; }, "allreduce: k", 3, 2},
      {"value type",
       [](Red& r) {
         r.as_int64 = true;
         r.send = r.ix, r.recv = r.ir;
       },
       "allreduce: value type (0 double, 1 int64)", 0, 1},
  };
  for (const Case& k : cases) {
    const std::string name = "allreduce " + k.name + " differs on the last rank";
    {
      Watchdog w(name);
      Red r(false);
      if (world_rank() == last) k.on_last(r);
      const int rc = r.call(ctx.c);
      const bool last_smaller = k.mine < k.others;
      expect_failure(name, rc, ISTHMUS_ERR_ARG, ctx.c,
                     last_smaller ? mismatch_message(r.fn(), k.what, last, k.mine, 0, k.others)
                                  : mismatch_message(r.fn(), k.what, 0, k.others, last, k.mine));
    }
    expect_allreduce_works(ctx.c, name);
  }
}

// ---- global sums ------------------------------------------------------------------------

// Rank r holds 3 + r points numbered from 3r + r(r-1)/2; point g holds 0.5 (g + 1), so every
// method sums exactly 0.25 N (N + 1).
struct Gsum {
  int me = world_rank(), n = world_size();
  std::vector<double> v0, v1;
  std::vector<int64_t> idx;
  std::vector<const double*> fields;
  double sums[2] = {-1, -1};
  int nfields = 2, method = ISTHMUS_GSUM_REPROSUM;
  int64_t npts;
  const double* const* pf;
  const int64_t* pidx;
  double* psums = sums;
  static int64_t first(int r) { return 3 * int64_t(r) + int64_t(r) * (r - 1) / 2; }
  Gsum() {
    npts = 3 + me;
    for (int64_t i = 0; i < npts; ++i) {
      const int64_t g = first(me) + i;
      idx.push_back(g), v0.push_back(0.5 * double(g + 1)), v1.push_back(-0.5 * double(g + 1));
    }
    fields = {v0.data(), v1.data()};
    pf = fields.data(), pidx = idx.data();
  }
  double expected() const {
    const double N = double(first(n));
    return 0.25 * N * (N + 1);
  }
  int call(isthmus_context* c) { return isthmus_global_sum(c, nfields, pf, npts, pidx, method, psums); }
};

void expect_global_sum_works(isthmus_context* c, const std::string& after) {
  for (int m = ISTHMUS_GSUM_AUTO; m <= ISTHMUS_GSUM_REPROSUM; ++m) {
    Gsum g;
    g.method = m;
    const int rc = g.call(c);
    EXPECT_TRUE(all_ranks(rc == ISTHMUS_OK && g.sums[0] == g.expected() && g.sums[1] == -g.expected()))
        << "a correct global sum (method " << m << ") after '" << after << "' failed: " << isthmus_last_error(c);
  }
}

TEST(CollectivesMisuse, GlobalSumBadArgument) {
  Ctx ctx;
  const std::string fn = "isthmus_global_sum";
  struct Case {
    std::string name;
    std::function<void(Gsum&)> misuse;
    std::function<std::string(int)> message;
  };
  const std::vector<Case> cases = {
      {"negative nfields", [](Gsum& g) { g.nfields = -1; }, [](int) { return std::string("global_sum: nfields = -1 < 0"); }},
      {"negative n", [](Gsum& g) { g.npts = -1; }, [](int) { return std::string("global_sum: n = -1 local points < 0"); }},
      {"NULL sums", [](Gsum& g) { g.psums = nullptr; },
       [](int) { return std::string("global_sum: sums is NULL with nfields = 2"); }},
      {"NULL fields", [](Gsum& g) { g.pf = nullptr; },
       [](int r) { return "global_sum: fields is NULL with n = " + str(3 + r) + " local points"; }},
      {"NULL field 1", [](Gsum& g) { g.fields[1] = nullptr; },
       [](int r) { return "global_sum: fields[1] is NULL with n = " + str(3 + r) + " local points"; }},
      {"bad method 6", [](Gsum& g) { g.method = 6; },
       [](int) { return std::string("global sum method 6 is not one of 0..5"); }},
      {"bad method -1", [](Gsum& g) { g.method = -1; },
       [](int) { return std::string("global sum method -1 is not one of 0..5"); }},
      {"gather, more values than one message holds",
       [](Gsum& g) {
         g.method = ISTHMUS_GSUM_GATHER;
         g.npts = int64_t(1) << 30;  // never read: the check comes first
       },
       [](int) { return std::string("global_sum gather: n = 1073741824 local points x 2 fields exceed the 2^31 - 1 values one gather message holds"); }},
  };
  for (const Case& k : cases)
    for (MisuseOn on : kOnWhom) {
      const std::string name = "global sum " + k.name + " on " + misuse_name(on);
      {
        Watchdog w(name);
        Gsum g;
        // The misused rank's method is the others' unless the case changes it.
        if (k.name.rfind("gather", 0) == 0) g.method = ISTHMUS_GSUM_GATHER;
        if (is_misused(on)) k.misuse(g);
        const int rc = g.call(ctx.c);
        expect_failure(name, rc, ISTHMUS_ERR_ARG, ctx.c, failure_message(fn, on, k.message));
      }
      expect_global_sum_works(ctx.c, name);
    }
  // Gather's index checks run on rank 0 and are broadcast: one message on every rank.
  for (MisuseOn on : kOnWhom) {
    const std::string name = std::string("global sum gather, an index given twice on ") + misuse_name(on);
    {
      Watchdog w(name);
      Gsum g;
      g.method = ISTHMUS_GSUM_GATHER;
      if (is_misused(on)) g.idx[1] = g.idx[0];
      const int rc = g.call(ctx.c);
      const int64_t dup = Gsum::first(on == MisuseOn::AllRanks ? 0 : world_size() - 1);
      expect_failure(name, rc, ISTHMUS_ERR_ARG, ctx.c,
                     head(fn, world_rank()) + "global_sum gather: global index " + str(dup) +
                         " is given twice (the indices must number the points 0..N-1)");
    }
    expect_global_sum_works(ctx.c, name);
  }
}

TEST(CollectivesMisuse, GlobalSumArgumentsDifferAcrossRanks) {
  const int n = world_size(), last = n - 1;
  if (n < 2) GTEST_SKIP() << "one rank cannot disagree with another";
  Ctx ctx;
  const std::string fn = "isthmus_global_sum";
  struct Case {
    std::string name;
    int others_method;
    std::function<void(Gsum&)> on_last;
    std::string what;
    int64_t others, mine;
  };
  const std::vector<Case> cases = {
      {"nfields", ISTHMUS_GSUM_REPROSUM, [](Gsum& g) { g.nfields = 1; }, "global_sum: nfields", 2, 1},
      {"method reprosum/lsum8", ISTHMUS_GSUM_REPROSUM, [](Gsum& g) { g.method = ISTHMUS_GSUM_LSUM8; },
       "global_sum: method", ISTHMUS_GSUM_REPROSUM, ISTHMUS_GSUM_LSUM8},
      {"method auto/gather", ISTHMUS_GSUM_AUTO, [](Gsum& g) { g.method = ISTHMUS_GSUM_GATHER; },
       "global_sum: method", ISTHMUS_GSUM_AUTO, ISTHMUS_GSUM_GATHER},
      {"method lsum16/ddpdd", ISTHMUS_GSUM_LSUM16, [](Gsum& g) { g.method = ISTHMUS_GSUM_DDPDD; },
       "global_sum: method", ISTHMUS_GSUM_LSUM16, ISTHMUS_GSUM_DDPDD},
      {"gather, global_index NULL on the last rank only", ISTHMUS_GSUM_GATHER, [](Gsum& g) { g.pidx = nullptr; },
       "global_sum: whether global_index is given (1) or NULL (0) on ranks with points", 1, 0},
  };
  for (const Case& k : cases) {
    const std::string name = "global sum " + k.name + " differs on the last rank";
    {
      Watchdog w(name);
      Gsum g;
      g.method = k.others_method;
      if (world_rank() == last) k.on_last(g);
      const int rc = g.call(ctx.c);
      const bool last_smaller = k.mine < k.others;
      expect_failure(name, rc, ISTHMUS_ERR_ARG, ctx.c,
                     last_smaller ? mismatch_message(fn, k.what, last, k.mine, 0, k.others)
                                  : mismatch_message(fn, k.what, 0, k.others, last, k.mine));
    }
    expect_global_sum_works(ctx.c, name);
  }
}

}  // namespace
