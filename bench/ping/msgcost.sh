#!/usr/bin/env bash
# The real MPI's per-message costs on this machine (docs/simulation.md, "Calibration"):
# bench_msgcost (80 B messages, 90 per sender as at Fig. 15's right end) with 1 peer and with
# 8 peers, and bench_ping's latency/bandwidth, each repeated 3 times; JSON lines on stdout.
# Usage: bench/ping/msgcost.sh BUILD_DIR   (BUILD_DIR/bench/ping/bench_{msgcost,ping})
set -euo pipefail
build=$1
here=$(cd "$(dirname "$0")" && pwd)
run="$here/../../tests/mpirun.sh"
for i in 1 2 3; do
  "$run" 2 "$build/bench/ping/bench_msgcost" --bytes 80 --n 90 --reps 21
  "$run" 9 "$build/bench/ping/bench_msgcost" --bytes 80 --n 90 --reps 21 | grep recv_pending
  "$run" 2 "$build/bench/ping/bench_ping" --sizes 0,80,1024,65536,1048576 --iters 100 --reps 11
done
