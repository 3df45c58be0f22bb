#!/usr/bin/env bash
# Two components in two executables: writes the namcouple into a fresh run directory and runs
# MPIRUN_SH NOCEAN OCEAN_EXE : -n NATMOS ATMOS_EXE; fails unless both say "ok".
# Usage: mpmd_run.sh MPIRUN_SH OCEAN_EXE NOCEAN ATMOS_EXE NATMOS
set -euo pipefail
mpirun_sh=$1 ocean=$2 nocean=$3 atmos=$4 natmos=$5
dir=$(mktemp -d /tmp/isthmus-mpmd-XXXXXX)
trap 'rm -rf "$dir"' EXIT
cat > "$dir/namcouple" <<'NAM'
$NFIELDS
  2
$END
$RUNTIME
  12
$END
$NLOGPRT
  0 0
$END
$STRINGS
O_SST A_SST 1 6 1 rst_o.nc EXPORTED
182 149 96 72 torc lmdz
P 2 P 0
MAPPING
rmp_torc_to_lmdz_BILINEAR.nc dst bfb
A_FLX O_FLX 1 6 1 rst_a.nc EXPORTED
96 72 182 149 lmdz torc
P 0 P 2
MAPPING
rmp_lmdz_to_torc_BILINEAR.nc dst bfb
$END
NAM
out=$("$mpirun_sh" "$nocean" "$ocean" "$dir" : -n "$natmos" "$atmos" "$dir" 2>&1) || { echo "$out"; exit 1; }
echo "$out"
grep -q "mpmd ocean: ok" <<<"$out" && grep -q "mpmd atmos: ok" <<<"$out"
