#include "base/comm.h"

#include "base/error.h"

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

}  // namespace isthmus
