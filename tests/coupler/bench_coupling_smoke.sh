#!/usr/bin/env bash
# The coupling benchmark still runs and still checks what it claims: ORCA2 <-> LMDZ at N ranks,
# both sides, 1 and 3 fields colon-grouped and as separate entries, a few round trips; every
# record without "error", every put/get returned the expected info code, and the coupler's
# results have the bits of the remap layer's fused mapping (and the unfused path those too).
# Usage: bench_coupling_smoke.sh MPIRUN BENCH N WORKDIR
set -euo pipefail
mpirun=$1 bench=$2 n=$3 work=$4
mkdir -p "$work"
out="$("$mpirun" "$n" "$bench" --case orca2-lmdz --side dst,src --fields 1,3 --grouping colon,entries \
        --reps 5 --unbarriered-reps 5 --warmup 2 --workdir "$work")"
echo "$out"
python3 - "$out" <<'PY'
import json, sys
recs = [json.loads(l) for l in sys.argv[1].splitlines() if l.startswith("{")]
assert recs, "no record"
bad = [r for r in recs if "error" in r or r.get("info_errors", 0) != 0
       or r.get("same_bits_as_mapping") is False or r.get("same_bits_as_fused") is False]
assert not bad, f"failing records: {bad}"
coupler = [r for r in recs if r["variant"] == "coupler"]
assert len(coupler) == 2 * 3, f"expected 6 coupler records (2 sides x 1, 3 colon, 3 entries): {len(coupler)}"
assert all("same_bits_as_mapping" in r and r["pingpong_median_s"] > 0 for r in coupler), coupler
assert any(r["variant"] == "mapping-unfused" and r["same_bits_as_fused"] for r in recs)
print(f"{len(recs)} records checked")
PY
