#!/usr/bin/env bash
# The global sums under SimGrid at 1024 ranks on `curie` (docs/results/collectives.md), with
# real (private) field buffers and the computation benchmarked and injected (1 Gflop/s hosts at
# host speed 1 Gf, i.e. the host's own time): not deterministic, and inflated by a loaded host.
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${OUT:-docs/results/data/collectives-sim.jsonl}
for f in 1 10; do
  ISTHMUS_BENCH_PRIVATE_BUFFERS=1 bin/isthmus simulate globalsum --platform curie --ranks 1024 \
    --no-progress --simulate-computation --cfg smpi/host-speed:1Gf --timeout 600 --results "$out" \
    -- --points 1000000 --fields $f --reps 5 > /dev/null
done
