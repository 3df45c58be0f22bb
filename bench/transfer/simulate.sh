#!/usr/bin/env bash
# Seed 001 sect. 5 experiments under SimGrid SMPI on the tansuo preset (Tansuo100: 12 cores per
# node, 5 GB/s InfiniBand fat tree), p2p, butterfly and adaptive side by side. Each experiment is
# one `isthmus simulate` call; JSON lines are appended to RESULTS (default
# docs/results/transfer-sim.jsonl). Usage: bench/transfer/simulate.sh [GROUP...] where GROUP is
# fig15 fig15-256 fig16 fig17 fig18 gamil cesm interp cache overhead (default: all but
# overhead, which writes RESULTS with -overhead before .jsonl). fig15 (1024 ranks
# per model, 2048 simulated ranks) takes 5-15 minutes per point on a 2-core machine, so runs
# above 256 ranks per model time one exchange per method (simulated times are deterministic);
# the others take 5. Fig. 16's 10-field points are Fig. 15's and Fig. 17's.
# CALIBRATION=NAME runs under a per-message cost calibration (`isthmus simulate --calibration`,
# docs/simulation.md "Calibration"; e.g. dahu) and writes by default to
# docs/results/transfer-sim-NAME.jsonl; RANKS_PER_MODEL_MAX=256 skips the points above 256 ranks
# per model (Fig. 15 is then group fig15-256).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
calibration=${CALIBRATION:-}
if [ -n "$calibration" ]; then
  results=${RESULTS:-$root/docs/results/transfer-sim-${calibration//+/-}.jsonl}
else
  results=${RESULTS:-$root/docs/results/transfer-sim.jsonl}
fi
cal=()
[ -n "$calibration" ] && cal=(--calibration "$calibration")
# Simulated times are deterministic per run, so one timed exchange per plan and pair, without
# warm-up, keeps 2048-rank runs affordable; but with all ranks starting together (the runner's
# recursive-doubling barrier) successive exchanges of one plan differ by up to 3 % at 100 us and
# by up to 20-30 % at a few us, where one sample can rank close candidates wrongly
# (docs/results/transfer.md, Fig. 16b). Under that barrier a 2048-rank point took 1.2-4.6 x the
# CPU it took under SMPI's linear one (87-541 s here).
export ISTHMUS_ADAPTIVE_SAMPLES=${ISTHMUS_ADAPTIVE_SAMPLES:-1} ISTHMUS_ADAPTIVE_WARMUP=${ISTHMUS_ADAPTIVE_WARMUP:-0}
groups=${*:-"fig15 fig15-256 fig16 fig17 fig18 gamil cesm interp cache"}
sim() {  # sim RANKS bench-args...   (SIM_CFG: extra SimGrid options; SIM_RESULTS: other file)
  local ranks=$1; shift
  local cfg=() o
  if [ -n "${RANKS_PER_MODEL_MAX:-}" ] && [ $((ranks / 2)) -gt "$RANKS_PER_MODEL_MAX" ]; then
    echo "skipped (RANKS_PER_MODEL_MAX=$RANKS_PER_MODEL_MAX): $ranks ranks $*" >&2; return 0
  fi
  for o in ${SIM_CFG:-}; do cfg+=(--cfg "$o"); done
  "$root/bin/isthmus" simulate transfer --platform tansuo --ranks "$ranks" --no-progress "${cal[@]}" \
    --results "${SIM_RESULTS:-$results}" "${cfg[@]}" -- --reps "${REPS:-5}" "$@" >/dev/null
  echo "done: $ranks ranks $*" >&2
}
for g in $groups; do
  case $g in
    fig15) for k in 90 48 12 1; do REPS=1 sim 2048 --case toy --ranks-per-model 1024 --msgs $k; done ;;
    fig15-256) for k in 1 4 12 24 48 90; do sim 512 --case toy --ranks-per-model 256 --msgs $k; done ;;
    fig16) for m in 256 1024; do
             for k in 12 48; do
               for f in 1 100; do
                 REPS=$((m > 256 ? 1 : ${REPS:-5})) sim $((2 * m)) --case toy --ranks-per-model $m --msgs $k --fields $f
               done
             done
           done ;;
    fig17) for m in 16 32 64 128 256 512 1024; do
             REPS=$((m > 256 ? 1 : ${REPS:-5})) sim $((2 * m)) --case toy --ranks-per-model $m --msgs $((m < 24 ? m : 24))
           done ;;
    fig18) for m in 64 128 256 512 1024; do
             REPS=$((m > 256 ? 1 : ${REPS:-5})) sim $((2 * m)) --case random --ranks-per-model $m --msgs 34
           done ;;
    gamil) for m in 6 12 24 48 96 192; do sim $((2 * m)) --case gamil --ranks-per-model $m; done ;;
    cesm) for m in 6 12 24 48 96 192; do sim $((2 * m)) --case cesm --ranks-per-model $m; done ;;
    interp) for m in 12 24 48 96 192; do sim $m --case interp --ranks-per-model $m; done ;;
    cache) cache=$(mktemp /tmp/isthmus-sim-plan.XXXXXX)
           sim 512 --case toy --ranks-per-model 256 --msgs 90 --methods adaptive --plan-cache "$cache"
           rm -f "$cache" ;;
    overhead)  # Fig. 15's right end with per-message send/receive overheads 4x, 16x and 64x the preset's
      for o in 2e-06 8e-06 3.2e-05; do
        SIM_CFG="smpi/os:0:$o:0 smpi/or:0:$o:0 smpi/ois:0:$o:0" SIM_RESULTS=${results%.jsonl}-overhead.jsonl \
          REPS=1 sim 2048 --case toy --ranks-per-model 1024 --msgs 90
      done ;;
    *) echo "simulate.sh: unknown group $g" >&2; exit 2 ;;
  esac
done
