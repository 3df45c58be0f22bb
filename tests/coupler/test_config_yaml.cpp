// The YAML configuration: a hand-written YAML file and the namcouple it mirrors give the same
// Config; every namcouple survives namcouple -> YAML -> Config unchanged; read_config picks the
// format; a table of broken YAML files, each with its message (file, line, key).
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "base/error.h"
#include "coupler/config.h"

using namespace isthmus::coupler;

namespace {

const std::string kData = ISTHMUS_CONFIG_DATA;

TEST(ConfigYaml, HandWrittenYamlEqualsItsNamcouple) {
  Config yaml = read_config_yaml(kData + "/yaml/orca2_lmdz.yaml");
  Config nam = read_namcouple(kData + "/namcouples/orca2_lmdz");
  EXPECT_TRUE(yaml == nam) << "YAML:\n" << describe(yaml) << "namcouple:\n" << describe(nam);
  // Lines are the YAML file's own, for its messages.
  EXPECT_EQ(yaml.entries[0].line, 9);
  EXPECT_EQ(yaml.entries[1].line, 23);
}

TEST(ConfigYaml, EveryNamcoupleRoundTripsThroughYaml) {
  for (const char* name : {"oasis2_nbmodel", "orca2_lmdz", "oasis5_options"}) {
    SCOPED_TRACE(name);
    Config nam = read_namcouple(kData + "/namcouples/" + name);
    std::string text = to_yaml(nam);
    Config back = parse_config_yaml(text, std::string(name) + ".yaml");
    EXPECT_TRUE(back == nam) << text;
    // The writer is stable: converting the result again gives the same text.
    EXPECT_EQ(to_yaml(back), text);
  }
}

TEST(ConfigYaml, ReadConfigChoosesTheFormat) {
  Config by_extension = read_config(kData + "/yaml/orca2_lmdz.yaml");
  Config namcouple = read_config(kData + "/namcouples/orca2_lmdz");
  EXPECT_TRUE(by_extension == namcouple);
  // A YAML file without the extension is recognised by its first key.
  std::string path = testing::TempDir() + "/isthmus_config_without_extension";
  {
    std::ofstream out(path);
    out << "# a comment first\nruntime: 10\nentries: []\n";
  }
  Config c = read_config(path);
  EXPECT_EQ(c.runtime, 10);
  EXPECT_TRUE(c.entries.empty());
  std::remove(path.c_str());
}

TEST(ConfigYaml, ShortFormsOfTheTransformations) {
  Config c = parse_config_yaml(
      "runtime: 100\n"
      "entries:\n"
      "  - src: A\n"
      "    dst: B\n"
      "    period: 10\n"
      "    status: EXPORTED\n"
      "    restart: r.nc\n"
      "    src_grid: ga\n"
      "    dst_grid: gb\n"
      "    transformations: [CHECKIN, {MAPPING: w.nc}, {CONSERV: BASPOS}, {BLASNEW: {scale: 2}}]\n",
      "c.yaml");
  const Entry& e = c.entries[0];
  EXPECT_EQ(c.nfields, 1);
  EXPECT_TRUE(e.checkin);
  EXPECT_EQ(e.mapping->file, "w.nc");
  EXPECT_EQ(e.mapping->side, MapSide::Dst);
  EXPECT_FALSE(e.mapping->side_given);
  EXPECT_EQ(e.conserv->type, ConservType::Baspos);
  EXPECT_EQ(e.blasnew->scale, 2.0);
  EXPECT_FALSE(e.blasnew->has_add);
  EXPECT_EQ(e.src_grid, "ga");
}

struct Broken {
  const char* what;
  std::string text;
  std::string message;
};

// One valid entry; the cases below change one of its lines.
std::string entry(const std::string& replace_from = "", const std::string& replace_to = "") {
  std::string e =
      "runtime: 86400\n"                                   // 1
      "entries:\n"                                         // 2
      "  - src: [SST]\n"                                   // 3
      "    dst: [SSTA]\n"                                  // 4
      "    period: 3600\n"                                 // 5
      "    status: EXPORTED\n"                             // 6
      "    restart: rst.nc\n"                              // 7
      "    src_grid: {name: torc, nx: 182, ny: 149}\n"     // 8
      "    dst_grid: {name: lmdz}\n"                       // 9
      "    lag: 1800\n"                                    // 10
      "    transformations:\n"                             // 11
      "      - LOCTRANS: AVERAGE\n"                        // 12
      "      - MAPPING: {file: map.nc, strategy: bfb}\n";  // 13
  if (!replace_from.empty()) {
    size_t at = e.find(replace_from);
    if (at == std::string::npos) ADD_FAILURE() << "test text lacks " << replace_from;
    else e.replace(at, replace_from.size(), replace_to);
  }
  return e;
}

TEST(ConfigYaml, TheBaseOfTheBrokenCasesIsValid) {
  EXPECT_EQ(parse_config_yaml(entry(), "c.yaml").entries.size(), 1u);
}

TEST(ConfigYaml, BrokenYamlFilesAreNamedWithFileLineAndKey) {
  const std::vector<Broken> cases = {
      {"syntax", "runtime: [1\n", "c.yaml:2: YAML syntax: end of sequence flow not found"},
      {"not a mapping", "- 1\n- 2\n",
       "c.yaml:1: expected a mapping with runtime, entries, ... (see docs/coupler-config.md)"},
      {"unknown top-level key", "runtime: 1\nentrys: []\n",
       "c.yaml:2: entrys: unknown key (expected runtime, nfields, nlogprt, tlogprt, models, "
       "nunitno, nmapdec, nmatxrd, nwgtopt, nnorest, ncdftyp, unused, entries)"},
      {"key twice", "runtime: 1\nruntime: 2\n", "c.yaml:2: runtime: key given twice"},
      {"no runtime", "entries: []\n", "c.yaml:1: runtime: key missing (the run time in seconds)"},
      {"runtime not an integer", "runtime: 1.5\n",
       "c.yaml:1: runtime: \"1.5\" is not an integer (seconds)"},
      {"unknown entry key", entry("    lag: 1800\n", "    lags: 1800\n"),
       "c.yaml:10: entry 1: lags: unknown key (expected src, dst, index, period, status, restart, "
       "input, src_grid, dst_grid, lag, seq, transformations)"},
      {"period 0", entry("period: 3600", "period: 0"),
       "c.yaml:5: entry 1: period: period is 0; it must be positive (seconds; to never couple a "
       "field, give a period longer than the run)"},
      {"lag not an integer", entry("lag: 1800", "lag: 30min"),
       "c.yaml:10: entry 1: lag: LAG \"30min\" is not an integer"},
      {"misspelt time operation", entry("AVERAGE", "AVRAGE"),
       "c.yaml:12: LOCTRANS: unknown time operation \"AVRAGE\" (expected INSTANT, ACCUMUL, "
       "AVERAGE, T_MIN or T_MAX)"},
      {"colon groups of different lengths", entry("src: [SST]", "src: SST:ICE"),
       "c.yaml:3: entry 1: 2 source fields but 1 target fields: colon groups must have the same "
       "length"},
      {"no period", entry("    period: 3600\n", ""), "c.yaml:3: entry 1: key period missing (seconds)"},
      {"unknown status", entry("EXPORTED", "SENT"),
       "c.yaml:6: entry 1: status: unknown field status \"SENT\" (expected EXPORTED, EXPOUT, "
       "INPUT or OUTPUT; IGNORED and IGNOUT are read as EXPORTED and EXPOUT)"},
      {"IGNORED", entry("EXPORTED", "IGNORED"),
       "c.yaml:6: entry 1: status: write EXPORTED (OASIS3's IGNORED is accepted in namcouples "
       "only)"},
      {"unknown grid key", entry("{name: lmdz}", "{name: lmdz, size: 3}"),
       "c.yaml:9: entry 1: dst_grid: size: unknown key (expected name, nx, ny, overlap)"},
      {"nx without ny", entry("{name: lmdz}", "{name: lmdz, nx: 3}"),
       "c.yaml:9: entry 1: dst_grid: give both nx and ny, or neither"},
      {"unknown strategy", entry("strategy: bfb", "strategy: fast"),
       "c.yaml:13: MAPPING: strategy: unknown strategy \"fast\" (expected bfb, sum or opt)"},
      {"unknown MAPPING key", entry("strategy: bfb", "side: dst"),
       "c.yaml:13: MAPPING: side: unknown key (expected file, location, strategy)"},
      {"unknown transformation", entry("- MAPPING:", "- MAPING:"),
       "c.yaml:13: entry 1: unknown transformation \"MAPING\" (expected LOCTRANS, MAPPING, "
       "SCRIPR, CONSERV, BLASOLD, BLASNEW, CHECKIN or CHECKOUT)"},
      {"transformation twice", entry("- MAPPING: {file: map.nc, strategy: bfb}", "- LOCTRANS: T_MIN"),
       "c.yaml:13: entry 1: LOCTRANS is listed twice"},
      {"SCRIPR without bins",
       entry("- MAPPING: {file: map.nc, strategy: bfb}",
             "- SCRIPR: {method: BILINEAR, grid_type: LR, field_type: SCALAR, restriction: LATLON}"),
       "c.yaml:13: SCRIPR: key bins missing"},
      {"SCRIPR 5.0 normalization",
       entry("- MAPPING: {file: map.nc, strategy: bfb}",
             "- SCRIPR: {method: CONSERV, grid_type: LR, field_type: SCALAR, restriction: LATLON, "
             "bins: 1, normalization: FRACARTR, order: FIRST}"),
       "c.yaml:13: SCRIPR: normalization FRACARTR (OASIS3-MCT 5.0) is not supported by isthmus "
       "(expected FRACAREA, DESTAREA or FRACNNEI)"},
      {"CONSERV option", entry("- MAPPING: {file: map.nc, strategy: bfb}",
                               "- CONSERV: {method: GLOBAL, option: exact}"),
       "c.yaml:13: CONSERV: unknown option \"exact\" (expected bfb, opt, gather, lsum8, lsum16, "
       "ddpdd or reprosum)"},
      {"BLASOLD without scale", entry("- MAPPING: {file: map.nc, strategy: bfb}",
                                      "- BLASOLD: {add: 1.0}"),
       "c.yaml:13: BLASOLD: key scale missing (write scale: 1.0 to only add)"},
      {"BLASNEW not a number", entry("- MAPPING: {file: map.nc, strategy: bfb}",
                                     "- BLASNEW: {scale: 1.0, add: nan}"),
       "c.yaml:13: BLASNEW: add: constant \"nan\" is not a real number"},
      {"CHECKIN with parameters", entry("- MAPPING: {file: map.nc, strategy: bfb}",
                                        "- CHECKIN: {int: 1}"),
       "c.yaml:13: CHECKIN: takes no parameters (write - CHECKIN)"},
      {"OUTPUT remapped", entry("EXPORTED", "OUTPUT").replace(entry().find("[SSTA]") , 6, "[SST]"),
       "c.yaml:13: entry 1: an OUTPUT entry takes only LOCTRANS, not MAPPING (its field is not "
       "remapped)"},
      {"INPUT without file",
       "runtime: 10\nentries:\n  - {src: A, period: 10, status: INPUT}\n",
       "c.yaml:3: entry 1: key input missing (the file an INPUT field is read from)"},
      {"more entries than nfields",
       "runtime: 10\nnfields: 0\nentries:\n  - {src: A, period: 10, status: INPUT, input: a.nc}\n",
       "c.yaml:4: nfields: more entries than the 0 declared on line 2 (this is entry 1)"},
      {"nwgtopt", "runtime: 10\nnwgtopt: use_bad_index\n",
       "c.yaml:2: nwgtopt: use_bad_index is not supported by isthmus: a weight whose index lies "
       "outside its grid is never applied (abort_on_bad_index, ignore_bad_index or "
       "ignore_bad_index_silently)"},
      {"nnorest", "runtime: 10\nnnorest: maybe\n", "c.yaml:2: nnorest: \"maybe\" is not true or false"},
      {"entries not a list", "runtime: 10\nentries: {a: 1}\n", "c.yaml:2: entries: expected a list"},
      {"a byte that is not text", entry("[SSTA]", "[SS\xc3TA]"),
       "c.yaml:4: not a text line: byte 0xC3 at column 13 (a YAML file is UTF-8 text)"},
      {"unused keyword not OASIS's", "runtime: 10\nunused: [{keyword: NFIELDS}]\n",
       "c.yaml:2: unused: keyword: \"NFIELDS\" is not one of OASIS3's unused keywords (SEQMODE, "
       "CHANNEL, JOBNAME, INIDATE, MODINFO, CALTYPE)"},
  };
  ASSERT_GE(cases.size(), 25u);
  for (const Broken& b : cases) {
    SCOPED_TRACE(b.what);
    try {
      parse_config_yaml(b.text, "c.yaml");
      ADD_FAILURE() << "no error for: " << b.what;
    } catch (const isthmus::Error& e) {
      EXPECT_EQ(e.code(), ISTHMUS_ERR_CONFIG);
      EXPECT_EQ(std::string(e.what()), b.message);
    }
  }
}

}  // namespace
