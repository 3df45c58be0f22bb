// Weight generation (issue 15): an interpolation stack of methods, each serving the destination
// points it can and passing the others on to the next.
//
// A method is built for one (source grid, destination grid) pair and asked for the links of a
// list of destination points. It appends, for every point it serves, that point's links (all
// of them consecutive, in a fixed order that depends only on the two grids and the options, never
// on which other points were asked for or in what batch), and lists the points it leaves. So
// results are the same bits whatever the number of ranks that share the destination points.
#pragma once
#include <mpi.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "remap/grid.h"
#include "remap/sphere.h"

namespace isthmus::remap {

// GenLinks' destination indices are 32 bits: a destination grid of 2^31 points or more is
// ISTHMUS_ERR_ARG, naming the grid (every driver checks it first).
void check_destination_size(const Grid& dst);
void check_destination_size(const std::string& name, int64_t size);

// Links in the making: num_wgts weights per link, link-major (as SCRIP's remap_matrix).
struct GenLinks {
  int num_wgts = 1;
  // 0-based grid indices. The destination grid is always held whole, so its indices fit 32 bits
  // (generation refuses a destination of 2^31 points or more); a streamed source may not.
  std::vector<int64_t> src;
  std::vector<int32_t> dst;
  std::vector<double> w;
  // (destination point, covered fraction): methods that know the fraction of a served point's
  // cell that active source cells cover (conservative) record it here; SCRIP's dst_grid_frac
  // is that fraction, or 1 for points served by other methods.
  std::vector<std::pair<int64_t, double>> frac;
  // (destination point, cell area): areas a method computed (conservative: the area its weights
  // are normalised by), which the file's dst_grid_area takes instead of computing them again.
  std::vector<std::pair<int64_t, double>> area;
  // (destination point, radius in radians), recorded when want_reach is set: methods whose
  // answer for a point depends on every source point within a distance of it (a nearest
  // search: its n-th distance; +inf when it found fewer than it asked for) record that
  // distance for each point they searched for, served or left; the points of other methods
  // depend only on the source cells their band reaches. Grids read in parts search again, on
  // more source rows, a point whose radius reaches beyond the rows a rank holds.
  bool want_reach = false;
  std::vector<std::pair<int64_t, double>> reach;
  int64_t size() const { return static_cast<int64_t>(src.size()); }
  // Room for `more` links after `done` of `total` points (or slabs' points): the links held so
  // far projected over all of them, plus a sixteenth, so that arrays filled piece by piece grow
  // a few times by little, neither once per piece (reserving what each needs copies them all
  // every time) nor by doubling (up to twice the links' memory reserved, and three times one
  // array's while it moves: the streamed source's peak, docs/results/weights.md).
  void reserve_projected(int64_t more, int64_t done, int64_t total) {
    const size_t need = static_cast<size_t>(size() + more);
    if (need <= src.capacity() && need <= dst.capacity()) return;
    const double per_point = double(size() + more) / double(done > 1 ? done : 1);
    const size_t projected = static_cast<size_t>(per_point * double(total) * 1.0625);
    reserve_links(need > projected ? need : projected);
  }
  // Room for `more` links beyond those held: exactly, when the arrays are empty (a method asked
  // for all its points at once), else at least doubling them, so that a method called batch by
  // batch on the same links never copies them once per batch. (Untouched reserved memory is not
  // resident: an upper bound costs nothing where links are fewer.)
  void reserve_more(int64_t more) {
    const size_t need = src.size() + static_cast<size_t>(more);
    if (need <= src.capacity()) return;
    reserve_links(src.capacity() == 0 || need > 2 * src.capacity() ? need : 2 * src.capacity());
  }
  // Room for `links` links in all three arrays.
  void reserve_links(size_t links) {
    src.reserve(links);
    dst.reserve(links);
    w.reserve(links * static_cast<size_t>(num_wgts));
  }
  void add(int64_t s, int64_t d, double weight) {
    src.push_back(s);
    dst.push_back(static_cast<int32_t>(d));
    w.push_back(weight);
  }
  void add(int64_t s, int64_t d, const double* weights) {
    src.push_back(s);
    dst.push_back(static_cast<int32_t>(d));
    w.insert(w.end(), weights, weights + num_wgts);
  }
};

class WeightMethod {
 public:
  virtual ~WeightMethod() = default;
  // The method's name as written to the file's map_method attribute and the per-point record
  // (e.g. "nearest", "bilinear", "conservative").
  virtual std::string name() const = 0;
  // Weights per link (3 for second-order conservative, 1 otherwise).
  virtual int num_wgts() const { return 1; }
  // todo: active destination points, ascending. Appends to *out the links of each point served
  // (out->num_wgts == num_wgts()), and to *unserved the points of todo it does not serve, in
  // todo's order. A point served with no link (e.g. a fixed value) is not possible: a method
  // that cannot give a point a weighted sum of active source points leaves it unserved.
  virtual void compute(const std::vector<int64_t>& todo, GenLinks* out,
                       std::vector<int64_t>* unserved) const = 0;
};

// Options shared by the methods; each documents which it reads.
struct GenOptions {
  int num_neighbours = 4;         // nearest, gaussian: n (OASIS DISTWGT/GAUSWGT's NVOISIN)
  double gaussian_variance = 1.0; // gaussian: OASIS GAUSWGT's VAR: sigma^2 = VAR * dm^2, dm
                                  // the mean distance between consecutive source points (OASIS)
  // conservative: "destarea", "fracarea" or "fracnnei" (OASIS CONSERV's normalisations).
  std::string normalization = "fracarea";
  int conservative_order = 1;     // 1 or 2 (2: three weights per link)
  // OASIS's SCRIPR mask rules ("masks=oasis"; the coupler's SCRIPR entries set it), so that a
  // relinked OASIS3-MCT model receives what SCRIP's weights give it. nearest and gaussian take
  // the n nearest source points, masked or not, and weigh the active ones among them; when all
  // n are masked, the nearest active point alone, with weight 1 (SCRIP's remap_distwgt and
  // remap_gauswgt). A stack beginning with conservative serves the masked destination points
  // too (SCRIP's remap_conserv applies the source mask only: "the grid1 mask is the master
  // mask"). Otherwise ("masks=isthmus", the default) masked source points never enter a search
  // and masked destination points get no link. bilinear and bicubic are the same either way.
  bool oasis_masks = false;
};

// Options from "key=value" words separated by spaces (the C API's and the command line's
// form): normalization=destarea|fracarea|fracnnei, neighbours=N (or neighbors), variance=V,
// order=1|2, masks=isthmus|oasis. Errors: ISTHMUS_ERR_ARG naming the word.
GenOptions parse_gen_options(const std::string& text);

// DISTWGT's weights of a point's neighbours (ids and great-circle distances, nearest first,
// ties by index): 1/d normalised, or weight 1 alone for a first neighbour closer than 1e-12
// radians (the lists are then cut to it). False when there is no neighbour. The held and the
// streamed nearest methods both weigh with it.
bool distwgt_weights(std::vector<int64_t>& ids, std::vector<double>& dist, std::vector<double>* w);
// GAUSWGT's: exp(-(d² - d0²)/(2σ²)) normalised (make_gaussian); 2σ² = 2 · VAR · dm² from the
// options' variance (ISTHMUS_ERR_ARG unless positive and finite) and dm, the mean great-circle
// distance between consecutive source points in storage order (the last followed by the
// first), summed in that order by add_consecutive_distance (pairs with a non-finite coordinate
// left out).
bool gauswgt_weights(double two_sigma2, std::vector<int64_t>& ids, std::vector<double>& dist,
                     std::vector<double>* w);
double gauswgt_two_sigma2(const GenOptions& o, double mean_distance);
// Collective: that mean distance dm of a source read in slabs, the ranks adding their even
// shares' pairs in turn (the bits of one pass in storage order, as the source held whole).
double mean_consecutive_distance(MPI_Comm comm, const GridSlabs& src, int64_t slab_points);
void check_gaussian_variance(const GenOptions& o);
// What the held and the streamed neighbour searches both require (ISTHMUS_ERR_ARG naming the
// method): at least 1 neighbour, and the destination's latitudes as many as its points.
void check_neighbour_search(const std::string& method, const GenOptions& o, const Grid& dst);
// SCRIP's map_method and normalization attributes of a weights file whose (first) method is
// `method` (isthmus's name), as SCRIP, OASIS and CDO write them: FRACNNEI is "fracarea" there,
// the only word CDO accepts besides destarea and none.
const char* scrip_map_method(const std::string& method);
const char* scrip_normalization(const std::string& method, const GenOptions& o);
void add_consecutive_distance(double lon1, double lat1, double lon2, double lat2, double* sum,
                              int64_t* count);

// The least and greatest latitude (radians) of the listed points of g that have finite
// coordinates: a rank's block's band (the methods' dst_points). False when none has, or when
// one lies beyond a pole (|lat| > π/2, where latitude does not order positions).
bool latitude_range(const Grid& g, const std::vector<int64_t>& points, double* lo, double* hi);

// The methods (each in its own source file). src and dst must outlive the method.
std::unique_ptr<WeightMethod> make_nearest(const Grid& src, const Grid& dst, const GenOptions& o);
// rows (make_gaussian): src is a window of the source, whose mean spacing rows->mean_distance
// gives (mean_consecutive_distance).
struct SourceRows;
std::unique_ptr<WeightMethod> make_gaussian(const Grid& src, const Grid& dst, const GenOptions& o,
                                            const SourceRows* rows = nullptr);
// What a window of whole rows of a source (grids read in parts) cannot tell of the whole
// grid: for gaussian, its mean spacing; for bilinear and bicubic, whether the grid's rows close the circle
// (decided on its rows ny/4, ny/2 and 3ny/4: bilinear_row_closes), and whether the window's
// first (last) row is the grid's, next to a pole cap that pole quads may cover.
struct SourceRows {
  bool periodic = true;
  bool first = true, last = true;
  double mean_distance = 0;  // gaussian: the whole source's (mean_consecutive_distance)
};
// dst_points: the destination points compute() will be asked for (any when null); bilinear,
// bicubic and conservative then prepare only the source quads or cells that can reach them.
// rows: src is a window of whole rows of a larger grid (null: src is the whole grid).
std::unique_ptr<WeightMethod> make_bilinear(const Grid& src, const Grid& dst, const GenOptions& o,
                                            const std::vector<int64_t>* dst_points = nullptr,
                                            const SourceRows* rows = nullptr);
std::unique_ptr<WeightMethod> make_bicubic(const Grid& src, const Grid& dst, const GenOptions& o,
                                           const std::vector<int64_t>* dst_points = nullptr,
                                           const SourceRows* rows = nullptr);
// Whether the row of nx points of g from point `first` closes the circle (periodic in i: its
// longitudes turn once around, and its closing step is no longer than twice its longest).
bool bilinear_row_closes(const Grid& g, int64_t first, int64_t nx);
// The largest distance (radians, with a margin for rounding) between two corners of a quad
// between two rows of nx points (their unit vectors; a non-finite one leaves its quads out): a
// point inside a quad lies within it of each of its corners, so the rows of the quads that may
// hold a point lie within it in latitude.
double bilinear_quad_reach(const Vec3* lower, const Vec3* upper, int64_t nx);
std::unique_ptr<WeightMethod> make_conservative(const Grid& src, const Grid& dst,
                                                const GenOptions& o,
                                                const std::vector<int64_t>* dst_points = nullptr);
// Where a conservative method prepared for the destination points `points` of dst looks for
// source cells: the band of latitudes [lo, hi] (radians) their cells can overlap; false when it
// looks everywhere (a cell whose cap it cannot bound, or no point). And the latitudes [lo, hi]
// source cell c can reach; false when its cap is unbounded (the method then builds it whatever
// the band). A source cell enters the search when its reach meets the band.
bool conservative_band(const Grid& dst, const std::vector<int64_t>& points, double* lo, double* hi);
bool conservative_reach(const Grid& src, int64_t c, double* lo, double* hi);

}  // namespace isthmus::remap

// ---------------------------------------------------------------------------------------------
// The driver: an interpolation stack over MPI ranks.

namespace isthmus::remap {

// One step of the stack, parsed from the option string "conservative,bilinear,creep,fixed=0":
// a method (nearest|distwgt, gaussian|gauswgt, bilinear, bicubic, conservative|conserv);
// "creep[=ROUNDS]" (YAC's creep fill: in rounds, an unserved active point next to served ones
// takes the mean of their links, so values spread from the served points across masked regions;
// at most ROUNDS rounds, no limit by default); or "fixed[=VALUE]" (the points left get no link;
// the file records that they were left to the fixed value), which ends the stack.
struct StackStep {
  std::string name;        // the canonical name: nearest, gaussian, bilinear, bicubic,
                           // conservative, creep, fixed
  double fixed_value = 0;  // fixed only
  int rounds = 0;          // creep only: 0 = until no point is left
};
// Errors: ISTHMUS_ERR_ARG naming the word that is not a method, an empty stack, a step after
// "fixed", a malformed value.
std::vector<StackStep> parse_stack(const std::string& stack);
std::string stack_string(const std::vector<StackStep>& steps);
// Whether a step of the stack (the option string, as parse_stack reads it) needs the cells'
// corners (conservative); the others read only the grids' centres (read_grid's with_corners).
bool stack_needs_corners(const std::string& stack);

// What one rank computed: the links of its block [dst_begin, dst_end) of the destination grid,
// sorted by destination point (the links of a point in the order its method gave them).
struct GeneratedWeights {
  std::vector<StackStep> stack;
  GenOptions options;
  int64_t dst_begin = 0, dst_end = 0;
  GenLinks links;
  std::vector<int8_t> method_of;  // per point of the block: the step that served it, -1 none
                                  // (masked points, and points no step served)
  // Totals over all ranks (the same on every rank):
  int64_t total_links = 0;
  std::vector<int64_t> served_per_step;  // active destination points each step served
  int64_t unserved = 0;                  // active destination points no step served
  int64_t masked = 0;                    // masked destination points
  std::vector<double> seconds_per_step;  // the slowest rank's time in each step
};

// Collective over comm: every rank holds both grids (as read), takes a block of the
// destination points (equal numbers of active points per rank, in index order) and runs the
// stack on it. Every point's links depend only on the grids and the options, so the links are
// the same bits at any number of ranks. Errors (a method that cannot be built, e.g. bilinear on
// an unstructured source or conservative without corners) are agreed: every rank throws the
// same isthmus::Error.
// progress (may be empty) is called on every rank now and then with the fraction of its block
// done (0 to 1), for a progress bar; methods are called on batches of points for it.
GeneratedWeights generate_weights(MPI_Comm comm, const Grid& src, const Grid& dst,
                                  const std::string& stack, const GenOptions& options,
                                  const std::function<void(double)>& progress = {});

// Collective over comm: writes the links of every rank, in rank order (so in destination order),
// to a SCRIP file, with SCRIP's grid variables and the record of which step served each
// destination point: each rank writes the values of its block of destination points and of its
// share of the source points (ScripWeightsWriter: in parallel with PnetCDF, else through rank 0).
// The file is written as path + ".tmp.<pid>" and renamed when complete, so that a run stopped
// while writing never leaves a file that looks valid. `key` (weights_key) is written as the
// global attribute isthmus_weights_key when not empty.
void write_generated_weights(MPI_Comm comm, const std::string& path, const Grid& src,
                             const Grid& dst, const GeneratedWeights& w,
                             const std::string& key = "");

// ---------------------------------------------------------------------------------------------
// Grids read in parts (docs/weights.md, "Grids read in parts"): instead of both grids whole,
// each rank reads its block of the destination and the rows of the source its block can reach:
// those whose cells' caps meet its band of latitudes (conservative), the pairs of rows whose
// quads may contain its points (bilinear, bicubic: SourceRows tells them what the window cannot),
// those within a margin of it (nearest searches); a point whose nearest search reached farther
// than the rows held (GenLinks::reach) is searched again on the rows that hold every point
// within its radius. Every stack runs so: gaussian takes its scale from the whole source's
// mean spacing (summed by the ranks in turn), creep fill the destination's centres and mask
// (read whole, without corners).

// Collective over comm: GridSlabs(spec) on every rank, its errors (a file missing on one
// node's file system, say) agreed, so that no rank is left waiting in the next collective.
GridSlabs open_grid_slabs(MPI_Comm comm, const std::string& spec);

// What a rank holds of the grids read in parts.
struct GridParts {
  Grid src_header, dst_header;  // name, source, dims, num_corners; no point
  int64_t src_size = 0, dst_size = 0;
  Grid dst;                     // this rank's block: destination points [dst_first, + size)
  int64_t dst_first = 0;
  int64_t src_first = 0;         // its window of the source: points [src_first, + src_points),
  int64_t src_points = 0;        // whole rows (held only while the stack runs)
};

// Collective over comm: the same blocks, the same links (bits) and the same totals as
// generate_weights on the grids read whole, each rank reading (into *parts) only its block of
// the destination (with an even share of its centres and mask, to agree on the blocks) and
// the source rows its block can reach (after a pass in which each rank reads an even share of
// the source to find the latitudes each row's points and cells reach); the source rows are
// freed before it returns, and those read again for points searched again are held only while
// they are searched. Errors: as generate_weights's.
GeneratedWeights generate_weights_in_parts(MPI_Comm comm, const GridSlabs& src,
                                           const GridSlabs& dst, const std::string& stack,
                                           const GenOptions& options, GridParts* parts,
                                           const std::function<void(double)>& progress = {});
// Collective: writes the file as write_generated_weights, the source's variables
// of each rank's even share read from the grid file apart.
void write_weights_in_parts(MPI_Comm comm, const std::string& path, const GridSlabs& src,
                            const GridParts& parts, const GeneratedWeights& w,
                            const std::string& key = "");

// ---------------------------------------------------------------------------------------------
// Conservative weights from a source too large to hold (81 M cells): the source streamed from
// its SCRIP grid file in slabs of points, the destination held whole (docs/weights.md).
//
// Each rank takes a contiguous range of source points and reads it slab by slab; per slab the
// conservative method runs with the roles swapped (the destination grid indexed as its
// "source", the slab's cells as its "destinations", DESTAREA), which gives every overlap's
// area; the links are kept as (source, destination, area). The destination totals are summed in
// source order across the ranks (a pipeline, so the same bits as on one rank), then the areas
// become weights (normalization fracarea, destarea, or fracnnei: uncovered active destination
// points take their nearest active source point, found in a second pass over the slabs). Links
// stay in source order. Only "conservative" (first order) streams.
struct StreamedWeights {
  std::string method = "conservative";  // or "nearest" (generate_streamed_nearest)
  GenOptions options;
  int64_t src_begin = 0, src_end = 0;  // this rank's source points
  GenLinks links;                      // this rank's links, in source order
  // What each destination point's overlap areas were divided by to become weights (its cell's
  // area with destarea, else the area covered; 0 where nothing covers it): a link's overlap is
  // its weight times this, from which the writer sums the source cells' covered fractions
  // slab by slab instead of their being held for every source point.
  std::vector<double> dst_norm;
  std::vector<double> dst_frac;        // every destination point's covered fraction
  std::vector<double> dst_area;        // every destination cell's area (for the file)
  std::vector<int8_t> dst_method;      // nearest: per destination point 0 (served) or -1
  int64_t total_links = 0, served = 0, unserved = 0, masked = 0, nearest_filled = 0;
  double seconds = 0;                  // the slowest rank's computation
};
StreamedWeights generate_streamed_conservative(MPI_Comm comm, const GridSlabs& src,
                                               const Grid& dst, const GenOptions& options,
                                               int64_t slab_points,
                                               const std::function<void(double)>& progress = {});
// The n nearest active source points of every destination point (method "nearest": DISTWGT;
// "gaussian": GAUSWGT; GenOptions's num_neighbours) from a source streamed in slabs, against a
// destination held whole: each rank
// reads its range of the source slab by slab, indexes each slab's active points and asks it for
// every active destination point's n nearest, keeping the first n by (distance, index); the
// ranks' lists are merged in rank order (a pipeline; the order cannot change the result, which
// is the first n of the whole source by (distance, index)), and rank r weighs the r-th block of
// the destination points, so the links are in destination order, the same bits as the source
// held whole (make_nearest, make_gaussian) at any rank count and slab size. Gaussian first
// sums the mean distance between consecutive source points over the ranks in turn (one pass in
// storage order, as the held path). Every rank holds n (distance, index) pairs per destination
// point: for destinations held whole. Not GenOptions::oasis_masks.
StreamedWeights generate_streamed_neighbours(MPI_Comm comm, const GridSlabs& src,
                                             const Grid& dst, const std::string& method,
                                             const GenOptions& options, int64_t slab_points,
                                             const std::function<void(double)>& progress = {});
// Writes the file (temporary name, renamed when complete), every rank its share
// (ScripWeightsWriter: in parallel with PnetCDF, else through rank 0): a block of the
// destination's variables; the source's of its range, slab by slab, each read from the grid file
// with its areas and covered fractions; its links, after those of the lower ranks.
void write_streamed_weights(MPI_Comm comm, const std::string& path, const GridSlabs& src,
                            const Grid& dst, const StreamedWeights& w, int64_t slab_points);

// A cell's area from its corners (steradians; repeated corners dropped; 0 without corners; trig:
// a cache of the corners' sines and cosines, for cells asked for in index order), and every
// cell's, each rank computing a slice, gathered on every rank of comm.
double cell_area(const Grid& g, int64_t c, TrigCache* trig = nullptr);
std::vector<double> cell_areas(const Grid& g, MPI_Comm comm);

class ScripWeightsWriter;
struct WeightsInfo;
struct WeightsGridVariables;
// Collective: writes the SCRIP file `path` under a temporary name (path + ".tmp." + rank 0's
// process id), so that a run stopped while writing never leaves a file that looks valid:
// grid_values writes the grid variables (every rank its part), then every rank's links are
// appended in rank order, and the complete file is renamed to path. Any failure is agreed on
// every rank and rethrown, the temporary file removed.
void write_weights_file(MPI_Comm comm, const std::string& path, const WeightsInfo& info,
                        const WeightsGridVariables& vars, const GenLinks& links,
                        const std::function<void(ScripWeightsWriter&)>& grid_values);

// The cache of generated weights (OASIS's SCRIPR, isthmus_weights_generate): a hash of both grids
// (shapes, centres, corners, masks), the stack and the options, as 16 hex digits. Its callers
// read the corners only for stacks that need them (stack_needs_corners), so the key of other
// weights does not depend on them.
std::string weights_key(const Grid& src, const Grid& dst, const std::string& stack,
                        const GenOptions& options);

// What is at a weights file's path (checked by the calling rank alone).
enum class CachedWeights { Missing, Foreign, Ours };
// Foreign: a file without isthmus_weights_key (made by OASIS, CDO, ...); *key its key if Ours.
CachedWeights cached_weights(const std::string& path, std::string* key);

// Collective over comm: the weights file at `path` for the grids src_spec and dst_spec
// (read_grid's specifications), stack and options, generated and written unless a file made by
// isthmus for the same key, or a file made by another tool, is already there (as OASIS, which
// uses an existing file of the name it would write). Returns true if it generated the file.
// The grids are read only when needed: by rank 0 alone, whole, for the key (corners only for
// stacks that need them), and, to generate on more than one rank, in parts
// (generate_weights_in_parts: no rank holds both grids whole meanwhile). A grid rank 0 cannot
// read is passed to `explain` (if given), which may throw it again with the caller's context;
// the error is agreed on every rank.
bool ensure_weights_file(MPI_Comm comm, const std::string& path, const std::string& src_spec,
                         const std::string& dst_spec, const std::string& stack,
                         const GenOptions& options,
                         const std::function<void(const std::exception&)>& explain = {});

}  // namespace isthmus::remap
