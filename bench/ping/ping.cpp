// Ping-pong between ranks 0 and 1 (other ranks wait): the one-way time of a message of B bytes.
// Under SimGrid this is what checks a platform's latency/bandwidth model against its prediction
// (tests/sim); under real MPI it is the usual latency/bandwidth probe.
//
//   bench_ping [--sizes 0,1024,1048576] [--iters 10] [--reps 5]
//
// One JSON object per size; times are one-way (round trip / 2), median/min/max over repetitions
// of `iters` round trips each. "errors" counts wrong bytes received (real buffers only).
#include <mpi.h>

#include <algorithm>
#include <sstream>
#include <string>
#include <vector>

#include "common/bench_util.h"

int main(int argc, char** argv) {
  auto [comm, rank, size] = bench::init(argc, argv);
  bench::Args args(argc, argv);
  const int iters = static_cast<int>(args.integer("iters", 10));
  const int reps = static_cast<int>(args.integer("reps", 5));
  std::vector<long long> sizes;
  {
    std::stringstream list(args.get("sizes", "0,1024,1048576"));
    for (std::string item; std::getline(list, item, ',');)
      if (!item.empty()) sizes.push_back(std::stoll(item));
  }
  bool negative = false;
  for (long long b : sizes) negative = negative || b < 0;
  if (size < 2 || iters < 1 || reps < 1 || sizes.empty() || negative) {
    if (rank == 0)
      std::fprintf(stderr, "bench_ping: needs >= 2 ranks (got %d), iters >= 1, reps >= 1 and "
                           "a non-empty --sizes list of sizes >= 0\n", size);
    MPI_Abort(comm, 2);
  }
  const bool check = !bench::buffers_are_shared();
  // One buffer for every size: under SMPI without privatization, freeing a 1-byte shared buffer
  // and allocating a 1000-byte one per size crashed the simulation (SMPI 3.32, observed).
  long long largest = 0;
  for (long long b : sizes) largest = std::max(largest, b);
  char* buf = static_cast<char*>(bench::alloc_field(static_cast<size_t>(largest)));

  for (long long bytes : sizes) {
    const int n = static_cast<int>(bytes);
    long long errors = 0;
    std::vector<double> samples;
    if (rank < 2) {
      const int peer = 1 - rank;
      auto round_trip = [&] {
        if (rank == 0) {
          if (check)
            for (int k = 0; k < n; ++k) buf[k] = static_cast<char>(k * 7 + 1);
          MPI_Send(buf, n, MPI_BYTE, peer, 0, comm);
          MPI_Recv(buf, n, MPI_BYTE, peer, 1, comm, MPI_STATUS_IGNORE);
          if (check)
            for (int k = 0; k < n; ++k) errors += buf[k] != static_cast<char>(k * 7 + 2);
        } else {
          MPI_Recv(buf, n, MPI_BYTE, peer, 0, comm, MPI_STATUS_IGNORE);
          if (check)
            for (int k = 0; k < n; ++k) {
              errors += buf[k] != static_cast<char>(k * 7 + 1);
              buf[k] = static_cast<char>(k * 7 + 2);
            }
          MPI_Send(buf, n, MPI_BYTE, peer, 1, comm);
        }
      };
      round_trip();  // warm-up: connection set-up is not part of the figure
      for (int r = 0; r < reps; ++r) {
        double t0 = MPI_Wtime();
        for (int it = 0; it < iters; ++it) round_trip();
        samples.push_back((MPI_Wtime() - t0) / (2.0 * iters));
      }
    }
    long long total = 0;
    MPI_Reduce(&errors, &total, 1, MPI_LONG_LONG, MPI_SUM, 0, comm);
    if (rank == 0) {
      bench::Stats s = bench::stats(samples);
      bench::Json()
          .str("bench", "ping")
          .integer("ranks", size)
          .integer("bytes", bytes)
          .integer("iters", iters)
          .stats("", s)
          .num("bandwidth_Bps", s.median > 0 ? static_cast<double>(bytes) / s.median : 0.0)
          .boolean("data_checked", check)
          .integer("errors", total)
          .print();
    }
    MPI_Barrier(comm);
  }
  bench::free_field(buf);
  MPI_Finalize();
  return 0;
}
