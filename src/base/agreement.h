// The error contract of every collective call (docs/errors.md): each rank validates its own
// arguments, then all ranks agree in one small reduction, before any communication that depends
// on those arguments. If any rank failed, or an argument that must be equal on every rank is
// not, every rank throws an Error with the same code, and no rank is left waiting.
//
//   Agreement a;
//   a.check([&] { ...local checks that throw isthmus::Error... });
//   a.match("nfields", nfields);            // must be equal on every rank
//   a.conclude(comm);                       // one MPI_Allreduce; throws on every rank on failure
//
// The reduction is small: the compared values travel as one combined hash (16 bytes), and only
// value()/maximum() slots, which every rank registers alike, add words. A rank that failed early
// and registered fewer matches still takes part in the same reduction.
#pragma once
#include <mpi.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/error.h"

namespace isthmus {

class Agreement {
 public:
  static constexpr int kMaxMatches = 20;

  // Runs one local check. The first failure is kept (not thrown); later checks are skipped,
  // since they may depend on what failed.
  template <typename F>
  void check(F&& f) {
    if (failed()) return;
    try {
      f();
    } catch (const Error& e) {
      record(e.code(), e.what());
    } catch (const std::bad_alloc&) {
      record(ISTHMUS_ERR_NOMEM, "out of memory");
    } catch (const std::exception& e) {
      record(ISTHMUS_ERR_INTERNAL, e.what());
    }
  }
  // Records a local failure directly (the first one counts).
  void record(int code, const std::string& message);
  bool failed() const { return code_ != ISTHMUS_OK; }

  // A value that must be the same on every rank. All compared values travel as one combined
  // hash (two words, whatever their number); only when the hashes differ, a failure-path
  // reduction finds the first value that differs, and the message names it, the values and two
  // ranks. std::nullopt ("unknown": e.g. an argument the rank's algorithm does not use)
  // compares as a value of its own.
  void match(const char* what, std::optional<int64_t> value);
  // The same for values that mean nothing to a reader (arrays): compared by a hash, and the
  // message names the two ranks that disagree.
  void match_hash(const char* what, std::optional<uint64_t> hash);

  // The one reduction over comm. Returns normally on every rank if no rank failed and every
  // match agrees; otherwise throws on every rank the code of the lowest failing rank (or
  // ISTHMUS_ERR_ARG for a mismatch), with a message that names the failing rank and says
  // why. comm == MPI_COMM_NULL means this rank cannot take part (it has no communicator):
  // it throws its own failure at once.
  void conclude(MPI_Comm comm);
  // Several agreements over one communicator in one reduction (objects built together, e.g. a
  // coupler's mappings between the same two components): as if each were concluded in turn,
  // in the order given, with one reduction instead of one each. None may use a checksum.
  static void conclude_together(MPI_Comm comm, const std::vector<Agreement*>& agreements);
  // For a collective object that a caller builds from arguments its own agreement already
  // covered on every rank (a mapping's exchange map and redistribution, made from the mapping's
  // agreed options and parts it made itself): no reduction. The local checks still run, and a
  // failure is a bug, thrown on this rank as ISTHMUS_ERR_INTERNAL; value() and maximum() slots
  // read back this rank's own values.
  void conclude_vouched();

  // A value that must be the same on every rank that knows it, where some ranks may not know
  // it (std::nullopt: e.g. a rank without a part has no global size), and whose agreed value
  // the caller needs: carried in full (two words of the reduction, where match() adds none).
  // Returns the slot index, for agreed(). Every rank must register the same value() and
  // maximum() slots, failed or not: they shape the reduction.
  int value(const char* what, std::optional<int64_t> value);

  // After a successful conclude: the agreed value of slot i (the one value every rank that knew
  // it had), or std::nullopt if no rank knew it.
  std::optional<int64_t> agreed(int i) const;

  // ---- For the collectives (alltoallv) ---------------------------------------------------
  // A value that need not be equal: every rank learns its largest over all ranks (e.g. the
  // largest message size an auto rule looks at), read with agreed(i) after conclude
  // (std::nullopt if no rank knew one). value > INT64_MIN. Carried like value().
  // Returns the slot index.
  int maximum(const char* what, std::optional<int64_t> value);
  // A checksum beside the MIN slots: conclude also computes the wrapping 64-bit sum over all
  // ranks of what each rank added, for data that must pair up across ranks (alltoallv: each
  // rank adds a hash of every (sender, receiver, count) it sends and subtracts the hash of
  // every one it expects, so the sum is 0 when they pair up, and non-zero but for a 2^-64
  // chance when they do not). It changes the reduction (one more int64 and a user-defined
  // MPI_Op over a contiguous type, both created and freed in conclude), so EVERY rank of the
  // call must call use_checksum(), failed or not, before conclude. Nothing is thrown for a
  // non-zero sum: the caller reads checksum() after conclude (the same value on every rank),
  // and may run a failure-path step that names what disagrees.
  void use_checksum() { use_checksum_ = true; }
  void add_to_checksum(uint64_t v) { checksum_ += v; }
  uint64_t checksum() const { return checksum_; }

 private:
  enum class Kind { Compare, Value, Maximum };
  struct Slot {
    const char* what = nullptr;
    Kind kind = Kind::Compare;
    bool hashed = false;  // the value means nothing to a reader: name ranks, not values
    std::optional<int64_t> value;
  };
  int add_slot(const char* what, Kind kind, bool hashed, std::optional<int64_t> value);
  // This rank's words of the reduction (without the checksum), and what the reduced words say:
  // the agreed values, or the failure path's throw (the same on every rank).
  int pack(int64_t* buf) const;
  void settle(MPI_Comm comm, int rank, const int64_t* buf);
  [[noreturn]] void throw_compare_mismatch(MPI_Comm comm, int rank, int64_t hmin, int64_t hmax);
  [[noreturn]] void throw_remote_failure(MPI_Comm comm, int rank, int failing_rank);
  [[noreturn]] void throw_mismatch(MPI_Comm comm, int rank, int slot, int64_t vmin, int64_t vmax);

  int code_ = ISTHMUS_OK;
  std::string message_;
  int nslots_ = 0;
  uint64_t combined_ = 0;  // the combined hash of the compared values
  Slot slots_[kMaxMatches];
  std::optional<int64_t> agreed_[kMaxMatches];
  bool use_checksum_ = false;
  uint64_t checksum_ = 0;  // this rank's contribution; after conclude, the sum over all ranks
};

// A 62-bit hash of an array, for Agreement::match_hash.
uint64_t hash_values(const int* values, int64_t n);

}  // namespace isthmus
