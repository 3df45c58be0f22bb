// The files a coupling reads and writes, in OASIS3-MCT's layout (docs/coupler-files.md), so
// that runs move between OASIS3-MCT and isthmus in either direction and scripts written for
// OASIS's output read ours:
//
//   restart   one file per namcouple entry (several entries may share it); per field level a
//             double variable <prefix><name>(<prefix><name>_ny, <prefix><name>_nx); a LOCTRANS
//             counter is an int variable loc<ID>_cnt(loc<ID>_cnt_ncnt)
//   output    EXPOUT/OUTPUT: one file per field level, <name>_<comp>_<NN>.nc, with dimensions
//             nx, ny, time (unlimited), int time(time) in seconds of the run, and
//             double <name>(time, ny, nx); one record per coupling date
//   input     INPUT: the entry's file, or <name>_<comp>.nc; the record whose time is the date
//
// A field of several levels (a bundle, OASIS var_nodims(2)) is stored as OASIS stores it: one
// variable (and one output file) per level, named <name>.001, <name>.002, ...
//
// Every call is collective over `comm` (a component's ranks). Each rank passes its values in the
// order of its IndexList (global index i + nx * j, level-major: level l of local point p at
// [l * points.size() + p]); rank 0 of comm reads and writes the files, one field level at a time
// gathered or scattered through one isthmus redistribution, so that no rank holds more than
// one global level. Errors are agreed (docs/errors.md): every rank throws the same code
// (ISTHMUS_ERR_FILE for a file that is missing, unreadable or not of the expected shape, the
// message naming the file and the variable; ISTHMUS_ERR_ARG for bad arguments).
#pragma once
#include <mpi.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "coupler/config.h"
#include "index/index_list.h"
#include "transfer/redist.h"

namespace isthmus::coupler {

// The global grid of a field: nx * ny points (ny = 1 for a grid without a 2-D shape, as OASIS
// writes it).
struct GridShape {
  int64_t nx = 0;
  int64_t ny = 1;
};

// One field of this rank: name in the file, its levels and its local values.
struct FieldData {
  std::string name;
  int nlevels = 1;
  DataType type = DataType::Double;  // Double or Float (OASIS_Real); files always hold double
  void* data = nullptr;              // read into; only read from when writing
};

// A small integer array every rank holds alike (a LOCTRANS counter): written by rank 0 with
// dimension <name>_ncnt; read on rank 0 and broadcast.
struct RestartCounter {
  std::string name;
  std::vector<int> values;  // to write; or sized to the expected length before a read
};

// ---- OASIS names -------------------------------------------------------------------------
// A field level's variable name: the field's name, or <name>.001... for a bundle.
std::string level_name(const std::string& field, int level, int nlevels);
// OASIS3-MCT 3.0-5.0: the LOCTRANS partial state of namcouple entry `entry` (1-based) is
// "loc<entry %06d>_<name>" and its counter "loc<entry %06d>_cnt".
std::string loctrans_prefix(int entry);
std::string loctrans_counter_name(int entry);
// OASIS3-MCT 2.0 named them after the operation's code instead (INSTANT 1, AVERAGE 2, ACCUMUL 3,
// T_MIN 4, T_MAX 5): "loc<code %02d>_<name>", "loc<code %02d>_cnt". For reading old files.
std::string loctrans_prefix_oasis2(TimeOp op);
std::string loctrans_counter_name_oasis2(TimeOp op);
// A higher-order term t (2..5: oasis_put's fld<t>) of a field: its lagged value
// "av<t>_<name>", and its LOCTRANS state "av<t>" followed by the field's state prefix (either
// naming above); the field's counter serves for its terms.
std::string term_prefix(int t);
// The fraction of a put's fracwgt (OASIS3-MCT 5.0) in a lagged restart file:
// "avfw<entry %06d>_<name>".
std::string fracwgt_prefix(int entry);
std::string term_loctrans_prefix(int t, const std::string& loctrans_prefix);
// EXPOUT/OUTPUT file of a field level: <level_name>_<component>_<entry %02d>.nc
std::string output_file_name(const std::string& level_name, const std::string& component,
                             int entry);
// INPUT file of a field level when the entry names none: <level_name>_<component>.nc
std::string input_file_name(const std::string& level_name, const std::string& component);

// ---- Restart files -----------------------------------------------------------------------
// Writes the fields (variables <prefix><level name>, double) and counters into `path`, keeping
// every other variable the file already holds (several entries share one file). The file is
// replaced atomically: a copy is written under a temporary name and renamed over `path`.
void write_restart(MPI_Comm comm, const std::string& path, const IndexList& points,
                   GridShape shape, const std::string& prefix, const std::vector<FieldData>& fields,
                   const std::vector<RestartCounter>& counters = {});
// Reads them back (each variable 2-D (ny, nx) or 1-D with nx * ny points, double or float).
void read_restart(MPI_Comm comm, const std::string& path, const IndexList& points,
                  GridShape shape, const std::string& prefix, const std::vector<FieldData>& fields,
                  std::vector<RestartCounter>* counters = nullptr);
// The same for a grid file (OASIS's grids.nc, masks.nc, areas.nc): fields as variables named
// by `fields`, any numeric type (read as double), messages naming a "grid file".
void read_grid_fields(MPI_Comm comm, const std::string& path, const IndexList& points,
                      GridShape shape, const std::vector<FieldData>& fields);
// Whether the file exists and holds variable `name` (to choose between OASIS's namings).
bool restart_has_variable(MPI_Comm comm, const std::string& path, const std::string& name);

// The gather to rank 0 and scatter from it, built once and reused at every date.
class RootGather;

// ---- Output files (EXPOUT, OUTPUT) -------------------------------------------------------
class OutputFile {
 public:
  // Collective. `component` and `entry` make OASIS's file names; `dir` is prepended.
  OutputFile(MPI_Comm comm, const IndexList& points, GridShape shape, std::string component,
             int entry, std::string dir = "");
  ~OutputFile();
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  // Appends one record at `date` (seconds since the start of the run) to each field level's
  // file. As OASIS: a file that does not exist, or holds a record at `date` or later (a run
  // done again), is started anew (created under a temporary name and renamed); otherwise the
  // record is appended in place.
  void write(int date, const std::vector<FieldData>& fields);

 private:
  MPI_Comm comm_;
  GridShape shape_;
  std::string component_, dir_;
  int entry_;
  std::unique_ptr<RootGather> gather_;
};

// ---- Input files (INPUT) -----------------------------------------------------------------
class InputFile {
 public:
  // Collective. `file` is the entry's input file (all its fields in it), or empty: each field
  // level then comes from input_file_name(level, component). `dir` is prepended.
  InputFile(MPI_Comm comm, const IndexList& points, GridShape shape, std::string file,
            std::string component, std::string dir = "");
  ~InputFile();
  InputFile(const InputFile&) = delete;
  InputFile& operator=(const InputFile&) = delete;

  // Reads the record whose time equals `date` into each field.
  void read(int date, const std::vector<FieldData>& fields);

 private:
  MPI_Comm comm_;
  GridShape shape_;
  std::string file_, component_, dir_;
  std::unique_ptr<RootGather> gather_;
};

}  // namespace isthmus::coupler
