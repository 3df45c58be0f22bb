#include "base/agreement.h"

#include <algorithm>
#include <climits>
#include <cstring>

namespace isthmus {

namespace {

// What the failing rank broadcasts in the failure path: its code and its message.
struct FailureNote {
  int64_t code;
  char message[1016];
};

int64_t mix62(uint64_t x) {  // splitmix64 finaliser, kept to 62 bits (never INT64_MIN/MAX)
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return static_cast<int64_t>((x ^ (x >> 31)) >> 2);
}

// The words of the reduction: slot 0 (lowest failing rank), then two per match.
constexpr int kWords = 1 + 2 * Agreement::kMaxMatches;

// The reduction with a checksum: MIN over the kWords words, wrapping SUM over the one after
// them. On a contiguous type of kWords + 1 int64, so that MPI never splits an element.
void min_and_checksum(void* in, void* inout, int* len, MPI_Datatype*) {
  for (int e = 0; e < *len; ++e) {
    int64_t a[kWords + 1], b[kWords + 1];
    char* pin = static_cast<char*>(in) + size_t(e) * sizeof a;
    char* pio = static_cast<char*>(inout) + size_t(e) * sizeof b;
    std::memcpy(a, pin, sizeof a);
    std::memcpy(b, pio, sizeof b);
    for (int i = 0; i < kWords; ++i) b[i] = std::min(a[i], b[i]);
    b[kWords] = static_cast<int64_t>(static_cast<uint64_t>(a[kWords]) + static_cast<uint64_t>(b[kWords]));
    std::memcpy(pio, b, sizeof b);
  }
}

// MPI_Allreduce of buf[0 .. kWords] with min_and_checksum; the type and the operation live
// for this call only, and are freed on every path.
void allreduce_with_checksum(int64_t* buf, MPI_Comm comm) {
  struct TypeAndOp {
    MPI_Datatype type = MPI_DATATYPE_NULL;
    MPI_Op op = MPI_OP_NULL;
    ~TypeAndOp() {
      if (op != MPI_OP_NULL) MPI_Op_free(&op);
      if (type != MPI_DATATYPE_NULL) MPI_Type_free(&type);
    }
  } t;
  ISTHMUS_MPI(MPI_Type_contiguous(kWords + 1, MPI_INT64_T, &t.type));
  ISTHMUS_MPI(MPI_Type_commit(&t.type));
  ISTHMUS_MPI(MPI_Op_create(min_and_checksum, 1, &t.op));
  ISTHMUS_MPI(MPI_Allreduce(MPI_IN_PLACE, buf, 1, t.type, t.op, comm));
}

}  // namespace

uint64_t hash_values(const int* values, int64_t n) {
  uint64_t h = static_cast<uint64_t>(mix62(static_cast<uint64_t>(n)));
  for (int64_t i = 0; i < n; ++i)
    h = static_cast<uint64_t>(mix62(h ^ static_cast<uint64_t>(static_cast<uint32_t>(values[i]))));
  return h;
}

void Agreement::record(int code, const std::string& message) {
  if (failed()) return;
  code_ = code == ISTHMUS_OK ? ISTHMUS_ERR_INTERNAL : code;
  message_ = message;
}

int Agreement::add_slot(const char* what, bool hashed, std::optional<int64_t> value) {
  if (nslots_ == kMaxMatches) {
    record(ISTHMUS_ERR_INTERNAL, std::string("agreement: more than ") +
                                     std::to_string(kMaxMatches) + " matched values (" + what + ")");
    return -1;
  }
  slots_[nslots_] = {what, hashed, value};
  return nslots_++;
}

void Agreement::match(const char* what, std::optional<int64_t> value) {
  add_slot(what, false, value);
}

void Agreement::match_hash(const char* what, std::optional<uint64_t> hash) {
  std::optional<int64_t> v;
  if (hash) v = static_cast<int64_t>(*hash & ((uint64_t{1} << 62) - 1));
  add_slot(what, true, v);
}

int Agreement::maximum(const char* what, std::optional<int64_t> value) {
  const int i = add_slot(what, false, value);
  if (i >= 0) slots_[i].maximum = true;
  return i;
}

std::optional<int64_t> Agreement::agreed(int i) const {
  if (i < 0 || i >= kMaxMatches) return std::nullopt;
  return agreed_[i];
}

void Agreement::conclude(MPI_Comm comm) {
  if (comm == MPI_COMM_NULL) {
    if (failed()) throw Error(code_, message_);
    fail(ISTHMUS_ERR_INTERNAL, "agreement without a communicator");
  }
  int rank = 0, size = 1;
  ISTHMUS_MPI(MPI_Comm_rank(comm, &rank));
  ISTHMUS_MPI(MPI_Comm_size(comm, &size));

  // Slot 0: the lowest failing rank. Then per match (v, ~v) under MPI_MIN gives the smallest
  // value and (through ~) the largest; ~v never overflows, unlike -v. A rank with no say
  // contributes INT64_MAX to both, which is neutral.
  // A maximum() slot contributes only its ~v (the first word stays neutral). The checksum, if
  // used, is one more word, summed.
  int64_t buf[kWords + 1];
  buf[0] = failed() ? rank : INT64_MAX;
  for (int i = 0; i < kMaxMatches; ++i) {
    const bool known = i < nslots_ && slots_[i].value.has_value();
    const bool max_only = i < nslots_ && slots_[i].maximum;
    buf[1 + 2 * i] = known && !max_only ? *slots_[i].value : INT64_MAX;
    buf[2 + 2 * i] = known ? ~*slots_[i].value : INT64_MAX;
  }
  buf[kWords] = static_cast<int64_t>(checksum_);
  if (size > 1) {
    if (use_checksum_)
      allreduce_with_checksum(buf, comm);
    else
      ISTHMUS_MPI(MPI_Allreduce(MPI_IN_PLACE, buf, kWords, MPI_INT64_T, MPI_MIN, comm));
  }
  checksum_ = static_cast<uint64_t>(buf[kWords]);

  if (buf[0] != INT64_MAX) throw_remote_failure(comm, rank, static_cast<int>(buf[0]));
  for (int i = 0; i < kMaxMatches; ++i) {
    const int64_t vmin = buf[1 + 2 * i], vmax = ~buf[2 + 2 * i];
    if (i < nslots_ && slots_[i].maximum) {
      if (buf[2 + 2 * i] == INT64_MAX) agreed_[i].reset();
      else agreed_[i] = vmax;
    } else if (vmin > vmax) {
      agreed_[i].reset();  // no rank knew it
    } else if (vmin == vmax) {
      agreed_[i] = vmin;
    } else {
      throw_mismatch(comm, rank, i, vmin, vmax);
    }
  }
}

void Agreement::throw_remote_failure(MPI_Comm comm, int rank, int failing_rank) {
  // Only the failure path pays for this broadcast.
  FailureNote note{};
  if (rank == failing_rank) {
    note.code = code_;
    std::strncpy(note.message, message_.c_str(), sizeof note.message - 1);
  }
  ISTHMUS_MPI(MPI_Bcast(&note, static_cast<int>(sizeof note), MPI_BYTE, failing_rank, comm));
  note.message[sizeof note.message - 1] = '\0';
  const int code = static_cast<int>(note.code);
  if (rank == failing_rank || (failed() && code_ == code)) throw Error(code, message_);
  std::string msg = "failed on rank " + std::to_string(failing_rank) + ": " + note.message;
  if (failed()) msg += " (and on this rank: " + message_ + ")";
  throw Error(code, msg);
}

void Agreement::throw_mismatch(MPI_Comm comm, int rank, int slot, int64_t vmin, int64_t vmax) {
  // The lowest ranks holding the smallest and the largest value: a second reduction, paid only
  // on the failure path.
  const bool known = slot < nslots_ && slots_[slot].value.has_value();
  const int64_t mine = known ? *slots_[slot].value : 0;
  int who[2] = {known && mine == vmin ? rank : INT_MAX, known && mine == vmax ? rank : INT_MAX};
  ISTHMUS_MPI(MPI_Allreduce(MPI_IN_PLACE, who, 2, MPI_INT, MPI_MIN, comm));
  const char* what = slot < nslots_ ? slots_[slot].what : "a matched value";
  const bool hashed = slot < nslots_ && slots_[slot].hashed;
  std::string msg = std::string(what) + " must be the same on every rank, but ";
  if (hashed) {
    msg += "ranks " + std::to_string(std::min(who[0], who[1])) + " and " +
           std::to_string(std::max(who[0], who[1])) + " pass different ones";
  } else {
    msg += "rank " + std::to_string(who[0]) + " passes " + std::to_string(vmin) + " and rank " +
           std::to_string(who[1]) + " passes " + std::to_string(vmax);
    if (known && mine != vmin && mine != vmax) msg += " (this rank: " + std::to_string(mine) + ")";
  }
  throw Error(ISTHMUS_ERR_ARG, msg);
}

}  // namespace isthmus
