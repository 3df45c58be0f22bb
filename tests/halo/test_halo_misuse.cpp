// Misuse of every public function of the decomp and halo layers (docs/errors.md, issue 11).
//
// Layout functions are local: the misused ranks get ISTHMUS_ERR_ARG and a message naming the
// function, the argument and its value; the other ranks are not affected. isthmus_halo_create
// is collective: a bad argument on one rank (the last) or on every rank, or an argument that
// differs across ranks where it must match, gives ISTHMUS_ERR_ARG on every rank, with the exact
// message on every rank ("failed on rank F: ..." where the rank itself was right). Exchange
// misuse (NULL arrays) on one rank or every rank leaves no rank waiting: the misused ranks and
// the ranks that receive from them fail, naming the rank; every rank that returns OK holds the
// right halo. Range checks are exercised at the limits of int and int64_t. Every case runs
// under a Watchdog, and after every failing case a correct creation and exchange still work.
#include <gtest/gtest.h>

#include <climits>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "isthmus.h"
#include "mpi_test_util.h"

namespace {

const MisuseOn kOnWhom[] = {MisuseOn::OneRank, MisuseOn::AllRanks};
constexpr int64_t NX = 40, NY = 30;

std::string str(int64_t v) { return std::to_string(v); }
std::string head(const std::string& fn, int rank) {
  return "isthmus: rank " + str(rank) + ": " + fn + ": ";
}
std::string case_name(const std::string& what, MisuseOn on) {
  return what + " (" + misuse_name(on) + ", " + str(world_size()) + " ranks)";
}

// ---- fixture: a context and the biperiodic optimal layout for the ranks ---------------------

class HaloMisuse : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(isthmus_context_create(MPI_COMM_WORLD, &ctx), ISTHMUS_OK);
    ASSERT_EQ(isthmus_layout_create_optimal(ctx, NX, NY, world_size(), 1,
                                            ISTHMUS_BOUNDARY_BIPERIODIC, nullptr, 0, &lay),
              ISTHMUS_OK)
        << isthmus_last_error(ctx);
    ASSERT_EQ(isthmus_layout_get_info(lay, &info), ISTHMUS_OK);
  }
  void TearDown() override {
    isthmus_layout_destroy(&lay);
    isthmus_context_destroy(&ctx);
  }
  std::string last() const { return isthmus_last_error(ctx); }

  isthmus_context* ctx = nullptr;
  isthmus_layout* lay = nullptr;
  isthmus_layout_info info{};
};

// A local call: the misused ranks return `code` with `want` as message, the others OK.
void expect_local(const std::string& name, MisuseOn on, int rc, int code, isthmus_context* c,
                  const std::string& want) {
  if (is_misused(on)) {
    EXPECT_EQ(rc, code) << name;
    if (c) { EXPECT_EQ(std::string(isthmus_last_error(c)), want) << name; }
  } else {
    EXPECT_EQ(rc, ISTHMUS_OK) << name << ": " << (c ? isthmus_last_error(c) : "");
  }
  EXPECT_TRUE(all_ranks(rc == (is_misused(on) ? code : ISTHMUS_OK))) << name;
}

// A collective call: `code` on every rank, and this rank's exact message.
void expect_collective(const std::string& name, int rc, int code, isthmus_context* c,
                       const std::string& want) {
  std::string codes;
  for (int x : codes_of_all_ranks(rc)) codes += " " + str(x);
  EXPECT_TRUE(same_code_everywhere(rc, code)) << name << ": codes" << codes << ", want " << code;
  const std::string got = isthmus_last_error(c);
  EXPECT_EQ(got, want) << name << " (rank " << world_rank() << ")";
  EXPECT_TRUE(all_ranks(got == want)) << name << ": a rank has another message";
}

// The message of a failure of the misused ranks, own(r) on rank r: its own on a misused rank,
// "failed on rank F: <F's message>" (F the lowest misused rank) on the others.
std::string failure_message(const std::string& fn, MisuseOn on,
                            const std::function<std::string(int)>& own) {
  const int me = world_rank(), f = on == MisuseOn::AllRanks ? 0 : world_size() - 1;
  return is_misused(on) ? head(fn, me) + own(me)
                        : head(fn, me) + "failed on rank " + str(f) + ": " + own(f);
}

// ---- halo arrays: two fields (double, 2 levels, T; float, 1 level, U) -----------------------

double value(int f, int k, int64_t i, int64_t j) { return 100000.0 * f + 1000.0 * k + 40.0 * j + i; }
constexpr double kSentinel = -7.0;

struct Arrays {
  int64_t box[4] = {0, 0, 0, 0}, ei = 0, ej = 0;
  int h = 1;
  bool mine = false;
  std::vector<double> a;
  std::vector<float> b;
  void* p[2] = {nullptr, nullptr};

  Arrays(const isthmus_halo* x, int halo, int nsub) : h(halo) {
    EXPECT_EQ(isthmus_halo_local_shape(x, box, &ei, &ej), ISTHMUS_OK);
    mine = world_rank() < nsub;
    reset();
  }
  // Interior = value(), halo = sentinel.
  void reset() {
    a.assign(mine ? ei * ej * 2 : 0, kSentinel);
    b.assign(mine ? ei * ej : 0, static_cast<float>(kSentinel));
    for (int64_t j = 0; mine && j < box[3]; ++j)
      for (int64_t i = 0; i < box[2]; ++i) {
        for (int k = 0; k < 2; ++k) a[at(k, i, j)] = value(0, k, box[0] + i, box[1] + j);
        b[at(0, i, j)] = static_cast<float>(value(1, 0, box[0] + i, box[1] + j));
      }
    p[0] = mine ? a.data() : nullptr;
    p[1] = mine ? b.data() : nullptr;
  }
  size_t at(int k, int64_t i, int64_t j) const {
    return static_cast<size_t>((k * ej + j + h) * ei + i + h);
  }
  // Cells (halo included) that do not hold their biperiodic owner's value.
  int64_t wrong() const {
    int64_t bad = 0;
    for (int64_t j = -h; mine && j < box[3] + h; ++j)
      for (int64_t i = -h; i < box[2] + h; ++i) {
        const int64_t gi = ((box[0] + i) % NX + NX) % NX, gj = ((box[1] + j) % NY + NY) % NY;
        for (int k = 0; k < 2; ++k) bad += a[at(k, i, j)] != value(0, k, gi, gj);
        bad += b[at(0, i, j)] != static_cast<float>(value(1, 0, gi, gj));
      }
    return bad;
  }
};

const isthmus_halo_field kFields[2] = {{ISTHMUS_POINT_T, 2, 1, ISTHMUS_DOUBLE},
                                       {ISTHMUS_POINT_U, 1, -1, ISTHMUS_FLOAT}};

// A correct creation and exchange on the layout still work after `after`.
void expect_halo_works(isthmus_context* c, const isthmus_layout* l, int nsub,
                       const std::string& after, int method = ISTHMUS_HALO_AUTO, int h = 1) {
  isthmus_halo* x = nullptr;
  int rc = isthmus_halo_create(c, l, h, 2, kFields, method, 0.0, &x);
  ASSERT_TRUE(all_ranks(rc == ISTHMUS_OK))
      << "a correct creation after '" << after << "' failed: " << isthmus_last_error(c);
  Arrays arr(x, h, nsub);
  rc = isthmus_halo_exchange(x, arr.p);
  EXPECT_TRUE(all_ranks(rc == ISTHMUS_OK && arr.wrong() == 0))
      << "a correct exchange after '" << after << "' failed: " << isthmus_last_error(c);
  EXPECT_EQ(isthmus_halo_destroy(&x), ISTHMUS_OK);
}

// ---- layouts (local) -------------------------------------------------------------------------

struct LayoutCase {
  std::string name;
  std::function<int(isthmus_context*, isthmus_layout**)> bad;  // the misused ranks' call
  std::string message;                                       // after "isthmus: rank R: fn: "
};

TEST_F(HaloMisuse, LayoutCreation) {
  const std::string opt = "isthmus_layout_create_optimal", reg = "isthmus_layout_create_regular";
  auto optimal = [](int64_t nx, int64_t ny, int np, int halo, int bnd, const uint8_t* mask) {
    return [=](isthmus_context* c, isthmus_layout** out) {
      return isthmus_layout_create_optimal(c, nx, ny, np, halo, bnd, mask, 0, out);
    };
  };
  auto regular = [](int64_t nx, int64_t ny, int ni, int nj, int halo, int bnd) {
    return [=](isthmus_context* c, isthmus_layout** out) {
      return isthmus_layout_create_regular(c, nx, ny, ni, nj, halo, bnd, nullptr, out);
    };
  };
  static const std::vector<uint8_t> land(NX * NY, 0);
  const int64_t big = INT64_MAX;
  const std::string too_large = " is too large: (nx + 2 halo) * (ny + 2 halo) must be at most 2^60";
  const std::vector<std::pair<std::string, LayoutCase>> cases = {
      {opt, {"NULL output", [](isthmus_context* c, isthmus_layout**) {
               return isthmus_layout_create_optimal(c, NX, NY, 4, 1, 0, nullptr, 0, nullptr);
             }, "output handle pointer is NULL"}},
      {opt, {"nx 0", optimal(0, NY, 4, 1, 0, nullptr), "decomposition: grid 0 x 30 is empty"}},
      {opt, {"ny INT64_MIN", optimal(NX, INT64_MIN, 4, 1, 0, nullptr),
             "decomposition: grid 40 x " + str(INT64_MIN) + " is empty"}},
      {opt, {"nprocs 0", optimal(NX, NY, 0, 1, 0, nullptr),
             "decomposition: 0 processes; at least 1 needed"}},
      {opt, {"nprocs INT_MIN", optimal(NX, NY, INT_MIN, 1, 0, nullptr),
             "decomposition: " + str(INT_MIN) + " processes; at least 1 needed"}},
      {opt, {"halo -1", optimal(NX, NY, 4, -1, 0, nullptr), "decomposition: halo width -1 < 0"}},
      {opt, {"boundary 5", optimal(NX, NY, 4, 1, 5, nullptr),
             "boundary is 5 (0 closed, 1 periodic-ew, 2 biperiodic, 3 fold-t, 4 fold-f)"}},
      {opt, {"boundary -1", optimal(NX, NY, 4, 1, -1, nullptr),
             "boundary is -1 (0 closed, 1 periodic-ew, 2 biperiodic, 3 fold-t, 4 fold-f)"}},
      {opt, {"odd nx with a fold", optimal(41, NY, 4, 1, ISTHMUS_BOUNDARY_FOLD_F, nullptr),
             "decomposition: a north fold needs an even nx (got 41): the fold pairs column i "
             "with a mirrored column"}},
      {opt, {"all-land mask", optimal(NX, NY, 4, 1, 0, land.data()),
             "decomposition: the land-sea mask has no ocean point"}},
      {opt, {"nx INT64_MAX", optimal(big, 1, 4, 1, 0, nullptr),
             "decomposition: grid " + str(big) + " x 1 with a halo of 1" + too_large}},
      {opt, {"nx, ny INT64_MAX, halo 0", optimal(big, big, 4, 0, 0, nullptr),
             "decomposition: grid " + str(big) + " x " + str(big) + " with a halo of 0" + too_large}},
      {opt, {"2^31 x 2^31", optimal(int64_t{1} << 31, int64_t{1} << 31, 4, 0, 0, nullptr),
             "decomposition: grid 2147483648 x 2147483648 with a halo of 0" + too_large}},
      {opt, {"halo INT_MAX", optimal(NX, NY, 4, INT_MAX, 0, nullptr),
             "decomposition: grid 40 x 30 with a halo of " + str(INT_MAX) + too_large}},
      {reg, {"NULL output", [](isthmus_context* c, isthmus_layout**) {
               return isthmus_layout_create_regular(c, NX, NY, 2, 2, 1, 0, nullptr, nullptr);
             }, "output handle pointer is NULL"}},
      {reg, {"ni 0", regular(NX, NY, 0, 1, 1, 0),
             "decomposition: layout 0 x 1 does not fit grid 40 x 30 (need 1 <= ni <= nx, "
             "1 <= nj <= ny)"}},
      {reg, {"nj 31", regular(NX, NY, 1, 31, 1, 0),
             "decomposition: layout 1 x 31 does not fit grid 40 x 30 (need 1 <= ni <= nx, "
             "1 <= nj <= ny)"}},
      {reg, {"ni INT_MIN", regular(NX, NY, INT_MIN, 1, 1, 0),
             "decomposition: layout " + str(INT_MIN) + " x 1 does not fit grid 40 x 30 (need 1 "
             "<= ni <= nx, 1 <= nj <= ny)"}},
      {reg, {"2^16 x 2^16 blocks", regular(int64_t{1} << 20, int64_t{1} << 20, 1 << 16, 1 << 16, 1, 0),
             "decomposition: layout 65536 x 65536 has 4294967296 blocks, more than the 16777216 "
             "a layout may have"}},
      {reg, {"nx INT64_MAX / 4, INT_MAX x INT_MAX blocks", regular(big / 4, 2, INT_MAX, INT_MAX, 0, 0),
             "decomposition: grid " + str(big / 4) + " x 2 with a halo of 0" + too_large}},
      {reg, {"ny INT64_MAX", regular(1, big, 1, 1, 1, 0),
             "decomposition: grid 1 x " + str(big) + " with a halo of 1" + too_large}},
      {reg, {"boundary 99", regular(NX, NY, 1, 1, 1, 99),
             "boundary is 99 (0 closed, 1 periodic-ew, 2 biperiodic, 3 fold-t, 4 fold-f)"}},
  };
  for (MisuseOn on : kOnWhom)
    for (const auto& [fn, c] : cases) {
      const std::string name = case_name(fn + ": " + c.name, on);
      Watchdog w(name);
      isthmus_layout* out = nullptr;
      const int rc = is_misused(on) ? c.bad(ctx, &out)
                                    : isthmus_layout_create_regular(ctx, NX, NY, 2, 1, 1, 0,
                                                                    nullptr, &out);
      expect_local(name, on, rc, ISTHMUS_ERR_ARG, ctx, head(fn, world_rank()) + c.message);
      if (is_misused(on)) { EXPECT_EQ(out, nullptr) << name; }
      isthmus_layout_destroy(&out);
    }
  // No context: nothing to write a message to, the code alone.
  isthmus_layout* out = nullptr;
  EXPECT_EQ(isthmus_layout_create_optimal(nullptr, NX, NY, 4, 1, 0, nullptr, 0, &out),
            ISTHMUS_ERR_ARG);
  EXPECT_EQ(isthmus_layout_create_regular(nullptr, NX, NY, 2, 2, 1, 0, nullptr, &out),
            ISTHMUS_ERR_ARG);
  EXPECT_EQ(out, nullptr);
  // At the limits but valid: INT_MAX processes on a small grid (a warning, no overflow), the
  // largest grid allowed, and 2^24 blocks.
  {
    Watchdog w("valid extremes");
    ASSERT_EQ(isthmus_layout_create_optimal(ctx, NX, NY, INT_MAX, 1, 0, nullptr, 0, &out),
              ISTHMUS_OK)
        << last();
    const char* warning = nullptr;
    ASSERT_EQ(isthmus_layout_warning(out, &warning), ISTHMUS_OK);
    EXPECT_NE(std::string(warning), "");
    isthmus_layout_destroy(&out);
    ASSERT_EQ(isthmus_layout_create_regular(ctx, int64_t{1} << 30, int64_t{1} << 30, 1, 1, 0, 0,
                                            nullptr, &out),
              ISTHMUS_OK)
        << last();
    isthmus_layout_info i{};
    ASSERT_EQ(isthmus_layout_get_info(out, &i), ISTHMUS_OK);
    EXPECT_EQ(i.largest_subdomain, int64_t{1} << 60);
    isthmus_layout_destroy(&out);
  }
  EXPECT_EQ(isthmus_layout_destroy(nullptr), ISTHMUS_ERR_ARG);
  EXPECT_EQ(isthmus_layout_destroy(&out), ISTHMUS_OK);  // *layout NULL: nothing to do
}

TEST_F(HaloMisuse, LayoutQueries) {
  const int n = info.nsubdomains;
  int64_t box[4];
  int nb[8], tile[2];
  double fraction = 0;
  const char* warning = nullptr;
  isthmus_layout_info i{};
  std::vector<int> ranks(static_cast<size_t>(info.ni * info.nj));
  std::vector<int64_t> is(static_cast<size_t>(info.ni + 1)), js(static_cast<size_t>(info.nj + 1));
  struct Case {
    std::string fn, name;
    std::function<int()> bad, good;
    std::string message;
  };
  const std::string none = " holds no subdomain (" + str(n) + " subdomains)";
  const std::vector<Case> cases = {
      {"isthmus_layout_get_info", "NULL info", [&] { return isthmus_layout_get_info(lay, nullptr); },
       [&] { return isthmus_layout_get_info(lay, &i); }, "info is NULL"},
      {"isthmus_layout_warning", "NULL message", [&] { return isthmus_layout_warning(lay, nullptr); },
       [&] { return isthmus_layout_warning(lay, &warning); }, "message is NULL"},
      {"isthmus_layout_box", "NULL box", [&] { return isthmus_layout_box(lay, 0, nullptr); },
       [&] { return isthmus_layout_box(lay, 0, box); }, "box is NULL"},
      {"isthmus_layout_box", "rank -1", [&] { return isthmus_layout_box(lay, -1, box); },
       [&] { return isthmus_layout_box(lay, n - 1, box); }, "decomposition: rank -1" + none},
      {"isthmus_layout_box", "rank nsubdomains", [&] { return isthmus_layout_box(lay, n, box); },
       [&] { return isthmus_layout_box(lay, 0, box); }, "decomposition: rank " + str(n) + none},
      {"isthmus_layout_box", "rank INT_MAX", [&] { return isthmus_layout_box(lay, INT_MAX, box); },
       [&] { return isthmus_layout_box(lay, 0, box); },
       "decomposition: rank " + str(INT_MAX) + none},
      {"isthmus_layout_box", "rank INT_MIN", [&] { return isthmus_layout_box(lay, INT_MIN, box); },
       [&] { return isthmus_layout_box(lay, 0, box); },
       "decomposition: rank " + str(INT_MIN) + none},
      {"isthmus_layout_neighbours", "NULL neighbours",
       [&] { return isthmus_layout_neighbours(lay, 0, nullptr); },
       [&] { return isthmus_layout_neighbours(lay, 0, nb); }, "neighbours is NULL"},
      {"isthmus_layout_neighbours", "rank nsubdomains",
       [&] { return isthmus_layout_neighbours(lay, n, nb); },
       [&] { return isthmus_layout_neighbours(lay, 0, nb); }, "rank " + str(n) + none},
      {"isthmus_layout_neighbours", "rank INT_MIN",
       [&] { return isthmus_layout_neighbours(lay, INT_MIN, nb); },
       [&] { return isthmus_layout_neighbours(lay, 0, nb); }, "rank " + str(INT_MIN) + none},
      {"isthmus_layout_block_ranks", "NULL ranks",
       [&] { return isthmus_layout_block_ranks(lay, nullptr); },
       [&] { return isthmus_layout_block_ranks(lay, ranks.data()); }, "ranks is NULL"},
      {"isthmus_layout_place_on_nodes", "cores 0",
       [&] { return isthmus_layout_place_on_nodes(lay, 0, tile); },
       [&] { return isthmus_layout_place_on_nodes(lay, 4, tile); }, "cores per node 0 < 1"},
      {"isthmus_layout_place_on_nodes", "cores INT_MIN",
       [&] { return isthmus_layout_place_on_nodes(lay, INT_MIN, tile); },
       [&] { return isthmus_layout_place_on_nodes(lay, INT_MAX, nullptr); },
       "cores per node " + str(INT_MIN) + " < 1"},
      {"isthmus_layout_internode_fraction", "NULL fraction",
       [&] { return isthmus_layout_internode_fraction(lay, 4, nullptr); },
       [&] { return isthmus_layout_internode_fraction(lay, INT_MAX, &fraction); },
       "fraction is NULL"},
      {"isthmus_layout_internode_fraction", "cores -1",
       [&] { return isthmus_layout_internode_fraction(lay, -1, &fraction); },
       [&] { return isthmus_layout_internode_fraction(lay, 1, &fraction); },
       "cores per node -1 < 1"},
  };
  for (MisuseOn on : kOnWhom)
    for (const Case& c : cases) {
      const std::string name = case_name(c.fn + ": " + c.name, on);
      Watchdog w(name);
      const int rc = is_misused(on) ? c.bad() : c.good();
      expect_local(name, on, rc, ISTHMUS_ERR_ARG, ctx, head(c.fn, world_rank()) + c.message);
    }
  // The correct placements above renumbered the layout where the misuse did not: the same
  // placement everywhere makes the layouts equal again (it depends on the kept blocks only).
  ASSERT_EQ(isthmus_layout_place_on_nodes(lay, 4, tile), ISTHMUS_OK);
  // No layout: the code alone (no context to hold a message).
  EXPECT_EQ(isthmus_layout_get_info(nullptr, &i), ISTHMUS_ERR_ARG);
  EXPECT_EQ(isthmus_layout_warning(nullptr, &warning), ISTHMUS_ERR_ARG);
  EXPECT_EQ(isthmus_layout_box(nullptr, 0, box), ISTHMUS_ERR_ARG);
  EXPECT_EQ(isthmus_layout_neighbours(nullptr, 0, nb), ISTHMUS_ERR_ARG);
  EXPECT_EQ(isthmus_layout_block_ranks(nullptr, ranks.data()), ISTHMUS_ERR_ARG);
  EXPECT_EQ(isthmus_layout_starts(nullptr, is.data(), js.data()), ISTHMUS_ERR_ARG);
  EXPECT_EQ(isthmus_layout_place_on_nodes(nullptr, 4, tile), ISTHMUS_ERR_ARG);
  EXPECT_EQ(isthmus_layout_internode_fraction(nullptr, 4, &fraction), ISTHMUS_ERR_ARG);
  // Documented optional outputs.
  EXPECT_EQ(isthmus_layout_starts(lay, nullptr, nullptr), ISTHMUS_OK);
  EXPECT_EQ(isthmus_layout_starts(lay, is.data(), nullptr), ISTHMUS_OK);
  EXPECT_EQ(is.back(), NX);
  // The layout still works.
  expect_halo_works(ctx, lay, n, "layout queries");
}

// ---- halo creation (collective) --------------------------------------------------------------

struct CreateArgs {
  const isthmus_layout* layout;
  int h = 1, nfields = 2;
  isthmus_halo_field f[2] = {kFields[0], kFields[1]};
  const isthmus_halo_field* fields = f;
  int method = ISTHMUS_HALO_AUTO;
  double fill = 0.0;
  bool null_out = false;
  int call(isthmus_context* c, isthmus_halo** out) const {
    return isthmus_halo_create(c, layout, h, nfields, fields, method, fill, null_out ? nullptr : out);
  }
};

struct CreateCase {
  std::string name;
  std::function<void(CreateArgs&)> misuse;
  std::function<std::string(int)> message;  // rank r's own message when misused
};

TEST_F(HaloMisuse, HaloCreateBadArgument) {
  const std::string fn = "isthmus_halo_create";
  const int p = world_size();
  isthmus_layout *fold = nullptr, *more = nullptr, *single = nullptr;
  ASSERT_EQ(isthmus_layout_create_optimal(ctx, NX, NY, p, 1, ISTHMUS_BOUNDARY_FOLD_T, nullptr, 0,
                                          &fold),
            ISTHMUS_OK);
  ASSERT_EQ(isthmus_layout_create_regular(ctx, NX, NY, p + 1, 1, 1, 0, nullptr, &more), ISTHMUS_OK);
  auto msg = [](const std::string& m) { return [m](int) { return m; }; };
  const std::string types = " (0 double, 1 float, 2 int32)";
  const std::vector<CreateCase> cases = {
      {"NULL output", [](CreateArgs& a) { a.null_out = true; }, msg("output handle pointer is NULL")},
      {"NULL layout", [](CreateArgs& a) { a.layout = nullptr; }, msg("layout is NULL")},
      {"nfields 0", [](CreateArgs& a) { a.nfields = 0; }, msg("nfields is 0; at least 1 needed")},
      {"nfields INT_MIN", [](CreateArgs& a) { a.nfields = INT_MIN; },
       msg("nfields is " + str(INT_MIN) + "; at least 1 needed")},
      {"NULL fields", [](CreateArgs& a) { a.fields = nullptr; }, msg("fields is NULL")},
      {"type 7", [](CreateArgs& a) { a.f[1].type = 7; }, msg("halo: field 1 has type 7" + types)},
      {"type -1", [](CreateArgs& a) { a.f[0].type = -1; }, msg("halo: field 0 has type -1" + types)},
      {"point 4", [](CreateArgs& a) { a.f[1].point = 4; },
       msg("halo: field 1 has point type 4 (0 T, 1 U, 2 V, 3 F)")},
      {"sign 0", [](CreateArgs& a) { a.f[0].sign = 0; },
       msg("halo: field 0 has sign 0 (must be 1 or -1)")},
      {"nlevels 0", [](CreateArgs& a) { a.f[1].nlevels = 0; }, msg("halo: field 1 has 0 levels")},
      {"nlevels INT_MIN", [](CreateArgs& a) { a.f[0].nlevels = INT_MIN; },
       msg("halo: field 0 has " + str(INT_MIN) + " levels")},
      {"method 4", [](CreateArgs& a) { a.method = 4; },
       msg("halo: method 4 (0 auto, 1 two-sweep, 2 single-sweep, 3 neighbor)")},
      {"method -1", [](CreateArgs& a) { a.method = -1; },
       msg("halo: method -1 (0 auto, 1 two-sweep, 2 single-sweep, 3 neighbor)")},
      {"halo width 0", [](CreateArgs& a) { a.h = 0; }, msg("halo: halo width 0 < 1")},
      {"halo width INT_MIN", [](CreateArgs& a) { a.h = INT_MIN; },
       msg("halo: halo width " + str(INT_MIN) + " < 1")},
      {"halo width INT_MAX", [](CreateArgs& a) { a.h = INT_MAX; },
       msg("halo: halo width " + str(INT_MAX) + " is wider than the 40 x 30 grid: at most 30")},
      {"halo width 31", [](CreateArgs& a) { a.h = 31; },
       msg("halo: halo width 31 is wider than the 40 x 30 grid: at most 30")},
      {"halo too wide for the fold", [&](CreateArgs& a) { a.layout = fold; a.h = 30; },
       msg("halo: halo width 30 is too wide for the north fold: row 59 of field 0 (T points) "
           "folds onto row -1, outside the 30-row grid; at most 29 for this field")},
      {"communicator too small", [&](CreateArgs& a) { a.layout = more; },
       msg("halo: the decomposition has " + str(p + 1) + " subdomains but the communicator only " +
           str(p) + " ranks")},
  };
  for (MisuseOn on : kOnWhom)
    for (const CreateCase& c : cases) {
      const std::string name = case_name(c.name, on);
      Watchdog w(name);
      CreateArgs a;
      a.layout = lay;
      if (is_misused(on)) c.misuse(a);
      // (A rank's own failure takes precedence over the mismatch of the layouts.)
      isthmus_halo* x = reinterpret_cast<isthmus_halo*>(&a);  // must be reset to NULL
      const int rc = a.call(ctx, &x);
      expect_collective(name, rc, ISTHMUS_ERR_ARG, ctx, failure_message(fn, on, c.message));
      if (!a.null_out) { EXPECT_EQ(x, nullptr) << name; }
      if (rc == ISTHMUS_OK) isthmus_halo_destroy(&x);
      expect_halo_works(ctx, lay, info.nsubdomains, name);
    }
  // A layout whose only subdomain is too large for int64 sizes: rank 0 (the only one holding a
  // subdomain) fails, every other rank names it.
  {
    const std::string name = "arrays beyond int64";
    Watchdog w(name);
    ASSERT_EQ(isthmus_layout_create_regular(ctx, int64_t{1} << 30, int64_t{1} << 30, 1, 1, 0, 0,
                                            nullptr, &single),
              ISTHMUS_OK);
    isthmus_halo* x = nullptr;
    int rc = isthmus_halo_create(ctx, single, 1 << 30, 1, kFields, 0, 0.0, &x);
    const std::string beyond = "halo: the local arrays of this rank's 1073741824 x 1073741824 "
                               "subdomain with a halo of 1073741824 would exceed 2^63 elements";
    expect_collective(name, rc, ISTHMUS_ERR_ARG, ctx,
                      head(fn, world_rank()) + (world_rank() == 0 ? "" : "failed on rank 0: ") +
                          beyond);
    isthmus_halo_field deep = {ISTHMUS_POINT_T, INT_MAX, 1, ISTHMUS_DOUBLE};
    rc = isthmus_halo_create(ctx, single, 1, 1, &deep, 0, 0.0, &x);
    expect_collective(name + " (levels)", rc, ISTHMUS_ERR_ARG, ctx,
                      head(fn, world_rank()) + (world_rank() == 0 ? "" : "failed on rank 0: ") +
                          "halo: the local arrays of this rank's 1073741824 x 1073741824 "
                          "subdomain with a halo of 1 would exceed 2^63 bytes at field 0 (" +
                          str(INT_MAX) + " levels)");
    EXPECT_EQ(x, nullptr);
  }
  // No context on every rank: the code alone. (On one rank only it cannot be caught: that rank
  // has no communicator to meet the others on; docs/errors.md.)
  {
    Watchdog w("NULL context");
    isthmus_halo* x = nullptr;
    EXPECT_EQ(isthmus_halo_create(nullptr, lay, 1, 2, kFields, 0, 0.0, &x), ISTHMUS_ERR_ARG);
  }
  isthmus_layout_destroy(&single);
  isthmus_layout_destroy(&more);
  isthmus_layout_destroy(&fold);
  expect_halo_works(ctx, lay, info.nsubdomains, "bad arguments");
}

TEST_F(HaloMisuse, HaloCreateMismatch) {
  const std::string fn = "isthmus_halo_create";
  const int p = world_size(), last_rank = p - 1;
  isthmus_layout* other = nullptr;
  ASSERT_EQ(isthmus_layout_create_optimal(ctx, NX, NY, p, 1, ISTHMUS_BOUNDARY_PERIODIC_EW, nullptr,
                                          0, &other),
            ISTHMUS_OK);
  auto values = [&](const std::string& what, int64_t common, int64_t odd) {
    const bool odd_low = odd < common;
    return what + " must be the same on every rank, but rank " + str(odd_low ? last_rank : 0) +
           " passes " + str(odd_low ? odd : common) + " and rank " + str(odd_low ? 0 : last_rank) +
           " passes " + str(odd_low ? common : odd);
  };
  auto hashed = [&](const std::string& what) {
    return what + " must be the same on every rank, but ranks 0 and " + str(last_rank) +
           " pass different ones";
  };
  const std::vector<std::pair<std::string, std::function<void(CreateArgs&)>>> kinds = {
      {values("halo_width", 1, 2), [](CreateArgs& a) { a.h = 2; }},
      {values("nfields", 2, 1), [](CreateArgs& a) { a.nfields = 1; }},
      {hashed("fields (point, nlevels, sign and type of each)"),
       [](CreateArgs& a) { a.f[1].type = ISTHMUS_DOUBLE; }},
      {hashed("fields (point, nlevels, sign and type of each)"),
       [](CreateArgs& a) { a.f[0].nlevels = 3; }},
      {hashed("fields (point, nlevels, sign and type of each)"),
       [](CreateArgs& a) { a.f[1].point = ISTHMUS_POINT_V; }},
      {hashed("fields (point, nlevels, sign and type of each)"),
       [](CreateArgs& a) { a.f[1].sign = 1; }},
      {values("method", 2, 1),
       [](CreateArgs& a) { a.method = ISTHMUS_HALO_TWO_SWEEP; }},
      {values("method", 2, 0), [](CreateArgs& a) { a.method = ISTHMUS_HALO_AUTO; }},
      {hashed("fill_value"), [](CreateArgs& a) { a.fill = -0.0; }},
      {hashed("layout (nx, ny, ni, nj, boundary, halo, block starts and ranks)"),
       [&](CreateArgs& a) { a.layout = other; }},
  };
  for (MisuseOn on : kOnWhom)
    for (const auto& [message, misuse] : kinds) {
      const std::string name = case_name(message, on);
      Watchdog w(name);
      CreateArgs a;
      a.layout = lay;
      a.method = ISTHMUS_HALO_SINGLE_SWEEP;
      if (is_misused(on)) misuse(a);
      isthmus_halo* x = nullptr;
      const int rc = a.call(ctx, &x);
      if (on == MisuseOn::AllRanks || p == 1) {
        // Every rank passes the same: no mismatch, a working halo.
        EXPECT_TRUE(all_ranks(rc == ISTHMUS_OK)) << name << ": " << last();
      } else {
        expect_collective(name, rc, ISTHMUS_ERR_ARG, ctx, head(fn, world_rank()) + message);
        EXPECT_EQ(x, nullptr) << name;
      }
      isthmus_halo_destroy(&x);
      expect_halo_works(ctx, lay, info.nsubdomains, name);
    }
  isthmus_layout_destroy(&other);
}

// ---- halo exchange (collective, no agreement step: docs/errors.md item 2) ---------------------

TEST_F(HaloMisuse, HaloExchangeNullArrays) {
  const std::string fn = "isthmus_halo_exchange";
  const int p = world_size(), me = world_rank(), nsub = info.nsubdomains;
  // Every neighbour of a misused rank with a subdomain must fail: it receives from it.
  for (int method : {ISTHMUS_HALO_TWO_SWEEP, ISTHMUS_HALO_SINGLE_SWEEP, ISTHMUS_HALO_NEIGHBOR})
    for (int h : {1, 2})
      for (int what = 0; what < 2; ++what)  // 0: NULL list, 1: NULL array of field 1
        for (MisuseOn on : kOnWhom) {
          const std::string name = case_name("method " + str(method) + " h " + str(h) +
                                                 (what == 0 ? " NULL list" : " NULL field 1"),
                                             on);
          Watchdog w(name);
          isthmus_halo* x = nullptr;
          ASSERT_EQ(isthmus_halo_create(ctx, lay, h, 2, kFields, method, 0.0, &x), ISTHMUS_OK)
              << last();
          Arrays arr(x, h, nsub);
          void* const* list = arr.p;
          void* one_null[2] = {arr.p[0], nullptr};
          if (is_misused(on)) list = what == 0 ? nullptr : one_null;
          const int rc = isthmus_halo_exchange(x, list);
          const std::vector<int> codes = codes_of_all_ranks(rc);
          // Who failed on its own: the misused ranks that hold a subdomain.
          std::vector<bool> own(static_cast<size_t>(p), false);
          for (int r = 0; r < p; ++r)
            own[static_cast<size_t>(r)] =
                r < nsub && (on == MisuseOn::AllRanks || r == p - 1);
          const std::string got = last();
          if (own[static_cast<size_t>(me)]) {
            EXPECT_EQ(rc, ISTHMUS_ERR_ARG) << name;
            EXPECT_EQ(got, head(fn, me) + (what == 0 ? "halo: the array list is NULL"
                                                     : "halo: the array of field 1 is NULL"))
                << name;
          } else if (rc != ISTHMUS_OK) {
            EXPECT_EQ(rc, ISTHMUS_ERR_ARG) << name;
            // Names a rank that failed itself (or passed a failure on).
            bool named = false;
            for (int q = 0; q < p; ++q)
              named = named || (codes[static_cast<size_t>(q)] == ISTHMUS_ERR_ARG &&
                                got == head(fn, me) + "halo exchange: rank " + str(q) +
                                           " could not take part (ISTHMUS_ERR_ARG; its own "
                                           "message says why) and sent no data: the points it "
                                           "sends to this rank were not written");
            EXPECT_TRUE(named) << name << ": " << got;
          } else {
            // Returned OK: every cell is right.
            EXPECT_EQ(arr.wrong(), 0) << name << " rank " << me << " returned OK with wrong cells";
          }
          // Every rank that receives from a failed rank failed: the neighbours in the layout.
          bool neighbours_failed = true;
          for (int r = 0; r < nsub; ++r) {
            if (!own[static_cast<size_t>(r)]) continue;
            int nb[8];
            ASSERT_EQ(isthmus_layout_neighbours(lay, r, nb), ISTHMUS_OK);
            for (int q : nb)
              if (q >= 0 && q != r && codes[static_cast<size_t>(q)] != ISTHMUS_ERR_ARG)
                neighbours_failed = false;
          }
          EXPECT_TRUE(neighbours_failed) << name;
          // The same handle works for the next, correct exchange.
          arr.reset();
          const int rc2 = isthmus_halo_exchange(x, arr.p);
          EXPECT_TRUE(all_ranks(rc2 == ISTHMUS_OK && arr.wrong() == 0))
              << name << ": the next exchange failed: " << last();
          isthmus_halo_destroy(&x);
        }
}

// A rank without a subdomain may pass NULL arrays: no error anywhere.
TEST_F(HaloMisuse, HaloExchangeNullOnRankWithoutSubdomain) {
  const int p = world_size();
  if (p < 2) GTEST_SKIP() << "needs a rank without a subdomain";
  isthmus_layout* fewer = nullptr;
  ASSERT_EQ(isthmus_layout_create_regular(ctx, NX, NY, p - 1, 1, 1, ISTHMUS_BOUNDARY_BIPERIODIC,
                                          nullptr, &fewer),
            ISTHMUS_OK);
  for (int method : {ISTHMUS_HALO_TWO_SWEEP, ISTHMUS_HALO_SINGLE_SWEEP}) {
    Watchdog w("no subdomain, method " + str(method));
    isthmus_halo* x = nullptr;
    ASSERT_EQ(isthmus_halo_create(ctx, fewer, 1, 2, kFields, method, 0.0, &x), ISTHMUS_OK);
    Arrays arr(x, 1, p - 1);
    const int rc = isthmus_halo_exchange(x, world_rank() == p - 1 ? nullptr : arr.p);
    EXPECT_TRUE(all_ranks(rc == ISTHMUS_OK && arr.wrong() == 0)) << last();
    isthmus_halo_destroy(&x);
  }
  isthmus_layout_destroy(&fewer);
}

// ---- halo queries (local) --------------------------------------------------------------------

TEST_F(HaloMisuse, HaloQueries) {
  isthmus_halo* x = nullptr;
  ASSERT_EQ(isthmus_halo_create(ctx, lay, 1, 2, kFields, 0, 0.0, &x), ISTHMUS_OK);
  isthmus_trace_counters counters{};
  for (MisuseOn on : kOnWhom) {
    const std::string name = case_name("isthmus_halo_get_counters: NULL counters", on);
    Watchdog w(name);
    const int rc = isthmus_halo_get_counters(x, is_misused(on) ? nullptr : &counters);
    expect_local(name, on, rc, ISTHMUS_ERR_ARG, ctx,
                 head("isthmus_halo_get_counters", world_rank()) + "counters is NULL");
  }
  // No halo: the code alone, on every rank (a NULL halo on one rank of an exchange cannot be
  // caught: that rank has no schedule to take part with; docs/errors.md).
  {
    Watchdog w("NULL halo");
    int64_t box[4], e = 0;
    int m = 0;
    EXPECT_EQ(isthmus_halo_exchange(nullptr, nullptr), ISTHMUS_ERR_ARG);
    EXPECT_EQ(isthmus_halo_local_shape(nullptr, box, &e, &e), ISTHMUS_ERR_ARG);
    EXPECT_EQ(isthmus_halo_method(nullptr, &m, &m), ISTHMUS_ERR_ARG);
    EXPECT_EQ(isthmus_halo_set_tracing(nullptr, 1), ISTHMUS_ERR_ARG);
    EXPECT_EQ(isthmus_halo_get_counters(nullptr, &counters), ISTHMUS_ERR_ARG);
    EXPECT_EQ(isthmus_halo_destroy(nullptr), ISTHMUS_ERR_ARG);
    // Documented optional outputs.
    EXPECT_EQ(isthmus_halo_local_shape(x, nullptr, nullptr, nullptr), ISTHMUS_OK);
    EXPECT_EQ(isthmus_halo_method(x, nullptr, nullptr), ISTHMUS_OK);
  }
  // Tracing counts the exchanges, failed ones excluded.
  ASSERT_EQ(isthmus_halo_set_tracing(x, 1), ISTHMUS_OK);
  Arrays arr(x, 1, info.nsubdomains);
  EXPECT_EQ(isthmus_halo_exchange(x, arr.p), ISTHMUS_OK);
  EXPECT_EQ(isthmus_halo_get_counters(x, &counters), ISTHMUS_OK);
  EXPECT_EQ(counters.exchanges, 1);
  EXPECT_EQ(isthmus_halo_destroy(&x), ISTHMUS_OK);
  EXPECT_EQ(isthmus_halo_destroy(&x), ISTHMUS_OK);  // *halo NULL: nothing to do
  EXPECT_EQ(x, nullptr);
}

}  // namespace
