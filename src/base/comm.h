// Communicators the library creates for its own messages.
#pragma once
#include <mpi.h>

namespace isthmus {

// Collective over comm: a new communicator with the same ranks in the same order and the same
// error handler (a private context for one object's messages, as MPI_Comm_dup gives).
//
// Made with MPI_Comm_create from comm's own group rather than MPI_Comm_dup: the same collective
// on a real MPI (a context id agreed over comm), but it shares comm's group where MPI_Comm_dup
// copies it. SimGrid's SMPI keeps an O(size) group per communicator and rank, all in one
// process, so every copy costs O(P^2) memory over a simulated run: at 16,384 ranks each
// duplicate of a world-sized communicator would cost 3 GB.
MPI_Comm duplicate(MPI_Comm comm);

}  // namespace isthmus
