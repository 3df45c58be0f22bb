#!/usr/bin/env bash
# make bench: seed 001's cases on real MPI at 8 ranks (4 per model; interp on all 8), p2p,
# butterfly and adaptive side by side, 7 repetitions each. On this shared-memory machine the
# figures are ratios within one run; network-scale figures come from simulate.sh.
set -euo pipefail
build=$1
here=$(cd "$(dirname "$0")" && pwd)
run="$here/../../tests/mpirun.sh"
exe="$build/bench/transfer/bench_transfer"
cache=$(mktemp /tmp/isthmus-bench-plan.XXXXXX)
trap 'rm -f "$cache"' EXIT
for msgs in 1 2 4; do
  "$run" 8 "$exe" --case toy --ranks-per-model 4 --msgs $msgs --reps 7
done
"$run" 8 "$exe" --case toy --ranks-per-model 4 --msgs 4 --reps 7 --plan-cache "$cache" --methods adaptive
"$run" 8 "$exe" --case random --ranks-per-model 4 --msgs 3 --reps 7
"$run" 8 "$exe" --case gamil --ranks-per-model 4 --reps 7
"$run" 8 "$exe" --case cesm --ranks-per-model 4 --reps 7
"$run" 8 "$exe" --case interp --ranks-per-model 8 --reps 7
