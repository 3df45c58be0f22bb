#include "coupler/field_files.h"

#include <netcdf.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <optional>

#include "base/agreement.h"
#include "base/error.h"
#include "base/hash.h"
#include "coupler/config.h"
#include "remap/nc_file.h"
#include "xmap/xmap.h"
#include "base/wait.h"

namespace isthmus::coupler {

// ---- Names -----------------------------------------------------------------------------------

namespace {

std::string formatted(const char* fmt, int value) {
  char buf[32];
  std::snprintf(buf, sizeof buf, fmt, value);
  return buf;
}

int oasis2_code(TimeOp op) {
  switch (op) {  // ip_instant .. ip_max in OASIS's mod_oasis_parameters.F90
    case TimeOp::Instant: return 1;
    case TimeOp::Average: return 2;
    case TimeOp::Accumul: return 3;
    case TimeOp::TMin: return 4;
    case TimeOp::TMax: return 5;
  }
  return 0;
}

}  // namespace

std::string level_name(const std::string& field, int level, int nlevels) {
  if (nlevels <= 1) return field;
  return field + formatted(".%03d", level + 1);  // OASIS's bundle levels count from 1
}
std::string loctrans_prefix(int entry) { return formatted("loc%06d_", entry); }
std::string loctrans_counter_name(int entry) { return formatted("loc%06d_cnt", entry); }
std::string loctrans_prefix_oasis2(TimeOp op) { return formatted("loc%02d_", oasis2_code(op)); }
std::string loctrans_counter_name_oasis2(TimeOp op) {
  return formatted("loc%02d_cnt", oasis2_code(op));
}
std::string term_prefix(int t) { return formatted("av%d_", t); }
std::string fracwgt_prefix(int entry) { return formatted("avfw%06d_", entry); }
std::string term_loctrans_prefix(int t, const std::string& loctrans_prefix) {
  return formatted("av%d", t) + loctrans_prefix;
}
std::string output_file_name(const std::string& level, const std::string& component, int entry) {
  return level + "_" + component + formatted("_%02d", entry) + ".nc";
}
std::string input_file_name(const std::string& level, const std::string& component) {
  return level + "_" + component + ".nc";
}

// ---- The gather to rank 0 ------------------------------------------------------------------

class RootGather {
 public:
  // Concludes `agreement` (the caller's checks) over comm.
  RootGather(MPI_Comm comm, const IndexList& points, int64_t global_size, Agreement& agreement) {
    int rank = 0;
    ISTHMUS_MPI(MPI_Comm_rank(comm, &rank));
    root_ = rank == 0;
    const int64_t start = 0, length = global_size;
    // A rank's list may be unusable (its caller's check failed): the map's agreement still runs.
    IndexList all;
    agreement.check([&] { all = IndexList::from_segments(global_size, &start, &length, root_ ? 1 : 0); });
    XmapOptions opt;
    opt.fill_unowned = true;  // points of the grid no rank holds are written as 0 (OASIS: 0 too)
    xmap_ = std::make_shared<Xmap>(comm, &points, &all, opt, agreement);
    Agreement redist_agreement;
    redist_ = std::make_unique<Redist>(xmap_, std::vector<FieldSpec>{{DataType::Double, 1}},
                                       Method::Auto, redist_agreement, comm);
    local_size_ = points.size();
    global_size_ = root_ ? global_size : 0;
  }
  bool root() const { return root_; }
  int64_t local_size() const { return local_size_; }
  int64_t global_size() const { return global_size_; }
  void gather(const double* local, double* global) {
    const void* in[1] = {local};
    void* out[1] = {global};
    redist_->exchange(in, out);
  }
  void scatter(const double* global, double* local) {
    const void* in[1] = {global};
    void* out[1] = {local};
    redist_->exchange_reverse(in, out);
  }

 private:
  bool root_ = false;
  int64_t local_size_ = 0, global_size_ = 0;
  std::shared_ptr<Xmap> xmap_;
  std::unique_ptr<Redist> redist_;
};

namespace {

// ---- Agreed outcome of the writer rank ------------------------------------------------------

// Rank 0's first failure, kept while it goes on taking part in the exchanges, then told to
// every rank in one broadcast so that all throw the same code and the same message.
class Outcome {
 public:
  template <typename F>
  void run(F&& f) {
    if (error_) return;
    try {
      f();
    } catch (const Error& e) {
      error_ = e;
    } catch (const std::bad_alloc&) {
      error_ = Error(ISTHMUS_ERR_NOMEM, "out of memory");
    } catch (const std::exception& e) {
      error_ = Error(ISTHMUS_ERR_INTERNAL, e.what());
    }
  }
  bool failed() const { return error_.has_value(); }
  void share(MPI_Comm comm) const {
    struct {
      int code;
      char message[1000];
    } note{};
    note.code = ISTHMUS_OK;
    if (error_) {
      note.code = error_->code();
      std::strncpy(note.message, error_->what(), sizeof note.message - 1);
    }
    ISTHMUS_MPI(wmpi::Bcast(&note, static_cast<int>(sizeof note), MPI_BYTE, 0, comm));
    note.message[sizeof note.message - 1] = '\0';
    if (note.code != ISTHMUS_OK) throw Error(note.code, note.message);
  }

 private:
  std::optional<Error> error_;
};

// ---- Argument checks -------------------------------------------------------------------------

uint64_t hash_string(uint64_t h, const std::string& s) {
  for (unsigned char c : s) h = mix64(h ^ c);
  return mix64(h ^ s.size());
}

int64_t checked_global_size(GridShape shape) {
  if (shape.nx <= 0 || shape.ny <= 0)
    fail(ISTHMUS_ERR_ARG, "grid shape ", shape.nx, " x ", shape.ny, " is not positive");
  if (shape.nx > INT32_MAX || shape.ny > INT32_MAX)
    fail(ISTHMUS_ERR_ARG, "grid shape ", shape.nx, " x ", shape.ny, " is too large");
  return shape.nx * shape.ny;
}

// Local checks of a call's fields and the matches every rank must agree on.
// The fields' own checks and what every rank must agree on: names, levels, types, arrays where
// this rank holds `local` points.
void check_field_list(Agreement& a, int64_t local, const std::vector<FieldData>& fields) {
  a.check([&] {
    for (size_t f = 0; f < fields.size(); ++f) {
      const FieldData& d = fields[f];
      if (d.name.empty()) fail(ISTHMUS_ERR_ARG, "field ", f, " has no name");
      if (d.nlevels < 1 || d.nlevels > 999)
        fail(ISTHMUS_ERR_ARG, "field \"", d.name, "\" has ", d.nlevels, " levels (1 to 999)");
      if (d.type != DataType::Double && d.type != DataType::Float)
        fail(ISTHMUS_ERR_ARG, "field \"", d.name, "\" has type ", type_name(d.type),
             " (double or float)");
      if (local > 0 && !d.data)
        fail(ISTHMUS_ERR_ARG, "field \"", d.name, "\" has no data but this rank holds ", local,
             " points");
    }
  });
  uint64_t h = 0;
  for (const FieldData& d : fields) h = mix64(hash_string(h, d.name) ^ uint64_t(d.nlevels));
  a.match("the number of fields", static_cast<int64_t>(fields.size()));
  a.match_hash("the field names and levels", h >> 2);
}

// The grid of a file: the points cover nx * ny, the same nx and ny on every rank.
void check_grid(Agreement& a, const IndexList& points, GridShape shape) {
  a.check([&] {
    const int64_t n = checked_global_size(shape);
    if (points.global_size() != n)
      fail(ISTHMUS_ERR_ARG, "the points' global size ", points.global_size(),
           " is not nx * ny = ", shape.nx, " * ", shape.ny);
  });
  a.match("nx", shape.nx);
  a.match("ny", shape.ny);
}

void check_fields(Agreement& a, const IndexList& points, GridShape shape,
                  const std::vector<FieldData>& fields) {
  check_grid(a, points, shape);
  check_field_list(a, points.size(), fields);
}

// One level of a field as doubles (the field's own array when it is double).
const double* level_as_double(const FieldData& d, int level, int64_t n, std::vector<double>& buf) {
  if (d.type == DataType::Double) return static_cast<const double*>(d.data) + level * n;
  buf.resize(n);
  const float* x = static_cast<const float*>(d.data) + level * n;
  for (int64_t i = 0; i < n; ++i) buf[i] = x[i];
  return buf.data();
}
void store_level(const FieldData& d, int level, int64_t n, const double* values) {
  if (n == 0) return;
  if (d.type == DataType::Double) {
    std::memcpy(static_cast<double*>(d.data) + level * n, values, n * sizeof(double));
  } else {
    float* x = static_cast<float*>(d.data) + level * n;
    for (int64_t i = 0; i < n; ++i) x[i] = static_cast<float>(values[i]);
  }
}

// ---- netCDF on the writer rank --------------------------------------------------------------

using remap::NcFile;

int64_t dim_length(const NcFile& f, int dim) {
  size_t len = 0;
  f.check(nc_inq_dimlen(f.id(), dim, &len), "read the length of a dimension");
  return static_cast<int64_t>(len);
}

std::string dim_text(const NcFile& f, const std::vector<int>& dims) {
  std::string s = "(";
  for (size_t i = 0; i < dims.size(); ++i) {
    char name[NC_MAX_NAME + 1] = {};
    nc_inq_dimname(f.id(), dims[i], name);
    s += (i ? ", " : "") + std::string(name) + " = " + std::to_string(dim_length(f, dims[i]));
  }
  return s + ")";
}

std::vector<int> var_dims(const NcFile& f, int var) {
  int nd = 0;
  f.check(nc_inq_varndims(f.id(), var, &nd), "read the dimensions of a variable");
  std::vector<int> dims(nd);
  if (nd > 0) f.check(nc_inq_vardimid(f.id(), var, dims.data()), "read the dimensions of a variable");
  return dims;
}

// A variable read as a whole field: 1-D or 2-D with nx * ny values, double or float (OASIS's
// oasis_io_read_avfile accepts both shapes), or integer (the masks of OASIS's masks.nc).
int field_variable(const NcFile& f, const std::string& name, int64_t n, GridShape shape) {
  int var = -1;
  if (nc_inq_varid(f.id(), name.c_str(), &var) != NC_NOERR)
    fail(ISTHMUS_ERR_FILE, f.name(), ": no variable \"", name, "\"");
  nc_type type = NC_NAT;
  f.check(nc_inq_vartype(f.id(), var, &type), "read the type of variable " + name);
  if (type != NC_DOUBLE && type != NC_FLOAT && type != NC_INT && type != NC_SHORT &&
      type != NC_BYTE && type != NC_INT64)
    fail(ISTHMUS_ERR_FILE, f.name(), ": variable \"", name, "\" is not a number");
  const std::vector<int> dims = var_dims(f, var);
  int64_t size = 1;
  for (int d : dims) size *= dim_length(f, d);
  if (dims.empty() || dims.size() > 2 || size != n)
    fail(ISTHMUS_ERR_FILE, f.name(), ": variable \"", name, "\" has dimensions ", dim_text(f, dims),
         ", expected ", shape.nx, " x ", shape.ny, " = ", n, " points in 1 or 2 dimensions");
  return var;
}

// The dimension `name` of length `len`, defined if missing.
int dimension(const NcFile& f, const std::string& name, int64_t len, const std::string& var) {
  int dim = -1;
  if (nc_inq_dimid(f.id(), name.c_str(), &dim) == NC_NOERR) {
    if (len != NC_UNLIMITED && dim_length(f, dim) != len)
      fail(ISTHMUS_ERR_FILE, f.name(), ": dimension \"", name, "\" of variable \"", var,
           "\" has length ", dim_length(f, dim), ", expected ", len);
    return dim;
  }
  f.check(nc_def_dim(f.id(), name.c_str(), static_cast<size_t>(len), &dim),
          "define dimension " + name);
  return dim;
}

// The variable `name` of `type` over `dims`, defined if missing; an existing one must match.
int variable(const NcFile& f, const std::string& name, nc_type type, const std::vector<int>& dims) {
  int var = -1;
  if (nc_inq_varid(f.id(), name.c_str(), &var) == NC_NOERR) {
    nc_type t = NC_NAT;
    f.check(nc_inq_vartype(f.id(), var, &t), "read the type of variable " + name);
    const std::vector<int> have = var_dims(f, var);
    if (t != type || have != dims)
      fail(ISTHMUS_ERR_FILE, f.name(), ": variable \"", name, "\" exists with another type or ",
           "dimensions ", dim_text(f, have), " than the one to write ", dim_text(f, dims));
    return var;
  }
  f.check(nc_def_var(f.id(), name.c_str(), type, static_cast<int>(dims.size()), dims.data(), &var),
          "define variable " + name);
  return var;
}

// A name beside `path` for the copy that replaces it.
std::string temporary_name(const std::string& path) {
  int world = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &world);
  return path + ".tmp-isthmus-" + std::to_string(::getpid()) + "-" + std::to_string(world);
}

void replace(const std::string& tmp, const std::string& path, const std::string& what) {
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::filesystem::remove(tmp, ec);
    fail(ISTHMUS_ERR_FILE, "cannot replace the ", what, ": ", ec.message());
  }
}

// Starts a copy of `path` (or a new file) under a temporary name, in define mode; messages name
// it `what`, by the file it replaces.
void begin_copy(std::optional<NcFile>& f, const std::string& what, const std::string& path,
                const std::string& tmp, bool keep_old) {
  std::error_code ec;
  if (keep_old && std::filesystem::exists(path, ec)) {
    std::filesystem::copy_file(path, tmp, std::filesystem::copy_options::overwrite_existing, ec);
    if (ec) fail(ISTHMUS_ERR_FILE, "cannot copy the ", what, ": ", ec.message());
    try {
      f.emplace(tmp, NcFile::Mode::Define, what);
    } catch (...) {
      std::filesystem::remove(tmp, ec);
      throw;
    }
  } else {
    f.emplace(tmp, NcFile::Mode::Create, what);
  }
}

}  // namespace

// ---- Restart files ------------------------------------------------------------------------

void write_restart(MPI_Comm comm, const std::string& path, const IndexList& points,
                   GridShape shape, const std::string& prefix, const std::vector<FieldData>& fields,
                   const std::vector<RestartCounter>& counters) {
  Agreement a;
  check_fields(a, points, shape, fields);
  a.check([&] {
    if (path.empty()) fail(ISTHMUS_ERR_ARG, "the restart file name is empty");
    for (const RestartCounter& c : counters)
      if (c.name.empty() || c.values.empty())
        fail(ISTHMUS_ERR_ARG, "a restart counter has no name or no values");
  });
  a.match("the number of counters", static_cast<int64_t>(counters.size()));
  const int64_t n = shape.nx * shape.ny;
  RootGather g(comm, points, n, a);

  Outcome out;
  std::optional<NcFile> f;
  const std::string what = NcFile::named("restart", path);
  const std::string tmp = g.root() ? temporary_name(path) : std::string();
  std::vector<int> vars;
  if (g.root()) {
    out.run([&] {
      begin_copy(f, what, path, tmp, true);
      for (const FieldData& d : fields)
        for (int l = 0; l < d.nlevels; ++l) {
          const std::string v = prefix + level_name(d.name, l, d.nlevels);
          // A variable the file has already (the restart file a user prepared, whatever
          // its dimensions are called) is written in place when it holds nx * ny numbers in
          // 1 or 2 dimensions, as OASIS's oasis_io_write_avfile does; otherwise it is
          // defined, nx first as OASIS does; Fortran (nx, ny) is C (ny, nx): global index
          // i + nx * j at [j][i].
          int have = -1;
          if (nc_inq_varid(f->id(), v.c_str(), &have) == NC_NOERR) {
            vars.push_back(field_variable(*f, v, n, shape));
            continue;
          }
          const int nx = dimension(*f, v + "_nx", shape.nx, v);
          const int ny = dimension(*f, v + "_ny", shape.ny, v);
          vars.push_back(variable(*f, v, NC_DOUBLE, {ny, nx}));
        }
      for (const RestartCounter& c : counters)
        vars.push_back(variable(*f, c.name, NC_INT,
                                {dimension(*f, c.name + "_ncnt", int64_t(c.values.size()), c.name)}));
      f->check(nc_enddef(f->id()), "end the definitions");
    });
  }
  std::vector<double> global(g.global_size()), buf;
  size_t k = 0;
  for (const FieldData& d : fields)
    for (int l = 0; l < d.nlevels; ++l, ++k) {
      g.gather(level_as_double(d, l, points.size(), buf), global.data());
      if (g.root())
        out.run([&] {
          f->check(nc_put_var_double(f->id(), vars[k], global.data()),
                  "write variable " + prefix + level_name(d.name, l, d.nlevels));
        });
    }
  if (g.root()) {
    out.run([&] {
      for (const RestartCounter& c : counters)
        f->check(nc_put_var_int(f->id(), vars[k++], c.values.data()), "write variable " + c.name);
      f->close();
      replace(tmp, path, what);
    });
    if (out.failed()) {
      f.reset();
      std::error_code ec;
      std::filesystem::remove(tmp, ec);
    }
  }
  out.share(comm);
}

namespace {

// kind: what the file is, for messages ("restart", "grid")
void read_fields(const char* kind, MPI_Comm comm, const std::string& path, const IndexList& points,
                 GridShape shape, const std::string& prefix, const std::vector<FieldData>& fields,
                 std::vector<RestartCounter>* counters) {
  Agreement a;
  check_fields(a, points, shape, fields);
  uint64_t h = 0;
  if (counters)
    for (const RestartCounter& c : *counters) h = mix64(hash_string(h, c.name) ^ c.values.size());
  a.match_hash("the counters", counters ? std::optional<uint64_t>(h >> 2) : std::nullopt);
  const int64_t n = shape.nx * shape.ny;
  RootGather g(comm, points, n, a);

  // The header first: a missing variable fails before any data moves.
  Outcome header;
  std::optional<NcFile> f;
  const std::string what = NcFile::named(kind, path);
  std::vector<int> vars;
  if (g.root())
    header.run([&] {
      f.emplace(path, NcFile::Mode::Read, what);
      for (const FieldData& d : fields)
        for (int l = 0; l < d.nlevels; ++l)
          vars.push_back(field_variable(*f, prefix + level_name(d.name, l, d.nlevels), n, shape));
      if (counters)
        for (const RestartCounter& c : *counters) {
          int var = -1;
          if (nc_inq_varid(f->id(), c.name.c_str(), &var) != NC_NOERR)
            fail(ISTHMUS_ERR_FILE, what, ": no variable \"", c.name, "\"");
          const std::vector<int> dims = var_dims(*f, var);
          if (dims.size() != 1 || dim_length(*f, dims[0]) != int64_t(c.values.size()))
            fail(ISTHMUS_ERR_FILE, what, ": variable \"", c.name, "\" has dimensions ",
                 dim_text(*f, dims), ", expected ", c.values.size(), " values");
          vars.push_back(var);
        }
    });
  header.share(comm);

  Outcome out;
  std::vector<double> global(g.global_size()), local(points.size());
  size_t k = 0;
  for (const FieldData& d : fields)
    for (int l = 0; l < d.nlevels; ++l, ++k) {
      if (g.root())
        out.run([&] {
          f->check(nc_get_var_double(f->id(), vars[k], global.data()),
                  "read variable " + prefix + level_name(d.name, l, d.nlevels));
        });
      g.scatter(global.data(), local.data());
      store_level(d, l, points.size(), local.data());
    }
  if (g.root() && counters)
    out.run([&] {
      for (RestartCounter& c : *counters)
        f->check(nc_get_var_int(f->id(), vars[k++], c.values.data()), "read variable " + c.name);
    });
  out.share(comm);
  if (counters)
    for (RestartCounter& c : *counters)
      ISTHMUS_MPI(wmpi::Bcast(c.values.data(), static_cast<int>(c.values.size()), MPI_INT, 0, comm));
}

}  // namespace

void read_restart(MPI_Comm comm, const std::string& path, const IndexList& points,
                  GridShape shape, const std::string& prefix, const std::vector<FieldData>& fields,
                  std::vector<RestartCounter>* counters) {
  read_fields("restart", comm, path, points, shape, prefix, fields, counters);
}

void read_grid_fields(MPI_Comm comm, const std::string& path, const IndexList& points,
                      GridShape shape, const std::vector<FieldData>& fields) {
  read_fields("grid", comm, path, points, shape, "", fields, nullptr);
}

bool restart_has_variable(MPI_Comm comm, const std::string& path, const std::string& name) {
  int rank = 0;
  ISTHMUS_MPI(MPI_Comm_rank(comm, &rank));
  int has = 0;
  if (rank == 0) {
    // A question, not a read: a file that cannot be opened has no such variable.
    int id = -1, var = -1;
    if (nc_open(path.c_str(), NC_NOWRITE, &id) == NC_NOERR) {
      has = nc_inq_varid(id, name.c_str(), &var) == NC_NOERR ? 1 : 0;
      nc_close(id);
    }
  }
  ISTHMUS_MPI(wmpi::Bcast(&has, 1, MPI_INT, 0, comm));
  return has == 1;
}

// ---- Output files -----------------------------------------------------------------------------

namespace {

// Appends record `date` to an OASIS output file, or starts it anew (oasis_io_write_avfbf).
void write_output_record(const std::string& path, const std::string& var, GridShape shape,
                         int date, const double* values) {
  std::optional<NcFile> f;
  const std::string what = NcFile::named("output", path);
  std::error_code ec;
  if (std::filesystem::exists(path, ec)) {
    f.emplace(path, NcFile::Mode::Read, what);
    int time_dim = -1, time_var = -1;
    bool fresh = nc_inq_dimid(f->id(), "time", &time_dim) != NC_NOERR ||
                 nc_inq_varid(f->id(), "time", &time_var) != NC_NOERR;
    size_t records = 0;
    if (!fresh) {
      records = static_cast<size_t>(dim_length(*f, time_dim));
      std::vector<int> times(records);
      if (records > 0) f->check(nc_get_var_int(f->id(), time_var, times.data()), "read the time");
      for (int t : times)
        if (t >= date) fresh = true;  // a run done again: OASIS starts the file anew
    }
    f.reset();
    if (!fresh) {
      // Appending in place: a copy per record would cost the whole file at every date.
      f.emplace(path, NcFile::Mode::Write, what);
      int v = -1;
      if (nc_inq_varid(f->id(), var.c_str(), &v) != NC_NOERR)
        fail(ISTHMUS_ERR_FILE, what, ": no variable \"", var, "\"");
      const std::vector<int> dims = var_dims(*f, v);
      if (dims.size() != 3 || dims[0] != time_dim || dim_length(*f, dims[1]) != shape.ny ||
          dim_length(*f, dims[2]) != shape.nx)
        fail(ISTHMUS_ERR_FILE, what, ": variable \"", var, "\" has dimensions ",
             dim_text(*f, dims), ", expected (time, ny = ", shape.ny, ", nx = ", shape.nx, ")");
      const size_t t0 = records, one = 1;
      f->check(nc_put_vara_int(f->id(), time_var, &t0, &one, &date), "write the time");
      const size_t start[3] = {records, 0, 0};
      const size_t count[3] = {1, size_t(shape.ny), size_t(shape.nx)};
      f->check(nc_put_vara_double(f->id(), v, start, count, values), "write variable " + var);
      f->close();
      return;
    }
  }
  const std::string tmp = temporary_name(path);
  try {
    begin_copy(f, what, path, tmp, false);
    const int nx = dimension(*f, "nx", shape.nx, var);
    const int ny = dimension(*f, "ny", shape.ny, var);
    const int time = dimension(*f, "time", NC_UNLIMITED, "time");
    const int time_var = variable(*f, "time", NC_INT, {time});
    const int v = variable(*f, var, NC_DOUBLE, {time, ny, nx});
    f->check(nc_enddef(f->id()), "end the definitions");
    const size_t t0 = 0, one = 1;
    f->check(nc_put_vara_int(f->id(), time_var, &t0, &one, &date), "write the time");
    const size_t start[3] = {0, 0, 0};
    const size_t count[3] = {1, size_t(shape.ny), size_t(shape.nx)};
    f->check(nc_put_vara_double(f->id(), v, start, count, values), "write variable " + var);
    f->close();
    replace(tmp, path, what);
  } catch (...) {
    f.reset();
    std::filesystem::remove(tmp, ec);
    throw;
  }
}

// Reads the record at `date` of an OASIS input file (oasis_io_read_avfbf): the last record
// whose time equals it.
void read_input_record(const std::string& path, const std::string& var, GridShape shape,
                       int date, double* values) {
  const NcFile f(path, NcFile::Mode::Read, NcFile::named("input", path));
  int time_dim = -1, time_var = -1;
  if (nc_inq_dimid(f.id(), "time", &time_dim) != NC_NOERR)
    fail(ISTHMUS_ERR_FILE, f.name(), ": no dimension \"time\"");
  if (nc_inq_varid(f.id(), "time", &time_var) != NC_NOERR)
    fail(ISTHMUS_ERR_FILE, f.name(), ": no variable \"time\"");
  const size_t records = static_cast<size_t>(dim_length(f, time_dim));
  std::vector<double> times(records);
  if (records > 0) f.check(nc_get_var_double(f.id(), time_var, times.data()), "read the time");
  std::optional<size_t> record;
  for (size_t r = 0; r < records; ++r)
    if (times[r] == date) record = r;
  if (!record)
    fail(ISTHMUS_ERR_FILE, f.name(), ": no record at time ", date, " (", records, " records",
         records ? ", from " + std::to_string(int64_t(times.front())) + " to " +
                       std::to_string(int64_t(times.back()))
                 : std::string(),
         ")");
  int v = -1;
  if (nc_inq_varid(f.id(), var.c_str(), &v) != NC_NOERR)
    fail(ISTHMUS_ERR_FILE, f.name(), ": no variable \"", var, "\"");
  nc_type type = NC_NAT;
  f.check(nc_inq_vartype(f.id(), v, &type), "read the type of variable " + var);
  const std::vector<int> dims = var_dims(f, v);
  int64_t size = 1;
  for (size_t i = 1; i < dims.size(); ++i) size *= dim_length(f, dims[i]);
  if ((type != NC_DOUBLE && type != NC_FLOAT) || dims.size() < 2 || dims.size() > 3 ||
      dims[0] != time_dim || size != shape.nx * shape.ny)
    fail(ISTHMUS_ERR_FILE, f.name(), ": variable \"", var, "\" has dimensions ", dim_text(f, dims),
         ", expected double or float (time, ny = ", shape.ny, ", nx = ", shape.nx, ")");
  size_t start[3] = {*record, 0, 0}, count[3] = {1, 1, 1};
  for (size_t i = 1; i < dims.size(); ++i) count[i] = size_t(dim_length(f, dims[i]));
  f.check(nc_get_vara_double(f.id(), v, start, count, values), "read variable " + var);
}

}  // namespace

namespace {

// The gather of an output or input file, once the points and the grid agree on every rank.
std::unique_ptr<RootGather> gather_for(MPI_Comm comm, const IndexList& points, GridShape shape) {
  Agreement a;
  check_grid(a, points, shape);
  return std::make_unique<RootGather>(comm, points, shape.nx * shape.ny, a);
}

}  // namespace

OutputFile::OutputFile(MPI_Comm comm, const IndexList& points, GridShape shape,
                       std::string component, int entry, std::string dir)
    : comm_(comm), shape_(shape), component_(std::move(component)), dir_(std::move(dir)),
      entry_(entry) {
  gather_ = gather_for(comm, points, shape);
}
OutputFile::~OutputFile() = default;

void OutputFile::write(int date, const std::vector<FieldData>& fields) {
  Agreement a;
  // The points are the gather's: only the field arguments are checked here.
  const int64_t local = gather_->local_size();
  check_field_list(a, local, fields);
  a.match("the date", date);
  a.conclude(comm_);

  Outcome out;
  std::vector<double> global(gather_->global_size()), buf;
  for (const FieldData& d : fields)
    for (int l = 0; l < d.nlevels; ++l) {
      gather_->gather(level_as_double(d, l, local, buf), global.data());
      if (gather_->root()) {
        const std::string v = level_name(d.name, l, d.nlevels);
        out.run([&] {
          write_output_record(dir_ + output_file_name(v, component_, entry_), v, shape_, date,
                              global.data());
        });
      }
    }
  out.share(comm_);
}

InputFile::InputFile(MPI_Comm comm, const IndexList& points, GridShape shape, std::string file,
                     std::string component, std::string dir)
    : comm_(comm), shape_(shape), file_(std::move(file)), component_(std::move(component)),
      dir_(std::move(dir)) {
  gather_ = gather_for(comm, points, shape);
}
InputFile::~InputFile() = default;

void InputFile::read(int date, const std::vector<FieldData>& fields) {
  Agreement a;
  const int64_t local = gather_->local_size();
  check_field_list(a, local, fields);
  a.match("the date", date);
  a.conclude(comm_);

  Outcome out;
  std::vector<double> global(gather_->global_size()), values(local);
  for (const FieldData& d : fields)
    for (int l = 0; l < d.nlevels; ++l) {
      if (gather_->root()) {
        const std::string v = level_name(d.name, l, d.nlevels);
        out.run([&] {
          const std::string path = dir_ + (file_.empty() ? input_file_name(v, component_) : file_);
          read_input_record(path, v, shape_, date, global.data());
        });
      }
      gather_->scatter(global.data(), values.data());
      store_level(d, l, local, values.data());
    }
  out.share(comm_);
}

}  // namespace isthmus::coupler
