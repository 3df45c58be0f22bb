// The C API of layouts and halo exchanges: a periodic exchange through the public header gives
// the owners' values, and bad arguments give the documented codes and messages.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "isthmus.h"
#include "mpi_test_util.h"

namespace {

TEST(CApiHalo, LayoutAndPeriodicExchange) {
  isthmus_context* ctx = nullptr;
  ASSERT_EQ(isthmus_context_create(MPI_COMM_WORLD, &ctx), ISTHMUS_OK);
  isthmus_layout* lay = nullptr;
  ASSERT_EQ(isthmus_layout_create_optimal(ctx, 40, 30, world_size(), 1,
                                          ISTHMUS_BOUNDARY_BIPERIODIC, nullptr, 0, &lay),
            ISTHMUS_OK)
      << isthmus_last_error(ctx);
  isthmus_layout_info info;
  ASSERT_EQ(isthmus_layout_get_info(lay, &info), ISTHMUS_OK);
  EXPECT_LE(info.nsubdomains, world_size());
  EXPECT_EQ(info.ni * info.nj, info.nsubdomains);
  isthmus_halo_field f = {ISTHMUS_POINT_T, 2, 1, ISTHMUS_DOUBLE};
  isthmus_halo* h = nullptr;
  ASSERT_EQ(isthmus_halo_create(ctx, lay, 2, 1, &f, ISTHMUS_HALO_AUTO, -1.0, &h), ISTHMUS_OK)
      << isthmus_last_error(ctx);
  int64_t box[4], ei = 0, ej = 0;
  ASSERT_EQ(isthmus_halo_local_shape(h, box, &ei, &ej), ISTHMUS_OK);
  int method = -1, msgs = -1;
  ASSERT_EQ(isthmus_halo_method(h, &method, &msgs), ISTHMUS_OK);
  EXPECT_EQ(method, ISTHMUS_HALO_SINGLE_SWEEP);
  const bool mine = world_rank() < info.nsubdomains;
  std::vector<double> a(mine ? ei * ej * 2 : 0, -5.0);
  auto val = [](int k, int64_t i, int64_t j) { return 1000.0 * k + 40.0 * j + i; };
  if (mine)
    for (int k = 0; k < 2; ++k)
      for (int64_t j = 0; j < box[3]; ++j)
        for (int64_t i = 0; i < box[2]; ++i)
          a[(k * ej + j + 2) * ei + i + 2] = val(k, box[0] + i, box[1] + j);
  void* p = mine ? a.data() : nullptr;
  ASSERT_EQ(isthmus_halo_exchange(h, &p), ISTHMUS_OK) << isthmus_last_error(ctx);
  int bad = 0;
  if (mine)
    for (int k = 0; k < 2; ++k)
      for (int64_t j = -2; j < box[3] + 2; ++j)
        for (int64_t i = -2; i < box[2] + 2; ++i) {
          int64_t gi = ((box[0] + i) % 40 + 40) % 40, gj = ((box[1] + j) % 30 + 30) % 30;
          bad += a[(k * ej + j + 2) * ei + i + 2] != val(k, gi, gj);
        }
  EXPECT_TRUE(all_ranks(bad == 0)) << bad << " wrong cells";
  isthmus_halo_destroy(&h);
  isthmus_layout_destroy(&lay);
  isthmus_context_destroy(&ctx);
}

TEST(CApiHalo, ErrorsNameTheFunction) {
  isthmus_context* ctx = nullptr;
  ASSERT_EQ(isthmus_context_create(MPI_COMM_WORLD, &ctx), ISTHMUS_OK);
  isthmus_layout* lay = nullptr;
  EXPECT_EQ(isthmus_layout_create_optimal(ctx, 40, 30, 4, 1, 9, nullptr, 0, &lay), ISTHMUS_ERR_ARG);
  EXPECT_EQ(std::string(isthmus_last_error(ctx)),
            "isthmus: rank " + std::to_string(world_rank()) +
                ": isthmus_layout_create_optimal: boundary is 9 (0 closed, 1 periodic-ew, "
                "2 biperiodic, 3 fold-t, 4 fold-f)");
  EXPECT_EQ(lay, nullptr);
  ASSERT_EQ(isthmus_layout_create_regular(ctx, 40, 30, 2, 1, 1, ISTHMUS_BOUNDARY_CLOSED, nullptr,
                                          &lay), ISTHMUS_OK);
  int64_t box[4];
  EXPECT_EQ(isthmus_layout_box(lay, 5, box), ISTHMUS_ERR_ARG);
  EXPECT_EQ(std::string(isthmus_last_error(ctx)),
            "isthmus: rank " + std::to_string(world_rank()) +
                ": isthmus_layout_box: decomposition: rank 5 holds no subdomain (2 subdomains)");
  const char* w = nullptr;
  EXPECT_EQ(isthmus_layout_warning(lay, &w), ISTHMUS_OK);
  EXPECT_STREQ(w, "");
  isthmus_layout_destroy(&lay);
  isthmus_context_destroy(&ctx);
}

}  // namespace
