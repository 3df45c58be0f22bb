// The names of the public error codes; here, at the bottom of the layers, so that every layer's
// messages can name a code.
#include "base/error.h"

extern "C" {

const char* isthmus_error_name(int code) {
  switch (code) {
    case ISTHMUS_OK: return "ISTHMUS_OK";
    case ISTHMUS_ERR_ARG: return "ISTHMUS_ERR_ARG";
    case ISTHMUS_ERR_DECOMP: return "ISTHMUS_ERR_DECOMP";
    case ISTHMUS_ERR_UNOWNED: return "ISTHMUS_ERR_UNOWNED";
    case ISTHMUS_ERR_MPI: return "ISTHMUS_ERR_MPI";
    case ISTHMUS_ERR_REMOTE: return "ISTHMUS_ERR_REMOTE";
    case ISTHMUS_ERR_CONFIG: return "ISTHMUS_ERR_CONFIG";
    case ISTHMUS_ERR_FILE: return "ISTHMUS_ERR_FILE";
    case ISTHMUS_ERR_NOMEM: return "ISTHMUS_ERR_NOMEM";
    case ISTHMUS_ERR_INTERNAL: return "ISTHMUS_ERR_INTERNAL";
    case ISTHMUS_ERR_TIMEOUT: return "ISTHMUS_ERR_TIMEOUT";
  }
  return "ISTHMUS_ERR_UNKNOWN";
}

}  // extern "C"
