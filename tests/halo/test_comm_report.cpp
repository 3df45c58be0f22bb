// The communication report counts exchanges per step per call site and the waiting times of
// the steps between the first and the last, and writes communication_report.txt and .json.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "base/error.h"
#include "mpi_test_util.h"
#include "trace/comm_report.h"

using isthmus::trace::CommReport;

TEST(CommReport, ExcludesFirstAndLastStepsAndCountsPerSite) {
  CommReport r(MPI_COMM_WORLD);
  int a = r.site("dyn_spg_ts:flux+ssh", CommReport::Kind::Halo, 3, false, 120);
  int b = r.site("tra_adv:ts", CommReport::Kind::Halo, 2, true, 40 + world_rank());
  int c = r.site("stp_ctl:max", CommReport::Kind::Collective);
  EXPECT_EQ(r.site("tra_adv:ts", CommReport::Kind::Halo), b);  // same name, same site
  r.add(a, 100.0);  // before any step: initialisation, not counted
  for (int step = 0; step < 5; ++step) {
    r.begin_step();
    // The first and last steps carry huge times that must not show.
    double scale = (step == 0 || step == 4) ? 1000.0 : 1.0;
    r.add(a, 0.010 * scale);
    r.add(a, 0.010 * scale);
    r.add(b, 0.001 * scale);
    r.add(c, 0.002 * scale);
    r.end_step();
  }
  EXPECT_EQ(r.counted_steps(), 3);
  EXPECT_NEAR(r.wait_seconds(), 3 * 0.021, 1e-12);
  EXPECT_NEAR(r.global_wait_seconds(), 3 * 0.002, 1e-12);
  EXPECT_EQ(r.sites()[a].calls, 6);
  EXPECT_EQ(r.sites()[c].calls, 3);
  EXPECT_NEAR(r.sites()[a].seconds, 3 * 0.020, 1e-12);  // which exchange the waiting is in
  EXPECT_NEAR(r.sites()[b].seconds, 3 * 0.001, 1e-12);
  char dir[] = "/tmp/isthmus_report_XXXXXX";
  std::string prefix;
  if (world_rank() == 0) prefix = std::string(mkdtemp(dir)) + "/communication_report";
  int n = static_cast<int>(prefix.size());
  MPI_Bcast(&n, 1, MPI_INT, 0, MPI_COMM_WORLD);
  prefix.resize(n);
  MPI_Bcast(&prefix[0], n, MPI_CHAR, 0, MPI_COMM_WORLD);
  std::string text = r.write(prefix);
  if (world_rank() == 0) {
    std::ifstream t(prefix + ".txt"), j(prefix + ".json");
    std::stringstream ts, js;
    ts << t.rdbuf();
    js << j.rdbuf();
    EXPECT_EQ(ts.str(), text);
    EXPECT_NE(text.find("time steps counted 3 (first and last excluded)"), std::string::npos) << text;
    EXPECT_NE(text.find("halo exchanges per step: 3.00 (3-D: 1.00), largest halo: " +
                        std::to_string(40 + world_size() - 1 > 120 ? 40 + world_size() - 1 : 120) +
                        " points"), std::string::npos) << text;
    EXPECT_NE(text.find("global collectives per step: 1.00"), std::string::npos) << text;
    EXPECT_NE(text.find("dyn_spg_ts:flux+ssh              halo             2.00       3   2-D"
                        "           120    2.000e-02    2.000e-02"),
              std::string::npos) << text;
    EXPECT_NE(text.find("tra_adv:ts                       halo             1.00       2   3-D"),
              std::string::npos) << text;
    EXPECT_NE(js.str().find("\"steps_counted\": 3"), std::string::npos) << js.str();
    EXPECT_NE(js.str().find("\"name\": \"stp_ctl:max\", \"kind\": \"collective\", \"per_step\": 1"),
              std::string::npos) << js.str();
    std::remove((prefix + ".txt").c_str());
    std::remove((prefix + ".json").c_str());
  }
}

TEST(CommReport, MisuseIsNamed) {
  CommReport r(MPI_COMM_WORLD);
  try {
    r.end_step();
    FAIL();
  } catch (const isthmus::Error& e) {
    EXPECT_STREQ(e.what(), "communication report: end_step() without begin_step()");
  }
  try {
    r.add(3, 1.0);
    FAIL();
  } catch (const isthmus::Error& e) {
    EXPECT_STREQ(e.what(), "communication report: unknown call site 3");
  }
}
