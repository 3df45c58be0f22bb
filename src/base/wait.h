// How the library waits for MPI: every blocking call it makes goes through here.
//
// MPI's own blocking calls poll: a waiting rank keeps its core busy (Open MPI's
// mpi_yield_when_idle only lets others run between polls). On a node with more ranks than
// cores (a laptop, a CI machine, two components sharing a node's cores) the waiting ranks then
// take CPU time from the ranks that work, and every collective and message waits for a rank
// the scheduler has not run yet (docs/results/oasis.md, "Waiting on an oversubscribed node").
//
// So the policy: on an oversubscribed node (more ranks of this job on the node than online
// cores) a wait polls for kSpinSeconds, then sleeps kNapNanoseconds between polls, and each
// blocking collective runs as its nonblocking twin plus such a wait. Otherwise (and always
// under SimGrid SMPI, where a polling loop costs simulated events) the plain blocking MPI call
// runs. ISTHMUS_WAIT=block or sleep forces either policy; auto (the default) decides from the
// launcher's count of ranks on the node (OMPI_COMM_WORLD_LOCAL_SIZE, MPI_LOCALNRANKS) and
// sysconf(_SC_NPROCESSORS_ONLN), read once per process.
//
// The functions have the signatures and return codes of the MPI calls they stand for
// (wmpi::Allreduce for MPI_Allreduce, ...), so a call site reads as the MPI call it is.
#pragma once
#include <mpi.h>

namespace isthmus {

enum class WaitPolicy { Block, Sleep };

// The policy of this process (decided at the first call).
WaitPolicy wait_policy();
// Tests only: sets the policy (std::nullopt-like reset: pass the decided one back).
void set_wait_policy_for_tests(WaitPolicy p);

namespace wmpi {

int Wait(MPI_Request* req, MPI_Status* status);
int Waitall(int n, MPI_Request* reqs, MPI_Status* statuses);
int Waitsome(int n, MPI_Request* reqs, int* outcount, int* indices, MPI_Status* statuses);
int Recv(void* buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm, MPI_Status* status);
int Send(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm);
int Sendrecv(const void* sbuf, int scount, MPI_Datatype stype, int dest, int stag, void* rbuf, int rcount,
             MPI_Datatype rtype, int source, int rtag, MPI_Comm comm, MPI_Status* status);
int Probe(int source, int tag, MPI_Comm comm, MPI_Status* status);
int Barrier(MPI_Comm comm);
int Bcast(void* buf, int count, MPI_Datatype type, int root, MPI_Comm comm);
int Allreduce(const void* sbuf, void* rbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm);
int Reduce(const void* sbuf, void* rbuf, int count, MPI_Datatype type, MPI_Op op, int root, MPI_Comm comm);
int Exscan(const void* sbuf, void* rbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm);
int Allgather(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf, int rcount, MPI_Datatype rtype,
              MPI_Comm comm);
int Allgatherv(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf, const int* rcounts,
               const int* displs, MPI_Datatype rtype, MPI_Comm comm);
int Gather(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf, int rcount, MPI_Datatype rtype,
           int root, MPI_Comm comm);
int Gatherv(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf, const int* rcounts,
            const int* displs, MPI_Datatype rtype, int root, MPI_Comm comm);
int Alltoall(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf, int rcount, MPI_Datatype rtype,
             MPI_Comm comm);
int Alltoallv(const void* sbuf, const int* scounts, const int* sdispls, MPI_Datatype stype, void* rbuf,
              const int* rcounts, const int* rdispls, MPI_Datatype rtype, MPI_Comm comm);

}  // namespace wmpi
}  // namespace isthmus
