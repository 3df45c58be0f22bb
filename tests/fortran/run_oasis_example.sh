#!/usr/bin/env bash
# An unchanged OASIS3-MCT example (Debian's liboasis3-doc: test_interpolation), built twice by
# CMake from the package's files (against isthmus and against OASIS3-MCT 2.0), run by both in
# fresh directories with the example's namcouple and data, and the files both write compared
# value by value (they must be the same bits: FSENDANA and FRECVANA from EXPOUT, and the
# interpolation error the example computes).
# Usage: run_oasis_example.sh MPIRUN_SH DATA_DIR NPROC1 NPROC2 MODEL1 MODEL2 REF_MODEL1 REF_MODEL2
# KEEP=1 in the environment keeps the run directories.
set -euo pipefail
mpirun_sh=$1 data=$2 n1=$3 n2=$4 m1=$5 m2=$6 r1=$7 r2=$8
dir=$(mktemp -d /tmp/isthmus-oasis-example-XXXXXX)
trap '[ -n "${KEEP:-}" ] || rm -rf "$dir"' EXIT
run() {  # directory nproc1 nproc2 model1 model2
  mkdir -p "$1"
  cp "$data"/* "$1/"
  (cd "$1" && "$mpirun_sh" "$2" "$4" : -n "$3" "$5") > "$1/out.txt" 2>&1 ||
    { cat "$1/out.txt"; echo "the run in $1 failed"; exit 1; }
}
run "$dir/isthmus" "$n1" "$n2" "$m1" "$m2"
run "$dir/oasis" 1 1 "$r1" "$r2"
python3 - "$dir/isthmus" "$dir/oasis" <<'PY'
import sys
import numpy as np
from netCDF4 import Dataset
run, ref = sys.argv[1:]
bad = 0
for name in ("FSENDANA_model1_01.nc", "FRECVANA_model2_01.nc", "error.nc"):
    with Dataset(f"{ref}/{name}") as a, Dataset(f"{run}/{name}") as b:
        for v in a.variables:
            x, y = np.asarray(a[v][:]), np.asarray(b[v][:]) if v in b.variables else None
            same = y is not None and x.shape == y.shape and np.array_equal(x, y)
            print(f"{name} {v} {x.shape}: {'the same bits' if same else 'DIFFERENT'}")
            bad += not same
sys.exit(1 if bad else 0)
PY
