#!/usr/bin/env bash
# make bench: the BENCH-like ocean mini-app on 4 ranks (oversubscribed on a 2-core machine):
# naive (3 exchanges per sub-step) vs optimized (2, grouped), without open boundaries, and with
# open boundaries handled by a communication (naive) or locally (optimized). 10 time steps of
# 50 sub-steps each; the first step is dropped.
set -euo pipefail
build=$1
here=$(cd "$(dirname "$0")" && pwd)
run="$here/../../tests/mpirun.sh"
b="$build/bench/ocean/bench_ocean"
for v in naive optimized; do
  "$run" 4 "$b" --nx 256 --ny 192 --nz 10 --steps 10 --variant $v
done
"$run" 4 "$b" --nx 256 --ny 192 --nz 10 --steps 10 --variant naive --obc comm
"$run" 4 "$b" --nx 256 --ny 192 --nz 10 --steps 10 --variant optimized --obc local
"$run" 4 "$b" --nx 256 --ny 192 --nz 10 --steps 10 --variant optimized --boundary fold-f
