// Cost of the five CONSERV global sums (seed 000 sect. 2.4, 3.5): N global points in a block
// decomposition, F fields summed in one call.
//
//   bench_globalsum [--points 1000000] [--fields 1] [--methods gather,lsum8,lsum16,ddpdd,reprosum]
//                   [--reps 7]
//
// Prints one JSON object per method: the slowest rank's time of one call (median/min/max over
// reps) and, from the same run, the ratio of medians to lsum8; the same for the slowest rank's
// CPU time (cpu_*), which is what to compare on a loaded or oversubscribed machine. Under SMPI with shared buffers
// the values are meaningless but the work is the same (run with --simulate-computation to
// count it).
#include <mpi.h>

#include <cmath>
#include <ctime>
#include <utility>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "collectives/global_sum.h"
#include "collectives/barrier.h"
#include "common/bench_util.h"

using namespace isthmus;

int main(int argc, char** argv) {
  auto [comm, rank, size] = bench::init(argc, argv);
  bench::Args args(argc, argv);
  const long long points = args.integer("points", 1000000);
  const int nf = int(args.integer("fields", 1));
  const int reps = int(args.integer("reps", 7));
  auto methods = bench::Args::split(args.get("methods", "lsum8,lsum16,ddpdd,reprosum,gather"));
  int rc = 0;
  try {
    if (points < 0 || nf < 1 || reps < 1) throw std::runtime_error("bad --points, --fields or --reps");
    long long first = points * rank / size, n = points * (rank + 1) / size - first;
    std::vector<double*> field(static_cast<size_t>(nf));
    std::vector<const double*> cfield(static_cast<size_t>(nf));
    for (int f = 0; f < nf; ++f) {
      field[size_t(f)] = static_cast<double*>(bench::alloc_field(size_t(n) * sizeof(double)));
      cfield[size_t(f)] = field[size_t(f)];
      if (!bench::buffers_are_shared())
        for (long long i = 0; i < n; ++i)  // a smooth field with a wide range, like a flux
          field[size_t(f)][i] = std::sin(1e-4 * double(first + i) + f) * std::exp(1e-5 * double(first + i));
    }
    std::vector<int64_t> index(static_cast<size_t>(n));
    for (long long i = 0; i < n; ++i) index[size_t(i)] = first + i;
    std::vector<double> sums(static_cast<size_t>(nf));
    std::map<std::string, double> median, cpu_median;
    for (const std::string& name : methods) {
      GlobalSumMethod m = parse_global_sum_method(name.c_str());
      auto call = [&] { global_sum(comm, nf, cfield.data(), n, index.data(), m, sums.data()); };
      call();  // warm-up
      auto [st, cpu] = bench::time_collective_with(comm, reps, call, [comm] { isthmus::dissemination_barrier(comm); });
      median[name] = st.median;
      cpu_median[name] = cpu.median;
      if (rank == 0) {
        bench::Json j;
        j.str("bench", "globalsum").integer("ranks", size).integer("points", points).integer("fields", nf);
        j.str("method", name).stats("", st).stats("cpu_", cpu);
        if (median.count("lsum8") && median["lsum8"] > 0) j.num("ratio_to_lsum8", st.median / median["lsum8"]);
        if (cpu_median.count("lsum8") && cpu_median["lsum8"] > 0)
          j.num("cpu_ratio_to_lsum8", cpu.median / cpu_median["lsum8"]);
        if (!bench::buffers_are_shared()) j.num("sum0", sums[0]);
        j.print();
      }
    }
    for (double* p : field) bench::free_field(p);
  } catch (const std::exception& e) {
    if (rank == 0) std::fprintf(stderr, "bench_globalsum: %s\n", e.what());
    rc = 1;
  }
  MPI_Finalize();
  return rc;
}
