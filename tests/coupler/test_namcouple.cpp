// The namcouple reader: every keyword and form read into the right values (three namcouples in
// the styles of OASIS3-MCT 2.0, 4.0 and 5.0), and a table of broken namcouples, each with the
// exact message a user would see.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "base/error.h"
#include "coupler/config.h"

using namespace isthmus::coupler;

namespace {

const std::string kData = std::string(ISTHMUS_CONFIG_DATA) + "/namcouples";

Config parse(const std::string& text) { return parse_namcouple(text, "namcouple"); }

TEST(Namcouple, Oasis2StyleWithNbmodelAndUnusedKeywords) {
  Config c = read_namcouple(kData + "/oasis2_nbmodel");
  EXPECT_EQ(c.nfields, 3);
  EXPECT_EQ(c.runtime, 432000);
  EXPECT_EQ(c.nlogprt, 2);
  EXPECT_EQ(c.tlogprt, 0);
  EXPECT_EQ(c.models, (std::vector<std::string>{"ocean", "atmos"}));
  ASSERT_EQ(c.unused.size(), 6u);
  EXPECT_EQ(c.unused[0].keyword, "SEQMODE");
  EXPECT_EQ(c.unused[0].value, "1");
  EXPECT_EQ(c.unused[1].keyword, "CHANNEL");
  EXPECT_EQ(c.unused[1].value, "MPI1 NOBSEND");
  EXPECT_EQ(c.unused[5].keyword, "CALTYPE");
  ASSERT_EQ(c.entries.size(), 3u);

  const Entry& sst = c.entries[0];
  EXPECT_EQ(sst.line, 58);
  EXPECT_EQ(sst.src_names, std::vector<std::string>{"SOSSTSST"});
  EXPECT_EQ(sst.dst_names, std::vector<std::string>{"SISUTESU"});
  EXPECT_EQ(sst.index, 1);
  EXPECT_EQ(sst.period, 86400);
  EXPECT_EQ(sst.restart_file, "sstoc.nc");
  EXPECT_EQ(sst.status, FieldStatus::Exported);
  EXPECT_EQ(sst.src_grid, "torc");
  EXPECT_EQ(sst.dst_grid, "lmdz");
  EXPECT_EQ(sst.src_nx, 182);
  EXPECT_EQ(sst.src_ny, 149);
  EXPECT_EQ(sst.dst_nx, 96);
  EXPECT_EQ(sst.dst_ny, 72);
  EXPECT_EQ(sst.lag, 14400);
  EXPECT_EQ(sst.seq, 1);
  ASSERT_TRUE(sst.src_overlap && sst.dst_overlap);
  EXPECT_EQ(sst.src_overlap->kind, 'P');
  EXPECT_EQ(sst.src_overlap->points, 2);
  EXPECT_EQ(sst.dst_overlap->points, 0);
  EXPECT_EQ(sst.transformations,
            (std::vector<std::string>{"LOCTRANS", "CHECKIN", "MAPPING", "BLASNEW", "CHECKOUT"}));
  EXPECT_EQ(sst.loctrans, TimeOp::Average);
  EXPECT_TRUE(sst.checkin);
  EXPECT_TRUE(sst.checkout);
  ASSERT_TRUE(sst.mapping);
  EXPECT_EQ(sst.mapping->file, "rmp_torc_to_lmdz_BILINEAR.nc");
  EXPECT_EQ(sst.mapping->location, "src");
  EXPECT_EQ(sst.mapping->strategy, "bfb");
  EXPECT_EQ(sst.mapping->side, MapSide::Dst);  // bfb: a fixed order of the sum
  EXPECT_TRUE(sst.mapping->side_given);
  EXPECT_EQ(sst.mapping->line, 68);
  ASSERT_TRUE(sst.blasnew);
  EXPECT_EQ(sst.blasnew->scale, 1.0);
  EXPECT_EQ(sst.blasnew->add, 273.15);
  EXPECT_FALSE(sst.blasold);

  const Entry& flux = c.entries[1];
  EXPECT_EQ(flux.index, 6);
  EXPECT_EQ(flux.src_nx, 0);  // the grid line without dimensions
  EXPECT_EQ(flux.src_grid, "lmdz");
  EXPECT_EQ(flux.loctrans, TimeOp::Accumul);
  ASSERT_TRUE(flux.scripr);
  EXPECT_EQ(flux.scripr->method, "BILINEAR");
  EXPECT_EQ(flux.scripr->grid_type, "LR");
  EXPECT_EQ(flux.scripr->field_type, "SCALAR");
  EXPECT_EQ(flux.scripr->restriction, "LATLON");
  EXPECT_EQ(flux.scripr->nbins, 1);
  EXPECT_EQ(scripr_file_name(flux), "rmp_lmdz_to_torc_BILINEAR.nc");
  EXPECT_FALSE(flux.mapping);

  // OASIS3's IGNOUT: read as EXPOUT, without the P/R line, only LOCTRANS.
  const Entry& diag = c.entries[2];
  EXPECT_EQ(diag.status, FieldStatus::Expout);
  EXPECT_FALSE(diag.src_overlap);
  EXPECT_EQ(diag.lag, 7200);
  EXPECT_EQ(diag.seq, 0);
  EXPECT_EQ(diag.loctrans, TimeOp::Average);
}

TEST(Namcouple, Orca2LmdzTutorialStyle) {
  Config c = read_namcouple(kData + "/orca2_lmdz");
  EXPECT_EQ(c.runtime, 86400);
  EXPECT_EQ(c.nlogprt, 1);
  EXPECT_TRUE(c.models.empty());
  ASSERT_EQ(c.entries.size(), 5u);
  const Entry& sst = c.entries[0];
  EXPECT_EQ(sst.src_names, (std::vector<std::string>{"O_SSTSST", "OIceFrc"}));
  EXPECT_EQ(sst.dst_names, (std::vector<std::string>{"A_SST", "A_IceFrc"}));
  EXPECT_EQ(sst.mapping->side, MapSide::Dst);
  EXPECT_TRUE(sst.mapping->side_given);
  EXPECT_EQ(sst.mapping->location, "dst");
  EXPECT_EQ(sst.mapping->strategy, "");

  const Entry& heat = c.entries[1];
  EXPECT_EQ(heat.status, FieldStatus::Expout);
  ASSERT_TRUE(heat.conserv);
  EXPECT_EQ(heat.conserv->type, ConservType::Glbpos);
  EXPECT_EQ(heat.conserv->sum, SumMethod::Reprosum);  // OASIS's bfb is reprosum
  EXPECT_EQ(heat.conserv->option, "bfb");

  const Entry& runoff = c.entries[2];
  EXPECT_EQ(runoff.scripr->method, "CONSERV");
  EXPECT_EQ(runoff.scripr->normalization, "FRACNNEI");
  EXPECT_EQ(runoff.scripr->order, "FIRST");
  EXPECT_EQ(scripr_file_name(runoff), "rmp_torc_to_lmdz_CONSERV_FRACNNEI.nc");
  EXPECT_EQ(runoff.mapping->side, MapSide::Src);  // sum: partial sums on the source ranks
  EXPECT_TRUE(runoff.mapping->side_given);
  EXPECT_EQ(runoff.conserv->type, ConservType::Global);
  EXPECT_EQ(runoff.conserv->sum, SumMethod::Lsum8);  // OASIS's opt is lsum8
  EXPECT_EQ(runoff.seq, 0);

  const Entry& out = c.entries[3];
  EXPECT_EQ(out.status, FieldStatus::Output);
  EXPECT_EQ(out.src_names, out.dst_names);
  EXPECT_EQ(out.restart_file, "rst_out.nc");
  EXPECT_FALSE(out.src_overlap);
  EXPECT_EQ(out.loctrans, TimeOp::Average);

  const Entry& albedo = c.entries[4];
  EXPECT_EQ(albedo.status, FieldStatus::Input);
  EXPECT_EQ(albedo.input_file, "albedo.nc");
  EXPECT_EQ(albedo.period, 86400);
  EXPECT_TRUE(albedo.src_grid.empty());
}

TEST(Namcouple, Oasis5OptionsAndEveryScriprMethod) {
  Config c = read_namcouple(kData + "/oasis5_options");
  EXPECT_EQ(c.tlogprt, 1);
  ASSERT_TRUE(c.nunitno);
  EXPECT_EQ(*c.nunitno, std::make_pair(901, 920));
  EXPECT_EQ(c.nmapdec, "decomp_wghtfile");
  EXPECT_EQ(c.nmatxrd, "ceg");
  EXPECT_EQ(c.nwgtopt, "ignore_bad_index");
  EXPECT_EQ(c.nnorest, true);
  EXPECT_EQ(c.ncdftyp, "cdf2");
  ASSERT_EQ(c.unused.size(), 6u);  // listed without values, as OASIS3-MCT 4.0's example does
  EXPECT_EQ(c.unused[3].keyword, "INIDATE");
  EXPECT_EQ(c.unused[3].value, "");
  ASSERT_EQ(c.entries.size(), 6u);

  const Entry& tau = c.entries[0];
  EXPECT_EQ(tau.src_names.size(), 3u);
  EXPECT_EQ(tau.dst_names[2], "HEATFLUX");
  EXPECT_EQ(tau.seq, 3);
  EXPECT_EQ(tau.lag, -600);
  EXPECT_EQ(tau.dst_overlap->kind, 'R');
  EXPECT_EQ(tau.blasold->scale, -1.0);  // Fortran's 1.0D0
  EXPECT_FALSE(tau.blasold->has_add);
  EXPECT_EQ(tau.blasold->add, 0.0);
  EXPECT_EQ(tau.scripr->method, "GAUSWGT");
  EXPECT_EQ(tau.scripr->nb_neighbours, 9);
  EXPECT_EQ(tau.scripr->gaussian_variance, 2.0);
  EXPECT_EQ(tau.mapping->side, MapSide::Auto);  // opt: isthmus chooses
  EXPECT_FALSE(tau.mapping->side_given);
  EXPECT_EQ(tau.blasnew->scale, 2.5);
  EXPECT_EQ(tau.blasnew->add, -0.5e-3);
  EXPECT_FALSE(tau.loctrans);

  const Entry& ice = c.entries[1];
  EXPECT_EQ(ice.loctrans, TimeOp::TMin);
  EXPECT_EQ(ice.scripr->method, "DISTWGT");
  EXPECT_EQ(ice.scripr->grid_type, "U");
  EXPECT_EQ(ice.scripr->nb_neighbours, 4);

  const Entry& sol = c.entries[2];
  EXPECT_EQ(sol.loctrans, TimeOp::TMax);
  EXPECT_EQ(sol.scripr->restriction, "LATITUDE");
  EXPECT_EQ(sol.scripr->nbins, 10);
  EXPECT_EQ(sol.scripr->normalization, "DESTAREA");
  EXPECT_EQ(sol.scripr->order, "SECOND");
  EXPECT_EQ(sol.scripr->north_thresh, 1.5);
  EXPECT_EQ(sol.scripr->south_thresh, -1.5);
  EXPECT_EQ(sol.conserv->type, ConservType::Basbal);
  EXPECT_EQ(sol.conserv->sum, SumMethod::Ddpdd);

  EXPECT_EQ(c.entries[3].scripr->method, "BICUBIC");
  EXPECT_EQ(c.entries[3].scripr->grid_type, "D");
  EXPECT_EQ(c.entries[4].status, FieldStatus::Output);
  EXPECT_EQ(c.entries[4].restart_file, "");  // OUTPUT without a restart file
  EXPECT_EQ(c.entries[5].index, 17);
}

// A minimal namcouple whose line N can be replaced: the broken cases below change one line.
const std::vector<std::string> kBase = {
    "$NFIELDS",                                    // 1
    "  1",                                         // 2
    "$RUNTIME",                                    // 3
    "  86400",                                     // 4
    "$STRINGS",                                    // 5
    "SST SSTA 1 3600 2 rst.nc EXPORTED",           // 6
    "182 149 96 72 torc lmdz LAG=1800 SEQ=1",      // 7
    "P 2 P 0",                                     // 8
    "LOCTRANS MAPPING",                            // 9
    "AVERAGE",                                     // 10
    "map.nc dst bfb",                              // 11
    "$END",                                        // 12
};

std::string text_of(const std::vector<std::string>& lines) {
  std::string s;
  for (const auto& l : lines) s += l + "\n";
  return s;
}

// kBase with lines (1-based) replaced; "\x01" deletes the line.
std::string with(std::vector<std::pair<int, std::string>> changes) {
  std::vector<std::string> lines = kBase;
  // From the last line up, so that a deletion does not move the lines still to change.
  std::sort(changes.begin(), changes.end());
  for (auto it = changes.rbegin(); it != changes.rend(); ++it) {
    if (it->second == "\x01") lines.erase(lines.begin() + it->first - 1);
    else lines[it->first - 1] = it->second;
  }
  return text_of(lines);
}

std::string scripr_line(const std::string& line) {
  return with({{9, "LOCTRANS SCRIPR"}, {11, line}});
}

TEST(Namcouple, TheBaseOfTheBrokenCasesIsValid) {
  Config c = parse(text_of(kBase));
  ASSERT_EQ(c.entries.size(), 1u);
  EXPECT_EQ(c.entries[0].mapping->side, MapSide::Dst);
  EXPECT_NO_THROW(parse(scripr_line("BILINEAR LR SCALAR LATLON 1")));
}

struct Broken {
  const char* what;
  std::string text;
  std::string message;
};

TEST(Namcouple, BrokenNamcouplesAreNamedWithFileLineAndKeyword) {
  const std::string kw_list =
      "(expected $NFIELDS, $RUNTIME, $NLOGPRT, $STRINGS, $END, $NBMODEL, $NUNITNO, $NMAPDEC, "
      "$NMATXRD, $NWGTOPT, $NNOREST, $NCDFTYP, or the unused $SEQMODE, $CHANNEL, $JOBNAME, "
      "$INIDATE, $MODINFO, $CALTYPE)";
  const std::vector<Broken> cases = {
      {"misspelt time operation", with({{10, "AVRAGE"}}),
       "namcouple:10: LOCTRANS: unknown time operation \"AVRAGE\" (expected INSTANT, ACCUMUL, "
       "AVERAGE, T_MIN or T_MAX)"},
      {"ONCE", with({{10, "ONCE"}}),
       "namcouple:10: LOCTRANS: time operation ONCE is not supported by isthmus (unused since "
       "OASIS3-MCT)"},
      {"period 0", with({{6, "SST SSTA 1 0 2 rst.nc EXPORTED"}}),
       "namcouple:6: SST: period is 0; it must be positive (seconds; to never couple a field, "
       "give a period longer than the run)"},
      {"negative period", with({{6, "SST SSTA 1 -3600 2 rst.nc EXPORTED"}}),
       "namcouple:6: SST: period is -3600; it must be positive (seconds; to never couple a "
       "field, give a period longer than the run)"},
      {"period not an integer", with({{6, "SST SSTA 1 1h 2 rst.nc EXPORTED"}}),
       "namcouple:6: SST: period \"1h\" is not an integer (seconds)"},
      {"LAG not an integer", with({{7, "182 149 96 72 torc lmdz LAG=1.5 SEQ=1"}}),
       "namcouple:7: SST: LAG \"1.5\" is not an integer"},
      {"LAG twice", with({{7, "torc lmdz LAG=1 LAG=2"}}), "namcouple:7: SST: LAG given twice"},
      {"SEQ 0", with({{7, "torc lmdz SEQ=0"}}), "namcouple:7: SST: SEQ is 0; it must be at least 1"},
      {"unknown word on the grid line", with({{7, "torc lmdz LAG=1 SEQUENCE=2"}}),
       "namcouple:7: SST: unexpected \"SEQUENCE=2\" on the grid line (expected LAG=<seconds> or "
       "SEQ=<n>)"},
      {"grid line without names", with({{7, "182 149 96 72 LAG=3600"}}),
       "namcouple:7: SST: the grid line is [src_nx src_ny dst_nx dst_ny] src_grid dst_grid "
       "[LAG=n] [SEQ=n]; found \"182 149 96 72 LAG=3600\""},
      {"colon groups of different lengths", with({{6, "SST:ICE SSTA 1 3600 2 rst.nc EXPORTED"}}),
       "namcouple:6: SST:ICE: 2 source fields (SST:ICE) but 1 target fields (SSTA): colon groups "
       "must have the same length"},
      {"empty name in a colon group", with({{6, "SST::ICE A:B:C 1 3600 2 rst.nc EXPORTED"}}),
       "namcouple:6: SST::ICE: empty field name in the colon group \"SST::ICE\""},
      {"more transformations announced than listed", with({{6, "SST SSTA 1 3600 3 rst.nc EXPORTED"}}),
       "namcouple:9: SST: 3 transformations announced on line 6 but 2 listed"},
      {"a list although none announced", with({{6, "SST SSTA 1 3600 0 rst.nc EXPORTED"}}),
       "namcouple:9: SST: 0 transformations announced on line 6 but a list follows: \"LOCTRANS "
       "MAPPING\""},
      {"unknown transformation", with({{9, "LOCTRANS MAPPIN"}}),
       "namcouple:9: SST: unknown transformation \"MAPPIN\" (expected LOCTRANS, MAPPING, SCRIPR, "
       "CONSERV, BLASOLD, BLASNEW, CHECKIN or CHECKOUT)"},
      {"OASIS3 transformation", with({{9, "LOCTRANS MOZAIC"}}),
       "namcouple:9: SST: MOZAIC is an OASIS3 transformation removed in OASIS3-MCT; not "
       "supported by isthmus"},
      {"transformation twice", with({{9, "LOCTRANS LOCTRANS"}}),
       "namcouple:9: SST: LOCTRANS is listed twice"},
      {"MAPPING with two locations", with({{11, "map.nc dst src"}}),
       "namcouple:11: MAPPING: two locations (dst and src)"},
      {"MAPPING with an unknown word", with({{11, "map.nc dst fast"}}),
       "namcouple:11: MAPPING: unexpected \"fast\" after the file name (expected src, dst, bfb, "
       "sum or opt)"},
      {"the file ends inside an entry", with({{12, "\x01"}, {11, "\x01"}}),
       "namcouple:10: MAPPING: the file ends inside the entry of line 6; expected the "
       "configuration line of MAPPING"},
      {"$END inside an entry", with({{11, "$END"}, {12, "\x01"}}),
       "namcouple:11: MAPPING: expected the configuration line of MAPPING of the entry of line 6, "
       "found \"$END\""},
      {"no overlap line", with({{8, "\x01"}}),
       "namcouple:8: SST: the overlap line is P|R points P|R points (e.g. P 2 P 0); found "
       "\"LOCTRANS MAPPING\""},
      {"bad grid kind", with({{8, "X 2 P 0"}}),
       "namcouple:8: SST: source grid kind \"X\" must be P (periodic) or R (regional)"},
      {"AUXILARY", with({{6, "SST SSTA 1 3600 2 rst.nc AUXILARY"}}),
       "namcouple:6: SST: status AUXILARY is not supported by isthmus (an OASIS3 status that "
       "OASIS3-MCT rejects too)"},
      {"unknown status", with({{6, "SST SSTA 1 3600 2 rst.nc EXPORT"}}),
       "namcouple:6: SST: unknown field status \"EXPORT\" (expected EXPORTED, EXPOUT, INPUT or "
       "OUTPUT; IGNORED and IGNOUT are read as EXPORTED and EXPOUT)"},
      {"short first line", with({{6, "SST SSTA 1 3600 2 EXPORTED"}}),
       "namcouple:6: SST: an entry's first line is: source names, target names, index, period, "
       "number of transformations, restart (or input) file, status; found 6 words"},
      {"OUTPUT remapped", with({{6, "SST SST 1 3600 2 rst.nc OUTPUT"}, {8, "\x01"}}),
       "namcouple:8: SST: an OUTPUT entry takes only LOCTRANS, not MAPPING (its field is not "
       "remapped)"},
      {"OUTPUT with two names", with({{6, "SST SSTA 1 3600 2 rst.nc OUTPUT"}}),
       "namcouple:6: SST: an OUTPUT entry names its fields twice (SST SST), not SST SSTA"},
      {"INPUT with transformations", with({{6, "SST SST 1 3600 2 in.nc INPUT"}}),
       "namcouple:6: SST: an INPUT entry takes no transformations; 2 announced"},
      {"CONSERV unknown method", with({{9, "LOCTRANS CONSERV"}, {11, "GLOBL"}}),
       "namcouple:11: CONSERV: unknown method \"GLOBL\" (expected GLOBAL, GLBPOS, BASBAL or "
       "BASPOS)"},
      {"CONSERV unknown option", with({{9, "LOCTRANS CONSERV"}, {11, "GLOBAL fast"}}),
       "namcouple:11: CONSERV: unknown option \"fast\" (expected bfb, opt, gather, lsum8, lsum16, "
       "ddpdd or reprosum)"},
      {"BLASNEW with a field", with({{9, "LOCTRANS BLASNEW"}, {11, "1.0 1"}, {12, "SSTB 2.0"}}),
       "namcouple:12: BLASNEW: \"SSTB\": only CONSTANT can be added (linear combinations with "
       "other fields are not supported, nor by OASIS3-MCT)"},
      {"BLASOLD multiplier", with({{9, "LOCTRANS BLASOLD"}, {11, "one 0"}}),
       "namcouple:11: BLASOLD: multiplier \"one\" is not a real number"},
      {"BLASNEW two terms", with({{9, "LOCTRANS BLASNEW"}, {11, "1.0 2"}}),
       "namcouple:11: BLASNEW: 2 added terms: at most one CONSTANT (linear combinations with "
       "other fields are not supported, nor by OASIS3-MCT)"},
      {"CHECKIN without INT", with({{9, "LOCTRANS CHECKIN"}, {11, "ONE"}}),
       "namcouple:11: CHECKIN: expected INT=1; found \"ONE\""},
      {"SCRIPR BILINEAR on U", scripr_line("BILINEAR U SCALAR LATLON 1"),
       "namcouple:11: SCRIPR: BILINEAR needs a logically rectangular (LR) or reduced (D) source "
       "grid, not U"},
      {"SCRIPR CONSERV without order", scripr_line("CONSERV LR SCALAR LATLON 1 FRACAREA"),
       "namcouple:11: SCRIPR: expected CONSERV grid_type field_type restriction bins "
       "normalization order [north_thresh south_thresh]; found \"CONSERV LR SCALAR LATLON 1 "
       "FRACAREA\""},
      {"SCRIPR 5.0 normalization", scripr_line("CONSERV LR SCALAR LATLON 1 DESTNNEI FIRST"),
       "namcouple:11: SCRIPR: normalization DESTNNEI (OASIS3-MCT 5.0) is not supported by "
       "isthmus (expected FRACAREA, DESTAREA or FRACNNEI)"},
      {"SCRIPR 5.0 NF method", scripr_line("BILINEARNF LR SCALAR LATLON 1"),
       "namcouple:11: SCRIPR: method BILINEARNF (OASIS3-MCT 5.0, no nearest-neighbour fill) is "
       "not supported by isthmus"},
      {"SCRIPR vector", scripr_line("BILINEAR LR VECTOR_I LATLON 1"),
       "namcouple:11: SCRIPR: field type VECTOR_I is not supported by isthmus (vector remapping: "
       "nor by OASIS3-MCT; send the Cartesian components as scalars)"},
      {"SCRIPR GAUSWGT variance", scripr_line("GAUSWGT LR SCALAR LATLON 1 8 0"),
       "namcouple:11: SCRIPR: GAUSWGT needs a positive variance, not 0"},
      {"SCRIPR reduced grid", scripr_line("BICUBIC D SCALAR LATLON 1"),
       "namcouple:11: SCRIPR: BICUBIC on a reduced (D) grid needs the LATITUDE restriction, not "
       "LATLON"},
      {"SCRIPR unknown method", scripr_line("BILINEA LR SCALAR LATLON 1"),
       "namcouple:11: SCRIPR: unknown method \"BILINEA\" (expected BILINEAR, BICUBIC, CONSERV, "
       "DISTWGT or GAUSWGT)"},
      {"more entries than $NFIELDS",
       with({{12, "SST2 SSTB 1 3600 0 rst.nc EXPORTED\ntorc lmdz\nP 0 P 0\n$END"}}),
       "namcouple:12: $NFIELDS: more entries than the 1 declared on line 2 (this is entry 2)"},
      {"no $NFIELDS", with({{1, "# no"}, {2, "# no"}}),
       "namcouple:12: $NFIELDS: keyword missing (the number of entries)"},
      {"no $RUNTIME", with({{3, "# no"}, {4, "# no"}}),
       "namcouple:12: $RUNTIME: keyword missing (the run time in seconds)"},
      {"no $STRINGS", "$NFIELDS\n 0\n$RUNTIME\n 10\n",
       "namcouple:4: $STRINGS: keyword missing (the entries follow it)"},
      {"run time 0", with({{4, "0"}}), "namcouple:4: $RUNTIME: run time is 0; it must be positive (seconds)"},
      {"keyword twice", with({{3, "$NFIELDS"}}), "namcouple:3: $NFIELDS: given twice (first at line 1)"},
      {"misspelt keyword", with({{1, "$NFIELD"}}), "namcouple:1: $NFIELD: unknown keyword " + kw_list},
      {"value on the keyword line", with({{1, "$NFIELDS 1"}}),
       "namcouple:1: $NFIELDS: unexpected \"1\" after the keyword (its value goes on the next "
       "line)"},
      {"line outside a keyword", "hello\n" + text_of(kBase),
       "namcouple:1: \"hello\" is outside any keyword (expected a $KEYWORD line)"},
      {"$NTHRESH", "$NTHRESH\n 1.5\n" + text_of(kBase),
       "namcouple:1: $NTHRESH: not a keyword isthmus supports: the north and south thresholds of "
       "OASIS3-MCT 5.0 go at the end of a SCRIPR CONSERV line"},
      {"$NMAPDEC", "$NMAPDEC\n decomp_2d\n" + text_of(kBase),
       "namcouple:2: $NMAPDEC: unknown value \"decomp_2d\" (expected decomp_1d or decomp_wghtfile)"},
      {"$NWGTOPT use_bad_index", "$NWGTOPT\n use_bad_index\n" + text_of(kBase),
       "namcouple:2: $NWGTOPT: use_bad_index is not supported by isthmus: a weight whose index "
       "lies outside its grid is never applied (abort_on_bad_index, ignore_bad_index or "
       "ignore_bad_index_silently)"},
      {"$NCDFTYP", "$NCDFTYP\n cdf4\n" + text_of(kBase),
       "namcouple:2: $NCDFTYP: unknown value \"cdf4\" (expected cdf1, cdf2 or cdf5)"},
      {"$NBMODEL names missing", "$NBMODEL\n 3 ocean atmos\n" + text_of(kBase),
       "namcouple:2: $NBMODEL: 3 models announced but 2 names given"},
      {"$NLOGPRT three values", "$NLOGPRT\n 1 2 3\n" + text_of(kBase),
       "namcouple:2: $NLOGPRT: expected 1 to 2 values, found \"1 2 3\""},
      {"a byte that is not text", with({{10, "AVER\xff" "AGE"}}),
       "namcouple:10: not a text line: byte 0xFF at column 5 (a namcouple is UTF-8 text)"},
      {"missing $END in a 2.0-style file",
       "$NFIELDS\n 1\n$END\n$RUNTIME\n 10\n$END\n$STRINGS\nSST SSTA 1 3600 0 r.nc EXPORTED\n"
       "torc lmdz\nP 0 P 0\n",
       "namcouple:10: $END: missing after the entries of $STRINGS (line 7); this file closes its "
       "other keywords with $END, as OASIS3-MCT 2.0 and 3.0 require"},
  };
  ASSERT_GE(cases.size(), 25u);
  for (const Broken& b : cases) {
    SCOPED_TRACE(b.what);
    try {
      parse(b.text);
      ADD_FAILURE() << "no error for: " << b.what;
    } catch (const isthmus::Error& e) {
      EXPECT_EQ(e.code(), ISTHMUS_ERR_CONFIG);
      EXPECT_EQ(std::string(e.what()), b.message);
    }
  }
}

TEST(Namcouple, MappingWordsInEitherOrderGiveTheSide) {
  struct Case {
    const char* line;
    MapSide side;
    bool given;
  };
  for (const Case& k : {Case{"map.nc", MapSide::Dst, false}, Case{"map.nc src", MapSide::Dst, true},
                        Case{"map.nc dst", MapSide::Dst, true}, Case{"map.nc bfb", MapSide::Dst, true},
                        Case{"map.nc sum", MapSide::Src, true}, Case{"map.nc src sum", MapSide::Src, true},
                        Case{"map.nc sum dst", MapSide::Src, true},
                        Case{"map.nc opt", MapSide::Auto, false},
                        Case{"map.nc dst opt", MapSide::Auto, false}}) {
    SCOPED_TRACE(k.line);
    Config c = parse(with({{11, k.line}}));
    EXPECT_EQ(c.entries[0].mapping->side, k.side);
    EXPECT_EQ(c.entries[0].mapping->side_given, k.given);
  }
}

TEST(Namcouple, EveryTimeOperationAndConservOption) {
  const std::pair<const char*, TimeOp> ops[] = {{"INSTANT", TimeOp::Instant},
                                                {"ACCUMUL", TimeOp::Accumul},
                                                {"AVERAGE", TimeOp::Average},
                                                {"T_MIN", TimeOp::TMin},
                                                {"T_MAX", TimeOp::TMax}};
  for (const auto& [word, op] : ops) EXPECT_EQ(parse(with({{10, word}})).entries[0].loctrans, op);
  const std::pair<const char*, SumMethod> sums[] = {
      {"GLOBAL", SumMethod::Reprosum},       {"GLOBAL bfb", SumMethod::Reprosum},
      {"GLOBAL reprosum", SumMethod::Reprosum}, {"GLOBAL opt", SumMethod::Lsum8},
      {"GLOBAL lsum8", SumMethod::Lsum8},    {"GLOBAL lsum16", SumMethod::Lsum16},
      {"GLOBAL gather", SumMethod::Gather},  {"GLOBAL ddpdd", SumMethod::Ddpdd}};
  for (const auto& [line, sum] : sums)
    EXPECT_EQ(parse(with({{9, "LOCTRANS CONSERV"}, {11, line}})).entries[0].conserv->sum, sum);
  EXPECT_EQ(parse(with({{9, "LOCTRANS CONSERV"}, {11, "BASPOS"}})).entries[0].conserv->type,
            ConservType::Baspos);
}

TEST(Namcouple, FreeSpacingCommentsTabsAndOnce) {
  std::string text =
      "# comment\n\n   $NFIELDS\n\t1\n  # indented comment\n$RUNTIME\n 7200 \r\n$STRINGS\n"
      "  A\tB  1   ONCE 0 r.nc   IGNORED\r\n\n  ga\t gb\n$END\n";
  Config c = parse(text);
  ASSERT_EQ(c.entries.size(), 1u);
  EXPECT_EQ(c.entries[0].period, 7200);  // OASIS3's ONCE: the whole run
  EXPECT_EQ(c.entries[0].status, FieldStatus::Exported);
  EXPECT_EQ(c.entries[0].src_grid, "ga");
  EXPECT_EQ(c.entries[0].line, 9);
}

// TSMP's eCLM namcouples close $NLOGPRT with "END" (its "$" missing); OASIS3-MCT reads only the
// line after a keyword and never sees it, so it must not stop the run under isthmus either.
TEST(Namcouple, AnEndWithoutItsDollarClosesAKeyword) {
  Config c = parse(" $NFIELDS\n 1\n $END\n $RUNTIME\n 7200\n $END\n $NLOGPRT\n  5 0\n  END\n"
                   " $STRINGS\nA B 1 3600 0 r.nc EXPORTED\nga gb\nP 0 P 0\n $END\n");
  EXPECT_EQ(c.nlogprt, 5);
  EXPECT_EQ(c.tlogprt, 0);
  ASSERT_EQ(c.entries.size(), 1u);
  EXPECT_EQ(c.entries[0].src_grid, "ga");
}

TEST(Namcouple, NfieldsMayExceedTheEntriesAsTheUserGuideAllows) {
  Config c = parse(with({{2, "4"}}));
  EXPECT_EQ(c.nfields, 4);
  EXPECT_EQ(c.entries.size(), 1u);
}

TEST(Namcouple, UnreadableFileIsAFileError) {
  try {
    read_namcouple(kData + "/no_such_namcouple");
    FAIL();
  } catch (const isthmus::Error& e) {
    EXPECT_EQ(e.code(), ISTHMUS_ERR_FILE);
  }
}

TEST(Namcouple, DescribeSaysWhatWasUnderstood) {
  std::string d = describe(read_namcouple(kData + "/orca2_lmdz"));
  EXPECT_NE(d.find("5 entries ($NFIELDS 5), run time 86400 s"), std::string::npos) << d;
  EXPECT_NE(d.find("entry 1 (line 13): O_SSTSST:OIceFrc -> A_SST:A_IceFrc, EXPORTED, every 3600 s, "
                   "2 fields in one exchange"),
            std::string::npos)
      << d;
  EXPECT_NE(d.find("SCRIPR BILINEAR (LR source grid): weights from rmp_lmdz_to_torc_BILINEAR.nc"),
            std::string::npos)
      << d;
  EXPECT_NE(d.find("MAPPING weights rmp_torc_to_lmdz_CONSERV_FRACNNEI.nc, source side, partial "
                   "sums (not bit-for-bit across decompositions) (forced)"),
            std::string::npos)
      << d;
  EXPECT_NE(d.find("read from albedo.nc"), std::string::npos) << d;
}

}  // namespace
