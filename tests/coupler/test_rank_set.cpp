// Rank sets as runs: positions, lookups, unions and their text form agree with a plain sorted
// list for every set of a small universe, and broken text is an error naming it.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "base/error.h"
#include "coupler/rank_set.h"

using isthmus::coupler::RankSet;

namespace {

RankSet of(const std::vector<int>& sorted) {
  RankSet s;
  for (int r : sorted) s.push_back(r);
  return s;
}

}  // namespace

TEST(RankSet, AgreesWithASortedListForEverySubsetOfTenRanks) {
  for (unsigned mask = 0; mask < 1024; ++mask) {
    std::vector<int> list;
    for (int r = 0; r < 10; ++r)
      if (mask >> r & 1) list.push_back(r);
    const RankSet s = of(list);
    ASSERT_EQ(s.size(), static_cast<int64_t>(list.size())) << mask;
    for (size_t i = 0; i < list.size(); ++i) ASSERT_EQ(s.at(static_cast<int64_t>(i)), list[i]) << mask;
    for (int r = -1; r < 11; ++r) {
      auto it = std::find(list.begin(), list.end(), r);
      ASSERT_EQ(s.index_of(r), it == list.end() ? -1 : it - list.begin()) << mask << " rank " << r;
    }
    // runs are maximal: no two touch
    for (size_t k = 1; k < s.runs().size(); ++k) ASSERT_GT(s.runs()[k].first, s.runs()[k - 1].last + 1);
    ASSERT_EQ(RankSet::parse(s.text()), s) << s.text();
    // the union with the complement is everything, as one run
    std::vector<int> rest;
    for (int r = 0; r < 10; ++r)
      if (!(mask >> r & 1)) rest.push_back(r);
    const RankSet all = RankSet::merged(s, of(rest));
    ASSERT_EQ(all.size(), 10);
    ASSERT_EQ(all.runs().size(), 1u);
    ASSERT_EQ(all.text(), "0-9");
  }
}

TEST(RankSet, TextIsRuns) {
  EXPECT_EQ(of({0, 1, 2, 3, 8, 10, 11, 12}).text(), "0-3 8 10-12");
  EXPECT_EQ(RankSet().text(), "");
  EXPECT_TRUE(RankSet::parse("").empty());
  EXPECT_EQ(RankSet::parse("  5 7-9 ").size(), 4);
}

TEST(RankSet, BrokenTextAndOverlapsAreErrors) {
  for (const char* bad : {"x", "3-", "-3", "5-2", "1 1", "4 2", "0-3 3", "2-3 4", "1.5", "7 8-9"}) {
    try {
      RankSet::parse(bad);
      ADD_FAILURE() << "no error for \"" << bad << "\"";
    } catch (const isthmus::Error& e) {
      EXPECT_NE(std::string(e.what()).find("rank set: cannot read"), std::string::npos) << e.what();
    }
  }
  EXPECT_THROW(RankSet::merged(of({1, 2}), of({2, 3})), isthmus::Error);
  RankSet s = of({4});
  EXPECT_THROW(s.push_back(4), isthmus::Error);
  EXPECT_THROW(s.at(1), isthmus::Error);
}
