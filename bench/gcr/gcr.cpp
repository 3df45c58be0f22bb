// Allreduces of the GCR solver (seed 003 sect. 3.3, Algorithm 1): with restart k = 3 and 25
// iterations, each iteration reduces min(i, 3) doubles (the beta_ij) and then 2 doubles
// (gamma, eta): 50 allreduces of 2-3 doubles, the communication of one solver call.
//
//   bench_gcr [--cases native,recursive-doubling,recursive-k:2,...,recursive-k:32,auto,agreement]
//             [--iters 25] [--restart 3] [--reps 5] [--warmup 1]
//
// "agreement" times only the argument agreement every allreduce call makes before its data
// move (base/agreement.h: one MPI_Allreduce of 2 words), with the same matches: subtracted from
// a case's time it leaves the algorithm's own (docs/results/collectives.md).
//
// Prints one JSON object per case: the slowest rank's time of the 50 allreduces
// (median/min/max over reps) and the messages each rank sent (max over ranks).
#include <mpi.h>

#include <algorithm>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "base/agreement.h"
#include "collectives/allreduce.h"
#include "collectives/barrier.h"
#include "common/bench_util.h"

using namespace isthmus;

int main(int argc, char** argv) {
  auto [comm, rank, size] = bench::init(argc, argv);
  bench::Args args(argc, argv);
  const int iters = int(args.integer("iters", 25)), restart = int(args.integer("restart", 3));
  const int reps = int(args.integer("reps", 5));
  const int warmup = int(args.integer("warmup", 1));  // 0 in simulation: it is deterministic
  std::string def = "native,recursive-doubling";
  for (int k = 2; k <= 32; ++k) def += ",recursive-k:" + std::to_string(k);
  def += ",auto";
  int rc = 0;
  try {
    for (const std::string& name : bench::Args::split(args.get("cases", def))) {
      AllreduceOptions o;
      std::string alg = name.substr(0, name.find(':'));
      const bool agree_only = alg == "agreement";
      o.algorithm = agree_only ? AllreduceAlgorithm::Native : parse_allreduce_algorithm(alg.c_str());
      if (name.find(':') != std::string::npos) o.k = std::stoi(name.substr(name.find(':') + 1));
      int k_used = agree_only ? 0
                   : o.algorithm == AllreduceAlgorithm::RecursiveDoubling ? 2
                   : o.algorithm == AllreduceAlgorithm::Native           ? 0
                   : o.k ? o.k : auto_radix(size);
      trace::Counters counters;
      o.counters = &counters;
      double x[8] = {1, 2, 3, 4, 5, 6, 7, 8}, r[8];
      int calls = 0;
      auto agree = [&](int count) {  // the matches allreduce() makes (allreduce.cpp)
        Agreement a;
        a.match("allreduce: count", count);
        a.match("allreduce: op", int(ReduceOp::Sum));
        a.match("allreduce: algorithm", int(o.algorithm));
        a.match("allreduce: k", std::nullopt);
        a.match("allreduce: tag", o.tag);
        a.match("allreduce: value type (0 double, 1 int64)", 0);
        a.conclude(comm);
      };
      auto solve = [&] {
        if (agree_only) {
          for (int i = 1; i <= iters; ++i) agree(std::min(i, restart)), agree(2), calls += 2;
          return;
        }
        for (int i = 1; i <= iters; ++i) {
          allreduce(x, r, std::min(i, restart), ReduceOp::Sum, comm, o);  // beta_ij
          allreduce(x, r, 2, ReduceOp::Sum, comm, o);                     // gamma_i, eta_i
          calls += 2;
        }
      };
      for (int w = 0; w < warmup; ++w) solve();  // warm-up
      counters = trace::Counters{};
      calls = 0;
      bench::Stats st = bench::time_collective_with(comm, reps, solve, [comm] { isthmus::dissemination_barrier(comm); }).wall;
      long long mine = counters.messages_sent / reps, most = 0;
      MPI_Reduce(&mine, &most, 1, MPI_LONG_LONG, MPI_MAX, 0, comm);
      if (rank == 0) {
        bench::Json j;
        j.str("bench", "gcr").integer("ranks", size).str("algorithm", alg).str("case", name);
        if (k_used) j.integer("k", k_used);
        j.integer("allreduces", calls / reps).integer("restart", restart).stats("", st);
        if (o.algorithm != AllreduceAlgorithm::Native) j.integer("max_msgs_per_rank", most);
        j.print();
      }
    }
  } catch (const std::exception& e) {
    if (rank == 0) std::fprintf(stderr, "bench_gcr: %s\n", e.what());
    rc = 1;
  }
  MPI_Finalize();
  return rc;
}
