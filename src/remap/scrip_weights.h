// SCRIP remapping files (NetCDF): the parallel reader of their links, and a serial writer.
//
// A SCRIP file holds a sparse matrix as a list of links: link l maps source point
// src_address[l] to destination point dst_address[l] (both 1-based) with the weights
// remap_matrix(l, 0 .. num_wgts). The reader never holds the whole file on one rank: rank k of P
// reads links [k*L/P, (k+1)*L/P) with hyperslab reads, so that the links can travel on to the
// ranks that need them (through the xmap layer) with O(L/P) memory per rank.
#pragma once
#include <mpi.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <utility>
#include <string>
#include <vector>

#include "base/agreement.h"
#include "index/index_list.h"
#include "remap/grid.h"

namespace isthmus::remap {

// The header of a SCRIP file: the same on every rank.
struct WeightsInfo {
  std::string path;
  // Global attributes; "" when absent.
  std::string title, map_method, normalization, conventions;
  int64_t num_links = 0;
  int64_t src_grid_size = 0, dst_grid_size = 0;
  int num_wgts = 1;
  // The shape of each grid (e.g. {182, 149}); {grid_size} when the file has no *_grid_dims.
  std::vector<int64_t> src_grid_dims, dst_grid_dims;
};

// The links of the file's range [first_link, end_link) (0-based link numbers) that carry a
// contribution: the "null links" of the range (see read_scrip_weights) are left out, and counted.
// The links keep the file's order; first_link + i is an order key of link i (equal to its
// 0-based link number when no null link precedes it in the slab), unique and increasing in file
// order across all slabs, for a multiplication in the file's link order.
struct LinkSlab {
  int64_t first_link = 0, end_link = 0;
  int64_t null_links = 0;         // links of the range left out
  std::vector<int64_t> src, dst;  // 0-based global indices (the file's address - 1)
  std::vector<double> weights;    // num_wgts per link, link-major
  // Each link's 0-based number in the file, where the links are not one range of it
  // (read_links_of_destinations); empty: first_link + i as above.
  std::vector<int64_t> number;
  int64_t size() const { return static_cast<int64_t>(src.size()); }
};

// What the caller knows of the grids: a file whose sizes differ fails. -1: not checked.
struct WeightsExpect {
  int64_t src_grid_size = -1, dst_grid_size = -1;
};

// The links of the slab of `rank` of `nranks`: [rank*L/P, (rank+1)*L/P) (sizes within 1).
int64_t slab_begin(int64_t num_links, int rank, int nranks);

// The fewest links a reading rank reads (unless the file has fewer): a file of L links is read
// by min(P, ceil(L / min_slab_links)) ranks, spread evenly over comm (reader_index: so over the
// nodes, whose links then share the routing's first exchange), each its slab (slab_begin over
// the readers, in rank order); the other ranks hold no link. A small file so costs one or a
// few netCDF opens (about a millisecond of CPU each the first time in a process), not one per
// rank, and no rank holds more than max(L / P, min_slab_links) + 1 links. 2^15 links take a
// reader about as long to read as its first open (OASIS toy at 2+2 and 4+4 on 2 cores, 2 x 16
// interleaved runs: set-up 1.5-9 % below 2^14's medians; 2^16 and 2^17 slower at 4+4).
constexpr int64_t kMinSlabLinks = int64_t{1} << 15;

// The number of ranks that read a file of num_links links.
int readers_of(int64_t num_links, int nranks, int64_t min_slab_links = kMinSlabLinks);
// Which reader `rank` is (0 .. readers-1), or -1: reader j is rank floor(j * nranks / readers),
// so rank 0 is the first, and readers on consecutive ranks (the first nodes) are avoided. Taking
// the first ranks made the simulated coupler's set-up at 256 + 256 ranks (curie, 16 per node)
// 14.6 ms, 10.5 of it the routing's first exchange held by the first two nodes' links.
int reader_index(int rank, int nranks, int readers);

// Collective over comm: rank 0 opens the file (read-only), reads and checks its header and
// broadcasts it; the readers (readers_of) read their slabs of links in chunks, validating each
// link. Every rank returns the same *info and its own slab (empty on the other ranks).
//
// Errors (docs/errors.md): every check is local and goes through one agreement (the caller's
// `pending` one if given, which is concluded here: one reduction for the caller's checks and
// the file's), so a failure anywhere fails on every rank with the same code. ISTHMUS_ERR_ARG for
// the caller's own mistakes (info NULL, an empty path, expect below -1, a different path on some
// rank); ISTHMUS_ERR_FILE for the file: it cannot be opened (netCDF's reason), a
// variable or dimension is missing or has the wrong shape or type, an address is 0, negative or
// above its grid size, a weight is NaN or infinite, a grid size differs from `expect`. Each
// message names the file, the variable and, for a bad link, its 1-based link number and value.
// Null links: OASIS's SCRIP writes, for a destination point whose bilinear (or bicubic) stencil
// is incomplete, links with src_address 0 and weight 0 (639 of the 19,860 links of the ORCA2 ->
// LMDZ bilinear file). A link with an address 0 whose weights are all exactly 0 (and whose other
// address is 0 or valid) contributes nothing: it is left out, not an error. An address 0 with a
// non-zero weight is an error. A rank stops reading at its first bad link; since slabs are in
// rank order, the lowest failing rank holds the file's first bad link, and every rank's message
// names that one.
LinkSlab read_scrip_weights(MPI_Comm comm, const std::string& path, const WeightsExpect& expect,
                            WeightsInfo* info, Agreement* pending = nullptr);

// The same, reading at most chunk_links links per hyperslab read, with at least min_slab_links
// links per reader (tests use small chunks, and min_slab_links 1 for a slab on every rank).
LinkSlab read_scrip_weights_chunked(MPI_Comm comm, const std::string& path,
                                    const WeightsExpect& expect, WeightsInfo* info,
                                    Agreement* pending, int64_t chunk_links,
                                    int64_t min_slab_links = kMinSlabLinks);

// The links of this rank's destination points, each rank reading them straight from the file:
// the route a SCRIP file's links take to the ranks that multiply them on the destination side,
// without a slab per rank and a routing of every link (two exchanges through a directory). Each
// rank of comm opens the file, reads its header, finds the links of each run of `part` by
// searching dst_address (galloping, then bisection, through blocks of 1,024 addresses), as the
// file lists them when its links are ordered by destination (SCRIP, OASIS, CDO and isthmus
// write them so), and reads those ranges, keeping the links whose destination it holds.
// Collective: one reduction, which checks that every link of the file was taken by exactly one
// rank (a sum of a hash of the link numbers) and that every rank read the same header. Returns
// the rank's links (numbered by their place in the file) and *info on every rank, or
// std::nullopt on every rank when that does not hold: the links are not ordered by destination,
// a destination point belongs to no rank or to several, the file cannot be read or holds a bad
// link, `part` is null or of another grid size, or a part is scattered point by point (more
// than 64 ranges of links averaging under 32 links: reading them one by one would cost more
// than routing them). Then the caller reads slabs and routes them
// (read_scrip_weights), which also names whatever was wrong. Null links (see above) are left
// out as there.
std::optional<LinkSlab> read_links_of_destinations(MPI_Comm comm, const std::string& path,
                                                   const WeightsExpect& expect,
                                                   const IndexList* part, WeightsInfo* info);

// Writer of a SCRIP file, by every rank of a communicator together (remap/nc_out.h: with
// PnetCDF each rank writes its own slabs; otherwise rank 0 writes what each sends), or by one
// rank alone (the constructor without a communicator: MPI_COMM_SELF; e.g. a benchmark's synthetic
// matrix of 10^7 links). Streaming: links are appended in order, in any number of pieces, and
// never all held at once. Writes the dimensions src_grid_size, dst_grid_size, num_links,
// num_wgts (and src/dst_grid_rank with the src/dst_grid_dims variables), src_address and
// dst_address (1-based, int; int64 in CDF-5 format if a grid has 2^31 points or more),
// remap_matrix (double) and the attributes of `info`. It does not validate the links: tests
// write broken files with it.
// SCRIP's grid variables of a weights file (what SCRIP, OASIS and CDO write, and CDO's `remap`
// reads): {src,dst}_grid_center_lat/lon, _corner_lat/lon (when the grid has corners), _imask,
// _area, _frac, in radians; and isthmus's record of the interpolation stack: dst_grid_method
// (byte, per destination point: the 0-based step of `methods` that served it, -1 none) with the
// attribute `methods` (the stack, comma-separated). Which of them the file has is defined at
// construction (WeightsGridVariables); their values are written by slabs afterwards.
// Errors: every method is collective and ends with one agreement, so a failure on any rank
// throws the same isthmus::Error on every rank: ISTHMUS_ERR_FILE naming the file (netCDF's or
// PnetCDF's reason), ISTHMUS_ERR_ARG for sizes that disagree with the definitions.
struct WeightsGridVariables {
  const Grid* src = nullptr;  // the grids' names, dims, sizes and corners (not their points)
  const Grid* dst = nullptr;
  bool corners = true;        // the corner variables (when the grids have corners)
  // `src` and `dst` are headers only (name, dims, num_corners; no point), or not every point:
  // the grids are too large to hold, or each rank holds a part, and write_points writes the
  // points from elsewhere.
  bool headers_only = false;
  bool areas = false;         // the {src,dst}_grid_area variables
  bool fractions = false;     // the {src,dst}_grid_frac variables
  std::string methods;        // non-empty: dst_grid_method, with this `methods` attribute
  std::vector<std::pair<std::string, std::string>> attributes;  // more global attributes
};

class ParallelNcFile;

class ScripWeightsWriter {
 public:
  // Creates (overwrites) `path` for info.num_links links of info.num_wgts weights (info.path is
  // not used), with the grid variables `grids` defines (their sizes must be the info's).
  // Collective over comm: every rank passes the same info and definitions.
  ScripWeightsWriter(MPI_Comm comm, const std::string& path, const WeightsInfo& info,
                     const WeightsGridVariables* grids = nullptr);
  // This rank alone.
  ScripWeightsWriter(const std::string& path, const WeightsInfo& info,
                     const WeightsGridVariables* grids = nullptr);
  ~ScripWeightsWriter();  // closes the file (if close() was not called, it may be incomplete)
  ScripWeightsWriter(const ScripWeightsWriter&) = delete;
  ScripWeightsWriter& operator=(const ScripWeightsWriter&) = delete;

  // Appends n links of this rank: 0-based indices src[i], dst[i] and weights[i*num_wgts ..
  // (i+1)*num_wgts); after the links appended before, and after those of lower ranks in this
  // call (the file lists the ranks' links in rank order).
  void append(const int64_t* src, const int64_t* dst, const double* weights, int64_t n);
  void append(const int64_t* src, const int32_t* dst, const double* weights, int64_t n);
  // Closes the file; fails unless exactly num_links links were appended.
  void close();
  // The points [begin, begin + n) of side 0 (source) or 1 (destination): centres, corners (if
  // defined) and mask, taken from g, whose point 0 is the grid's point `first` (0 for a whole
  // grid, a slab's first point for a slab).
  void write_points(int side, const Grid& g, int64_t first, int64_t begin, int64_t n);
  // The areas (steradians) or fractions of side's points [begin, begin + n).
  void write_areas(int side, int64_t begin, int64_t n, const double* area);
  void write_fractions(int side, int64_t begin, int64_t n, const double* frac);
  // dst_grid_method of the destination points [begin, begin + n).
  void write_methods(int64_t begin, int64_t n, const int8_t* method);
  // Whether the ranks write their own slabs (PnetCDF) or send them to rank 0.
  bool parallel() const;

 private:
  template <typename DstIndex>
  void append_links(const int64_t* src, const DstIndex* dst, const double* weights, int64_t n);
  void define_grid_variables(const WeightsGridVariables& g, int src_size, int dst_size);
  void write_values(int side, int var, const char* what, int64_t begin, int64_t n, const double* v);
  struct GridVars {  // a side's variable ids (-1: not in the file)
    int lat = -1, lon = -1, clat = -1, clon = -1, imask = -1, area = -1, frac = -1, corners = 0;
  };
  MPI_Comm comm_;
  std::string path_;
  WeightsInfo info_;
  std::unique_ptr<ParallelNcFile> file_;
  GridVars grid_vars_[2];
  int method_var_ = -1;
  int src_var_ = -1, dst_var_ = -1, matrix_var_ = -1;
  int64_t written_ = 0;
};

// Writes a whole file at once: src, dst hold info.num_links links, weights num_wgts per link.
void write_scrip_weights(const std::string& path, const WeightsInfo& info,
                         const std::vector<int64_t>& src,
                         const std::vector<int64_t>& dst, const std::vector<double>& weights);

}  // namespace isthmus::remap
