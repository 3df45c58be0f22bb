#!/usr/bin/env bash
# Reach of the simulator on this machine (docs/simulation.md sect. 5): wall time, CPU time and
# peak PSS of the nearest-neighbour skeleton and of the redistribution benchmark at the rank
# counts of issue 3. Long: run it alone, in the background.
#   sim/reach.sh [RESULTS]          (default sim-reach.jsonl)
# 65,536 ranks need vm.max_map_count above 2 x 65,536 (as root: sysctl -w vm.max_map_count=262144).
# With SimGrid 4.1 (sim/build_simgrid.sh) instead of Debian's 3.32:
#   ISTHMUS_SIMGRID=/work/simgrid-4.1 sim/reach.sh sim-reach-4.1.jsonl
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
results=${1:-sim-reach.jsonl}
sim() { PYTHONPATH="$here/python" python3 -m isthmus simulate "$@" --results "$results" --no-progress; }
sim redist --platform curie --ranks 2048 -- --nx 192 --ny 480 --fields 10 --src-ranks 1024 \
    --dst-ranks 1024 --pattern block-roundrobin --method all --reps 5
for n in 4096 16384 65536; do
  sim neighbour --platform torus-m --ranks "$n" -- --bytes 8192 --iters 1 --reps 5
done
