#!/usr/bin/env bash
# make bench: the five global sums on 8 ranks (oversubscribed on 2 cores), 10^6 points, 1 and
# 10 fields; each JSON line carries its ratio to lsum8 from the same run.
set -euo pipefail
build=$1
here=$(cd "$(dirname "$0")" && pwd)
for f in 1 10; do
  "$here/../../tests/mpirun.sh" 8 "$build/bench/globalsum/bench_globalsum" --points 1000000 --fields $f --reps 9
done
