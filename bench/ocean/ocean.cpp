// A BENCH-like ocean mini-app (seed 004 sect. 2.2 and 3): a flat-bottom box, periodic channel
// or tripolar fold; each time step runs the forward-backward free-surface time splitting of
// sect. 3.1 (M sub-steps) and a 3-D tracer update, with the sub-step communications done
//   naive:     comm 1 on the fluxes, comm 2 on the sea-surface height, comm 3 on the velocities
//   optimized: comm 1 delayed and grouped with comm 2, then comm 3  (2 exchanges per sub-step)
// and straight open boundaries along the domain edges (sect. 3.2) handled
//   --obc comm:  NEMO's former way, one more exchange after the boundary condition (per sub-step)
//   --obc local: computed from interior points only, no communication
//   --obc none:  no open boundary
//
//   bench_ocean [--nx 256 --ny 192 | --sub-nx 32 --sub-ny 32] [--nz 10] [--steps 12]
//               [--substeps 50] [--variant naive|optimized] [--obc none|comm|local]
//               [--boundary closed|periodic|biperiodic|fold-t|fold-f] [--method auto|...]
//               [--model-dt 3600] [--report PREFIX] [--compute real|model]
//               [--flops-2d 60] [--flops-3d 200] [--cores-per-node 0]
//
// Prints one JSON object: time per step (slowest rank per step; median, mean, min, max over the
// steps after the first), SYPD-like throughput (model-dt / median step / 365), messages and
// exchanges per step, and the time per step spent waiting in halo exchanges and in the global
// collective (communication report, first and last steps excluded; max and mean over ranks). --report writes NEMO's communication report (PREFIX.txt, PREFIX.json).
// --compute model (the default under SMPI) replaces the loops by smpi_execute_flops with
// flops-2d per point per sub-step and flops-3d per point and level per step, so that simulated
// compute time is deterministic; real MPI always computes.
// --cores-per-node C numbers the subdomains so that each node's C consecutive ranks hold a
// near-square patch (decomp's place_on_nodes, seed 004 sect. 4); 0 keeps NEMO's line order.
#include <mpi.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/bench_util.h"
#include "decomp/decomposition.h"
#include "halo/halo_exchange.h"
#include "trace/comm_report.h"

using namespace isthmus;
using halo::HaloExchange;
using halo::HaloField;
using halo::PointType;

namespace {

halo::HaloMethod parse_method(const std::string& s) {
  if (s == "auto") return halo::HaloMethod::Auto;
  if (s == "two-sweep") return halo::HaloMethod::TwoSweep;
  if (s == "single-sweep") return halo::HaloMethod::SingleSweep;
  if (s == "neighbor") return halo::HaloMethod::Neighbor;
  throw std::runtime_error("unknown method '" + s + "'");
}

// One 2-D or 3-D field with a halo of 1.
struct Grid {
  int64_t ni = 0, nj = 0, ei = 0, ej = 0;
  int64_t at(int64_t i, int64_t j) const { return (j + 1) * ei + i + 1; }
  int64_t plane() const { return ei * ej; }
};

// A time-stepped model instance; all state here (no globals: SMPI shares them between ranks).
class Ocean {
 public:
  Ocean(MPI_Comm comm, const decomp::Decomposition& d, int nz, int substeps, bool optimized,
        const std::string& obc, halo::HaloMethod method, bool model_compute, double flops2d,
        double flops3d)
      : comm_(comm), nz_(nz), m_(substeps), optimized_(optimized), obc_(obc),
        model_(model_compute), flops2d_(flops2d), flops3d_(flops3d), report_(comm) {
    int rank = 0;
    MPI_Comm_rank(comm, &rank);
    active_ = rank < d.nranks();
    if (active_) box_ = d.box(rank);
    g_.ni = box_.ni;
    g_.nj = box_.nj;
    g_.ei = box_.ni + 2;
    g_.ej = box_.nj + 2;
    west_ = active_ && box_.i0 == 0 && d.boundary() == decomp::Boundary::Closed;
    east_ = active_ && box_.i0 + box_.ni == d.nx() && d.boundary() == decomp::Boundary::Closed;
    south_ = active_ && box_.j0 == 0;
    north_ = active_ && box_.j0 + box_.nj == d.ny() && (d.boundary() == decomp::Boundary::Closed ||
                                                        d.boundary() == decomp::Boundary::PeriodicEW);
    const HaloField T{PointType::T, 1, 1, DataType::Double};
    const HaloField U{PointType::U, 1, -1, DataType::Double};
    const HaloField V{PointType::V, 1, -1, DataType::Double};
    const HaloField T3{PointType::T, nz, 1, DataType::Double};
    auto make = [&](std::vector<HaloField> f) {
      auto x = std::make_unique<HaloExchange>(comm, d, 1, std::move(f), method);
      x->trace().set_on(true);
      return x;
    };
    flux_ = make({U, V});
    ssh_ = make({T});
    flux_ssh_ = make({U, V, T});
    uv_ = make({U, V});
    bdy_ = make({T, U, V});
    ts_ = make({T3, T3});
    const int64_t halo_pts = 2 * (box_.ni + box_.nj) + 4;
    s_flux_ = report_.site("dyn_spg_ts:flux (comm 1)", trace::CommReport::Kind::Halo, 2, false, halo_pts);
    s_ssh_ = report_.site("dyn_spg_ts:ssh (comm 2)", trace::CommReport::Kind::Halo, 1, false, halo_pts);
    s_flux_ssh_ = report_.site("dyn_spg_ts:flux+ssh (comm 1+2)", trace::CommReport::Kind::Halo, 3, false, halo_pts);
    s_uv_ = report_.site("dyn_spg_ts:uv (comm 3)", trace::CommReport::Kind::Halo, 2, false, halo_pts);
    s_bdy_ = report_.site("bdy_dyn2d:ssh+uv", trace::CommReport::Kind::Halo, 3, false, halo_pts);
    s_ts_ = report_.site("tra_nxt:ts", trace::CommReport::Kind::Halo, 2, true, halo_pts);
    s_max_ = report_.site("stp_ctl:max|ssh|", trace::CommReport::Kind::Collective);

    const size_t p2 = static_cast<size_t>(g_.plane()) * sizeof(double);
    for (auto* f : {&eta_[0], &eta_[1], &eta_[2], &eta_new_, &u_[0], &u_[1], &u_[2], &v_[0],
                    &v_[1], &v_[2], &u_new_, &v_new_, &fu_, &fv_, &eta_h_, &u_h_, &v_h_})
      *f = static_cast<double*>(bench::alloc_field(p2));
    for (auto* f : {&t_, &s_, &t_new_, &s_new_})
      *f = static_cast<double*>(bench::alloc_field(p2 * nz));
    if (!model_ && active_) init();
    // Halos consistent with the boundary conditions from the start, as a model's initialisation
    // does (outside the time steps: not in the report's counts).
    for (int l = 0; l < 3; ++l) {
      exchange(*ssh_, s_ssh_, {eta_[l]});
      exchange(*uv_, s_uv_, {u_[l], v_[l]});
    }
    exchange(*ts_, s_ts_, {t_, s_});
  }
  ~Ocean() {
    for (double* f : {eta_[0], eta_[1], eta_[2], eta_new_, u_[0], u_[1], u_[2], v_[0], v_[1],
                      v_[2], u_new_, v_new_, fu_, fv_, eta_h_, u_h_, v_h_, t_, s_, t_new_, s_new_})
      bench::free_field(f);
  }

  // One model time step; returns this rank's wall time for it.
  double step() {
    report_.begin_step();
    double t0 = MPI_Wtime();
    for (int m = 0; m < m_; ++m) substep();
    tracers();
    double mx = model_ ? 0.0 : local_max_ssh(), gmx = 0;
    double c0 = MPI_Wtime();
    MPI_Allreduce(&mx, &gmx, 1, MPI_DOUBLE, MPI_MAX, comm_);
    report_.add(s_max_, MPI_Wtime() - c0);
    double dt = MPI_Wtime() - t0;
    report_.end_step();
    return dt;
  }

  int64_t messages_sent() const {
    int64_t n = 0;
    for (auto* x : {&flux_, &ssh_, &flux_ssh_, &uv_, &bdy_, &ts_})
      n += (*x)->trace().counters().messages_sent;
    return n;
  }
  int64_t exchanges() const {
    int64_t n = 0;
    for (auto* x : {&flux_, &ssh_, &flux_ssh_, &uv_, &bdy_, &ts_})
      n += (*x)->trace().counters().exchanges;
    return n;
  }
  trace::CommReport& report() { return report_; }
  double checksum() const {
    double s = 0;
    if (!model_ && active_)
      for (int64_t j = 0; j < g_.nj; ++j)
        for (int64_t i = 0; i < g_.ni; ++i) s += eta_[0][g_.at(i, j)];
    return s;
  }

 private:
  void exchange(HaloExchange& x, int site, std::vector<double*> f) {
    double t0 = MPI_Wtime();
    x.exchange(reinterpret_cast<void* const*>(f.data()));
    report_.add(site, MPI_Wtime() - t0);
  }

  void init() {
    for (int64_t j = -1; j <= g_.nj; ++j)
      for (int64_t i = -1; i <= g_.ni; ++i) {
        const double x = static_cast<double>(box_.i0 + i), y = static_cast<double>(box_.j0 + j);
        for (int l = 0; l < 3; ++l) {
          eta_[l][g_.at(i, j)] = 0.01 * std::sin(0.05 * x) * std::cos(0.07 * y);
          u_[l][g_.at(i, j)] = 0.001 * std::cos(0.03 * y);
          v_[l][g_.at(i, j)] = 0.001 * std::sin(0.02 * x);
        }
        for (int k = 0; k < nz_; ++k) {
          t_[k * g_.plane() + g_.at(i, j)] = 10.0 - 0.1 * k + 1e-6 * (x + 1000 * y);
          s_[k * g_.plane() + g_.at(i, j)] = 35.0 + 1e-7 * (x + 1000 * y);
        }
      }
  }

  void substep() {
    const double beta = 0.281105, delta = 0.614, gam = 0.085, eps = 0.015;
    const double H = 4000.0, de = 1.0e5, dts = 60.0, g = 9.81, f = 1.0e-4, r = 0.0;
    Grid G = g_;
    if (!model_ && active_) {
      // Extrapolation to m+1/2 everywhere (halos are valid from the previous sub-step).
      for (int64_t o = 0; o < G.plane(); ++o) {
        eta_h_[o] = (1.5 + beta) * eta_[0][o] - (0.5 + 2 * beta) * eta_[1][o] + beta * eta_[2][o];
        u_h_[o] = (1.5 + beta) * u_[0][o] - (0.5 + 2 * beta) * u_[1][o] + beta * u_[2][o];
        v_h_[o] = (1.5 + beta) * v_[0][o] - (0.5 + 2 * beta) * v_[1][o] + beta * v_[2][o];
      }
      // Fluxes where both T neighbours are known: every U point but the eastern ghost column,
      // every V point but the northern ghost row (Fig. 3).
      for (int64_t j = -1; j <= G.nj; ++j)
        for (int64_t i = -1; i < G.ni; ++i)
          fu_[G.at(i, j)] = (H + 0.5 * (eta_h_[G.at(i, j)] + eta_h_[G.at(i + 1, j)])) * u_h_[G.at(i, j)] * de;
      for (int64_t j = -1; j < G.nj; ++j)
        for (int64_t i = -1; i <= G.ni; ++i)
          fv_[G.at(i, j)] = (H + 0.5 * (eta_h_[G.at(i, j)] + eta_h_[G.at(i, j + 1)])) * v_h_[G.at(i, j)] * de;
    } else {
      model_flops(flops2d_ * 0.4);
    }
    if (!optimized_) exchange(*flux_, s_flux_, {fu_, fv_});  // communication 1
    if (!model_ && active_) {
      for (int64_t j = 0; j < G.nj; ++j)
        for (int64_t i = 0; i < G.ni; ++i) {
          const int64_t o = G.at(i, j);
          eta_new_[o] = eta_[0][o] - dts * ((fu_[o] - fu_[G.at(i - 1, j)]) + (fv_[o] - fv_[G.at(i, j - 1)])) / (de * de);
        }
    } else {
      model_flops(flops2d_ * 0.2);
    }
    if (optimized_) exchange(*flux_ssh_, s_flux_ssh_, {fu_, fv_, eta_new_});  // 1 and 2 grouped
    else exchange(*ssh_, s_ssh_, {eta_new_});                                 // communication 2
    if (!model_ && active_) {
      // eta' on all points, then the velocities (eta' of the east/north T neighbour).
      for (int64_t o = 0; o < G.plane(); ++o)
        eta_h_[o] = delta * eta_new_[o] + (1 - delta - gam - eps) * eta_[0][o] + gam * eta_[1][o] + eps * eta_[2][o];
      for (int64_t j = 0; j < G.nj; ++j)
        for (int64_t i = 0; i < G.ni; ++i) {
          const int64_t o = G.at(i, j);
          u_new_[o] = u_[0][o] + dts * (-(1 - r) * g * (eta_h_[G.at(i + 1, j)] - eta_h_[o]) / de + f * v_h_[o]);
          v_new_[o] = v_[0][o] + dts * (-(1 - r) * g * (eta_h_[G.at(i, j + 1)] - eta_h_[o]) / de - f * u_h_[o]);
        }
      if (obc_ != "none") open_boundaries();
    } else {
      model_flops(flops2d_ * 0.4);
    }
    exchange(*uv_, s_uv_, {u_new_, v_new_});  // communication 3
    if (obc_ == "comm") exchange(*bdy_, s_bdy_, {eta_new_, u_new_, v_new_});
    // Rotate the time levels: pointers only; exchanges take their arrays at each call.
    std::swap(eta_[2], eta_[1]);
    std::swap(eta_[1], eta_[0]);
    std::swap(eta_[0], eta_new_);
    std::swap(u_[2], u_[1]);
    std::swap(u_[1], u_[0]);
    std::swap(u_[0], u_new_);
    std::swap(v_[2], v_[1]);
    std::swap(v_[1], v_[0]);
    std::swap(v_[0], v_new_);
  }

  // Neumann condition on straight open boundaries along the domain edges: each boundary point
  // takes its inward neighbour's value, which the subdomain holds. It is applied along the
  // halo too (tangential direction), so that no communication is needed afterwards (seed 004
  // sect. 3.2.1): the result equals the naive variant's exchange after the condition.
  void open_boundaries() {
    Grid G = g_;
    for (int64_t j = -1; j <= G.nj; ++j) {
      if (west_ && G.ni > 1) eta_new_[G.at(0, j)] = eta_new_[G.at(1, j)];
      if (east_ && G.ni > 1) eta_new_[G.at(G.ni - 1, j)] = eta_new_[G.at(G.ni - 2, j)];
    }
    for (int64_t i = -1; i <= G.ni; ++i) {
      if (south_ && G.nj > 1) eta_new_[G.at(i, 0)] = eta_new_[G.at(i, 1)];
      if (north_ && G.nj > 1) eta_new_[G.at(i, G.nj - 1)] = eta_new_[G.at(i, G.nj - 2)];
    }
  }

  void tracers() {
    Grid G = g_;
    if (!model_ && active_) {
      const double kh = 0.01, dt = 0.1;
      for (int k = 0; k < nz_; ++k) {
        const int64_t base = k * G.plane();
        for (int q = 0; q < 2; ++q) {
          const double* a = (q == 0 ? t_ : s_) + base;
          double* b = (q == 0 ? t_new_ : s_new_) + base;
          for (int64_t j = 0; j < G.nj; ++j)
            for (int64_t i = 0; i < G.ni; ++i) {
              const int64_t o = G.at(i, j);
              const double lap = a[G.at(i + 1, j)] + a[G.at(i - 1, j)] + a[G.at(i, j + 1)] +
                                 a[G.at(i, j - 1)] - 4 * a[o];
              const double adv = u_[0][o] * (a[o] - a[G.at(i - 1, j)]) + v_[0][o] * (a[o] - a[G.at(i, j - 1)]);
              b[o] = a[o] + dt * (kh * lap - adv);
            }
        }
      }
    } else {
      model_flops(flops3d_ * nz_);
    }
    exchange(*ts_, s_ts_, {t_new_, s_new_});
    std::swap(t_, t_new_);
    std::swap(s_, s_new_);
  }

  double local_max_ssh() const {
    double m = 0;
    if (active_)
      for (int64_t j = 0; j < g_.nj; ++j)
        for (int64_t i = 0; i < g_.ni; ++i) m = std::max(m, std::fabs(eta_[0][g_.at(i, j)]));
    return m;
  }

  void model_flops(double per_point) {
#ifdef ISTHMUS_SMPI
    if (active_ && per_point > 0) smpi_execute_flops(per_point * static_cast<double>(g_.ni * g_.nj));
#else
    (void)per_point;
#endif
  }

  MPI_Comm comm_;
  int nz_, m_;
  bool optimized_;
  std::string obc_;
  bool model_;
  double flops2d_, flops3d_;
  bool active_ = false, west_ = false, east_ = false, south_ = false, north_ = false;
  decomp::Box box_;
  Grid g_;
  std::unique_ptr<HaloExchange> flux_, ssh_, flux_ssh_, uv_, bdy_, ts_;
  trace::CommReport report_;
  int s_flux_, s_ssh_, s_flux_ssh_, s_uv_, s_bdy_, s_ts_, s_max_;
  double* eta_[3];
  double* u_[3];
  double* v_[3];
  double *eta_new_, *u_new_, *v_new_, *fu_, *fv_, *eta_h_, *u_h_, *v_h_;
  double *t_, *s_, *t_new_, *s_new_;
};

}  // namespace

int main(int argc, char** argv) {
  auto [comm, rank, size] = bench::init(argc, argv);
  bench::Args args(argc, argv);
  int rc = 0;
  try {
    const int nz = static_cast<int>(args.integer("nz", 10));
    const int steps = static_cast<int>(args.integer("steps", 12));
    const int substeps = static_cast<int>(args.integer("substeps", 50));
    const std::string variant = args.get("variant", "optimized");
    const std::string obc = args.get("obc", "none");
    const std::string bname = args.get("boundary", "closed");
    const double model_dt = static_cast<double>(args.integer("model-dt", 3600));
#ifdef ISTHMUS_SMPI
    const std::string compute = args.get("compute", "model");
#else
    const std::string compute = "real";
#endif
    if (nz < 1 || steps < 3 || substeps < 1 || (variant != "naive" && variant != "optimized") ||
        (obc != "none" && obc != "comm" && obc != "local") ||
        (compute != "real" && compute != "model"))
      throw std::runtime_error("bad arguments: nz " + std::to_string(nz) + ", steps " +
                               std::to_string(steps) + " (>= 3), substeps " +
                               std::to_string(substeps) + ", variant '" + variant + "', obc '" +
                               obc + "', compute '" + compute + "'");
    if (obc != "none" && bname != "closed")
      throw std::runtime_error("open boundaries need --boundary closed (got '" + bname + "')");
    decomp::Options o;
    o.boundary = decomp::parse_boundary(bname);
    o.halo = 1;
    long long nx = args.integer("nx", 256), ny = args.integer("ny", 192);
    const long long snx = args.integer("sub-nx", 0), sny = args.integer("sub-ny", 0);
    decomp::Decomposition d = decomp::Decomposition::optimal(nx, ny, size, o);
    if (snx > 0 && sny > 0) {
      // BENCH's negative nn_isize/nn_jsize: every subdomain snx x sny, the grid follows.
      int nj = 1;
      for (int a = 1; a * a <= size; ++a)
        if (size % a == 0) nj = a;
      int ni = size / nj;
      nx = snx * ni;
      ny = sny * nj;
      d = decomp::Decomposition::regular(nx, ny, ni, nj, o);
    }
    // Ranks onto nodes: NEMO's line order (consecutive ranks along i, so a node of 16 holds a
    // 16 x 1 strip whose every north and south message leaves the node), or with
    // --cores-per-node C near-square patches of C subdomains per node (seed 004 sect. 4).
    const int cores_per_node = static_cast<int>(args.integer("cores-per-node", 0));
    if (cores_per_node < 0) throw std::runtime_error("--cores-per-node must be >= 0");
    std::array<int, 2> node_tile{d.ni(), 1};
    if (cores_per_node > 0) node_tile = d.place_on_nodes(cores_per_node);
    Ocean model(comm, d, nz, substeps, variant == "optimized", obc,
                parse_method(args.get("method", "auto")), compute == "model",
                static_cast<double>(args.integer("flops-2d", 60)),
                static_cast<double>(args.integer("flops-3d", 200)));
    std::vector<double> local;
    local.reserve(steps);
    int64_t msgs0 = 0, ex0 = 0;
    for (int s = 0; s < steps; ++s) {
      if (s == 1) {
        msgs0 = model.messages_sent();
        ex0 = model.exchanges();
      }
      local.push_back(model.step());
    }
    long long msgs = model.messages_sent() - msgs0, total_msgs = 0;
    long long exch = model.exchanges() - ex0, max_exch = 0;
    MPI_Reduce(&msgs, &total_msgs, 1, MPI_LONG_LONG, MPI_SUM, 0, comm);
    MPI_Reduce(&exch, &max_exch, 1, MPI_LONG_LONG, MPI_MAX, 0, comm);
    std::vector<double> worst(steps);
    MPI_Reduce(local.data(), worst.data(), steps, MPI_DOUBLE, MPI_MAX, 0, comm);
    double sum = model.checksum(), gsum = 0;
    MPI_Reduce(&sum, &gsum, 1, MPI_DOUBLE, MPI_SUM, 0, comm);
    // Waiting time per counted step (the report's first and last steps excluded).
    const int counted = std::max(1, model.report().counted_steps());
    double wait[2] = {model.report().wait_seconds() / counted,
                      model.report().global_wait_seconds() / counted};
    double wait_max[2] = {0, 0}, wait_sum[2] = {0, 0};
    MPI_Reduce(wait, wait_max, 2, MPI_DOUBLE, MPI_MAX, 0, comm);
    MPI_Reduce(wait, wait_sum, 2, MPI_DOUBLE, MPI_SUM, 0, comm);
    std::string prefix = args.get("report", "");
    if (!prefix.empty()) model.report().write(prefix);
    // The code the figures belong to (bench/ocean/simulate.sh sets it), as bench_coupling records.
    const char* commit = std::getenv("ISTHMUS_GIT_COMMIT");
    if (rank == 0) {
      std::vector<double> counted(worst.begin() + 1, worst.end());  // the first step warms up
      bench::Stats st = bench::stats(counted);
      const double sypd = st.median > 0 ? model_dt / st.median / 365.0 : 0.0;
      bench::Json()
          .str("bench", "ocean")
          .integer("ranks", size)
          .integer("subdomains", d.nranks())
          .integer("nx", nx)
          .integer("ny", ny)
          .integer("nz", nz)
          .integer("ni", d.ni())
          .integer("nj", d.nj())
          .str("boundary", bname)
          .str("variant", variant)
          .integer("cores_per_node", cores_per_node)
          .str("node_tile", cores_per_node > 0 ? std::to_string(node_tile[0]) + "x" +
                                                     std::to_string(node_tile[1])
                                               : "line")
          .str("obc", obc)
          .str("compute", compute)
          .integer("substeps", substeps)
          .integer("steps", steps)
          .stats("step_", st)
          .num("sypd", sypd)
          .num("model_dt_s", model_dt)
          .num("messages_per_step", static_cast<double>(total_msgs) / (steps - 1))
          .num("exchanges_per_step", static_cast<double>(max_exch) / (steps - 1))
          .num("halo_wait_per_step_max_s", wait_max[0])
          .num("halo_wait_per_step_mean_s", wait_sum[0] / size)
          .num("global_wait_per_step_max_s", wait_max[1])
          .num("checksum", gsum)
          .boolean("shared_buffers", bench::buffers_are_shared())
          .str("git_commit", commit ? commit : "unknown")
          .print();
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_ocean: rank %d: %s\n", rank, e.what());
    rc = 1;
  }
  MPI_Finalize();
  return rc;
}
