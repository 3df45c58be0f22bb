#!/usr/bin/env bash
# make bench: the spectral transposition skeleton (seed 003 Fig. 3) on 8 ranks (4 x 2,
# oversubscribed) with every alltoallv algorithm, on a small grid and on a grid whose messages
# are small (where bruck should pay off). Real shared-memory MPI on 2 cores is noisy: compare
# algorithms within one run. The network-scale figures come from `isthmus simulate`
# (docs/results/collectives.md).
set -euo pipefail
build=$1
here=$(cd "$(dirname "$0")" && pwd)
run="$here/../../tests/mpirun.sh"
b="$build/bench/transpose/bench_transpose"
algs=burst,bruck,ring:1,ring:2,ring:4,pairwise,native,auto
"$run" 8 "$b" --nx 256 --ny 128 --nz 32 --algorithms $algs --reps 7
"$run" 8 "$b" --nx 32 --ny 16 --nz 8 --algorithms $algs --reps 7
