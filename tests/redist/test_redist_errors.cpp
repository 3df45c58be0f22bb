// Bad input gets the exact error, on every rank, and nobody hangs.
#include "redist_test_util.h"

namespace {

struct Ctx {
  isthmus_context* ctx = nullptr;
  Ctx() { EXPECT_EQ(isthmus_context_create(MPI_COMM_WORLD, &ctx), ISTHMUS_OK); }
  ~Ctx() { isthmus_context_destroy(&ctx); }
  std::string msg() const { return isthmus_last_error(ctx); }
};

std::string prefix() { return "isthmus: rank " + std::to_string(world_rank()) + ": "; }

}  // namespace

TEST(RedistErrors, DecompositionErrorsComeThroughTheContext) {
  Ctx c;
  std::vector<int64_t> idx = {3, 1, 3};
  isthmus_decomp* d = nullptr;
  EXPECT_EQ(isthmus_decomp_create_indices(c.ctx, 10, 3, idx.data(), &d), ISTHMUS_ERR_DECOMP);
  EXPECT_EQ(d, nullptr);
  EXPECT_EQ(c.msg(), prefix() + "isthmus_decomp_create_indices: global index 3 appears twice, at "
                                "local positions 0 and 2");
  int bad[] = {7, 1, 1};
  EXPECT_EQ(isthmus_decomp_create_oasis(c.ctx, 10, bad, 3, &d), ISTHMUS_ERR_DECOMP);
  EXPECT_EQ(c.msg(), prefix() + "isthmus_decomp_create_oasis: OASIS partition kind 7 is unknown "
                                "(0 serial, 1 apple, 2 box, 3 orange, 4 points)");
  EXPECT_STREQ(isthmus_error_name(ISTHMUS_ERR_DECOMP), "ISTHMUS_ERR_DECOMP");
  EXPECT_EQ(isthmus_decomp_create_indices(nullptr, 10, 0, nullptr, &d), ISTHMUS_ERR_ARG);
}

TEST(RedistErrors, UnownedDestinationIndexNamesIndexAndRank) {
  Ctx c;
  int size = world_size(), me = world_rank();
  const int64_t n = 50;
  // sources own everything but 17 and 33; the last rank asks for everything
  std::vector<int64_t> src;
  for (int64_t g = me; g < n; g += size)
    if (g != 17 && g != 33) src.push_back(g);
  std::vector<int64_t> dst;
  if (me == size - 1)
    for (int64_t g = n - 1; g >= 0; --g) dst.push_back(g);
  isthmus_decomp *s = nullptr, *d = nullptr;
  ASSERT_EQ(isthmus_decomp_create_indices(c.ctx, n, src.size(), src.data(), &s), ISTHMUS_OK);
  ASSERT_EQ(isthmus_decomp_create_indices(c.ctx, n, dst.size(), dst.data(), &d), ISTHMUS_OK);
  isthmus_xmap* x = nullptr;
  EXPECT_EQ(isthmus_xmap_create(c.ctx, s, d, nullptr, &x), ISTHMUS_ERR_UNOWNED);
  EXPECT_EQ(x, nullptr);
  // index 17 sits at local position 49 - 17 = 32 on the last rank
  EXPECT_EQ(c.msg(), prefix() + "isthmus_xmap_create: destination global index 17 (local position 32 on rank " +
                         std::to_string(size - 1) +
                         ") is owned by no source rank; 2 destination points are unowned in all. "
                         "Use the fill policy (ISTHMUS_UNOWNED_FILL) to give them a fill value instead");
  isthmus_decomp_destroy(&s);
  isthmus_decomp_destroy(&d);
}

TEST(RedistErrors, GlobalSizesMustAgree) {
  Ctx c;
  int me = world_rank(), size = world_size();
  int64_t n = (me == size - 1) ? 40 : 30;  // the last rank disagrees
  std::vector<int64_t> idx = {static_cast<int64_t>(me % 30)};
  isthmus_decomp* s = nullptr;
  ASSERT_EQ(isthmus_decomp_create_indices(c.ctx, n, 1, idx.data(), &s), ISTHMUS_OK);
  isthmus_xmap* x = nullptr;
  int rc = isthmus_xmap_create(c.ctx, s, s, nullptr, &x);
  if (size == 1) {
    EXPECT_EQ(rc, ISTHMUS_OK);
    isthmus_xmap_destroy(&x);
  } else {
    EXPECT_TRUE(same_code_everywhere(rc, ISTHMUS_ERR_ARG));
    EXPECT_EQ(c.msg(), prefix() + "isthmus_xmap_create: the global size of the decompositions must "
                           "be the same on every rank, but rank 0 passes 30 and rank " +
                           std::to_string(size - 1) + " passes 40");
  }
  isthmus_decomp_destroy(&s);
}

TEST(RedistErrors, BadRedistributionArguments) {
  Ctx c;
  int me = world_rank();
  std::vector<int64_t> idx = {me};
  isthmus_decomp* s = nullptr;
  ASSERT_EQ(isthmus_decomp_create_indices(c.ctx, world_size(), 1, idx.data(), &s), ISTHMUS_OK);
  isthmus_xmap* x = nullptr;
  ASSERT_EQ(isthmus_xmap_create(c.ctx, s, s, nullptr, &x), ISTHMUS_OK) << c.msg();
  isthmus_redist* r = nullptr;
  int types[] = {ISTHMUS_DOUBLE, 9}, levels[] = {1, 1};
  EXPECT_EQ(isthmus_redist_create(c.ctx, x, 0, types, levels, 0, &r), ISTHMUS_ERR_ARG);
  EXPECT_EQ(c.msg(), prefix() + "isthmus_redist_create: nfields is 0; at least 1 needed");
  EXPECT_EQ(isthmus_redist_create(c.ctx, x, 2, types, levels, 0, &r), ISTHMUS_ERR_ARG);
  EXPECT_EQ(c.msg(), prefix() + "isthmus_redist_create: field 1 has unknown type 9 (0 double, 1 float, 2 int32)");
  int t2[] = {ISTHMUS_DOUBLE, ISTHMUS_FLOAT}, l2[] = {1, 0};
  EXPECT_EQ(isthmus_redist_create(c.ctx, x, 2, t2, l2, 0, &r), ISTHMUS_ERR_ARG);
  EXPECT_EQ(c.msg(), prefix() + "isthmus_redist_create: field 1 has 0 levels; at least 1 needed");
  EXPECT_EQ(isthmus_redist_create(c.ctx, x, 1, t2, levels, 17, &r), ISTHMUS_ERR_ARG);
  EXPECT_EQ(c.msg(), prefix() + "isthmus_redist_create: method is 17 (0 auto, 1 p2p, 2 alltoallv, 3 neighbor, 4 butterfly, 5 adaptive)");
  EXPECT_EQ(r, nullptr);
  // a rank that holds points must pass arrays for them
  ASSERT_EQ(isthmus_redist_create(c.ctx, x, 1, t2, levels, 0, &r), ISTHMUS_OK) << c.msg();
  double v = 1;
  const void* in[] = {&v};
  EXPECT_EQ(isthmus_redist_exchange(r, in, nullptr), ISTHMUS_ERR_ARG);
  EXPECT_EQ(c.msg(), prefix() + "isthmus_redist_exchange: forward exchange: output array of field 0 "
                                "is NULL but this rank holds 1 points");
  isthmus_redist_destroy(&r);
  isthmus_xmap_destroy(&x);
  isthmus_decomp_destroy(&s);
}

TEST(RedistErrors, FillValueMustFitTheFieldType) {
  Ctx c;
  std::vector<int64_t> idx = {world_rank()};
  isthmus_decomp* s = nullptr;
  ASSERT_EQ(isthmus_decomp_create_indices(c.ctx, world_size(), 1, idx.data(), &s), ISTHMUS_OK);
  isthmus_xmap_options opt;
  isthmus_xmap_options_init(&opt);
  opt.unowned = ISTHMUS_UNOWNED_FILL;
  opt.fill_value = 1.5;
  isthmus_xmap* x = nullptr;
  ASSERT_EQ(isthmus_xmap_create(c.ctx, s, s, &opt, &x), ISTHMUS_OK) << c.msg();
  int types[] = {ISTHMUS_DOUBLE, ISTHMUS_INT32}, levels[] = {1, 1};
  isthmus_redist* r = nullptr;
  // converted as C converts (the header's promise): 1.5 fills an int32 field with 1
  ASSERT_EQ(isthmus_redist_create(c.ctx, x, 2, types, levels, 0, &r), ISTHMUS_OK) << c.msg();
  isthmus_redist_destroy(&r);
  isthmus_xmap_destroy(&x);
  // a value the type cannot hold is rejected
  opt.fill_value = 3e9;
  ASSERT_EQ(isthmus_xmap_create(c.ctx, s, s, &opt, &x), ISTHMUS_OK) << c.msg();
  EXPECT_TRUE(same_code_everywhere(isthmus_redist_create(c.ctx, x, 2, types, levels, 0, &r), ISTHMUS_ERR_ARG));
  EXPECT_EQ(c.msg(), prefix() + "isthmus_redist_create: fill value 3e+09 is outside the range of field 1's type int32");
  isthmus_xmap_destroy(&x);
  isthmus_decomp_destroy(&s);
  opt.unowned = 5;
  EXPECT_EQ(isthmus_xmap_create(c.ctx, nullptr, nullptr, &opt, &x), ISTHMUS_ERR_ARG);
  EXPECT_EQ(c.msg(), prefix() + "isthmus_xmap_create: options.unowned is 5 (0 ISTHMUS_UNOWNED_ERROR, 1 ISTHMUS_UNOWNED_FILL)");
}
