#!/usr/bin/env bash
# Simulated halo exchanges on the `curie` preset (SimGrid SMPI, deterministic time):
#  - grouping: 10 thin-halo (h = 1) 2-D arrays in one exchange vs 1 array vs 10 exchanges,
#    64 x 64 points per rank at 256 and 1024 ranks; 16 x 16 and 64 x 64 at 256 ranks with 16
#    and with 1 rank per node;
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
sim --ranks 1024 -- --sub 64 --arrays 10 --separate --reps 3 --iters 2
# Small subdomains (16 x 16), and one rank per node (curie's 16 ranks of a node share one
# loopback link in the model, which makes bytes, not messages, the cost of intra-node halos).
for rpn in 16 1; do
  for sub in 16 64; do
    for a in "--arrays 1" "--arrays 10" "--arrays 10 --separate"; do
      sim --ranks 256 --ranks-per-node $rpn -- --sub $sub $a --reps 3 --iters 2
    done
  done
done
for n in 64 256 1024 4096; do
  for h in 3 10 20; do
    sim --ranks $n -- --nx 1024 --ny 1024 --halo $h --method two-sweep --reps 3 --iters 1
  done
done
