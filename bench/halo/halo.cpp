// Halo exchange benchmark: the cost of grouping (n arrays in one exchange vs n exchanges of one
// array, seed 004 sect. 3) and of wide halos (3, 10, 20 points, seed 003 sect. 3.2 / Fig. 9a)
// on a box decomposition of a global grid.
//
//   bench_halo [--nx 1024 --ny 512 | --sub 64] [--halo 1] [--arrays 1] [--levels 1]
//              [--separate] [--method auto|two-sweep|single-sweep|neighbor]
//              [--boundary closed|periodic|biperiodic|fold-t|fold-f] [--iters 10] [--reps 7]
//
// --sub S gives every rank an S x S subdomain (weak scaling, the global grid grows with the
// ranks); otherwise the global grid is fixed (strong scaling). Prints one JSON object: the time
// per exchange (median/min/max/mean over reps of the time from the last rank's start to the
// last rank's end of `iters` exchanges, divided by iters) and messages per exchange summed over
// ranks. Ranks record their clocks and reduce once at the end, so a simulation spends its time
// on the exchanges.
#include <mpi.h>

#include <cmath>
#include <stdexcept>
#include <memory>
#include <string>
#include <vector>

#include "common/bench_util.h"
#include "decomp/decomposition.h"
#include "halo/halo_exchange.h"

using namespace isthmus;

namespace {

halo::HaloMethod parse_method(const std::string& s) {
  if (s == "auto") return halo::HaloMethod::Auto;
  if (s == "two-sweep") return halo::HaloMethod::TwoSweep;
  if (s == "single-sweep") return halo::HaloMethod::SingleSweep;
  if (s == "neighbor") return halo::HaloMethod::Neighbor;
  return static_cast<halo::HaloMethod>(-1);
}

}  // namespace

int main(int argc, char** argv) {
  auto [comm, rank, size] = bench::init(argc, argv);
  bench::Args args(argc, argv);
  const int h = static_cast<int>(args.integer("halo", 1));
  const int arrays = static_cast<int>(args.integer("arrays", 1));
  const int levels = static_cast<int>(args.integer("levels", 1));
  const int iters = static_cast<int>(args.integer("iters", 10));
  const int reps = static_cast<int>(args.integer("reps", 7));
  const bool separate = args.flag("separate");
  const std::string bname = args.get("boundary", "biperiodic");
  const std::string mname = args.get("method", "auto");
  const halo::HaloMethod method = parse_method(mname);
  const long long sub = args.integer("sub", 0);

  int rc = 0;
  try {
    const decomp::Boundary boundary = decomp::parse_boundary(bname);
    if (static_cast<int>(method) < 0 || h < 1 || arrays < 1 ||
        levels < 1 || iters < 1 || reps < 1)
      throw std::runtime_error("bad arguments: boundary '" + bname + "', method '" + mname +
                               "', halo " + std::to_string(h) + ", arrays " +
                               std::to_string(arrays) + ", levels " + std::to_string(levels));
    // Process layout: the most square ni x nj = size (ni >= nj).
    int nj = 1;
    for (int a = 1; a * a <= size; ++a)
      if (size % a == 0) nj = a;
    int ni = size / nj;
    long long nx = args.integer("nx", 1024), ny = args.integer("ny", 512);
    if (sub > 0) {
      nx = sub * ni;
      ny = sub * nj;
      if (decomp::has_fold(boundary) && nx % 2) nx += 1;
    }
    decomp::Options o;
    o.boundary = boundary;
    o.halo = h;
    decomp::Decomposition d = decomp::Decomposition::regular(nx, ny, ni, nj, o);

    std::vector<halo::HaloField> fields(arrays, halo::HaloField{halo::PointType::T, levels, 1,
                                                                 DataType::Double});
    std::vector<std::unique_ptr<halo::HaloExchange>> ex;
    double t_setup0 = MPI_Wtime();
    if (separate)
      for (int a = 0; a < arrays; ++a)
        ex.push_back(std::make_unique<halo::HaloExchange>(comm, d, h,
                                                          std::vector<halo::HaloField>{fields[a]},
                                                          method));
    else
      ex.push_back(std::make_unique<halo::HaloExchange>(comm, d, h, fields, method));
    double t_setup = MPI_Wtime() - t_setup0;

    const size_t bytes = static_cast<size_t>(ex[0]->plane_size()) * levels * sizeof(double);
    std::vector<double*> data(arrays);
    for (int a = 0; a < arrays; ++a) data[a] = static_cast<double*>(bench::alloc_field(bytes));

    auto iterate = [&] {
      for (int it = 0; it < iters; ++it) {
        if (separate)
          for (int a = 0; a < arrays; ++a) {
            void* p = data[a];
            ex[a]->exchange(&p);
          }
        else
          ex[0]->exchange(reinterpret_cast<void* const*>(data.data()));
      }
    };
    iterate();  // warm-up, not timed
    // bench_util's rule: from the last rank's start to the last rank's end (barrier skew is not
    // cost), per exchange.
    bench::Stats s = bench::time_collective(comm, reps, iterate);
    for (double* v : {&s.median, &s.min, &s.max, &s.mean}) *v /= iters;
    long long msgs = 0;
    for (auto& e : ex) msgs += e->messages_per_exchange();
    long long total_msgs = 0, max_msgs = 0;
    MPI_Reduce(&msgs, &total_msgs, 1, MPI_LONG_LONG, MPI_SUM, 0, comm);
    MPI_Reduce(&msgs, &max_msgs, 1, MPI_LONG_LONG, MPI_MAX, 0, comm);
    double setup_max = 0;
    MPI_Reduce(&t_setup, &setup_max, 1, MPI_DOUBLE, MPI_MAX, 0, comm);
    if (rank == 0) {
      bench::Json()
          .str("bench", "halo")
          .integer("ranks", size)
          .integer("nx", nx)
          .integer("ny", ny)
          .integer("ni", ni)
          .integer("nj", nj)
          .integer("halo", h)
          .integer("arrays", arrays)
          .integer("levels", levels)
          .str("grouping", separate ? "separate" : "grouped")
          .str("method", halo::method_name(ex[0]->method()))
          .str("boundary", bname)
          .integer("iters", iters)
          .stats("per_exchange_", s)
          .integer("messages_per_exchange_total", total_msgs)
          .integer("messages_per_exchange_max_rank", max_msgs)
          .num("setup_max_s", setup_max)
          .boolean("shared_buffers", bench::buffers_are_shared())
          .print();
    }
    for (double* p : data) bench::free_field(p);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_halo: rank %d: %s\n", rank, e.what());
    rc = 1;
  }
  MPI_Finalize();
  return rc;
}
