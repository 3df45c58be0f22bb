#include "trace/counters.h"

#include <cstdlib>
#include <cstring>

namespace isthmus::trace {

bool enabled_by_environment() {
  const char* v = std::getenv("ISTHMUS_TRACE");
  return v && std::strcmp(v, "") != 0 && std::strcmp(v, "0") != 0;
}

}  // namespace isthmus::trace
