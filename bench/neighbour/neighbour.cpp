// Nearest-neighbour exchange skeleton: every rank of a periodic 2-D process grid exchanges one
// message of a fixed size with each of its 4 neighbours (west, east, south, north), repeated.
// It carries no library code on purpose: it measures the reach of the simulator itself (how
// many simulated ranks fit in time and memory) and the network's halo-like behaviour.
//
//   bench_neighbour [--bytes 8192] [--iters 10] [--reps 5] [--px P --py Q]
//
// Prints one JSON object: median/min/max over repetitions of the slowest rank's time for
// `iters` exchanges (and per_exchange_median_s). One untimed exchange first absorbs most of the
// skew with which ranks leave the start barrier (at 256 simulated ranks that skew alone is
// ~100 us against ~4 us for an 8 KiB exchange); `iters` > 1 amortises the rest. Ranks are timed locally and reduced once at the end (not with a collective
// per repetition), so that at 10^4+ simulated ranks the simulator spends its time on the
// exchange being measured. Under real MPI (or SMPI with private buffers) the received values
// are checked: "errors" counts wrong elements.
#include <mpi.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "common/bench_util.h"

namespace {

enum Direction { kEast = 0, kWest = 1, kNorth = 2, kSouth = 3 };

// The value element k of the message that rank `from` sends in direction d: exact in a double
// for every rank count and message size this benchmark can be given.
double expected(long long from, int d, size_t k) {
  return static_cast<double>((from * 4 + d) * 1000003LL + static_cast<long long>(k % 1000003));
}

// px * py = n with px <= py as close to square as n allows.
void near_square(int n, int& px, int& py) {
  px = static_cast<int>(std::sqrt(static_cast<double>(n)));
  while (px > 1 && n % px != 0) --px;
  if (px < 1) px = 1;
  py = n / px;
}

}  // namespace

int main(int argc, char** argv) {
  auto [comm, rank, size] = bench::init(argc, argv);

  bench::Args args(argc, argv);
  const long long requested = args.integer("bytes", 8192);
  const int iters = static_cast<int>(args.integer("iters", 10));
  const int reps = static_cast<int>(args.integer("reps", 5));
  int px = static_cast<int>(args.integer("px", 0)), py = static_cast<int>(args.integer("py", 0));
  if (px <= 0 || py <= 0) near_square(size, px, py);
  if (px * py != size || requested < 0 || iters < 1 || reps < 1) {
    if (rank == 0)
      std::fprintf(stderr,
                   "bench_neighbour: bad arguments: process grid %d x %d for %d ranks, bytes %lld, "
                   "iters %d, reps %d (need px*py == ranks, bytes >= 0, iters >= 1, reps >= 1)\n",
                   px, py, size, requested, iters, reps);
    MPI_Abort(comm, 2);
  }
  // Whole doubles, so that the data can be checked.
  const size_t count = static_cast<size_t>((requested + 7) / 8);
  const size_t bytes = count * 8;

  const int i = rank % px, j = rank / px;
  auto at = [&](int ii, int jj) { return ((jj + py) % py) * px + (ii + px) % px; };
  // Destination of the message travelling in direction d, and the source of the message that
  // arrives travelling in direction d (the opposite neighbour).
  const int to[4] = {at(i + 1, j), at(i - 1, j), at(i, j + 1), at(i, j - 1)};
  const int from[4] = {at(i - 1, j), at(i + 1, j), at(i, j - 1), at(i, j + 1)};

  double* send = static_cast<double*>(bench::alloc_field(4 * bytes));
  double* recv = static_cast<double*>(bench::alloc_field(4 * bytes));
  const bool check = !bench::buffers_are_shared();
  if (check) {
    for (int d = 0; d < 4; ++d)
      for (size_t k = 0; k < count; ++k) send[d * count + k] = expected(rank, d, k);
    for (size_t k = 0; k < 4 * count; ++k) recv[k] = -1;
  }

  MPI_Request req[8];
  auto exchange = [&] {
    // The tag is the travel direction, so that with 2 ranks along a dimension (west and east
    // neighbour are the same rank) each message still lands in its own buffer.
    for (int d = 0; d < 4; ++d)
      MPI_Irecv(recv + d * count, static_cast<int>(count), MPI_DOUBLE, from[d], d, comm, &req[d]);
    for (int d = 0; d < 4; ++d)
      MPI_Isend(send + d * count, static_cast<int>(count), MPI_DOUBLE, to[d], d, comm,
                &req[4 + d]);
    MPI_Waitall(8, req, MPI_STATUSES_IGNORE);
  };

  std::vector<double> mine(reps), worst(reps);
  MPI_Barrier(comm);
  exchange();
  for (int r = 0; r < reps; ++r) {
    double t0 = MPI_Wtime();
    for (int it = 0; it < iters; ++it) exchange();
    mine[r] = MPI_Wtime() - t0;
  }
  MPI_Reduce(mine.data(), worst.data(), reps, MPI_DOUBLE, MPI_MAX, 0, comm);

  long long errors = 0, total = 0;
  if (check)
    for (int d = 0; d < 4; ++d)
      for (size_t k = 0; k < count; ++k) errors += recv[d * count + k] != expected(from[d], d, k);
  MPI_Reduce(&errors, &total, 1, MPI_LONG_LONG, MPI_SUM, 0, comm);

  if (rank == 0) {
    bench::Stats s = bench::stats(worst);
    bench::Json()
        .str("bench", "neighbour")
        .integer("ranks", size)
        .integer("px", px)
        .integer("py", py)
        .integer("bytes", static_cast<long long>(bytes))
        .integer("iters", iters)
        .integer("messages_per_rank", 4LL * iters)
        .stats("", s)
        .num("per_exchange_median_s", s.median / iters)
        .boolean("data_checked", check)
        .integer("errors", total)
        .print();
  }
  bench::free_field(send);
  bench::free_field(recv);
  MPI_Finalize();
  return total == 0 ? 0 : 1;
}
