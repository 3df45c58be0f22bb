// The YAML form of a coupling configuration (schema: docs/coupler-config.md), its writer (the
// namcouple converter), and read_config choosing the format. The values go through the same
// checks as the namcouple's (config_words.h); only the layout differs. Unknown keys are errors:
// a misspelt key silently ignored would be a coupling silently changed.
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>

#include "coupler/config.h"
#include "coupler/config_words.h"

namespace isthmus::coupler {

using words::Where;

namespace {

int line_of(const YAML::Node& n, int fallback) {
  YAML::Mark m = n.Mark();
  return m.line >= 0 ? m.line + 1 : fallback;
}

class YamlReader {
 public:
  explicit YamlReader(std::string file) : file_(std::move(file)) {}

  Config read(const std::string& text) {
    words::check_text(file_, text, "a YAML file");
    YAML::Node root;
    try {
      root = YAML::Load(text);
    } catch (const YAML::Exception& e) {
      Where{file_, e.mark.line >= 0 ? e.mark.line + 1 : 1, "YAML syntax"}.fail(e.msg);
    }
    Config c;
    c.file = file_;
    if (!root.IsMap())
      Where{file_, line_of(root, 1), ""}.fail(
          "expected a mapping with runtime, entries, ... (see docs/coupler-config.md)");
    bool nfields_given = false;
    int nfields_line = 1;
    bool runtime_given = false;
    for (const auto& [key, value] : keys(root, "", {"runtime", "nfields", "nlogprt", "tlogprt",
                                                    "models", "nunitno", "nmapdec", "nmatxrd",
                                                    "nwgtopt", "nnorest", "ncdftyp", "unused",
                                                    "entries"})) {
      Where w{file_, line_of(value, line_of(key, 1)), key.Scalar()};
      const std::string k = key.Scalar();
      if (k == "runtime") {
        auto t = words::to_int(scalar(w, value));
        if (!t) w.fail("\"", value.Scalar(), "\" is not an integer (seconds)");
        if (*t <= 0) w.fail("run time is ", *t, "; it must be positive (seconds)");
        c.runtime = *t;
        runtime_given = true;
      } else if (k == "nfields") {
        c.nfields = words::int_value(w, "number of fields", scalar(w, value), 0, INT32_MAX);
        nfields_given = true;
        nfields_line = w.line;
      } else if (k == "nlogprt") {
        c.nlogprt = words::int_value(w, "debug level", scalar(w, value), 0, 100);
      } else if (k == "tlogprt") {
        c.tlogprt = words::int_value(w, "time statistics level", scalar(w, value), -1, 3);
      } else if (k == "models") {
        for (const YAML::Node& m : sequence(w, value)) c.models.push_back(scalar(w, m));
      } else if (k == "nunitno") {
        auto s = sequence(w, value);
        if (s.size() != 2) w.fail("expected [minimum, maximum] unit numbers");
        int lo = words::int_value(w, "minimum unit number", scalar(w, s[0]), 1, INT32_MAX);
        int hi = words::int_value(w, "maximum unit number", scalar(w, s[1]), 1, INT32_MAX);
        if (hi < lo) w.fail("maximum unit number ", hi, " is below the minimum ", lo);
        c.nunitno = std::make_pair(lo, hi);
      } else if (k == "nmapdec") {
        words::check_nmapdec(w, c.nmapdec = scalar(w, value));
      } else if (k == "nmatxrd") {
        words::check_nmatxrd(w, c.nmatxrd = scalar(w, value));
      } else if (k == "nwgtopt") {
        words::check_nwgtopt(w, c.nwgtopt = scalar(w, value));
      } else if (k == "ncdftyp") {
        words::check_ncdftyp(w, c.ncdftyp = scalar(w, value));
      } else if (k == "nnorest") {
        c.nnorest = boolean(w, value);
      } else if (k == "unused") {
        for (const YAML::Node& u : sequence(w, value)) c.unused.push_back(unused(u, w.line));
      } else {  // entries
        int i = 0;
        for (const YAML::Node& e : sequence(w, value)) c.entries.push_back(entry(e, ++i, w.line));
      }
    }
    if (!runtime_given) Where{file_, 1, "runtime"}.fail("key missing (the run time in seconds)");
    if (!nfields_given) {
      c.nfields = static_cast<int>(c.entries.size());
    } else if (c.entries.size() > static_cast<size_t>(c.nfields)) {
      Where{file_, c.entries[c.nfields].line, "nfields"}.fail(
          "more entries than the ", c.nfields, " declared on line ", nfields_line,
          " (this is entry ", c.nfields + 1, ")");
    }
    return c;
  }

 private:
  // The pairs of a mapping, each key checked against the allowed ones and given once.
  std::vector<std::pair<YAML::Node, YAML::Node>> keys(const YAML::Node& map, const std::string& who,
                                                      std::initializer_list<const char*> allowed) {
    std::vector<std::pair<YAML::Node, YAML::Node>> out;
    std::set<std::string> seen;
    for (const auto& pair : map) {
      YAML::Node k(pair.first);
      std::string prefix = who.empty() ? "" : who + ": ";
      Where w{file_, line_of(k, 1), who};
      if (!k.IsScalar()) w.fail("a key must be a plain name");
      const std::string& name = k.Scalar();
      if (std::find_if(allowed.begin(), allowed.end(),
                       [&](const char* a) { return name == a; }) == allowed.end()) {
        std::string list;
        for (const char* a : allowed) list += (list.empty() ? "" : ", ") + std::string(a);
        Where{file_, w.line, prefix + name}.fail("unknown key (expected ", list, ")");
      }
      if (!seen.insert(name).second) Where{file_, w.line, prefix + name}.fail("key given twice");
      out.emplace_back(k, YAML::Node(pair.second));
    }
    return out;
  }

  static std::string scalar(const Where& w, const YAML::Node& n) {
    if (!n.IsScalar()) w.fail("expected a single value, not a ", n.IsMap() ? "mapping" : n.IsSequence() ? "list" : "null");
    return n.Scalar();
  }

  static std::vector<YAML::Node> sequence(const Where& w, const YAML::Node& n) {
    if (!n.IsSequence()) w.fail("expected a list");
    std::vector<YAML::Node> v;
    for (const YAML::Node& x : n) v.push_back(x);
    return v;
  }

  static bool boolean(const Where& w, const YAML::Node& n) {
    std::string s = scalar(w, n);
    if (s == "true") return true;
    if (s == "false") return false;
    w.fail("\"", s, "\" is not true or false");
  }

  // A list of names or a colon-grouped string, as in the namcouple.
  static std::vector<std::string> names(const Where& w, const YAML::Node& n) {
    std::vector<std::string> out;
    if (n.IsSequence()) {
      for (const YAML::Node& x : n) {
        std::string s = scalar(w, x);
        if (s.empty() || s.find_first_of(": \t") != std::string::npos)
          w.fail("\"", s, "\" is not a field name");
        out.push_back(s);
      }
      if (out.empty()) w.fail("empty list of field names");
      return out;
    }
    std::string s = scalar(w, n);
    size_t start = 0;
    while (true) {
      size_t c = s.find(':', start);
      std::string name = s.substr(start, c == std::string::npos ? std::string::npos : c - start);
      if (name.empty() || name.find_first_of(" \t") != std::string::npos)
        w.fail("\"", name, "\" in \"", s, "\" is not a field name");
      out.push_back(name);
      if (c == std::string::npos) break;
      start = c + 1;
    }
    return out;
  }

  static std::string word(const Where& w, const YAML::Node& n) {
    std::string s = scalar(w, n);
    if (s.empty() || s.find_first_of(" \t\r\n") != std::string::npos)
      w.fail("\"", s, "\" is not a single word");
    return s;
  }

  UnusedKeyword unused(const YAML::Node& n, int line) {
    Where w{file_, line_of(n, line), "unused"};
    if (!n.IsMap()) w.fail("expected {keyword: NAME, value: TEXT}");
    UnusedKeyword u;
    u.line = w.line;
    bool has_keyword = false;
    for (const auto& [k, v] : keys(n, "unused", {"keyword", "value"})) {
      Where kw{file_, line_of(v, w.line), "unused: " + k.Scalar()};
      if (k.Scalar() == "keyword") {
        u.keyword = scalar(kw, v);
        has_keyword = true;
        if (!words::is_unused_keyword(u.keyword))
          kw.fail("\"", u.keyword, "\" is not one of OASIS3's unused keywords (SEQMODE, CHANNEL, "
                  "JOBNAME, INIDATE, MODINFO, CALTYPE)");
      } else {
        u.value = scalar(kw, v);
      }
    }
    if (!has_keyword) w.fail("key keyword missing");
    return u;
  }

  void grid(const Where& w, const YAML::Node& n, std::string& name, int64_t& nx, int64_t& ny,
            std::optional<Overlap>& overlap) {
    if (n.IsScalar()) {
      name = word(w, n);
      return;
    }
    if (!n.IsMap()) w.fail("expected a grid name or {name: NAME, nx: N, ny: N, overlap: {kind: P|R, points: N}}");
    bool has_name = false, has_nx = false, has_ny = false;
    for (const auto& [k, v] : keys(n, w.keyword, {"name", "nx", "ny", "overlap"})) {
      Where kw{file_, line_of(v, w.line), w.keyword + ": " + k.Scalar()};
      const std::string& key = k.Scalar();
      if (key == "name") {
        name = word(kw, v);
        has_name = true;
      } else if (key == "nx") {
        nx = words::int_value(kw, "grid dimension", scalar(kw, v), 1, INT32_MAX);
        has_nx = true;
      } else if (key == "ny") {
        ny = words::int_value(kw, "grid dimension", scalar(kw, v), 1, INT32_MAX);
        has_ny = true;
      } else {
        if (!v.IsMap()) kw.fail("expected {kind: P|R, points: N}");
        Overlap o;
        bool has_kind = false;
        for (const auto& [ok, ov] : keys(v, kw.keyword, {"kind", "points"})) {
          Where ow{file_, line_of(ov, kw.line), kw.keyword + ": " + ok.Scalar()};
          if (ok.Scalar() == "kind") {
            std::string s = scalar(ow, ov);
            if (s != "P" && s != "R") ow.fail("\"", s, "\" must be P (periodic) or R (regional)");
            o.kind = s[0];
            has_kind = true;
          } else {
            o.points = words::int_value(ow, "overlap", scalar(ow, ov), 0, INT32_MAX);
          }
        }
        if (!has_kind) kw.fail("key kind missing (P or R)");
        overlap = o;
      }
    }
    if (!has_name) w.fail("key name missing");
    if (has_nx != has_ny) w.fail("give both nx and ny, or neither");
  }

  Entry entry(const YAML::Node& n, int index, int list_line) {
    std::string who = "entry " + std::to_string(index);
    Where w{file_, line_of(n, list_line), who};
    if (!n.IsMap()) w.fail("expected a mapping (src, dst, period, status, ...)");
    Entry e;
    e.line = w.line;
    bool has_src = false, has_dst = false, has_period = false, has_status = false;
    bool has_restart = false, has_src_grid = false, has_dst_grid = false;
    YAML::Node transformations;
    bool has_transformations = false;
    int transformations_line = w.line;
    for (const auto& [k, v] : keys(n, who, {"src", "dst", "index", "period", "status", "restart",
                                            "input", "src_grid", "dst_grid", "lag", "seq",
                                            "transformations"})) {
      const std::string& key = k.Scalar();
      Where kw{file_, line_of(v, line_of(k, w.line)), who + ": " + key};
      if (key == "src") {
        e.src_names = names(kw, v);
        has_src = true;
      } else if (key == "dst") {
        e.dst_names = names(kw, v);
        has_dst = true;
      } else if (key == "index") {
        e.index = words::int_value(kw, "index", scalar(kw, v), INT32_MIN, INT32_MAX);
      } else if (key == "period") {
        auto p = words::to_int(scalar(kw, v));
        if (!p) kw.fail("\"", v.Scalar(), "\" is not an integer (seconds)");
        if (*p <= 0)
          kw.fail("period is ", *p, "; it must be positive (seconds; to never couple a field, "
                  "give a period longer than the run)");
        if (*p > INT32_MAX) kw.fail("period ", *p, " is too large (at most ", INT32_MAX, " seconds)");
        e.period = static_cast<int>(*p);
        has_period = true;
      } else if (key == "status") {
        std::string s = scalar(kw, v);
        e.status = words::field_status(kw, s);
        if (s == "IGNORED" || s == "IGNOUT")
          kw.fail("write ", e.status == FieldStatus::Exported ? "EXPORTED" : "EXPOUT",
                  " (OASIS3's ", s, " is accepted in namcouples only)");
        has_status = true;
      } else if (key == "restart") {
        e.restart_file = word(kw, v);
        has_restart = true;
      } else if (key == "input") {
        e.input_file = word(kw, v);
      } else if (key == "src_grid") {
        grid(kw, v, e.src_grid, e.src_nx, e.src_ny, e.src_overlap);
        has_src_grid = true;
      } else if (key == "dst_grid") {
        grid(kw, v, e.dst_grid, e.dst_nx, e.dst_ny, e.dst_overlap);
        has_dst_grid = true;
      } else if (key == "lag") {
        e.lag = words::int_value(kw, "LAG", scalar(kw, v), INT32_MIN, INT32_MAX);
      } else if (key == "seq") {
        e.seq = words::int_value(kw, "SEQ", scalar(kw, v), 1, INT32_MAX);
      } else {
        transformations = v;
        has_transformations = true;
        transformations_line = kw.line;
      }
    }
    if (!has_src) w.fail("key src missing (the source field names)");
    if (!has_period) w.fail("key period missing (seconds)");
    if (!has_status) w.fail("key status missing (EXPORTED, EXPOUT, INPUT or OUTPUT)");
    bool io = e.status == FieldStatus::Input || e.status == FieldStatus::Output;
    if (!has_dst) {
      if (!io) w.fail("key dst missing (the target field names)");
      e.dst_names = e.src_names;
    }
    if (e.src_names.size() != e.dst_names.size())
      w.fail(e.src_names.size(), " source fields but ", e.dst_names.size(),
             " target fields: colon groups must have the same length");
    if (io && e.src_names != e.dst_names)
      w.fail("an ", field_status_name(e.status), " entry has the same src and dst names");
    if (e.status == FieldStatus::Input) {
      if (e.input_file.empty()) w.fail("key input missing (the file an INPUT field is read from)");
      if (has_restart || has_src_grid || has_dst_grid || has_transformations || e.lag || e.seq)
        w.fail("an INPUT entry has src, period, status and input only");
      return e;
    }
    if (!e.input_file.empty()) w.fail("key input is for INPUT entries only");
    if (!has_restart && e.status != FieldStatus::Output)
      w.fail("key restart missing (the coupling restart file)");
    if (!has_src_grid || !has_dst_grid) w.fail("keys src_grid and dst_grid are needed");
    if (has_transformations) transformation_list(e, transformations, who, transformations_line);
    return e;
  }

  void transformation_list(Entry& e, const YAML::Node& list, const std::string& who, int line) {
    Where lw{file_, line, who + ": transformations"};
    for (const YAML::Node& t : sequence(lw, list)) {
      Where tw{file_, line_of(t, line), who};
      std::string name;
      YAML::Node value;
      bool has_value = false;
      if (t.IsScalar()) {
        name = t.Scalar();
      } else if (t.IsMap() && t.size() == 1) {
        for (const auto& pair : t) {
          YAML::Node k(pair.first);
          name = k.IsScalar() ? k.Scalar() : std::string();
          value = pair.second;
        }
        has_value = true;
      } else {
        tw.fail("a transformation is NAME or {NAME: parameters}");
      }
      words::check_transformation(tw, name);
      for (const std::string& u : e.transformations)
        if (u == name) tw.fail(name, " is listed twice");
      if (e.status == FieldStatus::Output && name != "LOCTRANS")
        tw.fail("an OUTPUT entry takes only LOCTRANS, not ", name, " (its field is not remapped)");
      e.transformations.push_back(name);
      Where w{file_, tw.line, name};
      bool needs_value = name != "CHECKIN" && name != "CHECKOUT";
      if (needs_value && !has_value) w.fail("parameters missing (write ", name, ": ...)");
      if (!needs_value && has_value && !(value.IsScalar() && value.Scalar() == "true"))
        w.fail("takes no parameters (write - ", name, ")");
      if (name == "LOCTRANS") {
        e.loctrans = words::time_op(w, scalar(w, value));
      } else if (name == "CHECKIN") {
        e.checkin = true;
      } else if (name == "CHECKOUT") {
        e.checkout = true;
      } else if (name == "MAPPING") {
        e.mapping = mapping(w, value);
      } else if (name == "SCRIPR") {
        e.scripr = scripr(w, value);
      } else if (name == "CONSERV") {
        e.conserv = conserv(w, value);
      } else {
        (name == "BLASOLD" ? e.blasold : e.blasnew) = blas(w, value);
      }
    }
  }

  MappingSpec mapping(const Where& w, const YAML::Node& n) {
    MappingSpec m;
    m.line = w.line;
    if (n.IsScalar()) {
      m.file = word(w, n);
      words::mapping_words(w, m, "", "");
      return m;
    }
    if (!n.IsMap()) w.fail("expected a file name or {file: F, location: src|dst, strategy: bfb|sum|opt}");
    std::string location, strategy;
    bool has_file = false;
    for (const auto& [k, v] : keys(n, "MAPPING", {"file", "location", "strategy"})) {
      Where kw{file_, line_of(v, w.line), "MAPPING: " + k.Scalar()};
      if (k.Scalar() == "file") {
        m.file = word(kw, v);
        has_file = true;
      } else if (k.Scalar() == "location") {
        location = scalar(kw, v);
        words::mapping_words(kw, m, location, "");
      } else {
        strategy = scalar(kw, v);
        words::mapping_words(kw, m, "", strategy);
      }
    }
    if (!has_file) w.fail("key file missing (the weights file)");
    words::mapping_words(w, m, location, strategy);
    return m;
  }

  ScriprSpec scripr(const Where& w, const YAML::Node& n) {
    if (!n.IsMap()) w.fail("expected {method: M, grid_type: T, field_type: SCALAR, restriction: R, bins: N, ...}");
    ScriprSpec s;
    s.line = w.line;
    bool has[5] = {false, false, false, false, false};
    for (const auto& [k, v] : keys(n, "SCRIPR", {"method", "grid_type", "field_type", "restriction",
                                                 "bins", "normalization", "order", "neighbours",
                                                 "variance", "north_thresh", "south_thresh"})) {
      const std::string& key = k.Scalar();
      Where kw{file_, line_of(v, w.line), "SCRIPR: " + key};
      if (key == "method") s.method = scalar(kw, v), has[0] = true;
      else if (key == "grid_type") s.grid_type = scalar(kw, v), has[1] = true;
      else if (key == "field_type") s.field_type = scalar(kw, v), has[2] = true;
      else if (key == "restriction") s.restriction = scalar(kw, v), has[3] = true;
      else if (key == "bins") s.nbins = words::int_value(kw, "number of bins", scalar(kw, v), 1, INT32_MAX), has[4] = true;
      else if (key == "normalization") s.normalization = scalar(kw, v);
      else if (key == "order") s.order = scalar(kw, v);
      else if (key == "neighbours")
        s.nb_neighbours = words::int_value(kw, "number of neighbours", scalar(kw, v), 1, INT32_MAX);
      else if (key == "variance") s.gaussian_variance = words::real_value(kw, "variance", scalar(kw, v));
      else if (key == "north_thresh") s.north_thresh = words::real_value(kw, "north threshold", scalar(kw, v));
      else s.south_thresh = words::real_value(kw, "south threshold", scalar(kw, v));
    }
    const char* required[5] = {"method", "grid_type", "field_type", "restriction", "bins"};
    for (int i = 0; i < 5; ++i)
      if (!has[i]) w.fail("key ", required[i], " missing");
    if (s.north_thresh.has_value() != s.south_thresh.has_value())
      w.fail("give both north_thresh and south_thresh, or neither");
    words::check_scripr(w, s);
    return s;
  }

  ConservSpec conserv(const Where& w, const YAML::Node& n) {
    ConservSpec c;
    c.line = w.line;
    std::string method;
    if (n.IsScalar()) {
      method = n.Scalar();
    } else {
      if (!n.IsMap()) w.fail("expected a method or {method: M, option: O}");
      for (const auto& [k, v] : keys(n, "CONSERV", {"method", "option"})) {
        Where kw{file_, line_of(v, w.line), "CONSERV: " + k.Scalar()};
        if (k.Scalar() == "method") method = scalar(kw, v);
        else c.option = word(kw, v);
      }
      if (method.empty()) w.fail("key method missing (GLOBAL, GLBPOS, BASBAL or BASPOS)");
    }
    c.type = words::conserv_type(w, method);
    c.sum = words::conserv_option(w, c.option);
    return c;
  }

  BlasSpec blas(const Where& w, const YAML::Node& n) {
    if (!n.IsMap()) w.fail("expected {scale: X, add: Y}");
    BlasSpec b;
    b.line = w.line;
    bool has_scale = false;
    for (const auto& [k, v] : keys(n, w.keyword, {"scale", "add"})) {
      Where kw{file_, line_of(v, w.line), w.keyword + ": " + k.Scalar()};
      if (k.Scalar() == "scale") {
        b.scale = words::real_value(kw, "multiplier", scalar(kw, v));
        has_scale = true;
      } else {
        b.add = words::real_value(kw, "constant", scalar(kw, v));
        b.has_add = true;
      }
    }
    if (!has_scale) w.fail("key scale missing (write scale: 1.0 to only add)");
    return b;
  }

  std::string file_;
};

void emit_real(YAML::Emitter& out, const char* key, double v) {
  out << YAML::Key << key << YAML::Value << words::real_text(v);
}

void emit_names(YAML::Emitter& out, const char* key, const std::vector<std::string>& names) {
  out << YAML::Key << key << YAML::Value << YAML::Flow << YAML::BeginSeq;
  for (const auto& n : names) out << n;
  out << YAML::EndSeq;
}

void emit_grid(YAML::Emitter& out, const char* key, const std::string& name, int64_t nx,
               int64_t ny, const std::optional<Overlap>& o) {
  out << YAML::Key << key << YAML::Value << YAML::Flow << YAML::BeginMap;
  out << YAML::Key << "name" << YAML::Value << name;
  if (nx) out << YAML::Key << "nx" << YAML::Value << nx << YAML::Key << "ny" << YAML::Value << ny;
  if (o) {
    out << YAML::Key << "overlap" << YAML::Value << YAML::Flow << YAML::BeginMap
        << YAML::Key << "kind" << YAML::Value << std::string(1, o->kind)
        << YAML::Key << "points" << YAML::Value << o->points << YAML::EndMap;
  }
  out << YAML::EndMap;
}

void emit_transformation(YAML::Emitter& out, const Entry& e, const std::string& t) {
  if (t == "CHECKIN" || t == "CHECKOUT") {
    out << t;
    return;
  }
  out << YAML::BeginMap << YAML::Key << t << YAML::Value;
  if (t == "LOCTRANS") {
    out << time_op_name(e.loctrans.value_or(TimeOp::Instant));
  } else if (t == "MAPPING") {
    const MappingSpec& m = *e.mapping;
    out << YAML::Flow << YAML::BeginMap << YAML::Key << "file" << YAML::Value << m.file;
    if (!m.location.empty()) out << YAML::Key << "location" << YAML::Value << m.location;
    if (!m.strategy.empty()) out << YAML::Key << "strategy" << YAML::Value << m.strategy;
    out << YAML::EndMap;
  } else if (t == "SCRIPR") {
    const ScriprSpec& s = *e.scripr;
    out << YAML::Flow << YAML::BeginMap;
    out << YAML::Key << "method" << YAML::Value << s.method;
    out << YAML::Key << "grid_type" << YAML::Value << s.grid_type;
    out << YAML::Key << "field_type" << YAML::Value << s.field_type;
    out << YAML::Key << "restriction" << YAML::Value << s.restriction;
    out << YAML::Key << "bins" << YAML::Value << s.nbins;
    if (!s.normalization.empty()) out << YAML::Key << "normalization" << YAML::Value << s.normalization;
    if (!s.order.empty()) out << YAML::Key << "order" << YAML::Value << s.order;
    if (s.nb_neighbours) out << YAML::Key << "neighbours" << YAML::Value << s.nb_neighbours;
    if (s.method == "GAUSWGT") emit_real(out, "variance", s.gaussian_variance);
    if (s.north_thresh) emit_real(out, "north_thresh", *s.north_thresh);
    if (s.south_thresh) emit_real(out, "south_thresh", *s.south_thresh);
    out << YAML::EndMap;
  } else if (t == "CONSERV") {
    const ConservSpec& c = *e.conserv;
    out << YAML::Flow << YAML::BeginMap << YAML::Key << "method" << YAML::Value
        << words::conserv_type_name(c.type);
    if (!c.option.empty()) out << YAML::Key << "option" << YAML::Value << c.option;
    out << YAML::EndMap;
  } else {
    const BlasSpec& b = t == "BLASOLD" ? *e.blasold : *e.blasnew;
    out << YAML::Flow << YAML::BeginMap;
    emit_real(out, "scale", b.scale);
    if (b.has_add) emit_real(out, "add", b.add);
    out << YAML::EndMap;
  }
  out << YAML::EndMap;
}

std::string read_file(const std::string& path, const char* what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail(ISTHMUS_ERR_FILE, path, ": cannot open the ", what);
  std::ostringstream s;
  s << in.rdbuf();
  if (in.bad()) fail(ISTHMUS_ERR_FILE, path, ": cannot read the ", what);
  return s.str();
}

}  // namespace

Config parse_config_yaml(const std::string& text, const std::string& file_name) {
  return YamlReader(file_name).read(text);
}

Config read_config_yaml(const std::string& path) {
  return parse_config_yaml(read_file(path, "configuration"), path);
}

std::string to_yaml(const Config& c) {
  YAML::Emitter out;
  out << YAML::Comment("isthmus coupling configuration (docs/coupler-config.md)") << YAML::Newline;
  out << YAML::BeginMap;
  out << YAML::Key << "runtime" << YAML::Value << c.runtime;
  out << YAML::Key << "nfields" << YAML::Value << c.nfields;
  out << YAML::Key << "nlogprt" << YAML::Value << c.nlogprt;
  out << YAML::Key << "tlogprt" << YAML::Value << c.tlogprt;
  if (!c.models.empty()) emit_names(out, "models", c.models);
  if (c.nunitno)
    out << YAML::Key << "nunitno" << YAML::Value << YAML::Flow << YAML::BeginSeq
        << c.nunitno->first << c.nunitno->second << YAML::EndSeq;
  if (!c.nmapdec.empty()) out << YAML::Key << "nmapdec" << YAML::Value << c.nmapdec;
  if (!c.nmatxrd.empty()) out << YAML::Key << "nmatxrd" << YAML::Value << c.nmatxrd;
  if (!c.nwgtopt.empty()) out << YAML::Key << "nwgtopt" << YAML::Value << c.nwgtopt;
  if (c.nnorest) out << YAML::Key << "nnorest" << YAML::Value << (*c.nnorest ? "true" : "false");
  if (!c.ncdftyp.empty()) out << YAML::Key << "ncdftyp" << YAML::Value << c.ncdftyp;
  if (!c.unused.empty()) {
    out << YAML::Key << "unused" << YAML::Value << YAML::BeginSeq;
    for (const auto& u : c.unused) {
      out << YAML::Flow << YAML::BeginMap << YAML::Key << "keyword" << YAML::Value << u.keyword;
      if (!u.value.empty())
        out << YAML::Key << "value" << YAML::Value << YAML::DoubleQuoted << u.value;
      out << YAML::EndMap;
    }
    out << YAML::EndSeq;
  }
  out << YAML::Key << "entries" << YAML::Value << YAML::BeginSeq;
  for (const Entry& e : c.entries) {
    out << YAML::BeginMap;
    emit_names(out, "src", e.src_names);
    if (e.status != FieldStatus::Input && e.status != FieldStatus::Output)
      emit_names(out, "dst", e.dst_names);
    if (e.index != 1) out << YAML::Key << "index" << YAML::Value << e.index;
    out << YAML::Key << "period" << YAML::Value << e.period;
    out << YAML::Key << "status" << YAML::Value << field_status_name(e.status);
    if (e.status == FieldStatus::Input) {
      out << YAML::Key << "input" << YAML::Value << e.input_file << YAML::EndMap;
      continue;
    }
    if (!e.restart_file.empty()) out << YAML::Key << "restart" << YAML::Value << e.restart_file;
    emit_grid(out, "src_grid", e.src_grid, e.src_nx, e.src_ny, e.src_overlap);
    emit_grid(out, "dst_grid", e.dst_grid, e.dst_nx, e.dst_ny, e.dst_overlap);
    if (e.lag) out << YAML::Key << "lag" << YAML::Value << e.lag;
    if (e.seq) out << YAML::Key << "seq" << YAML::Value << e.seq;
    if (!e.transformations.empty()) {
      out << YAML::Key << "transformations" << YAML::Value << YAML::BeginSeq;
      for (const std::string& t : e.transformations) emit_transformation(out, e, t);
      out << YAML::EndSeq;
    }
    out << YAML::EndMap;
  }
  out << YAML::EndSeq << YAML::EndMap;
  if (!out.good()) fail(ISTHMUS_ERR_INTERNAL, "to_yaml: ", out.GetLastError());
  return std::string(out.c_str()) + "\n";
}

Config parse_config(const std::string& text, const std::string& path) {
  auto ends_with = [&](const char* s) {
    size_t n = std::char_traits<char>::length(s);
    return path.size() >= n && path.compare(path.size() - n, n, s) == 0;
  };
  if (ends_with(".yaml") || ends_with(".yml")) return parse_config_yaml(text, path);
  // A namcouple's first meaningful line is a $KEYWORD; a YAML file's is "key:" or "---".
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    size_t b = line.find_first_not_of(" \t\r");
    if (b == std::string::npos || line[b] == '#') continue;
    if (line[b] != '$' && (line.compare(b, 3, "---") == 0 || line.find(':') != std::string::npos))
      return parse_config_yaml(text, path);
    break;
  }
  return parse_namcouple(text, path);
}

Config read_config(const std::string& path) {
  return parse_config(read_file(path, "configuration"), path);
}

}  // namespace isthmus::coupler
