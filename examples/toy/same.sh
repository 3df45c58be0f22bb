#!/usr/bin/env bash
# The versions of the toy receive the same fields: runs each on NOCEAN + NATMOS ranks (run.sh;
# each must pass its own error bounds) and requires their checksums of the received fields (the
# sum over every active point and coupling date, printed with 17 digits) to be equal, bit for
# bit. A program ending in .py runs under ${PYTHON:-python3}.
# Usage: same.sh MPIRUN_SH DATA_DIR NOCEAN NATMOS PROGRAM...
set -euo pipefail
mpirun_sh=$1 data=$2 nocean=$3 natmos=$4
shift 4
here=$(cd "$(dirname "$0")" && pwd)
first=""
for prog in "$@"; do
  if [[ $prog == *.py ]]; then cmd=("${PYTHON:-python3}" "$prog"); else cmd=("$prog"); fi
  out=$("$here/run.sh" "$mpirun_sh" "$data" "" "$nocean" "$natmos" "${cmd[@]}" 2>&1) ||
    { echo "$out"; echo "same.sh: ${cmd[*]} failed"; exit 1; }
  sums=$(grep -E '^(ocean|atmos): checksum' <<<"$out" | tr 'E' 'e' | awk '{print $3, $4}' | sort)
  printf '%s (%s + %s ranks):\n%s\n' "$(basename "$prog")" "$nocean" "$natmos" "$sums"
  [ "$(wc -l <<<"$sums")" -eq 2 ] || { echo "$out"; echo "same.sh: no checksums"; exit 1; }
  if [ -z "$first" ]; then
    first=$sums
  elif [ "$sums" != "$first" ]; then
    echo "same.sh: $(basename "$prog") received other fields than $(basename "$1")"
    exit 1
  fi
done
echo "same.sh: the $# versions received the same fields"
