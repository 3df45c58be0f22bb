#!/usr/bin/env bash
# make bench: the mapping benchmark's default cases, JSON lines on stdout (and in OUT.jsonl).
#   bench/mapping/run.sh BUILD_DIR [OUT.jsonl]
# 1. ORCA2 -> LMDZ (OASIS's bilinear and conservative files), source on ranks 0-1 (apple bands of
#    rows), destination on ranks 2-3 (blocks; bilinear also round-robin): side dst fused and
#    unfused, sides src and auto (always fused), 1 and 10 fields, 50 applies each.
# 2. synthetic: a 1442 x 1021 source (ORCA025) -> a 2,000,000-point destination, 4 links per
#    destination point (8 * 10^6 links, a 128 MB file written once in $ISTHMUS_BENCH_WORKDIR,
#    default /tmp/isthmus-bench-mapping), the same sides at 2 + 2 ranks, 10 applies each.
# 3. memory: reading a file of 10^7 links at 4 ranks, each rank's peak against its share.
# Fused and unfused variants alternate repetition by repetition within one run.
set -euo pipefail
build=$1
out=${2:-/dev/null}
here=$(cd "$(dirname "$0")" && pwd)
run="$here/../../tests/mpirun.sh"
bin="$build/bench/mapping/bench_mapping"
work=${ISTHMUS_BENCH_WORKDIR:-/tmp/isthmus-bench-mapping}
: > "$out"
{
  "$run" 4 "$bin" --case orca2-lmdz --weights bilinear,conserv --side dst --fused both --fields 1,10 --reps 50 --setup-reps 5
  "$run" 4 "$bin" --case orca2-lmdz --weights bilinear --pattern roundrobin --side dst --fused both --fields 1,10 --reps 50 --setup-reps 5
  "$run" 4 "$bin" --case orca2-lmdz --weights bilinear,conserv --side src,auto --fused yes --fields 1,10 --reps 50 --setup-reps 5
  "$run" 4 "$bin" --case synthetic --workdir "$work" --side dst --fused both --fields 1,10 --reps 20 --setup-reps 3
  "$run" 4 "$bin" --case synthetic --workdir "$work" --side src,auto --fused yes --fields 1,10 --reps 20 --setup-reps 3
  "$run" 4 "$bin" --case memory --workdir "$work"
} | tee -a "$out"
