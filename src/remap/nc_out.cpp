#include "remap/nc_out.h"

#include <netcdf.h>
#ifdef ISTHMUS_HAVE_PNETCDF
#include <pnetcdf.h>
#endif

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "base/error.h"
#include "base/hash.h"
#include "base/wait.h"

namespace isthmus::remap {

namespace {

// The largest message of a slab sent to rank 0 (netCDF-C way): MPI's counts are ints, and
// rank 0 holds one such piece at a time beside its own data.
constexpr int64_t kPieceBytes = int64_t{1} << 25;

nc_type nc_type_of(ParallelNcFile::Type t) {
  switch (t) {
    case ParallelNcFile::Byte: return NC_BYTE;
    case ParallelNcFile::Int: return NC_INT;
    case ParallelNcFile::Int64: return NC_INT64;
    case ParallelNcFile::Double: return NC_DOUBLE;
  }
  return NC_NAT;
}

template <typename T> MPI_Datatype mpi_type();
template <> MPI_Datatype mpi_type<double>() { return MPI_DOUBLE; }
template <> MPI_Datatype mpi_type<int>() { return MPI_INT; }
template <> MPI_Datatype mpi_type<long long>() { return MPI_LONG_LONG; }
template <> MPI_Datatype mpi_type<signed char>() { return MPI_SIGNED_CHAR; }

const char* error_text(bool parallel, int rc) {
#ifdef ISTHMUS_HAVE_PNETCDF
  if (parallel) return ncmpi_strerror(rc);
#endif
  (void)parallel;
  return nc_strerror(rc);
}

// ISTHMUS_PNETCDF=0 (or "no", "off") turns the parallel way off where it is built in.
bool parallel_wanted() {
  const char* v = std::getenv("ISTHMUS_PNETCDF");
  if (!v) return true;
  return !(std::strcmp(v, "0") == 0 || std::strcmp(v, "no") == 0 || std::strcmp(v, "off") == 0);
}

#ifdef ISTHMUS_HAVE_PNETCDF
int pn_put(int id, int var, const MPI_Offset* s, const MPI_Offset* c, const double* v) {
  return ncmpi_put_vara_double(id, var, s, c, v);
}
int pn_put(int id, int var, const MPI_Offset* s, const MPI_Offset* c, const int* v) {
  return ncmpi_put_vara_int(id, var, s, c, v);
}
int pn_put(int id, int var, const MPI_Offset* s, const MPI_Offset* c, const long long* v) {
  return ncmpi_put_vara_longlong(id, var, s, c, v);
}
int pn_put(int id, int var, const MPI_Offset* s, const MPI_Offset* c, const signed char* v) {
  return ncmpi_put_vara_schar(id, var, s, c, v);
}
#endif
int nc_put(int id, int var, const size_t* s, const size_t* c, const double* v) {
  return nc_put_vara_double(id, var, s, c, v);
}
int nc_put(int id, int var, const size_t* s, const size_t* c, const int* v) {
  return nc_put_vara_int(id, var, s, c, v);
}
int nc_put(int id, int var, const size_t* s, const size_t* c, const long long* v) {
  return nc_put_vara_longlong(id, var, s, c, v);
}
int nc_put(int id, int var, const size_t* s, const size_t* c, const signed char* v) {
  return nc_put_vara_schar(id, var, s, c, v);
}

}  // namespace

bool ParallelNcFile::parallel_available() {
#ifdef ISTHMUS_HAVE_PNETCDF
  return true;
#else
  return false;
#endif
}

bool ParallelNcFile::parallel_by_default() { return parallel_available() && parallel_wanted(); }

ParallelNcFile::ParallelNcFile(MPI_Comm comm, const std::string& path, bool cdf5)
    : comm_(comm), path_(path) {
  ISTHMUS_MPI(MPI_Comm_rank(comm, &rank_));
  ISTHMUS_MPI(MPI_Comm_size(comm, &nranks_));
  // Rank 0's choice for every rank (ISTHMUS_PNETCDF might be set on some ranks only).
  int parallel = parallel_by_default() ? 1 : 0;
  ISTHMUS_MPI(wmpi::Bcast(&parallel, 1, MPI_INT, 0, comm));
  parallel_ = parallel != 0 && parallel_available();
  const int mode = NC_CLOBBER | (cdf5 ? NC_64BIT_DATA : NC_64BIT_OFFSET);
  // ncmpi_create is collective: every rank calls it.
  int rc = NC_NOERR, id = -1;
  if (parallel_) {
#ifdef ISTHMUS_HAVE_PNETCDF
    rc = ncmpi_create(comm, path.c_str(), mode, MPI_INFO_NULL, &id);
    if (rc == NC_NOERR) {
      id_ = id;
      rc = ncmpi_set_fill(id_, NC_NOFILL, nullptr);
    }
#endif
  } else if (rank_ == 0) {
    rc = nc_create(path.c_str(), mode, &id);
    int old = 0;
    if (rc == NC_NOERR) {
      id_ = id;
      rc = nc_set_fill(id_, NC_NOFILL, &old);
    }
  }
  Agreement a;
  if (rc != NC_NOERR)
    a.record(ISTHMUS_ERR_FILE, failure("create", rc));
  try {
    a.conclude(comm);
  } catch (...) {
    close_quietly();
    throw;
  }
}

ParallelNcFile::~ParallelNcFile() { close_quietly(); }

std::string ParallelNcFile::failure(const std::string& what, int rc) const {
  return "cannot write the file \"" + path_ + "\": " + what + ": " + error_text(parallel_, rc);
}

void ParallelNcFile::close_quietly() {
  if (id_ < 0) return;
  const int id = id_;
  id_ = -1;
#ifdef ISTHMUS_HAVE_PNETCDF
  if (parallel_) {
    ncmpi_close(id);
    return;
  }
#endif
  nc_close(id);
}

int ParallelNcFile::def_dim(const std::string& name, int64_t len) {
  const int id = static_cast<int>(dim_len_.size());
  dim_len_.push_back(len);
  header_hash_ = mix64(hash_text(name, header_hash_) ^ static_cast<uint64_t>(len));
  pending_.check([&] {
    int rc = NC_NOERR, got = id;
#ifdef ISTHMUS_HAVE_PNETCDF
    if (parallel_) rc = ncmpi_def_dim(id_, name.c_str(), static_cast<MPI_Offset>(len), &got);
#endif
    if (!parallel_ && rank_ == 0) rc = nc_def_dim(id_, name.c_str(), static_cast<size_t>(len), &got);
    if (rc != NC_NOERR || got != id)
      fail(ISTHMUS_ERR_FILE, failure("dimension " + name + " (" + std::to_string(len) + ")", rc));
  });
  return id;
}

int ParallelNcFile::def_var(const std::string& name, Type type, const std::vector<int>& dims) {
  const int id = static_cast<int>(var_dims_.size());
  var_dims_.push_back(dims);
  header_hash_ = mix64(hash_text(name, header_hash_) ^ static_cast<uint64_t>(type));
  for (int d : dims) header_hash_ = mix64(header_hash_ ^ static_cast<uint64_t>(d));
  pending_.check([&] {
    int rc = NC_NOERR, got = id;
#ifdef ISTHMUS_HAVE_PNETCDF
    if (parallel_)
      rc = ncmpi_def_var(id_, name.c_str(), nc_type_of(type), int(dims.size()), dims.data(), &got);
#endif
    if (!parallel_ && rank_ == 0)
      rc = nc_def_var(id_, name.c_str(), nc_type_of(type), int(dims.size()), dims.data(), &got);
    if (rc != NC_NOERR || got != id)
      fail(ISTHMUS_ERR_FILE, failure("variable " + name, rc));
  });
  return id;
}

void ParallelNcFile::put_att_text(int var, const std::string& name, const std::string& value) {
  header_hash_ = hash_text(value, hash_text(name, mix64(header_hash_ ^ static_cast<uint64_t>(var))));
  pending_.check([&] {
    int rc = NC_NOERR;
#ifdef ISTHMUS_HAVE_PNETCDF
    if (parallel_)
      rc = ncmpi_put_att_text(id_, var, name.c_str(), static_cast<MPI_Offset>(value.size()), value.c_str());
#endif
    if (!parallel_ && rank_ == 0) rc = nc_put_att_text(id_, var, name.c_str(), value.size(), value.c_str());
    if (rc != NC_NOERR)
      fail(ISTHMUS_ERR_FILE, failure("attribute " + name, rc));
  });
}

void ParallelNcFile::enddef() {
  // PnetCDF's enddef is collective: every rank calls it, even after a failed definition (it
  // then fails on every rank, since it compares the ranks' headers).
  int rc = NC_NOERR;
#ifdef ISTHMUS_HAVE_PNETCDF
  if (parallel_) {
    rc = ncmpi_enddef(id_);
    // Each rank writes its own slabs when it has them: independent data mode.
    if (rc == NC_NOERR) rc = ncmpi_begin_indep_data(id_);
  }
#endif
  if (!parallel_ && rank_ == 0 && !pending_.failed()) rc = nc_enddef(id_);
  if (rc != NC_NOERR)
    pending_.record(ISTHMUS_ERR_FILE, failure("enddef", rc));
  // Every rank writes at the offsets its own header gives (PnetCDF): it must be rank 0's.
  pending_.match_hash("the definitions of the file (dimensions, variables, attributes)", header_hash_);
  conclude();
}

int64_t ParallelNcFile::row_length(int var) const {
  int64_t n = 1;
  const std::vector<int>& d = var_dims_[size_t(var)];
  for (size_t i = 1; i < d.size(); ++i) n *= dim_len_[size_t(d[i])];
  return n;
}

template <typename T>
int ParallelNcFile::put_local(int var, int64_t start, int64_t rows, const T* values) {
  if (rows == 0) return NC_NOERR;
  const std::vector<int>& d = var_dims_[size_t(var)];
#ifdef ISTHMUS_HAVE_PNETCDF
  if (parallel_) {
    std::vector<MPI_Offset> s(d.size(), 0), c(d.size());
    s[0] = start;
    c[0] = rows;
    for (size_t i = 1; i < d.size(); ++i) c[i] = dim_len_[size_t(d[i])];
    return pn_put(id_, var, s.data(), c.data(), values);
  }
#endif
  std::vector<size_t> s(d.size(), 0), c(d.size());
  s[0] = static_cast<size_t>(start);
  c[0] = static_cast<size_t>(rows);
  for (size_t i = 1; i < d.size(); ++i) c[i] = static_cast<size_t>(dim_len_[size_t(d[i])]);
  return nc_put(id_, var, s.data(), c.data(), values);
}

void ParallelNcFile::conclude() {
  Agreement done = std::move(pending_);
  pending_ = Agreement();
  done.conclude(comm_);
}

template <typename T>
void ParallelNcFile::put(int var, int64_t start, int64_t rows, const T* values) {
  Agreement& a = pending_;
  a.check([&] {
    if (var < 0 || var >= int(var_dims_.size()) || var_dims_[size_t(var)].empty() || start < 0 ||
        rows < 0 || (rows > 0 && !values))
      fail(ISTHMUS_ERR_ARG, "cannot write the file \"", path_, "\": variable ", var, ", rows [",
           start, ", ", start + rows, ") of ", rows > 0 && !values ? "no values" : "no such place");
    if (id_ < 0 && (parallel_ || rank_ == 0))
      fail(ISTHMUS_ERR_ARG, "cannot write the file \"", path_, "\": it is closed");
  });
  const auto write = [&](int64_t s, int64_t n, const T* v) {
    a.check([&] {
      const int rc = put_local(var, s, n, v);
      if (rc != NC_NOERR) {
        char name[NC_MAX_NAME + 1] = "?";
        if (!parallel_) nc_inq_varname(id_, var, name);
#ifdef ISTHMUS_HAVE_PNETCDF
        if (parallel_) ncmpi_inq_varname(id_, var, name);
#endif
        fail(ISTHMUS_ERR_FILE, failure(std::string(name) + " rows [" + std::to_string(s) + ", " +
                                           std::to_string(s + n) + ")",
                                       rc));
      }
    });
  };
  if (parallel_ || nranks_ == 1) {
    write(start, rows, values);
    return;
  }
  // Through rank 0, in rank order. A rank whose arguments failed sends nothing (0 rows).
  const int64_t mine[2] = {start, a.failed() ? 0 : rows};
  std::vector<int64_t> all(rank_ == 0 ? size_t(2 * nranks_) : 0);
  ISTHMUS_MPI(wmpi::Gather(mine, 2, MPI_INT64_T, all.data(), 2, MPI_INT64_T, 0, comm_));
  const int64_t len = a.failed() ? 1 : row_length(var);
  const int64_t piece = std::max<int64_t>(1, kPieceBytes / (std::max<int64_t>(1, len) * int64_t(sizeof(T))));
  if (rank_ == 0) {
    write(start, rows, values);
    std::vector<T> buf;
    for (int r = 1; r < nranks_; ++r)
      for (int64_t o = 0; o < all[size_t(2 * r + 1)]; o += piece) {
        const int64_t n = std::min(piece, all[size_t(2 * r + 1)] - o);
        buf.resize(size_t(n * len));
        ISTHMUS_MPI(wmpi::Recv(buf.data(), int(n * len), mpi_type<T>(), r, 31, comm_, MPI_STATUS_IGNORE));
        write(all[size_t(2 * r)] + o, n, buf.data());
      }
  } else {
    for (int64_t o = 0; o < mine[1]; o += piece) {
      const int64_t n = std::min(piece, mine[1] - o);
      ISTHMUS_MPI(wmpi::Send(values + o * len, int(n * len), mpi_type<T>(), 0, 31, comm_));
    }
  }
}

void ParallelNcFile::put_rows(int var, int64_t start, int64_t rows, const double* values) {
  put(var, start, rows, values);
}
void ParallelNcFile::put_rows(int var, int64_t start, int64_t rows, const int* values) {
  put(var, start, rows, values);
}
void ParallelNcFile::put_rows(int var, int64_t start, int64_t rows, const long long* values) {
  put(var, start, rows, values);
}
void ParallelNcFile::put_rows(int var, int64_t start, int64_t rows, const signed char* values) {
  put(var, start, rows, values);
}

void ParallelNcFile::close() {
  // Closed even after a failed put (PnetCDF's close is collective); the first failure is kept.
  Agreement closing;
  closing.check([&] {
    if (id_ < 0) return;
    const int id = id_;
    id_ = -1;
    int rc = NC_NOERR;
#ifdef ISTHMUS_HAVE_PNETCDF
    if (parallel_) {
      rc = ncmpi_end_indep_data(id);
      const int rc2 = ncmpi_close(id);
      if (rc == NC_NOERR) rc = rc2;
    }
#endif
    if (!parallel_) rc = nc_close(id);
    if (rc != NC_NOERR)
      fail(ISTHMUS_ERR_FILE, failure("close", rc));
  });
  if (closing.failed() && !pending_.failed()) pending_ = std::move(closing);
  conclude();
}

}  // namespace isthmus::remap
