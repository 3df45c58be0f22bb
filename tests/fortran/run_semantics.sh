#!/usr/bin/env bash
# tests/fortran/oasis_semantics.F90 in a fresh run directory with its namcouple (OASIS3-MCT
# 2.0's format): six entries ocean -> atmosphere on the same 8 x 6 grid, coupling periods of
# 2 and 3 time steps, LOCTRANS INSTANT, AVERAGE, ACCUMUL, T_MIN and T_MAX, and an INSTANT one
# with a lag of one time step, whose restart file (r_LAG.nc, OASIS3-MCT's layout: the
# value of date -3600) is written here with ncgen and rewritten by the run's last put, and two
# INSTANT ones through a weights file (w_mix.nc, written here), MAPPING dst and src, and an
# EXPOUT one (AVERAGE), whose output files are checked too, and mapped ones with CONSERV
# GLOBAL, GLBPOS, BASBAL and BASPOS (the areas and masks from the files the program writes), and
# one with LOCTRANS AVERAGE, MAPPING and CONSERV GLOBAL in a row, a lagged AVERAGE one (its
# restart file r_LAV.nc written here too), one entry of two fields (ACCUMUL), and an OUTPUT one
# (AVERAGE, written to a file only), and two with higher-order terms (oasis_put's fld2, fld3:
# INSTANT, LOCTRANS AVERAGE then MAPPING, and INSTANT lagged by a step with fld2 in its restart
# file, through w_hot.nc, 3 weights per link, src sum).
# compare_semantics.py
# then checks what arrived against OASIS3-MCT's rules and, given a second executable (the same
# program built against Debian's OASIS3-MCT), against what that one received, call by call; and
# then each library goes on from the other's restart files and from its own, and all four runs
# must receive what OASIS3-MCT receives going on from its own.
# Usage: run_semantics.sh MPIRUN_SH NOCN NATM OCN_PARTITION ATM_PARTITION EXE [REFERENCE_EXE]
#   the partitions (apple, box, orange, points) of the run; the reference runs at 1+1
# KEEP=1 in the environment keeps the run directories.
set -euo pipefail
mpirun_sh=$1 nocn=$2 natm=$3 pocn=$4 patm=$5 exe=$6 ref=${7:-}
here=$(cd "$(dirname "$0")" && pwd)
dir=$(mktemp -d /tmp/isthmus-fsemantics-XXXXXX)
trap '[ -n "${KEEP:-}" ] || rm -rf "$dir"' EXIT
entry() {  # source target period operation [lag [status]]
  # restart files of 8 characters at most: OASIS3-MCT 2.0 cuts the name there (r_<3 letters>.nc)
  printf ' %s %s 1 %s 1 r_%s.nc %s\n 8 6 8 6 togr tagr LAG=%s\n P 0 P 0\n LOCTRANS\n %s\n' \
    "$1" "$2" "$3" "${1#O_}" "${6:-EXPORTED}" "${5:-0}" "$4"
}
mapped() {  # source target location [conservation]
  if [ -n "${4:-}" ]; then
    printf ' %s %s 1 7200 2 r_%s.nc EXPORTED\n 8 6 8 6 togr tagr LAG=0\n P 0 P 0\n MAPPING CONSERV\n w_mix.nc %s\n %s\n' \
      "$1" "$2" "${1#O_}" "$3" "$4"
  else
    printf ' %s %s 1 7200 1 r_%s.nc EXPORTED\n 8 6 8 6 togr tagr LAG=0\n P 0 P 0\n MAPPING\n w_mix.nc %s\n' \
      "$1" "$2" "${1#O_}" "$3"
  fi
}
run() {  # directory executable [directory whose restart files this run goes on from]
  mkdir -p "$1"
  cat > "$1/namcouple" <<NAM
 \$NFIELDS
   20
 \$END
 \$NBMODEL
   2  ocn atm
 \$END
 \$RUNTIME
   43200
 \$END
 \$NLOGPRT
   0
 \$END
 \$STRINGS
$(entry O_INS A_INS 7200 INSTANT)
$(entry O_AVG A_AVG 7200 AVERAGE)
$(entry O_ACC A_ACC 10800 ACCUMUL)
$(entry O_MIN A_MIN 7200 T_MIN)
$(entry O_MAX A_MAX 10800 T_MAX)
$(entry O_LAG A_LAG 7200 INSTANT 3600)
$(mapped O_MPD A_MPD dst)
$(mapped O_MPS A_MPS src)
$(entry O_OUT A_OUT 7200 AVERAGE 0 EXPOUT)
$(mapped O_CNS A_CNS dst GLOBAL)
$(mapped O_CNP A_CNP dst GLBPOS)
$(mapped O_CNB A_CNB dst BASBAL)
$(mapped O_CBP A_CBP dst BASPOS)
 O_AMC A_AMC 1 7200 3 r_AMC.nc EXPORTED
 8 6 8 6 togr tagr LAG=0
 P 0 P 0
 LOCTRANS MAPPING CONSERV
 AVERAGE
 w_mix.nc dst
 GLOBAL
$(entry O_LAV A_LAV 7200 AVERAGE 3600)
 O_MF1:O_MF2 A_MF1:A_MF2 1 10800 1 r_MF.nc EXPORTED
 8 6 8 6 togr tagr LAG=0
 P 0 P 0
 LOCTRANS
 ACCUMUL
 O_OPT O_OPT 1 7200 1 r_OPT.nc OUTPUT
 8 6 8 6 togr togr
 LOCTRANS
 AVERAGE
 O_HOI A_HOI 1 7200 1 r_HOI.nc EXPORTED
 8 6 8 6 togr tagr LAG=0
 P 0 P 0
 MAPPING
 w_hot.nc src sum
 O_HOA A_HOA 1 7200 2 r_HOA.nc EXPORTED
 8 6 8 6 togr tagr LAG=0
 P 0 P 0
 LOCTRANS MAPPING
 AVERAGE
 w_hot.nc src sum
 O_HOL A_HOL 1 7200 1 r_HOL.nc EXPORTED
 8 6 8 6 togr tagr LAG=3600
 P 0 P 0
 MAPPING
 w_hot.nc src sum
 \$END
NAM
  python3 "$here/compare_semantics.py" --weights-cdl > "$1/w_mix.cdl"
  ncgen -o "$1/w_mix.nc" "$1/w_mix.cdl"
  python3 "$here/compare_semantics.py" --weights-cdl hot > "$1/w_hot.cdl"
  ncgen -o "$1/w_hot.nc" "$1/w_hot.cdl"
  if [ -n "${3:-}" ]; then
    cp "$3"/r_*.nc "$1/"
  else
    for f in LAG LAV HOL; do
      python3 "$here/compare_semantics.py" --restart-cdl $f > "$1/r_$f.cdl"
      ncgen -o "$1/r_$f.nc" "$1/r_$f.cdl"
    done
  fi
  (cd "$1" && "$mpirun_sh" "$nocn" "$2" ocn "$pocn" : -n "$natm" "$2" atm "$patm") ||
    { echo "the run in $1 failed"; exit 1; }
}
run "$dir/run" "$exe"
if [ -n "$ref" ]; then
  # the reference at one rank per component: the comparison holds for any layouts
  nocn=1 natm=1 run "$dir/reference" "$ref"
  python3 "$here/compare_semantics.py" "$dir/run" "$dir/reference"
  # Each run goes on from the other's restart files and from its own (the lagged field and the
  # LOCTRANS partial states, in each library's naming): all four must receive what OASIS3-MCT
  # receives going on from its own files.
  run "$dir/isthmus_after_isthmus" "$exe" "$dir/run"
  nocn=1 natm=1 run "$dir/oasis_after_isthmus" "$ref" "$dir/run"
  run "$dir/isthmus_after_oasis" "$exe" "$dir/reference"
  nocn=1 natm=1 run "$dir/oasis_after_oasis" "$ref" "$dir/reference"
  for r in isthmus_after_isthmus oasis_after_isthmus isthmus_after_oasis; do
    echo "$r:"
    python3 "$here/compare_semantics.py" --same "$dir/$r" "$dir/oasis_after_oasis"
  done
else
  python3 "$here/compare_semantics.py" "$dir/run"
fi
