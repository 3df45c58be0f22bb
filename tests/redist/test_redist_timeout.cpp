// The wait timeout of a redistribution (isthmus_redist_set_wait_timeout), the transfer layer's
// part of the coupler's deadlock diagnosis: a rank that never sends turns its receivers' wait
// into ISTHMUS_ERR_TIMEOUT naming it and its bytes, nobody hangs, the redistribution refuses
// further use, and the next one works. A timeout that is not reached changes nothing, and the
// wait sleeps instead of spinning. Every case runs under a watchdog.
#include <sys/resource.h>

#include <chrono>
#include <cmath>
#include <regex>
#include <thread>

#include "capi/handles.h"
#include "redist_test_util.h"

namespace {

int late_rank() { return world_size() - 1; }
bool is_late() { return world_rank() == late_rank(); }

std::string prefix(const char* fn) {
  return "isthmus: rank " + std::to_string(world_rank()) + ": " + fn + ": ";
}
// The one part of a timeout message that depends on the machine.
std::string without_elapsed(const std::string& msg) {
  static const std::regex elapsed("timed out after [0-9]+\\.[0-9][0-9] s");
  return std::regex_replace(msg, elapsed, "timed out after X s");
}
double elapsed_in(const std::string& msg) {
  std::smatch m;
  static const std::regex elapsed("timed out after ([0-9]+\\.[0-9][0-9]) s");
  return std::regex_search(msg, m, elapsed) ? std::stod(m[1]) : -1;
}

double cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         1e-6 * static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

const std::vector<int> kTypes = {ISTHMUS_DOUBLE, ISTHMUS_INT32};
const std::vector<int> kLevels = {2, 1};
constexpr int64_t kPointBytes = 2 * 8 + 4;
constexpr int64_t kPointsPerPeer = 4;
// What one sender's message to one receiver holds: the status word, then its points.
constexpr int64_t kMessageBytes = 8 + kPointsPerPeer * kPointBytes;

// Every rank sends kPointsPerPeer points to every receiver; the last rank (the late one) holds
// no destination points, so it receives nothing and every other rank waits for it. Each case
// makes its own context, hence its own communicators: a late message cannot reach the next case.
struct LateSenderMap {
  Fixture fx{MPI_COMM_WORLD};
  std::vector<int64_t> src, dst;
  isthmus_xmap* x = nullptr;
  MPI_Comm receivers = MPI_COMM_NULL;  // the ranks that are not late, or the late one alone

  LateSenderMap() {
    const int receivers_n = std::max(world_size() - 1, 1);
    const int64_t block = kPointsPerPeer * receivers_n;
    const int64_t n = block * world_size();
    for (int64_t g = block * world_rank(); g < block * (world_rank() + 1); ++g) src.push_back(g);
    if (!is_late() || world_size() == 1)
      for (int64_t g = world_rank(); g < n; g += receivers_n) dst.push_back(g);
    EXPECT_EQ(isthmus_xmap_create(fx.ctx, fx.decomp(n, src), fx.decomp(n, dst), nullptr, &x),
              ISTHMUS_OK) << fx.msg();
    MPI_Comm_split(MPI_COMM_WORLD, is_late(), world_rank(), &receivers);
  }
  ~LateSenderMap() {
    isthmus_xmap_destroy(&x);
    MPI_Comm_free(&receivers);
  }
  isthmus_redist* redist(int method) {
    isthmus_redist* r = nullptr;
    EXPECT_EQ(isthmus_redist_create(fx.ctx, x, 2, kTypes.data(), kLevels.data(), method, &r),
              ISTHMUS_OK) << fx.msg();
    return r;
  }
  // One forward exchange on every rank; true if every rank got every value.
  bool exchange_works(isthmus_redist* r) {
    FieldSet a(kTypes, kLevels, static_cast<int64_t>(src.size()));
    FieldSet b(kTypes, kLevels, static_cast<int64_t>(dst.size()));
    a.fill_reference(src);
    b.fill_constant(-1);
    auto in = a.in();
    auto out = b.out();
    int rc = isthmus_redist_exchange(r, in.data(), out.data());
    return all_ranks(rc == ISTHMUS_OK && b.count_wrong(dst) == 0);
  }
};

enum class Wait { Split, Blocking, SplitDescribed };
const char* wait_name(Wait w) {
  return w == Wait::Split ? "start/wait" : w == Wait::Blocking ? "exchange" : "start/wait, described";
}

}  // namespace

TEST(WaitTimeout, ErrorName) {
  EXPECT_STREQ(isthmus_error_name(ISTHMUS_ERR_TIMEOUT), "ISTHMUS_ERR_TIMEOUT");
  EXPECT_EQ(ISTHMUS_ERR_TIMEOUT, ISTHMUS_ERR_INTERNAL + 1);
}

// The late rank never starts its send: each receiver fails after the timeout, naming it.
TEST(WaitTimeout, SilentSenderIsNamed) {
  if (world_size() < 2) GTEST_SKIP() << "needs a sender and a receiver";
  const double timeout = 0.3;
  for (Wait how : {Wait::Split, Wait::Blocking, Wait::SplitDescribed}) {
    SCOPED_TRACE(wait_name(how));
    Watchdog w(std::string("silent sender, ") + wait_name(how));
    LateSenderMap m;
    isthmus_redist* r = m.redist(ISTHMUS_METHOD_P2P);
    ASSERT_EQ(isthmus_redist_set_wait_timeout(r, timeout), ISTHMUS_OK) << m.fx.msg();
    std::string late = "rank " + std::to_string(late_rank());
    if (how == Wait::SplitDescribed) {
      // As the coupler will: the rank in words, through the C++ core behind the handle.
      r->redist->set_wait_timeout(timeout, [](int rank) {
        return "rank " + std::to_string(rank) + " of component atmos (world rank " +
               std::to_string(rank + 10) + ")";
      });
      late += " of component atmos (world rank " + std::to_string(late_rank() + 10) + ")";
    }
    FieldSet a(kTypes, kLevels, static_cast<int64_t>(m.src.size()));
    FieldSet b(kTypes, kLevels, static_cast<int64_t>(m.dst.size()));
    a.fill_reference(m.src);
    b.fill_constant(-1);
    auto in = a.in();
    auto out = b.out();
    if (!is_late()) {
      // Every other message is on its way before anyone waits, so the late rank's is the only
      // one missing whatever the machine's load.
      int rc = ISTHMUS_OK;
      const char* fn = "isthmus_redist_exchange";
      const char* what = "forward exchange";
      double t0 = 0;
      if (how == Wait::Blocking) {
        MPI_Barrier(m.receivers);
        t0 = MPI_Wtime();
        rc = isthmus_redist_exchange(r, in.data(), out.data());
      } else {
        ASSERT_EQ(isthmus_redist_start(r, ISTHMUS_FORWARD, in.data(), out.data()), ISTHMUS_OK);
        MPI_Barrier(m.receivers);
        t0 = MPI_Wtime();
        rc = isthmus_redist_wait(r);
        fn = "isthmus_redist_wait";
        what = "wait of a forward exchange";
      }
      const double waited = MPI_Wtime() - t0;
      EXPECT_EQ(rc, ISTHMUS_ERR_TIMEOUT) << m.fx.msg();
      const std::string msg = m.fx.msg();
      const std::string reason =
          std::string(what) + ": timed out after X s (timeout 0.3 s) waiting for 1 of " +
          std::to_string(world_size() - 1) + " messages to this rank: " +
          std::to_string(kMessageBytes) + " bytes from " + late;
      EXPECT_EQ(without_elapsed(msg), prefix(fn) + reason + "; this redistribution is unusable now");
      EXPECT_GE(waited, timeout);
      EXPECT_LT(waited, timeout + 5);
      EXPECT_GE(elapsed_in(msg), 0.3);
      // Every value of the other senders arrived; the late rank's points stay unwritten.
      for (size_t p = 0; p < m.dst.size(); ++p) {
        const bool from_late = m.dst[p] / (kPointsPerPeer * (world_size() - 1)) == late_rank();
        EXPECT_EQ(b.get(0, static_cast<int64_t>(p), 1),
                  from_late ? -1.0 : ref_value(m.dst[p], 0, 1)) << "point " << p;
      }

      // Unusable from now on, saying why, and without sending anything.
      const std::string refused = "this redistribution is unusable: a previous wait timed out (" +
                                  reason + ")";
      EXPECT_EQ(isthmus_redist_exchange(r, in.data(), out.data()), ISTHMUS_ERR_ARG);
      EXPECT_EQ(without_elapsed(m.fx.msg()),
                prefix("isthmus_redist_exchange") + "forward exchange: " + refused);
      auto back_in = b.in();
      auto back_out = a.out();
      EXPECT_EQ(isthmus_redist_start(r, ISTHMUS_REVERSE, back_in.data(), back_out.data()),
                ISTHMUS_ERR_ARG);
      EXPECT_EQ(without_elapsed(m.fx.msg()),
                prefix("isthmus_redist_start") + "start of a reverse exchange: " + refused);
      EXPECT_EQ(isthmus_redist_wait(r), ISTHMUS_ERR_ARG);
      EXPECT_EQ(isthmus_redist_set_wait_timeout(r, 0), ISTHMUS_ERR_ARG);
      EXPECT_EQ(without_elapsed(m.fx.msg()), prefix("isthmus_redist_set_wait_timeout") + refused);
    }
    MPI_Barrier(MPI_COMM_WORLD);  // the receivers have given up
    if (is_late()) {
      // The late sender finally sends: its messages complete (they are small) and are never
      // taken, and its own call is unaffected.
      EXPECT_EQ(isthmus_redist_exchange(r, in.data(), out.data()), ISTHMUS_OK) << m.fx.msg();
    }
    EXPECT_EQ(isthmus_redist_destroy(&r), ISTHMUS_OK);
    // A new redistribution over the same map works, with and without a timeout.
    isthmus_redist* fresh = m.redist(ISTHMUS_METHOD_P2P);
    EXPECT_TRUE(m.exchange_works(fresh));
    ASSERT_EQ(isthmus_redist_set_wait_timeout(fresh, 30), ISTHMUS_OK);
    EXPECT_TRUE(m.exchange_works(fresh));
    isthmus_redist_destroy(&fresh);
  }
}

// The late rank is the only receiver and does not post its receives: every sender's wait times
// out on its own send, which is too large to leave without a matching receive, naming the rank
// that has not taken it. When the late rank finally receives, the abandoned sends still deliver
// the right data (the redistribution keeps their buffer alive after its destruction).
TEST(WaitTimeout, UntakenSendIsNamed) {
  if (world_size() < 2) GTEST_SKIP() << "needs a sender and a receiver";
  Watchdog w("untaken send");
  Fixture fx(MPI_COMM_WORLD);
  const int64_t block = 4096;  // 80 KB messages: beyond any eager limit
  const int64_t n = block * world_size();
  std::vector<int64_t> src, dst;
  for (int64_t g = block * world_rank(); g < block * (world_rank() + 1); ++g) src.push_back(g);
  if (is_late())
    for (int64_t g = 0; g < n; ++g) dst.push_back(g);
  isthmus_xmap* x = nullptr;
  ASSERT_EQ(isthmus_xmap_create(fx.ctx, fx.decomp(n, src), fx.decomp(n, dst), nullptr, &x),
            ISTHMUS_OK) << fx.msg();
  isthmus_redist* r = nullptr;
  ASSERT_EQ(isthmus_redist_create(fx.ctx, x, 2, kTypes.data(), kLevels.data(), ISTHMUS_METHOD_P2P,
                                  &r), ISTHMUS_OK) << fx.msg();
  FieldSet a(kTypes, kLevels, static_cast<int64_t>(src.size()));
  FieldSet b(kTypes, kLevels, static_cast<int64_t>(dst.size()));
  a.fill_reference(src);
  b.fill_constant(-1);
  auto in = a.in();
  auto out = b.out();
  if (!is_late()) {
    ASSERT_EQ(isthmus_redist_set_wait_timeout(r, 0.3), ISTHMUS_OK);
    EXPECT_EQ(isthmus_redist_exchange(r, in.data(), out.data()), ISTHMUS_ERR_TIMEOUT);
    EXPECT_EQ(without_elapsed(fx.msg()),
              prefix("isthmus_redist_exchange") + "forward exchange: timed out after X s "
              "(timeout 0.3 s) waiting for 1 of 1 messages from this rank to be received: " +
              std::to_string(8 + block * kPointBytes) + " bytes to rank " +
              std::to_string(late_rank()) + "; this redistribution is unusable now");
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (is_late()) {
    EXPECT_EQ(isthmus_redist_exchange(r, in.data(), out.data()), ISTHMUS_OK) << fx.msg();
    EXPECT_EQ(b.count_wrong(dst), 0);
  }
  isthmus_redist_destroy(&r);
  EXPECT_TRUE(all_ranks(!::testing::Test::HasFailure()));
  isthmus_xmap_destroy(&x);
}

// A timeout that is not reached gives the same bytes as no timeout, in every kind of exchange,
// including a sum map (whose packer stages and completes) and a reverse exchange.
TEST(WaitTimeout, NotReachedChangesNothing) {
  Watchdog w("timeout not reached");
  Fixture fx(MPI_COMM_WORLD);
  const int P = world_size(), me = world_rank();
  const int64_t n = 37 * P;
  std::vector<int64_t> src, dst;
  // Sources overlap (every third index has a second owner), so that a sum map adds.
  for (int64_t g = 0; g < n; ++g)
    if (g % P == me || (g % 3 == 0 && (g + 1) % P == me)) src.push_back(g);
  for (int64_t g = 0; g < n; ++g)
    if ((g * 7 + 3) % P == me || (g % 5 == 0 && (g + 1) % P == me)) dst.push_back(g);
  const std::vector<int> types = {ISTHMUS_DOUBLE, ISTHMUS_FLOAT, ISTHMUS_INT32};
  const std::vector<int> levels = {3, 1, 2};
  for (int combine : {ISTHMUS_COMBINE_LOWEST, ISTHMUS_COMBINE_SUM}) {
    SCOPED_TRACE(combine);
    isthmus_xmap_options opt;
    isthmus_xmap_options_init(&opt);
    opt.combine = combine;
    isthmus_xmap* x = nullptr;
    ASSERT_EQ(isthmus_xmap_create(fx.ctx, fx.decomp(n, src), fx.decomp(n, dst), &opt, &x),
              ISTHMUS_OK) << fx.msg();
    // Outputs of (blocking forward, split forward, blocking reverse, split reverse).
    auto outputs = [&](double timeout) {
      isthmus_redist* r = nullptr;
      EXPECT_EQ(isthmus_redist_create(fx.ctx, x, 3, types.data(), levels.data(),
                                      ISTHMUS_METHOD_P2P, &r), ISTHMUS_OK) << fx.msg();
      EXPECT_EQ(isthmus_redist_set_wait_timeout(r, timeout), ISTHMUS_OK);
      std::vector<std::vector<char>> all;
      for (int kind = 0; kind < 4; ++kind) {
        const bool reverse = kind >= 2, split = kind % 2 == 1;
        FieldSet a(types, levels, static_cast<int64_t>((reverse ? dst : src).size()));
        FieldSet b(types, levels, static_cast<int64_t>((reverse ? src : dst).size()));
        a.fill_reference(reverse ? dst : src);
        b.fill_constant(-1);
        auto in = a.in();
        auto out = b.out();
        int rc = split ? isthmus_redist_start(r, reverse, in.data(), out.data())
                       : reverse ? isthmus_redist_exchange_reverse(r, in.data(), out.data())
                                 : isthmus_redist_exchange(r, in.data(), out.data());
        EXPECT_EQ(rc, ISTHMUS_OK) << fx.msg();
        if (split) {
          EXPECT_EQ(isthmus_redist_wait(r), ISTHMUS_OK) << fx.msg();
        }
        for (auto& d : b.data) all.push_back(d);
      }
      isthmus_redist_destroy(&r);
      return all;
    };
    const auto plain = outputs(0);
    EXPECT_EQ(outputs(30), plain);
    EXPECT_EQ(outputs(INFINITY), plain);
    isthmus_xmap_destroy(&x);
  }
}

// A wait that lasts (the late rank sends after 0.5 s, within the timeout) sleeps between polls:
// its CPU time is well below its wall time, even where ranks outnumber cores (a spinning rank
// would still get a share of a core), and the data arrives.
TEST(WaitTimeout, LongWaitDoesNotSpin) {
  if (world_size() < 2) GTEST_SKIP() << "needs a sender and a receiver";
  Watchdog w("long wait within the timeout");
  LateSenderMap m;
  isthmus_redist* r = m.redist(ISTHMUS_METHOD_P2P);
  ASSERT_EQ(isthmus_redist_set_wait_timeout(r, 20), ISTHMUS_OK);
  FieldSet a(kTypes, kLevels, static_cast<int64_t>(m.src.size()));
  FieldSet b(kTypes, kLevels, static_cast<int64_t>(m.dst.size()));
  a.fill_reference(m.src);
  b.fill_constant(-1);
  auto in = a.in();
  auto out = b.out();
  MPI_Barrier(MPI_COMM_WORLD);
  if (is_late()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    EXPECT_EQ(isthmus_redist_exchange(r, in.data(), out.data()), ISTHMUS_OK) << m.fx.msg();
  } else {
    ASSERT_EQ(isthmus_redist_start(r, ISTHMUS_FORWARD, in.data(), out.data()), ISTHMUS_OK);
    const double wall0 = MPI_Wtime(), cpu0 = cpu_seconds();
    EXPECT_EQ(isthmus_redist_wait(r), ISTHMUS_OK) << m.fx.msg();
    const double wall = MPI_Wtime() - wall0, cpu = cpu_seconds() - cpu0;
    EXPECT_GE(wall, 0.3);
    // Measured: 1-2 % sleeping, and up to 4.3 % at 8 ranks while another 8-rank test ran
    // beside it (ctest -j2, 2026-11-27), 4.05 % at 2 ranks under ASan (each nap's wake-up and
    // poll instrumented); spinning: 10 % at 8 ranks on 2 loaded cores, all of it at 2. So the
    // bound sits between: at 2 ranks far below a spinning rank's whole core.
    const double bound = world_size() > 2 ? 0.07 : 0.15;
    EXPECT_LT(cpu, bound * wall) << "cpu " << cpu << " s in a wait of " << wall << " s";
    EXPECT_EQ(b.count_wrong(m.dst), 0);
  }
  EXPECT_TRUE(all_ranks(!::testing::Test::HasFailure()));
  isthmus_redist_destroy(&r);
}

// Only p2p can bound its waits; the others refuse a positive timeout and accept 0. Bad values
// are refused with the value.
TEST(WaitTimeout, Arguments) {
  Watchdog w("set_wait_timeout arguments");
  LateSenderMap m;
  for (int method : all_methods()) {
    SCOPED_TRACE(method_label(method));
    isthmus_redist* r = m.redist(method);
    EXPECT_EQ(isthmus_redist_set_wait_timeout(r, 0), ISTHMUS_OK);
    if (method == ISTHMUS_METHOD_P2P) {
      EXPECT_EQ(isthmus_redist_set_wait_timeout(r, 0.5), ISTHMUS_OK);
      EXPECT_EQ(isthmus_redist_set_wait_timeout(r, INFINITY), ISTHMUS_OK);
    } else {
      const std::string name = method == ISTHMUS_METHOD_AUTO ? "adaptive" : method_label(method);
      EXPECT_EQ(isthmus_redist_set_wait_timeout(r, 0.5), ISTHMUS_ERR_ARG);
      EXPECT_EQ(m.fx.msg(), prefix("isthmus_redist_set_wait_timeout") + "method '" + name +
                                "' cannot bound its waits (it waits inside collective calls or "
                                "MPI_Waitall); a wait timeout needs method p2p (1)");
    }
    EXPECT_EQ(isthmus_redist_set_wait_timeout(r, -1), ISTHMUS_ERR_ARG);
    EXPECT_EQ(m.fx.msg(), prefix("isthmus_redist_set_wait_timeout") +
                              "the wait timeout is -1 seconds; it must be positive, or 0 to wait "
                              "for ever");
    EXPECT_EQ(isthmus_redist_set_wait_timeout(r, NAN), ISTHMUS_ERR_ARG);
    EXPECT_TRUE(m.exchange_works(r));  // refused settings changed nothing
    isthmus_redist_destroy(&r);
  }
  EXPECT_EQ(isthmus_redist_set_wait_timeout(nullptr, 1), ISTHMUS_ERR_ARG);
}
