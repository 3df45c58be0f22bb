#include "coupler/scripr.h"

#include <filesystem>

#include "base/error.h"
#include "base/text.h"

namespace isthmus::coupler {

std::string scripr_stack(const ScriprSpec& r, remap::GenOptions* o) {
  o->oasis_masks = true;  // what SCRIP's weights give a relinked OASIS3-MCT model
  if (r.method == "BILINEAR" || r.method == "BICUBIC") {
    o->num_neighbours = 1;
    return r.method == "BILINEAR" ? "bilinear,nearest" : "bicubic,nearest";
  }
  if (r.method == "DISTWGT" || r.method == "GAUSWGT") {
    o->num_neighbours = r.nb_neighbours > 0 ? r.nb_neighbours : 4;
    if (r.method == "GAUSWGT") o->gaussian_variance = r.gaussian_variance;
    return r.method == "DISTWGT" ? "nearest" : "gaussian";
  }
  if (r.method == "CONSERV") {
    o->normalization = lower(r.normalization.empty() ? "FRACAREA" : r.normalization);
    o->conservative_order = r.order == "SECOND" ? 2 : 1;
    return "conservative";
  }
  fail(ISTHMUS_ERR_CONFIG, "SCRIPR ", r.method, ": no weight generation method of that name");
}

bool maps_with_scripr(const Entry& e) {
  return e.scripr && !e.mapping &&
         (e.status == FieldStatus::Exported || e.status == FieldStatus::Expout);
}

std::string path_in(const std::string& run_dir, const std::string& file) {
  return !file.empty() && file[0] == '/' ? file : run_dir + "/" + file;
}

std::string ensure_scripr_weights(MPI_Comm comm, const Entry& e, const std::string& run_dir,
                                  bool* generated) {
  const std::string where = entry_where(e);
  remap::GenOptions go;
  std::string stack;
  try {
    stack = scripr_stack(*e.scripr, &go);
  } catch (const Error& err) {
    fail(err.code(), where, ": ", err.what());
  }
  const std::string weights = scripr_file_name(e), grids = path_in(run_dir, "grids.nc");
  const std::string path = path_in(run_dir, weights);
  const bool made = remap::ensure_weights_file(
      comm, path, grids + ":" + e.src_grid, grids + ":" + e.dst_grid, stack, go,
      [&](const std::exception& err) {
        // Read to make the file, or to check that the one isthmus made was made for them.
        const int code = dynamic_cast<const Error*>(&err) ? static_cast<const Error&>(err).code()
                                                          : ISTHMUS_ERR_FILE;
        std::error_code ec;
        if (std::filesystem::exists(path, ec))
          fail(code, where, ": SCRIPR: the grids of weights file ", weights,
               " (made by isthmus) cannot be read to check that it was made for them: ", err.what());
        fail(code, where, ": SCRIPR: no weights file ", weights,
             " in the run directory, and its grids cannot be read to generate it: ", err.what());
      });
  if (generated) *generated = made;
  return path;
}

}  // namespace isthmus::coupler
