// What the opaque C handles hold. Every handle shares its context's state, so a message from
// any call lands in the context that made the handle, and destruction order does not matter.
#pragma once
#include <algorithm>
#include <cstdint>
#include <memory>
#include <new>
#include <string>
#include <utility>

#include "base/error.h"
#include "index/index_list.h"
#include "isthmus.h"
#include "transfer/redist.h"
#include "xmap/xmap.h"

namespace isthmus {

struct ContextState {
  MPI_Comm comm = MPI_COMM_NULL;  // MPI_COMM_NULL: creation failed; only last_error is usable
  int rank = 0;
  int size = 1;
  std::string last_error;
  ~ContextState() {
    if (comm != MPI_COMM_NULL) MPI_Comm_free(&comm);
  }
  // The communicator, or an error if the context's creation failed.
  MPI_Comm usable_comm() const {
    if (comm == MPI_COMM_NULL)
      fail(ISTHMUS_ERR_ARG, "the context is not usable: its creation failed (", creation_error, ")");
    return comm;
  }
  std::string creation_error;
};

// snprintf's contract for text handed to C: as much as fits, always NUL-terminated, the full
// length reported (when length is not NULL).
inline void copy_text(const std::string& s, char* out, int64_t size, int64_t* length = nullptr) {
  if (length) *length = static_cast<int64_t>(s.size());
  if (!out || size <= 0) return;
  const size_t n = std::min(s.size(), static_cast<size_t>(size - 1));
  std::copy(s.begin(), s.begin() + static_cast<std::ptrdiff_t>(n), out);
  out[n] = '\0';
}

// Runs f; turns its exceptions into an error code and a message (ISTHMUS_OK and "" if none).
template <typename F>
int run_caught(F&& f, std::string& msg) {
  try {
    f();
    return ISTHMUS_OK;
  } catch (const Error& e) {
    msg = e.what();
    return e.code();
  } catch (const std::bad_alloc&) {
    msg = "out of memory";
    return ISTHMUS_ERR_NOMEM;
  } catch (const std::exception& e) {
    msg = e.what();
    return ISTHMUS_ERR_INTERNAL;
  }
}

// Runs f; turns exceptions into an error code and the context's message, prefixed with the rank
// and the C function, so every message says where.
template <typename F>
int guarded(ContextState* ctx, const char* function, F&& f) {
  std::string msg;
  const int code = run_caught(std::forward<F>(f), msg);
  if (code != ISTHMUS_OK && ctx)
    ctx->last_error = "isthmus: rank " + std::to_string(ctx->rank) + ": " + function + ": " + msg;
  return code;
}

// The public view of a communication object's counters.
inline void to_public(const trace::Counters& c, isthmus_trace_counters* out) {
  out->exchanges = c.exchanges;
  out->messages_sent = c.messages_sent;
  out->messages_received = c.messages_received;
  out->bytes_sent = c.bytes_sent;
  out->bytes_received = c.bytes_received;
  out->wait_seconds = c.wait_seconds;
  out->total_seconds = c.total_seconds;
}

}  // namespace isthmus

struct isthmus_context {
  std::shared_ptr<isthmus::ContextState> state;
};
struct isthmus_decomp {
  std::shared_ptr<isthmus::ContextState> ctx;
  isthmus::IndexList list;
};
struct isthmus_xmap {
  std::shared_ptr<isthmus::ContextState> ctx;
  std::shared_ptr<isthmus::Xmap> xmap;
  // The ranks that agree on calls made with this map (docs/errors.md): the context's
  // communicator for a map built over it, so that a rank given a NULL map still meets its
  // peers; the merged communicator of an intercommunicator map.
  MPI_Comm agreement_comm() const { return inter ? xmap->comm() : ctx->comm; }
  bool inter = false;
};
struct isthmus_redist {
  std::shared_ptr<isthmus::ContextState> ctx;
  std::unique_ptr<isthmus::Redist> redist;
};

// An argument that must not be NULL; the message names it.
template <typename T>
void require(const T* p, const char* what) {
  if (!p) isthmus::fail(ISTHMUS_ERR_ARG, what, " is NULL");
}

// Null-handle checks that cannot write to a context (there is none): they return ISTHMUS_ERR_ARG.
#define ISTHMUS_REQUIRE_HANDLE(h) \
  do {                            \
    if (!(h)) return ISTHMUS_ERR_ARG; \
  } while (0)
