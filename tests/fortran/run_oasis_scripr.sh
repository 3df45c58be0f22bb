#!/usr/bin/env bash
# OASIS3-MCT's tutorial models (Debian's liboasis3-doc, built unchanged by CMake against isthmus
# and against OASIS3-MCT 2.0) under a namcouple of ours whose third entry is SCRIPR METHOD: both
# libraries make the weights themselves (isthmus with its generator and OASIS's mask rules,
# OASIS3-MCT with SCRIP) and the field model1 receives is compared point by point.
#   distwgt, gauswgt (4 neighbours), bicubic: every point within 1e-6 relative.
#   conserv (FRACAREA): the ocean points (active in masks.nc) within 1e-3 relative (SCRIP's
#   cell edges are straight in longitude and latitude, isthmus's great circles), and the land
#   points served as SCRIP serves them (its source mask is the only mask): at least 95 % of
#   those OASIS3-MCT gives a value get one.
# Usage: run_oasis_scripr.sh MPIRUN_SH DATA_DIR NPROC1 NPROC2 MODEL1 MODEL2 REF_MODEL1 REF_MODEL2 METHOD
# KEEP=1 keeps the run directories.
set -euo pipefail
mpirun_sh=$1 data=$2 n1=$3 n2=$4 m1=$5 m2=$6 r1=$7 r2=$8 method=$9
case $method in
  distwgt) scripr="DISTWGT LR SCALAR LATLON 1 4" ;;
  gauswgt) scripr="GAUSWGT LR SCALAR LATLON 1 4 2.0" ;;
  bicubic) scripr="BICUBIC LR SCALAR LATLON 1" ;;
  conserv) scripr="CONSERV LR SCALAR LATLON 1 FRACAREA FIRST" ;;
  *) echo "run_oasis_scripr.sh: unknown method $method" >&2; exit 2 ;;
esac
dir=$(mktemp -d /tmp/isthmus-oasis-scripr-XXXXXX)
trap '[ -n "${KEEP:-}" ] || rm -rf "$dir"' EXIT
run() {  # directory nproc1 nproc2 model1 model2
  mkdir -p "$1"
  cp "$data"/*.nc "$1/"
  cat > "$1/namcouple" <<NAM
 \$NFIELDS
   3
 \$END
 \$NBMODEL
   2  model1  model2
 \$END
 \$RUNTIME
   21600
 \$END
 \$NLOGPRT
   0
 \$END
 \$STRINGS
FSENDOCN FRECVATM 1 7200 1 fdocn.nc EXPOUT
182 149 96 72 torc lmdz LAG=+3600
P 2 P 0
MAPPING
my_remapping_file_bilinear.nc src
FSENDOCN FSENDOCN 1 7200 1 f2avg.nc OUTPUT
torc torc
LOCTRANS
AVERAGE
FSENDATM FRECVOCN 1 10800 1 fdatm.nc EXPOUT
96 72 182 149 lmdz torc LAG=+1800
P 0 P 2
SCRIPR
$scripr
 \$END
NAM
  (cd "$1" && "$mpirun_sh" "$2" "$4" : -n "$3" "$5") > "$1/out.txt" 2>&1 ||
    { cat "$1/out.txt"; echo "the run in $1 failed"; exit 1; }
}
run "$dir/isthmus" "$n1" "$n2" "$m1" "$m2"
run "$dir/oasis" 1 1 "$r1" "$r2"
python3 - "$dir/isthmus" "$dir/oasis" "$method" <<'PY'
import sys
import numpy as np
from netCDF4 import Dataset
run, ref, method = sys.argv[1:]
name = "FRECVOCN_model1_03.nc"
with Dataset(f"{ref}/{name}") as a, Dataset(f"{run}/{name}") as b:
    x = np.asarray(a["FRECVOCN"][:], dtype=float)
    y = np.asarray(b["FRECVOCN"][:], dtype=float)
with Dataset(f"{ref}/masks.nc") as m:
    ocean = np.asarray(m["torc.msk"][:]) == 0  # OASIS: 0 = active
if x.shape != y.shape:
    sys.exit(f"{name}: shapes {x.shape} (OASIS3-MCT) and {y.shape} (isthmus)")
big = np.maximum(np.abs(x), np.abs(y))
rel = np.where(big > 0, np.abs(x - y) / np.where(big > 0, big, 1), 0)
ok = True
if method == "conserv":
    worst = float(rel[:, ocean].max())
    land = ~ocean
    oasis_served = (x[:, land] != 0).sum()
    both = ((x[:, land] != 0) & (y[:, land] != 0)).sum()
    print(f"{name} ({method}): ocean points: largest relative difference {worst:.3g}; land points "
          f"OASIS3-MCT gives a value: {oasis_served}, of which isthmus too: {both}")
    ok = worst <= 1e-3 and both >= 0.95 * oasis_served
else:
    worst = float(rel.max())
    print(f"{name} ({method}): largest relative difference {worst:.3g} over {rel.size} values")
    ok = worst <= 1e-6
sys.exit(0 if ok else 1)
PY
