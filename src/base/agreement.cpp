#include "base/agreement.h"

#include <algorithm>
#include <climits>
#include <cstring>

#include "base/hash.h"
#include "base/wait.h"

namespace isthmus {

namespace {

// What the failing rank broadcasts in the failure path: its code and its message.
struct FailureNote {
  int64_t code;
  char message[1016];
};

// mix64 kept to 62 bits: never INT64_MIN (the failure mark) nor INT64_MAX (no say).
int64_t mix62(uint64_t x) { return static_cast<int64_t>(mix64(x) >> 2); }

// The most words of the reduction: the combined hash (2), two per carried slot, the checksum.
constexpr int kMaxWords = 2 + 2 * Agreement::kMaxMatches + 1;

// The reduction with a checksum: MIN over all words but the last, wrapping SUM over the last.
// On one contiguous element, so that MPI never splits it; its size gives the word count.
void min_and_checksum(void* in, void* inout, int* len, MPI_Datatype* type) {
  int bytes = 0;
  MPI_Type_size(*type, &bytes);
  const int words = bytes / static_cast<int>(sizeof(int64_t));
  for (int e = 0; e < *len; ++e) {
    int64_t a[kMaxWords], b[kMaxWords];
    char* pin = static_cast<char*>(in) + size_t(e) * size_t(bytes);
    char* pio = static_cast<char*>(inout) + size_t(e) * size_t(bytes);
    std::memcpy(a, pin, size_t(bytes));
    std::memcpy(b, pio, size_t(bytes));
    for (int i = 0; i + 1 < words; ++i) b[i] = std::min(a[i], b[i]);
    b[words - 1] = static_cast<int64_t>(static_cast<uint64_t>(a[words - 1]) +
                                        static_cast<uint64_t>(b[words - 1]));
    std::memcpy(pio, b, size_t(bytes));
  }
}

// MPI_Allreduce of buf[0 .. words) with min_and_checksum; the type and the operation live for
// this call only, and are freed on every path.
void allreduce_with_checksum(int64_t* buf, int words, MPI_Comm comm) {
  struct TypeAndOp {
    MPI_Datatype type = MPI_DATATYPE_NULL;
    MPI_Op op = MPI_OP_NULL;
    ~TypeAndOp() {
      if (op != MPI_OP_NULL) MPI_Op_free(&op);
      if (type != MPI_DATATYPE_NULL) MPI_Type_free(&type);
    }
  } t;
  ISTHMUS_MPI(MPI_Type_contiguous(words, MPI_INT64_T, &t.type));
  ISTHMUS_MPI(MPI_Type_commit(&t.type));
  ISTHMUS_MPI(MPI_Op_create(min_and_checksum, 1, &t.op));
  ISTHMUS_MPI(wmpi::Allreduce(MPI_IN_PLACE, buf, 1, t.type, t.op, comm));
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

int Agreement::add_slot(const char* what, Kind kind, bool hashed, std::optional<int64_t> value) {
  if (nslots_ == kMaxMatches) {
    record(ISTHMUS_ERR_INTERNAL, std::string("agreement: more than ") +
                                     std::to_string(kMaxMatches) + " matched values (" + what + ")");
    return -1;
  }
  slots_[nslots_] = {what, kind, hashed, value};
  if (kind == Kind::Compare) {
    // The combined hash of every compared value, in registration order; "unknown" hashes as
    // a value of its own, so a rank that has no say still differs from one that has.
    const uint64_t v = value ? static_cast<uint64_t>(*value) : 0x5bd1e9955bd1e995ULL;
    combined_ = static_cast<uint64_t>(
        mix62(combined_ ^ mix62(v + static_cast<uint64_t>(nslots_) + (value ? 0 : 1))));
  }
  return nslots_++;
}

void Agreement::match(const char* what, std::optional<int64_t> value) {
  add_slot(what, Kind::Compare, false, value);
}

void Agreement::match_hash(const char* what, std::optional<uint64_t> hash) {
  std::optional<int64_t> v;
  if (hash) v = static_cast<int64_t>(*hash & ((uint64_t{1} << 62) - 1));
  add_slot(what, Kind::Compare, true, v);
}

int Agreement::value(const char* what, std::optional<int64_t> value) {
  return add_slot(what, Kind::Value, false, value);
}

int Agreement::maximum(const char* what, std::optional<int64_t> value) {
  return add_slot(what, Kind::Maximum, false, value);
}

std::optional<int64_t> Agreement::agreed(int i) const {
  if (i < 0 || i >= kMaxMatches) return std::nullopt;
  return agreed_[i];
}

void Agreement::conclude_vouched() {
  if (failed())
    fail(ISTHMUS_ERR_INTERNAL, "a check its caller vouched for failed: ", message_);
  for (int i = 0; i < nslots_; ++i)
    if (slots_[i].kind != Kind::Compare) agreed_[i] = slots_[i].value;
}

void Agreement::conclude(MPI_Comm comm) {
  if (comm == MPI_COMM_NULL) {
    if (failed()) throw Error(code_, message_);
    fail(ISTHMUS_ERR_INTERNAL, "agreement without a communicator");
  }
  int rank = 0, size = 1;
  ISTHMUS_MPI(MPI_Comm_rank(comm, &rank));
  ISTHMUS_MPI(MPI_Comm_size(comm, &size));

  int64_t buf[kMaxWords];
  int words = pack(buf);
  if (use_checksum_) buf[words++] = static_cast<int64_t>(checksum_);
  if (size > 1) {
    if (use_checksum_)
      allreduce_with_checksum(buf, words, comm);
    else
      ISTHMUS_MPI(wmpi::Allreduce(MPI_IN_PLACE, buf, words, MPI_INT64_T, MPI_MIN, comm));
  }
  if (use_checksum_) checksum_ = static_cast<uint64_t>(buf[words - 1]);
  settle(comm, rank, buf);
}

void Agreement::conclude_together(MPI_Comm comm, const std::vector<Agreement*>& agreements) {
  for (const Agreement* a : agreements)
    if (a->use_checksum_) fail(ISTHMUS_ERR_INTERNAL, "agreements concluded together take no checksum");
  if (comm == MPI_COMM_NULL) {
    for (const Agreement* a : agreements)
      if (a->failed()) throw Error(a->code_, a->message_);
    fail(ISTHMUS_ERR_INTERNAL, "agreement without a communicator");
  }
  int rank = 0, size = 1;
  ISTHMUS_MPI(MPI_Comm_rank(comm, &rank));
  ISTHMUS_MPI(MPI_Comm_size(comm, &size));
  std::vector<int64_t> buf(agreements.size() * static_cast<size_t>(kMaxWords));
  std::vector<int> offsets;
  int words = 0;
  for (const Agreement* a : agreements) {
    offsets.push_back(words);
    words += a->pack(buf.data() + words);
  }
  if (size > 1 && words > 0)
    ISTHMUS_MPI(wmpi::Allreduce(MPI_IN_PLACE, buf.data(), words, MPI_INT64_T, MPI_MIN, comm));
  for (size_t i = 0; i < agreements.size(); ++i) agreements[i]->settle(comm, rank, buf.data() + offsets[i]);
}

int Agreement::pack(int64_t* buf) const {
  // Words 0 and 1: the combined hash of the compared values as (h, ~h) under MPI_MIN, which
  // gives the smallest and (through ~) the largest; ~h never overflows, unlike -h. A failed
  // rank puts INT64_MIN in word 0, which no hash is (hashes have 62 bits). Then (v, ~v) per
  // carried slot (value(): compared among the ranks that know it; maximum(): only ~v counts);
  // a rank with no say contributes INT64_MAX, which is neutral. The checksum, if used, is one
  // more word, summed. The message is as small as the call allows: 16 bytes for a call that
  // only compares, since a simulated reduction costs more with every word.
  int words = 2;
  buf[0] = failed() ? INT64_MIN : static_cast<int64_t>(combined_);
  buf[1] = failed() ? INT64_MAX : ~static_cast<int64_t>(combined_);
  for (int i = 0; i < nslots_; ++i) {
    if (slots_[i].kind == Kind::Compare) continue;
    const bool known = slots_[i].value.has_value() && !failed();
    buf[words++] = known && slots_[i].kind == Kind::Value ? *slots_[i].value : INT64_MAX;
    buf[words++] = known ? ~*slots_[i].value : INT64_MAX;
  }
  return words;
}

void Agreement::settle(MPI_Comm comm, int rank, const int64_t* buf) {
  if (buf[0] == INT64_MIN) {  // some rank failed: find the lowest (failure path only)
    int lowest = failed() ? rank : INT_MAX;
    ISTHMUS_MPI(wmpi::Allreduce(MPI_IN_PLACE, &lowest, 1, MPI_INT, MPI_MIN, comm));
    throw_remote_failure(comm, rank, lowest);
  }
  if (buf[0] != ~buf[1]) throw_compare_mismatch(comm, rank, buf[0], ~buf[1]);
  int w = 2;
  for (int i = 0; i < nslots_; ++i) {
    if (slots_[i].kind == Kind::Compare) {
      agreed_[i] = slots_[i].value;  // equal on every rank
      continue;
    }
    const int64_t vmin = buf[w], vmax = ~buf[w + 1];
    w += 2;
    if (slots_[i].kind == Kind::Maximum) {
      if (buf[w - 1] == INT64_MAX) agreed_[i].reset();
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

void Agreement::throw_compare_mismatch(MPI_Comm comm, int rank, int64_t hmin, int64_t hmax) {
  // Failure path only: every compared value in full, to name the first that differs.
  int64_t detail[2 * kMaxMatches];
  for (int i = 0; i < kMaxMatches; ++i) {
    const bool known = i < nslots_ && slots_[i].kind == Kind::Compare && slots_[i].value;
    detail[2 * i] = known ? *slots_[i].value : INT64_MAX;
    detail[2 * i + 1] = known ? ~*slots_[i].value : INT64_MAX;
  }
  ISTHMUS_MPI(wmpi::Allreduce(MPI_IN_PLACE, detail, 2 * kMaxMatches, MPI_INT64_T, MPI_MIN, comm));
  for (int i = 0; i < kMaxMatches; ++i)
    if (detail[2 * i] < ~detail[2 * i + 1]) throw_mismatch(comm, rank, i, detail[2 * i], ~detail[2 * i + 1]);
  // Only "known here, unknown there" differs: name two ranks of different hashes.
  const int64_t mine = static_cast<int64_t>(combined_);
  int who[2] = {mine == hmin ? rank : INT_MAX, mine == hmax ? rank : INT_MAX};
  ISTHMUS_MPI(wmpi::Allreduce(MPI_IN_PLACE, who, 2, MPI_INT, MPI_MIN, comm));
  std::string names;
  for (int i = 0; i < nslots_; ++i)
    if (slots_[i].kind == Kind::Compare) names += std::string(names.empty() ? "" : ", ") + slots_[i].what;
  fail(ISTHMUS_ERR_ARG, "the arguments that must be the same on every rank (", names,
       ") differ: ranks ", std::min(who[0], who[1]), " and ", std::max(who[0], who[1]),
       " pass different ones");
}

void Agreement::throw_remote_failure(MPI_Comm comm, int rank, int failing_rank) {
  // Only the failure path pays for this broadcast.
  FailureNote note{};
  if (rank == failing_rank) {
    note.code = code_;
    std::strncpy(note.message, message_.c_str(), sizeof note.message - 1);
  }
  ISTHMUS_MPI(wmpi::Bcast(&note, static_cast<int>(sizeof note), MPI_BYTE, failing_rank, comm));
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
  ISTHMUS_MPI(wmpi::Allreduce(MPI_IN_PLACE, who, 2, MPI_INT, MPI_MIN, comm));
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
