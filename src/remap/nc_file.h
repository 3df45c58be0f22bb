// One open netCDF file (netCDF-C), closed on every path out, whose failures name it the same
// way wherever isthmus reads or writes one: grid, weights, restart, input and output files.
//
//   cannot open the grid file "PATH": No such file or directory
//   grid file "PATH": cannot read variable x: NetCDF: ...
//
// ParallelNcFile (nc_out.h) is the collective writer of files that every rank writes a part of;
// this is the file one process reads or writes alone.
#pragma once
#include <string>

namespace isthmus::remap {

class NcFile {
 public:
  enum class Mode {
    Read,       // an existing file, read only
    Write,      // an existing file, to write data into
    Define,     // an existing file, to add dimensions and variables to (in define mode)
    Create,     // a new file, replacing any file of that name
    CreateNew,  // a new file; a file of that name is an error
  };
  // name: how messages name the file, usually named(kind, path) (a copy being written under a
  // temporary path is named by the path it will replace). Created files are classic netCDF
  // with 64-bit offsets (as OASIS writes them, without the classic format's 2 GiB limit on a
  // variable). Throws ISTHMUS_ERR_FILE `cannot open the NAME: ...` (or create).
  NcFile(const std::string& path, Mode mode, std::string name);
  // `KIND file "PATH"`, kind being what the file is to its user ("grid", "weights", "restart")
  static std::string named(const std::string& kind, const std::string& path) {
    return kind + " file \"" + path + "\"";
  }
  ~NcFile();  // closes without checking: a failure is already on its way
  NcFile(const NcFile&) = delete;
  NcFile& operator=(const NcFile&) = delete;

  int id() const { return id_; }
  const std::string& path() const { return path_; }
  const std::string& name() const { return name_; }
  // Throws ISTHMUS_ERR_FILE `NAME: cannot WHAT: <netCDF's reason>` unless rc is NC_NOERR.
  void check(int rc, const std::string& what) const;
  // Closes it, checked (a file written is complete only once closed).
  void close();

 private:
  std::string path_, name_;
  int id_ = -1;
};

}  // namespace isthmus::remap
