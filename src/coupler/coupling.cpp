#include "coupler/coupling.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <limits>

#include "base/error.h"
#include "coupler/grid_files.h"
#include "coupler/scripr.h"
#include "remap/scrip_weights.h"
#include "remap/weights_gen.h"
#include "base/wait.h"

namespace isthmus::coupler {

namespace {

remap::Side side_of(MapSide s) {
  switch (s) {
    case MapSide::Src: return remap::Side::Src;
    case MapSide::Dst: return remap::Side::Dst;
    case MapSide::Auto: break;
  }
  return remap::Side::Auto;
}

// OASIS writes a grid without a 2-D shape in the namcouple as nx = its size, ny = 1.
GridShape shape_of(int64_t nx, int64_t ny, int64_t size) {
  if (nx > 0 && ny > 0) return {nx, ny};
  return {size, 1};
}

// OASIS's write_restart files: TC<date %09d>_<file> (what a coupling date sends) and
// TA<date %09d>_<file> (a partial LOCTRANS state). OASIS prefixes the name as written in the
// namcouple; a directory in it is kept in front of the prefix.
std::string dated_file(const char* kind, int date, const std::string& file) {
  char prefix[32];
  std::snprintf(prefix, sizeof prefix, "%s%09d_", kind, date);
  const size_t slash = file.rfind('/');
  if (slash == std::string::npos) return prefix + file;
  return file.substr(0, slash + 1) + prefix + file.substr(slash + 1);
}

// Rank 0 of comm looks, every rank learns: an agreed answer costs one broadcast.
bool file_exists(MPI_Comm comm, const std::string& path) {
  int rank = 0;
  ISTHMUS_MPI(MPI_Comm_rank(comm, &rank));
  int exists = 0;
  if (rank == 0) {
    std::error_code ec;
    exists = std::filesystem::is_regular_file(path, ec) ? 1 : 0;
  }
  ISTHMUS_MPI(wmpi::Bcast(&exists, 1, MPI_INT, 0, comm));
  return exists == 1;
}

}  // namespace

Coupling::Coupling(MPI_Comm comm, CouplingEnds ends, int64_t runtime, const std::string& run_dir,
                   Method method)
    : ends_(std::move(ends)),
      runtime_(runtime),
      nfields_(static_cast<int>(ends_.levels.size())),
      run_dir_(run_dir) {
  const Entry& e = *ends_.entry;
  Agreement agreement;
  begin(agreement);
  if (e.status == FieldStatus::Exported || e.status == FieldStatus::Expout) {
    build_exchange(comm, method, agreement);
  } else {
    agreement.conclude(files());  // one component only: nothing is exchanged
  }
  end();
}

Coupling::Coupling(Deferred, CouplingEnds ends, int64_t runtime, const std::string& run_dir, Method method)
    : ends_(std::move(ends)),
      runtime_(runtime),
      nfields_(static_cast<int>(ends_.levels.size())),
      run_dir_(run_dir),
      deferred_(std::make_unique<Agreement>()) {
  if (!joins(ends_)) fail(ISTHMUS_ERR_INTERNAL, entry_where(*ends_.entry), ": its exchange cannot be built with others");
  begin(*deferred_);
  const Entry& e = *ends_.entry;
  request_.src = ends_.src ? &ends_.src_points : nullptr;
  request_.dst = ends_.dst ? &ends_.dst_points : nullptr;
  request_.src_grid_size = ends_.src_grid_size;
  request_.dst_grid_size = ends_.dst_grid_size;
  request_.prepared = std::move(ends_.weights);
  request_.opt.side = side_of(e.mapping->side);
  request_.opt.method = method;
  request_.opt.nlevels = ends_.levels;
  request_.agreement = deferred_.get();
}

bool Coupling::joins(const CouplingEnds& ends) {
  const Entry& e = *ends.entry;
  return (e.status == FieldStatus::Exported || e.status == FieldStatus::Expout) && prepared_weights(ends);
}

void Coupling::build_together(MPI_Comm comm, const std::vector<Coupling*>& couplings) {
  std::vector<remap::Mapping::Request> requests;
  for (Coupling* c : couplings) {
    if (!c->deferred_) fail(ISTHMUS_ERR_INTERNAL, "a coupling built together was not deferred");
    requests.push_back(std::move(c->request_));
  }
  std::vector<std::unique_ptr<remap::Mapping>> maps = remap::Mapping::build_together(comm, requests);
  for (size_t k = 0; k < couplings.size(); ++k) {
    Coupling& c = *couplings[k];
    c.mapping_ = std::move(maps[k]);
    if (c.ends_.entry->conserv) c.set_conservation();
    c.terms_ = c.mapping_->weights_per_link();
    c.deferred_.reset();
    c.end();
  }
}

void Coupling::begin(Agreement& agreement) {
  const Entry& e = *ends_.entry;
  src_shape_ = shape_of(ends_.src_nx, ends_.src_ny, ends_.src_grid_size);
  dst_shape_ = shape_of(ends_.dst_nx, ends_.dst_ny, ends_.dst_grid_size);

  // OASIS's oasis_advance_init: a lagged put entry starts from its restart file. Whether the
  // file is usable is settled before the exchange is built, so that its agreement fails every
  // rank of both components alike and no destination waits for a date 0 that never comes.
  bool& lagged_restart = lagged_restart_;
  lagged_restart = ends_.src && e.lag > 0;
  if (lagged_restart) {
    if (e.restart_file.empty()) {
      agreement.record(ISTHMUS_ERR_CONFIG,
                       entry_where(e) + ": LAG=" + std::to_string(e.lag) +
                           " needs a restart file (the lagged fields of date 0 are read from it)");
    } else {
      const std::string path = in_run_dir(e.restart_file);
      std::string missing;
      if (!file_exists(files(), path)) {
        missing = "the restart file \"" + path + "\" does not exist";
      } else {
        for (int f = 0; f < nfields_ && missing.empty(); ++f)
          for (int l = 0; l < ends_.levels[f] && missing.empty(); ++l) {
            const std::string v = level_name(e.src_names[f], l, ends_.levels[f]);
            if (!restart_has_variable(files(), path, v))
              missing = "the restart file \"" + path + "\" has no variable \"" + v + "\"";
          }
      }
      if (!missing.empty()) {
        if (ends_.allow_no_restart) {
          lagged_restart = false;  // $NNOREST: OASIS sends zeros
        } else {
          std::string vars;
          for (int f = 0; f < nfields_; ++f)
            vars += (f ? ", " : "") + level_name(e.src_names[f], 0, ends_.levels[f]);
          agreement.record(ISTHMUS_ERR_FILE,
                           entry_where(e) + ": LAG=" + std::to_string(e.lag) + ": " + missing +
                               " (it holds the lagged value of " + vars +
                               " for date 0; $NNOREST true starts from zeros)");
        }
      }
    }
  }

}

void Coupling::end() {
  const Entry& e = *ends_.entry;
  // messages, bytes and waiting time for the communication report: a clock read per exchange
  if (mapping_ || redist_) (mapping_ ? mapping_->redist() : *redist_).trace().set_on(true);

  for (int f = 0; f < nfields_; ++f) {
    if (ends_.src) {
      const size_t n = static_cast<size_t>(ends_.src_points.size()) * ends_.levels[f];
      acc_.emplace_back(time_op(), n);
      send_.emplace_back(n, 0.0);
    }
    if (ends_.dst)
      recv_.emplace_back(static_cast<size_t>(ends_.dst_points.size()) * ends_.levels[f], 0.0);
  }
  put_date_.assign(nfields_, -1);
  got_date_.assign(nfields_, -1);
  fw_given_.assign(nfields_, false);
  if (ends_.src && terms_ > 1) {
    term_on_.assign(terms_ - 1, false);
    term_acc_.resize(terms_ - 1);
    term_send_.resize(terms_ - 1);
  }

  // OASIS names output files <field>_<component>_<entry>.nc and writes them in the run
  // directory; both sides of an EXPOUT entry write what they exchange.
  const std::string dir = run_dir_ + "/";
  if (ends_.src && (e.status == FieldStatus::Expout || e.status == FieldStatus::Output))
    src_output_ = std::make_unique<OutputFile>(files(), ends_.src_points, src_shape_,
                                               ends_.src_component, ends_.output_number, dir);
  if (ends_.dst && e.status == FieldStatus::Expout)
    dst_output_ = std::make_unique<OutputFile>(files(), ends_.dst_points, dst_shape_,
                                               ends_.dst_component, ends_.output_number, dir);
  if (ends_.dst && e.status == FieldStatus::Input) {
    const bool absolute = !e.input_file.empty() && e.input_file[0] == '/';
    input_ = std::make_unique<InputFile>(files(), ends_.dst_points, dst_shape_, e.input_file,
                                         ends_.dst_component, absolute ? "" : dir);
  }

  if (ends_.src && e.lag > 0) {
    if (lagged_restart_) read_lagged_restart();
    // the restart's values count for date 0 as an INSTANT put at date -LAG would (OASIS calls
    // its put path with the model time -LAG)
    emit(-e.lag, 0);
    fw_given_.assign(nfields_, false);  // the puts say from now on
  }
  // after the lagged send, which leaves the accumulators alone: OASIS reads them second too
  if (ends_.src && !instant() &&
      !e.restart_file.empty())
    read_partial_restart();
}

namespace {

// The links a coupler's mapping applies. OASIS3-MCT multiplies a put's higher-order terms
// (fld2..fld5) by the file's further weights, on the put side only; so does isthmus where the
// source side multiplies (MAPPING ... sum). Elsewhere the first weight alone, which is what
// OASIS3-MCT applies to a put without them (SCRIP's conservative files carry 3 weights).
remap::Links mapped_links(remap::LinkSlab&& slab, int num_wgts, const Entry& e) {
  if (e.mapping && side_of(e.mapping->side) == remap::Side::Src)
    return remap::links_of(std::move(slab), num_wgts);
  return remap::first_weights_of(std::move(slab), num_wgts);
}

}  // namespace

bool Coupling::prepared_weights(const CouplingEnds& ends) {
  const Entry& e = *ends.entry;
  if (!(e.status == FieldStatus::Exported || e.status == FieldStatus::Expout) || !e.mapping) return false;
  // opt within one component would need both sides' links on the same ranks: built over the
  // pair in one phase instead
  return e.mapping->side != MapSide::Auto || ends.src_component != ends.dst_component;
}

std::string Coupling::weights_path(const Entry& e, const std::string& run_dir) {
  return e.mapping ? path_in(run_dir, e.mapping->file) : std::string();
}

Coupling::EarlyLinks Coupling::read_early(MPI_Comm local, const std::string& path, int partition,
                                          const IndexList& part) {
  EarlyLinks early;
  early.path = path;
  early.partition = partition;
  early.dst_grid_size = part.global_size();
  remap::WeightsInfo info;
  std::optional<remap::LinkSlab> own =
      remap::read_links_of_destinations(local, path, remap::WeightsExpect{-1, part.global_size()}, &part, &info);
  if (!own) return early;
  early.src_grid_size = info.src_grid_size;
  try {  // local; whatever fails here, the slab reading finds and names on every rank
    // the destination side multiplies the first weights (mapped_links)
    early.weights = remap::prepare_own_links(part, info.src_grid_size,
                                             remap::first_weights_of(std::move(*own), info.num_wgts));
  } catch (const std::exception&) {
    early.weights.reset();
  }
  return early;
}

void Coupling::prepare_weights(CouplingEnds& ends, const std::string& run_dir, const EarlyLinks* early) {
  const Entry& e = *ends.entry;
  if (!prepared_weights(ends)) return;
  // the side this component multiplies on (opt: the one it would, if chosen)
  remap::Side side = side_of(e.mapping->side);
  if (side == remap::Side::Auto) side = ends.dst ? remap::Side::Dst : remap::Side::Src;
  const bool dst_side = side == remap::Side::Dst;
  if (!(dst_side ? ends.dst : ends.src)) return;  // the other component
  const std::string path = path_in(run_dir, e.mapping->file);
  const remap::WeightsExpect expect{ends.src_grid_size, ends.dst_grid_size};
  if (early && !(dst_side && early->path == path && early->dst_grid_size == ends.dst_grid_size))
    fail(ISTHMUS_ERR_INTERNAL, entry_where(e), ": links read early from ", early->path, " given for ", path);
  if (early && early->weights && early->src_grid_size == ends.src_grid_size) {
    ends.weights = *early->weights;
    return;
  }
  try {
    remap::WeightsInfo info;
    // The destination side's ranks read the links of their own points straight from the file
    // where it lists them by destination (one reduction); otherwise slabs are read and routed
    // through a directory.
    if (dst_side && !early) {
      if (std::optional<remap::LinkSlab> own =
              remap::read_links_of_destinations(ends.local, path, expect, &ends.dst_points, &info)) {
        ends.weights = remap::prepare_own_links(ends.dst_points, info.src_grid_size,
                                                mapped_links(std::move(*own), info.num_wgts, e));
        return;
      }
    }
    remap::LinkSlab slab = remap::read_scrip_weights(ends.local, path, expect, &info);
    ends.weights = remap::prepare_links(
        ends.local, side, dst_side ? &ends.dst_points : &ends.src_points, info.src_grid_size,
        info.dst_grid_size, mapped_links(std::move(slab), info.num_wgts, e));
  } catch (const Error& err) {
    if (err.code() == ISTHMUS_ERR_MPI) throw;
    ends.weights = remap::PreparedLinks{};
    ends.weights.prepared = true;
    ends.weights.side = side;
    ends.weights.failure = err;
  }
}

void Coupling::build_exchange(MPI_Comm comm, Method method, Agreement& agreement) {
  const Entry& e = *ends_.entry;
  const IndexList* src = ends_.src ? &ends_.src_points : nullptr;
  const IndexList* dst = ends_.dst ? &ends_.dst_points : nullptr;
  std::string weights;
  if (e.mapping) weights = e.mapping->file;
  else if (e.scripr) weights = scripr_file_name(e);
  if (!weights.empty()) {
    remap::MappingOptions mo;
    mo.side = e.mapping ? side_of(e.mapping->side) : remap::Side::Auto;
    mo.method = method;
    mo.nlevels = ends_.levels;
    if (prepared_weights(ends_)) {
      mapping_ = std::make_unique<remap::Mapping>(comm, src, dst, ends_.src_grid_size,
                                                  ends_.dst_grid_size, std::move(ends_.weights),
                                                  mo, agreement);
    } else {
      // OASIS's SCRIPR: the file of the entry's name in the run directory, generated over the
      // pair's ranks if missing (scripr.h)
      if (maps_with_scripr(e)) ensure_scripr_weights(comm, e, run_dir_);
      const remap::WeightsExpect expect{ends_.src_grid_size, ends_.dst_grid_size};
      remap::WeightsInfo info;
      Agreement read_agreement;
      remap::LinkSlab slab =
          remap::read_scrip_weights(comm, in_run_dir(weights), expect, &info, &read_agreement);
      mapping_ = std::make_unique<remap::Mapping>(
          comm, src, dst, info.src_grid_size, info.dst_grid_size,
          mapped_links(std::move(slab), info.num_wgts, e), mo, agreement);
    }
    if (e.conserv) set_conservation();
    terms_ = mapping_->weights_per_link();
  } else {
    agreement.check([&] {
      if (ends_.src_grid_size != ends_.dst_grid_size)
        fail(ISTHMUS_ERR_CONFIG, entry_where(e), ": the source grid has ", ends_.src_grid_size,
             " points and the destination grid ", ends_.dst_grid_size,
             ", but the entry has no MAPPING or SCRIPR transformation");
    });
    xmap_ = std::make_shared<Xmap>(comm, src, dst, XmapOptions{}, agreement);
    std::vector<FieldSpec> specs;
    for (int l : ends_.levels) specs.push_back({DataType::Double, l});
    Agreement redist_agreement;
    redist_ = std::make_unique<Redist>(xmap_, specs, method, redist_agreement, comm);
  }
}

// CONSERV: as OASIS, both grids' areas and masks come from areas.nc and masks.nc in the run
// directory; each side reads its own grid over its component, and a failure to read joins the
// mapping's agreement over both components, so no rank is left in the global sums.
void Coupling::set_conservation() {
  const Entry& e = *ends_.entry;
  remap::Conservation c;
  switch (e.conserv->type) {
    case ConservType::Global: c.type = remap::Conserv::Global; break;
    case ConservType::Glbpos: c.type = remap::Conserv::Glbpos; break;
    case ConservType::Basbal: c.type = remap::Conserv::Basbal; break;
    case ConservType::Baspos: c.type = remap::Conserv::Baspos; break;
  }
  switch (e.conserv->sum) {
    case SumMethod::Reprosum: c.method = GlobalSumMethod::Reprosum; break;
    case SumMethod::Gather: c.method = GlobalSumMethod::Gather; break;
    case SumMethod::Lsum8: c.method = GlobalSumMethod::Lsum8; break;
    case SumMethod::Lsum16: c.method = GlobalSumMethod::Lsum16; break;
    case SumMethod::Ddpdd: c.method = GlobalSumMethod::Ddpdd; break;
  }
  Agreement agreement;
  try {
    if (ends_.src) {
      AreasAndMask am = read_areas_and_mask(files(), run_dir_, e.src_grid, ends_.src_points, src_shape_);
      c.src_area = std::move(am.area);
      c.src_mask = std::move(am.active);
    }
    if (ends_.dst) {
      AreasAndMask am = read_areas_and_mask(files(), run_dir_, e.dst_grid, ends_.dst_points, dst_shape_);
      c.dst_area = std::move(am.area);
      c.dst_mask = std::move(am.active);
    }
  } catch (const Error& err) {
    agreement.record(err.code(), entry_where(e) + ": CONSERV: " + err.what());
  }
  mapping_->set_conservation(std::move(c), agreement);
}

remap::Side Coupling::side() const { return mapping_ ? mapping_->info().side : remap::Side::Dst; }

std::string Coupling::in_run_dir(const std::string& file) const {
  return path_in(run_dir_, file);
}

std::vector<FieldData> Coupling::src_fields(std::vector<std::vector<double>>& values) {
  std::vector<FieldData> fields;
  for (int f = 0; f < nfields_; ++f)
    fields.push_back({ends_.entry->src_names[f], ends_.levels[f], DataType::Double, values[f].data()});
  return fields;
}

std::vector<FieldData> Coupling::dst_fields(std::vector<std::vector<double>>& values) {
  std::vector<FieldData> fields;
  for (int f = 0; f < nfields_; ++f)
    fields.push_back({ends_.entry->dst_names[f], ends_.levels[f], DataType::Double, values[f].data()});
  return fields;
}

void Coupling::read_lagged_restart() {
  const Entry& e = *ends_.entry;
  const std::string path = in_run_dir(e.restart_file);
  read_restart(files(), path, ends_.src_points, src_shape_, "", src_fields(send_));
  read_term_restarts(path, false);
  // a fraction in the file (fracwgt's, written by the previous run) switches it on, as in OASIS
  const std::string fw = fracwgt_prefix(ends_.number);
  if (mapping_ && restart_has_variable(files(), path, fw + level_name(e.src_names[0], 0, ends_.levels[0]))) {
    fw_send_.resize(nfields_);
    for (int f = 0; f < nfields_; ++f) fw_send_[f].assign(send_[f].size(), 0.0);
    read_restart(files(), path, ends_.src_points, src_shape_, fw, src_fields(fw_send_));
    fw_given_.assign(nfields_, true);
  }
}

void Coupling::read_partial_restart() {
  const Entry& e = *ends_.entry;
  const std::string path = in_run_dir(e.restart_file);
  const TimeOp op = time_op();
  // 4.0 and later name the state after the entry, 2.0 after the operation; a file without
  // either starts the accumulation from nothing (OASIS reads it with abort=.false.)
  std::string prefix, counter;
  if (restart_has_variable(files(), path, loctrans_counter_name(ends_.number))) {
    prefix = loctrans_prefix(ends_.number);
    counter = loctrans_counter_name(ends_.number);
  } else if (restart_has_variable(files(), path, loctrans_counter_name_oasis2(op))) {
    prefix = loctrans_prefix_oasis2(op);
    counter = loctrans_counter_name_oasis2(op);
  } else {
    return;
  }
  std::vector<std::vector<double>> states;
  int nlevels = 0;
  for (int f = 0; f < nfields_; ++f) {
    states.emplace_back(acc_[f].size(), 0.0);
    nlevels += ends_.levels[f];
  }
  std::vector<RestartCounter> counters = {{counter, std::vector<int>(nlevels, 0)}};
  read_restart(files(), path, ends_.src_points, src_shape_, prefix, src_fields(states), &counters);
  // OASIS counts per field level; all levels of a field are put together, so the first
  // level's count is the field's
  for (int f = 0, level = 0; f < nfields_; level += ends_.levels[f], ++f)
    acc_[f].restore(std::move(states[f]), counters[0].values[level]);
  read_term_restarts(path, true);
}

void Coupling::write_partial_restart(const std::string& path) {
  std::vector<std::vector<double>> states;
  std::vector<int> counts;
  for (int f = 0; f < nfields_; ++f) {
    // OASIS keeps no INSTANT state between coupling dates: its vector is zeros, its count 0
    if (instant()) states.emplace_back(acc_[f].size(), 0.0);
    else states.push_back(acc_[f].state());
    counts.insert(counts.end(), ends_.levels[f], instant() ? 0 : acc_[f].oasis_counter());
  }
  write_restart(files(), path, ends_.src_points, src_shape_, loctrans_prefix(ends_.number),
                src_fields(states), {{loctrans_counter_name(ends_.number), counts}});
  // and under OASIS3-MCT 2.0's names (after the operation), which 2.0 reads and 4.0 ignores:
  // a run can go on from this file with either
  write_restart(files(), path, ends_.src_points, src_shape_, loctrans_prefix_oasis2(time_op()),
                src_fields(states), {{loctrans_counter_name_oasis2(time_op()), counts}});
  if (!instant()) write_term_restarts(path, true);
}

void Coupling::write_sent(const std::string& path) {
  write_restart(files(), path, ends_.src_points, src_shape_, "", src_fields(send_));
  write_term_restarts(path, false);
  if (fw_given_[0])  // (only a mapped entry takes a fraction)
    write_restart(files(), path, ends_.src_points, src_shape_, fracwgt_prefix(ends_.number),
                  src_fields(fw_send_));
}

// The restart variables of the higher-order terms that are on, as OASIS3-MCT names them: the
// lagged value "av<t>_<field>" (the state sent), the partial LOCTRANS state "av<t>loc<ID>_<field>"
// under both namings of the main state (entry number, and 2.0's operation code); no counter,
// the field's counts for all.
void Coupling::write_term_restarts(const std::string& path, bool partial) {
  for (int t = 2; t <= terms_; ++t) {
    if (!term_on_[t - 2]) continue;
    if (!partial) {
      write_restart(files(), path, ends_.src_points, src_shape_, term_prefix(t),
                    src_fields(term_send_[t - 2]));
      continue;
    }
    std::vector<std::vector<double>> states;
    for (int f = 0; f < nfields_; ++f) states.push_back(term_acc_[t - 2][f].state());
    for (const std::string& loc : {loctrans_prefix(ends_.number), loctrans_prefix_oasis2(time_op())})
      write_restart(files(), path, ends_.src_points, src_shape_, term_loctrans_prefix(t, loc),
                    src_fields(states));
  }
}

// What write_term_restarts wrote, where the file has it (OASIS reads them with abort=.false.:
// a term found is on).
void Coupling::read_term_restarts(const std::string& path, bool partial) {
  const Entry& e = *ends_.entry;
  const std::string first = level_name(e.src_names[0], 0, ends_.levels[0]);
  for (int t = 2; t <= terms_; ++t) {
    std::string prefix;
    if (!partial) {
      if (restart_has_variable(files(), path, term_prefix(t) + first)) prefix = term_prefix(t);
    } else {
      for (const std::string& loc : {loctrans_prefix(ends_.number), loctrans_prefix_oasis2(time_op())})
        if (prefix.empty() && restart_has_variable(files(), path, term_loctrans_prefix(t, loc) + first))
          prefix = term_loctrans_prefix(t, loc);
    }
    if (prefix.empty()) continue;
    switch_term_on(t);
    if (!partial) {
      read_restart(files(), path, ends_.src_points, src_shape_, prefix, src_fields(term_send_[t - 2]));
      continue;
    }
    std::vector<std::vector<double>> states;
    for (int f = 0; f < nfields_; ++f) states.emplace_back(acc_[f].size(), 0.0);
    read_restart(files(), path, ends_.src_points, src_shape_, prefix, src_fields(states));
    for (int f = 0; f < nfields_; ++f) term_acc_[t - 2][f].restore(std::move(states[f]), acc_[f].count());
  }
}

void Coupling::switch_term_on(int t) {
  if (term_on_[t - 2]) return;
  term_on_[t - 2] = true;
  for (int f = 0; f < nfields_; ++f) {
    // the sum (AVERAGE's is averaged over the field's puts when sent), or the last value
    term_acc_[t - 2].emplace_back(instant() ? TimeOp::Instant : TimeOp::Accumul, acc_[f].size());
    term_send_[t - 2].emplace_back(acc_[f].size(), 0.0);
  }
}

std::vector<const double*> Coupling::sent_arrays() {
  std::vector<const double*> src;
  for (int f = 0; f < nfields_; ++f) {
    src.push_back(send_[f].data());
    for (int t = 2; t <= terms_; ++t)
      src.push_back(term_on_[t - 2] ? term_send_[t - 2][f].data() : nullptr);
  }
  return src;
}

void Coupling::take_terms(int k, int date, const void* const* terms, DataType type) {
  int given = 0;  // the highest term given
  for (int j = 0; terms && j < kMaxTerms; ++j)
    if (terms[j]) given = j + 2;
  if (given == 0) {
    // INSTANT: a term that is on and not given is zeros at this date (OASIS's aVon rule)
    if (instant())
      for (int t = 2; t <= terms_; ++t)
        if (term_on_[t - 2]) term_acc_[t - 2][k].reset();
    return;
  }
  const Entry& e = *ends_.entry;
  const std::string what = "put of " + e.src_names[k] + " at date " + std::to_string(date) +
                           ": fld" + std::to_string(given) + " (a higher-order term)";
  if (!mapping_)
    fail(ISTHMUS_ERR_ARG, what, " needs a MAPPING whose weights file has ", given,
         " weights per link; ", entry_where(e), " has no mapping");
  // the mapping keeps the file's further weights only where the configuration asks for the
  // source side (mapped_links), so that is checked, not the side opt chose
  if (!e.mapping)
    fail(ISTHMUS_ERR_ARG, what, " is multiplied where the source side multiplies, but ", entry_where(e),
         " is a SCRIPR entry, which isthmus applies with its first weights: give its weights file "
         "in a MAPPING line with `sum`");
  if (side_of(e.mapping->side) != remap::Side::Src)
    fail(ISTHMUS_ERR_ARG, what, " is multiplied where the source side multiplies, but ", entry_where(e),
         " does not multiply there (MAPPING ",
         e.mapping->strategy.empty() ? "without a strategy word, i.e. bfb" : e.mapping->strategy,
         "): write `sum` in its MAPPING line (OASIS3-MCT applies higher-order terms on the put "
         "side only, too)");
  if (given > terms_)
    fail(ISTHMUS_ERR_ARG, what, " needs ", given, " weights per link, but the weights file ",
         e.mapping->file, " of ", entry_where(e), " has ", terms_);
  if (time_op() == TimeOp::TMin || time_op() == TimeOp::TMax)
    fail(ISTHMUS_ERR_ARG, what, ": LOCTRANS ", time_op_name(time_op()),
         " takes no higher-order terms (nor does OASIS3-MCT)");
  for (int t = 2; t <= terms_; ++t) {
    const void* x = t - 2 < kMaxTerms ? terms[t - 2] : nullptr;
    if (x) switch_term_on(t);
    if (!term_on_[t - 2]) continue;
    Accumulator& a = term_acc_[t - 2][k];
    if (!x) {
      if (instant()) a.reset();
    } else if (type == DataType::Float) {
      a.add(static_cast<const float*>(x));
    } else {
      a.add(static_cast<const double*>(x));
    }
  }
}

void Coupling::take_fracwgt(int k, int date, const void* fracwgt, DataType type, bool coupling_date) {
  if (!mapping_) return;  // OASIS3-MCT warns and ignores it
  const Entry& e = *ends_.entry;
  const std::string what = "put of " + e.src_names[k] + " at date " + std::to_string(date);
  if (fracwgt) {
    if (!instant())
      fail(ISTHMUS_ERR_ARG, what, ": fracwgt with LOCTRANS ", time_op_name(time_op()), " (", entry_where(e),
           "): OASIS3-MCT maps every put of the period on the source side and averages the mapped "
           "fields; isthmus maps once, at the coupling date, so it takes fracwgt with INSTANT only");
    if (terms_ > 1 && std::any_of(term_on_.begin(), term_on_.end(), [](bool b) { return b; }))
      fail(ISTHMUS_ERR_ARG, what, ": fracwgt with higher-order terms (fld2..) is not supported (", entry_where(e), ")");
    if (e.conserv)
      fail(ISTHMUS_ERR_ARG, what, ": fracwgt with CONSERV is not supported (", entry_where(e),
           "): the corrections would have to weigh both grids' areas by the fractions");
    if (fw_ == FracWgt::Off)
      fail(ISTHMUS_ERR_ARG, what, ": fracwgt given, but the entry's first exchange (", entry_where(e),
           ") went without it; it is on or off from the first coupling date on, as in OASIS3-MCT");
  } else if (fw_ == FracWgt::On) {
    fail(ISTHMUS_ERR_ARG, what, ": no fracwgt, but the entry's first exchange (", entry_where(e),
         ") went with one; it is on or off from the first coupling date on, as in OASIS3-MCT");
  }
  if (!coupling_date) return;
  fw_given_[k] = fracwgt != nullptr;
  if (!fracwgt) return;
  if (fw_send_.size() != static_cast<size_t>(nfields_)) fw_send_.resize(nfields_);
  std::vector<double>& w = fw_send_[k];
  w.resize(send_[k].size());
  if (type == DataType::Float) {
    const float* x = static_cast<const float*>(fracwgt);
    for (size_t i = 0; i < w.size(); ++i) w[i] = x[i];
  } else {
    std::copy_n(static_cast<const double*>(fracwgt), w.size(), w.begin());
  }
}

void Coupling::start(const double* const* src, double* const* dst) {
  if (src) ++stats_.sends;  // a destination-only rank starts its receives with nothing to send
  if (mapping_) {
    bool with_fraction;  // this exchange carries a fraction
    if (static_cast<int>(votes_.size()) < fracwgt_votes()) {
      vote_fracwgt(src && fw_given_[0]);
      // a source knows its own vote; a destination rank learns it now
      with_fraction = src ? fw_given_[0] : (settle_fracwgt(), votes_.back().all[0] != 0);
      if (static_cast<int>(votes_.size()) == fracwgt_votes())
        fw_ = with_fraction ? FracWgt::On : FracWgt::Off;
    } else {
      settle_fracwgt(false);  // a source rank checks the sources' agreement if it is there
      with_fraction = fw_ == FracWgt::On;
    }
    if (!with_fraction) {
      mapping_->start(src);
    } else {
      if (mapping_->lanes() < 2) mapping_->add_lane();
      // per field the mapping's arrays: the value, then its terms (none with fracwgt)
      std::vector<const double*> num(static_cast<size_t>(nfields_) * terms_, nullptr), den(num);
      if (src) {
        // the numerator, field * fraction, on lane 0; the fraction on lane 1
        fw_num_.resize(nfields_);
        for (int f = 0; f < nfields_; ++f) {
          const std::vector<double>& x = send_[f];
          const std::vector<double>& w = fw_send_[f];
          fw_num_[f].resize(x.size());
          for (size_t i = 0; i < x.size(); ++i) fw_num_[f][i] = x[i] * w[i];
          num[static_cast<size_t>(f) * terms_] = fw_num_[f].data();
          den[static_cast<size_t>(f) * terms_] = w.data();
        }
      }
      mapping_->start(src ? num.data() : nullptr, 0);
      mapping_->start(src ? den.data() : nullptr, 1);
    }
  } else {
    std::vector<void*> out;
    for (size_t f = 0; f < recv_.size(); ++f) out.push_back(dst ? dst[f] : recv_[f].data());
    redist_->start(0, reinterpret_cast<const void* const*>(src), ends_.dst ? out.data() : nullptr);
  }
  pending_ = true;
}

void Coupling::finish(double* const* dst, const char* call, int date) {
  pending_ = false;
  Redist& r = mapping_ ? mapping_->redist() : *redist_;
  try {
    // the exchange's own trace says how long it waited; the rest of finish is the mapping
    const bool two = mapping_ && mapping_->lanes() > 1 && mapping_->pending(1);  // fracwgt's
    const double w0 = r.trace().counters().wait_seconds +
                      (two ? mapping_->redist(1).trace().counters().wait_seconds : 0.0);
    const double t0 = MPI_Wtime();
    if (two) {
      fw_den_.resize(nfields_);
      std::vector<double*> den;
      for (int f = 0; f < nfields_; ++f) {
        fw_den_[f].resize(ends_.dst ? static_cast<size_t>(ends_.dst_points.size()) * ends_.levels[f] : 0);
        den.push_back(fw_den_[f].data());
      }
      mapping_->finish(dst, 0);
      mapping_->finish(dst ? den.data() : nullptr, 1);
      if (dst) divide_by_fraction(dst, date);
    } else if (mapping_) {
      mapping_->finish(dst);
    } else {
      r.wait();
    }
    const double waited = r.trace().counters().wait_seconds - w0 +
                          (two ? mapping_->redist(1).trace().counters().wait_seconds : 0.0);
    stats_.wait_seconds += waited;
    if (dst) {
      ++stats_.receives;
      if (mapping_) stats_.map_seconds += MPI_Wtime() - t0 - waited;
    }
  } catch (const Error& err) {
    if (err.code() != ISTHMUS_ERR_TIMEOUT) throw;
    // a hang turned into an error: say which coupling waited, for what, on whom
    const Entry& e = *ends_.entry;
    const bool get = call[0] == 'g';
    fail(ISTHMUS_ERR_TIMEOUT, call, " of ", entry_where(e), " at date ", date, " in component ",
         get ? ends_.dst_component : ends_.src_component, ": ",
         get ? "its data never came from " + ends_.src_component + " (no put at that date? a "
               "period or LAG that never reaches it?)"
             : "the previous coupling's data was never taken by " + ends_.dst_component +
                   " (no get at that date?)",
         "; ", err.what());
  }
}

void Coupling::check_date(const char* what, int date, int& last) const {
  const Entry& e = *ends_.entry;
  if (date < 0) fail(ISTHMUS_ERR_ARG, what, " of ", entry_where(e), " at date ", date, ": dates start at 0");
  if (runtime_ > 0 && date >= runtime_)
    fail(ISTHMUS_ERR_ARG, what, " of ", entry_where(e), " at date ", date,
         ": beyond the run's end ($RUNTIME ", runtime_, " s)");
  if (date < last)
    fail(ISTHMUS_ERR_ARG, what, " of ", entry_where(e), " at date ", date, " after date ", last,
         ": the model runs backwards");
  last = date;
}

int Coupling::put_inquire(int k, int date) const {
  // the codes put and emit would return, with nothing done (OASIS's oasis_put_inquire)
  const Entry& e = *ends_.entry;
  const int64_t lagged = static_cast<int64_t>(date) + e.lag;
  const int idle = instant() ? kOk : kLocTrans;
  if (lagged % e.period != 0) return idle;
  for (int f = 0; f < nfields_; ++f)
    if (f != k && put_date_[f] != lagged) return kWaitgroup;
  int info = idle;
  if (!e.restart_file.empty() && e.lag > 0 && runtime_ > 0 && lagged == runtime_) info = kToRest;
  if (exchanges() && !beyond_run(lagged)) info = kSent;
  if (src_output_) info = info == kSent ? kSentOut : info == kToRest ? kToRestOut : kOutput;
  return info;
}

int Coupling::emit(int date, int64_t lagged) {
  const Entry& e = *ends_.entry;
  int info = instant() ? kOk : kLocTrans;
  if (!e.restart_file.empty()) {
    if (e.lag > 0 && runtime_ > 0 && lagged == runtime_) {
      info = kToRest;
      write_sent(in_run_dir(e.restart_file));
    } else if (write_restart_) {
      write_restart_ = false;
      write_sent(in_run_dir(dated_file("TC", date, e.restart_file)));
    }
  }
  if (exchanges() && !beyond_run(lagged)) {
    info = kSent;
    // after the restart write: the file holds the value before BLASOLD, which the next run
    // applies when it sends it
    if (e.blasold)
      for (auto& s : send_)
        for (double& v : s) v = e.blasold->scale * v + e.blasold->add;
    if (e.checkin) check_diagnostics(true, date, send_);
    for (int f = 1; f < nfields_ && date >= 0; ++f)  // (the lagged restart's are alike)
      if (fw_given_[f] != fw_given_[0])
        fail(ISTHMUS_ERR_ARG, "put of ", entry_where(e), " at date ", date, ": fracwgt given for ",
             e.src_names[fw_given_[f] ? f : 0], " but not for ", e.src_names[fw_given_[f] ? 0 : f],
             "; the fields of one entry travel together, all with a fraction or none");
    if (pending_) {
      // a rank of both sides finishes at get
      if (ends_.dst)
        fail(ISTHMUS_ERR_ARG, "put of ", entry_where(e), " at date ", date,
             ": the previous coupling has not been received by its get on these ranks yet");
      finish(nullptr, "put", date);  // the previous coupling, if still in flight
    }
    const std::vector<const double*> src = sent_arrays();
    start(src.data());  // the send completes at the next put or at termination
  }
  if (src_output_) {
    info = info == kSent ? kSentOut : info == kToRest ? kToRestOut : kOutput;
    src_output_->write(date, src_fields(send_));
  }
  return info;
}

int Coupling::put(int k, int date, const void* data, DataType type, bool write_restart,
                  const void* const* terms, const void* fracwgt) {
  const double t0 = MPI_Wtime();
  const int info = put_timed(k, date, data, type, write_restart, terms, fracwgt);
  ++stats_.puts;
  stats_.put_seconds += MPI_Wtime() - t0;
  return info;
}

int Coupling::get(int k, int date, void* data, DataType type) {
  const double t0 = MPI_Wtime();
  const int info = get_timed(k, date, data, type);
  ++stats_.gets;
  stats_.get_seconds += MPI_Wtime() - t0;
  return info;
}

CouplingStats Coupling::stats() const {
  CouplingStats s = stats_;
  if (exchanges()) {
    const trace::Counters& c = redist().trace().counters();
    s.messages_sent = c.messages_sent;
    s.messages_received = c.messages_received;
    s.bytes_sent = c.bytes_sent;
    s.bytes_received = c.bytes_received;
    if (mapping_ && mapping_->lanes() > 1) {  // fracwgt's second lane
      const trace::Counters& c1 = mapping_->redist(1).trace().counters();
      s.messages_sent += c1.messages_sent;
      s.messages_received += c1.messages_received;
      s.bytes_sent += c1.bytes_sent;
      s.bytes_received += c1.bytes_received;
    }
  }
  return s;
}

int Coupling::put_timed(int k, int date, const void* data, DataType type, bool write_restart,
                        const void* const* terms, const void* fracwgt) {
  const Entry& e = *ends_.entry;
  check_date("put", date, last_put_);
  if (!data && ends_.src_points.size() > 0)
    fail(ISTHMUS_ERR_ARG, "put of ", e.src_names[k], " at date ", date,
         ": the array is NULL but this rank holds ", ends_.src_points.size(), " points");
  take_terms(k, date, terms, type);
  const int64_t lagged = static_cast<int64_t>(date) + e.lag;
  take_fracwgt(k, date, fracwgt, type, lagged % e.period == 0);
  if (write_restart) write_restart_ = true;
  if (instant() && nfields_ == 1 && type == DataType::Double && lagged % e.period == 0 &&
      !fracwgt && !e.checkin &&
      !e.blasold && !src_output_ && !write_restart_ && exchanges() && !ends_.dst &&
      !beyond_run(lagged)) {
    // The common case, a plain send: the model's arrays go into the messages at once (start
    // packs, or forms the partial sums, before it returns), without the accumulator's and the
    // send buffer's copies. A term not given this time is left out: INSTANT's zeros.
    put_date_[k] = static_cast<int>(lagged);
    if (pending_) finish(nullptr, "put", date);  // the previous coupling, if still in flight
    const double* src[8] = {static_cast<const double*>(data)};  // a mapping's weights per link <= 8
    for (int t = 2; t <= terms_ && t - 2 < kMaxTerms; ++t)
      src[t - 1] = terms ? static_cast<const double*>(terms[t - 2]) : nullptr;
    start(src);
    return kSent;
  }
  if (type == DataType::Float) acc_[k].add(static_cast<const float*>(data));
  else acc_[k].add(static_cast<const double*>(data));
  int info = instant() ? kOk : kLocTrans;
  if (lagged % e.period == 0) {
    put_date_[k] = static_cast<int>(lagged);
    bool all = true;  // the entry travels once all its fields are put
    for (int f = 0; f < nfields_; ++f) all = all && put_date_[f] == lagged;
    if (!all) {
      info = kWaitgroup;
    } else {
      for (int f = 0; f < nfields_; ++f) {
        for (int t = 2; t <= terms_; ++t) {
          if (!term_on_[t - 2]) continue;
          // a term's sum is averaged over the field's puts (OASIS's avcnt), given or not
          std::vector<double>& out = term_send_[t - 2][f];
          term_acc_[t - 2][f].result(out.data());
          term_acc_[t - 2][f].reset();
          if (time_op() == TimeOp::Average && acc_[f].count() > 1)
            for (double& v : out) v *= average_factor(acc_[f].count());
        }
        acc_[f].result(send_[f].data());
        acc_[f].reset();
      }
      info = emit(date, lagged);
    }
  }
  // OASIS (oasis_advance_run, 4.0): every put of the last coupling period saves the partial
  // state, so the last one leaves what the next run continues; a write_restart not done at a
  // coupling date saves it to the dated TA file (once)
  if (!e.restart_file.empty()) {
    const bool last_period = runtime_ > 0 && lagged + e.period >= runtime_;
    if ((last_period && !instant()) || write_restart_) {
      std::string path = in_run_dir(e.restart_file);
      if (!last_period) {
        write_restart_ = false;
        path = in_run_dir(dated_file("TA", date, e.restart_file));
      }
      write_partial_restart(path);
    }
  }
  return info;
}

int Coupling::get_timed(int k, int date, void* data, DataType type) {
  const Entry& e = *ends_.entry;
  check_date("get", date, last_get_);
  if (!data && ends_.dst_points.size() > 0)
    fail(ISTHMUS_ERR_ARG, "get of ", e.dst_names[k], " at date ", date,
         ": the array is NULL but this rank holds ", ends_.dst_points.size(), " points");
  if (date % e.period != 0) return kOk;
  if (received_date_ != date) {
    // the first field of the entry to be got at this date receives (or reads) them all
    if (input_) {
      input_->read(date, dst_fields(recv_));
    } else {
      if (ends_.src && !pending_)
        fail(ISTHMUS_ERR_ARG, "get of ", e.dst_names[k], " at date ", date, " in component ",
             ends_.dst_component, ": its put (", e.src_names[k],
             ") has not been called for this date on these ranks; with source and destination on "
             "the same ranks the put must come first (or use LAG)");
      // The common case, one double field received as it is: straight into the model's array
      // (the mapping multiplies into it), without the receive buffer's copy.
      if (nfields_ == 1 && type == DataType::Double && !e.blasnew && !dst_output_ && !e.checkout &&
          (mapping_ || !ends_.src)) {
        double* dst[] = {static_cast<double*>(data)};
        if (!ends_.src) start(nullptr, dst);
        finish(dst, "get", date);
        received_date_ = date;
        recv_holds_date_ = false;
        got_date_[k] = date;
        return kRecvd;
      }
      if (!ends_.src) start(nullptr);
      std::vector<double*> dst;
      for (auto& r : recv_) dst.push_back(r.data());
      finish(dst.data(), "get", date);
      for (auto& r : recv_)
        if (e.blasnew)
          for (double& v : r) v = e.blasnew->scale * v + e.blasnew->add;
      if (e.checkout) check_diagnostics(false, date, recv_);
      if (dst_output_) dst_output_->write(date, dst_fields(recv_));
    }
    received_date_ = date;
    recv_holds_date_ = true;
  } else if (!recv_holds_date_) {
    fail(ISTHMUS_ERR_ARG, "get of ", e.dst_names[k], " at date ", date,
         ": received already at this date (into the array of the first get)");
  }
  got_date_[k] = date;
  const std::vector<double>& r = recv_[k];
  if (type == DataType::Float) {
    float* out = static_cast<float*>(data);
    for (size_t i = 0; i < r.size(); ++i) out[i] = static_cast<float>(r[i]);
  } else {
    std::copy(r.begin(), r.end(), static_cast<double*>(data));
  }
  if (input_) return kInput;
  return dst_output_ ? kRecvOut : kRecvd;
}

void Coupling::complete() {
  if (pending_ && !ends_.dst) finish(nullptr, "terminate", last_put_);
  // a rank that did not take part in every vote joins the rest now, so that none waits for
  // it for ever
  while (mapping_ && static_cast<int>(votes_.size()) < fracwgt_votes()) vote_fracwgt(false);
  settle_fracwgt();
}

void Coupling::vote_fracwgt(bool on) {
  votes_.reserve(2);  // the requests' buffers must not move
  Vote& v = votes_.emplace_back();
  v.mine[0] = ends_.src && on;
  v.mine[1] = ends_.src && !on;
  ISTHMUS_MPI(MPI_Iallreduce(v.mine, v.all, 2, MPI_INT, MPI_MAX, mapping_->redist().comm(), &v.request));
}

void Coupling::settle_fracwgt(bool wait) {
  for (Vote& v : votes_) {
    if (v.settled) continue;
    if (wait) {
      ISTHMUS_MPI(wmpi::Wait(&v.request, MPI_STATUS_IGNORE));
    } else {
      int done = 0;
      ISTHMUS_MPI(MPI_Test(&v.request, &done, MPI_STATUS_IGNORE));
      if (!done) return;
    }
    v.settled = true;
    if (v.all[0] && v.all[1])
      fail(ISTHMUS_ERR_ARG, entry_where(*ends_.entry), ": some ranks of ", ends_.src_component,
           &v == &votes_[0] && fracwgt_votes() > 1
               ? " hold a fracwgt fraction in the lagged restart file and others do not"
               : " put with fracwgt at its first coupling date and others without; every rank "
                 "must give it, or none");
  }
}

void Coupling::check_diagnostics(bool source, int date, const std::vector<std::vector<double>>& values) {
  const Entry& e = *ends_.entry;
  const IndexList& points = source ? ends_.src_points : ends_.dst_points;
  const int64_t n = points.size();
  const std::vector<int64_t> index = points.indices();
  // per field level: sum and count (summed), minimum and -maximum (the smallest), then the
  // smallest global index holding each
  std::vector<double> sums, extremes;
  for (int f = 0; f < nfields_; ++f)
    for (int l = 0; l < ends_.levels[f]; ++l) {
      double sum = 0.0, lo = std::numeric_limits<double>::infinity(), hi = -lo;
      for (int64_t i = 0; i < n; ++i) {
        const double v = values[f][l * n + i];
        sum += v;
        lo = std::min(lo, v);
        hi = std::max(hi, v);
      }
      sums.push_back(sum);
      extremes.push_back(lo);
      extremes.push_back(-hi);
    }
  sums.push_back(static_cast<double>(n));
  const MPI_Comm comm = files();
  ISTHMUS_MPI(MPI_Allreduce(MPI_IN_PLACE, sums.data(), static_cast<int>(sums.size()), MPI_DOUBLE, MPI_SUM, comm));
  ISTHMUS_MPI(MPI_Allreduce(MPI_IN_PLACE, extremes.data(), static_cast<int>(extremes.size()), MPI_DOUBLE, MPI_MIN, comm));
  std::vector<int64_t> at_index(extremes.size(), std::numeric_limits<int64_t>::max());
  size_t k = 0;
  for (int f = 0; f < nfields_; ++f)
    for (int l = 0; l < ends_.levels[f]; ++l, k += 2)
      for (int64_t i = 0; i < n; ++i) {
        const double v = values[f][l * n + i];
        if (v == extremes[k]) at_index[k] = std::min(at_index[k], index[i]);
        if (-v == extremes[k + 1]) at_index[k + 1] = std::min(at_index[k + 1], index[i]);
      }
  ISTHMUS_MPI(MPI_Allreduce(MPI_IN_PLACE, at_index.data(), static_cast<int>(at_index.size()), MPI_INT64_T, MPI_MIN, comm));
  int me = 0;
  ISTHMUS_MPI(MPI_Comm_rank(comm, &me));
  if (me != 0) return;
  const std::string& component = source ? ends_.src_component : ends_.dst_component;
  const int64_t nx = (source ? src_shape_ : dst_shape_).nx;
  const int64_t total = static_cast<int64_t>(sums.back());
  std::FILE* out = std::fopen((run_dir_ + "/isthmus_check_" + component + ".txt").c_str(), "a");
  if (!out) return;  // diagnostics only: a run is not stopped for them
  std::fprintf(out, "\n%s %s, date %d, %s: CHECK* diags :no mask:unweighted\n",
               source ? "CHECKIN" : "CHECKOUT", entry_where(e).c_str(), date,
               source ? "put (after BLASOLD)" : "get (after BLASNEW)");
  std::fprintf(out, "  array size      = %12lld\n  masked size     = %12lld\n", static_cast<long long>(total),
               static_cast<long long>(total));
  // the global index, 1-based, and its (i, j) on the grid's nx columns (OASIS's layout)
  auto at = [&](int64_t g) {
    const int64_t c = nx > 0 ? nx : total;
    std::fprintf(out, "(%6lld,%6lld) %9lld", static_cast<long long>(g % c + 1),
                 static_cast<long long>(g / c + 1), static_cast<long long>(g + 1));
  };
  k = 0;
  size_t fl = 0;
  for (int f = 0; f < nfields_; ++f)
    for (int l = 0; l < ends_.levels[f]; ++l, k += 2, ++fl) {
      const std::string name = level_name(source ? e.src_names[f] : e.dst_names[f], l, ends_.levels[f]);
      const char* c = name.c_str();
      if (total == 0) {
        std::fprintf(out, "CHECK* diags, fld= %s NO unmasked data so NO DIAGNOSTICS\n", c);
        continue;
      }
      std::fprintf(out, "CHECK* diags, fld= %s :no mask:unweighted\n", c);
      std::fprintf(out, "  minimum value   = %24.16g %s\n     min val at   = ", extremes[k], c);
      at(at_index[k]);
      std::fprintf(out, " %s\n  maximum value   = %24.16g %s\n     max val at   = ", c, -extremes[k + 1], c);
      at(at_index[k + 1]);
      std::fprintf(out, " %s\n  unweighted mean = %24.16g %s\n  unweighted sum  = %24.16g %s\n", c,
                   sums[fl] / static_cast<double>(total), c, sums[fl], c);
    }
  std::fclose(out);
}

void Coupling::divide_by_fraction(double* const* dst, int date) {
  // OASIS3-MCT 5.0 (oasis_advance_map): divided where the mapped fraction is not 0; where it is
  // 0 the mapped value must be 0 too (no fraction, nothing weighed), and stays so
  const int64_t n = ends_.dst_points.size();
  for (int f = 0; f < nfields_; ++f) {
    double* y = dst[f];
    const std::vector<double>& d = fw_den_[f];
    for (size_t i = 0; i < d.size(); ++i) {
      if (d[i] != 0.0) {
        y[i] /= d[i];
      } else if (y[i] != 0.0) {
        const int64_t g = ends_.dst_points.indices()[static_cast<size_t>(i) % n];
        fail(ISTHMUS_ERR_ARG, "get of ", ends_.entry->dst_names[f], " at date ", date, " (",
             entry_where(*ends_.entry), "): at destination point ", g, " (0-based) level ",
             static_cast<int64_t>(i) / n, " the mapped fracwgt is 0 but the mapped field times "
             "fracwgt is ", y[i], ": the fractions of its links cancel out (negative fractions "
             "or weights); OASIS3-MCT stops there too");
      }
    }
  }
}

void Coupling::set_wait_timeout(double seconds, std::function<std::string(int)> describe_peer) {
  if (!exchanges()) return;
  if (mapping_) mapping_->set_wait_timeout(seconds, std::move(describe_peer));  // its node stage too
  else redist_->set_wait_timeout(seconds, std::move(describe_peer));
}

}  // namespace isthmus::coupler
