#include "coupler/config.h"

#include <sstream>

#include "coupler/config_words.h"

namespace isthmus::coupler {

const char* field_status_name(FieldStatus s) {
  switch (s) {
    case FieldStatus::Exported: return "EXPORTED";
    case FieldStatus::Expout: return "EXPOUT";
    case FieldStatus::Input: return "INPUT";
    case FieldStatus::Output: return "OUTPUT";
  }
  return "?";
}

const char* time_op_name(TimeOp t) {
  switch (t) {
    case TimeOp::Instant: return "INSTANT";
    case TimeOp::Accumul: return "ACCUMUL";
    case TimeOp::Average: return "AVERAGE";
    case TimeOp::TMin: return "T_MIN";
    case TimeOp::TMax: return "T_MAX";
  }
  return "?";
}

bool operator==(const MappingSpec& a, const MappingSpec& b) {
  return a.file == b.file && a.side == b.side && a.side_given == b.side_given &&
         a.location == b.location && a.strategy == b.strategy;
}

bool operator==(const ScriprSpec& a, const ScriprSpec& b) {
  return a.method == b.method && a.grid_type == b.grid_type && a.field_type == b.field_type &&
         a.normalization == b.normalization && a.order == b.order &&
         a.nb_neighbours == b.nb_neighbours && a.gaussian_variance == b.gaussian_variance &&
         a.restriction == b.restriction && a.nbins == b.nbins &&
         a.north_thresh == b.north_thresh && a.south_thresh == b.south_thresh;
}

bool operator==(const ConservSpec& a, const ConservSpec& b) {
  return a.type == b.type && a.sum == b.sum && a.option == b.option;
}

bool operator==(const BlasSpec& a, const BlasSpec& b) {
  return a.scale == b.scale && a.add == b.add && a.has_add == b.has_add;
}

bool operator==(const Overlap& a, const Overlap& b) {
  return a.kind == b.kind && a.points == b.points;
}

bool operator==(const UnusedKeyword& a, const UnusedKeyword& b) {
  return a.keyword == b.keyword && a.value == b.value;
}

bool operator==(const Entry& a, const Entry& b) {
  return a.src_names == b.src_names && a.dst_names == b.dst_names && a.index == b.index &&
         a.period == b.period && a.restart_file == b.restart_file && a.status == b.status &&
         a.src_grid == b.src_grid && a.dst_grid == b.dst_grid && a.src_nx == b.src_nx &&
         a.src_ny == b.src_ny && a.dst_nx == b.dst_nx && a.dst_ny == b.dst_ny && a.lag == b.lag &&
         a.seq == b.seq && a.src_overlap == b.src_overlap && a.dst_overlap == b.dst_overlap &&
         a.transformations == b.transformations && a.loctrans == b.loctrans &&
         a.mapping == b.mapping && a.scripr == b.scripr && a.conserv == b.conserv &&
         a.blasold == b.blasold && a.blasnew == b.blasnew && a.checkin == b.checkin &&
         a.checkout == b.checkout && a.input_file == b.input_file;
}

bool operator==(const Config& a, const Config& b) {
  return a.models == b.models && a.runtime == b.runtime && a.nlogprt == b.nlogprt &&
         a.tlogprt == b.tlogprt && a.nfields == b.nfields && a.nunitno == b.nunitno &&
         a.nmapdec == b.nmapdec && a.nmatxrd == b.nmatxrd && a.nwgtopt == b.nwgtopt &&
         a.nnorest == b.nnorest && a.ncdftyp == b.ncdftyp && a.unused == b.unused &&
         a.entries == b.entries;
}

std::string entry_where(const Entry& e) {
  return "entry " + colon_group(e.src_names) + " (line " + std::to_string(e.line) + ")";
}

std::string colon_group(const std::vector<std::string>& names) {
  std::string s;
  for (size_t i = 0; i < names.size(); ++i) s += (i ? ":" : "") + names[i];
  return s;
}

std::string scripr_file_name(const Entry& e) {
  std::string name = "rmp_" + e.src_grid + "_to_" + e.dst_grid + "_";
  if (!e.scripr) return name + "NONE.nc";
  name += e.scripr->method;
  if (e.scripr->method == "CONSERV") name += "_" + e.scripr->normalization;
  return name + ".nc";
}

namespace {

const char* side_text(MapSide s) {
  switch (s) {
    case MapSide::Dst: return "destination side, fixed link order (bit-for-bit)";
    case MapSide::Src: return "source side, partial sums (not bit-for-bit across decompositions)";
    case MapSide::Auto: return "side chosen by isthmus";
  }
  return "?";
}

const char* sum_text(SumMethod s) {
  switch (s) {
    case SumMethod::Reprosum: return "reprosum (reproducible)";
    case SumMethod::Gather: return "gather (ordered sum on one rank)";
    case SumMethod::Lsum8: return "lsum8 (local double sums, one allreduce)";
    case SumMethod::Lsum16: return "lsum16 (local quadruple sums, one allreduce)";
    case SumMethod::Ddpdd: return "ddpdd (double-double)";
  }
  return "?";
}

std::string grid_text(const std::string& name, int64_t nx, int64_t ny,
                      const std::optional<Overlap>& o) {
  std::ostringstream s;
  s << name;
  if (nx) s << " (" << nx << " x " << ny << ")";
  if (o) s << (o->kind == 'P' ? ", periodic" : ", regional") << ", " << o->points << " overlap";
  return s.str();
}

}  // namespace

std::string describe(const Config& c) {
  std::ostringstream s;
  s << c.file << ": " << c.entries.size() << (c.entries.size() == 1 ? " entry" : " entries")
    << " ($NFIELDS " << c.nfields << "), run time " << c.runtime << " s\n";
  if (!c.models.empty()) {
    s << "  models ($NBMODEL, OASIS3-MCT 2.0-3.0):";
    for (const auto& m : c.models) s << ' ' << m;
    s << "\n";
  }
  s << "  log level " << c.nlogprt << ", time statistics " << c.tlogprt << "\n";
  if (c.nunitno)
    s << "  $NUNITNO " << c.nunitno->first << " " << c.nunitno->second
      << ": Fortran unit numbers, no effect in isthmus\n";
  if (!c.nmapdec.empty())
    s << "  $NMAPDEC " << c.nmapdec << ": no effect (isthmus routes the links itself)\n";
  if (!c.nmatxrd.empty())
    s << "  $NMATXRD " << c.nmatxrd << ": no effect (each rank reads a slab of the weights)\n";
  if (!c.nwgtopt.empty()) s << "  $NWGTOPT " << c.nwgtopt << ": weights outside the grid\n";
  if (c.nnorest)
    s << "  $NNOREST " << (*c.nnorest ? "true: a missing restart file starts from zero"
                                      : "false: a missing restart file is an error")
      << "\n";
  if (!c.ncdftyp.empty()) s << "  $NCDFTYP " << c.ncdftyp << ": NetCDF format of written files\n";
  for (const auto& u : c.unused)
    s << "  $" << u.keyword << (u.value.empty() ? "" : " " + u.value)
      << ": unused since OASIS3-MCT, no effect\n";
  for (size_t i = 0; i < c.entries.size(); ++i) {
    const Entry& e = c.entries[i];
    s << "entry " << i + 1 << " (line " << e.line << "): " << colon_group(e.src_names);
    if (e.status != FieldStatus::Input && e.status != FieldStatus::Output)
      s << " -> " << colon_group(e.dst_names);
    s << ", " << field_status_name(e.status) << ", every " << e.period << " s";
    if (e.src_names.size() > 1) s << ", " << e.src_names.size() << " fields in one exchange";
    s << "\n";
    if (e.status == FieldStatus::Input) {
      s << "  read from " << e.input_file << "\n";
      continue;
    }
    if (e.status == FieldStatus::Output)
      s << "  grid " << grid_text(e.src_grid, e.src_nx, e.src_ny, e.src_overlap) << "\n";
    else
      s << "  grids " << grid_text(e.src_grid, e.src_nx, e.src_ny, e.src_overlap) << " -> "
        << grid_text(e.dst_grid, e.dst_nx, e.dst_ny, e.dst_overlap) << "\n";
    if (!e.restart_file.empty()) s << "  restart file " << e.restart_file << "\n";
    if (e.lag || e.seq) s << "  LAG " << e.lag << " s" << (e.seq ? ", SEQ " : "")
                          << (e.seq ? std::to_string(e.seq) : std::string()) << "\n";
    s << "  time operation " << time_op_name(e.loctrans.value_or(TimeOp::Instant)) << "\n";
    if (e.checkin) s << "  CHECKIN: min, max, sum of the source field to the log\n";
    if (e.blasold)
      s << "  BLASOLD: source field * " << words::real_text(e.blasold->scale) << " + "
        << words::real_text(e.blasold->add) << "\n";
    if (e.scripr) {
      const ScriprSpec& r = *e.scripr;
      s << "  SCRIPR " << r.method << " (" << r.grid_type << " source grid";
      if (r.method == "CONSERV") s << ", " << r.normalization << ", " << r.order << " order";
      if (r.nb_neighbours) s << ", " << r.nb_neighbours << " neighbours";
      if (r.method == "GAUSWGT") s << ", variance " << words::real_text(r.gaussian_variance);
      if (r.north_thresh)
        s << ", thresholds " << words::real_text(*r.north_thresh) << " / "
          << words::real_text(*r.south_thresh);
      s << ")";
      if (!e.mapping) s << ": weights from " << scripr_file_name(e);
      s << "\n";
    }
    if (e.mapping)
      s << "  MAPPING weights " << e.mapping->file << ", " << side_text(e.mapping->side)
        << (e.mapping->side_given ? " (forced)" : "") << "\n";
    if (e.conserv)
      s << "  CONSERV " << words::conserv_type_name(e.conserv->type) << ", global sums: "
        << sum_text(e.conserv->sum) << "\n";
    if (e.blasnew)
      s << "  BLASNEW: target field * " << words::real_text(e.blasnew->scale) << " + "
        << words::real_text(e.blasnew->add) << "\n";
    if (e.checkout) s << "  CHECKOUT: min, max, sum of the target field to the log\n";
  }
  return s.str();
}

}  // namespace isthmus::coupler
