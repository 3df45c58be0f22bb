// Errors inside the C++ core are exceptions carrying a public error code and a message that
// names what, where and why; the C API turns them into return codes and a per-context message.
#pragma once
#include <mpi.h>

#include <sstream>
#include <stdexcept>
#include <string>

#include "isthmus.h"

namespace isthmus {

class Error : public std::runtime_error {
 public:
  Error(int code, const std::string& what) : std::runtime_error(what), code_(code) {}
  int code() const { return code_; }

 private:
  int code_;
};

// Builds a message from streamable parts: fail(ISTHMUS_ERR_ARG, "field ", i, " has ", n, " levels")
template <typename... Parts>
[[noreturn]] void fail(int code, const Parts&... parts) {
  std::ostringstream os;
  (os << ... << parts);
  throw Error(code, os.str());
}

inline void check_mpi(int rc, const char* call) {
  if (rc != MPI_SUCCESS) {
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(rc, text, &len);
    // the library's waiting wrappers (base/wait.h) stand for the MPI call of the same name
    const std::string c = std::string(call).rfind("wmpi::", 0) == 0 ? "MPI_" + std::string(call + 6) : call;
    fail(ISTHMUS_ERR_MPI, c, " failed: ", std::string(text, len));
  }
}

}  // namespace isthmus

#define ISTHMUS_MPI(call) ::isthmus::check_mpi((call), #call)
