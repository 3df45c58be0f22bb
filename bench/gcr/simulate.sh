#!/usr/bin/env bash
# The GCR allreduces under SimGrid (docs/results/collectives.md). Appends to
# docs/results/data/collectives-sim.jsonl. Simulated time is deterministic: one repetition, no
# warm-up. At 128 ranks the whole solve (50 allreduces) and one iteration are simulated; above,
# one iteration (allreduces of 1 and 2 doubles) that the plot scales to 25 iterations (the
# allreduces are identical; at 128 ranks both ways agree). Every run is one smpirun.
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${OUT:-docs/results/data/collectives-sim.jsonl}
sim() { bin/isthmus simulate gcr --no-progress --timeout 900 --results "$out" "$@" > /dev/null; }
ks() { local s=""; for k in "$@"; do s+=",recursive-k:$k"; done; echo "native,recursive-doubling${s}"; }
plat=${PLATFORM:-fattree-m}
sim --platform $plat --ranks 128 -- --reps 1 --warmup 0 --iters 25 --cases "$(ks 2 3 4 5 6 8 12 16 21 32)"
sim --platform $plat --ranks 128 -- --reps 1 --warmup 0 --iters 1 --cases "$(ks 2 3 4 5 6 8 12 16 21 32)"
sim --platform $plat --ranks 1024 -- --reps 1 --warmup 0 --iters 1 --cases "$(ks 2 3 4 5 6 8 12 16 21 32)"
sim --platform $plat --ranks 4096 -- --reps 1 --warmup 0 --iters 1 --cases "$(ks 3 4 5 8 16)"
# Sensitivity: the per-message overhead (0.5 us in every preset) decides the best radix.
sim --platform $plat --ranks 1024 --cfg smpi/os:0:5e-08:0 --cfg smpi/ois:0:5e-08:0 \
    --cfg smpi/or:0:5e-08:0 -- --reps 1 --warmup 0 --iters 1 --cases "$(ks 2 4 8 16 32)"
# ... and without any per-message overhead (the regime of the seed's packet-level simulator)
sim --platform $plat --ranks 1024 --cfg smpi/os:0:0:0 --cfg smpi/ois:0:0:0 --cfg smpi/or:0:0:0 \
    -- --reps 1 --warmup 0 --iters 1 --cases "recursive-doubling,recursive-k:4,recursive-k:8,recursive-k:16,recursive-k:32"
# 8192 ranks, one case per run (16384 exceeded 10 minutes for one case on the shared machine)
for c in recursive-doubling recursive-k:4; do
  sim --platform $plat --ranks 8192 -- --reps 1 --warmup 0 --iters 1 --cases $c
done

# ---- issue 16 (collectives.md, "Why no radix wins at 0.5 us"): the radix sweep and the
# crossover, every case measured with the per-call argument agreement (docs/errors.md) and the
# agreement alone ("agreement" case). The records are tagged "includes_agreement" (the tables
# above predate the agreement) and printed by: python3 bench/gcr/model.py report "$out"
tmp=$(mktemp)
sim16() { bin/isthmus simulate gcr --no-progress --timeout 900 --results "$tmp" "$@" > /dev/null; }
ov() { echo "--cfg smpi/os:0:$1:0 --cfg smpi/ois:0:$1:0 --cfg smpi/or:0:$1:0"; }
# crossover map at 1024 ranks: overhead x radix
for o in 0 1e-08 2.5e-08 5e-08 1e-07 2e-07 3e-07 5e-07; do
  sim16 --platform $plat --ranks 1024 $(ov $o) -- --reps 1 --warmup 0 --iters 1 \
        --cases agreement,recursive-doubling,recursive-k:4,recursive-k:8,recursive-k:16,recursive-k:32
done
# 16384 ranks, default overhead (0.5 us), every radix: one case per run (40-75 s of CPU each)
for c in agreement recursive-doubling recursive-k:3 recursive-k:4 recursive-k:8 recursive-k:16 recursive-k:32; do
  sim16 --platform $plat --ranks 16384 -- --reps 1 --warmup 0 --iters 1 --cases $c
done
# 16384 ranks at low overheads: the crossover hardly moves with P
for o in 5e-08 1e-07; do
  for c in recursive-doubling recursive-k:4 recursive-k:8 agreement; do
    sim16 --platform $plat --ranks 16384 $(ov $o) -- --reps 1 --warmup 0 --iters 1 --cases $c
  done
done
for c in recursive-doubling recursive-k:4 recursive-k:32 agreement; do
  sim16 --platform $plat --ranks 16384 $(ov 0) -- --reps 1 --warmup 0 --iters 1 --cases $c
done
python3 - "$tmp" "$out" "$(git rev-parse --short HEAD)" <<'PY'
import json, sys
src, dst, commit = sys.argv[1:]
with open(dst, "a") as f:
    for line in open(src):
        if line.strip():
            d = json.loads(line)
            d.update(includes_agreement=True, commit=commit)
            f.write(json.dumps(d, sort_keys=True) + "\n")
PY
rm -f "$tmp"
