// A netCDF file of the classic formats written by every rank of a communicator together: the
// weights writer's one mechanism for putting each rank's slabs of a variable in place.
//
// Two ways, one interface. Where isthmus was built with PnetCDF (Debian's libpnetcdf-dev, built
// for Open MPI: the default build), every rank writes its own slabs through MPI-IO, at the
// offsets the file's layout gives them; nothing travels to a writing rank. Elsewhere (MPICH and
// SimGrid builds, whose MPI that PnetCDF is not linked against, or ISTHMUS_PNETCDF=0 in the
// environment, e.g. on a file system whose MPI-IO misbehaves), rank 0 writes with netCDF-C what
// every rank sends it, slab after slab in rank order, in messages of at most 32 MiB. The files
// are the same to any netCDF reader (the header's padding may differ).
//
// Every method is collective: every rank of comm calls it, in the same order, with the same
// definitions; a rank without data for a put passes 0 rows. Errors follow the agreement of
// base/agreement.h, concluded at three points only, so that the ranks' puts need not wait for
// one another (with PnetCDF a rank writes, then computes its next values, while another writes):
// the constructor; enddef(), which also compares the ranks' definitions (dimensions, variables,
// attributes: each rank writes at the offsets its own header gives); and close() (or
// conclude()), which reports the first failed put or check() — its code and message, naming
// the file, the variable and the rows — on every rank. A failed rank keeps taking part (its
// later puts write nothing), so no rank is left waiting.
#pragma once
#include <mpi.h>

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "base/agreement.h"

namespace isthmus::remap {

class ParallelNcFile {
 public:
  enum Type { Byte, Int, Int64, Double };

  // Creates (overwrites) path: CDF-2 (64-bit offsets), or CDF-5 with cdf5 (needed for 64-bit
  // integer variables); no fill values (every value is written).
  ParallelNcFile(MPI_Comm comm, const std::string& path, bool cdf5);
  // Closes the file if close() was not reached (an error path: it may be incomplete). With
  // PnetCDF this is collective too: every rank must be unwinding the same agreed error.
  ~ParallelNcFile();
  ParallelNcFile(const ParallelNcFile&) = delete;
  ParallelNcFile& operator=(const ParallelNcFile&) = delete;

  // Define mode. Return the dimension's or variable's id.
  int def_dim(const std::string& name, int64_t len);
  int def_var(const std::string& name, Type type, const std::vector<int>& dims);
  // var -1: a global attribute
  void put_att_text(int var, const std::string& name, const std::string& value);
  void enddef();

  // Rows [start, start + rows) of var (along its first dimension; every index of its others):
  // rows × (the product of its other dimensions) values, converted to the variable's type
  // (an out-of-range value is an error).
  void put_rows(int var, int64_t start, int64_t rows, const double* values);
  void put_rows(int var, int64_t start, int64_t rows, const int* values);
  void put_rows(int var, int64_t start, int64_t rows, const long long* values);
  void put_rows(int var, int64_t start, int64_t rows, const signed char* values);

  void close();
  // A caller's local check, kept with the puts' failures (the first one counts; later checks
  // and puts of this rank are skipped).
  template <typename F>
  void check(F&& f) { pending_.check(std::forward<F>(f)); }
  bool failed() const { return pending_.failed(); }
  // Agrees now on what failed since the last agreement (throws the same Error on every rank).
  void conclude();

  // Whether the ranks write their own slabs (PnetCDF) or send them to rank 0 (netCDF-C).
  bool parallel() const { return parallel_; }
  // Whether this build can write in parallel at all (PnetCDF linked in).
  static bool parallel_available();
  // Whether a file created now is written in parallel (available, and not ISTHMUS_PNETCDF=0).
  static bool parallel_by_default();

 private:
  template <typename T>
  void put(int var, int64_t start, int64_t rows, const T* values);
  template <typename T>
  int put_local(int var, int64_t start, int64_t rows, const T* values);
  int64_t row_length(int var) const;
  void close_quietly();
  // The message of a failed netCDF or PnetCDF call: the file, what was being done, the reason.
  std::string failure(const std::string& what, int rc) const;

  MPI_Comm comm_;
  std::string path_;
  bool parallel_ = false;
  int rank_ = 0, nranks_ = 1;
  int id_ = -1;  // the file's id; -1: closed (or, off rank 0 without PnetCDF, never open)
  std::vector<int64_t> dim_len_;
  std::vector<std::vector<int>> var_dims_;
  Agreement pending_;  // failures since the last agreement (enddef, conclude, close)
  uint64_t header_hash_ = 0;  // of every definition, compared across the ranks by enddef()
};

}  // namespace isthmus::remap
