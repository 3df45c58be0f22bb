#include "coupler/grid_files.h"

namespace isthmus::coupler {

AreasAndMask read_areas_and_mask(MPI_Comm comm, const std::string& run_dir, const std::string& grid,
                                 const IndexList& points, GridShape shape) {
  AreasAndMask out;
  const size_t n = static_cast<size_t>(points.size());
  out.area.resize(n);
  std::vector<double> masked(n);
  const std::string dir = run_dir.empty() || run_dir.back() == '/' ? run_dir : run_dir + "/";
  read_grid_fields(comm, dir + "areas.nc", points, shape, {{grid + ".srf", 1, DataType::Double, out.area.data()}});
  read_grid_fields(comm, dir + "masks.nc", points, shape, {{grid + ".msk", 1, DataType::Double, masked.data()}});
  out.active.resize(n);
  for (size_t i = 0; i < n; ++i) out.active[i] = masked[i] == 0;
  return out;
}

}  // namespace isthmus::coupler
