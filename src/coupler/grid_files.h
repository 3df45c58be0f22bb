// OASIS's grid files in the run directory, as the grid-writing routines (oasis_write_mask,
// oasis_write_area) or a user's script produce them: masks.nc holds int <grid>.msk (1 = masked,
// OASIS's convention, the inverse of SCRIP's) and areas.nc double <grid>.srf, each (ny, nx) or
// one-dimensional. CONSERV needs both grids' areas and masks.
#pragma once
#include <mpi.h>

#include <string>
#include <vector>

#include "coupler/field_files.h"
#include "index/index_list.h"

namespace isthmus::coupler {

struct AreasAndMask {
  std::vector<double> area;  // per local point, in the order of `points`
  std::vector<int> active;   // SCRIP's convention: nonzero = active (OASIS mask 0)
};

// Collective over comm. Every rank of comm passes its points (maybe none). A missing file or
// variable fails on every rank with ISTHMUS_ERR_FILE naming it.
AreasAndMask read_areas_and_mask(MPI_Comm comm, const std::string& run_dir, const std::string& grid,
                                 const IndexList& points, GridShape shape);

}  // namespace isthmus::coupler
