#include "remap/nc_file.h"

#include <netcdf.h>

#include <utility>

#include "base/error.h"

namespace isthmus::remap {

NcFile::NcFile(const std::string& path, Mode mode, std::string name)
    : path_(path), name_(std::move(name)) {
  int rc = NC_NOERR;
  const char* doing = "open";
  switch (mode) {
    case Mode::Read: rc = nc_open(path.c_str(), NC_NOWRITE, &id_); break;
    case Mode::Write:
    case Mode::Define: rc = nc_open(path.c_str(), NC_WRITE, &id_); break;
    case Mode::Create:
    case Mode::CreateNew:
      doing = "create";
      rc = nc_create(path.c_str(),
                     (mode == Mode::Create ? NC_CLOBBER : NC_NOCLOBBER) | NC_64BIT_OFFSET, &id_);
      break;
  }
  if (rc != NC_NOERR) {
    id_ = -1;
    fail(ISTHMUS_ERR_FILE, "cannot ", doing, " the ", name_, ": ", nc_strerror(rc));
  }
  if (mode == Mode::Define && (rc = nc_redef(id_)) != NC_NOERR) {
    nc_close(id_);  // a constructor that throws runs no destructor
    id_ = -1;
    check(rc, "enter define mode");
  }
}

NcFile::~NcFile() {
  if (id_ >= 0) nc_close(id_);
}

void NcFile::check(int rc, const std::string& what) const {
  if (rc != NC_NOERR) fail(ISTHMUS_ERR_FILE, name_, ": cannot ", what, ": ", nc_strerror(rc));
}

void NcFile::close() {
  const int rc = nc_close(id_);
  id_ = -1;
  check(rc, "close it");
}

}  // namespace isthmus::remap
