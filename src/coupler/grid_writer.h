// OASIS3-MCT's grid files, written as its grid-writing routines (oasis_write_grid, ...) write
// them, so that OASIS's tools and the coupler's CONSERV (grid_files.h) read ours:
//   grids.nc  double <grid>.lon, <grid>.lat (y_<grid>, x_<grid>); <grid>.clo, <grid>.cla
//             (crn_<grid>, y_<grid>, x_<grid>); <grid>.ang (y_<grid>, x_<grid>)
//   masks.nc  int <grid>.msk (1 = masked, OASIS's convention)
//   areas.nc  double <grid>.srf
//   fracs.nc  double <grid>.frc (OASIS 5.0's oasis_write_frac)
// One process writes global arrays (OASIS's rule: the component's first rank). A file is created
// when missing and otherwise updated: other grids' variables stay, and a variable that exists
// already is left as it is (OASIS writes each variable once; a run directory's files win).
#pragma once
#include <netcdf.h>

#include <string>

namespace isthmus::coupler {

// Which variable of which file; the suffix names it (<grid>.<suffix>).
struct GridVariable {
  const char* file;    // "grids.nc", ...
  const char* suffix;  // "lon", ...
  nc_type type;        // NC_DOUBLE or NC_INT
};

// Writes values (nx fastest, then ny, then nc: a Fortran array (nx, ny[, nc])) as
// dir/file's <grid>.<suffix>; nc == 0 for a 2-D variable. Dimensions x_<grid>, y_<grid>,
// crn_<grid> are created or must have these sizes. Serialised with other processes writing the
// same directory (flock on the directory, where the file system supports it), since components
// write their grids at the same time at start-up. Fails with ISTHMUS_ERR_FILE naming the file,
// the variable and netCDF's reason, or ISTHMUS_ERR_ARG for bad sizes or names.
void write_grid_variable(const std::string& dir, const std::string& grid, const GridVariable& var,
                         int nx, int ny, int nc, const void* values);

}  // namespace isthmus::coupler
