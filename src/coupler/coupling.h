// One entry of the configuration between two components (or two decompositions of one): the
// source side's time operation, the exchange (a Mapping, or a Redist where the grids are the
// same) and the dates. put and get follow OASIS3-MCT's rules (seed 000 sect. 2.5; OASIS's
// oasis_advance_run): a put at date t counts for the coupling date t + LAG; it is sent when
// t + LAG is a multiple of the period and every field of the entry has been put; a get at a
// multiple of the period receives. The exchange is one redistribution per coupling date for
// all fields of the entry; a put never waits for the destination, except for the previous
// coupling of the same entry if that one is still in flight.
#pragma once
#include <mpi.h>

#include <memory>
#include <string>
#include <vector>

#include "coupler/config.h"
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
// fields, the destination part when it receives them (both within one component).
struct CouplingEnds {
  const Entry* entry = nullptr;
  std::string src_component, dst_component;
  bool src = false, dst = false;
  IndexList src_points, dst_points;
  int64_t src_grid_size = 0, dst_grid_size = 0;
  std::vector<int> levels;                      // per field of the group (the bundle size)
};

class Coupling {
 public:
  // Collective over comm, the ranks of both components.
  Coupling(MPI_Comm comm, CouplingEnds ends, int64_t runtime, const std::string& run_dir,
           Method method);
  Coupling(const Coupling&) = delete;
  Coupling& operator=(const Coupling&) = delete;

  // Field k of the entry's group; data holds levels[k] * local points values, level-major.
  int put(int k, int date, const void* data, DataType type);
  int get(int k, int date, void* data, DataType type);
  void complete();  // waits for a send still in flight (at termination)

  const Entry& entry() const { return *ends_.entry; }
  const CouplingEnds& ends() const { return ends_; }
  bool mapped() const { return mapping_ != nullptr; }
  remap::Side side() const;
  const Redist& redist() const { return mapping_ ? mapping_->redist() : *redist_; }

 private:
  void start(const double* const* src);      // every rank of the exchange
  void finish(double* const* dst);
  void check_date(const char* what, int date, int& last) const;

  CouplingEnds ends_;
  int64_t runtime_;
  int nfields_;
  std::unique_ptr<remap::Mapping> mapping_;
  std::shared_ptr<Xmap> xmap_;
  std::unique_ptr<Redist> redist_;
  bool pending_ = false;                     // a started exchange not finished on this rank
  // source side
  std::vector<Accumulator> acc_;
  std::vector<int> put_date_;                // per field: the coupling date it was last put for
  std::vector<std::vector<double>> send_;
  int last_put_ = -1;
  // destination side
  std::vector<std::vector<double>> recv_;
  std::vector<int> got_date_;                // per field: the date it was last received for
  int received_date_ = -1;                   // the date recv_ holds
  int last_get_ = -1;
};

}  // namespace isthmus::coupler
