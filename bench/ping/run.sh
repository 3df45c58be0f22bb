#!/usr/bin/env bash
# make bench: ping-pong between 2 ranks under the real MPI (shared memory on this machine),
# 0 B to 1 MiB, 7 repetitions of 10 round trips.
set -euo pipefail
build=$1
here=$(cd "$(dirname "$0")" && pwd)
"$here/../../tests/mpirun.sh" 2 "$build/bench/ping/bench_ping" --sizes 0,1024,65536,1048576 --iters 10 --reps 7
