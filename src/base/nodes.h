// Which node each rank of a communicator runs on: learnt once per communicator and kept with it.
//
// A mapping asks whether its ranks span several nodes (its node stage, remap/mapping.h) each
// time one is built; learning it costs two collectives (MPI_Comm_split_type, then a count of the
// nodes), which on a machine of few cores cost as much as the rest of a small mapping's set-up.
// Nodes::of learns it at the first call for a communicator and keeps it as an MPI attribute;
// a caller that already knows (the coupler, from the one allgather of its start) attaches it to
// the communicators it creates, so that no collective is made at all.
#pragma once
#include <mpi.h>

#include <cstdint>
#include <utility>
#include <vector>

namespace isthmus {

struct Nodes {
  int count = 1;   // distinct nodes among the communicator's ranks
  int leader = 0;  // the lowest rank of this rank's node (in the communicator): the node's name

  // Collective over comm at the first call for it (unless attached): the ranks that share
  // memory (MPI_COMM_TYPE_SHARED). Later calls are local.
  static const Nodes& of(MPI_Comm comm);
  // Nodes of consecutive groups of ranks_per_node ranks (a simulated platform's, tests on one
  // host): local.
  static Nodes blocks(MPI_Comm comm, int ranks_per_node);
  // From the ranks' node names (equal names: one node; e.g. hashes of MPI_Get_processor_name
  // gathered by the caller) as runs of consecutive ranks of comm: (first rank, name), sorted by
  // rank, the first at rank 0: local, O(runs). Attaches the result to comm and returns it.
  static const Nodes& attach_runs(MPI_Comm comm, const std::vector<std::pair<int, uint64_t>>& runs);
};

// A name of this process's node for Nodes::attach_runs: a hash of MPI_Get_processor_name.
uint64_t node_name_hash();

}  // namespace isthmus
