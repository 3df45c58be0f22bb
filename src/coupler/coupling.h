// One entry of the configuration between two components (or two decompositions of one): the
// source side's time operation, the exchange (a Mapping, or a Redist where the grids are the
// same) and the dates. put and get follow OASIS3-MCT's rules (seed 000 sect. 2.5; OASIS's
// oasis_advance_run): a put at date t counts for the coupling date t + LAG; it is sent when
// t + LAG is a multiple of the period and every field of the entry has been put; a get at a
// multiple of the period receives. The exchange is one redistribution per coupling date for
// all fields of the entry; a put never waits for the destination, except for the previous
// coupling of the same entry if that one is still in flight.
//
// Files, as OASIS3-MCT's oasis_advance_init and oasis_advance_run (docs/coupler-files.md): the
// source side of a lagged entry sends the restart file's fields for date 0 at construction and
// writes the lagged fields of $RUNTIME to it instead of sending them; partial LOCTRANS states go
// to the restart file during the last coupling period and are read back at construction; EXPOUT
// writes what is sent (source side) and what is received (destination side); an OUTPUT entry
// only writes, an INPUT entry only reads. File calls are collective over the component's ranks.
#pragma once
#include <mpi.h>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/agreement.h"
#include "coupler/config.h"
#include "coupler/field_files.h"
#include "coupler/time_op.h"
#include "index/index_list.h"
#include "remap/mapping.h"
#include "transfer/redist.h"

namespace isthmus::coupler {

// OASIS3-MCT's return codes of put and get (mod_oasis_parameters), returned unchanged.
enum Info : int {
  kOk = 0, kRecvd = 3, kSent = 4, kLocTrans = 5, kToRest = 6, kOutput = 7, kSentOut = 8,
  kToRestOut = 9, kFromRest = 10, kInput = 11, kRecvOut = 12, kFromRestOut = 13, kWaitgroup = 14
};

// What this rank holds of one entry: the source part when its component sends the entry's
// fields, the destination part when it receives them (both within one component). An OUTPUT
// entry has only a source part, an INPUT entry only a destination part.
struct CouplingEnds {
  const Entry* entry = nullptr;
  int number = 1;                               // the entry's place in the configuration, from 1
                                                // (OASIS's names in LOCTRANS restarts)
  int output_number = 1;                        // its place once sorted by SEQ (stable; no SEQ
                                                // counts as 1): OASIS 4's number in output
                                                // file names (<field>_<component>_NN.nc)
  MPI_Comm local = MPI_COMM_NULL;               // this rank's component (files are written and
                                                // read collectively over it)
  bool allow_no_restart = false;                // $NNOREST: a missing lagged field is zeros
  // The grids' 2-D shapes (0: none known, the grid is a line of its points): the entry's own,
  // or, where its namcouple line gives none (an OUTPUT entry's "torc torc"), those another
  // entry gives for the same partition, as OASIS keeps them per partition; files are written
  // in that shape.
  int64_t src_nx = 0, src_ny = 0, dst_nx = 0, dst_ny = 0;
  // The weights of a MAPPING entry, read and routed by the component that multiplies, or by
  // each for opt (Coupling::prepare_weights); empty on a component that prepares nothing.
  remap::PreparedLinks weights;
  std::string src_component, dst_component;
  bool src = false, dst = false;
  IndexList src_points, dst_points;
  int64_t src_grid_size = 0, dst_grid_size = 0;
  std::vector<int> levels;                      // per field of the group (the bundle size)
};

// What one coupling cost on this rank, for the communication report.
struct CouplingStats {
  int64_t puts = 0, gets = 0;          // calls
  int64_t sends = 0, receives = 0;     // coupling dates that moved data (exchanges started/done)
  double put_seconds = 0;              // in put, all of it (time operation, partial sums, packing)
  double get_seconds = 0;              // in get, all of it
  double wait_seconds = 0;             // of which waiting for messages (get, and a put waiting
                                       // for its previous send)
  double map_seconds = 0;              // of which multiplying, adding partial sums, CONSERV
  int64_t messages_sent = 0, messages_received = 0;
  int64_t bytes_sent = 0, bytes_received = 0;
};

class Coupling {
 public:
  // Collective over comm, the ranks of both components (an INPUT or OUTPUT entry: over
  // ends.local; comm is not used). The source side of an entry with LAG > 0 reads the restart
  // file and starts the exchange of date 0 here; a missing file or variable fails on every rank
  // of both components (ISTHMUS_ERR_FILE, naming the file and the variable).
  Coupling(MPI_Comm comm, CouplingEnds ends, int64_t runtime, const std::string& run_dir,
           Method method);
  // The first half of the set-up of an exported MAPPING entry, before any constructor: the
  // component that multiplies (dst: the destination; src: the source; opt: each component, for
  // the side it would multiply on) reads the weights file and routes its links among its own
  // ranks (remap::prepare_links), collective over ends.local; a component with nothing to
  // prepare returns at once. So both components prepare their entries at the same time, and
  // the constructors then build only the exchanges (opt: choosing the side from what each
  // component prepared). A failure is kept in ends.weights and raised by the constructor on
  // both components. Whether an entry is prepared: prepared_weights(ends) (every MAPPING entry
  // between two components, and dst or src within one).
  // The destination side's links read before the pair is resolved, while the components
  // exchange their declarations (so the reading overlaps the wait for the other components):
  // each rank of the receiving component reads the links of its own points of the weights file
  // at `path` (remap::read_links_of_destinations, the source grid's size unchecked), collective
  // over local. prepare_weights takes them for an entry on that file and partition whose
  // declared grid sizes they fit; where the direct reading declined (`weights` empty), it goes
  // straight to the slab reading.
  struct EarlyLinks {
    std::string path;
    int partition = -1;
    int64_t src_grid_size = -1, dst_grid_size = -1;
    std::optional<remap::PreparedLinks> weights;
  };
  static std::string weights_path(const Entry& e, const std::string& run_dir);  // its MAPPING file's
  static EarlyLinks read_early(MPI_Comm local, const std::string& path, int partition, const IndexList& part);
  static void prepare_weights(CouplingEnds& ends, const std::string& run_dir,
                              const EarlyLinks* early = nullptr);
  static bool prepared_weights(const CouplingEnds& ends);
  // The entries between the same two components whose mappings are built together (one
  // reduction and one directory for all: remap::Mapping::build_together): each is made
  // deferred (its own checks recorded, nothing exchanged; local, but for the component's
  // file checks), then build_together, collective over comm, builds and finishes them all in
  // the order given (the order of the configuration on every rank). joins: whether an entry
  // can (an exchanged MAPPING entry with prepared links).
  struct Deferred {};
  Coupling(Deferred, CouplingEnds ends, int64_t runtime, const std::string& run_dir, Method method);
  static bool joins(const CouplingEnds& ends);
  static void build_together(MPI_Comm comm, const std::vector<Coupling*>& couplings);
  Coupling(const Coupling&) = delete;
  Coupling& operator=(const Coupling&) = delete;

  // Field k of the entry's group; data holds levels[k] * local points values, level-major.
  // write_restart: OASIS's optional argument of oasis_put (4.0, oasis_advance_run): a put that
  // completes a coupling date writes the value it sends to TC<date %09d>_<restart file>; a put
  // at another date writes the partial LOCTRANS state to TA<date %09d>_<restart file>.
  // terms: OASIS's fld2..fld5 (higher-order terms, e.g. the gradients of second-order
  // conservative remapping), kMaxTerms arrays of the field's layout, NULL where not given, or
  // NULL for none. A term is multiplied by the weights file's weight of its number, where the
  // source side multiplies (MAPPING ... sum); it is on from its first put, and then an INSTANT
  // put without it counts as zeros (OASIS's aVon rule).
  // fracwgt: OASIS3-MCT 5.0's argument of oasis_put, an array of the field's layout and type
  // (e.g. the ice fraction of each cell), or NULL: the destination receives
  // map(field * fracwgt) / map(fracwgt) (0 where both are 0), so that cells weigh by their
  // fraction. On an entry without a mapping it is ignored, as by OASIS3-MCT. It is on or off
  // for the entry from its first exchange on (a put that differs fails), INSTANT only, and not
  // with higher-order terms or CONSERV (docs/coupler.md says why).
  static constexpr int kMaxTerms = 4;
  int put(int k, int date, const void* data, DataType type, bool write_restart = false,
          const void* const* terms = nullptr, const void* fracwgt = nullptr);
  int get(int k, int date, void* data, DataType type);
  // What put(k, date, ...) would return now, doing nothing (OASIS's oasis_put_inquire).
  int put_inquire(int k, int date) const;
  void complete();
  // Bounds every wait of this coupling's exchange (0: none): a partner that never comes fails
  // the put or get with ISTHMUS_ERR_TIMEOUT naming the entry, the date and the waited-for ranks
  // (describe_peer turns a rank of the exchange into words).
  void set_wait_timeout(double seconds, std::function<std::string(int)> describe_peer);  // waits for a send still in flight (at termination)

  const Entry& entry() const { return *ends_.entry; }
  CouplingStats stats() const;  // with the exchange's message counters
  const CouplingEnds& ends() const { return ends_; }
  bool exchanges() const { return mapping_ || redist_; }  // false for INPUT and OUTPUT entries
  bool mapped() const { return mapping_ != nullptr; }
  remap::Side side() const;
  const remap::MappingInfo* mapping_info() const { return mapping_ ? &mapping_->info() : nullptr; }
  const Redist& redist() const { return mapping_ ? mapping_->redist() : *redist_; }  // exchanges()

 private:
  TimeOp time_op() const { return ends_.entry->loctrans.value_or(TimeOp::Instant); }
  bool instant() const { return time_op() == TimeOp::Instant; }
  // beyond the run's end nothing is sent: the lagged value of $RUNTIME is the next run's date 0
  bool beyond_run(int64_t lagged) const { return runtime_ > 0 && lagged >= runtime_; }
  int put_timed(int k, int date, const void* data, DataType type, bool write_restart,
                const void* const* terms, const void* fracwgt);
  // a put's fracwgt: checked against the entry's state, kept for the coupling date
  void take_fracwgt(int k, int date, const void* fracwgt, DataType type, bool coupling_date);
  // at this rank's next exchange of a mapped entry that votes: its vote (a source rank's:
  // whether the exchange carries a fraction)
  void vote_fracwgt(bool on);
  // the results of the votes started, waited for (or only tested: a source rank, which knows
  // its own votes, need not wait for the destination); fails on every rank if the source ranks
  // disagreed
  void settle_fracwgt(bool wait = true);
  // the votes a coupling takes: its first exchange's, and with LAG > 0 the first one's from the
  // puts (the first exchange sends the restart file's values, with the fraction it holds or
  // none, as OASIS3-MCT sends them)
  int fracwgt_votes() const { return ends_.entry->lag > 0 ? 2 : 1; }
  void divide_by_fraction(double* const* dst, int date);
  // CHECKIN (source: the values mapped, after BLASOLD) and CHECKOUT (destination: the values
  // received, after BLASNEW), as OASIS3-MCT's oasis_advance_avdiag: per field level the count,
  // minimum and maximum with their global index, mean and sum over the component's ranks, which
  // its first rank appends to <run dir>/isthmus_check_<component>.txt. Collective over the
  // component.
  void check_diagnostics(bool source, int date, const std::vector<std::vector<double>>& values);
  // a put's higher-order terms: checked, switched on, added to their accumulators
  void take_terms(int k, int date, const void* const* terms, DataType type);
  // the arrays a coupling date sends: per field its values, then its terms (NULL when off)
  std::vector<const double*> sent_arrays();
  void switch_term_on(int t);  // its accumulators and send buffers, from now on
  void write_term_restarts(const std::string& path, bool partial);
  void read_term_restarts(const std::string& path, bool partial);
  int get_timed(int k, int date, void* data, DataType type);
  void set_conservation();
  void build_exchange(MPI_Comm comm, Method method, Agreement& agreement);
  // the constructor's work before and after the exchange is built
  void begin(Agreement& agreement);
  void end();
  // every rank of the exchange; dst: where an identity exchange writes (default: recv_)
  void start(const double* const* src, double* const* dst = nullptr);
  void finish(double* const* dst, const char* call, int date);
  void check_date(const char* what, int date, int& last) const;
  // The source side at a coupling date (OASIS's comm_now): restart, send, output. Returns the
  // info code.
  int emit(int date, int64_t lagged);
  void read_lagged_restart();
  void read_partial_restart();
  void write_partial_restart(const std::string& path);
  // what a coupling date sends (values, higher-order terms, fraction) into a restart file
  void write_sent(const std::string& path);
  std::vector<FieldData> src_fields(std::vector<std::vector<double>>& values);
  std::vector<FieldData> dst_fields(std::vector<std::vector<double>>& values);
  std::string in_run_dir(const std::string& file) const;

  CouplingEnds ends_;
  int64_t runtime_;
  int nfields_;
  std::string run_dir_;
  // The communicator of file calls: ends_.local, the component's (the coupler's own, never the
  // model's). File calls are blocking and collective over the component, made in the model's
  // program order on each of its ranks, so they share it with the component's other calls of
  // that kind (a communicator per entry cost an MPI_Comm_dup each: milliseconds of set-up when
  // ranks share cores); the exchanges never use it.
  MPI_Comm files() const { return ends_.local; }
  GridShape src_shape_, dst_shape_;
  std::unique_ptr<OutputFile> src_output_, dst_output_;
  std::unique_ptr<InputFile> input_;
  bool write_restart_ = false;               // OASIS's writrest: asked by a put, not yet done
  std::unique_ptr<remap::Mapping> mapping_;
  bool lagged_restart_ = false;                  // the source side sends date 0 from the restart file
  std::unique_ptr<Agreement> deferred_;          // a deferred coupling's checks, until built
  remap::Mapping::Request request_;              // and its mapping's request
  std::shared_ptr<Xmap> xmap_;
  std::unique_ptr<Redist> redist_;
  bool pending_ = false;                     // a started exchange not finished on this rank
  // source side
  // Higher-order terms (put's terms): terms_ = the weights per link of the mapping (1: none);
  // term t (2..terms_) is term_on_[t - 2] from its first put, with its accumulators (the sum,
  // or INSTANT's last value) and send buffers per field.
  int terms_ = 1;
  std::vector<bool> term_on_;
  std::vector<std::vector<Accumulator>> term_acc_;
  std::vector<std::vector<std::vector<double>>> term_send_;
  std::vector<Accumulator> acc_;
  std::vector<int> put_date_;                // per field: the coupling date it was last put for
  std::vector<std::vector<double>> send_;
  int last_put_ = -1;
  // destination side
  std::vector<std::vector<double>> recv_;
  std::vector<int> got_date_;                // per field: the date it was last received for
  int received_date_ = -1;                   // the date last received
  bool recv_holds_date_ = true;              // false: it went straight into the model's array
  int last_get_ = -1;
  CouplingStats stats_;
  // fracwgt (put): the numerator travels on lane 0 of the mapping, the fraction on lane 1,
  // both started at the coupling date. Whether it is on is fixed at the entry's first exchange
  // from puts, which every rank of the exchange learns in a nonblocking reduction over the
  // exchange's communicator, started by each rank when it starts that exchange (the source
  // ranks vote from their puts; a lagged entry's first exchange, the restart file's values,
  // has a vote of its own, from the file): a destination rank waits for it at that get; a
  // source rank tests it at its next exchanges and waits at termination (so that a put never
  // waits for the destination on its account).
  enum class FracWgt { Unknown, Off, On };
  FracWgt fw_ = FracWgt::Unknown;            // the entry's, from its first exchange from puts
  struct Vote {
    MPI_Request request = MPI_REQUEST_NULL;
    int mine[2] = {0, 0}, all[2] = {0, 0};   // [a source on, a source off]
    bool settled = false;
  };
  std::vector<Vote> votes_;                  // started by this rank, in exchange order
  std::vector<bool> fw_given_;               // per field: its put at the coupling date gave one
  std::vector<std::vector<double>> fw_send_; // per field: the fraction to send (source side)
  std::vector<std::vector<double>> fw_num_;  // per field: value * fraction (source side)
  std::vector<std::vector<double>> fw_den_;  // per field: the mapped fraction (destination)
};

}  // namespace isthmus::coupler
