// Spectral-transform transposition skeleton (seed 003 sect. 3.1, Fig. 3): a 3-D grid
// nx x ny x nz on a cx x cy process grid goes grid -> Fourier -> Legendre -> spectral space
// and back. Each step is a set of simultaneous slab transpositions, one alltoallv per row
// (cx ranks) or column (cy ranks) of the process grid:
//   (a) x/cx, y/cy, z      -> (b) x, y/cy, z/cx     cy simultaneous xz slabs (rows)
//   (b) x, y/cy, z/cx      -> (c) x/cy, y, z/cx     cx simultaneous xy slabs (columns)
//   (c) x/cy, y, z/cx      -> (d) x/cy, y/cx, z     cy simultaneous yz slabs (rows)
// and the three inverse steps. Only the communication is modelled (no FFT or Legendre work).
//
//   bench_transpose [--nx 1440 --ny 720 --nz 128] [--cx C --cy C] [--fields 1]
//                   [--algorithms burst,bruck,ring:1,ring:4,pairwise,native,auto] [--reps 5] [--warmup 1]
//
// cx x cy defaults to the most square factorization of the rank count with cx <= cy, nz. Prints one
// JSON object per algorithm: the slowest rank's time of one forward + backward transform
// (median/min/max over reps), messages and bytes sent per rank (max over ranks).
#include <mpi.h>

#include <algorithm>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "collectives/alltoallv.h"
#include "collectives/barrier.h"
#include "common/bench_util.h"

using namespace isthmus;

namespace {


// size of part i of n points cut into c nearly equal parts
long long part(long long n, int c, int i) { return n / c + (i < n % c ? 1 : 0); }

struct Step {
  MPI_Comm comm;
  std::vector<int> sc, sd, rc, rd;
  size_t send_total() const { return size_t(sd.back() + sc.back()); }
  size_t recv_total() const { return size_t(rd.back() + rc.back()); }
  Step inverse() const { return Step{comm, rc, rd, sc, sd}; }
};

// counts[q] = elements this rank sends to member q (send) and receives from q (recv)
Step make_step(MPI_Comm comm, const std::vector<long long>& send, const std::vector<long long>& recv) {
  Step s{comm, {}, {}, {}, {}};
  long long so = 0, ro = 0;
  for (size_t q = 0; q < send.size(); ++q) {
    if (send[q] > 2147483647LL || recv[q] > 2147483647LL || so + send[q] > 2147483647LL ||
        ro + recv[q] > 2147483647LL)
      throw std::runtime_error("a rank's slab exceeds 2^31 elements: use more ranks or a smaller grid");
    s.sc.push_back(int(send[q])), s.sd.push_back(int(so)), so += send[q];
    s.rc.push_back(int(recv[q])), s.rd.push_back(int(ro)), ro += recv[q];
  }
  return s;
}


}  // namespace

int main(int argc, char** argv) {
  auto [world, rank, size] = bench::init(argc, argv);
  bench::Args args(argc, argv);
  const long long nx = args.integer("nx", 1440), ny = args.integer("ny", 720), nz = args.integer("nz", 128);
  const int fields = int(args.integer("fields", 1));
  const int reps = int(args.integer("reps", 5));
  const int warmup = int(args.integer("warmup", 1));  // 0 in simulation: it is deterministic
  // cx splits z in (b) and (c), so cx <= nz: cx is the smaller factor.
  int cx = 1;
  for (int a = 1; a * a <= size; ++a)
    if (size % a == 0 && a <= nz) cx = a;
  cx = int(args.integer("cx", cx));
  int cy = int(args.integer("cy", size / std::max(1, cx)));
  const auto algorithms = bench::Args::split(args.get("algorithms", "burst,bruck,ring:1,ring:4,pairwise,native"));
  int rc = 0;
  try {
    if (cx * cy != size || cx > nx || cx > ny || cx > nz || cy > nx || cy > ny || reps < 1 || fields < 1)
      throw std::runtime_error("need cx * cy = ranks (" + std::to_string(cx) + " x " + std::to_string(cy) +
                               " != " + std::to_string(size) + ") and cx, cy <= nx, ny, nz");
    const int px = rank % cx, py = rank / cx;
    MPI_Comm row, col;  // row: same py, cx members ranked by px; col: same px, ranked by py
    MPI_Comm_split(world, py, px, &row);
    MPI_Comm_split(world, px, py, &col);
    const long long f = fields;
    std::vector<long long> s1(cx), r1(cx), s2(cy), r2(cy), s3(cx), r3(cx);
    for (int q = 0; q < cx; ++q) {  // (a) -> (b) over the row
      s1[q] = f * part(nx, cx, px) * part(ny, cy, py) * part(nz, cx, q);
      r1[q] = f * part(nx, cx, q) * part(ny, cy, py) * part(nz, cx, px);
    }
    for (int q = 0; q < cy; ++q) {  // (b) -> (c) over the column
      s2[q] = f * part(nx, cy, q) * part(ny, cy, py) * part(nz, cx, px);
      r2[q] = f * part(nx, cy, py) * part(ny, cy, q) * part(nz, cx, px);
    }
    for (int q = 0; q < cx; ++q) {  // (c) -> (d) over the row
      s3[q] = f * part(nx, cy, py) * part(ny, cx, q) * part(nz, cx, px);
      r3[q] = f * part(nx, cy, py) * part(ny, cx, px) * part(nz, cx, q);
    }
    std::vector<Step> steps;
    steps.push_back(make_step(row, s1, r1));
    steps.push_back(make_step(col, s2, r2));
    steps.push_back(make_step(row, s3, r3));
    for (int i = 2; i >= 0; --i) steps.push_back(steps[size_t(i)].inverse());
    size_t cap = 0;
    for (const Step& s : steps) cap = std::max({cap, s.send_total(), s.recv_total()});
    double* a = static_cast<double*>(bench::alloc_field(cap * sizeof(double)));
    double* b = static_cast<double*>(bench::alloc_field(cap * sizeof(double)));
    if (!bench::buffers_are_shared())
      for (size_t i = 0; i < cap; ++i) a[i] = double(i), b[i] = 0;
    for (const std::string& name : algorithms) {
      AlltoallvOptions o;
      std::string alg = name.substr(0, name.find(':'));
      o.algorithm = parse_alltoallv_algorithm(alg.c_str());
      if (name.find(':') != std::string::npos) o.ring_k = std::stoi(name.substr(name.find(':') + 1));
      trace::Counters counters;
      o.counters = &counters;
      std::vector<std::unique_ptr<AlltoallvPlan>> plans;
      for (const Step& s : steps)
        plans.push_back(std::make_unique<AlltoallvPlan>(s.comm, s.sc.data(), s.sd.data(), s.rc.data(),
                                                        s.rd.data(), int(sizeof(double)), o));
      auto transform = [&] {
        for (size_t i = 0; i < plans.size(); ++i) plans[i]->execute(i % 2 ? b : a, i % 2 ? a : b);
      };
      for (int w = 0; w < warmup; ++w) transform();  // warm-up: connections, first-touch
      counters = trace::Counters{};
      bench::Stats st = bench::time_collective_with(world, reps, transform, [world] { isthmus::dissemination_barrier(world); }).wall;
      long long mine[2] = {counters.messages_sent / reps, counters.bytes_sent / reps}, most[2] = {0, 0};
      MPI_Reduce(mine, most, 2, MPI_LONG_LONG, MPI_MAX, 0, world);
      std::string chosen = alltoallv_algorithm_name(plans[0]->algorithm());
      if (rank == 0) {
        bench::Json j;
        j.str("bench", "transpose").integer("ranks", size).integer("cx", cx).integer("cy", cy);
        j.integer("nx", nx).integer("ny", ny).integer("nz", nz).integer("fields", fields);
        j.str("algorithm", name).str("algorithm_used", chosen);
        if (plans[0]->algorithm() == AlltoallvAlgorithm::Ring) j.integer("k", plans[0]->ring_k());
        j.integer("alltoallvs", int(plans.size())).stats("", st);
        j.integer("max_msgs_per_rank", most[0]).integer("max_bytes_per_rank", most[1]);
        j.boolean("shared_buffers", bench::buffers_are_shared());
        j.print();
      }
    }
    bench::free_field(a);
    bench::free_field(b);
    MPI_Comm_free(&row);
    MPI_Comm_free(&col);
  } catch (const std::exception& e) {
    if (rank == 0) std::fprintf(stderr, "bench_transpose: %s\n", e.what());
    rc = 1;
  }
  MPI_Finalize();
  return rc;
}
