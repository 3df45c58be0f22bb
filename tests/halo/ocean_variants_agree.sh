#!/usr/bin/env bash
# The ocean mini-app's communication variants must compute the same ocean: naive (3 exchanges
# per sub-step) and optimized (2, grouped) give bit-identical sea-surface heights, and open
# boundaries handled by an exchange or locally too; also bi-periodic. (Not on a north fold: there
# the fold overwrites the redundant row of the fluxes, which the optimized variant has already
# used, and the toy's initial state is not fold-symmetric.) Placing the subdomains on nodes of 2
# (--cores-per-node) renumbers the ranks only: the same ocean again.
# Usage: ocean_variants_agree.sh MPIRUN BENCH_OCEAN RANKS
set -euo pipefail
mpirun=$1; bench=$2; n=$3
sum() { "$mpirun" "$n" "$bench" --nx 60 --ny 44 --nz 3 --steps 3 --substeps 5 "$@" |
        grep -o '"checksum": [-0-9.e+]*'; }
a=$(sum --variant naive); b=$(sum --variant optimized)
c=$(sum --variant naive --obc comm); d=$(sum --variant optimized --obc local)
e=$(sum --variant naive --boundary biperiodic); f=$(sum --variant optimized --boundary biperiodic)
g=$(sum --variant optimized --cores-per-node 2)
echo "naive $a optimized $b | obc comm $c local $d | biperiodic naive $e optimized $f | placed $g"
[ -n "$a" ] && [ "$a" = "$b" ] && [ "$c" = "$d" ] && [ "$e" = "$f" ] && [ "$a" != "$c" ] &&
  [ "$a" = "$g" ]
