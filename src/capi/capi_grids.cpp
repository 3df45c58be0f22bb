// C API of OASIS's grid files (grids.nc, masks.nc, areas.nc, fracs.nc): what mod_oasis's
// grid-writing routines call. No context and no MPI: OASIS's rule is that one process, the
// component's first rank, writes global arrays, and it may do so before or without a coupler.
#include <algorithm>
#include <cstring>
#include <new>
#include <string>

#include "base/error.h"
#include "coupler/grid_writer.h"
#include "capi/handles.h"
#include "isthmus.h"

namespace {

using isthmus::coupler::GridVariable;

template <typename Write>
int grid_call(const char* function, const char* grid, char* errmsg, int64_t errsize, Write write) {
  std::string msg;
  const int code = isthmus::run_caught([&] {
    if (!grid) isthmus::fail(ISTHMUS_ERR_ARG, "grid is NULL");
    write(std::string(grid));
  }, msg);
  isthmus::copy_text(code == ISTHMUS_OK ? "" : std::string("isthmus: ") + function + ": " + msg,
                     errmsg, errsize);
  return code;
}

std::string dir_of(const char* dir) { return dir ? dir : ""; }

const GridVariable kLon{"grids.nc", "lon", NC_DOUBLE};
const GridVariable kLat{"grids.nc", "lat", NC_DOUBLE};
const GridVariable kClo{"grids.nc", "clo", NC_DOUBLE};
const GridVariable kCla{"grids.nc", "cla", NC_DOUBLE};
const GridVariable kAng{"grids.nc", "ang", NC_DOUBLE};
const GridVariable kMsk{"masks.nc", "msk", NC_INT};
const GridVariable kSrf{"areas.nc", "srf", NC_DOUBLE};
const GridVariable kFrc{"fracs.nc", "frc", NC_DOUBLE};

}  // namespace

extern "C" {

int isthmus_grids_write_centers(const char* dir, const char* grid, int nx, int ny,
                                const double* lon, const double* lat, char* errmsg,
                                int64_t errsize) {
  return grid_call(__func__, grid, errmsg, errsize, [&](const std::string& g) {
    isthmus::coupler::write_grid_variable(dir_of(dir), g, kLon, nx, ny, 0, lon);
    isthmus::coupler::write_grid_variable(dir_of(dir), g, kLat, nx, ny, 0, lat);
  });
}

int isthmus_grids_write_corners(const char* dir, const char* grid, int nx, int ny, int nc,
                                const double* clo, const double* cla, char* errmsg,
                                int64_t errsize) {
  return grid_call(__func__, grid, errmsg, errsize, [&](const std::string& g) {
    // nc == 0 would silently write a 2-D variable: a cell has corners
    if (nc <= 0) isthmus::fail(ISTHMUS_ERR_ARG, "grid ", g, ": ", nc, " corners per cell");
    isthmus::coupler::write_grid_variable(dir_of(dir), g, kClo, nx, ny, nc, clo);
    isthmus::coupler::write_grid_variable(dir_of(dir), g, kCla, nx, ny, nc, cla);
  });
}

int isthmus_grids_write_angles(const char* dir, const char* grid, int nx, int ny,
                               const double* angle, char* errmsg, int64_t errsize) {
  return grid_call(__func__, grid, errmsg, errsize, [&](const std::string& g) {
    isthmus::coupler::write_grid_variable(dir_of(dir), g, kAng, nx, ny, 0, angle);
  });
}

int isthmus_grids_write_mask(const char* dir, const char* grid, int nx, int ny, const int* mask,
                             char* errmsg, int64_t errsize) {
  return grid_call(__func__, grid, errmsg, errsize, [&](const std::string& g) {
    isthmus::coupler::write_grid_variable(dir_of(dir), g, kMsk, nx, ny, 0, mask);
  });
}

int isthmus_grids_write_areas(const char* dir, const char* grid, int nx, int ny,
                              const double* area, char* errmsg, int64_t errsize) {
  return grid_call(__func__, grid, errmsg, errsize, [&](const std::string& g) {
    isthmus::coupler::write_grid_variable(dir_of(dir), g, kSrf, nx, ny, 0, area);
  });
}

int isthmus_grids_write_fractions(const char* dir, const char* grid, int nx, int ny,
                                  const double* frac, char* errmsg, int64_t errsize) {
  return grid_call(__func__, grid, errmsg, errsize, [&](const std::string& g) {
    isthmus::coupler::write_grid_variable(dir_of(dir), g, kFrc, nx, ny, 0, frac);
  });
}

}  // extern "C"
