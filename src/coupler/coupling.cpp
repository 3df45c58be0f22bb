#include "coupler/coupling.h"

#include <algorithm>
#include <cstring>

#include "base/error.h"
#include "remap/scrip_weights.h"

namespace isthmus::coupler {

namespace {

std::string where(const Entry& e) {
  std::string names;
  for (size_t k = 0; k < e.src_names.size(); ++k) names += (k ? ":" : "") + e.src_names[k];
  return "entry " + names + " (line " + std::to_string(e.line) + ")";
}

remap::Side side_of(MapSide s) {
  switch (s) {
    case MapSide::Src: return remap::Side::Src;
    case MapSide::Dst: return remap::Side::Dst;
    case MapSide::Auto: break;
  }
  return remap::Side::Auto;
}

}  // namespace

Coupling::Coupling(MPI_Comm comm, CouplingEnds ends, int64_t runtime, const std::string& run_dir,
                   Method method)
    : ends_(std::move(ends)), runtime_(runtime), nfields_(static_cast<int>(ends_.levels.size())) {
  const Entry& e = *ends_.entry;
  const IndexList* src = ends_.src ? &ends_.src_points : nullptr;
  const IndexList* dst = ends_.dst ? &ends_.dst_points : nullptr;
  std::string weights;
  if (e.mapping) weights = e.mapping->file;
  else if (e.scripr) weights = scripr_file_name(e);
  if (!weights.empty()) {
    // OASIS looks the file up in the run directory; so do we (an absolute name is kept)
    const std::string path = weights[0] == '/' ? weights : run_dir + "/" + weights;
    remap::WeightsExpect expect;
    expect.src_grid_size = ends_.src_grid_size;
    expect.dst_grid_size = ends_.dst_grid_size;
    remap::WeightsInfo info;
    Agreement read_agreement;
    remap::LinkSlab slab = remap::read_scrip_weights(comm, path, expect, &info, &read_agreement);
    remap::MappingOptions mo;
    mo.side = e.mapping ? side_of(e.mapping->side) : remap::Side::Auto;
    mo.method = method;
    mo.nlevels = ends_.levels;
    Agreement agreement;
    mapping_ = std::make_unique<remap::Mapping>(comm, src, dst, info.src_grid_size,
                                                info.dst_grid_size,
                                                remap::links_of(slab, info.num_wgts), mo, agreement);
  } else {
    Agreement agreement;
    agreement.check([&] {
      if (ends_.src_grid_size != ends_.dst_grid_size)
        fail(ISTHMUS_ERR_CONFIG, where(e), ": the source grid has ", ends_.src_grid_size,
             " points and the destination grid ", ends_.dst_grid_size,
             ", but the entry has no MAPPING or SCRIPR transformation");
    });
    xmap_ = std::make_shared<Xmap>(comm, src, dst, XmapOptions{}, agreement);
    std::vector<FieldSpec> specs;
    for (int l : ends_.levels) specs.push_back({DataType::Double, l});
    Agreement redist_agreement;
    redist_ = std::make_unique<Redist>(xmap_, specs, method, redist_agreement, comm);
  }
  for (int f = 0; f < nfields_; ++f) {
    if (ends_.src) {
      const size_t n = static_cast<size_t>(ends_.src_points.size()) * ends_.levels[f];
      acc_.emplace_back(e.loctrans.value_or(TimeOp::Instant), n);
      send_.emplace_back(n, 0.0);
    }
    if (ends_.dst)
      recv_.emplace_back(static_cast<size_t>(ends_.dst_points.size()) * ends_.levels[f], 0.0);
  }
  put_date_.assign(nfields_, -1);
  got_date_.assign(nfields_, -1);
}

remap::Side Coupling::side() const { return mapping_ ? mapping_->info().side : remap::Side::Dst; }

void Coupling::start(const double* const* src) {
  if (mapping_) {
    mapping_->start(src);
  } else {
    std::vector<void*> out;
    for (auto& r : recv_) out.push_back(r.data());
    redist_->start(0, reinterpret_cast<const void* const*>(src), ends_.dst ? out.data() : nullptr);
  }
  pending_ = true;
}

void Coupling::finish(double* const* dst) {
  pending_ = false;
  if (mapping_) mapping_->finish(dst);
  else redist_->wait();
}

void Coupling::check_date(const char* what, int date, int& last) const {
  const Entry& e = *ends_.entry;
  if (date < 0) fail(ISTHMUS_ERR_ARG, what, " of ", where(e), " at date ", date, ": dates start at 0");
  if (runtime_ > 0 && date >= runtime_)
    fail(ISTHMUS_ERR_ARG, what, " of ", where(e), " at date ", date,
         ": beyond the run's end ($RUNTIME ", runtime_, " s)");
  if (date < last)
    fail(ISTHMUS_ERR_ARG, what, " of ", where(e), " at date ", date, " after date ", last,
         ": the model runs backwards");
  last = date;
}

int Coupling::put(int k, int date, const void* data, DataType type) {
  const Entry& e = *ends_.entry;
  check_date("put", date, last_put_);
  if (!data && ends_.src_points.size() > 0)
    fail(ISTHMUS_ERR_ARG, "put of ", e.src_names[k], " at date ", date,
         ": the array is NULL but this rank holds ", ends_.src_points.size(), " points");
  if (type == DataType::Float) acc_[k].add(static_cast<const float*>(data));
  else acc_[k].add(static_cast<const double*>(data));
  const int64_t lagged = static_cast<int64_t>(date) + e.lag;
  const bool instant = e.loctrans.value_or(TimeOp::Instant) == TimeOp::Instant;
  if (lagged % e.period != 0) return instant ? kOk : kLocTrans;
  put_date_[k] = static_cast<int>(lagged);
  for (int f = 0; f < nfields_; ++f)
    if (put_date_[f] != lagged) return kWaitgroup;  // the entry travels once all its fields are put
  for (int f = 0; f < nfields_; ++f) {
    acc_[f].result(send_[f].data());
    acc_[f].reset();
    if (e.blasold)
      for (double& v : send_[f]) v = e.blasold->scale * v + e.blasold->add;
  }
  // beyond the run's end nothing is sent: a lagged value belongs to the next run's restart
  if (runtime_ > 0 && lagged >= runtime_)
    fail(ISTHMUS_ERR_ARG, "put of ", where(e), " at date ", date, " with LAG=", e.lag,
         ": the lagged date ", lagged, " reaches the end of the run ($RUNTIME ", runtime_,
         "); writing it to the restart file is not supported yet");
  if (pending_) {
    // a rank of both sides finishes at get
    if (ends_.dst)
      fail(ISTHMUS_ERR_ARG, "put of ", where(e), " at date ", date,
           ": the previous coupling has not been received by its get on these ranks yet");
    finish(nullptr);  // the previous coupling, if still in flight
  }
  std::vector<const double*> src;
  for (auto& s : send_) src.push_back(s.data());
  start(src.data());  // the send completes at the next put or at termination
  return e.status == FieldStatus::Expout ? kSentOut : kSent;
}

int Coupling::get(int k, int date, void* data, DataType type) {
  const Entry& e = *ends_.entry;
  check_date("get", date, last_get_);
  if (!data && ends_.dst_points.size() > 0)
    fail(ISTHMUS_ERR_ARG, "get of ", e.dst_names[k], " at date ", date,
         ": the array is NULL but this rank holds ", ends_.dst_points.size(), " points");
  if (date % e.period != 0) return kOk;
  if (received_date_ != date) {
    // the first field of the entry to be got at this date receives them all
    if (!ends_.src) start(nullptr);
    else if (!pending_)
      fail(ISTHMUS_ERR_ARG, "get of ", e.dst_names[k], " at date ", date, " in component ",
           ends_.dst_component, ": its put (", e.src_names[k],
           ") has not been called for this date on these ranks; with source and destination on "
           "the same ranks the put must come first (or use LAG)");
    std::vector<double*> dst;
    for (auto& r : recv_) dst.push_back(r.data());
    finish(dst.data());
    for (auto& r : recv_)
      if (e.blasnew)
        for (double& v : r) v = e.blasnew->scale * v + e.blasnew->add;
    received_date_ = date;
  }
  got_date_[k] = date;
  const std::vector<double>& r = recv_[k];
  if (type == DataType::Float) {
    float* out = static_cast<float*>(data);
    for (size_t i = 0; i < r.size(); ++i) out[i] = static_cast<float>(r[i]);
  } else {
    std::copy(r.begin(), r.end(), static_cast<double*>(data));
  }
  return e.status == FieldStatus::Expout ? kRecvOut : kRecvd;
}

void Coupling::complete() {
  if (pending_ && !ends_.dst) finish(nullptr);
}

}  // namespace isthmus::coupler
