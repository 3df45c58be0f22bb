#include "base/comm.h"

#include "base/error.h"
#include "base/wait.h"

namespace isthmus {

MPI_Comm duplicate(MPI_Comm comm) {
  MPI_Group group = MPI_GROUP_NULL;
  ISTHMUS_MPI(MPI_Comm_group(comm, &group));
  MPI_Comm out = MPI_COMM_NULL;
  const int rc = MPI_Comm_create(comm, group, &out);
  MPI_Group_free(&group);
  ISTHMUS_MPI(rc);
  MPI_Errhandler handler = MPI_ERRHANDLER_NULL;
  ISTHMUS_MPI(MPI_Comm_get_errhandler(comm, &handler));
  ISTHMUS_MPI(MPI_Comm_set_errhandler(out, handler));
  MPI_Errhandler_free(&handler);
  return out;
}

Duplicates::Duplicates(MPI_Comm comm, int count)
    : parent_(comm), comms_(static_cast<size_t>(count), MPI_COMM_NULL),
      requests_(static_cast<size_t>(count), MPI_REQUEST_NULL) {
  for (size_t k = 0; k < comms_.size(); ++k) {
#ifdef ISTHMUS_SMPI
    comms_[k] = duplicate(comm);
#else
    ISTHMUS_MPI(MPI_Comm_idup(comm, &comms_[k], &requests_[k]));
#endif
  }
}

Duplicates::~Duplicates() {
  for (size_t k = 0; k < comms_.size(); ++k) {
    if (requests_[k] != MPI_REQUEST_NULL) MPI_Wait(&requests_[k], MPI_STATUS_IGNORE);
    if (comms_[k] != MPI_COMM_NULL) MPI_Comm_free(&comms_[k]);
  }
}

MPI_Comm Duplicates::take(int k) {
  const size_t i = static_cast<size_t>(k);
  if (i >= comms_.size() || (comms_[i] == MPI_COMM_NULL && requests_[i] == MPI_REQUEST_NULL))
    fail(ISTHMUS_ERR_INTERNAL, "duplicate ", k, " of ", comms_.size(), " taken twice or never made");
  if (requests_[i] != MPI_REQUEST_NULL) {
    ISTHMUS_MPI(wmpi::Wait(&requests_[i], MPI_STATUS_IGNORE));
    MPI_Errhandler handler = MPI_ERRHANDLER_NULL;  // as duplicate(): the parent's
    ISTHMUS_MPI(MPI_Comm_get_errhandler(parent_, &handler));
    ISTHMUS_MPI(MPI_Comm_set_errhandler(comms_[i], handler));
    MPI_Errhandler_free(&handler);
  }
  MPI_Comm out = comms_[i];
  comms_[i] = MPI_COMM_NULL;
  return out;
}

}  // namespace isthmus
