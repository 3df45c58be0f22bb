#include "transfer/adaptive.h"

#include <algorithm>
#include <cmath>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <sstream>

#include "base/error.h"
#include "base/clock.h"
#include "base/wait.h"

namespace isthmus {

namespace {

constexpr int kMaxCachedRuns = 32;
constexpr const char* kCacheTag = "isthmus-plan";

// MPI's collectives the best plan is timed against, in this order.
#ifdef ISTHMUS_SMPI
constexpr Method kCollectives[] = {Method::Alltoallv};  // SMPI 3.32 has no neighbourhood ones
#else
constexpr Method kCollectives[] = {Method::Alltoallv, Method::Neighbor};
#endif

constexpr double kCollectiveMargin = 0.98;
// A pair is decided when one candidate wins so many of the rounds that a fair coin would do as
// well with at most this probability (one-sided sign test): with noise, 5 rounds of 5 at least.
constexpr double kSignificance = 0.05;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace

AdaptiveOptions adaptive_options_from_environment() {
  AdaptiveOptions o;
  if (const char* p = std::getenv("ISTHMUS_PLAN_CACHE")) o.cache_path = p;
  if (const char* s = std::getenv("ISTHMUS_ADAPTIVE_SAMPLES")) {
    int v = std::atoi(s);
    if (v >= 1) o.samples = v;
  }
  if (const char* s = std::getenv("ISTHMUS_ADAPTIVE_WARMUP")) {
    int v = std::atoi(s);
    if (v >= 0) o.warmup = v;
  }
  return o;
}

AdaptiveExecutor::AdaptiveExecutor(MPI_Comm comm, int tag, const MessageLayout& layout,
                                   char* send_buffer, char* recv_buffer, AdaptiveOptions options)
    : tag_(tag), layout_(layout), sbuf_(send_buffer), rbuf_(recv_buffer),
      options_(std::move(options)) {
  if (options_.samples < 1)
    fail(ISTHMUS_ERR_ARG, "adaptive transfer: ", options_.samples,
         " timed exchanges per candidate plan; at least 1 needed");
  if (options_.warmup < 0)
    fail(ISTHMUS_ERR_ARG, "adaptive transfer: negative warm-up count ", options_.warmup);
  topo_ = ButterflyTopology::build(comm, layout_);
}

std::string AdaptiveExecutor::cache_key() const {
  char fp[32];
  std::snprintf(fp, sizeof fp, "%016llx", static_cast<unsigned long long>(topo_->fingerprint));
  std::ostringstream os;
  os << fp << ' ' << topo_->size << ' ' << topo_->mapping.senders << ' '
     << topo_->mapping.receivers << ' ' << topo_->mapping.stages;
  return os.str();
}

Plan AdaptiveExecutor::plan() const {
  if (state_ == State::Decided) return chosen_plan_;
  if (state_ == State::Profiling) return batch_[batch_pos_];
  return p2p_plan(stages());  // not started: nothing chosen yet
}

Executor& AdaptiveExecutor::executor_for(const Plan& plan) {
  auto it = executors_.find(plan);
  if (it == executors_.end()) {
    // A collective runs on the messages as the schedule lays them out, over the same ranks; so
    // does pure p2p, the plan [n], on the p2p executor, which sends them with no butterfly
    // bookkeeping (the butterfly executor's [n] was 1-3 % slower).
    const Method collective = collective_of(plan);
    const Method method = collective != Method::Auto ? collective
                          : plan == p2p_plan(stages()) ? Method::P2P
                                                       : Method::Auto;
    std::unique_ptr<Executor> ex =
        method != Method::Auto
            ? make_executor(method, topo_->comm, tag_, layout_, sbuf_, rbuf_)
            : std::make_unique<ButterflyExecutor>(topo_, tag_, layout_, sbuf_, rbuf_, plan);
    it = executors_.emplace(plan, std::move(ex)).first;
  }
  return *it->second;
}

void AdaptiveExecutor::lookup_cache() {
  // Rank 0 reads, everyone gets its answer: one decision even if ranks see different files.
  int msg[2 + kMaxCachedRuns] = {0};
  if (topo_->rank == 0 && !options_.cache_path.empty()) {
    std::ifstream in(options_.cache_path);
    const std::string key = cache_key();
    std::string line;
    while (std::getline(in, line)) {
      std::istringstream ls(line);
      std::string tag, fp, ranks, senders, receivers, stages, plan;
      if (!(ls >> tag >> fp >> ranks >> senders >> receivers >> stages >> plan)) continue;
      if (tag != kCacheTag || fp + ' ' + ranks + ' ' + senders + ' ' + receivers + ' ' + stages != key)
        continue;
      try {
        Plan p = plan == "-" ? Plan{} : parse_plan(plan);
        if (p.size() > static_cast<size_t>(kMaxCachedRuns)) continue;
        msg[0] = 1;
        msg[1] = static_cast<int>(p.size());
        for (size_t i = 0; i < p.size(); ++i) msg[2 + i] = p[i];
      } catch (const Error&) {
        continue;  // a damaged line is skipped; the plan is profiled again
      }
    }
  }
  ISTHMUS_MPI(wmpi::Bcast(msg, 2 + kMaxCachedRuns, MPI_INT, 0, topo_->comm));
  if (!msg[0]) return;
  Plan p(msg + 2, msg + 2 + msg[1]);
  const Method collective = collective_of(p);
  if (collective != Method::Auto) {
    if (!weighs(collective)) return;  // e.g. a cache written by another MPI: profiled again
  } else {
    try {
      validate_plan(p, stages());
    } catch (const Error&) {
      return;
    }
  }
  from_cache_ = true;
  decide(p);
}

void AdaptiveExecutor::write_cache() const {
  if (topo_->rank != 0 || options_.cache_path.empty()) return;
  double best = 0;
  for (const auto& m : measured_)
    if (m.plan == chosen_plan_) best = m.median_seconds;
  std::ofstream out(options_.cache_path, std::ios::app);
  if (out) {
    const std::string plan = chosen_plan_.empty() ? "-" : plan_string(chosen_plan_);
    out << kCacheTag << ' ' << cache_key() << ' ' << plan << ' ' << best << '\n';
  }
  if (!out)
    std::fprintf(stderr, "isthmus: warning: cannot append to the transfer plan cache '%s': %s; "
                 "the next run will profile again\n", options_.cache_path.c_str(),
                 std::strerror(errno));
}

void AdaptiveExecutor::decide(const Plan& plan) {
  chosen_plan_ = plan;
  executor_for(plan);
  chosen_ = std::move(executors_[plan]);
  executors_.clear();
  state_ = State::Decided;
  if (!from_cache_ && !measured_.empty()) write_cache();
}

void AdaptiveExecutor::start_batch(std::vector<Plan> plans) {
  // Executors of plans timed again (the walk's candidate) are kept; their setup is collective.
  for (auto it = executors_.begin(); it != executors_.end();)
    it = std::find(plans.begin(), plans.end(), it->first) == plans.end() ? executors_.erase(it) : std::next(it);
  batch_ = std::move(plans);
  batch_samples_.assign(batch_.size(), {});
  batch_round_ = 0;
  batch_pos_ = 0;
}

// The pair's rounds: how many the second candidate won (its time below the first's in the same
// round) and how many the first won; equal times win for neither.
std::pair<int, int> AdaptiveExecutor::round_wins() const {
  int second = 0, first = 0;
  const std::vector<double>& a = batch_samples_[0];
  const std::vector<double>& b = batch_samples_[1];
  for (size_t i = 0; i < std::min(a.size(), b.size()); ++i) {
    second += b[i] < a[i];
    first += a[i] < b[i];
  }
  return {second, first};
}

bool AdaptiveExecutor::undecided() const {
  // Every rank holds the same samples (each is an allreduce's result), so all decide alike.
  // Deterministic samples (SMPI, scripted times: each candidate's the same every round) decide
  // at once, by their medians.
  auto spread = [](const std::vector<double>& v) {
    return !v.empty() && *std::max_element(v.begin(), v.end()) != *std::min_element(v.begin(), v.end());
  };
  if (!spread(batch_samples_[0]) && !spread(batch_samples_[1])) return false;
  // Otherwise a pair is decided when one candidate wins significantly more rounds than a fair
  // coin would (a sign test over the rounds, one-sided, at kSignificance). The rounds are
  // paired: a slow spell (the cores given to another process) hits both exchanges of a round,
  // and compares nothing; medians of each candidate's own samples let such spells decide.
  const auto [second, first] = round_wins();
  const int n = second + first;
  const int k = std::max(second, first);
  // P(X >= k) for X ~ Binomial(n, 1/2)
  double tail = 0, term = std::pow(0.5, n);  // C(n, 0) / 2^n
  for (int j = 0; j <= n; ++j) {
    if (j >= k) tail += term;
    term = term * (n - j) / (j + 1);
  }
  return n == 0 || tail > kSignificance;
}

void AdaptiveExecutor::finish_batch() {
  std::vector<double> med(batch_.size());
  for (size_t i = 0; i < batch_.size(); ++i) {
    med[i] = median(batch_samples_[i]);
    measured_.push_back({batch_[i], med[i], batch_samples_[i]});
  }
  const int n = stages();
  // Ties go to the first plan of the pair (p2p, then the plan already held, then the better
  // of p2p and the butterfly).
  // A collective must beat the plan by kCollectiveMargin: where they are within the noise of a
  // few samples (bench/redist at 8 ranks: p2p, alltoallv and neighbor within 3 %), a coin flip
  // towards a collective lost up to 4.6 % against p2p.
  // Two candidates still within their noise after max_samples are a tie as well: the first
  // is kept (with 8 ranks on 2 cores two instances of one method differ by up to 6 %, and the
  // collectives kept on such margins ran 2-4 % slower than p2p).
  const double margin = phase_ == Phase::Collectives ? kCollectiveMargin : 1.0;
  const auto [second_wins, first_wins] = round_wins();
  const Plan winner =
      !undecided() && second_wins >= first_wins && med[1] < margin * med[0] ? batch_[1] : batch_[0];
  switch (phase_) {
    case Phase::Fixed:
      fixed_winner_ = winner;
      candidate_ = full_butterfly_plan(n);
      next_boundary_ = 1;
      phase_ = Phase::Walk;
      break;
    case Phase::Walk:
      candidate_ = winner;
      break;
    case Phase::Final:
      next_collective(winner);
      return;
    case Phase::Collectives:
      next_collective(winner);
      return;
  }
  const Plan p2p = p2p_plan(n);
  while (next_boundary_ < n) {
    Plan temp = merge_at(candidate_, next_boundary_++);
    if (temp == candidate_ || temp == p2p) continue;  // p2p meets the walk's end below
    start_batch({candidate_, temp});
    return;
  }
  // The walk's end is the best plan on its path; it must also beat the better of p2p and the
  // full butterfly, timed again side by side, or that one is kept.
  if (candidate_ == full_butterfly_plan(n)) {
    next_collective(fixed_winner_);  // the walk merged nothing: the first pair has decided
  } else {
    phase_ = Phase::Final;
    start_batch({fixed_winner_, candidate_});
  }
}

bool AdaptiveExecutor::weighs(Method collective) const {
  // Only the collectives this build can run. MPI_Alltoallv costs every rank O(P) (its count
  // arrays; pairwise algorithms take P - 1 steps), the plans O(peers): it is timed only where the
  // densest rank talks to a quarter of the ranks or more. Below that it cannot win, and
  // profiling it would cost a large job P^2 (zero-byte) messages. The neighbourhood collective
  // costs O(peers) like the plans.
  if (std::find(std::begin(kCollectives), std::end(kCollectives), collective) == std::end(kCollectives))
    return false;
  if (collective == Method::Alltoallv) return 4 * static_cast<int64_t>(topo_->max_peers) >= topo_->size - 1;
  return true;
}

void AdaptiveExecutor::next_collective(const Plan& best) {
  // The best plan so far against each collective in turn; ties keep the plan.
  while (next_collective_ < std::size(kCollectives)) {
    const Method c = kCollectives[next_collective_++];
    if (!weighs(c)) continue;
    phase_ = Phase::Collectives;
    start_batch({best, collective_plan(c)});
    return;
  }
  decide(best);
}

void AdaptiveExecutor::run(Packer& packer, trace::Trace& trace) {
  if (state_ == State::Start) {
    lookup_cache();
    if (state_ != State::Decided) {
      const int n = stages();
      if (n == 0) {
        decide(p2p_plan(n));  // nothing is sent: nothing to choose
      } else if (n == 1) {
        state_ = State::Profiling;  // p2p is the butterfly: only the collectives to weigh
        next_collective(p2p_plan(n));
      } else {
        phase_ = Phase::Fixed;
        start_batch({p2p_plan(n), full_butterfly_plan(n)});
        state_ = State::Profiling;
      }
    }
  }
  if (state_ == State::Decided) {
    chosen_->run(packer, trace);
    return;
  }
  const Plan plan = batch_[batch_pos_];
  Executor& ex = executor_for(plan);
  // The benchmarks' rule: from the last rank's start to the last rank's end. A rank's own
  // duration would also count how long it waited for ranks that left the barrier later. The
  // ranks' times are compared on one clock (MPI_Wtime's origin is each process's own).
  const GlobalClock& clock = GlobalClock::of(topo_->comm);
  ISTHMUS_MPI(wmpi::Barrier(topo_->comm));
  double t[2];
  t[0] = clock.now();
  ex.run(packer, trace);
  t[1] = clock.now();
  double last[2];
  ISTHMUS_MPI(wmpi::Allreduce(t, last, 2, MPI_DOUBLE, MPI_MAX, topo_->comm));
  ++profiling_exchanges_;
  double figure = last[1] - last[0];
  if (options_.synthetic_time) figure = options_.synthetic_time(plan, figure);
  if (batch_round_ >= options_.warmup) batch_samples_[batch_pos_].push_back(figure);
  if (++batch_pos_ == batch_.size()) {
    batch_pos_ = 0;
    const int taken = ++batch_round_ - options_.warmup;
    if (taken >= options_.samples && (taken >= options_.max_samples || !undecided())) finish_batch();
  }
}

}  // namespace isthmus
