#!/usr/bin/env bash
# The Fortran toy as an OASIS3-MCT run is set up: a fresh run directory holding the namcouple
# and the weights files, both executables started in it (MPMD), each component checking what it
# receives. Fails unless both say "ok".
# Usage: run_toy.sh MPIRUN_SH DATA_DIR OCEAN_EXE NOCEAN ATMOS_EXE NATMOS
set -euo pipefail
mpirun_sh=$1 data=$2 ocean=$3 nocean=$4 atmos=$5 natmos=$6
dir=$(mktemp -d /tmp/isthmus-ftoy-XXXXXX)
trap 'rm -rf "$dir"' EXIT
ln -s "$data"/rmp_torc_to_lmdz_BILINEAR.nc "$data"/rmp_lmdz_to_torc_BILINEAR.nc "$dir"/
# OASIS3-MCT 4.0's namcouple; LAG=0 on every entry: a put at t is received by the get at t
cat > "$dir/namcouple" <<'NAM'
$NFIELDS
  4
$END
$RUNTIME
  14400
$END
$NLOGPRT
  0 0
$END
$STRINGS
O_SST A_SST 1 3600 1 rst_sst.nc EXPORTED
182 149 96 72 torc lmdz LAG=0
P 2 P 0
MAPPING
rmp_torc_to_lmdz_BILINEAR.nc dst bfb
O_SST4 A_SST4 1 3600 1 rst_sst4.nc EXPORTED
182 149 96 72 torc lmdz LAG=0
P 2 P 0
MAPPING
rmp_torc_to_lmdz_BILINEAR.nc dst bfb
O_BUN A_BUN 1 3600 1 rst_bun.nc EXPORTED
182 149 96 72 torc lmdz LAG=0
P 2 P 0
MAPPING
rmp_torc_to_lmdz_BILINEAR.nc dst bfb
A_FLX O_FLX 1 3600 1 rst_flx.nc EXPORTED
96 72 182 149 lmdz torc LAG=0
P 0 P 2
MAPPING
rmp_lmdz_to_torc_BILINEAR.nc src sum
$END
NAM
cd "$dir"
export ISTHMUS_COUPLER_TIMEOUT=120  # a hang fails the test instead of stalling it
out=$("$mpirun_sh" "$nocean" "$ocean" : -n "$natmos" "$atmos" 2>&1) || { echo "$out"; exit 1; }
echo "$out"
grep -q "fortran toy ocean: ok" <<<"$out" && grep -q "fortran toy atmos: ok" <<<"$out"
