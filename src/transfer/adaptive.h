// Adaptive data transfer (seed 001, sect. 4): the first real exchanges (which deliver correct
// data) profile plans of merged butterfly stages, then the fastest is kept. Unlike the paper's
// one-sample greedy choice, plans are compared in pairs whose exchanges alternate (A B A B ...,
// so a slow spell of a noisy machine hits both alike), each over several exchanges after a
// warm-up; a plan's figure is the median over its exchanges of the collective time, which
// every rank gets from one allreduce, so all ranks take the same decision and a simulation
// (deterministic times) always takes the same one. Pairs: p2p [n] against the full butterfly
// [1,...,1]; then the paper's stage-by-stage walk from the butterfly (keep a merged boundary if
// that is faster); then the better of p2p and the butterfly against where the walk ended, so
// the plan kept is never one measured slower than either pure form; finally the best so far
// against MPI's own collectives on the same messages, MPI_Alltoallv (where the densest rank
// talks to a quarter of the ranks or more: weighs()) and MPI_Neighbor_alltoallv (where the MPI
// has it: not SimGrid SMPI 3.32), so that `auto` never keeps a plan an MPI collective was
// measured to beat. Each exchange is timed as the benchmarks time it: from
// the last rank's start to the last rank's end.
// A plan cache file keyed by the schedule's fingerprint and rank counts lets the next run of the
// same configuration skip profiling (the paper's future work).
#pragma once
#include <mpi.h>

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "transfer/butterfly.h"
#include "transfer/executor.h"
#include "transfer/plan.h"

namespace isthmus {

struct AdaptiveOptions {
  int warmup = 1;          // untimed exchanges per candidate
  int samples = 3;         // timed exchanges per candidate
  // up to this many while neither candidate has won significantly more of the pair's rounds
  // (a sign test; noise, as on shared cores: with 8 ranks on 2 cores three samples ranked the
  // neighbourhood collective 2 % ahead of p2p, which was 36 % faster, and medians 2 median
  // absolute deviations apart still kept collectives that ran 5 % slower than p2p)
  int max_samples = 15;
  std::string cache_path;  // plan cache file ("" = none)
  // Tests only: replaces the figure of each timed exchange (which still runs and delivers) by
  // what this returns for the plan and the measured figure; it must return the same on all ranks.
  std::function<double(const Plan& plan, double measured)> synthetic_time;
};

// Defaults overridden by ISTHMUS_PLAN_CACHE (path), ISTHMUS_ADAPTIVE_SAMPLES and
// ISTHMUS_ADAPTIVE_WARMUP (counts), read when a redistribution is created.
AdaptiveOptions adaptive_options_from_environment();

struct PlanMeasurement {
  Plan plan;
  double median_seconds;
  std::vector<double> samples;
};

class AdaptiveExecutor final : public Executor {
 public:
  // Collective over comm (builds the process mapping and the fingerprint).
  AdaptiveExecutor(MPI_Comm comm, int tag, const MessageLayout& layout, char* send_buffer,
                   char* recv_buffer, AdaptiveOptions options);
  // Collective: every rank must call run() for every exchange (ranks without data too).
  void run(Packer& packer, trace::Trace& trace) override;

  // Effective until the decision is taken (the cache is consulted at the first exchange);
  // rank 0's path is the one that counts.
  void set_cache_path(const std::string& path) { options_.cache_path = path; }
  const AdaptiveOptions& options() const { return options_; }

  bool decided() const { return state_ == State::Decided; }
  bool from_cache() const { return from_cache_; }
  // The chosen plan once decided, else the plan the next exchange will use.
  Plan plan() const;
  int stages() const { return topo_->mapping.stages; }
  const ButterflyTopology& topology() const { return *topo_; }
  int profiling_exchanges() const { return profiling_exchanges_; }
  const std::vector<PlanMeasurement>& measurements() const { return measured_; }
  // The cache key of this schedule: "<fingerprint hex> <ranks> <senders> <receivers> <stages>".
  std::string cache_key() const;
  // The butterfly executor of the chosen plan (null until decided, and when pure p2p or a
  // collective won, which run the schedule's own messages: collective_of(plan()) says which).
  const ButterflyExecutor* chosen() const { return dynamic_cast<const ButterflyExecutor*>(chosen_.get()); }
  // Whether MPI's collective `collective` is a candidate for this schedule (only those this
  // build can run, alltoallv only for dense schedules; the same answer on every rank).
  bool weighs(Method collective) const;
  // The messages as the schedule lays them out (what a collective sends).
  const MessageLayout& layout() const { return layout_; }

 private:
  enum class State { Start, Profiling, Decided };
  enum class Phase { Fixed, Walk, Final, Collectives };
  Executor& executor_for(const Plan& plan);
  void next_collective(const Plan& best);
  void lookup_cache();
  void write_cache() const;
  void start_batch(std::vector<Plan> plans);
  void finish_batch();
  bool undecided() const;  // the batch's two candidates still within their noise
  std::pair<int, int> round_wins() const;  // rounds the (second, first) candidate was faster in
  void decide(const Plan& plan);

  std::shared_ptr<const ButterflyTopology> topo_;
  int tag_;
  MessageLayout layout_;
  char* sbuf_;
  char* rbuf_;
  AdaptiveOptions options_;

  State state_ = State::Start;
  bool from_cache_ = false;
  Phase phase_ = Phase::Fixed;
  std::vector<Plan> batch_;                  // plans timed in alternation
  std::vector<std::vector<double>> batch_samples_;
  int batch_round_ = 0;                      // completed passes over the batch
  size_t batch_pos_ = 0;                     // next plan of the current pass
  Plan fixed_winner_;                        // p2p or the butterfly, whichever won the first pair
  Plan candidate_;                           // the walk: best plan on the path so far
  int next_boundary_ = 1;                    // the walk: next boundary to try merging
  std::vector<PlanMeasurement> measured_;
  size_t next_collective_ = 0;               // the collectives phase: next one to time
  std::map<Plan, std::unique_ptr<Executor>> executors_;
  std::unique_ptr<Executor> chosen_;
  Plan chosen_plan_;
  int profiling_exchanges_ = 0;
};

}  // namespace isthmus
