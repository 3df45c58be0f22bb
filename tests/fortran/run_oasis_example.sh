#!/usr/bin/env bash
# An unchanged OASIS3-MCT example (Debian's liboasis3-doc), built twice by CMake from the
# package's files (against isthmus and against OASIS3-MCT 2.0), run by both in fresh directories
# with the example's namcouple and data (isthmus at NPROC1 + NPROC2 ranks, OASIS3-MCT at 1 + 1),
# and the files both write compared value by value.
# Usage: run_oasis_example.sh MPIRUN_SH DATA_DIR NPROC1 NPROC2 MODEL1 MODEL2 REF_MODEL1 REF_MODEL2
#                             TOLERANCE FILE[=REF_FILE]...
# TOLERANCE: 0 for the same bits, else the largest relative difference |a - b| / max(|a|, |b|)
# allowed; FILE=REF_FILE where the two name a file differently. KEEP=1 keeps the directories.
set -euo pipefail
mpirun_sh=$1 data=$2 n1=$3 n2=$4 m1=$5 m2=$6 r1=$7 r2=$8 tol=$9
shift 9
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
python3 - "$dir/isthmus" "$dir/oasis" "$tol" "$@" <<'PY'
import sys
import numpy as np
from netCDF4 import Dataset
run, ref, tol = sys.argv[1], sys.argv[2], float(sys.argv[3])
bad = 0
for spec in sys.argv[4:]:
    name, _, ref_name = spec.partition("=")
    with Dataset(f"{ref}/{ref_name or name}") as a, Dataset(f"{run}/{name}") as b:
        for v in a.variables:
            x = np.asarray(a[v][:], dtype=float)
            y = np.asarray(b[v][:], dtype=float) if v in b.variables else None
            if y is None or x.shape != y.shape:
                print(f"{name} {v} {x.shape}: DIFFERENT ({'missing' if y is None else y.shape})")
                bad += 1
                continue
            if tol == 0:
                same = np.array_equal(x, y)
                print(f"{name} {v} {x.shape}: {'the same bits' if same else 'DIFFERENT'}")
            else:
                big = np.maximum(np.abs(x), np.abs(y))
                rel = float(np.max(np.where(big > 0, np.abs(x - y) / np.where(big > 0, big, 1), 0)))
                same = rel <= tol
                print(f"{name} {v} {x.shape}: largest relative difference {rel:.3g}"
                      f"{'' if same else f' > {tol:g}: DIFFERENT'}")
            bad += not same
sys.exit(1 if bad else 0)
PY
