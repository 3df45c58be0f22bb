#include "coupler/grid_writer.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "base/error.h"
#include "remap/nc_file.h"

namespace isthmus::coupler {

namespace {

// Exclusive use of a directory's grid files between processes. Best effort: where flock is not
// supported (some network file systems) the write goes on unlocked, as OASIS's would.
class DirectoryLock {
 public:
  explicit DirectoryLock(const std::string& dir) {
    fd_ = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd_ < 0)
      fail(ISTHMUS_ERR_FILE, "the directory ", dir, " cannot be opened to write grid files: ",
           std::strerror(errno));
    while (::flock(fd_, LOCK_EX) != 0 && errno == EINTR) {
    }
  }
  ~DirectoryLock() { ::close(fd_); }  // closing releases the lock
  DirectoryLock(const DirectoryLock&) = delete;
  DirectoryLock& operator=(const DirectoryLock&) = delete;

 private:
  int fd_ = -1;
};


// The dimension `name` of length `len`, defined if missing; an existing one of another length
// means the file holds another grid of the same name.
int dimension(remap::NcFile& f, const std::string& path, const std::string& name, int len) {
  int id = -1;
  if (nc_inq_dimid(f.id(), name.c_str(), &id) == NC_NOERR) {
    size_t have = 0;
    f.check(nc_inq_dimlen(f.id(), id, &have), "read the length of dimension " + name);
    if (have != static_cast<size_t>(len))
      fail(ISTHMUS_ERR_FILE, path, ": dimension ", name, " has length ", have, ", the grid written has ",
           len, " (a file from another grid of this name? remove it)");
    return id;
  }
  f.check(nc_def_dim(f.id(), name.c_str(), static_cast<size_t>(len), &id), "define dimension " + name);
  return id;
}

}  // namespace

void write_grid_variable(const std::string& dir_in, const std::string& grid, const GridVariable& var,
                         int nx, int ny, int nc, const void* values) {
  if (grid.empty()) fail(ISTHMUS_ERR_ARG, "the grid name is empty");
  if (grid.find('/') != std::string::npos)
    fail(ISTHMUS_ERR_ARG, "the grid name \"", grid, "\" contains '/'");
  if (nx <= 0 || ny <= 0 || nc < 0)
    fail(ISTHMUS_ERR_ARG, "grid ", grid, ": sizes nx ", nx, ", ny ", ny, ", corners ", nc,
         " (nx and ny must be positive)");
  if (!values) fail(ISTHMUS_ERR_ARG, "grid ", grid, ": the values of ", grid, ".", var.suffix, " are NULL");
  const std::string dir = dir_in.empty() ? "." : dir_in;
  const std::string path = dir + (dir.back() == '/' ? "" : "/") + var.file;
  const std::string name = grid + "." + var.suffix;

  DirectoryLock lock(dir);
  // Added to if there; else created (it cannot appear meanwhile: the lock is held)
  remap::NcFile f(path, ::access(path.c_str(), F_OK) == 0 ? remap::NcFile::Mode::Define
                                                         : remap::NcFile::Mode::CreateNew,
                  remap::NcFile::named("grid", path));
  // netCDF's order is C's: the slowest dimension first, so a Fortran (nx, ny, nc) array is
  // (crn, y, x)
  std::vector<int> dims;
  if (nc > 0) dims.push_back(dimension(f, path, "crn_" + grid, nc));
  dims.push_back(dimension(f, path, "y_" + grid, ny));
  dims.push_back(dimension(f, path, "x_" + grid, nx));

  int id = -1;
  if (nc_inq_varid(f.id(), name.c_str(), &id) == NC_NOERR) {
    // OASIS writes a variable once: an existing one is kept if it has this shape
    int ndims = 0;
    f.check(nc_inq_varndims(f.id(), id, &ndims), "read the dimensions of variable " + name);
    std::vector<int> have(ndims);
    f.check(nc_inq_vardimid(f.id(), id, have.data()), "read the dimensions of variable " + name);
    if (have != dims)
      fail(ISTHMUS_ERR_FILE, path, ": variable ", name, " exists with other dimensions than (",
           nc > 0 ? "crn_" + grid + ", " : "", "y_", grid, ", x_", grid, ")");
    f.check(nc_enddef(f.id()), "end the definitions");
    f.close();
    return;
  }
  f.check(nc_def_var(f.id(), name.c_str(), var.type, static_cast<int>(dims.size()), dims.data(), &id),
          "define variable " + name);
  f.check(nc_enddef(f.id()), "end the definitions");
  if (var.type == NC_INT)
    f.check(nc_put_var_int(f.id(), id, static_cast<const int*>(values)), "write " + name);
  else
    f.check(nc_put_var_double(f.id(), id, static_cast<const double*>(values)), "write " + name);
  f.close();
}

}  // namespace isthmus::coupler
