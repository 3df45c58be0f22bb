#include "transfer/redist.h"

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

Redist::Redist(std::shared_ptr<const Xmap> xmap, std::vector<FieldSpec> fields, Method method)
    : xmap_(std::move(xmap)), fields_(std::move(fields)),
      method_(method == Method::Auto ? Method::Adaptive : method),
      trace_(trace::enabled_by_environment()) {
  // Checks that depend only on arguments every rank passes alike, so that all ranks fail
  // together before any collective call.
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
      double v = o.fill_value;
      bool ok = fields_[f].type == DataType::Double ||
                (fields_[f].type == DataType::Float &&
                 (!std::isfinite(v) || std::fabs(v) <= std::numeric_limits<float>::max())) ||
                (fields_[f].type == DataType::Int32 && v == std::trunc(v) &&
                 v >= std::numeric_limits<int32_t>::min() && v <= std::numeric_limits<int32_t>::max());
      if (!ok)
        fail(ISTHMUS_ERR_ARG, "fill value ", v, " cannot be represented in field ", f, " of type ",
             type_name(fields_[f].type));
    }
  }
  int mi = static_cast<int>(method_);
  if (mi < 1 || mi > 5) fail(ISTHMUS_ERR_ARG, "unknown transfer method ", mi);

  // Each redistribution has its own communicator, so its messages cannot meet another's.
  ISTHMUS_MPI(MPI_Comm_dup(xmap_->comm(), &comm_));
  try {
    const Schedule& fw = xmap_->forward();
    const Schedule& rv = xmap_->reverse();
    // Buffer A: forward send / reverse receive; buffer B: forward receive / reverse send.
    buf_a_.resize(std::max(fw.send_points(), rv.recv_points()) * point_bytes_);
    buf_b_.resize(std::max(fw.recv_points(), rv.send_points()) * point_bytes_);
    setup(forward_, fw, buf_a_.data(), buf_b_.data(), 1);
    setup(reverse_, rv, buf_b_.data(), buf_a_.data(), 2);
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

void Redist::setup(Direction& d, const Schedule& s, char* sbuf, char* rbuf, int tag) {
  d.schedule = &s;
  // Messages lie back to back in peer order, each count * point_bytes_ long.
  auto lay_out = [this](const std::vector<PeerRuns>& peers, std::vector<int>& ranks,
                        std::vector<size_t>& bytes, std::vector<size_t>& offsets) {
    size_t off = 0;
    for (const PeerRuns& p : peers) {
      ranks.push_back(p.peer);
      bytes.push_back(p.count * point_bytes_);
      offsets.push_back(off);
      off += p.count * point_bytes_;
    }
  };
  lay_out(s.sends, d.layout.send_peers, d.layout.send_bytes, d.layout.send_offset);
  lay_out(s.recvs, d.layout.recv_peers, d.layout.recv_bytes, d.layout.recv_offset);
  d.executor = make_executor(method_, comm_, tag, d.layout, sbuf, rbuf);
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
  if (pending_)
    fail(ISTHMUS_ERR_ARG, what, ": an exchange started earlier has not been waited for");
}

void Redist::run(Direction& d, const void* const* in, void* const* out, const char* what) {
  check_arrays(d, in, out, what);
  double t0 = trace_.now();
  FieldPacker packer(fields_, *d.schedule, in, out, xmap_->options(), &d == &forward_);
  d.executor->run(packer, trace_);
  count_exchange(t0);
}

void Redist::start(bool reverse, const void* const* in, void* const* out) {
  Direction& d = reverse ? reverse_ : forward_;
  check_arrays(d, in, out, reverse ? "start of a reverse exchange" : "start of a forward exchange");
  pending_t0_ = trace_.now();
  pending_out_.assign(fields_.size(), nullptr);  // capacity kept: no allocation after the first
  if (out)
    for (size_t f = 0; f < fields_.size(); ++f) pending_out_[f] = out[f];
  FieldPacker packer(fields_, *d.schedule, in, pending_out_.data(), xmap_->options(), &d == &forward_);
  d.executor->start(packer, trace_);
  pending_ = &d;
}

void Redist::wait() {
  if (!pending_) fail(ISTHMUS_ERR_ARG, "wait: no exchange was started");
  Direction& d = *pending_;
  pending_ = nullptr;
  FieldPacker packer(fields_, *d.schedule, nullptr, pending_out_.data(), xmap_->options(),
                     &d == &forward_);
  d.executor->finish(packer, trace_);
  count_exchange(pending_t0_);
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
