// How the library waits for MPI: every blocking call it makes goes through here.
//
// MPI's own blocking calls poll: a waiting rank keeps its core (Open MPI's mpi_yield_when_idle
// only lets others run between polls). Where the ranks outnumber the node's cores, a rank that
// waits long for another is mostly keeping that rank off a shared core (under Linux's EEVDF
// scheduler a yield between polls may not give the core away for a whole slice). So there a
// wait polls for kSpinSeconds (1 ms, yielding between polls), then naps between polls, and each
// blocking collective runs as its nonblocking twin with such a wait (WaitPolicy::Sleep);
// elsewhere the plain MPI call runs (Block). ISTHMUS_WAIT=auto (the default: Sleep where the
// launcher's count of ranks on the node, OMPI_COMM_WORLD_LOCAL_SIZE, MPI_LOCALNRANKS or
// SLURM_NTASKS_PER_NODE, exceeds the cores the process may use), block or sleep. Measured with
// the OASIS toy on 2 cores (docs/results/oasis.md): at 2 + 2 ranks round trips of 0.19 ms against
// 0.3-0.78 ms with MPI's polling (half the runs stuck at 1 ms), at 4 + 4 alike. Under SimGrid
// SMPI the plain call always runs (a polling loop would cost simulated events).
//
// The functions have the signatures and return codes of the MPI calls they stand for
// (wmpi::Allreduce for MPI_Allreduce, ...), so a call site reads as the MPI call it is.
#pragma once
#include <mpi.h>

namespace isthmus {

enum class WaitPolicy { Block, Sleep };

// The policy of this process (decided at the first call).
WaitPolicy wait_policy();
// The rule: setting is ISTHMUS_WAIT's value (null: auto); ranks_on_node and cores 0 if unknown
// (then auto blocks).
WaitPolicy wait_policy_for(const char* setting, int ranks_on_node, int cores);
// Tests only: sets the policy (to restore, set the one wait_policy() gave before).
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
int Reduce_scatter(const void* sbuf, void* rbuf, const int* rcounts, MPI_Datatype type, MPI_Op op,
                   MPI_Comm comm);
int Alltoall(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf, int rcount, MPI_Datatype rtype,
             MPI_Comm comm);
int Alltoallv(const void* sbuf, const int* scounts, const int* sdispls, MPI_Datatype stype, void* rbuf,
              const int* rcounts, const int* rdispls, MPI_Datatype rtype, MPI_Comm comm);

}  // namespace wmpi
}  // namespace isthmus
