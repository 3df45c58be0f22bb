/* MPICH builds' tests only (cmake/mpich.cmake): sched_yield() after each UCX progress call that
   progressed nothing, so that MPICH ranks oversubscribing the cores give an idle core away
   (Open MPI's mpi_yield_when_idle has no MPICH counterpart). Preloaded by tests/mpirun.sh. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <sched.h>

typedef unsigned (*progress_fn)(void *worker);

unsigned ucp_worker_progress(void *worker)
{
  static progress_fn real;
  if (!real) real = (progress_fn)dlsym(RTLD_NEXT, "ucp_worker_progress");
  if (!real) {  /* libucp loaded with RTLD_LOCAL (under mpi4py, say): ask it directly */
    void *ucp = dlopen("libucp.so.0", RTLD_LAZY | RTLD_NOLOAD);
    if (ucp) real = (progress_fn)dlsym(ucp, "ucp_worker_progress");
  }
  unsigned events = real(worker);
  if (events == 0) sched_yield();
  return events;
}
