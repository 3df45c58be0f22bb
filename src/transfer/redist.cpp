#include "transfer/redist.h"

#include <climits>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

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

namespace {

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

// Packs and unpacks the fields of one exchange direction.
class FieldPacker final : public Packer {
 public:
  FieldPacker(const std::vector<FieldSpec>& fields, const Schedule& s, const void* const* in,
              void* const* out, const XmapOptions& opt, bool fills)
      : fields_(fields), s_(s), in_(in), out_(out), opt_(opt), fills_(fills) {}

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
        if (fill) {
          switch (fields_[f].type) {
            case DataType::Double: fill_runs<double>(dst, s_.fills, opt_.fill_value); break;
            case DataType::Float: fill_runs<float>(dst, s_.fills, opt_.fill_value); break;
            case DataType::Int32: fill_runs<int32_t>(dst, s_.fills, opt_.fill_value); break;
          }
        }
      }
    }
  }

 private:
  const std::vector<FieldSpec>& fields_;
  const Schedule& s_;
  const void* const* in_;
  void* const* out_;
  const XmapOptions& opt_;
  bool fills_;
};

}  // namespace

Redist::Redist(std::shared_ptr<const Xmap> xmap, std::vector<FieldSpec> fields, Method method,
               Agreement& agreement, MPI_Comm agreement_comm)
    : xmap_(std::move(xmap)), fields_(std::move(fields)),
      method_(method == Method::Auto ? Method::Adaptive : method),
      trace_(trace::enabled_by_environment()) {
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
    lay_out(forward_, xmap_->forward());
    lay_out(reverse_, xmap_->reverse());
  });
  agreement.conclude(agreement_comm);

  // Each redistribution has its own communicator, so its messages cannot meet another's.
  ISTHMUS_MPI(MPI_Comm_dup(xmap_->comm(), &comm_));
  try {
    // Buffer A: forward send / reverse receive; buffer B: forward receive / reverse send.
    buf_a_.resize(std::max(forward_.layout.send_total(), reverse_.layout.recv_total()));
    buf_b_.resize(std::max(forward_.layout.recv_total(), reverse_.layout.send_total()));
    forward_.executor = make_executor(method_, comm_, 1, forward_.layout, buf_a_.data(), buf_b_.data());
    reverse_.executor = make_executor(method_, comm_, 2, reverse_.layout, buf_b_.data(), buf_a_.data());
  } catch (...) {
    release();
    throw;
  }
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
  forward_.executor.reset();  // executors free their requests and graph communicators first
  reverse_.executor.reset();
  if (comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
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
    } catch (const Error&) {
    }
    return Error(ISTHMUS_ERR_ARG, std::string(what) + ": an exchange started earlier had not "
                 "been waited for (it has now been completed)");
  }
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

void Redist::run(Direction& d, const void* const* in, void* const* out, const char* what) {
  if (auto e = misuse(d, in, out, what)) run_failed(d, *e, false);
  double t0 = trace_.now();
  FieldPacker packer(fields_, *d.schedule, in, out, xmap_->options(), &d == &forward_);
  StatusPacker status(&packer, 0, d.layout.recv_peers);
  d.executor->run(status, trace_);
  count_exchange(t0);
  status.throw_if_peer_failed(what);
}

void Redist::start(int direction, const void* const* in, void* const* out) {
  const bool reverse = direction == 1;
  Direction& d = reverse ? reverse_ : forward_;
  const char* what = reverse ? "start of a reverse exchange" : "start of a forward exchange";
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
  FieldPacker packer(fields_, *d.schedule, in, pending_out_.data(), xmap_->options(), &d == &forward_);
  StatusPacker status(&packer, 0, d.layout.recv_peers);
  d.executor->start(status, trace_);
  pending_failure_ = status.peer_failure();  // an executor that cannot split unpacks in start
  pending_ = &d;
}

void Redist::wait() {
  if (!pending_) fail(ISTHMUS_ERR_ARG, "wait: no exchange was started");
  Direction& d = *pending_;
  pending_ = nullptr;
  FieldPacker packer(fields_, *d.schedule, nullptr, pending_out_.data(), xmap_->options(),
                     &d == &forward_);
  StatusPacker status(&packer, 0, d.layout.recv_peers);
  status.inherit(pending_failure_);
  d.executor->finish(status, trace_);
  count_exchange(pending_t0_);
  status.throw_if_peer_failed(&d == &forward_ ? "wait of a forward exchange"
                                              : "wait of a reverse exchange");
}

void Redist::count_exchange(double t0) {
  if (trace_.on()) {
    trace_.counters().exchanges += 1;
    trace_.counters().total_seconds += trace_.now() - t0;
  }
}

void Redist::exchange(const void* const* src, void* const* dst) {
  run(forward_, src, dst, "forward exchange");
}

void Redist::exchange_reverse(const void* const* dst, void* const* src) {
  run(reverse_, dst, src, "reverse exchange");
}

}  // namespace isthmus
