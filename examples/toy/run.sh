#!/usr/bin/env bash
# Runs one version of the toy as an OASIS3-MCT run is set up: a run directory holding the
# namcouple, the grids and the weights files (links to tests/data/orca2-lmdz), and the program
# started in it as both components (MPMD):
#   MPIRUN_SH NOCEAN PROGRAM... ocean : -n NATMOS PROGRAM... atmos
# The program exits non-zero if a received field's error exceeds its bound; so does this script.
# Relative paths of files among PROGRAM and ARGS are taken from the current directory.
# RUN_DIR "" : a fresh temporary directory, removed afterwards; otherwise it is made anew (a run
# directory of an earlier run is removed first: its restart files would continue that run) and
# kept (the demo plots the dumps it holds).
# Usage: run.sh MPIRUN_SH DATA_DIR RUN_DIR NOCEAN NATMOS PROGRAM [ARGS...]
set -euo pipefail
mpirun_sh=$1 data=$2 run=$3 nocean=$4 natmos=$5
shift 5
here=$(cd "$(dirname "$0")" && pwd)
mpirun_sh=$(cd "$(dirname "$mpirun_sh")" && pwd)/$(basename "$mpirun_sh")
data=$(cd "$data" && pwd)
if [ -z "$run" ]; then
  run=$(mktemp -d /tmp/isthmus-toy-XXXXXX)
  trap 'rm -rf "$run"' EXIT
else
  if [ -e "$run" ]; then
    [ -f "$run/namcouple" ] || { echo "run.sh: $run exists and is no toy run directory" >&2; exit 2; }
    rm -rf "$run"
  fi
  mkdir -p "$run"
fi
cp "$here/namcouple" "$run/"
for f in grid_torc.nc grid_lmdz.nc rmp_torc_to_lmdz_BILINEAR.nc rmp_lmdz_to_torc_BILINEAR.nc; do
  ln -s "$data/$f" "$run/$f"
done
# the program and its arguments, if relative paths of files, as seen from the run directory
args=()
for a in "$@"; do
  if [[ $a == */* && $a != /* && -e $a ]]; then a=$PWD/$a; fi
  args+=("$a")
done
cd "$run"
# Under make test-asan the library is sanitized: a Python interpreter that loads it through
# ctypes needs the sanitizer runtimes preloaded (as tests/run_pytest.sh; Python's own
# allocations are not checked)
if [[ $(basename "${args[0]}") == python* && -n "${ISTHMUS_PYTHON_PRELOAD:-}" ]]; then
  export LD_PRELOAD="$ISTHMUS_PYTHON_PRELOAD" ASAN_OPTIONS=detect_leaks=0
fi
# a coupling that never comes fails the run instead of stalling it
export ISTHMUS_COUPLER_TIMEOUT=${ISTHMUS_COUPLER_TIMEOUT:-120}
"$mpirun_sh" "$nocean" "${args[@]}" ocean : -n "$natmos" "${args[@]}" atmos
