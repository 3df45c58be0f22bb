#!/usr/bin/env bash
# make bench: the GCR solver's 50 allreduces of 2-3 doubles on 8 ranks (oversubscribed) with
# native, recursive doubling and recursive-k for k = 2..8 and auto. Shared-memory MPI on 2 cores
# says little about a network: the scaling figures come from `isthmus simulate`
# (docs/results/collectives.md).
set -euo pipefail
build=$1
here=$(cd "$(dirname "$0")" && pwd)
"$here/../../tests/mpirun.sh" 8 "$build/bench/gcr/bench_gcr" --reps 7 \
  --cases native,recursive-doubling,recursive-k:3,recursive-k:4,recursive-k:5,recursive-k:8,auto
