// Grids for weight generation (issue 15): cell centres, cell corners, mask and area of every
// point of a grid, and the readers of the file formats users hold grids in.
//
// Every reader returns the same `Grid`: coordinates in radians (longitudes as read, not
// wrapped: methods work on unit vectors), points in the file's order (index = j * nx + i for a
// logically rectangular grid of nx × ny, x fastest, as SCRIP's grid_dims and OASIS's (x, y)
// arrays), masks in SCRIP's convention (1 = active; OASIS's masks.nc, where 1 = masked, is
// inverted on reading).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace isthmus::remap {

struct Grid {
  std::string name;    // the grid's name (OASIS's prefix, or the file's stem): for messages
  std::string source;  // where it was read from (file, or "file:NAME"): for messages

  // The logical shape, fastest-varying first: {nx, ny} for a logically rectangular grid
  // (SCRIP grid_rank 2, OASIS x × y arrays), {size} for an unstructured or reduced grid.
  std::vector<int64_t> dims;

  // Cell centres, radians, size() each.
  std::vector<double> lon, lat;

  // Cell corners, radians: corner k of cell c at c * num_corners + k, in the file's order
  // (counter-clockwise in SCRIP and OASIS files, but methods must not rely on it). 0 when the
  // file has none. Unstructured cells with fewer corners repeat their last corner (SCRIP's rule).
  int num_corners = 0;
  std::vector<double> corner_lon, corner_lat;

  // 1 = active, 0 = masked (SCRIP's convention). Empty: every point is active.
  std::vector<uint8_t> mask;

  // Cell areas as the file gives them (steradians for SCRIP's grid_area, m² for OASIS's
  // areas.nc: see area_units). Empty when the file has none. Weight generation computes its
  // own areas from the corners; these are for checks and for CONSERV.
  std::vector<double> area;
  std::string area_units;

  int64_t size() const { return static_cast<int64_t>(lon.size()); }
  bool rectangular() const { return dims.size() == 2; }
  int64_t nx() const { return dims.empty() ? 0 : dims[0]; }
  int64_t ny() const { return dims.size() < 2 ? 1 : dims[1]; }
  bool active(int64_t c) const { return mask.empty() || mask[c] != 0; }
  bool has_corners() const { return num_corners > 0; }
};

// Reads a grid named by a specification, the form `isthmus weights --src/--dst` takes:
//   "DIR/grids.nc:NAME"  OASIS's grid files (grids.nc, with masks.nc and areas.nc beside it,
//                        each optional but grids.nc): <NAME>.lon, .lat, .clo, .cla, .msk, .srf;
//   "FILE.nc"            a SCRIP grid file (grid_center_lat/lon, grid_corner_lat/lon,
//                        grid_imask, grid_dims, grid_area; degrees or radians by `units`),
//                        the layout of the shared data's grid_*.nc (lon, lat, clo, cla, srf,
//                        imask with 1 = active), or a CF file with lon/lat and their `bounds`;
//                        the reader tells them apart by their variables.
// Errors throw isthmus::Error(ISTHMUS_ERR_FILE) naming the file, the variable and why (missing,
// wrong shape, corners with the wrong count, a mask of another shape than the grid, ...).
// Without with_corners the cells' corners are neither read nor checked (num_corners 0): for
// methods that need only the centres.
Grid read_grid(const std::string& spec, bool with_corners = true);

Grid read_scrip_grid(const std::string& path);
Grid read_oasis_grid(const std::string& grids_nc, const std::string& name, bool with_corners = true);
Grid read_cf_grid(const std::string& path);

// Writes a SCRIP grid file (tests, and the weights files' grid variables).
void write_scrip_grid(const std::string& path, const Grid& grid);

// A grid read a range of points at a time, for grids too large to hold whole (an 81 M-cell
// source streamed in slabs of rows): any grid read_grid reads (SCRIP, OASIS's grids.nc:NAME with
// masks.nc and areas.nc, the shared data's layout, CF), each read taking the whole rows that hold
// its range from the files. Errors as read_grid's, found at construction for the header.
class GridSlabs {
 public:
  explicit GridSlabs(const std::string& spec);  // reads and checks the header
  // The grid without its points: name, source, dims, num_corners.
  const Grid& header() const { return header_; }
  int64_t size() const { return size_; }
  // Points [begin, end) as a Grid of end - begin points (dims {end - begin}; mask and area if
  // the files have them), radians; without the corners if !with_corners (num_corners 0).
  Grid read(int64_t begin, int64_t end, bool with_corners = true) const;

 private:
  std::string spec_;
  Grid header_;
  int64_t size_ = 0;
};

}  // namespace isthmus::remap
