// The coupling configuration: what a namcouple (OASIS3-MCT 2.0-5.0) or the equivalent YAML file
// says, as plain data. The readers (namcouple.cpp, config_yaml.cpp) fill it and report errors
// naming the file, line and keyword (ISTHMUS_ERR_CONFIG); the coupler only reads it.
// docs/coupler-config.md is the reference of both formats.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace isthmus::coupler {

// Field status of an entry (OASIS's last word of an entry's first line). OASIS3-MCT converts the
// OASIS3 statuses IGNORED and IGNOUT to EXPORTED and EXPOUT, and so does the reader.
enum class FieldStatus { Exported, Expout, Input, Output };
const char* field_status_name(FieldStatus s);

// LOCTRANS time operation, applied on the source side between coupling dates.
enum class TimeOp { Instant, Accumul, Average, TMin, TMax };
const char* time_op_name(TimeOp t);

// Where the mapping's multiplication happens, in isthmus's terms (remap layer): Dst gathers the
// needed source points and multiplies in a fixed link order (bit-for-bit across decompositions:
// OASIS's "bfb"); Src sums partial products on the source ranks (OASIS's "sum": round-off
// changes with the decomposition); Auto lets the coupler pick (OASIS's "opt").
enum class MapSide { Auto, Src, Dst };
enum class ConservType { Global, Glbpos, Basbal, Baspos };
// CONSERV's global-sum option: OASIS's bfb/opt/... mapped onto the collectives layer's sums
enum class SumMethod { Reprosum, Gather, Lsum8, Lsum16, Ddpdd };

// MAPPING: "file [src|dst] [bfb|sum|opt]" (the two words in either order, each optional).
// OASIS's strategy word decides the side: bfb -> Dst, sum -> Src, opt -> Auto. Without a
// strategy word OASIS uses bfb, so the side is Dst; a location word alone ("dst", "src") keeps
// that default. side_given: a word on the line chose the side (bfb or sum written, or a location
// with OASIS's default bfb); opt and a bare file name leave the coupler free to choose
// (side_given false; a bare file still means Dst, OASIS's bit-for-bit default).
struct MappingSpec {
  std::string file;                 // weights file (relative to the run directory)
  MapSide side = MapSide::Dst;
  bool side_given = false;          // the configuration forced the side
  std::string location;             // as written: "src", "dst" or "" (for messages, conversion)
  std::string strategy;             // as written: "bfb", "sum", "opt" or ""
  int line = 0;
};

// SCRIPR: weights computed by isthmus (a later issue); until then the file OASIS would name
// (see scripr_file_name) must exist in the run directory.
struct ScriprSpec {
  std::string method;               // BILINEAR, BICUBIC, CONSERV, DISTWGT, GAUSWGT
  std::string grid_type;            // LR, D, U
  std::string field_type;           // SCALAR, VECTOR (OASIS treats VECTOR as SCALAR)
  std::string normalization;        // CONSERV: FRACAREA, DESTAREA, FRACNNEI
  std::string order;                // CONSERV: FIRST, SECOND
  int nb_neighbours = 0;            // DISTWGT/GAUSWGT
  double gaussian_variance = 0;     // GAUSWGT
  std::string restriction;          // search restriction: LATLON, LATITUDE
  int nbins = 0;                    // number of restriction bins
  std::optional<double> north_thresh, south_thresh;  // CONSERV (OASIS3-MCT 5.0), radians
  int line = 0;
};

struct ConservSpec {
  ConservType type = ConservType::Global;
  SumMethod sum = SumMethod::Reprosum;
  std::string option;               // as written: bfb, opt, gather, lsum8, lsum16, ddpdd,
                                    // reprosum, or "" (OASIS's default, bfb = reprosum)
  int line = 0;
};

// BLASOLD (before mapping) / BLASNEW (after): field = scale * field + add.
struct BlasSpec {
  double scale = 1.0;
  double add = 0.0;
  bool has_add = false;             // a CONSTANT line was given (kept for conversion)
  int line = 0;
};

// The P/R line of an EXPORTED/EXPOUT entry: periodic or regional grid, overlapping points.
struct Overlap {
  char kind = 'P';                  // 'P' periodic, 'R' regional
  int points = 0;
};

struct Entry {
  std::vector<std::string> src_names;   // colon-grouped: several fields in one exchange
  std::vector<std::string> dst_names;   // same count as src_names (INPUT/OUTPUT: equal to src)
  int index = 1;                        // OASIS's unused third word, kept for conversion
  int period = 0;                       // seconds between coupling dates (> 0)
  std::string restart_file;             // may be empty where the status allows it
  FieldStatus status = FieldStatus::Exported;
  std::string src_grid, dst_grid;       // grid names (OUTPUT/INPUT: one grid, in both)
  int64_t src_nx = 0, src_ny = 0, dst_nx = 0, dst_ny = 0;  // 0 where the entry omits them
  int lag = 0;                          // seconds (LAG=)
  int seq = 0;                          // SEQ= (0: not given)
  std::optional<Overlap> src_overlap, dst_overlap;  // EXPORTED/EXPOUT written as such
  std::vector<std::string> transformations;  // names in the order written (LOCTRANS, MAPPING...)
  std::optional<TimeOp> loctrans;       // absent: INSTANT
  std::optional<MappingSpec> mapping;
  std::optional<ScriprSpec> scripr;
  std::optional<ConservSpec> conserv;
  std::optional<BlasSpec> blasold, blasnew;
  bool checkin = false, checkout = false;  // CHECKIN/CHECKOUT: min, max, sum to the log
  std::string input_file;               // INPUT: the file the field is read from
  int line = 0;                         // first line of the entry in its file
};

// A keyword of OASIS3 that OASIS3-MCT reads and no longer uses ($SEQMODE, $CHANNEL, $JOBNAME,
// $INIDATE, $MODINFO, $CALTYPE): kept with its value so that `config check` can say so.
struct UnusedKeyword {
  std::string keyword;                  // without the '$'
  std::string value;                    // its lines, joined by "; " (may be empty)
  int line = 0;
};

struct Config {
  std::string file;                     // where it was read from (for messages)
  std::vector<std::string> models;      // $NBMODEL names (OASIS3-MCT 2.0-3.0); may be empty
  int64_t runtime = 0;                  // $RUNTIME, seconds
  int nlogprt = 0, tlogprt = 0;         // $NLOGPRT
  int nfields = 0;                      // $NFIELDS (>= entries.size(), as OASIS allows)
  // OASIS3-MCT 4.0/5.0 options of the first section; empty/absent where not given.
  std::optional<std::pair<int, int>> nunitno;  // $NUNITNO: Fortran unit range (no effect)
  std::string nmapdec;                  // $NMAPDEC: decomp_1d | decomp_wghtfile
  std::string nmatxrd;                  // $NMATXRD: orig | ceg
  std::string nwgtopt;                  // $NWGTOPT: abort_on_bad_index | ignore_bad_index |
                                        //           ignore_bad_index_silently
  std::optional<bool> nnorest;          // $NNOREST: missing restart files start from zero
  std::string ncdftyp;                  // $NCDFTYP: cdf1 | cdf2 | cdf5
  std::vector<UnusedKeyword> unused;    // OASIS3 keywords without effect, in file order
  std::vector<Entry> entries;           // in file order
};

// Equal content: every member except where it was read from (Config::file and the `line`
// members), so that a namcouple and its YAML conversion compare equal.
bool operator==(const MappingSpec& a, const MappingSpec& b);
bool operator==(const ScriprSpec& a, const ScriprSpec& b);
bool operator==(const ConservSpec& a, const ConservSpec& b);
bool operator==(const BlasSpec& a, const BlasSpec& b);
bool operator==(const Overlap& a, const Overlap& b);
bool operator==(const UnusedKeyword& a, const UnusedKeyword& b);
bool operator==(const Entry& a, const Entry& b);
bool operator==(const Config& a, const Config& b);
inline bool operator!=(const Config& a, const Config& b) { return !(a == b); }

// The weights file OASIS's SCRIPR reads or writes for this entry (mod_oasis_coupler.F90), e.g.
// rmp_torc_to_lmdz_CONSERV_FRACNNEI.nc: the normalization only for CONSERV.
std::string scripr_file_name(const Entry& e);
// A colon group as the namcouple writes it: "U:V".
std::string colon_group(const std::vector<std::string>& names);
// How messages name an entry: "entry U:V (line 12)".
std::string entry_where(const Entry& e);

// Reads a namcouple; throws Error(ISTHMUS_ERR_CONFIG) naming file, line and keyword
// (ISTHMUS_ERR_FILE if the file cannot be read).
Config read_namcouple(const std::string& path);
Config parse_namcouple(const std::string& text, const std::string& file_name);

// The YAML form (schema in docs/coupler-config.md); errors as for the namcouple, naming the key.
Config read_config_yaml(const std::string& path);
Config parse_config_yaml(const std::string& text, const std::string& file_name);
// The YAML text of a configuration; parse_config_yaml(to_yaml(c)) == c.
std::string to_yaml(const Config& c);

// Either format: a name ending in .yaml/.yml is YAML, any other name (namcouple, ...) is a
// namcouple unless its first meaningful line is a YAML mapping key ("runtime:", "entries:", ...).
Config read_config(const std::string& path);
// The same for a text read elsewhere (the coupler reads on one rank and broadcasts); `path`
// chooses the format by its extension and names the file in messages.
Config parse_config(const std::string& text, const std::string& path);

// A human-readable account of what was understood (`isthmus config check`).
std::string describe(const Config& c);

}  // namespace isthmus::coupler
