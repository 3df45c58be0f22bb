#include "transfer/redist.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "base/comm.h"
#include "base/error.h"

namespace isthmus {

size_t type_size(DataType t) {
  switch (t) {
    case DataType::Double: return 8;
    case DataType::Float: return 4;
    case DataType::Int32: return 4;
  }
  return 0;
}

const char* type_name(DataType t) {
  switch (t) {
    case DataType::Double: return "double";
    case DataType::Float: return "float";
    case DataType::Int32: return "int32";
  }
  return "unknown";
}

// The reduction mode (Combine::Sum). Contribution c of the forward exchange is one value per
// (field, level) that one source rank sends for one destination point: the points of receive
// message i are contributions [msg_base[i], msg_base[i + 1]) in message order, then the points
// of the local copies. Messages are copied into `staging` as they arrive (one contiguous array
// of contributions per field and level); once all have arrived, one pass writes every
// destination point as the sum of its contributions in increasing order of source rank,
// starting from the first (a single contribution is copied exactly, -0.0 stays -0.0). The order
// is fixed at creation, so the result does not depend on when messages arrive.
struct SumStage {
  struct Single {  // points with one contribution: a run of destination positions
    int64_t dst, c, length;
  };
  std::vector<int64_t> msg_base;  // per receive message, then the first local contribution
  std::vector<Single> single;
  std::vector<int64_t> multi_dst, multi_first, multi_c;  // points with several: CSR, by rank
  std::vector<size_t> block;     // byte offset of each (field, level) in staging
  std::vector<double> staging;   // double: 8-byte alignment for every type
  std::vector<char> arrived;     // per receive message, this exchange
  size_t arrived_count = 0;

  int64_t self_base() const { return msg_base.back(); }
  char* at(size_t fl) { return reinterpret_cast<char*>(staging.data()) + block[fl]; }
  void begin() {
    std::fill(arrived.begin(), arrived.end(), 0);
    arrived_count = 0;
  }
  bool complete() const { return arrived_count == arrived.size(); }
  // Whether contribution c is here (its message arrived, or it is local).
  bool has(int64_t c) const {
    if (c >= self_base()) return true;
    size_t i = static_cast<size_t>(std::upper_bound(msg_base.begin(), msg_base.end(), c) -
                                   msg_base.begin()) - 1;
    return arrived[i] != 0;
  }
};

namespace {

std::shared_ptr<SumStage> make_sum_stage(const Schedule& s, const std::vector<FieldSpec>& fields,
                                         int me) {
  auto st = std::make_shared<SumStage>();
  struct Contribution {
    int64_t dst;
    int rank;
    int64_t c;
  };
  std::vector<Contribution> all;
  all.reserve(static_cast<size_t>(s.recv_points() + s.copy_points()));
  int64_t c = 0;
  for (const PeerRuns& p : s.recvs) {
    st->msg_base.push_back(c);
    for (const Segment& r : p.runs)
      for (int64_t k = 0; k < r.length; ++k) all.push_back({r.start + k, p.peer, c++});
  }
  st->msg_base.push_back(c);
  for (const LocalCopy& l : s.copies)
    for (int64_t k = 0; k < l.length; ++k) all.push_back({l.dst + k, me, c++});
  std::sort(all.begin(), all.end(), [](const Contribution& a, const Contribution& b) {
    return a.dst != b.dst ? a.dst < b.dst : a.rank < b.rank;
  });
  for (size_t a = 0; a < all.size();) {
    size_t b = a + 1;
    while (b < all.size() && all[b].dst == all[a].dst) ++b;
    if (b - a == 1) {
      auto& v = st->single;
      if (!v.empty() && v.back().dst + v.back().length == all[a].dst &&
          v.back().c + v.back().length == all[a].c)
        ++v.back().length;
      else
        v.push_back({all[a].dst, all[a].c, 1});
    } else {
      st->multi_dst.push_back(all[a].dst);
      st->multi_first.push_back(static_cast<int64_t>(st->multi_c.size()));
      for (size_t k = a; k < b; ++k) st->multi_c.push_back(all[k].c);
    }
    a = b;
  }
  st->multi_first.push_back(static_cast<int64_t>(st->multi_c.size()));
  size_t off = 0;
  for (const FieldSpec& f : fields)
    for (int l = 0; l < f.nlevels; ++l) {
      st->block.push_back(off);
      off += (static_cast<size_t>(c) * type_size(f.type) + 7) / 8 * 8;
    }
  st->staging.resize(off / 8);
  st->arrived.assign(s.recvs.size(), 0);
  return st;
}

// One (field, level) of the sum pass. T is the type the values are added in.
template <typename T>
void sum_level(const SumStage& st, const char* stage, char* out) {
  const T* v = reinterpret_cast<const T*>(stage);
  T* o = reinterpret_cast<T*>(out);
  const int64_t* cs = st.multi_c.data();
  const size_t groups = st.multi_dst.size();
  if (st.complete()) {
    for (const SumStage::Single& r : st.single)
      std::memcpy(o + r.dst, v + r.c, static_cast<size_t>(r.length) * sizeof(T));
    for (size_t g = 0; g < groups; ++g) {
      const int64_t* c = cs + st.multi_first[g];
      const int64_t* e = cs + st.multi_first[g + 1];
      T x = v[*c++];
      for (; c != e; ++c) x += v[*c];
      o[st.multi_dst[g]] = x;
    }
    return;
  }
  // A sender failed (its status word): the points it contributes to stay unwritten.
  for (const SumStage::Single& r : st.single)
    for (int64_t k = 0; k < r.length; ++k)
      if (st.has(r.c + k)) o[r.dst + k] = v[r.c + k];
  for (size_t g = 0; g < groups; ++g) {
    const int64_t* c = cs + st.multi_first[g];
    const int64_t* e = cs + st.multi_first[g + 1];
    if (!std::all_of(c, e, [&](int64_t k) { return st.has(k); })) continue;
    T x = v[*c++];
    for (; c != e; ++c) x += v[*c];
    o[st.multi_dst[g]] = x;
  }
}

// Copies runs of E-byte elements; E is a constant so one-element runs (round-robin
// decompositions) compile to a single move.
template <size_t E>
char* gather(char* out, const char* base, const std::vector<Segment>& runs) {
  for (const Segment& r : runs) {
    if (r.length == 1)
      std::memcpy(out, base + r.start * E, E);
    else
      std::memcpy(out, base + r.start * E, r.length * E);
    out += r.length * E;
  }
  return out;
}

template <size_t E>
const char* scatter(const char* in, char* base, const std::vector<Segment>& runs) {
  for (const Segment& r : runs) {
    if (r.length == 1)
      std::memcpy(base + r.start * E, in, E);
    else
      std::memcpy(base + r.start * E, in, r.length * E);
    in += r.length * E;
  }
  return in;
}

template <typename T>
void fill_runs(char* base, const std::vector<Segment>& runs, double value) {
  T v = static_cast<T>(value);
  T* a = reinterpret_cast<T*>(base);
  for (const Segment& r : runs)
    for (int64_t i = 0; i < r.length; ++i) a[r.start + i] = v;
}

void fill_field(DataType t, char* dst, const std::vector<Segment>& fills, double value) {
  switch (t) {
    case DataType::Double: fill_runs<double>(dst, fills, value); break;
    case DataType::Float: fill_runs<float>(dst, fills, value); break;
    case DataType::Int32: fill_runs<int32_t>(dst, fills, value); break;
  }
}

// What both packers of an exchange direction hold, and how they pack: field by field, level by
// level, run by run.
class PackerOfFields : public Packer {
 public:
  PackerOfFields(const std::vector<FieldSpec>& fields, const Schedule& s, const void* const* in,
               void* const* out, const XmapOptions& opt)
      : fields_(fields), s_(s), in_(in), out_(out), opt_(opt) {}
  void pack(size_t i, char* msg) override {
    const auto& runs = s_.sends[i].runs;
    for (size_t f = 0; f < fields_.size(); ++f) {
      const char* base = static_cast<const char*>(in_[f]);
      size_t es = type_size(fields_[f].type);
      for (int l = 0; l < fields_[f].nlevels; ++l) {
        const char* lvl = base + static_cast<size_t>(l) * s_.src_size * es;
        msg = es == 8 ? gather<8>(msg, lvl, runs) : gather<4>(msg, lvl, runs);
      }
    }
  }

 protected:
  const std::vector<FieldSpec>& fields_;
  const Schedule& s_;
  const void* const* in_;
  void* const* out_;
  const XmapOptions& opt_;
};

// Packs and unpacks the fields of one exchange direction.
class FieldPacker final : public PackerOfFields {
 public:
  FieldPacker(const std::vector<FieldSpec>& fields, const Schedule& s, const void* const* in,
              void* const* out, const XmapOptions& opt, bool fills)
      : PackerOfFields(fields, s, in, out, opt), fills_(fills) {}

  void unpack(size_t i, const char* msg) override {
    const auto& runs = s_.recvs[i].runs;
    for (size_t f = 0; f < fields_.size(); ++f) {
      char* base = static_cast<char*>(out_[f]);
      size_t es = type_size(fields_[f].type);
      for (int l = 0; l < fields_[f].nlevels; ++l) {
        char* lvl = base + static_cast<size_t>(l) * s_.dst_size * es;
        msg = es == 8 ? scatter<8>(msg, lvl, runs) : scatter<4>(msg, lvl, runs);
      }
    }
  }
  void local() override {
    bool fill = fills_ && !s_.fills.empty();
    if (s_.copies.empty() && !fill) return;
    for (size_t f = 0; f < fields_.size(); ++f) {
      size_t es = type_size(fields_[f].type);
      for (int l = 0; l < fields_[f].nlevels; ++l) {
        const char* src = s_.copies.empty() ? nullptr
                          : static_cast<const char*>(in_[f]) + static_cast<size_t>(l) * s_.src_size * es;
        char* dst = static_cast<char*>(out_[f]) + static_cast<size_t>(l) * s_.dst_size * es;
        for (const LocalCopy& c : s_.copies)
          std::memcpy(dst + c.dst * es, src + c.src * es, c.length * es);
        if (fill) fill_field(fields_[f].type, dst, s_.fills, opt_.fill_value);
      }
    }
  }
  void complete() {}  // after the last message: nothing to do

 private:
  bool fills_;
};

// The forward direction of a Combine::Sum map: packs like FieldPacker; unpack and local() stage
// the contributions, complete() sums them (SumStage). Fills as FieldPacker.
class SumPacker final : public PackerOfFields {
 public:
  SumPacker(const std::vector<FieldSpec>& fields, const Schedule& s, const void* const* in,
            void* const* out, const XmapOptions& opt, SumStage& st)
      : PackerOfFields(fields, s, in, out, opt), st_(st) {}

  void unpack(size_t i, const char* msg) override {
    st_.arrived[i] = 1;
    ++st_.arrived_count;
    const size_t base = static_cast<size_t>(st_.msg_base[i]);
    const size_t n = static_cast<size_t>(s_.recvs[i].count);
    size_t fl = 0;
    for (const FieldSpec& f : fields_) {
      const size_t es = type_size(f.type);
      for (int l = 0; l < f.nlevels; ++l) {
        std::memcpy(st_.at(fl++) + base * es, msg, n * es);
        msg += n * es;
      }
    }
  }
  void local() override {
    // Runs in start (split exchanges): the inputs may be reused afterwards, so the local
    // contributions are staged here, not read in complete().
    const size_t self = static_cast<size_t>(st_.self_base());
    size_t fl = 0;
    for (size_t f = 0; f < fields_.size(); ++f) {
      const size_t es = type_size(fields_[f].type);
      for (int l = 0; l < fields_[f].nlevels; ++l) {
        char* stage = st_.at(fl++) + self * es;
        if (!s_.copies.empty()) {
          const char* src = static_cast<const char*>(in_[f]) + static_cast<size_t>(l) * s_.src_size * es;
          for (const LocalCopy& c : s_.copies) {
            std::memcpy(stage, src + c.src * es, c.length * es);
            stage += c.length * es;
          }
        }
        if (!s_.fills.empty()) {
          char* dst = static_cast<char*>(out_[f]) + static_cast<size_t>(l) * s_.dst_size * es;
          fill_field(fields_[f].type, dst, s_.fills, opt_.fill_value);
        }
      }
    }
  }
  // After the last message: every destination point with contributions gets their sum.
  void complete() {
    if (s_.dst_size == 0) return;
    size_t fl = 0;
    for (size_t f = 0; f < fields_.size(); ++f) {
      const size_t es = type_size(fields_[f].type);
      for (int l = 0; l < fields_[f].nlevels; ++l) {
        const char* stage = st_.at(fl++);
        char* dst = static_cast<char*>(out_[f]) + static_cast<size_t>(l) * s_.dst_size * es;
        switch (fields_[f].type) {
          case DataType::Double: sum_level<double>(st_, stage, dst); break;
          case DataType::Float: sum_level<float>(st_, stage, dst); break;
          case DataType::Int32: sum_level<uint32_t>(st_, stage, dst); break;  // wraps
        }
      }
    }
  }

 private:
  SumStage& st_;
};

}  // namespace

Redist::Redist(std::shared_ptr<const Xmap> xmap, std::vector<FieldSpec> fields, Method method,
               Agreement& agreement, MPI_Comm agreement_comm)
    : xmap_(std::move(xmap)), fields_(std::move(fields)),
      method_(method == Method::Auto ? Method::Adaptive : method),
      trace_(trace::enabled_by_environment()) {
  set_up(agreement, agreement_comm, false);
}

Redist::Redist(Vouched, std::shared_ptr<const Xmap> xmap, std::vector<FieldSpec> fields, Method method)
    : xmap_(std::move(xmap)), fields_(std::move(fields)),
      method_(method == Method::Auto ? Method::Adaptive : method),
      trace_(trace::enabled_by_environment()) {
  Agreement agreement;
  set_up(agreement, MPI_COMM_NULL, true);
}

void Redist::set_up(Agreement& agreement, MPI_Comm agreement_comm, bool vouched) {
  // Everything that can fail on one rank is checked before the agreement; after it, the set-up
  // fails only on MPI errors.
  agreement.check([&] {
    if (!xmap_) fail(ISTHMUS_ERR_ARG, "the exchange map is NULL");
    if (fields_.empty()) fail(ISTHMUS_ERR_ARG, "a redistribution needs at least one field");
    for (size_t f = 0; f < fields_.size(); ++f) {
      int t = static_cast<int>(fields_[f].type);
      if (t < 0 || t > 2)
        fail(ISTHMUS_ERR_ARG, "field ", f, " has unknown type ", t,
             " (0 double, 1 float, 2 int32)");
      if (fields_[f].nlevels < 1)
        fail(ISTHMUS_ERR_ARG, "field ", f, " has ", fields_[f].nlevels, " levels; at least 1 needed");
      point_bytes_ += fields_[f].nlevels * type_size(fields_[f].type);
      const XmapOptions& o = xmap_->options();
      if (o.fill_unowned) {
        // The fill value is converted to each field's type as C converts it (1.5 becomes 1 in
        // an int32 field); a value the type cannot hold would make that conversion undefined.
        double v = o.fill_value;
        bool ok = fields_[f].type == DataType::Double ||
                  (fields_[f].type == DataType::Float &&
                   (!std::isfinite(v) || std::fabs(v) <= std::numeric_limits<float>::max())) ||
                  (fields_[f].type == DataType::Int32 && v > -2147483649.0 && v < 2147483648.0);
        if (!ok)
          fail(ISTHMUS_ERR_ARG, "fill value ", v, " is outside the range of field ", f,
               "'s type ", type_name(fields_[f].type));
      }
    }
    int mi = static_cast<int>(method_);
    if (mi < 1 || mi > 5) fail(ISTHMUS_ERR_ARG, "unknown transfer method ", mi);
    lay_out_directions();
  });
  if (vouched) agreement.conclude_vouched();
  else agreement.conclude(agreement_comm);

  // Each redistribution has its own communicator, so its messages cannot meet another's: the
  // map's own for its first one (one communicator fewer to agree on), a duplicate after.
  comm_ = xmap_->lend_comm();
  borrowed_ = comm_ != MPI_COMM_NULL;
  if (!borrowed_) comm_ = duplicate(xmap_->comm());
  try {
    make_executors(1);
  } catch (...) {
    release();
    throw;
  }
}

Redist::Redist(const Redist& base, int tag)
    : xmap_(base.xmap_), fields_(base.fields_), method_(Method::P2P), point_bytes_(base.point_bytes_),
      comm_(base.comm_), borrowed_(true), trace_(trace::enabled_by_environment()) {
  if (tag < kTwinTags || base.comm_ == MPI_COMM_NULL)
    fail(ISTHMUS_ERR_INTERNAL, "a twin redistribution needs tags from ", kTwinTags,
         " and a live base (tag ", tag, ")");
  lay_out_directions();
  trace_.set_on(base.trace_.on());
  make_executors(tag);
}

void Redist::lay_out_directions() {
  lay_out(forward_, xmap_->forward());
  lay_out(reverse_, xmap_->reverse());
  if (xmap_->options().combine == Combine::Sum) {  // every type adds (int32 wrapping)
    int me = 0;
    ISTHMUS_MPI(MPI_Comm_rank(xmap_->comm(), &me));
    forward_.sum = make_sum_stage(xmap_->forward(), fields_, me);
  }
}

void Redist::make_executors(int tag) {
  // Buffer A: forward send / reverse receive; buffer B: forward receive / reverse send.
  buf_a_.resize(std::max(forward_.layout.send_total(), reverse_.layout.recv_total()));
  buf_b_.resize(std::max(forward_.layout.recv_total(), reverse_.layout.send_total()));
  forward_.executor = make_executor(method_, comm_, tag, forward_.layout, buf_a_.data(), buf_b_.data());
  reverse_.executor = make_executor(method_, comm_, tag + 1, reverse_.layout, buf_b_.data(), buf_a_.data());
}

Redist::~Redist() {
  if (pending_) {  // complete a started exchange: its requests cannot be freed while active
    try {
      wait();
    } catch (...) {
    }
  }
  release();
}

void Redist::release() {
  const bool abandoned = (forward_.executor && forward_.executor->abandoned_sends()) ||
                         (reverse_.executor && reverse_.executor->abandoned_sends());
  forward_.executor.reset();  // executors free their requests and graph communicators first
  reverse_.executor.reset();
  // After a timed-out wait, the late messages may still arrive, and are never taken. Freeing
  // the communicator would let MPI give its context id to the next one (MPICH does so at once)
  // and those stale messages would match that communicator's receives: it is kept instead.
  if (comm_ != MPI_COMM_NULL && !timed_out_.empty() && borrowed_) xmap_->keep_lent_comm();
  if (comm_ != MPI_COMM_NULL && timed_out_.empty() && !borrowed_) MPI_Comm_free(&comm_);
  comm_ = MPI_COMM_NULL;
  if (abandoned) {
    // A timed-out wait left sends to MPI, which reads their buffer whenever the receiver posts
    // (perhaps never): the buffers are leaked rather than freed under it. It happens once, on a
    // failure that usually ends the run.
    static_cast<void>(new std::vector<char>(std::move(buf_a_)));
    static_cast<void>(new std::vector<char>(std::move(buf_b_)));
  }
}

void Redist::check_usable(const char* what) const {
  if (timed_out_.empty()) return;
  fail(ISTHMUS_ERR_ARG, what ? what : "", what ? ": " : "",
       "this redistribution is unusable: a previous wait timed out (", timed_out_, ")");
}

template <typename F>
void Redist::bounded(const char* what, F&& f) {
  check_usable(what);
  try {
    f();
  } catch (const Error& e) {
    if (e.code() != ISTHMUS_ERR_TIMEOUT || !timed_out_.empty()) throw;  // not new, or not ours
    timed_out_ = std::string(what) + ": " + e.what();
    fail(ISTHMUS_ERR_TIMEOUT, timed_out_, "; this redistribution is unusable now");
  }
}

void Redist::set_wait_timeout(double seconds, std::function<std::string(int rank)> describe_peer) {
  check_usable(nullptr);
  if (!(seconds >= 0))
    fail(ISTHMUS_ERR_ARG, "the wait timeout is ", seconds,
         " seconds; it must be positive, or 0 to wait for ever");
  const WaitTimeout timeout{std::isinf(seconds) ? 0.0 : seconds, std::move(describe_peer)};
  for (Direction* d : {&forward_, &reverse_})
    if (!d->executor->set_wait_timeout(timeout))
      fail(ISTHMUS_ERR_ARG, "method '", method_name(method_), "' cannot bound its waits (it "
           "waits inside collective calls or MPI_Waitall); a wait timeout needs method p2p (",
           static_cast<int>(Method::P2P), ")");
}

void Redist::lay_out(Direction& d, const Schedule& s) {
  d.schedule = &s;
  // Messages lie back to back in peer order: a status word, then count * point_bytes_.
  auto place = [this](const std::vector<PeerRuns>& peers, std::vector<int>& ranks,
                      std::vector<size_t>& bytes, std::vector<size_t>& offsets) {
    size_t off = 0;
    for (const PeerRuns& p : peers) {
      const size_t b = kStatusBytes + p.count * point_bytes_;
      if (b > static_cast<size_t>(INT_MAX))
        fail(ISTHMUS_ERR_ARG, "the message to or from rank ", p.peer, " would hold ", b,
             " bytes, more than MPI's int count; use fewer fields per redistribution");
      ranks.push_back(p.peer);
      bytes.push_back(b);
      offsets.push_back(off);
      off += b;
    }
  };
  place(s.sends, d.layout.send_peers, d.layout.send_bytes, d.layout.send_offset);
  place(s.recvs, d.layout.recv_peers, d.layout.recv_bytes, d.layout.recv_offset);
}

void Redist::check_arrays(const Direction& d, const void* const* in, void* const* out,
                          const char* what) const {
  const Schedule& s = *d.schedule;
  // A rank with points must pass arrays for them; a rank without may pass NULL.
  for (size_t f = 0; f < fields_.size(); ++f) {
    if (s.src_size > 0 && (!in || !in[f]))
      fail(ISTHMUS_ERR_ARG, what, ": input array of field ", f, " is NULL but this rank holds ",
           s.src_size, " points");
    if (s.dst_size > 0 && (!out || !out[f]))
      fail(ISTHMUS_ERR_ARG, what, ": output array of field ", f, " is NULL but this rank holds ",
           s.dst_size, " points");
  }
}

std::optional<Error> Redist::misuse(const Direction& d, const void* const* in, void* const* out,
                                    const char* what) {
  if (pending_) {
    // The peers have finished the pending exchange and started this one: finish it (its
    // outputs are written), then take part in this one as a failed rank.
    try {
      wait();
    } catch (const Error& e) {
      if (e.code() == ISTHMUS_ERR_TIMEOUT) throw;  // no exchange can follow a timed-out one
    }
    return Error(ISTHMUS_ERR_ARG, std::string(what) + ": an exchange started earlier had not "
                 "been waited for (it has now been completed)");
  }
  if (&d == &reverse_ && xmap_->options().forward_only)
    return Error(ISTHMUS_ERR_ARG, std::string(what) + ": the exchange map was built for the forward "
                 "direction only (XmapOptions::forward_only)");
  try {
    check_arrays(d, in, out, what);
  } catch (const Error& e) {
    return e;
  }
  return std::nullopt;
}

void Redist::run_failed(Direction& d, const Error& e, bool split) {
  StatusPacker status(nullptr, e.code(), d.layout.recv_peers);
  // The same calls as the peers make: a blocking collective does not match a non-blocking one.
  if (split) {
    d.executor->start(status, trace_);
    d.executor->finish(status, trace_);
  } else {
    d.executor->run(status, trace_);
  }
  throw e;
}

template <typename F>
void Redist::with_packer(Direction& d, const void* const* in, void* const* out, bool begin, F&& f) {
  if (d.sum) {
    if (begin) d.sum->begin();
    SumPacker packer(fields_, *d.schedule, in, out, xmap_->options(), *d.sum);
    f(packer);
  } else {
    FieldPacker packer(fields_, *d.schedule, in, out, xmap_->options(), &d == &forward_);
    f(packer);
  }
}

void Redist::run(Direction& d, const void* const* in, void* const* out, const char* what) {
  if (auto e = misuse(d, in, out, what)) run_failed(d, *e, false);
  double t0 = trace_.now();
  with_packer(d, in, out, true, [&](auto& packer) {
    StatusPacker status(&packer, 0, d.layout.recv_peers);
    d.executor->run(status, trace_);
    packer.complete();
    count_exchange(t0);
    status.throw_if_peer_failed(what);
  });
}

void Redist::start(int direction, const void* const* in, void* const* out) {
  const bool reverse = direction == 1;
  const char* what = reverse ? "start of a reverse exchange" : "start of a forward exchange";
  bounded(what, [&] { start_direction(direction, in, out, what); });
}

void Redist::start_direction(int direction, const void* const* in, void* const* out,
                             const char* what) {
  const bool reverse = direction == 1;
  Direction& d = reverse ? reverse_ : forward_;
  if (direction != 0 && direction != 1) {
    if (pending_) (void)misuse(d, in, out, what);  // finishes the pending exchange
    run_failed(d, Error(ISTHMUS_ERR_ARG, "direction is " + std::to_string(direction) +
                                             " (0 ISTHMUS_FORWARD, 1 ISTHMUS_REVERSE); this rank "
                                             "took part in the forward exchange without data"),
               true);
  }
  if (auto e = misuse(d, in, out, what)) run_failed(d, *e, true);
  pending_t0_ = trace_.now();
  pending_out_.assign(fields_.size(), nullptr);  // capacity kept: no allocation after the first
  if (out)
    for (size_t f = 0; f < fields_.size(); ++f) pending_out_[f] = out[f];
  with_packer(d, in, pending_out_.data(), true, [&](auto& packer) {
    StatusPacker status(&packer, 0, d.layout.recv_peers);
    d.executor->start(status, trace_);
    pending_failure_ = status.peer_failure();  // an executor that cannot split unpacks in start
  });
  pending_ = &d;
}

void Redist::wait() {
  const char* what = pending_ == &reverse_ ? "wait of a reverse exchange"
                                           : "wait of a forward exchange";
  bounded(what, [&] { finish_pending(); });
}

void Redist::finish_pending() {
  if (!pending_) fail(ISTHMUS_ERR_ARG, "wait: no exchange was started");
  Direction& d = *pending_;
  pending_ = nullptr;
  with_packer(d, nullptr, pending_out_.data(), false, [&](auto& packer) {
    StatusPacker status(&packer, 0, d.layout.recv_peers);
    status.inherit(pending_failure_);
    d.executor->finish(status, trace_);
    packer.complete();
    count_exchange(pending_t0_);
    status.throw_if_peer_failed(&d == &forward_ ? "wait of a forward exchange"
                                                : "wait of a reverse exchange");
  });
}

void Redist::count_exchange(double t0) {
  if (trace_.on()) {
    trace_.counters().exchanges += 1;
    trace_.counters().total_seconds += trace_.now() - t0;
  }
}

void Redist::exchange(const void* const* src, void* const* dst) {
  bounded("forward exchange", [&] { run(forward_, src, dst, "forward exchange"); });
}

void Redist::exchange_reverse(const void* const* dst, void* const* src) {
  bounded("reverse exchange", [&] { run(reverse_, dst, src, "reverse exchange"); });
}

}  // namespace isthmus
