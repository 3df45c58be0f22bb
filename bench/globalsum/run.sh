#!/usr/bin/env bash
# make bench: the five global sums, 10^6 points, 1 and 10 fields, on 8 ranks (oversubscribed
# on 2 cores) and on 1 rank (the local work alone, without the scheduling noise of 8 ranks on
# 2 cores); each JSON line carries its ratio to lsum8 from the same run, for wall and CPU time.
set -euo pipefail
build=$1
here=$(cd "$(dirname "$0")" && pwd)
for n in 8 1; do
  for f in 1 10; do
    "$here/../../tests/mpirun.sh" $n "$build/bench/globalsum/bench_globalsum" --points 1000000 --fields $f --reps 9
  done
done
