// A string (any bytes) broadcast from one rank: its length, then its bytes.
#pragma once
#include <mpi.h>

#include <cstdint>
#include <string>

#include "base/error.h"
#include "base/wait.h"

namespace isthmus {

// Collective over comm: every rank ends with root's s.
inline void broadcast(MPI_Comm comm, std::string& s, int root = 0) {
  int64_t n = static_cast<int64_t>(s.size());
  ISTHMUS_MPI(wmpi::Bcast(&n, 1, MPI_INT64_T, root, comm));
  s.resize(static_cast<size_t>(n));
  if (n > 0) ISTHMUS_MPI(wmpi::Bcast(s.data(), static_cast<int>(n), MPI_CHAR, root, comm));
}

}  // namespace isthmus
