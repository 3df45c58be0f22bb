#!/usr/bin/env bash
# make bench: the nearest-neighbour skeleton under the real MPI, 8 ranks (2 x 4 grid,
# oversubscribed), 8 KiB and 256 KiB per neighbour, 7 repetitions of 10 exchanges.
# Simulated scaling runs: isthmus simulate neighbour --platform torus-m --ranks N (docs/simulation.md).
set -euo pipefail
build=$1
here=$(cd "$(dirname "$0")" && pwd)
for bytes in 8192 262144; do
  "$here/../../tests/mpirun.sh" 8 "$build/bench/neighbour/bench_neighbour" --bytes "$bytes" --iters 10 --reps 7
done
