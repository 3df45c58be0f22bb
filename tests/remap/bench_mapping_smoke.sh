#!/usr/bin/env bash
# The mapping benchmark still runs and still checks what it claims: a small synthetic case at N
# ranks, every side, fused and unfused; every record without "error", the linear field
# reproduced everywhere ("errors": 0) and the unfused path's bits equal to the fused one's.
# Usage: bench_mapping_smoke.sh MPIRUN BENCH N WORKDIR
set -euo pipefail
mpirun=$1 bench=$2 n=$3 work=$4
mkdir -p "$work"
run() { "$mpirun" "$n" "$bench" --case synthetic --src-nx 40 --src-ny 30 --dst-points 2000 \
        --workdir "$work" --fields 1,3 --reps 3 --setup-reps 1 --method p2p "$@"; }
# the unfused path is the destination side's reference: src and auto are always fused
out="$(run --side dst --fused both)"$'\n'"$(run --side src,auto --fused yes)"
echo "$out"
python3 - "$out" <<'PY'
import json, sys
recs = [json.loads(l) for l in sys.argv[1].splitlines() if l.startswith("{")]
assert recs, "no record"
bad = [r for r in recs if "error" in r or r.get("errors", 0) != 0 or r.get("same_bits_as_fused") is False]
assert not bad, f"failing records: {bad}"
sides = {(r["side"], r["fused"]) for r in recs}
assert ("dst", True) in sides and ("dst", False) in sides and ("src", True) in sides, sides
print(f"{len(recs)} records checked")
PY
