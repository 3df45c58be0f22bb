// The OASIS3-MCT namcouple reader (2.0 to 5.0 files). The format as OASIS3-MCT reads it:
// - '#' lines and blank lines are comments; words are separated by any amount of blanks;
// - the first section is a set of $KEYWORD lines in any order, each followed by its value lines
//   (OASIS3-MCT 2.0-3.0 files close each block with $END; 4.0 dropped that requirement);
// - $STRINGS opens the second section: one entry per coupling, its lines depending on the
//   field status, ended by $END or the end of the file.
// Every keyword and word is either understood or rejected with file, line and keyword: a
// configuration the coupler would half-apply is worse than one it refuses.
#include <fstream>
#include <map>
#include <sstream>

#include "coupler/config.h"
#include "coupler/config_words.h"

namespace isthmus::coupler {

using words::Where;

namespace {

struct Line {
  int number = 0;
  std::vector<std::string> words;
  bool keyword() const { return words[0][0] == '$'; }
};

std::vector<Line> meaningful_lines(const std::string& text, const std::string& file,
                                   int& last_line) {
  words::check_text(file, text, "a namcouple");
  std::vector<Line> lines;
  std::istringstream in(text);
  std::string s;
  int number = 0;
  while (std::getline(in, s)) {
    ++number;
    Line l;
    l.number = number;
    std::string w;
    for (char c : s) {
      if (c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f') {
        if (!w.empty()) l.words.push_back(std::move(w));
        w.clear();
      } else {
        w += c;
      }
    }
    if (!w.empty()) l.words.push_back(std::move(w));
    if (l.words.empty() || l.words[0][0] == '#') continue;
    lines.push_back(std::move(l));
  }
  last_line = number;
  return lines;
}

std::string joined(const std::vector<std::string>& w, size_t from = 0) {
  std::string s;
  for (size_t i = from; i < w.size(); ++i) s += (i > from ? " " : "") + w[i];
  return s;
}

std::vector<std::string> colon_group(const Where& w, const std::string& word) {
  std::vector<std::string> names;
  size_t start = 0;
  while (true) {
    size_t c = word.find(':', start);
    std::string name = word.substr(start, c == std::string::npos ? std::string::npos : c - start);
    if (name.empty()) w.fail("empty field name in the colon group \"", word, "\"");
    names.push_back(name);
    if (c == std::string::npos) break;
    start = c + 1;
  }
  return names;
}

class NamcoupleParser {
 public:
  NamcoupleParser(const std::string& text, const std::string& file) : file_(file) {
    lines_ = meaningful_lines(text, file, last_line_);
    config_.file = file;
  }

  Config parse() {
    while (pos_ < lines_.size()) {
      const Line& l = lines_[pos_];
      if (!l.keyword())
        at(l, "").fail("\"", joined(l.words), "\" is outside any keyword (expected a $KEYWORD line)");
      std::string kw = l.words[0];
      if (l.words.size() > 1)
        at(l, kw).fail("unexpected \"", joined(l.words, 1),
                       "\" after the keyword (its value goes on the next line)");
      ++pos_;
      if (kw == "$END") {
        closed_with_end_ = true;  // a 2.0-3.0 file: its $STRINGS section must end with $END too
        continue;
      }
      auto [it, fresh] = seen_.emplace(kw, l.number);
      if (!fresh)
        at(l, kw).fail("given twice (first at line ", it->second, ")");
      if (kw == "$STRINGS") {
        strings_line_ = l.number;
        read_entries();
        continue;
      }
      std::vector<Line> values;
      while (pos_ < lines_.size() && !lines_[pos_].keyword()) {
        // "END" without its "$" closing a keyword's block: OASIS3-MCT reads only the line after
        // a keyword and never looks at this one, and real namcouples have it (TSMP's eCLM ones)
        if (lines_[pos_].words.size() == 1 && lines_[pos_].words[0] == "END") {
          closed_with_end_ = true;
          ++pos_;
          break;
        }
        values.push_back(lines_[pos_++]);
      }
      first_section_keyword(l, kw, values);
    }
    finish();
    return std::move(config_);
  }

 private:
  Where at(const Line& l, const std::string& keyword) const { return {file_, l.number, keyword}; }
  Where at_end(const std::string& keyword) const { return {file_, last_line_, keyword}; }

  // The single value line of a keyword, with between min and max words.
  const Line& single_value(const Line& kl, const std::string& kw, const std::vector<Line>& values,
                           size_t min_words, size_t max_words) {
    if (values.empty()) at(kl, kw).fail("missing value (on the line after the keyword)");
    if (values.size() > 1)
      at(values[1], kw).fail("unexpected second value line \"", joined(values[1].words), "\"");
    const Line& v = values[0];
    if (v.words.size() < min_words || v.words.size() > max_words) {
      if (min_words == max_words && min_words == 1)
        at(v, kw).fail("expected one value, found \"", joined(v.words), "\"");
      at(v, kw).fail("expected ", min_words, max_words > min_words ? " to " : "",
                     max_words > min_words ? std::to_string(max_words) : std::string(),
                     " values, found \"", joined(v.words), "\"");
    }
    return v;
  }

  void first_section_keyword(const Line& kl, const std::string& kw, const std::vector<Line>& values) {
    std::string name = kw.substr(1);
    if (name == "NFIELDS") {
      const Line& v = single_value(kl, kw, values, 1, 1);
      config_.nfields = words::int_value(at(v, kw), "number of fields", v.words[0], 0, INT32_MAX);
      nfields_line_ = v.number;
    } else if (name == "RUNTIME") {
      const Line& v = single_value(kl, kw, values, 1, 1);
      auto t = words::to_int(v.words[0]);
      if (!t) at(v, kw).fail("run time \"", v.words[0], "\" is not an integer (seconds)");
      if (*t <= 0) at(v, kw).fail("run time is ", *t, "; it must be positive (seconds)");
      config_.runtime = *t;
    } else if (name == "NLOGPRT") {
      const Line& v = single_value(kl, kw, values, 1, 2);
      config_.nlogprt = words::int_value(at(v, kw), "debug level", v.words[0], 0, 100);
      if (v.words.size() == 2)
        config_.tlogprt = words::int_value(at(v, kw), "time statistics level", v.words[1], -1, 3);
    } else if (name == "NBMODEL") {
      const Line& v = single_value(kl, kw, values, 1, 1000);
      Where w = at(v, kw);
      int n = words::int_value(w, "number of models", v.words[0], 1, 999);
      if (v.words.size() < static_cast<size_t>(n) + 1)
        w.fail(n, " models announced but ", v.words.size() - 1, " names given");
      for (int i = 1; i <= n; ++i) {
        if (words::to_int(v.words[i]))
          w.fail(n, " models announced but ", i - 1, " names given before \"", v.words[i], "\"");
        config_.models.push_back(v.words[i]);
      }
      // OASIS3 let the names be followed by each model's highest Fortran unit number.
      for (size_t i = n + 1; i < v.words.size(); ++i)
        if (!words::to_int(v.words[i]))
          w.fail("unexpected \"", v.words[i], "\" after the ", n,
                 " model names (only unit numbers may follow)");
    } else if (name == "NUNITNO") {
      const Line& v = single_value(kl, kw, values, 1, 2);
      Where w = at(v, kw);
      int lo = words::int_value(w, "minimum unit number", v.words[0], 1, INT32_MAX);
      int hi = v.words.size() == 2
                   ? words::int_value(w, "maximum unit number", v.words[1], 1, INT32_MAX)
                   : 9999;  // OASIS3-MCT's default maximum
      if (hi < lo) w.fail("maximum unit number ", hi, " is below the minimum ", lo);
      config_.nunitno = std::make_pair(lo, hi);
    } else if (name == "NMAPDEC") {
      const Line& v = single_value(kl, kw, values, 1, 1);
      words::check_nmapdec(at(v, kw), v.words[0]);
      config_.nmapdec = v.words[0];
    } else if (name == "NMATXRD") {
      const Line& v = single_value(kl, kw, values, 1, 1);
      words::check_nmatxrd(at(v, kw), v.words[0]);
      config_.nmatxrd = v.words[0];
    } else if (name == "NWGTOPT") {
      const Line& v = single_value(kl, kw, values, 1, 1);
      words::check_nwgtopt(at(v, kw), v.words[0]);
      config_.nwgtopt = v.words[0];
    } else if (name == "NCDFTYP") {
      const Line& v = single_value(kl, kw, values, 1, 1);
      words::check_ncdftyp(at(v, kw), v.words[0]);
      config_.ncdftyp = v.words[0];
    } else if (name == "NNOREST") {
      const Line& v = single_value(kl, kw, values, 1, 1);
      config_.nnorest = words::nnorest_value(v.words[0]);
    } else if (words::is_unused_keyword(name)) {
      UnusedKeyword u;
      u.keyword = name;
      u.line = kl.number;
      for (const Line& v : values) u.value += (u.value.empty() ? "" : "; ") + joined(v.words);
      config_.unused.push_back(u);
    } else if (name == "NTHRESH" || name == "STHRESH") {
      at(kl, kw).fail("not a keyword isthmus supports: the north and south thresholds of "
                      "OASIS3-MCT 5.0 go at the end of a SCRIPR CONSERV line");
    } else {
      at(kl, kw).fail("unknown keyword (expected $NFIELDS, $RUNTIME, $NLOGPRT, $STRINGS, $END, "
                      "$NBMODEL, $NUNITNO, $NMAPDEC, $NMATXRD, $NWGTOPT, $NNOREST, $NCDFTYP, or "
                      "the unused $SEQMODE, $CHANNEL, $JOBNAME, $INIDATE, $MODINFO, $CALTYPE)");
    }
  }

  // The entries of $STRINGS, up to $END, another keyword, or the end of the file.
  void read_entries() {
    while (pos_ < lines_.size()) {
      const Line& l = lines_[pos_];
      if (l.keyword()) {
        if (l.words[0] == "$END") {
          if (l.words.size() > 1)
            at(l, "$END").fail("unexpected \"", joined(l.words, 1), "\" after the keyword");
          ++pos_;
          strings_ended_ = true;
        }
        return;
      }
      read_entry();
    }
  }

  // The next line of the entry begun at `start`, which must exist and not be a keyword.
  const Line& next_line(const Line& start, const std::string& who, const char* what) {
    if (pos_ >= lines_.size())
      at_end(who).fail("the file ends inside the entry of line ", start.number, "; expected ", what);
    const Line& l = lines_[pos_];
    if (l.keyword())
      at(l, who).fail("expected ", what, " of the entry of line ", start.number, ", found \"",
                      joined(l.words), "\"");
    ++pos_;
    return l;
  }

  static void no_more_words(const Where& w, const Line& l, size_t n) {
    if (l.words.size() > n) w.fail("unexpected \"", joined(l.words, n), "\" at the end of the line");
  }

  void read_entry() {
    const Line& first = lines_[pos_++];
    const std::vector<std::string>& f = first.words;
    Entry e;
    e.line = first.number;
    const std::string& who = f[0];
    Where w = at(first, who);
    const char* layout =
        "an entry's first line is: source names, target names, index, period, number of "
        "transformations, restart (or input) file, status";
    bool output_without_file = f.size() == 6 && f[5] == "OUTPUT";
    if (f.size() < 7 && !output_without_file)
      w.fail(layout, "; found ", f.size(), " words");
    if (f.size() > 7) w.fail("unexpected \"", joined(f, 7), "\" after the status (", layout, ")");
    const std::string& status_word = output_without_file ? f[5] : f[6];
    e.status = words::field_status(w, status_word);
    // Entries OASIS3-MCT exchanges "directly" have no P/R line and only LOCTRANS.
    bool direct = status_word == "OUTPUT" || status_word == "IGNORED" || status_word == "IGNOUT";
    e.src_names = colon_group(w, f[0]);
    e.dst_names = colon_group(w, f[1]);
    if (e.src_names.size() != e.dst_names.size())
      w.fail(e.src_names.size(), " source fields (", f[0], ") but ", e.dst_names.size(),
             " target fields (", f[1], "): colon groups must have the same length");
    if ((e.status == FieldStatus::Input || e.status == FieldStatus::Output) &&
        e.src_names != e.dst_names)
      w.fail("an ", status_word, " entry names its fields twice (", f[0], " ", f[0], "), not ",
             f[0], " ", f[1]);
    e.index = words::int_value(w, "index", f[2], INT32_MIN, INT32_MAX);
    if (f[3] == "ONCE") {
      once_.push_back(config_.entries.size());  // OASIS3: the whole run; set once $RUNTIME is known
    } else {
      auto p = words::to_int(f[3]);
      if (!p) w.fail("period \"", f[3], "\" is not an integer (seconds)");
      if (*p <= 0)
        w.fail("period is ", *p, "; it must be positive (seconds; to never couple a field, give "
               "a period longer than the run)");
      if (*p > INT32_MAX) w.fail("period ", *p, " is too large (at most ", INT32_MAX, " seconds)");
      e.period = static_cast<int>(*p);
    }
    int ntrans = words::int_value(w, "number of transformations", f[4], 0, 100);
    if (e.status == FieldStatus::Input) {
      if (ntrans != 0) w.fail("an INPUT entry takes no transformations; ", ntrans, " announced");
      e.input_file = f[5];
      config_.entries.push_back(std::move(e));
      return;
    }
    if (!output_without_file) e.restart_file = f[5];

    grid_line(e, first, next_line(first, who, "the grid line (source and target grid names)"));
    if (!direct) {
      const Line& p = next_line(first, who, "the overlap line (P|R points P|R points)");
      Where pw = at(p, who);
      if (p.words.size() != 4)
        pw.fail("the overlap line is P|R points P|R points (e.g. P 2 P 0); found \"",
                joined(p.words), "\"");
      e.src_overlap = overlap(pw, p.words[0], p.words[1], "source");
      e.dst_overlap = overlap(pw, p.words[2], p.words[3], "target");
    }
    if (ntrans == 0) {
      if (pos_ < lines_.size() && !lines_[pos_].keyword() && lines_[pos_].words.size() < 6 &&
          words::is_transformation_name(lines_[pos_].words[0]))
        at(lines_[pos_], who).fail("0 transformations announced on line ", first.number,
                                   " but a list follows: \"", joined(lines_[pos_].words), "\"");
    } else {
      const Line& list = next_line(first, who, "the list of transformations");
      Where lw = at(list, who);
      for (const std::string& t : list.words) {
        words::check_transformation(lw, t);
        for (const std::string& u : e.transformations)
          if (u == t) lw.fail(t, " is listed twice");
        if (direct && t != "LOCTRANS")
          lw.fail("an ", status_word, " entry takes only LOCTRANS, not ", t,
                  " (its field is not remapped)");
        e.transformations.push_back(t);
      }
      if (static_cast<int>(list.words.size()) != ntrans)
        lw.fail(ntrans, " transformations announced on line ", first.number, " but ",
                list.words.size(), " listed");
      for (const std::string& t : e.transformations) transformation(e, first, t);
    }
    config_.entries.push_back(std::move(e));
  }

  static Overlap overlap(const Where& w, const std::string& kind, const std::string& points,
                         const char* side) {
    Overlap o;
    if (kind != "P" && kind != "R")
      w.fail(side, " grid kind \"", kind, "\" must be P (periodic) or R (regional)");
    o.kind = kind[0];
    o.points = words::int_value(w, std::string(side) + " overlap", points, 0, INT32_MAX);
    return o;
  }

  void grid_line(Entry& e, const Line& first, const Line& g) {
    Where w = at(g, first.words[0]);
    const auto& gw = g.words;
    size_t rest = 0;
    auto is_index = [](const std::string& s) { return s.rfind("LAG=", 0) == 0 || s.rfind("SEQ=", 0) == 0; };
    if (words::to_int(gw[0])) {
      if (gw.size() < 6 || is_index(gw[4]) || is_index(gw[5]))
        w.fail("the grid line is [src_nx src_ny dst_nx dst_ny] src_grid dst_grid [LAG=n] "
               "[SEQ=n]; found \"", joined(gw), "\"");
      e.src_nx = words::int_value(w, "source grid dimension", gw[0], 1, INT32_MAX);
      e.src_ny = words::int_value(w, "source grid dimension", gw[1], 1, INT32_MAX);
      e.dst_nx = words::int_value(w, "target grid dimension", gw[2], 1, INT32_MAX);
      e.dst_ny = words::int_value(w, "target grid dimension", gw[3], 1, INT32_MAX);
      e.src_grid = gw[4];
      e.dst_grid = gw[5];
      rest = 6;
    } else {
      if (gw.size() < 2 || is_index(gw[0]) || is_index(gw[1]))
        w.fail("the grid line is [src_nx src_ny dst_nx dst_ny] src_grid dst_grid [LAG=n] "
               "[SEQ=n]; found \"", joined(gw), "\"");
      if (words::to_int(gw[1]))
        w.fail("grid dimensions come in fours (src_nx src_ny dst_nx dst_ny); found \"",
               joined(gw), "\"");
      e.src_grid = gw[0];
      e.dst_grid = gw[1];
      rest = 2;
    }
    bool lag = false, seq = false;
    for (size_t i = rest; i < gw.size(); ++i) {
      const std::string& s = gw[i];
      if (s.rfind("LAG=", 0) == 0) {
        if (lag) w.fail("LAG given twice");
        lag = true;
        e.lag = words::int_value(w, "LAG", s.substr(4), INT32_MIN, INT32_MAX);
      } else if (s.rfind("SEQ=", 0) == 0) {
        if (seq) w.fail("SEQ given twice");
        seq = true;
        e.seq = words::int_value(w, "SEQ", s.substr(4), 1, INT32_MAX);
      } else {
        w.fail("unexpected \"", s, "\" on the grid line (expected LAG=<seconds> or SEQ=<n>)");
      }
    }
  }

  void transformation(Entry& e, const Line& first, const std::string& t) {
    std::string what = "the configuration line of " + t;
    const Line& l = next_line(first, t, what.c_str());
    Where w = at(l, t);
    const auto& v = l.words;
    if (t == "LOCTRANS") {
      no_more_words(w, l, 1);
      e.loctrans = words::time_op(w, v[0]);
    } else if (t == "MAPPING") {
      MappingSpec m;
      m.line = l.number;
      m.file = v[0];
      std::string location, strategy;
      for (size_t i = 1; i < v.size(); ++i) {
        if (v[i] == "src" || v[i] == "dst") {
          if (!location.empty()) w.fail("two locations (", location, " and ", v[i], ")");
          location = v[i];
        } else if (v[i] == "bfb" || v[i] == "sum" || v[i] == "opt") {
          if (!strategy.empty()) w.fail("two strategies (", strategy, " and ", v[i], ")");
          strategy = v[i];
        } else {
          w.fail("unexpected \"", v[i], "\" after the file name (expected src, dst, bfb, sum or opt)");
        }
      }
      words::mapping_words(w, m, location, strategy);
      e.mapping = m;
    } else if (t == "SCRIPR") {
      e.scripr = scripr(w, l);
    } else if (t == "CONSERV") {
      no_more_words(w, l, 2);
      ConservSpec c;
      c.line = l.number;
      c.type = words::conserv_type(w, v[0]);
      if (v.size() == 2) c.option = v[1];
      c.sum = words::conserv_option(w, c.option);
      e.conserv = c;
    } else if (t == "BLASOLD" || t == "BLASNEW") {
      BlasSpec b;
      b.line = l.number;
      if (v.size() != 2)
        w.fail("the first line is <multiplier> <number of added constants (0 or 1)>; found \"",
               joined(v), "\"");
      b.scale = words::real_value(w, "multiplier", v[0]);
      int n = words::int_value(w, "number of added terms", v[1], 0, INT32_MAX);
      if (n > 1)
        w.fail(n, " added terms: at most one CONSTANT (linear combinations with other fields are "
               "not supported, nor by OASIS3-MCT)");
      if (n == 1) {
        const Line& c = next_line(first, t, "the CONSTANT line");
        Where cw = at(c, t);
        if (c.words[0] != "CONSTANT")
          cw.fail("\"", c.words[0], "\": only CONSTANT can be added (linear combinations with "
                  "other fields are not supported, nor by OASIS3-MCT)");
        if (c.words.size() != 2) cw.fail("expected CONSTANT <value>; found \"", joined(c.words), "\"");
        b.add = words::real_value(cw, "constant", c.words[1]);
        b.has_add = true;
      }
      (t == "BLASOLD" ? e.blasold : e.blasnew) = b;
    } else {  // CHECKIN, CHECKOUT
      std::string s;
      for (const std::string& x : v) s += x;
      if (s.rfind("INT=", 0) != 0 || !words::to_int(s.substr(4)))
        w.fail("expected INT=1; found \"", joined(v), "\"");
      (t == "CHECKIN" ? e.checkin : e.checkout) = true;
    }
  }

  static ScriprSpec scripr(const Where& w, const Line& l) {
    const auto& v = l.words;
    ScriprSpec s;
    s.line = l.number;
    s.method = v[0];
    size_t want_min = 5, want_max = 5;
    if (s.method == "DISTWGT") want_min = want_max = 6;
    else if (s.method == "GAUSWGT") want_min = want_max = 7;
    else if (s.method == "CONSERV") want_min = 7, want_max = 9;
    else if (s.method != "BILINEAR" && s.method != "BICUBIC") words::check_scripr(w, s);
    const char* layout = s.method == "DISTWGT"   ? "DISTWGT grid_type field_type restriction bins neighbours"
                         : s.method == "GAUSWGT" ? "GAUSWGT grid_type field_type restriction bins neighbours variance"
                         : s.method == "CONSERV" ? "CONSERV grid_type field_type restriction bins normalization order [north_thresh south_thresh]"
                                                 : "method grid_type field_type restriction bins";
    if (v.size() < want_min || v.size() > want_max || v.size() == 8)
      w.fail("expected ", layout, "; found \"", joined(v), "\"");
    s.grid_type = v[1];
    s.field_type = v[2];
    s.restriction = v[3];
    s.nbins = words::int_value(w, "number of bins", v[4], 1, INT32_MAX);
    if (s.method == "DISTWGT" || s.method == "GAUSWGT")
      s.nb_neighbours = words::int_value(w, "number of neighbours", v[5], 1, INT32_MAX);
    if (s.method == "GAUSWGT") s.gaussian_variance = words::real_value(w, "variance", v[6]);
    if (s.method == "CONSERV") {
      s.normalization = v[5];
      s.order = v[6];
      if (v.size() == 9) {
        s.north_thresh = words::real_value(w, "north threshold", v[7]);
        s.south_thresh = words::real_value(w, "south threshold", v[8]);
      }
    }
    words::check_scripr(w, s);
    return s;
  }

  void finish() {
    if (!seen_.count("$NFIELDS")) at_end("$NFIELDS").fail("keyword missing (the number of entries)");
    if (!seen_.count("$RUNTIME")) at_end("$RUNTIME").fail("keyword missing (the run time in seconds)");
    if (!seen_.count("$STRINGS")) at_end("$STRINGS").fail("keyword missing (the entries follow it)");
    if (closed_with_end_ && !strings_ended_)
      at_end("$END").fail("missing after the entries of $STRINGS (line ", strings_line_,
                          "); this file closes its other keywords with $END, as OASIS3-MCT 2.0 "
                          "and 3.0 require");
    if (config_.entries.size() > static_cast<size_t>(config_.nfields)) {
      const Entry& extra = config_.entries[config_.nfields];
      Where{file_, extra.line, "$NFIELDS"}.fail(
          "more entries than the ", config_.nfields, " declared on line ", nfields_line_,
          " (this is entry ", config_.nfields + 1, ")");
    }
    for (size_t i : once_) config_.entries[i].period = static_cast<int>(
        std::min<int64_t>(config_.runtime, INT32_MAX));
  }

  std::string file_;
  std::vector<Line> lines_;
  int last_line_ = 0;
  size_t pos_ = 0;
  Config config_;
  std::map<std::string, int> seen_;
  bool closed_with_end_ = false, strings_ended_ = false;
  int strings_line_ = 0, nfields_line_ = 0;
  std::vector<size_t> once_;
};

}  // namespace

Config parse_namcouple(const std::string& text, const std::string& file_name) {
  return NamcoupleParser(text, file_name).parse();
}

Config read_namcouple(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail(ISTHMUS_ERR_FILE, path, ": cannot open the namcouple");
  std::ostringstream s;
  s << in.rdbuf();
  if (in.bad()) fail(ISTHMUS_ERR_FILE, path, ": cannot read the namcouple");
  return parse_namcouple(s.str(), path);
}

}  // namespace isthmus::coupler
