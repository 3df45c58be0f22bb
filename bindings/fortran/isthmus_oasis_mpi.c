/* The coupler calls of mod_oasis that carry an MPI communicator. Fortran's communicators are
 * integers (MPI_Fint), C's are MPI_Comm; only C can convert between them (MPI_Comm_f2c and
 * MPI_Comm_c2f are macros in some MPI libraries), and isthmus.h's coupler section has no _f
 * twins yet. Everything else mod_oasis calls goes straight to isthmus.h through bind(C). */
#include <isthmus.h>
#include <mpi.h>

int isthmus_oasis_coupler_create(MPI_Fint world, const char* component, const char* config_path,
                                 isthmus_coupler** cpl) {
  /* NULL options: the current directory is the run directory, as OASIS's */
  return isthmus_coupler_create(MPI_Comm_f2c(world), component, config_path, NULL, cpl);
}

int isthmus_oasis_get_local_comm(const isthmus_coupler* cpl, MPI_Fint* comm) {
  MPI_Comm c = MPI_COMM_NULL;
  const int rc = isthmus_coupler_get_local_comm(cpl, &c);
  *comm = MPI_Comm_c2f(c);
  return rc;
}

int isthmus_oasis_get_intracomm(isthmus_coupler* cpl, const char* other, MPI_Fint* comm) {
  MPI_Comm c = MPI_COMM_NULL;
  const int rc = isthmus_coupler_get_intracomm(cpl, other, &c);
  *comm = MPI_Comm_c2f(c);
  return rc;
}

int isthmus_oasis_get_intercomm(isthmus_coupler* cpl, const char* other, MPI_Fint* comm) {
  MPI_Comm c = MPI_COMM_NULL;
  const int rc = isthmus_coupler_get_intercomm(cpl, other, &c);
  *comm = MPI_Comm_c2f(c);
  return rc;
}
