// The weight generator's driver (remap/weights_gen.h) over MPI ranks: the stack, the share of
// destination points, the same bits at every rank count, the SCRIP file it writes, the cache,
// and the C API's isthmus_weights_generate.
#include <gtest/gtest.h>
#include <mpi.h>
#include <netcdf.h>
#include <unistd.h>

#include <array>
#include <cmath>
#include <cstring>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "base/error.h"
#include "isthmus.h"
#include "mpi_test_util.h"
#include "remap/grid.h"
#include "remap/scrip_weights.h"
#include "remap/sphere.h"
#include "remap/weights_gen.h"
#include "test_grids.h"

using namespace isthmus;
using namespace isthmus::remap;

namespace {

constexpr double kDeg = M_PI / 180.0;

// A global regular lon-lat grid of nx × ny cells with corners, shifted by lon0 degrees; masked:
// cells whose centre falls in a "continent" (lon in [60, 120) and lat in [-30, 40)) when
// `continent`.
Grid lonlat_grid(const std::string& name, int nx, int ny, double lon0, bool continent) {
  Grid g = synthetic::lonlat(nx, ny, lon0, -90.0, 360.0 / nx, 180.0 / ny, name);
  g.source = name;
  for (int64_t c = 0; c < g.size(); ++c) {
    const double clon = g.lon[size_t(c)] / kDeg, clat = g.lat[size_t(c)] / kDeg;
    const double wl = std::fmod(clon + 720.0, 360.0);
    g.mask.push_back(continent && wl >= 60 && wl < 120 && clat >= -30 && clat < 40 ? 0 : 1);
  }
  return g;
}

// An icosahedral grid: the 20 faces of an icosahedron, each cut n times into 4, projected on
// the sphere: 20 * 4^n triangular cells (3 corners each), centres at the normalised centroids;
// unstructured (dims {size}).
Grid icosahedral_grid(int n) {
  const double t = (1.0 + std::sqrt(5.0)) / 2.0;
  std::vector<Vec3> v = {{-1, t, 0}, {1, t, 0},  {-1, -t, 0}, {1, -t, 0}, {0, -1, t}, {0, 1, t},
                         {0, -1, -t}, {0, 1, -t}, {t, 0, -1},  {t, 0, 1},  {-t, 0, -1}, {-t, 0, 1}};
  for (Vec3& p : v) p = normalized(p);
  std::vector<std::array<Vec3, 3>> faces;
  const int f[20][3] = {{0, 11, 5}, {0, 5, 1},  {0, 1, 7},   {0, 7, 10}, {0, 10, 11},
                        {1, 5, 9},  {5, 11, 4}, {11, 10, 2}, {10, 7, 6}, {7, 1, 8},
                        {3, 9, 4},  {3, 4, 2},  {3, 2, 6},   {3, 6, 8},  {3, 8, 9},
                        {4, 9, 5},  {2, 4, 11}, {6, 2, 10},  {8, 6, 7},  {9, 8, 1}};
  for (const auto& k : f) faces.push_back({v[size_t(k[0])], v[size_t(k[1])], v[size_t(k[2])]});
  for (int level = 0; level < n; ++level) {
    std::vector<std::array<Vec3, 3>> next;
    for (const auto& [a, b, c] : faces) {
      const Vec3 ab = normalized(a + b), bc = normalized(b + c), ca = normalized(c + a);
      next.push_back({a, ab, ca});
      next.push_back({ab, b, bc});
      next.push_back({ca, bc, c});
      next.push_back({ab, bc, ca});
    }
    faces.swap(next);
  }
  Grid g;
  g.name = "ico";
  g.source = "ico";
  g.dims = {int64_t(faces.size())};
  g.num_corners = 3;
  for (const auto& face : faces) {
    double lon = 0, lat = 0;
    to_lonlat(normalized(face[0] + face[1] + face[2]), &lon, &lat);
    g.lon.push_back(lon);
    g.lat.push_back(lat);
    for (const Vec3& p : face) {
      to_lonlat(p, &lon, &lat);
      g.corner_lon.push_back(lon);
      g.corner_lat.push_back(lat);
    }
  }
  return g;
}

struct Gathered {
  std::vector<int64_t> src;
  std::vector<int32_t> dst;
  std::vector<double> w;
  std::vector<int8_t> method_of;
};

// Every rank's links and per-point records, on rank 0 in rank order.
Gathered gather(const GeneratedWeights& g, MPI_Comm comm) {
  int n = 0, rank = 0;
  MPI_Comm_size(comm, &n);
  MPI_Comm_rank(comm, &rank);
  Gathered out;
  const auto gatherv = [&](const void* mine, int count, MPI_Datatype t, size_t elem, auto* all) {
    std::vector<int> counts(static_cast<size_t>(n)), displs(static_cast<size_t>(n));
    MPI_Gather(&count, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, comm);
    int total = 0;
    for (int r = 0; r < n; ++r) {
      displs[size_t(r)] = total;
      total += counts[size_t(r)];
    }
    if (rank == 0) all->resize(size_t(total));
    MPI_Gatherv(mine, count, t, rank == 0 ? static_cast<void*>(all->data()) : nullptr,
                counts.data(), displs.data(), t, 0, comm);
    (void)elem;
  };
  gatherv(g.links.src.data(), int(g.links.src.size()), MPI_INT64_T, 8, &out.src);
  gatherv(g.links.dst.data(), int(g.links.dst.size()), MPI_INT32_T, 4, &out.dst);
  gatherv(g.links.w.data(), int(g.links.w.size()), MPI_DOUBLE, 8, &out.w);
  gatherv(g.method_of.data(), int(g.method_of.size()), MPI_INT8_T, 1, &out.method_of);
  return out;
}

// Generates on every rank of the world and on rank 0 alone; true on every rank if rank 0 finds
// the two bit-identical.
void expect_same_bits_as_one_rank(const Grid& src, const Grid& dst, const std::string& stack,
                                  const GenOptions& o, GeneratedWeights* world_result = nullptr) {
  const GeneratedWeights all = generate_weights(MPI_COMM_WORLD, src, dst, stack, o);
  const Gathered g = gather(all, MPI_COMM_WORLD);
  bool same = true;
  if (world_rank() == 0) {
    const GeneratedWeights one = generate_weights(MPI_COMM_SELF, src, dst, stack, o);
    EXPECT_EQ(one.dst_begin, 0);
    EXPECT_EQ(one.dst_end, dst.size());
    same = g.src == one.links.src && g.dst == one.links.dst && g.method_of == one.method_of &&
           g.w.size() == one.links.w.size() &&
           std::memcmp(g.w.data(), one.links.w.data(), g.w.size() * sizeof(double)) == 0;
    EXPECT_TRUE(same) << stack << ": " << g.src.size() << " links on " << world_size()
                      << " ranks, " << one.links.src.size() << " on one";
    EXPECT_EQ(all.total_links, one.links.size());
    EXPECT_EQ(all.served_per_step, one.served_per_step);
    EXPECT_EQ(all.unserved, one.unserved);
  }
  EXPECT_TRUE(all_ranks(same));
  if (world_result) *world_result = all;
}

}  // namespace

TEST(WeightsStack, ParsesMethodsAliasesAndFixed) {
  const auto s = parse_stack(" conserv , BILINEAR,distwgt,fixed=-1.5");
  ASSERT_EQ(s.size(), 4u);
  EXPECT_EQ(s[0].name, "conservative");
  EXPECT_EQ(s[1].name, "bilinear");
  EXPECT_EQ(s[2].name, "nearest");
  EXPECT_EQ(s[3].name, "fixed");
  EXPECT_EQ(s[3].fixed_value, -1.5);
  EXPECT_EQ(stack_string(s), "conservative,bilinear,nearest,fixed=-1.5");
  EXPECT_EQ(parse_stack("gauswgt")[0].name, "gaussian");
  EXPECT_EQ(parse_stack("fixed")[0].fixed_value, 0.0);
}

// Creep fill: the continent's points bilinear cannot serve take the mean of their served
// neighbours' links, round after round from the coast inwards: weights that sum to 1 (bilinear's
// do), and a constant field stays constant; one round serves only the coast's next ring.
TEST(WeightsGen, CreepFillSpreadsFromTheServedPoints) {
  const Grid src = lonlat_grid("src", 36, 18, 0.0, true);
  const Grid dst = lonlat_grid("dst", 72, 36, 0.0, false);
  const GeneratedWeights all = generate_weights(MPI_COMM_WORLD, src, dst, "bilinear,creep", {});
  const GeneratedWeights one = generate_weights(MPI_COMM_WORLD, src, dst, "bilinear,creep=1", {});
  ASSERT_EQ(all.served_per_step.size(), 2u);
  EXPECT_GT(all.served_per_step[1], 0);
  EXPECT_EQ(all.unserved, 0);
  EXPECT_GT(one.served_per_step[1], 0);
  EXPECT_LT(one.served_per_step[1], all.served_per_step[1]);
  EXPECT_EQ(one.served_per_step[1] + one.unserved, all.served_per_step[1]);
  std::vector<double> sum(size_t(all.dst_end - all.dst_begin), 0.0);
  for (int64_t i = 0; i < all.links.size(); ++i) {
    sum[size_t(all.links.dst[size_t(i)] - all.dst_begin)] += all.links.w[size_t(i)];
    EXPECT_TRUE(src.active(all.links.src[size_t(i)]));
  }
  int64_t bad = 0;
  for (size_t i = 0; i < sum.size(); ++i)
    if (all.method_of[i] >= 0) bad += std::fabs(sum[i] - 1.0) > 1e-12;
  EXPECT_EQ(bad, 0);
  EXPECT_EQ(parse_stack("creep=3")[0].rounds, 3);
  EXPECT_EQ(stack_string(parse_stack("bilinear,creep=3,fixed=1")), "bilinear,creep=3,fixed=1");
  EXPECT_THROW(parse_stack("creep=0"), Error);
}

TEST(WeightsStack, BadStacksAndOptionsNameTheWord) {
  const auto message = [](auto f) {
    try {
      f();
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ISTHMUS_ERR_ARG);
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message([] { parse_stack("bilinear,spline"); })
                .find("\"spline\" is not a method (expected nearest, gaussian"),
            std::string::npos);
  EXPECT_NE(message([] { parse_stack("bilinear,,nearest"); }).find("an empty step"),
            std::string::npos);
  EXPECT_NE(message([] { parse_stack("fixed=1,nearest"); })
                .find("\"nearest\" after \"fixed\""),
            std::string::npos);
  EXPECT_NE(message([] { parse_stack("fixed=abc"); }).find("not a finite number"),
            std::string::npos);
  EXPECT_NE(message([] { parse_gen_options("normalization=area"); })
                .find("destarea, fracarea or fracnnei"),
            std::string::npos);
  EXPECT_NE(message([] { parse_gen_options("neighbours=2.5"); }).find("not a whole number"),
            std::string::npos);
  EXPECT_NE(message([] { parse_gen_options("radius=3"); }).find("\"radius=3\" is not known"),
            std::string::npos);
  EXPECT_NE(message([] { parse_gen_options("masks=scrip"); }).find("the masks are isthmus or oasis"),
            std::string::npos);
  EXPECT_FALSE(parse_gen_options("").oasis_masks);
  EXPECT_FALSE(parse_gen_options("masks=isthmus").oasis_masks);
  const GenOptions o = parse_gen_options("  normalization=DESTAREA neighbours=7 order=2 variance=0.5 masks=OASIS ");
  EXPECT_TRUE(o.oasis_masks);
  EXPECT_EQ(o.normalization, "destarea");
  EXPECT_EQ(o.num_neighbours, 7);
  EXPECT_EQ(o.conservative_order, 2);
  EXPECT_EQ(o.gaussian_variance, 0.5);
}

// Every destination point served by exactly one step; masked destination points by none; the
// links the same bits at every rank count as on one rank.
TEST(WeightsGen, StacksGiveTheSameBitsAtEveryRankCount) {
  Watchdog dog("WeightsGen.StacksGiveTheSameBitsAtEveryRankCount", 120);
  const Grid src = lonlat_grid("src", 36, 18, 0.0, true);    // 10° cells, a masked continent
  Grid dst = lonlat_grid("dst", 48, 30, -180.0, false);      // 7.5° × 6°, across the date line
  dst.mask[5] = 0;                                           // one masked destination point
  GenOptions o;
  for (const std::string stack : {"nearest", "bilinear,nearest", "conservative,nearest",
                                  "bilinear", "gaussian", "conservative,bilinear,fixed=7",
                                  "bilinear,creep", "bilinear,creep=1,fixed"}) {
    GeneratedWeights w;
    expect_same_bits_as_one_rank(src, dst, stack, o, &w);
    const int64_t active = dst.size() - 1;
    int64_t served = 0;
    for (int64_t s : w.served_per_step) served += s;
    EXPECT_EQ(served + w.unserved, active) << stack;
    EXPECT_EQ(w.masked, 1) << stack;
    if (stack.find("nearest") != std::string::npos || stack.find("fixed") != std::string::npos ||
        stack == "gaussian" || stack == "bilinear,creep") {
      EXPECT_EQ(w.unserved, 0) << stack;
    }
    // The masked destination point has no link and no method.
    if (w.dst_begin <= 5 && 5 < w.dst_end) {
      EXPECT_EQ(w.method_of[size_t(5 - w.dst_begin)], -1);
    }
    for (int64_t d : w.links.dst) EXPECT_NE(d, 5);
    // No link from a masked source point.
    for (int64_t s : w.links.src) EXPECT_TRUE(src.active(s)) << stack << " source " << s;
  }
}

// OASIS's mask rules (the coupler's SCRIPR): a stack beginning with conservative serves the
// masked destination points too, with the links they have without their mask, and the same bits
// at every rank count; the other stacks leave them alone as before. The option is part of the
// cache key.
TEST(WeightsGen, OasisMasksServeMaskedDestinationsConservatively) {
  Watchdog dog("WeightsGen.OasisMasksServeMaskedDestinationsConservatively", 120);
  const Grid src = lonlat_grid("src", 36, 18, 0.0, true);
  Grid dst = lonlat_grid("dst", 48, 30, -180.0, false);
  Grid unmasked = dst;
  for (int64_t d = 0; d < dst.size(); d += 7) dst.mask[size_t(d)] = 0;
  GenOptions oasis;
  oasis.oasis_masks = true;
  GeneratedWeights w;
  expect_same_bits_as_one_rank(src, dst, "conservative", oasis, &w);
  const Gathered with = gather(w, MPI_COMM_WORLD);
  const Gathered without = gather(generate_weights(MPI_COMM_WORLD, src, unmasked, "conservative", {}),
                                  MPI_COMM_WORLD);
  if (world_rank() == 0) {
    EXPECT_EQ(with.src, without.src);
    EXPECT_EQ(with.dst, without.dst);
    EXPECT_EQ(with.w, without.w);
    EXPECT_EQ(with.method_of, without.method_of);
  }
  EXPECT_EQ(w.masked, (dst.size() + 6) / 7);
  // bilinear is not conservative: its masked destination points keep no link
  const GeneratedWeights b = generate_weights(MPI_COMM_WORLD, src, dst, "bilinear", oasis);
  for (int64_t d : b.links.dst) EXPECT_TRUE(dst.active(d)) << d;
  EXPECT_NE(weights_key(src, dst, "conservative", oasis), weights_key(src, dst, "conservative", {}));
}

// With a progress callback (the tool's bar at a terminal) every method runs in batches of at
// least 4,096 points: the same links, bit for bit, as in one call, and the fraction reported
// grows (the tool's bar ends itself at 100 %). Stacks whose steps have 1 and 3 weights per link, and steps that leave points to
// the next; a destination of 64,800 points gives every rank of 1-8 more than one batch.
TEST(WeightsGen, AProgressBarChangesNothing) {
  Watchdog dog("WeightsGen.AProgressBarChangesNothing", 300);
  const Grid src = lonlat_grid("src", 36, 18, 0.0, true);
  const Grid dst = lonlat_grid("dst", 360, 180, -180.0, false);
  GenOptions o;
  o.num_neighbours = 3;
  GenOptions second = o;
  second.conservative_order = 2;
  for (const auto& [stack, opts] : {std::pair<std::string, GenOptions>{"nearest", o},
                                    {"bilinear,nearest", o},
                                    {"conservative,nearest", second},
                                    {"bilinear,creep", o}}) {
    SCOPED_TRACE(stack);
    const GeneratedWeights plain = generate_weights(MPI_COMM_WORLD, src, dst, stack, opts);
    std::vector<double> seen;
    const GeneratedWeights barred = generate_weights(MPI_COMM_WORLD, src, dst, stack, opts,
                                                     [&seen](double f) { seen.push_back(f); });
    EXPECT_EQ(barred.links.src, plain.links.src);
    EXPECT_EQ(barred.links.dst, plain.links.dst);
    ASSERT_EQ(barred.links.w.size(), plain.links.w.size());
    EXPECT_EQ(std::memcmp(barred.links.w.data(), plain.links.w.data(),
                          plain.links.w.size() * sizeof(double)), 0);
    EXPECT_EQ(barred.method_of, plain.method_of);
    EXPECT_EQ(barred.served_per_step, plain.served_per_step);
    EXPECT_GT(plain.dst_end - plain.dst_begin, 4096);  // two batches at least
    EXPECT_GT(seen.size(), 1u);
    for (size_t i = 0; i < seen.size(); ++i) {
      EXPECT_GT(seen[i], 0.0);
      EXPECT_LE(seen[i], 1.0);
      if (i > 0) {
        EXPECT_GE(seen[i], seen[i - 1]);
      }
    }
  }
}

// bilinear alone leaves destination points inside the masked continent to the next step; with
// nearest after it, nearest serves exactly those.
TEST(WeightsGen, EachStepServesWhatThePreviousLeft) {
  const Grid src = lonlat_grid("src", 36, 18, 0.0, true);
  const Grid dst = lonlat_grid("dst", 48, 30, -180.0, false);
  const GeneratedWeights alone = generate_weights(MPI_COMM_WORLD, src, dst, "bilinear", {});
  const GeneratedWeights stacked =
      generate_weights(MPI_COMM_WORLD, src, dst, "bilinear,nearest", {});
  EXPECT_GT(alone.unserved, 0);
  ASSERT_EQ(stacked.served_per_step.size(), 2u);
  EXPECT_EQ(stacked.served_per_step[0], alone.served_per_step[0]);
  EXPECT_EQ(stacked.served_per_step[1], alone.unserved);
  EXPECT_EQ(stacked.unserved, 0);
  for (size_t i = 0; i < alone.method_of.size(); ++i)
    EXPECT_EQ(stacked.method_of[i], alone.method_of[i] == 0 ? 0 : 1) << "point " << i;
}

// The file: SCRIP's variables and attributes, links in destination order, the record of the
// step that served each point; the cache reuses it for the same grids and options only.
TEST(WeightsGen, WritesAScripFileAndCachesIt) {
  Watchdog dog("WeightsGen.WritesAScripFileAndCachesIt", 120);
  TempRunDir dir("weights_gen_file");
  const std::string src_file = dir / "src.nc", dst_file = dir / "dst.nc";
  if (world_rank() == 0) {
    write_scrip_grid(src_file, lonlat_grid("src", 36, 18, 0.0, true));
    write_scrip_grid(dst_file, lonlat_grid("dst", 24, 12, -180.0, false));
  }
  MPI_Barrier(MPI_COMM_WORLD);
  const Grid src = read_grid(src_file), dst = read_grid(dst_file);
  const std::string path = dir / "rmp_src_to_dst.nc";
  GenOptions o;
  // Made (on more than one rank, from the grids read in parts), with the cache's key.
  EXPECT_TRUE(ensure_weights_file(MPI_COMM_WORLD, path, src_file, dst_file, "conservative,nearest", o));
  const GeneratedWeights w = generate_weights(MPI_COMM_WORLD, src, dst, "conservative,nearest", o);
  const Gathered g = gather(w, MPI_COMM_WORLD);

  WeightsInfo info;
  const LinkSlab slab = read_scrip_weights_chunked(MPI_COMM_WORLD, path, {src.size(), dst.size()},
                                                   &info, nullptr, 1000, int64_t{1} << 40);
  EXPECT_EQ(info.num_links, w.total_links);
  EXPECT_EQ(info.map_method, "Conservative remapping");
  EXPECT_EQ(info.normalization, "fracarea");
  EXPECT_EQ(info.src_grid_dims, (std::vector<int64_t>{36, 18}));
  if (world_rank() == 0) {
    ASSERT_EQ(slab.size(), info.num_links);  // one reader: the whole file
    EXPECT_EQ(slab.src, g.src);
    EXPECT_EQ(slab.dst, std::vector<int64_t>(g.dst.begin(), g.dst.end()));
    EXPECT_EQ(slab.weights, g.w);
    EXPECT_TRUE(std::is_sorted(slab.dst.begin(), slab.dst.end()));
    int ncid = -1, var = -1;
    ASSERT_EQ(nc_open(path.c_str(), NC_NOWRITE, &ncid), NC_NOERR);
    for (const char* v : {"src_grid_center_lat", "src_grid_center_lon", "src_grid_corner_lat",
                          "dst_grid_corner_lon", "src_grid_imask", "dst_grid_imask",
                          "src_grid_area", "dst_grid_area", "src_grid_frac", "dst_grid_frac"})
      EXPECT_EQ(nc_inq_varid(ncid, v, &var), NC_NOERR) << v;
    std::vector<signed char> method(size_t(dst.size()));
    ASSERT_EQ(nc_inq_varid(ncid, "dst_grid_method", &var), NC_NOERR);
    ASSERT_EQ(nc_get_var_schar(ncid, var, method.data()), NC_NOERR);
    for (size_t d = 0; d < method.size(); ++d) EXPECT_EQ(method[d], g.method_of[d]) << d;
    char methods[64] = {0};
    ASSERT_EQ(nc_get_att_text(ncid, var, "methods", methods), NC_NOERR);
    EXPECT_STREQ(methods, "conservative,nearest");
    std::vector<int> imask(size_t(src.size()));
    ASSERT_EQ(nc_inq_varid(ncid, "src_grid_imask", &var), NC_NOERR);
    ASSERT_EQ(nc_get_var_int(ncid, var, imask.data()), NC_NOERR);
    for (int64_t s = 0; s < src.size(); ++s) EXPECT_EQ(imask[size_t(s)], src.mask[size_t(s)]);
    char src_name[8] = {0};
    EXPECT_EQ(nc_get_att_text(ncid, NC_GLOBAL, "source_grid", src_name), NC_NOERR);
    EXPECT_STREQ(src_name, "src");
    nc_close(ncid);
  }
  // The same grids, stack and options: reused. Other options: made again. A file without
  // isthmus's key (another tool's): used as it is.
  EXPECT_FALSE(ensure_weights_file(MPI_COMM_WORLD, path, src_file, dst_file, "conservative,nearest", o));
  GenOptions destarea;
  destarea.normalization = "destarea";
  EXPECT_TRUE(ensure_weights_file(MPI_COMM_WORLD, path, src_file, dst_file, "conservative,nearest", destarea));
  EXPECT_FALSE(ensure_weights_file(MPI_COMM_WORLD, path, src_file, dst_file, "conservative,nearest", destarea));
  if (world_rank() == 0) {  // the key is the one of the grids held whole
    int ncid = -1;
    ASSERT_EQ(nc_open(path.c_str(), NC_NOWRITE, &ncid), NC_NOERR);
    char key[17] = {0};
    EXPECT_EQ(nc_get_att_text(ncid, NC_GLOBAL, "isthmus_weights_key", key), NC_NOERR);
    nc_close(ncid);
    EXPECT_EQ(std::string(key), weights_key(src, dst, "conservative,nearest", destarea));
  }
  // A grid that cannot be read: the caller's explanation, on every rank; no file.
  try {
    ensure_weights_file(MPI_COMM_WORLD, dir / "rmp_missing.nc", dir / "missing.nc", dst_file,
                        "nearest", o, [](const std::exception& e) {
                          fail(ISTHMUS_ERR_FILE, "entry 3: ", e.what());
                        });
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ISTHMUS_ERR_FILE);
    EXPECT_NE(std::string(e.what()).find("entry 3: grid"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("missing.nc"), std::string::npos) << e.what();
  }
  EXPECT_NE(access((dir / "rmp_missing.nc").c_str(), F_OK), 0);
  const std::string foreign = dir / "rmp_foreign.nc";
  if (world_rank() == 0) {
    WeightsInfo fi;
    fi.num_links = 1;
    fi.src_grid_size = src.size();
    fi.dst_grid_size = dst.size();
    write_scrip_weights(foreign, fi, {0}, {0}, {1.0});
  }
  MPI_Barrier(MPI_COMM_WORLD);
  // (grids that do not exist: a foreign file needs none)
  EXPECT_FALSE(ensure_weights_file(MPI_COMM_WORLD, foreign, dir / "none1.nc", dir / "none2.nc",
                                   "nearest", o));
}

// The C API: a file of the shared data's grids through isthmus_weights_generate; errors agreed.
TEST(WeightsGen, CApiGeneratesAndAgreesOnErrors) {
  Watchdog dog("WeightsGen.CApiGeneratesAndAgreesOnErrors", 120);
  TempRunDir dir("weights_gen_capi");
  isthmus_context* ctx = nullptr;
  ASSERT_EQ(isthmus_context_create(MPI_COMM_WORLD, &ctx), ISTHMUS_OK);
  const std::string data = ISTHMUS_TEST_DATA "/orca2-lmdz/";
  const std::string out = dir / "rmp_torc_to_lmdz_nearest.nc";
  int generated = -1;
  EXPECT_EQ(isthmus_weights_generate(ctx, (data + "grid_torc.nc").c_str(),
                                     (data + "grid_lmdz.nc").c_str(), "bilinear,nearest",
                                     "neighbours=1", out.c_str(), &generated),
            ISTHMUS_OK)
      << isthmus_last_error(ctx);
  EXPECT_EQ(generated, 1);
  EXPECT_EQ(isthmus_weights_generate(ctx, (data + "grid_torc.nc").c_str(),
                                     (data + "grid_lmdz.nc").c_str(), "bilinear,nearest",
                                     "neighbours=1", out.c_str(), &generated),
            ISTHMUS_OK);
  EXPECT_EQ(generated, 0);
  // Every active LMDZ point mapped (the stack ends in nearest); weights of a point sum to 1.
  WeightsInfo info;
  const LinkSlab slab = read_scrip_weights_chunked(MPI_COMM_WORLD, out, {27118, 6912}, &info,
                                                   nullptr, 4096, int64_t{1} << 40);
  if (world_rank() == 0) {
    std::vector<double> sum(6912, 0.0);
    for (int64_t i = 0; i < slab.size(); ++i) sum[size_t(slab.dst[size_t(i)])] += slab.weights[size_t(i)];
    int mapped = 0;
    for (double s : sum)
      if (s != 0.0) {
        ++mapped;
        EXPECT_NEAR(s, 1.0, 1e-12);
      }
    EXPECT_EQ(mapped, 4965);
  }
  // The cache key of weights that do not use corners (all but conservative) does not depend on
  // them (they are not read): LMDZ written twice, the second time with its corners moved,
  // reuses a nearest file, and regenerates a conservative one.
  {
    Grid lmdz = read_grid(data + "grid_lmdz.nc");
    const std::string same = dir / "lmdz_a.nc", moved = dir / "lmdz_b.nc";
    if (world_rank() == 0) write_scrip_grid(same, lmdz);
    for (double& x : lmdz.corner_lon) x += 1e-3;
    if (world_rank() == 0) write_scrip_grid(moved, lmdz);
    MPI_Barrier(MPI_COMM_WORLD);
    for (const char* stack : {"nearest", "conservative"}) {
      const std::string file = dir / (std::string("rmp_lmdz_to_torc_") + stack + ".nc");
      for (const std::string& grid : {same, moved}) {
        EXPECT_EQ(isthmus_weights_generate(ctx, grid.c_str(), (data + "grid_torc.nc").c_str(),
                                           stack, nullptr, file.c_str(), &generated),
                  ISTHMUS_OK)
            << isthmus_last_error(ctx);
        const bool again = grid == moved && std::string(stack) == "nearest";
        EXPECT_EQ(generated, again ? 0 : 1) << stack << " from " << grid;
      }
    }
  }
  int rc = isthmus_weights_generate(ctx, (data + "grid_torc.nc").c_str(),
                                    (data + "grid_lmdz.nc").c_str(), "bilinear", "radius=2",
                                    out.c_str(), nullptr);
  EXPECT_TRUE(same_code_everywhere(rc, ISTHMUS_ERR_ARG));
  EXPECT_NE(std::string(isthmus_last_error(ctx)).find("\"radius=2\" is not known"), std::string::npos);
  rc = isthmus_weights_generate(ctx, (data + "no_such_grid.nc").c_str(),
                                (data + "grid_lmdz.nc").c_str(), "nearest", nullptr, out.c_str(),
                                nullptr);
  EXPECT_TRUE(same_code_everywhere(rc, ISTHMUS_ERR_FILE));
  EXPECT_NE(std::string(isthmus_last_error(ctx)).find("no_such_grid.nc"), std::string::npos);
  isthmus_context_destroy(&ctx);
}

// An unstructured (icosahedral) grid on either side: conservative weights conserve the global
// integral (DESTAREA: every source cell's area comes back, to 1e-12) and sum to 1 (FRACAREA);
// nearest and gaussian take it as a source; bilinear refuses it, naming the grid; the links are
// the same bits at every rank count.
TEST(WeightsGen, AnUnstructuredIcosahedralGrid) {
  Watchdog dog("WeightsGen.AnUnstructuredIcosahedralGrid", 120);
  const Grid ico = icosahedral_grid(4);  // 5120 triangles
  ASSERT_EQ(ico.size(), 5120);
  const Grid ll = lonlat_grid("ll", 60, 30, 0.0, false);
  for (const auto& [src, dst] : {std::pair<const Grid*, const Grid*>{&ico, &ll},
                                 std::pair<const Grid*, const Grid*>{&ll, &ico}}) {
    GenOptions destarea;
    destarea.normalization = "destarea";
    GeneratedWeights w;
    expect_same_bits_as_one_rank(*src, *dst, "conservative", destarea, &w);
    EXPECT_EQ(w.unserved, 0);
    // Sum over destinations of w * A_dst per source cell = A_src (gathered over ranks).
    const auto area = [](const Grid& g, int64_t c) {
      std::vector<Vec3> v;
      for (int k = 0; k < g.num_corners; ++k)
        v.push_back(to_xyz(g.corner_lon[size_t(c * g.num_corners + k)],
                           g.corner_lat[size_t(c * g.num_corners + k)]));
      return spherical_polygon_area(v.data(), int(v.size()));
    };
    std::vector<double> back(size_t(src->size()), 0.0);
    for (int64_t i = 0; i < w.links.size(); ++i)
      back[size_t(w.links.src[size_t(i)])] += w.links.w[size_t(i)] * area(*dst, w.links.dst[size_t(i)]);
    MPI_Allreduce(MPI_IN_PLACE, back.data(), int(back.size()), MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    double worst = 0, total = 0;
    for (int64_t c = 0; c < src->size(); ++c) {
      worst = std::max(worst, std::fabs(back[size_t(c)] - area(*src, c)) / area(*src, c));
      total += back[size_t(c)];
    }
    EXPECT_LT(worst, 1e-12) << src->name << " -> " << dst->name;
    EXPECT_NEAR(total, 4 * M_PI, 1e-12 * 4 * M_PI);
    const GeneratedWeights f = generate_weights(MPI_COMM_WORLD, *src, *dst, "conservative", {});
    std::vector<double> sum(size_t(f.dst_end - f.dst_begin), 0.0);
    for (int64_t i = 0; i < f.links.size(); ++i)
      sum[size_t(f.links.dst[size_t(i)] - f.dst_begin)] += f.links.w[size_t(i)];
    for (double x : sum) EXPECT_NEAR(x, 1.0, 1e-12);
  }
  GenOptions o;
  o.num_neighbours = 3;
  expect_same_bits_as_one_rank(ico, ll, "nearest", o);
  expect_same_bits_as_one_rank(ico, ll, "gaussian", o);
  try {
    generate_weights(MPI_COMM_WORLD, ico, ll, "bilinear,nearest", {});
    ADD_FAILURE() << "bilinear from an unstructured grid";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ISTHMUS_ERR_ARG);
    EXPECT_NE(std::string(e.what()).find("'ico'"), std::string::npos) << e.what();
  }
}

// A destination cell barely covered by a regional source grid (under 1e-4 of its area) gets a
// value and its true small covered fraction (CDO and SCRIP write a fraction of 1 there, or
// nothing); cells the source covers whole get 1.
TEST(WeightsGen, ABarelyCoveredCellGetsItsTrueFraction) {
  // Source: 1° cells over lon [10, 20), lat [-0.0005, 9.9995): its lowest 0.0005° reach into
  // the destination's 10° cells below the equator.
  Grid src;
  src.name = "regional";
  src.dims = {10, 10};
  src.num_corners = 4;
  const double lat0 = -0.0005;  // 0.0005° below the equator: a sliver of the cells below it
  for (int j = 0; j < 10; ++j)
    for (int i = 0; i < 10; ++i) {
      const double lo = 10 + i, la = lat0 + j;
      src.lon.push_back((lo + 0.5) * kDeg);
      src.lat.push_back((la + 0.5) * kDeg);
      const double cx[4] = {lo, lo + 1, lo + 1, lo}, cy[4] = {la, la, la + 1, la + 1};
      for (int k = 0; k < 4; ++k) {
        src.corner_lon.push_back(cx[k] * kDeg);
        src.corner_lat.push_back(cy[k] * kDeg);
      }
    }
  const Grid dst = lonlat_grid("dst", 36, 18, 0.0, false);  // 10° cells
  const GeneratedWeights w = generate_weights(MPI_COMM_WORLD, src, dst, "conservative", {});
  // dst cell (i = 1, j = 8): lon [10, 20), lat [-10, 0): covered 0.0005° of 10° in latitude
  // over its whole width: about 5e-5 of its area. dst cell (1, 9): lat [0, 10): covered whole
  // but for the top 0.0005°.
  const int64_t sliver = 8 * 36 + 1, full = 9 * 36 + 1;
  std::vector<double> sum(size_t(dst.size()), 0.0), frac(size_t(dst.size()), -1.0);
  for (int64_t i = 0; i < w.links.size(); ++i) sum[size_t(w.links.dst[size_t(i)])] += w.links.w[size_t(i)];
  for (const auto& [d, f] : w.links.frac) frac[size_t(d)] = f;
  MPI_Allreduce(MPI_IN_PLACE, sum.data(), int(sum.size()), MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, frac.data(), int(frac.size()), MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  EXPECT_NEAR(sum[size_t(sliver)], 1.0, 1e-12) << "the sliver's cell gets a value (FRACAREA)";
  EXPECT_GT(frac[size_t(sliver)], 3e-5);
  EXPECT_LT(frac[size_t(sliver)], 7e-5);
  // Nearly whole: cell edges are great circles, and the 10° cell's upper edge bulges above the
  // 1° cells' (0.25 % of its area here).
  EXPECT_NEAR(frac[size_t(full)], 1.0, 5e-3);
  EXPECT_LT(frac[size_t(full)], 1.0);
  EXPECT_EQ(frac[0], -1.0) << "a cell the source does not reach is not served";
}

// The streamed tests' source, written to `path` by rank 0 (every rank returns it): a regional
// grid with a masked continent and its rows north of 60°N masked, so that FRACNNEI has
// uncovered points to fill and the nearest neighbours have masked points to pass over.
Grid write_streamed_source(const std::string& path) {
  Grid src = lonlat_grid("src", 36, 18, 0.0, true);
  for (int64_t c = 0; c < src.size(); ++c)
    if (src.lat[size_t(c)] > 60 * kDeg) src.mask[size_t(c)] = 0;
  if (world_rank() == 0) write_scrip_grid(path, src);
  MPI_Barrier(MPI_COMM_WORLD);
  return src;
}

// A source streamed from its SCRIP grid file in slabs (the path of sources too large to hold):
// the same links as the source held whole, weights within 1e-12 (the overlaps are clipped with
// the roles swapped), FRACNNEI's nearest neighbours the same, and the same bits at every rank
// count and slab size.
TEST(WeightsGen, AStreamedSourceGivesTheWeightsOfTheSourceHeldWhole) {
  Watchdog dog("WeightsGen.AStreamedSourceGivesTheWeightsOfTheSourceHeldWhole", 120);
  TempRunDir dir("weights_stream");
  const std::string path = dir / "src.nc";
  const Grid src = write_streamed_source(path);
  const Grid dst = lonlat_grid("dst", 48, 30, -180.0, false);
  const Grid held = read_grid(path);  // degrees in the file: compare with what the stream reads
  for (const std::string norm : {"fracarea", "destarea", "fracnnei"}) {
    GenOptions o;
    o.normalization = norm;
    const GridSlabs slabs(path);
    const StreamedWeights s = generate_streamed_conservative(MPI_COMM_WORLD, slabs, dst, o, 37);
    const GeneratedWeights h = generate_weights(MPI_COMM_SELF, held, dst, "conservative", o);
    // Every rank's streamed links on rank 0, in rank (= source) order.
    GeneratedWeights as_gen;
    as_gen.links = s.links;
    as_gen.method_of.clear();
    const Gathered g = gather(as_gen, MPI_COMM_WORLD);
    if (world_rank() == 0) {
      // Source order, then by destination: the held links are by destination, then source.
      std::vector<std::tuple<int64_t, int64_t, double>> a, b;
      for (size_t i = 0; i < g.src.size(); ++i) a.emplace_back(g.src[i], g.dst[i], g.w[i]);
      for (int64_t i = 0; i < h.links.size(); ++i)
        b.emplace_back(h.links.src[size_t(i)], h.links.dst[size_t(i)], h.links.w[size_t(i)]);
      EXPECT_TRUE(std::is_sorted(a.begin(), a.end())) << norm << ": links not in source order";
      std::sort(b.begin(), b.end());
      ASSERT_EQ(a.size(), b.size()) << norm;
      double worst = 0;
      int64_t pairs = 0;
      for (size_t i = 0; i < a.size(); ++i) {
        pairs += std::get<0>(a[i]) != std::get<0>(b[i]) || std::get<1>(a[i]) != std::get<1>(b[i]);
        worst = std::max(worst, std::fabs(std::get<2>(a[i]) - std::get<2>(b[i])));
      }
      EXPECT_EQ(pairs, 0) << norm;
      EXPECT_LT(worst, 1e-12) << norm;
      // The same bits on one rank with another slab size.
      const StreamedWeights one = generate_streamed_conservative(MPI_COMM_SELF, slabs, dst, o, 100);
      EXPECT_EQ(one.links.src, g.src) << norm;
      EXPECT_EQ(one.links.dst, g.dst) << norm;
      EXPECT_TRUE(one.links.w == g.w) << norm;
      EXPECT_EQ(one.nearest_filled, s.nearest_filled);
    }
    if (norm == "fracnnei") {
      EXPECT_GT(s.nearest_filled, 0);
      EXPECT_EQ(s.unserved, 0);
    } else {
      EXPECT_GT(s.unserved, 0);
    }
  }
  // The file: SCRIP's variables with the source's streamed in, readable by the weights reader.
  GenOptions o;
  const GridSlabs slabs(path);
  const StreamedWeights s = generate_streamed_conservative(MPI_COMM_WORLD, slabs, dst, o, 50);
  write_streamed_weights(MPI_COMM_WORLD, dir / "w.nc", slabs, dst, s, 50);
  // The source fractions, which each rank sums from its links as it hands its slabs to rank 0:
  // those of the file written from the source held whole.
  const GeneratedWeights hw = generate_weights(MPI_COMM_WORLD, held, dst, "conservative", o);
  write_generated_weights(MPI_COMM_WORLD, dir / "held.nc", held, dst, hw);
  WeightsInfo info;
  read_scrip_weights(MPI_COMM_WORLD, dir / "w.nc", {src.size(), dst.size()}, &info);
  EXPECT_EQ(info.num_links, s.total_links);
  if (world_rank() == 0) {
    int ncid = -1, var = -1;
    ASSERT_EQ(nc_open((dir / "w.nc").c_str(), NC_NOWRITE, &ncid), NC_NOERR);
    std::vector<double> lat(size_t(src.size())), area(size_t(src.size()));
    ASSERT_EQ(nc_inq_varid(ncid, "src_grid_center_lat", &var), NC_NOERR);
    ASSERT_EQ(nc_get_var_double(ncid, var, lat.data()), NC_NOERR);
    ASSERT_EQ(nc_inq_varid(ncid, "src_grid_area", &var), NC_NOERR);
    ASSERT_EQ(nc_get_var_double(ncid, var, area.data()), NC_NOERR);
    std::vector<int> imask(size_t(src.size()));
    ASSERT_EQ(nc_inq_varid(ncid, "src_grid_imask", &var), NC_NOERR);
    ASSERT_EQ(nc_get_var_int(ncid, var, imask.data()), NC_NOERR);
    for (int64_t c = 0; c < src.size(); ++c) {
      EXPECT_NEAR(lat[size_t(c)], held.lat[size_t(c)], 1e-15);
      EXPECT_NEAR(area[size_t(c)], cell_area(held, c), 1e-18);
      EXPECT_EQ(imask[size_t(c)], src.mask[size_t(c)]);
    }
    std::vector<double> frac(size_t(src.size())), held_frac(size_t(src.size()));
    ASSERT_EQ(nc_inq_varid(ncid, "src_grid_frac", &var), NC_NOERR);
    ASSERT_EQ(nc_get_var_double(ncid, var, frac.data()), NC_NOERR);
    nc_close(ncid);
    ASSERT_EQ(nc_open((dir / "held.nc").c_str(), NC_NOWRITE, &ncid), NC_NOERR);
    ASSERT_EQ(nc_inq_varid(ncid, "src_grid_frac", &var), NC_NOERR);
    ASSERT_EQ(nc_get_var_double(ncid, var, held_frac.data()), NC_NOERR);
    for (int64_t c = 0; c < src.size(); ++c) {
      EXPECT_NEAR(frac[size_t(c)], held_frac[size_t(c)], 1e-12) << "source cell " << c;
      // the global destination covers every active source cell whole; masked cells take none
      EXPECT_NEAR(frac[size_t(c)], src.active(c) ? 1.0 : 0.0, 1e-12) << "source cell " << c;
    }
  }
}

// g as OASIS's grids.nc (NAME.lon, .lat (y, x); .clo, .cla (crn, y, x); degrees) and masks.nc
// (NAME.msk, 1 = masked) in dir: the values write_scrip_grid writes, in OASIS's files.
void write_oasis_grid(const std::string& dir, const Grid& g, const std::string& name) {
  const size_t nx = size_t(g.nx()), ny = size_t(g.ny()), n = nx * ny, nc = size_t(g.num_corners);
  std::vector<double> lon(n), lat(n), clo(nc * n), cla(nc * n);
  std::vector<int> msk(n);
  for (size_t c = 0; c < n; ++c) {
    lon[c] = g.lon[c] / kDeg;
    lat[c] = g.lat[c] / kDeg;
    msk[c] = g.active(int64_t(c)) ? 0 : 1;
    for (size_t k = 0; k < nc; ++k) {
      clo[k * n + c] = g.corner_lon[c * nc + k] / kDeg;
      cla[k * n + c] = g.corner_lat[c * nc + k] / kDeg;
    }
  }
  for (const bool masks : {false, true}) {
    int id = -1, x = -1, y = -1, crn = -1, v = -1;
    ASSERT_EQ(nc_create((dir + (masks ? "/masks.nc" : "/grids.nc")).c_str(), NC_CLOBBER, &id), NC_NOERR);
    ASSERT_EQ(nc_def_dim(id, ("y_" + name).c_str(), ny, &y), NC_NOERR);
    ASSERT_EQ(nc_def_dim(id, ("x_" + name).c_str(), nx, &x), NC_NOERR);
    if (!masks) {
      ASSERT_EQ(nc_def_dim(id, ("crn_" + name).c_str(), nc, &crn), NC_NOERR);
    }
    const int centre[2] = {y, x}, corner[3] = {crn, y, x};
    const auto put = [&](const std::string& var, nc_type type, const int* dims, int rank, const void* data) {
      ASSERT_EQ(nc_redef(id), NC_NOERR);
      ASSERT_EQ(nc_def_var(id, (name + var).c_str(), type, rank, dims, &v), NC_NOERR);
      ASSERT_EQ(nc_enddef(id), NC_NOERR);
      ASSERT_EQ(type == NC_INT ? nc_put_var_int(id, v, static_cast<const int*>(data))
                               : nc_put_var_double(id, v, static_cast<const double*>(data)), NC_NOERR);
    };
    ASSERT_EQ(nc_enddef(id), NC_NOERR);
    if (masks) {
      put(".msk", NC_INT, centre, 2, msk.data());
    } else {
      put(".lon", NC_DOUBLE, centre, 2, lon.data());
      put(".lat", NC_DOUBLE, centre, 2, lat.data());
      put(".clo", NC_DOUBLE, corner, 3, clo.data());
      put(".cla", NC_DOUBLE, corner, 3, cla.data());
    }
    ASSERT_EQ(nc_close(id), NC_NOERR);
  }
}

// A source streamed from OASIS's grids.nc:NAME (with masks.nc) instead of a SCRIP grid file:
// the same links, bit for bit, and the same file, for conservative and nearest weights.
TEST(WeightsGen, AStreamedOasisSourceGivesTheWeightsOfItsScripCopy) {
  Watchdog dog("WeightsGen.AStreamedOasisSourceGivesTheWeightsOfItsScripCopy", 120);
  TempRunDir dir("weights_stream_oasis");
  const Grid src = write_streamed_source(dir / "src.nc");
  if (world_rank() == 0) write_oasis_grid(dir.path(), src, "ocn");
  MPI_Barrier(MPI_COMM_WORLD);
  const Grid dst = lonlat_grid("dst", 48, 30, -180.0, false);
  const GridSlabs scrip(dir / "src.nc"), oasis(dir / "grids.nc:ocn");
  EXPECT_EQ(oasis.size(), src.size());
  EXPECT_EQ(oasis.header().dims, src.dims);
  EXPECT_EQ(oasis.header().num_corners, 4);
  for (const std::string method : {"conservative", "nearest"}) {
    SCOPED_TRACE(method);
    GenOptions o;
    o.normalization = "fracnnei";
    const auto generate = [&](const GridSlabs& g) {
      return method == "nearest" ? generate_streamed_neighbours(MPI_COMM_WORLD, g, dst, method, o, 37)
                                 : generate_streamed_conservative(MPI_COMM_WORLD, g, dst, o, 37);
    };
    const StreamedWeights a = generate(scrip), b = generate(oasis);
    EXPECT_GT(a.links.size(), 0);
    EXPECT_EQ(a.links.src, b.links.src);
    EXPECT_EQ(a.links.dst, b.links.dst);
    EXPECT_TRUE(a.links.w == b.links.w);
    EXPECT_EQ(a.unserved, b.unserved);
    write_streamed_weights(MPI_COMM_WORLD, dir / "a.nc", scrip, dst, a, 37);
    write_streamed_weights(MPI_COMM_WORLD, dir / "b.nc", oasis, dst, b, 37);
    if (world_rank() == 0) {
      for (const char* var : {"src_grid_center_lon", "src_grid_corner_lat", "src_grid_area",
                              "src_grid_frac", "remap_matrix"}) {
        std::vector<double> va, vb;
        int present = 0;  // files that have it
        for (const char* f : {"a.nc", "b.nc"}) {
          int id = -1, v = -1, nd = 0;
          ASSERT_EQ(nc_open((dir / f).c_str(), NC_NOWRITE, &id), NC_NOERR);
          if (nc_inq_varid(id, var, &v) != NC_NOERR) {
            nc_close(id);
            continue;
          }
          ++present;
          int dims[2];
          ASSERT_EQ(nc_inq_varndims(id, v, &nd), NC_NOERR);
          ASSERT_EQ(nc_inq_vardimid(id, v, dims), NC_NOERR);
          size_t n = 1, len = 0;
          for (int d = 0; d < nd; ++d) {
            ASSERT_EQ(nc_inq_dimlen(id, dims[d], &len), NC_NOERR);
            n *= len;
          }
          std::vector<double>& out = f[0] == 'a' ? va : vb;
          out.resize(n);
          ASSERT_EQ(nc_get_var_double(id, v, out.data()), NC_NOERR);
          nc_close(id);
        }
        EXPECT_NE(present, 1) << var;
        EXPECT_TRUE(va == vb) << var;
        if (method == "conservative") {
          EXPECT_EQ(present, 2) << var;  // nearest's file has no corners nor areas
        }
      }
      int id = -1, v = -1;
      std::vector<int> imask(size_t(src.size()));
      ASSERT_EQ(nc_open((dir / "b.nc").c_str(), NC_NOWRITE, &id), NC_NOERR);
      ASSERT_EQ(nc_inq_varid(id, "src_grid_imask", &v), NC_NOERR);
      ASSERT_EQ(nc_get_var_int(id, v, imask.data()), NC_NOERR);
      nc_close(id);
      for (int64_t c = 0; c < src.size(); ++c) EXPECT_EQ(imask[size_t(c)], src.mask[size_t(c)]) << c;
    }
  }
}

// Nearest neighbours (DISTWGT, GAUSWGT) from a source streamed in slabs: the links of the
// source held whole, bit for bit (the first n by distance, then index: a regular source has
// ties; GAUSWGT's mean distance summed in storage order over the ranks), at every rank count and
// slab size, and the file's links and variables as the held path writes them.
TEST(WeightsGen, AStreamedSourceGivesTheNearestNeighboursOfTheSourceHeldWhole) {
  Watchdog dog("WeightsGen.AStreamedSourceGivesTheNearestNeighboursOfTheSourceHeldWhole", 120);
  TempRunDir dir("weights_stream_nearest");
  const std::string path = dir / "src.nc";
  const Grid src = write_streamed_source(path);
  Grid dst = lonlat_grid("dst", 48, 30, -180.0, false);
  dst.mask.assign(size_t(dst.size()), 1);
  dst.mask[7] = 0;  // a masked destination point: no link, counted as masked
  const Grid held = read_grid(path);
  const GridSlabs slabs(path);
  for (const auto& [method, n] : {std::pair<std::string, int>{"nearest", 1}, {"nearest", 4},
                                   {"gaussian", 4}}) {
    GenOptions o;
    o.num_neighbours = n;
    o.gaussian_variance = 0.7;
    const StreamedWeights s = generate_streamed_neighbours(MPI_COMM_WORLD, slabs, dst, method, o, 37);
    GeneratedWeights as_gen;
    as_gen.links = s.links;
    const Gathered g = gather(as_gen, MPI_COMM_WORLD);
    EXPECT_EQ(s.masked, 1);
    if (world_rank() == 0) {
      const GeneratedWeights h = generate_weights(MPI_COMM_SELF, held, dst, method, o);
      EXPECT_EQ(g.src, h.links.src) << method << " " << n;
      EXPECT_EQ(g.dst, h.links.dst) << method << " " << n;
      EXPECT_TRUE(g.w == h.links.w) << method << " " << n;  // bit for bit
      EXPECT_EQ(s.total_links, h.total_links);
      EXPECT_EQ(s.served, h.served_per_step[0]);
      EXPECT_EQ(s.unserved, h.unserved);
      const StreamedWeights one = generate_streamed_neighbours(MPI_COMM_SELF, slabs, dst, method, o, 1000);
      EXPECT_EQ(one.links.src, h.links.src) << method << " " << n;
      EXPECT_TRUE(one.links.w == h.links.w) << method << " " << n;
    }
  }
  // OASIS's mask rules are the held path's only: refused on every rank, naming why.
  for (const std::string method : {"nearest", "conservative"}) {
    GenOptions oasis;
    oasis.oasis_masks = true;
    try {
      if (method == "nearest")
        generate_streamed_neighbours(MPI_COMM_WORLD, slabs, dst, method, oasis, 50);
      else
        generate_streamed_conservative(MPI_COMM_WORLD, slabs, dst, oasis, 50);
      ADD_FAILURE() << method << ": OASIS's mask rules were not refused";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ISTHMUS_ERR_ARG);
      EXPECT_NE(std::string(e.what()).find("hold the source whole"), std::string::npos) << e.what();
    }
  }
  // The file: the links in destination order, SCRIP's words for the method, no corners.
  GenOptions o;
  o.num_neighbours = 4;
  const StreamedWeights s = generate_streamed_neighbours(MPI_COMM_WORLD, slabs, dst, "nearest", o, 50);
  write_streamed_weights(MPI_COMM_WORLD, dir / "w.nc", slabs, dst, s, 50);
  WeightsInfo info;
  const LinkSlab file = read_scrip_weights_chunked(MPI_COMM_WORLD, dir / "w.nc", {src.size(), dst.size()},
                                                   &info, nullptr, 1000, int64_t{1} << 40);
  EXPECT_EQ(info.num_links, s.total_links);
  EXPECT_EQ(info.map_method, "Distance weighted avg of nearest neighbors");
  if (world_rank() == 0) {
    const GeneratedWeights h = generate_weights(MPI_COMM_SELF, held, dst, "nearest", o);
    EXPECT_EQ(file.src, h.links.src);
    EXPECT_EQ(file.dst, std::vector<int64_t>(h.links.dst.begin(), h.links.dst.end()));
    EXPECT_EQ(file.weights, h.links.w);
    int ncid = -1, var = -1;
    ASSERT_EQ(nc_open((dir / "w.nc").c_str(), NC_NOWRITE, &ncid), NC_NOERR);
    EXPECT_NE(nc_inq_varid(ncid, "src_grid_corner_lat", &var), NC_NOERR);
    EXPECT_NE(nc_inq_varid(ncid, "src_grid_area", &var), NC_NOERR);
    std::vector<double> frac(size_t(src.size()));
    ASSERT_EQ(nc_inq_varid(ncid, "src_grid_frac", &var), NC_NOERR);
    ASSERT_EQ(nc_get_var_double(ncid, var, frac.data()), NC_NOERR);
    for (int64_t c = 0; c < src.size(); ++c) EXPECT_EQ(frac[size_t(c)], src.active(c) ? 1.0 : 0.0);
    std::vector<signed char> method(size_t(dst.size()));
    ASSERT_EQ(nc_inq_varid(ncid, "dst_grid_method", &var), NC_NOERR);
    ASSERT_EQ(nc_get_var_schar(ncid, var, method.data()), NC_NOERR);
    for (int64_t d = 0; d < dst.size(); ++d) EXPECT_EQ(method[size_t(d)], d == 7 ? -1 : 0) << d;
    nc_close(ncid);
  }
}

// A reduced Gaussian-like grid (rows of latitude holding fewer cells toward the poles, one
// index per cell, dims {size}): an unstructured grid to every method but bilinear. From it,
// conservative weights conserve every cell's area; to it, FRACAREA weights sum to 1 (its rows do
// not tile the sphere exactly: a row's upper edge and the next row's lower edge are great
// circles between different longitudes, so the lon-lat cells across a row boundary are not all
// covered and their areas do not all come back); nearest serves every point either way.
TEST(WeightsGen, AReducedGridAsSourceAndDestination) {
  Grid red;
  red.name = "reduced";
  red.source = "reduced";
  red.num_corners = 4;
  const int rows = 32;
  for (int j = 0; j < rows; ++j) {
    const double s = -90.0 + 180.0 * j / rows, n = s + 180.0 / rows;
    const double mid = 0.5 * (s + n) * kDeg;
    const int cells = std::max(4, static_cast<int>(std::lround(64 * std::cos(mid))));
    for (int i = 0; i < cells; ++i) {
      const double w = 360.0 * i / cells, e = 360.0 * (i + 1) / cells;
      red.lon.push_back(0.5 * (w + e) * kDeg);
      red.lat.push_back(mid);
      const double clo[4] = {w, e, e, w}, cla[4] = {s, s, n, n};
      for (int k = 0; k < 4; ++k) {
        red.corner_lon.push_back(clo[k] * kDeg);
        red.corner_lat.push_back(cla[k] * kDeg);
      }
    }
  }
  red.dims = {red.size()};
  const Grid ll = lonlat_grid("ll", 45, 24, 0.0, false);
  GenOptions destarea;
  destarea.normalization = "destarea";
  for (const auto& [src, dst] : {std::pair<const Grid*, const Grid*>{&red, &ll},
                                 std::pair<const Grid*, const Grid*>{&ll, &red}}) {
    GeneratedWeights nn;
    expect_same_bits_as_one_rank(*src, *dst, "nearest", {}, &nn);
    EXPECT_EQ(nn.unserved, 0);
    if (src == &ll) {
      GeneratedWeights f;
      expect_same_bits_as_one_rank(*src, *dst, "conservative", {}, &f);
      std::vector<double> sum(size_t(f.dst_end - f.dst_begin), 0.0);
      for (int64_t i = 0; i < f.links.size(); ++i)
        sum[size_t(f.links.dst[size_t(i)] - f.dst_begin)] += f.links.w[size_t(i)];
      for (double x : sum) EXPECT_NEAR(x, 1.0, 1e-12);
      continue;
    }
    GeneratedWeights w;
    expect_same_bits_as_one_rank(*src, *dst, "conservative", destarea, &w);
    std::vector<double> back(size_t(src->size()), 0.0);
    for (int64_t i = 0; i < w.links.size(); ++i)
      back[size_t(w.links.src[size_t(i)])] +=
          w.links.w[size_t(i)] * cell_area(*dst, w.links.dst[size_t(i)]);
    MPI_Allreduce(MPI_IN_PLACE, back.data(), int(back.size()), MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    double worst = 0;
    for (int64_t c = 0; c < src->size(); ++c)
      worst = std::max(worst, std::fabs(back[size_t(c)] - cell_area(*src, c)) / cell_area(*src, c));
    EXPECT_LT(worst, 1e-12) << src->name << " -> " << dst->name;
  }
}

namespace {

// Every variable of a netCDF file, as bytes, by name (and the global attributes' text).
std::map<std::string, std::string> file_contents(const std::string& path) {
  std::map<std::string, std::string> out;
  int id = -1, nvars = 0, natts = 0;
  EXPECT_EQ(nc_open(path.c_str(), NC_NOWRITE, &id), NC_NOERR) << path;
  if (id < 0) return out;
  nc_inq_nvars(id, &nvars);
  for (int v = 0; v < nvars; ++v) {
    char name[NC_MAX_NAME + 1];
    nc_type type;
    int ndims = 0, dims[NC_MAX_VAR_DIMS];
    nc_inq_var(id, v, name, &type, &ndims, dims, nullptr);
    size_t size = 0, len = 1;
    nc_inq_type(id, type, nullptr, &size);
    for (int k = 0; k < ndims; ++k) {
      size_t l = 0;
      nc_inq_dimlen(id, dims[k], &l);
      len *= l;
    }
    std::string bytes(len * size, '\0');
    if (len > 0) {
      EXPECT_EQ(nc_get_var(id, v, bytes.data()), NC_NOERR) << name;
    }
    out[name] = bytes;
  }
  nc_inq_natts(id, &natts);
  for (int a = 0; a < natts; ++a) {
    char name[NC_MAX_NAME + 1];
    size_t len = 0;
    nc_inq_attname(id, NC_GLOBAL, a, name);
    nc_inq_attlen(id, NC_GLOBAL, name, &len);
    std::string text(len, '\0');
    nc_get_att_text(id, NC_GLOBAL, name, text.data());
    out[std::string("global:") + name] = text;
  }
  nc_close(id);
  return out;
}

}  // namespace

// Grids read in parts (each rank its block of the destination and the source rows that block
// can reach): the same links, records and file, bit for bit, as the grids held whole, for
// conservative stacks on ORCA2 <-> LMDZ (masks as in the files, ORCA's fold and its masked
// degenerate cells) and on regular grids; and at 3 ranks or more, ranks hold less than the
// whole source.
TEST(WeightsGen, GridsReadInPartsGiveTheWeightsOfTheGridsHeldWhole) {
  Watchdog dog("WeightsGen.GridsReadInPartsGiveTheWeightsOfTheGridsHeldWhole", 240);
  TempRunDir dir("weights_parts");
  const std::string data = ISTHMUS_TEST_DATA "/orca2-lmdz/";
  const std::string coarse = dir / "coarse.nc", fine = dir / "fine.nc";
  if (world_rank() == 0) {
    write_scrip_grid(coarse, lonlat_grid("coarse", 36, 18, 0.0, true));
    write_scrip_grid(fine, lonlat_grid("fine", 96, 60, -180.0, true));
  }
  MPI_Barrier(MPI_COMM_WORLD);
  struct Case {
    std::string src, dst, stack, options;
  };
  const std::vector<Case> cases = {
      {data + "grid_torc.nc", data + "grid_lmdz.nc", "conservative", ""},
      {data + "grid_lmdz.nc", data + "grid_torc.nc", "conservative", "normalization=destarea"},
      {data + "grid_torc.nc", data + "grid_lmdz.nc", "conservative,fixed=1", "masks=oasis"},
      {data + "grid_lmdz.nc", data + "grid_torc.nc", "conservative", "order=2"},
      {coarse, fine, "conservative,fixed", ""},
      {fine, coarse, "conservative", "normalization=destarea"},
      // nearest searches: points whose neighbours lie beyond the rows read are searched again
      {data + "grid_torc.nc", data + "grid_lmdz.nc", "conservative", "normalization=fracnnei"},
      {data + "grid_torc.nc", data + "grid_lmdz.nc", "nearest", ""},
      {data + "grid_lmdz.nc", data + "grid_torc.nc", "nearest", "masks=oasis neighbours=3"},
      {data + "grid_torc.nc", data + "grid_lmdz.nc", "conservative,nearest,fixed", "masks=oasis"},
      {fine, coarse, "nearest", "neighbours=1"},
      {coarse, fine, "conservative,nearest", "normalization=fracnnei"},
      // bilinear and bicubic: ORCA's fold and masks (OASIS's fallback among the 4 nearest),
      // LMDZ's and the regular grids' pole caps (pole quads on the grid's first and last rows)
      {data + "grid_torc.nc", data + "grid_lmdz.nc", "bilinear,nearest", ""},
      {data + "grid_lmdz.nc", data + "grid_torc.nc", "bilinear", ""},
      {data + "grid_torc.nc", data + "grid_lmdz.nc", "bicubic,fixed", ""},
      {coarse, fine, "bilinear,nearest", ""},
      {fine, coarse, "bicubic", ""},
      {data + "grid_torc.nc", data + "grid_lmdz.nc", "conservative,bilinear,nearest", "masks=oasis"},
      {data + "grid_torc.nc", data + "grid_lmdz.nc", "gaussian", "variance=2"},
      {fine, coarse, "bilinear,gaussian", "neighbours=6 masks=oasis"},
      // creep fill: the destination's centres and mask read whole
      {coarse, fine, "bilinear,creep,fixed=-1", ""},
      {data + "grid_lmdz.nc", data + "grid_torc.nc", "conservative,creep=2", "masks=oasis"},
  };
  bool searched_again = false;  // some rank linked a point beyond the rows it first read
  for (const Case& c : cases) {
    const std::string what = c.src + " -> " + c.dst + " " + c.stack + " " + c.options;
    const GenOptions o = parse_gen_options(c.options);
    const Grid src = read_grid(c.src), dst = read_grid(c.dst);
    const GeneratedWeights held = generate_weights(MPI_COMM_WORLD, src, dst, c.stack, o);
    write_generated_weights(MPI_COMM_WORLD, dir / "held.nc", src, dst, held);
    const GridSlabs src_slabs(c.src), dst_slabs(c.dst);
    GridParts parts;
    const GeneratedWeights w =
        generate_weights_in_parts(MPI_COMM_WORLD, src_slabs, dst_slabs, c.stack, o, &parts);
    write_weights_in_parts(MPI_COMM_WORLD, dir / "parts.nc", src_slabs, parts, w);
    // This rank's block, and the same links and records as held whole.
    EXPECT_EQ(w.dst_begin, held.dst_begin) << what;
    EXPECT_EQ(w.dst_end, held.dst_end) << what;
    EXPECT_EQ(parts.dst_first, w.dst_begin) << what;
    EXPECT_EQ(parts.dst.size(), w.dst_end - w.dst_begin) << what;
    EXPECT_EQ(w.links.src, held.links.src) << what;
    EXPECT_EQ(w.links.dst, held.links.dst) << what;
    EXPECT_TRUE(w.links.w == held.links.w) << what;
    EXPECT_EQ(w.method_of, held.method_of) << what;
    EXPECT_EQ(w.total_links, held.total_links) << what;
    EXPECT_EQ(w.served_per_step, held.served_per_step) << what;
    EXPECT_EQ(w.unserved, held.unserved) << what;
    EXPECT_EQ(w.masked, held.masked) << what;
    EXPECT_GT(w.total_links, 0) << what;
    // Every link's source point lies in the window the rank read, but those of points whose
    // nearest search was run again on more rows, or that creep fill took from other blocks.
    const bool searches = c.stack.find("nearest") != std::string::npos ||
                          c.stack.find("creep") != std::string::npos ||
                          c.stack.find("bi") != std::string::npos ||
                          c.stack.find("gaussian") != std::string::npos ||
                          c.options.find("fracnnei") != std::string::npos;
    for (int64_t s : w.links.src) {
      const bool inside = s >= parts.src_first && s < parts.src_first + parts.src_points;
      if (!searches) {
        EXPECT_TRUE(inside) << what << ": source point " << s;
      }
      searched_again = searched_again || !inside;
    }
    // Less than the whole source on some rank once the destination is cut in 3 or more bands.
    int64_t least = parts.src_points;
    MPI_Allreduce(MPI_IN_PLACE, &least, 1, MPI_INT64_T, MPI_MIN, MPI_COMM_WORLD);
    if (world_size() >= 3) {
      EXPECT_LT(least, src.size()) << what;
    }
    if (world_rank() == 0) {
      const auto a = file_contents(dir / "held.nc"), b = file_contents(dir / "parts.nc");
      EXPECT_EQ(a.size(), b.size()) << what;
      for (const auto& [name, bytes] : a) {
        const auto it = b.find(name);
        ASSERT_NE(it, b.end()) << what << ": " << name;
        EXPECT_TRUE(it->second == bytes) << what << ": " << name << " differs";
      }
    }
  }
  if (world_size() >= 3) {
    int again = searched_again ? 1 : 0;
    MPI_Allreduce(MPI_IN_PLACE, &again, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    EXPECT_EQ(again, 1) << "no point was searched again: the second search went untested";
  }
}
