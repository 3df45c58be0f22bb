// A mapping applies a sparse matrix (links: destination point d receives the sum over its links
// of weight * source value) between two decompositions, fused with the transfer: the source
// values each destination rank needs travel in one redistribution (one message per peer for all
// fields and levels), and the destination multiplies. This is OASIS3-MCT's "bfb" (destination
// side) mapping in one communication phase instead of two.
//
// Bit-for-bit: every destination point sums its links in the order of their global link number
// (the file's order), starting from the first product, so the result is identical for any rank
// counts and decompositions on both sides.
#pragma once
#include <mpi.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "base/agreement.h"
#include "collectives/global_sum.h"
#include "index/index_list.h"
#include "remap/scrip_weights.h"
#include "transfer/redist.h"
#include "xmap/xmap.h"

namespace isthmus::remap {

// Links held by a rank, in any distribution over the ranks (a slab of a file, or whatever the
// caller has): the mapping routes each link to the ranks that need it.
struct Links {
  int num_wgts = 1;
  // global link number (the summation order), distinct over ranks; empty: link k's number is
  // first_number + k (a file's slab, numbered in file order, needs no array for it)
  std::vector<int64_t> number;
  int64_t first_number = 0;
  std::vector<int64_t> src;      // 0-based source index
  std::vector<int64_t> dst;      // 0-based destination index
  std::vector<double> weights;   // num_wgts per link, link-major
  size_t size() const { return src.size(); }
  int64_t number_of(size_t k) const { return number.empty() ? first_number + static_cast<int64_t>(k) : number[k]; }
};

// The links of a weights file's slab, numbered in file order (first_link + position: distinct
// over the ranks and increasing along the file, which is all the summation order needs).
Links links_of(const LinkSlab& slab, int num_wgts);
// The same, taking the slab's arrays instead of copying them (a set-up touches fresh memory at
// about 2.6 GB/s: a copy of a large slab costs milliseconds).
Links links_of(LinkSlab&& slab, int num_wgts);
// The same with only the first of each link's num_wgts weights: what a coupler's mapping
// applies, its put taking one array per field. SCRIP's conservative files carry 3 weights per
// link (the 2nd and 3rd multiply the gradients of second-order remapping), and OASIS3-MCT,
// given no gradients (oasis_put without fld2..), applies the first alone.
Links first_weights_of(LinkSlab&& slab, int num_wgts);

enum class Side { Dst = 0, Src = 1, Auto = 2 };
const char* side_name(Side s);

// The destination side's node stage (MappingOptions::node_stage).
enum class NodeStage { Auto = 0, Off = 1, On = 2 };
const char* node_stage_name(NodeStage s);

// The first half of a mapping's set-up, for a caller that knows which side multiplies (Dst or
// Src, not Auto): the links are held by that side's ranks only (they read the weights file) and
// are routed among them, over the side's own communicator, to the ranks whose part holds each
// link's point on that side (on the source side, the lowest such rank). Nothing crosses to the
// other side, so two components can prepare their mappings at the same time; the Mapping
// constructor that takes the result needs the pair's communicator only for its agreement and
// the redistribution: the rows are already in the mapping's compressed form. Collective over
// side_comm; part may be null (a rank without points); the mapping must be given the same part.
// A failure (bad arguments, a link out of range) is not thrown here: every rank of the side
// keeps it in `failure`, and the Mapping constructor's agreement raises it on every rank of the
// pair, so that the other side is not left waiting.
struct PreparedLinks {
  bool prepared = false;   // by prepare_links (ranks of the other side pass a default object)
  Side side = Side::Dst;
  int nw = 1;              // weights per link
  int64_t unused_links = 0;  // over the side: links whose point no rank holds
  // This rank's rows in link order, compressed: row r's entries are [row_start[r],
  // row_start[r + 1]) of col and w (nw each). Destination side: a row per local destination
  // point, col a position in staged (the source points it needs, sorted); source side: a row
  // per destination point in staged (those its links reach, sorted), col a local source position.
  std::vector<int64_t> row_start, col, staged;
  std::vector<double> w;
  std::optional<Error> failure;
  // the links were read by the ranks of their destination points (prepare_own_links), not
  // routed to them: MappingInfo reports it
  bool read_by_destination = false;
};
PreparedLinks prepare_links(MPI_Comm side_comm, Side side, const IndexList* part,
                            int64_t src_grid_size, int64_t dst_grid_size, const Links& links);
// The same on the destination side where each rank already holds the links of its own
// destination points and no others (read_links_of_destinations): no communication, and no link
// unused. A link of another rank's point is ISTHMUS_ERR_INTERNAL.
PreparedLinks prepare_own_links(const IndexList& part, int64_t src_grid_size, const Links& links);
PreparedLinks prepare_own_links(const IndexList& part, int64_t src_grid_size, Links&& links);  // taking its arrays

struct MappingOptions {
  Side side = Side::Dst;
  Method method = Method::Auto;   // how the redistribution moves its messages
  std::vector<int> nlevels = {1}; // one entry per field (fields are double)
  bool keep_unmapped = false;     // destination points without a link: keep their value ...
  double fill_value = 0.0;        // ... or receive this one
  // false: the two-phase path OASIS3-MCT takes, kept as the reference that tests and the
  // benchmark compare against: the source values are rearranged within the source ranks (to
  // blocks of the destination grid), multiplied there, and the results transferred to the
  // destination decomposition. Not with keep_unmapped.
  bool fused = true;
  // Destination side (fused): a source value that several destination ranks of one node need
  // crosses the network once, to one of them, which passes it on to the others in a
  // second exchange within the node (node-aware communication: Bienz, Gropp and Olson, "Node
  // aware sparse matrix-vector multiplication", JPDC 2019). Without it each of those ranks
  // receives its own copy, and the source nodes' links carry every copy: the bottleneck when
  // few nodes hold the source (docs/results/mapping.md). Auto: on when the mapping's ranks span
  // more than one node and the stage cuts the values sent to the destination ranks by at
  // least a fifth (over all ranks); Off/On force it. The results are the same bits either way.
  // The unfused reference and the source side never use it.
  NodeStage node_stage = NodeStage::Auto;
  // The nodes of the node stage: 0, the ranks that share memory (MPI_COMM_TYPE_SHARED);
  // k > 0, consecutive groups of k ranks of the mapping's communicator (tests on one host).
  int node_ranks = 0;
  // This rank's source mask, one per local source point (nonzero = active, SCRIP's convention;
  // empty: all active). Links from masked source points are dropped at creation, so they
  // contribute nothing (a destination point left without links is unmapped). Given on every
  // rank with source points, or on none.
  std::vector<int> src_mask;
};

struct MappingInfo {
  Side side = Side::Dst;
  int64_t local_links = 0;       // links this rank applies
  int64_t needed_points = 0;     // source points this rank receives (dst side)
  bool node_stage = false;       // dst side: the needed points come through the node stage
  int64_t first_points = 0;      // node stage: points this rank receives for its node (the
                                 // first exchange); the rest come from its node's ranks
  int64_t partial_points = 0;    // partial sums this rank sends (src side)
  int64_t dst_side_values = -1;  // auto: values per level the dst side would move (all ranks)
  int64_t src_side_values = -1;  // auto: values per level the src side would move
  int64_t unmapped_points = 0;   // local destination points without a link
  int64_t global_unused_links = 0;  // links whose destination no rank holds (all ranks)
  bool links_read_by_destination = false;  // this rank's links came straight from the file
                                           // (read_links_of_destinations), not routed
};

// OASIS3-MCT's CONSERV corrections, applied to every field and level after the mapping, with
// S = sum over active points of value * area and W = sum of active areas, on each side:
//   GLOBAL  dst -= (Sd - Ss) / Wd              (the source integral, restored additively)
//   GLBPOS  dst *= Ss / Sd                     (multiplicatively: signs are kept)
//   BASBAL  dst -= (Sd - Ss * Wd / Ws) / Wd    (GLOBAL, scaled by the ratio of active areas)
//   BASPOS  dst *= (Ss / Sd) * (Wd / Ws)
// on active destination points only. The sums use the collectives layer's global sums.
enum class Conserv { None = 0, Global = 1, Glbpos = 2, Basbal = 3, Baspos = 4 };
const char* conserv_name(Conserv c);

struct Conservation {
  Conserv type = Conserv::None;
  GlobalSumMethod method = GlobalSumMethod::Reprosum;
  std::vector<double> src_area, dst_area;  // per local point of each part (empty without one)
  std::vector<int> src_mask, dst_mask;     // nonzero = active (SCRIP's convention); empty: all
};

class Mapping {
 public:
  // Collective over comm, the ranks of both decompositions (src/dst may be null on a rank).
  // The caller's local checks may already be in `agreement`; the constructor adds its own and
  // concludes it over comm before any communication (docs/errors.md).
  Mapping(MPI_Comm comm, const IndexList* src, const IndexList* dst, int64_t src_grid_size,
          int64_t dst_grid_size, const Links& links, const MappingOptions& opt,
          Agreement& agreement);
  // The same from links prepared by the side that multiplies (prepare_links; opt.side must be
  // theirs and the mapping fused); the other side's ranks pass a default PreparedLinks.
  Mapping(MPI_Comm comm, const IndexList* src, const IndexList* dst, int64_t src_grid_size,
          int64_t dst_grid_size, PreparedLinks&& prepared, const MappingOptions& opt,
          Agreement& agreement);
  // Several mappings over one communicator built together (a coupler's entries between the
  // same two components): their agreements concluded in one reduction (each request's own,
  // which may hold the caller's local checks; the first that fails throws, as if concluded in
  // turn), and the exchange maps of the same options made with one directory
  // (Xmap::build_together). From prepared links only, as the second constructor. Collective
  // over comm: every rank passes the same number of requests in the same order.
  struct Request {
    const IndexList* src = nullptr;
    const IndexList* dst = nullptr;
    int64_t src_grid_size = 0, dst_grid_size = 0;
    PreparedLinks prepared;
    MappingOptions opt;
    Agreement* agreement = nullptr;
  };
  static std::vector<std::unique_ptr<Mapping>> build_together(MPI_Comm comm, std::vector<Request>& requests);
  ~Mapping();
  Mapping(const Mapping&) = delete;
  Mapping& operator=(const Mapping&) = delete;

  // dst_fields[f][l * local_dst + p] = sum over the links of p of w * src value (level l).
  // With W weights per link (second-order conservative: W = 3), each field has W source arrays,
  // src_fields[f * W + j]: the field, then its companions (the gradients), and a link adds
  // w1 x1 + w2 x2 + w3 x3. On the source side a companion may be NULL: its term is left out
  // (all left out: the bits of the first weights alone); the destination side moves every
  // companion, so there each must be given. Ranks without a part pass NULL arrays. Collective
  // over the ranks.
  void apply(const double* const* src_fields, double* const* dst_fields);

  // The same in two halves, for ranks that reach them at different times (the coupler: source
  // ranks at put, destination ranks at get). start: the source ranks form their partial sums
  // (src side) and post the messages; the inputs may be reused as soon as it returns. finish:
  // completes the messages; the destination ranks multiply (dst side) or add the partial sums,
  // and write dst_fields. Every rank calls start, then finish, in that order, once per apply;
  // with the p2p method neither waits for a rank that has no message for it. The results are
  // the bits apply gives. With a conservation step the source ranks sum their integrals among
  // themselves in start and their first rank sends them to the destination ranks' first rank;
  // finish sums the destination integrals among the destination ranks (so neither side joins
  // the other's global sum: with the reproducible sums the bits are apply's). Not with
  // keep_unmapped on the source side (ISTHMUS_ERR_ARG, on every rank alike: agreed at creation).
  // lane: which of the mapping's lanes carries this apply (add_lane).
  void start(const double* const* src_fields, int lane = 0);
  void finish(double* const* dst_fields, int lane = 0);
  bool pending(int lane = 0) const { return lanes_.at(lane).pending; }

  // A further lane: one more apply may be in flight beside the others, each started and
  // finished on its own (the coupler's fracwgt sends a field's numerator and denominator at
  // once). Local (its exchanges are twins of lane 0's: Redist's twin constructor), so every
  // rank of the mapping that takes part in its applies adds it when it learns it is needed,
  // before the lane's first use; returns its number. Not on the unfused path, nor with a
  // conservation step (ISTHMUS_ERR_ARG).
  int add_lane();
  int lanes() const { return static_cast<int>(lanes_.size()); }

  // Collective: from now on every apply ends with this correction. Computes the active areas'
  // global sums once (one global sum); each apply then costs one more global sum for all
  // fields and levels.
  void set_conservation(Conservation c, Agreement& agreement);

  const MappingInfo& info() const { return info_; }
  int weights_per_link() const { return nw_; }  // source arrays per field (apply)
  int64_t source_points() const { return src_size_; }
  int64_t destination_points() const { return dst_size_; }
  // The redistribution of the fields (unfused: the final transfer).
  Redist& redist(int lane = 0) { return out_redist_ ? *out_redist_ : *lanes_.at(lane).redist; }
  const Redist& redist(int lane = 0) const { return out_redist_ ? *out_redist_ : *lanes_.at(lane).redist; }
  // The node stage's exchange within the node (ranks of the node's communicator), or null.
  Redist* node_redist(int lane = 0) { return lanes_.at(lane).node_redist.get(); }
  // Redist::set_wait_timeout on every exchange of an apply; describe_peer takes ranks of the
  // mapping's communicator.
  void set_wait_timeout(double seconds, std::function<std::string(int rank)> describe_peer = nullptr);

 private:
  struct Lane;  // what one apply in flight needs of its own (below)
  // The constructors' work: from links (routed here) or from prepared rows, in three phases
  // around the agreement's reduction and the exchange map, which build_together shares among
  // mappings: declare (local checks and the agreement's slots), [conclude], prepare_exchange
  // (the rows, the side, the points to exchange; or the whole unfused path: done), [the
  // exchange map of exchange_part], complete_build (the redistribution and the buffers).
  struct Plan {
    const IndexList* src = nullptr;
    const IndexList* dst = nullptr;
    int64_t src_grid_size = 0, dst_grid_size = 0;
    const Links* links = nullptr;
    PreparedLinks* prepared = nullptr;
    int nw_slot = -1, unused_slots[2] = {-1, -1}, rounds_slot = -1, mask_slot = -1;
    int holder_slots[2][2] = {{-1, -1}, {-1, -1}};
    bool masked = false, node_stage = false, done = false;
    std::vector<int64_t> staged, first;
    IndexList part, first_part;
    XmapOptions xo;
    std::vector<FieldSpec> specs;
    void set(const IndexList* s, const IndexList* d, int64_t ss, int64_t ds, const Links* l, PreparedLinks* p) {
      src = s, dst = d, src_grid_size = ss, dst_grid_size = ds, links = l, prepared = p;
    }
  };
  Mapping(MPI_Comm comm, const IndexList* src, const IndexList* dst, const MappingOptions& opt);
  void build(const IndexList* src, const IndexList* dst, int64_t src_grid_size,
             int64_t dst_grid_size, const Links* links, PreparedLinks* prepared,
             Agreement& agreement);
  void declare(Plan& plan, Agreement& agreement);
  void prepare_exchange(Plan& plan, Agreement& agreement);
  Xmap::Part exchange_part(const Plan& plan) const;
  void complete_build(Plan& plan, std::shared_ptr<Xmap> xmap);
  static bool same_exchange_options(const XmapOptions& a, const XmapOptions& b);
  void map(const double* const* src_fields, double* const* dst_fields);
  // src side: this rank's partial sums into the lane's needed; the error of a missing input, if any
  std::optional<Error> partial_sums(const double* const* src_fields, Lane& lane);
  // dst side: the destination values from the received source values in the lane's needed
  void multiply(double* const* dst_fields, Lane& lane);
  // ys_[v][p] = row p's links applied to the vectors xs_[v * nw ..] (one pass for all v); an
  // empty row gets `fill` unless keep_empty
  void row_products(int64_t nrows, int nw, bool keep_empty, double fill);
  template <typename Col>
  void row_products(int64_t nrows, int nw, bool keep_empty, double fill, const Col* col);
  std::optional<Error> missing_output(double* const* dst_fields) const;
  void check_split() const;
  // CONSERV's terms (value * area on active points, 0 elsewhere) of one side: out[k] receives
  // field-level k's values (apply's combined arrays and the split path's share it)
  void integrand(const double* const* fields, bool source, double* const* out) const;
  double* const* side_terms(int64_t n);  // the split path's arrays for integrand, n per level
  // the correction of dst_fields from the integrals ss (source) and sd (destination)
  void correct(double* const* dst_fields, const double* ss, const double* sd) const;
  void split_conservation_comms();
  void drop_masked_sources(MPI_Comm comm);
  // auto (OASIS opt): the side that moves fewer values per level over all ranks of comm_, from
  // this rank's needed source points (dst side) and partial sums (src side); a tie keeps the
  // bit-for-bit destination side. Records both counts in info_. Collective.
  Side choose_auto_side(int64_t needed, int64_t partial);
  // dst side: decides the node stage (collective over comm_); on returns true with the node's
  // communicator in node_comm_ and the points this rank receives for its node in `first`
  bool plan_node_stage(const std::vector<int64_t>& needed, int64_t src_grid_size,
                       std::vector<int64_t>& first);
  // dst side with the node stage: runs `first` (the first exchange, or its completion), then
  // the node stage's exchange even if `first` threw, so the needed points are in the lane's needed.
  // Throws the first failure.
  void node_exchange(const std::function<void()>& first, Lane& lane);
  void conserve(const double* const* src_fields, double* const* dst_fields,
                const std::optional<Error>& failure);

  MPI_Comm comm_;
  MappingOptions opt_;
  MappingInfo info_;
  int64_t src_size_ = 0;                 // local source points
  Conservation cons_;
  double area_src_ = 0, area_dst_ = 0;   // Ws, Wd
  std::vector<std::vector<double>> cons_terms_;  // 2 per field and level: source, destination
  std::vector<const double*> cons_ptrs_;
  std::vector<double*> cons_src_out_, cons_dst_out_;  // where integrand writes each side's terms
  std::vector<double> cons_sums_;
  bool src_side_ = false;                // partial sums on the source ranks (OASIS sum)
  int nw_ = 1;                           // weights per link
  int64_t dst_size_ = 0;                 // local destination points
  std::vector<int64_t> row_start_;       // CSR: dst side over local destination points, src
  std::vector<int64_t> col_;             // side over partial sums; columns: position in the
                                         // needed list (dst) or local source position (src)
  std::vector<int32_t> col32_;           // the columns once built, where they fit (col_ freed)
  std::vector<double> w_;
  std::shared_ptr<Xmap> xmap_;
  std::vector<const double*> xs_;  // row_products' vectors (kept: no allocation per apply)
  std::vector<double*> ys_;
  // the node stage (dst side): the exchange within the node that gives every rank its needed
  // points, after the first exchange brought this rank those it receives for its node
  MPI_Comm node_comm_ = MPI_COMM_NULL;
  std::vector<int> node_to_comm_;            // node rank -> rank of comm_
  std::shared_ptr<Xmap> node_xmap_;
  // Its exchanges (Redist's twins beyond lane 0) and its buffers.
  struct Lane {
    std::unique_ptr<Redist> redist;          // the one redistribution
    std::unique_ptr<Redist> node_redist;     // the node stage's, or null
    std::vector<std::vector<double>> needed; // per array, level-major: received source values
    std::vector<double*> needed_ptrs;        // (dst side) or partial sums (src side)
    std::vector<std::vector<double>> first;  // the node stage: what the first exchange brings
    std::vector<double*> first_ptrs;
    std::vector<std::vector<double>> received;  // split apply (src side, unfused): the results,
    std::vector<double*> received_ptrs;         // copied out by finish
    bool pending = false;                    // started, not finished
  };
  std::vector<Lane> lanes_ = std::vector<Lane>(1);  // lane 0 built with the mapping
  // the unfused path: a fused mapping to blocks of the destination grid on the source ranks,
  // then a transfer of its results
  std::unique_ptr<Mapping> inner_;
  std::shared_ptr<Xmap> out_xmap_;
  std::unique_ptr<Redist> out_redist_;
  std::vector<std::vector<double>> mapped_;
  std::vector<double*> mapped_ptrs_;
  bool has_src_ = false, has_dst_ = false;  // this rank was given a part (maybe empty)
  // split conservation: each side's ranks, and the first ranks' link (comm_ ranks)
  MPI_Comm cons_comm_ = MPI_COMM_NULL, src_comm_ = MPI_COMM_NULL, dst_comm_ = MPI_COMM_NULL;
  int src_leader_ = -1, dst_leader_ = -1;
  std::vector<std::vector<double>> side_terms_;
  std::vector<const double*> side_ptrs_;
  std::vector<double*> side_out_;
  std::vector<double> ss_sent_, ss_got_, sd_;
  MPI_Request ss_request_ = MPI_REQUEST_NULL;
};

}  // namespace isthmus::remap
