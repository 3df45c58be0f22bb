// OASIS's SCRIPR in isthmus: the weights file an entry maps with, and how it is made when it is
// missing — by the coupler at its start, or ahead of the run by `isthmus weights --namcouple`,
// which must make the same file under the same cache key so that the coupler takes it.
#pragma once
#include <mpi.h>

#include <string>

#include "coupler/config.h"
#include "remap/weights_gen.h"

namespace isthmus::coupler {

// SCRIPR's transformation as an interpolation stack of the weight generator (docs/weights.md),
// with OASIS's mask rules: BILINEAR and BICUBIC fall back on the nearest active source point,
// where OASIS's SCRIP uses the nearest neighbour too; DISTWGT and GAUSWGT take their NVOISIN (and
// VAR); CONSERV its normalisation (FRACNNEI serves uncovered active points by their nearest
// neighbour inside the conservative method) and order. Sets *o; ISTHMUS_ERR_CONFIG for a
// method the generator does not have.
std::string scripr_stack(const ScriprSpec& r, remap::GenOptions* o);

// Whether the coupler maps entry e with a SCRIPR weights file (scripr_file_name): an exchanged
// entry with SCRIPR and no MAPPING.
bool maps_with_scripr(const Entry& e);

// Collective over comm: the weights file of entry e (maps_with_scripr) in run_dir, as OASIS
// uses it: the file there is taken as it is, unless isthmus made it for other grids or options;
// otherwise it is generated, over comm's ranks, from run_dir's grids.nc (with masks.nc and
// areas.nc). Returns the file's path; *generated (if given) says whether it was made now.
// Errors agreed on every rank, naming the entry.
std::string ensure_scripr_weights(MPI_Comm comm, const Entry& e, const std::string& run_dir,
                                  bool* generated = nullptr);

// run_dir + "/" + file, or file if it is absolute (OASIS looks files up in the run directory).
std::string path_in(const std::string& run_dir, const std::string& file);

}  // namespace isthmus::coupler
