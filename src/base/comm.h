// Communicators the library creates for its own messages, and what it learns once about a
// communicator and keeps with it.
#pragma once
#include <mpi.h>

#include <utility>

#include "base/error.h"

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

// A value of type T kept with a communicator as an MPI attribute (deleted with it; not copied
// to its duplicates): attached<T>(comm, make) returns the one make() gave at the first call for
// comm and the same one after, so that what costs a collective to learn (a clock's offsets,
// the ranks' nodes) is learnt once per communicator. make runs where the first call is made
// (collective there if make is). attach<T>(comm, value) sets it (or replaces it) where the
// caller already knows it.
template <typename T>
int attribute_key() {
  static const int key = [] {
    int k = MPI_KEYVAL_INVALID;
    auto del = [](MPI_Comm, int, void* value, void*) -> int {
      delete static_cast<T*>(value);
      return MPI_SUCCESS;
    };
    ISTHMUS_MPI(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, del, &k, nullptr));
    return k;
  }();
  return key;
}

template <typename T>
T& attach(MPI_Comm comm, T value) {
  auto* kept = new T(std::move(value));
  ISTHMUS_MPI(MPI_Comm_set_attr(comm, attribute_key<T>(), kept));  // deletes a previous one
  return *kept;
}

template <typename T, typename Make>
T& attached(MPI_Comm comm, Make&& make) {
  void* value = nullptr;
  int found = 0;
  ISTHMUS_MPI(MPI_Comm_get_attr(comm, attribute_key<T>(), &value, &found));
  if (found) return *static_cast<T*>(value);
  return attach<T>(comm, make());
}

}  // namespace isthmus
