#!/usr/bin/env bash
# Simulated runs of the ocean mini-app on the `curie` preset (SimGrid SMPI, deterministic):
# naive vs optimized sub-step communications at 256, 1024 and 2048 ranks (weak scaling, 32 x 32
# and 16 x 16 points per rank, 10 levels) in NEMO's line order and with 4 x 4 patches per node
# (and 4096 ranks at 16 x 16), and open boundaries with communication vs local at 1024 ranks.
# 10 sub-steps per step (instead of ~50) and 3 steps keep each run under ~10 minutes of host
# time; the message ratio per sub-step is the same. Usage: bench/ocean/simulate.sh [RESULTS]
set -uo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:-$here/docs/results/data/halo-sim.jsonl}
mkdir -p "$(dirname "$out")"
build=${ISTHMUS_SMPI_BUILD:-$here/build-smpi}
export ISTHMUS_GIT_COMMIT=${ISTHMUS_GIT_COMMIT:-$(git -C "$here" rev-parse --short HEAD 2>/dev/null || echo unknown)}
sim() { "$here/bin/isthmus" simulate ocean --platform curie --build-dir "$build" --no-progress \
          --timeout 900 --results "$out" "$@"; }
common="--nz 10 --substeps 10 --steps 3"
for sub in 32 16; do
  for n in 256 1024 2048; do
    for v in naive optimized; do sim --ranks $n -- $common --sub-nx $sub --sub-ny $sub --variant $v; done
  done
done
sim --ranks 1024 -- $common --sub-nx 32 --sub-ny 32 --variant naive --obc comm
sim --ranks 1024 -- $common --sub-nx 32 --sub-ny 32 --variant optimized --obc local
# Ranks onto curie's 16-core nodes as near-square 4 x 4 patches instead of NEMO's line order
# (seed 004 sect. 4; docs/results/halo.md, issue 16): the node's one link then carries 44 instead
# of 98 messages per exchange, and the grouped exchange no longer waits for it.
for sub in 16 32; do
  for n in 1024 2048; do
    for v in naive optimized; do
      sim --ranks $n -- $common --sub-nx $sub --sub-ny $sub --variant $v --cores-per-node 16
    done
  done
done
for p in 0 16; do
  for v in naive optimized; do
    sim --ranks 4096 -- $common --sub-nx 16 --sub-ny 16 --variant $v --cores-per-node $p
  done
done
# Communication only (no modelled computation): the time the sub-step exchanges themselves take.
for v in naive optimized; do
  sim --ranks 1024 -- $common --sub-nx 16 --sub-ny 16 --variant $v --flops-2d 0 --flops-3d 0
done
