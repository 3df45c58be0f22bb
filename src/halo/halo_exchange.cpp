#include "halo/halo_exchange.h"

#include <algorithm>
#include <climits>
#include <cstring>
#include <map>
#include <optional>

#include "base/comm.h"
#include "base/error.h"
#include "transfer/message_status.h"
#include "xmap/sparse_exchange.h"

namespace isthmus::halo {

using decomp::Boundary;
using decomp::Decomposition;

const char* point_name(PointType p) {
  switch (p) {
    case PointType::T: return "T";
    case PointType::U: return "U";
    case PointType::V: return "V";
    case PointType::F: return "F";
  }
  return "?";
}

const char* method_name(HaloMethod m) {
  switch (m) {
    case HaloMethod::Auto: return "auto";
    case HaloMethod::TwoSweep: return "two-sweep";
    case HaloMethod::SingleSweep: return "single-sweep";
    case HaloMethod::Neighbor: return "neighbor";
  }
  return "unknown";
}

const char* method_rule() {
  return "auto = single-sweep: one round of messages straight from each halo cell's owner "
         "(8 peers for a thin halo), so an exchange costs one latency instead of the two "
         "dependent rounds of two-sweep; seed 003 (reply to review) finds both equally fast "
         "for wide halos, and seed 004 shows the number of communication rounds is what limits "
         "scaling";
}

namespace {

int64_t mod(int64_t a, int64_t n) {
  int64_t r = a % n;
  return r < 0 ? r + n : r;
}

}  // namespace

// The fold is a half-turn about the pivot. In doubled coordinates (T point (i, j) at (2i, 2j),
// U at (2i+1, 2j), V at (2i, 2j+1), F at (2i+1, 2j+1)) the pivot is (0, 2ny-2) for a T pivot
// and (-1, 2ny-1) for an F pivot, so the mirror of index (i, j) is
//   i' = px - i - ox (mod nx),  j' = py - j - oy
// with (ox, oy) the type's half-cell offsets and (px, py) the pivot in doubled units.
SourcePoint source_point(const Decomposition& d, PointType p, int64_t i, int64_t j) {
  const Boundary b = d.boundary();
  const int64_t nx = d.nx(), ny = d.ny();
  SourcePoint s;
  if (decomp::wraps_i(b)) i = mod(i, nx);
  else if (i < 0 || i >= nx) return s;
  if (decomp::wraps_j(b)) j = mod(j, ny);
  else if (j < 0) return s;
  if (decomp::has_fold(b)) {
    const int64_t ox = (p == PointType::U || p == PointType::F) ? 1 : 0;
    const int64_t oy = (p == PointType::V || p == PointType::F) ? 1 : 0;
    const int64_t px = b == Boundary::FoldT ? 0 : -1;
    const int64_t py = b == Boundary::FoldT ? 2 * ny - 2 : 2 * ny - 1;
    const int64_t mj = py - j - oy;
    if (mj < j || (mj == j && mod(px - i - ox, nx) < i)) {
      s.folded = true;
      s.i = mod(px - i - ox, nx);
      s.j = mj;
      if (mj < 0 || mj >= ny)
        fail(ISTHMUS_ERR_ARG, "halo: row ", j, " folds onto row ", mj, ", outside the ", ny,
             "-row grid: the halo is too wide for the north fold");
      s.exists = true;
      return s;
    }
  }
  if (j >= ny) return s;
  s.exists = true;
  s.i = i;
  s.j = j;
  return s;
}

namespace {

size_t elem_size(DataType t) { return type_size(t); }

// Offset in a rank's local plane of global point (gi, gj), if the rank's array holds it: in
// its interior, or (allow_halo) in its halo, periodic images included. -1 if not.
int64_t local_offset(const Decomposition& d, const decomp::Box& b, int h, int64_t gi,
                     int64_t gj, bool allow_halo) {
  const int64_t lj = gj - b.j0;
  const int64_t ext_i = b.ni + 2 * static_cast<int64_t>(h);
  if (lj < 0 || lj >= b.nj) return -1;
  const int64_t d0 = gi - b.i0;
  int64_t cand[3] = {d0, d0, d0};
  int nc = 1;
  if (decomp::wraps_i(d.boundary())) {
    cand[1] = d0 - d.nx();
    cand[2] = d0 + d.nx();
    nc = 3;
  }
  for (int k = 0; k < nc; ++k)
    if (cand[k] >= 0 && cand[k] < b.ni) return (lj + h) * ext_i + cand[k] + h;
  if (allow_halo)
    for (int k = 0; k < nc; ++k)
      if (cand[k] >= -h && cand[k] < b.ni + h) return (lj + h) * ext_i + cand[k] + h;
  return -1;
}

HaloExchange::Runs to_runs(const std::vector<int64_t>& offs) {
  HaloExchange::Runs runs;
  for (size_t k = 0; k < offs.size();) {
    HaloExchange::Run r{offs[k], 1, 1};
    size_t m = k + 1;
    if (m < offs.size() && (offs[m] - offs[k] == 1 || offs[m] - offs[k] == -1)) {
      r.step = offs[m] - offs[k];
      while (m < offs.size() && offs[m] - offs[m - 1] == r.step) {
        ++r.length;
        ++m;
      }
    }
    runs.push_back(r);
    k = m;
  }
  return runs;
}

std::vector<HaloExchange::CopyRun> to_copy_runs(const std::vector<std::pair<int64_t, int64_t>>& v) {
  std::vector<HaloExchange::CopyRun> runs;
  for (size_t k = 0; k < v.size();) {
    HaloExchange::CopyRun r{v[k].first, v[k].second, 1, 1};
    size_t m = k + 1;
    if (m < v.size() && v[m].first == v[k].first + 1 &&
        (v[m].second - v[k].second == 1 || v[m].second - v[k].second == -1)) {
      r.src_step = v[m].second - v[k].second;
      while (m < v.size() && v[m].first == v[m - 1].first + 1 &&
             v[m].second - v[m - 1].second == r.src_step) {
        ++r.length;
        ++m;
      }
    }
    runs.push_back(r);
    k = m;
  }
  return runs;
}

template <typename T>
void negate_runs(T* a, const HaloExchange::Runs& runs) {
  for (const auto& r : runs)
    for (int64_t n = 0, o = r.start; n < r.length; ++n, o += r.step) a[o] = -a[o];
}

// Packs and unpacks one phase's messages for the fields of one exchange.
class HaloPacker final : public Packer {
 public:
  HaloPacker(const HaloExchange::Phase& ph, const std::vector<HaloField>& fields, int64_t plane,
             void* const* arrays, double fill)
      : ph_(ph), fields_(fields), plane_(plane), arrays_(arrays), fill_(fill) {}

  void pack(size_t i, char* msg) override {
    const auto& pl = ph_.sends[i];
    for (size_t f = 0; f < fields_.size(); ++f) {
      const size_t es = elem_size(fields_[f].type);
      const auto& runs = pl.by_type[static_cast<int>(fields_[f].point)];
      const char* a = static_cast<const char*>(arrays_[f]);
      for (int k = 0; k < fields_[f].nlevels; ++k) {
        const char* lev = a + k * plane_ * es;
        for (const auto& r : runs) {
          if (r.step == 1) {
            std::memcpy(msg, lev + r.start * es, r.length * es);
            msg += r.length * es;
          } else {
            for (int64_t n = 0, o = r.start; n < r.length; ++n, o += r.step, msg += es)
              std::memcpy(msg, lev + o * es, es);
          }
        }
      }
    }
  }

  void unpack(size_t i, const char* msg) override {
    const auto& pl = ph_.recvs[i];
    for (size_t f = 0; f < fields_.size(); ++f) {
      const size_t es = elem_size(fields_[f].type);
      const auto& runs = pl.by_type[static_cast<int>(fields_[f].point)];
      char* a = static_cast<char*>(arrays_[f]);
      for (int k = 0; k < fields_[f].nlevels; ++k) {
        char* lev = a + k * plane_ * es;
        for (const auto& r : runs) {
          if (r.step == 1) {
            std::memcpy(lev + r.start * es, msg, r.length * es);
            msg += r.length * es;
          } else {
            for (int64_t n = 0, o = r.start; n < r.length; ++n, o += r.step, msg += es)
              std::memcpy(lev + o * es, msg, es);
          }
        }
      }
    }
  }

  void local() override {
    if (!arrays_) return;  // a rank without a subdomain: nothing to copy or fill
    for (size_t f = 0; f < fields_.size(); ++f) {
      const int t = static_cast<int>(fields_[f].point);
      switch (fields_[f].type) {
        case DataType::Double: local_typed(static_cast<double*>(arrays_[f]), f, t); break;
        case DataType::Float: local_typed(static_cast<float*>(arrays_[f]), f, t); break;
        case DataType::Int32: local_typed(static_cast<int32_t*>(arrays_[f]), f, t); break;
      }
    }
  }

 private:
  template <typename T>
  void local_typed(T* a, size_t f, int t) {
    const T fill = static_cast<T>(fill_);
    for (int k = 0; k < fields_[f].nlevels; ++k) {
      T* lev = a + k * plane_;
      for (const auto& c : ph_.copies[t])
        for (int64_t n = 0, s = c.src; n < c.length; ++n, s += c.src_step) lev[c.dst + n] = lev[s];
      for (const auto& r : ph_.fills[t])
        for (int64_t n = 0, o = r.start; n < r.length; ++n, o += r.step) lev[o] = fill;
    }
  }

  const HaloExchange::Phase& ph_;
  const std::vector<HaloField>& fields_;
  int64_t plane_;
  void* const* arrays_;
  double fill_;
};

// The values a hash of the arguments is built from, as the 32-bit ints hash_values takes.
void push64(std::vector<int>& v, int64_t x) {
  v.push_back(static_cast<int>(static_cast<uint32_t>(static_cast<uint64_t>(x))));
  v.push_back(static_cast<int>(static_cast<uint32_t>(static_cast<uint64_t>(x) >> 32)));
}

int rank_in(MPI_Comm comm) {
  int r = 0;
  ISTHMUS_MPI(MPI_Comm_rank(comm, &r));
  return r;
}

uint64_t fields_hash(const std::vector<HaloField>& fields) {
  std::vector<int> v;
  for (const HaloField& f : fields) {
    v.push_back(static_cast<int>(f.point));
    v.push_back(f.nlevels);
    v.push_back(f.sign);
    v.push_back(static_cast<int>(f.type));
  }
  return hash_values(v.data(), static_cast<int64_t>(v.size()));
}

uint64_t bits_hash(double x) {
  uint64_t bits = 0;
  std::memcpy(&bits, &x, sizeof bits);
  std::vector<int> v;
  push64(v, static_cast<int64_t>(bits));
  return hash_values(v.data(), static_cast<int64_t>(v.size()));
}

// Everything of a layout the set-up depends on: sizes, boundary, halo, block starts, and
// which rank holds which block (land removal and node placement).
uint64_t layout_hash(const Decomposition& d) {
  std::vector<int> v;
  push64(v, d.nx());
  push64(v, d.ny());
  v.push_back(d.ni());
  v.push_back(d.nj());
  v.push_back(static_cast<int>(d.boundary()));
  v.push_back(d.halo());
  for (int64_t s : d.i_starts()) push64(v, s);
  for (int64_t s : d.j_starts()) push64(v, s);
  for (int bj = 0; bj < d.nj(); ++bj)
    for (int bi = 0; bi < d.ni(); ++bi) v.push_back(d.rank_of_block(bi, bj));
  return hash_values(v.data(), static_cast<int64_t>(v.size()));
}

}  // namespace

HaloExchange::HaloExchange(MPI_Comm comm, const Decomposition& d, int halo_width,
                           std::vector<HaloField> fields, HaloMethod method, double fill_value)
    : h_(halo_width), method_(method), fields_(std::move(fields)), fill_(fill_value) {
  Agreement a;
  init(a, comm, &d, method);
}

HaloExchange::HaloExchange(Agreement& agreement, MPI_Comm comm, const Decomposition* d,
                           int halo_width, std::vector<HaloField> fields, HaloMethod method,
                           double fill_value)
    : h_(halo_width), method_(method), fields_(std::move(fields)), fill_(fill_value) {
  init(agreement, comm, d, method);
}

HaloExchange::~HaloExchange() {
  phases_.clear();
  if (comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
}

void HaloExchange::check_arguments(MPI_Comm comm, const Decomposition& d,
                                   HaloMethod method) const {
  if (h_ < 1) fail(ISTHMUS_ERR_ARG, "halo: halo width ", h_, " < 1");
  if (fields_.empty()) fail(ISTHMUS_ERR_ARG, "halo: no field to exchange");
  for (size_t f = 0; f < fields_.size(); ++f) {
    const HaloField& x = fields_[f];
    if (x.nlevels < 1) fail(ISTHMUS_ERR_ARG, "halo: field ", f, " has ", x.nlevels, " levels");
    if (x.sign != 1 && x.sign != -1)
      fail(ISTHMUS_ERR_ARG, "halo: field ", f, " has sign ", x.sign, " (must be 1 or -1)");
    if (static_cast<int>(x.point) < 0 || static_cast<int>(x.point) > 3)
      fail(ISTHMUS_ERR_ARG, "halo: field ", f, " has point type ", static_cast<int>(x.point),
           " (0 T, 1 U, 2 V, 3 F)");
    if (static_cast<int>(x.type) < 0 || static_cast<int>(x.type) > 2)
      fail(ISTHMUS_ERR_ARG, "halo: field ", f, " has type ", static_cast<int>(x.type),
           " (0 double, 1 float, 2 int32)");
  }
  if (static_cast<int>(method) < 0 || static_cast<int>(method) > 3)
    fail(ISTHMUS_ERR_ARG, "halo: method ", static_cast<int>(method),
         " (0 auto, 1 two-sweep, 2 single-sweep, 3 neighbor)");
#ifdef ISTHMUS_SMPI
  if (method == HaloMethod::Neighbor)
    fail(ISTHMUS_ERR_ARG, "halo: method 'neighbor' is not available under SimGrid SMPI 3.32, which "
         "does not implement neighbourhood collectives; use 'two-sweep', 'single-sweep' or 'auto'");
#endif
  int size = 0;
  ISTHMUS_MPI(MPI_Comm_size(comm, &size));
  if (size < d.nranks())
    fail(ISTHMUS_ERR_ARG, "halo: the decomposition has ", d.nranks(),
         " subdomains but the communicator only ", size, " ranks");
  // The widest halo the layout allows. With a north fold, the halo rows above the top
  // subdomains mirror rows below; past the limit they would mirror rows below the grid.
  const int64_t nx = d.nx(), ny = d.ny();
  if (decomp::has_fold(d.boundary())) {
    bool top = false;
    for (int bi = 0; bi < d.ni(); ++bi) top = top || d.rank_of_block(bi, d.nj() - 1) >= 0;
    for (size_t f = 0; top && f < fields_.size(); ++f) {
      const PointType p = fields_[f].point;
      const int64_t oy = (p == PointType::V || p == PointType::F) ? 1 : 0;
      const int64_t py = d.boundary() == Boundary::FoldT ? 2 * ny - 2 : 2 * ny - 1;
      const int64_t widest = py - oy + 1 - ny;  // row ny - 1 + widest folds onto row 0
      if (h_ > widest)
        fail(ISTHMUS_ERR_ARG, "halo: halo width ", h_, " is too wide for the north fold: row ",
             py - oy + 1, " of field ", f, " (", point_name(p), " points) folds onto row -1, "
             "outside the ", ny, "-row grid; at most ", widest, " for this field");
    }
  }
  // Wider than the grid, a halo only repeats points; the bound also keeps the set-up, which
  // visits every cell of the local arrays, proportional to the grid.
  const int64_t widest = std::min(nx, ny);
  if (h_ > widest)
    fail(ISTHMUS_ERR_ARG, "halo: halo width ", h_, " is wider than the ", nx, " x ", ny,
         " grid: at most ", widest);
  // The local arrays, in bytes, must be addressable (sizes computed without overflow).
  if (rank_in(comm) < d.nranks()) {
    const decomp::Box b = d.box(rank_in(comm));
    int64_t plane = 0, total = 0;
    if (__builtin_mul_overflow(b.ni + 2 * int64_t{h_}, b.nj + 2 * int64_t{h_}, &plane))
      plane = -1;
    for (size_t f = 0; f < fields_.size() && plane >= 0; ++f) {
      int64_t bytes = 0;
      if (__builtin_mul_overflow(plane, int64_t{fields_[f].nlevels}, &bytes) ||
          __builtin_mul_overflow(bytes, static_cast<int64_t>(type_size(fields_[f].type)), &bytes) ||
          __builtin_add_overflow(total, bytes, &total))
        fail(ISTHMUS_ERR_ARG, "halo: the local arrays of this rank's ", b.ni, " x ", b.nj,
             " subdomain with a halo of ", h_, " would exceed 2^63 bytes at field ", f, " (",
             fields_[f].nlevels, " levels)");
    }
    if (plane < 0)
      fail(ISTHMUS_ERR_ARG, "halo: the local arrays of this rank's ", b.ni, " x ", b.nj,
           " subdomain with a halo of ", h_, " would exceed 2^63 elements");
  }
}

void HaloExchange::init(Agreement& a, MPI_Comm comm, const Decomposition* d, HaloMethod method) {
  a.check([&] {
    if (comm == MPI_COMM_NULL) fail(ISTHMUS_ERR_ARG, "halo: the communicator is MPI_COMM_NULL");
    if (!d) fail(ISTHMUS_ERR_ARG, "halo: the layout is NULL");
    check_arguments(comm, *d, method);
  });
  if (!a.failed()) {
    a.match("halo_width", h_);
    a.match("nfields", static_cast<int64_t>(fields_.size()));
    a.match_hash("fields (point, nlevels, sign and type of each)", fields_hash(fields_));
    a.match("method", static_cast<int64_t>(method));
    a.match_hash("fill_value", bits_hash(fill_));
    a.match_hash("layout (nx, ny, ni, nj, boundary, halo, block starts and ranks)",
                 layout_hash(*d));
  }
  if (method_ == HaloMethod::Auto) method_ = HaloMethod::SingleSweep;
  trace_.set_on(trace::enabled_by_environment());
  build(a, comm, d, method_);
}

// Set-up in two parts around the one reduction: first everything this rank can compute alone
// (where its halo cells come from; the only part that could fail on one rank), inside the
// agreement; then, with the arguments agreed on every rank, the exchange of requests and the
// executors, which cannot fail for a reason one rank alone would see.
void HaloExchange::build(Agreement& a, MPI_Comm comm, const Decomposition* dp, HaloMethod m) {
  const int nphase = m == HaloMethod::TwoSweep ? 2 : 1;
  // What this rank needs: per phase, per source peer, per point type, the global points in
  // the order of its receive positions.
  struct Want {
    std::array<std::vector<int64_t>, 4> points;  // (i, j) pairs
    std::array<std::vector<int64_t>, 4> offsets; // where they land here
  };
  std::vector<std::map<int, Want>> wants(nphase);
  std::vector<std::array<std::vector<std::pair<int64_t, int64_t>>, 4>> copies(nphase);
  std::vector<std::array<std::vector<int64_t>, 4>> fills(nphase);
  a.check([&] {
    const Decomposition& d = *dp;
    ISTHMUS_MPI(MPI_Comm_rank(comm, &rank_));
    has_box_ = rank_ < d.nranks();
    if (has_box_) box_ = d.box(rank_);
    ext_i_ = box_.ni + 2 * static_cast<int64_t>(h_);
    ext_j_ = box_.nj + 2 * static_cast<int64_t>(h_);
    phases_.resize(nphase);
    bool used[4] = {false, false, false, false};
    for (const auto& f : fields_) used[static_cast<int>(f.point)] = true;
    std::array<std::vector<int64_t>, 4> folded;
    if (has_box_) {
      const decomp::Box& b = box_;
      for (int t = 0; t < 4; ++t) {
        if (!used[t]) continue;
        const PointType pt = static_cast<PointType>(t);
        for (int64_t lj = -h_; lj < b.nj + h_; ++lj)
          for (int64_t li = -h_; li < b.ni + h_; ++li) {
            const bool inner_row = lj >= 0 && lj < b.nj;
            const bool interior = inner_row && li >= 0 && li < b.ni;
            const int64_t gi = b.i0 + li, gj = b.j0 + lj;
            // Interior points are their own source unless the fold overwrites them (top rows).
            if (interior && !(decomp::has_fold(d.boundary()) && gj >= d.ny() - 2)) continue;
            const SourcePoint s = source_point(d, pt, gi, gj);
            if (!s.exists) continue;
            if (interior && !s.folded) continue;
            const int64_t off = (lj + h_) * ext_i_ + li + h_;
            const int phase = (nphase == 2 && !inner_row) ? 1 : 0;
            int from = d.owner(s.i, s.j);
            if (phase == 1) {
              // Two-sweep: the rank owning this row's image inside our own columns already holds
              // the point after the east-west sweep (interior or halo): it relays the corner.
              const int64_t cli = std::min<int64_t>(std::max<int64_t>(li, 0), b.ni - 1);
              const SourcePoint sc = source_point(d, pt, b.i0 + cli, gj);
              const int q = sc.exists ? d.owner(sc.i, sc.j) : -1;
              if (q >= 0 && local_offset(d, d.box(q), h_, s.i, s.j, true) >= 0) from = q;
            }
            // A fill value keeps its sign, whoever relays it.
            if (s.folded && d.owner(s.i, s.j) >= 0) folded[t].push_back(off);
            if (from < 0) {
              fills[phase][t].push_back(off);
            } else if (from == rank_) {
              const int64_t src = local_offset(d, b, h_, s.i, s.j, phase == 1);
              if (src < 0)
                fail(ISTHMUS_ERR_INTERNAL, "halo: own point (", s.i, ", ", s.j, ") not local");
              copies[phase][t].push_back({off, src});
            } else {
              Want& w = wants[phase][from];
              w.points[t].push_back(s.i);
              w.points[t].push_back(s.j);
              w.offsets[t].push_back(off);
            }
          }
      }
    }
    for (int t = 0; t < 4; ++t) folded_[t] = to_runs(folded[t]);
  });
  // The one reduction: every rank passed its checks and the arguments agree, or every rank
  // throws here.
  a.conclude(comm);
  const Decomposition& d = *dp;

  comm_ = duplicate(comm);
  try {
    for (int ph = 0; ph < nphase; ++ph) {
      Phase& P = phases_[ph];
      std::vector<Message> out;
      for (auto& [peer, w] : wants[ph]) {
        Message msg{peer, {}};
        PeerLists pl;
        pl.peer = peer;
        for (int t = 0; t < 4; ++t) {
          if (w.offsets[t].empty()) continue;
          msg.data.push_back(t);
          msg.data.push_back(static_cast<int64_t>(w.offsets[t].size()));
          msg.data.insert(msg.data.end(), w.points[t].begin(), w.points[t].end());
          pl.by_type[t] = to_runs(w.offsets[t]);
          pl.count[t] = static_cast<int64_t>(w.offsets[t].size());
        }
        out.push_back(std::move(msg));
        P.recvs.push_back(std::move(pl));
      }
      std::vector<Message> in = sparse_exchange(comm_, 7300 + ph, out);
      for (const Message& msg : in) {
        PeerLists pl;
        pl.peer = msg.rank;
        for (size_t k = 0; k < msg.data.size();) {
          const int t = static_cast<int>(msg.data[k]);
          const int64_t n = msg.data[k + 1];
          k += 2;
          std::vector<int64_t> offs(n);
          for (int64_t e = 0; e < n; ++e, k += 2) {
            offs[e] = has_box_ ? local_offset(d, box_, h_, msg.data[k], msg.data[k + 1], ph == 1)
                               : -1;
            if (offs[e] < 0)
              fail(ISTHMUS_ERR_INTERNAL, "halo: rank ", msg.rank, " asked for point (", msg.data[k],
                   ", ", msg.data[k + 1], ") that this rank does not hold");
          }
          pl.by_type[t] = to_runs(offs);
          pl.count[t] = n;
        }
        P.sends.push_back(std::move(pl));
      }
      for (int t = 0; t < 4; ++t) {
        P.copies[t] = to_copy_runs(copies[ph][t]);
        P.fills[t] = to_runs(fills[ph][t]);
      }
      // Message layout: each field's cells of the peer's lists for its point type, level by level.
      // Every message starts with the status word of docs/errors.md.
      auto bytes_of = [&](const PeerLists& pl) {
        size_t bytes = kStatusBytes;
        for (const auto& f : fields_)
          bytes += static_cast<size_t>(pl.count[static_cast<int>(f.point)]) * f.nlevels *
                   elem_size(f.type);
        return bytes;
      };
      MessageLayout& L = P.layout;
      for (const auto& pl : P.sends) {
        L.send_peers.push_back(pl.peer);
        L.send_offset.push_back(L.send_total());
        L.send_bytes.push_back(bytes_of(pl));
      }
      for (const auto& pl : P.recvs) {
        L.recv_peers.push_back(pl.peer);
        L.recv_offset.push_back(L.recv_total());
        L.recv_bytes.push_back(bytes_of(pl));
      }
      P.send_buffer.assign(L.send_total() + 1, 0);
      P.recv_buffer.assign(L.recv_total() + 1, 0);
      // The transfer layer's executors: p2p (plain requests from fixed tables, so SMPI charges
      // each message its overhead) or the neighbourhood collective.
      P.executor = make_executor(m == HaloMethod::Neighbor ? Method::Neighbor : Method::P2P, comm_,
                                 7310 + ph, L, P.send_buffer.data(), P.recv_buffer.data());
    }
  } catch (...) {
    phases_.clear();
    MPI_Comm_free(&comm_);
    throw;
  }
}

void HaloExchange::exchange(void* const* arrays) {
  // A misused exchange on this rank: it still takes part (docs/errors.md), sending its code.
  int code = ISTHMUS_OK;
  size_t null_field = 0;
  if (has_box_) {
    if (!arrays) {
      code = ISTHMUS_ERR_ARG;
    } else {
      for (size_t f = 0; f < fields_.size() && code == ISTHMUS_OK; ++f)
        if (!arrays[f]) {
          code = ISTHMUS_ERR_ARG;
          null_field = f;
        }
    }
  }
  const double t0 = trace_.now();
  std::optional<Error> peer_error;
  int relay = ISTHMUS_OK;  // a failure learnt in the first sweep, passed on in the second
  for (Phase& p : phases_) {
    HaloPacker packer(p, fields_, plane_size(), arrays, fill_);
    const int send_code = code != ISTHMUS_OK ? code : relay;
    StatusPacker status(send_code != ISTHMUS_OK ? nullptr : &packer, send_code,
                        p.layout.recv_peers);
    p.executor->run(status, trace_);
    if (send_code == ISTHMUS_OK && status.peer_failure()) {
      relay = status.peer_failure()->code;
      try {
        status.throw_if_peer_failed("halo exchange");
      } catch (const Error& e) {
        peer_error = e;
      }
    }
  }
  if (code != ISTHMUS_OK) {
    if (!arrays) fail(code, "halo: the array list is NULL");
    fail(code, "halo: the array of field ", null_field, " is NULL");
  }
  // The fold's signs are left unapplied: the halo is incomplete anyway.
  if (peer_error) throw *peer_error;
  if (has_box_)
    for (size_t f = 0; f < fields_.size(); ++f) {
      if (fields_[f].sign == 1) continue;
      const auto& runs = folded_[static_cast<int>(fields_[f].point)];
      if (runs.empty()) continue;
      for (int k = 0; k < fields_[f].nlevels; ++k) {
        const int64_t o = k * plane_size();
        switch (fields_[f].type) {
          case DataType::Double: negate_runs(static_cast<double*>(arrays[f]) + o, runs); break;
          case DataType::Float: negate_runs(static_cast<float*>(arrays[f]) + o, runs); break;
          case DataType::Int32: negate_runs(static_cast<int32_t*>(arrays[f]) + o, runs); break;
        }
      }
    }
  if (trace_.on()) {
    trace_.counters().exchanges += 1;
    trace_.counters().total_seconds += trace_.now() - t0;
  }
}

int HaloExchange::messages_per_exchange() const {
  int n = 0;
  for (const auto& p : phases_) n += static_cast<int>(p.sends.size());
  return n;
}

int HaloExchange::distinct_peers() const {
  std::vector<int> peers;
  for (const auto& p : phases_)
    for (const auto& s : p.sends) peers.push_back(s.peer);
  std::sort(peers.begin(), peers.end());
  return static_cast<int>(std::unique(peers.begin(), peers.end()) - peers.begin());
}

}  // namespace isthmus::halo
