#!/usr/bin/env bash
# make bench: the coupling benchmark's default cases, JSON lines on stdout (and in OUT.jsonl).
#   bench/coupling/run.sh BUILD_DIR [OUT.jsonl]
# The ping-pong of seed 000 sect. 3.2 through the coupler's C API, ocn on the first half of the
# ranks, atm on the rest, OASIS apple partitions, real MPI on this machine:
# 1. ORCA2 <-> LMDZ (OASIS's bilinear files of tests/data/orca2-lmdz) at 1+1, 2+2 and 4+4 ranks:
#    sides dst (bfb) and src (sum), 1 field, 10 fields colon-grouped and 10 fields as 10 entries,
#    1000 round trips (barriered samples) + 1000 back to back, with the reference mappings
#    (remap layer fused, and unfused for dst) alternating sample by sample.
# 2. the T799 <-> ORCA025 toy (5-NN weights generated once in $ISTHMUS_BENCH_WORKDIR, default
#    /tmp/isthmus-bench-coupling, 120 MB) at the same rank counts: side dst 1 and 10 fields,
#    side src 1 field, 20 round trips (a round trip moves ~12 MB per field here).
# Set ISTHMUS_BENCH_QUICK=1 for a 2-rank pass with few repetitions.
set -euo pipefail
build=$1
out=${2:-/dev/null}
here=$(cd "$(dirname "$0")" && pwd)
run="$here/../../tests/mpirun.sh"
bin="$build/bench/coupling/bench_coupling"
work=${ISTHMUS_BENCH_WORKDIR:-/tmp/isthmus-bench-coupling}
export ISTHMUS_GIT_COMMIT=${ISTHMUS_GIT_COMMIT:-$(git -C "$here" rev-parse --short HEAD 2>/dev/null || echo unknown)}
ranks="2 4 8" reps=1000 toy_reps=20
if [ "${ISTHMUS_BENCH_QUICK:-0}" = 1 ]; then ranks="2" reps=50 toy_reps=3; fi
: > "$out"
{
  for n in $ranks; do
    "$run" "$n" "$bin" --case orca2-lmdz --side dst,src --fields 1,10 --grouping colon,entries \
      --reps "$reps" --setup-reps 3 --workdir "$work"
  done
  for n in $ranks; do
    "$run" "$n" "$bin" --case toy --side dst --fields 1,10 --reps "$toy_reps" --workdir "$work"
    "$run" "$n" "$bin" --case toy --side src --fields 1 --reps "$toy_reps" --workdir "$work"
  done
} | tee -a "$out"
