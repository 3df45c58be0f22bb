#include "base/nodes.h"

#include <algorithm>
#include <iterator>
#include <string>
#include <unordered_set>

#include "base/comm.h"
#include "base/error.h"
#include "base/hash.h"
#include "base/wait.h"

namespace isthmus {

const Nodes& Nodes::of(MPI_Comm comm) {
  return attached<Nodes>(comm, [&] {
    int me = 0;
    ISTHMUS_MPI(MPI_Comm_rank(comm, &me));
    MPI_Comm shared = MPI_COMM_NULL;
    ISTHMUS_MPI(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, me, MPI_INFO_NULL, &shared));
    int shared_rank = 0;
    ISTHMUS_MPI(MPI_Comm_rank(shared, &shared_rank));
    // the node's lowest rank in comm: rank 0 of shared (ranks kept in comm's order), translated
    MPI_Group sg, cg;
    ISTHMUS_MPI(MPI_Comm_group(shared, &sg));
    ISTHMUS_MPI(MPI_Comm_group(comm, &cg));
    const int zero = 0;
    Nodes n;
    ISTHMUS_MPI(MPI_Group_translate_ranks(sg, 1, &zero, cg, &n.leader));
    MPI_Group_free(&sg);
    MPI_Group_free(&cg);
    MPI_Comm_free(&shared);
    const int leads = shared_rank == 0 ? 1 : 0;
    ISTHMUS_MPI(wmpi::Allreduce(&leads, &n.count, 1, MPI_INT, MPI_SUM, comm));
    return n;
  });
}

Nodes Nodes::blocks(MPI_Comm comm, int ranks_per_node) {
  int me = 0, size = 1;
  ISTHMUS_MPI(MPI_Comm_rank(comm, &me));
  ISTHMUS_MPI(MPI_Comm_size(comm, &size));
  Nodes n;
  n.count = (size + ranks_per_node - 1) / ranks_per_node;
  n.leader = me / ranks_per_node * ranks_per_node;
  return n;
}

const Nodes& Nodes::attach_runs(MPI_Comm comm, const std::vector<std::pair<int, uint64_t>>& runs) {
  int me = 0;
  ISTHMUS_MPI(MPI_Comm_rank(comm, &me));
  auto mine = std::upper_bound(runs.begin(), runs.end(), me,
                               [](int r, const std::pair<int, uint64_t>& run) { return r < run.first; });
  const uint64_t my_name = std::prev(mine)->second;
  std::unordered_set<uint64_t> names;
  Nodes n;
  n.leader = -1;
  for (const auto& [first, name] : runs) {
    names.insert(name);
    if (n.leader < 0 && name == my_name) n.leader = first;
  }
  n.count = static_cast<int>(names.size());
  return attach<Nodes>(comm, n);
}

uint64_t node_name_hash() {
  char name[MPI_MAX_PROCESSOR_NAME];
  int len = 0;
  ISTHMUS_MPI(MPI_Get_processor_name(name, &len));
  return hash_text(std::string(name, static_cast<size_t>(len)), 5);
}

}  // namespace isthmus
