// The index layer: every representation, every OASIS partition kind, every rejected input.
#include <gtest/gtest.h>

#include <climits>
#include <cstdint>
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
               "OASIS orange partition with 2 segments needs 6 values, got 4");
  int points[] = {4, 2, 3, 3};
  expect_error([&] { IndexList::from_oasis(10, points, 4); }, ISTHMUS_ERR_DECOMP,
               "global index 3 appears twice, at local positions 0 and 1");
  int box[] = {2, 0, 3};
  expect_error([&] { IndexList::from_oasis(10, box, 3); }, ISTHMUS_ERR_DECOMP,
               "OASIS box partition needs 5 values, got 3");
  expect_error([&] { IndexList::from_oasis(10, nullptr, 0); }, ISTHMUS_ERR_DECOMP,
               "OASIS partition descriptor has 0 values, needs at least 1");
}

// Issue 11: every range check is overflow-safe. Each input below made a check compute
// start + length, offset + j * global_nx or 2 + 2 * count past the limit of its type, so that a
// part was accepted (or rejected for the wrong reason, or crashed) instead of being named.

constexpr int64_t kMax = INT64_MAX;
constexpr int64_t kMin = INT64_MIN;

TEST(IndexOverflow, IndicesAtTheInt64Limits) {
  std::vector<int64_t> top = {kMax};
  expect_error([&] { IndexList::from_indices(1000, top.data(), 1); }, ISTHMUS_ERR_DECOMP,
               "global index 9223372036854775807 at local position 0 is out of range [0, 1000)");
  // the next index after INT64_MAX: no run may be extended past it
  std::vector<int64_t> after_top = {5, kMax, 0};
  expect_error([&] { IndexList::from_indices(1000, after_top.data(), 3); }, ISTHMUS_ERR_DECOMP,
               "global index 9223372036854775807 at local position 1 is out of range [0, 1000)");
  // a run [INT64_MAX - 1, INT64_MAX] ends one past INT64_MAX
  std::vector<int64_t> run = {0, kMax - 1, kMax};
  expect_error([&] { IndexList::from_indices(1000, run.data(), 3); }, ISTHMUS_ERR_DECOMP,
               "global index 9223372036854775806 at local position 1 is out of range [0, 1000)");
  std::vector<int64_t> bottom = {3, kMin};
  expect_error([&] { IndexList::from_indices(1000, bottom.data(), 2); }, ISTHMUS_ERR_DECOMP,
               "global index -9223372036854775808 at local position 1 is negative");
  std::vector<int64_t> bottom_run = {kMin, kMin + 1};
  expect_error([&] { IndexList::from_indices(1000, bottom_run.data(), 2); }, ISTHMUS_ERR_DECOMP,
               "global index -9223372036854775808 at local position 0 is negative");
}

TEST(IndexOverflow, SegmentsEndingPastInt64Max) {
  std::vector<int64_t> st = {kMax - 2}, len = {10};
  expect_error([&] { IndexList::from_segments(1000, st.data(), len.data(), 1); },
               ISTHMUS_ERR_DECOMP,
               "global index 9223372036854775805 at local position 0 is out of range [0, 1000)");
  // a start inside the global size, a length of INT64_MAX: the first index outside is named
  std::vector<int64_t> st2 = {0, 5}, len2 = {3, kMax};
  expect_error([&] { IndexList::from_segments(1000, st2.data(), len2.data(), 2); },
               ISTHMUS_ERR_DECOMP, "global index 1000 at local position 998 is out of range [0, 1000)");
  std::vector<int64_t> st3 = {kMax}, len3 = {kMax};
  expect_error([&] { IndexList::from_segments(1000, st3.data(), len3.data(), 1); },
               ISTHMUS_ERR_DECOMP,
               "global index 9223372036854775807 at local position 0 is out of range [0, 1000)");
  std::vector<int64_t> st4 = {kMin}, len4 = {kMax};
  expect_error([&] { IndexList::from_segments(1000, st4.data(), len4.data(), 1); },
               ISTHMUS_ERR_DECOMP, "global index -9223372036854775808 at local position 0 is negative");
  std::vector<int64_t> st5 = {0}, len5 = {kMin};
  expect_error([&] { IndexList::from_segments(1000, st5.data(), len5.data(), 1); },
               ISTHMUS_ERR_DECOMP,
               "segment starting at global index 0 has negative length -9223372036854775808");
}

TEST(IndexOverflow, LocalSizeBeyondInt64MaxIsADuplicate) {
  // Global size INT64_MAX; the local positions of the fourth segment would pass INT64_MAX. The
  // part holds more indices than the global size, so some index appears twice, and it is named
  // with local positions that fit.
  std::vector<int64_t> st = {1, 1000, 0, 0}, len = {kMax - 1, 1, 1, 1};
  expect_error([&] { IndexList::from_segments(kMax, st.data(), len.data(), 4); },
               ISTHMUS_ERR_DECOMP,
               "global index 1000 appears twice, at local positions 999 and 9223372036854775806");
  // two lengths of INT64_MAX
  std::vector<int64_t> st2 = {0, 7}, len2 = {kMax, kMax - 7};
  expect_error([&] { IndexList::from_segments(kMax, st2.data(), len2.data(), 2); },
               ISTHMUS_ERR_DECOMP,
               "global index 7 appears twice, at local positions 7 and 9223372036854775807");
}

TEST(IndexOverflow, GlobalSizeInt64MaxAcceptsIndicesNearTheTop) {
  std::vector<int64_t> idx = {kMax - 1, kMax - 3, kMax - 2, 0};
  IndexList l = IndexList::from_indices(kMax, idx.data(), 4);
  EXPECT_EQ(l.size(), 4);
  EXPECT_EQ(l.global_size(), kMax);
  EXPECT_EQ(l.indices(), idx);
  EXPECT_EQ(l.segments().size(), 3u);  // [MAX-1] [MAX-3, MAX-2] [0]
  std::vector<int64_t> past = {kMax - 2, kMax - 1, kMax};
  expect_error([&] { IndexList::from_indices(kMax, past.data(), 3); }, ISTHMUS_ERR_DECOMP,
               "global index 9223372036854775807 at local position 2 is out of range "
               "[0, 9223372036854775807)");
  std::vector<int64_t> st = {kMax - 5, 0}, len = {5, kMax - 5};
  IndexList s = IndexList::from_segments(kMax, st.data(), len.data(), 2);
  EXPECT_EQ(s.size(), kMax);  // the whole index space, in two runs
  ASSERT_EQ(s.segments().size(), 2u);
  EXPECT_EQ(s.segments()[0].start, kMax - 5);
  std::vector<int64_t> st2 = {kMax - 5}, len2 = {6};
  expect_error([&] { IndexList::from_segments(kMax, st2.data(), len2.data(), 1); },
               ISTHMUS_ERR_DECOMP,
               "global index 9223372036854775807 at local position 5 is out of range "
               "[0, 9223372036854775807)");
}

TEST(IndexOverflow, BoxesWhoseOffsetsOverflow) {
  // row 0 of 8 columns at column 2 ends past INT64_MAX (and row 1 starts past it)
  expect_error([] { IndexList::from_box(1000, kMax - 5, 8, 2, 10); }, ISTHMUS_ERR_DECOMP,
               "global index 9223372036854775802 at local position 0 is out of range [0, 1000)");
  // offset + j * global_nx: the product overflows at row 2
  expect_error([] { IndexList::from_box(kMax, 0, 1, 3, int64_t{1} << 62); }, ISTHMUS_ERR_DECOMP,
               "box row 2 at local position 2 starts at global index 0 + 2 * 4611686018427387904, "
               "out of range [0, 9223372036854775807)");
  // ... and the sum overflows at row 1
  expect_error([] { IndexList::from_box(kMax, (int64_t{1} << 62) + 5, 2, 2, int64_t{1} << 62); },
               ISTHMUS_ERR_DECOMP,
               "box row 1 at local position 2 starts at global index 4611686018427387909 + 1 * "
               "4611686018427387904, out of range [0, 9223372036854775807)");
  // column + local_nx past INT64_MAX
  expect_error([] { IndexList::from_box(1000, 5, kMax, 1, 10); }, ISTHMUS_ERR_DECOMP,
               "box of 9223372036854775807 columns at column 5 crosses the east edge of a grid of "
               "10 columns");
  // local_nx * local_ny overflows; the first row already leaves the index space
  expect_error([] { IndexList::from_box(1000, 0, int64_t{1} << 32, int64_t{1} << 32,
                                        int64_t{1} << 32); },
               ISTHMUS_ERR_DECOMP, "global index 1000 at local position 1000 is out of range [0, 1000)");
  // INT64_MAX rows of one column: named at the first row outside, nothing allocated
  expect_error([] { IndexList::from_box(1000, 0, 1, kMax, 1); }, ISTHMUS_ERR_DECOMP,
               "global index 1000 at local position 1000 is out of range [0, 1000)");
  expect_error([] { IndexList::from_box(1000, 999, 1, kMax, kMax); }, ISTHMUS_ERR_DECOMP,
               "box row 1 at local position 1 starts at global index 999 + 1 * "
               "9223372036854775807, out of range [0, 1000)");
}

TEST(IndexOverflow, HugeValidBoxes) {
  // 2^31 x 2^31 full-width rows: 2^62 indices, one run
  const int64_t w = int64_t{1} << 31;
  IndexList full = IndexList::from_box(kMax, 0, w, w, w);
  EXPECT_EQ(full.size(), w * w);
  ASSERT_EQ(full.segments().size(), 1u);
  EXPECT_EQ(full.segments()[0].length, w * w);
  // the last two rows of a grid of global size INT64_MAX (= 7^2 * 73 * 127 * 337 * 92737 * 649657)
  // and 7 * 73 * 127 columns
  const int64_t nx = 7 * 73 * 127;
  IndexList last = IndexList::from_box(kMax, kMax - 2 * nx + 3, 4, 2, nx);
  EXPECT_EQ(last.indices(), (std::vector<int64_t>{kMax - 2 * nx + 3, kMax - 2 * nx + 4,
                                                  kMax - 2 * nx + 5, kMax - 2 * nx + 6,
                                                  kMax - nx + 3, kMax - nx + 4, kMax - nx + 5,
                                                  kMax - nx + 6}));
  expect_error([&] { IndexList::from_box(kMax, kMax - nx + 3, 4, 2, nx); }, ISTHMUS_ERR_DECOMP,
               "box row 1 at local position 4 starts at global index 9223372036854710913 + 1 * "
               "64897, out of range [0, 9223372036854775807)");
}

TEST(IndexOverflow, OasisCounts) {
  int neg_orange[] = {3, -3};
  expect_error([&] { IndexList::from_oasis(10, neg_orange, 2); }, ISTHMUS_ERR_DECOMP,
               "OASIS orange partition has a negative segment count -3");
  int neg_points[] = {4, -1, 0};
  expect_error([&] { IndexList::from_oasis(10, neg_points, 3); }, ISTHMUS_ERR_DECOMP,
               "OASIS points partition has a negative point count -1");
  int big_orange[] = {3, INT_MAX, 0, 1};
  expect_error([&] { IndexList::from_oasis(10, big_orange, 4); }, ISTHMUS_ERR_DECOMP,
               "OASIS orange partition with 2147483647 segments needs 4294967296 values, got 4");
  int half_orange[] = {3, INT_MAX / 2 + 1, 0, 1};  // 2 + 2 * count passes INT_MAX
  expect_error([&] { IndexList::from_oasis(10, half_orange, 4); }, ISTHMUS_ERR_DECOMP,
               "OASIS orange partition with 1073741824 segments needs 2147483650 values, got 4");
  int odd_orange[] = {3, 2, 0, 1, 5};  // one value short
  expect_error([&] { IndexList::from_oasis(10, odd_orange, 5); }, ISTHMUS_ERR_DECOMP,
               "OASIS orange partition with 2 segments needs 6 values, got 5");
  int big_points[] = {4, INT_MAX, 1};
  expect_error([&] { IndexList::from_oasis(10, big_points, 3); }, ISTHMUS_ERR_DECOMP,
               "OASIS points partition with 2147483647 points needs 2147483649 values, got 3");
  int more_points[] = {4, 5, 1, 2};
  expect_error([&] { IndexList::from_oasis(10, more_points, 4); }, ISTHMUS_ERR_DECOMP,
               "OASIS points partition with 5 points needs 7 values, got 4");
  int ok[] = {4, 1, 3};
  expect_error([&] { IndexList::from_oasis(10, ok, -2); }, ISTHMUS_ERR_DECOMP,
               "OASIS partition descriptor has -2 values, needs at least 1");
  expect_error([&] { IndexList::from_oasis(10, nullptr, 3); }, ISTHMUS_ERR_DECOMP,
               "OASIS partition descriptor is NULL for 3 values");
  // a count that exactly fits is accepted
  int exact[] = {3, 1, 4, 2, 99};
  EXPECT_EQ(IndexList::from_oasis(10, exact, 4).indices(), (std::vector<int64_t>{4, 5}));
}

TEST(IndexOverflow, OasisNegativeLengths) {
  int apple[] = {1, 5, -1};
  expect_error([&] { IndexList::from_oasis(10, apple, 3); }, ISTHMUS_ERR_DECOMP,
               "OASIS apple partition at offset 5 has a negative length -1");
  int orange[] = {3, 2, 0, 3, 5, -2};
  expect_error([&] { IndexList::from_oasis(10, orange, 6); }, ISTHMUS_ERR_DECOMP,
               "OASIS orange partition segment 1 at offset 5 has a negative length -2");
  int orange_min[] = {3, 1, 0, INT_MIN};
  expect_error([&] { IndexList::from_oasis(10, orange_min, 4); }, ISTHMUS_ERR_DECOMP,
               "OASIS orange partition segment 0 at offset 0 has a negative length -2147483648");
}

TEST(IndexOverflow, OasisIntLimits) {
  int apple_off[] = {1, INT_MAX, 1};
  expect_error([&] { IndexList::from_oasis(10, apple_off, 3); }, ISTHMUS_ERR_DECOMP,
               "global index 2147483647 at local position 0 is out of range [0, 10)");
  int apple_len[] = {1, 5, INT_MAX};
  expect_error([&] { IndexList::from_oasis(10, apple_len, 3); }, ISTHMUS_ERR_DECOMP,
               "global index 10 at local position 5 is out of range [0, 10)");
  int apple_both[] = {1, INT_MAX, INT_MAX};
  expect_error([&] { IndexList::from_oasis(10, apple_both, 3); }, ISTHMUS_ERR_DECOMP,
               "global index 2147483647 at local position 0 is out of range [0, 10)");
  int apple_neg[] = {1, INT_MIN, 3};
  expect_error([&] { IndexList::from_oasis(10, apple_neg, 3); }, ISTHMUS_ERR_DECOMP,
               "global index -2147483648 at local position 0 is negative");
  int orange[] = {3, 2, 0, 2, INT_MAX, INT_MAX};
  expect_error([&] { IndexList::from_oasis(10, orange, 6); }, ISTHMUS_ERR_DECOMP,
               "global index 2147483647 at local position 2 is out of range [0, 10)");
  int points[] = {4, 3, 1, INT_MAX, 2};
  expect_error([&] { IndexList::from_oasis(10, points, 5); }, ISTHMUS_ERR_DECOMP,
               "global index 2147483647 at local position 1 is out of range [0, 10)");
  int box_off[] = {2, INT_MAX, 1, 1, INT_MAX};
  expect_error([&] { IndexList::from_oasis(10, box_off, 5); }, ISTHMUS_ERR_DECOMP,
               "global index 2147483647 at local position 0 is out of range [0, 10)");
  int box_rows[] = {2, 0, 1, INT_MAX, INT_MAX};  // row 1 starts at INT_MAX; nothing allocated
  expect_error([&] { IndexList::from_oasis(10, box_rows, 5); }, ISTHMUS_ERR_DECOMP,
               "global index 2147483647 at local position 1 is out of range [0, 10)");
  int box_wide[] = {2, 3, INT_MAX, INT_MAX, INT_MAX};
  expect_error([&] { IndexList::from_oasis(10, box_wide, 5); }, ISTHMUS_ERR_DECOMP,
               "box of 2147483647 columns at column 3 crosses the east edge of a grid of "
               "2147483647 columns");
  int serial[] = {0, 0, INT_MAX};
  expect_error([&] { IndexList::from_oasis(10, serial, 3); }, ISTHMUS_ERR_DECOMP,
               "OASIS serial partition size 2147483647 differs from the global size 10");
  // a box of 1 x 2 at the east edge of a grid of 2 rows of INT_MAX columns: its last index is
  // the last of the grid; a third row leaves it
  const int64_t grid = 2 * int64_t{INT_MAX};
  int box_edge[] = {2, INT_MAX - 1, 1, 2, INT_MAX};
  EXPECT_EQ(IndexList::from_oasis(grid, box_edge, 5).indices(),
            (std::vector<int64_t>{INT_MAX - 1, grid - 1}));
  box_edge[3] = 3;
  expect_error([&] { IndexList::from_oasis(grid, box_edge, 5); }, ISTHMUS_ERR_DECOMP,
               "global index 6442450940 at local position 2 is out of range [0, 4294967294)");
}
