#include "base/wait.h"

#include <sched.h>
#include <unistd.h>

#include <atomic>
#include <initializer_list>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>

namespace isthmus {

namespace {

// A sleeping wait polls (yielding the core between polls) this long, then naps between polls.
// Most waits of an exchange or a round trip (tens to hundreds of microseconds) never nap; a wait
// that lasts longer is mostly a rank stuck behind the rank it waits for on a shared core: under
// Linux's EEVDF scheduler a polling rank's sched_yield may leave the core to it for a whole
// slice, and napping gives the core away. Measured with the OASIS toy on 2 cores
// (docs/results/oasis.md, "Waiting when the ranks outnumber the cores"): at 2 + 2 ranks, round
// trips of 0.2 ms or, in about half the runs, 1 ms with MPI's polling; 0.19 ms (two runs of ten
// at 0.7) polling 1 ms before napping; 0.26 with 50 us, 0.52 with no polling; at 4 + 4 all alike.
constexpr double kSpinSeconds = 1e-3;
constexpr long kNapNanoseconds = 10'000;  // asked for; the kernel's timer slack adds ~50 us

#ifndef ISTHMUS_SMPI  // simulated ranks always block (decide)
// The ranks on this node, as the launcher says (Open MPI, MPICH's Hydra, Slurm), or 0.
int ranks_on_node() {
  for (const char* v : {"OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS", "SLURM_NTASKS_PER_NODE"})
    if (const char* s = std::getenv(v)) {
      const int n = std::atoi(s);
      if (n > 0) return n;
    }
  return 0;
}

// The cores this process may run on: the node's online processors, or fewer where the process
// is confined to a set of several (a container's cpuset); a process bound to one core alone
// tells nothing of the others.
int cores_for_ranks() {
  const long online = sysconf(_SC_NPROCESSORS_ONLN);
  int cores = online > 0 ? static_cast<int>(online) : 0;
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0) {
    const int allowed = CPU_COUNT(&set);
    if (allowed > 1 && (cores == 0 || allowed < cores)) cores = allowed;
  }
  return cores;
}
#endif

WaitPolicy decide() {
#ifdef ISTHMUS_SMPI
  return WaitPolicy::Block;  // a polling loop would cost simulated events, and cores are virtual
#else
  const char* s = std::getenv("ISTHMUS_WAIT");
  if (s && *s && std::strcmp(s, "auto") != 0 && std::strcmp(s, "block") != 0 && std::strcmp(s, "sleep") != 0)
    std::fprintf(stderr, "isthmus: warning: ISTHMUS_WAIT=%s is not auto, block or sleep; using auto\n", s);
  return wait_policy_for(s, ranks_on_node(), cores_for_ranks());
#endif
}

std::atomic<int> forced{-1};

bool sleeping() { return wait_policy() == WaitPolicy::Sleep; }

// Calls test(&done) until done: polls for kSpinSeconds, yielding the core between polls, then
// naps between polls. Returns the first error code test returns.
template <typename Test>
int poll(Test&& test) {
  const double start = MPI_Wtime();
  bool nap = false;
  for (;;) {
    int done = 0;
    const int rc = test(&done);
    if (rc != MPI_SUCCESS || done) return rc;
    if (!nap) nap = MPI_Wtime() - start > kSpinSeconds;
    if (nap) {
      timespec ts{0, kNapNanoseconds};
      nanosleep(&ts, nullptr);
    } else {
      sched_yield();
    }
  }
}

// A nonblocking call `start(&req)` completed by a sleeping wait.
template <typename Start>
int started(Start&& start, MPI_Status* status = MPI_STATUS_IGNORE) {
  MPI_Request req = MPI_REQUEST_NULL;
  const int rc = start(&req);
  if (rc != MPI_SUCCESS) return rc;
  return poll([&](int* done) { return MPI_Test(&req, done, status); });
}

}  // namespace

WaitPolicy wait_policy_for(const char* setting, int ranks_on_node, int cores) {
  if (setting && std::strcmp(setting, "sleep") == 0) return WaitPolicy::Sleep;
  if (setting && std::strcmp(setting, "block") == 0) return WaitPolicy::Block;
  // auto: napping where the ranks outnumber the cores (as Open MPI yields when oversubscribed)
  return ranks_on_node > 0 && cores > 0 && ranks_on_node > cores ? WaitPolicy::Sleep : WaitPolicy::Block;
}

WaitPolicy wait_policy() {
  const int f = forced.load(std::memory_order_relaxed);
  if (f >= 0) return static_cast<WaitPolicy>(f);
  static const WaitPolicy decided = decide();
  return decided;
}

void set_wait_policy_for_tests(WaitPolicy p) { forced.store(static_cast<int>(p), std::memory_order_relaxed); }

namespace wmpi {

int Wait(MPI_Request* req, MPI_Status* status) {
  if (!sleeping()) return MPI_Wait(req, status);
  return poll([&](int* done) { return MPI_Test(req, done, status); });
}

int Waitall(int n, MPI_Request* reqs, MPI_Status* statuses) {
  if (!sleeping()) return MPI_Waitall(n, reqs, statuses);
  return poll([&](int* done) { return MPI_Testall(n, reqs, done, statuses); });
}

int Waitsome(int n, MPI_Request* reqs, int* outcount, int* indices, MPI_Status* statuses) {
  if (!sleeping()) return MPI_Waitsome(n, reqs, outcount, indices, statuses);
  return poll([&](int* done) {
    const int rc = MPI_Testsome(n, reqs, outcount, indices, statuses);
    *done = *outcount != 0;  // some completed, or none active (MPI_UNDEFINED)
    return rc;
  });
}

int Recv(void* buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm, MPI_Status* status) {
  if (!sleeping()) return MPI_Recv(buf, count, type, source, tag, comm, status);
  return started([&](MPI_Request* r) { return MPI_Irecv(buf, count, type, source, tag, comm, r); }, status);
}

int Send(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
  if (!sleeping()) return MPI_Send(buf, count, type, dest, tag, comm);
  return started([&](MPI_Request* r) { return MPI_Isend(buf, count, type, dest, tag, comm, r); });
}

int Sendrecv(const void* sbuf, int scount, MPI_Datatype stype, int dest, int stag, void* rbuf, int rcount,
             MPI_Datatype rtype, int source, int rtag, MPI_Comm comm, MPI_Status* status) {
  if (!sleeping())
    return MPI_Sendrecv(sbuf, scount, stype, dest, stag, rbuf, rcount, rtype, source, rtag, comm, status);
  MPI_Request reqs[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
  int rc = MPI_Irecv(rbuf, rcount, rtype, source, rtag, comm, &reqs[0]);
  if (rc == MPI_SUCCESS) rc = MPI_Isend(sbuf, scount, stype, dest, stag, comm, &reqs[1]);
  if (rc != MPI_SUCCESS) return rc;
  MPI_Status st[2];
  rc = poll([&](int* done) { return MPI_Testall(2, reqs, done, st); });
  if (rc == MPI_SUCCESS && status != MPI_STATUS_IGNORE) *status = st[0];
  return rc;
}

int Probe(int source, int tag, MPI_Comm comm, MPI_Status* status) {
  if (!sleeping()) return MPI_Probe(source, tag, comm, status);
  return poll([&](int* done) { return MPI_Iprobe(source, tag, comm, done, status); });
}

#ifdef ISTHMUS_SMPI
// Never sleeping under SMPI: the nonblocking collectives are not needed (nor all provided).
#define ISTHMUS_STARTED(blocking, nonblocking) return blocking
#else
#define ISTHMUS_STARTED(blocking, nonblocking) \
  if (!sleeping()) return blocking;            \
  return started([&](MPI_Request* r) { return nonblocking; })
#endif

int Barrier(MPI_Comm comm) { ISTHMUS_STARTED(MPI_Barrier(comm), MPI_Ibarrier(comm, r)); }

int Bcast(void* buf, int count, MPI_Datatype type, int root, MPI_Comm comm) {
  ISTHMUS_STARTED(MPI_Bcast(buf, count, type, root, comm), MPI_Ibcast(buf, count, type, root, comm, r));
}

int Allreduce(const void* sbuf, void* rbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
  ISTHMUS_STARTED(MPI_Allreduce(sbuf, rbuf, count, type, op, comm),
                  MPI_Iallreduce(sbuf, rbuf, count, type, op, comm, r));
}

int Reduce(const void* sbuf, void* rbuf, int count, MPI_Datatype type, MPI_Op op, int root, MPI_Comm comm) {
  ISTHMUS_STARTED(MPI_Reduce(sbuf, rbuf, count, type, op, root, comm),
                  MPI_Ireduce(sbuf, rbuf, count, type, op, root, comm, r));
}

int Exscan(const void* sbuf, void* rbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
  ISTHMUS_STARTED(MPI_Exscan(sbuf, rbuf, count, type, op, comm),
                  MPI_Iexscan(sbuf, rbuf, count, type, op, comm, r));
}

int Allgather(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf, int rcount, MPI_Datatype rtype,
              MPI_Comm comm) {
  ISTHMUS_STARTED(MPI_Allgather(sbuf, scount, stype, rbuf, rcount, rtype, comm),
                  MPI_Iallgather(sbuf, scount, stype, rbuf, rcount, rtype, comm, r));
}

int Allgatherv(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf, const int* rcounts,
               const int* displs, MPI_Datatype rtype, MPI_Comm comm) {
  ISTHMUS_STARTED(MPI_Allgatherv(sbuf, scount, stype, rbuf, rcounts, displs, rtype, comm),
                  MPI_Iallgatherv(sbuf, scount, stype, rbuf, rcounts, displs, rtype, comm, r));
}

int Gather(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf, int rcount, MPI_Datatype rtype,
           int root, MPI_Comm comm) {
  ISTHMUS_STARTED(MPI_Gather(sbuf, scount, stype, rbuf, rcount, rtype, root, comm),
                  MPI_Igather(sbuf, scount, stype, rbuf, rcount, rtype, root, comm, r));
}

int Gatherv(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf, const int* rcounts,
            const int* displs, MPI_Datatype rtype, int root, MPI_Comm comm) {
  ISTHMUS_STARTED(MPI_Gatherv(sbuf, scount, stype, rbuf, rcounts, displs, rtype, root, comm),
                  MPI_Igatherv(sbuf, scount, stype, rbuf, rcounts, displs, rtype, root, comm, r));
}

int Reduce_scatter(const void* sbuf, void* rbuf, const int* rcounts, MPI_Datatype type, MPI_Op op,
                   MPI_Comm comm) {
  ISTHMUS_STARTED(MPI_Reduce_scatter(sbuf, rbuf, rcounts, type, op, comm),
                  MPI_Ireduce_scatter(sbuf, rbuf, rcounts, type, op, comm, r));
}

int Alltoall(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf, int rcount, MPI_Datatype rtype,
             MPI_Comm comm) {
  ISTHMUS_STARTED(MPI_Alltoall(sbuf, scount, stype, rbuf, rcount, rtype, comm),
                  MPI_Ialltoall(sbuf, scount, stype, rbuf, rcount, rtype, comm, r));
}

int Alltoallv(const void* sbuf, const int* scounts, const int* sdispls, MPI_Datatype stype, void* rbuf,
              const int* rcounts, const int* rdispls, MPI_Datatype rtype, MPI_Comm comm) {
  ISTHMUS_STARTED(MPI_Alltoallv(sbuf, scounts, sdispls, stype, rbuf, rcounts, rdispls, rtype, comm),
                  MPI_Ialltoallv(sbuf, scounts, sdispls, stype, rbuf, rcounts, rdispls, rtype, comm, r));
}

#undef ISTHMUS_STARTED

}  // namespace wmpi
}  // namespace isthmus
