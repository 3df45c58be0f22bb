// The coupling configuration: what a namcouple (OASIS3-MCT 2.0-5.0) or the equivalent YAML file
// says, as plain data. The readers (namcouple.cpp, config_yaml.cpp) fill it and report errors
// naming the file, line and keyword (ISTHMUS_ERR_CONFIG); the coupler only reads it.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace isthmus::coupler {

// Field status of an entry (OASIS's last word of an entry's first line).
enum class FieldStatus { Exported, Expout, Input, Output };
const char* field_status_name(FieldStatus s);

// LOCTRANS time operation, applied on the source side between coupling dates.
enum class TimeOp { Instant, Accumul, Average, TMin, TMax };
const char* time_op_name(TimeOp t);

enum class MapSide { Auto, Src, Dst };    // MAPPING's "opt" (or absent), "src"/"sum", "dst"/"bfb"
enum class ConservType { Global, Glbpos, Basbal, Baspos };
// CONSERV's global-sum option: OASIS's bfb/opt/... mapped onto the collectives layer's sums
enum class SumMethod { Reprosum, Gather, Lsum8, Lsum16, Ddpdd };

struct MappingSpec {
  std::string file;                 // weights file (relative to the run directory)
  MapSide side = MapSide::Auto;
  bool side_given = false;          // the configuration forced the side
  int line = 0;
};

// SCRIPR: weights computed by isthmus (a later issue); until then the file OASIS would name
// (rmp_<srcgrid>_to_<dstgrid>_<METHOD>.nc, see scripr_file_name) must exist in the run directory.
struct ScriprSpec {
  std::string method;               // BILINEAR, BICUBIC, CONSERV, DISTWGT, GAUSWGT
  std::string grid_type;            // LR, D, U
  std::string field_type;           // SCALAR, VECTOR...
  std::string normalization;        // CONSERV: FRACAREA, DESTAREA, FRACNNEI
  std::string order;                // CONSERV: FIRST, SECOND
  int nb_neighbours = 0;            // DISTWGT/GAUSWGT
  double gaussian_variance = 0;     // GAUSWGT
  int line = 0;
};

struct ConservSpec {
  ConservType type = ConservType::Global;
  SumMethod sum = SumMethod::Reprosum;
  int line = 0;
};

// BLASOLD (before mapping) / BLASNEW (after): field = scale * field + add.
struct BlasSpec {
  double scale = 1.0;
  double add = 0.0;
  int line = 0;
};

struct Entry {
  std::vector<std::string> src_names;   // colon-grouped: several fields in one exchange
  std::vector<std::string> dst_names;   // same count as src_names (INPUT/OUTPUT: equal to src)
  int period = 0;                       // seconds between coupling dates (> 0)
  std::string restart_file;             // may be empty where the status allows it
  FieldStatus status = FieldStatus::Exported;
  std::string src_grid, dst_grid;       // grid names (OUTPUT/INPUT: one grid, in both)
  int64_t src_nx = 0, src_ny = 0, dst_nx = 0, dst_ny = 0;  // 0 where the entry omits them
  int lag = 0;                          // seconds (LAG=)
  int seq = 0;                          // SEQ= (0: not given)
  std::optional<TimeOp> loctrans;       // absent: INSTANT
  std::optional<MappingSpec> mapping;
  std::optional<ScriprSpec> scripr;
  std::optional<ConservSpec> conserv;
  std::optional<BlasSpec> blasold, blasnew;
  std::string input_file;               // INPUT: the file the field is read from
  int line = 0;                         // first line of the entry in its file
};

struct Config {
  std::string file;                     // where it was read from (for messages)
  std::vector<std::string> models;      // $NBMODEL names (OASIS3-MCT 2.0-3.0); may be empty
  int64_t runtime = 0;                  // $RUNTIME, seconds
  int nlogprt = 0, tlogprt = 0;         // $NLOGPRT
  std::vector<Entry> entries;           // in file order
};

// Reads a namcouple; throws Error(ISTHMUS_ERR_CONFIG) naming file, line and keyword.
Config read_namcouple(const std::string& path);
Config parse_namcouple(const std::string& text, const std::string& file_name);

}  // namespace isthmus::coupler
