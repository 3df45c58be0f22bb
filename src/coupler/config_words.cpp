#include "coupler/config_words.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace isthmus::coupler::words {

namespace {

bool one_of(const std::string& w, std::initializer_list<const char*> list) {
  for (const char* s : list)
    if (w == s) return true;
  return false;
}

// The length of the UTF-8 sequence at s[i], or 0 if it is not one.
size_t utf8_length(const std::string& s, size_t i) {
  auto c = static_cast<unsigned char>(s[i]);
  size_t n = (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : (c & 0xF8) == 0xF0 ? 4 : 0;
  if (n == 0 || c == 0xC0 || c == 0xC1 || c > 0xF4 || i + n > s.size()) return 0;
  for (size_t k = 1; k < n; ++k)
    if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) return 0;
  return n;
}

}  // namespace

void check_text(const std::string& file, const std::string& text, const char* what) {
  int line = 1;
  size_t line_start = 0;
  for (size_t i = 0; i < text.size();) {
    auto c = static_cast<unsigned char>(text[i]);
    size_t n = 1;
    if (c == '\n') {
      ++line;
      line_start = i + 1;
    } else if ((c < 0x20 && c != '\t' && c != '\r' && c != '\v' && c != '\f') || c == 0x7F ||
               (c >= 0x80 && (n = utf8_length(text, i)) == 0)) {
      char hex[8];
      std::snprintf(hex, sizeof hex, "0x%02X", c);
      Where{file, line, ""}.fail("not a text line: byte ", hex, " at column ", i - line_start + 1,
                                 " (", what, " is UTF-8 text)");
    }
    i += n;
  }
}

std::optional<int64_t> to_int(const std::string& word) {
  const char* b = word.data();
  const char* e = b + word.size();
  if (b != e && *b == '+') ++b;  // from_chars takes '-' but not '+', which namcouples use (LAG=+3600)
  if (b == e || *b == '+') return std::nullopt;
  int64_t v = 0;
  auto r = std::from_chars(b, e, v);
  if (r.ec != std::errc() || r.ptr != e) return std::nullopt;
  return v;
}

std::optional<double> to_real(const std::string& word) {
  if (word.empty() || word.size() > 64) return std::nullopt;
  // Only decimal notation: strtod would also take "nan", "inf" and hexadecimal.
  std::string s = word;
  for (char& c : s) {
    if (c == 'd' || c == 'D') c = 'e';  // Fortran's double-precision exponent (1.0D0)
    if (!std::strchr("0123456789+-.eE", c)) return std::nullopt;
  }
  char* end = nullptr;
  double v = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

int int_value(const Where& w, const std::string& what, const std::string& word, int64_t min,
              int64_t max) {
  auto v = to_int(word);
  if (!v) w.fail(what, " \"", word, "\" is not an integer");
  if (*v < min || *v > max) {
    if (max == INT32_MAX)
      w.fail(what, " is ", *v, "; it must be at least ", min);
    w.fail(what, " is ", *v, "; it must be between ", min, " and ", max);
  }
  return static_cast<int>(*v);
}

double real_value(const Where& w, const std::string& what, const std::string& word) {
  auto v = to_real(word);
  if (!v) w.fail(what, " \"", word, "\" is not a real number");
  return *v;
}

std::string real_text(double v) {
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  std::string s(buf, r.ptr);
  // A visible decimal point says "real" to a reader of the file; the value is unchanged.
  if (s.find_first_of(".eE") == std::string::npos) s += ".0";
  return s;
}

FieldStatus field_status(const Where& w, const std::string& word) {
  if (word == "EXPORTED" || word == "IGNORED") return FieldStatus::Exported;
  if (word == "EXPOUT" || word == "IGNOUT") return FieldStatus::Expout;
  if (word == "INPUT") return FieldStatus::Input;
  if (word == "OUTPUT") return FieldStatus::Output;
  if (word == "AUXILARY")
    w.fail("status AUXILARY is not supported by isthmus (an OASIS3 status that OASIS3-MCT "
           "rejects too)");
  w.fail("unknown field status \"", word,
         "\" (expected EXPORTED, EXPOUT, INPUT or OUTPUT; IGNORED and IGNOUT are read as "
         "EXPORTED and EXPOUT)");
}

TimeOp time_op(const Where& w, const std::string& word) {
  if (word == "INSTANT") return TimeOp::Instant;
  if (word == "ACCUMUL") return TimeOp::Accumul;
  if (word == "AVERAGE") return TimeOp::Average;
  if (word == "T_MIN") return TimeOp::TMin;
  if (word == "T_MAX") return TimeOp::TMax;
  if (word == "ONCE")
    w.fail("time operation ONCE is not supported by isthmus (unused since OASIS3-MCT)");
  w.fail("unknown time operation \"", word,
         "\" (expected INSTANT, ACCUMUL, AVERAGE, T_MIN or T_MAX)");
}

ConservType conserv_type_of(const std::string& name) {
  if (name == "GLBPOS") return ConservType::Glbpos;
  if (name == "BASBAL") return ConservType::Basbal;
  if (name == "BASPOS") return ConservType::Baspos;
  return ConservType::Global;
}

ConservType conserv_type(const Where& w, const std::string& word) {
  if (!one_of(word, {"GLOBAL", "GLBPOS", "BASBAL", "BASPOS"}))
    w.fail("unknown method \"", word, "\" (expected GLOBAL, GLBPOS, BASBAL or BASPOS)");
  return conserv_type_of(word);
}

const char* conserv_type_name(ConservType t) {
  switch (t) {
    case ConservType::Global: return "GLOBAL";
    case ConservType::Glbpos: return "GLBPOS";
    case ConservType::Basbal: return "BASBAL";
    case ConservType::Baspos: return "BASPOS";
  }
  return "?";
}

SumMethod conserv_option(const Where& w, const std::string& word) {
  // OASIS3-MCT: bfb is its default and means reprosum; opt is "the fastest", lsum8.
  if (word.empty() || word == "bfb" || word == "reprosum") return SumMethod::Reprosum;
  if (word == "opt" || word == "lsum8") return SumMethod::Lsum8;
  if (word == "gather") return SumMethod::Gather;
  if (word == "lsum16") return SumMethod::Lsum16;
  if (word == "ddpdd") return SumMethod::Ddpdd;
  w.fail("unknown option \"", word,
         "\" (expected bfb, opt, gather, lsum8, lsum16, ddpdd or reprosum)");
}

void mapping_words(const Where& w, MappingSpec& m, const std::string& location,
                   const std::string& strategy) {
  if (!location.empty() && location != "src" && location != "dst")
    w.fail("unknown location \"", location, "\" (expected src or dst)");
  if (!strategy.empty() && !one_of(strategy, {"bfb", "sum", "opt"}))
    w.fail("unknown strategy \"", strategy, "\" (expected bfb, sum or opt)");
  m.location = location;
  m.strategy = strategy;
  if (strategy == "sum") {
    m.side = MapSide::Src;
    m.side_given = true;
  } else if (strategy == "opt") {
    m.side = MapSide::Auto;
    m.side_given = false;
  } else {
    // bfb, written or OASIS's default: a fixed order of the sum, which isthmus keeps by
    // multiplying on the destination side.
    m.side = MapSide::Dst;
    m.side_given = !strategy.empty() || !location.empty();
  }
}

void check_scripr(const Where& w, const ScriprSpec& s) {
  const std::string& m = s.method;
  if (one_of(m, {"BILINEARNF", "BICUBICNF", "DISTWGTNF", "GAUSWGTNF"}))
    w.fail("method ", m, " (OASIS3-MCT 5.0, no nearest-neighbour fill) is not supported by isthmus");
  if (!one_of(m, {"BILINEAR", "BICUBIC", "CONSERV", "DISTWGT", "GAUSWGT"}))
    w.fail("unknown method \"", m, "\" (expected BILINEAR, BICUBIC, CONSERV, DISTWGT or GAUSWGT)");
  if (!one_of(s.grid_type, {"LR", "D", "U"}))
    w.fail("unknown source grid type \"", s.grid_type, "\" (expected LR, D or U)");
  if ((m == "BILINEAR" || m == "BICUBIC") && s.grid_type == "U")
    w.fail(m, " needs a logically rectangular (LR) or reduced (D) source grid, not U");
  if (s.field_type == "VECTOR_I" || s.field_type == "VECTOR_J")
    w.fail("field type ", s.field_type,
           " is not supported by isthmus (vector remapping: nor by OASIS3-MCT; send the "
           "Cartesian components as scalars)");
  if (!one_of(s.field_type, {"SCALAR", "VECTOR"}))
    w.fail("unknown field type \"", s.field_type, "\" (expected SCALAR)");
  if (!one_of(s.restriction, {"LATLON", "LATITUDE"}))
    w.fail("unknown search restriction \"", s.restriction, "\" (expected LATLON or LATITUDE)");
  if (s.grid_type == "D" && (m == "BILINEAR" || m == "BICUBIC") && s.restriction != "LATITUDE")
    w.fail(m, " on a reduced (D) grid needs the LATITUDE restriction, not ", s.restriction);
  if (s.nbins < 1) w.fail("number of bins is ", s.nbins, "; it must be at least 1");
  if (m == "CONSERV") {
    const std::string& n = s.normalization;
    if (n == "DESTNNEI" || (n.size() > 2 && n.compare(n.size() - 2, 2, "TR") == 0))
      w.fail("normalization ", n,
             " (OASIS3-MCT 5.0) is not supported by isthmus (expected FRACAREA, DESTAREA or "
             "FRACNNEI)");
    if (!one_of(n, {"FRACAREA", "DESTAREA", "FRACNNEI"}))
      w.fail("unknown normalization \"", n, "\" (expected FRACAREA, DESTAREA or FRACNNEI)");
    if (s.order != "FIRST" && s.order != "SECOND")
      w.fail("unknown order \"", s.order, "\" (expected FIRST or SECOND)");
  } else if (!s.normalization.empty() || !s.order.empty()) {
    w.fail("a normalization and an order are CONSERV's parameters, not ", m, "'s");
  }
  if ((s.north_thresh || s.south_thresh) && m != "CONSERV")
    w.fail("north/south thresholds are CONSERV's parameters, not ", m, "'s");
  if (m == "DISTWGT" || m == "GAUSWGT") {
    if (s.nb_neighbours < 1)
      w.fail(m, " needs the number of neighbours (at least 1), not ", s.nb_neighbours);
  } else if (s.nb_neighbours != 0) {
    w.fail("a number of neighbours is a parameter of DISTWGT and GAUSWGT, not ", m);
  }
  if (m == "GAUSWGT" && !(s.gaussian_variance > 0))
    w.fail("GAUSWGT needs a positive variance, not ", s.gaussian_variance);
  if (m != "GAUSWGT" && s.gaussian_variance != 0)
    w.fail("a variance is a parameter of GAUSWGT, not ", m);
}

bool is_transformation_name(const std::string& name) {
  return one_of(name, {"LOCTRANS", "MAPPING", "SCRIPR", "CONSERV", "BLASOLD", "BLASNEW",
                       "CHECKIN", "CHECKOUT"});
}

void check_transformation(const Where& w, const std::string& name) {
  if (is_transformation_name(name)) return;
  if (one_of(name, {"REDGLO", "INVERT", "MASK", "EXTRAP", "CORRECT", "INTERP", "MOZAIC",
                    "NOINTERP", "FILLING", "SUBGRID", "MASKP", "REVERSE", "GLORED"}))
    w.fail(name, " is an OASIS3 transformation removed in OASIS3-MCT; not supported by isthmus");
  w.fail("unknown transformation \"", name,
         "\" (expected LOCTRANS, MAPPING, SCRIPR, CONSERV, BLASOLD, BLASNEW, CHECKIN or "
         "CHECKOUT)");
}

void check_nmapdec(const Where& w, const std::string& v) {
  if (v != "decomp_1d" && v != "decomp_wghtfile")
    w.fail("unknown value \"", v, "\" (expected decomp_1d or decomp_wghtfile)");
}

void check_nmatxrd(const Where& w, const std::string& v) {
  if (v != "orig" && v != "ceg") w.fail("unknown value \"", v, "\" (expected orig or ceg)");
}

void check_nwgtopt(const Where& w, const std::string& v) {
  if (v == "use_bad_index")
    w.fail("use_bad_index is not supported by isthmus: a weight whose index lies outside its "
           "grid is never applied (abort_on_bad_index, ignore_bad_index or "
           "ignore_bad_index_silently)");
  if (!one_of(v, {"abort_on_bad_index", "ignore_bad_index", "ignore_bad_index_silently"}))
    w.fail("unknown value \"", v,
           "\" (expected abort_on_bad_index, ignore_bad_index or ignore_bad_index_silently)");
}

void check_ncdftyp(const Where& w, const std::string& v) {
  if (!one_of(v, {"cdf1", "cdf2", "cdf5"}))
    w.fail("unknown value \"", v, "\" (expected cdf1, cdf2 or cdf5)");
}

bool nnorest_value(const std::string& v) {
  return (!v.empty() && (v[0] == 'T' || v[0] == 't')) ||
         (v.size() > 1 && v[0] == '.' && (v[1] == 'T' || v[1] == 't'));
}

bool is_unused_keyword(const std::string& name) {
  return one_of(name, {"SEQMODE", "CHANNEL", "JOBNAME", "INIDATE", "MODINFO", "CALTYPE"});
}

}  // namespace isthmus::coupler::words
