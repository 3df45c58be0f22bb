// The vocabulary shared by the namcouple and YAML readers: which words each keyword accepts and
// what they mean. Both readers go through these functions, so a word is accepted or rejected
// alike, with the same message, whichever format it was written in.
#pragma once
#include <cstdint>
#include <optional>
#include <sstream>
#include <string>

#include "base/error.h"
#include "coupler/config.h"

namespace isthmus::coupler::words {

// Where a value was read: every message starts "<file>:<line>: <keyword>: ".
struct Where {
  std::string file;
  int line = 0;
  std::string keyword;

  template <typename... Parts>
  [[noreturn]] void fail(const Parts&... parts) const {
    std::ostringstream os;
    os << file << ':' << line << ": ";
    if (!keyword.empty()) os << keyword << ": ";
    (os << ... << parts);
    throw Error(ISTHMUS_ERR_CONFIG, os.str());
  }
};

// Fails at the first byte that is neither UTF-8 text nor a blank (naming line and column):
// such a byte is damage, and could not be written to the YAML form. `what`: "a namcouple"...
void check_text(const std::string& file, const std::string& text, const char* what);

// Strict conversions: the whole word, nothing else (a sign is allowed; Fortran's D exponent too
// for reals, which must be finite).
std::optional<int64_t> to_int(const std::string& word);
std::optional<double> to_real(const std::string& word);
int int_value(const Where& w, const std::string& what, const std::string& word, int64_t min,
              int64_t max);
double real_value(const Where& w, const std::string& what, const std::string& word);

// A real written so that reading it back gives the same double, in the shortest such form.
std::string real_text(double v);

FieldStatus field_status(const Where& w, const std::string& word);  // also IGNORED, IGNOUT
TimeOp time_op(const Where& w, const std::string& word);
ConservType conserv_type(const Where& w, const std::string& word);
ConservType conserv_type_of(const std::string& name);  // no checks: for the writer
const char* conserv_type_name(ConservType t);
SumMethod conserv_option(const Where& w, const std::string& word);  // "" -> OASIS's bfb

// Sets side/side_given from the words as written (each may be empty); rejects other words.
void mapping_words(const Where& w, MappingSpec& m, const std::string& location,
                   const std::string& strategy);

// Checks one SCRIPR line's values together (method against grid type, the parameters each
// method needs), as OASIS does, and rejects OASIS3-MCT 5.0 variants isthmus does not support.
void check_scripr(const Where& w, const ScriprSpec& s);

// A transformation name of an entry's list: LOCTRANS, MAPPING, SCRIPR, CONSERV, BLASOLD, BLASNEW,
// CHECKIN, CHECKOUT. OASIS3's removed transformations and unknown words are rejected.
void check_transformation(const Where& w, const std::string& name);
bool is_transformation_name(const std::string& name);

// First-section options of OASIS3-MCT 4.0/5.0.
void check_nmapdec(const Where& w, const std::string& v);
void check_nmatxrd(const Where& w, const std::string& v);
void check_nwgtopt(const Where& w, const std::string& v);
void check_ncdftyp(const Where& w, const std::string& v);
bool nnorest_value(const std::string& v);  // OASIS: true when it starts with T, t, .T or .t

// The OASIS3 keywords OASIS3-MCT still accepts but no longer uses.
bool is_unused_keyword(const std::string& name);  // name without '$'

}  // namespace isthmus::coupler::words
