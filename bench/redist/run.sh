#!/usr/bin/env bash
# make bench: block -> round-robin of a 192x480 grid, 10 fields, 8 ranks (oversubscribed), every
# method, plus the same 10 fields sent as 10 single-field exchanges; 15 repetitions each.
set -euo pipefail
build=$1
here=$(cd "$(dirname "$0")" && pwd)
run="$here/../../tests/mpirun.sh"
"$run" 8 "$build/bench/redist/bench_redist" --nx 192 --ny 480 --fields 10 --reps 15 --separate
"$run" 8 "$build/bench/redist/bench_redist" --nx 192 --ny 480 --fields 10 --reps 15 --src-ranks 3 --dst-ranks 5
