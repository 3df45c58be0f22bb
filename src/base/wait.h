// How the library waits for MPI: every blocking call it makes goes through here.
//
// MPI's own blocking calls poll: a waiting rank keeps its core (Open MPI's mpi_yield_when_idle
// only lets others run between polls). Where the node's cores are also wanted by other work
// (other jobs, a busy CI machine) the waiting ranks take CPU time from them and from the ranks
// of this job that work. ISTHMUS_WAIT=sleep makes a wait poll for kSpinSeconds (yielding the
// core between polls), then nap between polls, and runs each blocking collective as its
// nonblocking twin with such a wait. Measured with the OASIS toy at 4 + 4 ranks on 2 cores
// (docs/results/oasis.md, "Waiting: polling or sleeping"): with two other jobs on the cores the
// set-up took 32 ms with sleeping waits against 45 ms with MPI's; on otherwise idle cores,
// where only this job's ranks compete, MPI's polling is faster (16.7 against 18.2 ms, round
// trips 0.31 against 0.40 ms), so it stays the default (ISTHMUS_WAIT=block, or unset). Under
// SimGrid SMPI the plain call always runs (a polling loop would cost simulated events).
//
// The functions have the signatures and return codes of the MPI calls they stand for
// (wmpi::Allreduce for MPI_Allreduce, ...), so a call site reads as the MPI call it is.
#pragma once
#include <mpi.h>

namespace isthmus {

enum class WaitPolicy { Block, Sleep };

// The policy of this process (decided at the first call).
WaitPolicy wait_policy();
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
int Alltoall(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf, int rcount, MPI_Datatype rtype,
             MPI_Comm comm);
int Alltoallv(const void* sbuf, const int* scounts, const int* sdispls, MPI_Datatype stype, void* rbuf,
              const int* rcounts, const int* rdispls, MPI_Datatype rtype, MPI_Comm comm);

}  // namespace wmpi
}  // namespace isthmus
