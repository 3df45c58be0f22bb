#!/usr/bin/env bash
# tests/fortran/oasis_interface.F90 as an OASIS3-MCT run is set up: a fresh run directory with
# its namcouple, written in OASIS3-MCT 2.0's format (one leading blank, $NBMODEL), which 4.0 and
# isthmus read too; one executable started as both components (MPMD). Fails unless both say ok.
# Usage: run_interface.sh MPIRUN_SH EXE NOCN NATM [bundle]
#   bundle: the executable was built with the bundle field (not under -DOASIS_2_0)
# KEEP=1 in the environment keeps the run directory (OASIS writes its logs, nout.000000, there).
set -euo pipefail
mpirun_sh=$1 exe=$2 nocn=$3 natm=$4 bundle=${5:-}
dir=$(mktemp -d /tmp/isthmus-finterface-XXXXXX)
trap '[ -n "${KEEP:-}" ] || rm -rf "$dir"' EXIT
# an EXPORTED entry needs one transformation in 2.0 (and an overlap line): LOCTRANS INSTANT
entry() {
  printf ' %s %s 1 3600 1 rst_%s.nc EXPORTED\n 8 6 8 6 %s %s LAG=0\n P 0 P 0\n LOCTRANS\n INSTANT\n' "$@"
}
entries="$(entry O_F8 A_F8 f8 togr tagr)
$(entry O_F4 A_F4 f4 togr tagr)
$(entry A_RET O_RET ret tagr togr)"
n=3
if [ -n "$bundle" ]; then
  entries="$entries
$(entry O_BUN A_BUN bun togr tagr)"
  n=4
fi
cat > "$dir/namcouple" <<NAM
 \$NFIELDS
   $n
 \$END
 \$NBMODEL
   2  ocn atm
 \$END
 \$RUNTIME
   14400
 \$END
 \$NLOGPRT
   0
 \$END
 \$STRINGS
$entries
 \$END
NAM
cd "$dir"
out=$("$mpirun_sh" "$nocn" "$exe" ocn : -n "$natm" "$exe" atm 2>&1) || { echo "$out"; exit 1; }
echo "$out"
grep -q "oasis_interface ocn: ok" <<< "$out" && grep -q "oasis_interface atm: ok" <<< "$out"
# the grid files: both components' grids in grids.nc, masks.nc, areas.nc
for f in grids masks areas; do
  ncdump -h "$f.nc" > "$f.cdl" || { echo "no $f.nc"; exit 1; }
  for g in togr tagr; do grep -q " $g\." "$f.cdl" || { echo "$f.nc lacks grid $g"; cat "$f.cdl"; exit 1; }; done
done
echo "grid files: ok"
