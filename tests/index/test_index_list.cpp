// The index layer: every representation, every OASIS partition kind, every rejected input.
#include <gtest/gtest.h>

#include <numeric>

#include "base/error.h"
#include "index/index_list.h"

using isthmus::Error;
using isthmus::IndexList;

namespace {

std::vector<int64_t> iota(int64_t from, int64_t n) {
  std::vector<int64_t> v(n);
  std::iota(v.begin(), v.end(), from);
  return v;
}

// Runs f, expects an isthmus::Error with this code and exactly this message.
template <typename F>
void expect_error(F&& f, int code, const std::string& message) {
  try {
    f();
    ADD_FAILURE() << "no error; expected: " << message;
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), code);
    EXPECT_EQ(std::string(e.what()), message);
  }
}

}  // namespace

TEST(IndexList, ExplicitIndicesKeepTheirOrderAndMergeRuns) {
  std::vector<int64_t> idx = {7, 8, 9, 2, 3, 11, 0};
  IndexList l = IndexList::from_indices(12, idx.data(), idx.size());
  EXPECT_EQ(l.size(), 7);
  EXPECT_EQ(l.global_size(), 12);
  EXPECT_EQ(l.indices(), idx);
  ASSERT_EQ(l.segments().size(), 4u);  // [7..9] [2..3] [11] [0]
  EXPECT_EQ(l.segments()[0].start, 7);
  EXPECT_EQ(l.segments()[0].length, 3);
  EXPECT_EQ(l.segments()[3].start, 0);
}

TEST(IndexList, EmptyPartsAreValid) {
  IndexList a = IndexList::from_indices(10, nullptr, 0);
  EXPECT_EQ(a.size(), 0);
  IndexList b = IndexList::from_segments(0, nullptr, nullptr, 0);
  EXPECT_EQ(b.size(), 0);
  IndexList c = IndexList::from_box(100, 5, 0, 3, 10);
  EXPECT_EQ(c.size(), 0);
}

TEST(IndexList, SegmentsInGivenOrderAdjacentOnesMerged) {
  std::vector<int64_t> st = {10, 0, 3, 5}, len = {2, 3, 2, 0};
  IndexList l = IndexList::from_segments(20, st.data(), len.data(), 4);
  EXPECT_EQ(l.indices(), (std::vector<int64_t>{10, 11, 0, 1, 2, 3, 4}));
  EXPECT_EQ(l.segments().size(), 2u);  // [10,11] then [0..4] merged, empty one dropped
}

TEST(IndexList, BoxIsRowByRow) {
  // 4x3 box at column 2, row 1 of a 10-column grid of 10x5
  IndexList l = IndexList::from_box(50, 12, 4, 3, 10);
  std::vector<int64_t> want;
  for (int j = 0; j < 3; ++j)
    for (int i = 0; i < 4; ++i) want.push_back(12 + j * 10 + i);
  EXPECT_EQ(l.indices(), want);
  EXPECT_EQ(l.segments().size(), 3u);
  // full-width rows merge into one run
  IndexList full = IndexList::from_box(50, 20, 10, 3, 10);
  EXPECT_EQ(full.segments().size(), 1u);
  EXPECT_EQ(full.indices(), iota(20, 30));
}

TEST(OasisPartition, Serial) {
  int p[] = {0, 0, 24};
  EXPECT_EQ(IndexList::from_oasis(24, p, 3).indices(), iota(0, 24));
}

TEST(OasisPartition, Apple) {
  int p[] = {1, 6, 5};
  EXPECT_EQ(IndexList::from_oasis(24, p, 3).indices(), iota(6, 5));
}

TEST(OasisPartition, Box) {
  int p[] = {2, 7, 2, 3, 6};  // global grid 6x4, box of 2x3 at (1,1)
  EXPECT_EQ(IndexList::from_oasis(24, p, 5).indices(),
            (std::vector<int64_t>{7, 8, 13, 14, 19, 20}));
}

TEST(OasisPartition, Orange) {
  int p[] = {3, 3, 20, 2, 0, 3, 10, 1};
  EXPECT_EQ(IndexList::from_oasis(24, p, 8).indices(),
            (std::vector<int64_t>{20, 21, 0, 1, 2, 10}));
}

TEST(OasisPartition, Points) {
  int p[] = {4, 5, 23, 4, 5, 6, 0};
  IndexList l = IndexList::from_oasis(24, p, 7);
  EXPECT_EQ(l.indices(), (std::vector<int64_t>{23, 4, 5, 6, 0}));
  EXPECT_EQ(l.segments().size(), 3u);
}

TEST(IndexErrors, DuplicateNamesIndexAndBothPositions) {
  std::vector<int64_t> idx = {4, 5, 9, 5};
  expect_error([&] { IndexList::from_indices(10, idx.data(), 4); }, ISTHMUS_ERR_DECOMP,
               "global index 5 appears twice, at local positions 1 and 3");
  std::vector<int64_t> st = {0, 3}, len = {5, 4};  // [0,5) and [3,7) overlap at 3
  expect_error([&] { IndexList::from_segments(10, st.data(), len.data(), 2); }, ISTHMUS_ERR_DECOMP,
               "global index 3 appears twice, at local positions 3 and 5");
}

TEST(IndexErrors, NegativeAndOutOfRange) {
  std::vector<int64_t> neg = {1, -2};
  expect_error([&] { IndexList::from_indices(10, neg.data(), 2); }, ISTHMUS_ERR_DECOMP,
               "global index -2 at local position 1 is negative");
  std::vector<int64_t> big = {0, 1, 10};
  expect_error([&] { IndexList::from_indices(10, big.data(), 3); }, ISTHMUS_ERR_DECOMP,
               "global index 10 at local position 2 is out of range [0, 10)");
  std::vector<int64_t> st = {8}, len = {4};
  expect_error([&] { IndexList::from_segments(10, st.data(), len.data(), 1); }, ISTHMUS_ERR_DECOMP,
               "global index 10 at local position 2 is out of range [0, 10)");
  std::vector<int64_t> nl = {-1};
  expect_error([&] { IndexList::from_segments(10, st.data(), nl.data(), 1); }, ISTHMUS_ERR_DECOMP,
               "segment starting at global index 8 has negative length -1");
  expect_error([&] { IndexList::from_indices(-5, nullptr, 0); }, ISTHMUS_ERR_DECOMP,
               "global size -5 is negative");
}

TEST(IndexErrors, BadBoxes) {
  expect_error([] { IndexList::from_box(50, 8, 4, 2, 10); }, ISTHMUS_ERR_DECOMP,
               "box of 4 columns at column 8 crosses the east edge of a grid of 10 columns");
  expect_error([] { IndexList::from_box(50, 0, 4, 2, 0); }, ISTHMUS_ERR_DECOMP,
               "box global_nx 0 is not positive");
  expect_error([] { IndexList::from_box(50, 40, 5, 2, 10); }, ISTHMUS_ERR_DECOMP,
               "global index 50 at local position 5 is out of range [0, 50)");
}

TEST(IndexErrors, BadOasisDescriptors) {
  int unknown[] = {5, 0, 0};
  expect_error([&] { IndexList::from_oasis(10, unknown, 3); }, ISTHMUS_ERR_DECOMP,
               "OASIS partition kind 5 is unknown (0 serial, 1 apple, 2 box, 3 orange, 4 points)");
  int serial[] = {0, 0, 9};
  expect_error([&] { IndexList::from_oasis(10, serial, 3); }, ISTHMUS_ERR_DECOMP,
               "OASIS serial partition size 9 differs from the global size 10");
  int orange[] = {3, 2, 0, 1};
  expect_error([&] { IndexList::from_oasis(10, orange, 4); }, ISTHMUS_ERR_DECOMP,
               "OASIS orange partition needs 6 values, got 4");
  int points[] = {4, 2, 3, 3};
  expect_error([&] { IndexList::from_oasis(10, points, 4); }, ISTHMUS_ERR_DECOMP,
               "global index 3 appears twice, at local positions 0 and 1");
  int box[] = {2, 0, 3};
  expect_error([&] { IndexList::from_oasis(10, box, 3); }, ISTHMUS_ERR_DECOMP,
               "OASIS box partition needs 5 values, got 3");
  expect_error([&] { IndexList::from_oasis(10, nullptr, 0); }, ISTHMUS_ERR_DECOMP,
               "OASIS partition descriptor is empty");
}
