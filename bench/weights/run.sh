#!/usr/bin/env bash
# bench/weights: isthmus weights against CDO (Debian's cdo, installed here by name) on the same
# grid pairs in the same run: time, peak memory, links and the test-function error per method.
#   bench/weights/run.sh BUILD_DIR [OUT.jsonl]      JSON lines on stdout (and OUT), a table on stderr
# Knobs: WEIGHTS_PAIRS (default "orca2-lmdz lmdz-orca2 large"), WEIGHTS_REPS (default 3),
# WEIGHTS_METHODS (default "nearest bilinear conservative"),
# WEIGHTS_RANKS (default "1 2"), ISTHMUS_BENCH_WORKDIR (default /tmp/isthmus-bench-weights),
# ISTHMUS_BENCH_QUICK=1 (ORCA2 <-> LMDZ only, one repetition). WEIGHTS_PAIRS=huge: the 81 M-cell
# curvilinear source to a 1.25° x 1° grid, isthmus only (writes a 6.8 GB grid file once).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "${1:-build}" && pwd)
out=${2:-}
need=()
command -v cdo >/dev/null || need+=(cdo)
[ -x /usr/bin/time ] || need+=(time)
if ((${#need[@]})); then
  echo "bench/weights: apt-get install ${need[*]}" >&2
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi
cmake --build "$build" --target isthmus_weights >&2
args=(--tool "$build/tools/weights/isthmus_weights")
[ -n "$out" ] && args+=(--out "$out")
exec python3 "$here/bench.py" "${args[@]}"
