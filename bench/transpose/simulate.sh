#!/usr/bin/env bash
# The spectral transposition under SimGrid (docs/results/collectives.md): grid 1440 x 720 x 128,
# one forward + backward transform, each algorithm in its own smpirun (10-minute limit).
# Appends to docs/results/data/collectives-sim.jsonl.
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${OUT:-docs/results/data/collectives-sim.jsonl}
plat=${PLATFORM:-fattree-m}
for n in ${RANKS:-100 256 1024}; do
  for a in ${ALGS:-ring:1 ring:4 burst native bruck}; do
    bin/isthmus simulate transpose --platform $plat --ranks $n --no-progress --timeout 600 \
      --results "$out" -- --reps 1 --warmup 0 --algorithms $a > /dev/null
  done
done
