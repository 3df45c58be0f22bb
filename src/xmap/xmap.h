// Exchange maps: for a source and a destination decomposition of one global index space, the
// schedule of who sends which local positions to whom, built with a distributed directory.
#pragma once
#include <mpi.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "base/agreement.h"
#include "index/index_list.h"

namespace isthmus {

// The local positions one rank exchanges with one peer, as runs in message order (ascending
// global index, which both sides agree on without talking).
struct PeerRuns {
  int peer;
  int64_t count;              // points per level
  std::vector<Segment> runs;  // Segment::start is a local position
};

// A run of points that stays on the rank: source position -> destination position.
struct LocalCopy {
  int64_t src;
  int64_t dst;
  int64_t length;
};

// What one direction of an exchange does on this rank.
struct Schedule {
  int64_t src_size = 0;           // local points of the side that sends
  int64_t dst_size = 0;           // local points of the side that receives
  std::vector<PeerRuns> sends;    // sorted by peer, never this rank
  std::vector<PeerRuns> recvs;    // sorted by peer, never this rank
  std::vector<LocalCopy> copies;  // source and destination both on this rank
  std::vector<Segment> fills;     // destination positions that no source owns (fill policy)

  Schedule transposed() const;    // the reverse direction when every index has one receiver
  int64_t send_points() const;
  int64_t recv_points() const;
  int64_t copy_points() const;
  int64_t fill_points() const;
};

// What a destination point receives when several source ranks own its index.
enum class Combine {
  Lowest = 0,  // the lowest of them sends it (one contribution per point)
  Sum = 1,     // every one of them sends it; a redistribution sums the contributions in
               // increasing order of source rank (the reduction mode, docs/redistribution.md)
};

struct XmapOptions {
  bool fill_unowned = false;
  double fill_value = 0.0;
  // Destination points no source owns are left untouched by every exchange, instead of being
  // an error or filled (a mapping's unmapped points that keep their value). Wins over fill.
  bool ignore_unowned = false;
  bool warn_duplicates = false;
  Combine combine = Combine::Lowest;
  // Only the forward direction is ever used (a mapping's exchanges): the reverse schedule is not
  // built, which spares a set-up the second directory an index with several receivers needs;
  // a redistribution over the map refuses reverse exchanges (ISTHMUS_ERR_ARG).
  bool forward_only = false;
};

class Xmap {
 public:
  // Collective over comm (which the map duplicates and keeps). src/dst may be null.
  // `agreement` holds the caller's local checks; the constructor adds its own and the global
  // size, and concludes it over comm before any other communication (docs/errors.md).
  Xmap(MPI_Comm comm, const IndexList* src, const IndexList* dst, const XmapOptions& opt,
       Agreement& agreement);
  // The same for a caller whose own agreement already covered the options and the global size
  // (given: every rank passes the same) on every rank (Agreement::conclude_vouched): one
  // reduction fewer.
  struct Vouched {};
  Xmap(Vouched, MPI_Comm comm, const IndexList* src, const IndexList* dst, const XmapOptions& opt,
       int64_t global_size);
  // Several vouched, forward-only maps over one communicator, built with one directory: their
  // index spaces are laid end to end (part k's indices after those of parts 0..k-1), one
  // directory resolves them all, and each map takes its slice of the schedule. So K maps cost
  // the directory rounds of one (each still has its own communicator). Collective over comm:
  // every rank passes the same number of parts with the same global sizes (vouched by the
  // caller's agreement), and all take opt (forward_only). global_duplicates() and
  // global_unowned() are then those of all the parts.
  struct Part {
    const IndexList* src = nullptr;
    const IndexList* dst = nullptr;
    int64_t global_size = 0;
  };
  static std::vector<std::shared_ptr<Xmap>> build_together(Vouched, MPI_Comm comm,
                                                           const std::vector<Part>& parts,
                                                           const XmapOptions& opt);
  // Collective over both groups of an intercommunicator: the groups are merged, and the
  // agreement is concluded over the merged communicator. A rank whose intercomm is not one
  // cannot take part: it fails alone.
  static std::shared_ptr<Xmap> across(MPI_Comm intercomm, const IndexList* src,
                                      const IndexList* dst, const XmapOptions& opt,
                                      Agreement& agreement);
  ~Xmap();
  Xmap(const Xmap&) = delete;
  Xmap& operator=(const Xmap&) = delete;

  MPI_Comm comm() const { return comm_; }
  // The map's communicator for its first redistribution's messages (the map itself sends none
  // after it is built), so that a map and its one redistribution cost one communicator, not
  // two: the first call returns comm(), later ones MPI_COMM_NULL (the caller then duplicates
  // comm(): each further redistribution needs its own). Every rank calls it at the same point
  // (redistributions are built collectively), so all make the same choice. keep_lent_comm():
  // the borrower timed out with messages in flight, and the map must not free the
  // communicator (see Redist::release).
  MPI_Comm lend_comm() const;
  void keep_lent_comm() const { keep_comm_ = true; }
  // With Combine::Sum a destination position may appear in the receive runs of several peers
  // (and in the local copies): one contribution each. The reverse schedule is then the
  // transpose, which sends each destination value back to every contributor.
  const Schedule& forward() const { return forward_; }
  const Schedule& reverse() const { return reverse_; }
  const XmapOptions& options() const { return opt_; }
  int64_t global_duplicates() const { return global_duplicates_; }
  int64_t global_unowned() const { return global_unowned_; }

 private:
  struct AdoptComm {};
  Xmap(AdoptComm, MPI_Comm comm, const IndexList* src, const IndexList* dst,
       const XmapOptions& opt, Agreement& agreement);
  // Local checks, agreement over `over`; returns the agreed global size.
  static int64_t agree(MPI_Comm over, const IndexList* src, const IndexList* dst,
                       const XmapOptions& opt, Agreement& agreement, bool vouched = false);
  void build(const IndexList* src, const IndexList* dst, int64_t global_size);
  // The directory's forward schedule of src -> dst over indices [0, global_size) of comm_, its
  // global statistics in the members, and the unowned error (which names part_of(index)).
  Schedule run_forward(const IndexList* src, const IndexList* dst, int64_t global_size,
                       const std::function<std::string(int64_t)>& name_index, int64_t* requested_twice);
  struct Adopt {};
  Xmap(Adopt, MPI_Comm comm, const XmapOptions& opt) : comm_(comm), opt_(opt) {}

  MPI_Comm comm_ = MPI_COMM_NULL;
  mutable bool lent_ = false, keep_comm_ = false;
  XmapOptions opt_;
  Schedule forward_;
  Schedule reverse_;
  int64_t global_duplicates_ = 0;
  int64_t global_unowned_ = 0;
};

}  // namespace isthmus
