// The butterfly executor under every plan, and the adaptive executor, on synthetic layouts: each
// message of the direct layout carries bytes that encode (sender, receiver, byte), so a block that
// is lost, duplicated, truncated or delivered to the wrong receive index is caught.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <functional>
#include <map>
#include <numeric>
#include <string>
#include <unistd.h>

#include "mpi_test_util.h"
#include "transfer/adaptive.h"
#include "transfer/butterfly.h"

using namespace isthmus;

namespace {

uint64_t hash3(uint64_t a, uint64_t b, uint64_t c) {
  uint64_t h = a * 0x9e3779b97f4a7c15ull ^ (b + 0x7f4a7c15ull) * 0xbf58476d1ce4e5b9ull ^ c * 0x94d049bb133111ebull;
  h ^= h >> 31;
  h *= 0xd6e8feb86659fd93ull;
  return h ^ (h >> 29);
}

unsigned char byte_of(int s, int r, size_t k, int salt) {
  return static_cast<unsigned char>(hash3(static_cast<uint64_t>(s), static_cast<uint64_t>(r),
                                          k * 7 + static_cast<uint64_t>(salt)) & 0xffu);
}

// Ranks in `senders` send to ranks in `receivers` (not themselves): a pseudo-random subset of
// pairs (at least one per sender) with 1..40 bytes, so message sizes are odd and unequal.
MessageLayout make_layout(int me, const std::vector<int>& senders, const std::vector<int>& receivers,
                          int seed) {
  auto bytes = [&](int s, int r) -> size_t {
    if (s == r) return 0;
    uint64_t h = hash3(static_cast<uint64_t>(s), static_cast<uint64_t>(r), static_cast<uint64_t>(seed));
    int first = -1;  // every sender talks to its first valid receiver
    for (int x : receivers)
      if (x != s) {
        first = x;
        break;
      }
    if (r != first && h % 3 == 0) return 0;
    return 1 + (h >> 8) % 40;
  };
  MessageLayout L;
  size_t off = 0;
  for (int s : senders)
    if (s == me)
      for (int r : receivers)
        if (size_t b = bytes(me, r)) {
          L.send_peers.push_back(r);
          L.send_bytes.push_back(b);
          L.send_offset.push_back(off);
          off += b;
        }
  off = 0;
  for (int r : receivers)
    if (r == me)
      for (int s : senders)
        if (size_t b = bytes(s, me)) {
          L.recv_peers.push_back(s);
          L.recv_bytes.push_back(b);
          L.recv_offset.push_back(off);
          off += b;
        }
  return L;
}

class CheckingPacker final : public Packer {
 public:
  CheckingPacker(int me, const MessageLayout& L, int salt) : me_(me), L_(L), salt_(salt) {
    got_.assign(L.recv_peers.size(), 0);
  }
  void pack(size_t i, char* msg) override {
    for (size_t k = 0; k < L_.send_bytes[i]; ++k)
      msg[k] = static_cast<char>(byte_of(me_, L_.send_peers[i], k, salt_));
  }
  void unpack(size_t i, const char* msg) override {
    ASSERT_LT(i, got_.size());
    ++got_[i];
    for (size_t k = 0; k < L_.recv_bytes[i]; ++k)
      if (static_cast<unsigned char>(msg[k]) != byte_of(L_.recv_peers[i], me_, k, salt_)) {
        ++bad_bytes_;
      }
  }
  void local() override { ++local_calls_; }
  bool ok() const {
    for (int g : got_)
      if (g != 1) return false;
    return bad_bytes_ == 0 && local_calls_ == 1;
  }

 private:
  int me_;
  const MessageLayout& L_;
  int salt_;
  std::vector<int> got_;
  int64_t bad_bytes_ = 0;
  int local_calls_ = 0;
};

struct Buffers {
  std::vector<char> s, r;
  explicit Buffers(const MessageLayout& L) : s(L.send_total() + 1), r(L.recv_total() + 1) {}
};

std::vector<int> range(int first, int count) {
  std::vector<int> v;
  for (int i = 0; i < count; ++i) v.push_back(first + i);
  return v;
}

// Runs every plan of the mapping's butterfly twice (persistent reuse) and checks delivery and
// the message bound of each plan. Returns false (on every rank) if anything is wrong.
bool check_all_plans(MPI_Comm comm, const std::vector<int>& senders,
                     const std::vector<int>& receivers, int seed, std::string* what,
                     int reps = 2) {
  const int me = world_rank();
  MessageLayout L = make_layout(me, senders, receivers, seed);
  Buffers buf(L);
  auto topo = ButterflyTopology::build(comm, L);
  const int n = topo->mapping.stages;
  bool ok = true;
  for (const Plan& plan : all_plans(n)) {
    // Odd seeds set up every round through the sparse exchange, even ones through the
    // mapping's known partners.
    ButterflyExecutor ex(topo, 3, L, buf.s.data(), buf.r.data(), plan, seed % 2 ? 0 : 5);
    for (int rep = 0; rep < reps; ++rep) {
      CheckingPacker packer(me, L, seed * 10 + rep);
      trace::Trace t(true);
      ex.run(packer, t);
      bool mine = packer.ok() && t.counters().messages_sent == ex.messages_sent();
      // p2p is exactly the direct layout; otherwise a round of k stages talks to at most 2^k
      // nodes (one more group of the mapping in the first round, two receivers per node last).
      if (plan.size() <= 1) {
        mine = mine && ex.messages_sent() == static_cast<int64_t>(L.send_peers.size());
      } else {
        int64_t bound = 0;
        for (size_t j = 0; j < plan.size(); ++j)
          bound += (j + 1 == plan.size() ? 2 : 1) * (int64_t{1} << plan[j]);
        mine = mine && ex.messages_sent() <= bound;
      }
      if (!all_ranks(mine, comm)) {
        ok = false;
        *what = "plan [" + plan_string(plan) + "] rep " + std::to_string(rep);
      }
    }
  }
  return ok;
}

enum class Pattern { Disjoint, Shifted, Identical };

// Every sender and receiver count 1..max in every pattern that fits into the communicator.
void sweep(int max_count, int stride) {
  const int W = world_size();
  int cases = 0;
  for (int S = 1; S <= max_count; S += stride)
    for (int R = 1; R <= max_count; R += stride)
      for (Pattern pat : {Pattern::Disjoint, Pattern::Shifted, Pattern::Identical}) {
        std::vector<int> snd = range(0, S), rcv;
        if (pat == Pattern::Disjoint) rcv = range(S, R);
        if (pat == Pattern::Shifted) rcv = range(S / 2, R);
        if (pat == Pattern::Identical) {
          if (S != R) continue;
          rcv = snd;
        }
        if (S > W || rcv.back() >= W) continue;
        // Cases that fit into 8 ranks are the 8-rank run's; larger runs add the rest, once each.
        if (W > 8 && std::max(S, rcv.back() + 1) <= 8) continue;
        std::string what;
        const std::string label = std::to_string(S) + " senders, " + std::to_string(R) +
                                  " receivers, pattern " + std::to_string(static_cast<int>(pat));
        EXPECT_TRUE(check_all_plans(MPI_COMM_WORLD, snd, rcv, S * 100 + R, &what, 1)) << label << ": " << what;
        ++cases;
      }
  if (world_rank() == 0) std::printf("[ butterfly ] %d sender/receiver cases on %d ranks\n", cases, W);
}

}  // namespace

// All counts 1..9 in every pattern: the cases that fit into W <= 8 ranks at W ranks, the others
// (disjoint needs up to 18 ranks) at 18 ranks, so that the runs together cover every case.
TEST(Butterfly, EveryPlanEveryCount) { sweep(9, 1); }

TEST(Butterfly, AllRanksSendAndReceive) {
  const int W = world_size();
  std::string what;
  EXPECT_TRUE(check_all_plans(MPI_COMM_WORLD, range(0, W), range(0, W), 77, &what)) << what;
}

TEST(Butterfly, MappingIsCollectiveAndConsistent) {
  MessageLayout L = make_layout(world_rank(), range(0, world_size()), range(0, world_size()), 5);
  auto topo = ButterflyTopology::build(MPI_COMM_WORLD, L);
  uint64_t fp = topo->fingerprint, lo = 0, hi = 0;
  MPI_Allreduce(&fp, &lo, 1, MPI_UINT64_T, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(&fp, &hi, 1, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD);
  EXPECT_EQ(lo, hi);
  // A different pattern has a different fingerprint.
  MessageLayout L2 = make_layout(world_rank(), range(0, world_size()), range(0, world_size()), 6);
  if (world_size() > 1) {
    EXPECT_NE(ButterflyTopology::build(MPI_COMM_WORLD, L2)->fingerprint, fp);
  }
}

namespace {

std::string shared_temp_path(const char* stem) {
  char path[256] = {0};
  if (world_rank() == 0)
    std::snprintf(path, sizeof path, "/tmp/isthmus-%s-%d.cache", stem, static_cast<int>(getpid()));
  MPI_Bcast(path, sizeof path, MPI_CHAR, 0, MPI_COMM_WORLD);
  return path;
}

// MPI's collectives the adaptive executor weighs against its plans for the executor's
// schedule (weighs() leaves out those this build cannot run).
size_t collective_count(const AdaptiveExecutor& ex) {
  size_t n = 0;
  for (Method m : {Method::Alltoallv, Method::Neighbor}) n += ex.weighs(m) ? 1 : 0;
  return n;
}

// Runs exchanges until the executor has decided (and a few more), checking every one.
int run_until_decided(AdaptiveExecutor& ex, const MessageLayout& L, int seed) {
  int runs = 0;
  for (; runs < 200 && (!ex.decided() || runs < 3); ++runs) {
    CheckingPacker packer(world_rank(), L, seed + runs);
    trace::Trace t(false);
    ex.run(packer, t);
    EXPECT_TRUE(all_ranks(packer.ok())) << "exchange " << runs << " with plan " << plan_string(ex.plan());
  }
  return runs;
}

bool same_on_all_ranks(const std::string& s) {
  int h = static_cast<int>(std::hash<std::string>{}(s) & 0x7fffffff), lo = 0, hi = 0;
  MPI_Allreduce(&h, &lo, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(&h, &hi, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  return lo == hi;
}

// The adaptive executor's rule, reconstructed: the second candidate of a pair wins when it was
// faster in significantly more of the pair's rounds than the first (one-sided sign test at 5 %),
// or, where each candidate's samples are all equal (deterministic), when its median is lower.
bool second_wins(const PlanMeasurement& a, const PlanMeasurement& b) {
  auto spread = [](const std::vector<double>& v) {
    return *std::max_element(v.begin(), v.end()) != *std::min_element(v.begin(), v.end());
  };
  if (!spread(a.samples) && !spread(b.samples)) return b.median_seconds < a.median_seconds;
  int second = 0, first = 0;
  for (size_t i = 0; i < a.samples.size(); ++i) {
    second += b.samples[i] < a.samples[i];
    first += a.samples[i] < b.samples[i];
  }
  const int n = second + first;
  double tail = 0;  // P(X >= second), X ~ Binomial(n, 1/2)
  for (int j = second; j <= n; ++j) {
    double c = 1;
    for (int i = 0; i < j; ++i) c = c * (n - i) / (i + 1);
    tail += c * std::pow(0.5, n);
  }
  return n > 0 && second > first && tail <= 0.05 && b.median_seconds < a.median_seconds;
}

}  // namespace

TEST(Adaptive, ProfilesDeliversAgreesAndCaches) {
  const int W = world_size(), me = world_rank();
  MessageLayout L = make_layout(me, range(0, W), range(0, W), 11);
  Buffers buf(L);
  const std::string cache = shared_temp_path("plan");
  AdaptiveOptions opt;
  opt.cache_path = cache;
  opt.samples = 2;
  opt.max_samples = 2;  // the counts below are exact (more samples only while within the noise)
  opt.warmup = 1;
  AdaptiveExecutor first(MPI_COMM_WORLD, 4, L, buf.s.data(), buf.r.data(), opt);
  run_until_decided(first, L, 1);
  ASSERT_TRUE(first.decided());
  EXPECT_FALSE(first.from_cache());
  EXPECT_TRUE(same_on_all_ranks(plan_string(first.plan())));
  const int n = first.stages();
  if (collective_of(first.plan()) == Method::Auto) {
    EXPECT_NO_THROW(validate_plan(first.plan(), n));
  }
  const auto& ms = first.measurements();
  const size_t ncoll = collective_count(first);
  if (n >= 1) {
    // Pairs timed in alternation, each plan 1 + 2 exchanges: p2p against the butterfly first,
    // then the walk (candidate, merged), then the better of the first pair against the walk's
    // end; last, the best so far against each MPI collective.
    EXPECT_EQ(ms.size() % 2, 0u);
    EXPECT_LE(ms.size(), static_cast<size_t>(2 * n + 2) + 2 * ncoll);
    EXPECT_EQ(first.profiling_exchanges(), 3 * static_cast<int>(ms.size()));
    for (const auto& m : ms) EXPECT_EQ(m.samples.size(), 2u);
    ASSERT_GE(ms.size(), 2 * ncoll);
    const size_t plans_end = ms.size() - 2 * ncoll;  // where the collectives' pairs begin
    for (size_t c = 0; c < ncoll; ++c)
      EXPECT_NE(collective_of(ms[plans_end + 2 * c + 1].plan), Method::Auto);
    if (n >= 2) {
      EXPECT_GE(plans_end, 2u);
      EXPECT_EQ(ms[0].plan, p2p_plan(n));
      EXPECT_EQ(ms[1].plan, full_butterfly_plan(n));
      // The plan taken into the collectives' pairs is the better of p2p and the butterfly, or a
      // plan measured faster than that one side by side in the last pair (ties, and pairs
      // whose rounds do not tell them apart: the first, pure form).
      const Plan first_winner = second_wins(ms[0], ms[1]) ? ms[1].plan : ms[0].plan;
      const Plan best = ms[plans_end].plan;
      if (best != first_winner) {
        const auto& a = ms[plans_end - 2];
        const auto& b = ms[plans_end - 1];
        EXPECT_EQ(a.plan, first_winner);
        EXPECT_EQ(b.plan, best);
        EXPECT_LT(b.median_seconds, a.median_seconds);
      }
    }
  } else {
    EXPECT_EQ(first.profiling_exchanges(), 0);
  }

  // Second run of the same configuration: no profiling, same plan, read from the cache.
  AdaptiveExecutor second(MPI_COMM_WORLD, 4, L, buf.s.data(), buf.r.data(), opt);
  run_until_decided(second, L, 50);
  EXPECT_EQ(second.plan(), first.plan());
  EXPECT_EQ(second.profiling_exchanges(), 0);
  EXPECT_EQ(second.from_cache(), n >= 1);
  EXPECT_EQ(second.cache_key(), first.cache_key());

  // A different schedule misses the cache and profiles.
  MessageLayout L3 = make_layout(me, range(0, W), range(0, W), 12);
  Buffers buf3(L3);
  AdaptiveExecutor third(MPI_COMM_WORLD, 4, L3, buf3.s.data(), buf3.r.data(), opt);
  run_until_decided(third, L3, 90);
  EXPECT_FALSE(third.from_cache());
  if (n >= 1) {
    EXPECT_GT(third.profiling_exchanges(), 0);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (me == 0) {
    std::ifstream in(cache);
    std::string line;
    int lines = 0;
    while (std::getline(in, line)) {
      ++lines;
      EXPECT_EQ(line.rfind("isthmus-plan ", 0), 0u) << line;
    }
    EXPECT_EQ(lines, n >= 1 ? 2 : 0);
    std::remove(cache.c_str());
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

// Decisions under scripted times (the exchanges still run and deliver): the walk, the final
// pair and the profiling count, independent of the machine's noise. MPI's collectives cost
// `collective_cost` (slower than every plan unless a test says otherwise).
AdaptiveOptions scripted(std::function<double(const Plan&)> cost, int samples = 1,
                         std::function<double(Method)> collective_cost = [](Method) { return 1e9; }) {
  AdaptiveOptions opt;
  opt.samples = samples;
  opt.warmup = 0;
  opt.synthetic_time = [cost, collective_cost](const Plan& p, double) {
    const Method m = collective_of(p);
    return m != Method::Auto ? collective_cost(m) : cost(p);
  };
  return opt;
}

TEST(Adaptive, KeepsTheWalksEndWhenItBeatsBothPureForms) {
  const int me = world_rank();
  MessageLayout L = make_layout(me, range(0, world_size()), range(0, world_size()), 31);
  Buffers buf(L);
  // p2p 3, butterfly 2; merging boundary 1 (into the first run) costs 3, each other merged
  // boundary saves 0.1: the walk rejects boundary 1, then merges 2..n-1 one by one.
  auto cost = [](const Plan& p) {
    if (p.size() == 1 || p[0] != 1) return 3.0;
    const int merged = std::accumulate(p.begin(), p.end(), 0) - static_cast<int>(p.size());
    return 2.0 - 0.1 * merged;
  };
  AdaptiveExecutor ex(MPI_COMM_WORLD, 4, L, buf.s.data(), buf.r.data(), scripted(cost));
  run_until_decided(ex, L, 5);
  ASSERT_TRUE(ex.decided());
  const int n = ex.stages();
  const int ncoll = static_cast<int>(collective_count(ex));
  if (n < 2) {
    EXPECT_EQ(ex.profiling_exchanges(), n == 1 ? 2 * ncoll : 0);  // p2p against the collectives
    return;
  }
  const Plan expect = n == 2 ? full_butterfly_plan(2) : Plan{1, n - 1};
  EXPECT_EQ(ex.plan(), expect) << plan_string(ex.plan());
  // Pairs: (p2p, butterfly); the walk: one pair per boundary 1..n-1; the final pair
  // (butterfly, [1,n-1]) when the walk moved; then one per collective.
  const int pairs = n == 2 ? 1 : n + 1;
  EXPECT_EQ(ex.profiling_exchanges(), 2 * (pairs + ncoll));
  const auto& ms = ex.measurements();
  if (n > 2) {
    EXPECT_EQ(ms[ms.size() - 2 - 2 * ncoll].plan, full_butterfly_plan(n));
    EXPECT_EQ(ms[ms.size() - 1 - 2 * ncoll].plan, expect);
  }
  for (int c = 0; c < ncoll; ++c) EXPECT_EQ(ms[ms.size() - 2 * ncoll + 2 * c].plan, expect);
}

TEST(Adaptive, RejectsAWalkEndThatLosesTheFinalPair) {
  const int me = world_rank();
  MessageLayout L = make_layout(me, range(0, world_size()), range(0, world_size()), 32);
  Buffers buf(L);
  // The butterfly 5, p2p 10; every merged plan looks fast (4) when the walk times it and slow
  // (6) when timed again against the butterfly: a noisy spell, or a plan that only wins on its
  // first exchanges. The butterfly must be kept, as it was at 1024 ranks per model in Fig. 15.
  std::map<Plan, int> seen;
  auto cost = [&seen](const Plan& p) {
    const int n = std::accumulate(p.begin(), p.end(), 0);
    if (p == p2p_plan(n)) return 10.0;
    if (p == full_butterfly_plan(n)) return 5.0;
    return seen[p]++ == 0 ? 4.0 : 6.0;
  };
  AdaptiveExecutor ex(MPI_COMM_WORLD, 4, L, buf.s.data(), buf.r.data(), scripted(cost));
  run_until_decided(ex, L, 6);
  ASSERT_TRUE(ex.decided());
  const int n = ex.stages();
  if (n >= 2) {
    EXPECT_EQ(ex.plan(), full_butterfly_plan(n)) << plan_string(ex.plan());
  }
  if (n >= 3) {  // a final pair was run, before the collectives' pairs
    const auto& ms = ex.measurements();
    EXPECT_NE(ms[ms.size() - 1 - 2 * collective_count(ex)].plan, full_butterfly_plan(n));
  }
}

TEST(Adaptive, PureP2pWinsWhenNothingBeatsIt) {
  const int me = world_rank();
  MessageLayout L = make_layout(me, range(0, world_size()), range(0, world_size()), 33);
  Buffers buf(L);
  auto cost = [](const Plan& p) { return p.size() == 1 ? 1.0 : 2.0 + static_cast<double>(p.size()); };
  AdaptiveExecutor ex(MPI_COMM_WORLD, 4, L, buf.s.data(), buf.r.data(), scripted(cost, 3));
  run_until_decided(ex, L, 7);
  ASSERT_TRUE(ex.decided());
  const int n = ex.stages();
  EXPECT_EQ(ex.plan(), p2p_plan(n));
  if (n >= 2) {
    for (const auto& m : ex.measurements()) EXPECT_EQ(m.samples.size(), 3u);
  }
}

// A pair whose rounds do not tell its candidates apart is timed again, up to max_samples each:
// here both candidates of every pair cost 1, 1.5, 2, 1, ... round by round (a noisy tie: no
// round won), so every pair takes max_samples, and the tie keeps p2p.
TEST(Adaptive, SamplesMoreWhileTheCandidatesAreWithinTheirNoise) {
  const int me = world_rank();
  MessageLayout L = make_layout(me, range(0, world_size()), range(0, world_size()), 35);
  Buffers buf(L);
  int calls = 0;  // a pair's two candidates alternate: calls / 2 counts its rounds
  AdaptiveOptions opt = scripted([](const Plan&) { return 1.0; }, 3);
  opt.max_samples = 7;
  opt.synthetic_time = [&calls](const Plan&, double) { return 1.0 + 0.5 * ((calls++ / 2) % 3); };
  AdaptiveExecutor ex(MPI_COMM_WORLD, 4, L, buf.s.data(), buf.r.data(), opt);
  run_until_decided(ex, L, 9);
  ASSERT_TRUE(ex.decided());
  if (ex.stages() == 0) return;
  EXPECT_EQ(ex.plan(), p2p_plan(ex.stages())) << plan_string(ex.plan());
  for (const auto& m : ex.measurements()) EXPECT_EQ(m.samples.size(), 7u) << plan_string(m.plan);
  EXPECT_EQ(ex.profiling_exchanges(), 7 * static_cast<int>(ex.measurements().size()));
}

// Noisy rounds (a round's cost 1, 1.5, 2, 1, ... for both candidates) with the butterfly at half
// p2p's cost in every round: it wins every round, which is significant after 5 (a fair coin
// wins 5 of 5 with probability 1/32), so the first pair takes 5 samples, not 3 and not 15, and
// the butterfly is taken; the walk's pairs cost the same (ties: the butterfly is kept).
TEST(Adaptive, TakesACandidateThatWinsEnoughRounds) {
  const int me = world_rank();
  MessageLayout L = make_layout(me, range(0, world_size()), range(0, world_size()), 36);
  Buffers buf(L);
  int calls = 0;
  AdaptiveOptions opt = scripted([](const Plan&) { return 1.0; }, 3);
  const int n = AdaptiveExecutor(MPI_COMM_WORLD, 4, L, buf.s.data(), buf.r.data(), opt).stages();
  opt.synthetic_time = [&calls, n](const Plan& p, double) {
    const double noise = 1.0 + 0.5 * ((calls++ / 2) % 3);
    if (collective_of(p) != Method::Auto) return 1e9;
    return (p == p2p_plan(n) ? 1.0 : 0.5) * noise;
  };
  AdaptiveExecutor ex(MPI_COMM_WORLD, 4, L, buf.s.data(), buf.r.data(), opt);
  run_until_decided(ex, L, 10);
  ASSERT_TRUE(ex.decided());
  if (n < 2) return;  // one stage: p2p is the butterfly
  const auto& ms = ex.measurements();
  ASSERT_GE(ms.size(), 2u);
  EXPECT_EQ(ms[0].plan, p2p_plan(n));
  EXPECT_EQ(ms[0].samples.size(), 5u);
  EXPECT_EQ(ms[1].samples.size(), 5u);
  EXPECT_EQ(ex.plan(), full_butterfly_plan(n)) << plan_string(ex.plan());
}

// A candidate with the lower median that wins only 6 of 10 rounds (twice as fast in those,
// twice as slow in the others) is not told apart from the first: a tie, which keeps p2p. (Its
// median alone would have taken it.)
TEST(Adaptive, AMedianWithoutEnoughRoundsWonIsATie) {
  const int me = world_rank();
  MessageLayout L = make_layout(me, range(0, world_size()), range(0, world_size()), 37);
  Buffers buf(L);
  int calls = 0;
  AdaptiveOptions opt = scripted([](const Plan&) { return 1.0; }, 3);
  opt.max_samples = 10;
  const int n = AdaptiveExecutor(MPI_COMM_WORLD, 4, L, buf.s.data(), buf.r.data(), opt).stages();
  const bool wins[10] = {true, true, false, true, false, true, false, true, false, true};
  opt.synthetic_time = [&calls, &wins, n](const Plan& p, double) {
    const int round = (calls++ / 2) % 10;
    if (collective_of(p) != Method::Auto) return 1e9;
    if (p == p2p_plan(n)) return 1.0;
    return wins[round] ? 0.5 : 2.0;
  };
  AdaptiveExecutor ex(MPI_COMM_WORLD, 4, L, buf.s.data(), buf.r.data(), opt);
  run_until_decided(ex, L, 11);
  ASSERT_TRUE(ex.decided());
  if (n < 2) return;
  const auto& ms = ex.measurements();
  ASSERT_GE(ms.size(), 2u);
  EXPECT_LT(ms[1].median_seconds, ms[0].median_seconds);
  EXPECT_EQ(ms[0].samples.size(), 10u);
  EXPECT_EQ(ex.plan(), p2p_plan(n)) << plan_string(ex.plan());
}

// MPI's collectives are candidates too: one measured faster than every plan is kept (the
// exchanges it runs deliver), and the plan cache keeps it for the next run; one no faster
// than the best plan is not.
TEST(Adaptive, KeepsACollectiveThatBeatsEveryPlan) {
  const int W = world_size(), me = world_rank();
  MessageLayout L = make_layout(me, range(0, W), range(0, W), 34);
  Buffers buf(L);
  const std::string cache = shared_temp_path("collective");
  for (Method fastest : {Method::Alltoallv, Method::Neighbor}) {
    auto plans = [](const Plan& p) { return 2.0 + static_cast<double>(p.size()); };
    auto colls = [fastest](Method m) { return m == fastest ? 1.0 : 50.0; };
    AdaptiveOptions opt = scripted(plans, 1, colls);
    opt.cache_path = cache;
    AdaptiveExecutor ex(MPI_COMM_WORLD, 4, L, buf.s.data(), buf.r.data(), opt);
    run_until_decided(ex, L, 8);
    ASSERT_TRUE(ex.decided());
    if (ex.stages() == 0) return;  // nothing is sent: nothing to choose
    if (!ex.weighs(fastest)) {  // not in this MPI, or alltoallv for a sparse schedule
      EXPECT_EQ(collective_of(ex.plan()), Method::Auto);
      continue;
    }
    EXPECT_EQ(collective_of(ex.plan()), fastest) << plan_string(ex.plan());
    EXPECT_EQ(ex.chosen(), nullptr);  // no butterfly executor runs it
    AdaptiveExecutor again(MPI_COMM_WORLD, 4, L, buf.s.data(), buf.r.data(), opt);
    run_until_decided(again, L, 30);
    EXPECT_TRUE(again.from_cache());
    EXPECT_EQ(again.profiling_exchanges(), 0);
    EXPECT_EQ(again.plan(), ex.plan());
    MPI_Barrier(MPI_COMM_WORLD);
    if (me == 0) std::remove(cache.c_str());
    MPI_Barrier(MPI_COMM_WORLD);
  }
  // A tie keeps the plan: a collective must be measured faster to be kept.
  auto same = [](const Plan&) { return 1.0; };
  AdaptiveExecutor tie(MPI_COMM_WORLD, 4, L, buf.s.data(), buf.r.data(),
                       scripted(same, 1, [](Method) { return 1.0; }));
  run_until_decided(tie, L, 12);
  EXPECT_EQ(collective_of(tie.plan()), Method::Auto) << plan_string(tie.plan());
}

// MPI_Alltoallv is weighed only for dense schedules: on a ring (one peer each way) only up to
// 5 ranks (4 x 1 >= P - 1), on the dense test layout always; the neighbourhood collective always.
TEST(Adaptive, WeighsAlltoallvOnlyForDenseSchedules) {
  const int W = world_size(), me = world_rank();
  MessageLayout ring;
  if (W > 1) {
    ring.send_peers = {(me + 1) % W};
    ring.send_bytes = {8};
    ring.send_offset = {0};
    ring.recv_peers = {(me + W - 1) % W};
    ring.recv_bytes = {8};
    ring.recv_offset = {0};
  }
  Buffers rb(ring);
  AdaptiveExecutor r(MPI_COMM_WORLD, 4, ring, rb.s.data(), rb.r.data(), AdaptiveOptions{});
  EXPECT_EQ(r.topology().max_peers, W > 1 ? 1 : 0);
  EXPECT_EQ(r.weighs(Method::Alltoallv), W <= 5);
  EXPECT_TRUE(r.weighs(Method::Neighbor));
  MessageLayout dense = make_layout(me, range(0, W), range(0, W), 35);
  Buffers db(dense);
  AdaptiveExecutor d(MPI_COMM_WORLD, 4, dense, db.s.data(), db.r.data(), AdaptiveOptions{});
  EXPECT_TRUE(d.weighs(Method::Alltoallv));
}

TEST(Adaptive, DamagedCacheLineIsIgnored) {
  const int W = world_size(), me = world_rank();
  MessageLayout L = make_layout(me, range(0, W), range(0, W), 21);
  Buffers buf(L);
  const std::string cache = shared_temp_path("damaged");
  AdaptiveOptions opt;
  opt.cache_path = cache;
  opt.samples = 1;
  opt.warmup = 0;
  {
    AdaptiveExecutor probe(MPI_COMM_WORLD, 4, L, buf.s.data(), buf.r.data(), opt);
    if (me == 0) {
      std::ofstream out(cache);
      out << "isthmus-plan " << probe.cache_key() << " 1,x 0.1\n";
      out << "isthmus-plan " << probe.cache_key() << " 99 0.1\n";  // wrong stage count
      out << "garbage\n";
    }
    MPI_Barrier(MPI_COMM_WORLD);
    run_until_decided(probe, L, 3);
    EXPECT_FALSE(probe.from_cache());
    EXPECT_TRUE(probe.decided());
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (me == 0) std::remove(cache.c_str());
}
