#!/usr/bin/env bash
# Simulated halo exchanges on the `curie` preset (SimGrid SMPI, deterministic time):
#  - grouping: 10 thin-halo (h = 1) 2-D arrays in one exchange vs 1 array vs 10 exchanges,
#    64 x 64 points per rank, at 256 and 1024 ranks;
#  - wide halos (seed 003 Fig. 9a): h = 3, 10, 20 on a fixed 1024 x 1024 grid (strong scaling)
#    at 64, 256, 1024 and 4096 ranks, two-sweep as in seed 003.
# Usage: bench/halo/simulate.sh [RESULTS]
set -uo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:-$here/docs/results/data/halo-sim.jsonl}
mkdir -p "$(dirname "$out")"
build=${ISTHMUS_SMPI_BUILD:-$here/build-smpi}
sim() { "$here/bin/isthmus" simulate halo --platform curie --build-dir "$build" --no-progress \
          --timeout 900 --results "$out" "$@"; }
for n in 256 1024; do
  sim --ranks $n -- --sub 64 --arrays 1 --reps 3 --iters 2
  sim --ranks $n -- --sub 64 --arrays 10 --reps 3 --iters 2
done
sim --ranks 256 -- --sub 64 --arrays 10 --separate --reps 3 --iters 2
for n in 64 256 1024 4096; do
  for h in 3 10 20; do
    sim --ranks $n -- --nx 1024 --ny 1024 --halo $h --method two-sweep --reps 3 --iters 1
  done
done
