#!/usr/bin/env bash
# The spectral transposition under SimGrid (docs/results/collectives.md): one forward + backward
# transform on fattree-m, each algorithm in its own smpirun. Appends to
# docs/results/data/collectives-sim.jsonl. On the shared 2-core machine burst and native at 1024
# ranks exceeded 10 minutes (they are attempted; a timeout only loses that case).
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${OUT:-docs/results/data/collectives-sim.jsonl}
plat=${PLATFORM:-fattree-m}
t() { bin/isthmus simulate transpose --platform $plat --no-progress --results "$out" "$@" > /dev/null; }
# grid 1440 x 720 x 128: messages from 1 MB (100 ranks) to 4 KB (4096 ranks)
for n in 100 256 1024; do
  for a in ring:1 ring:4 burst native bruck; do
    t --ranks $n --timeout 600 -- --reps 1 --warmup 0 --algorithms $a
  done
done
for a in ring:4 ring:1; do t --ranks 4096 --timeout 900 -- --reps 1 --warmup 0 --algorithms $a; done
# grid 256 x 128 x 32: small messages (2 KB at 256 ranks, 256 bytes at 1024), bruck's regime
for a in bruck ring:4 burst native ring:1; do
  t --ranks 256 --timeout 600 -- --reps 1 --warmup 0 --nx 256 --ny 128 --nz 32 --algorithms $a
done
for a in bruck ring:4 ring:1; do
  t --ranks 1024 --timeout 600 -- --reps 1 --warmup 0 --nx 256 --ny 128 --nz 32 --algorithms $a
done
