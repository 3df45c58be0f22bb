#!/usr/bin/env bash
# Runs an MPI program on N ranks on this (possibly small, possibly root) machine.
# Usage: tests/mpirun.sh N program [args...]
set -euo pipefail
n=$1; shift
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_mpi_yield_when_idle=1           # more ranks than cores: do not spin
export OMPI_MCA_btl_vader_single_copy_mechanism=none  # containers forbid CMA
export OMPI_MCA_rmaps_base_oversubscribe=1
export PMIX_MCA_gds=hash
exec mpirun --oversubscribe -n "$n" "$@"
