#!/usr/bin/env bash
# make bench: block -> round-robin of a 192x480 grid, 10 fields, 8 ranks (oversubscribed), every
# method, plus the same 10 fields sent as 10 single-field exchanges; 15 repetitions each.
# Then auto against p2p, alltoallv and neighbor side by side (--method compare, 100 interleaved
# rounds, a second p2p redistribution as the control; each record has its samples and the
# per-round ("paired") ratios) on every pattern, identical and disjoint rank sets (issue 16:
# auto <= 1.02 x the best fixed method); records to OUT.jsonl when given.
#   bench/redist/run.sh BUILD_DIR [OUT.jsonl]
set -euo pipefail
build=$1
out=${2:-/dev/null}
here=$(cd "$(dirname "$0")" && pwd)
run="$here/../../tests/mpirun.sh"
b="$build/bench/redist/bench_redist"
"$run" 8 "$b" --nx 192 --ny 480 --fields 10 --reps 15 --separate
"$run" 8 "$b" --nx 192 --ny 480 --fields 10 --reps 15 --src-ranks 3 --dst-ranks 5
for pattern in block-roundrobin roundrobin-block block-block random; do
  for ranks in "" "--src-ranks 3 --dst-ranks 5"; do
    # shellcheck disable=SC2086 # the rank options are words
    "$run" 8 "$b" --nx 192 --ny 480 --fields 10 --reps 100 --method compare --pattern "$pattern" $ranks \
      | grep '"case": "compare"' | tee -a "$out"
  done
done
