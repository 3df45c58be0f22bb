#!/usr/bin/env bash
# make bench: halo exchange on 4 ranks (2 x 2, oversubscribed): grouping 10 thin-halo arrays vs
# 1 array vs 10 separate exchanges, and wide halos of 3, 10, 20 points with both sweep methods.
# Figures on this shared 2-core machine are noisy: compare cases of one run as ratios.
set -euo pipefail
build=$1
here=$(cd "$(dirname "$0")" && pwd)
run="$here/../../tests/mpirun.sh"
b="$build/bench/halo/bench_halo"
# 2 ranks (one per core, not oversubscribed), messages below the shared-memory eager limit
for a in "--arrays 1" "--arrays 10" "--arrays 10 --separate"; do
  "$run" 2 "$b" --nx 128 --ny 128 $a --method single-sweep --reps 15 --iters 50
done
for m in two-sweep single-sweep; do
  "$run" 4 "$b" --nx 512 --ny 512 --arrays 1 --method $m --reps 9 --iters 20
  "$run" 4 "$b" --nx 512 --ny 512 --arrays 10 --method $m --reps 9 --iters 20
  "$run" 4 "$b" --nx 512 --ny 512 --arrays 10 --separate --method $m --reps 9 --iters 20
done
for h in 3 10 20; do
  for m in two-sweep single-sweep; do
    "$run" 4 "$b" --sub 64 --halo $h --method $m --reps 9 --iters 20
  done
done
