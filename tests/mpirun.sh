#!/usr/bin/env bash
# Runs an MPI program on N ranks on this (possibly small, possibly root) machine.
# Usage: tests/mpirun.sh N program [args...]
#        tests/mpirun.sh -n N [--allow-run-as-root] [--oversubscribe] program [args...]
# The second form serves as MPIRUN for commands that build an Open MPI command line themselves
# (isthmus weights); those two flags are what this script does anyway.
# The launcher is Open MPI's mpirun, or MPICH's mpiexec (Hydra) when ISTHMUS_MPIEXEC names it:
# an MPICH build's ctest sets it (cmake/mpich.cmake), and so does `make demo MPI=mpich`.
set -euo pipefail
if [ "$1" = "-n" ]; then
  n=$2; shift 2
  while [[ ${1:-} == --allow-run-as-root || ${1:-} == --oversubscribe ]]; do shift; done
else
  n=$1; shift
fi
if [ -n "${ISTHMUS_MPIEXEC:-}" ]; then
  # Hydra runs as root and places more ranks than cores without being asked, and passes the
  # whole environment on to the ranks. MPICH's ranks poll without yielding the core: the
  # library ISTHMUS_MPICH_PRELOAD names makes an idle one yield (cmake/mpich.cmake).
  if [ -n "${ISTHMUS_MPICH_PRELOAD:-}" ]; then
    export LD_PRELOAD="${LD_PRELOAD:+$LD_PRELOAD }$ISTHMUS_MPICH_PRELOAD"
  fi
  exec "$ISTHMUS_MPIEXEC" -n "$n" "$@"
fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_mpi_yield_when_idle=1           # more ranks than cores: do not spin
export OMPI_MCA_btl_vader_single_copy_mechanism=none  # containers forbid CMA
export OMPI_MCA_rmaps_base_oversubscribe=1
export PMIX_MCA_gds=hash
# Every rank is on this node: the shared-memory PML Open MPI picks anyway, without first
# searching for a network (its cm PML opening libfabric and PSM costs 0.2 s a process here).
export OMPI_MCA_pml=${OMPI_MCA_pml:-ob1}
exec mpirun --oversubscribe -n "$n" "$@"
