// Halo exchange on a box decomposition (seed 004 sect. 2-3, seed 003 sect. 3.2).
//
// A rank's array of a field holds its subdomain with a halo of width h on every side:
// (ni + 2h) x (nj + 2h) x nlevels elements, i fastest, then j, then level (NEMO's (i, j, k)
// order); interior point (li, lj) of level k is at ((k * (nj + 2h)) + lj + h) * (ni + 2h) + li + h.
//
// Every halo cell receives the value of the global point it stands for, from the rank that owns
// that point: periodic images, north-fold mirrors (with the field's sign), and points several
// subdomains away when h exceeds a neighbour's size. The fold also overwrites the redundant
// half of the row that maps onto itself (and, for V and F points with a T pivot, the whole row
// NEMO never computes), as NEMO's lbc_nfd does. Halo cells whose point lies in a removed
// land-only subdomain get the fill value and cost no message; halo cells outside a closed
// boundary are left untouched.
//
// Everything is computed once: an exchange packs from run-length tables into preallocated
// buffers and posts persistent requests; it allocates nothing.
#pragma once
#include <mpi.h>

#include <array>
#include <memory>
#include <string>
#include <vector>

#include "base/agreement.h"
#include "decomp/decomposition.h"
#include "transfer/executor.h"
#include "transfer/redist.h"
#include "trace/counters.h"

namespace isthmus::halo {

// Arakawa C-grid point types: U is half a cell east of T, V half a cell north, F both.
enum class PointType { T = 0, U = 1, V = 2, F = 3 };
const char* point_name(PointType p);

enum class HaloMethod {
  Auto = 0,         // single-sweep: one round of messages (see method_rule())
  TwoSweep = 1,     // east-west, then north-south with corners relayed by the N/S neighbours
  SingleSweep = 2,  // every halo cell straight from its owner, all peers at once
  Neighbor = 3      // the single-sweep messages as one MPI_Neighbor_alltoallv
};
const char* method_name(HaloMethod m);
// The documented rule behind Auto.
const char* method_rule();

struct HaloField {
  PointType point = PointType::T;
  int nlevels = 1;
  int sign = 1;  // -1 for a vector component: folded values change sign
  DataType type = DataType::Double;
};

// Where a halo cell's value comes from: global point (i, j), whether a fold mirrored it
// (its sign applies), or none (outside a closed boundary).
struct SourcePoint {
  bool exists = false;
  bool folded = false;
  int64_t i = 0, j = 0;
};
// The owner point of global position (i, j) (any integers) for a point type.
SourcePoint source_point(const decomp::Decomposition& d, PointType p, int64_t i, int64_t j);

class HaloExchange {
 public:
  // Collective over comm, whose ranks 0..d.nranks()-1 hold the subdomains (further ranks hold
  // none and pass null arrays). fields: the arrays exchanged together, one message per peer.
  //
  // Errors (docs/errors.md): every argument is checked locally, including the widest halo the
  // layout allows, and the values that must be equal on every rank (halo width, fields, method,
  // fill value, the layout) are compared, in one reduction before any communication; on failure
  // every rank throws the same code. Nothing after that reduction depends on a check that could
  // fail on one rank only (the set-up tables are computed before it).
  HaloExchange(MPI_Comm comm, const decomp::Decomposition& d, int halo_width,
               std::vector<HaloField> fields, HaloMethod method, double fill_value = 0.0);
  // The same, joining a caller's agreement (the C API's checks of its own arguments). A rank
  // whose earlier checks failed still calls it, with d == nullptr if it has no layout, so that
  // every rank meets in the one reduction; it then throws like every other rank.
  HaloExchange(Agreement& agreement, MPI_Comm comm, const decomp::Decomposition* d,
               int halo_width, std::vector<HaloField> fields, HaloMethod method,
               double fill_value);
  ~HaloExchange();
  HaloExchange(const HaloExchange&) = delete;
  HaloExchange& operator=(const HaloExchange&) = delete;

  // arrays[f] is field f's array (layout above). Collective. A rank with a subdomain given a
  // NULL list or a NULL array still takes part (docs/errors.md): its messages carry its error
  // code instead of data, it writes nothing and throws its error; a rank that receives such a
  // message leaves those points unwritten and throws the sender's code naming it. Two-sweep:
  // a rank that learnt of a failure in the first sweep passes it on in the second (the corners
  // it relays would be wrong), so its receivers fail too. Ranks that receive no failure
  // return normally with every halo cell right. The next exchange is unaffected.
  void exchange(void* const* arrays);

  HaloMethod method() const { return method_; }
  int halo_width() const { return h_; }
  bool has_subdomain() const { return has_box_; }
  const decomp::Box& box() const { return box_; }
  // Elements of one level of a local array: (ni + 2h) * (nj + 2h).
  int64_t plane_size() const { return ext_i_ * ext_j_; }
  int64_t extent_i() const { return ext_i_; }
  int64_t extent_j() const { return ext_j_; }
  const std::vector<HaloField>& fields() const { return fields_; }
  // Messages this rank sends per exchange (all phases), and its distinct peers.
  int messages_per_exchange() const;
  int distinct_peers() const;
  int phases() const { return static_cast<int>(phases_.size()); }
  trace::Trace& trace() { return trace_; }
  const trace::Trace& trace() const { return trace_; }

  struct Run {
    int64_t start;  // offset in one level's plane
    int64_t length;
    int64_t step;   // +1 or -1
  };
  struct CopyRun {
    int64_t dst, src, length, src_step;
  };
  using Runs = std::vector<Run>;
  struct PeerLists {
    int peer = -1;
    std::array<Runs, 4> by_type;
    std::array<int64_t, 4> count{};
  };
  struct Phase {
    std::vector<PeerLists> sends, recvs;
    std::array<std::vector<CopyRun>, 4> copies;
    std::array<Runs, 4> fills;
    MessageLayout layout;
    std::vector<char> send_buffer, recv_buffer;
    std::unique_ptr<Executor> executor;
  };

 private:
  void init(Agreement& a, MPI_Comm comm, const decomp::Decomposition* d, HaloMethod method);
  void check_arguments(MPI_Comm comm, const decomp::Decomposition& d, HaloMethod method) const;
  void build(Agreement& a, MPI_Comm comm, const decomp::Decomposition* d, HaloMethod m);

  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0, h_ = 1;
  HaloMethod method_;
  std::vector<HaloField> fields_;
  double fill_ = 0;
  bool has_box_ = false;
  decomp::Box box_;
  int64_t ext_i_ = 0, ext_j_ = 0;
  std::vector<Phase> phases_;
  std::array<Runs, 4> folded_;
  trace::Trace trace_;
};

}  // namespace isthmus::halo
