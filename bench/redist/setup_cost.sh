#!/usr/bin/env bash
# What a change costs in set-up: the exchange map (case "setup", method xmap) and the creation of
# a redistribution (case "redist_setup") of bench_redist, before and after it (issue 11: <= 5 %).
#
# Usage: bench/redist/setup_cost.sh [--rounds N] [--reps N] BEFORE_BUILD AFTER_BUILD [OUT.jsonl]
#        bench/redist/setup_cost.sh --sim [--sim-side N] BEFORE AFTER [OUT.jsonl]
#
# Real MPI (default): 8 ranks (tests/mpirun.sh), 192x480 grid, 10 fields, method p2p, --reps 15,
# on identical ranks (8 -> 8) and on disjoint ones (3 -> 5). The two builds alternate in ABBA
# order, N rounds (default 5), so that a drift of the machine's load falls on both alike. This
# 2-core machine is shared and oversubscribed: only the ratio of the same run is meaningful, and
# its noise floor is what the script reports for BEFORE_BUILD == AFTER_BUILD.
#
# --sim: 1024 + 1024 ranks (N + N with --sim-side N) on the curie preset under SimGrid SMPI, p2p,
# 1 repetition; simulated time is deterministic, so one run per side is the figure (3-6 min of
# CPU each, 0.5 GiB). BEFORE and AFTER are SMPI build directories (configured and built on demand
# when one is <source>/build-smpi), or a .jsonl file of an earlier run of this mode or of
# `isthmus simulate redist` with the same arguments (e.g. the before side, kept).
#
# Every JSON line of the benchmark is written to OUT (default setup-cost.jsonl, or
# setup-cost-sim.jsonl) with "variant": "before"/"after" and "round"; a table of the median set-up
# times and of the after/before ratios is printed at the end.
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
mode=real rounds=5 reps=15 side=1024
while [[ $# -gt 0 && $1 == --* ]]; do
  case $1 in
    --sim) mode=sim; shift ;;
    --rounds) rounds=$2; shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    --sim-side) side=$2; shift 2 ;;
    *) echo "setup_cost.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
if [[ $# -lt 2 ]]; then sed -n '2,/^set /{/^#/p}' "$0" >&2; exit 2; fi
before=$1 after=$2
out=${3:-setup-cost$([[ $mode == sim ]] && echo -sim).jsonl}
: > "$out"

tag() {  # tag VARIANT ROUND: JSON lines on stdin -> OUT, with the variant and the round
  python3 -c '
import json, sys
variant, rnd, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
with open(out, "a") as f:
    for line in sys.stdin:
        if line.startswith("{"):
            r = json.loads(line)
            r["variant"], r["round"] = variant, rnd
            f.write(json.dumps(r, sort_keys=True) + "\n")
' "$1" "$2" "$out"
}

grid=(--nx 192 --ny 480 --fields 10 --method p2p)
if [[ $mode == real ]]; then
  for b in "$before" "$after"; do
    cmake --build "$b" --target bench_redist > /dev/null  # up to date with its source
  done
  run() {  # run VARIANT BUILD ROUND
    "$here/tests/mpirun.sh" 8 "$2/bench/redist/bench_redist" "${grid[@]}" --reps "$reps" | tag "$1" "$3"
    "$here/tests/mpirun.sh" 8 "$2/bench/redist/bench_redist" "${grid[@]}" --reps "$reps" \
      --src-ranks 3 --dst-ranks 5 | tag "$1" "$3"
  }
  for ((r = 1; r <= rounds; ++r)); do
    echo "round $r/$rounds" >&2
    if ((r % 2)); then run before "$before" "$r"; run after "$after" "$r"
    else run after "$after" "$r"; run before "$before" "$r"; fi
  done
else
  sim() {  # sim VARIANT BUILD_OR_JSONL
    if [[ -f $2 ]]; then
      grep -v '^$' "$2" | python3 -c '
import json, sys
for line in sys.stdin:
    r = json.loads(line); r.pop("variant", None); r.pop("round", None); print(json.dumps(r))
' | tag "$1" 1
      return
    fi
    local build src
    build=$(mkdir -p "$2" && cd "$2" && pwd)
    src=$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "$build/CMakeCache.txt" 2>/dev/null || true)
    src=${src:-$(dirname "$build")}
    local tmp
    tmp=$(mktemp)
    ISTHMUS_SOURCE_DIR=$src "$here/bin/isthmus" simulate redist --platform curie --ranks $((2 * side)) \
      --build-dir "$build" --no-progress --results "$tmp" -- "${grid[@]}" \
      --src-ranks "$side" --dst-ranks "$side" --reps 1 > /dev/null
    tag "$1" 1 < "$tmp"
    rm -f "$tmp"
  }
  sim before "$before"
  sim after "$after"
fi

python3 - "$out" "$mode" <<'EOF'
import json, statistics, sys
from collections import defaultdict

out, mode = sys.argv[1], sys.argv[2]
recs = [json.loads(l) for l in open(out) if l.strip()]
# per (ranks layout, case): {variant: {round: median_s}}
runs = defaultdict(lambda: defaultdict(dict))
for r in recs:
    if r["case"] not in ("setup", "redist_setup"):
        continue
    layout = f'{r["src_ranks"]}->{r["dst_ranks"]}'
    runs[(layout, f'{r["case"]}:{r["method"]}')][r["variant"]][r["round"]] = r["median_s"]
# the whole set-up of a coupling: map + redistribution
for (layout, case), v in list(runs.items()):
    if case.startswith("setup:"):
        other = next((w for (l, c), w in runs.items() if l == layout and c.startswith("redist_setup")), None)
        if other:
            runs[(layout, "map+redist")] = {
                var: {k: t + other[var][k] for k, t in v[var].items() if k in other.get(var, {})}
                for var in v}

unit, u = (1e6, "us") if mode == "sim" else (1e3, "ms")
print(f"\n{'ranks':<12}{'case':<20}{'before ' + u:>11}{'after ' + u:>11}{'after/before':>14}"
      + ("" if mode == "sim" else f"{'paired: median':>16}{'min..max':>16}"))
for (layout, case), v in sorted(runs.items()):
    b, a = v.get("before", {}), v.get("after", {})
    if not b or not a:
        print(f"{layout:<12}{case:<20}  only the {'before' if b else 'after'} side has this case")
        continue
    mb, ma = statistics.median(b.values()), statistics.median(a.values())
    ratio = ma / mb if mb > 0 else float("inf")
    line = f"{layout:<12}{case:<20}{mb * unit:>11.4f}{ma * unit:>11.4f}{ratio:>14.3f}"
    if mode != "sim":
        paired = sorted(a[k] / b[k] for k in b if k in a and b[k] > 0)
        if paired:
            line += f"{statistics.median(paired):>16.3f}{paired[0]:>10.3f} ..{paired[-1]:>6.3f}"
    print(line)
if mode == "sim":
    print("\nsimulated time (curie, p2p, 1 repetition): deterministic")
else:
    print("\nmedian over rounds of each run's median (real MPI, 8 ranks on this machine);")
    print("paired: after/before of the same round (median, range over rounds), a measure of the noise;")
    print("run with BEFORE_BUILD == AFTER_BUILD to see the noise floor of the moment")
print(f"records: {out}")
EOF
